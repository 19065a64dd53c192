"""Scratch: replay one PPO MC study to N runs; dump configs near the recommendation."""
import sys
sys.path.insert(0, "/work/main/benchmarks")
import numpy as np
import recommendation_probe as rp
from erahbo import Optimizer
from erahbo.experiments.continuous import ContinuousSettings, SeedStream, repetition_seed, task_truth
from erahbo.experiments.measures import method_risk_options, without_risk_options
from erahbo.experiments.methods import parse_method
from erahbo.objectives.known_truth import make_task
from erahbo.optimizer.loop import drive

task_name, alpha, set_seed, rep, stop = sys.argv[1], float(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
task = make_task(task_name)
method = parse_method("erahbo")
settings = ContinuousSettings(budget=200, alpha=alpha, seed=set_seed)
stream = SeedStream(set_seed, rep)
opt = Optimizer(task.space, "erahbo", budget=200, seed=repetition_seed(task.name, set_seed, rep),
                initial_in_budget=True, **without_risk_options(method.options), **method_risk_options(method, settings))
runs = [0]
def evaluate(trial):
    return task.sample(trial.config, [stream(s) for s in trial.seeds])
def tell(trial, values):
    opt.tell(trial, values); runs[0] += len(values)
    if runs[0] >= stop: raise StopIteration
try:
    drive(opt, evaluate, tell, threads=False)
except StopIteration:
    pass
opt.recommend()
d = opt.data
row = d.config_ids.index(int(opt.incumbent_id))
rm = opt.round_model()
ls = np.asarray(rm.settings.hyper_f.lengthscales)
print("lengthscales", np.round(ls, 2))
D = np.sqrt((((d.U - d.U[row]) / ls) ** 2).sum(1))
order = np.argsort(D)
for i in order[:25]:
    r = np.asarray(d.returns[i])
    cfg = opt.data.config_ids[i]
    print(f"{i:3d} d={D[i]:.2f} k={d.k[i]:.0f} ybar={d.ybar[i]:.3f} s2={d.s2[i]:.4f} fail={np.sum(r<=0.05)} truef={task.f(task.space.decode(d.U[i])) if hasattr(task.space,'decode') else 0:.3f}")
allr = np.concatenate([np.asarray(x) for x in d.returns])
print("pooled runs", allr.size, "share<=0.05", np.mean(allr<=0.05), "configs all-fail", sum(np.all(np.asarray(x)<=0.05) for x in d.returns), "of", d.n)
