"""Learning-curve tables (issue 39): storage, reading at a checkpoint, inspect, generation.

The storage tests build small tables in the real on-disk layout (deterministic values); the
generation is tested end to end with the real ARLBench worker only, skipped with a reason
when its venv is absent (``erahbo arlbench setup``), as in ``tests/test_arlbench.py``.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from erahbo.arlbench.client import ArlClient, RunResult, WorkerProcess
from erahbo.arlbench.curve_shards import CurveShardBuffer, checkpoint_steps, merge_curve_shards
from erahbo.arlbench.generate import GenerationPlan, generate, merge_shards, shard_status
from erahbo.arlbench.venv import venv_python, worker_script
from erahbo.datasets.curves import (
    CurveTable,
    curve_summary,
    is_curve_file,
    read_curves,
    write_curves,
)
from erahbo.datasets.format import read_task, write_task
from erahbo.datasets.loaders import load_task

STEPS = np.array([10_000, 20_000, 30_000])


def _table(n: int = 3, seeds: tuple[int, ...] = (1, 2, 3, 4)) -> CurveTable:
    """``n`` configurations x seeds x 3 checkpoints; return = 10 * config + checkpoint +
    seed / 10; configuration 1 fails on seed 2 at the last checkpoint; the second
    hyperparameter is inactive (null) on configuration 2."""
    c = STEPS.size
    cfg, seed, ck = np.meshgrid(np.arange(n), np.asarray(seeds), np.arange(c), indexing="ij")
    returns = 10.0 * cfg + ck + seed / 10  # (n, S, C)
    returns[1, 1, 2] = np.nan
    wall = 0.5 * (ck + 1) + 0.01 * seed  # (n, S, C), cumulative
    cpu = 0.4 * (ck + 1) + 0.01 * seed
    configs = pd.DataFrame({"learning_rate": [1e-3 * (i + 1) for i in range(n)],
                            "tau": [0.5 if i != 2 else None for i in range(n)]})
    env = np.tile(STEPS + 16, (n, 1))  # (n, C): rounded up, as ARLBench does
    meta = {"task": "dqn_cc_cartpole", "algorithm": "dqn", "environment": "CartPole-v1",
            "domain": "cc", "training_budget": 30_000}
    return CurveTable(configs=configs, returns=returns, wall_s=wall, steps=STEPS.copy(),
                      env_steps=env, seeds=list(seeds), config_ids=np.arange(n), meta=meta,
                      cpu_s=cpu)


def test_curve_table_round_trip(tmp_path: Path) -> None:
    """A curve table written and read back has the same returns, times, steps and configs,
    one row per (configuration, checkpoint) with a training_steps column on disk."""
    t = _table()
    path = write_curves(t, tmp_path / "dqn_cc_cartpole.parquet")
    assert is_curve_file(path)
    back = read_curves(path)
    np.testing.assert_array_equal(back.returns, t.returns)
    np.testing.assert_array_equal(back.wall_s, t.wall_s)
    np.testing.assert_array_equal(back.cpu_s, t.cpu_s)
    np.testing.assert_array_equal(back.steps, STEPS)
    np.testing.assert_array_equal(back.env_steps, t.env_steps)
    assert back.seeds == [1, 2, 3, 4] and list(back.config_ids) == [0, 1, 2]
    assert back.configs["learning_rate"].tolist() == pytest.approx([1e-3, 2e-3, 3e-3])
    assert pd.isna(back.configs["tau"][2]) and back.configs["tau"][0] == 0.5
    assert back.meta["checkpoints"] == [10_000, 20_000, 30_000] and back.meta["n_eval_steps"] == 3
    raw = pd.read_parquet(path)
    assert len(raw) == 9 and raw["training_steps"].tolist()[:3] == [10_000, 20_000, 30_000]
    assert {"seed_1", "wall_s_1", "cpu_s_1", "env_steps"} <= set(raw.columns)
    # rows in another order are the same table
    shuffled = raw.sample(frac=1.0, random_state=0)
    from erahbo.datasets.curves import frame_to_curves
    again = frame_to_curves(shuffled, back.meta)
    np.testing.assert_array_equal(again.returns, t.returns)
    # CPU times are optional: a table without them reads with cpu_s None
    bare = frame_to_curves(raw.drop(columns=[f"cpu_s_{s}" for s in t.seeds]), back.meta)
    assert bare.cpu_s is None and np.isnan(curve_summary(bare)["cpu_s_median"]).all()


def test_curve_table_read_at_last_or_chosen_checkpoint(tmp_path: Path) -> None:
    """Read as a task, a curve table is its returns at the last checkpoint by default, or at
    checkpoint=N; the task is named <task>@<N>; a checkpoint it does not have is refused
    with the list of those it has, and checkpoint on a table without steps is refused."""
    t = _table()
    path = write_curves(t, tmp_path / "dqn_cc_cartpole.parquet")
    last = load_task(path)  # through the loaders, as benchmark / inspect / warm starts read it
    assert last.name == "dqn_cc_cartpole@30000" and last.meta["checkpoint"] == 30_000
    np.testing.assert_array_equal(last.returns, t.returns[:, :, -1])
    assert list(last.configs.columns) == ["learning_rate", "tau"]  # no step or time columns
    first = load_task(path, checkpoint=10_000)
    np.testing.assert_array_equal(first.returns, t.returns[:, :, 0])
    assert first.name == "dqn_cc_cartpole@10000"
    np.testing.assert_array_equal(read_task(path, 20_000).returns, t.returns[:, :, 1])
    np.testing.assert_array_equal(t.at(20_000).returns, t.returns[:, :, 1])
    with pytest.raises(ValueError, match=r"checkpoint 15000 is not in column 'training_steps'; "
                       r"the table has checkpoints 10000, 20000, 30000"):
        load_task(path, checkpoint=15_000)
    plain = write_task(last, tmp_path / "plain.parquet")
    with pytest.raises(ValueError, match=r"applies to tables with a 'training_steps' column"):
        load_task(plain, checkpoint=10_000)


def test_curve_table_needs_every_checkpoint_once(tmp_path: Path) -> None:
    """A configuration without one of the checkpoints (or with one twice) is refused, naming
    its config_id."""
    from erahbo.datasets.curves import frame_to_curves

    t = _table()
    df = t.to_frame()
    with pytest.raises(ValueError, match=r"config_id 1 does not have each of the 3 checkpoints"):
        frame_to_curves(df.drop(index=4), t.meta)
    dup = pd.concat([df.drop(index=4), df.iloc[[3]]], ignore_index=True)
    with pytest.raises(ValueError, match=r"config_id 1 does not have each"):
        frame_to_curves(dup, t.meta)


def test_curve_summary_per_checkpoint() -> None:
    """curve_summary: per checkpoint, quantiles and mean of the per-configuration mean
    return over configurations without a failed run there, the best mean, the median std,
    the failed runs and the median wall time."""
    t = _table()
    s = curve_summary(t)
    assert s["training_steps"].tolist() == [10_000, 20_000, 30_000]
    means = t.returns.mean(axis=1)  # (n, C); NaN where a run failed
    for k in range(3):
        ok = ~np.isnan(means[:, k])
        assert s["q50"][k] == pytest.approx(np.median(means[ok, k]))
        assert s["q05"][k] == pytest.approx(np.quantile(means[ok, k], 0.05))
        assert s["best"][k] == pytest.approx(means[ok, k].max())
        assert s["wall_s_median"][k] == pytest.approx(np.median(t.wall_s[:, :, k]))
        assert s["cpu_s_median"][k] == pytest.approx(np.median(t.cpu_s[:, :, k]))
    assert s["n_nan"].tolist() == [0, 0, 1]
    assert s["std_median"][0] == pytest.approx(np.std([0.1, 0.2, 0.3, 0.4], ddof=1))
    assert s["env_steps"].tolist() == [10_016, 20_016, 30_016]


def test_inspect_shows_the_curves(tmp_path: Path) -> None:
    """erahbo dataset inspect on a curve table: the usual row at the chosen checkpoint, then
    one row per checkpoint with the quantiles of the mean return; --plot-dir writes
    <task>_curves.png."""
    from typer.testing import CliRunner

    from erahbo.cli import app

    path = write_curves(_table(n=4), tmp_path / "dqn_cc_cartpole.parquet")
    res = CliRunner().invoke(app, ["dataset", "inspect", str(path), "--plot-dir",
                                   str(tmp_path / "plots")], env={"COLUMNS": "160"})
    assert res.exit_code == 0, res.output
    out = res.output
    assert "dqn_cc_cartpole@30000" in out
    assert "learning curves (4 configs x 4 seeds x 3 checkpoints)" in out
    lines = [ln.split() for ln in out.splitlines() if ln.strip().startswith(("10000", "20000",
                                                                              "30000"))]
    assert [ln[0] for ln in lines] == ["10000", "20000", "30000"]
    # the median configuration's mean at 10000 steps: configurations 0..3 -> 10 c + 0.25
    assert float(lines[0][3]) == pytest.approx(np.median([0.25, 10.25, 20.25, 30.25]), rel=0.01)
    assert (tmp_path / "plots" / "dqn_cc_cartpole_curves.png").stat().st_size > 0
    res = CliRunner().invoke(app, ["dataset", "inspect", str(path), "--checkpoint", "20000"],
                             env={"COLUMNS": "160"})
    assert res.exit_code == 0 and "dqn_cc_cartpole@20000" in res.output


def _run(seed: int, curve: list[float], *, first: bool = False, status: str = "ok"
         ) -> RunResult:
    times = tuple(0.1 * (k + 1) for k in range(len(curve)))
    cpu = tuple(0.05 * (k + 1) for k in range(len(curve)))
    return RunResult(curve[-1] if status == "ok" else float("nan"), status, times[-1],
                     None if status == "ok" else "non-finite", seed, first, tuple(curve),
                     times, tuple(int(s) for s in STEPS + 8), 2.0 if first else 0.0, cpu,
                     1.5 if first else 0.0)


def test_curve_shards_store_runs_and_merge(tmp_path: Path) -> None:
    """The generator's curve shard buffer stores each run's curve, times and steps in the
    configuration's row whatever the order results come back, a failed run's error, the
    compile time, the worker time and the CPU time; merged shards are one table with the
    runs' statistics."""
    meta0 = {"task": "dqn_cc_cartpole", "algorithm": "dqn", "environment": "CartPole-v1",
             "domain": "cc"}
    configs = pd.DataFrame({"learning_rate": [0.1, 0.2, 0.3, 0.4]})
    paths = []
    for k in range(2):
        buf = CurveShardBuffer(k, 2 * k, 2, 2, 3)
        for i in (2 * k + 1, 2 * k):  # the second configuration comes back first
            bad = i == 3
            res = [_run(1, [i, i + 1, i + 2], first=True),
                   _run(2, [i, i + 1, float("nan") if bad else i + 3],
                        status="failed" if bad else "ok")]
            buf.add(i, res, (1, 2))
        assert buf.left == 0
        table = buf.table(configs.iloc[2 * k: 2 * k + 2].reset_index(drop=True), [1, 2], STEPS,
                          meta0)
        paths.append(write_curves(table, tmp_path / f"shard-{k:05d}.parquet"))
    merged = read_curves(merge_curve_shards(paths, tmp_path / "m.parquet", partial=False))
    assert merged.returns.shape == (4, 2, 3)
    np.testing.assert_array_equal(merged.returns[2, 0], [2, 3, 4])
    np.testing.assert_array_equal(merged.returns[2, 1], [2, 3, 5])
    assert np.isnan(merged.returns[3, 1, 2])
    np.testing.assert_allclose(merged.wall_s[0, 0], [0.1, 0.2, 0.3])
    np.testing.assert_allclose(merged.cpu_s[3, 1], [0.05, 0.1, 0.15])
    assert merged.env_steps[0].tolist() == (STEPS + 8).tolist()
    m = merged.meta
    assert m["n_configs"] == 4 and m["n_failed_runs"] == 1 and m["partial"] is False
    assert m["compile_s"] == [2.0] * 4
    assert m["wall_time_s"] == pytest.approx(8 * 0.3 + 4 * 2.0)
    assert m["median_checkpoint_wall_s"] == pytest.approx([0.1, 0.2, 0.3])
    assert m["cpu_time_s"] == pytest.approx(8 * 0.15 + 4 * 1.5)
    assert m["median_checkpoint_cpu_s"] == pytest.approx([0.05, 0.1, 0.15])
    assert m["compile_cpu_s"] == [1.5] * 4
    assert m["failure_messages"] == {"non-finite": 1}
    assert merged.configs["learning_rate"].tolist() == [0.1, 0.2, 0.3, 0.4]


