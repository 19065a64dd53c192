"""Load the benchmark traces of a results directory into aligned arrays and tidy frames.

Layout read here (written by :mod:`erahbo.experiments`, whose :mod:`erahbo.experiments.traces`
defines the format)::

    RESULTS/traces/<task>/<method>/rep-<NNN>.parquet

one Parquet file per (task, method, repetition), one row per training run after the
initial design (``run = 1..budget``), with the columns listed in :data:`TRACE_COLUMNS` and
a JSON object of metadata under the file-level key ``b"erahbo_trace"``.

Alignment. Every run is put on the common grid ``t = 1..budget`` (``budget`` = the largest
budget recorded in the metadata, or the one passed in). A value is carried forward from
the last run at or before ``t``; a trace shorter than the budget (its candidate set ran
out) therefore keeps its final value to the end. Before its first row a trace holds the
state after the initial design: simple regret ``mv_star - init_incumbent_mv`` and
cumulative regret 0.

Normalized regret (report section 3)::

    simple_regret / init_regret,   init_regret = mv_star - init_mv_mean

i.e. ``(MV* - MV(incumbent)) / (MV* - mean MV of the initial configurations)``. A repetition
whose initial configurations are all optimal (``init_regret <= 0``) is normalized by the median
positive ``init_regret`` of its task, so a later worse recommendation still shows; only a task
with no positive ``init_regret`` at all keeps normalized regret 0.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import numpy as np
import pandas as pd

from erahbo._names import (
    BTS_RED_RE,
    ERAHBO_VARIANT_RE,
    FIXED_K_LABELS,
    FIXED_K_RE,
    PARALLEL_RE,
    PEER_LABELS,
    RISK_SUFFIX_RE,
    SMAC_K_RE,
    bts_red_label,
    parallel_label,
    risk_label,
)
from erahbo.datasets.tradeoff import ILL_CONDITIONED
from erahbo.experiments.traces import (
    REP_FILE_RE,
    find_trace_files,
    read_trace,
)

Metric = Literal["simple", "cumulative", "normalized"]
METRICS: tuple[str, ...] = ("simple", "cumulative", "normalized")

# --------------------------------------------------------------------------- naming

DOMAIN_ORDER: tuple[str, ...] = ("cc", "brax", "xland", "synthetic")
_DOMAIN_LABELS = {"cc": "CC", "brax": "Brax", "xland": "XLand", "synthetic": "Synthetic",
                  "all": "All tasks"}


def method_label(method: str) -> str:
    """Display label of a method name, as in the paper.

    ``erahbo`` -> ``ERAHBO``, ``erahbo-exp50`` -> ``ERAHBO (exp50)``, ``rahbo-k2`` ->
    ``RAHBO (k=2)``, ``gpucb-k20`` -> ``GP-UCB (k=20)``, ``random-k20`` -> ``Random (k=20)``;
    a ``-p<Q>`` suffix (Q configurations in flight) adds ``Q in parallel``:
    ``rahbo-k2-p4`` -> ``RAHBO (k=2, 4 in parallel)``; ``smac`` -> ``SMAC3``; a risk suffix
    names the method's own measure: ``rahbo-k2-cvar`` -> ``RAHBO (k=2, CVaR)``,
    ``erahbo-mv3`` -> ``ERAHBO (MV alpha=3)``; any other name is returned unchanged.
    """
    m = RISK_SUFFIX_RE.match(method)
    if m:
        return risk_label(method_label(m.group(1)), m.group(2), m.group(3))
    m = PARALLEL_RE.match(method)
    if m:
        return parallel_label(method_label(m.group(1)), int(m.group(2)))
    if method == "erahbo":
        return "ERAHBO"
    m = SMAC_K_RE.match(method)
    if m:
        return f"{PEER_LABELS['smac']} (k={int(m.group(1))})"
    if method in PEER_LABELS:
        return PEER_LABELS[method]
    m = BTS_RED_RE.match(method)
    if m:
        return bts_red_label(int(m.group(1)))
    if method.startswith("erahbo-"):
        return f"ERAHBO ({method[len('erahbo-'):]})"
    m = FIXED_K_RE.match(method)
    if m:
        return f"{FIXED_K_LABELS[m.group(1)]} (k={int(m.group(2))})"
    return method


_FIXED_K_GROUP = {"rahbo": 2, "gpucb": 3, "random": 4, "optuna-tpe": 4.5}
_VARIANT_OFFSET = {"bs": -1e9, "exp": 0.0, "sig": 1e9, "b": 2e9, "ri": 2.5e9, "ch": 2.7e9}


def method_sort_key(method: str) -> tuple[float, float, int, str]:
    """Order of methods in tables and legends: the paper's (ERAHBO, RAHBO k=20, RAHBO k=2,
    GP-UCB), then ERAHBO schedules, other RAHBO k (descending), random, anything else; a
    ``-p<Q>`` variant right after its sequential method (ascending Q)."""
    m = RISK_SUFFIX_RE.match(method)
    if m:  # right after the method without its own measure
        group, value, _, _ = method_sort_key(m.group(1))
        return (group, value + 0.5, 0, method)
    m = PARALLEL_RE.match(method)
    if m:
        group, value, _, _ = method_sort_key(m.group(1))
        return (group, value, int(m.group(2)), method)
    return (*_base_sort_key(method)[:2], 1, method)


def _base_sort_key(method: str) -> tuple[float, float, str]:
    if method == "erahbo":
        return (0, 0.0, method)
    m = ERAHBO_VARIANT_RE.match(method)
    if m:  # schedules, then seed batches; numerically within each (exp5 before exp20)
        return (1, _VARIANT_OFFSET.get(m.group(1), 2.9e9) + float(m.group(2)), method)
    if method.startswith("erahbo-"):
        return (1, 3e9, method)
    m = FIXED_K_RE.match(method)
    if m:  # RAHBO, GP-UCB, random; larger k first within each
        return (_FIXED_K_GROUP[m.group(1)], -float(m.group(2)), method)
    if method in PEER_LABELS:  # after the Optuna peer
        return (4.6, 0.0, method)
    m = BTS_RED_RE.match(method)
    if m:  # after bts-red, by batch budget
        return (4.6, float(m.group(1)), method)
    return (5, 0.0, method)


def sort_methods(methods: Iterable[str]) -> list[str]:
    """Unique method names in display order (see :func:`method_sort_key`)."""
    return sorted(set(methods), key=method_sort_key)


def domain_label(domain: str) -> str:
    """Display label of a domain (``cc`` -> ``CC``, ``xland`` -> ``XLand``, ...)."""
    return _DOMAIN_LABELS.get(domain, domain)


def sort_domains(domains: Iterable[str]) -> list[str]:
    """Unique domains in the paper's order (CC, Brax, XLand), then the others by name."""
    order = {d: i for i, d in enumerate(DOMAIN_ORDER)}
    return sorted(set(domains), key=lambda d: (order.get(d, len(order)), d))


