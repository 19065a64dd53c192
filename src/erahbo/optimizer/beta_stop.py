"""The ``beta_stop`` schedule: the confidence of ``B_t`` and of the stopping UCB over a study.

A part of a strategy (:mod:`erahbo.optimizer.strategy`), read by the replication rule
(:mod:`erahbo.optimizer.replication`): ``B_t = max LCB^MV`` (eq. 10) and ``UCB^MV(x_t; k)``
(eq. 12) use ``sqrt(beta_stop_t)`` standard deviations, where ``beta_stop_t`` is constant,
exponential (eq. 35) or sigmoid (eq. 36) in the normalized progress ``tau = t / T`` (seeds
used over the budget; appendix "Schedule beta_stop").

Its options are declared in :data:`PARAMS` (checks, both presets, the study settings:
:mod:`erahbo.optimizer.parts`); like the replication rule's ``k_min``, they are core options
that each host lists itself (``Param.hosts`` False). :func:`check` refuses a schedule without
a budget (no progress) or over ``beta_stop = 0`` (every value 0).

>>> BetaStopSchedule("sigmoid", beta_stop=1.0)(0.5)
0.5
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from erahbo.validation import RULES as CHECKS
from erahbo.validation import Param, check_option, check_real

__all__ = ["PARAMS", "SCHEDULES", "BetaStopSchedule", "check"]

SCHEDULES = ("constant", "exponential", "sigmoid")


def _kind(name: str, value: Any) -> str:
    """Rule of ``schedule``: one of :data:`SCHEDULES`."""
    if value not in SCHEDULES:
        raise ValueError(f"{name}={value!r} must be one of {SCHEDULES}")
    return str(value)


#: The schedule's options (:class:`erahbo.validation.Param`; each host lists them itself).
PARAMS = (
    Param("beta_stop", float, CHECKS["beta_stop"], default=0.0, paper=1.0, absent=1.0,
          help="Confidence of B_t and of the stopping UCB (eq. 12); the maximum of a schedule "
               "(default 0 for ERAHBO: posterior means; the paper: 1).", hosts=False),
    Param("schedule", str, _kind, default="constant", paper="constant", absent="constant",
          help="beta_stop over the progress t / budget: constant, exponential (eq. 35) or "
               "sigmoid (eq. 36).", hosts=False),
    Param("gamma", float, check_real, default=10.0, paper=10.0, absent=10.0,
          help="Rate of the exponential schedule (> 0).", hosts=False),
    Param("slope", float, check_real, default=10.0, paper=10.0, absent=10.0,
          help="Slope of the sigmoid schedule (> 0).", hosts=False),
)


def check(o: Any, given: set[str]) -> None:
    """Refuse a schedule without a budget or over ``beta_stop = 0``, and the rate of the
    schedule in force at or below 0."""
    if o.schedule != "constant" and o.budget is None:
        raise ValueError(f"schedule={o.schedule!r} needs a budget (progress is t / budget)")
    BetaStopSchedule.from_options(o)  # the schedule's kind, gamma and slope
    if o.schedule != "constant" and not o.beta_stop:
        raise ValueError(
            f"schedule={o.schedule!r} scales beta_stop over the budget, but beta_stop="
            f"{o.beta_stop} (the default for ERAHBO) makes every value 0: give beta_stop > 0 "
            "(the paper: 1.0), or drop schedule")


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

    @classmethod
    def from_options(cls, o: Any) -> BetaStopSchedule:
        """The schedule of validated options (``schedule``, ``beta_stop``, ``gamma``,
        ``slope``)."""
        return cls(o.schedule, o.beta_stop, o.gamma, o.slope)

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
