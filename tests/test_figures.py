"""Figures tested through their matplotlib objects (axis labels, legend entries, lines)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import erahbo
from erahbo.objectives.synthetic import Figure1Task


@pytest.fixture
def saved(monkeypatch):
    """Every Figure saved during the test, in order (savefig still writes the file)."""
    from matplotlib.figure import Figure

    figs = []
    original = Figure.savefig

    def record(self, *args, **kwargs):
        figs.append(self)
        return original(self, *args, **kwargs)

    monkeypatch.setattr(Figure, "savefig", record)
    return figs


def _legend(fig) -> list[str]:
    out = []
    for leg in [*fig.legends, *(ax.get_legend() for ax in fig.axes)]:
        if leg is not None:
            out += [t.get_text() for t in leg.get_texts()]
    return out


@pytest.fixture(scope="module")
def fig1_result():
    task = Figure1Task()
    return task, erahbo.optimize(task, task.space, method="erahbo", budget=200, seed=0)


def test_configs_png_shows_the_decision(fig1_result, saved, tmp_path):
    from erahbo.analysis.run_plots import MEAN_LABEL, SPREAD_LABEL, plot_configs

    _, res = fig1_result
    plot_configs(res, tmp_path / "c.png")
    fig = saved[-1]
    ax, axb = fig.axes[0], fig.axes[1]  # scatter, bounds (then the colour bar)
    assert (ax.get_xlabel(), ax.get_ylabel()) == (SPREAD_LABEL, MEAN_LABEL)
    labels = _legend(fig)
    best = res.configs.sort_values("rank")
    inc, runner = (int(best.iloc[i]["config_id"]) for i in (0, 1))
    assert f"incumbent (rank 1): config {inc}" in labels
    assert f"runner-up (rank 2): config {runner}" in labels
    assert any(t.startswith("equal MV (alpha=") for t in labels)
    # iso-lines are parabolas mean = MV + alpha std^2
    iso = next(ln for ln in ax.get_lines() if ln.get_linestyle() == "--")
    x, y = iso.get_data()
    np.testing.assert_allclose(y - x**2, best.iloc[0]["mv"])  # alpha = 1
    # the bounds panel: one interval per ranked configuration, the incumbent's LCB drawn
    ticks = [t.get_text() for t in axb.get_yticklabels()]
    assert ticks[0].startswith(f"#1 cfg {inc}") and len(ticks) == min(12, len(best))
    assert any(t.startswith("incumbent's LCB_MV") for t in labels)


def test_configs_and_rounds_png_name_the_study_s_risk_measure(saved, tmp_path):
    """In a CVaR study the figures say CVaR_0.1 where an MV study says MV: iso-lines of equal
    CVaR are the straight lines ``mean = CVaR + phi(z_q) / q * std`` through the incumbent's
    estimate; the bounds panel and the rounds' axis and B_t name the measure."""
    from erahbo.analysis.run_plots import plot_configs, plot_rounds
    from erahbo.risk import CVaR

    task = Figure1Task()
    res = erahbo.optimize(task, task.space, budget=60, seed=0, risk="cvar", q=0.1)
    plot_configs(res, tmp_path / "c.png")
    fig = saved[-1]
    ax, axb = fig.axes[0], fig.axes[1]
    labels = _legend(fig)
    assert "equal CVaR_0.1" in labels and not any("MV" in t for t in labels)
    iso = next(ln for ln in ax.get_lines() if ln.get_linestyle() == "--")
    x, y = iso.get_data()
    inc = res.configs.sort_values("rank").iloc[0]
    np.testing.assert_allclose(y + CVaR(q=0.1).kappa * x, inc["mv"])
    assert axb.get_xlabel() == "CVaR_0.1: [LCB_CVaR_0.1, UCB_CVaR_0.1] and estimate"
    plot_rounds(res, tmp_path / "r.png")
    fig = saved[-1]
    assert "CVaR_0.1" in fig.axes[0].get_ylabel() and "MV" not in fig.axes[0].get_ylabel()
    assert any(t.startswith("B_t = ") and "CVaR_0.1" in t for t in _legend(fig))


