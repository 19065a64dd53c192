"""Failed training runs: detection, the three policies, and the penalty value.

A training run *fails* when the objective raises, returns a value that is not a finite real
number (NaN, +-inf, None, a string...), exceeds ``run_timeout`` seconds, or its worker process
dies (segfault, out-of-memory kill). A failure never stops the study; what happens next is the
study's ``failures`` policy:

``"penalize"`` (default)
    The run counts, with the penalty value (:func:`penalty_value`): a failed seed is an outcome
    of its configuration, not a veto. It enters the configuration's sample statistics like
    any return, so a configuration that fails on some seeds gets a lower mean and a larger
    spread (its MV carries the risk) and stays a candidate and a possible incumbent.
``"retry"``
    The run is repeated with a new seed derived deterministically from the failed one
    (:func:`retry_seed`), up to ``retries`` times; if every retry fails, the last is penalized.
``"exclude"``
    The configuration is marked infeasible at its first failure: the optimizer is told so
    (``tell(..., infeasible=True)``) and never proposes it again. Seeds of it not started yet
    are skipped.

Statuses of a run as recorded in histories and the journal:

============  ====================================================================
``ok``        finished with a finite return; counted with it
``penalized`` failed; counted with the penalty value
``retried``   failed; replaced by a retry with a new seed; not counted
``failed``    failed under ``"exclude"``; the configuration is infeasible; not counted
============  ====================================================================

(The journal adds ``running`` and ``interrupted`` for runs cut by a crash of the study.)

The penalty (raw scale)
-----------------------
``penalty = Q1`` of the feasible (finite) returns seen so far: the lower quartile (numpy's
linear interpolation), i.e. a failed run is worth a bottom-quartile run of the study. It is on
the returns' own scale and inside their observed range, so a failure shifts the statistics of
its configuration by an amount of the size of the differences between runs, and the
models' scale (the mean GP's noise ``Sigma_hat``, the variance GP's targets, ``rho_max^2``) stays
the data's. It is robust: one catastrophic return (a run at -1e6 among returns of 0..500) does
not move a quartile (breakdown point 25 %), where the minimum or a gap below it (OSS Vizier's
``worst - 1.5 R``, erahbo's rule before issue 13) would put every later failure there and swamp
the variances. When every feasible return seen is the same value ``v`` (no range yet), the
penalty is ``v - |v|`` (``v - 1`` at 0); with no feasible return at all it is -1, as in Vizier.
The value is recomputed consistently: for a trial it uses the feasible returns of all earlier
trials plus those of the trial itself, so it does not depend on the order in which concurrent
seeds finish, and :func:`apply_penalty` recomputes it over a whole history at once for
optimizers that refit on the current data. ``docs/robustness.md`` ("Sporadic failures") has
the measurements behind the choice.
"""

from __future__ import annotations

import concurrent.futures as cf
import hashlib
import math
import numbers
import time
import traceback
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Protocol

from erahbo.executors import Executor, RunTimeout, SerialExecutor, WorkerCrashed, worker_name

if TYPE_CHECKING:
    import numpy as np

__all__ = [
    "COUNTED",
    "MAX_ABS_RETURN",
    "PENALTY_QUANTILE",
    "POLICIES",
    "FailurePolicy",
    "Penalizer",
    "RunOutcome",
    "RunRecorder",
    "TrialOutcome",
    "apply_penalty",
    "evaluate",
    "outcomes_from_returns",
    "penalty_value",
    "retry_seed",
    "spent_runs",
    "tell_values",
    "too_large_message",
]

POLICIES = ("penalize", "retry", "exclude")
COUNTED = ("ok", "penalized")
_SPENT = ("ok", "penalized", "retried", "failed")  # finished runs: what the budget counts
_UNFINISHED = ("running", "interrupted")  # journal statuses of runs cut by a crash
MAX_ABS_RETURN = 1e150  # larger finite returns fail: their squares overflow float64
_ERROR_CHARS = 4000  # longest error text kept per run (the tail of the traceback)


