"""Replay of partial runs on a learning-curve table: budgets in training steps and wall time.

A learning-curve table (:class:`erahbo.datasets.curves.CurveTable`) holds the return of every
stored run (configuration x seed) at ``C`` checkpoints. In this replay a run may stop at any
checkpoint, and a stopped run may be continued later (a run resumed from its checkpoint):

* **ground truth** is the existing replay's, unchanged: :func:`erahbo.experiments.replay.
  prepare_task` on the table's last checkpoint (final returns over all stored seeds,
  validated, processed; ``MV(x) = mean - alpha var``, ``ddof=1``);
* **observations**: a run that reaches checkpoint ``c`` is observed as its return at ``c``
  with that checkpoint's step (:class:`Observation`; ``final`` only at the last checkpoint:
  a stopped run is never a final return). Returns at every checkpoint are on the ground
  truth's processed scale: the processing fitted on the final returns (Vizier's warp, the
  min-max range) is applied to the earlier ones;
* **cost**: taking a run from the checkpoint it has reached, ``r`` (none: from scratch), to
  ``c > r`` charges ``steps[c] - steps[r]`` training steps and ``wall[c] - wall[r]`` seconds
  of that run's recorded wall time (cumulative per checkpoint in the table; an unknown wall
  time counts as the table's median at that checkpoint). Reading a checkpoint a run has
  already passed costs nothing (its evaluation was logged). Charging only the increment is
  the accounting most favourable to methods that revisit a run at a higher budget (SMAC's
  Hyperband), as if they resumed from a saved checkpoint;
* **budgets**: in training steps and/or wall seconds; :meth:`PartialReplay.advance` refuses
  (:class:`BudgetExhausted`) any step that would exceed one, so a budget is never exceeded;
* **seeds**: a configuration's runs take its stored seeds in the order of
  :class:`~erahbo.experiments.replay.SeedReplay` (common random numbers: the j-th run of a
  configuration is the same stored run for every method of a repetition).

A method's trace (:data:`STEP_TRACE_COLUMNS`) has one row per observation with the steps and
wall time spent so far and the method's recommendation after it; :func:`regret_at_steps`
reads the normalized regret of the recommendation against steps. A full-run method (erahbo
through the existing replay) enters through :func:`full_run_trace`.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from erahbo.datasets.curves import CurveTable, read_curves
from erahbo.datasets.validate import validate_task
from erahbo.datasets.warping import VizierWarper
from erahbo.experiments.replay import ReplayTask, SeedReplay, prepare_task

__all__ = [
    "STEP_TRACE_COLUMNS",
    "BudgetExhausted",
    "CurveTask",
    "Observation",
    "PartialReplay",
    "StepTrace",
    "full_run_trace",
    "normalized_regret",
    "prepare_curve_task",
    "regret_at_steps",
    "step_curve",
]

STEP_TRACE_COLUMNS: tuple[str, ...] = (
    "event",  # 1, 2, ... one per observation
    "steps",  # training steps spent so far (after this observation)
    "wall_s",  # wall seconds spent so far
    "config_id",  # the row observed
    "seed",  # its stored seed label
    "checkpoint_step",  # the step the observation is at
    "final",  # True: the run's final return (last checkpoint)
    "value",  # the processed return observed
    "incumbent_id",  # the recommendation after it (-1: none yet)
    "incumbent_mv",  # its true MV (none: the table's average configuration's MV)
    "simple_regret",  # MV* - incumbent_mv
)


@dataclass
class CurveTask:
    """A learning-curve table ready for the replay of partial runs.

    Attributes
    ----------
    task : ReplayTask
        The ground truth: the table's last checkpoint through the existing replay's
        :func:`~erahbo.experiments.replay.prepare_task` (its rows are the feasible
        configurations, in the table's order).
    curves : numpy.ndarray
        ``(N, S, C)`` processed returns of the task's rows at every checkpoint
        (``curves[:, :, -1]`` equals ``task.returns``).
    steps : numpy.ndarray
        ``(C,)`` the checkpoints' training steps.
    wall_s : numpy.ndarray
        ``(N, S, C)`` cumulative wall seconds of each run up to each checkpoint (unknown:
        the table's median at that checkpoint).
    """

    task: ReplayTask
    curves: np.ndarray
    steps: np.ndarray
    wall_s: np.ndarray

    @property
    def name(self) -> str:
        """The task's name."""
        return self.task.name

    @property
    def n_checkpoints(self) -> int:
        """``C``."""
        return int(self.steps.size)

    @property
    def full_steps(self) -> int:
        """Training steps of one full run (the last checkpoint)."""
        return int(self.steps[-1])

    @property
    def init_regret(self) -> float:
        """Regret of the table's average configuration (the unit of normalized regret, as the
        existing replay's user protocol)."""
        return float(self.task.mv_star - np.mean(self.task.mv))


def prepare_curve_task(table: CurveTable | str | Path, *, alpha: float = 1.0,
                       outcome_processing: str = "vizier") -> CurveTask:
    """Ground truth and processed curves of a learning-curve table (module docstring).

    Parameters
    ----------
    table : CurveTable or path
        The table, or a Parquet file written by :func:`erahbo.datasets.curves.write_curves`.
    alpha : float
        Risk aversion of the ground truth.
    outcome_processing : {"vizier", "minmax", "none"}
        As the existing replay (fitted on the final returns).
    """
    if not isinstance(table, CurveTable):
        table = read_curves(table)
    final = table.at(None)
    task = prepare_task(final, alpha=alpha, outcome_processing=outcome_processing)
    # the ground truth dropped the configurations with a failed run (the paper's NaN
    # policy, erahbo.datasets.validate): drop their curves too
    infeasible = set(validate_task(final)[1].infeasible_ids)
    keep = np.array([int(i) not in infeasible for i in table.config_ids])  # (N_table,)
    cols = [table.seeds.index(s) for s in task.seeds]
    raw = np.asarray(table.returns, dtype=float)[keep][:, cols, :]  # (N, S, C)
    raw = np.where(np.isneginf(raw), np.nan, raw)
    curves = _process_like(raw, task)
    if not np.allclose(curves[:, :, -1], task.returns, equal_nan=True):
        raise RuntimeError(f"{task.name}: the processed final checkpoint differs from the "
                           "ground truth's returns (the table's rows do not line up)")
    curves[:, :, -1] = task.returns  # bit-identical to the ground truth
    wall = np.asarray(table.wall_s, dtype=float)[keep][:, cols, :]
    med = np.nanmedian(np.asarray(table.wall_s, dtype=float), axis=(0, 1)) if np.isfinite(
        table.wall_s).any() else np.zeros(table.n_checkpoints)
    wall = np.where(np.isfinite(wall), wall, np.nan_to_num(med)[None, None, :])
    return CurveTask(task=task, curves=curves, steps=np.asarray(table.steps, dtype=np.int64),
                     wall_s=wall)


def _process_like(raw: np.ndarray, task: ReplayTask) -> np.ndarray:
    """Apply the processing the ground truth fitted on the final returns to every checkpoint
    (the fit is the one :func:`erahbo.datasets.warping.process_outcomes` made: refitted on the
    same final returns here, and checked against the ground truth by the caller)."""
    spec = task.meta.get("outcome_processing", {})
    method = spec.get("method", "none") if isinstance(spec, dict) else "none"
    if method == "none":
        return raw.copy()
    if method == "minmax":
        lo, hi = float(spec["low"]), float(spec["high"])
        return (raw - lo) / (hi - lo if hi > lo else 1.0)
    warper = VizierWarper().fit(raw[:, :, -1])
    return np.asarray(warper.transform(raw), dtype=float)


@dataclass(frozen=True)
class Observation:
    """One run observed at one checkpoint.

    Attributes
    ----------
    config_id : int
        The task's row.
    column : int
        The run's column in ``CurveTask.curves`` (its stored seed).
    seed : int
        The stored seed's label.
    checkpoint : int
        Index of the checkpoint, ``0..C-1``.
    step : int
        Its training steps.
    value : float
        The processed return there.
    final : bool
        Whether this is the run's final return (the last checkpoint).
    """

    config_id: int
    column: int
    seed: int
    checkpoint: int
    step: int
    value: float
    final: bool


class BudgetExhausted(RuntimeError):
    """Advancing a run would exceed the replay's budget in steps or wall time."""


class PartialReplay:
    """The runs of one repetition on a :class:`CurveTask`, stopped and continued at will,
    charged against budgets in training steps and wall seconds (module docstring).

    Parameters
    ----------
    ctask : CurveTask
    seed, repetition : int
        As :class:`~erahbo.experiments.replay.SeedReplay` (common random numbers).
    budget_steps : int, optional
        Training steps the repetition may spend (None: no limit).
    budget_wall : float, optional
        Wall seconds it may spend (None: no limit).
    """

    def __init__(self, ctask: CurveTask, seed: int, repetition: int, *,
                 budget_steps: int | None = None, budget_wall: float | None = None) -> None:
        for name, value in (("budget_steps", budget_steps), ("budget_wall", budget_wall)):
            if value is not None and not value > 0:
                raise ValueError(f"{name}={value!r} must be positive (or None: no limit)")
        self.ctask = ctask
        self._seeds = SeedReplay(ctask.task, seed, repetition)
        n, s, _ = ctask.curves.shape
        self._reached = np.full((n, s), -1, dtype=np.int64)  # (N, S) checkpoint reached
        self.budget_steps = budget_steps
        self.budget_wall = budget_wall
        self.steps_used = 0
        self.wall_used = 0.0

    def remaining(self, config_id: int) -> int:
        """Stored seeds of ``config_id`` not yet given to a run."""
        return self._seeds.remaining(config_id)

    def new_runs(self, config_id: int, n: int) -> list[int]:
        """Up to ``n`` new runs of ``config_id`` (their columns; nothing is trained yet)."""
        return self._seeds.draw_columns(config_id, n)

    def reached(self, config_id: int, column: int) -> int:
        """The checkpoint the run has reached (-1: not started)."""
        return int(self._reached[config_id, column])

    def cost(self, runs: list[tuple[int, int]], checkpoint: int) -> tuple[int, float]:
        """(training steps, wall seconds) that taking every ``(config_id, column)`` run of
        ``runs`` to ``checkpoint`` would charge (nothing for a run already past it)."""
        self._check(checkpoint)
        steps, wall = 0, 0.0
        for cid, col in runs:
            r = int(self._reached[cid, col])
            if checkpoint > r:
                steps += int(self.ctask.steps[checkpoint]) - (
                    int(self.ctask.steps[r]) if r >= 0 else 0)
                w = self.ctask.wall_s[cid, col]
                wall += float(w[checkpoint]) - (float(w[r]) if r >= 0 else 0.0)
        return steps, wall

    def affordable(self, runs: list[tuple[int, int]], checkpoint: int) -> bool:
        """Whether the budgets allow taking all of ``runs`` to ``checkpoint``."""
        steps, wall = self.cost(runs, checkpoint)
        return self._fits(steps, wall)

    def _fits(self, steps: int, wall: float) -> bool:
        ok_steps = self.budget_steps is None or self.steps_used + steps <= self.budget_steps
        ok_wall = self.budget_wall is None or self.wall_used + wall <= self.budget_wall
        return ok_steps and ok_wall

    def _check(self, checkpoint: int) -> None:
        last = self.ctask.n_checkpoints - 1
        if not 0 <= int(checkpoint) <= last:
            raise ValueError(f"checkpoint={checkpoint} must lie in 0..{last} (an index into "
                             "the table's checkpoints)")

    def advance(self, config_id: int, column: int, checkpoint: int) -> Observation:
        """Take one run to ``checkpoint`` (or read it there, if it has passed it), charging
        the steps and wall time it consumes.

        Raises
        ------
        BudgetExhausted
            If that would exceed a budget (nothing is charged then).
        """
        steps, wall = self.cost([(config_id, column)], checkpoint)
        if not self._fits(steps, wall):
            raise BudgetExhausted(f"run ({config_id}, column {column}) to checkpoint "
                                  f"{checkpoint} costs {steps} steps / {wall:.3g} s; "
                                  f"left: {self.steps_left} steps")
        self.steps_used += steps
        self.wall_used += wall
        self._reached[config_id, column] = max(int(self._reached[config_id, column]),
                                               int(checkpoint))
        last = self.ctask.n_checkpoints - 1
        return Observation(config_id=int(config_id), column=int(column),
                           seed=int(self.ctask.task.seeds[column]), checkpoint=int(checkpoint),
                           step=int(self.ctask.steps[checkpoint]),
                           value=float(self.ctask.curves[config_id, column, checkpoint]),
                           final=int(checkpoint) == last)

    def advance_all(self, config_id: int, columns: list[int],
                    checkpoint: int) -> Iterator[Observation] | None:
        """Take every run ``columns`` of ``config_id`` to ``checkpoint``, or none of them:
        None, nothing charged, when the budgets do not allow all of them. Otherwise the runs
        advance one per item taken from the iterator (:meth:`advance`), so that a
        :class:`StepTrace` records the steps spent after each."""
        if not self.affordable([(config_id, col) for col in columns], checkpoint):
            return None
        return (self.advance(config_id, col, checkpoint) for col in columns)

    @property
    def steps_left(self) -> int | None:
        """Training steps left in the budget (None: no limit)."""
        return None if self.budget_steps is None else int(self.budget_steps - self.steps_used)


class StepTrace:
    """A method's trace against steps: one row per observation (:data:`STEP_TRACE_COLUMNS`).

    Parameters
    ----------
    replay : PartialReplay
        Read for the steps and wall time spent after each observation.
    """

    def __init__(self, replay: PartialReplay) -> None:
        self._replay = replay
        self._task = replay.ctask.task
        self._rows: list[list[object]] = []
        self._mean_mv = float(np.mean(self._task.mv))

    def add(self, obs: Observation, incumbent: int | None) -> None:
        """Record ``obs`` (just charged) and the recommendation after it (None: none yet)."""
        mv = self._mean_mv if incumbent is None else float(self._task.mv[incumbent])
        self._rows.append([len(self._rows) + 1, self._replay.steps_used,
                           self._replay.wall_used, obs.config_id, obs.seed, obs.step,
                           obs.final, obs.value, -1 if incumbent is None else int(incumbent),
                           mv, self._task.mv_star - mv])

    def restate_last(self, incumbent: int | None) -> None:
        """Set the recommendation after the last row (a method that updates it once per
        trial, after the trial's last observation)."""
        if not self._rows or incumbent is None:
            return
        mv = float(self._task.mv[incumbent])
        self._rows[-1][8:11] = [int(incumbent), mv, self._task.mv_star - mv]

    def frame(self) -> pd.DataFrame:
        """The rows as a DataFrame."""
        return pd.DataFrame(self._rows, columns=list(STEP_TRACE_COLUMNS))


def full_run_trace(ctask: CurveTask, trace: pd.DataFrame) -> pd.DataFrame:
    """A full-run method's trace from the existing replay (``TRACE_COLUMNS``: one row per
    training run, its stored seed and the recommendation after it) against steps: every run
    costs :attr:`CurveTask.full_steps` and its own recorded wall time."""
    task = ctask.task
    col_of = {int(s): j for j, s in enumerate(task.seeds)}
    cid = trace["config_id"].to_numpy(dtype=np.int64)
    cols = np.array([col_of[int(s)] for s in trace["seed"]], dtype=np.int64)
    n = len(trace)
    return pd.DataFrame({
        "event": np.arange(1, n + 1),
        "steps": np.arange(1, n + 1, dtype=np.int64) * ctask.full_steps,
        "wall_s": np.cumsum(ctask.wall_s[cid, cols, -1]) if n else np.zeros(0),
        "config_id": cid,
        "seed": trace["seed"].to_numpy(dtype=np.int64),
        "checkpoint_step": np.full(n, ctask.full_steps, dtype=np.int64),
        "final": np.ones(n, dtype=bool),
        "value": ctask.curves[cid, cols, -1] if n else np.zeros(0),
        "incumbent_id": trace["incumbent_id"].to_numpy(dtype=np.int64),
        "incumbent_mv": trace["incumbent_mv"].to_numpy(dtype=float),
        "simple_regret": trace["simple_regret"].to_numpy(dtype=float),
    }, columns=list(STEP_TRACE_COLUMNS))


def normalized_regret(ctask: CurveTask, regret: np.ndarray) -> np.ndarray:
    """Regret in units of the table's average configuration's (1 = average, 0 = best)."""
    return np.asarray(regret, dtype=float) / max(ctask.init_regret, 1e-12)


def regret_at_steps(ctask: CurveTask, trace: pd.DataFrame, steps: np.ndarray) -> np.ndarray:
    """Normalized regret of the recommendation after ``steps`` training steps (each grid
    value: the last observation within it; before any, the table's average configuration,
    1). A trace that ended earlier keeps its last recommendation."""
    return step_curve(trace["steps"].to_numpy(dtype=float),
                      normalized_regret(ctask, trace["simple_regret"].to_numpy(dtype=float)),
                      steps)


def step_curve(spent: np.ndarray, regret: np.ndarray, steps: np.ndarray) -> np.ndarray:
    """``regret (n,)`` recorded after ``spent (n,)`` steps (non-decreasing), read at
    ``steps``: the value of the last row within each, 1 before the first row."""
    grid = np.asarray(steps, dtype=float)
    spent = np.asarray(spent, dtype=float)
    regret = np.asarray(regret, dtype=float)
    if regret.size == 0:
        return np.ones(grid.shape)
    idx = np.searchsorted(spent, grid, side="right") - 1  # last row with steps <= grid
    return np.where(idx >= 0, regret[np.maximum(idx, 0)], 1.0)
