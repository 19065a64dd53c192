"""The recommender of a strategy: which evaluated configuration a study recommends.

* the paper (eq. inc_lcb): ``argmax LCB^MV`` over the evaluated configurations, with the
  acquisition's ``beta`` (or ``recommend_beta``; 0: the best posterior mean MV); GP-UCB's
  risk weight 0 makes it ``argmax LCB_f``;
* ``recommend_seeds`` (an erahbo extension): a configuration with at least that many seeds is
  recommended on its own runs (eq. 9's ``LCB^MV`` on them: the sample mean less one standard
  error, the sample variance at its one-sided chi-square bound;
  :func:`erahbo.recommendation.sample_lcb_mv`) when that bound is at least the sample MV of
  ``argmax LCB^MV``: with many seeds a configuration's own runs are more accurate than the
  posterior, which pulls it towards its neighbours (the variance GP is homoscedastic: it
  trusts 50 seeds no more than 2);
* before the first model fit, the best sample MV (eq. 5 on sample means and variances);
* ``recommend_min_seeds`` (an erahbo extension, issue 37): the recommendation is a
  configuration with at least that many seeds whenever one exists (:meth:`Recommender.backed`).
  A one-seed configuration has no sample variance: its ``LCB^MV`` rests on a variance the
  variance GP extrapolated from elsewhere, and one lucky return sets it (README example,
  ``benchmarks/readme_truth.py``, session-19 defaults, 20 studies: mean regret 0.181, four
  studies above 0.5; in small studies a one-seed configuration was the recommendation in 6 of
  24);
* ``bound_min_seeds`` (1: the paper's eq. 10 over every configuration): ``B_t``, the bound the
  stopping rule (eq. 12) compares with, is the highest ``LCB^MV`` over the configurations with
  at least that many seeds (:func:`bound_seeds_of`: erahbo's default is 2 on a continuous or
  mixed space, 1 on a finite table). On a continuous space a one-seed configuration's
  posterior MV rests on a variance the variance GP has not seen; under ``beta_stop = 0`` such a
  posterior could set ``B_t``, and the configurations after it stopped at one seed
  ("dominated") however good their run: on the PPO Acrobot surrogate (alpha 3, 100 runs) 66 of
  74 configurations had one seed, the best evaluated one among them in 16 of 20 studies. With
  2 the continuous benchmark's IQM regret after 200 runs is lower in five of six settings
  (docs/results/one_seed_models, "Session 34"). On the real tables 2 improved the final
  regret but slowed the race to regret 0.25 (session 20, alpha 1: median 46.5 / 47.5 runs
  against 37 / 40), so a finite table keeps 1.

A part of a strategy (:mod:`erahbo.optimizer.strategy`); its options are declared in
:data:`PARAMS` (checks, both presets, CLI flags: :mod:`erahbo.optimizer.parts`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from erahbo.risk import RiskLike, as_risk
from erahbo.validation import Param, by_space, int_at_least, real_above

if TYPE_CHECKING:
    from erahbo._data import Observations
    from erahbo.gp import RoundModel

__all__ = [
    "CONTINUOUS_BOUND_SEEDS",
    "PARAMS",
    "TABLE_BOUND_SEEDS",
    "Recommender",
    "bound_seeds_of",
    "check",
    "seeds_of",
]


def seeds_of(o: Any) -> int:
    """``recommend_seeds`` of validated options resolved (0: off): the seed cap (``k_max``
    without one) for ERAHBO under ``preset="default"``, off for the other methods and under
    ``preset="paper"``."""
    if o.recommend_seeds is not None:
        return int(o.recommend_seeds)
    if o.method != "erahbo" or o.preset == "paper":
        return 0
    return o.seed_cap or o.k_max


#: erahbo's ``bound_min_seeds`` on a finite table (the paper's eq. 10: every configuration).
TABLE_BOUND_SEEDS = 1
#: erahbo's ``bound_min_seeds`` on a continuous (or mixed) space.
CONTINUOUS_BOUND_SEEDS = 2


def bound_seeds_of(o: Any, finite: bool = False) -> int:
    """``bound_min_seeds`` in force: the fewest seeds of the configuration whose ``LCB^MV`` is
    ``B_t`` (eq. 10) when one has them.

    Given by name: that value. Otherwise 1 (eq. 10 over every configuration) but for ERAHBO
    under ``preset="default"`` on a continuous or mixed space (``finite`` False: also a host
    without a candidate table, the Optuna sampler): :data:`CONTINUOUS_BOUND_SEEDS`.

    >>> from erahbo.optimizer.options import Options
    >>> bound_seeds_of(Options(budget=100)), bound_seeds_of(Options(budget=100), finite=True)
    (2, 1)
    >>> bound_seeds_of(Options(budget=100, bound_min_seeds=3), finite=True)
    3
    >>> bound_seeds_of(Options(method="erahbo", preset="paper", budget=100))
    1
    """
    return int(by_space(o, "bound_min_seeds", finite, TABLE_BOUND_SEEDS, CONTINUOUS_BOUND_SEEDS,
                        TABLE_BOUND_SEEDS))


#: The recommender's options (:class:`erahbo.validation.Param`).
PARAMS = (
    Param("recommend_seeds", int,
          int_at_least(0, " (configurations with this many seeds compete for the "
                          "recommendation on their sample MV; 0: off)"),
          default=None, paper=None, absent=0, resolve=seeds_of,
          help="Configurations with this many seeds compete for the recommendation on their "
               "own runs (default: the preset's; 0: argmax LCB_MV alone)."),
    Param("recommend_beta", float,
          real_above(0, False, " or None (the recommendation's confidence; None: beta, 0: "
                               "the best posterior mean MV)"),
          default=None, paper=None, absent=None,
          help="Confidence of the recommendation's LCB_MV (default: beta, the acquisition's; "
               "0: the configuration with the best posterior mean MV).",
          cli=False),
    Param("recommend_min_seeds", int,
          int_at_least(1, " (the recommendation has at least this many seeds when a "
                          "configuration has; 1: any)"),
          default=2, paper=1, absent=1,  # erahbo: the recommendation is a replicated one
          help="The recommendation has at least this many seeds whenever a configuration has "
               "(default: the preset's, 2 for erahbo; 1: any configuration).",
          short="rms", label="recommendations with at least {} seeds", form="rms<N>"),
    Param("bound_min_seeds", int,
          int_at_least(1, " (B_t is the highest LCB_MV over the configurations with at least "
                          "this many seeds when one has; 1: all, the paper's eq. 10)"),
          default=None, paper=None, absent=1, resolve=bound_seeds_of, by_space=True,
          help="B_t, the stopping rule's bound, is the highest LCB_MV over the configurations "
               f"with at least this many seeds whenever one has (default: the preset's, for "
               f"erahbo {CONTINUOUS_BOUND_SEEDS} on a continuous or mixed space and "
               f"{TABLE_BOUND_SEEDS} on a finite table; 1: all, eq. 10).",
          short="bms", label="B_t from configurations with at least {} seeds", form="bms<N>"),
)


def check(o: Any, given: set[str]) -> None:
    """The recommender's options combine with any others (nothing to refuse)."""


