"""Bad input to a study ends in one clear message naming the value and the fix (issue 38):
a tell of one number for several seeds, `erahbo status` on a folder and its counts, a resume
with another objective, an absurd budget; and the rounds table's columns explained."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

import erahbo
from cli_helpers import run_cli


def ok_objective(config, seed):
    return math.sin(5 * float(config["x"])) + 0.01 * (seed % 7)


_cli = run_cli  # erahbo <args> in the test's folder (tests/cli_helpers.py)


# --- issue 38: tells, status, resume, budgets, the rounds table ---------------------------------


def test_one_number_told_for_a_trial_of_several_seeds_is_refused_with_its_seeds():
    """Rule: tell(trial, 1.0) on a trial of 2 seeds names the seeds and the fix and records
    nothing (the trial stays pending); one number is a whole tell for a 1-seed trial only."""
    opt = erahbo.Optimizer({"x": ("float", 0.0, 1.0)}, budget=10, seed=0)
    t = opt.ask()
    assert len(t.seeds) == 2
    for value in (1.0, np.float64(1.0), np.array(1.0)):
        with pytest.raises(ValueError, match=rf"trial 1 has 2 seeds \[{t.seeds[0]}, "
                           rf"{t.seeds[1]}\] and got one number .*one return per seed"):
            opt.tell(t, value)
    assert opt.result().history.empty and opt.n_pending == 1
    opt.tell(t, [1.0, 2.0])
    one = erahbo.Optimizer({"x": ("float", 0.0, 1.0)}, budget=10, seed=0, k_init=1, k_min=1)
    t = one.ask()
    assert len(t.seeds) == 1
    one.tell(t, 0.5)
    assert one.result().history["return"].tolist() == [0.5]


def test_status_of_a_folder_says_it_wants_a_journal_and_lists_those_inside(tmp_path,
                                                                          monkeypatch):
    """Rule: `erahbo status DIR` on an existing folder says what it expected (a journal file)
    and lists the journals in the folder and its subfolders, or says there are none."""
    study = tmp_path / "runs" / "a"
    study.mkdir(parents=True)
    erahbo.optimize(ok_objective, {"x": ("float", 0.0, 1.0)}, budget=10, seed=0,
                    journal=study / "study.db")
    (tmp_path / "runs" / "other.db").write_bytes(b"not a journal")
    res = _cli(["status", "runs"], tmp_path, monkeypatch)
    text = " ".join(res.output.split())
    assert res.exit_code != 0 and "does not exist" not in text
    assert "runs is a folder; erahbo status expects a study journal" in text
    assert f"the journals in it: {Path('runs') / 'a' / 'study.db'}" in text
    assert "other.db" not in text
    (tmp_path / "empty").mkdir()
    res = _cli(["status", "empty"], tmp_path, monkeypatch)
    assert "holds no erahbo journal" in " ".join(res.output.split())


class _Interrupting:
    """An objective whose 7th call is cut by Ctrl-C (the study stops; resume re-runs it)."""

    def __init__(self):
        self.calls = 0

    def __call__(self, config, seed):
        self.calls += 1
        if self.calls == 7:
            raise KeyboardInterrupt
        return ok_objective(config, seed)


def test_status_counts_add_up_and_name_the_runs_not_counted(tmp_path, monkeypatch):
    """Rule: the counted runs' statuses add up to the counted number; runs not counted (a run
    cut by Ctrl-C, run again on resume) are listed apart, with what they are."""
    path = tmp_path / "j.db"
    objective = _Interrupting()
    with pytest.raises(KeyboardInterrupt):
        erahbo.optimize(objective, {"x": ("float", 0.0, 1.0)}, budget=16, seed=0,
                        journal=path)
    res = erahbo.resume(path, objective)
    assert (res.history["status"] == "ok").sum() == res.n_evals == 16
    out = " ".join(_cli(["status", str(path)], tmp_path, monkeypatch).output.split())
    assert "training runs: 16 of 16 counted (16 ok)" in out
    assert ("runs not counted: 1 interrupted (cut by a crash, run again with the same seed)"
            in out)


def test_the_cli_refuses_to_resume_a_journal_with_another_objective(tmp_path, monkeypatch):
    """Rule: `erahbo resume PATH --objective OTHER` is refused by the check erahbo.optimize
    makes (nothing is run or written); the journal's own objective resumes."""
    from erahbo.runtime.journal import Journal

    space = tmp_path / "space.json"
    space.write_text('{"x": ["float", 0, 1]}')
    first = _cli(["optimize", "--objective", "test_bad_input:ok_objective", "--space",
                  "space.json", "--budget", "12", "--journal", "j.db", "--no-progress"],
                 tmp_path, monkeypatch)
    assert first.exit_code == 0, first.output
    res = _cli(["resume", "j.db", "--objective", "test_bad_input:other_objective", "--budget",
                "16", "--no-progress"], tmp_path, monkeypatch)
    text = " ".join(res.output.split())
    assert res.exit_code != 0 and "resuming" not in text
    assert ("holds a study of objective 'test_bad_input:ok_objective', but this call "
            "optimizes 'test_bad_input:other_objective'") in text
    with Journal.open(tmp_path / "j.db") as j:
        assert j.n_counted() <= 12 and j.budget() == 12
    same = _cli(["resume", "j.db", "--objective", "test_bad_input:ok_objective", "--budget",
                 "14", "--no-progress"], tmp_path, monkeypatch)
    assert same.exit_code == 0, same.output


