"""The Typer application: every command registered (``erahbo.cli.app``).

Each command lives in its own module of this package and exposes
``register(app, groups)``; ``groups`` holds the shared sub-command groups
(``dataset``, ``arlbench``) so that several modules can add commands to one group. The
command modules import the library's heavy parts (pandas, scipy, matplotlib) inside the
commands, so that ``erahbo --help`` starts fast.
"""

from __future__ import annotations

import typer

from erahbo.cli import (
    arlbench_cmd,
    benchmark,
    dataset,
    demo,
    generate,
    optimize_cmd,
    report,
    resume,
    status,
    tune,
)

app = typer.Typer(
    name="erahbo",
    help="Risk-aware hyperparameter optimization of reinforcement learning "
    "(ERAHBO, RAHBO, GP-UCB).",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_show_locals=False,
)
groups: dict[str, typer.Typer] = {
    "dataset": typer.Typer(
        help="Create, generate and inspect RL-outcome datasets.", no_args_is_help=True
    ),
    "arlbench": typer.Typer(help="Manage the ARLBench worker environment.", no_args_is_help=True),
}


def _version(value: bool) -> None:
    if value:
        from erahbo import __version__

        typer.echo(f"erahbo {__version__}")
        raise typer.Exit()


@app.callback()
def _main(
    version: bool = typer.Option(False, "--version", callback=_version, is_eager=True,
                                 help="Show the version and exit."),
) -> None:
    """Risk-aware hyperparameter optimization of reinforcement learning (ERAHBO, RAHBO,
    GP-UCB)."""


for _name, _group in groups.items():
    app.add_typer(_group, name=_name)

# Command modules, in --help order: each adds its command(s) to the app or a group.
for _module in (demo, optimize_cmd, benchmark, report, tune, resume, status, dataset,
                generate, arlbench_cmd):
    _module.register(app, groups)
