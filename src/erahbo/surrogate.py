"""The two GPs of one BO round and the quantities RAHBO/ERAHBO read from them.

A :class:`RoundModel` is built from the data ``D_{t-1}`` at the start of a round with fixed
hyperparameters and holds, for that round:

* the output standardizations of both GPs (frozen for the round, like the hyperparameters);
* the variance GP (homoscedastic, on sample variances) and ``UCB_var`` at the evaluated points;
* the fixed noise of the mean GP, eq. ``Sigma_hat`` of Appendix A,
  ``noise_s = min(UCB_var(x_s), rho_max^2) / k_s``, divided by ``std_y^2`` of the mean GP's
  standardization (floored at :data:`erahbo.models.MEAN_NOISE_FLOOR`);
* the mean GP with that noise.

It answers the acquisition argmax (eq. rahbo_acq), the incumbent bound ``B_t`` (eq. inc_lcb)
and, in ERAHBO's inner loop, ``UCB_MV(x_t; k)`` after ``k`` seeds at ``x_t`` (eq.
adaptive_rule).  In the inner loop only ``x_t``'s own observation changes: its pooled sample
mean and variance, and its mean-GP noise ``min(UCB_var(x_t), rho_max^2) / k``, where
``UCB_var(x_t)`` comes from the variance GP updated with ``x_t``'s sample variance; the other
points keep the noise computed at the round start (``Sigma_hat_{t-1}``).

Two implementations give the same numbers: :class:`ReferenceRound` (here) refactors plain GPs
for every query; :class:`erahbo._fast_model.FastRound` caches kernel matrices, keeps the
variance GP incremental and prunes the candidate search with exact upper bounds.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np
from scipy.optimize import minimize

from erahbo.acquisition import lcb_mv, ucb_mv
from erahbo.models import MEAN_NOISE_FLOOR, ExactGP, GPHyper, standardize

__all__ = [
    "ENGINES",
    "InnerBounds",
    "ReferenceRound",
    "RoundSettings",
    "fit_hyperparameters",
    "fixed_noise",
    "make_round",
    "observe",
]

ENGINES = ("fast", "reference")


@dataclass(frozen=True)
class RoundSettings:
    """Fixed settings of the models.

    Attributes
    ----------
    hyper_f, hyper_v : GPHyper
        Hyperparameters of the mean GP (``noise`` None) and of the variance GP.
    beta : float
        Confidence parameter of the acquisition and of ``UCB_var`` in ``Sigma_hat``
        (``sqrt(beta)`` standard deviations).
    rho_max2 : float or None
        ``rho_max^2`` of eq. ``Sigma_hat``; None: the largest sample variance in ``D_{t-1}``.
    """

    hyper_f: GPHyper
    hyper_v: GPHyper
    beta: float = 2.5
    rho_max2: float | None = None


class InnerBounds(NamedTuple):
    """Posterior at ``x_t`` after its seeds so far, and the MV bounds with ``beta_stop``.

    A named tuple: one is built per extra seed of ERAHBO's inner loop (hot path).
    """

    ucb_mv: float
    lcb_mv: float
    mu_f: float
    sd_f: float
    mu_var: float
    sd_var: float


def fixed_noise(ucb_var: np.ndarray, rho_max2: float, k: np.ndarray, std_y: float) -> np.ndarray:
    """Standardized mean-GP noise ``min(UCB_var, rho_max^2) / k / std_y^2`` (eq. Sigma_hat).

    Parameters
    ----------
    ucb_var : numpy.ndarray
        ``(n,)`` ``UCB_var`` at the points (raw scale of the returns, squared).
    rho_max2 : float
        Upper bound on the noise variance (raw scale).
    k : numpy.ndarray
        ``(n,)`` seed counts.
    std_y : float
        Scale of the mean GP's output standardization.

    Returns
    -------
    numpy.ndarray
        ``(n,)`` noise on the standardized scale, at least ``MEAN_NOISE_FLOOR``.
    """
    noise = np.minimum(ucb_var, rho_max2) / k / (std_y * std_y)
    return np.maximum(noise, MEAN_NOISE_FLOOR)


def observe(mu_o: float, v_o: float, y: float, noise: float) -> tuple[float, float]:
    """Posterior of ``g(x)`` from prior ``N(mu_o, v_o)`` and one observation ``y`` with noise.

    Used for ``x_t`` in the inner loop: ``(mu_o, v_o)`` is the posterior given the other
    points, ``y`` the pooled statistic of ``x_t``.  Exact Gaussian conditioning, equal to
    refactoring the GP with ``x_t`` as the last row (a bordered Cholesky).
    """
    v_o = max(v_o, 0.0)
    gain = v_o / (v_o + noise)
    return mu_o + gain * (y - mu_o), noise * gain


class RoundModel:
    """Shared state and helpers of a round (see the module docstring)."""

    n: int
    mf: float
    sf: float
    mv: float
    sv: float
    rho2: float
    D: np.ndarray  # (n,) standardized fixed noise of the mean GP

    def _setup_stats(
        self, ybar: np.ndarray, s2: np.ndarray, k: np.ndarray, s: RoundSettings
    ) -> None:
        self.settings = s
        self.beta = float(s.beta)
        self.sqb = math.sqrt(self.beta)
        self.tau2 = float(s.hyper_v.noise)
        self.n = len(ybar)
        self.k = np.array(k, dtype=float)  # (n,)
        self.mf, self.sf = standardize(ybar)
        self.mv, self.sv = standardize(s2)
        self.yf = (np.asarray(ybar, dtype=float) - self.mf) / self.sf  # (n,)
        self.yv = (np.asarray(s2, dtype=float) - self.mv) / self.sv  # (n,)
        self.rho2 = float(s.rho_max2) if s.rho_max2 is not None else float(np.max(s2))

    def _raw(self, mu_f, var_f, mu_v, var_v):  # standardized -> raw (mu_f, sd_f, mu_v, sd_v)
        return (
            self.mf + self.sf * mu_f,
            self.sf * np.sqrt(np.maximum(var_f, 0.0)),
            self.mv + self.sv * mu_v,
            self.sv * np.sqrt(np.maximum(var_v, 0.0)),
        )

    def _inner_from(
        self,
        fo: tuple[float, float],
        vo: tuple[float, float],
        ybar: float,
        s2: float,
        k_total: int,
        beta_stop: float,
        weight: float,
    ) -> InnerBounds:
        """Combine the posteriors given the other points with ``x_t``'s own observation.

        Scalar arithmetic only (it runs once per extra seed); the same formulas as
        :func:`fixed_noise`, :func:`erahbo.acquisition.ucb_mv` and ``lcb_mv``.
        """
        mu_v, var_v = observe(vo[0], vo[1], (s2 - self.mv) / self.sv, self.tau2)
        sd_v = math.sqrt(max(var_v, 0.0))
        ucbv = self.mv + self.sv * (mu_v + self.sqb * sd_v)
        noise_t = max(min(ucbv, self.rho2) / k_total / (self.sf * self.sf), MEAN_NOISE_FLOOR)
        mu_f, var_f = observe(fo[0], fo[1], (ybar - self.mf) / self.sf, noise_t)
        mf, sdf = self.mf + self.sf * mu_f, self.sf * math.sqrt(max(var_f, 0.0))
        mv, sdv = self.mv + self.sv * mu_v, self.sv * sd_v
        r = math.sqrt(beta_stop)
        return InnerBounds(
            ucb_mv=(mf + r * sdf) - weight * (mv - r * sdv),
            lcb_mv=(mf - r * sdf) - weight * (mv + r * sdv),
            mu_f=mf,
            sd_f=sdf,
            mu_var=mv,
            sd_var=sdv,
        )

    # -- interface (implemented by the subclasses) ----------------------------------
    def predict(self, U: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Raw-scale ``(mu_f, sd_f, mu_var, sd_var)``, each ``(p,)``, at ``U (p, dim)``."""
        raise NotImplementedError

    def acquisition(self, U: np.ndarray, weight: float) -> np.ndarray:
        """``UCB_f - weight * LCB_var`` with ``beta`` at ``U (p, dim)``; returns ``(p,)``."""
        mf, sdf, mv, sdv = self.predict(U)
        return ucb_mv(mf, sdf, mv, sdv, weight, self.beta)

    def polish(
        self, u0: np.ndarray, mask: np.ndarray, weight: float, maxiter: int = 50
    ) -> np.ndarray:
        """L-BFGS-B ascent of the acquisition from ``u0 (dim,)`` over the columns in ``mask``."""
        free = np.flatnonzero(mask)
        if free.size == 0:
            return u0.copy()

        def neg(z: np.ndarray) -> tuple[float, np.ndarray]:
            u = u0.copy()
            u[free] = z
            val, grad = self.acquisition_grad(u, weight)
            return -val, -grad[free]

        res = minimize(neg, u0[free], jac=True, method="L-BFGS-B",
                       bounds=[(0.0, 1.0)] * free.size, options={"maxiter": maxiter})
        u = u0.copy()
        if np.all(np.isfinite(res.x)):
            u[free] = np.clip(res.x, 0.0, 1.0)
        return u

    def acquisition_grad(self, u: np.ndarray, weight: float) -> tuple[float, np.ndarray]:
        """Acquisition at one point ``u (dim,)`` and its gradient ``(dim,)``."""
        (mf, vf, dmf, dvf), (mv, vv, dmv, dvv) = self._grads(u)
        sdf, sdv = math.sqrt(max(vf, 1e-12)), math.sqrt(max(vv, 1e-12))  # finite gradients
        val = (
            self.mf
            + self.sf * (mf + self.sqb * sdf)
            - weight * (self.mv + self.sv * (mv - self.sqb * sdv))
        )
        grad = self.sf * (dmf + self.sqb * dvf / (2 * sdf)) - weight * self.sv * (
            dmv - self.sqb * dvv / (2 * sdv)
        )
        return float(val), grad

    def _grads(self, u: np.ndarray):
        raise NotImplementedError


