"""One seed measures nothing of the variance: the stopping rule keeps the acquisition's optimism
on it (issue 37, ``one_seed_optimism``).

Rules checked:

* ``one_seed_bound`` sets ``UCB^MV = value(UCB^f at beta_stop, LCB^var at beta)`` where
  ``x_t``'s posterior ``f`` is at least that of ``B_t``'s configuration, and leaves the bound
  alone elsewhere;
* ``variance_spread_share`` is the variance term's share of the spread of the sample measure
  over configurations (MV: ``alpha^2 var(s2) / (var(ybar) + alpha^2 var(s2))``), and
  ``one_seed_in_force`` lets the option act only with 3 or more replicated configurations
  whose measure spreads mostly through their variance (one-seed rows ignored): on a study
  whose configurations differ by their means, the option changes no decision;
* an optimizer with the option asks for a second seed of a configuration whose first return
  leaves it below ``B_t`` only by its unmeasured variance, and one without it stops there;
  after two seeds both read eq. 12 with ``beta_stop`` alone;
* the option is on by default on a continuous space and off on a finite table, under the
  paper preset, with racing and for the fixed-k methods (session 39), travels in the rule's
  JSON, and a value that is not a bool, or the option under a fixed-k method or with racing,
  is refused with its name.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import erahbo
from erahbo.gp.bounds import ucb_mv, variance_spread_share
from erahbo.gp.round import ONE_SEED_SHARE, InnerBounds, one_seed_bound, one_seed_in_force
from erahbo.optimizer.replication import AdaptiveK, rule_from_json
from erahbo.risk import CVaR, MeanVariance


@pytest.mark.parametrize("log_var", [False, True])
def test_one_seed_bound_keeps_the_variance_optimism_where_f_is_no_worse_than_b_ts(log_var):
    """Where x_t's posterior f is at least B_t's configuration's: UCB^MV = UCB^f at beta_stop
    minus alpha times LCB^var at beta, never below the plain eq. 9 bound at beta_stop (equal
    where the variance is known); where f is behind: the plain bound."""
    risk, beta, beta_stop = MeanVariance(10.0), 2.5, 0.0
    mu_var = math.log(0.05) if log_var else 0.05
    wide = (1.0 if log_var else 0.04)  # the variance GP knows little at x_t
    ib = InnerBounds(0.3, 0.05, mu_var, wide, risk, beta_stop, log_var)
    plain = ib.ucb_mv
    got = one_seed_bound(ib, beta).ucb_mv
    lo_var = (math.exp(mu_var - math.sqrt(beta) * wide) if log_var
              else mu_var - math.sqrt(beta) * wide)
    assert got == pytest.approx(0.3 - 10.0 * lo_var)
    assert got == pytest.approx(ucb_mv(0.3, 0.05, mu_var, wide, risk, beta_stop,
                                       log_var=log_var, beta_var=beta))
    assert got > plain  # the optimism raises the bound

    behind = InnerBounds(0.3, 0.05, mu_var, wide, risk, beta_stop, log_var)
    assert one_seed_bound(behind, beta, f_B=0.31).ucb_mv == plain  # f behind B_t's: no optimism
    assert one_seed_bound(InnerBounds(0.3, 0.05, mu_var, wide, risk, beta_stop, log_var), beta,
                          f_B=0.3).ucb_mv == pytest.approx(got)  # f level with it: optimism

    known = InnerBounds(0.3, 0.05, mu_var, 0.0, risk, beta_stop, log_var)  # variance known
    before = known.ucb_mv
    assert one_seed_bound(known, beta).ucb_mv == pytest.approx(before)
    neutral = InnerBounds(0.3, 0.05, mu_var, wide, MeanVariance(0.0), beta_stop, log_var)
    before = neutral.ucb_mv  # risk-neutral: the variance does not enter the bound
    assert one_seed_bound(neutral, beta).ucb_mv == pytest.approx(before)


SPACE = {"lr": ("log", 1e-5, 1e-1), "batch": ("int", 16, 256)}


def _objective(config: dict, seed: int) -> float:
    """A peak at lr 1e-3 whose spread grows with the batch (deterministic per seed)."""
    rng = np.random.default_rng([seed, int(config["batch"]), int(1e6 * config["lr"])])
    return -abs(math.log10(config["lr"]) + 3.0) + rng.normal(0.0, 0.1 + config["batch"] / 256)


def test_variance_spread_share_splits_the_spread_of_the_sample_measure():
    """MV: alpha^2 var(s2) / (var(ybar) + alpha^2 var(s2)); any measure: the spread of
    value(ybar_i, mean s2) against that of value(mean ybar, s2_i); 0 without spread and for a
    risk-neutral measure."""
    ybar, s2 = np.array([0.0, 0.4, 1.0, 0.2]), np.array([0.05, 0.3, 0.1, 0.6])
    for alpha in (0.5, 3.0, 10.0):
        want = alpha ** 2 * np.var(s2) / (np.var(ybar) + alpha ** 2 * np.var(s2))
        assert variance_spread_share(ybar, s2, alpha) == pytest.approx(want)
    cvar = CVaR(q=0.1)  # f - c sqrt(var): the spread of c sqrt(s2) against that of ybar
    c = cvar.kappa
    want = c ** 2 * np.var(np.sqrt(s2)) / (np.var(ybar) + c ** 2 * np.var(np.sqrt(s2)))
    assert variance_spread_share(ybar, s2, cvar) == pytest.approx(want)
    assert variance_spread_share(ybar, s2, 0.0) == 0.0
    assert variance_spread_share(np.ones(3), np.full(3, 0.2), 5.0) == 0.0
    assert variance_spread_share(np.ones(3), s2[:3], 5.0) == 1.0  # means equal: all variance


def test_one_seed_in_force_needs_replicated_configurations_that_differ_by_their_variance():
    """Fewer than 3 rows with 2+ seeds: off; one-seed rows (no sample variance) never count;
    on exactly where the share is above ONE_SEED_SHARE."""
    ybar = np.array([0.0, 0.1, 0.2, 9.0])
    s2 = np.array([0.1, 0.5, 0.9, 0.0])
    k = np.array([2.0, 2.0, 3.0, 1.0])  # the last row: one seed, far from the others
    assert one_seed_in_force(ybar, s2, k, 3.0)  # variance spread 1.44 against 0.0067
    assert not one_seed_in_force(ybar, s2, k, 0.05)  # alpha small: the means tell them apart
    assert not one_seed_in_force(ybar, s2, np.array([2.0, 2.0, 1.0, 1.0]), 3.0)  # 2 replicated
    for alpha in (0.1, 0.2, 0.3, 1.0):  # the threshold is the share's
        share = variance_spread_share(ybar[:3], s2[:3], alpha)
        assert one_seed_in_force(ybar, s2, k, alpha) == (share > ONE_SEED_SHARE)


def _twins(alpha: float = 10.0) -> tuple[erahbo.Optimizer, erahbo.Optimizer]:
    """Two optimizers on the same warm start, with and without the option: a 5 x 3 grid of
    configurations (lr 1e-5 ... 1e-1, batch 16 / 136 / 256) with 2 seeds each, built by hand so
    that the case depends on no study's trajectory."""
    grid = [{"lr": 10.0 ** e, "batch": b} for e in (-5, -4, -3, -2, -1) for b in (16, 136, 256)]
    runs = [{"config": c, "returns": [_objective(c, 0), _objective(c, 1)], "seeds": [0, 1]}
            for c in grid]
    on, off = (erahbo.Optimizer(SPACE, method="erahbo", alpha=alpha, budget=60, seed=3,
                                n_init=0, warm_start=runs, one_seed_optimism=v)
               for v in (True, False))
    return on, off


