"""ERAHBO as an Optuna sampler and pruner (``pip install "erahbo[optuna]"``).

One Optuna trial is one configuration trained on several seeds. The objective trains the
seeds the sampler gives the trial (:func:`trial_seeds`), reports each seed's return with
``trial.report(value, step)`` (``step = 0, 1, ...``, the seed's index in the trial) and stops
when ``trial.should_prune()`` is True (CleanRL's tuner pattern):

>>> import optuna
>>> from erahbo.integrations.optuna import ERAHBOSampler, recommended_trial, trial_seeds
>>> def objective(trial):
...     x = trial.suggest_float("x", 0.0, 1.0)
...     returns = []
...     for step, seed in enumerate(trial_seeds(trial)):
...         returns.append(1.0 - (x - 0.3) ** 2 + 0.01 * ((7 * seed) % 5))   # train, evaluate
...         trial.report(returns[-1], step)
...         if trial.should_prune():
...             raise optuna.TrialPruned()   # ERAHBO's stopping rule rejected it
...     return sum(returns) / len(returns)
>>> sampler = ERAHBOSampler(seed=0, n_init=3, k_init=3, k_max=6)
>>> optuna.logging.set_verbosity(optuna.logging.WARNING)
>>> study = optuna.create_study(direction="maximize", sampler=sampler, pruner=sampler.pruner)
>>> study.optimize(objective, n_trials=5)
>>> sorted(recommended_trial(study).params)
['x']

* **Seeds.** Each trial gets its seeds when it starts (user attribute ``erahbo_seeds``), their
  number and the seeds from the core (:mod:`erahbo.optimizer.host`): the initial design's
  ``k_init``, random rounds ``k_min`` (fixed-k methods: ``k``), the other ERAHBO trials a
  whole round's (``Rule.round_seeds``: up to ``k_max`` within the seed caps), the next of the
  configuration's seed stream (``Optimizer.next_seeds``) that its other trials did not run
  and may not still run: workers on one storage never train the same (configuration, seed)
  pair, nor one configuration with other parameters (a claim settles before the trial trains:
  :mod:`erahbo.integrations._optuna_claims`).
* **The pruner** (:class:`ERAHBOPruner`, ``sampler.pruner``) is ERAHBO's stopping rule: after
  ``k_min`` seeds it says prune when ``UCB_MV(x; k) <= B_t`` (``B_t = max LCB_MV`` over the
  data). A trial that trains all its seeds completes (``study.best_trial`` works); a pruned
  trial is one the rule rejected (system attribute ``erahbo:decision``), or one whose last
  seed failed (a NaN/inf report). Steps that are not the trial's seed indices (a learning
  curve per training iteration) are refused with the fix; a study whose pruner is not the
  sampler's gets one warning.
* **Round kinds** follow :class:`erahbo.optimizer.strategy.RoundSchedule` counted over the
  study's trials (system attribute ``erahbo:phase``): the first ``n_init`` trials are the
  initial design (the core's, once the search space is known), then during the random
  design's runs every other trial is ``"random"``, after them (with the challenger rounds)
  every other trial is a ``"challenger"`` round, the others ``"bo"`` (acquisition). Enqueued
  trials are ``"given"`` (the first trial too): a new round of their configuration, or for a
  retried trial the rest of the round it retries, within the core's seed cap.
* **Joining a study.** The study stores the sampler's settings and refuses a sampler with
  other options; a study holding trials of another sampler is refused until ``warm_start``
  says how to read them (:mod:`erahbo.integrations._optuna_study`).
* **The answer.** A finishing trial gets erahbo's view of its configuration as user attributes
  (``erahbo_mv``, ``erahbo_lcb_mv``, ``erahbo_ucb_mv``: the core's ``Optimizer.bounds_at``;
  ``erahbo_k``; ``erahbo_config_id``, its first trial's number; ``erahbo_recommended``), the
  study the recommendation over the trials finished or finishing (``erahbo_recommendation``:
  :func:`recommended_trial`, ``trials_dataframe()``, the dashboard);
  :meth:`ERAHBOSampler.result` gives erahbo's tables (real values).
* **State.** Everything that decides lives in the storage (claims, round kinds, the GP
  hyperparameters and the configurations they were fit on), so any process resumes a study; each
  keeps one optimizer (:mod:`erahbo.integrations._optuna_engine`).
* **Failures** follow ``failures`` (``"penalize"``: a failed run counts at erahbo's penalty,
  :func:`erahbo.runtime.failures.penalty_value`, never raising a mean; ``"exclude"``: the
  configuration becomes infeasible). A trial failed by Optuna's heartbeat or before its first
  report keeps its reported runs only: a lost machine is not a property of the
  hyperparameters.
* Minimizing studies minimize the risk measure of the negated values (MV: ``mean + alpha var``).
"""

