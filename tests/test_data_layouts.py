"""The community's data layouts (issue 17): Hypersweeper's runhistory.csv, ARLBench's landscape
data and one row per run, for `erahbo benchmark`, `dataset inspect` and `--warm-start`."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

import erahbo
from erahbo.cli import app
from erahbo.datasets.loaders import detect_format, load_task
from erahbo.datasets.run_rows import read_runs
from erahbo.objectives.synthetic import Figure1Task

# -- fixtures --------------------------------------------------------------------------------


def _hypersweeper(tmp_path):
    """Hypersweeper 0.2's runhistory.csv: mean + one column per seed, budget, hyperparameters."""
    rng = np.random.default_rng(0)
    lr = np.array([1e-4, 3e-4, 1e-3, 3e-3, 1e-2])
    per_seed = 100 * (1 - np.abs(np.log10(lr) + 3))[:, None] + rng.normal(0, 5, (5, 3))  # (5, 3)
    df = pd.DataFrame({"config_id": np.arange(5), "performance": per_seed.mean(1)})
    for j, s in enumerate((0, 1, 2)):
        df[f"performance_seed_{s}"] = per_seed[:, j]
    df["budget"] = 500_000
    df["hp_config.learning_rate"] = lr
    df["hp_config.gamma"] = [0.9, 0.95, 0.99, 0.95, 0.9]
    path = tmp_path / "ppo_cc_cartpole" / "runhistory.csv"
    path.parent.mkdir()
    df.to_csv(path, index=False)
    return path, per_seed


def _landscape(tmp_path):
    """ARLBench's landscape data: 4 configurations x 3 seeds x 3 checkpoints, long format."""
    rows = []
    for c in range(4):
        for s in range(3):
            for steps in (10_000, 20_000, 30_000):
                if (c, s, steps) == (3, 2, 30_000):
                    continue  # this run stopped before its last checkpoint
                rows.append({"config_id": c, "hp_config.learning_rate": 10.0 ** -(c + 2),
                             "hp_config.ent_coef": 0.01 * c, "seed": s,
                             "training_steps": steps,
                             "performance": c * 100 + s * 10 + steps / 1e4})
    path = tmp_path / "dqn_cc_acrobot_landscape.csv"
    pd.DataFrame(rows).to_csv(path, index=False)
    return path


def _runs(tmp_path):
    """One row per run, no config_id, erahbo's status column: a retry and a failed run."""
    rows = [
        {"lr": 0.1, "act": "tanh", "seed": 1, "return": 1.0, "status": "ok"},
        {"lr": 0.1, "act": "tanh", "seed": 2, "return": 2.0, "status": "ok"},
        {"lr": 0.1, "act": "tanh", "seed": 3, "return": -9.0, "status": "penalized"},
        {"lr": 0.2, "act": "relu", "seed": 1, "return": None, "status": "retried"},
        {"lr": 0.2, "act": "relu", "seed": 4, "return": 5.0, "status": "ok"},
        {"lr": 0.2, "act": "relu", "seed": 2, "return": 6.0, "status": "ok"},
        {"lr": 0.2, "act": "relu", "seed": 3, "return": 7.0, "status": "ok"},
    ]
    path = tmp_path / "runs.csv"
    pd.DataFrame(rows).to_csv(path, index=False)
    return path


# -- Hypersweeper runhistory.csv -------------------------------------------------------------


