"""What the ERAHBO sampler reads from and writes to an Optuna study's trials.

The storage is the state that worker processes share. Each trial records, when it starts
(:meth:`ERAHBOSampler.before_trial`), a *claim*: its configuration (the key of its modelled
parameters, or None when they are drawn independently), its round kind and the seeds it may
train (system attribute ``erahbo:claim``; the seeds also as the user attribute
``erahbo_seeds``). A configuration's next trial takes the seeds after every seed that its
other trials ran (finished trials) or may run (running ones), so two workers never train the
same ``(configuration, seed)`` pair; the data are read back from the reported values, a seed
reported twice counting once (the trial with the lower number).

Which finished trials count (:func:`trial_runs`): COMPLETE, PRUNED and FAIL. A trial that
failed in the objective (the sampler's ``after_trial`` marks it ``erahbo:objective_failed``)
adds one failed run after its reported ones; a trial failed by Optuna's heartbeat
(:func:`optuna.storages.fail_stale_trials` sets the state without calling the sampler) or one
that failed before reporting anything keeps only its reported runs: a lost machine is not a
property of the hyperparameters. A trial whose objective reported steps that are not seed
indices (``erahbo:misuse``) is left out.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

from optuna.study import Study
from optuna.trial import FrozenTrial, TrialState

from erahbo.integrations._optuna_space import Coder

__all__ = [
    "CLAIM",
    "FINISHED",
    "MISUSE",
    "OBJECTIVE_FAILED",
    "claim_of",
    "next_seeds",
    "study_records",
    "trial_key",
    "trial_runs",
    "used_seeds",
    "write_attrs",
    "write_live_attrs",
]

# trial system attributes; each names its trial (a retried trial copies its original's)
CLAIM = "erahbo:claim"  # {"trial", "config" (key or None), "kind", "seeds", "params", "space"}
OBJECTIVE_FAILED = "erahbo:objective_failed"  # the trial number: it failed in the objective
MISUSE = "erahbo:misuse"  # {"trial", "steps"}: steps that are not seed indices
FINISHED = (TrialState.COMPLETE, TrialState.PRUNED, TrialState.FAIL)


def claim_of(trial: FrozenTrial) -> dict[str, Any] | None:
    """The trial's own claim (None: none yet, or one copied from another trial by a retry)."""
    claim = trial.system_attrs.get(CLAIM)
    return claim if isinstance(claim, dict) and claim.get("trial") == trial.number else None


def _reported(trial: FrozenTrial, n: int | None) -> list[float]:
    """Reported values in step order (steps ``0 .. n-1`` only; all when ``n`` is None)."""
    return [v for s, v in sorted(trial.intermediate_values.items()) if n is None or s < n]


def trial_runs(trial: FrozenTrial, state: TrialState | None = None,
               failed_in_objective: bool | None = None) -> tuple[list[int], list[float | None]]:
    """The seeds and the runs (None: a failed run) a finished trial adds to the data.

    ``state`` and ``failed_in_objective`` override the stored ones (the sampler's
    ``after_trial`` runs before Optuna stores them). A trial without a claim (an older study)
    counts its reported steps as seeds ``0, 1, ...``.
    """
    if trial.system_attrs.get(MISUSE, {}).get("trial") == trial.number:
        return [], []
    claim = claim_of(trial)
    seeds = list(claim["seeds"]) if claim else None
    vals = _reported(trial, None if seeds is None else len(seeds))
    seeds = seeds if seeds is not None else list(range(len(vals)))
    runs: list[float | None] = [v if math.isfinite(v) else None for v in vals]
    state = trial.state if state is None else state
    if failed_in_objective is None:
        failed_in_objective = trial.system_attrs.get(OBJECTIVE_FAILED) == trial.number
    if state == TrialState.FAIL and failed_in_objective and runs and len(runs) < len(seeds):
        runs.append(None)  # the seed that raised (a failed seed is a failed run)
    return seeds[: len(runs)], runs


def trial_key(trial: FrozenTrial, coder: Coder | None,
              cache: dict[tuple[str, int], str | None] | None = None) -> str | None:
    """The configuration key of a trial: of its parameters once it has them all, else of its
    claim (None: not known yet). ``cache`` keeps the keys of finished trials."""
    done = cache is not None and coder is not None and trial.state in FINISHED
    if done and (coder.key, trial.number) in cache:
        return cache[coder.key, trial.number]
    if coder is not None and coder.covers(trial.params):
        key = coder.key_of(trial.params)
    else:
        claim = claim_of(trial)
        key = None if claim is None else claim.get("config")
    if done:
        cache[coder.key, trial.number] = key
    return key


