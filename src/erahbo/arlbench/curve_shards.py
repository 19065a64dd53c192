"""Generation shards of learning-curve tables (``erahbo dataset generate --eval-steps C``).

A generation with ``n_eval_steps`` C > 1 records, for every run, its return and wall time at
each of the C checkpoints (:mod:`erahbo.datasets.curves`). Its shards are curve tables of
``shard_size`` configurations, written atomically as the plain shards are
(:mod:`erahbo.arlbench.generate`); :func:`merge_curve_shards` joins a prefix of them.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from erahbo.datasets.curves import CurveTable, read_curves, write_curves

__all__ = ["CurveShardBuffer", "checkpoint_steps", "merge_curve_shards"]

#: What the time columns of a curve table mean (recorded in its metadata).
WALL_NOTE = (
    "wall_s_<seed>: seconds from the start of the run (init) to the end of the checkpoint's "
    "evaluation, measured on the worker with one call per checkpoint; JIT compilation excluded "
    "(compile_s: per configuration, paid once for all its seeds). cpu_s_<seed>: the same in CPU "
    "seconds of the worker process (compile_cpu_s for the compilation): the cost, which the "
    "wall time overstates when other processes share the core"
)


def checkpoint_steps(budget: int, n_eval_steps: int) -> np.ndarray:
    """Nominal training steps of the checkpoints: ``round(budget * c / C)``, c = 1..C."""
    c = np.arange(1, n_eval_steps + 1)
    return np.rint(budget * c / n_eval_steps).astype(np.int64)  # (C,)


class CurveShardBuffer:
    """Results of one shard's configurations while they come back (in any order)."""

    def __init__(self, shard: int, lo: int, size: int, n_seeds: int, n_ckpt: int) -> None:
        self.shard, self.lo, self.size, self.left = shard, lo, size, size
        self.returns = np.full((size, n_seeds, n_ckpt), np.nan)  # (configs, seeds, checkpoints)
        self.wall = np.full((size, n_seeds, n_ckpt), np.nan)
        self.cpu = np.full((size, n_seeds, n_ckpt), np.nan)
        self.env_steps = np.full((size, n_ckpt), -1, dtype=np.int64)
        self.runtimes = np.zeros((size, n_seeds))
        self.compile_s = np.zeros(size)
        self.compile_cpu_s = np.zeros(size)
        self.errors: dict[str, dict[str, str]] = {}

    def add(self, config: int, res: Sequence[Any], seeds: Sequence[int]) -> None:
        """Store the :class:`~erahbo.arlbench.client.RunResult` list of ``config``."""
        row = config - self.lo
        for j, r in enumerate(res):
            self.runtimes[row, j] = r.runtime_s
            self.compile_s[row] += r.compile_s
            self.compile_cpu_s[row] += r.compile_cpu_s
            if r.curve is not None:
                k = len(r.curve)
                self.returns[row, j, :k] = r.curve
                self.wall[row, j, : len(r.curve_s)] = r.curve_s
                if r.curve_cpu_s:
                    self.cpu[row, j, : len(r.curve_cpu_s)] = r.curve_cpu_s
                if (self.env_steps[row] < 0).all() and r.env_steps:
                    self.env_steps[row, : len(r.env_steps)] = r.env_steps
            if r.status != "ok":
                self.errors.setdefault(str(config), {})[str(seeds[j])] = str(r.error)
        self.left -= 1

    def table(self, configs: pd.DataFrame, seeds: list[int], steps: np.ndarray,
              meta0: dict[str, Any]) -> CurveTable:
        """The shard as a curve table (metadata: its range, worker time and errors)."""
        meta = {
            **meta0,
            "shard": self.shard,
            "config_range": [self.lo, self.lo + self.size],
            # worker-seconds: the runs and the compilations (the wall time with one worker)
            "wall_s": float(self.runtimes.sum() + self.compile_s.sum()),
            "compile_s": self.compile_s.tolist(),
            # CPU seconds of the runs (up to their last checkpoint) and of the compilations
            "cpu_s": float(np.nansum(self.cpu[:, :, -1]) + self.compile_cpu_s.sum()),
            "compile_cpu_s": self.compile_cpu_s.tolist(),
            "errors": self.errors,
        }
        ids = np.arange(self.lo, self.lo + self.size, dtype=np.int64)
        return CurveTable(configs=configs, returns=self.returns, wall_s=self.wall,
                          steps=np.asarray(steps), env_steps=self.env_steps, seeds=seeds,
                          config_ids=ids, meta=meta, cpu_s=self.cpu)


