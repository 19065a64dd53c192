"""Replication policies: fixed k, ERAHBO's stopping rule, beta_stop schedules."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from erahbo.policies import AdaptiveK, BetaStopSchedule, FixedK, adaptive_rule, make_policy


def test_adaptive_rule_is_ucb_below_incumbent_bound():
    assert adaptive_rule(0.4, 0.5) and adaptive_rule(0.5, 0.5)
    assert not adaptive_rule(0.6, 0.5)


def test_adaptive_policy_stops_at_k_min_when_dominated_and_runs_to_k_max_when_straddling():
    p = AdaptiveK(k_min=2, k_max=20)
    assert p.first == 2
    B_t = 1.0
    # clearly dominated: the optimistic MV is below the incumbent's pessimistic one at k_min
    assert p.decide(2, ucb_mv=0.2, B_t=B_t) == "dominated"
    # straddling: UCB_MV(x_t; k) shrinks like 1/sqrt(k) but stays above B_t
    decisions = [p.decide(k, ucb_mv=B_t + 1.0 / math.sqrt(k), B_t=B_t) for k in range(2, 21)]
    assert decisions[:-1] == [None] * 18 and decisions[-1] == "k_max"
    # the certificate of Appendix B: stops once the radius falls below the margin
    mu_mv, radius = 0.4, 1.0
    ks = [k for k in range(2, 21) if p.decide(k, mu_mv + radius / math.sqrt(k), B_t)]
    assert ks[0] == math.ceil((radius / (B_t - mu_mv)) ** 2) == 3
    assert p.decide(3, mu_mv + radius / math.sqrt(3), B_t) == "dominated"


def test_fixed_and_factory_and_validation():
    assert FixedK(5).first == 5 and FixedK(5).decide(5, 9.0, 0.0) == "fixed_k"
    assert isinstance(make_policy("erahbo", k_min=3, k_max=7), AdaptiveK)
    assert make_policy("rahbo", k=2) == FixedK(2)
    for bad in (lambda: FixedK(1), lambda: AdaptiveK(0, 5), lambda: AdaptiveK(5, 4)):
        with pytest.raises(ValueError):
            bad()


def test_beta_stop_schedules():
    const = BetaStopSchedule("constant", beta_stop=1.0)
    assert const(0.0) == const(0.7) == 1.0
    taus = np.linspace(0, 1, 11)
    for sched in (BetaStopSchedule("exponential", 2.0, gamma=50.0),
                  BetaStopSchedule("exponential", 2.0, gamma=0.5),
                  BetaStopSchedule("sigmoid", 2.0, slope=10.0),
                  BetaStopSchedule("sigmoid", 2.0, slope=1000.0)):
        vals = np.array([sched(t) for t in taus])
        assert vals[0] == pytest.approx(0.0, abs=1e-12) and vals[-1] == pytest.approx(2.0)
        assert np.all(np.diff(vals) >= -1e-12) and np.all(np.isfinite(vals))
    g = 5.0
    assert BetaStopSchedule("exponential", 1.0, gamma=g)(0.5) == pytest.approx(
        (math.exp(g * 0.5) - 1) / (math.exp(g) - 1))
    s = 10.0

    def sig(t):
        return 1 / (1 + math.exp(s * (t - 0.5)))

    assert BetaStopSchedule("sigmoid", 1.0, slope=s)(0.3) == pytest.approx(
        (sig(0.3) - sig(0)) / (sig(1) - sig(0)))
    assert BetaStopSchedule("sigmoid", 1.0)(0.5) == pytest.approx(0.5)
    assert BetaStopSchedule("exponential", 1.0, gamma=5.0)(1.7) == 1.0  # clipped progress
    for bad in (dict(kind="linear"), dict(kind="exponential", gamma=0.0),
                dict(kind="constant", beta_stop=-1.0)):
        with pytest.raises(ValueError):
            BetaStopSchedule(**bad)


@settings(max_examples=60, deadline=None)
@given(kind=st.sampled_from(["exponential", "sigmoid"]),
       rate=st.floats(0.01, 2000.0), beta_stop=st.floats(0.0, 50.0),
       taus=st.lists(st.floats(-1.0, 2.0), min_size=2, max_size=20))
def test_schedules_rise_from_zero_to_beta_stop(kind, rate, beta_stop, taus):
    """For every rate: 0 at the start, beta_stop at the end, never decreasing, never above."""
    sched = BetaStopSchedule(kind, beta_stop, gamma=rate, slope=rate)
    assert sched(0.0) == pytest.approx(0.0, abs=1e-9 * max(beta_stop, 1.0))
    assert sched(1.0) == pytest.approx(beta_stop)
    vals = [sched(t) for t in sorted(taus)]
    assert all(0.0 <= v <= beta_stop * (1 + 1e-12) + 1e-300 for v in vals)
    assert np.all(np.diff(vals) >= -1e-12 * max(beta_stop, 1.0))


def test_cli_schedules_reach_the_optimizer(cli_options):
    """`erahbo optimize --schedule ...` sets the schedule in force (beta_stop_t rising over
    the budget in a study: test_optimizer.py::test_refit_every_refits_and_schedule_rises)."""
    res, opts = cli_options("--budget", "120", "--k-max", "6", "--schedule", "exponential",
                            "--gamma", "5", "--beta-stop", "2")
    assert res.exit_code == 0, res.output
    assert (opts["schedule"], opts["gamma"], opts["beta_stop"], opts["k_max"]) == (
        "exponential", 5.0, 2.0, 6)
    bad, opts = cli_options("--schedule", "linear")
    assert bad.exit_code != 0 and "schedule='linear' must be one of" in bad.output


def test_racing_ablation_doubles_seeds_and_rejects_on_sample_mv(tmp_path):
    """stopping="race": k_min, 2 k_min, 4 k_min, ... while x_t's sample MV keeps up."""
    import erahbo
    from erahbo.experiments import parse_method
    from erahbo.objectives.synthetic import Figure1Task

    task = Figure1Task()
    # k_min=2 (the default is 1): the race compares sample variances, which one seed lacks
    res = erahbo.optimize(task, task.space, budget=400, seed=0, k_min=2, k_max=16,
                          stopping="race", max_seeds=0)  # no cap: every round doubles freely
    bo = res.rounds[res.rounds.phase == "bo"]
    assert set(bo.k) <= {2, 4, 8, 16} | set(bo.k[bo.stop_reason == "budget"])
    assert {"dominated", "k_max"} <= set(bo.stop_reason)
    # the rule: a round ends "dominated" exactly when the sample MV of x_t (all its seeds) is
    # below the best sample MV of the other configurations evaluated then
    hist = res.history
    for _, r in bo[bo.stop_reason != "budget"].iterrows():
        before = hist[hist.iteration <= r.iteration]
        stats = before.groupby("config_id")["return"].agg(["mean", "var"])
        mv = stats["mean"] - 1.0 * stats["var"]
        beaten = mv.drop(r.config_id).max() > mv[r.config_id]
        assert beaten == (r.stop_reason == "dominated"), r.iteration
    # a journaled race resumes exactly: the rule is a study setting
    db = tmp_path / "race.db"
    first = erahbo.optimize(task, task.space, budget=150, seed=1, k_min=2, k_max=8,
                            stopping="race", journal=db)
    again = erahbo.resume(db, task)
    cols = ["config_id", "seed", "return"]
    assert again.history[cols].equals(first.history[cols])
    spec = parse_method("erahbo-race")
    assert spec.options == {"stopping": "race", "k_min": 2} and spec.method == "erahbo"
    erahbo.Optimizer(task.space, method=spec.method, budget=100, **spec.options)  # accepted
    # racing's own default k_min is 2 (ERAHBO's is 1: one seed has no sample variance); a
    # one-seed start given by name is refused with the fix
    assert erahbo.Optimizer(task.space, stopping="race", budget=100).options.k_min == 2
    assert erahbo.Optimizer(task.space, budget=100).options.k_min == 1
    with pytest.raises(ValueError, match="give k_min >= 2"):
        erahbo.Optimizer(task.space, stopping="race", k_min=1, budget=100)
    with pytest.raises(ValueError, match="give k_min >= 2"):
        erahbo.Optimizer(task.space, stopping="race", k_init=1, budget=100)
    with pytest.raises(ValueError, match="stopping='race' applies to ERAHBO only"):
        erahbo.Optimizer(task.space, method="rahbo", stopping="race", budget=100)
    with pytest.raises(ValueError, match="stopping='lucky' must be one of"):
        erahbo.Optimizer(task.space, stopping="lucky", budget=100)
