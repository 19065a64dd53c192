"""Heavy tails and frequent sporadic failures: does the default still find the MV optimum? (#27)

Two 2-D tasks on ``x0, x1 in [0, 1]``, ERAHBO with the defaults of :func:`erahbo.optimize`
(alpha 1), 5 seeds each; every random draw of a run is keyed by (configuration, seed), so a
retried run (new seed) gets new draws and the same (configuration, seed) always the same.

``outliers``
    ``return = -(x0 - 0.7)^2 - (x1 - 0.3)^2 + 0.05 z``, or ``-1e6`` with probability 0.05 (a
    diverging RL run), whatever the configuration. The divergence risk is the same everywhere,
    so the configurations are ranked by the clean part: its MV is
    ``-(x0 - 0.7)^2 - (x1 - 0.3)^2 - 0.0025``, optimum (0.7, 0.3).
``failures``
    ``return = -(x0 - 0.75)^2 - (x1 - 0.70)^2 + 0.05 z`` (noise std 0.05 everywhere), and the run
    raises with probability ``p`` (default 0.3) whatever the configuration. MV (alpha 1)
    ``= -(x0 - 0.75)^2 - (x1 - 0.70)^2 - 0.0025``, optimum (0.75, 0.70).

In both, the MV regret of a configuration is its squared distance to the optimum. A study ends
**near the optimum** when the regret of its recommended configuration (``Result.incumbent``) is
at most ``NEAR`` = 0.01 (within 0.1 of the optimum). Also printed per study: ``incumbent_mv``
(the optimizer's MV estimate of its recommendation) next to the range of the returns the study
counted (an outlying return counts at its bound, where there is one), and how many runs failed
(status other than ``ok``) or were counted at a bound (``error`` starts with ``outlier``).

Run (one core; about 15-40 s per study on this machine)::

    OPENBLAS_NUM_THREADS=1 PYTHONPATH=src python benchmarks/robustness_study.py \
        [--scenario outliers|failures|both] [--budget 200] [--seeds 0 1 2 3 4] \
        [--p 0.3] [--p-outlier 0.05] [--failures penalize|retry|exclude] [--set NAME=VALUE ...]

``--set`` passes extra options to ``erahbo.optimize`` (e.g. ``--set outliers=off``).
"""

from __future__ import annotations

import argparse
import json
import time
import warnings

import numpy as np

import erahbo

SPACE = {"x0": ("float", 0.0, 1.0), "x1": ("float", 0.0, 1.0)}
NEAR = 0.01  # MV regret of the recommendation (squared distance to the optimum)
OUTLIER = -1e6
P_OUTLIER = 0.05


def _rng(config: dict, seed: int) -> np.random.Generator:
    """Draws of one run, keyed by (configuration, seed)."""
    return np.random.default_rng(
        [int(seed), int(float(config["x0"]) * 2**40), int(float(config["x1"]) * 2**40)]
    )


class OutlierObjective:
    """Quadratic bowl at (0.7, 0.3), noise 0.05; -1e6 with probability ``p``."""

    def __init__(self, p: float = P_OUTLIER) -> None:
        self.p = p

    def __call__(self, config: dict, seed: int) -> float:
        rng = _rng(config, seed)
        diverged, z = rng.random() < self.p, rng.standard_normal()
        if diverged:
            return OUTLIER
        return -((config["x0"] - 0.7) ** 2) - (config["x1"] - 0.3) ** 2 + 0.05 * z


class FailingObjective:
    """Quadratic bowl at (0.75, 0.70), noise 0.05; raises with probability ``p``."""

    def __init__(self, p: float) -> None:
        self.p = p

    def __call__(self, config: dict, seed: int) -> float:
        rng = _rng(config, seed)
        failed, z = rng.random() < self.p, rng.standard_normal()
        if failed:
            raise RuntimeError("training diverged")
        return -((config["x0"] - 0.75) ** 2) - (config["x1"] - 0.70) ** 2 + 0.05 * z


