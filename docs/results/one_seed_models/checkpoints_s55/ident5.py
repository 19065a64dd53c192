"""Scratch (session 55): the recommendation among the configurations with many seeds, after RUNS runs.

The default study (with the scratch patch's switches as set in the environment, e.g.
ERAHBO_RACE=6) is replayed to RUNS runs; the IQM over repetitions of the true normalized regret
of each pick is printed:
  rec    the study's recommendation
  lcb3   argmax LCB^MV (the recommender's beta) over the configurations with 3+ seeds
  lcb5   the same over those with 5+ seeds
  samp5  argmax sample MV (ybar - alpha s^2) over those with 5+ seeds
         (each of the three: the recommendation when no configuration has that many seeds)
  best2  the truth's best configuration with 2+ seeds; best5: with 5+ (NaN-dropped)
Run from the repository root (or the patched worktree) with PYTHONPATH=src:
    python ident5.py TASK ALPHA SET RUNS REPS
"""
import sys

import numpy as np

from _replay import Truth, best_of, print_iqm, replayed
from erahbo.gp.bounds import lcb_mv

name, alpha, s, runs, reps = sys.argv[1], float(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
truth = Truth(name, alpha)
res = {key: [] for key in ("rec", "lcb3", "lcb5", "samp5", "best2", "best5")}
for _, opt, _, reg in replayed(truth, s, runs, reps):
    d = opt.data
    k, ybar, s2 = np.asarray(d.k, float), np.asarray(d.ybar, float), np.asarray(d.s2, float)
    rm = opt.models.current()
    mu_f, sd_f, mu_v, sd_v = rm.predict(np.asarray(d.U, float))
    lo = lcb_mv(mu_f, sd_f, mu_v, sd_v, alpha, opt.models.recommender.beta, log_var=rm.log_var)
    ok = k >= 2

    res["rec"].append(truth.regret(opt.recommend()))
    res["lcb3"].append(best_of(lo, reg, k >= 3) if (k >= 3).any() else res["rec"][-1])
    res["lcb5"].append(best_of(lo, reg, k >= 5) if (k >= 5).any() else res["rec"][-1])
    res["samp5"].append(best_of(ybar - alpha * s2, reg, k >= 5) if (k >= 5).any() else res["rec"][-1])
    res["best2"].append(reg[ok].min())
    res["best5"].append(reg[k >= 5].min() if (k >= 5).any() else np.nan)
print_iqm(f"{name} a{alpha:g}s{s} @{runs}", res, finite=True)
