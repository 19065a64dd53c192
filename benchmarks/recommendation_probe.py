"""What erahbo recommends on a continuous benchmark task, against the truth (issue 37).

Replays erahbo's studies of ``benchmarks/continuous_benchmark.py`` exactly (the same
repetition seeds, seed stream and options: :mod:`erahbo.experiments.continuous`) and, after 50,
100 and 200 runs (``--checkpoints``), prints the recommendation the benchmark's trace scores:
its seeds ``k``, its sample mean and variance, the sample value of the study's measure, the
model's estimate (``Optimizer.incumbent_mv``), the truth (``f``, ``rho^2``, the measure's value)
and the normalized regret the benchmark reports (the trace's incumbent at that run: a trial
that spans the checkpoint counts from its last seed). The summary counts, among the
recommendations with normalized regret above 1, those whose sample variance is below half the
true variance (the winner's curse of a learn-or-fail configuration whose seeds all learned) and
those whose estimate is above the truth (session 39: on the PPO MountainCar surrogate at
alpha 10, set 0, after 200 runs the default recommends in 6 of 20 repetitions one corner
configuration whose seeds fail 11 % of the time; in four of them it has 20-34 seeds and a
sample variance 0.33-0.38 of the truth)::

    PYTHONPATH=src python benchmarks/recommendation_probe.py --task surr-ppo_cc_mountain_car \\
        --alpha 10 --set-seed 0 --reps 0 2 7 [--method erahbo-oso1] [--set NAME=VALUE ...] \\
        [--csv OUT.csv]

``--method``: a benchmark name of an erahbo method (``erahbo``, its variants); MV studies.
``--set`` adds options (``--set recommend_seeds=5``).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))

import readme_truth as rt
from erahbo import Optimizer
from erahbo.experiments.continuous import (
    ContinuousSettings,
    SeedStream,
    repetition_seed,
    task_truth,
)
from erahbo.experiments.measures import method_risk_options, without_risk_options
from erahbo.experiments.methods import parse_method
from erahbo.gp.bounds import mean_variance
from erahbo.objectives.known_truth import make_task
from erahbo.optimizer.loop import drive

COLUMNS = ("rep", "runs", "k", "sample_mean", "sample_var", "sample_mv", "estimate", "true_f",
           "true_rho2", "true_mv", "regret")


def _snapshot(opt: Optimizer, task: Any, alpha: float, star: float, norm: float
              ) -> dict[str, Any]:
    """The recommendation now: its row's statistics and its truth."""
    config = opt.recommend()
    d = opt.data
    row = d.config_ids.index(int(opt.incumbent_id))
    mean, var, k = float(d.ybar[row]), float(d.s2[row]), int(d.k[row])
    true_mv = float(task.mv(config, alpha))
    return {"k": k, "sample_mean": mean, "sample_var": var if k >= 2 else float("nan"),
            "sample_mv": float(mean_variance(mean, var, alpha)) if k >= 2 else float("nan"),
            "estimate": float(opt.incumbent_mv), "true_f": float(task.f(config)),
            "true_rho2": float(task.rho2(config)), "true_mv": true_mv,
            "regret": (star - true_mv) / norm}


def replay(task: Any, method_name: str, alpha: float, set_seed: int, rep: int, budget: int,
           options: dict[str, Any] | None, on_tell: Callable[[Optimizer, Any, int, int], None]
           ) -> Optimizer:
    """Replay one erahbo study of the benchmark exactly (its repetition seed, seed stream and
    options; ``options`` are added to the method's); after each tell, ``on_tell(opt, trial,
    before, after)`` sees the optimizer, the trial told and the runs before and after it.
    Returns the optimizer at the end of the study. Scratch probes of the records reuse it."""
    method = parse_method(method_name)
    if method.method != "erahbo":
        raise ValueError(f"--method {method_name!r}: the probe replays erahbo's methods only")
    settings = ContinuousSettings(budget=budget, alpha=alpha, seed=set_seed)
    stream = SeedStream(set_seed, rep)
    opt = Optimizer(task.space, method.method, budget=budget,
                    seed=repetition_seed(task.name, set_seed, rep), initial_in_budget=True,
                    **without_risk_options({**method.options, **(options or {})}),
                    **method_risk_options(method, settings))
    runs = [0]

    def evaluate(trial: Any) -> list[float]:
        return task.sample(trial.config, [stream(s) for s in trial.seeds])

    def tell(trial: Any, values: list[float]) -> None:
        opt.tell(trial, values)
        before, runs[0] = runs[0], runs[0] + len(values)
        on_tell(opt, trial, before, runs[0])

    drive(opt, evaluate, tell, threads=False)
    return opt