# --------------------------------------------------------------------------- alignment


def align_to_grid(
    run: np.ndarray, values: np.ndarray, budget: int, initial: float
) -> np.ndarray:
    """Put per-run values on the grid ``t = 1..budget``, carrying the last value forward.

    Parameters
    ----------
    run : numpy.ndarray
        ``(n,)`` 1-based training-run indices of the rows (any order; runs above
        ``budget`` are ignored).
    values : numpy.ndarray
        ``(n,)`` value recorded after each run.
    budget : int
        Length of the grid.
    initial : float
        Value before the first recorded run (the state after the initial design).

    Returns
    -------
    numpy.ndarray
        ``(budget,)`` value after run ``t`` at index ``t - 1``.
    """
    run = np.asarray(run, dtype=np.int64)  # (n,)
    values = np.asarray(values, dtype=np.float64)  # (n,)
    if run.shape != values.shape:
        raise ValueError(f"run and values must have the same shape, got {run.shape} and "
                         f"{values.shape}")
    keep = (run >= 1) & (run <= budget)
    run, values = run[keep], values[keep]
    order = np.argsort(run, kind="stable")
    run, values = run[order], values[order]
    pos = np.full(budget, -1, dtype=np.int64)  # (budget,) index of the row recorded at t
    pos[run - 1] = np.arange(run.size)
    pos = np.maximum.accumulate(pos)  # carry forward: last row at or before t
    out = np.full(budget, float(initial))
    has = pos >= 0
    out[has] = values[pos[has]]
    return out


