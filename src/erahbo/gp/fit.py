"""MAP hyperparameters of the GPs (paper Sec. 3.1: fitted once, on the initial design; erahbo
refits them as the data grow, ``refit_growth``, keeping a fit the data do not improve on).

:func:`log_marginal_likelihood` is the MAP objective (log marginal likelihood plus the log
priors of :mod:`erahbo.gp.prior`) with its gradient; :func:`fit_map` maximizes it with L-BFGS-B
from seeded restarts; :func:`fit_hyperparameters` fits the round's two GPs in order (the
variance GP, then the mean GP under the noise of eq. 19).
"""

from __future__ import annotations

import math

import numpy as np
from scipy.linalg import cho_solve
from scipy.optimize import minimize

from erahbo.gp.bounds import to_variance, ucb_var
from erahbo.gp.exact import ExactGP, GPHyper, robust_cholesky, standardize
from erahbo.gp.kernels import KERNELS, kernel_and_dlogls
from erahbo.gp.one_seed import pilot_noise, pooled_variance, variance_observations
from erahbo.gp.prior import (
    FLAT_LENGTHSCALE,
    LENGTHSCALE_MAX,
    LENGTHSCALE_MIN,
    NOISE_MAX,
    NOISE_MIN,
    NOISE_PRIOR,
    lengthscale_log_mode,
    lengthscale_prior,
    lognormal_logpdf,
)
from erahbo.gp.round import UCB_VAR_FLOOR_SHARE, RoundSettings, fixed_noise, noise_cap
from erahbo.gp.variance_noise import (
    LOG_PRIOR_SD,
    TRIGAMMA_HALF,
    chi2_scale,
    log_floor,
    log_observations,
    variance_noise,
)

__all__ = ["fit_hyperparameters", "fit_map", "kept_hyper", "log_marginal_likelihood"]


def log_marginal_likelihood(
    theta: np.ndarray,
    X: np.ndarray,
    y: np.ndarray,
    kind: str,
    fixed_noise: np.ndarray | None,
    noise_prior: tuple[float, float] = NOISE_PRIOR,
) -> tuple[float, np.ndarray]:
    """Log marginal likelihood plus log prior (the MAP objective) and its gradient.

    Parameters
    ----------
    theta : numpy.ndarray
        ``(d,)`` log lengthscales, followed by the log noise variance when ``fixed_noise``
        is None (``(d + 1,)``).
    X : numpy.ndarray
        ``(n, d)``.
    y : numpy.ndarray
        ``(n,)`` standardized outputs.
    kind : {"rbf", "matern52"}
    fixed_noise : numpy.ndarray or None
        ``(n,)`` fixed per-point noise (mean GP) or None (learn a homoscedastic noise).
    noise_prior : (float, float)
        ``(loc, scale)`` of the learned noise's LogNormal prior.

    Returns
    -------
    value : float
        ``log p(y | X, theta) + log p(theta)``.
    grad : numpy.ndarray
        Gradient with respect to ``theta``.
    """
    n, d = X.shape
    ls = np.exp(theta[:d])
    K, dK = kernel_and_dlogls(X, ls, kind)
    if fixed_noise is None:
        noise = math.exp(theta[d])
        A = K + noise * np.eye(n)
    else:
        A = K + np.diag(fixed_noise)
    L, _ = robust_cholesky(A)
    alpha = cho_solve((L, True), y)
    lml = -0.5 * y @ alpha - np.log(np.diag(L)).sum() - 0.5 * n * math.log(2 * math.pi)
    Ainv = cho_solve((L, True), np.eye(n))
    W = np.outer(alpha, alpha) - Ainv  # (n, n)
    grad = np.empty_like(theta)
    grad[:d] = 0.5 * np.einsum("ij,kji->k", W, dK)
    loc, scale = lengthscale_prior(d)
    lp, dlp = lognormal_logpdf(ls, loc, scale)
    value = lml + lp.sum()
    grad[:d] += dlp
    if fixed_noise is None:
        grad[d] = 0.5 * noise * np.trace(W)
        lpn, dlpn = lognormal_logpdf(np.array([noise]), *noise_prior)
        value += float(lpn[0])
        grad[d] += float(dlpn[0])
    return float(value), grad


