"""The offline benchmark: tasks x methods x repetitions, one Parquet trace each.

Protocol (paper Sec. 4): every repetition draws its own ``n_init`` Sobol initial
configurations with ``k_init`` stored seeds each; they are shared by all methods of that
repetition and not counted in the budget, so every method starts from the same data.  GP
hyperparameters are fitted by MAP on that initial design.  The budget counts training runs
after the initial design.  The trace layout is documented in ``docs/benchmark.md``.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from erahbo.analysis.traces import TRACE_COLUMNS
from erahbo.experiments.methods import MethodSpec
from erahbo.experiments.replay import ReplayTask, SeedReplay
from erahbo.optimizer import Optimizer, Trial


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
        ``"vizier"`` (paper) or ``"none"``.
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

    def validate(self) -> None:
        """Raise one clear ValueError for an invalid setting."""
        if self.budget < 1:
            raise ValueError(f"budget={self.budget} must be >= 1 training run")
        if self.n_init < 1:
            raise ValueError(f"n_init={self.n_init} must be >= 1")
        if self.k_init < 2:
            raise ValueError(f"k_init={self.k_init} must be >= 2 (the sample variance needs 2)")
        if self.k_min < 2:
            raise ValueError(f"k_min={self.k_min} must be >= 2 (the sample variance needs 2)")
        if self.k_max < self.k_min:
            raise ValueError(f"k_max={self.k_max} must be >= k_min={self.k_min}")
        if self.alpha < 0:
            raise ValueError(f"alpha={self.alpha} must be >= 0")


def repetition_seed(task: ReplayTask, seed: int, repetition: int) -> int:
    """Seed of one repetition of one task (same for every method)."""
    rng = np.random.default_rng([int(seed), int(repetition), task.stable_id()])
    return int(rng.integers(2**31))


def trace_path(out: Path, task: str, method: str, repetition: int) -> Path:
    """``OUT/traces/<task>/<method>/rep-<NNN>.parquet``."""
    return Path(out) / "traces" / task / method / f"rep-{repetition:03d}.parquet"


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
    run = 0
    cum = 0.0
    init_inc: int | None = None  # incumbent after the initial design, before run 1
    in_flight: deque[Trial] = deque()  # n_parallel > 1: trials finish in the order asked
    while True:
        while opt.n_pending < opt.n_parallel and (asked := opt.ask()) is not None:
            if asked.phase != "init" and init_inc is None:
                init_inc = _incumbent_id(opt)
            in_flight.append(asked)
        if not in_flight:
            break
        trial = in_flight.popleft()
        cid = int(trial.config_id)
        vals, seeds = replay.draw(cid, len(trial.seeds))
        opt.tell(trial, vals)
        if replay.remaining(cid) == 0:
            opt.exclude(cid)
        if trial.phase == "init":
            continue
        prev = rows[-1][6] if rows else init_inc
        inc = _incumbent_id(opt)
        for j, s in enumerate(seeds):
            run += 1
            cum += mv_star - task.mv[cid]
            inc_j = inc if j == len(seeds) - 1 else prev  # models update once per tell
            rows.append([run, trial.round, cid, s, 0, task.mv[cid], inc_j, task.mv[inc_j],
                         mv_star - task.mv[inc_j], cum, ""])
        if progress is not None:
            progress(len(seeds))
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
    from erahbo import __version__

    return __version__
