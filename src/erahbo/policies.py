"""Replication policies: how many seeds a BO round spends on its configuration.

* :class:`FixedK` — RAHBO and GP-UCB: ``k`` seeds per round.
* :class:`AdaptiveK` — ERAHBO (Sec. 3.2.1): ``k_min`` seeds first, then one more at a time
  until the stopping rule :func:`adaptive_rule` (eq. adaptive_rule),
  ``UCB_t^MV(x_t; k) <= B_t``, holds or ``k = k_max``.
* :class:`BetaStopSchedule` — the confidence parameter ``beta_stop`` of the incumbent bound
  ``B_t`` and of the stopping UCB (appendix "Schedule beta_stop"): constant, exponential
  (eq. exp_schedule) or sigmoid (eq. sig_schedule) in the normalized progress ``tau = t / T``
  (seeds used over the budget).

>>> policy = AdaptiveK(k_min=2, k_max=20)
>>> policy.decide(k=2, ucb_mv=0.3, B_t=0.5)
'dominated'
>>> policy.decide(k=2, ucb_mv=0.7, B_t=0.5) is None
True
"""

from __future__ import annotations

import math
from dataclasses import dataclass

__all__ = [
    "SCHEDULES",
    "STOP_REASONS",
    "AdaptiveK",
    "BetaStopSchedule",
    "FixedK",
    "adaptive_rule",
    "make_policy",
]

SCHEDULES = ("constant", "exponential", "sigmoid")
# why a round ended: the stopping rule fired, k_max reached, a fixed-k round completed,
# the budget ran out, the configuration was excluded (finite table) or failed (infeasible),
# the initial design, or runs given as a warm start.
STOP_REASONS = ("dominated", "k_max", "fixed_k", "budget", "excluded", "infeasible", "initial",
                "warm")


def adaptive_rule(ucb_mv_k: float, B_t: float) -> bool:
    """ERAHBO's stopping rule (eq. adaptive_rule): stop when ``UCB_t^MV(x_t; k) <= B_t``.

    Parameters
    ----------
    ucb_mv_k : float
        Upper bound of ``MV(x_t)`` after the ``k`` seeds seen so far (with ``beta_stop``).
    B_t : float
        Incumbent lower bound (eq. inc_lcb), fixed during the round.

    Returns
    -------
    bool
        True when ``x_t`` is certified worse than the incumbent: no more seeds.
    """
    return bool(ucb_mv_k <= B_t)


@dataclass(frozen=True)
class FixedK:
    """``k`` seeds per round (RAHBO, GP-UCB, random search)."""

    k: int = 20

    def __post_init__(self) -> None:
        if int(self.k) != self.k or self.k < 2:
            raise ValueError(f"k={self.k} must be an integer >= 2 (two seeds estimate a variance)")

    @property
    def first(self) -> int:
        """Seeds asked for at the start of a round."""
        return int(self.k)

    def decide(self, k: int, ucb_mv: float, B_t: float) -> str | None:
        """Always ends the round after its ``k`` seeds: returns ``"fixed_k"``."""
        return "fixed_k"


@dataclass(frozen=True)
class AdaptiveK:
    """ERAHBO's confidence-based replication with ``k in [k_min, k_max]``."""

    k_min: int = 2
    k_max: int = 20

    def __post_init__(self) -> None:
        if int(self.k_min) != self.k_min or self.k_min < 2:
            raise ValueError(f"k_min={self.k_min} must be an integer >= 2 (sample variance)")
        if int(self.k_max) != self.k_max or self.k_max < self.k_min:
            raise ValueError(f"k_max={self.k_max} must be an integer >= k_min={self.k_min}")

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
            ``"dominated"`` (eq. adaptive_rule holds), ``"k_max"``, or None (continue).
        """
        if adaptive_rule(ucb_mv, B_t):
            return "dominated"
        if k >= self.k_max:
            return "k_max"
        return None


@dataclass(frozen=True)
class BetaStopSchedule:
    """``beta_stop_t`` as a function of the normalized progress ``tau = t / T``.

    * ``constant``: ``beta_stop`` (paper default 1.0);
    * ``exponential``: ``beta_stop * (exp(gamma tau) - 1) / (exp(gamma) - 1)``
      (eq. exp_schedule);
    * ``sigmoid``: ``beta_stop * (s(tau) - s(0)) / (s(1) - s(0))`` with
      ``s(tau) = 1 / (1 + exp(slope (tau - 0.5)))`` (eq. sig_schedule).

    Both schedules rise from 0 at ``tau = 0`` to ``beta_stop`` at ``tau = 1``.  The value is
    used as ``sqrt(beta_stop_t)`` standard deviations (see :mod:`erahbo.acquisition`).

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
        if not self.beta_stop >= 0:
            raise ValueError(f"beta_stop={self.beta_stop} must be >= 0")
        if self.kind == "exponential" and not self.gamma > 0:
            raise ValueError(f"gamma={self.gamma} must be > 0 for the exponential schedule")
        if self.kind == "sigmoid" and not self.slope > 0:
            raise ValueError(f"slope={self.slope} must be > 0 for the sigmoid schedule")

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


def make_policy(method: str, *, k: int = 20, k_min: int = 2, k_max: int = 20) -> FixedK | AdaptiveK:
    """Replication policy of a method: ERAHBO adaptive, the others fixed ``k``."""
    if method == "erahbo":
        return AdaptiveK(k_min=k_min, k_max=k_max)
    return FixedK(k=k)
