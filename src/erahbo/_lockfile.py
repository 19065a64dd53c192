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
    for _ in range(100):  # retried only if the file was removed by its releasing holder
        fh = open(lock_path, "a+")  # held for the lock's lifetime
        try:
            fcntl.flock(fh.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            fh.seek(0)
            holder = fh.read().strip() or "another process"
            fh.close()
            raise error(holder) from None
        if _same_file(fh, lock_path):
            break
        fh.close()  # locked a file that release() had just removed: lock the new one
    fh.seek(0)
    fh.truncate()
    fh.write(f"pid {os.getpid()}")
    fh.flush()
    return fh


def _same_file(fh: IO, path: str | os.PathLike[str]) -> bool:
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return False
    own = os.fstat(fh.fileno())
    return (st.st_dev, st.st_ino) == (own.st_dev, own.st_ino)


def release(fh: IO | None) -> None:
    """Remove the lock file and release the lock (no ``.lock`` file is left behind).

    The file is removed while still locked, so a process that opened it meanwhile finds it
    gone after locking (see :func:`acquire`) and locks a new one.
    """
    if fh is None:
        return
    try:
        if _same_file(fh, fh.name):
            os.unlink(fh.name)
    except OSError:
        pass
    finally:
        fh.close()
