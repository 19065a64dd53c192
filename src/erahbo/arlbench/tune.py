"""Online tuning of live ARLBench training with ERAHBO, RAHBO or GP-UCB (beyond the paper).

The optimizer's ask/tell loop drives real training runs through the ARLBench worker pool
(:class:`erahbo.arlbench.client.ArlClient`).  The seeds of one round run in parallel across the
workers (ERAHBO's ``k_min`` seeds at once, then ``seed_batch`` more at a time, one per worker by
default, as long as the stopping rule asks for more), and with ``n_parallel=q`` the seeds of
``q`` configurations share them; each worker compiles a configuration once and reuses it for
all the seeds it is given.  A failed run (NaN return, exception, timeout, crashed worker) is
handled by the optimizer's failure policy (default ``"penalize"``), and with a journal the study
survives a crash of the tuning process: running it again continues where it stopped.

>>> from erahbo.arlbench.client import ArlClient
>>> with ArlClient(n_workers=2) as client:                       # doctest: +SKIP
...     result = tune("dqn_cc_cartpole", client=client, budget=200, journal="tune.db")
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

from erahbo._data import SEED_HIGH
from erahbo.arlbench.client import ArlClient, RunResult
from erahbo.arlbench.registry import ArlTask, get_task
from erahbo.optimizer.loop import drive
from erahbo.optimizer.records import Result, Trial
from erahbo.risk import MeanVariance, RiskMeasure
from erahbo.runtime.journal import Journal
from erahbo.space import SearchSpace
from erahbo.study.journaled import Optimizer  # (with the journal)

# Width of the attainable return range per environment (episode-return bounds of the
# classic-control tasks; Brax/XLand rough). ``alpha`` is applied to returns divided by it.
RETURN_SCALE = {
    "CartPole-v1": 500.0,
    "Acrobot-v1": 500.0,
    "MountainCar-v0": 200.0,
    "MountainCarContinuous-v0": 200.0,
    "Pendulum-v1": 1600.0,
}


def return_scale(task: ArlTask) -> float:
    """Width of ``task``'s return range used to make ``alpha`` scale-free (1.0 if unknown)."""
    if task.env_framework == "xland":
        return 1.0  # XLand-MiniGrid returns lie in [0, 1]
    return float(RETURN_SCALE.get(task.environment, 1.0))


def run_seeds(
    client: ArlClient,
    task: ArlTask,
    config: dict[str, Any],
    seeds: Sequence[int],
    extra: dict[str, Any] | None = None,
    max_workers: int | None = None,
) -> list[RunResult]:
    """Train ``config`` once per seed, the seeds spread over the client's workers.

    Each worker given seeds compiles the configuration once, so ``max_workers`` (default: all)
    caps the spread when other configurations train at the same time (``n_parallel``).

    Returns one :class:`RunResult` per seed, in the order of ``seeds``.
    """
    seeds = [int(s) for s in seeds]
    n = max(1, min(client.n_workers, len(seeds), max_workers or client.n_workers))
    chunks = [seeds[i::n] for i in range(n)]  # (n,) lists: one per worker, compiled once each
    if n == 1:
        results = client.train(task, config, seeds, extra=extra)
    else:
        with ThreadPoolExecutor(max_workers=n) as pool:
            parts = list(pool.map(lambda c: client.train(task, config, c, extra=extra), chunks))
        by_seed = {r.seed: r for part in parts for r in part}
        results = [by_seed[s] for s in seeds]
    return results


def _journal_settings(journal: str | Path | None) -> dict[str, Any] | None:
    """Settings of the study in an existing journal (None: no journal, or a new one)."""
    if journal is None or not Path(journal).is_file():
        return None
    j = Journal.open(journal)
    try:
        return dict(j.settings)
    finally:
        j.close()


