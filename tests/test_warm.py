"""Warm start: runs done before the study join the data, not the budget, and replay exactly."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

import erahbo
from conftest import spent_budget, spent_budget_cli
from erahbo.cli import app
from erahbo.objectives.synthetic import Figure1Task


@pytest.fixture(scope="module")
def earlier() -> erahbo.Result:
    task = Figure1Task()
    return erahbo.optimize(task, task.space, budget=150, seed=0)


def test_warm_runs_are_data_not_budget(earlier):
    task = Figure1Task()
    h = earlier.history
    # the same seed as the earlier study: its seed streams would repeat the warm seeds
    res = erahbo.optimize(task, task.space, budget=80, seed=0, warm_start=h, n_init=0)
    assert spent_budget(res, 80)  # the warm runs are not in the budget nor counted
    hist = res.history
    warm = hist[hist.phase == "warm"]
    assert len(warm) == len(h) and set(hist.phase) == {"warm", "bo"}
    assert sorted(warm["return"]) == sorted(h["return"])
    for _, g in hist.groupby("config_id"):  # a warm configuration chosen again: new seeds
        assert g.seed.is_unique
    # one warm round per earlier configuration, before every BO round
    r = res.rounds
    assert (r.stop_reason == "warm").sum() == earlier.configs.shape[0]
    assert r[r.phase == "warm"].iteration.max() < r[r.phase == "bo"].iteration.min()
    # the warm data shape the very first choice: a warm-started optimizer recommends at once
    opt = erahbo.Optimizer(task.space, budget=400, seed=3, warm_start=h, n_init=0)
    assert opt.n_evals == 0 and opt.recommend() is not None
    best = earlier.configs.sort_values("mean").iloc[-1]
    assert opt.data.n == earlier.configs.shape[0]
    assert best["mean"] in set(opt.data.ybar)


def _table_space() -> erahbo.SearchSpace:
    return erahbo.SearchSpace.from_table(pd.DataFrame({"x": np.linspace(0, 1, 30)}))


# config 3 failed once, config 9's middle run failed and was penalized (5.0 is a penalty), the
# retried row of config 7 was replaced by a retry: dropped
_RUNS = pd.DataFrame({
    "config_id": [3, 3, 3, 7, 7, 7, 9, 9, 9],
    "return": [1.0, 1.2, np.nan, 0.1, np.nan, 0.3, 2.0, 5.0, 2.5],
    "status": ["ok", "ok", "failed", "ok", "retried", "ok", "ok", "penalized", "ok"],
})


def test_warm_start_forms_and_cleaning():
    from erahbo.runtime.failures import penalty_value

    space = _table_space()
    opt = erahbo.Optimizer(space, method="rahbo", k=2, budget=20, seed=0, warm_start=_RUNS,
                           n_init=0)
    hist = opt.result().history
    assert set(hist.config_id) == {3, 7, 9}
    assert 5.0 not in set(hist["return"])  # a penalized value is a penalty, not a return
    assert sorted(hist[hist.config_id == 3].seed) == [-3, -2, -1]  # unknown seeds: placeholders
    assert sorted(hist[hist.config_id == 7].seed) == [-2, -1]  # the retried row is dropped
    # failed runs count with the penalty (the warm returns' lower quartile), as a study's own
    bad = hist[hist.status == "penalized"]
    assert sorted(bad.config_id) == [3, 9]
    assert np.allclose(bad["return"], penalty_value([1.0, 1.2, 0.1, 0.3, 2.0, 2.5]))
    assert (bad.error == "failed before the study (warm start)").all()
    # one failed run of three is a sporadic failure, not a veto: config 3 (sample MV 0.7 with
    # its penalty) beats 7 (0.18) and 9 (mean 1.6, variance 1.4)
    assert opt.incumbent_id == 3
    # the same runs as records give the same study (None: a failed run)
    recs = [{"row": 3, "returns": [1.0, 1.2, None]}, {"row": 7, "returns": [0.1, 0.3]},
            {"row": 9, "returns": [2.0, float("nan"), 2.5]}]
    again = erahbo.Optimizer(space, method="rahbo", k=2, budget=20, seed=0, warm_start=recs,
                             n_init=0)
    assert again.study_settings()["warm_start"] == opt.study_settings()["warm_start"]
    # a configuration with fewer than 2 runs is left out
    one = erahbo.Optimizer(space, method="rahbo", k=2, budget=20, seed=0, n_init=2,
                           warm_start=[{"row": 1, "returns": [1.0]}])
    assert one.data.n == 0


def test_warm_failures_under_exclude_mark_the_configuration_infeasible():
    space = _table_space()
    opt = erahbo.Optimizer(space, method="rahbo", k=2, budget=40, seed=0, warm_start=_RUNS,
                           n_init=0, failures="exclude")
    assert opt.data.config_ids == [7]  # 3 and 9 are infeasible: their runs are not data
    hist = opt.result().history
    assert sorted(hist[hist.status == "failed"].config_id) == [3, 9]
    assert set(opt.result().rounds.query("phase == 'warm'").stop_reason) == {"warm",
                                                                             "infeasible"}
    asked = []
    for _ in range(15):  # never proposed again
        t = opt.ask()
        asked.append(t.config_id)
        opt.tell(t, [0.5 + 0.01 * t.config_id] * len(t.seeds))
    assert not {3, 9} & set(asked)


def test_warm_failures_resume_from_the_journal(tmp_path):
    space = _table_space()
    db = tmp_path / "f.db"

    def objective(config, seed):
        return float(config["x"]) + 0.01 * (seed % 7)

    kw = dict(method="rahbo", k=2, budget=10, seed=1, warm_start=_RUNS, n_init=0)
    full = erahbo.optimize(objective, space, journal=db, **kw)
    again = erahbo.resume(db, objective, space=space)  # settings (None returns) compare equal
    cols = ["phase", "config_id", "seed", "return", "status"]
    pd.testing.assert_frame_equal(again.history[cols], full.history[cols])
    assert (full.history.status == "penalized").sum() == 2


def test_warm_start_errors_name_the_field(earlier):
    task = Figure1Task()
    with pytest.raises(ValueError, match="no 'return' column"):
        erahbo.Optimizer(task.space, budget=400, warm_start=pd.DataFrame({"x": [0.1]}))
    with pytest.raises(ValueError, match=r"hyperparameter column\(s\) \['x'\] missing"):
        erahbo.Optimizer(task.space, budget=400, warm_start=pd.DataFrame({"return": [0.1]}))
    # n_init=0: the warm start must hold a configuration with the seeds a new one starts
    # with: 2 with k_min=2 (a sample variance), 1 at the default k_min = 1
    one_run = [{"config": {"x": 0.5}, "returns": [1.0]}]
    with pytest.raises(ValueError, match="no configuration with at least 2 usable runs"):
        erahbo.Optimizer(task.space, budget=400, n_init=0, k_min=2, warm_start=one_run)
    assert erahbo.Optimizer(task.space, budget=400, n_init=0, k_min=1, warm_start=one_run).data.n
    with pytest.raises(ValueError, match="no configuration with at least 1 usable run,"):
        erahbo.Optimizer(task.space, budget=400, n_init=0, k_min=1,
                         warm_start=[{"config": {"x": 0.5}, "returns": []}])
    with pytest.raises(ValueError, match="n_init"):  # n_init=0 needs a warm start
        erahbo.Optimizer(task.space, budget=400, n_init=0)
    with pytest.raises(ValueError, match=r"warm_start: .*x=7.0 lies outside"):  # named
        erahbo.Optimizer(task.space, budget=400,
                         warm_start=[{"config": {"x": 7.0}, "returns": [1.0, 2.0]}])
    with pytest.raises(ValueError, match=r"unknown status \['done'\]"):
        erahbo.Optimizer(task.space, budget=400, warm_start=pd.DataFrame(
            {"x": [0.1, 0.1], "return": [1.0, 2.0], "status": ["ok", "done"]}))
    with pytest.raises(ValueError, match="'return' column must hold numbers"):
        erahbo.Optimizer(task.space, budget=400, warm_start=pd.DataFrame(
            {"x": [0.1, 0.1], "return": [1.0, "high"]}))
    with pytest.raises(ValueError, match="must be numbers"):
        erahbo.Optimizer(task.space, budget=400,
                         warm_start=[{"config": {"x": 0.5}, "returns": [1.0, "high"]}])
    with pytest.raises(ValueError, match="does not exist"):
        erahbo.Optimizer(task.space, budget=400, warm_start="nope.csv")


def test_warm_start_journal_resumes_exactly(earlier, tmp_path):
    task = Figure1Task()
    db = tmp_path / "w.db"
    full = erahbo.optimize(task, task.space, budget=60, seed=2, warm_start=earlier.history,
                           n_init=2, journal=db)
    with erahbo.runtime.journal.Journal.open(db) as j:
        assert len(j.settings["warm_start"]) == earlier.configs.shape[0]
    # the resume rebuilds the warm start from the journal's settings alone
    again = erahbo.resume(db, task)
    cols = ["phase", "config_id", "seed", "return"]
    pd.testing.assert_frame_equal(again.history[cols], full.history[cols])


def test_cli_warm_start_from_an_earlier_history(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    runner = CliRunner()
    first = runner.invoke(app, ["optimize", "--objective", "figure1", "--budget", "40",
                                "--out", "a", "--no-progress"])
    assert first.exit_code == 0, first.output
    res = runner.invoke(app, ["optimize", "--objective", "figure1", "--budget", "20",
                              "--warm-start", "a/history.csv", "--n-init", "0", "--out", "b",
                              "--no-progress"])
    assert res.exit_code == 0, res.output
    hist = pd.read_csv(tmp_path / "b" / "history.csv")
    n_a, n_b = spent_budget_cli(tmp_path / "a", 40), spent_budget_cli(tmp_path / "b", 20)
    assert (hist.phase == "warm").sum() == n_a and (hist.phase == "bo").sum() == n_b
    assert f"{n_b} training runs counted in" in res.output
    assert f"{n_a} warm-start runs" in res.output
    bad = runner.invoke(app, ["optimize", "--objective", "figure1", "--warm-start", "a/rounds.csv",
                              "--out", "c", "--no-progress"])
    assert bad.exit_code != 0 and "no 'return' column" in bad.output


def _always_fails(config, seed):
    raise RuntimeError("training diverged")


@pytest.mark.parametrize("journaled", [False, True])
def test_failed_runs_are_penalized_below_the_warm_returns(earlier, tmp_path, journaled):
    from erahbo.runtime.failures import penalty_value

    task = Figure1Task()
    warm = earlier.history
    res = erahbo.optimize(_always_fails, task.space, budget=6, seed=0, warm_start=warm,
                          n_init=0, failures="penalize",
                          journal=tmp_path / "p.db" if journaled else None)
    hist = res.history.reset_index(drop=True)
    bad = hist[hist.status == "penalized"]
    assert len(bad) == 6
    q1 = penalty_value(warm["return"])  # a bottom-quartile run of the warm returns
    for i, row in bad.iterrows():  # ... lowered to the lowest value its configuration counts
        own = hist.loc[: i - 1][hist.loc[: i - 1].config_id == row.config_id]["return"]
        assert row["return"] == pytest.approx(min([q1, *own]))
    assert res.incumbent_id not in set(bad.config_id) - set(hist[hist.phase == "warm"].config_id)
    # a configuration that always fails is never picked


def test_a_dropped_warm_record_leaves_the_seed_streams_alone():
    """A warm record too small to use must not shift the seeds handed out for its config."""
    table = pd.DataFrame({"x": np.linspace(0, 1, 30)})
    space = erahbo.SearchSpace.from_table(table)
    plain = erahbo.Optimizer(space, method="rahbo", k=2, budget=20, seed=0, n_init=2)
    warm = erahbo.Optimizer(space, method="rahbo", k=2, budget=20, seed=0, n_init=2,
                            warm_start=[{"row": r, "returns": [1.0], "seeds": [7]}
                                        for r in range(30)])
    assert warm.data.n == 0 and warm.result().history.empty  # no warm run was kept
    for _ in range(2):
        a, b = plain.ask(), warm.ask()
        assert (a.config_id, a.seeds) == (b.config_id, b.seeds)
        plain.tell(a, [0.1, 0.2])
        warm.tell(b, [0.1, 0.2])


def test_a_configuration_split_over_records_stays_excluded():
    task = Figure1Task()
    recs = [{"config": {"x": 0.3}, "returns": [1.0, None]},
            {"config": {"x": 0.3}, "returns": [1.1, 1.2]},  # the same configuration again
            {"config": {"x": 0.6}, "returns": [0.5, 0.7]}]
    opt = erahbo.Optimizer(task.space, budget=40, seed=0, n_init=0, warm_start=recs,
                           failures="exclude")
    assert opt.data.n == 1 and opt.result().configs["x"].tolist() == [0.6]
    hist = opt.result().history
    assert (hist.status == "failed").sum() == 1
    assert sorted(hist[hist.x == 0.3]["return"].dropna()) == [1.0, 1.1, 1.2]  # all kept
    assert set(opt.result().rounds.stop_reason) == {"warm", "infeasible"}
