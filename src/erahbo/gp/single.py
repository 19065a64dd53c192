"""Single-precision stand-in of a fast round: the L-BFGS-B polish's search direction at large n.

The polish (:func:`erahbo.gp.argmax.polish`) asks the round for the acquisition (eq. 8) and its
gradient at one point at a time: per GP, a forward and a backward triangular solve with the
``(n, n)`` Cholesky factor (:func:`erahbo.gp.exact.posterior_grad`).  At n = 2000 the two
factors (16 MB of lower triangle each) do not fit in the cache together, and these solves,
memory bound, are most of a round.  :class:`SingleRound` answers the same questions from
``float32`` copies of the two factors (8 MB each: both stay in the cache; the solves take a
third of the time); the kernel values, the means and every sum stay in double precision, and a
variance is ``1 - |L^{-1} k|^2`` summed in double precision.

Only the search direction changes: the ascents' end points are projected and scored by the
round model itself (:func:`erahbo.gp.argmax.continuous_argmax`), so the chosen point is still
the best, by the exact acquisition, of a candidate set that holds the best raw sample.  A
triangular solve in single precision is backward stable (the solution for a factor perturbed
by ``~ n eps_32`` relatively), so the values carry a small noise (at n = 2000 on the long-study
state: ``~1e-7`` of the acquisition's scale ``s_f + |w| s_var``, the standardizations of the two
GPs; up to ``1e-5`` near the data, where ``sd`` is small).  L-BFGS-B's default stopping test (a
relative decrease below ``2.2e-9``) then keeps stepping in that noise, 60 % more
gradients: an ascent on the stand-in ends at a decrease of :data:`POLISH_FTOL` times that scale
(:meth:`SingleRound.ftol`; the values are given less the constant ``m_f - w m_var``, so the
test's ``max(|f|, 1)`` is of the order of the scale).  The gradient is not rescaled: L-BFGS-B's
first step (the Cauchy point of an identity Hessian) depends on its size, and the double-
precision ascent's path, which the stand-in follows, is the one to keep.
"""

from __future__ import annotations

import math

import numpy as np
from scipy.linalg import blas

from erahbo.gp.bounds import to_variance
from erahbo.gp.round import RoundModel
from erahbo.risk import RiskLike, as_risk

__all__ = ["POLISH_FTOL", "SingleRound"]

# An ascent on the stand-in ends at a decrease below this times the acquisition's scale, above
# the single-precision noise. On the long-study states of benchmarks/local_polish_probe.py
# (n = 1000, 2000; 88 rounds, fixed and in studies) it takes about the gradients of the
# double-precision ascent (n = 2000: 134 a round; L-BFGS-B's default test: 208) and keeps at
# least 0.99995 of its gain. Looser tests stop some ascents early, at a single short step:
# 1e-6 and 1e-5 (10 and 20 % fewer gradients) lost a third of the gain in one round of 88.
POLISH_FTOL = 3e-7
_SQRT5 = math.sqrt(5.0)


