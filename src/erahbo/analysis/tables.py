"""Formatting of the report: Markdown and LaTeX (booktabs) tables and their cells.

The builders of :mod:`erahbo.analysis.report` turn the statistics into rows with these
functions; they format numbers only (no statistics here).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from erahbo.analysis.traces import TraceSet, domain_label, method_label
from erahbo.risk import MeanVariance, RiskMeasure, measure_from_json

METRIC_NAMES = {"simple": "Simple Regret MV", "cumulative": "Cumulative Regret MV"}

__all__ = [
    "METRIC_NAMES",
    "can_reject",
    "checkpoint_rows",
    "ci_cell",
    "crossing_cell",
    "first_run_note",
    "format_rank_summary",
    "md_table",
    "num",
    "objective_line",
    "pm",
    "rank_cells",
    "report_header",
    "seed_counts_by_task_md",
    "tex_esc",
    "tex_table",
    "threshold_agg_rows",
    "threshold_task_rows",
    "untestable_note",
]


def num(x: float, digits: int = 2) -> str:
    return "—" if x is None or not np.isfinite(x) else f"{x:.{digits}f}"


def tex_esc(s: str) -> str:
    for a, b in (("\\", r"\textbackslash{}"), ("_", r"\_"), ("%", r"\%"), ("&", r"\&"),
                 ("#", r"\#"), ("$", r"\$")):
        s = s.replace(a, b)
    return s


def first_run_note(agg: pd.DataFrame) -> str:
    """Why a threshold row reads 1.0 for every method (the normalization, not the methods)."""
    if agg.empty:
        return ""
    means = agg.groupby("threshold")["mean"].agg(lambda v: bool(np.all(v.to_numpy() == 1.0)))
    at_one = [f"{round(100 * t)} %" for t, yes in sorted(means.items(), reverse=True) if yes]
    if not at_one:
        return ""
    rows = "row reads" if len(at_one) == 1 else "rows read"
    return (f" The {', '.join(at_one)} {rows} 1 for every method: regret is normalized by "
            "that of the *average* initial configuration (mv_star - mean MV of the initial "
            "design), while the regret after the first run is that of the *best* initial "
            "configuration, already below it on these tasks: reached by the initial design "
            "alone, such a row does not compare the methods.")


def can_reject(n_units: int, alpha: float) -> bool:
    """Whether the one-sided Wilcoxon signed-rank test on ``n_units`` pairs can reject at
    ``alpha`` at all: its smallest attainable p-value is ``1 / 2**n_units`` (all differences
    of one sign), so with 4 units or fewer it never goes below 0.05."""
    return 0.5 ** int(n_units) < alpha


def untestable_note(alpha: float, unit: str, tex: bool) -> str:
    """The footnote of a table whose marked rows have too few units for the test."""
    dagger = r"$^\dagger$" if tex else "\u2020"
    return (f" {dagger}: too few {unit}s for the test to reject at level {alpha} (its smallest "
            f"p-value is 1/2^n); there only the best is bold, and no method is shown to be "
            "worse.")


def pm(mean: float, se: float, bold: bool, tex: bool, digits: int = 2) -> str:
    m, s = num(mean, digits), num(se, digits)
    if tex:
        if bold:
            return rf"\textbf{{{m}}} $\pm$ \textbf{{{s}}}"
        return rf"{m} $\pm$ {s}"
    txt = f"{m} ± {s}"
    return f"**{txt}**" if bold else txt


def seed_counts_by_task_md(by_task: pd.DataFrame, methods: list[str], labels: list[str]
                            ) -> list[str]:
    """Table 5b: mean k and the share of rounds to k_max, per task (adaptive methods)."""
    if by_task.empty:
        return []
    shown = [(m, lb) for m, lb in zip(methods, labels, strict=True)
             if m in set(by_task["method"])]
    cell = {(r.task, r.method): f"{r.mean_k:.2f} ({100 * r.frac_k_max:.0f} %)"
            for r in by_task.itertuples()}
    rows = [[t, *[cell.get((t, m), "—") for m, _ in shown]]
            for t in sorted(set(by_task["task"]))]
    return [
        "**Table 5b.** Per task: mean seeds per round (share of rounds that ran to k_max) of "
        "the adaptive methods. A high share means the stopping rule rarely fired there, e.g. "
        "because many configurations tie with the incumbent.", "",
        md_table(["Task", *[lb for _, lb in shown]], rows), "",
    ]


def md_table(header: Sequence[str], rows: Sequence[Sequence[str]],
              align: str | None = None) -> str:
    align = align or ("l" + "r" * (len(header) - 1))
    sep = ["---:" if a == "r" else (":---:" if a == "c" else "---") for a in align]
    lines = ["| " + " | ".join(header) + " |", "| " + " | ".join(sep) + " |"]
    lines += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(lines)


def tex_table(header: Sequence[str], rows: Sequence[Sequence[str]], align: str,
               caption: str, label: str, pre_header: str = "") -> str:
    body = "\n".join("    " + " & ".join(r) + r" \\" for r in rows)
    return (
        "% requires \\usepackage{booktabs,adjustbox}\n"
        "\\begin{table}[htbp]\n  \\centering\n"
        f"  \\caption{{{caption}}}\n"
        "  \\begin{adjustbox}{max width=\\linewidth}\n"
        f"  \\begin{{tabular}}{{{align}}}\n    \\toprule\n"
        f"{pre_header}"
        "    " + " & ".join(header) + " \\\\\n    \\midrule\n"
        f"{body}\n    \\bottomrule\n  \\end{{tabular}}\n  \\end{{adjustbox}}\n"
        f"  \\label{{{label}}}\n\\end{{table}}\n"
    )


# --------------------------------------------------------------------------- tables


def rank_cells(ranks: pd.DataFrame, methods: Sequence[str], tex: bool
               ) -> tuple[list[list[str]], list[list[str]]]:
    by = ranks.set_index("method")
    mean_rows, med_rows = [], []
    for metric, name in METRIC_NAMES.items():
        mean_rows.append([name] + [
            pm(by.at[m, f"mean_rank_{metric}"], by.at[m, f"se_rank_{metric}"],
                bool(by.at[m, f"bold_{metric}"]), tex) for m in methods])
        med_rows.append([name] + [
            f"{by.at[m, f'median_rank_{metric}']:.2f} [{by.at[m, f'q25_rank_{metric}']:.2f}, "
            f"{by.at[m, f'q75_rank_{metric}']:.2f}]" for m in methods])
    return mean_rows, med_rows


def crossing_cell(v: float) -> str:
    return "—" if not np.isfinite(v) else str(int(v))


def threshold_task_rows(crossing: pd.DataFrame, tasks: Sequence[str],
                         methods: Sequence[str], thresholds: Sequence[float], tex: bool
                         ) -> list[list[str]]:
    idx = crossing.set_index(["task", "method", "threshold"])["run"]
    rows = []
    for task in tasks:
        cells = [rf"\texttt{{{tex_esc(task)}}}" if tex else task]
        for m in methods:
            for thr in thresholds:
                c = crossing_cell(float(idx.loc[(task, m, float(thr))]))
                cells.append(("---" if c == "—" else f"${c}$") if tex else c)
        rows.append(cells)
    return rows


def threshold_agg_rows(agg: pd.DataFrame, methods: Sequence[str], tex: bool
                        ) -> list[list[str]]:
    rows = []
    for thr in sorted(agg["threshold"].unique(), reverse=True):
        sub = agg[agg["threshold"] == thr].set_index("method")
        n_common = int(sub["n_common"].iloc[0])
        pct = round(100 * thr)
        head = (rf"{pct}\% ($n_{{\mathrm{{common}}}}={n_common}$)" if tex
                else f"{pct} % (n_common = {n_common})")
        cells = [head]
        for m in methods:
            mean, se, cnt = sub.at[m, "mean"], sub.at[m, "se"], int(sub.at[m, "count"])
            if not np.isfinite(mean):
                cells.append(f"--- ({cnt})" if tex else f"— ({cnt})")
            elif tex:
                cells.append(rf"${mean:.1f} \pm {num(se, 1)}$ ({cnt})")
            else:
                cells.append(f"{mean:.1f} ± {num(se, 1)} ({cnt})")
        rows.append(cells)
    return rows


def ci_cell(d: pd.Series, digits: int = 3) -> str:
    return f"{d['iqm']:.{digits}f} [{d['lo']:.{digits}f}, {d['hi']:.{digits}f}]"


def checkpoint_rows(ckpt: pd.DataFrame, group: str, methods: Sequence[str], tex: bool
                     ) -> list[list[str]]:
    sub = ckpt[ckpt["group"] == group]
    rows = []
    for cp in sorted(sub["checkpoint"].unique()):
        s = sub[sub["checkpoint"] == cp].set_index("method")
        best = s["iqm"].idxmin()
        cells = [str(int(cp))]
        for m in methods:
            c = ci_cell(s.loc[m])
            if m == best:
                c = rf"\textbf{{{c}}}" if tex else f"**{c}**"
            cells.append(c)
        rows.append(cells)
    return rows


# --------------------------------------------------------------------------- main entry


def report_header(ts: TraceSet, backend: str, reps: int, seed: int, unit: str,
            notes_placeholder: bool) -> list[str]:
    per_dom = ", ".join(f"{domain_label(d)}: {len(ts.tasks_in(d))}" for d in ts.domain_list)
    n_rep = sorted(set(ts.n_repetitions.values()))
    reps_txt = str(n_rep[0]) if len(n_rep) == 1 else f"{n_rep[0]}–{n_rep[-1]}"
    lines = [
        "# Benchmark report", "",
        f"Results: `{ts.results_dir}`", "",
        f"- Tasks: {len(ts.tasks)} ({per_dom})",
        f"- Methods: {', '.join(method_label(m) for m in ts.methods)}",
        f"- Repetitions per task: {reps_txt}; budget: {ts.budget} training runs "
        + ("in all, each method's own initial design included (user's protocol)"
           if ts.user_protocol else "after the initial design"),
        *objective_line(ts.results_dir),
        f"- Ranking unit: {unit}; bootstrap: {reps} resamples, seed {seed}, {backend} "
        "backend", "",
    ]
    if notes_placeholder:
        lines += ["<!-- notes -->", ""]
    return lines


def study_measure(results_dir: Any) -> RiskMeasure:
    """The risk measure of a benchmark study (its ``study.json`` settings ``risk``, ``alpha``,
    ``q``; MV with alpha 1 when the file or the keys are absent: studies before measures)."""
    path = Path(results_dir) / "study.json"
    st = json.loads(path.read_text()).get("settings", {}) if path.is_file() else {}
    return measure_from_json({k: v for k, v in st.items()
                              if k in ("risk", "alpha", "q", "c") and v is not None})


def objective_line(results_dir: Any) -> list[str]:
    """The study's objective from its ``study.json`` (none when the file is absent)."""

    path = Path(results_dir) / "study.json"
    if not path.is_file():
        return []
    st = json.loads(path.read_text()).get("settings", {})
    measure = study_measure(results_dir)

    def value(name: str) -> Any:  # None: every method used its own (its preset's) value
        v = st.get(name, "?")
        return "each method's own" if v is None else v

    what = (f"MV = mean - alpha * variance, alpha = {st.get('alpha', '?')}"
            if isinstance(measure, MeanVariance) else measure.describe())
    return [f"- Objective: {what}, on "
            f"returns processed with `{st.get('outcome_processing', '?')}`; beta = "
            f"{value('beta')}, beta_stop = {value('beta_stop')}, ERAHBO k "
            + ("range: each method's own" if st.get("k_min", "?") is None
               and st.get("k_max", "?") is None else
               f"in [{value('k_min')}, {value('k_max')}]")
            + f"; preset {st.get('preset', 'default')}"]


