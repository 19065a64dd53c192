"""Dataset generation on a Ray cluster (``erahbo.arlbench.ray_pool``), on a local instance.

One Ray instance on loopback (2 CPUs, shared with the other Ray modules: conftest.py) serves
the whole module; the actors drive the fake
worker of ``test_arlbench.py``. A lost actor is simulated by a fake worker that kills its
parent (the actor process) at a chosen training request.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from erahbo.arlbench.client import ArlClient, WorkerError
from erahbo.arlbench.generate import generate, merge_shards, shard_dir, shard_path
from erahbo.arlbench.venv import venv_python
from erahbo.datasets.format import read_task

sys.path.insert(0, str(Path(__file__).parent))
from test_arlbench import FAKE_WORKER

pytest.importorskip("ray", reason="Ray is not installed (pip install erahbo[ray])")

TASK = "ppo_cc_cartpole"
pytestmark = pytest.mark.xdist_group("ray")  # the shared Ray instance (conftest.py)
TIMING = ("wall_s", "run_runtime_s", "first_run_s")  # metadata that may differ between runs


@pytest.fixture(scope="module")
def ray_session(shared_ray):
    """RayExecutor(address=None, num_cpus=2): the instance shared with the other Ray modules
    (conftest.py)."""
    return shared_ray


def fake_worker(tmp_path: Path, **env: str) -> list[str]:
    """A fake worker command with its environment baked in (Ray actors do not see the
    test's ``os.environ``: they inherit the environment of the Ray instance)."""
    p = tmp_path / f"fake_worker_{len(list(tmp_path.glob('fake_worker_*')))}.py"
    prelude = "".join(f"import os; os.environ[{k!r}] = {v!r}\n" for k, v in env.items())
    p.write_text(prelude + FAKE_WORKER)
    return [sys.executable, "-u", str(p)]


def ray_client(cmd: list[str], **kw: object):
    from erahbo.arlbench.ray_pool import RayArlClient

    return RayArlClient(2, worker_cmd=cmd, **kw)


def calls_per_config(calls: Path) -> dict[float, int]:
    out: dict[float, int] = {}
    for line in calls.read_text().splitlines():
        lr = json.loads(line)["hp"]["learning_rate"]
        out[lr] = out.get(lr, 0) + 1
    return out


def same_shard(a: Path, b: Path) -> None:
    ta, tb = read_task(a), read_task(b)
    assert ta.configs.equals(tb.configs)
    np.testing.assert_array_equal(ta.returns, tb.returns)
    assert list(ta.config_ids) == list(tb.config_ids) and ta.seeds == tb.seeds
    strip = lambda m: {k: v for k, v in m.items() if k not in TIMING}  # noqa: E731
    assert strip(ta.meta) == strip(tb.meta)


def test_ray_shards_equal_the_process_pool_and_resume(ray_session, tmp_path: Path) -> None:
    kw = dict(n_configs=10, n_seeds=3, shard_size=4, versions={"arlbench": "fake"})
    with ArlClient(2, worker_cmd=fake_worker(tmp_path)) as cl:
        generate(TASK, tmp_path / "pool", cl, **kw)
    calls = tmp_path / "calls.jsonl"
    with ray_client(fake_worker(tmp_path, FAKE_CALLS=str(calls))) as cl:
        assert cl.ping()["versions"] == {"arlbench": "fake"}
        r1 = generate(TASK, tmp_path / "ray", cl, max_shards=2, **kw)
        assert r1["written"] == [0, 1] and r1["skipped"] == []
        r2 = generate(TASK, tmp_path / "ray", cl, **kw)
        assert r2["written"] == [2] and r2["skipped"] == [0, 1]
        r3 = generate(TASK, tmp_path / "ray", cl, **kw)
        assert r3["written"] == [] and r3["runs"] == 0
        assert len(set(cl.nodes.values())) == 1 and cl.restarts == 0
        # every configuration trained once (the resumes skipped the finished shards)
        assert len(calls.read_text().splitlines()) == 10
        assert set(calls_per_config(calls).values()) == {1}
        # a train_many closed early leaves no actor behind: the next one uses both.
        # On a loaded machine one actor may still be starting (its ping pending for many
        # seconds while the other ran every call so far): short calls collect it first, so
        # that the closed call below has a configuration in flight on the other actor
        def state() -> str:
            return (f"abandoned {len(cl._abandoned)}, idle {list(cl._idle)}, actors "
                    f"{sorted(cl._actors)}, starting {len(cl._starting)}, restarts "
                    f"{cl.restarts}")

        def short_calls_while(busy) -> None:
            deadline = time.monotonic() + 60.0  # a time allowance, not a count of calls: a
            while busy() and time.monotonic() < deadline:  # short call can take ms
                dict(cl.train_many(TASK, [{"learning_rate": 0.1}], [1]))
                time.sleep(0.05)

        short_calls_while(lambda: cl._starting)
        assert not cl._starting and len(cl._idle) == 2, state()
        slow = [{"learning_rate": 0.5, "sleep_s": 0.5}] * 3
        it = cl.train_many(TASK, slow, [1])
        next(it)
        it.close()
        assert len(cl._abandoned) == 1, state()  # the other actor's configuration, in flight
        out = dict(cl.train_many(TASK, [{"learning_rate": k / 10} for k in range(4)], [1, 2]))
        assert sorted(out) == [0, 1, 2, 3] and out[3][1].return_ == pytest.approx(32.0)
        # the closed call's actor may still be finishing its configuration (0.5 s, longer under
        # load): later calls collect it, and then both actors are free again
        short_calls_while(lambda: cl._abandoned)
        assert not cl._abandoned and len(cl._idle) == 2, state()
    for k in range(3):
        same_shard(shard_path(shard_dir(tmp_path / "pool", TASK), k),
                   shard_path(shard_dir(tmp_path / "ray", TASK), k))
    same_shard(merge_shards(tmp_path / "pool", TASK), merge_shards(tmp_path / "ray", TASK))


def test_ray_lost_actor_configuration_rerun_once(ray_session, tmp_path: Path) -> None:
    """The actor running the 3rd training request dies mid-configuration: that configuration
    runs again on a replacement actor, and every configuration is in the table once."""
    calls = tmp_path / "calls.jsonl"
    cmd = fake_worker(tmp_path, FAKE_CALLS=str(calls),
                      FAKE_KILL_PARENT_AT=f"3:{tmp_path / 'killed-once'}")
    with ray_client(cmd) as cl:
        res = generate(TASK, tmp_path / "ray", cl, n_configs=8, n_seeds=2, shard_size=2)
        assert cl.restarts == 1 and cl.reruns == 1
    assert res["written"] == [0, 1, 2, 3] and res["runs"] == 16
    per = calls_per_config(calls)
    assert len(per) == 8 and sorted(per.values()) == [1] * 7 + [2]  # started twice, kept once
    task = read_task(merge_shards(tmp_path / "ray", TASK))
    assert list(task.config_ids) == list(range(8))
    lr = task.configs["learning_rate"].to_numpy()
    np.testing.assert_allclose(task.returns, 100 * lr[:, None] + np.array([1.0, 2.0]))


def test_ray_gives_up_when_a_configuration_keeps_losing_its_actor(
    ray_session, tmp_path: Path
) -> None:
    cmd = fake_worker(tmp_path, FAKE_CALLS=str(tmp_path / "calls.jsonl"),
                      FAKE_KILL_PARENT_AT="1")  # every training request kills its actor
    with ray_client(cmd, max_attempts=2) as cl, pytest.raises(
        WorkerError, match="lost its Ray worker 2 times"
    ):
        generate(TASK, tmp_path / "ray", cl, n_configs=4, n_seeds=2, shard_size=2)
    assert not list(shard_dir(tmp_path / "ray", TASK).glob("shard-*"))  # nothing half-written


def test_ray_missing_gives_install_hint(monkeypatch: pytest.MonkeyPatch) -> None:
    import builtins

    from erahbo.arlbench.ray_pool import RayArlClient

    real_import = builtins.__import__

    def no_ray(name, *args, **kwargs):
        if name == "ray":
            raise ImportError("No module named 'ray'")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_ray)
    with pytest.raises(ImportError, match=r"pip install erahbo\[ray\]"):
        RayArlClient(1, worker_cmd=["true"])


