"""Long studies: the pruned continuous argmax decides exactly as scoring every raw point.

Rules checked here:

* the bounds of :mod:`erahbo.gp.screen` are upper bounds of eq. 8 at every point and level;
* :func:`erahbo.gp.screen.top_points` scores a subset that holds the best ``q`` distinct points
  of the exhaustive scoring, with their values, and every point it leaves out scores below the
  ``q``-th best distinct value;
* :func:`erahbo.gp.argmax.continuous_argmax` with pruning returns the same point as with
  ``prune=False`` (the same starts, so the same polish), for every weight, with forbidden
  points, duplicates, fewer allowed points than starts, a mixed space and a kriging-believer
  round;
* the fast engine's pruned starts are the reference engine's exhaustive ones;
* the polishes run in lockstep (:func:`erahbo.gp.argmax.polish_all`) end where each ends alone,
  bit for bit: :meth:`erahbo.gp.fast.FastRound.acquisition_grads` gives each point the value
  and gradient of ``acquisition_grad``.
"""

from __future__ import annotations

import numpy as np
import pytest

from erahbo.gp import FastModel, GPHyper, ReferenceRound, RoundSettings, believer_round
from erahbo.gp.argmax import _known_rows, continuous_argmax
from erahbo.gp.screen import _Bounds, top_points
from erahbo.space import SearchSpace

D = 4
SPACE = SearchSpace({f"x{i}": ("float", 0.0, 1.0) for i in range(D)})


def _state(n: int, seed: int, kind: str = "rbf", dim: int = D, tiny_noise: bool = False):
    """A round's data: ``n`` configurations, clustered late as in a converging study."""
    rng = np.random.default_rng(seed)
    center = rng.random(dim)
    spread = 0.5 * np.exp(-4.0 * np.arange(n) / max(n, 1))[:, None]
    X = np.clip(center + spread * rng.standard_normal((n, dim)), 0.0, 1.0)
    X[: min(n, 8)] = rng.random((min(n, 8), dim))
    k = rng.integers(2, 12, size=n).astype(float)
    f = np.sin(4 * X[:, 0]) + X[:, 1] - (X[:, -1] - 0.5) ** 2
    rho2 = 0.05 + 0.4 * X[:, 1] ** 2
    ybar = f + np.sqrt(rho2 / k) * rng.standard_normal(n)
    s2 = (1e-9 if tiny_noise else 1.0) * rho2 * rng.chisquare(k - 1) / (k - 1)
    s = RoundSettings(GPHyper(kind, rng.uniform(0.2, 0.9, dim)),
                      GPHyper(kind, rng.uniform(0.5, 2.0, dim), noise=0.3), beta=2.5)
    return X, ybar, s2, k, s


def _qth_distinct(U, vals, q):
    order = np.argsort(-vals, kind="stable")
    seen = []
    for i in order:
        if not any(np.array_equal(U[i], u) for u in seen):
            seen.append(U[i])
            if len(seen) == q:
                return vals[i], order
    return -np.inf, order


@pytest.mark.parametrize("kind", ["rbf", "matern52"])
@pytest.mark.parametrize("weight", [0.0, 1.0, 4.0, -0.5])
def test_bounds_are_upper_bounds_at_every_level(kind, weight):
    X, ybar, s2, k, s = _state(150, seed=3, kind=kind)
    rm = FastModel(s).round(X, ybar, s2, k)
    U = np.vstack([SPACE.sobol_unit(64, 1), X])
    exact = rm.acquisition(U, weight)
    b = _Bounds(rm, U, _known_rows(rm, U, 64), weight)
    idx = np.arange(len(U))
    for level in (1, 7, 40, 150):
        ub = b.at(idx, level)
        assert np.all(ub >= exact), (level, float(np.min(ub - exact)))
    # the last level with few rows in play (a solve per row; with most: var_f_rows)
    few = np.concatenate([np.arange(64), 64 + np.arange(0, 150, 4)])
    b = _Bounds(rm, U, _known_rows(rm, U, 64), weight)
    assert np.all(b.at(few, 150) >= exact[few])


