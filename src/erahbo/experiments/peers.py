"""Peers in the offline benchmark: what users would run instead of erahbo.

``optuna-tpe-k<K>``: Optuna's :class:`~optuna.samplers.TPESampler` (its defaults, seeded per
repetition) where each trial trains one configuration on ``K`` stored seeds and reports the
sample MV ``mean - alpha var`` (eq. 5 on the ``K`` returns, ``ddof=1``) to maximize, the way an
Optuna user tunes an RL algorithm for reliability. In another risk measure (the study's, or the
method's own: ``optuna-tpe-k10-cvar``) the trial's value is that measure's sample value on the
``K`` returns (:meth:`erahbo.risk.RiskMeasure.truth`: the sample CVaR, the mean of the worst
``q K`` returns, or the sample quantile). The recommendation after each trial is
``study.best_trial``'s configuration (the best sample MV so far), what an Optuna user deploys.

TPE suggests one float in ``[0, 1]`` per column of the task's unit-cube encoding
(:meth:`erahbo.space.SearchSpace.candidates_unit`); the trial runs the nearest table row that
still has ``K`` unused stored seeds (Euclidean distance in that encoding), since a replay can
only run configurations of the table. Under the paper's protocol the shared initial design is
told to the study first as completed trials (their sample MV on ``k_init`` seeds), not counted;
under the user's protocol TPE's own startup trials are its initial design, counted.

Optuna is an optional extra: ``pip install erahbo[optuna]``.

``smac``: SMAC3's hyperparameter-optimization facade, one seed per trial, risk-neutral
(:mod:`erahbo.experiments.smac_peer`; the ``smac`` extra); ``smac-k<K>`` (e.g.
``smac-k5-cvar``): ``K`` seeds per trial, cost minus their sample risk measure.

``bts-red``, ``bts-red-n<N>``: Mean-Var-BTS-RED (Dai et al., NeurIPS 2023), Thompson sampling
over the table's rows and replications from the noise variance
(:mod:`erahbo.experiments.bts_red`, :mod:`erahbo.experiments.bts_red_peer`; numpy only).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd

from erahbo._names import RISK_NEUTRAL_PEERS
from erahbo.experiments.bts_red_peer import run_bts_red_table
from erahbo.experiments.measures import method_measure
from erahbo.experiments.methods import MethodSpec
from erahbo.experiments.replay import ReplayTask, SeedReplay
from erahbo.experiments.smac_peer import run_smac_repetition
from erahbo.experiments.traces import TRACE_COLUMNS
from erahbo.gp.bounds import mean_variance
from erahbo.risk import MeanVariance, RiskMeasure

__all__ = ["PEER_METHODS", "RISK_NEUTRAL_PEERS", "run_peer_repetition"]

PEER_METHODS = ("optuna-tpe", "smac", "bts-red")


def _optuna() -> Any:
    try:
        import optuna
    except ImportError:  # pragma: no cover - the extra is installed in CI
        raise ImportError("the optuna-tpe-k<K> methods need Optuna: pip install "
                          "erahbo[optuna]") from None
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    return optuna


def sample_mv(returns: list[float], alpha: float | RiskMeasure) -> float:
    """Sample MV of one trial's returns (eq. 5 on ``mean`` and ``var(ddof=1)``); with a risk
    measure other than MV for ``alpha``, its sample value (:meth:`RiskMeasure.truth`)."""
    r = np.asarray(returns, dtype=float)  # (K,)
    if isinstance(alpha, RiskMeasure) and not isinstance(alpha, MeanVariance):
        return float(alpha.truth(r))
    weight = alpha.alpha if isinstance(alpha, MeanVariance) else alpha
    return float(mean_variance(r.mean(), r.var(ddof=1), weight))


def run_peer_repetition(
    task: ReplayTask,
    method: MethodSpec,
    repetition: int,
    settings: Any,
    rep_seed: int,
    progress: Callable[[int], None] | None = None,
) -> tuple[pd.DataFrame, dict[str, Any], list[int]]:
    """Replay one repetition of a peer method (``optuna-tpe``, ``smac``, ``bts-red``) on
    ``task``.

    Returns
    -------
    (pandas.DataFrame, dict, list of int)
        The trace (columns ``TRACE_COLUMNS``, as :func:`erahbo.experiments.run_repetition`),
        the method-specific metadata and the initial design's row ids (paper protocol; empty
        under the user's protocol).
    """
    if method.method == "smac":
        k = int(method.options.get("seeds_per_trial", 1))
        return run_smac_repetition(task, repetition, settings, rep_seed, progress, k=k,
                                   measure=method_measure(method, settings) if k > 1 else None)
    if method.method == "bts-red":
        return run_bts_red_table(task, method, repetition, settings, rep_seed, progress)
    if method.method != "optuna-tpe":
        raise ValueError(f"unknown peer method {method.method!r}; peers: {PEER_METHODS}")
    optuna = _optuna()
    k = int(method.options["k"])
    alpha = method_measure(method, settings)
    replay = SeedReplay(task, settings.seed, repetition)
    C = np.asarray(task.space.candidates_unit())  # (N, dim)
    dists = {f"u{j}": optuna.distributions.FloatDistribution(0.0, 1.0)
             for j in range(C.shape[1])}
    study = optuna.create_study(direction="maximize",
                                sampler=optuna.samplers.TPESampler(seed=rep_seed))
    best: tuple[float, int] | None = None  # (sample MV, row) of study.best_trial

    def record(cid: int, vals: list[float]) -> float:
        nonlocal best
        value = sample_mv(vals, alpha)
        if best is None or value > best[0]:
            best = (value, cid)
        return value

    init_ids: list[int] = []
    if settings.protocol == "paper":
        for cid in task.space.sobol_indices(int(settings.n_init), rep_seed):
            cid = int(cid)
            vals, _ = replay.draw(cid, int(settings.k_init))
            study.add_trial(optuna.trial.create_trial(
                params={f"u{j}": float(C[cid, j]) for j in range(C.shape[1])},
                distributions=dists, value=record(cid, vals)))
            init_ids.append(cid)
    rows: list[list[Any]] = []
    mv_star, cum, used = task.mv_star, 0.0, 0
    t = len(init_ids)
    while settings.budget - used >= k:
        avail = np.array([replay.remaining(i) >= k for i in range(task.n_configs)])
        if not avail.any():
            break
        trial = study.ask(dists)
        u = np.array([trial.params[f"u{j}"] for j in range(C.shape[1])])  # (dim,)
        d2 = np.where(avail, ((C - u) ** 2).sum(axis=1), np.inf)  # (N,)
        cid = int(np.argmin(d2))
        vals, seeds = replay.draw(cid, k)
        prev = best[1] if best is not None else None
        study.tell(trial, record(cid, vals))
        t += 1
        used += len(vals)
        for j, s in enumerate(seeds):
            inc = best[1] if (j == len(seeds) - 1 or prev is None) else prev
            cum += mv_star - task.mv[cid]
            rows.append([len(rows) + 1, t, cid, s, len(seeds), task.mv[cid], inc, task.mv[inc],
                         mv_star - task.mv[inc], cum, "fixed_k" if j == len(seeds) - 1 else ""])
        if progress is not None:
            progress(len(seeds))
    trace = pd.DataFrame(rows, columns=list(TRACE_COLUMNS))
    meta = {"k_init": int(settings.k_init) if init_ids else k}
    return trace, meta, init_ids