def test_cli_generate_on_ray(
    ray_session, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from typer.testing import CliRunner

    import erahbo.arlbench.ray_pool as ray_pool
    from erahbo.cli import app

    real = ray_pool.RayArlClient
    cmd = fake_worker(tmp_path)
    monkeypatch.setattr(ray_pool, "RayArlClient",
                        lambda workers, **kw: real(workers, worker_cmd=cmd))
    args = ["dataset", "generate", "--task", TASK, "--configs", "6", "--seeds", "2",
            "--out", str(tmp_path), "--executor", "ray"]
    res = CliRunner().invoke(app, args)
    assert res.exit_code == 0, res.output
    assert "2 shards written" in res.output and "merged:" in res.output
    assert read_task(tmp_path / f"{TASK}.parquet").returns.shape == (6, 2)
    res = CliRunner().invoke(app, args)
    assert res.exit_code == 0 and "0 shards written, 2 already present" in res.output
    res = CliRunner().invoke(app, [*args, "--executor", "process", "--address", "auto"])
    assert res.exit_code == 2 and "--address needs --executor ray" in res.output


real = pytest.mark.skipif(
    not venv_python().exists(),
    reason=f"ARLBench venv not found at {venv_python()}; run `erahbo arlbench setup`",
)


@real
def test_real_arlbench_on_ray_matches_the_process_pool(ray_session, tmp_path: Path) -> None:
    """2 configurations x 2 seeds of dqn_cc_cartpole (tiny budget) through Ray actors."""
    kw = dict(n_configs=2, n_seeds=2, shard_size=2, n_total_timesteps=2048, n_eval_episodes=8)
    from erahbo.arlbench.ray_pool import RayArlClient

    with RayArlClient(2) as cl:
        versions = cl.ping()["versions"]
        assert versions["arlbench"] == "0.1.3"
        generate("dqn_cc_cartpole", tmp_path / "ray", cl, versions=versions, **kw)
    with ArlClient(1) as cl:
        generate("dqn_cc_cartpole", tmp_path / "pool", cl, versions=versions, **kw)
    a = read_task(merge_shards(tmp_path / "ray", "dqn_cc_cartpole"))
    b = read_task(merge_shards(tmp_path / "pool", "dqn_cc_cartpole"))
    assert a.returns.shape == (2, 2) and np.isfinite(a.returns).all()
    np.testing.assert_array_equal(a.returns, b.returns)  # same seeds, same returns
