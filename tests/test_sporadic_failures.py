"""Failed runs under risk-aware RL (issue 13): sporadic failures, budgets, max_failures."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import erahbo
from erahbo import SearchSpace
from erahbo.diagnostics import diagnose
from erahbo.runtime.failure_limit import FailureLimit, FailureLimitWarning

SPACE = SearchSpace({"x": ("float", 0.0, 1.0)})


def sporadic(p: float):
    """``-(x - 0.3)^2 + 0.03 z``; each run raises with probability p, whatever x."""

    def objective(config: dict, seed: int) -> float:
        x = float(config["x"])
        rng = np.random.default_rng([int(seed), int(x * 2**40)])
        if rng.random() < p:
            raise RuntimeError("training diverged")
        return -((x - 0.3) ** 2) + 0.03 * rng.standard_normal()

    return objective


def test_sporadic_failures_still_find_the_mv_optimum():
    # the case: before, 1 of 5 seeds recommended within 0.1 of x = 0.3, and k_max=20
    # ended with "no incumbent" although most runs succeeded
    hits = 0
    for s in range(10):
        # written for the paper's settings; under erahbo's defaults seed 7 recommends x = 0.0,
        # whose posterior MV (0.19) lies above every return: the GP fitted once on 5 x 2 runs
        # extrapolates at the boundary (refit_growth=2 avoids it; see the session-7 note)
        res = erahbo.optimize(sporadic(0.1), SPACE, method="erahbo", budget=200, k_max=10, seed=s,
                              preset="paper", failures="penalize")
        h = res.history
        ok = h.loc[h.status == "ok", "return"]
        assert (h.status == "penalized").any()
        assert ok.min() <= res.incumbent_mv <= ok.max()  # MV on the data's own scale
        hits += abs(res.incumbent["x"] - 0.3) <= 0.1
    assert hits >= 8
    res = erahbo.optimize(sporadic(0.1), SPACE, method="erahbo", budget=200, k_max=20, seed=1)
    assert res.incumbent is not None


def test_a_configuration_with_one_failed_seed_can_be_the_incumbent():
    table = {"x": [0.0, 0.5, 1.0]}

    def obj(config, seed):
        x = config["x"]
        if x == 0.5 and seed % 10 == 0:
            return float("nan")  # fails on some seeds
        return {0.0: 0.0, 0.5: 1.0, 1.0: 0.2}[x] + 0.01 * (seed % 5)

    space = SearchSpace.from_table(__import__("pandas").DataFrame(table))
    res = erahbo.optimize(obj, space, method="rahbo", k=10, budget=60, seed=0, n_init=3,
                          k_init=10, failures="penalize")
    h = res.history
    assert (h[h.config_id == 1].status == "penalized").any()
    assert res.incumbent_id == 1
    row = res.configs.set_index("config_id").loc[1]
    assert row["n_failed"] >= 1
    # its failed seed lowered its mean and widened its spread
    ok = h[(h.config_id == 1) & (h.status == "ok")]["return"]
    assert row["mean"] < ok.mean() and row["var"] > ok.var()


def _fails_after(n_ok: int):
    count = {"n": 0}

    def objective(config, seed):
        count["n"] += 1
        if count["n"] > n_ok:
            raise RuntimeError("boom")
        return float(config["x"]) + 0.01 * (seed % 7)

    return objective


@pytest.mark.parametrize("policy", ["exclude", "retry", "penalize"])
def test_every_policy_ends_when_runs_keep_failing(policy):
    # before: failures="exclude" never ended (failed runs did not count toward the budget)
    res = erahbo.optimize(_fails_after(40), SPACE, method="rahbo", k=4, budget=80,
                          n_init=5, k_init=8, failures=policy, seed=0)
    h = res.history
    spent = int((h.status != "interrupted").sum())
    assert 78 <= spent <= 80 + 4 * 2  # the last trial's retries may overshoot: k * retries
    assert (h.status == "ok").sum() == 40


def test_max_failures_count_and_share_stop_with_the_result_so_far():
    with pytest.warns(FailureLimitWarning, match="more than max_failures=3 allows"):
        res = erahbo.optimize(_fails_after(40), SPACE, method="rahbo", k=4, budget=200,
                              n_init=5, k_init=8, max_failures=3, failures="penalize", seed=0)
    assert res.stopped and "4 of 44 training runs failed" in res.stopped
    assert "RuntimeError: boom" in res.stopped and res.incumbent is not None
    with pytest.warns(FailureLimitWarning, match="max_failures=0.25"):
        res = erahbo.optimize(_fails_after(40), SPACE, method="rahbo", k=4, budget=200,
                              n_init=5, k_init=8, max_failures=0.25, failures="exclude", seed=0)
    assert res.stopped and len(res.history) < 200
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        res = erahbo.optimize(_fails_after(1000), SPACE, method="rahbo", k=4, budget=40,
                              n_init=5, k_init=4, max_failures=0, seed=0)
    assert res.stopped is None


@pytest.mark.parametrize("bad", [-1, 1.5, 0.0, "3", True, float("nan")])
def test_max_failures_rejects_bad_values(bad):
    with pytest.raises((ValueError, TypeError), match="max_failures"):
        FailureLimit.coerce(bad)


def test_sporadic_failure_finding_says_what_the_policy_did():
    res = erahbo.optimize(sporadic(0.1), SPACE, method="erahbo", budget=100, k_max=10, seed=0,
                          failures="penalize")
    found = {f.code: f.message for f in diagnose(res)}
    assert "sporadic_failures" in found
    assert "failed on some seeds but not on all" in found["sporadic_failures"]
    assert "stayed candidates" in found["sporadic_failures"]
    res = erahbo.optimize(sporadic(0.1), SPACE, method="erahbo", budget=100, k_max=10, seed=0,
                          failures="exclude")
    found = {f.code: f.message for f in diagnose(res)}
    assert "dropped each of them at its first failure" in found.get("sporadic_failures", "")
    clean = erahbo.optimize(sporadic(0.0), SPACE, method="erahbo", budget=60, k_max=10, seed=0)
    assert "sporadic_failures" not in {f.code for f in diagnose(clean)}


def test_failures_per_configuration_in_history_rounds_and_configs():
    res = erahbo.optimize(sporadic(0.2), SPACE, method="erahbo", budget=80, k_max=10, seed=3)
    h, r, c = res.history, res.rounds, res.configs
    per_cfg = (h.status != "ok").groupby(h.config_id).sum()
    assert (h.groupby("config_id").n_failed.max() == per_cfg).all()
    assert (c.set_index("config_id").n_failed == per_cfg.reindex(c.config_id)).all()
    assert r.n_failed.sum() == (h.status != "ok").sum()
