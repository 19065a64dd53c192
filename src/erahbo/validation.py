"""Validation of user input at the library boundary: one clear message per mistake.

Every check raises ``ValueError`` (a bad value) or ``TypeError`` (a bad type) whose message names
the option, the value given and the fix. Each option has one rule (:data:`RULES`), used by
:class:`erahbo.optimizer.options.Options` (the optimizer, :func:`erahbo.optimize`, the
benchmark's settings and the CLI build one), the replication policies and the failure policy.

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
from collections.abc import Callable
from typing import Any

from erahbo.objectives import is_batch_objective

__all__ = [
    "check_initial_budget",
    "check_int",
    "check_journal_path",
    "check_k_range",
    "check_objective",
    "check_option",
    "check_options",
    "check_real",
]


def check_int(name: str, value: Any) -> int:
    """``value`` as an int, refusing floats (with the fix) and bools; errors name ``name``."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        if isinstance(value, float) and value.is_integer():
            raise TypeError(f"{name} must be an int, got the float {value!r}; write {int(value)}")
        raise TypeError(f"{name} must be an int, got {type(value).__name__} {value!r}")
    return int(value)


def check_real(name: str, value: Any) -> float:
    """``value`` as a finite float, refusing bools and non-numbers; errors name ``name``."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a number, got {type(value).__name__} {value!r}")
    v = float(value)
    if not math.isfinite(v):
        raise ValueError(f"{name}={value!r} must be finite")
    return v


Rule = Callable[[str, Any], Any]


def _int_at_least(low: int, hint: str = "", what: str = "an int ") -> Rule:
    """Rule: an int ``>= low``; the message is ``name=value must be <what>>= low<hint>``."""

    def rule(name: str, value: Any) -> int:
        if check_int(name, value) < low:
            raise ValueError(f"{name}={value!r} must be {what}>= {low}{hint}")
        return int(value)

    return rule


def _real_above(low: float, strict: bool, hint: str = "") -> Rule:
    """Rule: a finite real ``> low`` (``strict``) or ``>= low``."""

    def rule(name: str, value: Any) -> float:
        v = check_real(name, value)
        if v < low or (strict and v == low):
            raise ValueError(f"{name}={value!r} must be {'>' if strict else '>='} {low:g}{hint}")
        return v

    return rule


def _timeout(name: str, value: Any) -> float | str:
    """Rule of ``run_timeout``: seconds > 0, or ``"auto"`` (None, no limit, is not checked)."""
    if value == "auto":
        return "auto"
    if isinstance(value, str):
        raise ValueError(f"{name}={value!r}: give seconds (> 0), 'auto' (a limit of ten times "
                         "the longest finished run, in worker processes) or None for no limit")
    return _real_above(0, True, " seconds, 'auto' or None for no limit")(name, value)


def _seeds(what: str) -> Rule:
    def rule(name: str, value: Any) -> int:
        if check_int(name, value) < 2:
            raise ValueError(
                f"{name}={value!r} is too small: {what} needs at least 2 seeds; use {name} >= 2"
            )
        return int(value)

    return rule


def _share(what: str, *, of_all: bool = False) -> Rule:
    """Rule: a share in ``[0, 1)``; with ``of_all``, in ``(0, 1]`` instead (1: all of them)."""
    interval = "(0, 1]" if of_all else "[0, 1)"

    def rule(name: str, value: Any) -> float:
        v = check_real(name, value)
        if not (0 < v <= 1 if of_all else 0 <= v < 1):
            raise ValueError(f"{name}={value!r} must be in {interval} ({what})")
        return v

    return rule


def _flag(what: str) -> Rule:
    """Rule: a bool (``True``/``False``; numpy bools and the ints 0 and 1 too)."""

    def rule(name: str, value: Any) -> bool:
        numpy_bool = getattr(getattr(value, "dtype", None), "kind", "") == "b"
        if isinstance(value, bool) or numpy_bool or (
                isinstance(value, numbers.Integral) and value in (0, 1)):
            return bool(value)
        raise ValueError(f"{name}={value!r} must be True or False ({what})")

    return rule


def _alpha(name: str, value: Any) -> float:
    if check_real(name, value) < 0:
        raise ValueError(
            f"alpha={value!r} is negative: alpha weighs the variance penalty of "
            "MV = f - alpha * rho^2; use alpha >= 0 (0 = risk-neutral)"
        )
    return float(value)


# One rule per option, shared by erahbo.Optimizer (through erahbo.optimizer.options.Options),
# the replication policies, the failure policy, erahbo.optimize, the benchmark and the CLI.
RULES: dict[str, Rule] = {
    "alpha": _alpha,
    "beta": _real_above(0, True, ": bounds are mu +- sqrt(beta) sigma (the paper uses beta = 2.5)"),
    "beta_stop": _real_above(0, False, " (the paper uses beta_stop = 1)"),
    "gamma": _real_above(0, True, " (rate of the exponential beta_stop schedule)"),
    "slope": _real_above(0, True, " (slope of the sigmoid beta_stop schedule)"),
    "k_min": _seeds("the sample variance"),
    "k_max": _seeds("the sample variance"),
    "k": _seeds("a variance"),
    "k_init": _seeds("the sample variance"),
    "n_init": _int_at_least(0, " (0 only with a warm start)"),
    "budget": _int_at_least(1, " (training runs in all)"),
    "seed": _int_at_least(0),
    "seed_batch": _int_at_least(1, " (seeds asked at once after k_min; the number of parallel "
                                   "workers, or 1 for the paper's rule)"),
    "n_parallel": _int_at_least(1, " (trials pending at once: the number of configurations "
                                   "trained in parallel, or 1 for the paper's loop)"),
    "refit_every": _int_at_least(0, " (0: never refit)"),
    "max_seeds": _int_at_least(0, " (the most seeds one configuration collects; 0: no "
                               "limit)"),
    "pool_share": _share("the share of the runs that may go beyond max_seeds to re-selected "
                         "configurations; 0: a strict cap"),
    "seed_share": _share("the share of the runs so far one configuration may hold until "
                         "max_seeds; 0: the cap is max_seeds from the start"),
    "random_interleave": _int_at_least(0, " (runs during which every other round is a random "
                                       "configuration; 0: never)"),
    "random_top": _share("the share of the configurations best by the acquisition a random "
                         "round draws from; 1: uniform over all", of_all=True),
    "challengers": _flag("challenger rounds: seeds for a configuration whose runs beat the "
                         "recommendation"),
    "recommend_seeds": _int_at_least(0, " (configurations with this many seeds compete for "
                                     "the recommendation on their sample MV; 0: off)"),
    "recommend_beta": _real_above(0, False, " or None (the recommendation's confidence; None: "
                                  "beta, 0: the best posterior mean MV)"),
    "refit_growth": _real_above(1, True, " or None (refit when the evaluated configurations "
                                "grew by this factor; 2: at each doubling)"),
    "raw_samples": _int_at_least(1),
    "n_polish": _int_at_least(0),
    "retries": _int_at_least(0, " (new seeds per failed run under failures='retry')", what=""),
    "rho_max2": _real_above(0, True, " or None (the largest sample variance)"),
    "run_timeout": _timeout,
    "workers": _int_at_least(1, " (concurrent training runs)"),
    "repetitions": _int_at_least(1, " (repetitions per task and method)"),
}


def check_option(name: str, value: Any) -> Any:
    """Check one option by its rule (:data:`RULES`); returns it as an int or float.

    Raises
    ------
    ValueError, TypeError
        Naming the option, the value given and the fix.
    """
    return RULES[name](name, value)


def check_k_range(k_min: Any, k_max: Any) -> None:
    """ERAHBO's seed range: ``2 <= k_min <= k_max``."""
    check_option("k_min", k_min)
    check_option("k_max", k_max)
    if k_max < k_min:
        raise ValueError(f"k_max={k_max!r} is smaller than k_min={k_min!r}; use k_max >= k_min")


