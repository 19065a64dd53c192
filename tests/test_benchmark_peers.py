"""The peers in the offline benchmark: Optuna TPE (optuna-tpe-k<K>) and SMAC3 (smac)."""

from __future__ import annotations

import importlib.util

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from erahbo.cli import app
from erahbo.datasets.format import write_task
from erahbo.datasets.synth import make_task
from erahbo.experiments import StudySettings, parse_method, prepare_task, run_repetition
from erahbo.experiments.traces import TRACE_COLUMNS

needs_optuna = pytest.mark.skipif(importlib.util.find_spec("optuna") is None,
                                  reason="the optuna extra is not installed "
                                         "(pip install erahbo[optuna])")
needs_smac = pytest.mark.skipif(importlib.util.find_spec("smac") is None,
                                reason="the smac extra (SMAC3 2.x) is not installed "
                                       "(pip install erahbo[smac])")


@pytest.fixture(scope="module")
def small_task():
    return make_task("synth_ppo_cc_acrobot", n_configs=64, n_seeds=12, seed=3)


@pytest.fixture(scope="module")
def replay_task(small_task):
    return prepare_task(small_task)


def test_grammar():
    spec = parse_method("optuna-tpe-k3")
    assert (spec.method, spec.options, spec.label) == ("optuna-tpe", {"k": 3}, "Optuna TPE (k=3)")
    with pytest.raises(ValueError, match="k must be >= 2"):
        parse_method("optuna-tpe-k1")
    with pytest.raises(ValueError, match="runs sequentially"):
        parse_method("optuna-tpe-k3-p2")


@needs_optuna
@pytest.mark.parametrize("protocol", ["user", "paper"])
def test_tpe_trace(replay_task, protocol):
    settings = StudySettings(budget=60, k_init=4, protocol=protocol)
    trace, meta = run_repetition(replay_task, parse_method("optuna-tpe-k3"), 0, settings)
    assert list(trace.columns) == list(TRACE_COLUMNS)
    assert len(trace) == 60 and trace["run"].tolist() == list(range(1, 61))
    assert (trace.groupby("round")["k_round"].first() == 3).all()
    assert (trace.groupby("round").size() == 3).all()
    mv_star = replay_task.mv_star
    np.testing.assert_allclose(trace["simple_regret"], mv_star - trace["incumbent_mv"])
    np.testing.assert_allclose(trace["cumulative_regret"],
                               np.cumsum(mv_star - trace["config_mv"]))
    counts = trace["config_id"].value_counts()
    for cid in meta["initial_config_ids"]:
        counts[cid] = counts.get(cid, 0) + 4
    assert counts.max() <= replay_task.n_seeds  # stored seeds drawn without replacement
    # the incumbent is the trial with the best sample MV so far: it changes only at a trial's end
    last = trace.groupby("round").tail(1)
    assert set(trace["incumbent_id"]) <= set(trace["config_id"]) | set(
        meta["initial_config_ids"])
    assert (last["stop_reason"] == "fixed_k").all()
    if protocol == "paper":
        assert len(meta["initial_config_ids"]) == 5 and meta["k_init"] == 4
        assert meta["init_regret"] == pytest.approx(
            mv_star - replay_task.mv[meta["initial_config_ids"]].mean())
    else:
        assert meta["initial_config_ids"] == []
        assert meta["init_regret"] == pytest.approx(mv_star - replay_task.mv.mean())
    again, _ = run_repetition(replay_task, parse_method("optuna-tpe-k3"), 0, settings)
    pd.testing.assert_frame_equal(trace, again)  # seeded: reproducible


@needs_optuna
def test_tpe_refused_when_k_exceeds_the_stored_seeds(replay_task, tmp_path):
    from erahbo.experiments import run_study

    with pytest.raises(ValueError, match="optuna-tpe-k13 needs 13 seeds"):
        run_study([replay_task], [parse_method("optuna-tpe-k13")], 1,
                  StudySettings(budget=30, protocol="user"), tmp_path)


@needs_optuna
def test_benchmark_cli_user_protocol_with_the_tpe_peer(small_task, tmp_path):
    path = tmp_path / "task.parquet"
    write_task(small_task, path)
    out = tmp_path / "res"
    res = CliRunner().invoke(app, ["benchmark", str(path), "--methods", "erahbo,optuna-tpe-k3",
                                   "--protocol", "user", "--repetitions", "1", "--budget", "40",
                                   "--workers", "1", "--out", str(out)])
    assert res.exit_code == 0, res.output
    assert (out / "report" / "report.md").exists()
    text = (out / "report" / "report.md").read_text()
    assert "Optuna TPE (k=3)" in text
    assert "each method's own initial design included (user's protocol)" in text
    assert "the table's average configuration" in text


# --------------------------------------------------------------------------- SMAC3


def test_smac_grammar():
    spec = parse_method("smac")
    assert (spec.name, spec.method, spec.label) == ("smac", "smac", "SMAC3")
    with pytest.raises(ValueError, match="runs sequentially"):
        parse_method("smac-p2")


