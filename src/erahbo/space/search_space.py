"""Search spaces: hyperparameter specs, the unit-cube encoding and finite candidate tables.

The models work on an encoded unit cube ``[0, 1]^dim``: numeric hyperparameters take one
column (log-scaled for ``log``/``logint``), categoricals a one-hot block, constants none.
Inactive conditional hyperparameters are imputed with a fixed value (0.5 for a numeric
column, all zeros for a one-hot block; see :mod:`erahbo.space.kinds`) and left out of config dicts.

>>> space = SearchSpace({"lr": ("log", 1e-5, 1e-1), "gamma": ("float", 0.9, 0.9999),
...                      "batch": ("int", 16, 256), "act": ("cat", ["tanh", "relu"])})
>>> space.dim
5
>>> space.decode(space.encode({"lr": 1e-3, "gamma": 0.99, "batch": 64, "act": "relu"}))["act"]
'relu'
"""

from __future__ import annotations

import math
import warnings
from typing import Any

import numpy as np
import pandas as pd

import erahbo.space.kinds as _hp
from erahbo.space.configspace import from_configspace, is_configspace
from erahbo.space.kinds import HP, clause_holds, native
from erahbo.space.reserved import check_names

__all__ = ["SearchSpace"]

JSON_FORMAT = "erahbo.SearchSpace"
JSON_VERSION = 1


def _parse(spec: Any) -> list[HP]:
    """Any accepted non-table spec -> list of hyperparameters."""
    if isinstance(spec, SearchSpace):
        return _parse(spec.to_json())
    if is_configspace(spec):
        return from_configspace(spec)
    if isinstance(spec, dict) and "hyperparameters" in spec:
        items = spec["hyperparameters"]
        if not isinstance(items, list):
            raise TypeError("search space JSON: 'hyperparameters' must be a list of dicts")
        out = []
        for d in items:
            if not isinstance(d, dict) or "name" not in d:
                raise ValueError(f"search space JSON: entry {d!r} needs a 'name'")
            out.append(_hp.parse_entry(d["name"], d))
        _attach_conditions(out, spec.get("conditions"))
        return out
    if isinstance(spec, dict):
        return [_hp.parse_entry(name, entry) for name, entry in spec.items()]
    raise TypeError(
        f"SearchSpace: cannot read a spec of type {type(spec).__name__}; pass a dict such as "
        '{"lr": ("log", 1e-5, 1e-1)}, a ConfigSpace.ConfigurationSpace, the JSON dict of '
        "SearchSpace.to_json() or a pandas DataFrame of candidate configurations"
    )


def _attach_conditions(hps: list[HP], conds: Any) -> None:
    """Top-level ``"conditions": [{"child": ..., "parent": ..., "values": [...]}, ...]``."""
    by_name = {h.name: h for h in hps}
    for c in conds or []:
        child = c.get("child") if isinstance(c, dict) else None
        if child not in by_name:
            raise ValueError(
                f"search space JSON: condition {c!r} needs a 'child' naming a hyperparameter"
            )
        rest = {k: v for k, v in c.items() if k != "child"}
        h = by_name[child]
        h.conditions = h.conditions + _hp.parse_conditions(rest, f"hyperparameter {child!r}")


def _infer_column(name: str, col: pd.Series) -> HP:
    """Type of one candidate-table column (see :meth:`SearchSpace.from_table`)."""
    nulls = col.isna()
    vals = col[~nulls]
    if vals.empty:
        raise ValueError(f"table column {name!r} has no values; drop it or fill it in")
    optional = bool(nulls.any())
    uniq = list(dict.fromkeys(native(v) for v in vals))
    numeric = pd.api.types.is_numeric_dtype(col) and not pd.api.types.is_bool_dtype(col)
    if not numeric or any(isinstance(v, bool) for v in uniq):
        try:
            uniq = sorted(uniq)
        except TypeError:
            pass
        if len(uniq) == 1:
            return _hp.make_hp(name, "const", choices=uniq[0], optional=optional)
        return _hp.make_hp(name, "cat", choices=uniq, optional=optional)
    x = vals.to_numpy(dtype=float)
    if not np.isfinite(x).all():
        raise ValueError(f"table column {name!r} holds inf; use finite values or NaN (inactive)")
    lo, hi = float(x.min()), float(x.max())
    if lo == hi:
        return _hp.make_hp(name, "const", choices=uniq[0], optional=optional)
    integral = pd.api.types.is_integer_dtype(col) or (optional and bool((x == np.round(x)).all()))
    log = lo > 0 and hi / lo >= 100
    kind = ("logint" if log else "int") if integral else ("log" if log else "float")
    return _hp.make_hp(name, kind, lower=lo, upper=hi, optional=optional)


