"""The configurations with 5+ seeds after RUNS runs of the default study (replay): seeds, sample mean and variance, truth."""
import sys
from pathlib import Path
import numpy as np
sys.path.insert(0, str(Path(__file__).resolve().parents[4] / "benchmarks"))
from recommendation_probe import replay_until
from erahbo.experiments.continuous import task_truth
from erahbo.objectives.known_truth import make_task
name, alpha, s, runs = sys.argv[1], float(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
task = make_task(name); truth = task_truth(task, alpha)
star, norm = truth["mv_star"], truth["mv_star"] - truth["uniform_mv_mean"]
for rep in range(int(sys.argv[5])):
    opt = replay_until(task, "erahbo", alpha, s, rep, runs)
    d = opt.data
    cfgs = [opt.state.config(c, u) for c, u in zip(d.config_ids, d.U, strict=True)]
    reg = np.array([(star - task.mv(c, alpha)) / norm for c in cfgs])
    tf = np.array([task.mv(c, 0.0) for c in cfgs]); tv = tf - np.array([task.mv(c, 1.0) for c in cfgs])
    big = np.flatnonzero(np.asarray(d.k) >= 5)
    rec = opt.recommend(); rr = (star - task.mv(rec, alpha)) / norm
    print(f"rep {rep} rec regret {rr:.3f} best2 {reg[np.asarray(d.k) >= 2].min():.3f} |", "; ".join(
        f"k{int(d.k[i])} ybar {d.ybar[i]:.3f} s2 {d.s2[i]:.4f} f {tf[i]:.3f} var {tv[i]:.4f} reg {reg[i]:.2f}" for i in big))
