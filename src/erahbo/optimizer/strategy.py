"""A strategy: the parts that decide a study, built from the options.

An :class:`erahbo.Optimizer` asks its strategy every question that is a choice of method
rather than bookkeeping; each part is a small object with its own parameters:

* **initial design** — ``n_init`` Sobol configurations with ``k_init`` seeds each
  (:func:`erahbo.optimizer.state.initial_design_of`);
* **round schedule** — :class:`RoundSchedule`: which proposer a BO round goes to: the
  acquisition (eq. 8), a random draw from the acquisition's best share
  (:mod:`erahbo.optimizer.random_design`), or the challenger (:mod:`erahbo.optimizer.challenger`);
* **replication rule** — :mod:`erahbo.optimizer.replication`: fixed ``k`` (RAHBO, GP-UCB,
  random search), adaptive ``k`` (ERAHBO, eq. 12) or racing: the seeds of every trial, and
  each round's final stop reason;
* **beta_stop schedule** — :class:`erahbo.optimizer.beta_stop.BetaStopSchedule` (eqs. 35-36);
* **seed caps** — :class:`erahbo.optimizer.seedcap.SeedCaps`;
* **recommender** — :class:`erahbo.optimizer.recommender.Recommender` (``argmax LCB^MV``,
  well-sampled configurations).

Each part with options declares them (:mod:`erahbo.optimizer.parts`) and builds itself from
validated :class:`~erahbo.optimizer.options.Options` (``from_options``). The presets are
functions that build a strategy, :func:`paper` and :func:`default`; an option given by name
overrides the preset's value of a part's parameter. The integrations (the Optuna sampler) ask
the same :class:`RoundSchedule` instead of copying it.

>>> from erahbo.optimizer.options import Options
>>> s = Strategy.from_options(Options(method="erahbo", budget=200))  # no space: continuous
>>> [s.schedule.kind(t, used=10) for t in (1, 2)]
['random', 'acquisition']
>>> [s.schedule.kind(t, used=60) for t in (1, 2)]
['challenger', 'acquisition']
>>> paper(budget=200).schedule.kind(1, used=20)
'acquisition'
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from erahbo.optimizer.beta_stop import BetaStopSchedule
from erahbo.optimizer.challenger import ChallengerRounds, pick_challenger
from erahbo.optimizer.options import Options
from erahbo.optimizer.random_design import RandomRounds, random_configuration
from erahbo.optimizer.recommender import Recommender
from erahbo.optimizer.replication import Rule, rule_of
from erahbo.optimizer.seedcap import SeedCaps

if TYPE_CHECKING:
    from erahbo.gp import RoundModel
    from erahbo.optimizer.rounds import RoundModels
    from erahbo.optimizer.state import StudyState

__all__ = ["ROUND_KINDS", "RoundSchedule", "Strategy", "default", "paper"]

#: The proposers a BO round can go to (a challenger round without a challenger falls back to
#: the acquisition).
ROUND_KINDS = ("acquisition", "random", "challenger")


@dataclass(frozen=True)
class RoundSchedule:
    """Which proposer a BO round goes to: the random design's rounds first, then the
    challenger's, else the acquisition's.

    Parameters
    ----------
    random : RandomRounds
        The random design's rounds (:mod:`erahbo.optimizer.random_design`).
    challenger : ChallengerRounds
        The challenger rounds (:mod:`erahbo.optimizer.challenger`).
    """

    random: RandomRounds = field(default_factory=RandomRounds)
    challenger: ChallengerRounds = field(default_factory=ChallengerRounds)

    @classmethod
    def from_options(cls, o: Options) -> RoundSchedule:
        """The round schedule of validated options."""
        return cls(RandomRounds.from_options(o), ChallengerRounds.from_options(o))

    def kind(self, bo_round: int, used: float) -> str:
        """The proposer of BO round ``bo_round`` (from 1) when ``used`` runs are spent: a key
        of :data:`ROUND_KINDS`."""
        if self.random.is_round(bo_round, used):
            return "random"
        if self.challenger.is_round(bo_round, used):
            return "challenger"
        return "acquisition"


@dataclass(frozen=True)
class Strategy:
    """The parts of a study's decisions (see the module docstring).

    Attributes
    ----------
    options : Options
        The validated options the parts were built from (the random draw and the
        acquisition read theirs, ``weight`` and ``raw_samples`` from them).
    replication : Rule
    beta_stop : BetaStopSchedule
    schedule : RoundSchedule
    caps : SeedCaps
    recommender : Recommender
    challenger_below : int
        Configurations with fewer seeds may challenge the recommendation.
    """

    options: Options
    replication: Rule
    beta_stop: BetaStopSchedule
    schedule: RoundSchedule
    caps: SeedCaps
    recommender: Recommender
    challenger_below: int

    @classmethod
    def from_options(cls, o: Options) -> Strategy:
        """The strategy of validated :class:`Options` (their presets included)."""
        return cls(
            options=o,
            replication=rule_of(o),
            beta_stop=o.beta_stop_schedule(),
            schedule=RoundSchedule.from_options(o),
            caps=SeedCaps.from_options(o),
            recommender=Recommender.from_options(o),
            challenger_below=o.recommend_seeds_value or o.k_max,
        )

    def propose(
        self,
        kind: str,
        rm: RoundModel | None,
        models: RoundModels,
        state: StudyState,
        pending: list[Any],
        allowed: np.ndarray | None,
        full: list[int],
        rng: np.random.Generator,
        round_seed: int,
    ) -> tuple[int | None, np.ndarray, int, float, str]:
        """``x_t`` from the proposer of a round of kind ``kind`` (:data:`ROUND_KINDS`).

        Parameters
        ----------
        kind : str
            From :meth:`RoundSchedule.kind` (``"random"`` also for random search and rounds
            without data, with ``rm`` None: a uniform draw).
        rm : RoundModel or None
            The round's model on the current data.
        models : RoundModels
            The acquisition's argmax (with pending trials believed) and the recommendation.
        state : StudyState
        pending : list of Trial
            Trials asked and not told: their configurations are not proposed again.
        allowed : numpy.ndarray of bool, (n_candidates,), or None
            Finite-table rows that may be proposed (None: a continuous space).
        full : list of int
            Data rows at their seed cap (never proposed again).
        rng : numpy.random.Generator
            The random draws.
        round_seed : int
            Seeds the continuous acquisition search of this round.

        Returns
        -------
        (candidate index or None, encoding ``(dim,)``, config id, acquisition value, phase)
            ``phase`` is ``"challenger"`` for a challenger's round, else ``"bo"``.
        """
        o = self.options
        if kind == "random":
            cand, u, cid = random_configuration(state, rm, allowed, rng, o)
            return cand, u, cid, np.nan, "bo"
        if kind == "challenger":  # closed: at their cap, or a pending trial runs them
            busy = [state.data.row_of(t.config_id) for t in pending]
            rec = models.recommend()
            ch = pick_challenger(state, None if rec is None else rec[0], self.challenger_below,
                                 o.weight, full + [i for i in busy if i is not None], allowed)
            if ch:  # an evaluated configuration whose own runs beat the incumbent's
                return (*ch, np.nan, "challenger")
        cand, u, cid, acq = models.choose(rm, allowed, pending, round_seed,
                                          [state.data.U[i] for i in full])
        return cand, u, cid, acq, "bo"


def paper(method: str = "erahbo", **options: Any) -> Strategy:
    """The paper's strategy (``preset="paper"``: every erahbo extension off); ``options`` by
    name override a part's parameter (any option of :class:`Options`)."""
    return Strategy.from_options(Options(method=method, preset="paper", **options))


def default(method: str = "erahbo", **options: Any) -> Strategy:
    """erahbo's strategy (``preset="default"``: for ERAHBO the extensions the defaults study
    chose, each part's ``Param.default``); ``options`` by name override a part's parameter."""
    return Strategy.from_options(Options(method=method, preset="default", **options))
