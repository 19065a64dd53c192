"""Local executors: inline (:class:`SerialExecutor`) and a pool of watched worker processes.

:class:`ProcessExecutor` is the embedded default: a pool of ``spawn`` worker processes owned by
this module. ``concurrent.futures.ProcessPoolExecutor`` is not used because one segfaulting task
breaks the whole pool (every pending future fails with ``BrokenProcessPool``) and a single hung
task cannot be killed; here each worker is watched on its own, killed on timeout and replaced.
:class:`SerialExecutor` runs calls inline; a call with a ``timeout`` runs in one isolated child
process instead, so that a hung or crashing objective can be killed.
"""

from __future__ import annotations

import atexit
import collections
import concurrent.futures as cf
import contextlib
import multiprocessing
import multiprocessing.connection as mpc
import os
import pickle
import signal
import sys
import threading
import time
import traceback
import weakref
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from erahbo.runtime.executor import (
    AUTO,
    AutoTimeout,
    Executor,
    RemoteError,
    RemoteTraceback,
    RunTimeout,
    WorkerCrashed,
    check_timeout,
    signal_name,
    worker_name,
)
from erahbo.runtime.main_guard import (
    MAIN_REIMPORT_EXIT,
    WORKER_NAME,
    MainGuardMissing,
    main_script,
    refuse_in_worker_start,
)

__all__ = ["ProcessExecutor", "SerialExecutor"]


# --------------------------------------------------------------------------------------------
# Worker side (runs in the child process)
# --------------------------------------------------------------------------------------------


def _set_parent_death_signal() -> None:
    """Linux: have the kernel SIGKILL this worker when its parent dies (e.g. is SIGKILLed).

    Without it, a training run in flight when the study process is killed would keep running as
    an orphan. Best effort elsewhere: the worker also exits when its pipe closes.
    """
    if not sys.platform.startswith("linux"):
        return
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        pr_set_pdeathsig = 1
        libc.prctl(pr_set_pdeathsig, signal.SIGKILL, 0, 0, 0)
    except Exception:  # pragma: no cover - best effort
        pass


def _pack_exception(exc: BaseException) -> tuple[bytes | None, str, str]:
    tb = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
    message = f"{type(exc).__name__}: {exc}"
    try:
        data: bytes | None = pickle.dumps(exc)
        pickle.loads(data)
    except Exception:
        data = None
    return data, message, tb


def _unpack_exception(data: bytes | None, message: str, tb: str) -> BaseException:
    exc: BaseException
    if data is not None:
        try:
            exc = pickle.loads(data)
        except Exception:
            exc = RemoteError(message, tb)
    else:
        exc = RemoteError(message, tb)
    exc.__cause__ = RemoteTraceback(tb)
    return exc


def _block_sigint_for_children(ctx: Any) -> None:
    """Processes this thread starts next begin with SIGINT blocked (a Ctrl-C is for the study).

    A Ctrl-C in the terminal goes to every process of the foreground group; a worker still
    booting (importing) would die of it with a ``KeyboardInterrupt`` traceback on the
    terminal. The signal mask of the starting thread is inherited through fork and exec, so
    the worker boots with SIGINT pending at most, and drops it when it ignores SIGINT
    (:func:`_worker_main`). Only this (manager) thread blocks SIGINT: the study's main thread
    still gets the Ctrl-C. The resource tracker is started first, because starting it unblocks
    the signals it blocks (bpo-33613) in the calling thread.
    """
    if not hasattr(signal, "pthread_sigmask"):  # pragma: no cover - not POSIX
        return
    if threading.current_thread() is threading.main_thread():  # pragma: no cover
        return  # the study's own thread must keep its Ctrl-C
    if ctx.get_start_method() != "fork":
        from multiprocessing import resource_tracker

        resource_tracker.ensure_running()
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})


_READY = b"ready"  # a worker's first message; every later one is a pickled (ok, value)
_BOOT_GRACE = 120.0  # seconds a new worker may take to boot on top of a call's timeout


