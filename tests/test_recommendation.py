"""Result.configs (every configuration with its MV bounds and rank) and the explanations."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

import erahbo
from conftest import centre_peak, needle_records, table3
from erahbo.objectives.synthetic import Figure1Task
from erahbo.recommendation import (
    explain_incumbent,
    explain_verification,
    mv_standard_error,
    top_configs,
)


@pytest.fixture(scope="module")
def fig1() -> erahbo.Result:
    task = Figure1Task()
    return erahbo.optimize(task, task.space, method="erahbo", budget=160, seed=0)


def test_configs_table_ranks_by_lcb_mv_and_matches_the_incumbent(fig1):
    c = fig1.configs
    for col in ("config_id", "x", "k", "mean", "std", "var", "n_failed", "mv", "lcb_mv",
                "ucb_mv", "rank"):
        assert col in c.columns, col
    assert len(c) == fig1.history["config_id"].nunique()
    # sample statistics agree with the history
    h = fig1.history[fig1.history["status"] == "ok"]
    g = h.groupby("config_id")["return"]
    by_id = c.set_index("config_id")
    np.testing.assert_allclose(by_id["mean"], g.mean().loc[by_id.index])
    np.testing.assert_allclose(by_id["std"], g.std(ddof=1).loc[by_id.index])
    assert (by_id["k"] == g.size().loc[by_id.index]).all()
    # rank 1 is the incumbent, its MV estimate the Result's; the other ranks follow LCB_MV.
    # Rank 1 has the highest LCB_MV among the configurations with recommend_min_seeds seeds
    # (all of them when none has), or (rule "well_sampled", recommend_seeds) k_max seeds
    best = top_configs(c, 4)
    assert list(best["rank"]) == [1, 2, 3, 4]
    inc = best.iloc[0]
    assert inc["config_id"] == fig1.incumbent_id
    assert inc["mv"] == pytest.approx(fig1.incumbent_mv)
    assert (np.diff(best["lcb_mv"].to_numpy(float)[1:]) <= 0).all()
    assert c["rule"].notna().sum() == 1 and inc["rule"] in ("lcb_mv", "well_sampled")
    if inc["rule"] == "lcb_mv":
        backed = c[c["k"] >= fig1.settings["recommend_min_seeds"]]
        assert inc["lcb_mv"] == (backed if len(backed) else c)["lcb_mv"].max()
    else:
        assert inc["k"] >= fig1.settings["recommend_seeds"]
    assert (c["lcb_mv"] <= c["mv"]).all() and (c["mv"] <= c["ucb_mv"]).all()
    assert sorted(c["rank"].dropna().astype(int)) == list(range(1, len(c) + 1))


def test_configs_table_counts_failures_and_leaves_failed_configs_unranked():
    space = erahbo.SearchSpace({"x": ("float", 0.0, 1.0)})

    def objective(config, seed):
        if config["x"] > 0.8:
            raise RuntimeError("diverged")
        return config["x"] + 0.01 * (seed % 7)

    res = erahbo.optimize(objective, space, method="rahbo", k=2, budget=40, seed=1)
    c = res.configs
    bad = c[c["n_failed"] > 0]
    assert len(bad) and bad["rank"].isna().all()
    n_failed = (res.history["status"] != "ok").sum()
    assert c["n_failed"].sum() == n_failed


def test_explain_incumbent_names_the_rule_and_the_beaten_higher_mean():
    t = pd.DataFrame({"config_id": [0, 3], "k": [4, 10], "mean": [83.9, 183.0],
                      "std": [61.8, 167.0], "n_failed": [0, 0], "mv": [80.0, 120.0],
                      "lcb_mv": [40.0, 10.0], "ucb_mv": [130.0, 230.0], "rank": [1, 2]})
    s = explain_incumbent(t)
    assert s.startswith("config 0 is recommended because it has the highest lower bound LCB_MV")
    assert "config 3 has a higher sample mean (183 vs 83.9)" in s
    assert "less certain" in s and "[10, 230]" in s
    t.loc[1, "mv"] = 50.0  # a lower MV estimate: the spread costs more than the mean gains
    assert "its MV estimate is lower (50 vs 80)" in explain_incumbent(t)
    assert "costs more than its mean gains" in explain_incumbent(t)  # its std is larger
    t.loc[1, "std"] = 30.0  # a smaller spread than the incumbent's: the posterior decided
    s = explain_incumbent(t)
    assert "costs more" not in s and "models' posterior" in s
    assert "LCB_f (risk-neutral)" in explain_incumbent(t, risk_neutral=True)
    assert explain_incumbent(t.iloc[:0]) == ""


def test_explain_incumbent_names_a_one_seed_rival_without_printing_nan():
    """Rule: an explanation never prints "nan". A one-seed rival with a higher sample mean and
    a higher MV estimate, beaten on its lower bound, has no sample std: the sentence says it
    has one seed instead of "std nan over k = 1 seeds"."""
    t = pd.DataFrame({"config_id": [0, 3], "k": [4, 1], "mean": [83.9, 183.0],
                      "std": [61.8, np.nan], "n_failed": [0, 0], "mv": [80.0, 120.0],
                      "lcb_mv": [40.0, 10.0], "ucb_mv": [130.0, 230.0], "rank": [1, 2]})
    s = explain_incumbent(t)
    assert "less certain" in s and "wider (one seed: no sample std)" in s
    assert "nan" not in s.lower()


def test_mv_standard_error_takes_arrays():
    se = mv_standard_error(np.array([1.0, 2.0, 1.0]), np.array([4, 9, 1]), 0.5)
    assert se[0] == pytest.approx(mv_standard_error(1.0, 4, 0.5))
    assert se[1] == pytest.approx(math.sqrt(4 / 9 + 0.25 * 2 * 16 / 8))
    assert math.isnan(se[2])  # one seed: no sample variance


def test_explain_verification_uses_the_standard_error():
    se = mv_standard_error(10.0, 5, 0.01)
    assert se == pytest.approx(math.sqrt(100 / 5 + 1e-4 * 2 * 1e4 / 4))
    near = explain_verification(85.0, 80.0, 10.0, 5, 0.01)
    assert "within the noise" in near and "winner's curse" in near
    far = explain_verification(85.03, 44.05, 10.0, 50, 0.0)
    assert "winner's curse" in far and "standard errors" in far
    assert "cannot be compared" in explain_verification(1.0, math.nan, 1.0, 1, 1.0)


def test_gpucb_configs_rank_by_lcb_f():
    task = Figure1Task()
    res = erahbo.optimize(task, task.space, method="gpucb", k=5, budget=60, seed=0)
    c = res.configs
    assert top_configs(c, 1).iloc[0]["config_id"] == res.incumbent_id
    assert "LCB_f" in erahbo_cli_why(res)


def erahbo_cli_why(res) -> str:
    from erahbo.cli._decision import why

    return why(res)


def test_optimize_cli_prints_and_writes_the_best_configurations(tmp_path, monkeypatch):
    from typer.testing import CliRunner

    from erahbo.cli import app

    monkeypatch.setenv("COLUMNS", "80")
    out = tmp_path / "o"
    res = CliRunner().invoke(app, ["optimize", "--objective", "figure1", "--budget", "120",
                                   "--out", str(out), "--no-progress"])
    assert res.exit_code == 0, res.output
    assert "best 5 of" in res.output and "LCB_MV" in res.output
    import json

    summary = json.loads((out / "summary.json").read_text())
    rule = ("it has the highest lower bound LCB_MV" if summary["top_configs"][0]["rule"]
            == "lcb_mv" else "its sample MV less one standard error is the best")
    assert rule in summary["why"]
    assert "is recommended because" in res.output
    assert max(len(ln) for ln in res.output.splitlines() if str(tmp_path) not in ln) <= 80
    assert summary["top_configs"][0]["config_id"] == summary["incumbent_id"]
    assert summary["top_configs"][0]["rank"] == 1 and "x" in summary["top_configs"][0]
    assert summary["why"].startswith(f"config {summary['incumbent_id']} is recommended")


def _noisy_table_study(**kw) -> erahbo.Result:
    return erahbo.optimize(centre_peak, table3(256, seed=0), budget=400, seed=0, k_max=10,
                           **kw)


def test_a_well_sampled_configuration_is_recommended_on_its_sample_mv():
    # ERAHBO's default: recommend_seeds = max_seeds = 10; without challenger rounds, which
    # choose what to evaluate from the recommendation, so the rule alone changes nothing else
    # (uniform random rounds: the search this scenario was built on)
    res = _noisy_table_study(challengers=False, random_top=1.0)
    c = res.configs.set_index("config_id")
    sample_mv = c["mean"] - 1.0 * c["var"]
    bound = sample_mv - mv_standard_error(c["std"].to_numpy(), c["k"].to_numpy(), 1.0)
    by_lcb = c["lcb_mv"].idxmax()
    big = c[c["k"] >= 10]
    best_big = bound[big.index].idxmax()  # sample MV less one standard error
    expected = best_big if bound[best_big] >= sample_mv[by_lcb] else by_lcb
    assert res.incumbent_id == expected
    assert c.loc[res.incumbent_id, "rank"] == 1  # the table and the explanation agree
    off = _noisy_table_study(recommend_seeds=0, challengers=False, random_top=1.0)  # LCB alone
    c0 = off.configs.set_index("config_id")
    assert off.incumbent_id == c0["lcb_mv"].idxmax()
    assert off.history["config_id"].tolist() == res.history["config_id"].tolist()
    acted = expected != by_lcb  # (whether it acts depends on the trajectory: see below)
    assert c.loc[res.incumbent_id, "rule"] == ("well_sampled" if acted else "lcb_mv")
    assert ("is the best among the well-sampled" in explain_incumbent(res.configs)) == acted
    assert c0.loc[off.incumbent_id, "rule"] == "lcb_mv" and c0["rule"].notna().sum() == 1
    # ERAHBO's default is max_seeds (k_max here); presets, methods, bad values and the CLI
    # flag: test_option_table.py
    table = pd.DataFrame({"a": np.linspace(0, 1, 8)})
    assert erahbo.Optimizer(table, k_max=10).study_settings()["recommend_seeds"] == 10


def test_the_rule_acts_on_a_well_sampled_needle():
    """Built so that the rule acts: conftest's needle scenario with 10 seeds at the needle
    0.75 (sample MV about 3.1, its own runs tight). The GPs smooth it into its noisy region,
    so argmax LCB_MV is a quiet configuration (sample MV about 1); with recommend_seeds 10
    the needle's sample MV less one standard error beats that by about 2: it is recommended
    on its own runs; with recommend_seeds 0, argmax LCB_MV is."""
    def incumbent(recommend_seeds: int, var_noise: str = "fitted"):
        # "fitted": the variance GP that smooths the needle (the default until session 24)
        opt = erahbo.Optimizer({"x": ("float", 0.0, 1.0)}, budget=40, seed=0, n_init=0,
                               warm_start=needle_records({0.75: 10}), k_max=10,
                               recommend_seeds=recommend_seeds, raw_samples=128, n_polish=2,
                               var_noise=var_noise)
        opt.fit_hyperparameters()
        return opt.recommend()["x"], opt.result().configs.set_index("x")

    x, c = incumbent(10)
    assert x == 0.75 and c.loc[x, "rule"] == "well_sampled" and c.loc[x, "rank"] == 1
    by_lcb = c["lcb_mv"].idxmax()
    assert by_lcb <= 0.3  # quiet: the GPs' choice is not the needle
    sample_mv = c["mean"] - c["var"]  # alpha 1
    bound = sample_mv - mv_standard_error(c["std"].to_numpy(), c["k"].to_numpy(), 1.0)
    assert bound[0.75] - sample_mv[by_lcb] > 1.5  # far from a tie
    assert "is the best among the well-sampled" in explain_incumbent(c.reset_index())
    x0, c0 = incumbent(0)
    assert x0 == c0["lcb_mv"].idxmax() == by_lcb and c0.loc[x0, "rule"] == "lcb_mv"
    # the default variance GP on log sample variances reads the needle's tiny spread from its
    # own seeds: the models' argmax LCB_MV is the needle, with or without the rule
    for seeds in (10, 0):
        xl, cl = incumbent(seeds, "log")
        assert xl == cl["lcb_mv"].idxmax() == 0.75 and cl.loc[xl, "rule"] == "lcb_mv"


def test_the_table_bounds_are_the_recommendations_at_another_recommend_beta():
    """With recommend_beta != beta the ranks, the bounds and the sentence still agree: the
    table's bounds are at the recommendation's confidence, and ``rule`` names its rule."""
    for rb in (0.0, 1.0):
        res = _noisy_table_study(recommend_beta=rb, recommend_seeds=0)
        c = res.configs.set_index("config_id")
        assert res.incumbent_id == c["lcb_mv"].idxmax()
        assert c.loc[res.incumbent_id, "rule"] == "lcb_mv"
        if rb == 0.0:  # beta 0: the bounds are the posterior mean MV itself
            np.testing.assert_allclose(c["lcb_mv"], c["mv"], rtol=1e-9, atol=1e-12)
        assert explain_incumbent(res.configs).startswith(
            f"config {res.incumbent_id} is recommended because it has the highest lower bound")


def test_explain_verification_names_the_measure_and_takes_its_standard_error():
    """A CVaR study's verification gap is in CVaR's terms: the sentence names CVaR_0.1 and
    counts the gap in the CVaR plug-in's standard errors."""
    from erahbo.risk import CVaR

    m = CVaR(q=0.1)
    se = m.standard_error(10.0, 20)
    text = explain_verification(50.0, 50.0 - 3 * se, 10.0, 20, m)
    assert "the measured CVaR_0.1 differs from the estimate" in text
    assert "3.0 standard errors" in text and "MV" not in text
    assert "measured CVaR_0.1 cannot be compared" in explain_verification(
        1.0, math.nan, 1.0, 1, m)


