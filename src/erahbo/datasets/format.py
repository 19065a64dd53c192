"""The on-disk format of a task: one algorithm-environment pair of RL outcomes.

A task is a table of ``N`` configurations x ``S`` training seeds of final returns
(the paper: N = 512 Sobol configurations, S = 50 seeds, each return the mean over
128 deterministic evaluation episodes after training).

Parquet layout (format version 1)
---------------------------------
* one row per configuration;
* ``config_id`` (int64): stable identifier of the configuration inside the task;
* one column per hyperparameter, named as in the search space; an inactive
  conditional hyperparameter is stored as null;
* one column per training seed, named ``seed_<int>`` (for example ``seed_1``), holding
  the final return of that training run (float64, NaN for a failed run);
* file-level metadata under the key ``b"erahbo"``: a JSON object with at least
  ``format_version``, ``task``, ``algorithm``, ``environment``, ``domain``
  (``"cc"``, ``"brax"``, ``"xland"`` or ``"synthetic"``), ``search_space`` (the JSON form
  of :class:`erahbo.SearchSpace`, see ``SearchSpace.to_json``), ``training_budget``,
  ``generator``, ``generator_version``, ``synthetic`` (bool) and ``provenance``
  (free text: how the data was produced). Further keys are kept as they are;
  ``seeds_per_config`` (a list of ``N`` ints) marks a table with adaptive seed counts.

Learning curves (a step column)
-------------------------------
A table with a ``training_steps`` column holds learning curves (:mod:`erahbo.datasets.curves`):
one row per (configuration, checkpoint), ``training_steps`` the checkpoint's nominal training
steps (the same values for every configuration), ``env_steps`` the environment steps the run
had trained by then, ``seed_<int>`` the return evaluated at that checkpoint, ``wall_s_<int>``
the run's wall time in seconds up to it and ``cpu_s_<int>`` its CPU time. Read as a task
(:func:`read_task`), such a table is the returns at one checkpoint: the last one by default,
or ``checkpoint=N`` (a ``training_steps`` value); the task is then named ``<task>@<N>``, as
ARLBench landscape data are.

Adaptive seed counts
--------------------
A table in which configurations were trained on different numbers of seeds (an erahbo
study's ``history.csv``, its Hydra sweeper's ``runhistory.csv``, a Hypersweeper runhistory
with empty cells) is held in the same ``(N, S)`` array, ``S`` the most seeds any
configuration has; ``meta["seeds_per_config"]`` then lists the runs of each configuration,
failed ones included: a row with ``k`` runs and ``m`` finite returns had ``k - m`` failed
runs, its other NaN cells are seeds it was not run on. Without the key every configuration
ran on all ``S`` seeds and a NaN is a failed run. :mod:`erahbo.datasets.seed_counts` reads
and writes the key.

This module is the single place that reads and writes that layout.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

FORMAT_VERSION = 1
META_KEY = b"erahbo"
SEED_PREFIX = "seed_"
CONFIG_ID = "config_id"
_SEED_RE = re.compile(r"^seed_(\d+)$")

STEPS = "training_steps"  # the checkpoint column of a learning-curve table
ENV_STEPS = "env_steps"
WALL_PREFIX = "wall_s_"
CPU_PREFIX = "cpu_s_"
_WALL_RE = re.compile(r"^wall_s_(\d+)$")
_CPU_RE = re.compile(r"^cpu_s_(\d+)$")

REQUIRED_META = ("task", "algorithm", "environment", "domain")
SEEDS_PER_CONFIG = "seeds_per_config"


@dataclass
class TaskData:
    """RL outcomes of one task in memory.

    Attributes
    ----------
    configs : pandas.DataFrame
        ``(N, n_hyperparameters)`` hyperparameter values, one row per configuration,
        indexed ``0..N-1``; inactive conditional values are NaN/None.
    returns : numpy.ndarray
        ``(N, S)`` final returns; NaN marks a failed training run.
    seeds : list of int
        The ``S`` training seeds, the column order of ``returns``.
    config_ids : numpy.ndarray
        ``(N,)`` int64 identifiers of the configurations.
    meta : dict
        Metadata (see the module docstring).
    """

    configs: pd.DataFrame
    returns: np.ndarray
    seeds: list[int]
    config_ids: np.ndarray
    meta: dict[str, Any] = field(default_factory=dict)

    @property
    def name(self) -> str:
        """Task name, e.g. ``"ppo_cc_cartpole"``."""
        return str(self.meta.get("task", "task"))

    @property
    def n_configs(self) -> int:
        """Number of configurations (rows of ``returns``)."""
        return int(self.returns.shape[0])

    @property
    def n_seeds(self) -> int:
        """Number of training seeds per configuration (columns of ``returns``)."""
        return int(self.returns.shape[1])

    def to_frame(self) -> pd.DataFrame:
        """The wide table as stored on disk (without metadata)."""
        df = self.configs.reset_index(drop=True).copy()
        df.insert(0, CONFIG_ID, np.asarray(self.config_ids, dtype=np.int64))
        seed_cols = pd.DataFrame(
            np.asarray(self.returns, dtype=float),
            columns=[f"{SEED_PREFIX}{s}" for s in self.seeds],
        )
        return pd.concat([df, seed_cols], axis=1)


def seed_columns(columns: list[str]) -> list[tuple[str, int]]:
    """The ``(column, seed)`` pairs among ``columns`` that hold per-seed returns."""
    out = []
    for c in columns:
        m = _SEED_RE.match(str(c))
        if m:
            out.append((str(c), int(m.group(1))))
    return out


def write_task(task: TaskData, path: str | Path) -> Path:
    """Write ``task`` as Parquet with its metadata; returns the path written.

    The file is written to a temporary name first and renamed, so a crash never
    leaves a half-written file under ``path``.
    """
    return write_frame(task.to_frame(), task.meta, path)


def write_frame(df: pd.DataFrame, meta: dict[str, Any], path: str | Path,
                compression: str = "snappy", statistics: bool = True) -> Path:
    """Write a table in erahbo's layout with its metadata, atomically (temporary file and
    rename); returns the path written. ``statistics=False`` leaves out the per-column
    statistics (smaller files with many columns and few rows)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    meta = {"format_version": FORMAT_VERSION, **meta}
    table = pa.Table.from_pandas(df, preserve_index=False)
    existing = table.schema.metadata or {}
    table = table.replace_schema_metadata(
        {**existing, META_KEY: json.dumps(meta, default=_json_default).encode()}
    )
    tmp = path.with_name(path.name + ".tmp")
    pq.write_table(table, tmp, compression=compression, write_statistics=statistics)
    tmp.replace(path)
    return path


