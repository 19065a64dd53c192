"""Names a hyperparameter may not take: the columns of a study's result tables.

``Result.history`` (and ``history.csv``) and ``Result.configs`` put the hyperparameters next to
their own columns, so a hyperparameter called ``mean`` or ``seed`` would shadow one of them
(duplicate columns in ``history.csv``, a warm start reading the wrong ``seed``). ``Result.
rounds`` shares the names of the others; it is reserved as a whole so that the three tables
can be joined on ``config_id``. The lists are spelled out here (the space sits below the
modules that define the tables); ``tests/test_bad_input.py`` checks that they match
:data:`erahbo.optimizer.records.HISTORY_COLUMNS`, :data:`~erahbo.optimizer.records.
ROUND_COLUMNS` and :data:`erahbo.recommendation.CONFIG_COLUMNS`.
"""

from __future__ import annotations

__all__ = ["RESERVED_NAMES", "check_names"]

_HISTORY = ("iteration", "phase", "config_id", "seed", "return", "k", "k_round", "wall_time",
            "status", "error", "attempt", "worker", "rerun", "n_failed")
_CONFIGS = ("config_id", "k", "mean", "std", "var", "n_failed", "mv", "lcb_mv", "ucb_mv",
            "rank", "rule")
_ROUNDS = ("iteration", "phase", "config_id", "k", "k_total", "ucb_mv", "lcb_mv", "B_t",
           "beta_stop", "acquisition", "stop_reason", "mean", "var", "n_failed")

RESERVED_NAMES: tuple[str, ...] = tuple(dict.fromkeys((*_HISTORY, *_CONFIGS, *_ROUNDS)))
"""Columns of ``Result.history`` / ``history.csv``, ``Result.configs`` and ``Result.rounds``."""


def check_names(names: list[str], *, table: bool) -> None:
    """Refuse hyperparameter names that are result columns (``table``: inferred from the
    columns of a candidate table, so the fix is renaming those columns)."""
    bad = [n for n in names if n in RESERVED_NAMES]
    if not bad:
        return
    if table:
        fix = ("rename those columns of the candidate table, e.g. df.rename(columns="
               f"{ {n: n + '_hp' for n in bad} }), or drop them if they are not hyperparameters")
    else:
        fix = f"rename them, e.g. {', '.join(repr(n + '_hp') for n in bad)}"
    raise ValueError(
        f"SearchSpace: hyperparameter name(s) {bad} are reserved: the result tables "
        f"(Result.history and history.csv, Result.configs, Result.rounds) have columns of "
        f"these names, which a hyperparameter would shadow. Reserved: {list(RESERVED_NAMES)}; "
        f"{fix}"
    )
