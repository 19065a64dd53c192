"""Choosing a configuration while others are still being trained (``n_parallel > 1``).

Beyond the paper, which evaluates one configuration at a time.  With several configurations in
flight, the next one is chosen on the *kriging believer* model (Ginsbourger et al., 2010): every
pending configuration that has no data yet is added to ``D_{t-1}`` as if its seeds had returned
what the models expect, ``ybar = mu_f(x)`` and ``s2 = mu_var(x)`` with ``k`` its pending seeds.
The posterior means stay put while the uncertainty around the pending points collapses, so
``UCB_f - alpha LCB_var`` moves to other regions instead of proposing the same point twice.
Pending configurations themselves are never proposed again while they run.

The fantasies serve the choice only: ``B_t``, ERAHBO's stopping rule and the recommendation use
the real data.  :func:`drive` is the loop that keeps ``n_parallel`` trials in flight.
"""

from __future__ import annotations

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
    before_ask: Callable[[], None] | None = None,
) -> None:
    """Ask, evaluate and tell until ``opt`` asks nothing more, ``opt.n_parallel`` trials at once.

    Sequential (in the calling thread) when ``opt.n_parallel == 1``. Otherwise up to
    ``n_parallel`` trials are evaluated at once in threads (``evaluate`` typically hands the
    seeds to a process pool, Ray or ARLBench workers); every finished trial is told at once, in
    the calling thread (results that finish together: in the order they were asked), and
    the freed slots are asked again. The order of the tells depends on which trial finishes
    first, so parallel studies are not reproducible run to run; a journal records that order
    and resumes exactly.

    Parameters
    ----------
    opt : Optimizer
        Anything with ``ask()``, ``n_parallel`` and ``n_pending``.
    evaluate : callable
        ``evaluate(trial) -> result`` (runs in a worker thread when ``n_parallel > 1``).
    tell : callable
        ``tell(trial, result)``, called in the calling thread.
    before_ask : callable, optional
        Called before every ask (e.g. a check that the study can go on).
    """
    if opt.n_parallel == 1:
        while True:
            if before_ask is not None:
                before_ask()
            trial = opt.ask()
            if trial is None:
                return
            tell(trial, evaluate(trial))
    pool = ThreadPoolExecutor(max_workers=opt.n_parallel, thread_name_prefix="erahbo-trial")
    running: dict[Future[R], Any] = {}
    try:
        while True:
            while len(running) < opt.n_parallel:
                if before_ask is not None:
                    before_ask()
                trial = opt.ask()
                if trial is None:  # budget spent, or the next choice needs pending results
                    break
                running[pool.submit(evaluate, trial)] = trial
            if not running:
                return
            done, _ = wait(running, return_when=FIRST_COMPLETED)
            for fut in sorted(done, key=lambda f: running[f].trial_id):
                trial = running.pop(fut)
                tell(trial, fut.result())
    finally:
        pool.shutdown(wait=not running, cancel_futures=True)