# --------------------------------------------------------------------------------------------
# Policy, penalty, seeds
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class FailurePolicy:
    """What to do with a failed run.

    Parameters
    ----------
    mode : {"penalize", "retry", "exclude"}
    retries : int
        Retries per seed for ``mode="retry"`` (default 2); ignored otherwise.
    """

    mode: str = "penalize"
    retries: int = 2

    def __post_init__(self) -> None:
        if self.mode not in POLICIES:
            raise ValueError(
                f"failures={self.mode!r} is not a policy; use one of {', '.join(POLICIES)}"
            )
        if isinstance(self.retries, bool) or not isinstance(self.retries, int) or self.retries < 0:
            raise ValueError(f"retries must be an int >= 0, got {self.retries!r}")
        if self.mode == "retry" and self.retries < 1:
            raise ValueError("failures='retry' needs retries >= 1; use failures='penalize'")

    @classmethod
    def coerce(cls, failures: str | FailurePolicy, retries: int | None = None) -> FailurePolicy:
        """Build a policy from the user-facing ``failures=`` / ``retries=`` options."""
        if isinstance(failures, FailurePolicy):
            return failures if retries is None else replace(failures, retries=retries)
        if not isinstance(failures, str):
            raise TypeError(
                f"failures must be one of {', '.join(POLICIES)}, got {type(failures).__name__}"
            )
        return cls(failures, 2 if retries is None else retries)


PENALTY_QUANTILE = 0.25  # a failed run counts as the lower quartile of the feasible returns


def penalty_value(values: Iterable[float]) -> float:
    """Return counted for a penalized run, given the feasible returns seen so far.

    Parameters
    ----------
    values : iterable of float
        (n,) feasible returns seen so far; non-finite entries are ignored.

    Returns
    -------
    float
        The lower quartile ``Q1`` of the finite values (``numpy.quantile``, linear); ``v - |v|``
        (``v - 1`` at 0) when every finite value equals ``v``; -1.0 when there is none. See the
        module docstring.
    """
    import numpy as np

    v = np.asarray([float(x) for x in values], dtype=float)  # (n,)
    v = v[np.isfinite(v)]
    if v.size == 0:
        return -1.0
    worst, best = float(v.min()), float(v.max())
    if best > worst:
        return float(np.quantile(v, PENALTY_QUANTILE))
    return worst - (abs(worst) if worst != 0 else 1.0)


class Penalizer:
    """The feasible returns seen so far, from which penalties are computed.

    The study keeps one, updated with the raw return of every ``ok`` run after each trial; a
    resumed study rebuilds it from the journal in the same order.

    Attributes
    ----------
    worst, best : float
        Smallest and largest feasible return so far (NaN before the first).
    n : int
        Number of feasible returns so far.
    """

    def __init__(self, values: Iterable[float] = ()) -> None:
        self.worst = math.nan
        self.best = math.nan
        self.n = 0
        self._values: list[float] = []
        self.observe(values)

    def observe(self, values: Iterable[float]) -> None:
        """Add returns; non-finite ones are ignored."""
        for v in values:
            v = float(v)
            if not math.isfinite(v):
                continue
            if self.n == 0:
                self.worst = self.best = v
            else:
                self.worst = min(self.worst, v)
                self.best = max(self.best, v)
            self._values.append(v)
            self.n += 1

    def penalty(self, extra: Iterable[float] = ()) -> float:
        """Penalty over the returns seen so far plus ``extra`` (not stored)."""
        return penalty_value([*self._values, *(float(v) for v in extra)])

    def __repr__(self) -> str:
        return f"Penalizer(worst={self.worst!r}, best={self.best!r}, n={self.n})"


def apply_penalty(y: np.ndarray) -> np.ndarray:
    """Replace every non-finite entry of ``y`` by the penalty of its finite entries.

    For optimizers that keep failed runs as NaN and recompute the penalty over the whole
    history whenever they refit (Vizier's behaviour). ``y`` of shape (n,) or (n, 1).
    """
    import numpy as np

    y = np.asarray(y, dtype=float)  # (n,) or (n, 1)
    finite = np.isfinite(y)
    return np.where(finite, y, penalty_value(y[finite]))


def spent_runs(runs: Iterable[Any] | None, n_returns: int) -> int:
    """Training runs a told trial spent from the budget: every finished run, failed ones too.

    Failed runs count toward the budget whatever the policy (as Optuna counts failed trials),
    so a study whose runs keep failing under ``"exclude"`` or ``"retry"`` still ends.

    Parameters
    ----------
    runs : iterable of run records or None
        The trial's runs (:class:`RunOutcome` or journal records); None when the user told
        plain returns (ask/tell without runs).
    n_returns : int
        Returns told for the trial (each one a run the user made); used when ``runs`` is None.
    """
    if runs is None:
        return int(n_returns)
    return sum(getattr(r, "status", "ok") in _SPENT for r in runs)


