"""Long layouts (one row per training run or checkpoint): the row filters before grouping.

Two layouts hold one row per run rather than one per configuration; before their rows are
grouped into a task (:mod:`erahbo.datasets.loaders`), they are reduced to one row per
(configuration, seed) here:

``"landscape"``: ARLBench's published landscape data
    ``config_id, hp_config.<name>..., seed, training_steps, performance``: one row per
    checkpoint of every run. :func:`select_checkpoint` keeps the rows of one checkpoint
    (``training_steps`` value): the last one by default. A run without that checkpoint is a
    missing run (NaN).
``"runs"``: one row per run, as erahbo's own ``history.csv``
    Hyperparameter columns, ``seed`` and ``return`` (``config_id`` optional: without it, rows
    with equal hyperparameters are one configuration). :func:`apply_status` reads an optional
    ``status`` column with erahbo's meaning: ``ok`` keeps the return; ``penalized``/``failed``
    are failed runs (NaN: their value is a penalty, not a return); ``retried``, ``running``
    and ``interrupted`` rows are dropped (replaced by a retry, or cut by a crash).

Errors name the file, the row (0-based data row, as pandas numbers it) and the column.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from erahbo.datasets.validate import require_columns

STEPS = "training_steps"
LANDSCAPE_COLUMNS = ("seed", STEPS, "performance")
RUN_COLUMNS = ("seed", "return")
STATUS_OK = ("ok",)
STATUS_FAILED = ("penalized", "failed")
STATUS_DROP = ("retried", "running", "interrupted")
# erahbo's history.csv bookkeeping, never hyperparameters (the optimizer's history columns,
# erahbo.optimizer.records.HISTORY_COLUMNS, are these)
HISTORY_BOOKKEEPING = ("iteration", "phase", "config_id", "seed", "return", "k", "k_round",
                       "wall_time", "status", "error", "attempt", "worker", "rerun", "n_failed")


def is_landscape(columns: list[str]) -> bool:
    """True when ``columns`` are ARLBench's landscape layout (``training_steps`` et al.)."""
    return all(c in columns for c in LANDSCAPE_COLUMNS)


def is_runs(columns: list[str]) -> bool:
    """True when ``columns`` hold one run per row (``seed`` and ``return``)."""
    return all(c in columns for c in RUN_COLUMNS)


def is_history(columns: list[str]) -> bool:
    """True for erahbo's own ``history.csv`` (its bookkeeping columns are all there)."""
    return all(c in columns for c in HISTORY_BOOKKEEPING)


def checkpoints(df: pd.DataFrame, source: Path) -> np.ndarray:
    """The ``training_steps`` of every row as numbers (checked), shape ``(n_rows,)``."""
    steps = pd.to_numeric(df[STEPS], errors="coerce")
    bad = steps.isna()
    if bad.any():
        i = df.index[int(np.flatnonzero(bad.to_numpy())[0])]
        raise ValueError(
            f"{source}: row {i}, column {STEPS!r}: {df.at[i, STEPS]!r} is not a number of "
            "training steps; every row of a landscape file is one checkpoint of one run "
            "(fill it in or drop the row)."
        )
    return steps.to_numpy(dtype=float)


def select_checkpoint(df: pd.DataFrame, source: Path, checkpoint: int | None) -> pd.DataFrame:
    """The rows of one checkpoint: ``checkpoint`` training steps, or the last one (None).

    Parameters
    ----------
    df : DataFrame
        A landscape table (``training_steps``, ``seed``, ``performance``, ...).
    source : Path
        The file (for messages).
    checkpoint : int or None
        A ``training_steps`` value present in the file; None: the largest.

    Returns
    -------
    DataFrame
        The rows of that checkpoint, original row labels kept; ``attrs["checkpoint"]`` holds
        the chosen value.
    """
    require_columns(df.columns, LANDSCAPE_COLUMNS, str(source), "landscape")
    steps = checkpoints(df, source)
    values = np.unique(steps)
    chosen = float(values[-1]) if checkpoint is None else float(checkpoint)
    if chosen not in values:
        shown = ", ".join(_int_text(v) for v in values[:20]) + (" ..." if len(values) > 20 else "")
        raise ValueError(
            f"{source}: checkpoint {checkpoint} is not in column {STEPS!r}; the file has "
            f"checkpoints {shown}: pass one of them (--checkpoint N), or none for the last."
        )
    out = df[steps == chosen].drop(columns=[STEPS])
    out.attrs["checkpoint"] = int(chosen) if chosen.is_integer() else chosen
    return out


def apply_status(df: pd.DataFrame, source: Path, value: str = "return") -> pd.DataFrame:
    """Honour erahbo's ``status`` column (module docstring); without one, ``df`` as it is."""
    if "status" not in df.columns:
        return df
    status = df["status"].astype(str).str.strip()
    known = (*STATUS_OK, *STATUS_FAILED, *STATUS_DROP)
    unknown = ~status.isin(known)
    if unknown.any():
        i = df.index[int(np.flatnonzero(unknown.to_numpy())[0])]
        raise ValueError(
            f"{source}: row {i}, column 'status': unknown status {df.at[i, 'status']!r}; use "
            f"'ok' for a finished run, {STATUS_FAILED} for a failed one, {STATUS_DROP} for rows "
            "to leave out (or drop the column)."
        )
    out = df[~status.isin(STATUS_DROP)].copy()
    failed = status.loc[out.index].isin(STATUS_FAILED)
    out[value] = out[value].astype(object).where(~failed, np.nan)
    return out


def _int_text(v: float) -> str:
    return str(int(v)) if float(v).is_integer() else repr(float(v))


__all__ = [
    "HISTORY_BOOKKEEPING",
    "LANDSCAPE_COLUMNS",
    "RUN_COLUMNS",
    "STEPS",
    "apply_status",
    "checkpoints",
    "is_history",
    "is_landscape",
    "is_runs",
    "select_checkpoint",
]
