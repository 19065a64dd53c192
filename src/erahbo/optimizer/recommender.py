"""The recommender of a strategy: which evaluated configuration a study recommends.

* the paper (eq. inc_lcb): ``argmax LCB^MV`` over the evaluated configurations, with the
  acquisition's ``beta`` (or ``recommend_beta``; 0: the best posterior mean MV); GP-UCB's
  risk weight 0 makes it ``argmax LCB_f``;
* ``recommend_seeds`` (an erahbo extension, see :class:`erahbo.optimizer.options.Options`):
  a configuration with at least that many seeds is recommended on its own runs (its sample MV
  less one standard error) when that bound is at least the sample MV of ``argmax LCB^MV``;
* before the first model fit, the best sample MV (eq. 5 on sample means and variances).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from erahbo._data import Observations
from erahbo.gp import RoundModel
from erahbo.gp.bounds import mean_variance
from erahbo.recommendation import sample_mv_bound

__all__ = ["Recommender"]


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
    """

    beta: float
    seeds: int = 0

    def well_sampled(self, data: Observations, row: int, mask: np.ndarray | None,
                     weight: float) -> int:
        """Among the eligible rows (``mask (n,)``) with at least :attr:`seeds` seeds, the one
        with the highest sample MV minus one standard error (eq. 5 on its sample mean and
        variance; :func:`erahbo.recommendation.sample_mv_bound`) replaces ``row`` when that
        bound is at least ``row``'s sample MV."""
        if not self.seeds:
            return row
        k = np.asarray(data.k, dtype=float)  # (n,)
        big = (k >= self.seeds) if mask is None else (k >= self.seeds) & mask
        if not big.any():
            return row
        sample, bound = sample_mv_bound(data.ybar, data.s2, k, weight)  # (n,) each
        best = int(np.flatnonzero(big)[np.argmax(bound[big])])
        return best if bound[best] >= sample[row] else row

    def choose(self, rm: RoundModel | None, data: Observations, mask: np.ndarray | None,
               weight: float, alpha: float) -> tuple[int, float, str] | None:
        """``(row, posterior mean MV, rule)`` of the recommendation; None without data or when
        no row is eligible. ``rm`` None (no model yet): the best sample MV (rule
        ``"sample_mv"``); the rule is a key of :data:`erahbo.recommendation.RULES`."""
        if data.n == 0 or (mask is not None and not mask.any()):
            return None
        if rm is None:
            score = mean_variance(data.ybar, data.s2, weight)  # (n,)
            row = int(np.argmax(score if mask is None else np.where(mask, score, -np.inf)))
            return row, float(mean_variance(data.ybar[row], data.s2[row], alpha)), "sample_mv"
        _, best = rm.best_lcb_mv(weight, self.beta, mask)
        row = self.well_sampled(data, best, mask, weight)
        mf, _, mv, _ = rm.predict(data.U[row][None, :])
        rule = "lcb_mv" if row == best else "well_sampled"
        return row, float(mean_variance(mf[0], mv[0], alpha)), rule