def tune(
    task: str | ArlTask,
    *,
    client: ArlClient,
    method: str = "erahbo",
    budget: int = 200,
    seed: int = 0,
    journal: str | Path | None = None,
    failures: str = "penalize",
    extra: dict[str, Any] | None = None,
    on_trial: Callable[[Trial, list[RunResult], Optimizer], None] | None = None,
    alpha: float = 1.0,
    scale: float | None = None,
    **options: Any,
) -> Result:
    """Tune ``task``'s hyperparameters on live training runs.

    Parameters
    ----------
    task : str or ArlTask
        A registry task, e.g. ``"ppo_cc_cartpole"`` (``erahbo dataset tasks`` lists them);
        its ARLBench search space (the paper's) is the search space.
    client : ArlClient
        Worker pool that runs the training.
    method : {"erahbo", "rahbo", "gpucb", "random"}
    budget : int
        Training runs in all, the initial design included.
    seed : int
        Seed of the optimizer (initial design, training seeds).
    journal : path, optional
        SQLite journal; an existing one with the same settings is resumed.
    failures : {"penalize", "retry", "exclude"}
        Policy for failed runs (see :mod:`erahbo.optimizer.failure`).
    extra : dict, optional
        Overrides of the worker request, e.g. ``{"n_total_timesteps": 4096}`` for smoke runs.
    on_trial : callable, optional
        Called after every told trial with ``(trial, run results, optimizer)``.
    alpha : float
        Risk aversion on returns divided by ``scale`` (the paper's objective is scale
        sensitive: with raw CartPole returns, alpha = 1 would prefer a policy that reliably
        never learns). The optimizer gets ``alpha / scale`` on the raw returns, which is
        ``MV = scale * (f / scale - alpha * (rho / scale)^2)``: the same decisions.
    scale : float, optional
        Return-range width; default :func:`return_scale` of the task.
    **options
        Further :class:`erahbo.Optimizer` options (``beta``, ``k_min``, ``k_max``, ``k``,
        ``n_init``, ``k_init``, ``seed_batch``, ``n_parallel``, ...). ``n_parallel=q`` trains
        ``q`` configurations at once, each on ``workers // q`` workers (a worker compiles each
        configuration it trains once). ERAHBO's ``seed_batch`` (seeds asked at once after
        ``k_min``) defaults to that share, so every worker trains during the inner loop too. A
        resumed study keeps the values in its journal.

    Returns
    -------
    Result
        As :func:`erahbo.optimize`; ``history`` has the status and error of every run.
    """
    t = get_task(task) if isinstance(task, str) else task
    space = SearchSpace(t.search_space)
    scale = return_scale(t) if scale is None else float(scale)
    if not scale > 0:
        raise ValueError(f"scale={scale} must be > 0 (the width of the return range)")
    info = {"objective": f"arlbench:{t.name}", "extra": extra or {}, "alpha": alpha,
            "scale": scale}
    stored = _journal_settings(journal)
    if "n_parallel" not in options and stored is not None:
        options["n_parallel"] = int(stored.get("n_parallel", 1))
    spread = max(1, client.n_workers // int(options.get("n_parallel", 1)))  # per configuration
    if method == "erahbo" and "seed_batch" not in options:
        options["seed_batch"] = int(stored.get("seed_batch", 1)) if stored is not None else spread
    # alpha is MV's (risk="mv"); the other risk measures are in return units, scale-free
    mv = options.get("risk") in (None, "mv")
    opt = Optimizer(space, method, budget=budget, seed=seed, alpha=alpha / scale if mv else alpha,
                    failures=failures, journal=journal, journal_info=info, **options)

    def tell(trial: Trial, results: list[RunResult]) -> None:
        opt.tell(trial, [r.return_ if r.status == "ok" else math.nan for r in results],
                 errors=[r.error for r in results])
        if on_trial is not None:
            on_trial(trial, results, opt)

    try:
        drive(opt, lambda trial: run_seeds(client, t, trial.config, trial.seeds, extra, spread),
              tell)
        return opt.result()
    finally:
        if journal is not None:
            opt.close()


@dataclass
class Verification:
    """Out-of-sample check of a configuration: fresh training seeds, raw-scale statistics.

    ``mv = mean - alpha / scale * var`` is the tuned objective on the raw return scale (the
    optimizer's ``incumbent_mv`` estimates the same quantity), over the finite returns; in a
    study of another risk measure (``verify(..., measure=result.measure)``), that measure's
    sample value of the finite returns (e.g. the mean of the worst ``q`` share: CVaR_q).
    """

    seeds: list[int]
    returns: list[float]
    n_failed: int
    mean: float
    std: float
    mv: float

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def verify(
    task: str | ArlTask,
    config: dict[str, Any],
    *,
    client: ArlClient,
    n_seeds: int = 50,
    alpha: float = 1.0,
    scale: float | None = None,
    seed: int = 0,
    exclude: Sequence[int] = (),
    extra: dict[str, Any] | None = None,
    measure: RiskMeasure | None = None,
) -> Verification:
    """Train ``config`` with ``n_seeds`` fresh seeds and measure its MV (or ``measure``) out
    of sample.

    The tuning loop's estimate of the incumbent's MV comes from the seeds it chose to run;
    this re-measures it on seeds it never saw (drawn from ``seed``, none in ``exclude``).

    Parameters
    ----------
    task : str or ArlTask
    config : dict
        The configuration, e.g. ``tune(...).incumbent``.
    client : ArlClient
        Worker pool (seeds spread over its workers).
    n_seeds : int
        Fresh training seeds (>= 2).
    alpha, scale : float
        As in :func:`tune` (``scale`` default: :func:`return_scale` of the task).
    seed : int
        Seed of the draw of the fresh seeds.
    exclude : sequence of int
        Seeds not to use (those the tuning already ran for this configuration).
    extra : dict, optional
        Worker request overrides, as in :func:`tune`.
    measure : erahbo.risk.RiskMeasure, optional
        The study's risk measure (``Result.measure``); None or MV: ``mean - alpha / scale *
        var``. Another measure is measured by its sample value of the fresh returns
        (:meth:`erahbo.risk.RiskMeasure.truth`; ``alpha`` and ``scale`` unused).
    """
    t = get_task(task) if isinstance(task, str) else task
    if int(n_seeds) != n_seeds or n_seeds < 2:
        raise ValueError(f"n_seeds={n_seeds} must be an int >= 2 (a sample variance)")
    scale = return_scale(t) if scale is None else float(scale)
    rng = np.random.default_rng([int(seed), 0xF5E5])  # a stream apart from the optimizer's
    used, seeds = {int(x) for x in exclude}, []
    while len(seeds) < n_seeds:
        s = int(rng.integers(1, SEED_HIGH))
        if s not in used:
            used.add(s)
            seeds.append(s)
    results = run_seeds(client, t, config, seeds, extra)
    returns = [r.return_ if r.status == "ok" else math.nan for r in results]
    ok = np.array([v for v in returns if math.isfinite(v)], dtype=float)
    mean = float(ok.mean()) if ok.size else math.nan
    var = float(ok.var(ddof=1)) if ok.size >= 2 else math.nan
    value = mean - alpha / scale * var
    if measure is not None and not isinstance(measure, MeanVariance):
        value = float(measure.truth(ok)) if ok.size >= 2 else math.nan
    return Verification(seeds, returns, int(len(returns) - ok.size), mean, math.sqrt(var),
                        value)
