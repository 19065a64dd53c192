"""Diagnostics of finished studies: each finding on the pattern it names, none otherwise."""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
from typer.testing import CliRunner

import erahbo
from erahbo.cli import app
from erahbo.diagnostics import diagnose


def _dead_or_learning(config: dict, seed: int) -> float:
    """Most configurations never learn (the same return on every seed, as on DQN Acrobot);
    those with x > 0.8 learn, with a spread between seeds."""
    x = float(config["x"])
    if x <= 0.8:
        return -500.0
    rng = np.random.default_rng([int(seed), int(1000 * x)])
    return -500.0 + 400.0 * x + 60.0 * rng.standard_normal()


def _codes(result: erahbo.Result) -> set[str]:
    return {f.code for f in diagnose(result)}


def test_ties_with_never_learning_configurations_are_reported():
    space = erahbo.SearchSpace.from_table(pd.DataFrame({"x": np.linspace(0, 1, 60)}))
    # the paper's settings (beta_stop = 1, no seed cap): erahbo's defaults avoid the ties
    res = erahbo.optimize(_dead_or_learning, space, budget=300, seed=0, preset="paper")
    r = res.rounds[(res.rounds.phase == "bo") & res.rounds.stop_reason.isin(["k_max",
                                                                              "dominated"])]
    share = (r.stop_reason == "k_max").mean()
    found = {f.code: f.message for f in diagnose(res)}
    assert share >= 0.5 and len(r) >= 10  # every dead configuration ties with the incumbent
    assert f"{share:.0%} of {len(r)} ERAHBO rounds ran to k_max (20 seeds)" in found[
        "k_max_rounds"]
    assert "beta_stop=0.25" in found["k_max_rounds"]
    capped = erahbo.optimize(_dead_or_learning, space, budget=300, seed=0, preset="paper",
                             k_max_means=5)  # the finding names both caps of a round
    assert "ran to k_max (20 seeds; 5 while the means differ: k_max_means)" in {
        f.code: f.message for f in diagnose(capped)}["k_max_rounds"]
    # at alpha = 1 on this raw scale (spread 60 -> variance 3600) a dead configuration wins
    assert res.incumbent["x"] <= 0.8 and "zero_spread_incumbent" in found
    assert res.settings["k_max"] == 20 and res.settings["alpha"] == 1.0
    race = erahbo.optimize(_dead_or_learning, space, budget=300, seed=0, stopping="race",
                           preset="paper")
    msg = {f.code: f.message for f in diagnose(race)}["k_max_rounds"]
    assert "the racing rule rarely" in msg and "beta_stop" not in msg.split(";")[0]
    # the same task with fixed seeds: no stopping rule, nothing to say about it
    fixed = erahbo.optimize(_dead_or_learning, space, method="rahbo", k=2, budget=60, seed=0)
    assert "k_max_rounds" not in _codes(fixed)


def _result(configs: pd.DataFrame, incumbent_id: int, history: pd.DataFrame | None = None,
            rounds: pd.DataFrame | None = None, method: str = "erahbo") -> erahbo.Result:
    from erahbo.optimizer.records import HISTORY_COLUMNS, ROUND_COLUMNS

    return erahbo.Result(
        incumbent={"x": 0.0}, incumbent_id=incumbent_id, incumbent_mv=0.0,
        history=history if history is not None else pd.DataFrame(columns=HISTORY_COLUMNS),
        rounds=rounds if rounds is not None else pd.DataFrame(columns=ROUND_COLUMNS),
        configs=configs, method=method, n_evals=0, failures="penalize")


def test_zero_spread_incumbent():
    configs = pd.DataFrame({"config_id": [0, 1], "x": [0.1, 0.9], "mean": [-500.0, 120.0],
                            "var": [0.0, 900.0], "k": [20, 4]})
    found = {f.code: f.message for f in diagnose(_result(configs, 0))}
    assert "zero_spread_incumbent" in found
    assert "returned -500 on all 20 seeds" in found["zero_spread_incumbent"]
    assert "lower alpha" in found["zero_spread_incumbent"]
    assert "zero_spread_incumbent" not in _codes(_result(configs, 1))  # spread: fine
    best = configs.assign(mean=[130.0, 120.0])  # no spread and the best mean: fine
    assert "zero_spread_incumbent" not in _codes(_result(best, 0))
    few = configs.assign(k=[2, 4])  # two equal seeds say little
    assert "zero_spread_incumbent" not in _codes(_result(few, 0))
    flat = configs.assign(var=[0.0, 0.0])  # the seed changes nothing: no risk to speak of
    assert "zero_spread_incumbent" not in _codes(_result(flat, 0))


def test_many_failures():
    configs = pd.DataFrame({"config_id": [0], "x": [0.1], "mean": [1.0], "var": [1.0],
                            "k": [8]})
    status = ["ok"] * 6 + ["penalized"] * 3 + ["retried"] * 5
    hist = pd.DataFrame({"status": status,
                         "error": [None] * 6 + ["RuntimeError: diverged\n  tb"] * 8})
    found = {f.code: f.message for f in diagnose(_result(configs, 0, history=hist))}
    # retried attempts are not final runs: 3 of 9 final runs failed
    assert found["many_failures"].startswith("3 of 9 training runs failed (penalize); first "
                                             "error: RuntimeError: diverged.")
    few = hist.assign(status=["ok"] * 8 + ["penalized"] + ["retried"] * 5)
    assert "many_failures" not in _codes(_result(configs, 0, history=few))


