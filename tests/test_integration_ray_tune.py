"""ERAHBOSearch against the real Ray Tune (skipped without the extra)."""

import math
import random

import numpy as np
import pytest

pytest.importorskip("ray.tune")

from ray import tune
from ray.tune.search import ConcurrencyLimiter, Searcher

from erahbo.integrations.ray_tune import ERAHBOSearch

pytestmark = pytest.mark.xdist_group("ray")  # with the other Ray modules (conftest.py)

QUIET, NOISY = 0.25, 0.75


def two_peaks(x: float, seed: int) -> float:
    """One training run: a quiet peak at 0.25 (1.0) and a noisy higher one at 0.75 (1.3)."""
    rng = random.Random(f"{x:.12f}/{seed}")
    mean = math.exp(-((x - QUIET) / 0.12) ** 2) + 1.3 * math.exp(-((x - NOISY) / 0.12) ** 2)
    return mean + rng.gauss(0.0, 0.05 + 1.0 * math.exp(-((x - NOISY) / 0.2) ** 2))


OPTS = dict(seed=0, n_init=4, k_init=6, k_min=2, k_max=10, raw_samples=128, n_polish=2)
SPACE = {"x": tune.uniform(0.0, 1.0), "env": "CartPole-v1"}


def make(space=SPACE, **kw):
    s = ERAHBOSearch(metric="ret", mode="max", **{**OPTS, **kw})
    assert s.set_search_properties(None, None, space)
    return s


def drive(searcher, *, max_live=1, value=lambda cfg: two_peaks(cfg["x"], cfg["seed"]),
          stop_after=None, log=None):
    """Tune's loop without Ray: suggest while allowed, complete the oldest live trial."""
    live, n = [], 0
    while stop_after is None or n < stop_after:
        cfg = searcher.suggest(f"t{n}") if len(live) < max_live else None
        if cfg == Searcher.FINISHED:
            break
        if cfg is None:
            if not live:
                raise AssertionError("suggest returned None with nothing pending")
            tid, c = live.pop(0)
            v = value(c)
            searcher.on_trial_complete(tid, None if v is None else {"ret": v}, error=v is None)
            continue
        if log is not None:
            log.append(cfg)
        live.append((f"t{n}", cfg))
        n += 1
    for tid, c in live:
        v = value(c)
        searcher.on_trial_complete(tid, None if v is None else {"ret": v}, error=v is None)
    return n


def test_one_trial_per_seed_with_adaptive_seeds_and_the_budget():
    s = make(budget=120)
    log = []
    n = drive(s, log=log)
    rounds = s.optimizer.result().rounds
    # the whole budget, or all but a single run when the last round ended by its own rule
    assert n == 120 or (n == 119 and rounds["stop_reason"].iloc[-1] != "budget")
    assert all(c["seed"] > 0 for c in log)  # a seed per run, in the configured key
    by_x = {}
    for c in log:
        by_x.setdefault(c["x"], []).append(c["seed"])
    assert all(len(set(v)) == len(v) for v in by_x.values())  # distinct seeds per config
    rounds = s.optimizer.result().rounds
    bo = rounds[rounds["phase"] == "bo"]
    assert set(bo["stop_reason"]) <= {"dominated", "k_max", "budget", "max_seeds", "random"}
    assert (bo["stop_reason"] == "dominated").any() and (bo["k"] < 10).any()
    assert abs(s.recommend()["x"] - QUIET) < 0.1  # the MV optimum, not the higher noisy peak
    assert s.suggest("after") == Searcher.FINISHED


def test_suggest_waits_for_the_pending_seeds_of_a_decision():
    s = make(n_init=2, k_init=2, k_max=4)
    first = [s.suggest("a"), s.suggest("b")]  # the first initial configuration, 2 seeds
    assert first[0]["x"] == first[1]["x"] and first[0]["seed"] != first[1]["seed"]
    assert s.suggest("c") is None  # n_parallel=1: the next trial waits for them
    s.on_trial_complete("a", {"ret": 1.0})
    assert s.suggest("c") is None
    s.on_trial_complete("b", {"ret": 1.2})
    nxt = s.suggest("c")
    assert nxt["x"] != first[0]["x"]  # the second initial configuration


