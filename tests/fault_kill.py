"""Fault-injection helpers: run a study in a subprocess and SIGKILL it at chosen points.

Two ways to choose the point:

* ``kill_after_commits=N``: the journal of the study process SIGKILLs its own process right
  after its N-th commit (environment variable ``ERAHBO_JOURNAL_KILL_AFTER``, read by
  :class:`erahbo.runtime.journal.Journal`). Deterministic; covers every commit boundary, including
  the window between "run started" and "run finished".
* ``kill_after_seconds=T`` / ``kill_when_runs=N``: this process SIGKILLs the study from outside,
  after T seconds or once the journal holds N runs (polled read-only). Not aligned with
  commits: the kill can land anywhere, inside a transaction or inside the objective.

Then an interrupted-and-resumed study is compared with an uninterrupted one
(:func:`check_no_loss_no_duplicates`). The study scripts are in ``tests/fault_injection.py``.
"""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from forked_app import start_script

HERE = Path(__file__).resolve().parent
SRC = HERE.parent / "src"
KILL_ENV = "ERAHBO_JOURNAL_KILL_AFTER"


# --------------------------------------------------------------------------------------------
# Running and killing a study process
# --------------------------------------------------------------------------------------------


@dataclass
class Attempt:
    """One run of the study process."""

    returncode: int
    killed: bool
    seconds: float
    stdout: str = ""
    stderr: str = ""
    runs_at_kill: int | None = field(default=None)


def count_runs(journal: str | os.PathLike[str]) -> int:
    """Runs in a journal, read without writing (0 if it does not exist yet)."""
    if not os.path.exists(journal):
        return 0
    try:
        con = sqlite3.connect(f"file:{os.fspath(journal)}?mode=ro", uri=True, timeout=5)
        try:
            return int(con.execute("SELECT COUNT(*) FROM runs").fetchone()[0])
        finally:
            con.close()
    except sqlite3.Error:
        return 0


def run_study_process(
    argv: list[str],
    *,
    kill_after_commits: int | None = None,
    kill_after_seconds: float | None = None,
    kill_when_runs: tuple[str, int] | None = None,
    env: dict[str, str] | None = None,
    timeout: float = 120.0,
) -> Attempt:
    """Run ``python argv...`` and SIGKILL it at the chosen point (or let it finish).

    Parameters
    ----------
    argv : list of str
        Script and arguments, run with this interpreter; ``src/`` is put on PYTHONPATH.
    kill_after_commits : int, optional
        The study's journal kills its process after this many commits.
    kill_after_seconds : float, optional
        SIGKILL from outside after this many seconds.
    kill_when_runs : (journal path, n), optional
        SIGKILL from outside once the journal holds ``n`` runs (polled every 5 ms).
    env : dict, optional
        Extra environment variables.
    timeout : float
        Hard limit; the process is killed and an error raised past it.

    Returns
    -------
    Attempt
        ``killed`` is True when the process died of SIGKILL.
    """
    full_env = os.environ.copy()
    full_env["PYTHONPATH"] = os.pathsep.join(
        [str(SRC), str(HERE), *filter(None, [full_env.get("PYTHONPATH")])]
    )
    full_env.pop(KILL_ENV, None)
    if kill_after_commits is not None:
        full_env[KILL_ENV] = str(int(kill_after_commits))
    full_env.update(env or {})
    t0 = time.monotonic()
    # a process of its own, forked from a server that imported erahbo and the study script
    # once (tests/forked_app.py), as ``python argv...`` would run it
    proc = start_script(*argv, env=full_env)
    runs_at_kill = None
    try:
        if kill_after_seconds is not None:
            try:
                proc.wait(kill_after_seconds)
            except subprocess.TimeoutExpired:
                proc.send_signal(signal.SIGKILL)
        elif kill_when_runs is not None:
            path, n = kill_when_runs
            while proc.poll() is None and time.monotonic() - t0 < timeout:
                if count_runs(path) >= n:
                    proc.send_signal(signal.SIGKILL)
                    runs_at_kill = n
                    break
                time.sleep(0.005)
        out, err = proc.communicate(timeout=max(1.0, timeout - (time.monotonic() - t0)))
    except subprocess.TimeoutExpired:
        proc.kill()
        out, err = proc.communicate()
        raise RuntimeError(f"study process exceeded {timeout} s:\n{err[-2000:]}") from None
    return Attempt(
        returncode=proc.returncode,
        killed=proc.returncode == -signal.SIGKILL,
        seconds=time.monotonic() - t0,
        stdout=out,
        stderr=err,
        runs_at_kill=runs_at_kill,
    )