# --------------------------------------------------------------------------- reading


def _meta_float(meta: dict[str, Any], key: str, path: Path) -> float:
    if key not in meta or meta[key] is None:
        raise ValueError(f"trace {path}: metadata field '{key}' is missing; see the trace "
                         "contract")
    try:
        return float(meta[key])
    except (TypeError, ValueError) as exc:
        raise ValueError(f"trace {path}: metadata field '{key}' must be a number, got "
                         f"{meta[key]!r}") from exc


# --------------------------------------------------------------------------- trace set


@dataclass
class TraceSet:
    """All traces of a results directory on a common grid ``t = 1..budget``.

    Only tasks that have every method are kept, and per task only the repetitions that
    every method has (dropped items are listed in ``notes``).

    Attributes
    ----------
    results_dir : Path
        The directory read.
    budget : int
        Grid length ``T`` (training runs after the initial design).
    methods : tuple of str
        ``M`` methods in display order.
    tasks : tuple of str
        Tasks ordered by domain (CC, Brax, XLand, ...) and name.
    domains : dict
        Task -> domain.
    repetitions : dict
        Task -> ``(R_task,)`` repetition indices shared by all methods.
    simple_regret, cumulative_regret, normalized_regret : dict
        Task -> ``(M, R_task, T)`` arrays; value after run ``t`` at index ``t - 1``.
    init_regret : dict
        Task -> ``(R_task,)`` normaliser ``mv_star - init_mv_mean`` per repetition.
    rounds : pandas.DataFrame
        One row per BO round: task, domain, method, repetition, round, config_id, k
        (``k_round``), n_runs (rows of the round inside the trace), config_mv,
        config_norm_regret ``(mv_star - config_mv) / init_regret``, stop_reason.
    meta : pandas.DataFrame
        One row per trace file with its metadata and ``n_rows``.
    notes : list of str
        Human-readable remarks about the data (short traces, dropped cells, ...).
    """

    results_dir: Path
    budget: int
    methods: tuple[str, ...]
    tasks: tuple[str, ...]
    domains: dict[str, str]
    repetitions: dict[str, np.ndarray]
    simple_regret: dict[str, np.ndarray]
    cumulative_regret: dict[str, np.ndarray]
    normalized_regret: dict[str, np.ndarray]
    init_regret: dict[str, np.ndarray]
    rounds: pd.DataFrame
    meta: pd.DataFrame
    notes: list[str] = field(default_factory=list)

    # ---- access helpers

    def metric(self, metric: Metric) -> dict[str, np.ndarray]:
        """Task -> ``(M, R_task, T)`` array of ``"simple"``, ``"cumulative"`` or
        ``"normalized"`` regret."""
        if metric == "simple":
            return self.simple_regret
        if metric == "cumulative":
            return self.cumulative_regret
        if metric == "normalized":
            return self.normalized_regret
        raise ValueError(f"metric must be one of {METRICS}, got {metric!r}")

    @property
    def user_protocol(self) -> bool:
        """True when the traces come from ``erahbo benchmark --protocol user`` (each method's
        own initial design counted; regret normalized by the table's average configuration)."""
        return "protocol" in self.meta and bool((self.meta["protocol"] == "user").all())

    def tasks_in(self, domain: str | None) -> list[str]:
        """Tasks of one domain, or all tasks for ``None`` / ``"all"``."""
        if domain is None or domain == "all":
            return list(self.tasks)
        return [t for t in self.tasks if self.domains[t] == domain]

    @property
    def domain_list(self) -> list[str]:
        """Domains present, in display order."""
        return sort_domains(self.domains.values())

    @property
    def n_repetitions(self) -> dict[str, int]:
        """Task -> number of repetitions used."""
        return {t: int(r.size) for t, r in self.repetitions.items()}

    def tidy(self, metric: Metric = "simple", runs: Sequence[int] | None = None) -> pd.DataFrame:
        """Long table: task, domain, method, repetition, run, value.

        Parameters
        ----------
        metric : {"simple", "cumulative", "normalized"}
            Which regret.
        runs : sequence of int, optional
            Grid points (1-based) to keep; all ``1..budget`` by default.
        """
        arrays = self.metric(metric)
        t_idx = (np.arange(self.budget) if runs is None
                 else np.asarray(runs, dtype=np.int64) - 1)  # (G,)
        if t_idx.size and (t_idx.min() < 0 or t_idx.max() >= self.budget):
            raise ValueError(f"runs must lie in 1..{self.budget}")
        parts = []
        for task in self.tasks:
            arr = arrays[task][:, :, t_idx]  # (M, R, G)
            m_i, r_i, g_i = np.meshgrid(np.arange(arr.shape[0]), np.arange(arr.shape[1]),
                                        np.arange(arr.shape[2]), indexing="ij")
            parts.append(pd.DataFrame({
                "task": task,
                "domain": self.domains[task],
                "method": np.asarray(self.methods, dtype=object)[m_i.ravel()],
                "repetition": self.repetitions[task][r_i.ravel()],
                "run": t_idx[g_i.ravel()] + 1,
                "value": arr.ravel(),
            }))
        return pd.concat(parts, ignore_index=True)