def _worker_main(conn: mpc.Connection, parent_pid: int) -> None:
    """Loop of one worker: receive a pickled ``(fn, args)``, send back the outcome."""
    _set_parent_death_signal()
    if os.getppid() != parent_pid:  # parent died before prctl took effect
        return
    # A stray SIGINT (Ctrl-C in the terminal) is for the study process, which shuts us down.
    # It is blocked since the start (_block_sigint_for_children): ignoring it drops one that
    # came while this process booted.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if hasattr(signal, "pthread_sigmask"):
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})
    try:  # booted: timeouts count from here, not from the (slow, under load) process start
        conn.send_bytes(_READY)
    except (EOFError, OSError):
        return
    while True:
        try:
            payload = conn.recv_bytes()
        except (EOFError, OSError):
            return
        if not payload:
            return
        try:
            fn, args = pickle.loads(payload)
            result = fn(*args)
            reply = pickle.dumps((True, result))
        except BaseException as exc:
            reply = pickle.dumps((False, _pack_exception(exc)))
        try:
            conn.send_bytes(reply)
        except (EOFError, OSError):
            return


# --------------------------------------------------------------------------------------------
# ProcessExecutor
# --------------------------------------------------------------------------------------------


@dataclass
class _Task:
    future: cf.Future
    payload: bytes
    timeout: float | str | None  # seconds, AUTO or None


@dataclass
class _Worker:
    process: Any  # multiprocessing.process.BaseProcess
    conn: mpc.Connection
    task: _Task | None = None
    started: float = 0.0  # monotonic start of its call (booting: plus _BOOT_GRACE)
    name: str = field(default="")
    ready: bool = False  # the worker process has booted (sent _READY)


_LIVE_EXECUTORS: weakref.WeakSet = weakref.WeakSet()


@atexit.register
def _shutdown_live_executors() -> None:  # pragma: no cover - runs at interpreter exit
    # before multiprocessing's own exit handler (registered earlier, so run later), which
    # would wait for every worker: a run in flight (after Ctrl-C, or a hung objective) would
    # hold the exit for as long as it lasts, though nothing is left to take its result
    for ex in list(_LIVE_EXECUTORS):
        with contextlib.suppress(Exception):
            ex._kill_all()