def fit_map(
    X: np.ndarray,
    y: np.ndarray,
    *,
    kind: str = "rbf",
    fixed_noise: np.ndarray | None = None,
    n_restarts: int = 3,
    seed: int = 0,
    noise_prior: tuple[float, float] = NOISE_PRIOR,
) -> GPHyper:
    """MAP hyperparameters of a GP (L-BFGS-B on the log parameters).

    Starts from the prior modes (lengthscale ``exp(loc - scale^2)``, noise ``exp(loc - scale^2)``
    of ``noise_prior``: ``exp(-5)`` for BoTorch's) and
    from ``n_restarts`` draws of the priors; keeps the best log posterior.

    Parameters
    ----------
    X : numpy.ndarray
        ``(n, d)`` inputs in the unit cube.
    y : numpy.ndarray
        ``(n,)`` standardized outputs.
    kind : {"rbf", "matern52"}
    fixed_noise : numpy.ndarray or None
        ``(n,)`` fixed noise (standardized) for the mean GP; None learns a homoscedastic noise.
    n_restarts : int
        Extra random starts drawn from the priors.
    seed : int
        Seed of those draws.
    noise_prior : (float, float)
        ``(loc, scale)`` of the learned noise's LogNormal prior (BoTorch's by default).

    Returns
    -------
    GPHyper
    """
    if kind not in KERNELS:
        raise ValueError(f"fit_map: kind={kind!r} must be one of {KERNELS}")
    X = np.atleast_2d(np.asarray(X, dtype=float))
    y = np.asarray(y, dtype=float).reshape(-1)
    n, d = X.shape
    learn_noise = fixed_noise is None
    if fixed_noise is not None:
        fixed_noise = np.broadcast_to(np.asarray(fixed_noise, dtype=float), (n,)).copy()
    loc, scale = lengthscale_prior(d)
    lo = [math.log(LENGTHSCALE_MIN)] * d
    hi = [math.log(LENGTHSCALE_MAX)] * d
    mode = [lengthscale_log_mode(d)] * d
    if learn_noise:
        lo.append(math.log(NOISE_MIN))
        hi.append(math.log(NOISE_MAX))
        mode.append(noise_prior[0] - noise_prior[1] ** 2)
    bounds = list(zip(lo, hi, strict=True))
    rng = np.random.default_rng(seed)
    starts = [np.array(mode)]
    for _ in range(n_restarts):
        s = rng.normal(loc, scale, size=d)
        if learn_noise:
            s = np.append(s, rng.normal(*noise_prior))
        starts.append(np.clip(s, lo, hi))

    def neg(theta: np.ndarray) -> tuple[float, np.ndarray]:
        v, g = log_marginal_likelihood(theta, X, y, kind, fixed_noise, noise_prior)
        return -v, -g

    best_v, best_t = -np.inf, starts[0]
    if not bounds:  # nothing to fit: no input column (one candidate) and a fixed noise
        best_v = -neg(starts[0])[0]
        starts = []
    for t0 in starts:
        try:
            res = minimize(
                neg, t0, jac=True, method="L-BFGS-B", bounds=bounds, options={"maxiter": 200}
            )
        except np.linalg.LinAlgError:
            continue
        if np.isfinite(res.fun) and -res.fun > best_v:
            best_v, best_t = -float(res.fun), res.x
    ls = np.exp(best_t[:d])
    noise = float(math.exp(best_t[d])) if learn_noise else None
    return GPHyper(kind=kind, lengthscales=ls, noise=noise, log_posterior=best_v)


