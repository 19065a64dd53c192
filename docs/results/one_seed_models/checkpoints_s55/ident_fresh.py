"""Scratch (session 55): the selection removed by an oracle, recommendation only.

Replays the default study to RUNS runs; every configuration with at least MIN seeds gets its
sample mean and variance replaced by those of as many fresh seeds of the same configuration
(seeds 10**6 + j: the task's own returns, not chosen on their values), the round model is rebuilt
(reference engine, the study's hyperparameters) and argmax LCB^MV (the recommender's beta) over
the rows with 2+ seeds is taken. The control rebuilds the model on the study's own data. Prints
the IQM of the true normalized regret of: the default's recommendation, the control, the
oracle-fresh pick, and the truth's best with 2+ seeds.
    PYTHONPATH=src python ident_fresh.py TASK ALPHA SET RUNS REPS [MIN]
"""
import sys

import numpy as np

from _replay import Truth, lcb_pick, print_iqm, rebuilt, replayed
from erahbo.gp.one_seed import variance_observations

name, alpha, s, runs, reps = sys.argv[1], float(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
least = int(sys.argv[6]) if len(sys.argv) > 6 else 3
truth = Truth(name, alpha)
res = {key: [] for key in ("rec", "control", "fresh", "best2")}
for rep, opt, cfgs, reg in replayed(truth, s, runs, reps):
    d = opt.data
    k = np.asarray(d.k, float)
    ok = k >= 2
    U = np.asarray(d.U, float)

    def pick(ybar, s2):
        obs = variance_observations(s2, d.k, opt.models.settings.sigma0_2, ybar)
        return lcb_pick(rebuilt(opt, ybar, obs), U, reg, ok, alpha, opt.models.recommender.beta)

    ybar, s2 = np.array(d.ybar, float), np.array(d.s2, float)
    res["rec"].append(truth.regret(opt.recommend()))
    res["control"].append(pick(ybar, s2))
    yf, sf2 = ybar.copy(), s2.copy()
    for i in np.flatnonzero(k >= least):
        y = np.asarray(truth.task.sample(cfgs[i], [10**6 + 1000 * rep + t for t in range(int(k[i]))]), float)
        yf[i], sf2[i] = y.mean(), y.var(ddof=1)
    res["fresh"].append(pick(yf, sf2))
    res["best2"].append(reg[ok].min())
print_iqm(f"{name} a{alpha:g}s{s} @{runs} min {least}", res)
