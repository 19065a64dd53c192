"""The default's models on TASK (benchmark repetition REP of set 0, its seeds) after N
runs: the mean GP's lengthscales, the evaluated configurations' sample means against the
posterior mean, and where the acquisition's best points lie.
usage: python gpstate.py TASK REP N"""
import sys
import numpy as np
from erahbo import Optimizer
from erahbo.objectives.known_truth import make_task
from erahbo.experiments.continuous import SeedStream, repetition_seed

task = make_task(sys.argv[1]); rep, N = int(sys.argv[2]), int(sys.argv[3]); sp = task.space
opt = Optimizer(sp, "erahbo", budget=200, seed=repetition_seed(task.name, 0, rep),
                initial_in_budget=True, alpha=1.0, **__import__("json").loads(__import__("os").environ.get("OPTS", "{}")))
stream = SeedStream(0, rep); used = 0
while used < N:
    t = opt.ask()
    if t is None: break
    ys = task.sample(t.config, [stream(s) for s in t.seeds]); opt.tell(t, ys); used += len(ys)
s = opt.model_settings
print("runs", used, "configs", opt.data.n)
print("mean GP lengthscales", np.round(s.hyper_f.lengthscales, 2), "kind", s.hyper_f.kind)
print("var GP lengthscales", np.round(s.hyper_v.lengthscales, 2), "noise", s.hyper_v.noise)
print("columns", [(h.name, h.col, h.width) for h in sp._hps])
rm = opt.round_model(); d = opt.data
mu, sd = rm.predict(d.U)[:2]; var = sd**2
f_true = np.array([task.f(sp.decode(u)) for u in d.U])
order = np.argsort(-d.ybar)[:8]
print("top sample means: k, ybar, posterior mean, sd, true f")
for i in order:
    print(f"  {int(d.k[i]):2d} {d.ybar[i]:.3f} {mu[i]:.3f} {np.sqrt(var[i]):.3f} {f_true[i]:.3f}")
print("ybar quantiles", np.quantile(d.ybar, [0, .5, .9, 1]).round(3), "posterior mean range", mu.min().round(3), mu.max().round(3))
R = sp.sample_unit(4000, np.random.default_rng(0))
a = rm.acquisition(R, opt.options.weight)
top = R[np.argsort(-a)[:50]]
m2, s2_ = rm.predict(top)[:2]; v2 = s2_**2
print("acq top 50 of 4000 uniform: posterior mean", m2.mean().round(3), "sd", np.sqrt(v2).mean().round(3),
      "| all: mean", rm.predict(R)[0].mean().round(3), "sd", rm.predict(R)[1].mean().round(3))
hf, hv = opt.fit_hyperparameters()
print("a fresh MAP fit now: mean GP lengthscales", np.round(hf.lengthscales, 2))
