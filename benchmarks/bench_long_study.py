"""Milliseconds of CPU per BO round late in a long study (one thread), before and after.

Setting of issue 27 ("Long studies"): a continuous 6-D space (six floats), ERAHBO (alpha = 1,
beta = 2.5, beta_stop = 1), 512 Sobol raw samples and 5 L-BFGS-B polishes, at n = 500 / 1000 /
2000 evaluated configurations; and a finite table of 5000 rows at n = 2000.  The state is a
synthetic converging study on ``RandomHeteroscedasticTask(dim=6)``: 16 Sobol points, then
configurations drawn around three centres with a spread shrinking from 0.6 to 0.004, one in ten
uniform; 2 to 5 seeds each.  Hyperparameters: MAP fit on the first 300 rows (excluded).

A round (timed with ``time.process_time`` after two untimed rounds, the caches of the first
rows built before; the timed rounds are at n, n + 1, ...):
append the newest configuration to the caches, build the round's models, the acquisition's
argmax (continuous: :func:`erahbo.gp.continuous_argmax`; table: ``select``), ``B_t`` and
eight evaluations of the stopping rule.  The argmax alone is reported too, and within it the
L-BFGS-B polish (its CPU time and its number of gradient evaluations).

Each case runs in its own process (peak RSS of that process); ``--before-src`` times another
source tree (e.g. ``git -C /work/main archive <commit> src | tar -x -C /tmp/x`` then
``--before-src /tmp/x/src``) in the same run, alternating before / after; medians over
``--repeats`` processes are printed.

    OPENBLAS_NUM_THREADS=1 python benchmarks/bench_long_study.py [--before-src DIR]
        [--sizes 500 1000 2000] [--rounds 4] [--repeats 3] [--no-table]
"""

from __future__ import annotations

import os

for _v in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_v] = "1"

import argparse  # noqa: E402
import json  # noqa: E402
import statistics  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
from pathlib import Path  # noqa: E402

DIM, ALPHA, BETA_STOP, RAW, N_POLISH, TABLE_ROWS = 6, 1.0, 1.0, 512, 5, 5000
WARMUP = 2  # untimed rounds first
HERE = Path(__file__).resolve()


def study_state(n: int, seed: int = 0):
    """``(n, 6)`` configurations of a converging study and their pooled statistics."""
    import numpy as np

    from erahbo.objectives.synthetic import RandomHeteroscedasticTask

    task = RandomHeteroscedasticTask(dim=DIM, seed=0)
    rng = np.random.default_rng(seed)
    centres = rng.random((3, DIM))
    spread = 0.6 * np.exp(-5.0 * np.arange(n) / n)[:, None]
    X = np.clip(centres[rng.integers(0, 3, n)] + spread * rng.standard_normal((n, DIM)), 0, 1)
    uniform = rng.random(n) < 0.1
    X[uniform] = rng.random((int(uniform.sum()), DIM))
    X[:16] = np.random.default_rng(seed + 1).random((16, DIM))
    k = rng.integers(2, 6, n).astype(float)
    f, rho2 = task.f(X), task.rho2(X)
    ybar = f + np.sqrt(rho2 / k) * rng.standard_normal(n)
    s2 = rho2 * rng.chisquare(k - 1) / (k - 1)
    return X, ybar, s2, k


