"""At N runs: mean number of configurations, of those with 2+, 5+ seeds, and the incumbent's seeds, per task (trace folders)."""
import sys, glob
import numpy as np, pandas as pd
root, n = sys.argv[1], int(sys.argv[2])
for tdir in sorted(glob.glob(root + "/traces/*")):
    rows = []
    for f in sorted(glob.glob(tdir + "/erahbo/rep-*.parquet")):
        d = pd.read_parquet(f); d = d[d.run <= n]
        c = d.groupby("config_id").size()
        inc = d.incumbent_id.iloc[-1]
        rows.append((len(c), (c >= 2).sum(), (c >= 5).sum(), c.get(inc, 0), c.max()))
    r = np.mean(rows, axis=0)
    print(f"{tdir.split('/')[-1]:38s} configs {r[0]:5.1f} 2+ {r[1]:5.1f} 5+ {r[2]:4.1f} k_inc {r[3]:5.1f} k_max {r[4]:5.1f}")
