"""Running a study to its budget: :func:`optimize`, :func:`resume` and the journaled loop.

:func:`optimize` runs :class:`erahbo.Optimizer` on an objective (the seeds of a round on an
executor, through :func:`erahbo.optimizer.loop.drive`) until the budget of training runs is
spent; with ``journal=`` the study is recorded and resumed exactly
(:class:`erahbo.study.journaled.JournaledOptimizer`). :func:`resume` reopens a journaled study
with its settings, objective and space (:mod:`erahbo.study.rebuild`). :func:`run_journaled` is
the journaled loop for any ask/tell optimizer (:class:`erahbo.runtime.replay.JournaledStudy`).
"""

from __future__ import annotations

import os
import pickle
import sys
import threading
import time
import warnings
from collections.abc import Callable
from typing import Any

from erahbo.optimizer.core import Optimizer
from erahbo.optimizer.failure import FailurePolicy
from erahbo.optimizer.loop import drive
from erahbo.optimizer.outcomes import TrialOutcome
from erahbo.optimizer.records import Result, Trial
from erahbo.runtime.executors import Executor, make_executor
from erahbo.runtime.failure_limit import FailureLimit, FailureLimitWarning
from erahbo.runtime.journal import Journal, JournalError
from erahbo.runtime.main_guard import refuse_in_worker_start
from erahbo.runtime.replay import JournaledStudy
from erahbo.study import journaled  # noqa: F401 (registers the journaled Optimizer)
from erahbo.study.rebuild import journaled_space, load_objective, objective_spec, study_options
from erahbo.study.trials import run_trial
from erahbo.validation import check_objective, check_option

__all__ = ["optimize", "resume", "run_journaled"]

#: The failure policy of a new study of :func:`optimize` ("penalize" before 2026-11-26).
DEFAULT_FAILURES = "retry"
_FINISHED = ("ok", "penalized", "retried", "failed")  # run statuses max_failures counts


class _LimitReached(Exception):
    """Raised inside the loop when ``max_failures`` is exceeded (caught by optimize)."""


def run_journaled(
    study: JournaledStudy,
    objective: Callable[..., Any],
    *,
    budget: int | None = None,
    max_trials: int | None = None,
    executor: Executor | None = None,
    run_timeout: float | None = None,
    batch: bool | None = None,
) -> JournaledStudy:
    """The journaled loop for any ask/tell optimizer: ask, evaluate, tell until done.

    Parameters
    ----------
    study : JournaledStudy
    objective : callable
        ``objective(config, seed) -> float`` or a batch objective.
    budget : int, optional
        Stop before asking once this many runs are counted (told trials only).
    max_trials : int, optional
        Stop before asking once this many trials were told.
    executor, run_timeout, batch
        See :func:`erahbo.runtime.evaluate.evaluate`.

    Returns
    -------
    JournaledStudy
        The same study, for chaining.

    Notes
    -----
    The stopping checks are skipped while trials from before a crash are pending: the original
    run had passed them before asking those trials, and must finish them identically.
    """
    journal = study.journal

    def done() -> bool:
        if study.has_pending:
            return False
        return ((budget is not None and journal.n_counted() >= budget)
                or (max_trials is not None and journal.n_trials(told=True) >= max_trials))

    def evaluate(trial: Any) -> TrialOutcome:
        return study.evaluate(trial, objective, executor=executor, run_timeout=run_timeout,
                              batch=batch)

    drive(study, evaluate, study.tell, before_ask=done, threads=False)
    return study


