"""The one ask/evaluate/tell driver (paper Sec. 3, docs/robustness.md).

:func:`drive` is the loop every caller runs: :func:`erahbo.optimize` and :func:`erahbo.resume`
(:mod:`erahbo.study.run`), the live ARLBench tuning (:func:`erahbo.arlbench.tune.tune`), the
offline benchmark's replay (:mod:`erahbo.experiments.runner`) and the generic journaled loop
:func:`erahbo.study.run.run_journaled`; hooks carry what differs. It knows no storage.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from typing import Any, TypeVar

__all__ = ["drive"]

R = TypeVar("R")


def drive(
    opt: Any,
    evaluate: Callable[[Any], R],
    tell: Callable[[Any, R], None],
    *,
    before_ask: Callable[[], bool | None] | None = None,
    after_ask: Callable[[Any], None] | None = None,
    threads: bool = True,
) -> None:
    """Ask, evaluate and tell until ``opt`` asks nothing more, ``opt.n_parallel`` trials at once.

    Sequential (in the calling thread) when ``opt.n_parallel == 1``. Otherwise up to
    ``n_parallel`` trials are pending at once. With ``threads`` they are evaluated at once in
    threads (``evaluate`` typically hands the seeds to a process pool, Ray or ARLBench
    workers); every finished trial is told at once, in the calling thread (results that finish
    together: in the order they were asked), and the freed slots are asked again. The order of
    the tells then depends on which trial finishes first, so parallel studies are not
    reproducible run to run; a journal records that order and resumes exactly. Without
    ``threads`` (instant evaluations, e.g. a replay of stored returns) the oldest pending trial
    is evaluated and told first: reproducible.

    Parameters
    ----------
    opt : Optimizer
        Anything with ``ask()`` and optionally ``n_parallel`` (default 1).
    evaluate : callable
        ``evaluate(trial) -> result`` (runs in a worker thread when ``threads`` and
        ``n_parallel > 1``).
    tell : callable
        ``tell(trial, result)``, called in the calling thread.
    before_ask : callable, optional
        Called before every ask: raise to abort (e.g. a check that the study can go on), or
        return True to stop asking (e.g. a budget counted elsewhere).
    after_ask : callable, optional
        ``after_ask(trial)`` for every asked trial.
    threads : bool
        Evaluate pending trials concurrently in threads (see above).
    """
    n_parallel = int(getattr(opt, "n_parallel", 1))
    pending: deque[Any] = deque()  # asked, not yet evaluated (FIFO, no threads)
    pool = (ThreadPoolExecutor(max_workers=n_parallel, thread_name_prefix="erahbo-trial")
            if threads and n_parallel > 1 else None)
    running: dict[Future[R], Any] = {}
    try:
        while True:
            while len(running) + len(pending) < n_parallel:
                if before_ask is not None and before_ask():
                    break
                trial = opt.ask()
                if trial is None:  # budget spent, or the next choice needs pending results
                    break
                if after_ask is not None:
                    after_ask(trial)
                if pool is None:
                    pending.append(trial)
                else:
                    running[pool.submit(evaluate, trial)] = trial
            if pool is None:
                if not pending:
                    return
                trial = pending.popleft()
                tell(trial, evaluate(trial))
                continue
            if not running:
                return
            done, _ = wait(running, return_when=FIRST_COMPLETED)
            for fut in sorted(done, key=lambda f: running[f].trial_id):
                trial = running.pop(fut)
                tell(trial, fut.result())
    finally:
        if pool is not None:
            pool.shutdown(wait=not running, cancel_futures=True)
