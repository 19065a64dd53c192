"""Figures of the report (matplotlib, Agg backend; nothing is shown on screen).

Every function takes the numbers computed by :mod:`erahbo.analysis.stats`, writes one PNG
and returns its path. Methods keep one colour and one label across all figures
(:func:`method_colors`, :func:`erahbo.analysis.traces.method_label`).
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from erahbo._names import PARALLEL_RE
from erahbo.analysis.figure_rules import integer_ticks
from erahbo.analysis.traces import domain_label, method_label

_BASE_COLORS = {
    "erahbo": "#d62728",
    "rahbo-k20": "#1f77b4",
    "rahbo-k2": "#2ca02c",
    "gpucb-k20": "#7f7f7f",
    "random-k20": "#bcbd22",
}
_EXTRA = ["#9467bd", "#ff7f0e", "#8c564b", "#e377c2", "#17becf", "#393b79", "#637939",
          "#8c6d31", "#843c39", "#7b4173"]
_RC = {
    "font.size": 10, "axes.titlesize": 11, "axes.labelsize": 10, "legend.fontsize": 9,
    "xtick.labelsize": 9, "ytick.labelsize": 9, "axes.spines.top": False,
    "axes.spines.right": False, "axes.grid": True, "grid.alpha": 0.3, "savefig.dpi": 150,
}
_THRESHOLD_MARKERS = {0.75: "o", 0.5: "s", 0.25: "^"}


def _mpl() -> Any:
    """matplotlib, used through ``Figure`` objects only: no pyplot, no global backend
    switch, rendering by Agg on ``savefig``."""
    import matplotlib

    return matplotlib


#: The objective the figures name (:func:`objective`): "MV", or a risk measure's label.
_OBJECTIVE: list[str] = ["MV"]


@contextmanager
def objective(name: str) -> Iterator[None]:
    """Figures drawn inside name the study's objective ``name`` (e.g. ``"CVaR_0.1"``) where
    they say MV: every text of a figure (titles, axis labels, legends) is renamed as it is
    saved."""
    _OBJECTIVE.append(str(name))
    try:
        yield
    finally:
        _OBJECTIVE.pop()


def _figure(figsize: tuple[float, float]) -> Any:
    from matplotlib.figure import Figure

    fig = Figure(figsize=figsize)
    name = _OBJECTIVE[-1]
    if name != "MV":
        save = fig.savefig

        def savefig(*args: Any, **kwargs: Any) -> Any:
            from matplotlib.text import Text

            for t in fig.findobj(Text):
                t.set_text(re.sub(r"\bMV\b", name, t.get_text()))
            return save(*args, **kwargs)

        fig.savefig = savefig
    return fig


def method_colors(methods: Sequence[str]) -> dict[str, str]:
    """A fixed colour per method: the paper's four (and random) have their own; RAHBO with
    another k gets a shade of blue by k; anything else a distinct colour in order."""
    mpl = _mpl()
    out: dict[str, str] = {}
    extra = iter(_EXTRA * 3)
    rahbo_ks = sorted(int(m.group(1)) for m in (re.match(r"^rahbo-k(\d+)$", x)
                                                for x in methods) if m)
    blues = mpl.colormaps["Blues"]
    for m in methods:
        pm = PARALLEL_RE.match(m)
        if pm:  # Q in flight: its sequential method's colour, paler with larger Q
            qs = sorted(int(x.group(2)) for x in map(PARALLEL_RE.match, methods)
                        if x and x.group(1) == pm.group(1))
            base = method_colors([pm.group(1)])[pm.group(1)]
            out[m] = _paler(base, 0.2 + 0.35 * qs.index(int(pm.group(2))) / max(len(qs) - 1, 1))
            continue
        if m in _BASE_COLORS:
            out[m] = _BASE_COLORS[m]
            continue
        km = re.match(r"^rahbo-k(\d+)$", m)
        if km and len(rahbo_ks) > 1:
            frac = rahbo_ks.index(int(km.group(1))) / (len(rahbo_ks) - 1)
            r, g, b, _ = blues(0.35 + 0.6 * frac)
            out[m] = f"#{int(255 * r):02x}{int(255 * g):02x}{int(255 * b):02x}"
            continue
        out[m] = next(extra)
    return out


def _paler(color: str, frac: float) -> str:
    """``color`` mixed with white (``frac`` of white), as ``#rrggbb``."""
    r, g, b, _ = _mpl().colors.to_rgba(color)
    r, g, b = (c + (1.0 - c) * frac for c in (r, g, b))
    return f"#{int(255 * r):02x}{int(255 * g):02x}{int(255 * b):02x}"


