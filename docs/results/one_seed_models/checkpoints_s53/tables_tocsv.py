"""A defaults-study output folder as one CSV (task, method, rep, r50, r100, r200: the normalized
regret after that many runs) (session 53, scratch helper)::

    python tables_tocsv.py OUT_DIR OUT.csv
"""
import sys
from pathlib import Path

import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parents[4] / "benchmarks"))
from defaults_study import _regret_curves  # noqa: E402

cur = dict(_regret_curves(Path(sys.argv[1]), 200, None, None, None, by_repetition=True))
rows = [{"task": t, "method": m, "rep": r, "r50": c[49], "r100": c[99], "r200": c[199]}
        for (t, m, r), c in sorted(cur.items())]
pd.DataFrame(rows).to_csv(sys.argv[2], index=False)
