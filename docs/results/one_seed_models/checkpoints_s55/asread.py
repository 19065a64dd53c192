"""As-read per-task count: for each cell x peer x checkpoint, tasks where the variant's IQM is below the peer's (strict)."""
import sys
import os
from pathlib import Path
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "checkpoints_s45"))
import numpy as np, pandas as pd
from expected_count import load_peers, iqm_rows, CELLS, PEERS, CK, HERE
peers = load_peers(str(HERE))
pat = sys.argv[1]
short = 0
for cell in CELLS:
    f = pat.format(cell=cell)
    if not os.path.exists(f):
        continue
    df = pd.read_csv(f); tasks = sorted(df.task.unique())
    v = np.stack([iqm_rows(df[df.task == t][list(CK)].to_numpy(float)) for t in tasks])
    line = []
    for pe in PEERS:
        kind, d = peers[(cell, pe)]
        p = np.stack([iqm_rows(d[t]) for t in tasks]) if kind == "traces" else np.stack([d[t][0] for t in tasks])
        okt = (v - p) < 0
        wins = okt.sum(0)
        for j, c in enumerate((50, 100, 200)):
            if wins[j] < 8:
                short += 1
                lost = [t.replace("surr-", "") for i, t in enumerate(tasks) if not okt[i, j]]
                line.append(f"{pe}@{c}:{wins[j]}/11 lost {','.join(lost)}")
    print(cell, "; ".join(line) if line else "ok")
print("short as read:", short)
