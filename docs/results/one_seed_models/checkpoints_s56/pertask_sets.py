"""Per task, the default's IQM regret against one peer's on each repetition set and on all sets
together (session 56). The peers' traces: sessions 35/45 for sets 0-1
(``expected_count.load_peers``), this folder's ``peers_<method>_<cell>.csv`` for sets 2-3.

usage (from this folder's parent): PYTHONPATH=../../../src python checkpoints_s56/pertask_sets.py
       "PATTERN_{cell}.csv" PEER ALPHA CHECKPOINT [SETS]      e.g. optuna-tpe-k10 10 50 0,1,2,3
"""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "checkpoints_s45"))
import numpy as np
import pandas as pd
from expected_count import iqm_rows
from pooled import CK, all_peers


def main() -> None:
    pat, peer, alpha, ck = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
    sets = [int(s) for s in (sys.argv[5] if len(sys.argv) > 5 else "0,1,2,3").split(",")]
    j = {50: 0, 100: 1, 200: 2}[ck]
    peers = all_peers()
    mine = [pd.read_csv(pat.format(cell=f"a{alpha}s{s}")) for s in sets]
    theirs = [peers[(f"a{alpha}s{s}", peer)][1] for s in sets]
    print(f"alpha {alpha}, {peer}, after {ck} runs: erahbo / peer on all {20 * len(sets)} "
          f"repetitions | per set {sets} (* not below)")
    for t in sorted(mine[0].task.unique()):
        v = [df[df.task == t][CK].to_numpy(float) for df in mine]
        p = [d[t] for d in theirs]
        per = " ".join(_pair(iqm_rows(a)[j], iqm_rows(b)[j]) for a, b in zip(v, p, strict=True))
        both = _pair(iqm_rows(np.concatenate(v))[j], iqm_rows(np.concatenate(p))[j], " / ")
        print(f"  {t.replace('surr-', ''):32s} {both} | {per}")


def _pair(mine: float, peer: float, sep: str = "/") -> str:
    """``mine{sep}peer``, starred where mine is not below the peer's."""
    return f"{mine:.3f}{sep}{peer:.3f}{'*' if mine >= peer else ' '}"


if __name__ == "__main__":
    main()
