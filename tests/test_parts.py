"""The options of the strategy's parts are declared once (erahbo.optimizer.parts.PARAMS) and
reach every place that lists options: Options (check, presets, study settings, old journals),
the CLI flags, the Hydra sweeper's keys, the Optuna sampler's keywords and the method names.
Nothing here runs a study; each option's behaviour is tested in its own file and in
test_option_table.py."""

from __future__ import annotations

import dataclasses
import inspect

import pytest

from erahbo.optimizer.options import (
    ERAHBO_DEFAULTS,
    PAPER_SETTINGS,
    SCHEMA_1_ABSENT,
    Options,
    normalize_settings,
)
from erahbo.optimizer.parts import HOST_PARAMS, PARAMS, PARTS

IDS = [p.name for p in PARAMS]
#: A valid value given by name, with the options it needs, where the fallback below (the
#: paper's value, 0 for an option resolved from the others) is not one: options read by one
#: risk measure only (erahbo.risk refuses them with another), ``bound_min_seeds`` (>= 1) and
#: ``rho_max2_spread`` (> 0).
NEEDS = {"q": ({"risk": "cvar"}, 0.25), "c": ({"risk": "mean_std"}, 2.0),
         "bound_min_seeds": ({}, 2), "k_max_means": ({}, 5), "rho_max2_spread": ({}, 0.3)}
HOSTED = [p.name for p in HOST_PARAMS]


def test_every_part_declares_and_checks_its_own_options():
    """Rule: each part module declares PARAMS and a check(options, given); an option belongs
    to one part."""
    for part in PARTS:
        assert part.PARAMS and callable(part.check), part.__name__
    assert len(IDS) == len(set(IDS))


@pytest.mark.parametrize("p", PARAMS, ids=IDS)
def test_options_derive_presets_schema_and_settings_from_the_declaration(p):
    """Rule: the Options field of the same name takes the declared preset values (or the
    resolved value), a journal without the setting means Param.absent, and the study settings
    store the value in force."""
    assert p.name in Options.names()
    erahbo, paper = Options(method="erahbo"), Options(method="erahbo", preset="paper")
    if p.resolve is None:
        assert ERAHBO_DEFAULTS[p.name] == p.default == getattr(erahbo, p.name)
        assert PAPER_SETTINGS[p.name] == p.paper == getattr(paper, p.name)
        assert getattr(Options(method="rahbo"), p.name) == p.paper  # fixed-k: the paper's
    else:
        assert p.name not in ERAHBO_DEFAULTS and p.name not in PAPER_SETTINGS
        assert erahbo.settings_json()[p.name] == p.resolve(erahbo)
    assert SCHEMA_1_ABSENT[p.name] == p.absent
    old = {k: v for k, v in erahbo.settings_json().items() if k not in (p.name, "schema")}
    assert normalize_settings(old)[p.name] == p.absent
    new = erahbo.settings_json()
    del new[p.name]  # an option added after a journal of today's schema was written
    assert normalize_settings(new)[p.name] == p.absent


@pytest.mark.parametrize("p", PARAMS, ids=IDS)
def test_a_bad_value_is_refused_by_the_parts_rule(p):
    bad = "x" if p.type is not bool else 2
    with pytest.raises((TypeError, ValueError), match=p.name):
        Options(**{p.name: bad})


@pytest.mark.parametrize("p", HOST_PARAMS, ids=HOSTED)
def test_each_option_is_a_cli_flag_a_hydra_key_and_an_optuna_keyword(p):
    pytest.importorskip("hydra")
    pytest.importorskip("optuna")
    from erahbo.cli.optimize_cmd import optimize
    from erahbo.cli.tune import tune
    from erahbo.integrations.optuna import ERAHBOSampler
    from hydra_plugins.erahbo_sweeper.config import ErahboSweeperConf

    for command in (optimize, tune):
        flags = inspect.signature(command).parameters
        assert (p.name in flags) == p.cli
        if p.cli:
            assert flags[p.name].default.help == p.help and flags[p.name].annotation is p.type
    conf = {f.name: f.default for f in dataclasses.fields(ErahboSweeperConf)}
    assert conf[p.name] is None  # None: the preset's
    # a valid value, given by name (with the risk measure that reads it: erahbo.risk)
    extra, value = NEEDS.get(p.name, ({}, 0 if p.paper is None else p.paper))
    assert ERAHBOSampler(**extra, **{p.name: value})._options[p.name] == value


