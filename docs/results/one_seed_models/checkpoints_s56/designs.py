"""Non-adaptive designs after 50 runs at a high risk weight (session 56, scratch record).

For a task of the continuous benchmark and alpha: draw n configurations uniformly (the task's
own uniform sample), run each with m seeds of the surrogate (n * m = the budget), and pick the
best sample MV (sample mean minus alpha times the sample variance, ddof 1); print the IQM over
repetitions of the pick's normalized regret, and of an error-free pick among the same n. TPE k=10
after 50 runs is the design (5, 10). From the repository root::

    PYTHONPATH=src python docs/results/one_seed_models/checkpoints_s56/designs.py ALPHA TASK[,TASK]
        [--reps 300] [--budget 50]
"""
import argparse

import numpy as np
from landscape import uniform_regrets
from scipy.stats import trim_mean

from erahbo.objectives.known_truth import make_task


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("alpha", type=float)
    ap.add_argument("tasks")
    ap.add_argument("--reps", type=int, default=300)
    ap.add_argument("--budget", type=int, default=50)
    a = ap.parse_args()
    designs = [(n, a.budget // n) for n in (3, 5, 10, 16, 25) if a.budget // n >= 2]
    print(f"alpha {a.alpha}, {a.budget} runs, {a.reps} repetitions: IQM regret of the pick by "
          "sample MV (error-free pick among the same n)")
    for name in a.tasks.split(","):
        task = make_task(name)
        U = task._uniform_points()
        reg_all = uniform_regrets(task, a.alpha)
        rng = np.random.default_rng(0)
        row = []
        for n, m in designs:
            got, best = [], []
            for _ in range(a.reps):
                idx = rng.choice(len(U), n, replace=False)
                seeds = rng.integers(0, 2**31 - 1, m).tolist()
                y = np.array([task.sample(task.space.decode(U[i]), seeds) for i in idx])
                smv = y.mean(1) - a.alpha * y.var(1, ddof=1)
                got.append(reg_all[idx[int(np.argmax(smv))]])
                best.append(reg_all[idx].min())
            row.append(f"{n}x{m} {trim_mean(got, 0.25):.3f} ({trim_mean(best, 0.25):.3f})")
        print(f"  {name.replace('surr-', ''):32s} " + " | ".join(row), flush=True)


if __name__ == "__main__":
    main()
