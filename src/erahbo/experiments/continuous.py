"""The continuous benchmark: methods on known-truth continuous tasks, in the user's protocol.

The table benchmark (:mod:`erahbo.experiments.runner`) replays finite tables; here every
method runs on a continuous objective with a known MV optimum
(:mod:`erahbo.objectives.known_truth`: stochastic surrogates of the real tables, the README's
objective, Figure 1, heteroscedastic Branin) as a user runs it:

* every training run counts from the first, the initial design included; the budget is in
  training runs;
* after every run the recommendation's true MV is recorded (erahbo's methods:
  ``Optimizer.recommend()``; Optuna TPE: its best trial; SMAC3: its incumbent);
* regret is normalized by ``MV* - mean MV under uniform sampling of the space`` (trace
  metadata ``init_regret``; ``init_mv_mean`` is that uniform mean), so 1 is a uniformly drawn
  configuration and 0 the optimum.

**The study's risk measure** (``ContinuousSettings(risk="cvar", q=0.1)``; MV with ``alpha`` by
default): the truth, the optimum, the uniform mean and so the regret are in that measure's own
terms, exact on every task (:meth:`~erahbo.objectives.synthetic.SyntheticTask.value`); the
trace columns and metadata keep their MV names (``mv``, ``mv_star``, ``init_regret``) and hold
the measure's values, as the table benchmark's do (metadata ``risk``: the measure). Every
method optimizes the study's measure unless its name sets its own (``erahbo-mv3``,
``optuna-tpe-k10-cvar``: :mod:`erahbo.experiments.measures`); SMAC3 (one seed a trial) is
risk-neutral and BTS-RED optimizes MV with the study's ``alpha``.

Methods (the names of :mod:`erahbo.experiments.methods`): ``erahbo`` (the defaults,
``erahbo.Optimizer`` ask/tell) and its variants, ``rahbo-k<K>``, ``gpucb-k<K>``,
``random-k<K>``, and the peers ``optuna-tpe-k<K>`` and ``smac``
(:mod:`erahbo.experiments.continuous_peers`).

Seeds: repetition ``r`` of the repetition set ``seed`` on a task derives the optimizer's seed
from ``(seed, r, task)`` and maps every seed a method names through a stream keyed by
``(seed, r)`` before the objective sees it (:class:`SeedStream`), so two sets are independent
and, within a repetition, a configuration run with the same seed label returns the same value
under every method.

Traces are the table benchmark's format (:mod:`erahbo.experiments.traces`), so
``erahbo report`` reads them. The command is ``benchmarks/continuous_benchmark.py``.
"""

from __future__ import annotations

import hashlib
import json
import time
import zlib
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from dataclasses import asdict, dataclass
from multiprocessing import get_context
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from erahbo import __version__
from erahbo._threads import one_blas_thread
from erahbo.datasets.tradeoff import near_optimal_share
from erahbo.experiments.continuous_peers import TraceRecorder, run_continuous_peer
from erahbo.experiments.measures import (
    StudyMeasure,
    method_measure,
    method_risk_options,
    without_risk_options,
)
from erahbo.experiments.methods import MethodSpec
from erahbo.experiments.peers import PEER_METHODS
from erahbo.experiments.runner import _fill_rounds
from erahbo.experiments.traces import trace_path, write_trace
from erahbo.optimizer.core import Optimizer
from erahbo.optimizer.loop import drive
from erahbo.optimizer.records import Trial
from erahbo.risk import RiskLike, as_risk

__all__ = ["ContinuousSettings", "SeedStream", "check_methods", "run_continuous_repetition",
           "run_continuous_study", "task_truth"]

SUITE = "continuous"


