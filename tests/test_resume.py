"""Crash-safe studies with the real optimizer: journal, exact resume, failure policies, CLI.

The SIGKILL test forks the study from a "zygote" process (tests/fault_injection.py chain) so
that its 25+ attempts do not each pay the interpreter and import start-up.
"""

from __future__ import annotations

import json
import math
import os
import pickle
import sqlite3
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

import erahbo
from conftest import spent_budget, spent_budget_cli
from erahbo.cli import app
from erahbo.objectives.synthetic import Figure1Task
from erahbo.runtime.failures import penalty_value
from erahbo.runtime.journal import (
    Journal,
    JournalCorruptError,
    SettingsMismatchError,
    canonical_json,
)
from erahbo.study import Optimizer, load_objective, objective_spec, optimize, study_options
from fault_injection import (
    FAIL_ENV,
    check_no_loss_no_duplicates,
    progress,
    segfault_objective,
    snapshot,
    table,
    table_objective,
)

SCRIPT = os.path.join(os.path.dirname(__file__), "fault_injection.py")
SRC = os.path.join(os.path.dirname(os.path.dirname(__file__)), "src")
VOLATILE = ["wall_time", "worker", "rerun"]  # differ between a resumed and a straight run
KW = {"budget": 40, "seed": 1, "k_min": 2, "k_max": 4, "k": 3, "n_init": 3}


class Crash(BaseException):
    """Stands for a crash of the study process (nothing may catch it)."""


def same_history(a: pd.DataFrame, b: pd.DataFrame) -> None:
    """Equal run by run, up to times, workers, re-run flags and traceback frames."""
    cols = [c for c in a.columns if c not in VOLATILE]
    a, b = (x[cols].reset_index(drop=True) for x in (a, b))
    for x in (a, b):
        x["error"] = x["error"].map(lambda e: e.splitlines()[0] if isinstance(e, str) else None)
    pd.testing.assert_frame_equal(a, b)


@pytest.fixture
def failing(monkeypatch):
    monkeypatch.setenv(FAIL_ENV, "0.2")


class Counting:
    """Counts calls of an objective (serial executor: same process)."""

    def __init__(self, fn):
        self.fn, self.calls = fn, 0

    def __call__(self, config, seed):
        self.calls += 1
        return self.fn(config, seed)


def one_arg_objective(config):  # a wrong signature, for the CLI test
    return 0.0


# --- settings ------------------------------------------------------------------------------


def test_study_settings_hold_every_decision_setting():
    opt = Optimizer(table(), "erahbo", **KW)
    s = opt.study_settings()
    assert set(s) >= {
        "method", "budget", "seed", "alpha", "beta", "beta_stop", "schedule", "gamma", "slope",
        "k_min", "k_max", "k", "n_init", "k_init", "kernel", "refit_every", "raw_samples",
        "n_polish", "rho_max2", "initial_design", "initial_in_budget", "failures", "retries",
        "space",
    }
    assert json.loads(canonical_json(s)) == s  # plain JSON
    assert s["k_init"] == 2 and s["failures"] is None  # erahbo's default k_init
    assert s["space"]["table"]["rows"] == 40
    other = table()
    other.iloc[7, 1] += 1e-6  # one value of the table changed: another study
    assert Optimizer(other, "erahbo", **KW).study_settings()["space"] != s["space"]
    assert Optimizer(table(), "erahbo", **KW).study_settings() == s
    task = Figure1Task()
    s2 = Optimizer(task.space, "rahbo", k=2, budget=20, failures="retry").study_settings()
    assert s2["space"] == task.space.to_json() and (s2["failures"], s2["retries"]) == ("retry", 2)
    again = Optimizer(erahbo.SearchSpace.from_json(s2["space"]), **study_options(s2))
    assert again.study_settings() == s2  # settings rebuild the same optimizer


