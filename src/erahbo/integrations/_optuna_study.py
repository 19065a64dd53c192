"""What the ERAHBO sampler checks about the study it joins: its options, other samplers' trials.

* **Options.** The first ERAHBO sampler on a study stores the settings that decide (the
  core's :meth:`erahbo.Optimizer.study_settings` of its options, without the search space,
  which the study's trials give) as the study user attribute ``erahbo_settings``; a sampler
  with other options (a second worker started with ``alpha=5``) is refused with the options
  that differ and the fix, as a journal refuses a study opened with other settings
  (:func:`erahbo.runtime.journal_format.settings_diff`).
* **Trials of other samplers** (a study started with TPE and continued with ERAHBO): their
  reports may be per-seed returns, running means or learning curves, and ERAHBO cannot tell
  which, so the sampler refuses the study until the user says how to read them,
  ``ERAHBOSampler(warm_start="reports" | "values" | "ignore")``
  (:class:`erahbo.integrations._optuna_trials.Foreign`); the choice is stored in the study
  (user attribute ``erahbo_warm_start``), so later processes read them the same way, and a
  warning counts what was read and names the trials that gave nothing.

* **The recommendation** the sampler publishes (user attribute ``erahbo_recommendation``) is
  read back by :func:`recommended_trial`.

A refused trial is failed in the storage before the error is raised (it never runs), marked
``erahbo:phase = "refused"``: it is neither another sampler's trial nor a failed run.
"""

from __future__ import annotations

import contextlib
import warnings
from collections import Counter
from typing import Any

import numpy as np
import pandas as pd
from optuna.exceptions import UpdateFinishedTrialError
from optuna.study import Study
from optuna.trial import FrozenTrial, TrialState

from erahbo.integrations._optuna_pruner import DECISION
from erahbo.integrations._optuna_space import Coder, config_key
from erahbo.integrations._optuna_trials import (
    FINISHED,
    FOREIGN_MODES,
    PHASE,
    Foreign,
    TrialIndex,
    foreign_reading,
    is_own,
    study_records,
    trial_key,
    trial_runs,
    write_attrs,
)
from erahbo.optimizer.options import normalize_settings
from erahbo.runtime.journal_format import canonical_json, settings_diff

__all__ = ["RECOMMENDATION", "SETTINGS", "WARM_START", "check_foreign", "check_settings",
           "describe_others", "own_trials_in", "reading", "recommended_trial", "refuse",
           "sampler_settings", "stored_mode"]

SETTINGS = "erahbo_settings"  # study user attribute: the settings of the study's sampler
WARM_START = "erahbo_warm_start"  # study user attribute: how other samplers' trials are read
RECOMMENDATION = "erahbo_recommendation"  # study user attribute: the current recommendation
_NOT_SETTINGS = ("space", "budget", "n_parallel")  # the study's, or the adapter's own


def sampler_settings(study_settings: dict[str, Any]) -> dict[str, Any]:
    """The settings a study stores, from the core's settings of the sampler's options."""
    return {k: v for k, v in study_settings.items() if k not in _NOT_SETTINGS}


def refuse(study: Study, trial: FrozenTrial | None, message: str) -> None:
    """Fail ``trial`` in the storage (it never runs; no failed run; None: no trial) and raise
    ValueError with ``message``."""
    if trial is not None:
        write_attrs(study, trial, system={PHASE: "refused"})
        with contextlib.suppress(UpdateFinishedTrialError):  # another process finished it
            study._storage.set_trial_state_values(trial._trial_id, state=TrialState.FAIL)
    raise ValueError(message)


def check_settings(study: Study, trial: FrozenTrial, settings: dict[str, Any],
                   names: set[str]) -> None:
    """Store the sampler's settings in a study that has none; refuse a sampler whose settings
    differ from the stored ones (``names``: the options the fix names when they differ).

    Both are compared in the current schema (:func:`erahbo.optimizer.options.
    normalize_settings`, as a journal's): an option a study written by an older erahbo lacks
    reads as that erahbo's behaviour, which the refusal names as the option to pass."""
    stored = study.user_attrs.get(SETTINGS)
    if stored is None:
        study.set_user_attr(SETTINGS, settings)
        stored = study.user_attrs.get(SETTINGS)  # another worker may have written first
    if canonical_json(stored) == canonical_json(settings):
        return
    try:
        stored = sampler_settings(normalize_settings(stored))
    except ValueError as err:  # a schema this erahbo cannot read
        refuse(study, trial, f"ERAHBOSampler: study {study.study_name!r}: "
               + str(err).replace("resume the journal", "continue the study"))
    settings = sampler_settings(normalize_settings(settings))
    if canonical_json(stored) == canonical_json(settings):
        return
    diff = [line.replace("in the journal", "in the study")
            for line in settings_diff(stored, settings)]
    same = ", ".join(f"{k}={stored[k]!r}" for k in sorted(set(stored) & set(settings) & names)
                     if canonical_json(stored[k]) != canonical_json(settings[k]))
    call = f"ERAHBOSampler({same}, ...)" if same else "the same ERAHBOSampler(...) call"
    refuse(study, trial, (
        f"ERAHBOSampler: study {study.study_name!r} was built with other ERAHBOSampler "
        "options:\n  " + "\n  ".join(diff)
        + "\nIts trials, seeds and fitted hyperparameters depend on them. To continue it, "
        f"pass the study's options ({call}); to tune with the new ones, create a new study "
        "(another study_name or storage)."))


