"""Executors: where training runs execute (inline, a local process pool, or a Ray cluster).

One interface serves two jobs:

* the seeds of one BO round run concurrently: ERAHBO asks for ``k_min`` seeds at once, then one
  more at a time while the stopping rule says continue (``Executor.map_seeds``);
* ``erahbo benchmark`` spreads (task, method, repetition) jobs over the workers
  (``Executor.submit`` / ``Executor.map``).

``submit`` returns a :class:`concurrent.futures.Future`. A call that raises gives a future that
raises the same exception (its remote traceback chained as ``__cause__``). Two infrastructure
failures have their own exception types so that callers can record them as failed runs:
:class:`RunTimeout` (the call exceeded ``timeout`` seconds and its worker was killed) and
:class:`WorkerCrashed` (the worker process died, e.g. a segfault in the training code). Neither
takes the caller down, and the executor keeps working afterwards.

Implementations
---------------
:class:`SerialExecutor`
    Runs calls inline, one at a time. A call with a ``timeout`` runs in one isolated child
    process instead, so that a hung or crashing objective can be killed.
:class:`ProcessExecutor`
    The embedded default: a pool of ``spawn`` worker processes owned by this module.
    ``concurrent.futures.ProcessPoolExecutor`` is not used because one segfaulting task breaks
    the whole pool (every pending future fails with ``BrokenProcessPool``) and a single hung task
    cannot be killed; here each worker is watched on its own, killed on timeout and replaced.
:class:`RayExecutor`
    Ray tasks (``pip install erahbo[ray]``). ``address="auto"`` joins a running cluster,
    ``address=None`` starts a local instance on loopback.

>>> with ProcessExecutor(max_workers=2) as ex:          # doctest: +SKIP
...     futures = ex.map_seeds(train, config, [11, 12])
...     returns = [f.result() for f in futures]
"""

from __future__ import annotations

import abc
import atexit
import collections
import concurrent.futures as cf
import contextlib
import multiprocessing
import multiprocessing.connection as mpc
import os
import pickle
import signal
import socket
import sys
import threading
import time
import traceback
import weakref
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "Executor",
    "ProcessExecutor",
    "RayExecutor",
    "RemoteError",
    "RunTimeout",
    "SerialExecutor",
    "WorkerCrashed",
    "make_executor",
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


class _RemoteTraceback(Exception):
    """Carries a worker's formatted traceback as the ``__cause__`` of the re-raised error."""

    def __init__(self, tb: str) -> None:
        super().__init__(tb)
        self.tb = tb

    def __str__(self) -> str:
        return self.tb


def worker_name(pid: int | None = None) -> str:
    """Name of a worker as recorded in run histories: ``"host:pid"``."""
    return f"{socket.gethostname()}:{os.getpid() if pid is None else pid}"


def _signal_name(exitcode: int | None) -> str:
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


def make_executor(
    kind: str | Executor | None = "process",
    *,
    max_workers: int | None = None,
    address: str | None = None,
) -> Executor:
    """Build an executor from a CLI-style name.

    Parameters
    ----------
    kind : {"serial", "process", "ray"} or Executor or None
        An existing executor is returned unchanged; None means "serial".
    max_workers : int, optional
        Concurrent calls (process: default ``os.cpu_count()``; ray: default the cluster's CPUs).
    address : str, optional
        Ray only: ``"auto"`` joins a running cluster, None starts a local one.

    Returns
    -------
    Executor
    """
    if isinstance(kind, Executor):
        return kind
    if kind is None or kind == "serial":
        return SerialExecutor()
    if kind == "process":
        return ProcessExecutor(max_workers=max_workers)
    if kind == "ray":
        return RayExecutor(address=address, max_workers=max_workers)
    raise ValueError(f"executor={kind!r} is not known; use 'serial', 'process' or 'ray'")


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
    exc.__cause__ = _RemoteTraceback(tb)
    return exc


_READY = b"ready"  # a worker's first message; every later one is a pickled (ok, value)
_BOOT_GRACE = 120.0  # seconds a new worker may take to boot on top of a call's timeout


def _worker_main(conn: mpc.Connection, parent_pid: int) -> None:
    """Loop of one worker: receive a pickled ``(fn, args)``, send back the outcome."""
    _set_parent_death_signal()
    if os.getppid() != parent_pid:  # parent died before prctl took effect
        return
    # A stray SIGINT (Ctrl-C in the terminal) is for the study process, which shuts us down.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
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
    timeout: float | None


@dataclass
class _Worker:
    process: Any  # multiprocessing.process.BaseProcess
    conn: mpc.Connection
    task: _Task | None = None
    deadline: float = float("inf")
    name: str = field(default="")
    ready: bool = False  # the worker process has booted (sent _READY)


