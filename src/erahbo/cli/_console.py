"""The rich console every command prints through, and its compact number format."""

from __future__ import annotations

import os
import sys
from typing import Any

#: Width of tables when the output is not a terminal (logs, pipes): rich's 80 columns would
#: cut the wider tables' headers.
PIPE_WIDTH = 120


def make_console(*, stderr: bool = False) -> Any:
    """A console with the terminal's width, or :data:`PIPE_WIDTH` when piped (``COLUMNS`` wins)."""
    from rich.console import Console  # lazy: commands start fast

    stream = sys.stderr if stderr else sys.stdout
    tty = getattr(stream, "isatty", lambda: False)()
    width = None if tty or os.environ.get("COLUMNS") else PIPE_WIDTH
    return Console(stderr=stderr, width=width)


def compact(x: float, digits: int = 3, *, nan: str = "nan") -> str:
    """``digits`` significant digits, but whole numbers from ``10**digits`` up to 1e6 (no
    exponent there); ``nan`` for NaN."""
    if x != x:
        return nan
    return f"{x:.{digits}g}" if abs(x) < 10**digits or not abs(x) < 1e6 else f"{x:.0f}"
