"""Online tuning (`erahbo tune`) against a fake ARLBench worker speaking the real protocol."""

from __future__ import annotations

import json
import shlex
import sys
import textwrap
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from erahbo.arlbench.client import ArlClient
from erahbo.arlbench.tune import run_seeds, tune
from erahbo.cli import app
from erahbo.optimizer.options import Options

# Return depends on the learning rate with a spread that grows with it; lr > 0.05 diverges (NaN).
FAKE_RL_WORKER = textwrap.dedent(
    r'''
    import json, math, os, random, sys
    for line in sys.stdin:
        req = json.loads(line)
        rid, op = req.get("id"), req.get("op")
        if op in ("ping", "shutdown"):
            print(json.dumps({"id": rid, "status": "ok", "versions": {"arlbench": "fake"}}),
                  flush=True)
            if op == "shutdown":
                break
            continue
        hp = req["hp_config"]
        lr = float(hp["learning_rate"])
        for k, s in enumerate(req["seeds"]):
            rng = random.Random(s * 7919 + int(lr * 1e9))
            if lr > 0.05:
                out = {"status": "failed", "return": None, "error": "non-finite return (NaN/inf)"}
            else:
                z = math.log10(lr)
                mean = 500.0 - 60.0 * (z + 3.0) ** 2
                out = {"status": "ok", "return": mean + rng.gauss(0.0, 5.0 + 40.0 * (z + 6.0)),
                       "error": None}
            print(json.dumps({"id": rid, "seed": s, "runtime_s": 0.001, "first": k == 0, **out}),
                  flush=True)
    '''
)


@pytest.fixture
def fake_worker(tmp_path: Path) -> list[str]:
    p = tmp_path / "fake_rl_worker.py"
    p.write_text(FAKE_RL_WORKER)
    return [sys.executable, "-u", str(p)]


def test_run_seeds_spreads_over_workers_and_keeps_order(fake_worker):
    with ArlClient(2, worker_cmd=fake_worker) as client:
        res = run_seeds(client, "ppo_cc_cartpole", {"learning_rate": 1e-3}, [5, 1, 9])
    assert [r.seed for r in res] == [5, 1, 9]
    assert all(r.status == "ok" for r in res)


def test_run_seeds_can_keep_a_configuration_on_fewer_workers(fake_worker):
    """One compile per worker used: with max_workers=1 a single run pays for it."""
    with ArlClient(2, worker_cmd=fake_worker) as client:
        spread = run_seeds(client, "ppo_cc_cartpole", {"learning_rate": 1e-3}, [5, 1, 9, 4])
        one = run_seeds(client, "ppo_cc_cartpole", {"learning_rate": 1e-3}, [5, 1, 9, 4],
                        max_workers=1)
    assert sum(r.first for r in spread) == 2 and sum(r.first for r in one) == 1
    assert [r.return_ for r in one] == [r.return_ for r in spread]


def test_tune_handles_failed_runs_and_resumes(fake_worker, tmp_path):
    journal = tmp_path / "tune.db"
    with ArlClient(2, worker_cmd=fake_worker) as client:
        res = tune("ppo_cc_cartpole", client=client, budget=60, k_max=6, journal=journal)
    assert res.n_evals == 60
    hist = res.history
    assert {"status", "error"} <= set(hist.columns)
    lrs = hist["learning_rate"].to_numpy(dtype=float)
    failed = hist["status"] != "ok"
    # diverging learning rates are recorded as failed runs, penalized below the worst
    # feasible return seen before them
    assert (failed == (lrs > 0.05)).all()
    assert failed.any()
    assert hist.loc[failed, "error"].str.startswith("non-finite return").all()  # the worker's
    # (issue 13: at the lower quartile of the feasible returns, inside their range)
    ok = hist.loc[~failed, "return"]
    assert hist.loc[failed, "return"].between(ok.min(), ok.max()).all()
    assert res.incumbent["learning_rate"] <= 0.05
    # a second call with the same journal resumes the finished study instead of re-training
    with ArlClient(1, worker_cmd=["false"]) as dead:
        again = tune("ppo_cc_cartpole", client=dead, budget=60, k_max=6, journal=journal)
    pd.testing.assert_frame_equal(again.history.drop(columns="wall_time"),
                                  hist.drop(columns="wall_time"))


