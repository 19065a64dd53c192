"""Eq. 19's cap ``rho_max^2`` from the variance GP (issue 37, ``rho_max2_model``).

Rules checked:

* ``model_cap`` is the largest posterior median of ``rho^2`` over the evaluated
  configurations: ``max exp(m_v + s_v mu_i)`` for a GP on log variances, ``max(m_v + s_v
  mu_i)`` on the raw scale;
* both engines set the round's ``rho2`` to it under ``rho_max2_model`` and agree on the mean
  GP's noise; without the flag, and whenever a ``rho_max2`` is given, the cap is the old one;
* where every configuration has the same true variance and 2 seeds, the largest sample
  variance is several times the truth and the model's cap is not;
* while a sample variance is more than ``MODEL_CAP_OUTLIER`` times the model's cap (a diverged
  run not yet bounded), the cap is the sample maximum, so that row's mean is discounted;
* the option is on by default for ERAHBO with the log variance model on a continuous space
  where the means' spread does not cap eq. 19 (``rho_max2_spread=0``) and off on a finite
  table, under the paper preset, for the fixed-k methods and with a
  fitted variance noise (CVaR's default); given by name it is kept; a non-bool is refused.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import erahbo
from erahbo.gp import FastModel, ReferenceRound, RoundSettings
from erahbo.gp.exact import GPHyper
from erahbo.gp.round import MODEL_CAP_OUTLIER, model_cap
from erahbo.gp.variance_noise import LOG_PRIOR_SD, TRIGAMMA_HALF


def test_model_cap_is_the_largest_posterior_median():
    mu = np.array([-1.0, 0.5, 0.2])
    assert model_cap(mu, (0.3, 2.0), True) == pytest.approx(math.exp(0.3 + 2.0 * 0.5))
    assert model_cap(mu, (0.3, 2.0), False) == pytest.approx(0.3 + 2.0 * 0.5)


def _flat_variance(n: int = 30, rho2: float = 0.1):
    """n configurations in [0, 1]^2, each 2 seeds of one true variance rho2 (a fixed draw)."""
    rng = np.random.default_rng(0)
    X = rng.random((n, 2))
    k = np.full(n, 2.0)
    s2 = rho2 * rng.chisquare(1, size=n)
    ybar = np.sin(3 * X[:, 0]) + math.sqrt(rho2 / 2) * rng.standard_normal(n)
    return X, ybar, s2, k


def _settings(flag: bool, rho_max2: float | None = None) -> RoundSettings:
    return RoundSettings(GPHyper("rbf", np.array([0.3, 0.3])),
                         GPHyper("rbf", np.array([0.5, 0.5]),
                                 noise=TRIGAMMA_HALF / LOG_PRIOR_SD ** 2),
                         beta=2.5, rho_max2=rho_max2, var_noise="log", rho_max2_model=flag)


def test_both_engines_cap_the_mean_noise_at_the_variance_gps_largest_median():
    X, ybar, s2, k = _flat_variance()
    ref = ReferenceRound(X, ybar, s2, k, _settings(True))
    fast = FastModel(_settings(True), None).round(X, ybar, s2, k)
    mu_v, _ = ref.gp_v.predict(X)
    want = model_cap(mu_v, (ref.mv, ref.sv), True)
    assert ref.rho2 == pytest.approx(want) and fast.rho2 == pytest.approx(want)
    np.testing.assert_allclose(fast.D, ref.D, rtol=1e-9)
    # per-run noise D k sf^2 never above the cap (eq. 19: min(UCB^var, rho_max^2) / k)
    assert np.all(ref.D * k * ref.sf ** 2 <= want * (1 + 1e-9))
    # the sample maximum is several times the truth (0.1); the model's cap is not
    assert s2.max() > 5 * 0.1 and 0.05 < want < 0.3
    off = ReferenceRound(X, ybar, s2, k, _settings(False))
    assert off.rho2 == pytest.approx(s2.max())
    given = ReferenceRound(X, ybar, s2, k, _settings(True, rho_max2=2.0))
    assert given.rho2 == 2.0


def test_an_outlying_sample_variance_brings_back_the_sample_maximum():
    X, ybar, s2, k = _flat_variance()
    ybar, s2 = ybar.copy(), s2.copy()
    ybar[7], s2[7] = -5e5, 5e11  # one seed of a pair diverged to -1e6
    for engine in ("ref", "fast"):
        rm = (ReferenceRound(X, ybar, s2, k, _settings(True)) if engine == "ref"
              else FastModel(_settings(True), None).round(X, ybar, s2, k))
        assert rm.rho2 == 5e11  # the sample maximum, as without the option
        mu_v = rm.gp_v.predict(X)[0] if engine == "ref" else rm.mu_vX
        assert 5e11 > MODEL_CAP_OUTLIER * model_cap(mu_v, (rm.mv, rm.sv), True)
    off = ReferenceRound(X, ybar, s2, k, _settings(False))
    np.testing.assert_allclose(ReferenceRound(X, ybar, s2, k, _settings(True)).D, off.D)


SPACE = {"lr": ("log", 1e-5, 1e-1), "batch": ("int", 16, 256)}


def test_the_option_is_keyed_by_the_space_and_the_variance_model():
    # since session 49 the means' spread caps eq. 19 by default on a continuous space
    # (test_spread_cap.py); with that cap off the model's is the default there
    assert erahbo.Optimizer(SPACE, budget=40, seed=1).options.rho_max2_model is False
    assert erahbo.Optimizer(SPACE, budget=40, seed=1,
                            rho_max2_spread=0).options.rho_max2_model is True
    from conftest import table3
    assert erahbo.Optimizer(table3(50, seed=3), budget=40, seed=1).options.rho_max2_model is False
    for o in (erahbo.Optimizer(SPACE, preset="paper", budget=400, seed=1),
              erahbo.Optimizer(SPACE, method="rahbo", k=2, budget=40, seed=1),
              erahbo.Optimizer(SPACE, budget=40, seed=1, var_noise="fitted"),
              erahbo.Optimizer(SPACE, budget=40, seed=1, risk="cvar")):
        assert o.options.rho_max2_model is False
    assert erahbo.Optimizer(table3(50, seed=3), budget=40, seed=1,
                            rho_max2_model=True).options.rho_max2_model is True
    with pytest.raises(ValueError, match="rho_max2_model"):
        erahbo.Optimizer(SPACE, budget=40, seed=1, rho_max2_model="yes")
