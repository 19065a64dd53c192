"""What a random configuration scores on each continuous task (session 56, scratch record).

For each task of the continuous benchmark and a risk weight alpha: the quantiles of the
normalized regret ``(MV* - MV(x)) / (MV* - mean MV)`` over the task's own uniform sample of
the space (the one ``task_truth`` normalizes by; 65536 configurations), and the IQM over 4000
draws of the best of 5 and of 24 uniform configurations (a perfect identification among them:
5 is what TPE k=10 has evaluated after 50 runs, ~24 what the default has). From the repository
root::

    PYTHONPATH=src python docs/results/one_seed_models/checkpoints_s56/landscape.py ALPHA [TASKS]
"""
import sys

import numpy as np

from erahbo.experiments.continuous import task_truth
from erahbo.objectives.known_truth import make_task
from erahbo.risk import as_risk

TASKS = ("readme,branin,figure1,surr-dqn_cc_acrobot,surr-dqn_cc_cartpole,surr-dqn_cc_mountain_car,"
         "surr-ppo_cc_acrobot,surr-ppo_cc_cartpole,surr-ppo_cc_continuous_mountain_car,"
         "surr-ppo_cc_mountain_car,surr-ppo_cc_pendulum")


def uniform_regrets(task, alpha: float) -> np.ndarray:
    """Normalized regret ``(MV* - MV(x)) / (MV* - mean MV)`` at the task's uniform points (n,)."""
    t = task_truth(task, alpha)
    star, norm = t["mv_star"], t["mv_star"] - t["uniform_mv_mean"]
    return (star - np.asarray(task.uniform_values(as_risk(alpha)), float)) / norm


def best_of_iqm(reg: np.ndarray, n: int, rng: np.random.Generator, draws: int = 4000) -> float:
    """IQM over ``draws`` of the smallest of ``n`` regrets drawn from ``reg`` (with replacement)."""
    b = np.sort(reg[rng.integers(0, len(reg), (draws, n))].min(axis=1))
    return float(b[draws // 4: draws - draws // 4].mean())


def main() -> None:
    alpha = float(sys.argv[1])
    tasks = (sys.argv[2] if len(sys.argv) > 2 else TASKS).split(",")
    print(f"alpha {alpha}: regret quantiles 1/5/10/25/50/75/90 %; best of 5 / best of 24 (IQM)")
    for name in tasks:
        reg = uniform_regrets(make_task(name), alpha)
        rng = np.random.default_rng(0)
        q = " ".join(f"{v:.3f}" for v in np.quantile(reg, [.01, .05, .1, .25, .5, .75, .9]))
        print(f"  {name.replace('surr-', ''):32s} {q} | {best_of_iqm(reg, 5, rng):.3f} / "
              f"{best_of_iqm(reg, 24, rng):.3f}")


if __name__ == "__main__":
    main()
