"""Outcome processing: OSS Vizier's default output warping (Song et al., 2024).

The paper preprocesses every task with the outcome processing of OSS Vizier and then uses
``alpha = 1`` in ``MV(x) = f(x) - alpha * rho^2(x)`` (eq. 1). This module reimplements
Vizier's ``create_default_warper()`` pipeline (labels in the maximize convention):

0. ``+inf`` is an error, ``-inf`` becomes NaN. One unique finite value and no NaN -> zeros;
   all NaN -> -1s.
1. HalfRank: with ``m = nanmedian(y)``, the unique finite values ``U`` (sorted), the dense
   rank ``r_i`` of ``y_i`` in ``U`` (1 = worst), ``j = #{u < m}`` and
   ``den = j + 0.5 [U_j = m]``, every finite ``y_i < m`` becomes
   ``m + sigma * PhiInv(0.5 (r_i - 0.5) / den)``, where ``sigma`` is the RMS distance to
   ``m`` of the unique values ``>= m`` (of all of ``U`` if that is 0; the mean absolute
   distance if not finite). Values ``>= m`` are unchanged. Skipped when ``n = 1``.
2. LogWarp (offset ``c = 1.5``): ``y <- 0.5 - ln(1 + (c - 1)(hi - y)/(hi - lo)) / ln c``;
   the best value maps to 0.5, the worst to -0.5.
3. InfeasibleWarp: ``b = lo - (0.5 (hi - lo) + 1)``, ``p = (0.5 + n_feasible)/(1 + n)``,
   ``s = -p * mean(y_feasible) - (1 - p) b``; NaN -> ``b``, then ``+ s`` everywhere.

Where it applies
----------------
:func:`process_outcomes` fits ONE warp per task on all of its per-seed returns, flattened
(``N * S`` values), and replaces every return by its warped value. Sample means, sample
variances, the GP models and the MV regret are then all computed on that warped scale;
the optimizer and the regret computation must use the same processed table. Filter
infeasible configurations first (:func:`erahbo.datasets.validate.validate_task`): after
warping, a failed run is a finite number (below the worst feasible return) and can no
longer be told apart.

Deviation from Vizier, documented: one unique finite value *with* NaNs makes Vizier's
LogWarp divide 0 by 0 (everything ends up 0); here the feasible values map to the best
warped value 0.5 instead, and infeasible warping proceeds as usual.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, Literal

import numpy as np
from scipy import stats

from erahbo.datasets.format import TaskData

LOG_WARP_OFFSET = 1.5
METHODS = ("none", "vizier", "minmax")


@dataclass
class VizierWarper:
    """Vizier's default output warper, fitted once and then applied.

    ``fit`` stores what the three steps need; ``transform`` applies them to any values
    (new values below the median are mapped by piecewise-linear interpolation of the
    fitted half-rank map, extrapolated linearly below the worst fitted value; values above
    the fitted best continue the log warp linearly), so the map stays monotone.
    ``fit_transform(y)`` equals Vizier's ``warp(y)``.

    >>> w = VizierWarper().fit(np.array([1.0, 2.0, 3.0, np.nan]))
    >>> z = w.transform(np.array([1.0, 2.0, 3.0, np.nan]))   # z[3] < z[0] < z[1] < z[2]
    """

    offset: float = LOG_WARP_OFFSET
    # fitted state
    mode_: str | None = None  # "warp", "constant" (one unique value) or "all_nan"
    median_: float = np.nan
    sigma_: float = np.nan
    knots_x_: np.ndarray | None = None  # (u,) unique finite values below the median
    knots_z_: np.ndarray | None = None  # (u,) their half-rank images
    lo_: float = np.nan  # min / max after half-rank (log-warp range)
    hi_: float = np.nan
    bad_: float = np.nan  # value given to NaN before the shift
    shift_: float = 0.0

    def fit(self, y: np.ndarray) -> VizierWarper:
        """Fit on all values ``y`` (any shape; flattened). NaN marks a failed run."""
        y = _clean(y)
        self.mode_ = "warp"
        finite = np.isfinite(y)
        if finite.all() and np.unique(y).size == 1:
            self.mode_ = "constant"
            return self
        if not finite.any():
            self.mode_ = "all_nan"
            return self
        self._fit_half_rank(y)
        h = self._half_rank(y)
        self.lo_, self.hi_ = float(np.nanmin(h)), float(np.nanmax(h))
        z = self._log_warp(h)
        self.bad_ = float(np.nanmin(z) - (0.5 * (np.nanmax(z) - np.nanmin(z)) + 1.0))
        p = (0.5 + finite.sum()) / (1.0 + y.size)
        self.shift_ = float(-p * np.nanmean(z) - (1.0 - p) * self.bad_)
        return self

    def transform(self, y: np.ndarray) -> np.ndarray:
        """Warp ``y`` (same shape back) with the fitted parameters."""
        if self.mode_ is None:
            raise ValueError("VizierWarper: call fit() before transform().")
        y = np.asarray(y, dtype=float)
        shape = y.shape
        y = _clean(y)
        if self.mode_ == "constant":
            return np.zeros(shape)
        if self.mode_ == "all_nan":
            return -np.ones(shape)
        z = self._log_warp(self._half_rank(y))
        z = np.where(np.isnan(z), self.bad_, z) + self.shift_
        return z.reshape(shape)

    def fit_transform(self, y: np.ndarray) -> np.ndarray:
        """``fit(y)`` then ``transform(y)``."""
        return self.fit(y).transform(y)

    def params(self) -> dict[str, Any]:
        """The fitted parameters, JSON-friendly (recorded in task metadata)."""
        return {
            "offset": self.offset,
            "mode": self.mode_,
            "median": _f(self.median_),
            "sigma": _f(self.sigma_),
            "log_lo": _f(self.lo_),
            "log_hi": _f(self.hi_),
            "infeasible_value": _f(self.bad_),
            "shift": _f(self.shift_),
        }

    # -- steps ----------------------------------------------------------------------
    def _fit_half_rank(self, y: np.ndarray) -> None:
        uniq = np.unique(y[np.isfinite(y)])  # (u,) sorted
        m = float(np.nanmedian(y))
        self.median_ = m
        if y.size == 1:  # Vizier skips half-rank for a single value
            self.sigma_ = np.nan
            self.knots_x_ = self.knots_z_ = np.empty(0)
            return
        j = int(np.searchsorted(uniq, m, side="left"))
        den = j + 0.5 * float(j < uniq.size and uniq[j] == m)
        self.sigma_ = _good_half_std(uniq, m)
        below = uniq[uniq < m]  # (j,) dense ranks 1..j
        ranks = np.arange(1, below.size + 1, dtype=float)
        self.knots_x_ = below
        self.knots_z_ = m + self.sigma_ * stats.norm.ppf(0.5 * (ranks - 0.5) / den)

    def _half_rank(self, y: np.ndarray) -> np.ndarray:
        out = y.copy()
        xk, zk = self.knots_x_, self.knots_z_
        if xk is None or xk.size == 0:
            return out
        low = np.isfinite(y) & (y < self.median_)
        v = y[low]
        # Interpolate between fitted knots, and from the last knot up to the median
        # (identity there); below the worst knot extrapolate with the first segment's slope.
        kx = np.append(xk, self.median_)
        kz = np.append(zk, self.median_)
        res = np.interp(v, kx, kz)
        under = v < kx[0]
        if under.any():
            slope = (kz[1] - kz[0]) / (kx[1] - kx[0]) if kx.size > 1 else 1.0
            res[under] = kz[0] + slope * (v[under] - kx[0])
        out[low] = res
        return out

    def _log_warp(self, h: np.ndarray) -> np.ndarray:
        span = self.hi_ - self.lo_
        if span <= 0:  # one unique feasible value among NaNs (see module docstring)
            return np.where(np.isnan(h), np.nan, 0.5)
        c = self.offset
        below = np.minimum(h, self.hi_)  # new values above the fitted max: linear, slope at hi
        z = 0.5 - np.log1p((c - 1.0) * (self.hi_ - below) / span) / np.log(c)
        return z + np.maximum(h - self.hi_, 0.0) * (c - 1.0) / (span * np.log(c))


def vizier_warp(y: np.ndarray) -> np.ndarray:
    """Vizier's default warping of ``y`` (fitted on ``y`` itself); same shape back."""
    return VizierWarper().fit_transform(y)


