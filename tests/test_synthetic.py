"""Tests of the synthetic tasks with known MV optimum (erahbo.objectives.synthetic)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from erahbo.objectives.synthetic import (
    Figure1Task,
    HeteroscedasticBranin,
    RandomHeteroscedasticTask,
    SyntheticTask,
)

TASKS = [Figure1Task(), HeteroscedasticBranin(), RandomHeteroscedasticTask(dim=3, seed=0)]


@pytest.mark.parametrize("task", TASKS, ids=lambda t: t.name)
def test_returns_deterministic_per_seed(task: SyntheticTask) -> None:
    c = task.space.decode(task.space.sobol_unit(1, seed=0)[0])
    assert task(c, 7) == task(c, 7)
    assert task(c, 7) != task(c, 8)
    assert task.sample(c, [1, 2, 3]) == [task(c, 1), task(c, 2), task(c, 3)]
    assert isinstance(task(c, 1), float)
    # a fresh, identical task object gives the same draws (no hidden state)
    twin = type(task)() if task.name != "random" else RandomHeteroscedasticTask(dim=3, seed=0)
    assert twin(c, 7) == task(c, 7)


def test_noise_independent_across_configs_unless_common_random_numbers() -> None:
    a, b = {"x": 0.2}, {"x": 0.7}
    t = Figure1Task()
    za = [(t(a, s) - t.f(a)) / math.sqrt(t.rho2(a)) for s in range(1, 200)]
    zb = [(t(b, s) - t.f(b)) / math.sqrt(t.rho2(b)) for s in range(1, 200)]
    assert abs(np.corrcoef(za, zb)[0, 1]) < 0.3
    crn = Figure1Task(common_random_numbers=True)
    za = [(crn(a, s) - crn.f(a)) / math.sqrt(crn.rho2(a)) for s in range(1, 20)]
    zb = [(crn(b, s) - crn.f(b)) / math.sqrt(crn.rho2(b)) for s in range(1, 20)]
    np.testing.assert_allclose(za, zb)


@pytest.mark.parametrize("task", TASKS, ids=lambda t: t.name)
def test_sample_mean_and_variance_converge(task: SyntheticTask) -> None:
    n = 4000
    for u in task.space.sobol_unit(3, seed=1):
        c = task.space.decode(u)
        y = np.asarray(task.sample(c, range(1, n + 1)))
        f, rho2 = task.f(c), task.rho2(c)
        # 5 standard errors: mean se = sqrt(rho2/n), variance se ~ rho2 * sqrt(2/n)
        assert abs(y.mean() - f) < 5 * math.sqrt(rho2 / n)
        assert abs(y.var(ddof=1) - rho2) < 5 * rho2 * math.sqrt(2 / (n - 1))


def test_figure1_mv_argmax_flips_with_alpha() -> None:
    t = Figure1Task()
    assert t.mv_argmax(0.0)["x"] == pytest.approx(0.7, abs=0.01)  # high mean, noisy
    assert t.mv_argmax(1.0)["x"] == pytest.approx(0.2, abs=0.01)  # lower mean, quiet
    assert t.f({"x": 0.7}) > t.f({"x": 0.2}) + 0.3
    assert t.rho2({"x": 0.7}) > 50 * t.rho2({"x": 0.2})
    assert t.mv_max(1.0) - t.mv({"x": 0.7}, 1.0) > 0.4
    # the argmax is a true maximum of MV on a dense independent grid
    X = np.linspace(0, 1, 100_003)[:, None]
    for alpha in (0.0, 1.0):
        assert t.mv(X, alpha).max() <= t.mv_max(alpha) + 1e-12
        assert t.mv_max(alpha) - t.mv(X, alpha).max() < 1e-8
    assert t.regret(t.mv_argmax(0.0), 0.0) == pytest.approx(0.0, abs=1e-12)
    assert t.regret({"x": 0.2}, 0.0) == pytest.approx(t.f({"x": 0.7}) - t.f({"x": 0.2}), abs=1e-3)


def test_branin_values_and_mv_optimum() -> None:
    b = HeteroscedasticBranin()
    mins = [(-math.pi, 12.275), (math.pi, 2.275), (9.42478, 2.475)]
    f = [b.f({"x1": p, "x2": q}) for p, q in mins]
    np.testing.assert_allclose(f, (54.8104 - 0.397887) / 51.9496, atol=1e-6)
    rho2 = [b.rho2({"x1": p, "x2": q}) for p, q in mins]
    assert rho2[0] < rho2[1] < rho2[2]  # C quietest, A noisiest (RAHBO's benchmark)
    best = b.mv_argmax(1.0)
    assert best["x1"] == pytest.approx(-math.pi, abs=0.02)
    assert best["x2"] == pytest.approx(12.275, abs=0.02)
    assert b.mv_max(1.0) >= b.mv({"x1": -math.pi, "x2": 12.275}, 1.0) - 1e-9
    U = b.space.sample_unit(20_000, np.random.default_rng(0))
    assert b.mv(U, 1.0).max() <= b.mv_max(1.0) + 1e-9
    assert b.f(U).max() <= b.mv_max(0.0) + 1e-9


def test_random_task_is_seeded_and_argmax_beats_samples() -> None:
    t = RandomHeteroscedasticTask(dim=4, seed=3)
    t2 = RandomHeteroscedasticTask(dim=4, seed=3)
    U = t.space.sample_unit(5000, np.random.default_rng(1))
    np.testing.assert_array_equal(t.f(U), t2.f(U))
    assert not np.array_equal(t.f(U), RandomHeteroscedasticTask(dim=4, seed=4).f(U))
    r = t.rho2(U)
    assert r.min() >= t.noise_floor and r.max() <= t.noise_floor + t.noise_max * 1.05
    for alpha in (0.0, 1.0):
        assert t.mv(U, alpha).max() <= t.mv_max(alpha) + 1e-9
        assert t.mv(t.mv_argmax(alpha), alpha) == pytest.approx(t.mv_max(alpha))


def test_inputs_and_errors() -> None:
    t = Figure1Task()
    assert t.f([{"x": 0.2}, {"x": 0.7}]).shape == (2,)
    assert isinstance(t.f(np.array([0.2])), float)
    with pytest.raises(ValueError, match=r"shape \(n, 1\)"):
        t.f(np.zeros((3, 2)))
    with pytest.raises(ValueError, match=r"x.*outside"):
        t({"x": 2.0}, 1)
    with pytest.raises(TypeError, match="seed must be an integer"):
        t({"x": 0.2}, 1.5)
    with pytest.raises(ValueError, match="alpha"):
        t.mv_argmax(-1.0)
