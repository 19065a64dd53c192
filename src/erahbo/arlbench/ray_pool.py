"""Dataset generation on a Ray cluster: one Ray actor per core drives its own ARLBench worker.

:class:`RayArlClient` has the interface of :class:`erahbo.arlbench.client.ArlClient` that
:func:`erahbo.arlbench.generate.generate` uses (``ping``, ``train_many``, ``close``), so the
generator, its shards and its resume logic are the same for both: the driver (the process
running ``erahbo dataset generate``) decides which configurations are missing, receives every
configuration's results and writes each shard atomically when its last configuration is back.

Each actor holds an :class:`ArlClient` with one worker subprocess started from the ARLBench
venv *of the actor's node* (``venv`` resolved there; default ``~/.cache/erahbo/arlbench-venv``)
and trains one configuration with all its seeds at a time (JAX compiles once per
configuration). A configuration whose actor is lost (the actor process or its node dies) is
sent again to another actor and its earlier attempt discarded: every configuration is yielded
exactly once. A lost actor is replaced (at most ``max_replacements`` times in all); the run
stops with :class:`~erahbo.arlbench.client.WorkerError` when one configuration lost its actor
``max_attempts`` times or no actor is left, and a later run resumes from the shards written.

Ray is imported only when a :class:`RayArlClient` is created (``pip install erahbo[ray]``).
Every node must have erahbo importable and, for real runs, the ARLBench venv
(``erahbo arlbench setup`` on each node).
"""

from __future__ import annotations

import os
import socket
import threading
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

from erahbo.arlbench.client import ArlClient, RunResult, WorkerError
from erahbo.arlbench.registry import ArlTask, get_task
from erahbo.runtime.executors import RayExecutor

__all__ = ["RayArlClient"]


class _ArlActor:
    """Body of one Ray actor: an :class:`ArlClient` with one worker, created on first use.

    The client is created lazily so that a node without the ARLBench venv answers ``ping``
    with the client's clear :class:`WorkerError` instead of an actor-creation failure.
    """

    def __init__(self, options: dict[str, Any], log_dir: str | None) -> None:
        self._options = options
        self._log_dir = log_dir
        self._client: ArlClient | None = None
        self._lock = threading.Lock()

    def _get(self) -> ArlClient:
        with self._lock:
            if self._client is None:
                log_dir = self._log_dir
                if log_dir is not None:
                    try:
                        Path(log_dir).mkdir(parents=True, exist_ok=True)
                    except OSError:
                        log_dir = None  # no writable log folder on this node: discard stderr
                self._client = ArlClient(1, log_dir=log_dir, **self._options)
            return self._client

    def ping(self) -> dict[str, Any]:
        """The worker's ping answer plus where this actor runs (``node``, ``actor_pid``)."""
        msg = dict(self._get().ping())
        msg.update(node=socket.gethostname(), actor_pid=os.getpid())
        return msg

    def train(
        self, request: dict[str, Any], config: dict[str, Any], seeds: list[int]
    ) -> list[RunResult]:
        """All ``seeds`` of one configuration (never raises for a failed run)."""
        return self._get().train(request, config, seeds)

    def stop(self) -> None:
        """Kill the worker subprocess at once; a ``train`` call in progress then returns.

        Runs concurrently with that call (the actor allows two calls at a time), so a
        configuration in flight does not keep training after the driver stopped.
        """
        with self._lock:
            if self._client is None:
                return
        self._client.kill_workers()


