"""erahbo: risk-aware hyperparameter optimization of reinforcement learning.

Mean-variance objective ``MV(x) = f(x) - alpha * rho^2(x)`` optimized with ERAHBO
(adaptive seeds), RAHBO (fixed seeds) or GP-UCB (risk-neutral).

>>> import erahbo
>>> space = erahbo.SearchSpace({"lr": ("log", 1e-5, 1e-1), "gamma": ("float", 0.9, 0.9999)})

Heavy submodules are imported lazily so that ``import erahbo`` stays fast.
"""

from __future__ import annotations

import importlib
from typing import Any

__version__ = "0.1.0"

_LAZY = {
    "SearchSpace": "erahbo.space",
    "Optimizer": "erahbo.study.journaled",  # (registers the journaled subclass)
    "Options": "erahbo.optimizer.options",
    "Trial": "erahbo.optimizer.records",
    "Result": "erahbo.optimizer.records",
    "optimize": "erahbo.study.run",
    "resume": "erahbo.study.run",
    "load_objective": "erahbo.study.rebuild",
    "batch_objective": "erahbo.objectives",
    "TaskData": "erahbo.datasets.format",
    "read_task": "erahbo.datasets.format",
    "write_task": "erahbo.datasets.format",
}

# Submodules reachable as attributes after a plain ``import erahbo`` (imported on first use),
# e.g. ``erahbo.diagnostics.diagnose(result)``.
_SUBMODULES = frozenset((
    "analysis", "arlbench", "datasets", "diagnostics", "experiments", "gp", "integrations",
    "objectives", "optimizer", "policies", "recommendation", "runtime", "space", "study",
    "study_status", "validation",
))

__all__ = [*sorted(_LAZY), "__version__"]


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(importlib.import_module(_LAZY[name]), name)
    if name in _SUBMODULES:
        return importlib.import_module(f"erahbo.{name}")
    raise AttributeError(f"module 'erahbo' has no attribute {name!r}")


def __dir__() -> list[str]:
    return __all__
