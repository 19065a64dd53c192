"""The risk measure's options: ``risk`` and the ``q`` / ``c`` a measure reads (``alpha`` is a
core option), their validation and the measure they make.

A part of a strategy (:mod:`erahbo.optimizer.strategy`, listed in
:mod:`erahbo.optimizer.parts`); the measures themselves are :mod:`erahbo.risk` (adding one:
its class and its line in :data:`erahbo.risk.MEASURES`; a new option it reads: its
:class:`~erahbo.validation.Param` here and its default in :data:`erahbo.risk.OPTIONS`).
"""

from __future__ import annotations

from dataclasses import fields
from typing import Any

from erahbo.risk import MEASURES, OPTIONS, RiskMeasure, nonnegative, risk_rule, tail_share
from erahbo.validation import Param

__all__ = ["PARAMS", "check", "measure_of"]


def _reads(name: str) -> tuple[str, ...]:
    return tuple(f.name for f in fields(MEASURES[name]))


def _c_rule(name: str, value: Any) -> float:
    return nonnegative(name, value, "counts the standard deviations in mean - c * std")


def _given(o: Any, option: str) -> bool:
    """Whether an option of the measures was set: ``q``, ``c`` not None; ``alpha`` (a core
    option, always set) away from its default 1."""
    value = getattr(o, option, None)
    return value is not None and (option != "alpha" or value != OPTIONS["alpha"])


def _resolved(option: str) -> Any:
    """``Param.resolve`` of ``q`` / ``c``: the value the study's measure reads (None: its
    measure does not read it)."""

    def resolve(o: Any) -> Any:
        if option not in _reads(o.risk):
            return None
        value = getattr(o, option)
        return OPTIONS[option] if value is None else value

    return resolve


#: The risk measure's options (:class:`erahbo.validation.Param`); ``alpha`` is a core option.
PARAMS = (
    Param("risk", str, risk_rule, default="mv", paper="mv", absent="mv",
          help="The risk measure over seeds: 'mv' (mean - alpha * variance, the default), "
               "'mean_std' (mean - c * std), 'cvar' (mean of the worst q share of seeds) or "
               "'quantile' (the q quantile)."),
    Param("q", float, lambda name, value: tail_share(value), default=None, paper=None,
          absent=None, resolve=_resolved("q"),
          help="risk='cvar' or 'quantile': the share of worst seeds, in (0, 0.5] (default "
               "0.1: the worst 10 %)."),
    Param("c", float, _c_rule, default=None, paper=None, absent=None, resolve=_resolved("c"),
          help="risk='mean_std': standard deviations subtracted from the mean (default 1)."),
)


def check(o: Any, given: set[str]) -> None:
    """Refuse an option of the measures that the chosen measure does not read."""
    reads = _reads(o.risk)
    for option in OPTIONS:
        if option not in reads and _given(o, option):
            users = [n for n in MEASURES if option in _reads(n)]
            raise ValueError(
                f"{option}={getattr(o, option)!r} does nothing with risk={o.risk!r}: it is "
                f"read by risk={' or '.join(map(repr, users))}; drop {option} or set risk="
                f"{users[0]!r}")


def measure_of(o: Any) -> RiskMeasure:
    """The measure of validated options (``risk``, and ``alpha`` / ``c`` / ``q`` as it reads)."""
    cls = MEASURES[o.risk or "mv"]
    values = {}
    for f in fields(cls):
        value = getattr(o, f.name, None)
        values[f.name] = OPTIONS[f.name] if value is None else value
    return cls(**values)
