"""Search or identification after RUNS runs of a budget-200 study (session 53, scratch helper).

Replays the benchmark's erahbo studies exactly (``recommendation_probe.replay_until``) and stops at
the first tell that reaches RUNS runs; prints per repetition the recommendation's normalized
regret and seeds, the best evaluated configuration's regret (any seeds; 2+ seeds; 5+ seeds),
how many configurations were evaluated (2+ seeds), and the median over repetitions::

    PYTHONPATH=src python docs/results/one_seed_models/checkpoints_s53/search_at.py \
        surr-dqn_cc_cartpole 10 0 50 0-19 [METHOD] [NAME=VALUE ...]
"""
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[4] / "benchmarks"))
from recommendation_probe import replay_until  # noqa: E402

from erahbo.experiments.continuous import task_truth  # noqa: E402
from erahbo.objectives.known_truth import make_task  # noqa: E402


def main() -> None:
    name, alpha, set_seed, runs = sys.argv[1], float(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
    a, b = (int(x) for x in sys.argv[5].split("-"))
    method = sys.argv[6] if len(sys.argv) > 6 and "=" not in sys.argv[6] else "erahbo"
    options = {}
    for kv in sys.argv[6:]:
        if "=" in kv:
            k, v = kv.split("=", 1)
            options[k] = float(v)
    task = make_task(name)
    truth = task_truth(task, alpha)
    star, norm = truth["mv_star"], truth["mv_star"] - truth["uniform_mv_mean"]
    rows = []
    for rep in range(a, b + 1):
        opt = replay_until(task, method, alpha, set_seed, rep, runs, options)
        d = opt.data
        cfgs = [opt.state.config(c, u) for c, u in zip(d.config_ids, d.U, strict=True)]
        reg = np.array([(star - task.mv(c, alpha)) / norm for c in cfgs])
        k = np.asarray(d.k)
        rec = (star - task.mv(opt.recommend(), alpha)) / norm
        got = dict(rec=rec, krec=int(k[d.config_ids.index(int(opt.incumbent_id))]),
                   best=reg.min(), best2=reg[k >= 2].min() if (k >= 2).any() else np.nan,
                   best5=reg[k >= 5].min() if (k >= 5).any() else np.nan,
                   n=len(k), n2=int((k >= 2).sum()))
        rows.append(got)
        print(f"rep {rep:2d}: rec {got['rec']:.3f} (k={got['krec']:2d}) | best {got['best']:.3f}"
              f" | 2+ {got['best2']:.3f} | 5+ {got['best5']:.3f} | configs {got['n']} (2+: "
              f"{got['n2']})", flush=True)
    for key in ("rec", "best", "best2", "best5", "n", "n2"):
        x = np.array([r[key] for r in rows], float)
        print(f"median {key}: {np.nanmedian(x):.3f}  IQM-ish mean: {np.nanmean(x):.3f}")


if __name__ == "__main__":
    main()
