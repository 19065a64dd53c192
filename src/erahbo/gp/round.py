"""The two GPs of one BO round and the quantities RAHBO/ERAHBO read from them.

A round model is built from the data ``D_{t-1}`` at the start of a round with fixed
hyperparameters and holds, for that round:

* the output standardizations of both GPs (frozen for the round, like the hyperparameters);
* the variance GP (homoscedastic, on sample variances) and ``UCB^var`` (eq. 17) at the
  evaluated points;
* the fixed noise of the mean GP, ``Sigma_hat`` (eq. 19,
  :func:`erahbo.gp.bounds.sigma_hat`), with ``UCB^var`` at least
  :data:`UCB_VAR_FLOOR_SHARE` of the pooled within-configuration variance, divided by
  ``std_y^2`` of the mean GP's standardization (floored at
  :data:`erahbo.gp.round.MEAN_NOISE_FLOOR`): :func:`fixed_noise`;
* the mean GP with that noise.

It answers the acquisition argmax (eq. 8), the incumbent bound ``B_t`` (eq. 10) and, in
ERAHBO's inner loop, ``UCB^MV(x_t; k)`` after ``k`` seeds at ``x_t`` (eq. 12).  In the inner
loop only ``x_t``'s own observation changes: its pooled sample mean and variance, and its
mean-GP noise ``min(UCB^var(x_t), rho_max^2) / k``, where ``UCB^var(x_t)`` comes from the
variance GP updated with ``x_t``'s sample variance; the other points keep the noise computed
at the round start (``Sigma_hat_{t-1}``).  Every bound is computed by
:mod:`erahbo.gp.bounds`; the round models only supply posteriors.

Two engines give the same numbers: :class:`erahbo.gp.reference.ReferenceRound`
refactors plain GPs for every query (the test oracle);
:class:`erahbo.gp.fast.FastRound` caches kernel matrices, keeps the variance GP
incremental and prunes the candidate search with exact upper bounds.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from erahbo.gp.bounds import (
    lcb_mv,
    rahbo_acquisition,
    rahbo_acquisition_grad,
    sigma_hat,
    to_variance,
    ucb_mv,
    ucb_var,
    variance_bounds,
    variance_spread_share,
)
from erahbo.gp.exact import GPHyper, standardize
from erahbo.gp.one_seed import pilot_noise, pooled_variance
from erahbo.gp.variance_noise import log_floor, log_observations, log_scale, variance_noise
from erahbo.risk import RiskLike, RiskMeasure

__all__ = [
    "MEAN_NOISE_FLOOR",
    "MODEL_CAP_OUTLIER",
    "ONE_SEED_MIN_ROWS",
    "ONE_SEED_SHARE",
    "UCB_VAR_FLOOR_SHARE",
    "InnerBounds",
    "RoundModel",
    "RoundSettings",
    "fixed_noise",
    "model_cap",
    "noise_cap",
    "observe",
    "one_seed_bound",
    "one_seed_in_force",
    "own_run_bound",
    "spread_cap",
]

MEAN_NOISE_FLOOR = 1e-6  # floor of the fixed, standardized per-point noise of the mean GP

#: ``UCB^var`` in eq. 19 is at least this share of the pooled within-configuration variance
#: (:func:`erahbo.gp.one_seed.pooled_variance`). A variance bound is positive, but the variance
#: GP (a Gaussian on sample variances) can extrapolate below 0 between a very noisy and a quiet
#: configuration; eq. 19 then gave a one-seed configuration no noise at all, and two one-seed
#: configurations 0.0003 apart whose returns differ by 0.35 were fitted by a mean GP with weights
#: of 6e5 and a posterior mean of 8.9 where every return lay in [-0.22, 0.86] (Figure 1 in
#: CVaR_0.1, 60 runs, seed 0). Measured (docs/results/one_seed_models, "Session 23"): on the
#: real tables 957 of 960 studies unchanged; README example and continuous tasks level or
#: better.
UCB_VAR_FLOOR_SHARE = 1e-2


@dataclass(frozen=True)
class RoundSettings:
    """Fixed settings of the models.

    Attributes
    ----------
    hyper_f, hyper_v : GPHyper
        Hyperparameters of the mean GP (``noise`` None) and of the variance GP.
    beta : float
        Confidence parameter of the acquisition and of ``UCB_var`` in ``Sigma_hat``
        (``sqrt(beta)`` standard deviations).
    rho_max2 : float or None
        ``rho_max^2`` of eq. ``Sigma_hat``; None: the largest sample variance in ``D_{t-1}``,
        or with ``rho_max2_model`` the variance GP's (:func:`noise_cap`).
    sigma0_2 : float or None
        Noise variance (raw scale) of the homoscedastic pilot GP on the sample means: the
        prior of the pooled placeholder a one-seed configuration gets
        (:mod:`erahbo.gp.one_seed`); None: not fitted (every configuration had 2 seeds).
    var_noise : {"fitted", "chi2", "log"}
        The variance GP's observation noise (:mod:`erahbo.gp.variance_noise`): ``"chi2"``
        reads ``hyper_v.noise`` as the noise of a 2-seed sample variance, divided by ``k - 1``;
        ``"log"``: the GP models ``log rho^2``, ``hyper_v.noise`` is the standardized noise of
        a 2-seed log variance and fixes the GP's output scale (``log_scale``).
    rho_max2_model : bool
        Without a given ``rho_max2``, eq. 19's cap is the variance GP's largest posterior
        median over the evaluated configurations instead of their largest sample variance
        (:func:`noise_cap`).
    rho_max2_spread : float
        Without a given ``rho_max2``, eq. 19's cap is this share of the variance of the sample
        means (:func:`spread_cap`; before ``rho_max2_model``); 0: not used.
    acquisition_beta_var : float or None
        Confidence of eq. 8's ``LCB^var`` alone (None: ``beta``; the option of
        :mod:`erahbo.optimizer.acquisition_confidence`): what the acquisition and its gradient,
        the screen's bounds and the fast engine's ``select`` use.
    """

    hyper_f: GPHyper
    hyper_v: GPHyper
    beta: float = 2.5
    rho_max2: float | None = None
    sigma0_2: float | None = None
    var_noise: str = "fitted"
    rho_max2_model: bool = False
    acquisition_beta_var: float | None = None
    rho_max2_spread: float = 0.0


class InnerBounds:
    """Posterior at ``x_t`` after its seeds so far, and its MV bounds (eq. 9) with ``beta_stop``.

    One is built per extra seed of ERAHBO's inner loop (the hot path): ``ucb_mv``, which the
    stopping rule (eq. 12) reads after every seed, is computed when it is built, ``lcb_mv``
    (the round's record) when it is read.

    Parameters
    ----------
    mu_f, sd_f, mu_var, sd_var : float
        Raw-scale posterior means and standard deviations of ``f(x_t)`` and of the variance
        GP's output at ``x_t`` (``rho^2``, or ``log rho^2`` under ``log_var``).
    risk : erahbo.risk.RiskMeasure or float
        The decision's risk measure (a float: MV's ``alpha``; GP-UCB's is risk-neutral).
    beta_stop : float
        Confidence parameter of the bounds.
    log_var : bool
        The variance GP models ``log rho^2`` (``var_noise = "log"``).
    """

    __slots__ = ("beta_stop", "log_var", "mu_f", "mu_var", "risk", "sd_f", "sd_var", "ucb_mv")

    def __init__(self, mu_f: float, sd_f: float, mu_var: float, sd_var: float,
                 risk: RiskLike, beta_stop: float, log_var: bool = False) -> None:
        self.mu_f, self.sd_f, self.mu_var, self.sd_var = mu_f, sd_f, mu_var, sd_var
        self.risk, self.beta_stop, self.log_var = risk, beta_stop, log_var
        self.ucb_mv = ucb_mv(mu_f, sd_f, mu_var, sd_var, risk, beta_stop,
                             log_var=log_var)  # eq. 9

    @property
    def lcb_mv(self) -> float:
        """``LCB^MV(x_t; k)`` (eq. 9) with ``beta_stop``."""
        return lcb_mv(self.mu_f, self.sd_f, self.mu_var, self.sd_var, self.risk,
                      self.beta_stop, log_var=self.log_var)

    def __repr__(self) -> str:
        return (f"InnerBounds(ucb_mv={self.ucb_mv!r}, mu_f={self.mu_f!r}, sd_f={self.sd_f!r}, "
                f"mu_var={self.mu_var!r}, sd_var={self.sd_var!r})")


#: :func:`one_seed_in_force`: ``one_seed_optimism`` acts in a round only while the variance term
#: is more than this share of the spread of the sample measure over the replicated
#: configurations (:func:`erahbo.gp.bounds.variance_spread_share`), and only once there are at
#: least :data:`ONE_SEED_MIN_ROWS` of them (session 39's study-level gate, ``vs5``).
ONE_SEED_SHARE = 0.5
ONE_SEED_MIN_ROWS = 3


def one_seed_in_force(ybar: np.ndarray, s2: np.ndarray, k: np.ndarray, risk: RiskLike) -> bool:
    """Whether the study's data let :func:`one_seed_bound` act this round.

    The optimism after one seed pays where configurations differ mostly by their spread
    between seeds (a high risk weight, learn-or-fail returns) and costs where they differ by
    their means: it is on while, over the configurations with 2 or more seeds (at least
    :data:`ONE_SEED_MIN_ROWS`), the variance term's share of the spread of the sample measure
    is above :data:`ONE_SEED_SHARE` (docs/results/one_seed_models, sessions 39-40).

    Parameters
    ----------
    ybar, s2, k : numpy.ndarray
        ``(n,)`` sample means, sample variances and seed counts of the evaluated
        configurations.
    risk : erahbo.risk.RiskMeasure or float

    >>> import numpy as np
    >>> k = np.array([2.0, 2.0, 3.0, 1.0])
    >>> one_seed_in_force(np.array([0.0, 0.1, 0.2, 5.0]), np.array([0.1, 0.5, 0.9, 0.0]), k, 3.0)
    True
    >>> one_seed_in_force(np.array([0.0, 0.1, 0.2, 5.0]), np.array([0.1, 0.5, 0.9, 0.0]), k, 0.0)
    False
    """
    rep = np.asarray(k, dtype=float) >= 2
    if int(rep.sum()) < ONE_SEED_MIN_ROWS:
        return False
    share = variance_spread_share(np.asarray(ybar, dtype=float)[rep],
                                  np.asarray(s2, dtype=float)[rep], risk)
    return share > ONE_SEED_SHARE


#: :func:`model_cap` keeps the largest sample variance while one is more than this many times
#: the model's cap: a return far outside the others' range (a diverged run the outlier rule
#: has not bounded yet) whose row the smoothed cap would let the mean GP fit exactly.
MODEL_CAP_OUTLIER = 100.0


def model_cap(mu_v: np.ndarray, scale: tuple[float, float], log_var: bool,
              s2: np.ndarray | None = None) -> float:
    """``rho_max^2`` of eq. 19 from the variance GP: its largest posterior median of ``rho^2``
    over the evaluated configurations.

    Without a user's ``rho_max^2`` the paper's cap is the largest sample variance, and the
    largest of many 2-seed sample variances is several times the largest true variance (the
    README example, seed 3: 0.83 against 0.36), so the cap leaves a one-seed configuration far
    from the others the prior's spread and the mean GP pulls its run towards the constant mean
    (docs/results/one_seed_models, sessions 27, 37 and 40).

    Parameters
    ----------
    mu_v : numpy.ndarray
        ``(n,)`` standardized posterior means of the variance GP at the evaluated
        configurations.
    scale : tuple of float
        The variance GP's standardization ``(mean, scale)``.
    log_var : bool
        The GP models ``log rho^2`` (the mean maps to a median through ``exp``).

    >>> round(model_cap(np.array([-1.0, 0.5]), (0.0, 1.0), True), 4)
    1.6487
    >>> model_cap(np.array([-1.0, 0.5]), (0.0, 1.0), True, s2=np.array([0.2, 500.0]))
    500.0
    """
    cap = float(np.max(to_variance(np.asarray(mu_v, dtype=float), scale, log_var)))
    if s2 is not None and len(s2) and float(np.max(s2)) > MODEL_CAP_OUTLIER * cap:
        return float(np.max(s2))  # an outlying sample variance: the paper's sample maximum
    return cap


def spread_cap(ybar: np.ndarray, share: float) -> float:
    """``rho_max^2`` of eq. 19 as ``share`` of the variance of the sample means ``ybar (n,)``
    over the evaluated configurations (``rho_max2_spread``).

    Where a run either learns or fails (the RL surrogates) the variance between seeds of one
    configuration is as large as the spread of the means, and eq. 19's noise
    ``min(UCB^var, rho_max^2) / k`` then lets the mean GP explain every difference between
    configurations as noise: the likelihood is flat in the lengthscales, they stay at their
    prior's mode and the acquisition follows the posterior sd to the box's faces. A cap below
    the means' spread makes the mean GP read the differences between configurations as signal
    (docs/results/one_seed_models, sessions 48-49). Scale-free: the share is of the returns'
    own spread.

    >>> round(spread_cap(np.array([0.0, 1.0, 2.0]), 0.3), 6)
    0.2
    """
    return float(share * np.var(np.asarray(ybar, dtype=float)))


def noise_cap(s2: np.ndarray, rho_max2: float | None, from_model: bool, mu_v: np.ndarray,
              scale: tuple[float, float], log_var: bool, spread: float = 0.0,
              ybar: np.ndarray | None = None) -> float:
    """``rho_max^2`` of eq. 19 in force: the user's ``rho_max2``; without it, under
    ``rho_max2_spread`` (``spread``) that share of the variance of the sample means ``ybar
    (n,)`` (:func:`spread_cap`); else under ``rho_max2_model`` (``from_model``) the variance
    GP's (:func:`model_cap` of its standardized posterior means ``mu_v (n,)`` at the evaluated
    configurations, standardization ``scale``), else the largest of the sample variances ``s2
    (n,)`` (the paper's bound, estimated). The hyperparameter fit and both engines' rounds
    read it."""
    if rho_max2 is not None:
        return float(rho_max2)
    if spread and ybar is not None and len(ybar):
        return spread_cap(ybar, spread)
    s2 = np.asarray(s2, dtype=float)
    if from_model and s2.size:
        return model_cap(mu_v, scale, log_var, s2)
    return float(s2.max())


def one_seed_bound(ib: InnerBounds, beta: float, f_B: float = -math.inf) -> InnerBounds:
    """``ib`` after ``x_t``'s first seed, its ``ucb_mv`` with the variance at the acquisition's
    optimism where ``f`` is no worse than at ``B_t``'s configuration (``one_seed_optimism``).

    One seed measures ``f(x_t)`` and nothing of ``rho^2(x_t)`` (:mod:`erahbo.gp.one_seed`); the
    acquisition chose ``x_t`` with ``LCB^var`` at ``beta`` (eq. 8). Where ``x_t``'s posterior
    ``f`` is at least ``f_B``, the posterior ``f`` of the configuration that sets ``B_t``, eq.
    12's bound keeps that optimism, ``UCB^MV = value(UCB^f at beta_stop, LCB^var at beta)``
    (:func:`erahbo.gp.bounds.ucb_mv` with ``beta_var``): the run that measured nothing of the
    variance does not withdraw the optimism that chose the configuration, and a second seed
    goes where only the variance, still unmeasured, keeps it below ``B_t``. Where ``f`` itself
    is behind, ``ib`` is unchanged. The callers pass ``f_B = +inf`` in the rounds where the
    study's data do not let it act (:func:`one_seed_in_force`: the replicated configurations
    differ mostly by their means). (Session 38 asked instead that the variance be most of the
    measure's posterior variance at ``x_t``; the study-level gate leaves fewer per-task entries
    short on the continuous benchmark: docs/results/one_seed_models, sessions 39-40.)
    """
    if ib.mu_f >= f_B:
        ib.ucb_mv = float(ucb_mv(ib.mu_f, ib.sd_f, ib.mu_var, ib.sd_var, ib.risk, ib.beta_stop,
                                 log_var=ib.log_var, beta_var=beta))
    return ib


def own_run_bound(ib: InnerBounds, mean: float, s2: float, k: int, risk: RiskMeasure,
                  beta: float) -> InnerBounds:
    """``ib`` with its ``ucb_mv`` made the measure's stopping bound after ``k`` seeds of
    sample ``mean`` and variance ``s2`` (:meth:`erahbo.risk.RiskMeasure.stop_ucb`, with the
    variance GP's estimate of ``rho^2`` at ``x_t`` and the acquisition's ``beta``; MV's is the
    models' own float). The optimizer's rule (:func:`erahbo.optimizer.rounds.stop_bounds`) and
    the early-stop verdict (:mod:`erahbo.optimizer.early_stop`) both end a round on it."""
    model_var = float(to_variance(ib.mu_var, None, ib.log_var))  # rho^2, also under "log"
    ib.ucb_mv = risk.stop_ucb(ib.ucb_mv, mean, s2, k, model_var, beta)
    return ib


def fixed_noise(
    ucb_v: np.ndarray | float, rho_max2: float, k: np.ndarray | float, std_y: float,
    floor: float = 0.0,
) -> np.ndarray | float:
    """Standardized mean-GP noise: ``Sigma_hat`` (eq. 19) over ``std_y^2``, floored.

    Parameters
    ----------
    ucb_v : numpy.ndarray or float
        ``(n,)`` ``UCB^var`` at the points (raw scale of the returns, squared).
    rho_max2 : float
        Upper bound on the noise variance (raw scale).
    k : numpy.ndarray or float
        ``(n,)`` seed counts.
    std_y : float
        Scale of the mean GP's output standardization.
    floor : float
        Least ``UCB^var`` (raw scale; :data:`UCB_VAR_FLOOR_SHARE` of the pooled variance),
        before ``rho_max^2`` caps it.

    Returns
    -------
    numpy.ndarray or float
        ``(n,)`` noise on the standardized scale, at least ``MEAN_NOISE_FLOOR`` (a float for
        float inputs: ``x_t``'s noise in the inner loop).
    """
    if floor > 0.0:
        ucb_v = (np.maximum if isinstance(ucb_v, np.ndarray) else max)(ucb_v, floor)
    noise = sigma_hat(ucb_v, rho_max2, k) / (std_y * std_y)
    return (np.maximum if isinstance(noise, np.ndarray) else max)(noise, MEAN_NOISE_FLOOR)


def observe(mu_o: float, v_o: float, y: float, noise: float) -> tuple[float, float]:
    """Posterior of ``g(x)`` from prior ``N(mu_o, v_o)`` and one observation ``y`` with noise.

    Used for ``x_t`` in the inner loop: ``(mu_o, v_o)`` is the posterior given the other
    points, ``y`` the pooled statistic of ``x_t``.  Exact Gaussian conditioning, equal to
    refactoring the GP with ``x_t`` as the last row (a bordered Cholesky).
    """
    v_o = max(v_o, 0.0)
    gain = v_o / (v_o + noise)
    return mu_o + gain * (y - mu_o), noise * gain


class RoundModel:
    """Shared state and helpers of a round (see the module docstring)."""

    n: int
    mf: float
    sf: float
    mv: float
    sv: float
    rho2: float
    D: np.ndarray  # (n,) standardized fixed noise of the mean GP
    log_var: bool = False  # the variance GP models log rho^2 (var_noise "log")
    _batch: dict | None = None  # acquisition_grads: u.tobytes() -> its posteriors

    def _setup_stats(
        self, ybar: np.ndarray, s2: np.ndarray, k: np.ndarray, s: RoundSettings
    ) -> None:
        """Settings, seed counts ``k (n,)`` and both standardized outputs ``yf, yv (n,)``."""
        self.settings = s
        self.beta = float(s.beta)
        self.beta_var = s.acquisition_beta_var  # eq. 8's LCB^var (None: beta)
        self.tau2 = float(s.hyper_v.noise)
        self.n = len(ybar)
        self.k = np.array(k, dtype=float)  # (n,)
        self.chi2 = s.var_noise == "chi2"  # noise tau^2 / (k - 1) (erahbo.gp.variance_noise)
        self.log_var = s.var_noise == "log"  # a GP on log sample variances
        # per-row variance-GP noise: a one-seed row (erahbo.gp.one_seed), or the chi^2 noise
        self.one_seed = bool(self.n and (self.k.min() < 2 or self.chi2 or self.log_var))
        self.tv = (self.var_noise(self.k) if self.one_seed  # (n,)
                   else np.full(self.n, self.tau2))
        self.mf, self.sf = standardize(ybar)
        self._ybar, self._s2 = ybar, s2  # for s2_one, computed when asked
        if self.log_var:  # log units, the output scale fixed with the hyperparameters
            self._floor = log_floor(self.s2_one)
            obs = log_observations(np.asarray(s2, dtype=float), self.k, self._floor)
            self.mv, self.sv = standardize(obs)[0], log_scale(self.tau2)
        else:
            obs = np.asarray(s2, dtype=float)
            self.mv, self.sv = standardize(s2)
        self.yf = (np.asarray(ybar, dtype=float) - self.mf) / self.sf  # (n,)
        self.yv = (obs - self.mv) / self.sv  # (n,)
        self.ucb_floor = UCB_VAR_FLOOR_SHARE * self.s2_one  # eq. 19's least UCB^var

    def var_noise(self, k: np.ndarray | float) -> np.ndarray | float:
        """The variance GP's noise (standardized) of observations of ``k`` seeds.

        Parameters
        ----------
        k : numpy.ndarray or float
            ``(n,)`` seed counts, or one (``k < 2``: no observation,
            :data:`erahbo.gp.one_seed.NO_INFO`).

        Returns
        -------
        numpy.ndarray or float
            ``(n,)`` noise variances (:func:`erahbo.gp.variance_noise.variance_noise`), or one.
        """
        return variance_noise(self.tau2, k, self.chi2, self.log_var)

    def _var_obs(self, s2: float, k: int) -> float:
        """The variance GP's observation (raw units) of a sample variance ``s2`` of ``k``
        seeds: ``s2`` itself, or its bias-corrected log (``"log"``)."""
        return log_observations(s2, k, self._floor) if self.log_var else s2

    @property
    def variance_observations(self) -> np.ndarray:
        """``(n,)`` what the variance GP observes in raw units: the sample variances (under
        ``failure_prior_runs`` the failure mode's, :mod:`erahbo.gp.failure_mode`), the pooled
        placeholder at one-seed rows."""
        return np.asarray(self._s2, dtype=float)

    @property
    def var_unit(self) -> float:
        """A change of ``rho^2`` for one standardized unit of the variance GP at its mean:
        ``s_v``, or ``exp(m_v) s_v`` in log units (the scale of rounding slacks)."""
        return float(to_variance(self.mv, None, self.log_var)) * self.sv if self.log_var \
            else self.sv

    @property
    def s2_one(self) -> float:
        """The placeholder a one-seed ``x_t`` gives the variance GP in the inner loop (the
        pooled variance, :func:`erahbo.gp.one_seed.pooled_variance`)."""
        return pooled_variance(self._s2, self.k, pilot_noise(self.settings.sigma0_2, self._ybar))

    def _raw(self, mu_f, var_f, mu_v, var_v):
        """Raw ``(mu_f, sd_f, mu_v, sd_v)``, each ``(p,)``, from standardized ones ``(p,)``.

        Variances are clipped at 0 before their square roots.
        """
        return (
            self.mf + self.sf * mu_f,
            self.sf * np.sqrt(np.maximum(var_f, 0.0)),
            self.mv + self.sv * mu_v,
            self.sv * np.sqrt(np.maximum(var_v, 0.0)),
        )

    def set_noise_cap(self, mu_v: np.ndarray) -> None:
        """Set eq. 19's ``rho_max^2`` (:func:`noise_cap`) from the variance GP's standardized
        posterior means ``mu_v (n,)`` at the evaluated configurations; the engines call it
        before :meth:`mean_noise`."""
        s = self.settings
        self.rho2 = noise_cap(self._s2, s.rho_max2, s.rho_max2_model, mu_v, (self.mv, self.sv),
                              self.log_var, s.rho_max2_spread, self._ybar)

    def mean_noise(self, mu_v, sd_v, k):
        """Standardized mean-GP noise (eq. 19) from the standardized variance-GP posterior.

        ``mu_v``, ``sd_v`` and ``k`` are ``(n,)`` arrays (the evaluated points) or floats
        (``x_t`` in the inner loop, a candidate of the lookahead:
        :func:`erahbo.optimizer.replicate.lookahead_replicate`); returns the same shape.
        ``UCB^var`` (eq. 17) is computed on the variance GP's
        standardized scale and mapped back (a bound is equivariant under the positive affine
        map of the standardization, and under ``exp``: :func:`erahbo.gp.bounds.to_variance`).
        """
        ucbv = to_variance(ucb_var(mu_v, sd_v, self.beta), (self.mv, self.sv), self.log_var)
        return fixed_noise(ucbv, self.rho2, k, self.sf, self.ucb_floor)

    def _inner_from(
        self,
        fo: tuple[float, float],
        vo: tuple[float, float],
        ybar: float,
        s2: float,
        k_total: int,
        beta_stop: float,
        risk: RiskLike,
    ) -> InnerBounds:
        """Combine the posteriors given the other points with ``x_t``'s own observation.

        Scalar arithmetic only (it runs once per extra seed), with the functions of eqs. 17,
        19 (:meth:`mean_noise`) and 9 that serve the arrays. After one seed (``k_total = 1``) the
        variance GP gets the placeholder :attr:`s2_one` with no weight (:mod:`erahbo.gp.one_seed`).
        """
        if k_total < 2:
            s2 = self.s2_one
        mu_v, var_v = observe(vo[0], vo[1], (self._var_obs(s2, k_total) - self.mv) / self.sv,
                              self.var_noise(k_total))
        sd_v = math.sqrt(max(var_v, 0.0))
        noise_t = self.mean_noise(mu_v, sd_v, k_total)
        mv, sdv = self.mv + self.sv * mu_v, self.sv * sd_v
        mu_f, var_f = observe(fo[0], fo[1], (ybar - self.mf) / self.sf, noise_t)
        mf, sdf = self.mf + self.sf * mu_f, self.sf * math.sqrt(max(var_f, 0.0))
        return InnerBounds(mf, sdf, mv, sdv, risk, beta_stop, self.log_var)

    # -- interface (implemented by the subclasses) ----------------------------------
    def lcb_mv_argmax(self, risk: RiskLike, beta: float,
                      mask: np.ndarray | None = None) -> int:
        """The row of ``best_lcb_mv`` (the recommendation's ``argmax LCB^MV``; -1: none)."""
        return self.best_lcb_mv(risk, beta, mask)[1]

    def solve_f(self, B: np.ndarray) -> np.ndarray:
        """``K_f^{-1} B`` for ``B (n, p)``: the mean GP's kernel matrix with its noise ``D``
        (eq. 19), by the round's factor."""
        raise NotImplementedError

    def solve_v(self, B: np.ndarray) -> np.ndarray:
        """``K_v^{-1} B`` for ``B (n, p)``: the variance GP's, with its noise ``tv``."""
        raise NotImplementedError

    def predict(self, U: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Raw-scale ``(mu_f, sd_f, mu_var, sd_var)``, each ``(p,)``, at ``U (p, dim)``.

        ``mu_var``, ``sd_var``: the variance GP's posterior on its output scale, ``rho^2`` or,
        under ``"log"`` (:attr:`log_var`), ``log rho^2``; :func:`erahbo.gp.bounds.variance_bounds`
        (:meth:`variance_at`) gives ``rho^2``'s estimate and bounds."""
        raise NotImplementedError

    def variance_at(self, U: np.ndarray, beta: float
                    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(estimate, LCB^var, UCB^var)`` of ``rho^2``, each ``(p,)``, at ``U (p, dim)``."""
        _, _, mv, sdv = self.predict(U)
        return variance_bounds(mv, sdv, beta, self.log_var)

    def acquisition(self, U: np.ndarray, risk: RiskLike) -> np.ndarray:
        """Eq. 8, ``UCB^f - alpha * LCB^var`` (the measure ``risk`` of ``UCB^f`` and
        ``LCB^var``) with ``beta``, at ``U (p, dim)``: ``(p,)``."""
        mf, sdf, mv, sdv = self.predict(U)
        return rahbo_acquisition(mf, sdf, mv, sdv, risk, self.beta, log_var=self.log_var,
                                 beta_var=self.beta_var)

    def acquisition_grad(self, u: np.ndarray, risk: RiskLike) -> tuple[float, np.ndarray]:
        """Acquisition (eq. 8) at one point ``u (dim,)`` and its gradient ``(dim,)``.

        The bounds (eqs. 15, 18) on each GP's standardized scale, mapped back; the gradient
        is their derivative (``d sd = d var / (2 sd)``).
        """
        (mf, vf, dmf, dvf), (mv, vv, dmv, dvv) = self._grads(u)
        sdf, sdv = math.sqrt(max(vf, 1e-12)), math.sqrt(max(vv, 1e-12))  # finite gradients
        std = (self.mf, self.sf), (self.mv, self.sv)  # both GPs' standardizations
        val = rahbo_acquisition(mf, sdf, mv, sdv, risk, self.beta, *std, log_var=self.log_var,
                                beta_var=self.beta_var)
        grad = rahbo_acquisition_grad(sdf, dmf, dvf, sdv, dmv, dvv, risk, self.beta, *std,
                                      mu_f=mf, mu_var=mv, log_var=self.log_var,
                                      beta_var=self.beta_var)
        return float(val), grad

    def acquisition_grads(
        self, points: list[np.ndarray], risk: RiskLike
    ) -> list[tuple[float, np.ndarray]]:
        """:meth:`acquisition_grad` at each of ``points`` (``(dim,)`` each): the same numbers.

        The posterior gradients are computed GP by GP, for every point in turn, so that each
        GP's Cholesky factor (``8 n^2`` bytes in double precision: 32 MB at n = 2000, beyond
        most caches for the two of them) is read by the points one after the other while it is
        in the cache; then they are combined point by point as :meth:`acquisition_grad` does
        (it reads them).
        """
        gf = [self._grad_f(u) for u in points]
        gv = [self._grad_v(u) for u in points]
        self._batch = {u.tobytes(): g for u, g in zip(points, zip(gf, gv, strict=True),
                                                       strict=True)}
        try:
            return [self.acquisition_grad(u, risk) for u in points]
        finally:
            self._batch = None

    def _grads(self, u: np.ndarray):
        """Standardized ``(mean, var, dmean (dim,), dvar (dim,))`` of the mean GP and of the
        variance GP at one point ``u (dim,)``, see :func:`erahbo.gp.exact.posterior_grad`
        (those :meth:`acquisition_grads` computed, while it runs)."""
        if self._batch is not None and (got := self._batch.get(u.tobytes())) is not None:
            return got
        return self._grad_f(u), self._grad_v(u)

    def _grad_f(self, u: np.ndarray):
        """The mean GP's part of :meth:`_grads`."""
        raise NotImplementedError

    def _grad_v(self, u: np.ndarray):
        """The variance GP's part of :meth:`_grads`."""
        raise NotImplementedError


