"""Wall-time overhead of the study journal per training run, and the cost of resuming.

Runs the same study three ways with an instantaneous objective (so that only bookkeeping is
timed): a plain ask/evaluate/tell loop, and the journaled loop
(:func:`erahbo.study.run.run_journaled`) with ``synchronous=FULL`` (the default: fsync per
commit) and ``NORMAL``. A trial asks 2 seeds (ERAHBO's k_min), then 1 more, alternately, so a
run costs on average 1.33 trial records plus its own start and end records. Then it times a
resume: open the journal and replay it into a fresh optimizer.

Second part, the real optimizer: ``erahbo.optimize`` (ERAHBO, k_min=2, k_max=10) on a finite
table of 200 configurations and on the Figure-1 task, with an instantaneous objective, without a
journal and with one (FULL and NORMAL); the overhead per run is the difference. Then the
resume time: reopen the finished journal and replay the whole study (no run is repeated).

Usage: python benchmarks/bench_journal.py [--runs 600] [--real-runs 400] [--dir DIR]
(DIR defaults to a temporary folder; put it on the disk where real journals will live.)
"""

from __future__ import annotations

import argparse
import math
import os
import shutil
import tempfile
import time
from dataclasses import dataclass

import numpy as np
import pandas as pd

from erahbo.runtime.evaluate import evaluate
from erahbo.runtime.failures import Penalizer
from erahbo.runtime.journal import Journal
from erahbo.runtime.replay import JournaledStudy, replay
from erahbo.study.run import run_journaled


@dataclass
class Trial:
    config: dict
    seeds: list[int]
    config_id: int
    round: int


class RoundRobin:
    """Deterministic stand-in optimizer with negligible cost of its own."""

    def __init__(self, n_configs: int = 50) -> None:
        self.n, self.i, self.next_seed = n_configs, 0, 1

    def ask(self) -> Trial:
        k = 2 if self.i % 2 == 0 else 1
        seeds = list(range(self.next_seed, self.next_seed + k))
        self.next_seed += k
        t = Trial(
            {"lr": 1e-3 * (1 + self.i % self.n), "act": "relu"}, seeds, self.i % self.n, self.i
        )
        self.i += 1
        return t

    def tell(self, trial: Trial, returns: list[float], infeasible: bool = False) -> None:
        pass


def objective(config: dict, seed: int) -> float:
    return config["lr"] * seed


def plain_loop(n_runs: int) -> float:
    opt, pz, n = RoundRobin(), Penalizer(), 0
    t0 = time.perf_counter()
    while n < n_runs:
        t = opt.ask()
        out = evaluate(objective, t.config, t.seeds, penalizer=pz)
        pz.observe(out.raw)
        n += len(out.counted)
        opt.tell(t, out.returns)
    return time.perf_counter() - t0


def journaled_loop(path: str, n_runs: int, synchronous: str) -> tuple[float, int]:
    t0 = time.perf_counter()
    j = Journal.open(path, {"bench": 1}, synchronous=synchronous)
    study = JournaledStudy(RoundRobin(), j)
    run_journaled(study, objective, budget=n_runs)
    commits = j.commits
    j.close()
    return time.perf_counter() - t0, commits


def resume_time(path: str) -> tuple[float, int]:
    t0 = time.perf_counter()
    j = Journal.open(path, {"bench": 1})
    res = replay(RoundRobin(), j)
    j.close()
    return time.perf_counter() - t0, res.n_told


def _table(n: int = 200, d: int = 4) -> pd.DataFrame:
    X = np.random.default_rng(0).random((n, d)).round(6)  # (n, d)
    return pd.DataFrame(X, columns=[f"x{i}" for i in range(d)])


def table_objective(config: dict, seed: int) -> float:
    x = [config[f"x{i}"] for i in range(4)]
    z = math.sin(1e3 * x[0] + seed % 9973)  # deterministic pseudo-noise
    return math.sin(4 * x[0]) + x[1] - (0.1 + x[2]) * x[3] + (0.1 + x[2]) * z


def _clean(path: str) -> None:
    for suffix in ("", "-wal", "-shm", ".lock"):
        if os.path.exists(path + suffix):
            os.unlink(path + suffix)


