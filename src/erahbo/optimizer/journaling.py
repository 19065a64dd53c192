"""How an optimizer is journaled: the small recorder the journal talks to, and the opening.

The journal (:mod:`erahbo.runtime.journal`, :mod:`erahbo.runtime.replay`) sees an optimizer
only through a :class:`StudyRecorder`: its unjournaled ask and its whole-outcome tell. Opening
a study's journal replays every journaled event through the recorder (exact resume) and hands
back the :class:`~erahbo.runtime.replay.JournaledStudy` that the optimizer's public ask and tell
go through from then on.

More budget for a journaled study (a finished or a running one), replayed exactly: opening
its journal with the same settings but a larger budget does not start another study; the
journal records the extension as a *budget step* (:meth:`Journal.extend_budget`: from event
``n`` on, the budget is ``B``), the optimizer replays the journaled events with the budget each
of them was decided under (:class:`BudgetSteps`), then continues with more rounds. A later
resume replays the same steps (Optuna's analogue: ``study.optimize`` again on a loaded study).
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import replace as replace_options
from typing import TYPE_CHECKING, Any

from erahbo.optimizer.core import JOURNALED, Optimizer
from erahbo.optimizer.options import Options, normalize_settings
from erahbo.optimizer.snapshot import EVERY_S, capture, same_state, snapshot_key
from erahbo.optimizer.snapshot import restore as restore_snapshot
from erahbo.runtime.failures import FailurePolicy, TrialOutcome
from erahbo.runtime.journal import Journal, SettingsMismatchError, canonical_json
from erahbo.runtime.journal_format import ReplayDivergenceError
from erahbo.runtime.main_guard import refuse_in_worker_start
from erahbo.runtime.replay import JournaledStudy, replay
from erahbo.validation import check_journal_path

if TYPE_CHECKING:
    from erahbo.optimizer.records import Trial
    from erahbo.runtime.executors import Executor

__all__ = [
    "BudgetSteps",
    "JournaledOptimizer",
    "StudyRecorder",
    "open_budget_journal",
    "open_study_journal",
    "replay_into",
]


class StudyRecorder:
    """What the journal sees of an optimizer: its unjournaled ask and whole-outcome tell.

    An :class:`erahbo.runtime.replay.Recorder`; the optimizer hands over its two inner methods.

    Parameters
    ----------
    ask : callable
        ``ask() -> trial or None``, not journaled.
    tell_outcome : callable
        ``tell_outcome(trial, outcome)`` with the whole :class:`TrialOutcome`, not journaled.
    """

    def __init__(self, ask: Callable[[], Any],
                 tell_outcome: Callable[[Any, TrialOutcome], None]) -> None:
        self._ask, self._tell_outcome = ask, tell_outcome

    def ask(self) -> Any:
        """The optimizer's next trial, not journaled."""
        return self._ask()

    def tell_outcome(self, trial: Any, outcome: TrialOutcome) -> None:
        """Tell a whole trial outcome (runs with their statuses), not journaled."""
        self._tell_outcome(trial, outcome)


def _without_budget(settings: Mapping[str, Any]) -> str:
    """The settings, in the current schema, less the budget (which a resume may extend)."""
    return canonical_json({k: v for k, v in normalize_settings(dict(settings)).items()
                           if k != "budget"}, "settings")


def open_budget_journal(
    path: Any, settings: Mapping[str, Any], info: Mapping[str, Any] | None, synchronous: str
) -> tuple[Journal, int | None]:
    """Open the study's journal; allow a budget other than the journaled one, and settings
    of an older schema that say the same (:func:`~erahbo.optimizer.options.normalize_settings`).

    Returns
    -------
    journal : Journal
        Opened with its own settings when only the budget differs.
    budget : int or None
        The budget to extend the study to after the replay (None: no extension, the
        requested budget is not larger than the study's).

    Raises
    ------
    SettingsMismatchError
        Other settings than the budget differ (the message lists them).
    """
    try:
        journal = Journal.open(path, settings, info=info, synchronous=synchronous)
    except SettingsMismatchError:
        with Journal.open(path) as j:
            stored = dict(j.settings)
        if (stored.get("budget") is None) != (settings.get("budget") is None) or (
                _without_budget(stored) != _without_budget(settings)):
            raise
        journal = Journal.open(path, stored, info=info, synchronous=synchronous)
        now = journal.budget()
        if now is not None and settings["budget"] < now:
            journal.close()
            raise ValueError(
                f"budget={settings['budget']}: journal {journal.path} holds this study with a "
                f"budget of {now} runs (extended); pass budget={now} or more (a study can be "
                "given more budget, not less), or use another journal path for a new study"
            ) from None
    want = settings.get("budget")
    now = journal.budget()
    return journal, (int(want) if want is not None and now is not None and want > now else None)


class BudgetSteps:
    """Sets the optimizer's budget (``set_budget``) at the journaled budget steps while events
    are replayed.

    Wraps the optimizer's ask and tell: every event (a trial asked, a trial told) counts one,
    as the journal counts them, and before the event with index ``n`` of a step ``(n, B)`` the
    budget becomes ``B``.
    """

    def __init__(self, set_budget: Callable[[int | None], None], journal: Journal,
                 start: int = 0) -> None:
        self.set_budget = set_budget
        self.steps = dict(journal.budget_steps())
        self.n = start  # events before it are in the optimizer already (a snapshot)
        before = [b for n, b in sorted(self.steps.items()) if n < start]
        set_budget(before[-1] if before else journal.settings.get("budget"))  # in force now

    def _event(self) -> None:
        b = self.steps.get(self.n)
        if b is not None:
            self.set_budget(int(b))

    def ask(self, ask: Callable[[], Any]) -> Callable[[], Any]:
        def wrapped() -> Any:
            self._event()
            trial = ask()
            if trial is not None:  # asked nothing: no event in the journal
                self.n += 1
            return trial

        return wrapped

    def tell(self, tell: Callable[..., None]) -> Callable[..., None]:
        def wrapped(*args: Any) -> None:
            self._event()
            self.n += 1
            tell(*args)

        return wrapped