from __future__ import annotations

import difflib
import inspect
import threading
import warnings
import zlib
from collections.abc import Callable
from typing import Any

import numpy as np
from optuna.distributions import BaseDistribution
from optuna.exceptions import TrialPruned
from optuna.samplers import BaseSampler, RandomSampler
from optuna.search_space import IntersectionSearchSpace
from optuna.study import Study
from optuna.trial import FrozenTrial, TrialState

from erahbo.integrations._optuna_claims import read, settle, wait_for_earlier_claims
from erahbo.integrations._optuna_engine import Engine, Hyper, study_hyperparameters
from erahbo.integrations._optuna_pruner import ERAHBOPruner, sign_of
from erahbo.integrations._optuna_space import Coder, config_key
from erahbo.integrations._optuna_study import (
    RECOMMENDATION,
    check_foreign,
    check_settings,
    own_trials_in,
    reading,
    recommended_trial,
    refuse,
    sampler_settings,
    stored_mode,
)
from erahbo.integrations._optuna_trials import (
    CLAIM,
    FINISHING,
    FOREIGN_MODES,
    OBJECTIVE_FAILED,
    PHASE,
    SEED_OFFSET,
    SEEDS,
    Foreign,
    TrialIndex,
    claim_of,
    study_records,
    trial_key,
    trial_runs,
    write_attrs,
    write_live_attrs,
)
from erahbo.optimizer import Optimizer, Result
from erahbo.optimizer.host import check_options, initial_config, seeds_for, settings_of_options
from erahbo.optimizer.parts import HOST_PARAMS
from erahbo.optimizer.strategy import Strategy

__all__ = ["RECOMMENDATION", "SEEDS", "SEED_OFFSET", "ERAHBOPruner", "ERAHBOSampler",
           "recommended_trial", "trial_seeds"]

Pick = Callable[[set[int]], list[int]]  # seeds taken by other trials -> a trial's seeds
_PHASE = PHASE  # trial system attribute: init, given, random, challenger, bo (refused)


def trial_seeds(trial: Any) -> list[int]:
    """The seeds a trial of an :class:`ERAHBOSampler` study trains, in order (step ``i`` is
    seed ``trial_seeds(trial)[i]``). Call it after the ``suggest_*`` calls: a trial whose
    parameters were drawn independently (the first trials, before the search space is known)
    claims its configuration's seeds here, once its parameters are known."""
    sampler = getattr(getattr(trial, "study", None), "sampler", None)
    if isinstance(sampler, ERAHBOSampler):
        sampler._late_claim(trial)
    seeds = trial.user_attrs.get(SEEDS)
    if seeds is None:
        raise ValueError(
            f"trial {trial.number} has no {SEEDS!r} user attribute: create the study with "
            "sampler=ERAHBOSampler(...), pruner=sampler.pruner"
        )
    if not seeds:  # an enqueued or retried trial whose configuration has all its seeds
        message = (f"ERAHBOSampler: trial {trial.number} trains nothing: its configuration "
                   f"{dict(trial.params)} has all the seeds it may get (k_max, or the seed cap "
                   "max_seeds) or its retried trial had run all its seeds; it is pruned")
        warnings.warn(message, stacklevel=2)
        raise TrialPruned(message)
    return [int(s) for s in seeds]


