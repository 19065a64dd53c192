"""The variance GP's observation noise: how much a sample variance of ``k`` seeds says.

The variance GP observes sample variances ``s^2(x_s)`` of ``k_s`` seeds (paper Sec. 3.1,
eq. 4). Three models of their noise, the option ``var_noise``
(:mod:`erahbo.optimizer.variance_prior`):

``"fitted"`` (the paper's experiments, erahbo before session 21)
    one homoscedastic noise ``tau^2`` for every replicated configuration, MAP-fitted with the
    variance GP's lengthscales under a LogNormal prior (``var_noise_prior``; BoTorch's
    ``LogNormal(-4, 1)`` says the sample variances are nearly noise-free). A sample variance
    of 2 seeds and one of 20 weigh the same.
``"chi2"`` (the paper's appendix, Assumption 2)
    the variance-observation proxy ``rho_eta^2(x, k) = 2 rho_bar^4 / (k - 1)``, exact for
    normal returns (``s^2 (k - 1) / rho^2 ~ chi^2_{k-1}``), with ``rho_bar^2`` the pooled
    within-configuration variance of the data: a known noise per observation, nothing fitted.
    A 2-seed sample variance has standard deviation ``sqrt(2) rho_bar^2``; 20 seeds weigh 19
    times more. Measured (``docs/results/one_seed_models/``, session 21): the variance GP's
    bounds then cover the true variance at about their stated rate, where the fitted noise
    missed it 30-40 % of the time on each side on the README's example, and the mean GP's
    noise (eq. 19) no longer falls to its floor at one-seed configurations; better on the real
    tables and the continuous benchmark. Not the default: ``rho_bar^2`` is one scale for the
    whole space, where the chi^2 noise is ``2 rho(x)^4 / (k - 1)``; where the spread differs by
    orders of magnitude (two peaks, seed variances 0.0025 and 1.1) the quiet configurations'
    variances drown in the noisy ones' noise and the noisy peak is recommended.

``"log"`` (a GP on log sample variances; issue 37, session 22)
    the variance GP observes ``y = log s^2 - E[log(chi^2_{k-1} / (k - 1))]``, unbiased for
    ``log rho^2`` under normal returns (:func:`log_observations`; the bias
    ``psi((k - 1) / 2) - log((k - 1) / 2)``, :func:`log_bias`), with the known noise
    ``psi'((k - 1) / 2)`` (``k = 2``: 4.93, ``k = 5``: 0.64, ``k = 20``: 0.11) **whatever
    rho(x)**: quiet and noisy regions weigh the same, no global scale. Its posterior
    ``N(m, s^2)`` of ``log rho^2`` maps back monotonically
    (:func:`erahbo.gp.bounds.to_variance`): ``UCB^var = exp(m + sqrt(beta) s)``, ``LCB^var =
    exp(m - sqrt(beta) s)``, the estimate ``exp(m)`` (the posterior median of ``rho^2``:
    always between the bounds, and not inflated where the model knows least, as the mean
    ``exp(m + s^2 / 2)`` would be). A sample variance of 0 (all seeds equal) is floored
    before the log at :data:`LOG_FLOOR_SHARE` of the pooled within-configuration variance
    (:func:`log_floor`). The GP's output scale, its prior standard deviation of ``log rho^2``
    around the mean of the observations, is :data:`LOG_PRIOR_SD` (log units carry no unit of
    the returns; ``tau^2 = psi'(1/2) / s_v^2``, the standardized noise of a 2-seed log
    variance, is ``hyper_v.noise``: :func:`log_scale`), so the noise is exact in log units.
    Measured (``docs/results/one_seed_models/``, session 22): the spread of the observations,
    the standardization of the other models, is mostly their noise (``psi'(1/2) = 4.93``
    against a spread of ``log rho^2`` near 1 on the README example) and gave the log GP a
    prior several times too wide.

A one-seed configuration has no sample variance: its observation carries no information
(``NO_INFO``, :mod:`erahbo.gp.one_seed`) under all three.
"""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np
from scipy.special import digamma, polygamma

