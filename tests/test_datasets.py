"""Tests of erahbo.datasets: loaders, validation, outcome warping, synthetic tasks, inspect, CLI."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st
from scipy import stats
from typer.testing import CliRunner

from erahbo.datasets.format import TaskData, read_task, write_task
from erahbo.datasets.inspect import plot_mean_std, summarize_task, summary_frame
from erahbo.datasets.loaders import (
    bundled_tasks,
    detect_format,
    is_bookkeeping,
    load_task,
    load_tasks,
    scan_tasks,
)
from erahbo.datasets.synth import PAPER_LIKE, SynthSpec, make_suite, make_task
from erahbo.datasets.tradeoff import tradeoff_alpha, tradeoff_stats
from erahbo.datasets.validate import check_task, is_degenerate, validate_task
from erahbo.datasets.warping import VizierWarper, process_outcomes, vizier_warp

# -- helpers --------------------------------------------------------------------------


def _small_task(n: int = 6, s: int = 4, seed: int = 0) -> TaskData:
    rng = np.random.default_rng(seed)
    configs = pd.DataFrame({"lr": np.logspace(-4, -2, n), "act": ["tanh", "relu"] * (n // 2)})
    returns = rng.normal(np.arange(n)[:, None], 1.0, size=(n, s))
    return TaskData(configs, returns, list(range(1, s + 1)), np.arange(n), {"task": "toy"})


def _wide_csv(tmp_path, name="toy.csv", n=5, s=3):
    rows = []
    for i in range(n):
        row = {"config_id": 10 + i, "budget": 1000, "lr": 10.0 ** -(i + 1), "gamma": 0.9 + i / 100}
        row |= {f"seed_{k}": float(i + k) for k in range(1, s + 1)}
        rows.append(row)
    path = tmp_path / name
    pd.DataFrame(rows).to_csv(path, index=False)
    return path


BUNDLED = Path(__file__).resolve().parents[1] / "data" / "arlbench"  # the real tables
RH_HEADER = "config_id,run_id,budget,performance,hp_config.learning_rate,"
RUNHISTORY = f"""{RH_HEADER}hp_config.use_target_network,hp_config.tau
0,0,100000,"[1.0, 2.0, nan]",0.001,True,0.5
1,1,100000,"[3.0, 4.5, 5.0]",0.01,False,None
2,2,100000,"[2.0 2.5 3.0]",0.0001,True,0.1
"""


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


# -- synthetic tasks ------------------------------------------------------------------


def test_synth_shapes_determinism_metadata():
    a = make_task("synth_ppo_brax_halfcheetah", n_configs=64, n_seeds=10, seed=5)
    b = make_task("synth_ppo_brax_halfcheetah", n_configs=64, n_seeds=10, seed=5)
    c = make_task("synth_ppo_brax_halfcheetah", n_configs=64, n_seeds=10, seed=6)
    assert a.returns.shape == (64, 10) and a.seeds == list(range(1, 11))
    np.testing.assert_array_equal(a.returns, b.returns)
    pd.testing.assert_frame_equal(a.configs, b.configs)
    assert not np.array_equal(np.nan_to_num(a.returns), np.nan_to_num(c.returns))
    m = a.meta
    assert m["synthetic"] is True and m["domain"] == "synthetic" and m["domain_like"] == "brax"
    assert m["generator"] == "erahbo.datasets.synth" and "not real RL data" in m["provenance"]
    infeasible = np.isnan(a.returns).any(axis=1).sum()
    assert infeasible == m["n_nan_configs"] == round(182 / 512 * 64)
    check_task(a)


def test_synth_space_and_outcome_shape():
    space_mod = pytest.importorskip("erahbo.space")
    task = make_task("synth_ppo_cc_pendulum", seed=0)
    space = space_mod.SearchSpace.from_json(task.meta["search_space"])
    assert space.names == list(task.configs.columns)
    lr = task.configs["learning_rate"]
    assert lr.min() >= 1e-6 and lr.max() <= 0.1
    r = validate_task(task)[0].returns
    mean, std = r.mean(axis=1), r.std(axis=1, ddof=1)
    assert std.max() > 10 * np.median(std[mean < np.quantile(mean, 0.1)])  # heteroscedastic
    assert np.median(stats.skew(r, axis=1)) < 0  # left-skewed (collapses)
    low = task.meta["synth_spec"]["low"]
    near_low = (r < low + 0.1 * (task.meta["synth_spec"]["high"] - low)).mean(axis=1)
    assert ((near_low > 0.05) & (near_low < 0.9) & (mean > np.median(mean))).any()  # bimodal


def test_synth_risk_knob_and_tradeoff():
    # The generator (not only the bundled files): with risk = 1 the best-mean configuration
    # collapses on some seeds and loses MV; with risk = 0 there is no trade-off.
    strong, none = [], []
    for name in ("synth_ppo_cc_pendulum", "synth_dqn_cc_cartpole", "synth_sac_brax_fast"):
        spec = next(s for s in PAPER_LIKE if s.name == name)
        for risk, out in ((1.0, strong), (0.0, none)):
            task = make_task(replace(spec, risk=risk), n_configs=256, n_seeds=30, seed=11)
            out.append(tradeoff_stats(task, n_designs=2))
            clean = validate_task(task)[0]
            best = int(np.argmax(process_outcomes(clean, "vizier").returns.mean(axis=1)))
            collapsed = (clean.returns[best] == spec.low).mean()  # collapsed runs end at low
            assert (0.03 < collapsed < 0.4) if risk else collapsed == 0.0
    assert all(s.best_mean_rank > 1 for s in strong)
    assert np.mean([s.best_mean_regret for s in strong]) >= 0.1
    assert max(s.best_mean_regret for s in none) < 0.02


def test_synth_spec_validation():
    with pytest.raises(ValueError, match="algorithm 'a2c' is unknown"):
        SynthSpec("a2c", "cc", "x", 0.0, 1.0)
    with pytest.raises(ValueError, match="low < high"):
        SynthSpec("ppo", "cc", "x", 1.0, 0.0)
    with pytest.raises(ValueError, match="risk=-1"):
        SynthSpec("ppo", "cc", "x", 0.0, 1.0, risk=-1.0)
    with pytest.raises(ValueError, match=r"nan_frac=1\.5"):
        SynthSpec("ppo", "cc", "x", 0.0, 1.0, nan_frac=1.5)
    tiny = make_task(SynthSpec("sac", "cc", "x", 0.0, 1.0, nan_frac=1.0), n_configs=4, n_seeds=2)
    assert np.isnan(tiny.returns).any(axis=1).all()


def test_make_suite_names_and_domains():
    suite = make_suite(21, seed=2, n_configs=16, n_seeds=3)
    names = [t.name for t in suite]
    assert len(set(names)) == 21 and names[19] == PAPER_LIKE[0].name + "_r1"
    first19 = [t.meta["domain_like"] for t in suite[:19]]
    assert (first19.count("cc"), first19.count("brax"), first19.count("xland")) == (10, 4, 5)
    with pytest.raises(ValueError, match="n_tasks"):
        make_suite(0)


# -- inspect and CLI ------------------------------------------------------------------


def test_summary_and_plot(tmp_path):
    task = make_task("synth_dqn_cc_cartpole", n_configs=64, n_seeds=8, seed=1)
    task.returns[3, 2] = np.nan
    s = summarize_task(task)
    assert (s.n_configs, s.n_seeds, s.n_nan_values, s.n_infeasible) == (64, 8, 1, 1)
    assert s.std_min <= s.std_median <= s.std_max and -1 <= s.corr_mean_std <= 1
    assert s.domain == "cc" and not s.degenerate
    frame = summary_frame([s])
    assert {"mean_q50", "std_q95"} <= set(frame.columns)
    png = plot_mean_std(task, tmp_path / "plots" / "x.png")
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_cli_inspect_and_synth(tmp_path):
    from erahbo.cli import app

    runner = CliRunner()
    out = tmp_path / "suite"
    res = runner.invoke(
        app,
        ["dataset", "synth", "--out", str(out), "--tasks", "2", "--configs", "16", "--seeds", "4"],
    )
    assert res.exit_code == 0, res.output
    files = sorted(out.glob("*.parquet"))
    assert len(files) == 2 and read_task(files[0]).returns.shape == (16, 4)
    csv = _wide_csv(tmp_path)
    res = runner.invoke(
        app,
        ["dataset", "inspect", str(out), str(csv), "--plot-dir", str(tmp_path / "p")],
        env={"COLUMNS": "200"},
    )
    assert res.exit_code == 0, res.output
    assert "synth_ppo_cc_pendulum" in res.output and "toy" in res.output
    assert len(list((tmp_path / "p").glob("*.png"))) == 3
    res = runner.invoke(app, ["dataset", "inspect", str(csv), "--hp-columns", "lr,nope"])
    assert res.exit_code == 1 and "missing hyperparameter column" in res.output


def test_cli_tables_are_not_cut_when_piped(tmp_path):
    """Without a terminal (logs, pipes) tables get 120 columns, not rich's 80."""
    from erahbo.cli import app

    out = tmp_path / "suite"
    runner = CliRunner()
    res = runner.invoke(app, ["dataset", "synth", "--out", str(out), "--tasks", "1",
                              "--configs", "8", "--seeds", "3"])
    assert res.exit_code == 0, res.output
    res = runner.invoke(app, ["dataset", "inspect", str(out)], env={"COLUMNS": ""})
    assert res.exit_code == 0, res.output
    assert "corr" in res.output and "alpha*" in res.output  # headers kept when piped


