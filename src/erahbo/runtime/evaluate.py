"""Running a trial's seeds: the scheduler behind every evaluation (failures, retries, resume).

:func:`evaluate` runs ``objective(config, seed)`` for every seed of one trial on an executor
(:mod:`erahbo.runtime.executors`), applies the failure policy (:mod:`erahbo.optimizer.failure`:
penalize, retry with a new seed, exclude), tells a :class:`~erahbo.runtime.failures.RunRecorder`
(the journal) of every run start and end, and after a crash of the study continues a trial
from its journaled runs (finished runs kept, interrupted ones re-run with the same seed).
"""

from __future__ import annotations

import concurrent.futures as cf
import math
import time
import traceback
from collections import deque
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from erahbo.objectives import config_copy, is_batch_objective
from erahbo.optimizer.failure import UNFINISHED, FailurePolicy, Penalizer, retry_seed
from erahbo.optimizer.outcomes import RunOutcome, TrialOutcome, as_return
from erahbo.runtime.executors import (
    AUTO,
    Executor,
    RunTimeout,
    SerialExecutor,
    WorkerCrashed,
    worker_name,
)
from erahbo.runtime.failures import RunRecorder
from erahbo.runtime.main_guard import MainGuardMissing

__all__ = ["evaluate"]

_ERROR_CHARS = 4000  # longest error text kept per run (the tail of the traceback)


# -- calling the objective (these run on the worker) ------------------------------------------
def _error_text(exc: BaseException) -> str:
    head = f"{type(exc).__name__}: {exc}"
    tb = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
    text = f"{head}\n{tb}" if tb else head
    return text if len(text) <= _ERROR_CHARS else head + "\n..." + text[-_ERROR_CHARS:]


# One run's report from the worker: (raw, error, start, end, worker)
_Report = tuple[float, "str | None", float, float, str]


def _call_objective(objective: Callable[[Any, int], Any], config: Any, seed: int) -> _Report:
    start = time.time()
    try:
        raw, error = as_return(objective(config_copy(config), seed))
    except (Exception, SystemExit) as exc:
        raw, error = math.nan, _error_text(exc)
    return raw, error, start, time.time(), worker_name()


def _call_batch(
    objective: Callable[[Any, list[int]], Any], config: Any, seeds: list[int]
) -> list[_Report]:
    start = time.time()
    try:
        values = list(objective(config_copy(config), list(seeds)))
        if len(values) != len(seeds):
            raise ValueError(
                f"batch objective returned {len(values)} values for {len(seeds)} seeds"
            )
    except (Exception, SystemExit) as exc:
        end, err = time.time(), _error_text(exc)
        return [(math.nan, err, start, end, worker_name())] * len(seeds)
    end = time.time()
    return [(*as_return(v), start, end, worker_name()) for v in values]


# --------------------------------------------------------------------------------------------
# evaluate
# --------------------------------------------------------------------------------------------


@dataclass
class _Job:
    slot: int
    seed: int
    attempt: int
    rerun: bool
    token: Any = None
    submitted: float = field(default_factory=time.time)


