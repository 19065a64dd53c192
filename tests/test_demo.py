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


def test_demo_ctrl_c_says_how_to_continue(tmp_path, monkeypatch):
    import erahbo.experiments as experiments
    import erahbo.optimizer.loop as loop

    small = ["demo", "--repetitions", "1", "--workers", "1", "--budget", "12",
             "--out", str(tmp_path / "demo")]

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    with monkeypatch.context() as m:  # Ctrl-C in part 1 (the Figure-1 study)
        m.setattr(loop, "optimize", interrupted)  # erahbo.optimize is defined there
        res = CliRunner().invoke(app, small)
    assert res.exit_code == 130 and "run the same command again" in res.output
    monkeypatch.setattr(experiments, "run_study", interrupted)  # in part 2 (the replays)
    res = CliRunner().invoke(app, small)
    assert res.exit_code == 130
    assert "run the same command again to continue" in res.output
