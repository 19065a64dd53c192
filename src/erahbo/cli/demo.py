"""``erahbo demo``: the main job of the README on the bundled default data."""

from __future__ import annotations

import shutil
from pathlib import Path

import typer
import typer.main

from erahbo.cli._console import make_console
from erahbo.cli._paths import folder


def demo(
    out: Path = typer.Option(Path("results/demo"), help="Output directory.", parser=folder,
                             metavar="<path>"),
    repetitions: int = typer.Option(5, min=1, help="Repetitions of the reduced study."),
    budget: int = typer.Option(500, min=10, help="Training runs per repetition."),
    workers: int = typer.Option(2, min=1, help="Worker processes."),
    seed: int = typer.Option(0, min=0, help="Seed."),
) -> None:
    """Optimize the Figure-1 task, then run a reduced study on the bundled suite + report.

    1. ERAHBO on the paper's Figure-1 task (two maxima, the higher one noisy): prints the
       recommended configuration and writes ``figure1.png`` and ``figure1_rounds.png``.
    2. ERAHBO, RAHBO (k=2, 20) and GP-UCB replayed on the bundled synthetic suite
       (``repetitions`` x ``budget`` runs each), then ``report/report.md`` with its figures.
    """

    from erahbo.analysis.run_plots import plot_1d_run, plot_rounds
    from erahbo.analysis.run_summary import seed_story, seeds_per_round
    from erahbo.cli.benchmark import register as register_benchmark
    from erahbo.datasets.loaders import bundled_tasks
    from erahbo.experiments.study import StudySettingsMismatch
    from erahbo.objectives.synthetic import Figure1Task
    from erahbo.study.run import optimize

    console = make_console()
    task = Figure1Task()
    try:
        result = optimize(task, task.space, method="erahbo", budget=300, seed=seed)
    except KeyboardInterrupt:
        typer.echo("interrupted; run the same command again to start the demo over (part 1 "
                   "takes seconds; part 2 continues from its finished traces)", err=True)
        raise typer.Exit(130) from None
    alpha = float(result.settings["alpha"])
    best = task.mv_argmax(alpha)
    console.rule(f"[bold]1. ERAHBO on the Figure-1 task (alpha = {alpha:g})")
    console.print(f"recommended configuration: {result.incumbent}  "
                  f"(estimated MV {result.incumbent_mv:.3f})")
    console.print(f"true MV optimum:           {best}  (MV {task.mv_max(alpha):.3f}); "
                  f"regret of the recommendation {task.regret(result.incumbent, alpha):.4f}")
    console.print(seeds_per_round(result), markup=False, highlight=False)
    console.print(seed_story(result), markup=False, highlight=False)
    png = plot_1d_run(task, result, out / "figure1.png", alpha=alpha)
    rounds = plot_rounds(result, out / "figure1_rounds.png",
                         title="ERAHBO on the Figure-1 task: rounds")
    console.print(f"plots: {png} (the task and the seeds spent), {rounds} (round by round)")
    console.rule("[bold]2. Reduced offline study on the bundled synthetic suite")
    study = out / "benchmark"
    bench = typer.Typer()  # the benchmark command alone (its own options and checks)
    register_benchmark(bench, {})
    args = [*map(str, bundled_tasks()),
            "--methods", "erahbo,rahbo-k2,rahbo-k20,gpucb-k20",
            "--repetitions", str(repetitions), "--budget", str(budget), "--workers", str(workers),
            "--seed", str(seed), "--out", str(study)]
    try:
        code = typer.main.get_command(bench).main(args, standalone_mode=False)
    except typer.BadParameter as e:  # an earlier demo with other settings: the demo's output
        if not isinstance(e.__cause__, StudySettingsMismatch):
            raise
        console.print(f"{study} holds an earlier demo study with other settings: replacing it")
        shutil.rmtree(study)
        code = typer.main.get_command(bench).main(args, standalone_mode=False)
    if code == 130:  # Ctrl-C in the study: benchmark said how to continue; exit as it did
        raise typer.Exit(130)


def register(app: typer.Typer, groups: dict[str, typer.Typer]) -> None:
    app.command("demo")(demo)
