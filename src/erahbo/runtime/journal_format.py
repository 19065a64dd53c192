"""The journal's file format: schema, errors, records, canonical JSON and file creation.

The storage side of :mod:`erahbo.runtime.journal` (which holds :class:`Journal`, the open
journal): the SQLite schema (version 1), the error classes, the records read back
(:class:`RunRecord`, :class:`TrialRecord`), the canonical JSON of settings, the checks of an
existing file (never repaired, refused with a clear error), the advisory lock and the atomic
creation of a new journal (built in a temporary file and linked into place).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import math
import os
import sqlite3
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from erahbo import __version__
from erahbo._lockfile import acquire
from erahbo.runtime.failures import COUNTED

__all__ = [
    "SCHEMA_VERSION",
    "JournalCorruptError",
    "JournalError",
    "JournalLockedError",
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
    "validate_existing",
]

SCHEMA_VERSION = 1
APPLICATION_ID = 0x45524842  # "ERHB"
STATUSES = ("running", "ok", "penalized", "retried", "failed", "interrupted")
KILL_ENV = "ERAHBO_JOURNAL_KILL_AFTER"
_SQLITE_MAGIC = b"SQLite format 3\x00"

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
_TABLES = {"study", "trials", "runs", "events"}


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


class ReplayDivergenceError(JournalError):
    """The optimizer, re-driven through the journal, asked for a different trial."""


# --------------------------------------------------------------------------------------------
# Canonical JSON and settings
# --------------------------------------------------------------------------------------------


def plain_json(obj: Any, where: str) -> Any:
    """Convert to plain JSON types (numpy scalars/arrays too), naming the bad entry."""
    if obj is None or isinstance(obj, bool | str):
        return obj
    if isinstance(obj, int):
        return int(obj)
    if isinstance(obj, float):
        return float(obj)
    if isinstance(obj, Mapping):
        out = {}
        for k, v in obj.items():
            if not isinstance(k, str):
                raise TypeError(f"{where} has a non-string key {k!r}; the journal stores JSON")
            out[k] = plain_json(v, f"{where}[{k!r}]")
        return out
    if isinstance(obj, list | tuple):
        return [plain_json(v, f"{where}[{i}]") for i, v in enumerate(obj)]
    if hasattr(obj, "tolist") and hasattr(obj, "dtype"):  # numpy scalar or array
        return plain_json(obj.tolist(), where)
    raise TypeError(
        f"{where} is a {type(obj).__name__}, which the journal cannot store; "
        "pass plain JSON values (numbers, strings, lists, dicts) describing it"
    )


def canonical_json(obj: Any, where: str = "value") -> str:
    """Deterministic JSON text of ``obj`` (sorted keys, no spaces, floats round-trip exactly)."""
    return json.dumps(plain_json(obj, where), sort_keys=True, separators=(",", ":"), allow_nan=True)


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
    """One row of the ``runs`` table (fields as in :class:`erahbo.runtime.failures.RunOutcome`)."""

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
# Opening: validation that never modifies the file
# --------------------------------------------------------------------------------------------


def _corrupt(path: str, what: str) -> JournalCorruptError:
    return JournalCorruptError(
        f"journal {path} {what}. The file was not modified. Restore it from a backup (copy "
        f"{os.path.basename(path)} together with its -wal file), try `sqlite3 {path} .recover`, "
        "or start a new study with another journal path."
    )


def validate_existing(path: str) -> None:
    size = os.path.getsize(path)
    if size == 0:
        raise _corrupt(path, "is an empty file (0 bytes), not an erahbo journal")
    with open(path, "rb") as fh:
        header = fh.read(100)
    if not header.startswith(_SQLITE_MAGIC):
        raise _corrupt(path, "is not an erahbo journal (not an SQLite database)")
    if len(header) == 100:
        page_size = int.from_bytes(header[16:18], "big")
        page_size = 65536 if page_size == 1 else page_size
        n_pages = int.from_bytes(header[28:32], "big")
        counter_ok = header[24:28] == header[92:96]
        if counter_ok and n_pages and size < n_pages * page_size:
            raise _corrupt(
                path, f"is truncated ({size} bytes, its header says {n_pages * page_size})"
            )
    else:
        raise _corrupt(path, f"is truncated ({size} bytes, shorter than an SQLite header)")
    try:
        con = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        try:
            app_id = con.execute("PRAGMA application_id").fetchone()[0]
            version = con.execute("PRAGMA user_version").fetchone()[0]
            if app_id != APPLICATION_ID:
                raise _corrupt(path, "is an SQLite database but not an erahbo journal")
            if version > SCHEMA_VERSION:
                raise JournalError(
                    f"journal {path} has schema version {version}, newer than this erahbo "
                    f"supports ({SCHEMA_VERSION}); upgrade erahbo to resume it"
                )
            check = [r[0] for r in con.execute("PRAGMA quick_check").fetchall()]
            if check != ["ok"]:
                raise _corrupt(path, f"is corrupted (sqlite quick_check: {'; '.join(check[:3])})")
            tables = {
                r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type='table'")
            }
            if not _TABLES <= tables:
                raise _corrupt(path, f"lacks the tables {sorted(_TABLES - tables)}")
            if con.execute("SELECT COUNT(*) FROM study").fetchone()[0] != 1:
                raise _corrupt(path, "has no study settings")
        finally:
            con.close()
    except sqlite3.DatabaseError as exc:
        raise _corrupt(path, f"is corrupted or truncated (sqlite: {exc})") from exc


def lock_journal(path: str) -> Any:
    """Exclusive advisory lock on PATH.lock; None where fcntl is unavailable."""

    return acquire(path + ".lock", lambda holder: JournalLockedError(
        f"journal {path} is in use by {holder}; wait for that study to finish or stop it "
        "(a killed study releases the lock at once)"
    ))


def finite_or_none(x: float) -> float | None:
    return float(x) if x is not None and math.isfinite(x) else None


def create_journal(path: str, settings: dict[str, Any], info_json: str | None) -> None:
    """Build a complete journal in a temporary file, then link it into place atomically."""

    tmp = f"{path}.tmp-{os.getpid()}"
    for suffix in ("", "-wal", "-shm", "-journal"):
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp + suffix)
    con = sqlite3.connect(tmp, isolation_level=None)
    try:
        con.execute("PRAGMA journal_mode=WAL")
        con.execute("PRAGMA synchronous=FULL")
        con.executescript(_SCHEMA)
        con.execute(
            "INSERT INTO study (id, settings, settings_hash, info, created_at, erahbo_version) "
            "VALUES (1, ?, ?, ?, ?, ?)",
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
    with open(tmp, "rb") as fh:
        os.fsync(fh.fileno())
    try:
        os.link(tmp, path)  # fails if path exists: never overwrite
    finally:
        os.unlink(tmp)
    with contextlib.suppress(OSError):
        dfd = os.open(os.path.dirname(os.path.abspath(path)), os.O_RDONLY)
        try:
            os.fsync(dfd)
        finally:
            os.close(dfd)
