"""ERAHBOSampler joining a study that exists: a study started with another sampler (TPE) and
continued with ERAHBO, and a second process (or sampler) with other options. Both used to run
silently: TPE's running means and learning curves became per-seed runs, other options
rewrote the recommendation (issue 38)."""

import warnings

import pytest

optuna = pytest.importorskip("optuna")

from optuna.trial import TrialState  # noqa: E402

from conftest import cleanrl_objective  # noqa: E402
from conftest import two_peaks_run as train  # noqa: E402
from erahbo.integrations._optuna_study import SETTINGS  # noqa: E402
from erahbo.integrations.optuna import RECOMMENDATION, ERAHBOSampler, trial_seeds  # noqa: E402

optuna.logging.set_verbosity(optuna.logging.WARNING)
# replicate_within 0: these tests count the runs read from another sampler's trials by their
# configurations; a replicate (erahbo.optimizer.replicate) would add ERAHBO's own runs to them
OPTS = dict(seed=0, n_init=4, k_init=3, k_min=2, k_max=6, raw_samples=128, n_polish=2,
            replicate_within=0.0)
PER_SEED = range(10)  # trials 0-9 report steps 0, 1, 2
CURVE = range(10, 14)  # trials 10-13 report a learning curve at steps 1000, 2000, 3000
SILENT, PRUNED, FAILED = 14, 15, 16  # no report; pruned after step 0; raises before a report


def tpe_objective(trial):
    """What a TPE user's objective reports, by trial number (see the constants above)."""
    x = trial.suggest_float("x", 0.0, 1.0)
    n = trial.number
    if n in PER_SEED:
        returns = [train(x, seed) for seed in range(3)]
        for step, v in enumerate(returns):
            trial.report(v, step)
        return sum(returns) / 3
    if n in CURVE:
        for i, step in enumerate((1000, 2000, 3000)):
            trial.report(train(x, 0) * (i + 1) / 3, step)
        return train(x, 0)
    if n == PRUNED:
        trial.report(train(x, 0), 0)
        raise optuna.TrialPruned()
    if n == FAILED:
        raise RuntimeError("diverged")
    return train(x, 0)


def tpe_study(**kw):
    """17 finished trials of TPE (the kinds above), in one study."""
    study = optuna.create_study(direction="maximize",
                                sampler=optuna.samplers.TPESampler(seed=0), **kw)
    study.optimize(tpe_objective, n_trials=17, catch=(RuntimeError,))
    return study


def continue_with(study, sampler, n_trials=2):
    """Switch the study to ``sampler`` (``study.sampler = ...``) and run ``n_trials``; the
    warnings it gave."""
    study.sampler, study.pruner = sampler, sampler.pruner
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        study.optimize(cleanrl_objective, n_trials=n_trials)
    return [str(w.message) for w in caught if "another sampler" in str(w.message)]


def foreign_rows(sampler, study):
    """erahbo's history rows read from TPE's trials (not the seeds erahbo's own rounds add
    to those configurations later: a challenger round may re-run one)."""
    h = sampler.result(study).history
    return h[(h["config_id"] < 17) & (h["phase"] == "warm")]


def test_a_study_of_another_sampler_is_refused_until_told_how_to_read_it():
    """Continued without ``warm_start``, the study is refused before anything trains, with
    the three choices; the refused trial fails in the storage (nothing left running) and
    counts as neither data nor another sampler's trial once a choice is made."""
    study = tpe_study()
    calls = []
    study.sampler = sampler = ERAHBOSampler(**OPTS)
    study.pruner = sampler.pruner
    with pytest.raises(ValueError, match=r"17 finished trials of another sampler") as err:
        study.optimize(lambda t: calls.append(t.number), n_trials=1)
    message = str(err.value)
    for choice in ("warm_start='reports'", "warm_start='values'", "warm_start='ignore'"):
        assert choice in message
    assert "steps [1000, 2000, 3000] in 4" in message and "steps 0..2 in 10" in message
    refused = study.trials[-1]
    assert calls == [] and refused.state == TrialState.FAIL
    assert refused.system_attrs["erahbo:phase"] == "refused" and not refused.intermediate_values
    got = continue_with(study, ERAHBOSampler(**OPTS, warm_start="ignore"))
    assert len(got) == 1 and "17 finished trials" in got[0]  # not 18: the refused one


