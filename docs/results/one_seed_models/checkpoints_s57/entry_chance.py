"""Every entry of the per-task criterion read as a chance (session 57): for each alpha, peer and
checkpoint, the chance that one repetition set of 20 passes (the default's IQM regret below the
peer's on at least 8 of the 11 tasks). Both sides are resampled from their realized traces
pooled over the repetition sets where the peer has traces (the default's on the same sets),
each task independently; values rounded to 7 decimals as the peers' stored traces are. The
peers' traces: sessions 35/45 (sets 0-1), ``checkpoints_s56`` (sets 2-3), ``checkpoints_s57``
(SMAC3 at alpha 1 on sets 0, 2 and 3, at alpha 3 on set 0); a cell with no traces (SMAC3 at
alpha 3 and 10 on sets 2-3) is left out. From this folder's parent::

    PYTHONPATH=../../../src python checkpoints_s57/entry_chance.py "/tmp/mix/capy03_{cell}.csv"
"""
import sys
from pathlib import Path

import numpy as np
import pandas as pd

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from passprob import B, all_peers, draws  # noqa: E402

PEERS = ("optuna-tpe-k10", "rahbo-k2", "bts-red", "smac")


def main() -> None:
    pattern = sys.argv[1]
    peers = all_peers()
    rng = np.random.default_rng(0)
    total = 0.0
    print("alpha peer            sets      P(pass) @50 / @100 / @200 (a set of 20 repetitions)")
    for a in (1, 3, 10):
        for p in PEERS:
            sets = [s for s in range(4) if peers.get((f"a{a}s{s}", p), ("none",))[0] == "traces"]
            if not sets:
                continue
            mine = [pd.read_csv(pattern.format(cell=f"a{a}s{s}")) for s in sets]
            theirs = [peers[(f"a{a}s{s}", p)][1] for s in sets]
            tasks = sorted(mine[0].task.unique())
            got = []
            for j, ck in enumerate(("r50", "r100", "r200")):
                wins = np.zeros((B, len(tasks)), bool)
                for i, t in enumerate(tasks):
                    x = np.concatenate([df[df.task == t][ck].to_numpy(float) for df in mine])
                    y = np.concatenate([d[t][:, j] for d in theirs])
                    wins[:, i] = draws(x, rng) < draws(y, rng)
                got.append(float(np.mean(wins.sum(1) >= 8)))
            total += sum(1 - g for g in got)
            print(f"  {a:3d} {p:15s} {','.join(map(str, sets)):8s}  "
                  + " / ".join(f"{g:.2f}" for g in got))
    print(f"expected entries short in one set: {total:.2f}")


if __name__ == "__main__":
    main()
