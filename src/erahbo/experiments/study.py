"""Run a whole benchmark study: tasks x methods x repetitions over an executor.

Each (task, method, repetition) job replays one optimization and writes one trace.  Jobs are
spread over an :class:`erahbo.runtime.executors.Executor`: the local process pool by default, or Ray
(``executor="ray"``, ``address="auto"`` to join a running cluster).  Finished traces are
skipped, so re-running a study resumes it.  Each trace is written atomically (temporary file
+ rename) by the worker that made it: a killed study never leaves a half-written trace, and
on a cluster the output folder must be shared by the workers (or be on the one machine).
"""

from __future__ import annotations

import contextlib
import json
import os
import queue
import threading
import warnings
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_COMPLETED, wait
from dataclasses import asdict, dataclass, fields
from multiprocessing import get_context
from pathlib import Path
from typing import Any

from erahbo._threads import one_blas_thread
from erahbo.experiments.measures import method_risk_options, without_risk_options
from erahbo.experiments.methods import MethodSpec
from erahbo.experiments.peers import PEER_METHODS
from erahbo.experiments.replay import ReplayTask
from erahbo.experiments.runner import StudySettings, run_repetition
from erahbo.experiments.traces import trace_path, write_trace
from erahbo.optimizer.options import Options, normalize_settings
from erahbo.optimizer.parts import for_space
from erahbo.runtime.executors import Executor, RayExecutor, make_executor
from erahbo.validation import check_option

_THREAD_VARS = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")

_OPTION_NAMES = frozenset(Options.names())


class StudySettingsMismatch(ValueError):
    """The output folder holds a study with other settings (a new folder is needed)."""


@dataclass(frozen=True)
class Job:
    """One (task, method, repetition) replay."""

    task: ReplayTask
    method: MethodSpec
    repetition: int
    settings: StudySettings
    path: Path


def _run_job(job: Job, progress_queue: Any = None) -> tuple[str, int, int]:
    """Run one job on a worker; ``(trace path, runs, runs already reported)``."""
    reported = 0

    def progress(n: int) -> None:
        nonlocal reported
        if progress_queue is not None:
            progress_queue.put(n)
            reported += n

    # the workers are the parallelism: process-pool workers also get one BLAS thread from the
    # environment at start, a Ray worker has loaded BLAS already and is limited here
    with one_blas_thread():
        trace, meta = run_repetition(job.task, job.method, job.repetition, job.settings,
                                     progress)
    write_trace(trace, meta, job.path)
    return str(job.path), len(trace), reported



def _progress_queue(stack: contextlib.ExitStack, report: Callable[[int], None]) -> Any:
    """A manager queue that process-pool workers put run counts on, drained into ``report``.

    A thread drains it while the study runs; ``stack`` stops the thread and reports what is
    left when the study ends.
    """
    manager = stack.enter_context(get_context("spawn").Manager())
    q = manager.Queue()
    stop = threading.Event()

    def drain() -> None:
        while not stop.is_set():
            try:
                report(q.get(timeout=0.2))
            except queue.Empty:
                continue

    def drain_rest() -> None:
        with contextlib.suppress(queue.Empty, OSError, EOFError):
            while True:
                report(q.get_nowait())

    th = threading.Thread(target=drain, daemon=True)
    th.start()
    stack.callback(drain_rest)  # the callbacks run in reverse order
    stack.callback(th.join)
    stack.callback(stop.set)
    return q


def _run_all(ex: Executor, jobs: list[Job], q: Any, report: Callable[[int], None]) -> None:
    """Run every job on ``ex``; a failed job stops the study with its name."""
    futures = {ex.submit(_run_job, job, q): job for job in jobs}
    pending = set(futures)
    while pending:
        finished, pending = wait(pending, return_when=FIRST_COMPLETED)
        for f in finished:
            try:
                _, n_runs, reported = f.result()
            except Exception as exc:
                job = futures[f]
                raise RuntimeError(
                    f"benchmark job {job.task.name} / {job.method.name} / "
                    f"repetition {job.repetition} failed: {type(exc).__name__}: {exc}"
                ) from exc
            if n_runs > reported:  # no queue (Ray): report the job at its end
                report(n_runs - reported)


def plan_jobs(
    tasks: Sequence[ReplayTask],
    methods: Sequence[MethodSpec],
    repetitions: int,
    settings: StudySettings,
    out: Path,
) -> tuple[list[Job], int]:
    """All jobs of a study that still lack a trace, and the number already done."""
    jobs, done = [], 0
    for task in tasks:
        for method in methods:
            for rep in range(repetitions):
                path = trace_path(out, task.name, method.name, rep)
                if path.exists():
                    done += 1
                    continue
                jobs.append(Job(task, method, rep, settings, path))
    return jobs, done