def test_reports_are_read_as_seeds_only_at_seed_indices(tmp_path):
    """``warm_start="reports"``: steps 0, 1, 2 are seeds 0, 1, 2; a learning curve (steps
    1000, 2000, 3000) gives nothing, and neither does a trial without reports; each is named
    in the warning, with a configuration left with one run. A process that loads the study
    later reads it the same way (the choice is stored) without being told again."""
    url = f"sqlite:///{tmp_path / 'tpe.db'}"
    study = tpe_study(storage=url, study_name="tpe")
    sampler = ERAHBOSampler(**OPTS, warm_start="reports")
    got = continue_with(study, sampler)
    assert len(got) == 1
    assert "read with warm_start='reports': 30 runs" in got[0]
    assert ("trials 10, 11, 12, 13: steps [1000, 2000, 3000] are not seed indices"
            in got[0])
    assert "trials 14, 16: no report" in got[0]
    assert "trial 15: its configuration has fewer than 2 runs" in got[0]
    rows = foreign_rows(sampler, study)
    assert sorted(set(rows["config_id"])) == list(PER_SEED)
    assert len(rows) == 30 and set(rows["seed"]) == {0, 1, 2}
    later = ERAHBOSampler(**OPTS)  # another process: no warm_start given
    loaded = optuna.load_study(study_name="tpe", storage=url, sampler=later,
                               pruner=later.pruner)
    assert loaded.user_attrs["erahbo_warm_start"] == "reports"
    assert len(continue_with(loaded, later, n_trials=1)) == 1
    assert len(foreign_rows(later, loaded)) == 30


def test_values_count_each_completed_trial_as_one_run_of_an_unknown_seed():
    """``warm_start="values"``: each completed trial's value is one run (seed unknown: a
    negative placeholder in erahbo's history, never handed out); pruned and failed trials
    give nothing, named. With a sample variance needed (k_min = 2) one run per configuration
    is not data: the warning says so for every trial."""
    sampler = ERAHBOSampler(**{**OPTS, "k_min": 1}, warm_start="values")
    study = tpe_study()
    got = continue_with(study, sampler)
    assert "read with warm_start='values': 15 runs" in got[0]
    assert "trial 15: pruned (its value is a partial result)" in got[0]
    assert "trial 16: failed (no value)" in got[0]
    rows = foreign_rows(sampler, study)
    assert len(rows) == 15 and (rows["seed"] < 0).all()
    values = {t.number: t.value for t in study.trials[:15]}
    assert sorted(rows["return"]) == pytest.approx(sorted(values.values()))
    assert all(min(trial_seeds(t)) >= 0 for t in study.trials[17:])
    two = continue_with(tpe_study(), ERAHBOSampler(**OPTS, warm_start="values"))
    assert "fewer than 2 runs" in two[0] and "(15 trials)" in two[0]


def test_ignore_reads_nothing_and_says_so():
    sampler = ERAHBOSampler(**OPTS, warm_start="ignore")
    study = tpe_study()
    got = continue_with(study, sampler, n_trials=3)
    assert "0 runs. Nothing from trials 0, 1, 2" in got[0]
    assert "warm_start='ignore'" in got[0]
    assert foreign_rows(sampler, study).empty


def test_other_options_on_an_existing_study_are_refused_with_the_fix(tmp_path):
    """A second process with ``alpha=5, k_max=10`` on a study built with ``alpha=1,
    k_max=6`` is refused before it trains, naming each option that differs and the fix; the
    study's recommendation stays. The same options continue it; so does a new sampler object
    in the same process with the same options, while one with other options is refused."""
    url = f"sqlite:///{tmp_path / 'opts.db'}"
    first = ERAHBOSampler(**OPTS, alpha=1.0)
    study = optuna.create_study(study_name="s", storage=url, direction="maximize",
                                sampler=first, pruner=first.pruner)
    study.optimize(cleanrl_objective, n_trials=6)
    rec = study.user_attrs[RECOMMENDATION]
    other = ERAHBOSampler(**{**OPTS, "alpha": 5.0, "k_max": 10})
    loaded = optuna.load_study(study_name="s", storage=url, sampler=other, pruner=other.pruner)
    calls = []
    with pytest.raises(ValueError, match="built with other ERAHBOSampler options") as err:
        loaded.optimize(lambda t: calls.append(t.number), n_trials=1)
    message = str(err.value)
    assert "alpha: 1.0 in the study, 5.0 now" in message
    assert "k_max: 6 in the study, 10 now" in message
    assert "ERAHBOSampler(alpha=1.0, k_max=6, ...)" in message and "new study" in message
    assert calls == [] and loaded.trials[-1].state == TrialState.FAIL
    assert loaded.user_attrs[RECOMMENDATION] == rec
    same = ERAHBOSampler(**OPTS, alpha=1.0)
    again = optuna.load_study(study_name="s", storage=url, sampler=same, pruner=same.pruner)
    again.optimize(cleanrl_objective, n_trials=2)
    assert [t.state for t in again.trials[-2:]] != [TrialState.FAIL] * 2
    again.sampler = ERAHBOSampler(**{**OPTS, "kernel": "matern52"})
    with pytest.raises(ValueError, match="kernel: 'rbf' in the study, 'matern52' now"):
        again.optimize(cleanrl_objective, n_trials=1)


