"""The journal's file format: schema, errors, records, canonical JSON and file creation.

The storage side of :mod:`erahbo.runtime.journal` (which holds :class:`Journal`, the open
journal): the SQLite schema (version 1), the error classes, the records read back
(:class:`RunRecord`, :class:`TrialRecord`), the canonical JSON of settings, the advisory lock
on the file itself and the atomic creation of a new journal (built in a temporary file and
linked into place). The checks of an existing file (never repaired, refused with a clear
error) are in :mod:`erahbo.runtime.journal_check`.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import math
import os
import sqlite3
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import IO, Any

from erahbo import __version__
from erahbo._json import canonical_json, plain_json
from erahbo._lockfile import lock_file, lock_inode, unlock_inode
from erahbo.optimizer.failure import COUNTED

__all__ = [
    "SCHEMA_VERSION",
    "JournalCorruptError",
    "JournalError",
    "JournalLockedError",
    "JournalReadOnlyError",
    "JournalWriteError",
    "ReplayDivergenceError",
    "RunRecord",
    "SettingsMismatchError",
    "TrialRecord",
    "canonical_json",
    "create_journal",
    "finite_or_none",
    "lock_journal",
    "plain_json",
    "run_from_row",
    "settings_diff",
    "settings_hash",
    "write_error",
]

SCHEMA_VERSION = 1
APPLICATION_ID = 0x45524842  # "ERHB"
STATUSES = ("running", "ok", "penalized", "retried", "failed", "interrupted")
KILL_ENV = "ERAHBO_JOURNAL_KILL_AFTER"

_SCHEMA = f"""
CREATE TABLE study (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    settings TEXT NOT NULL,
    settings_hash TEXT NOT NULL,
    info TEXT,
    created_at REAL NOT NULL,
    erahbo_version TEXT NOT NULL
);
CREATE TABLE trials (
    trial_id INTEGER PRIMARY KEY,
    round INTEGER,
    config_id,
    config TEXT NOT NULL,
    seeds TEXT NOT NULL,
    asked_at REAL NOT NULL,
    told_at REAL,
    returns TEXT,
    excluded INTEGER NOT NULL DEFAULT 0
);
CREATE TABLE runs (
    run_id INTEGER PRIMARY KEY AUTOINCREMENT,
    trial_id INTEGER NOT NULL REFERENCES trials(trial_id),
    slot INTEGER NOT NULL,
    attempt INTEGER NOT NULL,
    seed INTEGER NOT NULL,
    status TEXT NOT NULL CHECK (status IN ({", ".join(repr(s) for s in STATUSES)})),
    value REAL,
    raw REAL,
    error TEXT,
    started_at REAL NOT NULL,
    ended_at REAL,
    worker TEXT,
    rerun INTEGER NOT NULL DEFAULT 0
);
CREATE UNIQUE INDEX runs_one_counted_per_slot ON runs(trial_id, slot)
    WHERE status IN ('ok', 'penalized');
CREATE INDEX runs_by_trial ON runs(trial_id);
CREATE TABLE events (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    kind TEXT NOT NULL CHECK (kind IN ('ask', 'tell')),
    trial_id INTEGER NOT NULL REFERENCES trials(trial_id)
);
PRAGMA application_id = {APPLICATION_ID};
PRAGMA user_version = {SCHEMA_VERSION};
"""


# --------------------------------------------------------------------------------------------
# Errors
# --------------------------------------------------------------------------------------------


class JournalError(Exception):
    """Base class of journal errors."""


class JournalCorruptError(JournalError):
    """The file is not a usable erahbo journal; it was not modified."""


class SettingsMismatchError(JournalError, ValueError):
    """The journal holds a study with other settings."""


class JournalLockedError(JournalError):
    """Another live process has the journal open."""


class JournalReadOnlyError(JournalError):
    """The journal's file or folder cannot be written (read-only file system, permissions)."""


class JournalWriteError(JournalError):
    """A record could not be written (full disk, I/O error); what was recorded before is kept.

    Attributes
    ----------
    path : str
        The journal.
    """

    def __init__(self, message: str, path: str = "") -> None:
        super().__init__(message)
        self.path = path


class ReplayDivergenceError(JournalError):
    """The optimizer, re-driven through the journal, asked for a different trial."""


# --------------------------------------------------------------------------------------------
# Settings (their canonical JSON: erahbo._json)
# --------------------------------------------------------------------------------------------


def settings_hash(settings: Mapping[str, Any]) -> str:
    """SHA-256 (hex) of the canonical JSON of the study settings."""
    return hashlib.sha256(canonical_json(settings, "settings").encode()).hexdigest()


def _flatten(d: Any, prefix: str = "") -> dict[str, Any]:
    if isinstance(d, dict):
        out: dict[str, Any] = {}
        for k, v in d.items():
            out.update(_flatten(v, f"{prefix}.{k}" if prefix else k))
        return out
    return {prefix: d}


def settings_diff(old: dict[str, Any], new: dict[str, Any]) -> list[str]:
    a, b = _flatten(old), _flatten(new)
    lines = []
    for key in sorted(set(a) | set(b)):
        if key not in b:
            lines.append(f"{key}: {a[key]!r} in the journal, absent now")
        elif key not in a:
            lines.append(f"{key}: absent in the journal, {b[key]!r} now")
        elif canonical_json(a[key]) != canonical_json(b[key]):
            lines.append(f"{key}: {a[key]!r} in the journal, {b[key]!r} now")
    return lines


