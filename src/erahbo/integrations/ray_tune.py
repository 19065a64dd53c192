"""ERAHBO as a Ray Tune searcher (``pip install "erahbo[tune]"``).

:class:`ERAHBOSearch` replaces Tune's ``Repeater``: one Tune trial is one training run, a
configuration and a seed (the config key ``seed_key``, default ``"seed"``). ``suggest`` returns
a new configuration, or the current one with its next seed; it returns None while ERAHBO's
stopping decision waits for pending seeds, and ``Searcher.FINISHED`` once the budget (training
runs) is spent. ``on_trial_complete`` tells each run's metric; once all the seeds a decision
needs have come back, the optimizer decides: another seed for the same configuration (ERAHBO,
until ``UCB_MV(x; k) <= B_t`` or ``k_max``) or a new configuration. Where ``Repeater`` tells its
searcher only the mean of a fixed number of repeats, ERAHBO models the mean and the variance
between seeds and recommends ``argmax LCB_MV`` (:meth:`ERAHBOSearch.recommend`;
:meth:`ERAHBOSearch.recommendation` gives its MV estimate and its Tune results, where
``ResultGrid.get_best_result()`` ranks single runs, one seed each).

.. code-block:: python

    from ray import tune
    from erahbo.integrations.ray_tune import ERAHBOSearch

    def train(config):                      # one training run: config["seed"] is its seed
        ...
        tune.report({"return": final_return})  # (ray.train.report in older Ray)

    searcher = ERAHBOSearch(metric="return", mode="max", budget=200, seed=0)
    tuner = tune.Tuner(train, param_space={"lr": tune.loguniform(1e-5, 1e-2)},
                       tune_config=tune.TuneConfig(search_alg=searcher, num_samples=200))
    results = tuner.fit()
    print(searcher.recommendation(results))     # config, MV estimate, its runs' results
    print(searcher.result().configs)            # every configuration, Tune's values

The search space is the Tune ``param_space`` (``tune.uniform``, ``loguniform``, ``randint``,
``lograndint``, ``choice``; nested dicts allowed; other values are constants), or an erahbo
space given as ``space=``. Under ``ConcurrencyLimiter`` (or with many workers) pass
``n_parallel`` (configurations trained at once) and ``seed_batch`` (seeds asked at once after
``k_min``) to keep the workers busy. A failed or errored run, or one without the metric, is a
failed run of erahbo's ``failures`` policy. ``save``/``restore`` pickle the whole state
(Tune calls them to checkpoint the experiment). :meth:`ERAHBOSearch.result` gives the study's
tables in Tune's values (a ``tune.choice``'s choices, not their positions). Wrapped in Tune's
``Repeater`` it is refused when ``Tuner.fit()`` starts: each seed would be trained ``repeat``
times.

A trial scheduler that stops, pauses or mutates trials (ASHA, HyperBand, MedianStoppingRule,
PBT: anything but Tune's default ``FIFOScheduler``) is refused when ``Tuner.fit()`` starts,
before the first trial (Tune builds the ``Tuner`` without asking the searcher anything).
``points_to_evaluate`` (and ``evaluated_rewards``, ``add_evaluated_point``,
``add_evaluated_trials`` of a ``ResultGrid``) work as in Tune's other searchers: points to run
first, or runs done before (a warm start).
"""

from __future__ import annotations

import difflib
import inspect
import math
import pickle
import warnings
from collections import deque
from dataclasses import dataclass, field
from typing import Any

import pandas as pd
from ray.tune.search import Searcher
from ray.tune.search.sample import Categorical, Domain, Float, Integer, LogUniform, Uniform

from erahbo.integrations._tune_host import (
    NOT_SEEN,
    category_choices,
    category_index,
    erahbo_point,
    grid_points,
    host_scheduler,
    ran_to_end,
    refuse_repeater,
    refuse_scheduler,
    stop_message,
    warm_runs,
)
from erahbo.optimizer import Optimizer, Result
from erahbo.optimizer.host import check_options, design_points
from erahbo.optimizer.options import Options
from erahbo.space import SearchSpace

__all__ = ["ERAHBOSearch", "TuneRecommendation"]


def _flatten_domains(config: dict[str, Any], prefix: tuple[str, ...] = (),
                     constants: set[tuple] | None = None) -> dict[tuple, Domain]:
    """The Tune domains of a ``param_space`` by path (the other paths go to ``constants``)."""
    out: dict[tuple, Domain] = {}
    for key, v in config.items():
        path = (*prefix, str(key))
        if isinstance(v, Domain):
            out[path] = v
        elif isinstance(v, dict) and "grid_search" in v:
            raise ValueError(
                f"ERAHBOSearch: parameter {'/'.join(path)!r} is a tune.grid_search, which a "
                "searcher cannot model; use tune.choice([...]) (or give an erahbo space with "
                "space=...)")
        elif isinstance(v, dict):
            out.update(_flatten_domains(v, path, constants))
        elif constants is not None:
            constants.add(path)
    return out


