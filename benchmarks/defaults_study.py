"""Defaults study (issue 15): which ERAHBO settings win on real RL outcomes, one factor at a time.

Replays the bundled real ARLBench tables (or the synthetic suite) under the *user's protocol*
(each method's own initial design, counted in the budget: :class:`erahbo.Optimizer` as a user
runs it) and prints, per method, the figures the issue's done-when criteria read:

* ``runs<=0.25``: median over (task, repetition) of the first run at which the normalized MV
  regret is <= 0.25 (1 = the table's average configuration, 0 = the best); never: ``inf``;
* ``stays<=0.25``: the same median for the run from which the regret *stays* at or below 0.25
  until the budget (a recommendation that hits 0.25 by chance and leaves it again does not
  count);
* ``IQM@t``: IQM over (task, repetition) of the normalized regret after ``t`` runs;
* ``best evaluated``: IQM of the final normalized regret of the best configuration the method
  evaluated (what a perfect recommendation would score: the gap to ``IQM final`` is lost in
  identifying the best among the evaluated configurations, the rest in exploration);
* ``rank``: mean over tasks of the rank of the final regret (averaged over repetitions);
* ``k``: mean seeds per BO round (ERAHBO's adaptivity).

Variants are ERAHBO option sets (``--variants``, names in :data:`VARIANTS`) or any benchmark
method name (``rahbo-k2``, ``random-k3``, ``optuna-tpe-k3`` ...).

    python benchmarks/defaults_study.py --variants paper,ki2,ki2-bs0.25,rahbo-k2,random-k3 \\
        --alpha 1 --processing minmax --repetitions 10 --budget 500 --out results/defaults/a1
    python benchmarks/defaults_study.py --suite 19 ...          # the synthetic suite instead

Traces are kept under ``--out`` (a rerun resumes); the table is also written as
``--out/summary.csv``.
"""

from __future__ import annotations

import argparse
import functools
import os
import time
from pathlib import Path

for _v in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_v, "1")

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

# The paper's ERAHBO (Sec. 3.2 and Sec. 4): 5 initial configurations x k_init = k_max = 20 seeds,
# beta 2.5, beta_stop 1, k in [2, 20], GP hyperparameters fitted once after the initial design.
PAPER = {"n_init": 5, "k_init": 20, "k_min": 2, "k_max": 20, "beta": 2.5, "beta_stop": 1.0,
         "refit_every": 0, "max_seeds": 0, "random_interleave": 0}

