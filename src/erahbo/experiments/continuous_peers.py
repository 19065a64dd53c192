"""The peers of the continuous benchmark: Optuna TPE and SMAC3 on a task's own search space.

As :mod:`erahbo.experiments.peers` and :mod:`erahbo.experiments.smac_peer` run them on a
table, but on the continuous space directly, as their users run them:

``optuna-tpe-k<K>``
    Optuna's :class:`~optuna.samplers.TPESampler` (its defaults, seeded per repetition)
    through the define-by-run suggest API, one suggestion per hyperparameter (log, int,
    categorical, conditional ones only where their condition holds); a trial trains its
    configuration on seeds ``0..K-1`` and reports the sample MV (``mean - alpha var``,
    ``ddof=1``) to maximize, or in another measure (the study's, or the name's:
    ``optuna-tpe-k10-cvar``) its sample value on the ``K`` returns (the sample CVaR_q:
    :meth:`erahbo.risk.RiskMeasure.truth`); the recommendation is ``study.best_trial``'s
    configuration.
``smac``
    SMAC3 2.x's :class:`~smac.HyperparameterOptimizationFacade` at its defaults (random
    forest, log EI, Sobol initial design of 10 configurations per hyperparameter and at most a
    quarter of the trials, random configurations interleaved, the intensifier racing a
    challenger on up to ``max_config_calls = 3`` seeds) on a ``ConfigurationSpace`` built from
    the task's space, ``deterministic=False``, one seed per trial, cost = minus the return:
    **risk-neutral**, as in the table benchmark (``smac-k<K>``, a sample measure of K seeds
    a trial, runs on the tables only). The recommendation is the intensifier's
    incumbent. Its random forest runs on one thread and without the leaf cap, as in
    :mod:`erahbo.experiments.smac_peer` (same model, reproducible per seed on one machine).
``bts-red``, ``bts-red-n<N>``
    Mean-Var-BTS-RED (:mod:`erahbo.experiments.bts_red`): Thompson sampling over fresh Sobol
    points and the evaluated inputs, replications from the noise variance's upper bound,
    batches of N runs; a configuration's replications take its next seed labels
    (:func:`erahbo.experiments.bts_red_peer.run_bts_red_continuous`). The recommendation is
    the evaluated input with the best posterior mean MV (MV with the study's ``alpha``, in
    any study).

Seeds: every seed a peer names (K per trial, SMAC's intensifier seeds, BTS-RED's labels) goes
through the repetition's seed stream before it reaches the objective, as erahbo's do.
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from erahbo.experiments.bts_red_peer import run_bts_red_continuous
from erahbo.experiments.measures import method_measure
from erahbo.experiments.methods import MethodSpec
from erahbo.experiments.peers import _optuna, sample_mv
from erahbo.experiments.smac_peer import MAX_CONFIG_CALLS, _finish_rounds, _forest, _smac
from erahbo.experiments.traces import TRACE_COLUMNS
from erahbo.risk import RiskLike, as_risk
from erahbo.space import SearchSpace

__all__ = ["TraceRecorder", "configspace_of", "run_continuous_peer", "suggest_config"]


def _native(v: Any) -> Any:
    return v.item() if hasattr(v, "item") else v


def _holds(cond: dict[str, Any], config: dict[str, Any]) -> bool:
    """One clause of a hyperparameter's condition, on the values chosen so far."""
    parent = config.get(cond["parent"])
    if parent is None:
        return False
    vals = cond["values"]
    if cond["op"] == ">":
        return float(parent) > float(vals[0])
    if cond["op"] == "<":
        return float(parent) < float(vals[0])
    return any(parent == v and isinstance(parent, bool) == isinstance(v, bool) for v in vals)


def suggest_config(trial: Any, space: SearchSpace) -> dict[str, Any]:
    """A configuration of ``space`` from an Optuna trial's suggest API (define-by-run)."""
    config: dict[str, Any] = {}
    for h in space.to_json()["hyperparameters"]:
        if not all(_holds(c, config) for c in h.get("condition", [])):
            continue
        name, kind = h["name"], h["type"]
        if kind in ("float", "log"):
            config[name] = trial.suggest_float(name, h["lower"], h["upper"], log=kind == "log")
        elif kind in ("int", "logint"):
            config[name] = trial.suggest_int(name, h["lower"], h["upper"], log=kind == "logint")
        elif kind in ("cat", "ord"):
            config[name] = trial.suggest_categorical(name, h["choices"])
        elif kind == "const":
            config[name] = h["value"]
        else:  # pragma: no cover - every SearchSpace type is listed above
            raise ValueError(f"hyperparameter {name!r}: type {kind!r} has no Optuna form")
    return config


