"""The Optuna TPE peer in the offline benchmark (optuna-tpe-k<K>)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from erahbo.cli import app
from erahbo.datasets.format import write_task
from erahbo.datasets.synth import make_task
from erahbo.experiments import StudySettings, parse_method, prepare_task, run_repetition
from erahbo.experiments.traces import TRACE_COLUMNS

pytest.importorskip("optuna")


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


def test_tpe_refused_when_k_exceeds_the_stored_seeds(replay_task, tmp_path):
    from erahbo.experiments import run_study

    with pytest.raises(ValueError, match="optuna-tpe-k13 needs 13 seeds"):
        run_study([replay_task], [parse_method("optuna-tpe-k13")], 1,
                  StudySettings(budget=30, protocol="user"), tmp_path)


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
