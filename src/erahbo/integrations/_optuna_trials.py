"""What the ERAHBO sampler reads from and writes to an Optuna study's trials.

The storage is the state that worker processes share. Each trial records, when it starts
(:meth:`ERAHBOSampler.before_trial`), a *claim*: its configuration (the key of its modelled
parameters, or None when they are drawn independently), its round kind and the seeds it may
train (system attribute ``erahbo:claim``; the seeds also as the user attribute
``erahbo_seeds``). A configuration's next trial takes the next seeds of its seed stream in the
core (:func:`erahbo.optimizer.host.seeds_for`) that none of its other trials ran (finished
trials) or may run (running ones), so two workers never train the same
``(configuration, seed)`` pair; the data are read back from the reported values, a seed
reported twice counting once (the trial with the lower number).

Which finished trials count (:func:`trial_runs`): COMPLETE, PRUNED and FAIL. A trial that
failed in the objective (the sampler's ``after_trial`` marks it ``erahbo:objective_failed``)
adds one failed run after its reported ones; a trial failed by Optuna's heartbeat
(:func:`optuna.storages.fail_stale_trials` sets the state without calling the sampler) or one
that failed before reporting anything keeps only its reported runs: a lost machine is not a
property of the hyperparameters. A trial whose objective reported steps that are not seed
indices (``erahbo:misuse``) is left out.

A finished trial that another sampler ran (no ``erahbo:phase``: a study started with TPE and
continued with ERAHBO) is read as :class:`Foreign` says, the user's explicit choice
(``ERAHBOSampler(warm_start=...)``): ``"reports"`` its reports at steps ``0 .. n-1`` as the
returns of seeds ``0 .. n-1`` (as ERAHBO's own trials write them; other steps, a learning
curve, are not seeds and give nothing), ``"values"`` its final value as one run of an unknown
seed (a negative placeholder), ``"ignore"`` nothing. :func:`foreign_reading` says why a trial
gives nothing.

A trial in the sampler's ``after_trial`` is still running in the storage (Optuna stores its
state after the hook). It marks itself finishing (``erahbo:finishing``, with the state it gets)
first, so that a worker whose trial finishes at the same time counts its runs
(:meth:`TrialIndex.finishing`) as they will count once its state is stored.
"""

from __future__ import annotations

import bisect
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from optuna.study import Study
from optuna.trial import FrozenTrial, TrialState

from erahbo.integrations._optuna_space import Coder

__all__ = [
    "AS_REPORTS",
    "CLAIM",
    "FINISHED",
    "FINISHING",
    "FOREIGN_MODES",
    "MISUSE",
    "OBJECTIVE_FAILED",
    "PHASE",
    "ROUND_PHASES",
    "SEEDS",
    "SEED_OFFSET",
    "Foreign",
    "TrialIndex",
    "claim_of",
    "foreign_reading",
    "is_own",
    "study_records",
    "trial_key",
    "trial_runs",
    "used_seeds",
    "write_attrs",
    "write_live_attrs",
]

SEEDS = "erahbo_seeds"  # user attribute: the seeds this trial may train, in order
SEED_OFFSET = "erahbo_seed_offset"  # user attribute: its first seed
# trial system attributes; each names its trial (a retried trial copies its original's)
CLAIM = "erahbo:claim"  # {"trial", "config" (key or None), "kind", "seeds", "params", "space",
#                         "settled"}: see erahbo.integrations._optuna_claims
OBJECTIVE_FAILED = "erahbo:objective_failed"  # the trial number: it failed in the objective
MISUSE = "erahbo:misuse"  # {"trial", "steps"}: steps that are not seed indices
FINISHING = "erahbo:finishing"  # {"trial", "state"}: in after_trial, its state not stored yet
FINISHED = (TrialState.COMPLETE, TrialState.PRUNED, TrialState.FAIL)
ROUND_PHASES = ("random", "challenger", "bo")  # claim kinds that count as BO rounds
PHASE = "erahbo:phase"  # init, given, random, challenger, bo; every trial ERAHBO started has one
FOREIGN_MODES = ("reports", "values", "ignore")  # how trials of other samplers are read