class ReferenceRound(RoundModel):
    """Plain implementation: builds :class:`erahbo.models.ExactGP` objects and predicts.

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
        self.gp_v = ExactGP(self.X, self.yv, self.tau2, hv.lengthscales, hv.kind)
        mu, var = self.gp_v.predict(self.X)
        ucbv = self.mv + self.sv * (mu + self.sqb * np.sqrt(var))
        self.D = fixed_noise(ucbv, self.rho2, self.k, self.sf)
        self.gp_f = ExactGP(self.X, self.yf, self.D, hf.lengthscales, hf.kind)

    def predict(self, U: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        mu_f, var_f = self.gp_f.predict(U)
        mu_v, var_v = self.gp_v.predict(U)
        return self._raw(mu_f, var_f, mu_v, var_v)

    def _grads(self, u: np.ndarray):
        return self.gp_f.predict_grad(u), self.gp_v.predict_grad(u)

    def select(self, mask: np.ndarray, weight: float) -> tuple[int, float]:
        """Exact argmax of the acquisition over the finite candidates with ``mask`` True."""
        vals = np.where(mask, self.acquisition(self.C, weight), -np.inf)
        i = int(np.argmax(vals))
        return i, float(vals[i])

    def best_lcb_mv(
        self, weight: float, beta: float, mask: np.ndarray | None = None
    ) -> tuple[float, int]:
        """``max_s LCB_MV(x_s)`` over the evaluated rows (eq. inc_lcb) and its row.

        ``mask`` ``(n,)`` bool restricts the rows (None: all); ``(-inf, -1)`` if none is left.
        """
        vals = lcb_mv(*self.predict(self.X), weight, beta)
        if mask is not None:
            vals = np.where(mask, vals, -np.inf)
        i = int(np.argmax(vals))
        return (float(vals[i]), i) if np.isfinite(vals[i]) else (-np.inf, -1)

    def inner(
        self,
        row: int | None,
        u: np.ndarray,
        cand: int | None,
        ybar: float,
        s2: float,
        k_total: int,
        beta_stop: float,
        weight: float,
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
        weight : float
            Risk weight (``alpha``; 0 for GP-UCB).
        """
        hv, hf = self.settings.hyper_v, self.settings.hyper_f
        X, yv, yf, D = self.X, self.yv.copy(), self.yf.copy(), self.D.copy()
        if row is None:
            X = np.vstack([X, u])
            yv, yf, D = np.append(yv, 0.0), np.append(yf, 0.0), np.append(D, 0.0)
            row = self.n
        yv[row] = (s2 - self.mv) / self.sv
        gp_v = ExactGP(X, yv, self.tau2, hv.lengthscales, hv.kind)
        mu_v, var_v = gp_v.predict(u[None, :])
        ucbv = self.mv + self.sv * (mu_v + self.sqb * np.sqrt(var_v))
        D[row] = fixed_noise(ucbv, self.rho2, np.array([k_total]), self.sf)[0]
        yf[row] = (ybar - self.mf) / self.sf
        gp_f = ExactGP(X, yf, D, hf.lengthscales, hf.kind)
        mu_f, var_f = gp_f.predict(u[None, :])
        mf, sdf, mv, sdv = (float(a[0]) for a in self._raw(mu_f, var_f, mu_v, var_v))
        return InnerBounds(
            ucb_mv=float(ucb_mv(mf, sdf, mv, sdv, weight, beta_stop)),
            lcb_mv=float(lcb_mv(mf, sdf, mv, sdv, weight, beta_stop)),
            mu_f=mf,
            sd_f=sdf,
            mu_var=mv,
            sd_var=sdv,
        )


