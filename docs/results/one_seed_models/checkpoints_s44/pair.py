"""pair.py VARIANT_PATTERN [REF_PATTERN]: per alpha, pooled over sets 0-1, IQM ref -> variant, diff [95% bootstrap within task and set]."""
import sys, os
import numpy as np, pandas as pd
from scipy.stats import trim_mean
var = sys.argv[1]
ref = sys.argv[2] if len(sys.argv) > 2 else "/work/main/docs/results/one_seed_models/checkpoints_s40/rmo_{cell}.csv"
def iqm(x): return trim_mean(x, 0.25)
for a in (1, 3, 10):
    parts = []
    for s in (0, 1):
        cell = f"a{a}s{s}"
        if not (os.path.exists(var.format(cell=cell)) and os.path.exists(ref.format(cell=cell))): continue
        x = pd.read_csv(var.format(cell=cell)); y = pd.read_csv(ref.format(cell=cell))
        y = y[y.method == y.method.iloc[0]]
        m = x.merge(y, on=["task", "rep"], suffixes=("_v", "_d")); m["g"] = m.task + str(s)
        parts.append(m)
    if not parts: continue
    m = pd.concat(parts, ignore_index=True)
    groups = [np.flatnonzero(m.g.to_numpy() == g) for g in m.g.unique()]
    rng = np.random.default_rng(0)
    out = []
    for c in ("r50", "r100", "r200"):
        v, d = m[c + "_v"].to_numpy(), m[c + "_d"].to_numpy()
        bs = []
        for _ in range(2000):
            idx = np.concatenate([g[rng.integers(0, len(g), len(g))] for g in groups])
            bs.append(iqm(v[idx]) - iqm(d[idx]))
        lo, hi = np.percentile(bs, [2.5, 97.5])
        out.append((iqm(d), iqm(v), iqm(v) - iqm(d), lo, hi))
    print(f"alpha {a} (n={len(m)}): " + " / ".join(f"{o[0]:.3f}" for o in out) + " -> " + " / ".join(f"{o[1]:.3f}" for o in out)
          + " | " + " / ".join(f"{o[2]:+.3f} [{o[3]:+.3f}, {o[4]:+.3f}]{'*' if o[3] > 0 or o[4] < 0 else ''}" for o in out))
