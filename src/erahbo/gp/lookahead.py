"""The integrated-variance lookahead of one more run (Binois et al. 2019, horizon 0; issue 37).

"Replication or exploration? Sequential design for stochastic simulation experiments" (Binois,
Huang, Gramacy and Ludkovski, Technometrics 2019) chooses the next run of a stochastic
experiment, a replicate of a design point or a new point, by the integrated mean squared
prediction error (IMSPE) of the model after it. One more run at ``x`` with noise ``n(x)``
lowers a GP's posterior variance at ``r`` by ``c(r, x)^2 / (v(x) + n(x))`` (a rank-one update;
``c`` the posterior covariance, ``v`` the posterior variance), so the IMSPE falls by

    dI(x) = sum_r w_r c(r, x)^2 / (v(x) + n(x))                                  (IMSPE)

over reference points ``r`` with weights ``w_r`` (a uniform sample of the space: the
integral's Monte Carlo estimate).

Here the integrated quantity is the risk measure's posterior variance, linearized at the
posterior (``rho(x) = value(f, rho^2)``, :meth:`erahbo.risk.RiskMeasure.grad`; MV: ``1`` and
``-alpha``): the mean GP's term with weight ``(d rho / d f)^2``, the variance GP's with
``(d rho / d rho^2)^2`` times the squared slope of ``rho^2`` in the GP's output (``s_v``, and
``rho^2 s_v`` for a GP on ``log rho^2``, the delta method). The two GPs differ in what a run
tells them: to the mean GP a run at ``x`` is an observation with eq. 19's noise for one seed
(at an evaluated configuration its per-run noise, ``k`` times the sample mean's); to the
variance GP a new configuration's one seed is no observation at all
(:mod:`erahbo.gp.one_seed`), and a replicate's next seed sharpens its sample variance from
``k`` to ``k + 1`` seeds, an observation of precision ``1 / t(k + 1) - 1 / t(k)``
(:func:`erahbo.gp.variance_noise.variance_noise`).

Every posterior here is the round's (its hyperparameters, noise and data); the kernels have
unit prior variance on the standardized outputs (:mod:`erahbo.gp.kernels`).
"""

from __future__ import annotations

import numpy as np
from scipy.linalg import solve_triangular

from erahbo.gp.bounds import to_variance
from erahbo.gp.exact import robust_cholesky
from erahbo.gp.kernels import kernel
from erahbo.risk import RiskMeasure

__all__ = ["measure_reduction", "posterior_cross", "variance_reduction"]


def posterior_cross(X: np.ndarray, noise: np.ndarray, lengthscales: np.ndarray, kind: str,
                    R: np.ndarray, C: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Posterior covariances of a zero-mean, unit-variance GP fitted at ``X``.

    Parameters
    ----------
    X : numpy.ndarray
        ``(n, d)`` the data's inputs (unit cube).
    noise : numpy.ndarray
        ``(n,)`` their noise variances (standardized).
    lengthscales : numpy.ndarray
        ``(d,)``.
    kind : str
        The kernel (:data:`erahbo.gp.kernels.KERNELS`).
    R, C : numpy.ndarray
        ``(m, d)`` reference points and ``(c, d)`` candidates.

    Returns
    -------
    cov : numpy.ndarray
        ``(m, c)`` posterior covariances ``c(r, x)``.
    var : numpy.ndarray
        ``(c,)`` posterior variances ``v(x)``, at least 0.
    """
    K = kernel(X, X, lengthscales, kind)
    K[np.diag_indices_from(K)] += np.asarray(noise, dtype=float)
    L, _ = robust_cholesky(K)
    A = solve_triangular(L, kernel(X, C, lengthscales, kind), lower=True)  # (n, c): L^-1 k
    B = solve_triangular(L, kernel(X, R, lengthscales, kind), lower=True)  # (n, m)
    cov = kernel(R, C, lengthscales, kind) - B.T @ A
    var = np.maximum(1.0 - np.einsum("ij,ij->j", A, A), 0.0)
    return cov, var


def variance_reduction(cov: np.ndarray, var: np.ndarray, noise: np.ndarray,
                       weights: np.ndarray) -> np.ndarray:
    """Eq. (IMSPE) of the module docstring: the fall of the weighted integrated posterior
    variance from one more observation at each candidate.

    Parameters
    ----------
    cov : numpy.ndarray
        ``(m, c)`` posterior covariances of the reference points with the candidates.
    var : numpy.ndarray
        ``(c,)`` the candidates' posterior variances.
    noise : numpy.ndarray
        ``(c,)`` the new observation's noise variance at each (``inf``: no observation).
    weights : numpy.ndarray
        ``(m,)`` the reference points' weights.

    Returns
    -------
    numpy.ndarray
        ``(c,)``, at least 0 (0 where the noise is infinite).

    >>> float(variance_reduction(np.array([[1.0]]), np.array([1.0]), np.array([1.0]),
    ...                          np.array([1.0]))[0])
    0.5
    """
    with np.errstate(divide="ignore"):
        return (np.asarray(weights, dtype=float) @ (cov * cov)) / (var + noise)


def measure_reduction(rm, X: np.ndarray, C: np.ndarray, f_noise: np.ndarray,
                      v_gain: np.ndarray, R: np.ndarray, risk: RiskMeasure) -> np.ndarray:
    """The fall of the risk measure's integrated posterior variance (raw units squared, mean
    over ``R``) from one more run at each candidate (module docstring).

    Parameters
    ----------
    rm : erahbo.gp.round.RoundModel
        The round (its settings, standardizations, noises ``D`` and ``tv``, data ``yv``).
    X : numpy.ndarray
        ``(n, d)`` the evaluated configurations (the round's data rows).
    C : numpy.ndarray
        ``(c, d)`` the candidates.
    f_noise : numpy.ndarray
        ``(c,)`` the mean GP's noise (standardized) of one run at each candidate.
    v_gain : numpy.ndarray
        ``(c,)`` the precision (standardized) one run adds to the variance GP's observation at
        each candidate (0: none, a new configuration's first seed).
    R : numpy.ndarray
        ``(m, d)`` reference points.
    risk : erahbo.risk.RiskMeasure
        The decision's risk measure.

    Returns
    -------
    numpy.ndarray
        ``(c,)``.
    """
    s = rm.settings
    mu_f, _, mu_v, _ = rm.predict(R)  # (m,) each, raw
    rho2 = np.asarray(to_variance(mu_v, None, rm.log_var), dtype=float)  # (m,)
    df, dv = np.broadcast_arrays(*risk.grad(mu_f, rho2), mu_f)[:2]  # (m,) each
    m = len(R)
    cov, var = posterior_cross(X, rm.D, s.hyper_f.lengthscales, s.hyper_f.kind, R, C)
    out = variance_reduction(cov, var, f_noise, df * df * rm.sf ** 2 / m)
    gain = np.asarray(v_gain, dtype=float)
    if np.any(gain > 0) and np.any(dv != 0):
        slope = rm.sv * (rho2 if rm.log_var else 1.0)  # (m,) d rho^2 / d (standardized g)
        cov, var = posterior_cross(X, rm.tv, s.hyper_v.lengthscales, s.hyper_v.kind, R, C)
        with np.errstate(divide="ignore"):
            v_noise = np.where(gain > 0, 1.0 / np.where(gain > 0, gain, 1.0), np.inf)
        out = out + variance_reduction(cov, var, v_noise, (dv * slope) ** 2 / m)
    return out
