"""Presets: erahbo's defaults for method="erahbo" and the paper's exact settings one option away."""

from __future__ import annotations

import pytest

import erahbo
from erahbo.experiments import StudySettings, parse_method
from erahbo.optimizer.options import ERAHBO_DEFAULTS, PAPER_SETTINGS, Options


def test_paper_preset_is_the_papers_settings():
    o = Options(method="erahbo", preset="paper", budget=400)
    assert (o.beta, o.beta_stop, o.k_min, o.k_max, o.n_init, o.refit_every) == (
        2.5, 1.0, 2, 20, 5, 0)
    assert o.k_init_value == 20 and o.refit_growth == 0.0  # k_init = k_max, fitted once


def test_default_preset_uses_erahbos_defaults_and_names_win():
    o = Options(method="erahbo", budget=400)
    for name, value in ERAHBO_DEFAULTS.items():
        assert getattr(o, name) == value
    given = Options(method="erahbo", budget=400, beta_stop=0.7, k_init=4)
    assert given.beta_stop == 0.7 and given.k_init_value == 4


@pytest.mark.parametrize("method", ["rahbo", "gpucb", "random"])
def test_fixed_k_methods_keep_the_papers_settings_under_both_presets(method):
    a, b = Options(method=method, budget=400), Options(method=method, budget=400, preset="paper")
    sa = a.settings_json()
    # but for the seed cap (the paper pools a re-selected configuration's seeds without limit)
    sb = b.settings_json()
    assert sa.pop("max_seeds") == 20 and sb.pop("max_seeds") == 0  # 0: no limit
    assert sa == sb
    for name, value in PAPER_SETTINGS.items():
        if value is not None:
            assert getattr(a, name) == value
    assert a.k_init_value == a.k


def test_unknown_preset_names_the_choices():
    with pytest.raises(ValueError, match=r"preset='papr' must be one of \('default', 'paper'\)"):
        Options(preset="papr")


def test_refit_growth_refits_at_each_doubling():
    space = {"x": ("float", 0.0, 1.0), "y": ("float", 0.0, 1.0)}

    def f(c, s):
        return -((c["x"] - 0.3) ** 2) - (c["y"] - 0.6) ** 2 + 0.01 * ((s * 7919) % 13)

    opt = erahbo.Optimizer(space, "rahbo", budget=70, k=2, n_init=5, refit_growth=2.0, seed=1,
                           raw_samples=64, n_polish=1)
    fits = []  # each fit gives the round models new settings (hyperparameters)
    while (trial := opt.ask()) is not None:
        opt.tell(trial, [f(trial.config, s) for s in trial.seeds])
        if opt.model_settings is not None and (not fits or opt.model_settings is not fits[-1]):
            fits.append(opt.model_settings)
    # 35 configurations: fits on 5, 10, 20 (and 40 is never reached)
    assert len(fits) == 3
    with pytest.raises(ValueError, match=r"refit_growth=1 must be > 1 .* or 0 \(never refit"):
        Options(refit_growth=1)


def test_erahbo_refits_at_each_doubling_by_default_and_fixed_hyperparameters_are_not_refit():
    # Rule (session 26): ERAHBO's default refits the GPs' hyperparameters at each doubling of
    # the evaluated configurations; 0 is never (the paper, the fixed-k methods); fixed
    # hyperparameters are never refit unless a refit is asked for by name.
    assert Options().refit_growth == 2.0
    assert Options(refit_growth=0).refit_growth == 0.0
    assert Options(method="rahbo").refit_growth == 0.0
    # measured in MV; the tail measures keep one fit (session 26: a loss on one set)
    assert Options(risk="cvar", q=0.1).refit_growth == 0.0
    assert Options(risk="quantile", q=0.1, refit_growth=2).refit_growth == 2.0
    space = {"x": ("float", 0.0, 1.0)}
    fit = erahbo.Optimizer(space, seed=0, n_init=3, k_init=2)
    for _ in range(3):  # the initial design
        t = fit.ask()
        fit.tell(t, [t.config["x"] + 0.1 * s for s in range(len(t.seeds))])
    hyper = fit.fit_hyperparameters()
    assert erahbo.Optimizer(space, hyperparameters=hyper).options.refit_growth == 0.0
    with pytest.raises(ValueError, match=r"refit_growth=2.0 refits .* give refit_growth=0"):
        erahbo.Optimizer(space, hyperparameters=hyper, refit_growth=2.0)


