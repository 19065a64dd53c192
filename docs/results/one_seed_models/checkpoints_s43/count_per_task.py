"""Per-task count of a variant's traces against the peers (strict and with ties).
usage: python count_per_task.py PATTERN_WITH_{cell} [TIE [METHOD]]
(e.g. "../checkpoints_s40/rmo_{cell}.csv" 1e-6): per (cell, peer, checkpoint) wins-ties-losses
over the 11 tasks; strict (TIE 0): 8 wins needed; else wins on two thirds of the decided tasks.
Peers: the per-task IQMs of the session 25-32 tables beside this folder, overridden by the
per-trace CSVs of checkpoints_s33-s35 (session 35 reran the peers on the machine of 33-42)."""
import glob, re, sys, os
from pathlib import Path
import pandas as pd
from scipy.stats import trim_mean
D = str(Path(__file__).resolve().parents[1])  # docs/results/one_seed_models
CELLS = ["a1s0", "a1s1", "a3s0", "a3s1", "a10s0", "a10s1"]
PEERS = ["rahbo-k2", "optuna-tpe-k10", "bts-red", "smac"]
def sess(f):
    m = re.search(r"_s(\d+)\.md$", f); return int(m.group(1)) if m else 25
peer = {}  # (cell, peer) -> {task: [i50,i100,i200]}
for f in sorted(glob.glob(f"{D}/continuous_peers_*.md"), key=sess):
    b = os.path.basename(f)
    a = re.search(r"alpha(\d+)", b).group(1); s = "1" if "set1" in b else "0"
    cell = f"a{a}s{s}"
    for line in open(f):
        m = re.match(r"^\| (\S+) \| (\S+) \| ([\d.]+) \[[^]]*\] \| ([\d.]+) \[[^]]*\] \| ([\d.]+) \[", line)
        if m and m.group(1) != "all" and m.group(2) in PEERS:
            peer.setdefault((cell, m.group(2)), {})[m.group(1)] = [float(m.group(i)) for i in (3, 4, 5)]
# smac a3s0: third column of continuous_smac_alpha3_s32.md
for line in open(f"{D}/continuous_smac_alpha3_s32.md"):
    m = re.match(r"^\| (\S+) \| [\d./ ]+\| [\d./ ]+\| ([\d.]+) / ([\d.]+) / ([\d.]+) \|", line)
    if m and m.group(1) != "all" and not m.group(1).startswith("task"):
        peer.setdefault(("a3s0", "smac"), {})[m.group(1)] = [float(m.group(i)) for i in (2, 3, 4)]
def iqm_table(path):
    df = pd.read_csv(path)
    out = {}
    for (t, me), g in df.groupby(["task", "method"]):
        out.setdefault(me, {})[t] = [trim_mean(g[c].dropna(), 0.25) for c in ("r50", "r100", "r200")]
    return out
for f in glob.glob(f"{D}/checkpoints_s3*/peers_*.csv") + glob.glob(f"{D}/checkpoints_s3*/smac_c_*.csv"):
    cell = re.search(r"_(a\d+s\d)\.csv", f).group(1)
    for me, d in iqm_table(f).items():
        peer[(cell, me)] = d
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
