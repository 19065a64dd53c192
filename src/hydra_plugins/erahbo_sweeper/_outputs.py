"""What the sweeper writes into the sweep directory after every batch of jobs.

``history.csv``, ``rounds.csv``, ``configs.csv``
    erahbo's tables (:class:`erahbo.Result`), returns on erahbo's scale (higher is better:
    with ``maximize: false`` they are the task's values negated).
``runhistory.csv``
    Hypersweeper's layout (its column order), dense: ``config_id``, ``budget``
    (``max_budget``, else empty: no fidelity), ``performance`` (mean of the configuration's
    successful runs, on the task's own scale), one ``performance_run_<j>`` column per run
    index ``j`` (the configuration's j-th run, in the order they ran; empty where it has
    fewer runs or the run failed), ``seeds`` (the training seeds of those runs, a JSON list),
    then one column per hyperparameter. Every configuration has its own seeds, so columns
    per seed value would be almost empty; ``history.csv`` has every run with its seed.
``incumbent.csv``
    Hypersweeper's incumbent trajectory, one row per batch: ``config_id, performance, budget,
    budget_used`` (training runs so far; times ``max_budget`` when given),
    ``total_wallclock_time, total_optimization_time`` (s: the study's time, and the time in
    erahbo's ask and tell), then the hyperparameters. ``performance`` is the recommended
    configuration's mean on the task's scale (the recommendation maximizes ``LCB_MV``).
``incumbent.yaml``
    The recommendation: configuration, its overrides, estimated MV (or the study's risk
    measure, named under ``objective``), runs so far.
"""

from __future__ import annotations

import json
import math
import os
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import yaml

from erahbo.datasets.loaders import detect_format
from erahbo.optimizer.warm import read_warm_file
from erahbo.risk import objective_name

COUNTED = ("ok", "penalized")  # erahbo's counted runs; penalized = failed
INCUMBENT_COLUMNS = ("config_id", "performance", "budget", "budget_used",
                     "total_wallclock_time", "total_optimization_time")
# layouts whose values are the task's own (Hypersweeper's and ARLBench's ``performance``)
TASK_SCALE = ("runhistory", "landscape")


def runhistory_frame(result: Any, names: list[str], sign: float,
                     budget: float | None = None) -> pd.DataFrame:
    """Hypersweeper's ``runhistory.csv`` from an erahbo :class:`~erahbo.Result`, one column
    per run index.

    Parameters
    ----------
    result : erahbo.Result
    names : list of str
        Hyperparameter names (the columns after ``budget``).
    sign : float
        +1, or -1 to undo the negation of a minimized task (``maximize: false``).
    budget : float, optional
        The fidelity of every run (``max_budget``).
    """
    h = result.history
    h = h[h["status"].isin(COUNTED)]
    values = (h["return"] * sign).where(h["status"] == "ok")  # a failure's value: a penalty
    groups = list(h.groupby("config_id", sort=True))
    n_runs = max((len(g) for _, g in groups), default=0)
    runs = [f"performance_run_{j}" for j in range(n_runs)]
    rows = []
    for cid, g in groups:
        v = values.loc[g.index].tolist()  # (k,) in the order they ran
        row: dict[str, Any] = {"config_id": int(cid), "budget": budget,
                               "performance": float(np.nanmean(v)) if any(
                                   not math.isnan(x) for x in v) else np.nan}
        row.update({c: v[j] if j < len(v) else np.nan for j, c in enumerate(runs)})
        row["seeds"] = json.dumps([int(s) for s in g["seed"]])
        first = g.iloc[0]
        row.update({n: first[n] for n in names})
        rows.append(row)
    return pd.DataFrame(rows, columns=["config_id", "budget", "performance", *runs, "seeds",
                                       *names])


