"""ERAHBO as a Ray Tune searcher (``pip install "erahbo[tune]"``).

:class:`ERAHBOSearch` replaces Tune's ``Repeater``: one Tune trial is one training run, a
configuration and a seed (the config key ``seed_key``, default ``"seed"``). ``suggest`` returns
a new configuration, or the current one with its next seed; it returns None while ERAHBO's
stopping decision waits for pending seeds, and ``Searcher.FINISHED`` once the budget (training
runs) is spent. ``on_trial_complete`` tells each run's metric; once all the seeds a decision
needs have come back, the optimizer decides: another seed for the same configuration (ERAHBO,
until ``UCB_MV(x; k) <= B_t`` or ``k_max``) or a new configuration. Where ``Repeater`` tells its
searcher only the mean of a fixed number of repeats, ERAHBO models the mean and the variance
between seeds and recommends ``argmax LCB_MV`` (:meth:`ERAHBOSearch.recommend`).

.. code-block:: python

    from ray import tune
    from erahbo.integrations.ray_tune import ERAHBOSearch

    def train(config):                      # one training run: config["seed"] is its seed
        ...
        tune.report({"return": final_return})  # (ray.train.report in older Ray)

    searcher = ERAHBOSearch(metric="return", mode="max", budget=200, seed=0)
    tuner = tune.Tuner(train, param_space={"lr": tune.loguniform(1e-5, 1e-2)},
                       tune_config=tune.TuneConfig(search_alg=searcher, num_samples=200))
    tuner.fit()
    print(searcher.recommend())

The search space is the Tune ``param_space`` (``tune.uniform``, ``loguniform``, ``randint``,
``lograndint``, ``choice``; nested dicts allowed; other values are constants), or an erahbo
space given as ``space=``. Under ``ConcurrencyLimiter`` (or with many workers) pass
``n_parallel`` (configurations trained at once) and ``seed_batch`` (seeds asked at once after
``k_min``) to keep the workers busy. A failed or errored run, or one without the metric, is a
failed run of erahbo's ``failures`` policy. ``save``/``restore`` pickle the whole state
(Tune calls them to checkpoint the experiment).
"""

from __future__ import annotations

import math
import pickle
from collections import deque
from typing import Any

from ray.tune.search import Searcher
from ray.tune.search.sample import Categorical, Domain, Float, Integer, LogUniform, Uniform

from erahbo.optimizer import Optimizer
from erahbo.space import SearchSpace

__all__ = ["ERAHBOSearch"]


def _flatten_domains(config: dict[str, Any], prefix: tuple[str, ...] = ()) -> dict[tuple, Domain]:
    out: dict[tuple, Domain] = {}
    for key, v in config.items():
        path = (*prefix, str(key))
        if isinstance(v, Domain):
            out[path] = v
        elif isinstance(v, dict):
            out.update(_flatten_domains(v, path))
    return out


def _tune_spec(path: tuple, d: Domain) -> tuple:
    """An erahbo hyperparameter entry of a Tune domain (categoricals: by index)."""
    s = d.get_sampler()
    name = "/".join(path)
    if isinstance(d, Categorical) and isinstance(s, Uniform):
        return ("cat", list(range(len(d.categories))))
    if isinstance(d, Float) and isinstance(s, LogUniform):
        return ("log", d.lower, d.upper)
    if isinstance(d, Float) and isinstance(s, Uniform):
        return ("float", d.lower, d.upper)
    if isinstance(d, Integer) and isinstance(s, (Uniform, LogUniform)):  # upper exclusive
        return ("logint" if isinstance(s, LogUniform) else "int", d.lower, d.upper - 1)
    raise ValueError(
        f"ERAHBOSearch: parameter {name!r}: {type(d).__name__} with a {type(s).__name__} "
        "sampler is not supported; use tune.uniform, loguniform, randint, lograndint or "
        "choice (or give an erahbo space with space=...)"
    )


