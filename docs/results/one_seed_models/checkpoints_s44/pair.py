"""One per-trace record against another, per alpha, pooled over repetition sets 0 and 1.

Prints the pooled IQM after 50 / 100 / 200 runs of the reference and of the variant and the
difference with its 95 % bootstrap interval (repetitions resampled within task and set; ``*``:
the interval excludes 0)::

    python pair.py "abv1_{cell}.csv" ["../checkpoints_s40/rmo_{cell}.csv"]

``{cell}`` is ``a<alpha>s<set>``; the reference defaults to the default's session-40 traces.
``SETS=0,1,2 python pair.py ...`` pools other repetition sets (session 46; default ``0,1``);
a set missing for either record is left out.
"""

import os
import sys

import numpy as np
import pandas as pd
from scipy.stats import trim_mean

CHECKPOINTS = ("r50", "r100", "r200")
DEFAULT = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                       "..", "checkpoints_s40", "rmo_{cell}.csv")


def iqm(x: np.ndarray) -> float:
    return float(trim_mean(x, 0.25))


def pooled(var: str, ref: str, alpha: int) -> pd.DataFrame | None:
    """The two records' traces of one alpha, merged by (task, repetition), over the sets of
    ``SETS`` (default 0 and 1)."""
    parts = []
    for s in (int(x) for x in os.environ.get("SETS", "0,1").split(",")):
        cell = f"a{alpha}s{s}"
        if not (os.path.exists(var.format(cell=cell)) and os.path.exists(ref.format(cell=cell))):
            continue
        x, y = pd.read_csv(var.format(cell=cell)), pd.read_csv(ref.format(cell=cell))
        y = y[y.method == y.method.iloc[0]]
        m = x.merge(y, on=["task", "rep"], suffixes=("_v", "_d"))
        m["group"] = m.task + f"/{s}"
        parts.append(m)
    return pd.concat(parts, ignore_index=True) if parts else None


def main() -> None:
    var = sys.argv[1]
    ref = sys.argv[2] if len(sys.argv) > 2 else DEFAULT
    for alpha in (1, 3, 10):
        m = pooled(var, ref, alpha)
        if m is None:
            continue
        groups = [np.flatnonzero(m.group.to_numpy() == g) for g in m.group.unique()]
        rng = np.random.default_rng(0)
        cols = []
        for c in CHECKPOINTS:
            v, d = m[c + "_v"].to_numpy(), m[c + "_d"].to_numpy()
            draws = []
            for _ in range(2000):
                idx = np.concatenate([g[rng.integers(0, len(g), len(g))] for g in groups])
                draws.append(iqm(v[idx]) - iqm(d[idx]))
            lo, hi = np.percentile(draws, [2.5, 97.5])
            cols.append((iqm(d), iqm(v), iqm(v) - iqm(d), lo, hi))
        ref_s = " / ".join(f"{c[0]:.3f}" for c in cols)
        var_s = " / ".join(f"{c[1]:.3f}" for c in cols)
        diff_s = " / ".join(f"{c[2]:+.3f} [{c[3]:+.3f}, {c[4]:+.3f}]"
                            f"{'*' if c[3] > 0 or c[4] < 0 else ''}" for c in cols)
        print(f"alpha {alpha} (n={len(m)}): {ref_s} -> {var_s} | {diff_s}")


if __name__ == "__main__":
    main()
