"""Pruned exact scoring of a point set: the best acquisition values (eq. 8) without scoring all.

The continuous argmax (:mod:`erahbo.gp.argmax`) needs, over its raw set (Sobol samples plus the
evaluated configurations), only the best point and the best ``q`` distinct points (the L-BFGS-B
starts).  Scoring every point exactly costs two ``O(n^2)`` triangular solves per point; here the
fast engine's caches give cheap *upper bounds* of eq. 8 at every point, and only the points
whose bound can still reach the ``q``-th best exact value are scored exactly, with the same
:meth:`erahbo.gp.fast.FastRound.predict` that scores all of them.  The result is exact: every
point left out has a bound below a value already found, so the best ``q`` distinct points, their
order and their values are those of the exhaustive scoring (values up to rounding: a point is
scored in a batch of other points).

The bounds (standardized scale of each GP):

* **means**: known at the evaluated configurations (``mu_fX``, ``mu_vX`` of the round), one
  kernel product elsewhere;
* **posterior variances**: conditioning on fewer data can only increase a posterior variance.
  The first ``r`` rows of the data have the first ``r`` rows of the cached Cholesky factor (and
  of ``Lv^{-1}``) as their own factor, so the variance given the first ``r`` points costs
  ``O(r^2)`` per point; an evaluated configuration beyond the first ``r`` adds its own
  observation (:func:`erahbo.gp.round.observe`, exact Gaussian conditioning).  Away from the
  data, the variance given the single most correlated point bounds it too.  The variance GP's
  variance at the evaluated configurations is known exactly (``var_vX``).
* eq. 8 is increasing in both standard deviations (every measure of :mod:`erahbo.risk` is
  increasing in ``f`` and non-increasing in ``rho^2``; for a float weight ``w < 0``, MV with a
  negative ``alpha``, the bound takes the larger of the values at the variance GP's bound and
  at 0), so
  :func:`erahbo.gp.bounds.rahbo_acquisition` at the bounds bounds it from above.  A rounding
  slack is added: ``VAR_SLACK`` to each standardized variance and a bound on the rounding of
  the two ways the means are computed.

Bounds are refined level by level (the prefix ``r`` grows four-fold up to ``n``; at ``n`` only
the evaluated configurations, whose variance GP part is known) on the points still in play,
between exact batches in decreasing order of the bound, until none left can reach the ``q``-th
best exact value.  A converged study has many evaluated configurations whose values agree to
``1e-7``: the last level and a small ``VAR_SLACK`` keep them from all being scored.  At the last
level, with more than two thirds of the rows in play, their variances are the round model's
:meth:`~erahbo.gp.fast.FastRound.var_f_rows` (one inversion of the Cholesky factor, shared with
the recommendation) instead of one solve per row.
"""

from __future__ import annotations

import math

import numpy as np
from scipy.linalg import blas

from erahbo.gp.bounds import rahbo_acquisition, to_variance
from erahbo.gp.kernels import kernel
from erahbo.risk import MeanVariance, RiskLike, as_risk

__all__ = ["VAR_SLACK", "top_points"]

VAR_SLACK = 1e-9  # added to every standardized variance bound (rounding of the exact values)
FIRST_LEVEL = 128  # rows of the first prefix bound
_EPS = np.finfo(float).eps


def top_points(
    rm,
    U: np.ndarray,
    risk: RiskLike,
    q: int,
    allowed: np.ndarray,
    known: np.ndarray | None = None,
    first_level: int = FIRST_LEVEL,
) -> tuple[np.ndarray, np.ndarray, int]:
    """Exact acquisition values on a subset of ``U`` that holds its best ``q`` distinct points.

    Parameters
    ----------
    rm : erahbo.gp.fast.FastRound
        The round's models (fast engine).
    U : numpy.ndarray
        ``(p, dim)`` points.
    risk : erahbo.risk.RiskMeasure or float
        The decision's risk measure in eq. 8 (a float: MV's ``alpha``).
    q : int
        Number of distinct best points wanted (>= 1).
    allowed : numpy.ndarray
        ``(p,)`` bool: points that may be returned (the others are never scored).
    known : numpy.ndarray or None
        ``(p,)`` int: the data row of ``rm`` each point is, -1 for none (None: all -1).
    first_level : int
        Data rows of the first prefix bound (each further level has four times as many; the
        bounds start without a prefix).

    Returns
    -------
    idx : numpy.ndarray
        ``(s,)`` ascending indices of the points scored exactly.
    vals : numpy.ndarray
        ``(s,)`` their acquisition values.  Every allowed point not in ``idx`` has a value below
        the ``q``-th best distinct value in ``vals``; fewer than ``q`` distinct allowed points:
        all of them are in ``idx``.
    n_levels : int
        Bound levels computed (a diagnostic).
    """
    U = np.asarray(U, dtype=float)
    p, n = U.shape[0], rm.n
    known = np.full(p, -1, dtype=np.intp) if known is None else np.asarray(known, np.intp)
    live = np.flatnonzero(np.asarray(allowed, dtype=bool))
    bounds = _Bounds(rm, U, known, risk)
    try:
        return _screen(rm, U, risk, q, live, bounds, min(n, max(int(first_level), 1)))
    finally:
        bounds.release()


