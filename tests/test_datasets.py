"""Tests of erahbo.datasets: the loaders (formats, layouts, directories, the bundled suite,
the risk trade-off)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st

from dataset_helpers import RUNHISTORY, _small_task, _wide_csv
from erahbo.datasets.format import read_task, write_task
from erahbo.datasets.loaders import (
    bundled_tasks,
    detect_format,
    is_bookkeeping,
    load_task,
    load_tasks,
    scan_tasks,
)
from erahbo.datasets.synth import make_suite, make_task
from erahbo.datasets.tradeoff import tradeoff_alpha, tradeoff_stats
from erahbo.datasets.validate import validate_task

# -- loaders --------------------------------------------------------------------------


def test_parquet_round_trip(tmp_path):
    task = make_task("synth_ppo_cc_pendulum", n_configs=32, n_seeds=5, seed=3)
    path = write_task(task, tmp_path / "t.parquet")
    back = load_task(path)
    np.testing.assert_array_equal(back.returns, task.returns)
    np.testing.assert_array_equal(back.config_ids, task.config_ids)
    assert back.seeds == task.seeds
    pd.testing.assert_frame_equal(back.configs, task.configs)
    assert back.meta["synthetic"] is True and back.meta["task"] == task.name
    sub = load_task(path, hp_columns=["learning_rate", "clip_eps"])
    assert list(sub.configs.columns) == ["learning_rate", "clip_eps"]


def test_wide_csv_seed_columns_and_bookkeeping(tmp_path):
    path = _wide_csv(tmp_path)
    assert detect_format(path) == "csv"
    task = load_task(path)
    assert list(task.configs.columns) == ["lr", "gamma"]  # config_id, budget are bookkeeping
    assert task.seeds == [1, 2, 3]
    np.testing.assert_array_equal(task.config_ids, np.arange(10, 15))
    np.testing.assert_allclose(task.returns[2], [3.0, 4.0, 5.0])
    assert task.meta["training_budget"] == 1000
    assert load_task(path, hp_columns=["lr"]).configs.columns.tolist() == ["lr"]


def test_wide_csv_return_columns(tmp_path):
    df = pd.DataFrame({"lr": [0.1, 0.2, 0.3], "r7": [1.0, 2, 3], "r9": [2.0, 3, 5]})
    path = tmp_path / "named.csv"
    df.to_csv(path, index=False)
    with pytest.raises(ValueError, match="cannot tell which columns hold the per-seed returns"):
        load_task(path)
    task = load_task(path, return_columns=["r7", "r9"])
    assert task.seeds == [7, 9] and list(task.configs.columns) == ["lr"]
    np.testing.assert_allclose(task.returns[:, 1], [2, 3, 5])


def test_long_csv(tmp_path):
    rows = [
        {"config_id": c, "seed": s, "return": c * 10.0 + s, "lr": [1e-3, 1e-2][c], "status": "ok"}
        for c in (0, 1)
        for s in (1, 2, 3)
        if not (c == 1 and s == 3)  # one missing run -> NaN
    ]
    path = tmp_path / "long.csv"
    pd.DataFrame(rows).to_csv(path, index=False)
    task = load_task(path)
    assert list(task.configs.columns) == ["lr"]  # status and seed are bookkeeping
    assert task.seeds == [1, 2, 3]
    np.testing.assert_allclose(task.returns, [[1, 2, 3], [11, 12, np.nan]])
    assert task.meta["n_missing_runs"] == 1
    bad = pd.DataFrame(rows)
    bad.loc[1, "lr"] = 0.5  # config 0 now has two lr values
    bad.to_csv(path, index=False)
    with pytest.raises(ValueError, match="config_id 0 has different hyperparameter values"):
        load_task(path)


def test_runhistory_list_layout(tmp_path):
    folder = tmp_path / "dqn_cc_cartpole"
    folder.mkdir()
    path = folder / "runhistory.csv"
    path.write_text(RUNHISTORY)
    assert detect_format(path) == "runhistory"
    task = load_task(path)
    assert task.name == "dqn_cc_cartpole"
    assert (task.meta["algorithm"], task.meta["domain"]) == ("dqn", "cc")
    assert list(task.configs.columns) == ["learning_rate", "use_target_network", "tau"]
    assert np.isnan(task.configs.loc[1, "tau"])  # "None" = inactive
    np.testing.assert_allclose(task.returns, [[1, 2, np.nan], [3, 4.5, 5], [2, 2.5, 3]])
    assert task.seeds == [0, 1, 2]
    assert task.meta["training_budget"] == 100000
    assert task.meta["search_space"]["hyperparameters"][0]["name"] == "learning_rate"
    only = load_task(path, hp_columns=["hp_config.learning_rate"])
    assert list(only.configs.columns) == ["learning_rate"]
    path.write_text(RUNHISTORY.replace('"[3.0, 4.5, 5.0]"', ""))  # whole configuration failed
    failed, rep = validate_task(load_task(path))
    assert rep.infeasible_ids == [0, 1] and failed.n_configs == 1
    path.write_text(RUNHISTORY.replace("[3.0, 4.5, 5.0]", "[3.0, 4.5]"))
    with pytest.raises(ValueError, match=r"different lengths \(3 in row 0, 2 in row 1\)"):
        load_task(path)


def test_runhistory_per_seed_columns_and_long(tmp_path):
    df = pd.DataFrame(
        {
            "config_id": [0, 1],
            "performance": [1.5, 3.5],
            "performance_seed_4": [1.0, 3.0],
            "performance_seed_5": [2.0, 4.0],
            "budget": [10, 10],
            "lr": [0.1, 0.2],
        }
    )
    path = tmp_path / "rh_wide.csv"
    df.to_csv(path, index=False)
    task = load_task(path)
    assert task.seeds == [4, 5] and list(task.configs.columns) == ["lr"]
    np.testing.assert_allclose(task.returns, [[1, 2], [3, 4]])
    long = pd.DataFrame(
        {
            "config_id": [0, 1, 2, 3],
            "seed": [1, 2, 1, 2],
            "performance": [1.0, 2.0, 5.0, 6.0],
            "lr": [0.1, 0.1, 0.2, 0.2],
        }
    )
    long.to_csv(path, index=False)
    task = load_task(path, fmt="runhistory")
    np.testing.assert_allclose(task.returns, [[1, 2], [5, 6]])  # grouped by equal lr


def test_load_tasks_directory_filters_and_skips(tmp_path):
    good = _small_task()
    good.returns[0, 1] = np.nan
    write_task(good, tmp_path / "a.parquet")
    flat = _small_task()
    flat.returns[:] = 0.0  # every configuration scores the same
    flat.meta["task"] = "flat"
    write_task(flat, tmp_path / "sub" / "b.parquet")
    scanned = scan_tasks(tmp_path)
    assert [rep.task for _, rep in scanned] == ["toy", "flat"]
    rep_a, rep_b = scanned[0][1], scanned[1][1]
    assert (rep_a.n_infeasible, rep_a.n_configs_out, rep_a.degenerate) == (1, 5, False)
    assert rep_b.degenerate and not rep_b.usable
    tasks = load_tasks([tmp_path])
    assert [t.name for t in tasks] == ["toy"] and tasks[0].n_configs == 5
    assert tasks[0].meta["validation"]["n_infeasible"] == 1


def test_bookkeeping_names():
    for c in (
        "config_id",
        "Budget",
        "run_info",
        "instance",
        "seed",
        "status",
        "time",
        "Unnamed: 0",
    ):
        assert is_bookkeeping(c), c
    for c in ("learning_rate", "tau", "gamma"):
        assert not is_bookkeeping(c)


def test_bundled_suite():
    paths = bundled_tasks()
    assert len(paths) == 8
    assert sum(p.stat().st_size for p in paths) < 4e6
    task = read_task(paths[0])
    assert task.returns.shape == (512, 50)
    assert task.meta["synthetic"] is True and task.meta["domain"] == "synthetic"
    assert {read_task(p).meta["domain_like"] for p in paths} == {"cc", "brax", "xland"}
    # The files are what the documented command generates (make_suite(8, seed=0)).
    by_name = {p.stem: p for p in paths}
    for again in make_suite(8, seed=0):
        stored = read_task(by_name[again.name])
        np.testing.assert_array_equal(stored.returns, again.returns)
        pd.testing.assert_frame_equal(stored.configs, again.configs)
        assert stored.meta["synth_knobs"] == again.meta["synth_knobs"]


def test_bundled_suite_risk_tradeoff():
    # Like real RL outcome tables: on the benchmark's scale (Vizier warping, alpha = 1) the
    # best-mean configuration is risky and not MV-optimal, and the 5-configuration initial
    # design does not already hold the MV optimum.
    stats = [tradeoff_stats(read_task(p), n_designs=10) for p in bundled_tasks()]
    regret = np.array([s.best_mean_regret for s in stats])
    assert sum(s.best_mean_rank > 1 for s in stats) >= 6
    assert (regret >= 0.1).sum() >= 5 and np.median(regret) >= 0.1
    assert np.mean([s.init_regret for s in stats]) >= 0.2
    assert min(s.init_regret for s in stats) > 0.05
    assert {s.n_infeasible for s in stats} >= {18, 182}  # the paper's infeasible counts


def test_tradeoff_stats_matches_replay_ground_truth():
    replay = pytest.importorskip("erahbo.experiments.replay")
    task = make_task("synth_ppo_cc_pendulum", n_configs=128, n_seeds=20, seed=4)
    s = tradeoff_stats(task, n_designs=3)
    rt = replay.prepare_task(task)  # validate, Vizier warping, MV = mean - var(ddof=1)
    mean, mv = rt.returns.mean(axis=1), rt.mv
    best = int(np.argmax(mean))
    assert s.n_configs == rt.n_configs and s.n_infeasible == round(18 / 512 * 128)
    assert s.best_mean_rank == int((mv > mv[best]).sum()) + 1
    expected = (mv.max() - mv[best]) / (mv.max() - np.median(mv))
    assert np.isclose(s.best_mean_regret, expected)
    assert 0 <= s.init_regret and -1 <= s.corr_mean_std <= 1
    # alpha*: below it the benchmark's MV optimum is the best-mean configuration, above not
    var = rt.returns.var(axis=1, ddof=1)
    for alpha, same in ((s.alpha_tradeoff * 0.999, True), (s.alpha_tradeoff * 1.001, False)):
        assert (int(np.argmax(mean - alpha * var)) == best) is same


@given(st.integers(2, 40), st.integers(0, 2**32 - 1))
def test_tradeoff_alpha_is_the_switching_point(n, seed):
    rng = np.random.default_rng(seed)
    mean, var = rng.normal(size=n), rng.gamma(1.0, size=n)
    a = tradeoff_alpha(mean, var)
    best = int(np.argmax(mean))
    if np.isinf(a):
        assert var[best] == var.min()  # it is also the least variable: no alpha moves it
        assert int(np.argmax(mean - 1e6 * var)) == best
    else:
        assert a > 0
        assert int(np.argmax(mean - a * (1 - 1e-9) * var)) == best
        assert int(np.argmax(mean - a * (1 + 1e-6) * var)) != best
