"""The offline benchmark's ground truth of a task: one definition for every consumer.

Infeasible configurations (a NaN seed) are filtered
(:func:`erahbo.datasets.validate.validate_task`), the returns are processed
(:func:`erahbo.datasets.warping.process_outcomes`; Vizier's output warp by default, as the
paper), and every configuration's true objective is eq. 1 over all its stored seeds, with the
unbiased sample variance:

    MV(x) = mean_s y(x, s) - alpha * var_s y(x, s)      (ddof = 1)

or, for another risk measure over seeds, its ground truth on the same seeds
(:meth:`erahbo.risk.RiskMeasure.truth`: the sample CVaR, quantile, mean - c std).

The replay benchmark (:func:`erahbo.experiments.replay.prepare_task`), the trade-off statistics
(:func:`erahbo.datasets.tradeoff.tradeoff_stats`) and the marks of the mean-vs-std plot
(:func:`erahbo.datasets.inspect.benchmark_optima`) all read it from here.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from erahbo.datasets.format import TaskData
from erahbo.datasets.validate import DegenerateTaskError, ValidationReport, validate_task
from erahbo.datasets.warping import process_outcomes
from erahbo.risk import RiskLike, RiskMeasure, as_risk
from erahbo.validation import check_option

__all__ = ["GroundTruth", "ground_truth", "true_mv"]


def true_mv(returns: np.ndarray, alpha: RiskLike) -> np.ndarray:
    """``MV = mean - alpha * var(ddof=1)`` per row of ``returns`` ``(N, S)`` -> ``(N,)``; with
    a risk measure for ``alpha``, its ground truth (:meth:`erahbo.risk.RiskMeasure.truth`)."""
    return np.asarray(as_risk(alpha).truth(np.asarray(returns, dtype=float)), dtype=float)


@dataclass(frozen=True)
class GroundTruth:
    """A task as the benchmark scores it.

    Attributes
    ----------
    clean : TaskData
        The feasible configurations with their raw returns.
    processed : TaskData
        The same rows, returns processed (the benchmark's scale).
    report : ValidationReport
        What validation filtered.
    mean, mv : numpy.ndarray
        ``(N,)`` mean and true MV (or the true value of the risk measure given) of every
        feasible configuration on the processed scale.
    """

    clean: TaskData
    processed: TaskData
    report: ValidationReport
    mean: np.ndarray
    mv: np.ndarray


def ground_truth(
    task: TaskData, *, alpha: float = 1.0, outcome_processing: str = "vizier",
    measure: RiskMeasure | None = None,
) -> GroundTruth:
    """Validate, process and score ``task`` (see the module docstring); ``measure``: the risk
    measure scored (None: MV with ``alpha``).

    Raises
    ------
    ValueError
        For a negative or non-finite ``alpha``, an unknown processing, or a degenerate task
        (:class:`~erahbo.datasets.validate.DegenerateTaskError`: all configurations score the
        same; the paper skips such tasks).
    """
    check_option("alpha", alpha)
    clean, report = validate_task(task)
    if report.degenerate:
        raise DegenerateTaskError(f"{task.name}: degenerate task skipped: "
                                  + " ".join(report.messages))
    processed = process_outcomes(clean, outcome_processing)
    returns = np.asarray(processed.returns, dtype=float)  # (N, S)
    return GroundTruth(clean, processed, report, returns.mean(axis=1),
                       true_mv(returns, alpha if measure is None else measure))
