"""Crash-safe studies with the real optimizer: the study settings, exact resume.

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

import pandas as pd
import pytest

import erahbo
from conftest import spent_budget
from erahbo.objectives.synthetic import Figure1Task
from erahbo.runtime.failures import penalty_value
from erahbo.runtime.journal import Journal, SettingsMismatchError, canonical_json
from erahbo.study import Optimizer, load_objective, objective_spec, optimize, study_options
from fault_injection import FAIL_ENV, table, table_objective
from fault_kill import check_no_loss_no_duplicates, progress, snapshot
from resume_helpers import KW, SCRIPT, SRC, Counting, Crash, same_history

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