def retry_seed(seed: int, attempt: int, avoid: Iterable[int] = ()) -> int:
    """Seed of retry number ``attempt`` (>= 1) of a run that had ``seed``.

    A deterministic hash of (seed, attempt) mapped to [1, 2**31 - 1] (never 0), skipping the
    values in ``avoid`` (the trial's own seeds).
    """
    avoid = set(avoid)
    salt = 0
    while True:
        h = hashlib.blake2b(
            f"erahbo-retry:{int(seed)}:{int(attempt)}:{salt}".encode(), digest_size=8
        )
        s = int.from_bytes(h.digest(), "little") % (2**31 - 1) + 1
        if s not in avoid:
            return s
        salt += 1


# --------------------------------------------------------------------------------------------
# Outcomes
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class RunOutcome:
    """One training run (one attempt of one seed slot of a trial).

    Attributes
    ----------
    slot : int
        Index of the seed in ``trial.seeds`` that this run serves.
    seed : int
        Seed actually used (a retry has a new seed).
    attempt : int
        0 for the trial's seed, 1, 2, ... for retries.
    status : str
        ``ok``, ``penalized``, ``retried`` or ``failed`` (see the module docstring).
    raw : float
        What the objective returned; NaN when the run failed.
    value_used : float
        Value counted by the optimizer: ``raw`` if ok, the penalty if penalized, NaN otherwise.
    error : str or None
        ``"Type: message"`` and the traceback tail, for failed runs.
    start, end : float
        Unix times at which the run started and ended on its worker.
    worker : str or None
        ``host:pid`` of the worker.
    rerun : bool
        The run repeats, with the same seed, a run that was in flight when the study crashed.
    """

    slot: int
    seed: int
    attempt: int
    status: str
    raw: float
    value_used: float
    error: str | None
    start: float
    end: float
    worker: str | None
    rerun: bool = False

    @property
    def counted(self) -> bool:
        """Whether the run counts as an observation (status ``ok`` or ``penalized``)."""
        return self.status in COUNTED


@dataclass
class TrialOutcome:
    """All runs of one trial and what to tell the optimizer.

    Attributes
    ----------
    runs : list of RunOutcome
        Every attempt (including ones finished before a resume), in the order they finished.
    returns : list of float
        (k,) value per seed slot to pass to ``optimizer.tell``: the return if ok, the penalty if
        penalized; for an excluded trial the raw returns (NaN where failed or skipped).
    raw : list of float
        (k,) raw return of the counted run per slot (NaN where failed or skipped).
    excluded : bool
        The configuration failed under ``failures="exclude"``: tell it with ``infeasible=True``.
    """

    runs: list[RunOutcome]
    returns: list[float]
    raw: list[float]
    excluded: bool = False

    def __iter__(self) -> Iterator[RunOutcome]:
        return iter(self.runs)

    def __len__(self) -> int:
        return len(self.runs)

    @property
    def counted(self) -> list[RunOutcome]:
        """The counted runs (one per slot unless excluded), in slot order."""
        return sorted((r for r in self.runs if r.counted), key=lambda r: r.slot)

    @property
    def n_failed(self) -> int:
        """Runs of the trial whose status is not ``ok`` (retried attempts included)."""
        return sum(r.status != "ok" for r in self.runs)


class RunRecorder(Protocol):
    """Receives runs as they start and end (the journal implements it).

    ``run_started`` must make the start durable before returning; ``run_finished`` likewise for
    the result. The token returned by ``run_started`` is handed back to ``run_finished``.
    """

    def run_started(self, slot: int, seed: int, attempt: int, rerun: bool) -> Any: ...

    def run_finished(self, token: Any, outcome: RunOutcome) -> None: ...


# --------------------------------------------------------------------------------------------
# Calling the objective (these run on the worker)
# --------------------------------------------------------------------------------------------


def _error_text(exc: BaseException) -> str:
    head = f"{type(exc).__name__}: {exc}"
    tb = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
    text = f"{head}\n{tb}" if tb else head
    return text if len(text) <= _ERROR_CHARS else head + "\n..." + text[-_ERROR_CHARS:]


