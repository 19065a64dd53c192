"""What the sweeper writes into the sweep directory after every batch of jobs.

``history.csv``, ``rounds.csv``, ``configs.csv``
    erahbo's tables (:class:`erahbo.Result`), returns on erahbo's scale (higher is better:
    with ``maximize: false`` they are the task's values negated).
``runhistory.csv``
    Hypersweeper's layout: ``config_id``, ``performance`` (mean of the configuration's
    successful runs, on the task's own scale), one ``performance_seed_<s>`` column per
    training seed (empty where the configuration was not run with that seed or the run
    failed), ``budget`` (empty: no fidelity), then one column per hyperparameter.
``incumbent.yaml``
    The recommendation: configuration, its overrides, estimated MV, runs so far.
"""

from __future__ import annotations

import math
import os
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import yaml

COUNTED = ("ok", "penalized")  # erahbo's counted runs; penalized = failed


def runhistory_frame(result: Any, names: list[str], sign: float) -> pd.DataFrame:
    """Hypersweeper's ``runhistory.csv`` from an erahbo :class:`~erahbo.Result`.

    Parameters
    ----------
    result : erahbo.Result
    names : list of str
        Hyperparameter names (the columns after ``budget``).
    sign : float
        +1, or -1 to undo the negation of a minimized task (``maximize: false``).
    """
    h = result.history
    h = h[h["status"].isin(COUNTED)]
    ok = h["status"] == "ok"
    values = (h["return"] * sign).where(ok)  # a failed run's value is a penalty: left empty
    seeds = sorted(int(s) for s in pd.unique(h["seed"]))
    rows = []
    for cid, g in h.groupby("config_id", sort=True):
        v = values.loc[g.index]
        row: dict[str, Any] = {"config_id": int(cid),
                               "performance": float(v.mean()) if v.notna().any() else np.nan}
        per_seed = dict(zip(g["seed"].astype(int), v, strict=True))
        row.update({f"performance_seed_{s}": per_seed.get(s, np.nan) for s in seeds})
        row["budget"] = None
        first = g.iloc[0]
        row.update({n: first[n] for n in names})
        rows.append(row)
    cols = ["config_id", "performance", *[f"performance_seed_{s}" for s in seeds], "budget",
            *names]
    return pd.DataFrame(rows, columns=cols)


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
        "n_evals": int(result.n_evals),
        "n_configs": len(result.configs),
    }


def write_outputs(sweep_dir: Path, result: Any, names: list[str], sign: float,
                  overrides: list[str] | None) -> None:
    """Write the tables, ``runhistory.csv`` and ``incumbent.yaml`` (atomically, each)."""
    _atomic(sweep_dir / "history.csv", result.history.to_csv(index=False))
    _atomic(sweep_dir / "rounds.csv", result.rounds.to_csv(index=False))
    _atomic(sweep_dir / "configs.csv", result.configs.to_csv(index=False))
    _atomic(sweep_dir / "runhistory.csv",
            runhistory_frame(result, names, sign).to_csv(index=False))
    _atomic(sweep_dir / "incumbent.yaml",
            yaml.safe_dump(incumbent_dict(result, overrides, sign), sort_keys=False))


def _atomic(path: Path, text: str) -> None:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text)
    os.replace(tmp, path)


def _plain(v: Any) -> Any:
    return v.item() if isinstance(v, np.generic) else v
