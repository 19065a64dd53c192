"""The optimizer's options: defaults and validation, once.

:class:`Options` is a frozen dataclass of every scalar option of :class:`erahbo.Optimizer`
(method, budget, confidence parameters, seed counts, engine, failure policy, ...).  Building one
validates every field with one rule per option, and the error names the option, the value and
the fix.  The optimizer, :func:`erahbo.optimize`, the offline benchmark's study settings and the
CLI all build an :class:`Options`, so the same value is accepted or refused everywhere (e.g.
``beta > 0``: ``erahbo benchmark --beta 0`` fails before anything is written).

>>> Options(method="erahbo", budget=400).k_init_value
2
>>> Options(method="erahbo", preset="paper", budget=400).k_init_value
20
>>> Options(beta=0)
Traceback (most recent call last):
...
ValueError: beta=0 must be > 0: bounds are mu +- sqrt(beta) sigma (the paper uses beta = 2.5)

The rule of each core option is in :data:`erahbo.validation.RULES`; the options of the
strategy's parts (seed caps, recommender, random design, challenger rounds) are declared by the
parts (:data:`erahbo.optimizer.parts.PARAMS`): their rules, preset values, the values old
journals mean and their documentation below come from there.

Options that are data rather than settings (the space, an initial design, a warm start, fixed
hyperparameters, the journal) are checked where they are read.
"""

from __future__ import annotations

import hashlib
import textwrap
from dataclasses import dataclass, fields
from functools import cached_property
from typing import Any

import numpy as np

from erahbo._json import canonical_json
from erahbo.gp import ENGINES, KERNELS, GPHyper
from erahbo.optimizer import parts, replication
from erahbo.optimizer.beta_stop import BetaStopSchedule
from erahbo.optimizer.failure import FailurePolicy
from erahbo.optimizer.recommender import seeds_of
from erahbo.optimizer.risk_options import measure_of
from erahbo.optimizer.seedcap import cap_of
from erahbo.risk import MEASURES, RiskMeasure
from erahbo.space import SearchSpace
from erahbo.validation import check_initial_budget, check_option, with_checked

__all__ = [
    "METHODS",
    "SETTINGS_SCHEMA",
    "Options",
    "check_hyperparameters",
    "design_json",
    "hyper_json",
    "hyper_of_json",
    "min_seeds_of",
    "normalize_settings",
    "space_json",
]

METHODS = ("erahbo", "rahbo", "gpucb", "random")
PRESETS = ("default", "paper")
# The paper's settings (Sec. 3-4): beta 2.5, beta_stop 1, k in [2, 20], 5 initial Sobol
# configurations with k_init = k_max seeds (k for the fixed-k methods; None below), GP
# hyperparameters fitted once, after the initial design; the strategy's parts off (their
# ``Param.paper``).
PAPER_SETTINGS: dict[str, Any] = {"beta": 2.5, "n_init": 5, "k_init": None, "refit_every": 0,
                                  "refit_growth": 0.0, **parts.preset_values("paper")}
