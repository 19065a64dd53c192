"""The reference engine: plain GPs refactored for every query (the test oracle).

Same answers as the fast engine (:mod:`erahbo.gp.fast`), written the simplest way:
every query builds :class:`erahbo.gp.exact.ExactGP` objects and every bound is an
:mod:`erahbo.gp.bounds` function applied to their posteriors.
"""

from __future__ import annotations

import numpy as np
from scipy.linalg import cho_solve

from erahbo.gp.bounds import incumbent_lcb
from erahbo.gp.exact import ExactGP
from erahbo.gp.round import InnerBounds, RoundModel, RoundSettings
from erahbo.risk import RiskLike

__all__ = ["ReferenceRound"]


class ReferenceRound(RoundModel):
    """Plain implementation: builds :class:`erahbo.gp.exact.ExactGP` objects and predicts.

    Parameters
    ----------
    X : numpy.ndarray
        ``(n, dim)`` evaluated configurations ``D_{t-1}``.
    ybar, s2, k : numpy.ndarray
        ``(n,)`` pooled sample means, variances (ddof=1) and seed counts.
    settings : RoundSettings
    candidates : numpy.ndarray or None
        ``(m, dim)`` finite candidate table.
    """

    def __init__(
        self,
        X: np.ndarray,
        ybar: np.ndarray,
        s2: np.ndarray,
        k: np.ndarray,
        settings: RoundSettings,
        candidates: np.ndarray | None = None,
    ) -> None:
        self._setup_stats(ybar, s2, k, settings)
        self.X = np.array(X, dtype=float)  # (n, dim)
        self.C = candidates
        hv, hf = settings.hyper_v, settings.hyper_f
        self.gp_v = ExactGP(self.X, self.yv, self.tv, hv.lengthscales, hv.kind)
        mu_v, var_v = self.gp_v.predict(self.X)
        self.set_noise_cap(mu_v)
        self.D = self.mean_noise(mu_v, np.sqrt(var_v), self.k)  # (n,) eq. 19
        self.gp_f = ExactGP(self.X, self.yf, self.D, hf.lengthscales, hf.kind)

    def predict(self, U: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Raw-scale ``(mu_f, sd_f, mu_var, sd_var)``, each ``(p,)``, at ``U (p, dim)``."""
        mu_f, var_f = self.gp_f.predict(U)
        mu_v, var_v = self.gp_v.predict(U)
        return self._raw(mu_f, var_f, mu_v, var_v)

    def solve_f(self, B: np.ndarray) -> np.ndarray:
        """See :meth:`RoundModel.solve_f`."""
        return cho_solve((self.gp_f.L_, True), B)

    def solve_v(self, B: np.ndarray) -> np.ndarray:
        """See :meth:`RoundModel.solve_v`."""
        return cho_solve((self.gp_v.L_, True), B)

    def _grad_f(self, u: np.ndarray):
        """See :meth:`RoundModel._grads`."""
        return self.gp_f.predict_grad(u)

    def _grad_v(self, u: np.ndarray):
        """See :meth:`RoundModel._grads`."""
        return self.gp_v.predict_grad(u)

    def select(self, mask: np.ndarray, risk: RiskLike) -> tuple[int, float]:
        """Exact argmax of the acquisition (eq. 8) over the candidates with ``mask (m,)`` True.

        Returns the candidate index (lowest on ties) and its acquisition value.
        """
        vals = np.where(mask, self.acquisition(self.C, risk), -np.inf)  # eq. 8
        i = int(np.argmax(vals))
        return i, float(vals[i])

    def best_lcb_mv(
        self, risk: RiskLike, beta: float, mask: np.ndarray | None = None
    ) -> tuple[float, int]:
        """``B_t = max_s LCB^MV(x_s)`` over the evaluated rows (eq. 10) and its row.

        ``mask`` ``(n,)`` bool restricts the rows (None: all); ``(-inf, -1)`` if none is left.
        """
        return incumbent_lcb(*self.predict(self.X), risk, beta, mask, log_var=self.log_var)

    def inner(
        self,
        row: int | None,
        u: np.ndarray,
        cand: int | None,
        ybar: float,
        s2: float,
        k_total: int,
        beta_stop: float,
        risk: RiskLike,
    ) -> InnerBounds:
        """Bounds at ``x_t`` after ``k_total`` pooled seeds (by refactoring both GPs).

        Parameters
        ----------
        row : int or None
            Row of ``x_t`` in ``D_{t-1}`` (None when new).
        u : numpy.ndarray
            ``(dim,)`` encoding of ``x_t``.
        cand : int or None
            Candidate index of ``x_t`` (finite tables; unused here).
        ybar, s2 : float
            Pooled sample mean and variance of ``x_t``.
        k_total : int
            Pooled seed count of ``x_t``.
        beta_stop : float
            Confidence parameter of the bounds.
        risk : erahbo.risk.RiskMeasure or float
            The decision's risk measure (a float: MV's ``alpha``; 0 for GP-UCB).
        """
        hv, hf = self.settings.hyper_v, self.settings.hyper_f
        X, yv, yf, D = self.X, self.yv.copy(), self.yf.copy(), self.D.copy()
        tv = self.tv.copy()
        if k_total < 2:  # one seed: a placeholder the variance GP does not learn from
            s2 = self.s2_one
        if row is None:
            X = np.vstack([X, u])
            yv, yf, D = np.append(yv, 0.0), np.append(yf, 0.0), np.append(D, 0.0)
            tv = np.append(tv, 0.0)
            row = self.n
        yv[row] = (self._var_obs(s2, k_total) - self.mv) / self.sv
        tv[row] = self.var_noise(k_total)
        gp_v = ExactGP(X, yv, tv, hv.lengthscales, hv.kind)
        mu_v, var_v = gp_v.predict(u[None, :])
        D[row] = self.mean_noise(mu_v, np.sqrt(var_v), np.array([k_total]))[0]
        yf[row] = (ybar - self.mf) / self.sf
        gp_f = ExactGP(X, yf, D, hf.lengthscales, hf.kind)
        mu_f, var_f = gp_f.predict(u[None, :])
        mf, sdf, mv, sdv = (float(a[0]) for a in self._raw(mu_f, var_f, mu_v, var_v))
        return InnerBounds(mf, sdf, mv, sdv, risk, beta_stop, self.log_var)