def child(case: str, n: int, rounds: int) -> dict:
    """Time ``rounds`` rounds of one case in this process (the erahbo on ``sys.path``), after
    ``WARMUP`` untimed ones (a long study is in a steady state: the allocator has grown its
    heap to the round's ``n x n`` buffers and stopped faulting fresh pages)."""
    import resource
    import time

    import numpy as np

    import erahbo.gp.argmax as argmax_module
    from erahbo.gp import FastModel, continuous_argmax, fit_hyperparameters
    from erahbo.gp.round import RoundModel
    from erahbo.space import SearchSpace

    spent = {"polish": 0.0, "grads": 0}  # the L-BFGS-B polish: CPU seconds, gradient calls
    # the polish stage: all the starts (polish_all, whose ascents may run in threads), or one
    # start at a time in a tree without it
    name = "polish_all" if hasattr(argmax_module, "polish_all") else "polish"
    polish, grad = getattr(argmax_module, name), RoundModel.acquisition_grad

    def timed_polish(*args, **kwargs):
        t = time.process_time()
        try:
            return polish(*args, **kwargs)
        finally:
            spent["polish"] += time.process_time() - t

    def counted_grad(self, *args, **kwargs):
        spent["grads"] += 1
        return grad(self, *args, **kwargs)

    setattr(argmax_module, name, timed_polish)
    RoundModel.acquisition_grad = counted_grad

    X, ybar, s2, k = study_state(n + WARMUP + rounds)
    st = fit_hyperparameters(X[:300], ybar[:300], s2[:300], k[:300], seed=0)
    space = SearchSpace({f"x{i}": ("float", 0.0, 1.0) for i in range(DIM)})
    C = None
    if case == "table":  # the study's configurations are rows of a 5000-row table
        C = np.vstack([X, np.random.default_rng(7).random((TABLE_ROWS - len(X), DIM))])
    fm = FastModel(st, C)
    fm.sync(X[: n - 1 - WARMUP])  # the history (excluded)
    total, argmax, polished, grads = [], [], [], []
    for r in range(WARMUP + rounds):
        m = n - WARMUP + r
        spent.update(polish=0.0, grads=0)
        t0 = time.process_time()
        rm = fm.round(X[:m], ybar[:m], s2[:m], k[:m])
        t1 = time.process_time()
        if C is None:
            u, _ = continuous_argmax(rm, space, ALPHA, X[:m], seed=r, raw_samples=RAW,
                                     n_polish=N_POLISH)
            cand = None
        else:
            allowed = np.ones(len(C), dtype=bool)
            allowed[:m] = False  # new configurations only (a repeat would reuse the row)
            cand, _ = rm.select(allowed, ALPHA)
            u = C[cand]
        t2 = time.process_time()
        rm.best_lcb_mv(ALPHA, BETA_STOP)
        for kk in range(2, 10):  # the stopping rule after each extra seed
            rm.inner(None, u, cand, 0.5, 0.1, kk, BETA_STOP, ALPHA)
        if r >= WARMUP:
            total.append(time.process_time() - t0)
            argmax.append(t2 - t1)
            polished.append(spent["polish"])
            grads.append(spent["grads"])
    rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return {"round_ms": 1e3 * statistics.median(total),
            "argmax_ms": 1e3 * statistics.median(argmax),
            "polish_ms": 1e3 * statistics.median(polished),
            "grads": statistics.median(grads), "rss_mb": rss_mb}


def run_child(src: Path, case: str, n: int, rounds: int) -> dict:
    env = dict(os.environ, PYTHONPATH=str(src))
    out = subprocess.run([sys.executable, str(HERE), "--child", case, str(n), str(rounds)],
                         env=env, capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--before-src", type=Path, help="source tree of the 'before' column")
    ap.add_argument("--sizes", type=int, nargs="+", default=[500, 1000, 2000])
    ap.add_argument("--rounds", type=int, default=4, help="rounds timed per process")
    ap.add_argument("--repeats", type=int, default=3, help="processes per case and version")
    ap.add_argument("--no-table", action="store_true", help="skip the 5000-row table case")
    ap.add_argument("--child", nargs=3, help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.child:
        print(json.dumps(child(a.child[0], int(a.child[1]), int(a.child[2]))))
        return
    after = HERE.parents[1] / "src"
    versions = [("after", after)] + ([("before", a.before_src)] if a.before_src else [])
    cases = [("continuous", n) for n in a.sizes] + ([] if a.no_table else [("table", 2000)])
    print(f"{'case':>10} {'n':>5} {'version':>7} {'round ms':>9} {'argmax ms':>9} "
          f"{'polish ms':>9} {'grads':>5} {'RSS MB':>7}   (CPU, one thread; medians of "
          f"{a.repeats} processes x {a.rounds} rounds)")
    for case, n in cases:
        res: dict[str, list[dict]] = {v: [] for v, _ in versions}
        for rep in range(a.repeats):  # alternate: before, after, after, before, ...
            for v, src in (versions if rep % 2 else versions[::-1]):
                res[v].append(run_child(src, case, n, a.rounds))
        for v, _ in versions:
            med = {key: statistics.median(r[key] for r in res[v]) for key in res[v][0]}
            print(f"{case:>10} {n:>5} {v:>7} {med['round_ms']:9.1f} {med['argmax_ms']:9.1f} "
                  f"{med['polish_ms']:9.1f} {med['grads']:5.0f} {med['rss_mb']:7.0f}",
                  flush=True)


if __name__ == "__main__":
    main()
