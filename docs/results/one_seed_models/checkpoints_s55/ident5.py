"""Scratch (session 54): other recommendation rules on the same data after RUNS runs.

The default study is replayed to RUNS runs (recommendation_probe.replay_until); at that point
each rule picks among the configurations with 2+ seeds, and the IQM over repetitions of the
true normalized regret of each pick is printed:
  rec   the default's recommendation
  post  argmax posterior MV (posterior mean f, variance GP's estimate)
  shr2  argmax posterior f - alpha (2 est + (k - 1) s^2) / (k + 1): the own sample variance
        shrunk to the estimate with 2 pseudo-dof
  samp  argmax sample MV (ybar - alpha s^2), 2+ seeds; samp3: 3+ seeds
(run with PYTHONPATH=src)
    python ident_rules.py TASK ALPHA SET RUNS REPS
"""
import sys
from pathlib import Path

import numpy as np
from scipy.stats import trim_mean

sys.path.insert(0, str(Path(__file__).resolve().parents[4] / "benchmarks"))
from recommendation_probe import replay_until  # noqa: E402

from erahbo.experiments.continuous import task_truth  # noqa: E402
from erahbo.objectives.known_truth import make_task  # noqa: E402

name, alpha, s, runs, reps = sys.argv[1], float(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
task = make_task(name)
truth = task_truth(task, alpha)
star, norm = truth["mv_star"], truth["mv_star"] - truth["uniform_mv_mean"]
res = {key: [] for key in ("rec", "lcb3", "lcb5", "samp5", "best2", "best5")}
from erahbo.gp.bounds import lcb_mv
for rep in range(reps):
    opt = replay_until(task, "erahbo", alpha, s, rep, runs)
    d = opt.data
    cfgs = [opt.state.config(c, u) for c, u in zip(d.config_ids, d.U, strict=True)]
    reg = np.array([(star - task.mv(c, alpha)) / norm for c in cfgs])
    k, ybar, s2 = np.asarray(d.k, float), np.asarray(d.ybar, float), np.asarray(d.s2, float)
    rm = opt.models.current()
    mu_f, sd_f, mu_v, sd_v = rm.predict(np.asarray(d.U, float))
    lo = lcb_mv(mu_f, sd_f, mu_v, sd_v, alpha, opt.models.recommender.beta, log_var=rm.log_var)
    ok = k >= 2

    def pick(score, mask=ok):
        if not mask.any():
            return np.nan
        sc = np.where(mask, score, -np.inf)
        return reg[int(np.argmax(sc))]
    res["rec"].append((star - task.mv(opt.recommend(), alpha)) / norm)
    res["lcb3"].append(pick(lo, k >= 3) if (k >= 3).any() else res["rec"][-1])
    res["lcb5"].append(pick(lo, k >= 5) if (k >= 5).any() else res["rec"][-1])
    res["samp5"].append(pick(ybar - alpha * s2, k >= 5) if (k >= 5).any() else res["rec"][-1])
    res["best2"].append(reg[ok].min())
    res["best5"].append(reg[k >= 5].min() if (k >= 5).any() else np.nan)
print(name, f"a{alpha:g}s{s}", f"@{runs}", " ".join(
    f"{key} {trim_mean(np.asarray(v, float)[np.isfinite(v)], 0.25):.3f}" for key, v in res.items()),
    flush=True)
