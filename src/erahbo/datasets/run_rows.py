"""Training runs as rows, from a file of any layout: what ``warm_start`` reads.

:func:`read_runs` turns every layout :mod:`erahbo.datasets.loaders` reads into one row per
training run (hyperparameters, ``seed``, ``return``): a run-per-row file (erahbo's
``history.csv``) as it is, the others through their task (:func:`~erahbo.datasets.loaders.
load_task`). ``erahbo optimize/tune --warm-start FILE [--checkpoint N]`` and
``Optimizer(warm_start=path)`` use it.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from erahbo.datasets.format import CONFIG_ID, seed_columns
from erahbo.datasets.loaders import detect_format, file_columns, load_task, read_table


def read_runs(
    path: str | Path,
    fmt: str | None = None,
    *,
    hp_columns: Sequence[str] | None = None,
    checkpoint: int | None = None,
) -> pd.DataFrame:
    """One row per training run from a file of any layout: what ``warm_start`` reads.

    Parameters
    ----------
    path : str or Path
        A task file in any format of :data:`FORMATS`.
    fmt, hp_columns, checkpoint
        As in :func:`load_task`.

    Returns
    -------
    DataFrame
        Run rows as they are (``status`` kept); other layouts as ``config_id``, one column per
        hyperparameter (no ``hp_config.`` prefix), ``seed``, ``return``. A wide file cannot
        tell a failed run from one not made: its empty cells are left out. A runhistory with a
        ``seeds`` column (erahbo's sweeper: ``performance_run_<j>`` columns) gives each run
        its seed from that row's list.
    """
    path = Path(path)
    if not path.is_file():
        raise ValueError(f"{path}: no such file.")
    cols = file_columns(path)
    fmt = fmt or detect_format(path)
    plain = "return" in cols and not seed_columns(cols)  # run rows ('seed' optional here)
    if fmt in ("runs", "csv") and plain and checkpoint is None and not hp_columns:
        return read_table(path)
    if fmt == "csv" and "return" not in cols and not seed_columns(cols):
        raise ValueError(
            f"{path}: no 'return' column (columns: {cols}); give one row per training run "
            "with the hyperparameters, 'seed' and its 'return' (a history.csv works), or a "
            "file in another layout: runhistory.csv, ARLBench landscape data, seed_<int> "
            "return columns."
        )
    task = load_task(path, hp_columns, fmt, checkpoint=checkpoint)
    returns = np.asarray(task.returns, dtype=float)  # (n, S)
    i, j = np.nonzero(np.isfinite(returns))
    runs = task.configs.iloc[i].reset_index(drop=True)
    if fmt != "runs":
        runs.insert(0, CONFIG_ID, np.asarray(task.config_ids)[i])
    runs["seed"] = np.asarray(task.seeds)[j]
    if fmt == "runhistory" and "seeds" in cols:  # erahbo's sweeper: columns are run positions
        runs["seed"] = _listed_seeds(read_table(path)["seeds"], i, j, runs["seed"].to_numpy())
    runs["return"] = returns[i, j]
    return runs


def _listed_seeds(listed: pd.Series, i: np.ndarray, j: np.ndarray,
                  labels: np.ndarray) -> np.ndarray:
    """The seed of each run ``(row i, column j)`` from a ``seeds`` column of JSON lists (the
    j-th seed of row i), or ``labels`` where a row's list does not give it."""
    out = labels.astype(np.int64).copy()
    for n, (r, c) in enumerate(zip(i, j, strict=True)):
        try:
            seeds = json.loads(str(listed.iloc[r]))
            out[n] = int(seeds[c])
        except (ValueError, TypeError, IndexError, KeyError):
            continue
    return out


__all__ = ["read_runs"]
