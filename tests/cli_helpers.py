"""The one way the bad-input tests run the CLI: in the test's folder, importable from it."""

from __future__ import annotations

from typing import Any

from typer.testing import CliRunner

from erahbo.cli import app

runner = CliRunner()


def run_cli(args: list[str], tmp_path: Any, monkeypatch: Any) -> Any:
    """``erahbo <args>`` with ``tmp_path`` as the working folder and on ``sys.path`` (so an
    objective module written there loads); the click ``Result``."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    return runner.invoke(app, args)
