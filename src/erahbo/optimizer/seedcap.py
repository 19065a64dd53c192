"""The seed caps: how many seeds one configuration may collect (an erahbo extension).

A part of a strategy (:mod:`erahbo.optimizer.strategy`); its options are declared in
:data:`PARAMS` (checks, both presets, CLI flags: :mod:`erahbo.optimizer.parts`).

The paper pools a re-selected configuration's seeds without limit; with live objectives this
can stop the exploration (issue 15: one configuration collected 2903 of 3000 runs). erahbo
caps a configuration at ``max_seeds`` seeds (default ``k_max``). ``pool_share`` relaxes the cap
for identification: configurations at the cap may get more seeds while all the seeds beyond
the cap stay within that share of the runs, so the best few configurations can be told apart
with more seeds while the other runs still explore. ``seed_share`` makes the cap grow with the
study: a configuration holds at most that share of the runs so far (never less than one
round's seeds) until the share reaches ``max_seeds``, so the first rounds explore instead of
verifying the first promising configurations.

Every function counts told and pending seeds, so parallel trials never overshoot.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from erahbo.validation import Param, int_at_least, share

if TYPE_CHECKING:
    from erahbo._data import Observations

__all__ = ["PARAMS", "SeedCaps", "cap_of", "check"]


def cap_of(o: Any) -> int | None:
    """The most seeds per configuration of validated options (``max_seeds`` resolved; None: no
    limit): ``k_max`` for ERAHBO, ``max(k, k_max)`` for the other methods, no limit under
    ``preset="paper"`` (the paper pools a re-selected configuration's seeds without limit);
    ``max_seeds=0``: no limit."""
    if o.max_seeds is None:
        if o.preset == "paper":
            return None
        return int(o.k_max if o.method == "erahbo" else max(o.k, o.k_max))
    return int(o.max_seeds) or None


#: The seed caps' options (:class:`erahbo.validation.Param`).
PARAMS = (
    Param("max_seeds", int,
          int_at_least(0, " (the most seeds one configuration collects; 0: no limit)"),
          default=None, paper=None, absent=0, resolve=lambda o: cap_of(o) or 0,
          help="Most seeds one configuration collects in the study (default: k_max, or "
               "max(k, k_max) for the fixed-k methods; none with --preset paper; 0: no "
               "limit)."),
    Param("pool_share", float,
          share("the share of the runs that may go beyond max_seeds to re-selected "
                "configurations; 0: a strict cap"),
          default=0.25, paper=0.0, absent=0.0,  # erahbo: a quarter of the runs (identification)
          help="Share of all runs that may go beyond --max-seeds to re-selected "
               "configurations, to tell the best apart (default: the preset's; 0: a strict "
               "cap)."),
    Param("seed_share", float,
          share("the share of the runs so far one configuration may hold until max_seeds; 0: "
                "the cap is max_seeds from the start"),
          default=0.0, paper=0.0, absent=0.0,
          short="ss", label="seed share {}", form="ss<q>",
          help="Share of all runs so far one configuration may hold until --max-seeds: the cap "
               "grows with the study (default: the preset's; 0: --max-seeds from the start)."),
)


def check(o: Any, given: set[str]) -> None:
    """Refuse seed caps below one round's seeds, and a pool beyond no cap."""
    cap, first = o.seed_cap, o.k_min if o.method == "erahbo" else o.k
    if cap is not None and cap < o.round_seeds:
        raise ValueError(
            f"max_seeds={o.max_seeds} is below the seeds of one round (k_init="
            f"{o.k_init_value}, first round {first} seeds): give at least "
            f"{o.round_seeds}, or 0 for no limit")
    if "pool_share" in given and o.pool_share and cap is None:
        raise ValueError(
            f"pool_share={o.pool_share} lets seeds go beyond the seed cap, but there is no cap "
            "(max_seeds=0, or preset='paper'): give max_seeds > 0, or drop pool_share")


def _seeds(data: Observations, pending: Iterable[Any]) -> tuple[np.ndarray, int]:
    """Seeds per evaluated row ``(n,)`` with pending ones added, and all runs (told and
    pending). A configuration not evaluated yet holds one round's seeds at most, never more
    than the cap (``Options`` checks ``max_seeds`` against a round), so it counts in the total
    only."""
    k = np.asarray(data.k, dtype=int).copy()
    total = int(k.sum())
    for t in pending:
        total += len(t.seeds)
        row = data.row_of(t.config_id)
        if row is not None:
            k[row] += len(t.seeds)
    return k, total


@dataclass(frozen=True)
class SeedCaps:
    """The seed caps of a strategy: how many seeds one configuration may collect.

    Parameters
    ----------
    cap : int or None
        ``max_seeds`` resolved: the most seeds per configuration (None: no limit).
    pool_share : float
        Share of all runs that may go beyond the cap (0: a strict cap).
    seed_share : float
        A growing cap: at most this share of the runs so far (0: off).
    round_seeds : int
        Seeds of one round at least (the least a growing cap allows).
    """

    cap: int | None = None
    pool_share: float = 0.0
    seed_share: float = 0.0
    round_seeds: int = 2

    @classmethod
    def from_options(cls, o: Any) -> SeedCaps:
        """The seed caps of validated options."""
        return cls(cap_of(o), float(o.pool_share or 0.0), float(o.seed_share or 0.0),
                   o.round_seeds)

    def limits(self, data: Observations, pending: Iterable[Any],
               allowed: np.ndarray | None) -> tuple[int | None, int]:
        """The cap now (None: no limit) and the runs left in the pool, from one count of the
        seeds (see :meth:`cap_now` and :meth:`pool_left`)."""
        pending = list(pending)
        k, total = _seeds(data, pending)
        cap, share = self.cap, self.seed_share or 0.0
        now = cap
        if share:
            fresh = None
            if allowed is not None:
                fresh = np.asarray(allowed, dtype=bool).copy()
                fresh[data.config_ids] = False
                fresh[[t.config_id for t in pending]] = False
            if fresh is None or fresh.any():
                grown = max(self.round_seeds, math.floor(share * total + 1e-9))
                now = grown if cap is None else min(cap, grown)
        pool_share = self.pool_share or 0.0
        if cap is None or not pool_share or now != cap:
            return now, 0
        beyond = int(np.maximum(k - cap, 0).sum())
        return now, max(math.floor((pool_share * total - beyond) / (1.0 - pool_share) + 1e-9),
                        0)

    def cap_now(self, data: Observations, pending: Iterable[Any],
                allowed: np.ndarray | None = None) -> int | None:
        """The seed cap now: ``max_seeds``, or with ``seed_share`` that share of all runs
        (told and pending), at least one round's seeds and at most ``max_seeds``; None: no
        limit.

        ``allowed``: a finite table's candidate mask ``(N,)``. Once every allowed candidate
        has been evaluated (or is pending) the cap is ``max_seeds``: a growing cap never ends
        a study early.
        """
        return self.limits(data, pending, allowed)[0]

    def pool_left(self, data: Observations, pending: Iterable[Any],
                  allowed: np.ndarray | None = None) -> int:
        """Runs still allowed beyond the cap: the most ``x`` with ``beyond + x <= pool_share *
        (runs + x)``, where ``beyond`` counts the seeds beyond the cap and ``runs`` all runs
        (told and pending), so the share holds after every run; 0 without a cap, with
        ``pool_share = 0`` or while a growing cap (``seed_share``) is below ``max_seeds``."""
        return self.limits(data, pending, allowed)[1]

    def seeds_left(self, data: Observations, pending: Iterable[Any], config_id: int,
                   allowed: np.ndarray | None = None) -> float:
        """Seeds ``config_id`` may still get: up to the cap (:meth:`cap_now`), then what the
        pool leaves (inf: no cap)."""
        pending = list(pending)
        cap, pool = self.limits(data, pending, allowed)
        if cap is None:
            return math.inf
        row = data.row_of(config_id)
        have = (0 if row is None else int(data.k[row])) + sum(
            len(t.seeds) for t in pending if t.config_id == config_id)
        return max(cap - have, 0) + pool

    def rows_at_cap(self, data: Observations, pending: Iterable[Any],
                    allowed: np.ndarray | None = None) -> list[int]:
        """Rows not to propose again: the cap's seeds (:meth:`cap_now`) and nothing left in
        the pool."""
        cap, pool = self.limits(data, pending, allowed)
        if cap is None or pool >= 1:
            return []
        return np.flatnonzero(np.asarray(data.k) >= cap).tolist()
