"""Statistics of the paper's report (Section 4, Appendix C) over a :class:`TraceSet`.

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

IQM and confidence intervals
----------------------------
IQM = 25 % trimmed mean over all runs x tasks (rliable's ``aggregate_iqm``); 95 %
percentile intervals from the stratified bootstrap (runs resampled with replacement
inside each task). Two implementations of the same estimator (``backend``):

* ``"numpy"`` (default): vectorised, seeded by a ``numpy.random.Generator``; a bootstrap
  sample resamples whole curves (one draw of runs per task for all grid points), which
  gives the same per-point distribution as rliable.
* ``"rliable"``: ``rliable.library.get_interval_estimates``. It draws from NumPy's global
  generator (its ``random_state`` is not used), so it is seeded here and the global state
  restored; it loops over replications in Python (2-30x slower), and rliable 1.2 cannot
  be imported with pandas 3 (its dependency arch 7.2 breaks), see :func:`rliable_available`.

The two agree to Monte-Carlo error (tests compare them when rliable imports).
"""

from __future__ import annotations

import functools
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
import pandas as pd
from scipy import stats as sps

from erahbo.analysis.traces import Metric, TraceSet, sort_methods

Unit = Literal["task", "repetition"]
Backend = Literal["auto", "rliable", "numpy"]
THRESHOLDS: tuple[float, ...] = (0.75, 0.5, 0.25)
_BOOT_CHUNK_BYTES = 32 * 2**20


# --------------------------------------------------------------------------- small helpers


def _check_unit(unit: str) -> None:
    if unit not in ("task", "repetition"):
        raise ValueError(f"unit must be 'task' or 'repetition', got {unit!r}")