def load_traces(
    results_dir: str | Path,
    *,
    budget: int | None = None,
    methods: Sequence[str] | None = None,
    tasks: Sequence[str] | None = None,
) -> TraceSet:
    """Load every trace of a results directory and align it to ``t = 1..budget``.

    Parameters
    ----------
    results_dir : str or Path
        The ``--out`` directory of ``erahbo benchmark`` (holding ``traces/``), or the
        ``traces`` directory itself.
    budget : int, optional
        Grid length; default the largest ``budget`` in the trace metadata.
    methods, tasks : sequence of str, optional
        Restrict to these methods / tasks (default: all found).

    Returns
    -------
    TraceSet
    """
    root = Path(results_dir)
    files = find_trace_files(root)
    if budget is not None and (not isinstance(budget, (int, np.integer)) or budget < 1):
        raise ValueError(f"budget must be a positive integer, got {budget!r}")
    notes: list[str] = []
    records, frames = _read_traces(files, methods, tasks)
    if not records:
        raise ValueError(f"results_dir {root}: no traces match methods={methods} "
                         f"tasks={tasks}")
    meta_df = pd.DataFrame.from_records(records)
    grid_budget = _grid_budget(meta_df, budget, notes)
    all_methods = sort_methods(meta_df["method"])
    task_domain = _task_domains(meta_df, notes)
    reps_of = _tasks_of_all_methods(meta_df, all_methods, notes)
    if not reps_of:
        raise ValueError(f"results_dir {root}: no task has traces of all methods "
                         f"{all_methods}")
    order = {d: i for i, d in enumerate(sort_domains(task_domain.values()))}
    kept_tasks = sorted(reps_of, key=lambda t: (order[task_domain[t]], t))
    by_key = {(r["task"], r["method"], r["repetition"]): (f, r)
              for r, f in zip(records, frames, strict=True)}
    simple: dict[str, np.ndarray] = {}
    cumulative: dict[str, np.ndarray] = {}
    normalized: dict[str, np.ndarray] = {}
    init_reg: dict[str, np.ndarray] = {}
    degenerate: list[str] = []
    fallback: dict[str, float] = {}
    for task in kept_tasks:
        s_arr, c_arr, ir = _align_task(task, reps_of[task], all_methods, by_key, grid_budget)
        # the initial design is shared by all methods of a repetition: one normaliser per rep
        init_r = ir[0]  # (R,)
        if np.any(np.abs(ir - init_r[None, :]) > 1e-9 * np.maximum(1.0, np.abs(init_r))):
            notes.append(f"task {task}: methods disagree on init_regret within a repetition; "
                         "each trace is normalised by its own value")
        if np.any(ir <= 0):
            degenerate.append(task)
        fallback[task] = _regret_scale(ir)
        denom = np.where(ir > 0, ir, fallback[task])[:, :, None]  # (M, R, 1)
        ok = denom > 0
        n_arr = np.where(ok, s_arr / np.where(ok, denom, 1.0), 0.0)  # (M, R, T)
        simple[task], cumulative[task], normalized[task] = s_arr, c_arr, n_arr
        init_reg[task] = init_r
    if degenerate:
        notes.append("init_regret <= 0 (initial design already optimal) in task(s) "
                     f"{degenerate}; those repetitions are normalized by the task's median "
                     "positive init_regret (0 where the task has none)")
    notes += _ill_conditioned_notes(meta_df, kept_tasks)

    rounds = _rounds_table(frames, records, task_domain, fallback, reps_of)
    return TraceSet(
        results_dir=root, budget=grid_budget, methods=tuple(all_methods),
        tasks=tuple(kept_tasks), domains={t: task_domain[t] for t in kept_tasks},
        repetitions=reps_of, simple_regret=simple, cumulative_regret=cumulative,
        normalized_regret=normalized, init_regret=init_reg, rounds=rounds, meta=meta_df,
        notes=notes,
    )


