"""Per task IQM regret after 50 / 100 / 200 runs, reference -> variant (session 54, scratch)::

    python pertask.py "VARIANT_{cell}.csv" "REFERENCE_{cell}.csv" a1s0,a1s1,...
"""
import sys

import pandas as pd
from scipy.stats import trim_mean

CHECKPOINTS = ("r50", "r100", "r200")
a, b = sys.argv[1], sys.argv[2]
for cell in sys.argv[3].split(","):
    A = pd.read_csv(a.format(cell=cell))
    B = pd.read_csv(b.format(cell=cell))
    print(cell)
    for t in sorted(A.task.unique()):
        ra, rb = A[A.task == t], B[B.task == t]
        s = " | ".join("%.3f->%.3f" % (trim_mean(rb[c], 0.25), trim_mean(ra[c], 0.25))
                       for c in CHECKPOINTS)
        print(f"  {t:28s} {s}")
