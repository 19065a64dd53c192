"""``erahbo optimize``: run ERAHBO / RAHBO / GP-UCB on an objective, journaled and resumable.

A thin layer over :func:`erahbo.optimize`: parse the options, load the objective and the space,
show a progress bar, write ``history.csv``, ``rounds.csv``, ``configs.csv``, ``summary.json``
and the figures ``configs.png`` and ``rounds.png`` to ``--out`` and print the incumbent.
"""

from __future__ import annotations

import json
import math
import os
import time
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import typer

from erahbo.cli._console import make_console
from erahbo.cli._decision import (
    estimate_line,
    objective_of,
    print_top,
    top_rows,
    unspent_note,
    why,
)
from erahbo.cli._paths import folder
from erahbo.cli._seed_options import part_options

ERRORS: tuple[type[BaseException], ...] = (
    ValueError, TypeError, ImportError, AttributeError, FileNotFoundError,
)


def run_timeout_option(text: str | None) -> float | str | None:
    """``--run-timeout``: seconds, ``auto`` or ``none`` (checked by the library)."""
    if text is None or text.strip().lower() == "auto":
        return "auto"
    if text.strip().lower() in ("none", "off"):
        return None
    try:
        return float(text)
    except ValueError:
        raise ValueError(f"--run-timeout {text!r}: give seconds (e.g. 3600), auto or "
                         "none") from None


def _max_failures(text: str | None) -> int | float | None:
    """``--max-failures``: an int count or a float share (checked by the library)."""
    if text is None:
        return None
    try:
        return int(text)
    except ValueError:
        try:
            return float(text)
        except ValueError:
            raise ValueError(
                f"--max-failures {text!r}: give a count (10) or a share (0.5)"
            ) from None


def fail(message: str) -> typer.Exit:
    """Print one error message (unwrapped, no markup) to stderr; the exit to raise."""
    from rich.console import Console

    Console(stderr=True, soft_wrap=True).print(f"error: {message}", markup=False,
                                               highlight=False)
    return typer.Exit(2)


def library_errors() -> tuple[type[BaseException], ...]:
    """Errors of the library that are the user's to fix (reported without a traceback)."""
    from erahbo.runtime.journal import JournalError

    return (*ERRORS, JournalError)


@contextmanager
def progress_display(enabled: bool = True) -> Iterator[Callable[..., None] | None]:
    """A rich progress bar over training runs; yields the ``callback`` for optimize/resume."""
    if not enabled:
        yield None
        return

    from erahbo.cli._progress import LazyProgress, run_progress

    console = make_console(stderr=True)
    with LazyProgress(run_progress(console)) as bar:  # drawn from the first run on
        tid = bar.add_task("", total=None)
        failed = 0

        def callback(opt: Any, trial: Any, outcome: Any) -> None:
            nonlocal failed
            if outcome is not None:
                failed += sum(r.status != "ok" for r in outcome.runs)
            if trial is None:
                desc = "resumed"
            else:
                desc = (f"round {trial.round} | config {trial.config_id} | "
                        f"+{len(trial.seeds)} seed(s) | "
                        f"incumbent {opt.incumbent_id} {objective_of(opt)} "
                        f"{opt.incumbent_mv:.4g}")
            if failed:
                desc += f", {failed} failed run(s)"
            bar.update(tid, completed=opt.n_evals, total=opt.budget, description=desc)

        yield callback


def warm_frame(warm_start: Path | None, checkpoint: int | None) -> Any:
    """``--warm-start`` read in any layout (``--checkpoint`` for landscape data); None if
    not given."""
    if warm_start is None:
        if checkpoint is not None:
            raise ValueError("--checkpoint chooses the checkpoint of --warm-start data: give "
                             "--warm-start too, or drop --checkpoint")
        return None
    from erahbo.optimizer.warm import read_warm_file

    return read_warm_file(warm_start, checkpoint, label="--warm-start")


