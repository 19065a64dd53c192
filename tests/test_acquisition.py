"""Confidence bounds and acquisition functions: the sqrt(beta) convention, MV bounds, B_t."""

from __future__ import annotations

import numpy as np
import pytest

from erahbo.gp.bounds import (
    incumbent_lcb,
    lcb,
    lcb_f,
    lcb_mv,
    lcb_var,
    rahbo_acquisition,
    rahbo_acquisition_grad,
    sigma_hat,
    ucb,
    ucb_f,
    ucb_mv,
    ucb_var,
)


def test_beta_is_squared_multiplier():
    # paper default beta = 2.5 is sqrt(2.5) = 1.58 standard deviations; beta_stop = 1 is one
    assert ucb(1.0, 2.0, 2.5) == pytest.approx(1.0 + np.sqrt(2.5) * 2.0)
    assert lcb(1.0, 2.0, 1.0) == pytest.approx(-1.0)
    assert ucb_f(0.0, 1.0, 4.0) == pytest.approx(2.0) and lcb_f(0.0, 1.0, 4.0) == -2.0
    assert ucb_var(0.5, 0.1, 0.0) == 0.5 == lcb_var(0.5, 0.1, 0.0)
    with pytest.raises(ValueError, match="beta"):
        ucb(0.0, 1.0, -1.0)


def test_mv_bounds_bracket_the_mv_estimate_and_match_the_paper():
    rng = np.random.default_rng(0)
    mu_f, sd_f = rng.normal(size=50), rng.uniform(0, 1, 50)
    mu_v, sd_v = rng.uniform(0, 2, 50), rng.uniform(0, 1, 50)
    for alpha in (0.0, 0.5, 3.0):
        up = ucb_mv(mu_f, sd_f, mu_v, sd_v, alpha, 2.5)
        lo = lcb_mv(mu_f, sd_f, mu_v, sd_v, alpha, 2.5)
        mid = mu_f - alpha * mu_v
        assert np.all(lo <= mid) and np.all(mid <= up)
        np.testing.assert_allclose(up, ucb_f(mu_f, sd_f, 2.5) - alpha * lcb_var(mu_v, sd_v, 2.5))
        np.testing.assert_allclose(lo, lcb_f(mu_f, sd_f, 2.5) - alpha * ucb_var(mu_v, sd_v, 2.5))
        np.testing.assert_allclose(rahbo_acquisition(mu_f, sd_f, mu_v, sd_v, alpha, 2.5), up)
    # alpha = 0: RAHBO's acquisition is GP-UCB's UCB_f
    np.testing.assert_allclose(rahbo_acquisition(mu_f, sd_f, mu_v, sd_v, 0.0, 2.5),
                               ucb_f(mu_f, sd_f, 2.5))


def test_incumbent_lcb_is_max_lcb_mv():
    mu_f = np.array([1.0, 2.0, 1.5])
    sd_f = np.array([0.1, 1.0, 0.1])
    mu_v = np.array([0.1, 0.1, 0.2])
    sd_v = np.zeros(3)
    B, i = incumbent_lcb(mu_f, sd_f, mu_v, sd_v, risk=1.0, beta_stop=1.0)
    assert i == 2 and B == pytest.approx(1.5 - 0.1 - 0.2)
    B0, i0 = incumbent_lcb(mu_f, sd_f, mu_v, sd_v, risk=1.0, beta_stop=0.0)
    assert i0 == 1 and B0 == pytest.approx(1.9)  # beta_stop = 0: the best posterior MV mean
    with pytest.raises(ValueError, match="no evaluated"):
        incumbent_lcb(np.array([]), np.array([]), np.array([]), np.array([]), 1.0, 1.0)


