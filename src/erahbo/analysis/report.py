"""The paper's report of a benchmark: Markdown + PNG figures + LaTeX tables + CSVs.

:func:`write_report` reads ``RESULTS/traces`` (see :mod:`erahbo.analysis.traces`) and
writes into ``out_dir`` (default ``RESULTS/report``)::

    report.md                      tables 1-6 with short explanations, figures embedded
    figures/*.png                  rank over time, IQM regret per domain / task, seeds, ...
    tables/*.tex                   booktabs tables (bold as in the paper)
    ranks.csv                      method,mean_rank_simple,se_rank_simple,
                                   mean_rank_cumulative,se_rank_cumulative
    *.csv                          every other number behind the tables and figures

Sections (issue "Report"): 1 final-regret ranks (mean ± SE with Wilcoxon bold, median
[25th, 75th]); 2 rank over time by domain (mean ± SE with Wilcoxon bold at checkpoints, and
the rank distribution of Appendix C); 3 IQM normalized regret with 95 % stratified
bootstrap CIs; 4 threshold crossing per task and aggregated; 5 seed-count distributions;
6 normalized regret at budget checkpoints.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from erahbo._names import RISK_NEUTRAL_PEERS
from erahbo.analysis import plots, stats
from erahbo.analysis.tables import (
    can_reject,
    checkpoint_rows,
    ci_cell,
    first_run_note,
    format_rank_summary,
    md_table,
    num,
    pm,
    rank_cells,
    report_header,
    seed_counts_by_task_md,
    study_measure,
    tex_esc,
    tex_table,
    threshold_agg_rows,
    threshold_task_rows,
    untestable_note,
)
from erahbo.analysis.traces import TraceSet, domain_label, load_traces, method_label
from erahbo.risk import objective_name

RANKS_CSV_COLUMNS: tuple[str, ...] = (
    "method", "mean_rank_simple", "se_rank_simple", "mean_rank_cumulative",
    "se_rank_cumulative",
)


@dataclass
class ReportResult:
    """What :func:`write_report` wrote.

    Attributes
    ----------
    out_dir : Path
    report_md : Path
    figures, tables, csvs : list of Path
        PNG figures, LaTeX tables and CSV files.
    ranks : pandas.DataFrame
        :func:`erahbo.analysis.stats.rank_table` of the final regrets.
    threshold_aggregate : pandas.DataFrame
    notes : list of str
        Remarks about the data (also listed in ``report.md``).
    backend : str
        Bootstrap implementation used (``"rliable"`` or ``"numpy"``).
    trace_set : TraceSet
    """

    out_dir: Path
    report_md: Path
    figures: list[Path] = field(default_factory=list)
    tables: list[Path] = field(default_factory=list)
    csvs: list[Path] = field(default_factory=list)
    ranks: pd.DataFrame = field(default_factory=pd.DataFrame)
    threshold_aggregate: pd.DataFrame = field(default_factory=pd.DataFrame)
    notes: list[str] = field(default_factory=list)
    backend: str = ""
    trace_set: TraceSet | None = None


# --------------------------------------------------------------------------- formatting


def write_report(
    results_dir: str | Path,
    out_dir: str | Path | None = None,
    *,
    bootstrap_reps: int = 2000,
    seed: int = 0,
    confidence: float = 0.95,
    alpha: float = 0.05,
    unit: stats.Unit = "task",
    thresholds: Sequence[float] = stats.THRESHOLDS,
    checkpoints: Sequence[int] | None = None,
    budget: int | None = None,
    methods: Sequence[str] | None = None,
    backend: stats.Backend = "numpy",
    per_task_figure: bool = True,
) -> ReportResult:
    """Write the full report of a results directory.

    Parameters
    ----------
    results_dir : str or Path
        ``--out`` directory of ``erahbo benchmark`` (holding ``traces/``).
    out_dir : str or Path, optional
        Where to write (default ``results_dir/report``); created if needed.
    bootstrap_reps : int
        Stratified-bootstrap replications for every CI (paper-style 95 % IQM CIs).
    seed : int
        Seed of the bootstrap.
    confidence : float
        CI coverage.
    alpha : float
        Level of the Wilcoxon test behind the bold entries.
    unit : {"task", "repetition"}
        Ranking unit (see :mod:`erahbo.analysis.stats`); ``"task"`` as in the paper.
    thresholds : sequence of float
        Regret thresholds (fractions of the initial design's regret) of table 4.
    checkpoints : sequence of int, optional
        Budget checkpoints of table 6 (default :func:`stats.default_checkpoints`).
    budget : int, optional
        Grid length (default: the budget recorded in the traces).
    methods : sequence of str, optional
        Restrict to these methods.
    backend : {"numpy", "rliable", "auto"}
        Bootstrap implementation (see :mod:`erahbo.analysis.stats`; same estimator).
    per_task_figure : bool
        Also draw the per-task regret panels (one figure with a panel per task).

    Returns
    -------
    ReportResult
    """
    if int(bootstrap_reps) < 1:
        raise ValueError(f"bootstrap_reps must be a positive integer, got {bootstrap_reps}")
    bad_thr = [t for t in thresholds if not 0 < float(t) < 1]
    if bad_thr or not thresholds:
        raise ValueError(f"thresholds must be fractions in (0, 1), got {list(thresholds)}")
    ts = load_traces(results_dir, budget=budget, methods=methods)
    which = stats.resolve_backend(backend)
    out = Path(out_dir) if out_dir is not None else Path(results_dir) / "report"
    for d in (out, out / "figures", out / "tables"):
        d.mkdir(parents=True, exist_ok=True)
    res = ReportResult(out_dir=out, report_md=out / "report.md", backend=which, trace_set=ts)
    labels = [method_label(m) for m in ts.methods]
    ctx = _Ctx(
        ts=ts, out=out, res=res, unit=unit, alpha=alpha, confidence=confidence, seed=seed,
        which=which, boot_reps=int(bootstrap_reps),
        notes=[*ts.notes, *risk_neutral_notes(ts.methods)],
        thresholds=sorted({float(t) for t in thresholds}, reverse=True),
        cps=stats.default_checkpoints(ts.budget) if checkpoints is None
        else sorted({int(cp) for cp in checkpoints}),
        groups=[*ts.domain_list, "all"] if len(ts.domain_list) > 1 else list(ts.domain_list),
        methods=list(ts.methods), labels=labels, tex_labels=[tex_esc(lb) for lb in labels],
        per_task_figure=per_task_figure,
        objective=objective_name(study_measure(results_dir)),
    )
    with plots.objective(ctx.objective):  # the figures name the study's risk measure
        md = report_header(ts, which, bootstrap_reps, seed, unit, notes_placeholder=True)
        for section in (_section_ranks, _section_rank_over_time, _section_iqm,
                        _section_thresholds, _section_seed_counts, _section_checkpoints):
            md += section(ctx)
    md = [ctx.named(line) for line in md]
    notes = [ctx.named(n) for n in ctx.notes]
    md += ["## Files", "",
           "CSV: " + ", ".join(f"`{p.name}`" for p in res.csvs) + ".", "",
           "LaTeX (booktabs): " + ", ".join(f"`tables/{p.name}`" for p in res.tables) + ".",
           ""]
    notes_md = ["## Notes on the data", ""] + ([f"- {n}" for n in notes] if notes else
                                                ["- none"]) + [""]
    i = md.index("<!-- notes -->")
    md[i:i + 1] = notes_md
    res.report_md.write_text("\n".join(md))
    res.notes = notes
    return res


def risk_neutral_notes(methods: Sequence[str]) -> list[str]:
    """One note per risk-neutral peer in the study: it aims at the mean return, not at MV."""
    return [f"{method_label(m)} (`{m}`) is risk-neutral: it minimizes minus the return of one "
            "seed per trial and never sees alpha; like every method it is scored on the MV "
            "of its recommendation, a target it does not aim at when alpha > 0."
            for m in methods if m in RISK_NEUTRAL_PEERS]


@dataclass
class _Ctx:
    """What every section of the report reads (and the files it has written so far)."""

    ts: TraceSet
    out: Path
    res: ReportResult
    unit: str
    alpha: float
    confidence: float
    seed: int
    which: str
    boot_reps: int
    notes: list[str]
    thresholds: list[float]
    cps: list[int]
    groups: list[str]
    methods: list[str]
    labels: list[str]
    tex_labels: list[str]
    per_task_figure: bool
    crossing: pd.DataFrame | None = None
    #: The study's objective as the report names it: "MV", or a risk measure's label
    #: (``CVaR_0.1``): every "MV" of the text, tables and figures becomes it.
    objective: str = "MV"

    def named(self, text: str) -> str:
        """``text`` with MV named as the study's objective."""
        return text if self.objective == "MV" else re.sub(r"\bMV\b", self.objective, text)

    @property
    def fig_dir(self) -> Path:
        return self.out / "figures"

    def csv(self, df: pd.DataFrame, name: str) -> Path:
        """Write a CSV of the report."""
        p = self.out / name
        df.to_csv(p, index=False)
        self.res.csvs.append(p)
        return p

    def tex(self, text: str, name: str) -> Path:
        """Write a LaTeX table of the report."""
        p = self.out / "tables" / name
        p.write_text(self.named(text).replace("—", "---"))  # missing values as in the paper
        self.res.tables.append(p)
        return p


def _section_ranks(ctx: _Ctx) -> list[str]:
    """Section 1: ranks of the final MV regret (tables 1a, 1b)."""
    ts, methods_l, labels, tex_labels = ctx.ts, ctx.methods, ctx.labels, ctx.tex_labels
    unit, alpha, res = ctx.unit, ctx.alpha, ctx.res
    ranks = stats.rank_table(ts, unit=unit, alpha=alpha)
    res.ranks = ranks
    ctx.csv(ranks[list(RANKS_CSV_COLUMNS)], "ranks.csv")
    ctx.csv(ranks, "rank_summary.csv")
    unit_rows = []
    for metric in ("simple", "cumulative"):
        names, vals = stats.unit_values(ts, metric, unit=unit)
        r = stats.rank_rows(vals)
        for i, name in enumerate(names):
            for mi, m in enumerate(methods_l):
                unit_rows.append({"unit": name, "metric": metric, "method": m,
                                  "regret": vals[i, mi], "rank": r[i, mi]})
    ctx.csv(pd.DataFrame(unit_rows), "ranks_per_unit.csv")
    mean_rows, med_rows = rank_cells(ranks, methods_l, tex=False)
    tmean, tmed = rank_cells(ranks, methods_l, tex=True)
    tex_labels = [tex_esc(lb) for lb in labels]
    ctx.tex(tex_table(["Metric", *tex_labels], tmean, "l" + "c" * len(methods_l),
                   r"Mean $\pm$ standard error of algorithm rank across experiments (lower is "
                   r"better). Bold values are not statistically significantly worse than best.",
                   "tab:algo_rank_mean"), "ranks_mean.tex")
    ctx.tex(tex_table(["Metric", *tex_labels], tmed, "l" + "c" * len(methods_l),
                   r"Median algorithm rank $[\text{25th percentile}, \text{75th percentile}]$ "
                   "aggregated across experiments; lower is better.", "tab:algo_rank_median"),
        "ranks_median.tex")
    n_units = int(ranks["n_units"].iloc[0])
    unit_txt = ("tasks (per task, the methods are ranked by their regret averaged over the "
                "repetitions)" if unit == "task" else "task x repetition pairs")
    md = [
        "## 1. Ranks of final MV regret", "",
        f"Rank of each method's final simple and cumulative MV regret after "
        f"{ts.budget} training runs (1 = best, ties share the average rank), aggregated over "
        f"{n_units} {unit_txt}. **Bold**: not significantly worse than the best method "
        f"(one-sided Wilcoxon signed-rank test on the paired ranks, level {alpha}). "
        "± is the standard error over the units.", "",
        "**Table 1a.** Mean ± SE rank (lower is better).", "",
        md_table(["Metric", *labels], mean_rows, "l" + "c" * len(methods_l)), "",
        "**Table 1b.** Median rank [25th, 75th percentile].", "",
        md_table(["Metric", *labels], med_rows, "l" + "c" * len(methods_l)), "",
    ]
    return md


def _section_rank_over_time(ctx: _Ctx) -> list[str]:
    """Section 2: rank over time by domain (table 2, rank distributions)."""
    ts, out, methods_l, labels = ctx.ts, ctx.out, ctx.methods, ctx.labels
    tex_labels, unit, alpha, res = ctx.tex_labels, ctx.unit, ctx.alpha, ctx.res
    groups, cps, fig_dir = ctx.groups, ctx.cps, ctx.fig_dir
    rot: dict[str, dict[str, stats.RankOverTime]] = {"simple": {}, "cumulative": {}}
    rot_rows = []
    for metric in ("simple", "cumulative"):
        for g in groups:
            curve = stats.rank_over_time(ts, metric, domain=g, unit=unit)
            rot[metric][g] = curve
            for mi, m in enumerate(methods_l):
                rot_rows.append(pd.DataFrame({
                    "metric": metric, "domain": g, "method": m,
                    "run": np.arange(1, ts.budget + 1), "mean_rank": curve.mean[mi],
                    "se_rank": curve.se[mi], "n_units": curve.n_units}))
    ctx.csv(pd.concat(rot_rows, ignore_index=True), "rank_over_time.csv")
    f_rot = plots.plot_rank_over_time(rot["simple"], methods_l, ts.budget,
                                      fig_dir / "rank_over_time.png",
                                      title="Rank of simple MV regret over the budget")
    f_rotc = plots.plot_rank_over_time(rot["cumulative"], methods_l, ts.budget,
                                       fig_dir / "rank_over_time_cumulative.png",
                                       title="Rank of cumulative MV regret over the budget")
    res.figures += [f_rot, f_rotc]
    rdist = {g: stats.rank_distribution(ts, domain=g) for g in groups}
    ctx.csv(pd.concat([pd.DataFrame({
        "domain": g, "method": m, "run": np.repeat(d.runs, len(methods_l)),
        "rank": np.tile(np.arange(1, len(methods_l) + 1), d.runs.size),
        "fraction": d.fraction[mi].T.ravel(), "mode": np.repeat(d.mode[mi], len(methods_l)),
        "n_units": d.n_units})
        for g, d in rdist.items() for mi, m in enumerate(methods_l)], ignore_index=True),
        "rank_distribution.csv")
    f_rdist = plots.plot_rank_distribution(rdist, methods_l, ts.budget,
                                           fig_dir / "rank_distribution.png")
    res.figures.append(f_rdist)
    rot_md, rot_tex = [], []
    rot_test_rows = []
    untestable: set[str] = set()
    for g in groups:
        curve = rot["simple"][g]
        for cp in cps:
            i = cp - 1
            # same test as table 1: one-sided Wilcoxon on the per-unit ranks at t = cp
            _, vals_cp = stats.unit_values(ts, "simple", unit=unit, t=cp, domain=g)
            rr = stats.rank_rows(vals_cp)
            best, p_cp, bold_cp = stats.wilcoxon_vs_best(rr, alpha=alpha)
            testable = can_reject(rr.shape[0], alpha)  # else every cell would be bold
            untestable.update(() if testable else [g])
            mark = "" if testable else " \u2020"
            row_md = [domain_label(g) + mark, str(cp)]
            row_tex = [tex_esc(domain_label(g)) + ("" if testable else r"$^\dagger$"), str(cp)]
            for mi, m in enumerate(methods_l):
                bold = (bool(bold_cp[mi]) and testable) or mi == best
                row_md.append(pm(curve.mean[mi, i], curve.se[mi, i], bold, tex=False))
                row_tex.append(pm(curve.mean[mi, i], curve.se[mi, i], bold, tex=True))
                rot_test_rows.append({"domain": g, "run": cp, "method": m,
                                      "mean_rank": curve.mean[mi, i], "se_rank": curve.se[mi, i],
                                      "p_value": p_cp[mi], "bold": bold, "best": mi == best})
            rot_md.append(row_md)
            rot_tex.append(row_tex)
    ctx.csv(pd.DataFrame(rot_test_rows), "rank_over_time_checkpoints.csv")
    ctx.tex(tex_table(["Domain", "$t$", *tex_labels], rot_tex, "lr" + "c" * len(methods_l),
                   r"Mean $\pm$ standard error rank of simple MV regret after $t$ training runs,"
                   r" aggregated by domain. Bold values are not statistically significantly "
                   rf"worse than the best (lowest mean rank) at that $t$ (one-sided Wilcoxon "
                   rf"signed-rank test on the paired per-{unit} ranks of the domain, level "
                   rf"{alpha})." + (untestable_note(alpha, unit, tex=True) if untestable
                                    else ""), "tab:rank_over_time"),
        "rank_over_time.tex")
    md = [
        "## 2. Rank over time by domain", "",
        "Rank of the simple MV regret after every training run, averaged over the tasks of "
        "each domain (line: mean, band: ± 1 SE). The table reads the curves at the budget "
        "checkpoints.", "",
        f"![Rank over time]({f_rot.relative_to(out).as_posix()})", "",
        "**Table 2.** Mean ± SE rank of simple MV regret after t training runs. **Bold**: "
        "not significantly worse than the best (lowest mean rank) of that domain at that t "
        f"(one-sided Wilcoxon signed-rank test on the paired per-{unit} ranks, level "
        f"{alpha}, as in Table 1); the best is always bold."
        + (untestable_note(alpha, unit, tex=False) if untestable else ""), "",
        md_table(["Domain", "t", *labels], rot_md, "lr" + "c" * len(methods_l)), "",
        f"Cumulative regret: ![Rank over time, cumulative]"
        f"({f_rotc.relative_to(out).as_posix()})", "",
        "Rank distribution over time: per domain (rows) and method (columns), the colour is "
        "the fraction of (task, repetition) pairs on which the method has each rank after t "
        "runs (ties rounded to the nearest rank, halves to the worse one) and the solid line "
        "is the most frequent rank, which shows spread and bimodality that the mean hides.",
        "",
        f"![Rank distribution]({f_rdist.relative_to(out).as_posix()})", "",
    ]
    return md


def _section_iqm(ctx: _Ctx) -> list[str]:
    """Section 3: IQM normalized regret over the budget (table 3); sets ``ctx.crossing``."""
    ts, out, methods_l, labels = ctx.ts, ctx.out, ctx.methods, ctx.labels
    tex_labels, res, groups, fig_dir = ctx.tex_labels, ctx.res, ctx.groups, ctx.fig_dir
    confidence, seed, which = ctx.confidence, ctx.seed, ctx.which
    notes, thresholds = ctx.notes, ctx.thresholds
    dom_curves = stats.iqm_curves(ts, by="domain", reps=ctx.boot_reps, confidence=confidence,
                                  seed=seed, backend=which, include_all=len(groups) > 1,
                                  notes=notes)
    ctx.csv(dom_curves, "iqm_regret_domain.csv")
    crossing = ctx.crossing = stats.threshold_crossing(ts, thresholds)
    f_dom = plots.plot_regret_curves(dom_curves, methods_l, ts.budget,
                                     fig_dir / "regret_by_domain.png", groups=groups,
                                     thresholds=thresholds)
    res.figures.append(f_dom)
    task_curves = stats.iqm_curves(ts, by="task", reps=ctx.boot_reps, confidence=confidence,
                                   seed=seed + 1, backend=which)
    ctx.csv(task_curves, "iqm_regret_task.csv")
    f_task = None
    if ctx.per_task_figure:
        f_task = plots.plot_regret_curves(
            task_curves, methods_l, ts.budget, fig_dir / "regret_by_task.png",
            groups=list(ts.tasks), crossing=crossing, thresholds=thresholds,
            title="IQM normalized MV regret per task (95 % bootstrap CI; markers: first "
                  "crossing of each threshold)")
        res.figures.append(f_task)
    final = dom_curves[dom_curves["run"] == ts.budget]
    fin_md, fin_tex = [], []
    for g in groups:
        s = final[final["group"] == g].set_index("method")
        best = s["iqm"].idxmin()
        rmd, rtx = [domain_label(g)], [tex_esc(domain_label(g))]
        for m in methods_l:
            c = ci_cell(s.loc[m])
            rmd.append(f"**{c}**" if m == best else c)
            rtx.append(rf"\textbf{{{c}}}" if m == best else c)
        fin_md.append(rmd)
        fin_tex.append(rtx)
    ctx.tex(tex_table(["Domain", *tex_labels], fin_tex, "l" + "c" * len(methods_l),
                   f"IQM normalized MV regret after {ts.budget} training runs with "
                   rf"{round(100 * confidence)}\% stratified bootstrap CI (bold: lowest).",
                   "tab:iqm_final"), "iqm_final.tex")
    md = [
        "## 3. Normalized MV regret over the budget", "",
        ("Normalized regret = (MV* − MV(incumbent)) / (MV* − mean MV of all configurations "
         "of the table): 1 = no better than the table's average configuration, 0 = optimal "
         "(user's protocol). " if ts.user_protocol else
         "Normalized regret = (MV* − MV(incumbent)) / (MV* − mean MV of the initial "
         "configurations): 1 = no better than the average initial configuration, 0 = optimal. ")
        + f"Lines: IQM over repetitions x tasks; bands: {round(100 * confidence)} % "
        f"stratified bootstrap CI ({ctx.boot_reps} resamples, {which} backend). Dotted lines: "
        "the thresholds of table 4.", "",
        f"![IQM normalized regret by domain]({f_dom.relative_to(out).as_posix()})", "",
    ]
    if f_task is not None:
        md += [f"![IQM normalized regret per task]({f_task.relative_to(out).as_posix()})", ""]
    md += [
        f"**Table 3.** IQM normalized MV regret after {ts.budget} training runs "
        f"[{round(100 * confidence)} % CI] (bold: lowest).", "",
        md_table(["Domain", *labels], fin_md, "l" + "c" * len(methods_l)), "",
    ]
    return md


def _section_thresholds(ctx: _Ctx) -> list[str]:
    """Section 4: threshold crossings (tables 4a, 4b)."""
    ts, methods_l, labels, tex_labels = ctx.ts, ctx.methods, ctx.labels, ctx.tex_labels
    res, thresholds, crossing = ctx.res, ctx.thresholds, ctx.crossing
    ctx.csv(crossing, "thresholds_per_task.csv")
    agg = stats.threshold_aggregate(crossing, methods_l)
    res.threshold_aggregate = agg
    ctx.csv(agg, "thresholds_aggregate.csv")
    pct = [f"{round(100 * t)} %" for t in thresholds]
    task_hdr = ["Task"] + [f"{lb} {p}" for lb in labels for p in pct]
    task_rows_md = threshold_task_rows(crossing, ts.tasks, methods_l, thresholds, tex=False)
    task_rows_tex = threshold_task_rows(crossing, ts.tasks, methods_l, thresholds, tex=True)
    nt = len(thresholds)
    pre = ("    ~ & " + " & ".join(rf"\multicolumn{{{nt}}}{{c}}{{{lb}}}" for lb in tex_labels)
           + r" \\" + "\n    " + " ".join(
               rf"\cmidrule(lr){{{2 + i * nt}-{1 + (i + 1) * nt}}}"
               for i in range(len(methods_l))) + "\n")
    ctx.tex(tex_table(["Task"] + [rf"${round(100 * t)}\%$" for t in thresholds] *
                   len(methods_l), task_rows_tex, "l" + "r" * (nt * len(methods_l)),
                   "First evaluation steps where the IQM of normalized MV regret drops below "
                   r"threshold (\% of initial-design regret). ``---'' means not reached.",
                   "tab:threshold_crossing_mean", pre_header=pre), "thresholds_per_task.tex")
    agg_md = threshold_agg_rows(agg, methods_l, tex=False)
    agg_tex = threshold_agg_rows(agg, methods_l, tex=True)
    ctx.tex(tex_table(["Threshold", *tex_labels], agg_tex, "l" + "r" * len(methods_l),
                   r"Mean $\pm$ standard error number of evaluations needed to improve over "
                   "regret thresholds. We average tasks where all methods reach the threshold "
                   "(count per method in brackets).", "tab:threshold_crossing_agg"),
        "thresholds_aggregate.tex")
    md = [
        "## 4. Threshold crossing", "",
        "First training run at which a task's IQM normalized regret (over repetitions) drops "
        f"below {', '.join(pct)} of "
        + ("the table's average configuration's regret" if ts.user_protocol
           else "the initial design's regret") + " (— = not reached within "
        f"{ts.budget} runs).", "",
        "**Table 4a.** Aggregate over the tasks where *all* methods reach the threshold: "
        "mean ± SE training runs (number of tasks in which each method reaches it in "
        "brackets)." + first_run_note(agg), "",
        md_table(["Threshold", *labels], agg_md), "",
        "**Table 4b.** Per task.", "",
        md_table(task_hdr, task_rows_md), "",
    ]
    return md


def _section_seed_counts(ctx: _Ctx) -> list[str]:
    """Section 5: seeds per round (table 5, per task)."""
    ts, out, methods_l, labels = ctx.ts, ctx.out, ctx.methods, ctx.labels
    res, fig_dir = ctx.res, ctx.fig_dir
    dist = stats.seed_count_distribution(ts.rounds, methods_l)
    summ = stats.seed_count_summary(ts.rounds, methods_l)
    kmv = stats.k_vs_mv(ts.rounds, methods_l)
    ctx.csv(dist, "seed_counts.csv")
    ctx.csv(summ, "seed_count_summary.csv")
    ctx.csv(kmv, "k_vs_mv.csv")
    by_task = stats.seed_count_by_task(ts.rounds, methods_l)
    ctx.csv(by_task, "seed_counts_by_task.csv")
    f_seed = plots.plot_seed_counts(dist, ts.rounds, methods_l, fig_dir / "seed_counts.png")
    f_kmv = plots.plot_k_vs_mv(kmv, methods_l, fig_dir / "k_vs_mv.png")
    res.figures += [f_seed, f_kmv]
    s_idx = summ.set_index("method")
    seed_md, seed_tex = [], []
    for m, lb in zip(methods_l, labels, strict=True):
        if m not in s_idx.index:
            continue
        r = s_idx.loc[m]
        cells = [f"{int(r['n_rounds'])}", f"{r['mean_k']:.2f}",
                 f"{r['median_k']:.0f} [{r['q25_k']:.0f}, {r['q75_k']:.0f}]",
                 f"{int(r['max_k'])}", f"{100 * r['frac_certified']:.1f}",
                 num(r["spearman_k_mv"], 2)]
        seed_md.append([lb, *cells])
        seed_tex.append([tex_esc(lb), *[c.replace("%", r"\%") for c in cells]])
    seed_hdr = ["Method", "rounds", "mean k", "median k [25th, 75th]", "max k",
                "% rejected early", "Spearman(k, MV)"]
    ctx.tex(tex_table([tex_esc(h) for h in seed_hdr], seed_tex, "lrrrrrr",
                   "Seeds per evaluated configuration, pooled over tasks and repetitions. "
                   r"Rejected early: rounds stopped by the certificate before $k_{\max}$.",
                   "tab:seed_counts"), "seed_counts.tex")
    md = [
        "## 5. Seed-count distributions", "",
        "Seeds k spent on each evaluated configuration (one BO round), pooled over tasks and "
        "repetitions. Left: share of rounds per k (k = 1: a configuration chosen again whose "
        "seed cap left room for one seed, or a new one under k_min = 1, erahbo's default; "
        "the paper's k_min = 2 gives a new configuration at least 2 seeds). Right: for the "
        "adaptive method, the true normalized MV regret of the configuration per k (lower = "
        "better configuration). Spearman(k, MV) > 0 means more seeds go to configurations "
        "with higher true MV.", "",
        f"![Seed counts]({f_seed.relative_to(out).as_posix()})", "",
        f"![k versus MV]({f_kmv.relative_to(out).as_posix()})", "",
        "**Table 5.** Seeds per round.", "",
        md_table(seed_hdr, seed_md), "",
    ]
    md += seed_counts_by_task_md(by_task, methods_l, labels)
    return md


def _section_checkpoints(ctx: _Ctx) -> list[str]:
    """Section 6: normalized regret at the budget checkpoints (table 6)."""
    ts, out, methods_l, labels = ctx.ts, ctx.out, ctx.methods, ctx.labels
    tex_labels, res, groups = ctx.tex_labels, ctx.res, ctx.groups
    cps, fig_dir = ctx.cps, ctx.fig_dir
    confidence, seed, which = ctx.confidence, ctx.seed, ctx.which
    ckpt = stats.checkpoint_regret(ts, cps, reps=ctx.boot_reps, confidence=confidence,
                                   seed=seed + 2, backend=which)
    ckpt = ckpt[ckpt["group"].isin(groups)]
    ctx.csv(ckpt, "checkpoints.csv")
    f_ck = plots.plot_checkpoints(ckpt, methods_l, fig_dir / "checkpoints.png", groups=groups)
    res.figures.append(f_ck)
    main_group = "all" if "all" in groups else groups[0]
    ck_md = checkpoint_rows(ckpt, main_group, methods_l, tex=False)
    ck_tex = checkpoint_rows(ckpt, main_group, methods_l, tex=True)
    ctx.tex(tex_table(["$t$", *tex_labels], ck_tex, "r" + "c" * len(methods_l),
                   "IQM normalized mean-variance regret at evaluation budget $t$ over "
                   f"{tex_esc(domain_label(main_group).lower())} with "
                   rf"{round(100 * confidence)}\% stratified bootstrap CI "
                   "(bold: lowest).", "tab:checkpoints"), "checkpoints.tex")
    md = [
        "## 6. Normalized regret at budget checkpoints", "",
        "IQM normalized MV regret after t training runs with "
        f"{round(100 * confidence)} % CI, per domain in the figure.", "",
        f"![Checkpoints]({f_ck.relative_to(out).as_posix()})", "",
        f"**Table 6.** IQM normalized MV regret [CI], {domain_label(main_group)} "
        "(bold: lowest).", "",
        md_table(["t", *labels], ck_md, "r" + "c" * len(methods_l)), "",
    ]
    return md


__all__ = [
    "RANKS_CSV_COLUMNS",
    "ReportResult",
    "can_reject",
    "format_rank_summary",
    "write_report",
]
