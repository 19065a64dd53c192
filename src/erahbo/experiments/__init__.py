"""The offline benchmark: replay of tabular RL outcomes, the study runner and its traces.

The names below are imported on first use (:mod:`erahbo._lazy`), so that reading
:data:`PAPER_METHODS` does not import pandas and scipy.
"""

from erahbo._lazy import lazy_getattr

_EXPORTS = {
    "true_mv": "erahbo.datasets.groundtruth",
    "PAPER_METHODS": "erahbo.experiments.methods",
    "MethodSpec": "erahbo.experiments.methods",
    "parse_method": "erahbo.experiments.methods",
    "parse_methods": "erahbo.experiments.methods",
    "ReplayTask": "erahbo.experiments.replay",
    "SeedReplay": "erahbo.experiments.replay",
    "prepare_task": "erahbo.experiments.replay",
    "StudySettings": "erahbo.experiments.runner",
    "run_repetition": "erahbo.experiments.runner",
    "run_study": "erahbo.experiments.study",
    "trace_path": "erahbo.experiments.traces",
}
__getattr__ = lazy_getattr(__name__, _EXPORTS)

__all__ = [
    "PAPER_METHODS",
    "MethodSpec",
    "ReplayTask",
    "SeedReplay",
    "StudySettings",
    "parse_method",
    "parse_methods",
    "prepare_task",
    "run_repetition",
    "run_study",
    "trace_path",
    "true_mv",
]
