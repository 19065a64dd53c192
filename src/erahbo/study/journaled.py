"""The journaled optimizer: every trial and run recorded before it counts, resumed exactly.

``erahbo.Optimizer(space, ..., journal=PATH)`` builds a :class:`JournaledOptimizer` (this
module registers it in :data:`erahbo.optimizer.core.JOURNALED`, so that the storage-free core
needs no storage): the journal runs the optimizer, not the other way round. Opening a journal
that holds the same study rebuilds the optimizer from its snapshot and the events after it
(:mod:`erahbo.study.opening`); a larger budget extends the study (:mod:`erahbo.study.budget`).
"""

from __future__ import annotations

import inspect
import os
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from erahbo.optimizer.core import JOURNALED, Optimizer
from erahbo.optimizer.options import Options
from erahbo.optimizer.outcomes import TrialOutcome
from erahbo.runtime.journal import Journal
from erahbo.runtime.journal_format import ReplayDivergenceError
from erahbo.runtime.main_guard import refuse_in_worker_start
from erahbo.study.opening import open_study_journal
from erahbo.study.snapshot import EVERY_S, capture, same_state, snapshot_key
from erahbo.study.snapshot import restore as restore_snapshot
from erahbo.validation import check_journal_path

if TYPE_CHECKING:
    from erahbo.optimizer.records import Trial
    from erahbo.runtime.executors import Executor

__all__ = ["JournaledOptimizer"]


