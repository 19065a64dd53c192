"""MAP hyperparameters of the round's two GPs (paper: fitted once, on the initial design)."""

from __future__ import annotations

import numpy as np

from erahbo.acquisition import ucb_var
from erahbo.models import ExactGP, standardize
from erahbo.prior import fit_map
from erahbo.surrogate.base import RoundSettings, fixed_noise

__all__ = ["fit_hyperparameters"]


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
    the evaluated points gives the mean GP's fixed noise (eq. 19), under which the mean
    GP's lengthscales are fitted.

    Parameters
    ----------
    X : numpy.ndarray
        ``(n, dim)`` evaluated configurations.
    ybar, s2, k : numpy.ndarray
        ``(n,)`` pooled sample means, variances and seed counts.
    kind : {"rbf", "matern52"}
    beta : float
        Confidence parameter of ``UCB^var`` in eq. 19.
    rho_max2 : float or None
        See :class:`RoundSettings`.
    seed : int
        Seed of the random restarts.

    Returns
    -------
    RoundSettings
    """
    X = np.asarray(X, dtype=float)
    mv, sv = standardize(s2)
    yv = (np.asarray(s2, dtype=float) - mv) / sv
    hv = fit_map(X, yv, kind=kind, fixed_noise=None, seed=seed)
    gp_v = ExactGP(X, yv, hv.noise, hv.lengthscales, kind)
    mu, var = gp_v.predict(X)
    ucbv = mv + sv * ucb_var(mu, np.sqrt(var), beta)  # eq. 17 (standardized scale)
    rho2 = float(rho_max2) if rho_max2 is not None else float(np.max(s2))
    mf, sf = standardize(ybar)
    D = fixed_noise(ucbv, rho2, np.asarray(k, dtype=float), sf)
    hf = fit_map(
        X, (np.asarray(ybar, dtype=float) - mf) / sf, kind=kind, fixed_noise=D, seed=seed + 1
    )
    return RoundSettings(hyper_f=hf, hyper_v=hv, beta=beta, rho_max2=rho_max2)
