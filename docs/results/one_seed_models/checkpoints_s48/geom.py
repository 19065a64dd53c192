"""Where SMAC3 searches after its initial design: per run 51-200, the unit-cube distance
(numeric columns) of the evaluated configuration to the incumbent of the moment, and the
true normalized MV regret of the best configuration evaluated by runs 50/100/200.
usage: ERAHBO_SMAC_MODEL=gp|rf python geom.py TASK REP"""
import sys
import numpy as np
from erahbo.objectives.known_truth import make_task
from erahbo.experiments.continuous_peers import _smac_run, TraceRecorder


task = make_task(sys.argv[1]); rep = int(sys.argv[2]); sp = task.space
seen = []
class Proxy:
    def __getattr__(self, k): return getattr(task, k)
    def sample(self, config, seeds):
        seen.append(dict(config)); return task.sample(config, seeds)
from erahbo.risk import as_risk
m = as_risk(1.0)
rec = TraceRecorder(task, m, task.value_max(m))
trace, meta = _smac_run(Proxy(), 200, 1000 + rep, lambda s: s, rec, None)
num = np.array([h.width == 1 for h in sp._hps])
cols = [h.col for h in sp._hps if h.width == 1]
keys, U = {}, []
for c in seen:
    key = tuple(sorted((k, str(v)) for k, v in c.items()))
    if key not in keys:
        keys[key] = len(keys); U.append(sp.encode(c))
U = np.array(U)
cid = trace["config_id"].to_numpy(); inc = trace["incumbent_id"].to_numpy()
d = [np.linalg.norm(U[cid[i]][cols] - U[inc[i - 1]][cols]) / np.sqrt(len(cols))
     for i in range(50, len(cid)) if cid[i] != inc[i - 1]]
d = np.array(d)
reg = [task.regret_norm(seen[0], 1.0)]
bestv = [min(task.regret_norm(c, 1.0) for c in seen[:n]) for n in (50, 100, 200)]
print(f"{sys.argv[1]} rep {rep} model {__import__('os').environ.get('ERAHBO_SMAC_MODEL','rf')}: "
      f"configs {len(keys)}; dist to incumbent (rms per numeric coord) q25/50/75 "
      f"{np.quantile(d,[.25,.5,.75]).round(3)}; share < 0.1 {np.mean(d<0.1):.2f}; "
      f"best evaluated regret @50/100/200 {np.round(bestv,3)}; rec {trace['simple_regret'].iloc[[49,99,-1]].round(3).tolist()}")
