"""Replication rules (fixed k, ERAHBO's stopping rule, racing), the part's interface for every
host (seed counts, which seeds, whether a round ends), its JSON, and beta_stop schedules."""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import erahbo
from erahbo.objectives.synthetic import Figure1Task
from erahbo.optimizer.options import Options
from erahbo.optimizer.replication import RULES, Race, rule_from_json, rule_of
from erahbo.policies import AdaptiveK, BetaStopSchedule, FixedK, adaptive_rule, make_policy
from erahbo.study.rebuild import study_options


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


# --- the replication part: one interface for every host ----------------------------------


@pytest.mark.parametrize("options", [
    dict(method="erahbo", k_min=1, k_max=6, seed_batch=2, max_seeds=4, pool_share=0.0),
    dict(method="erahbo", stopping="race", k_min=2, k_max=8, max_seeds=0),
    dict(method="rahbo", k=3, max_seeds=0),
], ids=["adaptive", "race", "fixed"])
def test_every_trial_takes_its_seeds_from_the_replication_interface(options):
    """Rule: each trial the core hands out has the seeds the interface gives just before the
    ask: a round's first trial ``rule.opening_seeds(free_seeds, seeds_left)``, an open round's
    next ``rule.next_trial_seeds(k, free_seeds, seeds_left)`` (the budget ends a round mid-way,
    the seed cap of 4 another), and they are ``next_seeds(config_id, n)``."""
    task = Figure1Task()
    opt = erahbo.Optimizer(task.space, budget=53, seed=3, **options)
    rule, seen, asked = opt.replication, {"open": 0, "next": 0}, set()
    while True:
        free = opt.free_seeds
        rounds = {t: opt.open_round(t) for t in asked}
        k_before = {t: r.k for t, r in rounds.items() if r is not None}
        left_before = {r.config_id: opt.seeds_left(r.config_id)
                       for r in rounds.values() if r is not None}
        trial = opt.ask()
        if trial is None:
            break
        n = len(trial.seeds)
        asked.add(trial.round)
        assert trial.seeds == opt.next_seeds(trial.config_id, n)
        if trial.phase != "init":
            left = left_before.get(trial.config_id, opt.seeds_left(trial.config_id) + n)
            if trial.round in k_before:  # an open round goes on
                assert n == rule.next_trial_seeds(k_before[trial.round], free, left)
                seen["next"] += 1
            else:
                assert n == rule.opening_seeds(free, left)
                seen["open"] += 1
        opt.tell(trial, [task(trial.config, s) for s in trial.seeds])
    assert seen["open"] >= 5 and (seen["next"] >= 3) == rule.adaptive
    assert opt.remaining == 0 or opt.remaining < opt.options.min_seeds


def test_a_host_whose_trial_runs_a_whole_round_asks_round_seeds_and_decides():
    """Rule: a trial that trains a whole round (the Optuna sampler's, which its pruner stops)
    takes ``min(k_max, opened + left)`` seeds under an adaptive rule and its ``opened`` first
    seeds under a fixed-k rule or in a random round; the bounds may end an adaptive round from
    its ``k_min`` seeds on, never a fixed-k one; a fixed-k round ends once its ``k`` ran."""
    ucb, race, fixed = AdaptiveK(k_min=2, k_max=10), Race(k_min=2, k_max=8), FixedK(k=3)
    assert [ucb.round_seeds(2, left) for left in (0, 3, math.inf)] == [2, 5, 10]
    assert race.round_seeds(2, math.inf) == race.most == 8
    assert ucb.round_seeds(2, math.inf, random_round=True) == 2
    assert fixed.round_seeds(3, math.inf) == fixed.most == 3
    assert [ucb.decides(n) for n in (1, 2, 9)] == [False, True, True]
    assert not any(fixed.decides(n) for n in (1, 3, 20))
    assert fixed.verdict(2, None)[0] is None and fixed.verdict(3, None)[0] == "fixed_k"
    assert ucb.verdict(1, lambda: pytest.fail("no bound before k_min"))[0] is None
    assert ucb.verdict(10, None)[0] == "k_max"  # no models: k_max ends it
    reason, u, b = ucb.verdict(3, lambda: (0.2, 0.5))
    assert (reason, u, b) == ("dominated", 0.2, 0.5)
    reason, u, b = ucb.verdict(3, lambda: None)  # too few seeds for a bound yet
    assert reason is None and math.isnan(u) and math.isnan(b)
    # what a host fits within: the budget and the caps, at least one seed to open a round
    assert ucb.opening_seeds(free=1, left=math.inf) == 1
    assert ucb.opening_seeds(free=5, left=0) == 1
    assert AdaptiveK(1, 6, seed_batch=4).next_trial_seeds(3, free=9, left=2) == 2


def test_a_rule_is_plain_json_and_a_journals_settings_rebuild_it(tmp_path):
    """Rule: ``rule_from_json(rule.to_json())`` is the rule, and the JSON is plain; the study
    settings a journal stores rebuild the optimizer's rule (as a resume does); an unknown
    rule's JSON is refused with the rules this erahbo knows."""
    for rule in (FixedK(3), AdaptiveK(1, 20, 2), Race(2, 8)):
        spec = json.loads(json.dumps(rule.to_json()))
        assert rule_from_json(spec) == rule and spec["rule"] == rule.name
    task = Figure1Task()
    for opts in (dict(method="erahbo"), dict(method="erahbo", stopping="race", k_max=8),
                 dict(method="gpucb", k=4), dict(method="erahbo", preset="paper",
                                                 seed_batch=3)):
        opt = erahbo.Optimizer(task.space, budget=200, **opts)
        kept = {k: v for k, v in study_options(opt.study_settings()).items()
                if k in Options.names()}
        assert rule_of(Options(**kept)) == opt.replication
    with pytest.raises(ValueError, match=r"replication rule 'imse'.*'fixed', 'ucb', 'race'"):
        rule_from_json({"rule": "imse"})


@dataclass(frozen=True)
class _Short(AdaptiveK):
    """Two seeds a round, whatever the bounds say (a rule written for this test)."""

    name = "short"

    @classmethod
    def check(cls, o: Any) -> None:
        if o.k_min > 2:
            raise ValueError(f"stopping='short' runs 2 seeds a round at most: k_min={o.k_min}")

    def decide(self, k: int, ucb_mv: float, B_t: float) -> str | None:
        return "k_max" if k >= 2 else None


def test_a_new_rule_is_its_class_and_one_line_in_rules(monkeypatch):
    """Rule: a rule listed in RULES is a value of ``stopping`` everywhere (Options, the
    optimizer's rounds, the study settings), refuses what its ``check`` refuses, and is
    ERAHBO's only."""
    monkeypatch.setitem(RULES, "short", _Short)
    task = Figure1Task()
    res = erahbo.optimize(task, task.space, budget=60, seed=0, stopping="short")
    bo = res.rounds[(res.rounds.phase == "bo") & (res.rounds.stop_reason != "random")]
    assert len(bo) >= 10 and (bo.k[bo.stop_reason != "budget"] == 2).all()
    assert res.settings["stopping"] == "short"
    with pytest.raises(ValueError, match="stopping='short' runs 2 seeds a round at most"):
        Options(stopping="short", k_min=3)
    with pytest.raises(ValueError, match="stopping='short' applies to ERAHBO only"):
        Options(method="rahbo", stopping="short")
    monkeypatch.delitem(RULES, "short")
    with pytest.raises(ValueError, match=r"stopping='short' must be one of \('ucb', 'race'\)"):
        Options(stopping="short")