def test_tune_keeps_every_worker_busy_in_the_inner_loop(fake_worker, tmp_path):
    sizes: list[int] = []
    journal = tmp_path / "tune.db"

    with ArlClient(3, worker_cmd=fake_worker) as client:
        res = tune("ppo_cc_cartpole", client=client, budget=80, k_max=8, journal=journal,
                   on_trial=lambda trial, results, opt: sizes.append(len(trial.seeds)))
    assert 79 <= res.n_evals <= 80  # (no round starts with 1 run left)
    assert 3 in sizes[5:]  # after the initial design: batches of 3 seeds (one per worker)
    assert res.rounds[res.rounds.phase == "bo"].k.max() <= 8
    # the journal keeps seed_batch: resuming with another worker count replays the same study
    with ArlClient(1, worker_cmd=["false"]) as dead:
        again = tune("ppo_cc_cartpole", client=dead, budget=80, k_max=8, journal=journal)
    pd.testing.assert_frame_equal(again.history.drop(columns="wall_time"),
                                  res.history.drop(columns="wall_time"))


def test_tune_trains_several_configurations_at_once_and_resumes(fake_worker, tmp_path):
    journal = tmp_path / "tune.db"
    in_flight: list[int] = []
    with ArlClient(4, worker_cmd=fake_worker) as client:
        res = tune("ppo_cc_cartpole", client=client, method="rahbo", k=2, budget=60,
                   n_parallel=3, journal=journal,
                   on_trial=lambda trial, results, opt: in_flight.append(opt.n_pending))
    assert res.n_evals == 60
    assert max(in_flight) == 2  # told while two other configurations were still training
    assert res.history.groupby("config_id").seed.apply(lambda s: s.is_unique).all()
    # the journal keeps n_parallel and the order of the tells: the resume replays it exactly
    with ArlClient(1, worker_cmd=["false"]) as dead:
        again = tune("ppo_cc_cartpole", client=dead, method="rahbo", k=2, budget=60,
                     journal=journal)
    pd.testing.assert_frame_equal(again.history.drop(columns="wall_time"),
                                  res.history.drop(columns="wall_time"))


def test_tune_cli_writes_outputs(fake_worker, tmp_path):
    out = tmp_path / "t"
    res = CliRunner().invoke(app, ["tune", "--task", "dqn_cc_cartpole", "--budget", "40",
                                   "--k-max", "4", "--workers", "2", "--out", str(out),
                                   "--verify", "6", "--worker-cmd", shlex.join(fake_worker)])
    assert res.exit_code == 0, res.output
    assert "on 6 fresh seeds: mean" in res.output
    # not a terminal: one plain progress line per trial (for logs)
    assert sum("runs " in ln and "| round" in ln for ln in res.output.splitlines()) >= 5
    for name in ("history.csv", "rounds.csv", "configs.csv", "summary.json", "configs.png",
                 "rounds.png", "tune.md", "study.db"):
        assert (out / name).exists(), name
    summary = json.loads((out / "summary.json").read_text())
    assert summary["n_evals"] == 40
    hist = pd.read_csv(out / "history.csv")
    # DQN's conditional hyperparameters: tau only present when the target network is used
    off = hist["use_target_network"].astype(str) == "False"
    assert hist.loc[off, "tau"].isna().all()
    assert np.isfinite(summary["incumbent_mv"])
    v = summary["verification"]
    assert len(v["seeds"]) == 6 and len(v["returns"]) == 6
    used = set(hist.loc[hist["config_id"] == summary["incumbent_id"], "seed"])
    assert not used & set(v["seeds"])  # fresh seeds only
    assert "out of sample, 6 fresh seeds" in (out / "tune.md").read_text()


