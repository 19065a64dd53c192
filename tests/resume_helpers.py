"""Helpers of the crash-safe study tests (tests/test_resume*.py): the small study's options,
a stand-in for a crash, the history comparison of a resumed and a straight run."""

from __future__ import annotations

import os

import numpy as np
import pandas as pd

import erahbo

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


#: A 2-D space and an objective deterministic in (configuration, seed), with a seed spread
#: that grows with ``x1``: the studies of the variance-model resume tests.
NOISY_SPACE = {"x0": ("float", 0.0, 1.0), "x1": ("float", 0.0, 1.0)}


def noisy_objective(c, s):
    g = np.random.default_rng([s, int(c["x0"] * 1e6), int(c["x1"] * 1e6)])
    return -(c["x0"] - 0.7) ** 2 - (c["x1"] - 0.3) ** 2 + (0.02 + 0.2 * c["x1"]) * \
        g.standard_normal()


def journaled_trials(space, path, objective, stop=None, check=None, **kw):
    """Run a journaled study (``erahbo.Optimizer(space, journal=path, **kw)``) by ask/tell:
    its trials as ``(config_id, seeds)``, cut after ``stop`` tells (None: to the end, then
    ``check(opt)`` inside the study, if given). Run again on the same ``path`` it resumes."""
    seen = []
    with erahbo.Optimizer(space, journal=path, **kw) as opt:
        while (t := opt.ask()) is not None:
            opt.tell(t, [objective(t.config, s) for s in t.seeds])
            seen.append((t.config_id, tuple(t.seeds)))
            if stop is not None and len(seen) == stop:
                return seen
        if check is not None:
            check(opt)
    return seen