def test_concurrency_limiter_and_parallel_configurations():
    s = make(budget=80, n_parallel=2, seed_batch=2)
    lim = ConcurrencyLimiter(s, max_concurrent=3)
    log = []
    assert drive(lim, max_live=10, log=log) == 80  # the limiter holds it to 3 at once
    assert s.optimizer.n_pending == 0 and s.optimizer.n_evals == 80
    assert s.recommend() is not None


def test_failed_runs_are_penalized_and_never_recommended():
    s = make(budget=80)
    value = lambda c: None if c["x"] > 0.6 else two_peaks(c["x"], c["seed"])  # noqa: E731
    drive(s, value=value)
    hist = s.optimizer.result().history
    assert (hist["status"] == "penalized").any()
    assert s.recommend()["x"] <= 0.6


def test_min_mode_minimizes_a_loss():
    s = ERAHBOSearch(metric="ret", mode="min", budget=100, **OPTS)
    s.set_search_properties(None, None, {"x": tune.uniform(0.0, 1.0)})
    drive(s, value=lambda c: -two_peaks(c["x"], c["seed"]))
    assert abs(s.recommend()["x"] - QUIET) < 0.1


def test_save_and_restore_continue_exactly(tmp_path):
    a = make(budget=60)
    drive(a, stop_after=30)
    a.save(str(tmp_path / "searcher.pkl"))
    b = ERAHBOSearch()
    b.restore(str(tmp_path / "searcher.pkl"))
    log_a, log_b = [], []
    drive(a, log=log_a)
    drive(b, log=log_b)
    assert log_a == log_b and len(log_a) > 0
    assert a.recommend() == b.recommend()


def test_search_space_conversion_nested_and_categorical():
    space = {"opt": {"lr": tune.loguniform(1e-4, 1e-1), "act": tune.choice(["tanh", None])},
             "n": tune.randint(1, 4), "w": tune.lograndint(1, 100)}
    s = make(space=space, budget=30, n_init=3, k_init=2, k_max=4)
    log = []
    drive(s, log=log, value=lambda c: -abs(math.log10(c["opt"]["lr"]) + 2) + c["seed"] % 3)
    for c in log:
        assert 1e-4 <= c["opt"]["lr"] <= 1e-1 and c["opt"]["act"] in ("tanh", None)
        assert c["n"] in (1, 2, 3) and 1 <= c["w"] <= 99
    with pytest.raises(ValueError, match=r"'q'.*not supported"):
        make(space={"q": tune.qrandn(0, 1, 0.1)})
    with pytest.raises(ValueError, match=r"'opt/lr' is a tune.grid_search.*tune.choice"):
        make(space={"opt": {"lr": tune.grid_search([1e-3, 1e-2])}})


def test_a_misspelled_option_is_named_with_the_one_it_resembles():
    """Rule: an unknown option names itself, the option it resembles and the options."""
    with pytest.raises(TypeError, match=r"ERAHBOSearch: unknown option\(s\) 'alpah' \(did "
                                        r"you mean 'alpha'\?\); it takes space, metric.*k_min"):
        ERAHBOSearch(alpah=1.0)
    with pytest.raises(TypeError, match=r"'scheduler': a Tune trial scheduler goes in "
                                        r"TuneConfig\(scheduler=...\)"):
        ERAHBOSearch(scheduler="asha")  # not "did you mean 'schedule'" (beta_stop's schedule)


