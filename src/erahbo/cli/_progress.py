"""The progress bar every long-running command shows (runs done, elapsed, ETA)."""

from __future__ import annotations

from typing import Any


def run_progress(
    console: Any, label: str = "runs", *, disable: bool = False, percent: bool = False
) -> Any:
    """A rich ``Progress`` with a bar, ``done/total``, elapsed and remaining time.

    The task's ``description`` is shown after the times (e.g. the round and incumbent);
    ``disable`` hides the bar (plain logs instead); ``percent`` shows a percentage instead
    of ``done/total`` (when the bar counts work units, not items).
    """
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TaskProgressColumn,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )

    count = TaskProgressColumn() if percent else MofNCompleteColumn()
    return Progress(TextColumn(f"[bold]{label}"), BarColumn(), count,
                    TimeElapsedColumn(), TimeRemainingColumn(),
                    TextColumn("{task.description}"), console=console, disable=disable)