def _as_return(value: Any) -> tuple[float, str | None]:
    """Check a return value: (float, None) if usable, (nan, reason) if not."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        # numpy scalars are numbers.Real; 0-d arrays are accepted through float()
        try:
            if getattr(value, "shape", None) == () and not isinstance(value, bool):
                value = float(value)
            else:
                raise TypeError
        except (TypeError, ValueError):
            return math.nan, (
                f"objective returned {type(value).__name__} {value!r:.80}, expected a float"
            )
    v = float(value)
    if math.isnan(v):
        return math.nan, "objective returned NaN"
    if math.isinf(v):
        return math.nan, f"objective returned {v}"
    if abs(v) > MAX_ABS_RETURN:
        return math.nan, too_large_message(v)
    return v, None


def too_large_message(v: float) -> str:
    """Why a finite return beyond :data:`MAX_ABS_RETURN` counts as a failed run."""
    return (
        f"objective returned {v:.6g}, beyond +-{MAX_ABS_RETURN:.0e}: its square (in the sample "
        "variance) would overflow; rescale the returns (e.g. divide by the return range)"
    )


# One run's report from the worker: (raw, error, start, end, worker)
_Report = tuple[float, "str | None", float, float, str]


def _call_objective(objective: Callable[[Any, int], Any], config: Any, seed: int) -> _Report:
    start = time.time()
    try:
        raw, error = _as_return(objective(config, seed))
    except (Exception, SystemExit) as exc:
        raw, error = math.nan, _error_text(exc)
    return raw, error, start, time.time(), worker_name()


def _call_batch(
    objective: Callable[[Any, list[int]], Any], config: Any, seeds: list[int]
) -> list[_Report]:
    start = time.time()
    try:
        values = list(objective(config, list(seeds)))
        if len(values) != len(seeds):
            raise ValueError(
                f"batch objective returned {len(values)} values for {len(seeds)} seeds"
            )
    except (Exception, SystemExit) as exc:
        end, err = time.time(), _error_text(exc)
        return [(math.nan, err, start, end, worker_name())] * len(seeds)
    end = time.time()
    return [(*_as_return(v), start, end, worker_name()) for v in values]


def is_batch_objective(objective: Any) -> bool:
    """True if the objective was declared with ``erahbo.batch_objective``.

    The decorator marks the function with ``__erahbo_batch__ = True``.
    """
    return bool(getattr(objective, "__erahbo_batch__", False))


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
    run_timeout: float | None = None,
    executor: Executor | None = None,
    penalizer: Penalizer | None = None,
    recorder: RunRecorder | None = None,
    batch: bool | None = None,
    prior: Iterable[Any] = (),
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
    run_timeout : float, optional
        Seconds per run. When set, runs execute in separate processes (a serial executor uses
        one isolated child process) and a run past the limit is killed and counts as failed.
    executor : Executor, optional
        Where runs execute; default: inline (:class:`SerialExecutor`).
    penalizer : Penalizer, optional
        Feasible returns of earlier trials (not modified here); default: none.
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

    Returns
    -------
    TrialOutcome
        Every run and the per-slot ``returns`` to tell the optimizer.
    """
    pol = FailurePolicy.coerce(policy, retries)
    seeds = [int(s) for s in seeds]
    k = len(seeds)
    if k == 0:
        raise ValueError("seeds is empty: a trial needs at least one seed")
    if batch is None:
        batch = is_batch_objective(objective)
    own_executor = executor is None
    ex: Executor = SerialExecutor() if executor is None else executor
    done: list[RunOutcome] = []
    final: dict[int, RunOutcome] = {}
    next_attempt: dict[int, int] = {}
    todo: deque[_Job] = deque()
    excluded = False

    # --- resume: take over what a crashed study already did for this trial --------------------
    prior = list(prior)
    finished_keys = {(r.slot, r.attempt) for r in prior if r.status not in _UNFINISHED}
    reruns: dict[tuple[int, int], _Job] = {}
    for rec in sorted(prior, key=lambda r: (r.slot, r.attempt)):
        if rec.status in _UNFINISHED:
            # in flight at a crash (maybe several crashes): re-run once, same seed
            if (rec.slot, rec.attempt) not in finished_keys:
                reruns.setdefault(
                    (rec.slot, rec.attempt), _Job(rec.slot, int(rec.seed), rec.attempt, True)
                )
            continue
        raw_prior = math.nan if rec.raw is None else float(rec.raw)
        out = RunOutcome(
            slot=rec.slot,
            seed=int(rec.seed),
            attempt=rec.attempt,
            status=rec.status,
            raw=raw_prior,
            value_used=raw_prior if rec.status == "ok" else math.nan,
            error=rec.error,
            start=rec.start,
            end=rec.end,
            worker=rec.worker,
            rerun=bool(getattr(rec, "rerun", False)),
        )
        done.append(out)
        if rec.status == "retried":
            next_attempt[rec.slot] = max(next_attempt.get(rec.slot, 0), rec.attempt + 1)
        else:
            final[rec.slot] = out
            excluded |= rec.status == "failed"
    reruns_l = [j for key, j in sorted(reruns.items()) if j.slot not in final]
    rerun_slots = {j.slot for j in reruns_l}
    todo.extend(reruns_l)
    for slot in range(k):
        if slot in final or slot in rerun_slots:
            continue
        a = next_attempt.get(slot, 0)
        seed = seeds[slot] if a == 0 else retry_seed(seeds[slot], a, seeds)
        todo.append(_Job(slot, seed, a, False))

    # --- run ---------------------------------------------------------------------------------
    inflight: dict[cf.Future, list[_Job]] = {}
    width = max(1, int(getattr(ex, "max_workers", 1)))

    def submit_ready() -> None:
        while todo and len(inflight) < width:
            if batch:
                group = [todo.popleft() for _ in range(len(todo))]
            else:
                group = [todo.popleft()]
            group = [j for j in group if j.rerun or not excluded]
            if not group:
                continue
            for j in group:
                j.token = (
                    recorder.run_started(j.slot, j.seed, j.attempt, j.rerun) if recorder else None
                )
                j.submitted = time.time()
            if batch:
                fut = ex.submit(
                    _call_batch, objective, config, [j.seed for j in group], timeout=run_timeout
                )
            else:
                fut = ex.submit(
                    _call_objective, objective, config, group[0].seed, timeout=run_timeout
                )
            inflight[fut] = group

    def settle(job: _Job, report: _Report) -> None:
        nonlocal excluded
        raw, error, start, end, worker = report
        if error is None:
            status, value = "ok", raw
        elif pol.mode == "retry" and job.attempt < pol.retries:
            status, value = "retried", math.nan
            nxt = job.attempt + 1
            todo.append(_Job(job.slot, retry_seed(seeds[job.slot], nxt, seeds), nxt, False))
        elif pol.mode == "exclude":
            status, value = "failed", math.nan
            excluded = True
        else:
            status, value = "penalized", math.nan  # value set once the trial is complete
        out = RunOutcome(
            job.slot,
            job.seed,
            job.attempt,
            status,
            raw,
            value,
            error,
            start,
            end,
            worker,
            job.rerun,
        )
        done.append(out)
        if status != "retried":
            final[job.slot] = out
        if recorder is not None:
            recorder.run_finished(job.token, out)

    try:
        submit_ready()
        while inflight:
            finished, _ = cf.wait(list(inflight), return_when=cf.FIRST_COMPLETED)
            for fut in sorted(finished, key=lambda f: inflight[f][0].slot):
                group = inflight.pop(fut)
                try:
                    reports = fut.result()
                    if not batch:
                        reports = [reports]
                except (RunTimeout, WorkerCrashed) as exc:
                    now = time.time()
                    who = exc.worker or "?"
                    reports = [
                        (math.nan, f"{type(exc).__name__}: {exc}", j.submitted, now, who)
                        for j in group
                    ]
                except Exception as exc:  # e.g. the objective could not be sent to a worker
                    now = time.time()
                    reports = [(math.nan, _error_text(exc), j.submitted, now, "?") for j in group]
                for j, rep in zip(group, reports, strict=True):
                    settle(j, rep)
            submit_ready()
    finally:
        if own_executor:
            ex.shutdown(wait=False, cancel_futures=True)

    # --- what to tell ------------------------------------------------------------------------
    base = penalizer if penalizer is not None else Penalizer()
    ok_raw = [r.raw for r in done if r.status == "ok"]
    pen = base.penalty(ok_raw)
    runs = [replace(r, value_used=pen) if r.status == "penalized" else r for r in done]
    final = {
        s: (replace(r, value_used=pen) if r.status == "penalized" else r) for s, r in final.items()
    }
    raw = [final[s].raw if s in final and final[s].status == "ok" else math.nan for s in range(k)]
    if excluded:
        returns = list(raw)
    else:
        missing = [s for s in range(k) if s not in final]
        if missing:  # pragma: no cover - defensive: every slot ends ok or penalized
            raise RuntimeError(f"internal error: seed slots {missing} have no final run")
        returns = [final[s].value_used for s in range(k)]
    return TrialOutcome(runs=runs, returns=returns, raw=raw, excluded=excluded)