def write_outputs(result: Any, out: Path, extra: dict[str, Any], findings: list[Any]) -> Path:
    """``history.csv``, ``rounds.csv``, ``configs.csv``, ``summary.json`` and two figures
    (``configs.png``: mean vs spread of every configuration; ``rounds.png``: the stopping
    rule's bounds and the seeds of every round) in ``out``.

    A folder that cannot be written (full disk, read-only) ends the command with one line, after
    the result is printed (a journaled study can write them again: ``erahbo resume``).
    """
    try:
        return _write_outputs(result, out, extra, findings)
    except OSError as exc:
        print_result(result, findings)
        j = extra.get("journal")
        again = (f"; the study is complete in its journal: `erahbo resume {j} --out DIR` writes "
                 "them" if j else "")
        raise fail(f"could not write the study's outputs to {out} ({exc.strerror or exc}): free "
                   f"space there or give another --out{again}") from None


def _write_outputs(result: Any, out: Path, extra: dict[str, Any], findings: list[Any]) -> Path:
    from erahbo.analysis.run_plots import plot_configs, plot_rounds

    out.mkdir(parents=True, exist_ok=True)
    result.history.to_csv(out / "history.csv", index=False)
    result.rounds.to_csv(out / "rounds.csv", index=False)
    result.configs.to_csv(out / "configs.csv", index=False)
    if len(result.configs):
        plot_configs(result, out / "configs.png")
        plot_rounds(result, out / "rounds.png")
    status = result.history["status"].value_counts().to_dict() if len(result.history) else {}
    summary = {
        "method": result.method,
        "n_evals": int(result.n_evals),
        "n_rounds": len(result.rounds),
        "incumbent": result.incumbent,
        "incumbent_id": result.incumbent_id,
        "incumbent_mv": None if not math.isfinite(result.incumbent_mv) else result.incumbent_mv,
        "why": why(result),
        "top_configs": top_rows(result),
        "failures": result.failures,
        "stopped": getattr(result, "stopped", None),
        "run_status": {str(k): int(v) for k, v in status.items()},
        "findings": findings_json(findings),
        **extra,
    }
    path = out / "summary.json"
    path.write_text(json.dumps(summary, indent=2, default=str))
    return path


def findings_json(findings: list[Any]) -> list[dict[str, str]]:
    """:func:`erahbo.diagnostics.diagnose`'s findings as JSON records (``summary.json``)."""
    return [{"code": f.code, "message": f.message} for f in findings]


def print_findings(findings: list[Any], console: Any) -> None:
    """The study's diagnostics, one yellow paragraph each (nothing when there are none)."""
    for f in findings:
        console.print(f"[yellow]note ({f.code})[/]: {f.message}")


def print_result(result: Any, findings: list[Any]) -> None:
    """The incumbent as a table, with the study's counts and its diagnostics."""
    from rich.table import Table

    console = make_console()
    if getattr(result, "stopped", None):
        console.print(f"[yellow]stopped[/]: {result.stopped}", markup=True, highlight=False)
    if result.incumbent is None:
        console.print("no incumbent: no configuration was evaluated successfully")
        return
    table = Table(title=f"incumbent ({result.method}, config {result.incumbent_id})")
    table.add_column("hyperparameter")
    table.add_column("value", justify="right")
    for name, value in result.incumbent.items():
        table.add_row(name, f"{value:.6g}" if isinstance(value, float) else str(value))
    console.print(table)
    print_top(result, console)
    n_bad = int((result.history["status"] != "ok").sum()) if len(result.history) else 0
    n_warm = int((result.rounds["phase"] == "warm").sum())
    n_warm_runs = int((result.history["phase"] == "warm").sum())
    warm_note = f" (+ {n_warm_runs} warm-start runs of {n_warm} configurations)" if n_warm else ""
    console.print(f"{estimate_line(result)}; "
                  f"{result.n_evals} training runs counted in {len(result.rounds) - n_warm} "
                  f"rounds{warm_note}"
                  + (f"; {n_bad} failed run(s) ({result.failures})" if n_bad else ""))
    if unspent_note(result):
        console.print(unspent_note(result), markup=False, highlight=False)
    print_findings(findings, console)