def test_journals_without_the_newer_options_resume_with_them_off(tmp_path):
    # settings schema 1 (journals written before 2026-11-26) left pool_share, seed_share and
    # recommend_seeds out at 0 (and journals older than them lack them): absent means off,
    # not today's default. The journal is written today at 0 and its settings put in schema 1.
    from erahbo.runtime.journal_format import settings_hash

    task = Figure1Task()
    kw = {"budget": 30, "k_max": 4, "n_init": 3, "raw_samples": 64, "n_polish": 2,
          "pool_share": 0, "recommend_seeds": 0}
    path = tmp_path / "old.db"
    ref = optimize(task, task.space, journal=path, **kw)
    with Journal.open(path) as j:
        old = {k: v for k, v in j.settings.items()
               if k not in ("pool_share", "seed_share", "recommend_seeds", "schema")}
    con = sqlite3.connect(path)
    con.execute("UPDATE study SET settings = ?, settings_hash = ?",
                (canonical_json(old), settings_hash(old)))
    con.execute("DELETE FROM snapshots")  # (of today's settings key)
    con.commit()
    con.close()
    res = erahbo.resume(path, budget=40)  # rebuilt from the journal, then extended
    same_history(ref.history, res.history.iloc[: len(ref.history)])
    assert res.n_evals >= 39


def test_objective_specs_round_trip():
    assert objective_spec(Figure1Task()) == "figure1"
    assert objective_spec(Figure1Task(h_lo=0.5)) is None  # not the bundled defaults
    assert objective_spec(table_objective) == "fault_injection:table_objective"
    assert objective_spec(lambda c, s: 0.0) is None
    fn, space = load_objective("fault_injection:table_objective")
    assert fn is table_objective and space is None
    task, space = load_objective("branin")
    assert space is task.space and space.names == ["x1", "x2"]
    with pytest.raises(ValueError, match="neither a bundled task"):
        load_objective("figure2")
    with pytest.raises(ImportError, match="cannot import module 'no_such_module'"):
        load_objective("no_such_module:train")
    with pytest.raises(AttributeError, match="has no 'nope'"):
        load_objective("fault_injection:nope")


# --- exact resume ----------------------------------------------------------------------------


def test_sigkill_at_random_points_real_optimizer_resumes_exactly(tmp_path):
    """>= 20 SIGKILLs (each right after a journal commit, at sorted random points of the whole
    study) plus kills from outside at random times; resumed every time; the study ends with the
    same history, rounds and journal as an uninterrupted one: zero lost, zero duplicated."""
    out = {k: str(tmp_path / k) for k in ("k.db", "k.pkl", "r.db", "r.pkl")}
    cmd = [sys.executable, SCRIPT, "chain", "--journal", out["k.db"], "--history", out["k.pkl"],
           "--ref-journal", out["r.db"], "--ref-history", out["r.pkl"], "--kills", "22",
           "--timed-kills", "3", "--rng", "20240611", "--", "--budget", "60",
           "--failures", "retry"]
    env = {**os.environ, FAIL_ENV: "0.15", "PYTHONPATH": os.pathsep.join(
        [SRC, os.path.dirname(SCRIPT), os.environ.get("PYTHONPATH", "")])}
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=240)
    assert proc.returncode == 0, proc.stderr[-3000:]
    report = json.loads(proc.stdout.strip().splitlines()[-1])
    attempts = report["attempts"]
    killed = [a for a in attempts if a["killed"]]
    assert len([a for a in killed if a["commits"] is not None]) >= 20
    assert not attempts[-1]["killed"] and attempts[-1]["returncode"] == 0
    ref, res = (pickle.load(open(out[k], "rb")) for k in ("r.pkl", "k.pkl"))
    same_history(ref.history, res.history)
    pd.testing.assert_frame_equal(ref.rounds, res.rounds)
    assert res.incumbent == ref.incumbent and res.n_evals == ref.n_evals <= 60
    # retried runs count in the budget too (issue 13): the history fills it, but for a single
    # last run that no round can use (a new configuration needs 2 seeds; README)
    assert len(ref.history) >= 60 or spent_budget(ref, 60, n=len(ref.history))
    counts = check_no_loss_no_duplicates(out["k.db"], out["r.db"])
    # a run cut again during its re-run has two interrupted rows and one final re-run
    assert 1 <= res.history.rerun.sum() <= counts["interrupted"]
    assert set(ref.history.status) >= {"ok", "retried"}  # failures were part of the study