def test_cli_inspect_fits_80_and_120_columns(tmp_path):
    from erahbo.cli import app

    out = tmp_path / "suite"
    runner = CliRunner()
    res = runner.invoke(app, ["dataset", "synth", "--out", str(out), "--tasks", "8",
                              "--configs", "8", "--seeds", "3"])
    assert res.exit_code == 0, res.output
    names = sorted(p.stem for p in out.glob("*.parquet"))
    for width in (80, 120):
        res = runner.invoke(app, ["dataset", "inspect", str(out)], env={"COLUMNS": str(width)})
        assert res.exit_code == 0, res.output
        assert max(map(len, res.output.splitlines())) <= width
        for name in names:  # every task name whole, and every header
            assert f" {name}* " in res.output, (width, name)
        for head in ("task", "N x S", "NaN", "std", "corr", "rank (regret)", "alpha*"):
            assert head in res.output, (width, head)
        assert ("domain" in res.output) == (width >= 110)


def test_directories_skip_generation_shards(tmp_path):
    from erahbo.datasets.loaders import expand_paths

    task = make_suite(1, seed=0, n_configs=8, n_seeds=3)[0]
    write_task(task, tmp_path / "a.parquet")
    shards = tmp_path / "shards" / "a"
    shards.mkdir(parents=True)
    (shards / "plan.json").write_text("{}")
    write_task(task, shards / "shard-00000.parquet")
    assert expand_paths(tmp_path) == [tmp_path / "a.parquet"]  # shards are parts of a task
    with pytest.raises(ValueError, match="merge-shards"):
        expand_paths(shards)


