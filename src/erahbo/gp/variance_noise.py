"""The variance GP's observation noise: how much a sample variance of ``k`` seeds says.

The variance GP observes sample variances ``s^2(x_s)`` of ``k_s`` seeds (paper Sec. 3.1,
eq. 4). Two models of their noise, the option ``var_noise``
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

A one-seed configuration has no sample variance: its observation carries no information
(``NO_INFO``, :mod:`erahbo.gp.one_seed`) under both.
"""

from __future__ import annotations

import numpy as np

__all__ = ["NO_INFO", "VAR_NOISE", "chi2_scale", "variance_noise"]

#: The variance-noise models (the option ``var_noise``).
VAR_NOISE = ("fitted", "chi2")
#: The noise of a one-seed configuration's observation in the variance GP, in units of the
#: GP's noise ``tau^2``: so large that the observation carries no information.
NO_INFO = 1e8
#: Floor of the chi^2 scale (standardized): a study whose replicated configurations all
#: returned equal values still has a positive-definite variance GP.
CHI2_FLOOR = 1e-6


def variance_noise(tau2: float, k: np.ndarray | float,
                   chi2: bool = False) -> np.ndarray | float:
    """Noise of the variance GP's observations.

    ``"fitted"`` (``chi2`` False): ``tau^2`` where ``k >= 2``; ``"chi2"``: ``tau^2 / (k - 1)``
    there, ``tau^2`` being ``2 rho_bar^4`` standardized (:func:`chi2_scale`: the noise of a
    2-seed sample variance). ``NO_INFO * tau^2`` where ``k = 1`` (no sample variance).

    Parameters
    ----------
    tau2 : float
        The variance GP's noise scale (standardized).
    k : numpy.ndarray or float
        ``(n,)`` seed counts (a float: ``x_t`` in the inner loop).
    chi2 : bool
        The known chi^2 noise (``var_noise = "chi2"``).

    Returns
    -------
    numpy.ndarray or float
        ``(n,)`` noise variances (a float for a float ``k``).
    """
    if isinstance(k, np.ndarray):
        rep = tau2 / np.maximum(k - 1.0, 1.0) if chi2 else tau2
        return np.where(k >= 2, rep, tau2 * NO_INFO)
    if k < 2:
        return tau2 * NO_INFO
    return tau2 / (k - 1.0) if chi2 else tau2


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