def _missing_message(df: pd.DataFrame, i: int, name: str, n: int) -> str:
    label = df.index[i]
    where = f"row {i}" if label == i else f"row {i} (index {label!r})"
    more = f" ({n} empty cells in that column)" if n > 1 else ""
    return (
        f"candidate table {where}, column {name!r} is empty (NaN/None){more}: the objective "
        f"would get that configuration without {name!r}. Fill the cell in or drop the row; if "
        f"{name!r} is inactive there on purpose (a conditional hyperparameter), give the space "
        "with its condition (SearchSpace.from_table(df, spec)) or allow_missing=True"
    )


def _refuse_other_separator(table: pd.DataFrame) -> None:
    """A one-column table whose column name and values hold ``;`` (a tab, ``|``): a CSV read
    with commas that separates its fields otherwise (its configurations would be strings)."""
    from erahbo._files import other_separator

    sep = other_separator(table)
    if sep is not None:
        raise ValueError(
            f"SearchSpace: the candidate table has one column, {str(table.columns[0])!r}, whose "
            f"values hold {sep!r}: it was read from a file that separates its fields with "
            f"{sep!r}, not commas; read it with pd.read_csv(path, sep={sep!r})"
        )


def _check_no_missing(df: pd.DataFrame) -> None:
    """Refuse an inferred candidate table with empty cells (no condition can explain them)."""
    for name in df.columns:
        holes = np.flatnonzero(df[name].isna().to_numpy())
        if holes.size and holes.size < len(df):
            raise ValueError(_missing_message(df, int(holes[0]), str(name), holes.size))


def _warn_duplicates(rows: list[dict[str, Any]]) -> None:
    """Warn once when candidate rows repeat an earlier row (same hyperparameter values)."""
    first: dict[tuple, int] = {}
    repeats: list[tuple[int, int]] = []  # (row, the earlier row it repeats)
    for i, row in enumerate(rows):
        key = tuple(sorted((n, _hp._key(v)) for n, v in row.items()))
        if key in first:
            repeats.append((i, first[key]))
        else:
            first[key] = i
    if not repeats:
        return
    shown = ", ".join(f"{i} = {j}" for i, j in repeats[:10])
    more = f" and {len(repeats) - 10} more" if len(repeats) > 10 else ""
    warnings.warn(
        f"candidate table: {len(repeats)} row(s) repeat an earlier row (same hyperparameter "
        f"values; row = earlier row): {shown}{more}. Each row is a configuration of its own "
        "(its own config_id, seeds and GP point), so a repeated one is evaluated again as if "
        "it were new. Drop the repeats (df.drop_duplicates(subset=<hyperparameter columns>)) "
        "unless that is what you want",
        UserWarning,
        stacklevel=1,  # one location: the same table (checked, then used) warns once
    )