@part_options(after="k")  # a flag per option of the strategy's parts (their declarations)
def optimize(
    objective: str = typer.Option(..., help="'module:function' (objective(config, seed) -> "
                                  "float; the current folder is importable) or a bundled "
                                  "task: figure1 | branin."),
    space: Path = typer.Option(None, help="Search space: space.json (erahbo JSON or "
                               "{name: [type, lo, hi]}), a ConfigSpace JSON file, or a "
                               "candidate table (.csv/.parquet). Not for bundled tasks."),
    method: str = typer.Option("erahbo", help="erahbo | rahbo | gpucb | random."),
    budget: int = typer.Option(400, help="Training runs in all (initial design included)."),
    seed: int = typer.Option(0, help="Seed of the study."),
    alpha: float = typer.Option(1.0, help="Risk aversion in MV = f - alpha rho^2 (>= 0)."),
    preset: str = typer.Option("default", help="Defaults of the options not given: default "
                               "(erahbo's) | paper (the paper's exact settings)."),
    beta: float = typer.Option(None, help="Acquisition confidence (mu +- sqrt(beta) sigma; "
                               "default: the preset's)."),
    beta_stop: float = typer.Option(None, help="ERAHBO stopping confidence (the maximum of a "
                                    "schedule; default: the preset's)."),
    schedule: str = typer.Option("constant", help="ERAHBO beta_stop schedule over the budget: "
                                 "constant | exponential | sigmoid (paper appendix)."),
    gamma: float = typer.Option(10.0, help="Rate of the exponential schedule."),
    slope: float = typer.Option(10.0, help="Slope of the sigmoid schedule."),
    k_min: int = typer.Option(None, help="ERAHBO: seeds before the stopping rule (>= 1; "
                              "default: the preset's, 1; the paper's 2)."),
    k_max: int = typer.Option(None, help="ERAHBO: most seeds per round (default: the "
                              "preset's)."),
    k: int = typer.Option(20, help="Seeds per round of the fixed-k methods."),
    seed_batch: int = typer.Option(1, help="ERAHBO: seeds asked at once after k_min (e.g. "
                                   "--workers, to keep every worker busy; 1: the paper)."),
    parallel: int = typer.Option(1, help="Configurations trained at once (their seeds share "
                                 "the workers; 1: the paper's sequential loop)."),
    n_init: int = typer.Option(None, help="Initial Sobol configurations (0 with --warm-start: "
                               "none; default: the preset's)."),
    k_init: int = typer.Option(None, help="Seeds per initial configuration (default: the "
                               "preset's for erahbo, k otherwise)."),
    warm_start: Path = typer.Option(None, help="Runs done before the study (CSV/Parquet, one "
                                    "row per run: hyperparameters and 'return', e.g. an "
                                    "earlier history.csv; or a runhistory.csv, ARLBench "
                                    "landscape data, a wide CSV): data from the start, not "
                                    "in the budget."),
    checkpoint: int = typer.Option(None, help="--warm-start from ARLBench landscape data: "
                                   "the training_steps checkpoint (default: the last)."),
    journal: Path = typer.Option(None, help="SQLite journal: the study is recorded as it runs "
                                 "and resumed if the file holds the same study."),
    failures: str = typer.Option(None, help="Failed runs: retry | penalize | exclude "
                                 "(default: retry; a journaled study keeps its own)."),
    retries: int = typer.Option(2, help="Retries per failed seed with --failures retry "
                                "(twice as many once another seed of the trial succeeded)."),
    max_failures: str = typer.Option(None, help="Stop early when runs keep failing: a count "
                                     "(e.g. 10) or a share of the runs (e.g. 0.5)."),
    run_timeout: str = typer.Option("auto", help="Seconds per training run; longer runs are "
                                    "killed and count as failed. auto: ten times the longest "
                                    "finished run (at least 60 s) with --executor process or "
                                    "ray, none inline (serial); none: no limit."),
    executor: str = typer.Option(None, help="serial | process | ray (default: serial, or "
                                 "process with --workers > 1)."),
    workers: int = typer.Option(None, help="Concurrent training runs."),
    address: str = typer.Option(None, help="Ray: 'auto' joins the running cluster; unset "
                                "starts a local one."),
    out: Path = typer.Option(Path("results/optimize"), help="Output folder.", parser=folder,
                             metavar="<path>"),
    progress: bool = typer.Option(True, help="Show a progress bar."),
    **parts: Any,
) -> None:
    """Optimize an objective; write its tables, summary and figures; print the incumbent."""
    from erahbo._files import check_out_dir
    from erahbo.runtime.failure_limit import FailureLimitWarning
    from erahbo.study.rebuild import load_objective, load_space, objective_spec
    from erahbo.study.run import optimize

    errors = library_errors()
    try:
        check_out_dir(out)
        fn, task_space = load_objective(objective)
        if task_space is not None and space is not None:
            raise ValueError(f"--space is not used with the bundled task {objective}; drop it")
        if task_space is None and space is None:
            raise ValueError("--space is required with --objective module:function "
                             "(a .json space or a .csv/.parquet candidate table)")
        the_space = task_space if task_space is not None else load_space(space)
        warm = warm_frame(warm_start, checkpoint)
        timeout = run_timeout_option(run_timeout)
        info = {
            "objective": objective_spec(fn) or objective,
            "space_file": None if space is None else str(space.resolve()),
            "workdir": os.getcwd(),
            "executor": executor, "workers": workers, "address": address,
            "run_timeout": timeout, "out": str(out.resolve()),
        }
        if journal is not None:  # the CLI makes the journal's folder (the library does not)
            journal.parent.mkdir(parents=True, exist_ok=True)
        t0 = time.time()
        with progress_display(progress) as callback, warnings.catch_warnings():
            # (printed with the result: Result.stopped)
            warnings.simplefilter("ignore", FailureLimitWarning)
            given = {"beta": beta, "beta_stop": beta_stop, "k_min": k_min, "k_max": k_max,
                     "n_init": n_init, "k_init": k_init, **parts}
            result = optimize(
                fn, the_space, method=method, budget=budget, seed=seed, alpha=alpha, k=k,
                preset=preset, **{n: v for n, v in given.items() if v is not None},
                seed_batch=seed_batch, n_parallel=parallel,
                schedule=schedule, gamma=gamma, slope=slope,
                **({} if warm is None else {"warm_start": warm}),
                journal=journal, failures=failures, retries=retries,
                run_timeout=timeout,
                max_failures=_max_failures(max_failures),
                executor=executor, workers=workers, address=address, callback=callback,
                journal_info=info if journal is not None else None,
            )
    except errors as exc:
        raise fail(str(exc)) from None
    except KeyboardInterrupt:
        hint = (f"; continue with `erahbo resume {journal}`" if journal is not None else
                "; without --journal the study cannot be continued (pass --journal PATH to "
                "make it resumable)")
        typer.echo(f"interrupted{hint}", err=True)
        raise typer.Exit(130) from None
    from erahbo.diagnostics import diagnose

    findings = diagnose(result)
    path = write_outputs(result, out, {"objective": objective, "journal": None if journal is None
                                       else str(journal), "wall_time_s": time.time() - t0},
                         findings)
    print_result(result, findings)
    typer.echo(f"history, rounds and summary: {path.parent}")


def register(app: typer.Typer, groups: dict[str, typer.Typer]) -> None:
    app.command("optimize")(optimize)
