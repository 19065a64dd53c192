import sys, pandas as pd, numpy as np
from scipy.stats import trim_mean
a, b = sys.argv[1], sys.argv[2]
for cell in sys.argv[3].split(","):
    A = pd.read_csv(a.format(cell=cell)); B = pd.read_csv(b.format(cell=cell))
    print(cell)
    for t in sorted(A.task.unique()):
        ra = A[A.task == t]; rb = B[B.task == t]
        cols = [c for c in A.columns if c.startswith("r")]
        s = " | ".join("%.3f->%.3f" % (trim_mean(rb[c], 0.25), trim_mean(ra[c], 0.25)) for c in cols)
        print(f"  {t:28s} {s}")
