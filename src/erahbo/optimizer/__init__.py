"""The optimizer: ERAHBO, RAHBO, GP-UCB and random search behind one ask/tell API.

* :mod:`erahbo.optimizer.core` — :class:`Optimizer` (ask/tell);
* :mod:`erahbo.optimizer.journaling` — :class:`StudyRecorder`, what the journal sees of it;
* :mod:`erahbo.optimizer.options` — :class:`Options`: defaults and validation, once;
* :mod:`erahbo.optimizer.records` — :class:`Trial`, :class:`Result` and the history tables;
* :mod:`erahbo.optimizer.state` — the data and the status of every configuration;
* :mod:`erahbo.optimizer.rounds` — fitting, the round model, the choice of ``x_t``;
* :mod:`erahbo.optimizer.warm` — warm start from earlier runs;
* :mod:`erahbo.optimizer.loop` — :func:`drive` (the one ask/evaluate/tell loop),
  :func:`optimize`, :func:`resume`;
* :mod:`erahbo.optimizer.study` — rebuilding a journaled study's options, objective and space.
"""

from __future__ import annotations

from erahbo._lazy import lazy_getattr

__all__ = [
    "METHODS",
    "SYNTHETIC_TASKS",
    "Optimizer",
    "Options",
    "Result",
    "StudyRecorder",
    "Trial",
    "drive",
    "load_objective",
    "load_space",
    "objective_spec",
    "optimize",
    "resume",
    "run_journaled",
    "study_options",
]

# imported on first use (PEP 562): the CLI reads the strategy parts' declarations
# (erahbo.optimizer.parts) at start-up without the optimizer's heavy modules. Optimizer comes
# through journaling, which registers the journaled subclass (core.JOURNALED) that
# Optimizer(journal=...) builds.
__getattr__ = lazy_getattr(__name__, {
    "Optimizer": "erahbo.optimizer.journaling",
    "StudyRecorder": "erahbo.optimizer.journaling",
    "drive": "erahbo.optimizer.loop",
    "optimize": "erahbo.optimizer.loop",
    "resume": "erahbo.optimizer.loop",
    "run_journaled": "erahbo.optimizer.loop",
    "METHODS": "erahbo.optimizer.options",
    "Options": "erahbo.optimizer.options",
    "Result": "erahbo.optimizer.records",
    "Trial": "erahbo.optimizer.records",
    "SYNTHETIC_TASKS": "erahbo.optimizer.study",
    "load_objective": "erahbo.optimizer.study",
    "load_space": "erahbo.optimizer.study",
    "objective_spec": "erahbo.optimizer.study",
    "study_options": "erahbo.optimizer.study",
})


def __dir__() -> list[str]:
    return __all__
