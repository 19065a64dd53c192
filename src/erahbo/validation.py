"""Validation of user input at the library boundary: one clear message per mistake.

Every check raises ``ValueError`` (a bad value) or ``TypeError`` (a bad type) whose message names
the option, the value given and the fix. Each option has one rule: the core options' in
:data:`RULES`, used by :class:`erahbo.optimizer.options.Options` (the optimizer,
:func:`erahbo.optimize`, the benchmark's settings and the CLI build one), the replication
rules and the failure policy; the options of a strategy's parts in the part's declaration
(:class:`Param`, :data:`erahbo.optimizer.parts.PARAMS`), built with the rule constructors
below (:func:`int_at_least`, :func:`real_above`, :func:`share`, :func:`flag`) or taken from
:data:`RULES` (the replication rule's ``k``, ``k_min``, ``k_max``, ``seed_batch``).

>>> check_options(alpha=1.0, k_min=2, k_max=20, budget=400, n_init=5, k_init=20)
>>> check_options(k_max=1)
Traceback (most recent call last):
...
ValueError: k_max=1 is too small: the sample variance needs at least 2 seeds; use k_max >= 2
"""

from __future__ import annotations

import copy
import functools
import inspect
import math
import numbers
import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from erahbo.objectives import is_batch_objective

__all__ = [
    "MAX_BUDGET",
    "Param",
    "by_space",
    "check_initial_budget",
    "check_int",
    "check_journal_path",
    "check_k_range",
    "check_objective",
    "check_option",
    "check_options",
    "check_real",
    "flag",
    "int_at_least",
    "real_above",
    "share",
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


#: A rule: ``rule(name, value)`` returns the value checked (as an int, float or bool) or raises
#: ValueError / TypeError naming ``name``, the value and the fix.
Rule = Callable[[str, Any], Any]


def int_at_least(low: int, hint: str = "", what: str = "an int ") -> Rule:
    """Rule: an int ``>= low``; the message is ``name=value must be <what>>= low<hint>``."""

    def rule(name: str, value: Any) -> int:
        if check_int(name, value) < low:
            raise ValueError(f"{name}={value!r} must be {what}>= {low}{hint}")
        return int(value)

    return rule


def real_above(low: float, strict: bool, hint: str = "") -> Rule:
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
    return real_above(0, True, " seconds, 'auto' or None for no limit")(name, value)


def _growth(name: str, value: Any) -> float:
    """Rule of ``refit_growth``: 0 (never refit) or a factor > 1."""
    v = check_real(name, value)
    if v != 0.0 and not v > 1.0:
        raise ValueError(f"{name}={value!r} must be > 1 (refit when the evaluated configurations "
                         "grew by this factor; 2: at each doubling) or 0 (never refit: the "
                         "paper's fit once, on the initial design)")
    return v


def _seeds(what: str) -> Rule:
    def rule(name: str, value: Any) -> int:
        if check_int(name, value) < 2:
            raise ValueError(
                f"{name}={value!r} is too small: {what} needs at least 2 seeds; use {name} >= 2"
            )
        return int(value)

    return rule


def share(what: str, *, of_all: bool = False) -> Rule:
    """Rule: a share in ``[0, 1)``; with ``of_all``, in ``(0, 1]`` instead (1: all of them)."""
    interval = "(0, 1]" if of_all else "[0, 1)"

    def rule(name: str, value: Any) -> float:
        v = check_real(name, value)
        if not (0 < v <= 1 if of_all else 0 <= v < 1):
            raise ValueError(f"{name}={value!r} must be in {interval} ({what})")
        return v

    return rule


def flag(what: str) -> Rule:
    """Rule: a bool (``True``/``False``; numpy bools and the ints 0 and 1 too)."""

    def rule(name: str, value: Any) -> bool:
        numpy_bool = getattr(getattr(value, "dtype", None), "kind", "") == "b"
        if isinstance(value, bool) or numpy_bool or (
                isinstance(value, numbers.Integral) and value in (0, 1)):
            return bool(value)
        raise ValueError(f"{name}={value!r} must be True or False ({what})")

    return rule


#: The largest budget a study takes, in training runs. Far beyond any study that can run to
#: its end: the optimizer's models cost more as configurations accumulate (a finished study
#: of 5000 runs spent 427 s in the optimizer, docs/architecture.md), and RL training runs are
#: what the budget counts. A larger budget is a typo or a stand-in for "no limit"
#: (``budget=None``), and would run until stopped.
MAX_BUDGET = 1_000_000


def _budget(name: str, value: Any) -> int:
    v = int_at_least(1, " (training runs in all)")(name, value)
    if v > MAX_BUDGET:
        raise ValueError(
            f"{name}={value!r} is more than erahbo's limit of {MAX_BUDGET:,} training runs "
            "(erahbo.validation.MAX_BUDGET): a study that size would not end (the models' cost "
            "grows with the configurations evaluated). Give the runs you mean to spend (a study "
            "can be given more later: erahbo resume PATH --budget N), or budget=None for no "
            "limit in Python (stop it yourself)"
        )
    return v


def _alpha(name: str, value: Any) -> float:
    if check_real(name, value) < 0:
        raise ValueError(
            f"alpha={value!r} is negative: alpha weighs the variance penalty of "
            "MV = f - alpha * rho^2; use alpha >= 0 (0 = risk-neutral)"
        )
    return float(value)


#: One rule per core option, shared by erahbo.Optimizer (through
#: erahbo.optimizer.options.Options), the replication rules, the failure policy,
#: erahbo.optimize, the benchmark and the CLI. The options of a strategy's parts carry their
#: rule in their :class:`Param`.
RULES: dict[str, Rule] = {
    "alpha": _alpha,
    "beta": real_above(0, True, ": bounds are mu +- sqrt(beta) sigma (the paper uses beta = 2.5)"),
    "beta_stop": real_above(0, False, " (the paper uses beta_stop = 1)"),
    "gamma": real_above(0, True, " (rate of the exponential beta_stop schedule)"),
    "slope": real_above(0, True, " (slope of the sigmoid beta_stop schedule)"),
    "k_min": int_at_least(1, " (1: one seed first, more where the stopping rule says so; "
                             "erahbo.gp.one_seed)"),
    "k_max": _seeds("the sample variance"),
    "k": _seeds("a variance"),
    "k_init": int_at_least(1, " (1: one seed per initial configuration; "
                              "erahbo.gp.one_seed)"),
    "n_init": int_at_least(0, " (0 only with a warm start)"),
    "budget": _budget,
    "seed": int_at_least(0),
    "seed_batch": int_at_least(1, " (seeds asked at once after k_min; the number of parallel "
                                   "workers, or 1 for the paper's rule)"),
    "n_parallel": int_at_least(1, " (trials pending at once: the number of configurations "
                                   "trained in parallel, or 1 for the paper's loop)"),
    "refit_every": int_at_least(0, " (0: never refit)"),
    "refit_growth": _growth,
    "raw_samples": int_at_least(1),
    "n_polish": int_at_least(0),
    "retries": int_at_least(0, " (new seeds per failed run under failures='retry')", what=""),
    "rho_max2": real_above(0, True, " or None (the largest sample variance)"),
    "run_timeout": _timeout,
    "workers": int_at_least(1, " (concurrent training runs)"),
    "repetitions": int_at_least(1, " (repetitions per task and method)"),
}


@dataclass(frozen=True)
class Param:
    """One option of a strategy part, declared once, in the part's module (``PARAMS``).

    Everything else about the option is derived from this declaration
    (:mod:`erahbo.optimizer.parts`): its check in :class:`erahbo.Options`, its value in both
    presets, the value a journal written before it existed means, the flag of
    ``erahbo optimize`` and ``erahbo tune``, the Hydra sweeper's key, the Optuna sampler's
    keyword, the benchmark's method name ``erahbo-<short><value>`` and the API reference.
    :class:`erahbo.Options` keeps one field of the same name (None: the preset's value).

    Attributes
    ----------
    name : str
        The option's name.
    type : type
        ``int``, ``float`` or ``bool``: how the CLI and a method name read a value (``str``
        for an option that no host derives, ``hosts=False``).
    rule : Rule
        Its check (a rule constructor of this module); a value not given (None) is not
        checked.
    default : Any
        erahbo's value (``method="erahbo"``, ``preset="default"``).
    paper : Any
        The paper's value (``preset="paper"``; the fixed-k methods under both presets).
    absent : Any
        What a journal without the setting means: the value of the erahbo that did not have
        the option yet (its effect off).
    help : str
        One line for ``--help``, the integrations and the API reference.
    resolve : callable or None
        For an option whose value in force is computed from the other options:
        ``resolve(options)`` gives it (as the study settings store it), and the presets leave
        the option out (``default`` and ``paper`` are not used). None: the preset's value.
    by_space : bool
        Whether erahbo keys the option by the kind of space (:func:`by_space`):
        ``resolve(options, finite)`` gives its value on a finite table (``finite`` True) or a
        continuous or mixed space, and :func:`erahbo.optimizer.parts.for_space` resolves it
        for the optimizer's space.
    short : str
        Code of the benchmark method ``erahbo-<short><value>`` (empty: none).
    label : str
        That method's label, ``ERAHBO (<label>)``, with ``{}`` the value (``on``/``off`` for
        a bool).
    form : str
        The method's form in the grammar's error message, after ``erahbo-``.
    cli : bool
        Whether ``erahbo optimize`` and ``erahbo tune`` have a flag for it (``--<name>``;
        ``--<name>/--no-<name>`` for a bool).
    hosts : bool
        Whether the hosts derive their flag, key and keyword from this declaration (the CLI's
        ``erahbo optimize`` and ``erahbo tune``, the Hydra sweeper, the Optuna sampler:
        :data:`erahbo.optimizer.parts.HOST_PARAMS`). False: a core option that each host
        lists itself (its default still the preset's where the host lists it) or not at all
        where it means nothing there.
    """

    name: str
    type: type
    rule: Rule
    default: Any
    paper: Any
    absent: Any
    help: str
    resolve: Callable[..., Any] | None = None
    by_space: bool = False
    short: str = ""
    label: str = ""
    form: str = ""
    cli: bool = True
    hosts: bool = True

    def check(self, value: Any) -> Any:
        """``value`` checked by :attr:`rule` (None passes: not given)."""
        return None if value is None else self.rule(self.name, value)


def by_space(o: Any, name: str, finite: bool, table: Any, continuous: Any, off: Any) -> Any:
    """The value in force of an option erahbo keys by the kind of space (``Param.by_space``).

    Given by name (not None on ``o``): that value. Otherwise ``off`` but for ERAHBO under
    ``preset="default"``: ``table`` on a finite table (``finite`` True), ``continuous`` on a
    continuous or mixed space (``finite`` False: also a host without a candidate table, the
    Optuna sampler). One rule for every such option (``random_interleave``,
    ``bound_min_seeds``): each is chosen on both kinds of space.
    """
    given = getattr(o, name)
    if given is not None:
        return given
    if o.method != "erahbo" or o.preset != "default":
        return off
    return table if finite else continuous


def with_checked(o: Any, **values: Any) -> Any:
    """A copy of the validated frozen options ``o`` with ``values`` set, not validated again.

    ``dataclasses.replace`` would run the checks a second time with every value the preset
    filled in counted as given by name (``Options(max_seeds=0)``, valid with the preset's
    ``pool_share``, would then be refused for giving ``pool_share`` without a cap). The caller
    sets only values the rules accept with the others (a resolved value, a failure policy).
    Values cached from the old ones (``functools.cached_property``) are dropped: the copy
    computes them again.
    """
    out = copy.copy(o)
    for name, attr in vars(type(o)).items():
        if isinstance(attr, functools.cached_property):
            out.__dict__.pop(name, None)
    for name, value in values.items():
        object.__setattr__(out, name, value)  # frozen: written once, like __post_init__
    return out


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
