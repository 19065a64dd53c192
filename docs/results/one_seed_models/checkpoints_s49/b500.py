"""Session 49: two budget-500 battery folders of ``continuous_benchmark.py`` paired by (task,
repetition): IQM of the normalized MV regret after 50 / 100 / 200 / 500 runs and the paired
difference [95 % bootstrap, resampling repetitions within each task].

usage: PYTHONPATH=src python b500.py VARIANT_DIR REFERENCE_DIR
"""

import sys

import numpy as np
from scipy.stats import trim_mean

from erahbo.analysis.traces import load_traces

CHECKPOINTS = (50, 100, 200, 500)


def per_trace(out: str) -> dict[tuple[str, int], np.ndarray]:
    """(task, repetition) -> (4,) normalized regret at the checkpoints (one method a folder)."""
    ts = load_traces(out)
    rows = {}
    for t in ts.tasks:
        nr = ts.normalized_regret[t]  # (methods, repetitions, runs)
        for ri, rep in enumerate(ts.repetitions[t]):
            rows[(t, int(rep))] = np.array([nr[0, ri, c - 1] for c in CHECKPOINTS])
    return rows


def main() -> None:
    v, d = per_trace(sys.argv[1]), per_trace(sys.argv[2])
    keys = sorted(set(v) & set(d))
    V, D = np.array([v[k] for k in keys]), np.array([d[k] for k in keys])  # (n, 4)
    groups = [np.flatnonzero([k[0] == t for k in keys]) for t in sorted({k[0] for k in keys})]
    rng = np.random.default_rng(0)
    boot = []
    for _ in range(2000):
        idx = np.concatenate([g[rng.integers(0, len(g), len(g))] for g in groups])
        boot.append(trim_mean(V[idx], 0.25, axis=0) - trim_mean(D[idx], 0.25, axis=0))
    lo, hi = np.percentile(np.array(boot), [2.5, 97.5], axis=0)
    iv, idf = trim_mean(V, 0.25, axis=0), trim_mean(D, 0.25, axis=0)
    print(f"n={len(keys)}; after {' / '.join(map(str, CHECKPOINTS))} runs")
    print("reference", " / ".join(f"{x:.3f}" for x in idf))
    print("variant  ", " / ".join(f"{x:.3f}" for x in iv))
    print("difference", " / ".join(f"{a - b:+.3f} [{x:+.3f}, {y:+.3f}]"
                                   for a, b, x, y in zip(iv, idf, lo, hi, strict=True)))


if __name__ == "__main__":
    main()