def test_a_real_tuner_run(tmp_path, shared_ray):
    """Tune on the shared local Ray instance (conftest.py: loopback, 2 CPUs, the
    ray.init(num_cpus=2) this test made itself before): one Ray start less. Tune on a
    session the user starts is the doc example's (tests/test_integration_docs.py)."""
    def train(config):  # self-contained: Ray's workers cannot import the test module
        import math
        import random

        rng = random.Random(config["seed"])
        tune.report({"ret": math.exp(-((config["x"] - 0.25) / 0.12) ** 2)
                     + rng.gauss(0.0, 0.1)})

    searcher = ERAHBOSearch(budget=10, seed=0, n_init=2, k_init=3, k_max=4,
                            raw_samples=64, n_polish=1)
    tuner = tune.Tuner(
        train,
        param_space={"x": tune.uniform(0.0, 1.0)},
        tune_config=tune.TuneConfig(metric="ret", mode="max", num_samples=10,
                                    reuse_actors=True,
                                    search_alg=ConcurrencyLimiter(searcher, 2)),
        run_config=tune.RunConfig(verbose=0, storage_path=str(tmp_path)),
    )
    results = tuner.fit()
    assert len(results) == 10 and not results.errors
    seeds = {}
    for r in results:
        seeds.setdefault(r.config["x"], []).append(r.config["seed"])
    ks = sorted(len(v) for v in seeds.values())
    assert ks[-2] >= 3 and ks[-1] <= 4  # the initial design (3 seeds each), k_max = 4
    assert all(len(set(v)) == len(v) for v in seeds.values())
    assert searcher.optimizer.n_evals == 10
    assert searcher.recommend()["x"] in seeds
    # the recommendation as Tune results: its own runs, one per seed
    rec = searcher.recommendation(results)
    assert rec.config == searcher.recommend()
    assert len(rec.results) == rec.k == len(seeds[rec.config["x"]]) >= 1
    assert sorted(r.config["seed"] for r in rec.results) == sorted(seeds[rec.config["x"]])
    # Tune checkpoints the searcher with save(); restoring it gives the same state
    restored = ERAHBOSearch()
    restored.restore_from_dir(results.experiment_path)
    assert restored.recommend() == searcher.recommend()
    # the ResultGrid warm-starts a new study (Tune's add_evaluated_trials): every run
    # with its seed, none run again
    again = ERAHBOSearch(metric="ret", mode="max", budget=4, seed=1, n_init=0)
    again.set_search_properties(None, None, {"x": tune.uniform(0.0, 1.0)})
    again.add_evaluated_trials(results, "ret")
    again.suggest("t0")
    warm = again.result().history
    assert sorted(zip(warm["x"], warm["seed"], warm["return"], strict=True)) == sorted(
        (r.config["x"], r.config["seed"], r.metrics["ret"]) for r in results)
    assert set(warm["phase"]) == {"warm"} and again.optimizer.n_evals == 0


# --- the host's habits: schedulers, points to evaluate, the recommendation as a Tune result ---
def _tune_run(s, tid, curve, *, seen_until=None, done=True):
    """Tune's calls for one trial: results 1..n (those up to ``seen_until`` passed to
    on_trial_result, as Tune does for results after which a trial goes on), then the end."""
    n = len(curve)
    seen_until = n if seen_until is None else seen_until
    for i in range(1, seen_until + 1):
        s.on_trial_result(tid, {"ret": curve[i - 1], "training_iteration": i, "done": False})
    last = min(max(seen_until, 1) + (seen_until < n), n)
    s.on_trial_complete(tid, {"ret": curve[last - 1], "training_iteration": last, "done": done})


def test_every_scheduler_but_fifo_is_refused_with_the_fix():
    """Rule: a scheduler that stops, pauses or mutates trials is refused, named, with the fix;
    Tune's plain FIFOScheduler (the default) is accepted."""
    from ray.tune.schedulers import (
        ASHAScheduler,
        FIFOScheduler,
        HyperBandScheduler,
        MedianStoppingRule,
        PopulationBasedTraining,
    )

    from erahbo.integrations._tune_host import refuse_scheduler

    refuse_scheduler(FIFOScheduler())
    refuse_scheduler(None)
    for sched in (ASHAScheduler(), HyperBandScheduler(), MedianStoppingRule(),
                  PopulationBasedTraining(hyperparam_mutations={"x": [0.1, 0.2]})):
        with pytest.raises(ValueError, match=type(sched).__name__ + r".*Remove scheduler="):
            refuse_scheduler(sched)


