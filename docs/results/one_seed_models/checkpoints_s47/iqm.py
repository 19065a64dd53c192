"""Per-task IQM of the normalized MV regret after 50 / 100 / 200 runs of compact records.
usage: python iqm.py FILE.csv ..."""
import sys

import pandas as pd
from scipy.stats import trim_mean

df = pd.concat([pd.read_csv(f) for f in sys.argv[1:]])
for (t, m), g in df.groupby(["task", "method"], sort=True):
    print(f"| {t} | {m} | " + " / ".join(f"{trim_mean(g[c], 0.25):.3f}" for c in ("r50", "r100", "r200")) + " |")