# one factor at a time away from the paper, then combinations (keys: short names)
VARIANTS: dict[str, dict | tuple | None] = {
    "paper": {},
    "ki2": {"k_init": 2},
    "ki5": {"k_init": 5},
    "ki2-n10": {"k_init": 2, "n_init": 10},
    "bs0.25": {"beta_stop": 0.25},
    "bs0": {"beta_stop": 0.0},
    "refit5": {"refit_every": 5},
    "kmax10": {"k_max": 10},
    "kmin3": {"k_min": 3},
    "b1": {"beta": 1.0},
    "ki2-bs0.25": {"k_init": 2, "beta_stop": 0.25},
    "ki2-bs0": {"k_init": 2, "beta_stop": 0.0},
    "ki2-refit5": {"k_init": 2, "refit_every": 5},
    "ki2-bs0.25-refit5": {"k_init": 2, "beta_stop": 0.25, "refit_every": 5},
    "ki2-bs0-refit5": {"k_init": 2, "beta_stop": 0.0, "refit_every": 5},
    "ki2-bs0.25-refit5-kmax10": {"k_init": 2, "beta_stop": 0.25, "refit_every": 5,
                                 "k_max": 10},
    "ki3-bs0.25-refit5": {"k_init": 3, "beta_stop": 0.25, "refit_every": 5},
    "rg2": {"refit_growth": 2.0},
    "ki2-rg2": {"k_init": 2, "refit_growth": 2.0},
    "ki2-bs0.25-rg2": {"k_init": 2, "beta_stop": 0.25, "refit_growth": 2.0},
    "ki2-bs0-rg2": {"k_init": 2, "beta_stop": 0.0, "refit_growth": 2.0},
    "ki2-bs0-rb0": {"k_init": 2, "beta_stop": 0.0, "recommend_beta": 0.0},
    "ki2-bs0-rb1": {"k_init": 2, "beta_stop": 0.0, "recommend_beta": 1.0},
    "ki2-bs0.1": {"k_init": 2, "beta_stop": 0.1},
    "ki2-bs0-kmin3": {"k_init": 3, "k_min": 3, "beta_stop": 0.0},
    "ki2-bs0-n10": {"k_init": 2, "n_init": 10, "beta_stop": 0.0},
    "bs0-rb0": {"beta_stop": 0.0, "recommend_beta": 0.0},
    "default": None,  # the package's current default (no option set)
    "default-nocap": ("default", {"max_seeds": 0}),  # on top of the package's defaults
    # issue 37 (session 20), written out so that they do not depend on the package's defaults:
    # the session-19 defaults, the recommendation from 2+ seeds (the new default), also B_t
    "default-rms1-rw0": ("default", {"recommend_min_seeds": 1, "replicate_within": 0.0}),
    "default-rms2": ("default", {"recommend_min_seeds": 2, "bound_min_seeds": 1}),
    "default-rms2-bms2": ("default", {"recommend_min_seeds": 2, "bound_min_seeds": 2}),
    "default-rms2-bms2-rw0.3": ("default", {"recommend_min_seeds": 2, "bound_min_seeds": 2,
                                            "replicate_within": 0.3}),
    # session 21: the mean and variance GPs' kernel (calibration of the one-seed posterior)
    "default-matern": ("default", {"kernel": "matern52"}),
    "default-matern-vnp-1": ("default", {"kernel": "matern52", "var_noise_prior": -1.0}),
    "default-bs0.25": ("default", {"beta_stop": 0.25}),
    "default-rb0": ("default", {"recommend_beta": 0.0}),
    "default-rb1": ("default", {"recommend_beta": 1.0}),
    "default-b1": ("default", {"beta": 1.0}),
    "default-b1.5": ("default", {"beta": 1.5}),
    "default-cap30": ("default", {"max_seeds": 30}),
    "default-rg2": ("default", {"refit_growth": 2.0}),  # the default since session 26
    # the defaults of sessions 19-25: the hyperparameters fitted once, on the initial design
    "default-rg0": ("default", {"refit_growth": 0.0}),
    # session 18 (issue 27's outliers): the first refit at 20 configurations, then 80, 320
    "default-rg4": ("default", {"refit_growth": 4.0}),
    "default-n8": ("default", {"n_init": 8}),
    # the variance GP's noise prior of sessions 1-17 (BoTorch's LogNormal(-4, 1)); session 18's
    # default is -1 (erahbo.optimizer.variance_prior)
    "default-vnp4": ("default", {"var_noise_prior": -4.0}),
    "default-pool0.1": ("default", {"pool_share": 0.1}),
    "default-pool0.25": ("default", {"pool_share": 0.25}),
    "default-b1-pool0.1": ("default", {"beta": 1.0, "pool_share": 0.1}),
    "default-b1-pool0.25": ("default", {"beta": 1.0, "pool_share": 0.25}),
    "default-b1-nocap": ("default", {"beta": 1.0, "max_seeds": 0}),
    "default-ss0.02": ("default", {"seed_share": 0.02}),
    "default-ss0.05": ("default", {"seed_share": 0.05}),
    "default-ss0.1": ("default", {"seed_share": 0.1}),
    # the defaults before random_interleave (sessions 9-10), and other lengths
    "default-ri0": ("default", {"random_interleave": 0}),
    "default-ri25": ("default", {"random_interleave": 25}),
    "default-ri100": ("default", {"random_interleave": 100}),
    "default-ch0": ("default", {"challengers": False}),
    # more seeds for promising configurations late in the study (session 12): beta_stop rises
    # from 0 to 1 over the budget (the paper's exponential schedule, eq. 35)
    "default-exp20": ("default", {"beta_stop": 1.0, "schedule": "exponential", "gamma": 20.0}),
    # fewer seeds per configuration (session 13): k_max, hence max_seeds and recommend_seeds
    "default-kmax10": ("default", {"k_max": 10}),
    # a round adds at most 10 seeds, a configuration still collects up to 20 (re-selections,
    # challengers) and is recommended on its runs from 20
    "default-kmax10-cap20": ("default", {"k_max": 10, "max_seeds": 20, "recommend_seeds": 20}),
    # seeds by racing (session 14): 2, 4, 8, 16 while the sample MV leads, instead of eq. 12
    "default-race": ("default", {"stopping": "race", "k_min": 2}),  # race: sample variances
    # random rounds uniform over all configurations (the defaults of sessions 11-13), and
    # from the best quarter by the acquisition (session 14; the default: the best tenth)
    "default-top1": ("default", {"random_top": 1.0}),
    "default-top0.25": ("default", {"random_top": 0.25}),
    # one seed first (session 16, issue 29): k_init = k_min = 1, the variance of a one-seed
    # configuration from its residual (erahbo.gp.residual); n_init 10 spends the same 10
    # initial runs as 5 x 2
    "one": ("default", {"k_init": 1, "k_min": 1, "n_init": 10}),
    # two seeds per configuration on top of the package's defaults (sessions 13-18's design)
    "two": ("default", {"k_init": 2, "k_min": 2, "n_init": 5}),
    # the defaults of session 18, written out (before session 19's k_min = 1 with the paper's
    # variance prior; "two" measured before that change is this)
    "s18": ("default", {"k_init": 2, "k_min": 2, "n_init": 5, "var_noise_prior": -1.0}),
    "one-kmin2": ("default", {"k_init": 1, "k_min": 2, "n_init": 10}),
    "one-n5": ("default", {"k_init": 1, "k_min": 1}),
    "one-ri0": ("default", {"k_init": 1, "k_min": 1, "n_init": 10, "random_interleave": 0}),
    "one-ch0": ("default", {"k_init": 1, "k_min": 1, "n_init": 10, "challengers": False}),
    "one-plain": ("default", {"k_init": 1, "k_min": 1, "n_init": 10, "random_interleave": 0,
                              "challengers": False}),
    # one seed per BO round after the 5 x 2 design, with session 18's variance prior (-1)
    "one-ki2": ("default", {"k_min": 1, "var_noise_prior": -1.0}),
    # session 19: one-ki2's parts, one at a time (issue 29, alpha 10); one-ki2-vnp4 is the
    # package's default since session 19
    "one-ki2-vnp4": ("default", {"k_min": 1, "var_noise_prior": -4.0}),
    "one-ki2-ri0": ("default", {"k_min": 1, "var_noise_prior": -1.0, "random_interleave": 0}),
    "one-ki2-ch0": ("default", {"k_min": 1, "var_noise_prior": -1.0, "challengers": False}),
    "one-ki2-bs0.25": ("default", {"k_min": 1, "var_noise_prior": -1.0, "beta_stop": 0.25}),
    "one-ki2-rb0": ("default", {"k_min": 1, "var_noise_prior": -1.0, "recommend_beta": 0.0}),
    "one-ki2-b1": ("default", {"k_min": 1, "var_noise_prior": -1.0, "beta": 1.0}),
    "one-ki2-b1-vnp4": ("default", {"k_min": 1, "beta": 1.0, "var_noise_prior": -4.0}),
    "one-bs1": ("default", {"k_init": 1, "k_min": 1, "n_init": 10, "beta_stop": 1.0}),
    "one-bs0.25": ("default", {"k_init": 1, "k_min": 1, "n_init": 10, "beta_stop": 0.25}),
    "one-n5-plain": ("default", {"k_init": 1, "k_min": 1, "random_interleave": 0,
                                 "challengers": False}),
    "one-n5-ri0": ("default", {"k_init": 1, "k_min": 1, "random_interleave": 0}),
    "one-n5-ch0": ("default", {"k_init": 1, "k_min": 1, "challengers": False}),
    "one-n20": ("default", {"k_init": 1, "k_min": 1, "n_init": 20}),
    "one-bs0.5": ("default", {"k_init": 1, "k_min": 1, "n_init": 10, "beta_stop": 0.5}),
}
CHECKPOINTS = (100, 250, 500)


