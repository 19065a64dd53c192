"""ERAHBO as an Optuna sampler and pruner (``pip install "erahbo[optuna]"``).

One Optuna trial is one configuration. The objective trains seed after seed, reports each
seed's return with ``trial.report(value, step)`` (``step = 0, 1, ...``) and stops when
``trial.should_prune()`` is True (CleanRL's tuner pattern):

>>> import optuna
>>> from erahbo.integrations.optuna import ERAHBOSampler
>>> def objective(trial):
...     x = trial.suggest_float("x", 0.0, 1.0)
...     returns = []
...     for step in range(20):
...         returns.append(1.0 - (x - 0.3) ** 2 + 0.01 * ((7 * step) % 5))   # train, evaluate
...         trial.report(returns[-1], step)
...         if trial.should_prune():
...             break
...     return sum(returns) / len(returns)
>>> sampler = ERAHBOSampler(seed=0, n_init=3, k_init=3, k_max=6)
>>> optuna.logging.set_verbosity(optuna.logging.WARNING)
>>> study = optuna.create_study(direction="maximize", sampler=sampler, pruner=sampler.pruner)
>>> study.optimize(objective, n_trials=5)
>>> sorted(sampler.recommend(study))
['x']

* The pruner (:class:`ERAHBOPruner`) is ERAHBO's stopping rule: after ``k_min`` reports it
  says stop when ``UCB_MV(x; k) <= B_t`` (``B_t = max LCB_MV`` over the other trials' data),
  and at ``k_max``; fixed-k methods stop at ``k``; the initial design (the first ``n_init``
  trials) stops at ``k_init``; with ``random_interleave`` (erahbo's default for ERAHBO: 50
  runs) every other trial after the initial design is drawn at random (from the
  ``random_top`` share of the space best by the acquisition, as in
  :func:`erahbo.optimizer.random_design.random_configuration`) while the study holds fewer
  than that many runs (phase ``"random"``), and stops at ``k_min`` (fixed-k:
  ``k``); after that, with ``challengers`` (erahbo's default for ERAHBO), the same trials
  are challenger rounds (phase ``"challenger"``): they re-run the configuration whose own
  runs beat the recommendation's, if there is one (:mod:`erahbo.optimizer.challengers`;
  else the acquisition's choice), with the stopping rule as usual. ``should_prune()`` is
  True at every stop, ``k_max`` included.
* The sampler reads the per-seed returns (intermediate values) of COMPLETE, PRUNED and FAILED
  trials, pools trials with the same parameters, and proposes the next configuration with the
  method's acquisition over the distributions the objective suggests (float, log, stepped,
  int, categorical); a parameter that is not in every trial (dynamic or conditional) is
  sampled by an independent sampler, with a warning. The trial value the objective returns
  is not used.
* :meth:`ERAHBOSampler.recommend` returns the recommended parameters, ``argmax LCB_MV``
  (``study.best_trial`` ranks by the returned value, which is not MV).
* Nothing lives only in memory: the phase of each trial and the GP hyperparameters (fitted
  once, on the data at the end of the initial design) are stored in the study's system
  attributes, so a study in any storage (RDB, journal) resumes with a new sampler.
* Failures follow erahbo's policy (``failures``): a NaN/inf report or an exception in the
  objective is a failed run (the pruner stops the trial at a non-finite report);
  ``"penalize"`` counts it with a return below the worst one seen (the configuration is never
  recommended), ``"exclude"`` makes the configuration infeasible. A trial that fails before
  its second seed counts as two failed runs.
* A repeated configuration (the acquisition may choose an evaluated one) pools its seeds: the
  sampler sets the user attribute ``erahbo_seed_offset`` (seeds it already ran) so that the
  objective can train seeds ``offset + step`` rather than repeat seeds ``0, 1, ...``.
* Minimizing studies minimize ``mean + alpha * variance`` of the reported values.
"""

from __future__ import annotations

import json
import math
import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np
from optuna.distributions import (
    BaseDistribution,
    CategoricalDistribution,
    FloatDistribution,
    IntDistribution,
)
from optuna.pruners import BasePruner
from optuna.samplers import BaseSampler, RandomSampler
from optuna.search_space import IntersectionSearchSpace
from optuna.study import Study, StudyDirection
from optuna.trial import FrozenTrial, TrialState