class ProcessExecutor(Executor):
    """Local pool of worker processes that survives crashing and hanging calls.

    Parameters
    ----------
    max_workers : int, optional
        Number of worker processes (default ``os.cpu_count()``). Workers start lazily, on the
        first calls, and are reused across calls.
    mp_context : {"spawn", "forkserver", "fork"}
        Start method. ``spawn`` (default) is safe with threads and CUDA/JAX in the parent.
    auto_timeout : AutoTimeout, optional
        The limit of calls submitted with ``timeout="auto"`` (default ``AutoTimeout()``: ten
        times the longest call finished so far, at least 60 s).
    """

    def __init__(self, max_workers: int | None = None, *, mp_context: str = "spawn",
                 auto_timeout: AutoTimeout | None = None) -> None:
        refuse_in_worker_start()  # a pool made while a worker re-imports an unguarded script
        if max_workers is None:
            max_workers = os.cpu_count() or 1
        if not isinstance(max_workers, int) or max_workers < 1:
            raise ValueError(f"max_workers must be a positive int, got {max_workers!r}")
        self.max_workers = max_workers
        self.auto_timeout = AutoTimeout() if auto_timeout is None else auto_timeout
        self._ctx = multiprocessing.get_context(mp_context)
        self._lock = threading.Lock()
        self._queue: collections.deque[_Task] = collections.deque()
        self._workers: list[_Worker] = []
        self._shutdown = False
        self._thread: threading.Thread | None = None
        self._wake_r, self._wake_w = mpc.Pipe(duplex=False)
        _LIVE_EXECUTORS.add(self)

    # -- public API ---------------------------------------------------------------------------

    def submit(
        self, fn: Callable[..., Any], /, *args: Any, timeout: float | str | None = None
    ) -> cf.Future:
        check_timeout(timeout)
        future: cf.Future = cf.Future()
        try:
            payload = pickle.dumps((fn, args))
        except Exception as exc:
            raise TypeError(
                f"cannot send {getattr(fn, '__qualname__', fn)!r} to a worker process: {exc}. "
                "Use a module-level function and picklable arguments, or SerialExecutor."
            ) from exc
        with self._lock:
            if self._shutdown:
                raise RuntimeError("cannot submit to an executor that was shut down")
            self._queue.append(_Task(future, payload, timeout))
            if self._thread is None:
                self._thread = threading.Thread(
                    target=self._manage, name="erahbo-process-executor", daemon=True
                )
                self._thread.start()
        self._wake()
        return future

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        """Stop accepting calls; running and queued calls still finish (unless cancelled).

        With ``wait=True`` this returns once every call has finished and the workers exited.
        """
        with self._lock:
            self._shutdown = True
            if cancel_futures:
                while self._queue:
                    self._queue.popleft().future.cancel()
            thread = self._thread
        self._wake()
        if thread is None:
            self._close_pipe()
        elif wait and thread is not threading.current_thread():
            thread.join()

    def _kill_all(self) -> None:
        """Cancel queued calls and kill every worker (at interpreter exit); running calls
        fail with :class:`WorkerCrashed`."""
        with self._lock:
            self._shutdown = True
            while self._queue:
                self._queue.popleft().future.cancel()
            workers = list(self._workers)
        for w in workers:
            with contextlib.suppress(Exception):
                w.process.kill()
        for w in workers:
            with contextlib.suppress(Exception):
                w.process.join(timeout=5)
        self._wake()

    def _close_pipe(self) -> None:
        for conn in (self._wake_r, self._wake_w):
            with contextlib.suppress(OSError):
                conn.close()

    # -- manager thread -----------------------------------------------------------------------

    def _wake(self) -> None:
        with contextlib.suppress(OSError, ValueError):
            self._wake_w.send_bytes(b"x")

    def _spawn_worker(self) -> _Worker:
        parent, child = self._ctx.Pipe(duplex=True)
        proc = self._ctx.Process(
            target=_worker_main, args=(child, os.getpid()), name=WORKER_NAME
        )
        _block_sigint_for_children(self._ctx)
        proc.start()
        child.close()
        w = _Worker(process=proc, conn=parent, name=worker_name(proc.pid))
        self._workers.append(w)
        return w

    def _retire(self, w: _Worker, *, kill: bool) -> None:
        if kill and w.process.is_alive():
            w.process.kill()
        w.process.join(timeout=5)
        with contextlib.suppress(OSError):
            w.conn.close()
        with contextlib.suppress(ValueError):
            self._workers.remove(w)

    def _close_workers(self, *, kill: bool) -> None:
        for w in list(self._workers):
            if w.task is None and not kill:
                with contextlib.suppress(OSError):
                    w.conn.send_bytes(b"")
            self._retire(w, kill=kill or w.task is not None)

    def _dispatch(self) -> None:
        """Hand queued tasks to idle (or new) workers. Called with the lock held."""
        while self._queue:
            idle = next((w for w in self._workers if w.task is None), None)
            if idle is None and len(self._workers) < self.max_workers:
                try:
                    idle = self._spawn_worker()
                except Exception as exc:  # cannot start a worker: fail the task, never hang
                    task = self._queue.popleft()
                    if task.future.set_running_or_notify_cancel():
                        task.future.set_exception(
                            RuntimeError(f"could not start a worker process: {exc}")
                        )
                    continue
            if idle is None:
                return
            task = self._queue.popleft()
            if not task.future.set_running_or_notify_cancel():
                continue  # cancelled while queued
            try:
                idle.conn.send_bytes(task.payload)
            except OSError:  # the idle worker died meanwhile
                detail = signal_name(idle.process.exitcode)
                self._retire(idle, kill=True)
                task.future.set_exception(WorkerCrashed(detail, idle.name))
                continue
            idle.task = task
            # a booting worker restarts the clock when it is ready
            idle.started = time.monotonic() + (0.0 if idle.ready else _BOOT_GRACE)

    def _limit(self, task: _Task) -> float:
        if task.timeout is None:
            return float("inf")
        return self.auto_timeout.limit() if task.timeout == AUTO else float(task.timeout)

    def _deadline(self, w: _Worker) -> float:
        """When the call of ``w`` times out (an automatic limit is read afresh)."""
        return float("inf") if w.task is None else w.started + self._limit(w.task)

    def _manage(self) -> None:
        try:
            self._manage_loop()
        except BaseException as exc:  # an internal bug must not leave callers waiting forever
            with self._lock:
                self._shutdown = True
                self._thread = None
                pending = [t for t in self._queue] + [
                    w.task for w in self._workers if w.task is not None
                ]
                self._queue.clear()
            for t in pending:
                if not t.future.done():
                    t.future.set_exception(RuntimeError(f"ProcessExecutor failed: {exc!r}"))
            self._close_workers(kill=True)
            raise

    def _manage_loop(self) -> None:
        while True:
            with self._lock:
                self._dispatch()
                busy = [w for w in self._workers if w.task is not None]
                if self._shutdown and not busy and not self._queue:
                    self._thread = None
                    self._close_pipe()
                    break
            now = time.monotonic()
            wait_for = min((self._deadline(w) for w in busy), default=float("inf")) - now
            handles: list[Any] = [self._wake_r]
            for w in busy:
                handles += [w.conn, w.process.sentinel]
            ready = mpc.wait(
                handles, timeout=None if wait_for == float("inf") else max(0, wait_for)
            )
            if self._wake_r in ready:
                while self._wake_r.poll():
                    self._wake_r.recv_bytes()
            for w in busy:
                self._check_worker(w, ready)
        self._close_workers(kill=False)

    def _check_worker(self, w: _Worker, ready: list[Any]) -> None:
        task = w.task
        assert task is not None
        if w.conn in ready:
            try:
                data = w.conn.recv_bytes()
                if data == _READY:
                    w.ready = True
                    w.started = time.monotonic()
                    return
                ok, value = pickle.loads(data)
            except (EOFError, OSError):
                pass  # died without answering: handled as a crash below
            except Exception as exc:  # result could not be unpickled here
                w.task = None
                task.future.set_exception(exc)
                return
            else:
                w.task = None
                self.auto_timeout.observe(time.monotonic() - w.started)  # it answered
                if ok:
                    task.future.set_result(value)
                else:
                    task.future.set_exception(_unpack_exception(*value))
                return
        if w.conn in ready or w.process.sentinel in ready:
            w.process.join(timeout=5)
            code = w.process.exitcode
            with self._lock:
                self._retire(w, kill=True)
            if code == MAIN_REIMPORT_EXIT and not w.ready:  # re-ran an unguarded script
                task.future.set_exception(MainGuardMissing(main_script()))
            else:
                task.future.set_exception(WorkerCrashed(signal_name(code), w.name))
            return
        limit = self._limit(task)
        if time.monotonic() >= w.started + limit:
            with self._lock:
                self._retire(w, kill=True)
            rule = self.auto_timeout.rule() if task.timeout == AUTO else ""
            task.future.set_exception(RunTimeout(limit, w.name, rule))


