"""Where a method searches: per run after the 50th, the unit-cube distance (rms per numeric
coordinate) of a new evaluated configuration to the recommendation of the moment; the true
normalized MV regret (alpha 1) of the best configuration evaluated by runs 50/100/200 and of
the recommendation. Repetition r of set 0 of the continuous benchmark (its seeds).
usage: [ERAHBO_SMAC_MODEL=gp] python geom2.py TASK METHOD REP..."""
import sys
import numpy as np
from erahbo.objectives.known_truth import make_task
from erahbo.experiments.continuous import ContinuousSettings, run_continuous_repetition
from erahbo.experiments.methods import parse_method

task = make_task(sys.argv[1]); sp = task.space; method = parse_method(sys.argv[2])
cols = [h.col for h in sp._hps if h.width == 1]
for rep in map(int, sys.argv[3:]):
    seen = []
    class Proxy:
        def __getattr__(self, k): return getattr(task, k)
        def sample(self, config, seeds):
            seen.append(dict(config)); return task.sample(config, seeds)
    trace, meta = run_continuous_repetition(Proxy(), method, rep, ContinuousSettings(budget=200, alpha=1.0, seed=0))
    keys, U, first = {}, [], []
    for c in seen:
        key = tuple(sorted((k, repr(v)) for k, v in c.items()))
        if key not in keys:
            keys[key] = len(keys); U.append(sp.encode(c)); first.append(c)
    U = np.array(U)
    cid = trace["config_id"].to_numpy(); inc = trace["incumbent_id"].to_numpy()
    new = [i for i in range(50, len(cid)) if cid[i] not in set(cid[:i])]
    d = np.array([np.sqrt(np.mean((U[cid[i]][cols] - U[inc[i - 1]][cols]) ** 2)) for i in new])
    face = np.mean(np.minimum(U[cid[new]][:, cols], 1 - U[cid[new]][:, cols]) < 0.02)
    reg = np.array([task.regret_norm(c, 1.0) for c in first])
    bestv = [reg[: len(set(cid[:n]))].min() for n in (50, 100, 200)]
    print(f"{sys.argv[1]} {sys.argv[2]} rep {rep}: configs {len(keys)} (new after run 50: {len(new)}); "
          f"dist to rec q25/50/75 {np.quantile(d,[.25,.5,.75]).round(3) if len(d) else '-'}; <0.1 {np.mean(d<0.1) if len(d) else 0:.2f}; "
          f"coords at a face {face:.2f}; best evaluated @50/100/200 {np.round(bestv,3)}; "
          f"rec {trace['simple_regret'].iloc[[49,99,-1]].round(3).tolist()}", flush=True)