def test_optimize_resume_runs_only_what_is_missing(tmp_path, failing):
    ref = optimize(table_objective, table(), failures="retry", **KW)
    path = tmp_path / "s.db"
    calls = Counting(table_objective)
    told = []

    def crash_after_5(opt, trial, outcome):
        if trial is not None:
            told.append(len(outcome.runs))
            if len(told) == 5:
                raise Crash

    with pytest.raises(Crash):
        optimize(calls, table(), failures="retry", journal=path, callback=crash_after_5, **KW)
    before = calls.calls
    assert before == sum(told)
    res = optimize(calls, table(), failures="retry", journal=path, **KW)
    same_history(ref.history, res.history)
    pd.testing.assert_frame_equal(ref.rounds, res.rounds)
    assert calls.calls == len(ref.history)  # every run made once in all, none twice
    again = optimize(calls, table(), failures="retry", journal=path, **KW)  # complete: no run
    assert calls.calls == len(ref.history)
    same_history(ref.history, again.history)
    with pytest.raises(SettingsMismatchError, match=r"alpha: 1\.0 in the journal, 2\.0 now"):
        optimize(calls, table(), failures="retry", journal=path, **{**KW, "alpha": 2.0})
    with pytest.raises(SettingsMismatchError, match="failures: 'retry' in the journal"):
        optimize(calls, table(), failures="penalize", journal=path, **KW)


def test_ask_tell_journal_crash_after_every_commit(tmp_path):
    """Ask/tell with a journal; NaN returns are penalized, one configuration is declared
    infeasible. The study is cut after every one of its commits in turn and rebuilt each time
    from the journal alone: it ends exactly as the uninterrupted one."""
    kw = {**KW, "budget": 30}

    def returns(trial):
        ys = [table_objective(trial.config, s) for s in trial.seeds]
        if trial.trial_id % 3 == 0:
            ys[-1] = math.nan
        return ys

    def run(path, cut=None):
        opt = Optimizer(table(), "erahbo", journal=path, synchronous="NORMAL", **kw)
        if cut is not None:

            def hook(n):
                if progress(opt.journal._conn) > cut:
                    raise Crash

            opt.journal.on_commit = hook
        try:
            while (t := opt.ask()) is not None:
                opt.tell(t, returns(t), infeasible=t.trial_id == 5)
            return opt.result()
        except Crash:
            return None
        finally:
            opt.close()

    ref = run(tmp_path / "ref.db")
    assert "penalized" in set(ref.history.status)
    assert (ref.rounds.stop_reason == "infeasible").sum() == 1
    pen = ref.history[ref.history.status == "penalized"]
    ok = ref.history[ref.history.status == "ok"]
    assert pen["return"].between(ok["return"].min(), ok["return"].max()).all()  # Q1 (issue 13)
    assert pen.error.str.contains("NaN").all()
    path, cut, cuts = tmp_path / "k.db", 0, 0
    while (res := run(path, cut)) is None:
        cut = progress(str(path))
        cuts += 1
    assert cuts == len(snapshot(str(tmp_path / "ref.db"))[2])  # one cut per commit: ask, tell
    same_history(ref.history, res.history)
    assert snapshot(str(path)) == snapshot(str(tmp_path / "ref.db"))


def test_ask_tell_pending_trial_is_asked_again_and_nan_policy(tmp_path):
    path = tmp_path / "s.db"
    opt = Optimizer(table(), "rahbo", journal=path, **KW)
    t = opt.ask()
    opt.tell(t, [table_objective(t.config, s) for s in t.seeds])
    lost = opt.ask()
    opt.journal._abandon()  # crash: the trial was asked, never told
    opt = Optimizer(table(), "rahbo", journal=path, **KW)
    again = opt.ask()
    assert (again.config, again.seeds, again.config_id) == (lost.config, lost.seeds,
                                                            lost.config_id)
    with pytest.raises(ValueError, match="not the pending one"):
        opt.tell(t, [1.0, 2.0, 3.0])
    with pytest.raises(ValueError, match="exclude: not journaled"):
        opt.exclude(3)
    opt.tell(again, [math.nan, 1.0, 2.0])
    h = opt.result().history
    assert list(h.status[-3:]) == ["penalized", "ok", "ok"]
    own = h.loc[(h.config_id == again.config_id) & (h.status == "ok"), "return"]
    assert h["return"].iloc[-3] == penalty_value(  # the lower quartile of every feasible
        h.loc[h.status == "ok", "return"], own=own)  # return, at most its configuration's
    opt.close()
    # no journal: failures="exclude" makes a NaN configuration infeasible
    ex = Optimizer(table(), "rahbo", failures="exclude", **KW)
    t = ex.ask()
    ex.tell(t, [1.0, math.nan, 2.0])
    h = ex.result().history
    assert list(h.status) == ["ok", "failed", "ok"] and ex.result().rounds.stop_reason[0] == (
        "infeasible")


