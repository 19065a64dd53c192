"""The replicate-or-explore lookahead (issue 37; :mod:`erahbo.gp.lookahead`,
:func:`erahbo.optimizer.replicate.lookahead_replicate`).

Rules checked:

* eq. (IMSPE): the reduction one more observation brings is the fall of the integrated
  posterior variance, which scikit-learn's GaussianProcessRegressor (the oracle) computes by
  refitting with the observation added, for both kernels;
* risk-neutral, the measure's reduction is the mean GP's alone (the variance GP's weight
  ``d rho / d rho^2`` is 0);
* under MV the variance GP's term grows with ``alpha^2`` and counts only for a replicate (a new
  configuration's one seed tells the variance GP nothing): once the lookahead replicates at
  some ``alpha``, it replicates at every larger one, and at a large ``alpha`` it replicates;
* a proposal farther than the radius from every open configuration stands, and a closed one
  (at its seed cap, pending) is never the replicate.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy.linalg import cho_solve
from sklearn.gaussian_process import GaussianProcessRegressor
from sklearn.gaussian_process.kernels import RBF, Matern

from erahbo.gp.exact import GPHyper, robust_cholesky
from erahbo.gp.fast import FastModel
from erahbo.gp.kernels import kernel
from erahbo.gp.lookahead import measure_reduction, posterior_cross, variance_reduction
from erahbo.gp.reference import ReferenceRound
from erahbo.gp.round import RoundSettings
from erahbo.gp.variance_noise import TRIGAMMA_HALF
from erahbo.optimizer.replicate import lookahead_replicate
from erahbo.risk import MeanVariance


def _oracle_variance(X, noise, ls, kind, R):
    """Posterior variances at ``R`` by scikit-learn (unit prior variance, fixed kernel)."""
    k = RBF(length_scale=ls) if kind == "rbf" else Matern(length_scale=ls, nu=2.5)
    gp = GaussianProcessRegressor(k, alpha=noise, optimizer=None, normalize_y=False)
    gp.fit(X, np.zeros(len(X)))
    return gp.predict(R, return_std=True)[1] ** 2


@pytest.mark.parametrize("kind", ["rbf", "matern52"])
def test_reduction_is_the_fall_of_the_integrated_posterior_variance(kind):
    """Rule: eq. (IMSPE) equals the integrated posterior variance before one more
    observation at the candidate less after it (the oracle refits with it)."""
    rng = np.random.default_rng(0)
    X = rng.random((12, 2))
    noise = rng.uniform(0.01, 0.5, 12)
    ls = np.array([0.3, 0.5])
    R = rng.random((40, 2))
    C = np.vstack([rng.random((2, 2)), X[3]])  # two new points and a replicate of row 3
    new_noise = np.array([0.2, 0.05, 1.0])
    w = np.full(len(R), 1.0 / len(R))
    L, _ = robust_cholesky(kernel(X, X, ls, kind) + np.diag(noise))
    cov, var = posterior_cross(lambda B: cho_solve((L, True), B), X, ls, kind, R, C)
    got = variance_reduction(cov, var, new_noise, w)
    before = _oracle_variance(X, noise, ls, kind, R)
    for c in range(len(C)):
        after = _oracle_variance(np.vstack([X, C[c]]), np.append(noise, new_noise[c]), ls, kind,
                                 R)
        assert got[c] == pytest.approx(w @ (before - after), rel=1e-6, abs=1e-12)
    assert variance_reduction(cov, var, np.full(3, np.inf), w).tolist() == [0.0, 0.0, 0.0]


def _round(k1_row: int = 5):
    """A round on 2-D data: replicated configurations and one one-seed row ``k1_row``."""
    rng = np.random.default_rng(3)
    X = rng.random((10, 2))
    k = np.full(10, 4.0)
    k[k1_row] = 1.0
    rho2 = 0.05 + 0.3 * X[:, 1]
    s2 = np.where(k > 1, rho2 * rng.chisquare(3, 10) / 3.0, 0.0)
    ybar = np.sin(4 * X[:, 0]) + np.sqrt(rho2 / k) * rng.standard_normal(10)
    s = RoundSettings(GPHyper("rbf", np.array([0.3, 0.4])),
                      GPHyper("rbf", np.array([0.5, 0.5]), noise=TRIGAMMA_HALF), beta=2.5,
                      sigma0_2=0.1, var_noise="log")
    return X, FastModel(s).round(X, ybar, s2, k)


def test_risk_neutral_reduction_is_the_mean_gps_alone():
    """Rule: with ``alpha = 0`` the variance GP's term weighs nothing."""
    X, rm = _round()
    R = np.random.default_rng(1).random((64, 2))
    C = np.vstack([[0.4, 0.6], X[2]])
    f_noise = np.array([0.3, 0.1])
    got = measure_reduction(rm, X, C, f_noise, np.array([0.0, 0.2]), R, MeanVariance(0.0))
    cov, var = posterior_cross(rm.solve_f, X, rm.settings.hyper_f.lengthscales, "rbf", R, C)
    want = variance_reduction(cov, var, f_noise, np.full(64, rm.sf**2 / 64))
    np.testing.assert_allclose(got, want, rtol=1e-12)


