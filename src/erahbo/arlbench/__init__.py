"""Real RL outcomes with ARLBench: task registry, worker client, dataset generator.

ARLBench itself runs in a separate venv (see :mod:`erahbo.arlbench.venv`); this package only
talks to :mod:`erahbo.arlbench.worker` through a JSON-lines protocol, so it never imports
ARLBench or JAX (nor Ray, until a :class:`RayArlClient` is created).
"""

from erahbo._lazy import lazy_getattr

# imported on first use (erahbo._lazy): the CLI reads the registry without the client
_EXPORTS = {
    "ArlClient": "erahbo.arlbench.client", "RunResult": "erahbo.arlbench.client",
    "WorkerError": "erahbo.arlbench.client", "RayArlClient": "erahbo.arlbench.ray_pool",
    "TASKS": "erahbo.arlbench.registry", "ArlTask": "erahbo.arlbench.registry",
    "get_task": "erahbo.arlbench.registry", "task_names": "erahbo.arlbench.registry",
    "default_venv_path": "erahbo.arlbench.venv", "setup_venv": "erahbo.arlbench.venv",
    "venv_status": "erahbo.arlbench.venv",
}
__getattr__ = lazy_getattr(__name__, _EXPORTS)

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