# --------------------------------------------------------------------------------------------
# SerialExecutor
# --------------------------------------------------------------------------------------------


class SerialExecutor(Executor):
    """Runs each call inline, at submission; the returned future is already done.

    A call submitted with a ``timeout`` in seconds runs in one isolated child process instead
    (started on first need and reused), so that it can be killed; a crash there gives
    :class:`WorkerCrashed`. ``timeout="auto"`` runs inline without a limit: a call in this
    process cannot be stopped safely (no ``auto_timeout``).
    """

    max_workers = 1

    def __init__(self) -> None:
        self._isolated: ProcessExecutor | None = None

    def submit(
        self, fn: Callable[..., Any], /, *args: Any, timeout: float | str | None = None
    ) -> cf.Future:
        check_timeout(timeout)
        if timeout is not None and timeout != AUTO:
            if self._isolated is None:
                self._isolated = ProcessExecutor(max_workers=1)
            inner = self._isolated.submit(fn, *args, timeout=timeout)
            cf.wait([inner])
            return inner
        future: cf.Future = cf.Future()
        future.set_running_or_notify_cancel()
        try:
            future.set_result(fn(*args))
        except BaseException as exc:
            if isinstance(exc, KeyboardInterrupt | SystemExit):
                raise
            future.set_exception(exc)
        return future

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        if self._isolated is not None:
            self._isolated.shutdown(wait=wait, cancel_futures=cancel_futures)
            self._isolated = None
