"""Tables with adaptive seed counts (configurations on different numbers of seeds).

Rule: the loaders record how many runs each configuration has (``meta["seeds_per_config"]``),
``erahbo dataset inspect`` describes every configuration by its own seeds (no NaN statistics)
and says how many seeds they have; a seed a configuration was not run on is not a failure.
"""

from __future__ import annotations

import json
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from erahbo.datasets.format import SEEDS_PER_CONFIG, TaskData
from erahbo.datasets.inspect import plot_mean_std, summarize_task, summary_frame
from erahbo.datasets.loaders import load_task
from erahbo.datasets.seed_counts import run_stats, seeds_per_config
from erahbo.datasets.validate import validate_task

pytest.importorskip("yaml")
from hydra_plugins.erahbo_sweeper._outputs import runhistory_frame

# (config_id, lr, [(seed, return or None for a failed run), ...])
RUNS = [
    (0, 0.1, [(3, 1.0), (7, 2.0)]),
    (1, 0.2, [(1, 1.0), (2, 2.0), (5, 3.0)]),
    (2, 0.3, [(4, 4.0), (8, 5.0), (9, 6.0), (11, 5.0)]),
    (3, 0.4, [(6, 0.0), (10, None)]),  # a failed run: infeasible
    (4, 0.5, [(12, 7.0)]),  # one seed: no std
]
STD = [np.std([1, 2], ddof=1), np.std([1, 2, 3], ddof=1), np.std([4, 5, 6, 5], ddof=1)]


def _history() -> pd.DataFrame:
    rows = [{"config_id": c, "seed": s, "return": np.nan if r is None else r,
             "status": "penalized" if r is None else "ok", "lr": lr}
            for c, lr, runs in RUNS for s, r in runs]
    return pd.DataFrame(rows)


def _sweeper_runhistory(tmp_path):
    result = SimpleNamespace(history=_history())
    path = tmp_path / "ppo_cc_cartpole" / "runhistory.csv"
    path.parent.mkdir()
    runhistory_frame(result, ["lr"], 1.0).to_csv(path, index=False)
    return path


def _check_summary(task: TaskData, n_seeds: int) -> None:
    s = summarize_task(task)
    assert s.adaptive and s.seed_counts == {1: 1, 2: 2, 3: 1, 4: 1}
    assert (s.n_configs, s.n_seeds, s.n_nan_values, s.n_infeasible, s.n_few_seeds) == (
        5, n_seeds, 1, 1, 1)
    assert (s.std_min, s.std_median, s.std_max) == pytest.approx(
        (min(STD), float(np.median(STD)), max(STD)))
    assert np.isfinite(s.corr_mean_std) and not s.degenerate
    assert s.mean_quantiles[2] == pytest.approx(2.0)  # the median of the means 1.5, 2, 5
    assert summary_frame([s])["seed_counts"].iloc[0] == "1:1 2:2 3:1 4:1"


def test_sweeper_runhistory_statistics_per_configuration(tmp_path):
    """The Hydra sweeper's runhistory.csv (as its writer writes it): runs per configuration
    from the 'seeds' lists, a failed run told from a seed not run."""
    path = _sweeper_runhistory(tmp_path)
    task = load_task(path)
    assert task.meta[SEEDS_PER_CONFIG] == [2, 3, 4, 2, 1]
    _check_summary(task, 4)  # columns: run positions
    png = plot_mean_std(task, tmp_path / "plot.png")
    assert png.read_bytes()[:4] == b"\x89PNG"


def test_erahbo_history_runs_statistics_per_configuration(tmp_path):
    """erahbo's history.csv layout (one row per run, status column): the same statistics."""
    path = tmp_path / "history.csv"
    _history().to_csv(path, index=False)
    task = load_task(path, fmt="runs")
    assert task.meta[SEEDS_PER_CONFIG] == [2, 3, 4, 2, 1]
    _check_summary(task, 12)  # columns: the 12 distinct seeds


def test_hypersweeper_dense_runhistory_empty_cells_are_seeds_not_run(tmp_path):
    """A Hypersweeper runhistory (performance_seed_<s>) with empty cells: each configuration
    is described by the seeds it has; an empty cell is not a failure."""
    df = pd.DataFrame({"config_id": [0, 1, 2, 3], "performance": [1.5, 2.0, 5.0, 0.5],
                       "performance_seed_0": [1.0, 1.0, 4.0, 0.0],
                       "performance_seed_1": [2.0, 2.0, 6.0, 1.0],
                       "performance_seed_2": [None, 3.0, None, None],
                       "budget": [None] * 4, "lr": [0.1, 0.2, 0.3, 0.4]})
    path = tmp_path / "runhistory.csv"
    df.to_csv(path, index=False)
    task = load_task(path)
    assert seeds_per_config(task).tolist() == [2, 3, 2, 2]
    s = summarize_task(task)
    assert (s.n_nan_values, s.n_infeasible, s.seed_counts) == (0, 0, {2: 3, 3: 1})
    std = [np.std(v, ddof=1) for v in ([1, 2], [1, 2, 3], [4, 6], [0, 1])]
    assert (s.std_min, s.std_max) == pytest.approx((min(std), max(std)))


