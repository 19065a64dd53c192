"""The configurations with 5+ seeds after RUNS runs of the default study (replay): seeds, sample mean and variance, truth."""
import sys

import numpy as np

from _replay import Truth, replayed

name, alpha, s, runs = sys.argv[1], float(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
truth = Truth(name, alpha)
for rep, opt, cfgs, reg in replayed(truth, s, runs, int(sys.argv[5])):
    d = opt.data
    tf, tv = np.array([truth.f_var(c) for c in cfgs]).T
    big = np.flatnonzero(np.asarray(d.k) >= 5)
    rr = truth.regret(opt.recommend())
    print(f"rep {rep} rec regret {rr:.3f} best2 {reg[np.asarray(d.k) >= 2].min():.3f} |", "; ".join(
        f"k{int(d.k[i])} ybar {d.ybar[i]:.3f} s2 {d.s2[i]:.4f} f {tf[i]:.3f} var {tv[i]:.4f} reg {reg[i]:.2f}" for i in big))