@dataclass(frozen=True)
class Foreign:
    """How finished trials of other samplers are read (module docstring).

    Parameters
    ----------
    mode : {"reports", "values", "ignore"}
        (Reports keyed by (seed, training step), the learning-curve issue's, would be one more
        mode: a trial's steps then say which seed and how far it trained.)
    most : int or None
        ``"reports"``: the most steps a trial may have to be read as seeds (None: no bound).
    """

    mode: str = "reports"
    most: int | None = None


AS_REPORTS = Foreign()  # reports at steps 0 .. n-1 as seeds 0 .. n-1, without a bound


def is_own(trial: FrozenTrial) -> bool:
    """Whether an ERAHBO sampler started the trial (or a retry copied such a trial's marks)."""
    return PHASE in trial.system_attrs or CLAIM in trial.system_attrs


def foreign_reading(trial: FrozenTrial, foreign: Foreign
                    ) -> tuple[list[int], list[float | None], str | None]:
    """The seeds and runs a finished trial of another sampler gives, and why it gives none
    (None: it gives some)."""
    steps = sorted(trial.intermediate_values)
    if foreign.mode == "ignore":
        return [], [], "warm_start='ignore'"
    if foreign.mode == "values":
        v = trial.values[0] if trial.values else None
        if trial.state != TrialState.COMPLETE or v is None or not math.isfinite(v):
            what = {TrialState.PRUNED: "pruned (its value is a partial result)",
                    TrialState.FAIL: "failed (no value)"}.get(trial.state, "no final value")
            return [], [], what
        return [-1 - trial.number], [float(v)], None
    if not steps:
        return [], [], "no report"
    if steps != list(range(len(steps))):
        return [], [], (f"steps {_steps_text(steps)} are not seed indices 0, 1, ... (a "
                        "learning curve?)")
    if foreign.most is not None and len(steps) > foreign.most:
        return [], [], (f"steps {_steps_text(steps)}: more than the {foreign.most} seeds a "
                        "trial has (a learning curve?)")
    vals = [trial.intermediate_values[s] for s in steps]
    return list(steps), [v if math.isfinite(v) else None for v in vals], None


def _steps_text(steps: list[int]) -> str:
    if len(steps) > 3 and steps == list(range(steps[0], steps[-1] + 1)):
        return f"{steps[0]}..{steps[-1]}"
    return f"{steps[:4]}"[:-1] + (", ...]" if len(steps) > 4 else "]")


def claim_of(trial: FrozenTrial) -> dict[str, Any] | None:
    """The trial's own claim (None: none yet, or one copied from another trial by a retry)."""
    claim = trial.system_attrs.get(CLAIM)
    return claim if isinstance(claim, dict) and claim.get("trial") == trial.number else None


def _reported(trial: FrozenTrial, n: int | None) -> list[float]:
    """Reported values in step order (steps ``0 .. n-1`` only; all when ``n`` is None)."""
    return [v for s, v in sorted(trial.intermediate_values.items()) if n is None or s < n]


def trial_runs(trial: FrozenTrial, state: TrialState | None = None,
               failed_in_objective: bool | None = None,
               foreign: Foreign = AS_REPORTS) -> tuple[list[int], list[float | None]]:
    """The seeds and the runs (None: a failed run) a finished trial adds to the data.

    ``state`` and ``failed_in_objective`` override the stored ones (the sampler's
    ``after_trial`` runs before Optuna stores them). An ERAHBO trial without a claim (an older
    study) counts its reported steps as seeds ``0, 1, ...``; a trial of another sampler is
    read as ``foreign`` says (:func:`foreign_reading`).
    """
    if not is_own(trial):
        return foreign_reading(trial, foreign)[:2]
    if trial.system_attrs.get(MISUSE, {}).get("trial") == trial.number:
        return [], []
    claim = claim_of(trial)
    seeds = list(claim["seeds"]) if claim else None
    vals = _reported(trial, None if seeds is None else len(seeds))
    seeds = seeds if seeds is not None else list(range(len(vals)))
    runs: list[float | None] = [v if math.isfinite(v) else None for v in vals]
    state = trial.state if state is None else state
    if failed_in_objective is None:
        failed_in_objective = trial.system_attrs.get(OBJECTIVE_FAILED) == trial.number
    if state == TrialState.FAIL and failed_in_objective and runs and len(runs) < len(seeds):
        runs.append(None)  # the seed that raised (a failed seed is a failed run)
    return seeds[: len(runs)], runs


