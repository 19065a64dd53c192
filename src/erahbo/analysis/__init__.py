"""Analysis of benchmark traces: loading, the paper's statistics, figures and the report.

>>> from erahbo.analysis import write_report
>>> result = write_report("results/study")          # doctest: +SKIP
>>> result.report_md                                 # doctest: +SKIP
PosixPath('results/study/report/report.md')

Submodules: :mod:`~erahbo.analysis.traces` (load + align traces),
:mod:`~erahbo.analysis.stats` (ranks, Wilcoxon, IQM + bootstrap CIs, thresholds, seed
counts, checkpoints), :mod:`~erahbo.analysis.plots` (matplotlib figures) and
:mod:`~erahbo.analysis.report` (Markdown / LaTeX / CSV report). Heavy imports are lazy.
"""

from __future__ import annotations

import importlib
from typing import Any

_LAZY = {
    "TraceSet": "erahbo.analysis.traces",
    "load_traces": "erahbo.analysis.traces",
    "read_trace": "erahbo.experiments.traces",
    "align_to_grid": "erahbo.analysis.traces",
    "method_label": "erahbo.analysis.traces",
    "rank_table": "erahbo.analysis.stats",
    "rank_over_time": "erahbo.analysis.stats",
    "rank_distribution": "erahbo.analysis.stats",
    "iqm": "erahbo.analysis.stats",
    "iqm_curves": "erahbo.analysis.stats",
    "stratified_bootstrap_iqm": "erahbo.analysis.stats",
    "threshold_crossing": "erahbo.analysis.stats",
    "threshold_aggregate": "erahbo.analysis.stats",
    "checkpoint_regret": "erahbo.analysis.stats",
    "seed_count_distribution": "erahbo.analysis.stats",
    "seed_count_by_task": "erahbo.analysis.stats",
    "k_vs_mv": "erahbo.analysis.stats",
    "ReportResult": "erahbo.analysis.report",
    "write_report": "erahbo.analysis.report",
}

__all__ = sorted(_LAZY)


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'erahbo.analysis' has no attribute {name!r}")


def __dir__() -> list[str]:
    return __all__
