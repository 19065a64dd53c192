"""``erahbo dataset generate|merge-shards|status|tasks``: ARLBench data generation."""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.table import Table

from erahbo.arlbench.registry import TASKS, get_task
from erahbo.arlbench.venv import default_venv_path
from erahbo.cli._console import compact, make_console
from erahbo.cli._paths import folder
from erahbo.cli._progress import run_progress


def tasks() -> None:
    """List the paper's 19 ARLBench tasks and whether they can be generated here."""
    console = make_console()
    table = Table(title="ARLBench tasks (paper appendix)")
    for col in ("task", "environment", "steps x envs", "runs here"):
        table.add_column(col, no_wrap=True)
    notes: dict[str, list[str]] = {}
    for t in TASKS.values():
        mark = ""
        if t.note:
            notes.setdefault(t.note, []).append(t.name)
            mark = f" [{list(notes).index(t.note) + 1}]"
        table.add_row(t.name, t.environment, f"{t.n_total_timesteps:,} x {t.n_envs}",
                      ("yes" if t.runnable_here else "no") + mark)
    console.print(table)
    for i, note in enumerate(notes, start=1):
        console.print(f"[{i}] {note}", highlight=False)


def generate(
    task: Annotated[str, typer.Option("--task", help="Registered task, e.g. ppo_cc_cartpole.")],
    configs: Annotated[int, typer.Option("--configs", help="Sobol configurations.")] = 512,
    seeds: Annotated[
        int, typer.Option("--seeds", help="Training seeds per configuration (1..S).")
    ] = 50,
    out: Annotated[Path, typer.Option("--out", help="Output root (shards + merged table).",
                                      parser=folder, metavar="<path>")] = Path(
        "data/arlbench"
    ),
    workers: Annotated[
        int | None,
        typer.Option(
            "--workers",
            help="Worker processes (one per core; default 1), or Ray actors with --executor ray "
            "(default: one per CPU of the cluster, 2 for a local instance).",
        ),
    ] = None,
    executor: Annotated[
        str,
        typer.Option(
            "--executor",
            help="process: local worker processes; ray: one actor per CPU of a Ray cluster "
            "(pip install erahbo[ray]).",
        ),
    ] = "process",
    address: Annotated[
        str | None,
        typer.Option(
            "--address",
            help="With --executor ray: 'auto' joins this machine's cluster (ray start --head), "
            "'ray://host:10001' a remote one; default: a local instance on loopback.",
        ),
    ] = None,
    sobol_seed: Annotated[
        int, typer.Option("--sobol-seed", help="Seed of the scrambled Sobol sequence.")
    ] = 0,
    shard_size: Annotated[
        int, typer.Option("--shard-size", help="Configurations per shard file.")
    ] = 4,
    budget: Annotated[
        int | None,
        typer.Option("--budget", help="Training timesteps (default: ARLBench's for the env)."),
    ] = None,
    eval_steps: Annotated[
        int,
        typer.Option("--eval-steps", help="Evaluations during training (ARLBench n_eval_steps). "
                     "Above 1 every run records its learning curve (return and wall time at each "
                     "checkpoint); ARLBench then trains differently, so it is a new table."),
    ] = 1,
    vectorize_seeds: Annotated[
        bool, typer.Option("--vectorize-seeds", help="One jax.vmap call over seeds (accelerators).")
    ] = False,
    venv: Annotated[
        Path | None, typer.Option("--venv", help="ARLBench venv (default: user cache).")
    ] = None,
    run_timeout: Annotated[
        float, typer.Option("--run-timeout", help="Seconds one run may take.")
    ] = 900.0,
    merge: Annotated[
        bool, typer.Option("--merge/--no-merge", help="Merge shards when complete.")
    ] = True,
    force: Annotated[
        bool,
        typer.Option(
            "--force", help="Generate even if the registry says the task cannot run here."
        ),
    ] = False,
) -> None:
    """Generate (or resume) an ARLBench task table: Sobol configs x all seeds, in shards."""
    from erahbo.arlbench.client import ArlClient, WorkerError
    from erahbo.arlbench.generate import generate as run_generate
    from erahbo.arlbench.generate import merge_shards

    console = make_console()
    try:
        t = get_task(task)
    except ValueError as err:
        console.print(f"[red]error:[/red] {err}")
        raise typer.Exit(code=2) from None
    if not t.runnable_here and not force:
        console.print(f"[red]error:[/red] {t.name} cannot run here: {t.note} (use --force to try)")
        raise typer.Exit(code=2)
    if configs < 1:
        console.print(f"[red]error:[/red] --configs {configs}: a table needs at least 1 "
                      "configuration (the first --configs points of a Sobol sequence); use "
                      "--configs 1 or more, e.g. 512")
        raise typer.Exit(code=2)
    if shard_size < 1:
        console.print(f"[red]error:[/red] --shard-size {shard_size}: a shard holds at least 1 "
                      "configuration; use --shard-size 1 or more")
        raise typer.Exit(code=2)
    if seeds < 2:
        console.print(f"[red]error:[/red] --seeds {seeds}: a table needs at least 2 seeds per "
                      "configuration (a sample variance needs 2; inspect and benchmark refuse "
                      "fewer); use --seeds 2 or more")
        raise typer.Exit(code=2)
    if executor not in ("process", "ray"):
        console.print(f"[red]error:[/red] --executor {executor!r}: use 'process' or 'ray'")
        raise typer.Exit(code=2)
    if address is not None and executor != "ray":
        console.print("[red]error:[/red] --address needs --executor ray")
        raise typer.Exit(code=2)
    bad = _bad_generate_option(out, budget, workers, run_timeout) or _bad_eval_steps(
        eval_steps, vectorize_seeds)
    if bad:
        console.print(f"[red]error:[/red] {bad}")
        raise typer.Exit(code=2)
    client: Any = None
    try:
        settings: dict[str, Any] = {
            "venv": venv,
            "run_timeout_s": run_timeout,
            "log_dir": default_venv_path().parent / "logs" / t.name,
            "vectorize_seeds": vectorize_seeds,
        }
        if executor == "ray":
            from erahbo.arlbench.ray_pool import RayArlClient

            client = RayArlClient(workers, address=address, **settings)
        else:
            client = ArlClient(workers or 1, **settings)
        versions = client.ping()["versions"]
    except ImportError as err:  # --executor ray without Ray
        console.print(f"[red]error:[/red] {err}")
        raise typer.Exit(code=1) from None
    except WorkerError as err:
        if client is not None:
            client.close()
        console.print(f"[red]error:[/red] {err}")
        raise typer.Exit(code=1) from None
    plain = not sys.stderr.isatty()
    t0 = time.time()
    # not a terminal: a plain line per configuration instead (logs, CI)
    # The bar and the ETA count expected work (ArlTask.relative_cost), not configurations:
    # a DQN configuration can cost 100 times another.
    with client, run_progress(console, label=t.name, disable=plain, percent=True) as bar:
        job = bar.add_task("", total=None)
        state = {"base": 0.0, "t": time.time()}

        def progress(done: int, total: int, info: dict[str, Any]) -> None:
            c_done, c_total = info["cost_done"], info["cost_total"]
            desc = f"{done}/{total} configs"
            if "skipped_shards" in info:  # resumed: the rate and ETA count new work only
                bar.reset(job, total=c_total, completed=c_done, description=desc)
                state["base"], state["t"] = c_done, time.time()
                return
            bar.update(job, total=c_total, completed=c_done, description=desc)
            if plain:
                rate = (c_done - state["base"]) / max(time.time() - state["t"], 1e-9)
                eta = (c_total - c_done) / rate if rate > 0 else float("nan")
                print(
                    f"{time.strftime('%H:%M:%S')} {t.name} {done}/{total} configs "
                    f"({100 * c_done / c_total:.1f} % of the work) "
                    f"elapsed={time.time() - t0:.0f}s eta={eta / 60:.1f}min",
                    flush=True,
                )

        try:
            res = run_generate(
                t,
                out,
                client,
                n_configs=configs,
                n_seeds=seeds,
                sobol_seed=sobol_seed,
                shard_size=shard_size,
                n_total_timesteps=budget,
                n_eval_steps=eval_steps,
                versions=versions,
                progress=progress,
            )
        except (ValueError, RuntimeError) as err:  # other settings, or a run already going
            console.print(f"[red]error:[/red] {err}")
            raise typer.Exit(code=2) from None
        except KeyboardInterrupt:
            typer.echo(f"interrupted; the finished shards are kept under {out}/shards: run the "
                       "same command again to continue (finished shards are skipped)", err=True)
            raise typer.Exit(130) from None
    console.print(
        f"{t.name}: {len(res['written'])} shards written, {len(res['skipped'])} "
        f"already present, {res['runs']} runs in {res['wall_s']:.0f} s"
    )
    if merge and len(res["written"]) + len(res["skipped"]) == res["n_shards"]:
        path = merge_shards(out, t.name)
        console.print(f"merged: {path}")


