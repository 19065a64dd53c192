"""Issue 27's 300 ms round at n = 2000: how much of the exact polish's gain do cheaper ones keep?

On the state of ``bench_long_study.py`` (continuous 6-D, ERAHBO, 512 raw samples, 5 polishes),
each round's acquisition argmax (:func:`erahbo.gp.continuous_argmax`) runs with these polishes:

* ``exact``: the ascent on the round model itself (the engine below
  :data:`erahbo.gp.argmax.SINGLE_ROWS` data rows);
* ``single``: on single-precision copies of its factors (:class:`erahbo.gp.single.SingleRound`,
  the engine from ``SINGLE_ROWS`` rows on);
* ``local``: on an exact GP of the ``--m`` evaluated rows nearest to each start (in the mean
  GP's scaled distance; same hyperparameters; not used by erahbo);
* ``none``: no polish (the best raw sample).

The end points are always projected and scored by the full model.  Printed per round and in
summary: the share of the exact polish's gain in acquisition value, ``(v - v_none) /
(v_exact - v_none)``, each polish keeps, and the argmax's CPU milliseconds.

``--follow MODE`` runs a study instead of the fixed state: from the state's first ``n`` rows,
each round's next row is the point MODE's argmax chose, evaluated with 3 seeds of the task
(seeded draws), so the rounds see the data the engine made; the MV regret (the task's known
optimum) of each mode's point is printed too.

    OPENBLAS_NUM_THREADS=1 python benchmarks/local_polish_probe.py [--n 2000] [--m 512]
        [--rounds 6] [--modes exact single local none] [--follow single] [--seed 0]
        [--ftol 3e-7]
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

import bench_long_study as bench
import erahbo.gp.argmax as argmax_module
import erahbo.gp.single as single_module
from erahbo.gp import FastModel, continuous_argmax, fit_hyperparameters
from erahbo.gp.reference import ReferenceRound
from erahbo.objectives.synthetic import RandomHeteroscedasticTask
from erahbo.space import SearchSpace


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--n", type=int, default=2000, help="evaluated configurations")
    ap.add_argument("--m", type=int, default=512, help="rows of each local GP")
    ap.add_argument("--rounds", type=int, default=6)
    ap.add_argument("--modes", nargs="+", default=["exact", "single", "local", "none"],
                    choices=["exact", "single", "local", "none"])
    ap.add_argument("--follow", choices=["exact", "single"],
                    help="the next row is this mode's point, evaluated (a study)")
    ap.add_argument("--seed", type=int, default=0, help="seed of the study state")
    ap.add_argument("--ftol", type=float, help="the single mode's POLISH_FTOL (default: erahbo's)")
    args = ap.parse_args()
    if args.ftol is not None:
        single_module.POLISH_FTOL = args.ftol
    modes = ["exact", "none"] + [m for m in args.modes if m not in ("exact", "none")]
    if args.follow and args.follow not in modes:
        modes.append(args.follow)
    X, ybar, s2, k = bench.study_state(args.n + args.rounds, seed=args.seed)
    task = RandomHeteroscedasticTask(dim=bench.DIM, seed=0)  # the state's task
    mv_max = task.mv_max(bench.ALPHA)
    st = fit_hyperparameters(X[:300], ybar[:300], s2[:300], k[:300], seed=0)
    space = SearchSpace({f"x{i}": ("float", 0.0, 1.0) for i in range(bench.DIM)})
    fm = FastModel(st, None)
    engine_polish, engine_rows = argmax_module.polish_all, argmax_module.SINGLE_ROWS
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

    setups = {  # mode -> (polish_all, SINGLE_ROWS)
        "exact": (engine_polish, 10**9), "single": (engine_polish, 0),
        "local": (local_polish_all, 10**9), "none": (no_polish, 10**9),
    }

    def argmax(rm, m, r, mode):
        argmax_module.polish_all, argmax_module.SINGLE_ROWS = setups[mode]
        try:
            t = time.process_time()
            u, v = continuous_argmax(rm, space, bench.ALPHA, X[:m], seed=r,
                                     raw_samples=bench.RAW, n_polish=bench.N_POLISH)
            return u, v, 1e3 * (time.process_time() - t)
        finally:
            argmax_module.polish_all, argmax_module.SINGLE_ROWS = engine_polish, engine_rows

    kept = {mode: [] for mode in modes[2:]}
    ms = {mode: [] for mode in modes}
    regret = {mode: [] for mode in modes}
    for r in range(args.rounds):
        m = args.n + r
        rm = fm.round(X[:m], ybar[:m], s2[:m], k[:m])
        data.update(X=X[:m], ybar=ybar[:m], s2=s2[:m], k=k[:m])
        res = {mode: argmax(rm, m, r, mode) for mode in modes}
        ve, vn = res["exact"][1], res["none"][1]
        line = {"round": r, "exact": ve, "none": vn}
        for mode in modes:
            ms[mode].append(res[mode][2])
            if mode in kept:
                kept[mode].append((res[mode][1] - vn) / max(ve - vn, 1e-12))
                line[mode] = res[mode][1]
                line[mode + "_dist"] = float(np.linalg.norm(res[mode][0] - res["exact"][0]))
        line["ms"] = {mode: round(ms[mode][-1], 1) for mode in modes}
        if args.follow:
            for mode in modes:
                regret[mode].append(mv_max - float(task.mv(res[mode][0], bench.ALPHA)))
            line["regret"] = {mode: regret[mode][-1] for mode in modes}
            x = res[args.follow][0]  # the next row: 3 seeds at the chosen point
            rng = np.random.default_rng(1000 + r)
            y = task.f(x) + math.sqrt(task.rho2(x)) * rng.standard_normal(3)
            X[m], ybar[m], s2[m], k[m] = x, y.mean(), y.var(ddof=1), 3.0
        print(json.dumps(line), flush=True)
    for mode in modes:
        share = (f"share of the exact polish's gain kept {np.round(kept[mode], 3).tolist()} "
                 f"(min {min(kept[mode]):.6f}); " if mode in kept else "")
        local = f" ({args.m} rows)" if mode == "local" else ""
        mv = (f"; MV regret of its points mean {np.mean(regret[mode]):.4g} median "
              f"{np.median(regret[mode]):.4g}" if args.follow else "")
        print(f"n={args.n} {mode}{local}: {share}argmax ms median {np.median(ms[mode]):.0f}{mv}")


if __name__ == "__main__":
    main()