def test_plan_of_one_evaluation_keeps_its_form() -> None:
    """A plan with one evaluation is written as before (no n_eval_steps key), a stored plan
    without the key resumes with one evaluation and refuses ten (a different training)."""
    one = GenerationPlan("dqn_cc_cartpole", 8, (1, 2))
    assert "n_eval_steps" not in one.to_json()
    assert one.compatible(one.to_json()) is None
    ten = GenerationPlan("dqn_cc_cartpole", 8, (1, 2), n_eval_steps=10)
    assert ten.to_json()["n_eval_steps"] == 10
    assert ten.compatible(one.to_json()) == "n_eval_steps: stored 1, requested 10"
    assert checkpoint_steps(100_000, 10).tolist() == list(range(10_000, 100_001, 10_000))


def test_cli_generate_refuses_bad_eval_steps(tmp_path: Path) -> None:
    """--eval-steps below 1, or above 1 with --vectorize-seeds, is refused before any worker
    starts, naming the option and the fix."""
    from typer.testing import CliRunner

    from erahbo.cli import app

    base = ["dataset", "generate", "--task", "dqn_cc_cartpole", "--out", str(tmp_path)]
    res = CliRunner().invoke(app, [*base, "--eval-steps", "0"], env={"COLUMNS": "200"})
    assert res.exit_code == 2 and "--eval-steps 0" in res.output
    res = CliRunner().invoke(app, [*base, "--eval-steps", "10", "--vectorize-seeds"],
                             env={"COLUMNS": "200"})
    assert res.exit_code == 2 and "drop --vectorize-seeds" in res.output


