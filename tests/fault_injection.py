"""Fault-injection helpers: run a study in a subprocess and SIGKILL it at chosen points.

Two ways to choose the point:

* ``kill_after_commits=N``: the journal of the study process SIGKILLs its own process right
  after its N-th commit (environment variable ``ERAHBO_JOURNAL_KILL_AFTER``, read by
  :class:`erahbo.runtime.journal.Journal`). Deterministic; covers every commit boundary, including
  the window between "run started" and "run finished".
* ``kill_after_seconds=T`` / ``kill_when_runs=N``: this process SIGKILLs the study from outside,
  after T seconds or once the journal holds N runs (polled read-only). Not aligned with
  commits: the kill can land anywhere, inside a transaction or inside the objective.

The module is also a study script, run as a subprocess:

* ``python fault_injection.py JOURNAL [options]``: a small deterministic study built on
  :class:`FakeOptimizer` (a stand-in with the real optimizer's ask/tell contract);
* ``python fault_injection.py real JOURNAL [options]``: the real optimizer,
  ``erahbo.optimize(table_objective, table(), ..., journal=JOURNAL)`` on a finite table;
* ``python fault_injection.py chain [options] -- <real study options>``: a "zygote" that
  imports numpy/scipy/pandas/erahbo once, then forks one study process per attempt and SIGKILLs
  it at chosen points (after its N-th journal commit, or from outside after T seconds), resumes
  each time and reports the attempts as JSON. Forking avoids paying the interpreter and import
  start-up (about a second here) for each of the 20+ attempts.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import os
import random
import signal
import sqlite3
import subprocess
import sys
import time
import traceback
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

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
    proc = subprocess.Popen(
        [sys.executable, *argv],
        env=full_env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
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


# --------------------------------------------------------------------------------------------
# A deterministic fake optimizer and objective
# --------------------------------------------------------------------------------------------


def _unit(*parts: Any) -> float:
    """Deterministic uniform number in [0, 1) from a hash of ``parts``."""
    h = hashlib.blake2b(repr(parts).encode(), digest_size=8).digest()
    return int.from_bytes(h, "little") / 2.0**64


@dataclass
class FakeTrial:
    config: dict[str, Any]
    seeds: list[int]
    config_id: int
    round: int


class FakeOptimizer:
    """Deterministic ask/tell optimizer mimicking ERAHBO's control flow.

    A finite table of ``n_configs`` configurations. The first ``n_init`` rounds evaluate a
    seeded initial design; later rounds pick the best non-excluded configuration by
    ``mean - alpha * var + bonus`` (ties broken by a seeded RNG). A round asks ``k_min`` seeds,
    then one more at a time while the seeds disagree (std > ``spread``) and ``k < k_max``.
    Its decisions depend on every value told, so a replay that feeds other values diverges.
    ``tell(..., infeasible=True)`` excludes the configuration for good.
    """

    def __init__(
        self,
        n_configs: int = 10,
        seed: int = 0,
        *,
        k_min: int = 2,
        k_max: int = 4,
        n_init: int = 3,
        alpha: float = 1.0,
        spread: float = 0.3,
    ) -> None:
        import random

        rng = random.Random(seed)
        self.configs = [
            {"x": round(rng.random(), 6), "act": rng.choice(["tanh", "relu"])}
            for _ in range(n_configs)
        ]
        self.init_order = rng.sample(range(n_configs), n_init)
        self.rng = random.Random(seed + 1)
        self.seed, self.k_min, self.k_max, self.alpha, self.spread = (
            seed,
            k_min,
            k_max,
            alpha,
            spread,
        )
        self.obs: dict[int, list[float]] = {i: [] for i in range(n_configs)}
        self.n_seeds = dict.fromkeys(range(n_configs), 0)
        self.excluded: set[int] = set()
        self.round = -1
        self.cur: int | None = None
        self.k_round = 0
        self.more = False
        self.outstanding: FakeTrial | None = None
        self.told: list[tuple[int, list[float], bool]] = []

    def _seeds(self, cid: int, n: int) -> list[int]:
        out = []
        for _ in range(n):
            j = self.n_seeds[cid]
            self.n_seeds[cid] += 1
            out.append(1 + int(_unit("seed", self.seed, cid, j) * (2**31 - 2)))
        return out

    def _score(self, cid: int) -> float:
        ys = self.obs[cid]
        noise = 1e-3 * self.rng.random()
        if not ys:
            return 2.0 + noise
        mean = sum(ys) / len(ys)
        var = sum((y - mean) ** 2 for y in ys) / max(1, len(ys) - 1)
        return mean - self.alpha * var + 1.0 / math.sqrt(1 + len(ys)) + noise

    def ask(self) -> FakeTrial | None:
        if self.outstanding is not None:
            raise RuntimeError("FakeOptimizer is sequential: tell the previous trial first")
        if self.more:
            assert self.cur is not None
            cid, n = self.cur, 1
        else:
            self.round += 1
            if self.round < len(self.init_order):
                cid = self.init_order[self.round]
            else:
                cands = [c for c in self.obs if c not in self.excluded]
                if not cands:
                    return None
                scores = {c: self._score(c) for c in cands}
                cid = max(cands, key=lambda c: scores[c])
            n, self.cur, self.k_round = self.k_min, cid, 0
        trial = FakeTrial(dict(self.configs[cid]), self._seeds(cid, n), cid, self.round)
        self.outstanding = trial
        return trial

    def tell(self, trial: FakeTrial, returns: list[float], infeasible: bool = False) -> None:
        if trial is not self.outstanding:
            raise RuntimeError("tell got a trial that is not the outstanding one")
        self.outstanding = None
        self.told.append((trial.config_id, list(returns), infeasible))
        if infeasible:
            self.excluded.add(trial.config_id)
            self.more = False
            return
        self.obs[trial.config_id].extend(float(v) for v in returns)
        self.k_round += len(returns)
        ys = self.obs[trial.config_id][-self.k_round :]
        mean = sum(ys) / len(ys)
        std = math.sqrt(sum((y - mean) ** 2 for y in ys) / max(1, len(ys) - 1))
        self.more = self.k_round < self.k_max and std > self.spread


def fake_objective(config: dict[str, Any], seed: int) -> float:
    """Deterministic noisy return; fails on some seeds according to FAKE_FAIL (env)."""
    fail_rate = float(os.environ.get("FAKE_FAIL", "0"))
    sleep = float(os.environ.get("FAKE_SLEEP", "0"))
    if sleep:
        time.sleep(sleep)
    x = float(config["x"])
    u = _unit("fail", x, seed)
    if u < fail_rate * 0.8:
        raise RuntimeError(f"training diverged (seed {seed})")
    if u < fail_rate:
        return math.nan
    z = _unit("noise", x, seed) - 0.5
    return math.sin(3 * x) + (0.2 + x) * z * (5.0 if config["act"] == "relu" else 1.0)


# --------------------------------------------------------------------------------------------
# The study script
# --------------------------------------------------------------------------------------------


def study_settings(args: argparse.Namespace) -> dict[str, Any]:
    return {
        "method": "fake",
        "n_configs": args.n_configs,
        "seed": args.seed,
        "budget": args.budget,
        "failures": args.failures,
    }


def main(argv: list[str] | None = None) -> None:
    from erahbo.runtime.executors import make_executor
    from erahbo.runtime.journal import Journal
    from erahbo.runtime.replay import JournaledStudy
    from erahbo.study.run import run_journaled
    from fault_injection import FakeOptimizer as Fake  # importable by spawned workers
    from fault_injection import fake_objective as objective

    p = argparse.ArgumentParser(description="deterministic fake study with a journal")
    p.add_argument("journal")
    p.add_argument("--n-configs", type=int, default=10)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--budget", type=int, default=60)
    p.add_argument("--failures", default="penalize")
    p.add_argument("--executor", default="serial")
    p.add_argument("--workers", type=int, default=2)
    p.add_argument("--synchronous", default="FULL")
    args = p.parse_args(argv)
    journal = Journal.open(args.journal, study_settings(args), synchronous=args.synchronous)
    opt = Fake(args.n_configs, args.seed)
    study = JournaledStudy(opt, journal, failures=args.failures)
    with make_executor(args.executor, max_workers=args.workers) as ex:
        run_journaled(study, objective, budget=args.budget, executor=ex)
    print(f"done: {journal.n_trials()} trials, {journal.n_counted()} counted runs")
    journal.close()


# --------------------------------------------------------------------------------------------
# The real optimizer on a finite table
# --------------------------------------------------------------------------------------------

FAIL_ENV = "FI_FAIL_RATE"  # share of (config, seed) pairs on which table_objective fails
SLEEP_ENV = "FI_SLEEP"  # seconds table_objective sleeps per run


def table(n: int = 40, d: int = 3, seed: int = 0) -> Any:
    """A deterministic candidate table (pandas DataFrame, columns x0..x{d-1})."""
    import numpy as np
    import pandas as pd

    X = np.random.default_rng(seed).random((n, d)).round(6)  # (n, d)
    return pd.DataFrame(X, columns=[f"x{i}" for i in range(d)])


def table_objective(config: dict[str, Any], seed: int) -> float:
    """Deterministic heteroscedastic return of a table row; fails on some (config, seed) pairs.

    Mean ``sin(4 x0) + x1``, noise std ``0.05 + 0.6 x2^2``. With ``FI_FAIL_RATE=r`` a share
    ``0.7 r`` of the pairs raise and ``0.3 r`` return NaN.
    """
    sleep = float(os.environ.get(SLEEP_ENV, "0"))
    if sleep:
        time.sleep(sleep)
    return _table_value(config, seed, float(os.environ.get(FAIL_ENV, "0")))


def _table_value(config: dict[str, Any], seed: int, rate: float) -> float:
    x0, x1, x2 = (float(config[k]) for k in ("x0", "x1", "x2"))
    u = _unit("fail", x0, x1, int(seed))
    if u < 0.7 * rate:
        raise RuntimeError(f"training diverged (seed {seed})")
    if u < rate:
        return math.nan
    z = math.sqrt(-2 * math.log(1 - _unit("z1", x0, seed))) * math.cos(
        2 * math.pi * _unit("z2", x0, seed)
    )
    return math.sin(4 * x0) + x1 + (0.05 + 0.6 * x2**2) * z


def flaky_objective(config: dict[str, Any], seed: int) -> float:
    """:func:`table_objective` failing on 20 % of the pairs whatever the environment (for
    workers that do not inherit it, such as Ray's)."""
    return _table_value(config, seed, 0.2)


def segfault_objective(config: dict[str, Any], seed: int) -> float:
    """:func:`table_objective`, but the worker process segfaults on rows with ``x0 < 0.1``."""
    if float(config["x0"]) < 0.1:
        os.kill(os.getpid(), signal.SIGSEGV)
    return table_objective(config, seed)


HANG_ENV = "FI_HANG_DIR"  # folder where hang_once counts its runs


def hang_once(config: dict[str, Any], seed: int) -> float:
    """0.05 s per run, but the first run started after two others hangs (an hour); the runs
    are counted as files in the folder named by ``FI_HANG_DIR``."""
    d = os.environ[HANG_ENV]
    n = len(os.listdir(d))
    open(os.path.join(d, f"run-{seed}-{os.getpid()}-{time.time_ns()}"), "w").close()
    if n >= 2:
        try:
            os.close(os.open(os.path.join(d, "hang"), os.O_CREAT | os.O_EXCL))
        except FileExistsError:
            pass
        else:
            time.sleep(3600)
    time.sleep(0.05)
    return -((float(config["x"]) - 0.3) ** 2)


def sleep_300(config: dict[str, Any], seed: int) -> float:
    """A run of five minutes (Ctrl-C tests)."""
    time.sleep(300)
    return 0.0


def slow_seed_3(config: dict[str, Any], seed: int) -> float:
    """0.05 s per run, 5 s for seed 3."""
    time.sleep(5.0 if seed == 3 else 0.05)
    return float(config["x"])


def real_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(description="the real optimizer on a table, with a journal")
    p.add_argument("journal")
    p.add_argument("--history", default=None, help="write the Result (pickle) here at the end")
    p.add_argument("--method", default="erahbo")
    p.add_argument("--budget", type=int, default=60)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--failures", default="retry")
    p.add_argument("--executor", default="serial")
    p.add_argument("--workers", type=int, default=None)
    p.add_argument("--synchronous", default="NORMAL")
    return p


def real_main(argv: list[str]) -> None:
    import pickle

    import erahbo

    args = real_parser().parse_args(argv)
    result = erahbo.optimize(
        table_objective,
        table(),
        method=args.method,
        budget=args.budget,
        seed=args.seed,
        k_min=2,
        k_max=5,
        k=4,
        n_init=3,
        failures=args.failures,
        executor=args.executor,
        workers=args.workers,
        journal=args.journal,
        synchronous=args.synchronous,
    )
    if args.history:
        with open(args.history, "wb") as fh:
            pickle.dump(result, fh)


# --------------------------------------------------------------------------------------------
# The zygote: fork a study per attempt, kill it, resume
# --------------------------------------------------------------------------------------------


def _fork_attempt(study_argv: list[str], commits: int | None, seconds: float | None) -> dict:
    """Fork a child running the real study; SIGKILL it at the chosen point; its fate."""
    sys.stdout.flush()
    sys.stderr.flush()
    t0 = time.monotonic()
    pid = os.fork()
    if pid == 0:  # the study process
        code = 0
        try:
            os.environ.pop(KILL_ENV, None)
            if commits is not None:
                os.environ[KILL_ENV] = str(int(commits))
            real_main(study_argv)
        except BaseException:
            traceback.print_exc()
            code = 1
        finally:
            sys.stdout.flush()
            sys.stderr.flush()
            os._exit(code)
    if seconds is not None:
        deadline = t0 + seconds
        while True:
            done, status = os.waitpid(pid, os.WNOHANG)
            if done:
                break
            if time.monotonic() >= deadline:
                os.kill(pid, signal.SIGKILL)
                _, status = os.waitpid(pid, 0)
                break
            time.sleep(0.001)
    else:
        _, status = os.waitpid(pid, 0)
    killed = os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGKILL
    return {
        "commits": commits,
        "seconds": seconds,
        "killed": bool(killed),
        "returncode": os.waitstatus_to_exitcode(status),
        "wall_s": time.monotonic() - t0,
    }


def chain_main(argv: list[str]) -> None:
    """Reference study, then the same study killed at random points and resumed each time.

    Kill points: ``--kills N`` commit-aligned kills at sorted random targets of the study's
    progress (:func:`progress`) drawn from the reference's whole length, each reached by
    killing the attempt after the right number of its own commits, plus ``--timed-kills M``
    kills from outside at random times (anywhere: inside a transaction, the objective or the
    replay), made in the first attempts. Prints a JSON report.
    """
    import erahbo

    # warm-up (no journal): imports what the optimizer loads lazily (scipy.stats, ...) once,
    # before forking, so that every attempt starts at once
    erahbo.optimize(table_objective, table(), budget=20, k=2, k_max=2, n_init=3)

    if "--" in argv:
        i = argv.index("--")
        own, study = argv[:i], argv[i + 1 :]
    else:
        own, study = argv, []
    p = argparse.ArgumentParser(description="kill-and-resume chain (fork per attempt)")
    p.add_argument("--journal", required=True)
    p.add_argument("--history", required=True)
    p.add_argument("--ref-journal", required=True)
    p.add_argument("--ref-history", required=True)
    p.add_argument("--kills", type=int, default=22)
    p.add_argument("--timed-kills", type=int, default=3)
    p.add_argument("--rng", type=int, default=0)
    args = p.parse_args(own)
    rng = random.Random(args.rng)
    ref = _fork_attempt([args.ref_journal, "--history", args.ref_history, *study], None, None)
    if ref["returncode"] != 0:
        raise SystemExit(f"reference study failed: {ref}")
    total = progress(args.ref_journal)
    argv_chain = [args.journal, "--history", args.history, *study]
    attempts = []
    for _ in range(args.timed_kills):  # early in the study, so that plenty of it remains
        attempts.append(_fork_attempt(argv_chain, None, rng.uniform(0.03, 0.2) * ref["wall_s"]))
        if not attempts[-1]["killed"]:
            break
    start = progress(args.journal) + 1 if os.path.exists(args.journal) else 2
    targets = sorted(rng.sample(range(start, int(0.95 * total)), args.kills))
    for target in targets:
        if attempts and not attempts[-1]["killed"]:
            break
        now = progress(args.journal) if os.path.exists(args.journal) else 0
        if target <= now:
            continue
        # + 1 commit for the journal info written on open, + 1 if runs are to mark interrupted
        con = sqlite3.connect(args.journal) if os.path.exists(args.journal) else None
        running = con.execute(
            "SELECT COUNT(*) FROM runs WHERE status = 'running'"
        ).fetchone()[0] if con else 0
        if con:
            con.close()
        n = target - now + (1 if con else 0) + (1 if running else 0)
        attempts.append(_fork_attempt(argv_chain, max(1, n), None))
    if not attempts or attempts[-1]["killed"]:
        attempts.append(_fork_attempt(argv_chain, None, None))
    print(json.dumps({"reference": ref, "total_progress": total, "attempts": attempts}))


if __name__ == "__main__":
    if sys.argv[1:2] == ["real"]:
        real_main(sys.argv[2:])
    elif sys.argv[1:2] == ["chain"]:
        chain_main(sys.argv[2:])
    else:
        main()
