"""Validate the stochastic surrogates of the real tables (issue 37, item 4) and store their fits.

For each table (``--data``, default ``data/arlbench``), on the min-max scale of the benchmark:

1. **Held-out configurations**: ``--folds`` (5) random folds of the table's configurations; the
   surrogate is fitted (lengthscales included) on the other folds (80 %) and predicts each
   held-out configuration: Spearman correlation of the predicted mean, standard deviation and
   MV (alpha 1) with the table's sample mean, standard deviation (``ddof=1``) and sample MV of
   its seeds; and the share of held-out configurations whose seeds pass a two-sample
   Kolmogorov-Smirnov test (p >= 0.05) against ``--draws`` (2000) returns of the surrogate
   there (its own sampler, seeds ``0..draws-1``). Beside them, a reference that copies the
   nearest training configuration in the fitted metric instead of interpolating: the
   Spearman correlations of its table statistics, and the KS pass share against ``draws``
   returns of the surrogate at that configuration (the same test power: a two-sample test of
   50 against 50 real returns passes far more often whatever the distributions).
2. **Shape where it was fitted**: the share of the table's configurations whose seeds pass the
   KS test against the surrogate fitted on all of them, at their own encoding.
3. **Ground truth** of the surrogate fitted on all configurations (the benchmark's): ``MV*``
   at alpha 1, 3, 10 next to the table's best sample MV, the mean MV under uniform sampling of
   the space next to the table's average configuration, the share of uniform configurations
   within 1 % of the MV range of ``MV*``, and a check that no uniform point or table
   configuration beats ``MV*``.

``--write-fits`` stores the full fits (lengthscales, threshold, table hash) in
``DATA/surrogates.json`` (what :meth:`TableSurrogate.bundled` reads); ``--md PATH`` writes the
tables as Markdown.

    OPENBLAS_NUM_THREADS=1 PYTHONPATH=src nice python benchmarks/surrogate_validation.py \\
        --write-fits --md docs/results/surrogates/validation.md
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path

for _v in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_v, "1")

import numpy as np  # noqa: E402
from scipy import stats  # noqa: E402

from erahbo.datasets.loaders import load_task  # noqa: E402
from erahbo.datasets.tradeoff import near_optimal_share  # noqa: E402
from erahbo.experiments.replay import prepare_task  # noqa: E402
from erahbo.objectives.known_truth import SURROGATE_TABLES  # noqa: E402
from erahbo.objectives.surrogate import FITS_FILE, TableSurrogate  # noqa: E402

ALPHAS = (1.0, 3.0, 10.0)


def _spearman(a: np.ndarray, b: np.ndarray) -> float:
    return float(stats.spearmanr(a, b)[0])


def cross_validate(rt, folds: int, draws: int, seed: int = 0) -> dict[str, float]:
    """Held-out figures of one table (see the module docstring, item 1)."""
    R = rt.returns
    N = len(R)
    perm = np.random.default_rng(seed).permutation(N)
    pred = np.zeros((N, 2))  # predicted mean, sd
    ks, ks_nn = np.zeros(N), np.zeros(N)
    nn = np.zeros(N, dtype=int)
    configs = [rt.space.candidate_config(i) for i in range(N)]
    for te in np.array_split(perm, folds):
        tr = np.setdiff1d(perm, te)
        sur = TableSurrogate.from_table(rt, rows=tr)
        U = np.stack([sur.space.encode(configs[i]) for i in te])
        f, r2 = sur.f(U), sur.rho2(U)
        pred[te, 0], pred[te, 1] = f, np.sqrt(r2)
        nn[te] = tr[np.argmax(sur.model.logits(U), axis=1)]
        for i in te:
            ks[i] = stats.ks_2samp(R[i], sur.sample(configs[i], range(draws))).pvalue
            ks_nn[i] = stats.ks_2samp(R[i], sur.sample(configs[nn[i]], range(draws))).pvalue
    m, s = R.mean(1), R.std(1, ddof=1)
    mv = m - s**2
    return {"sp_mean": _spearman(pred[:, 0], m), "sp_std": _spearman(pred[:, 1], s),
            "sp_mv": _spearman(pred[:, 0] - pred[:, 1] ** 2, mv),
            "ks_pass": float(np.mean(ks >= 0.05)),
            "nn_sp_mean": _spearman(m[nn], m), "nn_sp_std": _spearman(s[nn], s),
            "nn_sp_mv": _spearman(mv[nn], mv), "nn_ks_pass": float(np.mean(ks_nn >= 0.05))}


def in_sample(rt, sur: TableSurrogate, draws: int) -> float:
    """KS pass share at the table's own configurations (item 2)."""
    p = [stats.ks_2samp(r, sur.sample(rt.space.candidate_config(i), range(draws))).pvalue
         for i, r in enumerate(rt.returns)]
    return float(np.mean(np.asarray(p) >= 0.05))


