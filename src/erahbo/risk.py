"""The risk measure over seeds: what a study maximizes, as one part.

A configuration ``x`` trained on seed ``s`` returns ``y(x, s)``; its seeds have a mean ``f(x)``
and a variance ``rho^2(x)``. A risk measure maps the two to one number in return units,
increasing in ``f`` and non-increasing in ``rho^2``:

==============  =========================================  =================================
``risk``        value ``value(f, var)``                    ground truth on a table (``truth``)
==============  =========================================  =================================
``"mv"``        ``f - alpha * var`` (eq. 5, the paper's)   mean - alpha * var (ddof 1)
``"mean_std"``  ``f - c * sqrt(var)``                      mean - c * std (ddof 1)
``"cvar"``      ``f - phi(z_q) / q * sqrt(var)``           mean of the worst ``q`` share
``"quantile"``  ``f + z_q * sqrt(var)``                    ``np.quantile(returns, q)``
==============  =========================================  =================================

with ``z_q = Phi^{-1}(q)`` and ``phi`` the standard normal density. The models' values of CVaR
and the quantile are those of a Gaussian location-scale model of the seeds (mean ``f``, standard
deviation ``sqrt(var)``): the mean of the lower ``q`` tail of ``N(f, var)`` and its ``q``
quantile. "Worst" is the low-return tail: erahbo maximizes; a host that minimizes negates the
values outside, as it does for MV. ``q`` is in ``(0, 0.5]``, so every measure is
non-increasing in ``var``.

Because every measure is increasing in ``f`` and non-increasing in ``var``, the structure of
eq. 9 holds for all of them: ``UCB_rho(x) = value(UCB_f, LCB_var)``,
``LCB_rho(x) = value(LCB_f, UCB_var)``, and the acquisition (eq. 8) is ``value(UCB_f,
LCB_var)`` (:mod:`erahbo.gp.bounds`). The fast engine's pruning evaluates these at bounds of the
posterior standard deviations, which needs only this monotonicity.

``var`` may be negative where it is a lower confidence bound (``LCB_var`` is not clipped, as
in the paper): MV reads it as it is; the measures of a standard deviation read
``sqrt(max(var, 0))``.

A new measure is a frozen dataclass subclass of :class:`RiskMeasure` (its fields are the
options it reads, each one of :data:`OPTIONS`) plus one entry in :data:`MEASURES`, and its
tests: the option ``risk`` (:mod:`erahbo.optimizer.risk_options`: the options, their
validation and :func:`~erahbo.optimizer.risk_options.measure_of`), the study settings (JSON),
the bounds, the engines, the recommendation and the ground truth follow.

>>> CVaR(q=0.1).value(1.0, 0.04) < Quantile(q=0.1).value(1.0, 0.04) < 1.0
True
>>> MeanVariance(alpha=2.0).value(1.0, 0.1)
0.8
"""

from __future__ import annotations

import math
from dataclasses import dataclass, fields
from functools import cached_property
from statistics import NormalDist
from typing import Any, ClassVar

import numpy as np

from erahbo.validation import check_real

__all__ = [
    "MEASURES",
    "OPTIONS",
    "CVaR",
    "MeanStd",
    "MeanVariance",
    "Quantile",
    "RiskLike",
    "RiskMeasure",
    "as_risk",
    "chi2_variance_bound",
    "measure_from_json",
    "nonnegative",
    "objective_name",
    "risk_rule",
    "tail_share",
    "two_sided_z",
]

ArrayLike = float | np.ndarray
_STD_NORMAL = NormalDist()


def two_sided_z(level: float) -> float:
    """``Phi^{-1}(1 - (1 - level) / 2)``: the standard deviations of a two-sided ``level``
    interval of a Gaussian (1.645 for 90 %)."""
    return _STD_NORMAL.inv_cdf(1.0 - (1.0 - level) / 2.0)