class JournaledOptimizer(Optimizer):
    """An :class:`erahbo.Optimizer` whose every trial and run is journaled before it counts.

    ``erahbo.Optimizer(space, ..., journal=path)`` returns one. The journal runs the optimizer,
    not the other way round: :meth:`ask` records the optimizer's trial before handing it out,
    a tell records the outcome and then hands it to the optimizer's one ingest path
    (:meth:`erahbo.optimizer.telling.Telling.ingest_outcome`), and opening a journal that holds
    the same study rebuilds the optimizer by replaying it
    (:func:`erahbo.study.opening.open_study_journal`).

    Parameters
    ----------
    space, method, options, **option_values
        As :class:`erahbo.Optimizer`; ``failures`` defaults to ``"penalize"`` (a journaled
        study never stops on a failed run).
    journal : str or path-like
        SQLite journal of the study (:mod:`erahbo.runtime.journal`). Every asked trial and
        every told run is committed before :meth:`ask` returns / ``tell`` acknowledges it. If
        the file holds a study with the same :meth:`study_settings`, the optimizer is rebuilt
        from the journal alone (by replay) and continues where it stopped: a trial that was
        asked but not told at a crash is the next :meth:`ask`. A study with other settings is
        refused (:class:`erahbo.runtime.journal.SettingsMismatchError`); a larger budget
        extends it. Call :meth:`close` (or use ``with``) to release the journal.
    journal_info : dict, optional
        JSON facts stored in the journal that do not affect decisions (how to rebuild the
        objective: ``{"objective": "module:function"}`` or a bundled task name, executor,
        ...); read by ``erahbo resume``.
    synchronous : {"FULL", "NORMAL"}
        Journal durability: FULL (default) also survives power loss, NORMAL only crashes of
        the process (faster).
    verify : bool
        Replay every journaled event (re-decide every round) instead of starting from the
        journal's snapshot of the optimizer (:mod:`erahbo.study.snapshot`), and check that
        the replay arrives at that snapshot (``ReplayDivergenceError`` if not).
    """

    _journaled = True  # failures default to "penalize" (Optimizer.__init__)

    def __init__(
        self,
        space: Any,
        method: str = "erahbo",
        *,
        journal: str | os.PathLike[str],
        journal_info: dict[str, Any] | None = None,
        synchronous: str = "FULL",
        verify: bool = False,
        options: Options | None = None,
        **option_values: Any,
    ) -> None:
        refuse_in_worker_start()  # a worker re-importing a script without a __main__ guard
        check_journal_path(journal)
        super().__init__(space, method, options=options, **option_values)
        self._snap = (time.monotonic(), -1)  # (time, events) of the last snapshot
        self._study = open_study_journal(
            journal, self.study_settings(), self._ask, self.ingest_outcome,
            failures=self.failure_policy, info=journal_info, synchronous=synchronous,
            on_open=lambda j: setattr(self.history, "t_start", j.created_at),
            set_budget=self.set_budget, warm_returns=self._warm_ok,
            restore=None if verify else self._restore, check=self._verify if verify else None)
        self.penalizer = self._study.penalizer  # the journal's feasible returns, then the warm
        self._settings_json["budget"] = self.budget  # a larger budget extends the study

    def _restore(self, journal: Journal) -> int:
        """Load the journal's snapshot, if usable (the events it stands for; 0: none)."""
        n = restore_snapshot(self, journal)
        if n:
            self._snap = (time.monotonic(), n)
        return n

    def _verify(self, j: Journal) -> None:
        """The full replay arrived at the journal's snapshot, when one of this code stands
        for every journaled event (a study closed with nothing pending); before anything is
        written to the journal."""
        snap = j.snapshot()
        if snap is None or snap[0] != j.n_events() or snap[1] != snapshot_key(j, snap[0]):
            return
        if not same_state(self, snap[2]):
            raise ReplayDivergenceError(
                f"verify: replaying journal {j.path} re-decided its rounds differently from "
                f"its snapshot after {snap[0]} events: the code or the machine's arithmetic "
                "changed since it was written; resume without verify continues from the "
                "snapshot")

    def _snapshot(self, force: bool = False) -> None:
        """Store the optimizer in the journal when no trial is pending (every
        :data:`~erahbo.study.snapshot.EVERY_S` seconds, and when it closes)."""
        now = time.monotonic()
        if self._pending or self._study.journal.closed or (
                not force and now - self._snap[0] < EVERY_S):
            return  # (before the count of events: a tell does not query the journal for it)
        n = self.journal.n_events()
        if n == self._snap[1]:
            return
        self.journal.write_snapshot(n, snapshot_key(self.journal, n),
                                    capture(self))
        self._snap = (now, n)

    @property
    def journal(self) -> Journal:
        """The open study journal."""
        return self._study.journal

    @property
    def n_replayed(self) -> int:
        """Journaled trials re-decided (asked again) when the journal was opened: 0 when it
        resumed from a snapshot that stood for every event."""
        return self._study.replayed.n_asked

    def close(self) -> None:
        """Store a snapshot (no trial pending) and close the journal (release its lock); the
        optimizer can still report results."""
        if not self._study.journal.closed:
            self._snapshot(force=True)
        self._study.journal.close()

    def ask(self, kind: str | None = None) -> Trial | None:
        """As :meth:`erahbo.Optimizer.ask`; the trial is committed to the journal first, and
        after a resume the trials that were asked but not told before the crash are handed
        out again (same configurations, seeds). ``kind`` is refused: a resume replays the
        strategy's own round schedule."""
        if kind is not None:
            raise TypeError(
                f"ask(kind={kind!r}): a journaled study follows its strategy's round schedule "
                "(a resume replays it); ask() without kind, or an Optimizer without journal=")
        return self._study.ask()

    def _commit(self, trial: Trial, outcome: TrialOutcome, record_runs: bool) -> None:
        self._study.tell(trial, outcome, record_runs=record_runs)  # -> ingest_outcome
        self._snapshot()

    def run_trial(
        self,
        trial: Trial,
        objective: Callable[..., Any],
        *,
        executor: Executor | None = None,
        run_timeout: float | None = None,
        batch: bool = False,
    ) -> TrialOutcome:
        """Run the trial's seeds with the failure policy, journaling every run as it ends
        (:func:`erahbo.study.run_trial`; tell the result with :meth:`tell_outcome`)."""
        return self._study.evaluate(trial, objective, executor=executor,
                                    run_timeout=run_timeout, batch=batch,
                                    own=self.own_values(trial))

    def exclude(self, config_id: int) -> None:
        """Refused: a resumed study could not replay it (see the message)."""
        raise ValueError(
            "exclude: not journaled, so a resumed study could not replay it; with a "
            "journal, mark a configuration infeasible with tell(trial, returns, "
            "infeasible=True) or failures='exclude'"
        )

    def __reduce__(self) -> Any:
        raise TypeError(
            f"a journaled Optimizer cannot be pickled: it holds the open journal "
            f"{self.journal.path} (a lock and a database connection). Its journal is its saved "
            "state: reopen it with erahbo.Optimizer(..., journal=path) or erahbo.resume(path); "
            "or pickle an Optimizer built without a journal"
        )


_init = inspect.signature(JournaledOptimizer.__init__)  # not the core's (help() shows it)
JournaledOptimizer.__signature__ = _init.replace(parameters=list(_init.parameters.values())[1:])
JOURNALED.append(JournaledOptimizer)
