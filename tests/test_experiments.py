"""Offline benchmark: method names, replay without replacement, traces, study resume, CLI."""

from __future__ import annotations

import json
import re

import numpy as np
import pandas as pd
import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

from erahbo.cli import app
from erahbo.datasets.format import TaskData, write_task
from erahbo.datasets.synth import make_task
from erahbo.experiments import (
    StudySettings,
    parse_method,
    parse_methods,
    prepare_task,
    run_repetition,
    run_study,
    trace_path,
    true_mv,
)
from erahbo.experiments.replay import SeedReplay
from erahbo.experiments.traces import TRACE_COLUMNS, TRACE_META_KEY


@pytest.fixture(scope="module")
def small_task() -> TaskData:
    return make_task("synth_ppo_cc_acrobot", n_configs=64, n_seeds=12, seed=3)


@pytest.fixture(scope="module")
def replay_task(small_task):
    return prepare_task(small_task)


def test_parse_methods_grammar():
    specs = parse_methods("erahbo,rahbo-k2,rahbo-k20,gpucb-k20,random-k5,erahbo-exp50,erahbo-sig10")
    assert [s.method for s in specs] == ["erahbo", "rahbo", "rahbo", "gpucb", "random", "erahbo",
                                         "erahbo"]
    assert specs[1].options == {"k": 2}
    # a schedule rises to beta_stop = 1 (the paper's), also under erahbo's default beta_stop 0
    assert specs[5].options == {"schedule": "exponential", "gamma": 50.0, "beta_stop": 1.0}
    assert specs[6].options == {"schedule": "sigmoid", "slope": 10.0, "beta_stop": 1.0}
    assert specs[3].label == "GP-UCB (k=20)"
    batched = parse_method("erahbo-b4")
    assert batched.method == "erahbo" and batched.options == {"seed_batch": 4}
    with pytest.raises(ValueError, match="erahbo-b<N>"):
        parse_method("erahbo-b0")
    assert parse_method("erahbo-bs0.25").options == {"beta_stop": 0.25}
    assert parse_method("erahbo-bs0").options == {"beta_stop": 0.0}
    # refit the hyperparameters each time the evaluated configurations grew that much (> 1)
    assert parse_method("erahbo-rg2").options == {"refit_growth": 2.0}
    assert parse_method("erahbo-rg0").options == {"refit_growth": 0.0}  # fit once (the paper)
    with pytest.raises(ValueError, match="unknown method 'erahbo-rg1'"):
        parse_method("erahbo-rg1")
    par = parse_method("rahbo-k2-p4")
    assert (par.method, par.options, par.label) == ("rahbo", {"k": 2, "n_parallel": 4},
                                                    "RAHBO (k=2, 4 in parallel)")
    assert parse_method("erahbo-b2-p3").options == {"seed_batch": 2, "n_parallel": 3}
    with pytest.raises(ValueError, match="unknown method 'tpe-p2'"):
        parse_method("tpe-p2")
    with pytest.raises(ValueError, match="unknown method 'tpe'"):
        parse_method("tpe")
    with pytest.raises(ValueError, match="k must be >= 2"):
        parse_method("rahbo-k1")
    with pytest.raises(ValueError, match="listed twice"):
        parse_methods("erahbo,erahbo")


def test_true_mv_uses_unbiased_variance():
    r = np.array([[1.0, 3.0], [2.0, 2.0]])
    np.testing.assert_allclose(true_mv(r, 1.0), [2.0 - 2.0, 2.0])
    np.testing.assert_allclose(true_mv(r, 0.0), [2.0, 2.0])


def test_prepare_task_filters_nan_and_processes(small_task):
    returns = small_task.returns.copy()
    returns[3, 5] = np.nan
    task = TaskData(small_task.configs, returns, small_task.seeds, small_task.config_ids,
                    dict(small_task.meta))
    rt = prepare_task(task)
    assert rt.n_configs == small_task.n_configs - 1
    assert rt.report.n_infeasible == 1
    assert rt.meta["outcome_processing"]["method"] == "vizier"
    assert rt.mv_star == pytest.approx(rt.mv.max())
    assert rt.domain == "cc"  # synthetic tasks are grouped by the domain they imitate


def test_prepare_task_rejects_degenerate(small_task):
    flat = np.ones_like(small_task.returns)
    task = TaskData(small_task.configs, flat, small_task.seeds, small_task.config_ids,
                    dict(small_task.meta))
    with pytest.raises(ValueError, match="degenerate"):
        prepare_task(task)