# erahbo's defaults for method="erahbo" (preset "default"): the paper's, with the extensions
# chosen by the defaults study (docs/results/defaults_study/README.md; the parts' values:
# ``Param.default``). The fixed-k methods (RAHBO, GP-UCB, random search) keep the paper's
# settings under every preset.
ERAHBO_DEFAULTS: dict[str, Any] = {
    **PAPER_SETTINGS,
    "k_init": 2,  # 5 x 2 initial runs instead of 5 x 20: the model-based search starts at run 11
    # k_min 1: one seed per new configuration, more while eq. 12 says so (session 18);
    # beta_stop 0: B_t and the stopping UCB on posterior means, a tie stops at k_min
    # refit_growth: the study measure's (RiskMeasure.refit_growth), MV's here: 2, a refit at 10,
    # 20, 40, ... configurations, used where the data favour it (refit_evidence; session 26)
    "refit_growth": MEASURES["mv"].refit_growth,
    **parts.preset_values("default"),
}
#: Version of the study settings a journal stores (:meth:`Options.settings_json`).
SETTINGS_SCHEMA = 2
#: Schema 1 (journals without ``"schema"``, erahbo before the strategy redesign) stored these
#: settings only away from these values (and not at all before they existed): the one table
#: that reads them back (:func:`normalize_settings`; the parts' values: ``Param.absent``).
SCHEMA_1_ABSENT: dict[str, Any] = {
    "n_parallel": 1, "refit_growth": 0.0,
    **parts.absent_values(),  # seed_batch 1, stopping "ucb", ...
}
# the core options with a rule in erahbo.validation.RULES (None: not given, where allowed);
# the parts' options are checked by their Param
_CHECKED = ("budget", "seed", "alpha", "beta", "n_init", "k_init", "n_parallel", "rho_max2",
            "refit_every", "refit_growth", "raw_samples", "n_polish", "retries")


def _choice(name: str, value: Any, allowed: tuple[str, ...]) -> str:
    if value not in allowed:
        raise ValueError(f"{name}={value!r} must be one of {allowed}")
    return str(value)


