"""Tests of erahbo.analysis (traces, stats, plots, report) and `erahbo report`.

Synthetic traces written per the trace contract; methods have a known ordering
(erahbo < rahbo-k2 < rahbo-k20 < gpucb-k20 in regret), so ranks, bold entries and
threshold crossings are known in advance.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import typer
from scipy import stats as sps
from typer.testing import CliRunner

from erahbo.analysis import stats
from erahbo.analysis.report import RANKS_CSV_COLUMNS, write_report
from erahbo.analysis.traces import align_to_grid, load_traces, method_label, sort_methods
from erahbo.experiments.traces import TRACE_META_KEY

METHODS = {"erahbo": 6.0, "rahbo-k2": 4.0, "rahbo-k20": 2.5, "gpucb-k20": 1.0}  # speed
TASKS = {"ppo_cc_acrobot": "cc", "dqn_cc_cartpole": "cc", "ppo_brax_fast": "brax",
         "sac_brax_halfcheetah": "brax", "ppo_xland_four_rooms": "xland",
         "dqn_xland_empty_random": "xland"}
BUDGET = 60
REPS = 5


# --------------------------------------------------------------------------- fake traces


def write_trace(path: Path, rows: pd.DataFrame, meta: dict) -> None:
    """Write one trace file per the contract (columns + b"erahbo_trace" metadata)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    table = pa.Table.from_pandas(rows, preserve_index=False)
    md = dict(table.schema.metadata or {})
    md[TRACE_META_KEY] = json.dumps(meta).encode()
    pq.write_table(table.replace_schema_metadata(md), path)


def _meta(task: str, domain: str, method: str, rep: int, budget: int, mv_star: float,
          init_regret: float, init_inc_regret: float) -> dict:
    return {"task": task, "domain": domain, "method": method, "repetition": rep,
            "seed": 1000 + rep, "budget": budget, "alpha": 1.0, "mv_star": mv_star,
            "init_mv_mean": mv_star - init_regret,
            "init_incumbent_mv": mv_star - init_inc_regret, "init_regret": init_regret,
            "initial_config_ids": [0, 1, 2, 3, 4], "k_init": 20,
            "outcome_processing": "none", "wall_time_s": 0.1, "erahbo_version": "test"}


def simulate(method: str, speed: float, budget: int, scale: float, rng: np.random.Generator,
             stop_at: int | None = None) -> pd.DataFrame:
    """Rows of one fake trace: rounds of k seeds; normalized incumbent regret
    0.9 * exp(-speed * t / budget) (x small noise), updated at the end of each round."""
    fixed_k = {"rahbo-k2": 2, "rahbo-k20": 20, "gpucb-k20": 20}.get(method)
    mv_star = 1.0 * scale
    rows = []
    t = 0
    rnd = 0
    inc_reg = 0.9 * scale
    cum = 0.0
    last = budget if stop_at is None else stop_at
    while t < last:
        rnd += 1
        progress_reg = 0.9 * np.exp(-speed * (t + 1) / budget)
        config_norm = progress_reg * (1.0 + rng.uniform(0.0, 1.0))  # >= incumbent level
        if fixed_k is None:  # adaptive: more seeds on better configurations
            k = int(np.clip(round(20 * (1.0 - config_norm)), 2, 20))
            reason = "k_max" if k == 20 else "dominated"
        else:
            k, reason = fixed_k, "fixed_k"
        k = min(k, last - t)
        config_mv = mv_star - config_norm * scale
        new_inc = progress_reg * (1.0 + 0.02 * rng.standard_normal()) * scale
        for j in range(k):
            t += 1
            cum += mv_star - config_mv
            end = j == k - 1
            if end:
                inc_reg = min(inc_reg, new_inc)
            rows.append({"run": t, "round": rnd, "config_id": 100 + rnd, "seed": j,
                         "k_round": k, "config_mv": config_mv, "incumbent_id": 7,
                         "incumbent_mv": mv_star - inc_reg, "simple_regret": inc_reg,
                         "cumulative_regret": cum,
                         "stop_reason": (reason if t < budget else "budget") if end else ""})
    df = pd.DataFrame(rows)
    return df.astype({c: "int64" for c in ("run", "round", "config_id", "seed", "k_round",
                                           "incumbent_id")})