def test_verify_measures_mv_on_fresh_seeds(fake_worker):
    from erahbo.arlbench.tune import verify

    cfg = {"learning_rate": 1e-3}
    with ArlClient(2, worker_cmd=fake_worker) as client:
        v = verify("ppo_cc_cartpole", cfg, client=client, n_seeds=8, alpha=2.0, exclude=[5])
        again = verify("ppo_cc_cartpole", cfg, client=client, n_seeds=8, alpha=2.0, exclude=[5])
        bad = verify("ppo_cc_cartpole", {"learning_rate": 0.1}, client=client, n_seeds=3)
    assert v == again  # seeded: the same fresh seeds and returns
    assert len(set(v.seeds)) == 8 and 5 not in v.seeds
    r = np.array(v.returns)
    assert v.mean == pytest.approx(r.mean()) and v.std == pytest.approx(r.std(ddof=1))
    assert v.mv == pytest.approx(r.mean() - 2.0 / 500.0 * r.var(ddof=1))  # CartPole: scale 500
    assert bad.n_failed == 3 and np.isnan(bad.mv)  # diverging runs are failures, not numbers
    with pytest.raises(ValueError, match="n_seeds"):
        verify("ppo_cc_cartpole", cfg, client=client, n_seeds=1)


def test_verify_measures_the_study_s_risk_measure(fake_worker):
    """In a CVaR study the out-of-sample check is the sample CVaR of the fresh returns (the
    mean of the worst q share), on the raw return scale; alpha and scale do not enter."""
    from erahbo.arlbench.tune import verify
    from erahbo.risk import CVaR

    cfg = {"learning_rate": 1e-3}
    with ArlClient(2, worker_cmd=fake_worker) as client:
        v = verify("ppo_cc_cartpole", cfg, client=client, n_seeds=10, measure=CVaR(q=0.2),
                   alpha=7.0)
    r = np.sort(np.array(v.returns))
    assert v.mv == pytest.approx(r[:2].mean())


def test_tune_cli_names_the_risk_measure(fake_worker, tmp_path):
    """`erahbo tune --risk cvar --q 0.2`: the estimate, the verification and tune.md name
    CVaR_0.2 (return units) instead of MV; summary.json records the measure."""
    out = tmp_path / "t"
    res = CliRunner().invoke(app, ["tune", "--task", "dqn_cc_cartpole", "--budget", "30",
                                   "--k-max", "4", "--workers", "2", "--out", str(out),
                                   "--risk", "cvar", "--q", "0.2", "--verify", "5",
                                   "--worker-cmd", shlex.join(fake_worker)])
    assert res.exit_code == 0, res.output
    text = " ".join(res.output.split())
    assert "recommended configuration (estimated CVaR_0.2" in text
    assert "CVaR_0.2" in text.split("on 5 fresh seeds:")[1]
    summary = json.loads((out / "summary.json").read_text())
    assert summary["risk"] == {"risk": "cvar", "q": 0.2}
    assert summary["objective"] == "CVaR_0.2"
    assert "measured CVaR_0.2" in summary["verification_gap"]
    md = (out / "tune.md").read_text()
    assert "- estimated CVaR_0.2:" in md and "Ranked by LCB, the lower confidence bound of " \
        "CVaR_0.2" in md and "- objective: CVaR_0.2" in md


def test_tune_cli_unknown_task(tmp_path):
    res = CliRunner().invoke(app, ["tune", "--task", "ppo_cc_nope", "--out", str(tmp_path)])
    assert res.exit_code != 0
    assert "unknown task 'ppo_cc_nope'" in res.output