def truth(rt, sur: TableSurrogate) -> dict[str, float]:
    """Ground-truth figures of the full fit (item 3)."""
    out: dict[str, float] = {}
    R = rt.returns
    m, v = R.mean(1), R.var(1, ddof=1)
    U_table = sur.model.X
    for a in ALPHAS:
        star = sur.mv_max(a)
        uni = sur.uniform_mv(a)
        at_table = sur.mv(U_table, a)
        out.update({f"mv_star_{a:g}": star, f"table_mv_star_{a:g}": float((m - a * v).max()),
                    f"uniform_{a:g}": sur.mv_uniform_mean(a),
                    f"table_mean_{a:g}": float((m - a * v).mean()),
                    f"near_{a:g}": near_optimal_share(np.append(uni, star)),
                    f"excess_{a:g}": float(max(uni.max(), at_table.max()) - star)})
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, default=Path("data/arlbench"))
    ap.add_argument("--tables", default=",".join(SURROGATE_TABLES))
    ap.add_argument("--folds", type=int, default=5)
    ap.add_argument("--draws", type=int, default=2000)
    ap.add_argument("--write-fits", action="store_true")
    ap.add_argument("--md", type=Path, default=None)
    a = ap.parse_args(argv)
    fits_path = a.data / FITS_FILE
    fits = json.loads(fits_path.read_text()) if fits_path.is_file() else {}
    cv_rows, truth_rows = [], []
    for name in [t.strip() for t in a.tables.split(",") if t.strip()]:
        t0 = time.time()
        rt = prepare_task(load_task(a.data / f"{name}.parquet"), alpha=1.0,
                          outcome_processing="minmax")
        sur = TableSurrogate.from_table(rt)
        cv = cross_validate(rt, a.folds, a.draws)
        cv["in_sample_ks"] = in_sample(rt, sur, a.draws)
        tr = truth(rt, sur)
        shares = sur.model.C.sum(0) / sur.model.C.sum()
        cv_rows.append((name, rt.n_configs, cv))
        truth_rows.append((name, tr, shares, sur.meta))
        if a.write_fits:
            fits[name] = {k: sur.meta[k] for k in ("lengthscales", "threshold", "fit_loss",
                                                   "table_sha256", "outcome_processing",
                                                   "n_configs", "n_seeds")}
            fits_path.write_text(json.dumps(fits, indent=1, sort_keys=True) + "\n")
        print(f"{name}: {json.dumps({k: round(v, 3) for k, v in cv.items()})} "
              f"({time.time() - t0:.0f} s)", flush=True)
    md = _markdown(cv_rows, truth_rows, a)
    print(md)
    if a.md is not None:
        a.md.parent.mkdir(parents=True, exist_ok=True)
        a.md.write_text(md + "\n")
    return 0


def _markdown(cv_rows, truth_rows, a) -> str:
    lines = [f"Held-out configurations ({a.folds} folds: fit on 80 %, predict 20 %; KS: "
             f"{a.draws} surrogate draws vs the table's seeds, pass at p >= 0.05). "
             "Reference ('nearest'): copy the nearest training configuration in the fitted "
             "metric (its table statistics; KS: the surrogate's draws there).", "",
             "| table | configs | Spearman mean | std | MV (a=1) | KS pass | nearest: mean "
             "| std | MV | KS pass | KS pass, fitted configs |",
             "|---|---|---|---|---|---|---|---|---|---|---|"]
    for name, n, c in cv_rows:
        lines.append(f"| {name} | {n} | {c['sp_mean']:.2f} | {c['sp_std']:.2f} | "
                     f"{c['sp_mv']:.2f} | {c['ks_pass']:.2f} | {c['nn_sp_mean']:.2f} | "
                     f"{c['nn_sp_std']:.2f} | {c['nn_sp_mv']:.2f} | {c['nn_ks_pass']:.2f} | "
                     f"{c['in_sample_ks']:.2f} |")
    lines += ["", "Ground truth of the surrogates fitted on all configurations (min-max scale): "
              "MV* (the table's best sample MV), mean MV under uniform sampling (the table's "
              "average configuration), share of uniform configurations within 1 % of the MV "
              "range of MV*; 'excess': the largest MV of 65,536 uniform points and the table's "
              "configurations minus MV* (<= 0: none beats it).", "",
              "| table | alpha | MV* (table) | uniform mean (table) | near-optimal share | "
              "excess |", "|---|---|---|---|---|---|"]
    for name, tr, _, _ in truth_rows:
        for al in ALPHAS:
            k = f"{al:g}"
            lines.append(f"| {name} | {k} | {tr['mv_star_' + k]:.4f} "
                         f"({tr['table_mv_star_' + k]:.4f}) | {tr['uniform_' + k]:.4f} "
                         f"({tr['table_mean_' + k]:.4f}) | {tr['near_' + k]:.4f} | "
                         f"{tr['excess_' + k]:.1e} |")
    lines += ["", "The fits: threshold between the fail and the learn mode, share of the "
              "table's returns in (floor atom, fail, learn, cap atom), the lengthscales below "
              "1 (shorter: the hyperparameter matters more; 50 is the upper bound: "
              "irrelevant), leave-one-out loss (2: no better than a constant).", "",
              "| table | threshold | shares | lengthscales < 1 | LOO loss |",
              "|---|---|---|---|---|"]
    for name, _, shares, meta in truth_rows:
        short = ", ".join(f"{k} {v:.2f}" for k, v in sorted(meta["lengthscales"].items(),
                                                           key=lambda kv: kv[1]) if v < 1)
        lines.append(f"| {name} | {meta['threshold']:.3f} | "
                     f"{', '.join(f'{s:.2f}' for s in shares)} | {short} | "
                     f"{meta['fit_loss']:.3f} |")
    return "\n".join(lines)


if __name__ == "__main__":
    raise SystemExit(main())
