"""Journaled studies: exact resume by replay, and the journaled ask/evaluate/tell loop.

This module drives an optimizer *through* a :class:`erahbo.runtime.journal.Journal`; the journal
itself (SQLite storage, schema, writers, readers, errors) lives in :mod:`erahbo.runtime.journal`.

Resume is *exact* by replay: the optimizer is deterministic given its settings and the
sequence of results told to it, so a fresh optimizer built with the same settings is driven
through the journaled events (``ask`` -> check it asks the same trial, ``tell`` -> feed the
journaled returns) instead of calling the objective (:func:`replay`). It then continues exactly
where the interrupted study stood. Runs that were in flight at the crash (started, no result)
are marked ``interrupted`` and re-run with the same seed (``rerun=1``); they are never counted
twice (a unique index allows one counted run per seed slot).

Public API
----------
:func:`replay`
    Drive a fresh optimizer through the journaled asks and tells (:class:`ReplayResult`);
    raises :class:`erahbo.runtime.journal.ReplayDivergenceError` if it asks something else.
:class:`JournaledStudy`
    Wraps an ask/tell optimizer so that every trial, run and tell is journaled, and replays
    the journal on construction (resume).
:class:`Recorder`
    What the journal needs from an optimizer that journals itself (its unjournaled ask and
    whole-outcome tell).

The journaled loop for any ask/tell optimizer is :func:`erahbo.study.run.run_journaled`.
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from erahbo import __version__
from erahbo.optimizer.failure import FailurePolicy, Penalizer
from erahbo.optimizer.outcomes import RunOutcome, TrialOutcome, outcomes_from_returns
from erahbo.runtime.evaluate import evaluate
from erahbo.runtime.journal import Journal, journal_version
from erahbo.runtime.journal_format import (
    ReplayDivergenceError,
    TrialRecord,
    canonical_json,
    plain_json,
)

if TYPE_CHECKING:
    from erahbo.runtime.executors import Executor

__all__ = [
    "JournaledStudy",
    "Recorder",
    "ReplayResult",
    "replay",
]


# --------------------------------------------------------------------------------------------
# Replay
# --------------------------------------------------------------------------------------------


@dataclass
class ReplayResult:
    """What :func:`replay` did.

    Attributes
    ----------
    n_asked, n_told : int
        Journaled asks and tells replayed.
    pending : list of (trial, TrialRecord)
        Trials re-asked but not told in the journal (the study crashed while running them):
        the caller finishes them (runs recorded in the record are kept) and tells them.
    """

    n_asked: int = 0
    n_told: int = 0
    pending: list[tuple[Any, TrialRecord]] = field(default_factory=list)


@runtime_checkable
class Recorder(Protocol):
    """What the journal needs from an optimizer that keeps a per-run history.

    ``ask()`` hands out the next trial without journaling it, ``tell_outcome(trial, outcome)``
    takes the whole :class:`~erahbo.optimizer.outcomes.TrialOutcome` (runs with their statuses). The
    journal calls nothing else, and nothing private.
    """

    def ask(self) -> Any: ...

    def tell_outcome(self, trial: Any, outcome: TrialOutcome) -> None: ...


def _outcome_of(rec: TrialRecord) -> TrialOutcome:
    """The :class:`TrialOutcome` a told trial's record stands for (runs of a crash left out)."""
    assert rec.returns is not None
    runs = [
        RunOutcome(
            slot=r.slot,
            seed=r.seed,
            attempt=r.attempt,
            status=r.status,
            raw=r.raw,
            value_used=r.value_used,
            error=r.error,
            start=r.start,
            end=r.end,
            worker=r.worker,
            rerun=r.rerun,
        )
        for r in rec.runs
        if r.status not in ("running", "interrupted")
    ]
    raw = [math.nan] * len(rec.returns)
    for r in runs:
        if r.status == "ok" and r.slot < len(raw):
            raw[r.slot] = r.raw
    return TrialOutcome(runs=runs, returns=list(rec.returns), raw=raw, excluded=rec.excluded)


def _default_tell(opt: Any, trial: Any, returns: list[float], excluded: bool) -> None:
    if excluded:
        opt.tell(trial, returns, infeasible=True)
    else:
        opt.tell(trial, returns)


def _trial_key(trial: Any) -> tuple[Any, list[int], str]:
    cid = getattr(trial, "config_id", None)
    cid = None if cid is None else plain_json(cid, "trial.config_id")
    if isinstance(cid, list | dict):
        cid = canonical_json(cid)
    seeds = [int(s) for s in trial.seeds]
    return cid, seeds, canonical_json(trial.config, "trial.config")


