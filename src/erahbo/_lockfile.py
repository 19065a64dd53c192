"""Exclusive advisory file locks (one process at a time on a journal or a generation)."""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import IO


def acquire(lock_path: str | os.PathLike[str], error: Callable[[str], Exception]) -> IO | None:
    """Lock ``lock_path`` (created if absent) for this process, or raise ``error(holder)``.

    The file records ``pid N`` of the holder, so the message can name it. The lock is held
    while the returned handle is open and released at once when the process dies. None
    where ``fcntl`` is unavailable (Windows: no lock).
    """
    try:
        import fcntl
    except ImportError:  # pragma: no cover - Windows: no lock
        return None
    fh = open(lock_path, "a+")  # held for the lock's lifetime
    try:
        fcntl.flock(fh.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        fh.seek(0)
        holder = fh.read().strip() or "another process"
        fh.close()
        raise error(holder) from None
    fh.seek(0)
    fh.truncate()
    fh.write(f"pid {os.getpid()}")
    fh.flush()
    return fh