# --------------------------------------------------------------------------------------------
# Records
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class RunRecord:
    """One row of the ``runs`` table (fields as in
    :class:`erahbo.optimizer.outcomes.RunOutcome`)."""

    run_id: int
    trial_id: int
    slot: int
    attempt: int
    seed: int
    status: str
    value_used: float  # NaN while running / when not counted
    raw: float  # NaN when the run failed
    error: str | None
    start: float
    end: float  # NaN while running
    worker: str | None
    rerun: bool

    @property
    def counted(self) -> bool:
        """Whether the run counts as an observation (status ``ok`` or ``penalized``)."""
        return self.status in COUNTED


@dataclass(frozen=True)
class TrialRecord:
    """One asked trial with its runs."""

    trial_id: int
    round: int | None
    config_id: Any
    config: dict[str, Any]
    seeds: list[int]
    asked_at: float
    told_at: float | None
    returns: list[float] | None  # (k,) as told; None until told
    excluded: bool
    runs: tuple[RunRecord, ...] = field(default=())

    @property
    def told(self) -> bool:
        """Whether the trial's results were told to the optimizer."""
        return self.told_at is not None


def _f(x: Any) -> float:
    return math.nan if x is None else float(x)


def run_from_row(row: sqlite3.Row) -> RunRecord:
    return RunRecord(
        run_id=row["run_id"],
        trial_id=row["trial_id"],
        slot=row["slot"],
        attempt=row["attempt"],
        seed=row["seed"],
        status=row["status"],
        value_used=_f(row["value"]),
        raw=_f(row["raw"]),
        error=row["error"],
        start=row["started_at"],
        end=_f(row["ended_at"]),
        worker=row["worker"],
        rerun=bool(row["rerun"]),
    )


# --------------------------------------------------------------------------------------------
# Locking and creation (the checks of an existing file: erahbo.runtime.journal_check)
# --------------------------------------------------------------------------------------------


LOCK_WAIT_S = 0.5  # seconds a journal's lock is waited for before JournalLockedError


def lock_journal(path: str) -> IO | None:
    """Exclusive advisory lock on the journal file itself (:func:`erahbo._lockfile.lock_inode`).

    Every name of the file (a symbolic or a hard link) shares the lock; nothing is created.
    The returned handle holds it: close it (:func:`erahbo._lockfile.unlock_inode`) after the
    database connection. Another holder is waited for :data:`LOCK_WAIT_S` seconds first: a
    process that checks the journal and refuses it (e.g. a hard link whose other name holds
    the log) holds the lock for milliseconds, and a resume started at the same moment then
    goes on instead of being refused too.
    """
    return lock_file(path, lambda holder: JournalLockedError(
        f"journal {path} is in use by {holder}; wait for that study to finish or stop it "
        "(a killed study releases the lock at once)"
    ), wait_s=LOCK_WAIT_S)


def write_error(path: str, doing: str, exc: BaseException) -> JournalError:
    """The error for a failed write of the journal at ``path``: one line with the fix.

    A full disk or an I/O error gives :class:`JournalWriteError`, a read-only file or folder
    :class:`JournalReadOnlyError`.
    """
    text = str(exc) or type(exc).__name__
    low = text.lower()
    folder = os.path.dirname(os.path.abspath(path))
    if (isinstance(exc, OSError) and exc.errno in (errno.EROFS, errno.EACCES, errno.EPERM)) or (
            "readonly" in low or "read-only" in low):
        return JournalReadOnlyError(
            f"journal {path}: {doing} ({text}): the file or its folder {folder} is read-only. "
            "Copy the journal (with its -wal file) to a writable folder and resume the copy; "
            "every run recorded so far is kept."
        )
    full = ((isinstance(exc, OSError) and exc.errno in (errno.ENOSPC, errno.EDQUOT, errno.EFBIG))
            or "full" in low)
    why = "the disk is full" if full else "the disk failed to write"
    return JournalWriteError(
        f"journal {path}: {doing} ({why}: {text}). Every run recorded before is kept. Free "
        f"space on the file system of {folder} (or move the journal with its -wal file to "
        f"another disk), then continue the study: erahbo resume {path}",
        path,
    )


def finite_or_none(x: float) -> float | None:
    return float(x) if x is not None and math.isfinite(x) else None


def create_journal(path: str, settings: dict[str, Any], info_json: str | None) -> IO | None:
    """Build a complete journal in a temporary file, lock it, then link it into place atomically.

    Returns the handle that holds the new journal's lock (:func:`lock_journal`). Raises
    FileExistsError (nothing created) if ``path`` appeared meanwhile.
    """

    tmp = f"{path}.tmp-{os.getpid()}"
    for suffix in ("", "-wal", "-shm", "-journal"):
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp + suffix)
    try:
        con = sqlite3.connect(tmp, isolation_level=None)
        try:
            con.execute("PRAGMA journal_mode=WAL")
            con.execute("PRAGMA synchronous=FULL")
            con.executescript(_SCHEMA)
            con.execute(
                "INSERT INTO study (id, settings, settings_hash, info, created_at, "
                "erahbo_version) VALUES (1, ?, ?, ?, ?, ?)",
                (
                    canonical_json(settings),
                    settings_hash(settings),
                    info_json,
                    time.time(),
                    __version__,
                ),
            )
            con.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        finally:
            con.close()
        fh = open(tmp, "rb")
        try:
            os.fsync(fh.fileno())
            lock_inode(fh, lambda holder: JournalLockedError(f"{tmp} is locked by {holder}"))
            os.link(tmp, path)  # fails if path exists: never overwrite
        except BaseException:
            unlock_inode(fh)
            raise
    finally:
        for suffix in ("", "-wal", "-shm", "-journal"):
            with contextlib.suppress(FileNotFoundError):
                os.unlink(tmp + suffix)
    with contextlib.suppress(OSError):
        dfd = os.open(os.path.dirname(os.path.abspath(path)), os.O_RDONLY)
        try:
            os.fsync(dfd)
        finally:
            os.close(dfd)
    return fh
