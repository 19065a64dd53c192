"""Replay of partial runs and multi-fidelity peers at equal training steps (issue 39, items 2-3).

Tiny learning-curve tables with deterministic values (``_table``) are built in the tests; the
peers run against the real Optuna and SMAC3 packages.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from erahbo.datasets.curves import CurveTable, write_curves
from erahbo.experiments.mf_peers import parse_mf_method, run_mf_repetition
from erahbo.experiments.partial_replay import (
    BudgetExhausted,
    PartialReplay,
    StepTrace,
    prepare_curve_task,
    regret_at_steps,
)

STEPS = np.array([100, 200, 300, 400])


def _table(n: int = 6, s: int = 4) -> CurveTable:
    """``n`` configurations x ``s`` seeds x 4 checkpoints. Return of configuration ``i``,
    seed ``j`` at checkpoint ``c``: ``(c + 1) * (1 + i) + 0.3 * j * (i % 3)`` (curves rise;
    a late configuration is better on average, the seed spread differs), the last checkpoint
    of configuration 0 falls back to 0.5 (a curve that peaks early). Wall time of a run up
    to checkpoint ``c``: ``(c + 1) * (1 + 0.1 i) + 0.01 j`` seconds (cumulative)."""
    cfg, seed, ck = np.meshgrid(np.arange(n), np.arange(s), np.arange(STEPS.size),
                                indexing="ij")
    returns = (ck + 1.0) * (1 + cfg) + 0.3 * seed * (cfg % 3)  # (n, s, C)
    returns[0, :, -1] = 0.5
    wall = (ck + 1.0) * (1 + 0.1 * cfg) + 0.01 * seed
    rng = np.random.default_rng(0)
    configs = pd.DataFrame({"lr": rng.uniform(0, 1, n), "tau": rng.uniform(0, 1, n)})
    meta = {"task": "tiny", "algorithm": "dqn", "domain": "cc"}
    return CurveTable(configs=configs, returns=returns, wall_s=wall, steps=STEPS.copy(),
                      env_steps=np.tile(STEPS, (n, 1)), seeds=list(range(1, s + 1)),
                      config_ids=np.arange(n), meta=meta)


def test_curves_share_the_ground_truth_scale() -> None:
    """The processed curves end in the ground truth's returns (bit-identical), and the
    processing fitted on the final returns keeps the order of returns at every checkpoint
    (the same monotone map for all checkpoints)."""
    ct = prepare_curve_task(_table(), alpha=1.0)
    assert np.array_equal(ct.curves[:, :, -1], ct.task.returns)
    raw = _table().returns
    for c in range(STEPS.size):
        order = np.argsort(raw[:, :, c], axis=None, kind="stable")
        assert np.all(np.diff(ct.curves[:, :, c].ravel()[order]) >= 0)


def test_a_configuration_with_a_failed_run_is_dropped_with_its_curves() -> None:
    """The ground truth drops a configuration with a failed run (NaN final return: the
    paper's NaN policy); its curves go with it, so the remaining rows line up (a real PPO
    table has such a run)."""
    t = _table()
    returns = t.returns.copy()
    returns[2, 1, -1] = np.nan  # configuration 2, seed 2 failed at the end
    returns[4, 0, :] = -np.inf  # configuration 4, seed 1 failed from the start
    bad = CurveTable(configs=t.configs, returns=returns, wall_s=t.wall_s, steps=t.steps,
                     env_steps=t.env_steps, seeds=t.seeds, config_ids=t.config_ids,
                     meta=t.meta)
    ct = prepare_curve_task(bad, alpha=1.0)
    assert ct.curves.shape == (4, 4, STEPS.size)
    assert np.array_equal(ct.curves[:, :, -1], ct.task.returns)
    full = prepare_curve_task(t, alpha=1.0)
    kept = [0, 1, 3, 5]
    assert np.array_equal(ct.wall_s, full.wall_s[kept])


def test_replay_charges_exactly_the_steps_consumed() -> None:
    """A run taken to checkpoint c costs steps[c] from scratch; continued to c' it costs
    steps[c'] - steps[c]; reading a checkpoint it has passed costs nothing; the wall time
    charged is the table's cumulative wall time of that run, by the same rule."""
    ct = prepare_curve_task(_table(), alpha=1.0)
    rp = PartialReplay(ct, seed=0, repetition=0)
    (col,) = rp.new_runs(2, 1)
    rp.advance(2, col, 1)
    assert rp.steps_used == 200
    assert rp.wall_used == pytest.approx(ct.wall_s[2, col, 1])
    rp.advance(2, col, 3)
    assert rp.steps_used == 400
    assert rp.wall_used == pytest.approx(ct.wall_s[2, col, 3])
    rp.advance(2, col, 0)  # already passed: logged, free
    assert rp.steps_used == 400
    (other,) = rp.new_runs(2, 1)
    assert other != col  # a new run takes another stored seed
    assert rp.cost([(2, other), (2, col)], 2) == (300, pytest.approx(ct.wall_s[2, other, 2]))
    rp.advance(2, other, 2)
    assert rp.steps_used == 700


def test_a_stopped_run_is_never_a_final_return() -> None:
    """An observation before the last checkpoint carries its own step and return and is not
    final; only the last checkpoint's is final and equals the ground truth's return (config 0
    falls at the end, so its stopped value differs from its final one)."""
    ct = prepare_curve_task(_table(), alpha=1.0)
    rp = PartialReplay(ct, seed=0, repetition=0)
    (col,) = rp.new_runs(0, 1)
    early = rp.advance(0, col, 2)
    assert (early.final, early.step, early.checkpoint) == (False, 300, 2)
    assert early.value == ct.curves[0, col, 2] != ct.task.returns[0, col]
    last = rp.advance(0, col, 3)
    assert last.final and last.step == 400 and last.value == ct.task.returns[0, col]


def test_the_step_budget_is_never_exceeded() -> None:
    """A step that would exceed the budget in steps (or in wall seconds) is refused with
    BudgetExhausted and charges nothing; what fits exactly is allowed."""
    ct = prepare_curve_task(_table(), alpha=1.0)
    rp = PartialReplay(ct, seed=0, repetition=0, budget_steps=500)
    a, b = rp.new_runs(1, 2)
    rp.advance(1, a, 2)  # 300
    assert not rp.affordable([(1, b)], 2)
    with pytest.raises(BudgetExhausted):
        rp.advance(1, b, 2)  # 300 more
    assert rp.steps_used == 300
    rp.advance(1, b, 1)  # 200: exactly the budget
    assert rp.steps_used == 500 and rp.steps_left == 0
    wall = PartialReplay(ct, seed=0, repetition=0, budget_wall=1.0)
    (c,) = wall.new_runs(5, 1)
    with pytest.raises(BudgetExhausted):
        wall.advance(5, c, 0)  # 1.5 s
    assert wall.wall_used == 0.0
    with pytest.raises(ValueError, match="budget_steps=0 must be positive"):
        PartialReplay(ct, seed=0, repetition=0, budget_steps=0)


def test_regret_against_steps_does_not_rise_when_the_recommendation_only_improves() -> None:
    """A method that runs configurations fully, one at a time, and recommends the best true
    MV among those run has a normalized regret against steps that starts at 1 (the average
    configuration, before any run) and never rises."""
    ct = prepare_curve_task(_table(), alpha=1.0)
    rp = PartialReplay(ct, seed=0, repetition=0)
    out = StepTrace(rp)
    best = None
    for cid in (3, 0, 5, 1, 4, 2):
        (col,) = rp.new_runs(cid, 1)
        obs = rp.advance(cid, col, 3)
        if best is None or ct.task.mv[cid] > ct.task.mv[best]:
            best = cid
        out.add(obs, best)
    trace = out.frame()
    grid = np.arange(0, 2600, 50)
    reg = regret_at_steps(ct, trace, grid)
    assert reg[0] == 1.0
    assert np.all(np.diff(reg) <= 0)
    assert reg[-1] == 0.0  # the best configuration was run


PEERS = ["tpe-hb-k2", "tpe-sha-k2", "tpe-wilcoxon-k2", "smac-mf-k2"]


@pytest.mark.parametrize("name", [*PEERS, "erahbo"])
def test_every_method_runs_and_respects_the_step_budget(name: str) -> None:
    """Each method replays end to end on a tiny table: its steps never exceed the budget,
    steps grow along the trace, a row is final exactly at the last checkpoint, and a
    recommendation is a configuration with a full run observed at or before it."""
    if name.startswith("smac") and importlib.util.find_spec("smac") is None:
        pytest.skip("SMAC3 not installed (pip install erahbo[smac])")
    ct = prepare_curve_task(_table(n=16, s=6), alpha=1.0)
    trace, meta = run_mf_repetition(ct, parse_mf_method(name), 0, budget_runs=12)
    assert meta["budget_steps"] == 12 * 400
    assert len(trace) > 0
    steps = trace["steps"].to_numpy()
    assert steps[-1] <= meta["budget_steps"] and np.all(np.diff(steps) >= 0)
    assert np.array_equal(trace["final"], trace["checkpoint_step"] == 400)
    for i, inc in enumerate(trace["incumbent_id"]):
        if inc >= 0:
            seen = trace.iloc[: i + 1]
            assert ((seen["config_id"] == inc) & seen["final"]).any()


@pytest.mark.parametrize("name", [*PEERS, "erahbo"])
def test_a_repetition_replays_to_the_same_trace(name: str) -> None:
    """Every random choice of a method takes the repetition's seed: replaying the same
    repetition twice gives the same trace (Hyperband's brackets hash the study's name)."""
    if name.startswith("smac") and importlib.util.find_spec("smac") is None:
        pytest.skip("SMAC3 not installed (pip install erahbo[smac])")
    ct = prepare_curve_task(_table(n=16, s=6), alpha=1.0)
    first, _ = run_mf_repetition(ct, parse_mf_method(name), 3, budget_runs=24)
    again, _ = run_mf_repetition(ct, parse_mf_method(name), 3, budget_runs=24)
    pd.testing.assert_frame_equal(first, again)


def test_smac_mf_samples_rows_of_the_table_beyond_its_design() -> None:
    """SMAC's multi-fidelity facade asks a Hyperband bracket's configurations before any is
    told; its own samples of the space are rows of the table, so it trains more
    configurations than its initial design and runs until the step budget, at more than one
    budget (checkpoint)."""
    pytest.importorskip("smac")
    ct = prepare_curve_task(_table(n=16, s=6), alpha=1.0)
    # 8 full runs' worth: a design of 2 configurations, fewer than the first rung asks for
    trace, meta = run_mf_repetition(ct, parse_mf_method("smac-mf-k2"), 0, budget_runs=8)
    assert trace["config_id"].nunique() > meta["n_initial"]
    assert meta["stopped"] == "budget"
    assert trace["checkpoint_step"].nunique() > 1


@pytest.mark.parametrize("name", ["tpe-sha-k2", "erahbo"])
def test_a_wall_time_budget_is_respected(name: str) -> None:
    """With a budget in wall seconds as well, a method's recorded wall time never exceeds it
    (the table's cumulative wall time of the runs it trained)."""
    ct = prepare_curve_task(_table(n=16, s=6), alpha=1.0)
    trace, meta = run_mf_repetition(ct, parse_mf_method(name), 0, budget_runs=12,
                                    budget_wall=20.0)
    assert len(trace) > 0
    assert trace["wall_s"].iloc[-1] <= 20.0 and meta["wall_used"] <= 20.0


def test_too_many_seeds_per_trial_is_refused() -> None:
    """k above the table's stored seeds is refused with the limit."""
    ct = prepare_curve_task(_table(), alpha=1.0)
    with pytest.raises(ValueError, match="has 4 stored seeds; use k <= 4"):
        run_mf_repetition(ct, parse_mf_method("tpe-hb-k5"), 0, budget_runs=5)


def test_method_names_are_checked() -> None:
    """Peer names take k seeds per trial (default 5), k >= 2; other names are refused with
    the valid forms."""
    assert parse_mf_method("tpe-hb").name == "tpe-hb-k5"
    assert parse_mf_method("smac-mf-k10").k == 10
    with pytest.raises(ValueError, match="k=1 seeds per trial must be >= 2"):
        parse_mf_method("tpe-sha-k1")
    with pytest.raises(ValueError, match="use erahbo, tpe-hb"):
        parse_mf_method("hyperband")


def test_benchmark_smoke(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """benchmarks/multifidelity_benchmark.py --quick on a tiny table writes the trace CSV and
    prints the IQM table at 25/50/100 % of the steps and the steps-to-reach table, and draws
    the regret curves against steps."""
    path = write_curves(_table(n=16, s=6), tmp_path / "tiny.parquet")
    root = Path(__file__).resolve().parents[1]
    sys.path.insert(0, str(root / "benchmarks"))
    try:
        import multifidelity_benchmark as mb
    finally:
        sys.path.pop(0)
    rc = mb.main(["--tables", str(path), "--quick", "--out", str(tmp_path / "out"),
                  "--methods", "erahbo,tpe-hb,tpe-wilcoxon", "--k", "2"])
    assert rc == 0
    text = capsys.readouterr().out
    assert "| erahbo |" in text and "25% steps" in text and "Steps to reach" in text
    csv = pd.read_csv(tmp_path / "out" / "traces.csv")
    assert set(csv["method"]) == {"erahbo", "tpe-hb-k2", "tpe-wilcoxon-k2"}
    assert (csv["steps"] <= 20 * 400).all()
    assert (tmp_path / "out" / "regret_vs_steps.png").stat().st_size > 0


def test_benchmark_pools_runs_made_per_table(tmp_path: Path,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    """--pool joins the outputs of separate runs (one per table) into one summary over both
    tables, the same as one run over both; a folder given twice (a repeated table, alpha,
    method and repetition) or one without traces is refused with the folder named."""
    a = write_curves(_table(n=16, s=6), tmp_path / "tiny_a.parquet")
    t = _table(n=16, s=6)
    b = write_curves(CurveTable(configs=t.configs, returns=t.returns * 2.0 + 1.0,
                                wall_s=t.wall_s, steps=t.steps, env_steps=t.env_steps,
                                seeds=t.seeds, config_ids=t.config_ids,
                                meta={**t.meta, "task": "tiny_b"}),
                     tmp_path / "tiny_b.parquet")
    root = Path(__file__).resolve().parents[1]
    sys.path.insert(0, str(root / "benchmarks"))
    try:
        import multifidelity_benchmark as mb
    finally:
        sys.path.pop(0)
    common = ["--quick", "--methods", "erahbo,tpe-wilcoxon", "--k", "2"]
    assert mb.main(["--tables", str(a), "--out", str(tmp_path / "a"), *common]) == 0
    assert mb.main(["--tables", str(b), "--out", str(tmp_path / "b"), *common]) == 0
    assert mb.main(["--tables", f"{tmp_path}/tiny_*.parquet", "--out", str(tmp_path / "ab"),
                    *common]) == 0
    capsys.readouterr()
    assert mb.main(["--pool", str(tmp_path / "a"), str(tmp_path / "b"), "--out",
                    str(tmp_path / "pooled"), "--budget", "20", "--boot", "200"]) == 0
    pooled = capsys.readouterr().out
    assert "2 table(s)" in pooled
    assert pooled.strip() == (tmp_path / "ab" / "summary.md").read_text().strip()
    assert mb.main(["--pool", str(tmp_path / "a"), str(tmp_path / "a"), "--out",
                    str(tmp_path / "x")]) == 2
    assert "repeat" in capsys.readouterr().err
    assert mb.main(["--pool", str(tmp_path / "nothing"), "--out", str(tmp_path / "x")]) == 2
    assert "nothing" in capsys.readouterr().err
