"""Replication rules and the ``beta_stop`` schedule, under their former names.

The rules are a strategy part, :mod:`erahbo.optimizer.replication` (:class:`FixedK`,
:class:`AdaptiveK` = eq. 12, :class:`Race`; :data:`RULES` lists ERAHBO's); the schedule is
:mod:`erahbo.optimizer.beta_stop`. This module hands their names on (``Policy`` is
:class:`~erahbo.optimizer.replication.Rule`, ``make_policy``
:func:`~erahbo.optimizer.replication.make_rule`).

>>> policy = AdaptiveK(k_min=2, k_max=20)
>>> policy.decide(k=2, ucb_mv=0.3, B_t=0.5)
'dominated'
"""

from __future__ import annotations

from erahbo.gp.bounds import adaptive_rule
from erahbo.optimizer.beta_stop import SCHEDULES, BetaStopSchedule
from erahbo.optimizer.replication import (
    CAPPED,
    STOP_REASONS,
    STOPPING_RULES,
    AdaptiveK,
    FixedK,
    Race,
)
from erahbo.optimizer.replication import Rule as Policy
from erahbo.optimizer.replication import make_rule as make_policy

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