def _read_traces(
    files: list[Path], methods: Sequence[str] | None, tasks: Sequence[str] | None
) -> tuple[list[dict[str, Any]], list[pd.DataFrame]]:
    """The traces of the wanted methods and tasks: one metadata record and frame each."""
    want_m = set(methods) if methods is not None else None
    want_t = set(tasks) if tasks is not None else None
    records: list[dict[str, Any]] = []
    frames: list[pd.DataFrame] = []
    for path in files:
        frame, meta = read_trace(path)
        task = str(meta.get("task", path.parent.parent.name))
        method = str(meta.get("method", path.parent.name))
        if (want_m is not None and method not in want_m) or (
                want_t is not None and task not in want_t):
            continue
        rep_match = REP_FILE_RE.match(path.name)
        rep = int(meta.get("repetition", int(rep_match.group(1)) if rep_match else 0))
        mv_star = _meta_float(meta, "mv_star", path)
        if "init_regret" in meta and meta["init_regret"] is not None:
            init_regret = _meta_float(meta, "init_regret", path)
        else:
            init_regret = mv_star - _meta_float(meta, "init_mv_mean", path)
        if meta.get("init_incumbent_mv") is not None:
            init_simple = mv_star - _meta_float(meta, "init_incumbent_mv", path)
        elif len(frame):  # fall back to the first recorded value
            init_simple = float(frame["simple_regret"].iloc[0])
        else:
            init_simple = init_regret
        trace_budget = int(meta.get("budget", frame["run"].max() if len(frame) else 0) or 0)
        records.append({
            "task": task, "domain": str(meta.get("domain", "unknown")), "method": method,
            "repetition": rep, "budget": trace_budget, "mv_star": mv_star,
            "init_regret": init_regret, "init_simple_regret": init_simple,
            "n_rows": len(frame), "last_run": int(frame["run"].max()) if len(frame) else 0,
            "wall_time_s": meta.get("wall_time_s"), "path": str(path),
            "protocol": str(meta.get("protocol", "paper")),
            "near_optimal_share": float(meta.get("near_optimal_share") or 0.0),
        })
        frames.append(frame)
    return records, frames