def _near_peak(seed: int, n: int = 40) -> list[dict]:
    """n configurations near the mean's peak (lr 10^-3.5 ... 10^-2.5), any batch: their f is
    about B_t's configuration's, their variance between the grid's."""
    rng = np.random.default_rng(seed)
    return [{"lr": float(10 ** rng.uniform(-3.5, -2.5)), "batch": int(rng.integers(16, 257))}
            for _ in range(n)]


def test_a_second_seed_goes_where_only_the_unmeasured_variance_keeps_a_configuration_below():
    """Same data, same models: at configurations whose one return leaves their posterior MV
    below B_t while their f is no worse than B_t's configuration's, the rule with the option
    goes on (its bound above B_t) and the rule without it stops; the option never lowers the
    bound; after two seeds both agree."""
    on, off = _twins()
    differ = agree = 0
    for config in _near_peak(0):
        y = _objective(config, 10_000)
        r_on, ucb_on, b_on = on.stopping_decision(config, [y])
        r_off, ucb_off, b_off = off.stopping_decision(config, [y])
        assert b_on == b_off
        assert ucb_on >= ucb_off - 1e-12  # optimism never lowers the bound
        if r_off == "dominated" and r_on is None:
            differ += 1
            assert ucb_off <= b_off < ucb_on
        two = [y, _objective(config, 10_001)]
        assert on.stopping_decision(config, two) == off.stopping_decision(config, two)
        agree += 1
    assert differ >= 1 and agree == 40


