"""Lazy package exports: a package's public names imported on first use (PEP 562).

``erahbo --version`` and ``erahbo --help`` must not pay for pandas, scipy or matplotlib: a
package whose ``__init__`` re-exports names from heavy submodules lists them here instead,
and each is imported when first read (``from erahbo.experiments import run_study`` works as
before).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any


def lazy_getattr(package: str, exports: dict[str, str]) -> Callable[[str], Any]:
    """The module ``__getattr__`` of ``package``: ``exports`` maps a public name to the
    submodule that defines it."""

    def __getattr__(name: str) -> Any:
        if name in exports:
            return getattr(importlib.import_module(exports[name]), name)
        raise AttributeError(f"module {package!r} has no attribute {name!r}")

    return __getattr__
