"""Learning from one seed (issue 37): replicates within the model's resolution, a
recommendation and a ``B_t`` backed by replicated runs, and what the user is told about a
one-seed recommendation.

Rules checked:

* ``nearest_replicate``: the nearest open evaluated row closer than the radius in the mean
  GP's lengthscales, never a closed one, none at radius 0;
* in a study on a continuous space, every new configuration of a model-based round lies at
  least ``replicate_within`` (in the lengthscales of the round's fit) from every evaluated
  configuration it could have replicated;
* ``Recommender.backed`` narrows the rows to those with ``min_seeds`` seeds when one exists;
  erahbo's default recommends a configuration with two or more seeds whenever one exists; the
  paper preset keeps every row; ``B_t`` is the best posterior MV over the rows
  ``bound_min_seeds`` allows;
* the explanation says how many seeds the recommendation has, and a one-seed recommendation
  (user settings) is named by the explanation and by ``diagnose``.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

import erahbo
from erahbo.diagnostics import diagnose
from erahbo.optimizer.options import Options
from erahbo.optimizer.recommender import Recommender
from erahbo.optimizer.replicate import nearest_replicate

SPACE = {"lr": ("log", 1e-5, 1e-1), "batch": ("int", 16, 256), "act": ("cat", ["tanh", "relu"])}


def _objective(config: dict, seed: int) -> float:
    """The README's shape: a peak at lr 1e-3, relu better, noise growing with the batch."""
    rng = np.random.default_rng([seed, int(config["batch"]), int(1e6 * config["lr"])])
    return (-abs(math.log10(config["lr"]) + 3.0) + 0.5 * (config["act"] == "relu")
            + rng.normal(0.0, 0.1 + config["batch"] / 512))


def test_nearest_replicate_takes_the_nearest_open_row_within_the_radius():
    U = np.array([[0.0, 0.0], [0.5, 0.5], [0.52, 0.5]])
    ls = np.array([0.1, 1.0])
    u = np.array([0.515, 0.5])
    assert nearest_replicate(u, U, ls, 0.3) == 2  # 0.05 vs 0.15 lengthscales away
    assert nearest_replicate(u, U, ls, 0.3, np.array([False, False, True])) == 1
    assert nearest_replicate(u, U, ls, 0.1, np.array([False, False, True])) is None
    assert nearest_replicate(u, U, ls, 0.0) is None
    assert nearest_replicate(np.array([0.2, 0.2]), U, ls, 0.3) is None  # 2 lengthscales


def test_new_configurations_keep_their_distance_from_replicable_ones():
    """Without random rounds every new configuration after the initial design is the
    acquisition's argmax; the nearest rule (``replicate_lookahead=False``) makes it a replicate
    when it lands within the radius of an open row (fewer than k_max seeds: never at its seed
    cap), so a new one never does (the lookahead's choice: tests/test_lookahead.py)."""
    radius = 0.5
    space = erahbo.SearchSpace(SPACE)
    opt = erahbo.Optimizer(space, method="erahbo", budget=60, seed=3, replicate_within=radius,
                           replicate_lookahead=False, random_interleave=0, k_max=20)
    checked = replicated = 0
    while (t := opt.ask()) is not None:
        d = opt.data
        if t.phase == "bo":
            if d.row_of(t.config_id) is None:
                ls = opt.model_settings.hyper_f.lengthscales
                open_rows = np.asarray(d.k) < 20
                dist = np.sqrt((((np.asarray(d.U)[open_rows] - space.encode(t.config)) / ls)
                                ** 2).sum(1))
                assert dist.min() >= radius
                checked += 1
            else:
                replicated += 1
        opt.tell(t, [_objective(t.config, s) for s in t.seeds])
    assert checked > 0


