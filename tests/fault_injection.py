"""Fault injection: the study scripts that tests run as subprocesses and kill, and the
objectives they train (named ``fault_injection:<name>`` in journals and CLI calls).

Running and killing a study process, and comparing an interrupted-and-resumed study with an
uninterrupted one: ``tests/fault_kill.py``; the deterministic fake optimizer and objective:
``tests/fake_study.py``. The module is a study script, run as a subprocess:

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
import json
import math
import os
import random
import signal
import sqlite3
import sys
import time
import traceback
from typing import Any

from fake_study import _unit
from fault_kill import KILL_ENV, progress

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
    from fake_study import FakeOptimizer as Fake  # importable by spawned workers
    from fake_study import fake_objective as objective

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