class ERAHBOSearch(Searcher):
    """ERAHBO (or RAHBO, GP-UCB, random) as a Ray Tune searcher; one trial = one seed.

    Parameters
    ----------
    space : erahbo.SearchSpace, a spec it accepts, or None
        The search space; None: the Tune ``param_space`` (set by Tune).
    metric, mode : str or None
        The reported metric (a training run's return) and ``"max"`` or ``"min"`` (a loss:
        ``mean + alpha * variance`` is minimized); None: set by ``TuneConfig``.
    seed_key : str
        Config key of the training seed (default ``"seed"``).
    budget : int or None
        Training runs in all; then ``suggest`` returns ``Searcher.FINISHED`` (None: Tune's
        ``num_samples`` ends the study).
    n_parallel, seed_batch : int
        Configurations pending at once and seeds asked at once after ``k_min`` (see
        :class:`erahbo.Optimizer`); raise them to the concurrency of the experiment.
    failures : {"penalize", "exclude"}
        What a failed run does (see :mod:`erahbo.runtime.failures`).
    **options
        Any other :class:`erahbo.Optimizer` option: ``method, seed, alpha, beta, beta_stop,
        k_min, k_max, k, n_init, k_init, ...``.
    """

    def __init__(
        self,
        space: Any = None,
        metric: str | None = None,
        mode: str | None = None,
        *,
        seed_key: str = "seed",
        budget: int | None = None,
        n_parallel: int = 1,
        seed_batch: int = 1,
        failures: str = "penalize",
        **options: Any,
    ) -> None:
        super().__init__(metric=metric, mode=mode)
        if failures not in ("penalize", "exclude"):
            raise ValueError(f"failures={failures!r} must be 'penalize' or 'exclude'")
        self.seed_key = str(seed_key)
        self._opt_kwargs = dict(options, budget=budget, n_parallel=n_parallel,
                                seed_batch=seed_batch, failures=failures)
        Optimizer({"x": ("float", 0.0, 1.0)}, **self._opt_kwargs)  # checks the options now
        self._paths: list[tuple] | None = None  # Tune domains: paths of the parameters
        self._domains: dict[tuple, Domain] = {}
        self._space: SearchSpace | None = None
        if space is not None:
            self._space = space if isinstance(space, SearchSpace) else SearchSpace(space)
        self._opt: Optimizer | None = None
        self._queue: deque[tuple[int, int]] = deque()  # (erahbo trial id, seed slot) to hand out
        self._runs: dict[int, dict[str, Any]] = {}  # erahbo trial id -> trial, returns, count
        self._live: dict[str, tuple[int, int]] = {}  # Tune trial id -> (erahbo trial id, slot)

    # ------------------------------------------------------------------ Tune interface
    def set_search_properties(
        self, metric: str | None, mode: str | None, config: dict, **spec: Any
    ) -> bool:
        if self._opt is not None:
            return False
        domains = _flatten_domains(config or {})
        if self._space is None and domains:
            self._domains = domains
            self._paths = sorted(domains)
            self._space = SearchSpace({"/".join(p): _tune_spec(p, domains[p])
                                       for p in self._paths})
        if metric:
            self._metric = metric
        if mode:
            if mode not in ("min", "max"):
                raise ValueError(f"ERAHBOSearch: mode={mode!r} must be 'min' or 'max'")
            self._mode = mode
        return True

    def suggest(self, trial_id: str) -> dict | str | None:
        opt = self._optimizer()
        if not self._queue:
            if opt.n_pending >= opt.n_parallel:
                return None  # the next decision needs the pending seeds
            t = opt.ask()
            if t is None:
                return None if opt.n_pending else Searcher.FINISHED
            self._runs[t.trial_id] = {"trial": t, "returns": [math.nan] * len(t.seeds),
                                      "done": 0}
            self._queue.extend((t.trial_id, j) for j in range(len(t.seeds)))
        tid, slot = self._queue.popleft()
        self._live[trial_id] = (tid, slot)
        t = self._runs[tid]["trial"]
        cfg = self._to_tune(t.config)
        cfg[self.seed_key] = int(t.seeds[slot])
        return cfg

    def on_trial_complete(
        self, trial_id: str, result: dict | None = None, error: bool = False
    ) -> None:
        if trial_id not in self._live:
            return
        tid, slot = self._live.pop(trial_id)
        rec = self._runs[tid]
        value = math.nan
        if not error and result is not None and self._metric in result:
            try:
                value = float(result[self._metric])
            except (TypeError, ValueError):
                value = math.nan
        rec["returns"][slot] = -value if self._mode == "min" else value
        rec["done"] += 1
        if rec["done"] == len(rec["returns"]):
            del self._runs[tid]
            self._optimizer().tell(rec["trial"], rec["returns"])

    def get_state(self) -> dict:
        return {k: v for k, v in self.__dict__.items()}

    def set_state(self, state: dict) -> None:
        self.__dict__.update(state)

    def save(self, checkpoint_path: str) -> None:
        with open(checkpoint_path, "wb") as f:
            pickle.dump(self.get_state(), f)

    def restore(self, checkpoint_path: str) -> None:
        with open(checkpoint_path, "rb") as f:
            self.set_state(pickle.load(f))

    # ------------------------------------------------------------------ results
    def recommend(self) -> dict[str, Any] | None:
        """Recommended configuration, ``argmax LCB_MV`` (None before any data)."""
        if self._opt is None:
            return None
        cfg = self._opt.recommend()
        return None if cfg is None else self._to_tune(cfg)

    @property
    def optimizer(self) -> Optimizer | None:
        """The underlying :class:`erahbo.Optimizer` (its ``result()``: history, rounds)."""
        return self._opt

    # ------------------------------------------------------------------ helpers
    def _optimizer(self) -> Optimizer:
        if self._opt is None:
            if self._space is None:
                raise RuntimeError(
                    "ERAHBOSearch: no search space; give space=... or a Tune param_space "
                    "with tune.uniform/loguniform/randint/choice entries"
                )
            if not self._metric:
                raise RuntimeError("ERAHBOSearch: no metric; set metric= here or in TuneConfig")
            if self._mode not in ("min", "max"):
                raise RuntimeError("ERAHBOSearch: mode must be 'min' or 'max'; set mode= here "
                                   "or in TuneConfig")
            self._opt = Optimizer(self._space, **self._opt_kwargs)
        return self._opt

    def _to_tune(self, config: dict[str, Any]) -> dict[str, Any]:
        """An erahbo config as a (nested) Tune config."""
        if self._paths is None:
            return dict(config)
        out: dict[str, Any] = {}
        for path in self._paths:
            v = config["/".join(path)]
            d = self._domains[path]
            if isinstance(d, Categorical):
                v = d.categories[int(v)]
            node = out
            for key in path[:-1]:
                node = node.setdefault(key, {})
            node[path[-1]] = v
        return out
