"""The continuous benchmark in the user's protocol (:mod:`erahbo.experiments.continuous`)."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from conftest import LAST_RUN_UNSPENT_AFTER
from erahbo.analysis.traces import load_traces
from erahbo.experiments.continuous import (
    ContinuousSettings,
    SeedStream,
    repetition_seed,
    run_continuous_repetition,
    run_continuous_study,
)
from erahbo.experiments.continuous_peers import TraceRecorder, configspace_of, suggest_config
from erahbo.experiments.methods import parse_method, parse_methods
from erahbo.experiments.traces import find_trace_files, read_trace
from erahbo.objectives.known_truth import ReadmeTask, make_task
from erahbo.objectives.synthetic import Figure1Task
from erahbo.risk import CVaR, MeanVariance, Quantile
from erahbo.space import SearchSpace


def test_tiny_study_writes_readable_traces(tmp_path):
    """Two methods, budget 15, one repetition: every run from the first is a trace row with
    the true MV of the recommendation; the metadata's normalizer is MV* minus the uniform
    mean; the analysis reads the traces (IQM normalized regret = simple regret / normalizer);
    a rerun skips the finished traces."""
    task = make_task("figure1")
    settings = ContinuousSettings(budget=15, alpha=1.0, seed=0)
    res = run_continuous_study([task], parse_methods("erahbo,rahbo-k2"), 1, settings, tmp_path)
    assert res == {"jobs_run": 2, "jobs_skipped": 0}
    files = find_trace_files(tmp_path)
    assert len(files) == 2
    star, mean = task.mv_max(1.0), task.mv_uniform_mean(1.0)
    for f in files:
        frame, meta = read_trace(f)
        n = len(frame)
        assert n == 15 or (n == 14 and frame["stop_reason"].iloc[-1] in LAST_RUN_UNSPENT_AFTER)
        assert frame["run"].tolist() == list(range(1, n + 1))
        assert meta["protocol"] == "user" and meta["mv_star"] == pytest.approx(star)
        assert meta["init_regret"] == pytest.approx(star - mean)
        assert (frame["simple_regret"] >= -1e-9).all()
        np.testing.assert_allclose(frame["simple_regret"], star - frame["incumbent_mv"])
    ts = load_traces(tmp_path)
    norm = ts.metric("normalized")["figure1"]  # (methods, reps, budget)
    simple = ts.metric("simple")["figure1"]
    np.testing.assert_allclose(norm, simple / (star - mean))
    study = json.loads((tmp_path / "study.json").read_text())
    assert study["tasks"][0]["uniform_mv_mean"] == pytest.approx(mean)
    again = run_continuous_study([task], parse_methods("erahbo,rahbo-k2"), 1, settings,
                                 tmp_path)
    assert again == {"jobs_run": 0, "jobs_skipped": 2}
    with pytest.raises(ValueError, match="other settings"):
        run_continuous_study([task], parse_methods("erahbo"), 1,
                             ContinuousSettings(budget=15, alpha=3.0), tmp_path)


def test_repetition_seeds_are_keyed_by_set_and_repetition():
    """Repetition r of set s uses seeds derived from (s, r): the same pair gives the same
    optimizer seed and objective stream, another set or repetition other ones."""
    a, b = SeedStream(0, 1), SeedStream(0, 1)
    assert [a(s) for s in range(5)] == [b(s) for s in range(5)]
    assert [SeedStream(1, 1)(s) for s in range(5)] != [a(s) for s in range(5)]
    assert [SeedStream(0, 2)(s) for s in range(5)] != [a(s) for s in range(5)]
    assert all(0 <= a(s) < 2**62 for s in (0, 2**40, 7))
    assert repetition_seed("readme", 0, 1) == repetition_seed("readme", 0, 1)
    assert repetition_seed("readme", 1, 1) != repetition_seed("readme", 0, 1)


def test_a_repetition_is_reproducible_and_sets_are_independent():
    """The same (set, repetition) replays the same trace; another set draws other
    configurations and, through its stream, other returns for the same seed label."""
    task = ReadmeTask()
    m = parse_method("random-k2")
    t0, m0 = run_continuous_repetition(task, m, 0, ContinuousSettings(budget=12, seed=0))
    again, _ = run_continuous_repetition(task, m, 0, ContinuousSettings(budget=12, seed=0))
    t1, m1 = run_continuous_repetition(task, m, 0, ContinuousSettings(budget=12, seed=1))
    assert t0.equals(again)
    assert m0["seed"] != m1["seed"] and not np.allclose(t0["config_mv"], t1["config_mv"])
    c = task.space.decode(task.space.sobol_unit(1, 0)[0])
    assert task.sample(c, [SeedStream(0, 0)(3)]) != task.sample(c, [SeedStream(1, 0)(3)])


COND = SearchSpace({"lr": ("log", 1e-4, 1e-1), "n": ("int", 1, 9),
                    "target": ("cat", [True, False]),
                    "tau": {"type": "float", "lower": 0.01, "upper": 1.0,
                            "condition": {"parent": "target", "op": "in", "values": [True]}}})


def test_peer_spaces_follow_the_search_space():
    """Optuna's suggestions and SMAC's ConfigurationSpace have the space's hyperparameters,
    types and conditions: an inactive child is never suggested, and every configuration is
    valid in the space."""
    import optuna

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    study = optuna.create_study(sampler=optuna.samplers.RandomSampler(seed=0))
    seen = set()
    for _ in range(20):
        c = suggest_config(study.ask(), COND)
        assert ("tau" in c) == (c["target"] is True)
        COND.encode(c)
        seen.add(c["target"])
    assert seen == {True, False}
    cs = configspace_of(COND, seed=0)
    assert sorted(cs.keys()) == ["lr", "n", "target", "tau"]
    assert len(cs.conditions) == 1
    for cfg in cs.sample_configuration(10):
        d = {k: (v.item() if hasattr(v, "item") else v) for k, v in dict(cfg).items()}
        COND.encode(d)


@pytest.mark.parametrize("method", ["optuna-tpe-k2", "smac"])
def test_peers_run_on_a_continuous_task(method):
    """Optuna TPE (k seeds per trial, sample MV) and SMAC3 (one seed per trial) run on the
    README task and record one row per training run with the true MV of their
    recommendation."""
    task = ReadmeTask()
    trace, meta = run_continuous_repetition(task, parse_method(method), 0,
                                            ContinuousSettings(budget=12, seed=0))
    assert len(trace) == 12
    star = task.mv_max(1.0)
    np.testing.assert_allclose(trace["simple_regret"], star - trace["incumbent_mv"])
    assert (trace["simple_regret"] >= -1e-12).all()
    assert meta["method"] == method and meta["budget"] == 12


def test_a_cvar_study_scores_every_method_in_cvar():
    """In a study of CVaR_0.1 the optimum, the normalizer and every recorded value are the
    task's exact CVaR (not MV): erahbo and RAHBO optimize it (their own measure: the study's,
    or the name's, erahbo-mv3), Optuna TPE its sample CVaR of k seeds; the regret of the
    recommendation is >= 0 after every run."""
    task = Figure1Task()
    cvar = CVaR(q=0.1)
    settings = ContinuousSettings(budget=12, seed=0, risk="cvar", q=0.1)
    star, mean = task.value_max(cvar), task.value_uniform_mean(cvar)
    assert star != pytest.approx(task.mv_max(1.0))
    own = {"erahbo-cvar": cvar, "rahbo-k2": cvar, "optuna-tpe-k2-cvar": cvar,
           "erahbo-mv3": MeanVariance(3.0)}
    for name, measure in own.items():
        trace, meta = run_continuous_repetition(task, parse_method(name), 0, settings)
        assert meta["risk"] == cvar.to_json() and meta["method_risk"] == measure.to_json()
        assert meta["mv_star"] == star and meta["init_regret"] == pytest.approx(star - mean)
        np.testing.assert_allclose(trace["simple_regret"], star - trace["incumbent_mv"])
        assert (trace["simple_regret"] >= -1e-12).all()
    rec = TraceRecorder(task, cvar, star)
    c = {"x": 0.65}
    assert rec.mv_of(rec.config_id(c)) == task.value(c, cvar) != task.mv(c, 1.0)


def test_continuous_settings_of_a_measure_and_old_studies(tmp_path):
    """ContinuousSettings validates the measure's options with the fix; q defaults to 0.1 (one
    spelling per study); smac-k<K> is refused (tables only); a study.json written before the
    measures were a setting resumes as MV, and a CVaR study is refused in its folder."""
    assert ContinuousSettings(risk="cvar").q == 0.1
    assert ContinuousSettings(risk="quantile", q=0.25).measure == Quantile(q=0.25)
    with pytest.raises(ValueError, match="does nothing with risk='cvar'"):
        ContinuousSettings(risk="cvar", alpha=3.0)
    with pytest.raises(ValueError, match=r"q=0\.1 does nothing"):
        ContinuousSettings(q=0.1)
    with pytest.raises(ValueError, match="must be one of"):
        ContinuousSettings(risk="var")
    task = ReadmeTask()
    with pytest.raises(ValueError, match="tables only"):
        run_continuous_study([task], parse_methods("smac-k5-cvar"), 1,
                             ContinuousSettings(budget=10, risk="cvar"), tmp_path / "smac")
    settings = ContinuousSettings(budget=10)
    run_continuous_study([task], parse_methods("random-k2"), 1, settings, tmp_path)
    path = tmp_path / "study.json"
    study = json.loads(path.read_text())
    for key in ("risk", "q"):
        del study["settings"][key]
    path.write_text(json.dumps(study))
    again = run_continuous_study([task], parse_methods("random-k2"), 1, settings, tmp_path)
    assert again == {"jobs_run": 0, "jobs_skipped": 1}
    with pytest.raises(ValueError, match="other settings"):
        run_continuous_study([task], parse_methods("random-k2"), 1,
                             ContinuousSettings(budget=10, risk="cvar"), tmp_path)


def _script(name: str):
    root = Path(__file__).resolve().parents[1] / "benchmarks"
    spec = importlib.util.spec_from_file_location(name, root / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod


def test_continuous_benchmark_script_in_cvar(tmp_path, capsys):
    """benchmarks/continuous_benchmark.py --risk cvar: the tables say CVaR_0.1, a task whose
    every configuration has the same CVaR (the ppo_cc_mountain_car surrogate at q = 0.1) is
    left out by name, mv-best-alpha runs erahbo-mv<alpha> at risk_benchmark's alphas and the
    pooled table has its row and the alpha chosen per task."""
    cb, rb = _script("continuous_benchmark"), _script("risk_benchmark")
    assert cb.BEST_ALPHAS == rb.ALPHAS
    data = Path(__file__).resolve().parents[1] / "data" / "arlbench"
    code = cb.main(["--risk", "cvar", "--q", "0.1", "--tasks",
                    "figure1,surr-ppo_cc_mountain_car", "--methods", "erahbo-cvar,mv-best-alpha",
                    "--budget", "12", "--reps", "1", "--checkpoints", "6,12", "--data",
                    str(data), "--out", str(tmp_path)])
    assert code == 0
    text = (tmp_path / "summary.md").read_text()
    assert "IQM normalized CVaR_0.1 regret" in text
    assert "no regret to normalize): surr-ppo_cc_mountain_car" in text
    assert "| mv-best-alpha | 1 |" in text and "alpha per task: figure1 " in text
    study = json.loads((tmp_path / "study.json").read_text())
    assert study["measure"] == "CVaR_0.1"
    assert {m["name"] for m in study["methods"]} == {
        "erahbo-cvar", *(f"erahbo-mv{a:g}" for a in rb.ALPHAS)}
    assert cb.main(["--risk", "cvar", "--alpha", "3", "--tasks", "figure1", "--out",
                    str(tmp_path / "bad")]) == 2
    assert "does nothing with risk='cvar'" in capsys.readouterr().err


def test_the_summary_says_which_traces_it_left_out(tmp_path):
    """Rule: the summary of traces where a method lacks a repetition (a partial run) compares
    the repetitions all methods share and says so under its tables, never silently."""
    cb = _script("continuous_benchmark")
    task = make_task("figure1")
    settings = ContinuousSettings(budget=12, alpha=1.0, seed=0)
    run_continuous_study([task], parse_methods("erahbo,random-k2"), 2, settings, tmp_path)
    (tmp_path / "traces" / "figure1" / "random-k2" / "rep-001.parquet").unlink()
    text = cb.summary(tmp_path, [6, 12])
    assert "notes:" in text
    assert "task figure1: using the 1 repetitions shared by all methods (of 2)" in text


def test_seed_allocation_counts_the_first_runs_of_each_trace(tmp_path, capsys):
    """Rule (benchmarks/seed_allocation.py): at checkpoint t, configurations, those with 2+
    seeds and the most-seeded one's share are counted over the first t runs only; the pooled
    row carries no regret (tasks' regrets have their own units); on real traces a fixed-k
    method with k = 2 has every configuration replicated."""
    sa = _script("seed_allocation")
    frame = pd.DataFrame({"run": range(1, 8), "config_id": [0, 0, 1, 2, 2, 2, 3],
                          "simple_regret": [0.9, 0.9, 0.8, 0.5, 0.5, 0.4, 0.4]})
    assert sa.allocation(frame, 6) == {"configs": 3.0, "replicated": 2.0, "top_share": 0.5,
                                       "regret": 0.4}
    assert sa.allocation(frame, 2) == {"configs": 1.0, "replicated": 1.0, "top_share": 1.0,
                                       "regret": 0.9}
    task = make_task("figure1")
    run_continuous_study([task], parse_methods("rahbo-k2"), 1,
                         ContinuousSettings(budget=12, alpha=1.0, seed=0), tmp_path)
    df = sa.main([str(tmp_path), "--runs", "6,12"])
    own = df[df["task"] == "figure1"].set_index("runs")
    assert own.loc[6, "configs"] == own.loc[6, "replicated"] == 3
    assert own.loc[12, "configs"] == own.loc[12, "replicated"] == 6
    assert df[df["task"] == "all"]["regret"].isna().all()
    assert "top_share" in capsys.readouterr().out
