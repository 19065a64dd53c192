"""Faults against real files, file systems and processes (issue 27, journal items): one lock
per journal file whatever its name (symbolic and hard links, two real processes); a full disk
and a read-only folder (real tmpfs), flipped bytes: one clear error naming the file and the fix,
nothing lost, nothing stray; the CLI's poor cases (a lower ``resume --budget``, ``status`` of a
running or cut study, Ctrl-C while workers start); the default run timeout. The study
processes run ``tests/fault_injection.py``.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import signal
import sqlite3
import subprocess
import sys
import time

import pytest
from typer.testing import CliRunner

from erahbo.cli import app
from erahbo.runtime.journal import (
    Journal,
    JournalError,
    JournalLockedError,
    JournalReadOnlyError,
)
from erahbo.study_status import study_status
from fault_injection import (
    HANG_ENV,
    check_no_loss_no_duplicates,
    count_runs,
    hang_once,
    run_study_process,
    slow_seed_3,
)

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPT = os.path.join(HERE, "fault_injection.py")
SRC = os.path.join(os.path.dirname(HERE), "src")


def study_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "ERAHBO_JOURNAL_KILL_AFTER"}
    return {**env, "PYTHONPATH": os.pathsep.join([SRC, HERE]), **extra}


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
    """The CLI (a CliRunner result, or a process) failed with one line, no traceback."""
    code, text = ((res.exit_code, res.output) if hasattr(res, "exit_code") else
                  (res.returncode, res.stderr))
    lines = [ln for ln in text.splitlines() if ln.strip()]
    assert code == 2 and len(lines) == 1 and lines[0].startswith("error: "), text
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
    """``erahbo ARGS`` in its own process (its stderr as a user sees it)."""
    def pre() -> None:
        import resource

        resource.setrlimit(resource.RLIMIT_FSIZE, (limit_file_size, limit_file_size))

    return subprocess.run([sys.executable, "-m", "erahbo", *args], env=study_env(),
                          capture_output=True, text=True, timeout=600,
                          preexec_fn=pre if limit_file_size else None)


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
        line = one_line_error(cli("optimize", "--objective", "figure1", "--budget", "300",
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
        assert after[:len(before)] == before and len(after) >= 299  # nothing lost or changed
        assert len({(t, s) for t, s, *_ in after}) == len(after)  # no slot counted twice


def _study(path) -> None:
    from erahbo.objectives.synthetic import Figure1Task
    from erahbo.study import optimize

    optimize(Figure1Task(), Figure1Task().space, budget=30, seed=0, journal=path)


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


# --------------------------------------------------------------------------------------------
# 3. the CLI's poor cases
# --------------------------------------------------------------------------------------------


def test_resume_with_a_lower_budget_is_refused_before_anything(tmp_path, monkeypatch):
    """Rule: `resume --budget N` below the study's budget is refused with one line (what was
    spent, the fix) before any other output; a larger one says it raised the budget."""
    monkeypatch.chdir(tmp_path)
    path = tmp_path / "j.db"
    _study(path)
    before = path.read_bytes()
    for b, what in ((10, "the study has already spent"), (29, "already spent")):
        line = one_line_error(CliRunner().invoke(app, ["resume", str(path), "--budget", str(b),
                                                       "--no-progress"]))
        assert what in line and "more budget, not less" in line and "N > 30" in line
        assert "raised" not in line
    assert path.read_bytes() == before
    res = CliRunner().invoke(app, ["resume", str(path), "--budget", "32", "--no-progress"])
    assert res.exit_code == 0 and "budget raised from 30 to 32" in res.output, res.output


def test_status_after_a_cut_keeps_counted_and_ok_apart(tmp_path):
    """Rule: after a study is cut inside a trial (one run finished, one in flight, the trial
    not told), `status` counts only told trials' runs: the counted runs equal the ok plus
    penalized ones it lists, and the runs of the trial not told are listed apart, as kept or
    re-run on resume."""
    ref = tmp_path / "ref.db"
    assert run_study_process([SCRIPT, str(ref), "--budget", "60"]).returncode == 0
    with Journal.open(ref) as j:
        ks = [len(t.seeds) for t in j.trials()]
    # serial, no failures: a trial commits its ask, a start and an end per seed, its tell;
    # cut the first trial of 2+ seeds after the first: its run 0 ended, run 1 started
    t = next(i for i, k in enumerate(ks) if i > 0 and k >= 2)
    told = sum(ks[:t])
    path = tmp_path / "j.db"
    a = run_study_process([SCRIPT, str(path), "--budget", "60"],
                          kill_after_commits=sum(2 + 2 * k for k in ks[:t]) + 4)
    assert a.killed
    s = study_status(path)
    assert s.state == "stopped" and s.n_pending == 1
    assert s.n_counted == s.run_status.get("ok", 0) + s.run_status.get("penalized", 0) == told
    assert s.pending_runs == {"ok": 1, "running": 1}
    res = CliRunner().invoke(app, ["status", str(path)])
    assert res.exit_code == 0, res.output
    out = " ".join(res.output.split())
    assert f"training runs: {told} of 60 counted ({told} ok)" in out
    assert "not counted: 1 ok, 1 running" in out and "run again with the same seed" in out


def _workers(pid: int) -> list[int]:
    """The worker processes that ``pid`` (any of its threads) started."""
    out = []
    with contextlib.suppress(OSError):
        for tid in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{tid}/children") as fh:
                out += [int(x) for x in fh.read().split()]
    return [k for k in out if b"multiprocessing.spawn" in _read(f"/proc/{k}/cmdline")]


def _read(path: str) -> bytes:
    try:
        with open(path, "rb") as fh:
            return fh.read()
    except OSError:
        return b""


def _alive(pid: int) -> bool:
    stat = _read(f"/proc/{pid}/stat")
    return bool(stat) and stat.rsplit(b")", 1)[1].split()[0] != b"Z"


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
@pytest.mark.parametrize("delay", [0.0, 0.3, 4.0])
def test_ctrl_c_while_workers_start_prints_one_line(tmp_path, delay):
    """Rule: Ctrl-C (SIGINT to the terminal's process group) while worker processes boot
    (or run a long objective) prints only the study's one line ("interrupted; continue with
    ..."), no worker traceback, exits at once (no wait for the runs in flight: they are re-run
    on resume) and leaves no worker running."""
    (tmp_path / "space.json").write_text('{"x": ["float", 0, 1]}')
    proc = subprocess.Popen(
        [sys.executable, "-m", "erahbo", "optimize", "--objective", "fault_injection:sleep_300",
         "--space", "space.json", "--budget", "40", "--executor", "process", "--workers", "2",
         "--journal", "j.db", "--no-progress", "--out", "o"],
        env=study_env(), cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        text=True, start_new_session=True,  # its own process group, as a terminal's job
        # with Ctrl-C's default action, as in a terminal (a job started in the background by
        # a non-interactive shell, e.g. `make test &`, inherits SIGINT ignored)
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    try:
        t0 = time.monotonic()
        while not _workers(proc.pid):
            assert time.monotonic() - t0 < 120 and proc.poll() is None, "no worker started"
            time.sleep(0.005)
        time.sleep(delay)
        kids = _workers(proc.pid)
        os.killpg(proc.pid, signal.SIGINT)
        out, err = proc.communicate(timeout=60)  # the objective sleeps 300 s
    finally:
        stop(proc)
    assert proc.returncode == 130, (out, err)
    assert [ln for ln in err.splitlines() if ln.strip()] == [
        "interrupted; continue with `erahbo resume j.db`"], err
    t0 = time.monotonic()
    while any(_alive(k) for k in kids):
        assert time.monotonic() - t0 < 30, "a worker outlived the study"
        time.sleep(0.05)


# --------------------------------------------------------------------------------------------
# 4. the default run timeout
# --------------------------------------------------------------------------------------------

def test_run_timeout_defaults_to_auto_where_runs_can_be_killed():
    """Rule: optimize's run_timeout defaults to "auto"; the process and Ray executors carry
    an automatic limit (ten times the longest finished run, at least 60 s, a day before any
    run finished), the serial one none; None is no limit."""
    import inspect

    from erahbo.cli.optimize_cmd import run_timeout_option
    from erahbo.runtime.executors import AutoTimeout, make_executor
    from erahbo.study import optimize

    assert inspect.signature(optimize).parameters["run_timeout"].default == "auto"
    with make_executor("process", max_workers=1) as ex:
        assert isinstance(ex.auto_timeout, AutoTimeout)
        assert (ex.auto_timeout.factor, ex.auto_timeout.floor) == (10.0, 60.0)
    assert make_executor("serial").auto_timeout is None
    auto = AutoTimeout()
    assert auto.limit() == 86400.0  # no run finished yet
    for seconds, limit in ((2.0, 60.0), (30.0, 300.0), (5.0, 300.0)):
        auto.observe(seconds)
        assert auto.limit() == limit
    assert "30 s" in auto.rule()
    assert [run_timeout_option(t) for t in (None, "auto", "none", "90")] == ["auto", "auto",
                                                                            None, 90.0]
    with pytest.raises(ValueError, match="--run-timeout 'soon'"):
        run_timeout_option("soon")


def test_a_hung_run_is_killed_by_the_default_and_the_study_goes_on(tmp_path, monkeypatch):
    """Rule: with worker processes and the default run_timeout, a run that hangs is killed
    once it has taken ten times the longest finished run (floor lowered to 1 s here); it
    counts as failed with a message naming the automatic limit and how to change it, and the
    study spends its budget."""
    from erahbo.runtime.executors import AutoTimeout, ProcessExecutor
    from erahbo.study import optimize

    monkeypatch.setenv(HANG_ENV, str(tmp_path))  # workers inherit it
    with ProcessExecutor(2, auto_timeout=AutoTimeout(floor=1.0)) as ex:
        res = optimize(hang_once, {"x": ("float", 0.0, 1.0)}, budget=12, seed=0, k_min=2,
                       k_max=2, n_init=3, executor=ex, failures="penalize")  # counted at once
    assert (tmp_path / "hang").exists()
    failed = res.history[res.history.status != "ok"]
    assert len(failed) == 1, res.history[["status", "error"]]
    assert "automatic run_timeout" in failed.error.iloc[0]
    assert "run_timeout=SECONDS" in failed.error.iloc[0] and "None for none" in failed.error.iloc[0]
    assert res.n_evals == 12


@pytest.mark.parametrize("kind", ["process", "ray"])
def test_run_timeout_none_is_no_limit(kind):
    """Rule: a run far longer than the others is killed under "auto" but not with None (the
    process pool, and Ray where installed)."""
    from erahbo.runtime.evaluate import evaluate
    from erahbo.runtime.executors import AutoTimeout, ProcessExecutor

    def make(auto):
        if kind == "process":
            return ProcessExecutor(1, auto_timeout=auto)
        pytest.importorskip("ray", reason="Ray is not installed (pip install erahbo[ray])")
        from erahbo.runtime.executors import RayExecutor

        return RayExecutor(num_cpus=1, max_workers=1, auto_timeout=auto,
                           init_kwargs={"log_to_driver": False})

    for timeout, status in (("auto", "penalized"), (None, "ok")):
        # runs of seeds 1, 2: well under a second; seed 3: 5 s, past 3 x the longest of them
        with make(AutoTimeout(factor=3.0, floor=0.5)) as ex:
            ex.submit(slow_seed_3, {"x": 0.5}, 1).result()  # a worker up, the module imported
            ex.auto_timeout.longest = None  # (that first call is not a run)
            out = evaluate(slow_seed_3, {"x": 0.5}, [1, 2, 3], run_timeout=timeout, executor=ex)
        assert [r.status for r in out.runs] == ["ok", "ok", status], out.runs
        if status == "penalized":
            assert "automatic run_timeout" in out.runs[2].error


def test_serial_runs_keep_no_limit_and_need_no_pickling():
    """Rule: with the serial executor the default adds no limit and no worker process: an
    objective that cannot be pickled (a closure) still runs in this process."""
    from erahbo.study import optimize

    calls = []

    def closure(config, seed):
        calls.append(os.getpid())
        return float(config["x"])

    res = optimize(closure, {"x": ("float", 0.0, 1.0)}, budget=6, seed=0, k_min=2, k_max=2,
                   n_init=3)
    assert res.n_evals == 6 and set(calls) == {os.getpid()}
