"""Re-selection on a finite table with unlimited seeds (issue 15, item 3).

A live objective on a 2048-row, 6-D candidate table (Sobol rows of a smooth function whose
noise depends on x; every seed is a new draw, so a configuration can be run without end),
driven through :class:`erahbo.Optimizer` ask/tell for ``--asks`` training runs. Without a cap a
re-selected configuration pools more and more seeds and exploration stops; with ``max_seeds``
(default ``k_max``) it cannot collect more than that, but for ERAHBO's ``pool_share`` (default
0.25 of all runs, which may go beyond the cap to tell the best configurations apart), and the
search moves on.

    python benchmarks/reselection.py                 # 3000 runs, the table below
    python benchmarks/reselection.py --asks 1000     # quicker
    python benchmarks/reselection.py --cases pool --reps 5   # ERAHBO's cap variants
    python benchmarks/reselection.py --cases random --reps 10 --asks 1000  # random_interleave
    python benchmarks/reselection.py --cases challengers --reps 10 --asks 1000  # challengers
    python benchmarks/reselection.py --cases top --reps 10 --asks 1000  # random_top

Prints, per method and cap: distinct configurations evaluated, most seeds on one
configuration, true MV regret of the recommendation and wall time.
"""

from __future__ import annotations

import argparse
import os
import time

for _v in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_v, "1")

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

DIM, ROWS = 6, 2048


def table(seed: int = 0) -> pd.DataFrame:
    """``(ROWS, DIM)`` Sobol rows in the unit cube."""
    from scipy.stats import qmc

    X = qmc.Sobol(DIM, scramble=True, seed=seed).random(ROWS)
    return pd.DataFrame(X, columns=[f"x{j}" for j in range(DIM)])


def mean_sd(X: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """True mean ``(n,)`` and seed-to-seed standard deviation ``(n,)`` of rows ``(n, DIM)``."""
    c = np.linspace(0.3, 0.7, DIM)
    mean = np.exp(-4.0 * ((X - c) ** 2).sum(axis=1))
    sd = 0.05 + 0.3 * X[:, 0] * X[:, 1]
    return mean, sd


def objective(config: dict, seed: int) -> float:
    x = np.array([[config[f"x{j}"] for j in range(DIM)]])
    m, s = mean_sd(x)
    return float(m[0] + s[0] * np.random.default_rng(seed).standard_normal())


def run(method: str, asks: int, alpha: float, seed: int = 0, **opts) -> dict:
    import erahbo

    df = table()
    t0 = time.perf_counter()
    opt = erahbo.Optimizer(df, method, budget=asks, seed=seed, alpha=alpha, **opts)
    while (trial := opt.ask()) is not None:
        opt.tell(trial, [objective(trial.config, s) for s in trial.seeds])
    res = opt.result()
    m, s = mean_sd(df.to_numpy())
    mv = m - alpha * s**2
    inc = int(res.incumbent_id)
    per_config = res.history.groupby("config_id").size()
    return {"distinct": int(per_config.size), "max seeds": int(per_config.max()),
            "regret": float(mv.max() - mv[inc]), "runs": int(res.n_evals),
            "wall s": time.perf_counter() - t0}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--asks", type=int, default=3000)
    ap.add_argument("--alpha", type=float, default=1.0)
    ap.add_argument("--reps", type=int, default=1, help="optimizer seeds 0..reps-1 (the "
                    "table and the objective stay the same); the table shows means")
    ap.add_argument("--cases", default="default", help="'default': ERAHBO, GP-UCB k=2 and "
                    "RAHBO k=2 with the default cap and without; 'pool': ERAHBO's cap "
                    "variants (strict, pool_share 0.1 / 0.25, no cap, no cap + refit_growth 2, "
                    "pool 0.25 + seed_share 0.1); 'random': ERAHBO with random_interleave 0 / 50 / "
                    "100 and RAHBO k=2; 'challengers': ERAHBO with challengers on (the "
                    "default) and off, and RAHBO k=2; 'top': ERAHBO's random rounds from the best "
                    "tenth by the acquisition (the default) and uniform, and RAHBO k=2")
    ap.add_argument("--only", type=int, default=None, help="run only case number N (0-based)")
    args = ap.parse_args()
    if args.cases == "pool":
        cases = [("erahbo", {"pool_share": 0.0}, "k_max, strict"),
                 ("erahbo", {"pool_share": 0.1}, "k_max, pool 0.1"),
                 ("erahbo", {"pool_share": 0.25}, "k_max, pool 0.25 (default)"),
                 ("erahbo", {"max_seeds": 0}, "none"),
                 ("erahbo", {"max_seeds": 0, "refit_growth": 2.0}, "none, refit_growth 2"),
                 ("erahbo", {"pool_share": 0.25, "seed_share": 0.1},
                  "k_max, pool 0.25, seed_share 0.1")]
    elif args.cases == "challengers":  # challenger rounds: the default, off (session 12)
        cases = [("erahbo", {"challengers": c}, "default") for c in (True, False)] + [
            ("rahbo", {"k": 2}, "default")]
    elif args.cases == "top":  # random rounds: the best tenth (default), uniform (session 13)
        cases = [("erahbo", {"random_top": q}, "default") for q in (0.1, 1.0)] + [
            ("rahbo", {"k": 2}, "default")]
    elif args.cases == "random":  # random_interleave: none, the default 50, 100
        cases = [("erahbo", {"random_interleave": n}, "default")
                 for n in (0, 50, 100)] + [("rahbo", {"k": 2}, "default")]
    else:
        cases = [(m, {**o, **c}, cap) for m, o in (("erahbo", {}), ("gpucb", {"k": 2}),
                                                  ("rahbo", {"k": 2}),
                                                  ("rahbo", {"k": 2, "refit_every": 10}))
                 for c, cap in (({}, "default"), ({"max_seeds": 0}, "none"))]
    if args.only is not None:
        cases = [cases[args.only]]
    rows = []
    for method, opts, cap in cases:
        name = method + "".join(f" {k}={v}" for k, v in opts.items()
                                if k not in ("max_seeds", "pool_share", "seed_share"))
        for rep in range(args.reps):
            r = run(method, args.asks, args.alpha, seed=rep, **opts)
            rows.append({"method": name, "cap": cap, "rep": rep, **r})
            print(rows[-1], flush=True)
    table = pd.DataFrame(rows).drop(columns="rep").groupby(["method", "cap"], sort=False).mean()
    print(table.round(4).to_string())


if __name__ == "__main__":
    main()
