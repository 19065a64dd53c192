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
takes the caller down, and the executor keeps working afterwards. ``timeout="auto"`` is the
automatic limit of executors whose workers can be killed (:class:`AutoTimeout`: ten times the
longest call finished so far, at least 60 s; a day before any finished); the serial executor
runs such calls inline, without a limit.

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

from erahbo.runtime.executor import (
    AUTO,
    AutoTimeout,
    Executor,
    RemoteError,
    RunTimeout,
    WorkerCrashed,
    worker_name,
)
from erahbo.runtime.process import ProcessExecutor, SerialExecutor
from erahbo.runtime.ray_executor import RayExecutor

__all__ = [
    "AUTO",
    "AutoTimeout",
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