def test_configs_png_draws_every_configuration_one_seed_ones_left_of_zero(fig1_result, saved,
                                                                         tmp_path):
    """Rule: every evaluated configuration is a point of the scatter; a one-seed configuration
    (no sample std; the default k_min = 1 makes most of them) is a grey tick left of std 0,
    counted in the legend, not dropped."""
    from erahbo.analysis.run_plots import plot_configs

    _, res = fig1_result
    c = res.configs
    n_one = int((c["k"] == 1).sum())
    assert n_one > 0  # the default study has one-seed configurations
    plot_configs(res, tmp_path / "c.png")
    ax = saved[-1].axes[0]
    offsets = [col.get_offsets() for col in ax.collections[:2]]  # k >= 2, then one seed
    assert len(offsets[0]) + len(offsets[1]) == len(c)
    assert len(offsets[1]) == n_one and (np.asarray(offsets[1])[:, 0] < 0).all()
    assert (np.asarray(offsets[0])[:, 0] >= 0).all()
    assert f"one seed, no std ({n_one})" in _legend(saved[-1])


def test_rounds_png_legend_below_and_b_t_to_the_last_round(fig1_result, saved, tmp_path):
    from erahbo.analysis.run_plots import plot_rounds

    _, res = fig1_result
    plot_rounds(res, tmp_path / "r.png")
    fig = saved[-1]
    ax = fig.axes[0]
    assert ax.get_legend() is None and len(fig.legends) == 1  # below the panels
    legend_box = fig.legends[0].get_window_extent()
    for a in fig.axes:
        assert legend_box.y1 <= a.get_window_extent().y0 + 1  # covers no panel
    b_t = next(ln for ln in ax.get_lines() if ln.get_label().startswith("B_t"))
    runs = res.rounds["k"].sum()
    assert b_t.get_xdata()[-1] == runs  # to the end of the last round
    labels = _legend(fig)
    assert any(t.startswith("incumbent: config") for t in labels)
    assert any(t.startswith("runner-up: config") for t in labels)


def test_rounds_png_marks_the_challenger_rounds(saved, tmp_path):
    from erahbo.analysis.run_plots import plot_rounds

    task = Figure1Task()
    two = {"n_init": 5, "k_init": 2, "k_min": 2}  # challengers need 2-seed configurations
    res = erahbo.optimize(task, task.space, budget=150, seed=1, **two)
    assert (res.rounds["phase"] == "challenger").any()
    plot_rounds(res, tmp_path / "r.png")
    fig = saved[-1]
    assert "challenger round (hatched)" in _legend(fig)
    hatched = [b for b in fig.axes[1].patches if b.get_hatch()]
    assert len(hatched) == int((res.rounds["phase"] == "challenger").sum())  # one per round
    off = erahbo.optimize(task, task.space, budget=150, seed=1, challengers=False, **two)
    plot_rounds(off, tmp_path / "off.png")
    assert "challenger round (hatched)" not in _legend(saved[-1])


def test_figure1_labels_the_true_mv_optimum(fig1_result, saved, tmp_path):
    from erahbo.analysis.run_plots import plot_1d_run

    task, res = fig1_result
    plot_1d_run(task, res, tmp_path / "f.png")
    ax = saved[-1].axes[0]
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert "true MV optimum" in labels
    line = next(ln for ln in ax.get_lines() if ln.get_label() == "true MV optimum")
    assert line.get_xdata()[0] == pytest.approx(task.mv_argmax(1.0)["x"])


def test_inspect_plot_uses_the_same_axes_as_configs_png(saved, tmp_path):
    from erahbo.analysis.run_plots import MEAN_LABEL, SPREAD_LABEL
    from erahbo.datasets.inspect import plot_mean_std
    from erahbo.datasets.synth import make_suite

    task = make_suite(1, seed=0, n_configs=16, n_seeds=4)[0]
    plot_mean_std(task, tmp_path / "i.png")
    ax = saved[-1].axes[0]
    assert (ax.get_xlabel(), ax.get_ylabel()) == (SPREAD_LABEL, MEAN_LABEL)
    pts = ax.collections[0].get_offsets()
    returns = task.returns[np.isfinite(task.returns).all(axis=1)]
    np.testing.assert_allclose(np.sort(pts[:, 0]), np.sort(returns.std(axis=1, ddof=1)))