def kill_and_resume(argv: list[str], kill_points: list[int], **kwargs: Any) -> list[Attempt]:
    """Run the study, killing it after ``kill_points[i]`` commits of attempt ``i``; finish it.

    Each attempt resumes the journal left by the previous one. Returns every attempt; the last
    one ran to completion (an error is raised if any attempt failed otherwise).
    """
    attempts = []
    for n in [*kill_points, None]:
        a = run_study_process(argv, kill_after_commits=n, **kwargs)
        attempts.append(a)
        if not a.killed and a.returncode != 0:
            raise RuntimeError(f"study process failed (rc={a.returncode}):\n{a.stderr[-3000:]}")
        if not a.killed:
            break
    return attempts


# --------------------------------------------------------------------------------------------
# Comparing an interrupted-and-resumed study with an uninterrupted one
# --------------------------------------------------------------------------------------------


def progress(con_or_path: Any) -> int:
    """How far a study got: events + live runs + finished runs.

    Every commit moves it up by one, except marking runs interrupted at a resume (down by
    their number), so a re-run's start brings it back to where the crash left it.
    """
    con = (
        con_or_path if isinstance(con_or_path, sqlite3.Connection) else sqlite3.connect(con_or_path)
    )
    try:
        n = con.execute(
            "SELECT (SELECT COUNT(*) FROM events) + "
            "(SELECT COUNT(*) FROM runs WHERE status != 'interrupted') + "
            "(SELECT COUNT(*) FROM runs WHERE status NOT IN ('running', 'interrupted'))"
        ).fetchone()[0]
    finally:
        if con is not con_or_path:
            con.close()
    return int(n)


def snapshot(path: str) -> tuple[list, list, list]:
    """What must be identical between an interrupted-and-resumed and an uninterrupted study."""
    con = sqlite3.connect(path)
    trials = con.execute(
        "SELECT trial_id, round, config_id, config, seeds, returns, excluded FROM trials "
        "ORDER BY trial_id"
    ).fetchall()
    finished = sorted(
        con.execute(
            "SELECT trial_id, slot, attempt, seed, status, value, raw, error IS NULL FROM runs "
            "WHERE status NOT IN ('interrupted', 'running')"
        ).fetchall()
    )
    events = con.execute("SELECT kind, trial_id FROM events ORDER BY seq").fetchall()
    con.close()
    return trials, finished, events


def check_no_loss_no_duplicates(path: str, reference: str) -> dict[str, int]:
    """Assert the study at ``path`` ended exactly as ``reference``; counts of what was checked.

    Same asks, same told returns, same finished runs (zero lost, zero duplicated), no two
    counted runs for one seed slot, every interrupted run re-run with its seed, none running.
    """
    trials, finished, events = snapshot(path)
    ref_trials, ref_finished, ref_events = snapshot(reference)
    assert trials == ref_trials  # same decisions, same returns told
    assert events == ref_events
    assert finished == ref_finished  # zero lost, zero duplicated finished runs
    con = sqlite3.connect(path)
    dup = con.execute(
        "SELECT trial_id, slot, COUNT(*) FROM runs WHERE status IN ('ok', 'penalized') "
        "GROUP BY trial_id, slot HAVING COUNT(*) > 1"
    ).fetchall()
    # every interrupted run was re-run with the same seed
    orphans = con.execute(
        "SELECT i.run_id FROM runs i WHERE i.status = 'interrupted' AND NOT EXISTS ("
        " SELECT 1 FROM runs r WHERE r.trial_id = i.trial_id AND r.slot = i.slot AND "
        " r.attempt = i.attempt AND r.seed = i.seed AND r.rerun = 1 AND r.run_id > i.run_id)"
    ).fetchall()
    running = con.execute("SELECT COUNT(*) FROM runs WHERE status = 'running'").fetchone()[0]
    interrupted = con.execute(
        "SELECT COUNT(*) FROM runs WHERE status = 'interrupted'"
    ).fetchone()[0]
    con.close()
    assert dup == [] and orphans == [] and running == 0
    return {"trials": len(trials), "runs": len(finished), "interrupted": int(interrupted)}
