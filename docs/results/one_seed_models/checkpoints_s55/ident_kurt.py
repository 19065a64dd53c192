"""Scratch (session 55): believing agreeing seeds less, recommendation only.

Replays the default study to RUNS runs; rebuilds the round model (reference engine, the study's
own hyperparameters) with the log variance's noise psi'((k - 1) / 2) + kappa / k (returns with
excess kurtosis kappa) for each kappa given, and picks argmax LCB^MV (the recommender's beta)
over the rows with 2+ seeds. kappa = 0 is the study's own model (the control). Prints the IQM
of the true normalized regret of each pick and of the default's recommendation.
    PYTHONPATH=src python ident_kurt.py TASK ALPHA SET RUNS REPS [KAPPA ...]
"""
import sys
from pathlib import Path

import numpy as np
from scipy.special import polygamma
from scipy.stats import trim_mean

sys.path.insert(0, str(Path(__file__).resolve().parents[4] / "benchmarks"))
from recommendation_probe import replay_until  # noqa: E402

import erahbo.gp.round as round_mod  # noqa: E402
from erahbo.experiments.continuous import task_truth  # noqa: E402
from erahbo.gp import make_round  # noqa: E402
from erahbo.gp.bounds import lcb_mv  # noqa: E402
from erahbo.gp.variance_noise import TRIGAMMA_HALF, variance_noise  # noqa: E402
from erahbo.objectives.known_truth import make_task  # noqa: E402

name, alpha, s, runs, reps = sys.argv[1], float(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
kappas = [float(x) for x in sys.argv[6:]] or [0.0, 2.0, 4.0, 8.0]
task = make_task(name)
truth = task_truth(task, alpha)
star, norm = truth["mv_star"], truth["mv_star"] - truth["uniform_mv_mean"]
KAPPA = [0.0]


def kurt_noise(tau2, k, chi2, log):
    base = variance_noise(tau2, k, chi2, log)
    if not log or KAPPA[0] == 0.0:
        return base
    kk = np.asarray(k, dtype=float)
    extra = tau2 * KAPPA[0] / np.maximum(kk, 2.0) / TRIGAMMA_HALF
    out = np.where(kk >= 2, base + extra, base)
    return out if isinstance(k, np.ndarray) else float(out)


round_mod.variance_noise = kurt_noise
res = {"rec": []} | {f"k{kp:g}": [] for kp in kappas} | {"best2": []}
for rep in range(reps):
    KAPPA[0] = 0.0
    opt = replay_until(task, "erahbo", alpha, s, rep, runs)
    d = opt.data
    cfgs = [opt.state.config(c, u) for c, u in zip(d.config_ids, d.U, strict=True)]
    reg = np.array([(star - task.mv(c, alpha)) / norm for c in cfgs])
    k = np.asarray(d.k, float)
    ok = k >= 2
    beta = opt.models.recommender.beta
    U = np.asarray(d.U, float)
    res["rec"].append((star - task.mv(opt.recommend(), alpha)) / norm)
    for kp in kappas:
        KAPPA[0] = kp
        rm = make_round("reference", None, U, d.ybar, opt.models.variances(), d.k,
                        opt.models.settings, None)
        mf, sf, mv, sv = rm.predict(U)
        lo = lcb_mv(mf, sf, mv, sv, alpha, beta, log_var=rm.log_var)
        res[f"k{kp:g}"].append(reg[int(np.argmax(np.where(ok, lo, -np.inf)))])
    res["best2"].append(reg[ok].min())
print(name, f"a{alpha:g}s{s}", f"@{runs}", " ".join(
    f"{key} {trim_mean(np.asarray(v, float), 0.25):.3f}" for key, v in res.items()), flush=True)
