"""How many per-task entries a draw of 20 repetitions leaves short, in expectation (issue 37).

The per-task criterion (IQM regret of the variant below the peer's on at least two thirds of the
11 tasks, i.e. 8, for every alpha x set x checkpoint x peer: 72 entries) is read on one draw of
20 repetitions per method; session 44 found one algorithm's count moving by several entries
between draws. This resamples the draws: per Monte Carlo iteration and cell, each method's
per-task IQM is the IQM (``trim_mean(., 0.25)``) of 20 traces drawn with replacement from all of
its traces of that task and set (a trace keeps its 50 / 100 / 200-run values together; a
variant's draws are pooled), and a peer known only as a per-task IQM with a 95 % interval
(the session 26-32 tables) is drawn from a normal with that interval's width / 3.92 (no interval:
the variant's own bootstrap spread of that task). Prints, per cell, the mean number of short
entries and each entry's probability of being short; overall, the expected number of short
entries of 72 and the chance that one draw has none.

usage: python expected_count.py "PATTERN_{cell}.csv[,PATTERN2_{cell}.csv...]" [TIE] [--iters N]
       [--peers-dir DIR] [--no-s45]
(TIE 0: strict, a tie is a loss; else |diff| <= TIE is set aside and two thirds of the decided
tasks are needed)
"""
import argparse
import glob
import os
import re
from pathlib import Path

import numpy as np
import pandas as pd

HERE = Path(__file__).resolve().parent
D = HERE.parent  # docs/results/one_seed_models
CELLS = ["a1s0", "a1s1", "a3s0", "a3s1", "a10s0", "a10s1"]
PEERS = ["rahbo-k2", "optuna-tpe-k10", "bts-red", "smac"]
CK = ("r50", "r100", "r200")


def iqm_rows(x: np.ndarray) -> np.ndarray:
    """IQM along axis -2 of (..., 20, 3) samples: scipy's trim_mean(., 0.25) (5 cut per side)."""
    s = np.sort(x, axis=-2)
    n = s.shape[-2]
    c = int(0.25 * n)
    return s[..., c:n - c, :].mean(axis=-2)


def passes(diff: np.ndarray, tie: float) -> np.ndarray:
    """Whether an entry meets two thirds: ``diff (..., tasks, 3)`` variant minus peer IQM ->
    ``(..., 3)`` bool (strict: 8 of 11 lower; ``tie > 0``: two thirds of the decided tasks)."""
    if tie > 0:
        w = (diff < -tie).sum(-2)
        lo = (diff > tie).sum(-2)
        return w >= 2 / 3 * (w + lo)
    return (diff < 0).sum(-2) >= 8


def sess(f: str) -> int:
    m = re.search(r"_s(\d+)\.md$", f)
    return int(m.group(1)) if m else 25