def replay(
    opt: Any,
    journal: Journal,
    *,
    tell: Callable[[Any, Any, list[float], bool], None] | None = None,
    check_config: bool = True,
    start: int = 0,
) -> ReplayResult:
    """Drive a fresh optimizer through the journaled asks and tells, without running anything.

    For every ``ask`` event the optimizer is asked for a trial, which must match the journaled
    one (config id, seeds and, with ``check_config``, the configuration itself); for every
    ``tell`` event it is told the journaled returns, exactly as in the original study.

    Parameters
    ----------
    opt : object
        Any object with ``ask() -> trial`` (``trial.config``, ``trial.seeds`` and optionally
        ``trial.config_id``) and ``tell(trial, returns, infeasible=False)``; or a recorder
        (:class:`Recorder`) whose ``tell_outcome(trial, outcome)`` receives the whole
        journaled :class:`~erahbo.optimizer.outcomes.TrialOutcome` (runs with their statuses,
        errors, workers), for an optimizer that keeps a per-run history.
    journal : Journal
    tell : callable, optional
        ``tell(opt, trial, returns, excluded)``; default calls ``opt.tell(trial, returns)``, and
        ``opt.tell(trial, returns, infeasible=True)`` for an excluded configuration (not used
        for a recorder).
    check_config : bool
        Also compare the configurations (exact canonical JSON).
    start : int
        Replay from this event on: ``opt`` holds the state after the first ``start`` events
        (a snapshot, :mod:`erahbo.study.snapshot`), with no trial pending.

    Returns
    -------
    ReplayResult

    Raises
    ------
    ReplayDivergenceError
        The optimizer asked something else than the journal holds.
    """
    do_ask = opt.ask
    do_tell = tell if tell is not None else _default_tell
    tell_outcome = getattr(opt, "tell_outcome", None) if isinstance(opt, Recorder) else None
    records = {t.trial_id: t for t in journal.trials()}
    live: dict[int, Any] = {}
    result = ReplayResult()
    for kind, tid in journal.events()[start:]:
        rec = records[tid]
        if kind == "ask":
            trial = do_ask()
            _check_same(journal, rec, trial, check_config, result.n_asked)
            live[tid] = trial
            result.n_asked += 1
        else:
            trial = live.pop(tid)
            assert rec.returns is not None
            if tell_outcome is not None:
                tell_outcome(trial, _outcome_of(rec))
            else:
                do_tell(opt, trial, list(rec.returns), rec.excluded)
            result.n_told += 1
    result.pending = [(live[tid], records[tid]) for tid in sorted(live)]
    return result


def _check_same(journal: Journal, rec: TrialRecord, trial: Any, check_config: bool, i: int) -> None:
    def fail(what: str) -> ReplayDivergenceError:
        return ReplayDivergenceError(
            f"replay of journal {journal.path} diverged at ask #{i} (trial {rec.trial_id}, "
            f"round {rec.round}): {what}. The optimizer must be deterministic given its "
            f"settings and the returns told to it; this happens if the code changed since the "
            f"journal was written (journal: erahbo {journal_version(journal)}, now: "
            f"{__version__}) or the settings do not capture everything that drives decisions. "
            "Resume with the same erahbo version, or start a new journal."
        )

    if trial is None:
        raise fail("the optimizer asked for nothing (budget exhausted?) but the journal holds one")
    cid, seeds, cfg = _trial_key(trial)
    want_cid = rec.config_id
    if cid != want_cid:
        raise fail(f"it asked config_id={cid!r}, the journal holds config_id={want_cid!r}")
    if seeds != list(rec.seeds):
        raise fail(f"it asked seeds {seeds}, the journal holds seeds {rec.seeds}")
    if check_config and cfg != canonical_json(rec.config):
        raise fail(f"it asked config {cfg}, the journal holds {canonical_json(rec.config)}")


# --------------------------------------------------------------------------------------------
# A journaled study: ask/tell with recording and resume
# --------------------------------------------------------------------------------------------


