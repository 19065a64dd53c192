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
    B, i = incumbent_lcb(mu_f, sd_f, mu_v, sd_v, alpha=1.0, beta_stop=1.0)
    assert i == 2 and B == pytest.approx(1.5 - 0.1 - 0.2)
    B0, i0 = incumbent_lcb(mu_f, sd_f, mu_v, sd_v, alpha=1.0, beta_stop=0.0)
    assert i0 == 1 and B0 == pytest.approx(1.9)  # beta_stop = 0: the best posterior MV mean
    with pytest.raises(ValueError, match="no evaluated"):
        incumbent_lcb(np.array([]), np.array([]), np.array([]), np.array([]), 1.0, 1.0)
