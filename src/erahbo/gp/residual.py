"""The variance of a one-seed configuration, from its residual (``k_min = 1``; issue 29).

RAHBO's variance GP learns ``rho^2(x)`` from sample variances, so every configuration needs two
seeds before it tells the models anything about its spread. With one seed per configuration
(``k_init = 1``, ``k_min = 1``: explore first, replicate where the stopping rule (eq. 12) says
so) the spread of a one-seed configuration is read from its **residual**: how far its return
lies from what the mean GP predicts there from the *other* configurations. For a configuration
with ``k`` seeds, sample mean ``ybar`` and leave-one-out posterior ``N(mu, v)`` of ``f`` given
the others,

    E[(ybar - mu)^2] = v + rho^2 / k,   so   rho_hat^2 = k ((ybar - mu)^2 - v)   (clipped at 0)

is unbiased before the clip and has one degree of freedom, as a two-seed sample variance has
(the variance of the residual estimate of the heteroscedastic GPs of Goldberg et al. 1998 and
Kersting et al. 2007; Binois et al. 2018 smooth a latent log-variance instead). The variance GP
then takes ``rho_hat^2`` of the one-seed configurations and the sample variances of the others
as its observations, and every equation downstream (eqs. 17, 19, 8-12) runs unchanged.

The leave-one-out posterior comes from a *pilot* mean GP: its lengthscales and homoscedastic
noise are fitted by MAP on the sample means (:func:`erahbo.gp.fit.fit_hyperparameters`, stored
as ``RoundSettings.hyper_pilot``); the noise of a configuration is ``sigma^2 / k`` with
``sigma^2`` the within-configuration variance pooled over the replicated configurations and
shrunk towards the pilot's noise with :data:`PRIOR_DOF` degrees of freedom (with no replicate
yet it is the pilot's noise). Without any one-seed configuration nothing here runs and the
models are the paper's.
"""

from __future__ import annotations

import numpy as np
from scipy.linalg import cho_solve

from erahbo.gp.exact import GPHyper, robust_cholesky, standardize
from erahbo.gp.kernels import kernel

__all__ = ["PRIOR_DOF", "loo_residual_variances", "one_seed_variance", "pooled_noise"]

#: Degrees of freedom of the pilot's noise in the pooled within-configuration variance.
PRIOR_DOF = 2.0


def one_seed_variance(
    resid: np.ndarray | float, var_f: np.ndarray | float, k: np.ndarray | float
) -> np.ndarray | float:
    """``rho_hat^2 = max(k (resid^2 - var_f), 0)`` (the module docstring's estimate).

    Parameters
    ----------
    resid : numpy.ndarray or float
        ``(n,)`` sample mean minus the posterior mean of ``f`` given the other points.
    var_f : numpy.ndarray or float
        ``(n,)`` that posterior's variance (same scale as ``resid^2``).
    k : numpy.ndarray or float
        ``(n,)`` seed counts.

    Returns
    -------
    numpy.ndarray or float
        ``(n,)`` variance estimates on the scale of ``resid^2`` (a float for floats: ``x_t`` in
        ERAHBO's inner loop).
    """
    est = k * (resid * resid - var_f)
    return np.maximum(est, 0.0) if isinstance(est, np.ndarray) else max(float(est), 0.0)


def pooled_noise(s2: np.ndarray, k: np.ndarray, pilot: float) -> float:
    """Within-configuration variance ``sigma^2`` pooled over the data, shrunk to ``pilot``.

    ``(sum_i (k_i - 1) s2_i + PRIOR_DOF pilot) / (sum_i (k_i - 1) + PRIOR_DOF)`` for ``s2, k``
    ``(n,)`` (raw scale) and the pilot GP's noise ``pilot`` (raw scale).
    """
    dof = np.maximum(np.asarray(k, dtype=float) - 1.0, 0.0)  # (n,)
    return float((dof @ np.asarray(s2, dtype=float) + PRIOR_DOF * pilot)
                 / (dof.sum() + PRIOR_DOF))


def loo_residual_variances(
    X: np.ndarray, ybar: np.ndarray, s2: np.ndarray, k: np.ndarray, pilot: GPHyper
) -> np.ndarray:
    """The variance GP's observations: ``s2`` where ``k >= 2``, ``rho_hat^2`` where ``k = 1``.

    Parameters
    ----------
    X : numpy.ndarray
        ``(n, dim)`` evaluated configurations.
    ybar, s2, k : numpy.ndarray
        ``(n,)`` sample means, sample variances (0 where ``k = 1``) and seed counts.
    pilot : GPHyper
        The pilot mean GP (lengthscales; ``noise``: homoscedastic, standardized scale of
        ``ybar``).

    Returns
    -------
    numpy.ndarray
        ``(n,)`` raw-scale variances; ``s2`` itself (the same object) when no ``k`` is 1.
    """
    k = np.asarray(k, dtype=float)
    one = k < 2  # (n,)
    if not one.any():
        return s2
    mf, sf = standardize(ybar)
    y = (np.asarray(ybar, dtype=float) - mf) / sf  # (n,)
    sigma2 = pooled_noise(s2, k, float(pilot.noise) * sf * sf) / (sf * sf)  # standardized
    nz = sigma2 / k  # (n,)
    A = kernel(X, X, pilot.lengthscales, pilot.kind)
    A[np.diag_indices_from(A)] += nz
    L, _ = robust_cholesky(A)
    Ainv = cho_solve((L, True), np.eye(len(y)))  # (n, n)
    d = np.diag(Ainv)  # (n,)
    resid = (Ainv @ y) / d  # (n,) ybar_i - mu_{-i}, standardized (Rasmussen & Williams 5.12)
    var_f = np.maximum(1.0 / d - nz, 0.0)  # (n,) var of f(x_i) given the others
    out = np.array(s2, dtype=float)
    out[one] = one_seed_variance(resid[one], var_f[one], k[one]) * sf * sf
    return out