def chi2_variance_bound(s2: ArrayLike, k: ArrayLike, p: float) -> ArrayLike:
    """``s2 (k - 1) / chi2_{k-1}(p)``: the one-sided confidence bound of a variance from the
    sample variance ``s2`` of ``k >= 2`` normal returns (float or ``(n,)`` each) that lies
    below the true variance with probability ``p`` (``p > 1/2``: a lower bound, eq. 12's
    own-run bound of a tail measure; ``p < 1/2``: an upper bound, the well-sampled rule's
    :func:`erahbo.recommendation.sample_lcb_mv`)."""
    from scipy.stats import chi2  # scipy: not at start-up (the CLI)

    return s2 * (k - 1) / chi2.ppf(p, k - 1)


def _sqrt(var: ArrayLike) -> ArrayLike:
    """``sqrt(max(var, 0))`` of a float (no NumPy call: the inner loop) or an array."""
    if isinstance(var, np.ndarray):
        return np.sqrt(np.maximum(var, 0.0))
    return math.sqrt(max(var, 0.0))


@dataclass(frozen=True)
class RiskMeasure:
    """A risk measure over seeds (see the module docstring); subclasses set :attr:`name`."""

    #: The value of the option ``risk`` that selects it.
    name: ClassVar[str] = ""
    #: ERAHBO's variance model under this measure when ``var_noise`` is not given
    #: (:func:`erahbo.optimizer.variance_prior.noise_of`): the one its defaults were measured
    #: with. ``"log"`` since session 24 (docs/results/one_seed_models, "Session 24").
    var_noise: ClassVar[str] = "log"
    #: ERAHBO's ``refit_growth`` under this measure when it is not given: 0, the one fit its
    #: defaults were measured with; MV's refits (session 26: with the refit, quantile mode lost
    #: on one repetition set and CVaR nearly did; docs/results/one_seed_models, "Session 26").
    refit_growth: ClassVar[float] = 0.0

    def value(self, f: ArrayLike, var: ArrayLike) -> ArrayLike:
        """The measure of seeds with mean ``f`` and variance ``var`` (floats or ``(m,)``)."""
        raise NotImplementedError

    def grad(self, f: ArrayLike, var: ArrayLike) -> tuple[ArrayLike, ArrayLike]:
        """``(d value / d f, d value / d var)`` at ``(f, var)`` (floats or ``(m,)``)."""
        raise NotImplementedError

    def truth(self, returns: Any) -> Any:
        """The measure of a configuration's feasible seed returns: ``(S,)`` -> float,
        ``(N, S)`` -> ``(N,)`` (one row per configuration)."""
        raise NotImplementedError

    def standard_error(self, std: Any, n: Any) -> Any:
        """Standard error of the plug-in ``value(mean, std^2)`` of ``n`` seeds with sample
        standard deviation ``std`` (normal returns; NaN for ``n < 2``)."""
        raise NotImplementedError

    def var_slack(self, scale: float, dvar: float) -> float:
        """A bound on ``|value(f, v + d) - value(f, v)|`` for ``|d| <= scale * dvar``."""
        raise NotImplementedError

    def stop_ucb(self, ucb: float, mean: float, var: float, k: int, model_var: float,
                 beta: float) -> float:
        """The upper bound of ``x_t``'s measure that the stopping rule (eq. 12) compares
        with ``B_t`` after ``k`` seeds: the models' ``UCB(x_t; k)`` (``ucb``), here and for
        MV and mean - c std (the same float: decisions unchanged).

        ``mean``, ``var``: ``x_t``'s sample mean and variance over its ``k`` seeds;
        ``model_var``: the variance GP's posterior mean there (raw scale); ``beta``: the
        acquisition's confidence (eq. 8), which chose ``x_t``. The tail measures
        (:class:`CVaR`, :class:`Quantile`) override it.
        """
        return ucb

    def well_sampled_rule(self, seeds: int) -> tuple[int, float]:
        """``(threshold, z)`` of the recommender's well-sampled rule under this measure
        (:meth:`erahbo.optimizer.recommender.Recommender.well_sampled`): configurations
        with at least ``threshold`` seeds compete on their own runs' plug-in value less
        ``z`` standard errors. ``seeds``: the option ``recommend_seeds`` resolved (0: off).
        Here and for MV and mean - c std: ``(seeds, 1.0)`` (decisions unchanged); the tail
        measures override it."""
        return seeds, 1.0

    def final_interval(self, lo: float, hi: float, returns: Any,
                       level: float) -> tuple[float, float]:
        """The two-sided ``level`` interval a study states for its recommended
        configuration's measure, given the models' interval ``[lo, hi]`` (eq. 9's bounds at
        that confidence) and the configuration's own seed ``returns``: the models' interval,
        here and for MV and mean - c std (the same floats). The tail measures
        (:class:`CVaR`, :class:`Quantile`) override it."""
        return lo, hi

    def describe(self) -> str:
        """One line, in return units, for explanations and reports."""
        raise NotImplementedError

    @property
    def label(self) -> str:
        """Short name with its parameter, e.g. ``CVaR_0.1`` or ``MV(alpha=1)``."""
        raise NotImplementedError

    def neutral(self) -> RiskMeasure:
        """The risk-neutral measure GP-UCB decides with (``f`` alone: MV with ``alpha = 0``)."""
        return MeanVariance(0.0)

    def to_json(self) -> dict[str, Any]:
        """The measure as plain JSON (:func:`measure_from_json` reads it)."""
        return {"risk": self.name, **{f.name: getattr(self, f.name) for f in fields(self)}}


