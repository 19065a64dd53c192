"""Dataset generation with ARLBench: Sobol configurations x all seeds, resumable shards.

Layout under ``out`` (e.g. ``data/arlbench``)::

    shards/<task>/plan.json          settings of the run (checked on resume)
    shards/<task>/shard-00000.parquet  configurations [0, shard_size) with all seeds
    shards/<task>/shard-00001.parquet  ...
    shards/<task>/generate.lock      only while a generation runs (one process per folder)
    <task>.parquet                   merged table (:func:`merge_shards`)

With ``n_eval_steps`` C > 1 every run is evaluated at C checkpoints and the shards and the
merged table are learning-curve tables (:mod:`erahbo.arlbench.curve_shards`,
:mod:`erahbo.datasets.curves`); ARLBench trains differently with other C (the update steps
are rounded per segment), so such a table is a new table, not an extension of a C = 1 one.

Each shard is a complete :class:`erahbo.datasets.format.TaskData` written atomically
(temporary file + rename), so a killed run loses at most the shard in progress and a
restart skips every shard already on disk: nothing is lost or duplicated.

Configurations: the first ``n_configs`` points of a scrambled Sobol sequence (scipy,
``seed=sobol_seed``) in ``[0, 1]^d`` with one coordinate per hyperparameter, decoded by
:func:`decode_unit`.  Because the points are drawn in sequence order, any prefix of the
table is itself a prefix of the same Sobol sequence (a run with 1024 configurations
extends one with 512).
"""

from __future__ import annotations

import json
import math
import platform
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from erahbo._lockfile import acquire, release
from erahbo.arlbench.curve_shards import (
    WALL_NOTE,
    CurveShardBuffer,
    checkpoint_steps,
    merge_curve_shards,
)
from erahbo.arlbench.registry import ArlTask, get_task
from erahbo.datasets.curves import write_curves
from erahbo.datasets.format import TaskData, read_task, write_task

__all__ = [
    "GenerationPlan",
    "decode_unit",
    "generate",
    "merge_shards",
    "shard_dir",
    "shard_path",
    "shard_status",
    "sobol_configs",
]

GENERATOR = "erahbo.arlbench"
GENERATOR_VERSION = "1"


def decode_unit(space: dict[str, Any], u: np.ndarray) -> dict[str, Any]:
    """Map one point ``u`` of ``[0, 1]^d`` (one coordinate per hyperparameter) to a config.

    float: ``low + u (high - low)``; log: geometric interpolation; int: ``floor`` onto
    ``{low..high}`` (equal-width bins); cat: ``floor(u k)``-th choice.  A conditional
    hyperparameter whose parent value is not in its condition's ``values`` is left out.

    Parameters
    ----------
    space : dict
        Search space in the JSON form.
    u : numpy.ndarray
        ``(d,)`` point, ``d`` = number of hyperparameters.
    """
    hps = space["hyperparameters"]
    if len(u) != len(hps):
        raise ValueError(f"u has {len(u)} coordinates, the space has {len(hps)} hyperparameters")
    cfg: dict[str, Any] = {}
    for hp, x in zip(hps, np.clip(np.asarray(u, dtype=float), 0.0, 1.0), strict=True):
        t = hp["type"]
        if t == "float":
            v: Any = float(hp["low"] + x * (hp["high"] - hp["low"]))
        elif t == "log":
            lo, hi = math.log(hp["low"]), math.log(hp["high"])
            v = float(math.exp(lo + x * (hi - lo)))
        elif t in ("int", "logint"):
            lo, hi = int(hp["low"]), int(hp["high"])
            if t == "logint":
                a, b = math.log(lo), math.log(hi + 1)
                v = int(min(hi, math.floor(math.exp(a + x * (b - a)))))
            else:
                v = int(min(hi, lo + math.floor(x * (hi - lo + 1))))
        elif t == "cat":
            ch = hp["choices"]
            v = ch[min(len(ch) - 1, math.floor(x * len(ch)))]
        else:
            raise ValueError(f"hyperparameter {hp['name']!r}: unknown type {t!r}")
        cfg[hp["name"]] = v
    for cond in space.get("conditions", []) or []:
        parent = cfg.get(cond["parent"])
        if cond["child"] in cfg and parent not in cond["values"]:
            del cfg[cond["child"]]
    return cfg