def test_a_run_cut_by_a_scheduler_is_never_a_return():
    """Rule: a trial stopped on a result Tune never passed on (a scheduler's STOP) is a failed
    run with the reason, listed in stopped_runs, warned about once; its partial metric is in
    no return. A trial that ran to its end (its last result was passed on) counts."""
    s = make(n_init=1, k_init=3, k_max=3)
    cfgs = [s.suggest(f"t{i}") for i in range(3)]
    with pytest.warns(UserWarning, match="stopped early at training_iteration 2") as rec:
        _tune_run(s, "t0", [0.2, 0.5, 1.0])  # ran to its end
        _tune_run(s, "t1", [0.1, 0.22, 0.5], seen_until=1)  # cut at iteration 2
        _tune_run(s, "t2", [0.1, 0.21, 0.5], seen_until=1)
    assert len(rec) == 1  # once
    hist = s.optimizer.result().history
    assert list(hist["status"]) == ["ok", "penalized", "penalized"]
    assert hist["return"].iloc[0] == 1.0 and not hist["return"].isin([0.22, 0.21]).any()
    assert "stopped early" in hist["error"].iloc[1]
    assert [r["seed"] for r in s.stopped_runs] == [cfgs[1]["seed"], cfgs[2]["seed"]]
    assert s.stopped_runs[0]["ret"] == 0.22


def test_a_training_length_in_stop_is_the_end_of_a_run():
    """Rule: a trial stopped by the experiment's own stop criteria ran to its end."""
    s = make(n_init=1, k_init=2, k_max=2)
    s.set_search_properties(None, None, {}, stop={"training_iteration": 2})
    s.suggest("a"), s.suggest("b")
    _tune_run(s, "a", [0.3, 0.6], seen_until=1)
    _tune_run(s, "b", [0.3, 0.7], seen_until=1)
    hist = s.optimizer.result().history
    assert list(hist["status"]) == ["ok", "ok"] and list(hist["return"]) == [0.6, 0.7]
    assert s.stopped_runs == []


def test_a_trial_cut_by_the_end_of_the_experiment_runs_again():
    """Rule: a trial not done (the experiment ended, or it was removed before it ran) is not
    a run: its configuration and seed are handed out again (as after Tuner.restore)."""
    s = make(n_init=1, k_init=2, k_max=2)
    a, b = s.suggest("a"), s.suggest("b")
    _tune_run(s, "a", [0.3, 0.6], done=False)
    s.on_trial_complete("b")  # removed while pending
    again = [s.suggest("c"), s.suggest("d")]
    assert sorted(c["seed"] for c in again) == sorted([a["seed"], b["seed"]])
    assert s.optimizer.n_evals == 0


def test_points_to_evaluate_run_first_then_the_sobol_design():
    """Rule: points_to_evaluate are the first configurations (Tune values, categoricals by
    value), k_init seeds each, and count in n_init."""
    space = {"x": tune.uniform(0.0, 1.0), "act": tune.choice(["tanh", "relu"]), "env": "E"}
    pts = [{"x": 0.9, "act": "relu", "env": "E"}, {"x": 0.1, "act": "tanh"}]
    s = ERAHBOSearch(metric="ret", mode="max", points_to_evaluate=pts, budget=40,
                     **{**OPTS, "n_init": 3, "k_init": 2})
    s.set_search_properties(None, None, space)
    log = []
    drive(s, log=log, stop_after=6,
          value=lambda c: two_peaks(c["x"], c["seed"]) + (c["act"] == "relu"))
    firsts = [(c["x"], c["act"]) for c in log]
    assert firsts[:4] == [(0.9, "relu")] * 2 + [(0.1, "tanh")] * 2
    assert firsts[4] == firsts[5] and firsts[4] not in firsts[:4]  # one Sobol point
    rounds = s.optimizer.result().rounds
    assert (rounds["phase"] == "init").sum() == 3


@pytest.mark.parametrize("point, match", [
    ({"x": 0.5, "seed": 3}, "gives 'seed'"),
    ({"x": 0.5, "y": 1}, "'y' is not a parameter"),
    ({}, r"no value for \['x'\]"),
    ({"x": 0.5, "act": "gelu"}, "not one of its choices"),
    ({"x": 5.0}, r"points_to_evaluate\[0\]: .*x=5.0 lies outside"),
])
def test_bad_points_to_evaluate_are_named(point, match):
    """Rule: a bad point names itself and the fix before the first trial."""
    s = ERAHBOSearch(metric="ret", mode="max", points_to_evaluate=[point], **OPTS)
    s.set_search_properties(None, None, {"x": tune.uniform(0, 1),
                                         **({"act": tune.choice(["tanh"])} if "act" in point
                                            else {})})
    with pytest.raises(ValueError, match=match):
        s.suggest("t0")


