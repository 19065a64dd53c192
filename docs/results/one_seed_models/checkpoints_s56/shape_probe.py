"""Scratch (session 56): the shape of the initial design's returns as a learn-or-fail detector.

After the 5 x 2 initial design (10 runs, set 0, 10 repetitions) of the default, per study:
``span``, the largest gap between the two seeds of one configuration over the range of all ten
returns (a configuration with one learner and one failure spans nearly the whole range), and
``bimod``, Sarle's bimodality coefficient of the ten returns ((g^2 + 1) / (kurtosis + 3 (n-1)^2
/ ((n-2)(n-3))); above 5/9 suggests two modes). From the repository root, PYTHONPATH=src:
    python shape_probe.py TASK[,TASK...]"""
import sys
from pathlib import Path

import numpy as np
from scipy.stats import kurtosis, skew

sys.path.insert(0, str(Path(__file__).resolve().parents[4] / "benchmarks"))
from erahbo.objectives.known_truth import make_task
from recommendation_probe import replay_until

for name in sys.argv[1].split(","):
    task = make_task(name)
    span, bim = [], []
    for rep in range(10):
        opt = replay_until(task, "erahbo", 1.0, 0, rep, 10)
        d = opt.data
        gaps = np.sqrt(2.0 * np.asarray(d.s2, float))  # two seeds: |y1 - y2| = sqrt(2 s^2)
        ybar = np.asarray(d.ybar, float)
        lo, hi = ybar - gaps / 2, ybar + gaps / 2
        allv = np.concatenate([lo, hi])  # the ten returns, rebuilt from each pair's mean and gap
        rng = allv.max() - allv.min()
        span.append(float(gaps.max() / rng) if rng > 0 else 0.0)
        n = len(allv)
        g, k = skew(allv), kurtosis(allv)
        bim.append(float((g ** 2 + 1) / (k + 3 * (n - 1) ** 2 / ((n - 2) * (n - 3)))))
    print(f"{name.replace('surr-', ''):32s} span median {np.median(span):.2f} "
          f"(min {min(span):.2f}) | bimod median {np.median(bim):.2f}, "
          f"> 5/9 in {sum(b > 5 / 9 for b in bim)} of 10",
          flush=True)