def sobol_configs(space: dict[str, Any], n: int, seed: int) -> list[dict[str, Any]]:
    """The first ``n`` scrambled-Sobol configurations of ``space`` (seeded)."""
    from scipy.stats import qmc

    d = len(space["hyperparameters"])
    sampler = qmc.Sobol(d=d, scramble=True, seed=seed)
    m = max(0, math.ceil(math.log2(max(n, 1))))
    U = sampler.random_base2(m)[:n]  # (n, d); powers of two keep the balance property
    return [decode_unit(space, u) for u in U]


@dataclass(frozen=True)
class GenerationPlan:
    """Settings of one generation run; stored in ``plan.json`` and checked on resume."""

    task: str
    n_configs: int
    seeds: tuple[int, ...]
    sobol_seed: int = 0
    shard_size: int = 4
    n_total_timesteps: int | None = None  # None: the task's default budget
    n_eval_episodes: int = 128
    n_eval_steps: int = 1  # evaluations during training (C > 1: learning curves)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "task": self.task,
            "n_configs": self.n_configs,
            "seeds": list(self.seeds),
            "sobol_seed": self.sobol_seed,
            "shard_size": self.shard_size,
            "n_total_timesteps": self.n_total_timesteps,
            "n_eval_episodes": self.n_eval_episodes,
        }
        if self.n_eval_steps != 1:  # plans of one evaluation stay as they were written
            out["n_eval_steps"] = self.n_eval_steps
        return out

    @property
    def n_shards(self) -> int:
        return math.ceil(self.n_configs / self.shard_size)

    def compatible(self, other: dict[str, Any]) -> str | None:
        """None if ``other`` (a stored plan) can be resumed by this plan, else the reason.

        ``n_configs`` may grow (the Sobol sequence is extended); all else must match.
        """
        mine = {"n_eval_steps": 1, **self.to_json()}
        other = {"n_eval_steps": 1, **other}  # a plan without the key evaluated once
        for k in (
            "task",
            "seeds",
            "sobol_seed",
            "shard_size",
            "n_total_timesteps",
            "n_eval_episodes",
            "n_eval_steps",
        ):
            if other.get(k) != mine[k]:
                return f"{k}: stored {other.get(k)!r}, requested {mine[k]!r}"
        return None


def shard_dir(out: str | Path, task: str) -> Path:
    return Path(out) / "shards" / task


def shard_path(d: Path, k: int) -> Path:
    """File of shard ``k`` in the shard folder ``d``."""
    return d / f"shard-{k:05d}.parquet"


def shard_status(out: str | Path, task: str) -> dict[str, Any]:
    """Which shards of ``task`` exist: ``{"plan", "done": [k...], "n_shards"}``."""
    d = shard_dir(out, task)
    plan = json.loads((d / "plan.json").read_text()) if (d / "plan.json").exists() else None
    done = (
        sorted(int(p.stem.split("-")[1]) for p in d.glob("shard-*.parquet")) if d.exists() else []
    )
    n = math.ceil(plan["n_configs"] / plan["shard_size"]) if plan else 0
    return {"plan": plan, "done": done, "n_shards": n}


def _base_meta(task: ArlTask, plan: GenerationPlan, versions: dict[str, Any]) -> dict[str, Any]:
    budget = plan.n_total_timesteps or task.n_total_timesteps
    c = plan.n_eval_steps
    evals = (f"one deterministic evaluation of {plan.n_eval_episodes} episodes at the end"
             if c == 1 else f"{c} deterministic evaluations of {plan.n_eval_episodes} episodes "
             f"during training (ARLBench n_eval_steps={c}: {c} equal segments, each followed "
             "by an evaluation), one timed call per checkpoint")
    curve = {} if c == 1 else {
        "checkpoints": checkpoint_steps(int(budget), c).tolist(),
        "wall_time_columns": WALL_NOTE,
        "step_columns": "training_steps: nominal steps of the checkpoint (budget * c / C); "
        "env_steps: environment steps the runs had trained by then (ARLBench rounds each "
        "segment up to whole update steps)",
    }
    return {
        "task": task.name,
        "algorithm": task.algorithm,
        "environment": task.environment,
        "env_framework": task.env_framework,
        "domain": task.domain,
        "search_space": task.search_space,
        "search_space_source": task.space_source,
        "training_budget": int(budget),
        "n_envs": task.n_envs,
        "n_eval_episodes": plan.n_eval_episodes,
        "n_eval_steps": c,
        **curve,
        "deterministic_eval": True,
        "objective": "reward_mean (mean return over the evaluation episodes after training)"
        if c == 1 else "reward_mean at each checkpoint (mean return over its evaluation "
        "episodes); the table's return is the last checkpoint's",
        "seeds": list(plan.seeds),
        "sobol_seed": plan.sobol_seed,
        "n_configs_planned": plan.n_configs,
        "generator": GENERATOR,
        "generator_version": GENERATOR_VERSION,
        "versions": versions,
        "synthetic": False,
        "provenance": (
            f"ARLBench {versions.get('arlbench', '?')} (jax {versions.get('jax', '?')}) on "
            f"{platform.machine()} CPU, compiled once per configuration, fresh init per seed, "
            f"{evals}; "
            "non-searched hyperparameters at ARLBench 0.1.3 algorithm defaults; "
            "generated by `erahbo dataset generate`."
        ),
        "notes": (
            "DQN 'epsilon' is not read by arlbench 0.1.3 (inert dimension, kept to match "
            "the paper's space)"
        )
        if task.algorithm == "dqn"
        else "",
    }


