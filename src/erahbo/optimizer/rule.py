"""A replication rule's interface: what every host asks a rule, and why a round ended.

The rules themselves (:class:`~erahbo.optimizer.replication.FixedK`,
:class:`~erahbo.optimizer.replication.AdaptiveK`, :class:`~erahbo.optimizer.replication.Race`),
their options and their registry are in :mod:`erahbo.optimizer.replication`; here the base
class :class:`Rule` they share, the stop reasons of a round (:data:`STOP_REASONS`) and the
helpers every rule ends a round with.

**JSON and state.** A journal stores the rule's options among the study settings
(:meth:`erahbo.optimizer.options.Options.settings_json`); :meth:`Rule.to_json` and
:func:`~erahbo.optimizer.replication.rule_from_json` give the rule alone as plain JSON and
back (equal rules, equal JSON).
A rule holds no state: a round's progress (its seeds so far, ``B_t``, the bounds after the
last tell) lives in the optimizer's open :class:`~erahbo.optimizer.records.Round`, which a
snapshot stores with the optimizer.

**One interface for every host.** The core's own study and the hosts that run trials
themselves (the Optuna sampler, the Ray Tune searcher) ask the same questions; the answers are
here, on the rule, and on :class:`erahbo.Optimizer` where they need the data:

=========================================  ==================================================
question                                   answer
=========================================  ==================================================
seeds of a round's first trial             :meth:`Rule.opening_seeds` (``free``, ``left``)
seeds of an open round's next trial        :meth:`Rule.next_trial_seeds` (``k``, ...)
seeds of one trial that runs a whole       :meth:`Rule.round_seeds` (a pruner ends it early)
round
the most seeds of one round                :attr:`Rule.most`
whether the bounds may end a round now     :meth:`Rule.decides` (``n`` seeds run)
whether a round ends, with its returns     :meth:`Rule.verdict`; with the study's data:
                                           :meth:`erahbo.Optimizer.stopping_decision`
whether a round ends after a tell          :meth:`Rule.after_tell` (the core's rounds)
seeds left in the budget, under the caps   :attr:`erahbo.Optimizer.free_seeds`,
                                           :meth:`erahbo.Optimizer.seeds_left`
which seeds                                :meth:`erahbo.Optimizer.next_seeds`
=========================================  ==================================================
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import asdict, fields
from typing import Any, ClassVar

from erahbo.validation import Param

__all__ = ["CAPPED", "NAN", "STOP_REASONS", "Bounds", "Rule"]

#: Why a round ended (a rounds table's ``stop_reason``), each with what it means. The order
#: is the order of the legend of :func:`erahbo.analysis.run_plots.plot_rounds`.
STOP_REASONS = {
    "dominated": "the stopping rule: UCB_MV below B_t",
    "k_max": "the round's most seeds reached (k_max; k_max_means while the means differ)",
    "fixed_k": "a fixed-k round completed",
    "budget": "the budget ran out",
    "excluded": "the configuration was excluded (finite table)",
    "infeasible": "the configuration failed (infeasible)",
    "initial": "the initial design",
    "warm": "runs given as a warm start",
    "max_seeds": "the configuration reached its seed cap",
    "random": "chosen at random (the random design's rounds: their first seeds only)",
}
#: The stop reason of a round that the seed cap (:mod:`erahbo.optimizer.seedcap`) ends.
CAPPED = "max_seeds"
NAN = math.nan

#: A rule's bounds on demand: ``(UCB_MV(x; k), B_t)``, or None when there are none yet.
Bounds = Callable[[], "tuple[float, float] | None"]


class Rule:
    """A replication rule (see :mod:`erahbo.optimizer.replication`): its fields are the
    options it reads.

    Subclasses set :attr:`name`, define :attr:`first`, :attr:`most`, :meth:`decide` and
    :meth:`after_tell`, and may declare options of their own (``PARAMS``) and refusals
    (:meth:`check`).
    """

    #: The value of ``stopping`` that names the rule (``"fixed"``: the fixed-k methods').
    name: ClassVar[str] = ""
    #: The rule's own options (beyond the shared ones of
    #: :data:`erahbo.optimizer.replication.PARAMS`).
    PARAMS: ClassVar[tuple[Param, ...]] = ()
    #: Whether :meth:`after_tell` reads the round's bounds (``UCB^MV(x_t; k)``, ``B_t``).
    needs_models: ClassVar[bool] = False
    #: Whether :meth:`after_tell` reads ``x_t``'s sample MV against the others'.
    uses_sample_gap: ClassVar[bool] = False
    #: Whether a round may run more trials than its first (seeds decided after each tell).
    adaptive: ClassVar[bool] = False
    #: The fewest first seeds the rule works with when ``k_min`` is not given.
    fewest_first: ClassVar[int] = 1

    @classmethod
    def from_options(cls, o: Any) -> Rule:
        """The rule of validated options: its fields from the options of the same names."""
        return cls(**{f.name: getattr(o, f.name) for f in fields(cls)})

    @classmethod
    def check(cls, o: Any) -> None:
        """Refuse the options that would do nothing under this rule (none by default)."""

    @property
    def first(self) -> int:
        """Seeds asked for at the start of a round."""
        raise NotImplementedError

    @property
    def most(self) -> int:
        """The most seeds one round spends (before the seed caps and the budget)."""
        raise NotImplementedError

    def decide(self, k: int, ucb_mv: float, B_t: float) -> str | None:
        """Stop reason of a round at ``k`` seeds with these bounds, or None to go on."""
        raise NotImplementedError

    def next_seeds(self, k: int, free: float) -> int:
        """Seeds of the next trial of a round at ``k`` seeds, ``free`` left in the budget."""
        return 1

    def one_seed_beta(self, beta: float) -> float | None:
        """The confidence of the variance's bound in eq. 12 after a configuration's first seed
        when it differs from ``beta_stop`` (None: it does not)."""
        return None

    def round_most(self, means_differ: bool) -> int:
        """The most seeds of a round that opens while the replicated configurations differ
        mostly by their means (``means_differ``) or not: :attr:`most` unless the rule says."""
        return self.most

    def after_tell(self, k: int, asked: int, remaining: float, seeds_left: float = math.inf,
                   **bounds: Any) -> str | None:
        """The round's final stop reason after a tell (a key of :data:`STOP_REASONS`), or
        None for more seeds (:meth:`erahbo.optimizer.replication.AdaptiveK.after_tell`
        documents the arguments)."""
        raise NotImplementedError

    # ------------------------------------------------------------------ any host
    def opening_seeds(self, free: float, left: float) -> int:
        """Seeds of a round's first trial: :attr:`first`, within ``free`` seeds of the budget
        (not spent nor pending) and the ``left`` the seed caps leave the configuration; at
        least one."""
        return int(max(min(int(min(self.first, free)), left), 1))

    def next_trial_seeds(self, k: int, free: float, left: float, most: int | None = None) -> int:
        """Seeds of the next trial of an open round at ``k`` seeds (:meth:`next_seeds`; the
        round's ``most``, :meth:`round_most`), within ``left`` (the seed caps)."""
        top = math.inf if most is None else max(most - k, 1)
        return int(min(self.next_seeds(k, free), left, top))

    def round_seeds(self, opened: int, left: float, *, random_round: bool = False,
                    most: int | None = None) -> int:
        """Seeds of one trial that runs a whole round (a host whose trial trains until a
        pruner stops it): an adaptive rule's round may grow from its ``opened`` first seeds
        by the ``left`` the seed caps leave, up to the round's ``most`` (None: :attr:`most`);
        a fixed-k or random round is its first trial."""
        if not self.adaptive or random_round:
            return int(opened)
        return int(min(self.most if most is None else most, opened + left))

    def decides(self, n: int) -> bool:
        """Whether the bounds may end a round that has run ``n`` seeds (an adaptive rule,
        after its first seeds): when a host's pruner asks :meth:`verdict`."""
        return self.adaptive and n >= self.first

    def verdict(self, n: int, bounds: Bounds | None,
                most: int | None = None) -> tuple[str | None, float, float]:
        """``(reason, UCB_MV, B_t)`` for a round that has run ``n`` seeds: the reason a key of
        :data:`STOP_REASONS` or None (go on). ``bounds`` computes ``(UCB_MV(x; n), B_t)`` on
        demand (None: no models; it may return None: too few seeds for a bound); the bounds
        are NaN where none was computed; ``most``: the round's (:meth:`round_most`)."""
        return ("fixed_k" if n >= self.first else None), NAN, NAN

    def to_json(self) -> dict[str, Any]:
        """The rule as plain JSON: ``{"rule": name, <option>: value, ...}``."""
        return {"rule": self.name, **asdict(self)}  # type: ignore[call-overload]


def _first_trial(first: int, asked: int, random_round: bool) -> str:
    """A round that ends after its first trial: ``"budget"`` when fewer than ``first`` seeds
    ran, else ``"random"`` (chosen at random) or ``"fixed_k"``."""
    if asked < first:
        return "budget"
    return "random" if random_round else "fixed_k"


def _capped(reason: str | None, k: int, most: int | None) -> str | None:
    """A round the rule lets go on ends ``"k_max"`` at its ``most`` seeds (Rule.round_most)."""
    return "k_max" if reason is None and most is not None and k >= most else reason


def _final(reason: str | None, remaining: float, seeds_left: float) -> str | None:
    """A round that the seed cap cuts (no seeds left for the configuration, budget left) ends
    with :data:`CAPPED`, not with its rule's reason."""
    if seeds_left < 1 and reason in (None, "budget") and remaining >= 1:
        return CAPPED
    return reason
