"""Fault-injection helpers: run a study in a subprocess and SIGKILL it at chosen points.

Two ways to choose the point:

* ``kill_after_commits=N``: the journal of the study process SIGKILLs its own process right
  after its N-th commit (environment variable ``ERAHBO_JOURNAL_KILL_AFTER``, read by
  :class:`erahbo.journal.Journal`). Deterministic; covers every commit boundary, including the
  window between "run started" and "run finished".
* ``kill_after_seconds=T`` / ``kill_when_runs=N``: this process SIGKILLs the study from outside,
  after T seconds or once the journal holds N runs (polled read-only). Not aligned with
  commits: the kill can land anywhere, inside a transaction or inside the objective.

The module is also a small deterministic study script (``python fault_injection.py JOURNAL
[options]``) built on :class:`FakeOptimizer`, a stand-in for the real optimizer with the same
ask/tell contract, so that the journal's resume can be tested before the real optimizer exists.
Once it does, point :func:`run_study_process` at a script that calls ``erahbo.optimize(...,
journal=PATH)``.
"""

from __future__ import annotations

import argparse
import hashlib
import math
import os
import signal
import sqlite3
import subprocess
import sys
import time
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
    from erahbo.executors import make_executor
    from erahbo.journal import Journal, JournaledStudy, run_study
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
        run_study(study, objective, budget=args.budget, executor=ex)
    print(f"done: {journal.n_trials()} trials, {journal.n_counted()} counted runs")
    journal.close()


if __name__ == "__main__":
    main()
