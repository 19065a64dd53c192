"""ERAHBOSampler in Optuna's everyday workflow: CleanRL's tuner pattern, enqueued and retried
trials, heartbeats, a forgotten pruner, learning curves, and erahbo's answer in Optuna's views.
"""

import inspect
import json
import os
import textwrap
import time
import warnings
from pathlib import Path

import pytest

optuna = pytest.importorskip("optuna")

from optuna.trial import TrialState  # noqa: E402

from conftest import cleanrl_objective  # noqa: E402
from conftest import two_peaks_run as train  # noqa: E402
from erahbo.integrations.optuna import (  # noqa: E402
    RECOMMENDATION,
    SEED_OFFSET,
    ERAHBOSampler,
    recommended_trial,
    trial_seeds,
)
from forked_app import run_script  # noqa: E402
from optuna_core import core_optimizer, retry_callbacks  # noqa: E402

optuna.logging.set_verbosity(optuna.logging.WARNING)
ROOT = Path(__file__).resolve().parents[1]
OPTS = dict(seed=0, n_init=4, k_init=3, k_min=2, k_max=6, raw_samples=128, n_polish=2)
SPACE = {"x": ("float", 0.0, 1.0)}


def new_study(sampler, **kw):
    return optuna.create_study(direction="maximize", sampler=sampler, pruner=sampler.pruner,
                               **kw)


def ran_pairs(study):
    """(parameters, seed) of every run the study holds."""
    return [(json.dumps(t.params, sort_keys=True), s) for t in study.get_trials()
            for s in trial_seeds(t)[:len(t.intermediate_values)]]


def test_cleanrl_pattern_completes_trials_that_train_all_their_seeds():
    sampler = ERAHBOSampler(**OPTS)
    study = new_study(sampler)
    study.optimize(cleanrl_objective, n_trials=14)
    complete = [t for t in study.trials if t.state == TrialState.COMPLETE]
    pruned = [t for t in study.trials if t.state == TrialState.PRUNED]
    assert complete and study.best_trial in complete  # best_trial works
    for t in complete:  # every seed the trial was given, then the loop ended by itself
        assert len(t.intermediate_values) == len(trial_seeds(t))
    for t in pruned:  # a pruned trial is one the stopping rule rejected, before its last seed
        assert t.system_attrs["erahbo:decision"]["reason"] == "dominated"
        assert len(t.intermediate_values) < len(trial_seeds(t))


def test_an_enqueued_configuration_that_ran_gets_the_next_seeds():
    sampler = ERAHBOSampler(**OPTS)
    study = new_study(sampler)
    study.optimize(cleanrl_objective, n_trials=5)
    first = study.trials[1]
    study.enqueue_trial(first.params)
    study.enqueue_trial(first.params)  # twice: the second follows the first
    study.optimize(cleanrl_objective, n_trials=2)
    again = study.trials[-2:]
    assert all(t.params == first.params for t in again)
    assert all(t.system_attrs["erahbo:phase"] == "given" for t in again)
    core = core_optimizer(SPACE, study, study.trials[:again[0].number], **OPTS)
    n = len(trial_seeds(again[0]))  # the core's next seeds of the configuration (its stream)
    assert trial_seeds(again[0]) == core.next_seeds(core.config_id_of(first.params), n)
    assert not set(trial_seeds(again[0])) & set(trial_seeds(first))
    assert trial_seeds(again[1])[0] == trial_seeds(again[0])[len(again[0].intermediate_values)]
    assert len(ran_pairs(study)) == len(set(ran_pairs(study)))


@pytest.mark.parametrize("value", [5.0, -0.5])
def test_a_trial_enqueued_outside_the_space_is_refused_and_the_study_goes_on(value):
    """Optuna only warns about an enqueued value outside its distribution; erahbo refuses the
    trial before it trains, naming the value, and the study's later trials are not harmed."""
    sampler = ERAHBOSampler(**OPTS)
    study = new_study(sampler)
    study.optimize(cleanrl_objective, n_trials=5)
    study.enqueue_trial({"x": value})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # Optuna's own out-of-range warning
        with pytest.raises(ValueError, match=rf"enqueued with x={value}.*outside the search"):
            study.optimize(cleanrl_objective, n_trials=1)
    refused = study.trials[-1]
    assert refused.state == TrialState.FAIL and not refused.intermediate_values
    study.optimize(cleanrl_objective, n_trials=2)
    assert [t.state for t in study.trials[-2:]] != [TrialState.FAIL] * 2
    assert recommended_trial(study).params["x"] != value


RETRY_CALLBACKS = retry_callbacks()  # each distinct one (optuna_core.retry_callbacks)


