"""``erahbo dataset inspect`` and ``erahbo dataset synth``: thin layers over erahbo.datasets."""

from __future__ import annotations

import math
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich import box
from rich.table import Table
from rich.text import Text

from erahbo.cli._console import compact, make_console
from erahbo.cli._paths import folder

if TYPE_CHECKING:
    from erahbo.datasets.format import TaskData
    from erahbo.datasets.inspect import TaskSummary


def _split(text: str | None) -> list[str] | None:
    return [c.strip() for c in text.split(",") if c.strip()] if text else None


def _synthetic(task: TaskData) -> bool:
    return bool(task.meta.get("synthetic", False))


def _fail(err: Exception) -> typer.Exit:
    """Print ``err`` as one line on stderr; the exit to raise."""
    make_console(stderr=True).print(Text("error: ", style="red") + Text(str(err)), soft_wrap=True)
    return typer.Exit(code=1)


def inspect(
    files: Annotated[
        list[Path],
        typer.Argument(help="Task files (.parquet, .csv: wide, one run per row, "
                       "runhistory.csv, ARLBench landscape) or directories."),
    ],
    hp_columns: Annotated[
        str | None,
        typer.Option(
            "--hp-columns", help="Comma-separated hyperparameter columns (overrides the guess)."
        ),
    ] = None,
    return_columns: Annotated[
        str | None,
        typer.Option(
            "--return-columns",
            help="CSV: comma-separated per-seed return columns "
            "(or the one value column of a long CSV).",
        ),
    ] = None,
    fmt: Annotated[
        str | None,
        typer.Option("--format", help="parquet, csv, runhistory, landscape or runs "
                     "(default: guessed)."),
    ] = None,
    checkpoint: Annotated[
        int | None,
        typer.Option("--checkpoint", help="Learning-curve tables and ARLBench landscape files: "
                     "the training_steps checkpoint to use (default: the last)."),
    ] = None,
    plot_dir: Annotated[
        Path | None,
        typer.Option("--plot-dir", help="Write <task>_mean_std.png scatter plots here (and "
                     "<task>_curves.png for learning-curve tables).",
                     parser=folder, metavar="<path>"),
    ] = None,
    alpha: Annotated[
        float, typer.Option("--alpha", help="Risk aversion of the trade-off column.")
    ] = 1.0,
    outcome_processing: Annotated[
        str,
        typer.Option("--outcome-processing",
                     help="vizier (the benchmark's default), minmax or none: the scale of the "
                     "trade-off column."),
    ] = "vizier",
) -> None:
    """Print shape, NaN counts, degeneracy, the mean-vs-std spread and the risk trade-off.

    The trade-off column is the MV rank of the configuration with the best mean return and
    its normalized MV regret, on the benchmark's scale (``--outcome-processing``, ``--alpha``):
    ``1 (0.00)`` means a risk-neutral choice is also MV-optimal on this task. A learning-curve
    table is described at one checkpoint (the last, or ``--checkpoint``), followed by its
    curves: the per-configuration mean return per checkpoint, with its quantiles.
    """
    from erahbo._files import check_out_dir
    from erahbo.datasets.inspect import plot_mean_std, summarize_task
    from erahbo.datasets.loaders import expand_paths, load_task
    from erahbo.datasets.tradeoff import tradeoff_stats
    from erahbo.datasets.warping import METHODS
    from erahbo.validation import check_options

    console = make_console()
    try:
        check_options(alpha=alpha)
        if plot_dir is not None:
            check_out_dir(plot_dir, "--plot-dir")
        if outcome_processing not in METHODS:
            raise ValueError(
                f"--outcome-processing {outcome_processing!r}: use one of {', '.join(METHODS)}"
            )
        paths = expand_paths(files)
        tasks = [
            load_task(p, _split(hp_columns), fmt, return_columns=_split(return_columns),
                      checkpoint=checkpoint)
            for p in paths
        ]
    except ValueError as err:
        raise _fail(err) from None
    wide = console.width >= 110  # domain, degeneracy and the std range only where they fit
    table = Table(
        title="RL-outcome tasks (over feasible configurations)",
        caption=("* synthetic (not real RL data). " if any(_synthetic(t) for t in tasks) else "")
        + ("NaN: values (configurations) with a NaN. degen.: degenerate task (every feasible "
           "configuration has the same mean return, e.g. all zero: nothing to optimize; "
           "benchmark skips it). std: min/median/max" if wide else
           "NaN: configurations with a NaN. std: median")
        + " over configurations. corr: of mean and std. rank (regret): MV rank and regret of "
        "the best-mean configuration. alpha*: the smallest alpha at which it is no longer "
        "MV-optimal (processed scale)." + ("" if wide else " ! degenerate task (every "
        "configuration has the same mean return; benchmark skips it)."),
        caption_justify="left",
        box=box.SIMPLE_HEAD,
        pad_edge=False,
        collapse_padding=True,
    )
    table.add_column("task", no_wrap=True)
    cols = ("domain", "N x S", "NaN", "degen.") if wide else ("N x S", "NaN")
    for col in cols:
        table.add_column(col, no_wrap=True)
    table.add_column("std" + (" min/med/max" if wide else ""), no_wrap=True)
    table.add_column("corr", no_wrap=True)
    table.add_column("rank (regret)", no_wrap=True)
    table.add_column("alpha*", no_wrap=True)
    ill: list[tuple[str, float]] = []
    adaptive: list[TaskSummary] = []
    for task in tasks:
        s = summarize_task(task)
        trade = from_alpha = "-"  # degenerate or adaptive: nothing to trade off
        if s.adaptive:  # the benchmark's ground truth needs the same seeds for all
            adaptive.append(s)
        else:
            try:
                tr = tradeoff_stats(task, alpha=alpha, outcome_processing=outcome_processing)
            except ValueError:
                tr = None
            if tr is not None:
                if tr.ill_conditioned:
                    ill.append((task.name, tr.near_optimal_share))
                trade = f"{tr.best_mean_rank} ({tr.best_mean_regret:.2f})"
                from_alpha = ("never" if math.isinf(tr.alpha_tradeoff)
                              else compact(tr.alpha_tradeoff))
        name = s.task + ("*" if _synthetic(task) else "") + (
            "!" if s.degenerate and not wide else "")
        nan = f"{s.n_nan_values} ({s.n_infeasible})" if wide else str(s.n_infeasible)
        std = ("/".join(compact(v) for v in (s.std_min, s.std_median, s.std_max)) if wide
               else compact(s.std_median))
        lo, hi = min(s.seed_counts, default=0), max(s.seed_counts, default=0)
        seeds = (f"{lo}-{hi}" if lo < hi else lo) if s.adaptive else s.n_seeds
        head = ([s.domain, f"{s.n_configs}x{seeds}", nan, "yes" if s.degenerate else "no"]
                if wide else [f"{s.n_configs}x{seeds}", nan])
        table.add_row(name, *head, std, f"{s.corr_mean_std:+.2f}", trade, from_alpha)
        if plot_dir is not None:
            plot_mean_std(task, Path(plot_dir) / f"{task.name}_mean_std.png", alpha=alpha,
                          outcome_processing=outcome_processing)
    console.print(table)
    for a in adaptive:
        counts = ", ".join(f"{k} ({v})" for k, v in a.seed_counts.items())
        few = (f"; {a.n_few_seeds} with fewer than 2 seeds have no std and are left out"
               if a.n_few_seeds else "")
        console.print(
            f"[yellow]note[/]: {a.task}: adaptive seed counts, seeds per configuration "
            f"(configurations): {counts}. Each configuration's statistics use its own seeds; "
            f"NaN counts failed runs only, not seeds a configuration was not run on{few}. "
            "The benchmark needs every configuration on the same seeds: no rank or alpha*.")
    for name, share in ill:
        console.print(
            f"[yellow]note[/]: {name}: {share:.0%} of the configurations are within 1 % of the "
            f"MV optimum at alpha {compact(alpha)} ({outcome_processing}): most tie at it (e.g. "
            "they never learn and have no spread), so normalized regret (1 = the average "
            "configuration) is ill-conditioned here; compare raw MV, or use a smaller alpha.")
    for p in paths:
        _print_curves(console, p, plot_dir)
    if plot_dir is not None:
        console.print(f"plots written to {plot_dir}")


