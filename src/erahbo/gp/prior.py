"""Priors of the GP hyperparameters (paper Sec. 3.1).

BoTorch's dimension-scaled priors (Hvarfner et al., 2024): lengthscale
``LogNormal(sqrt(2) + 0.5 ln d, sqrt(3))`` with ``lengthscale >= 0.025``; for a GP whose noise
is learned (the variance GP), noise ``LogNormal(-4, 1)`` with ``noise >= 1e-4``.  The MAP fit
under these priors is :func:`erahbo.gp.fit.fit_map`.
"""

from __future__ import annotations

import math

import numpy as np

__all__ = [
    "FLAT_LENGTHSCALE",
    "LENGTHSCALE_MAX",
    "LENGTHSCALE_MIN",
    "NOISE_MAX",
    "NOISE_MIN",
    "NOISE_PRIOR",
    "lengthscale_log_mode",
    "lengthscale_prior",
    "lognormal_logpdf",
]

LENGTHSCALE_MIN = 0.025  # BoTorch's lower bound on lengthscales
LENGTHSCALE_MAX = 1e4
# a GP whose every lengthscale exceeds this (unit cube) sees no input that matters: an RBF
# correlation of exp(-1/8) = 0.88 across a whole dimension (erahbo.gp.fit.kept_hyper)
FLAT_LENGTHSCALE = 2.0
NOISE_MIN = 1e-4  # BoTorch's lower bound on an inferred (homoscedastic) noise variance
NOISE_MAX = 1e2
NOISE_PRIOR = (-4.0, 1.0)  # LogNormal(loc, scale) of the noise variance


def lengthscale_prior(d: int) -> tuple[float, float]:
    """``(loc, scale)`` of BoTorch's LogNormal lengthscale prior for ``d`` inputs."""
    return math.sqrt(2.0) + 0.5 * math.log(max(d, 1)), math.sqrt(3.0)


def lengthscale_log_mode(d: int) -> float:
    """The log of the lengthscale prior's mode for ``d`` inputs, ``loc - scale^2``, not below
    the log of :data:`LENGTHSCALE_MIN`: where the MAP fit starts, and the lengthscales the
    models read before their first fit."""
    loc, scale = lengthscale_prior(d)
    return max(loc - scale**2, math.log(LENGTHSCALE_MIN))


def lognormal_logpdf(x: np.ndarray, loc: float, scale: float) -> tuple[np.ndarray, np.ndarray]:
    """Log density of ``LogNormal(loc, scale)`` at ``x (p,)`` and its derivative in ``log x``.

    Returns two ``(p,)`` arrays: ``log p(x)`` and ``d log p(x) / d log x``.
    """
    lx = np.log(x)
    z = (lx - loc) / scale
    logp = -lx - math.log(scale * math.sqrt(2.0 * math.pi)) - 0.5 * z * z
    return logp, -1.0 - z / scale