def stored_mode(study: Study) -> str | None:
    """How the study reads other samplers' trials, if a sampler chose it already."""
    mode = study.user_attrs.get(WARM_START)
    return mode if mode in FOREIGN_MODES else None


def recommended_trial(study: Study) -> FrozenTrial | None:
    """The first trial of the configuration ERAHBO recommends (``argmax LCB_MV``), as of the
    last finished trial; None before any configuration has 2 runs."""
    rec = study.user_attrs.get(RECOMMENDATION)
    if not rec:
        return None
    return next((t for t in study.get_trials(deepcopy=False) if t.number == rec["trial"]), None)


def describe_others(index: TrialIndex, foreign: Foreign, coder: Coder | None,
                    min_runs: int) -> tuple[int, list[str]]:
    """The runs the other samplers' finished trials give under ``foreign``, and one line per
    reason some give nothing (the trials named)."""
    why: dict[str, list[int]] = {}
    runs = 0
    used: list[FrozenTrial] = []
    for n in index.others:
        t = index.done[n].trial
        _, got, reason = foreign_reading(t, foreign)
        if reason is None:
            runs += len(got)
            used.append(t)
        else:
            why.setdefault(reason, []).append(n)
    if coder is not None and used:  # a configuration needs min_runs runs to be data
        records, _, _ = study_records([d.trial for d in index.done.values()], coder,
                                      min_runs=min_runs, foreign=foreign)
        kept = {config_key(r["config"]) for r in records}
        for t in used:
            if trial_key(t, coder) not in kept:
                why.setdefault(f"its configuration has fewer than {min_runs} runs (a "
                               "configuration needs them: its sample variance)", []).append(
                    t.number)
                runs -= len(foreign_reading(t, foreign)[1])
    return runs, [f"{_numbers(ns)}: {reason}" for reason, ns in why.items()]


def _numbers(ns: list[int]) -> str:
    ns = sorted(ns)
    head = ", ".join(map(str, ns[:8])) + (f", ... ({len(ns)} trials)" if len(ns) > 8 else "")
    return f"trial{'s' if len(ns) > 1 else ''} {head}"


def check_foreign(study: Study, trial: FrozenTrial | None, index: TrialIndex,
                  foreign: Foreign | None,
                  coder: Coder | None, min_runs: int, warned: set[str]) -> None:
    """Refuse a study holding other samplers' finished trials while no reading is chosen
    (``foreign`` None; ``trial``: the one failed, None: none); else warn once what they
    gave."""
    if not index.others:
        return
    states = Counter(index.done[n].trial.state.name for n in index.others)
    if foreign is None:
        steps = Counter(_steps_of(index.done[n].trial) for n in index.others)
        refuse(study, trial, (
            f"ERAHBOSampler: study {study.study_name!r} holds {len(index.others)} finished "
            f"trials of another sampler ({_states(states)}; their reports: "
            f"{'; '.join(f'{s} in {c}' for s, c in steps.most_common(4))}). ERAHBO cannot "
            "tell whether a report is a seed's return, a running mean or a learning curve: "
            "say how to read them, ERAHBOSampler(..., warm_start='reports') reads the reports "
            "at steps 0, 1, ... as the returns of seeds 0, 1, ... (as ERAHBO's own trials "
            "write them; trials with other steps, learning curves, give nothing and are "
            "named), warm_start='values' counts each completed trial's value as one run of an "
            "unknown seed, warm_start='ignore' leaves them out."))
    key = f"others:{study.study_name}:{len(index.others)}"
    if key in warned:
        return
    warned.add(key)
    if study.user_attrs.get(WARM_START) != foreign.mode:
        study.set_user_attr(WARM_START, foreign.mode)
    runs, nothing = describe_others(index, foreign, coder, min_runs)
    warnings.warn(
        f"ERAHBOSampler: study {study.study_name!r} holds {len(index.others)} finished trials "
        f"of another sampler ({_states(states)}), read with warm_start={foreign.mode!r}: "
        f"{runs} runs"
        + (". Nothing from " + "; ".join(nothing) if nothing else "") + ".",
        stacklevel=4)


