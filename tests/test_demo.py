"""`erahbo demo` (the README's main job), at a small size."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from erahbo.cli import app
from erahbo.optimizer.options import ERAHBO_DEFAULTS


@pytest.fixture
def smaller_demo(monkeypatch):
    """The demo's two parts made smaller still: part 1 (ERAHBO on the Figure-1 task, 300
    runs) at 40 runs, part 2 (the replay study) on 2 of the bundled tasks."""
    import erahbo.datasets.loaders as loaders
    import erahbo.study.run as loop

    optimize, tasks = loop.optimize, loaders.bundled_tasks()
    monkeypatch.setattr(loop, "optimize", lambda *a, **kw: optimize(*a, **{**kw, "budget": 40}))
    monkeypatch.setattr(loaders, "bundled_tasks", lambda: tasks[:2])


def _check_demo(out, budget: int):
    """One run of ``erahbo demo`` into ``out`` with ``--budget budget``; what it prints and
    writes."""
    small = ["demo", "--repetitions", "1", "--workers", "1", "--out", str(out)]
    res = CliRunner().invoke(app, [*small, "--budget", str(budget)])
    assert res.exit_code == 0, res.output
    assert "recommended configuration" in res.output
    # the seeds it names are the study's own (erahbo's defaults)
    k_min = ERAHBO_DEFAULTS["k_min"]
    assert f"most rounds stop at k_min = {k_min} seed{'s' if k_min > 1 else ''}," in " ".join(
        res.output.split())
    assert (out / "figure1.png").is_file() and (out / "figure1_rounds.png").is_file()
    report = out / "benchmark" / "report" / "report.md"
    assert report.is_file() and f"budget: {budget}" in report.read_text()
    return res


def test_demo_writes_figure_and_report_and_replaces_an_older_demo(tmp_path, smaller_demo):
    out = tmp_path / "demo"
    _check_demo(out, 12)
    # a demo with other settings replaces the earlier demo study instead of refusing
    res = _check_demo(out, 16)
    assert "replacing it" in res.output


@pytest.mark.slow  # the same at the demo's own sizes (part 1: 300 runs; part 2: every task)
def test_the_whole_demo_at_a_small_budget(tmp_path):
    _check_demo(tmp_path / "demo", 12)


def test_demo_ctrl_c_says_how_to_continue(tmp_path, monkeypatch, smaller_demo):
    import erahbo.experiments as experiments
    import erahbo.study.run as loop

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
