"""Per-table IQM normalized regret after 50 / 100 / 200 runs of two methods of a defaults-study
output folder (session 53, scratch helper kept with its records)::

    python tables_per_task.py OUT_DIR [A [B]]      (default A erahbo-fp4, B v-default)
"""
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[4] / "benchmarks"))
from defaults_study import _regret_curves  # noqa: E402

from erahbo.analysis.intervals import iqm  # noqa: E402

out = Path(sys.argv[1])
a = sys.argv[2] if len(sys.argv) > 2 else "erahbo-fp4"
b = sys.argv[3] if len(sys.argv) > 3 else "v-default"
cur = dict(_regret_curves(out, 200, [a, b], None, None, by_repetition=True))
tasks = sorted({t for t, _, _ in cur})
print(f"{'table':28s} {b:>24s} {a:>24s}  identical traces")
for t in tasks:
    row = []
    for m in (b, a):
        x = np.array([c for (tt, mm, _), c in sorted(cur.items()) if tt == t and mm == m])
        row.append(" / ".join(f"{iqm(x[:, cp - 1]):.3f}" for cp in (50, 100, 200)))
    same = sum(np.array_equal(cur[(t, a, r)], cur[(t, b, r)])
               for (tt, mm, r) in cur if tt == t and mm == a and (t, b, r) in cur)
    print(f"{t:28s} {row[0]:>24s} {row[1]:>24s}  {same}")
