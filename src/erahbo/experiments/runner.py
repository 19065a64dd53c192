"""The offline benchmark: tasks x methods x repetitions, one Parquet trace each.

Two protocols (:data:`PROTOCOLS`):

* ``"paper"`` (paper Sec. 4): every repetition draws its own ``n_init`` Sobol initial
  configurations with ``k_init`` stored seeds each; they are shared by all methods of that
  repetition and not counted in the budget, so every method starts from the same data.  GP
  hyperparameters are fitted by MAP on that initial design.  The budget counts training runs
  after the initial design; regret is normalized by the initial design's average regret.
* ``"user"``: each method runs as a user runs :class:`erahbo.Optimizer`: its own initial
  design (its defaults unless the study sets ``n_init`` / ``k_init``), counted in the budget
  and in the trace (its rows have ``round`` of the initial design); regret is normalized by
  the regret of the table's average configuration (1 = average, 0 = best).

The trace layout is documented in ``docs/benchmark.md``.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from erahbo import __version__
from erahbo.datasets.tradeoff import near_optimal_share
from erahbo.datasets.warping import METHODS as PROCESSINGS
from erahbo.experiments.measures import (
    StudyMeasure,
    method_measure,
    method_risk_options,
    without_risk_options,
)
from erahbo.experiments.methods import MethodSpec
from erahbo.experiments.peers import PEER_METHODS, run_peer_repetition
from erahbo.experiments.replay import ReplayTask, SeedReplay
from erahbo.experiments.traces import TRACE_COLUMNS
from erahbo.gp.bounds import lcb_mv, ucb_mv
from erahbo.optimizer.core import Optimizer
from erahbo.optimizer.loop import drive
from erahbo.optimizer.options import Options
from erahbo.optimizer.records import Trial
from erahbo.risk import two_sided_z

PROTOCOLS = ("paper", "user")
_PAPER_DESIGN = {"n_init": 5, "k_init": 20}  # the paper's shared initial design


@dataclass(frozen=True)
class StudySettings(StudyMeasure):
    """Settings shared by every job of a benchmark study.

    Attributes
    ----------
    budget : int
        Training runs per repetition: after the initial design (``"paper"`` protocol, paper:
        2000) or in all (``"user"``).
    n_init, k_init : int or None
        Initial Sobol configurations and stored seeds for each. None: the paper's 5 and 20
        under the ``"paper"`` protocol (shared by all methods), each method's own default
        under ``"user"``.
    alpha : float
        Risk aversion (``risk="mv"``).
    risk : str
        The study's risk measure over seeds (:data:`erahbo.risk.MEASURES`): every method's
        regret is in its terms (the tasks' ground truth, ``prepare_task(..., measure=...)``),
        and a method optimizes it unless its name sets its own (``erahbo-mv3``,
        ``optuna-tpe-k10-cvar``: :mod:`erahbo.experiments.methods`). Default ``"mv"``.
    q : float or None
        ``risk="cvar"`` / ``"quantile"``: the share of worst seeds (None: 0.1).
    beta, beta_stop : float or None
        Acquisition confidence and ERAHBO's stopping confidence; None: each method's own.
    k_min, k_max : int or None
        ERAHBO's seed range; None: the method's own.
    seed : int
        Base seed; repetition ``r`` of a task derives its own seed from it.
    outcome_processing : str
        ``"vizier"`` (paper), ``"minmax"`` or ``"none"``.
    protocol : {"paper", "user"}
        See the module docstring.
    preset : {"default", "paper"}
        Defaults of the options a method does not set (:class:`erahbo.optimizer.options.Options`;
        the method name ``erahbo-paper`` sets ``"paper"`` itself).
    """

    budget: int = 2000
    n_init: int | None = None
    k_init: int | None = None
    alpha: float = 1.0
    beta: float | None = None
    beta_stop: float | None = None
    k_min: int | None = None
    k_max: int | None = None
    seed: int = 0
    outcome_processing: str = "vizier"
    protocol: str = "paper"
    preset: str = "default"
    risk: str = "mv"
    q: float | None = None

    def __post_init__(self) -> None:
        if self.protocol not in PROTOCOLS:
            raise ValueError(f"protocol={self.protocol!r} must be one of "
                             f"{', '.join(PROTOCOLS)}")
        if self.protocol == "paper":
            for name, value in _PAPER_DESIGN.items():
                if getattr(self, name) is None:
                    object.__setattr__(self, name, value)
        self.validate()

    def overrides(self) -> dict[str, Any]:
        """The optimizer options this study sets for every method (None: the method's own)."""
        names = ("n_init", "k_init", "beta")
        out = {n: getattr(self, n) for n in names if getattr(self, n) is not None}
        return {**out, "preset": self.preset}

    def erahbo_overrides(self) -> dict[str, Any]:
        """ERAHBO's options this study sets (a method's own name-given options win)."""
        names = ("beta_stop", "k_min", "k_max")
        return {n: getattr(self, n) for n in names if getattr(self, n) is not None}

    def validate(self) -> None:
        """Raise one clear error for an invalid setting (the optimizer's rules, once).

        Every repetition builds an optimizer with these values, so they are checked by
        :class:`erahbo.optimizer.options.Options` (e.g. ``beta > 0``) before any file is
        written; ``outcome_processing`` by :data:`erahbo.datasets.warping.METHODS`.
        """
        self.check_measure_options()
        Options(method="erahbo", budget=self.budget, seed=self.seed,
                initial_in_budget=self.protocol == "user", **self.overrides(),
                **self.erahbo_overrides(), **self.risk_options())
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
    if task.risk != settings.measure:
        raise ValueError(f"task {task.name} is scored in {task.risk.label}, the study in "
                         f"{settings.measure.label}: prepare the task with the study's "
                         "measure (prepare_task(..., measure=settings.measure))")
    user = settings.protocol == "user"
    rep_seed = repetition_seed(task, settings.seed, repetition)
    if method.method in PEER_METHODS:
        trace, extra, init_ids = run_peer_repetition(task, method, repetition, settings,
                                                     rep_seed, progress)
        init_inc, k_init = None, extra.pop("k_init")
    else:
        trace, init_ids, init_inc, k_init, extra = _replay_optimizer(
            task, method, repetition, settings, rep_seed, progress)
    # the normalizer of regret: the initial design's average configuration (paper), or the
    # table's average configuration (user protocol: each method has its own design)
    ref_mv = task.mv if user else task.mv[init_ids]
    meta = {
        "task": task.name,
        "domain": task.domain,
        "method": method.name,
        "label": method.label,
        "repetition": int(repetition),
        "seed": rep_seed,
        "budget": settings.budget,
        "alpha": settings.alpha,
        "risk": settings.measure.to_json(),
        "method_risk": method_measure(method, settings).to_json(),
        "protocol": settings.protocol,
        "mv_star": task.mv_star,
        "init_mv_mean": float(np.mean(ref_mv)),
        "init_regret": float(task.mv_star - np.mean(ref_mv)),
        "near_optimal_share": near_optimal_share(task.mv),  # > 0.5: regret ill-conditioned
        "init_incumbent_mv": float(task.mv[init_inc]) if init_inc is not None else None,
        "initial_config_ids": init_ids,
        "k_init": k_init,
        "outcome_processing": settings.outcome_processing,
        "n_configs": task.n_configs,
        "n_seeds": task.n_seeds,
        "wall_time_s": time.perf_counter() - t0,
        "erahbo_version": _version(),
        **extra,  # a peer's own (SMAC3: its version, max_config_calls, design size, stop)
    }
    return trace, meta


def _replay_optimizer(
    task: ReplayTask,
    method: MethodSpec,
    repetition: int,
    settings: StudySettings,
    rep_seed: int,
    progress: Callable[[int], None] | None,
) -> tuple[pd.DataFrame, list[int], int | None, int]:
    """One repetition through :class:`Optimizer`: (trace, initial rows, incumbent after the
    initial design, k_init)."""
    user = settings.protocol == "user"
    replay = SeedReplay(task, settings.seed, repetition)
    options = {**settings.overrides(), **without_risk_options(method.options)}
    if method.method == "erahbo":
        options = {**settings.erahbo_overrides(), **options}
    if not user:
        options["initial_design"] = [
            int(i) for i in task.space.sobol_indices(int(settings.n_init), rep_seed)]
    opt = Optimizer(task.space, method.method, budget=settings.budget, seed=rep_seed,
                    initial_in_budget=user, **options,
                    **method_risk_options(method, settings))
    mv_star = task.mv_star
    rows: list[list[Any]] = []
    init_ids: list[int] = []
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
            init_ids.append(cid)
            if not user:
                return
        inc = _incumbent_id(opt)
        prev = rows[-1][6] if rows else (init_inc if init_inc is not None else inc)
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
    return trace, init_ids, init_inc, int(opt.k_init), final_interval(opt, task)


#: Two-sided confidence of the recommendation's interval in a trace's metadata.
INTERVAL_LEVEL = 0.9


def final_interval(opt: Optimizer, task: ReplayTask) -> dict[str, Any]:
    """The recommendation's two-sided :data:`INTERVAL_LEVEL` interval of the optimizer's
    measure at the end of a replay, and that measure's ground truth there.

    The interval is eq. 9's ``[LCB, UCB]`` of the measure with each GP's band at ``z =
    Phi^{-1}(1 - (1 - level) / 2)`` posterior standard deviations (``beta = z^2``, 1.645 for
    90 %): ``[value(LCB_f, UCB_var), value(UCB_f, LCB_var)]`` (``final_models_interval``),
    joined by the measure with the recommendation's own runs
    (:meth:`erahbo.risk.RiskMeasure.final_interval`: a tail measure takes the hull with its
    runs' interval from ``ceil(1 / q)`` seeds; MV and mean - c std keep the models'):
    ``final_interval``, and ``final_k`` its seeds. Empty when the models were never fit (no
    interval) or the study recommends nothing.
    """
    inc = opt.incumbent_id
    if inc is None or opt.models.settings is None:
        return {}
    measure = opt.options.measure
    z = two_sided_z(INTERVAL_LEVEL)
    u = np.asarray(task.space.candidates_unit())[[int(inc)]]  # (1, dim)
    rm = opt.round_model()
    mf, sdf, mvar, sdv = rm.predict(u)
    beta = z * z
    lo = float(np.asarray(lcb_mv(mf, sdf, mvar, sdv, measure, beta, log_var=rm.log_var))[0])
    hi = float(np.asarray(ucb_mv(mf, sdf, mvar, sdv, measure, beta, log_var=rm.log_var))[0])
    row = opt.data.row_of(int(inc))
    own = [] if row is None else list(opt.data.returns[row])
    lo_s, hi_s = measure.final_interval(lo, hi, own, INTERVAL_LEVEL)
    truth = (float(task.mv[int(inc)]) if measure == task.risk
             else float(measure.truth(task.returns[int(inc)])))
    return {"interval_level": INTERVAL_LEVEL, "final_interval": [float(lo_s), float(hi_s)],
            "final_models_interval": [lo, hi], "final_k": len(own),
            "final_truth": truth, "final_measure": measure.label}


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
