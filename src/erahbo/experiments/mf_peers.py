"""Multi-fidelity peers at equal training steps, replayed offline on learning-curve tables.

Every method of a repetition gets the same budget in training steps, ``budget_runs`` full
runs' worth (what full-run erahbo spends in ``budget_runs`` runs), on a
:class:`~erahbo.experiments.partial_replay.PartialReplay` (runs stopped at any checkpoint,
charged the steps they consume; common random numbers across methods). Method names
(:func:`parse_mf_method`, ``K`` seeds per trial, default :data:`DEFAULT_K`):

``erahbo``
    erahbo at its defaults with full runs: the existing replay (user protocol: its own initial
    design, counted), every run charged one full run's steps.
``tpe-hb-k<K>``
    Optuna's TPE sampler with :class:`optuna.pruners.HyperbandPruner` (its defaults,
    ``min_resource=1``, ``max_resource=C``: the resource is the checkpoint's index 1..C).
    A trial is one configuration (the table row nearest TPE's point with ``K`` unused stored
    seeds, as the ``optuna-tpe`` peer); its ``K`` runs advance together checkpoint by
    checkpoint, and at each checkpoint the trial reports its objective there, the MV of its
    ``K`` seeds (``mean - alpha var``, ``ddof=1``, on the processed scale); the pruner sees
    those reports. A trial the pruner stops is told PRUNED; one that reaches the last
    checkpoint completes with its final MV.
``tpe-sha-k<K>``
    The same with :class:`optuna.pruners.SuccessiveHalvingPruner` (ASHA's rule; its defaults,
    ``min_resource=1``).
``tpe-wilcoxon-k<K>``
    TPE with :class:`optuna.pruners.WilcoxonPruner` (its defaults) over seeds, its documented
    use: the instances are ``K`` stored seeds drawn once per repetition (the same for every
    trial, so that the pruner pairs them), each trial runs them to the end in a shuffled
    order and reports each seed's final return with the seed's label as the step; a trial
    the pruner stops returns its estimate (the MV of the seeds run so far: the pruner's
    documented workaround) instead of raising ``TrialPruned``; a complete trial returns the
    MV of its ``K`` seeds. Each configuration is tried once.
``smac-mf-k<K>``
    SMAC3's multi-fidelity facade with its Hyperband intensifier
    (:mod:`erahbo.experiments.mf_smac`).
``erahbo-es[-r][-b<beta>]``
    erahbo at its defaults with the early-stop part on (``early_stop``, its confidence
    ``early_stop_beta`` = ``beta``, default 1): runs trained checkpoint by checkpoint and
    stopped when eq. 12 with their predicted final returns certifies the configuration
    dominated (:mod:`erahbo.experiments.mf_erahbo`, :mod:`erahbo.optimizer.early_stop`);
    ``-r``: only the runs of configurations that have a final return already (a
    configuration's first run always completes).

The objective of every peer is the MV of its ``K`` seeds at the checkpoint a trial reached.
**Recommendation** (the configuration scored on the ground truth after each observation):
a configuration evaluated by full runs only: Optuna's ``study.best_trial`` (complete trials
only; a pruned Hyperband / SHA trial never is one; every Wilcoxon trial's runs are full
runs), SMAC's incumbent selected on the highest budget only, erahbo's own recommendation.
Before a method has one, its regret is that of the table's average configuration (1).
"""

from __future__ import annotations

import re
import warnings
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from erahbo.experiments.partial_replay import (
    CurveTask,
    PartialReplay,
    StepTrace,
    full_run_trace,
)
from erahbo.experiments.peers import _optuna, sample_mv
from erahbo.experiments.runner import repetition_seed

__all__ = ["DEFAULT_K", "MF_KINDS", "MFMethod", "parse_mf_method", "run_mf_repetition"]

DEFAULT_K = 5
MF_KINDS = {
    "erahbo": "erahbo (full runs)",
    "tpe-hb": "TPE + HyperbandPruner",
    "tpe-sha": "TPE + SuccessiveHalvingPruner",
    "tpe-wilcoxon": "TPE + WilcoxonPruner",
    "smac-mf": "SMAC3 multi-fidelity (Hyperband)",
    "erahbo-es": "erahbo + early stopping",
}
_NAME_RE = re.compile(r"^(tpe-hb|tpe-sha|tpe-wilcoxon|smac-mf)(?:-k(\d+))?$")
_ES_RE = re.compile(r"^erahbo-es(-r)?(?:-b(\d+(?:\.\d+)?))?$")


