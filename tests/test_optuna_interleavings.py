"""Two ERAHBOSampler workers on one storage, their steps interleaved by hand in one process:
the orders that real workers (``test_optuna_workers.py``) reach only now and then, built here
without timing.

Each worker is a study object with its own sampler on a shared in-memory storage. A trial's
finish is Optuna's ``tell`` in its two steps: the sampler's ``after_trial`` (the trial still
running in the storage), then its state stored.
"""

import math

import pytest

optuna = pytest.importorskip("optuna")

from optuna.trial import TrialState  # noqa: E402

from conftest import cleanrl_objective as objective  # noqa: E402
from conftest import two_peaks_run as train  # noqa: E402
from erahbo.integrations.optuna import RECOMMENDATION, ERAHBOSampler, trial_seeds  # noqa: E402

optuna.logging.set_verbosity(optuna.logging.WARNING)
OPTS = dict(seed=0, n_init=4, k_init=2, k_min=2, k_max=6, raw_samples=128, n_polish=2)


def two_workers(n_first=6, **opts):
    """Two workers on a study that ran ``n_first`` trials (a third sampler ran them)."""
    storage = optuna.storages.InMemoryStorage()
    first = ERAHBOSampler(**OPTS)
    optuna.create_study(storage=storage, study_name="s", direction="maximize", sampler=first,
                        pruner=first.pruner).optimize(objective, n_trials=n_first)
    return [optuna.load_study(study_name="s", storage=storage, sampler=s, pruner=s.pruner)
            for s in (ERAHBOSampler(**OPTS, **opts), ERAHBOSampler(**OPTS, **opts))]


def given(study, x):
    """Ask a trial of configuration ``x`` (enqueued: it gets the adaptive seeds)."""
    study.enqueue_trial({"x": x})
    return study.ask()


def train_seeds(trial, value):
    """The objective's runs: every seed of the trial, ``value(seed)`` each."""
    x = trial.suggest_float("x", 0.0, 1.0)
    for step, seed in enumerate(trial_seeds(trial)):
        trial.report(value(x, seed), step)


def after_trial(study, trial):
    """Optuna's ``tell``, first step: the sampler's hook, the trial still running."""
    frozen = study._storage.get_trial(trial._trial_id)
    study.sampler.after_trial(study, frozen, TrialState.COMPLETE, [0.0])


def store_state(study, trial):
    """Optuna's ``tell``, second step."""
    study._storage.set_trial_state_values(trial._trial_id, TrialState.COMPLETE, [0.0])


def best_row(study):
    res = study.sampler.result(study)
    return res.configs.sort_values("rank").iloc[0]


def far_ahead(x, seed):  # a configuration far better than any other, with little spread
    return 5.0 + 0.01 * (seed % 3)


def assert_recommendation_is(study, trial):
    """erahbo's answer over every finished trial (``result()``'s top row) is ``trial`` (the
    case is exercised), and the study attribute names that trial with its ``k``."""
    row = best_row(study)
    assert int(row["config_id"]) == trial.number
    rec = study.user_attrs[RECOMMENDATION]
    assert (rec["trial"], rec["k"]) == (int(row["config_id"]), int(row["k"]))


def test_the_recommendation_counts_a_trial_that_finishes_in_another_worker_meanwhile():
    """Both workers' trials run their hooks before either state is stored: the second hook
    counts the first trial (it marked itself finishing), so the study's recommendation is
    erahbo's answer over both, as result() gives it once both are stored."""
    wa, wb = two_workers()
    a, b = given(wa, 0.123456789), given(wb, 0.654321)
    train_seeds(a, far_ahead)
    train_seeds(b, train)
    after_trial(wa, a)
    after_trial(wb, b)  # a is still running in the storage
    store_state(wa, a)
    store_state(wb, b)
    assert_recommendation_is(wa, a)


def test_the_last_worker_to_write_the_recommendation_has_seen_every_finishing_trial(
        monkeypatch):
    """b's hook runs entirely while a's hook computes (after a read the study, before it
    writes): a's first answer misses b, so a reads again after writing and writes the answer
    over both; the last write is erahbo's answer over every finished trial."""
    wa, wb = two_workers()
    a, b = given(wa, 0.123456789), given(wb, 0.654321)
    train_seeds(a, train)
    train_seeds(b, far_ahead)
    write = wa.set_user_attr
    calls = []

    def b_finishes_meanwhile(key, value):
        if key == RECOMMENDATION and not calls:
            calls.append(key)
            after_trial(wb, b)  # b sees a finishing: its answer counts both
        write(key, value)

    monkeypatch.setattr(wa, "set_user_attr", b_finishes_meanwhile)
    after_trial(wa, a)
    assert calls  # b's hook ran inside a's
    store_state(wb, b)
    store_state(wa, a)
    assert_recommendation_is(wa, b)


def late_claim(wa, wb, monkeypatch):
    """Worker a decides a trial (reads the claims), then worker b starts a trial, decides the
    same configuration (the same data and seed) and claims its seeds before a writes its
    claim (a's decision took longer than b's ``claim_wait``)."""
    b = []
    claim_seeds = wa.sampler._claim_seeds

    def b_claims_first(*args):
        if not b:
            b.append(wb.ask())
        return claim_seeds(*args)

    monkeypatch.setattr(wa.sampler, "_claim_seeds", b_claims_first)
    a = wa.ask()
    return a, b[0]


def test_a_trial_that_claims_late_moves_past_the_seeds_a_later_trial_settled(monkeypatch):
    """a (the lower number) wrote its claim after b (the higher) settled the same seeds of the
    same configuration: a's claim moves past them, so the two never train a seed twice and
    erahbo's k of the configuration is the number of its distinct runs."""
    wa, wb = two_workers(claim_wait=0.0)
    a, b = late_claim(wa, wb, monkeypatch)
    assert a.number < b.number
    train_seeds(b, train)
    train_seeds(a, train)
    assert a.params == b.params  # the case is exercised: one configuration, claimed twice
    assert not set(trial_seeds(a)) & set(trial_seeds(b))
    for study, trial in ((wb, b), (wa, a)):
        after_trial(study, trial)
        store_state(study, trial)
    row = wa.sampler.result(wa).configs.set_index("config_id").loc[
        min(t.number for t in wa.trials if t.params == a.params)]
    runs = {s for t in (a, b) for s in trial_seeds(t)}
    earlier = {s for t in wa.trials if t.params == a.params and t.number not in (a.number,
                                                                               b.number)
               for s in trial_seeds(t)[:len(t.intermediate_values)]}
    assert int(row["k"]) == len(runs | earlier)


def test_trials_that_claim_one_configuration_train_the_same_parameters(monkeypatch):
    """b's proposal of the configuration differs from a's in the last bit (two processes'
    floating point): one configuration key, two parameter values. a's claim takes the
    parameters of b's settled claim, so Optuna's trials of the configuration agree with
    erahbo's (its k and spread are those of the runs of one parameter value)."""
    wa, wb = two_workers(claim_wait=0.0)
    params = wb.sampler._params

    def last_bit_off(*args):
        return {n: math.nextafter(v, 2.0) for n, v in params(*args).items()}

    monkeypatch.setattr(wb.sampler, "_params", last_bit_off)
    a, b = late_claim(wa, wb, monkeypatch)
    train_seeds(b, train)
    train_seeds(a, train)
    assert a.params == b.params
    assert not set(trial_seeds(a)) & set(trial_seeds(b))
