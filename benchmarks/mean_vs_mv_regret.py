"""Final recommendation of each method scored twice: on MV (the benchmark's regret) and on the
mean return alone (what a risk-neutral method such as SMAC3 aims at).

For every (task, method, repetition) trace under a results directory, the recommendation after
the last run is scored by its normalized MV regret ``(MV* - MV(x)) / (MV* - mean MV)`` and its
normalized mean regret ``(m* - m(x)) / (m* - mean m)`` (``m``: the mean over the stored seeds,
on the study's processed scale). Prints a Markdown table per task, the mean over repetitions of
each, and the share of recommendations whose mean regret is <= 0.25 while their MV regret is
> 0.25 (chosen for a high mean despite a large spread).

    PYTHONPATH=src python benchmarks/mean_vs_mv_regret.py results/early_a1 \\
        --data data/arlbench --alpha 1 --processing minmax
"""

from __future__ import annotations

import argparse
from pathlib import Path

import pandas as pd

from erahbo.datasets import read_task
from erahbo.experiments import prepare_task
from erahbo.experiments.traces import find_trace_files, read_trace


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("results", type=Path)
    ap.add_argument("--data", type=Path, default=Path("data/arlbench"))
    ap.add_argument("--alpha", type=float, default=1.0)
    ap.add_argument("--processing", default="minmax")
    args = ap.parse_args()
    tasks = {}
    for f in sorted(args.data.glob("*.parquet")):
        t = prepare_task(read_task(f), alpha=args.alpha, outcome_processing=args.processing)
        tasks[t.name] = t
    rows = []
    for path in find_trace_files(args.results):
        trace, meta = read_trace(path)
        t = tasks.get(meta["task"])
        if t is None or not len(trace):
            continue
        inc = int(trace["incumbent_id"].iloc[-1])
        m = t.returns.mean(axis=1)  # (N,)
        rows.append({"task": t.name, "method": meta["method"],
                     "mv": (t.mv_star - t.mv[inc]) / (t.mv_star - t.mv.mean()),
                     "mean": (m.max() - m[inc]) / (m.max() - m.mean())})
    df = pd.DataFrame(rows)
    df["spread"] = (df["mean"] <= 0.25) & (df["mv"] > 0.25)
    out = df.groupby(["task", "method"]).agg(mv=("mv", "mean"), mean=("mean", "mean"),
                                             spread=("spread", "mean"), n=("mv", "size"))
    print("| task | method | final MV regret | final mean regret | high mean, MV > 0.25 | n |")
    print("|---|---|---|---|---|---|")
    for (task, method), r in out.iterrows():
        print(f"| {task} | {method} | {r.mv:.3f} | {r['mean']:.3f} | {r.spread:.2f} | "
              f"{int(r.n)} |")
    tot = df.groupby("method").agg(mv=("mv", "mean"), mean=("mean", "mean"),
                                   spread=("spread", "mean"))
    for method, r in tot.iterrows():
        print(f"| all | {method} | {r.mv:.3f} | {r['mean']:.3f} | {r.spread:.2f} | "
              f"{int((df['method'] == method).sum())} |")


if __name__ == "__main__":
    main()
