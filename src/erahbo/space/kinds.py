"""Hyperparameter descriptions behind :class:`erahbo.SearchSpace` (private).

One :class:`HP` per hyperparameter. Each knows how to map between three forms, all
vectorized over ``n`` points:

* *raw* ``r`` in ``[0, 1)``: a uniform draw (Sobol or random), one number per hyperparameter;
* *value* ``v``: the number the hyperparameter takes (float, integer as float), or the index
  into ``choices`` for categorical and ordinal hyperparameters;
* *unit* block ``(n, width)``: the encoded columns the models see (one-hot for categoricals).

Encodings (``lo``/``hi`` are the bounds):

=========  =====  ==========================================================
type       width  unit value
=========  =====  ==========================================================
float      1      ``(v - lo) / (hi - lo)``
log        1      ``(ln v - ln lo) / (ln hi - ln lo)``, ``lo > 0``
int        1      ``(v - lo) / (hi - lo)``, ``v`` rounded to an integer
logint     1      ``(ln v - ln lo) / (ln hi - ln lo)``, ``v`` rounded, ``lo >= 1``
ord        1      ``index / (n_choices - 1)``, index rounded
cat        n      one-hot over ``choices``
const      0      (no column; always the same value)
=========  =====  ==========================================================

Inactive conditional hyperparameters are imputed with :data:`IMPUTE_NUMERIC` (0.5) in their
single column, or all zeros for a categorical one-hot block.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

IMPUTE_NUMERIC = 0.5
"""Unit value of an inactive numeric (float/log/int/logint/ord) hyperparameter."""
IMPUTE_ONEHOT = 0.0
"""Value of every one-hot column of an inactive categorical hyperparameter."""

TYPES = ("float", "log", "int", "logint", "cat", "ord", "const")
KIND_NAMES = (*TYPES, "bool")
"""First elements that make a list spec entry a type form (``["log", 1e-5, 0.1]``)."""
_OPS = ("in", ">", "<")
_SPEC_HELP = (
    'use ("float", lo, hi), ("log", lo, hi), ("int", lo, hi), ("logint", lo, hi), '
    '("cat", [choices]), ("ord", [ordered choices]), ("const", value) or a dict '
    '{"type": ..., "lower": ..., "upper": ..., "choices": [...], "default": ..., '
    '"condition": {"parent": ..., "op": "in", "values": [...]}}'
)


def native(x: Any) -> Any:
    """Return ``x`` as a plain Python scalar (numpy scalars unwrapped)."""
    return x.item() if isinstance(x, np.generic) else x


@dataclass(frozen=True)
class Clause:
    """One activation clause: active iff ``parent <op> values`` (``in``: membership)."""

    parent: str
    op: str
    values: tuple[Any, ...]

    def to_json(self) -> dict[str, Any]:
        return {"parent": self.parent, "op": self.op, "values": list(self.values)}


@dataclass
class HP:
    """One hyperparameter. See the module docstring for the encodings."""

    name: str
    type: str
    lower: float | None = None
    upper: float | None = None
    choices: tuple[Any, ...] = ()
    default: Any = None
    conditions: tuple[Clause, ...] = ()  # all must hold (AND), and the parents be active
    optional: bool = False  # may be missing without a condition (inferred table column)
    col: int = 0  # first encoded column, set by SearchSpace
    _index: dict[Any, int] = field(default_factory=dict, repr=False, compare=False)

    # ------------------------------------------------------------------ basic facts
    @property
    def width(self) -> int:
        return {"cat": len(self.choices), "const": 0}.get(self.type, 1)

    @property
    def continuous(self) -> bool:
        """True if L-BFGS-B may move the column freely (float and log only)."""
        return self.type in ("float", "log")

    @property
    def is_index(self) -> bool:
        return self.type in ("cat", "ord")

    def index_of(self, value: Any) -> int:
        """Index of ``value`` in ``choices`` (bools and numbers matched by type and value)."""
        key = _key(native(value))
        if key not in self._index:
            raise ValueError(
                f"hyperparameter {self.name!r}: value {value!r} is not one of the choices "
                f"{list(self.choices)}; use one of them"
            )
        return self._index[key]

    def value_of(self, config_value: Any) -> float:
        """The internal value ``v`` of one config value."""
        if self.is_index:
            return float(self.index_of(config_value))
        if self.type == "const":
            return 0.0
        try:
            v = float(config_value)
        except (TypeError, ValueError):
            raise TypeError(
                f"hyperparameter {self.name!r}: expected a number, got {config_value!r}"
            ) from None
        return v

    def to_python(self, v: float) -> Any:
        """Config value (native Python type) of the internal value ``v``."""
        if self.type == "const":
            return self.choices[0]
        if self.is_index:
            return self.choices[int(v)]
        if self.type in ("int", "logint"):
            return int(v)
        return float(v)

    # ------------------------------------------------------------------ vectorized maps
    def raw_to_value(self, r: np.ndarray) -> np.ndarray:
        """``(n,)`` uniform draws in [0, 1) -> ``(n,)`` values, uniform over the domain."""
        lo, hi = self.lower, self.upper
        if self.type == "float":
            return np.clip(lo + r * (hi - lo), lo, hi)
        if self.type == "log":
            return np.clip(np.exp(math.log(lo) + r * (math.log(hi) - math.log(lo))), lo, hi)
        if self.type == "int":
            return np.clip(np.floor(lo + r * (hi - lo + 1)), lo, hi)
        if self.type == "logint":
            a, b = math.log(lo), math.log(hi + 1)
            return np.clip(np.floor(np.exp(a + r * (b - a))), lo, hi)
        if self.type in ("cat", "ord"):
            n = len(self.choices)
            return np.clip(np.floor(r * n), 0, n - 1)
        return np.zeros_like(r)

    def value_to_unit(self, v: np.ndarray) -> np.ndarray:
        """``(n,)`` values -> ``(n, width)`` unit block."""
        n = v.shape[0]
        if self.type == "const":
            return np.zeros((n, 0))
        if self.type == "cat":
            block = np.zeros((n, len(self.choices)))
            block[np.arange(n), v.astype(int)] = 1.0
            return block
        if self.type == "ord":
            m = len(self.choices) - 1
            return (v / m)[:, None]
        lo, hi = self.lower, self.upper
        if self.type in ("log", "logint"):
            u = (np.log(v) - math.log(lo)) / (math.log(hi) - math.log(lo))
        else:
            u = (v - lo) / (hi - lo)
        return np.clip(u, 0.0, 1.0)[:, None]

    def unit_to_value(self, block: np.ndarray) -> np.ndarray:
        """``(n, width)`` unit block (any real numbers) -> ``(n,)`` nearest valid values."""
        n = block.shape[0]
        if self.type == "const":
            return np.zeros(n)
        if self.type == "cat":
            return np.argmax(block, axis=1).astype(float)
        u = np.clip(block[:, 0], 0.0, 1.0)
        if self.type == "ord":
            return np.round(u * (len(self.choices) - 1))
        lo, hi = self.lower, self.upper
        if self.type in ("log", "logint"):
            v = np.exp(math.log(lo) + u * (math.log(hi) - math.log(lo)))
        else:
            v = lo + u * (hi - lo)
        if self.type in ("int", "logint"):
            v = np.round(v)
        return np.clip(v, lo, hi)

    def project_block(self, block: np.ndarray) -> np.ndarray:
        """``(n, width)`` -> ``(n, width)`` valid encoding (idempotent)."""
        if self.continuous:
            return np.clip(block, 0.0, 1.0)
        return self.value_to_unit(self.unit_to_value(block))

    def impute_block(self, n: int) -> np.ndarray:
        """``(n, width)`` encoding of an inactive value."""
        fill = IMPUTE_ONEHOT if self.type == "cat" else IMPUTE_NUMERIC
        return np.full((n, self.width), fill)

    # ------------------------------------------------------------------ JSON
    def to_json(self) -> dict[str, Any]:
        d: dict[str, Any] = {"name": self.name, "type": self.type}
        if self.type in ("cat", "ord"):
            d["choices"] = list(self.choices)
        elif self.type == "const":
            d["value"] = self.choices[0]
        else:
            d["lower"], d["upper"] = _jnum(self.lower, self.type), _jnum(self.upper, self.type)
        if self.default is not None:
            d["default"] = self.default
        if self.conditions:
            d["condition"] = [c.to_json() for c in self.conditions]
        if self.optional:
            d["optional"] = True
        return d


def _jnum(x: float | None, kind: str) -> float | int | None:
    if x is None:
        return None
    return int(x) if kind in ("int", "logint") else float(x)


def _key(x: Any) -> tuple[str, Any]:
    """Hashable key that keeps True apart from 1 and 1.0 apart from "1"."""
    if isinstance(x, bool):
        return ("bool", x)
    if isinstance(x, (int, float)):
        return ("num", float(x))
    return (type(x).__name__, x)


# ---------------------------------------------------------------------- construction
def make_hp(
    name: Any,
    kind: Any,
    *,
    lower: Any = None,
    upper: Any = None,
    choices: Any = None,
    default: Any = None,
    conditions: Any = None,
    optional: bool = False,
) -> HP:
    """Build and validate one :class:`HP`; every error names the hyperparameter and the fix."""
    if not isinstance(name, str) or not name:
        raise TypeError(f"hyperparameter names must be non-empty strings, got {name!r}")
    where = f"hyperparameter {name!r}"
    if kind not in TYPES:
        raise ValueError(f"{where}: unknown type {kind!r}; use one of {list(TYPES)}")
    hp = HP(name=name, type=kind, optional=bool(optional))
    if kind in ("cat", "ord", "const"):
        if kind == "const":
            choices = [choices]
        if isinstance(choices, (str, bytes)) or not hasattr(choices, "__iter__"):
            raise TypeError(f"{where}: choices must be a list, got {choices!r}")
        ch = tuple(native(c) for c in choices)
        if not ch:
            raise ValueError(f"{where}: empty choices; give at least one value")
        for c in ch:
            if c is None or (isinstance(c, float) and not math.isfinite(c)):
                raise ValueError(f"{where}: choice {c!r} is not allowed; use finite values")
            if not isinstance(c, (bool, int, float, str)):
                raise TypeError(f"{where}: choice {c!r} must be a bool, int, float or str")
        keys = [_key(c) for c in ch]
        if len(set(keys)) != len(keys):
            raise ValueError(f"{where}: duplicate choices in {list(ch)}; list each value once")
        if kind == "ord" and len(ch) == 1:
            hp.type = "const"
        hp.choices = ch
        hp._index = {k: i for i, k in enumerate(keys)}
    else:
        lo, hi = _number(lower, where, "lower"), _number(upper, where, "upper")
        if kind in ("int", "logint"):
            if lo != math.floor(lo) or hi != math.floor(hi):
                raise ValueError(f"{where}: integer bounds must be whole numbers, got {lo}, {hi}")
        if lo >= hi:
            raise ValueError(
                f"{where}: lower bound {lo} must be smaller than upper bound {hi}; swap them "
                f'or use ("const", value)'
            )
        if kind in ("log", "logint") and lo <= 0:
            raise ValueError(
                f"{where}: a log-scaled range needs lower > 0, got {lo}; use a positive lower "
                f'bound or a linear type ("float"/"int")'
            )
        hp.lower, hp.upper = lo, hi
    if default is not None:
        hp.default = native(default)
        if hp.type in ("cat", "ord", "const"):
            hp.index_of(hp.default)
        elif not hp.lower <= float(hp.default) <= hp.upper:
            raise ValueError(
                f"{where}: default {default!r} lies outside [{hp.lower}, {hp.upper}]; "
                f"use a default inside the bounds"
            )
    hp.conditions = parse_conditions(conditions, where)
    return hp


def _number(x: Any, where: str, what: str) -> float:
    if isinstance(x, bool) or not isinstance(x, (int, float, np.integer, np.floating)):
        hint = ""
        if isinstance(x, str):
            try:
                float(x)
                hint = " (a string: write it as a number; YAML reads 1e-5 as text, write 1.0e-5)"
            except ValueError:
                pass
        raise TypeError(f"{where}: {what} bound must be a number, got {x!r}{hint}")
    x = float(x)
    if not math.isfinite(x):
        raise ValueError(f"{where}: {what} bound {x} is not finite; use a finite number")
    return x


def parse_conditions(cond: Any, where: str) -> tuple[Clause, ...]:
    """Parse ``None``, one clause dict or a list of clause dicts (AND)."""
    if cond is None:
        return ()
    if isinstance(cond, dict):
        cond = [cond]
    out = []
    for c in cond:
        if isinstance(c, Clause):
            out.append(c)
            continue
        if not isinstance(c, dict) or "parent" not in c:
            raise ValueError(
                f"{where}: condition {c!r} must be a dict "
                '{"parent": name, "op": "in", "values": [...]} (op "in", ">" or "<")'
            )
        op = c.get("op", "in")
        if op not in _OPS:
            raise ValueError(f"{where}: condition op {op!r} is unknown; use one of {_OPS}")
        vals = c.get("values", [c["value"]] if "value" in c else None)
        if vals is None or (op == "in" and len(vals) == 0):
            raise ValueError(f"{where}: condition on {c['parent']!r} needs 'values'")
        if op != "in" and len(vals) != 1:
            raise ValueError(f"{where}: condition op {op!r} takes exactly one value")
        out.append(Clause(str(c["parent"]), op, tuple(native(v) for v in vals)))
    return tuple(out)


def parse_entry(name: str, entry: Any) -> HP:
    """One entry of a dict spec: a tuple such as ``("log", 1e-5, 1e-1)``, a dict, or a list.

    A list is read as JSON writes a tuple when its first element is a type name
    (:data:`KIND_NAMES`): ``["log", 1e-5, 0.1]`` is ``("log", 1e-5, 0.1)``, checked by the
    same rules; any other list is the choices of a categorical. This one parser serves the
    Python spec, the JSON space files and the Hydra sweeper's ``search_space``.
    """
    where = f"hyperparameter {name!r}"
    if isinstance(entry, dict):
        d = dict(entry)
        kind = d.pop("type", None)
        choices = d.pop("value", None) if kind == "const" else d.pop("choices", None)
        known = {"lower", "upper", "low", "high", "default", "condition", "optional", "name"}
        if set(d) - known:
            raise ValueError(f"{where}: unknown keys {sorted(set(d) - known)}; {_SPEC_HELP}")
        return make_hp(  # "low"/"high" accepted as aliases of "lower"/"upper"
            name, kind, lower=d.get("lower", d.get("low")), upper=d.get("upper", d.get("high")),
            choices=choices,
            default=d.get("default"), conditions=d.get("condition"),
            optional=d.get("optional", False),
        )
    if isinstance(entry, list):
        if entry and isinstance(entry[0], str) and entry[0] in KIND_NAMES:
            return _parse_kind_form(name, tuple(entry), listed=True)
        return make_hp(name, "cat", choices=entry)
    if not isinstance(entry, tuple) or not entry:
        raise TypeError(f"{where}: cannot read spec {entry!r}; {_SPEC_HELP}")
    return _parse_kind_form(name, entry, listed=False)


def _parse_kind_form(name: str, entry: tuple[Any, ...], *, listed: bool) -> HP:
    """``(kind, *args)`` (``listed``: it came as a list, as JSON writes tuples)."""
    where = f"hyperparameter {name!r}"
    kind, args = entry[0], entry[1:]
    shown = list(entry) if listed else entry
    # a list read as a type: say how to write choices that merely start with a type name
    as_choices = (f'; if {list(entry)!r} are the choices of a categorical, write ("cat", '
                  f'{list(entry)!r}) (JSON: ["cat", {_json(list(entry))}])' if listed else "")
    if kind == "bool":
        if args:
            raise ValueError(f'{where}: {shown!r}: ("bool",) takes no argument{as_choices}')
        return make_hp(name, "cat", choices=[False, True])
    if kind in ("cat", "ord", "const"):
        if len(args) != 1:
            what = "value" if kind == "const" else "list of choices"
            example = f"({kind!r}, 0.99)" if kind == "const" else f"({kind!r}, ['a', 'b'])"
            raise ValueError(
                f"{where}: {shown!r}: ({kind!r}, ...) takes one {what}, e.g. {example}, got "
                f"{len(args)}{as_choices}"
            )
        listish = not isinstance(args[0], (str, bytes)) and hasattr(args[0], "__iter__")
        if kind != "const" and not listish:
            raise TypeError(
                f"{where}: {shown!r}: ({kind!r}, [choices]) takes a list of choices, got "
                f"{args[0]!r}; e.g. ({kind!r}, ['a', 'b']){as_choices}"
            )
        return make_hp(name, kind, choices=args[0])
    if kind in ("float", "log", "int", "logint"):
        if len(args) != 2:
            lo, hi = (1e-5, 0.1) if kind == "log" else (1, 100) if "int" in kind else (0.0, 1.0)
            raise ValueError(
                f"{where}: {shown!r} gives {len(args)} bound(s); ({kind!r}, lower, upper) "
                f"takes two bounds, e.g. ({kind!r}, {lo}, {hi}) (JSON: [{_json(kind)}, {lo}, {hi}])"
                f"{as_choices}"
            )
        return make_hp(name, kind, lower=args[0], upper=args[1])
    raise ValueError(f"{where}: unknown type {kind!r}; {_SPEC_HELP}")


def _json(x: Any) -> str:
    """``x`` as JSON text (for messages that show the JSON form)."""
    return json.dumps(x, default=str)


def check_conditions(hps: list[HP]) -> list[int]:
    """Validate the condition graph and convert clause values of categorical parents.

    Returns
    -------
    list of int
        A topological order of ``hps`` (parents before children).
    """
    by_name = {h.name: h for h in hps}
    for h in hps:
        fixed = []
        for c in h.conditions:
            p = by_name.get(c.parent)
            where = f"hyperparameter {h.name!r}"
            if p is None:
                raise ValueError(f"{where}: condition parent {c.parent!r} is not in the space")
            if p.is_index or p.type == "const":
                if c.op != "in":
                    raise ValueError(f"{where}: use op 'in' with categorical parent {p.name!r}")
                for v in c.values:
                    try:
                        p.index_of(v)
                    except ValueError:
                        raise ValueError(
                            f"{where}: condition value {v!r} is not a choice of {p.name!r} "
                            f"{list(p.choices)}; use one of them"
                        ) from None
            else:
                for v in c.values:
                    _number(v, where, f"condition value of {c.parent!r}")
            fixed.append(c)
        h.conditions = tuple(fixed)
    order: list[int] = []
    state: dict[str, int] = {}
    index = {h.name: i for i, h in enumerate(hps)}

    def visit(name: str, stack: tuple[str, ...]) -> None:
        if state.get(name) == 2:
            return
        if state.get(name) == 1:
            raise ValueError(f"conditions form a cycle: {' -> '.join((*stack, name))}")
        state[name] = 1
        for c in by_name[name].conditions:
            visit(c.parent, (*stack, name))
        state[name] = 2
        order.append(index[name])

    for h in hps:
        visit(h.name, ())
    return order


def clause_holds(c: Clause, parent: HP, v: np.ndarray) -> np.ndarray:
    """``(n,)`` bool: does the clause hold for the parent's values ``v`` ``(n,)``."""
    if parent.is_index or parent.type == "const":
        idx = [parent.index_of(x) for x in c.values]
        if parent.type == "const":
            return np.full(v.shape, True)
        return np.isin(v.astype(int), idx)
    vals = np.asarray(c.values, dtype=float)
    if c.op == ">":
        return v > vals[0]
    if c.op == "<":
        return v < vals[0]
    return np.isclose(v[:, None], vals[None, :], rtol=1e-12, atol=1e-12).any(axis=1)
