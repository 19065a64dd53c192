"""Optuna distributions <-> an erahbo :class:`~erahbo.space.SearchSpace`, with real values.

Every table erahbo prints (``result().configs``, the history) shows the values the objective
received: a categorical keeps its choices (``("cat", choices)``; choices erahbo cannot hold,
such as ``None``, become their ``repr``), a stepped float or int is an ordered choice of its
grid values (``("ord", [low, low + step, ...])``), plain floats and ints stay numeric.
"""

from __future__ import annotations

import json
import math
import numbers
from typing import Any

from optuna.distributions import (
    BaseDistribution,
    CategoricalDistribution,
    FloatDistribution,
    IntDistribution,
)

from erahbo.space import SearchSpace

__all__ = ["Coder", "config_key"]

MAX_GRID = 100_000  # a stepped distribution with more grid points is modelled as continuous


def config_key(config: dict[str, Any]) -> str:
    """Canonical JSON of an erahbo configuration (the key of its seeds and its data); floats
    to 12 significant digits, so that a configuration decoded from its encoding has its key."""
    plain = {n: v.item() if hasattr(v, "item") else v for n, v in config.items()}  # numpy
    return json.dumps({n: float(f"{v:.12g}") if isinstance(v, float) else v
                       for n, v in plain.items()}, sort_keys=True, default=repr)


def _labels(choices: tuple[Any, ...]) -> list[Any]:
    """The categorical values erahbo models: the choices, with ``repr`` for those erahbo
    cannot hold (None, other types, non-finite floats); all ``repr`` when that would make
    two labels equal (such as ``None`` and ``"None"``, or ``1`` and ``True``)."""
    def held(c: Any) -> bool:
        return isinstance(c, (bool, int, float, str)) and not (
            isinstance(c, float) and not math.isfinite(c))

    labels = [c if held(c) else repr(c) for c in choices]
    if len({str(c) for c in labels}) == len(labels):
        return labels
    return [repr(c) for c in choices]


def _grid(d: FloatDistribution | IntDistribution) -> list[Any] | None:
    """The values of a stepped distribution, as Optuna computes them (None: too many)."""
    n = round((d.high - d.low) / d.step) + 1
    if n > MAX_GRID:
        return None
    if isinstance(d, IntDistribution):
        return [int(d.low + i * d.step) for i in range(n)]
    return [float(f"{min(d.low + i * d.step, d.high):.12g}") for i in range(n)]


class Coder:
    """The modelled part of a study's search space (parameters in every trial).

    Parameters
    ----------
    dists : dict of str to optuna.distributions.BaseDistribution
        The intersection search space (single-valued distributions left out).
    """

    def __init__(self, dists: dict[str, BaseDistribution]) -> None:
        self.dists = dict(sorted(dists.items()))
        self._values: dict[str, list[Any]] = {}  # categorical labels / stepped grids
        spec: dict[str, Any] = {}
        for name, d in self.dists.items():
            grid = (_grid(d) if isinstance(d, (FloatDistribution, IntDistribution))
                    and d.step is not None and d.step != 1 else None)
            if isinstance(d, CategoricalDistribution):
                self._values[name] = _labels(tuple(d.choices))
                spec[name] = ("cat", self._values[name])
            elif grid is not None:
                self._values[name] = grid
                spec[name] = ("ord", grid)
            elif isinstance(d, FloatDistribution):
                spec[name] = ("log" if d.log else "float", d.low, d.high)
            elif isinstance(d, IntDistribution):
                spec[name] = ("logint" if d.log else "int", d.low, d.high)
            else:
                raise TypeError(f"parameter {name!r}: unsupported distribution {d!r}")
        self.space = SearchSpace(spec)
        self.key = json.dumps({n: str(d) for n, d in self.dists.items()})

    def covers(self, params: dict[str, Any]) -> bool:
        """Whether ``params`` holds every modelled parameter, inside its distribution."""
        return all(n in params for n in self.dists) and self.outside(params) is None

    def outside(self, params: dict[str, Any]) -> str | None:
        """The first parameter of ``params`` outside its distribution, as ``"name=value
        (distribution)"``; None when each one given lies inside (an enqueued trial's values
        are not checked by Optuna)."""
        for name, d in self.dists.items():
            if name not in params:
                continue
            v = params[name]
            if isinstance(d, CategoricalDistribution):
                try:
                    d.to_internal_repr(v)
                    continue
                except ValueError:
                    pass
            elif isinstance(v, numbers.Real) and d.low <= v <= d.high:
                continue
            return f"{name}={v!r} ({d})"
        return None

    def to_erahbo(self, params: dict[str, Any]) -> dict[str, Any]:
        """Optuna parameters -> the erahbo configuration (modelled parameters only)."""
        out: dict[str, Any] = {}
        for name, d in self.dists.items():
            v = params[name]
            if isinstance(d, CategoricalDistribution):
                out[name] = self._values[name][int(d.to_internal_repr(v))]
            elif name in self._values:  # a stepped grid: the nearest grid value
                grid = self._values[name]
                out[name] = grid[min(max(round((v - d.low) / d.step), 0), len(grid) - 1)]
            elif isinstance(d, IntDistribution):
                out[name] = int(v)
            else:
                out[name] = float(v)
        return out

    def to_optuna(self, config: dict[str, Any]) -> dict[str, Any]:
        """An erahbo configuration -> Optuna parameters (valid for each distribution)."""
        out: dict[str, Any] = {}
        for name, d in self.dists.items():
            v = config[name]
            if isinstance(d, CategoricalDistribution):
                out[name] = d.choices[self._values[name].index(v)]
            elif name in self._values:
                out[name] = v
            elif d.step not in (None, 1):  # a grid too large to list: snap to it
                out[name] = min(d.low + round((float(v) - d.low) / d.step) * d.step, d.high)
                out[name] = int(out[name]) if isinstance(d, IntDistribution) else out[name]
            elif isinstance(d, IntDistribution):
                out[name] = min(max(round(v), d.low), d.high)
            else:
                out[name] = min(max(float(v), d.low), d.high)
        return out

    def key_of(self, params: dict[str, Any]) -> str:
        """The configuration key of Optuna parameters."""
        return config_key(self.to_erahbo(params))