def method_specs(names: list[str]):
    from erahbo.experiments import parse_method
    from erahbo.experiments.methods import MethodSpec

    out = []
    for name in names:
        if name in VARIANTS:
            opts = VARIANTS[name]
            if opts is None:
                options = {}
            elif isinstance(opts, tuple):  # ("default", overrides of the package's defaults)
                options = dict(opts[1])
            else:
                options = {**PAPER, **opts}
            out.append(MethodSpec(name=f"v-{name}", label=f"ERAHBO {name}", method="erahbo",
                                  options=options))
        else:
            out.append(parse_method(name))
    return out


def load_tasks(args):
    from erahbo.datasets.loaders import expand_paths, load_task
    from erahbo.experiments import prepare_task

    if args.suite:
        from erahbo.datasets.synth import make_suite

        return [prepare_task(t, alpha=args.alpha, outcome_processing=args.processing)
                for t in make_suite(args.suite, seed=0)]
    paths = expand_paths([Path(p) for p in args.data])
    return [prepare_task(load_task(p), alpha=args.alpha, outcome_processing=args.processing)
            for p in paths]


def _rep_range(reps: str | None) -> tuple[int, int | None]:
    """``None``: all repetitions; ``"N"``: the first N; ``"A:B"``: repetitions A to B-1."""
    if reps is None:
        return 0, None
    if ":" in reps:
        a, b = reps.split(":")
        return int(a), int(b)
    return 0, int(reps)


