"""One seed per configuration (``k_init = k_min = 1``): the variance from the residual.

Rules checked (:mod:`erahbo.gp.residual`):

* the closed-form leave-one-out estimate equals refitting the pilot GP without the point;
* without a one-seed configuration the variance GP sees the sample variances themselves;
* the estimate is unbiased before its clip: ``E[k (r^2 - v)] = rho^2`` when
  ``r ~ N(0, v + rho^2 / k)`` (checked by Gauss-Hermite quadrature, no random draws);
* both engines give the same inner-loop bounds after one seed at ``x_t``;
* a study with ``k_init = k_min = 1`` runs to its budget, keeps one-seed configurations, and
  its options are refused where one seed cannot work (racing, fixed ``k = 1``).
"""

from __future__ import annotations

import numpy as np
import pytest

import erahbo
from erahbo.gp import GPHyper, RoundSettings, make_engine, make_round
from erahbo.gp.exact import ExactGP, standardize
from erahbo.gp.residual import loo_residual_variances, one_seed_variance, pooled_noise


def _data(n: int = 9):
    X = np.linspace(0.05, 0.95, n)[:, None]
    ybar = np.sin(6 * X[:, 0]) + 0.3 * np.cos(17 * X[:, 0])  # deterministic "returns"
    k = np.array([1, 3, 1, 2, 1, 1, 4, 1, 2][:n], dtype=float)
    s2 = np.where(k > 1, 0.05 + 0.1 * X[:, 0], 0.0)
    return X, ybar, s2, k


def test_closed_form_loo_equals_refitting_without_the_point():
    X, ybar, s2, k = _data()
    pilot = GPHyper("rbf", np.array([0.3]), noise=0.08)
    out = loo_residual_variances(X, ybar, s2, k, pilot)
    mf, sf = standardize(ybar)
    y = (ybar - mf) / sf
    nz = pooled_noise(s2, k, pilot.noise * sf * sf) / (sf * sf) / k
    for i in np.flatnonzero(k == 1):
        rest = np.arange(len(y)) != i
        mu, var = ExactGP(X[rest], y[rest], nz[rest], pilot.lengthscales, "rbf").predict(X[i:i + 1])
        expect = one_seed_variance(y[i] - mu[0], var[0], 1.0) * sf * sf
        assert out[i] == pytest.approx(expect, rel=1e-7, abs=1e-10)
    assert np.array_equal(out[k > 1], s2[k > 1])  # replicated rows keep their sample variance


def test_no_one_seed_configuration_leaves_the_sample_variances():
    X, ybar, s2, k = _data()
    k2 = np.maximum(k, 2.0)
    pilot = GPHyper("rbf", np.array([0.3]), noise=0.08)
    assert loo_residual_variances(X, ybar, s2, k2, pilot) is s2


@pytest.mark.parametrize("k", [1, 3])
def test_the_estimate_is_unbiased_before_its_clip(k):
    v, rho2 = 0.2, 0.5
    nodes, weights = np.polynomial.hermite_e.hermegauss(60)  # E over N(0, 1)
    r = nodes * np.sqrt(v + rho2 / k)
    unclipped = k * (r * r - v)
    assert weights @ unclipped / weights.sum() == pytest.approx(rho2, rel=1e-10)
    assert np.all(one_seed_variance(r, v, float(k)) >= 0.0)  # the clip


@pytest.mark.parametrize("row", [None, 0])
def test_both_engines_agree_after_one_seed(row):
    X, ybar, s2, k = _data()
    hf = GPHyper("rbf", np.array([0.25]))
    hv = GPHyper("rbf", np.array([0.4]), noise=0.05)
    pilot = GPHyper("rbf", np.array([0.3]), noise=0.08)
    st = RoundSettings(hf, hv, 2.5, None, pilot)
    v = loo_residual_variances(X, ybar, s2, k, pilot)
    u = np.array([0.52]) if row is None else X[row]
    rows, kt = X, 1
    fast = make_round("fast", make_engine("fast", st), rows, ybar, v, k, st)
    ref = make_round("reference", None, rows, ybar, v, k, st)
    if row is not None:  # x_t evaluated before: its one seed is the row itself
        a = fast.inner(row, u, None, ybar[row], 0.0, kt, 0.0, 1.0)
        b = ref.inner(row, u, None, ybar[row], 0.0, kt, 0.0, 1.0)
    else:
        a = fast.inner(None, u, None, 0.7, 0.0, kt, 0.0, 1.0)
        b = ref.inner(None, u, None, 0.7, 0.0, kt, 0.0, 1.0)
    for name in ("mu_f", "sd_f", "mu_var", "sd_var", "ucb_mv"):
        assert getattr(a, name) == pytest.approx(getattr(b, name), rel=1e-6, abs=1e-9), name


def _study(**kw):
    space = {"x0": ("float", 0.0, 1.0), "x1": ("float", 0.0, 1.0)}

    def obj(c, s):  # deterministic in (configuration, seed)
        g = np.random.default_rng([s, int(c["x0"] * 1e6), int(c["x1"] * 1e6)])
        return -(c["x0"] - 0.7) ** 2 - (c["x1"] - 0.3) ** 2 + 0.05 * g.standard_normal()

    opt = erahbo.Optimizer(space, method="erahbo", budget=40, seed=3, **kw)
    while (t := opt.ask()) is not None:
        opt.tell(t, [obj(t.config, s) for s in t.seeds])
    return opt


def test_a_one_seed_study_runs_to_its_budget_with_one_seed_configurations():
    opt = _study(k_init=1, k_min=1, n_init=10)
    d = opt.state.data
    assert int(d.k.sum()) == 40
    assert (d.k == 1).sum() >= 10  # the initial design, and every round that stopped at once
    assert opt.models.settings.hyper_pilot is not None
    assert opt.recommend() is not None


@pytest.mark.parametrize("kw, match", [
    ({"k_min": 1, "stopping": "race"}, "stopping='race'"),
    ({"k_max": 1, "k_min": 1}, "k_max"),
])
def test_one_seed_options_refused_where_they_cannot_work(kw, match):
    with pytest.raises(ValueError, match=match):
        erahbo.Optimizer({"x": ("float", 0.0, 1.0)}, method="erahbo", budget=40, **kw)


def test_fixed_k_methods_still_need_two_seeds_per_round():
    with pytest.raises(ValueError, match="k=1"):
        erahbo.Optimizer({"x": ("float", 0.0, 1.0)}, method="rahbo", k=1, budget=40)


def test_a_one_seed_study_resumes_from_its_journal_to_the_same_history(tmp_path):
    """Cut after 17 tells and rebuilt from the journal: the same trials as uninterrupted."""
    space = {"x0": ("float", 0.0, 1.0), "x1": ("float", 0.0, 1.0)}
    kw = dict(method="erahbo", budget=30, seed=1, k_init=1, k_min=1, n_init=6)

    def obj(c, s):
        return -(c["x0"] - 0.7) ** 2 - (c["x1"] - 0.3) ** 2 + 0.01 * (s % 7)

    def run(path, stop=None):
        seen = []
        with erahbo.Optimizer(space, journal=path, **kw) as opt:
            while (t := opt.ask()) is not None:
                opt.tell(t, [obj(t.config, s) for s in t.seeds])
                seen.append((t.config_id, tuple(t.seeds)))
                if stop is not None and len(seen) == stop:
                    return seen
        return seen

    ref = run(tmp_path / "ref.db")
    head = run(tmp_path / "cut.db", stop=17)
    tail = run(tmp_path / "cut.db")
    assert head + tail == ref
