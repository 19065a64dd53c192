"""A GP on log sample variances (``var_noise = "log"``; :mod:`erahbo.gp.variance_noise`).

Rules checked:

* the observation ``log s^2 - (psi((k - 1) / 2) - log((k - 1) / 2))`` is unbiased for
  ``log rho^2`` under normal returns, and its variance is the known noise ``psi'((k - 1) / 2)``
  (Monte Carlo with a seeded Generator, tolerances from the Monte Carlo error);
* the noise depends on ``k`` only, not on the sample variance; a one-seed row carries none;
* ``to_variance`` / ``variance_bounds`` map the posterior of ``log rho^2`` monotonically:
  ``LCB^var <= exp(m) <= UCB^var``, the exponent capped (finite bounds);
* both engines agree under ``"log"`` on the posterior, the variance bounds, ``B_t``, the
  inner-loop bounds and the finite-table argmax; the pruned continuous argmax is the
  exhaustive one; the acquisition's gradient is the derivative of its value;
* all seeds equal (``s^2 = 0``) on some or on all rows: the fit and the bounds stay finite;
* a quiet region keeps its own variance scale beside a noisy one (no global scale);
* a study runs with ``"log"``, its ``Result.configs`` bounds are ordered, it stores the option
  and resumes to the same trials; the option's validation names the fix.
"""

from __future__ import annotations

import math
import re

import numpy as np
import pytest
from scipy.special import polygamma

import erahbo
from erahbo.gp import GPHyper, RoundSettings, make_engine, make_round
from erahbo.gp.argmax import continuous_argmax
from erahbo.gp.bounds import LOG_EXP_MAX, to_variance, variance_bounds
from erahbo.gp.fit import fit_hyperparameters
from erahbo.gp.variance_noise import (
    LOG_FLOOR_ABS,
    LOG_FLOOR_SHARE,
    NO_INFO,
    TRIGAMMA_HALF,
    log_bias,
    log_floor,
    log_observations,
    variance_noise,
)
from resume_helpers import NOISY_SPACE as SPACE
from resume_helpers import journaled_trials, noisy_objective


@pytest.mark.parametrize("k", [2, 3, 5, 20])
def test_the_log_observation_is_unbiased_for_log_rho2_with_the_known_noise(k):
    rng = np.random.default_rng([37, k])
    rho2, n = 0.3, 200_000
    r = rng.normal(1.0, math.sqrt(rho2), size=(n, k))
    y = log_observations(r.var(axis=1, ddof=1), np.full(n, float(k)), 1e-300)
    se = y.std() / math.sqrt(n)
    assert abs(y.mean() - math.log(rho2)) < 5 * se
    psi1 = float(polygamma(1, 0.5 * (k - 1)))
    d = y - y.mean()
    se_var = math.sqrt(((d**4).mean() - (d**2).mean() ** 2) / n)  # MC error of the variance
    assert abs(y.var() - psi1) < 5 * se_var
    assert variance_noise(1.0, float(k), log=True) * TRIGAMMA_HALF == pytest.approx(psi1)


def test_the_log_noise_depends_on_k_only_and_a_one_seed_row_carries_none():
    k = np.array([1.0, 2.0, 5.0, 20.0])
    tv = variance_noise(0.5, k, log=True)
    np.testing.assert_allclose(tv * TRIGAMMA_HALF / 0.5,
                               [NO_INFO * TRIGAMMA_HALF, 4.9348, 0.6449, 0.1110], rtol=1e-4)
    for kk in k:  # the inner loop's floats give the arrays' numbers
        assert variance_noise(0.5, float(kk), log=True) == pytest.approx(
            variance_noise(0.5, np.array([kk]), log=True)[0], rel=1e-14)
    np.testing.assert_allclose(log_bias(k), [0.0, -1.2703628, -0.2703628, -0.0535539],
                               rtol=1e-6)
    # the observation of a quiet and of a noisy row differ by the log of their variances
    y = log_observations(np.array([0.0025, 1.1]), np.array([3.0, 3.0]), 1e-9)
    assert y[1] - y[0] == pytest.approx(math.log(1.1 / 0.0025))


