"""``erahbo resume PATH``: continue a journaled study to its budget (``--budget N``: more).

A thin layer over :func:`erahbo.resume`: the settings come from the journal, the
objective is rebuilt from the journal's info (``module:function`` or a bundled task name), the
optimizer state by replaying the journal. Runs in flight at the crash are re-run with the same
seed; nothing is counted twice.
"""

from __future__ import annotations

import time
from pathlib import Path

import typer

from erahbo.cli.optimize_cmd import (
    fail,
    library_errors,
    print_result,
    progress_display,
    write_outputs,
)


def resume(
    path: Path = typer.Argument(..., help="The study's journal (SQLite file)."),
    objective: str = typer.Option(None, help="The objective, 'module:function' or figure1 | "
                                  "branin, where the journal records none (or its own cannot "
                                  "be imported as recorded); another objective than the "
                                  "journal's is refused."),
    executor: str = typer.Option(None, help="serial | process | ray (default: as journaled)."),
    workers: int = typer.Option(None, help="Concurrent training runs (default: as journaled)."),
    address: str = typer.Option(None, help="Ray: 'auto' joins the running cluster."),
    run_timeout: float = typer.Option(None, help="Seconds per run (default: as journaled)."),
    out: Path = typer.Option(None, help="Output folder (default: the one of `erahbo optimize`, "
                             "if it recorded one)."),
    budget: int = typer.Option(None, help="Give the study more training runs in all (a "
                               "finished study continues: replay, then more rounds)."),
    progress: bool = typer.Option(True, help="Show a progress bar."),
    verify: bool = typer.Option(False, help="Re-decide every journaled round instead of "
                                "starting from the journal's snapshot, and check both agree."),
) -> None:
    """Reopen a journal and continue its study to the budget; print the incumbent."""
    from erahbo.runtime.journal import Journal
    from erahbo.study.rebuild import load_objective, objective_spec
    from erahbo.study.run import check_same_objective
    from erahbo.study.run import resume as resume_study

    errors = library_errors()
    try:
        if not path.exists():
            raise FileNotFoundError(f"journal {path} does not exist; give the path of a study "
                                    "journal (erahbo optimize --journal PATH)")
        with Journal.open(path) as j:
            info = dict(j.info)
            n_before = j.n_counted()
            now = j.budget()
        if budget is not None and now is not None and budget < now:
            where = (f"the study has already spent {n_before} runs" if budget <= n_before else
                     f"it is below the study's budget of {now} runs ({n_before} done)")
            raise ValueError(
                f"--budget {budget}: {where}; a study can be given more budget, not less. "
                f"Give --budget N with N > {now}, or leave --budget out to continue it to {now}"
            )
        fn = None
        space = None
        if objective is not None:
            fn, space = load_objective(objective)
            check_same_objective(path, info, {"objective": objective_spec(fn)})
        more = f", budget raised from {now} to {budget}" if budget and budget > now else ""
        typer.echo(f"resuming {path}: {n_before} of {now} training runs done{more} "
                   f"(objective {objective or info.get('objective')})")
        t0 = time.time()
        with progress_display(progress) as callback:
            result = resume_study(path, fn, space, executor=executor, workers=workers,
                                  address=address, run_timeout=run_timeout, callback=callback,
                                  budget=budget, verify=verify)
    except errors as exc:
        raise fail(str(exc)) from None
    except KeyboardInterrupt:
        more = f" --budget {budget}" if budget else ""
        typer.echo(f"interrupted; continue with `erahbo resume {path}{more}`", err=True)
        raise typer.Exit(130) from None
    from erahbo.diagnostics import diagnose

    findings = diagnose(result)
    folder = out if out is not None else (Path(info["out"]) if info.get("out") else None)
    if folder is not None:
        write_outputs(result, folder, {"objective": objective or info.get("objective"),
                                       "journal": str(path), "wall_time_s": time.time() - t0},
                      findings)
        typer.echo(f"history, rounds and summary: {folder}")
    print_result(result, findings)


def register(app: typer.Typer, groups: dict[str, typer.Typer]) -> None:
    app.command("resume")(resume)
