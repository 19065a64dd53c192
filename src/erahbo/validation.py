"""Validation of user input at the library boundary: one clear message per mistake.

Every check raises ``ValueError`` (a bad value) or ``TypeError`` (a bad type) whose message names
the option, the value given and the fix. The optimizer calls these once, in its constructor;
the CLI gets the same messages by calling the library.

>>> check_options(alpha=1.0, k_min=2, k_max=20, budget=400, n_init=5, k_init=20)
>>> check_options(k_min=1)
Traceback (most recent call last):
...
ValueError: k_min=1 is too small: the sample variance needs at least 2 seeds; use k_min >= 2
"""

from __future__ import annotations

import inspect
import math
import numbers
import os
from typing import Any

__all__ = ["check_journal_path", "check_objective", "check_options"]


def _int(name: str, value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        if isinstance(value, float) and value.is_integer():
            raise TypeError(f"{name} must be an int, got the float {value!r}; write {int(value)}")
        raise TypeError(f"{name} must be an int, got {type(value).__name__} {value!r}")
    return int(value)


def _real(name: str, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a number, got {type(value).__name__} {value!r}")
    v = float(value)
    if not math.isfinite(v):
        raise ValueError(f"{name}={value!r} must be finite")
    return v


def check_options(
    *,
    alpha: float | None = None,
    beta: float | None = None,
    beta_stop: float | None = None,
    k_min: int | None = None,
    k_max: int | None = None,
    k: int | None = None,
    budget: int | None = None,
    n_init: int | None = None,
    k_init: int | None = None,
    run_timeout: float | None = None,
    retries: int | None = None,
) -> None:
    """Check the optimizer's numeric options; arguments left at None are not checked.

    Parameters
    ----------
    alpha : float
        Risk aversion of ``MV = f - alpha * rho^2``; must be >= 0 (0 is risk-neutral).
    beta, beta_stop : float
        Exploration / stopping confidence parameters (bounds are ``mu +- sqrt(beta) sigma``);
        must be > 0 (beta_stop may be 0).
    k_min, k_max : int
        Seeds per configuration for ERAHBO: ``2 <= k_min <= k_max``.
    k : int
        Seeds per configuration for the fixed-k methods; >= 2 (a variance needs 2 seeds).
    budget : int
        Training runs in total; at least the initial design ``n_init * k_init``.
    n_init, k_init : int
        Initial design: configurations and seeds each.
    run_timeout : float
        Seconds per training run; > 0.
    retries : int
        Retries per failed seed; >= 0.

    Raises
    ------
    ValueError, TypeError
        At the first bad option, naming it and the fix.
    """
    if alpha is not None and _real("alpha", alpha) < 0:
        raise ValueError(
            f"alpha={alpha!r} is negative: alpha weighs the variance penalty of "
            "MV = f - alpha * rho^2; use alpha >= 0 (0 = risk-neutral)"
        )
    if beta is not None and _real("beta", beta) <= 0:
        raise ValueError(f"beta={beta!r} must be > 0 (the paper uses beta = 2.5)")
    if beta_stop is not None and _real("beta_stop", beta_stop) < 0:
        raise ValueError(f"beta_stop={beta_stop!r} must be >= 0 (the paper uses beta_stop = 1)")
    if k_min is not None and _int("k_min", k_min) < 2:
        raise ValueError(
            f"k_min={k_min!r} is too small: the sample variance needs at least 2 seeds; "
            "use k_min >= 2"
        )
    if k_max is not None:
        _int("k_max", k_max)
        if k_min is not None and k_max < k_min:
            raise ValueError(f"k_max={k_max!r} is smaller than k_min={k_min!r}; use k_max >= k_min")
        if k_max < 2:
            raise ValueError(f"k_max={k_max!r} is too small; use k_max >= 2")
    if k is not None and _int("k", k) < 2:
        raise ValueError(f"k={k!r} is too small: a variance needs at least 2 seeds; use k >= 2")
    if n_init is not None and _int("n_init", n_init) < 1:
        raise ValueError(f"n_init={n_init!r} must be >= 1")
    if k_init is not None and _int("k_init", k_init) < 2:
        raise ValueError(f"k_init={k_init!r} is too small; use k_init >= 2")
    if budget is not None:
        if _int("budget", budget) < 1:
            raise ValueError(f"budget={budget!r} must be a positive number of training runs")
        if n_init is not None and k_init is not None and budget < n_init * k_init:
            raise ValueError(
                f"budget={budget!r} is smaller than the initial design (n_init={n_init} "
                f"configurations x k_init={k_init} seeds = {n_init * k_init} runs); raise budget "
                f"to at least {n_init * k_init} or lower n_init / k_init"
            )
    if run_timeout is not None and _real("run_timeout", run_timeout) <= 0:
        raise ValueError(f"run_timeout={run_timeout!r} must be > 0 seconds, or None for no limit")
    if retries is not None and _int("retries", retries) < 0:
        raise ValueError(f"retries={retries!r} must be >= 0")


def check_objective(objective: Any, *, batch: bool | None = None) -> bool:
    """Check that ``objective`` can be called as ``objective(config, seed)`` (or with seeds).

    Parameters
    ----------
    objective : callable
        ``objective(config: dict, seed: int) -> float``, or for a batch objective
        ``objective(config: dict, seeds: list[int]) -> list[float]``.
    batch : bool, optional
        Whether it is a batch objective; default: marked by ``erahbo.batch_objective``.

    Returns
    -------
    bool
        Whether it is a batch objective.
    """
    from erahbo.failures import is_batch_objective

    if not callable(objective):
        raise TypeError(
            f"objective must be a function objective(config, seed) -> float, got "
            f"{type(objective).__name__}"
        )
    is_batch = is_batch_objective(objective) if batch is None else bool(batch)
    try:
        sig = inspect.signature(objective)
    except (TypeError, ValueError):  # builtins, some C extensions: cannot check
        return is_batch
    try:
        sig.bind({}, [1] if is_batch else 1)
    except TypeError:
        name = getattr(objective, "__qualname__", repr(objective))
        form = (
            "objective(config, seeds) -> list[float]"
            if is_batch
            else ("objective(config, seed) -> float")
        )
        raise TypeError(
            f"objective {name}{sig} cannot be called as {form}: it must take the configuration "
            "(a dict) and the seed as its two positional arguments"
            + ("" if is_batch else " (or declare a batch objective with erahbo.batch_objective)")
        ) from None
    return is_batch


def check_journal_path(path: str | os.PathLike[str]) -> str:
    """Check a journal path: a file path (not a directory) whose folder exists.

    Returns
    -------
    str
        The path as a string.
    """
    if not isinstance(path, str | os.PathLike):
        raise TypeError(f"journal must be a file path, got {type(path).__name__}")
    p = os.fspath(path)
    if p in ("", ":memory:"):
        raise ValueError(
            f"journal={p!r} is not a file: a journal must survive the process; give a file path"
        )
    if os.path.isdir(p):
        raise ValueError(f"journal={p!r} is a directory; give a file path such as {p}/study.db")
    folder = os.path.dirname(os.path.abspath(p))
    if not os.path.isdir(folder):
        raise ValueError(f"journal={p!r}: folder {folder} does not exist; create it first")
    return p