def trial_key(trial: FrozenTrial, coder: Coder | None,
              cache: dict[tuple[str, int], str | None] | None = None) -> str | None:
    """The configuration key of a trial: of its parameters once it has them all, else of its
    claim (None: not known yet). ``cache`` keeps the keys of finished trials."""
    done = cache is not None and coder is not None and trial.state in FINISHED
    if done and (coder.key, trial.number) in cache:
        return cache[coder.key, trial.number]
    if coder is not None and coder.covers(trial.params):
        key = coder.key_of(trial.params)
    else:
        claim = claim_of(trial)
        key = None if claim is None else claim.get("config")
    if done:
        cache[coder.key, trial.number] = key
    return key


def used_seeds(trials: Iterable[FrozenTrial], key: str, number: int, coder: Coder | None,
               cache: dict[tuple[str, int], str | None] | None = None,
               foreign: Foreign = AS_REPORTS) -> set[int]:
    """Seeds of configuration ``key`` that trials other than ``number`` ran or may run."""
    used: set[int] = set()
    for t in trials:
        if t.number == number or trial_key(t, coder, cache) != key:
            continue
        if t.state == TrialState.RUNNING and claim_of(t) is not None:
            used.update(claim_of(t)["seeds"])
        elif t.state in FINISHED:
            used.update(_used_by(t, claim_of(t), trial_runs(t, foreign=foreign)[0]))
    return used


def _used_by(t: FrozenTrial, claim: dict[str, Any] | None, seeds: list[int]) -> list[int]:
    """The seeds a finished trial ran or reported: its claim's, as far as it got; without a
    claim (an older study, a trial added by hand) its reported steps, seeds ``0, 1, ...``
    (``seeds``: :func:`trial_runs`'), as its data counts them."""
    if claim is None:
        return list(seeds)
    return list(claim["seeds"][: max(len(seeds), len(t.intermediate_values))])


@dataclass
class _Finished:
    """What a finished trial adds, read once (a finished trial never changes)."""

    trial: FrozenTrial
    claim: dict[str, Any] | None
    seeds: list[int]  # the seeds of ``runs``
    runs: list[float | None]  # trial_runs
    used: list[int]  # the seeds it ran or reported (_used_by)