def _ill_conditioned_notes(meta_df: pd.DataFrame, tasks: list[str]) -> list[str]:
    """A note per task where most configurations tie at the MV optimum (``near_optimal_share``
    of the traces, :func:`erahbo.datasets.tradeoff.near_optimal_share`; 0 in traces written
    before it)."""
    share = meta_df.groupby("task")["near_optimal_share"].max()
    return [f"task {t}: {share[t]:.0%} of the configurations are within 1 % of the MV "
            "optimum (they tie at it, e.g. they never learn and have no spread): its "
            "normalized regret is ill-conditioned, a small MV difference is a large regret"
            for t in tasks if t in share and share[t] > ILL_CONDITIONED]


def _grid_budget(meta_df: pd.DataFrame, budget: int | None, notes: list[str]) -> int:
    """Length of the common grid (notes on differing budgets and short traces)."""
    grid_budget = int(budget) if budget is not None else int(meta_df["budget"].max())
    if grid_budget < 1:
        grid_budget = int(max(1, meta_df["last_run"].max()))
    if meta_df["budget"].nunique() > 1:
        notes.append(f"traces record different budgets {sorted(meta_df['budget'].unique())}; "
                     f"all are aligned to {grid_budget} runs")
    short = meta_df[meta_df["last_run"] < grid_budget]
    if len(short):
        notes.append(f"{len(short)} of {len(meta_df)} traces end before run {grid_budget} "
                     "(candidate set exhausted, budget left smaller than a round, or unfinished); "
                     "their last value is carried forward")
    return grid_budget


def _task_domains(meta_df: pd.DataFrame, notes: list[str]) -> dict[str, str]:
    """Domain of every task (notes where the traces disagree on it or on ``mv_star``)."""
    task_domain: dict[str, str] = {}
    for task, g in meta_df.groupby("task", sort=True):
        doms = sorted(set(g["domain"]))
        if len(doms) > 1:
            notes.append(f"task {task}: traces disagree on the domain {doms}; using {doms[0]}")
        task_domain[str(task)] = doms[0]
        if np.ptp(g["mv_star"].to_numpy()) > 1e-9 * max(1.0, float(np.abs(g["mv_star"]).max())):
            notes.append(f"task {task}: traces disagree on mv_star")
    return task_domain


def _tasks_of_all_methods(
    meta_df: pd.DataFrame, all_methods: list[str], notes: list[str]
) -> dict[str, np.ndarray]:
    """Tasks that have every method, each with the repetitions all methods share."""
    reps_of: dict[str, np.ndarray] = {}
    for task, g in meta_df.groupby("task", sort=True):
        have = set(g["method"])
        if have != set(all_methods):
            notes.append(f"task {task}: dropped, missing method(s) "
                         f"{sort_methods(set(all_methods) - have)}")
            continue
        rep_sets = [set(gm["repetition"]) for _, gm in g.groupby("method")]
        common = sorted(set.intersection(*rep_sets))
        union = set.union(*rep_sets)
        if not common:
            notes.append(f"task {task}: dropped, no repetition shared by all methods")
            continue
        if len(common) < len(union):
            notes.append(f"task {task}: using the {len(common)} repetitions shared by all "
                         f"methods (of {len(union)})")
        reps_of[str(task)] = np.asarray(common, dtype=np.int64)
    return reps_of


