"""Session 49: per study of one cell and task (the lanes' output folders under /work/s49):
configurations evaluated, best true MV evaluated, the recommendation's true MV, seeds and regret
(medians).  usage: python dqnmc.py CELL TASK, e.g. a1s2 surr-dqn_cc_mountain_car"""
import pandas as pd, numpy as np, glob, sys
for v, m in [("def", "erahbo"), ("rs03", "erahbo-rs0.3"), ("rs06", "erahbo-rs0.6")]:
    rows = []
    for f in sorted(glob.glob(f"/work/s49/bat_{v}_{sys.argv[1]}/traces/{sys.argv[2]}/{m}/rep-*.parquet")):
        t = pd.read_parquet(f)
        best = t.config_mv.max()
        inc = t.incumbent_id.iloc[-1]
        kinc = (t.config_id == inc).sum()
        rows.append((t.config_id.nunique(), best, t.incumbent_mv.iloc[-1], kinc, t.simple_regret.iloc[-1]))
    a = np.array(rows)
    print(v, "configs %.0f" % np.median(a[:, 0]), "best evaluated MV med %.3f" % np.median(a[:, 1]), "rec MV med %.3f" % np.median(a[:, 2]), "rec seeds med %.0f" % np.median(a[:, 3]), "regret med %.3f" % np.median(a[:, 4]), "reps where best eval > rec+0.05: %d" % (a[:, 1] > a[:, 2] + 0.05).sum())