def process_outcomes(
    task: TaskData, method: Literal["none", "vizier", "minmax"] | str = "none"
) -> TaskData:
    """Return ``task`` with its returns processed by ``method``.

    Parameters
    ----------
    task : TaskData
        Usually already filtered by :func:`erahbo.datasets.validate.validate_task`.
    method : {"none", "vizier", "minmax"}
        ``"none"`` keeps the raw returns; ``"vizier"`` fits one :class:`VizierWarper` on
        all ``N * S`` returns of the task and applies it (the paper, with alpha = 1);
        ``"minmax"`` maps the task's finite returns linearly onto [0, 1] (beyond the paper:
        scale-free like Vizier's, but it keeps the distances between returns, so it does not
        stretch the top of a capped range the way the log warp does; see data/README.md).

    Returns
    -------
    TaskData
        A new task; ``meta["outcome_processing"]`` records the method, where it was fitted
        and the fitted parameters.
    """
    if method not in METHODS:
        raise ValueError(f"outcome processing {method!r} is unknown; use one of {list(METHODS)}.")
    prev = task.meta.get("outcome_processing", {})
    if isinstance(prev, dict) and prev.get("method", "none") != "none":
        raise ValueError(
            f"{task.name}: returns were already processed with {prev.get('method')!r}; "
            f"load the raw task instead of processing twice."
        )
    meta = dict(task.meta)
    if method == "none":
        meta["outcome_processing"] = {"method": "none"}
        return replace(task, meta=meta)
    returns = np.asarray(task.returns, dtype=float)  # (n, S)
    if method == "minmax":
        finite = returns[np.isfinite(returns)]
        lo, hi = (float(finite.min()), float(finite.max())) if finite.size else (0.0, 1.0)
        width = hi - lo if hi > lo else 1.0  # constant returns: all 0
        meta["outcome_processing"] = {"method": "minmax", "low": lo, "high": hi,
                                      "fitted_on": "all per-seed returns of the task"}
        return replace(task, returns=(returns - lo) / width, meta=meta)
    warper = VizierWarper().fit(returns)
    meta["outcome_processing"] = {
        "method": "vizier",
        "fitted_on": "all per-seed returns of the task, flattened",
        "n_values": int(returns.size),
        "n_nan_values": int(np.isnan(returns).sum()),
        "params": warper.params(),
    }
    return replace(task, returns=warper.transform(returns), meta=meta)


def _clean(y: np.ndarray) -> np.ndarray:
    y = np.array(y, dtype=float).ravel()
    if np.isposinf(y).any():
        raise ValueError("outcome warping: +inf return(s); use NaN for a failed run.")
    y[np.isneginf(y)] = np.nan
    return y


def _good_half_std(uniq: np.ndarray, m: float) -> float:
    good = uniq[uniq >= m]
    sd = float(np.sqrt(np.mean((good - m) ** 2)))
    if sd > 0:
        return sd
    sd = float(np.sqrt(np.mean((uniq - m) ** 2)))
    if np.isfinite(sd):
        return sd
    return float(np.mean(np.abs(uniq - m)))


def _f(x: float) -> float | None:
    return None if x is None or not np.isfinite(x) else float(x)
