"""Datasets of RL outcomes: format, loaders, validation, outcome processing, synthetic tasks."""

from erahbo.datasets.format import TaskData, read_task, write_task

__all__ = ["TaskData", "read_task", "write_task"]
