"""Faults against real files and file systems (issue 27, journal items): one lock per journal
file whatever its name (symbolic and hard links, two real processes); a full disk and a
read-only folder (real tmpfs), flipped bytes: one clear error naming the file and the fix,
nothing lost, nothing stray. The study processes run ``tests/fault_injection.py``;
tests/test_faults_cli.py and tests/test_faults_timeout.py have the CLI's poor cases and the
default run timeout."""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import sqlite3
import subprocess

import pytest
from typer.testing import CliRunner

from erahbo.cli import app
from erahbo.runtime.journal import Journal, JournalError, JournalLockedError, JournalReadOnlyError
from erahbo.study_status import study_status
from fault_kill import check_no_loss_no_duplicates, count_runs, run_study_process
from faults_helpers import (
    SCRIPT,
    _study,
    leftovers,
    one_line_error,
    start_study,
    stop,
    study_env,
    wait_for_runs,
)
from forked_app import run_script

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
    assert leftovers(tmp_path / "other") == [] == [n for n in os.listdir(tmp_path)
                                                   if n.endswith(".lock")]


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


# --------------------------------------------------------------------------------------------
# 2. full disk, read-only folder, damaged rows: one clear line, nothing lost, nothing stray
# --------------------------------------------------------------------------------------------


@contextlib.contextmanager
def mounted_tmpfs(folder, size: str = "1m"):
    """A real tmpfs of ``size`` at ``folder`` (needs root); unmounted afterwards. Skips the
    test where mounting is not allowed."""
    if os.geteuid() != 0 or shutil.which("mount") is None:
        pytest.skip("mounting a tmpfs needs root and mount(8)")
    os.makedirs(folder, exist_ok=True)
    r = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(folder)],
                       capture_output=True, text=True)
    if r.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {r.stderr.strip()}")
    try:
        yield folder
    finally:
        subprocess.run(["umount", "-l", str(folder)], capture_output=True)


def remount(folder, mode: str) -> None:
    subprocess.run(["mount", "-o", f"remount,{mode}", str(folder)], check=True)


def cli(*args: str, limit_file_size: int | None = None) -> subprocess.CompletedProcess:
    """``python -m erahbo ARGS`` in its own process (its stderr as a user sees it), forked from
    a server that imported erahbo once (tests/forked_app.py)."""
    return run_script("-m erahbo", *args, env=study_env(), timeout=600,
                      fsize=limit_file_size)


def counted_runs(path) -> list[tuple]:
    """The counted runs of told trials: what a study's results rest on."""
    from erahbo.runtime.journal_check import read_only

    with read_only(str(path)) as con:  # a -wal left by the stop is read too
        return con.execute(
            "SELECT r.trial_id, r.slot, r.seed, r.status, r.raw FROM runs r JOIN trials t "
            "USING (trial_id) WHERE t.told_at IS NOT NULL AND r.status IN ('ok', 'penalized') "
            "ORDER BY r.run_id").fetchall()


def test_full_disk_ends_in_one_line_and_loses_nothing(tmp_path):
    """Rule: a study whose disk fills up (a real 1 MB tmpfs; where mounting is not allowed,
    a 1 MB file-size limit) stops with one line naming the journal, the cause and the fix
    (free space, then `erahbo resume`); every run recorded before is kept and, once there is
    room, the study resumes to its budget."""
    fs, limit = tmp_path / "fs", None
    try:
        ctx = mounted_tmpfs(fs)
        ctx.__enter__()
    except pytest.skip.Exception:
        fs.mkdir(exist_ok=True)
        ctx, limit = contextlib.nullcontext(), 1 << 20
    with contextlib.ExitStack() as stack:
        stack.push(ctx)
        journal = fs / "j.db"
        args = ["--journal", str(journal), "--no-progress", "--out", str(tmp_path / "out")]
        # the 1 MB fills up after about 25 runs whatever the budget (24 on the tmpfs, 26
        # under the file-size limit): a budget of 60 leaves more than half to the resume
        line = one_line_error(cli("optimize", "--objective", "figure1", "--budget", "60",
                                  *args, limit_file_size=limit))
        assert f"journal {journal}" in line and "Every run recorded before is kept" in line
        assert f"erahbo resume {journal}" in line and (limit or "the disk is full" in line)
        assert not [n for n in os.listdir(fs) if n.endswith(".lock") or ".tmp-" in n]
        assert len(before := counted_runs(journal)) >= 10
        if limit is None:  # more room: the tmpfs grows
            remount(fs, "size=16m")
        done = cli("resume", str(journal), "--no-progress")
        assert done.returncode == 0, done.stderr
        after = counted_runs(journal)
        assert after[:len(before)] == before and len(after) >= 59  # nothing lost or changed
        assert len({(t, s) for t, s, *_ in after}) == len(after)  # no slot counted twice


