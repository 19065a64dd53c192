"""Command-line interface: a thin layer over the library (``erahbo --help``).

The application (:mod:`erahbo.cli._app`, ``erahbo.cli.app``) is built on first use, by
name (:mod:`erahbo._lazy`): ``erahbo --version`` answers before Typer or any command module is
imported.
"""

from __future__ import annotations

import sys

from erahbo._lazy import lazy_getattr

__all__ = ["app", "main"]

__getattr__ = lazy_getattr(__name__, {"app": "erahbo.cli._app"})


def main() -> None:
    """Entry point of the ``erahbo`` console script."""
    if sys.argv[1:] == ["--version"]:  # no Typer, no commands: a fast answer
        from erahbo import __version__

        print(f"erahbo {__version__}")
        return
    __getattr__("app")()
