"""Ray executor: training runs as Ray tasks (``pip install erahbo[ray]``).

``address="auto"`` joins a running cluster, ``address=None`` starts a local instance on
loopback. Ray is imported when the executor is built, not before.
"""

from __future__ import annotations

import concurrent.futures as cf
import contextlib
import os
import sys
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

from erahbo.runtime.executor import (
    AUTO,
    AutoTimeout,
    Executor,
    RemoteTraceback,
    RunTimeout,
    WorkerCrashed,
    check_timeout,
)

__all__ = ["RayExecutor"]


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
    auto_timeout : AutoTimeout, optional
        The limit of calls submitted with ``timeout="auto"`` (default ``AutoTimeout()``).

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
        auto_timeout: AutoTimeout | None = None,
    ) -> None:
        self.auto_timeout = AutoTimeout() if auto_timeout is None else auto_timeout
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
        self, fn: Callable[..., Any], /, *args: Any, timeout: float | str | None = None
    ) -> cf.Future:
        check_timeout(timeout)
        if self._closed:
            raise RuntimeError("cannot submit to an executor that was shut down")
        ray = self._ray
        ref = self._remote.remote(fn, args)
        out: cf.Future = cf.Future()
        out.set_running_or_notify_cancel()
        timed_out: list[RunTimeout] = []
        timers: list[threading.Timer] = []
        t0 = time.monotonic()
        auto = timeout == AUTO

        def limit() -> float:
            return self.auto_timeout.limit() if auto else float(timeout)  # type: ignore[arg-type]

        def on_timeout() -> None:
            if out.done():
                return
            left = t0 + limit() - time.monotonic()
            if left > 0:  # an automatic limit that grew meanwhile
                arm(left)
                return
            timed_out.append(RunTimeout(limit(), None, self.auto_timeout.rule() if auto else ""))
            with contextlib.suppress(Exception):
                ray.cancel(ref, force=True)

        def arm(seconds: float) -> None:
            # The clock starts at submission: Ray does not tell when a queued task starts. Keep
            # at most max_workers calls in flight so that queueing does not eat the budget.
            timer = threading.Timer(seconds, on_timeout)
            timer.daemon = True
            timers[:] = [timer]
            timer.start()

        if timeout is not None:
            arm(limit())

        def done(inner: cf.Future) -> None:
            for timer in timers:
                timer.cancel()
            if out.done():
                return
            try:
                out.set_result(inner.result())
            except BaseException as exc:
                out.set_exception(timed_out[0] if timed_out else self._translate(exc))
            else:
                self.auto_timeout.observe(time.monotonic() - t0)

        ref.future().add_done_callback(done)
        return out

    def _translate(self, exc: BaseException) -> BaseException:
        rex = self._ray.exceptions
        if isinstance(exc, rex.WorkerCrashedError | rex.TaskCancelledError):
            return WorkerCrashed(
                str(exc).strip().splitlines()[0] if str(exc) else type(exc).__name__
            )
        if isinstance(exc, rex.RayTaskError):
            cause = getattr(exc, "cause", None)
            if isinstance(cause, BaseException):
                cause.__cause__ = RemoteTraceback(str(exc))
                return cause
        return exc

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        if self._closed:
            return
        self._closed = True
        if self._owns_session and self._ray.is_initialized():
            self._ray.shutdown()
