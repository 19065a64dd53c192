"""The Hydra ``Sweeper`` subclass; the work is done in :mod:`._impl` (imported on use)."""

from __future__ import annotations

from typing import Any

from hydra.plugins.sweeper import Sweeper
from hydra.types import HydraContext, TaskFunction
from omegaconf import DictConfig


class ErahboSweeper(Sweeper):
    """Risk-aware sweeps with erahbo: each job is one training run (configuration, seed)."""

    def __init__(self, **options: Any) -> None:
        from ._impl import ErahboSweeperImpl

        self.sweeper = ErahboSweeperImpl(**options)

    def setup(
        self, *, hydra_context: HydraContext, task_function: TaskFunction, config: DictConfig
    ) -> None:
        self.sweeper.setup(hydra_context=hydra_context, task_function=task_function,
                           config=config)

    def sweep(self, arguments: list[str]) -> Any:
        return self.sweeper.sweep(arguments)