class JournaledStudy:
    """Wraps an ask/tell optimizer so that everything is journaled and resumable.

    On construction, the optimizer is replayed through the journal and, once the replay
    succeeded, runs in flight at a crash are marked ``interrupted`` (a replay that fails leaves
    the file as it was). Then :meth:`ask` first hands back the trials that were pending at the
    crash (re-asked by the replay), and :meth:`evaluate` finishes them, keeping their finished
    runs and re-running interrupted ones with the same seeds.

    Parameters
    ----------
    optimizer : object
        Fresh optimizer with ``ask()`` and ``tell(trial, returns, infeasible=False)``, built
        with the journal's settings; or a :class:`Recorder` (an optimizer that journals
        itself hands over its unjournaled ask and whole-outcome tell this way, e.g.
        :class:`erahbo.study.opening.StudyRecorder`).
    journal : Journal
    failures : {"penalize", "retry", "exclude"} or FailurePolicy
    retries : int, optional
    tell : callable, optional
        The tell adapter ``tell(opt, trial, returns, excluded)`` (not used for a recorder).
    check_config, start : bool, int
        See :func:`replay`.
    check : callable, optional
        ``check(journal)`` after the replay, before anything is written: raise to refuse the
        journal (e.g. a replay that does not arrive at a stored state).

    Examples
    --------
    >>> journal = Journal.open("study.db", settings)              # doctest: +SKIP
    >>> study = JournaledStudy(make_optimizer(settings), journal)  # doctest: +SKIP
    >>> run_journaled(study, objective, budget=400)                # doctest: +SKIP
    """

    def __init__(
        self,
        optimizer: Any,
        journal: Journal,
        *,
        failures: str | FailurePolicy = "penalize",
        retries: int | None = None,
        tell: Callable[[Any, Any, list[float], bool], None] | None = None,
        check_config: bool = True,
        start: int = 0,
        check: Callable[[Journal], None] | None = None,
    ) -> None:
        self.optimizer = optimizer
        self.journal = journal
        self.policy = FailurePolicy.coerce(failures, retries)
        self._tell = tell if tell is not None else _default_tell
        self._recorder = optimizer if isinstance(optimizer, Recorder) else None
        self.replayed = replay(optimizer, journal, tell=self._tell, check_config=check_config,
                               start=start)  # reads only: a divergence leaves the file alone
        if check is not None:
            check(journal)
        self.interrupted = journal.mark_interrupted()
        self.penalizer = Penalizer(journal.feasible_returns(), journal.outlying_returns())
        self._pending: deque[tuple[Any, TrialRecord]] = deque(self.replayed.pending)
        self._open: dict[int, tuple[Any, int]] = {}

    @property
    def has_pending(self) -> bool:
        """Trials from before a crash still to be finished."""
        return bool(self._pending)

    def _trial_id(self, trial: Any) -> int:
        try:
            return self._open[id(trial)][1]
        except KeyError:
            raise ValueError(
                "this trial was not asked through this study (or was already told)"
            ) from None

    def ask(self) -> Any:
        """Next trial: a pending one from before a crash, else a new one from the optimizer.

        The trial is journaled before it is returned. Returns None if the optimizer does.
        """
        if self._pending:
            trial, rec = self._pending.popleft()
            self._open[id(trial)] = (trial, rec.trial_id)
            return trial
        trial = self.optimizer.ask()
        if trial is None:
            return None
        tid = self.journal.record_trial(
            trial.config,
            trial.seeds,
            config_id=getattr(trial, "config_id", None),
            round=getattr(trial, "round", None),
        )
        self._open[id(trial)] = (trial, tid)
        return trial

    def evaluate(
        self,
        trial: Any,
        objective: Callable[..., Any],
        *,
        executor: Executor | None = None,
        run_timeout: float | None = None,
        batch: bool | None = None,
        own: Sequence[float] = (),
    ) -> TrialOutcome:
        """Run the trial's seeds (:func:`erahbo.runtime.evaluate.evaluate`), journaling each run
        (``own``: the values its configuration counted before, which bound a penalty)."""
        tid = self._trial_id(trial)
        return evaluate(
            objective,
            trial.config,
            trial.seeds,
            self.policy,
            run_timeout=run_timeout,
            executor=executor,
            penalizer=self.penalizer,
            recorder=self.journal.recorder(tid),
            batch=batch,
            prior=self.journal.runs(tid),
            own=own,
        )

    def tell(
        self,
        trial: Any,
        result: TrialOutcome | Sequence[float],
        *,
        record_runs: bool | None = None,
        infeasible: bool = False,
    ) -> TrialOutcome:
        """Journal the result, then tell the optimizer.

        Parameters
        ----------
        trial : object
            From :meth:`ask`.
        result : TrialOutcome or sequence of float
            From :meth:`evaluate`, or the returns the user obtained for ``trial.seeds``
            (ask/tell mode; non-finite ones are failures handled by the policy). Fewer returns
            than seeds: the first seeds ran, the others are not counted.
        record_runs : bool, optional
            Insert ``result.runs`` into the journal with the tell (runs the user ran, not yet
            journaled). Default: False for a TrialOutcome (:meth:`evaluate` journaled its runs),
            True for a sequence.
        infeasible : bool
            Sequence form only: the user declares the configuration infeasible
            (see :func:`erahbo.optimizer.outcomes.outcomes_from_returns`).

        Returns
        -------
        TrialOutcome
        """
        tid = self._trial_id(trial)
        if isinstance(result, TrialOutcome):
            outcome = result
            record = bool(record_runs)
        else:
            values = list(result)
            if len(values) > len(trial.seeds):
                raise ValueError(
                    f"tell got {len(values)} returns for a trial with {len(trial.seeds)} seeds; "
                    "pass one return per seed of trial.seeds, in order"
                )
            outcome = outcomes_from_returns(
                trial.seeds[: len(values)],
                values,
                self.policy,
                penalizer=self.penalizer,
                infeasible=infeasible,
            )
            record = True if record_runs is None else record_runs
        self.journal.record_tell(tid, outcome, record_runs=record)
        self.penalizer.observe_runs(outcome.runs)
        del self._open[id(trial)]
        if self._recorder is not None:
            self._recorder.tell_outcome(trial, outcome)
        else:
            self._tell(self.optimizer, trial, list(outcome.returns), outcome.excluded)
        return outcome
