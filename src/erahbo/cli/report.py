"""``erahbo report RESULTS_DIR``: the paper's report of a benchmark (thin CLI layer)."""

from __future__ import annotations

from pathlib import Path
from typing import get_args

import typer

from erahbo.cli._console import make_console
from erahbo.cli._paths import folder


def register(app: typer.Typer, groups: dict[str, typer.Typer]) -> None:
    """Add the ``report`` command to ``app``."""
    del groups

    @app.command("report")
    def report(
        results_dir: Path = typer.Argument(
            ..., help="The --out directory of `erahbo benchmark` (holds traces/)."),
        out: Path | None = typer.Option(
            None, "--out", help="Output directory (default RESULTS_DIR/report).",
            parser=folder, metavar="<path>"),
        bootstrap_reps: int = typer.Option(
            2000, "--bootstrap-reps", min=1,
            help="Stratified-bootstrap resamples for the 95 % IQM confidence intervals."),
        seed: int = typer.Option(0, "--seed", help="Seed of the bootstrap."),
        bootstrap_backend: str = typer.Option(
            "numpy", "--bootstrap-backend",
            help="numpy (fast, default), rliable (reference, slower) or auto."),
    ) -> None:
        """Write report.md, PNG figures, LaTeX tables and CSVs (ranks.csv, ...) of a study."""
        from rich.table import Table

        from erahbo._files import check_out_dir
        from erahbo.analysis.intervals import Backend
        from erahbo.analysis.report import format_rank_summary, write_report

        console = make_console()
        try:
            if out is not None:
                check_out_dir(out, "--out")
            if bootstrap_backend not in get_args(Backend):
                raise ValueError(f"--bootstrap-backend {bootstrap_backend!r}: use one of "
                                 f"{', '.join(get_args(Backend))}")
            with console.status("computing the report ..."):
                res = write_report(results_dir, out, bootstrap_reps=bootstrap_reps, seed=seed,
                                   backend=bootstrap_backend)  # type: ignore[arg-type]
        except ValueError as exc:
            console.print(f"[red]error:[/red] {exc}")
            raise typer.Exit(code=1) from exc

        ts = res.trace_set
        n_tasks = len(ts.tasks) if ts is not None else 0
        table = Table(title=f"Rank of final MV regret ({n_tasks} tasks; bold = not "
                            "significantly worse than the best, Wilcoxon)")
        for col in ("Method", "Simple: mean ± SE", "Simple: median [25, 75]",
                    "Cumulative: mean ± SE", "Cumulative: median [25, 75]"):
            table.add_column(col, justify="left" if col == "Method" else "right")
        for row in format_rank_summary(res.ranks):
            s = f"[bold]{row['simple']}[/bold]" if row["bold_simple"] else row["simple"]
            c = (f"[bold]{row['cumulative']}[/bold]" if row["bold_cumulative"]
                 else row["cumulative"])
            table.add_row(row["label"], s, row["median_simple"], c, row["median_cumulative"])
        console.print(table)
        for note in res.notes:
            console.print(f"[yellow]note:[/yellow] {note}")
        console.print(f"report: {res.report_md}  ({len(res.figures)} figures, "
                      f"{len(res.tables)} LaTeX tables, {len(res.csvs)} CSVs; bootstrap "
                      f"backend: {res.backend})")
