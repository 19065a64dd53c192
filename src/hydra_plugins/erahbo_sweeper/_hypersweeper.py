"""Hypersweeper's sweeper keys in erahbo's terms: the one-line switch from ARLBench's configs.

A Hypersweeper config (``hydra/sweeper: HyperRS``, ``HyperSMAC``, ...; ARLBench's
``random_search.yaml`` and ``smac.yaml``) keeps its meaning under ``hydra/sweeper: erahbo``:
each key is translated, or refused with the erahbo key to use. The differences that matter:

``n_trials`` (Hypersweeper: configurations, each run on every seed of ``seeds``)
    becomes erahbo's ``budget`` in training runs, ``n_trials x len(seeds)`` (``n_trials``
    without ``seeds``): the same compute, spent adaptively (more seeds where they decide).
``budget`` (Hypersweeper: the summed ``budget_variable``, e.g. training steps)
    counts training runs in erahbo; with ``budget_variable`` it is read as Hypersweeper's,
    ``budget // max_budget`` full-fidelity runs. Both ``budget`` and ``n_trials`` without
    ``budget_variable`` are refused (which one is meant?).
``maximize`` (Hypersweeper's default false: the task returns a cost)
    keeps Hypersweeper's default in a Hypersweeper config (one with ``n_trials``,
    ``sweeper_kwargs`` or ``budget_variable``); erahbo's own default is true (returns).
``seeds``
    sets the count above (and ``k`` of rahbo / gpucb / random); the values are not used: erahbo
    gives each configuration its own stream of distinct seeds, as many as its stopping rule
    asks for, under ``seed_keyword``.
``budget_variable`` with ``max_budget``
    every job trains at full fidelity, ``<budget_variable>=<max_budget>``; ``min_budget``
    has no use (erahbo compares full training runs).
``max_parallelization``
    ``n_parallel = max(1, int(max_parallelization x n_trials))`` (at most
    ``job_array_size_limit``) configurations trained at once. A journaled sweep extended by
    raising ``n_trials`` keeps the ``n_parallel`` it started with (:func:`kept_parallel`).
``warmstart_file``
    erahbo's ``warm_start``.
``optimizer_kwargs``, ``wandb_*``, ``deterministic``, ``checkpoint_path_typing``, ``slurm_timeout``
    configure what erahbo replaces: not used (a warning in the log for the first two).
Refused, with the fix: ``opt_constructor``, ``resume`` (erahbo resumes from its journal),
``loading_variable``, ``saving_variable``, ``checkpoint_tf``, ``load_tf`` (PBT's checkpoint
passing: erahbo trains every run from scratch), ``slurm`` (the launcher's timeout).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

# Hypersweeper 0.2.3: the sweeper config's keys (HyperRSConfig, HyperSMACConfig, ...) and the
# keyword arguments of HypersweeperSweeper (``sweeper_kwargs``)
TOP_LEVEL = ("opt_constructor", "resume", "n_trials", "budget_variable", "loading_variable",
             "saving_variable", "sweeper_kwargs")
SWEEPER_KWARGS = (
    "optimizer_kwargs", "seeds", "seed_keyword", "slurm", "slurm_timeout",
    "max_parallelization", "job_array_size_limit", "max_budget", "min_budget", "wandb_project",
    "wandb_entity", "wandb_tags", "wandb_mode", "maximize", "deterministic", "checkpoint_tf",
    "load_tf", "checkpoint_path_typing", "warmstart_file",
)
# erahbo's defaults of the keys whose default depends on the form of the config
DEFAULTS = {"budget": 100, "seed_keyword": "seed", "k": 5, "n_parallel": 1}
FIXED_K = ("rahbo", "gpucb", "random")
_FROM_SCRATCH = ("erahbo trains every run from scratch; Hypersweeper's checkpoint passing "
                 "between trials (PBT) has no erahbo counterpart: remove it")


@dataclass
class Translation:
    """erahbo's options of a sweeper config, and what the translation adds.

    Attributes
    ----------
    options : dict
        The sweeper's options in erahbo's terms (Hypersweeper's keys removed, every default
        resolved).
    job_overrides : list of str
        Overrides given to every job (``<budget_variable>=<max_budget>``).
    max_budget : float or None
        The fidelity of every run (the ``budget`` column of ``runhistory.csv``).
    notes : list of str
        What was translated, one log line each.
    unused : list of str
        Keys given that erahbo does not use, one warning each.
    budget_from : str or None
        Where the budget came from when Hypersweeper's keys set it (for error messages).
    parallel_from : tuple or None
        ``(max_parallelization, job_array_size_limit, seeds per trial)`` when ``n_parallel``
        was derived from ``n_trials`` (:func:`kept_parallel`), else None.
    """

    options: dict[str, Any]
    job_overrides: list[str] = field(default_factory=list)
    max_budget: float | None = None
    notes: list[str] = field(default_factory=list)
    unused: list[str] = field(default_factory=list)
    budget_from: str | None = None
    parallel_from: tuple[float, int, int] | None = None


def translate(options: dict[str, Any]) -> Translation:
    """Translate the sweeper's options (plain containers); raises ValueError with the fix."""
    o = dict(options)
    kw = o.pop("sweeper_kwargs", None) or {}
    if not isinstance(kw, dict):
        raise ValueError(f"hydra.sweeper.sweeper_kwargs must be a mapping, got {kw!r}")
    unknown = sorted(set(kw) - set(SWEEPER_KWARGS))
    if unknown:
        raise ValueError(f"hydra.sweeper.sweeper_kwargs: unknown key(s) {unknown}; Hypersweeper's "
                         f"keys are {list(SWEEPER_KWARGS)} (erahbo's own keys go directly under "
                         "hydra.sweeper)")
    hs = {k: o.pop(k, None) for k in TOP_LEVEL if k != "sweeper_kwargs"}
    form = bool(kw) or hs["n_trials"] is not None or hs["budget_variable"] is not None
    _refuse(hs, kw)
    t = Translation(o)
    o["seed_keyword"] = _one(o, kw, "seed_keyword", "seed_keyword", DEFAULTS["seed_keyword"])
    o["maximize"] = bool(_one(o, kw, "maximize", "maximize", False if form else True))
    if form and o["maximize"] is False and options.get("maximize") is None \
            and "maximize" not in kw:
        t.notes.append("maximize: false (Hypersweeper's default: the task returns a cost); set "
                       "hydra.sweeper.sweeper_kwargs.maximize: true for returns")
    o["warm_start"] = _one(o, kw, "warm_start", "warmstart_file", None)
    seeds = _seeds(kw.get("seeds"))
    o["budget"] = _budget(o.get("budget"), hs, kw, seeds, t)
    if o.get("k") is None:
        o["k"] = len(seeds) if seeds and o["method"] in FIXED_K else DEFAULTS["k"]
    o["n_parallel"] = _parallel(o.get("n_parallel"), hs["n_trials"], kw, t)
    if t.parallel_from is not None:
        t.parallel_from = (*t.parallel_from[:2], max(len(seeds), 1))
    if seeds:
        t.notes.append(f"seeds {seeds}: erahbo gives each configuration its own distinct "
                       f"seeds (as many as its stopping rule asks for) under {o['seed_keyword']}")
    _fidelity(hs["budget_variable"], kw, t)
    for key in ("optimizer_kwargs", "wandb_project"):
        if kw.get(key):
            t.unused.append(f"sweeper_kwargs.{key} configures Hypersweeper's "
                            f"{'optimizer' if key[0] == 'o' else 'W&B logging'}: not used by "
                            "erahbo (its own keys: method, alpha, k_min, k_max, seed, ...)")
    return t


