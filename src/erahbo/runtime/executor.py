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
import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any

__all__ = [
    "AUTO",
    "AutoTimeout",
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
    rule : str
        How an automatic limit (``timeout="auto"``) was set (:meth:`AutoTimeout.rule`), or "".
    """

    def __init__(self, timeout: float, worker: str | None = None, rule: str = "") -> None:
        if rule:
            text = (f"run exceeded the automatic run_timeout of {timeout:.3g} s ({rule}) and "
                    "was killed; pass run_timeout=SECONDS for another limit, or None for none")
        else:
            text = f"run exceeded run_timeout={timeout:g} s and was killed"
        super().__init__(text)
        self.timeout = timeout
        self.worker = worker
        self.rule = rule

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (self.timeout, self.worker, self.rule))


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
# The automatic run timeout
# --------------------------------------------------------------------------------------------

AUTO = "auto"  # ``timeout=AUTO``: the executor's automatic limit (AutoTimeout)


class AutoTimeout:
    """The automatic limit of a call (``timeout="auto"``), from the calls finished so far.

    A call may take ``factor`` times as long as the longest call this executor has finished
    (a result or an exception from the objective: not a killed or crashed one), and at least
    ``floor`` seconds; before any call has finished, ``first`` seconds. A run that hangs is
    thus killed (and counts as failed) after ten times the longest training run seen, while
    runs of ordinary and slower configurations pass. The limit is read afresh while a call
    runs, so it grows as longer calls finish.

    Parameters
    ----------
    factor : float
    floor : float
        Seconds.
    first : float
        Seconds, before any call has finished (a day by default).
    """

    def __init__(self, factor: float = 10.0, floor: float = 60.0,
                 first: float = 86400.0) -> None:
        if not (factor >= 1 and floor > 0 and first > 0):
            raise ValueError(f"AutoTimeout(factor={factor!r}, floor={floor!r}, first={first!r}): "
                             "use factor >= 1 and positive floor and first (seconds)")
        self.factor, self.floor, self.first = float(factor), float(floor), float(first)
        self.longest: float | None = None
        self._lock = threading.Lock()

    def observe(self, seconds: float) -> None:
        """A call finished after ``seconds``."""
        with self._lock:
            self.longest = seconds if self.longest is None else max(self.longest, seconds)

    def limit(self) -> float:
        """The current limit in seconds."""
        longest = self.longest
        return self.first if longest is None else max(self.floor, self.factor * longest)

    def rule(self) -> str:
        """How the current limit is set, for messages."""
        if self.longest is None:
            return f"{self.first:g} s before any run of the study finished"
        return (f"{self.factor:g} x the longest finished run of {self.longest:.3g} s, at least "
                f"{self.floor:g} s")


def check_timeout(timeout: Any) -> None:
    """``timeout`` of :meth:`Executor.submit`: None, ``"auto"`` or seconds > 0."""
    if timeout is None or timeout == AUTO:
        return
    if isinstance(timeout, bool) or not isinstance(timeout, int | float) or not timeout > 0:
        raise ValueError(f"timeout must be > 0 seconds, 'auto' or None, got {timeout!r}")


# --------------------------------------------------------------------------------------------
# Interface
# --------------------------------------------------------------------------------------------


class Executor(abc.ABC):
    """Runs calls somewhere and returns futures.

    Subclasses implement :meth:`submit` and :meth:`shutdown`; ``max_workers`` says how many calls
    run at the same time (callers use it to decide how many seeds to submit at once).
    ``auto_timeout`` is the :class:`AutoTimeout` of an executor that runs calls in worker
    processes it can kill (``timeout="auto"``), None for one that cannot (inline: the caller
    passes no limit then).
    """

    max_workers: int = 1
    auto_timeout: AutoTimeout | None = None

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
        timeout : float or "auto", optional
            Wall-clock limit in seconds, counted from the moment the call starts on a worker.
            On expiry the worker is killed and the future raises :class:`RunTimeout`.
            ``"auto"``: the executor's :attr:`auto_timeout` (executors that have one).

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