@dataclass(frozen=True)
class MeanVariance(RiskMeasure):
    """``MV = f - alpha * var`` (eq. 5), the paper's objective and erahbo's default.

    Computed exactly as erahbo computed it before risk measures were a part (the same
    floating-point operations, so decisions are bit-identical).
    """

    name: ClassVar[str] = "mv"
    refit_growth: ClassVar[float] = 2.0  # the refit at each doubling (session 26)
    alpha: float = 1.0

    def __post_init__(self) -> None:
        object.__setattr__(self, "alpha", nonnegative("alpha", self.alpha,
                                                       "weighs the variance penalty of MV = "
                                                       "f - alpha * rho^2"))

    @classmethod
    def of_weight(cls, alpha: float) -> MeanVariance:
        """MV of a float weight as the engines took it, unchecked (a negative weight is not
        a user's option but exercises the bounds: :func:`as_risk`)."""
        m = object.__new__(cls)
        object.__setattr__(m, "alpha", float(alpha))
        return m

    def value(self, f: ArrayLike, var: ArrayLike) -> ArrayLike:
        return f - self.alpha * var

    def grad(self, f: ArrayLike, var: ArrayLike) -> tuple[ArrayLike, ArrayLike]:
        return 1.0, -self.alpha

    def truth(self, returns: Any) -> Any:
        """``mean - alpha * var(ddof=1)`` of the seeds."""
        r = np.asarray(returns, dtype=float)
        return r.mean(axis=-1) - self.alpha * r.var(axis=-1, ddof=1)

    def standard_error(self, std: Any, n: Any) -> Any:
        """``sqrt(std^2 / n + alpha^2 * 2 var^2 / (n - 1))`` (the variance of a sample
        variance of normal returns is ``2 var^2 / (n - 1)``)."""
        alpha = self.alpha
        std, n = np.asarray(std, dtype=float), np.asarray(n, dtype=float)
        var = std * std
        with np.errstate(divide="ignore", invalid="ignore"):
            se = np.sqrt(var / n + alpha * alpha * 2.0 * var * var / (n - 1))
        se = np.where((n >= 2) & np.isfinite(std), se, np.nan)
        return float(se) if se.ndim == 0 else se

    def var_slack(self, scale: float, dvar: float) -> float:
        return abs(self.alpha) * scale * dvar

    def neutral(self) -> RiskMeasure:
        return MeanVariance(0.0)

    def describe(self) -> str:
        return (f"mean-variance MV = mean - {self.alpha:g} * variance of the returns over seeds "
                "(return units)")

    @property
    def label(self) -> str:
        return f"MV(alpha={self.alpha:g})"


