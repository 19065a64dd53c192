"""Crash-safe study journal (SQLite): storage, schema, writers, readers and errors.

A journal is one SQLite file that records a study as it happens: its settings, every trial the
optimizer asked for (configuration and seeds), every training run (seed, return, status,
start/end time, worker) and every result told back. Each record is committed before the
study moves on, so a study killed at any instant loses nothing that was acknowledged.

Resume is *exact* by replay: a fresh optimizer built with the same settings is driven through
the journaled events instead of calling the objective (:mod:`erahbo.runtime.replay`). Runs that
were in flight at a crash (started, no result) are marked ``interrupted``
(:meth:`Journal.mark_interrupted`) and re-run with the same seed (``rerun=1``); they are never
counted twice (a unique index allows one counted run per seed slot).

Durability choices
------------------
* ``journal_mode=WAL``: a commit appends to the ``-wal`` file; readers never block the writer.
* ``synchronous=FULL`` (default): the WAL is fsynced at every commit, so an acknowledged run
  survives a power loss or kernel crash too, not only a crash of the study process. Training
  runs last minutes to hours; an fsync costs about a millisecond (``benchmarks/bench_journal.py``).
  ``synchronous="NORMAL"`` survives process crashes (SIGKILL) but may lose the last commits on
  power loss.
* A new journal is built in a temporary file and linked into place, so a crash during creation
  never leaves a half-made journal; an existing file is checked whole before anything is
  written (:mod:`erahbo.runtime.journal_check`), never overwritten or repaired.
* One study process per journal: an advisory lock (``flock``) on the journal file itself, so
  every name of it (symbolic or hard link) shares the lock; released by the OS when the
  process dies, so a killed study can be resumed at once. No lock file is created.

Schema (version 1; ``PRAGMA application_id`` marks the file as an erahbo journal)
--------------------------------------------------------------------------------
``study``   settings (canonical JSON), their SHA-256, free-form info, creation time, version
``trials``  trial_id, round, config_id, config (JSON), seeds (JSON), asked_at, told_at,
            returns told (JSON), excluded
``runs``    run_id, trial_id, slot, attempt, seed, status, value, raw, error, started_at,
            ended_at, worker, rerun
``events``  seq, kind ("ask" / "tell"), trial_id: the order in which the optimizer saw things

Run statuses: ``running``, ``ok``, ``penalized``, ``retried``, ``failed``, ``interrupted``
(see :mod:`erahbo.optimizer.failure`). Counted runs are ``ok`` and ``penalized``.

Testing hook: with the environment variable ``ERAHBO_JOURNAL_KILL_AFTER=N`` a journal SIGKILLs
its own process right after its N-th commit (fault-injection tests).
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from erahbo._lockfile import unlock_inode
from erahbo.optimizer.outcomes import RunOutcome, TrialOutcome
from erahbo.runtime.journal_check import check_wal_names, check_writable, validate_existing
from erahbo.runtime.journal_extensions import JournalExtensions
from erahbo.runtime.journal_format import (
    KILL_ENV,
    SCHEMA_VERSION,
    JournalCorruptError,
    JournalError,
    JournalLockedError,
    JournalReadOnlyError,
    JournalWriteError,
    ReplayDivergenceError,
    RunRecord,
    SettingsMismatchError,
    TrialRecord,
    canonical_json,
    create_journal,
    finite_or_none,
    lock_journal,
    plain_json,
    run_from_row,
    settings_diff,
    settings_hash,
    write_error,
)
from erahbo.validation import check_journal_path

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "SCHEMA_VERSION",
    "Journal",
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
    "journal_version",
    "mismatch_message",
    "settings_hash",
]


# --------------------------------------------------------------------------------------------
# Journal
# --------------------------------------------------------------------------------------------


def mismatch_message(path: Any, diff: list[str]) -> str:
    """The message of :class:`SettingsMismatchError`: the settings that differ (``diff``, lines
    of :func:`settings_diff`) and the three ways on."""
    return (f"journal {path} holds a study with other settings:\n  "
            + "\n  ".join(diff or ["(same keys, different canonical form)"])
            + "\nTo resume it, pass the same settings (or run `erahbo resume "
            f"{path}`); to give it more budget, change only the budget (or run `erahbo "
            f"resume {path} --budget N`); to start a new study, use another journal path.")


class Journal(JournalExtensions):
    """An open study journal. Create or resume with :meth:`Journal.open`.

    Writes are single transactions, committed (and, with ``synchronous="FULL"``, fsynced)
    before the method returns. The object is thread-safe.
    """

    def __init__(self, path: str, conn: sqlite3.Connection, lock: Any, created: bool) -> None:
        self.path = path
        self.created = created
        self.commits = 0
        self._conn = conn
        self._lockfile = lock
        self._mutex = threading.RLock()
        self._closed = False
        row = conn.execute(
            "SELECT settings, settings_hash, info, created_at FROM study"
        ).fetchone()
        self.settings: dict[str, Any] = json.loads(row["settings"])
        self.created_at: float = float(row["created_at"])  # Unix time the study began
        self.settings_hash: str = row["settings_hash"]
        self.info: dict[str, Any] = json.loads(row["info"]) if row["info"] else {}
        kill = os.environ.get(KILL_ENV, "")
        self._kill_after = int(kill) if kill.strip().isdigit() else 0
        self.on_commit: Callable[[int], None] | None = None  # test hook, after each commit
        self._pending_info: str | None = None  # new info, committed before the next record

    # -- opening --------------------------------------------------------------------------------

    @classmethod
    def open(
        cls,
        path: str | os.PathLike[str],
        settings: Mapping[str, Any] | None = None,
        *,
        info: Mapping[str, Any] | None = None,
        synchronous: str = "FULL",
    ) -> Journal:
        """Create a journal, or open an existing one to resume its study.

        Parameters
        ----------
        path : str or path-like
            The journal file. Created if absent (its folder must exist).
        settings : mapping, optional
            JSON-able settings that determine the optimizer's decisions (method, alpha, beta,
            k_min, k_max, budget, seed, space description...). An existing journal must hold
            the same settings (compared by canonical JSON). None opens an existing journal with
            the settings it holds (``erahbo resume PATH``).
        info : mapping, optional
            JSON-able facts that do not affect decisions (executor, objective name...): stored,
            replaced on each open (with the first record written after it), never compared.
        synchronous : {"FULL", "NORMAL"}
            SQLite durability (module docstring).

        Returns
        -------
        Journal
            ``journal.created`` tells whether it is new.

        Raises
        ------
        SettingsMismatchError
            The file holds a study with other settings (the message lists them).
        JournalCorruptError
            The file is not an erahbo journal, or is truncated or corrupted.
        JournalLockedError
            Another process has it open.
        """
        p = check_journal_path(path)
        sync = str(synchronous).upper()
        if sync not in ("FULL", "NORMAL", "EXTRA"):
            raise ValueError(f"synchronous={synchronous!r}: use 'FULL' or 'NORMAL'")
        new_settings = (
            None if settings is None else json.loads(canonical_json(settings, "settings"))
        )
        info_json = None if info is None else canonical_json(info, "info")
        lock = None
        try:
            created = False
            if not os.path.exists(p):
                if new_settings is None:
                    raise FileNotFoundError(
                        f"journal {p} does not exist; pass the study settings to start a new one"
                    )
                if os.path.islink(p):
                    raise ValueError(
                        f"journal {p} is a symbolic link to {os.readlink(p)}, which does not "
                        "exist; give the path of the journal itself, or remove the link"
                    )
                check_writable(p)
                try:
                    lock = create_journal(p, new_settings, info_json)
                    created = True
                except FileExistsError:  # created meanwhile by another process: resume it
                    pass
                except (OSError, sqlite3.OperationalError) as exc:
                    raise write_error(p, "could not create the journal", exc) from None
            if not created:
                lock = lock_journal(p)  # check, then write: nothing is written to a bad file
                check_wal_names(p)
                validate_existing(p)
                check_writable(p)
            try:
                conn = sqlite3.connect(p, isolation_level=None, check_same_thread=False)
            except sqlite3.Error as exc:
                raise write_error(p, "could not open the journal", exc) from None
            conn.row_factory = sqlite3.Row
            try:
                try:
                    mode = conn.execute("PRAGMA journal_mode=WAL").fetchone()[0]
                    if mode.lower() != "wal":  # pragma: no cover - e.g. network filesystems
                        conn.execute("PRAGMA journal_mode=DELETE")
                    conn.execute(f"PRAGMA synchronous={sync}")
                    conn.execute("PRAGMA foreign_keys=ON")
                    conn.execute("PRAGMA busy_timeout=10000")
                except sqlite3.OperationalError as exc:
                    raise write_error(p, "could not open the journal", exc) from None
                journal = cls(p, conn, lock, created)
            except BaseException:
                conn.close()
                raise
        except BaseException:
            unlock_inode(lock)
            raise
        if new_settings is not None and not created:
            if settings_hash(new_settings) != journal.settings_hash:
                diff = settings_diff(journal.settings, new_settings)
                journal.close()
                raise SettingsMismatchError(mismatch_message(p, diff))
        if info_json is not None and not created:  # written with the first record (_tx)
            journal._pending_info = info_json
            journal.info = json.loads(info_json)
        return journal

    def close(self) -> None:
        """Close the connection and release the lock. Safe to call twice."""
        with self._mutex:
            if self._closed:
                return
            self._closed = True
            with contextlib.suppress(sqlite3.Error):
                self._conn.close()
            unlock_inode(self._lockfile)  # after the connection: see unlock_inode

    def _abandon(self) -> None:
        """Drop the connection and lock without any cleanup (tests: simulate a crash)."""
        self.close()

    @property
    def closed(self) -> bool:
        """Whether :meth:`close` was called."""
        return self._closed

    def __enter__(self) -> Journal:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"Journal({self.path!r}, trials={self.n_trials()}, runs={self.n_runs()})"

    # -- transactions ---------------------------------------------------------------------------

    @contextlib.contextmanager
    def _tx(self) -> Iterator[sqlite3.Connection]:
        """One write transaction; a failed write (full disk, I/O error) is rolled back and
        raised as :class:`JournalWriteError` (what was committed before is kept).

        New info given to :meth:`open` is committed first, on its own: a journal that is
        only replayed (or refused by the replay) is not written at all.
        """
        if self._pending_info is not None:
            info, self._pending_info = self._pending_info, None
            with self._tx() as c:
                c.execute("UPDATE study SET info = ?", (info,))
        with self._mutex:
            if self._closed:
                raise JournalError(f"journal {self.path} is closed")
            try:
                self._conn.execute("BEGIN IMMEDIATE")
                try:
                    yield self._conn
                    self._conn.execute("COMMIT")
                except BaseException:
                    with contextlib.suppress(sqlite3.Error):  # SQLite may have rolled back
                        self._conn.execute("ROLLBACK")
                    raise
            except sqlite3.OperationalError as exc:
                raise write_error(self.path, "could not record the study's progress",
                                  exc) from None
            self.commits += 1
        if self._kill_after and self.commits >= self._kill_after:
            os.kill(os.getpid(), signal.SIGKILL)
        if self.on_commit is not None:
            self.on_commit(self.commits)

    # -- writes ---------------------------------------------------------------------------------

    def record_trial(
        self,
        config: Mapping[str, Any],
        seeds: Sequence[int],
        *,
        config_id: Any = None,
        round: int | None = None,
    ) -> int:
        """Record an asked trial (before any of its runs starts). Returns its trial id."""
        cfg = canonical_json(config, "trial.config")
        sd = canonical_json([int(s) for s in seeds], "trial.seeds")
        cid = None if config_id is None else plain_json(config_id, "trial.config_id")
        if isinstance(cid, list | dict):
            cid = canonical_json(cid)
        with self._tx() as c:
            tid = c.execute("SELECT COALESCE(MAX(trial_id) + 1, 0) FROM trials").fetchone()[0]
            c.execute(
                "INSERT INTO trials (trial_id, round, config_id, config, seeds, asked_at) "
                "VALUES (?, ?, ?, ?, ?, ?)",
                (tid, round, cid, cfg, sd, time.time()),
            )
            c.execute("INSERT INTO events (kind, trial_id) VALUES ('ask', ?)", (tid,))
        return int(tid)

    def record_run_start(
        self, trial_id: int, slot: int, seed: int, attempt: int = 0, *, rerun: bool = False
    ) -> int:
        """Record that a run is submitted (status ``running``). Returns its run id."""
        with self._tx() as c:
            cur = c.execute(
                "INSERT INTO runs (trial_id, slot, attempt, seed, status, started_at, rerun) "
                "VALUES (?, ?, ?, ?, 'running', ?, ?)",
                (trial_id, slot, attempt, int(seed), time.time(), int(rerun)),
            )
        return int(cur.lastrowid)  # type: ignore[arg-type]

    def record_run_end(self, run_id: int, outcome: RunOutcome) -> None:
        """Record the result of a running run (penalty values are set by :meth:`record_tell`)."""
        if outcome.status not in ("ok", "penalized", "retried", "failed"):
            raise ValueError(f"run status {outcome.status!r} is not a final status")
        value = outcome.raw if outcome.status == "ok" else None
        with self._tx() as c:
            cur = c.execute(
                "UPDATE runs SET status = ?, value = ?, raw = ?, error = ?, started_at = ?, "
                "ended_at = ?, worker = ? WHERE run_id = ? AND status = 'running'",
                (
                    outcome.status,
                    value,
                    finite_or_none(outcome.raw),
                    outcome.error,
                    outcome.start,
                    outcome.end,
                    outcome.worker,
                    run_id,
                ),
            )
            if cur.rowcount != 1:
                raise JournalError(f"run {run_id} is not a running run of {self.path}")

    def mark_interrupted(self) -> list[RunRecord]:
        """Mark every ``running`` run as ``interrupted`` (call once when resuming).

        Returns
        -------
        list of RunRecord
            The runs that were in flight at the crash (before the change).
        """
        stale = self.in_flight()
        if stale:
            with self._tx() as c:
                c.execute("UPDATE runs SET status = 'interrupted' WHERE status = 'running'")
        return stale

    def record_tell(
        self, trial_id: int, outcome: TrialOutcome, *, record_runs: bool = False
    ) -> None:
        """Record what is told to the optimizer for a trial (before telling it).

        Parameters
        ----------
        trial_id : int
        outcome : TrialOutcome
            From :func:`erahbo.runtime.evaluate.evaluate` (whose runs the recorder already
            journaled) or :func:`erahbo.optimizer.outcomes.outcomes_from_returns`.
        record_runs : bool
            Also insert ``outcome.runs`` as finished runs (ask/tell mode, where the user ran the
            seeds), in the same transaction.
        """
        returns = [float(v) for v in outcome.returns]
        pens = {r.value_used for r in outcome.runs if r.status == "penalized"}
        with self._tx() as c:
            row = c.execute("SELECT told_at FROM trials WHERE trial_id = ?", (trial_id,)).fetchone()
            if row is None:
                raise JournalError(f"trial {trial_id} was never recorded in {self.path}")
            if row["told_at"] is not None:
                raise JournalError(f"trial {trial_id} was already told; tell each trial once")
            if record_runs:
                c.executemany(
                    "INSERT INTO runs (trial_id, slot, attempt, seed, status, value, raw, error, "
                    "started_at, ended_at, worker, rerun) VALUES (?,?,?,?,?,?,?,?,?,?,?,?)",
                    [
                        (
                            trial_id,
                            r.slot,
                            r.attempt,
                            r.seed,
                            r.status,
                            finite_or_none(r.value_used),
                            finite_or_none(r.raw),
                            r.error,
                            r.start,
                            r.end,
                            r.worker,
                            int(r.rerun),
                        )
                        for r in outcome.runs
                    ],
                )
            for pen in pens:
                c.execute(
                    "UPDATE runs SET value = ? WHERE trial_id = ? AND status = 'penalized'",
                    (pen, trial_id),
                )
            c.execute(
                "UPDATE trials SET told_at = ?, returns = ?, excluded = ? WHERE trial_id = ?",
                (time.time(), json.dumps(returns), int(outcome.excluded), trial_id),
            )
            c.execute("INSERT INTO events (kind, trial_id) VALUES ('tell', ?)", (trial_id,))

    def recorder(self, trial_id: int) -> _TrialRecorder:
        """A :class:`erahbo.runtime.failures.RunRecorder` writing the runs of one trial."""
        return _TrialRecorder(self, trial_id)

    # -- reads ----------------------------------------------------------------------------------

    def _rows(self, sql: str, args: tuple[Any, ...] = ()) -> list[sqlite3.Row]:
        with self._mutex:
            try:
                return self._conn.execute(sql, args).fetchall()
            except sqlite3.DatabaseError as exc:  # not its subclasses: a damaged file
                if type(exc) is not sqlite3.DatabaseError:
                    raise
                raise JournalCorruptError(f"journal {self.path} is corrupted (sqlite: {exc}); "
                                          "restore it from a backup or start a new study") from exc

    def runs(self, trial_id: int | None = None) -> list[RunRecord]:
        """Runs in the order they were submitted (all trials, or one)."""
        if trial_id is None:
            rows = self._rows("SELECT * FROM runs ORDER BY run_id")
        else:
            rows = self._rows("SELECT * FROM runs WHERE trial_id = ? ORDER BY run_id", (trial_id,))
        return [run_from_row(r) for r in rows]

    def in_flight(self) -> list[RunRecord]:
        """Runs started but without a result (after a crash: the ones to re-run)."""
        rows = self._rows("SELECT * FROM runs WHERE status = 'running' ORDER BY run_id")
        return [run_from_row(r) for r in rows]

    def trials(self) -> list[TrialRecord]:
        """All trials in the order they were asked, each with its runs."""
        by_trial: dict[int, list[RunRecord]] = {}
        for r in self.runs():
            by_trial.setdefault(r.trial_id, []).append(r)
        out = []
        for row in self._rows("SELECT * FROM trials ORDER BY trial_id"):
            cid = row["config_id"]
            out.append(
                TrialRecord(
                    trial_id=row["trial_id"],
                    round=row["round"],
                    config_id=cid,
                    config=json.loads(row["config"]),
                    seeds=json.loads(row["seeds"]),
                    asked_at=row["asked_at"],
                    told_at=row["told_at"],
                    returns=None if row["returns"] is None else json.loads(row["returns"]),
                    excluded=bool(row["excluded"]),
                    runs=tuple(by_trial.get(row["trial_id"], ())),
                )
            )
        return out

    def events(self) -> list[tuple[str, int]]:
        """``("ask" | "tell", trial_id)`` in the order the optimizer saw them."""
        return [(r["kind"], r["trial_id"]) for r in self._rows("SELECT * FROM events ORDER BY seq")]

    def pending(self) -> list[TrialRecord]:
        """Trials asked but not told (after a crash: the ones to finish)."""
        return [t for t in self.trials() if not t.told]

    def feasible_returns(self) -> list[float]:
        """Raw returns of the ``ok`` runs of told trials, in run order (rebuilds the Penalizer)."""
        rows = self._rows(
            "SELECT r.raw FROM runs r JOIN trials t USING (trial_id) "
            "WHERE r.status = 'ok' AND t.told_at IS NOT NULL ORDER BY r.run_id"
        )
        return [float(r[0]) for r in rows]

    def outlying_returns(self) -> list[float]:
        """Finite raw returns of failed runs of told trials: runs that failed as outliers
        (:mod:`erahbo.optimizer.outliers`; other failed runs have no return). Rebuilds the
        Penalizer's scale."""
        rows = self._rows(
            "SELECT r.raw FROM runs r JOIN trials t USING (trial_id) "
            "WHERE r.status IN ('penalized', 'retried', 'failed') AND r.raw IS NOT NULL "
            "AND t.told_at IS NOT NULL ORDER BY r.run_id"
        )
        return [float(r[0]) for r in rows]

    def n_trials(self, *, told: bool = False) -> int:
        sql = "SELECT COUNT(*) FROM trials" + (" WHERE told_at IS NOT NULL" if told else "")
        return int(self._rows(sql)[0][0])

    def n_runs(self) -> int:
        return int(self._rows("SELECT COUNT(*) FROM runs")[0][0])

    def n_counted(self) -> int:
        """Counted runs (ok or penalized) of told trials: what a budget of runs counts."""
        return int(
            self._rows(
                "SELECT COUNT(*) FROM runs r JOIN trials t USING (trial_id) "
                "WHERE r.status IN ('ok', 'penalized') AND t.told_at IS NOT NULL"
            )[0][0]
        )

    def history(self) -> pd.DataFrame:
        """One row per run: trial and run fields, ``counted`` flag, ``config`` as a dict.

        Columns: run_id, trial_id, round, config_id, config, slot, attempt, seed, status,
        counted, value, raw, error, start, end, worker, rerun, excluded.
        """
        import pandas as pd

        trials = {t.trial_id: t for t in self.trials()}
        rows = []
        for r in self.runs():
            t = trials[r.trial_id]
            rows.append({
                "run_id": r.run_id, "trial_id": r.trial_id, "round": t.round,
                "config_id": t.config_id, "config": t.config, "slot": r.slot,
                "attempt": r.attempt, "seed": r.seed, "status": r.status, "counted": r.counted,
                "value": r.value_used, "raw": r.raw, "error": r.error, "start": r.start,
                "end": r.end, "worker": r.worker, "rerun": r.rerun, "excluded": t.excluded,
            })
        return pd.DataFrame(rows)


class _TrialRecorder:
    """Journals the runs of one trial (see :class:`erahbo.runtime.failures.RunRecorder`)."""

    def __init__(self, journal: Journal, trial_id: int) -> None:
        self.journal = journal
        self.trial_id = trial_id

    def run_started(self, slot: int, seed: int, attempt: int, rerun: bool) -> int:
        return self.journal.record_run_start(self.trial_id, slot, seed, attempt, rerun=rerun)

    def run_finished(self, token: int, outcome: RunOutcome) -> None:
        self.journal.record_run_end(token, outcome)


def journal_version(journal: Journal) -> str:
    """erahbo version that created the journal."""
    return str(journal._rows("SELECT erahbo_version FROM study")[0][0])
