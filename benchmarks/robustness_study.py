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

Run (one core; 1-5 s per study on this machine, the arlbench scenario about 1 min)::

    OPENBLAS_NUM_THREADS=1 PYTHONPATH=src python benchmarks/robustness_study.py \
        [--scenario outliers|failures|both] [--budget 200] [--seeds 0 1 2 3 4] \
        [--p 0.3] [--p-outlier 0.05] [--failures penalize|retry|exclude] [--set NAME=VALUE ...]
        [--outlier-scales 1e5]
    OPENBLAS_NUM_THREADS=1 PYTHONPATH=src python benchmarks/robustness_study.py \
        --scenario arlbench --budget 400 --reps 3

``--set`` passes extra options to ``erahbo.optimize`` (e.g. ``--set retries=3``);
``--outlier-scales inf`` turns the outlier rule off (the behaviour before issue 27).
``--scenario arlbench`` measures how close legitimate RL returns come to the outlier rule
(:func:`arlbench_scales`).
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings
from pathlib import Path

import numpy as np

import erahbo

sys.path.insert(0, str(Path(__file__).resolve().parent))
import readme_truth as rt  # its --set

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
    c = r.configs  # the best evaluated configuration with 2+ seeds: did the search find it?
    evaluated = ((c["x0"] - opt[0]) ** 2 + (c["x1"] - opt[1]) ** 2)[c["k"] >= 2]
    row["best2"] = float(evaluated.min()) if len(evaluated) else np.nan
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
    found = sum(r.get("best2", np.inf) <= NEAR for r in rows)
    out += ["", f"near the optimum (regret <= {NEAR}): {near}/{len(rows)}; estimate inside the "
            f"returns' range: {inside}/{len(rows)}; median regret {med:.4f}; a configuration "
            f"near the optimum evaluated with 2+ seeds: {found}/{len(rows)}", ""]
    return "\n".join(out)


def arlbench_scales(budget: int, reps: int, pools: int) -> str:
    """How far legitimate RL returns get from the outlier rule, on the stored ARLBench tables.

    Per table: ERAHBO replays (ask/tell on the raw stored returns, ``failures="penalize"``,
    ``reps`` x ``budget`` runs), each told return compared with the study's earlier returns as
    :mod:`erahbo.optimizer.outliers` does (flagged runs, and the largest distance from the median
    in scales: the margin to ``OUTLIER_SCALES``); then ``pools`` random pools of 2-19 stored
    returns and one more (the first trials of a study): the largest distance and the share
    beyond ``OUTLIER_SCALES``.
    """
    import glob

    from erahbo.datasets.loaders import load_task
    from erahbo.experiments.replay import SeedReplay, prepare_task
    from erahbo.experiments.runner import repetition_seed
    from erahbo.optimizer import outliers as out

    def distance(pool: list[float], v: float) -> float:
        center = out.return_scale(pool)
        return 0.0 if center is None else abs(v - center[0]) / center[1]

    lines = [f"**ARLBench returns against the outlier rule (OUTLIER_SCALES = "
             f"{out.OUTLIER_SCALES:.0e})**", "",
             f"| table | runs ({reps} x {budget}) | flagged | largest distance (scales) "
             f"| random pools: largest | beyond the rule |", "|---|---|---|---|---|---|"]
    for path in sorted(glob.glob("data/arlbench/*.parquet")):
        task = prepare_task(load_task(path), alpha=1.0, outcome_processing="none")
        n = flagged = 0
        worst = 0.0
        for rep in range(reps):
            draw = SeedReplay(task, 0, rep)
            opt = erahbo.Optimizer(task.space, "erahbo", budget=budget, alpha=1.0,
                                   seed=repetition_seed(task, 0, rep), failures="penalize")
            pool: list[float] = []
            while (trial := opt.ask()) is not None:
                cid = int(trial.config_id)
                start = draw._used[cid]
                draw.draw(cid, len(trial.seeds))
                vals = [float(v) for v in
                        task.returns[cid, draw._order[cid, start:start + len(trial.seeds)]]]
                for v in vals:
                    if np.isfinite(v):
                        n += 1
                        worst = max(worst, distance(pool, v))
                opt.tell(trial, vals)
                pool += [v for v in vals if np.isfinite(v)]
                if draw.remaining(cid) == 0:
                    opt.exclude(cid)
            errors = opt.result().history["error"].dropna().astype(str)
            flagged += int(errors.str.startswith(out.OUTLIER_PREFIX).sum())
        v = task.returns[np.isfinite(task.returns)]
        rng = np.random.default_rng(0)
        d = [distance(list(x[:-1]), x[-1]) for x in
             (rng.choice(v, m + 1, replace=False) for m in rng.integers(2, 20, pools))]
        name = path.split("/")[-1].removesuffix(".parquet")
        beyond = float(np.mean(np.asarray(d) > out.OUTLIER_SCALES))
        lines.append(f"| {name} | {n} | {flagged} | {worst:.3g} | {max(d):.3g} "
                     f"| {beyond:.2%} |")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--scenario", choices=["outliers", "failures", "both", "arlbench"],
                    default="both")
    ap.add_argument("--budget", type=int, default=200)
    ap.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2, 3, 4])
    ap.add_argument("--p", type=float, default=0.3, help="failure probability (failures)")
    ap.add_argument("--p-outlier", type=float, default=P_OUTLIER,
                    help="probability of a -1e6 return (outliers)")
    ap.add_argument("--failures", default=None, help="failure policy (default: optimize's)")
    rt.add_set_option(ap)
    ap.add_argument("--outlier-scales", type=float, default=None,
                    help="erahbo.optimizer.outliers.OUTLIER_SCALES for this run (inf: no screen)")
    ap.add_argument("--reps", type=int, default=3, help="replays per table (arlbench)")
    args = ap.parse_args(argv)
    if args.outlier_scales is not None:
        from erahbo.optimizer import outliers

        outliers.OUTLIER_SCALES = args.outlier_scales
    if args.scenario == "arlbench":
        print(arlbench_scales(args.budget, args.reps, pools=5000), flush=True)
        return
    options = rt.set_options(ap, args.set)
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