class _ShardBuffer:
    """Results of one shard's configurations while they come back (in any order)."""

    def __init__(self, shard: int, lo: int, size: int, n_seeds: int) -> None:
        self.shard, self.lo, self.size, self.left = shard, lo, size, size
        self.returns = np.full((size, n_seeds), np.nan)  # (configs, seeds)
        self.runtimes = np.zeros((size, n_seeds))
        self.errors: dict[str, dict[str, str]] = {}
        self.first: list[float] = []

    def add(self, config: int, res: list[Any], seeds: tuple[int, ...]) -> None:
        row = config - self.lo
        for s_idx, r in enumerate(res):
            self.returns[row, s_idx] = r.return_ if r.status == "ok" else np.nan
            self.runtimes[row, s_idx] = r.runtime_s
            if r.status != "ok":
                self.errors.setdefault(str(config), {})[str(seeds[s_idx])] = str(r.error)
            if r.first:
                self.first.append(r.runtime_s)
        self.left -= 1

    def task_data(self, configs: pd.DataFrame, seeds: list[int], meta0: dict[str, Any]) -> TaskData:
        meta = {
            **meta0,
            "shard": self.shard,
            "config_range": [self.lo, self.lo + self.size],
            # worker-seconds: the time the shard's runs took (its wall time with one worker)
            "wall_s": float(self.runtimes.sum()),
            "run_runtime_s": self.runtimes.tolist(),
            "errors": self.errors,
            "first_run_s": self.first,
        }
        ids = np.arange(self.lo, self.lo + self.size, dtype=np.int64)
        return TaskData(configs=configs, returns=self.returns, seeds=seeds, config_ids=ids,
                        meta=meta)


def generate(
    task: str | ArlTask,
    out: str | Path,
    client: Any,
    *,
    n_configs: int = 512,
    n_seeds: int = 50,
    sobol_seed: int = 0,
    shard_size: int = 4,
    n_total_timesteps: int | None = None,
    n_eval_episodes: int = 128,
    n_eval_steps: int = 1,
    versions: dict[str, Any] | None = None,
    progress: Callable[[int, int, dict[str, Any]], None] | None = None,
    max_shards: int | None = None,
) -> dict[str, Any]:
    """Generate (or resume) the shards of ``task`` under ``out``.

    Parameters
    ----------
    task : str or ArlTask
        Registered task.
    out : path
        Output root (shards go to ``out/shards/<task>/``).
    client : ArlClient-like
        Object with ``train_many(task_request, configs, seeds, extra=...)`` yielding
        ``(k, list[RunResult])`` (see :class:`erahbo.arlbench.client.ArlClient`).
    n_configs, n_seeds : int
        Table size; seeds are ``1..n_seeds``.
    sobol_seed : int
        Seed of the scrambled Sobol sequence.
    shard_size : int
        Configurations per shard file.
    n_total_timesteps : int, optional
        Training budget override (default: the task's ARLBench default).
    n_eval_episodes : int
        Deterministic evaluation episodes per evaluation.
    n_eval_steps : int
        Evaluations during training (ARLBench's ``n_eval_steps``); above 1 the shards are
        learning-curve tables (:mod:`erahbo.datasets.curves`).
    versions : dict, optional
        Package versions of the worker (recorded in the metadata).
    progress : callable, optional
        ``progress(configs_done, n_configs, info)`` after every finished configuration (and
        once for the shards already present); ``info`` has ``cost_done`` and ``cost_total``,
        the expected work in :meth:`ArlTask.relative_cost` units, for time estimates.
    max_shards : int, optional
        Stop after writing this many new shards (for smoke runs).

    Returns
    -------
    dict
        ``{"written": [...], "skipped": [...], "runs": int, "wall_s": float}``.
    """
    t = get_task(task) if isinstance(task, str) else task
    for name, value in (("n_configs", n_configs), ("n_seeds", n_seeds),
                        ("shard_size", shard_size), ("n_eval_steps", n_eval_steps)):
        if value < 1:
            raise ValueError(f"generate: {name}={value} must be >= 1")
    plan = GenerationPlan(
        t.name,
        int(n_configs),
        tuple(range(1, n_seeds + 1)),
        int(sobol_seed),
        int(shard_size),
        n_total_timesteps,
        int(n_eval_episodes),
        int(n_eval_steps),
    )
    d = shard_dir(out, t.name)
    d.mkdir(parents=True, exist_ok=True)
    lock = acquire(d / "generate.lock", lambda holder: RuntimeError(
        f"{t.name}: another generation into {d} is running ({holder}); two would train the "
        "same configurations twice. Wait for it, or stop it (its finished shards are kept)"
    ))
    try:
        return _generate(t, d, client, plan, versions=versions, progress=progress,
                         max_shards=max_shards)
    finally:
        release(lock)  # removes generate.lock while still holding it (see erahbo._lockfile)