def test_rank_over_time_leaves_out_domains_with_few_tasks(saved, tmp_path):
    from erahbo.analysis.plots import MIN_PANEL_TASKS, plot_rank_over_time
    from erahbo.analysis.stats import RankOverTime

    def curve(n_units):
        mean = np.tile(np.array([[1.0], [2.0]]), (1, 10))
        return RankOverTime(methods=("erahbo", "gpucb-k2"), mean=mean, se=np.zeros_like(mean),
                            n_units=n_units)

    curves = {"all": curve(6), "cc": curve(4), "brax": curve(2)}
    plot_rank_over_time(curves, ["erahbo", "gpucb-k2"], 10, tmp_path / "r.png")
    fig = saved[-1]
    titles = [a.get_title() for a in fig.axes if a.get_visible()]
    assert any(t.startswith("All") or "all" in t.lower() for t in titles)
    assert not any("Brax" in t or "brax" in t for t in titles)
    assert MIN_PANEL_TASKS == 3
    assert "no panel for Brax: fewer than 3 tasks" in fig.get_suptitle().replace("\n", " ")


def test_seed_counts_mark_rounds_cut_by_the_budget(saved, tmp_path):
    from erahbo.analysis.plots import plot_seed_counts
    from erahbo.analysis.stats import seed_count_distribution

    rounds = pd.DataFrame({
        "method": "erahbo", "k": [1, 2, 2, 3, 5, 20, 20],
        "stop_reason": ["budget", "dominated", "dominated", "dominated", "budget", "k_max",
                        "k_max"],
        "config_norm_regret": [0.5, 0.2, 0.3, 0.1, 0.4, 0.0, 0.05]})
    plot_seed_counts(seed_count_distribution(rounds), rounds, ["erahbo"], tmp_path / "s.png")
    ax2 = saved[-1].axes[1]
    ticks = [t.get_text() for t in ax2.get_xticklabels()]
    assert ticks[0] == "1\n(cut)" and ticks[1] == "2" and "5\n(cut)" in ticks
    assert "round cut by the budget" in [t.get_text() for t in ax2.get_legend().get_texts()]
    cut = ax2.collections[-1].get_offsets()
    assert sorted(cut[:, 1]) == [0.4, 0.5]


def test_table2_does_not_bold_where_the_test_cannot_reject():
    from erahbo.analysis.report import can_reject

    assert not can_reject(4, 0.05) and can_reject(5, 0.05)  # 1/16 >= 0.05 > 1/32


# --- figures of one run on tables built here (issue 38: marks, ticks, limits, duplicates) ---

def _made_result(ks, means=None, xs=None, lcb=None, ucb=None, beta_stop=0.0):
    """An erahbo.Result over one hyperparameter ``x`` built from the given columns: one
    configuration per round (the first two the initial design), bounds ``mean -+ 0.05`` unless
    given, ranked by ``lcb_mv``."""
    from erahbo.optimizer.records import Result

    n = len(ks)
    k = np.asarray(ks, dtype=int)
    x = np.linspace(0.01, 0.99, n) if xs is None else np.asarray(xs, dtype=float)
    mean = (0.5 + 0.05 * np.sin(np.arange(n))) if means is None else np.asarray(means, float)
    var = np.where(k >= 2, 0.01, np.nan)
    mv = mean - np.nan_to_num(var)
    lo = mv - 0.05 if lcb is None else np.asarray(lcb, dtype=float)
    hi = mv + 0.05 if ucb is None else np.asarray(ucb, dtype=float)
    rank = pd.Series(lo).rank(ascending=False, method="first").astype(int).to_numpy()
    configs = pd.DataFrame({"config_id": np.arange(n), "x": x, "k": k, "mean": mean,
                            "std": np.sqrt(var), "var": var, "n_failed": 0, "mv": mv,
                            "lcb_mv": lo, "ucb_mv": hi, "rank": rank,
                            "rule": np.where(rank == 1, "lcb_mv", None)})
    init = np.arange(n) < 2
    b_t = pd.Series(np.where(init, np.nan, lo)).shift(1).cummax().to_numpy()
    rounds = pd.DataFrame({
        "iteration": np.arange(1, n + 1), "phase": np.where(init, "init", "bo"),
        "config_id": np.arange(n), "k": k, "k_total": k,
        "ucb_mv": np.where(init, np.nan, hi), "lcb_mv": np.where(init, np.nan, lo),
        "B_t": np.where(init, np.nan, b_t), "beta_stop": np.where(init, np.nan, beta_stop),
        "acquisition": np.nan, "stop_reason": np.where(init, "initial", "dominated"),
        "mean": mean, "var": var, "n_failed": 0})
    best = int(np.argmin(rank))
    return Result(incumbent={"x": float(x[best])}, incumbent_id=best,
                  incumbent_mv=float(mv[best]), history=pd.DataFrame(), rounds=rounds,
                  configs=configs, method="erahbo", n_evals=int(k.sum()),
                  settings={"alpha": 1.0, "k_min": 1, "k_max": 20})


