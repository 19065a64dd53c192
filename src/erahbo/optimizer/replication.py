"""The replication rule: how many seeds a configuration's trial gets, and when its round ends.

A part of a strategy (:mod:`erahbo.optimizer.strategy`). A BO round runs one configuration
``x_t``; the rule decides how many seeds open the round, how many each further trial asks for,
and whether the round ends after a tell:

* :class:`FixedK` — RAHBO, GP-UCB and random search: ``k`` seeds per round, one trial;
* :class:`AdaptiveK` — ERAHBO (Sec. 3.2.1): ``k_min`` seeds first, then one more at a time
  (``seed_batch`` at a time with parallel workers) until the stopping rule (eq. 12,
  :func:`erahbo.gp.bounds.adaptive_rule`), ``UCB_t^MV(x_t; k) <= B_t``, holds, ``k = k_max``
  or the budget is spent;
* :class:`Race` — an ablation after SMAC's intensifier: double the seeds while ``x_t``'s sample
  MV is at least the best other one.

ERAHBO's rules are listed in :data:`RULES` by the value of the option ``stopping`` that names
them; the fixed-k methods use :class:`FixedK`. **A new rule** is its class (a frozen dataclass
subclass of :class:`Rule` whose fields are the options it reads, with its own ``PARAMS``
and ``check`` when it has options or refusals of its own) plus one line in :data:`RULES`, and
its tests: the ``stopping`` choices, the refusals, the study settings, the API reference and
every host follow from there.

**Options.** The rule's options are declared once, in :data:`PARAMS` (collected by
:mod:`erahbo.optimizer.parts`; checks, both presets, the study settings, the settings of old
journals). ``k``, ``k_min``, ``k_max``, ``seed_batch`` and ``stopping`` are core options that
each host lists itself (``Param.hosts`` is False; ``k_max`` defaults to the preset's, 20, in every
host); a rule's own new options reach every host from their declaration. :func:`check`
refuses the combinations that would do nothing.

**JSON, state and the hosts' questions**: :mod:`erahbo.optimizer.rule` (the base class
:class:`Rule` every rule derives from, with the questions each host asks it and where they
are answered).

>>> rule = AdaptiveK(k_min=2, k_max=20)
>>> rule.decide(k=2, ucb_mv=0.3, B_t=0.5)
'dominated'
>>> rule.decide(k=2, ucb_mv=0.7, B_t=0.5) is None
True
>>> rule.opening_seeds(free=100, left=float("inf")), rule.round_seeds(2, left=8)
(2, 10)
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, ClassVar

from erahbo.optimizer.rule import (
    CAPPED,
    NAN,
    STOP_REASONS,
    Bounds,
    Rule,
    _capped,
    _final,
    _first_trial,
)
from erahbo.validation import RULES as CHECKS
from erahbo.validation import Param, by_space, check_k_range, check_option, flag, int_at_least

__all__ = [
    "CAPPED",
    "PARAMS",
    "RULES",
    "STOPPING_RULES",
    "STOP_REASONS",
    "AdaptiveK",
    "FixedK",
    "Race",
    "Rule",
    "check",
    "make_rule",
    "one_seed_optimism_of",
    "rule_from_json",
    "rule_of",
]

@dataclass(frozen=True)
class FixedK(Rule):
    """``k`` seeds per round (RAHBO, GP-UCB, random search)."""

    k: int = 20
    name = "fixed"

    def __post_init__(self) -> None:
        check_option("k", self.k)

    @property
    def first(self) -> int:
        """Seeds asked for at the start of a round: ``k``."""
        return int(self.k)

    @property
    def most(self) -> int:
        """The most seeds of a round: ``k``."""
        return int(self.k)

    def decide(self, k: int, ucb_mv: float, B_t: float) -> str | None:
        """Always ends the round after its ``k`` seeds: returns ``"fixed_k"``."""
        return "fixed_k"

    def after_tell(self, k: int, asked: int, remaining: float, seeds_left: float = math.inf,
                   *, random_round: bool = False, **_: object) -> str:
        """End of the round: ``"fixed_k"`` (``"random"`` for a round chosen at random), or
        ``"budget"`` when fewer seeds than ``k`` ran (:data:`CAPPED`: the cap cut it)."""
        return _final(_first_trial(self.first, asked, random_round), remaining, seeds_left)


def one_seed_optimism_of(o: Any, finite: bool = False) -> bool:
    """``one_seed_optimism`` in force (:func:`erahbo.validation.by_space`): given by name, that
    value; otherwise on for ERAHBO's stopping rule (``stopping="ucb"``) under
    ``preset="default"`` on a continuous or mixed space, off elsewhere (a finite table; racing,
    which opens its rounds with 2 or more seeds; the fixed-k methods).

    >>> from erahbo.optimizer.options import Options
    >>> one_seed_optimism_of(Options(budget=100)), one_seed_optimism_of(Options(budget=100), True)
    (True, False)
    """
    if o.one_seed_optimism is None and o.stopping != "ucb":
        return False
    return bool(by_space(o, "one_seed_optimism", finite, False, True, False))


@dataclass(frozen=True)
class AdaptiveK(Rule):
    """ERAHBO's confidence-based replication with ``k in [k_min, k_max]`` (eq. 12).

    ``one_seed_optimism``: after a configuration's first seed, eq. 12's bound keeps the
    acquisition's optimism on the variance where its ``f`` is no worse than ``B_t``'s
    configuration's (:func:`erahbo.gp.round.one_seed_bound`; :meth:`one_seed_beta`), in the
    rounds where the study's replicated configurations differ mostly by their variance
    (:func:`erahbo.gp.round.one_seed_in_force`); erahbo's default on a continuous or mixed
    space (:func:`one_seed_optimism_of`). ``k_max_means``: see :meth:`round_most`.
    """

    k_min: int = 2
    k_max: int = 20
    seed_batch: int = 1
    one_seed_optimism: bool = False
    k_max_means: int | None = None
    name = "ucb"
    PARAMS: ClassVar[tuple[Param, ...]] = (
        Param("one_seed_optimism", bool,
              flag("after a configuration's first seed, the stopping rule keeps the "
                   "acquisition's optimism on a variance one seed does not measure"),
              default=None, paper=None, absent=False, resolve=one_seed_optimism_of,
              by_space=True,
              help="ERAHBO: after a configuration's first seed, the stopping rule (eq. 12) "
                   "takes its variance at the acquisition's lower bound (beta) where its f is "
                   "no worse than B_t's configuration's (one seed measures nothing of the "
                   "variance), in the rounds where the replicated configurations differ "
                   "mostly by their spread between seeds (the variance term more than half "
                   "the spread of their sample risk measure). Default: the preset's, on for "
                   "erahbo's stopping rule on a continuous or mixed space "
                   "(docs/results/one_seed_models, sessions 39-40), off on a finite table.",
              short="oso", label="one-seed optimism {}", form="oso1"),
        Param("k_max_means", int,
              int_at_least(2, " or None (the most seeds of a round while the replicated "
                              "configurations differ mostly by their means; None: k_max)"),
              default=None, paper=None, absent=None,
              help="ERAHBO: the most seeds of a round that opens while the replicated "
                   "configurations differ mostly by their means (the variance term at most "
                   "half the spread of their sample risk measure), between k_min and k_max "
                   "(default: None, k_max in every round; docs/results/one_seed_models, "
                   "sessions 41-46).",
              short="kmm", label="at most {} seeds a round while the means differ",
              form="kmm<N>"),
    )
    needs_models = True  # the stopping rule reads UCB^MV(x_t; k) and B_t
    adaptive = True

    def __post_init__(self) -> None:
        check_k_range(self.k_min, self.k_max)
        check_option("seed_batch", self.seed_batch)

    @property
    def first(self) -> int:
        """Seeds asked for at the start of a round: ``k_min``."""
        return int(self.k_min)

    @property
    def most(self) -> int:
        """The most seeds of a round: ``k_max``."""
        return int(self.k_max)

    def round_most(self, means_differ: bool) -> int:
        """The most seeds of a round: ``k_max_means`` when given and the replicated
        configurations differ mostly by their means (``means_differ``), else ``k_max``."""
        return int(self.k_max if self.k_max_means is None or not means_differ
                   else self.k_max_means)

    def decide(self, k: int, ucb_mv: float, B_t: float) -> str | None:
        """Stop reason after ``k`` seeds of this round, or None to ask for one more seed.

        Parameters
        ----------
        k : int
            Seeds spent at ``x_t`` in this round so far.
        ucb_mv : float
            ``UCB_t^MV(x_t; k)`` with the models updated by those seeds.
        B_t : float
            Incumbent lower bound of the round.

        Returns
        -------
        str or None
            ``"dominated"`` (eq. 12 holds), ``"k_max"``, or None (continue).
        """
        from erahbo.gp.bounds import adaptive_rule  # scipy: not at start-up (the CLI)

        if adaptive_rule(ucb_mv, B_t):
            return "dominated"
        if k >= self.k_max:
            return "k_max"
        return None

    def one_seed_beta(self, beta: float) -> float | None:
        """The confidence of the variance's bound in eq. 12 after a configuration's first
        seed: the acquisition's ``beta`` with ``one_seed_optimism``, else None (``beta_stop``
        alone)."""
        return float(beta) if self.one_seed_optimism else None

    def _step(self, k: int) -> int:
        return self.seed_batch

    def next_seeds(self, k: int, free: float) -> int:
        """Seeds of the next trial of a round at ``k`` seeds, with ``free`` left in the budget.

        ``seed_batch`` (one: the paper's rule), never past ``k_max`` nor the budget.
        """
        return int(min(self._step(k), free, max(self.k_max - k, 1)))

    def verdict(self, n: int, bounds: Bounds | None,
                most: int | None = None) -> tuple[str | None, float, float]:
        """Before its first seeds or without models: ``"k_max"`` once ``n`` reaches the
        round's ``most`` (None: ``k_max``), else None; then :meth:`decide` on the bounds (see
        :meth:`Rule.verdict`)."""
        if n < self.first or bounds is None:
            return ("k_max" if n >= (most or self.k_max) else None), NAN, NAN
        got = bounds()
        if got is None:
            return None, NAN, NAN
        ucb_mv, B_t = got
        return _capped(self.decide(n, ucb_mv, B_t), n, most), float(ucb_mv), float(B_t)

    def after_tell(
        self,
        k: int,
        asked: int,
        remaining: float,
        seeds_left: float = math.inf,
        *,
        random_round: bool = False,
        ucb_mv: float | None = None,
        B_t: float = math.nan,
        sample_gap: float | None = None,
        most: int | None = None,
    ) -> str | None:
        """The round's final stop reason after a tell (a key of :data:`STOP_REASONS`), or
        None for more seeds.

        Parameters
        ----------
        k : int
            Seeds of the round so far.
        asked : int
            Seeds of the trial just told.
        remaining : float
            Seeds left in the budget.
        seeds_left : float
            Seeds the configuration may still get under the seed caps
            (:mod:`erahbo.optimizer.seedcap`): a round the cap ends is :data:`CAPPED`.
        random_round : bool
            The round's configuration was drawn at random (``"random"`` when it ends).
        ucb_mv : float or None
            ``UCB_t^MV(x_t; k)``; None for a round without models (a random round, no data
            yet): it ends after its first trial like a fixed-k round.
        B_t : float
            The round's incumbent bound.
        sample_gap : float or None
            ``x_t``'s sample MV minus the best other one (:class:`Race` only).
        most : int or None
            The round's most seeds (:meth:`round_most`; None: ``k_max``).
        """
        if ucb_mv is None and self.needs_models:  # a round without models
            return _final(_first_trial(self.first, asked, random_round), remaining, seeds_left)
        reason = self._stop(k, ucb_mv, B_t, sample_gap, self.k_max if most is None else most)
        return _final("budget" if reason is None and remaining < 1 else reason, remaining,
                      seeds_left)

    def _stop(self, k: int, ucb_mv: float | None, B_t: float,
              sample_gap: float | None, most: int) -> str | None:
        return _capped(self.decide(k, ucb_mv, B_t), k, most)


@dataclass(frozen=True)
class Race(AdaptiveK):
    """Racing ablation of ERAHBO (``stopping="race"``, after SMAC's intensifier).

    Sample statistics instead of the GPs: double the seeds, ``k_min, 2 k_min, 4 k_min, ...
    <= k_max``, while ``x_t``'s sample MV is at least the best sample MV of the other evaluated
    configurations (``sample_gap >= 0`` in :meth:`after_tell`); reject it as soon as it is
    below. Its ``k_min`` is 2 unless given (it compares sample variances).
    """

    name = "race"
    needs_models = False
    uses_sample_gap = True  # the decision reads x_t's sample MV against the others'
    fewest_first = 2

    @classmethod
    def check(cls, o: Any) -> None:
        """Refuse ``seed_batch`` (racing doubles the seeds itself) and one-seed starts."""
        if o.seed_batch != 1:
            raise ValueError(
                f"seed_batch={o.seed_batch} with stopping='race': racing doubles the seeds of "
                "a round itself (k_min, 2 k_min, ...); drop seed_batch")
        if o.one_seed_optimism:
            raise ValueError(
                "one_seed_optimism=True with stopping='race': racing reads no bounds after a "
                "first seed (its rounds open with 2 or more); drop one_seed_optimism")
        if o.min_seeds == 1:
            raise ValueError(
                "stopping='race' compares sample variances, which one seed does not have: give "
                "k_min >= 2 and k_init >= 2 with it (its default k_min is 2), or drop "
                "stopping='race'")

    def _step(self, k: int) -> int:
        return k  # double

    def _stop(self, k: int, ucb_mv: float | None, B_t: float,
              sample_gap: float | None, most: int) -> str | None:
        if sample_gap is not None and sample_gap < 0:
            return "dominated"
        return "k_max" if k >= most else None


#: ERAHBO's replication rules by the value of ``stopping`` that names them (the fixed-k
#: methods: :class:`FixedK`). A new rule is one line here.
RULES: dict[str, type[AdaptiveK]] = {
    "ucb": AdaptiveK,  # the paper's stopping rule, eq. 12
    "race": Race,  # an ablation after SMAC's intensifier
}
STOPPING_RULES = tuple(RULES)  # the values of ``stopping`` (of the rules listed at import)


def _stopping(name: str, value: Any) -> str:
    """Rule of ``stopping``: the name of a rule of :data:`RULES`."""
    if value not in tuple(RULES):
        raise ValueError(f"{name}={value!r} must be one of {tuple(RULES)}")
    return str(value)


#: The replication rule's options (:class:`erahbo.validation.Param`): the core options every
#: host lists itself (``hosts=False``), then the rules' own.
PARAMS: tuple[Param, ...] = (
    Param("k", int, CHECKS["k"], default=20, paper=20, absent=20,
          help="Seeds per round of the fixed-k methods (RAHBO, GP-UCB, random search; the "
               "paper: 20, RAHBO also 2).", hosts=False),
    Param("k_min", int, CHECKS["k_min"], default=1, paper=2, absent=2,
          help="ERAHBO: seeds that open a round, before the stopping rule decides (default: "
               "the preset's, 1; the paper's 2; racing's 2).", hosts=False),
    Param("k_max", int, CHECKS["k_max"], default=20, paper=20, absent=20,
          help="ERAHBO: the most seeds of one round.", hosts=False,
          short="km", label="at most {} seeds a round", form="km<N>"),
    Param("seed_batch", int, CHECKS["seed_batch"], default=1, paper=1, absent=1,
          help="ERAHBO: seeds asked at once after k_min (1: the paper's rule, one seed, then "
               "the stopping rule; n parallel workers: n, and a round may overshoot its stop "
               "by up to n - 1 seeds).", hosts=False),
    Param("stopping", str, _stopping, default="ucb", paper="ucb", absent="ucb",
          help="ERAHBO's rule for more seeds: 'ucb' (the paper: go on while UCB_MV(x_t; k) > "
               "B_t) or 'race' (an ablation after SMAC's intensifier: double the seeds while "
               "x_t's sample MV is at least the best other one).", hosts=False),
    *{p.name: p for rule in RULES.values() for p in rule.PARAMS}.values(),  # once each
)


def rule_of(o: Any) -> Rule:
    """The replication rule of validated options: ERAHBO's rule named by ``stopping``, the
    fixed-k methods' :class:`FixedK`."""
    if o.method == "erahbo":
        return RULES[o.stopping].from_options(o)
    return FixedK.from_options(o)


def defaults(o: Any, given: set[str]) -> dict[str, Any]:
    """The rule's own values of options not given, over the preset's (racing: ``k_min``
    at least 2)."""
    rule = RULES.get(o.stopping) if isinstance(o.stopping, str) else None
    if rule is None or "k_min" in given or o.k_min is None or o.k_min >= rule.fewest_first:
        return {}
    return {"k_min": rule.fewest_first}


def check(o: Any, given: set[str]) -> None:
    """Refuse a seed range upside down, ERAHBO's options under another method, and what the
    rule in force refuses (:meth:`Rule.check`)."""
    check_k_range(o.k_min, o.k_max)
    if o.seed_batch != 1 and o.method != "erahbo":
        raise ValueError(
            f"seed_batch={o.seed_batch} applies to ERAHBO's inner loop only; method "
            f"{o.method!r} asks its k={o.k} seeds at once already (drop seed_batch)")
    if o.one_seed_optimism and "one_seed_optimism" in given and o.method != "erahbo":
        raise ValueError(f"one_seed_optimism=True applies to ERAHBO's stopping rule only "
                         f"(method={o.method!r}); drop one_seed_optimism")
    if o.k_max_means is not None and not o.k_min <= o.k_max_means <= o.k_max:
        raise ValueError(f"k_max_means={o.k_max_means!r} must lie between k_min={o.k_min} and "
                         f"k_max={o.k_max}; give a value in that range or drop k_max_means")
    if o.k_max_means is not None and o.method != "erahbo":
        raise ValueError(f"k_max_means={o.k_max_means!r} applies to ERAHBO's rounds only "
                         f"(method={o.method!r}); drop k_max_means")
    if o.stopping != "ucb" and o.method != "erahbo":
        raise ValueError(f"stopping={o.stopping!r} applies to ERAHBO only "
                         f"(method={o.method!r})")
    if o.method == "erahbo":
        RULES[o.stopping].check(o)


def rule_from_json(spec: dict[str, Any]) -> Rule:
    """The rule of :meth:`Rule.to_json`'s JSON."""
    spec = dict(spec)
    name = spec.pop("rule", None)
    rules: dict[str, type[Rule]] = {FixedK.name: FixedK, **RULES}
    if name not in rules:
        raise ValueError(f"replication rule {name!r}: this erahbo knows "
                         f"{', '.join(map(repr, rules))}")
    return rules[name](**spec)


def make_rule(method: str, *, k: int = 20, k_min: int = 2, k_max: int = 20,
              stopping: str = "ucb", seed_batch: int = 1) -> Rule:
    """Replication rule of a method: ERAHBO's rule named by ``stopping``, the others fixed
    ``k`` (the options unchecked for combinations: :class:`erahbo.Options` checks them)."""
    if method == "erahbo":
        return RULES[_stopping("stopping", stopping)](k_min=k_min, k_max=k_max,
                                                      seed_batch=seed_batch)
    return FixedK(k=k)
