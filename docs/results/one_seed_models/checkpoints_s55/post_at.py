"""Per-config posterior at RUNS runs of the default study (replay): k, sample mean/var, posterior f, var est, LCB, UCB, truth."""
import sys

import numpy as np

from _replay import Truth, replayed
from erahbo.gp.bounds import lcb_mv, ucb_mv

name, alpha, s, runs, rep = sys.argv[1], float(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
truth = Truth(name, alpha)
_, opt, cfgs, reg = next(replayed(truth, s, runs, [rep]))
d = opt.data
tf, tv = np.array([truth.f_var(c) for c in cfgs]).T
rm = opt.models.current()
mf, sf, mv, sv = rm.predict(np.asarray(d.U, float))
beta = opt.models.recommender.beta
lo = lcb_mv(mf, sf, mv, sv, alpha, beta, log_var=rm.log_var)
up = ucb_mv(mf, sf, mv, sv, alpha, beta, log_var=rm.log_var)
est = np.exp(mv) if rm.log_var else mv
print("beta", beta, "rec regret", truth.regret(opt.recommend()))
order = np.argsort(reg)
print(" id   k   ybar    s2     postf  estvar   LCB     UCB    regret  true_f true_var")
for i in order[:14]:
    print(f"{d.config_ids[i]:3d} {int(d.k[i]):3d} {d.ybar[i]:7.3f} {d.s2[i]:7.4f} {mf[i]:7.3f} {est[i]:7.4f} {lo[i]:7.3f} {up[i]:7.3f} {reg[i]:7.3f} {tf[i]:7.3f} {tv[i]:7.4f}")