def real_optimizer(folder: str, n_runs: int) -> None:
    """Journaling overhead per run with erahbo.optimize (decisions cost included in both)."""
    import erahbo
    from erahbo.objectives.synthetic import Figure1Task

    fig = Figure1Task()
    cases = [
        ("finite table (200 configs, d=4)", table_objective, _table(), {}),
        ("Figure-1 task (continuous, d=1)", fig, fig.space,
         {"raw_samples": 128, "n_polish": 2}),
    ]
    kw = {"method": "erahbo", "budget": n_runs, "seed": 0, "k_min": 2, "k_max": 10}
    print(f"\nreal optimizer: erahbo.optimize, {n_runs} training runs, instantaneous objective")
    print(f"{'task':<34}{'journal':<14}{'total s':>9}{'ms/run':>9}{'overhead ms/run':>17}"
          f"{'resume s':>10}")
    for name, objective, space, extra in cases:
        erahbo.optimize(objective, space, **{**kw, "budget": 60}, **extra)  # warm-up
        t0 = time.perf_counter()
        plain = erahbo.optimize(objective, space, **kw, **extra)
        base = time.perf_counter() - t0
        print(f"{name:<34}{'none':<14}{base:>9.2f}{1e3 * base / plain.n_evals:>9.2f}"
              f"{'-':>17}{'-':>10}")
        for sync in ("FULL", "NORMAL"):
            path = os.path.join(folder, f"real_{sync}.db")
            _clean(path)
            t0 = time.perf_counter()
            res = erahbo.optimize(objective, space, journal=path, synchronous=sync, **kw,
                                  **extra)
            total = time.perf_counter() - t0
            assert res.history["seed"].tolist() == plain.history["seed"].tolist()
            t0 = time.perf_counter()
            erahbo.optimize(objective, space, journal=path, synchronous=sync, **kw, **extra)
            resume = time.perf_counter() - t0
            over = 1e3 * (total - base) / res.n_evals
            print(f"{'':<34}{sync:<14}{total:>9.2f}{1e3 * total / res.n_evals:>9.2f}"
                  f"{over:>17.2f}{resume:>10.2f}")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--runs", type=int, default=600)
    p.add_argument("--real-runs", type=int, default=400)
    p.add_argument("--dir", default=None)
    args = p.parse_args()
    folder = args.dir or tempfile.mkdtemp(prefix="bench_journal_")
    os.makedirs(folder, exist_ok=True)
    n = args.runs
    try:
        base = min(plain_loop(n) for _ in range(3))
        print(f"journal folder: {folder}")
        print(f"training runs: {n} (instantaneous objective, serial)")
        print(
            f"{'loop':<28}{'total s':>10}{'ms/run':>10}{'overhead ms/run':>18}{'commits/run':>13}"
        )
        print(
            f"{'plain ask/evaluate/tell':<28}{base:>10.3f}{1e3 * base / n:>10.3f}{'-':>18}{'-':>13}"
        )
        for sync in ("FULL", "NORMAL"):
            path = os.path.join(folder, f"bench_{sync}.db")
            for suffix in ("", "-wal", "-shm", ".lock"):
                if os.path.exists(path + suffix):
                    os.unlink(path + suffix)
            total, commits = journaled_loop(path, n, sync)
            over = 1e3 * (total - base) / n
            label = f"journaled, synchronous={sync}"
            ms = 1e3 * total / n
            print(f"{label:<28}{total:>10.3f}{ms:>10.3f}{over:>18.3f}{commits / n:>13.2f}")
        path = os.path.join(folder, "bench_FULL.db")
        rt, n_trials = resume_time(path)
        print(
            f"resume (open + quick_check + replay {n_trials} trials into a fresh optimizer): "
            f"{1e3 * rt:.1f} ms, {1e3 * rt / n_trials:.3f} ms per trial"
        )
        size = os.path.getsize(path)
        print(f"journal size: {size / 1024:.0f} KiB, {size / n:.0f} bytes per run")
        if args.real_runs:
            real_optimizer(folder, args.real_runs)
    finally:
        if args.dir is None:
            shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
