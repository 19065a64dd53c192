"""Validation of a task and the paper's NaN policy.

Two levels:

* :func:`check_task` raises one clear ``ValueError`` for a table that cannot be used at
  all: no hyperparameter columns, non-numeric or ``+inf`` returns, fewer than 2 seeds,
  duplicate configurations, inconsistent shapes. Loaders call it on every task they read.
* :func:`validate_task` applies the paper's policy (Appendix C) and reports what it did:
  a configuration with a NaN return on *any* seed is infeasible and filtered out (the
  paper: 18 in ``ppo_cc_pendulum``, 48 in ``ppo_cc_continuous_mountain_car``, 182 in
  ``ppo_brax_halfcheetah``); a task whose remaining configurations all score the same
  (the paper: ``dqn_xland_doorkey``, all zero) is *degenerate* and should be skipped.
  ``-inf`` counts as a failed run (NaN), as in OSS Vizier.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import pandas as pd

from erahbo.datasets.format import SEEDS_PER_CONFIG, TaskData
from erahbo.datasets.seed_counts import replay_note, seeds_per_config


class DegenerateTaskError(ValueError):
    """A task whose configurations all score the same: the paper skips such tasks."""

MIN_SEEDS = 2


@dataclass
class ValidationReport:
    """What :func:`validate_task` found and did.

    Attributes
    ----------
    task : str
        Task name.
    n_configs_in, n_configs_out : int
        Configurations before and after filtering infeasible ones.
    n_seeds : int
        Seeds per configuration.
    n_nan_values : int
        Failed runs (NaN or -inf entries) in the table as read.
    n_infeasible : int
        Configurations with at least one failed run (filtered out).
    infeasible_ids : list of int
        Their ``config_id`` values.
    degenerate : bool
        True when all remaining configurations have the same mean return (or fewer than
        two remain): the task carries no signal and is skipped.
    messages : list of str
        Human-readable notes, one per finding.
    """

    task: str
    n_configs_in: int
    n_configs_out: int
    n_seeds: int
    n_nan_values: int = 0
    n_infeasible: int = 0
    infeasible_ids: list[int] = field(default_factory=list)
    degenerate: bool = False
    messages: list[str] = field(default_factory=list)

    @property
    def usable(self) -> bool:
        """True when the task can be used for a benchmark."""
        return not self.degenerate

    def to_dict(self) -> dict[str, Any]:
        """JSON-friendly summary (stored in ``meta["validation"]``)."""
        return {
            "n_configs_in": self.n_configs_in,
            "n_configs_out": self.n_configs_out,
            "n_seeds": self.n_seeds,
            "n_nan_values": self.n_nan_values,
            "n_infeasible": self.n_infeasible,
            "degenerate": self.degenerate,
        }


def require_columns(
    columns: Iterable[str], required: Iterable[str], source: str, what: str
) -> None:
    """Raise ``ValueError`` naming the ``required`` columns missing from ``columns``."""
    have = [str(c) for c in columns]
    missing = [str(c) for c in required if str(c) not in have]
    if missing:
        raise ValueError(
            f"{source}: missing {what} column(s) {missing}; the file has columns {have}. "
            f"Fix the column names or pass the right ones explicitly."
        )


def check_task(task: TaskData, source: str | None = None) -> None:
    """Raise ``ValueError`` if ``task`` is structurally unusable.

    Parameters
    ----------
    task : TaskData
        The task as loaded (NaN returns allowed).
    source : str, optional
        Where it came from, for the message (defaults to the task name).

    Raises
    ------
    ValueError
        One message naming the problem and the fix.
    """
    src = source or task.name
    returns = np.asarray(task.returns)
    if returns.ndim != 2:
        raise ValueError(
            f"{src}: returns must be a 2-D (configs, seeds) array, got {returns.shape}."
        )
    if not (np.issubdtype(returns.dtype, np.floating) or np.issubdtype(returns.dtype, np.integer)):
        raise ValueError(
            f"{src}: returns are not numeric (dtype {returns.dtype}); every per-seed return "
            f"must be a number, or empty/NaN for a failed run."
        )
    n, s = returns.shape
    if n == 0:
        raise ValueError(
            f"{src}: no configurations (the table has no data rows); a task needs at least one "
            "row of per-seed returns."
        )
    if s < MIN_SEEDS:
        raise ValueError(
            f"{src}: {s} seed(s) per configuration; at least {MIN_SEEDS} are needed to "
            f"estimate a variance. Name the per-seed return columns 'seed_<int>' or pass "
            f"return_columns / --return-columns."
        )
    if len(task.seeds) != s or len(set(task.seeds)) != s:
        raise ValueError(f"{src}: seeds {task.seeds} must be {s} distinct labels.")
    if task.configs.shape[0] != n or len(task.config_ids) != n:
        raise ValueError(
            f"{src}: {task.configs.shape[0]} configuration rows and {len(task.config_ids)} "
            f"config ids for {n} rows of returns."
        )
    if task.configs.shape[1] == 0:
        raise ValueError(
            f"{src}: no hyperparameter columns; pass hp_columns / --hp-columns to name them."
        )
    if np.isposinf(returns).any():
        raise ValueError(f"{src}: +inf return(s); use NaN (an empty cell) for a failed run.")
    ids = pd.Series(np.asarray(task.config_ids))
    if ids.duplicated().any():
        dup = ids[ids.duplicated()].iloc[0]
        raise ValueError(f"{src}: duplicate config_id {dup}; config ids must be unique.")
    dup_rows = task.configs.reset_index(drop=True).duplicated(keep=False)
    if dup_rows.any():
        rows = list(np.flatnonzero(dup_rows.to_numpy())[:2])
        raise ValueError(
            f"{src}: duplicate configurations: rows {rows[0]} and {rows[1]} have identical "
            f"hyperparameters {list(task.configs.columns)}; merge their seeds into one row, "
            f"or pass hp_columns if a distinguishing column was left out."
        )


def validate_task(
    task: TaskData, *, filter_infeasible: bool = True
) -> tuple[TaskData, ValidationReport]:
    """Apply the paper's NaN policy and detect a degenerate task.

    Parameters
    ----------
    task : TaskData
        The task as loaded.
    filter_infeasible : bool
        Drop configurations with any failed run (the paper). If False they are kept and
        only counted.

    Returns
    -------
    (TaskData, ValidationReport)
        The filtered task (a new object; ``meta["validation"]`` holds the report's
        counts) and the report.
    """
    check_task(task)
    returns = np.where(np.isneginf(task.returns), np.nan, np.asarray(task.returns, dtype=float))
    n, s = returns.shape
    bad = np.isnan(returns).any(axis=1)  # (n,)
    report = ValidationReport(
        task=task.name,
        n_configs_in=n,
        n_configs_out=n,
        n_seeds=s,
        n_nan_values=int(np.isnan(returns).sum()),
        n_infeasible=int(bad.sum()),
        infeasible_ids=[int(i) for i in np.asarray(task.config_ids)[bad]],
    )
    if report.n_infeasible:
        verb = "filtered out" if filter_infeasible else "kept"
        report.messages.append(
            f"{report.n_infeasible} infeasible configuration(s) (a NaN return on some seed; "
            f"{report.n_nan_values} NaN values in all) {verb}."
        )
    counts = seeds_per_config(task)
    if counts is not None:
        report.messages.append(replay_note(counts, s))
    keep = ~bad if filter_infeasible else np.ones(n, dtype=bool)
    out = replace(
        task,
        configs=task.configs.loc[keep].reset_index(drop=True),
        returns=returns[keep],
        seeds=list(task.seeds),
        config_ids=np.asarray(task.config_ids)[keep],
        meta=dict(task.meta),
    )
    if counts is not None:  # the counts follow the rows kept
        out.meta[SEEDS_PER_CONFIG] = [int(c) for c in counts[keep]]
    report.n_configs_out = out.n_configs
    report.degenerate = is_degenerate(out.returns)
    if report.degenerate:
        report.messages.append(
            "degenerate: all feasible configurations have the same mean return "
            "(or fewer than 2 remain); the task is skipped."
        )
    out.meta["validation"] = report.to_dict()
    return out, report


def is_degenerate(returns: np.ndarray, rtol: float = 1e-12) -> bool:
    """True when the configurations cannot be told apart by their mean return.

    Parameters
    ----------
    returns : numpy.ndarray
        ``(n, S)`` returns; rows with NaN are ignored.
    rtol : float
        Relative tolerance on the spread of the per-configuration means.
    """
    r = np.asarray(returns, dtype=float)
    r = r[~np.isnan(r).any(axis=1)] if r.ndim == 2 else r
    if r.shape[0] < 2:
        return True
    return means_degenerate(r.mean(axis=1), rtol)


def means_degenerate(means: np.ndarray, rtol: float = 1e-12) -> bool:
    """True when fewer than two ``(n,)`` per-configuration means remain or they are all equal
    (within ``rtol`` of the largest magnitude): see :func:`is_degenerate`."""
    means = np.asarray(means, dtype=float)
    if means.size < 2:
        return True
    spread = float(means.max() - means.min())
    return spread <= rtol * max(1.0, float(np.abs(means).max()))