def test_once_the_lookahead_replicates_it_does_at_every_larger_alpha():
    """Rule: the variance GP's term, ``alpha^2`` times a non-negative integral, counts only for
    a replicate; so the decision is monotone in ``alpha`` and replicates when ``alpha`` is
    large (the one-seed neighbour's second seed is its first sample variance)."""
    X, rm = _round(k1_row=5)
    u = X[5] + np.array([0.09, 0.0])  # 0.3 lengthscales from a one-seed row, 0.2 from another
    decisions = [lookahead_replicate(rm, X, u, 0.5, MeanVariance(a),
                                     np.random.default_rng(0))
                 for a in (0.0, 0.1, 1.0, 10.0, 100.0, 1e4)]
    assert decisions[0] is None  # risk-neutral here the proposal teaches the mean GP more
    first = next(i for i, d in enumerate(decisions) if d is not None)
    assert all(d is not None for d in decisions[first:])


def test_far_or_closed_configurations_are_never_replicated():
    """Rule: beyond the radius the proposal stands; a closed row is never the replicate."""
    X, rm = _round()
    far = np.array([5.0, 5.0])  # outside the cube: many lengthscales from every row
    rng = np.random.default_rng(0)
    assert lookahead_replicate(rm, X, far, 0.5, MeanVariance(1.0), rng) is None
    u = X[2].copy()
    closed = np.zeros(len(X), dtype=bool)
    closed[2] = True
    j = lookahead_replicate(rm, X, u, 0.5, MeanVariance(1e4), rng, closed)
    assert j != 2
    assert lookahead_replicate(rm, X, u, 0.0, MeanVariance(1e4), rng) is None


def test_both_engines_solve_with_their_own_factors_alike():
    """Rule: the fast and the reference rounds give the same ``K^{-1} B`` for both GPs, so
    the lookahead decides alike on either engine."""
    X, fast = _round()
    r = fast.settings
    ybar, s2, k = fast._ybar, fast._s2, fast.k
    ref = ReferenceRound(X, ybar, s2, k, r)
    B = np.random.default_rng(2).random((len(X), 3))
    np.testing.assert_allclose(fast.solve_f(B), ref.solve_f(B), rtol=1e-8, atol=1e-10)
    np.testing.assert_allclose(fast.solve_v(B), ref.solve_v(B), rtol=1e-8, atol=1e-10)
    u = X[5] + np.array([0.09, 0.0])
    for a in (0.0, 1.0):
        assert (lookahead_replicate(fast, X, u, 0.5, MeanVariance(a), np.random.default_rng(0))
                == lookahead_replicate(ref, X, u, 0.5, MeanVariance(a),
                                       np.random.default_rng(0)))
