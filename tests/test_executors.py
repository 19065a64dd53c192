"""Executors: serial, local process pool (crash/timeout isolation), Ray on loopback."""

from __future__ import annotations

import concurrent.futures as cf
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from erahbo.runtime.evaluate import evaluate
from erahbo.runtime.executors import (
    Executor,
    ProcessExecutor,
    RemoteError,
    RunTimeout,
    SerialExecutor,
    WorkerCrashed,
    make_executor,
)

SRC = Path(__file__).resolve().parents[1] / "src"
pytestmark = pytest.mark.xdist_group("ray")  # the shared Ray instance (conftest.py)


# --- functions run by workers (module level: picklable) --------------------------------------


def train(config, seed):
    return config["base"] + seed


def getpid(*_):
    return os.getpid()


def fail(msg):
    raise KeyError(msg)


class Unpicklable(Exception):
    def __init__(self, msg):
        super().__init__(msg)
        self.fh = open(os.devnull)  # file handles do not pickle

    def __reduce__(self):
        raise TypeError("no")


def raise_unpicklable():
    raise Unpicklable("weird")


def sleep_then(seconds, value):
    time.sleep(seconds)
    return value


def segfault(*_):
    os.kill(os.getpid(), signal.SIGSEGV)


def rendezvous(folder, me, other):
    """Returns only if the other call runs at the same time (proves concurrency)."""
    Path(folder, me).touch()
    deadline = time.time() + 20
    while not Path(folder, other).exists():
        if time.time() > deadline:
            return "alone"
        time.sleep(0.01)
    return "together"


def odd_fails(config, seed):
    if seed % 2:
        raise RuntimeError("diverged")
    return float(seed)


# --- serial ----------------------------------------------------------------------------------


def test_serial_runs_inline_and_carries_exceptions():
    ex = SerialExecutor()
    assert isinstance(ex, Executor) and ex.max_workers == 1
    futs = ex.map_seeds(train, {"base": 10}, [1, 2])
    assert all(f.done() for f in futs) and [f.result() for f in futs] == [11, 12]
    assert ex.submit(getpid).result() == os.getpid()
    with pytest.raises(KeyError, match="boom"):
        ex.submit(fail, "boom").result()
    assert list(ex.map(train, [{"base": 0}, {"base": 1}], [5, 6])) == [5, 7]


def test_serial_with_timeout_runs_in_a_child_process():
    with SerialExecutor() as ex:
        assert ex.submit(getpid, timeout=30).result() != os.getpid()
        with pytest.raises(RunTimeout, match=r"run_timeout=0\.5"):
            ex.submit(sleep_then, 30, 1, timeout=0.5).result()


# --- process pool ----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def pool():
    with ProcessExecutor(max_workers=2) as ex:
        yield ex


def test_process_results_in_seed_order_in_other_processes(pool):
    futs = pool.map_seeds(train, {"base": 100}, [3, 1, 2])
    assert [f.result() for f in futs] == [103, 101, 102]
    pids = {f.result() for f in [pool.submit(getpid) for _ in range(4)]}
    assert os.getpid() not in pids and 1 <= len(pids) <= 2


def test_process_runs_calls_concurrently(pool, tmp_path):
    a = pool.submit(rendezvous, str(tmp_path), "a", "b")
    b = pool.submit(rendezvous, str(tmp_path), "b", "a")
    assert a.result() == b.result() == "together"


def test_process_exceptions_keep_type_and_remote_traceback(pool):
    with pytest.raises(KeyError, match="missing") as info:
        pool.submit(fail, "missing").result()
    assert "in fail" in str(info.value.__cause__)  # the worker's traceback
    with pytest.raises(RemoteError, match="Unpicklable: weird"):
        pool.submit(raise_unpicklable).result()


def test_process_segfault_fails_one_call_pool_survives(pool):
    ok = pool.submit(sleep_then, 0.3, "fine")
    bad = pool.submit(segfault)
    with pytest.raises(WorkerCrashed, match="SIGSEGV"):
        bad.result()
    assert ok.result() == "fine"
    assert pool.submit(train, {"base": 1}, 1).result() == 2


def test_process_timeout_kills_only_the_hung_call(pool):
    hung = pool.submit(sleep_then, 60, "never", timeout=0.5)
    fine = pool.submit(sleep_then, 0.2, "fine", timeout=30)
    with pytest.raises(RunTimeout) as info:
        hung.result(timeout=30)
    assert info.value.worker and fine.result() == "fine"