def _normalizer(meta: dict) -> float:
    """The trace's initial regret, the unit of the normalized regret (1 = the initial design's
    average configuration); floored so that a zero initial regret does not divide by 0."""
    return max(float(meta["init_regret"]), 1e-12)


@functools.cache
def _read(path: str):
    """One trace and its metadata, read once per run of this script (summaries, pairs and
    per-task tables all read the same files)."""
    from erahbo.experiments.traces import read_trace

    return read_trace(path)


def selected_traces(out: Path, methods: list[str] | None = None,
                    tasks: list[str] | None = None, reps: str | None = None):
    """Yield ``(trace, meta, repetition)`` of the traces under ``out`` kept by the filters
    (``traces/<task>/<method>/rep-NNN.parquet``: filtered by path before reading). A trace's
    method is its directory's name, so that a renamed copy of a variant's traces compares
    under its new name."""
    from erahbo.experiments.traces import find_trace_files

    lo, hi = _rep_range(reps)
    for path in find_trace_files(out):
        path = Path(path)
        method, task = path.parent.name, path.parent.parent.name
        rep = int(path.stem.split("-")[-1])
        if ((methods and method not in methods) or (tasks and task not in tasks)
                or rep < lo or (hi is not None and rep >= hi)):
            continue
        trace, meta = _read(str(path))
        yield trace, {**meta, "method": method}, rep


