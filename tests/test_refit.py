"""A refit of the GPs' hyperparameters replaces the ones in use only where the data favour it
(``refit_evidence``, :mod:`erahbo.optimizer.refit`, :func:`erahbo.gp.fit.kept_hyper`)."""

from __future__ import annotations

import math

import numpy as np
import pytest

import erahbo
from erahbo.gp.exact import GPHyper
from erahbo.gp.fit import fit_map, kept_hyper, log_marginal_likelihood
from erahbo.gp.prior import FLAT_LENGTHSCALE
from erahbo.optimizer.options import Options


def _wiggle() -> tuple[np.ndarray, np.ndarray]:
    """20 points of a function that turns three times over [0, 1], standardized."""
    X = np.linspace(0.0, 1.0, 20)[:, None]
    y = np.sin(9.0 * X[:, 0])
    return X, (y - y.mean()) / y.std()


def test_a_refit_replaces_lengthscales_the_data_contradict():
    # Rule: the new MAP is used when its log posterior beats the old hyperparameters' on the
    # same data by at least `evidence` nats; a lengthscale of 3 cannot follow three turns.
    X, y = _wiggle()
    noise = np.full(len(y), 1e-2)
    new = fit_map(X, y, fixed_noise=noise, seed=0)
    old = GPHyper(kind="rbf", lengthscales=np.array([3.0]), noise=None, log_posterior=0.0)
    lp_old = log_marginal_likelihood(np.log([3.0]), X, y, "rbf", noise)[0]
    assert new.log_posterior - lp_old > 3.0  # the data's verdict, far above the threshold
    assert kept_hyper(new, old, 3.0, X, y, noise) is new


def test_a_refit_that_gains_less_than_the_evidence_keeps_the_hyperparameters_in_use():
    # Rule: a gain below `evidence` keeps the old lengthscales, with their log posterior on
    # today's data; evidence 0 (the paper preset, old journals) always takes the refit.
    X, y = _wiggle()
    noise = np.full(len(y), 1e-2)
    new = fit_map(X, y, fixed_noise=noise, seed=0)
    near = float(new.lengthscales[0]) * 1.05  # nearly as good as the MAP
    old = GPHyper(kind="rbf", lengthscales=np.array([near]), noise=None, log_posterior=0.0)
    lp_old = log_marginal_likelihood(np.log([near]), X, y, "rbf", noise)[0]
    gain = new.log_posterior - lp_old
    assert 0.0 <= gain < 3.0
    kept = kept_hyper(new, old, 3.0, X, y, noise)
    assert kept.lengthscales[0] == pytest.approx(near)
    assert kept.log_posterior == pytest.approx(lp_old)
    assert kept_hyper(new, old, 0.0, X, y, noise) is new
    assert kept_hyper(new, None, 3.0, X, y, noise) is new  # the first fit: nothing to keep


def test_a_refit_that_sees_no_input_that_matters_keeps_the_hyperparameters_in_use():
    # Rule: a refit whose every lengthscale exceeds FLAT_LENGTHSCALE models a constant and is
    # not used, however much it gains; a learn-or-fail study: 22 runs at the failure level
    # (a small noise), two that learned (a large one), on a 3-d unit cube.
    X = (np.arange(24)[:, None] * np.array([0.37, 0.61, 0.83]) + 0.05) % 1.0
    y = np.zeros(24)
    y[[5, 17]] = 1.0
    y = (y - y.mean()) / y.std()
    noise = np.where(y > 0, 20.0, 0.01)
    new = fit_map(X, y, fixed_noise=noise, seed=0)
    assert new.lengthscales.min() > FLAT_LENGTHSCALE  # the data say: a constant
    old = GPHyper(kind="rbf", lengthscales=np.full(3, 0.7), noise=None, log_posterior=0.0)
    lp_old = log_marginal_likelihood(np.log(old.lengthscales), X, y, "rbf", noise)[0]
    assert new.log_posterior - lp_old > 3.0  # it would pass the evidence test
    kept = kept_hyper(new, old, 3.0, X, y, noise)
    assert np.allclose(kept.lengthscales, 0.7)
    assert kept.log_posterior == pytest.approx(lp_old)
    assert kept_hyper(new, old, 0.0, X, y, noise) is new  # a plain refit takes it


def test_a_learned_noise_is_kept_with_its_lengthscales():
    # Rule: where the fit learns the noise (the variance GP under "fitted"), it is one of the
    # hyperparameters compared and kept.
    X, y = _wiggle()
    new = fit_map(X, y, fixed_noise=None, seed=0)
    old = GPHyper(kind="rbf", lengthscales=new.lengthscales * 1.02,
                  noise=float(new.noise) * 1.02, log_posterior=0.0)
    kept = kept_hyper(new, old, 3.0, X, y, None)
    assert kept.noise == pytest.approx(old.noise)
    theta = np.append(np.log(old.lengthscales), math.log(old.noise))
    assert kept.log_posterior == pytest.approx(log_marginal_likelihood(theta, X, y, "rbf",
                                                                       None)[0])


def test_refit_evidence_is_erahbos_default_and_a_plain_refit_elsewhere():
    assert Options().refit_evidence == 3.0
    assert Options(preset="paper").refit_evidence == 0.0
    assert Options(method="rahbo").refit_evidence == 0.0
    with pytest.raises(ValueError, match=r"refit_evidence=-1 must be >= 0"):
        Options(refit_evidence=-1)
    with pytest.raises(ValueError, match="never refits them; give refit_growth"):
        Options(refit_evidence=5.0, refit_growth=0, refit_every=0)
    # the preset's value, as a journal's settings name it, passes (it changes nothing)
    assert Options(refit_evidence=3.0).refit_evidence == 3.0


def test_a_study_keeps_its_first_fit_where_a_refit_adds_little_and_takes_it_where_it_does():
    # Rule, in a study: with refit_evidence a refit that moves a lengthscale a little (the
    # first fit already follows the function) keeps the one in use, and a refit of a function
    # the first fit could not see (zero at the initial design's points) replaces it; with 0
    # every refit replaces them.
    space = {"x": ("float", 0.0, 1.0)}

    def seen(objective, evidence, **design):
        opt = erahbo.Optimizer(space, "rahbo", budget=60, k=2, refit_growth=2.0,
                               refit_evidence=evidence, seed=3, raw_samples=64, n_polish=1,
                               **design)
        out = []
        while (trial := opt.ask()) is not None:
            opt.tell(trial, [objective(trial.config, s) for s in trial.seeds])
            st = opt.model_settings
            if st is not None and (not out or st is not out[-1]):
                out.append(st)
        assert len(out) == 3  # fits on 5, 10 and 20 configurations
        return [float(st.hyper_f.lengthscales[0]) for st in out]

    def seen_early(c, s):  # three turns; a Sobol design of 5 shows them
        return math.sin(9.0 * c["x"]) + 0.01 * ((s * 7919) % 13)

    plain = seen(seen_early, 0.0, n_init=5)
    assert len(set(plain)) == 3  # each refit moved the mean GP's lengthscale ...
    assert max(plain) < 1.2 * min(plain)  # ... by a little
    assert len(set(seen(seen_early, 3.0, n_init=5))) == 1  # kept

    def hidden(c, s):  # four periods; zero at the initial design's points
        return math.sin(8.0 * math.pi * c["x"]) + 0.01 * ((s * 7919) % 13)

    grid = [{"x": x} for x in (0.0, 0.25, 0.5, 0.75, 1.0)]
    tested = seen(hidden, 3.0, initial_design=grid)
    assert tested[-1] < 0.5 * tested[0]  # the refits took a far shorter lengthscale