@pytest.mark.parametrize("seed", range(6))
def test_top_points_hold_the_best_distinct_points(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.choice([5, 40, 200]))
    X, ybar, s2, k, s = _state(n, seed=seed, tiny_noise=seed == 5)
    rm = FastModel(s).round(X, ybar, s2, k)
    U = np.vstack([SPACE.sobol_unit(128, seed), X, X[:3]])  # three duplicates
    known = _known_rows(rm, U[:-3], 128)
    known = np.concatenate([known, np.full(3, -1)])
    allowed = rng.random(len(U)) < 0.9
    weight = float(rng.choice([0.0, 1.0, 3.0]))
    q = int(rng.choice([1, 5]))
    full = np.where(allowed, rm.acquisition(U, weight), -np.inf)
    idx, vals, _ = top_points(rm, U, weight, q, allowed, known, first_level=8)
    assert np.all(allowed[idx])
    np.testing.assert_allclose(vals, full[idx], rtol=1e-10, atol=1e-12)
    tau, order = _qth_distinct(U, full, q)
    best = order[full[order] >= tau]
    assert set(best.tolist()) <= set(idx.tolist())  # the best q distinct points are scored
    left = np.setdiff1d(np.flatnonzero(allowed), idx)
    assert np.all(full[left] < tau)
    if n >= 40:
        assert idx.size < allowed.sum() // 2  # and most points are not


def _argmax_pair(rm, X, space, weight, forbidden=None, n_polish=5, raw=128, seed=0):
    kw = dict(seed=seed, raw_samples=raw, n_polish=n_polish, forbidden=forbidden)
    return (continuous_argmax(rm, space, weight, X, prune=True, **kw),
            continuous_argmax(rm, space, weight, X, prune=False, **kw))


@pytest.mark.parametrize("weight", [0.0, 1.0, 5.0])
@pytest.mark.parametrize("n", [3, 60, 300])
def test_pruned_continuous_argmax_equals_exhaustive(weight, n):
    X, ybar, s2, k, s = _state(n, seed=n)
    rm = FastModel(s).round(X, ybar, s2, k)
    for n_polish in (0, 1, 5):
        (u1, v1), (u2, v2) = _argmax_pair(rm, X, SPACE, weight, n_polish=n_polish)
        np.testing.assert_array_equal(u1, u2)
        assert v1 == pytest.approx(v2, rel=1e-12, abs=1e-12)


def test_forbidden_points_and_fewer_allowed_than_starts():
    X, ybar, s2, k, s = _state(80, seed=11)
    rm = FastModel(s).round(X, ybar, s2, k)
    U = np.vstack([SPACE.sobol_unit(16, 0), X])
    full = rm.acquisition(U, 1.0)
    best = U[np.argsort(-full)[:3]]  # the three best raw points are forbidden
    (u1, v1), (u2, v2) = _argmax_pair(rm, X, SPACE, 1.0, forbidden=best, raw=16)
    np.testing.assert_array_equal(u1, u2)
    assert v1 == pytest.approx(v2, rel=1e-12)
    assert not any(np.array_equal(u1, b) for b in best)
    # all but two points forbidden: the starts run past the allowed points
    keep = [0, 20]
    forbidden = np.delete(U, keep, axis=0)
    (u1, v1), (u2, v2) = _argmax_pair(rm, X, SPACE, 1.0, forbidden=forbidden, raw=16)
    np.testing.assert_array_equal(u1, u2)
    assert v1 == pytest.approx(v2, rel=1e-12)


