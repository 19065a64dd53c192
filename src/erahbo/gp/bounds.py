"""The paper's numbered equations on GP posteriors, each one function that every engine runs.

Equation numbers are those of the paper (``erahbo-paper.tex``, numbered as LaTeX numbers them):

=======  =================================================  ====================================
eq.      quantity                                           function
=======  =================================================  ====================================
(5)      ``MV(x) = f(x) - alpha rho^2(x)``                  :func:`mean_variance`
(8)      RAHBO acquisition ``UCB^f - alpha LCB^var``        :func:`rahbo_acquisition` (gradient:
                                                            :func:`rahbo_acquisition_grad`)
(9)      ``UCB^MV``, ``LCB^MV``                             :func:`ucb_mv`, :func:`lcb_mv`
(10)     incumbent bound ``B_t = max_{D_{t-1}} LCB^MV``     :func:`incumbent_lcb`
(12)     stopping rule ``UCB^MV(x_t; k) <= B_t``            :func:`adaptive_rule`
(15-16)  ``UCB^f``, ``LCB^f``                               :func:`ucb_f`, :func:`lcb_f`
(17-18)  ``UCB^var``, ``LCB^var``                           :func:`ucb_var`, :func:`lcb_var`
(19)     ``Sigma_hat = diag(min(UCB^var(x_s), rho_max^2)    :func:`sigma_hat`
         / k_s)``, the mean GP's noise
=======  =================================================  ====================================

**The variance GP's output scale.** Under ``var_noise = "log"`` (:mod:`erahbo.gp.variance_noise`)
the variance GP models ``log rho^2``: its posterior ``N(m, s^2)`` gives ``rho^2`` through
:func:`to_variance`, the one place where a value of the variance GP becomes a variance
(``exp``, monotone: a bound maps to a bound); :func:`variance_bounds` gives the estimate and
both bounds. The functions of eqs. 8-10 take the flag ``log_var`` and apply it to the variance
bound they combine; without it (``"fitted"``, ``"chi2"``) they compute what they always did.

Each function takes Python floats (ERAHBO's inner loop, once per extra seed) or arrays of the
same shape, ``(m,)`` over candidates or ``(n,)`` over evaluated points, and computes both in the
same order, so a value does not depend on which engine or path asked for it.

**The risk measure.** The paper's objective is MV (eq. 5); a study may choose another measure
over seeds (:mod:`erahbo.risk`: mean - c std, CVaR, a quantile), each increasing in ``f`` and
non-increasing in ``rho^2``. The functions of eqs. 5, 8, 9 and 10 take it as ``risk`` (a
:class:`erahbo.risk.RiskMeasure`, or a float: MV's ``alpha``, as before) and combine the two
GPs' bounds with its :meth:`~erahbo.risk.RiskMeasure.value`: ``UCB^rho = value(UCB^f,
LCB^var)``, ``LCB^rho = value(LCB^f, UCB^var)`` (eq. 9's structure; MV: the same
floating-point operations as ``UCB^f - alpha LCB^var``). The names keep the paper's ``mv``.

The round models
(:mod:`erahbo.gp.round`: the reference engine and the fast one) supply posteriors and call
these functions for every bound they report; the fast engine prunes candidates with the same
functions evaluated at upper bounds of a standard deviation (each bound is monotone in it).
The argmax of eq. 11 is the engines' ``select`` (finite tables) and
:func:`erahbo.gp.argmax.continuous_argmax`; the schedules of ``beta_stop`` (eqs. 35-36) are a
strategy part (:mod:`erahbo.optimizer.beta_stop`).

Convention for ``beta`` (as in BoTorch and the RAHBO reference code): a confidence bound is

    ``UCB(x) = mu(x) + sqrt(beta) * sigma(x)``,   ``LCB(x) = mu(x) - sqrt(beta) * sigma(x)``,

so the paper's ``beta = 2.5`` means 1.58 posterior standard deviations and ``beta_stop = 1``
means one.  The paper's ``beta_t`` multiplies ``sigma`` directly (eq. 14); our ``beta`` is its
square.

>>> round(ucb_mv(mu_f=1.0, sd_f=0.1, mu_var=0.2, sd_var=0.05, risk=1.0, beta=1.0), 6)
0.95
"""

from __future__ import annotations

import math

import numpy as np

from erahbo.risk import RiskLike, as_risk

