"""Tests of erahbo.datasets: inspect (summaries, figures, the risk trade-off) and the CLI."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from dataset_helpers import BUNDLED, _wide_csv
from erahbo.datasets.format import TaskData, read_task, write_task
from erahbo.datasets.inspect import plot_mean_std, summarize_task, summary_frame
from erahbo.datasets.synth import make_suite, make_task
from erahbo.datasets.tradeoff import tradeoff_stats
from erahbo.datasets.warping import process_outcomes

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