from erahbo.gp import GPHyper
from erahbo.optimizer import Optimizer
from erahbo.optimizer.challengers import is_challenger_round
from erahbo.optimizer.random_design import is_random_round
from erahbo.space import SearchSpace

__all__ = ["SEED_OFFSET", "ERAHBOPruner", "ERAHBOSampler"]

SEED_OFFSET = "erahbo_seed_offset"  # user attribute: seeds a repeated configuration already ran
# trial system attribute: "init", "bo", "random" (random_interleave) or "challenger"
_PHASE = "erahbo:phase"
_HYPER = "erahbo:hyperparameters"  # study system attribute: fitted GP hyperparameters (JSON)
_DECISION = "erahbo:decision"  # trial system attribute: the stopping decision (k, UCB_MV, B_t)
_USED = (TrialState.COMPLETE, TrialState.PRUNED, TrialState.FAIL)


class _Coder:
    """Optuna distributions <-> an erahbo :class:`SearchSpace`.

    Categoricals and stepped distributions are encoded by their index (``("cat", [0, 1,
    ...])`` and ``("int", 0, n)``), so any choice type and any step are modelled.
    """

    def __init__(self, dists: dict[str, BaseDistribution]) -> None:
        self.dists = dict(sorted(dists.items()))
        spec: dict[str, Any] = {}
        for name, d in self.dists.items():
            if isinstance(d, CategoricalDistribution):
                spec[name] = ("cat", list(range(len(d.choices))))
            elif isinstance(d, FloatDistribution) and d.step is None:
                spec[name] = ("log" if d.log else "float", d.low, d.high)
            elif isinstance(d, FloatDistribution):
                spec[name] = ("int", 0, round((d.high - d.low) / d.step))
            elif isinstance(d, IntDistribution) and d.step == 1:
                spec[name] = ("logint" if d.log else "int", d.low, d.high)
            elif isinstance(d, IntDistribution):
                spec[name] = ("int", 0, (d.high - d.low) // d.step)
            else:
                raise TypeError(f"parameter {name!r}: unsupported distribution {d!r}")
        self.space = SearchSpace(spec)
        self.key = json.dumps({n: str(d) for n, d in self.dists.items()})

    def covers(self, params: dict[str, Any]) -> bool:
        return all(n in params for n in self.dists)

    def to_erahbo(self, params: dict[str, Any]) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for name, d in self.dists.items():
            v = params[name]
            if isinstance(d, CategoricalDistribution):
                out[name] = int(d.to_internal_repr(v))
            elif isinstance(d, FloatDistribution) and d.step is not None:
                out[name] = round((v - d.low) / d.step)
            elif isinstance(d, IntDistribution) and d.step != 1:
                out[name] = (int(v) - d.low) // d.step
            else:
                out[name] = v
        return out

    def to_optuna(self, config: dict[str, Any]) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for name, d in self.dists.items():
            v = config[name]
            if isinstance(d, CategoricalDistribution):
                out[name] = d.choices[int(v)]
            elif isinstance(d, FloatDistribution) and d.step is not None:
                out[name] = min(d.low + int(v) * d.step, d.high)
            elif isinstance(d, FloatDistribution):
                out[name] = min(max(float(v), d.low), d.high)
            elif isinstance(d, IntDistribution):
                out[name] = min(d.low + int(v) * d.step, d.high) if d.step != 1 else int(v)
        return out


class ERAHBOSampler(BaseSampler):
    """ERAHBO, RAHBO, GP-UCB or random search as an Optuna sampler (see the module docstring).

    Parameters
    ----------
    method : {"erahbo", "rahbo", "gpucb", "random"}
    preset, alpha, beta, beta_stop, k_min, k_max, k, n_init, k_init, refit_every, seed, kernel
    random_interleave, random_top, challengers
        As :class:`erahbo.Optimizer` (``n_init``: the first ``n_init`` trials form the initial
        design, Sobol points once the search space is known; ``k_init``: their seeds; None:
        the preset's default).
    failures : {"penalize", "exclude"}
        What a failed run (a NaN/inf report, an exception in the objective) does.
    raw_samples, n_polish : int
        Acquisition optimization effort (as :class:`erahbo.Optimizer`).
    independent_sampler : optuna.samplers.BaseSampler or None
        Samples what ERAHBO cannot model (default ``RandomSampler(seed)``).
    warn_independent_sampling : bool
        Warn when a parameter is sampled by ``independent_sampler`` after the initial design.

    Attributes
    ----------
    pruner : ERAHBOPruner
        The stopping rule; pass it to ``optuna.create_study(pruner=sampler.pruner)``.
    """

    def __init__(
        self,
        *,
        method: str = "erahbo",
        preset: str = "default",
        alpha: float = 1.0,
        beta: float | None = None,
        beta_stop: float | None = None,
        k_min: int | None = None,
        k_max: int | None = None,
        k: int | None = None,
        n_init: int | None = None,
        k_init: int | None = None,
        refit_every: int | None = None,
        random_interleave: int | None = None,
        random_top: float | None = None,
        challengers: bool | None = None,
        seed: int = 0,
        failures: str = "penalize",
        kernel: str = "rbf",
        raw_samples: int = 512,
        n_polish: int = 5,
        independent_sampler: BaseSampler | None = None,
        warn_independent_sampling: bool = True,
    ) -> None:
        if failures not in ("penalize", "exclude"):
            raise ValueError(f"failures={failures!r} must be 'penalize' or 'exclude'")
        given = dict(beta=beta, beta_stop=beta_stop, k_min=k_min, k_max=k_max, k=k,
                     k_init=k_init, refit_every=refit_every, random_interleave=random_interleave,
                     random_top=random_top, challengers=challengers)
        self._options: dict[str, Any] = dict(
            method=method, preset=preset, alpha=alpha, seed=seed, failures=failures,
            kernel=kernel, raw_samples=raw_samples, n_polish=n_polish,
            **{name: v for name, v in given.items() if v is not None},
        )
        init = {} if n_init is None else {"n_init": n_init}
        probe = Optimizer({"x": ("float", 0.0, 1.0)}, **init, **self._options)  # checks
        o = probe.options  # the values in force (given, or the preset's defaults)
        self.method, self.n_init, self.seed = method, int(o.n_init), int(seed)
        self.k_min, self.k_max, self.k, self.k_init = o.k_min, o.k_max, o.k, probe.k_init
        # random rounds are this sampler's own trials (phase "random"): each decision below is
        # made by a new Optimizer warm-started with the study's runs, which cannot count them
        self.random_interleave = int(o.random_interleave or 0)
        self._options["random_interleave"] = 0
        self.random_top = float(o.random_top)
        self.challengers = bool(o.challengers)  # likewise: a phase of this sampler's trials
        self._options["challengers"] = False
        self._independent = independent_sampler or RandomSampler(seed=seed)
        self._warn = bool(warn_independent_sampling)
        self._warned: set[str] = set()
        self._intersection = IntersectionSearchSpace(include_pruned=True)
        self._cache: tuple[Any, Optimizer | None] | None = None  # (data key, optimizer)
        self.pruner = ERAHBOPruner(self)

    # ------------------------------------------------------------------ Optuna interface
    def reseed_rng(self) -> None:
        self._independent.reseed_rng()

    def before_trial(self, study: Study, trial: FrozenTrial) -> None:
        if _PHASE in trial.system_attrs:
            return
        others = [t for t in study.get_trials(deepcopy=False) if t.number != trial.number]
        n = sum(1 for t in others if t.system_attrs.get(_PHASE) == "init")
        phase = "init" if n < self.n_init else "bo"
        if phase == "bo" and (self.random_interleave or self.challengers):  # as Optimizer
            bo = sum(1 for t in others
                     if t.system_attrs.get(_PHASE) in ("bo", "random", "challenger"))
            runs = sum(len(t.intermediate_values) for t in others)
            if is_random_round(bo + 1, runs, self.random_interleave):
                phase = "random"
            elif is_challenger_round(bo + 1, runs, self.random_interleave, self.challengers):
                phase = "challenger"
        study._storage.set_trial_system_attr(trial._trial_id, _PHASE, phase)
        trial.system_attrs[_PHASE] = phase  # Optuna's Trial keeps this copy

    def infer_relative_search_space(
        self, study: Study, trial: FrozenTrial
    ) -> dict[str, BaseDistribution]:
        if len(study.directions) > 1:
            raise ValueError("ERAHBOSampler: multi-objective studies are not supported")
        return {n: d for n, d in self._intersection.calculate(study).items() if not d.single()}

    def sample_relative(
        self, study: Study, trial: FrozenTrial, search_space: dict[str, BaseDistribution]
    ) -> dict[str, Any]:
        if not search_space:
            return {}
        coder = _Coder(search_space)
        if _phase(study, trial) == "init":
            i = sum(1 for t in study.get_trials(deepcopy=False)
                    if t.number < trial.number and t.system_attrs.get(_PHASE) == "init")
            u = coder.space.sobol_unit(max(self.n_init, i + 1), self.seed)[i]
            config = coder.space.decode(u)
            records = self._records(study, coder, exclude=trial.number)
        elif _phase(study, trial) == "random":  # seeded per trial
            records = self._records(study, coder, exclude=trial.number)
            config = self._random(study, coder, records, trial.number)
        else:
            records = self._records(study, coder, exclude=trial.number)
            challenger = _phase(study, trial) == "challenger"
            config = self._ask(study, coder, records, challengers=challenger)
            if challenger and config is not None and self._running(study, trial, coder, config):
                # a challenger another worker trains now: its seeds would repeat them
                config = self._ask(study, coder, records)
            if config is None:
                return {}  # no usable data yet (e.g. every initial run failed): independent
        key = json.dumps(coder.to_erahbo(coder.to_optuna(config)), sort_keys=True)
        ran = sum(len(r["returns"]) for r in records
                  if json.dumps(r["config"], sort_keys=True) == key)
        if ran:
            study._storage.set_trial_user_attr(trial._trial_id, SEED_OFFSET, int(ran))
            trial.set_user_attr(SEED_OFFSET, int(ran))  # Optuna's Trial reads this copy
        return coder.to_optuna(config)

    def sample_independent(
        self,
        study: Study,
        trial: FrozenTrial,
        param_name: str,
        param_distribution: BaseDistribution,
    ) -> Any:
        if (self._warn and param_name not in self._warned and _phase(study, trial) != "init"
                and not param_distribution.single()):
            self._warned.add(param_name)
            warnings.warn(
                f"ERAHBOSampler: parameter {param_name!r} of trial {trial.number} is not in "
                f"every earlier trial (a dynamic or conditional parameter): it is sampled by "
                f"{type(self._independent).__name__}, not by {self.method}. Suggest every "
                "parameter in every trial to let ERAHBO model it.",
                stacklevel=2,
            )
        return self._independent.sample_independent(study, trial, param_name, param_distribution)

    # ------------------------------------------------------------------ recommendation
    def recommend(self, study: Study) -> dict[str, Any] | None:
        """Recommended parameters: ``argmax LCB_MV`` over the evaluated configurations.

        Returns the parameters of the first trial with the recommended configuration (its
        independently sampled parameters included); None before any trial has 2 seeds.
        """
        coder = self._coder(study)
        if coder is None:
            return None
        opt = self._optimizer(study, coder, self._records(study, coder), cache=True)
        cfg = None if opt is None else opt.recommend()
        if cfg is None:
            return None
        best = coder.to_optuna(cfg)
        for t in study.get_trials(deepcopy=False, states=_USED):
            if coder.covers(t.params) and coder.to_erahbo(t.params) == coder.to_erahbo(best):
                return dict(t.params)
        return best

    def optimizer(self, study: Study) -> Optimizer | None:
        """An :class:`erahbo.Optimizer` holding the study's runs (for its ``result()``)."""
        coder = self._coder(study)
        if coder is None:
            return None
        return self._optimizer(study, coder, self._records(study, coder), cache=True)

    # ------------------------------------------------------------------ stopping rule
    def _should_stop(self, study: Study, trial: FrozenTrial) -> bool:
        vals = [v for _, v in sorted(trial.intermediate_values.items())]
        n = len(vals)
        if n == 0:
            return False
        if not all(math.isfinite(v) for v in vals):
            return True  # a failed run: the configuration is penalized or excluded
        phase = _phase(study, trial)
        if phase == "init":
            return n >= self.k_init
        if phase == "random":  # a random round: its first seeds only, as in Optimizer
            return n >= (self.k_min if self.method == "erahbo" else self.k)
        if self.method != "erahbo":
            return n >= self.k
        if n < self.k_min:
            return False
        coder = self._coder(study)
        if coder is None or not coder.covers(trial.params):
            return n >= self.k_max  # nothing to model this trial with: it runs to k_max
        opt = self._optimizer(study, coder, self._records(study, coder, exclude=trial.number),
                              cache=True)
        if opt is None:
            return n >= self.k_max
        sign = _sign(study)
        reason, ucb, b_t = opt.stopping_decision(coder.to_erahbo(trial.params),
                                                 [sign * v for v in vals])
        if reason is not None:  # stored once, at the stop (each write is a storage commit)
            study._storage.set_trial_system_attr(trial._trial_id, _DECISION, {
                "k": n, "reason": reason, "ucb_mv": ucb if math.isfinite(ucb) else None,
                "B_t": b_t if math.isfinite(b_t) else None,
            })
        return reason is not None

    # ------------------------------------------------------------------ study -> erahbo
    def _coder(self, study: Study) -> _Coder | None:
        space = {n: d for n, d in self._intersection.calculate(study).items() if not d.single()}
        return _Coder(space) if space else None

    def _records(
        self, study: Study, coder: _Coder, exclude: int | None = None
    ) -> list[dict[str, Any]]:
        """Per-seed returns of the finished trials, pooled by configuration (warm records)."""
        sign = _sign(study)
        pooled: dict[str, dict[str, Any]] = {}
        for t in study.get_trials(deepcopy=False, states=_USED):
            if t.number == exclude or not coder.covers(t.params):
                continue
            runs: list[float | None] = [
                sign * v if math.isfinite(v) else None
                for _, v in sorted(t.intermediate_values.items())
            ]
            if t.state == TrialState.FAIL:
                runs.append(None)  # the run that raised
                if len(runs) < 2:
                    runs.append(None)  # failed before its second seed: two failed runs
            if not runs:
                continue
            cfg = coder.to_erahbo(t.params)
            rec = pooled.setdefault(json.dumps(cfg, sort_keys=True),
                                    {"config": cfg, "returns": [], "seeds": None})
            rec["returns"].extend(runs)
        return list(pooled.values())

    def _ask(self, study: Study, coder: _Coder, records: list[dict[str, Any]],
             **round_kind: Any) -> dict[str, Any] | None:
        """The next configuration of a BO trial (``round_kind``: ``challengers=True`` or
        ``random_seed``, as :meth:`_optimizer`); None without usable data. An evaluated
        configuration (a challenger) comes with its exact parameters from ``records``
        (``decode(encode(x))`` may round)."""
        opt = self._optimizer(study, coder, records, cache=False, **round_kind)
        t = None if opt is None else opt.ask()
        if t is None:
            return None
        row = opt.data.row_of(t.config_id)
        if row is None:
            return t.config
        return next((r["config"] for r in records if np.array_equal(
            coder.space.encode(r["config"]), opt.data.U[row])), t.config)

    def _random(self, study: Study, coder: _Coder, records: list[dict[str, Any]],
                number: int) -> dict[str, Any]:
        """A random trial's configuration: the Optimizer's random round (a draw from the
        ``random_top`` share best by the acquisition) on the study's data, seeded by the trial
        ``number``; uniform over the space when ``random_top`` is 1 or without usable data."""
        rng = np.random.default_rng([self.seed, number])
        config = None
        if self.random_top < 1:
            config = self._ask(study, coder, records, random_seed=int(rng.integers(2**31 - 1)))
        return coder.space.decode(rng.random(coder.space.dim)) if config is None else config

    @staticmethod
    def _running(study: Study, trial: FrozenTrial, coder: _Coder, config: dict[str, Any]) -> bool:
        """Whether another trial with ``config`` is running now (parallel workers)."""
        return any(t.number != trial.number and coder.covers(t.params)
                   and coder.to_erahbo(t.params) == config
                   for t in study.get_trials(deepcopy=False, states=(TrialState.RUNNING,)))

    def _optimizer(
        self, study: Study, coder: _Coder, records: list[dict[str, Any]], *, cache: bool,
        challengers: bool = False, random_seed: int | None = None,
    ) -> Optimizer | None:
        """An Optimizer on ``records`` (warm start) with the study's hyperparameters
        (``challengers``: its first round is a challenger round; ``random_seed``: a random
        round, drawn with this seed)."""
        if not any(len(r["returns"]) >= 2 for r in records):
            return None
        key = (coder.key, json.dumps(records, sort_keys=True))
        if cache and self._cache is not None and self._cache[0] == key:
            return self._cache[1]
        opts = dict(self._options, n_init=0, warm_start=records, challengers=challengers)
        if random_seed is not None:  # every round is random while under 2**62 runs
            opts.update(random_interleave=2**62, random_top=self.random_top, seed=random_seed)
        opt: Optimizer | None
        try:
            if self.method != "random":
                opts["hyperparameters"] = self._hyperparameters(study, coder, records)
            opt = Optimizer(coder.space, **opts)
        except ValueError as e:
            if "warm_start holds no configuration" not in str(e):
                raise
            opt = None  # e.g. every configuration so far excluded
        self._cache = (key, opt)
        return opt

    def _hyperparameters(
        self, study: Study, coder: _Coder, records: list[dict[str, Any]]
    ) -> tuple[GPHyper, GPHyper]:
        """The GP hyperparameters: fitted once, on the data at the first BO decision, stored."""
        stored = study._storage.get_study_system_attrs(study._study_id).get(_HYPER)
        if stored and stored.get("space") == coder.key:
            return _hyper_from_json(stored["hyper"])
        opt = Optimizer(coder.space, **dict(self._options, n_init=0, warm_start=records))
        hyper = opt.fit_hyperparameters()
        study._storage.set_study_system_attr(
            study._study_id, _HYPER, {"space": coder.key, "hyper": _hyper_to_json(hyper)}
        )
        return hyper


class ERAHBOPruner(BasePruner):
    """ERAHBO's stopping rule as an Optuna pruner; made by :class:`ERAHBOSampler`.

    ``prune`` is True when the trial should stop training seeds: the stopping rule fired
    (``UCB_MV(x; k) <= B_t`` after ``k_min`` seeds), ``k_max`` (fixed-k methods: ``k``;
    initial design: ``k_init``) seeds ran, or a seed failed (NaN/inf report).
    """

    def __init__(self, sampler: ERAHBOSampler) -> None:
        self.sampler = sampler

    def prune(self, study: Study, trial: FrozenTrial) -> bool:
        return self.sampler._should_stop(study, trial)


def _phase(study: Study, trial: FrozenTrial) -> str:
    phase = trial.system_attrs.get(_PHASE)
    if phase is None:  # a frozen trial from before before_trial ran: read the storage
        phase = study._storage.get_trial(trial._trial_id).system_attrs.get(_PHASE, "bo")
    return str(phase)


def _sign(study: Study) -> float:
    return -1.0 if study.direction == StudyDirection.MINIMIZE else 1.0


def _hyper_to_json(hyper: Sequence[GPHyper]) -> list[dict[str, Any]]:
    return [{"kind": h.kind, "lengthscales": np.asarray(h.lengthscales, dtype=float).tolist(),
             "noise": None if h.noise is None else float(h.noise)} for h in hyper]


def _hyper_from_json(items: list[dict[str, Any]]) -> tuple[GPHyper, GPHyper]:
    hf, hv = (GPHyper(d["kind"], np.asarray(d["lengthscales"], dtype=float), d["noise"])
              for d in items)
    return hf, hv