def test_evaluated_rewards_warm_start_and_are_not_run_again():
    """Rule: evaluated points are runs done before (warm phase, not run, not in the budget);
    a point given once per seed pools; per-seed lists work; mode=min negates; a configuration
    with one reward is refused."""
    pts = [{"x": 0.2, "seed": 5}, {"x": 0.2, "seed": 6}, {"x": 0.7}]
    s = ERAHBOSearch(metric="loss", mode="min", points_to_evaluate=pts,
                     evaluated_rewards=[1.0, 2.0, [3.0, 4.0, 5.0]], budget=20,
                     **{**OPTS, "n_init": 0})
    s.set_search_properties(None, None, {"x": tune.uniform(0, 1)})
    first = s.suggest("t0")
    hist = s.optimizer.result().history
    warm = hist[hist["phase"] == "warm"]
    assert sorted(warm["return"]) == [-5.0, -4.0, -3.0, -2.0, -1.0]
    assert sorted(warm.loc[warm["x"] == 0.2, "seed"]) == [5, 6]
    assert s.optimizer.n_evals == 0 and first["x"] not in (0.2, 0.7)
    one = ERAHBOSearch(metric="ret", mode="max", points_to_evaluate=[{"x": 0.3}],
                       evaluated_rewards=[1.0], **OPTS)
    one.set_search_properties(None, None, {"x": tune.uniform(0, 1)})
    with pytest.raises(ValueError, match="has 1 reward; ERAHBO needs at least 2 runs"):
        one.suggest("t0")
    # with one seed first (k_init = k_min = 1) a point with one reward is data
    first_one = ERAHBOSearch(metric="ret", mode="max", points_to_evaluate=[{"x": 0.3}],
                             evaluated_rewards=[1.0], **{**OPTS, "k_init": 1, "k_min": 1})
    first_one.set_search_properties(None, None, {"x": tune.uniform(0, 1)})
    first_one.suggest("t0")
    h = first_one.optimizer.result().history
    assert list(h.loc[h["phase"] == "warm", "return"]) == [1.0]
    with pytest.raises(ValueError, match="3 points_to_evaluate"):
        ERAHBOSearch(points_to_evaluate=pts, evaluated_rewards=[1.0])


def test_add_evaluated_point_before_the_study_only():
    """Rule: Tune's add_evaluated_point warm-starts (a pruned run is left out); once the study
    has started it is refused with the fix."""
    s = make(n_init=0)
    for seed, v in [(1, 0.5), (2, 0.6), (3, 0.1)]:
        s.add_evaluated_point({"x": 0.4, "env": "CartPole-v1", "seed": seed}, v,
                              pruned=seed == 3)
    s.suggest("t0")
    warm = s.optimizer.result().history
    assert sorted(warm.loc[warm["phase"] == "warm", "return"]) == [0.5, 0.6]
    with pytest.raises(RuntimeError, match=r"before Tuner\.fit"):
        s.add_evaluated_point({"x": 0.4, "seed": 9}, 0.3)


def test_recommendation_gives_the_mv_estimate_in_the_metric_units():
    """Rule: recommendation() is the incumbent with its row of result().configs, on the
    metric's own scale (mode=min: mean + alpha var, bounds swapped)."""
    for mode, sign in (("max", 1.0), ("min", -1.0)):
        s = ERAHBOSearch(metric="ret", mode=mode, budget=40, **OPTS)
        s.set_search_properties(None, None, {"x": tune.uniform(0.0, 1.0)})
        drive(s, value=lambda c, sg=sign: sg * two_peaks(c["x"], c["seed"]))
        rec = s.recommendation()
        res = s.optimizer.result()
        row = res.configs.set_index("config_id").loc[res.incumbent_id]
        assert rec.config == s.recommend() and rec.k == row["k"] == len(rec.seeds)
        np.testing.assert_allclose([rec.mv, rec.mean], [sign * row["mv"], sign * row["mean"]])
        assert rec.mv_low <= rec.mv <= rec.mv_high
    assert ERAHBOSearch().recommendation() is None


