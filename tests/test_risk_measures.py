"""The risk measure over seeds as one part (erahbo.risk): MV, mean - c std, CVaR_q, quantile.

Rules checked here:

* each measure's value (the Gaussian location-scale model) and its ground truth on seed returns
  (sample statistics; CVaR the interpolated lower-tail mean) on hand-made samples;
* every measure is increasing in ``f`` and non-increasing in ``var`` (property test), so eq. 9
  bounds it: ``LCB <= value <= UCB`` at the posterior, and its gradient is the finite
  difference's;
* the fast engine's pruned argmax (finite table, ``B_t``, the recommendation's argmax, the
  continuous screen) equals brute-force scoring for each measure;
* options: ``risk``, ``q``, ``c`` validated with one message, pointless combinations refused
  with the fix; the measure's JSON round-trips; a journal without ``risk`` resumes as MV;
* ``erahbo.optimize(..., risk="cvar", q=0.25)`` runs a study whose Result and explanation name
  the measure.
"""

from __future__ import annotations

import math
import shutil
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import erahbo
from erahbo.gp import FastModel, GPHyper, ReferenceRound, RoundSettings
from erahbo.gp.argmax import _known_rows, continuous_argmax
from erahbo.gp.bounds import incumbent_lcb, lcb_mv, rahbo_acquisition, ucb_mv
from erahbo.gp.screen import top_points
from erahbo.objectives.synthetic import Figure1Task
from erahbo.optimizer.options import Options, normalize_settings
from erahbo.risk import (
    MEASURES,
    CVaR,
    MeanStd,
    MeanVariance,
    Quantile,
    as_risk,
    measure_from_json,
)
from erahbo.space import SearchSpace

ALL = [MeanVariance(1.0), MeanVariance(0.0), MeanStd(2.0), CVaR(0.1), CVaR(0.5),
       Quantile(0.25), Quantile(0.5)]
IDS = [m.label for m in ALL]
Z10 = -1.2815515655446004  # Phi^{-1}(0.1)
PHI_Z10 = math.exp(-Z10 * Z10 / 2) / math.sqrt(2 * math.pi)