# -- the real ARLBench worker (skipped without the venv) -------------------------------------
real = pytest.mark.skipif(
    not venv_python().exists(),
    reason=f"ARLBench venv not found at {venv_python()}; run `erahbo arlbench setup`",
)


@real
def test_real_worker_curve_equals_arlbench_train() -> None:
    """With n_eval_steps C the worker's checkpoints are ARLBench's own train(..., C, ...)
    evaluations, bit for bit; times and steps increase; the run's return is the last one."""
    w = WorkerProcess([str(venv_python()), "-u", str(worker_script())])
    try:
        for algo in ("dqn", "ppo"):
            w.send({"id": algo, "op": "train", "algorithm": algo, "environment": "CartPole-v1",
                    "env_framework": "gymnax", "n_envs": 8, "n_total_timesteps": 4096,
                    "n_eval_episodes": 8, "n_eval_steps": 4, "hp_config": {}, "seeds": [1, 2],
                    "verify_curve": True})
            msgs = [w.recv(timeout=900) for _ in range(2)]
            for m in msgs:
                assert m is not None and m["status"] == "ok", m
                assert m["train_equal"] is True
                assert len(m["curve"]) == 4 and m["return"] == m["curve"][-1]
                assert np.all(np.diff(m["curve_s"]) > 0) and np.all(np.diff(m["env_steps"]) > 0)
                assert len(m["curve_cpu_s"]) == 4 and np.all(np.diff(m["curve_cpu_s"]) >= 0)
                assert m["env_steps"][-1] >= 4096
            assert msgs[0]["compile_s"] > 0 and msgs[1]["compile_s"] == 0
    finally:
        w.stop()


