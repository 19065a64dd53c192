"""Seconds to reopen a finished journaled study: from its snapshot, and by full replay.

A continuous 6-D study (a random heteroscedastic task, ERAHBO defaults) runs ``--runs``
training runs with a journal and closes (which stores a snapshot of the optimizer,
:mod:`erahbo.study.snapshot`). Then the journal is reopened twice: as ``erahbo resume``
does (from the snapshot), and with ``verify=True`` (every round re-decided, as before
snapshots). Both must arrive at the same recommendation. Last, ``erahbo status`` reads it
(:func:`erahbo.study_status.study_status`: from the snapshot too).

    python benchmarks/bench_resume.py [--runs 5000] [--dir DIR]
"""

from __future__ import annotations

import os

for _v in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_v] = "1"

import argparse  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import erahbo  # noqa: E402
from erahbo.objectives.synthetic import RandomHeteroscedasticTask  # noqa: E402
from erahbo.study_status import study_status  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=5000)
    ap.add_argument("--dir", type=Path, default=None, help="keep the journal here")
    a = ap.parse_args()
    task = RandomHeteroscedasticTask(dim=6, seed=0)
    kw = dict(budget=a.runs, seed=0)
    folder = a.dir or Path(tempfile.mkdtemp())
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"continuous_{a.runs}.db"
    if not path.exists():
        t0 = time.process_time()
        with erahbo.Optimizer(task.space, journal=path, **kw) as opt:
            while (t := opt.ask()) is not None:
                opt.tell(t, [task(t.config, s) for s in t.seeds])
            n = opt.data.n
        print(f"study: {a.runs} runs, {n} configurations, {time.process_time() - t0:.1f} s CPU "
              f"(journal {path.stat().st_size / 1e6:.1f} MB)")
    for label, verify in (("from the snapshot", False), ("full replay (verify)", True)):
        t0 = time.perf_counter()
        with erahbo.Optimizer(task.space, journal=path, verify=verify, **kw) as opt:
            rec = opt.recommend()
        print(f"reopen {label}: {time.perf_counter() - t0:.2f} s  recommendation {rec}")
    t0 = time.perf_counter()
    status = study_status(path)
    print(f"erahbo status: {time.perf_counter() - t0:.2f} s  incumbent {status.incumbent}")


if __name__ == "__main__":
    main()