def write_fake_results(root: Path, *, tasks: dict[str, str] = TASKS,
                       methods: dict[str, float] = METHODS, reps: int = REPS,
                       budget: int = BUDGET, seed: int = 0,
                       short: tuple[str, str, int] | None = None) -> Path:
    """A results directory of synthetic traces with a known method ordering."""
    rng = np.random.default_rng(seed)
    for ti, (task, domain) in enumerate(tasks.items()):
        scale = 10.0 ** (ti % 3 - 1)  # tasks on different scales: ranks must not care
        for rep in range(reps):
            for method, speed in methods.items():
                stop = budget // 2 if short == (task, method, rep) else None
                rows = simulate(method, speed, budget, scale, rng, stop_at=stop)
                meta = _meta(task, domain, method, rep, budget, 1.0 * scale, 1.0 * scale,
                             0.9 * scale)
                write_trace(root / "traces" / task / method / f"rep-{rep:03d}.parquet",
                            rows, meta)
    return root


def linear_trace(budget: int, slope_runs: float, scale: float) -> pd.DataFrame:
    """k = 1 rounds; normalized simple regret 1 - t / slope_runs (clipped at 0)."""
    t = np.arange(1, budget + 1)
    reg = np.clip(1.0 - t / slope_runs, 0.0, None) * scale
    return pd.DataFrame({
        "run": t, "round": t, "config_id": t, "seed": np.zeros_like(t), "k_round": 1,
        "config_mv": scale - reg, "incumbent_id": t, "incumbent_mv": scale - reg,
        "simple_regret": reg, "cumulative_regret": np.cumsum(reg),
        "stop_reason": ["fixed_k"] * budget})


