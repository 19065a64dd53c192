"""Pooled observations per configuration and the seeds handed to the objective."""

from __future__ import annotations

import numpy as np

__all__ = ["Observations", "config_seeds"]

SEED_HIGH = 2**31 - 1  # seeds are drawn from 1 .. 2^31 - 2 (positive, fit in int32)


def config_seeds(seed: int, config_id: int, start: int, count: int) -> list[int]:
    """Seeds ``start .. start + count - 1`` of one configuration.

    Each configuration has its own deterministic stream of distinct positive integers derived
    from ``(seed, config_id)`` (never 0), so a configuration chosen again continues with fresh
    seeds, and on a finite table the same row gets the same seeds under every method.

    Parameters
    ----------
    seed : int
        Run seed (``>= 0``).
    config_id : int
        Configuration id (``>= 0``).
    start, count : int
        Position in the stream and number of seeds.

    Returns
    -------
    list of int
    """
    total = start + count
    n_draw = 2 * total + 16
    while True:
        rng = np.random.default_rng([int(seed), int(config_id)])
        draws = rng.integers(1, SEED_HIGH, size=n_draw)
        distinct = list(dict.fromkeys(int(v) for v in draws))
        if len(distinct) >= total:
            return distinct[start:total]
        n_draw *= 2  # pragma: no cover - needs ~2^15 seeds of one configuration


class Observations:
    """Evaluated configurations with their pooled statistics (one row per configuration).

    A configuration chosen again pools its seeds into its row: sample mean, unbiased sample
    variance (ddof=1) and count ``k``.  Rows are append-only (the fast model caches rely on it).

    Attributes
    ----------
    U : numpy.ndarray
        ``(n, dim)`` encoded configurations.
    ybar, s2 : numpy.ndarray
        ``(n,)`` sample means and variances.
    k : numpy.ndarray
        ``(n,)`` seed counts (at least ``min_returns``).
    config_ids : list of int
        Configuration id of each row.
    """

    def __init__(self, dim: int, min_returns: int = 2) -> None:
        self.dim = int(dim)
        self.min_returns = int(min_returns)  # 1: one-seed rows (s2 = 0, erahbo.gp.one_seed)
        self._U = np.zeros((16, self.dim))
        self._n = 0
        self.config_ids: list[int] = []
        self.returns: list[list[float]] = []
        self.seeds: list[list[int]] = []
        self._row: dict[int, int] = {}
        self._stats = np.zeros((16, 4))  # (capacity, 4): mean, variance, count, sum of squares
        self.version = 0  # bumped by every add: models built on an older version are stale

    @property
    def n(self) -> int:
        """Number of distinct evaluated configurations."""
        return self._n

    @property
    def U(self) -> np.ndarray:  # (n, dim)
        return self._U[: self._n]

    @property
    def ybar(self) -> np.ndarray:  # (n,)
        return self._stats[: self._n, 0]

    @property
    def s2(self) -> np.ndarray:  # (n,)
        return self._stats[: self._n, 1]

    @property
    def k(self) -> np.ndarray:  # (n,) float counts
        return self._stats[: self._n, 2]

    def stats(self, row: int) -> tuple[float, float, int]:
        """Pooled ``(mean, variance, k)`` of one row."""
        mean, var, k, _ = self._stats[row].tolist()
        return mean, var, int(k)

    def row_of(self, config_id: int) -> int | None:
        """Row of a configuration id, or None when it was never evaluated."""
        return self._row.get(int(config_id))

    def n_seeds(self, config_id: int) -> int:
        """Seeds of a configuration so far (0 when new)."""
        r = self.row_of(config_id)
        return 0 if r is None else len(self.returns[r])

    def add(self, config_id: int, u: np.ndarray, returns: list[float], seeds: list[int]) -> int:
        """Pool ``returns`` (one per seed) into the configuration's row; returns the row."""
        r = self.row_of(config_id)
        if r is None:
            if len(returns) < self.min_returns:
                raise ValueError(
                    f"config {config_id} is new and got {len(returns)} return; a new "
                    "configuration needs at least 2 returns (its sample variance, ddof=1)"
                    if self.min_returns == 2 else
                    f"config {config_id} is new and got no return; it needs at least one"
                )
            if self._n == self._U.shape[0]:
                self._U = np.vstack([self._U, np.zeros_like(self._U)])
                self._stats = np.vstack([self._stats, np.zeros_like(self._stats)])
            r = self._n
            self._U[r] = u
            self._n += 1
            self._row[int(config_id)] = r
            self.config_ids.append(int(config_id))
            self.returns.append([])
            self.seeds.append([])
        mean, _, k, m2 = self._stats[r].tolist()
        for v in returns:  # Welford's update: stable for returns with a large offset
            v = float(v)
            k += 1
            delta = v - mean
            mean += delta / k
            m2 += delta * (v - mean)
        self._stats[r] = (mean, m2 / (k - 1) if k > 1 else 0.0, k, m2)
        self.returns[r].extend(float(v) for v in returns)
        self.seeds[r].extend(int(s) for s in seeds)
        self.version += 1
        return r
