"""The offline benchmark: replay of tabular RL outcomes, the study runner and its traces."""

from erahbo.datasets.groundtruth import true_mv
from erahbo.experiments.methods import PAPER_METHODS, MethodSpec, parse_method, parse_methods
from erahbo.experiments.replay import ReplayTask, SeedReplay, prepare_task
from erahbo.experiments.runner import StudySettings, run_repetition
from erahbo.experiments.study import run_study
from erahbo.experiments.traces import trace_path

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
