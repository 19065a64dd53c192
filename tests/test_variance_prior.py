"""The variance GP's noise prior (erahbo.optimizer.variance_prior): its loc reaches the MAP fit
of the variance GP, and only that fit."""

from __future__ import annotations

import numpy as np

import erahbo
from erahbo.gp import fit_hyperparameters


def _pure_sampling_noise(n: int = 5, k: int = 2):
    """``n`` configurations of a 2-D task whose spread is the same everywhere (rho^2 = 1):
    their sample variances of ``k`` seeds differ by sampling noise alone."""
    rng = np.random.default_rng(7)
    X = rng.random((n, 2))
    runs = rng.standard_normal((n, k)) + 3.0 * X[:, :1]  # the mean varies, the spread does not
    return X, runs.mean(1), runs.var(1, ddof=1), np.full(n, float(k))


def test_a_higher_prior_median_reads_more_of_the_sample_variances_as_noise():
    """Rule: the MAP noise of the variance GP grows with the prior's loc (the log-prior's
    gradient in the log noise grows with it); the mean GP's fit has a fixed noise (eq. 19)
    and no noise prior."""
    X, ybar, s2, k = _pure_sampling_noise()
    fits = {loc: fit_hyperparameters(X, ybar, s2, k, seed=0, var_noise_prior=loc)
            for loc in (-4.0, -1.0, 1.0)}
    noise = [fits[loc].hyper_v.noise for loc in (-4.0, -1.0, 1.0)]
    assert noise[0] < noise[1] < noise[2]
    assert fits[-4.0].hyper_f.noise is None  # the mean GP: fixed noise, no prior on it


def test_the_optimizer_fits_with_the_option_in_force():
    """The value in force reaches the fit (both presets' -4, also RAHBO's; a given -1 or -2.5):
    the same data gives the fit of ``fit_hyperparameters`` with that loc."""
    space = {"x0": ("float", 0.0, 1.0), "x1": ("float", 0.0, 1.0)}

    def run(**kw):
        opt = erahbo.Optimizer(space, budget=40, seed=3, **kw)
        rng = np.random.default_rng(0)
        t = opt.ask()
        while opt.model_settings is None:  # the first BO ask fits, on the initial design
            opt.tell(t, [float(t.config["x0"] + rng.standard_normal()) for _ in t.seeds])
            t = opt.ask()
        d = opt.data
        return opt.model_settings, fit_hyperparameters(
            d.U, d.ybar, d.s2, d.k, seed=opt.options.seed,
            var_noise_prior=opt.options.var_noise_prior,
            var_noise=opt.study_settings()["var_noise"])  # in force ("log" for ERAHBO)

    fitted = {"var_noise": "fitted"}  # a prior acts on a fitted noise only (chi2: refused)
    for kw, loc in (({}, -4.0), ({"preset": "paper", "k_init": 2}, -4.0),
                    ({"method": "rahbo", "k": 2}, -4.0),
                    ({"var_noise_prior": -1.0, **fitted}, -1.0),
                    ({"var_noise_prior": -2.5, **fitted}, -2.5)):
        got, expected = run(**kw)
        assert erahbo.Optimizer(space, budget=40, **kw).options.var_noise_prior == loc
        assert got.hyper_v.noise == expected.hyper_v.noise, kw
        np.testing.assert_array_equal(got.hyper_v.lengthscales, expected.hyper_v.lengthscales)