def _grid_shape(n: int, max_cols: int = 4) -> tuple[int, int]:
    cols = min(max_cols, n)
    return int(np.ceil(n / cols)), cols


# Rough widths (inches) of a character of the figure title and of a legend label at the
# report's font sizes, and of a legend entry's handle: enough to wrap before the figure edge.
_TITLE_CHAR_IN = 0.085
_LEGEND_CHAR_IN = 0.075
_LEGEND_HANDLE_IN = 0.6


def _legend_below(fig: Any, methods: Sequence[str], colors: Mapping[str, str],
                  extra: Sequence[Any] = ()) -> None:
    """Legend under the panels, in as many rows as the figure's width needs."""
    from matplotlib.lines import Line2D

    handles = [Line2D([], [], color=colors[m], lw=2, label=method_label(m)) for m in methods]
    handles.extend(extra)
    w = fig.get_size_inches()[0]
    entry = max(_LEGEND_HANDLE_IN + _LEGEND_CHAR_IN * len(str(h.get_label())) for h in handles)
    ncol = max(1, min(len(handles), 8, int((w - 0.3) // entry)))
    rows = -(-len(handles) // ncol)
    fig._erahbo_extra_bottom = 0.25 * (rows - 1)  # read by _adjust
    fig.legend(handles=handles, loc="lower center", ncol=ncol, frameon=False,
               bbox_to_anchor=(0.5, 0.0))


def _suptitle(fig: Any, text: str) -> None:
    """Figure title at a fixed distance (inches) from the top edge, wrapped to the width."""
    import textwrap

    w, h = fig.get_size_inches()
    lines = textwrap.wrap(text, max(20, int((w - 0.3) / _TITLE_CHAR_IN))) or [text]
    fig._erahbo_extra_top = 0.22 * (len(lines) - 1)  # read by _adjust
    fig.suptitle("\n".join(lines), y=1 - 0.1 / h, va="top")


def _adjust(fig: Any, *, left: float = 0.75, right: float = 0.2, top: float = 0.75,
            bottom: float = 0.95, wspace: float = 0.25, hspace: float = 0.55) -> None:
    """Fixed margins in inches (much cheaper than ``tight_layout`` on grids of log axes).

    A wrapped title or a legend of several rows adds its height to the figure, so the
    panels keep their size.
    """
    w, h = fig.get_size_inches()
    extra_top = getattr(fig, "_erahbo_extra_top", 0.0)
    extra_bottom = getattr(fig, "_erahbo_extra_bottom", 0.0)
    if extra_top or extra_bottom:
        h += extra_top + extra_bottom
        fig.set_size_inches(w, h)
        if fig._suptitle is not None:
            fig._suptitle.set_y(1 - 0.1 / h)
    top, bottom = top + extra_top, bottom + extra_bottom
    fig.subplots_adjust(left=left / w, right=1 - right / w, top=1 - top / h,
                        bottom=bottom / h, wspace=wspace, hspace=hspace)


def _log_x(ax: Any, budget: int) -> None:
    """The training-runs axis: log from 20 runs, else linear on whole runs."""
    if budget >= 20:
        ax.set_xscale("log")
    else:
        integer_ticks(ax.xaxis)
    ax.set_xlim(1, budget)


#: Fewest tasks for a domain panel of its own in :func:`plot_rank_over_time`.
MIN_PANEL_TASKS = 3


def plot_rank_over_time(curves: Mapping[str, Any], methods: Sequence[str], budget: int,
                        path: str | Path, *, title: str = "Simple MV regret rank") -> Path:
    """Mean rank over training runs, one panel per domain, mean ± SE bands.

    A domain with fewer than :data:`MIN_PANEL_TASKS` tasks gets no panel of its own when an
    ``"all"`` panel holds its tasks (a mean rank over one or two tasks is a tangle of crossing
    lines); a note below the figure names it.

    Parameters
    ----------
    curves : mapping
        Domain (or ``"all"``) -> :class:`erahbo.analysis.stats.RankOverTime`.
    methods : sequence of str
    budget : int
    path : str or Path
        PNG to write.
    """
    mpl = _mpl()
    colors = method_colors(methods)
    t = np.arange(1, budget + 1)
    few = [d for d, c in curves.items() if d != "all" and c.n_units < MIN_PANEL_TASKS]
    if "all" in curves and few:  # a mean rank over 1-2 tasks is a tangle of crossing lines
        curves = {d: c for d, c in curves.items() if d not in few}
    n = len(curves)
    rows, cols = _grid_shape(n)
    with mpl.rc_context(_RC):
        fig = _figure((3.6 * cols, 2.9 * rows + 0.6))
        axes = fig.subplots(rows, cols, squeeze=False, sharey=True)
        if "all" in curves and few:
            title += (" (no panel for " + ", ".join(domain_label(d) for d in few)
                      + f": fewer than {MIN_PANEL_TASKS} tasks, which are in 'all')")
        for ax, (dom, c) in zip(axes.ravel(), curves.items(), strict=False):
            for mi, m in enumerate(methods):
                mean, se = c.mean[mi], np.nan_to_num(c.se[mi])
                ax.plot(t, mean, color=colors[m], lw=1.6)
                ax.fill_between(t, mean - se, mean + se, color=colors[m], alpha=0.2, lw=0)
            _log_x(ax, budget)
            ax.set_title(f"{domain_label(dom)} ({c.n_units} task{'s' * (c.n_units != 1)})")
            ax.set_xlabel("training runs")
        for ax in axes[:, 0]:
            ax.set_ylabel("mean rank (lower is better)")
        for ax in axes.ravel()[n:]:
            ax.set_visible(False)
        axes[0, 0].set_ylim(0.9, len(methods) + 0.1)
        _suptitle(fig, title)
        _legend_below(fig, methods, colors)
        _adjust(fig)
        fig.savefig(path)
    return Path(path)


def plot_rank_distribution(dists: Mapping[str, Any], methods: Sequence[str], budget: int,
                           path: str | Path, *,
                           title: str = "Rank distribution of simple MV regret over the budget"
                           ) -> Path:
    """Rank distribution over training runs (paper, Appendix C, "app-fig:mode-rank"): rows =
    aggregation domains, columns = methods; the colour of cell (run, rank) is the fraction
    of (task, repetition) units at that rank, the solid line the rank mode.

    The heatmap is drawn with ``pcolormesh`` (the image counterpart of ``imshow`` for
    non-uniform cells) so that it sits on the same log run axis as the other figures; the
    cell edges are the geometric midpoints between grid runs.

    Parameters
    ----------
    dists : mapping
        Domain (or ``"all"``) -> :class:`erahbo.analysis.stats.RankDistribution`.
    methods : sequence of str
        ``M`` methods, in the order of the distributions' ``methods``.
    budget : int
    path : str or Path
        PNG to write.
    """
    mpl = _mpl()
    n_m = len(methods)
    n_rows = len(dists)
    if n_rows == 0 or n_m == 0:
        raise ValueError("dists and methods must be non-empty")
    line_color = "#ff7f0e"
    with mpl.rc_context({**_RC, "axes.grid": False}):
        fig = _figure((2.3 * n_m + 1.9, 1.75 * n_rows + 1.5))
        axes = fig.subplots(n_rows, n_m, squeeze=False, sharex=True, sharey=True)
        mesh = None
        for ri, (dom, d) in enumerate(dists.items()):
            g = np.asarray(d.runs, dtype=float)  # (G,)
            if g.size > 1:
                mid = np.sqrt(g[:-1] * g[1:])
                x_edges = np.concatenate([[g[0] - 0.5 * (mid[0] - g[0])
                                           if g[0] > 1 else 1.0], mid, [g[-1]]])
            else:
                x_edges = np.array([max(1.0, g[0] - 0.5), g[0] + 0.5])
            y_edges = np.arange(0.5, n_m + 1.0)  # (M + 1,)
            for mi, m in enumerate(methods):
                ax = axes[ri, mi]
                mesh = ax.pcolormesh(x_edges, y_edges, d.fraction[mi], cmap="Blues",
                                     vmin=0.0, vmax=1.0, shading="flat", rasterized=True,
                                     antialiased=False, linewidth=0)
                ax.step(g, d.mode[mi], where="mid", color=line_color, lw=1.6)
                if budget >= 20:
                    ax.set_xscale("log")
                else:
                    integer_ticks(ax.xaxis)
                ax.set_xlim(x_edges[0], x_edges[-1])
                ax.set_ylim(0.5, n_m + 0.5)
                ax.set_yticks(np.arange(1, n_m + 1))
                if ri == 0:
                    ax.set_title(method_label(m))
                if ri == n_rows - 1:
                    ax.set_xlabel("training runs")
            axes[ri, 0].set_ylabel(f"{domain_label(dom)}\nrank (n={d.n_units})")
        _suptitle(fig, title)
        w, h = fig.get_size_inches()
        _adjust(fig, left=0.85, right=1.15, top=0.75, bottom=0.65, wspace=0.12, hspace=0.25)
        cax = fig.add_axes((1 - 0.95 / w, 0.65 / h, 0.15 / w, 1 - 1.4 / h))
        cb = fig.colorbar(mesh, cax=cax)
        cb.set_label("fraction of (task, repetition) units")
        from matplotlib.lines import Line2D

        fig.legend(handles=[Line2D([], [], color=line_color, lw=1.6, label="rank mode")],
                   loc="upper right", frameon=False, bbox_to_anchor=(1 - 0.1 / w, 1 - 0.1 / h))
        fig.savefig(path)
    return Path(path)


def plot_regret_curves(curves: pd.DataFrame, methods: Sequence[str], budget: int,
                       path: str | Path, *, groups: Sequence[str] | None = None,
                       crossing: pd.DataFrame | None = None,
                       thresholds: Sequence[float] = (0.75, 0.5, 0.25),
                       title: str = "IQM normalized MV regret (95 % bootstrap CI)",
                       max_cols: int = 4) -> Path:
    """IQM normalized regret over training runs with CI bands, one panel per group.

    Parameters
    ----------
    curves : pandas.DataFrame
        Output of :func:`erahbo.analysis.stats.iqm_curves` (group, method, run, iqm, lo, hi).
    methods : sequence of str
    budget : int
    path : str or Path
    groups : sequence of str, optional
        Panel order (default: order of appearance).
    crossing : pandas.DataFrame, optional
        Output of :func:`erahbo.analysis.stats.threshold_crossing`; draws a marker where
        each method first drops below each threshold (per-task figures).
    thresholds : sequence of float
        Dotted horizontal reference lines.
    """
    mpl = _mpl()
    from matplotlib.lines import Line2D

    colors = method_colors(methods)
    groups = list(groups) if groups is not None else list(dict.fromkeys(curves["group"]))
    rows, cols = _grid_shape(len(groups), max_cols)
    with mpl.rc_context(_RC):
        fig = _figure((3.6 * cols, 2.8 * rows + 0.7))
        axes = fig.subplots(rows, cols, squeeze=False)
        for ax, g in zip(axes.ravel(), groups, strict=False):
            sub = curves[curves["group"] == g]
            for m in methods:
                c = sub[sub["method"] == m]
                x = c["run"].to_numpy()
                ax.plot(x, c["iqm"].to_numpy(), color=colors[m], lw=1.5)
                ax.fill_between(x, c["lo"].to_numpy(), c["hi"].to_numpy(), color=colors[m],
                                alpha=0.18, lw=0)
                if crossing is not None:
                    cr = crossing[(crossing["task"] == g) & (crossing["method"] == m)]
                    for _, row in cr.dropna(subset=["run"]).iterrows():
                        ax.plot(row["run"], row["threshold"],
                                marker=_THRESHOLD_MARKERS.get(row["threshold"], "D"),
                                color=colors[m], ms=5, mec="black", mew=0.5, ls="none")
            for thr in thresholds:
                ax.axhline(thr, color="black", lw=0.6, ls=":", alpha=0.6)
            _log_x(ax, budget)
            ax.set_ylim(bottom=0)
            ax.set_title(domain_label(g), fontsize=10 if len(groups) > 4 else 11)
        for ax in axes[-1, :]:
            ax.set_xlabel("training runs")
        for ax in axes[:, 0]:
            ax.set_ylabel("normalized regret")
        for ax in axes.ravel()[len(groups):]:
            ax.set_visible(False)
        extra = []
        if crossing is not None:
            extra = [Line2D([], [], marker=_THRESHOLD_MARKERS.get(float(t), "D"), color="grey",
                            mec="black", ls="none", label=f"< {round(100 * t)} %")
                     for t in thresholds]
        _suptitle(fig, title)
        _legend_below(fig, methods, colors, extra)
        _adjust(fig, bottom=1.0, wspace=0.3)
        fig.savefig(path)
    return Path(path)


def _one_seed_revisits(rounds: pd.DataFrame) -> bool:
    """True when rounds of one seed exist and every one of them re-selects a configuration
    evaluated before in its study (a new configuration gets at least 2 seeds: a sample
    variance; a re-selected one gets what its seed cap leaves, possibly 1)."""
    one = rounds["k"].to_numpy() == 1
    if not one.any() or "round" not in rounds:
        return False
    keys = [c for c in ("task", "method", "repetition") if c in rounds] + ["config_id"]
    order = rounds.sort_values("round", kind="stable")
    seen_before = order.groupby(keys, sort=False).cumcount().reindex(rounds.index) > 0
    return bool(seen_before[one].all())


def plot_seed_counts(dist: pd.DataFrame, rounds: pd.DataFrame, methods: Sequence[str],
                     path: str | Path) -> Path:
    """Left: share of rounds per seed count k for every method. Right: box plot of the
    configuration's normalized MV regret per k for the adaptive methods (k varies).

    Rounds of k = 1 re-select a configuration evaluated before, whose seed cap
    (:mod:`erahbo.optimizer.seedcap`) left room for one seed, or start a new one under
    ``k_min = 1``; when all of them re-select, they are marked ``1*`` and explained under the
    axis.

    Parameters
    ----------
    dist : pandas.DataFrame
        Output of :func:`erahbo.analysis.stats.seed_count_distribution`.
    rounds : pandas.DataFrame
        :attr:`erahbo.analysis.traces.TraceSet.rounds`.
    """
    mpl = _mpl()
    colors = method_colors(methods)
    adaptive = [m for m in methods
                if rounds.loc[rounds["method"] == m, "k"].nunique() > 2]
    with mpl.rc_context(_RC):
        fig = _figure((11, 4.0))
        (ax1, ax2) = fig.subplots(1, 2, gridspec_kw={"width_ratios": [1.2, 1]})
        ks = np.sort(dist["k"].unique()) if len(dist) else np.array([1])
        width = 0.8 / max(1, len(methods))
        for mi, m in enumerate(methods):
            d = dist[dist["method"] == m].set_index("k")["fraction"].reindex(ks, fill_value=0)
            ax1.bar(np.arange(ks.size) + (mi - (len(methods) - 1) / 2) * width,
                    d.to_numpy(), width=width, color=colors[m], label=method_label(m))
        revisit = _one_seed_revisits(rounds)
        ax1.set_xticks(np.arange(ks.size), [f"{k}*" if k == 1 and revisit else str(k)
                                            for k in ks])
        note = "\n* k = 1: a configuration chosen again, with one seed left\nunder its seed cap"
        ax1.set_xlabel("seeds per round k" + (note if revisit and 1 in ks else ""),
                       fontsize=9 if revisit else None)
        ax1.set_ylabel("fraction of rounds")
        ax1.set_title("Seeds per evaluated configuration")
        ax1.legend(frameon=False)
        if adaptive:
            m = adaptive[0]
            r = rounds[rounds["method"] == m]
            kv = np.sort(r["k"].unique())
            # rounds the budget ended (fewer seeds than the rule would have used, possibly
            # fewer than k_min): marked apart, not mixed into the boxes
            cut = (r["stop_reason"] == "budget").to_numpy() if "stop_reason" in r else \
                np.zeros(len(r), dtype=bool)
            kk, reg = r["k"].to_numpy(), r["config_norm_regret"].to_numpy(dtype=float)
            data = [reg[(kk == k) & ~cut] for k in kv]
            bp = ax2.boxplot([d if d.size else [np.nan] for d in data],
                             positions=np.arange(kv.size), widths=0.6,
                             showfliers=False, patch_artist=True)
            for patch in bp["boxes"]:
                patch.set_facecolor(colors[m])
                patch.set_alpha(0.45)
            if cut.any():
                pos = np.searchsorted(kv, kk[cut])
                ax2.scatter(pos + 0.3, reg[cut], marker="x", s=18, color="black", zorder=3,
                            label="round cut by the budget")
                ax2.legend(frameon=False, fontsize=8, loc="upper right")
            only_cut = [not d.size for d in data]
            ax2.set_xticks(np.arange(kv.size), [f"{k}\n(cut)" if oc else str(k)
                                                for k, oc in zip(kv, only_cut, strict=True)])
            ax2.set_xlabel("seeds per round k")
            ax2.set_ylabel("normalized MV regret of the configuration")
            ax2.set_title(f"{method_label(m)}: k vs true MV (lower = better)")
        else:
            ax2.text(0.5, 0.5, "no method with adaptive k", ha="center", va="center",
                     transform=ax2.transAxes)
            ax2.set_axis_off()
        fig.tight_layout()
        fig.savefig(path)
    return Path(path)


_MARKERS = ("o", "s", "^", "D", "v", "P", "X")  # one per method where lines may coincide


def plot_k_vs_mv(kmv: pd.DataFrame, methods: Sequence[str], path: str | Path) -> Path:
    """Mean k (± SE) per bin of the configuration's normalized MV regret, every method.

    Methods of the same fixed k draw the same line: each method is shifted a little along
    the x-axis and has its own marker, so none hides another.

    Parameters
    ----------
    kmv : pandas.DataFrame
        Output of :func:`erahbo.analysis.stats.k_vs_mv`.
    """
    mpl = _mpl()
    colors = method_colors(methods)
    with mpl.rc_context(_RC):
        fig = _figure((6.0, 4.0))
        ax = fig.subplots()
        shown = [m for m in methods if (kmv["method"] == m).any()]
        for i, m in enumerate(shown):  # methods of one fixed k overlap: offset and markers
            d = kmv[kmv["method"] == m].sort_values("bin")
            x = d["bin"].to_numpy() + (i - (len(shown) - 1) / 2) * 0.1
            ax.errorbar(x, d["mean_k"].to_numpy(), yerr=np.nan_to_num(d["se_k"].to_numpy()),
                        color=colors[m], marker=_MARKERS[i % len(_MARKERS)], ms=5, lw=1.5,
                        capsize=2, label=method_label(m))
        bins = kmv.drop_duplicates("bin").sort_values("bin")
        ax.set_xticks(bins["bin"].to_numpy(),
                      [f"{lo:.2g}–{hi:.2g}" for lo, hi in zip(bins["lo"], bins["hi"],
                                                              strict=True)],
                      rotation=30, ha="right")
        ax.set_xlabel("normalized MV regret of the configuration (quantile bins; left = better)")
        ax.set_ylabel("mean seeds per round k")
        ax.set_title("Seeds spent versus configuration quality")
        ax.legend(frameon=False, fontsize=8)
        fig.tight_layout()
        fig.savefig(path)
    return Path(path)


def plot_checkpoints(ckpt: pd.DataFrame, methods: Sequence[str], path: str | Path, *,
                     groups: Sequence[str] | None = None) -> Path:
    """Grouped bars of IQM normalized regret (95 % CI error bars) at budget checkpoints,
    one panel per domain.

    Parameters
    ----------
    ckpt : pandas.DataFrame
        Output of :func:`erahbo.analysis.stats.checkpoint_regret`.
    """
    mpl = _mpl()
    colors = method_colors(methods)
    groups = list(groups) if groups is not None else list(dict.fromkeys(ckpt["group"]))
    rows, cols = _grid_shape(len(groups))
    cps = np.sort(ckpt["checkpoint"].unique())
    width = 0.8 / max(1, len(methods))
    with mpl.rc_context(_RC):
        fig = _figure((3.8 * cols, 2.9 * rows + 0.6))
        axes = fig.subplots(rows, cols, squeeze=False, sharey=True)
        for ax, g in zip(axes.ravel(), groups, strict=False):
            sub = ckpt[ckpt["group"] == g]
            for mi, m in enumerate(methods):
                d = sub[sub["method"] == m].set_index("checkpoint").reindex(cps)
                y = d["iqm"].to_numpy()
                err = np.vstack([y - d["lo"].to_numpy(), d["hi"].to_numpy() - y])
                ax.bar(np.arange(cps.size) + (mi - (len(methods) - 1) / 2) * width, y,
                       width=width, color=colors[m], yerr=np.clip(err, 0, None),
                       error_kw={"lw": 0.8, "capsize": 1.5})
            ax.set_xticks(np.arange(cps.size), [str(c) for c in cps])
            ax.set_title(domain_label(g))
            ax.set_xlabel("training runs t")
        for ax in axes[:, 0]:
            ax.set_ylabel("IQM normalized regret")
        for ax in axes.ravel()[len(groups):]:
            ax.set_visible(False)
        _suptitle(fig, "Normalized MV regret at budget checkpoints")
        _legend_below(fig, methods, colors)
        _adjust(fig)
        fig.savefig(path)
    return Path(path)
