"""Eq. 19's cap ``rho_max^2`` as a share of the sample means' spread (issue 37,
``rho_max2_spread``).

Rules checked:

* ``spread_cap`` is ``share * Var(ybar)`` over the evaluated configurations, so it scales with
  the square of the returns' units (scale-free share);
* under the option both engines set the round's ``rho2`` to it, agree on the mean GP's noise,
  and never give a run more noise than the cap (eq. 19: ``min(UCB^var, rho_max^2) / k``); it
  comes before ``rho_max2_model``; a given ``rho_max2`` is refused beside it;
* the hyperparameter fit reads the same cap: its mean GP is the one fitted with that value
  given as ``rho_max2``;
* ERAHBO's default on a continuous or mixed space with the log variance model is 0.3 (and the
  variance GP's cap then off); it is off (0) on a finite table, under the paper preset, for
  the fixed-k methods, with a fitted variance noise and where another cap is given; given by
  name it is kept, stored in the study settings and read back from a journal; a negative
  share, a non-number and a second cap are refused with the option's name.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import erahbo
from erahbo.gp import FastModel, ReferenceRound, RoundSettings
from erahbo.gp.exact import GPHyper
from erahbo.gp.fit import fit_hyperparameters
from erahbo.gp.round import spread_cap
from erahbo.gp.variance_noise import LOG_PRIOR_SD, TRIGAMMA_HALF
from erahbo.runtime.journal import Journal


def test_spread_cap_is_the_share_of_the_means_variance_and_scales_with_the_units():
    ybar = np.array([0.1, 0.4, -0.3, 0.8])
    assert spread_cap(ybar, 0.3) == pytest.approx(0.3 * float(np.var(ybar)))
    assert spread_cap(100.0 * ybar + 7.0, 0.3) == pytest.approx(1e4 * spread_cap(ybar, 0.3))


def _learn_or_fail(n: int = 40):
    """n configurations in [0, 1]^2 with 2 seeds each: a seed learns (return 1) with
    probability p(x) = x_0, else fails (0); the second input does nothing. Deterministic: the
    seeds are drawn from a fixed generator, so the data are the same on every machine."""
    rng = np.random.default_rng(11)
    X = rng.random((n, 2))
    runs = (rng.random((n, 2)) < X[:, :1]).astype(float)
    ybar = runs.mean(axis=1)
    s2 = runs.var(axis=1, ddof=1)
    return X, ybar, s2, np.full(n, 2.0)


def _settings(spread: float | None, model: bool = False,
              rho_max2: float | None = None) -> RoundSettings:
    return RoundSettings(GPHyper("rbf", np.array([0.3, 0.3])),
                         GPHyper("rbf", np.array([0.5, 0.5]),
                                 noise=TRIGAMMA_HALF / LOG_PRIOR_SD ** 2),
                         beta=2.5, rho_max2=rho_max2, var_noise="log", rho_max2_model=model,
                         rho_max2_spread=spread)


def test_both_engines_cap_the_mean_noise_at_the_spread_share():
    X, ybar, s2, k = _learn_or_fail()
    want = 0.3 * float(np.var(ybar))
    ref = ReferenceRound(X, ybar, s2, k, _settings(0.3, model=True))
    fast = FastModel(_settings(0.3, model=True), None).round(X, ybar, s2, k)
    assert ref.rho2 == pytest.approx(want) and fast.rho2 == pytest.approx(want)
    np.testing.assert_allclose(fast.D, ref.D, rtol=1e-9)
    assert np.all(ref.D * k * ref.sf ** 2 <= want * (1 + 1e-9))
    # the largest sample variance (0.5: one seed learned, one failed) is above the cap
    assert s2.max() > want
    off = ReferenceRound(X, ybar, s2, k, _settings(None))
    assert off.rho2 == pytest.approx(s2.max())
    given = ReferenceRound(X, ybar, s2, k, _settings(0.3, rho_max2=2.0))
    assert given.rho2 == 2.0


def test_the_fit_uses_the_spread_share_as_eq_19s_cap():
    X, ybar, s2, k = _learn_or_fail()
    common = dict(kind="rbf", beta=2.5, seed=0, var_noise="log")
    capped = fit_hyperparameters(X, ybar, s2, k, rho_max2_spread=0.3, **common)
    fixed = fit_hyperparameters(X, ybar, s2, k, rho_max2=spread_cap(ybar, 0.3), **common)
    assert capped.rho_max2_spread == 0.3 and capped.rho_max2 is None
    # the mean GP is fitted under the same noise as with that cap given as rho_max2
    np.testing.assert_allclose(capped.hyper_f.lengthscales, fixed.hyper_f.lengthscales)
    plain = fit_hyperparameters(X, ybar, s2, k, **common)
    assert plain.rho_max2_spread == 0.0  # off has one spelling below the options: 0


SPACE = {"lr": ("log", 1e-5, 1e-1), "batch": ("int", 16, 256)}


def test_the_option_is_keyed_by_the_space_and_is_kept_in_the_settings(tmp_path):
    from conftest import table3
    opt = erahbo.Optimizer(SPACE, budget=40, seed=1)
    assert opt.options.rho_max2_spread == 0.3 and opt.options.rho_max2_model is False
    assert erahbo.Optimizer(table3(50, seed=3), budget=40,
                            seed=1).options.rho_max2_spread == 0.0
    for o in (erahbo.Optimizer(SPACE, preset="paper", budget=400, seed=1),
              erahbo.Optimizer(SPACE, method="rahbo", k=2, budget=40, seed=1),
              erahbo.Optimizer(SPACE, budget=40, seed=1, var_noise="fitted"),
              erahbo.Optimizer(SPACE, budget=40, seed=1, risk="cvar"),
              erahbo.Optimizer(SPACE, budget=40, seed=1, rho_max2=0.5),
              erahbo.Optimizer(SPACE, budget=40, seed=1, rho_max2_model=True),
              erahbo.Optimizer(SPACE, budget=40, seed=1, rho_max2_spread=0)):
        assert o.options.rho_max2_spread == 0.0  # off: another cap, or not measured there
    for space in (SPACE, table3(50, seed=3)):
        opt = erahbo.Optimizer(space, budget=40, seed=1, rho_max2_spread=0.5)
        assert opt.options.rho_max2_spread == 0.5
    journal = tmp_path / "study.jsonl"

    def objective(cfg, seed):
        return -((math.log10(cfg["lr"]) + 3.0) ** 2) + 0.1 * ((seed * 7) % 5)

    first = erahbo.optimize(objective, SPACE, budget=16, seed=2, rho_max2_spread=0.5,
                            journal=str(journal))
    with Journal.open(journal) as j:
        assert j.settings["rho_max2_spread"] == 0.5
    resumed = erahbo.optimize(objective, SPACE, budget=16, seed=2, rho_max2_spread=0.5,
                              journal=str(journal))
    # a finished study read back from its journal: the same runs and recommendation
    assert len(resumed.history) == len(first.history)
    assert resumed.incumbent == first.incumbent


@pytest.mark.parametrize("bad, match", [
    (dict(rho_max2_spread=-0.1), "rho_max2_spread=-0.1 must be >= 0"),
    (dict(rho_max2_spread=-1), "rho_max2_spread=-1 must be >= 0"),
    (dict(rho_max2_spread="wide"), "rho_max2_spread must be a number"),
    (dict(rho_max2_spread=0.3, rho_max2=1.0), "give one of them"),
    (dict(rho_max2_spread=0.3, rho_max2_model=True), "give one of them"),
])
def test_bad_values_are_refused_with_the_options_name(bad, match):
    with pytest.raises((TypeError, ValueError), match=match):
        erahbo.Optimizer(SPACE, budget=40, seed=1, **bad)


def test_a_journal_from_before_the_default_resumes_with_the_cap_off():
    """A continuous study journaled before session 49 has no ``rho_max2_spread`` (or None,
    written by the commit that added the option off) and ``rho_max2_model`` True: its settings
    read back as the cap off, and those settings rebuild its options."""
    from erahbo.optimizer.options import normalize_settings
    from erahbo.study.rebuild import study_options

    today = erahbo.Optimizer(SPACE, budget=40, seed=1, rho_max2_spread=0).study_settings()
    assert today["rho_max2_spread"] == 0.0 and today["rho_max2_model"] is True
    for stored in ({k: v for k, v in today.items() if k != "rho_max2_spread"},
                   {**today, "rho_max2_spread": None}):
        assert normalize_settings(stored)["rho_max2_spread"] == 0.0
        opts = erahbo.Optimizer(SPACE, **study_options(stored)).options
        assert opts.rho_max2_spread == 0.0 and opts.rho_max2_model is True