def kept_hyper(
    new: GPHyper,
    old: GPHyper | None,
    evidence: float,
    X: np.ndarray,
    y: np.ndarray,
    fixed: np.ndarray | None,
    noise_prior: tuple[float, float] = NOISE_PRIOR,
) -> GPHyper:
    """A refit's hyperparameters, or the previous fit's where the data do not favour the new.

    The new MAP ``new`` replaces ``old`` only when its log posterior on the current data beats
    the old hyperparameters' on the same data by at least ``evidence`` nats (0: always, a plain
    refit), and when it still sees an input that matters: a refit whose every lengthscale
    exceeds :data:`erahbo.gp.prior.FLAT_LENGTHSCALE` models a constant, and a constant cannot
    guide a search. Without the first test a refit on a few dozen configurations moves
    lengthscales on noise as readily as on signal; without the second, on a learn-or-fail task
    where most configurations fail (the surrogate of PPO MountainCar) a refit on 20
    configurations put all 12 lengthscales at 22-31, and the study stopped exploring
    (``erahbo.optimizer.refit``).

    Parameters
    ----------
    new, old : GPHyper
        The refit and the hyperparameters in use (None: nothing to keep).
    evidence : float
        Least gain in log posterior (nats) for the new fit to be used.
    X : numpy.ndarray
        ``(n, d)`` the inputs the new fit was made on.
    y : numpy.ndarray
        ``(n,)`` its standardized outputs.
    fixed : numpy.ndarray or None
        ``(n,)`` the fixed noise the fit was made under; None: a learned noise (``old.noise``
        is then part of the old hyperparameters).
    noise_prior : (float, float)
        The learned noise's prior, as in the fit.

    Returns
    -------
    GPHyper
        ``new``, or ``old``'s lengthscales (and learned noise) with their log posterior on
        the current data; ``noise`` keeps ``new.noise`` where the noise is not learned.
    """
    if old is None or evidence <= 0.0:
        return new
    ls = np.asarray(new.lengthscales, dtype=float)
    flat = bool(ls.size and ls.min() > FLAT_LENGTHSCALE)
    theta = np.log(np.asarray(old.lengthscales, dtype=float))
    if fixed is None:
        theta = np.append(theta, math.log(float(old.noise)))
    try:
        lp_old = log_marginal_likelihood(theta, X, y, new.kind, fixed, noise_prior)[0]
    except np.linalg.LinAlgError:
        return new
    if not np.isfinite(lp_old) or (new.log_posterior - lp_old >= evidence and not flat):
        return new
    return GPHyper(kind=old.kind, lengthscales=np.asarray(old.lengthscales, dtype=float),
                   noise=old.noise if fixed is None else new.noise, log_posterior=float(lp_old))