@dataclass(frozen=True)
class ContinuousSettings(StudyMeasure):
    """Settings of a continuous study.

    Attributes
    ----------
    budget : int
        Training runs per repetition, the initial design included.
    alpha : float
        Risk aversion of the MV objective (``risk="mv"``; and BTS-RED's in any study).
    seed : int
        The repetition set: repetition ``r`` uses seeds derived from ``(seed, r)``.
    risk : str
        The study's risk measure over seeds (``"mv"``, ``"cvar"``, ``"quantile"``, ...:
        :data:`erahbo.risk.MEASURES`): the truth every method's regret is in, and what the
        methods optimize unless their name sets their own. Default ``"mv"``.
    q : float or None
        ``risk="cvar"`` / ``"quantile"``: the share of worst seeds (None: 0.1).
    """

    budget: int = 200
    alpha: float = 1.0
    seed: int = 0
    risk: str = "mv"
    q: float | None = None

    def __post_init__(self) -> None:
        if isinstance(self.budget, bool) or int(self.budget) < 2:
            raise ValueError(f"budget={self.budget} must be an integer >= 2 (training runs)")
        if not float(self.alpha) >= 0:
            raise ValueError(f"alpha={self.alpha} must be >= 0")
        self.check_measure_options()
        if self.risk in ("cvar", "quantile") and self.q is None:  # one spelling per study
            object.__setattr__(self, "q", float(self.measure.q))  # type: ignore[attr-defined]
        self.measure  # noqa: B018 - one clear error for a bad risk or q, here


class SeedStream:
    """The objective seed of a method's seed label in one repetition of one set."""

    def __init__(self, set_seed: int, repetition: int) -> None:
        self.key = f"{int(set_seed)}:{int(repetition)}:"

    def __call__(self, label: int) -> int:
        digest = hashlib.blake2b((self.key + str(int(label))).encode(), digest_size=8).digest()
        return int.from_bytes(digest, "little") >> 2  # < 2**62: a positive int64


def repetition_seed(task_name: str, set_seed: int, repetition: int) -> int:
    """The optimizer's seed of one repetition (the same for every method)."""
    rng = np.random.default_rng([int(set_seed), int(repetition), zlib.crc32(task_name.encode()),
                                 7])
    return int(rng.integers(2**31))


def task_truth(task: Any, risk: RiskLike) -> dict[str, float]:
    """The optimum of the measure ``risk`` (a float: MV's ``alpha``), its uniform mean (and
    its Monte Carlo error) and the share of uniform configurations within 1 % of its range of
    the optimum; under MV's names (``mv_star``, ``uniform_mv_mean``, ...)."""
    m = as_risk(risk)
    star = float(task.value_max(m))
    uniform = np.append(task.uniform_values(m), star)
    return {"mv_star": star, "uniform_mv_mean": float(task.value_uniform_mean(m)),
            "uniform_mv_se": float(task.value_uniform_se(m)),
            "near_optimal_share": near_optimal_share(uniform)}


def check_methods(methods: Sequence[MethodSpec]) -> None:
    """Refuse a method the continuous benchmark cannot run as named: SMAC3 with ``K`` seeds
    a trial (``smac-k<K>``) runs on the tables only."""
    for m in methods:
        if m.method == "smac" and int(m.options.get("seeds_per_trial", 1)) > 1:
            raise ValueError(f"method {m.name!r}: SMAC3 with K seeds a trial (its sample "
                             "risk measure) runs on the tables only (risk_benchmark.py); "
                             "the continuous benchmark runs 'smac' (one seed a trial)")