def test_the_replication_rules_core_options_are_listed_by_each_host_itself():
    """Rule: an option with ``hosts=False`` (the replication rule's k, k_min, k_max,
    seed_batch, stopping; the beta_stop schedule's) derives no flag, key or keyword: each host
    lists it itself, an unset k_max meaning the preset's in every host (session 43: erahbo tune
    and the Hydra sweeper had 10, so ``--preset paper`` there was not the paper's), and the Optuna
    sampler, whose trial runs a whole round, refuses seed_batch and stopping as unknown. The
    early-stopping part's options (issue 39) reach no host yet: a host cannot stop a run.
    ``refit_evidence`` (session 25) is a library option like ``refit_every`` and
    ``refit_growth``, which no host lists: it acts only where a study refits."""
    pytest.importorskip("hydra")
    pytest.importorskip("optuna")
    from erahbo.cli.optimize_cmd import optimize
    from erahbo.cli.tune import tune
    from erahbo.integrations.optuna import ERAHBOSampler
    from hydra_plugins.erahbo_sweeper.config import ErahboSweeperConf

    own = {p.name for p in PARAMS if not p.hosts}
    assert own == {"k", "k_min", "k_max", "seed_batch", "stopping",
                   "beta_stop", "schedule", "gamma", "slope", "early_stop", "early_stop_beta",
                   "refit_evidence"}
    assert not own & set(HOSTED)
    for name in ("beta_stop", "schedule", "gamma", "slope"):
        assert name in inspect.signature(optimize).parameters
        assert name in inspect.signature(tune).parameters
    tune_flags = inspect.signature(tune).parameters
    assert tune_flags["k_max"].default.default is None and tune_flags["k"].default.default == 5
    conf = {f.name: f.default for f in dataclasses.fields(ErahboSweeperConf)}
    assert conf["k_max"] is None and conf["seed_batch"] == 1
    for name in ("k", "k_min", "k_max", "seed_batch"):
        assert name in inspect.signature(optimize).parameters and name in conf
    assert "beta_stop" in conf
    for name in ("refit_evidence", "refit_growth"):
        assert name not in inspect.signature(optimize).parameters and name not in conf
    sampler = ERAHBOSampler(k_min=2, k_max=6, k=3, beta_stop=0.5)
    assert (sampler.k_min, sampler.k_max, sampler.k) == (2, 6, 3)
    assert sampler._options["beta_stop"] == 0.5
    for name, value in (("seed_batch", 2), ("stopping", "race")):
        with pytest.raises(TypeError, match=f"unknown option.*'{name}'"):
            ERAHBOSampler(**{name: value})


def test_the_optuna_sampler_refuses_a_name_that_is_no_parts_option():
    pytest.importorskip("optuna")
    from erahbo.integrations.optuna import ERAHBOSampler

    with pytest.raises(TypeError, match=r"unknown option.*'budget'.*random_top"):
        ERAHBOSampler(budget=10)


def test_method_codes_are_distinct_and_parse_to_their_option():
    """Rule: ``erahbo-<short><value>`` sets the part's option (a word for a word option:
    ``erahbo-vnlog``); codes are unique and not the core variants' (exp, sig, bs, b)."""
    from erahbo.experiments.methods import parse_method

    coded = [p for p in PARAMS if p.short]
    shorts = [p.short for p in coded]
    assert len(shorts) == len(set(shorts)) and not set(shorts) & {"exp", "sig", "bs", "b"}
    for p in coded:
        text = {bool: "0", int: "7", float: "0.5"}.get(p.type, str(p.default))  # str: a word
        spec = parse_method(f"erahbo-{p.short}{text}")
        assert spec.method == "erahbo" and list(spec.options) == [p.name]
        assert spec.label.startswith("ERAHBO (")