@pytest.fixture(scope="module")
def results(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("results")
    return write_fake_results(root, short=("ppo_brax_fast", "rahbo-k20", 1))


@pytest.fixture(scope="module")
def trace_set(results: Path):
    return load_traces(results)


@pytest.fixture(scope="module")
def report(results: Path, tmp_path_factory: pytest.TempPathFactory):
    out = tmp_path_factory.mktemp("report")
    return write_report(results, out, bootstrap_reps=30, seed=3)


# --------------------------------------------------------------------------- traces


def test_align_to_grid_carries_last_value_forward() -> None:
    out = align_to_grid(np.array([3, 1, 2]), np.array([0.3, 0.9, 0.5]), 6, initial=1.0)
    np.testing.assert_allclose(out, [0.9, 0.5, 0.3, 0.3, 0.3, 0.3])
    # gap before the first row -> initial value; runs beyond the budget ignored
    out = align_to_grid(np.array([3, 9]), np.array([0.4, 0.0]), 5, initial=0.8)
    np.testing.assert_allclose(out, [0.8, 0.8, 0.4, 0.4, 0.4])
    np.testing.assert_allclose(align_to_grid(np.array([]), np.array([]), 3, 0.7), [0.7] * 3)


def test_load_traces_shapes_order_and_normalization(trace_set) -> None:
    ts = trace_set
    assert ts.methods == ("erahbo", "rahbo-k20", "rahbo-k2", "gpucb-k20")  # paper's order
    assert ts.budget == BUDGET
    assert [ts.domains[t] for t in ts.tasks] == ["cc", "cc", "brax", "brax", "xland", "xland"]
    for task in ts.tasks:
        assert ts.simple_regret[task].shape == (4, REPS, BUDGET)
        ir = ts.init_regret[task]
        np.testing.assert_allclose(ts.normalized_regret[task],
                                   ts.simple_regret[task] / ir[None, :, None])
        # cumulative regret never decreases; simple regret never increases
        assert np.all(np.diff(ts.cumulative_regret[task], axis=-1) >= -1e-12)
        assert np.all(np.diff(ts.simple_regret[task], axis=-1) <= 1e-12)
    tidy = ts.tidy("normalized", runs=[1, BUDGET])
    assert set(tidy.columns) == {"task", "domain", "method", "repetition", "run", "value"}
    assert len(tidy) == len(ts.tasks) * 4 * REPS * 2


def test_short_trace_keeps_its_final_value(trace_set, results: Path) -> None:
    ts = trace_set
    raw = pd.read_parquet(results / "traces/ppo_brax_fast/rahbo-k20/rep-001.parquet")
    assert raw["run"].max() == BUDGET // 2
    mi = ts.methods.index("rahbo-k20")
    ri = int(np.flatnonzero(ts.repetitions["ppo_brax_fast"] == 1)[0])
    row = ts.simple_regret["ppo_brax_fast"][mi, ri]
    assert np.all(row[BUDGET // 2 - 1:] == raw["simple_regret"].iloc[-1])
    assert ts.cumulative_regret["ppo_brax_fast"][mi, ri, -1] == raw["cumulative_regret"].iloc[-1]
    assert any("end before run" in n for n in ts.notes)


def test_empty_trace_holds_the_initial_design_state(tmp_path: Path) -> None:
    for method, rows in (("erahbo", linear_trace(10, 20.0, 2.0)),
                         ("gpucb-k20", linear_trace(10, 20.0, 2.0).iloc[:0])):
        write_trace(tmp_path / f"traces/t_cc/{method}/rep-000.parquet", rows,
                    _meta("t_cc", "cc", method, 0, 10, 2.0, 2.0, 1.5))
    ts = load_traces(tmp_path)
    g = ts.methods.index("gpucb-k20")
    np.testing.assert_allclose(ts.simple_regret["t_cc"][g, 0], 1.5)  # mv_star - init inc.
    np.testing.assert_allclose(ts.normalized_regret["t_cc"][g, 0], 0.75)
    np.testing.assert_allclose(ts.cumulative_regret["t_cc"][g, 0], 0.0)


def test_method_labels_and_order() -> None:
    assert method_label("erahbo") == "ERAHBO"
    assert method_label("rahbo-k2") == "RAHBO (k=2)"
    assert method_label("gpucb-k20") == "GP-UCB (k=20)"
    assert method_label("random-k20") == "Random (k=20)"
    assert method_label("erahbo-exp50") == "ERAHBO (exp50)"
    assert sort_methods(["gpucb-k20", "rahbo-k2", "rahbo-k5", "erahbo", "rahbo-k20"]) == [
        "erahbo", "rahbo-k20", "rahbo-k5", "rahbo-k2", "gpucb-k20"]
    assert method_label("rahbo-k2-p4") == "RAHBO (k=2, 4 in parallel)"
    assert method_label("erahbo-p8") == "ERAHBO (8 in parallel)"
    assert sort_methods(["rahbo-k2-p8", "erahbo-p4", "rahbo-k2", "erahbo", "rahbo-k2-p4"]) == [
        "erahbo", "erahbo-p4", "rahbo-k2", "rahbo-k2-p4", "rahbo-k2-p8"]
    # ERAHBO variants: constant beta_stop, exponential, then sigmoid schedules, then seed
    # batches, each by its value; other variants after them
    assert sort_methods(["erahbo-exp50", "erahbo-b4", "erahbo-sig20", "erahbo-exp5", "erahbo",
                         "erahbo-sig10", "erahbo-exp20", "erahbo-exp5-p2", "erahbo-race",
                         "erahbo-bs0.5", "erahbo-bs0"]) == [
        "erahbo", "erahbo-bs0", "erahbo-bs0.5", "erahbo-exp5", "erahbo-exp5-p2",
        "erahbo-exp20", "erahbo-exp50", "erahbo-sig10", "erahbo-sig20", "erahbo-b4",
        "erahbo-race"]


def test_load_errors_are_clear(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="no traces found"):
        load_traces(tmp_path)
    rows = linear_trace(10, 20, 1.0).drop(columns=["simple_regret"])
    write_trace(tmp_path / "traces/t/erahbo/rep-000.parquet", rows,
                _meta("t", "cc", "erahbo", 0, 10, 1.0, 1.0, 1.0))
    with pytest.raises(ValueError, match="simple_regret"):
        load_traces(tmp_path)


# --------------------------------------------------------------------------- ranks


def test_rank_table_recovers_known_order(trace_set) -> None:
    tab = stats.rank_table(trace_set).set_index("method")
    for metric in ("simple", "cumulative"):
        np.testing.assert_allclose(
            tab.loc[["erahbo", "rahbo-k2", "rahbo-k20", "gpucb-k20"], f"mean_rank_{metric}"],
            [1, 2, 3, 4])
        assert tab.at["erahbo", f"bold_{metric}"]
        assert tab.at["erahbo", f"best_{metric}"]
        # 6 tasks, all paired differences > 0: exact one-sided p = 1/64 < 0.05
        for m in ("rahbo-k2", "rahbo-k20", "gpucb-k20"):
            assert not tab.at[m, f"bold_{metric}"]
            assert tab.at[m, f"p_{metric}"] == pytest.approx(1 / 64)
        assert tab[f"se_rank_{metric}"].eq(0).all()
        assert tab.at["rahbo-k2", f"median_rank_{metric}"] == 2
    assert tab["n_units"].iloc[0] == len(TASKS)
    rep = stats.rank_table(trace_set, unit="repetition")
    assert rep["n_units"].iloc[0] == len(TASKS) * REPS


def test_wilcoxon_bold_ties_and_close_methods() -> None:
    rng = np.random.default_rng(1)
    vals = rng.normal(size=(20, 3))  # (units, methods)
    vals[:, 1] = vals[:, 0]  # identical to method 0 -> same ranks -> bold
    vals[:, 2] = vals[:, 0] + 5.0  # always worse -> not bold
    ranks = stats.rank_rows(vals)
    np.testing.assert_allclose(ranks[:, :2], 1.5)
    best, p, bold = stats.wilcoxon_vs_best(ranks)
    assert best == 0 and bold.tolist() == [True, True, False]
    assert p[1] == 1.0 and p[2] < 1e-4
    # a method that is worse on only a few units is not significantly worse
    few = np.tile([1.0, 2.0], (12, 1))
    few[:1] = [2.0, 1.0]  # worse on 11 of 12 units
    _, p2, bold2 = stats.wilcoxon_vs_best(few)
    assert bold2.tolist() == [True, False]
    few[:5] = [2.0, 1.0]  # worse on 7 of 12
    _, p3, bold3 = stats.wilcoxon_vs_best(few)
    assert bold3.tolist() == [True, True] and p3[1] > p2[1]
    with pytest.raises(ValueError, match="alpha"):
        stats.wilcoxon_vs_best(ranks, alpha=2.0)


def test_rank_over_time_matches_final_ranks(trace_set) -> None:
    c = stats.rank_over_time(trace_set, "simple")
    assert c.mean.shape == (4, BUDGET) and c.n_units == len(TASKS)
    tab = stats.rank_table(trace_set)
    np.testing.assert_allclose(c.mean[:, -1], tab["mean_rank_simple"])
    np.testing.assert_allclose(c.mean.sum(axis=0), 10.0)  # ranks of 4 methods sum to 10
    cc = stats.rank_over_time(trace_set, "simple", domain="cc")
    assert cc.n_units == 2
    with pytest.raises(ValueError, match="t must lie"):
        stats.rank_table(trace_set, t=BUDGET + 1)


# --------------------------------------------------------------------------- IQM / CI


def test_iqm_equals_trimmed_mean() -> None:
    x = np.array([[1.0, 9.0, 3.0, 4.0], [100.0, -50.0, 7.0, 8.0]])
    assert stats.iqm(x) == pytest.approx(sps.trim_mean(x.ravel(), 0.25))
    assert stats.iqm(np.arange(8.0)) == pytest.approx(3.5)  # mean of 2, 3, 4, 5
    from rliable import metrics

    assert stats.iqm(x) == pytest.approx(metrics.aggregate_iqm(x))


@pytest.mark.parametrize("backend", ["numpy", "rliable"])
def test_bootstrap_ci_contains_point_and_is_seeded(backend: str) -> None:
    if backend == "rliable" and not stats.rliable_available():
        pytest.skip("rliable.library cannot be imported here (arch/pandas versions)")
    rng = np.random.default_rng(0)
    scores = rng.gamma(2.0, size=(10, 3, 4))  # (runs, tasks, points)
    a = stats.stratified_bootstrap_iqm(scores, reps=200, seed=5, backend=backend)
    b = stats.stratified_bootstrap_iqm(scores, reps=200, seed=5, backend=backend)
    assert a.backend == backend
    np.testing.assert_allclose(a.point, [stats.iqm(scores[..., g]) for g in range(4)])
    assert np.all(a.lo <= a.point) and np.all(a.point <= a.hi) and np.all(a.lo < a.hi)
    np.testing.assert_array_equal(a.lo, b.lo)
    np.testing.assert_array_equal(a.hi, b.hi)
    # constant data -> degenerate interval at the value
    c = stats.stratified_bootstrap_iqm(np.full((5, 2), 0.3), reps=20, backend=backend)
    np.testing.assert_allclose([c.lo[0], c.point[0], c.hi[0]], 0.3)


def test_bootstrap_backends_agree() -> None:
    if not stats.rliable_available():
        pytest.skip("rliable.library cannot be imported here (arch/pandas versions)")
    scores = np.random.default_rng(2).gamma(2.0, size=(20, 4, 3))  # (runs, tasks, points)
    a = stats.stratified_bootstrap_iqm(scores, reps=1000, seed=0, backend="numpy")
    b = stats.stratified_bootstrap_iqm(scores, reps=1000, seed=0, backend="rliable")
    width = a.hi - a.lo
    np.testing.assert_allclose(a.point, b.point)
    assert np.all(np.abs(a.lo - b.lo) < 0.15 * width)
    assert np.all(np.abs(a.hi - b.hi) < 0.15 * width)


def test_bootstrap_is_stratified_by_task() -> None:
    # task 0 always 0, task 1 always 1: any within-task resample keeps the IQM at 0.5
    scores = np.stack([np.zeros(8), np.ones(8)], axis=1)  # (runs, tasks)
    est = stats.stratified_bootstrap_iqm(scores, reps=100, seed=0, backend="numpy")
    np.testing.assert_allclose([est.lo[0], est.hi[0]], 0.5)
    with pytest.raises(ValueError, match="NaN"):
        stats.stratified_bootstrap_iqm(np.array([[np.nan, 1.0]]), reps=5)


def test_iqm_curves_and_checkpoints(trace_set) -> None:
    cps = stats.default_checkpoints(2000)
    assert cps == [100, 250, 500, 1000, 2000]
    df = stats.checkpoint_regret(trace_set, [10, BUDGET], reps=40, seed=0, backend="numpy")
    assert set(df["group"]) == {"cc", "brax", "xland", "all"}
    row = df[(df["group"] == "all") & (df["method"] == "erahbo") & (df["checkpoint"] == 10)]
    pooled = np.concatenate([trace_set.normalized_regret[t][0, :, 9] for t in trace_set.tasks])
    assert row["iqm"].iloc[0] == pytest.approx(sps.trim_mean(pooled, 0.25))
    assert np.all(df["lo"] <= df["iqm"] + 1e-12) and np.all(df["iqm"] <= df["hi"] + 1e-12)
    final = df[(df["group"] == "all") & (df["checkpoint"] == BUDGET)].set_index("method")
    assert final["iqm"].idxmin() == "erahbo" and final["iqm"].idxmax() == "gpucb-k20"


# --------------------------------------------------------------------------- thresholds


def test_first_crossing() -> None:
    curve = np.array([1.0, 0.8, 0.75, 0.6, 0.4])
    assert stats.first_crossing(curve, 0.75) == 4  # strictly below
    assert stats.first_crossing(curve, 0.5) == 5
    assert stats.first_crossing(curve, 0.25) is None


def test_threshold_crossing_known_runs(tmp_path: Path) -> None:
    # normalized regret 1 - t/slope: first t with value < thr is floor((1 - thr) * slope) + 1
    budget = 80
    slopes = {"erahbo": [40.0, 60.0, 52.0], "rahbo-k2": [100.0, 120.0, 110.0]}
    for ti, task in enumerate(["a_cc", "b_cc", "c_brax"]):
        for method, sl in slopes.items():
            for rep in range(3):
                scale = 2.0 + ti
                write_trace(tmp_path / f"traces/{task}/{method}/rep-{rep:03d}.parquet",
                            linear_trace(budget, sl[ti], scale),
                            _meta(task, task.split("_")[1], method, rep, budget, scale, scale,
                                  scale))
    ts = load_traces(tmp_path)
    cr = stats.threshold_crossing(ts, (0.75, 0.5, 0.25, 0.05))
    idx = cr.set_index(["task", "method", "threshold"])["run"]

    def expect(slope: float, thr: float) -> float:
        t = int(np.floor((1 - thr) * slope + 1e-9)) + 1
        return float(t) if t <= budget else np.nan

    for ti, task in enumerate(["a_cc", "b_cc", "c_brax"]):
        for method, sl in slopes.items():
            for thr in (0.75, 0.5, 0.25, 0.05):
                got, want = idx.loc[(task, method, thr)], expect(sl[ti], thr)
                assert (np.isnan(got) and np.isnan(want)) or got == want
    agg = stats.threshold_aggregate(cr, ts.methods).set_index(["threshold", "method"])
    # 75 %: every task reached by both -> mean over 3 tasks
    e75 = [expect(s, 0.75) for s in slopes["erahbo"]]
    assert agg.loc[(0.75, "erahbo"), "n_common"] == 3
    assert agg.loc[(0.75, "erahbo"), "mean"] == pytest.approx(np.mean(e75))
    assert agg.loc[(0.75, "erahbo"), "se"] == pytest.approx(np.std(e75, ddof=1) / np.sqrt(3))
    # 25 %: rahbo-k2 reaches it only in a_cc (t = 76) -> one common task, SE undefined
    assert agg.loc[(0.25, "erahbo"), "n_common"] == 1
    assert agg.loc[(0.25, "erahbo"), "mean"] == expect(40.0, 0.25) == 31
    assert agg.loc[(0.25, "rahbo-k2"), "mean"] == 76 and np.isnan(agg.loc[(0.25, "erahbo"), "se"])
    assert agg.loc[(0.25, "erahbo"), "count"] == 3 and agg.loc[(0.25, "rahbo-k2"), "count"] == 1
    # 5 %: rahbo-k2 never gets there -> no common task
    assert agg.loc[(0.05, "erahbo"), "n_common"] == 0
    assert np.isnan(agg.loc[(0.05, "erahbo"), "mean"])
    assert agg.loc[(0.05, "erahbo"), "count"] == 3 and agg.loc[(0.05, "rahbo-k2"), "count"] == 0


# --------------------------------------------------------------------------- seed counts


def test_seed_count_distribution_and_k_vs_mv(trace_set) -> None:
    dist = stats.seed_count_distribution(trace_set.rounds, trace_set.methods)
    for _m, g in dist.groupby("method"):
        assert g["fraction"].sum() == pytest.approx(1.0)
    k2 = dist[dist["method"] == "rahbo-k2"]
    assert k2["k"].tolist() == [2]
    assert dist[dist["method"] == "erahbo"]["k"].nunique() > 3
    summ = stats.seed_count_summary(trace_set.rounds).set_index("method")
    assert summ.at["erahbo", "spearman_k_mv"] > 0.5  # more seeds on better configurations
    assert np.isnan(summ.at["rahbo-k2", "spearman_k_mv"])  # constant k
    assert 0 < summ.at["erahbo", "frac_certified"] < 1
    kmv = stats.k_vs_mv(trace_set.rounds, trace_set.methods, n_bins=5)
    e = kmv[kmv["method"] == "erahbo"].sort_values("bin")
    assert e["mean_k"].iloc[0] > e["mean_k"].iloc[-1]  # best bin gets more seeds


def test_seed_count_by_task_reads_the_adaptive_methods(trace_set) -> None:
    by = stats.seed_count_by_task(trace_set.rounds, trace_set.methods)
    assert set(by["method"]) == {"erahbo"}  # fixed-k methods have nothing to read per task
    assert sorted(by["task"]) == sorted(trace_set.rounds["task"].unique())
    r = trace_set.rounds[trace_set.rounds["method"] == "erahbo"]
    for row in by.itertuples():
        g = r[r["task"] == row.task]
        assert row.n_rounds == len(g) and row.mean_k == pytest.approx(g["k"].mean())
        assert row.frac_k_max == pytest.approx((g["stop_reason"] == "k_max").mean())
    hand = pd.DataFrame({"task": ["a", "a", "a", "b"], "method": ["erahbo"] * 4,
                         "k": [20, 20, 2, 3], "stop_reason": ["k_max", "k_max", "dominated",
                                                              "dominated"]})
    by = stats.seed_count_by_task(hand).set_index("task")
    assert by.at["a", "frac_k_max"] == pytest.approx(2 / 3) and by.at["a", "mean_k"] == 14
    assert by.at["b", "frac_k_max"] == 0


# --------------------------------------------------------------------------- report + CLI


def test_report_writes_all_files(report) -> None:
    out = report.out_dir
    md = (out / "report.md").read_text()
    for heading in ("## 1.", "## 2.", "## 3.", "## 4.", "## 5.", "## 6."):
        assert heading in md
    assert "**1.00 ± 0.00**" in md  # ERAHBO is best and bold
    assert "| Simple Regret MV |" in md
    for p in report.figures:
        assert p.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and p.stat().st_size > 5000
        assert f"figures/{p.name}" in md
    names = {p.name for p in report.figures}
    assert {"rank_over_time.png", "regret_by_domain.png", "regret_by_task.png",
            "seed_counts.png", "k_vs_mv.png", "checkpoints.png"} <= names
    for p in report.tables:
        tex = p.read_text()
        assert "\\toprule" in tex and "\\bottomrule" in tex
    assert "\\textbf{1.00} $\\pm$ \\textbf{0.00}" in (out / "tables/ranks_mean.tex").read_text()
    assert "n_{\\mathrm{common}}" in (out / "tables/thresholds_aggregate.tex").read_text()
    for p in report.csvs:
        assert p.exists() and p.stat().st_size > 0
    assert "end before run" in md  # the short trace is reported
    assert "**Table 5b.** Per task" in md and "seed_counts_by_task.csv" in md


def test_ranks_csv_columns_exact(report) -> None:
    df = pd.read_csv(report.out_dir / "ranks.csv")
    assert list(df.columns) == list(RANKS_CSV_COLUMNS) == [
        "method", "mean_rank_simple", "se_rank_simple", "mean_rank_cumulative",
        "se_rank_cumulative"]
    assert df["method"].tolist() == ["erahbo", "rahbo-k20", "rahbo-k2", "gpucb-k20"]
    assert df["mean_rank_simple"].tolist() == [1.0, 3.0, 2.0, 4.0]


def test_report_validates_input(results: Path, tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="bootstrap_reps"):
        write_report(results, tmp_path, bootstrap_reps=0)
    with pytest.raises(ValueError, match="thresholds"):
        write_report(results, tmp_path, thresholds=[75])


def _cli_app() -> typer.Typer:
    from erahbo.cli.report import register

    app = typer.Typer()

    @app.callback()
    def _root() -> None:
        """test root"""

    register(app, {})
    return app


def test_cli_report(tmp_path: Path) -> None:
    results = write_fake_results(tmp_path / "res", tasks={"a_cc": "cc", "b_brax": "brax"},
                                 methods={"erahbo": 3.0, "gpucb-k20": 1.0}, reps=3, budget=30)
    out = tmp_path / "rep"
    res = CliRunner().invoke(_cli_app(), ["report", str(results), "--out", str(out),
                                          "--bootstrap-reps", "10", "--seed", "1"])
    assert res.exit_code == 0, res.output
    assert "ERAHBO" in res.output and "GP-UCB (k=20)" in res.output
    assert (out / "report.md").exists() and (out / "ranks.csv").exists()
    bad = CliRunner().invoke(_cli_app(), ["report", str(tmp_path / "nope")])
    assert bad.exit_code == 1 and "results_dir" in bad.output and "directory" in bad.output


def test_rank_distribution_fractions_and_mode(trace_set, report) -> None:
    runs = [1, 10, 30, BUDGET]
    d = stats.rank_distribution(trace_set, runs=runs)
    m = len(METHODS)
    assert d.fraction.shape == (m, m, len(runs)) and d.mode.shape == (m, len(runs))
    assert d.n_units == len(TASKS) * REPS
    np.testing.assert_allclose(d.fraction.sum(axis=1), 1.0)  # per method and run
    # run 1: every method still holds the shared initial incumbent -> 4-way tie at 2.5,
    # rounded half up to rank 3 for every unit
    np.testing.assert_allclose(d.fraction[:, 2, 0], 1.0)
    assert (d.mode[:, 0] == 3).all()
    # at the budget the known ordering erahbo < rahbo-k2 < rahbo-k20 < gpucb-k20 holds
    order = {meth: i for i, meth in enumerate(trace_set.methods)}
    for rank, meth in enumerate(["erahbo", "rahbo-k2", "rahbo-k20", "gpucb-k20"], start=1):
        assert d.mode[order[meth], -1] == rank
        # the mode is the most frequent rank
        assert d.fraction[order[meth], rank - 1, -1] == d.fraction[order[meth], :, -1].max()
    cc = stats.rank_distribution(trace_set, domain="cc", runs=runs)
    assert cc.n_units == 2 * REPS
    with pytest.raises(ValueError, match="runs must"):
        stats.rank_distribution(trace_set, runs=[0])
    png = report.out_dir / "figures" / "rank_distribution.png"
    assert png in report.figures and png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    md = (report.out_dir / "report.md").read_text()
    assert "figures/rank_distribution.png" in md
    tab2 = (report.out_dir / "tables/rank_over_time.tex").read_text()
    assert "Wilcoxon" in tab2 and "not statistically significantly" in tab2


def test_parallel_variants_take_a_paler_shade_of_their_method() -> None:
    from matplotlib.colors import to_rgb

    from erahbo.analysis.plots import method_colors

    c = method_colors(["erahbo", "erahbo-p2", "erahbo-p8", "rahbo-k2", "rahbo-k2-p4"])
    assert len(set(c.values())) == 5
    base, p2, p8 = (np.array(to_rgb(c[m])) for m in ("erahbo", "erahbo-p2", "erahbo-p8"))
    assert (base <= p2 + 1e-9).all() and (p2 <= p8 + 1e-9).all() and p8.sum() > p2.sum()
    # same hue family: the dominant channel of the base stays dominant
    assert np.argmax(p8) == np.argmax(base)


def test_plot_rounds_draws_every_kind_of_run(tmp_path: Path) -> None:
    import matplotlib.image as mpimg

    import erahbo
    from erahbo.analysis.run_plots import plot_rounds
    from erahbo.objectives.synthetic import Figure1Task

    task = Figure1Task()
    runs = {
        "erahbo": erahbo.optimize(task, task.space, budget=160, seed=1, k_max=8),
        "rahbo": erahbo.optimize(task, task.space, method="rahbo", k=2, budget=60, seed=1),
        # the initial design only: no BO round, so no B_t to draw
        "init": erahbo.optimize(task, task.space, method="rahbo", k=2, budget=10, seed=1,
                                k_init=2),
    }
    assert set(runs["erahbo"].rounds["stop_reason"]) >= {"initial", "dominated"}
    assert runs["init"].rounds["B_t"].isna().all()
    for name, result in runs.items():
        png = plot_rounds(result, tmp_path / f"{name}.png")
        img = mpimg.imread(png)
        assert img.shape[0] > 400 and img.shape[1] > 600, name


def test_table2_says_where_the_test_cannot_reject(report) -> None:
    """2 tasks per domain: the Wilcoxon test cannot reject (p >= 1/4), so only the best of a
    domain row is bold and the row is marked, instead of every cell in bold."""
    text = Path(report.report_md).read_text()
    table2 = text.split("**Table 2.**")[1].split("Cumulative regret")[0]
    assert "too few tasks for the test to reject at level" in table2
    rows = [ln for ln in table2.splitlines() if ln.startswith("| CC")]
    assert rows and all("\u2020" in ln for ln in rows)
    for ln in rows:
        cells = ln.split("|")[3:-1]
        assert sum("**" in c for c in cells) == 1  # the best only


def test_paired_iqm_difference_draws_the_same_runs_for_both() -> None:
    """Rule: the paired bootstrap of IQM(a) - IQM(b) resamples the same runs of each task
    for both methods; so a constant shift of every run of ``a`` is the difference exactly,
    interval included (an unpaired bootstrap would spread it by both methods' noise), and a
    method against itself is 0 with the interval [0, 0]."""
    scores = np.random.default_rng(3).gamma(2.0, size=(12, 3, 2))  # (runs, tasks, points)
    d = stats.paired_iqm_difference(scores + 0.25, scores, reps=300, seed=1)
    np.testing.assert_allclose([d.lo, d.point, d.hi], 0.25, atol=1e-12)
    same = stats.paired_iqm_difference(scores, scores, reps=50)
    np.testing.assert_allclose([same.lo, same.point, same.hi], 0.0, atol=1e-12)
    noisy = stats.paired_iqm_difference(scores, scores[::-1], reps=300, seed=1)
    assert noisy.lo[0] < noisy.point[0] < noisy.hi[0]
    with pytest.raises(ValueError, match="same shape"):
        stats.paired_iqm_difference(scores, scores[:5])
