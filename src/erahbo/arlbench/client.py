"""Client side of the ARLBench worker protocol: spawn, talk, time out, restart, parallelize.

The worker (:mod:`erahbo.arlbench.worker`) runs in the ARLBench venv and answers one JSON
line per training seed.  :class:`ArlClient` keeps ``n_workers`` worker processes, sends each
configuration with all its seeds to one worker (so JAX compiles once per configuration),
and turns every crash, hang or NaN of a run into a failed :class:`RunResult`; the caller
never sees an exception from a training run.

Online tuning uses :meth:`ArlClient.train`; the dataset generator uses
:meth:`ArlClient.train_many`.
"""

from __future__ import annotations

import json
import os
import queue
import subprocess
import threading
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple

from erahbo.arlbench.registry import ArlTask, get_task
from erahbo.arlbench.venv import venv_python, worker_script

__all__ = ["ArlClient", "RunResult", "WorkerError", "WorkerProcess"]


class RunResult(NamedTuple):
    """Outcome of one training run (one configuration, one seed).

    ``return_`` is the mean return over the evaluation episodes (NaN when failed). A run with
    ``n_eval_steps`` C > 1 (a learning curve) also has ``curve`` (the C returns, NaN where
    non-finite), ``curve_s`` and ``curve_cpu_s`` (its wall and CPU time at each checkpoint,
    compilation excluded), ``env_steps`` (environment steps by each checkpoint) and, on the
    configuration's first run, ``compile_s`` and ``compile_cpu_s`` (its compilation's wall
    and CPU time); None (0.0) otherwise.
    """

    return_: float
    status: str  # "ok" | "failed"
    runtime_s: float
    error: str | None
    seed: int = 0
    first: bool = False  # this run paid for the JIT compilation of its configuration
    curve: tuple[float, ...] | None = None
    curve_s: tuple[float, ...] | None = None
    env_steps: tuple[int, ...] | None = None
    compile_s: float = 0.0
    curve_cpu_s: tuple[float, ...] | None = None
    compile_cpu_s: float = 0.0


class WorkerError(RuntimeError):
    """The worker process could not be started or does not speak the protocol."""


@dataclass
class _Line:
    obj: dict[str, Any] | None  # None: EOF


class WorkerProcess:
    """One worker subprocess with a reader thread (so reads can time out).

    Parameters
    ----------
    cmd : sequence of str
        Command that starts a worker speaking the protocol on stdin/stdout.
    stderr_path : path, optional
        File that collects the worker's stderr (default: discarded).
    env : dict, optional
        Extra environment variables.
    """

    def __init__(
        self,
        cmd: Sequence[str],
        stderr_path: str | Path | None = None,
        env: dict[str, str] | None = None,
    ) -> None:
        self.cmd = list(cmd)
        self._stderr_path = Path(stderr_path) if stderr_path else None
        full_env = {**os.environ, **(env or {})}
        # one process per core: keep XLA from spawning a thread pool per core
        full_env.setdefault("XLA_FLAGS", "--xla_force_host_platform_device_count=1")
        full_env.setdefault("PYTHONUNBUFFERED", "1")
        self._err = open(self._stderr_path, "ab") if self._stderr_path else subprocess.DEVNULL
        try:
            self.proc = subprocess.Popen(
                self.cmd,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=self._err,
                text=True,
                bufsize=1,
                env=full_env,
            )
        except OSError as e:
            raise WorkerError(f"cannot start the ARLBench worker {self.cmd[0]!r}: {e}") from e
        self._q: queue.Queue[_Line] = queue.Queue()
        self._t = threading.Thread(target=self._read, daemon=True)
        self._t.start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            line = line.strip()
            if not line:
                continue
            try:
                obj = json.loads(line)
            except ValueError:
                continue  # stray non-protocol output
            if isinstance(obj, dict):
                self._q.put(_Line(obj))
        self._q.put(_Line(None))

    @property
    def alive(self) -> bool:
        return self.proc.poll() is None

    def send(self, obj: dict[str, Any]) -> None:
        assert self.proc.stdin is not None
        try:
            self.proc.stdin.write(json.dumps(obj, default=_json_default) + "\n")
            self.proc.stdin.flush()
        except (BrokenPipeError, OSError) as e:
            raise WorkerError(f"worker pipe closed: {e}") from e

    def recv(self, timeout: float | None) -> dict[str, Any] | None:
        """Next response; ``None`` at EOF; raises TimeoutError."""
        try:
            line = self._q.get(timeout=timeout)
        except queue.Empty:
            raise TimeoutError from None
        if line.obj is None:
            self._q.put(line)  # keep EOF visible
        return line.obj

    def kill(self) -> None:
        if self.alive:
            self.proc.kill()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:  # pragma: no cover
            pass
        if self._err is not subprocess.DEVNULL:
            self._err.close()

    def stop(self, timeout: float = 10.0) -> None:
        """Polite shutdown, then kill."""
        if self.alive:
            try:
                self.send({"id": "shutdown", "op": "shutdown"})
                self.proc.wait(timeout=timeout)
            except (WorkerError, subprocess.TimeoutExpired):
                pass
        self.kill()


