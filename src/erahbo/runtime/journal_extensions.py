"""The optional tables of a study journal: budget steps and snapshots of the optimizer.

:class:`JournalExtensions` is a base class of :class:`erahbo.runtime.journal.Journal`; each
table is created by its first write, so journals without it (older ones included) read as
"none".

* ``budget_steps`` — a study extended to a larger budget (:meth:`extend_budget`): from event
  ``n`` on, the budget is ``B``;
* ``snapshots`` — the optimizer's state after the first ``n`` events
  (:mod:`erahbo.study.snapshot`), so a resume need not re-decide them.
"""

from __future__ import annotations

import sqlite3
from typing import Any

__all__ = ["JournalExtensions"]


class JournalExtensions:
    """Budget steps and snapshots (the journal's ``_tx`` and ``_rows`` do the SQL)."""

    path: str
    settings: dict[str, Any]

    def _tx(self) -> Any:  # the journal's (a context manager over one transaction)
        raise NotImplementedError

    def _rows(self, sql: str, args: tuple[Any, ...] = ()) -> list[sqlite3.Row]:
        raise NotImplementedError

    def _has_table(self, name: str) -> bool:
        return bool(self._rows("SELECT name FROM sqlite_master WHERE type = 'table' AND "
                               "name = ?", (name,)))

    def budget_steps(self) -> list[tuple[int, int]]:
        """Extensions of the study's budget: ``(n_events, budget)`` pairs, oldest first.

        The budget in :attr:`settings` holds for the first events; from event ``n_events`` on
        (0-based, in :meth:`events` order) the budget is ``budget``. Empty if never extended.
        """
        if not self._has_table("budget_steps"):
            return []
        rows = self._rows("SELECT n_events, budget FROM budget_steps ORDER BY seq")
        return [(int(r[0]), int(r[1])) for r in rows]

    def budget(self) -> int | None:
        """The study's current budget: the settings' one, or its last extension."""
        steps = self.budget_steps()
        b = self.settings.get("budget")
        return steps[-1][1] if steps else (None if b is None else int(b))

    def extend_budget(self, budget: int) -> None:
        """Record that the study continues, from the next event on, to ``budget`` runs.

        Raises ValueError unless ``budget`` is larger than :meth:`budget`.
        """
        now = self.budget()
        if now is None or int(budget) != budget or budget <= now:
            raise ValueError(
                f"journal {self.path}: budget={budget!r} must be an int larger than the "
                f"study's budget ({now}); a study can be given more budget, not less"
            )
        with self._tx() as c:
            c.execute("CREATE TABLE IF NOT EXISTS budget_steps (seq INTEGER PRIMARY KEY "
                      "AUTOINCREMENT, n_events INTEGER NOT NULL, budget INTEGER NOT NULL)")
            n = c.execute("SELECT COUNT(*) FROM events").fetchone()[0]
            c.execute("INSERT INTO budget_steps (n_events, budget) VALUES (?, ?)",
                      (int(n), int(budget)))

    def write_snapshot(self, n_events: int, key: str, state: bytes) -> None:
        """Store the optimizer's state after the first ``n_events`` events (replacing the
        last one); ``key`` says which code and settings wrote it
        (:mod:`erahbo.study.snapshot`)."""
        with self._tx() as c:
            c.execute("CREATE TABLE IF NOT EXISTS snapshots (n_events INTEGER NOT NULL, "
                      "key TEXT NOT NULL, state BLOB NOT NULL)")
            c.execute("DELETE FROM snapshots")
            c.execute("INSERT INTO snapshots (n_events, key, state) VALUES (?, ?, ?)",
                      (int(n_events), key, sqlite3.Binary(state)))

    def snapshot(self) -> tuple[int, str, bytes] | None:
        """The stored optimizer state ``(n_events, key, state)``, or None."""
        if not self._has_table("snapshots"):
            return None
        rows = self._rows("SELECT n_events, key, state FROM snapshots")
        return (int(rows[0][0]), str(rows[0][1]), bytes(rows[0][2])) if rows else None

    def n_events(self) -> int:
        """Events so far (asks and tells)."""
        return int(self._rows("SELECT COUNT(*) FROM events")[0][0])
