"""ERAHBOSearch against the real Ray Tune (skipped without the extra)."""

import math
import random

import pytest

pytest.importorskip("ray.tune")

from ray import tune
from ray.tune.search import ConcurrencyLimiter, Searcher

from erahbo.integrations.ray_tune import ERAHBOSearch

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


def test_a_real_tuner_run(tmp_path):
    ray = pytest.importorskip("ray")
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False,
             configure_logging=False)
    try:
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
        # Tune checkpoints the searcher with save(); restoring it gives the same state
        restored = ERAHBOSearch()
        restored.restore_from_dir(results.experiment_path)
        assert restored.recommend() == searcher.recommend()
    finally:
        ray.shutdown()
