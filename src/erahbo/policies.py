"""Replication policies: the whole per-seed decision of a BO round.

* :class:`FixedK` — RAHBO and GP-UCB: ``k`` seeds per round.
* :class:`AdaptiveK` — ERAHBO (Sec. 3.2.1): ``k_min`` seeds first, then one more at a time
  (``seed_batch`` at a time with parallel workers) until the stopping rule (eq. 12,
  :func:`erahbo.gp.bounds.adaptive_rule`), ``UCB_t^MV(x_t; k) <= B_t``, holds, ``k = k_max``
  or the budget is spent.
* :class:`Race` — an ablation after SMAC's intensifier: double the seeds while ``x_t``'s sample
  MV is at least the best other one.
* :class:`BetaStopSchedule` — the confidence parameter ``beta_stop`` of the incumbent bound
  ``B_t`` and of the stopping UCB (appendix "Schedule beta_stop"): constant, exponential
  (eq. 35) or sigmoid (eq. 36) in the normalized progress ``tau = t / T`` (seeds used over the
  budget).

A policy answers three questions of the optimizer: how many seeds open a round
(:attr:`first`), how many the next trial of an open round asks for (:meth:`next_seeds`), and
whether the round ends after a tell (:meth:`after_tell`).

>>> policy = AdaptiveK(k_min=2, k_max=20)
>>> policy.decide(k=2, ucb_mv=0.3, B_t=0.5)
'dominated'
>>> policy.decide(k=2, ucb_mv=0.7, B_t=0.5) is None
True
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from erahbo.gp.bounds import adaptive_rule
from erahbo.validation import check_k_range, check_option

__all__ = [
    "CAPPED",
    "SCHEDULES",
    "STOPPING_RULES",
    "STOP_REASONS",
    "AdaptiveK",
    "BetaStopSchedule",
    "FixedK",
    "Policy",
    "Race",
    "adaptive_rule",
    "make_policy",
]

SCHEDULES = ("constant", "exponential", "sigmoid")
STOPPING_RULES = ("ucb", "race")  # ERAHBO's rule for more seeds: the paper's, or racing
#: Why a round ended (a rounds table's ``stop_reason``), each with what it means. The order
#: is the order of the legend of :func:`erahbo.analysis.run_plots.plot_rounds`.
STOP_REASONS = {
    "dominated": "the stopping rule: UCB_MV below B_t",
    "k_max": "k_max seeds reached",
    "fixed_k": "a fixed-k round completed",
    "budget": "the budget ran out",
    "excluded": "the configuration was excluded (finite table)",
    "infeasible": "the configuration failed (infeasible)",
    "initial": "the initial design",
    "warm": "runs given as a warm start",
    "max_seeds": "the configuration reached its seed cap",
    "random": "chosen at random (the random design's rounds: their first seeds only)",
}
#: The stop reason of a round that the seed cap (:mod:`erahbo.optimizer.seedcap`) ends.
CAPPED = "max_seeds"


@dataclass(frozen=True)
class FixedK:
    """``k`` seeds per round (RAHBO, GP-UCB, random search)."""

    k: int = 20
    needs_models = False  # the decision reads no bound
    uses_sample_gap = False

    def __post_init__(self) -> None:
        check_option("k", self.k)

    @property
    def first(self) -> int:
        """Seeds asked for at the start of a round."""
        return int(self.k)

    def decide(self, k: int, ucb_mv: float, B_t: float) -> str | None:
        """Always ends the round after its ``k`` seeds: returns ``"fixed_k"``."""
        return "fixed_k"

    def next_seeds(self, k: int, free: float) -> int:
        """A fixed-k round is one trial; never asked (kept for the common interface)."""
        return 1

    def after_tell(self, k: int, asked: int, remaining: float, seeds_left: float = math.inf,
                   *, random_round: bool = False, **_: object) -> str:
        """End of the round: ``"fixed_k"`` (``"random"`` for a round chosen at random), or
        ``"budget"`` when fewer seeds than ``k`` ran (:data:`CAPPED`: the cap cut it)."""
        return _final(_first_trial(self.first, asked, random_round), remaining, seeds_left)


@dataclass(frozen=True)
class AdaptiveK:
    """ERAHBO's confidence-based replication with ``k in [k_min, k_max]``."""

    k_min: int = 2
    k_max: int = 20
    seed_batch: int = 1
    needs_models = True  # the stopping rule reads UCB^MV(x_t; k) and B_t
    uses_sample_gap = False

    def __post_init__(self) -> None:
        check_k_range(self.k_min, self.k_max)
        check_option("seed_batch", self.seed_batch)

    @property
    def first(self) -> int:
        """Seeds asked for at the start of a round: ``k_min``."""
        return int(self.k_min)

    def decide(self, k: int, ucb_mv: float, B_t: float) -> str | None:
        """Stop reason after ``k`` seeds of this round, or None to ask for one more seed.

        Parameters
        ----------
        k : int
            Seeds spent at ``x_t`` in this round so far.
        ucb_mv : float
            ``UCB_t^MV(x_t; k)`` with the models updated by those seeds.
        B_t : float
            Incumbent lower bound of the round.

        Returns
        -------
        str or None
            ``"dominated"`` (eq. 12 holds), ``"k_max"``, or None (continue).
        """
        if adaptive_rule(ucb_mv, B_t):
            return "dominated"
        if k >= self.k_max:
            return "k_max"
        return None

    def _step(self, k: int) -> int:
        return self.seed_batch

    def next_seeds(self, k: int, free: float) -> int:
        """Seeds of the next trial of a round at ``k`` seeds, with ``free`` left in the budget.

        ``seed_batch`` (one: the paper's rule), never past ``k_max`` nor the budget.
        """
        return int(min(self._step(k), free, max(self.k_max - k, 1)))

    def after_tell(
        self,
        k: int,
        asked: int,
        remaining: float,
        seeds_left: float = math.inf,
        *,
        random_round: bool = False,
        ucb_mv: float | None = None,
        B_t: float = math.nan,
        sample_gap: float | None = None,
    ) -> str | None:
        """The round's final stop reason after a tell (a key of :data:`STOP_REASONS`), or
        None for more seeds.

        Parameters
        ----------
        k : int
            Seeds of the round so far.
        asked : int
            Seeds of the trial just told.
        remaining : float
            Seeds left in the budget.
        seeds_left : float
            Seeds the configuration may still get under the seed caps
            (:mod:`erahbo.optimizer.seedcap`): a round the cap ends is :data:`CAPPED`.
        random_round : bool
            The round's configuration was drawn at random (``"random"`` when it ends).
        ucb_mv : float or None
            ``UCB_t^MV(x_t; k)``; None for a round without models (a random round, no data
            yet): it ends after its first trial like a fixed-k round.
        B_t : float
            The round's incumbent bound.
        sample_gap : float or None
            ``x_t``'s sample MV minus the best other one (:class:`Race` only).
        """
        if ucb_mv is None and self.needs_models:  # a round without models
            return _final(_first_trial(self.first, asked, random_round), remaining, seeds_left)
        reason = self._stop(k, ucb_mv, B_t, sample_gap)
        return _final("budget" if reason is None and remaining < 1 else reason, remaining,
                      seeds_left)

    def _stop(self, k: int, ucb_mv: float | None, B_t: float,
              sample_gap: float | None) -> str | None:
        return self.decide(k, ucb_mv, B_t)