@dataclass(frozen=True)
class Recommender:
    """``argmax LCB^MV``, optionally replaced by a well-sampled configuration.

    Parameters
    ----------
    beta : float
        Confidence of the recommendation's ``LCB^MV`` (``recommend_beta``, else ``beta``).
    seeds : int
        ``recommend_seeds``: configurations with at least this many seeds compete on their
        own runs (0: off).
    min_seeds : int
        ``recommend_min_seeds``: the recommendation's fewest seeds when a configuration has
        them.
    bound_seeds : int
        ``bound_min_seeds``: the fewest seeds of the configuration whose ``LCB^MV`` is ``B_t``.
    """

    beta: float
    seeds: int = 0
    min_seeds: int = 1
    bound_seeds: int = 1

    @classmethod
    def from_options(cls, o: Any) -> Recommender:
        """The recommender of validated options."""
        return cls(o.beta if o.recommend_beta is None else o.recommend_beta, seeds_of(o),
                   o.recommend_min_seeds, bound_seeds_of(o))

    @staticmethod
    def backed(k: np.ndarray, mask: np.ndarray | None, min_seeds: int) -> np.ndarray | None:
        """The rows of ``mask (n,)`` (None: all) with at least ``min_seeds`` seeds (``k (n,)``)
        when one of them has, else ``mask``; None: all (the recommendation's rows with
        :attr:`min_seeds`, ``B_t``'s with :attr:`bound_seeds`)."""
        if min_seeds <= 1:
            return mask
        backed = np.asarray(k) >= min_seeds  # (n,)
        if mask is not None:
            backed &= mask
        return backed if backed.any() else mask

    def well_sampled(self, data: Observations, row: int, mask: np.ndarray | None,
                     weight: RiskLike, rm: RoundModel | None = None) -> int:
        """Among the eligible rows (``mask (n,)``) with at least :attr:`seeds` seeds, the one
        with the highest lower bound on its own runs (eq. 9's ``LCB^MV`` with the sample mean
        less one standard error and the sample variance at its one-sided chi-square bound,
        :func:`erahbo.recommendation.sample_lcb_mv`) replaces ``row`` when that bound is at
        least ``row``'s sample MV. The measure may set its own threshold and confidence
        (:meth:`erahbo.risk.RiskMeasure.well_sampled_rule`: a tail measure's configurations
        compete on their plug-in value, z = 0, from ``max(recommend_seeds, ceil(1 / q))``
        seeds). Until session 24 the bound was the sample MV less one standard error
        (:func:`erahbo.recommendation.sample_mv_bound`): a lucky low sample variance has a
        small standard error too, and under ``var_noise="log"`` a noisy peak with 16 seeds
        outbid a quiet one (Optuna's two-peaks tests). With ``rm`` the sample variances are
        the variance GP's observations (``RoundModel.variance_observations``: under
        ``failure_prior_runs`` the failure mode's, :mod:`erahbo.optimizer.failure_prior`)."""
        if not self.seeds:
            return row
        from erahbo.gp.bounds import mean_variance
        from erahbo.recommendation import sample_lcb_mv  # pandas: not at start-up (the CLI)

        seeds, z = as_risk(weight).well_sampled_rule(self.seeds)
        k = np.asarray(data.k, dtype=float)  # (n,)
        big = (k >= seeds) if mask is None else (k >= seeds) & mask
        if not big.any():
            return row
        s2 = data.s2 if rm is None else np.where(k >= 2, rm.variance_observations, data.s2)
        sample = mean_variance(data.ybar, s2, weight)  # (n,)
        bound = sample_lcb_mv(data.ybar, s2, k, weight, z)  # (n,)
        best = int(np.flatnonzero(big)[np.argmax(bound[big])])
        return best if bound[best] >= sample[row] else row

    def choose(self, rm: RoundModel | None, data: Observations, mask: np.ndarray | None,
               weight: RiskLike, measure: RiskLike) -> tuple[int, float, str] | None:
        """``(row, posterior mean MV, rule)`` of the recommendation; None without data or when
        no row is eligible. ``rm`` None (no model yet): the best sample MV (rule
        ``"sample_mv"``); the rule is a key of :data:`erahbo.recommendation.RULES`.
        ``weight``: the decision's risk measure (GP-UCB's is risk-neutral); ``measure``: the
        study's, in which the estimate is given (:mod:`erahbo.risk`; a float: MV's alpha)."""
        if data.n == 0 or (mask is not None and not mask.any()):
            return None
        from erahbo.gp.bounds import mean_variance, to_variance  # scipy: not at start-up

        if rm is None:
            score = mean_variance(data.ybar, data.s2, weight)  # (n,)
            row = int(np.argmax(score if mask is None else np.where(mask, score, -np.inf)))
            return row, float(mean_variance(data.ybar[row], data.s2[row], measure)), "sample_mv"
        best = rm.lcb_mv_argmax(weight, self.beta, mask)
        row = self.well_sampled(data, best, mask, weight, rm)
        mf, _, mv, _ = rm.predict(data.U[row][None, :])
        rule = "lcb_mv" if row == best else "well_sampled"
        var = to_variance(mv[0], None, rm.log_var)  # the variance GP's estimate of rho^2
        return row, float(mean_variance(mf[0], var, measure)), rule