def _align_task(
    task: str, reps: np.ndarray, all_methods: list[str], by_key: dict, grid_budget: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Simple and cumulative regret ``(M, R, T)`` on the grid, and init regrets ``(M, R)``."""
    shape = (len(all_methods), reps.size, grid_budget)
    s_arr = np.empty(shape)  # (M, R, T)
    c_arr = np.empty(shape)  # (M, R, T)
    ir = np.empty((len(all_methods), reps.size))  # (M, R)
    for mi, method in enumerate(all_methods):
        for ri, rep in enumerate(reps):
            f, rec = by_key[(task, method, int(rep))]
            run = f["run"].to_numpy()
            s_arr[mi, ri] = align_to_grid(run, f["simple_regret"].to_numpy(), grid_budget,
                                          rec["init_simple_regret"])
            c_arr[mi, ri] = align_to_grid(run, f["cumulative_regret"].to_numpy(),
                                          grid_budget, 0.0)
            ir[mi, ri] = rec["init_regret"]
    return s_arr, c_arr, ir


def _regret_scale(init_regret: np.ndarray) -> float:
    """The median of a task's positive ``init_regret`` values (any shape, e.g. ``(M, R)``);
    0.0 when none is positive."""
    pos = np.asarray(init_regret, dtype=float)
    pos = pos[pos > 0]
    return float(np.median(pos)) if pos.size else 0.0


def _rounds_table(
    frames: list[pd.DataFrame],
    records: list[dict[str, Any]],
    task_domain: dict[str, str],
    fallback: dict[str, float],
    reps_of: dict[str, np.ndarray],
) -> pd.DataFrame:
    """One row per BO round (see :class:`TraceSet`), in the order the rounds started; the
    rows of a round interleave with other rounds' when configurations ran in parallel.
    ``fallback``: kept task -> its normaliser where a repetition's ``init_regret <= 0``."""
    cols: dict[str, list[np.ndarray]] = {c: [] for c in (
        "task", "domain", "method", "repetition", "round", "config_id", "k", "n_runs",
        "config_mv", "stop_reason", "config_norm_regret")}
    keep_reps = {t: set(r.tolist()) for t, r in reps_of.items()}
    for f, rec in zip(frames, records, strict=True):
        task = rec["task"]
        if task not in fallback or rec["repetition"] not in keep_reps[task] or not len(f):
            continue
        rnd = f["round"].to_numpy()  # (n,)
        _, first, counts = np.unique(rnd, return_index=True, return_counts=True)
        _, last_rev = np.unique(rnd[::-1], return_index=True)
        order = np.argsort(first)
        starts = first[order]  # (n_rounds,) first row of each round
        ends = (rnd.size - 1 - last_rev)[order]  # (n_rounds,) its last row
        if "stop_reason" in f.columns:
            reason = f["stop_reason"].fillna("").astype(str).to_numpy(dtype=object)[ends]
        else:
            reason = np.full(starts.size, "", dtype=object)
        mv = f["config_mv"].to_numpy(dtype=np.float64)[starts]
        denom = rec["init_regret"] if rec["init_regret"] > 0 else fallback[task]
        n_r = starts.size
        cols["task"].append(np.full(n_r, task, dtype=object))
        cols["domain"].append(np.full(n_r, task_domain[task], dtype=object))
        cols["method"].append(np.full(n_r, rec["method"], dtype=object))
        cols["repetition"].append(np.full(n_r, rec["repetition"], dtype=np.int64))
        cols["round"].append(rnd[starts].astype(np.int64))
        cols["config_id"].append(f["config_id"].to_numpy()[starts].astype(np.int64))
        cols["k"].append(f["k_round"].to_numpy()[starts].astype(np.int64))
        cols["n_runs"].append(counts[order].astype(np.int64))
        cols["config_mv"].append(mv)
        cols["stop_reason"].append(reason)
        cols["config_norm_regret"].append((rec["mv_star"] - mv) / denom if denom > 0
                                          else np.zeros(n_r))
    if not cols["task"]:
        return pd.DataFrame(columns=list(cols))
    return pd.DataFrame({c: np.concatenate(v) for c, v in cols.items()})
