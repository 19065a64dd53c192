"""Plots of one optimization run: Figure-1 style 1-D view, evaluated configurations."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from erahbo.analysis.figure_rules import (
    concat,
    integer_ticks,
    mark_outside,
    outside,
    robust_axis,
    robust_limits,
    seed_size_legend,
    seed_sizes,
)
from erahbo.optimizer.replication import STOP_REASONS
from erahbo.risk import MeanVariance, RiskMeasure, objective_name


def plot_1d_run(task: Any, result: Any, path: str | Path, alpha: float = 1.0) -> Path:
    """Plot ``f``, ``f +- rho``, ``MV`` and the seeds a run spent per configuration.

    Each evaluated configuration is a dot at its sample mean whose area is proportional to its
    seeds (:func:`erahbo.analysis.figure_rules.seed_sizes`; the legend shows two or three of
    the run's seed counts at their dots' sizes). The return axis spans the task's curves and
    the means but their outliers, drawn as triangles at the edge
    (:mod:`erahbo.analysis.figure_rules`); the seeds axis ticks whole seeds.

    Parameters
    ----------
    task : erahbo.objectives.synthetic.SyntheticTask
        A task over one hyperparameter (e.g. :class:`Figure1Task`).
    result : erahbo.Result
        The run to show (its ``configs`` table: evaluated points, sample means, ``k``).
    path : path
        PNG to write.
    alpha : float
        Risk aversion of the MV curve.

    Returns
    -------
    Path
        The file written.
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    name = task.space.names[0]
    lo, hi = _bounds(task, name)
    xs = np.linspace(lo, hi, 400)
    cfgs = [{name: float(x)} for x in xs]
    f = np.array([task.f(c) for c in cfgs])
    rho = np.sqrt([task.rho2(c) for c in cfgs])
    mv = f - alpha * rho**2
    fig, (ax, axk) = plt.subplots(2, 1, figsize=(7, 5.5), sharex=True,
                                  gridspec_kw={"height_ratios": [3, 1]})
    ax.plot(xs, f, color="black", lw=1.5, label="f(x): mean return")
    ax.fill_between(xs, f - rho, f + rho, color="grey", alpha=0.25, label="f(x) ± rho(x)")
    ax.plot(xs, mv, "--", color="tab:blue", lw=1.5, label=f"MV(x), alpha={alpha:g}")
    c = result.configs
    k = c["k"].to_numpy(dtype=float)
    means = c["mean"].to_numpy(dtype=float)
    ax.scatter(c[name], means, s=seed_sizes(k), color="tab:orange", alpha=0.75, zorder=3,
               edgecolors="white", linewidths=0.4)
    limits = robust_axis(ax, means, keep=np.concatenate([f - rho, f + rho, mv]))
    mark_outside(ax, c[name], means, limits, color="tab:orange")
    best = task.mv_argmax(alpha)[name]
    ax.axvline(best, color="tab:blue", lw=1.0, ls=":", label="true MV optimum")
    if result.incumbent is not None:
        ax.axvline(result.incumbent[name], color="tab:green", lw=2, label="recommended")
    ax.set_ylabel("return")
    handles, labels = ax.get_legend_handles_labels()
    sizes = seed_size_legend(k, "tab:orange")
    from matplotlib.lines import Line2D

    title = Line2D([], [], ls="none", label="evaluated; area ~ seeds:")
    ax.legend([*handles, title, *sizes], [*labels, title.get_label(),
                                          *(h.get_label() for h in sizes)],
              fontsize=8, loc="best")
    ax.set_title(f"{result.method.upper()} on {type(task).__name__}: {result.n_evals} runs")
    axk.bar(c[name], k, width=(hi - lo) / 150, color="tab:orange")
    axk.set_ylabel("seeds k")
    integer_ticks(axk.yaxis)
    axk.set_xlabel(name)
    return _save(fig, path)


def _save(fig: Any, path: str | Path, tight: bool = True) -> Path:
    import matplotlib.pyplot as plt

    if tight:
        fig.tight_layout()
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path


def _bounds(task: Any, name: str) -> tuple[float, float]:
    hp = next(h for h in task.space.to_json()["hyperparameters"] if h["name"] == name)
    return float(hp.get("low", hp.get("lower"))), float(hp.get("high", hp.get("upper")))


