"""One seed per configuration first (``k_init = 1``, ``k_min = 1``; issue 29; an option).

RAHBO's variance GP learns ``rho^2(x)`` from sample variances, so every configuration costs two
seeds before the models read it. With ``k_init = k_min = 1`` a configuration starts with one
seed and ERAHBO's stopping rule (eq. 12) decides whether it gets more: exploration sees twice
as many configurations for the same runs, replication goes where the models say so.

A one-seed configuration has no sample variance, and **tells the variance GP nothing**: its
observation there has noise ``NO_INFO * tau^2``
(:func:`erahbo.gp.variance_noise.variance_noise`; both engines, the
inner loop included), so the variance GP's posterior is the one fitted on the replicated
configurations alone (its hyperparameters too: :func:`erahbo.gp.fit.fit_hyperparameters`).
Where nothing is replicated its posterior is wide: ``LCB^var`` in the acquisition (eq. 8) is
optimistic there and draws the search to find out, while ``UCB^var`` in the mean GP's noise
(eq. 19) is cautious. The mean GP takes the one-seed returns with that noise; every equation
(eqs. 17, 19, 8-12) runs unchanged.

The placeholder observation of a one-seed row (it only enters the variance GP's output
standardization) is the **pooled within-configuration variance**

    sigma_hat^2 = (sum_i (k_i - 1) s_i^2 + PRIOR_DOF * sigma_0^2) / (sum_i (k_i - 1) + PRIOR_DOF)

over the replicated configurations, shrunk towards ``sigma_0^2``, the noise of a homoscedastic
*pilot* GP fitted by MAP on the sample means (``RoundSettings.sigma0_2``).

Measured (docs/results/one_seed): as a default it is not yet a win. Two designs were rejected:
reading a one-seed configuration's variance from its residual to the leave-one-out prediction
(``k ((ybar - mu_{-i})^2 - var_{-i})``, the residual estimate of "most likely" heteroscedastic
GPs, Kersting et al. 2007; Binois et al. 2018 smooth a latent log-variance instead) reads a
configuration better than its neighbours predict as noisy and never replicates it; observing
the pooled variance as if it were a sample variance leads the early runs on the real tables but
hides the spread of unreplicated regions (Figure 1: the noisy maximum in 8 of 10 seeds).
Without any one-seed configuration nothing here runs and the models are the paper's.
"""

from __future__ import annotations

import numpy as np

__all__ = ["FALLBACK_SHARE", "PRIOR_DOF", "pilot_noise", "pooled_variance",
           "variance_observations"]

#: Degrees of freedom of the pilot GP's noise in the pooled within-configuration variance.
PRIOR_DOF = 2.0
#: ``sigma_0^2`` as a share of the sample means' variance when no pilot GP was fitted (the
#: hyperparameters fixed by hand).
FALLBACK_SHARE = 0.1


def pilot_noise(sigma0_2: float | None, ybar: np.ndarray | None) -> float:
    """``sigma_0^2``: the pilot GP's noise (raw scale), or :data:`FALLBACK_SHARE` times the
    variance of the sample means ``ybar (n,)`` when there is no pilot (None)."""
    if sigma0_2 is not None:
        return float(sigma0_2)
    y = np.asarray(ybar, dtype=float)
    return FALLBACK_SHARE * float(np.var(y, ddof=1)) if len(y) > 1 else 0.0


def pooled_variance(s2: np.ndarray, k: np.ndarray, sigma0_2: float) -> float:
    """``sigma_hat^2`` of the module docstring.

    Parameters
    ----------
    s2, k : numpy.ndarray
        ``(n,)`` sample variances (any value where ``k = 1``: weight 0) and seed counts.
    sigma0_2 : float
        The pilot GP's noise variance, same scale as ``s2``.

    Returns
    -------
    float
    """
    dof = np.maximum(np.asarray(k, dtype=float) - 1.0, 0.0)  # (n,)
    return float((dof @ np.asarray(s2, dtype=float) + PRIOR_DOF * sigma0_2)
                 / (dof.sum() + PRIOR_DOF))


def variance_observations(s2: np.ndarray, k: np.ndarray, sigma0_2: float | None,
                          ybar: np.ndarray | None = None) -> np.ndarray:
    """The variance GP's observations: ``s2`` where ``k >= 2``, ``sigma_hat^2`` where ``k = 1``.

    Parameters
    ----------
    s2, k : numpy.ndarray
        ``(n,)`` sample variances and seed counts.
    sigma0_2 : float or None
        The pilot GP's noise variance (raw scale of the returns, squared); None: none was
        fitted, :func:`pilot_noise` of ``ybar`` (read only when some ``k`` is 1).
    ybar : numpy.ndarray, optional
        ``(n,)`` sample means (needed only with ``sigma0_2`` None).

    Returns
    -------
    numpy.ndarray
        ``(n,)``; ``s2`` itself (the same object) when no ``k`` is 1.
    """
    one = np.asarray(k) < 2  # (n,)
    if not one.any():
        return s2
    out = np.array(s2, dtype=float)
    out[one] = pooled_variance(s2, k, pilot_noise(sigma0_2, ybar))
    return out
