"""Objectives: user objectives, synthetic tasks with known MV optimum, dataset replay.

A user objective is ``objective(config: dict, seed: int) -> float`` (one training run, its
return).  A function that runs several seeds at once, ``objective(config, seeds) -> list``,
is declared with :func:`batch_objective`:

>>> @batch_objective
... def objective(config, seeds):
...     return [float(s % 3) for s in seeds]
>>> call_objective(objective, {}, [1, 2, 4])
[1.0, 2.0, 1.0]
"""

from __future__ import annotations

import copy
import math
from collections.abc import Callable, Sequence
from typing import Any

__all__ = ["batch_objective", "call_objective", "config_copy", "is_batch_objective"]

_BATCH_ATTR = "__erahbo_batch__"


def batch_objective(func: Callable[[dict, list[int]], Sequence[float]]) -> Callable:
    """Declare ``func(config, seeds) -> list of float`` as a batch objective (one return per seed).

    The function is returned unchanged, only marked; :func:`erahbo.optimize` then calls it once
    per trial with all the trial's seeds instead of once per seed.
    """
    if not callable(func):
        raise TypeError(f"batch_objective: expected a callable, got {type(func).__name__}")
    try:
        setattr(func, _BATCH_ATTR, True)
    except AttributeError as err:  # e.g. a bound method: wrap it

        def wrapper(config: dict, seeds: list[int]) -> Sequence[float]:
            return func(config, seeds)

        wrapper.__doc__ = getattr(func, "__doc__", None)
        setattr(wrapper, _BATCH_ATTR, True)
        if not callable(wrapper):  # pragma: no cover
            raise err
        return wrapper
    return func


def config_copy(config: Any) -> Any:
    """A copy of ``config`` to hand to one call of an objective.

    An objective may change the dict it receives (``config["lr"] = 999``); each call gets its
    own copy, so that the change reaches neither the next seed's call nor the study's records.
    """
    return copy.deepcopy(config)


def is_batch_objective(func: Any) -> bool:
    """True when ``func`` was declared with :func:`batch_objective`."""
    return bool(getattr(func, _BATCH_ATTR, False))


def call_objective(
    objective: Callable, config: dict[str, Any], seeds: Sequence[int]
) -> list[float]:
    """Run ``objective`` on ``config`` for every seed and check the returns.

    Parameters
    ----------
    objective : callable
        ``objective(config, seed) -> float`` or a :func:`batch_objective`.
    config : dict
        The configuration (``trial.config``).
    seeds : sequence of int
        The seeds (``trial.seeds``).

    Returns
    -------
    list of float
        One finite return per seed, in order.
    """
    seeds = [int(s) for s in seeds]
    if is_batch_objective(objective):
        out = objective(config_copy(config), list(seeds))
        try:
            returns = [float(v) for v in out]
        except TypeError as err:
            raise TypeError(
                f"batch objective returned {type(out).__name__}; it must return one float per "
                f"seed (a list of {len(seeds)})"
            ) from err
        if len(returns) != len(seeds):
            raise ValueError(
                f"batch objective returned {len(returns)} values for {len(seeds)} seeds; "
                "return one float per seed"
            )
    else:
        returns = []
        for s in seeds:
            v = objective(config_copy(config), s)
            try:
                returns.append(float(v))
            except (TypeError, ValueError) as err:
                raise TypeError(
                    f"objective(config, seed={s}) returned {v!r}; it must return one float "
                    "(declare objective(config, seeds) -> list with @erahbo.batch_objective)"
                ) from err
    for s, v in zip(seeds, returns, strict=True):
        if not math.isfinite(v):
            raise ValueError(
                f"objective returned {v} for config {config} and seed {s}; returns must be "
                "finite (map failed runs to a finite penalty value)"
            )
    return returns