__all__ = [
    "LOG_EXP_MAX",
    "adaptive_rule",
    "incumbent_lcb",
    "lcb",
    "lcb_f",
    "lcb_mv",
    "lcb_var",
    "mean_variance",
    "rahbo_acquisition",
    "rahbo_acquisition_grad",
    "sigma_hat",
    "to_variance",
    "ucb",
    "ucb_f",
    "ucb_mv",
    "ucb_var",
    "variance_bounds",
    "variance_spread_share",
]

ArrayLike = float | np.ndarray
#: Largest exponent :func:`to_variance` takes (``e^700 ~ 1e304``): a bound stays finite.
LOG_EXP_MAX = 700.0


def _bad_beta(beta: float) -> ValueError:
    return ValueError(f"beta={beta} must be >= 0 (a bound is mu +- sqrt(beta) * sigma)")


def ucb(mu: ArrayLike, sd: ArrayLike, beta: float) -> ArrayLike:
    """Upper confidence bound ``mu + sqrt(beta) * sd`` (eq. 14; floats or ``(m,)`` arrays)."""
    if not beta >= 0.0:
        raise _bad_beta(beta)
    return mu + math.sqrt(beta) * sd


def lcb(mu: ArrayLike, sd: ArrayLike, beta: float) -> ArrayLike:
    """Lower confidence bound ``mu - sqrt(beta) * sd`` (eq. 14; floats or ``(m,)`` arrays)."""
    if not beta >= 0.0:
        raise _bad_beta(beta)
    return mu - math.sqrt(beta) * sd


# ---------------------------------------------------------------- eq. (5)
def mean_variance(f: ArrayLike, var: ArrayLike, risk: RiskLike) -> ArrayLike:
    """``MV = f - alpha * rho^2`` (eq. 5) of means ``f`` and variances ``var``, shapes ``(n,)``;
    the value of the study's risk measure ``risk`` (a float: MV's ``alpha``).

    Applied to sample means and variances it is the sample MV (random search's recommendation
    before any model fit, the racing ablation); to posterior means, the reported
    ``incumbent_mv``.
    """
    return as_risk(risk).value(f, var)


def variance_spread_share(ybar: np.ndarray, s2: np.ndarray, risk: RiskLike) -> float:
    """The variance term's share of the spread of the sample measure over configurations.

    ``b / (a + b)`` with ``a`` the variance over the rows of ``value(ybar_i, mean(s2))`` and
    ``b`` that of ``value(mean(ybar), s2_i)`` (:func:`mean_variance`): how much of what tells
    the configurations apart is their spread between seeds rather than their mean. Under MV,
    ``alpha^2 var(s2) / (var(ybar) + alpha^2 var(s2))``. 0 where both are 0 (and for a
    risk-neutral measure).

    Parameters
    ----------
    ybar, s2 : numpy.ndarray
        ``(m,)`` sample means and sample variances of the configurations (rows with 2 or more
        seeds: a one-seed row has no sample variance).
    risk : erahbo.risk.RiskMeasure or float

    Returns
    -------
    float
        The share, in ``[0, 1]``.

    >>> round(variance_spread_share(np.array([0.0, 1.0]), np.array([0.1, 0.3]), 10.0), 3)
    0.8
    """
    ybar, s2 = np.asarray(ybar, dtype=float), np.asarray(s2, dtype=float)
    a = float(np.var(mean_variance(ybar, float(np.mean(s2)), risk)))
    b = float(np.var(mean_variance(float(np.mean(ybar)), s2, risk)))
    return b / (a + b) if a + b > 0.0 else 0.0


# ---------------------------------------------------------------- eqs. (15)-(18)
def ucb_f(mu_f: ArrayLike, sd_f: ArrayLike, beta: float) -> ArrayLike:
    """``UCB_t^f(x)`` of the mean GP (eq. 15); GP-UCB maximizes it.  Shapes ``(m,)`` or floats."""
    return ucb(mu_f, sd_f, beta)


def lcb_f(mu_f: ArrayLike, sd_f: ArrayLike, beta: float) -> ArrayLike:
    """``LCB_t^f(x)`` of the mean GP (eq. 16).  Shapes ``(m,)`` or floats."""
    return lcb(mu_f, sd_f, beta)


def ucb_var(mu_var: ArrayLike, sd_var: ArrayLike, beta: float) -> ArrayLike:
    """``UCB_t^var(x)`` of the variance GP (eq. 17).  Shapes ``(m,)`` or floats."""
    return ucb(mu_var, sd_var, beta)


def lcb_var(mu_var: ArrayLike, sd_var: ArrayLike, beta: float) -> ArrayLike:
    """``LCB_t^var(x)`` of the variance GP (eq. 18); not clipped at 0, as in the paper."""
    return lcb(mu_var, sd_var, beta)