class SingleRound(RoundModel):
    """The acquisition (less a constant) and its gradient of a fast round
    (:class:`erahbo.gp.fast.FastRound`) from single-precision copies of its Cholesky factors
    (see the module docstring).

    Parameters
    ----------
    rm : erahbo.gp.fast.FastRound
        The round (its standardizations, ``beta``, data rows and factors are read; the copies
        are the stand-in's own).
    """

    def __init__(self, rm) -> None:
        M, n = rm.M, rm.n
        self.n, self.beta, self.beta_var = n, rm.beta, rm.beta_var
        self.mf, self.sf, self.mv, self.sv = rm.mf, rm.sf, rm.mv, rm.sv
        self.log_var = rm.log_var  # the variance GP on log rho^2 (var_noise "log")
        Lv = M.Lv[:n, :n] if not M.m else rm._lv()  # a table keeps no Lv
        self._gps = (
            _GP(M.Xf[:n], M.ls_f, M.hf.kind, rm.L, rm.af),
            _GP(M.Xv[:n], M.ls_v, M.hv.kind, Lv, rm.av),
        )

    def acquisition_grad(self, u: np.ndarray, risk: RiskLike) -> tuple[float, np.ndarray]:
        """``eq. 8 - risk.value(m_f, m_var)`` (MV: ``m_f - alpha m_var``) at ``u (dim,)`` and
        its gradient ``(dim,)`` (see the module docstring)."""
        val, grad = super().acquisition_grad(u, risk)
        return val - as_risk(risk).value(self.mf, to_variance(self.mv, None, self.log_var)), grad

    def ftol(self, risk: RiskLike) -> float:
        """L-BFGS-B's ``ftol`` that ends an ascent on these values at a decrease of about
        :data:`POLISH_FTOL` times the acquisition's scale ``s_f + |alpha| s_var`` (another
        measure: its change for a change ``s_var`` of ``rho^2``)."""
        return POLISH_FTOL * min(1.0, self.sf + as_risk(risk).var_slack(self.var_unit, 1.0))

    def _grad_f(self, u: np.ndarray):
        """See :meth:`erahbo.gp.round.RoundModel._grads` (single-precision solves)."""
        return self._gps[0].grad(u)

    def _grad_v(self, u: np.ndarray):
        """See :meth:`erahbo.gp.round.RoundModel._grads` (single-precision solves)."""
        return self._gps[1].grad(u)


class _GP:
    """One GP's posterior mean and variance with their gradients at a point (standardized).

    Parameters
    ----------
    Xs : numpy.ndarray
        ``(n, d)`` data rows divided by the lengthscales.
    ls : numpy.ndarray
        ``(d,)`` lengthscales.
    kind : {"rbf", "matern52"}
    L : numpy.ndarray
        ``(n, n)`` lower Cholesky factor of the GP's ``k(X, X) + diag(noise)`` (any memory
        order; copied in single precision).
    alpha : numpy.ndarray
        ``(n,)`` ``(k(X, X) + diag(noise))^{-1} y``.
    """

    def __init__(self, Xs: np.ndarray, ls: np.ndarray, kind: str, L: np.ndarray,
                 alpha: np.ndarray) -> None:
        self.Xs, self.kind, self.alpha = Xs, kind, alpha
        self.ls = np.asarray(ls, dtype=float)
        # copied in the memory order it has (a transposing copy costs ten times as much): a
        # row-major L is handed to BLAS as the column-major upper factor L^T
        self.lower = L.strides[0] < L.strides[1]
        L32 = L.astype(np.float32, order="F" if self.lower else "C")
        self.T = L32 if self.lower else L32.T  # (n, n) column-major: L, or L^T

    def grad(self, u: np.ndarray) -> tuple[float, float, np.ndarray, np.ndarray]:
        """``(mean, var, dmean (d,), dvar (d,))`` at ``u (d,)``, as
        :func:`erahbo.gp.exact.posterior_grad` gives them (up to the single-precision
        solves)."""
        diff = u / self.ls - self.Xs  # (n, d) scaled differences
        d2 = np.einsum("ij,ij->i", diff, diff)  # (n,)
        if self.kind == "rbf":
            k = np.exp(-0.5 * d2)
            g = k  # dk/dx = -g * diff / ls
        else:  # Matern 5/2
            r = np.sqrt(d2)
            e = np.exp(-_SQRT5 * r)
            k = (1.0 + _SQRT5 * r + (5.0 / 3.0) * d2) * e
            g = (5.0 / 3.0) * (1.0 + _SQRT5 * r) * e
        lo = int(self.lower)  # T = L: solve with T; T = L^T: with T^T
        v = blas.strsv(self.T, k.astype(np.float32), lower=lo, trans=1 - lo)  # L^{-1} k
        w = blas.strsv(self.T, v, lower=lo, trans=lo)  # K^{-1} k = L^{-T} v
        v64 = v.astype(float)
        dmean = -((g * self.alpha) @ diff) / self.ls
        dvar = 2.0 * ((g * w) @ diff) / self.ls  # -2 dk^T K^{-1} k
        return float(k @ self.alpha), max(1.0 - float(v64 @ v64), 0.0), dmean, dvar
