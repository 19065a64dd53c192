"""Search failure or recommendation failure? (session 44, scratch helper kept with its records)

Replays erahbo's studies of one continuous benchmark cell (the benchmark's repetition seeds and
seed streams) and prints, at the end of each study, the recommendation's normalized regret, the
best evaluated configuration's (any seeds; 2+ seeds), the configurations evaluated and how many
have a normalized regret below 0.5::

    PYTHONPATH=src python docs/results/one_seed_models/checkpoints_s44/search_or_recommendation.py \
        surr-dqn_cc_acrobot 3 0 0,1,2,...,19 [METHOD [BUDGET]]
"""
import sys

import numpy as np

from erahbo import Optimizer
from erahbo.experiments.continuous import (
    ContinuousSettings,
    SeedStream,
    repetition_seed,
    task_truth,
)
from erahbo.experiments.measures import method_risk_options, without_risk_options
from erahbo.experiments.methods import parse_method
from erahbo.objectives.known_truth import make_task
from erahbo.optimizer.loop import drive


def study(task, method, settings, set_seed: int, rep: int, budget: int) -> Optimizer:
    """One repetition of the benchmark's study of ``method`` on ``task``, run to its end."""
    stream = SeedStream(set_seed, rep)
    opt = Optimizer(task.space, method.method, budget=budget,
                    seed=repetition_seed(task.name, set_seed, rep), initial_in_budget=True,
                    **without_risk_options(method.options),
                    **method_risk_options(method, settings))
    drive(opt, lambda tr: task.sample(tr.config, [stream(s) for s in tr.seeds]),
          opt.tell, threads=False)
    return opt


def main() -> None:
    task_name, alpha, set_seed = sys.argv[1], float(sys.argv[2]), int(sys.argv[3])
    reps = [int(r) for r in sys.argv[4].split(",")]
    method = parse_method(sys.argv[5] if len(sys.argv) > 5 else "erahbo")
    budget = int(sys.argv[6]) if len(sys.argv) > 6 else 200
    task = make_task(task_name)
    settings = ContinuousSettings(budget=budget, alpha=alpha, seed=set_seed)
    truth = task_truth(task, alpha)
    star, norm = truth["mv_star"], truth["mv_star"] - truth["uniform_mv_mean"]
    for rep in reps:
        opt = study(task, method, settings, set_seed, rep, budget)
        d = opt.data
        cfgs = [opt.state.config(cid, u) for cid, u in zip(d.config_ids, d.U, strict=True)]
        reg = np.array([(star - task.mv(c, alpha)) / norm for c in cfgs])
        k = np.asarray(d.k)
        rec = (star - task.mv(opt.recommend(), alpha)) / norm
        k_rec = k[d.config_ids.index(int(opt.incumbent_id))]
        print(f"rep {rep}: rec {rec:.3f} (k={k_rec}) | best evaluated {reg.min():.3f} "
              f"(k={k[reg.argmin()]}) | best 2+ seeds {reg[k >= 2].min():.3f} | n configs "
              f"{len(k)}, 2+ {int((k >= 2).sum())} | #reg<0.5 {int((reg < 0.5).sum())}",
              flush=True)


if __name__ == "__main__":
    main()
