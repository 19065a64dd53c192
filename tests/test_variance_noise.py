"""The variance GP's observation noise (``var_noise``; :mod:`erahbo.gp.variance_noise`).

Rules checked:

* ``"chi2"``: a sample variance of ``k`` seeds has the noise ``tau^2 / (k - 1)`` (the paper
  appendix's ``2 rho_bar^4 / (k - 1)``), ``tau^2 = 2 rho_bar^4`` standardized with
  ``rho_bar^2`` the ``(k - 1)``-weighted pooled sample variance; a one-seed row carries no
  information under both models; floats (the inner loop) and arrays give the same numbers;
* under ``"chi2"`` the variance GP weighs a 20-seed sample variance over a 2-seed one where
  the fitted noise weighs them alike;
* both engines agree under ``"chi2"``, and the fast engine rebuilt after a row got more seeds
  ends where a fresh one does;
* a study runs with ``var_noise="chi2"``, stores it, resumes it; a journal without it reads
  ``"fitted"``; a prior for a noise that is not fitted is refused with the fix.
"""

from __future__ import annotations

import numpy as np
import pytest

import erahbo
from erahbo.gp import GPHyper, RoundSettings, make_engine, make_round
from erahbo.gp.fit import fit_hyperparameters
from erahbo.gp.variance_noise import NO_INFO, chi2_scale, variance_noise
from erahbo.optimizer.options import normalize_settings
from resume_helpers import NOISY_SPACE as SPACE
from resume_helpers import journaled_trials, noisy_objective


def test_chi2_noise_divides_by_the_degrees_of_freedom():
    k = np.array([1.0, 2.0, 3.0, 21.0])
    np.testing.assert_allclose(variance_noise(0.4, k, chi2=True), [0.4 * NO_INFO, 0.4, 0.2, 0.02])
    np.testing.assert_allclose(variance_noise(0.4, k), [0.4 * NO_INFO, 0.4, 0.4, 0.4])
    for kk in k:  # the inner loop's floats give the arrays' numbers
        assert variance_noise(0.4, float(kk), True) == variance_noise(0.4, np.array([kk]), True)[0]


def test_chi2_scale_is_twice_the_pooled_variance_squared():
    s2 = np.array([0.0, 1.0, 4.0])  # the one-seed row's value is never read
    k = np.array([1.0, 3.0, 2.0])
    pooled = (2 * 1.0 + 1 * 4.0) / 3  # (k - 1)-weighted
    assert chi2_scale(s2, k, sv=2.0) == pytest.approx(2 * pooled**2 / 4.0)
    assert chi2_scale(np.array([5.0]), np.array([1.0]), 1.0) > 0  # nothing replicated: a floor


def test_a_many_seed_sample_variance_weighs_more_under_chi2():
    """Two neighbours: 20 seeds with s^2 = 1, 2 seeds with s^2 = 3; between them the chi^2
    posterior sits nearer 1 than the fitted one, which weighs both alike."""
    X = np.array([[0.1], [0.2], [0.45], [0.55], [0.9]])
    ybar = np.array([0.0, 0.3, 1.0, 1.1, 0.2])
    s2 = np.array([1.2, 0.9, 1.0, 3.0, 1.1])
    k = np.array([4.0, 5.0, 20.0, 2.0, 3.0])
    mids = {}
    for noise in ("fitted", "chi2"):
        st = fit_hyperparameters(X, ybar, s2, k, var_noise=noise, seed=0)
        assert st.var_noise == noise
        st = RoundSettings(GPHyper("rbf", np.array([0.3])),
                           GPHyper("rbf", np.array([0.3]), noise=st.hyper_v.noise),
                           2.5, None, var_noise=noise)
        rm = make_round("reference", None, X, ybar, s2, k, st)
        mids[noise] = float(rm.predict(np.array([[0.5]]))[2][0])
    assert abs(mids["chi2"] - 1.0) < abs(mids["fitted"] - 1.0)


def _data():
    X = np.linspace(0.05, 0.95, 9)[:, None]
    ybar = np.sin(6 * X[:, 0]) + 0.3 * np.cos(17 * X[:, 0])
    k = np.array([2, 3, 5, 2, 9, 2, 4, 3, 2], dtype=float)
    s2 = 0.05 + 0.1 * X[:, 0] + 0.02 * np.cos(11 * X[:, 0])
    return X, ybar, s2, k


def _settings():
    return RoundSettings(GPHyper("rbf", np.array([0.25])),
                         GPHyper("rbf", np.array([0.4]), noise=0.05), 2.5, None,
                         var_noise="chi2")


@pytest.mark.parametrize("row", [None, 2])
def test_both_engines_agree_under_chi2(row):
    X, ybar, s2, k = _data()
    st = _settings()
    fast = make_round("fast", make_engine("fast", st), X, ybar, s2, k, st)
    ref = make_round("reference", None, X, ybar, s2, k, st)
    U = np.linspace(0.0, 1.0, 7)[:, None]
    for a, b in zip(fast.predict(U), ref.predict(U), strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-9)
    u, y, kt = (np.array([0.52]), 0.7, 3) if row is None else (X[row], ybar[row], 7)
    a = fast.inner(row, u, None, y, 0.08, kt, 0.0, 1.0)
    b = ref.inner(row, u, None, y, 0.08, kt, 0.0, 1.0)
    for name in ("mu_f", "sd_f", "mu_var", "sd_var", "ucb_mv"):
        assert getattr(a, name) == pytest.approx(getattr(b, name), rel=1e-6, abs=1e-9), name


def test_the_fast_engine_rebuilds_when_a_row_gets_more_seeds_under_chi2():
    X, ybar, s2, k = _data()
    C = np.linspace(0.0, 1.0, 41)[:, None]
    st = _settings()
    engine = make_engine("fast", st, C)
    make_round("fast", engine, X, ybar, s2, k, st, C)
    k2 = k.copy()
    k2[3] = 6.0  # row 3 got four more seeds: its noise fell
    again = make_round("fast", engine, X, ybar, s2, k2, st, C)
    fresh = make_round("fast", make_engine("fast", st, C), X, ybar, s2, k2, st, C)
    U = np.linspace(0.0, 1.0, 7)[:, None]
    for a, b in zip(again.predict(U), fresh.predict(U), strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-12)
    assert again.best_lcb_mv(1.0, 2.5)[0] == pytest.approx(fresh.best_lcb_mv(1.0, 2.5)[0],
                                                           rel=1e-9)


def test_a_chi2_study_stores_its_noise_model_and_resumes_to_the_same_trials(tmp_path):
    """Cut after 15 tells and rebuilt from the journal: the same trials as uninterrupted."""
    kw = dict(budget=36, seed=1, var_noise="chi2")

    def check(opt):
        assert opt.result().settings["var_noise"] == "chi2"

    def run(path, stop=None):
        return journaled_trials(SPACE, path, noisy_objective, stop, check, **kw)

    ref = run(tmp_path / "ref.db")
    head = run(tmp_path / "cut.db", stop=15)
    assert head + run(tmp_path / "cut.db") == ref


def test_journals_without_it_read_fitted_and_a_prior_without_a_fit_is_refused():
    assert normalize_settings({"schema": 2})["var_noise"] == "fitted"
    with pytest.raises(ValueError, match="drop var_noise_prior"):
        erahbo.Optimizer(SPACE, budget=20, var_noise="chi2", var_noise_prior=-1.0)
    with pytest.raises(ValueError, match="must be one of"):
        erahbo.Optimizer(SPACE, budget=20, var_noise="gamma")