def test_mixed_space_and_believer_round():
    space = SearchSpace({"a": ("float", 0.0, 1.0), "b": ("log", 1e-3, 1.0),
                         "c": ("int", 1, 6), "d": ("cat", ["x", "y", "z"])})
    rng = np.random.default_rng(2)
    X = space.sample_unit(120, rng)
    dim = X.shape[1]
    _, ybar, s2, k, s = _state(120, seed=2, dim=dim)
    fm = FastModel(s)
    rm = fm.round(X, ybar, s2, k)
    (u1, v1), (u2, v2) = _argmax_pair(rm, X, space, 1.0)
    np.testing.assert_array_equal(u1, u2)
    assert v1 == pytest.approx(v2, rel=1e-12)
    # two pending configurations: the believer round has them as its last rows
    pending = space.sample_unit(2, np.random.default_rng(9))
    br = believer_round(rm, X, ybar, s2, k, pending, np.array([2, 2]), s, fast=fm)
    assert br.n == 122 and (_known_rows(br, np.vstack([X[:1], X]), 1)[1:] >= 0).all()
    (u1, v1), (u2, v2) = _argmax_pair(br, X, space, 1.0, forbidden=pending)
    np.testing.assert_array_equal(u1, u2)
    assert v1 == pytest.approx(v2, rel=1e-12)


def test_fast_pruned_starts_are_the_reference_engines():
    X, ybar, s2, k, s = _state(120, seed=21)
    fast = FastModel(s).round(X, ybar, s2, k)
    ref = ReferenceRound(X, ybar, s2, k, s)
    U = np.vstack([SPACE.sobol_unit(256, 4), X])
    exact = ref.acquisition(U, 1.0)
    top = np.argsort(-exact, kind="stable")[:6]
    assert np.all(np.diff(exact[top]) < -1e-8)  # the case: no near-ties among the best
    idx, vals, _ = top_points(fast, U, 1.0, 5, np.ones(len(U), bool),
                              _known_rows(fast, U, 256), first_level=16)
    mine = idx[np.argsort(-vals, kind="stable")[:5]]
    np.testing.assert_array_equal(mine, top[:5])
    np.testing.assert_allclose(np.sort(vals)[::-1][:5], exact[top[:5]], rtol=1e-9)


def test_polish_gradient_uses_the_variance_factor_of_the_data():
    """The polish's contiguous copy of ``Lv`` gives the gradient of the uncopied factor."""
    from erahbo.gp.exact import posterior_grad

    X, ybar, s2, k, s = _state(90, seed=5)
    fm = FastModel(s)
    rm = fm.round(X, ybar, s2, k)
    for u in SPACE.sobol_unit(4, 2):
        got = rm._grads(u)[1]
        want = posterior_grad(u, X, fm.Lv[:90, :90], rm.av, s.hyper_v.lengthscales, "rbf")
        for a, b in zip(got, want, strict=True):
            np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-14)
    fm.sync(np.vstack([X, SPACE.sobol_unit(3, 7)]))  # later appends leave the round alone
    np.testing.assert_array_equal(rm._grads(X[0])[1][2], rm._grads(X[0])[1][2])
    assert rm._Lv.shape == (90, 90)


@pytest.mark.parametrize("order", ["F", "C", "view"])
def test_gradient_solves_are_solve_triangulars(order):
    """The polish's lean triangular solve makes the LAPACK call solve_triangular makes."""
    from scipy.linalg import solve_triangular

    from erahbo.gp.exact import _trsv

    rng = np.random.default_rng(4)
    n = 60
    A = rng.standard_normal((n, n))
    L = np.linalg.cholesky(A @ A.T + n * np.eye(n))
    if order == "F":
        L = np.asfortranarray(L)
    elif order == "view":
        big = np.zeros((n + 7, n + 7))
        big[:n, :n] = L
        L = big[:n, :n]
    b = rng.standard_normal(n)
    for t in (False, True):
        want = solve_triangular(L, b, lower=True, trans="T" if t else "N", check_finite=False)
        np.testing.assert_array_equal(_trsv(L, b, t), want)