def test_seed_replay_draws_without_replacement(replay_task):
    rep = SeedReplay(replay_task, seed=0, repetition=1)
    vals, seeds = rep.draw(7, 5)
    vals2, seeds2 = rep.draw(7, 100)
    assert len(seeds2) == replay_task.n_seeds - 5  # capped at the stored seeds
    assert sorted(seeds + seeds2) == sorted(replay_task.seeds)
    assert rep.remaining(7) == 0
    np.testing.assert_allclose(sorted(vals + vals2), sorted(replay_task.returns[7]))
    again = SeedReplay(replay_task, seed=0, repetition=1)
    assert again.draw(7, 5) == (vals, seeds)  # same draws for every method of a repetition


@pytest.mark.parametrize("method", ["erahbo", "erahbo-b4", "rahbo-k2", "gpucb-k20", "random-k4",
                                    "erahbo-p3", "rahbo-k2-p4"])
def test_run_repetition_trace(replay_task, method):
    settings = StudySettings(budget=60, k_init=4)
    trace, meta = run_repetition(replay_task, parse_method(method), 0, settings)
    assert list(trace.columns) == list(TRACE_COLUMNS)
    assert 0 < len(trace) <= 60
    assert trace["run"].tolist() == list(range(1, len(trace) + 1))
    mv_star = replay_task.mv_star
    np.testing.assert_allclose(trace["simple_regret"], mv_star - trace["incumbent_mv"])
    np.testing.assert_allclose(trace["cumulative_regret"],
                               np.cumsum(mv_star - trace["config_mv"]))
    assert (trace["simple_regret"] >= -1e-12).all()
    # every round's rows share k_round = its number of runs, and its last row has a reason
    for _, g in trace.groupby("round"):
        assert (g["k_round"] == len(g)).all()
        assert g["stop_reason"].iloc[-1] != ""
    # no configuration is replayed more often than it has stored seeds (initial seeds included)
    counts = trace["config_id"].value_counts()
    for cid in meta["initial_config_ids"]:
        counts[cid] = counts.get(cid, 0) + settings.k_init
    assert counts.max() <= replay_task.n_seeds
    assert meta["init_regret"] == pytest.approx(mv_star - np.mean(replay_task.mv[
        meta["initial_config_ids"]]))
    if method.startswith("rahbo") or method.startswith("gpucb"):
        assert set(trace["stop_reason"]) <= {"", "fixed_k", "budget", "exhausted", "excluded"}


def test_methods_share_initial_design(replay_task):
    settings = StudySettings(budget=20, k_init=4)
    metas = [run_repetition(replay_task, parse_method(m), 2, settings)[1]
             for m in ("erahbo", "rahbo-k2")]
    assert metas[0]["initial_config_ids"] == metas[1]["initial_config_ids"]
    assert metas[0]["init_mv_mean"] == metas[1]["init_mv_mean"]


def test_erahbo_spends_fewer_seeds_than_fixed_k20(replay_task):
    settings = StudySettings(budget=200, k_init=4)
    trace, _ = run_repetition(replay_task, parse_method("erahbo"), 0, settings)
    ks = trace.groupby("round")["k_round"].first()
    assert ks.min() >= 1 and ks.max() <= 20
    assert ks.mean() < 20  # adaptive: some rounds stop before k_max


def test_run_study_writes_and_resumes(tmp_path, replay_task):
    settings = StudySettings(budget=30, k_init=4)
    methods = parse_methods("erahbo,rahbo-k2")
    summary = run_study([replay_task], methods, 2, settings, tmp_path, workers=1)
    assert summary["jobs_run"] == 4
    path = trace_path(tmp_path, replay_task.name, "erahbo", 1)
    meta = json.loads(pq.read_schema(path).metadata[TRACE_META_KEY])
    assert meta["method"] == "erahbo" and meta["repetition"] == 1
    before = pd.read_parquet(path)
    again = run_study([replay_task], methods, 2, settings, tmp_path, workers=1)
    assert again == {"jobs_run": 0, "jobs_skipped": 4, "runs": 0}
    path.unlink()
    third = run_study([replay_task], methods, 2, settings, tmp_path, workers=1)
    assert third["jobs_run"] == 1
    pd.testing.assert_frame_equal(pd.read_parquet(path), before)  # deterministic rerun
    with pytest.raises(ValueError, match="other settings"):
        run_study([replay_task], methods, 2, StudySettings(budget=31, k_init=4), tmp_path)