@dataclass(frozen=True)
class MFMethod:
    """A method of the multi-fidelity benchmark: ``name`` (with its ``k``), ``kind`` (a key of
    :data:`MF_KINDS`), ``k`` seeds per trial (None for erahbo) and a ``label``."""

    name: str
    kind: str
    k: int | None
    label: str
    beta: float | None = None  # erahbo-es: early_stop_beta (None: its default)
    replicates_only: bool = False  # erahbo-es-r: a configuration's first run is never stopped


def parse_mf_method(name: str, k: int = DEFAULT_K) -> MFMethod:
    """Parse ``erahbo``, ``tpe-hb[-k<K>]``, ``tpe-sha[-k<K>]``, ``tpe-wilcoxon[-k<K>]`` or
    ``smac-mf[-k<K>]`` (no ``-k``: ``k`` seeds per trial).

    Raises
    ------
    ValueError
        For another name, or ``K < 2`` (a trial's MV needs a sample variance).
    """
    key = name.strip().lower()
    if key == "erahbo":
        return MFMethod(name=key, kind="erahbo", k=None, label=MF_KINDS["erahbo"])
    es = _ES_RE.match(key)
    if es:
        beta = float(es.group(2)) if es.group(2) else None
        return MFMethod(name=key, kind="erahbo-es", k=None, label=MF_KINDS["erahbo-es"]
                        + (", replicates only" if es.group(1) else "")
                        + ("" if beta is None else f", early_stop_beta={beta:g}"), beta=beta,
                        replicates_only=bool(es.group(1)))
    m = _NAME_RE.match(key)
    if not m:
        raise ValueError(f"unknown multi-fidelity method {name!r}; use erahbo, tpe-hb, "
                         "tpe-sha, tpe-wilcoxon, smac-mf (the peers optionally with -k<K> "
                         "seeds per trial) or erahbo-es[-r][-b<beta>] (e.g. "
                         "'erahbo,erahbo-es,tpe-hb-k5,smac-mf-k5')")
    kk = int(m.group(2)) if m.group(2) else int(k)
    if kk < 2:
        raise ValueError(f"method {name!r}: k={kk} seeds per trial must be >= 2 (the MV of a "
                         "trial needs a sample variance); use e.g. -k5")
    kind = m.group(1)
    return MFMethod(name=f"{kind}-k{kk}", kind=kind, k=kk, label=f"{MF_KINDS[kind]}, k={kk}")


def run_mf_repetition(ctask: CurveTask, method: MFMethod, repetition: int, *,
                      budget_runs: int, seed: int = 0, budget_wall: float | None = None
                      ) -> tuple[pd.DataFrame, dict[str, Any]]:
    """Replay one repetition of ``method`` on ``ctask`` with ``budget_runs`` full runs' worth
    of training steps.

    ``budget_wall`` (seconds of the table's recorded wall time) is a second budget: a peer
    stops where its next step would exceed either; erahbo's full-run trace is cut after its
    last run within it (erahbo's decisions up to there do not depend on the wall budget).

    Returns
    -------
    (pandas.DataFrame, dict)
        The trace against steps (:data:`~erahbo.experiments.partial_replay.STEP_TRACE_COLUMNS`)
        and its metadata (task, method, alpha, repetition, budgets, steps used, trials).
    """
    if int(budget_runs) < 1:
        raise ValueError(f"budget_runs={budget_runs} must be >= 1 (full runs' worth of steps)")
    task = ctask.task
    if method.k is not None and method.k > task.n_seeds:
        raise ValueError(f"{method.name}: the table {task.name} has {task.n_seeds} stored "
                         f"seeds; use k <= {task.n_seeds} seeds per trial")
    rep_seed = repetition_seed(task, seed, repetition)
    budget_steps = int(budget_runs) * ctask.full_steps
    extra: dict[str, Any]
    if method.kind == "erahbo":
        trace, extra = _erahbo(ctask, repetition, int(budget_runs), seed)
        if budget_wall is not None:
            trace = trace[trace["wall_s"] <= budget_wall].reset_index(drop=True)
    else:
        replay = PartialReplay(ctask, seed, repetition, budget_steps=budget_steps,
                               budget_wall=budget_wall)
        if method.kind == "erahbo-es":
            from erahbo.experiments.mf_erahbo import run_erahbo_es

            opts = {} if method.beta is None else {"early_stop_beta": method.beta}
            trace, extra = run_erahbo_es(replay, rep_seed,
                                         new_configs=not method.replicates_only, **opts)
        elif method.kind == "smac-mf":
            from erahbo.experiments.mf_smac import run_smac_mf

            trace, extra = run_smac_mf(replay, int(method.k or DEFAULT_K), rep_seed,
                                       int(budget_runs))
        elif method.kind == "tpe-wilcoxon":
            trace, extra = _tpe_wilcoxon(replay, int(method.k or DEFAULT_K), rep_seed)
        else:
            trace, extra = _tpe_pruned(replay, method.kind, int(method.k or DEFAULT_K),
                                       rep_seed)
    meta = {"task": task.name, "method": method.name, "label": method.label, "k": method.k,
            "alpha": task.alpha, "repetition": int(repetition), "seed": rep_seed,
            "budget_runs": int(budget_runs), "budget_steps": budget_steps,
            "budget_wall": budget_wall,
            "wall_used": float(trace["wall_s"].iloc[-1]) if len(trace) else 0.0,
            "full_steps": ctask.full_steps,
            "steps_used": int(trace["steps"].iloc[-1]) if len(trace) else 0,
            "mv_star": task.mv_star, "init_regret": ctask.init_regret, **extra}
    return trace, meta