def tell_values(returns: Any, trial_id: int | None = None) -> list[float]:
    """The returns a user tells for one trial, as floats (None: a failed run, NaN).

    Raises
    ------
    ValueError
        For a string, or an entry that is not a number, naming the entry and the fix.
    """
    which = "" if trial_id is None else f" of trial {trial_id}"
    if isinstance(returns, str | bytes):
        raise ValueError(
            f"tell: returns{which} must be numbers, one per seed of trial.seeds (a list), got "
            f"the {type(returns).__name__} {returns!r:.60}; report a failed run as "
            "float('nan') or None"
        )
    if isinstance(returns, list | tuple):
        items = list(returns)
    else:
        import numpy as np

        items = np.atleast_1d(np.asarray(returns, dtype=object)).ravel().tolist()
    out = []
    for i, v in enumerate(items):
        if v is None:
            out.append(math.nan)
            continue
        try:
            if isinstance(v, str | bytes):
                raise TypeError
            out.append(float(v))
        except (TypeError, ValueError):
            raise ValueError(
                f"tell: return {i}{which} is {type(v).__name__} {v!r:.60}, not a number; give "
                "one float per seed (float('nan') or None for a failed run)"
            ) from None
    return out


def outcomes_from_returns(
    seeds: Sequence[int],
    returns: Sequence[Any],
    policy: str | FailurePolicy = "penalize",
    *,
    penalizer: Penalizer | None = None,
    worker: str | None = None,
    infeasible: bool = False,
    errors: Sequence[str | None] | None = None,
) -> TrialOutcome:
    """Outcome of a trial whose seeds the user ran (ask/tell mode): non-finite returns fail.

    Under ``"retry"`` the user ran the seeds, so there is nothing to retry: failures are
    penalized. Under ``"exclude"`` any failure excludes the configuration.

    Parameters
    ----------
    seeds : sequence of int
        (k,) ``trial.seeds``.
    returns : sequence
        (k,) what the user reports per seed.
    policy : {"penalize", "retry", "exclude"} or FailurePolicy
    penalizer : Penalizer, optional
        Feasible returns of earlier trials (not modified here).
    worker : str, optional
        Recorded as the worker of every run.
    infeasible : bool
        The user declares the configuration infeasible (``tell(..., infeasible=True)``):
        whatever the policy, the trial is excluded, finite returns are ``ok`` runs and
        non-finite ones ``failed``.
    errors : sequence of str or None, optional
        (k,) why each failed run failed (e.g. the trainer's message), recorded instead of
        "objective returned NaN"; ignored for finite returns.
    """
    pol = FailurePolicy.coerce(policy)
    if len(returns) != len(seeds):
        raise ValueError(
            f"tell got {len(returns)} returns for a trial with {len(seeds)} seeds; "
            "pass one return per seed of trial.seeds, in order"
        )
    if errors is not None and len(errors) != len(returns):
        raise ValueError(
            f"tell got {len(errors)} errors for {len(returns)} returns; give one per return "
            "(None for the runs that did not fail)"
        )
    now = time.time()
    runs: list[RunOutcome] = []
    for slot, (s, v) in enumerate(zip(seeds, returns, strict=True)):
        raw, error = _as_return(v)
        if error is None:
            status = "ok"
        else:
            status = "failed" if pol.mode == "exclude" or infeasible else "penalized"
            if errors is not None and errors[slot]:
                error = str(errors[slot])
        runs.append(
            RunOutcome(
                slot,
                int(s),
                0,
                status,
                raw,
                raw if error is None else math.nan,
                error,
                now,
                now,
                worker,
            )
        )
    excluded = infeasible or any(r.status == "failed" for r in runs)
    base = penalizer if penalizer is not None else Penalizer()
    pen = base.penalty(r.raw for r in runs if r.status == "ok")
    runs = [replace(r, value_used=pen) if r.status == "penalized" else r for r in runs]
    raw_list = [r.raw for r in runs]
    returns_out = raw_list if excluded else [r.value_used for r in runs]
    return TrialOutcome(runs=runs, returns=list(returns_out), raw=raw_list, excluded=excluded)