def open_study_journal(
    path: str | os.PathLike[str],
    settings: dict[str, Any],
    ask: Callable[[], Any],
    tell_outcome: Callable[[Any, TrialOutcome], None],
    *,
    failures: FailurePolicy | None,
    info: dict[str, Any] | None,
    synchronous: str,
    on_open: Callable[[Journal], None],
    set_budget: Callable[[int | None], None],
    warm_returns: Iterable[float] = (),
    restore: Callable[[Journal], int] | None = None,
) -> JournaledStudy:
    """Open (or create) the journal of a study and replay it through the optimizer.

    ``ask`` and ``tell_outcome`` are the optimizer's unjournaled inner methods (they become its
    :class:`StudyRecorder`); ``set_budget`` follows the journaled budget steps during the
    replay and ends at the study's budget (a larger ``settings["budget"]`` extends it).
    ``on_open(journal)`` runs before the replay (e.g. the history's clock starts at the
    journal's creation). Penalties of failed runs use every return seen, ``warm_returns`` (the
    warm start's finite returns) included. ``restore(journal)`` loads a snapshot of the
    optimizer and returns the events it stands for (replayed from there on). The journal is
    closed again on any error.
    """
    journal, extend = open_budget_journal(path, settings, info, synchronous)
    try:
        on_open(journal)
        start = 0 if restore is None else restore(journal)
        steps = BudgetSteps(set_budget, journal, start)  # each event under its own budget
        study = JournaledStudy(StudyRecorder(steps.ask(ask), steps.tell(tell_outcome)), journal,
                               failures=failures, start=start)
        if extend is not None:
            journal.extend_budget(extend)
        set_budget(journal.budget())
        study.penalizer.observe(warm_returns)
    except BaseException:
        journal.close()
        raise
    return study


def replay_into(opt: Any, journal: Journal) -> None:
    """Drive a fresh optimizer without a journal of its own through a journal's events.

    Each event is decided under its own budget; nothing is run (``erahbo status``).
    """
    steps = BudgetSteps(lambda b: setattr(opt, "budget", b), journal)
    replay(StudyRecorder(steps.ask(opt.ask), steps.tell(opt.tell_outcome)), journal)


class JournaledOptimizer(Optimizer):
    """An :class:`erahbo.Optimizer` whose every trial and run is journaled before it counts.

    ``erahbo.Optimizer(space, ..., journal=path)`` returns one. The journal runs the optimizer,
    not the other way round: :meth:`ask` records the optimizer's trial before handing it out,
    a tell records the outcome and then hands it to the optimizer's one ingest path
    (:meth:`erahbo.optimizer.telling.Telling.ingest_outcome`), and opening a journal that holds
    the same study rebuilds the optimizer by replaying it (:func:`open_study_journal`).

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
        journal's snapshot of the optimizer (:mod:`erahbo.optimizer.snapshot`), and check that
        the replay arrives at that snapshot (``ReplayDivergenceError`` if not).
    """

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
        if options is not None and options.failures is None:
            options = replace_options(options, failures="penalize")
        elif options is None and option_values.get("failures") is None:
            option_values["failures"] = "penalize"
        super().__init__(space, method, options=options, **option_values)
        self._snap = (time.monotonic(), -1)  # (time, events) of the last snapshot
        self._study = open_study_journal(
            journal, self.study_settings(), self._ask, self.ingest_outcome,
            failures=self.failure_policy, info=journal_info, synchronous=synchronous,
            on_open=lambda j: setattr(self.history, "t_start", j.created_at),
            set_budget=self.set_budget, warm_returns=self._warm_ok,
            restore=None if verify else self._restore)
        self.penalizer = self._study.penalizer  # the journal's feasible returns, then the warm
        self._settings_json["budget"] = self.budget  # a larger budget extends the study
        if verify:
            self._verify()

    def _restore(self, journal: Journal) -> int:
        """Load the journal's snapshot, if usable (the events it stands for; 0: none)."""
        n = restore_snapshot(self, journal)
        if n:
            self._snap = (time.monotonic(), n)
        return n

    def _verify(self) -> None:
        """The full replay arrived at the journal's snapshot, when one of this code stands
        for every journaled event (a study closed with nothing pending)."""
        j = self.journal
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
        :data:`~erahbo.optimizer.EVERY_S` seconds, and when it closes)."""
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

    def ask(self) -> Trial | None:
        """As :meth:`erahbo.Optimizer.ask`; the trial is committed to the journal first, and
        after a resume the trials that were asked but not told before the crash are handed
        out again (same configurations, seeds)."""
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
        """As :meth:`erahbo.Optimizer.run_trial`, journaling every run as it ends."""
        return self._study.evaluate(trial, objective, executor=executor,
                                    run_timeout=run_timeout, batch=batch)

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


JOURNALED.append(JournaledOptimizer)
