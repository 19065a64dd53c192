"""``erahbo arlbench setup`` / ``erahbo arlbench check``: the ARLBench worker venv."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Annotated

import typer

from erahbo.arlbench.venv import default_venv_path, setup_venv, venv_status
from erahbo.cli._console import make_console


def setup(
    venv: Annotated[
        Path | None,
        typer.Option("--venv", help="Where the ARLBench venv lives (default: user cache)."),
    ] = None,
    no_lock: Annotated[
        bool,
        typer.Option("--no-lock", help="Use the short constraints instead of the full lock file."),
    ] = False,
    python: Annotated[
        str | None,
        typer.Option("--python", help="Interpreter that creates the venv (CPython 3.11 tested)."),
    ] = None,
) -> None:
    """Create the ARLBench 0.1.3 venv if needed (idempotent) and verify the import."""
    console = make_console()
    target = venv or default_venv_path()
    console.print(f"ARLBench venv: {target}")

    def step(line: str) -> None:  # a plain line per step: also visible in logs and pipes
        console.print(f"{time.strftime('%H:%M:%S')} {line}...", markup=False, highlight=False)

    st = setup_venv(target, lock=not no_lock, python=python, progress=step)
    if not st["ok"]:
        console.print(f"[red]error:[/red] {st['error']}")
        raise typer.Exit(code=1)
    verb = "created" if st["created"] else "already present"
    console.print(f"[green]ok[/green] ({verb}): {st['python']}")
    console.print("versions: " + ", ".join(f"{k} {v}" for k, v in dict(st["versions"]).items()))


def check(
    venv: Annotated[
        Path | None, typer.Option("--venv", help="ARLBench venv (default: user cache).")
    ] = None,
    train: Annotated[
        bool,
        typer.Option("--train/--no-train", help="Also run a tiny DQN CartPole training (2 seeds)."),
    ] = True,
) -> None:
    """Check that the venv imports ARLBench and that the worker trains."""
    console = make_console()
    st = venv_status(venv)
    console.print(f"ARLBench venv: {st['path']}")
    if not st["ok"]:
        console.print(f"[red]not usable:[/red] {st['error']}")
        raise typer.Exit(code=1)
    console.print("versions: " + ", ".join(f"{k} {v}" for k, v in dict(st["versions"]).items()))
    if not train:
        return
    from erahbo.arlbench.client import ArlClient

    with (
        console.status("tiny training run (DQN CartPole, 4096 steps, 2 seeds)..."),
        ArlClient(1, venv=venv) as client,
    ):
        res = client.train(
            "dqn_cc_cartpole", {}, [1, 2], extra={"n_total_timesteps": 4096, "n_eval_episodes": 16}
        )
    for r in res:
        console.print(
            f"seed {r.seed}: {r.status} return={r.return_:.2f} "
            f"runtime={r.runtime_s:.2f}s" + (f" error={r.error}" if r.error else "")
        )
    if any(r.status != "ok" for r in res):
        raise typer.Exit(code=1)
    console.print("[green]worker ok[/green]")


def register(app: typer.Typer, groups: dict[str, typer.Typer]) -> None:
    groups["arlbench"].command("setup")(setup)
    groups["arlbench"].command("check")(check)
