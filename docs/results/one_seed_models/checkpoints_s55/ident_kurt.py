"""Scratch (session 55): believing agreeing seeds less, recommendation only.

Replays the default study to RUNS runs; rebuilds the round model (reference engine, the study's
own hyperparameters) with the log variance's noise psi'((k - 1) / 2) + kappa / k (returns with
excess kurtosis kappa) for each kappa given, and picks argmax LCB^MV (the recommender's beta)
over the rows with 2+ seeds. kappa = 0 is the study's own model (the control). Prints the IQM
of the true normalized regret of each pick and of the default's recommendation.
    PYTHONPATH=src python ident_kurt.py TASK ALPHA SET RUNS REPS [KAPPA ...]
"""
import sys

import numpy as np

import erahbo.gp.round as round_mod
from _replay import Truth, lcb_pick, print_iqm, rebuilt, replayed
from erahbo.gp.variance_noise import TRIGAMMA_HALF, variance_noise

name, alpha, s, runs, reps = sys.argv[1], float(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
kappas = [float(x) for x in sys.argv[6:]] or [0.0, 2.0, 4.0, 8.0]
truth = Truth(name, alpha)
KAPPA = [0.0]


def kurt_noise(tau2, k, chi2, log):
    base = variance_noise(tau2, k, chi2, log)
    if not log or KAPPA[0] == 0.0:
        return base
    kk = np.asarray(k, dtype=float)
    extra = tau2 * KAPPA[0] / np.maximum(kk, 2.0) / TRIGAMMA_HALF
    out = np.where(kk >= 2, base + extra, base)
    return out if isinstance(k, np.ndarray) else float(out)


round_mod.variance_noise = kurt_noise  # the round model's noise of the log variances
res = {"rec": []} | {f"k{kp:g}": [] for kp in kappas} | {"best2": []}
for rep in range(reps):
    KAPPA[0] = 0.0  # the replay itself runs under the default's noise
    _, opt, _, reg = next(replayed(truth, s, runs, [rep]))
    d = opt.data
    ok = np.asarray(d.k, float) >= 2
    U = np.asarray(d.U, float)
    res["rec"].append(truth.regret(opt.recommend()))
    for kp in kappas:
        KAPPA[0] = kp
        rm = rebuilt(opt, d.ybar, opt.models.variances())
        res[f"k{kp:g}"].append(lcb_pick(rm, U, reg, ok, alpha, opt.models.recommender.beta))
    res["best2"].append(reg[ok].min())
print_iqm(f"{name} a{alpha:g}s{s} @{runs}", res)