def _erahbo(ctask: CurveTask, repetition: int, budget_runs: int, seed: int
            ) -> tuple[pd.DataFrame, dict[str, Any]]:
    """erahbo with full runs through the existing replay (user protocol)."""
    from erahbo.experiments.methods import parse_method
    from erahbo.experiments.runner import StudySettings, run_repetition

    task = ctask.task
    settings = StudySettings(budget=budget_runs, alpha=task.alpha, seed=seed, protocol="user",
                             outcome_processing=str(task.meta.get("outcome_processing", {})
                                                    .get("method", "vizier")))
    trace, _ = run_repetition(task, parse_method("erahbo"), repetition, settings)
    return full_run_trace(ctask, trace), {"n_trials": int(trace["round"].nunique())}


def _nearest(C: np.ndarray, u: np.ndarray, avail: np.ndarray) -> int:
    """The available row of ``C (N, d)`` nearest ``u (d,)`` (Euclidean, unit-cube encoding)."""
    d2 = np.where(avail, ((C - u) ** 2).sum(axis=1), np.inf)  # (N,)
    return int(np.argmin(d2))


def _space(replay: PartialReplay) -> tuple[Any, np.ndarray, dict[str, Any]]:
    optuna = _optuna()
    C = np.asarray(replay.ctask.task.space.candidates_unit(), dtype=float)  # (N, d)
    dists = {f"u{j}": optuna.distributions.FloatDistribution(0.0, 1.0)
             for j in range(C.shape[1])}
    return optuna, C, dists


def _best_config(study: Any, cid_of: dict[int, int]) -> int | None:
    """``study.best_trial``'s configuration (complete trials only); None before one."""
    try:
        return cid_of[study.best_trial.number]
    except ValueError:
        return None


