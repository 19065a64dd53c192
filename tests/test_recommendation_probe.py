"""`benchmarks/recommendation_probe.py` replays the continuous benchmark's erahbo studies.

Rules: after each checkpoint the probe reports the recommendation the benchmark's trace scores
at that run (the same seeds and options: its normalized regret equals the trace's); the
recommendation's sample statistics are its own runs' (a one-seed row has no sample variance);
the probe refuses a method it does not replay; a replay cut at a run count is the whole study's
state right after the tell that reaches it. A short Figure-1 study (budget 30) is replayed;
the checks hold on any trajectory.
"""

from __future__ import annotations

import math
import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))

from erahbo.experiments.continuous import ContinuousSettings, run_continuous_repetition
from erahbo.experiments.methods import parse_method
from erahbo.objectives.known_truth import make_task
from recommendation_probe import probe, replay, replay_until, summary


def test_the_probe_scores_the_recommendation_the_trace_scores():
    checkpoints = [8, 15, 25]
    frame = probe("figure1", "erahbo", 1.0, 0, [0], 30, checkpoints)
    task = make_task("figure1")
    trace, meta = run_continuous_repetition(task, parse_method("erahbo"), 0,
                                            ContinuousSettings(budget=30, alpha=1.0, seed=0))
    assert frame["runs"].tolist() == checkpoints
    for c, regret in zip(frame["runs"], frame["regret"], strict=True):
        row = trace.loc[trace["run"] == c].iloc[0]
        assert regret == pytest.approx(row["simple_regret"] / meta["init_regret"], abs=1e-9)
    assert (frame["k"] >= 1).all()
    assert (frame["sample_var"].isna() == (frame["k"] < 2)).all()
    assert np.allclose(frame["true_mv"], frame["true_f"] - frame["true_rho2"])
    assert "after 25 runs" in summary(frame)
    assert all(math.isfinite(x) for x in frame["estimate"])


def test_the_probe_refuses_a_peer():
    with pytest.raises(ValueError, match="erahbo's methods only"):
        probe("figure1", "rahbo-k2", 1.0, 0, [0], 10, [10])


def test_a_replay_cut_at_a_run_count_is_the_whole_study_at_that_tell():
    task = make_task("figure1")
    seen = {}

    def on_tell(opt, trial, before, after):
        if before < 15 <= after:
            seen.update(after=after, before=before, incumbent=opt.recommend())

    replay(task, "erahbo", 1.0, 0, 0, 30, None, on_tell)
    opt = replay_until(task, "erahbo", 1.0, 0, 0, 15, budget=30)
    total = int(np.sum(opt.data.k))
    assert total == seen["after"] >= 15 > seen["before"]
    assert opt.recommend() == seen["incumbent"]
    with pytest.raises(ValueError, match="ended before 31 runs"):
        replay_until(task, "erahbo", 1.0, 0, 0, 31, budget=30)
