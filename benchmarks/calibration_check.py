"""Are the models' bounds calibrated? The README example against its known truth (issue 37).

Runs the README's example study (budget 200, alpha 1, the README's settings) for each seed and,
at the end, compares the round model's posterior at every evaluated configuration with the
known truth: the share of configurations whose true mean ``f`` (and true seed variance
``rho^2``; ``log rho^2`` under ``var_noise="log"``) lies above the upper / below the lower
bound at ``beta`` (1.58 standard deviations at
the recommender's ``beta = 2.5``: 5.7 % per side if calibrated), by the configuration's seeds.

    python benchmarks/calibration_check.py --seeds 0 1 2 3 4 5 6 7 8 9 [--set name=value ...]
"""

from __future__ import annotations

import os

for _v in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_v, "1")

import argparse  # noqa: E402
import math  # noqa: E402
import sys  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

import erahbo  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
import readme_truth as rt  # noqa: E402


def one_study(seed: int, options: dict) -> pd.DataFrame:
    """``(configs,)`` rows: seeds, standardized errors of the posterior ``f`` and ``rho^2``."""
    settings = {"method": "erahbo", "budget": 200, "alpha": 1.0, "beta": 2.5, "k_min": 1,
                "k_max": 20, **options}
    opt = erahbo.Optimizer(erahbo.SearchSpace(rt.SPACE), seed=seed, **settings)
    while (t := opt.ask()) is not None:
        opt.tell(t, [rt.objective(t.config, s) for s in t.seeds])
    rm = opt.round_model()
    mf, sf, mv, sv = rm.predict(opt.data.U)
    c = opt.result().configs
    f = rt.true_mv(c["lr"].to_numpy(float), c["batch"].to_numpy(float),
                   c["act"].to_numpy(str), 0.0)  # alpha 0: the mean
    var = (0.1 + c["batch"].to_numpy(float) / 512.0) ** 2
    if rm.log_var:  # var_noise="log": the variance GP's posterior is of log rho^2
        var = np.log(var)
    return pd.DataFrame({"k": c["k"].to_numpy(), "zf": (f - mf) / np.maximum(sf, 1e-12),
                         "zv": (var - mv) / np.maximum(sv, 1e-12)})


def main(argv: list[str] | None = None) -> pd.DataFrame:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, nargs="+", default=list(range(10)))
    ap.add_argument("--beta", type=float, default=2.5, help="the bounds' beta (sqrt: sds)")
    rt.add_set_option(ap)
    a = ap.parse_args(argv)
    options = rt.set_options(ap, a.set)
    rows = pd.concat([one_study(s, options) for s in a.seeds], ignore_index=True)
    z = math.sqrt(a.beta)
    rows["seeds"] = pd.cut(rows["k"], [0, 1, 2, 4, 9, 10**6],
                           labels=["1", "2", "3-4", "5-9", "10+"])
    table = rows.groupby("seeds", observed=True).agg(
        n=("k", "size"),
        f_above_ucb=("zf", lambda s: (s > z).mean()), f_below_lcb=("zf", lambda s: (s < -z).mean()),
        var_above_ucb=("zv", lambda s: (s > z).mean()),
        var_below_lcb=("zv", lambda s: (s < -z).mean())).round(3)
    print(f"README example, budget 200, seeds {a.seeds}, options {options or 'default'}; "
          f"share of configurations outside the bounds at beta {a.beta} "
          f"(calibrated: {1 - 0.5 * math.erfc(-z / math.sqrt(2)):.3f} per side)")
    print(table.to_string())
    return table


if __name__ == "__main__":
    main()