def _print_curves(console: Any, path: Path, plot_dir: Path | None) -> None:
    """The per-checkpoint table of a learning-curve file (nothing for other files)."""
    from erahbo.datasets.curves import curve_summary, is_curve_file, plot_curves, read_curves

    if not is_curve_file(path):
        return
    curves = read_curves(path)
    summ = curve_summary(curves)
    n, s, c = curves.returns.shape
    console.print(f"\n{curves.name}: learning curves ({n} configs x {s} seeds x {c} "
                  "checkpoints)", markup=False, highlight=False)
    table = Table(
        caption="mean return of each configuration over its seeds, quantiles over the "
        "configurations without a failed run at that checkpoint; best: the best configuration's "
        "mean; std: median std across seeds; NaN: failed runs; wall, cpu: median wall and CPU "
        "time of a run up to the checkpoint (s, compilation excluded).",
        caption_justify="left", box=box.SIMPLE_HEAD, pad_edge=False, collapse_padding=True)
    heads = ("steps", "q05", "q25", "median", "q75", "q95", "best", "std", "NaN", "wall s",
             "cpu s")
    keys = ("training_steps", "q05", "q25", "q50", "q75", "q95", "best", "std_median", "n_nan",
            "wall_s_median", "cpu_s_median")
    for h in heads:
        table.add_column(h, no_wrap=True, justify="right")
    for row in summ.to_dict("records"):
        table.add_row(*(str(int(row[k])) if k in ("training_steps", "n_nan")
                        else compact(row[k]) for k in keys))
    console.print(table)
    if plot_dir is not None:
        plot_curves(curves, Path(plot_dir) / f"{curves.name}_curves.png")


def synth(
    out: Annotated[Path, typer.Option("--out", help="Output directory for <task>.parquet files.",
                                      parser=folder, metavar="<path>")],
    tasks: Annotated[int, typer.Option("--tasks", min=1, help="Number of tasks.")] = 8,
    seed: Annotated[int, typer.Option("--seed", help="Seed of the whole suite.")] = 0,
    configs: Annotated[
        int, typer.Option("--configs", min=2, help="Configurations per task.")
    ] = 512,
    seeds: Annotated[int, typer.Option("--seeds", min=2, help="Seeds per configuration.")] = 50,
) -> None:
    """Write a suite of paper-shaped SYNTHETIC tasks (not real RL data)."""
    from erahbo._files import check_out_dir
    from erahbo.datasets.synth import write_suite

    console = make_console()
    try:
        check_out_dir(out, "--out")
        paths = write_suite(out, tasks, seed, n_configs=configs, n_seeds=seeds)
    except ValueError as err:
        raise _fail(err) from None
    for p in paths:
        console.print(f"wrote {p}")
    console.print(f"{len(paths)} synthetic tasks ({configs} configs x {seeds} seeds) in {out}")


def register(app: typer.Typer, groups: dict[str, typer.Typer]) -> None:
    """Add ``inspect`` and ``synth`` to the ``dataset`` command group."""
    group = groups["dataset"]
    group.command("inspect")(inspect)
    group.command("synth")(synth)
