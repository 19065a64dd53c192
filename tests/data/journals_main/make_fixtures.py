"""Journals written by erahbo at commit 0b211cc (``main`` before the strategy redesign).

Run with that commit's source first on the path, e.g.
``git worktree add /tmp/old 0b211cc && PYTHONPATH=/tmp/old/src python make_fixtures.py``.
Each study runs to half its budget and stops (an interrupted study); ``ARGS`` lists how each
was built, so a test builds the same study with today's code and resumes the journal.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd

HERE = Path(__file__).resolve().parent


def table() -> pd.DataFrame:
    """A 30-row candidate table in 2-D (the same rows everywhere: a fixed grid)."""
    g = np.linspace(0.0, 1.0, 6)
    rows = [(a, b) for a in g for b in g[:5]]
    return pd.DataFrame(rows, columns=["a", "b"])


def table_objective(config: dict, seed: int) -> float:
    """A return with a seeded draw per (configuration, seed)."""
    a, b = float(config["a"]), float(config["b"])
    z = np.random.default_rng([seed, round(a * 1000), round(b * 1000)]).standard_normal()
    return -(a - 0.6) ** 2 - (b - 0.4) ** 2 + (0.05 + 0.3 * a * b) * z


# name -> (options, runs before the stop)
ARGS = {
    "random": ({"method": "random", "budget": 40, "seed": 3, "k": 3}, 20),
    "erahbo_default": ({"method": "erahbo", "budget": 80, "seed": 1}, 40),
    "erahbo_paper": ({"method": "erahbo", "preset": "paper", "budget": 80, "seed": 2,
                      "k_init": 2, "k_max": 6}, 40),
    "rahbo": ({"method": "rahbo", "budget": 60, "seed": 4, "k": 2}, 30),
}


def main() -> None:
    import erahbo

    for name, (kw, stop) in ARGS.items():
        path = HERE / f"{name}.db"
        path.unlink(missing_ok=True)
        opt = erahbo.Optimizer(table(), journal=path, **kw)
        while opt.n_evals < stop and (t := opt.ask()) is not None:
            opt.tell(t, [table_objective(t.config, s) for s in t.seeds])
        opt.close()
    (HERE / "ARGS.json").write_text(json.dumps({"commit": "0b211cc", "args": ARGS}, indent=1))


if __name__ == "__main__":
    main()