def incumbent_dict(result: Any, overrides: list[str] | None, sign: float) -> dict[str, Any]:
    """The content of ``incumbent.yaml`` (plain YAML types)."""
    mv = float(result.incumbent_mv)
    return {
        "incumbent_id": None if result.incumbent_id is None else int(result.incumbent_id),
        "config": None if result.incumbent is None else {k: _plain(v) for k, v in
                                                         result.incumbent.items()},
        "overrides": overrides,
        "estimated_mv": None if math.isnan(mv) else mv,
        "mv_scale": "task values" if sign > 0 else "negated task values (maximize: false)",
        "method": result.method,
        "alpha": result.settings.get("alpha"),
        # the risk measure estimated_mv is in (MV, or e.g. CVaR_0.1: the mean of the worst
        # q share of the task values, their highest costs with maximize: false)
        "risk": result.measure.to_json(),
        "objective": objective_name(result.measure),
        "n_evals": int(result.n_evals),
        "n_configs": len(result.configs),
    }


class Outputs:
    """The sweep directory's files; ``opt_time`` adds up the seconds of ask and tell.

    Parameters
    ----------
    sweep_dir : Path
    names : list of str
        Hyperparameter names.
    sign : float
        +1, or -1 (``maximize: false``).
    budget : float or None
        ``max_budget`` (the fidelity of every run), if any.
    """

    def __init__(self, sweep_dir: Path, names: list[str], sign: float,
                 budget: float | None) -> None:
        self.sweep_dir, self.names, self.sign, self.budget = sweep_dir, names, sign, budget
        self.opt_time = 0.0
        path = sweep_dir / "incumbent.csv"
        self.trajectory = (pd.read_csv(path).to_dict("records") if path.is_file()
                           and path.stat().st_size else [])  # a resumed sweep goes on
        if self.trajectory:
            self.opt_time = float(self.trajectory[-1].get("total_optimization_time") or 0.0)

    def write(self, result: Any, overrides: list[str] | None, trajectory: bool = False) -> None:
        """Write every file (atomically, each); ``trajectory``: add a row to incumbent.csv."""
        d = self.sweep_dir
        _atomic(d / "history.csv", result.history.to_csv(index=False))
        _atomic(d / "rounds.csv", result.rounds.to_csv(index=False))
        _atomic(d / "configs.csv", result.configs.to_csv(index=False))
        rh = runhistory_frame(result, self.names, self.sign, self.budget)
        _atomic(d / "runhistory.csv", rh.to_csv(index=False))
        if trajectory and result.incumbent_id is not None:
            self.trajectory.append(self._incumbent_row(result, rh))
            _atomic(d / "incumbent.csv", pd.DataFrame(
                self.trajectory, columns=[*INCUMBENT_COLUMNS, *self.names]).to_csv(index=False))
        _atomic(d / "incumbent.yaml",
                yaml.safe_dump(incumbent_dict(result, overrides, self.sign), sort_keys=False))

    def _incumbent_row(self, result: Any, rh: pd.DataFrame) -> dict[str, Any]:
        mine = rh.loc[rh["config_id"] == result.incumbent_id]
        wall = result.history["wall_time"]
        row: dict[str, Any] = {
            "config_id": int(result.incumbent_id),
            "performance": float(mine["performance"].iloc[0]) if len(mine) else np.nan,
            "budget": self.budget,
            "budget_used": result.n_evals * (self.budget or 1),
            "total_wallclock_time": float(wall.max()) if len(wall) else 0.0,
            "total_optimization_time": self.opt_time,
        }
        row.update({n: _plain(result.incumbent.get(n)) for n in self.names})
        return row


def warm_runs(path: Any, sign: float) -> pd.DataFrame:
    """The runs of a warm-start file on erahbo's scale: a Hypersweeper or ARLBench file holds
    the task's values (negated with ``maximize: false``); erahbo's own files hold returns."""
    runs = read_warm_file(path, label="hydra.sweeper.warm_start")
    if sign < 0 and detect_format(path) in TASK_SCALE:
        runs = runs.assign(**{"return": -runs["return"]})
    return runs


def _atomic(path: Path, text: str) -> None:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text)
    os.replace(tmp, path)


def _plain(v: Any) -> Any:
    return v.item() if isinstance(v, np.generic) else v
