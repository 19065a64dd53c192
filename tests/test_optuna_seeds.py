"""How many seeds an enqueued or retried trial of ERAHBOSampler gets, how the first enqueued
trial is labelled, and what a failed seed counts (issue 38: after a heartbeat retry a
configuration had k = 7 with k_max = 6; the first enqueued trial was "init" with k_init
seeds; a failed seed raised its configuration's mean)."""

import inspect
import time
import warnings

import pytest

optuna = pytest.importorskip("optuna")

from optuna.trial import TrialState  # noqa: E402

from conftest import cleanrl_objective  # noqa: E402
from conftest import two_peaks_run as train  # noqa: E402
from erahbo.integrations.optuna import ERAHBOSampler, trial_seeds  # noqa: E402
from optuna_core import retry_callbacks  # noqa: E402

optuna.logging.set_verbosity(optuna.logging.ERROR)
OPTS = dict(seed=0, n_init=4, k_init=3, k_min=2, k_max=6, raw_samples=128, n_polish=2)
RETRY_CALLBACKS = retry_callbacks()  # each distinct one (optuna_core.retry_callbacks)


def heartbeat_study(tmp_path, callback, **opts):
    """A study on SQLite with Optuna's heartbeat (1 s, grace 1 s) and its retry callback."""
    with warnings.catch_warnings():  # heartbeat and the callbacks are experimental/deprecated
        warnings.simplefilter("ignore")
        retry = getattr(optuna.storages, callback)()
        name = ("heartbeat_stale_trial_callback"  # optuna >= 4.9; failed_trial_callback before
                if "heartbeat_stale_trial_callback" in inspect.signature(
                    optuna.storages.RDBStorage).parameters else "failed_trial_callback")
        storage = optuna.storages.RDBStorage(f"sqlite:///{tmp_path / 'hb.db'}",
                                             heartbeat_interval=1, grace_period=1,
                                             **{name: retry})
    sampler = ERAHBOSampler(**{**OPTS, **opts})
    study = optuna.create_study(storage=storage, direction="maximize", sampler=sampler,
                                pruner=sampler.pruner)
    return study, storage, sampler


def lose(study, storage, params, n_reports):
    """An enqueued trial whose worker dies after ``n_reports`` seeds: started, reported, its
    heartbeat recorded once, then nothing; the next ``study.optimize`` finds it stale
    (Optuna's ``fail_stale_trials``), fails it and its callback enqueues the retry."""
    study.enqueue_trial(params)
    lost = study.ask()
    x = lost.suggest_float("x", 0.0, 1.0)
    seeds = trial_seeds(lost)
    for step in range(n_reports):
        lost.report(train(x, seeds[step]), step)
    storage.record_heartbeat(lost._trial_id)
    time.sleep(2.5)  # past the grace period: the worker is gone
    return lost.number, seeds


def run_retry(study):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        study.optimize(cleanrl_objective, n_trials=1)  # fail_stale_trials, then the retry
    return study.trials[-1], [str(w.message) for w in caught]


@pytest.mark.parametrize("callback", RETRY_CALLBACKS)
def test_a_retried_trial_continues_its_round_and_never_passes_k_max(tmp_path, callback):
    """The retry of a trial lost after 1 of its k_max = 6 seeds trains the 5 seeds the round
    had left, not k_max more (k was 7): the configuration never holds more than k_max."""
    study, storage, sampler = heartbeat_study(tmp_path, callback)
    study.optimize(cleanrl_objective, n_trials=5)
    number, seeds = lose(study, storage, {"x": 0.25}, 1)
    assert len(seeds) == 6  # an enqueued trial: a round of k_max seeds
    retry, _ = run_retry(study)
    lost = study.trials[number]
    assert lost.state == TrialState.FAIL and retry.system_attrs["failed_trial"] == number
    assert trial_seeds(retry) == seeds[1:]
    assert retry.user_attrs["erahbo_k"] == 1 + len(retry.intermediate_values) <= 6
    h = sampler.result(study).history
    runs = h[h["config_id"] == number]
    assert len(runs) <= 6 and set(runs["status"]) == {"ok"}