def evaluate(
    objective: Callable[..., Any],
    config: Any,
    seeds: Sequence[int],
    policy: str | FailurePolicy = "penalize",
    *,
    retries: int | None = None,
    run_timeout: float | str | None = None,
    executor: Executor | None = None,
    penalizer: Penalizer | None = None,
    recorder: RunRecorder | None = None,
    batch: bool | None = None,
    prior: Iterable[Any] = (),
    own: Sequence[float] = (),
) -> TrialOutcome:
    """Run ``objective(config, seed)`` for every seed of one trial, handling failures.

    Up to ``executor.max_workers`` runs are in flight at once (all ``k_min`` seeds of an ERAHBO
    round on a large enough pool); a retry is submitted as soon as its failure is seen.

    Parameters
    ----------
    objective : callable
        ``objective(config, seed) -> float``, or a batch objective
        ``objective(config, seeds) -> list[float]`` (see ``batch``).
    config : dict
        The configuration (``trial.config``).
    seeds : sequence of int
        (k,) seeds of the trial (``trial.seeds``).
    policy : {"penalize", "retry", "exclude"} or FailurePolicy
        What to do with failed runs (module docstring).
    retries : int, optional
        Retries per seed under ``"retry"`` (default 2).
    run_timeout : float or "auto", optional
        Seconds per run. When set, runs execute in separate processes (a serial executor uses
        one isolated child process) and a run past the limit is killed and counts as failed.
        ``"auto"``: the executor's automatic limit where it runs calls in worker processes
        (:class:`erahbo.runtime.executor.AutoTimeout`: ten times the longest run it finished,
        at least a minute); none on an executor that runs calls inline (serial), where a run
        cannot be stopped safely. None: no limit.
    executor : Executor, optional
        Where runs execute; default: inline (:class:`SerialExecutor`).
    penalizer : Penalizer, optional
        The study's returns so far (not modified here): the penalty and the outlier verdicts
        (:mod:`erahbo.optimizer.outliers`; while it has no scale, the trial's returns are judged
        against each other). Default: none, and no return is screened (a lone trial).
    recorder : RunRecorder, optional
        Told of every run start and end, e.g. ``journal.recorder(trial_id)``.
    batch : bool, optional
        Whether ``objective`` takes a list of seeds; default: :func:`is_batch_objective`. A batch
        call runs all pending seeds at once; ``run_timeout`` then limits the whole call.
    prior : iterable of run records
        Runs of this trial finished before a crash of the study (objects with the attributes of
        :class:`RunOutcome`, e.g. the journal's records). Finished ones are kept, ones with
        status ``interrupted`` or ``running`` are re-run with the same seed (``rerun=True``),
        and the trial continues from there.
    own : sequence of float
        The values the configuration counted before this trial (its data): a penalty is at
        most their lowest (:func:`erahbo.optimizer.failure.penalty_value`).

    Returns
    -------
    TrialOutcome
        Every run and the per-slot ``returns`` to tell the optimizer.
    """
    pol = FailurePolicy.coerce(policy, retries)
    seeds = [int(s) for s in seeds]
    if not seeds:
        raise ValueError("seeds is empty: a trial needs at least one seed")
    if batch is None:
        batch = is_batch_objective(objective)
    ex: Executor = SerialExecutor() if executor is None else executor
    pz = penalizer if penalizer is not None else Penalizer()
    if run_timeout == AUTO and getattr(ex, "auto_timeout", None) is None:
        run_timeout = None  # runs inline: no automatic limit
    run = _TrialRun(objective, config, seeds, pol, ex, recorder, bool(batch), run_timeout, pz,
                    judge=penalizer is not None and pz.center() is None)
    run.take_over(list(prior))
    try:
        run.run()
    finally:
        if executor is None:
            ex.shutdown(wait=False, cancel_futures=True)
    return run.outcome(pz, own)


