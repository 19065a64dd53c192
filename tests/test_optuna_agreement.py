"""The Optuna sampler and the core agree: an Optuna study with :class:`ERAHBOSampler` and an
:class:`erahbo.Optimizer` fed the same trials (same space, options and seed; a deterministic
objective) give the next trial of a configuration the same number of seeds and the same
seeds, and recommend the same configuration with the same bounds.

The reference optimizer is built by ``tests/optuna_core.py`` from the study's trials as the
user's objective ran them, without the sampler's code. The rules it is asked for are the
core's (``Rule.opening_seeds`` / ``Rule.round_seeds`` of the rule in force, the seed caps'
``seeds_left``, the configuration's seed stream ``next_seeds``, ``recommend`` and
``Result.configs``), so an adapter that computes any of them itself fails here once its copy
drifts. Checked by altering the adapter alone, one change at a time (each made the tests
below fail, then was reverted): its seeds back to "consecutive after the used ones" (the old
``_optuna_trials.next_seeds``); its seed count ignoring the seed cap (``min(k_max, n + left)``
with ``left = inf``); its bounds at the acquisition's ``beta`` instead of the recommender's.
Altering the core's rule alone (e.g. the seed stream's key in ``StudyState.next_seeds``) is
followed by the adapter, which calls it: the two still agree.
"""

import math

import pytest

optuna = pytest.importorskip("optuna")

from optuna.trial import TrialState  # noqa: E402

from conftest import two_peaks_run  # noqa: E402
from erahbo.integrations.optuna import (  # noqa: E402
    RECOMMENDATION,
    ERAHBOSampler,
    trial_seeds,
)
from erahbo.optimizer import Optimizer  # noqa: E402
from optuna_core import core_optimizer  # noqa: E402

optuna.logging.set_verbosity(optuna.logging.WARNING)
SPACE = {"x": ("float", 0.0, 1.0)}
# a strict seed cap (max_seeds, no pool beyond it) below k_init + k_max: a configuration that
# runs again may get fewer seeds than k_max; challenger rounds from the first BO round (no
# random rounds); the recommendation's confidence not the acquisition's
OPTS = dict(seed=3, n_init=3, k_init=2, k_min=2, k_max=5, max_seeds=6, pool_share=0.0,
            random_interleave=0, recommend_beta=1.0, raw_samples=128, n_polish=2)


def new_study(sampler):
    return optuna.create_study(direction="maximize", sampler=sampler, pruner=sampler.pruner)


def train(study, trial):
    """CleanRL's pattern on a deterministic objective: a report per seed, stop on prune."""
    x = trial.params["x"] if "x" in trial.params else trial.suggest_float("x", 0.0, 1.0)
    for step, seed in enumerate(trial_seeds(trial)):
        trial.report(two_peaks_run(x, seed), step)
        if trial.should_prune():
            study.tell(trial, state=TrialState.PRUNED)
            return
    study.tell(trial, 0.0)


def expected_seeds(core: Optimizer, config: dict, phase: str) -> list[int]:
    """The seeds the core gives the next trial of ``config`` that runs a whole round of
    ``phase`` (an enqueued trial, ``"given"``: a new round of the rule's most seeds), within
    the seed caps: the first seeds of a round and what the caps leave after them
    (``Rule.round_seeds``), from the configuration's seed stream (``next_seeds``)."""
    rule, cid = core.replication, core.config_id_of(config)
    left = core.seeds_left(cid)
    if phase == "given":
        n = int(min(rule.most, left))
    else:
        first = rule.opening_seeds(core.free_seeds, left)
        n = rule.round_seeds(first, left - first, random_round=phase == "random")
    return core.next_seeds(cid, n)


def assert_same_recommendation(sampler, study):
    """The sampler's recommendation (its answer and the study's attribute, with its bounds)
    is the core's over the same trials (``recommend`` and its row of ``Result.configs``)."""
    core = core_optimizer(SPACE, study, study.trials, **OPTS)
    cfg = core.recommend()
    assert sampler.recommend(study)["x"] == pytest.approx(cfg["x"], abs=1e-12)
    shown = study.user_attrs[RECOMMENDATION]
    assert shown["params"]["x"] == pytest.approx(cfg["x"], abs=1e-12)
    row = core.result().configs.set_index("config_id").loc[core.incumbent_id]
    assert shown["k"] == row["k"]
    for name in ("mv", "lcb_mv", "ucb_mv"):
        assert shown[name] == pytest.approx(row[name], rel=1e-9, abs=1e-12)


def test_the_initial_design_is_the_cores_configurations_and_seeds():
    """The first ``n_init`` trials are the configurations and seeds the core's own study
    asks first (its initial design, each configuration's seed stream); the first trial's
    parameters are Optuna's (drawn before the space is known), its seeds the core's."""
    sampler = ERAHBOSampler(**OPTS)
    study = new_study(sampler)
    core = Optimizer(SPACE, **OPTS)
    for i in range(OPTS["n_init"]):
        t = core.ask()
        trial = study.ask()
        x = trial.suggest_float("x", 0.0, 1.0)
        if i:  # (the first trial's parameters are drawn before Optuna knows the space)
            assert x == pytest.approx(t.config["x"], abs=1e-12)
        assert trial_seeds(trial) == t.seeds
        train(study, trial)
        core.tell(t, [two_peaks_run(x, s) for s in t.seeds])


def test_the_next_trial_and_the_recommendation_agree_with_an_optimizer_fed_the_trials():
    """Over several rounds, including configurations that run again (challenger rounds,
    enqueued ones under the seed cap): each new trial's seed count and seeds are those the
    core gives that configuration, and after each trial the recommendation and its bounds
    are the core's."""
    sampler = ERAHBOSampler(**OPTS)
    study = new_study(sampler)
    for _ in range(OPTS["n_init"]):
        train(study, study.ask())
    phases, again = [], 0
    for r in range(8):
        if r in (2, 5):  # a configuration that ran: the recommendation's, again
            study.enqueue_trial(dict(study.user_attrs[RECOMMENDATION]["params"]))
        core = core_optimizer(SPACE, study, study.trials, **OPTS)
        trial = study.ask()
        x = trial.suggest_float("x", 0.0, 1.0)
        phase = study.trials[trial.number].system_attrs["erahbo:phase"]
        phases.append(phase)
        again += any(t.params.get("x") == x for t in study.trials[:trial.number])
        assert trial.user_attrs["erahbo_seeds"] == expected_seeds(core, {"x": x}, phase)
        if not trial.user_attrs["erahbo_seeds"]:  # the cap left it nothing
            study.tell(trial, state=TrialState.PRUNED)
            continue
        train(study, trial)
        assert_same_recommendation(sampler, study)
    assert "given" in phases and again >= 2  # the replicated case is exercised
    assert any(len(t.user_attrs["erahbo_seeds"]) < OPTS["k_max"]
               for t in study.trials if t.system_attrs["erahbo:phase"] == "given")
    assert math.isfinite(study.user_attrs[RECOMMENDATION]["lcb_mv"])
