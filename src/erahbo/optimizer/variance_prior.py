"""The variance GP's noise: how much of the spread of the sample variances the variance GP
may read as noise (``var_noise``: fitted under a prior, the paper appendix's known chi^2
noise, or a GP on log sample variances with their known noise, :mod:`erahbo.gp.variance_noise`;
``var_noise_prior``: the fitted noise's prior).

The variance GP observes sample variances ``s^2`` of ``k`` seeds (paper Sec. 3.1). Under normal
returns ``s^2`` scatters around ``rho^2`` with variance ``2 rho^4 / (k - 1)``: with two seeds its
standard deviation is ``sqrt(2) rho^2``, larger than the variation of ``rho^2`` between
configurations on most tasks. BoTorch's noise prior for a homoscedastic GP, ``LogNormal(-4, 1)``
(the paper's), has its median at 1.8 % of the standardized output's variance: it says the
sample variances are nearly noise-free, and on 5 x 2 initial runs the MAP fit then explains
their sampling noise with short lengthscales (a model that reverts to its mean between points,
and a mean GP whose noise, eq. 19, follows that scatter).

``var_noise_prior`` is the log of the prior's median (its ``loc``; the scale stays 1): the
paper's ``-4`` under both presets since session 19; ``-1`` (median 37 % of the standardized
variance) was erahbo's default in session 18 (``docs/results/noise_prior/README.md``: better
with two seeds per configuration, and on heavy-tailed returns). With one seed per new
configuration (``k_min = 1``, the default since session 19) the replicated configurations are
the promising ones, often with many seeds, and -4 wins the early race on both sets of
repetitions where -1 loses one (``docs/results/kmin1/README.md``).

A part of a strategy (:mod:`erahbo.optimizer.strategy`); the fit that reads it is
:func:`erahbo.gp.fit.fit_hyperparameters`.
"""

from __future__ import annotations

from typing import Any

from erahbo.validation import Param, by_space, check_real, flag, real_above

__all__ = ["HIGH", "LOW", "PARAMS", "SPREAD_CONTINUOUS", "check", "noise_of",
           "rho_max2_model_of", "rho_max2_spread_of"]

LOW, HIGH = -10.0, 3.0  # medians from 4.5e-5 to 20 times the standardized variance
PRIOR_LOC = -4.0  # the paper's (BoTorch's) log prior median, the default
#: ``rho_max2_spread`` in force for ERAHBO's default on a continuous or mixed space
#: (docs/results/one_seed_models, sessions 48-49; 0: off).
SPREAD_CONTINUOUS = 0.3


def _log_median(name: str, value: Any) -> float:
    """Rule: a real in ``[LOW, HIGH]``."""
    v = check_real(name, value)
    if not LOW <= v <= HIGH:
        raise ValueError(
            f"{name}={value!r} must be in [{LOW:g}, {HIGH:g}] (the log of the prior median of "
            "the variance GP's noise, standardized: -4 the paper's and the default)")
    return v


def _model(name: str, value: Any) -> str:
    """Rule of ``var_noise``: one of :data:`erahbo.gp.variance_noise.VAR_NOISE`."""
    from erahbo.gp.variance_noise import VAR_NOISE  # here: the CLI starts without scipy

    if value not in VAR_NOISE:
        raise ValueError(f"{name}={value!r} must be one of {VAR_NOISE} (the variance GP's "
                         "noise: one fitted value, the known chi^2 noise 2 rho^4 / (k - 1), or "
                         "a GP on log sample variances with their known noise)")
    return str(value)


def noise_of(o: Any) -> str:
    """``var_noise`` of validated options resolved: the value given; else ``"fitted"`` for the
    fixed-k methods and under ``preset="paper"`` (the paper's experiments), and for ERAHBO the
    study measure's (:attr:`erahbo.risk.RiskMeasure.var_noise`): ``"log"`` for MV and mean -
    c std since session 24, ``"fitted"`` for the tail measures (measured with it)."""
    if o.var_noise is not None:
        return str(o.var_noise)
    if o.method != "erahbo" or o.preset == "paper":
        return "fitted"
    return o.measure.var_noise


def rho_max2_model_of(o: Any, finite: bool = False) -> bool:
    """``rho_max2_model`` in force (:func:`erahbo.validation.by_space`): given by name, that
    value; otherwise on only for ERAHBO under ``preset="default"`` on a continuous or mixed
    space with the log variance model (:func:`noise_of`) where the means' spread does not cap
    eq. 19 (``rho_max2_spread=0``: by default it does there since session 49,
    :func:`rho_max2_spread_of`); off on a finite table, under the paper preset, for the fixed-k
    methods and with a fitted or chi^2 variance noise (whose posterior mean of ``rho^2`` may be
    near 0).

    >>> from erahbo.optimizer.options import Options
    >>> rho_max2_model_of(Options(budget=100, rho_max2_spread=0)), rho_max2_model_of(Options(
    ...     budget=100)), rho_max2_model_of(Options(budget=100, rho_max2_spread=0), True)
    (True, False, False)
    """
    if o.rho_max2_model is None and (noise_of(o) != "log" or rho_max2_spread_of(o, finite)):
        return False
    return bool(by_space(o, "rho_max2_model", finite, False, True, False))


