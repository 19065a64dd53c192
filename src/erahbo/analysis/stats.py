"""Statistics of the paper's report (Section 4, Appendix C) over a :class:`TraceSet`.

One import for the report and the tests; the statistics live in
:mod:`erahbo.analysis.ranks` (ranks, Wilcoxon), :mod:`erahbo.analysis.intervals` (IQM,
bootstrap confidence intervals, checkpoints, threshold crossings) and
:mod:`erahbo.analysis.seeds` (seeds per round).
"""

from __future__ import annotations

from erahbo.analysis.intervals import (
    THRESHOLDS,
    Backend,
    IntervalEstimate,
    checkpoint_regret,
    curve_grid,
    default_checkpoints,
    first_crossing,
    iqm,
    iqm_curves,
    iqm_point_curves,
    paired_iqm_difference,
    resolve_backend,
    rliable_available,
    standard_error,
    stratified_bootstrap_iqm,
    threshold_aggregate,
    threshold_crossing,
)
from erahbo.analysis.ranks import (
    RankDistribution,
    RankOverTime,
    Unit,
    rank_distribution,
    rank_over_time,
    rank_rows,
    rank_table,
    summarize_ranks,
    unit_values,
    wilcoxon_vs_best,
)
from erahbo.analysis.seeds import (
    k_vs_mv,
    seed_count_by_task,
    seed_count_distribution,
    seed_count_summary,
)

__all__ = [
    "THRESHOLDS",
    "Backend",
    "IntervalEstimate",
    "RankDistribution",
    "RankOverTime",
    "Unit",
    "checkpoint_regret",
    "curve_grid",
    "default_checkpoints",
    "first_crossing",
    "iqm",
    "iqm_curves",
    "iqm_point_curves",
    "k_vs_mv",
    "paired_iqm_difference",
    "rank_distribution",
    "rank_over_time",
    "rank_rows",
    "rank_table",
    "resolve_backend",
    "rliable_available",
    "seed_count_by_task",
    "seed_count_distribution",
    "seed_count_summary",
    "standard_error",
    "stratified_bootstrap_iqm",
    "summarize_ranks",
    "threshold_aggregate",
    "threshold_crossing",
    "unit_values",
    "wilcoxon_vs_best",
]