def test_process_rejects_unpicklable_function_and_use_after_shutdown():
    ex = ProcessExecutor(max_workers=1)
    with pytest.raises(TypeError, match="cannot send"):
        ex.submit(lambda: 1)
    ex.shutdown()
    with pytest.raises(RuntimeError, match="shut down"):
        ex.submit(getpid)
    with pytest.raises(ValueError, match="max_workers must be a positive int"):
        ProcessExecutor(max_workers=0)


def test_process_cancel_queued(tmp_path):
    with ProcessExecutor(max_workers=1) as ex:
        first = ex.submit(sleep_then, 0.5, 1)
        queued = ex.submit(sleep_then, 0.0, 2)
        assert queued.cancel()
        assert first.result() == 1 and queued.cancelled()


def test_evaluate_concurrent_seeds_with_failures(pool):
    out = evaluate(odd_fails, {"base": 0}, [2, 3, 4, 6], "retry", retries=2, executor=pool)
    assert len(out.counted) == 4
    assert out.returns[0] == 2.0 and out.returns[2] == 4.0 and out.returns[3] == 6.0


def test_workers_die_with_a_killed_study_process(tmp_path):
    """A SIGKILLed study must not leave training runs behind as orphans."""
    script = textwrap.dedent(
        f"""
        import sys, time
        sys.path.insert(0, {str(Path(__file__).parent)!r})
        from erahbo.runtime.executors import ProcessExecutor
        from test_executors import getpid, sleep_then
        if __name__ == "__main__":
            ex = ProcessExecutor(max_workers=1)
            print(ex.submit(getpid).result(), flush=True)
            ex.submit(sleep_then, 60, 0)
            time.sleep(60)
        """
    )
    env = {**os.environ, "PYTHONPATH": str(SRC)}
    proc = subprocess.Popen(
        [sys.executable, "-c", script], stdout=subprocess.PIPE, text=True, env=env
    )
    worker = int(proc.stdout.readline())
    os.kill(worker, 0)  # alive
    proc.kill()
    proc.wait()
    deadline = time.time() + 10
    while time.time() < deadline:
        try:
            os.kill(worker, 0)
        except ProcessLookupError:
            break
        try:  # a zombie of an already-dead parent is reaped by init; check its state
            state = Path(f"/proc/{worker}/stat").read_text().split()[2]
            if state == "Z":
                break
        except OSError:
            break
        time.sleep(0.05)
    else:
        os.kill(worker, signal.SIGKILL)
        pytest.fail("worker outlived its killed parent")


def test_make_executor():
    assert isinstance(make_executor(None), SerialExecutor)
    assert isinstance(make_executor("serial"), SerialExecutor)
    ex = make_executor("process", max_workers=3)
    assert isinstance(ex, ProcessExecutor) and ex.max_workers == 3
    assert make_executor(ex) is ex
    ex.shutdown()
    with pytest.raises(ValueError, match="executor='dask' is not known"):
        make_executor("dask")


# --- Ray ---------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def ray_ex(shared_ray):
    """RayExecutor(address=None, num_cpus=2): the local instance shared with the other Ray
    modules (conftest.py); its shutdown at the end of the session is checked to end Ray."""
    return shared_ray


def test_ray_local_instance_on_loopback(ray_ex):
    import ray

    assert ray.is_initialized() and ray_ex.max_workers == 2
    assert {n["NodeManagerAddress"] for n in ray.nodes()} == {"127.0.0.1"}
    futs = ray_ex.map_seeds(train, {"base": 5}, [1, 2, 3])
    assert [f.result(timeout=60) for f in futs] == [6, 7, 8]
    assert all(isinstance(f, cf.Future) for f in futs)


def test_ray_errors_timeouts_and_evaluate(ray_ex):
    with pytest.raises(KeyError, match="lost"):
        ray_ex.submit(fail, "lost").result(timeout=60)
    with pytest.raises(RunTimeout):
        ray_ex.submit(sleep_then, 60, 0, timeout=1.0).result(timeout=60)
    with pytest.raises(WorkerCrashed):
        ray_ex.submit(segfault).result(timeout=60)
    out = evaluate(odd_fails, {"base": 0}, [2, 3, 4], executor=ray_ex)
    assert [r.status for r in sorted(out.runs, key=lambda r: r.slot)] == ["ok", "penalized", "ok"]
    assert out.returns[0] == 2.0 and out.returns[2] == 4.0


