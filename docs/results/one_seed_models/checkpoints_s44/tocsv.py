"""The compact per-trace record of a results folder of ``benchmarks/continuous_benchmark.py``.

One row per (task, method, repetition): the normalized MV regret after 50, 100 and 200 runs
(``r50``, ``r100``, ``r200``; the format of ``../checkpoints_s33/README.md``)::

    PYTHONPATH=src python docs/results/one_seed_models/checkpoints_s44/tocsv.py OUT_DIR DEST.csv
"""

import sys

import pandas as pd

from erahbo.analysis.traces import load_traces


def main() -> None:
    out, dst = sys.argv[1], sys.argv[2]
    ts = load_traces(out)
    rows = []
    for t in ts.tasks:
        nr = ts.normalized_regret[t]  # (methods, repetitions, runs)
        for mi, m in enumerate(ts.methods):
            for ri, rep in enumerate(ts.repetitions[t]):
                rows.append(dict(task=t, method=m, rep=int(rep),
                                 **{f"r{c}": nr[mi, ri, c - 1] for c in (50, 100, 200)}))
    pd.DataFrame(rows).to_csv(dst, index=False)
    print("wrote", dst, len(rows))


if __name__ == "__main__":
    main()