@dataclass(frozen=True)
class _LocationScale(RiskMeasure):
    """``f + kappa * sqrt(var)`` with ``kappa <= 0``: a measure of a location-scale model."""

    @property
    def kappa(self) -> float:
        """The standard deviations added to the mean (``<= 0``)."""
        raise NotImplementedError

    def value(self, f: ArrayLike, var: ArrayLike) -> ArrayLike:
        return f + self.kappa * _sqrt(var)

    def grad(self, f: ArrayLike, var: ArrayLike) -> tuple[ArrayLike, ArrayLike]:
        """``(1, kappa / (2 sqrt(var)))``; 0 where ``var <= 0`` (the value is flat there)."""
        if isinstance(var, np.ndarray):
            sd = np.sqrt(np.maximum(var, 0.0))
            with np.errstate(divide="ignore", invalid="ignore"):
                d = np.where(sd > 0, self.kappa / (2.0 * sd), 0.0)
            return np.ones_like(d), d
        sd = _sqrt(var)
        return 1.0, (self.kappa / (2.0 * sd) if sd > 0 else 0.0)

    def standard_error(self, std: Any, n: Any) -> Any:
        """Delta method: ``sqrt(var / n + kappa^2 var / (2 (n - 1)))`` (a sample standard
        deviation of normal returns has variance about ``var / (2 (n - 1))``)."""
        std, n = np.asarray(std, dtype=float), np.asarray(n, dtype=float)
        var = std * std
        k2 = self.kappa * self.kappa
        with np.errstate(divide="ignore", invalid="ignore"):
            se = np.sqrt(var / n + k2 * var / (2.0 * (n - 1)))
        se = np.where((n >= 2) & np.isfinite(std), se, np.nan)
        return float(se) if se.ndim == 0 else se

    def var_slack(self, scale: float, dvar: float) -> float:
        return abs(self.kappa) * math.sqrt(max(scale * dvar, 0.0))