def reading(study: Study, trials: list[FrozenTrial], foreign: Foreign | None) -> Foreign:
    """``foreign``, or ValueError with the choices when it is None and ``trials`` hold
    finished trials of other samplers (ignored then: there are none)."""
    index = TrialIndex(foreign or Foreign("ignore"))
    index.update(study.study_name, trials)
    if foreign is None and index.others:
        check_foreign(study, None, index, None, None, 1, set())  # raises
    return index.foreign


def _states(states: Counter) -> str:
    return ", ".join(f"{c} {s.lower()}" for s, c in states.most_common())


def _steps_of(t: FrozenTrial) -> str:
    steps = sorted(t.intermediate_values)
    if not steps:
        return "none"
    if steps == list(range(len(steps))):
        return f"steps 0..{len(steps) - 1}" if len(steps) > 1 else "step 0"
    return f"steps {steps[:3]}{' ...' if len(steps) > 3 else ''}"


def own_trials_in(res: Any, trials: list[FrozenTrial], coder: Coder, first: dict[str, int],
                  fixed_k: bool, k_max: int) -> None:
    """Put the study's own trials in ``res``'s history and rounds (in place).

    The engine's optimizer holds every run of the study as a warm start, so its tables label
    every run ``"warm"`` and have one round per configuration. Here each run of an ERAHBO trial
    gets its trial's phase (``init``, ``random``, ``bo``, ...) and number (``iteration``),
    and the rounds table has one row per ERAHBO trial: its seeds, its configuration's seeds
    and sample statistics after it, and the stopping decision it ended on (``B_t``,
    ``UCB_MV``; ``initial`` / ``random`` for those trials; a trial that ran all its seeds:
    ``fixed_k`` under a fixed-k method, else ``k_max`` or ``max_seeds``). Runs of other
    samplers' trials stay ``"warm"`` with their rounds. ``config_id`` is the number of the
    configuration's first trial (``first``: configuration key -> that number).
    """
    h, rounds = res.history, res.rounds
    own: dict[tuple[int, int], tuple[int, str]] = {}  # (config_id, seed) -> (trial, phase)
    made = []
    for t in sorted(trials, key=lambda t: t.number):
        key = trial_key(t, coder) if t.state in FINISHED and is_own(t) else None
        if key is None or key not in first:
            continue
        seeds, runs = trial_runs(t)
        phase = str(t.system_attrs.get(PHASE, "bo"))
        cid = first[key]
        own.update({(cid, int(s)): (t.number, phase) for s in seeds})
        made.append((t.number, phase, cid, seeds, runs, t.system_attrs.get(DECISION) or {}))
    if not made:
        return
    at = [own.get((int(c), int(s))) for c, s in zip(h["config_id"], h["seed"], strict=True)]
    h["iteration"] = [a[0] if a else i for a, i in zip(at, h["iteration"], strict=True)]
    h["phase"] = [a[1] if a else p for a, p in zip(at, h["phase"], strict=True)]
    warm = h[[a is None for a in at]]
    pooled = {int(c): list(g.loc[g["status"] == "ok", "return"].astype(float))
              for c, g in warm.groupby("config_id")}
    rows = []
    for number, phase, cid, seeds, runs, dec in made:
        got = pooled.setdefault(cid, [])
        got += [float(v) for v in runs if v is not None and np.isfinite(v)]
        reason = dec.get("reason") or {"init": "initial", "random": "random"}.get(phase) or (
            "fixed_k" if fixed_k else "k_max" if len(seeds) >= k_max else "max_seeds")
        rows.append({"iteration": number, "phase": phase, "config_id": cid, "k": len(seeds),
                     "k_total": len(got), "ucb_mv": dec.get("ucb_mv", np.nan),
                     "lcb_mv": np.nan, "B_t": dec.get("B_t", np.nan), "beta_stop": np.nan,
                     "acquisition": np.nan, "stop_reason": reason,
                     "mean": float(np.mean(got)) if got else np.nan,
                     "var": float(np.var(got, ddof=1)) if len(got) > 1 else np.nan,
                     "n_failed": sum(v is None for v in runs)})
    kept = rounds[~rounds["config_id"].isin({r["config_id"] for r in rows})
                  | (rounds["phase"] != "warm")]
    res.rounds = pd.concat([kept, pd.DataFrame(rows, columns=rounds.columns)],
                           ignore_index=True).sort_values("iteration", kind="stable")
