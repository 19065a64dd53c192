"""Running a trial's seeds: the study's side of ask/tell (the optimizer only asks and tells).

:func:`run_trial` runs the seeds of a trial that :meth:`erahbo.Optimizer.ask` handed out,
under the optimizer's failure rule (:mod:`erahbo.optimizer.failure`), on an executor
(:mod:`erahbo.runtime.executors`), through the scheduler :func:`erahbo.runtime.evaluate.evaluate`;
:meth:`erahbo.Optimizer.tell_outcome` then tells the result. :func:`erahbo.optimize` and
:func:`erahbo.resume` evaluate every trial so (:mod:`erahbo.study.run`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from erahbo.optimizer.failure import FailurePolicy
from erahbo.optimizer.outcomes import TrialOutcome
from erahbo.optimizer.records import Trial
from erahbo.runtime.evaluate import evaluate
from erahbo.study.journaled import JournaledOptimizer

if TYPE_CHECKING:
    from erahbo.optimizer.core import Optimizer
    from erahbo.runtime.executors import Executor

__all__ = ["run_trial"]


def run_trial(
    opt: Optimizer,
    trial: Trial,
    objective: Callable[..., Any],
    *,
    executor: Executor | None = None,
    run_timeout: float | None = None,
    batch: bool = False,
) -> TrialOutcome:
    """Run the seeds of ``trial`` under ``opt``'s failure policy; tell the result with
    ``opt.tell_outcome(trial, outcome)``.

    :func:`erahbo.runtime.evaluate.evaluate` on the optimizer's failure policy
    (``"penalize"`` when it has none), its penalizer and the values the trial's configuration
    counts so far (a penalty is at most their lowest); a journaled optimizer journals every
    run as it ends (:meth:`JournaledOptimizer.run_trial`). Safe to call from a worker thread
    (``n_parallel > 1``).

    Parameters
    ----------
    opt : Optimizer
        The optimizer that asked ``trial``.
    trial : Trial
        A pending trial of ``opt``.
    objective : callable
        ``objective(config, seed) -> float`` (a batch objective with ``batch=True``).
    executor : Executor, optional
        Where the runs execute (default: inline, in this thread).
    run_timeout : float, optional
        Seconds a run may take before it counts as failed.
    batch : bool
        ``objective`` takes all of the trial's seeds at once.

    Returns
    -------
    TrialOutcome
        Every run and what to tell the optimizer.
    """
    if isinstance(opt, JournaledOptimizer):
        return opt.run_trial(trial, objective, executor=executor, run_timeout=run_timeout,
                             batch=batch)
    return evaluate(objective, trial.config, trial.seeds, opt.failure_policy or FailurePolicy(),
                    run_timeout=run_timeout, executor=executor, penalizer=opt.penalizer,
                    batch=batch, own=opt.own_values(trial))