def read_meta(path: str | Path) -> dict[str, Any]:
    """Only the metadata of an erahbo Parquet file (empty dict if it has none)."""
    import pyarrow.parquet as pq

    md = pq.read_schema(path).metadata or {}
    raw = md.get(META_KEY)
    return json.loads(raw) if raw else {}


def wall_columns(columns: list[str], cpu: bool = False) -> list[tuple[str, int]]:
    """The ``(column, seed)`` pairs among ``columns`` that hold per-seed wall times (``cpu``:
    CPU times)."""
    rx = _CPU_RE if cpu else _WALL_RE
    return [(str(c), int(m.group(1))) for c in columns if (m := rx.match(str(c)))]


def read_frame(path: str | Path) -> tuple[pd.DataFrame, dict[str, Any]]:
    """An erahbo Parquet file as it is stored: its table and its metadata."""
    import pyarrow.parquet as pq

    table = pq.read_table(Path(path))
    raw = (table.schema.metadata or {}).get(META_KEY)
    return table.to_pandas(), (json.loads(raw) if raw else {})


def read_task(path: str | Path, checkpoint: int | None = None) -> TaskData:
    """Read an erahbo Parquet task file written by :func:`write_task` (or a learning-curve
    table: its returns at ``checkpoint`` training steps, by default the last checkpoint)."""
    df, meta = read_frame(path)
    return frame_to_task(df, meta, source=str(path), checkpoint=checkpoint)


