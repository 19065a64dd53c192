"""Can a model locate the good window from n one-seed uniform runs?  For each task and rep:
n uniform configurations, one seed each; fit a model; the true normalized MV regret (alpha 1)
of its predicted-best among 5000 fresh uniform candidates plus the n evaluated, and the share
of its top 50 candidates inside the true top 1 %.
usage: python modelprobe.py TASK N REPS"""
import sys
import numpy as np
from scipy.stats import spearmanr
from erahbo.objectives.known_truth import make_task
from erahbo.gp.fit import fit_map
from erahbo.gp.exact import ExactGP

task = make_task(sys.argv[1]); sp = task.space
N, REPS = int(sys.argv[2]), int(sys.argv[3])

def gp_pred(X, y, C):
    m, s = y.mean(), y.std() or 1.0
    z = (y - m) / s
    h = fit_map(X, z, kind="matern52", n_restarts=3, seed=0)
    g = ExactGP(X, z, h.noise, h.lengthscales, "matern52")
    return g.predict(C)[0]

def warp_log(y):  # SMAC's log-scaled cost, as a return to maximize
    c = -y
    c = (c - c.min()) / (c.max() - c.min() + 1e-12)
    return -np.log(c + 1e-4)

def warp_rank(y):
    from scipy.stats import norm, rankdata
    return norm.ppf((rankdata(y) - 0.5) / len(y))

def rf_pred(X, y, C, seed):
    from sklearn.ensemble import RandomForestRegressor
    rf = RandomForestRegressor(n_estimators=10, max_features=5/6, min_samples_split=3,
                               min_samples_leaf=3, random_state=seed).fit(X, y)
    return rf.predict(C)

res = {}
for rep in range(REPS):
    rng = np.random.default_rng(1000 + rep)
    X = sp.sample_unit(N, rng)
    cfg = [sp.decode(u) for u in X]
    y = np.array([task.sample(c, [int(rng.integers(1 << 30))])[0] for c in cfg])
    C = np.vstack([X, sp.sample_unit(5000, rng)])
    fC = np.array([task.f(sp.decode(u)) for u in C])
    top1 = fC >= np.quantile(fC[N:], 0.99)
    preds = {"gp": gp_pred(X, y, C), "gp-log": gp_pred(X, warp_log(y), C),
             "gp-rank": gp_pred(X, warp_rank(y), C), "rf": rf_pred(X, y, C, rep),
             "rf-log": rf_pred(X, warp_log(y), C, rep)}
    best_seen = task.regret_norm(cfg[int(np.argmax(y))], 1.0)
    res.setdefault("best-return", []).append((best_seen, np.nan, np.nan))
    for k, p in preds.items():
        i = int(np.argmax(p))
        reg = task.regret_norm(sp.decode(C[i]), 1.0)
        rec = top1[np.argsort(-p)[:50]].mean()
        rho = spearmanr(p[N:], fC[N:])[0]
        res.setdefault(k, []).append((reg, rec, rho))
print(f"{sys.argv[1]} n={N} reps={REPS}: median regret of the pick / top-50 recall of top 1% / spearman")
for k, v in res.items():
    a = np.array(v)
    print(f"  {k:12s} {np.median(a[:,0]):.3f} (mean {a[:,0].mean():.3f}) / {np.nanmean(a[:,1]):.2f} / {np.nanmean(a[:,2]):.2f}")
