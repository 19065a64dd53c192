"""Plots of one optimization run: Figure-1 style 1-D view, evaluated configurations."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from erahbo.policies import STOP_REASONS


def plot_1d_run(task: Any, result: Any, path: str | Path, alpha: float = 1.0) -> Path:
    """Plot ``f``, ``f +- rho``, ``MV`` and the seeds a run spent per configuration.

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
    ax.scatter(c[name], c["mean"], s=12 + 3 * c["k"], color="tab:orange", zorder=3,
               label="evaluated (size ~ seeds)")
    best = task.mv_argmax(alpha)[name]
    ax.axvline(best, color="tab:blue", lw=1.0, ls=":", label="true MV optimum")
    if result.incumbent is not None:
        ax.axvline(result.incumbent[name], color="tab:green", lw=2, label="recommended")
    ax.set_ylabel("return")
    ax.legend(fontsize=8, loc="best")
    ax.set_title(f"{result.method.upper()} on {type(task).__name__}: {result.n_evals} runs")
    axk.bar(c[name], c["k"], width=(hi - lo) / 150, color="tab:orange")
    axk.set_ylabel("seeds k")
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
    MV iso-lines ``mean - alpha * std^2 = const`` (the study's ``alpha``); the incumbent
    (rank 1, highest ``LCB_MV``) and the runner-up are marked. A one-seed configuration has no
    sample std: it is drawn as a grey tick left of ``std = 0`` (with ``k_min = 1``, the
    default, most configurations). Right: the ``top`` best
    configurations by rank with their ``[LCB_MV, UCB_MV]`` and MV estimate: the incumbent's
    lower bound is the line the others' lower bounds stay below.

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
    alpha = float(result.settings.get("alpha", 1.0) or 0.0)
    fig, (ax, axb) = plt.subplots(1, 2, figsize=(11, 4.8),
                                  gridspec_kw={"width_ratios": [1.35, 1]})
    one = ~np.isfinite(std)  # (n,) one-seed configurations: no sample std
    x_one = -0.04 * (float(np.nanmax(std)) if (~one).any() else 1.0) or -0.04
    x = np.where(one, x_one, std)  # (n,) where each configuration is drawn
    k = c["k"].to_numpy(dtype=float)
    sc = ax.scatter(std[~one], mean[~one], s=15 + 6 * k[~one], c=k[~one], cmap="viridis",
                    alpha=0.8, edgecolors="none")
    fig.colorbar(sc, ax=ax, label="seeds k", pad=0.01)
    if one.any():
        ax.scatter(x[one], mean[one], marker="_", s=60, color="grey", alpha=0.7,
                   label=f"one seed, no std ({int(one.sum())})")
    first, second = _ranked(c)
    if alpha > 0 and (~one).any():
        _mv_isolines(ax, std, mean, alpha, first)
    if one.any():
        ax.axvline(0.0, color="grey", lw=0.5)
        ax.set_xlim(left=2 * x_one)
    for row, style, label in ((first, dict(edgecolors="tab:red", s=300), "incumbent (rank 1)"),
                              (second, dict(edgecolors="tab:orange", s=220),
                               "runner-up (rank 2)")):
        if row is not None:
            i = c.index.get_loc(row.name)
            ax.scatter([x[i]], [mean[i]], facecolors="none", linewidths=2, zorder=4,
                       label=f"{label}: config {int(row['config_id'])}", **style)
    ax.set_xlabel(SPREAD_LABEL)
    ax.set_ylabel(MEAN_LABEL)
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.13), ncol=2, fontsize=7,
              frameon=False)
    ax.set_title(f"{len(c)} configurations, {result.n_evals} runs", fontsize=9)
    _bounds_panel(axb, c, top)
    fig.suptitle(title or f"{result.method.upper()}: evaluated configurations", fontsize=11)
    return _save(fig, path)


def _mv_isolines(ax: Any, std: np.ndarray, mean: np.ndarray, alpha: float, first: Any) -> None:
    """Curves of equal MV, ``mean = MV + alpha * std^2``, over the plotted range."""
    x0, x1 = 0.0, float(np.nanmax(std)) * 1.05 or 1.0
    y0, y1 = float(np.nanmin(mean)), float(np.nanmax(mean))
    pad = 0.05 * (y1 - y0 or 1.0)
    xs = np.linspace(x0, x1, 200)
    mv_pts = mean - alpha * std**2
    levels = np.unique(np.quantile(mv_pts[np.isfinite(mv_pts)], [0.1, 0.3, 0.5, 0.7, 0.9]))
    for lv in levels:
        ax.plot(xs, lv + alpha * xs**2, color="grey", lw=0.6, ls=":", zorder=1)
    ax.plot([], [], color="grey", lw=0.6, ls=":", label=f"equal MV (alpha={alpha:.3g})")
    if first is not None and np.isfinite(_num(first["mv"])):
        ax.plot(xs, float(first["mv"]) + alpha * xs**2, color="tab:red", lw=1, ls="--",
                zorder=2, label=f"incumbent's MV estimate {float(first['mv']):.3g}")
    ax.set_xlim(x0, x1)
    ax.set_ylim(y0 - pad, y1 + pad)


