"""The early-stop part's curve model on the learning-curve tables (issue 39, item 4).

Linear regression (with its predictive sd) against isotonic regression with its in-sample
residual spread and with its out-of-fold spread (erahbo's
:class:`erahbo.optimizer.early_stop.CurveModel`), predicting a run's final return from its
return at a checkpoint. 60 draws per table: training on the runs of 2 seeds of 5, 10, 20 or
40 random configurations (what a study has completed), testing on 3 seeds of every other
configuration. Per checkpoint: RMSE, and the share of test runs whose final return exceeds
the prediction by more than 1 and 2 predictive sd (Gaussian: 0.159, 0.023; the share that
matters for early stopping: a run predicted worse than it ends). Prints Markdown tables.

    OPENBLAS_NUM_THREADS=1 PYTHONPATH=src python benchmarks/early_stop_curve_model.py
"""

from __future__ import annotations

import glob
import os

for _v in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_v, "1")

import numpy as np  # noqa: E402

from erahbo.experiments.partial_replay import prepare_curve_task  # noqa: E402
from erahbo.optimizer.early_stop import CurveModel, _isotonic, _predict  # noqa: E402

CHECKPOINTS = (0, 2, 5, 8)
MODELS = ("linear", "isotonic, in-sample sd", "isotonic, out-of-fold sd (erahbo)")


def _linear(x: np.ndarray, y: np.ndarray, xt: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """OLS prediction at ``xt`` and its predictive sd."""
    n = x.size
    X = np.c_[np.ones(n), x]
    b, *_ = np.linalg.lstsq(X, y, rcond=None)
    s2 = float(((y - X @ b) ** 2).sum()) / max(n - 2, 1)
    xb = x.mean()
    sxx = float(((x - xb) ** 2).sum()) + 1e-12
    return b[0] + b[1] * xt, np.sqrt(s2 * (1 + 1 / n + (xt - xb) ** 2 / sxx))


def table(path: str, draws: int = 60, seed: int = 0) -> list[str]:
    """Markdown lines for one table."""
    ct = prepare_curve_task(path, alpha=1.0)
    Y = ct.curves
    n, s, c_n = Y.shape
    rng = np.random.default_rng(seed)
    acc: dict[str, dict[int, list]] = {m: {c: [] for c in CHECKPOINTS} for m in MODELS}
    for _ in range(draws):
        tr = rng.choice(n, int(rng.choice([5, 10, 20, 40])), replace=False)
        te = np.setdiff1d(np.arange(n), tr)
        train = Y[tr][:, rng.choice(s, 2, replace=False), :].reshape(-1, c_n)
        train = train[np.isfinite(train).all(1)]
        test = Y[te][:, :3, :].reshape(-1, c_n)
        test = test[np.isfinite(test).all(1)]
        model = CurveModel.fit(train)
        for c in CHECKPOINTS:
            x, y, xt, yt = train[:, c], train[:, -1], test[:, c], test[:, -1]
            pred, sd = _linear(x, y, xt)
            acc[MODELS[0]][c].append((yt - pred, sd))
            knots = _isotonic(x, y)
            inside = float(np.sqrt(np.mean((y - _predict(knots, x)) ** 2)))
            acc[MODELS[1]][c].append((yt - _predict(knots, xt), np.full(xt.size, inside)))
            pm = np.array([model.predict(c, v)[0] for v in xt])
            acc[MODELS[2]][c].append((yt - pm, np.full(xt.size, float(model.sd[c]))))
    head = " | ".join(f"{int(ct.steps[c]) // 1000}k steps" for c in CHECKPOINTS)
    lines = [f"{ct.name} (RMSE / share above +1 sd / above +2 sd; sd of a final return over "
             f"all runs {np.nanstd(Y[:, :, -1]):.3f}):", "", f"| model | {head} |",
             "|---|" + "---|" * len(CHECKPOINTS)]
    for name, per in acc.items():
        cells = []
        for lst in per.values():
            e = np.concatenate([a for a, _ in lst])
            z = e / np.maximum(np.concatenate([b for _, b in lst]), 1e-12)
            cells.append(f"{np.sqrt(np.mean(e ** 2)):.3f} / {np.mean(z > 1):.3f} / "
                         f"{np.mean(z > 2):.3f}")
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    return [*lines, ""]


def main() -> int:
    for path in sorted(glob.glob("data/arlbench_curves/*.parquet")):
        print("\n".join(table(path)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