__all__ = ["LOG_FLOOR_SHARE", "LOG_PRIOR_SD", "NO_INFO", "TRIGAMMA_HALF", "VAR_NOISE", "chi2_scale",
           "log_bias", "log_floor", "log_observations", "log_scale", "variance_noise"]

#: The variance-noise models (the option ``var_noise``).
VAR_NOISE = ("fitted", "chi2", "log")
#: ``psi'(1/2) = pi^2 / 2``: the variance of the log of a 2-seed sample variance.
TRIGAMMA_HALF = math.pi**2 / 2.0
#: ``"log"``: sample variances are floored at this share of the pooled within-configuration
#: variance before the log (a sample variance of 0: all seeds returned the same value). A
#: 2-seed sample variance falls below ``1e-4 rho^2`` with probability 0.8 %.
LOG_FLOOR_SHARE = 1e-4
#: ``"log"``: the prior standard deviation of ``log rho^2`` around the mean of the
#: observations (the GP's output scale, log units): ``rho^2`` varies by a factor ``e`` per
#: standard deviation. 0.5-2 measured on the README example (session 22).
LOG_PRIOR_SD = 1.0
#: ``"log"``: the floor when the pooled variance is 0 (every replicated configuration returned
#: equal values): the log stays finite, the variances read as 0.
LOG_FLOOR_ABS = 1e-12
#: The noise of a one-seed configuration's observation in the variance GP, in units of the
#: GP's noise ``tau^2``: so large that the observation carries no information.
NO_INFO = 1e8
#: Floor of the chi^2 scale (standardized): a study whose replicated configurations all
#: returned equal values still has a positive-definite variance GP.
CHI2_FLOOR = 1e-6


@lru_cache(maxsize=256)
def _log_ratio(k: float) -> float:
    """``psi'((k - 1) / 2) / psi'(1/2)`` for one seed count ``k >= 2`` (the inner loop)."""
    return float(polygamma(1, 0.5 * (k - 1.0))) / TRIGAMMA_HALF


def variance_noise(tau2: float, k: np.ndarray | float,
                   chi2: bool = False, log: bool = False) -> np.ndarray | float:
    """Noise of the variance GP's observations.

    ``"fitted"`` (``chi2`` and ``log`` False): ``tau^2`` where ``k >= 2``; ``"chi2"``:
    ``tau^2 / (k - 1)`` there, ``tau^2`` being ``2 rho_bar^4`` standardized
    (:func:`chi2_scale`: the noise of a 2-seed sample variance); ``"log"`` (``log`` True):
    ``tau^2 psi'((k - 1) / 2) / psi'(1/2)``, ``tau^2`` the standardized noise of a 2-seed log
    variance (:func:`log_scale`). ``NO_INFO * tau^2`` where ``k = 1`` (no sample variance).

    Parameters
    ----------
    tau2 : float
        The variance GP's noise scale (standardized).
    k : numpy.ndarray or float
        ``(n,)`` seed counts (a float: ``x_t`` in the inner loop).
    chi2 : bool
        The known chi^2 noise (``var_noise = "chi2"``).
    log : bool
        The known noise of a log sample variance (``var_noise = "log"``).

    Returns
    -------
    numpy.ndarray or float
        ``(n,)`` noise variances (a float for a float ``k``).
    """
    if isinstance(k, np.ndarray):
        if log:
            rep = tau2 * polygamma(1, 0.5 * np.maximum(k - 1.0, 1.0)) / TRIGAMMA_HALF
        else:
            rep = tau2 / np.maximum(k - 1.0, 1.0) if chi2 else tau2
        return np.where(k >= 2, rep, tau2 * NO_INFO)
    if k < 2:
        return tau2 * NO_INFO
    if log:
        return tau2 * _log_ratio(float(k))
    return tau2 / (k - 1.0) if chi2 else tau2


