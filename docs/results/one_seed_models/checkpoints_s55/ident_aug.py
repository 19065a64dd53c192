"""Scratch (session 55): the variance GP with the mean GP's posterior mean as an extra input.

Replays the default study to RUNS runs; refits both GPs on [U, f_hat] (f_hat: the mean GP's
posterior mean at the rows, min-max scaled over the rows) and takes the variance GP's posterior
from that fit, the mean GP's from the study's own; picks argmax LCB^MV (the recommender's beta)
over the rows with 2+ seeds. Prints IQM of the true normalized regret: the default's
recommendation, the same rule on the study's own models, and on the augmented variance GP.
    PYTHONPATH=src python ident_aug.py TASK ALPHA SET RUNS REPS
"""
import sys

import numpy as np

from _replay import Truth, best_of, print_iqm, replayed
from erahbo.gp import make_round
from erahbo.gp.bounds import lcb_mv
from erahbo.gp.fit import fit_hyperparameters
from erahbo.gp.one_seed import variance_observations
from erahbo.optimizer.variance_prior import noise_of

name, alpha, s, runs, reps = sys.argv[1], float(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
truth = Truth(name, alpha)
res = {key: [] for key in ("rec", "own", "aug", "best2")}
for rep, opt, _, reg in replayed(truth, s, runs, reps):
    d, o = opt.data, opt.options
    ok = np.asarray(d.k, float) >= 2
    rm = opt.models.current()
    U = np.asarray(d.U, float)
    beta = opt.models.recommender.beta
    res["rec"].append(truth.regret(opt.recommend()))
    mf, sf, mv, sv = rm.predict(U)
    res["own"].append(best_of(lcb_mv(mf, sf, mv, sv, alpha, beta, log_var=rm.log_var), reg, ok))
    fh = (mf - mf.min()) / max(mf.max() - mf.min(), 1e-12)
    Ua = np.column_stack([U, fh])
    s2obs = opt.models._fail_s2()
    st = fit_hyperparameters(Ua, d.ybar, s2obs, d.k, kind=o.kernel, beta=o.beta,
                             rho_max2=o.rho_max2, rho_max2_model=o.rho_max2_model,
                             rho_max2_spread=o.rho_max2_spread, seed=o.seed,
                             one_seed=o.min_seeds == 1, var_noise_prior=o.var_noise_prior,
                             var_noise=noise_of(o), previous=None, evidence=0.0)
    var_obs = variance_observations(s2obs, d.k, st.sigma0_2, d.ybar)
    rma = make_round("reference", None, Ua, d.ybar, var_obs, d.k, st, None)
    _, _, mva, sva = rma.predict(Ua)  # the variance GP's posterior from the [x, f_hat] fit
    res["aug"].append(best_of(lcb_mv(mf, sf, mva, sva, alpha, beta, log_var=rma.log_var), reg, ok))
    res["best2"].append(reg[ok].min())
    if rep == 0:
        print("ls_v", np.round(st.hyper_v.lengthscales, 3), "ls_f", np.round(st.hyper_f.lengthscales, 3), flush=True)
print_iqm(f"{name} a{alpha:g}s{s} @{runs}", res)
