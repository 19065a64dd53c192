"""The one-call BO loop and journaled-study helpers (paper Sec. 3, docs/robustness.md).

:func:`optimize` runs the loop of :class:`erahbo.optimizer.Optimizer` (ask, evaluate the seeds
of the round on an executor, tell) until the budget of training runs is spent; with
``journal=`` the study is recorded and resumed exactly. :func:`resume` reopens a journaled
study with its settings (:func:`study_options`), its objective (:func:`objective_spec` /
:func:`load_objective`) and its space (:func:`load_space`). Every name here is also
importable from :mod:`erahbo.optimizer`.
"""

from __future__ import annotations

import importlib
import os
import pickle
import sys
import threading
import time
import warnings
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np

from erahbo.failure_limit import FailureLimit, FailureLimitWarning
from erahbo.failures import FailurePolicy, TrialOutcome
from erahbo.models import GPHyper
from erahbo.optimizer import Optimizer, Result, Trial
from erahbo.space import SearchSpace
from erahbo.validation import check_objective, check_options

if TYPE_CHECKING:
    from erahbo.executors import Executor

__all__ = [
    "SYNTHETIC_TASKS",
    "load_objective",
    "load_space",
    "objective_spec",
    "optimize",
    "resume",
    "study_options",
]

SYNTHETIC_TASKS = ("figure1", "branin")  # bundled tasks an objective spec may name
_FINISHED = ("ok", "penalized", "retried", "failed")  # run statuses max_failures counts


class _LimitReached(Exception):
    """Raised inside the loop when ``max_failures`` is exceeded (caught by optimize)."""