@pytest.mark.parametrize("k, mask, want", [
    ([1, 2, 1, 3], None, [False, True, False, True]),
    ([1, 2, 1, 3], [True, False, True, True], [False, False, False, True]),
    ([1, 1, 1], None, None),  # no row with two seeds: every row
    ([1, 2, 1], [True, False, True], [True, False, True]),  # none eligible with two: the mask
])
def test_backed_rows_have_the_fewest_seeds_when_one_has(k, mask, want):
    got = Recommender.backed(np.array(k, dtype=float), None if mask is None else np.array(mask),
                             2)
    assert (got is None) if want is None else got.tolist() == want
    assert Recommender.backed(np.array(k, dtype=float), None, 1) is None  # 1: all


def test_defaults_recommend_a_replicated_configuration_and_the_paper_any():
    assert Options(method="erahbo", budget=50).recommend_min_seeds == 2
    assert Options(method="erahbo", budget=50, preset="paper").recommend_min_seeds == 1
    assert Options(method="rahbo", budget=50).recommend_min_seeds == 1
    for budget in (20, 40):
        for seed in range(2):
            r = erahbo.optimize(_objective, SPACE, budget=budget, seed=seed)
            inc = r.configs[r.configs["rank"] == 1].iloc[0]
            assert (r.configs["k"] >= 2).any()  # the 5 x 2 initial design
            assert inc["k"] >= 2, (budget, seed)


def _warm(single: float) -> pd.DataFrame:
    """Runs given as a warm start: config A with one (high) run, B and C with two each."""
    rows = [{"lr": 1e-3, "batch": 16, "act": "relu", "return": single}]
    for lr, rets in ((1e-4, (0.1, 0.2)), (1e-2, (0.0, 0.3))):
        rows += [{"lr": lr, "batch": 64, "act": "tanh", "return": v} for v in rets]
    return pd.DataFrame(rows)


@pytest.mark.parametrize("min_seeds", [1, 2])
def test_a_one_seed_recommendation_is_named(min_seeds):
    """Before any model fit the recommendation is the best sample MV; A's one run (variance 0)
    is the best, so only recommend_min_seeds decides whether it may be the incumbent."""
    opt = erahbo.Optimizer(erahbo.SearchSpace(SPACE), method="erahbo", budget=10, seed=0,
                           n_init=0, warm_start=_warm(5.0), recommend_min_seeds=min_seeds)
    r = opt.result()
    inc = r.configs[r.configs["rank"] == 1].iloc[0]
    text = erahbo.recommendation.explain_incumbent(r.configs)
    codes = {f.code: f.message for f in diagnose(r, min_runs=5)}
    if min_seeds == 1:
        assert inc["k"] == 1
        assert "has one seed" in text
        assert "one_seed_incumbent" in codes
        assert "recommend_min_seeds=2" in codes["one_seed_incumbent"]
    else:
        assert inc["k"] == 2
        assert f"has k = {int(inc['k'])} seeds" in text
        assert "one_seed_incumbent" not in codes


def _run(opt: erahbo.Optimizer, objective) -> erahbo.Result:
    """Runs ``opt`` to the end of its budget on ``objective(config, seed)``."""
    while (t := opt.ask()) is not None:
        opt.tell(t, [objective(t.config, s) for s in t.seeds])
    return opt.result()


@pytest.mark.parametrize("bound", [1, 2])
def test_b_t_is_the_best_posterior_mv_over_the_rows_bound_min_seeds_allows(bound):
    """Under beta_stop = 0 (the default) B_t (eq. 10) is the highest posterior mean MV over the
    evaluated configurations: all of them (bound_min_seeds 1, the paper's), or those with two or
    more seeds (2)."""
    space = erahbo.SearchSpace(SPACE)
    opt = erahbo.Optimizer(space, method="erahbo", budget=40, seed=1, bound_min_seeds=bound)
    c = _run(opt, _objective).configs
    assert (c["k"] == 1).any() and (c["k"] >= 2).any()
    _, _, B_t = opt.stopping_decision({n: c[n].iloc[0] for n in SPACE}, [0.0])
    rows = c if bound == 1 else c[c["k"] >= 2]
    assert B_t == pytest.approx(rows["mv"].max(), rel=1e-9, abs=1e-12)


