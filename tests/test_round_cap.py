"""A round's most seeds while the configurations differ by their means (``k_max_means``).

ERAHBO's rule (:class:`erahbo.optimizer.replication.AdaptiveK`) may end a round at
``k_max_means`` seeds instead of ``k_max`` when the round opens while the study's replicated
configurations differ mostly by their means (one-seed optimism's test,
:func:`erahbo.gp.round.one_seed_in_force`, false): there a mean, not a spread, sets the
ranking, and a few seeds measure it (docs/results/one_seed_models, sessions 41-46).
:func:`erahbo.optimizer.rounds.round_most` decides a round's most seeds; the optimizer's own
rounds, the hosts' whole-round trials and :meth:`erahbo.Optimizer.stopping_decision` read it.
"""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

import erahbo
from erahbo.experiments.methods import parse_method
from erahbo.optimizer.host import whole_round_seeds
from erahbo.optimizer.options import Options
from erahbo.optimizer.replication import AdaptiveK, FixedK, Race, rule_from_json
from erahbo.optimizer.rounds import round_most
from resume_helpers import journaled_trials

SPACE = {"x0": ("float", 0.0, 1.0), "x1": ("float", 0.0, 1.0)}


def _means_objective(config: dict, seed: int) -> float:
    """Configurations differ by their means (a bowl), with the same small spread everywhere:
    deterministic in (configuration, seed)."""
    g = np.random.default_rng([seed, int(config["x0"] * 1e6), int(config["x1"] * 1e6)])
    return float(-(config["x0"] - 0.6) ** 2 - (config["x1"] - 0.4) ** 2
                 + 0.05 * g.standard_normal())


def _data(ybar, s2, k) -> SimpleNamespace:
    return SimpleNamespace(ybar=np.asarray(ybar, float), s2=np.asarray(s2, float),
                           k=np.asarray(k, float))


def test_round_most_follows_how_the_replicated_configurations_differ():
    """k_max_means where the means set the spread of the sample MV (or too few configurations
    are replicated to tell), k_max where the variances do; a rule without k_max_means, or a
    fixed-k rule, has one most everywhere."""
    rule = AdaptiveK(k_min=1, k_max=20, k_max_means=10)
    spread = _data([0.0, 0.1, 0.2, 9.0], [0.1, 0.5, 0.9, 0.0], [2, 2, 3, 1])
    assert round_most(rule, spread, 3.0) == 20  # the variance term dominates at alpha 3
    assert round_most(rule, spread, 0.05) == 10  # the means tell them apart at alpha 0.05
    assert round_most(rule, _data([0.0, 0.1, 9.0], [0.1, 0.9, 0.0], [2, 2, 1]), 3.0) == 10
    for other in (AdaptiveK(k_min=1, k_max=20), FixedK(k=3)):
        assert round_most(other, spread, 0.05) == round_most(other, spread, 3.0) == other.most


def test_the_rule_ends_a_round_at_its_most_seeds():
    """At the round's most seeds the round ends "k_max" (eq. 12 first: a dominated round is
    "dominated"); a seed batch never runs past it; a host's whole-round trial and a pruner's
    verdict stop there too; racing likewise."""
    rule = AdaptiveK(k_min=1, k_max=20, seed_batch=4, k_max_means=10)
    assert rule.after_tell(10, 4, 50, ucb_mv=1.0, B_t=0.0, most=10) == "k_max"
    assert rule.after_tell(10, 4, 50, ucb_mv=1.0, B_t=0.0) is None  # the rule's k_max: 20
    assert rule.after_tell(10, 4, 50, ucb_mv=-1.0, B_t=0.0, most=10) == "dominated"
    assert rule.after_tell(9, 4, 50, ucb_mv=1.0, B_t=0.0, most=10) is None
    assert rule.next_trial_seeds(8, 50, 100, most=10) == 2
    assert rule.next_trial_seeds(8, 50, 100) == 4
    assert rule.round_seeds(1, 100, most=10) == 10 and rule.round_seeds(1, 100) == 20
    assert rule.verdict(10, None, most=10)[0] == "k_max"
    assert rule.verdict(10, lambda: (1.0, 0.0), most=10)[0] == "k_max"
    assert rule.verdict(10, lambda: (1.0, 0.0))[0] is None
    race = Race(k_min=2, k_max=20, k_max_means=4)
    assert race.after_tell(4, 2, 50, sample_gap=1.0, most=4) == "k_max"
    assert race.after_tell(4, 2, 50, sample_gap=1.0) is None


def test_a_study_whose_configurations_differ_by_their_means_ends_rounds_at_k_max_means():
    """On a bowl with one spread everywhere no BO round runs past k_max_means = 3, and some
    round reaches it (ending "k_max"); without the option rounds may run to k_max."""
    kw = dict(budget=80, seed=2, k_min=1, k_max=8, raw_samples=64, n_polish=1)
    res = erahbo.optimize(_means_objective, SPACE, k_max_means=3, **kw)
    bo = res.rounds[res.rounds.phase == "bo"]
    assert (bo.k <= 3).all()
    assert ((bo.k == 3) & (bo.stop_reason == "k_max")).any()
    assert res.settings["k_max_means"] == 3