def fit_hyperparameters(
    X: np.ndarray,
    ybar: np.ndarray,
    s2: np.ndarray,
    k: np.ndarray,
    *,
    kind: str = "rbf",
    beta: float = 2.5,
    rho_max2: float | None = None,
    rho_max2_model: bool = False,
    rho_max2_spread: float = 0.0,
    seed: int = 0,
    one_seed: bool = False,
    var_noise_prior: float = NOISE_PRIOR[0],
    var_noise: str = "fitted",
    previous: RoundSettings | None = None,
    evidence: float = 0.0,
) -> RoundSettings:
    """MAP hyperparameters of both GPs on the current data (paper: on the initial design).

    The variance GP is fitted first (lengthscales and homoscedastic noise, or lengthscales
    under the known chi^2 noise, or on log sample variances under their known noise:
    ``var_noise``); its ``UCB_var`` at
    the evaluated points gives the mean GP's fixed noise (eq. 19), under which the mean GP's
    lengthscales are fitted. With one-seed configurations (``k = 1``) a pilot mean GP with
    homoscedastic noise is fitted before them (its noise is the prior of the pooled placeholder
    they get) and the variance GP on the replicated configurations only
    (:mod:`erahbo.gp.one_seed`).

    Parameters
    ----------
    X : numpy.ndarray
        ``(n, dim)`` evaluated configurations.
    ybar, s2, k : numpy.ndarray
        ``(n,)`` pooled sample means, variances and seed counts.
    kind : {"rbf", "matern52"}
    beta : float
        Confidence parameter of ``UCB^var`` in eq. 19.
    rho_max2, rho_max2_model, rho_max2_spread
        See :class:`RoundSettings`.
    seed : int
        Seed of the random restarts.
    one_seed : bool
        Fit the pilot GP even when every configuration has two seeds so far (the study may add
        one-seed configurations: ``k_min = 1``).
    var_noise_prior : float
        ``loc`` of the variance GP's LogNormal noise prior (scale as BoTorch's; default
        BoTorch's, the paper's; :mod:`erahbo.optimizer.variance_prior`). Read under
        ``var_noise = "fitted"`` only.
    var_noise : {"fitted", "chi2", "log"}
        The variance GP's observation noise (:mod:`erahbo.gp.variance_noise`): one MAP-fitted
        ``tau^2``, or the known ``2 rho_bar^4 / (k - 1)``, or a GP on bias-corrected log
        sample variances with the known noise ``psi'((k - 1) / 2)`` (only the lengthscales
        are fitted; ``hyper_v.noise`` is ``psi'(1/2) / s_v^2``, ``s_v`` the prior standard
        deviation of ``log rho^2``, :data:`erahbo.gp.variance_noise.LOG_PRIOR_SD`).
    previous : RoundSettings or None
        The hyperparameters in use (a refit): each GP keeps its previous ones unless the new
        fit beats them on the current data by ``evidence`` nats (:func:`kept_hyper`).
    evidence : float
        That least gain (``refit_evidence``; 0: a plain refit).

    Returns
    -------
    RoundSettings
    """
    X = np.asarray(X, dtype=float)
    sigma0_2 = None
    if one_seed or (np.asarray(k) < 2).any():  # one-seed configurations: erahbo.gp.one_seed
        mf, sf = standardize(ybar)
        pilot = fit_map(X, (np.asarray(ybar, dtype=float) - mf) / sf, kind=kind,
                        fixed_noise=None, seed=seed + 2)
        sigma0_2 = float(pilot.noise) * sf * sf
        s2 = variance_observations(s2, k, sigma0_2)
    kk = np.asarray(k, dtype=float)
    chi2, log = var_noise == "chi2", var_noise == "log"
    obs = np.asarray(s2, dtype=float)  # the variance GP's observations, raw units
    if log:  # bias-corrected log sample variances (erahbo.gp.variance_noise)
        floor = log_floor(pooled_variance(s2, kk, pilot_noise(sigma0_2, ybar)))
        obs = log_observations(obs, kk, floor)
    mv, sv = standardize(obs)
    if log:  # log units are free of the returns' units: a fixed prior scale (variance_noise)
        sv = LOG_PRIOR_SD
    yv = (obs - mv) / sv
    rep = np.asarray(k) >= 2  # (n,) rows with a sample variance
    fit_on = rep if 3 <= rep.sum() < len(rep) else np.ones(len(rep), dtype=bool)
    prior_v = (var_noise_prior, NOISE_PRIOR[1])  # the fitted noise's prior ("fitted")
    fixed_v = None  # the variance GP's known noise at the fitted rows ("chi2", "log")
    if log or chi2:  # the known noise (log: of a 2-seed log variance; chi2: of each sample
        # variance), standardized; only the lengthscales are fitted, under it
        tau2 = TRIGAMMA_HALF / (sv * sv) if log else chi2_scale(s2, kk, sv)
        fixed_v = variance_noise(tau2, kk[fit_on], chi2, log)
        hv = fit_map(X[fit_on], yv[fit_on], kind=kind, seed=seed, fixed_noise=fixed_v)
        hv = GPHyper(kind=hv.kind, lengthscales=hv.lengthscales, noise=tau2,
                     log_posterior=hv.log_posterior)
    else:
        hv = fit_map(X[fit_on], yv[fit_on], kind=kind, fixed_noise=None, seed=seed,
                     noise_prior=prior_v)
    if previous is not None:
        hv = kept_hyper(hv, previous.hyper_v, evidence, X[fit_on], yv[fit_on], fixed_v,
                        prior_v)
    gp_v = ExactGP(X, yv, variance_noise(hv.noise, kk, chi2, log), hv.lengthscales, kind)
    mu, var = gp_v.predict(X)
    ucbv = to_variance(ucb_var(mu, np.sqrt(var), beta), (mv, sv), log)  # eq. 17, mapped back
    rho2 = noise_cap(s2, rho_max2, rho_max2_model, mu, (mv, sv), log,  # eq. 19's cap
                     rho_max2_spread, ybar)
    mf, sf = standardize(ybar)
    ucb_floor = UCB_VAR_FLOOR_SHARE * pooled_variance(s2, kk, pilot_noise(sigma0_2, ybar))
    D = fixed_noise(ucbv, rho2, np.asarray(k, dtype=float), sf, ucb_floor)
    yf = (np.asarray(ybar, dtype=float) - mf) / sf
    hf = fit_map(X, yf, kind=kind, fixed_noise=D, seed=seed + 1)
    if previous is not None:
        hf = kept_hyper(hf, previous.hyper_f, evidence, X, yf, D)
    return RoundSettings(hyper_f=hf, hyper_v=hv, beta=beta, rho_max2=rho_max2,
                         rho_max2_model=rho_max2_model, rho_max2_spread=rho_max2_spread,
                         sigma0_2=sigma0_2, var_noise=var_noise)