def frame_to_task(df: pd.DataFrame, meta: dict[str, Any], source: str = "<frame>",
                  checkpoint: int | None = None) -> TaskData:
    """Split a wide table (hyperparameters + ``seed_<i>`` columns) into a :class:`TaskData`.

    A table with a ``training_steps`` column (learning curves) gives its returns at
    ``checkpoint`` (a ``training_steps`` value; None: the last checkpoint).
    """
    if STEPS in df.columns:
        df, meta = _at_checkpoint(df, meta, source, checkpoint)
    elif checkpoint is not None:
        raise ValueError(
            f"{source}: checkpoint={checkpoint} (--checkpoint) applies to tables with a "
            f"{STEPS!r} column (learning curves, ARLBench landscape data); this table has one "
            "return per run: drop it."
        )
    pairs = seed_columns(list(df.columns))
    if not pairs:
        raise ValueError(
            f"{source}: no per-seed return columns found; expected columns named "
            f"'{SEED_PREFIX}<int>' (e.g. 'seed_1')."
        )
    seed_cols = [c for c, _ in pairs]
    ids = (
        df[CONFIG_ID].to_numpy(dtype=np.int64)
        if CONFIG_ID in df.columns
        else np.arange(len(df), dtype=np.int64)
    )
    hp_cols = [c for c in df.columns if c not in seed_cols and c != CONFIG_ID]
    returns = df[seed_cols].to_numpy(dtype=float)
    meta = dict(meta)
    meta.setdefault("task", Path(source).stem)
    return TaskData(
        configs=df[hp_cols].reset_index(drop=True),
        returns=returns,
        seeds=[s for _, s in pairs],
        config_ids=ids,
        meta=meta,
    )


def _at_checkpoint(df: pd.DataFrame, meta: dict[str, Any], source: str,
                   checkpoint: int | None) -> tuple[pd.DataFrame, dict[str, Any]]:
    """The rows of one checkpoint of a learning-curve table, its step and time columns
    dropped; the metadata names the checkpoint."""
    steps = pd.to_numeric(df[STEPS], errors="coerce").to_numpy(dtype=float)
    if np.isnan(steps).any():
        i = int(np.flatnonzero(np.isnan(steps))[0])
        raise ValueError(f"{source}: row {i}, column {STEPS!r}: {df[STEPS].iloc[i]!r} is not a "
                         "number of training steps; every row is one checkpoint.")
    values = np.unique(steps)
    chosen = float(values[-1]) if checkpoint is None else float(checkpoint)
    if chosen not in values:
        shown = ", ".join(f"{v:g}" for v in values[:20]) + (" ..." if len(values) > 20 else "")
        raise ValueError(
            f"{source}: checkpoint {checkpoint} is not in column {STEPS!r}; the table has "
            f"checkpoints {shown}: pass one of them (--checkpoint N), or none for the last."
        )
    drop = [STEPS, *([ENV_STEPS] if ENV_STEPS in df.columns else []),
            *(c for c, _ in wall_columns(list(df.columns))),
            *(c for c, _ in wall_columns(list(df.columns), cpu=True))]
    rows = df[steps == chosen].drop(columns=drop).reset_index(drop=True)
    at = int(chosen) if chosen.is_integer() else chosen
    meta = {**meta, "checkpoint": at, "checkpoints": [int(v) if v.is_integer() else v
                                                      for v in values]}
    meta["task"] = f"{meta.get('task', Path(source).stem)}@{at}"
    return rows, meta


def _json_default(o: Any) -> Any:
    if isinstance(o, np.generic):
        return o.item()
    if isinstance(o, np.ndarray):
        return o.tolist()
    if isinstance(o, Path):
        return str(o)
    raise TypeError(f"not JSON serializable: {type(o).__name__}")