class _TrialRun:
    """The runs of one trial: what is done, what is final per seed slot, what is left.

    Two verdicts wait for the trial's other seed slots, so that neither depends on the order
    in which runs finish: a return of a trial judged before the study has a scale (its first
    trial: :meth:`Penalizer.screen_among`), and, under ``"retry"``, the failure of a slot
    that used up its retries while no other seed slot of the trial has succeeded yet (it gets
    more retries once one has: :meth:`FailurePolicy.retry_limit`). Such a run is *held*: its
    end is recorded once its status is known (a crash meanwhile re-runs it with the same
    seed).
    """

    def __init__(self, objective: Callable[..., Any], config: Any, seeds: list[int],
                 pol: FailurePolicy, ex: Executor, recorder: RunRecorder | None, batch: bool,
                 run_timeout: float | str | None, penalizer: Penalizer,
                 judge: bool = False) -> None:
        self.objective, self.config, self.seeds, self.pol = objective, config, seeds, pol
        self.ex, self.recorder, self.batch, self.run_timeout = ex, recorder, batch, run_timeout
        self.penalizer = penalizer  # earlier trials' returns: the outlier verdicts, penalties
        self.judge = judge  # the study has no scale yet: the trial's returns judge each other
        self.succeeded = False  # a seed slot of the trial ended ok (more retries for the rest)
        self.done: list[RunOutcome | None] = []  # in the order runs finished (None: held)
        self.final: dict[int, RunOutcome] = {}
        self.held: dict[int, tuple[_Job, _Report, str | None, int]] = {}  # slot -> run
        self.todo: deque[_Job] = deque()
        self.excluded = False
        self.inflight: dict[cf.Future, list[_Job]] = {}

    def take_over(self, prior: list[Any]) -> None:
        """Resume: keep the finished runs of ``prior``, re-run interrupted ones, queue the rest."""
        finished_keys = {(r.slot, r.attempt) for r in prior if r.status not in UNFINISHED}
        next_attempt: dict[int, int] = {}
        reruns: dict[tuple[int, int], _Job] = {}
        for rec in sorted(prior, key=lambda r: (r.slot, r.attempt)):
            if rec.status in UNFINISHED:
                # in flight at a crash (maybe several crashes): re-run once, same seed
                if (rec.slot, rec.attempt) not in finished_keys:
                    reruns.setdefault(
                        (rec.slot, rec.attempt), _Job(rec.slot, int(rec.seed), rec.attempt, True)
                    )
                continue
            raw = math.nan if rec.raw is None else float(rec.raw)
            out = RunOutcome(slot=rec.slot, seed=int(rec.seed), attempt=rec.attempt,
                             status=rec.status, raw=raw,
                             value_used=raw if rec.status == "ok" else math.nan,
                             error=rec.error, start=rec.start, end=rec.end, worker=rec.worker,
                             rerun=bool(getattr(rec, "rerun", False)))
            self.done.append(out)
            self.succeeded |= rec.status == "ok"
            if rec.status == "retried":
                next_attempt[rec.slot] = max(next_attempt.get(rec.slot, 0), rec.attempt + 1)
            else:
                self.final[rec.slot] = out
                self.excluded |= rec.status == "failed"
        reruns_l = [j for _, j in sorted(reruns.items()) if j.slot not in self.final]
        rerun_slots = {j.slot for j in reruns_l}
        self.todo.extend(reruns_l)
        for slot, s in enumerate(self.seeds):
            if slot in self.final or slot in rerun_slots:
                continue
            a = next_attempt.get(slot, 0)
            self.todo.append(_Job(slot, s if a == 0 else retry_seed(s, a, self.seeds), a, False))

    def submit_ready(self) -> None:
        """Submit queued runs while the executor has room (a batch objective: all at once)."""
        width = max(1, int(getattr(self.ex, "max_workers", 1)))
        while self.todo and len(self.inflight) < width:
            n = len(self.todo) if self.batch else 1
            group = [self.todo.popleft() for _ in range(n)]
            group = [j for j in group if j.rerun or not self.excluded]
            if not group:
                continue
            for j in group:
                j.token = (self.recorder.run_started(j.slot, j.seed, j.attempt, j.rerun)
                           if self.recorder else None)
                j.submitted = time.time()
            if self.batch:
                fut = self.ex.submit(_call_batch, self.objective, self.config,
                                     [j.seed for j in group], timeout=self.run_timeout)
            else:
                fut = self.ex.submit(_call_objective, self.objective, self.config,
                                     group[0].seed, timeout=self.run_timeout)
            self.inflight[fut] = group

    def settle(self, job: _Job, report: _Report) -> None:
        """A finished run: its status under the policy, now or once it can be decided."""
        self.done.append(None)
        if report[1] is None and self.judge:
            self.held[job.slot] = (job, report, None, len(self.done) - 1)  # judged together
            return
        error = report[1] if report[1] is not None else self.penalizer.screen(report[0])
        self.conclude(job, report, error, len(self.done) - 1)

    def conclude(self, job: _Job, report: _Report, error: str | None, at: int,
                 wait: bool = True) -> None:
        """The run's status (a retry is queued at once); ``wait``: an exhausted slot of a
        configuration without a success yet is held instead of penalized."""
        raw, _, start, end, worker = report
        pol = self.pol
        if error is None:
            status, value = "ok", raw
            self.succeeded = True
        elif job.attempt < pol.retry_limit(self.succeeded):
            status, value = "retried", math.nan
            nxt = job.attempt + 1
            self.todo.append(_Job(job.slot, retry_seed(self.seeds[job.slot], nxt, self.seeds),
                                  nxt, False))
        elif wait and job.attempt < pol.retry_limit(True):
            self.held[job.slot] = (job, report, error, at)  # retried if a slot succeeds
            return
        elif pol.mode == "exclude":
            status, value = "failed", math.nan
            self.excluded = True
        else:
            status, value = "penalized", math.nan  # value set once the trial is complete
        out = RunOutcome(job.slot, job.seed, job.attempt, status, raw, value, error, start, end,
                         worker, job.rerun)
        self.done[at] = out
        if status != "retried":
            self.final[job.slot] = out
        if self.recorder is not None:
            self.recorder.run_finished(job.token, out)

    def resolve(self) -> None:
        """Decide the held runs that can be decided: once nothing else of the trial runs or
        waits to run, the held returns are judged against each other; an exhausted slot is
        retried as soon as a slot has succeeded, penalized once nothing else can."""
        while self.held:
            idle = not self.inflight and not any(j.rerun or not self.excluded for j in self.todo)
            judged = {s: h for s, h in self.held.items() if h[2] is None}
            if judged and idle:
                verdicts = {s: self.penalizer.screen_among(h[1][0], self._others(s))
                            for s, h in judged.items()}
                for s in sorted(judged):
                    job, report, _, at = self.held.pop(s)
                    self.conclude(job, report, verdicts[s], at)
                continue
            exhausted = sorted(s for s, h in self.held.items() if h[2] is not None)
            if not exhausted or not (self.succeeded or (idle and not judged)):
                return
            for s in exhausted:
                job, report, error, at = self.held.pop(s)
                self.conclude(job, report, error, at, wait=False)

    def _others(self, slot: int) -> list[float]:
        """The trial's returns that judge the held return of ``slot``: the other slots' ok
        and held ones, and every finite return of its runs flagged so far."""
        out = [r.raw for r in self.done if r is not None and math.isfinite(r.raw)
               and (r.status != "ok" or r.slot != slot)]
        return out + [h[1][0] for s, h in self.held.items() if s != slot and h[2] is None]

    def run(self) -> None:
        """Run until every seed slot has its final run (or the configuration is excluded)."""
        self.submit_ready()
        while self.inflight:
            finished, _ = cf.wait(list(self.inflight), return_when=cf.FIRST_COMPLETED)
            for fut in sorted(finished, key=lambda f: self.inflight[f][0].slot):
                group = self.inflight.pop(fut)
                for j, rep in zip(group, _reports(fut, group, self.batch), strict=True):
                    self.settle(j, rep)
            self.resolve()
            self.submit_ready()

    def outcome(self, penalizer: Penalizer, own: Sequence[float] = ()) -> TrialOutcome:
        """What to tell: penalties set over the whole trial (at most ``own``, the
        configuration's values before it), per-slot returns."""
        k = len(self.seeds)
        if self.held:  # pragma: no cover - defensive: resolve() decides every held run
            raise RuntimeError(f"internal error: seed slots {sorted(self.held)} undecided")
        done = [r for r in self.done if r is not None]
        pen = penalizer.penalty((r.raw for r in done if r.status == "ok"), own=own)
        runs = [replace(r, value_used=pen) if r.status == "penalized" else r for r in done]
        final = {s: (replace(r, value_used=pen) if r.status == "penalized" else r)
                 for s, r in self.final.items()}
        raw = [final[s].raw if s in final and final[s].status == "ok" else math.nan
               for s in range(k)]
        if self.excluded:
            return TrialOutcome(runs=runs, returns=list(raw), raw=raw, excluded=True)
        missing = [s for s in range(k) if s not in final]
        if missing:  # pragma: no cover - defensive: every slot ends ok or penalized
            raise RuntimeError(f"internal error: seed slots {missing} have no final run")
        returns = [final[s].value_used for s in range(k)]
        return TrialOutcome(runs=runs, returns=returns, raw=raw, excluded=False)


def _reports(fut: cf.Future, group: list[_Job], batch: bool) -> list[_Report]:
    """The reports of a finished future; a timeout or a dead worker fails every run of it."""
    try:
        reports = fut.result()
        return reports if batch else [reports]
    except MainGuardMissing:  # not a failed run: the study cannot run like this at all
        raise
    except (RunTimeout, WorkerCrashed) as exc:
        now, who = time.time(), exc.worker or "?"
        return [(math.nan, f"{type(exc).__name__}: {exc}", j.submitted, now, who)
                for j in group]
    except Exception as exc:  # e.g. the objective could not be sent to a worker
        now = time.time()
        return [(math.nan, _error_text(exc), j.submitted, now, "?") for j in group]
