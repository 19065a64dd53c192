"""Issue 37's criterion pooled over tasks, per repetition set (session 58).

For every cell (alpha x set) and every peer with traces there, the default's IQM normalized
regret over all (task, repetition) pairs against the peer's, after 50 / 100 / 200 runs; an entry
is marked NOT BELOW where the default's is not strictly below.

usage (from this folder's parent): PYTHONPATH=../../../src python checkpoints_s58/pooled_tasks.py
(the default's cells at /tmp/mix: ``checkpoints_s49/mix.sh /tmp/mix``)
"""
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "checkpoints_s56"))
sys.path.insert(0, str(HERE.parent / "checkpoints_s45"))
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
from expected_count import PEERS, iqm_rows  # noqa: E402
from pooled import CK, all_peers  # noqa: E402


def main() -> None:
    peers = all_peers()
    n = bad = 0
    for s in (0, 1, 2, 3):
        for a in (1, 3, 10):
            df = pd.read_csv(f"/tmp/mix/capy03_a{a}s{s}.csv")
            tasks = sorted(df.task.unique())
            v = iqm_rows(np.concatenate([df[df.task == t][CK].to_numpy(float) for t in tasks]))
            for pe in PEERS:
                kind, d = peers.get((f"a{a}s{s}", pe), ("none", None))
                if kind != "traces":
                    continue
                p = iqm_rows(np.concatenate([d[t] for t in tasks]))
                lost = bool((v >= p).any())
                n, bad = n + 1, bad + lost
                print(f"set {s} alpha {a:2d} {pe:15s} default {np.round(v, 3)} "
                      f"peer {np.round(p, 3)}{'  NOT BELOW' if lost else ''}")
    print(f"cells x peers read: {n}; with a checkpoint not below: {bad}")


if __name__ == "__main__":
    main()