@dataclass
class TuneRecommendation:
    """ERAHBO's recommended configuration with its estimate, in the metric's own units.

    Attributes
    ----------
    config : dict
        The Tune config (nested, real values), without the seed key.
    mv : float
        Estimated objective: the study's risk measure of the metric (``risk``; MV: ``mean -
        alpha var``, mode ``"max"``), or of the negated metric (mode ``"min"``): the GPs'.
    mv_low, mv_high : float
        Its confidence bounds (the recommendation maximizes the pessimistic one).
    mean, std : float
        Sample mean and standard deviation of its runs' metric (between seeds; ``std`` NaN
        with one run).
    k : int
        Its counted runs (seeds).
    seeds : list of int
        Their seeds.
    results : list
        The ``ray.tune.Result`` of each of its runs (when a ``ResultGrid`` was given).
    """

    config: dict[str, Any]
    mv: float
    mv_low: float
    mv_high: float
    mean: float
    std: float
    k: int
    seeds: list[int]
    results: list[Any] = field(default_factory=list)


def _tune_spec(path: tuple, d: Domain) -> tuple[tuple, bool]:
    """An erahbo hyperparameter entry of a Tune domain, and whether it holds a categorical's
    indices (its values where erahbo's categorical holds them; the encoding is the same)."""
    s = d.get_sampler()
    name = "/".join(path)
    if isinstance(d, Categorical) and isinstance(s, Uniform):
        values = category_choices(name, d.categories)
        return ("cat", list(range(len(d.categories))) if values is None else values), (
            values is None)
    if isinstance(d, Float) and isinstance(s, LogUniform):
        return ("log", d.lower, d.upper), False
    if isinstance(d, Float) and isinstance(s, Uniform):
        return ("float", d.lower, d.upper), False
    if isinstance(d, Integer) and isinstance(s, (Uniform, LogUniform)):  # upper exclusive
        return ("logint" if isinstance(s, LogUniform) else "int", d.lower, d.upper - 1), False
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
        the measure of the negated metric is maximized); None: set by ``TuneConfig``.
    points_to_evaluate : list of dict, optional
        Configurations to run first (Tune configs; with ``space=``, erahbo configs): the
        first configurations of the initial design, ``k_init`` seeds each, before its Sobol
        points (they count in ``n_init``).
    evaluated_rewards : list, optional
        The points were run already: one reward per point (the metric of one run; give a
        point once per seed, with its seed key if known) or a list of per-seed rewards. They
        warm-start the study (not run again, not counted in ``budget``); a configuration
        needs the runs a new one starts with in all (1 where ``k_min`` or ``k_init`` is 1,
        else 2).
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
        points_to_evaluate: list[dict[str, Any]] | None = None,
        *,
        evaluated_rewards: list[Any] | None = None,
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
        if unknown := sorted(set(options) - set(Options.names())):
            known = list(dict.fromkeys([*inspect.signature(ERAHBOSearch).parameters][:-1]
                                       + list(Options.names())))
            near = [m for u in unknown for m in difflib.get_close_matches(u, known, n=1)]
            hint = f" (did you mean {', '.join(map(repr, near))}?)" if near else ""
            if "scheduler" in unknown:  # not ``schedule`` (the stopping confidence's)
                hint = (": a Tune trial scheduler goes in TuneConfig(scheduler=...), and "
                        "ERAHBOSearch runs under Tune's default FIFOScheduler only")
            raise TypeError(f"ERAHBOSearch: unknown option(s) {', '.join(map(repr, unknown))}"
                            f"{hint}; it takes {', '.join(known)}")
        self._opt_kwargs = dict(options, budget=budget, n_parallel=n_parallel,
                                seed_batch=seed_batch, failures=failures)
        no_design = options.get("n_init") == 0  # needs evaluated points: checked at the start
        checked = check_options(warm_start=no_design, **self._opt_kwargs)  # as the Optimizer
        self._n_init, self._seed = checked.n_init, checked.seed
        self._min_runs = checked.min_seeds  # runs an evaluated point needs (2, or 1)
        points = list(points_to_evaluate or [])
        if evaluated_rewards is not None and len(evaluated_rewards) != len(points):
            raise ValueError(f"evaluated_rewards has {len(evaluated_rewards)} entries for "
                             f"{len(points)} points_to_evaluate; give one per point")
        self._points = [] if evaluated_rewards is not None else points
        self._evaluated: list[tuple[dict, Any]] = (
            list(zip(points, evaluated_rewards, strict=True)) if evaluated_rewards is not None
            else [])
        self._paths: list[tuple] | None = None  # Tune domains: paths of the parameters
        self._domains: dict[tuple, Domain] = {}
        self._constants: set[tuple] = set()
        self._by_index: set[tuple] = set()  # tune.choice parameters held by index
        self._space: SearchSpace | None = None
        if space is not None:
            self._space = space if isinstance(space, SearchSpace) else SearchSpace(space)
        self._stop: Any = None  # the experiment's stop criteria (set_search_properties)
        self._opt: Optimizer | None = None
        self._queue: deque[tuple[int, int]] = deque()  # (erahbo trial id, seed slot) to hand out
        self._runs: dict[int, dict[str, Any]] = {}  # erahbo trial id -> trial, returns, count
        self._live: dict[str, tuple[int, int]] = {}  # Tune trial id -> (erahbo trial id, slot)
        self._seen: dict[str, Any] = {}  # Tune trial id -> its last training_iteration seen
        self._tune_runs: dict[str, tuple[int, int]] = {}  # Tune trial id -> (config id, seed)
        self.stopped_runs: list[dict[str, Any]] = []  # runs cut by a scheduler (not returns)
        self._host: str | None = None  # "fifo" once the experiment's scheduler was checked

    # ------------------------------------------------------------------ Tune interface
    def set_search_properties(
        self, metric: str | None, mode: str | None, config: dict, **spec: Any
    ) -> bool:
        self._check_host()
        if "stop" in spec:
            self._stop = spec["stop"]
        if self._opt is not None:
            return False
        constants: set[tuple] = set()
        domains = _flatten_domains(config or {}, constants=constants)
        if self._space is None and domains:
            self._domains, self._constants = domains, constants
            self._paths = sorted(domains)
            specs = {p: _tune_spec(p, domains[p]) for p in self._paths}
            self._by_index = {p for p, (_, by_index) in specs.items() if by_index}
            self._space = SearchSpace({"/".join(p): spec for p, (spec, _) in specs.items()})
        if metric:
            self._metric = metric
        if mode:
            if mode not in ("min", "max"):
                raise ValueError(f"ERAHBOSearch: mode={mode!r} must be 'min' or 'max'")
            self._mode = mode
        return True

    def add_evaluated_point(
        self,
        parameters: dict,
        value: float,
        error: bool = False,
        pruned: bool = False,
        intermediate_values: list[float] | None = None,
    ) -> None:
        """A run made before the study (Tune's API; ``add_evaluated_trials`` calls it): it
        warm-starts the study, so give them before the first trial. A pruned run (stopped
        early: its value is partial) is left out; an errored one is a failed run."""
        if self._opt is not None:
            raise RuntimeError(
                "ERAHBOSearch.add_evaluated_point: the study has started; evaluated points "
                "warm-start it, so add them before Tuner.fit() (or give evaluated_rewards)"
            )
        if pruned:
            return  # a partial return, never a final one
        self._evaluated.append((parameters, None if error else value))

    def add_evaluated_trials(self, trials_or_analysis: Any, metric: str) -> None:
        """Runs made before the study (Tune's API): a ``ResultGrid`` (``tuner.fit()``'s
        results) or a list of its ``ray.tune.Result``, or what Tune's own method takes
        (``Trial``, a list of them, ``ExperimentAnalysis``). Each finished run warm-starts
        the study (:meth:`add_evaluated_point`); give them before ``Tuner.fit()``."""
        from ray.tune import Result as TuneResult
        from ray.tune import ResultGrid

        if isinstance(trials_or_analysis, ResultGrid) or (
                isinstance(trials_or_analysis, list | tuple) and trials_or_analysis
                and all(isinstance(r, TuneResult) for r in trials_or_analysis)):
            for point in grid_points(trials_or_analysis, metric):
                self.add_evaluated_point(**point)
            return
        super().add_evaluated_trials(trials_or_analysis, metric)

    def suggest(self, trial_id: str) -> dict | str | None:
        self._check_host()
        opt = self._optimizer()
        if not self._queue:
            if opt.n_pending >= opt.n_parallel:
                return None  # the next decision needs the pending seeds
            t = opt.ask()
            if t is None:
                return None if opt.n_pending else Searcher.FINISHED
            self._runs[t.trial_id] = {"trial": t, "returns": [math.nan] * len(t.seeds),
                                      "errors": [None] * len(t.seeds), "done": 0}
            self._queue.extend((t.trial_id, j) for j in range(len(t.seeds)))
        tid, slot = self._queue.popleft()
        self._live[trial_id] = (tid, slot)
        t = self._runs[tid]["trial"]
        cfg = self._to_tune(t.config)
        cfg[self.seed_key] = int(t.seeds[slot])
        return cfg

    def on_trial_result(self, trial_id: str, result: dict) -> None:
        if trial_id in self._live:
            self._seen[trial_id] = result.get("training_iteration")

    def on_trial_complete(
        self, trial_id: str, result: dict | None = None, error: bool = False
    ) -> None:
        if trial_id not in self._live:
            return
        seen = self._seen.pop(trial_id, NOT_SEEN)
        if not error and (result is None or result.get("done") is False):
            # removed before it ran, or cut when the experiment ended (time budget, a
            # stopper's stop_all): not a run; its seed is handed out again (Tuner.restore)
            self._queue.appendleft(self._live.pop(trial_id))
            return
        tid, slot = self._live.pop(trial_id)
        rec = self._runs[tid]
        value, why = math.nan, None
        if error:
            why = "the Tune trial raised an error (its error file is in the experiment folder)"
        elif result is None or self._metric not in result:
            why = f"the trial reported no {self._metric!r}"
        else:
            try:
                value = float(result[self._metric])
            except (TypeError, ValueError):
                value = math.nan
            if math.isfinite(value) and not ran_to_end(result, seen, self._stop,
                                                       self._host == "fifo"):
                why = stop_message(trial_id, result.get("training_iteration"), self._metric,
                                   value)
                self._stopped(trial_id, rec["trial"], slot, result, value, why)
                value = math.nan
        rec["returns"][slot] = -value if self._mode == "min" else value
        rec["errors"][slot] = why
        rec["done"] += 1
        t = rec["trial"]
        if why is None and math.isfinite(value):
            self._tune_runs[trial_id] = (t.config_id, int(t.seeds[slot]))
        if rec["done"] == len(rec["returns"]):
            del self._runs[tid]
            errors = rec["errors"] if any(rec["errors"]) else None
            self._optimizer().tell(t, rec["returns"], errors=errors)

    def get_state(self) -> dict:
        # the scheduler is checked again in the process that restores the searcher
        return {k: v for k, v in self.__dict__.items() if k != "_host"}

    def set_state(self, state: dict) -> None:
        self.__dict__.update(state)

    def save(self, checkpoint_path: str) -> None:
        with open(checkpoint_path, "wb") as f:
            pickle.dump(self.get_state(), f)

    def restore(self, checkpoint_path: str) -> None:
        with open(checkpoint_path, "rb") as f:
            self.set_state(pickle.load(f))

    # ------------------------------------------------------------------ results
    def result(self) -> Result | None:
        """The study's :class:`erahbo.Result` (history, rounds, configs, incumbent) in Tune's
        values: a ``tune.choice`` parameter shows its choice, never its index (None before
        the study starts). Columns of nested parameters are named by their path
        (``"opt/lr"``); the incumbent is flat alike (:meth:`recommend`: the nested config)."""
        if self._opt is None:
            return None
        res = self._opt.result()
        for path in self._index_paths():
            col, cats = "/".join(path), list(self._domains[path].categories)
            for table in (res.history, res.configs):
                if col in table.columns:
                    table[col] = pd.Series([cats[int(v)] for v in table[col]],
                                           index=table.index, dtype=object)
        if res.incumbent is not None:
            res.incumbent = self._tune_values(res.incumbent)
        return res

    def recommend(self) -> dict[str, Any] | None:
        """Recommended configuration, ``argmax LCB_MV`` (None before any data)."""
        if self._opt is None:
            return None
        cfg = self._opt.recommend()
        return None if cfg is None else self._to_tune(cfg)

    def recommendation(self, results: Any = None) -> TuneRecommendation | None:
        """The recommendation with its MV estimate (None before any data).

        Parameters
        ----------
        results : ray.tune.ResultGrid, optional
            ``tuner.fit()``'s results: the recommendation's ``results`` are then the Tune
            results of its runs (``ResultGrid.get_best_result()`` picks the single best run,
            one seed: the noise, not the configuration).
        """
        if self._opt is None:
            return None
        res = self._opt.result()
        if res.incumbent_id is None:
            return None
        row = res.configs.loc[res.configs["config_id"] == res.incumbent_id].iloc[0]
        hist = res.history
        runs = hist[(hist["config_id"] == res.incumbent_id) & (hist["status"] == "ok")]
        sign = -1.0 if self._mode == "min" else 1.0
        lo, hi = sign * float(row["lcb_mv"]), sign * float(row["ucb_mv"])
        mine = {(res.incumbent_id, int(s)) for s in runs["seed"]}
        grid = [] if results is None else list(results)
        return TuneRecommendation(
            config=self._to_tune(res.incumbent), mv=sign * float(row["mv"]),
            mv_low=min(lo, hi), mv_high=max(lo, hi), mean=sign * float(row["mean"]),
            std=float(row["std"]), k=int(row["k"]), seeds=[int(s) for s in runs["seed"]],
            results=[r for r in grid
                     if self._tune_runs.get(str((r.metrics or {}).get("trial_id"))) in mine],
        )

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
            self._opt = Optimizer(self._space, **self._opt_kwargs, **self._data())
        return self._opt

    def _data(self) -> dict[str, Any]:
        """``initial_design`` and ``warm_start`` of the Optimizer from the points given."""
        assert self._space is not None
        domains = self._domains if self._paths is not None else None
        out: dict[str, Any] = {}
        if self._points:
            design = []
            for i, p in enumerate(self._points):
                cfg, seed = erahbo_point(p, domains, self._constants, self.seed_key,
                                         f"points_to_evaluate[{i}]", self._index_paths())
                if seed is not None:
                    raise ValueError(
                        f"points_to_evaluate[{i}] gives {self.seed_key!r}: ERAHBO chooses the "
                        "seeds of the runs it asks for; leave it out, or give evaluated_rewards "
                        "for runs done already"
                    )
                try:
                    self._space.encode(cfg)  # named here, not by the Optimizer's design check
                except ValueError as exc:
                    raise ValueError(f"points_to_evaluate[{i}]: {exc}") from None
                design.append(cfg)
            n_more = max(self._n_init - len(design), 0)  # the core's initial design fills up
            out["initial_design"] = [*design, *design_points(self._space, n_more, self._seed)]
        if self._evaluated:
            points = [erahbo_point(p, domains, self._constants, self.seed_key,
                                   f"evaluated point {i}", self._index_paths())
                      for i, (p, _) in enumerate(self._evaluated)]
            sign = -1.0 if self._mode == "min" else 1.0
            out["warm_start"] = warm_runs(points, [v for _, v in self._evaluated], sign,
                                          self._min_runs)
        return out

    def _check_host(self) -> None:
        """Refuse a scheduler that stops or changes trials (once per process) and Tune's
        Repeater around the searcher."""
        refuse_repeater(self)
        if self._host is None:
            scheduler = host_scheduler()
            refuse_scheduler(scheduler)
            self._host = "fifo" if scheduler is not None else None

    def _stopped(self, trial_id: str, trial: Any, slot: int, result: dict, value: float,
                 why: str) -> None:
        """Record a run cut by a scheduler; warn once."""
        self.stopped_runs.append({
            "trial_id": trial_id, "config_id": trial.config_id, "seed": int(trial.seeds[slot]),
            "training_iteration": result.get("training_iteration"), self._metric: value})
        if len(self.stopped_runs) == 1:
            warnings.warn(f"ERAHBOSearch: a trial was {why}; such runs are failed runs of "
                          "the failures policy (searcher.stopped_runs lists them)",
                          UserWarning, stacklevel=3)

    def _index_paths(self) -> set[tuple]:
        """The ``tune.choice`` parameters the space holds by index (a searcher saved before
        the space held values: every one)."""
        if "_by_index" in self.__dict__:
            return self._by_index
        return {p for p, d in self._domains.items() if isinstance(d, Categorical)}

    def _tune_values(self, config: dict[str, Any]) -> dict[str, Any]:
        """An erahbo config (flat) with Tune's values: a category held by index is its choice,
        one held by value the choice itself (the very object of ``tune.choice``)."""
        if self._paths is None:
            return dict(config)
        out, by_index = dict(config), self._index_paths()
        for path in self._paths:
            d, name = self._domains[path], "/".join(path)
            if isinstance(d, Categorical) and name in out:
                i = (int(out[name]) if path in by_index
                     else category_index(d, out[name], name))
                out[name] = d.categories[i]
        return out

    def _to_tune(self, config: dict[str, Any]) -> dict[str, Any]:
        """An erahbo config as a (nested) Tune config."""
        if self._paths is None:
            return dict(config)
        flat = self._tune_values(config)
        out: dict[str, Any] = {}
        for path in self._paths:
            v = flat["/".join(path)]
            node = out
            for key in path[:-1]:
                node = node.setdefault(key, {})
            node[path[-1]] = v
        return out