def test_full_tables_are_unchanged(tmp_path):
    """Every configuration on every seed: no key, a NaN is a failed run as before."""
    rows = [{"config_id": c, "seed": s, "return": 10.0 * c + s, "lr": 0.1 * (c + 1)}
            for c in range(3) for s in (1, 2, 3)]
    path = tmp_path / "runs.csv"
    pd.DataFrame(rows).to_csv(path, index=False)
    task = load_task(path)
    assert SEEDS_PER_CONFIG not in task.meta and seeds_per_config(task) is None
    task.returns[1, 2] = np.nan
    s = summarize_task(task)
    assert not s.adaptive and s.seed_counts == {3: 3}
    assert (s.n_nan_values, s.n_infeasible, s.std_min, s.std_max) == (1, 1, 1.0, 1.0)


def test_validation_filters_the_counts_with_the_rows(tmp_path):
    """The benchmark's NaN policy keeps the configurations with every seed; the counts follow
    the rows kept and the report says why the others went."""
    task = load_task(_sweeper_runhistory(tmp_path))
    clean, report = validate_task(task)
    assert clean.n_configs == 1 and clean.meta[SEEDS_PER_CONFIG] == [4]
    assert any("adaptive seed counts: 4 of 5 configurations ran on fewer than 4 seeds" in m
               for m in report.messages)


def test_inconsistent_counts_are_refused():
    """A count below the row's number of returns, or of the wrong length: one clear message."""
    task = TaskData(configs=pd.DataFrame({"lr": [0.1, 0.2]}),
                    returns=np.array([[1.0, 2.0], [3.0, np.nan]]), seeds=[0, 1],
                    config_ids=np.arange(2), meta={"task": "t", SEEDS_PER_CONFIG: [1, 1]})
    with pytest.raises(ValueError, match=r"row 0 has 2 returns but meta\['seeds_per_config'\]"):
        seeds_per_config(task)
    task.meta[SEEDS_PER_CONFIG] = [2]
    with pytest.raises(ValueError, match=r"one count in 0..2 per configuration \(2\); got 1"):
        seeds_per_config(task)


def test_run_stats_by_hand():
    r = np.array([[1.0, 3.0, np.nan], [2.0, np.nan, np.nan], [np.nan, np.nan, np.nan]])
    mean, std, n, failed = run_stats(r, np.array([2, 2, 0]))
    np.testing.assert_allclose(mean, [2.0, 2.0, np.nan])
    np.testing.assert_allclose(std, [np.sqrt(2.0), np.nan, np.nan])
    assert n.tolist() == [2, 1, 0] and failed.tolist() == [0, 1, 0]


@pytest.mark.parametrize(
    ("seeds", "message"),
    [
        ("not a list", r"row 1, column 'seeds': 'not a list' is not a list of seeds"),
        ("[1, 2, 3, 4, 5]", r"row 1, column 'seeds' lists 5 seeds but the file has 4"),
        ("[1]", r"row 1, column 'seeds' lists 1 seeds but the row has a return in "
                r"'performance_run_2'"),
    ],
)
def test_sweeper_seeds_column_errors(tmp_path, seeds, message):
    path = _sweeper_runhistory(tmp_path)
    df = pd.read_csv(path)
    df.loc[1, "seeds"] = seeds
    df.to_csv(path, index=False)
    with pytest.raises(ValueError, match=message):
        load_task(path)


def test_cli_inspect_says_how_many_seeds(tmp_path):
    from erahbo.cli import app

    path = _sweeper_runhistory(tmp_path)
    res = CliRunner().invoke(app, ["dataset", "inspect", str(path)], env={"COLUMNS": "200"})
    assert res.exit_code == 0, res.output
    text = " ".join(res.output.split())
    assert "5x1-4" in text and "nan" not in text  # no NaN statistic (the header is "NaN")
    assert "adaptive seed counts, seeds per configuration (configurations): 1 (1), 2 (2), " \
           "3 (1), 4 (1)" in text
    assert "1 with fewer than 2 seeds have no std" in text
    assert json.loads(pd.read_csv(path)["seeds"].iloc[4]) == [12]


def test_own_seeds_of_equal_count_show_that_count(tmp_path):
    """Every configuration on 2 seeds of its own (6 seed values in all): '3x2', not '3x6'."""
    from erahbo.cli import app

    rows = [{"config_id": c, "seed": 10 * c + j, "return": float(c + j), "lr": 0.1 * (c + 1)}
            for c in range(3) for j in (1, 2)]
    path = tmp_path / "runs.csv"
    pd.DataFrame(rows).to_csv(path, index=False)
    s = summarize_task(load_task(path))
    assert s.n_seeds == 6 and s.adaptive and s.seed_counts == {2: 3} and s.n_infeasible == 0
    res = CliRunner().invoke(app, ["dataset", "inspect", str(path)], env={"COLUMNS": "200"})
    text = " ".join(res.output.split())
    assert res.exit_code == 0 and " 3x2 " in text and "(configurations): 2 (3)." in text