def test_the_floor_before_the_log():
    assert log_floor(2.0) == pytest.approx(LOG_FLOOR_SHARE * 2.0)
    assert log_floor(0.0) == LOG_FLOOR_ABS
    y = log_observations(np.array([0.0, 1e-9, 1.0]), np.array([2.0, 2.0, 2.0]), 1e-4)
    assert y[0] == y[1] == pytest.approx(math.log(1e-4) + 1.2703628)
    assert math.isfinite(log_observations(0.0, 2, 1e-4))


def test_the_bounds_map_through_exp_in_order_and_stay_finite():
    mu = np.array([-3.0, 0.0, 2.0, 650.0])
    sd = np.array([0.0, 1.0, 2.5, 40.0])
    est, lo, hi = variance_bounds(mu, sd, 2.5, log_var=True)
    np.testing.assert_allclose(est[:3], np.exp(mu[:3]))
    np.testing.assert_allclose(lo[:3], np.exp(mu[:3] - math.sqrt(2.5) * sd[:3]))
    assert (lo <= est).all() and (est <= hi).all() and np.isfinite(hi).all()
    assert hi[3] == pytest.approx(math.exp(LOG_EXP_MAX))
    # the affine models: the bounds as before
    est, lo, hi = variance_bounds(mu[:3], sd[:3], 2.5)
    np.testing.assert_array_equal(est, mu[:3])
    np.testing.assert_allclose(hi, mu[:3] + math.sqrt(2.5) * sd[:3])
    assert to_variance(1.0, (2.0, 3.0), True) == pytest.approx(math.exp(5.0))
    assert to_variance(1000.0, None, True) == math.exp(LOG_EXP_MAX)


def _data():
    X = np.linspace(0.05, 0.95, 9)[:, None]
    ybar = np.sin(6 * X[:, 0]) + 0.3 * np.cos(17 * X[:, 0])
    k = np.array([2, 3, 5, 1, 9, 2, 4, 1, 2], dtype=float)
    s2 = np.exp(-3.0 + 2.5 * X[:, 0]) * (1 + 0.3 * np.cos(11 * X[:, 0]))
    s2[k < 2] = 0.0  # one seed: the placeholder comes from the pooled variance
    return X, ybar, s2, k


def _settings(tau2=0.8):
    return RoundSettings(GPHyper("rbf", np.array([0.25])),
                         GPHyper("rbf", np.array([0.4]), noise=tau2), 2.5, None,
                         sigma0_2=0.05, var_noise="log")


def _observations(X, ybar, s2, k, st):
    from erahbo.gp.one_seed import variance_observations

    return variance_observations(s2, k, st.sigma0_2, ybar)


@pytest.mark.parametrize("row", [None, 2, 3])
def test_both_engines_agree_under_log(row):
    X, ybar, s2, k = _data()
    st = _settings()
    v = _observations(X, ybar, s2, k, st)
    C = np.linspace(0.0, 1.0, 41)[:, None]
    fast = make_round("fast", make_engine("fast", st, C), X, ybar, v, k, st, C)
    ref = make_round("reference", None, X, ybar, v, k, st, C)
    assert fast.log_var and ref.log_var
    U = np.linspace(0.0, 1.0, 7)[:, None]
    for a, b in zip(fast.predict(U), ref.predict(U), strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-9)
    for a, b in zip(fast.variance_at(U, 2.5), ref.variance_at(U, 2.5), strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-12)
    for beta in (0.0, 2.5):
        assert fast.best_lcb_mv(1.0, beta) == pytest.approx(ref.best_lcb_mv(1.0, beta),
                                                             rel=1e-6)
    mask = np.ones(len(C), dtype=bool)
    assert fast.select(mask, 1.0)[0] == ref.select(mask, 1.0)[0]
    u, y, kt = (np.array([0.52]), 0.7, 3) if row is None else (X[row], ybar[row], 7)
    for kk in (1, kt):
        a = fast.inner(row, u, None, y, 0.08, kk, 0.0, 1.0)
        b = ref.inner(row, u, None, y, 0.08, kk, 0.0, 1.0)
        for name in ("mu_f", "sd_f", "mu_var", "sd_var", "ucb_mv", "lcb_mv"):
            assert getattr(a, name) == pytest.approx(getattr(b, name), rel=1e-6,
                                                     abs=1e-9), name


