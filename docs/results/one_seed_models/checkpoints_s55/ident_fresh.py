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
from pathlib import Path

import numpy as np
from scipy.stats import trim_mean

sys.path.insert(0, str(Path(__file__).resolve().parents[4] / "benchmarks"))
from recommendation_probe import replay_until  # noqa: E402

from erahbo.experiments.continuous import task_truth  # noqa: E402
from erahbo.gp import make_round  # noqa: E402
from erahbo.gp.bounds import lcb_mv  # noqa: E402
from erahbo.gp.one_seed import variance_observations  # noqa: E402
from erahbo.objectives.known_truth import make_task  # noqa: E402

name, alpha, s, runs, reps = sys.argv[1], float(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
least = int(sys.argv[6]) if len(sys.argv) > 6 else 3
task = make_task(name)
truth = task_truth(task, alpha)
star, norm = truth["mv_star"], truth["mv_star"] - truth["uniform_mv_mean"]
res = {key: [] for key in ("rec", "control", "fresh", "best2")}
for rep in range(reps):
    opt = replay_until(task, "erahbo", alpha, s, rep, runs)
    d = opt.data
    cfgs = [opt.state.config(c, u) for c, u in zip(d.config_ids, d.U, strict=True)]
    reg = np.array([(star - task.mv(c, alpha)) / norm for c in cfgs])
    k = np.asarray(d.k, float)
    ok = k >= 2
    beta = opt.models.recommender.beta
    U = np.asarray(d.U, float)
    st = opt.models.settings

    def pick(ybar, s2):
        obs = variance_observations(s2, d.k, st.sigma0_2, ybar)
        rm = make_round("reference", None, U, ybar, obs, d.k, st, None)
        mf, sf, mv, sv = rm.predict(U)
        lo = lcb_mv(mf, sf, mv, sv, alpha, beta, log_var=rm.log_var)
        return reg[int(np.argmax(np.where(ok, lo, -np.inf)))]

    ybar, s2 = np.array(d.ybar, float), np.array(d.s2, float)
    res["rec"].append((star - task.mv(opt.recommend(), alpha)) / norm)
    res["control"].append(pick(ybar, s2))
    yf, sf2 = ybar.copy(), s2.copy()
    for i in np.flatnonzero(k >= least):
        y = np.asarray(task.sample(cfgs[i], [10**6 + 1000 * rep + t for t in range(int(k[i]))]), float)
        yf[i], sf2[i] = y.mean(), y.var(ddof=1)
    res["fresh"].append(pick(yf, sf2))
    res["best2"].append(reg[ok].min())
print(name, f"a{alpha:g}s{s}", f"@{runs}", f"min {least}", " ".join(
    f"{key} {trim_mean(np.asarray(v, float), 0.25):.3f}" for key, v in res.items()), flush=True)