def run_continuous_repetition(
    task: Any, method: MethodSpec, repetition: int, settings: ContinuousSettings,
    progress: Callable[[int], None] | None = None,
) -> tuple[pd.DataFrame, dict[str, Any]]:
    """One repetition of ``method`` on ``task``: its trace (one row per training run) and the
    trace metadata."""
    t0 = time.perf_counter()
    check_methods([method])
    alpha, budget = float(settings.alpha), int(settings.budget)
    rep_seed = repetition_seed(task.name, settings.seed, repetition)
    stream = SeedStream(settings.seed, repetition)
    measure = settings.measure
    truth = task_truth(task, measure)
    extra: dict[str, Any]
    if method.method in PEER_METHODS:
        trace, extra = run_continuous_peer(task, method, budget, settings, rep_seed, stream,
                                           progress)
    else:
        trace, extra = _run_optimizer(task, method, settings, rep_seed, stream, progress)
    meta = {
        "task": task.name, "domain": getattr(task, "domain", "known-truth"),
        "method": method.name, "label": method.label, "repetition": int(repetition),
        "seed": rep_seed, "set_seed": int(settings.seed), "budget": budget, "alpha": alpha,
        "risk": measure.to_json(), "method_risk": method_measure(method, settings).to_json(),
        "protocol": "user", "suite": SUITE,
        "mv_star": truth["mv_star"], "init_mv_mean": truth["uniform_mv_mean"],
        "init_regret": truth["mv_star"] - truth["uniform_mv_mean"],
        "uniform_mv_se": truth["uniform_mv_se"],
        "near_optimal_share": truth["near_optimal_share"], "init_incumbent_mv": None,
        "initial_config_ids": [], "outcome_processing": getattr(task, "meta", {}).get(
            "outcome_processing", "none"),
        "dim": int(task.space.dim), "wall_time_s": time.perf_counter() - t0,
        "erahbo_version": __version__, **extra,
    }
    return trace, meta


def _run_optimizer(task: Any, method: MethodSpec, settings: ContinuousSettings,
                   rep_seed: int, stream: SeedStream, progress: Callable[[int], None] | None
                   ) -> tuple[pd.DataFrame, dict[str, Any]]:
    """erahbo's methods through ``erahbo.Optimizer`` (ask/tell), as a user runs them, in the
    method's measure (the study's unless its name sets one); the trace in the study's."""
    budget = int(settings.budget)
    opt = Optimizer(task.space, method.method, budget=budget, seed=rep_seed,
                    initial_in_budget=True, **without_risk_options(method.options),
                    **method_risk_options(method, settings))
    measure = settings.measure
    rec = TraceRecorder(task, measure, task.value_max(measure))
    ids: dict[int, int] = {}  # the optimizer's config id -> the trace's

    def trace_id(cid: int, config: dict[str, Any]) -> int:
        if cid not in ids:
            ids[cid] = rec.config_id(config)
        return ids[cid]

    def evaluate(trial: Trial) -> list[float]:
        return task.sample(trial.config, [stream(s) for s in trial.seeds])

    def tell(trial: Trial, vals: list[float]) -> None:
        prev = rec.rows[-1][6] if rec.rows else None
        opt.tell(trial, vals)
        cid = trace_id(int(trial.config_id), trial.config)
        inc_id = opt.incumbent_id
        inc = cid if inc_id is None else trace_id(int(inc_id), opt.recommend())
        rec.add(int(trial.round), cid, [int(s) for s in trial.seeds], inc, prev)
        if progress is not None:
            progress(len(trial.seeds))

    drive(opt, evaluate, tell, threads=False)
    trace = rec.frame()
    _fill_rounds(trace, opt)
    return trace, {"k_init": int(opt.k_init)}


# --------------------------------------------------------------------------- the study


@dataclass(frozen=True)
class _Job:
    task: Any
    method: MethodSpec
    repetition: int
    settings: ContinuousSettings
    path: Path


def _run_job(job: _Job) -> tuple[str, int]:
    with one_blas_thread():
        trace, meta = run_continuous_repetition(job.task, job.method, job.repetition,
                                                job.settings)
    write_trace(trace, meta, job.path)
    return str(job.path), len(trace)