def load_peers(extra_dir: str | None):
    """(cell, peer) -> ("traces", {task: (m, 3) array}) or ("normal", {task: (mu, sd)}),
    mu and sd (3,) (sd None: unknown)."""
    out = {}
    num = r"([\d.]+) \[([\d.]+), ([\d.]+)\]"
    for f in sorted(glob.glob(f"{D}/continuous_peers_*.md"), key=sess):
        b = os.path.basename(f)
        a = re.search(r"alpha(\d+)", b).group(1)
        cell = f"a{a}s{'1' if 'set1' in b else '0'}"
        for line in open(f):
            m = re.match(rf"^\| (\S+) \| (\S+) \| {num} \| {num} \| {num} \|", line)
            if m and m.group(1) != "all" and m.group(2) in PEERS:
                g = [float(v) for v in m.groups()[2:]]
                mu = np.array(g[0::3])
                sd = (np.array(g[2::3]) - np.array(g[1::3])) / 3.92
                out.setdefault((cell, m.group(2)), ("normal", {}))[1][m.group(1)] = (mu, sd)
    for line in open(f"{D}/continuous_smac_alpha3_s32.md"):
        m = re.match(r"^\| (\S+) \| [\d./ ]+\| [\d./ ]+\| ([\d.]+) / ([\d.]+) / ([\d.]+) \|", line)
        if m and m.group(1) != "all" and not m.group(1).startswith("task"):
            mu = np.array([float(m.group(i)) for i in (2, 3, 4)])
            out.setdefault(("a3s0", "smac"), ("normal", {}))[1][m.group(1)] = (mu, None)
    files = (glob.glob(f"{D}/checkpoints_s3*/peers_*.csv")
             + glob.glob(f"{D}/checkpoints_s3*/smac_c_*.csv"))
    if extra_dir:  # session 45's reruns of the peers on this machine: peers45_<method>_<cell>.csv
        files += sorted(glob.glob(f"{extra_dir}/peers45_*_a*s*.csv"))
    for f in files:
        cell = re.search(r"_(a\d+s\d)\.csv", f).group(1)
        df = pd.read_csv(f)
        for me, g in df.groupby("method"):
            out[(cell, me)] = ("traces", {t: gt[list(CK)].to_numpy(float)
                                          for t, gt in g.groupby("task")})
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("patterns")
    ap.add_argument("tie", nargs="?", type=float, default=0.0)
    ap.add_argument("--iters", type=int, default=2000)
    ap.add_argument("--peers-dir", default=str(HERE))
    ap.add_argument("--no-s45", action="store_true", help="ignore session 45's peer reruns")
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args()
    rng = np.random.default_rng(a.seed)
    peers = load_peers(None if a.no_s45 else a.peers_dir)
    total = np.zeros(a.iters)
    observed = 0  # the short entries of the draws as read (a variant's draws pooled)
    per_entry = []
    pooled_lose = []  # (cell, peer, (3,) P(the pooled IQM is not below the peer's))
    for cell in CELLS:
        frames = [pd.read_csv(p.format(cell=cell)) for p in a.patterns.split(",")
                  if os.path.exists(p.format(cell=cell))]
        if not frames:
            continue
        df = pd.concat(frames)
        tasks = sorted(df.task.unique())
        pool = {t: df[df.task == t][list(CK)].to_numpy(float) for t in tasks}
        # (iters, tasks, 3): the variant's per-task IQM of a draw of 20
        draws = {t: pool[t][rng.integers(0, len(pool[t]), (a.iters, 20))] for t in tasks}
        v = np.stack([iqm_rows(draws[t]) for t in tasks], axis=1)
        vpool = iqm_rows(np.concatenate([draws[t] for t in tasks], axis=1))  # (iters, 3)
        vsd = v.std(axis=0)  # (tasks, 3)
        v_obs = np.stack([iqm_rows(pool[t]) for t in tasks])  # (tasks, 3): the draws as read
        short = np.zeros(a.iters)
        for pe in PEERS:
            kind, d = peers[(cell, pe)]
            if kind == "traces":
                pd_ = {t: d[t][rng.integers(0, len(d[t]), (a.iters, 20))] for t in tasks}
                p = np.stack([iqm_rows(pd_[t]) for t in tasks], axis=1)
                ppool = iqm_rows(np.concatenate([pd_[t] for t in tasks], axis=1))
                pooled_lose.append((cell, pe, (vpool >= ppool).mean(0)))
            else:
                p = np.stack([d[t][0] + (d[t][1] if d[t][1] is not None else vsd[i])
                              * rng.standard_normal((a.iters, 3)) for i, t in enumerate(tasks)],
                             axis=1)
                p = np.maximum(p, 0.0)
            p_obs = (np.stack([iqm_rows(d[t]) for t in tasks]) if kind == "traces"
                     else np.stack([d[t][0] for t in tasks]))  # (tasks, 3)
            observed += int((~passes(v_obs - p_obs, a.tie)).sum())
            diff = v - p  # (iters, tasks, 3)
            ok = passes(diff, a.tie)
            for j, c in enumerate((50, 100, 200)):
                per_entry.append((cell, pe, c, kind, 1 - ok[:, j].mean()))
            short += (~ok).sum(1)
        total += short
        print(f"{cell}: expected short {short.mean():.2f} (of 12), "
              f"none short in {np.mean(short == 0):.2f}")
    for cell, pe, c, kind, p in per_entry:
        if p >= 0.2:
            src = "" if kind == "traces" else " (peer: normal from its table)"
            print(f"  {cell} {pe:15s} @{c:<3d} P(short) {p:.2f}{src}")
    if not per_entry:
        raise SystemExit(f"no per-trace CSV matches {a.patterns!r} for any cell "
                         f"({', '.join(CELLS)}): give PATTERN_{{cell}}.csv, e.g. "
                         '"../checkpoints_s40/rmo_{cell}.csv"')
    worst = max(pooled_lose, key=lambda r: r[2].max())
    print(f"pooled over tasks (peers with traces): largest P(not below the peer) "
          f"{worst[2].max():.3f} ({worst[0]} {worst[1]})")
    q = np.percentile(total, [10, 50, 90])
    print(f"as read: {observed} short; "
          f"all cells: expected short {total.mean():.2f} of {len(per_entry)}, "
          f"10/50/90 % {q[0]:.0f}/{q[1]:.0f}/{q[2]:.0f}, none short in {np.mean(total == 0):.3f}")


if __name__ == "__main__":
    main()
