"""random_top: a random round draws from the configurations best by the acquisition (issue 15)."""

from __future__ import annotations

import numpy as np
import pytest

import erahbo
from conftest import corner_peak as _objective
from conftest import table3
from erahbo.optimizer.options import Options
from erahbo.optimizer.random_design import random_configuration, top_share


def _table():
    return table3(200, seed=3)  # the random-design tests' table and objective


def _after_design(space, **kw) -> erahbo.Optimizer:
    """An optimizer whose initial design is told and whose models are fitted."""
    opt = erahbo.Optimizer(space, budget=200, seed=5, **kw)
    for _ in range(opt.options.n_init):
        trial = opt.ask()
        opt.tell(trial, [_objective(trial.config, s) for s in trial.seeds])
    opt.fit_hyperparameters()  # as the first model-based round does
    return opt


def test_top_share_rounds_up_and_keeps_one():
    s = np.array([0.3, 0.9, 0.1, 0.9, 0.5])
    assert top_share(s, 0.4).tolist() == [1, 3]  # ties in index order
    assert top_share(s, 0.3).tolist() == [1, 3]  # ceil(1.5) = 2
    assert top_share(s, 0.01).tolist() == [1]
    assert sorted(top_share(s, 1.0).tolist()) == [0, 1, 2, 3, 4]
    assert top_share(np.arange(30.0), 0.1).size == 3  # 0.1 * 30 = 3.0000000000000004


def test_a_finite_table_draws_unevaluated_rows_from_the_best_tenth():
    opt = _after_design(_table())
    st, rm = opt.state, opt.round_model()
    allowed = np.ones(len(st.candidates), bool)
    free = np.setdiff1d(np.arange(len(st.candidates)), st.data.config_ids)
    acq = rm.acquisition(st.candidates[free], opt.options.weight)
    cutoff = np.sort(acq)[::-1][int(np.ceil(0.1 * free.size)) - 1]  # the 20th best of 195
    picks = [random_configuration(st, rm, allowed, np.random.default_rng(i), opt.options)[0]
             for i in range(60)]
    assert set(picks) <= set(free.tolist())
    chosen = rm.acquisition(st.candidates[picks], opt.options.weight)
    assert (chosen >= cutoff - 1e-12).all()
    assert len(set(picks)) >= 10  # a spread over the best tenth, not the argmax alone
    # random_top = 1: the uniform draw of random search, the same rows for the same rng
    uniform = Options(random_top=1.0)
    for i in range(5):
        a = random_configuration(st, rm, allowed, np.random.default_rng(i), uniform)
        b = st.random_choice(allowed, np.random.default_rng(i))
        assert a[0] == b[0] and a[2] == b[2]


def test_a_continuous_space_draws_from_the_best_of_uniform_points():
    space = {"a": ("float", 0.0, 1.0), "b": ("float", 0.0, 1.0), "c": ("float", 0.0, 1.0)}
    opt = _after_design(space)
    st, rm = opt.state, opt.round_model()
    ref = np.sort(rm.acquisition(np.random.default_rng(99).random((20000, 3)), opt.options.weight))
    pct = []
    for i in range(30):
        _, u, cid = random_configuration(st, rm, None, np.random.default_rng(i), opt.options)
        assert u.shape == (3,) and ((0 <= u) & (u <= 1)).all() and cid >= 0
        pct.append(np.searchsorted(ref, rm.acquisition(u[None, :], opt.options.weight)[0])
                   / ref.size)
    assert np.mean(pct) > 0.85 and min(pct) > 0.7  # the best tenth of 512 points, roughly


def test_in_a_study_the_random_rounds_change_and_stay_random_rounds():
    def study(**kw):
        opt = erahbo.Optimizer(_table(), budget=120, seed=2, **kw)
        while (trial := opt.ask()) is not None:
            opt.tell(trial, [_objective(trial.config, s) for s in trial.seeds])
        return opt.result()

    res = study()
    top, uniform = res.rounds, study(random_top=1.0).rounds
    rt, ru = top[top.stop_reason == "random"], uniform[uniform.stop_reason == "random"]
    # a random round spends k_min seeds and no more
    assert len(rt) >= 3 and (rt.k == res.settings["k_min"]).all() and rt.B_t.isna().all()
    assert rt.config_id.iloc[0] != ru.config_id.iloc[0]
    # the same initial design: the draw changes the search, not the start
    init = lambda r: list(r[r.phase == "init"].config_id)  # noqa: E731
    assert init(top) == init(uniform)


def test_benchmark_method_names():
    from erahbo.experiments.methods import parse_methods

    spec = parse_methods("erahbo-top1,erahbo-top0.25")
    assert [s.options for s in spec] == [{"random_top": 1.0}, {"random_top": 0.25}]
    with pytest.raises(ValueError, match="erahbo-top<q> "):
        parse_methods("erahbo-top2")


