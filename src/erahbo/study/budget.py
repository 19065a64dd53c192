"""More budget for a journaled study, replayed exactly.

Opening a study's journal with the same settings but a larger budget does not start another
study: :func:`open_budget_journal` accepts it, the journal records the extension as a *budget
step* (:meth:`erahbo.runtime.journal.Journal.extend_budget`: from event ``n`` on, the budget is
``B``), and :class:`BudgetSteps` replays the journaled events with the budget each of them was
decided under before the study continues with more rounds. A later resume replays the same
steps (Optuna's analogue: ``study.optimize`` again on a loaded study).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from erahbo.optimizer.options import normalize_settings
from erahbo.runtime.journal import Journal, SettingsMismatchError, canonical_json, mismatch_message
from erahbo.runtime.journal_format import settings_diff

__all__ = ["BudgetSteps", "open_budget_journal"]


def _current(settings: Mapping[str, Any], budget: bool) -> dict[str, Any]:
    """The settings in the current schema (a setting an older journal lacks means its value of
    then: :func:`~erahbo.optimizer.options.normalize_settings`), less the budget (which a
    resume may extend) unless ``budget``."""
    return {k: v for k, v in normalize_settings(dict(settings)).items()
            if budget or k != "budget"}


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
        unbounded = (stored.get("budget") is None) != (settings.get("budget") is None)
        old, new = _current(stored, unbounded), _current(settings, unbounded)
        if unbounded or canonical_json(old, "settings") != canonical_json(new, "settings"):
            raise SettingsMismatchError(  # the differences that remain in the current schema
                mismatch_message(path, settings_diff(old, new))) from None
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