def half_fails(config: dict, seed: int) -> float:
    """Fails on half of the seeds (for the CLI test: importable as test_diagnostics:...)."""
    if seed % 2:
        raise RuntimeError("training diverged")
    return math.sin(5 * float(config["x"])) + 0.01 * (seed % 7)


def test_cli_prints_and_stores_findings(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "space.json").write_text(json.dumps({"x": ["float", 0.0, 1.0]}))
    res = CliRunner().invoke(app, ["optimize", "--objective", "test_diagnostics:half_fails",
                                   "--space", "space.json", "--budget", "30", "--out", "a",
                                   "--k-init", "2", "--failures", "penalize", "--no-progress"])
    assert res.exit_code == 0, res.output
    summary = json.loads((tmp_path / "a" / "summary.json").read_text())
    codes = [f["code"] for f in summary["findings"]]
    assert "many_failures" in codes
    assert "note (many_failures)" in res.output and "training diverged" in res.output


def _runs(rows: list[tuple[int, float, float]]) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(config_id, x, return) runs -> (configs, history) with sample statistics; ``mv`` is
    set by the caller (the posterior the finding compares with the runs)."""
    h = pd.DataFrame(rows, columns=["config_id", "x", "return"]).assign(status="ok")
    g = h.groupby("config_id", sort=False)
    c = pd.DataFrame({"config_id": list(g.groups), "x": g["x"].first().to_numpy(),
                      "k": g.size().to_numpy(), "mean": g["return"].mean().to_numpy(),
                      "std": g["return"].std().to_numpy()})
    return c.assign(var=c["std"] ** 2, mv=c["mean"], rank=pd.NA), h


def test_a_posterior_above_every_run_it_saw_is_reported():
    """posterior_outside_runs: three or more configurations whose estimate lies above all of
    their returns by four times the typical seed spread (or one replicated configuration at
    half that) are named with the worst one; an estimate that stays with its runs is not."""
    rows = [(i, i / 20, r) for i in range(4) for r in (1.0 + 0.1 * i, 1.2 + 0.1 * i)]  # spread
    rows += [(10 + i, 0.5 + i / 100, -1.0 - 0.1 * i) for i in range(12)]  # one-seed runs
    configs, hist = _runs(rows)
    assert "posterior_outside_runs" not in _codes(_result(configs, 0, history=hist))
    spread = float(configs.loc[configs["k"] >= 2, "std"].median())
    phantom = configs.copy()
    one = phantom["k"] == 1
    phantom.loc[one, "mv"] = (phantom.loc[one, "mean"]  # above their runs, the last most
                              + (5 + 0.1 * np.arange(int(one.sum()))) * spread)
    found = {f.code: f.message for f in diagnose(_result(phantom, 0, history=hist))}
    assert found["posterior_outside_runs"].startswith("12 configuration(s) have a posterior "
                                                      "estimate above every return")
    assert "config 21: 1 run(s), highest return -2.1, estimate" in found["posterior_outside_runs"]
    assert "k_min=2" in found["posterior_outside_runs"]
    two = phantom.copy()
    two.loc[one, "mv"] = two.loc[one, "mean"]
    two.loc[two.index[one][:2], "mv"] += 5 * spread  # two one-seed configurations: borrowing
    assert "posterior_outside_runs" not in _codes(_result(two, 0, history=hist))
    rep = configs.copy()
    rep.loc[0, "mv"] = 1.1 + 3 * spread  # a replicated configuration, above both its runs
    assert "posterior_outside_runs" in _codes(_result(rep, 0, history=hist))


def test_new_configurations_next_to_earlier_ones_are_reported_as_near_duplicates():
    """near_duplicates: a study whose runs went mostly to new configurations within 0.05 (unit
    cube) of an earlier one is named with the configuration they crowd; spread-out
    configurations, or a result without its space, are not."""
    space = erahbo.SearchSpace({"x": ("float", 0.0, 1.0), "y": ("float", 0.0, 1.0)})
    c, h = _runs([(i, (i % 5) / 4, 0.0) for i in range(25)])  # a 5 x 5 grid, step 0.25
    c, h = c.assign(y=[(i // 5) / 4 for i in range(25)]), h.assign(y=[(i // 5) / 4
                                                                     for i in range(25)])
    plain = _result(c, 0, history=h)
    plain.space = space
    assert "near_duplicates" not in _codes(plain)
    crowd = [(cid, 0.30 + 0.001 * cid, 0.0) for cid in range(25)]  # within 0.025 of config 0
    c2, h2 = _runs(crowd)
    c2, h2 = c2.assign(y=0.5), h2.assign(y=0.5)
    res = _result(c2, 0, history=h2)
    assert "near_duplicates" not in _codes(res)  # no space: no distances
    res.space = space
    found = {f.code: f.message for f in diagnose(res)}
    assert found["near_duplicates"].startswith("24 of 25 runs (96%) went to 24 new "
                                               "configuration(s) within 0.05")
    assert "replicate_within" in found["near_duplicates"]
    # with the lookahead on, the finding says the lookahead chose them and names the switch
    res.settings = {"replicate_within": 0.3, "replicate_lookahead": True}
    found = {f.code: f.message for f in diagnose(res)}
    assert "replicate_lookahead=False" in found["near_duplicates"]