# --- failure policies -------------------------------------------------------------------------


@pytest.mark.parametrize("failures", ["penalize", "retry", "exclude"])
def test_failure_policies_show_in_the_history(failures, monkeypatch):
    monkeypatch.setenv(FAIL_ENV, "0.3")
    res = optimize(table_objective, table(), failures=failures, **KW)
    h = res.history
    assert res.failures == failures and res.n_evals == (h.status.isin(["ok", "penalized"])).sum()
    bad = h[h.status != "ok"]
    assert len(bad) and bad.error.str.contains("diverged|NaN").all()
    if failures == "penalize":
        assert set(h.status) == {"ok", "penalized"}
        assert KW["budget"] - 1 <= res.n_evals <= KW["budget"]  # no round starts with 1 left
        ok = h[h.status == "ok"]["return"]
        assert bad["return"].between(ok.min(), ok.max()).all()  # the quartile (issue 13)
    elif failures == "retry":
        assert "retried" in set(h.status)
        assert not h[h.attempt > 0].seed.isin(h[h.attempt == 0].seed).any()  # new seeds
        assert bad[bad.status == "retried"]["return"].isna().all()
    else:
        excluded = set(h[h.status == "failed"].config_id)
        assert excluded and res.incumbent_id not in excluded
        for cid in excluded:  # never asked again after its failure (re-selected before: may be)
            mine = h[h.config_id == cid]
            assert mine.iteration.max() == mine[mine.status == "failed"].iteration.min()
        assert (res.rounds.stop_reason == "infeasible").sum() == len(excluded)


def test_objective_failing_everywhere_stops_with_one_clear_message():
    with pytest.raises(ValueError, match=r"every run of the initial design failed \(Zero"):
        optimize(lambda c, s: 1 / 0 if s else 0.0, table(), **KW)


def test_process_pool_same_decisions_concurrent_seeds_and_crashing_worker(failing):
    from erahbo.runtime.executors import ProcessExecutor

    serial = optimize(table_objective, table(), method="rahbo", failures="retry", **KW)
    with ProcessExecutor(max_workers=2) as pool:
        par = optimize(table_objective, table(), method="rahbo", failures="retry",
                       executor=pool, **KW)
        same_history(serial.history, par.history)  # same decisions on any executor
        assert par.history.worker.nunique() == 2  # seeds of a round ran concurrently
        crash = optimize(segfault_objective, table(), method="rahbo", executor=pool,
                         failures="penalize", **KW)
    h = crash.history
    dead = h[h.x0 < 0.1]
    assert len(dead) and (dead.status == "penalized").all()
    assert dead.error.str.contains("WorkerCrashed: worker process died: killed by signal "
                                   "SIGSEGV").all()
    assert not h[h.x0 >= 0.1].error.str.contains("WorkerCrashed").any()


# --- validation at the boundaries -------------------------------------------------------------


@pytest.mark.parametrize(
    ("kwargs", "exc", "msg"),
    [
        ({"alpha": -1.0}, ValueError, "alpha=-1.0 is negative"),
        ({"k_min": 0}, ValueError, "k_min=0 must be an int >= 1"),
        ({"k_min": 4, "k_max": 3}, ValueError, "k_max=3 is smaller than k_min=4"),
        ({"budget": 5}, ValueError, "budget=5 is smaller than the initial design"),
        ({"failures": "ignore"}, ValueError, "failures='ignore' is not a policy"),
        ({"retries": -1}, ValueError, "retries=-1 must be >= 0"),
        ({"run_timeout": 0}, ValueError, "run_timeout=0 must be > 0"),
        ({"executor": "dask"}, ValueError, "executor='dask' is not known"),
        ({"executor": "serial", "workers": 4}, ValueError, "workers=4 needs executor="),
        ({"workers": 0}, ValueError, "workers=0 must be an int >= 1"),
    ],
)
def test_optimize_validates_options_with_one_message(tmp_path, kwargs, exc, msg):
    with pytest.raises(exc, match=msg.replace("(", r"\(").replace(".", r"\.")):
        optimize(table_objective, table(), journal=tmp_path / "s.db", **{**KW, **kwargs})
    assert not (tmp_path / "s.db").exists()  # nothing journaled for a bad call