def _bad_generate_option(out: Path, budget: int | None, workers: int | None,
                         run_timeout: float) -> str | None:
    """What is wrong with these ``erahbo dataset generate`` options, before any worker starts
    (None: nothing)."""
    from erahbo._files import check_out_dir

    try:
        check_out_dir(out, "--out")
    except ValueError as err:
        return str(err)
    if budget is not None and budget < 1:
        return (f"--budget {budget}: training timesteps must be >= 1; leave --budget out for "
                "ARLBench's budget of the environment")
    if workers is not None and workers < 1:
        return f"--workers {workers}: use 1 or more (one per core), or leave it out"
    if not run_timeout > 0:
        return f"--run-timeout {run_timeout:g}: seconds one run may take, > 0 (default 900)"
    return None


def _bad_eval_steps(eval_steps: int, vectorize_seeds: bool) -> str | None:
    """What is wrong with ``--eval-steps`` (None: nothing)."""
    if eval_steps < 1:
        return (f"--eval-steps {eval_steps}: evaluations during training, 1 or more (1: the "
                "return at the end only; 10: a learning curve of 10 checkpoints)")
    if eval_steps > 1 and vectorize_seeds:
        return ("--eval-steps above 1 times every checkpoint of a run, one run at a time: "
                "drop --vectorize-seeds")
    return None


