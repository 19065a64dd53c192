"""Challenger rounds, an erahbo extension: seeds for what the runs say wins.

A part of a strategy (:mod:`erahbo.optimizer.strategy`); its option is declared in
:data:`PARAMS` (check, both presets, CLI flag, method names ``erahbo-ch0``:
:mod:`erahbo.optimizer.parts`).

The recommendation is ``argmax LCB_MV`` on the GPs (eq. inc_lcb). The GPs smooth: a
configuration much better than its neighbours (a "needle": on ppo_cc_mountain_car one
configuration of 128 reaches the flag on 44 of 50 seeds, its neighbours never do) is pulled
towards them, so with 2 seeds its posterior MV stays low, the acquisition does not choose it
again and the recommendation goes to a quiet configuration with many seeds.

A challenger round lets the runs speak. After the random rounds of the random design
(:mod:`erahbo.optimizer.random_design`), the BO rounds that would have been random during them
(the first, third, ... after the initial design) go to the **challenger**, when there is one:
among the evaluated configurations with fewer seeds than the recommender's well-sampled
threshold (:mod:`erahbo.optimizer.recommender`; else ``k_max``), the one whose sample MV
(eq. 5) less 1.5 standard errors is highest, provided that bound beats the sample MV of the
current recommendation. The round then runs as any ERAHBO round at that configuration: its
first ``k_min`` seeds, then more while the stopping rule (eq. 12) says so. A lucky
configuration loses its lead after a few more seeds; a real one keeps it, collects the
threshold's seeds and can then be recommended on its own runs (the recommender's
well-sampled rule, :meth:`erahbo.optimizer.rounds.RoundModels.recommend`). SMAC's
intensifier races challengers against the incumbent on their own runs in the same spirit.

Measured in the defaults study (docs/results/defaults_study, "Session 13"; eight real tables,
20 repetitions, user's protocol): the IQM regret after 100 and 250 runs and at the end is
lower at alpha 10, alpha 1 and on the Vizier scale (final 0.004 / 0.005 / 0.006 without them,
0.003 / 0.003 / 0.004 with them; after 500 runs lower at alpha 1 and Vizier, 0.012 against
0.011 at alpha 10); the runs to regret 0.25 do not change.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from erahbo.optimizer.random_design import interleave_of
from erahbo.risk import RiskLike
from erahbo.validation import Param, flag

if TYPE_CHECKING:
    from erahbo.optimizer.state import StudyState

__all__ = ["PARAMS", "ChallengerRounds", "challenger_row", "check", "is_challenger_round",
           "pick_challenger"]

#: The challenger rounds' option (:class:`erahbo.validation.Param`).
PARAMS = (
    Param("challengers", bool,
          flag("challenger rounds: seeds for a configuration whose runs beat the "
               "recommendation"),
          default=True, paper=False, absent=False,  # erahbo: after the random rounds
          help="After the random rounds, every other round re-runs a configuration whose own "
               "runs beat the recommendation's (default: the preset's, on for erahbo).",
          short="ch", label="challengers {}", form="ch0"),
)

#: Standard errors a challenger's sample MV must keep above the recommendation's sample MV.
#: 1.5 (measured against 1 and 2, docs/results/defaults_study "Session 13"): with 1, a lucky
#: sample of a noisy configuration can win a small study's recommendation.
Z_SE = 1.5


def check(o: Any, given: set[str]) -> None:
    """Refuse challenger rounds where they would do nothing."""
    if o.challengers and o.method == "random":
        raise ValueError("challengers=True gives seeds to configurations chosen on their "
                         "runs within a model-based search; method='random' has no "
                         "recommendation to challenge (drop challengers)")


@dataclass(frozen=True)
class ChallengerRounds:
    """Which BO rounds go to the challenger (when there is one).

    Parameters
    ----------
    on : bool
        The option; False: never.
    after : int
        Runs of the random rounds (the random design's): challenger rounds start after them.
    """

    on: bool = False
    after: int = 0

    @classmethod
    def from_options(cls, o: Any) -> ChallengerRounds:
        """The challenger rounds of validated options."""
        return cls(bool(o.challengers), interleave_of(o))

    def is_round(self, bo_round: int, used: float) -> bool:
        """Whether BO round ``bo_round`` (from 1) goes to the challenger when ``used`` runs
        are spent."""
        return is_challenger_round(bo_round, used, self.after, self.on)


def is_challenger_round(bo_round: int, used: float, random_interleave: int,
                        challengers: bool) -> bool:
    """Whether a BO round goes to the challenger (if there is one).

    Parameters
    ----------
    bo_round : int
        The round's position among the BO rounds, from 1 (initial-design rounds not counted).
    used : float
        Runs of the budget spent when the round starts.
    random_interleave : int
        Runs during which every other round is random (those rounds are never challengers).
    challengers : bool
        The option; False: never.

    Returns
    -------
    bool
        True for the odd rounds (1, 3, 5, ...) once ``used >= random_interleave``.

    >>> [is_challenger_round(t, used=60, random_interleave=50, challengers=True)
    ...  for t in (1, 2, 3)]
    [True, False, True]
    >>> is_challenger_round(1, used=10, random_interleave=50, challengers=True)
    False
    """
    return bool(challengers) and used >= random_interleave and bo_round % 2 == 1


def challenger_row(
    ybar: np.ndarray,
    s2: np.ndarray,
    k: np.ndarray,
    weight: RiskLike,
    incumbent: int,
    open_rows: np.ndarray,
) -> int | None:
    """The challenger's data row, or None when no configuration challenges the incumbent.

    Parameters
    ----------
    ybar, s2, k : numpy.ndarray, each (n,)
        Sample mean, sample variance and seed count of each evaluated configuration.
    weight : erahbo.risk.RiskMeasure or float
        The decision's risk measure (a float: MV's ``alpha``; GP-UCB's is risk-neutral).
    incumbent : int
        Data row of the current recommendation.
    open_rows : numpy.ndarray of bool, (n,)
        Rows that may be challengers: eligible for the recommendation, fewer seeds than the
        recommender's well-sampled threshold, seeds left under the caps, still a candidate.

    Returns
    -------
    int or None
        The open row (not the incumbent) with the highest sample MV less ``Z_SE`` standard
        errors (eq. 5; :func:`erahbo.recommendation.sample_mv_bound`), if that bound is above
        the incumbent's sample MV; None otherwise.

    >>> challenger_row(np.array([1.0, 1.5, 0.2]), np.array([0.1, 0.01, 0.0]),
    ...                np.array([20, 2, 2]), 1.0, 0, np.array([False, True, True]))
    1
    """
    # imported here, not with the module: the CLI reads PARAMS at start-up, without pandas
    from erahbo.recommendation import sample_mv_bound

    sample, bound = sample_mv_bound(ybar, s2, k, weight, Z_SE)  # (n,) each; eq. 5
    ok = np.asarray(open_rows, dtype=bool) & (bound > sample[incumbent])
    ok[incumbent] = False
    if not ok.any():
        return None
    rows = np.flatnonzero(ok)
    return int(rows[np.argmax(bound[rows])])


def pick_challenger(
    state: StudyState,
    incumbent: int | None,
    below: int,
    weight: RiskLike,
    closed: Sequence[int],
    allowed: np.ndarray | None,
) -> tuple[int | None, np.ndarray, int] | None:
    """The challenger of the current recommendation in a study, or None.

    Parameters
    ----------
    state : StudyState
        The study's data, candidates and eligible rows.
    incumbent : int or None
        Data row of the current recommendation (None: no challenger).
    below : int
        Only configurations with fewer seeds may be challengers (the recommender's
        well-sampled threshold, else ``k_max``).
    weight : erahbo.risk.RiskMeasure or float
        The decision's risk measure.
    closed : sequence of int
        Data rows that may not be challengers now: the rows with no seeds left under the seed
        caps (:meth:`erahbo.optimizer.seedcap.SeedCaps.rows_at_cap`) and the rows of
        configurations with a pending trial (their seeds are being run).
    allowed : numpy.ndarray of bool or None
        Candidate rows that may be proposed now (finite tables; None: a continuous space).

    Returns
    -------
    (candidate index or None, encoding ``(dim,)``, config id) or None
        As :meth:`StudyState.random_choice` returns a configuration.
    """
    if incumbent is None:
        return None
    d = state.data
    k = np.asarray(d.k, dtype=float)
    ids = d.config_ids
    open_rows = k < below  # (n,)
    mask = state.row_mask()
    if mask is not None:
        open_rows &= mask
    open_rows[list(closed)] = False
    if allowed is not None:  # a finite table's candidates (ids = rows of the table)
        open_rows &= np.asarray(allowed, dtype=bool)[ids]
    row = challenger_row(d.ybar, d.s2, k, weight, incumbent, open_rows)
    if row is None:
        return None
    cid = ids[row]
    if state.candidates is not None:
        return cid, state.candidates[cid], cid
    return None, np.asarray(d.U[row], dtype=float).copy(), cid
