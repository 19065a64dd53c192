"""Seconds (wall and CPU) of one SMAC3 replay in the offline benchmark, on one thread.

Replays the ``smac`` peer (:mod:`erahbo.experiments.smac_peer`) on a table in the user's
protocol, once per budget, and prints the runs made, why the replay ended, the wall time and the
process CPU time. ``--leaf-cap`` restores the facade's ``max_leaf_nodes = 2**20`` of the random
forest (the peer drops it: same model, depth-first growth) to show what it costs.

    PYTHONPATH=src nice -n 10 python benchmarks/smac_replay_time.py \\
        data/arlbench/dqn_cc_cartpole.parquet --budgets 200,1000 [--leaf-cap]
"""

from __future__ import annotations

import os

for _v in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS", "VECLIB_MAXIMUM_THREADS"):
    os.environ[_v] = "1"

import argparse  # noqa: E402
import time  # noqa: E402

from erahbo.datasets import read_task  # noqa: E402
from erahbo.experiments import (  # noqa: E402
    StudySettings,
    parse_method,
    prepare_task,
    run_repetition,
    smac_peer,
)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("table", help="a task table (.parquet)")
    ap.add_argument("--budgets", default="200,1000", help="comma-separated budgets")
    ap.add_argument("--repetition", type=int, default=0)
    ap.add_argument("--alpha", type=float, default=1.0)
    ap.add_argument("--leaf-cap", action="store_true",
                    help="keep the facade's max_leaf_nodes = 2**20 (SMAC's own forest)")
    args = ap.parse_args()
    if args.leaf_cap:
        plain = smac_peer._forest

        def capped(model):  # the peer's forest with the facade's leaf cap put back
            model = plain(model)
            model._rf_opts["max_leaf_nodes"] = 2**20
            return model

        smac_peer._forest = capped
    task = prepare_task(read_task(args.table), alpha=args.alpha, outcome_processing="minmax")
    run_repetition(task, parse_method("smac"), 0, StudySettings(budget=5, protocol="user"))
    print(f"{task.name}: {task.n_configs} rows x {task.n_seeds} seeds, SMAC3 peer, "
          f"forest {'with' if args.leaf_cap else 'without'} the leaf cap, one thread")
    print(f"{'budget':>7} {'runs':>5} {'wall s':>8} {'cpu s':>8}  ended by")
    for b in (int(x) for x in args.budgets.split(",")):
        w0, c0 = time.perf_counter(), time.process_time()
        trace, meta = run_repetition(task, parse_method("smac"), args.repetition,
                                     StudySettings(budget=b, protocol="user",
                                                   alpha=args.alpha,
                                                   outcome_processing="minmax"))
        wall, cpu = time.perf_counter() - w0, time.process_time() - c0
        print(f"{b:>7} {len(trace):>5} {wall:>8.1f} {cpu:>8.1f}  {meta['stopped']}")


if __name__ == "__main__":
    main()
