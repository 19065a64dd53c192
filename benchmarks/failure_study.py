"""Sporadic failed runs: does the default policy still recommend the MV optimum? (issue 13)

Part 1 (synthetic): ``return = -(x - 0.3)^2 + 0.03 z`` on ``x in [0, 1]``; each run raises with
probability ``p`` independently of the configuration (a draw keyed by (seed, x)), so the MV
optimum stays at x = 0.3 whatever ``p``. ERAHBO, ``budget=200, k_max=10``, default
``failures="penalize"``, seeds 0..9, p in {0.05, 0.1, 0.2, 0.4}. Printed per p: how many
recommendations lie within 0.1 of 0.3, and the range of ``incumbent_mv`` next to the range of
the observed (finite) returns, with the number of studies whose estimate left that range.

Part 2 (replay): ``data/arlbench/ppo_cc_cartpole.parquet`` replayed as in the offline benchmark
(shared Sobol initial design of 5 configurations x 20 seeds outside the budget, ERAHBO
``k_min=2, k_max=20, beta_stop=1``, alpha 1, Vizier-processed returns), once as stored and once
with a random 10 % of the stored (configuration, seed) runs turned into failures (NaN: the
optimizer's failure policy handles them). Printed: IQM and mean normalized MV regret (regret of
the incumbent / regret of the initial design's mean) at the end of the budget, over the
repetitions, with and without failures, and the failures seen.

Run (one core)::

    OPENBLAS_NUM_THREADS=1 PYTHONPATH=src python benchmarks/failure_study.py \
        [--reps 20] [--budget 600] [--part synthetic|replay|both]
"""

from __future__ import annotations

import argparse
import time
import warnings

import numpy as np

import erahbo
from erahbo import SearchSpace

X_OPT = 0.3


def make_objective(p: float):
    """Objective whose runs fail (raise) with probability ``p``, whatever the configuration."""

    def objective(config: dict, seed: int) -> float:
        x = float(config["x"])
        rng = np.random.default_rng([int(seed), int(x * 2**40)])
        if rng.random() < p:
            raise RuntimeError("training diverged")
        return -((x - X_OPT) ** 2) + 0.03 * rng.standard_normal()

    return objective


def synthetic(p: float, seeds: range, budget: int = 200, k_max: int = 10) -> dict:
    """The sporadic-failure study at failure probability ``p``."""
    space = SearchSpace({"x": ("float", 0.0, 1.0)})
    hits, mvs, lo, hi, outside, failed, errors = 0, [], [], [], 0, [], []
    for s in seeds:
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                r = erahbo.optimize(make_objective(p), space, method="erahbo", budget=budget,
                                    k_max=k_max, seed=s)
        except Exception as exc:  # reported, as a user would see it
            errors.append(f"seed {s}: {type(exc).__name__}: {str(exc)[:80]}")
            continue
        h = r.history
        ok = h.loc[h.status == "ok", "return"].to_numpy(float)
        failed.append(float((h.status != "ok").mean()))
        if r.incumbent is None:
            errors.append(f"seed {s}: no incumbent")
            continue
        hits += abs(float(r.incumbent["x"]) - X_OPT) <= 0.1
        mvs.append(r.incumbent_mv)
        lo.append(ok.min())
        hi.append(ok.max())
        outside += not (ok.min() <= r.incumbent_mv <= ok.max())
    return {"p": p, "hits": hits, "n": len(seeds), "mv": (min(mvs, default=np.nan),
            max(mvs, default=np.nan)), "obs": (min(lo, default=np.nan), max(hi, default=np.nan)),
            "outside": outside, "failed": float(np.mean(failed)) if failed else np.nan,
            "errors": errors}