#: Axis convention of every mean-vs-spread plot (configs.png, ``dataset inspect``'s plot):
#: the spread (std across seeds) on x, the mean return on y; better is up and to the left.
SPREAD_LABEL = "std of the return across seeds"
MEAN_LABEL = "mean return across seeds"


def _num(x: Any) -> float:
    """A table cell as a float (NaN for a missing value, pandas' NA included)."""
    try:
        return float(x)
    except (TypeError, ValueError):
        return float("nan")


def _ranked(c: Any) -> tuple[Any, Any]:
    """Rows of the incumbent (rank 1) and the runner-up (rank 2) of a configs table."""
    ranked = c[c["rank"].notna()].sort_values("rank") if "rank" in c else c.iloc[:0]
    first = ranked.iloc[0] if len(ranked) else None
    second = ranked.iloc[1] if len(ranked) > 1 else None
    return first, second


def plot_configs(result: Any, path: str | Path, title: str = "", top: int = 12) -> Path:
    """Every evaluated configuration, and why the incumbent wins (two panels).

    Left: sample std (x) against sample mean (y), marker size and colour the seeds ``k``, with
    MV iso-lines ``mean - alpha * std^2 = const`` (the study's ``alpha``; in a study of another
    risk measure its own iso-lines, e.g. ``mean - phi(z_q) / q * std = const`` for CVaR, and
    every ``MV`` of the labels is the measure's name); the incumbent
    (rank 1, highest ``LCB_MV``) and the runner-up are marked. A one-seed configuration has no
    sample std: it is drawn as a grey tick left of ``std = 0`` (with ``k_min = 1``, the
    default, most configurations). Right: the ``top`` best
    configurations by rank with their ``[LCB_MV, UCB_MV]`` and MV estimate: the incumbent's
    lower bound is the line the others' lower bounds stay below. Near-duplicates share one bar
    (:func:`near_duplicate_groups`: the same seeds and every hyperparameter within 1 % of its
    range of a better-ranked configuration's; the incumbent and the runner-up keep bars of
    their own), labelled ``+N near-duplicates`` with a thin line over all their bounds, so that
    the bars show ``top`` distinct configurations. Both panels' value
    axes are robust (:mod:`erahbo.analysis.figure_rules`: an outlier is a triangle at the edge
    with its value written, not the scale).

    Parameters
    ----------
    result : erahbo.Result
    path : path
        PNG to write.
    title : str
        Figure title.
    top : int
        Configurations in the bounds panel.

    Returns
    -------
    Path
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    c = result.configs
    std = np.sqrt(np.maximum(c["var"].to_numpy(dtype=float), 0.0))
    mean = c["mean"].to_numpy(dtype=float)
    measure = _measure(result)
    name = objective_name(measure)
    fig, (ax, axb) = plt.subplots(1, 2, figsize=(11, 4.8),
                                  gridspec_kw={"width_ratios": [1.35, 1]})
    one = ~np.isfinite(std)  # (n,) one-seed configurations: no sample std
    xlim = (robust_limits(std[~one], keep=[0.0]) if (~one).any() else None) or (0.0, 1.0)
    x_one = -0.04 * xlim[1] or -0.04
    x = np.where(one, x_one, std)  # (n,) where each configuration is drawn
    k = c["k"].to_numpy(dtype=float)
    sc = ax.scatter(std[~one], mean[~one], s=seed_sizes(k[~one], k.max()), c=k[~one],
                    cmap="viridis", alpha=0.8, edgecolors="none")
    cb = fig.colorbar(sc, ax=ax, label="seeds k (area ~ seeds)", pad=0.01)
    integer_ticks(cb.ax.yaxis)
    if one.any():
        ax.scatter(x[one], mean[one], marker="_", s=60, color="grey", alpha=0.7,
                   label=f"one seed, no std ({int(one.sum())})")
    ylim = robust_axis(ax, mean)
    first, second = _ranked(c)
    if measure.value(0.0, 1.0) != 0.0 and (~one).any() and ylim is not None:
        _mv_isolines(ax, std, mean, measure, first, (0.0, xlim[1]), ylim)
    ax.set_xlim(2 * x_one if one.any() else xlim[0], xlim[1])
    if one.any():
        ax.axvline(0.0, color="grey", lw=0.5)
    for row, style, label in ((first, dict(edgecolors="tab:red", s=300), "incumbent (rank 1)"),
                              (second, dict(edgecolors="tab:orange", s=220),
                               "runner-up (rank 2)")):
        if row is not None:
            i = c.index.get_loc(row.name)
            at = (np.clip(x[i], *ax.get_xlim()), np.clip(mean[i], *ax.get_ylim()))
            ax.scatter(*at, facecolors="none", linewidths=2, zorder=4,
                       label=f"{label}: config {int(row['config_id'])}", **style)
    mark_outside(ax, x, mean, ylim, color="tab:gray")
    mark_outside(ax, mean[~one], std[~one], ax.get_xlim(), axis="x", color="tab:gray",
                 label="" if outside(mean, ylim).any() else None)
    ax.set_xlabel(SPREAD_LABEL)
    ax.set_ylabel(MEAN_LABEL)
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.13), ncol=2, fontsize=7,
              frameon=False)
    ax.set_title(f"{len(c)} configurations, {result.n_evals} runs", fontsize=9)
    _bounds_panel(axb, c, top, name)
    fig.suptitle(title or f"{result.method.upper()}: evaluated configurations", fontsize=11)
    return _save(fig, path)


def _measure(result: Any) -> RiskMeasure:
    """The study's risk measure of a result (MV with its ``alpha`` for a result without
    one, or of an older version)."""
    m = getattr(result, "measure", None)
    return m if isinstance(m, RiskMeasure) else MeanVariance(
        float(result.settings.get("alpha", 1.0) or 0.0))


def _mv_isolines(ax: Any, std: np.ndarray, mean: np.ndarray, measure: RiskMeasure,
                 first: Any, xlim: tuple[float, float], ylim: tuple[float, float]) -> None:
    """Curves of equal value of the study's measure over the plotted range: ``mean = MV +
    alpha * std^2`` for MV, ``mean = CVaR + phi(z_q) / q * std`` for CVaR (every measure is
    ``mean + g(std^2)``: the curves are ``level - g(std^2)``)."""
    xs = np.linspace(0.0, xlim[1], 200)
    shift = -np.asarray(measure.value(0.0, xs**2), dtype=float)  # (200,)
    mv_pts = np.asarray(measure.value(mean, std**2), dtype=float)
    levels = np.unique(np.quantile(mv_pts[np.isfinite(mv_pts)], [0.1, 0.3, 0.5, 0.7, 0.9]))
    for lv in levels:
        ax.plot(xs, lv + shift, color="grey", lw=0.6, ls=":", zorder=1)
    name = objective_name(measure)
    what = (f"equal MV (alpha={measure.alpha:.3g})" if isinstance(measure, MeanVariance)
            else f"equal {name}")
    ax.plot([], [], color="grey", lw=0.6, ls=":", label=what)
    if first is not None and np.isfinite(_num(first["mv"])):
        ax.plot(xs, float(first["mv"]) + shift, color="tab:red", lw=1, ls="--",
                zorder=2, label=f"incumbent's {name} estimate {float(first['mv']):.3g}")
    ax.set_ylim(*ylim)


#: Near-duplicates: every hyperparameter within this share of its range (see
#: :func:`near_duplicate_groups`).
NEAR = 0.01


def _hp_scale(col: Any) -> tuple[np.ndarray, float] | None:
    """A numeric hyperparameter column as floats on the scale its range is measured on (log10
    when every value is positive and the largest is at least 100 times the smallest) and that
    range; None for a non-numeric column."""
    import pandas as pd

    if not pd.api.types.is_numeric_dtype(col) or pd.api.types.is_bool_dtype(col):
        return None
    v = col.to_numpy(dtype=float)
    fin = v[np.isfinite(v)]
    if fin.size and fin.min() > 0 and fin.max() >= 100 * fin.min():
        v, fin = np.log10(v), np.log10(fin)
    return v, float(fin.max() - fin.min()) if fin.size else 0.0


def near_duplicate_groups(configs: Any, ranked: Any, tol: float = NEAR,
                          limit: int | None = None) -> list[list[int]]:
    """Group the ranked configurations that are near-duplicates, best rank first.

    Walking ``ranked`` best first, a configuration joins the first earlier group whose first
    (best-ranked) member has its seeds ``k`` and matches it on every hyperparameter: a number
    within ``tol`` of that hyperparameter's range over all evaluated ``configs`` (on a log10
    scale when every value is positive and the largest is at least 100 times the smallest; a
    constant one must be equal), any other value equal (two missing values are equal).
    Otherwise it starts a group; so do the incumbent and the runner-up (ranks 1 and 2, named in
    every figure of the run) whatever their neighbours.

    Parameters
    ----------
    configs : pandas.DataFrame
        :attr:`erahbo.Result.configs` (every evaluated configuration: the ranges).
    ranked : pandas.DataFrame
        Rows of ``configs`` in rank order.
    tol : float
        Share of a hyperparameter's range within which two values are the same.
    limit : int, optional
        Only the first ``limit`` groups (the same groups as without it).

    Returns
    -------
    list of list of int
        Positions in ``ranked``, one list per group, groups in the order of their best rank.
    """
    import pandas as pd

    from erahbo.recommendation import CONFIG_COLUMNS

    names = [n for n in configs.columns if n != "config_id" and n not in CONFIG_COLUMNS]
    pos = configs.index.get_indexer(ranked.index)
    # per hyperparameter (and k): (values of the ranked rows, tolerance or None: equality)
    cols: list[tuple[np.ndarray, float | None]] = [(ranked["k"].to_numpy(dtype=float), 0.0)]
    for n in names:
        scaled = _hp_scale(configs[n])
        if scaled is None:
            cols.append((np.array(["\0missing" if pd.isna(a) else repr(a)
                                   for a in ranked[n].to_numpy(dtype=object)], dtype=object),
                         None))
        else:
            cols.append((scaled[0][pos], tol * scaled[1]))
    apart = ranked["rank"].to_numpy(dtype=float) <= 2  # named in every figure: own bars
    groups: list[list[int]] = []
    for i in range(len(ranked)):
        if apart[i]:
            groups.append([i])
            continue
        leaders = np.array([g[0] for g in groups], dtype=int)
        close = np.ones(leaders.size, dtype=bool)
        for v, t in cols:
            if t is None:
                close &= v[leaders] == v[i]
            else:
                nan = ~np.isfinite(v[leaders])
                close &= np.where(nan, not np.isfinite(v[i]), np.abs(v[leaders] - v[i]) <= t)
        if close.any():
            groups[int(np.argmax(close))].append(i)
        elif limit is None or len(groups) < limit:
            groups.append([i])
    return groups


def _bounds_panel(ax: Any, c: Any, top: int, name: str = "MV") -> None:
    """The ``top`` best groups of near-duplicates (:func:`near_duplicate_groups`) by rank: the
    first member's ``[LCB_MV, UCB_MV]`` and MV estimate, a thin line over the bounds of all its
    members, and the count of the others in the label (``name``: the study's objective,
    :func:`erahbo.risk.objective_name`)."""
    ranked = c[c["rank"].notna()].sort_values("rank") if "rank" in c else c[:0]
    if ranked.empty or not np.isfinite(ranked["lcb_mv"].to_numpy(dtype=float)).any():
        ax.text(0.5, 0.5, f"no {name} bounds yet (models not fit)", ha="center", va="center",
                transform=ax.transAxes)
        ax.set_axis_off()
        return
    groups = near_duplicate_groups(c, ranked, limit=int(top))
    first = ranked.iloc[[g[0] for g in groups]]
    y = np.arange(len(groups))[::-1]
    lo, hi = first["lcb_mv"].to_numpy(float), first["ucb_mv"].to_numpy(float)
    mv = first["mv"].to_numpy(float)
    env_lo = np.array([np.nanmin(ranked["lcb_mv"].to_numpy(float)[g]) for g in groups])
    env_hi = np.array([np.nanmax(ranked["ucb_mv"].to_numpy(float)[g]) for g in groups])
    rank2 = [i for i, g in enumerate(groups) if any(ranked.iloc[j]["rank"] == 2 for j in g)]
    colours = ["tab:red" if i == 0 else "tab:orange" if i in rank2 else "tab:gray"
               for i in range(len(groups))]
    ax.hlines(y, env_lo, env_hi, colors=colours, lw=0.8, alpha=0.8)
    ax.hlines(y, lo, hi, colors=colours, lw=3, alpha=0.8)
    ax.scatter(mv, y, color="black", s=14, zorder=3, label=f"{name} estimate")
    ax.axvline(lo[0], color="tab:red", lw=1, ls="--",
               label=f"incumbent's LCB_{name} {lo[0]:.3g} (highest)")
    xlim = robust_axis(ax, concat(lo, hi, mv, env_lo, env_hi), axis="x")
    mark_outside(ax, y, mv, xlim, axis="x", color="black")
    labels = []
    for g, (_, row) in zip(groups, first.iterrows(), strict=True):
        more = f" +{len(g) - 1} near-duplicate{'s' if len(g) > 2 else ''}" if len(g) > 1 else ""
        labels.append(f"#{int(row['rank'])} cfg {int(row['config_id'])} (k={int(row['k'])})"
                      f"{more}")
    ax.set_yticks(y, labels, fontsize=7)
    ax.set_xlabel(f"{name}: [LCB_{name}, UCB_{name}] and estimate")
    ax.set_title(f"best configurations by LCB_{name} (the recommendation rule)", fontsize=9)
    if any(len(g) > 1 for g in groups):
        ax.plot([], [], color="tab:gray", lw=0.8,
                label=f"+N near-duplicates: N more configurations of the same k within "
                      f"{NEAR:.0%} of the\nbar's on every hyperparameter; thin line: their "
                      "bounds")
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.13), ncol=1, fontsize=7,
              frameon=False)


def _bounds_are_points(rounds: Any, bo: np.ndarray) -> str:
    """``"all"`` when every model round has ``beta_stop = 0`` (its bounds ``[LCB_MV, UCB_MV]``
    are the posterior mean: points), ``"some"`` when a schedule reaches 0, else ``""``."""
    if "beta_stop" not in rounds or not bo.any():
        return ""
    zero = rounds["beta_stop"].to_numpy(dtype=float)[bo] == 0.0
    return "all" if zero.all() else "some" if zero.any() else ""


# one colour per stop reason, in the order of erahbo.optimizer.replication.STOP_REASONS (the
# same in both panels); a reason without one is brown
_COLOURS = ("tab:blue", "tab:red", "tab:purple", "tab:olive", "black", "tab:brown", "tab:gray",
            "tab:cyan", "tab:pink", "tab:green")
_REASON_COLOURS = dict(zip(STOP_REASONS, _COLOURS, strict=False))


def plot_rounds(result: Any, path: str | Path, title: str = "") -> Path:
    """The run round by round: the bounds of the stopping rule and the seeds spent.

    Top: ``B_t = max LCB_MV`` over the configurations evaluated before round ``t`` (the
    incumbent's pessimistic MV, as a step line) and, per round, ``[LCB_MV, UCB_MV]`` of the
    chosen configuration after its seeds (an ERAHBO round stops early once ``UCB_MV`` falls
    below ``B_t``). Bottom: seeds ``k`` per round, coloured by why the round ended. The
    x-axis counts training runs. The bounds axis spans the values but their outliers (a wide
    early bound, a diverged round), each drawn as a triangle at the edge with its value
    (:mod:`erahbo.analysis.figure_rules`); the seeds and runs axes tick whole numbers.

    Parameters
    ----------
    result : erahbo.Result
    path : path
        PNG to write.
    title : str
        Figure title.

    Returns
    -------
    Path
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    r = result.rounds
    name = objective_name(_measure(result))
    k = r["k"].to_numpy(dtype=float)
    runs = np.cumsum(k)  # training runs spent when each round ended
    reasons = r["stop_reason"].fillna("initial").astype(str).to_numpy()
    colour_of = {x: _REASON_COLOURS.get(x, "tab:brown") for x in dict.fromkeys(reasons)}
    colours = [colour_of[x] for x in reasons]
    fig, (ax, axk) = plt.subplots(2, 1, figsize=(7.5, 6.3), sharex=True,
                                  gridspec_kw={"height_ratios": [3, 1.4]})
    bo = np.isin(r["phase"].to_numpy(), ("bo", "challenger"))  # rounds with models
    lcb, ucb = r["lcb_mv"].to_numpy(dtype=float), r["ucb_mv"].to_numpy(dtype=float)
    ok = bo & np.isfinite(lcb) & np.isfinite(ucb)
    ax.vlines(runs[ok], lcb[ok], ucb[ok], colors=np.asarray(colours, dtype=object)[ok], lw=1.5,
              alpha=0.7)
    ax.scatter(runs[ok], ucb[ok], s=10, c=np.asarray(colours, dtype=object)[ok].tolist(),
               zorder=3)  # (at beta_stop = 0 the bounds are the posterior mean: a point)
    points = _bounds_are_points(r, bo)
    b_t = r["B_t"].to_numpy(dtype=float)
    fin = bo & np.isfinite(b_t)
    if fin.any():  # B_t holds from the start of its round to the end of the last one
        xs = np.append(runs[fin] - k[fin], runs[-1])
        ax.step(xs, np.append(b_t[fin], b_t[fin][-1]), where="post", color="black", lw=1.3,
                label=(f"B_t = best posterior {name} (incumbent; beta_stop = 0)"
                       if points == "all" else f"B_t = max LCB_{name} (incumbent bound)"))
    first, second = _ranked(result.configs)
    stars = []  # (run, LCB_MV now, colour, label) of the incumbent and the runner-up
    for row, colour, label in ((first, "tab:red", "incumbent"), (second, "tab:orange",
                                                                "runner-up")):
        if row is None:
            continue
        mine = np.flatnonzero(r["config_id"].to_numpy() == row["config_id"])
        if mine.size:  # its last round, at the height of its final lower bound
            stars.append((runs[mine[-1]], _num(row["lcb_mv"]), colour,
                          f"{label}: config {int(row['config_id'])} (its LCB_{name} now)"))
    star_y = np.array([s[1] for s in stars], dtype=float)
    # one value per thing drawn: a round's point (its LCB_MV too where it is an interval), a
    # step of B_t, a star
    step = fin & np.append(True, b_t[1:] != b_t[:-1])  # rounds where B_t takes a new value
    ylim = robust_axis(ax, concat(ucb[ok], lcb[ok & (lcb != ucb)], b_t[step], star_y))
    for at, y, colour, label in stars:  # an outlying star sits on the edge, marked there
        if ylim is not None and np.isfinite(y):
            y = float(np.clip(y, *ylim))
        ax.scatter([at], [y], marker="*", s=140, color=colour, edgecolors="black",
                   linewidths=0.5, zorder=5, label=label)
    for reason, colour in colour_of.items():  # one legend for both panels: colours agree
        ax.plot([], [], color=colour, lw=4, label=f"round ended: {reason}")
    ax.set_xlim(0, runs[-1] * 1.01 + 1 if len(runs) else 1)
    n_out = mark_outside(ax, runs[ok], ucb[ok], ylim,
                         color=np.asarray(colours, dtype=object)[ok].tolist())
    n_out += mark_outside(ax, (runs - k)[step], b_t[step], ylim, color="black",
                          label="" if n_out else None)
    mark_outside(ax, [s[0] for s in stars], star_y, ylim, color=[s[2] for s in stars],
                 label="" if n_out else None)
    ax.set_ylabel({"all": f"posterior {name} of x_t (beta_stop = 0)",
                   "some": f"{name} bounds of x_t at beta_stop (0: a point)"}.get(
                       points, f"{name} bounds of x_t (at beta_stop)"))
    ax.set_title(title or f"{result.method.upper()}: {len(r)} rounds, {result.n_evals} runs")
    axk.bar(runs - k / 2, k, width=np.maximum(k, 1.0), color=colours, edgecolor="white",
            linewidth=0.3)
    ch = r["phase"].to_numpy() == "challenger"  # erahbo.optimizer.challenger: hatched
    if ch.any():
        axk.bar((runs - k / 2)[ch], k[ch], width=np.maximum(k[ch], 1.0), color="none",
                edgecolor="black", hatch="////", linewidth=0.0)
    axk.set_ylabel("seeds k")
    axk.set_xlabel("training runs")
    integer_ticks(axk.yaxis)
    integer_ticks(axk.xaxis)
    handles, labels = ax.get_legend_handles_labels()  # below the panels: covers no round
    if ch.any():
        from matplotlib.patches import Patch

        handles.append(Patch(facecolor="white", edgecolor="black", hatch="////"))
        labels.append("challenger round (hatched)")
    fig.legend(handles, labels, loc="lower center", ncol=3, fontsize=7, frameon=False)
    fig.tight_layout(rect=(0, 0.06 + 0.03 * (len(labels) // 3), 1, 1))
    return _save(fig, path, tight=False)
