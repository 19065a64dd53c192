"""Scratch (session 56): the six configurations the truth ranks best and the recommendation, after
RUNS runs of the default's replayed study: seeds, sample mean and variance, the truth, the posterior.
From the repository root, PYTHONPATH=src: python late_detail.py TASK ALPHA SET RUNS REP[,REP...]"""
import sys
sys.path.insert(0, "/work/main/docs/results/one_seed_models/checkpoints_s55")
import numpy as np
from _replay import Truth, replayed
from erahbo.gp.bounds import lcb_mv
task_name, alpha, s, runs = sys.argv[1], float(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
reps = [int(r) for r in sys.argv[5].split(",")]
tr = Truth(task_name, alpha)
for rep, opt, cfgs, reg in replayed(tr, s, runs, reps):
    d = opt.data; k = np.asarray(d.k)
    row = d.config_ids.index(int(opt.incumbent_id))
    rm = opt.round_model()
    mf, sf, mv, sv = rm.predict(np.asarray(d.U, float))
    var = np.exp(mv) if rm.log_var else mv
    lo = lcb_mv(mf, sf, mv, sv, alpha, opt.models.recommender.beta if hasattr(opt.models,'recommender') else 2.0, log_var=rm.log_var)
    print("rep", rep, "rec row", row)
    order = np.argsort(reg)[:6].tolist()
    if row not in order: order.append(row)
    for i in order:
        f, v = tr.f_var(cfgs[i])
        print(f"  row {i:3d} k {int(k[i]):3d} U {np.round(np.asarray(d.U[i]),4)} reg {reg[i]:.4f} ybar {d.ybar[i]:.3f} s2 {d.s2[i]:.4f} | true f {f:.3f} var {v:.4f} | post f {mf[i]:.3f} var {var[i]:.4f} pmv {mf[i]-alpha*var[i]:.3f} lcb {lo[i]:.3f}")
