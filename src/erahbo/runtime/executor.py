"""The executor interface and the errors of a run that could not finish.

:class:`Executor` is what :mod:`erahbo.runtime.evaluate` and the benchmark submit calls to;
the implementations are in :mod:`erahbo.runtime.process` (inline and process pool) and
:mod:`erahbo.runtime.ray_executor` (Ray), built by :func:`erahbo.runtime.executors.make_executor`.
"""

from __future__ import annotations

import abc
import concurrent.futures as cf
import os
import signal
import socket
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any

__all__ = [
    "Executor",
    "RemoteError",
    "RemoteTraceback",
    "RunTimeout",
    "WorkerCrashed",
    "signal_name",
    "worker_name",
]


# --------------------------------------------------------------------------------------------
# Exceptions
# --------------------------------------------------------------------------------------------


class RunTimeout(TimeoutError):
    """A call exceeded its ``timeout``; the worker running it was killed.

    Attributes
    ----------
    timeout : float
        The limit in seconds.
    worker : str or None
        The worker that was killed (see :func:`worker_name`).
    """

    def __init__(self, timeout: float, worker: str | None = None) -> None:
        super().__init__(f"run exceeded run_timeout={timeout:g} s and was killed")
        self.timeout = timeout
        self.worker = worker

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (self.timeout, self.worker))


class WorkerCrashed(RuntimeError):
    """The worker process running a call died (segfault, OOM kill, ``os._exit``...).

    Attributes
    ----------
    detail : str
        How it died, e.g. ``"killed by signal SIGSEGV"``.
    worker : str or None
        The worker that died.
    """

    def __init__(self, detail: str, worker: str | None = None) -> None:
        super().__init__(f"worker process died: {detail}")
        self.detail = detail
        self.worker = worker

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (self.detail, self.worker))


class RemoteError(RuntimeError):
    """An exception raised in a worker that could not be sent back as itself (not picklable).

    The message is ``"TypeName: message"``; ``remote_traceback`` holds the formatted traceback.
    """

    def __init__(self, message: str, remote_traceback: str = "") -> None:
        super().__init__(message)
        self.remote_traceback = remote_traceback


class RemoteTraceback(Exception):
    """Carries a worker's formatted traceback as the ``__cause__`` of the re-raised error."""

    def __init__(self, tb: str) -> None:
        super().__init__(tb)
        self.tb = tb

    def __str__(self) -> str:
        return self.tb


def worker_name(pid: int | None = None) -> str:
    """Name of a worker as recorded in run histories: ``"host:pid"``."""
    return f"{socket.gethostname()}:{os.getpid() if pid is None else pid}"


def signal_name(exitcode: int | None) -> str:
    if exitcode is None:
        return "unknown exit"
    if exitcode < 0:
        try:
            return f"killed by signal {signal.Signals(-exitcode).name}"
        except ValueError:
            return f"killed by signal {-exitcode}"
    return f"exited with code {exitcode}"


# --------------------------------------------------------------------------------------------
# Interface
# --------------------------------------------------------------------------------------------


class Executor(abc.ABC):
    """Runs calls somewhere and returns futures.

    Subclasses implement :meth:`submit` and :meth:`shutdown`; ``max_workers`` says how many calls
    run at the same time (callers use it to decide how many seeds to submit at once).
    """

    max_workers: int = 1

    @abc.abstractmethod
    def submit(
        self, fn: Callable[..., Any], /, *args: Any, timeout: float | None = None
    ) -> cf.Future:
        """Schedule ``fn(*args)``.

        Parameters
        ----------
        fn : callable
            Must be picklable (a module-level function) for process and Ray executors.
        *args
            Positional arguments, pickled likewise.
        timeout : float, optional
            Wall-clock limit in seconds, counted from the moment the call starts on a worker.
            On expiry the worker is killed and the future raises :class:`RunTimeout`.

        Returns
        -------
        concurrent.futures.Future
            Resolves to ``fn(*args)``, or raises its exception, :class:`RunTimeout` or
            :class:`WorkerCrashed`.
        """

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:  # noqa: B027
        """Release the workers. Safe to call twice."""

    def map_seeds(
        self,
        fn: Callable[[Any, int], Any],
        config: Any,
        seeds: Sequence[int],
        *,
        timeout: float | None = None,
    ) -> list[cf.Future]:
        """Submit ``fn(config, seed)`` for every seed of one round; futures in seed order."""
        return [self.submit(fn, config, int(s), timeout=timeout) for s in seeds]

    def map(
        self,
        fn: Callable[..., Any],
        *iterables: Iterable[Any],
        timeout: float | None = None,
    ) -> Iterator[Any]:
        """Like :func:`map`, concurrently: results in input order; the first error is raised.

        ``timeout`` is the per-call limit (as in :meth:`submit`), not a limit on the iteration.
        """
        futures = [
            self.submit(fn, *args, timeout=timeout) for args in zip(*iterables, strict=False)
        ]

        def results() -> Iterator[Any]:
            try:
                for f in futures:
                    yield f.result()
            finally:
                for f in futures:
                    f.cancel()

        return results()

    def __enter__(self) -> Executor:
        return self

    def __exit__(self, *exc: object) -> None:
        self.shutdown(wait=True)
