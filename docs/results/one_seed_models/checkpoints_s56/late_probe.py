"""Scratch (session 56): after RUNS runs of the default's replayed study, the recommendation's seeds
and regret, the truth's best among the evaluated configurations with 1+, 2+ and 5+ seeds, their
numbers, and the regret of the best posterior-mean MV among those with 2+ seeds and among all. From
the repository root, PYTHONPATH=src: python late_probe.py TASK ALPHA SET RUNS REP[,REP...]"""
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "checkpoints_s55"))
from _replay import Truth, replayed


def studies(argv: list[str]) -> Iterator[tuple[Truth, int, Any, list, np.ndarray, np.ndarray,
                                               int, Any, tuple, np.ndarray]]:
    """For ``TASK ALPHA SET RUNS REP[,REP...]``: per repetition ``(truth, rep, optimizer,
    configs, regrets (n,), seeds k (n,), the recommendation's row, the round model, its
    prediction (mf, sf, mv, sv) at the evaluated rows, the posterior variance (n,))``."""
    task_name, alpha, s, runs = argv[0], float(argv[1]), int(argv[2]), int(argv[3])
    tr = Truth(task_name, alpha)
    for rep, opt, cfgs, reg in replayed(tr, s, runs, [int(r) for r in argv[4].split(",")]):
        d = opt.data
        rm = opt.round_model()
        pred = rm.predict(np.asarray(d.U, float))
        var = np.exp(pred[2]) if rm.log_var else pred[2]
        yield (tr, rep, opt, cfgs, reg, np.asarray(d.k), d.config_ids.index(int(opt.incumbent_id)),
               rm, pred, var)


def main() -> None:
    print("rep k_rec reg_rec best_k1 best_k2 best_k5 n_cfg n_k2 n_k5 pm_k2 pm_all")
    for tr, rep, _, _, reg, k, row, _, (mf, *_), var in studies(sys.argv[1:]):
        pmv = mf - tr.alpha * var
        best = [reg[k >= m].min() if (k >= m).any() else np.nan for m in (1, 2, 5)]
        pick = [reg[int(np.argmax(np.where(k >= m, pmv, -np.inf)))] for m in (2, 1)]
        print(rep, int(k[row]), f"{reg[row]:.4f}", *(f"{b:.4f}" for b in best), len(k),
              int((k >= 2).sum()), int((k >= 5).sum()), *(f"{p:.4f}" for p in pick), flush=True)

if __name__ == "__main__":
    main()
