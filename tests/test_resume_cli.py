"""Crash-safe studies with the real optimizer: library resume and the CLI."""

from __future__ import annotations

import json
import sqlite3

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

import erahbo
from conftest import spent_budget_cli
from erahbo.cli import app
from erahbo.objectives.synthetic import Figure1Task
from erahbo.runtime.journal import Journal
from erahbo.study import optimize
from fault_injection import table, table_objective
from resume_helpers import KW, Crash, same_history

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
        ("resume_helpers:one_arg_objective", "cannot be called as objective(config, seed)"),
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


def test_cli_version():
    res = CliRunner().invoke(app, ["--version"])
    assert res.exit_code == 0 and res.output.strip() == f"erahbo {erahbo.__version__}"


def test_status_names_the_journaled_risk_measure(tmp_path):
    """`erahbo status` of a CVaR study's journal gives the incumbent's estimate as CVaR_0.1."""
    out, journal = tmp_path / "o", tmp_path / "j.db"
    res = CliRunner().invoke(app, ["optimize", "--objective", "figure1", "--budget", "20",
                                   "--risk", "cvar", "--q", "0.1", "--journal", str(journal),
                                   "--out", str(out), "--no-progress"])
    assert res.exit_code == 0, res.output
    res = CliRunner().invoke(app, ["status", str(journal)])
    assert res.exit_code == 0, res.output
    assert "estimated CVaR_0.1" in res.output and "estimated MV" not in res.output