def test_a_resumed_study_refuses_traces_of_other_defaults(tmp_path, replay_task, monkeypatch):
    from erahbo.optimizer import random_design

    settings = StudySettings(budget=30, k_init=4)
    run_study([replay_task], parse_methods("erahbo,rahbo-k2"), 1, settings, tmp_path)
    info = json.loads((tmp_path / "study.json").read_text())
    assert {m["name"]: m["options"].get("random_interleave") for m in info["methods"]} == {
        "erahbo": random_design.TABLE_RUNS, "rahbo-k2": 0}  # every setting stored (a table's)
    # the package's defaults for erahbo change (a new version): its old traces are not reused
    monkeypatch.setattr(random_design, "TABLE_RUNS", 0)
    with pytest.raises(ValueError, match=r"traces of method 'erahbo' run with other options "
                       r"\(random_interleave differ.*delete .*/traces/\*/erahbo"):
        run_study([replay_task], parse_methods("erahbo,rahbo-k2"), 1, settings, tmp_path)
    # the other methods resume; a study written before options were recorded still resumes
    again = run_study([replay_task], parse_methods("rahbo-k2"), 1, settings, tmp_path)
    assert again["jobs_skipped"] == 1
    for m in info["methods"]:
        del m["options"]
    (tmp_path / "study.json").write_text(json.dumps(info))
    assert run_study([replay_task], parse_methods("erahbo"), 1, settings,
                     tmp_path)["jobs_skipped"] == 1


def test_run_study_process_pool_matches_serial(tmp_path, replay_task):
    settings = StudySettings(budget=25, k_init=4)
    methods = parse_methods("erahbo,gpucb-k10")  # (the table has 12 seeds: k20 is refused)
    seen = []
    run_study([replay_task], methods, 1, settings, tmp_path / "a", workers=2,
              on_progress=lambda done, total: seen.append((done, total)))
    run_study([replay_task], methods, 1, settings, tmp_path / "b", workers=1)
    n_runs = sum(len(pd.read_parquet(trace_path(tmp_path / "a", replay_task.name, m, 0)))
                 for m in ("erahbo", "gpucb-k10"))
    # the total: 2 x 25 runs, or the runs done where a repetition ended one short (100 %)
    assert seen and seen[-1][1] == (2 * 25 if n_runs == 2 * 25 else n_runs)
    for m in ("erahbo", "gpucb-k10"):
        a = pd.read_parquet(trace_path(tmp_path / "a", replay_task.name, m, 0))
        b = pd.read_parquet(trace_path(tmp_path / "b", replay_task.name, m, 0))
        pd.testing.assert_frame_equal(a, b)


def test_benchmark_cli_end_to_end(tmp_path, small_task):
    data = write_task(small_task, tmp_path / "data" / f"{small_task.name}.parquet")
    out = tmp_path / "res"
    res = CliRunner().invoke(app, ["benchmark", str(data.parent), "--methods", "erahbo,rahbo-k2",
                                   "--repetitions", "2", "--budget", "30", "--k-init", "4",
                                   "--out", str(out), "--workers", "1"])
    assert res.exit_code == 0, res.output
    # not a terminal: plain progress lines, ending at 100 % (a repetition may end one run short)
    assert re.search(r"runs (119|120)/\1 \(100.0 %\)", res.output), res.output
    assert (out / "report" / "report.md").exists()
    assert "alpha = 1.0, on returns processed with `vizier`" in (
        out / "report" / "report.md").read_text()
    ranks = pd.read_csv(out / "report" / "ranks.csv")
    assert set(ranks["method"]) == {"erahbo", "rahbo-k2"}
    bad = CliRunner().invoke(app, ["benchmark", str(data), "--methods", "tpe", "--out",
                                   str(tmp_path / "x")])
    assert bad.exit_code != 0
    assert "unknown method 'tpe'" in bad.output


@pytest.mark.parametrize(("name", "value", "message"), [
    ("beta", 0.0, "beta=0.0 must be > 0"),
    ("k_min", 0, "k_min=0 must be an int >= 1"),
    ("alpha", -1.0, "alpha=-1.0 is negative"),
])
def test_benchmark_cli_refuses_bad_options_before_writing(tmp_path, small_task, name, value,
                                                          message):
    """The optimizer's rule for each option, at the CLI boundary: no study.json, no traceback."""
    data = write_task(small_task, tmp_path / "data" / f"{small_task.name}.parquet")
    out = tmp_path / "res"
    option = "--" + name.replace("_", "-")
    res = CliRunner().invoke(app, ["benchmark", str(data), option, str(value), "--out", str(out)])
    assert res.exit_code == 2, res.output
    assert message in " ".join(res.output.split()) and "Traceback" not in res.output
    assert not (out / "study.json").exists()
    with pytest.raises(ValueError, match=message):  # the same rule in the library
        StudySettings(**{name: value})


