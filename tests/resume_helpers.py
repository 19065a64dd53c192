"""Helpers of the crash-safe study tests (tests/test_resume*.py): the small study's options,
a stand-in for a crash, the history comparison of a resumed and a straight run."""

from __future__ import annotations

import os

import pandas as pd

SCRIPT = os.path.join(os.path.dirname(__file__), "fault_injection.py")
SRC = os.path.join(os.path.dirname(os.path.dirname(__file__)), "src")
VOLATILE = ["wall_time", "worker", "rerun"]  # differ between a resumed and a straight run
KW = {"budget": 40, "seed": 1, "k_min": 2, "k_max": 4, "k": 3, "n_init": 3}


class Crash(BaseException):
    """Stands for a crash of the study process (nothing may catch it)."""


def same_history(a: pd.DataFrame, b: pd.DataFrame) -> None:
    """Equal run by run, up to times, workers, re-run flags and traceback frames."""
    cols = [c for c in a.columns if c not in VOLATILE]
    a, b = (x[cols].reset_index(drop=True) for x in (a, b))
    for x in (a, b):
        x["error"] = x["error"].map(lambda e: e.splitlines()[0] if isinstance(e, str) else None)
    pd.testing.assert_frame_equal(a, b)


class Counting:
    """Counts calls of an objective (serial executor: same process)."""

    def __init__(self, fn):
        self.fn, self.calls = fn, 0

    def __call__(self, config, seed):
        self.calls += 1
        return self.fn(config, seed)


def one_arg_objective(config):  # a wrong signature, for the CLI test
    return 0.0
