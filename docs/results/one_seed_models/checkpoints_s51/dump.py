"""Scratch (session 51): replay one benchmark study (``benchmarks/recommendation_probe.replay_until``)
to RUNS runs and print the configurations nearest its recommendation in the mean GP's
lengthscales: seeds, sample mean and variance, runs at the floor (return <= 0.05 on the
min-max scale), and the true mean.

usage (from the repository root): PYTHONPATH=src python
docs/results/one_seed_models/checkpoints_s51/dump.py TASK ALPHA SET REP RUNS [METHOD]
"""
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[4] / "benchmarks"))
from recommendation_probe import replay_until  # noqa: E402

from erahbo.objectives.known_truth import make_task  # noqa: E402

task_name, alpha, set_seed, rep, stop = sys.argv[1], float(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
method = sys.argv[6] if len(sys.argv) > 6 else "erahbo"
task = make_task(task_name)

opt = replay_until(task, method, alpha, set_seed, rep, stop)
opt.recommend()
d = opt.data
row = d.config_ids.index(int(opt.incumbent_id))
ls = np.asarray(opt.round_model().settings.hyper_f.lengthscales)
print("lengthscales", np.round(ls, 2))
D = np.sqrt((((d.U - d.U[row]) / ls) ** 2).sum(1))
for i in np.argsort(D)[:25]:
    r = np.asarray(d.returns[i])
    print(f"{i:3d} d={D[i]:.2f} k={d.k[i]:.0f} ybar={d.ybar[i]:.3f} s2={d.s2[i]:.4f} "
          f"fail={np.sum(r <= 0.05)} truef={task.f(task.space.decode(d.U[i])):.3f}")
allr = np.concatenate([np.asarray(x) for x in d.returns])
print("pooled runs", allr.size, "share<=0.05", np.mean(allr <= 0.05), "configs all-fail",
      sum(np.all(np.asarray(x) <= 0.05) for x in d.returns), "of", d.n)