def _generate(
    t: ArlTask,
    d: Path,
    client: Any,
    plan: GenerationPlan,
    *,
    versions: dict[str, Any] | None,
    progress: Callable[[int, int, dict[str, Any]], None] | None,
    max_shards: int | None,
) -> dict[str, Any]:
    """The body of :func:`generate`, with the shard folder ``d`` locked."""
    plan_path = d / "plan.json"
    if plan_path.exists():
        stored = json.loads(plan_path.read_text())
        why = plan.compatible(stored)
        if why is not None:
            raise ValueError(
                f"{plan_path} was written by a different generation run ({why}); use another "
                "--out directory or the same settings to resume"
            )
    tmp = plan_path.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(plan.to_json(), indent=1))
    tmp.replace(plan_path)

    space = t.search_space
    configs = sobol_configs(space, plan.n_configs, plan.sobol_seed)
    names = [hp["name"] for hp in space["hyperparameters"]]
    request = t.worker_request()
    request["n_eval_episodes"] = plan.n_eval_episodes
    if plan.n_total_timesteps:
        request["n_total_timesteps"] = int(plan.n_total_timesteps)
    if plan.n_eval_steps > 1:
        request["n_eval_steps"] = plan.n_eval_steps
    meta0 = _base_meta(t, plan, versions or {})
    steps = checkpoint_steps(int(request["n_total_timesteps"]), plan.n_eval_steps)

    # Every missing shard's configurations go to the workers as one stream (in order, a
    # sliding window of n_workers): a slow configuration never idles the other workers, and
    # each shard is written as soon as its last configuration is back.
    sizes = {k: min(plan.n_configs, (k + 1) * plan.shard_size) - k * plan.shard_size
             for k in range(plan.n_shards)}
    skipped = [k for k in range(plan.n_shards) if shard_path(d, k).exists()]
    missing = sorted(set(range(plan.n_shards)) - set(skipped))
    if max_shards is not None:
        missing = missing[:max_shards]
    done = sum(sizes[k] for k in skipped)
    cost = [t.relative_cost(c) for c in configs]  # for the ETA: configurations differ 100-fold
    cost_total = float(sum(cost))
    cost_done = float(sum(cost[k * plan.shard_size + j] for k in skipped for j in range(sizes[k])))
    if progress and skipped:
        progress(done, plan.n_configs, {"skipped_shards": len(skipped), "cost_done": cost_done,
                                        "cost_total": cost_total})
    jobs = [(k, i) for k in missing for i in range(k * plan.shard_size,
                                                   k * plan.shard_size + sizes[k])]
    def buffer(k: int) -> Any:
        if plan.n_eval_steps > 1:
            return CurveShardBuffer(k, k * plan.shard_size, sizes[k], len(plan.seeds),
                                    plan.n_eval_steps)
        return _ShardBuffer(k, k * plan.shard_size, sizes[k], len(plan.seeds))

    open_shards = {k: buffer(k) for k in missing}
    written: list[int] = []
    runs = 0
    t_all = time.perf_counter()
    for j, res in client.train_many(request, [configs[i] for _, i in jobs], list(plan.seeds)):
        k, i = jobs[j]
        buf = open_shards[k]
        buf.add(i, res, plan.seeds)
        runs += len(res)
        done += 1
        cost_done += cost[i]
        if progress:
            progress(done, plan.n_configs, {"config": i, "shard": k, "cost_done": cost_done,
                                            "cost_total": cost_total})
        if buf.left == 0:
            df = pd.DataFrame([{n: c.get(n) for n in names}
                               for c in configs[buf.lo : buf.lo + buf.size]], columns=names)
            if plan.n_eval_steps > 1:
                write_curves(buf.table(df, list(plan.seeds), steps, meta0), shard_path(d, k))
            else:
                write_task(buf.task_data(df, list(plan.seeds), meta0), shard_path(d, k))
            written.append(k)
            del open_shards[k]
    return {
        "written": sorted(written),
        "skipped": skipped,
        "runs": runs,
        "wall_s": time.perf_counter() - t_all,
        "n_shards": plan.n_shards,
    }


