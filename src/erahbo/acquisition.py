"""Confidence bounds and acquisition functions (paper eqs. 6-10 and Appendix A).

Convention for ``beta`` (as in BoTorch and the RAHBO reference code): a confidence bound is

    ``UCB(x) = mu(x) + sqrt(beta) * sigma(x)``,   ``LCB(x) = mu(x) - sqrt(beta) * sigma(x)``,

so the paper's ``beta = 2.5`` means 1.58 posterior standard deviations and ``beta_stop = 1``
means one.  The paper's ``beta_t`` multiplies ``sigma`` directly (Lemma 1); our ``beta`` is its
square.

>>> round(ucb_mv(mu_f=1.0, sd_f=0.1, mu_var=0.2, sd_var=0.05, alpha=1.0, beta=1.0), 6)
0.95

All functions broadcast over arrays of candidates (shape ``(m,)``).
"""

from __future__ import annotations

import math

import numpy as np

__all__ = [
    "incumbent_lcb",
    "lcb",
    "lcb_f",
    "lcb_mv",
    "lcb_var",
    "rahbo_acquisition",
    "ucb",
    "ucb_f",
    "ucb_mv",
    "ucb_var",
]

ArrayLike = float | np.ndarray


def _check_beta(beta: float, name: str = "beta") -> float:
    beta = float(beta)
    if not beta >= 0.0:
        raise ValueError(f"{name}={beta} must be >= 0 (a bound is mu +- sqrt({name}) * sigma)")
    return beta


def ucb(mu: ArrayLike, sd: ArrayLike, beta: float) -> ArrayLike:
    """Upper confidence bound ``mu + sqrt(beta) * sd``."""
    return mu + math.sqrt(_check_beta(beta)) * sd


def lcb(mu: ArrayLike, sd: ArrayLike, beta: float) -> ArrayLike:
    """Lower confidence bound ``mu - sqrt(beta) * sd``."""
    return mu - math.sqrt(_check_beta(beta)) * sd


def ucb_f(mu_f: ArrayLike, sd_f: ArrayLike, beta: float) -> ArrayLike:
    """``UCB_t^f(x)`` of the mean GP (eq. ucb_lcb_f); GP-UCB maximizes it."""
    return ucb(mu_f, sd_f, beta)


def lcb_f(mu_f: ArrayLike, sd_f: ArrayLike, beta: float) -> ArrayLike:
    """``LCB_t^f(x)`` of the mean GP (eq. ucb_lcb_f)."""
    return lcb(mu_f, sd_f, beta)


def ucb_var(mu_var: ArrayLike, sd_var: ArrayLike, beta: float) -> ArrayLike:
    """``UCB_t^var(x)`` of the variance GP (eq. ucb_lcb_var)."""
    return ucb(mu_var, sd_var, beta)


def lcb_var(mu_var: ArrayLike, sd_var: ArrayLike, beta: float) -> ArrayLike:
    """``LCB_t^var(x)`` of the variance GP (eq. ucb_lcb_var); not clipped at 0, as in the paper."""
    return lcb(mu_var, sd_var, beta)


def ucb_mv(
    mu_f: ArrayLike,
    sd_f: ArrayLike,
    mu_var: ArrayLike,
    sd_var: ArrayLike,
    alpha: float,
    beta: float,
) -> ArrayLike:
    """``UCB_t^MV(x) = UCB_t^f(x) - alpha * LCB_t^var(x)`` (Sec. 3.2).

    Parameters
    ----------
    mu_f, sd_f : float or numpy.ndarray
        ``(m,)`` posterior mean and standard deviation of the mean GP (raw scale).
    mu_var, sd_var : float or numpy.ndarray
        ``(m,)`` posterior mean and standard deviation of the variance GP (raw scale).
    alpha : float
        Risk aversion ``alpha >= 0``.
    beta : float
        Confidence parameter (``sqrt(beta)`` standard deviations).

    Returns
    -------
    float or numpy.ndarray
        ``(m,)`` upper bounds of ``MV(x) = f(x) - alpha * rho^2(x)``.
    """
    return ucb_f(mu_f, sd_f, beta) - alpha * lcb_var(mu_var, sd_var, beta)


def lcb_mv(
    mu_f: ArrayLike,
    sd_f: ArrayLike,
    mu_var: ArrayLike,
    sd_var: ArrayLike,
    alpha: float,
    beta: float,
) -> ArrayLike:
    """``LCB_t^MV(x) = LCB_t^f(x) - alpha * UCB_t^var(x)`` (Sec. 3.2); see :func:`ucb_mv`."""
    return lcb_f(mu_f, sd_f, beta) - alpha * ucb_var(mu_var, sd_var, beta)


def rahbo_acquisition(
    mu_f: ArrayLike,
    sd_f: ArrayLike,
    mu_var: ArrayLike,
    sd_var: ArrayLike,
    alpha: float,
    beta: float,
) -> ArrayLike:
    """RAHBO/ERAHBO acquisition ``UCB_t^f(x) - alpha * LCB_t^var(x)`` (eq. rahbo_acq).

    Identical to :func:`ucb_mv`; with ``alpha = 0`` it is GP-UCB's ``UCB_t^f``.
    """
    return ucb_mv(mu_f, sd_f, mu_var, sd_var, alpha, beta)


def incumbent_lcb(
    mu_f: np.ndarray,
    sd_f: np.ndarray,
    mu_var: np.ndarray,
    sd_var: np.ndarray,
    alpha: float,
    beta_stop: float,
) -> tuple[float, int]:
    """Incumbent lower bound ``B_t = max_{x in D_{t-1}} LCB_t^MV(x)`` (eq. inc_lcb).

    Parameters
    ----------
    mu_f, sd_f, mu_var, sd_var : numpy.ndarray
        ``(n,)`` posteriors at the evaluated configurations ``D_{t-1}`` (raw scale).
    alpha : float
        Risk aversion.
    beta_stop : float
        Confidence parameter of the stopping rule (``sqrt(beta_stop)`` standard deviations).

    Returns
    -------
    B_t : float
        The incumbent lower bound.
    index : int
        Position of the maximizer in the arrays (lowest index on ties).
    """
    values = np.atleast_1d(lcb_mv(mu_f, sd_f, mu_var, sd_var, alpha, beta_stop))
    if values.size == 0:
        raise ValueError("incumbent_lcb: no evaluated configurations yet")
    i = int(np.argmax(values))
    return float(values[i]), i
