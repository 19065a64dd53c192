"""Named methods of the offline benchmark (``--methods erahbo,rahbo-k2,...``).

Grammar of a method name::

    erahbo                 ERAHBO at erahbo's defaults (``Options``, preset "default")
    erahbo-paper           ERAHBO at the paper's exact settings (``preset="paper"``: k_min=2,
                           k_max=20, beta=2.5, beta_stop=1, k_init=k_max, no refit)
    erahbo-exp<gamma>      ERAHBO with the exponential beta_stop schedule (paper appendix)
    erahbo-sig<s>          ERAHBO with the sigmoid beta_stop schedule
    erahbo-b<N>            ERAHBO asking N seeds at a time after k_min (``seed_batch``: what
                           N parallel workers cost in sample efficiency)
    erahbo-bs<v>           ERAHBO with a constant beta_stop = v (the paper: 1)
    erahbo-<code><v>       ERAHBO with an option of a strategy part set to v: the part's
                           declaration gives the code (``Param.short``,
                           :data:`erahbo.optimizer.parts.PARAMS`), e.g. erahbo-ri<N> (random
                           rounds during the first N runs; ri0: none, the defaults of sessions
                           9-10), erahbo-top<q> (random rounds from the best share q; top1:
                           uniform, the defaults of sessions 11-13), erahbo-ch0 (no challenger
                           rounds, the defaults of sessions 11-12; ch1: with them),
                           erahbo-km<N> (``k_max = N``: at most N seeds a round)
    erahbo-race            ERAHBO's models and acquisition with a racing rule instead of the
                           confidence rule (``stopping="race"``: seeds double while the sample
                           MV keeps up with the best other one, as SMAC's intensifier races a
                           challenger; an ablation of the GP-based rule); ``k_min=2``: the
                           race compares sample variances, which one seed does not have
    erahbo-<a>-<b>...      ERAHBO variants joined, each word one of the above setting options
                           of its own (none twice): erahbo-abv1-kmm10
    rahbo-k<K>             RAHBO with K seeds per configuration (the paper: K = 2 and 20)
    gpucb-k<K>             GP-UCB (risk-neutral) with K seeds per configuration
    random-k<K>            uniform random search with K seeds per configuration
    optuna-tpe-k<K>        Optuna's TPE sampler, K seeds per trial, trial value = sample MV
                           (a peer: what users run instead; :mod:`erahbo.experiments.peers`;
                           needs the ``optuna`` extra)
    smac                   SMAC3's hyperparameter-optimization facade, one seed per trial,
                           cost = minus the return, racing on up to 3 seeds; risk-neutral
                           (a peer; :mod:`erahbo.experiments.smac_peer`; the ``smac`` extra)
    smac-k<K>              SMAC3 with K seeds per trial, cost = minus their sample risk
                           measure (the study's, or the suffix's: ``smac-k5-cvar``); the
                           user's protocol only
    bts-red                Mean-Var-BTS-RED (Dai et al., NeurIPS 2023): Thompson sampling of
                           the input, replications from the noise variance's upper bound,
                           batches of N = 10 runs; risk-aware (a peer;
                           :mod:`erahbo.experiments.bts_red`)
    bts-red-n<N>           the same with a batch budget of N runs (N >= 2)
    <method>-p<Q>          any of the above with Q configurations in flight (``n_parallel``:
                           each new one is chosen while Q - 1 others still train; in the
                           replay they finish in the order they were asked)
    <method>-cvar[<q>]     any of the above optimizing its own risk measure (options ``risk``,
    <method>-quantile[<q>] ``q``, ``alpha``; :mod:`erahbo.risk`) instead of the study's: the
    <method>-mv<alpha>     sample CVaR / quantile of the k seeds of a trial for Optuna TPE,
                           erahbo's models in that measure for erahbo / rahbo (``q``: the
                           study's, else 0.1). Regret is always in the study's measure:
                           ``erahbo-mv3`` in a CVaR study is MV at alpha 3 scored in CVaR
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from erahbo._names import (
    BTS_RED_BATCH,
    BTS_RED_RE,
    ERAHBO_VARIANT_RE,
    FIXED_K_LABELS,
    FIXED_K_RE,
    PARALLEL_RE,
    PEER_LABELS,
    RISK_SUFFIX_RE,
    SMAC_K_RE,
    bts_red_label,
    parallel_label,
    risk_label,
)
from erahbo.optimizer.parts import PARAMS, method_variant
from erahbo.validation import check_option

PAPER_METHODS = ("erahbo", "rahbo-k2", "rahbo-k20", "gpucb-k20")



@dataclass(frozen=True)
class MethodSpec:
    """A benchmark method: its name, display label and optimizer keyword arguments.

    Attributes
    ----------
    name : str
        The method name as written on the command line (also the trace directory name).
    label : str
        Human-readable label for tables and plots, e.g. ``"RAHBO (k=20)"``.
    method : str
        The optimizer's ``method`` argument: ``"erahbo"``, ``"rahbo"``, ``"gpucb"``,
        ``"random"``.
    options : dict
        Further keyword arguments for :class:`erahbo.Optimizer`.
    """

    name: str
    label: str
    method: str
    options: dict[str, Any] = field(default_factory=dict)


def parse_method(name: str) -> MethodSpec:
    """Parse one method name (see the module docstring for the grammar).

    Raises
    ------
    ValueError
        If the name does not follow the grammar; the message lists the valid forms.
    """
    key = name.strip().lower()
    m = RISK_SUFFIX_RE.match(key)
    if m:
        return _with_risk(name, key, m.group(1), m.group(2), m.group(3))
    m = PARALLEL_RE.match(key)
    if m:
        q = int(m.group(2))
        if q < 1:
            raise ValueError(f"method {name!r}: use -p<Q> with Q >= 1 configurations in flight")
        try:
            base = parse_method(m.group(1))
        except ValueError as e:
            raise ValueError(str(e).replace(repr(m.group(1)), repr(name), 1)) from None
        if base.method in ("optuna-tpe", "smac", "bts-red"):
            raise ValueError(f"method {name!r}: -p<Q> is for erahbo's methods; a peer "
                             f"(Optuna TPE, SMAC3, BTS-RED) runs sequentially (use "
                             f"{m.group(1)!r})")
        return MethodSpec(name=key, label=parallel_label(base.label, q), method=base.method,
                          options={**base.options, "n_parallel": q})
    if key == "erahbo":
        return MethodSpec(name=key, label="ERAHBO", method="erahbo")
    if key == "smac":
        return MethodSpec(name=key, label=PEER_LABELS[key], method="smac",
                          options={"seeds_per_trial": 1, "max_config_calls": 3})
    m = SMAC_K_RE.match(key)
    if m:
        k = int(m.group(1))
        if k < 2:
            raise ValueError(f"method {name!r}: smac-k<K> needs K >= 2 seeds per trial (a "
                             "sample risk measure); one seed per trial is 'smac'")
        return MethodSpec(name=key, label=f"SMAC3 (k={k})", method="smac",
                          options={"seeds_per_trial": k, "max_config_calls": 3})
    if key == "bts-red" or BTS_RED_RE.match(key):
        m = BTS_RED_RE.match(key)
        n = int(m.group(1)) if m else BTS_RED_BATCH
        if n < 2:
            raise ValueError(f"method {name!r}: the batch budget N must be >= 2 (two "
                             "replications give a sample variance); use e.g. 'bts-red-n10'")
        return MethodSpec(name=key, label=PEER_LABELS[key] if key in PEER_LABELS else
                          bts_red_label(n), method="bts-red", options={"batch_budget": n})
    if key == "erahbo-paper":
        return MethodSpec(name=key, label="ERAHBO (paper)", method="erahbo",
                          options={"preset": "paper"})
    if key == "erahbo-race":
        return MethodSpec(name=key, label="ERAHBO (racing rule)", method="erahbo",
                          options={"stopping": "race", "k_min": 2})  # a sample variance
    m = ERAHBO_VARIANT_RE.match(key)
    if m:
        spec = _erahbo_variant(key, m.group(1), m.group(2))
        if spec is not None:
            return spec
    spec = _erahbo_word_variant(key)
    if spec is not None:
        return spec
    m = FIXED_K_RE.match(key)
    if m:
        base, k = m.group(1), int(m.group(2))
        if k < 2:
            raise ValueError(
                f"method {name!r}: k must be >= 2 so that the sample variance is defined; "
                f"use e.g. '{base}-k2'."
            )
        return MethodSpec(name=key, label=f"{FIXED_K_LABELS[base]} (k={k})", method=base,
                          options={"k": k})
    spec = _erahbo_combination(key)
    if spec is not None:
        return spec
    parts = "".join(f"erahbo-{p.form}, " for p in PARAMS if p.short)
    raise ValueError(
        f"unknown method {name!r}; valid forms: erahbo, erahbo-paper, erahbo-exp<gamma>, "
        f"erahbo-sig<s>, erahbo-b<N>, erahbo-bs<v>, {parts}erahbo-race, several of these "
        "joined (erahbo-abv1-kmm10: each sets options of its own), rahbo-k<K>, "
        "gpucb-k<K>, random-k<K>, each optionally with -p<Q> (Q configurations in flight), "
        "and the peers optuna-tpe-k<K>, smac, smac-k<K>, bts-red and bts-red-n<N>, each "
        "with a risk suffix -cvar[<q>], -quantile[<q>], -mv<alpha> where it optimizes a "
        "measure (e.g. "
        "'erahbo,rahbo-k2,rahbo-k20,gpucb-k20,erahbo-p4')."
    )


def _with_risk(name: str, key: str, base_name: str, risk: str, text: str | None) -> MethodSpec:
    """``<base>-cvar[<q>]``, ``<base>-quantile[<q>]``, ``<base>-mv<alpha>``: ``base`` with its
    own risk measure."""
    from erahbo.risk import measure_from_json

    if risk == "mv" and text is None:
        raise ValueError(f"method {name!r}: -mv needs its alpha, e.g. {base_name + '-mv3'!r}")
    try:
        base = parse_method(base_name)
    except ValueError as e:
        raise ValueError(str(e).replace(repr(base_name), repr(name), 1)) from None
    if base.method == "bts-red" or (base.method == "smac"
                                    and base.options.get("seeds_per_trial", 1) < 2):
        raise ValueError(f"method {name!r}: a risk suffix is for erahbo's methods, "
                         f"optuna-tpe-k<K> and smac-k<K>; {base.label} optimizes its own "
                         "objective")
    options: dict[str, Any] = {"risk": risk}
    if text is not None:
        options["alpha" if risk == "mv" else "q"] = float(text)
    measure_from_json(options)  # a clear error for a bad q or alpha, at parse time
    return MethodSpec(name=key, label=risk_label(base.label, risk, text), method=base.method,
                      options={**base.options, **options})


def _erahbo_variant(key: str, kind: str, text: str) -> MethodSpec | None:
    """``erahbo-<kind><value>``; None where the value is not valid for the kind."""
    value = float(text)
    if kind == "exp":
        return MethodSpec(name=key, label=f"ERAHBO (exp, gamma={text})", method="erahbo",
                          options={"schedule": "exponential", "gamma": value,
                                   "beta_stop": 1.0})  # the schedule's maximum (paper)
    if kind == "sig":
        return MethodSpec(name=key, label=f"ERAHBO (sigmoid, s={text})", method="erahbo",
                          options={"schedule": "sigmoid", "slope": value,
                                   "beta_stop": 1.0})
    if kind == "bs":
        return MethodSpec(name=key, label=f"ERAHBO (beta_stop={text})", method="erahbo",
                          options={"beta_stop": value})
    if kind == "rg" and _valid("refit_growth", value):  # refit at each growth; 0: never
        label = f"refit_growth={text}" if value else "fit once, no refit"
        return MethodSpec(name=key, label=f"ERAHBO ({label})", method="erahbo",
                          options={"refit_growth": value})
    part = method_variant(kind, text)  # an option of a strategy part, by its code
    if part is not None:
        p, v = part
        shown = ("on" if v else "off") if p.type is bool else str(v) if p.type is int else f"{v:g}"
        return MethodSpec(name=key, label=f"ERAHBO ({p.label.format(shown)})",
                          method="erahbo", options={p.name: v})
    if kind == "b" and text.isdigit() and int(text) >= 1:  # seeds asked at a time after k_min
        n = int(text)
        return MethodSpec(name=key, label=f"ERAHBO (seed batch {n})", method="erahbo",
                          options={"seed_batch": n})
    return None


def _erahbo_combination(key: str) -> MethodSpec | None:
    """``erahbo-<variant>-<variant>...`` (``erahbo-abv1-kmm10``): ERAHBO with the options of
    each variant; None unless each word is a variant of its own options, none set twice."""
    words = key.removeprefix("erahbo-").split("-")
    if not key.startswith("erahbo-") or len(words) < 2:
        return None
    options: dict[str, Any] = {}
    labels = []
    for word in words:
        try:
            spec = parse_method(f"erahbo-{word}")
        except ValueError:
            return None
        if spec.method != "erahbo" or not spec.options or set(spec.options) & set(options):
            return None
        options.update(spec.options)
        labels.append(spec.label.removeprefix("ERAHBO (").removesuffix(")"))
    return MethodSpec(name=key, label=f"ERAHBO ({', '.join(labels)})", method="erahbo",
                      options=options)


def _valid(name: str, value: float) -> bool:
    """Whether ``value`` passes the core option ``name``'s rule
    (:func:`erahbo.validation.check_option`; a part's option: :func:`method_variant`)."""
    try:
        check_option(name, value)
    except (TypeError, ValueError):
        return False
    return True


def _erahbo_word_variant(key: str) -> MethodSpec | None:
    """``erahbo-<code><word>``: a strategy part's option whose values are words (``erahbo-vnlog``:
    ``var_noise="log"``); None where no such option has the code or the word is not a value."""
    rest = key.removeprefix("erahbo-")
    if rest == key:
        return None
    for p in PARAMS:
        if p.short and p.type is str and rest.startswith(p.short):
            part = method_variant(p.short, rest[len(p.short):])
            if part is not None:
                return MethodSpec(name=key, label=f"ERAHBO ({p.label.format(part[1])})",
                                  method="erahbo", options={p.name: part[1]})
    return None


def parse_methods(spec: str | list[str] | tuple[str, ...]) -> list[MethodSpec]:
    """Parse a comma-separated list (or a sequence) of method names, keeping order, no repeats."""
    names = spec.split(",") if isinstance(spec, str) else list(spec)
    out: list[MethodSpec] = []
    for n in names:
        if not n.strip():
            continue
        m = parse_method(n)
        if m.name in {o.name for o in out}:
            raise ValueError(f"method {m.name!r} is listed twice in --methods; list it once.")
        out.append(m)
    if not out:
        raise ValueError("no method given; pass e.g. --methods erahbo,rahbo-k2,rahbo-k20,gpucb-k20")
    return out
