"""Wall time of the paper-scale offline study on synthetic paper-shaped tasks.

19 synthetic tasks (512 configurations x 50 seeds) x the paper's 4 methods x 20 repetitions
x 2000 training runs, on a process pool, then the full report.  Target on a 2-core machine:
<= 15 minutes for the study.

    python benchmarks/bench_study.py --workers 2 --out results/bench_study
    python benchmarks/bench_study.py --tasks 4 --repetitions 2 --budget 500   # quick look

Prints the wall time of the study and of the report, CPU time per BO round by method, and
the rank table.
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

for _v in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_v, "1")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tasks", type=int, default=19)
    ap.add_argument("--repetitions", type=int, default=20)
    ap.add_argument("--budget", type=int, default=2000)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--out", type=Path, default=Path("results/bench_study"))
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()

    from erahbo.analysis.report import write_report
    from erahbo.analysis.traces import load_traces
    from erahbo.datasets.synth import make_suite
    from erahbo.experiments import (
        PAPER_METHODS,
        StudySettings,
        parse_methods,
        prepare_task,
        run_study,
    )

    t0 = time.perf_counter()
    tasks = [prepare_task(t) for t in make_suite(args.tasks, seed=args.seed)]
    t_prep = time.perf_counter() - t0
    methods = parse_methods(list(PAPER_METHODS))
    settings = StudySettings(budget=args.budget, seed=args.seed)
    t0 = time.perf_counter()
    summary = run_study(tasks, methods, args.repetitions, settings, args.out,
                        workers=args.workers)
    t_study = time.perf_counter() - t0
    t0 = time.perf_counter()
    report = write_report(args.out)
    t_report = time.perf_counter() - t0

    ts = load_traces(args.out)
    meta = ts.meta
    print(f"tasks={len(tasks)} methods={len(methods)} repetitions={args.repetitions} "
          f"budget={args.budget} workers={args.workers}")
    print(f"prepare tasks: {t_prep:.1f} s")
    print(f"study:  {t_study:.1f} s wall ({t_study / 60:.2f} min) "
          f"[{summary['jobs_run']} jobs run, {summary['jobs_skipped']} skipped]")
    print(f"report: {t_report:.1f} s wall -> {report.report_md}")
    rounds = ts.rounds.groupby("method").size() if len(ts.rounds) else None
    cpu = meta.groupby("method")["wall_time_s"].sum()
    print("\nper method: trace wall time summed over jobs, BO rounds, ms per round")
    for m in cpu.index:
        n = int(rounds.get(m, 0)) if rounds is not None else 0
        print(f"  {m:12s} {cpu[m]:8.1f} s  {n:8d} rounds  {1e3 * cpu[m] / max(n, 1):6.2f} ms")
    print()
    print((args.out / "report" / "ranks.csv").read_text())


if __name__ == "__main__":
    main()