@dataclass(frozen=True)
class Options:
    """Every scalar option of the optimizer, validated on construction.

    :class:`erahbo.Optimizer` and :func:`erahbo.optimize` take these as keyword arguments of
    the same names. Each is checked by its rule in :data:`erahbo.validation.RULES` (integers
    as integers: ``k=2.0`` is refused with the fix; reals as finite numbers). The options of
    the strategy's parts are listed last, the replication rule's first (``k``, ``k_min``,
    ``k_max``, ``seed_batch``, ``stopping``), then the ``beta_stop`` schedule's
    (``beta_stop``, ``schedule``, ``gamma``, ``slope``); each part declares, checks and
    documents its own, and refuses the options that would do nothing together
    (:mod:`erahbo.optimizer.parts`: ``k_min <= k_max``, ``seed_batch`` and ``stopping`` for
    ERAHBO only, a schedule needs a budget, ...).

    Attributes
    ----------
    method : {"erahbo", "rahbo", "gpucb", "random"}
    preset : {"default", "paper"}
        Where the options not given come from. ``"default"``: erahbo's defaults, which for
        ``method="erahbo"`` differ from the paper where the defaults study measured a gain
        (:data:`ERAHBO_DEFAULTS`, docs/results/defaults_study); ``"paper"``: the paper's
        exact settings (:data:`PAPER_SETTINGS`), to reproduce its study. An option given by
        name always wins. The fixed-k methods use the paper's settings under both.
    budget : int or None
        Training runs (seeds) in all; None: unlimited (``ask`` never returns None).
    seed : int
        Seeds the initial design, the seeds handed to the objective, restarts and sampling.
    alpha : float
        Risk aversion in ``MV = f - alpha rho^2`` (GP-UCB ignores it when choosing); read by
        ``risk="mv"`` only (another measure refuses an ``alpha`` other than its default 1).
    beta : float
        Acquisition confidence: bounds are ``mu +- sqrt(beta) sigma`` (paper: 2.5).
    n_parallel : int
        Trials that may be pending at once: :meth:`ask` may be called again before the
        earlier trials are told, up to ``n_parallel`` of them, each at a different
        configuration (default 1: the paper's sequential loop). New configurations are chosen
        with the pending ones believed at their posterior mean (kriging believer,
        :mod:`erahbo.gp.believer`); ``B_t``, ERAHBO's stopping rule and the
        recommendation use the real data only. :meth:`ask` returns None while the next
        decision needs the pending results (the initial design must be told before the first
        model fit); :attr:`n_pending` tells this apart from the end of the budget.
    n_init : int
        Size of the initial Sobol design.
    k_init : int or None
        Seeds per initial configuration; default 2 for ERAHBO (the paper: ``k_max``), ``k``
        otherwise.
    initial_in_budget : bool
        Count the initial design's seeds in ``budget`` (default).  False for shared initial
        designs (offline benchmark: tell them once, only the BO seeds count).
    kernel : {"rbf", "matern52"}
    rho_max2 : float or None
        ``rho_max^2`` of eq. 19 (raw scale); None: the largest sample variance observed
        before the round (scale-equivariant; see docs/method.md).
    refit_every : int
        0: MAP hyperparameters once, after the initial design (paper); m: refit every m rounds.
    refit_growth : float
        An erahbo extension: refit the hyperparameters each time the number of evaluated
        configurations has grown by this factor since the last fit (2: after 10, 20, 40, ...
        configurations from an initial design of 5; a few fits per study, unlike
        ``refit_every``, which costs one fit per ``refit_every`` rounds); a refit is used
        where the data favour it (``refit_evidence``). 0: never (the paper's, the fixed-k
        methods'). Default: 2 for ERAHBO in MV, 0 elsewhere (the other risk measures, the
        paper preset, the fixed-k methods) and with fixed ``hyperparameters``.
    raw_samples, n_polish : int
        Continuous spaces: Sobol raw samples and L-BFGS-B starts per round.
    engine : {"fast", "reference"}
        Fast cached implementation or the plain reference (same decisions).
    failures : {"penalize", "retry", "exclude"} or None
        What :meth:`tell` does with non-finite returns (failed runs; see
        :mod:`erahbo.optimizer.failure`): ``"penalize"`` counts them with a return below the worst
        feasible one, ``"exclude"`` marks the configuration infeasible; ``"retry"`` is for
        :func:`optimize` (in ask/tell mode the user ran the seeds: failures are penalized).
        Default None: a non-finite return raises ValueError, unless a journal is given (then
        ``"penalize"``, so that a journaled study never stops on a failed run).
    retries : int or None
        Retries per failed seed under ``failures="retry"`` (default 2).
    """  # the parts' options follow, from their declarations (_document_parts)

    method: str = "erahbo"
    preset: str = "default"
    budget: int | None = None
    seed: int = 0
    alpha: float = 1.0
    beta: float | None = None  # None: from the preset (as every option typed "| None" here
    beta_stop: float | None = None  # whose docstring names a preset default)
    schedule: str | None = None
    gamma: float | None = None
    slope: float | None = None
    k_min: int | None = None
    k_max: int | None = None
    seed_batch: int | None = None
    n_parallel: int = 1
    stopping: str | None = None
    one_seed_optimism: bool | None = None
    k_max_means: int | None = None
    k: int | None = None
    n_init: int | None = None
    k_init: int | None = None
    initial_in_budget: bool = True
    kernel: str = "rbf"
    rho_max2: float | None = None
    refit_every: int | None = None
    refit_growth: float | None = None
    recommend_beta: float | None = None
    recommend_seeds: int | None = None
    recommend_min_seeds: int | None = None
    bound_min_seeds: int | None = None
    max_seeds: int | None = None
    pool_share: float | None = None
    seed_share: float | None = None
    random_interleave: int | None = None
    random_top: float | None = None
    challengers: bool | None = None
    var_noise_prior: float | None = None
    var_noise: str | None = None
    rho_max2_model: bool | None = None
    rho_max2_spread: float | None = None
    failure_prior_runs: float | None = None
    refit_evidence: float | None = None
    acquisition_beta_var: float | None = None
    replicate_within: float | None = None
    replicate_lookahead: bool | None = None
    early_stop: bool | None = None
    early_stop_beta: float | None = None
    risk: str | None = None
    q: float | None = None
    c: float | None = None
    raw_samples: int = 512
    n_polish: int = 5
    engine: str = "fast"
    failures: str | None = None
    retries: int | None = None

    def __post_init__(self) -> None:
        set_ = object.__setattr__  # frozen: the normalized values are written once, here
        method = _choice("method", self.method, METHODS)
        preset = _choice("preset", self.preset, PRESETS)
        given = {f.name for f in fields(self) if getattr(self, f.name) is not None}
        base = ERAHBO_DEFAULTS if method == "erahbo" and preset == "default" else PAPER_SETTINGS
        for name, value in base.items():
            if name not in given:
                set_(self, name, value)
        measure = MEASURES.get(self.risk or "mv")  # an unknown risk is refused below
        if base is ERAHBO_DEFAULTS and "refit_growth" not in given and measure is not None:
            set_(self, "refit_growth", measure.refit_growth)
        for name, value in replication.defaults(self, given).items():
            set_(self, name, value)  # the rule's own (racing: k_min 2, a sample variance)
        for name in _CHECKED:
            value = getattr(self, name)
            if value is not None:
                set_(self, name, check_option(name, value))
        for p in parts.PARAMS:
            set_(self, p.name, p.check(getattr(self, p.name)))
        parts.check(self, given)  # each part refuses what would do nothing
        set_(self, "initial_in_budget", bool(self.initial_in_budget))
        _choice("kernel", self.kernel, KERNELS)
        _choice("engine", self.engine, ENGINES)
        if self.failures is not None:
            FailurePolicy.coerce(self.failures, self.retries)

    @classmethod
    def build(
        cls,
        options: Options | None,
        method: str,
        values: dict[str, Any],
        *,
        journaled: bool = False,
    ) -> Options:
        """Options of an optimizer call: an :class:`Options`, or ``method`` and named values.

        ``journaled``: without a failure policy, a journaled study penalizes failed runs (it
        never stops on one).
        """
        if options is not None:
            if values or method not in ("erahbo", options.method):  # "erahbo": the default
                raise TypeError("give the options either as options=Options(...) or by name, "
                                f"not both (got {sorted(values) or [method]} by name)")
        else:
            unknown = sorted(set(values) - set(cls.names()))
            if unknown:
                raise TypeError(f"unknown option(s) {', '.join(map(repr, unknown))}; the "
                                f"options are {', '.join(cls.names())}")
            options = cls(method=method, **values)
        if journaled and options.failures is None:
            FailurePolicy.coerce("penalize", options.retries)  # retries given: checked with it
            options = with_checked(options, failures="penalize")
        return options

    # ------------------------------------------------------------------ derived values
    @property
    def k_init_value(self) -> int:
        """Seeds per initial configuration: ``k_init``, default ``k_max`` (ERAHBO) or ``k``."""
        if self.k_init is not None:
            return int(self.k_init)
        return self.k_max if self.method == "erahbo" else self.k

    @property
    def min_seeds(self) -> int:
        """Fewest seeds a configuration may have (:func:`min_seeds_of`)."""
        return min_seeds_of(self.method, self.k_init_value, self.k_min, self.k)

    @property
    def recommend_seeds_value(self) -> int:
        """The recommender's seed threshold resolved (0: off;
        :func:`erahbo.optimizer.recommender.seeds_of`)."""
        return seeds_of(self)

    @property
    def round_seeds(self) -> int:
        """Seeds of one round at least: ``k_init`` and the first seeds of a BO round (the
        least any seed cap allows)."""
        return max(self.k_init_value, self.k_min if self.method == "erahbo" else self.k)

    @property
    def seed_cap(self) -> int | None:
        """Most seeds per configuration (None: no limit;
        :func:`erahbo.optimizer.seedcap.cap_of`)."""
        return cap_of(self)

    @cached_property
    def measure(self) -> RiskMeasure:
        """The study's risk measure (:mod:`erahbo.risk`: ``risk`` with the ``alpha``, ``c``
        or ``q`` it reads): what the recommendation, its estimate and the reports are in."""
        return measure_of(self)

    @property
    def weight(self) -> RiskMeasure:
        """The risk measure of the choices: :attr:`measure`; risk-neutral (MV with ``alpha =
        0``) for GP-UCB."""
        return self.measure.neutral() if self.method == "gpucb" else self.measure

    @property
    def failure_policy(self) -> FailurePolicy | None:
        """The failure policy (None: strict, a non-finite return raises)."""
        if self.failures is None:
            return None
        return FailurePolicy.coerce(self.failures, self.retries)

    def policy(self) -> replication.Rule:
        """The replication rule: how many seeds each round spends
        (:func:`erahbo.optimizer.replication.rule_of`)."""
        return replication.rule_of(self)

    def beta_stop_schedule(self) -> BetaStopSchedule:
        """``beta_stop_t`` over the progress ``t / budget``
        (:mod:`erahbo.optimizer.beta_stop`)."""
        return BetaStopSchedule.from_options(self)

    def check_budget(self, n_design: int) -> None:
        """The budget must cover an initial design of ``n_design`` configurations (when the
        design counts in it)."""
        if self.initial_in_budget:
            check_initial_budget(self.budget, n_design, self.k_init_value)

    def settings_json(self, initial_design: Any = None, hyperparameters: Any = None) -> dict:
        """The decision-relevant options as plain JSON values (the study settings' core).

        Settings schema :data:`SETTINGS_SCHEMA` (key ``"schema"``): every decision setting
        explicit, resolved from the preset (the parts' options as
        :func:`erahbo.optimizer.parts.settings` resolves them), with ``initial_design`` and
        ``hyperparameters`` the optimizer's data arguments. Settings of older journals are
        read with :func:`normalize_settings`.
        """
        out = {
            "method": self.method, "budget": self.budget, "seed": self.seed,
            "alpha": self.alpha, "beta": self.beta, "n_init": self.n_init,
            "k_init": self.k_init_value, "kernel": self.kernel,
            "refit_every": self.refit_every, "raw_samples": self.raw_samples,
            "n_polish": self.n_polish, "rho_max2": self.rho_max2,
            "initial_design": design_json(initial_design),
            "initial_in_budget": self.initial_in_budget, "engine": self.engine,
            "hyperparameters": hyper_json(hyperparameters),
        }
        for name in ("n_parallel", "refit_growth"):
            out[name] = getattr(self, name)
        out.update(parts.settings(self))  # the replication rule's k, k_min, ... among them
        out["schema"] = SETTINGS_SCHEMA
        return out

    @classmethod
    def names(cls) -> tuple[str, ...]:
        """Names of all options."""
        return tuple(f.name for f in fields(cls))


