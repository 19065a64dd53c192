"""Warm start: training runs done before the study, as JSON-friendly records.

``Optimizer(..., warm_start=...)`` takes earlier runs (a ``history.csv`` of an earlier study,
runs from manual tuning) and adds them to the data ``D_0`` before the first round: they shape
the models, ``B_t`` and the recommendation like any other data, but they are not counted in
the budget and their seeds are never handed out again for the same configuration.

Two input forms, normalized to the second (stored in the study settings, so a journaled study
replays with the same warm start):

* a :class:`pandas.DataFrame` (or a CSV/Parquet path) with one row per run: a column per
  hyperparameter (NaN where inactive), ``return``, optionally ``seed`` and ``status`` (only
  ``ok`` rows are used: a penalized run's value is a penalty, not a return); on a finite
  candidate table, ``config_id`` (the row index) instead of the hyperparameter columns;
* a list of records ``{"config": {...}, "returns": [...], "seeds": [...] or None}`` (finite
  table: ``{"row": i, ...}`` instead of ``"config"``).

Rows are grouped by configuration; non-finite returns and failed runs are dropped (so a
configuration that failed before is not known to fail: it may be proposed again, and then
the failure policy deals with it); a configuration needs at least 2 finite returns (its
sample variance), otherwise it is left out.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from erahbo.space import SearchSpace


def warm_records(warm_start: Any, space: SearchSpace) -> list[dict[str, Any]]:
    """Normalize ``warm_start`` to records (see the module docstring); raises ValueError."""
    if isinstance(warm_start, str | Path):
        path = Path(warm_start)
        if not path.exists():
            raise ValueError(f"warm_start: {path} does not exist")
        warm_start = (pd.read_parquet(path) if path.suffix == ".parquet"
                      else pd.read_csv(path))
    if isinstance(warm_start, pd.DataFrame):
        records = _from_frame(warm_start, space)
    else:
        try:
            records = [_check_record(dict(r), space) for r in warm_start]
        except TypeError:
            raise ValueError(
                "warm_start must be a DataFrame of runs (hyperparameter columns + 'return'), "
                "a CSV/Parquet path, or a list of {'config': ..., 'returns': [...]} records"
            ) from None
    return records  # the optimizer pools them and leaves out what cannot be used


def _from_frame(df: pd.DataFrame, space: SearchSpace) -> list[dict[str, Any]]:
    if "return" not in df.columns:
        raise ValueError(
            f"warm_start: no 'return' column (columns: {list(df.columns)}); give one row per "
            "training run with the hyperparameters and its 'return' (a history.csv works)"
        )
    if "status" in df.columns:
        df = df[df["status"].astype(str) == "ok"]
    if space.is_finite:
        if "config_id" not in df.columns:
            raise ValueError(
                "warm_start on a finite candidate table needs a 'config_id' column: the row "
                "index of each run's configuration"
            )
        keys = ["config_id"]
    else:
        missing = [n for n in space.names if n not in df.columns]
        if missing:
            raise ValueError(
                f"warm_start: hyperparameter column(s) {missing} missing (columns: "
                f"{list(df.columns)}); give one column per hyperparameter, NaN where inactive"
            )
        keys = list(space.names)
    records = []
    for _, g in df.groupby(keys, dropna=False, sort=False):
        first = g.iloc[0]
        rec: dict[str, Any] = {
            "returns": [float(v) for v in g["return"]],
            "seeds": ([int(s) for s in g["seed"]] if "seed" in g.columns
                      and g["seed"].notna().all() else None),
        }
        if space.is_finite:
            rec["row"] = int(first["config_id"])
        else:
            rec["config"] = {n: _native(first[n]) for n in space.names
                             if not (isinstance(first[n], float) and math.isnan(first[n]))}
        records.append(_check_record(rec, space))
    return records


def _check_record(rec: dict[str, Any], space: SearchSpace) -> dict[str, Any]:
    returns = [float(v) for v in rec.get("returns", [])]
    seeds = rec.get("seeds")
    if seeds is not None:
        seeds = [int(s) for s in seeds]
        if len(seeds) != len(returns):
            raise ValueError(f"warm_start: {len(seeds)} seeds for {len(returns)} returns")
        if len(set(seeds)) != len(seeds):
            raise ValueError(f"warm_start: repeated seeds {seeds} for one configuration")
    out: dict[str, Any] = {"returns": returns, "seeds": seeds}
    if space.is_finite:
        if "row" not in rec:
            raise ValueError("warm_start on a finite candidate table: give 'row' per record")
        row = int(rec["row"])
        if not 0 <= row < space.n_candidates:
            raise ValueError(f"warm_start: row {row} outside 0..{space.n_candidates - 1}")
        out["row"] = row
    else:
        if not isinstance(rec.get("config"), dict):
            raise ValueError("warm_start: each record needs a 'config' dict")
        try:
            space.encode(rec["config"])
        except (ValueError, KeyError, TypeError) as e:  # names the hyperparameter
            raise ValueError(f"warm_start: {rec['config']}: {e}") from None
        out["config"] = {k: _native(v) for k, v in rec["config"].items()}
    return out


def _native(v: Any) -> Any:
    """Plain JSON types (the records are part of the study settings)."""
    if isinstance(v, np.generic):
        return v.item()
    return v