def configspace_of(space: SearchSpace, seed: int) -> Any:
    """A ``ConfigSpace.ConfigurationSpace`` with ``space``'s hyperparameters and conditions."""
    import ConfigSpace as CS

    cs = CS.ConfigurationSpace(seed=seed)
    hps = {}
    for h in space.to_json()["hyperparameters"]:
        name, kind = h["name"], h["type"]
        if kind in ("float", "log"):
            hp = CS.UniformFloatHyperparameter(name, h["lower"], h["upper"], log=kind == "log")
        elif kind in ("int", "logint"):
            hp = CS.UniformIntegerHyperparameter(name, h["lower"], h["upper"],
                                                 log=kind == "logint")
        elif kind == "cat":
            hp = CS.CategoricalHyperparameter(name, h["choices"])
        elif kind == "ord":
            hp = CS.OrdinalHyperparameter(name, h["choices"])
        else:
            hp = CS.Constant(name, h["value"])
        hps[name] = hp
    cs.add(list(hps.values()))
    conds = []
    for h in space.to_json()["hyperparameters"]:
        parts = []
        for c in h.get("condition", []):
            child, parent = hps[h["name"]], hps[c["parent"]]
            if c["op"] == ">":
                parts.append(CS.GreaterThanCondition(child, parent, c["values"][0]))
            elif c["op"] == "<":
                parts.append(CS.LessThanCondition(child, parent, c["values"][0]))
            elif len(c["values"]) == 1:
                parts.append(CS.EqualsCondition(child, parent, c["values"][0]))
            else:
                parts.append(CS.InCondition(child, parent, list(c["values"])))
        if parts:
            conds.append(parts[0] if len(parts) == 1 else CS.AndConjunction(*parts))
    if conds:
        cs.add(conds)
    return cs


class TraceRecorder:
    """Rows of a continuous trace: ids of distinct configurations, the true value of each in
    the study's measure (``risk``: a :class:`~erahbo.risk.RiskMeasure`, or a float, MV's
    ``alpha``; cached), the incumbent's after every run, and the cumulative regret (the MV
    names of the trace columns hold the measure's values)."""

    def __init__(self, task: Any, risk: RiskLike, mv_star: float) -> None:
        self.task, self.measure, self.mv_star = task, as_risk(risk), float(mv_star)
        self.rows: list[list[Any]] = []
        self._ids: dict[tuple, int] = {}
        self._mv: dict[int, float] = {}
        self._cum = 0.0

    def config_id(self, config: dict[str, Any]) -> int:
        """A stable id per distinct configuration (its encoding), its true value cached."""
        u = self.task.space.encode(config)
        key = tuple(np.round(u, 12).tolist())
        cid = self._ids.setdefault(key, len(self._ids))
        if cid not in self._mv:
            self._mv[cid] = float(self.task.value(config, self.measure))
        return cid

    def mv_of(self, cid: int) -> float:
        return self._mv[cid]

    def add(self, rnd: int, cid: int, seeds: list[int], inc: int, prev: int | None,
            k_round: int = 0, last_reason: str = "") -> None:
        """One row per seed; the incumbent is ``prev`` until the last seed (``inc`` then)."""
        mv = self._mv[cid]
        for j, s in enumerate(seeds):
            last = j == len(seeds) - 1
            inc_j = inc if last or prev is None else prev
            self._cum += self.mv_star - mv
            self.rows.append([len(self.rows) + 1, rnd, cid, int(s), k_round, mv, inc_j,
                              self._mv[inc_j], self.mv_star - self._mv[inc_j], self._cum,
                              last_reason if last else ""])

    def frame(self) -> pd.DataFrame:
        return pd.DataFrame(self.rows, columns=list(TRACE_COLUMNS))