def test_cli_inspect_shows_the_risk_tradeoff(tmp_path):
    """The trade-off column: MV rank of the best-mean configuration, on the benchmark's scale."""
    from erahbo.cli import app

    sign = np.tile([1.0, -1.0], 10)  # (20,)
    returns = np.stack([1.0 + 0.01 * sign, 2.0 + 2.0 * sign, 0.01 * sign])  # (3, 20)
    # the best mean (2.0) is the risky configuration: its MV is 2 - 4.2 < 1
    configs = pd.DataFrame({"lr": [0.1, 0.2, 0.3]})
    write_task(TaskData(configs=configs, returns=returns, seeds=list(range(1, 21)),
                        config_ids=np.arange(3), meta={"task": "risky"}),
               tmp_path / "risky.parquet")
    runner = CliRunner()
    args = ["dataset", "inspect", str(tmp_path / "risky.parquet"), "--outcome-processing", "none"]
    res = runner.invoke(app, args, env={"COLUMNS": "200"})
    assert res.exit_code == 0, res.output
    expected = tradeoff_stats(read_task(tmp_path / "risky.parquet"), outcome_processing="none")
    assert expected.best_mean_rank == 3  # below both safe configurations
    assert f"3 ({expected.best_mean_regret:.2f})" in res.output
    res = runner.invoke(app, [*args, "--alpha", "0"], env={"COLUMNS": "200"})
    assert "1 (0.00)" in res.output  # risk-neutral: the best mean is MV-optimal
    res = runner.invoke(app, [*args[:-1], "warped"])
    assert res.exit_code == 1 and "--outcome-processing 'warped'" in res.output
    res = runner.invoke(app, [*args, "--alpha", "-1"], env={"COLUMNS": "200"})
    # refused by the shared rule, not shown as a degenerate task ("-")
    assert res.exit_code == 1 and "alpha=-1.0 is negative" in res.output
    (tmp_path / "afile").write_text("x")
    res = runner.invoke(app, [*args, "--plot-dir", str(tmp_path / "afile" / "figs")],
                        env={"COLUMNS": "200"})
    assert res.exit_code == 1 and "--plot-dir" in res.output and "is a file" in res.output