def merge_shards(
    out: str | Path, task: str, *, allow_partial: bool = False, path: str | Path | None = None
) -> Path:
    """Merge the shards of ``task`` into ``out/<task>.parquet`` (common format).

    With ``allow_partial`` the longest complete prefix of shards is merged (a prefix of
    the Sobol sequence); otherwise every planned shard must exist.
    """
    st = shard_status(out, task)
    if st["plan"] is None:
        raise ValueError(f"no generation plan under {shard_dir(out, task)}; nothing to merge")
    n = st["n_shards"]
    done = set(st["done"])
    prefix = 0
    while prefix < n and prefix in done:
        prefix += 1
    if prefix < n and not allow_partial:
        missing = sorted(set(range(n)) - done)
        raise ValueError(
            f"{task}: {len(missing)} of {n} shards missing (first: {missing[:5]}); finish the "
            "generation or merge with allow_partial=True"
        )
    if prefix == 0:
        raise ValueError(f"{task}: shard 0 missing; nothing to merge")
    d = shard_dir(out, task)
    target = Path(path) if path else Path(out) / f"{task}.parquet"
    if int(st["plan"].get("n_eval_steps", 1)) > 1:
        return merge_curve_shards([shard_path(d, k) for k in range(prefix)], target,
                                  partial=prefix < n)
    parts = [read_task(shard_path(d, k)) for k in range(prefix)]
    configs = pd.concat([p.configs for p in parts], ignore_index=True)
    returns = np.vstack([p.returns for p in parts])  # (N, S)
    ids = np.concatenate([p.config_ids for p in parts])
    if not np.array_equal(ids, np.arange(len(ids))):
        raise ValueError(f"{task}: shard config ids are not contiguous; shards are corrupt")
    meta = dict(parts[0].meta)
    for k in ("shard", "config_range", "wall_s", "run_runtime_s", "errors", "first_run_s"):
        meta.pop(k, None)
    rt = np.concatenate(
        [np.asarray(p.meta.get("run_runtime_s", []), dtype=float).ravel() for p in parts]
    )
    first = np.concatenate([np.asarray(p.meta.get("first_run_s", []), dtype=float) for p in parts])
    errors: dict[str, Any] = {}
    for p in parts:
        errors.update(p.meta.get("errors", {}))
    wall = float(sum(p.meta.get("wall_s", 0.0) for p in parts))
    n_runs = int(returns.size)
    n_failed = int(np.isnan(returns).sum())
    msgs: dict[str, int] = {}
    for per in errors.values():
        for m in per.values():
            key = m.split("[")[0].strip()[:160]
            msgs[key] = msgs.get(key, 0) + 1
    meta.update(
        {
            "n_configs": int(returns.shape[0]),
            "n_seeds": int(returns.shape[1]),
            "partial": bool(prefix < n),
            "wall_time_s": wall,
            "runs_per_second": (n_runs / wall) if wall > 0 else None,
            "median_run_s": float(np.median(rt)) if rt.size else None,
            "median_first_run_s": float(np.median(first)) if first.size else None,
            "n_failed_runs": n_failed,
            "failure_messages": msgs,
        }
    )
    write_task(
        TaskData(configs=configs, returns=returns, seeds=parts[0].seeds, config_ids=ids, meta=meta),
        target,
    )
    return target