def to_variance(value: ArrayLike, std_var: tuple[float, float] | None = None,
                log_var: bool = False) -> ArrayLike:
    """``rho^2`` of a value of the variance GP's output (its posterior mean or a bound).

    ``std_var`` ``(mean, std)``: the value is on the GP's standardized scale, mapped back first
    (``mean + std * value``); then, under ``log_var`` (``var_noise = "log"``: the GP models
    ``log rho^2``), ``exp`` of it (exponent capped at :data:`LOG_EXP_MAX`). Monotone
    increasing: an upper (lower) bound of the GP's output gives one of ``rho^2``, and the
    posterior mean its median. Floats (the inner loop) or ``(m,)`` arrays.
    """
    if std_var is not None:
        value = std_var[0] + std_var[1] * value
    if not log_var:
        return value
    if isinstance(value, np.ndarray):
        return np.exp(np.minimum(value, LOG_EXP_MAX))
    return math.exp(min(float(value), LOG_EXP_MAX))


def variance_bounds(mu_var: ArrayLike, sd_var: ArrayLike, beta: float,
                    log_var: bool = False) -> tuple[ArrayLike, ArrayLike, ArrayLike]:
    """``(estimate, LCB^var, UCB^var)`` of ``rho^2`` from the variance GP's raw posterior.

    ``"fitted"`` / ``"chi2"``: ``(mu, mu - sqrt(beta) sd, mu + sqrt(beta) sd)`` (eqs. 17-18);
    ``log_var``: ``(exp(m), exp(m - sqrt(beta) s), exp(m + sqrt(beta) s))`` with ``m, s`` the
    posterior of ``log rho^2`` (the estimate is its median). Floats or ``(m,)`` arrays.
    """
    return (to_variance(mu_var, None, log_var),
            to_variance(lcb_var(mu_var, sd_var, beta), None, log_var),
            to_variance(ucb_var(mu_var, sd_var, beta), None, log_var))


# ---------------------------------------------------------------- eq. (19)
def sigma_hat(ucb_var: ArrayLike, rho_max2: float, k: ArrayLike) -> ArrayLike:
    """Diagonal of ``Sigma_hat`` (eq. 19): ``min(UCB^var(x_s), rho_max^2) / k_s``.

    Parameters
    ----------
    ucb_var : float or numpy.ndarray
        ``(n,)`` ``UCB^var`` at the evaluated points (raw scale of the returns, squared).
    rho_max2 : float
        ``rho_max^2``, the upper bound on the noise variance (raw scale).
    k : float or numpy.ndarray
        ``(n,)`` seed counts.

    Returns
    -------
    float or numpy.ndarray
        ``(n,)`` noise variances of the sample means (raw scale).
    """
    # Python's min for one float (ERAHBO's inner loop): same value, no NumPy call overhead
    cap = np.minimum if isinstance(ucb_var, np.ndarray) else min
    return cap(ucb_var, rho_max2) / k


# ---------------------------------------------------------------- eqs. (8), (9)
Standardization = tuple[float, float]  # (mean, std) of a GP's output standardization


def ucb_mv(
    mu_f: ArrayLike,
    sd_f: ArrayLike,
    mu_var: ArrayLike,
    sd_var: ArrayLike,
    risk: RiskLike,
    beta: float,
    std_f: Standardization | None = None,
    std_var: Standardization | None = None,
    log_var: bool = False,
    beta_var: float | None = None,
) -> ArrayLike:
    """``UCB_t^MV(x) = UCB_t^f(x) - alpha * LCB_t^var(x)`` (eq. 9).

    Parameters
    ----------
    mu_f, sd_f : float or numpy.ndarray
        ``(m,)`` posterior mean and standard deviation of the mean GP (raw scale, or the GP's
        standardized scale when ``std_f`` is given).
    mu_var, sd_var : float or numpy.ndarray
        ``(m,)`` posterior mean and standard deviation of the variance GP (likewise).
    risk : erahbo.risk.RiskMeasure or float
        The risk measure (a float: MV's risk aversion ``alpha >= 0``).
    beta : float
        Confidence parameter (``sqrt(beta)`` standard deviations).
    std_f, std_var : (float, float) or None
        ``(mean, std)`` of the GP's output standardization when its posterior is given on the
        standardized scale: its bound is computed there and mapped back, ``mean + std * bound``
        (a bound is equivariant under this positive affine map).  None: raw posteriors.
    log_var : bool
        The variance GP models ``log rho^2`` (``var_noise = "log"``): its bound is mapped by
        :func:`to_variance`.
    beta_var : float, optional
        Confidence parameter of ``LCB^var`` when it differs from ``beta`` (the paper's analysis
        keeps ``beta^f`` and ``beta^var`` apart: App. "Finite-sample certificates", eq.
        k_suff; the one-seed stopping bound, :func:`erahbo.gp.round.one_seed_bound`). None:
        ``beta``.

    Returns
    -------
    float or numpy.ndarray
        ``(m,)`` upper bounds of ``MV(x) = f(x) - alpha * rho^2(x)`` (raw scale), or of the
        measure ``risk``: ``risk.value(UCB^f, LCB^var)``.
    """
    up_f = ucb_f(mu_f, sd_f, beta)
    lo_var = lcb_var(mu_var, sd_var, beta if beta_var is None else beta_var)
    if std_f is not None:  # mapped back to the raw scale (inline: the inner loop's hot path)
        up_f = std_f[0] + std_f[1] * up_f
    if std_var is not None or log_var:
        lo_var = to_variance(lo_var, std_var, log_var)
    return as_risk(risk).value(up_f, lo_var)


