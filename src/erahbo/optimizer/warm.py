"""Warm start: training runs done before the study, as JSON-friendly records.

``Optimizer(..., warm_start=...)`` takes earlier runs (a ``history.csv`` of an earlier study,
runs from manual tuning) and adds them to the data ``D_0`` before the first round: they shape
the models, ``B_t`` and the recommendation like any other data, but they are not counted in
the budget and their seeds are never handed out again for the same configuration. Each
record enters as a told trial's runs do (:func:`erahbo.optimizer.ingest.add_runs`, the step a
tell and a journal's replay share), as a round of phase ``"warm"``.

Seeds not given show as -1, -2, ... in the history. Two input forms, normalized to the second
(stored in the study settings, so a journaled study replays with the same warm start):

* a :class:`pandas.DataFrame` with one row per run: a column per hyperparameter (NaN where
  inactive), ``return``, optionally ``seed`` and ``status``; on a finite candidate table,
  ``config_id`` (the row index) instead of the hyperparameter columns; or a path to a file in
  any layout :func:`erahbo.datasets.run_rows.read_runs` reads (a ``history.csv``, a
  Hypersweeper ``runhistory.csv``, ARLBench landscape data at its last checkpoint, a wide
  CSV, a task Parquet). Hyperparameter columns match the space's names with or without the
  ``hp_config.`` prefix;
* a list of records ``{"config": {...}, "returns": [...], "seeds": [...] or None}`` (finite
  table: ``{"row": i, ...}`` instead of ``"config"``); a failed run's return is ``None``.

Failed runs are kept as failures (return ``None``): rows with status ``penalized`` or
``failed`` (the final failures of an earlier study; their value is a penalty, not a return) and
rows whose return is not finite. Rows with status ``retried`` (replaced by a retry, which has its
own row), ``running`` or ``interrupted`` are dropped. The optimizer then treats a warm failure
with its own ``failures`` policy: ``"exclude"`` marks the configuration infeasible (never
proposed again), otherwise the run counts at the penalty (the lower quartile of the warm
returns, at most the lowest value of its configuration: :func:`erahbo.optimizer.failure.
penalty_value`) in its configuration's statistics, as after a failure in the study itself. Rows are
grouped by configuration; a configuration needs at least 2 runs (its sample variance; 1 with
``k_init = 1`` or ``k_min = 1``, :mod:`erahbo.gp.one_seed`), otherwise it is left out.
"""

from __future__ import annotations

import math
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from erahbo._files import read_table_file
from erahbo.datasets.loaders import HP_PREFIX
from erahbo.datasets.long_format import STATUS_DROP, STATUS_FAILED, STATUS_OK
from erahbo.datasets.run_rows import read_runs
from erahbo.optimizer.failure import FailurePolicy, Penalizer, at_most_own
from erahbo.optimizer.ingest import add_runs
from erahbo.optimizer.outcomes import RunOutcome
from erahbo.optimizer.records import HISTORY_COLUMNS, History
from erahbo.optimizer.state import StudyState
from erahbo.space import SearchSpace

__all__ = ["add_warm_start", "read_warm_file", "start_warm", "warm_records"]

# rows kept: finished runs and final failures of an earlier study (erahbo.optimizer.failure);
# STATUS_DROP rows were replaced by a retry, or cut by a crash
_KEEP = (*STATUS_OK, *STATUS_FAILED)


def read_warm_file(path: str | Path, checkpoint: int | None = None,
                   label: str = "warm_start") -> pd.DataFrame:
    """Runs of a warm-start file in any layout (:func:`erahbo.datasets.run_rows.read_runs`),
    read once; raises ValueError naming the file (missing, empty, binary, not a table) or,
    prefixed with ``label``, what is missing in it."""
    path = Path(path)
    try:
        return read_runs(path, checkpoint=checkpoint)
    except Exception as e:  # any failure: explained below
        read_table_file(path, "warm-start file", "a table of earlier runs: the hyperparameters "
                        "and 'return' per run (an erahbo history.csv works)")
        if not isinstance(e, ValueError):
            raise
        raise ValueError(f"{label}: {e}") from None