def _screen(rm, U: np.ndarray, risk: RiskLike, q: int, live: np.ndarray, bounds: _Bounds,
            first: int) -> tuple[np.ndarray, np.ndarray, int]:
    """:func:`top_points` on the allowed points ``live`` with the bounds made for them."""
    p, n = U.shape[0], rm.n
    ub = np.full(p, np.inf)
    level = 0  # the bounds without a prefix: single rows and the Cholesky pivots
    ub[live] = bounds.at(live, level)
    levels = 1
    done_idx: list[np.ndarray] = []
    done_val: list[np.ndarray] = []
    batch = 2 * q
    tau = -np.inf
    while live.size:
        live = live[ub[live] >= tau]
        if not live.size:
            break
        nxt = min(n, 4 * level) if level else first
        if math.isinf(tau) or live.size <= batch or level >= n:
            order = live[np.lexsort((live, -ub[live]))]  # by bound, then index
            cols = np.sort(order[:batch])
            done_idx.append(cols)
            done_val.append(np.asarray(rm.acquisition(U[cols], risk), dtype=float))
            live = np.setdiff1d(live, cols, assume_unique=True)
            batch = min(2 * batch, 256)
            tau = _qth_distinct(U, np.concatenate(done_idx), np.concatenate(done_val), q)
        else:
            level = nxt
            ub[live] = np.minimum(ub[live], bounds.at(live, level))
            levels += 1
    if not done_idx:
        return np.zeros(0, dtype=np.intp), np.zeros(0), levels
    idx, vals = np.concatenate(done_idx), np.concatenate(done_val)
    o = np.argsort(idx)
    return idx[o], vals[o], levels


def _qth_distinct(U: np.ndarray, idx: np.ndarray, vals: np.ndarray, q: int) -> float:
    """Value of the ``q``-th best distinct point of ``U[idx]`` (by value, then index); -inf if
    fewer than ``q`` distinct points."""
    order = np.lexsort((idx, -vals))
    seen: list[np.ndarray] = []
    for i in order:
        u = U[idx[i]]
        if not any(np.array_equal(u, s) for s in seen):
            seen.append(u)
            if len(seen) == q:
                return float(vals[i])
    return -np.inf


