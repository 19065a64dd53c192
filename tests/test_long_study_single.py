"""Long studies: the polish's single-precision stand-in (:mod:`erahbo.gp.single`).

Rules checked here:

* below :data:`erahbo.gp.argmax.SINGLE_ROWS` data rows the polish ascends on the round model
  itself, with L-BFGS-B's default stopping test: the argmax is the exact engine's, bit for bit;
* from ``SINGLE_ROWS`` rows on it ascends on a :class:`~erahbo.gp.single.SingleRound`, and the
  returned value is the round model's own acquisition at the returned point (the end points are
  scored exactly), at least the best exact value over the raw samples and the evaluated
  configurations, never at a forbidden point; also on a mixed space, a kriging-believer round
  and with one-seed rows;
* the stand-in gives the round's acquisition, less the constant of the two GPs'
  standardizations, and its gradient, up to single-precision rounding, for both kernels, a
  continuous round (a column-major mean factor, a row-major variance factor in a larger
  buffer) and a table round; a factor's memory order does not change its solves beyond that
  rounding;
* its grouped gradients are its single-point ones, bit for bit: the ascents in lockstep end
  where each ends alone.
"""

from __future__ import annotations

import numpy as np
import pytest

import erahbo.gp.argmax as argmax
from erahbo.gp import FastModel, GPHyper, RoundSettings
from erahbo.gp.single import _GP, POLISH_FTOL, SingleRound
from erahbo.space import SearchSpace

D = 4
SPACE = SearchSpace({f"x{i}": ("float", 0.0, 1.0) for i in range(D)})


def _state(n: int, seed: int, kind: str = "rbf"):
    """A round's data: ``n`` configurations, clustered late as in a converging study."""
    rng = np.random.default_rng(seed)
    center = rng.random(D)
    spread = 0.5 * np.exp(-4.0 * np.arange(n) / n)[:, None]
    X = np.clip(center + spread * rng.standard_normal((n, D)), 0.0, 1.0)
    X[:8] = rng.random((8, D))
    k = rng.integers(2, 12, size=n).astype(float)
    f = np.sin(4 * X[:, 0]) + X[:, 1] - (X[:, -1] - 0.5) ** 2
    rho2 = 0.05 + 0.4 * X[:, 1] ** 2
    ybar = f + np.sqrt(rho2 / k) * rng.standard_normal(n)
    s2 = rho2 * rng.chisquare(k - 1) / (k - 1)
    s = RoundSettings(GPHyper(kind, rng.uniform(0.2, 0.9, D)),
                      GPHyper(kind, rng.uniform(0.3, 2.0, D), noise=0.3), beta=2.5)
    return X, ybar, s2, k, s


def _spy(monkeypatch):
    """Record the model and the keywords each ``polish_all`` call gets, and its end points."""
    calls = []
    real = argmax.polish_all

    def spy(rm, starts, mask, weight, **kw):
        out = real(rm, starts, mask, weight, **kw)
        calls.append((rm, kw, np.asarray(out)))
        return out

    monkeypatch.setattr(argmax, "polish_all", spy)
    return calls


@pytest.mark.parametrize("weight", [0.0, 1.0])
def test_below_the_threshold_the_polish_is_the_rounds_own(weight, monkeypatch):
    X, ybar, s2, k, s = _state(120, seed=1)
    rm = FastModel(s).round(X, ybar, s2, k)
    assert rm.n < argmax.SINGLE_ROWS
    calls = _spy(monkeypatch)
    u1, v1 = argmax.continuous_argmax(rm, SPACE, weight, X, seed=3, raw_samples=64)
    assert calls[0][0] is rm and calls[0][1] == {}  # the round itself, default stopping test
    monkeypatch.setattr(argmax, "SINGLE_ROWS", 10**9)  # the stand-in never used
    u2, v2 = argmax.continuous_argmax(rm, SPACE, weight, X, seed=3, raw_samples=64)
    np.testing.assert_array_equal(u1, u2)
    assert v1 == v2