def write_study_file(out: Path, tasks: Sequence[ReplayTask], methods: Sequence[MethodSpec],
                     repetitions: int, settings: StudySettings) -> None:
    """``OUT/study.json``: settings, methods and tasks (refuses to mix settings in one dir)."""
    out.mkdir(parents=True, exist_ok=True)
    info = {
        "settings": asdict(settings),
        "methods": [{"name": m.name, "label": m.label,
                     "options": method_settings(m, settings)} for m in methods],
        "repetitions": repetitions,
        "tasks": [
            {"name": t.name, "domain": t.domain, "n_configs": t.n_configs, "n_seeds": t.n_seeds,
             "mv_star": t.mv_star, "synthetic": bool(t.meta.get("synthetic", False)),
             "n_infeasible": t.report.n_infeasible if t.report else 0}
            for t in tasks
        ],
    }
    path = out / "study.json"
    if path.exists():
        old = json.loads(path.read_text())
        # a setting added after the study was written reads as its default there
        defaults = {f.name: f.default for f in fields(StudySettings)}
        before = {**defaults, **old.get("settings", {})}
        if before != info["settings"]:
            diff = sorted(k for k in info["settings"] if before.get(k) != info["settings"][k])
            raise StudySettingsMismatch(
                f"{out} holds a study with other settings ({', '.join(diff)} differ); "
                "use a new --out directory or the same settings to resume."
            )
        names = {m["name"]: m for m in old.get("methods", [])}
        for m in info["methods"]:  # (studies written before: no options to compare)
            was = names.get(m["name"], {}).get("options")
            if was is not None and "method" in was:  # an erahbo method's: in today's schema
                was = normalize_settings(was)
            kept = any((out / "traces").glob(f"*/{m['name']}/*.parquet"))  # else: new options
            if kept and was is not None and was != m["options"]:
                diff = sorted(k for k in {*was, *m["options"]}
                              if was.get(k) != m["options"].get(k))
                raise StudySettingsMismatch(
                    f"{out} holds traces of method {m['name']!r} run with other options "
                    f"({', '.join(diff)} differ: e.g. erahbo's defaults changed since); use a "
                    f"new --out directory, or delete {out}/traces/*/{m['name']} to re-run it"
                )
        names.update({m["name"]: m for m in info["methods"]})
        info["methods"] = list(names.values())
        known = {t["name"]: t for t in old.get("tasks", [])}
        known.update({t["name"]: t for t in info["tasks"]})
        info["tasks"] = list(known.values())
        info["repetitions"] = max(int(old.get("repetitions", 0)), repetitions)
    path.write_text(json.dumps(info, indent=2))


def check_seed_counts(
    tasks: Sequence[ReplayTask], methods: Sequence[MethodSpec], settings: StudySettings
) -> list[str]:
    """Refuse a method that needs more stored seeds than a table has; say what gets capped.

    A replayed configuration has only its ``S`` stored seeds, so ``rahbo-k20`` on a 10-seed
    table would run k = 10 under the label "RAHBO (k=20)": refused, naming the table and what
    fits. ``k_init`` and ERAHBO's ``k_max`` above ``S`` run as ``S`` (a configuration's seeds
    run out): returned as notes (and warned), not silent.

    Returns
    -------
    list of str
        One note per capped setting and task.
    """
    notes: list[str] = []
    for t in tasks:
        s = t.n_seeds
        for m in methods:
            k = m.options.get("k")
            if m.method != "erahbo" and k is not None and int(k) > s:
                raise ValueError(
                    f"method {m.name} needs {int(k)} seeds per configuration, but task "
                    f"{t.name} stores {s}: a replay cannot run more seeds than the table "
                    f"holds and the label would be wrong. Use at most k={s} (e.g. "
                    f"{m.method}-k{s}), or a table with more seeds"
                )
        capped = sorted({f"{name}={value}" for m in methods
                         for name, value in _seed_needs(m, settings).items() if value > s})
        if capped:
            notes.append(f"task {t.name} stores {s} seeds per configuration: "
                         f"{' and '.join(capped)} run as {s} there")
    for note in notes:
        warnings.warn(note, UserWarning, stacklevel=2)
    return notes


def _method_options(method: MethodSpec, settings: StudySettings) -> Options:
    """The optimizer options a method runs with in a study (as in the replay, seed 0)."""
    opts = {**settings.overrides(), **without_risk_options(method.options)}
    if method.method == "erahbo":
        opts = {**settings.erahbo_overrides(), **opts}
    return for_space(Options(method=method.method, budget=settings.budget,
                             initial_in_budget=settings.protocol == "user",
                             **{k: v for k, v in opts.items() if k in _OPTION_NAMES},
                             **method_risk_options(method, settings)), finite=True)


def method_settings(method: MethodSpec, settings: StudySettings) -> dict[str, Any]:
    """What decides a method's traces besides the study settings: its resolved optimizer
    options (:meth:`Options.settings_json`: erahbo's defaults at the time of the run), or a
    peer's own options. Recorded per method in ``study.json``: a study resumed after the
    defaults changed refuses to mix traces of the old and the new defaults."""
    if method.method in PEER_METHODS:
        return dict(method.options)
    return _method_options(method, settings).settings_json()


