"""Ranks of the methods (paper Table 1, rank over time): per task or per repetition.

Ranking unit (a documented choice)
----------------------------------
The paper ranks the methods once per *task*: on each task the methods are ranked by their
regret averaged over the repetitions (ties share the average rank), and the table
aggregates these ranks over the tasks (its mean ranks 1.79, 2.42, 2.37, 3.42 are multiples
of 1/19, one rank per task of 19). :func:`rank_table` therefore defaults to
``unit="task"`` (rank of the mean over repetitions). ``unit="repetition"`` ranks the
methods per (task, repetition) instead (all methods of a repetition share its initial
design, so these are paired too) and aggregates over tasks x repetitions.

The ± in the tables here is the standard error ``std(ddof=1) / sqrt(n_units)``; the
spread the paper prints next to its mean ranks (about 0.8) matches the plain standard
deviation, which :func:`rank_table` also returns (``std_rank_*``).

"Bold = not significantly worse than the best": the best method has the lowest mean rank;
every other method is compared with it by a one-sided Wilcoxon signed-rank test on the
paired per-unit ranks (``scipy.stats.wilcoxon``, H1: its ranks are larger) at level
``alpha = 0.05``; it is bold when ``p >= alpha``. The best method is always bold.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np
import pandas as pd
from scipy import stats as sps

from erahbo.analysis.intervals import curve_grid, standard_error
from erahbo.analysis.traces import Metric, TraceSet

Unit = Literal["task", "repetition"]


# --------------------------------------------------------------------------- small helpers


def _check_unit(unit: str) -> None:
    if unit not in ("task", "repetition"):
        raise ValueError(f"unit must be 'task' or 'repetition', got {unit!r}")


def _t_index(ts: TraceSet, t: int | None) -> int:
    if t is None:
        return ts.budget - 1
    if not 1 <= int(t) <= ts.budget:
        raise ValueError(f"t must lie in 1..{ts.budget} (the budget), got {t}")
    return int(t) - 1


def rank_rows(values: np.ndarray) -> np.ndarray:
    """Rank the methods in each row, lower value = better = rank 1, ties averaged.

    Parameters
    ----------
    values : numpy.ndarray
        ``(n_units, n_methods, ...)`` regrets; ranked along axis 1.

    Returns
    -------
    numpy.ndarray
        Same shape, ranks in ``1..n_methods``.
    """
    return sps.rankdata(np.asarray(values, dtype=np.float64), method="average", axis=1)


def unit_values(ts: TraceSet, metric: Metric = "simple", unit: Unit = "task",
                t: int | None = None, domain: str | None = None
                ) -> tuple[list[str], np.ndarray]:
    """Regret of every method per ranking unit after run ``t`` (default: the budget).

    Parameters
    ----------
    ts : TraceSet
    metric : {"simple", "cumulative", "normalized"}
    unit : {"task", "repetition"}
        ``"task"``: mean over repetitions per task; ``"repetition"``: one unit per
        (task, repetition).
    t : int, optional
        1-based training run; the budget by default.
    domain : str, optional
        Restrict to one domain.

    Returns
    -------
    labels : list of str
        ``n_units`` unit names (``task`` or ``task/rep-NNN``).
    values : numpy.ndarray
        ``(n_units, M)`` regrets.
    """
    _check_unit(unit)
    ti = _t_index(ts, t)
    arrays = ts.metric(metric)
    labels: list[str] = []
    rows: list[np.ndarray] = []
    for task in ts.tasks_in(domain):
        v = arrays[task][:, :, ti]  # (M, R)
        if unit == "task":
            labels.append(task)
            rows.append(v.mean(axis=1)[None, :])
        else:
            labels.extend(f"{task}/rep-{int(r):03d}" for r in ts.repetitions[task])
            rows.append(v.T)
    if not rows:
        return [], np.empty((0, len(ts.methods)))
    return labels, np.concatenate(rows, axis=0)


def wilcoxon_vs_best(
    ranks: np.ndarray, alpha: float = 0.05, alternative: str = "greater"
) -> tuple[int, np.ndarray, np.ndarray]:
    """Which methods are not significantly worse than the best (the paper's bold).

    Parameters
    ----------
    ranks : numpy.ndarray
        ``(n_units, M)`` paired ranks (lower is better).
    alpha : float
        Significance level.
    alternative : {"greater", "two-sided"}
        ``"greater"``: one-sided test that a method's ranks exceed the best's.

    Returns
    -------
    best : int
        Index of the method with the lowest mean rank (first on ties).
    p_values : numpy.ndarray
        ``(M,)`` Wilcoxon signed-rank p-values against the best (1 for the best itself
        and where all paired differences are zero).
    bold : numpy.ndarray
        ``(M,)`` bool, ``p >= alpha``.
    """
    ranks = np.asarray(ranks, dtype=np.float64)
    if ranks.ndim != 2 or ranks.shape[0] < 1:
        raise ValueError(f"ranks must be (n_units >= 1, n_methods), got shape {ranks.shape}")
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must lie in (0, 1), got {alpha}")
    if alternative not in ("greater", "two-sided"):
        raise ValueError(f"alternative must be 'greater' or 'two-sided', got {alternative!r}")
    best = int(np.argmin(ranks.mean(axis=0)))
    p = np.ones(ranks.shape[1])
    for m in range(ranks.shape[1]):
        d = ranks[:, m] - ranks[:, best]
        if m == best or np.all(d == 0):
            continue
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            res = sps.wilcoxon(ranks[:, m], ranks[:, best], alternative=alternative)
        p[m] = float(res.pvalue) if np.isfinite(res.pvalue) else 1.0
    return best, p, p >= alpha


def summarize_ranks(ranks: np.ndarray, methods: Sequence[str], alpha: float = 0.05,
                    alternative: str = "greater") -> pd.DataFrame:
    """Mean, SE, std, median and quartiles of per-unit ranks, with the Wilcoxon bold flag.

    Parameters
    ----------
    ranks : numpy.ndarray
        ``(n_units, M)``.
    methods : sequence of str
        ``M`` method names.

    Returns
    -------
    pandas.DataFrame
        Columns method, mean, se, std, median, q25, q75, p_value, bold, best, n_units.
    """
    ranks = np.asarray(ranks, dtype=np.float64)
    best, p, bold = wilcoxon_vs_best(ranks, alpha=alpha, alternative=alternative)
    q25, med, q75 = np.percentile(ranks, [25, 50, 75], axis=0)  # (M,) each
    n = ranks.shape[0]
    return pd.DataFrame({
        "method": list(methods),
        "mean": ranks.mean(axis=0),
        "se": standard_error(ranks, axis=0),
        "std": ranks.std(axis=0, ddof=1) if n > 1 else np.full(ranks.shape[1], np.nan),
        "median": med, "q25": q25, "q75": q75,
        "p_value": p, "bold": bold,
        "best": np.arange(ranks.shape[1]) == best,
        "n_units": n,
    })


def rank_table(ts: TraceSet, *, unit: Unit = "task", t: int | None = None,
               alpha: float = 0.05, alternative: str = "greater",
               domain: str | None = None) -> pd.DataFrame:
    """Final-regret rank table of the paper (Tables "mean ± SE" and "median [25, 75]").

    Parameters
    ----------
    ts : TraceSet
    unit : {"task", "repetition"}
        Ranking unit (see the module docstring); ``"task"`` as in the paper.
    t : int, optional
        Training run at which to rank (the budget by default).
    alpha, alternative
        Passed to :func:`wilcoxon_vs_best`.
    domain : str, optional
        Restrict to one domain.

    Returns
    -------
    pandas.DataFrame
        One row per method (display order) with, for ``X`` in ``simple`` and
        ``cumulative``: ``mean_rank_X``, ``se_rank_X``, ``std_rank_X``, ``median_rank_X``,
        ``q25_rank_X``, ``q75_rank_X``, ``p_X``, ``bold_X``, ``best_X``; plus ``n_units``.
    """
    out = pd.DataFrame({"method": list(ts.methods)})
    n_units = 0
    for metric in ("simple", "cumulative"):
        _, vals = unit_values(ts, metric, unit=unit, t=t, domain=domain)  # (U, M)
        if vals.shape[0] == 0:
            raise ValueError(f"domain {domain!r}: no tasks to rank")
        s = summarize_ranks(rank_rows(vals), ts.methods, alpha=alpha, alternative=alternative)
        for col, new in (("mean", "mean_rank"), ("se", "se_rank"), ("std", "std_rank"),
                         ("median", "median_rank"), ("q25", "q25_rank"),
                         ("q75", "q75_rank"), ("p_value", "p"), ("bold", "bold"),
                         ("best", "best")):
            out[f"{new}_{metric}"] = s[col].to_numpy()
        n_units = vals.shape[0]
    out["n_units"] = n_units
    return out


@dataclass
class RankOverTime:
    """Mean ± SE rank of each method after every training run.

    Attributes
    ----------
    methods : tuple of str
        ``M`` methods.
    mean, se : numpy.ndarray
        ``(M, T)`` mean rank and its standard error over the units after run ``t``
        (index ``t - 1``); SE is NaN with a single unit.
    n_units : int
    """

    methods: tuple[str, ...]
    mean: np.ndarray
    se: np.ndarray
    n_units: int


def rank_over_time(ts: TraceSet, metric: Metric = "simple", *, domain: str | None = None,
                   unit: Unit = "task") -> RankOverTime:
    """Ranks after every run ``t = 1..budget``, aggregated over the tasks of a domain.

    Parameters
    ----------
    ts : TraceSet
    metric : {"simple", "cumulative", "normalized"}
        Regret to rank (simple and normalized give the same ranks).
    domain : str, optional
        Domain to aggregate over (all tasks by default).
    unit : {"task", "repetition"}
        Ranking unit as in :func:`rank_table`.
    """
    _check_unit(unit)
    arrays = ts.metric(metric)
    per_unit = []
    for task in ts.tasks_in(domain):
        a = arrays[task]  # (M, R, T)
        if unit == "task":
            per_unit.append(rank_rows(a.mean(axis=1)[None]))  # (1, M, T)
        else:
            per_unit.append(rank_rows(np.transpose(a, (1, 0, 2))))  # (R, M, T)
    if not per_unit:
        raise ValueError(f"domain {domain!r}: no tasks in the trace set")
    r = np.concatenate(per_unit, axis=0)  # (U, M, T)
    return RankOverTime(methods=ts.methods, mean=r.mean(axis=0), se=standard_error(r, axis=0),
                        n_units=r.shape[0])


@dataclass
class RankDistribution:
    """Distribution of the per-(task, repetition) rank of each method over training runs
    (paper, Appendix C, figure "app-fig:mode-rank").

    Attributes
    ----------
    methods : tuple of str
        ``M`` methods.
    runs : numpy.ndarray
        ``(G,)`` 1-based training runs of the grid.
    fraction : numpy.ndarray
        ``(M, M, G)``: ``fraction[m, r - 1, g]`` = share of the units on which method ``m``
        has rank ``r`` after run ``runs[g]``; sums to 1 over axis 1.
    mode : numpy.ndarray
        ``(M, G)`` int, the most frequent rank (the better rank on ties).
    n_units : int
        Number of (task, repetition) units.
    """

    methods: tuple[str, ...]
    runs: np.ndarray
    fraction: np.ndarray
    mode: np.ndarray
    n_units: int


def rank_distribution(ts: TraceSet, *, domain: str | None = None,
                      runs: Sequence[int] | None = None, metric: Metric = "simple"
                      ) -> RankDistribution:
    """Fraction of (task, repetition) units at each rank 1..M, and the rank mode, per method
    and training run.

    Per (task, repetition) the methods are ranked by their regret after run ``t`` (all
    methods of a repetition share its initial design, so they are paired). Ties first get
    the average rank (as everywhere in this module); for the histogram the average is then
    rounded to the nearest integer rank, halves going to the *worse* rank
    (``floor(r + 0.5)``: two methods tied for first both count as rank 2). The mode is the
    rank with the largest fraction, the better rank on ties.

    Parameters
    ----------
    ts : TraceSet
    domain : str, optional
        Domain to aggregate over (all tasks for ``None`` or ``"all"``).
    runs : sequence of int, optional
        1-based training runs (default :func:`curve_grid`).
    metric : {"simple", "cumulative", "normalized"}
        Regret to rank (simple and normalized give the same ranks).

    Returns
    -------
    RankDistribution
    """
    grid = curve_grid(ts.budget) if runs is None else np.asarray(runs, dtype=np.int64)
    if grid.ndim != 1 or grid.size == 0 or grid.min() < 1 or grid.max() > ts.budget:
        raise ValueError(f"runs must be a non-empty 1-D sequence in 1..{ts.budget} "
                         "(the budget)")
    tasks = ts.tasks_in(domain)
    if not tasks:
        raise ValueError(f"domain {domain!r}: no tasks in the trace set")
    n_m = len(ts.methods)
    arrays = ts.metric(metric)
    counts = np.zeros((n_m, n_m, grid.size))  # (M, ranks, G)
    n_units = 0
    for task in tasks:
        a = arrays[task][:, :, grid - 1]  # (M, R, G)
        r = rank_rows(np.transpose(a, (1, 0, 2)))  # (R, M, G), ties averaged
        r_int = np.clip(np.floor(r + 0.5).astype(np.int64), 1, n_m)  # (R, M, G)
        for k in range(1, n_m + 1):
            counts[:, k - 1, :] += (r_int == k).sum(axis=0)  # (M, G)
        n_units += a.shape[1]
    fraction = counts / n_units
    mode = np.argmax(fraction, axis=1) + 1  # (M, G), first maximum = better rank
    return RankDistribution(methods=ts.methods, runs=grid, fraction=fraction,
                            mode=mode.astype(np.int64), n_units=n_units)