def test_a_bad_warm_start_is_refused_with_the_choices():
    with pytest.raises(ValueError, match=r"warm_start='value' must be one of 'reports', "
                                         r"'values', 'ignore' or None"):
        ERAHBOSampler(warm_start="value")


def test_a_study_of_an_older_erahbo_reads_its_options_as_that_erahbo_did(tmp_path):
    """Stored sampler settings are compared in today's schema, as a journal's: a study
    written before ``refit_evidence`` existed and while ``refit_growth`` None meant "never"
    (session 26) is refused by today's defaults naming both options at their old behaviour,
    and continued by a sampler that passes them."""
    url = f"sqlite:///{tmp_path / 'old.db'}"
    first = ERAHBOSampler(**OPTS, refit_growth=0, refit_evidence=0.0)
    study = optuna.create_study(study_name="s", storage=url, direction="maximize",
                                sampler=first, pruner=first.pruner)
    study.optimize(cleanrl_objective, n_trials=6)
    old = dict(study.user_attrs[SETTINGS])
    del old["refit_evidence"]  # not an option yet
    old["refit_growth"] = None  # "never" then
    study.set_user_attr(SETTINGS, old)
    today = ERAHBOSampler(**OPTS)
    loaded = optuna.load_study(study_name="s", storage=url, sampler=today, pruner=today.pruner)
    with pytest.raises(ValueError, match="built with other ERAHBOSampler options") as err:
        loaded.optimize(cleanrl_objective, n_trials=1)
    message = str(err.value)
    assert "refit_evidence: 0.0 in the study, 3.0 now" in message
    assert "ERAHBOSampler(refit_evidence=0.0, refit_growth=0.0, ...)" in message
    then = ERAHBOSampler(**OPTS, refit_evidence=0.0, refit_growth=0.0)
    again = optuna.load_study(study_name="s", storage=url, sampler=then, pruner=then.pruner)
    again.optimize(cleanrl_objective, n_trials=2)
    assert all(t.state != TrialState.FAIL for t in again.trials[-2:])


def test_the_result_labels_each_run_with_its_trial():
    """Rule: ``sampler.result(study)`` reads like a study of erahbo's own: each run of an
    ERAHBO trial has its trial's phase (``erahbo:phase``) and number (``iteration``), the
    rounds table has one row per ERAHBO trial (its seeds, its stop decision), and only the
    runs of the other sampler's trials are ``"warm"`` (the engine holds every run as a warm
    start, so all were ``"warm"`` before)."""
    sampler = ERAHBOSampler(**OPTS, warm_start="reports")
    study = tpe_study()
    continue_with(study, sampler, n_trials=8)
    res = sampler.result(study)
    h, rounds = res.history, res.rounds
    own = [t for t in study.trials if "erahbo:phase" in t.system_attrs
           and t.state != TrialState.RUNNING]
    assert own and {t.system_attrs["erahbo:phase"] for t in own} >= {"bo"}
    for t in own:
        runs = h[(h["iteration"] == t.number) & (h["phase"] != "warm")]
        assert len(runs) == len(t.intermediate_values), t.number
        assert set(runs["phase"]) == {t.system_attrs["erahbo:phase"]}
        row = rounds[(rounds["iteration"] == t.number) & (rounds["phase"] != "warm")]
        assert len(row) == 1 and int(row["k"].iloc[0]) == len(t.intermediate_values)
        decision = t.system_attrs.get("erahbo:decision")
        if decision:
            assert row["stop_reason"].iloc[0] == decision["reason"]
    warm = h[h["phase"] == "warm"]  # TPE's per-seed reports: trials 0-9, steps 0, 1, 2
    assert len(warm) == 3 * len(PER_SEED) and set(warm["seed"]) == {0, 1, 2}
    assert len(h) == len(warm) + sum(len(t.intermediate_values) for t in own)