def test_the_pruned_argmax_and_the_gradient_under_log():
    """The screen's exact pruning follows the exp map: the same point as scoring all; the
    polish's gradient is the derivative of the acquisition."""
    rng = np.random.default_rng(3)
    X = rng.random((30, 2))
    ybar = np.sin(4 * X[:, 0]) - X[:, 1]
    k = rng.integers(1, 6, size=30).astype(float)
    s2 = np.where(k >= 2, np.exp(-4 + 5 * X[:, 1]) * rng.chisquare(3, 30) / 3, 0.0)
    st = RoundSettings(GPHyper("rbf", np.array([0.3, 0.4])),
                       GPHyper("rbf", np.array([0.5, 0.3]), noise=0.6), 2.5, None,
                       sigma0_2=0.02, var_noise="log")
    v = _observations(X, ybar, s2, k, st)
    rm = make_round("fast", make_engine("fast", st), X, ybar, v, k, st)
    space = erahbo.SearchSpace({"a": ("float", 0.0, 1.0), "b": ("float", 0.0, 1.0)})
    for alpha in (1.0, 5.0):
        pruned = continuous_argmax(rm, space, alpha, X, seed=1, n_polish=0)
        full = continuous_argmax(rm, space, alpha, X, seed=1, n_polish=0, prune=False)
        np.testing.assert_array_equal(pruned[0], full[0])
        assert pruned[1] == pytest.approx(full[1], rel=1e-12)
    u, h = np.array([0.37, 0.61]), 1e-6
    val, grad = rm.acquisition_grad(u, 2.0)
    assert val == pytest.approx(float(rm.acquisition(u[None], 2.0)[0]), rel=1e-9)
    for j in range(2):
        e = np.zeros(2)
        e[j] = h
        fd = (rm.acquisition((u + e)[None], 2.0)[0] - rm.acquisition((u - e)[None], 2.0)[0])
        assert grad[j] == pytest.approx(fd / (2 * h), rel=1e-4, abs=1e-6)


@pytest.mark.parametrize("all_equal", [False, True])
def test_equal_seeds_keep_the_fit_and_the_bounds_finite(all_equal):
    X, ybar, s2, k = _data()
    s2 = s2.copy()
    s2[[0, 4]] = 0.0  # all seeds of rows 0 and 4 returned the same value
    if all_equal:
        s2[:] = 0.0
    st = fit_hyperparameters(X, ybar, s2, k, var_noise="log", seed=0, one_seed=True)
    assert st.var_noise == "log" and math.isfinite(st.hyper_v.noise) and st.hyper_v.noise > 0
    assert np.isfinite(st.hyper_f.lengthscales).all()
    v = _observations(X, ybar, s2, k, st)
    for engine in ("fast", "reference"):
        rm = make_round(engine, make_engine(engine, st), X, ybar, v, k, st)
        est, lo, hi = rm.variance_at(np.linspace(0, 1, 11)[:, None], 2.5)
        assert np.isfinite(est).all() and np.isfinite(hi).all() and (lo >= 0).all()
        assert (lo <= est).all() and (est <= hi).all()
        assert np.isfinite(rm.D).all() and math.isfinite(rm.best_lcb_mv(1.0, 2.5)[0])
        if not all_equal:  # a zero sample variance reads as a small one
            assert est[0] < np.exp(np.mean(np.log(s2[s2 > 0])))


def test_a_quiet_region_keeps_its_own_scale_beside_a_noisy_one():
    """Quiet configurations (rho^2 = 0.0025) beside noisy ones (1.1): the log model's
    estimate at the quiet ones stays within a factor 3 of 0.0025 (its noise does not depend
    on rho(x)); their sample variances are given exactly, 5 seeds each."""
    X = np.array([[0.05], [0.1], [0.15], [0.2], [0.7], [0.75], [0.8], [0.85], [0.9], [0.95]])
    s2 = np.array([0.0025] * 4 + [1.1] * 6)
    k = np.full(10, 5.0)
    ybar = np.array([1.0] * 4 + [1.3] * 6)
    st = RoundSettings(GPHyper("rbf", np.array([0.2])), GPHyper("rbf", np.array([0.2]),
                       noise=TRIGAMMA_HALF / 9.0), 2.5, None, var_noise="log")
    rm = make_round("reference", None, X, ybar, s2, k, st)
    est, lo, hi = rm.variance_at(np.array([[0.125], [0.825]]), 2.5)
    assert 0.0025 / 3 < est[0] < 0.0025 * 3
    assert 1.1 / 3 < est[1] < 1.1 * 3
    assert lo[0] < 0.0025 < hi[0]