def merge_curve_shards(shards: Sequence[Path], target: Path, *, partial: bool) -> Path:
    """Join the curve shards ``shards`` (a contiguous prefix, in order) into ``target``."""
    parts = [read_curves(p) for p in shards]
    ids = np.concatenate([p.config_ids for p in parts])
    if not np.array_equal(ids, np.arange(len(ids))):
        raise ValueError(f"{target.stem}: shard config ids are not contiguous; shards are "
                         "corrupt")
    returns = np.concatenate([p.returns for p in parts])  # (N, S, C)
    wall = np.concatenate([p.wall_s for p in parts])
    compile_s = np.concatenate([np.asarray(p.meta.get("compile_s", []), float) for p in parts])
    compile_cpu = np.concatenate([np.asarray(p.meta.get("compile_cpu_s", []), float)
                                  for p in parts])
    cpu = np.concatenate([p.cpu_s if p.cpu_s is not None else np.full(p.returns.shape, np.nan)
                          for p in parts])
    errors: dict[str, Any] = {}
    for p in parts:
        errors.update(p.meta.get("errors", {}))
    msgs: dict[str, int] = {}
    for per in errors.values():
        for m in per.values():
            key = m.split("[")[0].strip()[:160]
            msgs[key] = msgs.get(key, 0) + 1
    meta = dict(parts[0].meta)
    for k in ("shard", "config_range", "wall_s", "errors", "compile_s", "cpu_s",
              "compile_cpu_s"):
        meta.pop(k, None)
    total = float(sum(p.meta.get("wall_s", 0.0) for p in parts))
    final = wall[:, :, -1]
    first = final[:, 0] + compile_s if compile_s.size == final.shape[0] else np.array([])
    meta.update({
        "n_configs": int(returns.shape[0]),
        "n_seeds": int(returns.shape[1]),
        "partial": bool(partial),
        "wall_time_s": total,
        "runs_per_second": (returns[:, :, 0].size / total) if total > 0 else None,
        "median_run_s": float(np.nanmedian(final)) if np.isfinite(final).any() else None,
        "median_first_run_s": float(np.nanmedian(first)) if np.isfinite(first).any() else None,
        "median_compile_s": float(np.median(compile_s)) if compile_s.size else None,
        "median_checkpoint_wall_s": [float(np.nanmedian(wall[:, :, k])) if
                                     np.isfinite(wall[:, :, k]).any() else None
                                     for k in range(wall.shape[2])],
        "compile_s": compile_s.tolist(),
        "cpu_time_s": float(sum(p.meta.get("cpu_s", 0.0) for p in parts)),
        "median_run_cpu_s": _median(cpu[:, :, -1]),
        "median_compile_cpu_s": _median(compile_cpu),
        "median_checkpoint_cpu_s": [_median(cpu[:, :, k]) for k in range(cpu.shape[2])],
        "compile_cpu_s": compile_cpu.tolist(),
        "n_failed_runs": int(np.isnan(returns[:, :, -1]).sum()),
        "failure_messages": msgs,
    })
    cols = list(parts[0].configs.columns)  # rows, not frames: no dtype guess from all-null parts
    configs = pd.DataFrame([r for p in parts for r in p.configs.to_dict("records")], columns=cols)
    table = CurveTable(
        configs=configs, returns=returns,
        wall_s=wall, steps=parts[0].steps, env_steps=np.concatenate([p.env_steps for p in parts]),
        seeds=parts[0].seeds, config_ids=ids, meta=meta, cpu_s=cpu)
    return write_curves(table, target)


def _median(x: np.ndarray) -> float | None:
    """The median of the finite values of ``x`` (None: none)."""
    x = np.asarray(x, dtype=float)
    return float(np.nanmedian(x)) if np.isfinite(x).any() else None