def _bounds_panel(ax: Any, c: Any, top: int) -> None:
    ranked = c[c["rank"].notna()].sort_values("rank").head(int(top)) if "rank" in c else c[:0]
    if ranked.empty or not np.isfinite(ranked["lcb_mv"].to_numpy(dtype=float)).any():
        ax.text(0.5, 0.5, "no MV bounds yet (models not fit)", ha="center", va="center",
                transform=ax.transAxes)
        ax.set_axis_off()
        return
    y = np.arange(len(ranked))[::-1]
    lo, hi = ranked["lcb_mv"].to_numpy(float), ranked["ucb_mv"].to_numpy(float)
    colours = ["tab:red" if i == 0 else "tab:orange" if i == 1 else "tab:gray"
               for i in range(len(ranked))]
    ax.hlines(y, lo, hi, colors=colours, lw=3, alpha=0.8)
    ax.scatter(ranked["mv"].to_numpy(float), y, color="black", s=14, zorder=3,
               label="MV estimate")
    ax.axvline(lo[0], color="tab:red", lw=1, ls="--",
               label=f"incumbent's LCB_MV {lo[0]:.3g} (highest)")
    ax.set_yticks(y, [f"#{int(r)} cfg {int(cid)} (k={int(k)})" for r, cid, k in
                      zip(ranked["rank"], ranked["config_id"], ranked["k"], strict=True)],
                  fontsize=7)
    ax.set_xlabel("MV: [LCB_MV, UCB_MV] and estimate")
    ax.set_title("best configurations by LCB_MV (the recommendation rule)", fontsize=9)
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.13), ncol=1, fontsize=7,
              frameon=False)


def _bounds_are_points(rounds: Any, bo: np.ndarray) -> str:
    """``"all"`` when every model round has ``beta_stop = 0`` (its bounds ``[LCB_MV, UCB_MV]``
    are the posterior mean: points), ``"some"`` when a schedule reaches 0, else ``""``."""
    if "beta_stop" not in rounds or not bo.any():
        return ""
    zero = rounds["beta_stop"].to_numpy(dtype=float)[bo] == 0.0
    return "all" if zero.all() else "some" if zero.any() else ""


# one colour per stop reason, in the order of erahbo.policies.STOP_REASONS (the same in both
# panels); a reason without one is brown
_COLOURS = ("tab:blue", "tab:red", "tab:purple", "tab:olive", "black", "tab:brown", "tab:gray",
            "tab:cyan", "tab:pink", "tab:green")
_REASON_COLOURS = dict(zip(STOP_REASONS, _COLOURS, strict=False))


def plot_rounds(result: Any, path: str | Path, title: str = "") -> Path:
    """The run round by round: the bounds of the stopping rule and the seeds spent.

    Top: ``B_t = max LCB_MV`` over the configurations evaluated before round ``t`` (the
    incumbent's pessimistic MV, as a step line) and, per round, ``[LCB_MV, UCB_MV]`` of the
    chosen configuration after its seeds (an ERAHBO round stops early once ``UCB_MV`` falls
    below ``B_t``). Bottom: seeds ``k`` per round, coloured by why the round ended. The
    x-axis counts training runs.

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
                label=("B_t = best posterior MV (incumbent; beta_stop = 0)" if points == "all"
                       else "B_t = max LCB_MV (incumbent bound)"))
    first, second = _ranked(result.configs)
    for row, colour, label in ((first, "tab:red", "incumbent"), (second, "tab:orange",
                                                                "runner-up")):
        if row is None:
            continue
        mine = np.flatnonzero(r["config_id"].to_numpy() == row["config_id"])
        if mine.size:  # its last round, at the height of its final lower bound
            at = runs[mine[-1]]
            y = _num(row["lcb_mv"])
            ax.scatter([at], [y], marker="*", s=140, color=colour, edgecolors="black",
                       linewidths=0.5, zorder=5,
                       label=f"{label}: config {int(row['config_id'])} (its LCB_MV now)")
    for reason, colour in colour_of.items():  # one legend for both panels: colours agree
        ax.plot([], [], color=colour, lw=4, label=f"round ended: {reason}")
    ax.set_xlim(0, runs[-1] * 1.01 + 1 if len(runs) else 1)
    ax.set_ylabel({"all": "posterior MV of x_t (beta_stop = 0)",
                   "some": "MV bounds of x_t at beta_stop (0: a point)"}.get(
                       points, "MV bounds of x_t (at beta_stop)"))
    ax.set_title(title or f"{result.method.upper()}: {len(r)} rounds, {result.n_evals} runs")
    axk.bar(runs - k / 2, k, width=np.maximum(k, 1.0), color=colours, edgecolor="white",
            linewidth=0.3)
    ch = r["phase"].to_numpy() == "challenger"  # erahbo.optimizer.challenger: hatched
    if ch.any():
        axk.bar((runs - k / 2)[ch], k[ch], width=np.maximum(k[ch], 1.0), color="none",
                edgecolor="black", hatch="////", linewidth=0.0)
    axk.set_ylabel("seeds k")
    axk.set_xlabel("training runs")
    handles, labels = ax.get_legend_handles_labels()  # below the panels: covers no round
    if ch.any():
        from matplotlib.patches import Patch

        handles.append(Patch(facecolor="white", edgecolor="black", hatch="////"))
        labels.append("challenger round (hatched)")
    fig.legend(handles, labels, loc="lower center", ncol=3, fontsize=7, frameon=False)
    fig.tight_layout(rect=(0, 0.06 + 0.03 * (len(labels) // 3), 1, 1))
    return _save(fig, path, tight=False)