def test_the_option_changes_nothing_where_configurations_differ_by_their_means(monkeypatch):
    """alpha 0.3 on the same objective: the sample MV of the replicated configurations spreads
    through their means (share below ONE_SEED_SHARE), so the option is not in force and every
    stopping decision is the same with and without it; with the gate open (a threshold below
    any share) some decision differs, so the gate is what keeps them equal."""
    on, off = _twins(alpha=0.3)
    d = on.data
    assert not one_seed_in_force(d.ybar, d.s2, d.k, on.weight)
    configs = _near_peak(1)
    for config in configs:
        y = [_objective(config, 10_000)]
        assert on.stopping_decision(config, y) == off.stopping_decision(config, y)
    monkeypatch.setattr("erahbo.gp.round.ONE_SEED_SHARE", -1.0)
    assert any(on.stopping_decision(c, [_objective(c, 10_000)])
               != off.stopping_decision(c, [_objective(c, 10_000)]) for c in configs)


def test_the_option_is_keyed_by_the_space_travels_in_json_and_is_checked():
    """On by default on a continuous space (session 39), off on a finite table, under the
    paper preset, with racing and for RAHBO; given, ERAHBO's rule carries it and its JSON too;
    a value that is not a bool is refused by name, and so is the option under a fixed-k method
    or with racing."""
    from conftest import table3

    cont = erahbo.Optimizer(SPACE, budget=40, seed=1)
    assert cont.options.one_seed_optimism is True
    assert cont.replication.one_seed_beta(cont.options.beta) == cont.options.beta
    opt = erahbo.Optimizer(table3(50, seed=3), budget=40, seed=1)
    assert opt.options.one_seed_optimism is False
    assert opt.replication.one_seed_beta(2.5) is None
    for o in (erahbo.Optimizer(SPACE, preset="paper", budget=400, seed=1),
              erahbo.Optimizer(SPACE, budget=40, seed=1, stopping="race"),
              erahbo.Optimizer(SPACE, method="rahbo", k=2, budget=40, seed=1)):
        assert o.options.one_seed_optimism is False
    off = erahbo.Optimizer(SPACE, budget=40, seed=1, one_seed_optimism=False)
    assert off.replication.one_seed_beta(2.5) is None
    on = erahbo.Optimizer(SPACE, budget=40, seed=1, one_seed_optimism=True)
    assert on.replication.one_seed_beta(on.options.beta) == on.options.beta
    rule = AdaptiveK(k_min=1, k_max=20, one_seed_optimism=True)
    assert rule_from_json(rule.to_json()) == rule
    assert rule.one_seed_beta(2.5) == 2.5 and AdaptiveK().one_seed_beta(2.5) is None
    with pytest.raises(ValueError, match="one_seed_optimism"):
        erahbo.Optimizer(SPACE, budget=40, seed=1, one_seed_optimism="yes")
    with pytest.raises(ValueError, match="one_seed_optimism=True with stopping='race'"):
        erahbo.Optimizer(SPACE, budget=40, seed=1, stopping="race", one_seed_optimism=True)
    with pytest.raises(ValueError, match="ERAHBO's stopping rule only"):
        erahbo.Optimizer(SPACE, method="rahbo", k=2, budget=40, seed=1, one_seed_optimism=True)