def _check_smac_trace(task, trace, meta, budget):
    """What every SMAC trace obeys, whatever SMAC chose."""
    assert list(trace.columns) == list(TRACE_COLUMNS)
    assert trace["run"].tolist() == list(range(1, len(trace) + 1))
    assert len(trace) <= budget
    # one SMAC trial = one training run = one stored run, never replayed twice
    assert not trace.duplicated(["config_id", "seed"]).any()
    counts = trace["config_id"].value_counts()
    assert counts.max() <= meta["max_config_calls"]  # its intensifier races up to 3 seeds
    # the recommendation is a table row SMAC ran (its intensifier's incumbent)
    ran = set(trace["config_id"]) | set(meta["initial_config_ids"])
    assert set(trace["incumbent_id"]) <= ran
    np.testing.assert_allclose(trace["incumbent_mv"], task.mv[trace["incumbent_id"]])
    np.testing.assert_allclose(trace["simple_regret"], task.mv_star - trace["incumbent_mv"])
    np.testing.assert_allclose(trace["cumulative_regret"],
                               np.cumsum(task.mv_star - trace["config_mv"]))
    # a round is one configuration's runs: k_round counts them, its last run says why it ended
    assert (trace.groupby("round")["config_id"].nunique() == 1).all()
    assert (trace.groupby("round")["k_round"].first() == trace.groupby("round").size()).all()
    last = ~trace.duplicated("round", keep="last")
    assert set(trace.loc[last, "stop_reason"]) <= {"rejected", "k_max", "budget"}
    assert (trace.loc[~last, "stop_reason"] == "").all()


@needs_smac
def test_smac_user_protocol_budget_design_and_reproducibility(replay_task):
    """User's protocol: SMAC's own initial design is counted, the replay stops at exactly
    `budget` training runs (the 64-row table cannot run out: 64 x 3 > 60), and a repetition
    is the same trace when replayed again with its seed (one machine)."""
    settings = StudySettings(budget=60, protocol="user")
    trace, meta = run_repetition(replay_task, parse_method("smac"), 0, settings)
    _check_smac_trace(replay_task, trace, meta, 60)
    assert len(trace) == 60 and meta["stopped"] == "budget"
    assert meta["initial_config_ids"] == [] and meta["k_init"] == 1
    # SMAC's rule: 10 configurations per hyperparameter, at most a quarter of the trials
    assert meta["n_initial"] == min(10 * len(replay_task.space), 60 // 4)
    assert trace["config_id"].nunique() >= meta["n_initial"]
    assert meta["init_regret"] == pytest.approx(replay_task.mv_star - replay_task.mv.mean())
    again, _ = run_repetition(replay_task, parse_method("smac"), 0, settings)
    pd.testing.assert_frame_equal(trace, again)
    other, _ = run_repetition(replay_task, parse_method("smac"), 1, settings)
    assert not other["config_id"].equals(trace["config_id"])  # the repetition seeds SMAC


@needs_smac
def test_smac_paper_protocol_tells_the_shared_design_first(replay_task):
    """Paper's protocol: the shared design (5 rows x k_init seeds) is told to SMAC as
    completed trials and not counted; SMAC's own design is empty."""
    settings = StudySettings(budget=40, k_init=4, protocol="paper")
    trace, meta = run_repetition(replay_task, parse_method("smac"), 0, settings)
    _check_smac_trace(replay_task, trace, meta, 40)
    assert len(trace) == 40 and meta["n_initial"] == 0 and meta["k_init"] == 4
    assert len(meta["initial_config_ids"]) == 5
    counts = trace["config_id"].value_counts()
    for cid in meta["initial_config_ids"]:  # a design row's stored seeds are not reused
        assert counts.get(cid, 0) + 4 <= replay_task.n_seeds


@needs_smac
def test_smac_stops_when_the_table_is_used_up():
    """On a table of 6 rows x 2 stored seeds SMAC races on 2 seeds (a row has no third run)
    and has nothing left to ask after at most 12 runs: the trace ends early, saying why."""
    task = prepare_task(make_task("synth_ppo_cc_acrobot", n_configs=6, n_seeds=2, seed=5))
    trace, meta = run_repetition(task, parse_method("smac"), 0,
                                 StudySettings(budget=50, protocol="user"))
    _check_smac_trace(task, trace, meta, 50)
    assert meta["max_config_calls"] == 2
    assert len(trace) <= 12 and meta["stopped"] != "budget"


@needs_smac
def test_benchmark_cli_with_smac_marks_it_risk_neutral(small_task, tmp_path):
    path = tmp_path / "task.parquet"
    write_task(small_task, path)
    out = tmp_path / "res"
    res = CliRunner().invoke(app, ["benchmark", str(path), "--methods", "rahbo-k2,smac",
                                   "--protocol", "user", "--repetitions", "1", "--budget", "30",
                                   "--workers", "1", "--out", str(out)])
    assert res.exit_code == 0, res.output
    text = (out / "report" / "report.md").read_text()
    assert "SMAC3" in text
    assert "SMAC3 (`smac`) is risk-neutral" in text