def test_an_absurd_budget_is_refused_naming_the_limit(tmp_path, monkeypatch):
    """Rule: a budget above erahbo.validation.MAX_BUDGET is refused at once, by every entry
    point (they share the one rule), naming the limit; the limit itself is accepted."""
    from erahbo.validation import MAX_BUDGET

    space = {"x": ("float", 0.0, 1.0)}
    match = r"is more than erahbo's limit of 1,000,000 training runs .*MAX_BUDGET"
    with pytest.raises(ValueError, match=match):
        erahbo.Optimizer(space, budget=MAX_BUDGET + 1)
    with pytest.raises(ValueError, match=match):
        erahbo.optimize(ok_objective, space, budget=10**20)
    erahbo.Optimizer(space, budget=MAX_BUDGET)
    res = _cli(["optimize", "--objective", "figure1", "--budget", "99999999999999999999",
                "--no-progress"], tmp_path, monkeypatch)
    text = " ".join(res.output.split())
    assert res.exit_code != 0 and "budget=99999999999999999999 is more than erahbo's limit " \
        "of 1,000,000 training runs" in text


def test_rounds_csv_columns_are_documented_and_equal_bounds_explained():
    """Rule: every column of rounds.csv is in docs/robustness.md and in Result's docstring;
    under beta_stop = 0 (erahbo's default) ucb_mv equals lcb_mv in every round, and both say
    why; with beta_stop > 0 the bounds differ."""
    from erahbo.optimizer.records import Result

    docs = " ".join((Path(__file__).resolve().parents[1] / "docs" / "robustness.md")
                    .read_text().split())
    space = {"x": ("float", 0.0, 1.0)}
    res = erahbo.optimize(ok_objective, space, budget=24, seed=0)
    bo = res.rounds[res.rounds["phase"] != "init"].dropna(subset=["ucb_mv"])
    assert len(bo) and (bo["ucb_mv"] == bo["lcb_mv"]).all() and (bo["beta_stop"] == 0).all()
    for column in res.rounds.columns:
        assert f"`{column}" in docs or f" {column}," in docs or f"{column}`" in docs, column
    assert "Under `beta_stop = 0`, erahbo's default, the bounds have no width" in docs
    assert "under ``beta_stop = 0``, erahbo's default, the interval has no width" in " ".join(
        Result.__doc__.split())
    wide = erahbo.optimize(ok_objective, space, budget=24, seed=0, beta_stop=1.0)
    bo = wide.rounds[wide.rounds["phase"] != "init"].dropna(subset=["ucb_mv"])
    assert (bo["ucb_mv"] > bo["lcb_mv"]).all()
