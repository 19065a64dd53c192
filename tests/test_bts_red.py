"""Mean-Var-BTS-RED as a peer (:mod:`erahbo.experiments.bts_red`): the replication rule, the
batch, reproducibility, and its traces in the table replay and the continuous benchmark."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from erahbo.analysis.traces import load_traces, method_label
from erahbo.datasets.synth import make_task as make_table
from erahbo.experiments import StudySettings, parse_method, prepare_task, run_repetition, run_study
from erahbo.experiments.bts_red import BTSRed, BTSRedSettings, r_squared, replications
from erahbo.experiments.continuous import (
    ContinuousSettings,
    run_continuous_repetition,
    run_continuous_study,
)
from erahbo.experiments.traces import TRACE_COLUMNS, find_trace_files, read_trace
from erahbo.objectives.known_truth import make_task


@pytest.fixture(scope="module")
def table():
    return prepare_task(make_table("synth_ppo_cc_acrobot", n_configs=48, n_seeds=12, seed=3))


def test_replication_rule_is_the_papers_formula():
    """n = clip(ceil(U / R^2), n_min, n_max) with R^2 = sigma_max^2 (N + 1) / N^2: more noise,
    more replications; the noisiest input gets the whole batch N; clipped at n_min and n_max;
    no noise seen (R^2 = 0): n_min everywhere."""
    N, s2max = 10, 0.5
    r2 = r_squared(s2max, N)
    assert r2 == pytest.approx(s2max * 11 / 100)
    u = np.array([-1.0, 0.0, 0.01, 0.1, 0.2, 0.3, 0.5, 2.0, np.inf])
    n = replications(u, r2, 2, N)
    expected = np.clip(np.ceil(u[:-1] / r2), 2, N)
    np.testing.assert_array_equal(n[:-1], expected)
    assert n.tolist() == [2, 2, 2, 2, 4, 6, 10, 10, 10]
    assert (np.diff(n) >= 0).all()  # monotone in the noise variance's bound
    assert replications(s2max, r2, 2, N) == N  # ceil(N^2 / (N + 1)) = N
    assert replications(0.3, r2, 2, 5) == 5  # n_max
    np.testing.assert_array_equal(replications(u, 0.0, 3, N), 3)
    with pytest.raises(ValueError, match="n_min"):
        replications(u, r2, 3, 2)
    with pytest.raises(ValueError, match="must be >= 2"):
        BTSRedSettings(n_min=1)
    with pytest.raises(ValueError, match="raise the batch budget"):
        BTSRedSettings(batch_budget=4, n_max=6)


def _noisy_right(seed: int = 0) -> BTSRed:
    """1-d data: mean 1 everywhere; sample variance 0.01 on x < 0.5 and 1.0 on x > 0.5 (each
    input's two returns are m -+ a, so s^2 = 2 a^2 exactly)."""
    algo = BTSRed(BTSRedSettings(alpha=1.0, batch_budget=10), seed)
    for x in np.linspace(0.02, 0.98, 12):
        a = np.sqrt((1.0 if x > 0.5 else 0.01) / 2)
        algo.tell(np.array([x]), [1.0 - a, 1.0 + a])
    return algo


def test_more_noise_gets_more_replications_and_batches_fit_the_budget():
    """An input in the noisy half gets more replications than one in the quiet half (which gets
    n_min); each entry's count is the rule at its input, unless cut by the budget or the
    candidate's capacity; a batch never exceeds N or the runs left."""
    algo = _noisy_right()
    quiet = algo.propose(np.array([[0.2]]), 100)
    noisy = algo.propose(np.array([[0.8]]), 100)
    assert quiet[0].n == 2 and noisy[0].n > 5
    assert quiet[0].reason == noisy[0].reason == "replication_rule"
    C = np.linspace(0, 1, 41)[:, None]
    post = algo._posterior()
    rule = replications(post.ucb_var(C), post.r2, 2, 10)
    for runs_left in (100, 3):
        batch = algo.propose(C, runs_left)
        assert 1 <= sum(e.n for e in batch) <= min(10, runs_left)
        for e in batch:
            assert e.n == rule[e.index] or (e.reason == "budget" and e.n < rule[e.index])
    cap = np.zeros(len(C))
    cap[35] = 3  # one noisy candidate with 3 runs left, nothing else
    batch = algo.propose(C, 100, cap)
    assert [(e.index, e.n, e.reason) for e in batch] == [(35, 3, "max_seeds")]


def test_grammar_and_labels():
    spec = parse_method("bts-red")
    assert (spec.method, spec.options) == ("bts-red", {"batch_budget": 10})
    assert parse_method("bts-red-n20").options == {"batch_budget": 20}
    assert method_label("bts-red-n20") == "Mean-Var-BTS-RED (N=20)"
    with pytest.raises(ValueError, match="must be >= 2"):
        parse_method("bts-red-n1")
    with pytest.raises(ValueError, match="runs sequentially"):
        parse_method("bts-red-p2")


def test_table_replay_is_reproducible_and_traced(table, tmp_path):
    """User's protocol: the design (5 rows x 2 seeds) and every batch are trace rows, budget
    spent, stored seeds never reused, regret = MV* - incumbent MV; a repetition is the same
    trace for its seed; the study's traces are readable by the analysis."""
    settings = StudySettings(budget=40, protocol="user")
    trace, meta = run_repetition(table, parse_method("bts-red"), 0, settings)
    assert list(trace.columns) == list(TRACE_COLUMNS)
    assert trace["run"].tolist() == list(range(1, 41))
    rounds = trace.groupby("round")
    assert (rounds["k_round"].first() == rounds.size()).all()
    assert (trace.groupby("round")["stop_reason"].last().iloc[:5] == "initial").all()
    assert (trace.groupby("config_id").size() <= table.n_seeds).all()
    np.testing.assert_allclose(trace["simple_regret"], table.mv_star - trace["incumbent_mv"])
    assert meta["batch_budget"] == 10 and meta["batches"] >= 2
    again, _ = run_repetition(table, parse_method("bts-red"), 0, settings)
    pd.testing.assert_frame_equal(trace, again)
    other, _ = run_repetition(table, parse_method("bts-red"), 1, settings)
    assert not other.equals(trace)
    paper = StudySettings(budget=30, k_init=4)
    tr, meta = run_repetition(table, parse_method("bts-red"), 0, paper)
    assert len(tr) == 30 and len(meta["initial_config_ids"]) == 5 and meta["k_init"] == 4
    run_study([table], [parse_method("bts-red")], 1, settings, tmp_path)
    ts = load_traces(tmp_path)
    assert list(ts.methods) == ["bts-red"] and ts.metric("simple")[table.name].shape == (1, 1, 40)


def test_continuous_run_is_reproducible_and_traced(tmp_path):
    """On a continuous task: one row per run with the true MV of the recommendation, the
    same trace for a seed, another for another repetition; the study's traces are
    readable."""
    task = make_task("figure1")
    settings = ContinuousSettings(budget=30, seed=0)
    trace, meta = run_continuous_repetition(task, parse_method("bts-red"), 0, settings)
    assert trace["run"].tolist() == list(range(1, 31))
    star = task.mv_max(1.0)
    np.testing.assert_allclose(trace["simple_regret"], star - trace["incumbent_mv"])
    assert (trace["simple_regret"] >= -1e-9).all()
    assert meta["method"] == "bts-red" and meta["k_init"] == 2
    again, _ = run_continuous_repetition(task, parse_method("bts-red"), 0, settings)
    pd.testing.assert_frame_equal(trace, again)
    other, _ = run_continuous_repetition(task, parse_method("bts-red"), 1, settings)
    assert not other.equals(trace)
    res = run_continuous_study([task], [parse_method("bts-red")], 1, settings, tmp_path)
    assert res["jobs_run"] == 1
    frame, meta = read_trace(find_trace_files(tmp_path)[0])
    pd.testing.assert_frame_equal(frame.reset_index(drop=True), trace, check_dtype=False)
    ts = load_traces(tmp_path)
    assert ts.metric("normalized")["figure1"].shape == (1, 1, 30)