def summarize(out: Path, budget: int, methods: list[str] | None = None,
              tasks: list[str] | None = None, reps: str | None = None,
              checkpoints: tuple[int, ...] = CHECKPOINTS) -> pd.DataFrame:
    """The summary table of the traces under ``out`` (see the module docstring), optionally
    of some methods and tasks, and of some repetitions only (``reps``: ``"N"`` the first N,
    ``"A:B"`` repetitions A to B-1), with ``IQM@t`` at ``checkpoints``."""
    from erahbo.analysis.intervals import iqm

    curves: dict[tuple[str, str], list[np.ndarray]] = {}
    ks: dict[str, list[float]] = {}
    found: dict[str, list[float]] = {}  # regret of the best configuration evaluated
    for trace, meta, _ in selected_traces(out, methods, tasks, reps):
        reg = trace["simple_regret"].to_numpy() / _normalizer(meta)
        curve = np.full(budget, reg[-1] if len(reg) else np.nan)
        curve[: min(len(reg), budget)] = reg[:budget]
        curves.setdefault((meta["method"], meta["task"]), []).append(curve)
        if len(reg):
            best = float(trace["incumbent_mv"].iloc[-1] + trace["simple_regret"].iloc[-1])
            found.setdefault(meta["method"], []).append(
                (best - float(trace["config_mv"].max())) / _normalizer(meta))
        bo = trace[trace["round"] > len(meta["initial_config_ids"])]
        ks.setdefault(meta["method"], []).append(
            float(bo.groupby("round").size().mean()) if len(bo) else np.nan)
    methods = sorted({m for m, _ in curves})
    tasks = sorted({t for _, t in curves})
    final = pd.DataFrame({m: [np.mean([c[-1] for c in curves.get((m, t), [[np.nan]])])
                              for t in tasks] for m in methods}, index=tasks)
    ranks = final.rank(axis=1).mean(axis=0)
    rows = []
    for m in methods:
        allc = np.array([c for t in tasks for c in curves.get((m, t), [])])  # (R_all, budget)
        hit = np.where((allc <= 0.25).any(axis=1), (allc <= 0.25).argmax(axis=1) + 1, np.inf)
        row = {"method": m, "runs<=0.25": float(np.median(hit)),
               "stays<=0.25": float(np.median(stays_below(allc)))}
        for t in checkpoints:
            if t <= budget:
                row[f"IQM@{t}"] = float(iqm(allc[:, t - 1]))
        row["IQM final"] = float(iqm(allc[:, -1]))
        row["best evaluated"] = float(iqm(np.asarray(found.get(m, [np.nan]))))
        row["rank"] = float(ranks[m])
        row["k"] = float(np.nanmean(ks[m]))
        row["n"] = len(allc)
        rows.append(row)
    return pd.DataFrame(rows).sort_values("rank").reset_index(drop=True)


def stays_below(curves: np.ndarray, level: float = 0.25) -> np.ndarray:
    """``(R,)`` the run from which each regret curve of ``curves (R, budget)`` stays at or
    below ``level`` to the end (inf: above it at the end): one more than the last run above."""
    above = curves > level
    last = np.where(above.any(axis=1), curves.shape[1] - 1 - above[:, ::-1].argmax(axis=1), -1)
    return np.where(above[:, -1], np.inf, last + 2.0)


def first_hits(out: Path, method: str, level: float = 0.25, tasks: list[str] | None = None,
               reps: str | None = None) -> dict[tuple[str, int], float]:
    """(task, repetition) -> first run with normalized regret <= ``level`` (inf: never)."""
    hits = {}
    for trace, meta, rep in selected_traces(out, [method], tasks, reps):
        reg = trace["simple_regret"].to_numpy() / _normalizer(meta)
        hit = reg <= level
        hits[(meta["task"], rep)] = float(hit.argmax() + 1) if hit.any() else np.inf
    return hits