def test_a_retry_of_a_trial_that_ran_all_its_seeds_is_pruned_untrained(tmp_path):
    """Lost after its last seed (before Optuna stored its end): the retry has nothing left to
    train; it is pruned before the objective trains anything, with a warning."""
    study, storage, _ = heartbeat_study(tmp_path, RETRY_CALLBACKS[-1])
    study.optimize(cleanrl_objective, n_trials=5)
    number, _ = lose(study, storage, {"x": 0.25}, 6)
    retry, caught = run_retry(study)
    assert retry.system_attrs["failed_trial"] == number
    assert retry.state == TrialState.PRUNED and not retry.intermediate_values
    assert retry.user_attrs["erahbo_seeds"] == []
    assert any("trains nothing" in m for m in caught)


def train_every_seed(trial):
    """An objective that trains all its seeds (never asks the pruner)."""
    x = trial.suggest_float("x", 0.0, 1.0)
    for step, seed in enumerate(trial_seeds(trial)):
        trial.report(train(x, seed), step)
    return 0.0


def test_an_enqueued_configuration_at_its_seed_cap_trains_nothing():
    """With a strict cap (``pool_share=0``: at most max_seeds = k_max seeds per
    configuration), enqueuing a configuration that holds them is pruned untrained."""
    sampler = ERAHBOSampler(**OPTS, pool_share=0.0)
    study = optuna.create_study(direction="maximize", sampler=sampler, pruner=sampler.pruner)
    study.optimize(cleanrl_objective, n_trials=5)
    study.enqueue_trial({"x": 0.4})
    study.optimize(train_every_seed, n_trials=1)
    assert len(study.trials[-1].intermediate_values) == 6
    study.enqueue_trial({"x": 0.4})
    with pytest.warns(UserWarning, match="trains nothing"):
        study.optimize(train_every_seed, n_trials=1)
    capped = study.trials[-1]
    assert capped.state == TrialState.PRUNED and not capped.intermediate_values
    h = sampler.result(study).history
    assert (h["config_id"] == study.trials[-2].number).sum() == 6


def test_the_first_enqueued_trial_is_given_as_every_enqueued_trial():
    """An enqueued trial is a user-given configuration ("given": the next seeds of its
    configuration, the stopping rule), the first of the study too (it was "init" with
    k_init seeds, before the search space was known)."""
    sampler = ERAHBOSampler(**OPTS)
    study = optuna.create_study(direction="maximize", sampler=sampler, pruner=sampler.pruner)
    study.enqueue_trial({"x": 0.3})
    study.enqueue_trial({"x": 0.7})
    study.optimize(train_every_seed, n_trials=3)
    first, second, third = study.trials
    assert [t.params["x"] for t in (first, second)] == [0.3, 0.7]
    assert [t.system_attrs["erahbo:phase"] for t in study.trials] == ["given", "given", "init"]
    assert len(trial_seeds(first)) == len(trial_seeds(second)) == 6
    assert len(trial_seeds(third)) == OPTS["k_init"]


def fails_after_a_low_run(low, sign=1.0):
    """Trial 4 (the first after the initial design) returns ``low`` on its first seed and
    raises on its second; every other run returns about 1 (``sign``: -1 for losses)."""
    def objective(trial):
        x = trial.suggest_float("x", 0.0, 1.0)
        for step, seed in enumerate(trial_seeds(trial)):
            if trial.number == 4 and step == 1:
                raise RuntimeError("diverged")
            value = low if trial.number == 4 else sign * (1.0 + 0.05 * seed + 0.1 * x)
            trial.report(value, step)
            if trial.should_prune():
                raise optuna.TrialPruned()
        return 0.0

    return objective


@pytest.mark.parametrize("direction, low", [("maximize", 0.308), ("minimize", 5.0)])
def test_a_failed_seed_never_raises_its_configurations_mean(direction, low):
    """The penalty is at most its configuration's worst return (a minimizing study: at least
    its worst loss): a configuration with one run of 0.308 whose second seed fails counts
    0.308 again, not the study's lower quartile (about 1.05), which raised its mean."""
    sign = 1.0 if direction == "maximize" else -1.0
    sampler = ERAHBOSampler(**OPTS)
    study = optuna.create_study(direction=direction, sampler=sampler, pruner=sampler.pruner)
    study.optimize(fails_after_a_low_run(low, sign), n_trials=6, catch=(RuntimeError,))
    assert study.trials[4].state == TrialState.FAIL
    h = sampler.result(study).history
    runs = h[h["config_id"] == 4].sort_values("status")
    assert list(runs["status"]) == ["ok", "penalized"]
    ok, penalized = runs["return"]
    assert abs(ok) == low and penalized == ok  # erahbo's tables hold the returns it maximizes
    mean = sampler.result(study).configs.set_index("config_id").loc[4, "mean"]
    assert mean == pytest.approx(ok)
