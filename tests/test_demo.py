"""`erahbo demo` (the README's main job), at a small size."""

from __future__ import annotations

from typer.testing import CliRunner

from erahbo.cli import app


def test_demo_writes_figure_and_report_and_replaces_an_older_demo(tmp_path):
    out = tmp_path / "demo"
    small = ["demo", "--repetitions", "1", "--workers", "1", "--out", str(out)]
    res = CliRunner().invoke(app, [*small, "--budget", "12"])
    assert res.exit_code == 0, res.output
    assert "recommended configuration" in res.output
    assert (out / "figure1.png").is_file() and (out / "figure1_rounds.png").is_file()
    assert (out / "benchmark" / "report" / "report.md").is_file()
    # a demo with other settings replaces the earlier demo study instead of refusing
    res = CliRunner().invoke(app, [*small, "--budget", "16"])
    assert res.exit_code == 0, res.output
    assert "replacing it" in res.output
    assert "budget: 16" in (out / "benchmark" / "report" / "report.md").read_text()