def _seed_needs(method: MethodSpec, settings: StudySettings) -> dict[str, int]:
    """Stored seeds a method may ask of one configuration: ``k_init`` and ERAHBO's ``k_max``."""
    if method.method in PEER_METHODS:  # K per trial (checked above); the shared design's
        return {} if settings.k_init is None else {"k_init": int(settings.k_init)}
    o = _method_options(method, settings)
    need = {"k_init": o.k_init_value}
    if method.method == "erahbo":
        need["k_max"] = o.k_max
    return need


def run_study(
    tasks: Sequence[ReplayTask],
    methods: Sequence[MethodSpec],
    repetitions: int,
    settings: StudySettings,
    out: str | Path,
    *,
    workers: int = 1,
    on_progress: Callable[[int, int], None] | None = None,
    executor: str | Executor | None = None,
    address: str | None = None,
) -> dict[str, Any]:
    """Run (or resume) a study and write one trace per (task, method, repetition).

    Parameters
    ----------
    tasks, methods : sequences
        Prepared tasks (:func:`erahbo.experiments.replay.prepare_task`) and methods.
    repetitions : int
        Repetitions per (task, method) (paper: 20).
    settings : StudySettings
    out : path
        Results directory (``traces/`` and ``study.json`` go there).
    workers : int
        Concurrent jobs; 1 runs in this process (unless ``executor`` is given).
    on_progress : callable, optional
        ``on_progress(runs_done_now, runs_total)`` after every few training runs (on Ray and
        custom executors: after every finished job).
    executor : {"process", "ray"} or Executor, optional
        Where jobs run (:mod:`erahbo.runtime.executors`). Default: this process if ``workers == 1``,
        else the local process pool (``"process"``). ``"ray"`` starts a local Ray instance
        with ``workers`` CPUs, or joins a cluster with ``address``; an Executor instance is
        used as is and left running.
    address : str, optional
        Ray: ``"auto"`` joins the cluster of this machine, ``"ray://host:10001"`` a remote one.

    Returns
    -------
    dict
        ``jobs_run``, ``jobs_skipped`` and ``runs``.
    """
    check_seed_counts(tasks, methods, settings)
    check_option("repetitions", repetitions)
    check_option("workers", workers)
    out = Path(out)
    write_study_file(out, tasks, methods, repetitions, settings)
    jobs, skipped = plan_jobs(tasks, methods, repetitions, settings, out)
    total = len(jobs) * settings.budget
    runs = 0

    def report(n: int) -> None:
        nonlocal runs
        runs += n
        if on_progress is not None:
            on_progress(runs, total)


    if executor is None:
        executor = "process" if workers > 1 and len(jobs) > 1 else None
    if executor is None or not jobs:
        with one_blas_thread():  # small matrices: threads only contend (40x slower when busy)
            for job in jobs:
                trace, meta = run_repetition(job.task, job.method, job.repetition, job.settings,
                                             report)
                write_trace(trace, meta, job.path)
        return _finished(len(jobs), skipped, runs, total, on_progress)
    if not isinstance(executor, Executor) and executor not in ("process", "ray"):
        raise ValueError(
            f"executor={executor!r} is not known; use 'process', 'ray' or an "
            "erahbo.runtime.executors.Executor"
        )

    saved = {v: os.environ.get(v) for v in _THREAD_VARS}
    for v in _THREAD_VARS:  # spawned workers inherit one BLAS thread each
        os.environ[v] = "1"
    try:
        own = not isinstance(executor, Executor)
        if executor == "ray":

            ex: Executor = RayExecutor(address=address, max_workers=None if address else workers,
                                        num_cpus=None if address else workers)
        else:
            ex = make_executor(executor, max_workers=min(workers, len(jobs)))
        with contextlib.ExitStack() as stack:
            q = _progress_queue(stack, report) if executor == "process" else None
            ok = False
            try:
                _run_all(ex, jobs, q, report)
                ok = True
            finally:
                if own:
                    ex.shutdown(wait=ok, cancel_futures=not ok)
    finally:
        for v, old in saved.items():
            if old is None:
                os.environ.pop(v, None)
            else:
                os.environ[v] = old
    return _finished(len(jobs), skipped, runs, total, on_progress)


def _finished(jobs_run: int, skipped: int, runs: int, total: int,
              on_progress: Callable[[int, int], None] | None) -> dict[str, Any]:
    """The summary of a finished study; progress ends at 100 % even where a repetition ended
    one run short of its budget (a round that needs 2 seeds): the total becomes the runs done."""
    if on_progress is not None and runs < total:
        on_progress(runs, runs)
    return {"jobs_run": jobs_run, "jobs_skipped": skipped, "runs": runs}