class TrialIndex:
    """The study's trials as the sampler reads them, kept between calls.

    :meth:`update` reads each trial once it is finished (claim, runs, the seeds it used) and
    keeps the running ones of the last read, so that the questions the sampler asks at every
    trial (rounds so far, runs reported, seeds a configuration used) cost the running trials
    and the new finished ones, not the whole study. It starts over for another study.
    """

    def __init__(self, foreign: Foreign = AS_REPORTS) -> None:
        self.study: str | None = None
        self.foreign = foreign  # how trials of other samplers are read
        self.epoch = 0  # counts the starts over (a holder of derived state compares it)
        self._clear()

    def read_foreign(self, foreign: Foreign) -> None:
        """Read the trials of other samplers as ``foreign`` says (starts over if it changed)."""
        if foreign != self.foreign:
            self.foreign, self.study = foreign, None  # the next update starts over

    def _clear(self) -> None:
        self.done: dict[int, _Finished] = {}  # finished trial number -> what it adds
        self.order: list[int] = []  # finished trial numbers, in the order read
        self.running: list[FrozenTrial] = []  # as of the last update
        self.others: list[int] = []  # finished trials of other samplers
        self._rounds: list[int] = []  # sorted numbers of finished trials claimed as BO rounds
        self._reported = 0  # values reported by the finished trials
        self._coders: dict[str, Coder] = {}  # space key -> coder, for ...
        self._used: dict[str, dict[str, dict[int, list[int]]]] = {}  # ... space key ->
        # configuration key -> finished trial number -> its used seeds

    def update(self, study_name: str, trials: Sequence[FrozenTrial]) -> None:
        """Read the trials new since the last call (``study.get_trials(deepcopy=False)``)."""
        if study_name != self.study:
            self.study, self.epoch = study_name, self.epoch + 1
            self._clear()
        running = []
        for t in trials:
            if t.number in self.done:
                continue
            if t.state in FINISHED:
                self._add(t)
            elif t.state == TrialState.RUNNING:
                running.append(t)
        self.running = running

    def _add(self, t: FrozenTrial) -> None:
        claim = claim_of(t)
        seeds, runs = trial_runs(t, foreign=self.foreign)
        if not is_own(t):
            self.others.append(t.number)
        d = self.done[t.number] = _Finished(t, claim, seeds, runs, _used_by(t, claim, seeds))
        self.order.append(t.number)
        self._reported += len(t.intermediate_values) if is_own(t) else len(runs)
        if claim is not None and claim.get("kind") in ROUND_PHASES:
            bisect.insort(self._rounds, t.number)
        for space, by_config in self._used.items():
            self._file(by_config, self._coders[space], d)

    @staticmethod
    def _file(by_config: dict[str, dict[int, list[int]]], coder: Coder, d: _Finished) -> None:
        key = trial_key(d.trial, coder)
        if key is not None and d.used:
            by_config.setdefault(key, {})[d.trial.number] = d.used

    def rounds_before(self, number: int) -> int:
        """Trials numbered below ``number`` claimed as BO rounds (random, challenger, bo)."""
        return bisect.bisect_left(self._rounds, number) + sum(
            1 for t in self.running
            if t.number < number and (claim_of(t) or {}).get("kind") in ROUND_PHASES)

    def reported(self) -> int:
        """Values reported so far by the finished and the running trials."""
        return self._reported + sum(len(t.intermediate_values) for t in self.running)

    def finishing(self) -> dict[int, tuple[FrozenTrial, list[int], list[float | None]]]:
        """The running trials of the last read that mark themselves finishing: number ->
        (trial, seeds, runs), the runs they add once their state is stored."""
        out = {}
        for t in self.running:
            mark = t.system_attrs.get(FINISHING)
            if isinstance(mark, dict) and mark.get("trial") == t.number:
                out[t.number] = (t, *trial_runs(t, TrialState[mark["state"]],
                                                 foreign=self.foreign))
        return out

    def rivals(self, key: str, number: int, coder: Coder | None
               ) -> tuple[set[int], list[tuple[FrozenTrial, dict[str, Any]]]]:
        """The trials of configuration ``key`` other than ``number``: the seeds the finished
        ones used, and the running ones with their claims."""
        running = [(t, claim_of(t)) for t in self.running if t.number != number]
        return self._done_seeds(key, number, coder, None), [
            (t, c) for t, c in running if c is not None and trial_key(t, coder) == key]

    def used_seeds(self, key: str, number: int, coder: Coder | None,
                   below: int | None = None) -> set[int]:
        """As :func:`used_seeds` over the read trials (``below``: trials numbered below it)."""
        used = self._done_seeds(key, number, coder, below)
        for t in self.running:
            claim = claim_of(t)
            if (t.number != number and claim is not None and (below is None or t.number < below)
                    and trial_key(t, coder) == key):
                used.update(claim["seeds"])
        return used

    def _done_seeds(self, key: str, number: int, coder: Coder | None,
                    below: int | None) -> set[int]:
        """Seeds of configuration ``key`` that finished trials other than ``number`` used."""
        used: set[int] = set()
        if coder is not None:
            by_config = self._used.get(coder.key)
            if by_config is None:
                by_config = self._used[coder.key] = {}
                self._coders[coder.key] = coder
                for d in self.done.values():
                    self._file(by_config, coder, d)
            for n, seeds in by_config.get(key, {}).items():
                if n != number and (below is None or n < below):
                    used.update(seeds)
        else:  # no modelled space: configurations known by their claims only
            used = used_seeds((d.trial for d in self.done.values()
                               if below is None or d.trial.number < below), key, number, None,
                              foreign=self.foreign)
        return used


