"""Learning-curve tables: the return of every run at every checkpoint, and its wall time.

On disk (:mod:`erahbo.datasets.format`, "Learning curves"): erahbo's wide layout plus a step
column, one row per (configuration, checkpoint)::

    config_id, <hyperparameters>, training_steps, env_steps, seed_1..seed_S, wall_s_1..wall_s_S,
    cpu_s_1..cpu_s_S

``training_steps`` is the checkpoint's nominal step count (``budget * c / C`` for checkpoint
``c`` of ``C``: the same for every configuration), ``env_steps`` the environment steps the
configuration's runs had trained by then (ARLBench rounds each segment up to whole update
steps, so it depends on the configuration), ``seed_<s>`` the mean evaluation return of seed
``s``'s run at that checkpoint (NaN: non-finite or not reached), ``wall_s_<s>`` that run's
wall time in seconds from its start to the end of that checkpoint's evaluation (compilation
excluded; NaN unknown) and ``cpu_s_<s>`` the same in CPU seconds of the process that trained
it (optional): the cost of the run, which the wall time overstates when other processes
share the core. Read as a task, the table is its returns at one checkpoint
(:func:`erahbo.datasets.format.read_task`, the loaders' ``checkpoint``).

:func:`curve_summary` gives the per-checkpoint statistics ``erahbo dataset inspect`` prints;
:func:`plot_curves` draws them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from erahbo.datasets.format import (
    CONFIG_ID,
    CPU_PREFIX,
    ENV_STEPS,
    META_KEY,
    SEED_PREFIX,
    STEPS,
    WALL_PREFIX,
    TaskData,
    frame_to_task,
    read_frame,
    seed_columns,
    wall_columns,
    write_frame,
)

__all__ = [
    "CURVE_QUANTILES",
    "CurveTable",
    "curve_summary",
    "frame_to_curves",
    "is_curve_file",
    "plot_curves",
    "read_curves",
    "write_curves",
]

CURVE_QUANTILES = (0.05, 0.25, 0.5, 0.75, 0.95)


@dataclass
class CurveTable:
    """Learning curves of ``N`` configurations x ``S`` seeds at ``C`` checkpoints.

    Attributes
    ----------
    configs : pandas.DataFrame
        ``(N, d)`` hyperparameter values (inactive conditional values NaN/None).
    returns : numpy.ndarray
        ``(N, S, C)`` mean evaluation return of each run at each checkpoint (NaN: failed).
    wall_s : numpy.ndarray
        ``(N, S, C)`` wall time of each run up to each checkpoint, seconds (NaN: unknown).
    steps : numpy.ndarray
        ``(C,)`` nominal training steps of the checkpoints, increasing.
    env_steps : numpy.ndarray
        ``(N, C)`` environment steps trained by each checkpoint (-1: unknown).
    seeds : list of int
        The ``S`` seeds.
    config_ids : numpy.ndarray
        ``(N,)`` int64 identifiers.
    meta : dict
        Metadata (as a task's, plus ``n_eval_steps`` and ``checkpoints``).
    cpu_s : numpy.ndarray, optional
        ``(N, S, C)`` CPU time of each run up to each checkpoint, seconds (NaN: unknown).
    """

    configs: pd.DataFrame
    returns: np.ndarray
    wall_s: np.ndarray
    steps: np.ndarray
    env_steps: np.ndarray
    seeds: list[int]
    config_ids: np.ndarray
    meta: dict[str, Any] = field(default_factory=dict)
    cpu_s: np.ndarray | None = None

    @property
    def name(self) -> str:
        """Task name (without a checkpoint)."""
        return str(self.meta.get("task", "task"))

    @property
    def n_checkpoints(self) -> int:
        """Number of checkpoints ``C``."""
        return int(self.steps.size)

    def at(self, checkpoint: int | None = None) -> TaskData:
        """The task at ``checkpoint`` training steps (None: the last), named ``<task>@<N>``."""
        return frame_to_task(self.to_frame(), self.meta, source=self.name,
                             checkpoint=checkpoint)

    def to_frame(self) -> pd.DataFrame:
        """The table as stored: one row per (configuration, checkpoint)."""
        n, s, c = self.returns.shape
        if self.wall_s.shape != (n, s, c) or self.env_steps.shape != (n, c):
            raise ValueError(f"curve table {self.name}: returns {self.returns.shape}, wall_s "
                             f"{self.wall_s.shape}, env_steps {self.env_steps.shape} disagree")
        hp = self.configs.reset_index(drop=True).loc[np.repeat(np.arange(n), c)]
        df = hp.reset_index(drop=True)
        df.insert(0, CONFIG_ID, np.repeat(np.asarray(self.config_ids, dtype=np.int64), c))
        df[STEPS] = np.tile(np.asarray(self.steps, dtype=np.int64), n)
        df[ENV_STEPS] = np.asarray(self.env_steps, dtype=np.int64).reshape(-1)
        ret = np.asarray(self.returns, dtype=float).transpose(0, 2, 1).reshape(n * c, s)
        wall = np.asarray(self.wall_s, dtype=float).transpose(0, 2, 1).reshape(n * c, s)
        cols = {f"{SEED_PREFIX}{sd}": ret[:, j] for j, sd in enumerate(self.seeds)}
        cols |= {f"{WALL_PREFIX}{sd}": wall[:, j] for j, sd in enumerate(self.seeds)}
        if self.cpu_s is not None:
            cpu = np.asarray(self.cpu_s, dtype=float).transpose(0, 2, 1).reshape(n * c, s)
            cols |= {f"{CPU_PREFIX}{sd}": cpu[:, j] for j, sd in enumerate(self.seeds)}
        return pd.concat([df, pd.DataFrame(cols)], axis=1)


def write_curves(table: CurveTable, path: str | Path) -> Path:
    """Write ``table`` as compressed (zstd) Parquet, atomically; returns the path."""
    meta = {**table.meta, "checkpoints": [int(v) for v in table.steps],
            "n_eval_steps": table.n_checkpoints}
    return write_frame(table.to_frame(), meta, path, compression="zstd", statistics=False)


def is_curve_file(path: str | Path) -> bool:
    """True for a Parquet table with a ``training_steps`` column (learning curves)."""
    import pyarrow.parquet as pq

    path = Path(path)
    if path.suffix.lower() not in (".parquet", ".pq"):
        return False
    schema = pq.read_schema(path)
    return STEPS in schema.names and META_KEY in (schema.metadata or {})


def read_curves(path: str | Path) -> CurveTable:
    """Read a learning-curve table written by :func:`write_curves`."""
    df, meta = read_frame(path)
    return frame_to_curves(df, meta, source=str(path))


def frame_to_curves(df: pd.DataFrame, meta: dict[str, Any], source: str = "<frame>"
                    ) -> CurveTable:
    """A stored learning-curve table (one row per configuration and checkpoint) as a
    :class:`CurveTable`; every configuration must have every checkpoint once."""
    if STEPS not in df.columns:
        raise ValueError(f"{source}: no {STEPS!r} column: not a learning-curve table (it "
                         "holds one return per run; read it with read_task)")
    pairs = seed_columns(list(df.columns))
    if not pairs:
        raise ValueError(f"{source}: no '{SEED_PREFIX}<int>' return columns")
    walls = dict((s, c) for c, s in wall_columns(list(df.columns)))
    cpus = dict((s, c) for c, s in wall_columns(list(df.columns), cpu=True))
    ids = df[CONFIG_ID].to_numpy(dtype=np.int64) if CONFIG_ID in df.columns else None
    if ids is None:
        raise ValueError(f"{source}: a learning-curve table needs its {CONFIG_ID!r} column")
    steps = np.unique(df[STEPS].to_numpy(dtype=np.int64))  # (C,)
    order, uniq = pd.factorize(ids, sort=True)  # configurations in config_id order
    n, c, s = len(uniq), steps.size, len(pairs)
    counts = np.bincount(order, minlength=n)
    key = pd.Series(list(zip(order, df[STEPS], strict=True)))
    if (counts != c).any() or key.duplicated().any():
        bad = int(uniq[int(np.flatnonzero(counts != c)[0])]) if (counts != c).any() else int(
            ids[int(np.flatnonzero(key.duplicated().to_numpy())[0])])
        raise ValueError(f"{source}: {CONFIG_ID} {bad} does not have each of the {c} "
                         f"checkpoints ({', '.join(map(str, steps))}) exactly once")
    df = df.assign(_row=order, _ck=np.searchsorted(steps, df[STEPS].to_numpy(dtype=np.int64)))
    df = df.sort_values(["_row", "_ck"], kind="stable").reset_index(drop=True)
    ret = df[[col for col, _ in pairs]].to_numpy(dtype=float).reshape(n, c, s)
    wall = np.full((n * c, s), np.nan)
    cpu = np.full((n * c, s), np.nan)
    for j, (_, sd) in enumerate(pairs):
        if sd in walls:
            wall[:, j] = df[walls[sd]].to_numpy(dtype=float)
        if sd in cpus:
            cpu[:, j] = df[cpus[sd]].to_numpy(dtype=float)
    env = (df[ENV_STEPS].to_numpy(dtype=np.int64) if ENV_STEPS in df.columns
           else np.full(n * c, -1, dtype=np.int64)).reshape(n, c)
    drop = {CONFIG_ID, STEPS, ENV_STEPS, "_row", "_ck", *(col for col, _ in pairs),
            *walls.values(), *cpus.values()}
    hps = [col for col in df.columns if col not in drop]
    configs = df.loc[np.arange(n) * c, hps].reset_index(drop=True)
    meta = dict(meta)
    meta.setdefault("task", Path(source).stem)
    return CurveTable(configs=configs, returns=ret.transpose(0, 2, 1),
                      wall_s=wall.reshape(n, c, s).transpose(0, 2, 1), steps=steps,
                      env_steps=env, seeds=[sd for _, sd in pairs],
                      config_ids=np.asarray(uniq, dtype=np.int64), meta=meta,
                      cpu_s=cpu.reshape(n, c, s).transpose(0, 2, 1) if cpus else None)


def curve_summary(table: CurveTable) -> pd.DataFrame:
    """Per-checkpoint statistics over configurations (numbers only).

    For each checkpoint: ``training_steps``, the median ``env_steps`` over configurations, the
    quantiles :data:`CURVE_QUANTILES` and the mean of the per-configuration mean returns
    (``q05`` ... ``q95``, ``mean``; configurations with a NaN run at that checkpoint left
    out), the best per-configuration mean (``best``), the median per-configuration std across
    seeds (``std_median``), the failed runs (``n_nan``) and the median wall and CPU time of a
    run up to the checkpoint (``wall_s_median``, ``cpu_s_median``, seconds; NaN unknown).

    Returns
    -------
    pandas.DataFrame
        One row per checkpoint.
    """
    r = np.asarray(table.returns, dtype=float)  # (N, S, C)
    rows = []
    for k, step in enumerate(table.steps):
        rk = r[:, :, k]  # (N, S)
        ok = ~np.isnan(rk).any(axis=1)
        mean = rk[ok].mean(axis=1)  # (m,)
        std = rk[ok].std(axis=1, ddof=1) if rk.shape[1] > 1 else np.full(mean.shape, np.nan)
        env = table.env_steps[:, k]
        wall = table.wall_s[:, :, k]
        cpu = table.cpu_s[:, :, k] if table.cpu_s is not None else np.full(1, np.nan)
        row: dict[str, Any] = {
            "training_steps": int(step),
            "env_steps": float(np.median(env[env >= 0])) if (env >= 0).any() else np.nan,
        }
        q = np.quantile(mean, CURVE_QUANTILES) if mean.size else [np.nan] * 5
        row |= {f"q{round(100 * p):02d}": float(v) for p, v in zip(CURVE_QUANTILES, q,
                                                                    strict=True)}
        row |= {
            "mean": float(mean.mean()) if mean.size else np.nan,
            "best": float(mean.max()) if mean.size else np.nan,
            "std_median": float(np.median(std)) if std.size else np.nan,
            "n_nan": int(np.isnan(rk).sum()),
            "wall_s_median": float(np.nanmedian(wall)) if np.isfinite(wall).any() else np.nan,
            "cpu_s_median": float(np.nanmedian(cpu)) if np.isfinite(cpu).any() else np.nan,
        }
        rows.append(row)
    return pd.DataFrame(rows)


def plot_curves(table: CurveTable, path: str | Path, *, dpi: int = 120, n_best: int = 3
                ) -> Path:
    """Write the learning curves of ``table`` as a PNG.

    The quantile bands (5-95 %, 25-75 %) and the median of the per-configuration mean return
    against training steps, and the ``n_best`` configurations with the best final mean, each
    with its mean and the band of one std across seeds.
    """
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    summ = curve_summary(table)
    x = summ["training_steps"].to_numpy(dtype=float)
    fig = Figure(figsize=(6.0, 4.0))
    FigureCanvasAgg(fig)
    ax = fig.add_subplot()
    ax.fill_between(x, summ["q05"], summ["q95"], color="tab:blue", alpha=0.15,
                    label="configurations, 5-95 %")
    ax.fill_between(x, summ["q25"], summ["q75"], color="tab:blue", alpha=0.3, label="25-75 %")
    ax.plot(x, summ["q50"], color="tab:blue", label="median configuration")
    r = np.asarray(table.returns, dtype=float)  # (N, S, C)
    final = r[:, :, -1]
    ok = ~np.isnan(final).any(axis=1)
    score = np.where(ok, np.nan_to_num(final.mean(axis=1), nan=-np.inf), -np.inf)
    for i, idx in enumerate(np.argsort(-score, kind="stable")[:n_best]):
        if not np.isfinite(score[idx]):
            break
        m, sd = np.nanmean(r[idx], axis=0), np.nanstd(r[idx], axis=0, ddof=1)
        color = ("tab:red", "tab:orange", "tab:green", "tab:purple")[i % 4]
        ax.plot(x, m, color=color, lw=1.2, label=f"config {int(table.config_ids[idx])}")
        ax.fill_between(x, m - sd, m + sd, color=color, alpha=0.12)
    ax.set_xlabel("training steps")
    ax.set_ylabel("mean evaluation return")
    n, s, _ = r.shape
    ax.set_title(f"{table.name}: {n} configs x {s} seeds, {table.n_checkpoints} checkpoints",
                 fontsize=9)
    ax.legend(fontsize=7, loc="best")
    ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=dpi)
    return path
