"""Real RL outcomes with ARLBench: task registry, worker client, dataset generator.

ARLBench itself runs in a separate venv (see :mod:`erahbo.arlbench.venv`); this package only
talks to :mod:`erahbo.arlbench.worker` through a JSON-lines protocol, so it never imports
ARLBench or JAX (nor Ray, until a :class:`RayArlClient` is created).
"""

from erahbo.arlbench.client import ArlClient, RunResult, WorkerError
from erahbo.arlbench.ray_pool import RayArlClient
from erahbo.arlbench.registry import TASKS, ArlTask, get_task, task_names
from erahbo.arlbench.venv import default_venv_path, setup_venv, venv_status

__all__ = [
    "TASKS",
    "ArlClient",
    "ArlTask",
    "RayArlClient",
    "RunResult",
    "WorkerError",
    "default_venv_path",
    "get_task",
    "setup_venv",
    "task_names",
    "venv_status",
]