def rho_max2_spread_of(o: Any, finite: bool = False) -> float:
    """``rho_max2_spread`` in force (:func:`erahbo.validation.by_space`; 0: off): given by
    name, that value; otherwise :data:`SPREAD_CONTINUOUS` for ERAHBO under
    ``preset="default"`` on a continuous or mixed space with the log variance model
    (:func:`noise_of`, measured with it) unless another cap is given (``rho_max2``,
    ``rho_max2_model=True``), 0 elsewhere (a finite table, the paper preset, the fixed-k
    methods, a fitted or chi^2 variance noise).

    >>> from erahbo.optimizer.options import Options
    >>> [rho_max2_spread_of(Options(budget=100, **kw), finite) for kw, finite in (
    ...     ({}, False), ({}, True), ({"rho_max2_model": True}, False),
    ...     ({"rho_max2_spread": 0.5}, True))]
    [0.3, 0.0, 0.0, 0.5]
    """
    if o.rho_max2_spread is None and (noise_of(o) != "log" or o.rho_max2 is not None
                                      or o.rho_max2_model):
        return 0.0
    return float(by_space(o, "rho_max2_spread", finite, 0.0, SPREAD_CONTINUOUS, 0.0))


#: The variance GP's noise options (:class:`erahbo.validation.Param`).
PARAMS = (
    Param("var_noise", str, _model, default="log", paper="fitted", absent="fitted",
          resolve=noise_of,
          help="The variance GP's observation noise: 'log' (a GP on bias-corrected log sample "
               "variances, known noise psi'((k - 1) / 2), bounds exp(m +- sqrt(beta) s); "
               "ERAHBO's default in MV since session 24), 'fitted' (one MAP-fitted value for "
               "all: the paper's experiments, the fixed-k methods, preset 'paper' and ERAHBO "
               "in CVaR / quantile) or 'chi2' (the paper appendix's 2 rho_bar^4 / (k - 1) of "
               "a sample variance of k seeds, known; its scale is global). "
               "docs/results/one_seed_models.",
          short="vn", label="variance noise {}", form="vn<fitted|chi2|log>"),
    Param("rho_max2_model", bool,
          flag("without rho_max2, eq. 19's cap is the variance GP's largest posterior median "
               "over the evaluated configurations"),
          default=None, paper=None, absent=False, resolve=rho_max2_model_of, by_space=True,
          help="Without a given rho_max2, eq. 19's cap on the mean GP's noise is the variance "
               "GP's largest posterior median of rho^2 over the evaluated configurations "
               "instead of their largest sample variance, which the noise of many 2-seed "
               "sample variances inflates (default: off; on for erahbo with the log variance "
               "model on a continuous or mixed space in sessions 40-48, where "
               "rho_max2_spread now caps it; rho_max2_spread=0 brings it back; "
               "docs/results/one_seed_models, sessions 40 and 49).",
          short="rm", label="model cap {}", form="rm1"),
    Param("rho_max2_spread", float,
          real_above(0.0, False, " (a share of the variance of the sample means, e.g. 0.3; "
                                 "0: off)"),
          default=None, paper=None, absent=0.0, resolve=rho_max2_spread_of, by_space=True,
          help="Without a given rho_max2, eq. 19's cap on the mean GP's noise is this share "
               "of the variance of the sample means over the evaluated configurations (0: "
               "off): where one configuration's seeds spread as widely as the means (runs "
               "that learn or fail), the mean GP then reads the differences between "
               "configurations as signal (default: 0.3 for erahbo with the log variance model "
               "on a continuous or mixed space, off on a finite table; "
               "docs/results/one_seed_models, sessions 48-49).",
          short="rs", label="spread cap {}", form="rs<share>"),
    Param("var_noise_prior", float, _log_median,
          default=PRIOR_LOC, paper=PRIOR_LOC, absent=PRIOR_LOC,
          help="Log of the prior median of the variance GP's noise on its standardized scale "
               "(default -4: the paper's, BoTorch's LogNormal(-4, 1); -1 trusts 2-seed sample "
               "variances less)."),
)


def check(o: Any, given: set[str]) -> None:
    """Refuse a prior for a noise that is not fitted, and two rules for eq. 19's cap
    (``given``: the options named)."""
    if "rho_max2_spread" in given and o.rho_max2_spread:
        if o.rho_max2 is not None:
            raise ValueError(
                f"rho_max2={o.rho_max2} fixes eq. 19's cap, and rho_max2_spread="
                f"{o.rho_max2_spread} would set it from the sample means: give one of them")
        if o.rho_max2_model:
            raise ValueError(
                f"rho_max2_spread={o.rho_max2_spread} sets eq. 19's cap from the sample "
                "means, and rho_max2_model=True from the variance GP: give one of them")
    noise = noise_of(o)
    if ("var_noise_prior" in given and noise in ("chi2", "log")
            and o.var_noise_prior != PRIOR_LOC):
        raise ValueError(
            f"var_noise_prior={o.var_noise_prior} is the prior of a fitted noise, but "
            f"var_noise={noise!r} knows the noise of every sample variance: drop "
            "var_noise_prior, or give var_noise='fitted'")