def paired(out: Path, a: str, b: str, tasks: list[str] | None = None, reps: str | None = None,
           n_boot: int = 4000, seed: int = 0) -> str:
    """Runs to regret 0.25 of ``a`` against ``b`` on the same (task, repetition) pairs (common
    random numbers): the difference of the pooled medians with a 95 % bootstrap interval
    (repetitions resampled within each task) and the paired wins, ties and losses; the same
    task and repetition filters as :func:`summarize`."""
    ha, hb = first_hits(out, a, tasks=tasks, reps=reps), first_hits(out, b, tasks=tasks, reps=reps)
    keys = sorted(set(ha) & set(hb))
    if not keys:
        return f"{a} vs {b}: no common (task, repetition) pairs under {out}"
    tasks = sorted({t for t, _ in keys})
    A = {t: np.array([ha[k] for k in keys if k[0] == t]) for t in tasks}
    B = {t: np.array([hb[k] for k in keys if k[0] == t]) for t in tasks}
    rng = np.random.default_rng(seed)
    diffs = np.empty(n_boot)
    for i in range(n_boot):
        idx = {t: rng.integers(0, len(A[t]), len(A[t])) for t in tasks}
        diffs[i] = (np.median(np.concatenate([A[t][idx[t]] for t in tasks]))
                    - np.median(np.concatenate([B[t][idx[t]] for t in tasks])))
    lo, hi = np.percentile(diffs, [2.5, 97.5])
    wins = sum(ha[k] < hb[k] for k in keys)
    ties = sum(ha[k] == hb[k] for k in keys)
    med_a = np.median([ha[k] for k in keys])
    med_b = np.median([hb[k] for k in keys])
    return (f"runs to 0.25, {a} vs {b} ({len(keys)} pairs): median {med_a:g} vs {med_b:g}, "
            f"difference 95% CI [{lo:g}, {hi:g}]; {a} fewer runs in {wins}, ties {ties}, "
            f"more runs in {len(keys) - wins - ties}")


def paired_iqm(out: Path, a: str, b: str, budget: int, checkpoints: tuple[int, ...],
               tasks: list[str] | None = None, reps: str | None = None, n_boot: int = 2000,
               seed: int = 0) -> str:
    """IQM normalized regret of ``a`` minus ``b`` at each checkpoint on the same (task,
    repetition) pairs, with a 95 % bootstrap interval (repetitions resampled within each
    task, the same draws for both methods): issue 37's "no worse" when it includes 0 or
    lies below it."""
    from erahbo.analysis.intervals import iqm

    cur = dict(_regret_curves(out, budget, [a, b], tasks, reps, by_repetition=True))
    pairs = sorted({(t, r) for t, _, r in cur if (t, a, r) in cur and (t, b, r) in cur
                    and len(cur[(t, a, r)]) and len(cur[(t, b, r)])})
    names = sorted({t for t, _ in pairs})
    if not names:
        return f"IQM regret, {a} vs {b}: no common (task, repetition) pairs under {out}"

    def at(m: str, t: str, cp: int) -> np.ndarray:  # (R_t,) regret after run cp
        return np.array([cur[(t, m, r)][min(cp, len(cur[(t, m, r)])) - 1]
                         for tt, r in pairs if tt == t])

    rows = []
    for cp in checkpoints:
        xa = {t: at(a, t, cp) for t in names}
        xb = {t: at(b, t, cp) for t in names}
        rng = np.random.default_rng(seed)
        diffs = np.empty(n_boot)
        for i in range(n_boot):
            idx = {t: rng.integers(0, len(xa[t]), len(xa[t])) for t in names}
            diffs[i] = (iqm(np.concatenate([xa[t][idx[t]] for t in names]))
                        - iqm(np.concatenate([xb[t][idx[t]] for t in names])))
        d = iqm(np.concatenate(list(xa.values()))) - iqm(np.concatenate(list(xb.values())))
        lo, hi = np.percentile(diffs, [2.5, 97.5])
        rows.append(f"@{cp} {d:+.3f} [{lo:+.3f}, {hi:+.3f}]")
    return f"IQM regret, {a} minus {b} (95% CI, paired): " + "; ".join(rows)