def _edge_marks(ax):
    """The triangles drawn at the axis edge for values outside it, and their texts."""
    marks = [c for c in ax.collections if c.get_gid() == "outside"]
    texts = [t.get_text() for t in ax.texts if t.get_gid() == "outside"]
    return marks, texts


def test_figure1_marker_area_is_proportional_to_seeds_and_the_legend_shows_those_sizes(
        saved, tmp_path):
    """Rule: in figure1.png a configuration's dot has an area proportional to its seeds k (the
    same area per seed for every dot, so 20 seeds look 20 times the area of one), and the size
    legend shows 2-3 of the run's own k at exactly the areas of the dots."""
    from erahbo.analysis.run_plots import plot_1d_run

    ks = [2, 2, 1, 1, 3, 1, 20, 1, 7, 1]
    res = _made_result(ks)
    plot_1d_run(Figure1Task(), res, tmp_path / "f.png")
    ax = saved[-1].axes[0]
    dots = next(c for c in ax.collections if len(c.get_offsets()) == len(ks))
    sizes = np.asarray(dots.get_sizes())
    np.testing.assert_allclose(sizes / np.asarray(ks, float), sizes[0] / ks[0])
    assert sizes.max() / sizes.min() == pytest.approx(20.0)  # visibly different
    leg = ax.get_legend()
    entries = {t.get_text(): h for t, h in zip(leg.get_texts(), leg.legend_handles,
                                               strict=True)}
    shown = {lab: h for lab, h in entries.items() if lab.endswith(("seed", "seeds"))}
    assert list(shown) == ["1 seed", "3 seeds", "20 seeds"]  # fewest, middle, most
    area_of_k = {k: s for k, s in zip(ks, sizes, strict=True)}
    for lab, h in shown.items():
        assert h.get_markersize() ** 2 == pytest.approx(area_of_k[int(lab.split()[0])])
    assert not any("size ~ seeds" in t for t in entries)  # the old, unmatched wording


def test_seed_and_run_axes_have_integer_ticks(saved, tmp_path):
    """Rule: every axis that counts seeds or runs (figure1's and rounds.png's seeds panel,
    rounds.png's training runs, configs.png's seeds colour bar) ticks whole numbers only, also
    for a short run of 1-3 seeds where matplotlib's default ticks 0.5 steps."""
    from erahbo.analysis.run_plots import plot_1d_run, plot_configs, plot_rounds

    res = _made_result([2, 2, 1, 2, 1, 1])  # at most 2 seeds: default ticks 0, 0.5, ...

    def integer(axis):
        ticks = np.asarray(axis.get_ticklocs())
        return ticks.size >= 2 and np.array_equal(ticks, np.round(ticks))

    plot_rounds(res, tmp_path / "r.png")
    axk = saved[-1].axes[1]
    assert integer(axk.yaxis) and integer(axk.xaxis)
    plot_1d_run(Figure1Task(), res, tmp_path / "f.png")
    assert integer(saved[-1].axes[1].yaxis)
    plot_configs(_made_result([2, 2, 1, 3, 1, 2]), tmp_path / "c.png")
    colour_bar = next(a for a in saved[-1].axes if a.get_ylabel().startswith("seeds k"))
    assert integer(colour_bar.yaxis)


def test_a_value_outside_both_axes_is_marked_in_the_corner():
    """Rule: an edge mark stays on the figure: a value outside the y limits whose position is
    also outside the x limits is drawn at the corner, not off the axes."""
    from matplotlib.figure import Figure

    from erahbo.analysis.figure_rules import mark_outside

    ax = Figure().subplots()
    ax.set_xlim(0, 1)
    ax.set_ylim(0, 1)
    assert mark_outside(ax, [0.5, 7.0], [0.5, -3.0], (0.0, 1.0)) == 1
    (x, y), = ax.collections[0].get_offsets()
    assert x == 1.0 and 0.0 <= y < 0.05


