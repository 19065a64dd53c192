"""Checking an existing journal without changing it: read-only reads, the file, every row.

Everything here reads; nothing writes the journal or creates a file next to it:

* :func:`read_only` is a read-only SQLite connection that leaves no ``-wal``/``-shm`` file
  behind (SQLite's own read-only mode creates both and keeps them): the file is opened
  ``immutable`` when no write-ahead log holds commits; a log left by a stopped study is read
  from a private copy; a running study's is read in place, through its shared memory.
* :func:`validate_existing` refuses what is not a usable erahbo journal before anything is
  written: not SQLite, another program's database, truncated, damaged pages or indexes
  (``integrity_check``), a newer schema, and damaged rows (:func:`check_rows`: text that is
  not UTF-8, JSON that does not parse, statuses, types, seeds and references that cannot
  occur, settings whose SHA-256 differs), so that a damaged file is never rewritten first and
  refused later.
* :func:`check_wal_names` refuses a hard link whose other name holds the write-ahead log.
* :func:`check_writable` refuses a journal whose file or folder cannot be written.

A changed digit in a JSON number or a changed bit of a stored float cannot be told from data:
the replay catches a changed configuration (``ReplayDivergenceError``), the settings hash a
changed setting.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import math
import os
import shutil
import sqlite3
import tempfile
from collections.abc import Iterator
from typing import Any

from erahbo.optimizer.failure import retry_seed
from erahbo.runtime.journal_format import (
    APPLICATION_ID,
    SCHEMA_VERSION,
    STATUSES,
    JournalCorruptError,
    JournalError,
    JournalReadOnlyError,
)

__all__ = [
    "check_rows",
    "check_wal_names",
    "check_writable",
    "read_only",
    "validate_existing",
    "wal_name",
]

_SQLITE_MAGIC = b"SQLite format 3\x00"
_TABLES = {"study", "trials", "runs", "events"}


def _corrupt(path: str, what: str) -> JournalCorruptError:
    return JournalCorruptError(
        f"journal {path} {what}. The file was not modified. Restore it from a backup (copy "
        f"{os.path.basename(path)} together with its -wal file), try `sqlite3 {path} .recover`, "
        "or start a new study with another journal path."
    )


def _not_a_journal(path: str, what: str) -> JournalCorruptError:
    return JournalCorruptError(
        f"journal {path} {what}. The file was not modified. Give the path of a study journal "
        "(the file of `erahbo optimize --journal PATH`, or OUT/study.db of `erahbo tune`), or "
        "a path that does not exist yet to start a new study."
    )


def _damaged(path: str, what: str) -> JournalCorruptError:
    return JournalCorruptError(
        f"journal {path} is damaged: {what}. The file was not modified. Restore it from a "
        f"backup (copy {os.path.basename(path)} together with its -wal file), or start a new "
        "study with another journal path."
    )


# --------------------------------------------------------------------------------------------
# Read-only connections that create nothing
# --------------------------------------------------------------------------------------------


def _has_log(name: str) -> bool:
    wal = name + "-wal"
    return os.path.isfile(wal) and os.path.getsize(wal) > 0


def _other_names(path: str) -> Iterator[str]:
    """Other names (hard links) of the file in its folder."""
    st = os.stat(path)
    if st.st_nlink < 2:
        return
    folder = os.path.dirname(os.path.abspath(path))
    own = os.path.basename(path)
    with contextlib.suppress(OSError), os.scandir(folder) as entries:
        for e in entries:
            if e.name != own and e.is_file(follow_symlinks=False):
                est = e.stat(follow_symlinks=False)
                if (est.st_dev, est.st_ino) == (st.st_dev, st.st_ino):
                    yield e.path


def wal_name(path: str) -> str:
    """The name SQLite keeps the journal's write-ahead log under (``NAME-wal``).

    SQLite resolves symbolic links but not hard links: the name a study opened. The path
    itself (resolved), or another hard link in its folder whose log holds commits.
    """
    real = os.path.realpath(path)
    if not _has_log(real):
        for other in _other_names(real):
            if _has_log(other):
                return other
    return real


def _uri(name: str, **params: str) -> str:
    from urllib.parse import quote

    query = "&".join(f"{k}={v}" for k, v in params.items())
    return f"file:{quote(os.path.abspath(name))}?{query}"


@contextlib.contextmanager
def read_only(path: str, *, live: bool = False) -> Iterator[sqlite3.Connection]:
    """A read-only connection to the journal that changes and creates nothing next to it.

    Parameters
    ----------
    path : str
    live : bool
        Another process has the journal open (a running study): its log is read in place,
        through the shared memory it keeps, for a consistent view.
    """
    name = wal_name(path)
    if not _has_log(name):
        conn = sqlite3.connect(_uri(name, mode="ro", immutable="1"), uri=True,
                               check_same_thread=False)
        try:
            yield conn
        finally:
            conn.close()
        return
    if live and os.path.exists(name + "-shm"):
        conn = sqlite3.connect(_uri(name, mode="ro"), uri=True, check_same_thread=False)
        try:
            yield conn
        finally:
            conn.close()
        return
    folder = tempfile.mkdtemp(prefix="erahbo-journal-")
    try:  # a stopped study's log: SQLite's read-only mode would leave -shm behind
        copy = os.path.join(folder, "journal.db")
        shutil.copyfile(name, copy)
        shutil.copyfile(name + "-wal", copy + "-wal")
        conn = sqlite3.connect(_uri(copy, mode="ro"), uri=True, check_same_thread=False)
        try:
            yield conn
        finally:
            conn.close()
    finally:
        shutil.rmtree(folder, ignore_errors=True)


# --------------------------------------------------------------------------------------------
# The file
# --------------------------------------------------------------------------------------------


def check_wal_names(path: str) -> None:
    """Refuse a hard link whose other name has a write-ahead log with commits in it.

    SQLite keeps a database's ``-wal`` file by the name it was opened with: a study that
    stopped without closing (killed) while using one name leaves its last commits in
    ``NAME-wal``, which a study using another name would not see. Only other names in the same
    folder can be found.
    """
    name = wal_name(path)
    if name != os.path.realpath(path):
        raise JournalError(
            f"journal {path} is a hard link of {name}, whose write-ahead log {name}-wal holds "
            f"commits not yet in the file (a study using the name {name} stopped without "
            f"closing it); resume it by that name (erahbo resume {name}) so that SQLite finds "
            "its log"
        )


def check_writable(path: str) -> None:
    """Refuse a journal that cannot be written: a read-only file or folder (nothing changed).

    A missing file needs a writable folder (a new study); an existing one, a writable file and
    folder (SQLite writes its ``-wal`` file beside it).
    """
    folder = os.path.dirname(os.path.abspath(path))
    exists = os.path.exists(path)
    for what, target in (("folder", folder), ("file", path)):
        if (what == "file" and not exists) or os.access(target, os.W_OK):
            continue
        ro = _read_only_fs(folder)
        why = "is on a read-only file system" if ro else "is not writable by this user"
        fix = "remount it read-write" if ro else "fix its permissions"
        if exists:
            raise JournalReadOnlyError(
                f"journal {path} cannot be resumed: its {what} {target} {why}, and a study "
                "writes its journal as it runs (SQLite its -wal file beside it). Copy the "
                "journal (with its -wal file, if any) to a writable folder and resume the copy, "
                f"or {fix}; `erahbo status {path}` reads it where it is. Nothing was changed."
            )
        raise JournalReadOnlyError(
            f"journal {path} cannot be created: its folder {folder} {why}; give a journal "
            f"path in a writable folder, or {fix}"
        )


def _read_only_fs(folder: str) -> bool:
    try:
        return bool(os.statvfs(folder).f_flag & os.ST_RDONLY)
    except (OSError, AttributeError):  # pragma: no cover - no statvfs
        return False


def validate_existing(path: str, conn: sqlite3.Connection | None = None) -> None:
    """Refuse a file that is not a usable erahbo journal; nothing is written or created.

    Parameters
    ----------
    path : str
    conn : sqlite3.Connection, optional
        A :func:`read_only` connection to it (default: one is opened and closed).

    Raises
    ------
    JournalCorruptError
        Not an erahbo journal, truncated, damaged pages or rows (the message says which).
    JournalError
        A newer schema than this erahbo reads.
    """
    size = os.path.getsize(path)
    if size == 0:
        raise _not_a_journal(path, "is an empty file (0 bytes), not an erahbo journal")
    with open(path, "rb") as fh:
        header = fh.read(100)
    if not header.startswith(_SQLITE_MAGIC):
        raise _not_a_journal(path, "is not an erahbo journal (not an SQLite database)")
    if len(header) < 100:
        raise _corrupt(path, f"is truncated ({size} bytes, shorter than an SQLite header)")
    page_size = int.from_bytes(header[16:18], "big")
    page_size = 65536 if page_size == 1 else page_size
    n_pages = int.from_bytes(header[28:32], "big")
    counter_ok = header[24:28] == header[92:96]
    if counter_ok and n_pages and size < n_pages * page_size:
        raise _corrupt(path, f"is truncated ({size} bytes, its header says {n_pages * page_size})")
    try:
        if conn is None:
            with read_only(path) as c:
                _check_database(path, c)
        else:
            _check_database(path, conn)
    except sqlite3.DatabaseError as exc:
        if isinstance(exc, sqlite3.OperationalError) and "unable to open" in str(exc):
            raise JournalError(f"journal {path} cannot be read (sqlite: {exc}); check that the "
                               "file and its folder are readable by this user") from exc
        raise _corrupt(path, f"is corrupted or truncated (sqlite: {exc})") from exc


def _check_database(path: str, con: sqlite3.Connection) -> None:
    app_id = con.execute("PRAGMA application_id").fetchone()[0]
    version = con.execute("PRAGMA user_version").fetchone()[0]
    if app_id != APPLICATION_ID:
        raise _not_a_journal(path, "is an SQLite database but not an erahbo journal")
    if version > SCHEMA_VERSION:
        raise JournalError(
            f"journal {path} has schema version {version}, newer than this erahbo "
            f"supports ({SCHEMA_VERSION}); upgrade erahbo to resume it"
        )
    # integrity_check, not quick_check: also that every index matches its table
    check = [r[0] for r in con.execute("PRAGMA integrity_check(10)").fetchall()]
    if check != ["ok"]:
        raise _corrupt(path, f"is corrupted (sqlite integrity_check: {'; '.join(check[:3])})")
    tables = {r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    if not _TABLES <= tables:
        raise _corrupt(path, f"lacks the tables {sorted(_TABLES - tables)}")
    if con.execute("SELECT COUNT(*) FROM study").fetchone()[0] != 1:
        raise _corrupt(path, "has no study settings")
    check_rows(path, con, budget_steps="budget_steps" in tables)


# --------------------------------------------------------------------------------------------
# Every row
# --------------------------------------------------------------------------------------------


class _Row:
    """One row: raw values by column name (text as bytes), and where it is, for messages."""

    __slots__ = ("cols", "values", "where")

    def __init__(self, cols: dict[str, int], values: tuple[Any, ...], where: str) -> None:
        self.cols, self.values, self.where = cols, values, where

    def __getitem__(self, col: str) -> Any:
        return self.values[self.cols[col]]


class _Rows:
    """Reads rows with raw bytes for text, and names the first bad value."""

    def __init__(self, path: str, con: sqlite3.Connection) -> None:
        self.path, self.con = path, con

    def rows(self, table: str, cols: list[str], key: str) -> Iterator[_Row]:
        old = self.con.text_factory
        self.con.text_factory = bytes
        try:
            data = self.con.execute(f"SELECT {', '.join(cols)} FROM {table} "
                                    f"ORDER BY {key}").fetchall()
        finally:
            self.con.text_factory = old
        index = {c: i for i, c in enumerate(cols)}
        k = index[key]
        for values in data:
            yield _Row(index, values, f"{table} row {key} {values[k]!r}")

    def bad(self, row: _Row, col: str, what: str) -> JournalCorruptError:
        return _damaged(self.path, f"{row.where}: column {col} {what}")

    def text(self, row: _Row, col: str, *, null: bool = False) -> str | None:
        value = row[col]
        if value is None and null:
            return None
        if not isinstance(value, bytes):
            raise self.bad(row, col, f"holds {type(value).__name__} {value!r}, not text")
        try:
            return value.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise self.bad(row, col, f"is not UTF-8 text (byte {exc.start})") from None

    def json(self, row: _Row, col: str, typ: type, *, null: bool = False) -> Any:
        text = self.text(row, col, null=null)
        if text is None:
            return None
        try:
            value = json.loads(text)
        except ValueError as exc:
            raise self.bad(row, col, f"is not valid JSON ({exc})") from None
        if not isinstance(value, typ):
            raise self.bad(row, col, f"holds a {type(value).__name__}, not a {typ.__name__}")
        return value

    def types(self, table: str, key: str, spec: dict[str, str]) -> None:
        """Refuse the first row whose columns hold other SQLite types than ``spec`` says.

        ``spec``: column -> ``"integer"``, ``"real"``, ``"number"`` (either) or ``"text"``;
        a trailing ``"?"`` allows NULL.
        """
        allowed = {}
        for col, kind in spec.items():
            base = {"integer": ["integer"], "real": ["real"], "number": ["real", "integer"],
                    "text": ["text"]}[kind.rstrip("?")]
            allowed[col] = base + (["null"] if kind.endswith("?") else [])
        where = " OR ".join(f"typeof({c}) NOT IN ({', '.join(map(repr, a))})"
                            for c, a in allowed.items())
        got = self.con.execute(f"SELECT {key}, {', '.join(f'typeof({c})' for c in allowed)} "
                               f"FROM {table} WHERE {where} ORDER BY {key} LIMIT 1").fetchone()
        if got is None:
            return
        for (col, ok), kind in zip(allowed.items(), got[1:], strict=True):
            if kind not in ok:
                raise _damaged(self.path, f"{table} row {key} {got[0]!r}: column {col} holds "
                               f"{kind}, not {spec[col].rstrip('?')}")


def check_rows(path: str, con: sqlite3.Connection, *, budget_steps: bool = False) -> None:
    """Refuse damaged rows (module docstring); the message names the table, row and column.

    Raises
    ------
    JournalCorruptError
    """
    r = _Rows(path, con)
    r.types("study", "id", {"settings": "text", "settings_hash": "text", "info": "text?",
                            "created_at": "number", "erahbo_version": "text"})
    for row in r.rows("study", ["id", "settings", "settings_hash", "info"], "id"):
        text = r.text(row, "settings")
        r.json(row, "settings", dict)
        if hashlib.sha256(text.encode()).hexdigest() != r.text(row, "settings_hash"):
            raise r.bad(row, "settings", "does not match its SHA-256 (settings_hash): the "
                        "settings or their hash changed")
        r.json(row, "info", dict, null=True)
    r.types("trials", "trial_id", {"trial_id": "integer", "round": "integer?", "config": "text",
                                   "seeds": "text", "asked_at": "number", "told_at": "number?",
                                   "returns": "text?", "excluded": "integer"})
    seeds: dict[int, list[int]] = {}
    told: dict[int, bool] = {}
    cols = ["trial_id", "config_id", "config", "seeds", "told_at", "returns", "excluded"]
    for i, row in enumerate(r.rows("trials", cols, "trial_id")):
        tid = row["trial_id"]
        if tid != i:
            raise r.bad(row, "trial_id", f"is {tid}, expected {i} (trials are numbered 0, 1, ...)")
        if isinstance(row["config_id"], bytes):
            r.text(row, "config_id")
        r.json(row, "config", dict)
        sd = r.json(row, "seeds", list)
        if not sd or not all(isinstance(s, int) and not isinstance(s, bool) for s in sd):
            raise r.bad(row, "seeds", f"is {sd!r}, not a list of integer seeds")
        seeds[tid] = sd
        told_at = row["told_at"]
        ret = r.json(row, "returns", list, null=True)
        if (told_at is None) != (ret is None):
            raise r.bad(row, "returns", "and told_at disagree (a told trial has both)")
        if ret is not None and not all(isinstance(v, int | float) for v in ret):
            raise r.bad(row, "returns", "holds values that are not numbers")
        if row["excluded"] not in (0, 1):
            raise r.bad(row, "excluded", "is not 0 or 1")
        told[tid] = told_at is not None
    r.types("runs", "run_id", {"run_id": "integer", "trial_id": "integer", "slot": "integer",
                               "attempt": "integer", "seed": "integer", "status": "text",
                               "value": "real?", "raw": "real?", "error": "text?",
                               "started_at": "number", "ended_at": "number?",
                               "worker": "text?", "rerun": "integer"})
    cols = ["run_id", "trial_id", "slot", "attempt", "seed", "status", "value", "raw", "error",
            "worker", "rerun"]
    for row in r.rows("runs", cols, "run_id"):
        tid = row["trial_id"]
        if tid not in seeds:
            raise r.bad(row, "trial_id", f"names trial {tid}, which does not exist")
        slot, attempt, seed = row["slot"], row["attempt"], row["seed"]
        sd = seeds[tid]
        if not 0 <= slot < len(sd):
            raise r.bad(row, "slot", f"is {slot}; trial {tid} has {len(sd)} seeds")
        if attempt < 0:
            raise r.bad(row, "attempt", "is negative")
        if seed != (sd[slot] if attempt == 0 else retry_seed(sd[slot], attempt, sd)):
            raise r.bad(row, "seed", f"is {seed}, not the seed of slot {slot}, attempt "
                        f"{attempt} of trial {tid}")
        status = r.text(row, "status")
        if status not in STATUSES:
            raise r.bad(row, "status", f"is {status!r}, not one of {', '.join(STATUSES)}")
        for c in ("value", "raw"):
            if row[c] is not None and not math.isfinite(row[c]):
                raise r.bad(row, c, f"is {row[c]}")
        r.text(row, "error", null=True)
        r.text(row, "worker", null=True)
        if row["rerun"] not in (0, 1):
            raise r.bad(row, "rerun", "is not 0 or 1")
    asked: set[int] = set()
    tells: set[int] = set()
    r.types("events", "seq", {"seq": "integer", "kind": "text", "trial_id": "integer"})
    for row in r.rows("events", ["seq", "kind", "trial_id"], "seq"):
        kind = r.text(row, "kind")
        tid = row["trial_id"]
        if tid not in seeds:
            raise r.bad(row, "trial_id", f"names trial {tid}, which does not exist")
        if kind == "ask" and tid not in asked:
            asked.add(tid)
        elif kind == "tell" and tid in asked and tid not in tells and told[tid]:
            tells.add(tid)
        else:
            raise r.bad(row, "kind", f"is {kind!r} for trial {tid}, which cannot follow the "
                        "events before it (each trial is asked once, then told once)")
    missing = sorted(set(seeds) - asked) or sorted(t for t, v in told.items()
                                                    if v and t not in tells)
    if missing:
        raise _damaged(path, f"events lack trial {missing[0]} (asked or told)")
    if budget_steps:
        spec = {"seq": "integer", "n_events": "integer", "budget": "integer"}
        r.types("budget_steps", "seq", spec)
        for row in r.rows("budget_steps", list(spec), "seq"):
            for c in spec:
                if row[c] < 0:
                    raise r.bad(row, c, "is negative")