def _generation_root(out: Path) -> str | None:
    """Why ``out`` cannot be a generation's ``--out`` folder (None: it can)."""
    if not out.exists():
        return (f"no generation plan under --out {out}: the folder does not exist; give the "
                "--out folder of `erahbo dataset generate` (default data/arlbench)")
    if not out.is_dir():
        return (f"no generation plan under --out {out}: it is a file, not the --out folder of "
                "`erahbo dataset generate` (default data/arlbench)")
    return None


def merge_shards_cmd(
    task: Annotated[str, typer.Option("--task", help="Registered task.")],
    out: Annotated[Path, typer.Option("--out", help="Output root of the generation.")] = Path(
        "data/arlbench"
    ),
    partial: Annotated[
        bool,
        typer.Option("--partial", help="Merge the complete prefix of shards (a Sobol prefix)."),
    ] = False,
) -> None:
    """Merge a task's shards into <out>/<task>.parquet (common dataset format)."""
    from erahbo.arlbench.generate import merge_shards, shard_status
    from erahbo.arlbench.status import generation_tasks

    console = make_console()
    try:
        bad = _generation_root(out)
        if bad:
            raise ValueError(bad)
        there = generation_tasks(out)
        if task not in there:
            raise ValueError(
                f"--task {task}: no generation of it under {out}/shards; "
                + (f"tasks generated there: {', '.join(there)}" if there else
                   "no task has been generated there (check --out)")
            )
        path = merge_shards(out, task, allow_partial=partial)
    except ValueError as err:
        console.print(f"[red]error:[/red] {err}")
        raise typer.Exit(code=2) from None
    st = shard_status(out, task)
    console.print(f"merged {len(st['done'])}/{st['n_shards']} shards -> {path}")


STATUS_COLUMNS = (
    "task", "planned", "done (work)", "worker time (left)", "merged", "NaN runs",
    "per-config std min/med/max",
    "mean return min/med/max", "corr(mean, std)", "runs/s per core",
    "median run / first run",
)


def _g(x: float, digits: int = 3) -> str:
    return compact(x, digits, nan="")  # an empty cell for NaN


def status_rows(out: Path) -> list[list[str]]:
    """One row of :data:`STATUS_COLUMNS` per task with a generation plan under ``out``."""
    from erahbo.arlbench.status import generation_status, generation_tasks

    rows = []
    for task in generation_tasks(out):
        s = generation_status(out, task)
        merged = ""
        if s.merged_configs:
            merged = f"{s.merged_configs} x {s.n_seeds}" + (" (prefix)" if s.partial else "")
        has = bool(s.merged_configs)
        rows.append([
            task,
            f"{s.planned_configs} x {s.n_seeds}",
            f"{s.done_configs} ({100 * s.work_done:.0f} %)",
            f"{s.worker_hours:.2f} h ({s.hours_left:.1f} h)" if s.worker_hours == s.worker_hours
            else "",
            merged or "not merged",
            str(s.n_nan) if has else "",
            " / ".join(_g(v) for v in s.std) if has else "",
            " / ".join(_g(v) for v in s.mean) if has else "",
            f"{s.corr_mean_std:+.2f}" if has and s.corr_mean_std == s.corr_mean_std else "",
            _g(s.runs_per_s) if has else "",
            f"{_g(s.median_run_s, 2)} s / {_g(s.median_first_run_s, 2)} s" if has else "",
        ])
    return rows


