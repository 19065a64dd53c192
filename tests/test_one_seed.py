"""One seed per configuration first (``k_init = k_min = 1``; :mod:`erahbo.gp.one_seed`).

Rules checked:

* a one-seed configuration tells the variance GP nothing (its posterior is the one without
  it); its placeholder observation is the pooled within-configuration variance (the
  replicated configurations' ``(k - 1)``-weighted sample variances shrunk towards the pilot
  GP's noise); the fast engine rebuilds its caches when such a row gets its second seed;
* without a one-seed configuration the variance GP sees the sample variances themselves (the
  paper's models, the same array);
* both engines give the same inner-loop bounds after one seed at ``x_t``;
* a study with ``k_init = k_min = 1`` runs to its budget, keeps one-seed configurations,
  resumes from its journal to the same trials, and its options are refused where one seed
  cannot work (racing, fixed ``k = 1``);
* what a user reads: no sample variance for a one-seed configuration (NaN in ``configs`` and
  ``rounds``, "no sample std" in tune.md), and the unspent-budget note names the reason that
  applies (fewer runs left than a new configuration starts with, or a spent table).
"""

from __future__ import annotations

import numpy as np
import pytest

import erahbo
from erahbo.gp import GPHyper, RoundSettings, make_engine, make_round
from erahbo.gp.exact import ExactGP
from erahbo.gp.one_seed import PRIOR_DOF, pilot_noise, pooled_variance, variance_observations
from resume_helpers import journaled_trials


def _data(n: int = 9):
    X = np.linspace(0.05, 0.95, n)[:, None]
    ybar = np.sin(6 * X[:, 0]) + 0.3 * np.cos(17 * X[:, 0])  # deterministic "returns"
    k = np.array([1, 3, 1, 2, 1, 1, 4, 1, 2][:n], dtype=float)
    s2 = np.where(k > 1, 0.05 + 0.1 * X[:, 0], 0.0)
    return X, ybar, s2, k


def test_one_seed_rows_observe_the_pooled_variance():
    _, _, s2, k = _data()
    out = variance_observations(s2, k, 0.3)
    rep = k > 1
    expect = (((k[rep] - 1) * s2[rep]).sum() + PRIOR_DOF * 0.3) / ((k[rep] - 1).sum() + PRIOR_DOF)
    assert np.allclose(out[~rep], expect)
    assert pooled_variance(s2, k, 0.3) == pytest.approx(expect)
    assert np.array_equal(out[rep], s2[rep])  # replicated rows keep their sample variance
    assert variance_observations(s2, np.ones_like(k), 0.3)[0] == pytest.approx(0.3)  # pilot only


def test_no_one_seed_configuration_leaves_the_sample_variances():
    _, _, s2, k = _data()
    assert variance_observations(s2, np.maximum(k, 2.0), 0.3) is s2


def test_without_a_pilot_the_prior_is_a_share_of_the_means_variance():
    ybar = np.array([0.0, 1.0, 2.0])
    assert pilot_noise(None, ybar) == pytest.approx(0.1 * 1.0)
    assert pilot_noise(0.7, ybar) == 0.7


def test_a_one_seed_configuration_tells_the_variance_gp_nothing():
    """The variance GP's posterior with the one-seed rows equals the one without them."""
    X, ybar, s2, k = _data()
    hf = GPHyper("rbf", np.array([0.25]))
    hv = GPHyper("rbf", np.array([0.4]), noise=0.05)
    st = RoundSettings(hf, hv, 2.5, None, 0.3)
    v = variance_observations(s2, k, 0.3)
    rm = make_round("fast", make_engine("fast", st), X, ybar, v, k, st)
    rep = k >= 2
    yv = (v - rm.mv) / rm.sv  # the round's standardization
    gp = ExactGP(X[rep], yv[rep], hv.noise, hv.lengthscales, "rbf")
    U = np.linspace(0.0, 1.0, 7)[:, None]
    mu, var = gp.predict(U)
    _, _, mu_v, sd_v = rm.predict(U)
    assert np.allclose(mu_v, rm.mv + rm.sv * mu, rtol=1e-5, atol=1e-7)
    assert np.allclose(sd_v, rm.sv * np.sqrt(var), rtol=1e-5, atol=1e-7)


