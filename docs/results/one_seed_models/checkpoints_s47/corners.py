import sys, numpy as np
from pathlib import Path
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "checkpoints_s44"))
from search_or_recommendation import study
from erahbo.experiments.continuous import ContinuousSettings
from erahbo.experiments.methods import parse_method
from erahbo.objectives.known_truth import make_task
task = make_task(sys.argv[1]); alpha=float(sys.argv[2]); meth=parse_method(sys.argv[3])
cm = np.asarray(task.space.continuous_mask, bool)
print("cont cols", cm.sum(), "of", task.space.dim)
for rep in range(int(sys.argv[4])):
    opt = study(task, meth, ContinuousSettings(budget=200, alpha=alpha, seed=0), 0, rep, 200)
    U = np.asarray(opt.data.U)[:, cm]
    late = U[15:]
    edge = np.mean((late < 0.02) | (late > 0.98))
    print(f"rep {rep} n {len(U)} share of continuous coords within 0.02 of a bound (configs 15+): {edge:.2f}; per col", np.round(np.mean((late < 0.02) | (late > 0.98),0),2))