def _tpe_pruned(replay: PartialReplay, kind: str, k: int, rep_seed: int
                ) -> tuple[pd.DataFrame, dict[str, Any]]:
    """TPE with the Hyperband or successive-halving pruner over checkpoints (module
    docstring)."""
    optuna, C, dists = _space(replay)
    ct = replay.ctask
    n_ck = ct.n_checkpoints
    pruner = (optuna.pruners.HyperbandPruner(min_resource=1, max_resource=n_ck)
              if kind == "tpe-hb" else optuna.pruners.SuccessiveHalvingPruner(min_resource=1))
    # HyperbandPruner puts trial n in a bracket by crc32(f"{study_name}_{n}"): a named study
    # (not Optuna's random default name) makes the brackets, and the replay, reproducible
    study = optuna.create_study(direction="maximize", pruner=pruner,
                                study_name=f"{kind}-{rep_seed}",
                                sampler=optuna.samplers.TPESampler(seed=rep_seed))
    out = StepTrace(replay)
    alpha = ct.task.alpha
    cid_of: dict[int, int] = {}
    inc: int | None = None
    n_pruned, stopped = 0, "budget"
    while True:
        avail = np.array([replay.remaining(i) >= k for i in range(ct.task.n_configs)])
        if not avail.any():
            stopped = "every row's stored seeds used"
            break
        if replay.steps_left is not None and replay.steps_left < k * int(ct.steps[0]):
            break  # not even a trial's first checkpoint fits
        trial = study.ask(dists)
        u = np.array([trial.params[f"u{j}"] for j in range(C.shape[1])])  # (d,)
        cid = _nearest(C, u, avail)
        cid_of[trial.number] = cid
        cols = replay.new_runs(cid, k)
        done = False
        for c in range(n_ck):
            seen = replay.advance_all(cid, cols, c)
            if seen is None:
                done = True  # the budget ends inside this trial
                break
            vals = []
            for obs in seen:  # one run at a time: the trace records the steps after each
                out.add(obs, inc)
                vals.append(obs.value)
            value = sample_mv(vals, alpha)
            if c == n_ck - 1:
                study.tell(trial, value)
                inc = _best_config(study, cid_of)
                break
            trial.report(value, c + 1)
            if trial.should_prune():
                study.tell(trial, state=optuna.trial.TrialState.PRUNED)
                n_pruned += 1
                break
        if done:
            break
        out.restate_last(inc)
    return out.frame(), {"n_trials": len(cid_of), "n_pruned": n_pruned, "stopped": stopped}


def _tpe_wilcoxon(replay: PartialReplay, k: int, rep_seed: int
                  ) -> tuple[pd.DataFrame, dict[str, Any]]:
    """TPE with the Wilcoxon pruner over ``k`` seeds (module docstring)."""
    optuna, C, dists = _space(replay)
    ct = replay.ctask
    last = ct.n_checkpoints - 1
    rng = np.random.default_rng([rep_seed, 39])
    n_seeds = ct.task.n_seeds
    instances = [int(c) for c in rng.choice(n_seeds, size=k, replace=False)]
    with warnings.catch_warnings():  # experimental in Optuna 3.6+: its interface may change
        warnings.simplefilter("ignore", optuna.exceptions.ExperimentalWarning)
        pruner = optuna.pruners.WilcoxonPruner()
    study = optuna.create_study(direction="maximize", pruner=pruner,
                                sampler=optuna.samplers.TPESampler(seed=rep_seed))
    out = StepTrace(replay)
    alpha = ct.task.alpha
    tried = np.zeros(ct.task.n_configs, dtype=bool)
    cid_of: dict[int, int] = {}
    inc: int | None = None
    n_pruned, stopped, done = 0, "budget", False
    while not done:
        if tried.all():
            stopped = "every row tried"
            break
        if not replay.affordable([(int(np.argmin(tried)), instances[0])], last):
            break
        trial = study.ask(dists)
        u = np.array([trial.params[f"u{j}"] for j in range(C.shape[1])])  # (d,)
        cid = _nearest(C, u, ~tried)
        tried[cid] = True
        cid_of[trial.number] = cid
        vals: list[float] = []
        for col in (int(c) for c in rng.permutation(instances)):
            if not replay.affordable([(cid, col)], last):
                done = True
                break
            obs = replay.advance(cid, col, last)
            vals.append(obs.value)
            out.add(obs, inc)
            trial.report(obs.value, int(ct.task.seeds[col]))
            if len(vals) < k and _should_prune(trial):
                n_pruned += 1
                break
        if done:
            break
        study.tell(trial, sample_mv(vals, alpha))
        inc = _best_config(study, cid_of)
        out.restate_last(inc)
    return out.frame(), {"n_trials": len(cid_of), "n_pruned": n_pruned, "stopped": stopped,
                         "instances": [int(ct.task.seeds[c]) for c in instances]}


def _should_prune(trial: Any) -> bool:
    """``trial.should_prune()`` without the Wilcoxon pruner's warning that the best trial
    lacks some of this trial's seeds (a best trial that the pruner stopped early and that
    returned its estimate, the pruner's documented workaround: the seeds it lacks are left
    out of the test, as the warning says)."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="WilcoxonPruner finds steps existing",
                                category=UserWarning)
        return bool(trial.should_prune())
