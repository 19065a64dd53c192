"""Scratch (session 55): after the 5 x 2 initial design (10 runs, set 0, 10 repetitions), in how many
studies a configuration's two seeds tie exactly (an atom: a floor or a ceiling) and in how many the
spread gate (`one_seed_in_force`) opens. From the repository root, PYTHONPATH=src:
    python ties_probe.py ALPHA TASK[,TASK...]"""
import sys
import numpy as np
from _replay import replay_until
from erahbo.objectives.known_truth import make_task
from erahbo.gp.round import one_seed_in_force
for name in sys.argv[2].split(","):
    task = make_task(name); alpha = float(sys.argv[1]); out = []
    for rep in range(10):
        opt = replay_until(task, "erahbo", alpha, 0, rep, 10)
        d = opt.data
        ties = int(np.sum(np.asarray(d.s2) <= 1e-12 * max(1.0, float(np.var(d.ybar)))))
        out.append((ties, one_seed_in_force(d.ybar, d.s2, d.k, alpha)))
    print(name, alpha, "studies with a tie:", sum(t > 0 for t, _ in out), "gate:", sum(g for _, g in out), "both:", sum((t > 0) and g for t, g in out), "mean ties", np.mean([t for t, _ in out]))
