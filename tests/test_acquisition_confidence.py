"""Eq. 8's ``LCB^var`` at its own confidence (``acquisition_beta_var``,
:mod:`erahbo.optimizer.acquisition_confidence`).

Rules checked here:

* eq. 8 with ``beta_var`` is ``UCB^f`` at ``beta`` less ``alpha`` times ``LCB^var`` at
  ``beta_var``; ``beta_var = None`` and ``beta_var = beta`` are the paper's acquisition, bit for
  bit; the hand-written gradient is the derivative of eq. 8 with ``beta_var``
  (``tests/test_acquisition.py::test_rahbo_acquisition_grad_is_the_derivative_of_eq_8``);
* every engine and path reads it: the reference and fast engines' acquisition, gradient and
  ``select`` agree, the screen's bounds stay upper bounds and the pruned continuous argmax
  equals the exhaustive one;
* as an option: None by default in every preset (the paper's), validated once, refused where no
  acquisition has a variance term, stored in the study settings (None for a journal without
  it), a benchmark method name (``erahbo-abv1``); a study given ``beta`` makes the default's
  decisions, and the confidence reaches the fitted round settings.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import erahbo
from erahbo import Options
from erahbo.experiments.methods import parse_method
from erahbo.gp import FastModel, GPHyper, ReferenceRound, RoundSettings
from erahbo.gp.argmax import _known_rows, continuous_argmax
from erahbo.gp.bounds import lcb_var, rahbo_acquisition, ucb_f
from erahbo.gp.screen import _Bounds
from erahbo.optimizer.parts import absent_values
from erahbo.space import SearchSpace

D = 3
SPACE = SearchSpace({f"x{i}": ("float", 0.0, 1.0) for i in range(D)})


def test_beta_var_is_the_confidence_of_lcb_var_alone():
    rng = np.random.default_rng(0)
    mu_f, sd_f, mu_v, sd_v = rng.normal(size=6), rng.uniform(0.1, 1, 6), rng.normal(size=6), \
        rng.uniform(0.1, 1, 6)
    for log_var in (False, True):
        got = rahbo_acquisition(mu_f, sd_f, mu_v, sd_v, 2.0, 2.5, log_var=log_var, beta_var=1.0)
        lo = lcb_var(mu_v, sd_v, 1.0)
        want = ucb_f(mu_f, sd_f, 2.5) - 2.0 * (np.exp(lo) if log_var else lo)
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
        paper = rahbo_acquisition(mu_f, sd_f, mu_v, sd_v, 2.0, 2.5, log_var=log_var)
        same = rahbo_acquisition(mu_f, sd_f, mu_v, sd_v, 2.0, 2.5, log_var=log_var,
                                 beta_var=2.5)
        np.testing.assert_array_equal(paper, same)
        # less optimism about the variance: a lower acquisition wherever alpha > 0
        assert np.all(got < paper)


def _state(n, seed, beta_var, var_noise="fitted"):
    rng = np.random.default_rng(seed)
    X = rng.random((n, D))
    k = rng.integers(2, 12, size=n).astype(float)
    f = np.sin(4 * X[:, 0]) + X[:, 1]
    rho2 = 0.05 + 0.4 * X[:, 1] ** 2
    ybar = f + np.sqrt(rho2 / k) * rng.standard_normal(n)
    s2 = rho2 * rng.chisquare(k - 1) / (k - 1)
    noise = 0.3 if var_noise == "fitted" else 0.5
    s = RoundSettings(GPHyper("rbf", rng.uniform(0.2, 0.9, D)),
                      GPHyper("rbf", rng.uniform(0.5, 2.0, D), noise=noise), beta=2.5,
                      var_noise=var_noise, acquisition_beta_var=beta_var)
    return X, ybar, s2, k, s


@pytest.mark.parametrize("var_noise", ["fitted", "log"])
def test_both_engines_read_it_and_agree(var_noise):
    X, ybar, s2, k, s = _state(40, 1, 1.0, var_noise)
    C = np.vstack([X, np.random.default_rng(2).random((80, D))])
    ref = ReferenceRound(X, ybar, s2, k, s, C)
    fast = FastModel(s, C).round(X, ybar, s2, k)
    U = np.random.default_rng(3).random((25, D))
    mf, sdf, mv, sdv = ref.predict(U)
    for w in (1.0, 5.0):
        want = rahbo_acquisition(mf, sdf, mv, sdv, w, 2.5, log_var=ref.log_var, beta_var=1.0)
        np.testing.assert_allclose(ref.acquisition(U, w), want, rtol=1e-12)
        np.testing.assert_allclose(fast.acquisition(U, w), want, rtol=1e-8, atol=1e-10)
        mask = np.ones(len(C), dtype=bool)
        mask[::4] = False
        i_f, v_f = fast.select(mask, w)
        i_r, v_r = ref.select(mask, w)
        assert i_f == i_r and v_f == pytest.approx(v_r, abs=1e-9)
        g_f, g_r = fast.acquisition_grad(U[0], w), ref.acquisition_grad(U[0], w)
        assert g_f[0] == pytest.approx(g_r[0]) and np.allclose(g_f[1], g_r[1])
        assert g_r[0] == pytest.approx(float(want[0]))
    # the paper's acquisition picks another candidate on this state (the option acts)
    paper = ReferenceRound(X, ybar, s2, k, RoundSettings(s.hyper_f, s.hyper_v, beta=2.5,
                                                         var_noise=var_noise), C)
    assert np.all(paper.acquisition(U, 5.0) > ref.acquisition(U, 5.0))


@pytest.mark.parametrize("weight", [1.0, 5.0])
def test_screen_bounds_and_pruned_argmax_with_beta_var(weight):
    X, ybar, s2, k, s = _state(120, 4, 1.0, "log")
    rm = FastModel(s).round(X, ybar, s2, k)
    U = np.vstack([SPACE.sobol_unit(64, 1), X])
    exact = rm.acquisition(U, weight)
    b = _Bounds(rm, U, _known_rows(rm, U, 64), weight)
    for level in (1, 7, 40, 120):
        assert np.all(b.at(np.arange(len(U)), level) >= exact)
    kw = dict(seed=0, raw_samples=128, n_polish=3)
    u1, v1 = continuous_argmax(rm, SPACE, weight, X, prune=True, **kw)
    u2, v2 = continuous_argmax(rm, SPACE, weight, X, prune=False, **kw)
    np.testing.assert_array_equal(u1, u2)
    assert v1 == pytest.approx(v2, rel=1e-12, abs=1e-12)


def test_the_option_is_validated_once_and_off_by_default():
    for preset in ("default", "paper"):
        assert Options(budget=50, preset=preset).acquisition_beta_var is None
    assert Options(budget=50, acquisition_beta_var=1).acquisition_beta_var == 1.0
    with pytest.raises(ValueError, match=r"acquisition_beta_var=-1 must be >= 0"):
        Options(budget=50, acquisition_beta_var=-1)
    with pytest.raises(TypeError, match="acquisition_beta_var must be a number"):
        Options(budget=50, acquisition_beta_var="one")
    for method in ("gpucb", "random"):
        with pytest.raises(ValueError, match=f"method='{method}' has none"):
            Options(budget=50, method=method, acquisition_beta_var=1.0)
    assert Options(budget=50, method="rahbo", acquisition_beta_var=1.0).acquisition_beta_var == 1
    assert absent_values()["acquisition_beta_var"] is None  # an old journal: the paper's
    assert Options(budget=50).settings_json(None, None)["acquisition_beta_var"] is None
    m = parse_method("erahbo-abv1")
    assert m.method == "erahbo" and m.options == {"acquisition_beta_var": 1.0}


def _objective(config, seed):
    rng = np.random.default_rng([seed, int(1e6 * config["x0"]), int(1e6 * config["x1"])])
    f = np.sin(4 * config["x0"]) + config["x1"]
    return float(f + (0.05 + 0.5 * config["x2"] ** 2) * rng.standard_normal())


def test_beta_var_equal_to_beta_makes_the_default_decisions():
    kw = dict(budget=40, seed=3, raw_samples=64, n_polish=1)
    a = erahbo.optimize(_objective, SPACE, **kw)
    b = erahbo.optimize(_objective, SPACE, acquisition_beta_var=2.5, **kw)
    cols = ["config_id", "x0", "x1", "x2", "seed", "return"]
    pd.testing.assert_frame_equal(a.history[cols], b.history[cols])
    opt = erahbo.Optimizer(SPACE, budget=40, seed=3, acquisition_beta_var=1.0,
                           raw_samples=64, n_polish=1)
    for _ in range(8):
        trial = opt.ask()
        if trial is None:
            break
        opt.tell(trial, [_objective(trial.config, s) for s in trial.seeds])
    assert opt.models.settings.acquisition_beta_var == 1.0
    # fixed hyperparameters (the Optuna sampler's stored fit) carry it too
    fixed = erahbo.Optimizer(SPACE, budget=40, seed=3, acquisition_beta_var=1.0,
                             hyperparameters=(opt.models.settings.hyper_f,
                                              opt.models.settings.hyper_v))
    assert fixed.models.settings.acquisition_beta_var == 1.0