def study_records(
    trials: Iterable[FrozenTrial], coder: Coder,
    extra: dict[int, tuple[FrozenTrial, list[int], list[float | None]]] | None = None,
    sign: float = 1.0,
    min_runs: int = 2,
    foreign: Foreign = AS_REPORTS,
) -> tuple[list[dict[str, Any]], dict[str, int], dict[int, tuple[Any, ...]]]:
    """The finished trials' runs as warm-start records, pooled by configuration.

    Parameters
    ----------
    trials : iterable of FrozenTrial
        The study's trials (only finished ones with runs count).
    coder : Coder
        The modelled search space.
    extra : dict, optional
        Trials finishing now (number -> (trial, seeds, runs)), not yet finished in storage.
    sign : float
        -1 for a minimizing study: the records hold returns to maximize.
    min_runs : int
        Runs a configuration needs to be a record (2: a sample variance; 1 with one seed
        first, :mod:`erahbo.gp.one_seed`).
    foreign : Foreign
        How the trials of other samplers are read.

    Returns
    -------
    records : list of dict
        ``{"config", "returns", "seeds"}`` per configuration with at least ``min_runs`` runs,
        in order of its first trial; a seed reported twice counts once (the lower trial number's).
    first : dict of str to int
        Configuration key -> number of its first trial.
    signatures : dict of int to tuple
        Trial number -> the runs it contributed (what :class:`erahbo.integrations.
        _optuna_engine.Engine` compares to see new data).
    """
    rows: dict[int, tuple[FrozenTrial, list[int], list[float | None]]] = {}
    for t in trials:
        if t.state in FINISHED:
            seeds, runs = trial_runs(t, foreign=foreign)
            if runs:
                rows[t.number] = (t, seeds, runs)
    rows.update(extra or {})
    pooled: dict[str, dict[str, Any]] = {}
    first: dict[str, int] = {}
    sigs: dict[int, tuple[Any, ...]] = {}
    for number in sorted(rows):
        t, seeds, runs = rows[number]
        if not runs or not coder.covers(t.params):
            continue
        sigs[number] = tuple(runs)
        cfg = coder.to_erahbo(t.params)
        key = coder.key_of(t.params)
        first.setdefault(key, number)
        rec = pooled.setdefault(key, {"config": cfg, "returns": [], "seeds": []})
        for seed, v in zip(seeds, runs, strict=True):
            if seed not in rec["seeds"]:
                rec["seeds"].append(int(seed))
                rec["returns"].append(None if v is None else sign * v)
    return [r for r in pooled.values() if len(r["returns"]) >= min_runs], first, sigs


def _trial_id(trial: Any) -> int:
    """The storage's id of a trial (a FrozenTrial or a live Trial). Optuna's private API, as
    its own samplers use it: a sampler has no public way to annotate the trial it samples."""
    return trial._trial_id


def write_attrs(study: Study, trial: FrozenTrial, *, user: dict[str, Any] | None = None,
                system: dict[str, Any] | None = None) -> None:
    """Store attributes of a running trial, and in the frozen copy Optuna's Trial reads.

    Writes through Optuna's private API (``study._storage`` and :func:`_trial_id`), the way
    Optuna's own samplers annotate the trial they sample (there is no public way).
    """
    storage, tid = study._storage, _trial_id(trial)
    for k, v in (user or {}).items():
        storage.set_trial_user_attr(tid, k, v)
        trial.set_user_attr(k, v)
    for k, v in (system or {}).items():
        storage.set_trial_system_attr(tid, k, v)
        trial.system_attrs[k] = v


def write_live_attrs(trial: Any, *, user: dict[str, Any], system: dict[str, Any]) -> None:
    """Store attributes of a running trial from the objective's side (a live ``Trial``):
    user attributes through its public ``set_user_attr``, system ones through its public
    ``storage`` (and :func:`_trial_id`)."""
    for k, v in user.items():
        trial.set_user_attr(k, v)
    for k, v in system.items():
        trial.storage.set_trial_system_attr(_trial_id(trial), k, v)