_LIVE_EXECUTORS: weakref.WeakSet = weakref.WeakSet()


@atexit.register
def _shutdown_live_executors() -> None:  # pragma: no cover - runs at interpreter exit
    for ex in list(_LIVE_EXECUTORS):
        with contextlib.suppress(Exception):
            ex.shutdown(wait=False, cancel_futures=True)


class ProcessExecutor(Executor):
    """Local pool of worker processes that survives crashing and hanging calls.

    Parameters
    ----------
    max_workers : int, optional
        Number of worker processes (default ``os.cpu_count()``). Workers start lazily, on the
        first calls, and are reused across calls.
    mp_context : {"spawn", "forkserver", "fork"}
        Start method. ``spawn`` (default) is safe with threads and CUDA/JAX in the parent.
    """

    def __init__(self, max_workers: int | None = None, *, mp_context: str = "spawn") -> None:
        if max_workers is None:
            max_workers = os.cpu_count() or 1
        if not isinstance(max_workers, int) or max_workers < 1:
            raise ValueError(f"max_workers must be a positive int, got {max_workers!r}")
        self.max_workers = max_workers
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
        self, fn: Callable[..., Any], /, *args: Any, timeout: float | None = None
    ) -> cf.Future:
        if timeout is not None and not timeout > 0:
            raise ValueError(f"timeout must be > 0 seconds or None, got {timeout!r}")
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
            target=_worker_main, args=(child, os.getpid()), name="erahbo-worker"
        )
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
                detail = _signal_name(idle.process.exitcode)
                self._retire(idle, kill=True)
                task.future.set_exception(WorkerCrashed(detail, idle.name))
                continue
            idle.task = task
            idle.deadline = (  # a booting worker restarts the clock when it is ready
                float("inf")
                if task.timeout is None
                else time.monotonic() + task.timeout + (0.0 if idle.ready else _BOOT_GRACE)
            )

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
            wait_for = min((w.deadline for w in busy), default=float("inf")) - now
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
                    if task.timeout is not None:
                        w.deadline = time.monotonic() + task.timeout
                    return
                ok, value = pickle.loads(data)
            except (EOFError, OSError):
                pass  # died without answering: handled as a crash below
            except Exception as exc:  # result could not be unpickled here
                w.task, w.deadline = None, float("inf")
                task.future.set_exception(exc)
                return
            else:
                w.task, w.deadline = None, float("inf")
                if ok:
                    task.future.set_result(value)
                else:
                    task.future.set_exception(_unpack_exception(*value))
                return
        if w.conn in ready or w.process.sentinel in ready:
            w.process.join(timeout=5)
            detail = _signal_name(w.process.exitcode)
            with self._lock:
                self._retire(w, kill=True)
            task.future.set_exception(WorkerCrashed(detail, w.name))
            return
        if time.monotonic() >= w.deadline:
            with self._lock:
                self._retire(w, kill=True)
            assert task.timeout is not None
            task.future.set_exception(RunTimeout(task.timeout, w.name))


# --------------------------------------------------------------------------------------------
# SerialExecutor
# --------------------------------------------------------------------------------------------


class SerialExecutor(Executor):
    """Runs each call inline, at submission; the returned future is already done.

    A call submitted with a ``timeout`` runs in one isolated child process instead (started on
    first need and reused), so that it can be killed; a crash there gives :class:`WorkerCrashed`.
    """

    max_workers = 1

    def __init__(self) -> None:
        self._isolated: ProcessExecutor | None = None

    def submit(
        self, fn: Callable[..., Any], /, *args: Any, timeout: float | None = None
    ) -> cf.Future:
        if timeout is not None:
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


# --------------------------------------------------------------------------------------------
# RayExecutor
# --------------------------------------------------------------------------------------------


def _import_ray() -> Any:
    try:
        import ray
    except ImportError as exc:
        raise ImportError(
            "executor='ray' needs Ray, which is not installed. Install it with "
            "`pip install erahbo[ray]` (or `pip install ray`), or use executor='process'."
        ) from exc
    return ray


@contextlib.contextmanager
def _local_ray_env(ray: Any) -> Iterator[None]:
    """Environment for starting a private local Ray instance.

    * Loopback only: Ray replaces 127.0.0.1 by the machine's routable address unless its
      "no cluster" mode is on (env ``RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER=0``, read by the Ray
      processes, and the constant it sets in the driver); with it every Ray server binds to
      127.0.0.1.
    * Workers import what the driver imports: ``PYTHONPATH`` is set to the driver's ``sys.path``
      (a spawned ProcessExecutor worker gets the same), so objectives defined in modules on
      the driver's path unpickle on the workers.
    """
    names = ("PYTHONPATH", "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER")
    saved = {k: os.environ.get(k) for k in names}
    os.environ["PYTHONPATH"] = os.pathsep.join(p for p in sys.path if p)
    os.environ["RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"] = "0"
    consts = getattr(getattr(ray, "_private", None), "ray_constants", None)
    old_flag = getattr(consts, "ENABLE_RAY_CLUSTER", None)
    if consts is not None and old_flag is not None:
        consts.ENABLE_RAY_CLUSTER = False
    try:
        yield
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
        if consts is not None and old_flag is not None:
            consts.ENABLE_RAY_CLUSTER = old_flag