def lcb_mv(
    mu_f: ArrayLike,
    sd_f: ArrayLike,
    mu_var: ArrayLike,
    sd_var: ArrayLike,
    risk: RiskLike,
    beta: float,
    std_f: Standardization | None = None,
    std_var: Standardization | None = None,
    log_var: bool = False,
) -> ArrayLike:
    """``LCB_t^MV(x) = LCB_t^f(x) - alpha * UCB_t^var(x)`` (eq. 9); see :func:`ucb_mv`."""
    lo_f, up_var = lcb_f(mu_f, sd_f, beta), ucb_var(mu_var, sd_var, beta)
    if std_f is not None:
        lo_f = std_f[0] + std_f[1] * lo_f
    if std_var is not None or log_var:
        up_var = to_variance(up_var, std_var, log_var)
    return as_risk(risk).value(lo_f, up_var)


def rahbo_acquisition(
    mu_f: ArrayLike,
    sd_f: ArrayLike,
    mu_var: ArrayLike,
    sd_var: ArrayLike,
    risk: RiskLike,
    beta: float,
    std_f: Standardization | None = None,
    std_var: Standardization | None = None,
    log_var: bool = False,
    beta_var: float | None = None,
) -> ArrayLike:
    """RAHBO/ERAHBO acquisition ``UCB_t^f(x) - alpha * LCB_t^var(x)`` (eq. 8), shapes ``(m,)``.

    The same quantity as ``UCB^MV`` (eq. 9: :func:`ucb_mv` computes it, arguments as there);
    with ``alpha = 0`` it is GP-UCB's ``UCB_t^f``.  It is increasing in ``sd_f`` and in
    ``sd_var`` (for ``alpha >= 0``, and for every measure of :mod:`erahbo.risk`), so evaluated
    at upper bounds of the standard deviations it
    bounds the acquisition from above (the fast engine's pruned argmax; ``log_var``: ``exp`` is
    increasing, so ``LCB^var`` still decreases in ``sd_var``).  Its gradient is
    :func:`rahbo_acquisition_grad`. ``beta_var`` (None: ``beta``) is the confidence of its
    ``LCB^var`` alone (the option ``acquisition_beta_var``,
    :mod:`erahbo.optimizer.acquisition_confidence`).
    """
    return ucb_mv(mu_f, sd_f, mu_var, sd_var, risk, beta, std_f, std_var, log_var, beta_var)


