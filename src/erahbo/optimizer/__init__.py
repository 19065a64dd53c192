"""The optimizer: ERAHBO, RAHBO, GP-UCB and random search behind one ask/tell API, no storage.

* :mod:`erahbo.optimizer.core` — :class:`Optimizer` (ask/tell);
* :mod:`erahbo.optimizer.telling`, :mod:`erahbo.optimizer.inspection` — its tell side and
  its read side;
* :mod:`erahbo.optimizer.ingest` — how a configuration's runs join the data and the history
  (a tell, a replayed tell, a warm-start record);
* :mod:`erahbo.optimizer.options` — :class:`Options`: defaults and validation, once;
* :mod:`erahbo.optimizer.records` — :class:`Trial`, :class:`Result` and the history tables;
* :mod:`erahbo.optimizer.state` — the data and the status of every configuration;
* :mod:`erahbo.optimizer.rounds` — fitting, the round model, the choice of ``x_t``;
* :mod:`erahbo.optimizer.warm` — warm start from earlier runs;
* :mod:`erahbo.optimizer.failure`, :mod:`erahbo.optimizer.outcomes` — the failure rule
  (policies, the penalty, counted and spent runs) and the outcomes of runs and trials;
* :mod:`erahbo.optimizer.loop` — :func:`drive` (the one ask/evaluate/tell loop).

The journal, :func:`erahbo.optimize` and :func:`erahbo.resume` are in :mod:`erahbo.study`, the
executors and the scheduler that runs a trial's seeds in :mod:`erahbo.runtime` (this package
imports neither: it only asks and tells; :func:`erahbo.study.run_trial` runs a trial).
"""

from __future__ import annotations

from erahbo._lazy import lazy_getattr

__all__ = [
    "METHODS",
    "Optimizer",
    "Options",
    "Result",
    "Trial",
    "drive",
]

# imported on first use (PEP 562): the CLI reads the strategy parts' declarations
# (erahbo.optimizer.parts) at start-up without the optimizer's heavy modules.
__getattr__ = lazy_getattr(__name__, {
    "Optimizer": "erahbo.optimizer.core",
    "drive": "erahbo.optimizer.loop",
    "METHODS": "erahbo.optimizer.options",
    "Options": "erahbo.optimizer.options",
    "Result": "erahbo.optimizer.records",
    "Trial": "erahbo.optimizer.records",
})


def __dir__() -> list[str]:
    return __all__
