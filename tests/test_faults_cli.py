"""Faults against real processes (issue 27): the CLI's poor cases (a lower ``resume --budget``,
``status`` of a running or cut study, Ctrl-C while workers start). The study processes run
``tests/fault_injection.py``."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time

import pytest
from typer.testing import CliRunner

from erahbo.cli import app
from erahbo.runtime.journal import Journal
from erahbo.study_status import study_status
from fault_kill import run_study_process
from faults_helpers import SCRIPT, _study, one_line_error, stop, study_env

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
