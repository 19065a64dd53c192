"""The ask/tell optimizer: API, budget, seeds, stopping rule, engines, robustness."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import erahbo
from conftest import spent_budget
from erahbo.gp import FastModel, FastRound, ReferenceRound
from erahbo.study import Optimizer, optimize


def _table(m=48, d=3, seed=0, dup=False):
    rng = np.random.default_rng(seed)
    X = rng.random((m, d)).round(6)
    if dup:
        X[1] = X[0]
    return pd.DataFrame(X, columns=[f"x{i}" for i in range(d)])


class TableTask:
    """Heteroscedastic returns on a table: one seed -> one deterministic draw."""

    def __init__(self, table, scale=1.0, offset=0.0, zero_noise=False):
        X = table.to_numpy()
        self.f = np.sin(4 * X[:, 0]) + X[:, 1]
        self.rho = 0.05 + 0.6 * X[:, 2] ** 2 if not zero_noise else np.zeros(len(X))
        self.row = {tuple(r): i for i, r in enumerate(X.tolist())}
        self.names = list(table.columns)
        self.scale, self.offset = scale, offset

    def __call__(self, config, seed):
        i = self.row[tuple(config[n] for n in self.names)]
        z = np.random.default_rng([seed, i]).standard_normal()
        return self.offset + self.scale * (self.f[i] + self.rho[i] * z)


def _run(table, task, **kw):
    return optimize(task, table, **{"budget": 160, "seed": 0, "k_max": 10, "k": 5, **kw})


def test_result_api_budget_and_seeds():
    table = _table()
    res = _run(table, TableTask(table), method="erahbo")
    assert isinstance(res.incumbent, dict) and set(res.incumbent) == {"x0", "x1", "x2"}
    assert np.isfinite(res.incumbent_mv)
    h, r = res.history, res.rounds
    assert list(h.columns) == ["iteration", "phase", "config_id", "x0", "x1", "x2", "seed",
                               "return", "k", "k_round", "wall_time", "status", "error",
                               "attempt", "worker", "rerun", "n_failed"]
    assert (h.status == "ok").all() and (h.attempt == 0).all() and not h.rerun.any()
    assert list(r.columns) == ["iteration", "phase", "config_id", "k", "k_total", "ucb_mv",
                               "lcb_mv", "B_t", "beta_stop", "acquisition", "stop_reason",
                               "mean", "var", "n_failed"]
    assert (h.n_failed == 0).all() and (r.n_failed == 0).all()
    # the budget counts training runs, init included (conftest.spent_budget: where a round
    # needs 2 seeds, a single last run cannot start one)
    assert len(h) == res.n_evals and spent_budget(res, 160)
    assert (h.phase == "init").sum() == 5 * 2  # n_init = 5 configs x k_init = 2 (default)
    paper = _run(table, TableTask(table), method="erahbo", preset="paper").history
    assert (paper.phase == "init").sum() == 5 * 10  # the paper's k_init = k_max
    for _, g in h.groupby("config_id"):
        assert (g.seed > 0).all() and g.seed.is_unique
        assert list(g.k) == list(range(1, len(g) + 1))  # k so far
    bo = r[r.phase == "bo"]
    assert bo.k.between(1, 10).all() and set(bo.stop_reason) <= {"dominated", "k_max", "budget",
                                                                  "max_seeds", "random"}
    k_min = res.settings["k_min"]
    assert (bo.k[bo.stop_reason == "random"] == k_min).all()  # random_interleave: k_min seeds
    assert (bo.k[bo.stop_reason == "k_max"] == 10).all()
    # max_seeds (default k_max = 10): seeds beyond it only within pool_share (default 0.25)
    # of all runs
    assert (h.groupby("config_id").size() - 10).clip(lower=0).sum() <= 0.25 * len(h)
    assert (bo.k_total[bo.stop_reason == "max_seeds"] >= 10).all()  # the cap, or the pool
    new = bo.k == bo.k_total  # rounds at a configuration not evaluated before: k_min first
    assert (bo.k[new & (bo.stop_reason == "dominated")] >= k_min).all()
    assert r.k.sum() == len(h) and h.wall_time.is_monotonic_increasing
    # a finite table row gets the same seeds under every method
    res2 = _run(table, TableTask(table), method="rahbo")
    s1 = res.history.groupby("config_id").seed.apply(list)
    s2 = res2.history.groupby("config_id").seed.apply(list)
    for c in set(s1.index) & set(s2.index):
        n = min(len(s1[c]), len(s2[c]))
        assert s1[c][:n] == s2[c][:n]


def test_one_run_left_after_a_round_stays_unspent():
    """A new round needs 2 seeds: RAHBO with k=2 on an odd budget (2 x 2 initial runs, then
    rounds of 2) stops one run short after a completed round; conftest's rule knows every
    stop reason (which ones can leave that run, which ones cannot)."""
    from conftest import LAST_RUN_UNSPENT_AFTER, NEVER_UNSPENT_AFTER
    from erahbo.policies import STOP_REASONS

    assert sorted(LAST_RUN_UNSPENT_AFTER + NEVER_UNSPENT_AFTER) == sorted(STOP_REASONS)
    res = optimize(lambda c, s: float(c["x"]) + 0.1 * (s % 3),
                   erahbo.SearchSpace.from_table(pd.DataFrame({"x": np.linspace(0, 1, 9)})),
                   method="rahbo", k=2, n_init=2, budget=9, seed=0)
    assert res.n_evals == 8 and res.rounds.stop_reason.iloc[-1] == "fixed_k"
    assert spent_budget(res, 9) and not spent_budget(res, 10)


def test_incumbent_is_argmax_lcb_mv_over_evaluated():
    table = _table()
    opt = Optimizer(table, "rahbo", budget=100, seed=1, k=5, alpha=2.0)
    task = TableTask(table)
    assert opt.incumbent_id is None and np.isnan(opt.incumbent_mv)  # no data yet
    while (t := opt.ask()) is not None:
        opt.tell(t, [task(t.config, s) for s in t.seeds])
    d = opt.data
    ref = ReferenceRound(d.U, d.ybar, d.s2, d.k, opt.model_settings,
                         opt.space.candidates_unit())
    mf, sf, mv, sv = ref.predict(d.U)
    lcb = mf - np.sqrt(2.5) * sf - 2.0 * (mv + np.sqrt(2.5) * sv)
    res = opt.result()
    assert res.incumbent_id == d.config_ids[int(np.argmax(lcb))]
    assert res.incumbent_mv == pytest.approx(mf[np.argmax(lcb)] - 2.0 * mv[np.argmax(lcb)])
    assert opt.recommend() == res.incumbent
    assert opt.incumbent_mv == res.incumbent_mv and opt.incumbent_id == res.incumbent_id


@pytest.mark.parametrize("method", ["erahbo", "rahbo", "gpucb"])
def test_fast_engine_makes_the_reference_decisions(method):
    table = _table(m=64, seed=3)
    task = TableTask(table)
    a = _run(table, task, method=method, engine="fast", budget=200)
    b = _run(table, task, method=method, engine="reference", budget=200)
    pd.testing.assert_frame_equal(a.history.drop(columns="wall_time"),
                                  b.history.drop(columns="wall_time"))
    pd.testing.assert_frame_equal(a.rounds, b.rounds, atol=1e-8)
    assert a.incumbent == b.incumbent


@pytest.mark.parametrize("scale", [1e6, 1e-6])
def test_return_scale_does_not_change_decisions(scale):
    """MV is scale sensitive, so alpha scales with 1 / scale; everything else is unit-free."""
    table = _table(seed=5)
    a = _run(table, TableTask(table), method="erahbo", alpha=1.0)
    b = _run(table, TableTask(table, scale=scale, offset=3 * scale), method="erahbo",
             alpha=1.0 / scale)
    assert list(a.history.config_id) == list(b.history.config_id)
    assert list(a.rounds.stop_reason) == list(b.rounds.stop_reason)
    assert a.incumbent == b.incumbent


def test_zero_variance_returns_duplicate_rows_and_huge_offsets_do_not_break():
    table = _table(dup=True)
    for task in (TableTask(table, zero_noise=True), TableTask(table, scale=1e-6, offset=1e6)):
        res = _run(table, task, method="erahbo", budget=120)
        assert spent_budget(res, 120) and res.incumbent is not None
    # the duplicated rows are two configurations with the same encoding
    opt = Optimizer(table, "rahbo", budget=40, k=2, initial_design=[0, 1, 2])
    task = TableTask(table)
    while (t := opt.ask()) is not None:
        opt.tell(t, [task(t.config, s) for s in t.seeds])
    assert opt.recommend() is not None


def _stop_case(target_mean):
    """Incumbent row 0 returns 1.0 on every seed; the only candidate left is row 5.

    Row 5 returns ``target_mean`` on every seed: -100 is clearly dominated, 1.0 ties with the
    incumbent, so ``UCB_MV(x_5; k) > B_t = LCB_MV(x_0)`` for every k (the interval straddles).
    """
    table = _table(m=12, seed=7)
    means, sds = np.zeros(12), np.full(12, 0.01)
    means[0], means[5] = 1.0, target_mean
    sds[0] = sds[5] = 0.0

    def obj(config, seed):
        i = int(np.flatnonzero((table.to_numpy() == list(config.values())).all(1))[0])
        return means[i] + sds[i] * np.random.default_rng(seed).standard_normal()

    opt = Optimizer(table, "erahbo", budget=60 + 20, seed=0, k_min=2, k_max=20,
                    initial_design=[0, 1, 2], random_interleave=0)  # round 4: the rule's
    for c in range(12):
        if c != 5:
            opt.exclude(c)
    while (t := opt.ask()) is not None:
        opt.tell(t, [obj(t.config, s) for s in t.seeds])
    return opt.result().rounds


def test_stopping_rule_stops_at_k_min_when_clearly_dominated():
    r = _stop_case(target_mean=-100.0).iloc[3]
    assert (r.config_id, r.k, r.stop_reason) == (5, 2, "dominated")
    assert r.ucb_mv <= r.B_t


def test_stopping_rule_runs_to_k_max_when_the_interval_straddles_B_t():
    r = _stop_case(target_mean=1.0).iloc[3]
    assert (r.config_id, r.k, r.stop_reason) == (5, 20, "k_max")
    assert r.B_t < r.ucb_mv  # never certified worse than the incumbent


def test_exclude_and_external_initial_design_outside_the_budget():
    table = _table()
    task = TableTask(table)
    opt = Optimizer(table, "erahbo", budget=30, seed=0, k_max=6, initial_design=[3, 7, 9],
                    k_init=4, initial_in_budget=False, preset="paper")
    init = [opt.ask() for _ in range(1)]
    assert init[0].config_id == 3 and len(init[0].seeds) == 4 and init[0].phase == "init"
    opt.tell(init[0], [task(init[0].config, s) for s in init[0].seeds])
    for _ in range(2):
        t = opt.ask()
        opt.tell(t, [task(t.config, s) for s in t.seeds])
    t = opt.ask()  # first BO round
    opt.tell(t, [task(t.config, s) for s in t.seeds])
    opt.exclude(t.config_id)
    while (t2 := opt.ask()) is not None:
        assert t2.config_id != t.config_id
        opt.tell(t2, [task(t2.config, s) for s in t2.seeds])
    res = opt.result()
    assert (res.history.phase == "bo").sum() == 30  # only BO seeds count
    assert res.rounds.iloc[3].stop_reason in ("excluded", "dominated")
    with pytest.raises(ValueError, match="finite"):
        Optimizer({"a": ("float", 0, 1)}).exclude(0)


def test_budget_cuts_the_inner_loop_and_partial_tells():
    table = _table()
    task = TableTask(table)
    opt = Optimizer(table, "erahbo", budget=55, seed=0, k_max=10,
                    preset="paper")  # 50 for the design
    while (t := opt.ask()) is not None:
        ys = [task(t.config, s) for s in t.seeds]
        opt.tell(t, ys[:-1] if len(ys) > 2 else ys)  # the last run of long trials failed
    res = opt.result()
    assert res.n_evals == 55 and res.rounds.iloc[-1].stop_reason in ("budget", "dominated")
    assert (res.history.phase == "init").sum() == 45  # 5 x 9 of the 10 seeds ran


def test_batch_objective_gets_all_seeds_of_a_trial():
    calls = []

    @erahbo.batch_objective
    def obj(config, seeds):
        calls.append(len(seeds))
        return [config["x"] - 0.1 * (s % 7) for s in seeds]

    res = erahbo.optimize(obj, {"x": ("float", 0.0, 1.0)}, method="rahbo", k=4, budget=40,
                          seed=0, raw_samples=64, n_polish=1)
    assert calls == [4] * 10 and res.n_evals == 40


def test_mixed_and_conditional_spaces_give_valid_configs():
    space = erahbo.SearchSpace({
        "lr": ("log", 1e-4, 1e-1), "layers": ("int", 1, 4), "act": ("cat", ["relu", "tanh"]),
        "target": ("cat", [True, False]),
        "tau": {"type": "float", "lower": 0.0, "upper": 1.0,
                "condition": {"parent": "target", "op": "in", "values": [True]}},
    })

    def obj(c, seed):
        assert isinstance(c["layers"], int) and 1 <= c["layers"] <= 4
        assert c["act"] in ("relu", "tanh") and ("tau" in c) == bool(c["target"])
        rng = np.random.default_rng(seed)
        return -abs(np.log10(c["lr"]) + 2) + 0.1 * c["layers"] + c.get("tau", 0.0) \
            + 0.1 * rng.standard_normal()

    for method in ("erahbo", "gpucb", "random"):
        res = erahbo.optimize(obj, space, method=method, budget=44, k=3, k_max=4, seed=1,
                              raw_samples=64, n_polish=2)
        assert res.n_evals == 44 and set(res.incumbent) <= set(space.names)


def test_refit_every_refits_and_schedule_rises():
    table = _table()
    task = TableTask(table)
    opt = Optimizer(table, "erahbo", budget=200, seed=0, k_max=10, refit_every=2,
                    schedule="exponential", gamma=5.0, preset="paper")
    seen = []
    while (t := opt.ask()) is not None:
        seen.append(id(opt.model_settings))
        opt.tell(t, [task(t.config, s) for s in t.seeds])
    assert len(set(seen) - {id(None)}) >= 3
    bs = opt.result().rounds.query("phase == 'bo'").beta_stop.to_numpy()
    assert bs[0] < bs[-1] <= 1.0 and np.all(np.diff(bs) >= 0)


def test_bad_inputs_give_clear_errors():
    table = _table()
    with pytest.raises(ValueError, match="method"):
        Optimizer(table, "bogus")
    with pytest.raises(ValueError, match="budget"):
        Optimizer(table, "erahbo", budget=20, preset="paper")  # cannot cover 5 x 20 runs
    with pytest.raises(ValueError, match="budget"):
        Optimizer(table, "erahbo", budget=9)  # cannot cover 5 x 2 initial runs
    with pytest.raises(ValueError, match="max_seeds=3 is below the seeds of one round"):
        Optimizer(table, "rahbo", k=5, max_seeds=3)
    with pytest.raises(ValueError, match="k_min"):
        Optimizer(table, "erahbo", k_min=0)
    with pytest.raises(ValueError, match="schedule"):
        Optimizer(table, "erahbo", schedule="sigmoid")  # needs a budget
    opt = Optimizer(table, "rahbo", budget=100, k=5)
    t = opt.ask()
    with pytest.raises(RuntimeError, match="pending"):
        opt.ask()
    with pytest.raises(ValueError, match="at least 2"):
        opt.tell(t, [1.0])
    with pytest.raises(ValueError, match="finite"):
        opt.tell(t, [1.0, np.nan])
    opt.tell(t, [1.0, 2.0])
    with pytest.raises(ValueError, match="pending"):
        opt.tell(t, [1.0, 2.0])
    with pytest.raises(ValueError, match="finite"):
        erahbo.optimize(lambda c, s: float("inf"), table, budget=100, k=5, method="rahbo")


def test_fixed_hyperparameters_and_fast_model_state_is_append_only():
    table = _table()
    opt = Optimizer(table, "rahbo", budget=60, k=5)
    task = TableTask(table)
    while (t := opt.ask()) is not None:
        opt.tell(t, [task(t.config, s) for s in t.seeds])
    st = opt.model_settings
    opt2 = Optimizer(table, "rahbo", budget=60, k=5, hyperparameters=(st.hyper_f, st.hyper_v))
    while (t := opt2.ask()) is not None:
        opt2.tell(t, [task(t.config, s) for s in t.seeds])
    assert opt2.result().incumbent == opt.result().incumbent
    with pytest.raises(RuntimeError, match="append-only"):
        fm = FastModel(st, opt.space.candidates_unit())
        fm.sync(opt.data.U)
        fm.sync(opt.data.U[::-1])


def test_figure1_recommendations():
    """Figure-1 task, alpha = 1 (full 10-seed check: benchmarks/figure1_check.py)."""
    from erahbo.objectives.synthetic import Figure1Task

    task = Figure1Task()
    for seed in range(2):
        for method, quiet in (("erahbo", True), ("rahbo", True), ("gpucb", False)):
            res = erahbo.optimize(task, task.space, method=method, budget=200, seed=seed,
                                  raw_samples=128, n_polish=2)
            x = res.incumbent["x"]
            assert (abs(x - task.x_quiet) < abs(x - task.x_noisy)) == quiet, (method, seed, x)


def test_infeasible_configurations_are_never_proposed_nor_recommended():
    table = _table(m=40, seed=11)
    task = TableTask(table)
    bad = set(range(0, 40, 3))
    for method in ("erahbo", "rahbo"):
        opt = Optimizer(table, method, budget=150, seed=2, k=5, k_max=8)
        told_bad = []
        while (t := opt.ask()) is not None:
            assert t.config_id not in told_bad
            ys = [task(t.config, s) for s in t.seeds]
            if t.config_id in bad:  # the second run fails (a one-seed trial's only run)
                ys[min(1, len(ys) - 1)] = float("nan")
                opt.tell(t, ys, infeasible=True)
                told_bad.append(t.config_id)
            else:
                opt.tell(t, ys)
        res = opt.result()
        assert told_bad and res.incumbent_id not in bad
        assert not set(res.configs.config_id) & set(told_bad)  # failed trials never pooled
        assert res.history["return"].notna().all()
        assert (res.rounds.stop_reason == "infeasible").sum() == len(told_bad)


def _diverging_objective(config, seed):
    """High returns with a large spread; x > 0.7 diverges (NaN)."""
    if config["x"] > 0.7:
        return float("nan")
    rng = np.random.default_rng(seed)
    return 300.0 + 100.0 * config["x"] + rng.normal(0.0, 50.0)


def test_mostly_failing_configuration_is_never_the_incumbent():
    # Penalties are equal across seeds, so a configuration that always fails has zero sample
    # variance; with alpha = 1 on this scale its MV would beat every feasible one if it were
    # allowed. (Sporadic failures do not bar a configuration: tests/test_sporadic_failures.py.)
    res = erahbo.optimize(_diverging_objective, {"x": ("float", 0.0, 1.0)}, method="erahbo",
                          budget=120, seed=1, k_max=6, failures="penalize")
    hist = res.history
    failed = hist.loc[hist["status"] == "penalized", "config_id"].unique()
    assert len(failed) > 0
    assert res.incumbent_id not in set(failed)
    assert res.incumbent["x"] <= 0.7


def test_seed_batch_asks_several_seeds_in_the_inner_loop():
    table = _table()
    task = TableTask(table)
    one = _run(table, task, preset="paper")  # seed_batch=1: the paper's rule, one at a time
    res = _run(table, task, seed_batch=3, preset="paper")
    for r in (one, res):
        assert r.n_evals == 160
    # every round: k_min seeds, then batches of 3 (fewer only at k_max or the budget's end)
    rounds = res.rounds[res.rounds.phase == "bo"]
    assert (rounds.k <= 10).all() and (rounds.k > 2).any()
    extra = rounds.k - 2
    ok = (extra % 3 == 0) | (rounds.k == 10) | (rounds.stop_reason == "budget")
    assert ok.all(), rounds[~ok]
    assert res.rounds.k.sum() == one.rounds.k.sum()  # both spend the budget
    with pytest.raises(ValueError, match="seed_batch"):
        Optimizer(table, "erahbo", seed_batch=0)
    with pytest.raises(ValueError, match="ERAHBO's inner loop only"):
        Optimizer(table, "rahbo", seed_batch=4)


def test_seed_batch_trials_and_settings():
    table = _table()
    task = TableTask(table)
    opt = Optimizer(table, "erahbo", budget=200, seed=0, k_max=10, seed_batch=4)
    sizes = []
    while (t := opt.ask()) is not None:
        if t.phase == "bo":
            sizes.append(len(t.seeds))
        opt.tell(t, [task(t.config, s) for s in t.seeds])
    assert set(sizes) <= {1, 2, 3, 4} and 4 in sizes  # 2 = k_min, 4 = a batch, less at caps
    assert opt.study_settings()["seed_batch"] == 4
    from erahbo.study.rebuild import study_options  # what `erahbo resume` rebuilds the study with

    again = Optimizer(table, **study_options(opt.study_settings()))
    assert again.seed_batch == 4 and again.study_settings() == opt.study_settings()
    assert Optimizer(table, "erahbo").study_settings()["seed_batch"] == 1


def test_tell_records_the_users_reason_for_a_failed_run():
    opt = Optimizer(_table(), "rahbo", k=2, budget=40, n_init=2, failures="penalize")
    t = opt.ask()
    opt.tell(t, [1.0, float("nan")], errors=[None, "trainer: loss diverged at step 912"])
    h = opt.result().history
    assert h["status"].tolist() == ["ok", "penalized"]
    assert h["error"].tolist()[1] == "trainer: loss diverged at step 912"


def test_ask_and_tell_run_on_one_blas_thread(monkeypatch):
    """Busy cores: extra BLAS threads made ask + tell 100x slower (docstring of _threads)."""
    threadpoolctl = pytest.importorskip("threadpoolctl")
    seen: list[int] = []
    real_select, real_inner = FastRound.select, FastRound.inner

    def blas_threads() -> None:
        seen.extend(d["num_threads"] for d in threadpoolctl.threadpool_info()
                    if d["user_api"] == "blas")

    # spies inside the numerical work of an ask (a new round's argmax) and of a tell (the
    # round's bounds after the seeds told), on the round model's public methods
    monkeypatch.setattr(FastRound, "select", lambda self, *a: (blas_threads(),
                                                               real_select(self, *a))[1])
    monkeypatch.setattr(FastRound, "inner", lambda self, *a: (blas_threads(),
                                                              real_inner(self, *a))[1])
    table = _table()
    with threadpoolctl.threadpool_limits(2, user_api="blas"):
        opt = Optimizer(table, "rahbo", k=2, budget=20, n_init=2)
        while (t := opt.ask()) is not None:
            opt.tell(t, [float(sum(t.config.values())) + 0.01 * s % 1 for s in t.seeds])
        n_direct = len(seen)
        # optimize() tells evaluated outcomes, not through tell(): limited as well
        erahbo.optimize(lambda c, s: float(sum(c.values())) + 0.01 * s % 1, table,
                        method="rahbo", k=2, budget=12, n_init=2)
        after = {d["num_threads"] for d in threadpoolctl.threadpool_info()
                 if d["user_api"] == "blas"}
    assert len(seen) > n_direct
    assert seen and set(seen) == {1}
    assert after == {2}  # the caller's own limit is restored


def _lr_return(config, seed):
    z = np.random.default_rng(seed).standard_normal()
    return float(-(np.log10(config["lr"]) + 3) ** 2 + 0.1 * z)


def _lr_return_mutating(config, seed):
    value = _lr_return(config, seed)
    config["lr"] = 999.0  # the objective changes the dict it was handed
    return value


@erahbo.batch_objective
def _lr_batch_mutating(config, seeds):
    values = [_lr_return(config, s) for s in seeds]
    config["lr"] = 999.0
    return values


_DECISION_COLS = ["iteration", "phase", "config_id", "lr", "seed", "return", "k", "k_round",
                  "status"]


@pytest.mark.parametrize(("objective", "executor"), [
    (_lr_return_mutating, "serial"), (_lr_batch_mutating, "serial"),
    (_lr_return_mutating, "process")])
def test_an_objective_that_changes_its_config_changes_nothing(objective, executor):
    """Each call of an objective gets its own copy of the configuration: one that writes into
    it (``config["lr"] = 999``) reaches neither the next seed's call nor the study's records,
    so the study equals the one of an objective that leaves its dict alone (inline and on a
    process pool)."""
    space = {"lr": ("log", 1e-5, 1e-1)}
    workers = 2 if executor == "process" else None
    plain = optimize(_lr_return, space, budget=24, seed=0)
    changed = optimize(objective, space, budget=24, seed=0, executor=executor,
                       workers=workers)
    assert (changed.history["lr"] < 1).all()
    pd.testing.assert_frame_equal(changed.history[_DECISION_COLS], plain.history[_DECISION_COLS])
    pd.testing.assert_frame_equal(changed.configs, plain.configs)
    assert changed.incumbent == plain.incumbent


def test_ask_tell_records_the_asked_config_not_the_users_changed_dict():
    """With ask/tell the history records the configuration the study asked for, whatever the
    user did to ``trial.config`` before telling."""
    space = {"lr": ("log", 1e-5, 1e-1)}
    ref, opt = Optimizer(space, budget=12, seed=0), Optimizer(space, budget=12, seed=0)
    while (t := opt.ask()) is not None:
        r = ref.ask()
        assert t.config == r.config
        returns = [_lr_return(t.config, s) for s in t.seeds]
        t.config["lr"] = 999.0
        t.config["extra"] = "x"
        opt.tell(t, returns)
        ref.tell(r, returns)
    h, g = opt.result().history, ref.result().history
    assert "extra" not in h.columns and (h["lr"] < 1).all()
    pd.testing.assert_frame_equal(h[_DECISION_COLS], g[_DECISION_COLS])
    assert opt.result().incumbent == ref.result().incumbent