def make_round(
    engine: str, state, X, ybar, s2, k, settings: RoundSettings, candidates=None
) -> RoundModel:
    """Round model of the chosen engine (``state`` is the fast engine's cache or None)."""
    if engine == "reference":
        return ReferenceRound(X, ybar, s2, k, settings, candidates)
    return state.round(X, ybar, s2, k)


def fit_hyperparameters(
    X: np.ndarray,
    ybar: np.ndarray,
    s2: np.ndarray,
    k: np.ndarray,
    *,
    kind: str = "rbf",
    beta: float = 2.5,
    rho_max2: float | None = None,
    seed: int = 0,
) -> RoundSettings:
    """MAP hyperparameters of both GPs on the current data (paper: on the initial design).

    The variance GP is fitted first (lengthscales and homoscedastic noise); its ``UCB_var`` at
    the evaluated points gives the mean GP's fixed noise (eq. Sigma_hat), under which the mean
    GP's lengthscales are fitted.

    Parameters
    ----------
    X : numpy.ndarray
        ``(n, dim)`` evaluated configurations.
    ybar, s2, k : numpy.ndarray
        ``(n,)`` pooled sample means, variances and seed counts.
    kind : {"rbf", "matern52"}
    beta : float
        Confidence parameter of ``UCB_var`` in eq. Sigma_hat.
    rho_max2 : float or None
        See :class:`RoundSettings`.
    seed : int
        Seed of the random restarts.

    Returns
    -------
    RoundSettings
    """
    from erahbo.models import fit_map

    X = np.asarray(X, dtype=float)
    mv, sv = standardize(s2)
    yv = (np.asarray(s2, dtype=float) - mv) / sv
    hv = fit_map(X, yv, kind=kind, fixed_noise=None, seed=seed)
    gp_v = ExactGP(X, yv, hv.noise, hv.lengthscales, kind)
    mu, var = gp_v.predict(X)
    ucbv = mv + sv * (mu + math.sqrt(beta) * np.sqrt(var))
    rho2 = float(rho_max2) if rho_max2 is not None else float(np.max(s2))
    mf, sf = standardize(ybar)
    D = fixed_noise(ucbv, rho2, np.asarray(k, dtype=float), sf)
    hf = fit_map(
        X, (np.asarray(ybar, dtype=float) - mf) / sf, kind=kind, fixed_noise=D, seed=seed + 1
    )
    return RoundSettings(hyper_f=hf, hyper_v=hv, beta=beta, rho_max2=rho_max2)
