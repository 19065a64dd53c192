"""Multi-fidelity benchmark (issue 39, items 2-4): peers at equal training steps on the
learning-curve tables.

Replays, on every learning-curve table (``data/arlbench_curves/*.parquet`` by default), each
method for ``--reps`` repetitions at each ``--alphas`` value with the same budget in training
steps: ``--budget`` full runs' worth, what full-run erahbo spends in ``--budget`` runs
(:mod:`erahbo.experiments.mf_peers`: erahbo with full runs, erahbo with early stopping,
Optuna TPE with the Hyperband, successive-halving and Wilcoxon pruners, SMAC3's
multi-fidelity facade; the objective of every peer is the MV of its ``--k`` seeds at the
checkpoint reached). The library does the work; this is its command line. Prints, per alpha:

* the IQM of the normalized MV regret of the recommendation (1 = the table's average
  configuration, 0 = the best; ground truth: final returns over all stored seeds) pooled over
  the tables, with a 95 % stratified-bootstrap interval (repetitions resampled within each
  table), at 25 %, 50 % and 100 % of the training steps full-run erahbo spends in
  ``--budget`` runs;
* the steps each method needs for its pooled IQM regret to reach full-run erahbo's pooled IQM
  regret after ``--budget / 2`` and after ``--budget`` runs (in full runs' worth of steps and
  as a share of erahbo's steps at that point; "-": not within the budget).

Writes ``OUT/traces.csv`` (every observation of every repetition: the trace columns of
:data:`erahbo.experiments.partial_replay.STEP_TRACE_COLUMNS` plus task, method, alpha,
repetition, normalized regret), ``OUT/summary.md`` and ``OUT/regret_vs_steps.png`` (the IQM
curves against the share of the step budget).

    OPENBLAS_NUM_THREADS=1 PYTHONPATH=src nice python benchmarks/multifidelity_benchmark.py \\
        --reps 3 --alphas 1,10 --budget 200 --out results/multifidelity

``--tables``: comma-separated paths, globs or table names in ``data/arlbench_curves``.
``--methods``: ``erahbo``, ``erahbo-es[-r][-b<beta>]`` (erahbo with early stopping, issue 39
item 4: :mod:`erahbo.experiments.mf_erahbo`), ``tpe-hb``, ``tpe-sha``, ``tpe-wilcoxon``,
``smac-mf`` (each peer optionally ``-k<K>``). ``--quick``: 1 repetition, budget 20, alpha 1,
200 bootstrap draws.
"""

from __future__ import annotations

import argparse
import functools
import glob
import json
import os
import sys
import time
from pathlib import Path

for _v in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_v, "1")

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

DEFAULT_TABLES = "data/arlbench_curves/*.parquet"
DEFAULT_METHODS = "erahbo,erahbo-es,tpe-hb,tpe-sha,tpe-wilcoxon,smac-mf"
FRACTIONS = (0.25, 0.5, 1.0)


def table_paths(spec: str) -> list[Path]:
    """The tables named by ``spec`` (comma-separated paths, globs or names in
    ``data/arlbench_curves``), sorted, no repeats."""
    out: list[Path] = []
    for item in (s.strip() for s in spec.split(",")):
        if not item:
            continue
        hits = sorted(glob.glob(item)) or sorted(glob.glob(f"data/arlbench_curves/{item}"
                                                           ".parquet"))
        if not hits:
            raise ValueError(f"--tables: {item!r} matches no file (give a path, a glob or a "
                             "table name in data/arlbench_curves, e.g. dqn_cc_cartpole)")
        out += [Path(h) for h in hits if Path(h) not in out]
    if not out:
        raise ValueError("--tables: no table given")
    return out


@functools.lru_cache(maxsize=8)
def _curve_task(path: str, alpha: float, processing: str):
    from erahbo.experiments.partial_replay import prepare_curve_task

    return prepare_curve_task(path, alpha=alpha, outcome_processing=processing)


def run_job(job: tuple[str, float, str, str, int, int, int, int]) -> tuple[pd.DataFrame, dict]:
    """One (table, alpha, method, repetition): its trace with the normalized regret."""
    from erahbo.experiments.mf_peers import parse_mf_method, run_mf_repetition
    from erahbo.experiments.partial_replay import normalized_regret

    path, alpha, processing, name, k, rep, budget, seed = job
    ct = _curve_task(path, alpha, processing)
    method = parse_mf_method(name, k)
    trace, meta = run_mf_repetition(ct, method, rep, budget_runs=budget, seed=seed)
    trace = trace.assign(task=ct.name, method=method.name, alpha=alpha, repetition=rep,
                         normalized_regret=normalized_regret(ct, trace["simple_regret"]))
    return trace, meta