def warm_records(warm_start: Any, space: SearchSpace) -> list[dict[str, Any]]:
    """Normalize ``warm_start`` to records (see the module docstring); raises ValueError."""
    if isinstance(warm_start, str | Path):
        warm_start = read_warm_file(warm_start)
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
    try:
        returns = pd.to_numeric(df["return"]).astype(float)
    except (TypeError, ValueError) as e:
        raise ValueError(
            f"warm_start: the 'return' column must hold numbers (NaN or empty for a failed "
            f"run): {e}"
        ) from None
    if "status" in df.columns:
        status = df["status"].astype(str)
        unknown = sorted(set(status) - set(_KEEP) - set(STATUS_DROP))
        if unknown:
            raise ValueError(
                f"warm_start: unknown status {unknown} in the 'status' column; use 'ok' for a "
                f"finished run, {STATUS_FAILED} for a failed one (or drop the column)"
            )
        returns = returns.where(status == "ok")  # a failure's value is a penalty: not a return
        df = df.assign(**{"return": returns})[status.isin(_KEEP).to_numpy()]
    else:
        df = df.assign(**{"return": returns})
    if not space.is_finite:
        df = _match_prefix(df, space.names)  # first: a prefixed column is a hyperparameter
    extra = [c for c in df.columns if c not in HISTORY_COLUMNS and c not in space.names]
    if extra:
        warnings.warn(
            f"warm_start: column(s) {extra} are neither hyperparameters of the space "
            f"({space.names}) nor run columns (return, seed, status, config_id, ...): ignored. "
            "Rename them if they are hyperparameters, or drop them to silence this warning",
            UserWarning,
            stacklevel=4,
        )
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
            "returns": [_value(v) for v in g["return"]],
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


def _match_prefix(df: pd.DataFrame, names: list[str]) -> pd.DataFrame:
    """Rename ``hp_config.<name>`` <-> ``<name>`` columns to the space's names (ARLBench)."""
    ren = {}
    for n in names:
        if n in df.columns:
            continue
        alt = n[len(HP_PREFIX):] if n.startswith(HP_PREFIX) else HP_PREFIX + n
        if alt in df.columns:
            ren[alt] = n
    return df.rename(columns=ren) if ren else df


def _check_record(rec: dict[str, Any], space: SearchSpace) -> dict[str, Any]:
    try:
        returns = [_value(v) for v in rec.get("returns", [])]
    except (TypeError, ValueError):
        raise ValueError(
            f"warm_start: returns {rec.get('returns')!r} must be numbers (None or NaN for a "
            "failed run)"
        ) from None
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


def _value(v: Any) -> float | None:
    """A run's return; None for a failed run (NaN is not JSON and never compares equal)."""
    if v is None:
        return None
    v = float(v)
    return v if math.isfinite(v) else None


def _native(v: Any) -> Any:
    """Plain JSON types (the records are part of the study settings)."""
    if isinstance(v, np.generic):
        return v.item()
    return v


_WARM_FAILED = "failed before the study (warm start)"