def log_bias(k: np.ndarray | float) -> np.ndarray | float:
    """``E[log(s^2 / rho^2)] = psi((k - 1) / 2) - log((k - 1) / 2)`` for a sample variance of
    ``k >= 2`` normal returns (``s^2 (k - 1) / rho^2 ~ chi^2_{k-1}``); 0 where ``k < 2``.

    Parameters
    ----------
    k : numpy.ndarray or float
        ``(n,)`` seed counts, or one.

    Returns
    -------
    numpy.ndarray or float
        ``(n,)`` biases (negative: ``k = 2`` -1.27, ``k = 5`` -0.27, ``k = 20`` -0.054).
    """
    h = 0.5 * (np.maximum(np.asarray(k, dtype=float), 2.0) - 1.0)
    b = np.where(np.asarray(k) >= 2, digamma(h) - np.log(h), 0.0)
    return b if isinstance(k, np.ndarray) else float(b)


def log_floor(pooled: float) -> float:
    """The floor of a sample variance before the log: :data:`LOG_FLOOR_SHARE` of the pooled
    within-configuration variance ``pooled`` (:func:`erahbo.gp.one_seed.pooled_variance`), or
    :data:`LOG_FLOOR_ABS` when it is 0."""
    floor = LOG_FLOOR_SHARE * float(pooled)
    return floor if floor > 0.0 else LOG_FLOOR_ABS


def log_observations(s2: np.ndarray | float, k: np.ndarray | float,
                     floor: float) -> np.ndarray | float:
    """The ``"log"`` variance GP's observations: ``log max(s^2, floor) - log_bias(k)``.

    Unbiased for ``log rho^2`` under normal returns (away from the floor). Where ``k < 2``
    (a one-seed row's placeholder, which carries no weight) the log of the value itself.

    Parameters
    ----------
    s2, k : numpy.ndarray or float
        ``(n,)`` sample variances (placeholders where ``k = 1``) and seed counts, or one each.
    floor : float
        :func:`log_floor` (> 0).

    Returns
    -------
    numpy.ndarray or float
        ``(n,)`` observations in log units (a float for floats).
    """
    if isinstance(s2, np.ndarray) or isinstance(k, np.ndarray):
        return np.log(np.maximum(np.asarray(s2, dtype=float), floor)) - log_bias(
            np.asarray(k, dtype=float))
    return math.log(max(float(s2), floor)) - log_bias(float(k))


def log_scale(tau2: float) -> float:
    """``"log"``: the variance GP's output scale ``s_v`` (log units per standardized unit) its
    noise ``tau^2 = psi'(1/2) / s_v^2`` (``hyper_v.noise``) stands for."""
    return math.sqrt(TRIGAMMA_HALF / float(tau2))


def chi2_scale(s2: np.ndarray, k: np.ndarray, sv: float) -> float:
    """``tau^2`` of ``var_noise = "chi2"``: ``2 rho_bar^4 / sv^2``, the standardized noise of a
    2-seed sample variance (appendix, Assumption 2: ``rho_eta^2(x, k) = 2 rho_bar^4 / (k - 1)``).

    Parameters
    ----------
    s2, k : numpy.ndarray
        ``(n,)`` sample variances (any value where ``k = 1``: weight 0) and seed counts.
    sv : float
        Scale of the variance GP's output standardization.

    Returns
    -------
    float
        ``2 rho_bar^4 / sv^2`` with ``rho_bar^2 = sum (k_i - 1) s2_i / sum (k_i - 1)`` over
        the replicated configurations, at least ``CHI2_FLOOR``; ``CHI2_FLOOR`` without one.
    """
    dof = np.maximum(np.asarray(k, dtype=float) - 1.0, 0.0)  # (n,)
    if dof.sum() <= 0:
        return CHI2_FLOOR
    pooled = float(dof @ np.where(dof > 0, np.asarray(s2, dtype=float), 0.0) / dof.sum())
    return max(2.0 * pooled * pooled / (sv * sv), CHI2_FLOOR)
