"""Scratch (session 55): are the default's well-sampled configurations' sample estimates biased?

For each repetition, replay the default to RUNS runs; for every configuration with 5+ seeds
compare its sample mean and variance with the truth, and with K fresh seeds of the same
configuration (seeds 10**6 + j, the same k): the fresh draws show what skew alone does, the
study's own draws what skew plus the study's choice of which configurations to keep running
does. Prints medians over configurations of (ybar - f) / sd and log(s2 / var).
    PYTHONPATH=src python heavy_bias.py TASK ALPHA SET RUNS REPS
"""
import sys

import numpy as np

from _replay import Truth, replay_until

name, alpha, s, runs, reps = sys.argv[1], float(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
truth = Truth(name, alpha)  # its regret scale is not needed here (never computed)
task = truth.task
own_m, own_v, fr_m, fr_v, ks = [], [], [], [], []
for rep in range(reps):
    opt = replay_until(task, "erahbo", alpha, s, rep, runs)
    d = opt.data
    for i in np.flatnonzero(np.asarray(d.k) >= 5):
        c = opt.state.config(d.config_ids[i], d.U[i])
        f, var = truth.f_var(c)
        k = int(d.k[i])
        sd = np.sqrt(max(var, 1e-12))
        own_m.append((d.ybar[i] - f) / sd); own_v.append(np.log(max(d.s2[i], 1e-12) / var))
        for j in range(20):
            y = np.asarray(task.sample(c, [10**6 + 1000 * j + t for t in range(k)]), float)
            fr_m.append((y.mean() - f) / sd); fr_v.append(np.log(max(y.var(ddof=1), 1e-12) / var))
        ks.append(k)
q = lambda x: f"{np.median(x):+.2f} (mean {np.mean(x):+.2f})"
print(f"{name} a{alpha:g}s{s} @{runs}: {len(ks)} configs with 5+ seeds (median k {np.median(ks):.0f}) | own: mean z {q(own_m)}, log s2/var {q(own_v)}, s2 < var in {np.mean(np.array(own_v) < 0):.2f} | fresh: mean z {q(fr_m)}, log s2/var {q(fr_v)}, s2 < var in {np.mean(np.array(fr_v) < 0):.2f}", flush=True)