@pytest.mark.parametrize("kind", ["rbf", "matern52"])
@pytest.mark.parametrize("weight", [0.0, 1.0, 4.0])
def test_above_the_threshold_the_end_points_are_scored_exactly(kind, weight, monkeypatch):
    X, ybar, s2, k, s = _state(150, seed=2, kind=kind)
    rm = FastModel(s).round(X, ybar, s2, k)
    monkeypatch.setattr(argmax, "SINGLE_ROWS", 150)
    calls = _spy(monkeypatch)
    raw = 64
    u, v = argmax.continuous_argmax(rm, SPACE, weight, X, seed=4, raw_samples=raw)
    stand_in, kw, ends = calls[0]
    assert isinstance(stand_in, SingleRound) and kw == {"ftol": stand_in.ftol(weight)}
    assert 0 < kw["ftol"] <= POLISH_FTOL
    assert v == pytest.approx(float(rm.acquisition(u[None, :], weight)[0]), rel=1e-12, abs=1e-12)
    U = np.vstack([SPACE.sobol_unit(raw, 4), X])
    best_raw = float(rm.acquisition(U, weight).max())
    assert v >= best_raw - 1e-12 * (1.0 + abs(best_raw))
    assert v > best_raw or any(np.array_equal(u, p) for p in U)
    if v > best_raw:  # an end point won: it was scored by the round
        assert any(np.array_equal(u, p) for p in SPACE.project(ends))


def test_above_the_threshold_a_forbidden_point_is_never_returned(monkeypatch):
    X, ybar, s2, k, s = _state(150, seed=3)
    rm = FastModel(s).round(X, ybar, s2, k)
    monkeypatch.setattr(argmax, "SINGLE_ROWS", 0)
    u0, v0 = argmax.continuous_argmax(rm, SPACE, 1.0, X, seed=5, raw_samples=64)
    u1, v1 = argmax.continuous_argmax(rm, SPACE, 1.0, X, seed=5, raw_samples=64,
                                      forbidden=u0[None, :])
    assert not np.array_equal(u1, u0)
    assert v1 <= v0 and v1 == pytest.approx(float(rm.acquisition(u1[None, :], 1.0)[0]),
                                            rel=1e-12, abs=1e-12)


def _compare(rm, points, weight):
    single = SingleRound(rm)
    scale = rm.sf + abs(weight) * rm.sv
    offset = rm.mf - weight * rm.mv
    for u in points:
        val, grad = rm.acquisition_grad(u, weight)
        sval, sgrad = single.acquisition_grad(u, weight)
        assert sval == pytest.approx(val - offset, abs=1e-5 * scale)
        np.testing.assert_allclose(sgrad, grad, rtol=1e-3, atol=1e-4 * (scale + np.abs(grad).max()))


@pytest.mark.parametrize("kind", ["rbf", "matern52"])
@pytest.mark.parametrize("weight", [0.0, 1.0, 3.0])
def test_the_stand_in_is_the_round_up_to_single_precision(kind, weight):
    X, ybar, s2, k, s = _state(200, seed=6, kind=kind)
    fm = FastModel(s)
    rm = fm.round(X, ybar, s2, k)
    assert fm.cap > rm.n  # the variance factor is a row-major view into a larger buffer
    near = X[-3:] + 1e-3  # small posterior variances
    _compare(rm, np.vstack([SPACE.sobol_unit(6, 2), near]), weight)


def test_the_stand_in_of_a_table_round():
    X, ybar, s2, k, s = _state(100, seed=7)
    C = np.vstack([X, np.random.default_rng(7).random((50, D))])
    rm = FastModel(s, C).round(X, ybar, s2, k)  # keeps no Lv: its inverse is inverted
    _compare(rm, SPACE.sobol_unit(6, 3), 1.0)


