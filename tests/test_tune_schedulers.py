"""ERAHBOSearch under a real ``tune.Tuner`` with an early-stopping scheduler (ASHA).

Tune builds the ``Tuner`` without asking the searcher anything, and hands a searcher no
reference to its scheduler: ERAHBOSearch finds it when ``fit()`` starts (before the first
trial) and refuses one that stops trials. Were it not found (a future Tune), a run that the
scheduler cut is told as a failed run, never as a return.
"""

import warnings

import pytest

pytest.importorskip("ray.tune")

from ray import tune
from ray.tune.schedulers import ASHAScheduler
from ray.tune.search import ConcurrencyLimiter, Repeater

import erahbo.integrations.ray_tune as rt
from erahbo.integrations.ray_tune import ERAHBOSearch

pytestmark = pytest.mark.xdist_group("ray")  # with the other Ray modules (conftest.py)


@pytest.fixture(scope="module")
def local_ray(shared_ray):
    """The shared local Ray instance (conftest.py; it started its own 1-CPU instance before:
    one Ray start less). One trial at a time as on one CPU: the tuners below run under
    ConcurrencyLimiter(searcher, 1), or are refused before their first trial."""
    return shared_ray


def _tuner(searcher, path, n):
    def curve(config):  # nested: Ray's workers cannot import the test module
        """One training run: 4 reports climbing to the final return config["x"]."""
        for i in range(4):
            tune.report({"ret": config["x"] * (i + 1) / 4})

    return tune.Tuner(
        curve, param_space={"x": tune.uniform(0.0, 1.0)},
        tune_config=tune.TuneConfig(metric="ret", mode="max", num_samples=n, reuse_actors=True,
                                    scheduler=ASHAScheduler(grace_period=1, reduction_factor=2),
                                    search_alg=ConcurrencyLimiter(searcher, 1)),
        run_config=tune.RunConfig(verbose=0, storage_path=str(path)),
    )


def test_asha_is_refused_when_fit_starts_before_any_trial(local_ray, tmp_path):
    """Rule: ASHA under ERAHBOSearch is refused by fit(), naming it and the fix."""
    searcher = ERAHBOSearch(budget=4, seed=0, n_init=2, k_init=2)
    tuner = _tuner(searcher, tmp_path, 4)  # building the Tuner asks the searcher nothing
    with pytest.raises(ValueError, match=r"AsyncHyperBandScheduler.*Remove scheduler="):
        tuner.fit()
    assert searcher.optimizer is None  # no trial was asked for


def test_repeater_is_refused_when_fit_starts_before_any_trial(local_ray, tmp_path):
    """Rule: Repeater(ERAHBOSearch, 3) is refused by fit() before the first trial (each seed
    would be trained 3 times), naming the fix."""
    def curve(config):
        tune.report({"ret": config["x"]})

    searcher = ERAHBOSearch(budget=6, seed=0, n_init=2, k_init=2)
    tuner = tune.Tuner(curve, param_space={"x": tune.uniform(0.0, 1.0)},
                       tune_config=tune.TuneConfig(metric="ret", mode="max", num_samples=6,
                                                   search_alg=Repeater(searcher, 3)),
                       run_config=tune.RunConfig(verbose=0, storage_path=str(tmp_path)))
    with pytest.raises(ValueError, match=r"Repeater\(searcher, 3\).*search_alg directly"):
        tuner.fit()
    assert searcher.optimizer is None  # no trial was asked for


def test_runs_cut_by_asha_are_recorded_as_stopped_never_as_returns(local_ray, tmp_path,
                                                                    monkeypatch):
    """Rule: where the scheduler cannot be found, a run ASHA cut is a failed run with the
    reason (warned once), its partial return in no statistic; runs that ended count, and
    recommendation(results) gives the recommended configuration's own Tune results."""
    monkeypatch.setattr(rt, "host_scheduler", lambda: None)  # as if Tune hid it
    searcher = ERAHBOSearch(budget=4, seed=0, n_init=2, k_init=2, k_max=2,
                            points_to_evaluate=[{"x": 0.9}, {"x": 0.1}])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        results = _tuner(searcher, tmp_path, 4).fit()
    hist = searcher.optimizer.result().history
    assert len(results) == 4 and not results.errors
    good, cut = hist[hist["x"] == 0.9], hist[hist["x"] == 0.1]
    assert list(good["status"]) == ["ok", "ok"] and list(good["return"]) == [0.9, 0.9]
    # ASHA stopped the x = 0.1 runs at their first rung (0.025 below the 0.225 there)
    assert list(cut["status"]) == ["penalized", "penalized"]
    assert cut["error"].str.contains("stopped early at training_iteration 1").all()
    assert [r["ret"] for r in searcher.stopped_runs] == [0.025, 0.025]
    assert sum("stopped early" in str(w.message) for w in caught) == 1
    rec = searcher.recommendation(results)
    assert rec.config == {"x": 0.9} and rec.k == 2 and rec.mean == 0.9
    assert sorted(r.config["seed"] for r in rec.results) == sorted(rec.seeds)
    assert all(r.metrics["ret"] == 0.9 for r in rec.results)
