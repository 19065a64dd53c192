"""The offline benchmark: tasks x methods x repetitions, one Parquet trace each.

Protocol (paper Sec. 4): every repetition draws its own ``n_init`` Sobol initial
configurations with ``k_init`` stored seeds each; they are shared by all methods of that
repetition and not counted in the budget, so every method starts from the same data.  GP
hyperparameters are fitted by MAP on that initial design.  The budget counts training runs
after the initial design.  The trace layout is documented in ``docs/benchmark.md``.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from erahbo import __version__
from erahbo.datasets.warping import METHODS as PROCESSINGS
from erahbo.experiments.methods import MethodSpec
from erahbo.experiments.replay import ReplayTask, SeedReplay
from erahbo.experiments.traces import TRACE_COLUMNS
from erahbo.optimizer.core import Optimizer
from erahbo.optimizer.loop import drive
from erahbo.optimizer.options import Options
from erahbo.optimizer.records import Trial


@dataclass(frozen=True)
class StudySettings:
    """Settings shared by every job of a benchmark study.

    Attributes
    ----------
    budget : int
        Training runs per repetition after the initial design (paper: 2000).
    n_init, k_init : int
        Initial Sobol configurations and stored seeds for each (paper: 5 and 20).
    alpha, beta, beta_stop : float
        Risk aversion, acquisition confidence and ERAHBO's stopping confidence.
    k_min, k_max : int
        ERAHBO's seed range.
    seed : int
        Base seed; repetition ``r`` of a task derives its own seed from it.
    outcome_processing : str
        ``"vizier"`` (paper), ``"minmax"`` or ``"none"``.
    """

    budget: int = 2000
    n_init: int = 5
    k_init: int = 20
    alpha: float = 1.0
    beta: float = 2.5
    beta_stop: float = 1.0
    k_min: int = 2
    k_max: int = 20
    seed: int = 0
    outcome_processing: str = "vizier"

    def __post_init__(self) -> None:
        self.validate()

    def validate(self) -> None:
        """Raise one clear error for an invalid setting (the optimizer's rules, once).

        Every repetition builds an optimizer with these values, so they are checked by
        :class:`erahbo.optimizer.options.Options` (e.g. ``beta > 0``) before any file is
        written; ``outcome_processing`` by :data:`erahbo.datasets.warping.METHODS`.
        """
        Options(method="erahbo", budget=self.budget, n_init=self.n_init, k_init=self.k_init,
                alpha=self.alpha, beta=self.beta, beta_stop=self.beta_stop, k_min=self.k_min,
                k_max=self.k_max, seed=self.seed, initial_in_budget=False)
        if self.outcome_processing not in PROCESSINGS:
            raise ValueError(f"outcome_processing={self.outcome_processing!r} must be one of "
                             f"{', '.join(PROCESSINGS)}")


def repetition_seed(task: ReplayTask, seed: int, repetition: int) -> int:
    """Seed of one repetition of one task (same for every method)."""
    rng = np.random.default_rng([int(seed), int(repetition), task.stable_id()])
    return int(rng.integers(2**31))


def _incumbent_id(opt: Optimizer) -> int:
    inc = opt.incumbent_id
    if inc is None:
        raise RuntimeError("no incumbent after the initial design")
    return int(inc)


def run_repetition(
    task: ReplayTask,
    method: MethodSpec,
    repetition: int,
    settings: StudySettings,
    progress: Callable[[int], None] | None = None,
) -> tuple[pd.DataFrame, dict[str, Any]]:
    """Replay one repetition of ``method`` on ``task``.

    Parameters
    ----------
    task : ReplayTask
    method : MethodSpec
    repetition : int
    settings : StudySettings
    progress : callable, optional
        Called with the number of training runs just made (for progress bars).

    Returns
    -------
    (pandas.DataFrame, dict)
        The trace (one row per training run after the initial design, columns
        ``TRACE_COLUMNS``) and its metadata.
    """
    t0 = time.perf_counter()
    rep_seed = repetition_seed(task, settings.seed, repetition)
    replay = SeedReplay(task, settings.seed, repetition)
    init_ids = [int(i) for i in task.space.sobol_indices(settings.n_init, rep_seed)]
    options = dict(method.options)
    if method.method == "erahbo":
        options.setdefault("k_min", settings.k_min)
        options.setdefault("k_max", settings.k_max)
        options.setdefault("beta_stop", settings.beta_stop)
    opt = Optimizer(
        task.space,
        method.method,
        budget=settings.budget,
        seed=rep_seed,
        alpha=settings.alpha,
        beta=settings.beta,
        k_init=settings.k_init,
        initial_design=init_ids,
        initial_in_budget=False,
        **options,
    )
    mv_star = task.mv_star
    rows: list[list[Any]] = []
    cum = 0.0
    init_inc: int | None = None  # incumbent after the initial design, before run 1

    def after_ask(trial: Trial) -> None:
        nonlocal init_inc
        if trial.phase != "init" and init_inc is None:
            init_inc = _incumbent_id(opt)

    def evaluate(trial: Trial) -> tuple[list[float], list[int]]:
        return replay.draw(int(trial.config_id), len(trial.seeds))

    def tell(trial: Trial, drawn: tuple[list[float], list[int]]) -> None:
        nonlocal cum
        cid = int(trial.config_id)
        vals, seeds = drawn
        opt.tell(trial, vals)
        if replay.remaining(cid) == 0:
            opt.exclude(cid)
        if trial.phase == "init":
            return
        prev = rows[-1][6] if rows else init_inc
        inc = _incumbent_id(opt)
        for j, s in enumerate(seeds):
            cum += mv_star - task.mv[cid]
            inc_j = inc if j == len(seeds) - 1 else prev  # models update once per tell
            rows.append([len(rows) + 1, trial.round, cid, s, 0, task.mv[cid], inc_j,
                         task.mv[inc_j], mv_star - task.mv[inc_j], cum, ""])
        if progress is not None:
            progress(len(seeds))

    # n_parallel > 1: trials are told in the order asked (instant replays, reproducible)
    drive(opt, evaluate, tell, after_ask=after_ask, threads=False)
    trace = pd.DataFrame(rows, columns=list(TRACE_COLUMNS))
    _fill_rounds(trace, opt)
    init_mv = task.mv[init_ids]
    meta = {
        "task": task.name,
        "domain": task.domain,
        "method": method.name,
        "label": method.label,
        "repetition": int(repetition),
        "seed": rep_seed,
        "budget": settings.budget,
        "alpha": settings.alpha,
        "mv_star": mv_star,
        "init_mv_mean": float(np.mean(init_mv)),
        "init_regret": float(mv_star - np.mean(init_mv)),
        "init_incumbent_mv": float(task.mv[init_inc]) if init_inc is not None else None,
        "initial_config_ids": init_ids,
        "k_init": settings.k_init,
        "outcome_processing": settings.outcome_processing,
        "n_configs": task.n_configs,
        "n_seeds": task.n_seeds,
        "wall_time_s": time.perf_counter() - t0,
        "erahbo_version": _version(),
    }
    return trace, meta


def _fill_rounds(trace: pd.DataFrame, opt: Optimizer) -> None:
    if trace.empty:
        return
    k_round = trace.groupby("round")["run"].transform("count")
    trace["k_round"] = k_round.astype(np.int64)
    rounds = opt.result().rounds
    reasons = dict(zip(rounds["iteration"], rounds["stop_reason"], strict=False)) if len(
        rounds
    ) else {}
    last = ~trace["round"].duplicated(keep="last")
    trace.loc[last, "stop_reason"] = trace.loc[last, "round"].map(reasons).fillna("budget")


def _version() -> str:
    return __version__