def curves_at(traces: pd.DataFrame, metas: list[dict], alpha: float, method: str,
              fractions: np.ndarray) -> np.ndarray:
    """``(R, K, G)`` normalized regret of ``method`` at ``fractions`` of each table's step
    budget (repetitions x tables x grid)."""
    from erahbo.experiments.partial_replay import step_curve

    ms = [m for m in metas if m["alpha"] == alpha and m["method"] == method]
    tasks = sorted({m["task"] for m in ms})
    reps = sorted({m["repetition"] for m in ms})
    out = np.full((len(reps), len(tasks), fractions.size), np.nan)
    sel = traces[(traces["alpha"] == alpha) & (traces["method"] == method)]
    groups = dict(tuple(sel.groupby(["task", "repetition"])))
    for m in ms:
        tr = groups.get((m["task"], m["repetition"]), sel.iloc[:0])
        out[reps.index(m["repetition"]), tasks.index(m["task"])] = step_curve(
            tr["steps"].to_numpy(), tr["normalized_regret"].to_numpy(),
            fractions * m["budget_steps"])
    return out


def summary(traces: pd.DataFrame, metas: list[dict], budget: int, boot: int = 2000,
            seed: int = 0) -> str:
    """The printed figures (module docstring), one block per alpha."""
    from erahbo.analysis.intervals import iqm, stratified_bootstrap_iqm

    lines: list[str] = []
    methods = list(dict.fromkeys(m["method"] for m in metas))
    fine = np.linspace(0.0, 1.0, 401)  # (G,) shares of the step budget
    for alpha in sorted({m["alpha"] for m in metas}):
        tasks = sorted({m["task"] for m in metas if m["alpha"] == alpha})
        n_rep = len({m["repetition"] for m in metas if m["alpha"] == alpha})
        lines += [f"## alpha = {alpha:g}", "",
                  f"{len(tasks)} table(s) ({', '.join(tasks)}), {n_rep} repetition(s), "
                  f"budget {budget} full runs' worth of steps. IQM normalized MV regret "
                  "[95 % CI] pooled over the tables, at a share of the steps full-run erahbo "
                  f"spends in {budget} runs:", "",
                  "| method | " + " | ".join(f"{f:.0%} steps" for f in FRACTIONS)
                  + " | wall s | trials |",
                  "|---|" + "---|" * (len(FRACTIONS) + 2)]
        fr = np.asarray(FRACTIONS)
        for m in methods:
            sc = curves_at(traces, metas, alpha, m, fr)
            est = stratified_bootstrap_iqm(sc, reps=boot, seed=seed)
            cells = [f"{p:.3f} [{lo:.3f}, {hi:.3f}]"
                     for p, lo, hi in zip(est.point, est.lo, est.hi, strict=True)]
            mine = [x for x in metas if x["alpha"] == alpha and x["method"] == m]
            wall = np.median([x["wall_used"] for x in mine])
            trials = np.median([x.get("n_trials", np.nan) for x in mine])
            lines.append(f"| {m} | " + " | ".join(cells) + f" | {wall:.0f} | {trials:.0f} |")
        lines += ["", "wall s: median recorded wall time of the runs trained (the tables' "
                  "per-checkpoint times; JIT compilation excluded); trials: median number of "
                  "trials (erahbo: rounds)."]
        if "erahbo" in methods:
            lines += ["", *_steps_to_reach(traces, metas, alpha, methods, budget, fine, iqm)]
        lines.append("")
    return "\n".join(lines)


