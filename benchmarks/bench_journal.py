"""Wall-time overhead of the study journal per training run, and the cost of resuming.

Runs the same study three ways with an instantaneous objective (so that only bookkeeping is
timed): a plain ask/evaluate/tell loop, and the journaled loop (:func:`erahbo.journal.run_study`)
with ``synchronous=FULL`` (the default: fsync per commit) and ``NORMAL``. A trial asks 2 seeds
(ERAHBO's k_min), then 1 more, alternately, so a run costs on average 1.33 trial records plus
its own start and end records. Then it times a resume: open the journal and replay it into a
fresh optimizer.

Usage: python benchmarks/bench_journal.py [--runs 600] [--dir DIR]
(DIR defaults to a temporary folder; put it on the disk where real journals will live.)
"""

from __future__ import annotations

import argparse
import os
import shutil
import tempfile
import time
from dataclasses import dataclass

from erahbo.failures import Penalizer, evaluate
from erahbo.journal import Journal, JournaledStudy, replay, run_study


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
    run_study(study, objective, budget=n_runs)
    commits = j.commits
    j.close()
    return time.perf_counter() - t0, commits


def resume_time(path: str) -> tuple[float, int]:
    t0 = time.perf_counter()
    j = Journal.open(path, {"bench": 1})
    res = replay(RoundRobin(), j)
    j.close()
    return time.perf_counter() - t0, res.n_told


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--runs", type=int, default=600)
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
    finally:
        if args.dir is None:
            shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