@real
def test_real_generation_of_a_curve_table_resumes(tmp_path: Path) -> None:
    """generate with n_eval_steps 3: curve shards with the planned checkpoints, a restart
    skips the finished shard, the merged table reads at its last checkpoint and records the
    space, n_eval_steps and versions."""
    kw = {"n_configs": 2, "n_seeds": 2, "shard_size": 1, "n_total_timesteps": 3072,
          "n_eval_episodes": 8, "n_eval_steps": 3}
    with ArlClient(1) as cl:
        versions = cl.ping()["versions"]
        r1 = generate("dqn_cc_cartpole", tmp_path, cl, max_shards=1, versions=versions, **kw)
        assert r1["written"] == [0]
        r2 = generate("dqn_cc_cartpole", tmp_path, cl, versions=versions, **kw)
        assert r2["written"] == [1] and r2["skipped"] == [0] and r2["runs"] == 2
    assert shard_status(tmp_path, "dqn_cc_cartpole")["done"] == [0, 1]
    path = merge_shards(tmp_path, "dqn_cc_cartpole")
    curves = read_curves(path)
    assert curves.steps.tolist() == [1024, 2048, 3072] and curves.returns.shape == (2, 2, 3)
    assert np.isfinite(curves.returns).all() and np.isfinite(curves.wall_s).all()
    assert curves.cpu_s is not None and np.isfinite(curves.cpu_s).all()
    m = curves.meta
    assert m["n_eval_steps"] == 3 and m["versions"]["arlbench"] == "0.1.3"
    assert len(m["search_space"]["hyperparameters"]) == 14 and m["training_budget"] == 3072
    task = load_task(path)
    assert task.name == "dqn_cc_cartpole@3072"
    np.testing.assert_array_equal(task.returns, curves.returns[:, :, -1])
    plan = json.loads((tmp_path / "shards" / "dqn_cc_cartpole" / "plan.json").read_text())
    assert plan["n_eval_steps"] == 3