class SearchSpace:
    """A hyperparameter search space and its unit-cube encoding.

    Parameters
    ----------
    spec : dict, ConfigSpace.ConfigurationSpace, dict (JSON form) or pandas.DataFrame
        * dict ``{name: entry}`` with entries ``("float", lo, hi)``, ``("log", lo, hi)``
          (log-uniform, ``lo > 0``), ``("int", lo, hi)``, ``("logint", lo, hi)``,
          ``("cat", [choices])`` (bools allowed), ``("ord", [ordered choices])``,
          ``("const", value)``, ``("bool",)``, or a dict ``{"type", "lower", "upper",
          "choices", "default", "condition"}``; a condition is
          ``{"parent": name, "op": "in" | ">" | "<", "values": [...]}`` or a list of them (AND);
        * a ``ConfigSpace.ConfigurationSpace`` (conditions supported, see
          :mod:`erahbo.space.configspace`);
        * the JSON dict of :meth:`to_json`;
        * a pandas DataFrame = finite candidate table, see :meth:`from_table`.

        A list entry whose first element is a type name is that type (``["log", 1e-5, 0.1]``,
        as JSON writes the tuple); any other list is a categorical's choices. Names of result
        columns (``mean``, ``k``, ``seed``, ... :data:`erahbo.space.reserved.RESERVED_NAMES`)
        are refused: they would shadow the columns of ``Result.history`` and ``configs``.
    table_spec : optional
        Only with a DataFrame: the types and bounds of its columns (any non-table spec).
    name_order : list of str, optional
        Order of the hyperparameters (and of the encoded columns); default: as given.
    allow_missing : bool
        Only with a DataFrame: accept empty cells (NaN/None) as "hyperparameter inactive in
        this row" although no condition says so (datasets whose conditional hyperparameters
        are recorded that way). Default False: an empty cell where the hyperparameter is
        active is refused, naming the row and column.

    Attributes
    ----------
    names : list of str
        Hyperparameter names.
    dim : int
        Number of encoded columns.
    is_finite : bool
        True for a candidate table.
    n_candidates : int or None
        Rows of the table (None if not finite).
    continuous_mask : numpy.ndarray
        ``(dim,)`` bool: encoded columns L-BFGS-B may move freely (float and log ones).
    """

    def __init__(
        self,
        spec: Any,
        table_spec: Any = None,
        *,
        name_order: list[str] | None = None,
        allow_missing: bool = False,
    ) -> None:
        table = None
        self._allow_missing = bool(allow_missing)
        if isinstance(spec, pd.DataFrame):
            table, spec = spec, table_spec
        elif table_spec is not None:
            raise TypeError("SearchSpace: a second spec is only accepted with a DataFrame table")
        if table is not None and len(table) == 0:
            raise ValueError("SearchSpace: the candidate table has no rows; give at least one")
        if table is not None and spec is None:
            if len(table.columns) == 0:
                raise ValueError("SearchSpace: the DataFrame has no columns; add hyperparameters")
            _refuse_other_separator(table)
            if not allow_missing:
                _check_no_missing(table)
            hps = [_infer_column(str(c), table[c]) for c in table.columns]
        else:
            hps = _parse(spec)
        if not hps:
            raise ValueError("SearchSpace: the spec is empty; give at least one hyperparameter")
        names = [h.name for h in hps]
        dup = sorted({n for n in names if names.count(n) > 1})
        if dup:
            raise ValueError(f"SearchSpace: duplicate hyperparameter names {dup}; rename them")
        check_names(names, table=table is not None and spec is None)
        if name_order is not None:
            if sorted(name_order) != sorted(names):
                raise ValueError(
                    f"name_order {list(name_order)} must list each hyperparameter once: {names}"
                )
            by = {h.name: h for h in hps}
            hps = [by[n] for n in name_order]
        self._order = _hp.check_conditions(hps)
        self._hps = hps
        self._by_name = {h.name: h for h in hps}
        col = 0
        for h in hps:
            h.col = col
            col += h.width
        self.names: list[str] = [h.name for h in hps]
        self.dim: int = col
        self.continuous_mask: np.ndarray = np.zeros(col, dtype=bool)  # (dim,)
        for h in hps:
            self.continuous_mask[h.col : h.col + h.width] = h.continuous
        self.is_finite: bool = table is not None
        self.n_candidates: int | None = None
        self._U: np.ndarray | None = None  # (m, dim) encoded table
        self._rows: list[dict[str, Any]] = []
        self._sobol_cache: dict[tuple[int, int], np.ndarray] = {}
        if table is not None:
            self._load_table(table)

    # ------------------------------------------------------------------ constructors
    @classmethod
    def from_table(
        cls, df: pd.DataFrame, spec: Any = None, *, allow_missing: bool = False
    ) -> SearchSpace:
        """Finite candidate table: one configuration per row of ``df``.

        Without ``spec`` the column types are inferred: bool/object/category columns become
        categoricals (choices sorted), integer columns ``int`` (also a float column of whole
        numbers that has NaN), other numbers ``float``; bounds are the column's min and max,
        log-scaled when all values are positive and max/min >= 100; a single value makes a
        constant. With ``spec`` (for example a dataset's ``search_space`` JSON) the columns
        named there are encoded with those types and bounds (other columns are ignored).
        NaN/None in a hyperparameter column marks a value that a condition of ``spec`` makes
        inactive; any other empty cell is refused (row and column named) unless
        ``allow_missing=True``, which reads it as "inactive in this row".
        """
        return cls(df, spec, allow_missing=allow_missing)

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> SearchSpace:
        """Inverse of :meth:`to_json` (the hyperparameters; a table is not stored)."""
        if not isinstance(d, dict) or "hyperparameters" not in d:
            raise ValueError("SearchSpace.from_json: expected the dict of SearchSpace.to_json()")
        return cls(d)

    def to_json(self) -> dict[str, Any]:
        """JSON-friendly dict of the hyperparameters (types, bounds, defaults, conditions)."""
        return {
            "format": JSON_FORMAT,
            "version": JSON_VERSION,
            "hyperparameters": [h.to_json() for h in self._hps],
        }

    def _load_table(self, df: pd.DataFrame) -> None:
        missing = [n for n in self.names if n not in df.columns]
        if missing:
            raise ValueError(f"SearchSpace: table lacks columns {missing} named in the spec")
        m = len(df)
        V = np.zeros((m, len(self._hps)))  # (m, n_hp) internal values
        present = np.zeros((m, len(self._hps)), dtype=bool)
        for j, h in enumerate(self._hps):
            col = df[h.name]
            present[:, j] = ~col.isna().to_numpy()
            for i in np.flatnonzero(present[:, j]):
                V[i, j] = self._checked_value(h, col.iloc[i], f"table row {i}")
        should = self._active(V)
        if not self._allow_missing:
            for j, h in enumerate(self._hps):
                holes = np.flatnonzero(should[:, j] & ~present[:, j])
                if holes.size and not h.optional:
                    raise ValueError(_missing_message(df, int(holes[0]), h.name, holes.size))
        active = should & present
        self._U = self._encode_values(V, active)
        self.n_candidates = m
        py = [[h.to_python(v) for v in V[:, j]] for j, h in enumerate(self._hps)]
        self._rows = [
            {h.name: py[j][i] for j, h in enumerate(self._hps) if active[i, j]} for i in range(m)
        ]
        _warn_duplicates(self._rows)

    # ------------------------------------------------------------------ internals
    def _checked_value(self, h: HP, x: Any, where: str) -> float:
        v = h.value_of(x)
        if not h.is_index and h.type != "const":
            if not math.isfinite(v):
                raise ValueError(f"{where}: {h.name}={x!r} is not finite")
            tol = 1e-9 * max(1.0, abs(h.upper - h.lower))
            if not h.lower - tol <= v <= h.upper + tol:
                raise ValueError(
                    f"{where}: {h.name}={x!r} lies outside [{h.lower}, {h.upper}]; "
                    "use a value inside the bounds or widen them"
                )
            v = min(max(v, h.lower), h.upper)
            if h.type in ("int", "logint"):
                if abs(v - round(v)) > 1e-9:
                    raise ValueError(f"{where}: {h.name}={x!r} must be an integer")
                v = float(round(v))
        return v

    def _active(self, V: np.ndarray) -> np.ndarray:
        """``(n, n_hp)`` values -> ``(n, n_hp)`` bool activity from the conditions."""
        act = np.ones(V.shape, dtype=bool)
        for j in self._order:
            for c in self._hps[j].conditions:
                k = self.names.index(c.parent)
                act[:, j] &= act[:, k] & clause_holds(c, self._hps[k], V[:, k])
        return act

    def _encode_values(self, V: np.ndarray, active: np.ndarray) -> np.ndarray:
        """``(n, n_hp)`` values and activity -> ``(n, dim)`` encoding."""
        n = V.shape[0]
        U = np.empty((n, self.dim))
        for j, h in enumerate(self._hps):
            s = slice(h.col, h.col + h.width)
            safe = h.lower if h.lower is not None else 0.0  # placeholder for inactive rows
            block = h.value_to_unit(np.where(active[:, j], V[:, j], safe))
            block[~active[:, j]] = h.impute_block(int((~active[:, j]).sum()))
            U[:, s] = block
        return U

    def _values(self, U: np.ndarray) -> np.ndarray:
        """``(n, dim)`` -> ``(n, n_hp)`` nearest valid values."""
        V = np.empty((U.shape[0], len(self._hps)))
        for j, h in enumerate(self._hps):
            V[:, j] = h.unit_to_value(U[:, h.col : h.col + h.width])
        return V

    def _raw_to_unit(self, R: np.ndarray) -> np.ndarray:
        """``(n, n_raw)`` uniform draws (one per non-constant hyperparameter) -> ``(n, dim)``."""
        V = np.zeros((R.shape[0], len(self._hps)))
        r = 0
        for j, h in enumerate(self._hps):
            if h.type != "const":
                V[:, j] = h.raw_to_value(R[:, r])
                r += 1
        return self._encode_values(V, self._active(V))

    @property
    def _n_raw(self) -> int:
        return sum(h.type != "const" for h in self._hps)

    def _check_unit(self, U: Any, what: str) -> np.ndarray:
        U = np.asarray(U, dtype=float)
        if U.ndim != 2 or U.shape[1] != self.dim:
            raise ValueError(f"{what}: expected an array of shape (n, {self.dim}), got {U.shape}")
        return U

    def _nearest_rows(self, U: np.ndarray) -> np.ndarray:
        """``(n, dim)`` -> ``(n,)`` index of the nearest table row (Euclidean)."""
        C = self._U  # (m, dim)
        d2 = (U**2).sum(1)[:, None] - 2.0 * U @ C.T + (C**2).sum(1)[None, :]  # (n, m)
        return np.argmin(d2, axis=1)

    # ------------------------------------------------------------------ public API
    def columns(self, name: str) -> slice:
        """The encoded columns of hyperparameter ``name`` (empty for a constant)."""
        if name not in self._by_name:
            raise KeyError(f"columns: unknown hyperparameter {name!r}; known: {self.names}")
        h = self._by_name[name]
        return slice(h.col, h.col + h.width)

    def candidates_unit(self) -> np.ndarray:
        """``(m, dim)`` encoded candidate table (finite spaces only; a read-only view)."""
        if self._U is None:
            raise ValueError("candidates_unit: this space is not a finite candidate table")
        view = self._U.view()
        view.flags.writeable = False
        return view

    def candidate_config(self, i: int) -> dict[str, Any]:
        """Row ``i`` of the table as a config dict (native types, inactive values left out)."""
        if not self.is_finite:
            raise ValueError("candidate_config: this space is not a finite candidate table")
        if not 0 <= int(i) < self.n_candidates:
            raise IndexError(f"candidate_config: row {i} out of range 0..{self.n_candidates - 1}")
        return dict(self._rows[int(i)])

    def sobol_indices(self, n: int, seed: int) -> np.ndarray:
        """``(n,)`` distinct row indices nearest to ``n`` scrambled Sobol points.

        Greedy in Sobol order: each point takes the nearest (Euclidean, encoded) unused row,
        ties to the lowest index. Deterministic for a given ``seed``.
        """
        if not self.is_finite:
            raise ValueError("sobol_indices: this space is not a finite candidate table")
        n = int(n)
        if not 0 <= n <= self.n_candidates:
            raise ValueError(f"sobol_indices: n={n} must be in 0..{self.n_candidates} (rows)")
        P = self._sobol_points(n, seed)  # (n, dim)
        C = self._U
        d2 = (P**2).sum(1)[:, None] - 2.0 * P @ C.T + (C**2).sum(1)[None, :]  # (n, m)
        used = np.zeros(self.n_candidates, dtype=bool)
        out = np.empty(n, dtype=int)
        for i in range(n):
            row = np.where(used, np.inf, d2[i])
            out[i] = int(np.argmin(row))
            used[out[i]] = True
        return out

    def _sobol_points(self, n: int, seed: int) -> np.ndarray:
        """``(n, dim)`` valid Sobol points; the last few (n, seed) results are cached."""
        key = (int(n), int(seed))
        if key not in self._sobol_cache:
            if len(self._sobol_cache) >= 8:
                self._sobol_cache.pop(next(iter(self._sobol_cache)))
            self._sobol_cache[key] = self._sobol_points_uncached(*key)
        return self._sobol_cache[key].copy()

    def _sobol_points_uncached(self, n: int, seed: int) -> np.ndarray:
        from scipy.stats import qmc

        d = self._n_raw
        if d == 0 or n == 0:
            return self._raw_to_unit(np.zeros((n, d)))
        m = max(0, math.ceil(math.log2(max(n, 1))))
        R = qmc.Sobol(d, scramble=True, rng=np.random.default_rng(seed)).random_base2(m)[:n]
        return self._raw_to_unit(R)

    def sobol_unit(self, n: int, seed: int) -> np.ndarray:
        """``(n, dim)`` scrambled Sobol points mapped to valid encodings.

        For a finite space: the encodings of the rows :meth:`sobol_indices` picks.
        """
        if n < 0:
            raise ValueError(f"sobol_unit: n={n} must be >= 0")
        if self.is_finite:
            return self._U[self.sobol_indices(n, seed)].copy()
        return self._sobol_points(int(n), seed)

    def sample_unit(self, n: int, rng: np.random.Generator) -> np.ndarray:
        """``(n, dim)`` uniformly random valid points (finite: random rows, distinct if n <= m)."""
        if n < 0:
            raise ValueError(f"sample_unit: n={n} must be >= 0")
        if self.is_finite:
            idx = rng.choice(self.n_candidates, size=n, replace=n > self.n_candidates)
            return self._U[idx].copy()
        return self._raw_to_unit(rng.random((n, self._n_raw)))

    def project(self, U: np.ndarray) -> np.ndarray:
        """``(n, dim)`` arbitrary points -> ``(n, dim)`` valid encodings (idempotent).

        Numbers are clipped to [0, 1], ints rounded, categoricals one-hot by argmax,
        inactive conditionals imputed. Finite space: the nearest table row.
        """
        U = self._check_unit(U, "project")
        if self.is_finite:
            return self._U[self._nearest_rows(U)].copy()
        out = np.empty_like(U)
        for h in self._hps:
            s = slice(h.col, h.col + h.width)
            out[:, s] = h.project_block(U[:, s])
        if any(h.conditions for h in self._hps):
            inactive = ~self._active(self._values(out))
            for j, h in enumerate(self._hps):
                s = slice(h.col, h.col + h.width)
                out[inactive[:, j], s] = h.impute_block(int(inactive[:, j].sum()))
        return out

    def encode(self, config: dict[str, Any]) -> np.ndarray:
        """Config dict -> ``(dim,)`` encoding (inactive hyperparameters imputed)."""
        if not isinstance(config, dict):
            raise TypeError(f"encode: config must be a dict, got {type(config).__name__}")
        unknown = sorted(set(config) - set(self.names))
        if unknown:
            raise ValueError(f"encode: unknown hyperparameters {unknown}; known: {self.names}")
        V = np.zeros((1, len(self._hps)))
        present = np.zeros((1, len(self._hps)), dtype=bool)
        for j, h in enumerate(self._hps):
            x = config.get(h.name)
            if x is not None and not (isinstance(x, float) and math.isnan(x)):
                present[0, j] = True
                V[0, j] = self._checked_value(h, x, "encode")
        active = self._active(V)
        for j, h in enumerate(self._hps):
            if active[0, j] and not present[0, j] and h.type != "const" and not h.optional:
                raise ValueError(f"encode: config lacks active hyperparameter {h.name!r}; add it")
        return self._encode_values(V, active & (present | self._const_mask()))[0]

    def _const_mask(self) -> np.ndarray:
        return np.array([[h.type == "const" for h in self._hps]])

    def decode(self, u: np.ndarray) -> dict[str, Any]:
        """``(dim,)`` encoding -> config dict (native types; inactive left out).

        Finite space: the config of the nearest table row.
        """
        U = self._check_unit(np.asarray(u, dtype=float).reshape(1, -1), "decode")
        if self.is_finite:
            return self.candidate_config(int(self._nearest_rows(U)[0]))
        V = self._values(U)
        active = self._active(V)
        return {h.name: h.to_python(V[0, j]) for j, h in enumerate(self._hps) if active[0, j]}

    def __repr__(self) -> str:
        lines = []
        for h in self._hps:
            if h.type in ("cat", "ord"):
                dom = f"{h.type}{list(h.choices)}"
            elif h.type == "const":
                dom = f"const {h.choices[0]!r}"
            else:
                dom = f"{h.type}[{h.lower:g}, {h.upper:g}]"
            cond = " if " + " and ".join(
                f"{c.parent} {c.op} {list(c.values) if c.op == 'in' else c.values[0]}"
                for c in h.conditions
            ) if h.conditions else ""
            lines.append(f"  {h.name}: {dom}{cond}")
        head = f"SearchSpace({len(self._hps)} hyperparameters, dim={self.dim}"
        if self.is_finite:
            head += f", finite table of {self.n_candidates} rows"
        return head + ")\n" + "\n".join(lines)

    def __len__(self) -> int:
        return len(self._hps)