def _steps_to_reach(traces: pd.DataFrame, metas: list[dict], alpha: float, methods: list[str],
                    budget: int, fine: np.ndarray, iqm) -> list[str]:
    """Lines: the steps each method needs to reach erahbo's pooled IQM regret after half and
    all of the budget's runs."""
    ref = curves_at(traces, metas, alpha, "erahbo", np.array([0.5, 1.0]))  # (R, K, 2)
    targets = {budget // 2: float(iqm(ref[:, :, 0])), budget: float(iqm(ref[:, :, 1]))}
    head = (f"Steps to reach full-run erahbo's IQM regret after {budget // 2} runs "
            f"({targets[budget // 2]:.3f}) and after {budget} runs ({targets[budget]:.3f}), "
            "in full runs' worth of steps (share of erahbo's steps then):")
    rows = [head, "", f"| method | regret of {budget // 2} runs | regret of {budget} runs |",
            "|---|---|---|"]
    for m in methods:
        curve = np.asarray(iqm(curves_at(traces, metas, alpha, m, fine).reshape(-1, fine.size),
                               axis=0))  # (G,)
        cells = []
        for runs, target in targets.items():
            hit = np.flatnonzero(curve <= target + 1e-12)
            if hit.size == 0:
                cells.append("-")
            else:
                share = fine[hit[0]]
                cells.append(f"{share * budget:.0f} ({share * budget / runs:.2f})")
        rows.append(f"| {m} | " + " | ".join(cells) + " |")
    return rows


def plot(traces: pd.DataFrame, metas: list[dict], path: Path) -> Path:
    """IQM normalized regret (pooled over the tables) against the share of the step budget,
    one panel per alpha, written as a PNG."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    from erahbo.analysis.intervals import iqm

    alphas = sorted({m["alpha"] for m in metas})
    methods = list(dict.fromkeys(m["method"] for m in metas))
    grid = np.linspace(0.0, 1.0, 201)
    fig = Figure(figsize=(5.0 * len(alphas), 3.6))
    FigureCanvasAgg(fig)
    for i, alpha in enumerate(alphas):
        ax = fig.add_subplot(1, len(alphas), i + 1)
        for m in methods:
            sc = curves_at(traces, metas, alpha, m, grid)
            ax.plot(grid, iqm(sc.reshape(-1, grid.size), axis=0), label=m)
        ax.set_xlabel("share of the steps of full-run erahbo's budget")
        ax.set_ylabel("IQM normalized MV regret")
        ax.set_title(f"alpha = {alpha:g}", fontsize=9)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    return path


def pool_outputs(dirs: list[Path], out: Path, budget: int, boot: int, seed: int) -> int:
    """Summary and figure of the traces of several earlier ``--out`` folders (each with its
    ``traces.csv`` and ``metas.json``), written to ``out``: the same budget, repetition set
    and methods are expected (a repeated (table, alpha, method, repetition) is refused)."""
    frames, metas = [], []
    for d in dirs:
        if not (d / "traces.csv").is_file() or not (d / "metas.json").is_file():
            print(f"error: --pool {d}: no traces.csv and metas.json there (an --out folder "
                  "of this script, written by a run of this version)", file=sys.stderr)
            return 2
        frames.append(pd.read_csv(d / "traces.csv"))
        metas.extend(json.loads((d / "metas.json").read_text()))
    traces = pd.concat(frames, ignore_index=True)
    keys = [(m.get("task"), m.get("alpha"), m.get("method"), m.get("repetition"))
            for m in metas]
    if len(set(keys)) != len(keys):
        print("error: --pool: the folders repeat a (table, alpha, method, repetition)",
              file=sys.stderr)
        return 2
    out.mkdir(parents=True, exist_ok=True)
    text = summary(traces, metas, budget, boot=boot, seed=seed)
    (out / "summary.md").write_text(text + "\n")
    plot(traces, metas, out / "regret_vs_steps.png")
    print(text)
    return 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tables", default=DEFAULT_TABLES)
    ap.add_argument("--methods", default=DEFAULT_METHODS)
    ap.add_argument("--k", type=int, default=5, help="seeds per trial of the peers (2, 5, 10)")
    ap.add_argument("--reps", type=int, default=20)
    ap.add_argument("--budget", type=int, default=200, help="full runs' worth of steps")
    ap.add_argument("--alphas", default="1,10")
    ap.add_argument("--processing", default="vizier")
    ap.add_argument("--seed", type=int, default=0, help="the repetition set")
    ap.add_argument("--workers", type=int, default=1, help="processes (default 1)")
    ap.add_argument("--boot", type=int, default=2000, help="bootstrap draws")
    ap.add_argument("--quick", action="store_true",
                    help="1 repetition, budget 20, alpha 1, 200 bootstrap draws")
    ap.add_argument("--out", type=Path, default=Path("results/multifidelity"))
    ap.add_argument("--pool", nargs="+", type=Path, metavar="DIR",
                    help="run nothing: pool the traces of earlier --out folders (e.g. one per "
                         "table) into --out's summary and figure")
    a = ap.parse_args(argv)
    if a.pool:
        return pool_outputs(a.pool, a.out, a.budget, a.boot, a.seed)
    if a.quick:
        a.reps, a.budget, a.alphas, a.boot = 1, 20, "1", 200

    from erahbo.experiments.mf_peers import parse_mf_method

    try:
        paths = table_paths(a.tables)
        names = [parse_mf_method(n, a.k).name for n in a.methods.split(",") if n.strip()]
        alphas = [float(x) for x in a.alphas.split(",") if x.strip()]
        if a.reps < 1 or a.budget < 2 or a.workers < 1 or not names or not alphas:
            raise ValueError("--reps >= 1, --budget >= 2, --workers >= 1 and at least one "
                             "method and alpha are needed")
    except ValueError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    jobs = [(str(p), al, a.processing, n, a.k, r, a.budget, a.seed)
            for al in alphas for p in paths for r in range(a.reps) for n in names]
    print(f"{len(paths)} table(s) x {len(alphas)} alpha(s) x {a.reps} rep(s) x "
          f"{len(names)} method(s) = {len(jobs)} replays, budget {a.budget} runs' worth of "
          f"steps, k {a.k} -> {a.out}", flush=True)
    t0 = time.time()
    if a.workers == 1:
        results = [run_job(j) for j in jobs]
    else:
        from concurrent.futures import ProcessPoolExecutor

        with ProcessPoolExecutor(max_workers=a.workers) as pool:
            results = list(pool.map(run_job, jobs, chunksize=1))
    traces = pd.concat([t for t, _ in results], ignore_index=True)
    metas = [m for _, m in results]
    a.out.mkdir(parents=True, exist_ok=True)
    traces.to_csv(a.out / "traces.csv", index=False)
    (a.out / "metas.json").write_text(json.dumps(metas, default=float) + "\n")
    text = summary(traces, metas, a.budget, boot=a.boot, seed=a.seed)
    (a.out / "summary.md").write_text(text + "\n")
    plot(traces, metas, a.out / "regret_vs_steps.png")
    print(f"{len(jobs)} replays in {time.time() - t0:.0f} s; traces: {a.out / 'traces.csv'}")
    print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
