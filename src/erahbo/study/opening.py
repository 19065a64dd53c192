"""Opening a study's journal: what the journal sees of an optimizer, and the replay through it.

The journal (:mod:`erahbo.runtime.journal`, :mod:`erahbo.runtime.replay`) sees an optimizer
only through a :class:`StudyRecorder`: its unjournaled ask and its whole-outcome tell.
:func:`open_study_journal` restores the journal's snapshot, if usable
(:mod:`erahbo.study.snapshot`), replays the journaled events after it through the recorder
(exact resume, each event under its own budget: :mod:`erahbo.study.budget`) and hands back the
:class:`~erahbo.runtime.replay.JournaledStudy` that the optimizer's public ask and tell go
through from then on. :func:`replay_into` drives an optimizer without a journal of its own
through a journal's events after its snapshot (``erahbo status``).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from typing import Any

from erahbo.optimizer.failure import FailurePolicy
from erahbo.optimizer.outcomes import TrialOutcome
from erahbo.runtime.journal import Journal
from erahbo.runtime.replay import JournaledStudy, replay
from erahbo.study.budget import BudgetSteps, open_budget_journal
from erahbo.study.snapshot import restore

__all__ = ["StudyRecorder", "open_study_journal", "replay_into"]


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
    check: Callable[[Journal], None] | None = None,
) -> JournaledStudy:
    """Open (or create) the journal of a study and replay it through the optimizer.

    ``ask`` and ``tell_outcome`` are the optimizer's unjournaled inner methods (they become its
    :class:`StudyRecorder`); ``set_budget`` follows the journaled budget steps during the
    replay and ends at the study's budget (a larger ``settings["budget"]`` extends it).
    ``on_open(journal)`` runs before the replay (e.g. the history's clock starts at the
    journal's creation). Penalties of failed runs use every return seen, ``warm_returns`` (the
    warm start's finite returns) included. ``restore(journal)`` loads a snapshot of the
    optimizer and returns the events it stands for (replayed from there on); ``check(journal)``
    runs after the replay. Nothing is written to the journal before both succeeded, and it is
    closed again on any error.
    """
    journal, extend = open_budget_journal(path, settings, info, synchronous)
    try:
        on_open(journal)
        start = 0 if restore is None else restore(journal)
        steps = BudgetSteps(set_budget, journal, start)  # each event under its own budget
        study = JournaledStudy(StudyRecorder(steps.ask(ask), steps.tell(tell_outcome)), journal,
                               failures=failures, start=start, check=check)
        if extend is not None:
            journal.extend_budget(extend)
        set_budget(journal.budget())
        study.penalizer.observe(warm_returns)
    except BaseException:
        journal.close()
        raise
    return study


def replay_into(opt: Any, journal: Journal, *, snapshot: bool = True) -> int:
    """Drive a fresh optimizer without a journal of its own through a journal's events.

    It starts from the journal's snapshot when one of this code and this study is stored
    (:func:`erahbo.study.snapshot.restore`; ``snapshot=False``: from the first event). Each
    event is decided under its own budget; nothing is run and nothing is written
    (``erahbo status``). Returns the events the snapshot stood for (0: replayed them all).
    """
    start = restore(opt, journal) if snapshot else 0
    steps = BudgetSteps(lambda b: setattr(opt, "budget", b), journal, start)
    replay(StudyRecorder(steps.ask(opt.ask), steps.tell(opt.tell_outcome)), journal,
           start=start)
    return start