def test_optimize_cli_names_the_risk_measure_in_its_tables(tmp_path, monkeypatch):
    """`erahbo optimize --risk cvar --q 0.1` names the measure where MV stood: the ranking,
    the columns, the estimate (in return units) and the explanation; still 80 columns."""
    from typer.testing import CliRunner

    from erahbo.cli import app

    monkeypatch.setenv("COLUMNS", "80")
    out = tmp_path / "o"
    res = CliRunner().invoke(app, ["optimize", "--objective", "figure1", "--budget", "40",
                                   "--risk", "cvar", "--q", "0.1", "--out", str(out),
                                   "--no-progress"])
    assert res.exit_code == 0, res.output
    text = " ".join(res.output.split())
    assert "(rank by LCB_CVaR_0.1)" in text and "CVaR_0.1 ┃ LCB ┃ UCB" in text
    assert "estimated CVaR_0.1 of the incumbent:" in text and "(return units)" in text
    assert "the mean return of the worst 10 % of seeds" in text
    assert "LCB_MV" not in text and "estimated MV" not in text
    assert max(len(ln) for ln in res.output.splitlines() if str(tmp_path) not in ln) <= 80


def test_the_own_run_bound_is_eq9_with_exact_sampling_bounds():
    """Rule (sample_lcb_mv, the well-sampled rule's bound): eq. 9's LCB_MV on a
    configuration's own runs, the mean less z standard errors and the sample variance at its
    one-sided chi-square bound of the same confidence; z = 0 is the plug-in. Under normal
    returns that variance bound lies above the true variance in Phi(z) of the samples (seeded
    Monte Carlo, 20000 samples of 16 seeds: within 0.01 of 0.841)."""
    from scipy.stats import norm

    from erahbo.recommendation import sample_lcb_mv

    ybar, s2, k = np.array([1.0, 0.5, 2.0]), np.array([0.4, 0.0, 1.0]), np.array([16, 5, 1])
    plug = sample_lcb_mv(ybar, s2, k, 1.0, 0.0)
    assert np.allclose(plug[:2], ybar[:2] - s2[:2]) and np.isnan(plug[2])
    bound = sample_lcb_mv(ybar, s2, k, 1.0, 1.0)
    assert np.isnan(bound[2]) and bound[1] == pytest.approx(0.5)  # equal seeds: no spread
    rng = np.random.default_rng(0)
    runs = rng.normal(0.0, 1.0, size=(20000, 16))
    v = runs.var(axis=1, ddof=1)
    upper = sample_lcb_mv(np.zeros(20000), v, np.full(20000, 16), 1.0, 1.0)  # -(z se) - UCB
    ucb_var = -(upper + np.sqrt(v / 16))
    assert abs((ucb_var >= 1.0).mean() - norm.cdf(1.0)) < 0.01


def test_a_lucky_low_sample_variance_does_not_outbid_a_quiet_configuration():
    """Rule: a configuration that got many seeds because its runs looked good is judged on
    bounds that its luck does not shrink. Optuna's two-peaks study under the log variance GP
    (16 seeds at the noisy peak, true variance 1.1, sample mean 1.616 and sample variance
    0.406; the quiet peak's sample MV 0.977): the sample MV less one standard error (0.992)
    beat the quiet peak; the own-run LCB_MV does not."""
    from erahbo.recommendation import sample_lcb_mv, sample_mv_bound

    ybar, s2, k = np.array([1.616]), np.array([0.406]), np.array([16])
    quiet = 0.979 - 0.002
    assert sample_mv_bound(ybar, s2, k, 1.0, 1.0)[1][0] > quiet
    assert sample_lcb_mv(ybar, s2, k, 1.0, 1.0)[0] < quiet - 0.1