def optimize(
    objective: Callable,
    space: Any,
    method: str = "erahbo",
    budget: int = 400,
    seed: int = 0,
    alpha: float = 1.0,
    beta: float | None = None,
    k_min: int | None = None,
    k_max: int | None = None,
    k: int | None = None,
    *,
    journal: str | os.PathLike[str] | None = None,
    failures: str | FailurePolicy | None = None,
    retries: int = 2,
    max_failures: int | float | None = None,
    run_timeout: float | str | None = "auto",
    executor: str | Executor | None = None,
    workers: int | None = None,
    address: str | None = None,
    callback: Callable[[Optimizer, Trial, TrialOutcome], None] | None = None,
    journal_info: dict[str, Any] | None = None,
    verify: bool = False,
    **options: Any,
) -> Result:
    """Run ``method`` on ``objective`` until ``budget`` training runs are spent.

    Parameters
    ----------
    objective : callable
        ``objective(config: dict, seed: int) -> float`` (a return to maximize), or a batch
        objective ``objective(config, seeds) -> list`` declared with
        :func:`erahbo.batch_objective`.
    space : SearchSpace or anything SearchSpace accepts
    method : {"erahbo", "rahbo", "gpucb", "random"}
    budget : int
        Training runs (seeds), initial design included.
    seed, alpha, beta, k_min, k_max, k :
        See :class:`Optimizer` (None: the default of ``preset``, see
        :class:`erahbo.optimizer.options.Options`).
    journal : str or path-like, optional
        SQLite journal (see :class:`Optimizer`): the study is recorded as it runs and, if the
        file already holds a study with the same settings, resumed from it (runs that were in
        flight at a crash are re-run with the same seed, never counted twice). A study with
        other settings is refused with the list of differences.
    failures : {"penalize", "retry", "exclude"} or None
        Policy for failed runs (None: :data:`DEFAULT_FAILURES` for a new study, the journal's
        policy when ``journal`` holds the study, so a study written under another default
        still resumes): an objective that raises, returns NaN/inf/non-numbers, exceeds
        ``run_timeout`` or whose worker dies, or a finite return far off the scale of the
        study's returns (:mod:`erahbo.optimizer.outliers`). ``"retry"`` (default): up to
        ``retries`` new seeds, then penalize (a sporadic failure never enters the statistics;
        one that repeats on all retries is the configuration's); ``"penalize"``: the run
        counts, at the lower quartile of the feasible returns seen so far, in its
        configuration's mean and variance (a configuration failing on some seeds gets a lower
        MV but stays a candidate and a possible incumbent); ``"exclude"``: the configuration
        is infeasible and never proposed again.
        Failed runs count toward ``budget`` under every policy. The history shows each run's
        ``status`` and ``error`` (docs/robustness.md).
    retries : int
        Retries per failed seed under ``failures="retry"``; twice as many for a seed whose
        trial has another seed that succeeded (:meth:`FailurePolicy.retry_limit`).
    max_failures : int or float, optional
        Stop early when runs keep failing (Ray Tune's ``FailureConfig``): an int ``n`` stops
        once more than ``n`` runs failed, a float in (0, 1) once more than that share of the
        finished runs failed (after 20 runs). The result so far is returned with
        ``Result.stopped`` set and a :class:`erahbo.runtime.failure_limit.FailureLimitWarning`.
        Default None: no limit (the budget still ends every study).
    run_timeout : float, "auto" or None
        Seconds per training run; a run past it is killed and counts as failed (runs then
        execute in worker processes, one isolated child with the serial executor).
        ``"auto"`` (default): where runs execute in worker processes (``executor="process"``
        or ``"ray"``), ten times the longest run finished so far, at least 60 s (a day before
        any run finished), so that a hung run cannot hang the study; no limit with the serial
        executor, whose runs execute in this process and cannot be stopped safely (give
        seconds to run them in an isolated child with a limit). None: no limit.
    executor : {"serial", "process", "ray"} or Executor, optional
        Where runs execute (:mod:`erahbo.runtime.executors`); one executor serves the whole study
        and the seeds of a round run concurrently on it (ERAHBO: ``k_min`` at once, then one more
        at a time as the stopping rule decides). Default: ``"serial"``, or ``"process"`` when
        ``workers > 1``. An Executor instance is used as is and left running. With the
        :class:`Optimizer` option ``n_parallel=q`` (in ``**options``), ``q`` configurations are
        trained at once and all their seeds share the executor (give it ``workers`` for them).
    workers : int, optional
        Concurrent runs (process pool size; Ray: default the cluster's CPUs).
    address : str, optional
        Ray: ``"auto"`` joins the running cluster, None starts a local instance.
    callback : callable, optional
        ``callback(optimizer, trial, outcome)`` after every told trial (progress display), and
        ``callback(optimizer, None, None)`` once before the first (after a resume: with the
        state rebuilt from the journal).
    journal_info : dict, optional
        JSON facts stored in the journal (not compared on resume). Default: how to rebuild the
        objective (:func:`objective_spec`), the executor and ``run_timeout``.
    verify : bool
        With a journal that holds the study: re-decide every journaled round instead of
        starting from the journal's snapshot of the optimizer, and check that both agree
        (:class:`erahbo.study.journaled.JournaledOptimizer`).
    **options :
        Further :class:`Optimizer` options (``beta_stop``, ``schedule``, ``n_init``, ...).

    Returns
    -------
    Result
    """
    refuse_in_worker_start()  # a worker re-importing a script without a __main__ guard
    if budget is None:
        raise ValueError("optimize: budget must be an int (training runs)")
    batch = check_objective(objective)
    if run_timeout is not None:
        check_option("run_timeout", run_timeout)
    limit = FailureLimit.coerce(max_failures)
    kind = _executor_kind(executor, workers)
    if kind in ("process", "ray") or run_timeout not in (None, "auto"):
        _check_picklable(objective, kind if kind != "serial" else "serial with run_timeout")
    if journal is not None and journal_info is None:
        journal_info = _default_info(objective, kind, workers, address, run_timeout)
    stored = None if journal is None else _stored_study(journal)  # (settings, info) or None
    if stored is not None:
        check_same_objective(journal, stored[1], journal_info)
    if failures is None:
        failures, retries = _journaled_failures(stored, retries)
    named = {n: v for n, v in (("beta", beta), ("k_min", k_min), ("k_max", k_max), ("k", k))
             if v is not None}
    if verify:
        if journal is None:
            raise ValueError("verify=True checks a journal's replay: give journal=PATH")
        named["verify"] = True
    opt = Optimizer(space, method, budget=budget, seed=seed, alpha=alpha, journal=journal,
                    failures=failures, retries=retries, journal_info=journal_info, **named,
                    **options)
    try:
        own = not isinstance(executor, Executor)
        ex = None if own else executor  # started on the first trial (none for a done study)

        start = threading.Lock()

        def evaluate(trial: Trial) -> TrialOutcome:  # in a worker thread when n_parallel > 1
            nonlocal ex
            with start:
                if ex is None:
                    ex = make_executor(kind, max_workers=workers, address=address)
            return run_trial(opt, trial, objective, executor=ex, run_timeout=run_timeout,
                             batch=batch)

        def tell(trial: Trial, outcome: TrialOutcome) -> None:
            opt.tell_outcome(trial, outcome)
            if callback is not None:
                callback(opt, trial, outcome)
            if limit.limit is not None:
                done = [r for r in outcome.runs if r.status in _FINISHED]
                limit.add([r.status for r in done], [r.error for r in done])
                if limit.exceeded:
                    raise _LimitReached

        if limit.limit is not None and opt.n_evals:  # a resumed study: its runs so far
            h = opt.result().history
            limit.add(h["status"].tolist(), h["error"].tolist())
        ok = False
        stopped = None
        try:
            if callback is not None:
                callback(opt, None, None)
            try:
                drive(opt, evaluate, tell, before_ask=opt.check_alive, threads=True)
            except _LimitReached:
                stopped = limit.message()
            ok = True
        finally:
            if own and ex is not None:
                ex.shutdown(wait=ok and stopped is None, cancel_futures=not ok or bool(stopped))
        result = opt.result()
        if stopped is not None:
            result.stopped = stopped
            warnings.warn(stopped, FailureLimitWarning, stacklevel=2)
        return result
    finally:
        opt.close()


