"""How strong a task's mean-variance trade-off is, measured the way the benchmark sees it.

:func:`tradeoff_alpha` is the smallest risk aversion at which the best-mean configuration
stops being MV-optimal; :func:`tradeoff_stats` reports it with the regret an optimizer starts
from (after the paper's initial design) and the gap between the best-mean and the MV-optimal
configurations, on the task's processed returns (``erahbo dataset inspect``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from erahbo.datasets.format import TaskData
from erahbo.datasets.groundtruth import ground_truth
from erahbo.space import SearchSpace

__all__ = ["ILL_CONDITIONED", "NEAR_OPTIMAL", "TradeoffStats", "near_optimal_share",
           "tradeoff_alpha", "tradeoff_stats"]

#: A configuration within this share of the MV range of the optimum is "near-optimal".
NEAR_OPTIMAL = 0.01
#: Above this share of near-optimal configurations, normalized regret is ill-conditioned.
ILL_CONDITIONED = 0.5


@dataclass(frozen=True)
class TradeoffStats:
    """How much a risk-neutral choice loses on one task (see :func:`tradeoff_stats`).

    Attributes
    ----------
    task : str
        Task name.
    n_configs, n_infeasible : int
        Feasible configurations (after the NaN filter) and filtered ones.
    best_mean_rank : int
        Rank by true MV of the configuration with the best mean (1 = it is the MV optimum).
    best_mean_regret : float
        Its MV regret normalized by the MV spread, ``(MV* - MV) / (MV* - median MV)``.
    corr_mean_std : float
        Pearson correlation of the per-configuration mean and standard deviation.
    init_regret : float
        Mean over ``n_designs`` Sobol initial designs of the normalized MV regret of the
        best configuration in the design (0 would mean the design already finds MV*).
    alpha_tradeoff : float
        The smallest risk aversion at which the best-mean configuration is no longer the MV
        optimum (on the processed scale): ``min (m_b - m_j) / (v_b - v_j)`` over the
        configurations ``j`` with a smaller variance than the best-mean one ``b``; inf when
        none has (then no alpha trades mean for spread on this table).
    near_optimal_share : float
        Share of the configurations whose MV is within ``NEAR_OPTIMAL`` (1 %) of the MV range
        ``MV* - min MV`` of the optimum. Above ``ILL_CONDITIONED`` (one half) most
        configurations tie at the optimum (a sparse-reward task at a high alpha, where a
        configuration that never learns, with no spread, is MV-optimal): regret normalized
        by the average configuration (the benchmark's unit) is then ill-conditioned, a small
        difference in MV is a large normalized regret.
    """

    task: str
    n_configs: int
    n_infeasible: int
    best_mean_rank: int
    best_mean_regret: float
    corr_mean_std: float
    init_regret: float
    alpha_tradeoff: float = math.inf
    near_optimal_share: float = 0.0

    @property
    def ill_conditioned(self) -> bool:
        """Whether most configurations tie at the MV optimum (``near_optimal_share``)."""
        return self.near_optimal_share > ILL_CONDITIONED


def near_optimal_share(mv: np.ndarray) -> float:
    """Share of the configurations within ``NEAR_OPTIMAL`` of the MV range of the optimum.

    Parameters
    ----------
    mv : numpy.ndarray
        ``(n,)`` true MV of every configuration.

    Returns
    -------
    float
        ``mean(MV* - MV <= NEAR_OPTIMAL * (MV* - min MV))``; above ``ILL_CONDITIONED`` most
        configurations tie at the optimum and normalized regret is ill-conditioned.

    >>> near_optimal_share(np.array([0.0, 0.0, 0.0, -1.0]))
    0.75
    """
    mv = np.asarray(mv, dtype=float)
    top = float(mv.max())
    return float(np.mean(top - mv <= NEAR_OPTIMAL * (top - float(mv.min()))))


def tradeoff_alpha(mean: np.ndarray, var: np.ndarray) -> float:
    """Smallest ``alpha`` at which ``argmax mean - alpha var`` is not ``argmax mean``.

    ``MV_j - MV_b = (m_j - m_b) + alpha (v_b - v_j)`` is positive exactly when
    ``alpha > (m_b - m_j) / (v_b - v_j)`` for a configuration ``j`` with ``v_j < v_b``.

    Parameters
    ----------
    mean, var : numpy.ndarray
        ``(n,)`` per-configuration mean and variance.

    Returns
    -------
    float
        The threshold (``inf`` if the best-mean configuration has the smallest variance).
    """
    mean, var = np.asarray(mean, dtype=float), np.asarray(var, dtype=float)
    b = int(np.argmax(mean))
    less = var < var[b]
    if not less.any():
        return math.inf
    return float(np.min((mean[b] - mean[less]) / (var[b] - var[less])))


def tradeoff_stats(
    task: TaskData,
    *,
    alpha: float = 1.0,
    outcome_processing: str = "vizier",
    n_init: int = 5,
    n_designs: int = 20,
    seed: int = 0,
) -> TradeoffStats:
    """Risk trade-off of ``task`` as the offline benchmark sees it.

    Same ground truth as the replay benchmark (``erahbo.experiments.replay``): infeasible
    configurations filtered, outcomes processed (Vizier output warping by default), then
    ``MV = mean - alpha * var(ddof=1)`` over all seeds (eq. 1 with the sample variance).
    Initial designs are ``n_init`` configurations picked by
    :meth:`erahbo.space.SearchSpace.sobol_indices`, as the benchmark's repetitions do.

    Parameters
    ----------
    task : TaskData
        Any task (synthetic or real).
    alpha : float
        Risk aversion (the paper: 1 on the warped scale).
    outcome_processing : {"vizier", "none"}
        See :func:`erahbo.datasets.warping.process_outcomes`.
    n_init, n_designs : int
        Size and number of the Sobol initial designs averaged in ``init_regret``.
    seed : int
        Seed of the designs.

    Returns
    -------
    TradeoffStats
    """
    truth = ground_truth(task, alpha=alpha, outcome_processing=outcome_processing)
    clean, report, proc = truth.clean, truth.report, truth.processed
    if clean.n_configs < 2:
        raise ValueError(f"{task.name}: fewer than 2 feasible configurations, no trade-off.")
    mean, mv = truth.mean, truth.mv  # (n,) on the benchmark's scale
    std = np.asarray(proc.returns, dtype=float).std(axis=1, ddof=1)  # (n,)
    mv_star = float(mv.max())
    spread = max(mv_star - float(np.median(mv)), 1e-12)
    best_mean = int(np.argmax(mean))
    spec = proc.meta.get("search_space")
    space = SearchSpace.from_table(proc.configs, spec or None, allow_missing=True)
    n_init = min(int(n_init), clean.n_configs)
    designs = np.random.SeedSequence(seed).generate_state(n_designs)
    init = [mv_star - mv[space.sobol_indices(n_init, int(s))].max() for s in designs]
    corr = float(np.corrcoef(mean, std)[0, 1]) if std.std() > 0 else 0.0
    return TradeoffStats(
        task=task.name,
        n_configs=clean.n_configs,
        n_infeasible=report.n_infeasible,
        best_mean_rank=int((mv > mv[best_mean]).sum()) + 1,
        best_mean_regret=float((mv_star - mv[best_mean]) / spread),
        corr_mean_std=corr,
        init_regret=float(np.mean(init) / spread),
        alpha_tradeoff=tradeoff_alpha(mean, std**2),
        near_optimal_share=near_optimal_share(mv),
    )


# -- model pieces ---------------------------------------------------------------------

# Priors of the generative model (ranges of uniform draws, one draw per task).