def test_a_log_study_orders_its_bounds_stores_the_option_and_resumes(tmp_path):
    """Cut after 15 tells and rebuilt from the journal: the same trials as uninterrupted;
    every configuration's ``lcb_mv <= mv <= ucb_mv``."""
    kw = dict(budget=36, seed=1, var_noise="log")

    def check(opt):
        res = opt.result()
        assert res.settings["var_noise"] == "log"
        c = res.configs
        assert ((c["lcb_mv"] <= c["mv"] + 1e-12) & (c["mv"] <= c["ucb_mv"] + 1e-12)).all()
        assert np.isfinite(c[["mv", "lcb_mv", "ucb_mv"]].to_numpy(float)).all()
        b = opt.bounds_at([res.configs.iloc[0][list(SPACE)].to_dict()])
        assert b[0, 1] <= b[0, 0] <= b[0, 2]

    def run(path, stop=None):
        return journaled_trials(SPACE, path, noisy_objective, stop, check, **kw)

    ref = run(tmp_path / "ref.db")
    head = run(tmp_path / "cut.db", stop=15)
    assert head + run(tmp_path / "cut.db") == ref


def test_the_option_is_validated_with_the_fix():
    assert erahbo.Optimizer(SPACE, budget=20, var_noise="log").options.var_noise == "log"
    with pytest.raises(ValueError, match=r"must be one of \('fitted', 'chi2', 'log'\)"):
        erahbo.Optimizer(SPACE, budget=20, var_noise="lognormal")
    with pytest.raises(ValueError, match=r"var_noise='log' knows the noise.*drop var_noise_prior"):
        erahbo.Optimizer(SPACE, budget=20, var_noise="log", var_noise_prior=-1.0)


def test_erahbos_variance_model_is_the_measures_unless_given():
    """Rule (session 24): ``var_noise`` not given is ``"log"`` for ERAHBO in MV and mean - c
    std, ``"fitted"`` in the tail measures (their defaults were measured with it), for the
    fixed-k methods and under the paper's preset; a value given wins, and a study stores the
    value in force (a resume reads it back). The models the study builds are the ones named."""
    def in_force(**kw):
        opt = erahbo.Optimizer(SPACE, budget=200, **kw)
        return opt.study_settings()["var_noise"]

    assert in_force() == "log" and in_force(risk="mean_std", c=1.0) == "log"
    assert in_force(risk="cvar", q=0.1) == in_force(risk="quantile", q=0.25) == "fitted"
    assert in_force(method="rahbo") == in_force(preset="paper") == "fitted"
    assert in_force(risk="cvar", q=0.1, var_noise="log") == "log"
    assert in_force(var_noise="fitted") == "fitted"
    # the prior of a fitted noise is refused where the noise in force is not fitted, with the fix
    with pytest.raises(ValueError, match=r"var_noise='log' knows.*give var_noise='fitted'"):
        erahbo.Optimizer(SPACE, budget=200, var_noise_prior=-1.0)
    assert in_force(risk="cvar", q=0.1, var_noise_prior=-1.0) == "fitted"
    for kw, log in (({}, True), ({"risk": "cvar", "q": 0.1}, False)):
        res = erahbo.optimize(noisy_objective, SPACE, budget=30, seed=0, **kw)
        assert res.settings["var_noise"] == ("log" if log else "fitted")


def test_the_benchmark_names_the_option():
    from erahbo.experiments.methods import parse_method

    assert parse_method("erahbo-vnlog").options == {"var_noise": "log"}
    with pytest.raises(ValueError, match=re.escape("erahbo-vn<fitted|chi2|log>")):
        parse_method("erahbo-vngamma")