class _Bounds:
    """Upper bounds of eq. 8 at points of ``U`` for one round (see the module docstring)."""

    def __init__(self, rm, U: np.ndarray, known: np.ndarray, risk: RiskLike) -> None:
        M = rm.M
        self.rm, self.U, self.known, self.w = rm, U, known, as_risk(risk)
        n = rm.n
        self.hf, self.hv = M.hf, M.hv
        p = U.shape[0]
        self.mu_f = np.empty(p)  # (p,) standardized means
        self.mu_v = np.empty(p)
        self.var_f = np.ones(p)  # (p,) best variance bounds so far
        self.var_v = np.ones(p)
        G = np.flatnonzero(known < 0)  # points away from the data rows
        K = np.flatnonzero(known >= 0)
        self.G, self.K = G, K
        self.gpos = np.full(p, -1, dtype=np.intp)
        self.gpos[G] = np.arange(G.size)
        self._borrowed: list[tuple[str, np.ndarray]] = []
        if G.size:  # the (n, g) arrays in the model's work buffers (FastModel.borrow)
            kf, kv, tmp = (self._borrow(name, (n, G.size)) for name in ("kf", "kv", "tmp"))
            UG = U[G]
            self.kf = kernel(rm.X, UG, self.hf.lengthscales, self.hf.kind, out=kf, work=tmp)
            self.kv = kernel(rm.X, UG, self.hv.lengthscales, self.hv.kind, out=kv, work=tmp)
            self.mu_f[G] = self.kf.T @ rm.af
            self.mu_v[G] = self.kv.T @ rm.av
            # the single most correlated row: var <= 1 - k_j^2 / (1 + noise_j)
            np.multiply(kf, kf, out=tmp)
            g1 = np.divide(tmp, (1.0 + rm.D)[:, None], out=tmp).max(0)
            self.var_f[G] = 1.0 - g1
            np.multiply(kv, kv, out=tmp)
            if rm.one_seed:  # per-row noise (erahbo.gp.one_seed)
                self.var_v[G] = 1.0 - np.divide(tmp, (1.0 + rm.tv)[:, None], out=tmp).max(0)
            else:
                self.var_v[G] = 1.0 - tmp.max(0) / (1.0 + rm.tau2)
        if K.size:
            rows = known[K]
            self.mu_f[K] = (M.Kf[:n, :n] @ rm.af)[rows]
            self.mu_v[K] = rm.mu_vX[rows]
            self.var_v[K] = rm.var_vX[rows]  # exact
            # given the rows before it (its pivot in the Cholesky factor: L_ss^2 = 1 + D_s -
            # the part explained by the earlier rows), then its own observation
            D = rm.D[rows]
            before = np.maximum(np.diag(rm.L)[rows] ** 2 - D, 0.0)
            self.var_f[K] = before * D / np.maximum(before + D, 1e-300)
        # rounding slack of the means (standardized): dot products of length n with kernel
        # values in (0, 1], the kernel computed two ways
        # the kernel values of two computations differ by at most ~eps * (|a|^2 + |b|^2) in
        # the scaled squared distance of unit-cube points a, b
        sq = max(float(np.sum(1.0 / np.asarray(self.hf.lengthscales) ** 2)),
                 float(np.sum(1.0 / np.asarray(self.hv.lengthscales) ** 2)), 1.0)
        g = 16.0 * (n + 4.0 * sq) * _EPS
        zv_bound = float(np.linalg.norm(rm.zv)) * math.sqrt(n * float(np.sum(rm.dAv)))
        self.slack_f = g * float(np.abs(rm.af).sum())
        self.slack_v = g * (float(np.abs(rm.av).sum()) + zv_bound)

    def _borrow(self, name: str, shape: tuple[int, int]) -> np.ndarray:
        arr = self.rm.M.borrow("screen." + name, shape)
        self._borrowed.append(("screen." + name, arr))
        return arr

    def release(self) -> None:
        """Give the work buffers back to the model (the bounds are not used after)."""
        while self._borrowed:
            self.rm.M.give_back(*self._borrowed.pop())

    def at(self, idx: np.ndarray, r: int) -> np.ndarray:
        """Upper bounds ``(len(idx),)`` of eq. 8 at ``U[idx]`` with prefix ``r`` (see module)."""
        rm, M = self.rm, self.rm.M
        gi = idx[self.known[idx] < 0]
        ki = idx[self.known[idx] >= 0]
        if gi.size and 0 < r < rm.n:  # at r = n this costs what scoring does
            cols = self.gpos[gi]
            Vf = blas.dtrsm(1.0, rm.L[:r, :r], self.kf[:r, cols], lower=1)  # (r, b)
            self.var_f[gi] = np.minimum(self.var_f[gi], 1.0 - (Vf * Vf).sum(0))
            Vv = rm.Lvi[:r, :r] @ self.kv[:r, cols]
            self.var_v[gi] = np.minimum(self.var_v[gi], 1.0 - (Vv * Vv).sum(0))
        if ki.size and r >= rm.n and 3 * ki.size > 2 * rm.n:  # most rows: all at once
            rows = self.known[ki]
            self.var_f[ki] = np.minimum(self.var_f[ki], np.maximum(rm.var_f_rows()[rows], 0.0))
        elif ki.size and r > 0:
            rows = self.known[ki]
            Vf = blas.dtrsm(1.0, rm.L[:r, :r], M.Kf[:r, rows], lower=1)
            a = np.maximum(1.0 - (Vf * Vf).sum(0), 0.0)  # var given the first r rows
            D = rm.D[rows]
            a = np.where(rows < r, a, a * D / np.maximum(a + D, 1e-300))  # + its own
            self.var_f[ki] = np.minimum(self.var_f[ki], a)
        return self._acq(idx)

    def _acq(self, idx: np.ndarray) -> np.ndarray:
        """Eq. 8 at the bounds (raw scale), with the rounding slack."""
        rm, w = self.rm, self.w
        lv = rm.log_var  # the variance GP on log rho^2: its bounds through exp
        sd_f = rm.sf * np.sqrt(np.maximum(self.var_f[idx], 0.0) + VAR_SLACK)
        sd_v = rm.sv * np.sqrt(np.maximum(self.var_v[idx], 0.0) + VAR_SLACK)
        mu_f = rm.mf + rm.sf * self.mu_f[idx]
        mu_v = rm.mv + rm.sv * self.mu_v[idx]
        bv = rm.beta_var  # eq. 8's LCB^var confidence (None: beta)
        ub = rahbo_acquisition(mu_f, sd_f, mu_v, sd_v, w, rm.beta, log_var=lv, beta_var=bv)
        if isinstance(w, MeanVariance) and w.alpha < 0:  # eq. 8 then decreases in sd_var
            ub = np.maximum(ub, rahbo_acquisition(mu_f, sd_f, mu_v, 0.0, w, rm.beta, log_var=lv,
                                                  beta_var=bv))
        if lv:  # log rho^2 moves by d = sv * slack_v: rho^2 <= e^(m + d) by at most e^d - 1 of it
            d = rm.sv * self.slack_v
            top = float(to_variance(np.max(mu_v) + d, None, True)) if idx.size else 0.0
            slack = rm.sf * self.slack_f + w.var_slack(top, math.expm1(d))
            return ub + slack + 1e-9 * (np.abs(ub) + rm.sf + w.var_slack(top, 1.0))
        # the means' rounding moves f by sf * slack_f and rho^2 by sv * slack_v
        slack = rm.sf * self.slack_f + w.var_slack(rm.sv, self.slack_v)
        return ub + slack + 1e-9 * (np.abs(ub) + rm.sf + w.var_slack(rm.sv, 1.0))
