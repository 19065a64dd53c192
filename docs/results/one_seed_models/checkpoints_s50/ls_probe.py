"""Scratch (session 50): per study of a continuous benchmark task, after 50 / 100 / 200 runs,
the mean GP's lengthscales (sorted), the configurations evaluated and those with two or more
seeds, the variance of the sample means, the largest sample variance, and the normalized regret
of the best configuration evaluated so far and of the recommendation.

usage (from the repository root): PYTHONPATH=src python
docs/results/one_seed_models/checkpoints_s50/ls_probe.py TASK METHOD ALPHA SET REPS, e.g.
``surr-dqn_cc_mountain_car erahbo 1 0 0,1`` (``erahbo-rs0``: the default of sessions 40-48).
The study is replayed by ``benchmarks/recommendation_probe.replay`` (session 51).
"""
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[4] / "benchmarks"))
from recommendation_probe import replay  # noqa: E402

from erahbo.experiments.continuous import task_truth  # noqa: E402
from erahbo.objectives.known_truth import make_task  # noqa: E402

task_name, method_name, alpha, set_seed = sys.argv[1], sys.argv[2], float(sys.argv[3]), int(sys.argv[4])
reps = [int(r) for r in sys.argv[5].split(",")]
task = make_task(task_name)
truth = task_truth(task, alpha); star, norm = truth["mv_star"], truth["mv_star"] - truth["uniform_mv_mean"]
for rep in reps:
    st = {"best": -np.inf}

    def on_tell(opt, trial, before, after, st=st, rep=rep):
        st["best"] = max(st["best"], float(task.mv(trial.config, alpha)))
        for c in (50, 100, 200):
            if before < c <= after:
                s = opt.models.settings; d = opt.data
                ls = np.round(np.sort(s.hyper_f.lengthscales), 3) if s is not None else None
                rec = opt.recommend(); reg = (star - float(task.mv(rec, alpha))) / norm
                print(f"rep {rep} @{c}: n {d.n} k>=2 {int((d.k >= 2).sum())} ls {ls} "
                      f"var(ybar) {np.var(d.ybar):.3g} max s2 {np.max(d.s2):.3g} best-eval-regret {(star - st['best']) / norm:.3f} rec-regret {reg:.3f}", flush=True)

    replay(task, method_name, alpha, set_seed, rep, 200, None, on_tell)
