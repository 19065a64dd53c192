"""Successive halving over seeds against fixed designs after about 50 runs (session 57, scratch
record).

A schedule is a list of stages ``(n, m)``: the first draws ``n`` uniform configurations (the
task's own uniform sample) and runs each with ``m`` seeds of the surrogate; each later stage
keeps the ``n`` best by sample MV (sample mean minus alpha times the sample variance, ddof 1)
and tops them up to ``m`` seeds; the pick is the best sample MV of the last stage. ``5x10`` is
TPE k=10 after 50 runs (Optuna's first 10 trials are random). No model anywhere. Prints the IQM
over repetitions of the pick's normalized regret; ``--save F.npz`` keeps every repetition's
(key ``"<task>|<schedule>"``). From the repository root::

    PYTHONPATH=src python docs/results/one_seed_models/checkpoints_s57/sh_designs.py ALPHA
        TASK[,TASK] [--reps 400] [--sched 5x10,SH12,...] [--save F.npz]
"""
import argparse
import sys
from pathlib import Path

import numpy as np
from scipy.stats import trim_mean

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "checkpoints_s56"))
from landscape import uniform_regrets

from erahbo.objectives.known_truth import make_task

SCHEDULES = {
    "5x10": [(5, 10)],
    "10x5": [(10, 5)],
    "SH12": [(12, 2), (4, 5), (2, 11)],
    "SH10": [(10, 2), (4, 5), (2, 12)],
    "SH8": [(8, 2), (4, 6), (2, 13)],
    "SH8b": [(8, 3), (3, 8), (1, 12)],
    "SH6": [(6, 3), (3, 8), (2, 12)],
    "SH10c": [(10, 3), (3, 10)],
    "SH8c": [(8, 3), (3, 9)],
}


def runs_of(schedule: list[tuple[int, int]]) -> int:
    """How many runs a schedule spends."""
    total, prev = schedule[0][0] * schedule[0][1], schedule[0][1]
    for n, m in schedule[1:]:
        total, prev = total + n * (m - prev), m
    return total


def one(task, U: np.ndarray, reg: np.ndarray, alpha: float, schedule, rng) -> float:
    """The normalized regret of one repetition's pick."""
    n0, m0 = schedule[0]
    idx = rng.choice(len(U), n0, replace=False)
    seeds = rng.integers(0, 2**31 - 1, 64).tolist()  # configuration j runs seeds[:m]
    cfgs = [task.space.decode(U[i]) for i in idx]
    ys = {j: list(task.sample(cfgs[j], seeds[:m0])) for j in range(n0)}

    def smv(j: int) -> float:
        return float(np.mean(ys[j]) - alpha * np.var(ys[j], ddof=1))

    alive = list(range(n0))
    for n, m in schedule[1:]:
        alive = sorted(alive, key=lambda j: -smv(j))[:n]
        for j in alive:
            ys[j] += list(task.sample(cfgs[j], seeds[len(ys[j]):m]))
    return float(reg[idx[max(alive, key=smv)]])


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("alpha", type=float)
    ap.add_argument("tasks")
    ap.add_argument("--reps", type=int, default=400)
    ap.add_argument("--sched", default=",".join(SCHEDULES))
    ap.add_argument("--save", default="")
    a = ap.parse_args()
    names = a.sched.split(",")
    print(f"alpha {a.alpha}, {a.reps} repetitions; runs: "
          + " ".join(f"{k}={runs_of(SCHEDULES[k])}" for k in names))
    saved = {}
    for name in a.tasks.split(","):
        task = make_task(name)
        U = task._uniform_points()
        reg = uniform_regrets(task, a.alpha)
        row = []
        for k in names:
            rng = np.random.default_rng(0)
            got = np.array([one(task, U, reg, a.alpha, SCHEDULES[k], rng) for _ in range(a.reps)])
            saved[f"{name}|{k}"] = got
            row.append(f"{k} {trim_mean(got, 0.25):.3f}")
        print(f"  {name.replace('surr-', ''):30s} " + " | ".join(row), flush=True)
        if a.save:
            np.savez(a.save, **saved)


if __name__ == "__main__":
    main()