def optimize(
    objective: Callable,
    space: Any,
    method: str = "erahbo",
    budget: int = 400,
    seed: int = 0,
    alpha: float = 1.0,
    beta: float = 2.5,
    k_min: int = 2,
    k_max: int = 20,
    k: int = 20,
    *,
    journal: str | os.PathLike[str] | None = None,
    failures: str | FailurePolicy = "penalize",
    retries: int = 2,
    max_failures: int | float | None = None,
    run_timeout: float | None = None,
    executor: str | Executor | None = None,
    workers: int | None = None,
    address: str | None = None,
    callback: Callable[[Optimizer, Trial, TrialOutcome], None] | None = None,
    journal_info: dict[str, Any] | None = None,
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
        See :class:`Optimizer`.
    journal : str or path-like, optional
        SQLite journal (see :class:`Optimizer`): the study is recorded as it runs and, if the
        file already holds a study with the same settings, resumed from it (runs that were in
        flight at a crash are re-run with the same seed, never counted twice). A study with
        other settings is refused with the list of differences.
    failures : {"penalize", "retry", "exclude"}
        Policy for failed runs: an objective that raises, returns NaN/inf/non-numbers, exceeds
        ``run_timeout`` or whose worker dies. ``"penalize"`` (default): the run counts, at the
        lower quartile of the feasible returns seen so far, in its configuration's mean and
        variance (a configuration failing on some seeds gets a lower MV but stays a
        candidate and a possible incumbent); ``"retry"``: up to ``retries`` new seeds, then
        penalize; ``"exclude"``: the configuration is infeasible and never proposed again.
        Failed runs count toward ``budget`` under every policy. The history shows each run's
        ``status`` and ``error`` (docs/robustness.md).
    retries : int
        Retries per failed seed under ``failures="retry"``.
    max_failures : int or float, optional
        Stop early when runs keep failing (Ray Tune's ``FailureConfig``): an int ``n`` stops
        once more than ``n`` runs failed, a float in (0, 1) once more than that share of the
        finished runs failed (after 20 runs). The result so far is returned with
        ``Result.stopped`` set and a :class:`erahbo.failure_limit.FailureLimitWarning`.
        Default None: no limit (the budget still ends every study).
    run_timeout : float, optional
        Seconds per training run; a run past it is killed and counts as failed (runs then
        execute in worker processes, one isolated child with the serial executor).
    executor : {"serial", "process", "ray"} or Executor, optional
        Where runs execute (:mod:`erahbo.executors`); one executor serves the whole study and
        the seeds of a round run concurrently on it (ERAHBO: ``k_min`` at once, then one more
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
    **options :
        Further :class:`Optimizer` options (``beta_stop``, ``schedule``, ``n_init``, ...).

    Returns
    -------
    Result
    """
    if budget is None:
        raise ValueError("optimize: budget must be an int (training runs)")
    batch = check_objective(objective)
    check_options(run_timeout=run_timeout, retries=retries)
    limit = FailureLimit.coerce(max_failures)
    kind = _executor_kind(executor, workers)
    if kind in ("process", "ray") or run_timeout is not None:
        _check_picklable(objective, kind if kind != "serial" else "serial with run_timeout")
    if journal is not None and journal_info is None:
        journal_info = _default_info(objective, kind, workers, address, run_timeout)
    if journal is not None:
        _check_same_objective(journal, journal_info)
    opt = Optimizer(space, method, budget=budget, seed=seed, alpha=alpha, beta=beta,
                    k_min=k_min, k_max=k_max, k=k, journal=journal, failures=failures,
                    retries=retries, journal_info=journal_info, **options)
    try:
        from erahbo._parallel import drive
        from erahbo.executors import Executor as _Executor
        from erahbo.executors import make_executor

        own = not isinstance(executor, _Executor)
        ex = None if own else executor  # started on the first trial (none for a done study)

        start = threading.Lock()

        def evaluate(trial: Trial) -> TrialOutcome:  # in a worker thread when n_parallel > 1
            nonlocal ex
            with start:
                if ex is None:
                    ex = make_executor(kind, max_workers=workers, address=address)
            return opt._evaluate(trial, objective, executor=ex, run_timeout=run_timeout,
                                 batch=batch)

        def tell(trial: Trial, outcome: TrialOutcome) -> None:
            opt._tell_evaluated(trial, outcome)
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
                drive(opt, evaluate, tell, before_ask=opt._check_alive)
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


def _check_same_objective(journal: Any, info: dict[str, Any] | None) -> None:
    """Refuse to resume a journal that holds a study of another objective.

    The objective is not part of the study's settings (a function cannot be compared), so
    without this check a finished journal re-run with another objective would silently return
    the old study's results. Compared by ``"module:function"`` (or bundled task) name, when
    both the journal and this call know it.
    """
    if not os.path.isfile(os.fspath(journal)) or os.path.getsize(os.fspath(journal)) == 0:
        return
    from erahbo.journal import Journal, JournalError

    now = (info or {}).get("objective")
    if not now:
        return
    try:
        with Journal.open(journal) as j:
            before = dict(j.info).get("objective")
    except JournalError:
        return  # Optimizer reports what is wrong with the file
    if before and before != now:
        raise ValueError(
            f"journal {os.fspath(journal)} holds a study of objective {before!r}, but this call "
            f"optimizes {now!r}; its results would be the other objective's. Use another "
            f"journal path for {now!r}, or `erahbo resume {os.fspath(journal)}` to continue "
            f"the study of {before!r}"
        )


def _executor_kind(executor: Any, workers: int | None) -> str:
    from erahbo.executors import Executor as _Executor

    if workers is not None and (isinstance(workers, bool) or not isinstance(workers, int)
                                or workers < 1):
        raise ValueError(f"workers={workers!r} must be an int >= 1 (concurrent training runs)")
    if isinstance(executor, _Executor):
        return "custom"
    if executor is None:
        return "process" if workers is not None and workers > 1 else "serial"
    if executor not in ("serial", "process", "ray"):
        raise ValueError(
            f"executor={executor!r} is not known; use 'serial', 'process', 'ray' or an "
            "erahbo.executors.Executor"
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


def study_options(settings: dict[str, Any]) -> dict[str, Any]:
    """Keyword arguments of :func:`optimize` that reproduce journaled study settings.

    Parameters
    ----------
    settings : dict
        :meth:`Optimizer.study_settings` (e.g. ``Journal.open(path).settings``).

    Returns
    -------
    dict
        Everything but ``space`` (see :func:`resume` for rebuilding it).
    """
    out = {k: v for k, v in settings.items() if k not in ("space", "hyperparameters")}
    if out.get("retries") is None:
        out.pop("retries", None)
    if out.get("failures") is None:
        out.pop("failures", None)
    hyper = settings.get("hyperparameters")
    if hyper is not None:
        out["hyperparameters"] = tuple(
            GPHyper(h["kind"], np.asarray(h["lengthscales"], dtype=float), h["noise"])
            for h in hyper
        )
    return out


# ---------------------------------------------------------------------------- objectives
def objective_spec(objective: Any) -> str | None:
    """How to rebuild ``objective`` in another process, or None if it cannot be named.

    Returns ``"figure1"`` / ``"branin"`` for the bundled synthetic tasks with default
    parameters, ``"module:qualified.name"`` for an importable module-level callable.
    """
    from erahbo.objectives import synthetic

    for name, cls in (("figure1", synthetic.Figure1Task),
                      ("branin", synthetic.HeteroscedasticBranin)):
        if type(objective) is cls:
            skip = ("space", "_argmax_cache")
            mine = {k: v for k, v in vars(objective).items() if k not in skip}
            ref = {k: v for k, v in vars(cls()).items() if k not in skip}
            return name if mine == ref else None
    module = getattr(objective, "__module__", None)
    qual = getattr(objective, "__qualname__", None)
    if not module or not qual or module == "__main__" or "<" in qual:
        return None
    try:
        found = load_objective(f"{module}:{qual}")[0]
    except (ImportError, AttributeError, ValueError, TypeError):
        return None
    return f"{module}:{qual}" if found is objective else None


def load_objective(spec: str) -> tuple[Callable[..., Any], SearchSpace | None]:
    """The objective named by ``spec`` and, for a bundled task, its search space.

    Parameters
    ----------
    spec : str
        ``"figure1"`` or ``"branin"`` (bundled synthetic tasks, default parameters), or
        ``"module:function"`` (an importable callable; ``module:Class`` is instantiated
        without arguments). The current folder is importable.

    Returns
    -------
    (callable, SearchSpace or None)
    """
    if not isinstance(spec, str) or not spec.strip():
        raise ValueError(
            f"objective {spec!r} must be 'module:function' or one of {', '.join(SYNTHETIC_TASKS)}"
        )
    spec = spec.strip()
    if spec in SYNTHETIC_TASKS:
        from erahbo.objectives import synthetic

        task = (synthetic.Figure1Task() if spec == "figure1"
                else synthetic.HeteroscedasticBranin())
        return task, task.space
    if ":" not in spec:
        raise ValueError(
            f"objective {spec!r} is neither a bundled task ({', '.join(SYNTHETIC_TASKS)}) nor "
            "'module:function' (e.g. 'mytraining:train' for train() in mytraining.py)"
        )
    module, _, attr = spec.partition(":")
    if os.getcwd() not in sys.path:
        sys.path.insert(0, os.getcwd())
    try:
        obj: Any = importlib.import_module(module)
    except ImportError as exc:
        missing = getattr(exc, "name", None)
        if isinstance(exc, ModuleNotFoundError) and missing is not None and not (
            module == missing or module.startswith(missing + ".")
        ):  # the module was found, but its own import of something else failed
            raise ImportError(
                f"objective {spec!r}: module {module!r} was found but its own import failed: "
                f"{type(exc).__name__}: {exc}. Install {missing!r} in this Python environment "
                "(or fix that import), then run again"
            ) from exc
        if not isinstance(exc, ModuleNotFoundError) or missing is None:
            raise ImportError(
                f"objective {spec!r}: importing module {module!r} failed: "
                f"{type(exc).__name__}: {exc}. Fix that import in the module, then run again"
            ) from exc
        raise ImportError(
            f"objective {spec!r}: cannot import module {module!r} ({exc}); run from the folder "
            "that holds it or add that folder to PYTHONPATH"
        ) from exc
    except Exception as exc:  # the module's own code raised while it was imported
        raise ImportError(
            f"objective {spec!r}: importing module {module!r} raised {type(exc).__name__}: "
            f"{exc}. Fix the module (python -c 'import {module}' shows the traceback)"
        ) from exc
    for part in attr.split("."):
        if not hasattr(obj, part):
            raise AttributeError(f"objective {spec!r}: module {module!r} has no {attr!r}")
        obj = getattr(obj, part)
    if isinstance(obj, type):
        obj = obj()
    if not callable(obj):
        raise TypeError(f"objective {spec!r} is a {type(obj).__name__}, not a callable")
    return obj, None


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

    Returns
    -------
    Result
    """
    from erahbo.journal import Journal

    with Journal.open(path) as j:
        settings, info = dict(j.settings), dict(j.info)
        now = j.budget()
    if budget is not None:
        if now is None or int(budget) != budget or budget < now:
            raise ValueError(f"budget={budget!r} must be an int >= the study's budget ({now}) "
                             f"in journal {path}; a study can be given more budget, not less")
        settings["budget"] = int(budget)
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
        space = _journaled_space(str(path), settings, info)
    if executor is None and workers is None:
        kind = info.get("executor")
        executor = kind if kind in ("serial", "process", "ray") else None
        workers = info.get("workers")
        address = address if address is not None else info.get("address")
    if run_timeout is None:
        run_timeout = info.get("run_timeout")
    return optimize(objective, space, journal=path, executor=executor, workers=workers,
                    address=address, run_timeout=run_timeout, callback=callback,
                    journal_info={**info, "resumed_at": time.time()},
                    **study_options(settings))


def _journaled_space(path: str, settings: dict[str, Any], info: dict[str, Any]) -> Any:
    spec = settings.get("space") or {}
    if "table" not in spec:
        return SearchSpace.from_json(spec)
    table_file = info.get("space_file")
    if not table_file:
        raise ValueError(
            f"journal {path} holds a study on a candidate table, which the journal does not "
            "store; pass the same table: erahbo.resume(path, objective, space=table)"
        )
    return load_space(table_file)


def _typed_entry(entry: Any) -> Any:
    """``["log", 1e-5, 0.1]`` -> ``("log", 1e-5, 0.1)``; other lists stay choices."""
    if not isinstance(entry, list) or not entry or not isinstance(entry[0], str):
        return entry
    kind, n_args = entry[0], len(entry) - 1
    bounds = all(isinstance(v, int | float) and not isinstance(v, bool) for v in entry[1:])
    if ((kind in ("float", "log", "int", "logint") and n_args == 2 and bounds)
            or (kind in ("cat", "ord", "const") and n_args == 1)
            or (kind == "bool" and n_args == 0)):
        return tuple(entry)
    return entry


def load_space(path: str | os.PathLike[str]) -> Any:
    """Read a search space file: what ``erahbo optimize --space`` accepts.

    Parameters
    ----------
    path : str or path-like
        ``.json``: a ConfigSpace JSON file (``ConfigurationSpace.to_json``), the JSON of
        :meth:`SearchSpace.to_json`, or a dict of :class:`SearchSpace` entries with lists for
        tuples: ``{"lr": ["log", 1e-5, 0.1], "act": ["cat", ["tanh", "relu"]]}`` (a plain
        list of values is a categorical);
        ``.csv`` / ``.parquet``: a finite candidate table (one configuration per row).

    Returns
    -------
    SearchSpace or pandas.DataFrame
        A DataFrame for a table (the optimizer makes it a finite space).
    """
    from erahbo._files import read_json_file, read_table_file

    p = os.fspath(path)
    if not os.path.isfile(p):
        raise ValueError(f"space file {p} does not exist; give a .json, .csv or .parquet file")
    ext = os.path.splitext(p)[1].lower()
    if ext in (".csv", ".parquet", ".pq"):
        df = read_table_file(p, "space file", "a candidate table: one column per "
                             "hyperparameter, one configuration per row")
        try:
            SearchSpace(df)  # checked here so that the message names the file
        except (TypeError, ValueError) as exc:
            raise ValueError(f"space file {p}: {exc}") from None
        return df
    if ext != ".json":
        raise ValueError(f"space file {p}: unknown type {ext!r}; use .json, .csv or .parquet")
    d = read_json_file(p, "space file", "a JSON search space, e.g. "
                       '{"lr": ["log", 1e-5, 0.1]}')
    if not isinstance(d, dict):
        raise ValueError(f"space file {p}: expected a JSON object, got {type(d).__name__}")
    if any(key in d for key in ("python_module_version", "format_version",
                                "json_format_version")):
        from ConfigSpace import ConfigurationSpace

        return SearchSpace(ConfigurationSpace.from_json(p))
    if "hyperparameters" not in d:  # {name: [type, ...]}: JSON has lists, the spec tuples
        d = {name: _typed_entry(entry) for name, entry in d.items()}
    try:
        return SearchSpace(d)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"space file {p}: {exc}") from None
