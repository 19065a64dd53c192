import sys, glob, pandas as pd, numpy as np
from erahbo.experiments.continuous import task_truth
from erahbo.objectives.known_truth import make_task
root, task, alpha = sys.argv[1], sys.argv[2], float(sys.argv[3])
tr = task_truth(make_task(task), alpha); star=tr["mv_star"]; norm = star-tr["uniform_mv_mean"]
for m in sorted(glob.glob(f"{root}/traces/{task}/*")):
    out=[]
    for f in sorted(glob.glob(m+"/rep-*.parquet")):
        d = pd.read_parquet(f); reg=(star-d.config_mv.values)/norm
        best = np.minimum.accumulate(reg)
        out.append(f"{d.config_id.nunique():3d}cf best@50 {best[49]:.2f} @100 {best[99]:.2f} @200 {best[-1]:.2f} rec {d.simple_regret.values[-1]:.2f}")
    print(m.split('/')[-1]); print("\n".join("  "+o for o in out))
