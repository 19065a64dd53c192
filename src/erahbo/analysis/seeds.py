"""Seeds per round: distributions, summaries per method and task, k against the MV."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats as sps

from erahbo.analysis.intervals import standard_error
from erahbo.analysis.traces import sort_methods

# --------------------------------------------------------------------------- seed counts


def seed_count_distribution(rounds: pd.DataFrame, methods: Sequence[str] | None = None
                            ) -> pd.DataFrame:
    """Histogram data of k (seeds per round) for each method, pooled over tasks and
    repetitions.

    Returns
    -------
    pandas.DataFrame
        Columns method, k, n_rounds, fraction (of that method's rounds).
    """
    methods = list(methods) if methods is not None else sort_methods(rounds["method"])
    rows = []
    for m in methods:
        ks = rounds.loc[rounds["method"] == m, "k"].to_numpy(dtype=np.int64)
        if ks.size == 0:
            continue
        vals, counts = np.unique(ks, return_counts=True)
        for k, c in zip(vals, counts, strict=True):
            rows.append({"method": m, "k": int(k), "n_rounds": int(c),
                         "fraction": c / ks.size})
    return pd.DataFrame(rows, columns=["method", "k", "n_rounds", "fraction"])


def seed_count_summary(rounds: pd.DataFrame, methods: Sequence[str] | None = None
                       ) -> pd.DataFrame:
    """Per method: rounds, mean/median/quartiles of k, share of rounds rejected early
    (``stop_reason == "dominated"``: eq. 12 held) and Spearman correlation of k with the
    configuration's true MV (positive = more seeds on better configurations).

    Returns
    -------
    pandas.DataFrame
        Columns method, n_rounds, mean_k, median_k, q25_k, q75_k, max_k,
        frac_certified, spearman_k_mv.
    """
    methods = list(methods) if methods is not None else sort_methods(rounds["method"])
    rows = []
    for m in methods:
        r = rounds[rounds["method"] == m]
        if not len(r):
            continue
        k = r["k"].to_numpy(dtype=float)
        score = -r["config_norm_regret"].to_numpy(dtype=float)  # higher = better config
        rho = np.nan
        if np.ptp(k) > 0 and np.ptp(score) > 0:
            rho = float(sps.spearmanr(k, score).statistic)
        rows.append({
            "method": m, "n_rounds": len(r), "mean_k": float(k.mean()),
            "median_k": float(np.median(k)), "q25_k": float(np.percentile(k, 25)),
            "q75_k": float(np.percentile(k, 75)), "max_k": int(k.max()),
            "frac_certified": float((r["stop_reason"] == "dominated").mean()),
            "spearman_k_mv": rho,
        })
    return pd.DataFrame(rows)


def seed_count_by_task(rounds: pd.DataFrame, methods: Sequence[str] | None = None
                       ) -> pd.DataFrame:
    """Per task and adaptive method (its rounds end by the stopping rule or ``k_max``, not
    a fixed k): mean k and the share of rounds that ran to ``k_max``, pooled over
    repetitions.

    A task where most rounds run to ``k_max`` is one where the stopping rule rarely fires,
    e.g. when many configurations tie with the incumbent (``docs/results/acrobot_beta_stop``).

    Returns
    -------
    pandas.DataFrame
        Columns task, method, n_rounds, mean_k, frac_k_max; empty without adaptive methods.
    """
    cols = ["task", "method", "n_rounds", "mean_k", "frac_k_max"]
    methods = list(methods) if methods is not None else sort_methods(rounds["method"])
    rows = []
    for m in methods:
        r = rounds[rounds["method"] == m]
        if not r["stop_reason"].isin(("dominated", "k_max")).any():
            continue  # a fixed k: nothing to read per task
        for task, g in r.groupby("task", sort=True):
            rows.append({"task": task, "method": m, "n_rounds": len(g),
                         "mean_k": float(g["k"].mean()),
                         "frac_k_max": float((g["stop_reason"] == "k_max").mean())})
    return pd.DataFrame(rows, columns=cols)


def k_vs_mv(rounds: pd.DataFrame, methods: Sequence[str] | None = None, n_bins: int = 8
            ) -> pd.DataFrame:
    """Mean k per bin of the configuration's normalized MV regret
    ``(MV* - MV(x)) / init_regret`` (0 = optimal, 1 = initial design's mean).

    Bins are quantiles of the pooled values of all methods, so every method is read on
    the same bins.

    Returns
    -------
    pandas.DataFrame
        Columns method, bin, lo, hi, center (median regret in the bin), mean_k, se_k, n.
    """
    if n_bins < 1:
        raise ValueError(f"n_bins must be >= 1, got {n_bins}")
    methods = list(methods) if methods is not None else sort_methods(rounds["method"])
    cols = ["method", "bin", "lo", "hi", "center", "mean_k", "se_k", "n"]
    x_all = rounds["config_norm_regret"].to_numpy(dtype=float)
    if x_all.size == 0:
        return pd.DataFrame(columns=cols)
    edges = np.unique(np.quantile(x_all, np.linspace(0, 1, n_bins + 1)))
    if edges.size < 2:
        edges = np.array([edges[0], edges[0]])
    rows: list[dict[str, Any]] = []
    for m in methods:
        r = rounds[rounds["method"] == m]
        x = r["config_norm_regret"].to_numpy(dtype=float)
        k = r["k"].to_numpy(dtype=float)
        b = np.clip(np.searchsorted(edges, x, side="right") - 1, 0, edges.size - 2)
        for i in range(edges.size - 1):
            sel = b == i
            if not sel.any():
                continue
            rows.append({"method": m, "bin": i, "lo": edges[i], "hi": edges[i + 1],
                         "center": float(np.median(x[sel])), "mean_k": float(k[sel].mean()),
                         "se_k": float(standard_error(k[sel])) if sel.sum() > 1 else np.nan,
                         "n": int(sel.sum())})
    return pd.DataFrame(rows, columns=cols)