def _iqm(x: np.ndarray) -> float:
    x = np.sort(np.asarray(x, dtype=float))
    n = len(x)
    return float(x[n // 4: n - n // 4].mean()) if n >= 4 else float(x.mean())


def replay(path: str, reps: int, budget: int, fail: float, seed: int = 0) -> dict:
    """Normalized regret of ERAHBO at the end of ``budget`` runs, stored vs failure-injected."""
    from erahbo.datasets.loaders import load_task
    from erahbo.experiments.replay import SeedReplay, prepare_task
    from erahbo.experiments.runner import repetition_seed

    task = prepare_task(load_task(path), alpha=1.0)
    out: dict[str, list[float]] = {"stored": [], "failures": []}
    n_failed = []
    for rep in range(reps):
        rep_seed = repetition_seed(task, seed, rep)
        init = [int(i) for i in task.space.sobol_indices(5, rep_seed)]
        init_regret = task.mv_star - float(np.mean(task.mv[init]))
        mask_rng = np.random.default_rng([seed, rep, 13])
        broken = mask_rng.random(task.returns.shape) < fail  # (N, S) runs that fail
        for label in ("stored", "failures"):
            returns = task.returns if label == "stored" else np.where(broken, np.nan,
                                                                     task.returns)
            draw = SeedReplay(task, seed, rep)
            opt = erahbo.Optimizer(task.space, "erahbo", budget=budget, seed=rep_seed,
                                   alpha=1.0, k_init=20, k_min=2, k_max=20, beta_stop=1.0,
                                   initial_design=init, initial_in_budget=False,
                                   failures="penalize")
            while (trial := opt.ask()) is not None:
                cid = int(trial.config_id)
                start = draw._used[cid]
                draw.draw(cid, len(trial.seeds))
                cols = draw._order[cid, start:start + len(trial.seeds)]
                opt.tell(trial, [float(v) for v in returns[cid, cols]])
                if draw.remaining(cid) == 0:
                    opt.exclude(cid)
            inc = opt.incumbent_id
            reg = task.mv_star - float(task.mv[inc])
            out[label].append(reg / init_regret if init_regret > 0 else 0.0)
            if label == "failures":
                h = opt.result().history
                n_failed.append(int((h.status != "ok").sum()))
    return {"stored": np.array(out["stored"]), "failures": np.array(out["failures"]),
            "n_failed": n_failed, "n_configs": task.n_configs, "n_seeds": task.n_seeds}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--part", choices=("synthetic", "replay", "both"), default="both")
    ap.add_argument("--seeds", type=int, default=10)
    ap.add_argument("--reps", type=int, default=20)
    ap.add_argument("--budget", type=int, default=600)
    ap.add_argument("--table", default="data/arlbench/ppo_cc_cartpole.parquet")
    args = ap.parse_args()
    if args.part in ("synthetic", "both"):
        print("synthetic: -(x-0.3)^2 + 0.03 z, runs fail with probability p; ERAHBO budget 200,"
              f" k_max 10, seeds 0..{args.seeds - 1}")
        print(f"{'p':>5} {'within 0.1':>10} {'incumbent_mv range':>22} "
              f"{'observed returns':>20} {'MV outside':>10} {'failed runs':>11} {'s':>5}")
        for p in (0.05, 0.1, 0.2, 0.4):
            t0 = time.perf_counter()
            r = synthetic(p, range(args.seeds))
            print(f"{p:5.2f} {r['hits']:>4}/{r['n']:<5} [{r['mv'][0]:8.4f}, {r['mv'][1]:8.4f}] "
                  f"[{r['obs'][0]:7.3f}, {r['obs'][1]:6.3f}] {r['outside']:>10} "
                  f"{r['failed']:11.1%} {time.perf_counter() - t0:5.1f}")
            for e in r["errors"]:
                print("      ", e)
    if args.part in ("replay", "both"):
        t0 = time.perf_counter()
        r = replay(args.table, args.reps, args.budget, 0.1)
        print(f"\nreplay {args.table} ({r['n_configs']} configs x {r['n_seeds']} seeds), ERAHBO, "
              f"{args.reps} reps x {args.budget} runs, 10 % of stored runs failed "
              f"({np.mean(r['n_failed']):.0f} failed runs per study on average)")
        for label in ("stored", "failures"):
            x = r[label]
            print(f"  {label:9s} normalized regret: IQM {_iqm(x):.4f}  mean {x.mean():.4f}  "
                  f"median {np.median(x):.4f}  max {x.max():.4f}")
        print(f"  ({time.perf_counter() - t0:.0f} s)")


if __name__ == "__main__":
    main()