def _regret_curves(out: Path, budget: int, methods: list[str] | None = None,
                   tasks: list[str] | None = None, reps: str | None = None,
                   by_repetition: bool = False):
    """Yield ``((task, method), regret)`` per selected trace (``by_repetition``: ``((task,
    method, repetition), regret)``): the normalized regret of its first ``budget`` runs,
    shape ``(min(runs, budget),)``."""
    for trace, meta, _ in selected_traces(out, methods, tasks, reps):
        reg = trace["simple_regret"].to_numpy()[:budget] / _normalizer(meta)
        key = (meta["task"], meta["method"])
        yield ((*key, int(meta["repetition"])) if by_repetition else key), reg


def per_task(out: Path, budget: int, methods: list[str] | None = None,
             tasks: list[str] | None = None, reps: str | None = None) -> str:
    """Two Markdown tables, task x method: the median runs to normalized regret <= 0.25 and
    the mean final normalized regret (after ``budget`` runs)."""
    hits: dict[tuple[str, str], list[float]] = {}
    final: dict[tuple[str, str], list[float]] = {}
    for key, reg in _regret_curves(out, budget, methods, tasks, reps):
        hit = reg <= 0.25
        hits.setdefault(key, []).append(float(hit.argmax() + 1) if hit.any() else np.inf)
        final.setdefault(key, []).append(float(reg[-1]) if len(reg) else np.nan)
    names = sorted({t for t, _ in hits})
    cols = [m for m in (methods or sorted({m for _, m in hits})) if any(
        (t, m) in hits for t in names)]
    out_lines = []
    for title, data, fn in (("Median runs to normalized regret <= 0.25", hits, np.median),
                            (f"Mean final normalized regret ({budget} runs)", final, np.mean)):
        table = pd.DataFrame({m: [fn(data[(t, m)]) if (t, m) in data else np.nan
                                  for t in names] for m in cols}, index=names)
        table.index.name = "task"
        out_lines += [f"{title}, per task:", "", markdown(table.reset_index()), ""]
    return "\n".join(out_lines)


def wilcoxon_vs(out: Path, budget: int, ref: str, methods: list[str] | None = None,
                tasks: list[str] | None = None, reps: str | None = None) -> str:
    """Lines comparing ``ref`` with every other method on the per-task mean final normalized
    regret (after ``budget`` runs): tasks where ``ref`` is lower, and the paired Wilcoxon
    signed-rank test over the tasks, two-sided and one-sided (H1: ``ref`` lower). With 8
    tasks the smallest two-sided p is 2 / 2^8 = 0.0078."""
    from scipy.stats import wilcoxon

    final: dict[tuple[str, str], list[float]] = {}
    for (task, method), reg in _regret_curves(out, budget, methods, tasks, reps):
        final.setdefault((method, task), []).append(float(reg[-1]) if len(reg) else np.nan)
    names = sorted({t for _, t in final})
    found = sorted({m for m, _ in final})
    if ref not in found:
        return f"--wilcoxon {ref}: no traces of that method under {out} (found: {', '.join(found)})"
    lines = []
    for m in sorted(set(found) - {ref}):
        common = [t for t in names if (ref, t) in final and (m, t) in final]
        a = np.array([np.mean(final[(ref, t)]) for t in common])
        b = np.array([np.mean(final[(m, t)]) for t in common])
        if len(common) < 2 or np.all(a == b):
            lines.append(f"final regret, {ref} vs {m}: too few tasks that differ")
            continue
        two = wilcoxon(a, b).pvalue
        one = wilcoxon(a, b, alternative="less").pvalue
        lines.append(f"final regret, {ref} vs {m}: {ref} lower on {int((a < b).sum())} of "
                     f"{len(common)} tasks, Wilcoxon two-sided p = {two:.4f}, one-sided "
                     f"p = {one:.4f}")
    return "\n".join(lines)


def _names(text: str | None) -> list[str] | None:
    return [x.strip() for x in text.split(",")] if text else None