def used_seeds(trials: Iterable[FrozenTrial], key: str, number: int, coder: Coder | None,
               cache: dict[tuple[str, int], str | None] | None = None) -> set[int]:
    """Seeds of configuration ``key`` that trials other than ``number`` ran or may run."""
    used: set[int] = set()
    for t in trials:
        claim = claim_of(t)
        if t.number == number or claim is None or trial_key(t, coder, cache) != key:
            continue
        if t.state == TrialState.RUNNING:
            used.update(claim["seeds"])
        elif t.state in FINISHED:
            _seeds, runs = trial_runs(t)
            used.update(claim["seeds"][: max(len(runs), len(t.intermediate_values))])
    return used


def next_seeds(used: set[int], n: int) -> list[int]:
    """``n`` consecutive seeds after every used one (``0 .. n-1`` for a new configuration)."""
    start = max(used) + 1 if used else 0
    return list(range(start, start + n))


def study_records(
    trials: Iterable[FrozenTrial], coder: Coder,
    extra: dict[int, tuple[FrozenTrial, list[int], list[float | None]]] | None = None,
    sign: float = 1.0,
) -> tuple[list[dict[str, Any]], dict[str, int], dict[int, tuple[Any, ...]]]:
    """The finished trials' runs as warm-start records, pooled by configuration.

    Parameters
    ----------
    trials : iterable of FrozenTrial
        The study's trials (only finished ones with runs count).
    coder : Coder
        The modelled search space.
    extra : dict, optional
        Trials finishing now (number -> (trial, seeds, runs)), not yet finished in storage.
    sign : float
        -1 for a minimizing study: the records hold returns to maximize.

    Returns
    -------
    records : list of dict
        ``{"config", "returns", "seeds"}`` per configuration with at least 2 runs, in order of
        its first trial; a seed reported twice counts once (the lower trial number's).
    first : dict of str to int
        Configuration key -> number of its first trial.
    signatures : dict of int to tuple
        Trial number -> the runs it contributed (what :class:`erahbo.integrations.
        _optuna_engine.Engine` compares to see new data).
    """
    rows: dict[int, tuple[FrozenTrial, list[int], list[float | None]]] = {}
    for t in trials:
        if t.state in FINISHED:
            seeds, runs = trial_runs(t)
            if runs:
                rows[t.number] = (t, seeds, runs)
    rows.update(extra or {})
    pooled: dict[str, dict[str, Any]] = {}
    first: dict[str, int] = {}
    sigs: dict[int, tuple[Any, ...]] = {}
    for number in sorted(rows):
        t, seeds, runs = rows[number]
        if not runs or not coder.covers(t.params):
            continue
        sigs[number] = tuple(runs)
        cfg = coder.to_erahbo(t.params)
        key = coder.key_of(t.params)
        first.setdefault(key, number)
        rec = pooled.setdefault(key, {"config": cfg, "returns": [], "seeds": []})
        for seed, v in zip(seeds, runs, strict=True):
            if seed not in rec["seeds"]:
                rec["seeds"].append(int(seed))
                rec["returns"].append(None if v is None else sign * v)
    return [r for r in pooled.values() if len(r["returns"]) >= 2], first, sigs


def write_attrs(study: Study, trial: FrozenTrial, *, user: dict[str, Any] | None = None,
                system: dict[str, Any] | None = None) -> None:
    """Store attributes of a running trial, and in the frozen copy Optuna's Trial reads.

    The one write through Optuna's private API (``study._storage``, ``trial._trial_id``):
    Optuna offers a sampler no public way to annotate the trial it samples (its own samplers
    write the same way).
    """
    storage, tid = study._storage, trial._trial_id
    for k, v in (user or {}).items():
        storage.set_trial_user_attr(tid, k, v)
        trial.set_user_attr(k, v)
    for k, v in (system or {}).items():
        storage.set_trial_system_attr(tid, k, v)
        trial.system_attrs[k] = v


def write_live_attrs(trial: Any, *, user: dict[str, Any], system: dict[str, Any]) -> None:
    """Store attributes of a running trial from the objective's side (a live ``Trial``):
    user attributes through its public ``set_user_attr``, system ones through its storage
    (private: ``trial._trial_id``)."""
    for k, v in user.items():
        trial.set_user_attr(k, v)
    for k, v in system.items():
        trial.storage.set_trial_system_attr(trial._trial_id, k, v)
