"""IQM curves with bootstrap confidence intervals, checkpoints and threshold crossings.

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
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np
import pandas as pd
from scipy import stats as sps

from erahbo.analysis.traces import Metric, TraceSet, sort_methods

Backend = Literal["auto", "rliable", "numpy"]
THRESHOLDS: tuple[float, ...] = (0.75, 0.5, 0.25)
_BOOT_CHUNK_BYTES = 32 * 2**20


def standard_error(x: np.ndarray, axis: int = 0) -> np.ndarray:
    """Standard error ``std(ddof=1) / sqrt(n)`` along ``axis``; NaN where ``n < 2``."""
    x = np.asarray(x, dtype=np.float64)
    n = x.shape[axis]
    if n < 2:
        return np.full(np.delete(np.array(x.shape), axis), np.nan)
    return np.std(x, axis=axis, ddof=1) / np.sqrt(n)


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


def paired_iqm_difference(
    a: np.ndarray, b: np.ndarray, *, reps: int = 2000, confidence: float = 0.95, seed: int = 0,
) -> IntervalEstimate:
    """IQM of ``a`` minus IQM of ``b`` on paired runs, with a stratified-bootstrap interval
    that draws the same runs for both (the "no worse" test of a change: the interval
    includes 0 or lies below it, for regret).

    Parameters
    ----------
    a, b : numpy.ndarray
        ``(R, K)`` or ``(R, K, G)`` of the same shape: run ``r`` of task ``k`` of ``a`` is
        paired with run ``r`` of task ``k`` of ``b`` (e.g. the same repetition seed).
    reps, confidence, seed
        As in :func:`stratified_bootstrap_iqm`.

    Returns
    -------
    IntervalEstimate
        ``(G,)`` arrays (``(1,)`` for 2-D input); backend ``"numpy"``.
    """
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    if a.shape != b.shape:
        raise ValueError(f"paired scores must have the same shape, got {a.shape} and {b.shape}")
    if a.ndim == 2:
        a, b = a[:, :, None], b[:, :, None]
    if a.ndim != 3 or min(a.shape) < 1:
        raise ValueError(f"scores must be (runs, tasks[, points]) with no empty axis, got "
                         f"shape {a.shape}")
    if not (np.all(np.isfinite(a)) and np.all(np.isfinite(b))):
        raise ValueError("scores contain NaN or inf; filter them before the bootstrap")
    rng = np.random.default_rng(seed)
    n_runs, n_tasks, n_points = a.shape
    task_idx = np.arange(n_tasks)[None, None, :]  # (1, 1, K)
    chunk = max(1, _BOOT_CHUNK_BYTES // (16 * a.size))
    boots, done = [], 0
    while done < reps:
        n = min(chunk, int(reps) - done)
        idx = rng.integers(0, n_runs, size=(n, n_runs, n_tasks))  # (n, R, K)
        da = sps.trim_mean(a[idx, task_idx].reshape(n, -1, n_points), 0.25, axis=1)
        db = sps.trim_mean(b[idx, task_idx].reshape(n, -1, n_points), 0.25, axis=1)
        boots.append(da - db)  # (n, G)
        done += n
    allb = np.concatenate(boots, axis=0)  # (reps, G)
    tail = 100 * (1 - confidence) / 2
    lo, hi = np.percentile(allb, [tail, 100 - tail], axis=0)
    return IntervalEstimate(point=_iqm_per_point(a) - _iqm_per_point(b), lo=lo, hi=hi,
                            backend="numpy")


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
                "se": float(standard_error(v)) if v.size > 1 else np.nan,
                "count": int(wide[m].notna().sum()),
            })
    return pd.DataFrame(rows)
