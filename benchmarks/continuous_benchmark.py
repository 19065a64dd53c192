"""The continuous benchmark (issue 37, item 4): known-truth continuous tasks, the user's protocol.

Runs methods on the stochastic surrogates of the real tables and the known-truth objectives
(:mod:`erahbo.objectives.known_truth`), every run counted from the first, and writes one trace
per (task, method, repetition) in the benchmark's format (``erahbo report OUT`` reads them);
then prints the IQM normalized regret with 95 % stratified-bootstrap intervals at 50 / 100 /
200 runs (those within the budget), pooled over the tasks and per task, and the mean rank of
the final regret. The library does the work (:mod:`erahbo.experiments.continuous`); this is
its command line.

    OPENBLAS_NUM_THREADS=1 PYTHONPATH=src nice python benchmarks/continuous_benchmark.py \\
        --tasks surr-ppo_cc_acrobot,surr-dqn_cc_cartpole,readme,branin \\
        --methods erahbo,rahbo-k2 --alpha 1 --budget 100 --reps 3 --seed 0 --jobs 1 \\
        --out results/continuous/a1

``--tasks``: names (``surr-<table>``, ``readme``, ``figure1``, ``branin``) or the groups
``all``, ``surrogates``, ``known``. ``--methods``: benchmark method names (``erahbo``,
``rahbo-k2``, ``random-k2``, ``optuna-tpe-k10``, ``smac``, ``bts-red``, erahbo's variants,
``<method>-cvar`` / ``-quantile`` / ``-mv<alpha>`` for a method optimizing its own measure).
``--risk {mv,cvar,quantile}`` and ``--q``: the study's risk measure (default MV with
``--alpha``): the regret of every method is in its own terms, exact on every task
(:meth:`erahbo.objectives.synthetic.SyntheticTask.value`), normalized as for MV by the optimum
minus the mean over uniform configurations; the methods optimize it unless their name sets
their own; ``mv-best-alpha`` runs erahbo in MV at alpha in {0.1, 0.3, 1, 3, 10, 30}
(``erahbo-mv<alpha>``) and keeps per task the alpha of lowest mean final regret (in
hindsight), as ``benchmarks/risk_benchmark.py`` does on the tables; a study of another measure
than MV also prints that script's table pooled over tasks x repetitions. In a CVaR study::

    ... continuous_benchmark.py --risk cvar --q 0.1 --tasks surrogates,known \\
        --methods erahbo-cvar,rahbo-k2-cvar,rahbo-k5-cvar,optuna-tpe-k10-cvar,mv-best-alpha \\
        --budget 100 --reps 3 --out results/continuous/cvar0.1

``--seed``: the repetition set (repetition ``r`` of set ``s`` derives every seed from ``(s, r)``).
A rerun with the same ``--out`` resumes (finished traces are kept).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

for _v in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_v, "1")

DEFAULT_METHODS = "erahbo,rahbo-k2,optuna-tpe-k10,smac,random-k2"
BEST_ALPHA = "mv-best-alpha"
BEST_ALPHAS = (0.1, 0.3, 1, 3, 10, 30)  # risk_benchmark.ALPHAS


def summary(out: Path, checkpoints: list[int], seed: int = 0) -> str:
    """Markdown tables: IQM normalized regret [95 % CI] at the checkpoints, pooled and per
    task, and the mean rank of the final regret over tasks."""
    import numpy as np

    from erahbo.analysis.intervals import iqm_curves
    from erahbo.analysis.ranks import rank_table
    from erahbo.analysis.traces import load_traces

    study = json.loads((Path(out) / "study.json").read_text())
    name = study.get("measure", "MV")
    name = "MV" if name.startswith("MV") else name
    # a task whose every configuration has the same value (CVaR_0.1 of a surrogate whose worst
    # tenth of seeds fails everywhere) has no regret to normalize: left out, and said so
    flat = sorted(t["name"] for t in study["tasks"]
                  if not t["mv_star"] - t["uniform_mv_mean"] > 1e-12)
    ts = load_traces(out, tasks=[t["name"] for t in study["tasks"] if t["name"] not in flat])
    cps = [c for c in checkpoints if c <= ts.budget] or [ts.budget]
    lines = [f"{len(ts.tasks)} task(s), {len(ts.methods)} method(s), "
             f"budget {ts.budget}; IQM normalized {name} regret [95 % CI] (0 = {name}*, 1 = "
             "the mean of a uniformly drawn configuration)", ""]
    if flat:
        lines[1:1] = [f"left out (every configuration has the same {name}: no regret to "
                      f"normalize): {', '.join(flat)}"]

    def table(df, groups, label):
        head = f"| {label} | method | " + " | ".join(f"@{c}" for c in cps) + " |"
        rows = [head, "|" + "---|" * (len(cps) + 2)]
        for g in groups:
            for m in ts.methods:
                d = df[(df["group"] == g) & (df["method"] == m)].set_index("run")
                cells = [f"{d.at[c, 'iqm']:.3f} [{d.at[c, 'lo']:.3f}, {d.at[c, 'hi']:.3f}]"
                         for c in cps]
                rows.append(f"| {g} | {m} | " + " | ".join(cells) + " |")
        return rows

    pooled = iqm_curves(ts, by="domain", runs=cps, seed=seed)
    lines += [*table(pooled, ["all"], "tasks"), ""]
    per_task = iqm_curves(ts, by="task", runs=cps, seed=seed)
    lines += [*table(per_task, list(ts.tasks), "task"), ""]
    ranks = rank_table(ts)
    lines.append("mean rank of the final regret over tasks (1 = best): " + ", ".join(
        f"{m} {float(np.asarray(ranks.loc[ranks['method'] == m, 'mean_rank_simple'])[0]):.2f}"
        for m in ts.methods))
    if ts.notes:  # tasks dropped or repetitions left out (partial traces): said, not hidden
        lines += ["", "notes:", *(f"- {n}" for n in ts.notes)]
    return "\n".join(lines)


def pooled(out: Path, budget: int, names: list[str]) -> str:
    """The real-table risk benchmark's table on these traces (``risk_benchmark.summarize``):
    per method the IQM normalized regret over tasks x repetitions at 50 / 100 / 200 runs and
    at the end, and ``mv-best-alpha`` (per task the ``erahbo-mv<alpha>`` of lowest mean final
    regret, in hindsight) where it is listed."""
    here = str(Path(__file__).resolve().parent)
    if here not in sys.path:
        sys.path.insert(0, here)
    import risk_benchmark as rb

    skipped: set[str] = set()
    df = rb.load(out, budget, skipped)
    df = df[df["method"].isin(rb.expand(names))]
    table = rb.summarize(df, budget).drop(columns="coverage 90%")  # no intervals here
    shown = set(names) | {rb.BEST_ALPHA} if rb.BEST_ALPHA in names else set(names)
    lines = [rb.markdown(table[table["method"].isin(shown)].reset_index(drop=True))]
    _, chosen = rb.best_alpha(df)
    if chosen and rb.BEST_ALPHA in names:
        lines += ["", "mv-best-alpha, alpha per task: " + ", ".join(
            f"{t} {v}" for t, v in sorted(chosen.items()))]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tasks", default="surrogates,known")
    ap.add_argument("--methods", default=DEFAULT_METHODS)
    ap.add_argument("--alpha", type=float, default=None,
                    help="MV's risk aversion (--risk mv; default 1)")
    ap.add_argument("--risk", default="mv", choices=("mv", "cvar", "quantile"),
                    help="the study's risk measure over seeds (default mv)")
    ap.add_argument("--q", type=float, default=None,
                    help="--risk cvar / quantile: the share of worst seeds (default 0.1)")
    ap.add_argument("--budget", type=int, default=200)
    ap.add_argument("--reps", type=int, default=20)
    ap.add_argument("--seed", type=int, default=0, help="the repetition set")
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--data", type=Path, default=Path("data/arlbench"),
                    help="the real tables of the surrogates and their stored fits")
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--checkpoints", default="50,100,200")
    ap.add_argument("--report", action="store_true", help="also write `erahbo report`'s report")
    a = ap.parse_args(argv)

    from erahbo.experiments.continuous import (
        ContinuousSettings,
        check_methods,
        run_continuous_study,
    )
    from erahbo.experiments.methods import parse_methods
    from erahbo.objectives.known_truth import make_task, task_names

    try:
        settings = ContinuousSettings(budget=a.budget, seed=a.seed, risk=a.risk, q=a.q,
                                      alpha=1.0 if a.alpha is None else a.alpha)
        listed = [m.strip() for m in a.methods.split(",") if m.strip()]
        # mv-best-alpha: erahbo-mv<alpha> at each alpha of the real-table risk benchmark
        best = [f"erahbo-mv{v:g}" for v in BEST_ALPHAS] if BEST_ALPHA in listed else []
        methods = parse_methods([m for m in listed if m != BEST_ALPHA]
                                + [m for m in best if m not in listed])
        check_methods(methods)
        names = task_names(a.tasks)
        t0 = time.time()
        tasks = [make_task(n, a.data) for n in names]
    except ValueError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    print(f"{len(tasks)} task(s) x {len(methods)} method(s) x {a.reps} repetitions (set "
          f"{a.seed}), budget {a.budget} runs, {settings.measure.label} -> {a.out}",
          flush=True)

    def on_done(path: str, done: int, total: int) -> None:
        print(f"[{time.time() - t0:7.0f} s] {done}/{total} {path}", flush=True)

    res = run_continuous_study(tasks, methods, a.reps, settings, a.out, jobs=a.jobs,
                               on_done=on_done)
    print(f"{res['jobs_run']} trace(s) written, {res['jobs_skipped']} already there", flush=True)
    text = summary(a.out, [int(c) for c in a.checkpoints.split(",") if c.strip()])
    if a.risk != "mv" or BEST_ALPHA in listed:
        text += ("\n\nPooled over tasks x repetitions (IQM [95 % CI]; as "
                 "benchmarks/risk_benchmark.py):\n\n" + pooled(a.out, a.budget, listed))
    (a.out / "summary.md").write_text(text + "\n")
    print(text)
    if a.report:
        from erahbo.analysis.report import write_report

        print(f"report: {write_report(a.out).report_md}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
