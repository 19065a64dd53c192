"""Plots of one optimization run: Figure-1 style 1-D view, evaluated configurations."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np


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
    ax.axvline(best, color="tab:blue", lw=0.8, alpha=0.6)
    if result.incumbent is not None:
        ax.axvline(result.incumbent[name], color="tab:green", lw=2, label="recommended")
    ax.set_ylabel("return")
    ax.legend(fontsize=8, loc="best")
    ax.set_title(f"{result.method.upper()} on {type(task).__name__}: {result.n_evals} runs")
    axk.bar(c[name], c["k"], width=(hi - lo) / 150, color="tab:orange")
    axk.set_ylabel("seeds k")
    axk.set_xlabel(name)
    return _save(fig, path)


def _save(fig: Any, path: str | Path) -> Path:
    import matplotlib.pyplot as plt

    fig.tight_layout()
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path


def _bounds(task: Any, name: str) -> tuple[float, float]:
    hp = next(h for h in task.space.to_json()["hyperparameters"] if h["name"] == name)
    return float(hp.get("low", hp.get("lower"))), float(hp.get("high", hp.get("upper")))


def plot_configs(result: Any, path: str | Path, title: str = "") -> Path:
    """Sample mean vs sample std of every evaluated configuration (size: seeds k).

    The recommended configuration is ringed. Risk-aware tuning should recommend a point
    towards the upper left (high mean, low spread).

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

    c = result.configs
    std = np.sqrt(np.maximum(c["var"].to_numpy(dtype=float), 0.0))
    fig, ax = plt.subplots(figsize=(6.5, 4.5))
    sc = ax.scatter(std, c["mean"], s=15 + 6 * c["k"], c=c["k"], cmap="viridis", alpha=0.8,
                    edgecolors="none")
    fig.colorbar(sc, ax=ax, label="seeds k")
    if result.incumbent_id is not None:
        row = c.index[c["config_id"] == result.incumbent_id]
        if len(row):
            i = row[0]
            ax.scatter([std[i]], [c.loc[i, "mean"]], s=260, facecolors="none",
                       edgecolors="tab:red", linewidths=2, label="recommended")
            ax.legend(loc="lower right", fontsize=8)
    ax.set_xlabel("sample std of the return across seeds")
    ax.set_ylabel("sample mean return")
    ax.set_title(title or f"{result.method.upper()}: {len(c)} configurations, "
                 f"{result.n_evals} runs")
    return _save(fig, path)


# one colour per stop reason (erahbo.policies.STOP_REASONS), the same in both panels
_REASON_COLOURS = {"initial": "tab:gray", "dominated": "tab:blue", "k_max": "tab:red",
                   "fixed_k": "tab:purple", "budget": "tab:olive", "excluded": "black",
                   "infeasible": "tab:brown", "warm": "tab:cyan"}


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
    fig, (ax, axk) = plt.subplots(2, 1, figsize=(7.5, 5.5), sharex=True,
                                  gridspec_kw={"height_ratios": [3, 1.4]})
    bo = r["phase"].to_numpy() == "bo"
    lcb, ucb = r["lcb_mv"].to_numpy(dtype=float), r["ucb_mv"].to_numpy(dtype=float)
    ok = bo & np.isfinite(lcb) & np.isfinite(ucb)
    ax.vlines(runs[ok], lcb[ok], ucb[ok], colors=np.asarray(colours, dtype=object)[ok], lw=1.5,
              alpha=0.7)
    b_t = r["B_t"].to_numpy(dtype=float)
    fin = bo & np.isfinite(b_t)
    if fin.any():
        ax.step(runs[fin] - k[fin], b_t[fin], where="post", color="black", lw=1.3,
                label="B_t = max LCB_MV (incumbent bound)")
    for reason, colour in colour_of.items():  # one legend for both panels: colours agree
        ax.plot([], [], color=colour, lw=4, label=f"round ended: {reason}")
    ax.legend(fontsize=7, loc="lower right")
    ax.set_ylabel("MV bounds of x_t")
    ax.set_title(title or f"{result.method.upper()}: {len(r)} rounds, {result.n_evals} runs")
    axk.bar(runs - k / 2, k, width=np.maximum(k, 1.0), color=colours, edgecolor="white",
            linewidth=0.3)
    axk.set_ylabel("seeds k")
    axk.set_xlabel("training runs")
    return _save(fig, path)