def test_read_only_folder(tmp_path):
    """Rule: a journal in a read-only folder (a read-only tmpfs; chmod where not root): status
    reads it (never calls it corrupt) and creates nothing; resume is refused with one line
    naming the folder and the fix, before anything is written; a new journal there is refused
    likewise."""
    fs = tmp_path / "fs"
    root = os.geteuid() == 0
    ctx = mounted_tmpfs(fs, "4m") if root else contextlib.nullcontext(fs)
    with ctx:
        fs.mkdir(exist_ok=True)
        journal = fs / "j.db"
        _study(journal)
        if root:
            remount(fs, "ro")
        else:
            os.chmod(journal, 0o444)
            os.chmod(fs, 0o555)
        try:
            s = study_status(journal)
            assert s.state == "finished" and s.n_counted >= 29
            res = CliRunner().invoke(app, ["status", str(journal)])
            assert res.exit_code == 0 and "finished" in res.output, res.output
            with pytest.raises(JournalReadOnlyError, match="Copy the journal"):
                Journal.open(journal)
            line = one_line_error(CliRunner().invoke(app, ["resume", str(journal),
                                                          "--budget", "40", "--no-progress"]))
            assert "read-only file system" in line or "not writable" in line
            assert f"journal {journal} cannot be resumed" in line
            with pytest.raises(JournalReadOnlyError, match="cannot be created"):
                Journal.open(fs / "new.db", {"budget": 1})
            assert sorted(os.listdir(fs)) == ["j.db"]
            res = cli("optimize", "--objective", "figure1", "--budget", "12", "--no-progress",
                      "--journal", str(tmp_path / "k.db"), "--out", str(fs / "out"))
            assert "estimated MV" in res.stdout  # the result, then why nothing was written
            assert "could not write the study's outputs" in one_line_error(res)
            assert f"erahbo resume {tmp_path / 'k.db'} --out DIR" in res.stderr
        finally:
            if root:
                remount(fs, "rw")
            else:
                os.chmod(fs, 0o755)
                os.chmod(journal, 0o644)


def test_resume_of_a_text_file_creates_nothing(tmp_path):
    """Rule: `erahbo resume notes.txt` is refused with one line saying it is not a journal
    (and what to give), and leaves no file behind (no notes.txt.lock, -wal, -shm)."""
    notes = tmp_path / "notes.txt"
    notes.write_text("epoch,return\n1,0.5\n")
    line = one_line_error(CliRunner().invoke(app, ["resume", str(notes), "--no-progress"]))
    assert "is not an erahbo journal" in line and "Give the path of a study journal" in line
    line = one_line_error(CliRunner().invoke(app, ["status", str(notes)]))
    assert "is not an erahbo journal" in line
    assert sorted(os.listdir(tmp_path)) == ["notes.txt"]


def _structure(path) -> tuple:
    """What a status must not misreport: trials' configs and seeds, runs' slots, seeds and
    statuses, events (not the numbers, whose changed digits no check can see, nor the round
    numbers, kept for display)."""
    con = sqlite3.connect(f"file:{path}?mode=ro&immutable=1", uri=True)
    con.text_factory = bytes
    try:
        return (con.execute("SELECT trial_id, config_id, config, seeds, told_at IS NULL "
                            "FROM trials ORDER BY trial_id").fetchall(),
                con.execute("SELECT trial_id, slot, attempt, seed, status FROM runs "
                            "ORDER BY run_id").fetchall(),
                con.execute("SELECT kind, trial_id FROM events ORDER BY seq").fetchall(),
                con.execute("SELECT settings FROM study").fetchall())
    finally:
        con.close()


def test_one_byte_flips_are_refused_before_any_write(tmp_path):
    """Rule: a journal with one flipped byte (every content byte of its data pages is tried
    at 250 seeded positions, and the first byte of every stored configuration) is either
    refused by a JournalError that names it, with the file unchanged and nothing created
    beside it, or it reads back without a raw error; `status` never raises anything else and
    never calls it finished when its trials, runs or events differ from the original."""
    import random

    good = tmp_path / "good.db"
    _study(good)
    con = sqlite3.connect(good)  # the optimizer's snapshot: checksummed (tests/test_snapshot)
    con.execute("DROP TABLE snapshots")
    con.execute("VACUUM")
    con.close()
    data = open(good, "rb").read()
    original = _structure(good)
    page = int.from_bytes(data[16:18], "big")
    content = [i for i in range(page, len(data)) if data[i]]  # past the schema page
    positions = random.Random(0).sample(content, 250)
    positions += [m.start() + 1 for m in re.finditer(rb'\{"x":', data)]  # a config's first key
    work = tmp_path / "flip"
    work.mkdir()
    refused = 0
    for pos in positions:
        bad = work / "j.db"
        flipped = data[:pos] + bytes([data[pos] ^ 0x80]) + data[pos + 1:]
        bad.write_bytes(flipped)
        try:
            with Journal.open(bad) as j:  # reads everything: no raw decode error
                j.trials(), j.runs(), j.events(), j.history(), j.budget()
        except JournalError as exc:
            refused += 1
            assert str(bad) in str(exc)
            assert open(bad, "rb").read() == flipped  # not modified
            assert sorted(os.listdir(work)) == ["j.db"], pos
            with pytest.raises(JournalError):
                study_status(bad)
            continue
        try:
            s = study_status(bad)
        except JournalError:
            continue
        if s.state == "finished":
            assert _structure(bad) == original, pos
        assert sorted(os.listdir(work)) == ["j.db"], pos
    assert refused >= 100  # most flips land in a row or a page header


def test_resume_of_a_changed_configuration_writes_nothing(tmp_path):
    """Rule: a flipped digit in a stored configuration passes every row check (valid JSON)
    but not the replay; resume then refuses the journal without having written it."""
    from erahbo.objectives.synthetic import Figure1Task
    from erahbo.runtime.journal import ReplayDivergenceError
    from erahbo.study import resume

    path = tmp_path / "j.db"
    _study(path)
    data = bytearray(open(path, "rb").read())
    m = re.search(rb'\{"x":0\.(\d)', bytes(data))
    assert m is not None
    d = m.start(1)
    data[d] = ord("1") if data[d] != ord("1") else ord("2")
    path.write_bytes(bytes(data))
    with pytest.raises(ReplayDivergenceError):
        resume(path, Figure1Task(), Figure1Task().space, budget=40)
    assert path.read_bytes() == bytes(data) and study_status(path).state == "inconsistent"
    assert leftovers(tmp_path) == []
