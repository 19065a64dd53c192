"""Folder options of the commands (``--out``): an empty path is refused, not read as ``.``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer


def folder(text: Any) -> Path:
    """Parse a folder option: ``""`` (an unset shell variable, ``--out "$OUT"``) would be
    read as the current folder, so it is refused with the fix; ``.`` stays allowed."""
    if isinstance(text, Path):
        return text
    if not str(text).strip():
        raise typer.BadParameter(
            "an empty path would write into the current folder; give a folder, e.g. "
            "results/study (created if missing), or . to write here on purpose"
        )
    return Path(text)