def run_continuous_peer(
    task: Any, method: MethodSpec, budget: int, settings: Any, rep_seed: int,
    stream: Callable[[int], int], progress: Callable[[int], None] | None = None,
) -> tuple[pd.DataFrame, dict[str, Any]]:
    """One repetition of a peer on ``task`` in a study of ``settings``
    (:class:`~erahbo.experiments.continuous.ContinuousSettings`: the measure the trace is
    in, and the peer's own): the trace and the peer's metadata."""
    measure = settings.measure
    rec = TraceRecorder(task, measure, task.value_max(measure))
    if method.method == "optuna-tpe":
        return _tpe(task, int(method.options["k"]), budget, method_measure(method, settings),
                    rep_seed, stream, rec, progress)
    if method.method == "smac":  # smac-k<K>: refused before (continuous.check_methods)
        return _smac_run(task, budget, rep_seed, stream, rec, progress)
    if method.method == "bts-red":
        return run_bts_red_continuous(task, dict(method.options), budget,
                                      float(settings.alpha), rep_seed, stream, rec, progress)
    raise ValueError(f"unknown peer {method.method!r}; peers: optuna-tpe-k<K>, smac, bts-red")


def _tpe(task: Any, k: int, budget: int, alpha: RiskLike, rep_seed: int,
         stream: Callable[[int], int], rec: TraceRecorder,
         progress: Callable[[int], None] | None) -> tuple[pd.DataFrame, dict[str, Any]]:
    optuna = _optuna()
    study = optuna.create_study(direction="maximize",
                                sampler=optuna.samplers.TPESampler(seed=rep_seed))
    best: tuple[float, int] | None = None
    used, t = 0, 0
    while budget - used >= k:
        trial = study.ask()
        config = suggest_config(trial, task.space)
        seeds = list(range(k))
        vals = task.sample(config, [stream(s) for s in seeds])
        value = sample_mv(vals, alpha)
        study.tell(trial, value)
        cid = rec.config_id(config)
        prev = best[1] if best is not None else None
        if best is None or value > best[0]:
            best = (value, cid)
        t += 1
        used += k
        rec.add(t, cid, seeds, best[1], prev, k_round=k, last_reason="fixed_k")
        if progress is not None:
            progress(k)
    return rec.frame(), {"k_init": k, "optuna_version": str(optuna.__version__)}


def _smac_run(task: Any, budget: int, rep_seed: int, stream: Callable[[int], int],
              rec: TraceRecorder, progress: Callable[[int], None] | None
              ) -> tuple[pd.DataFrame, dict[str, Any]]:
    smac = _smac()
    from smac.runhistory.dataclasses import TrialInfo, TrialValue

    facade = smac.HyperparameterOptimizationFacade
    cs = configspace_of(task.space, rep_seed)
    stopped = "budget"
    n_runs: dict[int, int] = {}
    round_of: dict[int, int] = {}
    with tempfile.TemporaryDirectory(prefix="erahbo-smac-") as tmp:
        scenario = smac.Scenario(cs, deterministic=False, n_trials=budget, seed=rep_seed,
                                 output_directory=Path(tmp))
        design = facade.get_initial_design(scenario)
        opt = facade(scenario, None, model=_forest(facade.get_model(scenario)),
                     initial_design=design,
                     intensifier=facade.get_intensifier(scenario,
                                                        max_config_calls=MAX_CONFIG_CALLS),
                     logging_level=False, overwrite=True)
        while len(rec.rows) < budget:
            try:
                info = opt.ask()
            except StopIteration:
                stopped = "no new trial (SMAC's intensifier gave up)"
                break
            config = {k: _native(v) for k, v in dict(info.config).items()}
            value = task.sample(config, [stream(int(info.seed))])[0]
            opt.tell(TrialInfo(info.config, seed=info.seed), TrialValue(cost=-value),
                     save=False)
            cid = rec.config_id(config)
            inc_cfg = opt.intensifier.get_incumbent()
            inc = cid if inc_cfg is None else rec.config_id(
                {k: _native(v) for k, v in dict(inc_cfg).items()})
            n_runs[cid] = n_runs.get(cid, 0) + 1
            rnd = round_of.setdefault(cid, len(round_of) + 1)
            rec.add(rnd, cid, [int(info.seed)], inc, None)
            if progress is not None:
                progress(1)
        rejected = {rec.config_id({k: _native(v) for k, v in dict(c).items()})
                    for c in opt.intensifier.get_rejected_configs()}
    trace = rec.frame()
    counts = np.zeros(max(n_runs, default=-1) + 1, dtype=np.int64)
    for cid, n in n_runs.items():
        counts[cid] = n
    _finish_rounds(trace, counts, rejected, MAX_CONFIG_CALLS)
    return trace, {"k_init": 1, "smac_version": str(smac.version),
                   "max_config_calls": MAX_CONFIG_CALLS,
                   "n_initial": int(design.meta["n_configs"]), "stopped": stopped}
