"""Faults against real files, file systems and processes (issue 27, journal items).

* one lock per journal *file*: a symbolic link or a hard link to a journal shares its lock, so
  two studies never write one journal (two real processes);
* a full disk (a real 1 MB tmpfs), a read-only folder (a read-only tmpfs), damaged rows: one
  clear error naming the file and the fix, nothing lost, no stray ``-wal``/``-shm``/``.lock``;
* the CLI's poor cases: a lower ``resume --budget``, ``status`` of a running study, of a study
  cut by Ctrl-C, Ctrl-C while workers start;
* the default run timeout of worker processes.

The study processes run ``tests/fault_injection.py`` (a deterministic fake study, or the real
optimizer on a table).
"""

from __future__ import annotations

import os
import subprocess
import sys
import time

import pytest
from typer.testing import CliRunner

from erahbo.cli import app
from erahbo.runtime.journal import Journal, JournalError, JournalLockedError
from erahbo.study_status import study_status
from fault_injection import check_no_loss_no_duplicates, count_runs, run_study_process

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPT = os.path.join(HERE, "fault_injection.py")
SRC = os.path.join(os.path.dirname(HERE), "src")


def study_env(**extra: str) -> dict[str, str]:
    env = os.environ.copy()
    env["PYTHONPATH"] = os.pathsep.join([SRC, HERE])
    env.pop("ERAHBO_JOURNAL_KILL_AFTER", None)
    env.update(extra)
    return env


def start_study(journal, *args: str, **env: str) -> subprocess.Popen:
    """The fake study of fault_injection.py on ``journal``, in its own process."""
    return subprocess.Popen([sys.executable, SCRIPT, str(journal), *args],
                            env=study_env(**env), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


def wait_for_runs(journal, n: int, proc: subprocess.Popen, timeout: float = 120.0) -> None:
    t0 = time.monotonic()
    while count_runs(journal) < n:
        if proc.poll() is not None:
            raise AssertionError(f"study process ended early:\n{proc.stderr.read()[-2000:]}")
        if time.monotonic() - t0 > timeout:
            raise AssertionError(f"no {n} runs in {journal} after {timeout} s")
        time.sleep(0.02)


def stop(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        proc.kill()
    proc.communicate()


def leftovers(folder) -> list[str]:
    """Files a refusal must not leave behind."""
    return sorted(n for n in os.listdir(folder)
                  if n.endswith((".lock", "-wal", "-shm", "-journal")) or ".tmp-" in n)


def one_line_error(res) -> str:
    """The CLI failed with one line (no traceback); the line."""
    assert res.exit_code == 2, res.output
    lines = [ln for ln in res.output.splitlines() if ln.strip()]
    assert "Traceback" not in res.output
    assert len(lines) == 1 and lines[0].startswith("error: "), res.output
    return lines[0]


# --------------------------------------------------------------------------------------------
# 1. one lock per journal file, whatever its name
# --------------------------------------------------------------------------------------------


def test_links_share_the_lock_of_a_running_study(tmp_path):
    """Rule: the journal lock belongs to the file, not to a path. While one process runs a
    study, opening the journal by its name, a symbolic link or a hard link (another folder)
    from another process is refused naming the holder's pid; ``status`` by any name says
    "running (pid N)"; no lock file is created."""
    real = tmp_path / "real.db"
    (tmp_path / "other").mkdir()
    sym, hard = tmp_path / "sym.db", tmp_path / "other" / "hard.db"
    proc = start_study(real, "--budget", "400", FAKE_SLEEP="0.2")
    try:
        wait_for_runs(real, 1, proc)
        os.symlink(real, sym)
        os.link(real, hard)
        for name in (real, sym, hard):
            with pytest.raises(JournalLockedError, match=f"in use by pid {proc.pid}"):
                Journal.open(name)
            s = study_status(name)
            assert s.state == "running" and s.pid == proc.pid
        line = one_line_error(CliRunner().invoke(app, ["resume", str(hard), "--no-progress"]))
        assert f"in use by pid {proc.pid}" in line and str(hard) in line
        res = CliRunner().invoke(app, ["status", str(sym)])
        assert res.exit_code == 0 and f"running (pid {proc.pid})" in res.output, res.output
        assert proc.poll() is None  # the study went on
    finally:
        stop(proc)
    assert leftovers(tmp_path / "other") == []
    assert not [n for n in os.listdir(tmp_path) if n.endswith(".lock")]


def test_two_resumes_by_two_links_never_both_write(tmp_path):
    """Rule: two processes resuming one journal by a symbolic link and a hard link at the
    same moment: one runs the study, the other is refused (the lock, or the hard link's
    other name holding the write-ahead log); the study then ends exactly as an uninterrupted
    one, no run lost or run twice."""
    budget = ["--budget", "40"]
    ref = tmp_path / "ref.db"
    a = run_study_process([SCRIPT, str(ref), *budget], env={"FAKE_SLEEP": "0.01"})
    assert a.returncode == 0, a.stderr
    real = tmp_path / "real.db"
    a = run_study_process([SCRIPT, str(real), *budget], kill_after_commits=25,
                          env={"FAKE_SLEEP": "0.01"})
    assert a.killed
    os.symlink(real, tmp_path / "sym.db")
    os.link(real, tmp_path / "hard.db")
    procs = [start_study(tmp_path / name, *budget, FAKE_SLEEP="0.05")
             for name in ("sym.db", "hard.db")]
    outs = [p.communicate(timeout=300) for p in procs]
    codes = [p.returncode for p in procs]
    assert sorted(codes) == [0, 1], outs
    loser = outs[codes.index(1)][1]
    assert "JournalLockedError" in loser or "resume it by that name" in loser, loser
    check_no_loss_no_duplicates(str(real), str(ref))


def test_a_hard_link_does_not_hide_the_write_ahead_log(tmp_path):
    """Rule: SQLite keeps the write-ahead log by the name a study used; after a study killed
    while using one name, opening the journal by another hard link (whose log would be
    missed) is refused with the name to use; a symbolic link resolves to the right log."""
    real = tmp_path / "real.db"
    a = run_study_process([SCRIPT, str(real), "--budget", "40"], kill_after_commits=25)
    assert a.killed and os.path.getsize(f"{real}-wal") > 0
    os.link(real, tmp_path / "hard.db")
    os.symlink(real, tmp_path / "sym.db")
    with pytest.raises(JournalError, match=f"resume it by that name \\(erahbo resume {real}\\)"):
        Journal.open(tmp_path / "hard.db")
    assert not os.path.exists(tmp_path / "hard.db-wal")
    with Journal.open(tmp_path / "sym.db") as j:
        assert j.n_runs() == count_runs(real) > 0


def test_one_process_cannot_open_a_journal_twice_by_two_names(tmp_path):
    """Rule: within one process too, a second opening by another name is refused (and does
    not disturb the first connection)."""
    real = tmp_path / "real.db"
    with Journal.open(real, {"budget": 1}) as j:
        os.link(real, tmp_path / "hard.db")
        with pytest.raises(JournalLockedError, match=f"pid {os.getpid()} \\(this process\\)"):
            Journal.open(tmp_path / "hard.db")
        assert j.n_runs() == 0
    Journal.open(tmp_path / "hard.db").close()
    assert leftovers(tmp_path) == []