def test_one_function_serves_floats_and_arrays_with_the_same_bits():
    """The inner loop's floats and the engines' arrays run the same code: equal bits."""
    rng = np.random.default_rng(3)
    mu_f, sd_f = rng.normal(size=40), rng.uniform(0, 1, 40)
    mu_v, sd_v = rng.uniform(0, 2, 40), rng.uniform(0, 1, 40)
    ucbv, k = rng.uniform(0, 3, 40), rng.integers(1, 30, 40).astype(float)
    std_f, std_v = (0.3, 2.0), (1.1, 0.4)
    up = ucb_mv(mu_f, sd_f, mu_v, sd_v, 0.7, 2.5, std_f, std_v)
    lo = lcb_mv(mu_f, sd_f, mu_v, sd_v, 0.7, 2.5, std_f, std_v)
    cap = sigma_hat(ucbv, 1.5, k)
    for i in range(40):
        a = (float(mu_f[i]), float(sd_f[i]), float(mu_v[i]), float(sd_v[i]), 0.7, 2.5)
        assert ucb_mv(*a, std_f, std_v) == up[i] and lcb_mv(*a, std_f, std_v) == lo[i]
        assert rahbo_acquisition(*a, std_f, std_v) == up[i]
        assert sigma_hat(float(ucbv[i]), 1.5, float(k[i])) == cap[i]
        assert isinstance(sigma_hat(float(ucbv[i]), 1.5, float(k[i])), float)


def test_standardized_posteriors_give_the_raw_bounds():
    """A bound computed on a GP's standardized scale and mapped back is the raw-scale bound."""
    rng = np.random.default_rng(4)
    mu_f, sd_f = rng.normal(size=20), rng.uniform(0, 1, 20)
    mu_v, sd_v = rng.normal(size=20), rng.uniform(0, 1, 20)
    (mf, sf), (mv, sv) = (5.0, 3.0), (0.5, 0.2)
    raw = (mf + sf * mu_f, sf * sd_f, mv + sv * mu_v, sv * sd_v)
    np.testing.assert_allclose(
        rahbo_acquisition(mu_f, sd_f, mu_v, sd_v, 2.0, 2.5, (mf, sf), (mv, sv)),
        rahbo_acquisition(*raw, 2.0, 2.5), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(lcb_mv(mu_f, sd_f, mu_v, sd_v, 2.0, 1.0, (mf, sf), (mv, sv)),
                               lcb_mv(*raw, 2.0, 1.0), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("std", [None, ((0.5, 3.0), (1.0, 0.25))])
@pytest.mark.parametrize("log_var", [False, True])
@pytest.mark.parametrize("beta_var", [None, 0.0, 1.0, 4.0])
def test_rahbo_acquisition_grad_is_the_derivative_of_eq_8(std, log_var, beta_var):
    """The hand-written gradient of eq. 8 matches central differences of eq. 8 itself, with
    ``LCB^var`` at the acquisition's ``beta`` or at its own ``beta_var``
    (``acquisition_beta_var``, tests/test_acquisition_confidence.py) and on either variance
    scale."""
    std_f, std_v = std if std else (None, None)
    A = np.array([[0.3, -0.2], [0.1, 0.4]])

    def post(x):  # smooth posteriors of a 2-d point and their gradients
        mf, dmf = np.sin(x[0]) + x[1], np.array([np.cos(x[0]), 1.0])
        vf, dvf = 0.2 + (A[0] @ x) ** 2, 2 * (A[0] @ x) * A[0]
        mv, dmv = x[0] * x[1], np.array([x[1], x[0]])
        vv, dvv = 0.1 + (A[1] @ x) ** 2, 2 * (A[1] @ x) * A[1]
        return mf, vf, dmf, dvf, mv, vv, dmv, dvv

    def value(x):
        mf, vf, _, _, mv, vv, _, _ = post(x)
        return rahbo_acquisition(mf, np.sqrt(vf), mv, np.sqrt(vv), 1.5, 2.5, std_f, std_v,
                                 log_var=log_var, beta_var=beta_var)

    x = np.array([0.4, 0.7])
    mf, vf, dmf, dvf, mv, vv, dmv, dvv = post(x)
    g = rahbo_acquisition_grad(np.sqrt(vf), dmf, dvf, np.sqrt(vv), dmv, dvv, 1.5, 2.5,
                               std_f, std_v, mu_f=mf, mu_var=mv, log_var=log_var,
                               beta_var=beta_var)
    h = 1e-6
    fd = [(value(x + h * e) - value(x - h * e)) / (2 * h) for e in np.eye(2)]
    np.testing.assert_allclose(g, fd, rtol=1e-6, atol=1e-8)