@dataclass(frozen=True)
class _Tail(_LocationScale):
    """A tail measure (CVaR, a quantile): eq. 12 hears ``x_t``'s own runs too.

    Its default variance model stays ``"fitted"`` (:attr:`RiskMeasure.var_noise`): the tail
    machinery below was measured with it (issue 40); under ``"log"`` the real tables' CVaR
    regret after 200 runs was +0.019 (q 0.1) and +0.043 (q 0.25) higher, intervals
    including 0 (docs/results/one_seed_models, "Session 24").

    The models' value at ``x_t`` pairs the mean GP's ``f``, which a configuration far
    better than its neighbours (a "needle": on a learn/fail table the one that often learns)
    has pulled down towards theirs, with the variance GP's spread, which keeps the needle's
    own large sample variance; ``kappa * sqrt(var)`` is steep, so the models certify the
    needle worse than a configuration that never learns after one or two seeds, and the
    challenger rounds cannot give it more (docs/results/risk_measures, "Session 22"). MV's
    ``alpha * var`` is flat there and lets the seeds come. So the bound the stopping rule
    compares with ``B_t`` is the larger of the models' and the value of ``x_t``'s own runs
    under the same location-scale model: its sample mean with a lower confidence bound of
    its variance, ``v (k - 1) / chi2_p(k - 1)`` with ``v`` the larger of its sample
    variance and the variance GP's and ``p = Phi(sqrt(beta))`` at the acquisition's
    ``beta`` (the chi-square bound of a normal sample variance; after one seed: the variance
    GP's, as it is). ``x_t`` is dominated when neither says it may beat ``B_t``. Its own runs
    speak for its location; their spread is given the same benefit of the doubt the
    acquisition gave ``x_t`` when it chose it: two seeds of a needle that learns and fails
    state its spread to within a factor of 3.6 (``chi2`` at 0.943 with 1 degree of
    freedom), and the point estimate stopped it on two unlucky seeds (docs/results/
    risk_measures, "Session 23": with it the tables' final regret at budget 200 and 500 is
    level with MV at the best alpha in hindsight). A few seeds that agree do not earn a
    spread below the model's (``v`` is at least the variance GP's: they would keep lucky
    configurations in long rounds). Only the number of seeds changes; the estimate, the
    bounds, ``B_t`` and the recommendation stay the models' (a configuration's measure is
    never read from its few runs alone; the recommender reads them from at least
    ``ceil(1 / q)`` seeds, :meth:`well_sampled_rule`).
    """

    var_noise: ClassVar[str] = "fitted"

    def stop_ucb(self, ucb: float, mean: float, var: float, k: int, model_var: float,
                 beta: float) -> float:
        v = max(var, model_var) if k >= 2 else model_var
        if k >= 2 and beta > 0:
            v = float(chi2_variance_bound(v, k, _STD_NORMAL.cdf(math.sqrt(beta))))
        own = self.value(mean, v)
        return own if own > ucb else ucb

    def well_sampled_rule(self, seeds: int) -> tuple[int, float]:
        """``(max(seeds, ceil(1 / q)), 0)``: a configuration with at least as many seeds as
        MV's rule asks, and never fewer than :attr:`own_seeds`, competes for the
        recommendation on its own runs' plug-in value, not less a standard error (the rule
        off, ``seeds`` 0, stays off).

        Why: the mean GP pulls a needle's ``f`` towards its neighbours' however many seeds
        it has, and the posterior value of a tail measure is steep in that ``f``; the
        needle's own runs are unbiased for its location. A standard error subtracted from
        the plug-in penalizes a configuration's spread a second time (the measure already
        does), so the rule would prefer a quiet configuration whose Gaussian plug-in
        overstates a heavy lower tail. Measured on the 8 tables (budget 500, 20
        repetitions, both sets, q 0.1 and 0.25; docs/results/risk_measures, "Session 23"):
        no worse at any checkpoint, better at 100 runs and at the end. From ``ceil(1 / q)``
        seeds alone (4 at q 0.25) the tables gain a little more early, but six lucky seeds
        of a noisy peak then outbid a quiet one with thirty (the two-peaks tests of the
        Optuna sampler and the Ray Tune searcher).
        """
        return (max(seeds, self.own_seeds) if seeds else 0), 0.0

    @property
    def own_seeds(self) -> int:
        """``ceil(1 / q)``: the seeds from which a configuration's own runs speak for its
        measure in :meth:`final_interval` (fewer: the models' alone)."""
        return math.ceil(1.0 / self.q - 1e-9)

    def own_interval(self, returns: Any, level: float) -> tuple[float, float] | None:
        """The two-sided ``level`` interval of the measure from a configuration's own
        ``returns`` alone (None below :attr:`own_seeds` seeds): the hull of two intervals
        of the same runs, ``z = Phi^{-1}(1 - (1 - level) / 2)``:

        - the Gaussian plug-in ``value(mean, var)`` of their sample mean and variance
          (ddof 1) +- ``z`` standard errors (:meth:`standard_error`, the delta method): it
          reads the tail from the spread, and misses a tail heavier than a Gaussian's (seeds
          that fail among seeds that learn);
        - the sample measure's (:meth:`sample_interval`), distribution-free: it reads the
          tail from the worst runs, and with few seeds misses a tail they have not sampled.
        """
        r = np.asarray(returns, dtype=float).ravel()
        n = r.size
        if n < max(self.own_seeds, 2):
            return None
        z = two_sided_z(level)
        std = float(r.std(ddof=1))
        v = float(self.value(float(r.mean()), std * std))
        se = float(self.standard_error(std, n))
        s_lo, s_hi = self.sample_interval(r, level)
        return min(v - z * se, s_lo), max(v + z * se, s_hi)

    def sample_interval(self, returns: np.ndarray, level: float) -> tuple[float, float]:
        """The two-sided ``level`` interval of the measure from the empirical distribution
        of ``returns`` (at least 2)."""
        raise NotImplementedError

    def final_interval(self, lo: float, hi: float, returns: Any,
                       level: float) -> tuple[float, float]:
        """The stated interval of a recommended configuration with at least
        :attr:`own_seeds` (``ceil(1 / q)``) seeds is the hull of the models' ``[lo, hi]``
        and its own runs' (:meth:`own_interval`: the Gaussian plug-in's and the sample
        measure's); with fewer, the models' alone.

        Why: the models' interval of a needle (a configuration far better than its
        neighbours) lies below its truth however many seeds it has, since the mean GP pulls
        its ``f`` to its neighbours' (docs/results/risk_measures, "Session 22: the final
        interval"); its own runs are unbiased for its location but, with few seeds, blind to
        a tail they have not sampled. Neither is right everywhere and when they disagree the
        study cannot tell which, so it states both: the hull. A precision-weighted mean of
        the two would lean on the narrower, the models' interval of the needle, and keep its
        bias. Below ``1 / q`` seeds the own runs have not, on average, seen one return of
        the tail, so the measure comes from the models alone (issue 40). The estimate the
        study reports stays the models'.
        """
        own = self.own_interval(returns, level)
        if own is None:
            return lo, hi
        return min(lo, own[0]), max(hi, own[1])


