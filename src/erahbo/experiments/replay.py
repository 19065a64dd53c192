"""Replay of a tabular RL-outcome task: the offline benchmark's objective (paper Sec. 4).

The candidate set is the task's configurations.  Each training run draws one of the
stored seeds of the chosen configuration *without replacement* (per repetition), so a
configuration gives at most ``S`` runs; once its seeds are used up it leaves the candidate
set for that repetition.

Ground truth: ``MV(x) = mean - alpha * var`` over all ``S`` stored seeds (unbiased variance,
``ddof=1``, as the optimizer's sample variance), on the processed scale (Vizier output
warping by default, as the paper); ``MV* = max_x MV(x)``. A study in another risk measure
(:mod:`erahbo.risk`, ``prepare_task(..., measure=CVaR(q=0.1))``) scores every configuration
by that measure's ground truth on the same seeds (:meth:`erahbo.risk.RiskMeasure.truth`: the
sample CVaR, quantile or mean - c std of its ``S`` stored seeds); the attributes keep their MV
names (``mv``, ``mv_star``) and hold the measure's values.
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from erahbo.datasets.format import TaskData
from erahbo.datasets.groundtruth import ground_truth
from erahbo.datasets.validate import ValidationReport
from erahbo.risk import MeanVariance, RiskMeasure
from erahbo.space import SearchSpace


@dataclass
class ReplayTask:
    """A validated, processed task ready for replay.

    Attributes
    ----------
    name, domain : str
        Task name and domain used to group results (``cc``, ``brax``, ``xland``; synthetic
        tasks use their ``domain_like`` metadata).
    configs : pandas.DataFrame
        ``(N, n_hp)`` feasible configurations (the candidate table).
    returns : numpy.ndarray
        ``(N, S)`` processed per-seed returns.
    seeds : list of int
        Stored seed labels, the columns of ``returns``.
    mv : numpy.ndarray
        ``(N,)`` true MV of every configuration (the study's risk measure's ground truth:
        :attr:`risk`).
    alpha : float
        Risk aversion used for ``mv`` (MV; unused by another measure).
    space : SearchSpace
        Finite search space over ``configs``.
    meta : dict
        Task metadata (with ``validation`` and ``outcome_processing``).
    """

    name: str
    domain: str
    configs: pd.DataFrame
    returns: np.ndarray
    seeds: list[int]
    mv: np.ndarray
    alpha: float
    space: SearchSpace
    meta: dict[str, Any] = field(default_factory=dict)
    report: ValidationReport | None = None
    measure: RiskMeasure | None = None

    @property
    def risk(self) -> RiskMeasure:
        """The risk measure ``mv`` is the ground truth of (None given: MV with ``alpha``)."""
        return MeanVariance(self.alpha) if self.measure is None else self.measure

    @property
    def mv_star(self) -> float:
        """``MV* = max_x MV(x)`` over the candidate table."""
        return float(np.max(self.mv))

    @property
    def n_configs(self) -> int:
        """Number of feasible configurations in the replay."""
        return int(self.returns.shape[0])

    @property
    def n_seeds(self) -> int:
        """Number of stored seeds per configuration."""
        return int(self.returns.shape[1])

    def stable_id(self) -> int:
        """A seed component derived from the task name (stable across processes and runs)."""
        return zlib.crc32(self.name.encode())


def prepare_task(
    task: TaskData, *, alpha: float = 1.0, outcome_processing: str = "vizier",
    measure: RiskMeasure | None = None,
) -> ReplayTask:
    """Validate (NaN policy), process outcomes and compute the ground truth of ``task``:
    MV with ``alpha``, or the risk measure ``measure`` (:mod:`erahbo.risk`) on the same seeds.

    Raises
    ------
    ValueError
        If the task is degenerate (all configurations score the same): the paper skips such
        tasks (``dqn_xland_doorkey``); the message says so.
    """
    truth = ground_truth(task, alpha=alpha, outcome_processing=outcome_processing,
                         measure=measure)
    processed = truth.processed
    meta = dict(processed.meta)
    domain = str(meta.get("domain", "unknown"))
    if domain == "synthetic":
        domain = str(meta.get("domain_like", "synthetic"))
    spec = meta.get("search_space")
    # (datasets record inactive conditional hyperparameters as empty cells)
    space = SearchSpace.from_table(processed.configs, spec or None, allow_missing=True)
    return ReplayTask(
        name=processed.name,
        domain=domain,
        configs=processed.configs,
        returns=np.asarray(processed.returns, dtype=float),
        seeds=list(processed.seeds),
        mv=truth.mv,
        alpha=float(alpha),
        space=space,
        meta=meta,
        report=truth.report,
        measure=measure,
    )


class SeedReplay:
    """Stored seeds of every configuration, drawn without replacement for one repetition.

    The draw order is a random permutation per configuration that depends only on
    ``(task, seed, repetition)``, so every method of a repetition sees the same outcome for
    the j-th run of a configuration (common random numbers).

    Parameters
    ----------
    task : ReplayTask
    seed, repetition : int
    """

    def __init__(self, task: ReplayTask, seed: int, repetition: int) -> None:
        rng = np.random.default_rng([int(seed), int(repetition), task.stable_id(), 11])
        n, s = task.returns.shape
        self._task = task
        self._order = rng.permuted(np.tile(np.arange(s), (n, 1)), axis=1)  # (N, S)
        self._used = np.zeros(n, dtype=np.int64)  # (N,)

    def remaining(self, config_id: int) -> int:
        """Stored seeds of ``config_id`` not yet drawn."""
        return int(self._task.n_seeds - self._used[config_id])

    def draw_columns(self, config_id: int, n: int) -> list[int]:
        """Draw up to ``n`` runs of ``config_id``: their columns in the task's ``returns``
        (the stored seeds in this repetition's order, as :meth:`draw` takes them)."""
        start = int(self._used[config_id])
        cols = self._order[config_id, start : start + n]
        self._used[config_id] += len(cols)
        return [int(c) for c in cols]

    def draw(self, config_id: int, n: int) -> tuple[list[float], list[int]]:
        """Draw up to ``n`` runs of ``config_id``: (returns, stored seed labels)."""
        cols = self.draw_columns(config_id, n)
        vals = [float(v) for v in self._task.returns[config_id, cols]]
        return vals, [int(self._task.seeds[c]) for c in cols]