STATUS_MARKERS = ("<!-- status -->", "<!-- /status -->")


def replace_between_markers(path: Path, lines: list[str]) -> None:
    """Replace the lines between :data:`STATUS_MARKERS` in ``path`` (markers kept)."""
    text = Path(path).read_text().splitlines()
    try:
        lo, hi = text.index(STATUS_MARKERS[0]), text.index(STATUS_MARKERS[1])
    except ValueError:
        raise ValueError(
            f"no {STATUS_MARKERS[0]} ... {STATUS_MARKERS[1]} lines to write between; add them "
            "where the table belongs"
        ) from None
    if hi < lo:
        raise ValueError(f"{STATUS_MARKERS[1]} comes before {STATUS_MARKERS[0]}")
    Path(path).write_text("\n".join([*text[: lo + 1], *lines, *text[hi:]]) + "\n")


def status(
    out: Annotated[Path, typer.Option("--out", help="Output root of the generation.")] = Path(
        "data/arlbench"
    ),
    markdown: Annotated[
        bool, typer.Option("--markdown", help="Print a Markdown table (for data/README.md).")
    ] = False,
    update: Annotated[
        Path | None,
        typer.Option("--update", help="Write the Markdown table into this file, between its "
                     f"{STATUS_MARKERS[0]} and {STATUS_MARKERS[1]} lines (e.g. data/README.md)."),
    ] = None,
) -> None:
    """Where each table's generation stands: configurations and share of the work done, stats."""
    bad = _generation_root(out)
    rows = [] if bad else status_rows(out)
    if not rows:
        why = bad or f"no generation plan under {out}/shards (check --out)"
        make_console(stderr=True).print(f"[red]error:[/red] {why}")
        raise typer.Exit(code=2)
    lines = ["| " + " | ".join(STATUS_COLUMNS) + " |", "|" + "---|" * len(STATUS_COLUMNS)]
    lines += ["| " + " | ".join(r) + " |" for r in rows]
    if update is not None:
        try:
            replace_between_markers(update, lines)
        except (OSError, ValueError) as e:
            make_console(stderr=True).print(f"[red]error:[/red] --update {update}: {e}")
            raise typer.Exit(code=2) from None
        typer.echo(f"status table written into {update}")
        return
    if markdown:
        typer.echo("\n".join(lines))
        return
    console = make_console()
    if console.width >= 200:  # the whole table fits
        table = Table(title=f"ARLBench generation under {out}")
        for i, col in enumerate(STATUS_COLUMNS):
            table.add_column(col, no_wrap=i == 0)  # task names are never cut
        for r in rows:
            table.add_row(*r)
        console.print(table)
        return
    print_status_records(rows, console, out)


def print_status_records(rows: list[list[str]], console: Any, out: Path) -> None:
    """The status, one short block per task (fits 80 columns; the table needs ~200)."""
    say = lambda line: console.print(line, markup=False, highlight=False)  # noqa: E731
    say(f"ARLBench generation under {out}")
    say("(std, mean: min / median / max over configurations)")
    for r in rows:
        d = dict(zip(STATUS_COLUMNS, r, strict=True))
        done, _, pct = d["done (work)"].partition(" ")
        merged = d["merged"] if d["merged"] != "not merged" else "not merged yet"
        say(f"{d['task']}: {done} of {d['planned']} done {pct}, merged: {merged}")
        if d["worker time (left)"]:
            used, _, left = d["worker time (left)"].partition(" (")
            run, _, first = d["median run / first run"].partition(" / ")
            say(f"  {used} of worker time ({left.rstrip(')')} left)"
                + (f", {d['runs/s per core']} runs/s/core, run {run} (first {first})"
                   if run else ""))
        if d["NaN runs"]:
            say(f"  NaN runs {d['NaN runs']}; std {d['per-config std min/med/max']}; mean "
                f"{d['mean return min/med/max']}; corr {d['corr(mean, std)'] or '-'}")


def register(app: typer.Typer, groups: dict[str, typer.Typer]) -> None:
    groups["dataset"].command("status")(status)
    groups["dataset"].command("merge-shards")(merge_shards_cmd)
    groups["dataset"].command("generate")(generate)
    groups["dataset"].command("tasks")(tasks)