class RayArlClient:
    """ARLBench workers on a Ray cluster, one actor (one worker subprocess) per CPU.

    Parameters
    ----------
    n_workers : int, optional
        Actors to start (default: the cluster's CPUs divided by ``num_cpus_per_worker``).
    address : str, optional
        ``"auto"`` joins the running cluster of this machine (``ray start --head`` ran
        before), ``"ray://host:10001"`` a remote one; None starts a private local Ray
        instance on loopback with ``n_workers`` CPUs (default 2), shut down by :meth:`close`.
        If Ray is already initialized in this process, that session is used and left running.
    venv : path, optional
        ARLBench venv on every node (default: each node's ``~/.cache/erahbo/arlbench-venv``).
    worker_cmd : sequence of str, optional
        Command starting a worker on the nodes; overrides ``venv`` (tests use a fake worker).
    run_timeout_s, compile_timeout_s, restart_every, vectorize_seeds
        As for :class:`ArlClient` (applied inside each actor).
    log_dir : path, optional
        Folder, on each node, for worker stderr (``log_dir/ray-<slot>/worker-0.log``).
    num_cpus_per_worker : float
        Ray CPUs reserved by each actor (default 1: one actor per core).
    max_attempts : int
        Times one configuration may be started on an actor that is then lost.
    max_replacements : int, optional
        Lost actors replaced in all (default ``4 * n_workers``).
    start_timeout_s : float
        Longest wait for an actor to start when no configuration is running (e.g. the
        cluster lost the nodes its actors ran on and has no free CPU).
    init_kwargs : dict, optional
        Extra arguments for ``ray.init``.

    Raises
    ------
    ImportError
        Ray is not installed (the message says how to install it).
    WorkerError
        The cluster at ``address`` cannot be reached.
    """

    def __init__(
        self,
        n_workers: int | None = None,
        *,
        address: str | None = None,
        venv: str | Path | None = None,
        worker_cmd: Sequence[str] | None = None,
        run_timeout_s: float = 600.0,
        compile_timeout_s: float = 300.0,
        restart_every: int = 64,
        log_dir: str | Path | None = None,
        vectorize_seeds: bool = False,
        num_cpus_per_worker: float = 1.0,
        max_attempts: int = 3,
        max_replacements: int | None = None,
        start_timeout_s: float = 600.0,
        init_kwargs: dict[str, Any] | None = None,
    ) -> None:
        if n_workers is not None and n_workers < 1:
            raise ValueError(f"n_workers must be >= 1, got {n_workers}")
        if max_attempts < 1:
            raise ValueError(f"max_attempts must be >= 1, got {max_attempts}")
        try:
            self._session = RayExecutor(
                address,
                num_cpus=n_workers,
                num_cpus_per_task=num_cpus_per_worker,
                init_kwargs={"log_to_driver": False, **(init_kwargs or {})},
            )
        except ImportError:
            raise
        except Exception as e:  # ConnectionError, RuntimeError, ValueError from ray.init
            where = "a local Ray instance" if address is None else f"the Ray cluster at {address!r}"
            why = f"{type(e).__name__}: {str(e).rstrip('. ')}"
            raise WorkerError(
                f"cannot start or reach {where}: {why}. Start a cluster with `ray start --head` "
                "(then --address auto), or leave --address out to start a local instance"
            ) from None
        import ray  # imported by RayExecutor above: installed

        self._ray = ray
        self.n_workers = int(n_workers or self._session.max_workers)
        self.max_attempts = int(max_attempts)
        self.max_replacements = (
            4 * self.n_workers if max_replacements is None else int(max_replacements)
        )
        self.start_timeout_s = float(start_timeout_s)
        self._options: dict[str, Any] = {
            "venv": None if venv is None else str(venv),
            "worker_cmd": None if worker_cmd is None else list(worker_cmd),
            "run_timeout_s": float(run_timeout_s),
            "compile_timeout_s": float(compile_timeout_s),
            "restart_every": int(restart_every),
            "vectorize_seeds": bool(vectorize_seeds),
        }
        self._log_dir = None if log_dir is None else str(log_dir)
        self._actor_cls = ray.remote(
            num_cpus=num_cpus_per_worker, max_restarts=0, max_concurrency=2
        )(_ArlActor)
        self._actors: dict[int, Any] = {}  # slot -> handle, started and answering
        self._starting: dict[Any, int] = {}  # ping ref -> slot of an actor not ready yet
        self._pending: dict[int, Any] = {}  # slot -> handle of an actor not ready yet
        self._idle: deque[int] = deque()
        self._abandoned: dict[Any, int] = {}  # ref -> slot: calls of a train_many closed early
        self._next_slot = 0
        self.versions: dict[str, Any] | None = None
        self.nodes: dict[int, str] = {}  # slot -> node host name
        self.restarts = 0  # actors replaced after a loss
        self.reruns = 0  # configurations sent again after their actor was lost
        self._closed = False

    # -- actors ----------------------------------------------------------------------------
    def _spawn(self) -> None:
        slot = self._next_slot
        self._next_slot += 1
        log = None if self._log_dir is None else str(Path(self._log_dir) / f"ray-{slot}")
        actor = self._actor_cls.remote(self._options, log)
        self._pending[slot] = actor
        self._starting[actor.ping.remote()] = slot

    def _ensure_started(self) -> None:
        if self._closed:
            raise RuntimeError("RayArlClient was closed")
        while self._next_slot < self.n_workers:
            self._spawn()

    def _on_started(self, ref: Any) -> dict[str, Any] | None:
        """Handle a finished ping; the answer, or None when the new actor was lost."""
        rex = self._ray.exceptions
        slot = self._starting.pop(ref)
        actor = self._pending.pop(slot)
        try:
            msg = self._ray.get(ref)
        except rex.RayTaskError as e:  # the worker could not start (no venv on that node...)
            self._kill(actor)
            cause = getattr(e, "cause", None)
            raise WorkerError(
                f"Ray worker {slot}: {cause if cause is not None else e}"
            ) from None
        except (rex.RayActorError, rex.WorkerCrashedError, rex.ObjectLostError) as e:
            self._lost(slot, actor, e)
            return None
        versions = msg.get("versions", {})
        if self.versions is None:
            self.versions = versions
        elif versions != self.versions:
            self._kill(actor)
            raise WorkerError(
                f"Ray worker {slot} on {msg.get('node')} has other ARLBench package versions "
                f"({versions}) than the first worker ({self.versions}); one table must come "
                "from one software stack: run `erahbo arlbench setup` on every node"
            )
        self._actors[slot] = actor
        self.nodes[slot] = str(msg.get("node"))
        self._idle.append(slot)
        return msg

    def _kill(self, actor: Any) -> None:
        try:
            self._ray.kill(actor, no_restart=True)
        except Exception:  # already gone
            pass

    def _lost(self, slot: int, actor: Any, err: BaseException) -> None:
        """Forget a lost actor and start a replacement while the budget allows."""
        self._actors.pop(slot, None)
        self._kill(actor)
        if self.restarts < self.max_replacements:
            self.restarts += 1
            self._spawn()

    def _wait_ready(self) -> dict[str, Any]:
        while True:
            if not self._starting:
                raise WorkerError("no Ray worker could be started")
            ready, _ = self._ray.wait(
                list(self._starting), num_returns=1, timeout=self.start_timeout_s
            )
            if not ready:
                raise self._no_start_error()
            msg = self._on_started(ready[0])
            if msg is not None:
                return msg

    def _no_start_error(self) -> WorkerError:
        return WorkerError(
            f"no Ray worker started within {self.start_timeout_s:.0f} s: the cluster has no "
            f"free CPU for a new actor ({self._ray.cluster_resources().get('CPU', 0)} CPUs in "
            "all); add nodes or restart the run (finished shards are kept)"
        )

    def ping(self, timeout: float | None = None) -> dict[str, Any]:
        """Start the actors and return the first one's ping answer (``versions``, ``node``).

        Later actors are checked against these versions as they start.
        """
        self._ensure_started()
        if self._actors:
            slot = next(iter(self._actors))
            msg = self._ray.get(self._actors[slot].ping.remote(), timeout=timeout)
            return dict(msg)
        return self._wait_ready()

    # -- training --------------------------------------------------------------------------
    def train_many(
        self,
        task: ArlTask | str | dict[str, Any],
        configs: Sequence[dict[str, Any]],
        seeds: Sequence[int],
        *,
        extra: dict[str, Any] | None = None,
        on_result: Callable[[int, list[RunResult]], None] | None = None,
    ) -> Iterator[tuple[int, list[RunResult]]]:
        """Train every configuration with all ``seeds`` on the actors.

        Yields ``(index into configs, results)`` as configurations finish (any order), each
        index exactly once. Configurations start in their order, one per idle actor; one
        whose actor was lost goes first to the next idle actor.
        """
        ray, rex = self._ray, self._ray.exceptions
        if isinstance(task, str):
            task = get_task(task)
        request = task.worker_request() if isinstance(task, ArlTask) else dict(task)
        request.update(extra or {})
        seeds = [int(s) for s in seeds]
        self._ensure_started()
        todo: deque[int] = deque(range(len(configs)))
        attempts = [0] * len(configs)
        running: dict[Any, tuple[int, int]] = {}  # ref -> (slot, config index)
        done: set[int] = set()
        lost = (rex.RayActorError, rex.WorkerCrashedError, rex.ObjectLostError)
        try:
            while todo or running:
                while todo and self._idle:
                    slot, k = self._idle.popleft(), todo.popleft()
                    if slot not in self._actors:
                        todo.appendleft(k)
                        continue
                    attempts[k] += 1
                    running[self._actors[slot].train.remote(request, configs[k], seeds)] = (slot, k)
                if not running and not self._starting and not self._abandoned:
                    raise WorkerError(
                        f"all Ray workers were lost ({self.restarts} replaced, the most allowed); "
                        f"{len(todo)} configurations not run. Restart the run: finished shards "
                        "are kept"
                    )
                ready, _ = ray.wait(
                    [*running, *self._starting, *self._abandoned],
                    num_returns=1,
                    timeout=None if running or self._abandoned else self.start_timeout_s,
                )
                if not ready:
                    raise self._no_start_error()
                ref = ready[0]
                if ref in self._starting:
                    self._on_started(ref)
                    continue
                if ref in self._abandoned:
                    slot = self._abandoned.pop(ref)
                    try:
                        ray.get(ref)
                        self._idle.append(slot)
                    except lost as e:
                        self._lost(slot, self._actors.get(slot), e)
                    except rex.RayTaskError:
                        self._idle.append(slot)
                    continue
                slot, k = running.pop(ref)
                try:
                    res = ray.get(ref)
                except lost as e:
                    self._lost(slot, self._actors.get(slot), e)
                    if attempts[k] >= self.max_attempts:
                        raise WorkerError(
                            f"configuration {k} lost its Ray worker {attempts[k]} times (last: "
                            f"{type(e).__name__}); stopping. Finished shards are kept; restart "
                            "the run to resume"
                        ) from None
                    self.reruns += 1
                    todo.appendleft(k)
                    continue
                except rex.RayTaskError as e:
                    cause = getattr(e, "cause", None)
                    raise WorkerError(
                        f"Ray worker {slot} failed on configuration {k}: "
                        f"{cause if cause is not None else e}"
                    ) from None
                self._idle.append(slot)
                if k in done:  # pragma: no cover - a configuration is only re-sent after a loss
                    continue
                done.add(k)
                if on_result:
                    on_result(k, res)
                yield k, res
        finally:
            # closed early (an error in the caller): the actors still busy return to the pool
            # when their call ends; the configurations not yielded are not run
            for ref, (slot, _) in running.items():
                self._abandoned[ref] = slot

    # -- shutdown --------------------------------------------------------------------------
    def close(self) -> None:
        """Stop every actor (killing its worker at once) and a local Ray instance we own."""
        if self._closed:
            return
        self._closed = True
        actors = [*self._actors.values(), *self._pending.values()]
        refs = []
        for a in actors:
            try:
                refs.append(a.stop.remote())
            except Exception:
                pass
        if refs:
            try:
                self._ray.wait(refs, num_returns=len(refs), timeout=10)
            except Exception:
                pass
        for a in actors:
            self._kill(a)
        self._actors.clear()
        self._pending.clear()
        self._starting.clear()
        self._idle.clear()
        self._session.shutdown()

    def __enter__(self) -> RayArlClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
