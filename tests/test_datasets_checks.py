"""Tests of erahbo.datasets: validation of a task, outcome warping."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from dataset_helpers import RUNHISTORY, _small_task, _wide_csv
from erahbo.datasets.loaders import load_task
from erahbo.datasets.validate import check_task, is_degenerate, validate_task
from erahbo.datasets.warping import VizierWarper, process_outcomes, vizier_warp

# -- validation -----------------------------------------------------------------------


def test_missing_columns_error(tmp_path):
    path = _wide_csv(tmp_path)
    with pytest.raises(ValueError, match=r"missing hyperparameter column\(s\) \['momentum'\]"):
        load_task(path, hp_columns=["lr", "momentum"])
    with pytest.raises(ValueError, match=r"missing return column\(s\) \['seed_9'\]"):
        load_task(path, return_columns=["seed_1", "seed_9"])


def test_non_numeric_returns_error(tmp_path):
    path = _wide_csv(tmp_path)
    df = pd.read_csv(path)
    df["seed_2"] = df["seed_2"].astype(object)
    df.loc[3, "seed_2"] = "diverged"
    df.to_csv(path, index=False)
    with pytest.raises(ValueError, match="non-numeric return 'diverged' in column 'seed_2', row 3"):
        load_task(path)
    rh = tmp_path / "runhistory.csv"
    rh.write_text(RUNHISTORY.replace("[3.0, 4.5, 5.0]", "[3.0, oops, 5.0]"))
    with pytest.raises(ValueError, match="row 1: non-numeric value in 'performance'"):
        load_task(rh)


def test_fewer_than_two_seeds_error(tmp_path):
    path = _wide_csv(tmp_path, s=1)
    with pytest.raises(ValueError, match="1 seed\\(s\\) per configuration; at least 2"):
        load_task(path)
    rh = tmp_path / "runhistory.csv"
    pd.DataFrame({"config_id": [0, 1], "performance": [1.0, 2.0], "lr": [0.1, 0.2]}).to_csv(
        rh, index=False
    )
    with pytest.raises(ValueError, match="each configuration has 1 seed"):
        load_task(rh)


def test_duplicate_configurations_error(tmp_path):
    path = _wide_csv(tmp_path)
    df = pd.read_csv(path)
    df.loc[4, ["lr", "gamma"]] = df.loc[1, ["lr", "gamma"]].to_numpy()
    df.to_csv(path, index=False)
    with pytest.raises(ValueError, match="duplicate configurations: rows 1 and 4"):
        load_task(path)


def test_check_task_other_errors():
    task = _small_task()
    task.returns[0, 0] = np.inf
    with pytest.raises(ValueError, match=r"\+inf return"):
        check_task(task)
    task = _small_task()
    task.configs = task.configs.iloc[:, :0]
    with pytest.raises(ValueError, match="no hyperparameter columns"):
        check_task(task)


def test_nan_policy_counts():
    task = _small_task(n=8, s=5)
    task.returns[1, 0] = np.nan
    task.returns[1, 3] = np.nan
    task.returns[4, :] = np.nan
    task.returns[6, 2] = -np.inf  # a diverged run counts as failed
    out, rep = validate_task(task)
    assert (rep.n_configs_in, rep.n_configs_out, rep.n_infeasible) == (8, 5, 3)
    assert rep.n_nan_values == 2 + 5 + 1
    assert rep.infeasible_ids == [1, 4, 6]
    assert not np.isnan(out.returns).any()
    np.testing.assert_array_equal(out.config_ids, [0, 2, 3, 5, 7])
    assert "3 infeasible configuration(s)" in rep.messages[0]
    kept, rep_k = validate_task(task, filter_infeasible=False)
    assert kept.n_configs == 8 and rep_k.n_infeasible == 3


def test_degenerate_detection():
    task = _small_task()
    task.returns[:] = 0.0
    _, rep = validate_task(task)
    assert rep.degenerate and "degenerate" in rep.messages[-1]
    assert not is_degenerate(_small_task().returns)
    one_left = _small_task(n=2)
    one_left.returns[0, 0] = np.nan
    assert validate_task(one_left)[1].degenerate  # fewer than 2 feasible configurations


# -- outcome warping ------------------------------------------------------------------


def test_warp_matches_hand_computed_values():
    # y = [1, 2, 3, 4]: median 2.5, j = 2, den = 2, sigma = sqrt(((3-2.5)^2 + (4-2.5)^2)/2).
    sigma = np.sqrt(1.25)
    h = np.array([2.5 + sigma * stats.norm.ppf(0.125), 2.5 + sigma * stats.norm.ppf(0.375), 3, 4])
    z = 0.5 - np.log1p(0.5 * (4 - h) / (4 - h[0])) / np.log(1.5)
    p, b = 4.5 / 5, -2.0  # b = -0.5 - (0.5 * 1 + 1)
    expected = z - p * z.mean() - (1 - p) * b
    np.testing.assert_allclose(vizier_warp(np.array([1.0, 2.0, 3.0, 4.0])), expected, atol=1e-12)
    np.testing.assert_allclose(expected, [-0.273854, 0.017023, 0.319065, 0.726146], atol=1e-5)


def test_warp_properties():
    rng = np.random.default_rng(1)
    y = np.concatenate([rng.gamma(2.0, 50.0, 200), [np.nan] * 5])
    w = VizierWarper().fit(y)
    z = w.transform(y)
    fin = ~np.isnan(y)
    order = np.argsort(y[fin])
    assert np.all(np.diff(z[fin][order]) >= 0)  # monotone
    assert np.isclose(z[fin].max(), 0.5 + w.shift_)  # best -> 0.5 (before the shift)
    assert np.isclose(z[fin].min(), -0.5 + w.shift_)  # worst -> -0.5
    assert np.all(z[~fin] < z[fin].min())  # NaN -> below the worst
    assert np.isfinite(z).all()
    grid = np.linspace(y[fin].min() - 100, y[fin].max() + 500, 400)
    assert np.all(np.diff(w.transform(grid)) > 0)  # new values: still monotone
    no_nan = vizier_warp(y[fin])
    assert 0.5 < no_nan.max() < 0.8  # best near 0.5 when all runs are feasible


def test_warp_edge_cases():
    np.testing.assert_array_equal(vizier_warp(np.array([3.0, 3.0])), [0.0, 0.0])
    np.testing.assert_array_equal(vizier_warp(np.array([np.nan, -np.inf])), [-1.0, -1.0])
    with pytest.raises(ValueError, match=r"\+inf"):
        vizier_warp(np.array([1.0, np.inf]))
    with pytest.raises(ValueError, match="call fit"):
        VizierWarper().transform(np.array([1.0]))


def test_process_outcomes():
    task = _small_task(n=10, s=6)
    same = process_outcomes(task, "none")
    np.testing.assert_array_equal(same.returns, task.returns)
    warped = process_outcomes(task, "vizier")
    np.testing.assert_allclose(warped.returns, vizier_warp(task.returns.ravel()).reshape(10, 6))
    info = warped.meta["outcome_processing"]
    assert info["method"] == "vizier" and info["n_values"] == 60
    assert "outcome_processing" not in task.meta  # input untouched
    with pytest.raises(ValueError, match="already processed"):
        process_outcomes(warped, "vizier")
    with pytest.raises(ValueError, match="unknown"):
        process_outcomes(task, "zscore")