@pytest.mark.parametrize("callback", RETRY_CALLBACKS)
def test_a_retried_trial_gets_fresh_seeds_not_the_failed_ones(callback):
    """Optuna's retry callbacks copy the failed trial's parameters and attributes (its seeds
    included) into a new trial: the sampler gives that trial the next seeds."""
    def objective(trial):
        x = trial.suggest_float("x", 0.0, 1.0)
        for step, seed in enumerate(trial_seeds(trial)):
            if trial.number == 5 and step == 1:
                raise RuntimeError("diverged")
            trial.report(train(x, seed), step)
            if trial.should_prune():
                raise optuna.TrialPruned()
        return 0.0

    sampler = ERAHBOSampler(**OPTS)
    study = new_study(sampler)
    study.optimize(objective, n_trials=6, catch=(RuntimeError,))
    failed = study.trials[5]
    assert failed.state == TrialState.FAIL
    with warnings.catch_warnings():  # the deprecation of RetryFailedTrialCallback
        warnings.simplefilter("ignore")
        getattr(optuna.storages, callback)()(study, failed)  # what the storage would call
    study.optimize(objective, n_trials=1)
    retry = study.trials[6]
    assert retry.params == failed.params
    # the configuration's next seeds in the core: its stream after the seed that failed
    assert trial_seeds(retry)[0] == trial_seeds(failed)[2]
    assert retry.user_attrs[SEED_OFFSET] == trial_seeds(retry)[0]
    assert len(ran_pairs(study)) == len(set(ran_pairs(study)))


KILLED_WORKER = textwrap.dedent("""
    import os, sys, time, optuna
    from erahbo.integrations.optuna import ERAHBOSampler, trial_seeds
    sys.path.insert(0, {tests!r})
    from test_optuna_host import OPTS, train
    optuna.logging.set_verbosity(optuna.logging.ERROR)
    storage = optuna.storages.RDBStorage({url!r}, heartbeat_interval=1, grace_period=2)
    sampler = ERAHBOSampler(**OPTS)
    study = optuna.load_study(study_name="hb", storage=storage, sampler=sampler,
                              pruner=sampler.pruner)
    def objective(trial):
        x = trial.suggest_float("x", 0.0, 1.0)
        for step, seed in enumerate(trial_seeds(trial)):
            if trial.number == 5 and step == 1:
                time.sleep(1.5)  # training (the heartbeat thread records meanwhile)
                os._exit(3)  # the machine goes away in the middle of the second seed
            trial.report(train(x, seed), step)
            if trial.should_prune():
                raise optuna.TrialPruned()
        return 0.0
    study.optimize(objective, n_trials=10)
""")


def test_a_trial_lost_with_its_worker_is_not_penalized(tmp_path):
    """Optuna's heartbeat fails the trial of a killed worker: its reported runs count, no
    failed run is added (a lost machine is not a property of the hyperparameters)."""
    url = f"sqlite:///{tmp_path / 'hb.db'}"
    optuna.create_study(study_name="hb", storage=url, direction="maximize")
    env = dict(os.environ, PYTHONPATH=str(ROOT / "src"))
    (tmp_path / "worker.py").write_text(KILLED_WORKER.format(tests=str(ROOT / "tests"), url=url))
    # the worker: a process of its own, forked from the server that imported erahbo once
    # (tests/forked_app.py), as ``python worker.py`` would run it
    done = run_script("worker.py", cwd=tmp_path, env=env, timeout=300)
    assert done.returncode == 3, done.stderr[-3000:]
    time.sleep(3)  # past the grace period
    retry = optuna.storages.RetryFailedTrialCallback()
    name = ("heartbeat_stale_trial_callback"  # optuna >= 4.9; failed_trial_callback before
            if "heartbeat_stale_trial_callback" in inspect.signature(
                optuna.storages.RDBStorage).parameters else "failed_trial_callback")
    storage = optuna.storages.RDBStorage(url, heartbeat_interval=1, grace_period=2,
                                         **{name: retry})
    sampler = ERAHBOSampler(**OPTS)
    study = optuna.load_study(study_name="hb", storage=storage, sampler=sampler,
                              pruner=sampler.pruner)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # heartbeat is experimental
        study.optimize(cleanrl_objective, n_trials=2)
    lost, retry = study.trials[5], study.trials[6]
    assert lost.state == TrialState.FAIL and len(lost.intermediate_values) == 1
    # the retry trains from the seed that never finished (it produced no data)
    assert retry.params == lost.params and trial_seeds(retry)[0] == trial_seeds(lost)[1]
    history = sampler.result(study).history
    cid = history.loc[history["x"] == lost.params["x"], "config_id"].unique()
    assert len(cid) == 1  # the lost trial's configuration (new, or a replicate of one)
    runs = history[history["config_id"] == cid[0]]
    assert set(runs["status"]) == {"ok"}  # no penalized run for the lost one
    # its runs: every reported seed of the trials at it (the lost trial's one, the retry's...)
    assert len(runs) == sum(len(t.intermediate_values) for t in study.trials
                            if t.params == lost.params)
    assert len(ran_pairs(study)) == len(set(ran_pairs(study)))


