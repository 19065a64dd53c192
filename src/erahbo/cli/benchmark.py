"""``erahbo benchmark``: replay GP-UCB / RAHBO / ERAHBO on tabular RL-outcome tasks."""

from __future__ import annotations

import sys
import warnings
from pathlib import Path

import typer

from erahbo.cli._console import make_console
from erahbo.cli._paths import folder
from erahbo.experiments.methods import PAPER_METHODS


def load_replay_tasks(data: list[Path], alpha: float, outcome_processing: str,
                      hp_columns: str | None, console, checkpoint: int | None = None,
                      return_columns: str | None = None, fmt: str | None = None,
                      measure=None) -> list:
    """Load, validate and process every task file under ``data`` (degenerate ones skipped);
    ``measure``: the study's risk measure, the tasks' ground truth (None: MV with ``alpha``)."""
    from erahbo.datasets.loaders import expand_paths, load_task
    from erahbo.datasets.seed_counts import replay_note, seeds_per_config
    from erahbo.datasets.validate import DegenerateTaskError
    from erahbo.experiments.replay import prepare_task

    cols = [c.strip() for c in hp_columns.split(",")] if hp_columns else None
    rets = [c.strip() for c in return_columns.split(",")] if return_columns else None
    tasks = []
    skipped: list[str] = []
    for path in expand_paths(data):
        try:
            raw = load_task(path, cols, fmt, return_columns=rets, checkpoint=checkpoint)
            task = prepare_task(raw, alpha=alpha, outcome_processing=outcome_processing,
                                measure=measure)
        except DegenerateTaskError as e:
            console.print(f"[yellow]skip[/] {e}")
            skipped.append(f"{path}: {e}")
            continue
        except ValueError as e:  # named once: most messages start with the file already
            raise ValueError(str(e) if str(path) in str(e) else f"{path}: {e}") from None
        if task.report is not None and task.report.n_infeasible:
            console.print(f"[yellow]{task.name}[/]: {task.report.n_infeasible} infeasible "
                          "configuration(s) (NaN seeds) filtered out")
        counts = seeds_per_config(raw)
        if counts is not None:
            console.print(f"[yellow]{task.name}[/]: {replay_note(counts, raw.n_seeds)}")
        tasks.append(task)
    if not tasks:
        why = ("; ".join(skipped) if skipped else "no task file (.parquet, .csv) there")
        raise ValueError(f"no usable task found in {', '.join(map(str, data))}: {why}")
    return tasks


