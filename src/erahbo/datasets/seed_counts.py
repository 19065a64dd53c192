"""Adaptive seed counts: tables whose configurations ran on different numbers of seeds.

An erahbo study spends more seeds where they decide, so its ``history.csv`` and its Hydra
sweeper's ``runhistory.csv`` give each configuration its own number of runs; a Hypersweeper
runhistory with empty cells does too. Such a table is held as any other ``(N, S)`` task,
with ``meta["seeds_per_config"]`` listing the runs of each configuration (failed ones
included; see :mod:`erahbo.datasets.format`): the loaders record it
(:func:`record_seed_counts`), :func:`seeds_per_config` reads it and :func:`run_stats` gives
every configuration's statistics over its own runs.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd

from erahbo.datasets.format import SEEDS_PER_CONFIG, TaskData

__all__ = ["record_seed_counts", "replay_note", "run_stats", "seed_count_table",
           "seeds_per_config", "sweeper_run_counts"]


def seeds_per_config(task: TaskData) -> np.ndarray | None:
    """The number of runs (seeds) of each configuration, failed runs included, or None.

    Parameters
    ----------
    task : TaskData
        Any task.

    Returns
    -------
    numpy.ndarray or None
        ``(N,)`` int64 counts from ``meta["seeds_per_config"]``; None where every
        configuration ran on all ``S`` seeds (the key is absent).

    Raises
    ------
    ValueError
        When the key does not hold ``N`` counts in ``0..S``, each at least the number of
        returns (non-NaN values) in its row.
    """
    raw = task.meta.get(SEEDS_PER_CONFIG)
    if raw is None:
        return None
    counts = np.asarray(raw, dtype=np.int64)  # (N,)
    if counts.shape != (task.n_configs,) or (counts < 0).any() or (counts > task.n_seeds).any():
        raise ValueError(
            f"{task.name}: meta[{SEEDS_PER_CONFIG!r}] must list one count in 0..{task.n_seeds} "
            f"per configuration ({task.n_configs}); got {counts.size} values: drop the key or "
            "fix it."
        )
    have = (~np.isnan(np.asarray(task.returns, dtype=float))).sum(axis=1)  # (N,)
    if (counts < have).any():
        i = int(np.flatnonzero(counts < have)[0])
        raise ValueError(
            f"{task.name}: configuration row {i} has {have[i]} returns but "
            f"meta[{SEEDS_PER_CONFIG!r}] counts {counts[i]} runs: drop the key or fix it."
        )
    return counts


def record_seed_counts(task: TaskData, counts: np.ndarray) -> None:
    """Mark ``task`` as having adaptive seed counts where a configuration has fewer runs than
    the table has seeds.

    Parameters
    ----------
    task : TaskData
        The task as loaded; changed in place.
    counts : numpy.ndarray
        ``(N,)`` runs per configuration, failed ones included.
    """
    counts = np.asarray(counts, dtype=np.int64)
    if (counts < task.n_seeds).any():
        task.meta[SEEDS_PER_CONFIG] = [int(c) for c in counts]


def sweeper_run_counts(df: pd.DataFrame, returns: np.ndarray, source: Path) -> np.ndarray:
    """Runs per row of erahbo's sweeper ``runhistory.csv`` (``performance_run_<j>`` columns).

    Parameters
    ----------
    df : DataFrame
        The file as read.
    returns : numpy.ndarray
        ``(n, S)`` its ``performance_run_<j>`` values (NaN: empty).
    source : Path
        The file, for messages.

    Returns
    -------
    numpy.ndarray
        ``(n,)`` the length of each row's ``seeds`` list (one seed per run, in column order);
        without that column, the runs up to the row's last filled cell.
    """
    n_cols = returns.shape[1]
    filled = ~np.isnan(returns)  # (n, S)
    last = np.where(filled.any(axis=1), n_cols - np.argmax(filled[:, ::-1], axis=1), 0)  # (n,)
    if "seeds" not in df.columns:
        return last
    counts = np.empty(len(df), dtype=np.int64)
    for i, text in enumerate(df["seeds"]):
        try:
            listed = json.loads(str(text))
        except ValueError:
            listed = None
        if not isinstance(listed, list):
            raise ValueError(
                f"{source}: row {i}, column 'seeds': {text!r} is not a list of seeds like "
                "'[3, 7]' (erahbo's sweeper writes one per configuration); fix it or drop the "
                "column."
            )
        if len(listed) > n_cols:
            raise ValueError(
                f"{source}: row {i}, column 'seeds' lists {len(listed)} seeds but the file has "
                f"{n_cols} 'performance_run_<j>' columns (one per run); fix the row."
            )
        if len(listed) < last[i]:
            raise ValueError(
                f"{source}: row {i}, column 'seeds' lists {len(listed)} seeds but the row has "
                f"a return in 'performance_run_{last[i] - 1}' (one seed per run, in column "
                "order); fix the row."
            )
        counts[i] = len(listed)
    return counts


def run_stats(
    returns: np.ndarray, counts: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Every configuration's mean and standard deviation over its own returns.

    Parameters
    ----------
    returns : numpy.ndarray
        ``(N, S)`` returns; NaN (or ``-inf``) for a failed run or a seed not run.
    counts : numpy.ndarray, optional
        ``(N,)`` runs per configuration (:func:`seeds_per_config`); None: ``S`` each.

    Returns
    -------
    (mean, std, n_returns, n_failed)
        ``(N,)`` each: the mean (NaN without a return) and sample standard deviation
        (ddof = 1; NaN with fewer than 2 returns) of the finite returns, their number, and
        the number of failed runs (runs without a finite return).
    """
    r = np.asarray(returns, dtype=float)  # (N, S)
    ok = np.isfinite(r)
    n = ok.sum(axis=1)  # (N,)
    runs = np.full(r.shape[0], r.shape[1]) if counts is None else np.asarray(counts)
    vals = np.where(ok, r, 0.0)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = vals.sum(axis=1) / n  # (N,)
        dev = np.where(ok, r - mean[:, None], 0.0)
        var = (dev**2).sum(axis=1) / (n - 1)
    mean = np.where(n > 0, mean, np.nan)
    std = np.where(n > 1, np.sqrt(np.maximum(var, 0.0)), np.nan)
    return mean, std, n.astype(np.int64), (runs - n).astype(np.int64)


def seed_count_table(counts: np.ndarray) -> dict[int, int]:
    """Configurations per number of seeds, ``{seeds: configurations}`` in increasing order."""
    values, freq = np.unique(np.asarray(counts, dtype=np.int64), return_counts=True)
    return {int(v): int(f) for v, f in zip(values, freq, strict=True)}


def replay_note(counts: np.ndarray, n_seeds: int) -> str:
    """What the benchmark's NaN policy does to a table with adaptive seed counts (one line).

    Parameters
    ----------
    counts : numpy.ndarray
        ``(N,)`` runs per configuration (:func:`seeds_per_config`).
    n_seeds : int
        The table's seeds ``S``.
    """
    counts = np.asarray(counts)
    short = int((counts < n_seeds).sum())
    return (
        f"adaptive seed counts: {short} of {counts.size} configurations ran on fewer than "
        f"{n_seeds} seeds and count as infeasible in the benchmark (it draws every "
        "configuration's runs from the same seeds); `erahbo dataset inspect` describes each "
        "configuration by its own seeds."
    )