def _document_parts(doc: str) -> str:
    """``doc`` (the :class:`Options` docstring) with an entry per option of the strategy's
    parts, from its declaration."""
    entries = []
    for p in parts.PARAMS:
        part = next(m.__name__ for m in parts.PARTS if p in m.PARAMS)
        text = textwrap.fill(f"{p.help} The part: :mod:`{part}`.", 92,
                             initial_indent=" " * 8, subsequent_indent=" " * 8)
        entries.append(f"    {p.name} : {p.type.__name__} or None\n{text}")
    return doc.rstrip() + "\n" + "\n".join(entries) + "\n"


Options.__doc__ = _document_parts(Options.__doc__ or "")


def min_seeds_of(method: str | None, k_init: int | None, k_min: int | None,
                 k: int | None) -> int:
    """Fewest seeds a configuration may have: 1 with ``k_init = 1`` or ERAHBO's ``k_min = 1``
    (a one-seed configuration tells the variance GP nothing, :mod:`erahbo.gp.one_seed`), else
    2 (a sample variance). The arguments as resolved (a study's ``settings`` hold them so;
    None: not known, not 1)."""
    first = k_min if method == "erahbo" else k
    return 1 if 1 in (k_init, first) else 2


def normalize_settings(settings: dict[str, Any]) -> dict[str, Any]:
    """Study settings of any schema in the current one (every decision setting explicit).

    Schema 1 left out a setting at its value in :data:`SCHEMA_1_ABSENT`; a part's option that
    a journal of any schema lacks (one added since) takes its ``Param.absent`` value, the
    behaviour of the erahbo that wrote the journal. Compare and resume settings only after
    this (a journal keeps the settings it was written with).
    """
    out = dict(settings)
    if out.get("schema") is None:
        for name, value in SCHEMA_1_ABSENT.items():
            out.setdefault(name, value)
        out["schema"] = SETTINGS_SCHEMA
    elif out["schema"] != SETTINGS_SCHEMA:
        raise ValueError(
            f"study settings of schema {out['schema']!r}: this erahbo reads schemas 1 to "
            f"{SETTINGS_SCHEMA}; resume the journal with the erahbo version that wrote it")
    for name, value in parts.absent_values().items():
        out.setdefault(name, value)
    if out.get("refit_growth") is None:  # "never" before session 26 (now 0)
        out["refit_growth"] = 0.0
    if out.get("rho_max2_spread") is None:  # off, as the commit that added it wrote it
        out["rho_max2_spread"] = 0.0  # (d9264dc, session 49; now 0)
    return out