def test_validation_of_objectives_and_journal_paths(tmp_path):
    with pytest.raises(TypeError, match=r"cannot be called as objective\(config, seed\)"):
        optimize(one_arg_objective, table(), **KW)
    with pytest.raises(TypeError, match="cannot be sent to worker processes"):
        optimize(lambda c, s: 0.0, table(), workers=2, **KW)
    with pytest.raises(ValueError, match="is a directory"):
        Optimizer(table(), journal=tmp_path, **KW)
    with pytest.raises(ValueError, match="does not exist; create it first"):
        optimize(table_objective, table(), journal=tmp_path / "no" / "s.db", **KW)
    (tmp_path / "notes.db").write_text("not a journal")
    with pytest.raises(JournalCorruptError, match="not an SQLite database"):
        Optimizer(table(), journal=tmp_path / "notes.db", **KW)
    assert (tmp_path / "notes.db").read_text() == "not a journal"


# --- library resume and the CLI ---------------------------------------------------------------


def test_resume_rebuilds_objective_and_space_from_the_journal(tmp_path):
    task = Figure1Task()
    kw = {"budget": 36, "k_max": 4, "n_init": 3, "raw_samples": 64, "n_polish": 2}
    ref = optimize(task, task.space, **kw)
    path = tmp_path / "f.db"

    def crash(opt, trial, outcome):
        if opt.n_evals >= 16:
            raise Crash

    with pytest.raises(Crash):
        optimize(task, task.space, journal=path, callback=crash, **kw)
    with Journal.open(path) as j:
        assert j.info["objective"] == "figure1" and j.info["executor"] == "serial"
    res = erahbo.resume(path)
    same_history(ref.history, res.history)
    assert res.incumbent == ref.incumbent


