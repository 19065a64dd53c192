"""Scratch (session 50): per study of a continuous benchmark task, after 50 / 100 / 200 runs,
the mean GP's lengthscales (sorted), the configurations evaluated and those with two or more
seeds, the variance of the sample means, the largest sample variance, and the normalized regret
of the best configuration evaluated so far and of the recommendation.

usage (from the repository root): PYTHONPATH=src python
docs/results/one_seed_models/checkpoints_s50/ls_probe.py TASK METHOD ALPHA SET REPS, e.g.
``surr-dqn_cc_mountain_car erahbo 1 0 0,1`` (``erahbo-rs0``: the default of sessions 40-48)
"""
import sys
import numpy as np
from erahbo import Optimizer
from erahbo.experiments.continuous import ContinuousSettings, SeedStream, repetition_seed, task_truth
from erahbo.experiments.measures import method_risk_options, without_risk_options
from erahbo.experiments.methods import parse_method
from erahbo.objectives.known_truth import make_task
from erahbo.optimizer.loop import drive

task_name, method_name, alpha, set_seed = sys.argv[1], sys.argv[2], float(sys.argv[3]), int(sys.argv[4])
reps = [int(r) for r in sys.argv[5].split(",")]
task = make_task(task_name); method = parse_method(method_name)
settings = ContinuousSettings(budget=200, alpha=alpha, seed=set_seed)
truth = task_truth(task, alpha); star, norm = truth["mv_star"], truth["mv_star"] - truth["uniform_mv_mean"]
for rep in reps:
    stream = SeedStream(set_seed, rep)
    opt = Optimizer(task.space, "erahbo", budget=200, seed=repetition_seed(task.name, set_seed, rep),
                    initial_in_budget=True, **without_risk_options(method.options), **method_risk_options(method, settings))
    st = {"runs": 0, "best": -np.inf}
    def evaluate(trial, stream=stream):
        return task.sample(trial.config, [stream(s) for s in trial.seeds])
    def tell(trial, values, opt=opt, st=st):
        before = st["runs"]; opt.tell(trial, values); st["runs"] += len(values)
        st["best"] = max(st["best"], float(task.mv(trial.config, alpha)))
        for c in (50, 100, 200):
            if before < c <= st["runs"]:
                s = opt.models.settings; d = opt.data
                ls = np.round(np.sort(s.hyper_f.lengthscales), 3) if s is not None else None
                rec = opt.recommend(); reg = (star - float(task.mv(rec, alpha))) / norm
                print(f"rep {rep} @{c}: n {d.n} k>=2 {int((d.k >= 2).sum())} ls {ls} "
                      f"var(ybar) {np.var(d.ybar):.3g} max s2 {np.max(d.s2):.3g} best-eval-regret {(star - st['best']) / norm:.3f} rec-regret {reg:.3f}", flush=True)
    drive(opt, evaluate, tell, threads=False)