def test_robust_limits_cut_only_rare_far_values():
    """Rule (erahbo.analysis.figure_rules): a value is cut from an axis only when the axis has
    at least 10 values, it lies more than 3 IQRs outside the quartiles, and it is among the
    most extreme 1 % (at least one) on its side; values the axis must keep stay in."""
    from erahbo.analysis.figure_rules import outside, robust_limits

    base = 0.5 + 0.05 * np.sin(np.arange(300))  # in [0.45, 0.55]
    lim = robust_limits(base)
    assert not outside(base, lim).any() and lim[1] - lim[0] < 0.12
    two = np.append(base, [-1.22, -0.9])
    assert outside(two, robust_limits(two)).sum() == 2  # 1 % of 302: 3 may go
    assert robust_limits(two)[0] > 0.4
    few = np.array([0.5, 0.51, 0.49, 0.52, -1.22])  # too few values to judge
    assert not outside(few, robust_limits(few)).any()
    modes = np.append(base, np.full(60, -1.0))  # a second mode, 17 %: real, kept
    assert not outside(modes, robust_limits(modes)).any()
    kept = robust_limits(two, keep=[-2.0])  # a curve the axis must show whole
    assert kept[0] < -2.0 and not outside(two, kept).any()


def test_an_outlier_gets_an_edge_marker_not_the_scale(saved, tmp_path):
    """Rule: one value at -1.22 among 100 near 0.5 does not set the axis of rounds.png,
    configs.png or figure1.png: the axis spans the others and the outlier is a triangle at
    the edge, at its own position on the other axis, with its value written."""
    from erahbo.analysis.run_plots import plot_1d_run, plot_configs, plot_rounds

    n = 100
    means = 0.5 + 0.05 * np.sin(np.arange(n))
    lcb = means - 0.05
    lcb[40] = -1.22  # a round whose bound collapsed
    res = _made_result([2, 2, *([1] * (n - 2))], lcb=lcb, ucb=lcb, beta_stop=0.0)
    plot_rounds(res, tmp_path / "r.png")
    ax = saved[-1].axes[0]
    lo, hi = ax.get_ylim()
    assert lo > 0.3 and hi - lo < 0.3  # the others fill the panel
    marks, texts = _edge_marks(ax)
    run_of_40 = float(res.rounds["k"].cumsum().iloc[40])
    (x, y), = np.concatenate([m.get_offsets() for m in marks])
    assert x == run_of_40 and lo <= y < lo + 0.05 * (hi - lo)
    assert texts == ["-1.22"]
    res.rounds.loc[2, "B_t"] = 3.0  # the first B_t far above: a mark where its step starts
    plot_rounds(res, tmp_path / "r2.png")
    ax = saved[-1].axes[0]
    assert ax.get_ylim()[1] < 1.0
    marks, texts = _edge_marks(ax)
    tops = np.concatenate([m.get_offsets() for m in marks])
    start = float(res.rounds["k"].cumsum().iloc[2] - res.rounds["k"].iloc[2])
    assert any(xx == start and yy > ax.get_ylim()[1] - 0.05 for xx, yy in tops)
    assert sorted(texts) == ["-1.22", "3"]

    means_out = means.copy()
    means_out[7] = -1.22  # a configuration whose one return diverged
    res = _made_result([2, 2, *([1] * (n - 2))], means=means_out)
    plot_configs(res, tmp_path / "c.png")
    ax = saved[-1].axes[0]
    assert ax.get_ylim()[0] > 0.3
    marks, texts = _edge_marks(ax)
    assert len(marks) == 1 and texts == ["-1.22"]
    plot_1d_run(Figure1Task(), res, tmp_path / "f.png")
    ax = saved[-1].axes[0]
    lo, _ = ax.get_ylim()
    f = Figure1Task()
    curve = min(f.f({"x": v}) - f.rho2({"x": v}) ** 0.5 for v in np.linspace(0, 1, 400))
    assert -1.22 < lo <= curve  # the task's own band stays whole; the outlier does not count
    marks, texts = _edge_marks(ax)
    (x, _), = marks[0].get_offsets()
    assert x == pytest.approx(res.configs["x"].iloc[7]) and texts == ["-1.22"]