def test_alpha_is_scale_free(fake_worker):
    from erahbo.arlbench.registry import get_task
    from erahbo.arlbench.tune import return_scale

    assert return_scale(get_task("ppo_cc_cartpole")) == 500.0
    with ArlClient(1, worker_cmd=fake_worker) as client:
        a = tune("ppo_cc_cartpole", client=client, budget=30, k_max=4, seed=3)
        b = tune("ppo_cc_cartpole", client=client, budget=30, k_max=4, seed=3, alpha=2.0,
                 scale=1000.0)  # alpha / scale is the same: the same decisions
    pd.testing.assert_frame_equal(a.history.drop(columns="wall_time"),
                                  b.history.drop(columns="wall_time"))
    with pytest.raises(ValueError, match="scale"):
        tune("ppo_cc_cartpole", client=client, budget=30, scale=0.0)


def test_tune_cli_parallel_shows_configurations_in_flight(fake_worker, tmp_path):
    out = tmp_path / "p"
    res = CliRunner().invoke(app, ["tune", "--task", "ppo_cc_cartpole", "--method", "rahbo",
                                   "--k", "2", "--budget", "24", "--workers", "2",
                                   "--parallel", "2", "--out", str(out),
                                   "--worker-cmd", shlex.join(fake_worker)])
    assert res.exit_code == 0, res.output
    assert any("more in flight" in ln for ln in res.output.splitlines())
    assert json.loads((out / "summary.json").read_text())["n_evals"] == 24


def test_tune_cli_k_max_defaults_to_the_presets(fake_worker, tmp_path):
    """Rule: ``erahbo tune`` without ``--k-max`` runs the preset's ``k_max`` (20, as
    ``erahbo optimize``, the library, Optuna and Ray Tune), not a host default of its own;
    ``--k-max`` still sets it."""
    from erahbo.runtime.journal import Journal

    for extra, want in (([], 20), (["--k-max", "6"], 6)):
        out = tmp_path / f"k{want}"
        res = CliRunner().invoke(app, ["tune", "--task", "dqn_cc_cartpole", "--budget", "14",
                                       *extra, "--out", str(out), "--no-progress",
                                       "--worker-cmd", shlex.join(fake_worker)])
        assert res.exit_code == 0, res.output
        with Journal.open(out / "study.db") as j:
            assert j.settings["k_max"] == want, j.settings


def test_tune_cli_passes_the_beta_stop_schedule(fake_worker, tmp_path):
    out = tmp_path / "s"
    res = CliRunner().invoke(app, ["tune", "--task", "dqn_cc_cartpole", "--budget", "40",
                                   "--k-max", "4", "--schedule", "sigmoid", "--slope", "8",
                                   "--beta", "1.5", "--preset", "paper", "--out", str(out),
                                   "--worker-cmd", shlex.join(fake_worker)])
    assert res.exit_code == 0, res.output
    from erahbo.runtime.journal import Journal

    with Journal.open(out / "study.db") as j:
        s = j.settings
    assert (s["schedule"], s["slope"], s["beta"]) == ("sigmoid", 8.0, 1.5)
    bs = pd.read_csv(out / "rounds.csv").query("phase == 'bo'")["beta_stop"].to_numpy()
    # the first BO round starts at half the budget (5 x 4 initial runs of 40): s(0.5) = 0.5
    assert bs[0] == pytest.approx(0.5) and np.all(np.diff(bs) >= 0) and bs[-1] > 0.9
    bad = CliRunner().invoke(app, ["tune", "--task", "dqn_cc_cartpole", "--schedule", "step",
                                   "--out", str(tmp_path / "b"),
                                   "--worker-cmd", shlex.join(fake_worker)])
    assert bad.exit_code != 0 and "schedule='step' must be one of" in bad.output


