"""Datasets of RL outcomes: format, loaders, validation, outcome processing, synthetic tasks.

The names below are imported on first use (:mod:`erahbo._lazy`): pandas only when needed.
"""

from erahbo._lazy import lazy_getattr

__getattr__ = lazy_getattr(__name__, {"TaskData": "erahbo.datasets.format",
                                      "read_task": "erahbo.datasets.format",
                                      "write_task": "erahbo.datasets.format"})

__all__ = ["TaskData", "read_task", "write_task"]
