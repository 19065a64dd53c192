"""Loaders: read a task from our Parquet, a CSV, a Hypersweeper runhistory, ARLBench's
landscape data, or one row per run (erahbo's history.csv).

Formats (``fmt``; guessed from the file when None)
--------------------------------------------------
``"parquet"``
    Our format (:mod:`erahbo.datasets.format`): hyperparameter columns, ``seed_<int>``
    return columns, metadata under the ``erahbo`` key.
``"csv"`` (wide)
    One row per configuration: hyperparameter columns plus one return column per seed.
    The return columns are either named ``seed_<int>`` (``seed_1, seed_2, ...``) or listed
    with ``return_columns`` (CLI ``--return-columns r1,r2,...``; seed labels are the
    integers ending the names when those are distinct, else 0, 1, ...).
``"runs"`` (``"csv"`` long: the same with a ``config_id``)
    One row per training run (erahbo's ``history.csv``, CSV or Parquet): hyperparameters,
    ``seed``, ``return`` (or ``return_columns=["name"]``), optional ``config_id`` (else equal
    hyperparameters are one configuration) and ``status`` (:mod:`.long_format`).
``"landscape"``
    ARLBench's landscape data (:mod:`.long_format`): the last checkpoint, or ``checkpoint=N``
    (CLI ``--checkpoint N``); the task is named ``<file stem>@<checkpoint>``. A Parquet
    learning-curve table (:mod:`.curves`: a ``training_steps`` column) is read the same way.
``"runhistory"``
    The ARLBench/Hydra (Hypersweeper) ``runhistory.csv``: bookkeeping columns such as
    ``config_id``/``run_id``, ``budget``, hyperparameter columns (a ``hp_config.`` prefix is
    dropped, ``None`` marks an inactive value) and the per-seed returns given by either
    - a ``performance`` column holding the list of per-seed returns as text
      (``"[12.5, 9.0, nan, ...]"``; seeds labelled by position 0, 1, ...),
    - ``performance_<key>_<int>`` columns, ``<key>`` Hypersweeper's ``seed_keyword``
      (``performance_seed_42``; ARLBench's ``performance_autorl.seed_42``; the mean stays in
      ``performance`` and is unused; an empty cell is a seed the configuration was not run
      on) or erahbo's sweeper's
      ``performance_run_<j>`` (run positions; the ``seeds`` list gives each row's runs, an
      empty cell among them is a failed run), or
    - a scalar ``performance`` and a ``seed`` column, one row per run (rows with equal
      hyperparameters are one configuration).
    Returns are taken as they are (higher is better); pass ``negate=True`` for costs.

Configurations may have different numbers of runs (adaptive seed counts): the loaders of
runhistories and of one-row-per-run files record them (:mod:`erahbo.datasets.seed_counts`).

Bookkeeping columns (config id, run id, budget, instance, seed, status, time, cost, run
info, ...) are recognized by name and never used as hyperparameters; ``hp_columns``
overrides the guess. :func:`load_task` returns the raw task (checked by
:func:`~erahbo.datasets.validate.check_task`, NaN kept); :func:`load_tasks` also applies
the NaN policy and skips degenerate tasks.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from erahbo._files import reading_table
from erahbo.datasets import long_format as lf
from erahbo.datasets.format import CONFIG_ID, TaskData, read_task, seed_columns
from erahbo.datasets.seed_counts import record_seed_counts, sweeper_run_counts
from erahbo.datasets.validate import ValidationReport, check_task, require_columns, validate_task
from erahbo.space import SearchSpace

FORMATS = ("parquet", "csv", "runhistory", "landscape", "runs")
TASK_FILE = (
    "a task table: Parquet in erahbo's format, or CSV with one row per configuration and "
    "seed_<int> return columns, one row per run, a runhistory.csv or ARLBench landscape data"
)
PARQUET_SUFFIXES = (".parquet", ".pq")
HP_PREFIX = "hp_config."
LONG_COLUMNS = ("config_id", "seed", "return")

# Column names (lower case) that are bookkeeping, never hyperparameters.
BOOKKEEPING = frozenset(
    """config_id configid config id run_id runid run run_info runinfo info additional_info
    budget budgets instance instance_id instances seed seeds status state time cost costs
    start_time end_time starttime endtime duration walltime wall_time runtime timestamp
    origin iteration iter trial trial_id job_id worker worker_id index performance
    performance_mean return returns reward mean std var n_seeds return_mean return_std
    training_steps checkpoint
    """.split()
)
_BOOKKEEPING_RE = re.compile(r"^(unnamed:.*|performance_.*|seed_\d+)$", re.IGNORECASE)
_TASK_RE = re.compile(r"^(dqn|ppo|sac)_(cc|brax|xland|minigrid|box2d|atari)_(.+)$")
# Hypersweeper's per-seed columns, performance_<seed_keyword>_<seed>: the keyword is any
# config key (its default "seed", ARLBench's "autorl.seed"); erahbo's sweeper: "run"
_PERF_SEED_RE = re.compile(r"^performance_(.+)_(\d+)$")
_NUM_RE = re.compile(r"(\d+)$")


def is_bookkeeping(column: str) -> bool:
    """True when ``column`` names bookkeeping (ids, budget, seed, time, ...)."""
    c = str(column).strip()
    return c.lower() in BOOKKEEPING or bool(_BOOKKEEPING_RE.match(c))


def detect_format(path: str | Path) -> str:
    """Guess the format of ``path`` (one of :data:`FORMATS`) from its name and columns."""
    path = Path(path)
    header = file_columns(path)
    if path.suffix.lower() in PARQUET_SUFFIXES:
        return "runs" if lf.is_runs(header) and not seed_columns(header) else "parquet"
    if lf.is_landscape(header):
        return "landscape"
    if path.name.lower() == "runhistory.csv" or "performance" in header:
        return "runhistory"
    if lf.is_runs(header) and not seed_columns(header):
        return "runs"
    return "csv"


def load_task(
    path: str | Path,
    hp_columns: Sequence[str] | None = None,
    fmt: str | None = None,
    *,
    return_columns: Sequence[str] | None = None,
    negate: bool = False,
    checkpoint: int | None = None,
) -> TaskData:
    """Read one task file.

    Parameters
    ----------
    path : str or Path
        A ``.parquet`` or ``.csv`` file.
    hp_columns : sequence of str, optional
        The hyperparameter columns (overrides the guess; for a runhistory the names with or
        without the ``hp_config.`` prefix).
    fmt : {"parquet", "csv", "runhistory", "landscape", "runs"}, optional
        Format; guessed from the file when None.
    return_columns : sequence of str, optional
        CSV only: the per-seed return columns (wide), or the one value column (long, runs).
    negate : bool
        Multiply the returns by -1 (for files that store costs).
    checkpoint : int, optional
        Landscape files and learning-curve tables only: the ``training_steps`` value to use
        (default: the last).

    Returns
    -------
    TaskData
        Raw task (NaN returns kept), checked by :func:`check_task`.
    """
    path = Path(path)
    if path.is_dir():
        raise ValueError(f"{path} is a directory, not a task file; pass the task files in it "
                         "(expand_paths finds them, as the CLI does).")
    if not path.is_file():
        raise ValueError(f"{path}: no such file.")
    if fmt is not None and fmt not in FORMATS:
        raise ValueError(f"format {fmt!r} is unknown; use one of {list(FORMATS)}.")
    with reading_table(path, "task file", TASK_FILE):  # an empty or binary file: named
        fmt = fmt or detect_format(path)
        if checkpoint is not None and fmt not in ("landscape", "parquet"):
            raise ValueError(
                f"{path}: checkpoint={checkpoint} (--checkpoint) applies to ARLBench landscape "
                f"files and learning-curve tables (a 'training_steps' column); this file is "
                f"read as {fmt!r}: drop it."
            )
        if fmt == "parquet":
            task = _load_parquet(path, hp_columns, checkpoint)
        else:
            df = read_table(path)
            if fmt == "runhistory":
                task = _from_runhistory(df, path, hp_columns)
            elif fmt == "landscape":
                task = _from_landscape(df, path, hp_columns, checkpoint)
            elif fmt == "runs":
                task = _from_runs(df, path, hp_columns, return_columns)
            else:
                task = _from_csv(df, path, hp_columns, return_columns)
    if negate:
        task.returns = -np.asarray(task.returns, dtype=float)
        task.meta["negated"] = True
    check_task(task, source=str(path))
    return task


def scan_tasks(
    paths: str | Path | Iterable[str | Path],
    hp_columns: Sequence[str] | None = None,
    fmt: str | None = None,
    *,
    return_columns: Sequence[str] | None = None,
    filter_infeasible: bool = True,
    checkpoint: int | None = None,
) -> list[tuple[TaskData, ValidationReport]]:
    """Load and validate every task under ``paths`` (degenerate ones included).

    Parameters
    ----------
    paths : path or iterable of paths
        Files, or directories searched (recursively) for ``*.parquet``, ``*.pq`` and
        ``*.csv``.
    hp_columns, fmt, return_columns, checkpoint
        As in :func:`load_task`, for every file.
    filter_infeasible : bool
        Apply the NaN policy (drop configurations with any NaN seed).

    Returns
    -------
    list of (TaskData, ValidationReport)
        In file order.
    """
    out = []
    for f in expand_paths(paths):
        raw = load_task(f, hp_columns, fmt, return_columns=return_columns, checkpoint=checkpoint)
        out.append(validate_task(raw, filter_infeasible=filter_infeasible))
    return out


def load_tasks(
    paths: str | Path | Iterable[str | Path],
    hp_columns: Sequence[str] | None = None,
    fmt: str | None = None,
    *,
    return_columns: Sequence[str] | None = None,
    checkpoint: int | None = None,
) -> list[TaskData]:
    """Load every task under ``paths``: infeasible configurations filtered, degenerate
    tasks skipped (see :func:`scan_tasks` for the reports)."""
    scanned = scan_tasks(paths, hp_columns, fmt, return_columns=return_columns,
                         checkpoint=checkpoint)
    return [t for t, rep in scanned if not rep.degenerate]


def expand_paths(paths: str | Path | Iterable[str | Path]) -> list[Path]:
    """Files named in ``paths``, directories expanded to their task files (sorted).

    Directories are searched recursively, except the shard folders of ``erahbo dataset
    generate`` (a folder with ``plan.json``): their shards are parts of one task, which
    ``erahbo dataset merge-shards`` turns into a task file.
    """
    if isinstance(paths, (str, Path)):
        paths = [paths]
    files: list[Path] = []
    for p in map(Path, paths):
        if p.is_dir():
            if (p / "plan.json").is_file():
                raise ValueError(
                    f"{p} holds generation shards (plan.json), parts of one task: merge them "
                    "with `erahbo dataset merge-shards` and pass the merged file."
                )
            found = sorted(
                f
                for f in p.rglob("*")
                if f.is_file() and f.suffix.lower() in (*PARQUET_SUFFIXES, ".csv")
                and not (f.parent / "plan.json").is_file()
            )
            if not found:
                raise ValueError(f"{p}: directory holds no .parquet or .csv task files.")
            files.extend(found)
        elif p.is_file():
            files.append(p)
        else:
            raise ValueError(f"{p}: no such file or directory.")
    return files


def bundled_tasks() -> list[Path]:
    """Paths of the bundled synthetic suite (``erahbo/data/synthetic/*.parquet``)."""
    root = resources.files("erahbo") / "data" / "synthetic"
    if not root.is_dir():
        raise ValueError(f"bundled synthetic suite not found at {root}; reinstall erahbo.")
    return sorted(Path(str(p)) for p in root.iterdir() if p.name.endswith(".parquet"))


def infer_space_json(configs: pd.DataFrame) -> dict[str, Any] | None:
    """The JSON search space (:meth:`erahbo.SearchSpace.to_json`) inferred from a candidate
    table by :meth:`erahbo.SearchSpace.from_table`; None when it cannot be inferred. A guess:
    the real bounds belong in the file's metadata."""
    try:
        return SearchSpace.from_table(configs, allow_missing=True).to_json()
    except (ValueError, TypeError):
        return None


# -- format readers -----------------------------------------------------------------


def _load_parquet(path: Path, hp_columns: Sequence[str] | None,
                  checkpoint: int | None = None) -> TaskData:
    task = read_task(path, checkpoint)
    if hp_columns:
        require_columns(task.configs.columns, hp_columns, str(path), "hyperparameter")
        task.configs = task.configs[list(hp_columns)]
    task.meta.setdefault("source", str(path))
    return task


def _from_csv(
    df: pd.DataFrame,
    path: Path,
    hp_columns: Sequence[str] | None,
    return_columns: Sequence[str] | None,
) -> TaskData:
    cols = list(df.columns)
    long = return_columns is not None and len(return_columns) == 1 and "seed" in cols
    if return_columns is None and not seed_columns(cols):
        long = all(c in cols for c in LONG_COLUMNS)
        if not long:
            sep = next((c for c in ";\t|" if len(cols) == 1 and c in str(cols[0])), None)
            raise ValueError(
                f"{path}: cannot tell which columns hold the per-seed returns; name them "
                f"'seed_<int>' (seed_1, seed_2, ...), pass return_columns / --return-columns, "
                f"or use the long layout with columns {list(LONG_COLUMNS)}. Columns: {cols}"
                + (f" (one column: the file separates its fields with {sep!r}; save it "
                   "comma-separated)." if sep else ".")
            )
    if long:
        value = return_columns[0] if return_columns else "return"
        return _from_long(df, path, hp_columns, value, group_by=CONFIG_ID)
    if return_columns is None:
        pairs = seed_columns(cols)
    else:
        require_columns(cols, return_columns, str(path), "return")
        pairs = list(zip(return_columns, _seed_labels(return_columns), strict=True))
    ret_cols = [c for c, _ in pairs]
    hps = _hp_columns(cols, hp_columns, exclude=ret_cols, source=path)
    returns = _numeric(df[ret_cols], path)
    return _make_task(df, hps, returns, [s for _, s in pairs], path, "csv")


def _from_runhistory(df: pd.DataFrame, path: Path, hp_columns: Sequence[str] | None) -> TaskData:
    df, hp_columns = _strip_prefix(df, hp_columns)
    cols = list(df.columns)
    matched = [(c, m.group(1), int(m.group(2))) for c in cols if (m := _PERF_SEED_RE.match(c))]
    keys = sorted({k for _, k, _ in matched})
    if len(keys) > 1:
        raise ValueError(
            f"{path}: per-seed columns 'performance_<key>_<seed>' with {len(keys)} different "
            f"keys {keys}; a runhistory has one seed keyword: keep the columns of one of them"
        )
    per_seed = [(c, sd) for c, _, sd in matched]
    if per_seed:
        ret_cols = [c for c, _ in per_seed]
        hps = _hp_columns(cols, hp_columns, exclude=ret_cols, source=path)
        returns = _numeric(df[ret_cols], path)  # (n, S)
        task = _make_task(df, hps, returns, [s for _, s in per_seed], path, "runhistory")
        if all(c.startswith("performance_run_") for c in ret_cols):  # erahbo's sweeper
            task.meta["seed_labels"] = "run positions (the 'seeds' column lists the seeds)"
            record_seed_counts(task, sweeper_run_counts(df, returns, path))
        else:  # Hypersweeper: an empty cell is a seed the configuration was not run on
            record_seed_counts(task, (~np.isnan(returns)).sum(axis=1))
        return task
    require_columns(cols, ["performance"], str(path), "performance")
    perf = df["performance"]
    if pd.api.types.is_numeric_dtype(perf):
        if "seed" not in cols:
            raise ValueError(
                f"{path}: 'performance' holds one number per row and there is no 'seed' "
                f"column, so each configuration has 1 seed; at least 2 are needed (store the "
                f"per-seed returns as a list in 'performance', or one row per seed with 'seed')."
            )
        return _from_long(df, path, hp_columns, "performance", group_by=None, fmt="runhistory")
    parsed = {i: _parse_list(v, i, path) for i, v in enumerate(perf) if not _missing(v)}
    if not parsed:
        raise ValueError(f"{path}: the 'performance' column is empty.")
    first, n_seeds = next(iter(parsed.items()))[0], len(next(iter(parsed.values())))
    for i, v in parsed.items():
        if len(v) != n_seeds:
            raise ValueError(
                f"{path}: 'performance' lists have different lengths ({n_seeds} in row {first}, "
                f"{len(v)} in row {i}); every configuration needs the same seeds."
            )
    returns = np.full((len(df), n_seeds), np.nan)  # (n, S); an empty cell = all runs failed
    for i, v in parsed.items():
        returns[i] = v
    hps = _hp_columns(cols, hp_columns, exclude=[], source=path)
    task = _make_task(df, hps, returns, list(range(returns.shape[1])), path, "runhistory")
    task.meta["seed_labels"] = "positions in the 'performance' list"
    return task


def _from_landscape(
    df: pd.DataFrame, path: Path, hp_columns: Sequence[str] | None, checkpoint: int | None
) -> TaskData:
    df, hp_columns = _strip_prefix(df, hp_columns)
    rows = lf.select_checkpoint(df, path, checkpoint)
    group = CONFIG_ID if CONFIG_ID in rows.columns else None
    task = _from_long(rows, path, hp_columns, "performance", group_by=group, fmt="landscape")
    task.meta["checkpoint"] = task.meta["training_budget"] = rows.attrs["checkpoint"]
    task.meta["task"] = f"{task.meta['task']}@{rows.attrs['checkpoint']}"  # one task each
    return task


def _from_runs(df: pd.DataFrame, path: Path, hp_columns: Sequence[str] | None,
               return_columns: Sequence[str] | None) -> TaskData:
    value = return_columns[0] if return_columns else "return"
    require_columns(df.columns, ["seed", value], str(path), "run")
    df = lf.apply_status(df, path, value)
    exclude = lf.HISTORY_BOOKKEEPING if lf.is_history(list(df.columns)) else ()
    group = CONFIG_ID if CONFIG_ID in df.columns else None
    return _from_long(df, path, hp_columns, value, group_by=group, fmt="runs", exclude=exclude)


def _strip_prefix(
    df: pd.DataFrame, hp_columns: Sequence[str] | None
) -> tuple[pd.DataFrame, list[str] | None]:
    """Drop ARLBench's ``hp_config.`` prefix from the columns and from ``hp_columns``."""
    def strip(c: str) -> str:
        return c[len(HP_PREFIX):] if c.startswith(HP_PREFIX) else c

    return df.rename(columns=strip), [strip(c) for c in hp_columns] if hp_columns else None


def file_columns(path: str | Path) -> list[str]:
    """The column names of a ``.csv`` or Parquet file (its header only)."""
    path = Path(path)
    if path.suffix.lower() in PARQUET_SUFFIXES:
        import pyarrow.parquet as pq

        return list(pq.read_schema(path).names)
    if path.suffix.lower() != ".csv":
        raise ValueError(
            f"{path}: unknown file type {path.suffix!r}; expected .parquet or .csv "
            f"(or pass fmt / --format)."
        )
    return [str(c).strip() for c in pd.read_csv(path, nrows=0).columns]


def read_table(path: str | Path) -> pd.DataFrame:
    """A ``.csv`` (column names stripped) or Parquet file as it is."""
    path = Path(path)
    if path.suffix.lower() in PARQUET_SUFFIXES:
        return pd.read_parquet(path)
    df = pd.read_csv(path, skipinitialspace=True)
    df.columns = [str(c).strip() for c in df.columns]
    return df


def _from_long(
    df: pd.DataFrame,
    path: Path,
    hp_columns: Sequence[str] | None,
    value: str,
    group_by: str | None,
    fmt: str = "csv",
    exclude: Sequence[str] = (),
) -> TaskData:
    need = ["seed", value] + ([group_by] if group_by else [])
    require_columns(df.columns, need, str(path), "long-format")
    hps = _hp_columns(list(df.columns), hp_columns, exclude=[value, *exclude], source=path)
    if df["seed"].isna().any():
        i = df.index[int(np.flatnonzero(df["seed"].isna().to_numpy())[0])]
        raise ValueError(f"{path}: row {i}, column 'seed' is empty; every run needs its seed.")
    vals = _numeric(df[[value]], path)[:, 0]
    if group_by:
        key = df[group_by]
        per_cfg = df[[group_by, *hps]].drop_duplicates()
        if per_cfg[group_by].duplicated().any():
            bad = per_cfg[group_by][per_cfg[group_by].duplicated()].iloc[0]
            rows = df.loc[df[group_by] == bad, hps].astype(str)
            i = rows.index[int(np.flatnonzero((rows != rows.iloc[0]).any(axis=1).to_numpy())[0])]
            col = next(c for c in hps if rows.at[i, c] != rows.iloc[0][c])
            raise ValueError(
                f"{path}: {group_by} {bad} has different hyperparameter values on different "
                f"rows: column {col!r} is {_py(df.at[i, col])!r} in row {i} but "
                f"{_py(df.at[rows.index[0], col])!r} in row {rows.index[0]}; each configuration "
                f"needs one set of values (fix it, or give those runs their own {group_by}).")
    else:  # rows with equal hyperparameters form one configuration
        key = pd.Series(df[hps].astype(str).agg("\x1f".join, axis=1).factorize()[0])
    seeds = sorted(pd.unique(df["seed"]))
    key_codes, key_uniques = pd.factorize(key)
    seed_pos = {s: j for j, s in enumerate(seeds)}
    returns = np.full((len(key_uniques), len(seeds)), np.nan)  # (n, S)
    pair = pd.Series(list(zip(key_codes, df["seed"], strict=True)))
    if pair.duplicated().any():
        i = df.index[int(np.flatnonzero(pair.duplicated().to_numpy())[0])]
        raise ValueError(
            f"{path}: row {i} repeats a (configuration, seed) pair (column 'seed': "
            f"{df.at[i, 'seed']!r}); keep one row per run."
        )
    returns[key_codes, [seed_pos[s] for s in df["seed"]]] = vals
    first = pd.Series(np.arange(len(df))).groupby(key_codes).first().to_numpy()
    rows = df.iloc[first].reset_index(drop=True)
    labels = [int(s) for s in seeds] if all(_is_int(s) for s in seeds) else list(range(len(seeds)))
    task = _make_task(rows, hps, returns, labels, path, fmt)
    if group_by is None:
        task.config_ids = np.arange(task.n_configs, dtype=np.int64)
    task.meta["n_missing_runs"] = int(np.isnan(returns).sum() - np.isnan(vals).sum())
    if fmt != "landscape":  # a landscape run without the checkpoint failed before it
        record_seed_counts(task, np.bincount(key_codes, minlength=len(key_uniques)))
    return task


def _make_task(
    df: pd.DataFrame, hps: list[str], returns: np.ndarray, seeds: list[int], path: Path, fmt: str
) -> TaskData:
    configs = df[hps].reset_index(drop=True).replace({"None": np.nan})
    ids = (
        df[CONFIG_ID].to_numpy(dtype=np.int64)
        if CONFIG_ID in df.columns and df[CONFIG_ID].is_unique
        else np.arange(len(df), dtype=np.int64)
    )
    meta = _meta_from_path(path, fmt)
    meta["search_space"] = infer_space_json(configs)
    meta["search_space_inferred"] = True
    if "budget" in df.columns and df["budget"].nunique(dropna=True) == 1:
        meta["training_budget"] = _py(df["budget"].dropna().iloc[0])
    return TaskData(configs=configs, returns=returns, seeds=list(seeds), config_ids=ids, meta=meta)


def _meta_from_path(path: Path, fmt: str) -> dict[str, Any]:
    name = path.parent.name if path.stem.lower() == "runhistory" and path.parent.name else path.stem
    m = _TASK_RE.match(name.lower())
    return {
        "task": name,
        "algorithm": m.group(1) if m else "unknown",
        "environment": m.group(3) if m else "unknown",
        "domain": ("xland" if m.group(2) == "minigrid" else m.group(2)) if m else "unknown",
        "synthetic": False,
        "source": str(path),
        "source_format": fmt,
        "generator": "erahbo.datasets.loaders",
        "provenance": f"loaded from {path.name} ({fmt} layout)",
    }


def _hp_columns(
    cols: list[str], hp_columns: Sequence[str] | None, exclude: Sequence[str], source: Path
) -> list[str]:
    if hp_columns:
        require_columns(cols, hp_columns, str(source), "hyperparameter")
        return list(hp_columns)
    return [c for c in cols if c not in exclude and not is_bookkeeping(c)]


def _numeric(frame: pd.DataFrame, source: Path) -> np.ndarray:
    out = frame.apply(pd.to_numeric, errors="coerce")
    bad = out.isna() & frame.notna() & ~frame.astype(str).isin(["None", "nan", "NaN", ""])
    if bad.to_numpy().any():
        r, c = (int(a[0]) for a in np.nonzero(bad.to_numpy()))
        raise ValueError(
            f"{source}: non-numeric return {frame.iat[r, c]!r} in column "
            f"{frame.columns[c]!r}, row {frame.index[r]}; returns must be numbers "
            f"(empty or NaN for a failed run)."
        )
    return out.to_numpy(dtype=float)


def _parse_list(text: Any, row: int, source: Path) -> list[float]:
    if isinstance(text, (list, tuple, np.ndarray)):
        items = list(text)
    else:
        s = str(text).strip()
        if not (s[:1] in "[(" and s[-1:] in "])"):
            raise ValueError(
                f"{source}: row {row}: 'performance' is {s!r}, not a list of per-seed returns "
                f"like '[1.0, 2.5, nan]'."
            )
        items = [t for t in re.split(r"[,\s]+", s[1:-1].strip()) if t]
    try:
        return [np.nan if str(t) in ("None", "null") else float(t) for t in items]
    except ValueError:
        raise ValueError(
            f"{source}: row {row}: non-numeric value in 'performance' {text!r}; "
            f"returns must be numbers (nan for a failed run)."
        ) from None


def _seed_labels(names: Sequence[str]) -> list[int]:
    nums = [_NUM_RE.search(str(n)) for n in names]
    labels = [int(m.group(1)) for m in nums if m]
    if len(labels) == len(names) and len(set(labels)) == len(labels):
        return labels
    return list(range(len(names)))


def _missing(v: Any) -> bool:
    return v is None or (isinstance(v, float) and np.isnan(v))


def _is_int(v: Any) -> bool:
    try:
        return float(v) == int(float(v))
    except (TypeError, ValueError):
        return False


def _py(v: Any) -> Any:
    return v.item() if isinstance(v, np.generic) else v


__all__ = [
    "FORMATS",
    "bundled_tasks",
    "detect_format",
    "expand_paths",
    "file_columns",
    "infer_space_json",
    "is_bookkeeping",
    "load_task",
    "load_tasks",
    "read_table",
    "scan_tasks",
]
