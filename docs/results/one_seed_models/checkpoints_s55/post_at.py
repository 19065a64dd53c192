"""Per-config posterior at RUNS runs of the default study (replay): k, sample mean/var, posterior f, var est, LCB, UCB, truth."""
import sys
from pathlib import Path
import numpy as np
sys.path.insert(0, str(Path(__file__).resolve().parents[4] / "benchmarks"))
from recommendation_probe import replay_until
from erahbo.experiments.continuous import task_truth
from erahbo.objectives.known_truth import make_task
from erahbo.gp.bounds import lcb_mv, ucb_mv, to_variance
name, alpha, s, runs, rep = sys.argv[1], float(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
task = make_task(name); truth = task_truth(task, alpha)
star, norm = truth["mv_star"], truth["mv_star"] - truth["uniform_mv_mean"]
opt = replay_until(task, "erahbo", alpha, s, rep, runs)
d = opt.data
cfgs = [opt.state.config(c, u) for c, u in zip(d.config_ids, d.U, strict=True)]
reg = np.array([(star - task.mv(c, alpha)) / norm for c in cfgs])
tf = np.array([task.mv(c, 0.0) for c in cfgs]); tv = tf - np.array([task.mv(c, 1.0) for c in cfgs])
rm = opt.models.current()
mf, sf, mv, sv = rm.predict(np.asarray(d.U, float))
beta = opt.models.recommender.beta
lo = lcb_mv(mf, sf, mv, sv, alpha, beta, log_var=rm.log_var)
up = ucb_mv(mf, sf, mv, sv, alpha, beta, log_var=rm.log_var)
est = np.exp(mv) if rm.log_var else mv
rec = opt.recommend()
print("beta", beta, "rec regret", (star - task.mv(rec, alpha)) / norm)
order = np.argsort(reg)
print(" id   k   ybar    s2     postf  estvar   LCB     UCB    regret  true_f true_var")
for i in order[:14]:
    print(f"{d.config_ids[i]:3d} {int(d.k[i]):3d} {d.ybar[i]:7.3f} {d.s2[i]:7.4f} {mf[i]:7.3f} {est[i]:7.4f} {lo[i]:7.3f} {up[i]:7.3f} {reg[i]:7.3f} {tf[i]:7.3f} {tv[i]:7.4f}")