@dataclass(frozen=True)
class MeanStd(_LocationScale):
    """``f - c * sqrt(var)``: the mean less ``c`` standard deviations over seeds."""

    name: ClassVar[str] = "mean_std"
    c: float = 1.0

    def __post_init__(self) -> None:
        object.__setattr__(self, "c", nonnegative("c", self.c, "counts the standard "
                                                   "deviations in mean - c * std"))

    @property
    def kappa(self) -> float:
        return -self.c

    def truth(self, returns: Any) -> Any:
        """``mean - c * std(ddof=1)`` of the seeds."""
        r = np.asarray(returns, dtype=float)
        return r.mean(axis=-1) - self.c * r.std(axis=-1, ddof=1)

    def describe(self) -> str:
        return (f"mean - {self.c:g} * standard deviation of the returns over seeds "
                "(return units)")

    @property
    def label(self) -> str:
        return f"mean-{self.c:g}std"


def nonnegative(name: str, value: Any, what: str) -> float:
    """Rule of an option that must be >= 0 (``what``: what it does, for the message)."""
    if check_real(name, value) < 0:
        raise ValueError(f"{name}={value!r} is negative: {name} {what}; use {name} >= 0 "
                         "(0 = risk-neutral)")
    return float(value)


def tail_share(q: Any) -> float:
    v = check_real("q", q)
    if not 0.0 < v <= 0.5:
        raise ValueError(f"q={q!r} must be in (0, 0.5]: the share of worst seeds (0.1: the "
                         "worst 10 %)")
    return v


@dataclass(frozen=True)
class CVaR(_Tail):
    """``CVaR_q``: the mean return of the worst ``q`` share of seeds (lower tail).

    The models' value is that of ``N(f, var)``: ``f - phi(z_q) / q * sqrt(var)``. The ground
    truth of ``n`` seed returns is the lower-tail mean of their empirical distribution, the
    standard interpolated definition: with ``h = q n`` and the returns sorted ascending
    ``y_(1) <= ... <= y_(n)``, ``(y_(1) + ... + y_(floor h) + (h - floor h) y_(floor h + 1)) / h``
    (the mean of the worst ``q n`` returns when ``q n`` is an integer).
    """

    name: ClassVar[str] = "cvar"
    q: float = 0.1

    def __post_init__(self) -> None:
        object.__setattr__(self, "q", tail_share(self.q))

    @cached_property
    def kappa(self) -> float:
        z = _STD_NORMAL.inv_cdf(self.q)
        return -_STD_NORMAL.pdf(z) / self.q

    def truth(self, returns: Any) -> Any:
        r = np.sort(np.asarray(returns, dtype=float), axis=-1)
        n = r.shape[-1]
        h = self.q * n
        full = min(math.floor(h), n)
        frac = h - full
        total = r[..., :full].sum(axis=-1)
        if full < n and frac > 0:
            total = total + frac * r[..., full]
        return total / h

    def sample_interval(self, returns: np.ndarray, level: float) -> tuple[float, float]:
        """The sample CVaR (:meth:`truth` of the runs) +- ``z`` standard errors from its
        influence function ``VaR + min(y - VaR, 0) / q`` (``VaR``: the sample ``q``
        quantile), ``SE = std(influence) / sqrt(n)``."""
        r = np.asarray(returns, dtype=float).ravel()
        z = two_sided_z(level)
        var_q = float(np.quantile(r, self.q))
        influence = var_q + np.minimum(r - var_q, 0.0) / self.q
        se = float(influence.std(ddof=1)) / math.sqrt(r.size)
        v = float(self.truth(r))
        return v - z * se, v + z * se

    def describe(self) -> str:
        return (f"CVaR_{self.q:g}: the mean return of the worst {100 * self.q:g} % of seeds "
                "(return units)")

    @property
    def label(self) -> str:
        return f"CVaR_{self.q:g}"


