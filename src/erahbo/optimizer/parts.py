"""The parts of a strategy that have options, and everything derived from their declarations.

Each part declares its options once, in its module's ``PARAMS``
(:class:`erahbo.validation.Param`: name, type, rule, erahbo's and the paper's value, the value
of a journal without it, one line of help, a method-name code), and refuses the combinations
that would do nothing in its ``check(options, given)``. This module collects them for the
places that list options:

* :class:`erahbo.Options` (a field per option; checks, presets, the study settings and the
  settings of old journals: :func:`preset_values`, :func:`absent_values`, :func:`settings`);
* ``erahbo optimize`` and ``erahbo tune`` (a flag per option, :mod:`erahbo.cli._seed_options`);
* the Hydra sweeper (a key per option), the Optuna sampler and the Ray Tune searcher (keyword
  arguments): the options of :data:`HOST_PARAMS` (the replication rule's core options, ``k``,
  ``k_min``, ``k_max``, ``seed_batch`` and ``stopping``, and the ``beta_stop`` schedule's,
  each host lists itself);
* the benchmark's method names ``erahbo-<short><value>`` (:func:`method_variant`);
* the API reference (``scripts/apidoc.py``: a table of :data:`PARAMS`).

A new option of a part is one :class:`~erahbo.validation.Param` in the part's module (and its
behaviour there) plus the :class:`erahbo.Options` field of the same name; a new part with
options is one line in :data:`PARTS`.

The part modules import nothing heavy at module level (no pandas, scipy): the CLI reads
:data:`PARAMS` when it starts.
"""

from __future__ import annotations

from typing import Any

from erahbo.optimizer import (
    acquisition_confidence,
    beta_stop,
    challenger,
    early_stop,
    failure_prior,
    random_design,
    recommender,
    refit,
    replicate,
    replication,
    risk_options,
    seedcap,
    variance_prior,
)
from erahbo.validation import Param, with_checked

__all__ = ["HOST_PARAMS", "PARAMS", "PARTS", "SPACE_PARAMS", "absent_values", "check",
           "for_space", "method_variant", "preset_values", "settings"]

#: The parts with options, in the order their options are listed (CLI, docs) and checked
#: (the replication rule first: its seed range before the caps that read it).
PARTS = (replication, beta_stop, seedcap, recommender, random_design, challenger,
         variance_prior, failure_prior, replicate, early_stop, risk_options, refit,
         acquisition_confidence)
#: Every part's options, in :data:`PARTS` order.
PARAMS: tuple[Param, ...] = tuple(p for part in PARTS for p in part.PARAMS)
#: The options the hosts derive from their declarations (``Param.hosts``): the CLI's flags,
#: the Hydra sweeper's keys, the Optuna sampler's keywords. The others (the replication
#: rule's ``k``, ``k_min``, ..., the ``beta_stop`` schedule's) each host lists itself, with its
#: own defaults.
HOST_PARAMS: tuple[Param, ...] = tuple(p for p in PARAMS if p.hosts)
_BY_SHORT = {p.short: p for p in PARAMS if p.short}


def preset_values(which: str) -> dict[str, Any]:
    """The part options' values of a preset table: ``"default"`` (erahbo's, for ERAHBO) or
    ``"paper"``; options resolved from the others (``Param.resolve``) are left out."""
    return {p.name: p.default if which == "default" else p.paper
            for p in PARAMS if p.resolve is None}


def absent_values() -> dict[str, Any]:
    """What a journal that lacks a part option's setting means by it (``Param.absent``)."""
    return {p.name: p.absent for p in PARAMS}


def settings(o: Any) -> dict[str, Any]:
    """The part options of validated options as the study settings store them (resolved)."""
    return {p.name: getattr(o, p.name) if p.resolve is None else p.resolve(o) for p in PARAMS}


#: The options erahbo keys by the kind of space (``Param.by_space``; one rule,
#: :func:`erahbo.validation.by_space`): ``random_interleave``, ``bound_min_seeds``,
#: ``replicate_lookahead``, ``one_seed_optimism``, ``rho_max2_model``, ``rho_max2_spread``.
SPACE_PARAMS: tuple[Param, ...] = tuple(p for p in PARAMS if p.by_space)


def for_space(o: Any, finite: bool) -> Any:
    """Options ``o`` with the options erahbo keys by the kind of space
    (:data:`SPACE_PARAMS`) resolved for one; what an optimizer on that space runs with and its
    study settings store. ``finite``: a finite table (False: a continuous or mixed space, or a
    host without a candidate table)."""
    values = {p.name: p.resolve(o, finite) for p in SPACE_PARAMS  # type: ignore[misc]
              if getattr(o, p.name) is None}
    return with_checked(o, **values) if values else o


def check(o: Any, given: set[str]) -> None:
    """Each part's refusal of combinations that would do nothing (``given``: named options)."""
    for part in PARTS:
        part.check(o, given)


def method_variant(short: str, text: str) -> tuple[Param, Any] | None:
    """The option and value of the benchmark method ``erahbo-<short><text>``; None when no
    part option has the code ``short`` or ``text`` is not a valid value of it (an int needs
    digits, a bool ``0`` or ``1``, a word option its word; then the option's rule)."""
    p = _BY_SHORT.get(short)
    if p is None:
        return None
    if p.type is bool:
        if text not in ("0", "1"):
            return None
        value: Any = text == "1"
    elif p.type is int:
        if not text.isdigit():
            return None
        value = int(text)
    elif p.type is str:
        value = text
    else:
        value = float(text)
    try:
        return p, p.rule(p.name, value)
    except (TypeError, ValueError):
        return None
