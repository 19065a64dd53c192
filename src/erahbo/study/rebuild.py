"""How a journaled study is rebuilt: its options, its objective and its space.

:func:`study_options` turns journaled settings back into :func:`erahbo.optimize` arguments,
:func:`objective_spec` / :func:`load_objective` name and rebuild an objective in another
process, :func:`load_space` reads a space file (what ``erahbo optimize --space`` accepts).
"""

from __future__ import annotations

import importlib
import os
import sys
from collections.abc import Callable
from typing import Any

from erahbo._files import read_json_file, read_table_file
from erahbo.objectives import synthetic
from erahbo.optimizer.options import hyper_of_json, normalize_settings
from erahbo.space import SearchSpace

__all__ = [
    "SYNTHETIC_TASKS",
    "journaled_space",
    "load_objective",
    "load_space",
    "objective_spec",
    "study_options",
]

SYNTHETIC_TASKS = ("figure1", "branin")  # bundled tasks an objective spec may name


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
    out = {k: v for k, v in normalize_settings(settings).items()
           if k not in ("space", "hyperparameters", "schema")}
    if out.get("retries") is None:
        out.pop("retries", None)
    if out.get("failures") is None:
        out.pop("failures", None)
    hyper = settings.get("hyperparameters")
    if hyper is not None:
        out["hyperparameters"] = hyper_of_json(hyper)
    return out


def objective_spec(objective: Any) -> str | None:
    """How to rebuild ``objective`` in another process, or None if it cannot be named.

    Returns ``"figure1"`` / ``"branin"`` for the bundled synthetic tasks with default
    parameters, ``"module:qualified.name"`` for an importable module-level callable.
    """
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
        without arguments) or ``"path/to/file.py:function"``. The current folder is
        importable.

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
    if module.endswith(".py"):  # a file path, as a shell completes it: import it by its stem
        path = os.path.abspath(module)
        if not os.path.isfile(path):
            raise ImportError(f"objective {spec!r}: no file {path}; give 'file.py:function' "
                              "with the path of an existing file, or 'module:function'")
        if os.path.dirname(path) not in sys.path:
            sys.path.insert(0, os.path.dirname(path))
        module = os.path.splitext(os.path.basename(path))[0]
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


def journaled_space(path: str, settings: dict[str, Any], info: dict[str, Any]) -> Any:
    """The space of a journaled study: from its settings, or its ``space_file`` (a table)."""
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


def load_space(path: str | os.PathLike[str]) -> Any:
    """Read a search space file: what ``erahbo optimize --space`` accepts.

    Parameters
    ----------
    path : str or path-like
        ``.json``: a ConfigSpace JSON file (``ConfigurationSpace.to_json``), the JSON of
        :meth:`SearchSpace.to_json`, or a dict of :class:`SearchSpace` entries with lists for
        tuples: ``{"lr": ["log", 1e-5, 0.1], "act": ["cat", ["tanh", "relu"]]}`` (a list whose
        first element is not a type name is the choices of a categorical);
        ``.csv`` / ``.parquet``: a finite candidate table (one configuration per row).

    Returns
    -------
    SearchSpace or pandas.DataFrame
        A DataFrame for a table (the optimizer makes it a finite space).
    """
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
    try:  # {name: [type, ...]}: SearchSpace reads a list that starts with a type as a tuple
        return SearchSpace(d)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"space file {p}: {exc}") from None