def format_rank_summary(ranks: pd.DataFrame) -> list[dict[str, str]]:
    """Rows of the rank table as display strings (for terminal summaries).

    Returns
    -------
    list of dict
        Keys method, label, simple, cumulative, median_simple, median_cumulative, bold_simple,
        bold_cumulative (``"yes"``/``""``).
    """
    rows = []
    for _, r in ranks.iterrows():
        rows.append({
            "method": r["method"], "label": method_label(r["method"]),
            "simple": f"{r['mean_rank_simple']:.2f} ± {num(r['se_rank_simple'])}",
            "cumulative": f"{r['mean_rank_cumulative']:.2f} ± "
                          f"{num(r['se_rank_cumulative'])}",
            "median_simple": f"{r['median_rank_simple']:.2f} [{r['q25_rank_simple']:.2f}, "
                             f"{r['q75_rank_simple']:.2f}]",
            "median_cumulative": f"{r['median_rank_cumulative']:.2f} "
                                 f"[{r['q25_rank_cumulative']:.2f}, "
                                 f"{r['q75_rank_cumulative']:.2f}]",
            "bold_simple": "yes" if bool(r["bold_simple"]) else "",
            "bold_cumulative": "yes" if bool(r["bold_cumulative"]) else "",
        })
    return rows