def test_configs_png_groups_near_duplicates_into_one_bar(saved, tmp_path):
    """Rule: in configs.png's bounds panel, configurations with the same seeds k and within 1 %
    of a better-ranked one's value on every hyperparameter (of its range over the evaluated
    configurations) share its bar, labelled with how many more it stands for; the incumbent
    and the runner-up join no other bar; the panel's bars then show distinct
    configurations."""
    from erahbo.analysis.run_plots import plot_configs

    xs = [0.15, *np.linspace(0.2020, 0.2028, 12), 0.5, 0.7, 0.9, 0.05]
    lcb = np.array([0.52, *np.linspace(0.4885, 0.4877, 12), 0.40, 0.39, 0.38, 0.37])
    ks = [3, *[1] * 10, 4, 1, 1, 1, 1, 1]  # config 11: a near one with 4 seeds, not a duplicate
    res = _made_result(ks, xs=xs, lcb=lcb, ucb=lcb + 0.12)
    plot_configs(res, tmp_path / "c.png")
    axb = saved[-1].axes[1]
    ticks = [t.get_text() for t in axb.get_yticklabels()]
    assert ticks == ["#1 cfg 0 (k=3)", "#2 cfg 1 (k=1) +10 near-duplicates",
                     "#12 cfg 11 (k=4)", "#14 cfg 13 (k=1)", "#15 cfg 14 (k=1)",
                     "#16 cfg 15 (k=1)", "#17 cfg 16 (k=1)"]
    assert any(t.startswith("+N near-duplicates") for t in _legend(saved[-1]))


def test_near_duplicates_compare_log_ranges_and_categories():
    """Rule: a hyperparameter spanning two decades or more is compared on a log scale (1e-5
    and 5e-5 differ in a range up to 1e-1), a categorical one must be equal."""
    from erahbo.analysis.run_plots import near_duplicate_groups

    c = pd.DataFrame({"config_id": range(5), "lr": [1e-5, 1e-5 * 1.01, 5e-5, 1e-1, 1e-5],
                      "opt": ["adam", "adam", "adam", "sgd", "sgd"], "k": 1,
                      "rank": range(3, 8)})  # ranks 1 and 2 (elsewhere) keep their own bars
    assert near_duplicate_groups(c, c) == [[0, 1], [2], [3], [4]]


def test_inspect_plot_marks_a_diverged_configuration_at_the_edge(saved, tmp_path):
    """Rule: ``dataset inspect``'s mean-vs-spread plot follows the robust limits too: a
    configuration whose seeds all diverged (-1e6, on a task of returns near -1000) is a
    triangle at the lower edge with its mean written, and the axis spans the other
    configurations."""
    from erahbo.datasets.inspect import plot_mean_std
    from erahbo.datasets.synth import make_suite

    task = make_suite(1, seed=0, n_configs=40, n_seeds=4)[0]
    ok = np.isfinite(task.returns).all(axis=1)
    i = int(np.flatnonzero(ok)[0])
    others = task.returns[ok].mean(axis=1)
    task.returns[i] = -1e6 - np.arange(task.returns.shape[1])  # mean -1000001.5
    plot_mean_std(task, tmp_path / "i.png", outcome_processing="none")
    ax = saved[-1].axes[0]
    assert others.min() - 0.1 * np.ptp(others) <= ax.get_ylim()[0] < others.min()
    marks, texts = _edge_marks(ax)
    assert len(marks) == 1 and texts == ["-1e+06"]


def test_report_run_axes_tick_whole_runs_on_short_budgets(saved, tmp_path):
    """Rule: a report figure's training-runs axis is linear below 20 runs, and then ticks whole
    runs only (a budget of 5 runs has no tick at 1.5 runs)."""
    from erahbo.analysis.plots import plot_rank_over_time, plot_regret_curves
    from erahbo.analysis.stats import RankOverTime

    runs = np.arange(1, 4)
    curves = pd.DataFrame({"group": "all", "method": "erahbo", "run": runs,
                           "iqm": 1.0 / runs, "lo": 0.5 / runs, "hi": 1.5 / runs})
    plot_regret_curves(curves, ["erahbo"], 3, tmp_path / "c.png")
    mean = np.tile(np.array([[1.0], [2.0]]), (1, 3))
    plot_rank_over_time({"all": RankOverTime(methods=("erahbo", "gpucb-k2"), mean=mean,
                                             se=np.zeros_like(mean), n_units=4)},
                        ["erahbo", "gpucb-k2"], 3, tmp_path / "r.png")
    for fig in saved[-2:]:
        ticks = np.asarray(fig.axes[0].xaxis.get_ticklocs())
        assert ticks.size >= 2 and np.array_equal(ticks, np.round(ticks))
