"""Risk benchmark (issue 40): CVaR (or quantile) regret of erahbo's CVaR mode against its peers.

Replays the real tables (``data/arlbench/*``, returns min-max scaled: an affine map, so a
CVaR in return units keeps its meaning) under the *user's protocol* (each method's own
initial design, counted) in a study whose risk measure is ``--risk`` (``cvar`` or
``quantile``) at each share ``--q``. Regret is in that measure's own terms, normalized as for
MV: ``(truth* - truth(recommendation)) / (truth* - mean truth over the table's
configurations)``, the truth of a configuration being the sample CVaR_q (quantile) of all its
stored seeds (:meth:`erahbo.risk.RiskMeasure.truth`).

Methods (``--methods``, any benchmark method name, :mod:`erahbo.experiments.methods`):

* ``erahbo-cvar``: erahbo's models in CVaR mode (``risk="cvar"``, the study's ``q``);
* ``rahbo-k2-cvar``, ``rahbo-k5-cvar``: fixed k seeds per configuration, the same models;
* ``optuna-tpe-k10-cvar``: TPE, each trial 10 seeds, value = their sample CVaR_q;
* ``smac-k5-cvar``: SMAC3, each trial 5 seeds, cost = minus their sample CVaR_q (not in the
  default list; ``--methods`` adds it);
* ``mv-best-alpha``: erahbo in MV mode at alpha in :data:`ALPHAS` (methods ``erahbo-mv<a>``,
  each scored in the study's measure); the row keeps, per table, the alpha whose mean final
  regret over the repetitions is lowest (in hindsight: what a user who guessed alpha right per
  task would have got).

Printed per method: IQM of the normalized regret over tables x repetitions with a 95 %
stratified-bootstrap interval (repetitions resampled within each table) at 50 / 100 / 200 /
500 runs (those within the budget) and at the end; and the coverage: the share of the
studies whose recommended configuration's two-sided 90 % interval of the method's measure
contains its truth (``final_interval`` in a trace's metadata:
:func:`erahbo.experiments.runner.final_interval`, eq. 9's bounds with each GP's band at
1.645 posterior standard deviations, joined with the recommendation's own runs under a tail
measure: :meth:`erahbo.risk.RiskMeasure.final_interval`); ``--coverage`` adds it per table,
where it misses, its median width and the models' interval alone. ``--paired A,B`` (default
``erahbo-<risk>,mv-best-alpha``) adds IQM(A) minus IQM(B) on the (table, repetition) pairs
both ran, with a 95 % paired bootstrap interval (the same repetitions drawn for both): issue
40's "no worse than MV at the best alpha" when it includes 0 or lies below it.

    python benchmarks/risk_benchmark.py --budget 200 --reps 5 --seed 0 --q 0.1 \\
        --methods erahbo-cvar,rahbo-k2-cvar,optuna-tpe-k10-cvar,mv-best-alpha \\
        --out results/risk/b200

Traces go to ``--out/<risk>-q<q>-set<seed>/`` (a rerun resumes); the tables to
``--out/<risk>-q<q>-set<seed>/summary.md``.
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

for _v in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_v, "1")

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

ALPHAS = (0.1, 0.3, 1, 3, 10, 30)
BEST_ALPHA = "mv-best-alpha"
CHECKPOINTS = (50, 100, 200, 500)
DEFAULT_METHODS = "erahbo-cvar,rahbo-k2-cvar,rahbo-k5-cvar,optuna-tpe-k10-cvar," + BEST_ALPHA


def expand(methods: list[str]) -> list[str]:
    """Method names with ``mv-best-alpha`` expanded to its ``erahbo-mv<alpha>`` runs."""
    out: list[str] = []
    for m in methods:
        names = [f"erahbo-mv{a:g}" for a in ALPHAS] if m == BEST_ALPHA else [m]
        out += [n for n in names if n not in out]
    return out


def study_dir(out: Path, risk: str, q: float, seed: int) -> Path:
    """``OUT/<risk>-q<q>-set<seed>``: one study (settings) per measure and repetition set."""
    return Path(out) / f"{risk}-q{q:g}-set{seed}"


def run(data: list[str], out: Path, risk: str, q: float, budget: int, reps: int, seed: int,
        methods: list[str], jobs: int, processing: str = "minmax") -> Path:
    """Run (or resume) one study; its directory."""
    from erahbo.datasets.loaders import expand_paths, load_task
    from erahbo.experiments import StudySettings, parse_method, prepare_task, run_study

    settings = StudySettings(budget=budget, seed=seed, outcome_processing=processing,
                             protocol="user", risk=risk, q=q)
    tasks = [prepare_task(load_task(p), outcome_processing=processing,
                          measure=settings.measure) for p in expand_paths(
                              [Path(d) for d in data])]
    specs = [parse_method(m) for m in expand(methods)]
    where = study_dir(out, risk, q, seed)
    run_study(tasks, specs, reps, settings, where, workers=jobs)
    return where


def load(where: Path, budget: int, skipped: set[str] | None = None) -> pd.DataFrame:
    """One row per trace: task, method, repetition, the normalized regret curve (``budget``
    points, the last value carried on) and the final interval and truth (NaN: none).

    A table whose every configuration has the same truth (``truth* = mean``: e.g. CVaR_0.1
    of ppo_cc_mountain_car, where every configuration's worst tenth of seeds fails) has no
    regret to normalize: its traces are left out and its name added to ``skipped``."""
    from erahbo.experiments.traces import find_trace_files, read_trace

    rows = []
    for path in find_trace_files(where):
        trace, meta = read_trace(path)
        if not float(meta["init_regret"]) > 1e-12:
            if skipped is not None:
                skipped.add(meta["task"])
            continue
        reg = trace["simple_regret"].to_numpy() / max(float(meta["init_regret"]), 1e-12)
        curve = np.full(budget, reg[-1] if len(reg) else np.nan)
        curve[: min(len(reg), budget)] = reg[:budget]
        lo, hi = meta.get("final_interval") or (np.nan, np.nan)
        m_lo, m_hi = meta.get("final_models_interval") or (lo, hi)
        truth = meta.get("final_truth")
        rows.append({"task": meta["task"], "method": Path(path).parent.name,
                     "rep": int(meta["repetition"]), "curve": curve, "lo": lo, "hi": hi,
                     "m_lo": m_lo, "m_hi": m_hi,
                     "truth": np.nan if truth is None else float(truth)})
    return pd.DataFrame(rows)


def best_alpha(df: pd.DataFrame) -> tuple[pd.DataFrame, dict[str, str]]:
    """The ``mv-best-alpha`` rows: per table, the traces of the ``erahbo-mv<alpha>`` with the
    lowest mean final regret; and the alpha chosen per table."""
    mv = df[df["method"].isin([f"erahbo-mv{a:g}" for a in ALPHAS])]
    if mv.empty:
        return mv, {}
    final = mv.assign(final=[c[-1] for c in mv["curve"]])
    means = final.groupby(["task", "method"])["final"].mean().reset_index()
    # ties (e.g. every alpha at regret 0) go to the smallest alpha, the order of ALPHAS
    order = {f"erahbo-mv{a:g}": i for i, a in enumerate(ALPHAS)}
    means["order"] = means["method"].map(order)
    chosen = {t: g.sort_values(["final", "order"]).iloc[0]["method"]
              for t, g in means.groupby("task")}
    rows = mv[[chosen.get(t) == m for t, m in zip(mv["task"], mv["method"], strict=True)]]
    return rows.assign(method=BEST_ALPHA), {t: m[len("erahbo-mv"):] for t, m in chosen.items()}


def summarize(df: pd.DataFrame, budget: int, checkpoints: tuple[int, ...] = CHECKPOINTS,
              n_boot: int = 2000, seed: int = 0) -> pd.DataFrame:
    """Per method: ``IQM [lo, hi]`` of the normalized regret at each checkpoint within the
    budget and at the end (tables x repetitions; the bootstrap resamples repetitions within
    each table), and the coverage of the final 90 % interval."""
    from erahbo.analysis.intervals import stratified_bootstrap_iqm

    best, _ = best_alpha(df)
    df = pd.concat([df, best], ignore_index=True)
    points = [t for t in checkpoints if t < budget] + [budget]
    rows = []
    for method, g in df.groupby("method", sort=False):
        scores, n = _scores(g, points, None)
        est = stratified_bootstrap_iqm(scores, reps=n_boot, seed=seed)
        row: dict[str, object] = {"method": method, "n": n}
        for j, p in enumerate(points):
            key = "final" if p == budget else f"@{p}"
            row[key] = f"{est.point[j]:.3f} [{est.lo[j]:.3f}, {est.hi[j]:.3f}]"
        has = g["lo"].notna() & g["truth"].notna()
        inside = (g["lo"] <= g["truth"]) & (g["truth"] <= g["hi"])
        row["coverage 90%"] = (f"{inside[has].mean():.2f} ({int(has.sum())})"
                               if has.any() else "-")
        row["_final"] = float(est.point[-1])
        rows.append(row)
    table = pd.DataFrame(rows)
    return table.sort_values("_final").drop(columns="_final").reset_index(drop=True)


def _scores(g: pd.DataFrame, points: list[int],
            pairs: set[tuple[str, int]] | None) -> tuple[np.ndarray, int]:
    """``(R, K, G)`` regret of one method's rows ``g`` at ``points`` (runs), tables sorted,
    the same ``R`` repetitions of each table (the first ``R`` by repetition; ``pairs``: only
    these (table, repetition)), and ``R * K``."""
    if pairs is not None:
        g = g[[(t, r) in pairs for t, r in zip(g["task"], g["rep"], strict=True)]]
    tasks = sorted(g["task"].unique())
    n = min(int((g["task"] == t).sum()) for t in tasks)
    g = g.sort_values(["task", "rep"]).groupby("task", sort=False).head(n)
    scores = np.stack([np.stack([c[[p - 1 for p in points]] for c in
                                 g[g["task"] == t]["curve"].iloc[:n]]) for t in tasks],
                      axis=1)  # (R, K, G)
    return scores, n * len(tasks)


def paired(df: pd.DataFrame, a: str, b: str, budget: int,
           checkpoints: tuple[int, ...] = CHECKPOINTS, n_boot: int = 2000,
           seed: int = 0) -> str:
    """IQM regret of ``a`` minus ``b`` at each checkpoint and at the end, on the (table,
    repetition) pairs both ran, with a 95 % paired stratified-bootstrap interval (issue 40's
    "no worse than MV at the best alpha": it includes 0 or lies below it)."""
    from erahbo.analysis.stats import paired_iqm_difference

    best, _ = best_alpha(df)
    df = pd.concat([df, best], ignore_index=True)
    ga, gb = df[df["method"] == a], df[df["method"] == b]
    pairs = (set(zip(ga["task"], ga["rep"], strict=True))
             & set(zip(gb["task"], gb["rep"], strict=True)))
    if not pairs:
        return f"{a} minus {b}: no common (table, repetition) pairs"
    points = [t for t in checkpoints if t < budget] + [budget]
    sa, n = _scores(ga, points, pairs)
    sb, _ = _scores(gb, points, pairs)
    est = paired_iqm_difference(sa, sb, reps=n_boot, seed=seed)
    cells = [f"{'final' if p == budget else f'@{p}'} {est.point[j]:+.3f} "
             f"[{est.lo[j]:+.3f}, {est.hi[j]:+.3f}]" for j, p in enumerate(points)]
    return f"IQM regret, {a} minus {b} ({n} pairs, 95% CI, paired): " + "; ".join(cells)


def coverage(df: pd.DataFrame) -> pd.DataFrame:
    """Per method and table, then pooled (``task`` "all"): the studies with an interval,
    the coverage of the stated final interval, the shares of misses with the truth below /
    above it, its median width, and the same coverage and median width of the models'
    interval alone (``final_models_interval``; traces written before it: the stated one)."""
    has = df[df["lo"].notna() & df["truth"].notna()]
    rows = []
    for method, g in has.groupby("method", sort=False):
        for task, t in [*sorted(g.groupby("task")), ("all", g)]:
            inside = (t["lo"] <= t["truth"]) & (t["truth"] <= t["hi"])
            models = (t["m_lo"] <= t["truth"]) & (t["truth"] <= t["m_hi"])
            rows.append({"method": method, "task": task, "n": len(t),
                         "coverage": float(inside.mean()),
                         "below": float((t["truth"] < t["lo"]).mean()),
                         "above": float((t["truth"] > t["hi"]).mean()),
                         "width": float((t["hi"] - t["lo"]).median()),
                         "models coverage": float(models.mean()),
                         "models width": float((t["m_hi"] - t["m_lo"]).median())})
    return pd.DataFrame(rows)


def markdown(table: pd.DataFrame) -> str:
    """A GitHub markdown table."""
    head = "| " + " | ".join(map(str, table.columns)) + " |"
    rule = "|" + "---|" * len(table.columns)
    body = ["| " + " | ".join(map(str, row)) + " |" for row in table.itertuples(index=False)]
    return "\n".join([head, rule, *body])


def report(where: Path, budget: int, methods: list[str] | None = None) -> str:
    """The summary of one study directory (Markdown): the table and the alphas chosen."""
    skipped: set[str] = set()
    df = load(where, budget, skipped)
    if methods:
        keep = set(expand(methods))
        df = df[df["method"].isin(keep)]
    table = summarize(df, budget)
    if methods and BEST_ALPHA not in methods:
        table = table[table["method"] != BEST_ALPHA]
    elif methods:  # the alphas are in the best-alpha row
        table = table[~table["method"].str.startswith("erahbo-mv")
                      | table["method"].isin(methods)]
    _, chosen = best_alpha(df)
    lines = [markdown(table)]
    if skipped:
        lines += ["", "left out (every configuration has the same truth, no regret to "
                  "normalize): " + ", ".join(sorted(skipped))]
    if chosen:
        lines += ["", "mv-best-alpha, alpha per table: " + ", ".join(
            f"{t} {a}" for t, a in sorted(chosen.items()))]
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", nargs="*", default=["data/arlbench"])
    ap.add_argument("--risk", default="cvar", choices=("cvar", "quantile"))
    ap.add_argument("--q", default="0.1", help="shares of worst seeds, comma-separated")
    ap.add_argument("--budget", type=int, default=200)
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--seed", type=int, default=0, help="the repetition set")
    ap.add_argument("--methods", default=DEFAULT_METHODS)
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--processing", default="minmax")
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--summarize", action="store_true", help="only summarize --out")
    ap.add_argument("--all-alphas", action="store_true",
                    help="also print each erahbo-mv<alpha> row")
    ap.add_argument("--paired", default=None,
                    help="'A,B[;A,C...]': also print IQM(A) - IQM(B) with a paired 95%% "
                         "bootstrap interval (default: erahbo-<risk> against mv-best-alpha; "
                         "'': none)")
    ap.add_argument("--coverage", action="store_true",
                    help="also print the final interval's coverage and width per table")
    args = ap.parse_args()
    methods = [m.strip() for m in args.methods.split(",") if m.strip()]
    for q in (float(x) for x in args.q.split(",") if x.strip()):
        t0 = time.perf_counter()
        where = study_dir(args.out, args.risk, q, args.seed)
        if not args.summarize:
            run(args.data, args.out, args.risk, q, args.budget, args.reps, args.seed,
                methods, args.jobs, args.processing)
        text = report(where, args.budget, None if args.all_alphas else methods)
        head = (f"{args.risk} q={q:g}, set {args.seed}, budget {args.budget}, {args.reps} "
                f"reps, {args.processing} ({time.perf_counter() - t0:.0f} s)")
        pairs = f"erahbo-{args.risk},{BEST_ALPHA}" if args.paired is None else args.paired
        for pair in pairs.split(";"):
            if pair.strip():
                a, b = (x.strip() for x in pair.split(","))
                text += "\n\n" + paired(load(where, args.budget), a, b, args.budget)
        if args.coverage:
            cov = coverage(load(where, args.budget))
            text += "\n\n" + markdown(cov.round(3))
        (where / "summary.md").write_text(head + "\n\n" + text + "\n")
        print(head + "\n\n" + text + "\n")


if __name__ == "__main__":
    main()