@dataclass(frozen=True)
class Quantile(_Tail):
    """The ``q`` quantile of the returns over seeds (``q <= 0.5``: a low one).

    The models' value is that of ``N(f, var)``: ``f + z_q sqrt(var)``; the ground truth of
    seed returns is ``np.quantile(returns, q)`` (its default, linear interpolation between
    order statistics).
    """

    name: ClassVar[str] = "quantile"
    q: float = 0.1

    def __post_init__(self) -> None:
        object.__setattr__(self, "q", tail_share(self.q))

    @cached_property
    def kappa(self) -> float:
        return _STD_NORMAL.inv_cdf(self.q)

    def truth(self, returns: Any) -> Any:
        r = np.asarray(returns, dtype=float)
        out = np.quantile(r, self.q, axis=-1)
        return float(out) if np.ndim(out) == 0 else out

    def sample_interval(self, returns: np.ndarray, level: float) -> tuple[float, float]:
        """The distribution-free order-statistic interval ``[y_(l), y_(u)]``: the number of
        the ``n`` runs below the ``q`` quantile is ``Binomial(n, q)``, ``l`` its
        ``(1 - level) / 2`` quantile and ``u - 1`` its ``(1 + level) / 2`` quantile (ranks
        from 1, clipped to the runs: with few runs an end is the sample's extreme, and the
        interval's confidence is below ``level`` there)."""
        from scipy.stats import binom

        r = np.sort(np.asarray(returns, dtype=float).ravel())
        n = r.size
        tail = (1.0 - level) / 2.0
        lo_rank = int(binom.ppf(tail, n, self.q))
        hi_rank = int(binom.ppf(1.0 - tail, n, self.q)) + 1
        return float(r[min(max(lo_rank, 1), n) - 1]), float(r[min(max(hi_rank, 1), n) - 1])

    def describe(self) -> str:
        return (f"the {self.q:g} quantile of the returns over seeds: {100 * self.q:g} % of "
                "seeds return less (return units)")

    @property
    def label(self) -> str:
        return f"quantile_{self.q:g}"


#: The measures, by the value of the option ``risk`` (adding one: its class and one line here).
MEASURES: dict[str, type[RiskMeasure]] = {
    cls.name: cls for cls in (MeanVariance, MeanStd, CVaR, Quantile)
}
#: The options a measure may read (its dataclass fields are among them) and their defaults.
OPTIONS: dict[str, float] = {"alpha": 1.0, "c": 1.0, "q": 0.1}

#: A measure, or a float: MV's ``alpha`` (as the engines took it before measures were a part).
RiskLike = RiskMeasure | float


def as_risk(risk: RiskLike) -> RiskMeasure:
    """``risk`` as a measure: a float is MV's ``alpha``."""
    return risk if isinstance(risk, RiskMeasure) else MeanVariance.of_weight(risk)


def objective_name(measure: RiskLike | None) -> str:
    """How reports name a study's objective: ``"MV"`` for mean-variance (a float: MV's
    ``alpha``; None: the default), else the measure's label, e.g. ``"CVaR_0.1"``."""
    if measure is None:
        return "MV"
    m = as_risk(measure)
    return "MV" if isinstance(m, MeanVariance) else m.label


def risk_rule(name: str, value: Any) -> str:
    """Rule of the option ``risk``: a key of :data:`MEASURES`."""
    if value not in MEASURES:
        raise ValueError(f"{name}={value!r} must be one of {tuple(MEASURES)} (the risk measure "
                         "over seeds; 'mv' = mean - alpha * variance, the default)")
    return str(value)


def measure_from_json(data: dict[str, Any] | None) -> RiskMeasure:
    """The measure of :meth:`RiskMeasure.to_json` (None or no ``risk``: MV with its
    ``alpha``, default 1)."""
    data = dict(data or {})
    name = data.pop("risk", "mv")
    if name not in MEASURES:
        risk_rule("risk", name)
    cls = MEASURES[name]
    return cls(**{f.name: data.get(f.name, OPTIONS[f.name]) for f in fields(cls)})
