"""``erahbo tune``: tune live ARLBench training (thin layer over erahbo.arlbench.tune)."""

from __future__ import annotations

import json
import shlex
import sys
import time
from pathlib import Path
from typing import Any

import typer

from erahbo.cli._console import make_console
from erahbo.cli._decision import (
    markdown_top,
    objective_of,
    print_top,
    top_rows,
    unspent_note,
    why,
)
from erahbo.cli._paths import folder
from erahbo.cli._seed_options import part_options
from erahbo.cli.optimize_cmd import findings_json, print_findings, warm_frame
from erahbo.risk import objective_name


@part_options(after="k")  # a flag per option of the strategy's parts (their declarations)
def tune(
    task: str = typer.Option(..., help="Registry task, e.g. ppo_cc_cartpole "
                             "(see `erahbo dataset tasks`)."),
    method: str = typer.Option("erahbo", help="erahbo | rahbo | gpucb | random"),
    budget: int = typer.Option(200, help="Training runs in all (initial design included)."),
    workers: int = typer.Option(1, min=1, help="ARLBench worker processes: the seeds of a "
                                "round run in parallel across them."),
    out: Path = typer.Option(None, help="Output directory (default results/tune/<task>).",
                             parser=folder, metavar="<path>"),
    seed: int = typer.Option(0, help="Optimizer seed."),
    alpha: float = typer.Option(1.0, help="Risk aversion in MV = f - alpha rho^2, "
                                "on returns divided by --scale."),
    scale: float = typer.Option(None, help="Width of the return range (default: the "
                                "environment's, e.g. 500 for CartPole)."),
    preset: str = typer.Option("default", help="Defaults of the options not given: default "
                               "(erahbo's) | paper (the paper's exact settings)."),
    k_min: int = typer.Option(None, help="ERAHBO: seeds before the stopping rule (default: "
                              "the preset's)."),
    k_max: int = typer.Option(None, help="ERAHBO: most seeds per round (default: the "
                              "preset's)."),
    seed_batch: int = typer.Option(None, help="ERAHBO: seeds asked at once after "
                                   "k_min (default: the workers of one configuration; a "
                                   "resumed study keeps its own)."),
    parallel: int = typer.Option(None, help="Configurations trained at once, each on "
                                 "--workers / --parallel workers (default 1; a resumed study "
                                 "keeps its own)."),
    beta: float = typer.Option(None, help="Acquisition confidence "
                               "(mu +- sqrt(beta) sigma; default: the preset's)."),
    beta_stop: float = typer.Option(None, help="ERAHBO stopping confidence (default: the "
                                    "preset's; the "
                                    "maximum of a schedule)."),
    schedule: str = typer.Option("constant", help="ERAHBO beta_stop schedule over the budget: "
                                 "constant | exponential | sigmoid (paper appendix)."),
    gamma: float = typer.Option(10.0, help="Rate of the exponential schedule."),
    slope: float = typer.Option(10.0, help="Slope of the sigmoid schedule."),
    k: int = typer.Option(5, help="Seeds per round of the fixed-k methods."),
    warm_start: Path = typer.Option(None, help="Runs done before (CSV/Parquet, one row per "
                                    "run: hyperparameters and 'return', e.g. an earlier "
                                    "history.csv; or a runhistory.csv, ARLBench landscape "
                                    "data): data from the start, not in the budget."),
    checkpoint: int = typer.Option(None, help="--warm-start from ARLBench landscape data: "
                                   "the training_steps checkpoint (default: the last)."),
    n_init: int = typer.Option(None, help="Initial Sobol configurations (default: the "
                               "preset's; 0 with "
                               "--warm-start: none)."),
    k_init: int = typer.Option(None, help="Seeds per initial configuration "
                               "(default: the preset's for ERAHBO, k otherwise)."),
    steps: int = typer.Option(None, min=1, help="Override the training budget "
                              "(n_total_timesteps) of every run, e.g. for a smoke test."),
    failures: str = typer.Option("penalize", help="penalize | retry | exclude"),
    force: bool = typer.Option(False, "--force", help="Tune even if the registry says the task "
                               "cannot run here (e.g. a Brax task without a GPU)."),
    verify: int = typer.Option(0, min=0, help="Then train the recommended configuration with "
                               "this many fresh seeds and report its measured MV (0: skip)."),
    run_timeout: float = typer.Option(1800.0, min=1.0, help="Seconds one training run may take."),
    venv: Path = typer.Option(None, help="ARLBench venv (default: `erahbo arlbench setup`'s)."),
    progress: bool = typer.Option(True, help="Show a progress bar."),
    worker_cmd: str = typer.Option(None, hidden=True, help="Command starting a worker "
                                   "(tests: a fake worker)."),
    **parts: Any,
) -> None:
    """Tune an ARLBench task on live training, resumable from its journal."""

    from erahbo._files import check_out_dir
    from erahbo.arlbench.client import ArlClient, WorkerError
    from erahbo.arlbench.registry import get_task
    from erahbo.arlbench.tune import return_scale
    from erahbo.arlbench.tune import tune as run_tune
    from erahbo.arlbench.tune import verify as run_verify
    from erahbo.cli._progress import LazyProgress, run_progress

    console = make_console()
    try:
        t = get_task(task)
    except (KeyError, ValueError) as e:
        raise typer.BadParameter(str(e).strip("'\""), param_hint="--task") from None
    if not t.runnable_here and not force:
        console.print(f"[red]error[/]: {t.name} cannot run here: {t.note} (use --force to try "
                      "anyway, as for erahbo arlbench generate)")
        raise typer.Exit(2)
    extra = {"n_total_timesteps": int(steps)} if steps else None
    given = dict(k_min=k_min, k_max=k_max, n_init=n_init, k_init=k_init, beta=beta,
                 beta_stop=beta_stop, **parts)
    options = dict(alpha=alpha, scale=scale, k=k, preset=preset, schedule=schedule,
                   gamma=gamma, slope=slope, **{n: v for n, v in given.items() if v is not None})
    if seed_batch is not None:
        options["seed_batch"] = seed_batch
    try:
        warm = warm_frame(warm_start, checkpoint)
    except ValueError as e:
        raise typer.BadParameter(str(e), param_hint="--warm-start") from None
    if warm is not None:
        options["warm_start"] = warm
    if parallel is not None:
        options["n_parallel"] = parallel
    try:  # every option checked before anything is printed or created
        check_tune_options(t, method=method, budget=budget, seed=seed, failures=failures,
                           **options)
    except (ValueError, TypeError, FileNotFoundError) as e:
        console.print(f"[red]error[/]: {e}", markup=True, highlight=False)
        raise typer.Exit(1) from None
    if not t.runnable_here:
        console.print(f"[yellow]warning[/]: {t.name}: {t.note}")
    out = out or Path("results/tune") / t.name
    try:
        check_out_dir(out)
    except ValueError as e:
        raise typer.BadParameter(str(e), param_hint="--out") from None
    made = [p for p in (out, *out.parents) if not p.exists()]  # removed again if left empty
    cmd = shlex.split(worker_cmd) if worker_cmd else None
    try:
        client = ArlClient(workers, venv=venv, worker_cmd=cmd, run_timeout_s=run_timeout,
                           log_dir=out / "worker-logs")
    except WorkerError as e:
        _remove_empty(out / "worker-logs", *made)
        console.print(f"[red]error[/]: {e}")
        raise typer.Exit(1) from None
    out.mkdir(parents=True, exist_ok=True)
    width = scale or return_scale(t)
    console.print(f"tuning {t.name} ({t.algorithm}, {t.environment}) with {method}, budget "
                  f"{budget} runs, {workers} worker(s); alpha {alpha} on returns / {width:g}; "
                  f"journal {out / 'study.db'}")
    plain = progress and not sys.stderr.isatty()  # logs (nohup, CI): a line per trial instead
    try:
        with client, LazyProgress(run_progress(console, disable=plain or not progress)) as bar:
            tid = bar.add_task("", total=budget)

            def on_trial(trial, results, opt) -> None:
                failed = sum(r.status != "ok" for r in results)
                inc = opt.incumbent_id
                mv = opt.incumbent_mv
                busy = f" | {opt.n_pending} more in flight" if opt.n_parallel > 1 else ""
                desc = (f"round {trial.round:3d} | config {trial.config_id:3d} | "
                        f"+{len(results)} seed(s){f' ({failed} failed)' if failed else ''} | "
                        f"incumbent {inc} {objective_of(opt)} {mv:.4g}{busy}")
                bar.update(tid, completed=opt.n_evals, description=desc)
                if plain:
                    print(f"{time.strftime('%H:%M:%S')} runs {opt.n_evals}/{budget} | {desc}",
                          flush=True)

            try:
                result = run_tune(t, client=client, method=method, budget=budget, seed=seed,
                                  journal=out / "study.db", failures=failures, extra=extra,
                                  on_trial=on_trial, **options)
            except ValueError as e:
                console.print(f"[red]error[/]: {e}")
                raise typer.Exit(1) from None
            check = None
            if verify and result.incumbent is not None:
                bar.update(tid, description=f"verifying the incumbent on {verify} fresh seeds")
                used = result.history.loc[result.history["config_id"] == result.incumbent_id,
                                          "seed"]
                check = run_verify(t, result.incumbent, client=client, n_seeds=verify,
                                   alpha=alpha, scale=scale, seed=seed, exclude=used.tolist(),
                                   extra=extra, measure=result.measure)
    except KeyboardInterrupt:
        again = shlex.join(["erahbo", *sys.argv[1:]]) if sys.argv[1:2] == ["tune"] else \
            f"erahbo tune --task {t.name} --out {out}"
        typer.echo(f"interrupted; the study is journaled in {out / 'study.db'}: run the same "
                   f"command again to continue it: {again}", err=True)
        raise typer.Exit(130) from None
    _write_outputs(out, t, method, budget, alpha, width, verify, result, check, console)


