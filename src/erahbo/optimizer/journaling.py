"""How an optimizer is journaled: the small recorder the journal talks to, and the opening.

The journal (:mod:`erahbo.runtime.journal`, :mod:`erahbo.runtime.replay`) sees an optimizer
only through a :class:`StudyRecorder`: its unjournaled ask and its whole-outcome tell. Opening
a study's journal replays every journaled event through the recorder (exact resume) and hands
back the :class:`~erahbo.runtime.replay.JournaledStudy` that the optimizer's public ask and tell
go through from then on.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from typing import Any

from erahbo.runtime.failures import FailurePolicy, TrialOutcome
from erahbo.runtime.journal import Journal
from erahbo.runtime.replay import JournaledStudy

__all__ = ["StudyRecorder", "open_study_journal"]


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
    recorder: StudyRecorder,
    *,
    failures: FailurePolicy | None,
    info: dict[str, Any] | None,
    synchronous: str,
    on_open: Callable[[Journal], None],
    warm_returns: Iterable[float] = (),
) -> JournaledStudy:
    """Open (or create) the journal of a study and replay it through ``recorder``.

    ``on_open(journal)`` runs before the replay (e.g. the history's clock starts at the
    journal's creation). Penalties of failed runs use every return seen, ``warm_returns``
    (the warm start's finite returns) included. The journal is closed again on any error.
    """
    journal = Journal.open(path, settings, info=info, synchronous=synchronous)
    try:
        on_open(journal)
        study = JournaledStudy(recorder, journal, failures=failures)
        study.penalizer.observe(warm_returns)
    except BaseException:
        journal.close()
        raise
    return study