def test_cli_optimize_resume_and_messages(tmp_path, monkeypatch, failing):
    monkeypatch.chdir(tmp_path)
    space = tmp_path / "space.json"
    space.write_text(json.dumps({f"x{i}": ["float", 0.0, 1.0] for i in range(3)}))
    common = ["--objective", "fault_injection:table_objective", "--space", str(space),
              "--budget", "30", "--k-max", "4", "--n-init", "3", "--failures", "retry",
              "--no-progress"]
    runner = CliRunner()
    res = runner.invoke(app, ["optimize", *common, "--journal", "a.db", "--out", "a"])
    assert res.exit_code == 0, res.output
    assert "incumbent" in res.output and "estimated MV" in res.output
    summary = json.loads((tmp_path / "a" / "summary.json").read_text())
    # failed runs count in the budget (issue 13): counted runs + retried ones fill it
    assert set(summary["incumbent"]) == {"x0", "x1", "x2"}
    hist_a = pd.read_csv(tmp_path / "a" / "history.csv")
    assert summary["n_evals"] <= 30 and len(hist_a) <= 30 + 4 * 2
    assert len(hist_a) >= 30 or spent_budget_cli(tmp_path / "a", 30, n=len(hist_a))
    full = pd.read_csv(tmp_path / "a" / "history.csv")
    assert {"status", "error", "attempt", "worker", "rerun"} <= set(full.columns)
    assert full.x0.dtype == float and full.x0.between(0, 1).all()  # ["float", 0, 1] typed
    assert full.error.dropna().str.contains("diverged|NaN").all()
    # the same study, crashed after 4 trials, then `erahbo resume`
    sp = erahbo.study.load_space(space)

    def crash(opt, trial, outcome):
        if trial is not None and trial.trial_id == 4:
            raise Crash

    info = {"objective": "fault_injection:table_objective", "out": str(tmp_path / "b"),
            "workdir": str(tmp_path)}
    with pytest.raises(Crash):
        optimize(table_objective, sp, budget=30, k_max=4, n_init=3, failures="retry",
                 journal="b.db", callback=crash, journal_info=info)
    res = runner.invoke(app, ["resume", "b.db", "--no-progress"])
    assert res.exit_code == 0, res.output
    assert "resuming b.db" in res.output and "incumbent" in res.output
    same_history(full, pd.read_csv(tmp_path / "b" / "history.csv"))
    # one clear message per mistake, exit code 2, no traceback
    cases = [
        (["--alpha", "-1"], "alpha=-1.0 is negative"),
        (["--k-min", "0"], "k_min=0 must be an int >= 1"),
        (["--k-min", "5", "--k-max", "4"], "k_max=4 is smaller than k_min=5"),
        (["--budget", "5"], "budget=5 is smaller than the initial design"),
        (["--journal", "."], "is a directory; give a file path"),  # (missing folders are made)
        (["--journal", "a.db", "--seed", "3"], "seed: 0 in the journal, 3 now"),
        (["--executor", "dask"], "executor='dask' is not known"),
    ]
    for extra, msg in cases:
        bad = runner.invoke(app, ["optimize", *common, *extra, "--out", "x"])
        assert bad.exit_code == 2 and msg in bad.output and "Traceback" not in bad.output, (
            extra, bad.output)
    for objective, msg in [
        ("test_resume:one_arg_objective", "cannot be called as objective(config, seed)"),
        ("nomodule:train", "cannot import module 'nomodule'"),
        ("figure3", "neither a bundled task"),
    ]:
        bad = runner.invoke(app, ["optimize", "--objective", objective, "--space", str(space)])
        assert bad.exit_code == 2 and msg in bad.output, bad.output
    bad = runner.invoke(app, ["optimize", "--objective", "figure1", "--space", str(space)])
    assert "--space is not used with the bundled task figure1" in bad.output
    bad = runner.invoke(app, ["resume", "nothing.db"])
    assert bad.exit_code == 2 and "journal nothing.db does not exist" in bad.output


