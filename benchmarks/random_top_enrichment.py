"""Do the random rounds' draws from the acquisition's best tenth hit good rows more often?

Replays ``erahbo`` (the defaults, user's protocol) on the bundled real tables and, at every
random round, compares the share of *good* rows among the best ``--top`` share of the
unevaluated rows by the acquisition (what ``random_top`` draws from) with their share among
all unevaluated rows (what a uniform draw draws from). A good row: its true MV is within a
quarter of the way from the table's mean MV to its best. The study's decisions are not
changed: the random choice is only observed (issue 15, session 14).

    python benchmarks/random_top_enrichment.py --processing vizier --alpha 1 --reps 10

Prints one line per table: random rounds seen, good share in the best tenth, among all.
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path

for _v in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_v, "1")

import numpy as np  # noqa: E402

from erahbo.cli._console import make_console  # noqa: E402
from erahbo.cli.benchmark import load_replay_tasks  # noqa: E402
from erahbo.experiments import StudySettings, parse_methods  # noqa: E402
from erahbo.experiments.runner import run_repetition  # noqa: E402
from erahbo.optimizer import core, random_design  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", default="data/arlbench")
    ap.add_argument("--processing", default="vizier")
    ap.add_argument("--alpha", type=float, default=1.0)
    ap.add_argument("--reps", type=int, default=10)
    ap.add_argument("--top", type=float, default=0.1)
    ap.add_argument("--tasks", default=None, help="comma-separated task names (default: all)")
    args = ap.parse_args()
    tasks = load_replay_tasks([Path(args.data)], args.alpha, args.processing, None,
                              make_console(stderr=True))
    if args.tasks:
        tasks = [t for t in tasks if t.name in args.tasks.split(",")]
    seen: list[tuple[float, float]] = []
    good = np.zeros(0, dtype=bool)
    draw = random_design.random_configuration

    def observed(state, rm, allowed, rng, options):  # the same choice, and what it chose from
        if rm is not None and state.candidates is not None:
            rows = state.unevaluated_rows(allowed)
            acq = rm.acquisition(state.candidates[rows], options.weight)
            best = rows[random_design.top_share(acq, args.top)]
            seen.append((float(good[best].mean()), float(good[rows].mean())))
        return draw(state, rm, allowed, rng, options)

    core.random_configuration = observed
    settings = StudySettings(budget=1000, protocol="user", alpha=args.alpha,
                             outcome_processing=args.processing)
    method = parse_methods("erahbo")[0]
    for task in tasks:
        seen.clear()
        mv = task.mv
        good = (mv.max() - mv) <= 0.25 * (mv.max() - mv.mean())
        for rep in range(args.reps):
            run_repetition(task, method, rep, settings)
        s = np.array(seen)
        print(f"{task.name:32s} random rounds {len(s):3d}: good share in the best "
              f"{args.top:g} {s[:, 0].mean():.3f}, among all unevaluated {s[:, 1].mean():.3f}")


if __name__ == "__main__":
    main()
