"""Exact GPs, MAP fitting and the two round-model engines (reference and fast)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from sklearn.gaussian_process import GaussianProcessRegressor
from sklearn.gaussian_process.kernels import RBF, ConstantKernel, Matern

from erahbo.gp import FastModel, ReferenceRound, RoundSettings, fit_hyperparameters, fixed_noise
from erahbo.gp.exact import ExactGP, GPHyper, posterior_grad, robust_cholesky, standardize
from erahbo.gp.fit import fit_map, log_marginal_likelihood
from erahbo.gp.kernels import kernel, kernel_grad_x
from erahbo.gp.prior import LENGTHSCALE_MIN
from erahbo.gp.round import MEAN_NOISE_FLOOR

KINDS = ["rbf", "matern52"]


def _sk_kernel(kind, ls):
    return RBF(length_scale=ls) if kind == "rbf" else Matern(length_scale=ls, nu=2.5)


def _data(n=25, d=3, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.random((n, d))
    y = np.sin(6 * X[:, 0]) + X[:, 1] ** 2 + 0.1 * rng.standard_normal(n)
    return X, y, rng


@pytest.mark.parametrize("kind", KINDS)
def test_kernel_matches_sklearn(kind):
    X, _, rng = _data()
    ls = np.array([0.3, 0.7, 1.5])
    Y = rng.random((7, 3))
    np.testing.assert_allclose(kernel(X, Y, ls, kind), _sk_kernel(kind, ls)(X, Y), atol=1e-12)


@pytest.mark.parametrize("kind", KINDS)
def test_posterior_equals_sklearn_with_per_point_noise(kind):
    X, y, rng = _data()
    ls = np.array([0.25, 0.6, 2.0])
    noise = rng.uniform(1e-3, 0.3, size=len(y))  # per-point (fixed) noise
    m, s = standardize(y)
    ys = (y - m) / s
    Xs = rng.random((40, 3))
    gp = ExactGP(X, ys, noise, ls, kind)
    mean, var = gp.predict(Xs)
    sk = GaussianProcessRegressor(_sk_kernel(kind, ls), alpha=noise, optimizer=None,
                                  normalize_y=False).fit(X, ys)
    sk_mean, sk_std = sk.predict(Xs, return_std=True)
    np.testing.assert_allclose(mean, sk_mean, atol=1e-8)
    np.testing.assert_allclose(var, sk_std**2, atol=1e-8)
    # raw scale: a standardized GP with noise / std^2 is the raw GP with signal variance std^2
    raw_noise = noise * s**2
    sk_raw = GaussianProcessRegressor(ConstantKernel(s**2, "fixed") * _sk_kernel(kind, ls),
                                      alpha=raw_noise, optimizer=None).fit(X, y - m)
    rm, rs = sk_raw.predict(Xs, return_std=True)
    gp2 = ExactGP(X, ys, raw_noise / s**2, ls, kind)
    mean2, var2 = gp2.predict(Xs)
    np.testing.assert_allclose(m + s * mean2, m + rm, atol=1e-8 * s)
    np.testing.assert_allclose(s * s * var2, rs**2, atol=1e-8 * s * s)


@pytest.mark.parametrize("kind", KINDS)
def test_gradients_match_finite_differences(kind):
    X, y, rng = _data(n=12)
    ls = np.array([0.3, 0.5, 0.9])
    x = rng.random(3)
    _, dk = kernel_grad_x(x, X, ls, kind)
    h = 1e-6
    for j in range(3):
        e = np.zeros(3)
        e[j] = h
        kp, km = kernel((x + e)[None], X, ls, kind)[0], kernel((x - e)[None], X, ls, kind)[0]
        fd = (kp - km) / (2 * h)
        np.testing.assert_allclose(dk[:, j], fd, atol=1e-7)
    gp = ExactGP(X, y - y.mean(), 0.05, ls, kind)
    mean, var, dmean, dvar = gp.predict_grad(x)
    for j in range(3):
        e = np.zeros(3)
        e[j] = h
        mp, vp = gp.predict((x + e)[None])
        mm, vm = gp.predict((x - e)[None])
        assert dmean[j] == pytest.approx((mp - mm)[0] / (2 * h), abs=1e-6)
        assert dvar[j] == pytest.approx((vp - vm)[0] / (2 * h), abs=1e-6)
    m0, v0 = gp.predict(x[None])
    assert mean == pytest.approx(m0[0]) and var == pytest.approx(v0[0])
    assert posterior_grad(x, X, gp.L_, gp.alpha_, ls, kind)[0] == pytest.approx(mean)


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("learn_noise", [True, False])
def test_map_objective_gradient(kind, learn_noise):
    X, y, rng = _data(n=10)
    ys = (y - y.mean()) / y.std()
    fixed = None if learn_noise else rng.uniform(0.01, 0.1, size=10)
    theta = np.log([0.4, 0.8, 1.3] + ([0.05] if learn_noise else []))
    _, g = log_marginal_likelihood(theta, X, ys, kind, fixed)
    h = 1e-6
    for j in range(len(theta)):
        e = np.zeros_like(theta)
        e[j] = h
        fp, _ = log_marginal_likelihood(theta + e, X, ys, kind, fixed)
        fm, _ = log_marginal_likelihood(theta - e, X, ys, kind, fixed)
        assert g[j] == pytest.approx((fp - fm) / (2 * h), rel=1e-5, abs=1e-6)


def test_fit_map_finds_relevant_dimension_and_respects_bounds():
    rng = np.random.default_rng(3)
    X = rng.random((30, 3))
    y = np.sin(8 * X[:, 0])  # only the first input matters
    ys = (y - y.mean()) / y.std()
    h = fit_map(X, ys, kind="rbf", seed=0)
    assert h.noise is not None and h.noise >= 1e-4
    assert np.all(h.lengthscales >= LENGTHSCALE_MIN)
    assert h.lengthscales[0] < 0.5 * min(h.lengthscales[1:])
    theta0 = np.append(np.full(3, math.sqrt(2) + 0.5 * math.log(3) - 3), -5.0)
    v0, _ = log_marginal_likelihood(theta0, X, ys, "rbf", None)
    assert h.log_posterior >= v0
    hf = fit_map(X, ys, kind="matern52", fixed_noise=np.full(30, 1e-3), seed=0)
    assert hf.noise is None and hf.lengthscales.shape == (3,)


def test_robust_cholesky_jitter_for_duplicates_and_error_for_nan():
    X = np.repeat(np.random.default_rng(0).random((4, 2)), 3, axis=0)  # each point 3 times
    A = kernel(X, X, np.array([0.5, 0.5]))
    L, jitter = robust_cholesky(A)
    assert jitter > 0
    np.testing.assert_allclose(L @ L.T, A + jitter * np.eye(len(A)), atol=1e-10)
    _, j2 = robust_cholesky(A + 0.1 * np.eye(len(A)))
    assert j2 == 0.0
    with pytest.raises(np.linalg.LinAlgError):
        robust_cholesky(np.full((3, 3), np.nan))


def test_standardize_is_scale_equivariant_and_handles_constants():
    y = np.array([1.0, 2.0, 4.0])
    m, s = standardize(y)
    m6, s6 = standardize(1e6 * y)
    assert m6 == pytest.approx(1e6 * m) and s6 == pytest.approx(1e6 * s)
    assert standardize(np.zeros(4)) == (0.0, 1.0)
    assert standardize(np.full(3, 5e-7)) == (5e-7, 5e-7)
    assert standardize(np.array([3.0])) == (3.0, 3.0)


def test_fixed_noise_is_sigma_hat_over_k_in_standardized_units():
    ucb = np.array([0.5, 4.0, -1.0])
    noise = fixed_noise(ucb, rho_max2=2.0, k=np.array([2.0, 4.0, 5.0]), std_y=10.0)
    np.testing.assert_allclose(noise, [0.25 / 100, 0.5 / 100, MEAN_NOISE_FLOOR])


# --------------------------------------------------------------------------- round models
def _round_inputs(n=40, m=120, d=4, seed=1, scale=1.0, dup=False):
    rng = np.random.default_rng(seed)
    C = rng.random((m, d))
    rows = rng.choice(m, size=n, replace=False)
    if dup:
        C[rows[1]] = C[rows[0]]  # two table rows with the same encoding
    X = C[rows]
    f = np.sin(5 * X[:, 0]) + X[:, 1]
    rho2 = 0.05 + 0.5 * X[:, 2] ** 2
    k = rng.integers(2, 21, size=n).astype(float)
    s2 = rho2 * rng.chisquare(k - 1) / (k - 1)
    ybar = f + np.sqrt(rho2 / k) * rng.standard_normal(n)
    s = RoundSettings(GPHyper("rbf", np.array([0.3, 0.4, 0.8, 1.0])),
                      GPHyper("rbf", np.array([0.5, 0.6, 0.4, 1.2]), noise=0.05), beta=2.5)
    return C, rows, X, scale * ybar, scale**2 * s2, k, s


@pytest.mark.parametrize("dup", [False, True])
def test_fast_round_equals_reference(dup):
    C, rows, X, ybar, s2, k, s = _round_inputs(dup=dup)
    ref = ReferenceRound(X, ybar, s2, k, s, C)
    fm = FastModel(s, C)
    fm.sync(X[:10])  # caches built incrementally over two rounds
    fm.round(X[:10], ybar[:10], s2[:10], k[:10])
    fast = fm.round(X, ybar, s2, k)
    np.testing.assert_allclose(fast.D, ref.D, rtol=1e-9)
    for a, b in zip(fast.posterior_X(), ref.predict(X), strict=True):
        np.testing.assert_allclose(a, b, atol=1e-8)
    U = np.random.default_rng(5).random((30, 4))
    for a, b in zip(fast.predict(U), ref.predict(U), strict=True):
        np.testing.assert_allclose(a, b, atol=1e-8)
    mask = np.ones(len(C), dtype=bool)
    mask[::3] = False
    for w in (0.0, 1.0, 5.0):
        i_f, v_f = fast.select(mask, w)
        i_r, v_r = ref.select(mask, w)
        assert i_f == i_r and v_f == pytest.approx(v_r, abs=1e-9)
        for b in (0.0, 1.0, 2.5):
            bf, rf = fast.best_lcb_mv(w, b)
            br, rr = ref.best_lcb_mv(w, b)
            assert rf == rr and bf == pytest.approx(br, abs=1e-9)
    assert fast.n_exact_ < len(C)  # the bound pruned some candidates
    # inner loop: an evaluated configuration (pooled) and a new one, several k
    new = int(np.setdiff1d(np.arange(len(C)), rows)[0])
    for row, cand in ((3, int(rows[3])), (None, new)):
        u = C[cand]
        for kk, yb, v in ((2, 0.3, 0.2), (5, 0.1, 0.05), (30, 0.9, 1.5)):
            kt = kk + (int(k[row]) if row is not None else 0)
            a = fast.inner(row, u, cand, yb, v, kt, 1.0, 1.0)
            b = ref.inner(row, u, cand, yb, v, kt, 1.0, 1.0)
            assert a.ucb_mv == pytest.approx(b.ucb_mv, abs=1e-8)
            assert a.lcb_mv == pytest.approx(b.lcb_mv, abs=1e-8)
            c = fast.inner(row, u, None, yb, v, kt, 1.0, 1.0)  # no candidate column
            assert c.ucb_mv == pytest.approx(b.ucb_mv, abs=1e-8)
    g_f = fast.acquisition_grad(U[0], 1.0)
    g_r = ref.acquisition_grad(U[0], 1.0)
    assert g_f[0] == pytest.approx(g_r[0]) and np.allclose(g_f[1], g_r[1])


@pytest.mark.parametrize("scale", [1e6, 1e-6])
def test_round_decisions_invariant_to_return_scale(scale):
    C, _, X, ybar, s2, k, s = _round_inputs(seed=4)
    base = FastModel(s, C).round(X, ybar, s2, k)
    scaled = FastModel(s, C).round(X, scale * ybar, scale**2 * s2, k)
    np.testing.assert_allclose(scaled.D, base.D, rtol=1e-9)  # noise / std_y^2 is unit-free
    mask = np.ones(len(C), dtype=bool)
    # MV is scale sensitive: alpha scales with 1 / scale for the same decision
    assert scaled.select(mask, 1.0 / scale)[0] == base.select(mask, 1.0)[0]
    assert scaled.best_lcb_mv(1.0 / scale, 1.0)[1] == base.best_lcb_mv(1.0, 1.0)[1]
    a = scaled.inner(None, C[0], 0, scale * 0.5, scale**2 * 0.1, 4, 1.0, 1.0 / scale)
    b = base.inner(None, C[0], 0, 0.5, 0.1, 4, 1.0, 1.0)
    assert a.ucb_mv == pytest.approx(scale * b.ucb_mv, rel=1e-8)


def test_raw_noise_would_change_the_posterior():
    """Guard against the classic bug: raw-scale noise fed to a standardized GP."""
    C, _, X, ybar, s2, k, s = _round_inputs(seed=6, scale=30.0)
    ref = ReferenceRound(X, ybar, s2, k, s, C)
    raw = ref.D * ref.sf**2  # what a GP without the / std^2 would get
    gp_bad = ExactGP(X, ref.yf, raw, s.hyper_f.lengthscales)
    assert not np.allclose(gp_bad.predict(C)[1], ref.gp_f.predict(C)[1], atol=1e-3)


def test_zero_variance_seeds_and_tiny_noise_do_not_break():
    C, _, X, ybar, s2, k, s = _round_inputs(seed=7)
    s2 = np.zeros_like(s2)  # every configuration returned the same value on all seeds
    ref = ReferenceRound(X, ybar, s2, k, s, C)
    fast = FastModel(s, C).round(X, ybar, s2, k)
    assert np.all(ref.D == MEAN_NOISE_FLOOR)
    mask = np.ones(len(C), dtype=bool)
    assert fast.select(mask, 1.0)[0] == ref.select(mask, 1.0)[0]
    assert np.isfinite(fast.inner(0, X[0], None, 0.1, 0.0, 40, 1.0, 1.0).ucb_mv)


def test_fit_hyperparameters_on_initial_design():
    rng = np.random.default_rng(2)
    X = rng.random((5, 6))
    ybar = rng.standard_normal(5)
    s2 = rng.uniform(0.1, 1.0, 5)
    st = fit_hyperparameters(X, ybar, s2, np.full(5, 20.0), kind="matern52", seed=0)
    assert st.hyper_f.noise is None and st.hyper_v.noise >= 1e-4
    assert st.hyper_f.lengthscales.shape == (6,) and st.hyper_f.kind == "matern52"


@pytest.mark.parametrize("kind", KINDS)
def test_pruned_argmax_is_exact_on_random_states(kind):
    for seed in range(12):
        rng = np.random.default_rng(100 + seed)
        n, m, d = int(rng.choice([2, 9, 60])), 150, 3
        C = rng.random((m, d))
        rows = rng.choice(m, size=n, replace=False)
        X = C[rows]
        k = rng.integers(2, 30, size=n).astype(float)
        ybar = rng.standard_normal(n) * rng.uniform(0.1, 10)
        s2 = rng.uniform(0, 2, n) ** 3
        ls = rng.uniform(0.05, 1.0, d)
        s = RoundSettings(GPHyper(kind, ls), GPHyper(kind, rng.uniform(0.1, 2, d), noise=1e-3),
                          beta=float(rng.uniform(0.5, 4)))
        fast = FastModel(s, C).round(X, ybar, s2, k)
        ref = ReferenceRound(X, ybar, s2, k, s, C)
        mask = rng.random(m) < 0.7
        for w in (0.0, 1.0, 10.0):
            assert fast.select(mask, w)[0] == ref.select(mask, w)[0]
            assert fast.best_lcb_mv(w, 1.0)[1] == ref.best_lcb_mv(w, 1.0)[1]
            sub = rng.random(n) < 0.5
            if sub.any():
                assert fast.best_lcb_mv(w, 2.5, sub)[1] == ref.best_lcb_mv(w, 2.5, sub)[1]


@pytest.mark.parametrize("kind", KINDS)
def test_kernel_into_given_arrays_gives_the_same_values(kind):
    """kernel(out=, work=) (the argmax screen's work buffers) computes what kernel() does."""
    rng = np.random.default_rng(8)
    for n1, n2, d in ((40, 70, 3), (1, 9, 2), (9, 1, 5)):
        X1, X2, ls = rng.random((n1, d)), rng.random((n2, d)), rng.uniform(0.05, 2.0, d)
        out, work = np.empty((n1, n2)), np.empty((n1, n2))
        got = kernel(X1, X2, ls, kind, out=out, work=work)
        assert got is out
        np.testing.assert_array_equal(got, kernel(X1, X2, ls, kind))


def test_fast_model_work_buffers_are_reused_never_shared():
    """FastModel.borrow: a returned buffer serves the next call (grown when too small); one
    borrowed twice at once, or by a copy of the model, is two arrays."""
    C, _, _, _, _, _, s = _round_inputs(seed=2)
    fm = FastModel(s, C)
    a = fm.borrow("w", (30, 40))
    b = fm.borrow("w", (30, 40))  # not given back yet: another array
    assert a.shape == (30, 40) and a.flags.c_contiguous and not np.shares_memory(a, b)
    fm.give_back("w", a)
    assert np.shares_memory(fm.borrow("w", (20, 50)), a)  # the same memory again
    fm.give_back("w", a)
    assert not np.shares_memory(fm.copy().borrow("w", (30, 40)), a)
    big = fm.borrow("w", (300, 40))
    assert big.shape == (300, 40) and not np.shares_memory(big, a)


@pytest.mark.parametrize("kind", KINDS)
def test_recommendation_row_is_argmax_lcb_mv_on_either_path(kind):
    """lcb_mv_argmax is best_lcb_mv's row, whether the rows in play are solved in batches
    (a small beta prunes, or fewer than SMALL_N rows) or all read from var_f_rows (a large
    beta does not prune, from SMALL_N rows on); with beta = 0 best_lcb_mv's B_t is the
    reference's without any solve."""
    from erahbo.gp.fast import SMALL_N

    taken = set()
    for seed in range(8):
        rng = np.random.default_rng(300 + seed)
        n, m, d = (3, 30, 90, SMALL_N + 20)[seed % 4], 200, 3
        C = rng.random((m, d))
        X = C[rng.choice(m, size=n, replace=False)]
        k = rng.integers(2, 30, size=n).astype(float)
        ybar = rng.standard_normal(n) * rng.uniform(0.1, 10)
        s2 = rng.uniform(0, 2, n) ** 3
        if n >= SMALL_N:  # a flat landscape: every row can be the maximum (var_f_rows path)
            ybar, s2 = 1.0 + 1e-3 * ybar, np.full(n, 0.5)
        s = RoundSettings(GPHyper(kind, rng.uniform(0.05, 1.0, d)),
                          GPHyper(kind, rng.uniform(0.1, 2, d), noise=1e-3), beta=2.5)
        ref = ReferenceRound(X, ybar, s2, k, s, C)
        for w in (0.0, 1.0, 10.0):
            for beta in (0.0, 1.0, 2.5, 25.0):
                for mask in (None, rng.random(n) < 0.5):
                    fast = FastModel(s, C).round(X, ybar, s2, k)
                    row = fast.lcb_mv_argmax(w, beta, mask)
                    B_ref, row_ref = ref.best_lcb_mv(w, beta, mask)
                    assert row == row_ref
                    B_t, row_fast = fast.best_lcb_mv(w, beta, mask)
                    assert row == row_fast
                    np.testing.assert_allclose(B_t, B_ref, rtol=1e-7, atol=1e-9)
                    taken.add(fast._var_fX is not None)
                    if n < SMALL_N:
                        assert fast._var_fX is None
    assert taken == {False, True}  # both paths ran


def test_fast_engine_reports_the_values_of_the_bound_functions(monkeypatch):
    """The fast engine prunes, but every value it returns comes from erahbo.gp.bounds."""
    import erahbo.gp.fast as fast_mod

    seen: dict[str, list] = {"acq": [], "inc": []}
    acq, inc = fast_mod.rahbo_acquisition, fast_mod.incumbent_lcb

    def rec_acq(*a, **kw):
        out = acq(*a, **kw)
        seen["acq"].append(np.atleast_1d(out))
        return out

    def rec_inc(*a, **kw):
        out = inc(*a, **kw)
        seen["inc"].append(out[0])
        return out

    monkeypatch.setattr(fast_mod, "rahbo_acquisition", rec_acq)
    monkeypatch.setattr(fast_mod, "incumbent_lcb", rec_inc)
    C, _, X, ybar, s2, k, s = _round_inputs(seed=3)
    fast = FastModel(s, C).round(X, ybar, s2, k)
    for w in (0.0, 1.0):
        seen["acq"].clear()
        _, v = fast.select(np.ones(len(C), dtype=bool), w)
        assert any(v in vals for vals in seen["acq"])
        B_t, _ = fast.best_lcb_mv(w, 1.0)
        assert B_t == max(seen["inc"])
        seen["inc"].clear()


def test_fast_model_keeps_each_candidates_most_correlated_row():
    """The pruning bound's cache: the largest k_f(x_j, c)^2 over the rows, and its row."""
    C, _, X, _, _, _, s = _round_inputs(seed=5)
    fm = FastModel(s, C)
    for n in (1, 7, len(X)):
        fm.sync(X[:n])
        sq = fm.KfC[:n] * fm.KfC[:n]  # k_f(x_j, c)^2 (no longer stored)
        np.testing.assert_array_equal(fm.k2max, sq.max(0))
        np.testing.assert_array_equal(sq[fm.nn, np.arange(len(C))], fm.k2max)
    kept = fm.k2max.copy()
    other = fm.copy()  # the believer extends a copy: the original keeps its rows
    other.sync(np.vstack([X, C[:3]]))
    np.testing.assert_array_equal(fm.k2max, kept)
    np.testing.assert_array_equal(other.k2max, (other.KfC[: len(X) + 3] ** 2).max(0))


def test_eq19_reads_ucb_var_at_least_a_share_of_the_pooled_variance():
    """Rule: in the mean GP's noise (eq. 19) ``UCB^var`` is at least ``UCB_VAR_FLOOR_SHARE``
    of the pooled within-configuration variance, before ``rho_max^2`` caps it; both engines.

    The case (1-D): two very noisy configurations next to quiet ones make the variance GP
    (short lengthscale, little noise) extrapolate below 0 between them; two one-seed
    configurations 0.0003 apart there returned 0.5 and 0.85. Without the floor their noise is
    the mean GP's floor (1e-6) and the mean GP leaves the returns (the Figure 1 case in CVaR);
    with it, the posterior mean stays within the returns it saw."""
    from erahbo.gp.one_seed import pooled_variance
    from erahbo.gp.round import UCB_VAR_FLOOR_SHARE

    assert fixed_noise(np.array([-1.0, 0.5]), 2.0, np.array([1.0, 2.0]), 1.0, 0.1) == (
        pytest.approx(np.array([0.1, 0.25])))
    assert fixed_noise(-1.0, 0.05, 1.0, 1.0, 0.1) == pytest.approx(0.05)  # rho_max^2 caps
    X = np.array([[0.0], [0.03], [0.06], [0.09], [0.12], [0.1950], [0.1953]])
    s2 = np.array([1.0, 1.0, 1e-3, 1e-3, 1e-3, 0.0, 0.0])
    k = np.array([10.0, 10.0, 10.0, 10.0, 10.0, 1.0, 1.0])
    ybar = np.array([0.2, 0.3, 0.5, 0.55, 0.5, 0.5, 0.85])
    s = RoundSettings(GPHyper("rbf", np.array([0.3])),
                      GPHyper("rbf", np.array([0.06]), noise=1e-4), beta=2.5, sigma0_2=0.01)
    ref = ReferenceRound(X, ybar, s2, k, s, X)
    fast = FastModel(s, X).round(X, ybar, s2, k)
    _, _, mu_v, sd_v = ref.predict(X[5:])
    assert np.all(mu_v + np.sqrt(2.5) * sd_v < 0)  # UCB^var < 0: the variance GP overshoots
    floor = UCB_VAR_FLOOR_SHARE * pooled_variance(s2, k, 0.01)
    np.testing.assert_allclose(ref.D[5:], floor / ref.sf**2, rtol=1e-9)
    np.testing.assert_allclose(fast.D, ref.D, rtol=1e-9)
    mf = ref.predict(X)[0]
    assert np.all(mf <= ybar.max() + 0.1) and np.all(mf >= ybar.min() - 0.1)