def test_a_journal_that_stored_refit_growth_none_reads_as_never():
    # Rule: journals of settings schema 2 written before session 26 stored "never" as None;
    # today None is "not given" (ERAHBO's default, 2), so the stored None reads as 0 and the
    # resumed study keeps its one fit.
    from erahbo.optimizer.options import normalize_settings

    stored = {**Options(refit_growth=0).settings_json(), "refit_growth": None}
    assert normalize_settings(stored)["refit_growth"] == 0.0
    assert normalize_settings(Options().settings_json())["refit_growth"] == 2.0


def test_benchmark_method_erahbo_paper_sets_the_preset():
    spec = parse_method("erahbo-paper")
    assert spec.method == "erahbo" and spec.options == {"preset": "paper"}
    assert StudySettings(preset="paper").overrides()["preset"] == "paper"


def test_recommend_beta_zero_recommends_the_best_posterior_mean():
    import numpy as np

    space = {"x": ("float", 0.0, 1.0)}

    def f(c, s):
        return -((c["x"] - 0.3) ** 2) + 0.05 * np.sin(97.0 * s)

    opts = dict(budget=40, k=2, n_init=5, seed=3, raw_samples=64, n_polish=1)
    a = erahbo.Optimizer(space, "rahbo", recommend_beta=0.0, **opts)
    while (trial := a.ask()) is not None:
        a.tell(trial, [f(trial.config, s) for s in trial.seeds])
    rm = a.round_model()
    d = a.data
    mf, _, mv, _ = rm.predict(d.U)
    best_mean = int(np.argmax(mf - 1.0 * mv))  # alpha 1
    assert a.incumbent_id == d.config_ids[best_mean]
    with pytest.raises(ValueError, match="recommend_beta=-1 must be >= 0"):
        Options(recommend_beta=-1)


@pytest.mark.parametrize(("options", "fix"), [
    ({"schedule": "exponential"}, "give beta_stop > 0"),  # the default beta_stop is 0
    ({"schedule": "sigmoid", "beta_stop": 0.0, "preset": "paper"}, "give beta_stop > 0"),
    ({"pool_share": 0.2, "max_seeds": 0}, "give max_seeds > 0"),
    ({"pool_share": 0.2, "preset": "paper"}, "give max_seeds > 0"),
    ({"random_top": 0.2, "random_interleave": 0}, "give random_interleave > 0"),
    ({"random_top": 0.2, "preset": "paper"}, "give random_interleave > 0"),
    # k_min=2: the race compares sample variances (one seed, the default k_min, has none)
    ({"stopping": "race", "seed_batch": 2, "k_min": 2}, "drop seed_batch"),
])
def test_options_that_would_do_nothing_together_are_refused_with_the_fix(options, fix):
    """Rule: a combination in which one option has no effect (a beta_stop schedule of 0, a
    pool beyond no cap, a random-draw share without random rounds, seed batches under racing)
    is refused, and the message names the fix."""
    with pytest.raises(ValueError, match=fix):
        Options(method="erahbo", budget=200, **options)
    fixed = {"beta_stop": 1.0, "max_seeds": 20, "random_interleave": 50, "seed_batch": 1}
    key = {"give beta_stop > 0": "beta_stop", "give max_seeds > 0": "max_seeds",
           "give random_interleave > 0": "random_interleave", "drop seed_batch": "seed_batch"}
    Options(method="erahbo", budget=200, **{**options, key[fix]: fixed[key[fix]]})  # accepted


def test_validated_options_keep_what_was_given_when_the_optimizer_completes_them(tmp_path):
    """Rule: options valid on their own stay valid when an optimizer completes them (the
    random design's length for its space, a journal's failure policy): nothing the preset
    filled in is read as given by name. ``max_seeds=0`` with the preset's ``pool_share`` is
    valid; ``pool_share`` given with no cap is refused (as before)."""
    opts = erahbo.Options(budget=30, n_init=3, max_seeds=0)
    with erahbo.Optimizer({"x": ("float", 0.0, 1.0)}, options=opts,
                          journal=tmp_path / "s.db") as opt:
        while (trial := opt.ask()) is not None:
            opt.tell(trial, [trial.config["x"] + 0.01 * s for s in trial.seeds])
        settings = opt.study_settings()
    assert settings["failures"] == "penalize" and settings["max_seeds"] == 0
    assert settings["random_interleave"] == 20  # resolved for the continuous space
    assert opts.failures is None and opts.random_interleave is None  # the caller's, untouched
    with pytest.raises(ValueError, match="drop pool_share"):
        erahbo.Options(budget=30, max_seeds=0, pool_share=0.25)


def test_the_refusal_names_the_random_design_length_in_force():
    """Rule: ``random_top`` without random rounds is refused naming the length in force (the
    paper preset's 0), not the unresolved option."""
    with pytest.raises(ValueError, match="random_interleave=0 has none: give random_interleave"):
        Options(method="erahbo", budget=200, random_top=0.2, preset="paper")
