"""Is a SAC classic-control table affordable on this CPU? (issue 12, data/README.md)

Part 1 (no training): the gradient work of the first N Sobol configurations of the paper's
SAC space. A SAC run does ``ceil(budget / (n_envs * train_freq))`` update phases of
``gradient_steps`` gradient steps each; the default configuration does 12,500 at 1e5 steps and
8 envs.

Part 2 (``--train``, needs the ARLBench venv): time one default-configuration run per seed
(the first pays the JIT compilation) and estimate the table's core-hours from it.

    python benchmarks/sac_cost.py [--task sac_cc_pendulum] [--configs 128] [--train] [--seeds 1,2]
"""

from __future__ import annotations

import argparse
import math
import time

import numpy as np

from erahbo.arlbench.generate import sobol_configs
from erahbo.arlbench.registry import get_task


def gradient_steps(config: dict, budget: int, n_envs: int) -> int:
    """Gradient steps of one SAC run of ``config`` (ARLBench 0.1.3's update loop)."""
    return math.ceil(budget / n_envs / config["train_freq"]) * int(config["gradient_steps"])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--task", default="sac_cc_pendulum")
    ap.add_argument("--configs", type=int, default=128)
    ap.add_argument("--seeds-per-config", type=int, default=50)
    ap.add_argument("--train", action="store_true", help="time default-configuration runs")
    ap.add_argument("--seeds", default="1,2")
    ap.add_argument("--run-s", type=float, default=52.0,
                    help="seconds of one default run when --train is not given")
    args = ap.parse_args()
    t = get_task(args.task)
    budget, n_envs = t.n_total_timesteps, t.n_envs
    default = {"train_freq": 1, "gradient_steps": 1}
    g0 = gradient_steps(default, budget, n_envs)
    g = np.array([gradient_steps(c, budget, n_envs)
                  for c in sobol_configs(t.search_space, args.configs, 0)])
    print(f"{t.name}: {budget:,} steps x {n_envs} envs; default configuration {g0:,} "
          "gradient steps")
    print(f"first {args.configs} Sobol configurations: gradient steps min {g.min():,} "
          f"median {int(np.median(g)):,} ({np.median(g) / g0:.0f}x default) mean "
          f"{int(g.mean()):,} ({g.mean() / g0:.0f}x) max {g.max():,}; within 2x of the "
          f"default: {(g <= 2 * g0).sum()}")
    run_s = args.run_s
    if args.train:
        from erahbo.arlbench.client import ArlClient

        seeds = [int(s) for s in args.seeds.split(",")]
        with ArlClient(1) as cl:
            t0 = time.perf_counter()
            res = cl.train(t, {}, seeds)
        for r in res:
            print(f"seed {r.seed}: {r.status} return {r.return_:.1f} in {r.runtime_s:.1f} s"
                  + (" (with compilation)" if r.first else ""))
        print(f"wall {time.perf_counter() - t0:.0f} s")
        later = [r.runtime_s for r in res if not r.first] or [res[0].runtime_s]
        run_s = float(np.median(later))
    per_step = run_s / g0
    hours = g.mean() * per_step * args.configs * args.seeds_per_config / 3600
    print(f"at {run_s:.0f} s per default run ({1e3 * per_step:.1f} ms per gradient step): "
          f"median run {np.median(g) * per_step / 3600:.1f} h, table {args.configs} x "
          f"{args.seeds_per_config} about {hours:,.0f} core-hours")


if __name__ == "__main__":
    main()