def test_a_study_without_the_samplers_pruner_is_warned_once():
    sampler = ERAHBOSampler(**OPTS)
    study = optuna.create_study(direction="maximize", sampler=sampler)  # MedianPruner
    with pytest.warns(UserWarning, match=r"pruner=sampler.pruner") as caught:
        study.optimize(cleanrl_objective, n_trials=3)
    assert sum("pruner=sampler.pruner" in str(w.message) for w in caught) == 1
    assert all(len(t.intermediate_values) <= len(trial_seeds(t)) for t in study.trials)


@pytest.mark.parametrize("steps", [range(50), range(1000, 5000, 1000)])
def test_a_learning_curve_is_refused_with_the_fix(steps):
    """Steps per training iteration (the MedianPruner habit) are not seed indices."""
    def objective(trial):
        x = trial.suggest_float("x", 0.0, 1.0)
        for i, step in enumerate(steps):
            trial.report(train(x, 0) * (i + 1) / len(steps), step)  # a learning curve
            if trial.should_prune():
                raise optuna.TrialPruned()
        return 0.0

    sampler = ERAHBOSampler(**OPTS)
    study = new_study(sampler)
    with pytest.raises(ValueError, match=r"a step is the index of a seed.*trial_seeds"):
        study.optimize(objective, n_trials=1)
    assert sampler.result(study) is None  # the refused reports are not data


def test_trials_carry_erahbos_estimates_and_the_study_its_recommendation():
    sampler = ERAHBOSampler(**OPTS)
    study = new_study(sampler)
    study.optimize(cleanrl_objective, n_trials=12)
    df = study.trials_dataframe()
    for col in ("mv", "lcb_mv", "ucb_mv", "k", "config_id", "recommended", "seeds"):
        assert f"user_attrs_erahbo_{col}" in df.columns
    last = study.trials[-1]
    assert last.user_attrs["erahbo_lcb_mv"] <= last.user_attrs["erahbo_mv"] \
        <= last.user_attrs["erahbo_ucb_mv"]
    rec = recommended_trial(study)
    assert rec.params == sampler.recommend(study)
    assert study.user_attrs[RECOMMENDATION]["trial"] == rec.number
    result = sampler.result(study)
    assert result.incumbent_id == rec.number
    # config_id is the number of the configuration's first trial, in every table
    numbers = {t.number: t.params["x"] for t in study.trials}
    for _, row in result.configs.iterrows():
        assert numbers[row["config_id"]] == pytest.approx(row["x"])
    assert set(result.history["config_id"]) <= set(numbers)


def test_multi_objective_studies_are_refused_before_the_objective_runs():
    calls = []

    def objective(trial):
        calls.append(trial.number)
        return 0.0, 0.0

    sampler = ERAHBOSampler(**OPTS)
    study = optuna.create_study(directions=["maximize", "minimize"], sampler=sampler)
    with pytest.raises(ValueError, match=r"2 objectives.*one direction"):
        study.optimize(objective, n_trials=1)
    assert calls == []


def test_threads_of_one_process_never_train_the_same_configuration_and_seed():
    """study.optimize(n_jobs=2): two threads share one sampler (and its optimizer)."""
    def objective(trial):
        x = trial.suggest_categorical("x", [0.2, 0.25, 0.3])  # few configurations: repeats
        returns = []
        for step, seed in enumerate(trial_seeds(trial)):
            time.sleep(0.005)  # training: the threads overlap
            returns.append(train(x, seed))
            trial.report(returns[-1], step)
            if trial.should_prune():
                raise optuna.TrialPruned()
        return sum(returns) / len(returns)

    sampler = ERAHBOSampler(**{**OPTS, "n_init": 2})
    study = new_study(sampler)
    study.optimize(objective, n_trials=16, n_jobs=2)
    assert {t.state for t in study.trials} <= {TrialState.COMPLETE, TrialState.PRUNED}
    assert len(ran_pairs(study)) == len(set(ran_pairs(study)))
    assert len({t.params["x"] for t in study.trials}) < len(study.trials)  # repeats ran


def test_a_misspelled_option_is_refused_with_the_name_it_resembles():
    with pytest.raises(TypeError, match=r"unknown option\(s\) 'alpah' \(did you mean 'alpha'\?\)"
                       r"; it takes .*k_max.*random_interleave"):
        ERAHBOSampler(alpah=2.0)
    with pytest.raises(TypeError, match=r"'random_interleav' \(did you mean 'random_interleave'"):
        ERAHBOSampler(random_interleav=10)


def test_an_objective_that_never_reports_is_warned_once_with_the_fix():
    """Optuna's habit (return one value) gives ERAHBO no data: one warning says so."""
    sampler = ERAHBOSampler(**OPTS)
    study = new_study(sampler)
    with pytest.warns(UserWarning, match=r"trial 0 completed without a report.*trial.report") as w:
        study.optimize(lambda t: train(t.suggest_float("x", 0.0, 1.0), 0), n_trials=3)
    assert sum("without a report" in str(m.message) for m in w) == 1
    assert recommended_trial(study) is None
