"""Figure-1 demo check: which maximum do ERAHBO, RAHBO and GP-UCB recommend? (alpha = 1)

The Figure-1 task (:class:`erahbo.objectives.synthetic.Figure1Task`) has a quiet maximum at
x ~ 0.2 (the MV optimum for alpha = 1) and a higher, noisy one at x ~ 0.7 (the optimum of the
mean).  Over 10 seeds, the risk-averse methods should recommend the quiet one and GP-UCB the
noisy one.  Prints the counts and the mean wall time per run.

    python benchmarks/figure1_check.py [--budget 300] [--seeds 10] [--methods erahbo,gpucb]
"""

from __future__ import annotations

import os

for _v in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_v, "1")

import argparse  # noqa: E402
import time  # noqa: E402

import erahbo  # noqa: E402
from erahbo.objectives.synthetic import Figure1Task  # noqa: E402

METHODS = {"erahbo": {}, "rahbo": {}, "rahbo (k=2)": {"k": 2}, "gpucb": {},
           # one seed first (erahbo.gp.one_seed; docs/results/one_seed): not the default
           "erahbo (one seed)": {"k_init": 1, "k_min": 1, "n_init": 10},
           # one seed per BO round after the 5 x 2 initial design (session 18)
           "erahbo (k_min 1)": {"k_min": 1},
           "erahbo (k_min 1; var_noise_prior -4)": {"k_min": 1, "var_noise_prior": -4.0},
           # no replication of near-duplicates (erahbo.optimizer.replicate; issue 37)
           "erahbo (replicate_within 0)": {"replicate_within": 0.0},
           # the variance GP's fitted noise: erahbo's default until session 24
           "erahbo (var_noise fitted)": {"var_noise": "fitted"},
           # the defaults of session 19 (before issue 37's parts)
           "erahbo (session 19)": {"replicate_within": 0.0, "recommend_min_seeds": 1},
           # session 21: the Matern-5/2 kernel, and the variance GP's noise prior
           "erahbo (matern52)": {"kernel": "matern52"},
           "erahbo (matern52 vnp-1)": {"kernel": "matern52",
                                                     "var_noise_prior": -1.0}}


def which_max(x: float, task: Figure1Task) -> str:
    """``"quiet"`` or ``"noisy"``: the maximum nearer to ``x``."""
    return "quiet" if abs(x - task.x_quiet) < abs(x - task.x_noisy) else "noisy"


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--budget", type=int, default=300)
    p.add_argument("--seeds", type=int, default=10)
    p.add_argument("--alpha", type=float, default=1.0)
    p.add_argument("--methods", default=",".join(METHODS), help="names of METHODS, comma-separated")
    a = p.parse_args()
    task = Figure1Task()
    print(f"Figure-1 task, alpha={a.alpha}, budget={a.budget} runs, {a.seeds} seeds")
    print(f"{'method':<18} {'quiet':>5} {'noisy':>5} {'mean MV regret':>15} {'s/run':>6}")
    for name in a.methods.split(","):
        extra = METHODS[name]
        method = name.split()[0]
        counts = {"quiet": 0, "noisy": 0}
        regret, t0 = 0.0, time.perf_counter()
        for seed in range(a.seeds):
            r = erahbo.optimize(task, task.space, method=method, budget=a.budget, seed=seed,
                                alpha=a.alpha, **extra)
            counts[which_max(r.incumbent["x"], task)] += 1
            regret += float(task.regret(r.incumbent, alpha=a.alpha)) / a.seeds
        dt = (time.perf_counter() - t0) / a.seeds
        print(f"{name:<18} {counts['quiet']:>5} {counts['noisy']:>5} {regret:>15.4f} {dt:>6.2f}")


if __name__ == "__main__":
    main()
