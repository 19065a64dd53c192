"""Where the generation of each ARLBench table stands (``erahbo dataset status``).

Numbers only (no printing): planned and finished configurations, the share of the expected
work done (:meth:`erahbo.arlbench.registry.ArlTask.relative_cost`, since configurations
differ up to 100-fold in cost), and, from the merged table, the statistics that
``data/README.md`` reports per task.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from erahbo.arlbench.generate import shard_dir, shard_path, shard_status, sobol_configs
from erahbo.arlbench.registry import get_task
from erahbo.datasets.format import read_meta, read_task
from erahbo.datasets.inspect import config_stats

__all__ = ["GenerationStatus", "generation_status", "generation_tasks"]


@dataclass
class GenerationStatus:
    """State of one task's generation under an output root.

    Attributes
    ----------
    task : str
    planned_configs, n_seeds : int
        The plan's table size.
    done_configs : int
        Configurations in finished shards (any shard, not only the prefix).
    work_done : float
        Share of the expected work those configurations represent (0..1).
    worker_hours, hours_left : float
        Worker time of the finished shards, and the time the rest should take on one core
        (``worker_hours * (1 - work_done) / work_done``).
    merged_configs : int
        Rows of ``<task>.parquet`` (0 when not merged yet); ``partial`` when it is a prefix.
    n_nan, std, mean, corr_mean_std :
        Failed runs and per-configuration spread of the merged table (NaN rows left out).
    wall_time_h, runs_per_s, median_run_s, median_first_run_s : float
        From the merged table's metadata (worker time, so per core).
    """

    task: str
    planned_configs: int
    n_seeds: int
    done_configs: int
    work_done: float
    worker_hours: float = np.nan
    hours_left: float = np.nan
    merged_configs: int = 0
    partial: bool = True
    n_nan: int = 0
    std: tuple[float, float, float] = (np.nan, np.nan, np.nan)  # min, median, max
    mean: tuple[float, float, float] = (np.nan, np.nan, np.nan)
    corr_mean_std: float = np.nan
    wall_time_h: float = np.nan
    runs_per_s: float = np.nan
    median_run_s: float = np.nan
    median_first_run_s: float = np.nan


def generation_tasks(out: str | Path) -> list[str]:
    """Tasks with a generation plan under ``out`` (``out/shards/<task>/plan.json``)."""
    root = Path(out) / "shards"
    if not root.is_dir():
        return []
    return sorted(p.parent.name for p in root.glob("*/plan.json"))


def _three(x: np.ndarray) -> tuple[float, float, float]:
    return (float(x.min()), float(np.median(x)), float(x.max())) if x.size else (np.nan,) * 3


def generation_status(out: str | Path, task: str) -> GenerationStatus:
    """Status of ``task``'s generation under ``out`` (its plan must exist)."""
    st = shard_status(out, task)
    plan = st["plan"]
    if plan is None:
        raise ValueError(f"{task}: no generation plan under {Path(out) / 'shards' / task}")
    n, size = int(plan["n_configs"]), int(plan["shard_size"])
    t = get_task(task)
    configs = sobol_configs(t.search_space, n, int(plan["sobol_seed"]))
    cost = np.array([t.relative_cost(c) for c in configs])  # (n,)
    done = np.zeros(n, dtype=bool)
    for k in st["done"]:
        done[k * size : (k + 1) * size] = True
    status = GenerationStatus(task, n, len(plan["seeds"]), int(done.sum()),
                              float(cost[done].sum() / cost.sum()))
    d = shard_dir(out, task)
    worker_s = sum(float(read_meta(shard_path(d, k)).get("wall_s", 0.0))
                   for k in st["done"])
    if worker_s > 0 and status.work_done > 0:
        status.worker_hours = worker_s / 3600
        status.hours_left = status.worker_hours * (1 - status.work_done) / status.work_done
    merged = Path(out) / f"{task}.parquet"
    if not merged.is_file():
        return status
    data = read_task(merged)
    m = data.meta
    mean, std, _ = config_stats(data.returns)
    status.merged_configs = data.n_configs
    status.partial = bool(m.get("partial", data.n_configs < n))
    status.n_nan = int(np.isnan(data.returns).sum())
    status.std, status.mean = _three(std), _three(mean)
    if mean.size >= 2 and np.ptp(mean) > 0 and np.ptp(std) > 0:
        status.corr_mean_std = float(np.corrcoef(mean, std)[0, 1])
    status.wall_time_h = float(m.get("wall_time_s") or np.nan) / 3600
    status.runs_per_s = float(m.get("runs_per_second") or np.nan)
    status.median_run_s = float(m.get("median_run_s") or np.nan)
    status.median_first_run_s = float(m.get("median_first_run_s") or np.nan)
    return status