def _stored_study(journal: Any) -> tuple[dict[str, Any], dict[str, Any]] | None:
    """``(settings, info)`` of the study in an existing journal file, read once; None for a
    new study (or a file the Optimizer will report on)."""
    path = os.fspath(journal)
    if not os.path.isfile(path) or os.path.getsize(path) == 0:
        return None
    try:
        with Journal.open(path) as j:
            return dict(j.settings), dict(j.info)
    except JournalError:
        return None  # Optimizer reports what is wrong with the file


def _journaled_failures(stored: tuple[dict[str, Any], dict[str, Any]] | None,
                        retries: int) -> tuple[str, int]:
    """``failures`` and ``retries`` of the study in the journal (:func:`_stored_study`;
    ``DEFAULT_FAILURES`` and ``retries`` for a new study): the default failure policy changed
    from ``"penalize"``, and a study keeps the policy it was written with."""
    if stored is None:
        return DEFAULT_FAILURES, retries
    kept = stored[0].get("retries")
    return stored[0].get("failures") or DEFAULT_FAILURES, retries if kept is None else int(kept)


def check_same_objective(journal: Any, stored_info: dict[str, Any],
                          info: dict[str, Any] | None) -> None:
    """Refuse to resume a journal that holds a study of another objective.

    The objective is not part of the study's settings (a function cannot be compared), so
    without this check a finished journal re-run with another objective would silently return
    the old study's results. Compared by ``"module:function"`` (or bundled task) name, when
    both the journal (``stored_info``) and this call know it.
    """
    now = (info or {}).get("objective")
    before = stored_info.get("objective")
    if now and before and before != now:
        raise ValueError(
            f"journal {os.fspath(journal)} holds a study of objective {before!r}, but this call "
            f"optimizes {now!r}; its results would be the other objective's. Use another "
            f"journal path for {now!r}, or `erahbo resume {os.fspath(journal)}` to continue "
            f"the study of {before!r}"
        )


