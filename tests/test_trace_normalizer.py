"""Normalized regret when a repetition's initial design is already optimal.

Rule: normalized regret is ``simple_regret / init_regret`` per repetition; a repetition with
``init_regret <= 0`` (every initial configuration optimal) is divided by the median positive
``init_regret`` of its task instead of being reported as 0, so a recommendation worse than the
initial design still shows as regret. A task with no positive ``init_regret`` keeps 0, and a
note names it either way.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from erahbo.analysis.traces import load_traces
from erahbo.experiments.traces import TRACE_META_KEY

BUDGET = 4


def _write(root: Path, task: str, rep: int, init_regret: float, regret: float) -> None:
    """One trace of 4 one-seed rounds whose incumbent has constant simple regret ``regret``."""
    rows = pd.DataFrame({
        "run": np.arange(1, BUDGET + 1), "round": np.arange(1, BUDGET + 1),
        "config_id": np.arange(BUDGET) + 10, "seed": np.zeros(BUDGET, dtype=np.int64),
        "k_round": np.ones(BUDGET, dtype=np.int64), "config_mv": np.full(BUDGET, 1.0 - regret),
        "incumbent_id": np.full(BUDGET, 10), "incumbent_mv": np.full(BUDGET, 1.0 - regret),
        "simple_regret": np.full(BUDGET, regret),
        "cumulative_regret": regret * np.arange(1, BUDGET + 1),
        "stop_reason": ["fixed_k"] * BUDGET})
    meta = {"task": task, "domain": "cc", "method": "erahbo", "repetition": rep,
            "seed": rep, "budget": BUDGET, "alpha": 1.0, "mv_star": 1.0,
            "init_mv_mean": 1.0 - init_regret, "init_incumbent_mv": 1.0,
            "init_regret": init_regret, "initial_config_ids": [0], "k_init": 1,
            "outcome_processing": "none", "wall_time_s": 0.0, "erahbo_version": "test"}
    table = pa.Table.from_pandas(rows, preserve_index=False)
    md = dict(table.schema.metadata or {})
    md[TRACE_META_KEY] = json.dumps(meta).encode()
    path = root / "traces" / task / "erahbo" / f"rep-{rep:03d}.parquet"
    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(table.replace_schema_metadata(md), path)


def test_an_optimal_initial_design_is_normalized_by_the_tasks_typical_regret(tmp_path):
    # task "a": repetitions with init regret 0.2 and 0.6 (median 0.4), and one with 0 whose
    # recommendation later has regret 0.1 -> normalized 0.1 / 0.4, not 0
    for rep, (ir, r) in enumerate([(0.2, 0.1), (0.6, 0.3), (0.0, 0.1)]):
        _write(tmp_path, "a", rep, ir, r)
    # task "b": no repetition has a positive init regret -> nothing to normalize by: 0
    for rep in range(2):
        _write(tmp_path, "b", rep, 0.0, 0.0)
    ts = load_traces(tmp_path)
    norm_a = ts.normalized_regret["a"][0]  # (R, T)
    np.testing.assert_allclose(norm_a[:, -1], [0.5, 0.5, 0.25])
    assert np.all(ts.normalized_regret["b"] == 0.0)
    rounds = ts.rounds[(ts.rounds.task == "a") & (ts.rounds.repetition == 2)]
    np.testing.assert_allclose(rounds.config_norm_regret, 0.25)
    note = next(n for n in ts.notes if "init_regret <= 0" in n)
    assert "'a'" in note and "'b'" in note and "median positive init_regret" in note


def test_positive_init_regrets_are_each_their_own_normalizer(tmp_path):
    # the usual case is unchanged: every repetition divides by its own init regret
    for rep, (ir, r) in enumerate([(0.2, 0.1), (0.8, 0.2)]):
        _write(tmp_path, "a", rep, ir, r)
    ts = load_traces(tmp_path)
    np.testing.assert_allclose(ts.normalized_regret["a"][0][:, -1], [0.5, 0.25])
    assert not any("init_regret <= 0" in n for n in ts.notes)
