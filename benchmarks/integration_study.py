"""Integration study (issue 16): ERAHBO inside Optuna and Ray Tune vs Optuna's TPE.

A noisy two-peak objective: a quiet peak at x = 0.25 (mean 1.0, sd 0.05) and a higher, much
noisier one at x = 0.75 (mean 1.3, sd 1.05), so with alpha = 1 the mean-variance optimum is
the quiet peak (MV 1.0 against 0.2). For each study seed, every method gets the same budget of
training runs (one run = one seed of one configuration) and recommends one configuration:

* ERAHBO through Optuna: ``ERAHBOSampler`` + ``sampler.pruner`` (CleanRL's seed loop),
  recommendation ``sampler.recommend(study)``;
* ERAHBO through Ray Tune: ``ERAHBOSearch`` (driven by Tune's searcher protocol in-process:
  suggest / on_trial_complete, no Ray workers), recommendation ``searcher.recommend()``;
* Optuna's default TPESampler with k = 3 or 10 seeds per trial and the trial value
  ``mean - alpha * var`` over the k seeds, recommendation ``study.best_trial``.

Printed: how often each recommendation is the MV optimum (MV regret < 0.1), the mean regret,
the mean training runs used, and for the ERAHBO sampler the seeds per trial and the share of
BO trials stopped before k_max.

    PYTHONPATH=src OPENBLAS_NUM_THREADS=1 python benchmarks/integration_study.py \
        [--seeds 10] [--budget 100 150] [--ray-seeds 10]
"""

from __future__ import annotations

import argparse
import math
import random
import statistics
import time
import warnings

import numpy as np
import optuna
from ray.tune.search import Searcher

from erahbo.integrations.optuna import ERAHBOSampler, trial_seeds
from erahbo.integrations.ray_tune import ERAHBOSearch

ALPHA = 1.0
QUIET, NOISY = 0.25, 0.75


def mean_sd(x: float) -> tuple[float, float]:
    mean = math.exp(-((x - QUIET) / 0.12) ** 2) + 1.3 * math.exp(-((x - NOISY) / 0.12) ** 2)
    return mean, 0.05 + 1.0 * math.exp(-((x - NOISY) / 0.2) ** 2)


def run_once(study_seed: int, x: float, seed: int) -> float:
    """One training run of configuration x with training seed ``seed``."""
    mean, sd = mean_sd(x)
    return mean + random.Random(f"{study_seed}/{x:.12f}/{seed}").gauss(0.0, sd)


_GRID = np.linspace(0.0, 1.0, 20001)
_MV = np.array([m - ALPHA * s * s for m, s in map(mean_sd, _GRID)])
MV_STAR = float(_MV.max())


def regret(x: float) -> float:
    m, s = mean_sd(x)
    return MV_STAR - (m - ALPHA * s * s)


OPTS = dict(alpha=ALPHA, n_init=5, k_min=2, k_max=10)


def erahbo_optuna(study_seed: int, budget: int) -> dict:
    sampler = ERAHBOSampler(seed=study_seed, **OPTS)
    used = [0]

    def objective(trial):
        x = trial.suggest_float("x", 0.0, 1.0)
        returns = []
        for step, seed in enumerate(trial_seeds(trial)):
            returns.append(run_once(study_seed, x, seed))
            used[0] += 1
            trial.report(returns[-1], step)
            if trial.should_prune() or used[0] >= budget:  # the budget cuts the last trial
                break
        return statistics.fmean(returns)

    def stop(study, trial):
        if used[0] >= budget:
            study.stop()

    study = optuna.create_study(direction="maximize", sampler=sampler, pruner=sampler.pruner)
    study.optimize(objective, n_trials=10 * budget, callbacks=[stop])
    bo = [len(t.intermediate_values) for t in study.trials
          if t.system_attrs.get("erahbo:phase") == "bo"]
    x = sampler.recommend(study)["x"]
    return {"x": x, "runs": used[0], "bo_seeds": bo}