def test_inspect_flags_tasks_where_most_configurations_tie_at_the_optimum(tmp_path):
    """A sparse-reward table at a high alpha: most configurations never learn (-200 on every
    seed, no spread) and tie at the MV optimum; a few learn with a large spread. Normalized
    regret (1 = the average configuration) is ill-conditioned there, and inspect says so."""
    from erahbo.cli import app

    rng = np.random.default_rng(0)
    learn = -150.0 + 30.0 * rng.standard_normal((3, 20))  # (3, 20) learn, with a spread
    returns = np.vstack([np.full((7, 20), -200.0), learn])  # (10, 20)
    configs = pd.DataFrame({"lr": np.linspace(0.1, 1.0, 10)})
    write_task(TaskData(configs=configs, returns=returns, seeds=list(range(1, 21)),
                        config_ids=np.arange(10), meta={"task": "sparse"}),
               tmp_path / "sparse.parquet")
    task = read_task(tmp_path / "sparse.parquet")
    high = tradeoff_stats(task, alpha=1.0, outcome_processing="none")
    assert high.near_optimal_share == pytest.approx(0.7) and high.ill_conditioned
    low = tradeoff_stats(task, alpha=0.0, outcome_processing="none")  # the mean decides
    assert not low.ill_conditioned
    runner = CliRunner()
    args = ["dataset", "inspect", str(tmp_path / "sparse.parquet"), "--outcome-processing",
            "none"]
    res = runner.invoke(app, args, env={"COLUMNS": "200"})
    assert res.exit_code == 0, res.output
    assert "sparse: 70% of the configurations are within 1 % of the MV optimum" in res.output
    assert "ill-conditioned" in res.output
    res = runner.invoke(app, [*args, "--alpha", "0"], env={"COLUMNS": "200"})
    assert res.exit_code == 0 and "ill-conditioned" not in res.output


def test_the_report_notes_ill_conditioned_tasks(tmp_path):
    """At min-max alpha 10, 84 % of ppo_cc_mountain_car's configurations never learn and tie
    at the MV optimum: the report says its normalized regret is ill-conditioned; ppo_cc_acrobot
    gets no such note. (The notes of the traces are the report's first notes:
    test_analysis.py::test_report_writes_all_files; reading them skips the figures.)"""
    from erahbo.analysis.traces import load_traces
    from erahbo.cli import app

    runner = CliRunner()
    out = tmp_path / "b"
    res = runner.invoke(app, ["benchmark", str(BUNDLED / "ppo_cc_mountain_car.parquet"),
                              str(BUNDLED / "ppo_cc_acrobot.parquet"), "--methods", "rahbo-k2",
                              "--alpha", "10", "--outcome-processing", "minmax", "--protocol",
                              "user", "--repetitions", "1", "--budget", "30", "--out", str(out),
                              "--no-report"])
    assert res.exit_code == 0, res.output
    notes = load_traces(out).notes
    assert any(n.startswith("task ppo_cc_mountain_car: 84% of the configurations") and
               "ill-conditioned" in n for n in notes)
    assert not any("ppo_cc_acrobot" in n for n in notes)


def test_benchmark_optima_are_on_the_benchmark_scale():
    from erahbo.datasets.inspect import benchmark_optima

    sign = np.tile([1.0, -1.0], 10)  # (20,)
    returns = np.stack([1.0 + 0.01 * sign, 2.0 + 2.0 * sign, 0.01 * sign])  # (3, 20)
    task = TaskData(configs=pd.DataFrame({"lr": [0.1, 0.2, 0.3]}), returns=returns,
                    seeds=list(range(1, 21)), config_ids=np.arange(3), meta={"task": "t"})
    (bm, bs), (mm, ms) = benchmark_optima(task, outcome_processing="none")
    assert (bm, bs) == pytest.approx((2.0, returns[1].std(ddof=1)))  # best mean: the risky one
    assert (mm, ms) == pytest.approx((1.0, returns[0].std(ddof=1)))  # MV optimum: the safe one
    (_, _), (mm0, _) = benchmark_optima(task, alpha=0.0, outcome_processing="none")
    assert mm0 == pytest.approx(2.0)


def test_minmax_outcome_processing_is_linear_onto_unit_interval():
    returns = np.array([[10.0, 20.0, np.nan], [30.0, 50.0, 40.0]])
    task = TaskData(configs=pd.DataFrame({"lr": [0.1, 0.2]}), returns=returns,
                    seeds=[1, 2, 3], config_ids=np.arange(2), meta={"task": "t"})
    out = process_outcomes(task, "minmax")
    np.testing.assert_allclose(out.returns, [[0.0, 0.25, np.nan], [0.5, 1.0, 0.75]])
    assert out.meta["outcome_processing"] == {"method": "minmax", "low": 10.0, "high": 50.0,
                                              "fitted_on": "all per-seed returns of the task"}
    flat = replace(task, returns=np.full((2, 3), 7.0))
    np.testing.assert_array_equal(process_outcomes(flat, "minmax").returns, 0.0)
    with pytest.raises(ValueError, match="already processed"):
        process_outcomes(out, "vizier")
    # the replay benchmark takes it like the other processings
    from erahbo.experiments.replay import prepare_task

    rt = prepare_task(replace(task, returns=np.nan_to_num(returns, nan=25.0)),
                      outcome_processing="minmax")
    assert rt.returns.min() == 0.0 and rt.returns.max() == 1.0
