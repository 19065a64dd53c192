"""Test-suite setup: one BLAS thread (multi-threaded BLAS thrashes on small CI machines)."""

import os

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")
os.environ.setdefault("MPLBACKEND", "Agg")


# Why a study may end with one run of its budget unspent. A new round needs at least 2 seeds
# (Optimizer.ask returns None when fewer than 2 runs are free), so when the last round closes
# with exactly one run left, that run is never spent. That happens after a round closed for any
# reason but the budget (erahbo.policies.STOP_REASONS):
LAST_RUN_UNSPENT_AFTER = (
    "dominated", "k_max",  # ERAHBO's stopping rule (eq. 12) or k_max
    "fixed_k",  # a fixed-k round (RAHBO, GP-UCB, random search) completed its k seeds
    "random",  # a random round (random_interleave) completed its first k_min seeds
    "max_seeds",  # the configuration reached its seed cap
    "excluded", "infeasible",  # the configuration left the candidates or failed
    "initial",  # the initial design (counted in the budget) ended
)
# and never after these: a round closed for "budget" had no run left; warm rounds come before
# every counted run. tests/test_optimizer.py checks that the two lists hold every reason.
NEVER_UNSPENT_AFTER = ("budget", "warm")


def spent_budget(result, budget: int, n: int | None = None) -> bool:
    """The study ran its whole budget, or all but one run when its last round closed for a
    reason in :data:`LAST_RUN_UNSPENT_AFTER` (a new round needs 2 seeds; README).
    ``n``: the runs to check (default ``result.n_evals``)."""
    n = result.n_evals if n is None else n
    return _spent(n, budget, result.rounds.stop_reason.iloc[-1])


def _spent(n: int, budget: int, last_stop: str) -> bool:
    """``n`` runs spent all of ``budget``, or all but one after a last round that closed for a
    reason in :data:`LAST_RUN_UNSPENT_AFTER` (``last_stop``: its stop reason)."""
    return n == budget or (n == budget - 1 and last_stop in LAST_RUN_UNSPENT_AFTER)


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