def _refuse(hs: dict[str, Any], kw: dict[str, Any]) -> None:
    where = "hydra.sweeper."
    if hs["opt_constructor"]:
        raise ValueError(f"{where}opt_constructor chooses a Hypersweeper optimizer; under "
                         "hydra/sweeper: erahbo remove it (hydra.sweeper.method chooses erahbo, "
                         "rahbo, gpucb or random)")
    if hs["resume"]:
        raise ValueError(f"{where}resume: erahbo resumes a sweep from its journal by itself: run "
                         "the same sweep again (same hydra.sweep.dir), or give "
                         "hydra.sweeper.journal; remove resume")
    for key in ("loading_variable", "saving_variable"):
        if hs[key]:
            raise ValueError(f"{where}{key}: {_FROM_SCRATCH}")
    for key in ("checkpoint_tf", "load_tf"):
        if kw.get(key):
            raise ValueError(f"{where}sweeper_kwargs.{key}: {_FROM_SCRATCH}")
    if kw.get("slurm"):
        raise ValueError(f"{where}sweeper_kwargs.slurm: erahbo launches every job through "
                         "hydra/launcher; give the job timeout there (hydra.launcher.timeout_min "
                         "of submitit_slurm) and remove slurm")


def _one(o: dict[str, Any], kw: dict[str, Any], key: str, hs_key: str, default: Any) -> Any:
    """erahbo's ``key`` or Hypersweeper's ``sweeper_kwargs.hs_key`` (refused if they differ)."""
    mine, theirs = o.get(key), kw.get(hs_key)
    if mine is not None and theirs is not None and mine != theirs:
        raise ValueError(f"hydra.sweeper.{key}={mine!r} and hydra.sweeper.sweeper_kwargs."
                         f"{hs_key}={theirs!r} differ; give one of them")
    return mine if mine is not None else theirs if theirs is not None else default


