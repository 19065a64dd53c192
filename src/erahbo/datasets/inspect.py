"""Summary statistics of a task and its mean-vs-std scatter plot.

:func:`summarize_task` is numeric only (no printing, no plotting); :func:`plot_mean_std`
draws the scatter with matplotlib's Agg backend. Statistics over configurations use the
feasible ones (no NaN seed); the NaN counts describe the table as given. In a table with
adaptive seed counts (:mod:`erahbo.datasets.seed_counts`) every configuration is described
by its own seeds: feasible means no failed run and at least 2 returns, and the counts are of
failed runs (a seed a configuration was not run on is not one).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats

from erahbo.datasets.format import TaskData
from erahbo.datasets.groundtruth import ground_truth
from erahbo.datasets.seed_counts import run_stats, seed_count_table, seeds_per_config
from erahbo.datasets.validate import is_degenerate, means_degenerate

QUANTILES = (0.05, 0.25, 0.5, 0.75, 0.95)


@dataclass
class TaskSummary:
    """Numbers that describe one task (see :func:`summarize_task`)."""

    task: str
    domain: str
    synthetic: bool
    n_configs: int
    n_seeds: int  # the table's seed columns: the most seeds a configuration has
    n_hyperparameters: int
    n_nan_values: int  # failed runs
    n_infeasible: int  # configurations with a failed run
    degenerate: bool
    return_min: float
    return_max: float
    std_min: float
    std_median: float
    std_max: float
    corr_mean_std: float  # Pearson, over feasible configurations
    spearman_mean_std: float
    mean_quantiles: tuple[float, ...]  # at QUANTILES
    std_quantiles: tuple[float, ...]
    seed_counts: dict[int, int] = field(default_factory=dict)  # {seeds: configurations}
    n_few_seeds: int = 0  # configurations without a failed run but with fewer than 2 returns

    @property
    def adaptive(self) -> bool:
        """Whether the configurations ran on different numbers of seeds."""
        return list(self.seed_counts) not in ([], [self.n_seeds])

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def config_stats(
    returns: np.ndarray, counts: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per-configuration sample mean and standard deviation of the feasible rows.

    Parameters
    ----------
    returns : numpy.ndarray
        ``(n, S)`` returns, NaN for a failed run (or, with ``counts``, a seed not run).
    counts : numpy.ndarray, optional
        ``(n,)`` runs per configuration of a table with adaptive seed counts
        (:func:`~erahbo.datasets.seed_counts.seeds_per_config`): each row is then described
        by its own returns, and feasible means no failed run and at least 2 returns.

    Returns
    -------
    (mean, std, feasible)
        ``(m,)`` means and ``(m,)`` sample standard deviations (ddof = 1) of the ``m``
        feasible configurations, and the ``(n,)`` boolean feasibility mask.
    """
    r = np.asarray(returns, dtype=float)
    if counts is not None:
        mean, std, n_returns, n_failed = run_stats(r, counts)  # (n,) each
        feasible = (n_failed == 0) & (n_returns >= 2)
        return mean[feasible], std[feasible], feasible
    feasible = ~np.isnan(r).any(axis=1)  # (n,)
    f = r[feasible]  # (m, S)
    return f.mean(axis=1), f.std(axis=1, ddof=1), feasible


def summarize_task(task: TaskData) -> TaskSummary:
    """Shape, NaN counts, degeneracy and the mean-vs-std spread of ``task``."""
    r = np.asarray(task.returns, dtype=float)  # (n, S)
    counts = seeds_per_config(task)
    mean, std, feasible = config_stats(r, counts)
    if counts is None:
        n_failed, n_few, degenerate = int(np.isnan(r).sum()), 0, is_degenerate(r)
        infeasible = ~feasible
        table = {task.n_seeds: task.n_configs}
    else:
        _, _, n_returns, failed = run_stats(r, counts)
        n_failed, infeasible = int(failed.sum()), failed > 0
        n_few = int(((failed == 0) & (n_returns < 2)).sum())
        degenerate, table = means_degenerate(mean), seed_count_table(counts)
    nan = float("nan")
    enough = mean.size >= 2
    vary = enough and np.ptp(mean) > 0 and np.ptp(std) > 0
    return TaskSummary(
        task=task.name,
        domain=str(task.meta.get("domain_like", task.meta.get("domain", "unknown"))),
        synthetic=bool(task.meta.get("synthetic", False)),
        n_configs=task.n_configs,
        n_seeds=task.n_seeds,
        n_hyperparameters=int(task.configs.shape[1]),
        n_nan_values=n_failed,
        n_infeasible=int(infeasible.sum()),
        degenerate=degenerate,
        return_min=float(np.nanmin(r)) if np.isfinite(r).any() else nan,
        return_max=float(np.nanmax(r)) if np.isfinite(r).any() else nan,
        std_min=float(std.min()) if std.size else nan,
        std_median=float(np.median(std)) if std.size else nan,
        std_max=float(std.max()) if std.size else nan,
        corr_mean_std=float(np.corrcoef(mean, std)[0, 1]) if vary else nan,
        spearman_mean_std=float(stats.spearmanr(mean, std).statistic) if vary else nan,
        mean_quantiles=_quantiles(mean),
        std_quantiles=_quantiles(std),
        seed_counts=table,
        n_few_seeds=n_few,
    )