def _study_file(out: Path, tasks: Sequence[Any], methods: Sequence[MethodSpec],
                repetitions: int, settings: ContinuousSettings,
                truths: dict[str, dict[str, float]]) -> None:
    """``OUT/study.json``; a folder holding a study with other settings is refused."""
    out.mkdir(parents=True, exist_ok=True)
    info = {"suite": SUITE, "settings": asdict(settings), "measure": settings.measure.label,
            "methods": [{"name": m.name, "label": m.label, "options": dict(m.options)}
                        for m in methods],
            "repetitions": int(repetitions),
            "tasks": [{"name": t.name, "domain": getattr(t, "domain", "known-truth"),
                       "dim": int(t.space.dim), **truths[t.name],
                       **({"surrogate": t.meta} if hasattr(t, "meta") else {})}
                      for t in tasks]}
    path = out / "study.json"
    if path.exists():
        old = json.loads(path.read_text())
        # a study written before the measures were a setting is an MV study
        old_settings = {"risk": "mv", "q": None, **old.get("settings", {})}
        if old.get("suite") != SUITE or old_settings != info["settings"]:
            raise ValueError(f"{out} holds a study with other settings ({old.get('settings')}"
                             f"); use a new --out directory or the same settings to resume")
        known = {t["name"]: t for t in old.get("tasks", [])}
        for t in info["tasks"]:
            was = known.get(t["name"])
            if was is not None and abs(was["mv_star"] - t["mv_star"]) > 1e-9:
                raise ValueError(f"{out}: task {t['name']} has another MV* than the traces "
                                 f"there ({was['mv_star']} vs {t['mv_star']}); use a new --out")
        known.update({t["name"]: t for t in info["tasks"]})
        names = {m["name"]: m for m in old.get("methods", [])}
        names.update({m["name"]: m for m in info["methods"]})
        info.update(tasks=list(known.values()), methods=list(names.values()),
                    repetitions=max(int(old.get("repetitions", 0)), repetitions))
    path.write_text(json.dumps(info, indent=2))


def run_continuous_study(
    tasks: Sequence[Any], methods: Sequence[MethodSpec], repetitions: int,
    settings: ContinuousSettings, out: str | Path, *, jobs: int = 1,
    on_done: Callable[[str, int, int], None] | None = None,
) -> dict[str, Any]:
    """Run (or resume) tasks x methods x repetitions; one trace each under ``out``.

    Parameters
    ----------
    tasks : sequence
        Known-truth tasks (:func:`erahbo.objectives.known_truth.make_task`).
    methods : sequence of MethodSpec
    repetitions : int
        Repetitions ``0..repetitions-1`` of the set ``settings.seed``.
    settings : ContinuousSettings
    out : path
        Results folder (``traces/`` and ``study.json``); finished traces are skipped.
    jobs : int
        Worker processes (1: in this process).
    on_done : callable, optional
        ``on_done(trace path, jobs done, jobs in all)`` after each job.

    Returns
    -------
    dict
        ``jobs_run``, ``jobs_skipped``.
    """
    if int(repetitions) < 1 or int(jobs) < 1:
        raise ValueError(f"repetitions={repetitions} and jobs={jobs} must be >= 1")
    out = Path(out)
    check_methods(methods)
    truths = {t.name: task_truth(t, settings.measure) for t in tasks}  # computed once, here
    _study_file(out, tasks, methods, repetitions, settings, truths)
    todo, skipped = [], 0
    for t in tasks:
        for m in methods:
            for r in range(int(repetitions)):
                path = trace_path(out, t.name, m.name, r)
                if path.exists():
                    skipped += 1
                else:
                    todo.append(_Job(t, m, r, settings, path))
    done = 0
    if jobs == 1 or len(todo) <= 1:
        for job in todo:
            p, _ = _run_job(job)
            done += 1
            if on_done is not None:
                on_done(p, done, len(todo))
    else:
        with ProcessPoolExecutor(max_workers=min(int(jobs), len(todo)),
                                 mp_context=get_context("spawn")) as ex:
            pending = {ex.submit(_run_job, job): job for job in todo}
            while pending:
                finished, _ = wait(pending, return_when=FIRST_COMPLETED)
                for f in finished:
                    job = pending.pop(f)
                    try:
                        p, _ = f.result()
                    except Exception as exc:
                        raise RuntimeError(f"continuous job {job.task.name} / "
                                           f"{job.method.name} / repetition {job.repetition} "
                                           f"failed: {type(exc).__name__}: {exc}") from exc
                    done += 1
                    if on_done is not None:
                        on_done(p, done, len(todo))
    return {"jobs_run": len(todo), "jobs_skipped": skipped}
