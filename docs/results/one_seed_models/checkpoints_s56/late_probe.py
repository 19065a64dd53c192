"""Scratch (session 56): after RUNS runs of the default's replayed study, the recommendation's seeds and
regret, the truth's best among the evaluated configurations with 1+, 2+ and 5+ seeds, their numbers,
and the regret of the best posterior-mean MV among those with 2+ seeds and among all. From the
repository root, PYTHONPATH=src: python late_probe.py TASK ALPHA SET RUNS REP[,REP...]"""
import sys
sys.path.insert(0, "/work/main/docs/results/one_seed_models/checkpoints_s55")
import numpy as np
from _replay import Truth, replayed, rebuilt
from erahbo.gp.bounds import mean_variance
task_name, alpha, s, runs = sys.argv[1], float(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
reps = [int(r) for r in sys.argv[5].split(",")]
tr = Truth(task_name, alpha)
print("rep k_rec reg_rec best_k1 best_k2 best_k5 n_cfg n_k2 n_k5 pm_k2 pm_all")
for rep, opt, cfgs, reg in replayed(tr, s, runs, reps):
    d = opt.data; k = np.asarray(d.k)
    row = d.config_ids.index(int(opt.incumbent_id))
    rm = opt.round_model()
    mf, sf, mv, sv = rm.predict(np.asarray(d.U, float))
    var = np.exp(mv) if rm.log_var else mv
    pmv = mf - alpha * var
    best = lambda m: reg[k >= m].min() if (k >= m).any() else np.nan
    pick = lambda ok: reg[int(np.argmax(np.where(ok, pmv, -np.inf)))]
    print(rep, int(k[row]), f"{reg[row]:.4f}", f"{best(1):.4f}", f"{best(2):.4f}", f"{best(5):.4f}",
          len(k), int((k >= 2).sum()), int((k >= 5).sum()), f"{pick(k >= 2):.4f}", f"{pick(k >= 1):.4f}", flush=True)
