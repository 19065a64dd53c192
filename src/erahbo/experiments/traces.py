"""The benchmark's trace format: one Parquet file per (task, method, repetition).

Layout (``docs/benchmark.md``)::

    RESULTS/traces/<task>/<method>/rep-<NNN>.parquet

one row per training run after the initial design, columns :data:`TRACE_COLUMNS`, and a JSON
object of metadata under the file-level key :data:`TRACE_META_KEY`.  Written by the benchmark
(:func:`write_trace`, atomically) and read by the analysis (:func:`read_trace`).
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

import pandas as pd

__all__ = [
    "TRACES_SUBDIR",
    "TRACE_COLUMNS",
    "TRACE_META_KEY",
    "find_trace_files",
    "read_trace",
    "trace_path",
    "write_trace",
]

TRACE_META_KEY = b"erahbo_trace"
TRACES_SUBDIR = "traces"
TRACE_COLUMNS: tuple[str, ...] = (
    "run",
    "round",
    "config_id",
    "seed",
    "k_round",
    "config_mv",
    "incumbent_id",
    "incumbent_mv",
    "simple_regret",
    "cumulative_regret",
    "stop_reason",
)
# Columns the analysis needs; the others are kept when present.
_NEEDED_COLUMNS: tuple[str, ...] = (
    "run",
    "round",
    "config_id",
    "k_round",
    "config_mv",
    "incumbent_mv",
    "simple_regret",
    "cumulative_regret",
)
REP_FILE_RE = re.compile(r"^rep-(\d+)\.parquet$")


def trace_path(out: Path, task: str, method: str, repetition: int) -> Path:
    """``OUT/traces/<task>/<method>/rep-<NNN>.parquet``."""
    return Path(out) / TRACES_SUBDIR / task / method / f"rep-{repetition:03d}.parquet"


def write_trace(trace: pd.DataFrame, meta: dict[str, Any], path: Path) -> None:
    """Write a trace with its metadata atomically (temporary file + rename)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    path.parent.mkdir(parents=True, exist_ok=True)
    table = pa.Table.from_pandas(trace, preserve_index=False)
    table = table.replace_schema_metadata({TRACE_META_KEY: json.dumps(meta).encode()})
    tmp = path.with_name(path.name + f".{os.getpid()}.tmp")
    pq.write_table(table, tmp)
    tmp.replace(path)


def read_trace(path: str | Path) -> tuple[pd.DataFrame, dict[str, Any]]:
    """Read one trace file.

    Parameters
    ----------
    path : str or Path
        A ``rep-NNN.parquet`` file.

    Returns
    -------
    frame : pandas.DataFrame
        The rows, sorted by ``run``.
    meta : dict
        The JSON metadata stored under ``b"erahbo_trace"``.
    """
    import pyarrow.parquet as pq

    path = Path(path)
    try:
        table = pq.ParquetFile(path).read()
    except Exception as exc:  # pyarrow raises several types for unreadable files
        first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise ValueError(f"trace {path}: not a readable Parquet file ({first}); delete it and "
                         "run the same `erahbo benchmark` command again (it writes the "
                         "missing traces only)") from exc
    raw = (table.schema.metadata or {}).get(TRACE_META_KEY)
    if raw is None:
        raise ValueError(f"trace {path}: missing file metadata key 'erahbo_trace'; write "
                         "traces with erahbo.experiments (see the trace contract)")
    try:
        meta = json.loads(raw)
    except json.JSONDecodeError as exc:
        raise ValueError(f"trace {path}: metadata 'erahbo_trace' is not valid JSON") from exc
    frame = table.to_pandas()
    missing = [c for c in _NEEDED_COLUMNS if c not in frame.columns]
    if missing:
        raise ValueError(f"trace {path}: missing column(s) {missing}; a trace needs "
                         f"{list(_NEEDED_COLUMNS)}")
    if not frame["run"].is_monotonic_increasing:
        frame = frame.sort_values("run", kind="stable").reset_index(drop=True)
    return frame, meta


def find_trace_files(results_dir: str | Path) -> list[Path]:
    """All ``traces/<task>/<method>/rep-NNN.parquet`` files under a results directory."""
    root = Path(results_dir)
    if not root.is_dir():
        raise ValueError(f"results_dir {root}: not a directory; pass the --out directory of "
                         "`erahbo benchmark`")
    base = root / TRACES_SUBDIR if (root / TRACES_SUBDIR).is_dir() else root
    files = sorted(p for p in base.glob("*/*/rep-*.parquet") if REP_FILE_RE.match(p.name))
    if not files:
        raise ValueError(f"results_dir {root}: no traces found (expected "
                         f"{TRACES_SUBDIR}/<task>/<method>/rep-<NNN>.parquet); run "
                         "`erahbo benchmark DATA --out RESULTS` first")
    return files