def _seeds(seeds: Any) -> list[int]:
    if seeds is None or seeds is False:
        return []
    if not isinstance(seeds, list) or not all(isinstance(s, int) for s in seeds):
        raise ValueError(f"hydra.sweeper.sweeper_kwargs.seeds must be a list of ints, got "
                         f"{seeds!r}")
    return seeds


def _budget(budget: Any, hs: dict[str, Any], kw: dict[str, Any], seeds: list[int],
            t: Translation) -> int:
    """erahbo's budget (training runs) of the config."""
    n_trials, variable = hs["n_trials"], hs["budget_variable"]
    per = max(len(seeds), 1)
    runs = []
    if n_trials is not None:
        runs.append(int(n_trials) * per)
        t.budget_from = f"n_trials {n_trials}" + (f" x {per} seeds" if seeds else "")
        t.notes.append(f"budget: {runs[-1]} training runs ({t.budget_from})")
    if budget is not None and variable is not None:  # Hypersweeper's: summed fidelity
        top = kw.get("max_budget")
        if top is None:
            raise ValueError(
                f"hydra.sweeper.budget={budget} with budget_variable={variable!r} is "
                "Hypersweeper's summed fidelity; erahbo's budget counts training runs: give "
                "sweeper_kwargs.max_budget (the fidelity of one run: budget // max_budget runs) "
                "or n_trials instead of budget"
            )
        runs.append(int(float(budget) // float(top)))
        t.budget_from = (f"{t.budget_from}, and " if t.budget_from else "") + (
            f"budget {budget} // max_budget {top}")
        t.notes.append(f"budget: {runs[-1]} training runs (budget {budget} // max_budget {top})")
    elif budget is not None:
        if n_trials is not None:
            raise ValueError(
                f"hydra.sweeper.budget={budget} and n_trials={n_trials}: erahbo's budget counts "
                "training runs, Hypersweeper's n_trials configurations (x seeds); give one"
            )
        runs.append(int(budget))
    return min(runs) if runs else DEFAULTS["budget"]


def _parallel(n_parallel: Any, n_trials: Any, kw: dict[str, Any], t: Translation) -> int:
    share = kw.get("max_parallelization")
    if n_parallel is not None or share is None:
        return DEFAULTS["n_parallel"] if n_parallel is None else int(n_parallel)
    if n_trials is None:
        t.notes.append("max_parallelization without n_trials: n_parallel 1 (set "
                       "hydra.sweeper.n_parallel)")
        return 1
    limit = int(kw.get("job_array_size_limit") or 100)
    n = _derived_parallel(float(share), int(n_trials), limit)
    t.parallel_from = (float(share), limit, 1)
    t.notes.append(f"n_parallel: {n} configurations at once (max_parallelization {share} x "
                   f"n_trials {n_trials})")
    return n


def _derived_parallel(share: float, n_trials: int, limit: int) -> int:
    return min(limit, max(1, int(share * n_trials)))


def kept_parallel(t: Translation, stored: dict[str, Any] | None) -> tuple[int, str] | None:
    """The journal's ``n_parallel`` when a sweep is extended through ``n_trials``, with a note.

    ``n_parallel`` derived from ``max_parallelization x n_trials`` changes when ``n_trials`` is
    raised to extend a sweep: a budget extension, not a changed option. ``stored``: the
    settings of the sweep's journal (None: a new sweep). The journal's ``n_parallel`` is kept
    when the same ``max_parallelization`` (and ``job_array_size_limit``) on the journal's own
    ``n_trials`` (its starting budget / seeds per trial) gives it; otherwise None (the
    derived value stands, and the journal refuses a genuine change)."""
    if t.parallel_from is None or not stored or stored.get("budget") is None:
        return None
    share, limit, per = t.parallel_from
    have, now = stored.get("n_parallel"), t.options["n_parallel"]
    if have is None or int(have) == now or int(stored["budget"]) % per:
        return None
    started = int(stored["budget"]) // per
    if _derived_parallel(share, started, limit) != int(have):
        return None
    return int(have), (f"n_parallel: {have} as in the journal (max_parallelization {share} x "
                       f"n_trials {started} when the sweep started; {now} for the n_trials "
                       "now): raising n_trials extends the sweep's budget")


def _fidelity(variable: Any, kw: dict[str, Any], t: Translation) -> None:
    top = kw.get("max_budget")
    t.max_budget = None if top is None else float(top)
    if variable is None:
        return
    if top is None:
        t.notes.append(f"budget_variable {variable}: every run trains at the task's own "
                       f"{variable} (give sweeper_kwargs.max_budget to set it)")
        return
    value = int(top) if float(top) == int(float(top)) else float(top)
    t.job_overrides.append(f"{variable}={value}")
    if kw.get("min_budget") is not None:
        t.notes.append(f"min_budget not used: every run trains at {variable}={value} "
                       "(erahbo compares full training runs)")
