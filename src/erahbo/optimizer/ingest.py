"""How a configuration's runs enter a study: the data, the configuration's status, the history.

:func:`add_runs` is the one step every result takes, whatever brought it: a live tell and a
tell replayed from a journal (:meth:`erahbo.optimizer.telling.Telling.ingest_outcome`, through
the optimizer's ``_ingest``, which also keeps the budget and the open round) and a warm-start
record (:mod:`erahbo.optimizer.warm`, whose runs count in no budget).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from erahbo.optimizer.records import History
from erahbo.optimizer.state import StudyState

__all__ = ["add_runs"]


def add_runs(
    state: StudyState,
    history: History,
    head: tuple,
    u: np.ndarray,
    returns: Sequence[float],
    seeds: Sequence[int],
    runs: Sequence[Any] | None,
    *,
    infeasible: bool,
    k_round0: int = 0,
    in_budget: bool = True,
) -> tuple[int | None, list[float]]:
    """Add the runs of one configuration to the data, its status and the history.

    Parameters
    ----------
    state : StudyState
        Its data (:attr:`~StudyState.data`) pools the counted returns; an ``infeasible``
        configuration is marked so instead, and penalized runs are counted.
    history : History
        Gets one row per finished run (:meth:`History.add_told`).
    head : tuple
        ``(iteration, phase, config_id, config)`` of the history rows.
    u : ndarray
        ``(dim,)`` encoding of the configuration.
    returns : sequence of float
        One value per seed (the penalty for a penalized run); for an ``infeasible``
        configuration NaN where a run failed.
    seeds : sequence of int
        The seeds, at least one per return.
    runs : sequence of RunOutcome or None
        Every run with its status (None: the user ran the seeds and told finite returns).
    infeasible : bool
        The configuration failed and never enters the data again.
    k_round0 : int
        Seeds of the round before these runs.
    in_budget : bool
        The runs count toward the budget (False: warm-start runs, done before the study).

    Returns
    -------
    row : int or None
        The configuration's data row (None: an infeasible configuration never in the data).
    kept : list of float
        The returns that entered the data (infeasible: the finite ones, which did not).
    """
    vals = [float(v) for v in returns]
    seeds = list(seeds[: len(vals)])
    kept = [v for v in vals if math.isfinite(v)] if infeasible else vals
    d, cid = state.data, head[2]
    if infeasible:
        seeds = [sd for sd, v in zip(seeds, vals, strict=True) if math.isfinite(v)]
        state.mark_infeasible(cid, u)
        row = d.row_of(cid)
        k_cfg0 = d.n_seeds(cid)
    else:
        row = d.add(cid, u, kept, seeds)
        k_cfg0 = len(d.returns[row]) - len(kept)
        if runs is not None:
            state.add_penalized(cid, sum(getattr(r, "status", "ok") == "penalized"
                                         for r in runs))
    history.add_told(head, vals, seeds, kept, runs, k_cfg0, k_round0, in_budget=in_budget)
    return row, kept