def summary_frame(summaries: list[TaskSummary]) -> pd.DataFrame:
    """One row per task, quantile tuples spread into ``mean_q50``-style columns."""
    rows = []
    for s in summaries:
        d = s.to_dict()
        d["seed_counts"] = " ".join(f"{k}:{v}" for k, v in d["seed_counts"].items())
        for key in ("mean_quantiles", "std_quantiles"):
            for q, v in zip(QUANTILES, d.pop(key), strict=True):
                d[f"{key.split('_')[0]}_q{round(100 * q):02d}"] = v
        rows.append(d)
    return pd.DataFrame(rows)


def benchmark_optima(
    task: TaskData, *, alpha: float = 1.0, outcome_processing: str = "vizier"
) -> tuple[tuple[float, float], tuple[float, float]] | None:
    """Raw ``(mean, std)`` of the best-mean and of the MV-optimal configuration.

    Both as the replay benchmark scores them: infeasible configurations filtered, outcomes
    processed (``outcome_processing``; Vizier warping can change which configuration has the
    best mean), ``MV = mean - alpha * var(ddof=1)``. None for a degenerate task.
    """
    try:
        truth = ground_truth(task, alpha=alpha, outcome_processing=outcome_processing)
    except ValueError:  # degenerate: no optimum to mark
        return None
    raw = np.asarray(truth.clean.returns, dtype=float)  # (n, S), the same rows

    def xy(i: int) -> tuple[float, float]:
        return float(raw[i].mean()), float(raw[i].std(ddof=1))

    return xy(int(np.argmax(truth.mean))), xy(int(np.argmax(truth.mv)))


def plot_mean_std(
    task: TaskData,
    path: str | Path,
    *,
    dpi: int = 120,
    alpha: float = 1.0,
    outcome_processing: str = "vizier",
) -> Path:
    """Write the per-configuration std-vs-mean scatter of ``task`` as a PNG.

    The axes follow every mean-vs-spread plot of erahbo (``configs.png`` too): the std across
    seeds on x, the mean return on y (better: up and to the left).

    The configuration with the best mean and the MV-optimal one (as the benchmark scores them,
    see :func:`benchmark_optima`) are marked: where they differ, the task rewards risk-aversion.
    A table with adaptive seed counts shows every configuration over its own seeds, without
    these marks (the benchmark needs every configuration on the same seeds).

    Parameters
    ----------
    task : TaskData
        Any task; infeasible configurations are left out (their count is in the title).
    path : str or Path
        Output file (parent folders are created).
    dpi : int
        Resolution.
    alpha, outcome_processing :
        The MV objective of the marked optimum.

    Returns
    -------
    Path
        The file written.
    """
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    from erahbo.analysis.figure_rules import mark_outside, robust_axis

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    counts = seeds_per_config(task)
    mean, std, feasible = config_stats(task.returns, counts)
    fig = Figure(figsize=(5.0, 4.0))
    FigureCanvasAgg(fig)  # Agg canvas, no pyplot state
    ax = fig.add_subplot()
    ax.scatter(std, mean, s=8, alpha=0.6, linewidths=0)
    marked: tuple[list[float], list[float]] = ([], [])  # (std, mean) of the marked optima
    if mean.size and counts is None:  # the benchmark's optima need the same seeds for all
        opt = benchmark_optima(task, alpha=alpha, outcome_processing=outcome_processing)
        if opt is not None:
            marked = ([opt[0][1], opt[1][1]], [opt[0][0], opt[1][0]])
            scale = "" if outcome_processing == "none" else f", {outcome_processing} scale"
            (by, bx), (my, mx) = opt  # (mean, std) pairs: std on x
            ax.scatter([bx], [by], marker="^", s=70, facecolors="none", edgecolors="tab:orange",
                       linewidths=1.5, label=f"best mean{scale}")
            ax.scatter([mx], [my], marker="*", s=90, color="tab:red", zorder=3,
                       label=f"MV optimum (alpha={alpha:g}{scale})")
    # robust limits (erahbo.analysis.figure_rules): a diverged configuration is a triangle at
    # the edge, not the scale; the marked optima stay inside
    ylim = robust_axis(ax, mean, keep=marked[1])
    xlim = robust_axis(ax, std, axis="x", keep=[0.0, *marked[0]])
    n_out = mark_outside(ax, std, mean, ylim, color="tab:blue")
    mark_outside(ax, mean, std, xlim, axis="x", color="tab:blue", label="" if n_out else None)
    if ax.get_legend_handles_labels()[0]:
        ax.legend(fontsize=7, loc="best")
    ax.set_xlabel("std of the return across seeds")
    ax.set_ylabel("mean return across seeds")
    tag = " (synthetic)" if task.meta.get("synthetic") else ""
    seeds = task.n_seeds if counts is None else f"{counts.min()}-{counts.max()}"
    ax.set_title(
        f"{task.name}{tag}\n{mean.size} configs x {seeds} seeds, "
        f"{int((~feasible).sum())} "
        + ("infeasible" if counts is None else "with a failed run or < 2 seeds") + " left out",
        fontsize=9,
    )
    ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=dpi)
    return path


def _quantiles(x: np.ndarray) -> tuple[float, ...]:
    if x.size == 0:
        return tuple(float("nan") for _ in QUANTILES)
    return tuple(float(v) for v in np.quantile(x, QUANTILES))
