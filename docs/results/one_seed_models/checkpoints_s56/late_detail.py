"""Scratch (session 56): the six configurations the truth ranks best and the recommendation, after
RUNS runs of the default's replayed study: seeds, sample mean and variance, the truth, the
posterior. From the repository root, PYTHONPATH=src: python late_detail.py TASK ALPHA SET RUNS
REP[,REP...]"""
import sys

import numpy as np
from late_probe import studies

from erahbo.gp.bounds import lcb_mv


def main() -> None:
    for tr, rep, opt, cfgs, reg, k, row, rm, (mf, sf, mv, sv), var in studies(sys.argv[1:]):
        d = opt.data
        lo = lcb_mv(mf, sf, mv, sv, tr.alpha, opt.models.recommender.beta, log_var=rm.log_var)
        print("rep", rep, "rec row", row)
        order = np.argsort(reg)[:6].tolist()
        if row not in order:
            order.append(row)
        for i in order:
            f, v = tr.f_var(cfgs[i])
            print(f"  row {i:3d} k {int(k[i]):3d} U {np.round(np.asarray(d.U[i]), 4)} "
                  f"reg {reg[i]:.4f} ybar {d.ybar[i]:.3f} s2 {d.s2[i]:.4f} | true f {f:.3f} "
                  f"var {v:.4f} | post f {mf[i]:.3f} var {var[i]:.4f} "
                  f"pmv {mf[i] - tr.alpha * var[i]:.3f} lcb {lo[i]:.3f}")


if __name__ == "__main__":
    main()