def _json_default(o: Any) -> Any:
    """numpy scalars (e.g. from a pandas row) as plain JSON values."""
    if hasattr(o, "item") and callable(o.item):
        return o.item()
    raise TypeError(f"hyperparameter value of type {type(o).__name__} is not JSON serializable")


def _curve_fields(msg: dict[str, Any]) -> tuple[Any, Any, Any, float, Any, float]:
    """``(curve, curve_s, env_steps, compile_s, curve_cpu_s, compile_cpu_s)`` of a worker's
    answer (None and 0.0 without a curve)."""
    curve = msg.get("curve")
    if not isinstance(curve, list):
        return None, None, None, 0.0, None, 0.0
    nan = float("nan")
    return (tuple(nan if v is None else float(v) for v in curve),
            tuple(float(v) for v in msg.get("curve_s") or ()),
            tuple(int(v) for v in msg.get("env_steps") or ()),
            float(msg.get("compile_s") or 0.0),
            tuple(float(v) for v in msg.get("curve_cpu_s") or ()),
            float(msg.get("compile_cpu_s") or 0.0))


def _stderr_tail(path: Path | None, n: int = 3) -> str:
    if path is None or not path.exists():
        return ""
    try:
        lines = path.read_text(errors="replace").strip().splitlines()
    except OSError:
        return ""
    return " | ".join(lines[-n:])


