import sys, numpy as np
from erahbo.objectives.known_truth import make_task
task = make_task(sys.argv[1]); sp = task.space
rng = np.random.default_rng(0); U = sp.sample_unit(20000, rng)
f = np.array([task.f(sp.decode(u)) for u in U])
top = U[np.argsort(-f)[:200]]
print("f quantiles", np.quantile(f,[.5,.9,.99,.999,1]).round(3))
for h in sp._hps:
    cols = slice(h.col, h.col+h.width)
    if h.width == 1:
        print(f"{h.name:24s} all mean {U[:,h.col].mean():.2f} | top200 mean {top[:,h.col].mean():.2f} sd {top[:,h.col].std():.2f}")
    else:
        print(f"{h.name:24s} cat shares top200", np.round(top[:,cols].mean(0),2))