def rahbo_acquisition_grad(
    sd_f: float,
    dmu_f: np.ndarray,
    dvar_f: np.ndarray,
    sd_var: float,
    dmu_var: np.ndarray,
    dvar_var: np.ndarray,
    risk: RiskLike,
    beta: float,
    std_f: Standardization | None = None,
    std_var: Standardization | None = None,
    mu_f: float = 0.0,
    mu_var: float = 0.0,
    log_var: bool = False,
    beta_var: float | None = None,
) -> np.ndarray:
    """Gradient in ``x`` of :func:`rahbo_acquisition` (eq. 8) at one point, shape ``(d,)``.

    With ``d sd = d var / (2 sd)``, the gradient of ``UCB^f - alpha LCB^var`` is
    ``s_f (d mu_f + sqrt(beta) d var_f / (2 sd_f))
    - alpha s_var (d mu_var - sqrt(beta_var) d var_var / (2 sd_var))``, ``s`` the ``std`` of a
    GP's standardization (1 for raw posteriors). For a measure ``value(UCB^f, LCB^var)`` the
    chain rule weighs the two terms by its partial derivatives
    (:meth:`erahbo.risk.RiskMeasure.grad`: ``(1, -alpha)`` for MV, the same operations).

    Parameters
    ----------
    sd_f, sd_var : float
        Posterior standard deviations at the point (> 0).
    dmu_f, dvar_f, dmu_var, dvar_var : numpy.ndarray
        ``(d,)`` gradients of the posterior means and variances.
    risk, beta, std_f, std_var
        As in :func:`rahbo_acquisition`.
    mu_f, mu_var : float
        Posterior means at the point (on the scale of ``sd_f``, ``sd_var``), where the
        measure's derivatives are taken (MV's do not depend on them).
    log_var : bool
        The variance GP models ``log rho^2``: ``LCB^var = exp(L)``, whose gradient is
        ``exp(L)`` times that of ``L`` (the chain rule through :func:`to_variance`).
    beta_var : float or None
        Confidence of ``LCB^var`` (None: ``beta``), as in :func:`rahbo_acquisition`.

    Returns
    -------
    numpy.ndarray
        ``(d,)`` gradient of the (raw-scale) acquisition.
    """
    b_var = beta if beta_var is None else beta_var
    r, r_var = math.sqrt(beta), math.sqrt(b_var)
    s_f = 1.0 if std_f is None else std_f[1]
    s_var = 1.0 if std_var is None else std_var[1]
    m = as_risk(risk)
    up_f, lo_var = ucb_f(mu_f, sd_f, beta), lcb_var(mu_var, sd_var, b_var)
    if std_f is not None:
        up_f = std_f[0] + std_f[1] * up_f
    if std_var is not None or log_var:
        lo_var = to_variance(lo_var, std_var, log_var)
    g_f, g_var = m.grad(up_f, lo_var)
    if log_var:
        s_var = s_var * lo_var
    return g_f * s_f * (dmu_f + r * dvar_f / (2 * sd_f)) + g_var * s_var * (
        dmu_var - r_var * dvar_var / (2 * sd_var)
    )


# ---------------------------------------------------------------- eqs. (10), (12)
def incumbent_lcb(
    mu_f: np.ndarray,
    sd_f: np.ndarray,
    mu_var: np.ndarray,
    sd_var: np.ndarray,
    risk: RiskLike,
    beta_stop: float,
    mask: np.ndarray | None = None,
    log_var: bool = False,
) -> tuple[float, int]:
    """Incumbent lower bound ``B_t = max_{x in D_{t-1}} LCB_t^MV(x)`` (eq. 10).

    Parameters
    ----------
    mu_f, sd_f, mu_var, sd_var : numpy.ndarray
        ``(n,)`` posteriors at the evaluated configurations ``D_{t-1}`` (raw scale).
    risk : erahbo.risk.RiskMeasure or float
        The risk measure (a float: MV's ``alpha``).
    beta_stop : float
        Confidence parameter of the stopping rule (``sqrt(beta_stop)`` standard deviations).
    mask : numpy.ndarray or None
        ``(n,)`` bool, the rows that may be the incumbent (None: all).
    log_var : bool
        The variance GP models ``log rho^2`` (see :func:`ucb_mv`).

    Returns
    -------
    B_t : float
        The incumbent lower bound (``-inf`` when ``mask`` leaves no row).
    index : int
        Position of the maximizer in the arrays (lowest index on ties; -1 when none is left).
    """
    values = np.atleast_1d(lcb_mv(mu_f, sd_f, mu_var, sd_var, risk, beta_stop,
                                  log_var=log_var))
    if values.size == 0:
        raise ValueError("incumbent_lcb: no evaluated configurations yet")
    if mask is not None:
        values = np.where(mask, values, -np.inf)
    i = int(np.argmax(values))
    return (float(values[i]), i) if np.isfinite(values[i]) else (-np.inf, -1)


def adaptive_rule(ucb_mv_k: float, B_t: float) -> bool:
    """ERAHBO's stopping rule (eq. 12): stop when ``UCB_t^MV(x_t; k) <= B_t``.

    Parameters
    ----------
    ucb_mv_k : float
        Upper bound of ``MV(x_t)`` after the ``k`` seeds seen so far (with ``beta_stop``).
    B_t : float
        Incumbent lower bound (eq. 10), fixed during the round.

    Returns
    -------
    bool
        True when ``x_t`` is certified worse than the incumbent: no more seeds.
    """
    return bool(ucb_mv_k <= B_t)
