"""Stochastic surrogates of real RL tables: a continuous objective with a known MV optimum.

:class:`TableSurrogate` is fitted on one table (``N`` configurations x ``S`` seeds of real
returns, e.g. ``data/arlbench/*.parquet``) and defined on the table's *continuous* search space
(its hyperparameters, types, bounds and conditions, not its rows). At any configuration it has
a seed distribution (:mod:`erahbo.objectives.surrogate_model`: the table's floor and cap as
atoms, a fail and a learn mode whose probabilities, locations, spreads and skews are smooth
kernel averages of the table's configurations), on the table's processed scale (min-max by
default, as the real-table benchmark: the table's returns span ``[0, 1]``).

Exact ground truth, from the model, not from samples: ``f(x)``, ``rho2(x)`` (the mixture's
moments), ``MV(x, alpha)``, ``MV* = max_x MV`` (:meth:`TableSurrogate._search`: dense Sobol
points and the table's own configurations, then a mixed local search from the best), and the
mean MV under uniform sampling of the space (:meth:`SyntheticTask.mv_uniform_mean`) for the
normalized regret ``(MV* - MV(x)) / (MV* - mean uniform MV)``. The same for the other risk
measures of :mod:`erahbo.risk` (:meth:`TableSurrogate._value`): mean - c std from the moments,
``CVaR_q`` and the ``q`` quantile from the mixture's quantile function, exactly (its atoms'
shares and each mode's piecewise-linear integral), so their optimum (the same search) and
normalized regret are exact too. A return is deterministic per (configuration, seed): the seed
and the configuration's encoding key a numpy generator, as
:class:`~erahbo.objectives.synthetic.SyntheticTask` does.

The same interface as the synthetic tasks (``f``, ``rho2``, ``mv``, ``mv_max``, ``value``,
``value_max``, ``regret``, ``regret_norm``, ``task(config, seed)``, ``sample``). For example::

    task = TableSurrogate.bundled("ppo_cc_acrobot")       # stored fit, data/arlbench
    y = task(task.space.decode(task.space.sobol_unit(1, 0)[0]), seed=3)
    task.mv_max(alpha=1.0), task.mv_uniform_mean(alpha=1.0)
    task.value_max(CVaR(q=0.1)), task.value_uniform_mean(CVaR(q=0.1))

Stored fits (``data/arlbench/surrogates.json``, written by
``benchmarks/surrogate_validation.py --write-fits``) hold each table's lengthscales and a hash
of its returns: the surrogate is then a fixed function of the table, independent of the
optimizer that fitted it. ``docs/results/surrogates/README.md`` reports how well the model
predicts held-out configurations of each table.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
from scipy.optimize import minimize

from erahbo.objectives.surrogate_model import (
    MixtureModel,
    fit_lengthscales,
    mixture_quantile,
    mixture_tail_mean,
)
from erahbo.objectives.synthetic import SyntheticTask
from erahbo.risk import CVaR, MeanStd, MeanVariance, Quantile, RiskMeasure
from erahbo.space import SearchSpace

__all__ = ["DEFAULT_DATA", "FITS_FILE", "TableSurrogate", "column_groups", "table_hash"]

DEFAULT_DATA = Path("data/arlbench")  # the bundled real tables, from the repository root
FITS_FILE = "surrogates.json"
SEARCH_SOBOL = 2**14  # dense Sobol points of the MV* search
SEARCH_STARTS = 16  # local searches from the best of them
GRID = 129  # values tried per discrete hyperparameter in a coordinate sweep


def column_groups(space: SearchSpace) -> np.ndarray:
    """``(dim,)`` index of the hyperparameter of each encoded column."""
    g = np.full(space.dim, -1, dtype=int)
    for h, name in enumerate(space.names):
        g[space.columns(name)] = h
    if (g < 0).any():
        raise ValueError("column_groups: some encoded column belongs to no hyperparameter")
    return g


def table_hash(returns: np.ndarray) -> str:
    """SHA-256 of a table's processed returns (float64, C order): a stored fit's key."""
    return hashlib.sha256(np.ascontiguousarray(returns, dtype=np.float64).tobytes()).hexdigest()


def _prepared(source: Any, outcome_processing: str) -> Any:
    """A :class:`~erahbo.experiments.replay.ReplayTask` from a path or a loaded task."""
    from erahbo.datasets.loaders import load_task
    from erahbo.experiments.replay import ReplayTask, prepare_task

    if isinstance(source, ReplayTask):
        return source
    raw = load_task(Path(source)) if isinstance(source, (str, Path)) else source
    return prepare_task(raw, alpha=1.0, outcome_processing=outcome_processing)


class TableSurrogate(SyntheticTask):
    """A stochastic surrogate of one table on its continuous search space (module docstring).

    Parameters
    ----------
    name : str
        Task name (``"surr-<table>"`` by :meth:`from_table`).
    space : SearchSpace
        The continuous space (a table's hyperparameters, no rows).
    model : MixtureModel
        The fitted seed-distribution model on ``space``'s encoding.
    meta : dict, optional
        Provenance (table, processing, threshold, lengthscales, fit loss).
    """

    domain = "surrogate"

    def __init__(self, name: str, space: SearchSpace, model: MixtureModel,
                 meta: dict[str, Any] | None = None) -> None:
        super().__init__()
        if space.is_finite:
            raise ValueError("TableSurrogate: give the continuous space (SearchSpace of the "
                             "table's to_json()), not the finite table")
        if model.X.shape[1] != space.dim:
            raise ValueError(f"TableSurrogate: the model has {model.X.shape[1]} encoded "
                             f"columns, the space {space.dim}")
        self.name, self.space, self.model = name, space, model
        self.meta = dict(meta or {})

    # ------------------------------------------------------------------ construction
    @classmethod
    def from_table(cls, source: Any, *, lengthscales: dict[str, float] | None = None,
                   outcome_processing: str = "minmax", rows: Sequence[int] | None = None,
                   name: str | None = None) -> TableSurrogate:
        """Fit on a table (a path, a loaded ``TaskData`` or a prepared ``ReplayTask``).

        Parameters
        ----------
        lengthscales : dict, optional
            One lengthscale per hyperparameter (unit-cube scale); None fits them
            (:func:`~erahbo.objectives.surrogate_model.fit_lengthscales`, a few seconds on
            128 rows, about a minute on 512).
        outcome_processing : str
            The scale of the returns (``minmax``, ``vizier``, ``none``; as the benchmark).
        rows : sequence of int, optional
            Fit on these configurations of the table only (held-out validation).
        """
        rt = _prepared(source, outcome_processing)
        space = SearchSpace(rt.space.to_json())
        X = np.asarray(rt.space.candidates_unit(), dtype=float)  # (N, dim)
        R = np.asarray(rt.returns, dtype=float)  # (N, S)
        if rows is not None:
            X, R = X[np.asarray(rows, dtype=int)], R[np.asarray(rows, dtype=int)]
        groups = column_groups(space)
        loss = None
        if lengthscales is None:
            log_ls, loss = fit_lengthscales(X, R, groups)
        else:
            missing = sorted(set(space.names) - set(lengthscales))
            if missing:
                raise ValueError(f"lengthscales: no value for {missing}; give one per "
                                 "hyperparameter or None to fit them")
            log_ls = np.log([float(lengthscales[n]) for n in space.names])
        model = MixtureModel.from_table(X, R, groups, log_ls)
        meta = {"table": rt.name, "outcome_processing": outcome_processing,
                "n_configs": int(R.shape[0]), "n_seeds": int(R.shape[1]),
                "threshold": model.threshold, "fit_loss": loss,
                "lengthscales": dict(zip(space.names, np.exp(log_ls).tolist(), strict=True)),
                "table_sha256": table_hash(rt.returns)}
        return cls(name or f"surr-{rt.name}", space, model, meta)

    @classmethod
    def bundled(cls, table: str, data_dir: str | Path = DEFAULT_DATA) -> TableSurrogate:
        """The surrogate of ``data_dir/<table>.parquet`` with its stored fit.

        Raises
        ------
        ValueError
            No stored fit for the table, or the table changed since the fit (its hash).
        """
        data_dir = Path(data_dir)
        path = data_dir / f"{table}.parquet"
        fits_path = data_dir / FITS_FILE
        if not path.is_file():
            raise ValueError(f"surrogate {table!r}: no table {path}; pass --data DIR with the "
                             "tables (default data/arlbench, from the repository root)")
        fits = json.loads(fits_path.read_text()) if fits_path.is_file() else {}
        if table not in fits:
            raise ValueError(f"surrogate {table!r}: no stored fit in {fits_path}; run "
                             "`python benchmarks/surrogate_validation.py --write-fits`")
        fit = fits[table]
        task = cls.from_table(path, lengthscales=fit["lengthscales"],
                              outcome_processing=fit.get("outcome_processing", "minmax"))
        if task.meta["table_sha256"] != fit["table_sha256"]:
            raise ValueError(f"surrogate {table!r}: {path} changed since its fit (hash); refit "
                             "with `python benchmarks/surrogate_validation.py --write-fits`")
        task.meta["fit_loss"] = fit.get("fit_loss")
        return task

    # ------------------------------------------------------------------ truth
    def _moments(self, U: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        return self.model.moments(self.space.project(np.atleast_2d(U)))

    def _f(self, U: np.ndarray) -> np.ndarray:
        return self._moments(U)[0]

    def _rho2(self, U: np.ndarray) -> np.ndarray:
        return self._moments(U)[1]

    def _value(self, U: np.ndarray, measure: RiskMeasure) -> np.ndarray:
        """The measure of the mixture at ``U``, exact: MV and mean - c std from its moments,
        CVaR_q and the ``q`` quantile from its quantile function
        (:func:`~erahbo.objectives.surrogate_model.mixture_tail_mean`, ``mixture_quantile``)."""
        V = self.space.project(np.atleast_2d(U))
        if isinstance(measure, (MeanVariance, MeanStd)):
            f, r = self.model.moments(V)
            return measure.value(f, r)
        if isinstance(measure, (CVaR, Quantile)):
            tail = mixture_tail_mean if isinstance(measure, CVaR) else mixture_quantile
            return tail(*self.model.predict(V), self.model.lo, self.model.hi, measure.q)
        raise ValueError(f"{self.name}: no exact value of {measure.label} on a surrogate; add "
                         "it to TableSurrogate._value (a function of the mixture's moments or "
                         "of its quantile function)")

    def _uniform_moments(self) -> tuple[np.ndarray, np.ndarray]:
        cached = getattr(self, "_uniform_cache", None)
        if cached is None:
            cached = self.model.moments(self._uniform_points())  # valid points already
            self._uniform_cache = cached
        return cached

    # ------------------------------------------------------------------ sampling
    def sample(self, config: dict[str, Any], seeds: Sequence[int]) -> list[float]:
        """Returns of ``config`` for several seeds (each deterministic per configuration and
        seed: one generator keyed by both draws the component and the level)."""
        U, _ = self._unit(config)
        u = self.space.project(U)[0]
        P, q0, q1 = self.model.predict(u[None])
        out = []
        for s in seeds:
            u1, u2 = self._rng(u, s).random(2)
            out.append(self.model.draw(P[0], q0[0], q1[0], float(u1), float(u2)))
        return out

    # ------------------------------------------------------------------ the optimum search
    def _search(self, measure: RiskMeasure) -> np.ndarray:
        """The best valid configuration of the measure (MV*, CVaR*, ...): ``SEARCH_SOBOL``
        Sobol points and the table's own configurations, then from the ``SEARCH_STARTS`` best
        a local search alternating L-BFGS-B over the float columns and coordinate sweeps over
        each discrete hyperparameter (every choice of a categorical; ``GRID`` values and the
        nearest steps of an integer), until a sweep gains nothing."""
        cand = np.vstack([self.space.sobol_unit(SEARCH_SOBOL, seed=12345), self.model.X])
        vals = self._value(cand, measure)
        order = np.argsort(-vals, kind="stable")
        starts: list[np.ndarray] = []
        for i in order:
            if not any(np.allclose(cand[i], s) for s in starts):
                starts.append(cand[i])
            if len(starts) == SEARCH_STARTS:
                break
        best_u, best_v = cand[order[0]].copy(), float(vals[order[0]])
        for u0 in starts:
            u, v = self._local(u0, measure)
            if v > best_v:
                best_u, best_v = u, v
        return best_u

    def _local(self, u: np.ndarray, measure: RiskMeasure, sweeps: int = 6
               ) -> tuple[np.ndarray, float]:
        u = self.space.project(u[None])[0]
        v = float(self._value(u[None], measure)[0])
        cont = np.flatnonzero(self.space.continuous_mask)
        for _ in range(sweeps):
            v_before = v
            if cont.size:
                u, v = self._polish_continuous(u, v, cont, measure)
            for name in self.space.names:
                u, v = self._sweep(u, v, name, measure)
            if v <= v_before + 1e-12:
                break
        return u, v

    def _polish_continuous(self, u: np.ndarray, v: float, cont: np.ndarray,
                           measure: RiskMeasure) -> tuple[np.ndarray, float]:
        h = 1e-7
        eye = np.eye(cont.size)

        def neg_and_grad(z: np.ndarray) -> tuple[float, np.ndarray]:
            # the point and one forward (at the upper bound: backward) step per column, at once
            steps = np.where(z + h <= 1.0, h, -h)  # (c,)
            W = np.repeat(u[None], cont.size + 1, axis=0)
            W[:, cont] = z[None, :] + np.vstack([np.zeros(cont.size), eye * steps])
            vals = -self._value(W, measure)
            return float(vals[0]), (vals[1:] - vals[0]) / steps

        r = minimize(neg_and_grad, u[cont], jac=True, method="L-BFGS-B",
                     bounds=[(0.0, 1.0)] * cont.size,
                     options={"ftol": 1e-13, "gtol": 1e-9, "maxiter": 300})
        if -r.fun > v:
            w = u.copy()
            w[cont] = np.clip(r.x, 0.0, 1.0)
            w = self.space.project(w[None])[0]
            vw = float(self._value(w[None], measure)[0])
            if vw > v:
                return w, vw
        return u, v

    def _sweep(self, u: np.ndarray, v: float, name: str, measure: RiskMeasure
               ) -> tuple[np.ndarray, float]:
        cols = self.space.columns(name)
        width = cols.stop - cols.start
        if width == 0 or (width == 1 and self.space.continuous_mask[cols.start]):
            return u, v
        if width > 1:  # a categorical: every choice
            blocks = np.eye(width)
        else:  # an integer or ordinal: a grid and the nearest steps
            step = self._unit_step(name)
            near = u[cols.start] + step * np.arange(-3, 4)
            blocks = np.concatenate([np.linspace(0.0, 1.0, GRID), near])[:, None]
        W = np.repeat(u[None], len(blocks), axis=0)
        W[:, cols] = np.clip(blocks, 0.0, 1.0)
        W = self.space.project(W)
        vals = self._value(W, measure)
        i = int(np.argmax(vals))
        return (W[i].copy(), float(vals[i])) if vals[i] > v else (u, v)

    def _unit_step(self, name: str) -> float:
        """One step of an integer hyperparameter on its unit column (linear ints; a grid
        step otherwise)."""
        for h in self.space.to_json()["hyperparameters"]:
            if h["name"] == name and h.get("type") == "int" and h["upper"] > h["lower"]:
                return 1.0 / (float(h["upper"]) - float(h["lower"]))
        return 1.0 / (GRID - 1)

    def __repr__(self) -> str:
        return (f"TableSurrogate({self.name!r}, dim={self.space.dim}, "
                f"fitted on {self.meta.get('n_configs')} configurations)")