def test_the_fast_engine_rebuilds_when_a_one_seed_row_gets_its_second_seed():
    X, ybar, s2, k = _data()
    hf = GPHyper("rbf", np.array([0.25]))
    hv = GPHyper("rbf", np.array([0.4]), noise=0.05)
    st = RoundSettings(hf, hv, 2.5, None, 0.3)
    engine = make_engine("fast", st)
    make_round("fast", engine, X, ybar, variance_observations(s2, k, 0.3), k, st)
    k2, s22 = k.copy(), s2.copy()
    k2[0], s22[0] = 2.0, 0.2  # row 0 replicated since
    v2 = variance_observations(s22, k2, 0.3)
    again = make_round("fast", engine, X, ybar, v2, k2, st)
    fresh = make_round("fast", make_engine("fast", st), X, ybar, v2, k2, st)
    U = np.linspace(0.0, 1.0, 5)[:, None]
    for a, b in zip(again.predict(U), fresh.predict(U), strict=True):
        assert np.allclose(a, b, rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("row", [0, 4, 7])
@pytest.mark.parametrize("table", [False, True])
def test_the_fast_engine_keeps_the_rows_before_a_changed_one(row, table):
    """Rule: when a one-seed row gets more seeds, the fast engine rebuilds its caches from
    that row on (the rows before it do not depend on it) and ends where a fresh engine built
    on the new data ends: the same posteriors, ``B_t`` and acquisition argmax over a finite
    table (its candidate sums and nearest rows recomputed) or continuous points."""
    X, ybar, s2, k = _data()
    C = np.linspace(0.0, 1.0, 41)[:, None] if table else None
    hf = GPHyper("rbf", np.array([0.25]))
    hv = GPHyper("rbf", np.array([0.4]), noise=0.05)
    st = RoundSettings(hf, hv, 2.5, None, 0.3)
    engine = make_engine("fast", st, C)
    make_round("fast", engine, X, ybar, variance_observations(s2, k, 0.3), k, st, C)
    assert k[row] == 1
    k2, s22 = k.copy(), s2.copy()
    k2[row], s22[row] = 3.0, 0.2  # this row replicated since
    v2 = variance_observations(s22, k2, 0.3)
    again = make_round("fast", engine, X, ybar, v2, k2, st, C)
    fresh = make_round("fast", make_engine("fast", st, C), X, ybar, v2, k2, st, C)
    U = np.linspace(0.0, 1.0, 7)[:, None]
    for a, b in zip(again.predict(U), fresh.predict(U), strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(again.best_lcb_mv(1.0, 2.5)[0], fresh.best_lcb_mv(1.0, 2.5)[0],
                               rtol=1e-9)
    if table:
        np.testing.assert_allclose(engine.cv, fresh.M.cv, rtol=1e-9, atol=1e-15)
        np.testing.assert_array_equal(engine.nn, fresh.M.nn)
        np.testing.assert_allclose(engine.dAv[: len(X)], fresh.M.dAv[: len(X)], rtol=1e-9)


@pytest.mark.parametrize("row", [None, 0])
def test_both_engines_agree_after_one_seed(row):
    X, ybar, s2, k = _data()
    hf = GPHyper("rbf", np.array([0.25]))
    hv = GPHyper("rbf", np.array([0.4]), noise=0.05)
    st = RoundSettings(hf, hv, 2.5, None, 0.3)
    v = variance_observations(s2, k, 0.3)
    fast = make_round("fast", make_engine("fast", st), X, ybar, v, k, st)
    ref = make_round("reference", None, X, ybar, v, k, st)
    assert fast.s2_one == pytest.approx(v[0])  # what a one-seed x_t observes
    u, y = (np.array([0.52]), 0.7) if row is None else (X[row], ybar[row])
    a = fast.inner(row, u, None, y, 0.0, 1, 0.0, 1.0)
    b = ref.inner(row, u, None, y, 0.0, 1, 0.0, 1.0)
    for name in ("mu_f", "sd_f", "mu_var", "sd_var", "ucb_mv"):
        assert getattr(a, name) == pytest.approx(getattr(b, name), rel=1e-6, abs=1e-9), name


def _study(**kw):
    space = {"x0": ("float", 0.0, 1.0), "x1": ("float", 0.0, 1.0)}

    def obj(c, s):  # deterministic in (configuration, seed)
        g = np.random.default_rng([s, int(c["x0"] * 1e6), int(c["x1"] * 1e6)])
        return -(c["x0"] - 0.7) ** 2 - (c["x1"] - 0.3) ** 2 + 0.05 * g.standard_normal()

    opt = erahbo.Optimizer(space, method="erahbo", budget=40, seed=3, **kw)
    while (t := opt.ask()) is not None:
        opt.tell(t, [obj(t.config, s) for s in t.seeds])
    return opt


def test_a_one_seed_study_runs_to_its_budget_with_one_seed_configurations():
    opt = _study(k_init=1, k_min=1, n_init=10)
    d = opt.state.data
    assert int(d.k.sum()) == 40
    rounds = opt.result().rounds
    init, bo = rounds[rounds.phase == "init"], rounds[rounds.phase == "bo"]
    assert len(init) == 10 and (init.k == 1).all()  # the initial design: one seed each
    assert (bo.k == 1).any() and (d.k == 1).any()  # rounds that stopped at once
    assert opt.models.settings.sigma0_2 > 0  # the pilot GP was fitted
    assert opt.recommend() is not None


@pytest.mark.parametrize("kw, match", [
    ({"k_min": 1, "stopping": "race"}, "stopping='race'"),
    ({"k_max": 1, "k_min": 1}, "k_max"),
])
def test_one_seed_options_refused_where_they_cannot_work(kw, match):
    with pytest.raises(ValueError, match=match):
        erahbo.Optimizer({"x": ("float", 0.0, 1.0)}, method="erahbo", budget=40, **kw)


def test_fixed_k_methods_still_need_two_seeds_per_round():
    with pytest.raises(ValueError, match="k=1"):
        erahbo.Optimizer({"x": ("float", 0.0, 1.0)}, method="rahbo", k=1, budget=40)


def test_a_one_seed_study_resumes_from_its_journal_to_the_same_history(tmp_path):
    """Cut after 17 tells and rebuilt from the journal: the same trials as uninterrupted."""
    space = {"x0": ("float", 0.0, 1.0), "x1": ("float", 0.0, 1.0)}
    kw = dict(method="erahbo", budget=30, seed=1, k_init=1, k_min=1, n_init=6)

    def obj(c, s):
        return -(c["x0"] - 0.7) ** 2 - (c["x1"] - 0.3) ** 2 + 0.01 * (s % 7)

    def run(path, stop=None):
        return journaled_trials(space, path, obj, stop, **kw)

    ref = run(tmp_path / "ref.db")
    head = run(tmp_path / "cut.db", stop=17)
    tail = run(tmp_path / "cut.db")
    assert head + tail == ref


def test_optuna_with_one_seed_first_keeps_one_seed_trials_as_data():
    """ERAHBOSampler(k_init=1, k_min=1): one-seed trials reach the optimizer (not only
    configurations with two runs) and the study has a recommendation."""
    optuna = pytest.importorskip("optuna")
    from erahbo.integrations.optuna import ERAHBOSampler, recommended_trial, trial_seeds

    def objective(trial):
        x = trial.suggest_float("x", 0.0, 1.0)
        vals = []
        for step, seed in enumerate(trial_seeds(trial)):
            vals.append(-(x - 0.3) ** 2 + 0.01 * (seed % 5))
            trial.report(vals[-1], step)
            if trial.should_prune():
                raise optuna.TrialPruned()
        return sum(vals) / len(vals)

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    sampler = ERAHBOSampler(alpha=1.0, k_init=1, k_min=1, k_max=4, n_init=6, seed=0)
    study = optuna.create_study(direction="maximize", sampler=sampler, pruner=sampler.pruner)
    study.optimize(objective, n_trials=14)
    res = sampler.result(study)
    assert res is not None and (res.configs["k"] == 1).any()
    assert recommended_trial(study) is not None


# ------------------------------------------------------------------ what a user reads
def test_one_seed_configurations_show_no_sample_variance_in_any_table():
    """Rule: a configuration with one seed has no sample variance: ``configs`` and ``rounds``
    show NaN for it (not 0), and a value wherever it has two or more."""
    opt = _study(k_init=1, k_min=1, n_init=10)
    res = opt.result()
    c, r = res.configs, res.rounds
    assert (c["k"] == 1).any() and (c["k"] >= 2).any()
    assert (c["var"].isna() == (c["k"] < 2)).all() and (c["std"].isna() == (c["k"] < 2)).all()
    assert (r["var"].isna() == (r["k_total"] < 2)).all()


def test_the_unspent_budget_note_names_why_no_round_started():
    """Rule: a finished study with runs left says why: fewer left than a new configuration
    starts with (2 seeds where k_min and k_init are 2), or a finite table whose every
    configuration is at its seed cap (then whatever k_min)."""
    from types import SimpleNamespace

    import pandas as pd

    from erahbo.cli._decision import unspent_note

    table = pd.DataFrame({"x": [0.0, 0.2, 0.4, 0.6, 0.8, 1.0]})
    for k_min in (1, 2):
        res = erahbo.optimize(lambda c, s: -((c["x"] - 0.3) ** 2) + 0.01 * (s % 7), table,
                              budget=40, n_init=3, k_max=3, pool_share=0.0, k_min=k_min, seed=0)
        assert (res.configs["k"] == 3).all() and len(res.configs) == 6  # the table is spent
        assert "no candidate configuration could take another seed" in unspent_note(res)
    one_left = SimpleNamespace(n_evals=39, history=pd.DataFrame(),
                               settings={"budget": 40, "method": "erahbo", "k_min": 2,
                                         "k_init": 2})
    assert "a new configuration needs at least 2 seeds" in unspent_note(one_left)
    one_seed = SimpleNamespace(n_evals=39, history=pd.DataFrame(),
                               settings={"budget": 40, "method": "erahbo", "k_min": 1,
                                         "k_init": 2})
    assert "no candidate configuration" in unspent_note(one_seed)


def test_tune_markdown_of_a_one_seed_incumbent_shows_no_sample_std(tmp_path):
    """Rule: ``erahbo tune``'s tune.md never prints "nan": a one-seed incumbent has no
    sample std, and the line says so."""
    from erahbo.cli.tune import _write_markdown

    res = _study(k_init=1, k_min=1, n_init=10).result()
    inc = res.configs["config_id"] == res.incumbent_id
    res.configs.loc[inc, ["k", "std", "var"]] = [1, np.nan, np.nan]  # as a one-seed row shows
    summary = {"task": "t", "method": "erahbo", "n_evals": res.n_evals, "failed_runs": 0,
               "alpha": 1.0, "scale": 1.0, "incumbent_id": res.incumbent_id,
               "incumbent": res.incumbent, "incumbent_mv": res.incumbent_mv}
    _write_markdown(tmp_path, summary, res)
    text = (tmp_path / "tune.md").read_text()
    assert "no sample std (one seed) over k = 1 seeds" in text and "nan" not in text.lower()