def _write_outputs(out: Path, t, method: str, budget: int, alpha: float, width: float,
                   verify: int, result, check, console) -> None:
    """Tables, summary.json, figures and tune.md of a tuning; the recommendation printed."""
    from erahbo.analysis.run_plots import plot_configs, plot_rounds
    from erahbo.diagnostics import diagnose
    from erahbo.recommendation import explain_verification

    findings = diagnose(result)
    name = objective_name(result.measure)
    result.history.to_csv(out / "history.csv", index=False)
    result.rounds.to_csv(out / "rounds.csv", index=False)
    result.configs.to_csv(out / "configs.csv", index=False)
    summary = {"task": t.name, "method": method, "budget": budget, "n_evals": result.n_evals,
               "incumbent_id": result.incumbent_id, "incumbent": result.incumbent,
               "incumbent_mv": result.incumbent_mv, "alpha": alpha, "scale": width,
               "risk": result.measure.to_json(), "objective": name,
               "failed_runs": int((result.history["status"] != "ok").sum()),
               "why": why(result), "top_configs": top_rows(result),
               "verification": None if check is None else check.to_dict(),
               "verification_gap": None if check is None else explain_verification(
                   result.incumbent_mv, check.mv, check.std,
                   len(check.returns) - check.n_failed,
                   alpha / width if name == "MV" else result.measure),
               "findings": findings_json(findings)}
    (out / "summary.json").write_text(json.dumps(summary, indent=2, default=str))
    png = plot_configs(result, out / "configs.png", title=f"{method.upper()} on {t.name}")
    plot_rounds(result, out / "rounds.png", title=f"{method.upper()} on {t.name}: rounds")
    _write_markdown(out, summary, result)
    console.print(f"recommended configuration (estimated {name} {result.incumbent_mv:.4g}"
                  + ("" if name == "MV" else f"; {result.measure.describe()}") + "):")
    console.print(result.incumbent)
    print_top(result, console)
    if unspent_note(result):
        console.print(unspent_note(result), markup=False, highlight=False)
    if check is not None:
        console.print(f"on {verify} fresh seeds: mean {check.mean:.4g}, std {check.std:.4g}, "
                      f"{name} {check.mv:.4g} ({check.n_failed} failed); "
                      f"{summary['verification_gap']}", markup=False, highlight=False)
    print_findings(findings, console)
    console.print(f"history, rounds, summary, {png.name}, rounds.png and tune.md written to {out}")