def test_plain_ticker_throttles_lines(capsys):
    from erahbo.cli._progress import PlainTicker

    tick = PlainTicker("runs", every_s=1e9)
    tick(1, 10)
    tick(5, 10)
    assert capsys.readouterr().out == ""  # throttled
    tick(10, 10)  # the last one always prints
    out = capsys.readouterr().out
    assert out.count("\n") == 1 and "runs 10/10 (100.0 %)" in out


def test_parallel_replay_interleaves_rounds_and_the_report_counts_them(tmp_path, replay_task):
    from erahbo.analysis.traces import load_traces

    settings = StudySettings(budget=120, k_init=4)
    methods = parse_methods("erahbo,erahbo-p3")
    run_study([replay_task], methods, 1, settings, tmp_path, workers=1)
    trace = pd.read_parquet(trace_path(tmp_path, replay_task.name, "erahbo-p3", 0))
    rnd = trace["round"].to_numpy()
    assert (np.diff(rnd) < 0).any()  # another round's seeds came in while a round was open
    rounds = load_traces(tmp_path).rounds
    for m in ("erahbo", "erahbo-p3"):
        r = rounds[rounds.method == m]
        assert r["round"].is_unique
        assert (r["n_runs"] == r["k"]).all()  # every round counted once, with all its seeds
        # the whole budget (or all but a single run, which cannot start a new configuration)
        assert settings.budget - 1 <= r["n_runs"].sum() <= settings.budget


def test_in_process_study_runs_on_one_blas_thread(tmp_path, replay_task, monkeypatch):
    """Small GP matrices: extra BLAS threads only contend (measured 40x slower on a busy box)."""
    threadpoolctl = pytest.importorskip("threadpoolctl")
    import erahbo.experiments.study as study_mod

    seen: list[int] = []
    real = study_mod.run_repetition

    def spy(*args, **kwargs):
        seen.extend(d["num_threads"] for d in threadpoolctl.threadpool_info()
                    if d["user_api"] == "blas")
        return real(*args, **kwargs)

    monkeypatch.setattr(study_mod, "run_repetition", spy)
    with threadpoolctl.threadpool_limits(2, user_api="blas"):  # as on a 2-core machine
        run_study([replay_task], parse_methods("rahbo-k2"), 1,
                  StudySettings(budget=10, k_init=4), tmp_path, workers=1)
    assert seen and set(seen) == {1}


def test_benchmark_ctrl_c_says_how_to_continue(tmp_path, monkeypatch):
    from pathlib import Path

    from typer.testing import CliRunner

    import erahbo.experiments as experiments
    from erahbo.cli import app

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(experiments, "run_study", interrupted)
    data = Path(__file__).resolve().parents[1] / "src/erahbo/data/synthetic"
    task = sorted(data.glob("*.parquet"))[0]
    res = CliRunner().invoke(app, ["benchmark", str(task), "--methods", "erahbo",
                                   "--repetitions", "1", "--budget", "20",
                                   "--out", str(tmp_path / "b")])
    assert res.exit_code == 130
    assert "budget 20 runs after the initial design" in res.output
    assert "run the same command again to continue" in res.output


def test_user_protocol_counts_each_methods_own_initial_design(replay_task):
    settings = StudySettings(budget=60, protocol="user")
    for name, k_init in (("rahbo-k2", 2), ("random-k3", 3)):
        trace, meta = run_repetition(replay_task, parse_method(name), 0, settings)
        assert meta["protocol"] == "user" and meta["k_init"] == k_init
        assert len(trace) == 60  # the initial design's runs are in the trace and the budget
        n_init = len(meta["initial_config_ids"])
        assert n_init == 5
        first = trace.iloc[: n_init * k_init]
        assert first["config_id"].tolist() == [c for c in meta["initial_config_ids"]
                                               for _ in range(k_init)]
        # normalized by the table's average configuration, the same for every method
        assert meta["init_regret"] == pytest.approx(replay_task.mv_star - replay_task.mv.mean())
        np.testing.assert_allclose(trace["simple_regret"],
                                   replay_task.mv_star - trace["incumbent_mv"])
    with pytest.raises(ValueError, match="protocol='usr' must be one of paper, user"):
        StudySettings(protocol="usr")


def test_user_protocol_budget_must_cover_the_initial_design(replay_task):
    settings = StudySettings(budget=30, protocol="user", k_init=8)
    with pytest.raises(ValueError, match="budget"):
        run_repetition(replay_task, parse_method("rahbo-k2"), 0, settings)