# --------------------------------------------------------------------------- values, truths
def test_values_of_the_gaussian_model():
    """Rule: MV = f - alpha var; mean_std = f - c sd; CVaR_q = f - phi(z_q)/q sd (the lower-tail
    mean of N(f, sd^2)); quantile = f + z_q sd; sd = sqrt(max(var, 0))."""
    f, var = 2.0, 0.25
    assert MeanVariance(3.0).value(f, var) == 2.0 - 0.75
    assert MeanStd(2.0).value(f, var) == pytest.approx(1.0)
    assert CVaR(0.1).value(f, var) == pytest.approx(2.0 - PHI_Z10 / 0.1 * 0.5)
    assert Quantile(0.1).value(f, var) == pytest.approx(2.0 + Z10 * 0.5)
    assert Quantile(0.5).value(f, var) == pytest.approx(f)  # the median of a Gaussian
    # a negative lower bound of the variance: no spread, the value is f
    assert CVaR(0.1).value(1.0, -0.3) == 1.0 and MeanStd(1.0).value(1.0, -0.3) == 1.0
    arr = CVaR(0.1).value(np.array([1.0, 2.0]), np.array([0.25, -1.0]))
    np.testing.assert_allclose(arr, [1.0 - PHI_Z10 / 0.1 * 0.5, 2.0])
    # the model's CVaR is the mean of the lower q tail of a large Gaussian sample
    z = np.sort(np.random.default_rng(0).standard_normal(400_000))
    assert CVaR(0.1).value(0.0, 1.0) == pytest.approx(z[: len(z) // 10].mean(), abs=0.01)


def test_ground_truth_on_hand_made_returns():
    """Rule: the truths are sample statistics of a configuration's seeds (ddof 1 for MV and
    mean_std; CVaR the interpolated lower-tail mean; quantile numpy's linear one), per row."""
    y = np.array([4.0, 1.0, 3.0, 2.0, 10.0, 6.0, 5.0, 9.0, 8.0, 7.0])  # 1..10
    assert MeanVariance(2.0).truth(y) == pytest.approx(5.5 - 2.0 * np.var(y, ddof=1))
    assert MeanStd(1.0).truth(y) == pytest.approx(5.5 - np.std(y, ddof=1))
    assert CVaR(0.1).truth(y) == 1.0  # the worst 10 %: one seed of ten
    assert CVaR(0.2).truth(y) == 1.5
    assert CVaR(0.25).truth(y) == pytest.approx((1 + 2 + 0.5 * 3) / 2.5)  # interpolated
    assert CVaR(0.5).truth(y) == 3.0
    assert Quantile(0.25).truth(y) == np.quantile(y, 0.25) == 3.25
    rows = np.vstack([y, y + 1.0])  # (N, S) -> (N,)
    for m in ALL:
        np.testing.assert_allclose(m.truth(rows), [m.truth(y), m.truth(y) + 1.0])


def test_truth_of_the_table_goes_through_the_measure():
    """Rule: the benchmark's ground truth (datasets.groundtruth.true_mv) is the measure's
    truth; a float is MV's alpha, as before."""
    from erahbo.datasets.groundtruth import true_mv

    r = np.random.default_rng(1).normal(size=(6, 12))
    np.testing.assert_array_equal(true_mv(r, 2.0), r.mean(axis=1) - 2.0 * r.var(axis=1, ddof=1))
    np.testing.assert_allclose(true_mv(r, CVaR(0.25)), CVaR(0.25).truth(r))


# --------------------------------------------------------------------------- monotone, bounds
@settings(max_examples=200, deadline=None)
@given(f=st.floats(-1e3, 1e3), var=st.floats(-10.0, 1e3), df=st.floats(0.0, 10.0),
       dv=st.floats(0.0, 10.0), which=st.integers(0, len(ALL) - 1))
def test_every_measure_is_increasing_in_f_and_not_increasing_in_var(f, var, df, dv, which):
    """Rule: value(f + df, var) >= value(f, var) >= value(f, var + dv) for df, dv >= 0."""
    m = ALL[which]
    assert m.value(f + df, var) >= m.value(f, var) >= m.value(f, var + dv)


@pytest.mark.parametrize("m", ALL, ids=IDS)
def test_eq9_bounds_bracket_the_posterior_value(m):
    """Rule: LCB = value(LCB_f, UCB_var) <= value(mu_f, mu_var) <= UCB = value(UCB_f,
    LCB_var), and the acquisition (eq. 8) is the UCB."""
    rng = np.random.default_rng(2)
    mu_f, sd_f = rng.normal(size=200), rng.uniform(0, 1, 200)
    mu_v, sd_v = rng.uniform(0, 2, 200), rng.uniform(0, 1, 200)
    lo, hi = lcb_mv(mu_f, sd_f, mu_v, sd_v, m, 2.5), ucb_mv(mu_f, sd_f, mu_v, sd_v, m, 2.5)
    mid = m.value(mu_f, mu_v)
    assert np.all(lo <= mid) and np.all(mid <= hi)
    np.testing.assert_array_equal(rahbo_acquisition(mu_f, sd_f, mu_v, sd_v, m, 2.5), hi)


def test_mv_through_the_measure_is_bit_identical_to_the_arithmetic():
    """Rule: MV computes what the code computed before (same operations: decisions equal)."""
    rng = np.random.default_rng(3)
    mu_f, sd_f, mu_v, sd_v = rng.normal(size=50), rng.random(50), rng.random(50), rng.random(50)
    for alpha in (0.0, 0.3, 7.0):
        up = (mu_f + math.sqrt(2.5) * sd_f) - alpha * (mu_v - math.sqrt(2.5) * sd_v)
        np.testing.assert_array_equal(ucb_mv(mu_f, sd_f, mu_v, sd_v, MeanVariance(alpha), 2.5),
                                      up)
        np.testing.assert_array_equal(ucb_mv(mu_f, sd_f, mu_v, sd_v, alpha, 2.5), up)


@pytest.mark.parametrize("m", ALL, ids=IDS)
def test_gradient_matches_finite_differences(m):
    """Rule: grad() is (d value/d f, d value/d var), by central differences."""
    for f, var in ((0.3, 0.5), (-2.0, 4.0), (1.0, 0.01)):
        g_f, g_v = m.grad(f, var)
        h = 1e-6
        assert g_f == pytest.approx((m.value(f + h, var) - m.value(f - h, var)) / (2 * h),
                                    rel=1e-6)
        assert g_v == pytest.approx((m.value(f, var + h) - m.value(f, var - h)) / (2 * h),
                                    rel=1e-5, abs=1e-8)
        ga_f, ga_v = m.grad(np.array([f]), np.array([var]))
        assert np.allclose(ga_f, g_f) and np.allclose(ga_v, g_v)


# --------------------------------------------------------------------------- engines
def _table(n=40, m=120, d=4, seed=1):
    rng = np.random.default_rng(seed)
    C = rng.random((m, d))
    rows = rng.choice(m, size=n, replace=False)
    X = C[rows]
    f = np.sin(5 * X[:, 0]) + X[:, 1]
    rho2 = 0.05 + 0.5 * X[:, 2] ** 2
    k = rng.integers(2, 21, size=n).astype(float)
    s2 = rho2 * rng.chisquare(k - 1) / (k - 1)
    ybar = f + np.sqrt(rho2 / k) * rng.standard_normal(n)
    s = RoundSettings(GPHyper("rbf", np.array([0.3, 0.4, 0.8, 1.0])),
                      GPHyper("rbf", np.array([0.5, 0.6, 0.4, 1.2]), noise=0.05), beta=2.5)
    return C, X, ybar, s2, k, s


@pytest.mark.parametrize("m", ALL, ids=IDS)
def test_fast_engine_argmax_equals_brute_force_on_a_table(m):
    """Rule: the fast engine prunes with bounds that hold for every monotone measure, so its
    eq. 8 argmax, B_t (eq. 10) and argmax LCB equal scoring every row exactly."""
    C, X, ybar, s2, k, s = _table()
    ref = ReferenceRound(X, ybar, s2, k, s, C)
    fast = FastModel(s, C).round(X, ybar, s2, k)
    mask = np.ones(len(C), dtype=bool)
    mask[::3] = False
    brute = np.where(mask, rahbo_acquisition(*ref.predict(C), m, s.beta), -np.inf)
    i_f, v_f = fast.select(mask, m)
    assert i_f == int(np.argmax(brute)) and v_f == pytest.approx(brute.max(), abs=1e-9)
    assert ref.select(mask, m)[0] == i_f
    for beta in (0.0, 1.0, 2.5):
        B_brute, row = incumbent_lcb(*ref.predict(X), m, beta)
        B_fast, row_fast = fast.best_lcb_mv(m, beta)
        assert row_fast == row and B_fast == pytest.approx(B_brute, abs=1e-9)
        assert fast.lcb_mv_argmax(m, beta) == row
    inner_f = fast.inner(3, X[3], None, 0.2, 0.3, int(k[3]) + 2, 1.0, m)
    inner_r = ref.inner(3, X[3], None, 0.2, 0.3, int(k[3]) + 2, 1.0, m)
    assert inner_f.ucb_mv == pytest.approx(inner_r.ucb_mv, abs=1e-8)
    assert inner_f.lcb_mv <= inner_f.ucb_mv


@pytest.mark.parametrize("m", [CVaR(0.1), MeanStd(1.0), Quantile(0.25)], ids=str)
def test_pruned_continuous_screen_and_argmax_equal_exhaustive(m):
    """Rule: the continuous screen's upper bounds hold for every measure: its best points are
    the exhaustive scoring's, and the pruned continuous argmax equals the unpruned one."""
    space = SearchSpace({f"x{i}": ("float", 0.0, 1.0) for i in range(4)})
    _, X, ybar, s2, k, s = _table(n=60, m=200, seed=5)
    rm = FastModel(s).round(X, ybar, s2, k)
    U = np.vstack([space.sobol_unit(128, 0), X])
    allowed = np.ones(len(U), dtype=bool)
    full = rm.acquisition(U, m)
    idx, vals, _ = top_points(rm, U, m, 5, allowed, _known_rows(rm, U, 128), first_level=8)
    np.testing.assert_allclose(vals, full[idx], rtol=1e-10, atol=1e-12)
    assert set(np.argsort(-full)[:5].tolist()) <= set(idx.tolist())
    kw = dict(seed=0, raw_samples=128, n_polish=3)
    (u1, v1) = continuous_argmax(rm, space, m, X, prune=True, **kw)
    (u2, v2) = continuous_argmax(rm, space, m, X, prune=False, **kw)
    np.testing.assert_array_equal(u1, u2)
    assert v1 == pytest.approx(v2, rel=1e-12, abs=1e-12)


@pytest.mark.parametrize("m", [CVaR(0.1), MeanStd(1.0)], ids=str)
def test_acquisition_gradient_of_a_round_matches_finite_differences(m):
    """Rule: the polish's gradient of eq. 8 (chain rule through the measure) is the finite
    difference of the acquisition."""
    _, X, ybar, s2, k, s = _table(seed=7)
    rm = FastModel(s).round(X, ybar, s2, k)
    u = np.array([0.31, 0.52, 0.43, 0.64])
    val, grad = rm.acquisition_grad(u, m)
    assert val == pytest.approx(float(rm.acquisition(u[None, :], m)[0]), rel=1e-9)
    h = 1e-6
    for j in range(4):
        e = np.zeros(4)
        e[j] = h
        fd = (rm.acquisition((u + e)[None, :], m)[0] - rm.acquisition((u - e)[None, :], m)[0])
        assert grad[j] == pytest.approx(fd / (2 * h), rel=1e-4, abs=1e-6)


# --------------------------------------------------------------------------- options, JSON
@pytest.mark.parametrize("m", ALL, ids=IDS)
def test_json_round_trip(m):
    """Rule: measure_from_json(m.to_json()) == m; no ``risk``: MV."""
    assert measure_from_json(m.to_json()) == m
    assert measure_from_json(None) == MeanVariance(1.0)
    assert measure_from_json({"alpha": 3.0}) == MeanVariance(3.0)


def test_options_select_the_measure_and_refuse_what_it_does_not_read():
    """Rule: Options(risk=..., q=..., c=...) gives the measure (defaults q 0.1, c 1); a value
    out of range or an option the measure does not read is refused naming the fix; GP-UCB
    decides risk-neutrally."""
    assert Options().measure == MeanVariance(1.0)
    assert Options(risk="cvar").measure == CVaR(0.1)
    assert Options(risk="cvar", q=0.25).measure == CVaR(0.25)
    assert Options(risk="quantile", q=0.5).measure == Quantile(0.5)
    assert Options(risk="mean_std", c=2.0).measure == MeanStd(2.0)
    assert Options(method="gpucb", risk="cvar").weight == MeanVariance(0.0)
    assert Options(risk="cvar", alpha=1.0).measure == CVaR(0.1)  # alpha's default: not set
    cases = [
        ({"risk": "var"}, "risk='var' must be one of"),
        ({"risk": "cvar", "q": 0.0}, r"q=0.0 must be in \(0, 0.5\]"),
        ({"risk": "cvar", "q": 0.9}, r"q=0.9 must be in \(0, 0.5\]"),
        ({"risk": "mean_std", "c": -1.0}, "c=-1.0 is negative"),
        ({"q": 0.1}, "q=0.1 does nothing with risk='mv'.*drop q or set risk='cvar'"),
        ({"risk": "cvar", "alpha": 3.0}, "alpha=3.0 does nothing with risk='cvar'.*drop alpha"),
        ({"risk": "cvar", "c": 2.0}, "c=2.0 does nothing with risk='cvar'"),
        ({"risk": "mean_std", "q": 0.2}, "q=0.2 does nothing with risk='mean_std'"),
    ]
    for kw, msg in cases:
        with pytest.raises(ValueError, match=msg):
            Options(**kw)
    with pytest.raises(ValueError, match="alpha=-1 is negative"):
        MeanVariance(-1)
    assert as_risk(-0.5).alpha == -0.5  # the engines' float weight, as before (unchecked)


def test_settings_store_the_measure_and_old_settings_mean_mv():
    """Rule: the study settings store risk and the q / c in force; settings without them
    (journals before risk measures) read as MV."""
    s = Options(risk="cvar").settings_json()
    assert (s["risk"], s["q"], s["c"]) == ("cvar", 0.1, None)
    old = {k: v for k, v in Options().settings_json().items() if k not in ("risk", "q", "c")}
    new = normalize_settings(old)
    assert (new["risk"], new["q"], new["c"]) == ("mv", None, None)
    assert new == normalize_settings(Options().settings_json())


def test_registry_lists_every_measure_once():
    """Rule: a measure is its class plus one entry of MEASURES, keyed by its name."""
    assert set(MEASURES) == {"mv", "mean_std", "cvar", "quantile"}
    assert all(cls.name == name for name, cls in MEASURES.items())


def test_an_old_journal_without_risk_resumes_as_mv(tmp_path):
    """Rule: a journal written before risk measures (no ``risk`` setting) resumes as MV with
    its alpha."""
    fixtures = Path(__file__).resolve().parent / "data" / "journals_main"
    sys.path.insert(0, str(fixtures))
    try:
        from make_fixtures import ARGS, table
    finally:
        sys.path.remove(str(fixtures))
    from test_old_journals import CHANGED_SINCE

    name = sorted(ARGS)[0]
    kw, _ = ARGS[name]
    path = tmp_path / f"{name}.db"
    shutil.copy(fixtures / f"{name}.db", path)
    with erahbo.Optimizer(table(), journal=path, **kw, **CHANGED_SINCE) as opt:
        assert "risk" not in opt.journal.settings
        assert opt.options.measure == MeanVariance(kw.get("alpha", 1.0))
        assert opt.result().measure == MeanVariance(kw.get("alpha", 1.0))


# --------------------------------------------------------------------------- a study
def test_optimize_with_cvar_names_the_measure():
    """Rule: erahbo.optimize(..., risk="cvar", q=0.25) runs a study in CVaR_0.25: the Result's
    measure, its estimate and its explanation are CVaR's. On Figure 1 CVaR_0.25 prefers the
    quiet maximum (x 0.2: 0.47) to the noisy one (x 0.7: below 0)."""
    task = Figure1Task()
    res = erahbo.optimize(task, task.space, budget=60, seed=0, risk="cvar", q=0.25)
    assert res.measure == CVaR(0.25) and res.settings["risk"] == "cvar"
    text = res.explain()
    assert "CVaR_0.25" in text and "worst 25 % of seeds" in text and "MV" not in text
    x = res.incumbent["x"]
    truth = CVaR(0.25).value(task.f(x), task.rho2(x))
    assert truth > 0.2
    assert math.isfinite(res.incumbent_mv)


def test_a_new_measure_is_its_class_and_one_line_in_measures(monkeypatch):
    """Rule: adding a measure is its class plus one entry of MEASURES (erahbo.risk, one source
    file when it reads the existing options): the option ``risk``, its refusals, the settings
    and a study follow."""
    from dataclasses import dataclass

    from erahbo.risk import _LocationScale

    @dataclass(frozen=True)
    class WorstCase(_LocationScale):  # mean less three standard deviations, no option
        name = "worst3"

        @property
        def kappa(self) -> float:
            return -3.0

        def truth(self, returns):
            r = np.asarray(returns, dtype=float)
            return r.mean(axis=-1) - 3.0 * r.std(axis=-1, ddof=1)

        def describe(self) -> str:
            return "mean - 3 standard deviations (return units)"

        @property
        def label(self) -> str:
            return "mean-3std"

    monkeypatch.setitem(MEASURES, "worst3", WorstCase)
    assert Options(risk="worst3").measure == WorstCase()
    with pytest.raises(ValueError, match=r"q=0\.2 does nothing with risk='worst3'"):
        Options(risk="worst3", q=0.2)
    task = Figure1Task()
    res = erahbo.optimize(task, task.space, budget=24, seed=0, risk="worst3")
    assert res.settings["risk"] == "worst3" and res.measure == WorstCase()
    assert "mean-3std" in res.explain()


# --------------------------------------------------------------------------- eq. 12, tail measures
def test_a_tail_measures_stop_bound_is_the_larger_of_the_models_and_its_own_runs():
    """Rule: under a tail measure (CVaR, quantile) the bound eq. 12 compares with B_t is the
    larger of the models' UCB(x_t; k) and the measure's value of x_t's own runs: their sample
    mean with a lower confidence bound of their variance, ``v (k - 1) / chi2_p(k - 1)``,
    ``v`` the larger of their sample variance and the variance GP's mean, ``p =
    Phi(sqrt(beta))`` at the acquisition's beta (beta 0: ``v`` itself; after one seed: the
    variance GP's mean); MV and mean - c std keep the models' bound, the same float (their
    decisions do not change)."""
    cvar = CVaR(0.25)
    own = cvar.value(0.7, 0.09)  # 0.7 - phi(z_0.25) / 0.25 * 0.3
    assert own == pytest.approx(0.7 - 0.3177765 / 0.25 * 0.3, rel=1e-6)
    assert cvar.stop_ucb(-0.3, 0.7, 0.09, 2, 0.04, 0.0) == own  # the needle: its runs speak
    assert cvar.stop_ucb(0.5, 0.7, 0.09, 2, 0.04, 0.0) == 0.5  # the models' is larger
    # two seeds that agree do not earn a spread below the model's
    assert cvar.stop_ucb(-0.3, 0.7, 0.0001, 2, 0.04, 0.0) == cvar.value(0.7, 0.04)
    assert cvar.stop_ucb(-0.3, 0.7, 0.0, 1, 0.04, 2.5) == cvar.value(0.7, 0.04)  # one seed
    # at beta 2.5 the spread of two seeds is bounded below: chi2 with one degree of freedom
    # is Z^2, so chi2_p(1) = Phi^{-1}((1 + p) / 2)^2 with p = Phi(sqrt(2.5))
    from statistics import NormalDist

    nd = NormalDist()
    c2 = nd.inv_cdf((1 + nd.cdf(math.sqrt(2.5))) / 2) ** 2  # 3.61...
    assert 3.5 < c2 < 3.7
    lo = cvar.stop_ucb(-0.3, 0.7, 0.09, 2, 0.04, 2.5)
    assert lo == pytest.approx(cvar.value(0.7, 0.09 / c2), rel=1e-9)
    assert own < lo < 0.7
    assert cvar.stop_ucb(-0.3, 0.7, 0.0001, 2, 0.04, 2.5) == pytest.approx(
        cvar.value(0.7, 0.04 / c2), rel=1e-9)  # the floor is the model's, then bounded
    # many seeds state their spread closely: the bound nears the point value
    many = cvar.stop_ucb(-0.3, 0.7, 0.09, 200, 0.04, 2.5)
    assert own < many < own + 0.2 * (lo - own)
    q = Quantile(0.1)
    assert q.stop_ucb(-1.0, 0.5, 0.01, 5, 0.0025, 0.0) == pytest.approx(0.5 + Z10 * 0.1)
    for m in (MeanVariance(1.0), MeanVariance(0.0), MeanStd(2.0)):
        ucb = -0.123456789
        assert m.stop_ucb(ucb, 0.7, 0.09, 2, 0.2, 2.5) is ucb


def _needle_table():
    """30 configurations on a grid that return about 0 (they never learn) but one, row 17,
    that learns on most seeds; returns a deterministic function of (row, seed)."""
    import pandas as pd

    a, b = np.meshgrid(np.linspace(0.0, 1.0, 6), np.linspace(0.0, 1.0, 5))
    table = pd.DataFrame({"a": a.ravel(), "b": b.ravel()})
    needle = [0.9, 0.5, 0.8, 0.0, 0.85, 0.7, 0.95, 0.6]

    def objective(row, seed):
        return needle[seed % 8] if row == 17 else 0.002 * ((3 * seed + row) % 5)

    return table, objective


@pytest.mark.parametrize("risk", [{"risk": "cvar", "q": 0.25}, {"alpha": 1.0}], ids=str)
def test_eq12_at_a_needle_hears_its_runs_under_cvar_only(risk):
    """Rule: ``Optimizer.stopping_decision`` (eq. 12) at a configuration whose runs beat B_t
    while the models pull it down to its never-learning neighbours: under CVaR its bound is
    the larger of the models' and its runs' value (so it is not dominated); under MV it is
    the models' alone. A deterministic table and objective, the study run by ask/tell."""
    from erahbo.optimizer import Optimizer

    table, objective = _needle_table()
    opt = Optimizer(table, "erahbo", budget=40, seed=3, n_init=4, k_init=2, **risk)
    while (trial := opt.ask()) is not None:
        opt.tell(trial, [objective(int(trial.config_id), s) for s in trial.seeds])
    returns = [0.9, 0.5]
    reason, ucb, B_t = opt.stopping_decision(17, returns)
    row = opt.data.row_of(17)
    pooled = ([] if row is None else list(opt.data.returns[row])) + returns
    mean, var = float(np.mean(pooled)), float(np.var(pooled, ddof=1))
    rm = opt.models.current()
    ib = rm.inner(row, opt.state.candidates[17], 17, mean, var, len(pooled),
                  opt._beta_stop(), opt.weight)
    model = ib.ucb_mv
    measure = opt.options.measure
    if isinstance(measure, CVaR):
        from scipy.stats import chi2, norm

        k = len(pooled)  # the spread at the acquisition's confidence (chi-square bound)
        p = norm.cdf(math.sqrt(opt.options.beta))
        own = measure.value(mean, max(var, ib.mu_var) * (k - 1) / chi2.ppf(p, k - 1))
        assert model < own and ucb == pytest.approx(own, rel=1e-12) and ucb > B_t
        assert reason is None
    else:
        assert ucb == model


def test_a_tail_measures_final_interval_hears_its_runs_from_1_over_q_seeds():
    """Rule: the interval a study states for its recommendation's tail measure (CVaR, the
    quantile) is the hull of the models' interval and the own runs' once the recommendation
    has ceil(1/q) seeds, the models' alone below; the own runs' interval is the hull of the
    Gaussian plug-in value +- z delta-method standard errors and the sample measure's
    interval. MV and mean - c std state the models' interval (the same floats). The case: a
    needle whose models' interval lies below its truth, while its own runs' holds it."""
    needle = [0.9, 0.5, 0.8, 0.0, 0.85, 0.7, 0.95, 0.6]
    cvar = CVaR(0.25)
    truth = float(cvar.truth(needle))
    assert truth == pytest.approx(0.25)  # the mean of its worst two of eight
    lo, hi = -0.15, -0.01  # the models' interval of a needle pulled to its neighbours
    assert not lo <= truth <= hi
    z = 1.6448536
    mean, std = float(np.mean(needle)), float(np.std(needle, ddof=1))
    v, se = cvar.value(mean, std * std), cvar.standard_error(std, 8)
    plug_in = (v - z * se, v + z * se)
    sample = cvar.sample_interval(np.array(needle), 0.9)
    own = cvar.own_interval(needle, 0.9)
    assert own == pytest.approx((min(plug_in[0], sample[0]), max(plug_in[1], sample[1])),
                                rel=1e-6)
    assert own[0] <= truth <= own[1]
    stated = cvar.final_interval(lo, hi, needle, 0.9)
    assert stated == (min(lo, own[0]), max(hi, own[1])) and stated[0] <= truth <= stated[1]
    # the boundary: ceil(1 / q) seeds (4 at q = 0.25, 10 at q = 0.1, 4 at q = 0.3)
    assert (cvar.own_seeds, CVaR(0.1).own_seeds, CVaR(0.3).own_seeds) == (4, 10, 4)
    assert cvar.final_interval(lo, hi, needle[:3], 0.9) == (lo, hi)
    four = cvar.own_interval(needle[:4], 0.9)
    assert cvar.final_interval(lo, hi, needle[:4], 0.9) == four  # holds [lo, hi] here
    tenth = CVaR(0.1)
    ten = [0.9, 0.5, 0.8, 0.0, 0.85, 0.7, 0.95, 0.6, 0.75, 0.65]
    assert tenth.final_interval(lo, hi, ten[:9], 0.9) == (lo, hi)
    assert tenth.final_interval(lo, hi, ten, 0.9)[1] > hi
    quant = Quantile(0.25)
    q_lo, q_hi = quant.own_interval(needle, 0.9)
    assert quant.final_interval(lo, hi, needle, 0.9) == (min(lo, q_lo), q_hi)
    assert q_lo <= float(quant.truth(needle)) <= q_hi
    # a wide models' interval holding the own runs' is stated as it is
    assert cvar.final_interval(-1.0, 2.0, needle, 0.9) == (-1.0, 2.0)
    for m in (MeanVariance(1.0), MeanVariance(0.0), MeanStd(2.0)):
        a, b = -0.123456789, -0.0123456789
        got = m.final_interval(a, b, needle, 0.9)
        assert got[0] is a and got[1] is b


def test_the_sample_measures_interval_of_a_tail_measure():
    """Rule: CVaR's sample interval is the sample CVaR +- z standard errors of its influence
    function ``VaR + min(y - VaR, 0) / q``; the quantile's is the order-statistic interval
    ``[y_(l), y_(u)]`` with ``l``, ``u - 1`` the 5 % and 95 % quantiles of Binomial(n, q)
    (ranks from 1, clipped to the runs). Hand-made returns."""
    y = np.array([0.9, 0.5, 0.8, 0.0, 0.85, 0.7, 0.95, 0.6])
    var_q = float(np.quantile(y, 0.25))
    influence = var_q + np.minimum(y - var_q, 0.0) / 0.25
    se = float(np.std(influence, ddof=1)) / np.sqrt(8)
    assert CVaR(0.25).sample_interval(y, 0.9) == pytest.approx(
        (0.25 - 1.6448536 * se, 0.25 + 1.6448536 * se), rel=1e-6)
    # Binomial(8, 0.25): 5 % quantile 0 (rank clipped to 1), 95 % quantile 4 -> rank 5
    assert Quantile(0.25).sample_interval(y, 0.9) == (0.0, 0.8)
    many = np.arange(1.0, 101.0)  # Binomial(100, 0.1): 5 % quantile 5, 95 % quantile 15
    assert Quantile(0.1).sample_interval(many, 0.9) == (5.0, 16.0)


def test_the_stop_bound_reads_the_variance_gps_rho2_under_the_log_model():
    """Rule: the own-run stopping bound of a tail measure (eq. 12) takes the variance GP's
    estimate of rho^2 at x_t; under ``var_noise="log"`` the GP's posterior is of log rho^2, so
    the estimate is its exp, not the (negative) log value itself. The case: the needle table
    under CVaR with the log model, an unevaluated configuration whose two seeds agree (sample
    variance 0): its bound is the measure's stop bound with ``exp(mu_var)``, below the two
    returns (agreeing seeds do not earn a zero spread)."""
    from erahbo.gp.bounds import to_variance
    from erahbo.optimizer import Optimizer

    table, objective = _needle_table()
    opt = Optimizer(table, "erahbo", budget=40, seed=3, n_init=4, k_init=2, risk="cvar",
                    q=0.25, var_noise="log")
    while (trial := opt.ask()) is not None:
        opt.tell(trial, [objective(int(trial.config_id), s) for s in trial.seeds])
    new = next(c for c in range(len(table)) if opt.data.row_of(c) is None)
    _, ucb, _ = opt.stopping_decision(new, [0.9, 0.9])
    rm = opt.models.current()
    assert rm.log_var
    ib = rm.inner(None, opt.state.candidates[new], new, 0.9, 0.0, 2, opt._beta_stop(),
                  opt.weight)
    rho2 = float(to_variance(ib.mu_var, None, True))
    measure = opt.options.measure
    assert ib.mu_var < 0.0 < rho2
    assert ucb == measure.stop_ucb(ib.ucb_mv, 0.9, 0.0, 2, rho2, opt.options.beta) < 0.9


def test_a_tail_measures_well_sampled_rule_reads_its_own_runs_from_1_over_q_seeds():
    """Rule: under a tail measure the recommender's well-sampled rule lets a configuration
    with at least ``max(recommend_seeds, ceil(1 / q))`` seeds compete on its own runs'
    plug-in value, with no standard error subtracted; MV and mean - c std keep
    ``recommend_seeds`` and one standard error. A rule that is off (0) stays off.

    The case: a quiet configuration (20 seeds near 0.40, the models' choice) and a noisier
    one with 10 seeds whose Gaussian plug-in CVaR_0.1 is higher (0.413 against 0.365) but
    whose plug-in less one standard error (0.343) is not."""
    from erahbo._data import Observations
    from erahbo.optimizer.recommender import Recommender

    assert CVaR(0.1).well_sampled_rule(20) == (20, 0.0)
    assert CVaR(0.1).well_sampled_rule(10) == (10, 0.0)
    assert Quantile(0.1).well_sampled_rule(5) == (10, 0.0)  # never from fewer than 1 / q
    assert CVaR(0.1).well_sampled_rule(0) == (0, 0.0)
    for m in (MeanVariance(1.0), MeanStd(2.0)):
        assert m.well_sampled_rule(20) == (20, 1.0)

    quiet = list(0.40 + 0.02 * np.linspace(-1.6, 1.6, 20))
    noisy = list(np.linspace(0.45, 0.85, 10))

    def data(n_noisy):
        d = Observations(dim=1)
        d.add(0, np.array([0.2]), quiet, list(range(20)))
        d.add(1, np.array([0.8]), noisy[:n_noisy], list(range(n_noisy)))
        return d

    cvar = CVaR(0.1)
    same = MeanStd(-cvar.kappa)  # the same location-scale value under mean - c std
    d = data(10)
    assert cvar.value(np.mean(noisy), np.var(noisy, ddof=1)) > cvar.value(
        np.mean(quiet), np.var(quiet, ddof=1))
    rec = Recommender(beta=2.5, seeds=10, min_seeds=2)
    assert rec.well_sampled(d, 0, None, cvar) == 1  # its own runs, no standard error
    assert rec.well_sampled(d, 0, None, same) == 0  # the same values, one standard error
    assert Recommender(beta=2.5, seeds=20).well_sampled(d, 0, None, cvar) == 0  # 10 < 20
    assert Recommender(beta=2.5, seeds=5).well_sampled(data(9), 0, None, cvar) == 0  # < 1/q
    assert Recommender(beta=2.5, seeds=0).well_sampled(d, 0, None, cvar) == 0  # off
