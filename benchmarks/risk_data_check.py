"""The data check of issue 40: how far from Gaussian are the seeds of the real tables, and where
do the MV optimum and the CVaR optimum disagree?

For each bundled table (returns min-max scaled to [0, 1] over the table, failed runs dropped):

* the skewness of each configuration's seed returns (configurations with at least 5 finite
  seeds and a spread): its median and the share with ``|skew| > 1``;
* the optimum of the mean-variance objective ``MV = mean - alpha var`` (alpha 1 and 10, the
  sample statistics of every seed) and of ``CVaR_q`` (the mean of the worst ``ceil(q S)``
  seeds, q = 0.1 and 0.25); the CVaR that the MV optimum gives up, ``CVaR*_q - CVaR_q(x_MV)``,
  and the best alpha in hindsight (of 0.1, 0.3, 1, 3, 10, 30) with its CVaR loss.

Run::

    PYTHONPATH=src python benchmarks/risk_data_check.py [--data data/arlbench] [--out FILE.md]
"""

from __future__ import annotations

import argparse
import math
from pathlib import Path

import numpy as np
from scipy.stats import skew

from erahbo.datasets.loaders import load_task
from erahbo.datasets.warping import process_outcomes

ALPHAS = (0.1, 0.3, 1.0, 3.0, 10.0, 30.0)
QS = (0.1, 0.25)


def cvar(R: np.ndarray, q: float) -> np.ndarray:
    """Mean of the worst ``ceil(q S)`` finite returns of each row of ``R (N, S)``: ``(N,)``."""
    out = np.full(R.shape[0], np.nan)
    for i, r in enumerate(R):
        r = np.sort(r[np.isfinite(r)])
        if r.size:
            out[i] = r[: max(1, math.ceil(q * r.size))].mean()
    return out


def mv(R: np.ndarray, alpha: float) -> np.ndarray:
    """Sample MV ``mean - alpha var (ddof 1)`` of each row of ``R (N, S)``: ``(N,)``."""
    n = np.isfinite(R).sum(axis=1)  # (N,) a row with one finite seed has no variance: -inf
    var = np.nanvar(np.where(n[:, None] > 1, R, 0.0), axis=1, ddof=1)
    return np.where(n > 1, np.nanmean(R, axis=1) - alpha * var, -np.inf)


def check(path: Path) -> dict:
    """The figures of one table."""
    task = process_outcomes(load_task(path), "minmax")
    R = task.returns  # (N, S)
    ok = (np.isfinite(R).sum(1) >= 5) & (np.nanstd(R, axis=1) > 1e-9)
    sk = np.array([skew(r[np.isfinite(r)]) for r in R[ok]])
    row = {"task": task.name, "N": R.shape[0], "S": R.shape[1],
           "median_skew": float(np.median(sk)) if sk.size else float("nan"),
           "share_skew_gt1": float(np.mean(np.abs(sk) > 1)) if sk.size else float("nan")}
    for q in QS:
        c = cvar(R, q)
        best = float(np.nanmax(c))
        for alpha in (1.0, 10.0):
            row[f"loss_q{q}_a{alpha:g}"] = best - float(c[int(np.nanargmax(mv(R, alpha)))])
        losses = {a: best - float(c[int(np.nanargmax(mv(R, a)))]) for a in ALPHAS}
        a_best = min(losses, key=losses.get)
        row[f"cvar_star_q{q}"] = best
        row[f"best_alpha_q{q}"] = a_best
        row[f"best_alpha_loss_q{q}"] = losses[a_best]
    return row


def main(argv: list[str] | None = None) -> str:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--data", default="data/arlbench")
    p.add_argument("--out", default=None)
    a = p.parse_args(argv)
    rows = [check(f) for f in sorted(Path(a.data).glob("*.parquet"))]
    lines = [
        "| table | N x S | median skew | abs skew > 1 | CVaR10* | MV(1) loses | MV(10) loses | "
        "best alpha (loss) | CVaR25* | MV(1) loses | MV(10) loses | best alpha (loss) |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        lines.append(
            f"| {r['task']} | {r['N']} x {r['S']} | {r['median_skew']:.2f} | "
            f"{r['share_skew_gt1']:.0%} | {r['cvar_star_q0.1']:.3f} | {r['loss_q0.1_a1']:.3f} | "
            f"{r['loss_q0.1_a10']:.3f} | {r['best_alpha_q0.1']:g} ({r['best_alpha_loss_q0.1']:.3f})"
            f" | {r['cvar_star_q0.25']:.3f} | {r['loss_q0.25_a1']:.3f} | "
            f"{r['loss_q0.25_a10']:.3f} | {r['best_alpha_q0.25']:g} "
            f"({r['best_alpha_loss_q0.25']:.3f}) |")
    text = "\n".join(lines)
    print(text)
    if a.out:
        Path(a.out).write_text(text + "\n")
    return text


if __name__ == "__main__":
    main()