@dataclass(frozen=True)
class Race(AdaptiveK):
    """Racing ablation of ERAHBO (``stopping="race"``, after SMAC's intensifier).

    Sample statistics instead of the GPs: double the seeds, ``k_min, 2 k_min, 4 k_min, ...
    <= k_max``, while ``x_t``'s sample MV is at least the best sample MV of the other evaluated
    configurations (``sample_gap >= 0`` in :meth:`after_tell`); reject it as soon as it is
    below.
    """

    needs_models = False
    uses_sample_gap = True  # the decision reads x_t's sample MV against the others'

    def _step(self, k: int) -> int:
        return k  # double

    def _stop(self, k: int, ucb_mv: float | None, B_t: float,
              sample_gap: float | None) -> str | None:
        if sample_gap is not None and sample_gap < 0:
            return "dominated"
        return "k_max" if k >= self.k_max else None


Policy = FixedK | AdaptiveK


def _first_trial(first: int, asked: int, random_round: bool) -> str:
    """A round that ends after its first trial: ``"budget"`` when fewer than ``first`` seeds
    ran, else ``"random"`` (chosen at random) or ``"fixed_k"``."""
    if asked < first:
        return "budget"
    return "random" if random_round else "fixed_k"


def _final(reason: str | None, remaining: float, seeds_left: float) -> str | None:
    """A round that the seed cap cuts (no seeds left for the configuration, budget left) ends
    with :data:`CAPPED`, not with its policy's reason."""
    if seeds_left < 1 and reason in (None, "budget") and remaining >= 1:
        return CAPPED
    return reason


