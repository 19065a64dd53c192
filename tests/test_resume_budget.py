"""Crash-safe studies with the real optimizer: more budget for a finished or running study,
the read-only status of a journal."""

from __future__ import annotations

import os

import pandas as pd
import pytest
from typer.testing import CliRunner

from conftest import spent_budget, spent_budget_cli
from erahbo.cli import app
from erahbo.objectives.synthetic import Figure1Task
from erahbo.runtime.journal import Journal, SettingsMismatchError
from erahbo.study import Optimizer, optimize
from fault_injection import table, table_objective
from fault_kill import snapshot
from resume_helpers import KW, Counting, Crash, same_history

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
    res = CliRunner().invoke(app, ["optimize", "--objective", "figure1", "--budget", "40",
                                   "--journal", str(db), "--out", "o", "--no-progress"])
    assert res.exit_code == 0, res.output
    res = CliRunner().invoke(app, ["resume", str(db), "--budget", "60", "--no-progress"])
    assert res.exit_code == 0, res.output
    assert "budget raised from 40 to 60" in res.output
    spent_budget_cli(tmp_path / "o", 60)
    res = CliRunner().invoke(app, ["resume", str(db), "--budget", "50", "--no-progress"])
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