def test_a_factors_memory_order_changes_only_rounding():
    rng = np.random.default_rng(8)
    n = 80
    X = rng.random((n, D))
    A = np.exp(-0.5 * ((X[:, None] - X[None]) ** 2 / 0.3**2).sum(-1)) + 0.01 * np.eye(n)
    L = np.linalg.cholesky(A)  # row-major
    big = np.zeros((n + 5, n + 5))
    big[:n, :n] = L
    alpha = rng.standard_normal(n)
    ls = np.full(D, 0.3)
    u = rng.random(D)
    got = [_GP(X / ls, ls, "rbf", M, alpha).grad(u)
           for M in (L, np.asfortranarray(L), big[:n, :n])]
    for other in got[1:]:
        for a, b in zip(got[0], other, strict=True):
            np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-6)


def test_the_stand_ins_lockstep_ascents_end_where_each_ends_alone(monkeypatch):
    """Rule: the stand-in's grouped gradients (GP by GP) are its single-point ones, bit for
    bit, so the polishes in lockstep end where each ends alone."""
    X, ybar, s2, k, s = _state(120, seed=9, kind="matern52")
    single = SingleRound(FastModel(s).round(X, ybar, s2, k))
    U = np.vstack([SPACE.sobol_unit(4, 6), X[:1], X[:1]])  # a data point twice
    for u, (val, grad) in zip(U, single.acquisition_grads(list(U), 1.0), strict=True):
        want = single.acquisition_grad(u, 1.0)
        assert val == want[0]
        np.testing.assert_array_equal(grad, want[1])
    starts, mask = list(U[:5]), np.ones(D, dtype=bool)
    alone = [argmax.polish(single, u, mask, 1.0, ftol=single.ftol(1.0)) for u in starts]
    monkeypatch.setattr(argmax, "LOCKSTEP_ROWS", 0)
    together = argmax.polish_all(single, starts, mask, 1.0, ftol=single.ftol(1.0))
    for a, b in zip(alone, together, strict=True):
        np.testing.assert_array_equal(a, b)


def test_above_the_threshold_mixed_space_believer_and_one_seed_rows(monkeypatch):
    """The same rule on a mixed space (ints and a categorical stay at their start values), a
    kriging-believer round (pending configurations forbidden) and one-seed rows (the variance
    GP's per-row noise is in its factor)."""
    from erahbo.gp import believer_round

    space = SearchSpace({"a": ("float", 0.0, 1.0), "b": ("log", 1e-3, 1.0),
                         "c": ("int", 1, 6), "d": ("cat", ["x", "y", "z"])})
    X = space.sample_unit(120, np.random.default_rng(2))
    _, ybar, s2, k, s = _state(120, seed=2)
    s = RoundSettings(GPHyper("rbf", np.full(X.shape[1], 0.4)),
                      GPHyper("rbf", np.full(X.shape[1], 0.8), noise=0.3), beta=2.5)
    k[:10] = 1.0  # one seed: no sample variance
    s2[:10] = float(np.mean(s2[10:]))  # their placeholder observation
    fm = FastModel(s)
    rm = fm.round(X, ybar, s2, k)
    assert fm.one_seed
    pending = space.sample_unit(2, np.random.default_rng(9))
    br = believer_round(rm, X, ybar, s2, k, pending, np.array([2, 2]), s, fast=fm)
    monkeypatch.setattr(argmax, "SINGLE_ROWS", 0)
    calls = _spy(monkeypatch)
    for model, forbidden in ((rm, None), (br, pending)):
        u, v = argmax.continuous_argmax(model, space, 1.0, X, seed=1, raw_samples=64,
                                        forbidden=forbidden)
        assert isinstance(calls[-1][0], SingleRound)
        _compare(model, space.sobol_unit(3, 5), 1.0)
        assert v == pytest.approx(float(model.acquisition(u[None, :], 1.0)[0]), rel=1e-12,
                                  abs=1e-12)
        U = np.vstack([space.sobol_unit(64, 1), X])
        ok = np.ones(len(U), bool) if forbidden is None else ~(
            U[:, None, :] == forbidden[None]).all(-1).any(1)
        assert v >= float(model.acquisition(U, 1.0)[ok].max()) - 1e-12
        if forbidden is not None:
            assert not (u[None, :] == forbidden).all(1).any()
