"""Per-task count of a variant's traces against the peers (strict and with ties).
usage: python count_per_task.py PATTERN_WITH_{cell} [TIE [METHOD]]
(e.g. "../checkpoints_s40/rmo_{cell}.csv" 1e-6): per (cell, peer, checkpoint) wins-ties-losses
over the 11 tasks; strict (TIE 0): 8 wins needed; else wins on two thirds of the decided tasks.
Peers: the per-task IQMs of the session 25-32 tables beside this folder, overridden by the
per-trace CSVs of checkpoints_s33-s35 (session 35 reran the peers on the machine of 33-42)."""
import os
import sys
from pathlib import Path

import pandas as pd
from scipy.stats import trim_mean

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "checkpoints_s45"))
from expected_count import CELLS, PEERS, load_peers  # noqa: E402  (one peer loader)


def iqm_table(path):
    df = pd.read_csv(path)
    out = {}
    for (t, me), g in df.groupby(["task", "method"]):
        out.setdefault(me, {})[t] = [trim_mean(g[c].dropna(), 0.25) for c in ("r50", "r100", "r200")]
    return out


def per_task_iqm(kind, d):
    """A peer of :func:`expected_count.load_peers` as {task: [IQM after 50, 100, 200 runs]}."""
    if kind == "normal":
        return {t: list(mu) for t, (mu, _sd) in d.items()}
    return {t: [trim_mean(x[:, j], 0.25) for j in range(3)] for t, x in d.items()}


peer = {key: per_task_iqm(*val) for key, val in load_peers(None).items()}  # (cell, peer) -> ...
if __name__ == "__main__":
    pat = sys.argv[1]; tie = float(sys.argv[2]) if len(sys.argv) > 2 else 0.0
    method = sys.argv[3] if len(sys.argv) > 3 else None
    short = 0; rows = []
    for cell in CELLS:
        p = pat.format(cell=cell)
        if not os.path.exists(p):
            continue
        tab = iqm_table(p)
        me = method or next(iter(tab))
        v = tab[me]
        for pe in PEERS:
            d = peer.get((cell, pe))
            if d is None:
                rows.append(f"{cell} {pe}: missing"); continue
            ents = []
            for j, ck in enumerate((50, 100, 200)):
                w = l = ti = 0
                for t in v:
                    diff = v[t][j] - d[t][j]
                    if abs(diff) <= tie and tie > 0: ti += 1
                    elif diff < 0: w += 1
                    else: l += 1
                ok = (w >= 8) if tie == 0 else (w >= 2 / 3 * (w + l))
                if not ok: short += 1
                ents.append(f"@{ck} {w}-{ti}-{l}{'' if ok else ' SHORT'}")
            rows.append(f"{cell} {pe:15s} " + " | ".join(ents))
    print("\n".join(rows)); print("short:", short)
