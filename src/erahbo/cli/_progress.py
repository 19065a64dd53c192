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


class PlainTicker:
    """Progress as plain log lines, at most one per ``every_s`` seconds (not a terminal)."""

    def __init__(self, label: str, every_s: float = 30.0) -> None:
        import time

        self.label, self.every_s = label, float(every_s)
        self._clock = time.monotonic
        self.t0 = self._last = self._clock()

    def __call__(self, done: int, total: int | None) -> None:
        import time

        now = self._clock()
        if now - self._last < self.every_s and not (total and done >= total):
            return
        self._last = now
        elapsed = now - self.t0
        tail = ""
        if total:
            eta = elapsed * (total - done) / done if done else float("nan")
            tail = f" ({100 * done / total:.1f} %) eta={eta / 60:.1f}min"
        print(f"{time.strftime('%H:%M:%S')} {self.label} {done}/{total or '?'}{tail} "
              f"elapsed={elapsed:.0f}s", flush=True)


class LazyProgress:
    """A rich ``Progress`` drawn from its first ``update`` on (a context manager).

    An error raised before the first update (bad options, a journal of another study) is then
    printed without an empty progress bar above it.
    """

    def __init__(self, progress: Any) -> None:
        self.progress = progress
        self.started = False

    def __enter__(self) -> LazyProgress:
        return self

    def __exit__(self, *exc: object) -> None:
        if self.started:
            self.progress.stop()

    def add_task(self, *args: Any, **kwargs: Any) -> Any:
        return self.progress.add_task(*args, **kwargs)

    def update(self, *args: Any, **kwargs: Any) -> None:
        if not self.started:
            self.started = True
            self.progress.start()
        self.progress.update(*args, **kwargs)
