"""Scratch (session 52): configurations, seeds and failures of studies after RUNS runs.
usage (from the repository root): PYTHONPATH=src python
docs/results/one_seed_models/checkpoints_s52/count.py TASK ALPHA SET RUNS METHOD REP...
(floor: a return <= 0.05 on the min-max scale)."""
import sys
from pathlib import Path
import numpy as np
sys.path.insert(0, str(Path(__file__).resolve().parents[4] / "benchmarks"))
from recommendation_probe import replay
from erahbo.objectives.known_truth import make_task
task_name, alpha, set_seed, stop, method = sys.argv[1], float(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
task = make_task(task_name)
class Done(Exception):
    pass
def on_tell(opt, trial, before, after):
    if after >= stop:
        raise Done(opt)
for rep in map(int, sys.argv[6:]):
    try:
        replay(task, method, alpha, set_seed, rep, 200, None, on_tell)
    except Done as done:
        opt = done.args[0]
    d = opt.data
    k = np.asarray(d.k)
    r = [np.asarray(x) for x in d.returns]
    fails = sum(int((x <= 0.05).sum()) for x in r)
    truemv = [task.f(task.space.decode(u)) for u in d.U]
    print(f"rep {rep}: configs {d.n} one-seed {int((k==1).sum())} max k {int(k.max())} k>=5 {int((k>=5).sum())} runs at floor {fails} best true f {max(truemv):.3f}")
