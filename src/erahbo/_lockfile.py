"""Exclusive advisory file locks: one process at a time on a journal or a generation.

Two kinds: :func:`acquire` locks a separate lock file (a generation's folder), and
:func:`lock_inode` locks a file itself, so that every name of it (symbolic or hard links)
shares one lock (a study journal).
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Callable
from typing import IO


def acquire(lock_path: str | os.PathLike[str], error: Callable[[str], Exception]) -> IO | None:
    """Lock ``lock_path`` (created if absent) for this process, or raise ``error(holder)``.

    The file records ``pid N`` of the holder, so the message can name it. The lock is held
    while the returned handle is open and released at once when the process dies. None
    where ``fcntl`` is unavailable (Windows: no lock). A file system that refuses ``flock``
    itself (``ENOLCK``, ``ENOSYS``: NFS without a lock service) raises RuntimeError saying so.
    """
    try:
        import fcntl
    except ImportError:  # pragma: no cover - Windows: no lock
        return None
    for _ in range(100):  # retried only if the file was removed by its releasing holder
        fh = open(lock_path, "a+")  # held for the lock's lifetime
        try:
            fcntl.flock(fh.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:  # held by another process
            fh.seek(0)
            holder = fh.read().strip() or "another process"
            fh.close()
            raise error(holder) from None
        except OSError as exc:  # no lock support here: not "another process holds it"
            fh.close()
            raise _unlockable(lock_path, exc) from None
        if _same_file(fh, lock_path):
            break
        fh.close()  # locked a file that release() had just removed: lock the new one
    fh.seek(0)
    fh.truncate()
    fh.write(f"pid {os.getpid()}")
    fh.flush()
    return fh


def _unlockable(path: str | os.PathLike[str], exc: OSError) -> RuntimeError:
    """The error for a file system that refuses ``flock`` itself (not a lock someone holds)."""
    return RuntimeError(
        f"{path}: cannot lock it ({exc.strerror or exc}): this file system does not support "
        "flock locks (e.g. NFS without a lock service), which keep a second process out; use "
        "a folder on a local disk"
    )


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


# --------------------------------------------------------------------------------------------
# A lock on a file itself (its inode), shared by every name of it
# --------------------------------------------------------------------------------------------

_HELD: dict[tuple[int, int], int] = {}  # (st_dev, st_ino) -> fd, locks this process holds


def lock_inode(fh: IO, error: Callable[[str], Exception], wait_s: float = 0.0) -> None:
    """Lock the open file ``fh`` itself for this process, or raise ``error(holder)``.

    ``wait_s``: how long another holder is waited for before the error (0: none). A process
    that only checks the file and refuses it holds the lock for milliseconds; a short wait
    lets a second process that started at the same moment go on instead of being refused too.

    ``flock`` on the file's own descriptor: the lock belongs to the file (its inode), so a
    symbolic link or a hard link to it shares it, and the OS releases it when the holder dies.
    ``holder`` is ``"pid N"`` where the OS says so (Linux ``/proc/locks``), else ``"another
    process"``. Nothing is created. A lock this process already holds is refused without
    touching the file (see :func:`unlock_inode`). No-op where ``fcntl`` is unavailable.

    Not for SQLite's own POSIX locks: on local file systems (Linux, macOS) ``flock`` and
    ``fcntl`` locks are independent; on NFS, Linux emulates ``flock`` with ``fcntl`` locks, which
    would conflict (SQLite's WAL mode does not work over NFS either).
    """
    try:
        import fcntl
    except ImportError:  # pragma: no cover - Windows: no lock
        return
    st = os.fstat(fh.fileno())
    key = (st.st_dev, st.st_ino)
    if key in _HELD:
        raise error(f"pid {os.getpid()} (this process)")
    deadline = time.monotonic() + max(0.0, wait_s)
    while True:
        try:
            fcntl.flock(fh.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
            break
        except OSError:
            if time.monotonic() < deadline:
                time.sleep(0.02)
                continue
            pid = lock_holder_pid(st)
            raise error("another process" if pid is None else f"pid {pid}") from None
    _HELD[key] = fh.fileno()


def lock_file(path: str | os.PathLike[str], error: Callable[[str], Exception],
              wait_s: float = 0.0) -> IO:
    """Open ``path`` read-only and lock the file itself (:func:`lock_inode`, waiting up to
    ``wait_s`` seconds for another holder); the handle.

    A file this process has locked already is refused before a descriptor is opened (closing
    one would drop the POSIX locks this process's SQLite connections hold on it).
    """
    st = os.stat(path)
    if (st.st_dev, st.st_ino) in _HELD:
        raise error(f"pid {os.getpid()} (this process)")
    fh = open(path, "rb")
    try:
        lock_inode(fh, error, wait_s)
    except BaseException:
        fh.close()
        raise
    return fh


def held_here(path: str | os.PathLike[str]) -> bool:
    """Whether this process holds the lock of the file at ``path`` (:func:`lock_inode`)."""
    try:
        st = os.stat(path)
    except OSError:
        return False
    return (st.st_dev, st.st_ino) in _HELD


def unlock_inode(fh: IO | None) -> None:
    """Close ``fh`` (which releases its lock). Call only once nothing else uses the file.

    Closing any descriptor of a file drops every POSIX (``fcntl``) lock this process holds on
    it, SQLite's included: close the database connection first.
    """
    if fh is None:
        return
    with contextlib.suppress(OSError, ValueError):
        st = os.fstat(fh.fileno())
        if _HELD.get((st.st_dev, st.st_ino)) == fh.fileno():
            del _HELD[(st.st_dev, st.st_ino)]
    fh.close()


def lock_holder_pid(st: os.stat_result) -> int | None:
    """The pid holding an exclusive ``flock`` on the file of ``st``, from ``/proc/locks``.

    Reads the kernel's table of locks (Linux); takes no lock. None where that table is
    unavailable or does not list the file.
    """
    try:
        with open("/proc/locks") as fh:
            lines = fh.read().splitlines()
    except OSError:
        return None
    dev = f"{os.major(st.st_dev):02x}:{os.minor(st.st_dev):02x}:{st.st_ino}"
    for line in lines:
        parts = line.split()
        # "1: FLOCK  ADVISORY  WRITE 1234 fe:00:5392611 0 EOF" ("->" marks a waiter)
        if len(parts) >= 6 and "->" not in parts and parts[1] == "FLOCK" and parts[5] == dev:
            with contextlib.suppress(ValueError):
                return int(parts[4])
    return None


def inode_locked(path: str | os.PathLike[str]) -> tuple[bool, int | None]:
    """Whether another process holds the :func:`lock_inode` lock of ``path``, and its pid.

    From ``/proc/locks`` where it lists the file (no lock taken). Elsewhere, a shared lock is
    tried and dropped at once (a process locking the file in that instant is refused and may
    retry). Nothing is created.
    """
    try:
        st = os.stat(path)
    except OSError:
        return False, None
    if (st.st_dev, st.st_ino) in _HELD:
        return True, os.getpid()
    pid = lock_holder_pid(st)
    if pid is not None:
        return True, pid
    try:
        import fcntl
    except ImportError:  # pragma: no cover - Windows: no lock
        return False, None
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return False, None
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except OSError:
            return True, None
        fcntl.flock(fd, fcntl.LOCK_UN)
        return False, None
    finally:
        os.close(fd)
