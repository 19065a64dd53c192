"""Probe for issue 27's 300 ms round at n = 2000: would a local GP for the L-BFGS-B polish do?

Not used by erahbo (a decision-changing option needs the issue owner's yes). On the state of
``bench_long_study.py`` (continuous 6-D, ERAHBO, 512 raw samples, 5 polishes), each round's
acquisition argmax runs three ways: the exact polish (the engine's), a polish on an exact GP
of the ``M`` evaluated rows nearest to each start (in the mean GP's scaled distance; same
hyperparameters; the end points projected and scored exactly by the full model, as always),
and no polish. Printed per round and in summary: the share of the exact polish's gain in
acquisition value that the local polish keeps, and the argmax's CPU milliseconds.

    OPENBLAS_NUM_THREADS=1 python benchmarks/local_polish_probe.py [--n 2000] [--m 512]
        [--rounds 6]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

import bench_long_study as bench
import erahbo.gp.argmax as argmax_module
from erahbo.gp import FastModel, continuous_argmax, fit_hyperparameters
from erahbo.gp.reference import ReferenceRound
from erahbo.space import SearchSpace


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--n", type=int, default=2000, help="evaluated configurations")
    ap.add_argument("--m", type=int, default=512, help="rows of each local GP")
    ap.add_argument("--rounds", type=int, default=6)
    args = ap.parse_args()
    X, ybar, s2, k = bench.study_state(args.n + args.rounds)
    st = fit_hyperparameters(X[:300], ybar[:300], s2[:300], k[:300], seed=0)
    space = SearchSpace({f"x{i}": ("float", 0.0, 1.0) for i in range(bench.DIM)})
    fm = FastModel(st, None)
    exact_polish = argmax_module.polish_all
    data: dict[str, np.ndarray] = {}

    def local_polish_all(rm, starts, mask, weight, maxiter=50):
        ls = st.hyper_f.lengthscales
        scaled = data["X"] / ls
        out = []
        for s in starts:
            rows = np.argsort(((scaled - s / ls) ** 2).sum(1))[: args.m]
            local = ReferenceRound(data["X"][rows], data["ybar"][rows], data["s2"][rows],
                                   data["k"][rows], st)
            out.append(argmax_module.polish(local, s, mask, weight, maxiter))
        return out

    def no_polish(rm, starts, mask, weight, maxiter=50):
        return list(starts)

    def argmax(rm, m, r, polish_all):
        argmax_module.polish_all = polish_all
        try:
            t = time.process_time()
            u, v = continuous_argmax(rm, space, bench.ALPHA, X[:m], seed=r,
                                     raw_samples=bench.RAW, n_polish=bench.N_POLISH)
            return u, v, 1e3 * (time.process_time() - t)
        finally:
            argmax_module.polish_all = exact_polish

    kept, ms_exact, ms_local = [], [], []
    for r in range(args.rounds):
        m = args.n + r
        rm = fm.round(X[:m], ybar[:m], s2[:m], k[:m])
        data.update(X=X[:m], ybar=ybar[:m], s2=s2[:m], k=k[:m])
        ue, ve, te = argmax(rm, m, r, exact_polish)
        ul, vl, tl = argmax(rm, m, r, local_polish_all)
        _, vn, _ = argmax(rm, m, r, no_polish)
        kept.append((vl - vn) / max(ve - vn, 1e-12))
        ms_exact.append(te)
        ms_local.append(tl)
        print(json.dumps({"round": r, "exact": ve, "local": vl, "no_polish": vn,
                          "exact_ms": round(te, 1), "local_ms": round(tl, 1),
                          "distance": float(np.linalg.norm(ue - ul))}), flush=True)
    print(f"n={args.n}, local GP of {args.m} rows: share of the polish's gain kept "
          f"{np.round(kept, 3).tolist()}; argmax ms (median) exact "
          f"{np.median(ms_exact):.0f}, local {np.median(ms_local):.0f}")


if __name__ == "__main__":
    main()