def _se(x: np.ndarray, axis: int = 0) -> np.ndarray:
    """Standard error ``std(ddof=1) / sqrt(n)`` along ``axis``; NaN where ``n < 2``."""
    x = np.asarray(x, dtype=np.float64)
    n = x.shape[axis]
    if n < 2:
        return np.full(np.delete(np.array(x.shape), axis), np.nan)
    return np.std(x, axis=axis, ddof=1) / np.sqrt(n)


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
        "se": _se(ranks, axis=0),
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
    return RankOverTime(methods=ts.methods, mean=r.mean(axis=0), se=_se(r, axis=0),
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


# --------------------------------------------------------------------------- IQM + bootstrap


def iqm(x: np.ndarray, axis: int | None = None) -> np.ndarray | float:
    """Interquartile mean: the 25 % trimmed mean (``scipy.stats.trim_mean(x, 0.25)``).

    With ``axis=None`` all values are pooled, as rliable's ``aggregate_iqm`` over
    runs x tasks.
    """
    x = np.asarray(x, dtype=np.float64)
    if axis is None:
        return float(sps.trim_mean(x.ravel(), 0.25))
    return sps.trim_mean(x, 0.25, axis=axis)


def _iqm_per_point(scores: np.ndarray) -> np.ndarray:
    """``(R, K, G)`` -> ``(G,)`` IQM over runs x tasks at every grid point."""
    return sps.trim_mean(scores.reshape(-1, scores.shape[-1]), 0.25, axis=0)


@functools.lru_cache(maxsize=1)
def rliable_available() -> bool:
    """Whether ``rliable.library`` imports and runs here (it needs a working ``arch``)."""
    try:
        from rliable import library
    except Exception:  # e.g. arch 7 with pandas 3 raises TypeError at import
        return False
    state = np.random.get_state()  # noqa: NPY002 (rliable uses the global RNG)
    try:
        library.get_interval_estimates({"x": np.ones((2, 1, 1))}, _iqm_per_point, reps=2)
    except Exception:
        return False
    finally:
        np.random.set_state(state)  # noqa: NPY002
    return True


def resolve_backend(backend: Backend = "numpy") -> str:
    """``"rliable"`` or ``"numpy"``: the bootstrap implementation that will be used."""
    if backend not in ("auto", "rliable", "numpy"):
        raise ValueError(f"backend must be 'auto', 'rliable' or 'numpy', got {backend!r}")
    if backend == "auto":
        return "rliable" if rliable_available() else "numpy"
    if backend == "rliable" and not rliable_available():
        raise ValueError("backend='rliable' but rliable.library cannot be imported here "
                         "(it needs a working 'arch'); use backend='numpy' or 'auto'")
    return backend


@dataclass
class IntervalEstimate:
    """IQM point estimate and percentile bootstrap interval at each grid point.

    Attributes
    ----------
    point, lo, hi : numpy.ndarray
        ``(G,)``.
    backend : str
        ``"rliable"`` or ``"numpy"``.
    """

    point: np.ndarray
    lo: np.ndarray
    hi: np.ndarray
    backend: str


def stratified_bootstrap_iqm(
    scores: np.ndarray, *, reps: int = 2000, confidence: float = 0.95, seed: int = 0,
    backend: Backend = "numpy",
) -> IntervalEstimate:
    """IQM with a stratified-bootstrap percentile confidence interval (rliable style).

    Parameters
    ----------
    scores : numpy.ndarray
        ``(R, K)`` or ``(R, K, G)``: runs x tasks (x grid points). Runs are resampled
        with replacement inside each task.
    reps : int
        Bootstrap replications.
    confidence : float
        Coverage of the interval.
    seed : int
        Seed of the resampling (rliable draws from NumPy's global generator, which is
        seeded here and restored afterwards).
    backend : {"numpy", "rliable", "auto"}
        Implementation (module docstring); ``"auto"`` = rliable when it imports.

    Returns
    -------
    IntervalEstimate
        ``(G,)`` arrays (``(1,)`` for 2-D input).
    """
    scores = np.asarray(scores, dtype=np.float64)
    if scores.ndim == 2:
        scores = scores[:, :, None]
    if scores.ndim != 3 or min(scores.shape) < 1:
        raise ValueError(f"scores must be (runs, tasks[, points]) with no empty axis, got "
                         f"shape {scores.shape}")
    if not np.all(np.isfinite(scores)):
        raise ValueError("scores contain NaN or inf; filter them before the bootstrap")
    if int(reps) < 1:
        raise ValueError(f"reps must be a positive integer, got {reps}")
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must lie in (0, 1), got {confidence}")
    which = resolve_backend(backend)
    point = _iqm_per_point(scores)  # (G,)
    if which == "rliable":
        from rliable import library

        state = np.random.get_state()  # noqa: NPY002 (rliable uses the global RNG)
        try:
            np.random.seed(int(seed) % 2**32)  # noqa: NPY002
            _, ci = library.get_interval_estimates(
                {"x": scores}, _iqm_per_point, reps=int(reps),
                confidence_interval_size=confidence)
        finally:
            np.random.set_state(state)  # noqa: NPY002
        lo, hi = np.asarray(ci["x"][0], dtype=float), np.asarray(ci["x"][1], dtype=float)
        return IntervalEstimate(point=point, lo=lo, hi=hi, backend="rliable")

    rng = np.random.default_rng(seed)
    n_runs, n_tasks, n_points = scores.shape
    chunk = max(1, _BOOT_CHUNK_BYTES // (8 * scores.size))
    task_idx = np.arange(n_tasks)[None, None, :]  # (1, 1, K)
    boots = []
    done = 0
    while done < reps:
        b = min(chunk, int(reps) - done)
        idx = rng.integers(0, n_runs, size=(b, n_runs, n_tasks))  # (b, R, K)
        sample = scores[idx, task_idx]  # (b, R, K, G)
        boots.append(sps.trim_mean(sample.reshape(b, -1, n_points), 0.25, axis=1))  # (b, G)
        done += b
    allb = np.concatenate(boots, axis=0)  # (reps, G)
    tail = 100 * (1 - confidence) / 2
    lo, hi = np.percentile(allb, [tail, 100 - tail], axis=0)
    return IntervalEstimate(point=point, lo=lo, hi=hi, backend="numpy")


def curve_grid(budget: int, n_points: int = 150) -> np.ndarray:
    """About ``n_points`` log-spaced training runs in ``1..budget`` (always with 1 and
    ``budget``), the grid on which CI bands are computed."""
    if budget < 1:
        raise ValueError(f"budget must be >= 1, got {budget}")
    g = np.unique(np.round(np.geomspace(1, budget, max(2, n_points))).astype(np.int64))
    return np.unique(np.concatenate([[1], g, [budget]]))


def default_checkpoints(budget: int) -> list[int]:
    """Budget checkpoints for section 6: 5 %, 12.5 %, 25 %, 50 % and 100 % of the budget
    (100, 250, 500, 1000, 2000 for the paper's 2000)."""
    pts = {max(1, round(budget * f)) for f in (0.05, 0.125, 0.25, 0.5, 1.0)}
    return sorted(pts)


def _stack(ts: TraceSet, tasks: Sequence[str], metric: Metric, t_idx: np.ndarray,
           notes: list[str] | None = None) -> np.ndarray:
    """``(M, R_min, K, G)`` scores of the given tasks (first ``R_min`` repetitions)."""
    arrays = ts.metric(metric)
    r_min = min(arrays[t].shape[1] for t in tasks)
    if notes is not None and any(arrays[t].shape[1] != r_min for t in tasks):
        notes.append(f"IQM over {list(tasks)}: using the first {r_min} repetitions of each "
                     "task (stratified bootstrap needs equal counts)")
    return np.stack([arrays[t][:, :r_min][:, :, t_idx] for t in tasks], axis=2)


def iqm_curves(
    ts: TraceSet, *, by: Literal["domain", "task"] = "domain",
    runs: Sequence[int] | None = None, metric: Metric = "normalized", reps: int = 2000,
    confidence: float = 0.95, seed: int = 0, backend: Backend = "numpy",
    include_all: bool = True, notes: list[str] | None = None,
) -> pd.DataFrame:
    """IQM normalized regret with stratified-bootstrap CIs per domain or per task.

    Parameters
    ----------
    ts : TraceSet
    by : {"domain", "task"}
        Group over which runs x tasks are pooled.
    runs : sequence of int, optional
        1-based grid points (default :func:`curve_grid`).
    metric : {"normalized", "simple", "cumulative"}
    reps, confidence, seed, backend
        See :func:`stratified_bootstrap_iqm`; each (group, method) gets its own seed
        derived from ``seed``.
    include_all : bool
        With ``by="domain"``, also a group ``"all"`` over every task.
    notes : list of str, optional
        Remarks are appended here.

    Returns
    -------
    pandas.DataFrame
        Columns group, method, run, iqm, lo, hi.
    """
    if by not in ("domain", "task"):
        raise ValueError(f"by must be 'domain' or 'task', got {by!r}")
    grid = curve_grid(ts.budget) if runs is None else np.asarray(runs, dtype=np.int64)
    if grid.size == 0 or grid.min() < 1 or grid.max() > ts.budget:
        raise ValueError(f"runs must be non-empty and lie in 1..{ts.budget}")
    t_idx = grid - 1
    if by == "domain":
        groups = {d: ts.tasks_in(d) for d in ts.domain_list}
        if include_all:
            groups["all"] = list(ts.tasks)
    else:
        groups = {t: [t] for t in ts.tasks}
    parts = []
    seeds = np.random.SeedSequence(seed).spawn(len(groups) * len(ts.methods))
    for gi, (group, tasks) in enumerate(groups.items()):
        stacked = _stack(ts, tasks, metric, t_idx, notes)  # (M, R, K, G)
        for mi, method in enumerate(ts.methods):
            s = int(seeds[gi * len(ts.methods) + mi].generate_state(1)[0])
            est = stratified_bootstrap_iqm(stacked[mi], reps=reps, confidence=confidence,
                                           seed=s, backend=backend)
            parts.append(pd.DataFrame({"group": group, "method": method, "run": grid,
                                       "iqm": est.point, "lo": est.lo, "hi": est.hi}))
    return pd.concat(parts, ignore_index=True)


def checkpoint_regret(ts: TraceSet, checkpoints: Sequence[int] | None = None, *,
                      reps: int = 2000, confidence: float = 0.95, seed: int = 0,
                      backend: Backend = "numpy") -> pd.DataFrame:
    """IQM normalized regret (with CI) at budget checkpoints, per domain and over all tasks.

    Returns
    -------
    pandas.DataFrame
        Columns group, method, checkpoint, iqm, lo, hi.
    """
    cps = default_checkpoints(ts.budget) if checkpoints is None else sorted(
        {int(c) for c in checkpoints})
    bad = [c for c in cps if not 1 <= c <= ts.budget]
    if bad:
        raise ValueError(f"checkpoints {bad} lie outside 1..{ts.budget} (the budget)")
    df = iqm_curves(ts, by="domain", runs=cps, reps=reps, confidence=confidence, seed=seed,
                    backend=backend)
    return df.rename(columns={"run": "checkpoint"})


# --------------------------------------------------------------------------- thresholds


def first_crossing(curve: np.ndarray, threshold: float) -> int | None:
    """First 1-based run where ``curve`` drops below ``threshold``; ``None`` if never.

    Parameters
    ----------
    curve : numpy.ndarray
        ``(T,)`` value after run ``t`` at index ``t - 1``.
    """
    below = np.asarray(curve) < threshold
    return int(np.argmax(below)) + 1 if below.any() else None


def iqm_point_curves(ts: TraceSet, task: str) -> np.ndarray:
    """``(M, T)`` IQM over repetitions of the normalized regret of one task (no CI)."""
    return sps.trim_mean(ts.normalized_regret[task], 0.25, axis=1)


def threshold_crossing(ts: TraceSet, thresholds: Sequence[float] = THRESHOLDS
                       ) -> pd.DataFrame:
    """First training run where the IQM normalized regret of a task drops below each
    threshold (paper: 75 %, 50 %, 25 % of the initial design's regret).

    Returns
    -------
    pandas.DataFrame
        Columns task, domain, method, threshold, run (float; NaN = not reached).
    """
    rows = []
    for task in ts.tasks:
        curves = iqm_point_curves(ts, task)  # (M, T)
        for mi, method in enumerate(ts.methods):
            for thr in thresholds:
                r = first_crossing(curves[mi], float(thr))
                rows.append({"task": task, "domain": ts.domains[task], "method": method,
                             "threshold": float(thr), "run": np.nan if r is None else r})
    return pd.DataFrame(rows)


def threshold_aggregate(crossing: pd.DataFrame, methods: Sequence[str] | None = None
                        ) -> pd.DataFrame:
    """Mean ± SE crossing run over the tasks where *all* methods reach the threshold.

    Parameters
    ----------
    crossing : pandas.DataFrame
        Output of :func:`threshold_crossing`.
    methods : sequence of str, optional
        Method order (default: display order of those present).

    Returns
    -------
    pandas.DataFrame
        Columns threshold, n_common, method, mean, se, count (tasks where that method
        reaches the threshold, the paper's number in brackets).
    """
    methods = list(methods) if methods is not None else sort_methods(crossing["method"])
    rows = []
    for thr in sorted(crossing["threshold"].unique(), reverse=True):
        sub = crossing[crossing["threshold"] == thr]
        wide = sub.pivot(index="task", columns="method", values="run")[methods]  # (tasks, M)
        common = wide.dropna(axis=0, how="any")
        for m in methods:
            v = common[m].to_numpy(dtype=float)
            rows.append({
                "threshold": float(thr), "n_common": len(common), "method": m,
                "mean": float(v.mean()) if v.size else np.nan,
                "se": float(_se(v)) if v.size > 1 else np.nan,
                "count": int(wide[m].notna().sum()),
            })
    return pd.DataFrame(rows)


# --------------------------------------------------------------------------- seed counts


def seed_count_distribution(rounds: pd.DataFrame, methods: Sequence[str] | None = None
                            ) -> pd.DataFrame:
    """Histogram data of k (seeds per round) for each method, pooled over tasks and
    repetitions.

    Returns
    -------
    pandas.DataFrame
        Columns method, k, n_rounds, fraction (of that method's rounds).
    """
    methods = list(methods) if methods is not None else sort_methods(rounds["method"])
    rows = []
    for m in methods:
        ks = rounds.loc[rounds["method"] == m, "k"].to_numpy(dtype=np.int64)
        if ks.size == 0:
            continue
        vals, counts = np.unique(ks, return_counts=True)
        for k, c in zip(vals, counts, strict=True):
            rows.append({"method": m, "k": int(k), "n_rounds": int(c),
                         "fraction": c / ks.size})
    return pd.DataFrame(rows, columns=["method", "k", "n_rounds", "fraction"])


def seed_count_summary(rounds: pd.DataFrame, methods: Sequence[str] | None = None
                       ) -> pd.DataFrame:
    """Per method: rounds, mean/median/quartiles of k, share of rounds rejected early
    (``stop_reason == "dominated"``: eq. 12 held) and Spearman correlation of k with the
    configuration's true MV (positive = more seeds on better configurations).

    Returns
    -------
    pandas.DataFrame
        Columns method, n_rounds, mean_k, median_k, q25_k, q75_k, max_k,
        frac_certified, spearman_k_mv.
    """
    methods = list(methods) if methods is not None else sort_methods(rounds["method"])
    rows = []
    for m in methods:
        r = rounds[rounds["method"] == m]
        if not len(r):
            continue
        k = r["k"].to_numpy(dtype=float)
        score = -r["config_norm_regret"].to_numpy(dtype=float)  # higher = better config
        rho = np.nan
        if np.ptp(k) > 0 and np.ptp(score) > 0:
            rho = float(sps.spearmanr(k, score).statistic)
        rows.append({
            "method": m, "n_rounds": len(r), "mean_k": float(k.mean()),
            "median_k": float(np.median(k)), "q25_k": float(np.percentile(k, 25)),
            "q75_k": float(np.percentile(k, 75)), "max_k": int(k.max()),
            "frac_certified": float((r["stop_reason"] == "dominated").mean()),
            "spearman_k_mv": rho,
        })
    return pd.DataFrame(rows)


def seed_count_by_task(rounds: pd.DataFrame, methods: Sequence[str] | None = None
                       ) -> pd.DataFrame:
    """Per task and adaptive method (its rounds end by the stopping rule or ``k_max``, not
    a fixed k): mean k and the share of rounds that ran to ``k_max``, pooled over
    repetitions.

    A task where most rounds run to ``k_max`` is one where the stopping rule rarely fires,
    e.g. when many configurations tie with the incumbent (``docs/results/acrobot_beta_stop``).

    Returns
    -------
    pandas.DataFrame
        Columns task, method, n_rounds, mean_k, frac_k_max; empty without adaptive methods.
    """
    cols = ["task", "method", "n_rounds", "mean_k", "frac_k_max"]
    methods = list(methods) if methods is not None else sort_methods(rounds["method"])
    rows = []
    for m in methods:
        r = rounds[rounds["method"] == m]
        if not r["stop_reason"].isin(("dominated", "k_max")).any():
            continue  # a fixed k: nothing to read per task
        for task, g in r.groupby("task", sort=True):
            rows.append({"task": task, "method": m, "n_rounds": len(g),
                         "mean_k": float(g["k"].mean()),
                         "frac_k_max": float((g["stop_reason"] == "k_max").mean())})
    return pd.DataFrame(rows, columns=cols)


def k_vs_mv(rounds: pd.DataFrame, methods: Sequence[str] | None = None, n_bins: int = 8
            ) -> pd.DataFrame:
    """Mean k per bin of the configuration's normalized MV regret
    ``(MV* - MV(x)) / init_regret`` (0 = optimal, 1 = initial design's mean).

    Bins are quantiles of the pooled values of all methods, so every method is read on
    the same bins.

    Returns
    -------
    pandas.DataFrame
        Columns method, bin, lo, hi, center (median regret in the bin), mean_k, se_k, n.
    """
    if n_bins < 1:
        raise ValueError(f"n_bins must be >= 1, got {n_bins}")
    methods = list(methods) if methods is not None else sort_methods(rounds["method"])
    cols = ["method", "bin", "lo", "hi", "center", "mean_k", "se_k", "n"]
    x_all = rounds["config_norm_regret"].to_numpy(dtype=float)
    if x_all.size == 0:
        return pd.DataFrame(columns=cols)
    edges = np.unique(np.quantile(x_all, np.linspace(0, 1, n_bins + 1)))
    if edges.size < 2:
        edges = np.array([edges[0], edges[0]])
    rows: list[dict[str, Any]] = []
    for m in methods:
        r = rounds[rounds["method"] == m]
        x = r["config_norm_regret"].to_numpy(dtype=float)
        k = r["k"].to_numpy(dtype=float)
        b = np.clip(np.searchsorted(edges, x, side="right") - 1, 0, edges.size - 2)
        for i in range(edges.size - 1):
            sel = b == i
            if not sel.any():
                continue
            rows.append({"method": m, "bin": i, "lo": edges[i], "hi": edges[i + 1],
                         "center": float(np.median(x[sel])), "mean_k": float(k[sel].mean()),
                         "se_k": float(_se(k[sel])) if sel.sum() > 1 else np.nan,
                         "n": int(sel.sum())})
    return pd.DataFrame(rows, columns=cols)