def check_initial_budget(budget: int | None, n_init: int, k_init: int) -> None:
    """The budget must cover the initial design: ``budget >= n_init * k_init``."""
    if budget is not None and budget < n_init * k_init:
        raise ValueError(
            f"budget={budget!r} is smaller than the initial design (n_init={n_init} "
            f"configurations x k_init={k_init} seeds = {n_init * k_init} runs); raise budget "
            f"to at least {n_init * k_init} or lower n_init / k_init"
        )


def check_options(**options: Any) -> None:
    """Check options given by name (None: not checked), each by its rule in :data:`RULES`.

    ``k_min``/``k_max`` are also checked as a range, and ``budget`` against the initial design
    ``n_init * k_init`` when all three are given.

    Parameters
    ----------
    **options
        Any of the names in :data:`RULES`, e.g. ``alpha`` (risk aversion, >= 0), ``beta``
        (acquisition confidence, > 0), ``beta_stop`` (>= 0), ``k_min``, ``k_max``, ``k``,
        ``k_init`` (seeds, >= 2), ``n_init``, ``budget`` (training runs, >= 1),
        ``run_timeout`` (seconds, > 0), ``retries`` (>= 0).

    Raises
    ------
    ValueError, TypeError
        At the first bad option, naming it and the fix.
    """
    given = {k: v for k, v in options.items() if v is not None}
    for name, value in given.items():
        if name not in RULES:
            raise TypeError(f"check_options: unknown option {name!r}")
        check_option(name, value)
    if "k_min" in given and "k_max" in given:
        check_k_range(given["k_min"], given["k_max"])
    if {"budget", "n_init", "k_init"} <= set(given):
        check_initial_budget(given["budget"], given["n_init"], given["k_init"])


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