SCENARIOS = {
    "outliers": ((0.7, 0.3), OutlierObjective),
    "failures": ((0.75, 0.70), FailingObjective),
}


def one_study(scenario: str, seed: int, budget: int, p: float, options: dict) -> dict:
    """One study (``p``: outlier or failure probability); what the user gets, how good it is."""
    opt, make = SCENARIOS[scenario]
    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        r = erahbo.optimize(make(p), SPACE, budget=budget, seed=seed, **options)
    h = r.history
    status = h["status"].astype(str)
    outlying = h["error"].fillna("").astype(str).str.startswith("outlier")
    ok = h.loc[status == "ok", "return"].to_numpy(float)  # as counted (outliers: bounded)
    row = {"seed": seed, "seconds": time.perf_counter() - t0,
           "failed": int((status != "ok").sum()), "outliers": int(outlying.sum()), "runs": len(h),
           "lo": float(ok.min()), "hi": float(ok.max())}
    if r.incumbent is None:
        return {**row, "x": None, "regret": np.nan, "mv": np.nan, "near": False,
                "inside": False}
    x = (float(r.incumbent["x0"]), float(r.incumbent["x1"]))
    regret = (x[0] - opt[0]) ** 2 + (x[1] - opt[1]) ** 2
    mv = float(r.incumbent_mv)
    return {**row, "x": x, "regret": regret, "mv": mv, "near": regret <= NEAR,
            "inside": bool(ok.min() <= mv <= ok.max())}


def table(rows: list[dict], title: str) -> str:
    """Markdown table of one scenario's studies, with the summary line."""
    out = [f"**{title}**", "",
           "| seed | recommended (x0, x1) | MV regret | near | incumbent_mv | returns counted "
           "| estimate inside | failed / outlier runs | s |",
           "|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        x = "none" if r["x"] is None else f"({r['x'][0]:.3f}, {r['x'][1]:.3f})"
        out.append(
            f"| {r['seed']} | {x} | {r['regret']:.4f} | {'yes' if r['near'] else 'no'} "
            f"| {r['mv']:.4g} | [{r['lo']:.3g}, {r['hi']:.3g}] "
            f"| {'yes' if r['inside'] else 'no'} | {r['failed']} / {r['outliers']} "
            f"| {r['seconds']:.0f} |"
        )
    near = sum(r["near"] for r in rows)
    inside = sum(r["inside"] for r in rows)
    med = float(np.nanmedian([r["regret"] for r in rows]))
    out += ["", f"near the optimum (regret <= {NEAR}): {near}/{len(rows)}; estimate inside the "
            f"returns' range: {inside}/{len(rows)}; median regret {med:.4f}", ""]
    return "\n".join(out)


def _value(text: str):
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return text


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--scenario", choices=["outliers", "failures", "both"], default="both")
    ap.add_argument("--budget", type=int, default=200)
    ap.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2, 3, 4])
    ap.add_argument("--p", type=float, default=0.3, help="failure probability (failures)")
    ap.add_argument("--p-outlier", type=float, default=P_OUTLIER,
                    help="probability of a -1e6 return (outliers)")
    ap.add_argument("--failures", default=None, help="failure policy (default: optimize's)")
    ap.add_argument("--set", nargs="*", default=[], metavar="NAME=VALUE",
                    help="extra options of erahbo.optimize (JSON values)")
    args = ap.parse_args(argv)
    options = {k: _value(v) for k, v in (s.split("=", 1) for s in args.set)}
    if args.failures is not None:
        options["failures"] = args.failures
    names = ["outliers", "failures"] if args.scenario == "both" else [args.scenario]
    opts = ", ".join(f"{k}={v!r}" for k, v in options.items()) or "defaults"
    for name in names:
        p = args.p if name == "failures" else args.p_outlier
        rows = [one_study(name, s, args.budget, p, options) for s in args.seeds]
        extra = f", p={p}"
        print(table(rows, f"{name}: budget {args.budget}{extra}, {opts}"), flush=True)


if __name__ == "__main__":
    main()
