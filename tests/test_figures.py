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
