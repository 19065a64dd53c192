"""Session 49: per study of one cell and task (the lanes' output folders under /work/s49), the
configurations evaluated, the best true MV evaluated, the recommendation's true MV, its seeds
and the regret (medians), for the default, the share 0.3 and the share 0.6.

usage: python dqnmc.py CELL TASK, e.g. ``python dqnmc.py a1s2 surr-dqn_cc_mountain_car``;
``python dqnmc.py - TASK NAME=FOLDER:METHOD ...`` reads the named output folders instead
(session 50: ``new=/work/s50/b500_new_a3s0:erahbo old=/work/s50/b500_old_a3s0:erahbo-rs0``).
"""

import glob
import sys

import numpy as np
import pandas as pd

VARIANTS = [("def", "erahbo"), ("rs03", "erahbo-rs0.3"), ("rs06", "erahbo-rs0.6")]


def main() -> None:
    cell, task = sys.argv[1], sys.argv[2]
    folders = [(name, f"/work/s49/bat_{name}_{cell}", method) for name, method in VARIANTS]
    if cell == "-":
        folders = [(a.split("=")[0], *a.split("=", 1)[1].rsplit(":", 1)) for a in sys.argv[3:]]
    for name, folder, method in folders:
        rows = []
        pattern = f"{folder}/traces/{task}/{method}/rep-*.parquet"
        for f in sorted(glob.glob(pattern)):
            t = pd.read_parquet(f)
            inc = t.incumbent_id.iloc[-1]
            rows.append((t.config_id.nunique(), t.config_mv.max(), t.incumbent_mv.iloc[-1],
                         (t.config_id == inc).sum(), t.simple_regret.iloc[-1]))
        if not rows:
            continue
        a = np.array(rows)
        missed = int((a[:, 1] > a[:, 2] + 0.05).sum())
        print(f"{name}: configs {np.median(a[:, 0]):.0f}, best evaluated MV "
              f"{np.median(a[:, 1]):.3f}, recommendation's MV {np.median(a[:, 2]):.3f}, its "
              f"seeds {np.median(a[:, 3]):.0f}, regret {np.median(a[:, 4]):.3f}; studies whose "
              f"best evaluated beats the recommendation by 0.05: {missed}")


if __name__ == "__main__":
    main()
