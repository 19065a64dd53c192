"""The failure-mode variance observations (:mod:`erahbo.gp.failure_mode`)."""

from __future__ import annotations

import numpy as np
import pytest

import erahbo
from erahbo.gp.failure_mode import failure_variances


def _stats(returns: list[list[float]]) -> tuple[np.ndarray, np.ndarray]:
    k = np.array([len(r) for r in returns], dtype=float)
    s2 = np.array([np.var(r, ddof=1) if len(r) > 1 else 0.0 for r in returns])
    return s2, k


def test_returns_without_a_floor_atom_keep_their_sample_variances() -> None:
    """Rule: only an atom at the study's lowest return (a failure mode) changes anything;
    normal returns have a unique minimum."""
    rng = np.random.default_rng(0)
    returns = [list(rng.normal(i, 1.0, 5)) for i in range(6)]
    s2, k = _stats(returns)
    U = rng.uniform(size=(6, 2))
    out = failure_variances(returns, U, s2, k, np.ones(2), 4.0)
    np.testing.assert_array_equal(out, s2)


def test_strength_zero_is_off() -> None:
    """Rule: no prior weight, no change."""
    returns = [[0.0, 0.0, 1.0], [0.0, 0.9, 1.1], [1.0, 1.2]]
    s2, k = _stats(returns)
    out = failure_variances(returns, np.zeros((3, 1)), s2, k, np.ones(1), 0.0)
    np.testing.assert_array_equal(out, s2)


def test_a_configuration_without_failures_reads_its_neighbours_failures() -> None:
    """Rule: a configuration whose six seeds all learned, at the place where two others failed
    in 6 of 20 seeds, gets the mixture's variance at the Beta posterior failure probability
    (prior 0.3 with 4 pseudo-runs: (0 + 1.2) / (6 + 4) = 0.12), not its sample variance."""
    lucky = [0.9, 1.0, 1.1, 0.95, 1.05, 1.0]
    nb = [0.0, 0.0, 0.0, 1.0, 1.1, 0.9, 1.0, 1.05, 0.95, 1.0]
    returns = [lucky, list(nb), list(nb)]
    s2, k = _stats(returns)
    out = failure_variances(returns, np.zeros((3, 2)), s2, k, np.ones(2), 4.0)
    pi = 1.2 / 10.0
    expected = pi * (1 - pi) * np.mean(lucky) ** 2 + (1 - pi) * np.var(lucky, ddof=1)
    assert out[0] == pytest.approx(expected, rel=1e-6)
    assert out[0] > 10 * s2[0]


def test_a_configuration_far_from_the_others_keeps_its_own_failure_share() -> None:
    """Rule: the prior weighs at most the neighbours' (kernel-weighted) runs; a configuration
    many lengthscales away reads only its own runs: 1 failure in 5."""
    own = [0.0, 2.0, 2.2, 1.8, 2.0]
    returns = [own, [0.0, 0.0, 0.0], [0.0, 0.0]]
    s2, k = _stats(returns)
    U = np.array([[0.0], [50.0], [50.0]])
    out = failure_variances(returns, U, s2, k, np.ones(1), 4.0)
    learn = np.array(own[1:])
    expected = 0.2 * 0.8 * learn.mean() ** 2 + 0.8 * learn.var(ddof=1)
    assert out[0] == pytest.approx(expected, rel=1e-6)


def test_one_seed_configurations_are_left_to_the_pooled_placeholder() -> None:
    """Rule: a row with one seed has no sample variance; its observation stays what the caller
    gave (the pooled placeholder, :mod:`erahbo.gp.one_seed`)."""
    returns = [[0.0], [0.0, 1.0, 1.0], [0.0, 0.0, 1.2]]
    s2, k = _stats(returns)
    s2[0] = 0.37
    out = failure_variances(returns, np.zeros((3, 1)), s2, k, np.ones(1), 4.0)
    assert out[0] == 0.37


def test_a_configuration_that_never_learned_keeps_its_sample_variance() -> None:
    """Rule: a replicated configuration none of whose runs learned has no learning mode of its
    own; it keeps its sample variance (0) even where its neighbours learn, while a neighbour
    with one failure in four gets the mixture's variance."""
    never = [0.0, 0.0, 0.0, 0.0, 0.0, 0.0]
    mixed = [0.0, 1.0, 1.1, 0.9]
    returns = [never, mixed, [1.0, 1.05, 0.95, 1.0]]
    s2, k = _stats(returns)
    out = failure_variances(returns, np.zeros((3, 1)), s2, k, np.ones(1), 4.0)
    assert out[0] == 0.0
    assert out[1] != s2[1] and out[1] > 0.0


SPACE = {"lr": ("log", 1e-5, 1e-1), "width": ("float", 0.0, 1.0)}


def _learn_or_fail(cfg: dict, seed: int) -> float:
    """Deterministic per (configuration, seed): a run fails (returns the floor, 0) when its
    seed's hash is below the failure share 0.3 + 0.5 width, else it learns (1 + a small
    seed-dependent spread)."""
    h = ((seed * 2654435761) % 1000) / 1000.0
    return 0.0 if h < 0.3 + 0.5 * cfg["width"] else 1.0 + 0.01 * (seed % 7)


def test_the_models_observe_the_failure_variances_under_the_option() -> None:
    """Rule: under ``failure_prior_runs`` every model of a round observes the failure mode's
    variances at its replicated rows (computed with the mean GP's lengthscales); off, the
    sample variances themselves."""
    from erahbo.optimizer.loop import drive

    for runs in (0.0, 4.0):
        opt = erahbo.Optimizer(SPACE, budget=30, seed=3, failure_prior_runs=runs)
        assert opt.options.failure_prior_runs == runs
        drive(opt, lambda t: [_learn_or_fail(t.config, s) for s in t.seeds], opt.tell,
              threads=False)
        rm = opt.round_model()
        d = opt.data
        rows = np.asarray(d.k) >= 2
        want = failure_variances(d.returns, d.U, d.s2, d.k,
                                 np.asarray(rm.settings.hyper_f.lengthscales), runs)
        np.testing.assert_allclose(rm.variance_observations[rows], want[rows])
        if runs == 0.0:
            np.testing.assert_array_equal(rm.variance_observations[rows], d.s2[rows])
        else:
            assert not np.allclose(want[rows], d.s2[rows])


def test_the_option_is_off_by_default_and_kept_in_the_study_settings() -> None:
    """Rule: off (0) unless given, on every kind of space and under every method; given by
    name it is stored in the study settings, so a journal resumes with it."""
    from conftest import table3

    for opt in (erahbo.Optimizer(SPACE, budget=40, seed=1),
                erahbo.Optimizer(table3(50, seed=3), budget=40, seed=1),
                erahbo.Optimizer(SPACE, method="rahbo", k=2, budget=40, seed=1)):
        assert opt.options.failure_prior_runs == 0.0
    opt = erahbo.Optimizer(SPACE, budget=40, seed=1, failure_prior_runs=2.5)
    assert opt.study_settings()["failure_prior_runs"] == 2.5


@pytest.mark.parametrize("bad, match", [
    (dict(failure_prior_runs=-1), "failure_prior_runs=-1 must be >= 0"),
    (dict(failure_prior_runs="many"), "failure_prior_runs must be a number"),
    (dict(failure_prior_runs=4, method="random"), "method='random' has no models"),
])
def test_bad_values_are_refused_with_the_options_name(bad: dict, match: str) -> None:
    with pytest.raises((TypeError, ValueError), match=match):
        erahbo.Optimizer(SPACE, budget=40, seed=1, **bad)
