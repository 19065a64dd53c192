"""Test-suite setup: one BLAS thread (multi-threaded BLAS thrashes on small CI machines)."""

import os

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")
os.environ.setdefault("MPLBACKEND", "Agg")


def spent_budget(result, budget: int, n: int | None = None) -> bool:
    """The study ran its whole budget, or all but one run when its last round ended by its own
    rule (a new configuration needs 2 seeds, so a single run left is unusable; README).
    ``n``: the runs to check (default ``result.n_evals``)."""
    n = result.n_evals if n is None else n
    return _spent(n, budget, result.rounds.stop_reason.iloc[-1])


def _spent(n: int, budget: int, last_stop: str) -> bool:
    """``n`` runs spent all of ``budget``, or all but one after a round that ended by its own
    rule (``last_stop``: the last round's stop reason)."""
    return n == budget or (n == budget - 1 and last_stop in ("dominated", "k_max", "max_seeds",
                                                               "fixed_k"))


def spent_budget_cli(out, budget: int, n: int | None = None) -> int:
    """:func:`spent_budget` for a CLI study written to the directory ``out`` (its
    ``summary.json`` and ``rounds.csv``); returns ``n`` (default: the counted runs), or
    fails."""
    import json
    from pathlib import Path

    import pandas as pd

    if n is None:
        n = int(json.loads((Path(out) / "summary.json").read_text())["n_evals"])
    last = pd.read_csv(Path(out) / "rounds.csv").stop_reason.iloc[-1]
    assert _spent(n, budget, last), (n, budget, last)
    return n