def design_json(design: Any) -> Any:
    """An initial design as plain JSON (row ids, config dicts or encodings)."""
    if design is None:
        return None
    out = []
    for it in design:
        if isinstance(it, dict):
            out.append({str(k): (v.item() if hasattr(v, "item") else v) for k, v in it.items()})
        elif np.ndim(it) == 0:
            out.append(int(it) if float(it) == int(it) else float(it))
        else:
            out.append(np.asarray(it, dtype=float).tolist())
    return out


def hyper_json(hyper: Any) -> Any:
    """Fixed GP hyperparameters ``(hf, hv)`` as plain JSON (:func:`hyper_of_json` reads it)."""
    if hyper is None:
        return None
    return [{"kind": h.kind, "lengthscales": np.asarray(h.lengthscales, dtype=float).tolist(),
             "noise": None if h.noise is None else float(h.noise)} for h in hyper]


def hyper_of_json(items: Any) -> tuple[GPHyper, GPHyper] | None:
    """The ``(hf, hv)`` of :func:`hyper_json`'s JSON (None: none)."""
    if items is None:
        return None
    hf, hv = (GPHyper(d["kind"], np.asarray(d["lengthscales"], dtype=float), d["noise"])
              for d in items)
    return hf, hv


def check_hyperparameters(hyperparameters: Any, refit_every: int,
                          refit_growth: float | None = None) -> None:
    """Fixed hyperparameters must be ``(GPHyper, GPHyper with noise)`` and exclude refits."""
    if hyperparameters is None:
        return
    hf, hv = hyperparameters
    if not (isinstance(hf, GPHyper) and isinstance(hv, GPHyper)) or hv.noise is None:
        raise TypeError(
            "hyperparameters must be (GPHyper of the mean GP, GPHyper of the variance "
            "GP with its noise), e.g. from erahbo.gp.fit_hyperparameters"
        )
    if refit_every:
        raise ValueError("refit_every must be 0 when hyperparameters are given")
    if refit_growth:
        raise ValueError(f"refit_growth={refit_growth!r} refits the hyperparameters, and fixed "
                         "hyperparameters are given; give refit_growth=0 (or leave it out)")


def space_json(space: SearchSpace) -> dict[str, Any]:
    """The space in the study settings: its JSON, plus a content hash of a candidate table."""
    spec = space.to_json()
    if not space.is_finite:
        return spec
    rows = [space.candidate_config(i) for i in range(int(space.n_candidates))]
    digest = hashlib.sha256(canonical_json(rows, "table").encode()).hexdigest()
    return {**spec, "table": {"rows": len(rows), "sha256": digest}}