def test_tune_cli_warm_starts_from_an_earlier_tuning(fake_worker, tmp_path):
    first, second = tmp_path / "a", tmp_path / "b"
    cmd = ["tune", "--task", "dqn_cc_cartpole", "--k-max", "4", "--worker-cmd",
           shlex.join(fake_worker)]
    res = CliRunner().invoke(app, [*cmd, "--budget", "30", "--out", str(first)])
    assert res.exit_code == 0, res.output
    res = CliRunner().invoke(app, [*cmd, "--budget", "12", "--n-init", "0", "--out", str(second),
                                   "--warm-start", str(first / "history.csv")])
    assert res.exit_code == 0, res.output
    hist = pd.read_csv(second / "history.csv")
    before = pd.read_csv(first / "history.csv")
    # diverged runs were penalized before and are penalized again (their values were penalties:
    # recomputed below the warm returns), with their configurations never the incumbent
    # the warm start keeps the configurations with the seeds a new one starts with (1 where
    # k_min or k_init is 1, else 2: a sample variance)
    need = Options(method="erahbo", budget=12, k_max=4, n_init=0).min_seeds
    runs = before[before.status.isin(["ok", "penalized"])]
    runs = runs[runs.groupby("config_id").seed.transform("size") >= need]
    warm = hist[hist.phase == "warm"]
    assert len(warm) == len(runs) == 30
    n_bad = (before.status == "penalized").sum()
    assert 0 < n_bad == (warm.status == "penalized").sum()
    ok = warm.loc[warm.status == "ok", "return"]  # issue 13: penalties inside the range
    assert warm.loc[warm.status == "penalized", "return"].between(ok.min(), ok.max()).all()
    share = warm.groupby("config_id").status.apply(lambda st: (st == "penalized").mean())
    bad_configs = set(share[share >= 0.5].index)  # mostly failing: never the incumbent
    assert json.loads((second / "summary.json").read_text())["incumbent_id"] not in bad_configs
    n_evals = json.loads((second / "summary.json").read_text())["n_evals"]
    assert (hist.phase == "bo").sum() == n_evals and 11 <= n_evals <= 12  # warm runs: no budget
    # DQN's conditional hyperparameters survive the round trip through history.csv
    warm = hist[hist.phase == "warm"]
    off = warm["use_target_network"].astype(str) == "False"
    assert warm.loc[off, "tau"].isna().all() and warm.loc[~off, "tau"].notna().all()


def test_tune_cli_checks_options_before_anything_starts(fake_worker, tmp_path):
    out = tmp_path / "never" / "made"
    res = CliRunner().invoke(app, ["tune", "--task", "dqn_cc_cartpole", "--budget", "9",
                                   "--k-max", "4", "--out", str(out),
                                   "--worker-cmd", shlex.join(fake_worker)])
    assert res.exit_code == 1
    assert "budget=9 is smaller than the initial design" in res.output
    assert "tuning dqn_cc_cartpole" not in res.output  # no banner first
    assert not (tmp_path / "never").exists()  # no empty --out folder left behind


def test_tune_cli_ctrl_c_says_how_to_continue(fake_worker, tmp_path, monkeypatch):
    import erahbo.arlbench.tune as tune_mod

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(tune_mod, "tune", interrupted)
    out = tmp_path / "t"
    res = CliRunner().invoke(app, ["tune", "--task", "dqn_cc_cartpole", "--budget", "20",
                                   "--k-max", "4", "--out", str(out),
                                   "--worker-cmd", shlex.join(fake_worker)])
    assert res.exit_code == 130
    assert f"the study is journaled in {out / 'study.db'}" in res.output
    assert "run the same command again to continue it: erahbo tune" in res.output


def test_progress_bar_is_drawn_from_the_first_update_only():
    from rich.console import Console

    from erahbo.cli._progress import LazyProgress, run_progress

    with LazyProgress(run_progress(Console(force_terminal=True))) as bar:
        tid = bar.add_task("", total=3)
        assert not bar.started  # an error here would print no empty bar
        bar.update(tid, completed=1)
        assert bar.started
    assert not bar.progress.live.is_started