class _Reached(Exception):
    """Ends a replay of :func:`replay_until` at its run (carries the optimizer)."""


def replay_until(task: Any, method_name: str, alpha: float, set_seed: int, rep: int, runs: int,
                 options: dict[str, Any] | None = None, budget: int = 200) -> Optimizer:
    """The optimizer of :func:`replay` right after the first tell that reaches ``runs`` runs
    (the study keeps its ``budget``, so its decisions up to there are the whole study's; the
    benchmark's trace scores the previous recommendation when that trial's seeds span
    ``runs``). Raises ``ValueError`` when the study ends before ``runs``."""

    def stop(opt: Optimizer, trial: Any, before: int, after: int) -> None:
        if after >= runs:
            raise _Reached(opt)

    try:
        replay(task, method_name, alpha, set_seed, rep, budget, options, stop)
    except _Reached as reached:
        return reached.args[0]
    raise ValueError(f"the study ended before {runs} runs")


def probe(task_name: str, method_name: str, alpha: float, set_seed: int, reps: list[int],
          budget: int, checkpoints: list[int], options: dict[str, Any] | None = None
          ) -> pd.DataFrame:
    """One row per (repetition, checkpoint): the recommendation the benchmark's trace scores
    after that many runs (columns :data:`COLUMNS`); ``options`` are added to the method's."""
    task = make_task(task_name)
    truth = task_truth(task, alpha)
    star, norm = truth["mv_star"], truth["mv_star"] - truth["uniform_mv_mean"]
    rows = []
    for rep in reps:
        state: dict[str, Any] = {"now": None}

        def on_tell(opt: Optimizer, trial: Any, before: int, after: int,
                    state: dict[str, Any] = state, rep: int = rep) -> None:
            prev = state["now"]
            state["now"] = _snapshot(opt, task, alpha, star, norm)
            for c in checkpoints:
                if before < c <= after:  # the trace: the previous incumbent until
                    snap = state["now"] if c == after or prev is None else prev
                    rows.append({"rep": rep, "runs": c, **snap})  # the trial's last seed

        replay(task, method_name, alpha, set_seed, rep, budget, options, on_tell)
    return pd.DataFrame(rows, columns=list(COLUMNS))


def summary(frame: pd.DataFrame) -> str:
    """Per checkpoint: the mean and IQM normalized regret, the recommendations' median seeds,
    and, among those with normalized regret above 1, how many have a sample variance below
    half the true variance and how many an estimate above the true value."""
    from scipy.stats import trim_mean

    lines = []
    for runs, g in frame.groupby("runs"):
        bad = g[g["regret"] > 1.0]
        low = int((bad["sample_var"] < 0.5 * bad["true_rho2"]).sum())
        over = int((bad["estimate"] > bad["true_mv"]).sum())
        lines.append(
            f"after {runs} runs: regret mean {g['regret'].mean():.3f}, IQM "
            f"{trim_mean(g['regret'], 0.25):.3f}; seeds of the recommendation median "
            f"{g['k'].median():.0f}; {len(bad)} of {len(g)} with regret > 1: sample variance "
            f"below half the truth in {low}, estimate above the truth in {over}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> pd.DataFrame:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--task", default="surr-ppo_cc_mountain_car")
    p.add_argument("--method", default="erahbo")
    p.add_argument("--alpha", type=float, default=10.0)
    p.add_argument("--set-seed", type=int, default=0)
    p.add_argument("--reps", type=int, nargs="+", default=list(range(20)))
    p.add_argument("--budget", type=int, default=200)
    p.add_argument("--checkpoints", type=int, nargs="+", default=[50, 100, 200])
    rt.add_set_option(p)
    p.add_argument("--csv", default=None)
    a = p.parse_args(argv)
    options = rt.set_options(p, a.set)
    frame = probe(a.task, a.method, a.alpha, a.set_seed, a.reps, a.budget,
                  [c for c in a.checkpoints if c <= a.budget], options)
    with pd.option_context("display.width", 200, "display.max_columns", 20):
        print(frame.round(4).to_string(index=False))
    print(summary(frame))
    if a.csv:
        frame.to_csv(a.csv, index=False)
    return frame


if __name__ == "__main__":
    main()