def _ray_call(fn: Callable[..., Any], args: tuple[Any, ...]) -> Any:
    return fn(*args)


class RayExecutor(Executor):
    """Runs calls as Ray tasks, on a local instance or an existing cluster.

    Parameters
    ----------
    address : str, optional
        ``"auto"`` joins the cluster of the current machine (``ray start --head`` ran before),
        ``"ray://host:10001"`` a remote one. None starts a private local instance on loopback
        (127.0.0.1, no dashboard), shut down again by :meth:`shutdown`. If Ray is already
        initialized in this process, that session is used and left running.
    max_workers : int, optional
        How many calls the caller should keep in flight (default: the cluster's CPUs).
    num_cpus : int, optional
        CPUs of the local instance started when ``address`` is None (default 2).
    num_cpus_per_task : float
        Ray resource request per call (default 1).
    init_kwargs : dict, optional
        Extra arguments for ``ray.init``.

    Notes
    -----
    Tasks run with ``max_retries=0``: a crashed run is reported, not silently repeated, so that
    the journal's account of runs stays exact. A timeout cancels the task with ``force=True``,
    which kills its worker process.
    """

    def __init__(
        self,
        address: str | None = None,
        *,
        max_workers: int | None = None,
        num_cpus: int | None = None,
        num_cpus_per_task: float = 1.0,
        init_kwargs: dict[str, Any] | None = None,
    ) -> None:
        ray = _import_ray()
        self._ray = ray
        self._owns_session = False
        if not ray.is_initialized():
            kwargs: dict[str, Any] = {"include_dashboard": False, "configure_logging": False}
            if address is None:
                kwargs.update(num_cpus=num_cpus or 2, _node_ip_address="127.0.0.1")
            else:
                kwargs.update(address=address)
            kwargs.update(init_kwargs or {})
            with _local_ray_env(ray) if address is None else contextlib.nullcontext():
                ray.init(**kwargs)
            self._owns_session = True
        if max_workers is None:
            max_workers = max(1, int(ray.cluster_resources().get("CPU", 1) // num_cpus_per_task))
        self.max_workers = max_workers
        self._remote = ray.remote(_ray_call).options(max_retries=0, num_cpus=num_cpus_per_task)
        self._closed = False

    def submit(
        self, fn: Callable[..., Any], /, *args: Any, timeout: float | None = None
    ) -> cf.Future:
        if self._closed:
            raise RuntimeError("cannot submit to an executor that was shut down")
        ray = self._ray
        ref = self._remote.remote(fn, args)
        out: cf.Future = cf.Future()
        out.set_running_or_notify_cancel()
        timed_out = threading.Event()
        timer: threading.Timer | None = None
        if timeout is not None:

            def on_timeout() -> None:
                timed_out.set()
                with contextlib.suppress(Exception):
                    ray.cancel(ref, force=True)

            # The timer starts at submission: Ray does not tell when a queued task starts. Keep
            # at most max_workers calls in flight so that queueing does not eat the budget.
            timer = threading.Timer(timeout, on_timeout)
            timer.daemon = True
            timer.start()

        def done(inner: cf.Future) -> None:
            if timer is not None:
                timer.cancel()
            if out.done():
                return
            try:
                out.set_result(inner.result())
            except BaseException as exc:
                out.set_exception(self._translate(exc, timeout, timed_out.is_set()))

        ref.future().add_done_callback(done)
        return out

    def _translate(
        self, exc: BaseException, timeout: float | None, timed_out: bool
    ) -> BaseException:
        rex = self._ray.exceptions
        if timed_out and timeout is not None:
            return RunTimeout(timeout)
        if isinstance(exc, rex.WorkerCrashedError | rex.TaskCancelledError):
            return WorkerCrashed(
                str(exc).strip().splitlines()[0] if str(exc) else type(exc).__name__
            )
        if isinstance(exc, rex.RayTaskError):
            cause = getattr(exc, "cause", None)
            if isinstance(cause, BaseException):
                cause.__cause__ = _RemoteTraceback(str(exc))
                return cause
        return exc

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        if self._closed:
            return
        self._closed = True
        if self._owns_session and self._ray.is_initialized():
            self._ray.shutdown()
