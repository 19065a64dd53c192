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

Every posterior here is the round's (its hyperparameters, noise, data and Cholesky factors:
:meth:`erahbo.gp.round.RoundModel.solve_f`, ``solve_v``); the kernels have unit prior variance
on the standardized outputs (:mod:`erahbo.gp.kernels`). Cost: ``O(n^2 c + m n)`` for ``c``
candidates, ``m`` reference points and ``n`` configurations: on a 4-D round of n = 2000, 38 ms
(the round's fit there: 2.4 s; refactoring the two kernel matrices took 1 s).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from erahbo.gp.bounds import to_variance
from erahbo.gp.kernels import kernel
from erahbo.risk import RiskMeasure

__all__ = ["measure_reduction", "posterior_cross", "variance_reduction"]


def posterior_cross(solve: Callable[[np.ndarray], np.ndarray], X: np.ndarray,
                    lengthscales: np.ndarray, kind: str, R: np.ndarray,
                    C: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Posterior covariances of a zero-mean, unit-variance GP fitted at ``X``.

    ``c(r, x) = k(r, x) - k(r, X) K^{-1} k(X, x)`` with ``K^{-1} k(X, C)`` solved once with the
    round's own factor (``O(n^2 c + m n c)`` for ``c`` candidates and ``m`` reference points:
    a few candidates, so a lookahead costs little beside the round's fit).

    Parameters
    ----------
    solve : callable
        ``B (n, p) -> K^{-1} B`` with ``K = k(X, X) + diag(noise)`` (the round's factor:
        :meth:`erahbo.gp.round.RoundModel.solve_f`, ``solve_v``).
    X : numpy.ndarray
        ``(n, d)`` the data's inputs (unit cube).
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
    kXC = kernel(X, C, lengthscales, kind)  # (n, c)
    A = solve(kXC)  # (n, c): K^-1 k(X, C)
    cov = kernel(R, C, lengthscales, kind) - kernel(R, X, lengthscales, kind) @ A
    var = np.maximum(1.0 - np.einsum("ij,ij->j", kXC, A), 0.0)
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
        The round (its settings, standardizations, outputs ``yf``, ``yv`` and factors:
        ``solve_f``, ``solve_v``).
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
    hf, hv = s.hyper_f, s.hyper_v
    # posterior means at R (raw), without the variances predict() would solve for
    mu_f = rm.mf + rm.sf * (kernel(R, X, hf.lengthscales, hf.kind) @ rm.solve_f(rm.yf))  # (m,)
    mu_v = rm.mv + rm.sv * (kernel(R, X, hv.lengthscales, hv.kind) @ rm.solve_v(rm.yv))
    rho2 = np.asarray(to_variance(mu_v, None, rm.log_var), dtype=float)  # (m,)
    df, dv = np.broadcast_arrays(*risk.grad(mu_f, rho2), mu_f)[:2]  # (m,) each
    m = len(R)
    cov, var = posterior_cross(rm.solve_f, X, hf.lengthscales, hf.kind, R, C)
    out = variance_reduction(cov, var, f_noise, df * df * rm.sf ** 2 / m)
    gain = np.asarray(v_gain, dtype=float)
    if np.any(gain > 0) and np.any(dv != 0):
        slope = rm.sv * (rho2 if rm.log_var else 1.0)  # (m,) d rho^2 / d (standardized g)
        cov, var = posterior_cross(rm.solve_v, X, hv.lengthscales, hv.kind, R, C)
        v_noise = np.where(gain > 0, 1.0 / np.where(gain > 0, gain, 1.0), np.inf)  # (c,)
        out = out + variance_reduction(cov, var, v_noise, (dv * slope) ** 2 / m)
    return out
