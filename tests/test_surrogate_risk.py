"""The exact truth of every risk measure on the continuous tasks (issue 40, item 4):
:meth:`erahbo.objectives.synthetic.SyntheticTask.value` and its optimum search, the surrogates'
mixture tail (:func:`erahbo.objectives.surrogate_model.mixture_tail_mean`,
:func:`~erahbo.objectives.surrogate_model.mixture_quantile`)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest

from erahbo.objectives.known_truth import make_task
from erahbo.objectives.surrogate import TableSurrogate
from erahbo.objectives.surrogate_model import mixture_quantile, mixture_tail_mean
from erahbo.objectives.synthetic import Figure1Task, HeteroscedasticBranin
from erahbo.risk import CVaR, MeanStd, MeanVariance, Quantile, RiskMeasure

DATA = Path(__file__).resolve().parents[1] / "data" / "arlbench"


@pytest.fixture(scope="module")
def acrobot() -> TableSurrogate:
    return TableSurrogate.bundled("ppo_cc_acrobot", DATA)


def _mixture(task: TableSurrogate, n: int, seed: int):
    U = task.space.project(task.space.sobol_unit(n, seed=seed))
    return U, task.model.predict(U)


def test_mixture_cvar_is_the_integral_of_its_quantile_function(acrobot):
    """CVaR_q of the mixture is (1/q) * the integral of its quantile function over (0, q):
    the closed form agrees with a 200,000-level midpoint rule of mixture_quantile to 1e-6 at
    every point and share (returns on [0, 1]), and lies between the lowest return and the
    q quantile."""
    _, (P, q0, q1) = _mixture(acrobot, 8, seed=5)
    lo, hi = acrobot.model.lo, acrobot.model.hi
    L = 200_000
    for q in (0.05, 0.1, 0.25, 0.5):
        exact = mixture_tail_mean(P, q0, q1, lo, hi, q)
        levels = (np.arange(L) + 0.5) / L * q
        for i in range(len(P)):
            rep = [np.repeat(a[i:i + 1], L, axis=0) for a in (P, q0, q1)]
            numeric = mixture_quantile(*rep, lo, hi, levels).mean()
            assert exact[i] == pytest.approx(numeric, abs=1e-6)
        assert (exact >= lo - 1e-12).all()
        assert (exact <= mixture_quantile(P, q0, q1, lo, hi, q) + 1e-12).all()


def _tail_points(task: TableSurrogate, q: float) -> list[dict]:
    """Sobol configurations whose lower q tail is (at most partly) at the floor atom: the
    interesting ones for a tail estimate (a tail all at the floor is exact by any method)."""
    U, (P, _, _) = _mixture(task, 64, seed=9)
    keep = np.flatnonzero(P[:, 0] < 0.5 * q)[:2]
    assert keep.size == 2
    return [task.space.decode(U[i]) for i in keep]


def test_surrogate_cvar_and_quantile_match_monte_carlo_of_sample(acrobot):
    """20,000 seeded returns of sample() at two configurations: risk.py's sample CVaR_q
    (truth) is within 5 standard errors (the tail's influence function) of the exact CVaR;
    the exact q quantile Q is a q quantile of the draws (share below Q <= q <= share at or
    below Q, within 5 binomial standard errors)."""
    n = 20_000
    for q in (0.1, 0.25):
        for c in _tail_points(acrobot, q):
            y = np.asarray(acrobot.sample(c, range(n)))
            exact = acrobot.value(c, CVaR(q=q))
            var_q = np.quantile(y, q)
            influence = np.minimum(y - var_q, 0.0) / q  # CVaR's influence function
            se = influence.std() / math.sqrt(n)
            assert abs(CVaR(q=q).truth(y) - exact) <= 5 * se + 1e-9
            Q = acrobot.value(c, Quantile(q=q))
            band = 5 * math.sqrt(q * (1 - q) / n)
            assert (y < Q).mean() <= q + band and (y <= Q).mean() >= q - band


def test_surrogate_moment_measures_are_their_values_of_the_moments(acrobot):
    """MV and mean - c std of the mixture are exact functions of its mean and variance."""
    U = acrobot.space.sobol_unit(32, seed=2)
    f, r = acrobot.f(U), acrobot.rho2(U)
    np.testing.assert_array_equal(acrobot.value(U, MeanVariance(2.0)), f - 2.0 * r)
    np.testing.assert_allclose(acrobot.value(U, MeanStd(c=1.5)), f - 1.5 * np.sqrt(r))


def test_gaussian_tasks_have_the_measures_gaussian_value():
    """A synthetic task's returns are N(f, rho2): a measure's value is risk.py's Gaussian
    value of (f, rho2) (one formula), and Monte Carlo of sample() agrees within 5 standard
    errors at Figure 1's noisy maximum."""
    fig = Figure1Task()
    U = np.linspace(0, 1, 11)[:, None]
    for m in (CVaR(q=0.1), Quantile(q=0.25), MeanStd(c=1.0)):
        np.testing.assert_array_equal(fig.value(U, m), m.value(fig.f(U), fig.rho2(U)))
    c, n, q = {"x": 0.7}, 20_000, 0.1
    y = np.asarray(fig.sample(c, range(n)))
    influence = np.minimum(y - np.quantile(y, q), 0.0) / q
    assert abs(CVaR(q=q).truth(y) - fig.value(c, CVaR(q=q))) <= 5 * influence.std() / math.sqrt(n)
    readme = make_task("readme")
    best = readme.value_argmax(CVaR(q=0.1))
    assert (best["lr"], best["batch"], best["act"]) == (pytest.approx(1e-3), 16, "relu")
    assert readme.value_max(CVaR(q=0.1)) == pytest.approx(
        0.5 - math.exp(-0.5 * 1.2815515655446004**2) / math.sqrt(2 * math.pi) / 0.1
        * (0.1 + 16 / 512))


def test_mv_numbers_are_those_before_the_measures():
    """The MV path is the measure path with MeanVariance, bit for bit: mv_max and
    mv_uniform_mean of the bundled ppo_cc_acrobot surrogate (alpha 1) and of Branin are the
    numbers the MV-only code gave (commit 4ade4d8; this machine: equal to the last bit for
    every task and alpha in {0, 0.1, 1, 10}); the tolerance only allows another CPU's BLAS."""
    acro = make_task("surr-ppo_cc_acrobot", DATA)
    branin = HeteroscedasticBranin()
    for task, star, mean in ((acro, 0.9878762240476072, 0.42328905642958675),
                             (branin, 1.0430533852321457, -0.20437866193579016)):
        assert task.mv_max(1.0) == pytest.approx(star, rel=1e-9, abs=1e-12)
        assert task.mv_uniform_mean(1.0) == pytest.approx(mean, rel=1e-9, abs=1e-12)
        assert task.mv_max(1.0) == task.value_max(MeanVariance(1.0)) == task.value_max(1.0)
        x = task.mv_argmax(1.0)
        assert task.regret_norm(x, 1.0) == task.regret_norm(x, measure=MeanVariance(1.0))


@pytest.mark.parametrize("measure", [CVaR(q=0.1), Quantile(q=0.25)], ids=str)
def test_the_optimum_search_beats_every_sobol_point(acrobot, measure):
    """value_max of a measure is at least its value at every one of 4,096 Sobol points and
    at every table configuration, is the value at value_argmax, and normalizes the regret:
    0 at the argmax, mean 1 over the uniform points that define the normalizer."""
    for task in (acrobot, HeteroscedasticBranin()):
        star = task.value_max(measure)
        U = task.space.sobol_unit(4096, seed=77)
        assert task.value(U, measure).max() <= star + 1e-12
        if isinstance(task, TableSurrogate):
            assert task.value(task.model.X, measure).max() <= star + 1e-12
        best = task.value_argmax(measure)
        assert task.value(best, measure) == pytest.approx(star, abs=1e-12)
        assert task.regret_norm(best, measure=measure) == pytest.approx(0.0, abs=1e-12)
        mean = task.value_uniform_mean(measure)
        assert task.uniform_values(measure).mean() == pytest.approx(mean)
        assert np.mean((star - task.uniform_values(measure)) / (star - mean)) == \
            pytest.approx(1.0)


def test_regret_takes_alpha_or_a_measure_not_both(acrobot):
    """regret / regret_norm read MV's alpha (default 1) or a measure; both is refused with
    the fix; a measure the surrogate has no exact value of is refused by name."""
    x = acrobot.space.decode(acrobot.space.sobol_unit(1, seed=3)[0])
    assert acrobot.regret_norm(x) == acrobot.regret_norm(x, 1.0)
    with pytest.raises(ValueError, match="not both"):
        acrobot.regret(x, 1.0, measure=CVaR(q=0.1))

    @dataclass(frozen=True)
    class Median(RiskMeasure):
        name = "median"

        def value(self, f, var):
            return f

        @property
        def label(self) -> str:
            return "median"

    with pytest.raises(ValueError, match="no exact value"):
        acrobot.value(x, Median())
