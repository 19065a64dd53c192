"""Where a tail measure's regret comes from (issue 40, item 2): the model family or the data.

Two checks, on the real tables (returns min-max scaled per table, as in
``benchmarks/risk_benchmark.py``; truth: the sample measure of each configuration's 50 stored
seeds, :meth:`erahbo.risk.RiskMeasure.truth`):

* ``--family``: the configuration a Gaussian location-scale model would choose if it knew
  each configuration's mean and standard deviation exactly (those of its 50 seeds), scored in
  the truth: normalized regret ``(truth* - truth(argmax value(mean, var))) / (truth* - mean
  truth)``. Zero on a table means that the Gaussian family ranks its optimum first: a skewed
  family could not gain there, only better estimates of the two moments could. The same with
  the lower semi-deviation (``2 * mean((y - mean)_-^2)``, ddof 1) in place of the variance.
* ``--traces DIR``: from the traces of a risk-benchmark study (``DIR/<risk>-q<q>-set<s>``),
  IQM over tables x repetitions of the normalized regret after ``--runs`` runs of the
  recommendation (``rec``), of the best configuration among those with at least ``ceil(1/q)``
  seeds by then (``replicated``: a perfect recommender that reads only well-sampled
  configurations) and of the best configuration evaluated at all (``found``): the search
  finds what ``found`` says, the stopping rule replicates what ``replicated`` says, the
  recommender keeps what ``rec`` says.

    python benchmarks/risk_tail_check.py --family --q 0.1,0.25
    python benchmarks/risk_tail_check.py --traces results/risk/b500 --q 0.1 --seed 0 --runs 200
"""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from erahbo.analysis.intervals import iqm
from erahbo.datasets.loaders import expand_paths, load_task
from erahbo.experiments import prepare_task
from erahbo.risk import MEASURES


def tasks(data: list[str], measure):
    """``{name: ReplayTask}`` of the tables scored in ``measure`` (min-max returns), leaving
    out the tables where every configuration has the same truth."""
    out = {}
    for p in expand_paths([Path(d) for d in data]):
        t = prepare_task(load_task(p), outcome_processing="minmax", measure=measure)
        truth = np.asarray(t.mv, dtype=float)
        if truth.max() - truth.mean() > 1e-12:
            out[t.name] = t
    return out


def family(data: list[str], risk: str, q: float) -> list[str]:
    """One line per table: the regret of the Gaussian family's choice with exact moments."""
    m = MEASURES[risk](q=q)
    lines = []
    for name, t in tasks(data, m).items():
        truth = np.asarray(t.mv, dtype=float)  # (N,)
        r = np.asarray(t.returns, dtype=float)  # (N, S)
        mean, var = r.mean(axis=1), r.var(axis=1, ddof=1)
        down = 2.0 * (np.minimum(r - mean[:, None], 0.0) ** 2).sum(axis=1) / (r.shape[1] - 1)
        span = truth.max() - truth.mean()
        cells = [f"{label} {(truth.max() - truth[np.argmax(m.value(mean, v))]) / span:.3f}"
                 for label, v in (("variance", var), ("semi-deviation", down))]
        lines.append(f"{m.label} {name:32s} " + "  ".join(cells))
    return lines


def traces(where: Path, data: list[str], risk: str, q: float, method: str, runs: int) -> str:
    """IQM of the recommendation's, the best replicated and the best evaluated regret."""
    from erahbo.experiments.traces import find_trace_files, read_trace

    m = MEASURES[risk](q=q)
    by_name = tasks(data, m)
    need = math.ceil(1.0 / q - 1e-9)
    rec, rep, found = [], [], []
    for path in find_trace_files(where):
        if Path(path).parent.name != method:
            continue
        trace, meta = read_trace(path)
        t = by_name.get(meta["task"])
        if t is None:
            continue
        truth = np.asarray(t.mv, dtype=float)
        span = truth.max() - truth.mean()
        d = trace[trace["run"] <= runs]
        counts = d["config_id"].value_counts()
        inc = int(d["incumbent_id"].iloc[-1])
        well = counts.index[counts >= need].to_numpy()
        rec.append((truth.max() - truth[inc]) / span)
        rep.append((truth.max() - truth[well].max()) / span if well.size else 1.0)
        found.append((truth.max() - truth[counts.index.to_numpy()].max()) / span)
    return (f"{m.label} {method} after {runs} runs ({len(rec)} studies): IQM regret of the "
            f"recommendation {iqm(np.array(rec)):.4f}, of the best with >= {need} seeds "
            f"{iqm(np.array(rep)):.4f}, of the best evaluated {iqm(np.array(found)):.4f}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", nargs="*", default=["data/arlbench"])
    ap.add_argument("--risk", default="cvar", choices=("cvar", "quantile"))
    ap.add_argument("--q", default="0.1,0.25", help="shares of worst seeds, comma-separated")
    ap.add_argument("--family", action="store_true", help="the family check")
    ap.add_argument("--traces", type=Path, default=None, help="a risk-benchmark --out")
    ap.add_argument("--seed", type=int, default=0, help="--traces: the repetition set")
    ap.add_argument("--method", default=None, help="--traces: default erahbo-<risk>")
    ap.add_argument("--runs", type=int, default=500, help="--traces: after this many runs")
    args = ap.parse_args()
    for q in (float(x) for x in args.q.split(",") if x.strip()):
        if args.family:
            print("\n".join(family(args.data, args.risk, q)))
        if args.traces is not None:
            where = args.traces / f"{args.risk}-q{q:g}-set{args.seed}"
            print(traces(where, args.data, args.risk, q, args.method or f"erahbo-{args.risk}",
                         args.runs))


if __name__ == "__main__":
    main()