def erahbo_ray(study_seed: int, budget: int) -> dict:
    searcher = ERAHBOSearch(metric="ret", mode="max", budget=budget, seed=study_seed, **OPTS)
    from ray import tune

    searcher.set_search_properties(None, None, {"x": tune.uniform(0.0, 1.0)})
    n = 0
    while (cfg := searcher.suggest(f"t{n}")) not in (None, Searcher.FINISHED):
        searcher.on_trial_complete(f"t{n}", {"ret": run_once(study_seed, cfg["x"], cfg["seed"])})
        n += 1
    return {"x": searcher.recommend()["x"], "runs": n}


def tpe(study_seed: int, budget: int, k: int) -> dict:
    def objective(trial):
        x = trial.suggest_float("x", 0.0, 1.0)
        r = [run_once(study_seed, x, s) for s in range(k)]
        return statistics.fmean(r) - ALPHA * statistics.variance(r)

    study = optuna.create_study(direction="maximize",
                                sampler=optuna.samplers.TPESampler(seed=study_seed))
    study.optimize(objective, n_trials=budget // k)
    return {"x": study.best_trial.params["x"], "runs": k * (budget // k)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=10, help="study seeds")
    ap.add_argument("--budget", type=int, nargs="+", default=[100, 150],
                    help="training runs per study (one table per value)")
    ap.add_argument("--ray-seeds", type=int, default=10, help="study seeds of the Ray searcher")
    args = ap.parse_args()
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    warnings.filterwarnings("ignore", category=optuna.exceptions.ExperimentalWarning)
    print(f"two-peak objective, alpha={ALPHA}: MV optimum x*={_GRID[_MV.argmax()]:.3f} "
          f"(MV {MV_STAR:.3f}); the higher mean at x={NOISY} has MV {-regret(NOISY) + MV_STAR:.3f}")
    for budget in args.budget:
        print(f"\n{args.seeds} study seeds, budget {budget} training runs each; "
              "hit = MV regret < 0.1")
        table(args, budget)


def table(args: argparse.Namespace, budget: int) -> None:
    methods = {
        "ERAHBO (Optuna sampler+pruner)": (erahbo_optuna, args.seeds),
        "ERAHBO (Ray Tune searcher)": (erahbo_ray, args.ray_seeds),
        "TPE, 3 seeds/trial, mean-alpha*var": (lambda s, b: tpe(s, b, 3), args.seeds),
        "TPE, 10 seeds/trial, mean-alpha*var": (lambda s, b: tpe(s, b, 10), args.seeds),
    }
    print(f"{'method':38s} {'hits':>7s} {'mean regret':>12s} {'runs':>6s} {'s/study':>8s}")
    seeds_info = None
    for name, (fn, n) in methods.items():
        if n < 1:  # --ray-seeds 0: that row is left out
            continue
        t0 = time.perf_counter()
        out = [fn(s, budget) for s in range(n)]
        dt = (time.perf_counter() - t0) / n
        reg = [regret(o["x"]) for o in out]
        hits = sum(r < 0.1 for r in reg)
        print(f"{name:38s} {hits:>3d}/{n:<3d} {statistics.fmean(reg):12.3f} "
              f"{statistics.fmean(o['runs'] for o in out):6.0f} {dt:8.1f}")
        if "bo_seeds" in out[0]:
            seeds_info = [k for o in out for k in o["bo_seeds"]]
    if seeds_info:
        k_max = OPTS["k_max"]
        early = sum(k < k_max for k in seeds_info) / len(seeds_info)
        print(f"ERAHBO sampler, BO trials: {len(seeds_info)} in all, mean seeds per trial "
              f"{statistics.fmean(seeds_info):.2f} (k_min={OPTS['k_min']}, k_max={k_max}); "
              f"stopped before k_max: {100 * early:.0f} %; initial design: {OPTS['n_init']} "
              f"trials x {k_max} seeds")

if __name__ == "__main__":
    main()