@pytest.mark.parametrize("weight", [0.0, 1.0])
def test_converged_study_with_near_ties(weight):
    """Many evaluated configurations within 1e-6 of each other: values agree to ~1e-7, the
    pruned scoring still returns the exhaustive best points, starts and result."""
    X, ybar, s2, k, s = _state(60, seed=8)
    rng = np.random.default_rng(8)
    near = np.clip(X[-1] + 1e-6 * rng.standard_normal((140, D)), 0, 1)
    X = np.vstack([X, near])
    f = np.sin(4 * X[:, 0]) + X[:, 1]
    k = np.full(len(X), 3.0)
    ybar = f + 0.01 * rng.standard_normal(len(X))
    s2 = np.full(len(X), 0.01) * rng.chisquare(2, len(X)) / 2
    rm = FastModel(s).round(X, ybar, s2, k)
    U = np.vstack([SPACE.sobol_unit(128, 3), X])
    full = rm.acquisition(U, weight)
    idx, vals, _ = top_points(rm, U, weight, 5, np.ones(len(U), bool),
                              _known_rows(rm, U, 128), first_level=16)
    tau, order = _qth_distinct(U, full, 5)
    assert set(order[full[order] >= tau].tolist()) <= set(idx.tolist())
    np.testing.assert_allclose(vals, full[idx], rtol=1e-12)
    (u1, v1), (u2, v2) = _argmax_pair(rm, X, SPACE, weight)
    np.testing.assert_array_equal(u1, u2)
    assert v1 == pytest.approx(v2, rel=1e-12)


def test_grouped_gradients_are_the_gradients_of_each_point():
    X, ybar, s2, k, s = _state(90, seed=6, kind="matern52")
    rm = FastModel(s).round(X, ybar, s2, k)
    U = np.vstack([SPACE.sobol_unit(5, 3), X[:2], X[:1]])  # a data point twice
    got = rm.acquisition_grads(list(U), 1.5)
    for u, (val, grad) in zip(U, got, strict=True):
        want = rm.acquisition_grad(u, 1.5)
        assert val == want[0]
        np.testing.assert_array_equal(grad, want[1])
    assert rm._batch is None  # nothing left over for the next single-point call


@pytest.mark.parametrize("weight", [0.0, 1.0])
def test_lockstep_polishes_end_where_each_ends_alone(weight, monkeypatch):
    """Rule: running the ascents together changes no value, gradient or step of any."""
    import erahbo.gp.argmax as argmax

    X, ybar, s2, k, s = _state(120, seed=4)
    rm = FastModel(s).round(X, ybar, s2, k)
    starts = list(np.vstack([SPACE.sobol_unit(4, 5), X[:1]]))
    mask = np.ones(D, dtype=bool)
    alone = [argmax.polish(rm, u, mask, weight) for u in starts]
    monkeypatch.setattr(argmax, "LOCKSTEP_ROWS", 0)
    calls = []
    grads = type(rm).acquisition_grads
    monkeypatch.setattr(type(rm), "acquisition_grads",
                        lambda self, pts, w: calls.append(len(pts)) or grads(self, pts, w))
    together = argmax.polish_all(rm, starts, mask, weight)
    assert calls and calls[0] == len(starts)  # they did run in lockstep
    for a, b in zip(alone, together, strict=True):
        np.testing.assert_array_equal(a, b)
    u1, v1 = continuous_argmax(rm, SPACE, weight, X, seed=2, raw_samples=64)
    monkeypatch.setattr(argmax, "LOCKSTEP_ROWS", 10**9)
    u2, v2 = continuous_argmax(rm, SPACE, weight, X, seed=2, raw_samples=64)
    np.testing.assert_array_equal(u1, u2)
    assert v1 == v2


def test_an_error_in_the_lockstep_gradients_ends_every_ascent(monkeypatch):
    import threading

    import erahbo.gp.argmax as argmax

    X, ybar, s2, k, s = _state(40, seed=9)
    rm = FastModel(s).round(X, ybar, s2, k)
    monkeypatch.setattr(argmax, "LOCKSTEP_ROWS", 0)
    n_calls = []

    def failing(self, pts, w):
        n_calls.append(1)
        if len(n_calls) == 3:
            raise np.linalg.LinAlgError("not positive definite")
        return [self.acquisition_grad(u, w) for u in pts]

    monkeypatch.setattr(type(rm), "acquisition_grads", failing)
    before = threading.active_count()
    with pytest.raises(np.linalg.LinAlgError, match="not positive definite"):
        argmax.polish_all(rm, list(SPACE.sobol_unit(3, 1)), np.ones(D, bool), 1.0)
    assert threading.active_count() == before  # no ascent left waiting
