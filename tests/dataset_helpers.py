"""Helpers of the dataset tests (tests/test_datasets*.py): a small task, a wide CSV table,
the bundled ARLBench tables."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from erahbo.datasets.format import TaskData


def _small_task(n: int = 6, s: int = 4, seed: int = 0) -> TaskData:
    rng = np.random.default_rng(seed)
    configs = pd.DataFrame({"lr": np.logspace(-4, -2, n), "act": ["tanh", "relu"] * (n // 2)})
    returns = rng.normal(np.arange(n)[:, None], 1.0, size=(n, s))
    return TaskData(configs, returns, list(range(1, s + 1)), np.arange(n), {"task": "toy"})


def _wide_csv(tmp_path, name="toy.csv", n=5, s=3):
    rows = []
    for i in range(n):
        row = {"config_id": 10 + i, "budget": 1000, "lr": 10.0 ** -(i + 1), "gamma": 0.9 + i / 100}
        row |= {f"seed_{k}": float(i + k) for k in range(1, s + 1)}
        rows.append(row)
    path = tmp_path / name
    pd.DataFrame(rows).to_csv(path, index=False)
    return path


BUNDLED = Path(__file__).resolve().parents[1] / "data" / "arlbench"  # the real tables
RH_HEADER = "config_id,run_id,budget,performance,hp_config.learning_rate,"
RUNHISTORY = f"""{RH_HEADER}hp_config.use_target_network,hp_config.tau
0,0,100000,"[1.0, 2.0, nan]",0.001,True,0.5
1,1,100000,"[3.0, 4.5, 5.0]",0.01,False,None
2,2,100000,"[2.0 2.5 3.0]",0.0001,True,0.1
"""
