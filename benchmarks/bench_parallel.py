"""Wall time and regret of ``n_parallel`` on an objective whose runs take a fixed time.

Each training run of the Figure-1 task sleeps ``RUN_S`` seconds (standing in for RL training
that happens elsewhere: the sleep releases the GIL, so the ``q`` trials in flight run at
once in ``erahbo.optimize``'s threads, as they would on remote workers). For each method and
``q`` it prints the wall time of a 120-run study and the MV regret of its recommendation
(mean over seeds). Usage: ``python benchmarks/bench_parallel.py`` (about 1 min).
"""

from __future__ import annotations

import time

import numpy as np

import erahbo
from erahbo.objectives.synthetic import Figure1Task

RUN_S = 0.05
BUDGET = 120
SEEDS = (0, 1, 2)
TASK = Figure1Task()


def slow_objective(config: dict, seed: int) -> float:
    time.sleep(RUN_S)
    return TASK(config, seed)


def main() -> None:
    print(f"Figure-1 task, {BUDGET} runs of {RUN_S * 1e3:.0f} ms, mean over seeds {SEEDS}")
    print("method | q | wall time (s) | speed-up | MV regret of the recommendation")
    for method, opts in (("rahbo", {"k": 2, "n_init": 5}), ("erahbo", {"k_init": 4})):
        base = None
        for q in (1, 2, 4, 8):
            walls, regrets = [], []
            for seed in SEEDS:
                t0 = time.perf_counter()
                res = erahbo.optimize(slow_objective, TASK.space, method=method, budget=BUDGET,
                                      seed=seed, n_parallel=q, **opts)
                walls.append(time.perf_counter() - t0)
                regrets.append(float(TASK.regret(res.incumbent, 1.0)))
            wall = float(np.mean(walls))
            base = base or wall
            print(f"{method} | {q} | {wall:.2f} | {base / wall:.1f}x | {np.mean(regrets):.4f}")


if __name__ == "__main__":
    main()