def test_cli_optimize_bundled_task_and_table(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    table().to_csv(tmp_path / "table.csv", index=False)
    runner = CliRunner()
    res = runner.invoke(app, ["optimize", "--objective", "fault_injection:table_objective",
                              "--space", "table.csv", "--budget", "24", "--k-max", "4",
                              "--n-init", "3", "--journal", "t.db", "--out", "t"])
    assert res.exit_code == 0, res.output
    h = pd.read_csv(tmp_path / "t" / "history.csv")
    assert len(h) == 24 and h.config_id.max() < 40
    for fig in ("configs.png", "rounds.png"):  # the run's figures come with the tables
        assert (tmp_path / "t" / fig).stat().st_size > 10_000, fig
    with Journal.open(tmp_path / "t.db") as j:
        assert j.info["space_file"] == str(tmp_path / "table.csv")
    res = runner.invoke(app, ["resume", "t.db", "--out", "t2", "--no-progress"])  # complete
    assert res.exit_code == 0, res.output
    same_history(h, pd.read_csv(tmp_path / "t2" / "history.csv"))
    import ConfigSpace as CS

    CS.ConfigurationSpace({f"x{i}": (0.0, 1.0) for i in range(3)}).to_json(tmp_path / "cs.json")
    res = runner.invoke(app, ["optimize", "--objective", "fault_injection:table_objective",
                              "--space", "cs.json", "--budget", "24", "--k-max", "4",
                              "--n-init", "3", "--out", "cs", "--no-progress"])
    assert res.exit_code == 0, res.output
    h = pd.read_csv(tmp_path / "cs" / "history.csv")
    assert (h.status == "ok").all() and h.x2.between(0, 1).all()
    res = runner.invoke(app, ["optimize", "--objective", "branin", "--budget", "24",
                              "--k-max", "4", "--n-init", "3", "--out", "b", "--no-progress"])
    assert res.exit_code == 0, res.output
    assert set(json.loads((tmp_path / "b" / "summary.json").read_text())["incumbent"]) == {
        "x1", "x2"}


def test_journal_counts_match_history(tmp_path, failing):
    res = optimize(table_objective, table(), failures="retry", journal=tmp_path / "s.db", **KW)
    con = sqlite3.connect(tmp_path / "s.db")
    n_runs = con.execute("SELECT COUNT(*) FROM runs").fetchone()[0]
    counted = con.execute(
        "SELECT COUNT(*) FROM runs WHERE status IN ('ok', 'penalized')").fetchone()[0]
    con.close()
    assert n_runs == len(res.history) and counted == res.n_evals <= KW["budget"]
    # failed (retried) runs count in the budget (issue 13): fewer counted runs, and the runs
    # with the failed ones spend it (but one left, which cannot start a round)
    assert res.n_evals < KW["budget"] - 1 <= n_runs
    assert np.isfinite(res.incumbent_mv)


def test_cli_optimize_creates_out_and_journal_folders(tmp_path, monkeypatch, cli_options):
    monkeypatch.chdir(tmp_path)
    res, _ = cli_options("--budget", "110", "--k-max", "4", "--journal", "new/dir/study.db",
                         "--out", "new/out")
    assert res.exit_code == 0, res.output
    assert (tmp_path / "new" / "dir" / "study.db").exists()
    assert (tmp_path / "new" / "out" / "history.csv").exists()


def test_cli_seed_batch_is_a_journaled_setting(tmp_path, monkeypatch, cli_options):
    """--seed-batch reaches the optimizer and its journal; a resume takes it from there and
    another value on the same journal is refused. (Its rounds: test_optimizer.py's
    seed_batch tests.)"""
    monkeypatch.chdir(tmp_path)
    base = ["--budget", "60", "--k-max", "6", "--n-init", "3", "--journal", "s.db"]
    res, opts = cli_options(*base, "--seed-batch", "2", "--out", "a")
    assert res.exit_code == 0, res.output
    assert opts["seed_batch"] == 2
    with Journal.open(tmp_path / "s.db") as j:
        assert j.settings["seed_batch"] == 2
    res = CliRunner().invoke(app, ["resume", "s.db", "--no-progress"])  # same settings
    assert res.exit_code == 0, res.output
    bad, opts = cli_options(*base, "--seed-batch", "3", "--out", "c")
    assert bad.exit_code != 0 and "seed_batch" in bad.output and opts is None


# --- more budget for a finished or running study ---------------------------------------------


def test_finished_study_gets_more_budget_and_replays_exactly(tmp_path):
    path = tmp_path / "s.db"
    calls = Counting(table_objective)
    kw = {**KW, "preset": "paper"}  # the paper's rounds spend the budget to the last run
    first = optimize(calls, table(), journal=path, **kw)
    assert first.n_evals == 40 and calls.calls == 40
    assert not os.path.exists(f"{path}.lock")  # no lock file left behind
    more = optimize(calls, table(), journal=path, **{**kw, "budget": 70})
    assert more.n_evals == 70 and calls.calls == 70  # the first 40 runs were replayed
    same_history(first.history, more.history.iloc[:len(first.history)])
    pd.testing.assert_frame_equal(first.rounds, more.rounds.iloc[:len(first.rounds)])
    assert more.settings["budget"] == 70
    with Journal.open(path) as j:
        assert j.settings["budget"] == 40 and j.budget() == 70
        assert j.budget_steps()[0][1] == 70
    # the same study again (its first budget, or the extended one): replayed, nothing run
    for b in (40, 70):
        again = optimize(calls, table(), journal=path, **{**kw, "budget": b})
        assert calls.calls == 70
        same_history(more.history, again.history)
    with pytest.raises(ValueError, match="budget of 70 runs"):
        optimize(calls, table(), journal=path, **{**kw, "budget": 50})
    with pytest.raises(SettingsMismatchError, match="give it more budget"):
        optimize(calls, table(), journal=path, **{**kw, "budget": 90, "alpha": 2.0})


def test_running_study_extended_then_killed_resumes_exactly(tmp_path):
    """A study with a beta_stop schedule (its decisions depend on the budget) is cut, given
    more budget, cut again and resumed: every replay decides each event under the budget it
    was decided under, and the ask/tell and the one-call paths agree."""
    kw = {**KW, "schedule": "exponential", "gamma": 5.0, "beta_stop": 1.0}  # (0: no schedule)

    def run(path, budget, cut=None):
        opt = Optimizer(table(), "erahbo", journal=path, **{**kw, "budget": budget})
        try:
            n = 0
            while (t := opt.ask()) is not None:
                opt.tell(t, [table_objective(t.config, s) for s in t.seeds])
                n += 1
                if cut is not None and n == cut:
                    return None
            return opt.result()
        finally:
            opt.close()

    assert run(tmp_path / "a.db", 40, cut=6) is None  # running study, cut
    assert run(tmp_path / "a.db", 70, cut=4) is None  # extended, cut again
    done = run(tmp_path / "a.db", 70)
    assert spent_budget(done, 70)
    again = optimize(table_objective, table(), journal=tmp_path / "a.db", failures="penalize",
                     **{**kw, "budget": 70})  # a fresh replay through both budgets (the
    # journaled Optimizer's policy, which optimize's default "retry" is not)
    same_history(done.history, again.history)
    pd.testing.assert_frame_equal(done.rounds, again.rounds)
    # the events before the extension were decided under budget 40: its schedule
    first = run(tmp_path / "b.db", 40, cut=6)
    assert first is None
    ref = Optimizer(table(), "erahbo", journal=tmp_path / "b.db", **{**kw, "budget": 40})
    head = ref.result().rounds
    ref.close()
    pd.testing.assert_frame_equal(head, done.rounds.iloc[:len(head)])


def test_cli_resume_with_more_budget(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    db = tmp_path / "study.db"
    res = CliRunner().invoke(app, ["optimize", "--objective", "figure1", "--budget", "100",
                                   "--journal", str(db), "--out", "o", "--no-progress"])
    assert res.exit_code == 0, res.output
    res = CliRunner().invoke(app, ["resume", str(db), "--budget", "140", "--no-progress"])
    assert res.exit_code == 0, res.output
    assert "budget raised from 100 to 140" in res.output
    spent_budget_cli(tmp_path / "o", 140)
    res = CliRunner().invoke(app, ["resume", str(db), "--budget", "120", "--no-progress"])
    assert res.exit_code != 0 and "more budget, not less" in res.output
    assert not (tmp_path / "study.db.lock").exists()


def test_status_is_a_read_only_summary_of_a_journal(tmp_path):
    from erahbo.study_status import study_status

    path = tmp_path / "s.db"
    told = []

    def crash_after_3(opt, trial, outcome):
        if trial is not None:
            told.append(trial)
            if len(told) == 3:
                raise Crash

    with pytest.raises(Crash):
        optimize(table_objective, table(), journal=path, callback=crash_after_3, **KW)
    # a candidate-table study: counts, no incumbent (the table is not in the journal)
    s = study_status(path)
    assert s.state == "stopped" and s.budget == 40 and s.n_rounds == 3
    assert s.incumbent is None and "candidate table" in s.note
    task = Figure1Task()
    path = tmp_path / "f.db"
    ref = optimize(task, task.space, journal=path, **KW)
    before = snapshot(str(path))
    s = study_status(path)
    # 39 or 40 of 40: one run left cannot start a new configuration (k_min = 2 seeds)
    assert s.state == "finished" and s.n_counted == ref.n_evals >= 39 and s.budget == 40
    assert s.incumbent_id == ref.incumbent_id and s.incumbent == ref.incumbent
    assert s.incumbent_mv == pytest.approx(ref.incumbent_mv)
    assert s.run_status == {"ok": ref.n_evals} and s.n_pending == 0
    assert snapshot(str(path)) == before  # nothing written
    with Journal.open(path):  # another process would hold the lock: running
        assert study_status(path).state == "running"
    res = CliRunner().invoke(app, ["status", str(path)])
    assert res.exit_code == 0, res.output
    assert "finished" in res.output and f"config {ref.incumbent_id}" in res.output
    assert "--budget N" in res.output
    res = CliRunner().invoke(app, ["status", str(tmp_path / "nope.db")])
    assert res.exit_code != 0 and "does not exist" in res.output


def test_cli_version():
    res = CliRunner().invoke(app, ["--version"])
    assert res.exit_code == 0 and res.output.strip() == f"erahbo {erahbo.__version__}"
