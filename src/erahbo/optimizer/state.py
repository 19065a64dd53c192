"""What a study knows about its configurations: the data ``D_t`` and each one's status.

:class:`StudyState` holds the pooled observations (:class:`erahbo._data.Observations`), the
finite candidate table and which rows may still be proposed, the configurations that are
infeasible or had a failed (penalized) run, the warm-start seeds and each configuration's seed
stream.  The optimizer (:mod:`erahbo.optimizer.core`) and the warm start
(:mod:`erahbo.optimizer.warm`) change it through its methods.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from erahbo._data import Observations, config_seeds
from erahbo.gp.bounds import mean_variance
from erahbo.risk import RiskLike
from erahbo.space import SearchSpace

__all__ = ["StudyState", "initial_design_of"]


class StudyState:
    """The data of a study and the status of every configuration.

    Parameters
    ----------
    space : SearchSpace
    seed : int
        The study's seed (keys the seed streams of the configurations).

    Attributes
    ----------
    data : Observations
        Pooled returns per evaluated configuration (rows in order of first evaluation).
    candidates : numpy.ndarray or None
        ``(m, dim)`` encodings of a finite table's rows (None: continuous space).
    allowed : numpy.ndarray or None
        ``(m,)`` bool, rows that may still be proposed.
    infeasible : set of int
        Configurations never to propose again (never the incumbent).
    n_penalized : dict
        Configuration id -> its counted failed (penalized) runs.
    forbidden : list of numpy.ndarray
        ``(dim,)`` encodings of infeasible configurations (continuous spaces avoid them).
    warm_seeds : dict
        Configuration id -> seeds run before the study (never handed out again).
    """

    def __init__(self, space: SearchSpace, seed: int, min_returns: int = 2) -> None:
        self.space = space
        self.seed = int(seed)
        self.data = Observations(space.dim, min_returns)
        self.candidates = space.candidates_unit() if space.is_finite else None
        self.allowed = (None if self.candidates is None
                        else np.ones(len(self.candidates), dtype=bool))
        self.infeasible: set[int] = set()
        self.n_penalized: dict[int, int] = {}
        self.forbidden: list[np.ndarray] = []
        self.warm_seeds: dict[int, set[int]] = {}
        self._next_id = 0
        self._seed_streams: dict[int, list[int]] = {}
        self._config_cache: tuple[int, dict[str, Any]] = (-1, {})

    def new_id(self, u: np.ndarray) -> int:
        """Id of the configuration with encoding ``u (dim,)`` (a repeat pools with the data)."""
        same = np.flatnonzero((self.data.U == u).all(1))
        if same.size:
            return self.data.config_ids[int(same[0])]
        self._next_id += 1
        return self._next_id - 1

    def config(self, cid: int, u: np.ndarray) -> dict[str, Any]:
        """The configuration dict of id ``cid`` (encoding ``u``)."""
        if self.space.is_finite:
            return self.space.candidate_config(cid)
        return self.space.decode(u)

    def trial_config(self, cid: int, u: np.ndarray) -> dict[str, Any]:
        """A fresh copy of the configuration of ``cid`` (cached for repeated trials)."""
        if self._config_cache[0] != cid:
            self._config_cache = (cid, self.config(cid, u))
        return dict(self._config_cache[1])

    def next_seeds(self, cid: int, n: int) -> list[int]:
        """The next ``n`` seeds of configuration ``cid``'s stream (warm-start seeds skipped).

        The stream is keyed by ``(seed, cid)``: on a finite table a row gets the same seeds
        under every method.
        """
        warm = self.warm_seeds.get(cid, set())
        have = self.data.n_seeds(cid) - len(warm)  # seeds handed out by this study
        stream = self._seed_streams.get(cid)
        if stream is None or len(stream) < have + n:  # the configuration's seed stream, cached
            stream = config_seeds(self.seed, cid, 0, max(2 * (have + n), 32) + len(warm))
            stream = [sd for sd in stream if sd not in warm]
            self._seed_streams[cid] = stream
        return stream[have : have + n]

    def mark_infeasible(self, cid: int, u: np.ndarray) -> None:
        """Configuration ``cid`` is never proposed again (and never the incumbent)."""
        if cid in self.infeasible:
            return
        self.infeasible.add(cid)
        self.forbidden.append(np.asarray(u, dtype=float).copy())
        if self.allowed is not None:
            self.allowed[cid] = False

    def row_mask(self) -> np.ndarray | None:
        """``(n,)`` bool: data rows that may be the incumbent (None: all of them).

        Infeasible configurations are never the incumbent and never set ``B_t``, nor are
        configurations whose counted runs failed at least half of the time (``2 * n_failed >=
        k``): with a constant penalty their sample variance measures the penalty, not the
        configuration. A configuration with sporadic failures stays eligible: the failures
        are outcomes of it, already in its sample mean (lower) and variance (larger)
        (``docs/robustness.md``, "Sporadic failures").
        """
        d = self.data
        bad = set(self.infeasible)
        for cid, n_pen in self.n_penalized.items():
            row = d.row_of(cid)
            if row is not None and 2 * n_pen >= d.k[row]:
                bad.add(cid)
        if not bad:
            return None
        return np.array([c not in bad for c in d.config_ids], dtype=bool)

    def add_penalized(self, cid: int, n: int) -> None:
        """``n`` more counted failed (penalized) runs of configuration ``cid``."""
        if n:
            self.n_penalized[cid] = self.n_penalized.get(cid, 0) + n

    def exclude_row(self, config_id: int) -> None:
        """Remove a finite-table row from the candidates."""
        if self.allowed is None:
            raise ValueError("exclude: only finite candidate tables have rows to exclude")
        if not 0 <= int(config_id) < len(self.allowed):
            raise ValueError(f"exclude: config_id {config_id} outside "
                             f"0..{len(self.allowed) - 1}")
        self.allowed[int(config_id)] = False

    def sample_gap(self, row: int, weight: RiskLike) -> float | None:
        """Sample MV (eq. 5) of data row ``row`` minus the best other one (None: no other).

        Rows that may not be the incumbent (:meth:`row_mask`) are not compared with.
        """
        d = self.data
        mv = mean_variance(d.ybar, d.s2, weight)
        mask = self.row_mask()
        others = np.ones(d.n, dtype=bool) if mask is None else mask.copy()
        others[row] = False
        return float(mv[row] - mv[others].max()) if others.any() else None

    def unevaluated_rows(self, allowed: np.ndarray) -> np.ndarray:
        """Indices of the ``allowed (n_candidates,)`` rows of a finite table not evaluated yet;
        every allowed row when each has been evaluated. What a random round draws from."""
        free = allowed.copy()
        free[list(self.data.config_ids)] = False
        return np.flatnonzero(free if free.any() else allowed)

    def random_choice(
        self, allowed: np.ndarray | None, rng: np.random.Generator
    ) -> tuple[int | None, np.ndarray, int]:
        """A uniform configuration (random search, or no data yet): unevaluated rows first.

        Returns ``(candidate index or None, encoding (dim,), config id)``.
        """
        C = self.candidates
        if C is not None:
            cand = int(rng.choice(self.unevaluated_rows(allowed)))
            return cand, C[cand], cand
        u = self.space.sample_unit(1, rng)[0]
        return None, u, self.new_id(u)


def initial_design_of(
    space: SearchSpace, design: Any, n_init: int, seed: int
) -> list[tuple[int | None, np.ndarray]]:
    """The initial configurations: ``(row or None, encoding (dim,))`` each.

    ``design`` None: ``n_init`` scrambled Sobol points (a finite table: nearest distinct rows);
    otherwise the given row indices (finite table), config dicts or encodings.
    """
    sp = space
    if design is None:
        if n_init < 1:
            raise ValueError(f"n_init={n_init} must be an int >= 1 (0 only with a warm_start "
                             "that gives the first data)")
        if sp.is_finite:
            return [(int(i), sp.candidates_unit()[int(i)])
                    for i in sp.sobol_indices(min(n_init, sp.n_candidates), seed)]
        return [(None, u) for u in sp.sobol_unit(int(n_init), seed)]
    items = list(design)
    if not items:
        raise ValueError("initial_design is empty; give at least one configuration or None")
    out: list[tuple[int | None, np.ndarray]] = []
    for it in items:
        if sp.is_finite:
            if isinstance(it, dict) or not float(it) == int(it):
                raise TypeError("initial_design: on a finite table give row indices (ints)")
            i = int(it)
            if not 0 <= i < sp.n_candidates:
                raise ValueError(f"initial_design: row {i} outside 0..{sp.n_candidates - 1}")
            out.append((i, sp.candidates_unit()[i]))
        elif isinstance(it, dict):
            out.append((None, sp.encode(it)))
        else:
            out.append((None, sp.project(np.asarray(it, dtype=float)[None, :])[0]))
    ids = [i for i, _ in out if i is not None]
    if len(set(ids)) != len(ids):
        raise ValueError("initial_design: rows must be distinct")
    return out
