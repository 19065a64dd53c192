"""A study: the journal of an optimizer, the optimizer rebuilt from it, the loop to the budget.

The optimizer (:mod:`erahbo.optimizer`) keeps no storage; this package owns the journal
(:mod:`erahbo.runtime.journal`), rebuilds an optimizer from it and records what it decides.

* :mod:`erahbo.study.journaled` — :class:`JournaledOptimizer`, what
  ``erahbo.Optimizer(..., journal=PATH)`` builds;
* :mod:`erahbo.study.opening` — :class:`StudyRecorder` (what the journal sees of an
  optimizer) and the replay that reopens a journal;
* :mod:`erahbo.study.budget` — a study extended to a larger budget, replayed exactly;
* :mod:`erahbo.study.snapshot` — the optimizer's state stored in its journal (resume without
  re-deciding every round);
* :mod:`erahbo.study.run` — :func:`optimize`, :func:`resume`, :func:`run_journaled`;
* :mod:`erahbo.study.trials` — :func:`run_trial`: a trial's seeds run under the optimizer's
  failure rule (the optimizer only asks and tells);
* :mod:`erahbo.study.rebuild` — a journaled study's options, objective and space.
"""

from __future__ import annotations

from erahbo._lazy import lazy_getattr

__all__ = [
    "SYNTHETIC_TASKS",
    "JournaledOptimizer",
    "Optimizer",
    "StudyRecorder",
    "load_objective",
    "load_space",
    "objective_spec",
    "optimize",
    "resume",
    "run_journaled",
    "run_trial",
    "study_options",
]

# imported on first use (PEP 562). Optimizer comes through erahbo.study.journaled, which
# registers the journaled subclass (erahbo.optimizer.core.JOURNALED) that
# Optimizer(journal=...) builds.
__getattr__ = lazy_getattr(__name__, {
    "Optimizer": "erahbo.study.journaled",
    "JournaledOptimizer": "erahbo.study.journaled",
    "StudyRecorder": "erahbo.study.opening",
    "optimize": "erahbo.study.run",
    "resume": "erahbo.study.run",
    "run_journaled": "erahbo.study.run",
    "run_trial": "erahbo.study.trials",
    "SYNTHETIC_TASKS": "erahbo.study.rebuild",
    "load_objective": "erahbo.study.rebuild",
    "load_space": "erahbo.study.rebuild",
    "objective_spec": "erahbo.study.rebuild",
    "study_options": "erahbo.study.rebuild",
})


def __dir__() -> list[str]:
    return __all__
