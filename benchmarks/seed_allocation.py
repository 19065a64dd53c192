"""Where the first runs go: configurations, replicated configurations and the most-seeded one.

For every task and method of a benchmark's results directory (``erahbo benchmark``,
``benchmarks/continuous_benchmark.py``, ``benchmarks/defaults_study.py``), at each checkpoint
``t`` (the first ``t`` runs of each trace), the mean over repetitions of:

``configs``
    configurations evaluated;
``replicated``
    configurations with at least 2 seeds (the recommendation's pool under
    ``recommend_min_seeds = 2``);
``top_share``
    the share of the ``t`` runs spent on the configuration with the most seeds;
``regret``
    the simple regret of the recommendation after run ``t`` (the trace's own units).

Session 27 measured with it why ERAHBO's default trails RAHBO k=2 after 50 runs on some
continuous tasks (``docs/results/one_seed_models/README.md``): 28 configurations of which 7.6
replicated, the most-seeded one holding 28 % of the runs (RAHBO k=2: 25 of 25 replicated).

Run::

    PYTHONPATH=src python benchmarks/seed_allocation.py RESULTS_DIR [--runs 50,100] \
        [--methods erahbo,rahbo-k2] [--tasks readme,figure1]
"""

from __future__ import annotations

import argparse

import numpy as np
import pandas as pd

from erahbo.experiments.traces import find_trace_files, read_trace


def allocation(frame: pd.DataFrame, runs: int) -> dict[str, float]:
    """The four figures of the module docstring for one trace's first ``runs`` runs.

    Parameters
    ----------
    frame : pandas.DataFrame
        A trace (:func:`erahbo.experiments.traces.read_trace`): one row per run, with
        ``run``, ``config_id`` and ``simple_regret``.
    runs : int
        The checkpoint ``t`` (a trace shorter than ``t`` is read to its end).

    Returns
    -------
    dict
        ``configs``, ``replicated``, ``top_share`` and ``regret``.
    """
    f = frame[frame["run"] <= runs]
    seeds = f.groupby("config_id").size()
    return {"configs": float(len(seeds)), "replicated": float((seeds >= 2).sum()),
            "top_share": float(seeds.max() / len(f)) if len(f) else float("nan"),
            "regret": float(f["simple_regret"].iloc[-1]) if len(f) else float("nan")}


def table(results_dir: str, runs: list[int], methods: list[str] | None = None,
          tasks: list[str] | None = None) -> pd.DataFrame:
    """Mean over repetitions per (task, method, checkpoint), then over tasks (task ``all``,
    without a regret: the tasks' regrets have their own units)."""
    rows = []
    for path in find_trace_files(results_dir):
        frame, meta = read_trace(path)
        task, method = str(meta.get("task")), str(meta.get("method"))
        if (methods and method not in methods) or (tasks and task not in tasks):
            continue
        for t in runs:
            rows.append({"task": task, "method": method, "runs": t, **allocation(frame, t)})
    if not rows:
        raise ValueError(f"{results_dir}: no traces of methods={methods} tasks={tasks}")
    df = pd.DataFrame(rows).groupby(["task", "method", "runs"], as_index=False).mean()
    pooled = df.groupby(["method", "runs"], as_index=False).mean(numeric_only=True)
    pooled.insert(0, "task", "all")
    pooled["regret"] = np.nan  # regrets of different tasks have different units
    return pd.concat([pooled, df], ignore_index=True)


def _runs(text: str) -> list[int]:
    """``--runs``: comma-separated positive integers."""
    try:
        runs = [int(r) for r in text.split(",")]
    except ValueError:
        runs = []
    if not runs or min(runs) < 1:
        raise argparse.ArgumentTypeError(
            f"{text!r}: give the checkpoints as positive integers, comma-separated (e.g. 50,100)")
    return runs


def main(argv: list[str] | None = None) -> pd.DataFrame:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("results_dir")
    p.add_argument("--runs", type=_runs, default=[50, 100], help="checkpoints, comma-separated")
    p.add_argument("--methods", default=None, help="comma-separated (default: all)")
    p.add_argument("--tasks", default=None, help="comma-separated (default: all)")
    a = p.parse_args(argv)
    split = (lambda s: s.split(",") if s else None)  # noqa: E731
    try:
        df = table(a.results_dir, a.runs, split(a.methods), split(a.tasks))
    except ValueError as e:
        p.error(str(e))
    with pd.option_context("display.width", 200, "display.max_rows", 10_000):
        print(df.round(3).to_string(index=False))
    return df


if __name__ == "__main__":
    main()