class ERAHBOSampler(BaseSampler):
    """ERAHBO, RAHBO, GP-UCB or random search as an Optuna sampler (see the module docstring).

    Parameters
    ----------
    method : {"erahbo", "rahbo", "gpucb", "random"}
    preset, alpha, beta, beta_stop, k_min, k_max, k, n_init, k_init, refit_growth, refit_evidence
    seed, kernel, failures, raw_samples, n_polish
        As :class:`erahbo.Optimizer` (``n_init``: the first ``n_init`` trials form the initial
        design; ``k_init``: their seeds; None: the preset's default). ``failures``:
        ``"penalize"`` (default) or ``"exclude"``. ``refit_every``: 0 or None only.
    independent_sampler : optuna.samplers.BaseSampler or None
        Samples what ERAHBO cannot model (default: Optuna's ``RandomSampler`` seeded per trial
        and parameter, so that workers draw different points).
    warn_independent_sampling : bool
        Warn when a parameter is sampled by ``independent_sampler`` after the initial design.
    claim_wait : float
        Seconds a starting trial waits for the claims of trials started just before it in
        other workers (they decide first).
    warm_start : {"reports", "values", "ignore"} or None
        How to read the finished trials of another sampler in the study (a study started with
        TPE): ``"reports"``: the reports at steps ``0 .. n-1`` as the returns of seeds
        ``0 .. n-1`` (trials with other steps, learning curves, give nothing); ``"values"``:
        each completed trial's value as one run of an unknown seed; ``"ignore"``: nothing.
        None (default): such a study is refused with these choices. A warning counts what was
        read and names the trials that gave nothing; the choice is stored in the study.
    **options
        The options of the strategy's parts by name (random design, challenger rounds, seed
        caps, recommender: :data:`erahbo.optimizer.parts.HOST_PARAMS`), as
        :class:`erahbo.Optimizer` takes them; None or not given: the preset's.

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
        refit_growth: float | None = None,
        refit_evidence: float | None = None,
        seed: int = 0,
        failures: str = "penalize",
        kernel: str = "rbf",
        raw_samples: int = 512,
        n_polish: int = 5,
        independent_sampler: BaseSampler | None = None,
        warn_independent_sampling: bool = True,
        claim_wait: float = 5.0,
        warm_start: str | None = None,
        **options: Any,
    ) -> None:
        if failures not in ("penalize", "exclude"):
            raise ValueError(f"failures={failures!r} must be 'penalize' or 'exclude'")
        if warm_start is not None and warm_start not in FOREIGN_MODES:
            raise ValueError(f"warm_start={warm_start!r} must be one of "
                             f"{', '.join(map(repr, FOREIGN_MODES))} or None")
        unknown = sorted(set(options) - {p.name for p in HOST_PARAMS})
        if unknown:
            known = [*inspect.signature(ERAHBOSampler).parameters][:-1] + [
                p.name for p in HOST_PARAMS]
            near = [m for u in unknown for m in difflib.get_close_matches(u, known, n=1)]
            hint = f" (did you mean {', '.join(map(repr, near))}?)" if near else ""
            raise TypeError(f"ERAHBOSampler: unknown option(s) {', '.join(map(repr, unknown))}"
                            f"{hint}; it takes {', '.join(known)}")
        if refit_every:  # the study's fit is refit by configurations, not by rounds
            raise ValueError(f"refit_every={refit_every!r}: ERAHBOSampler refits the study's GP "
                             "hyperparameters as it grows; give refit_growth (2: each doubling)")
        given = dict(beta=beta, beta_stop=beta_stop, k_min=k_min, k_max=k_max, k=k,
                     k_init=k_init, refit_growth=refit_growth,
                     refit_evidence=refit_evidence, **options)
        self._options: dict[str, Any] = dict(
            method=method, preset=preset, alpha=alpha, seed=seed, failures=failures,
            kernel=kernel, raw_samples=raw_samples, n_polish=n_polish,
            **{name: v for name, v in given.items() if v is not None},
        )
        init = {} if n_init is None else {"n_init": n_init}
        o = check_options(**init, **self._options)  # the values in force (given, or preset's)
        strategy = Strategy.from_options(o)  # the core's parts of these options
        self.method, self.n_init, self.seed = method, int(o.n_init), int(seed)
        self.k_min, self.k_max, self.k, self.k_init = o.k_min, o.k_max, o.k, o.k_init_value
        self.schedule = strategy.schedule  # which proposer each BO round goes to
        self.rule = strategy.replication  # seeds per trial, whether the bounds decide
        self._settings = sampler_settings(settings_of_options(o))  # what a study stores
        self._names = {*inspect.signature(ERAHBOSampler).parameters, *options}  # the fix names
        self._warm_start = warm_start  # how trials of other samplers are read (None: refuse)
        self._most = max(self.k_init, self.k_max, self.k)  # steps a foreign trial's seeds fill
        self._joined: dict[tuple[int, str], Foreign | None] = {}  # study -> its reading
        self._independent = independent_sampler
        self._warn = bool(warn_independent_sampling)
        self._warned: set[str] = set()
        self._claim_wait = float(claim_wait)
        self._intersection = IntersectionSearchSpace(include_pruned=True)
        self._engine = Engine(self._options, o.min_seeds)
        self._index = TrialIndex()  # the study's trials, read incrementally
        self._lock = threading.RLock()
        self._claims: dict[int, dict[str, Any]] = {}  # running trial number -> its claim
        self._coders: dict[int, Coder | None] = {}  # running trial number -> its space
        self._refused: dict[int, str] = {}  # running trial number -> why it may not train
        self._coder: Coder | None = None  # the last modelled space
        self.pruner = ERAHBOPruner(self)

    # ------------------------------------------------------------------ Optuna interface
    def reseed_rng(self) -> None:
        if self._independent is not None:
            self._independent.reseed_rng()

    def before_trial(self, study: Study, trial: FrozenTrial) -> None:
        """Decide the trial (configuration, round kind, seeds) and claim its seeds in the
        storage: the earliest hook, before the objective runs."""
        self._check_study(study, trial)
        if claim_of(trial) is not None:  # decided already (a trial object made again)
            self._claims.setdefault(trial.number, claim_of(trial))
            return
        wait_for_earlier_claims(study, trial, self._claim_wait)
        with self._lock:
            foreign = self._join(study, trial)
            self._index.read_foreign(foreign or Foreign("ignore"))
            self._read(study)
            coder = self._space_coder(study)
            check_foreign(study, trial, self._index, foreign, coder, self._engine.min_runs,
                          self._warned)
            kind, config, pick = self._decide(study, trial, coder)
            key = None if config is None else config_key(config)
            seeds = self._claim_seeds(trial.number, key, coder, pick)
            params = None if config is None else self._params(coder, key, config)
            claim = {"trial": trial.number, "config": key, "kind": kind, "seeds": seeds,
                     "params": params, "space": None if coder is None else coder.key,
                     "settled": key is None}
            write_attrs(study, trial, user={SEEDS: seeds, SEED_OFFSET: (seeds or [None])[0]},
                        system={CLAIM: claim, _PHASE: kind})
            if key is not None:  # the claims of trials deciding at the same time
                settle(study, trial, claim, pick, coder, self._index, self._claim_wait)
            self._claims[trial.number] = claim
            self._coders[trial.number] = coder

    def infer_relative_search_space(
        self, study: Study, trial: FrozenTrial
    ) -> dict[str, BaseDistribution]:
        coder = self._coders.get(trial.number)
        return {} if coder is None else dict(coder.dists)

    def sample_relative(
        self, study: Study, trial: FrozenTrial, search_space: dict[str, BaseDistribution]
    ) -> dict[str, Any]:
        claim = self._claims.get(trial.number) or claim_of(trial) or {}
        params = claim.get("params") or {}
        return {n: v for n, v in params.items() if n in search_space}

    def sample_independent(
        self,
        study: Study,
        trial: FrozenTrial,
        param_name: str,
        param_distribution: BaseDistribution,
    ) -> Any:
        kind = (self._claims.get(trial.number) or {}).get("kind")
        if (self._warn and param_name not in self._warned and kind != "init"
                and not param_distribution.single()):
            self._warned.add(param_name)
            warnings.warn(
                f"ERAHBOSampler: parameter {param_name!r} of trial {trial.number} is not in "
                f"every earlier trial (a dynamic or conditional parameter): it is sampled by "
                f"{type(self._independent or RandomSampler()).__name__}, not by "
                f"{self.method}. Suggest every parameter in every trial to let ERAHBO model it.",
                stacklevel=2,
            )
        sampler = self._independent
        if sampler is None:  # seeded per trial and parameter: workers draw different points
            sampler = RandomSampler(seed=int(np.random.SeedSequence(
                [self.seed, trial.number, zlib.crc32(param_name.encode())]).generate_state(1)[0]))
        return sampler.sample_independent(study, trial, param_name, param_distribution)

    def after_trial(self, study: Study, trial: FrozenTrial, state: TrialState,
                    values: Any) -> None:
        """Tell the trial's runs to the optimizer; annotate the trial and the study with
        erahbo's estimates and recommendation (the trial is still running in the storage)."""
        failed = state == TrialState.FAIL
        write_attrs(study, trial, system={**({OBJECTIVE_FAILED: trial.number} if failed else {}),
                                          FINISHING: {"trial": trial.number, "state": state.name}})
        claim = self._claims.pop(trial.number, None) or claim_of(trial)
        coder = self._coders.pop(trial.number, None)
        self._refused.pop(trial.number, None)
        if claim is None:
            return
        seeds, runs = trial_runs(trial, state, failed_in_objective=failed)
        if state == TrialState.COMPLETE and not runs and "report" not in self._warned:
            self._warned.add("report")
            warnings.warn(f"ERAHBOSampler: trial {trial.number} completed without a report, so "
                          "ERAHBO has no data (the value returned is not used): report each "
                          "seed's return, for step, seed in enumerate(trial_seeds(trial)): "
                          "trial.report(train(seed), step)", stacklevel=3)
        with self._lock:
            if coder is None or not coder.covers(trial.params):
                space = {n: d for n, d in self._intersection.calculate(study).items()
                         if not d.single()} or {n: d for n, d in trial.distributions.items()
                                                if not d.single()}
                coder = Coder(space) if space else None
                if coder is not None and not coder.covers(trial.params):
                    coder = None
            if coder is None:
                return
            key = coder.key_of(trial.params)
            if claim.get("space") == coder.key:
                self._engine.tell(trial.number, key, trial.params, runs)
            else:
                self._engine.drop(trial.number)
            user = self._publish(study, coder, key, (trial, seeds, runs))
        write_attrs(study, trial, user=user)

    def _publish(self, study: Study, coder: Coder, key: str,
                 own: tuple[FrozenTrial, list[int], list[float | None]]) -> dict[str, Any]:
        """The finishing trial's user attributes; the study's recommendation over the trials
        finished or finishing now (another worker's trial in its ``after_trial`` too), written
        again while a re-read finds a trial it left out, so that the last worker to write it
        has seen every finished trial."""
        self._read(study)
        for _ in range(5):
            extra = {**self._index.finishing(), own[0].number: own}
            seen = set(self._index.done) | set(extra)
            self._engine.sync(self._index, coder, self._hyperparameters(study), sign_of(study),
                              extra=extra)
            user, rec = self._engine.annotations(coder, key)
            if rec is not None:
                study.set_user_attr(RECOMMENDATION, rec)
            self._read(study)
            if seen >= set(self._index.done) | set(self._index.finishing()):
                break
        return user

    # ------------------------------------------------------------------ decisions
    def _check_study(self, study: Study, trial: FrozenTrial) -> None:
        if len(study.directions) > 1:
            refuse(study, trial, (
                f"ERAHBOSampler: the study has {len(study.directions)} objectives; ERAHBO "
                "optimizes one (the mean-variance of the reported returns): create the study "
                "with one direction, e.g. optuna.create_study(direction='maximize', ...)"
            ))
        if study.pruner is not self.pruner and "pruner" not in self._warned:
            self._warned.add("pruner")
            warnings.warn(
                f"ERAHBOSampler: the study's pruner is {type(study.pruner).__name__}, not this "
                "sampler's stopping rule, so ERAHBO does not decide how many seeds a trial "
                "gets: create the study with optuna.create_study(..., sampler=sampler, "
                "pruner=sampler.pruner)",
                stacklevel=3,
            )

    def _join(self, study: Study, trial: FrozenTrial | None) -> Foreign | None:
        """The first time this sampler meets ``study``: check the options against the
        study's (``trial``: the one refused if they differ) and settle how trials of other
        samplers are read (None: not chosen, which refuses a study holding some)."""
        at = (id(study._storage), study.study_name)
        if at not in self._joined:
            if trial is not None:
                check_settings(study, trial, self._settings, self._names)
            mode = self._warm_start or stored_mode(study)
            self._joined[at] = None if mode is None else Foreign(mode, self._most)
        return self._joined[at]

    def _reading(self, study: Study, trials: list[FrozenTrial]) -> Foreign:
        """How :meth:`result` reads ``study``'s trials of other samplers (ValueError with the
        choices when it holds some and none is chosen)."""
        return reading(study, trials, self._join(study, None))

    def _read(self, study: Study) -> None:
        """Bring the trial index up to date with the storage."""
        read(self._index, study)

    def _space_coder(self, study: Study) -> Coder | None:
        """The modelled search space now (the intersection's non-single distributions)."""
        space = {n: d for n, d in self._intersection.calculate(study).items()
                 if not d.single()}
        if not space:
            return None
        if self._coder is None or self._coder.dists != dict(sorted(space.items())):
            self._coder = Coder(space)
        return self._coder

    def _decide(self, study: Study, trial: FrozenTrial,
                coder: Coder | None) -> tuple[str, dict[str, Any] | None, Pick]:
        """The trial's round kind, erahbo configuration (None: sampled independently) and its
        seeds, as many as it may train (the trial index read just before)."""
        given = {**trial.params, **trial.system_attrs.get("fixed_params", {})}
        if coder is None:  # the search space is not known yet (the first trial)
            if given:  # enqueued: claimed once its parameters are known (trial_seeds)
                n = self._given_seeds(study, trial, None, None, self.rule.most)
                return "given", None, self._seeds(n)
            return "init", None, self._seeds(self.k_init)
        if (bad := coder.outside(given)) is not None:  # refused by trial_seeds
            self._refused[trial.number] = (
                f"ERAHBOSampler: trial {trial.number} was enqueued with {bad}, outside the "
                "search space; enqueue values inside each distribution's range or choices")
            return "given", None, self._seeds(self.rule.most)
        if coder.covers(given):  # enqueued (enqueue_trial, RetryFailedTrialCallback)
            config = coder.to_erahbo(given)
            n = self._given_seeds(study, trial, coder, config, self.rule.most)
            return "given", config, self._seeds_of(coder, config, n)
        if trial.number < self.n_init:  # the core's initial design (others take their places)
            config = initial_config(coder.space, self.n_init, self.seed, trial.number)
            return "init", config, self._seeds_of(coder, config, self.k_init)
        index = self._index
        bo_round = 1 + index.rounds_before(trial.number)
        kind = ("random" if self.method == "random"
                else self.schedule.kind(bo_round, index.reported()))
        self._engine.sync(index, coder, self._hyperparameters(study), sign_of(study))
        got = self._engine.ask(trial.number, kind, coder)
        if got is None and self._engine.dirty:  # a stale round in the way: rebuild, again
            self._engine.sync(index, coder, self._hyperparameters(study), sign_of(study))
            got = self._engine.ask(trial.number, kind, coder)
        running = {trial_key(t, coder) for t in index.running if t.number != trial.number}
        for _ in range(3):  # another worker trains it now: another configuration, if any
            if got is None or config_key(got[0].config) not in running:
                break
            self._engine.dirty = True  # the asked round stands for the other worker's trial
            got = self._engine.ask(trial.number, kind, coder)
        if got is None:  # nothing to model with yet (every run so far failed): at random
            rng = np.random.default_rng([self.seed, trial.number])
            config = coder.space.decode(rng.random(coder.space.dim))
            return "random", config, self._seeds_of(coder, config, self.rule.first)
        t, phase, n = got  # n: the core's seeds of a trial that runs the whole round
        return phase, t.config, self._seeds(n, self._engine.opt, t.config_id)

    def _seeds(self, n: int, opt: Optimizer | None = None, cid: int | None = None) -> Pick:
        """``taken -> n seeds``: the next of configuration ``cid``'s seed stream in ``opt``
        without ``taken`` (:func:`erahbo.optimizer.host.seeds_for`)."""
        return lambda taken: seeds_for(opt, cid, n, taken, seed=self.seed)

    def _seeds_of(self, coder: Coder, config: dict[str, Any], n: int) -> Pick:
        """:meth:`_seeds` of ``config`` in an optimizer holding the study's finished trials."""
        view = self._engine.view(self._index, coder)
        return self._seeds(n, view, view.config_id_of(config))

    def _given_seeds(self, study: Study, trial: FrozenTrial, coder: Coder | None,
                     config: dict[str, Any] | None, n: int) -> int:
        """Seeds of an enqueued trial: a retried one (``RetryFailedTrialCallback``) continues
        the round of the trial it retries, with the seeds that trial had not run; another one
        is a new round of its configuration (``n``: the rule's most); both within what the
        core's seed caps leave (:meth:`erahbo.Optimizer.seeds_left`; 0: it trains nothing)."""
        copied = trial.system_attrs.get(CLAIM)
        if isinstance(copied, dict) and copied.get("trial") not in (None, trial.number):
            before = self._index.done.get(int(copied["trial"]))  # the trial it retries
            n = len(copied.get("seeds") or ()) - (0 if before is None else len(before.used))
        if coder is not None and config is not None and n > 0:
            self._engine.sync(self._index, coder, self._hyperparameters(study), sign_of(study))
            n = int(min(n, self._engine.seeds_left(coder, config)))
        return max(int(n), 0)

    def _claim_seeds(self, number: int, key: str | None, coder: Coder | None,
                     pick: Pick) -> list[int]:
        """The seeds of configuration ``key`` for trial ``number`` (the index read): ``pick``'s
        that no other trial of it ran or holds."""
        return pick(set() if key is None else self._index.used_seeds(key, number, coder))

    def _late_claim(self, trial: Any) -> None:
        """Claim the seeds of a running trial whose configuration was not known when it
        started (drawn independently), now that it has its parameters (a live Trial);
        ValueError for a trial enqueued with values outside the search space."""
        if trial.number in self._refused:
            raise ValueError(self._refused[trial.number])
        claim = self._claims.get(trial.number)
        dists = {n: d for n, d in trial.distributions.items() if not d.single()}
        if claim is None or claim["config"] is not None or not dists:
            return
        with self._lock:
            coder = Coder(dists)
            key = coder.key_of(trial.params)
            self._read(trial.study)
            claim = dict(claim, config=key, space=coder.key, params=dict(trial.params))
            pick = self._seeds_of(coder, coder.to_erahbo(trial.params), len(claim["seeds"]))
            claim["seeds"] = self._claim_seeds(trial.number, key, coder, pick)
            self._claims[trial.number] = claim
            write_live_attrs(trial, user={SEEDS: claim["seeds"],
                                          SEED_OFFSET: (claim["seeds"] or [None])[0]},
                             system={CLAIM: claim})

    def _params(self, coder: Coder, key: str, config: dict[str, Any]) -> dict[str, Any]:
        """Optuna parameters of ``config``: an evaluated configuration's exact ones."""
        known = self._engine.params.get(key) if self._engine.key == coder.key else None
        return dict(known) if known is not None else coder.to_optuna(config)

    # ------------------------------------------------------------------ the answer
    def _hyperparameters(self, study: Study) -> Hyper:
        """The study's GP hyperparameters (for :meth:`Engine.sync`)."""
        return study_hyperparameters(study, self._options, self.method, self.n_init)

    def optimizer(self, study: Study) -> Optimizer | None:
        """A new :class:`erahbo.Optimizer` holding the study's runs (for its ``result()``);
        None before any configuration has 2 runs."""
        coder = self._study_coder(study)
        if coder is None:
            return None
        trials = study.get_trials(deepcopy=False)
        index = TrialIndex(self._reading(study, trials))
        index.update(study.study_name, trials)
        return Engine(self._options, self._engine.min_runs).sync(
            index, coder, self._hyperparameters(study), sign_of(study))

    def recommend(self, study: Study) -> dict[str, Any] | None:
        """Recommended parameters (``argmax LCB_MV``): those of the configuration's first
        trial; None before any configuration has 2 runs."""
        coder = self._study_coder(study)
        opt = self.optimizer(study)
        cfg = None if opt is None or coder is None else opt.recommend()
        if cfg is None:
            return None
        trials = study.get_trials(deepcopy=False)
        _, first, _ = study_records(trials, coder, foreign=self._reading(study, trials))
        number = first.get(config_key(cfg))
        return next((dict(t.params) for t in trials if t.number == number),
                    coder.to_optuna(cfg))

    def result(self, study: Study) -> Result | None:
        """erahbo's :class:`~erahbo.optimizer.Result` of the study, ``config_id`` = the number
        of the configuration's first trial (in every table and ``incumbent_id``); the
        hyperparameters as the objective received them. None before any data."""
        coder = self._study_coder(study)
        opt = self.optimizer(study)
        if opt is None or coder is None:
            return None
        res = opt.result()
        trials = study.get_trials(deepcopy=False)
        _, first, _ = study_records(trials, coder, foreign=self._reading(study, trials))
        names = list(coder.dists)
        ids = {int(row["config_id"]): first.get(config_key({n: row[n] for n in names}))
               for _, row in res.configs.iterrows()}
        for table in (res.configs, res.history, res.rounds):
            table["config_id"] = table["config_id"].map(lambda c: ids.get(int(c), c))
        res.incumbent_id = ids.get(res.incumbent_id, res.incumbent_id)
        own_trials_in(res, trials, coder, first, self.method != "erahbo", self.k_max)
        return res

    def _study_coder(self, study: Study) -> Coder | None:
        space = {n: d for n, d in IntersectionSearchSpace(include_pruned=True)
                 .calculate(study).items() if not d.single()}
        return Coder(space) if space else None
