"""Scratch (session 53): what the recommendation sees after RUNS runs of one benchmark study.

Replays the study (``recommendation_probe.replay_until``) to RUNS runs and prints the configurations
with 2+ seeds in the order of the posterior ``LCB^MV`` (eq. 9 at the acquisition's beta): seeds,
returns (min-max scale), sample mean and variance, the posterior mean of f, the variance GP's
estimate and upper bound of rho^2, the lower bound on MV, the truth (f, rho^2) and the normalized
regret; then the recommendation and its rule.

usage (from the repository root): PYTHONPATH=src python
docs/results/one_seed_models/checkpoints_s53/ident.py TASK ALPHA SET REP RUNS [METHOD] [N]
"""
import math
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[4] / "benchmarks"))
from recommendation_probe import replay_until  # noqa: E402

from erahbo.experiments.continuous import task_truth  # noqa: E402
from erahbo.objectives.known_truth import make_task  # noqa: E402

name, alpha, set_seed, rep, stop = (sys.argv[1], float(sys.argv[2]), int(sys.argv[3]),
                                    int(sys.argv[4]), int(sys.argv[5]))
method = sys.argv[6] if len(sys.argv) > 6 else "erahbo"
top = int(sys.argv[7]) if len(sys.argv) > 7 else 8
task = make_task(name)
truth = task_truth(task, alpha)
star, norm = truth["mv_star"], truth["mv_star"] - truth["uniform_mv_mean"]

opt = replay_until(task, method, alpha, set_seed, rep, stop)
opt.recommend()
d = opt.data
rm = opt.round_model()
beta = float(opt.options.beta)
mf, sf, _, _ = rm.predict(d.U)
est, _, ucb = rm.variance_at(d.U, beta)
lcb = mf - math.sqrt(beta) * sf - alpha * ucb
k = np.asarray(d.k).astype(int)
rows = [i for i in np.argsort(-lcb) if k[i] >= 2][:top]
irec = d.config_ids.index(int(opt.incumbent_id))
print(f"{name} alpha {alpha} set {set_seed} rep {rep} after {stop} runs: beta {beta}, "
      f"{d.n} configurations, {int((k >= 2).sum())} with 2+ seeds; recommendation row {irec} "
      f"(k={k[irec]})")
print(" row  k  ybar    s2     post_f  est_v  ucb_v  LCB_MV | true_f true_v  regret | returns")
for i in list(rows) + ([irec] if irec not in rows else []):
    c = opt.state.config(d.config_ids[i], d.U[i])
    tf, tv = task.f(c), task.rho2(c)
    reg = (star - task.mv(c, alpha)) / norm
    r = np.round(np.asarray(d.returns[i]), 2)
    mark = "*" if i == irec else " "
    print(f"{mark}{i:3d} {k[i]:2d} {d.ybar[i]:.3f} {d.s2[i]:.4f}  {mf[i]:.3f} {est[i]:.4f} "
          f"{ucb[i]:.4f} {lcb[i]:+.3f} | {tf:.3f} {tv:.4f} {reg:6.3f} | {r[:8]}")