class ArlClient:
    """Pool of ARLBench workers.

    Parameters
    ----------
    n_workers : int
        Worker processes (one per core you want to use).
    venv : path, optional
        ARLBench venv (default :func:`erahbo.arlbench.venv.default_venv_path`).
    worker_cmd : sequence of str, optional
        Command starting a worker; overrides ``venv`` (tests use a fake worker).
    run_timeout_s : float
        Longest time one training run (one seed) may take before the worker is killed
        and the run reported failed.
    compile_timeout_s : float
        Extra time allowed for the first run of a configuration (JIT compilation) and
        for the worker's start-up (importing JAX/ARLBench).
    restart_every : int
        Restart a worker after this many configurations (bounds memory growth).
    log_dir : path, optional
        Worker stderr goes to ``log_dir/worker-<i>.log``.
    vectorize_seeds : bool
        Ask workers to run all seeds of a configuration in one ``jax.vmap`` call
        (for accelerators; slower on CPU).
    """

    def __init__(
        self,
        n_workers: int = 1,
        *,
        venv: str | Path | None = None,
        worker_cmd: Sequence[str] | None = None,
        run_timeout_s: float = 600.0,
        compile_timeout_s: float = 300.0,
        restart_every: int = 64,
        log_dir: str | Path | None = None,
        vectorize_seeds: bool = False,
    ) -> None:
        if n_workers < 1:
            raise ValueError(f"n_workers must be >= 1, got {n_workers}")
        if worker_cmd is None:
            py = venv_python(venv)
            if not py.exists():
                raise WorkerError(
                    f"ARLBench venv not found ({py}); create it with `erahbo arlbench setup`"
                )
            worker_cmd = [str(py), "-u", str(worker_script())]
        self.worker_cmd = list(worker_cmd)
        self.n_workers = int(n_workers)
        self.run_timeout_s = float(run_timeout_s)
        self.compile_timeout_s = float(compile_timeout_s)
        self.restart_every = int(restart_every)
        self.log_dir = Path(log_dir) if log_dir else None
        self.vectorize_seeds = bool(vectorize_seeds)
        self._workers: list[WorkerProcess | None] = [None] * self.n_workers
        self._served = [0] * self.n_workers
        self._free: queue.Queue[int] = queue.Queue()
        for i in range(self.n_workers):
            self._free.put(i)
        self._req_id = 0
        self._lock = threading.Lock()
        self.restarts = 0
        self._stopped = False

    # -- worker management -----------------------------------------------------------
    def _log_path(self, i: int) -> Path | None:
        if self.log_dir is None:
            return None
        self.log_dir.mkdir(parents=True, exist_ok=True)
        return self.log_dir / f"worker-{i}.log"

    def _worker(self, i: int) -> WorkerProcess:
        if self._stopped:
            raise WorkerError("client stopped: its workers were killed")
        w = self._workers[i]
        if w is not None and (not w.alive or self._served[i] >= self.restart_every):
            w.stop()
            w = None
        if w is None:
            w = WorkerProcess(self.worker_cmd, stderr_path=self._log_path(i))
            self._workers[i] = w
            self._served[i] = 0
        return w

    def _drop(self, i: int) -> None:
        w = self._workers[i]
        if w is not None:
            w.kill()
        self._workers[i] = None
        self.restarts += 1

    def _next_id(self) -> int:
        with self._lock:
            self._req_id += 1
            return self._req_id

    def ping(self, timeout: float | None = None) -> dict[str, Any]:
        """Start worker 0 if needed and return its ping answer (versions, pid)."""
        i = self._free.get()
        try:
            w = self._worker(i)
            rid = self._next_id()
            w.send({"id": rid, "op": "ping"})
            t = timeout if timeout is not None else self.compile_timeout_s
            while True:
                msg = w.recv(timeout=t)
                if msg is None:
                    tail = _stderr_tail(w._stderr_path)
                    self._drop(i)
                    raise WorkerError(f"worker exited before answering ping. {tail}")
                if msg.get("id") == rid:
                    if msg.get("status") != "ok":
                        raise WorkerError(f"worker ping failed: {msg.get('error')}")
                    return msg
        except TimeoutError:
            self._drop(i)
            raise WorkerError("worker did not answer ping in time") from None
        finally:
            self._free.put(i)

    # -- training ----------------------------------------------------------------------
    def _request(
        self,
        task: ArlTask | str | dict[str, Any],
        config: dict[str, Any],
        extra: dict[str, Any] | None,
    ) -> dict[str, Any]:
        if isinstance(task, str):
            task = get_task(task)
        base = task.worker_request() if isinstance(task, ArlTask) else dict(task)
        hp = {k: v for k, v in config.items() if v is not None and v == v}  # drop None/NaN
        req = {**base, **(extra or {}), "op": "train", "hp_config": hp}
        if self.vectorize_seeds:
            req["vectorize_seeds"] = True
        return req

    def _run_on(self, i: int, req: dict[str, Any], seeds: list[int]) -> list[RunResult]:
        """Run ``req`` for ``seeds`` on worker ``i``; restart on death/timeout."""
        results: dict[int, RunResult] = {}
        pending = list(seeds)
        send_failures = 0
        while pending:
            try:
                w = self._worker(i)
                rid = self._next_id()
                w.send({**req, "id": rid, "seeds": pending})
                send_failures = 0
            except WorkerError as e:
                self._drop(i)
                send_failures += 1
                if send_failures < 3:
                    continue
                for s in pending:
                    results[s] = RunResult(float("nan"), "failed", 0.0, str(e), s)
                break
            first = True
            while pending:
                t = self.run_timeout_s + (self.compile_timeout_s if first else 0.0)
                if self.vectorize_seeds and first:
                    t += self.run_timeout_s * (len(pending) - 1)
                try:
                    msg = w.recv(timeout=t)
                except TimeoutError:
                    s = pending.pop(0)
                    results[s] = RunResult(
                        float("nan"),
                        "failed",
                        t,
                        f"timeout: no result within {t:.0f} s (worker killed)",
                        s,
                    )
                    self._drop(i)
                    break
                if msg is None:  # the worker died
                    s = pending.pop(0)
                    try:
                        code = w.proc.wait(timeout=5)
                    except subprocess.TimeoutExpired:
                        code = None
                    tail = _stderr_tail(w._stderr_path)
                    results[s] = RunResult(
                        float("nan"),
                        "failed",
                        0.0,
                        f"worker died (exit code {code}) during this run"
                        + (f": {tail}" if tail else ""),
                        s,
                    )
                    self._drop(i)
                    break
                if msg.get("id") != rid:
                    continue  # stale answer of an earlier request
                seed = msg.get("seed")
                if seed not in pending:
                    # request-level failure without a seed: fail everything pending
                    err = str(msg.get("error") or "worker error")
                    for s in pending:
                        results[s] = RunResult(float("nan"), "failed", 0.0, err, s)
                    pending = []
                    break
                pending.remove(seed)
                first = False
                ok = msg.get("status") == "ok" and msg.get("return") is not None
                ret = float(msg["return"]) if ok else float("nan")
                results[seed] = RunResult(
                    ret,
                    "ok" if ok else "failed",
                    float(msg.get("runtime_s") or 0.0),
                    None if ok else str(msg.get("error") or "failed"),
                    int(seed),
                    bool(msg.get("first", False)),
                    *_curve_fields(msg),
                )
        self._served[i] += 1
        return [results[s] for s in seeds]

    def train(
        self,
        task: ArlTask | str | dict[str, Any],
        config: dict[str, Any],
        seeds: Sequence[int],
        *,
        extra: dict[str, Any] | None = None,
    ) -> list[RunResult]:
        """Train ``config`` on ``task`` once per seed; never raises for a failed run.

        Parameters
        ----------
        task : ArlTask, task name, or dict
            The task (a dict gives raw worker request fields: algorithm, environment, ...).
        config : dict
            Hyperparameters (inactive conditionals left out or None).
        seeds : sequence of int
            Training seeds, each >= 1.
        extra : dict, optional
            Overrides of request fields (e.g. ``{"n_total_timesteps": 4096}``).

        Returns
        -------
        list of RunResult
            One per seed, in the order of ``seeds``.
        """
        seeds = [int(s) for s in seeds]
        req = self._request(task, config, extra)
        i = self._free.get()
        try:
            return self._run_on(i, req, seeds)
        finally:
            self._free.put(i)

    def train_many(
        self,
        task: ArlTask | str | dict[str, Any],
        configs: Sequence[dict[str, Any]],
        seeds: Sequence[int],
        *,
        extra: dict[str, Any] | None = None,
        on_result: Callable[[int, list[RunResult]], None] | None = None,
    ) -> Iterator[tuple[int, list[RunResult]]]:
        """Train every configuration with all ``seeds``, spread over the workers.

        Yields ``(index into configs, results)`` as configurations finish (any order).
        Configurations start in their order, at most ``n_workers`` at a time (a sliding
        window: a worker takes the next configuration as soon as it is free, so one slow
        configuration never idles the others). Closing the iterator early (an exception in
        the caller, Ctrl-C) cancels the configurations not started and does not wait for
        those in flight: they end when the client is closed (its workers stopped).
        """
        if self.n_workers == 1:
            for k, cfg in enumerate(configs):
                res = self.train(task, cfg, seeds, extra=extra)
                if on_result:
                    on_result(k, res)
                yield k, res
            return
        ex = ThreadPoolExecutor(max_workers=self.n_workers)
        todo = iter(enumerate(configs))
        running: dict[Future[list[RunResult]], int] = {}

        def submit_next() -> None:
            for k, cfg in todo:
                running[ex.submit(self.train, task, cfg, seeds, extra=extra)] = k
                return

        done = False
        try:
            for _ in range(self.n_workers):
                submit_next()
            while running:
                finished, _ = wait(running, return_when=FIRST_COMPLETED)
                for f in finished:
                    k = running.pop(f)
                    res = f.result()
                    submit_next()
                    if on_result:
                        on_result(k, res)
                    yield k, res
            done = True
        finally:
            ex.shutdown(wait=done, cancel_futures=True)

    def kill_workers(self) -> None:
        """Kill every worker process at once, even mid-run, and start no new one.

        A run in progress in another thread fails ("client stopped"); for a client that
        must stop now (:class:`erahbo.arlbench.ray_pool.RayArlClient` ending its actors).
        """
        self._stopped = True
        for w in list(self._workers):
            if w is not None:
                w.kill()

    def close(self) -> None:
        """Shut all workers down."""
        for i, w in enumerate(self._workers):
            if w is not None:
                w.stop()
                self._workers[i] = None

    def __enter__(self) -> ArlClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __del__(self) -> None:  # pragma: no cover - best effort
        try:
            self.close()
        except Exception:
            pass
