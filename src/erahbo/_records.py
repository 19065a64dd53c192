"""Records of a run: the trial handed to the user, the result, and their tables."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from erahbo.surrogate import InnerBounds, RoundModel

__all__ = ["HISTORY_COLUMNS", "ROUND_COLUMNS", "Result", "Trial", "failures_per_round",
           "history_frame"]

# history: one row per training run (config values go between config_id and seed)
HISTORY_COLUMNS = ("iteration", "phase", "config_id", "seed", "return", "k", "k_round",
                   "wall_time", "status", "error", "attempt", "worker", "rerun", "n_failed")
# rounds: one row per round (initial-design configurations included)
ROUND_COLUMNS = ("iteration", "phase", "config_id", "k", "k_total", "ucb_mv", "lcb_mv", "B_t",
                 "beta_stop", "acquisition", "stop_reason", "mean", "var", "n_failed")


@dataclass
class Trial:
    """What to run next: a configuration and the seeds to train it with.

    Attributes
    ----------
    config : dict
        Hyperparameter values (inactive conditionals left out); on a finite table, the row.
    seeds : list of int
        Distinct positive seeds, one training run each.
    config_id : int
        Id of the configuration (finite table: its row index; otherwise the order of first
        evaluation).
    round : int
        Round number (initial-design configurations are rounds too).
    phase : str
        ``"init"`` or ``"bo"``.
    trial_id : int
        Running number of the trial.
    """

    config: dict[str, Any]
    seeds: list[int]
    config_id: int
    round: int
    phase: str
    trial_id: int
    u: np.ndarray = field(repr=False)


@dataclass
class Result:
    """Outcome of an optimization run.

    Attributes
    ----------
    incumbent : dict or None
        Recommended configuration: ``argmax LCB_MV`` (``beta``) over evaluated configurations.
    incumbent_id : int or None
        Its configuration id.
    incumbent_mv : float
        Posterior mean of ``MV`` at the incumbent, ``mu_f - alpha * mu_var``.
    history : pandas.DataFrame
        One row per training run: ``iteration, phase, config_id, <hyperparameters>, seed,
        return, k`` (counted seeds of the configuration so far), ``k_round, wall_time`` (s from
        the start of the study to the end of the run), then how the run went: ``status``
        (``ok``; ``penalized``: failed, counted with the penalty in ``return``; ``retried``:
        failed, replaced by a retry with a new seed, not counted; ``failed``: failed under
        ``failures="exclude"``, not counted), ``error`` (type, message and traceback tail of a
        failed run, else None), ``attempt`` (0, or the retry number), ``worker`` (``host:pid``
        or None when the user ran the seed) and ``rerun`` (True: the run repeats, with the same
        seed, one cut by a crash of the study). ``return`` is NaN for runs not counted.
    rounds : pandas.DataFrame
        One row per round: ``iteration, phase, config_id, k`` (seeds used in the round),
        ``k_total, ucb_mv, lcb_mv`` (at ``x_t`` after the round, ``beta_stop``), ``B_t,
        beta_stop, acquisition, stop_reason, mean, var``.
    configs : pandas.DataFrame
        One row per evaluated configuration, the everyday view of a study (as Optuna's
        ``trials_dataframe``): ``config_id``, hyperparameters, ``k`` (counted seeds), ``mean,
        std, var`` (sample statistics of its returns), ``failures`` (failed runs), ``mv``
        (posterior MV estimate ``mu_f - alpha * mu_var``), ``lcb_mv, ucb_mv`` (its bounds at
        ``beta``; GP-UCB: of ``f``), ``rank`` (1: the incumbent, by ``lcb_mv``; ``<NA>``:
        may not be recommended). Rows in order of first evaluation;
        ``configs.sort_values("rank")`` ranks them (:func:`erahbo.recommendation.top_configs`).
    method : str
    n_evals : int
        Counted training runs (``ok`` and ``penalized``; what the budget counts).
    failures : str or None
        The failure policy of the study (None: non-finite returns were refused).
    settings : dict
        The study's options (``alpha``, ``beta``, ``beta_stop``, ``schedule``, ``k_min``,
        ``k_max``, ``stopping``, ...): :meth:`erahbo.Optimizer.study_settings` without the
        space and the warm-start runs.
    stopped : str or None
        Why the study stopped before its budget (``max_failures``), None otherwise.

    Notes
    -----
    Failures per configuration: ``history.n_failed`` counts the failed runs (status other
    than ``ok``) of the run's configuration so far, ``rounds.n_failed`` those of the round,
    ``configs.n_failed`` those of the configuration.
    """

    incumbent: dict[str, Any] | None
    incumbent_id: int | None
    incumbent_mv: float
    history: pd.DataFrame
    rounds: pd.DataFrame
    configs: pd.DataFrame
    method: str
    n_evals: int
    failures: str | None = None
    settings: dict[str, Any] = field(default_factory=dict)
    stopped: str | None = None


@dataclass
class _Round:
    """State of the open BO round (the optimizer's bookkeeping)."""

    t: int
    config_id: int
    u: np.ndarray
    cand: int | None
    row0: int | None  # row of x_t in D_{t-1}
    rm: RoundModel | None
    B_t: float
    beta_stop: float
    acq: float
    k: int = 0
    ib: InnerBounds | None = None


def history_frame(hist: list[tuple], names: list[str]) -> pd.DataFrame:
    """History table from the optimizer's run records (one per training run).

    ``hist`` holds tuples ``(iteration, phase, config_id, config, seed, return, k, k_round,
    wall_time, status, error, attempt, worker, rerun)``.
    """
    rows = [(t, ph, cid, *[cfg.get(nm) for nm in names], *rest)
            for (t, ph, cid, cfg, *rest) in hist]
    cols = [*HISTORY_COLUMNS[:3], *names, *HISTORY_COLUMNS[3:-1]]
    df = pd.DataFrame(rows, columns=cols)
    failed = (df["status"] != "ok").astype(np.int64)
    df["n_failed"] = failed.groupby(df["config_id"]).cumsum() if len(df) else failed
    return df.astype({"attempt": np.int64, "rerun": bool, "k": np.int64, "k_round": np.int64,
                      "n_failed": np.int64})


def failures_per_round(history: pd.DataFrame, rounds: pd.DataFrame) -> pd.DataFrame:
    """``rounds`` with ``n_failed``: failed runs (status other than ``ok``) of each round."""
    out = rounds.copy()
    counts = (history["status"] != "ok").groupby(history["iteration"]).sum()
    out["n_failed"] = out["iteration"].map(counts).fillna(0).astype(np.int64)
    return out