@dataclass(frozen=True)
class BetaStopSchedule:
    """``beta_stop_t`` as a function of the normalized progress ``tau = t / T``.

    * ``constant``: ``beta_stop`` (paper default 1.0);
    * ``exponential``: ``beta_stop * (exp(gamma tau) - 1) / (exp(gamma) - 1)``
      (eq. 35);
    * ``sigmoid``: ``beta_stop * (s(tau) - s(0)) / (s(1) - s(0))`` with
      ``s(tau) = 1 / (1 + exp(slope (tau - 0.5)))`` (eq. 36).

    Both schedules rise from 0 at ``tau = 0`` to ``beta_stop`` at ``tau = 1``.  The value is
    used as ``sqrt(beta_stop_t)`` standard deviations (see :mod:`erahbo.gp.bounds`).

    Parameters
    ----------
    kind : {"constant", "exponential", "sigmoid"}
    beta_stop : float
        Maximum (and constant) value, ``>= 0``.
    gamma : float
        Rate of the exponential schedule (``> 0``; the paper ablates up to 50).
    slope : float
        Slope ``s`` of the sigmoid schedule (``> 0``).
    """

    kind: str = "constant"
    beta_stop: float = 1.0
    gamma: float = 10.0
    slope: float = 10.0

    def __post_init__(self) -> None:
        if self.kind not in SCHEDULES:
            raise ValueError(f"schedule={self.kind!r} must be one of {SCHEDULES}")
        check_option("beta_stop", self.beta_stop)
        if self.kind == "exponential":
            check_option("gamma", self.gamma)
        if self.kind == "sigmoid":
            check_option("slope", self.slope)

    def __call__(self, tau: float) -> float:
        """``beta_stop_t`` at progress ``tau`` (clipped to ``[0, 1]``)."""
        tau = min(max(float(tau), 0.0), 1.0)
        if self.kind == "constant":
            return float(self.beta_stop)
        if self.kind == "exponential":
            g = self.gamma
            # (e^{g tau} - 1) / (e^g - 1), written with expm1 and rescaled to avoid overflow
            if g > 700:
                return float(self.beta_stop * math.exp(g * (tau - 1.0)))
            return float(self.beta_stop * math.expm1(g * tau) / math.expm1(g))

        def sig(x: float) -> float:
            z = self.slope * (x - 0.5)
            return 1.0 / (1.0 + math.exp(z)) if z < 700 else 0.0

        return float(self.beta_stop * (sig(tau) - sig(0.0)) / (sig(1.0) - sig(0.0)))


def make_policy(
    method: str,
    *,
    k: int = 20,
    k_min: int = 2,
    k_max: int = 20,
    stopping: str = "ucb",
    seed_batch: int = 1,
) -> Policy:
    """Replication policy of a method: ERAHBO adaptive (or racing), the others fixed ``k``."""
    if method == "erahbo":
        if stopping == "race":
            return Race(k_min=k_min, k_max=k_max)
        return AdaptiveK(k_min=k_min, k_max=k_max, seed_batch=seed_batch)
    return FixedK(k=k)