def _warm_optimizer(k_max_means: int | None) -> erahbo.Optimizer:
    """An optimizer on a warm start of a 4 x 4 grid of the bowl with 2 seeds each, built by
    hand: its replicated configurations differ by their means; no random rounds."""
    grid = [{"x0": a, "x1": b} for a in (0.1, 0.4, 0.7, 1.0) for b in (0.1, 0.4, 0.7, 1.0)]
    runs = [{"config": c, "returns": [_means_objective(c, 0), _means_objective(c, 1)],
             "seeds": [0, 1]} for c in grid]
    return erahbo.Optimizer(SPACE, method="erahbo", budget=60, seed=3, n_init=0, k_min=1,
                            warm_start=runs, k_max_means=k_max_means, random_interleave=0,
                            raw_samples=64, n_polish=1)


def test_the_hosts_read_the_rounds_most_seeds():
    """A host's whole-round trial asks for the round's most seeds, and a pruner's verdict on
    returns above every configuration (never dominated) ends at k_max_means, not k_max."""
    capped, plain = _warm_optimizer(3), _warm_optimizer(None)
    for opt, most in ((capped, 3), (plain, 20)):
        trial = opt.ask()
        assert trial.phase == "bo"
        assert whole_round_seeds(opt, trial) == most
    best = {"x0": 0.6, "x1": 0.4}
    high = [1.0, 1.1, 0.9]
    assert capped.stopping_decision(best, high)[0] == "k_max"
    assert plain.stopping_decision(best, high)[0] is None


def test_a_study_with_the_option_resumes_exactly(tmp_path):
    """Cut after 12 tells and resumed from its journal: the same trials as the straight run
    (a round's most seeds is decided again from the same data)."""
    kw = dict(budget=50, seed=1, k_min=1, k_max=6, k_max_means=2, raw_samples=64, n_polish=1)

    def run(path, stop=None):
        return journaled_trials(SPACE, path, _means_objective, stop, **kw)

    ref = run(tmp_path / "ref.db")
    head = run(tmp_path / "cut.db", stop=12)
    assert head + run(tmp_path / "cut.db") == ref
    assert any(len(s) == 1 for _, s in ref)


def test_the_option_is_checked_named_and_travels_in_json():
    """Off unless given (every preset, every space); given, the rule carries it and its JSON
    too; a value outside [k_min, k_max], under 2, or under another method is refused by name;
    the benchmark's method name erahbo-kmm<N> gives it, alone or joined with other variants
    (each word its own options, none twice)."""
    assert Options(budget=50).k_max_means is None
    assert Options(budget=50, preset="paper").k_max_means is None
    assert erahbo.Optimizer(SPACE, budget=40, seed=1).replication.round_most(True) == 20
    opt = erahbo.Optimizer(SPACE, budget=40, seed=1, k_max_means=5)
    assert opt.replication.round_most(True) == 5 and opt.replication.round_most(False) == 20
    rule = AdaptiveK(k_min=1, k_max=20, k_max_means=5)
    assert rule_from_json(rule.to_json()) == rule
    with pytest.raises(ValueError, match="k_max_means=25 must lie between k_min=1 and k_max=20"):
        Options(budget=50, k_max_means=25)
    with pytest.raises(ValueError, match="k_max_means=3 must lie between k_min=4"):
        Options(budget=50, k_min=4, k_max_means=3)
    with pytest.raises(ValueError, match="k_max_means"):
        Options(budget=50, k_max_means=1)
    with pytest.raises(ValueError, match="applies to ERAHBO's rounds only"):
        Options(budget=50, method="rahbo", k=2, k_max_means=5)
    m = parse_method("erahbo-kmm10")
    assert m.method == "erahbo" and m.options == {"k_max_means": 10}
    both = parse_method("erahbo-abv1-kmm10")  # variants joined: the options of each
    assert both.options == {"acquisition_beta_var": 1.0, "k_max_means": 10}
    assert both.label == "ERAHBO (acquisition beta_var 1, at most 10 seeds a round while the " \
                         "means differ)"
    for bad in ("erahbo-abv1-abv0.5", "erahbo-abv1-nope", "erahbo-abv1-smac"):
        with pytest.raises(ValueError, match=f"unknown method '{bad}'.*several of these"):
            parse_method(bad)


def _bowl_run(x: float, seed: int) -> float:
    """One run of a 1-D bowl with one small spread everywhere (deterministic in (x, seed))."""
    g = np.random.default_rng([seed, int(x * 1e6)])
    return float(-(x - 0.6) ** 2 + 0.05 * g.standard_normal())


def test_the_optuna_sampler_ends_its_rounds_at_k_max_means():
    """Through ERAHBOSampler and its pruner (CleanRL's pattern: a report per seed): on a bowl
    no trial after the initial design trains more than k_max_means = 3 seeds, and some trial
    trains that many and completes (its round ended at k_max_means, not pruned)."""
    optuna = pytest.importorskip("optuna")
    from conftest import cleanrl_objective_for
    from erahbo.integrations.optuna import ERAHBOSampler

    optuna.logging.set_verbosity(optuna.logging.ERROR)
    sampler = ERAHBOSampler(seed=0, n_init=4, k_init=2, k_min=1, k_max=8, k_max_means=3,
                            random_interleave=0, raw_samples=64, n_polish=1)
    study = optuna.create_study(direction="maximize", sampler=sampler, pruner=sampler.pruner)
    study.optimize(cleanrl_objective_for(_bowl_run), n_trials=20)
    later = [t for t in study.trials if t.number >= 4]
    assert max(len(t.user_attrs["erahbo_seeds"]) for t in later) <= 3
    assert max(len(t.intermediate_values) for t in later) <= 3
    assert any(len(t.intermediate_values) == 3 and t.state.name == "COMPLETE" for t in later)