def test_ray_joins_an_initialized_session_without_owning_it(ray_ex):
    import ray

    from erahbo.runtime.executors import RayExecutor

    inner = RayExecutor(address="auto")
    assert inner.submit(train, {"base": 1}, 1).result(timeout=60) == 2
    inner.shutdown()
    assert ray.is_initialized()  # the outer session is left running


def test_ray_missing_gives_install_hint(monkeypatch):
    import builtins

    from erahbo.runtime import executors

    real_import = builtins.__import__

    def no_ray(name, *args, **kwargs):
        if name == "ray":
            raise ImportError("No module named 'ray'")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_ray)
    with pytest.raises(ImportError, match=r"pip install erahbo\[ray\]"):
        executors.RayExecutor()


def test_ray_optimize_same_decisions_as_serial(ray_ex):
    """The seeds of each round run as Ray tasks; decisions do not depend on the executor."""
    import erahbo
    from fault_injection import flaky_objective, table

    kw = {"budget": 30, "seed": 2, "k_max": 4, "n_init": 3, "failures": "retry"}
    serial = erahbo.optimize(flaky_objective, table(), **kw)
    on_ray = erahbo.optimize(flaky_objective, table(), executor=ray_ex, **kw)
    cols = ["iteration", "config_id", "seed", "return", "k", "status", "attempt"]
    assert on_ray.history[cols].equals(serial.history[cols])
    assert "retried" in set(on_ray.history.status)
    assert not on_ray.history.worker.str.endswith(f":{os.getpid()}").any()  # ran on Ray


def test_ray_optimize_with_configurations_in_flight(ray_ex):
    """n_parallel trials share the Ray executor; every run counted once, budget exact."""
    import erahbo
    from fault_injection import flaky_objective, table

    res = erahbo.optimize(flaky_objective, table(), method="rahbo", k=2, budget=30, seed=2,
                          n_init=3, failures="penalize", n_parallel=3, executor=ray_ex)
    assert res.n_evals == 30
    assert not res.history.duplicated(["config_id", "seed"]).any()
    assert not res.history.worker.str.endswith(f":{os.getpid()}").any()  # ran on Ray


def test_ray_benchmark_spreads_jobs_and_matches_the_process_pool(ray_ex, tmp_path):
    import pandas as pd
    from typer.testing import CliRunner

    from erahbo.cli import app
    from erahbo.datasets.format import write_task
    from erahbo.datasets.synth import make_task
    from erahbo.experiments import StudySettings, parse_methods, prepare_task, run_study, trace_path

    data = make_task("synth_ppo_cc_acrobot", n_configs=32, n_seeds=8, seed=1)
    task = prepare_task(data)
    settings = StudySettings(budget=15, k_init=3)
    methods = parse_methods("erahbo,rahbo-k2")
    seen = []
    summary = run_study([task], methods, 1, settings, tmp_path / "ray", executor=ray_ex,
                        on_progress=lambda done, total: seen.append((done, total)))
    assert summary["jobs_run"] == 2 and seen[0][1] == 2 * 15  # the budgets, then 100 % of
    assert seen[-1] == (summary["runs"], min(summary["runs"], 2 * 15))  # the runs (ended short)
    run_study([task], methods, 1, settings, tmp_path / "serial", workers=1)
    for m in ("erahbo", "rahbo-k2"):
        a = pd.read_parquet(trace_path(tmp_path / "ray", task.name, m, 0))
        b = pd.read_parquet(trace_path(tmp_path / "serial", task.name, m, 0))
        pd.testing.assert_frame_equal(a, b)
    # the CLI joins the running Ray instance and resumes by skipping finished traces
    path = write_task(data, tmp_path / "data" / f"{data.name}.parquet")
    args = ["benchmark", str(path), "--methods", "erahbo,rahbo-k2", "--repetitions", "2",
            "--budget", "15", "--k-init", "3", "--out", str(tmp_path / "ray"), "--executor",
            "ray", "--address", "auto", "--no-report"]
    res = CliRunner().invoke(app, args)
    assert res.exit_code == 0, res.output
    assert "2 trace(s) written, 2 already done" in res.output
    bad = CliRunner().invoke(app, [*args[:-4], "--executor", "dask"])
    assert bad.exit_code != 0 and "is not known; use process or ray" in bad.output