def markdown(table: pd.DataFrame) -> str:
    """A GitHub markdown table of ``table`` (3 decimals)."""
    def cell(v: object) -> str:
        return f"{v:.3f}" if isinstance(v, float) and not float(v).is_integer() else str(v)

    head = "| " + " | ".join(table.columns) + " |"
    rule = "|" + "---|" * len(table.columns)
    body = ["| " + " | ".join(cell(v) for v in row) + " |" for row in table.itertuples(
        index=False)]
    return "\n".join([head, rule, *body])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", nargs="*", default=["data/arlbench"])
    ap.add_argument("--suite", type=int, default=0, help="synthetic suite of N tasks instead")
    ap.add_argument("--variants", default="paper,ki2,rahbo-k2,random-k3")
    ap.add_argument("--alpha", type=float, default=1.0)
    ap.add_argument("--processing", default="minmax")
    ap.add_argument("--repetitions", type=int, default=10)
    ap.add_argument("--budget", type=int, default=500)
    ap.add_argument("--workers", type=int, default=1)
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--summarize", action="store_true", help="only summarize the traces "
                    "under --out (any benchmark results directory)")
    ap.add_argument("--methods", default=None, help="--summarize: these methods only")
    ap.add_argument("--tasks", default=None, help="--summarize: these tasks only")
    ap.add_argument("--reps", default=None, help="--summarize: the first N repetitions "
                    "only ('N'), or repetitions A to B-1 ('A:B')")
    ap.add_argument("--paired", default=None, help="--summarize: 'A,B[;A,C...]' also print "
                    "the paired comparison of runs to 0.25 (bootstrap CI of the median "
                    "difference; wins, ties, losses)")
    ap.add_argument("--per-task", action="store_true", help="--summarize: also print the "
                    "median runs to 0.25 and the mean final regret per task")
    ap.add_argument("--wilcoxon", default=None, help="--summarize: compare this method "
                    "with every other on the per-task mean final regret (Wilcoxon over tasks)")
    ap.add_argument("--checkpoints", default=",".join(map(str, CHECKPOINTS)),
                    help="--summarize: runs at which IQM@t is printed (comma-separated)")
    ap.add_argument("--protocol", default="user", help="user (everything counted) | paper "
                    "(a shared 5 x 20 initial design, not counted)")
    args = ap.parse_args()

    from erahbo.experiments import StudySettings, run_study

    if args.summarize:
        cps = tuple(int(t) for t in args.checkpoints.split(",") if t.strip())
        print(markdown(summarize(args.out, args.budget, _names(args.methods),
                                 _names(args.tasks), args.reps, cps)))
        for pair in (args.paired or "").split(";"):
            if pair.strip():
                a, b = [x.strip() for x in pair.split(",")][:2]
                print(paired(args.out, a, b, _names(args.tasks), args.reps))
                print(paired_iqm(args.out, a, b, args.budget, cps, _names(args.tasks),
                                 args.reps))
        if args.per_task:
            print(per_task(args.out, args.budget, _names(args.methods), _names(args.tasks),
                           args.reps))
        if args.wilcoxon:
            print(wilcoxon_vs(args.out, args.budget, args.wilcoxon, _names(args.methods),
                              _names(args.tasks), args.reps))
        return
    tasks = load_tasks(args)
    specs = method_specs([v.strip() for v in args.variants.split(",") if v.strip()])
    settings = StudySettings(budget=args.budget, alpha=args.alpha, seed=args.seed,
                             outcome_processing=args.processing, protocol=args.protocol)
    t0 = time.perf_counter()
    run_study(tasks, specs, args.repetitions, settings, args.out, workers=args.workers)
    wall = time.perf_counter() - t0
    table = summarize(args.out, args.budget)
    table.to_csv(args.out / "summary.csv", index=False)
    print(f"{len(tasks)} tasks x {len(specs)} methods x {args.repetitions} reps, budget "
          f"{args.budget} ({args.protocol} protocol, alpha {args.alpha}, {args.processing}): "
          f"{wall:.0f} s")
    with pd.option_context("display.width", 160, "display.max_columns", 20):
        print(table.round(3).to_string(index=False))


if __name__ == "__main__":
    main()