def test_tables_show_the_choices_not_their_indices():
    """Rule: the study's tables show each tune.choice's values: erahbo's own tables where its
    categorical holds them (strings), ``searcher.result()`` for every choice (lists, None);
    the history's runs are the configs Tune trained, the incumbent is recommend()'s."""
    space = {"x": tune.uniform(0.0, 1.0), "opt": tune.choice(["adam", "sgd", "rmsprop"]),
             "net": {"arch": tune.choice([[64, 64], [128], None])}}
    s = make(space=space, budget=30, n_init=3, k_init=2, k_max=4)
    log = []
    drive(s, log=log, value=lambda c: c["x"] + (c["opt"] == "sgd")
          + random.Random(c["seed"]).gauss(0.0, 0.1))
    assert set(s.optimizer.result().configs["opt"]) <= {"adam", "sgd", "rmsprop"}
    res = s.result()
    for table in (res.history, res.configs):
        assert set(table["opt"]) <= {"adam", "sgd", "rmsprop"}
        assert all(a in ([64, 64], [128], None) for a in table["net/arch"])
    ran = [(c["opt"], c["net"]["arch"], c["seed"]) for c in log]
    assert list(zip(res.history["opt"], res.history["net/arch"], res.history["seed"],
                    strict=True)) == ran
    rec = s.recommend()
    assert res.incumbent == {"x": rec["x"], "opt": rec["opt"], "net/arch": rec["net"]["arch"]}
    assert make(space=space).result() is None  # before the study


def test_choices_held_by_value_or_by_index_make_the_same_decisions():
    """Rule: a choice held by value (strings) or by index (lists) has the same encoding, so
    the same study asks for the same configurations and seeds."""
    logs = []
    for choices in (["a", "b", "c"], [["a"], ["b"], ["c"]]):
        s = make(space={"x": tune.uniform(0.0, 1.0), "opt": tune.choice(choices)}, budget=30,
                 n_init=3, k_init=2, k_max=4)
        log = []
        drive(s, log=log, value=lambda c: two_peaks(c["x"], c["seed"])
              + 0.5 * ("b" in c["opt"]))
        logs.append([(c["x"], "".join(c["opt"]), c["seed"]) for c in log])
    assert logs[0] == logs[1] and len(logs[0]) == 30


def test_repeater_around_the_searcher_is_refused_with_the_fix():
    """Rule: Tune's Repeater around ERAHBOSearch (alone or in a ConcurrencyLimiter) is refused
    when Tune sets it up or asks it, naming the repeat count and the fix."""
    from ray.tune.search import Repeater

    match = (r"Repeater\(searcher, 3\).*each seed would be trained 3 times.*pass it as "
             r"search_alg directly.*k_min / k_max")
    s = ERAHBOSearch(metric="ret", mode="max", **OPTS)
    with pytest.raises(ValueError, match=match):
        Repeater(s, 3).set_search_properties(None, None, {"x": tune.uniform(0.0, 1.0)})
    with pytest.raises(ValueError, match=match):
        ConcurrencyLimiter(Repeater(make(), 3), 2).set_search_properties(
            None, None, {"x": tune.uniform(0.0, 1.0)})
    with pytest.raises(ValueError, match=r"Repeater\(searcher, 2\)"):
        Repeater(make(), 2).suggest("t0")  # set up by hand, then wrapped
    assert ConcurrencyLimiter(make(), 2).suggest("t0") is not None  # the limiter alone is fine


@pytest.mark.parametrize("mode,sign", [("max", 1.0), ("min", -1.0)])
def test_a_cvar_search_recommends_the_quiet_peak_and_names_its_measure(mode, sign):
    """Rule (issue 40, item 3): the searcher takes ``risk="cvar", q=...``; it maximizes the
    mean of the worst q share of the metric's seeds (mode=min: minimizes the mean of the
    highest q share of losses); its tables and explanation name the measure. Two peaks:
    CVaR_0.25 of the quiet one is about 0.94, of the noisy higher one below 0."""
    s = ERAHBOSearch(metric="ret", mode=mode, budget=60, risk="cvar", q=0.25, **OPTS)
    s.set_search_properties(None, None, {"x": tune.uniform(0.0, 1.0)})
    drive(s, value=lambda c: sign * two_peaks(c["x"], c["seed"]))
    assert abs(s.recommend()["x"] - QUIET) < 0.1
    res = s.optimizer.result()
    assert res.measure.label == "CVaR_0.25"
    assert "CVaR_0.25" in res.explain()