def test_the_default_b_t_rows_are_the_spaces_two_seeds_on_a_continuous_space_all_on_a_table():
    """Rule (session 34): without ``bound_min_seeds`` given, ERAHBO's ``B_t`` (eq. 10) is the
    best posterior MV over the configurations with two or more seeds on a continuous or mixed
    space, and over every configuration (the paper's eq. 10) on a finite table; the study
    settings store the value in force; the paper preset and the fixed-k methods keep 1; a value
    given by name is the same on both."""
    from conftest import corner_peak, table3

    opt = erahbo.Optimizer(SPACE, method="erahbo", budget=40, seed=1)
    continuous = _run(opt, _objective)
    assert continuous.settings["bound_min_seeds"] == 2
    c = continuous.configs
    assert (c["k"] == 1).any() and (c["k"] >= 2).any()
    _, _, B_t = opt.stopping_decision({n: c[n].iloc[0] for n in SPACE}, [0.0])
    assert B_t == pytest.approx(c[c["k"] >= 2]["mv"].max(), rel=1e-9, abs=1e-12)

    on_table = _run(erahbo.Optimizer(table3(200, seed=3), budget=60, seed=2), corner_peak)
    assert on_table.settings["bound_min_seeds"] == 1
    given = _run(erahbo.Optimizer(table3(200, seed=3), budget=60, seed=2, bound_min_seeds=2),
                 corner_peak)
    assert given.settings["bound_min_seeds"] == 2
    assert erahbo.Optimizer(SPACE, method="erahbo", budget=40, seed=1,
                            bound_min_seeds=1).options.bound_min_seeds == 1
    assert erahbo.Optimizer(SPACE, method="erahbo", preset="paper", budget=400,
                            seed=1).options.bound_min_seeds == 1
    assert erahbo.Optimizer(SPACE, method="rahbo", k=2, budget=40,
                            seed=1).options.bound_min_seeds == 1


def test_the_options_keyed_by_the_space_share_one_rule():
    """Rule (``erahbo.validation.by_space``): every option erahbo keys by the kind of space is
    resolved for the optimizer's space: its table value on a finite table, its continuous
    value on a continuous space, its off value under the paper preset and for the fixed-k
    methods, and a value given by name on both."""
    from conftest import table3
    from erahbo.optimizer.parts import SPACE_PARAMS

    names = {p.name for p in SPACE_PARAMS}
    assert names == {"random_interleave", "bound_min_seeds", "replicate_lookahead",
                     "one_seed_optimism", "rho_max2_model", "rho_max2_spread"}
    table = table3(50, seed=3)
    cont = erahbo.Optimizer(SPACE, method="erahbo", budget=40, seed=1).options
    fin = erahbo.Optimizer(table, budget=40, seed=1).options
    paper = erahbo.Optimizer(SPACE, method="erahbo", preset="paper", budget=400, seed=1).options
    fixed = erahbo.Optimizer(SPACE, method="rahbo", k=2, budget=40, seed=1).options
    assert {n: getattr(cont, n) for n in names} == {
        "random_interleave": 20, "bound_min_seeds": 2, "replicate_lookahead": True,
        "one_seed_optimism": True, "rho_max2_model": False, "rho_max2_spread": 0.3}
    assert {n: getattr(fin, n) for n in names} == {
        "random_interleave": 50, "bound_min_seeds": 1, "replicate_lookahead": False,
        "one_seed_optimism": False, "rho_max2_model": False, "rho_max2_spread": 0.0}
    for o in (paper, fixed):
        assert {n: getattr(o, n) for n in names} == {
            "random_interleave": 0, "bound_min_seeds": 1, "replicate_lookahead": False,
            "one_seed_optimism": False, "rho_max2_model": False, "rho_max2_spread": 0.0}
    given = {"random_interleave": 7, "bound_min_seeds": 3, "replicate_lookahead": True,
             "one_seed_optimism": True, "rho_max2_model": False, "rho_max2_spread": 0.5}
    model = {**given, "rho_max2_model": True, "rho_max2_spread": 0.0}  # the two caps exclude
    for space in (SPACE, table):
        for values in (given, model):
            o = erahbo.Optimizer(space, method="erahbo", budget=40, seed=1, **values).options
            assert {n: getattr(o, n) for n in names} == values
