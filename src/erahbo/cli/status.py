"""``erahbo status PATH``: a read-only summary of a study journal (thin layer over
:func:`erahbo.study_status.study_status`)."""

from __future__ import annotations

import math
from pathlib import Path

import typer

from erahbo.cli._console import make_console
from erahbo.risk import measure_from_json, objective_name

# run statuses the budget counts (their numbers add up to the counted runs), and what the
# others are
_COUNTED = ("ok", "penalized")
_NOT_COUNTED = {"interrupted": "cut by a crash, run again with the same seed",
                "retried": "failed, replaced by a retry with a new seed",
                "failed": "failed, configuration excluded"}


def status(
    path: Path = typer.Argument(..., help="The study's journal (SQLite file)."),
) -> None:
    """Show a journal's runs, rounds, incumbent and whether it finished (changes nothing)."""
    from erahbo.cli.optimize_cmd import fail, library_errors
    from erahbo.study_status import study_status

    try:
        s = study_status(path)
    except library_errors() as exc:
        raise fail(str(exc)) from None
    console = make_console()
    p = lambda text: console.print(text, markup=False, highlight=False)  # noqa: E731
    budget = "?" if s.budget is None else s.budget
    state = f"running (pid {s.pid})" if s.state == "running" and s.pid else s.state
    p(f"{s.path}: {s.method} study, {state}")
    p(f"  objective: {s.info.get('objective') or '? (not recorded: not importable by name)'}")
    counted = ", ".join(f"{s.run_status[k]} {k}" for k in _COUNTED if s.run_status.get(k))
    p(f"  training runs: {s.n_counted} of {budget} counted ({counted or 'none yet'})")
    if others := [k for k in sorted(s.run_status) if k not in _COUNTED and s.run_status[k]]:
        p("  runs not counted: " + ", ".join(f"{s.run_status[k]} {k} ({_NOT_COUNTED.get(k, k)})"
                                        for k in others))
    p(f"  rounds: {s.n_rounds}; trials: {s.n_trials} asked, {s.n_pending} not told")
    if s.pending_runs:
        runs = ", ".join(f"{n} {k}" for k, n in sorted(s.pending_runs.items()))
        if s.state == "running":
            when = "in progress"
        else:
            cut = s.pending_runs.get("running", 0)
            when = "finished ones are kept on resume" + (
                f"; the {cut} running were cut and run again with the same seed" if cut else "")
        p(f"  runs of trials not told yet, not counted: {runs} ({when})")
    if s.incumbent is not None:
        mv = "nan" if not math.isfinite(s.incumbent_mv) else f"{s.incumbent_mv:.6g}"
        measure = measure_from_json({k: v for k, v in s.settings.items()
                                     if k in ("risk", "alpha", "c", "q") and v is not None})
        p(f"  incumbent: config {s.incumbent_id}, estimated {objective_name(measure)} {mv}")
        for name, value in s.incumbent.items():
            p(f"    {name} = {value:.6g}" if isinstance(value, float) else f"    {name} = {value}")
    elif s.note:
        p(f"  incumbent: none ({s.note})")
    if s.state == "inconsistent":
        p(f"  the journaled events do not replay: erahbo resume refuses this journal; restore "
          f"{path} from a backup or start a new study")
    tuned = str(s.info.get("objective", "")).startswith("arlbench:")
    if s.state == "stopped":
        p("  continue it: run the same erahbo tune command again" if tuned
          else f"  continue it: erahbo resume {path}")
    elif s.state == "finished":
        p("  more runs: the same erahbo tune command with a larger --budget" if tuned
          else f"  more runs: erahbo resume {path} --budget N (N > {budget})")


def register(app: typer.Typer, groups: dict[str, typer.Typer]) -> None:
    app.command("status")(status)
