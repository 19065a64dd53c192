"""Ablation of ``n_parallel``'s kriging believer: choose on the real data only instead.

Runs ``erahbo-p4`` and ``rahbo-k2-p4`` on the bundled synthetic suite (10 repetitions x 1000
runs) with the believer switched off (pending configurations are still never proposed twice),
then prints the IQM of the final normalized MV regret and of the cumulative regret (over the
initial design's regret) next to the same methods *with* the believer, from a study made by

    erahbo benchmark src/erahbo/data/synthetic --methods erahbo-p4,rahbo-k2-p4 \
        --repetitions 10 --budget 1000 --out results/parallel_study

Usage: ``python benchmarks/parallel_ablation.py [results/parallel_study]`` (about 4 min on one
core; set OMP_NUM_THREADS=1 on a busy machine).
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
from scipy import stats

from erahbo.analysis.traces import load_traces
from erahbo.datasets.loaders import bundled_tasks, load_tasks
from erahbo.experiments import StudySettings, parse_methods, prepare_task, run_study
from erahbo.optimizer import Optimizer

METHODS = ("erahbo-p4", "rahbo-k2-p4")


def final_and_cumulative(ts, method: str) -> tuple[np.ndarray, np.ndarray]:
    i = ts.methods.index(method)
    final = np.concatenate([ts.normalized_regret[t][i, :, -1] for t in ts.tasks])
    cum = np.concatenate([ts.cumulative_regret[t][i, :, -1] / ts.init_regret[t]
                          for t in ts.tasks])
    return final, cum


def main() -> None:
    with_believer = Path(sys.argv[1] if len(sys.argv) > 1 else "results/parallel_study")
    out = Path("results/parallel_ablation")
    Optimizer._believer_model = lambda self, rm: rm  # the ablation: no believed points
    tasks = [prepare_task(t) for t in load_tasks(bundled_tasks())]
    run_study(tasks, parse_methods(",".join(METHODS)), 10, StudySettings(budget=1000), out)
    a, b = load_traces(with_believer), load_traces(out)
    print("method | IQM final normalized regret (believer / real data only) | Wilcoxon p | "
          "IQM cumulative / initial regret | Wilcoxon p")
    for m in METHODS:
        (fa, ca), (fb, cb) = final_and_cumulative(a, m), final_and_cumulative(b, m)
        print(f"{m} | {stats.trim_mean(fa, 0.25):.4f} / {stats.trim_mean(fb, 0.25):.4f} | "
              f"{stats.wilcoxon(fa, fb).pvalue:.3g} | {stats.trim_mean(ca, 0.25):.1f} / "
              f"{stats.trim_mean(cb, 0.25):.1f} | {stats.wilcoxon(ca, cb).pvalue:.3g}")


if __name__ == "__main__":
    main()