def test_hypersweeper_runhistory(tmp_path):
    path, per_seed = _hypersweeper(tmp_path)
    assert detect_format(path) == "runhistory"
    task = load_task(path)
    assert task.name == "ppo_cc_cartpole" and task.seeds == [0, 1, 2]
    assert list(task.configs.columns) == ["learning_rate", "gamma"]  # prefix dropped
    np.testing.assert_allclose(task.returns, per_seed)
    assert task.meta["training_budget"] == 500_000
    runs = read_runs(path)  # the warm-start view: one row per run
    assert len(runs) == 15 and set(runs.columns) >= {"learning_rate", "gamma", "seed", "return"}
    np.testing.assert_allclose(runs.loc[(runs.config_id == 2) & (runs.seed == 1), "return"],
                               per_seed[2, 1])
    df = pd.read_csv(path)
    df["performance_seed_1"] = df["performance_seed_1"].astype(object)
    df.loc[2, "performance_seed_1"] = "crashed"
    df.to_csv(path, index=False)
    with pytest.raises(ValueError, match=r"non-numeric return 'crashed' in column "
                       r"'performance_seed_1', row 2"):
        load_task(path)


def test_warm_start_from_a_hypersweeper_runhistory(tmp_path):
    path, per_seed = _hypersweeper(tmp_path)
    space = erahbo.SearchSpace({"hp_config.learning_rate": ("log", 1e-5, 0.1),
                                "hp_config.gamma": ("float", 0.8, 0.999)})
    opt = erahbo.Optimizer(space, budget=4, n_init=0, k_max=2, warm_start=path)
    res = opt.result()
    warm = res.history[res.history.phase == "warm"]
    assert len(warm) == 15 and res.configs.shape[0] == 5
    np.testing.assert_allclose(np.sort(warm["return"]), np.sort(per_seed.ravel()))


# -- ARLBench landscape data ------------------------------------------------------------------


def test_arlbench_landscape_last_and_chosen_checkpoint(tmp_path):
    path = _landscape(tmp_path)
    assert detect_format(path) == "landscape"
    task = load_task(path)  # the last checkpoint: 30k steps
    assert list(task.configs.columns) == ["learning_rate", "ent_coef"]
    assert task.seeds == [0, 1, 2] and task.meta["checkpoint"] == 30_000
    assert task.name == "dqn_cc_acrobot_landscape@30000" and task.meta["algorithm"] == "dqn"
    np.testing.assert_allclose(task.returns[1], [103, 113, 123])
    assert np.isnan(task.returns[3, 2]) and task.meta["n_missing_runs"] == 1
    first = load_task(path, checkpoint=10_000)
    np.testing.assert_allclose(first.returns[3], [301, 311, 321])
    assert first.meta["training_budget"] == 10_000
    with pytest.raises(ValueError, match=r"checkpoint 15000 is not in column 'training_steps'; "
                       r"the file has checkpoints 10000, 20000, 30000"):
        load_task(path, checkpoint=15_000)
    with pytest.raises(ValueError, match=r"applies to ARLBench landscape files"):
        load_task(_runs(tmp_path), checkpoint=10_000)


def test_arlbench_landscape_errors_name_row_and_column(tmp_path):
    path = _landscape(tmp_path)
    df = pd.read_csv(path)
    bad = df.astype({"training_steps": object})
    bad.loc[4, "training_steps"] = "20k"
    bad.to_csv(path, index=False)
    with pytest.raises(ValueError, match=r"row 4, column 'training_steps': '20k' is not a number"):
        load_task(path)
    dup = pd.concat([df, df.iloc[[5]]], ignore_index=True)  # a run's checkpoint twice
    dup.to_csv(path, index=False)
    with pytest.raises(ValueError, match=rf"row {len(df)} repeats a \(configuration, seed\) pair"):
        load_task(path, checkpoint=int(df.loc[5, "training_steps"]))
    two = df.copy()
    two.loc[two.index[-1], "hp_config.ent_coef"] = 0.5
    two.to_csv(path, index=False)
    with pytest.raises(ValueError, match=r"config_id 3 has different hyperparameter values on "
                       r"different rows: column 'ent_coef' is 0.5 in row 34 but 0.03 in row 28"):
        load_task(path, checkpoint=20_000)
    text = df.astype({"performance": object})
    text.loc[7, "performance"] = "diverged"
    text.to_csv(path, index=False)
    with pytest.raises(ValueError, match=r"non-numeric return 'diverged' in column 'performance', "
                       r"row 7"):
        load_task(path, checkpoint=int(df.loc[7, "training_steps"]))