def check_tune_options(task, *, method: str, budget: int, seed: int, failures: str,
                       alpha: float, scale: float | None, **options) -> None:
    """Raise ValueError/TypeError for options the tuning would refuse (nothing is started).

    Builds the optimizer without a journal (the initial design only), as ``tune`` will.
    """
    from erahbo.arlbench.tune import return_scale
    from erahbo.optimizer import Optimizer
    from erahbo.space import SearchSpace

    width = return_scale(task) if scale is None else float(scale)
    if not width > 0:
        raise ValueError(f"--scale {scale} must be > 0 (the width of the return range)")
    mv = options.get("risk") in (None, "mv")  # alpha is MV's; the other measures: no alpha
    Optimizer(SearchSpace(task.search_space), method, budget=budget, seed=seed,
              alpha=alpha / width if mv else alpha, failures=failures, **options)


def _remove_empty(*folders: Path) -> None:
    """Remove the folders that are empty, in order (those this command made)."""
    for f in folders:
        try:
            f.rmdir()
        except OSError:
            pass


def _write_markdown(out: Path, summary: dict, result) -> None:
    row = result.configs[result.configs["config_id"] == result.incumbent_id]
    unspent = unspent_note(result)
    name = summary.get("objective", "MV")
    lines = [f"# Tuning {summary['task']} with {summary['method']}", "",
             f"- training runs: {summary['n_evals']} (failed: {summary['failed_runs']})"
             + (f"; {unspent}" if unspent else ""),
             (f"- alpha: {summary['alpha']} on returns divided by {summary['scale']:g} "
              "(MV and its estimate below are on the raw return scale)" if name == "MV" else
              f"- objective: {result.measure.describe()}, on the raw return scale"),
             f"- recommended configuration (id {summary['incumbent_id']}): "
             f"`{json.dumps(summary['incumbent'], default=str)}`",
             f"- estimated {name}: {summary['incumbent_mv']:.4g}"]
    if len(row):
        r = row.iloc[0]
        spread = (f"sample std {r['std']:.4g}" if r["k"] >= 2
                  else "no sample std (one seed)")  # configs: NaN std with one seed
        lines.append(f"- its sample mean {r['mean']:.4g}, {spread} over k = {int(r['k'])} seeds")
    v = summary.get("verification")
    if v:
        lines.append(f"- out of sample, {len(v['seeds'])} fresh seeds: mean {v['mean']:.4g}, "
                     f"std {v['std']:.4g}, {name} {v['mv']:.4g} ({v['n_failed']} failed runs); "
                     f"{summary['verification_gap']}")
    for f in summary.get("findings", []):
        lines.append(f"- **note ({f['code']})**: {f['message']}")
    top = markdown_top(result)
    if top:
        lines += ["", "## Best configurations", "",
                  ("Ranked by LCB_MV, the lower confidence bound of MV = mean - alpha var "
                   "(raw return scale); k: seeds run." if name == "MV" else
                   f"Ranked by LCB, the lower confidence bound of {name} "
                   f"({result.measure.describe()}, raw return scale); k: seeds run."),
                  "", *top]
    lines += ["", "![evaluated configurations](configs.png)", "",
              "![rounds: stopping-rule bounds and seeds](rounds.png)", "",
              "Seeds per round: see `rounds.csv`; every run: `history.csv`."]
    (out / "tune.md").write_text("\n".join(lines) + "\n")


def register(app: typer.Typer, groups: dict[str, typer.Typer]) -> None:
    app.command("tune")(tune)
