"""Scratch (session 55): the variance GP with the mean GP's posterior mean as an extra input.

Replays the default study to RUNS runs; refits both GPs on [U, f_hat] (f_hat: the mean GP's
posterior mean at the rows, min-max scaled over the rows) and takes the variance GP's posterior
from that fit, the mean GP's from the study's own; picks argmax LCB^MV (the recommender's beta)
over the rows with 2+ seeds. Prints IQM of the true normalized regret: the default's
recommendation, the same rule on the study's own models, and on the augmented variance GP.
    PYTHONPATH=src python ident_aug.py TASK ALPHA SET RUNS REPS
"""
import sys
from pathlib import Path
import numpy as np
from scipy.stats import trim_mean
sys.path.insert(0, str(Path(__file__).resolve().parents[4] / "benchmarks"))
from recommendation_probe import replay_until
from erahbo.experiments.continuous import task_truth
from erahbo.objectives.known_truth import make_task
from erahbo.gp import make_round
from erahbo.gp.fit import fit_hyperparameters
from erahbo.gp.bounds import lcb_mv
from erahbo.optimizer.variance_prior import noise_of

name, alpha, s, runs, reps = sys.argv[1], float(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
task = make_task(name)
truth = task_truth(task, alpha)
star, norm = truth["mv_star"], truth["mv_star"] - truth["uniform_mv_mean"]
res = {key: [] for key in ("rec", "own", "aug", "best2")}
for rep in range(reps):
    opt = replay_until(task, "erahbo", alpha, s, rep, runs)
    d, o = opt.data, opt.options
    cfgs = [opt.state.config(c, u) for c, u in zip(d.config_ids, d.U, strict=True)]
    reg = np.array([(star - task.mv(c, alpha)) / norm for c in cfgs])
    k = np.asarray(d.k, float)
    rm = opt.models.current()
    U = np.asarray(d.U, float)
    mf, sf, mv, sv = rm.predict(U)
    beta = opt.models.recommender.beta
    ok = k >= 2
    def pick(lo):
        return reg[int(np.argmax(np.where(ok, lo, -np.inf)))]
    res["rec"].append((star - task.mv(opt.recommend(), alpha)) / norm)
    res["own"].append(pick(lcb_mv(mf, sf, mv, sv, alpha, beta, log_var=rm.log_var)))
    fh = (mf - mf.min()) / max(mf.max() - mf.min(), 1e-12)
    Ua = np.column_stack([U, fh])
    s2obs = opt.models._fail_s2()
    st = fit_hyperparameters(Ua, d.ybar, s2obs, d.k, kind=o.kernel, beta=o.beta,
                             rho_max2=o.rho_max2, rho_max2_model=o.rho_max2_model,
                             rho_max2_spread=o.rho_max2_spread, seed=o.seed,
                             one_seed=o.min_seeds == 1, var_noise_prior=o.var_noise_prior,
                             var_noise=noise_of(o), previous=None, evidence=0.0)
    from erahbo.gp.one_seed import variance_observations
    var_obs = variance_observations(s2obs, d.k, st.sigma0_2, d.ybar)
    rma = make_round("reference", None, Ua, d.ybar, var_obs, d.k, st, None)
    _, _, mva, sva = rma.predict(Ua)
    res["aug"].append(pick(lcb_mv(mf, sf, mva, sva, alpha, beta, log_var=rma.log_var)))
    res["best2"].append(reg[ok].min())
    if rep == 0:
        print("ls_v", np.round(st.hyper_v.lengthscales, 3), "ls_f", np.round(st.hyper_f.lengthscales, 3), flush=True)
print(name, f"a{alpha:g}s{s}", f"@{runs}", " ".join(
    f"{key} {trim_mean(np.asarray(v, float), 0.25):.3f}" for key, v in res.items()), flush=True)