def test_cli_inspect_and_warm_start_with_checkpoint(tmp_path, monkeypatch):
    path = _landscape(tmp_path)
    runner = CliRunner()
    res = runner.invoke(app, ["dataset", "inspect", str(path), "--checkpoint", "20000"])
    assert res.exit_code == 0, res.output
    assert "dqn_cc_acrobot_landscape@20000" in res.output and "4x3" in res.output
    res = runner.invoke(app, ["dataset", "inspect", str(path), "--checkpoint", "5"])
    assert res.exit_code == 1 and "the file has checkpoints 10000, 20000, 30000" in res.output
    # --warm-start from landscape data: one checkpoint's runs join the data
    monkeypatch.chdir(tmp_path)
    (tmp_path / "obj.py").write_text(
        "def objective(config, seed):\n    return -config['hp_config.ent_coef'] + 0.01 * seed\n")
    (tmp_path / "space.json").write_text(
        '{"hp_config.learning_rate": ["log", 1e-6, 0.1], "hp_config.ent_coef": ["float", 0, 0.1]}')
    res = runner.invoke(app, ["optimize", "--objective", "obj:objective", "--space", "space.json",
                              "--budget", "4", "--n-init", "0", "--k-max", "2",
                              "--warm-start", str(path), "--checkpoint", "10000", "--out", "o",
                              "--no-progress"])
    assert res.exit_code == 0, res.output
    hist = pd.read_csv(tmp_path / "o" / "history.csv")
    warm = hist[hist.phase == "warm"]
    assert len(warm) == 12 and sorted(warm["return"])[:3] == [1.0, 11.0, 21.0]
    res = runner.invoke(app, ["optimize", "--objective", "obj:objective", "--space", "space.json",
                              "--checkpoint", "10000", "--out", "p", "--no-progress"])
    assert res.exit_code != 0 and "give --warm-start too" in res.output


# -- one row per run (erahbo's history.csv) ---------------------------------------------------


def test_runs_layout_with_status(tmp_path):
    path = _runs(tmp_path)
    assert detect_format(path) == "runs"
    task = load_task(path)
    assert list(task.configs.columns) == ["lr", "act"] and task.seeds == [1, 2, 3, 4]
    np.testing.assert_allclose(task.returns, [[1, 2, np.nan, np.nan], [np.nan, 6, 7, 5]])
    df = pd.read_csv(path)
    df.loc[5, "status"] = "done"
    df.to_csv(path, index=False)
    with pytest.raises(ValueError, match=r"row 5, column 'status': unknown status 'done'"):
        load_task(path)
    df.loc[5, "status"] = "ok"
    df.loc[4, "seed"] = None
    df.to_csv(path, index=False)
    with pytest.raises(ValueError, match=r"row 4, column 'seed' is empty"):
        load_task(path)
    df.loc[4, "seed"] = 2  # config 1 has seed 2 twice
    df.to_csv(path, index=False)
    with pytest.raises(ValueError, match=r"row 5 repeats a \(configuration, seed\) pair"):
        load_task(path)


def test_erahbo_history_is_a_task(tmp_path):
    task = Figure1Task()
    res = erahbo.optimize(task, task.space, method="rahbo", k=3, budget=30, n_init=3, seed=1)
    path = tmp_path / "history.csv"
    res.history.to_csv(path, index=False)
    loaded = load_task(path)
    assert loaded.meta["source_format"] == "runs"
    assert list(loaded.configs.columns) == list(task.space.names)  # bookkeeping left out
    assert loaded.n_configs == res.configs.shape[0]
    means = np.nanmean(loaded.returns, axis=1)
    np.testing.assert_allclose(np.sort(means), np.sort(res.configs["mean"]))
    parquet = tmp_path / "history.parquet"
    res.history.to_parquet(parquet)
    assert detect_format(parquet) == "runs" and load_task(parquet).n_configs == loaded.n_configs
