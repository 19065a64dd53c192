"""Plain and canonical JSON: the one text form of settings, configurations and records.

Low level (it imports nothing of erahbo): the optimizer hashes a candidate table with
:func:`canonical_json` (:func:`erahbo.optimizer.options.space_json`), the journal stores and
compares settings and records in it (:mod:`erahbo.runtime.journal_format`).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

__all__ = ["canonical_json", "plain_json"]


def plain_json(obj: Any, where: str) -> Any:
    """Convert to plain JSON types (numpy scalars/arrays too), naming the bad entry."""
    if obj is None or isinstance(obj, bool | str):
        return obj
    if isinstance(obj, int):
        return int(obj)
    if isinstance(obj, float):
        return float(obj)
    if isinstance(obj, Mapping):
        out = {}
        for k, v in obj.items():
            if not isinstance(k, str):
                raise TypeError(f"{where} has a non-string key {k!r}; the journal stores JSON")
            out[k] = plain_json(v, f"{where}[{k!r}]")
        return out
    if isinstance(obj, list | tuple):
        return [plain_json(v, f"{where}[{i}]") for i, v in enumerate(obj)]
    if hasattr(obj, "tolist") and hasattr(obj, "dtype"):  # numpy scalar or array
        return plain_json(obj.tolist(), where)
    raise TypeError(
        f"{where} is a {type(obj).__name__}, which the journal cannot store; "
        "pass plain JSON values (numbers, strings, lists, dicts) describing it"
    )


def canonical_json(obj: Any, where: str = "value") -> str:
    """Deterministic JSON text of ``obj`` (sorted keys, no spaces, floats round-trip exactly)."""
    return json.dumps(plain_json(obj, where), sort_keys=True, separators=(",", ":"), allow_nan=True)