def add_warm_start(
    records: list[dict[str, Any]],
    state: StudyState,
    history: History,
    *,
    exclude: bool,
    penalizer: Penalizer,
    n_rounds: int,
) -> tuple[int, list[float]]:
    """Add the warm-start runs to the data, the history and the rounds (not the budget).

    A failed warm run (return None) follows the study's failure policy: ``exclude`` marks its
    configuration infeasible; otherwise it counts at the penalty in its configuration's
    statistics: the lower quartile of the warm returns, at most the configuration's lowest
    value (so it never raises its mean).

    Parameters
    ----------
    records : list of dict
        From :func:`warm_records`.
    state : StudyState
    history : History
    exclude : bool
        The study's failure policy is ``"exclude"``.
    penalizer : Penalizer
        Observes the finite warm returns (penalties of later failures are set below them).
    n_rounds : int
        Rounds so far (each warm configuration is a round of phase ``"warm"``).

    Returns
    -------
    n_rounds : int
        Rounds after the warm start.
    finite : list of float
        The finite warm returns.
    """
    finite = [v for rec in records for v in rec["returns"] if v is not None]
    penalty = Penalizer(finite).penalty()  # Q1 of the warm returns; at most each record's own
    excluded: dict[bytes, int] = {}  # encodings of warm configurations made infeasible
    d = state.data
    for rec in records:
        key = None
        if state.space.is_finite:
            cid = int(rec["row"])
            u = np.asarray(state.candidates[cid], dtype=float)
        else:
            u = np.asarray(state.space.encode(rec["config"]), dtype=float)
            key = u.tobytes()  # excluded: not in the data
            cid = excluded[key] if key in excluded else state.new_id(u)
        runs = _new_runs(rec, state.warm_seeds.get(cid, set()))
        failed = sum(v is None for _, v in runs)
        infeasible = cid in state.infeasible or (exclude and failed > 0)
        if not infeasible and (not runs or (d.row_of(cid) is None
                                            and len(runs) < d.min_returns)):
            continue  # (a new configuration needs 2 returns, its sample variance; or 1)
        n_rounds += 1
        head = (n_rounds, "warm", cid, state.config(cid, u))
        if infeasible:
            if key is not None:
                excluded[key] = cid
            vals = [math.nan if v is None else v for _, v in runs]
        else:
            row = d.row_of(cid)
            own = at_most_own(penalty, [*(v for _, v in runs if v is not None),
                                        *(() if row is None else d.returns[row])])
            vals = [own if v is None else v for _, v in runs]
            state.warm_seeds[cid] = state.warm_seeds.get(cid, set()) | {sd for sd, _ in runs}
            penalizer.observe(v for _, v in runs if v is not None)
        outcomes = [_warm_run(j, sd, v, y, infeasible, history.t_start)
                    for j, ((sd, v), y) in enumerate(zip(runs, vals, strict=True))]
        row, kept = add_runs(state, history, head, u, vals, [sd for sd, _ in runs], outcomes,
                             infeasible=infeasible, in_budget=False)  # as a tell's runs
        history.add_round(d, n_rounds, "warm", cid, 0 if infeasible else len(kept), row, None,
                          np.nan, np.nan, np.nan, "infeasible" if infeasible else "warm")
    return n_rounds, finite


def start_warm(
    warm_start: Any,
    state: StudyState,
    history: History,
    failures: FailurePolicy | None,
    penalizer: Penalizer,
    *,
    has_design: bool,
) -> tuple[list[dict[str, Any]], int, list[float]]:
    """Read a warm start (:func:`warm_records`) and add it before the first round
    (:func:`add_warm_start`; the optimizer's one step before the initial design).

    Returns the records (part of the study settings), the rounds they took and the finite
    warm returns; raises when they leave no data and there is no initial design.
    """
    records = warm_records(warm_start, state.space)
    exclude = failures is not None and failures.mode == "exclude"
    n_rounds, finite = add_warm_start(records, state, history, exclude=exclude,
                                      penalizer=penalizer, n_rounds=0)
    if state.data.n == 0 and not has_design:
        raise ValueError(
            f"warm_start holds no configuration with at least {state.data.min_returns} "
            f"usable run{'s' if state.data.min_returns > 1 else ''}, and "
            "n_init=0 leaves no initial design: give more runs or n_init >= 1"
        )
    return records, n_rounds, finite


def _warm_run(slot: int, seed: int, raw: float | None, value: float, infeasible: bool,
              t0: float) -> RunOutcome:
    """A warm run as a told run (ended at ``t0``, the study's start: wall time 0); a failed one
    counts at the penalty, or is ``failed`` for an infeasible configuration."""
    if raw is not None:
        return RunOutcome(slot, seed, 0, "ok", raw, value, None, t0, t0, None)
    return RunOutcome(slot, seed, 0, "failed" if infeasible else "penalized", math.nan,
                      math.nan if infeasible else value, _WARM_FAILED, t0, t0, None)


def _new_runs(rec: dict[str, Any], known: set[int]) -> list[tuple[int, float | None]]:
    """``(seed, return or None)`` of a record's runs not seen before (unknown seeds: -1, ...)."""
    runs: list[tuple[int, float | None]] = []
    for sd, v in zip(rec["seeds"] or [None] * len(rec["returns"]), rec["returns"], strict=True):
        if sd is None:  # unknown seed: a negative placeholder, distinct per config
            sd = -1 - len(known) - len(runs)
        if sd in known or any(sd == s for s, _ in runs):
            continue  # the same run twice
        runs.append((int(sd), v))
    return runs
