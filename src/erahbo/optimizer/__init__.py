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

from erahbo.optimizer.core import Optimizer
from erahbo.optimizer.journaling import StudyRecorder
from erahbo.optimizer.loop import drive, optimize, resume, run_journaled
from erahbo.optimizer.options import METHODS, Options
from erahbo.optimizer.records import Result, Trial
from erahbo.optimizer.study import (
    SYNTHETIC_TASKS,
    load_objective,
    load_space,
    objective_spec,
    study_options,
)

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