def _executor_kind(executor: Any, workers: int | None) -> str:
    if workers is not None:
        check_option("workers", workers)
    if isinstance(executor, Executor):
        return "custom"
    if executor is None:
        return "process" if workers is not None and workers > 1 else "serial"
    if executor not in ("serial", "process", "ray"):
        raise ValueError(
            f"executor={executor!r} is not known; use 'serial', 'process', 'ray' or an "
            "erahbo.runtime.executors.Executor"
        )
    if executor == "serial" and workers is not None and workers > 1:
        raise ValueError(
            f"workers={workers} needs executor='process' or 'ray'; the serial executor runs "
            "one training run at a time"
        )
    return str(executor)


def _check_picklable(objective: Any, where: str) -> None:
    try:
        pickle.dumps(objective)
    except Exception as exc:
        name = getattr(objective, "__qualname__", type(objective).__name__)
        raise TypeError(
            f"objective {name} cannot be sent to worker processes ({where} executor): {exc}. "
            "Define it at module level (not a lambda or a nested function) or use the serial "
            "executor without run_timeout"
        ) from None


def _default_info(objective: Any, kind: str, workers: int | None, address: str | None,
                  run_timeout: float | None) -> dict[str, Any]:
    return {"objective": objective_spec(objective), "workdir": os.getcwd(),
            "executor": kind, "workers": workers, "address": address,
            "run_timeout": run_timeout}


def resume(
    path: str | os.PathLike[str],
    objective: Callable[..., Any] | None = None,
    space: Any = None,
    *,
    executor: str | Executor | None = None,
    workers: int | None = None,
    address: str | None = None,
    run_timeout: float | None = None,
    callback: Callable[[Optimizer, Trial, TrialOutcome], None] | None = None,
    budget: int | None = None,
    verify: bool = False,
) -> Result:
    """Reopen a journaled study and continue it to its budget (``erahbo resume PATH``).

    Parameters
    ----------
    path : str or path-like
        The journal.
    objective : callable, optional
        Default: rebuilt from the journal's info (:func:`load_objective` of its
        ``"objective"`` entry, importing from the study's working folder).
    space : optional
        Default: the journaled space. A candidate table is not stored (only its hash): pass
        it, or let the info's ``"space_file"`` (written by ``erahbo optimize``) be reloaded.
    executor, workers, address, run_timeout :
        Default: as journaled in the info (see :func:`optimize`).
    callback : callable, optional
        See :func:`optimize`.
    budget : int, optional
        Continue a finished (or running) study to this larger budget: the journal is
        replayed exactly, then more rounds run (the extension is journaled, so a later resume
        replays it too). Default: the study's budget.
    verify : bool
        Re-decide every journaled round instead of starting from the journal's snapshot of
        the optimizer, and check that both agree (see :func:`optimize`).

    Returns
    -------
    Result
    """
    refuse_in_worker_start()  # a worker re-importing a script without a __main__ guard
    with Journal.open(path) as j:
        settings, info = dict(j.settings), dict(j.info)
        now = j.budget()
    if budget is not None:
        if now is None or int(budget) != budget or budget < now:
            raise ValueError(f"budget={budget!r} must be an int >= the study's budget ({now}) "
                             f"in journal {path}; a study can be given more budget, not less")
        settings["budget"] = int(budget)
    if objective is not None:  # the check of optimize(), which a resume's info would skip
        check_same_objective(path, info, {"objective": objective_spec(objective)})
    if objective is None:
        spec = info.get("objective")
        if not spec:
            raise ValueError(
                f"journal {path} does not say how to rebuild its objective (it was not a "
                "module-level function nor a bundled task); resume from Python with "
                "erahbo.resume(path, objective) or erahbo.optimize(objective, space, "
                "journal=path, <same settings>)"
            )
        workdir = info.get("workdir")
        if workdir and os.path.isdir(workdir) and workdir not in sys.path:
            sys.path.insert(0, workdir)
        objective, task_space = load_objective(spec)
        if space is None:
            space = task_space
    if space is None:
        space = journaled_space(str(path), settings, info)
    if executor is None and workers is None:
        kind = info.get("executor")
        executor = kind if kind in ("serial", "process", "ray") else None
        workers = info.get("workers")
        address = address if address is not None else info.get("address")
    if run_timeout is None:
        run_timeout = info.get("run_timeout")
    return optimize(objective, space, journal=path, executor=executor, workers=workers,
                    address=address, run_timeout=run_timeout, callback=callback,
                    journal_info={**info, "resumed_at": time.time()}, verify=verify,
                    **study_options(settings))