def benchmark(
    data: list[Path] = typer.Argument(..., help="Task files (Parquet, CSV: wide, one run per "
                                      "row, runhistory.csv, ARLBench landscape) or "
                                      "directories of them."),
    methods: str = typer.Option(",".join(PAPER_METHODS), help="Comma-separated methods: "
                                "erahbo, erahbo-paper, erahbo-exp<g>, erahbo-sig<s>, erahbo-b<N>, "
                                "erahbo-bs<v>, erahbo-race, rahbo-k<K>, gpucb-k<K>, "
                                "random-k<K> (any with -p<Q>); the peers optuna-tpe-k<K> "
                                "and smac (extras optuna, smac), smac-k<K>, bts-red, "
                                "bts-red-n<N>; a suffix -cvar[<q>], -quantile[<q>] or "
                                "-mv<alpha> sets a method's own risk measure (e.g. "
                                "rahbo-k2-cvar, optuna-tpe-k10-cvar, erahbo-mv3)."),
    repetitions: int = typer.Option(20, min=1, help="Repetitions per task and method."),
    budget: int = typer.Option(2000, help="Training runs per repetition: after the shared "
                               "initial design (paper protocol) or in all (user protocol)."),
    protocol: str = typer.Option("paper", help="paper: a shared initial design of 5 x 20 "
                                 "seeds, not counted in the budget | user: each method as a "
                                 "user runs it, its own initial design counted."),
    out: Path = typer.Option(Path("results/benchmark"), help="Results directory.",
                             parser=folder, metavar="<path>"),
    workers: int = typer.Option(2, min=1, help="Concurrent jobs (worker processes, or Ray "
                                "CPUs of a local instance)."),
    executor: str = typer.Option("process", help="Where jobs run: process (local pool) | "
                                 "ray."),
    address: str = typer.Option(None, help="Ray: 'auto' joins the cluster of this machine, "
                                "'ray://host:10001' a remote one; unset starts a local one."),
    preset: str = typer.Option("default", help="Defaults of the options a method does not "
                               "set: default (erahbo's) | paper (the paper's exact settings; "
                               "with --protocol paper it reproduces the paper's study)."),
    n_init: int = typer.Option(None, min=1, help="Initial Sobol configurations per repetition "
                               "(default: 5 in the paper protocol, each method's own in the "
                               "user protocol)."),
    k_init: int = typer.Option(None, help="Stored seeds per initial configuration (default: "
                               "20 in the paper protocol, each method's own in the user "
                               "protocol)."),
    alpha: float = typer.Option(1.0, help="Risk aversion in MV = f - alpha rho^2."),
    risk: str = typer.Option("mv", help="The study's risk measure over seeds: mv (mean - "
                             "alpha * variance) | cvar (mean of the worst q share of seeds) | "
                             "quantile | mean_std. Every method's regret is in it; a method "
                             "optimizes it unless its name sets its own (erahbo-mv3, "
                             "optuna-tpe-k10-cvar)."),
    q: float = typer.Option(None, help="--risk cvar / quantile: the share of worst seeds, in "
                            "(0, 0.5] (default 0.1)."),
    beta: float = typer.Option(None, help="Acquisition confidence (mu +- sqrt(beta) sigma; "
                               "default: each method's own)."),
    beta_stop: float = typer.Option(None, help="ERAHBO stopping confidence (default: the "
                                    "method's own)."),
    k_min: int = typer.Option(None, help="ERAHBO: seeds before the stopping rule (default: "
                              "the method's own)."),
    k_max: int = typer.Option(None, help="ERAHBO: most seeds per round (default: the "
                              "method's own)."),
    seed: int = typer.Option(0, help="Base seed of the study."),
    outcome_processing: str = typer.Option(
        "vizier", help="vizier (paper) | minmax (linear onto [0, 1]) | none (raw returns)."),
    hp_columns: str = typer.Option(None, help="Comma-separated hyperparameter columns "
                                   "(overrides the guess for CSV files)."),
    return_columns: str = typer.Option(None, help="CSV: comma-separated per-seed return "
                                       "columns (or the one value column of a long CSV)."),
    fmt: str = typer.Option(None, "--format", help="parquet, csv, runhistory, landscape or "
                            "runs (default: guessed from each file)."),
    checkpoint: int = typer.Option(None, help="Learning-curve tables and ARLBench landscape "
                                   "files: the training_steps checkpoint to use (default: the "
                                   "last)."),
    report: bool = typer.Option(True, help="Write the report when the study is done."),
) -> None:
    """Run tasks x methods x repetitions and write one Parquet trace each (resumable)."""

    from erahbo._files import check_out_dir
    from erahbo.cli._progress import PlainTicker, run_progress
    from erahbo.experiments import StudySettings, parse_methods, run_study
    from erahbo.experiments.study import StudySettingsMismatch, check_seed_counts

    console = make_console(stderr=True)
    try:
        check_out_dir(out)
        if executor not in ("process", "ray"):
            raise ValueError(f"--executor {executor!r} is not known; use process or ray")
        if address is not None and executor != "ray":
            raise ValueError("--address is for --executor ray")
        specs = parse_methods(methods)
        settings = StudySettings(budget=budget, n_init=n_init, k_init=k_init, alpha=alpha,
                                 beta=beta, beta_stop=beta_stop, k_min=k_min, k_max=k_max,
                                 seed=seed, outcome_processing=outcome_processing,
                                 protocol=protocol, preset=preset, risk=risk, q=q)
        tasks = load_replay_tasks(data, alpha, outcome_processing, hp_columns, console,
                                  checkpoint, return_columns, fmt, settings.measure)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            capped = check_seed_counts(tasks, specs, settings)
    except ValueError as e:
        raise typer.BadParameter(str(e)) from None
    for note in capped:
        console.print(f"[yellow]note[/]: {note}")
    console.print(f"{len(tasks)} task(s) x {len(specs)} method(s) x {repetitions} repetitions, "
                  f"budget {budget} runs "
                  + ("after the initial design" if protocol == "paper"
                     else "(initial design included)") + f" -> {out}"
                  + (f" [executor: ray{' @ ' + address if address else ''}]"
                     if executor == "ray" else ""))
    plain = not sys.stderr.isatty()  # logs: a plain line every 30 s instead of the bar
    ticker = PlainTicker("runs")
    try:
        with run_progress(console, disable=plain) as bar:
            tid = bar.add_task("", total=None)

            def on_progress(done: int, total: int) -> None:
                bar.update(tid, completed=done, total=total)
                if plain:
                    ticker(done, total)

            summary = run_study(tasks, specs, repetitions, settings, out, workers=workers,
                                on_progress=on_progress,
                                executor="ray" if executor == "ray" else None, address=address)
    except StudySettingsMismatch as e:  # checked before any job runs: nothing is lost
        raise typer.BadParameter(str(e), param_hint="--out") from e  # (the demo reads e)
    except KeyboardInterrupt:
        typer.echo(f"interrupted; the finished traces are kept in {out / 'traces'}: run the "
                   "same command again to continue (finished jobs are skipped)", err=True)
        raise typer.Exit(130) from None
    console.print(f"{summary['jobs_run']} trace(s) written, {summary['jobs_skipped']} already "
                  f"done, in {out / 'traces'}")
    if report:
        from erahbo.analysis.report import write_report

        path = write_report(out)
        console.print(f"report: {path.report_md}")


def register(app: typer.Typer, groups: dict[str, typer.Typer]) -> None:
    app.command("benchmark")(benchmark)
