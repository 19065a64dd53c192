"""The chance that one repetition set (20 repetitions) passes the per-task entries after 50 runs
at alpha 10 (IQM normalized regret below the peer's on at least 8 of the 11 tasks), session 57.

Each method's per-repetition regrets after 50 runs: the default's and the peers' realized traces
(repetition sets 0-3, 80 per task) or the model-free schedules of ``sh_designs.py`` (1000 per
task, ``sh_a10_1000.npz``); ``hyb-<schedule>`` is the default on the three known-truth tasks and
the schedule on the eight surrogates (what a perfect learn-or-fail gate could do at best with
it). Every value is rounded to 7 decimals, as the peers' stored traces are. A draw resamples 20
repetitions per task and side independently; "below" is strict. Prints each pair's P(pass) and
per task P(below), the three alpha-10 entries together (one resample of the method shared),
and TPE k=10's realized traces against the simulated 5 x 10 design. From this folder's
parent::

    PYTHONPATH=../../../src python checkpoints_s57/passprob.py "/tmp/mix/capy03_{cell}.csv"
"""
import sys
from pathlib import Path

import numpy as np
import pandas as pd
from scipy.stats import trim_mean

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "checkpoints_s56"))
from pooled import all_peers  # noqa: E402

TASKS = ["branin", "figure1", "readme"] + ["surr-" + t for t in (
    "dqn_cc_acrobot", "dqn_cc_cartpole", "dqn_cc_mountain_car", "ppo_cc_acrobot",
    "ppo_cc_cartpole", "ppo_cc_continuous_mountain_car", "ppo_cc_mountain_car",
    "ppo_cc_pendulum")]
KNOWN = TASKS[:3]
DESIGNS = ("5x10", "SH12", "SH10")
B = 4000


class Sources:
    """Per-repetition regrets after 50 runs at alpha 10 of each method on each task."""

    def __init__(self, pattern: str) -> None:
        self.sim = dict(np.load(HERE / "sh_a10_1000.npz"))
        self.peers = all_peers()
        self.dflt = [pd.read_csv(pattern.format(cell=f"a10s{s}")) for s in range(4)]

    def __call__(self, name: str, t: str) -> np.ndarray:
        if name == "default" or (name.startswith("hyb-") and t in KNOWN):
            return np.concatenate([df[df.task == t].r50.to_numpy(float) for df in self.dflt])
        if name.startswith("hyb-"):
            name = name[4:]
        if name in DESIGNS:
            return self.sim[f"{t}|{name}"]
        return np.concatenate([self.peers[(f"a10s{s}", name)][1][t][:, 0] for s in range(4)])


def draws(x: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """``B`` IQMs of 20 repetitions resampled from ``x`` (rounded to 7 decimals)."""
    x = np.round(np.asarray(x, float), 7)
    return trim_mean(x[rng.integers(0, len(x), (B, 20))], 0.25, axis=1)


def main() -> None:
    src = Sources(sys.argv[1])
    mine = ["default", "SH10", "SH12", "hyb-SH10", "hyb-SH12"]
    rng = np.random.default_rng(0)
    print("P(one set of 20 repetitions passes: below on >= 8 of 11 tasks); per task P(below)")
    for m in mine:
        for p in ("optuna-tpe-k10", "5x10", "rahbo-k2", "bts-red"):
            wins = np.stack([draws(src(m, t), rng) < draws(src(p, t), rng) for t in TASKS], 1)
            per = " ".join(f"{w:.2f}" for w in wins.mean(0))
            print(f"  {m:9s} vs {p:15s} P(pass) {np.mean(wins.sum(1) >= 8):.2f} | {per}")
    print("tasks: " + " ".join(t.replace("surr-", "") for t in TASKS))
    rng = np.random.default_rng(1)
    print("\nP(one set passes TPE k=10, RAHBO k=2 and BTS-RED after 50 runs at alpha 10 together)")
    for m in [*mine, "5x10"]:
        me = np.stack([draws(src(m, t), rng) for t in TASKS], 1)  # (B, 11)
        ok = np.ones(B, bool)
        for p in ("optuna-tpe-k10", "rahbo-k2", "bts-red"):
            ok &= (me < np.stack([draws(src(p, t), rng) for t in TASKS], 1)).sum(1) >= 8
        print(f"  {m:9s} {ok.mean():.2f}")
    rng = np.random.default_rng(0)
    print("\nTPE k=10 after 50 runs at alpha 10: realized (80 repetitions) / the 5 x 10 design "
          "simulated (1000); P(IQM20 realized < IQM20 design)")
    for t in TASKS:
        r, d = src("optuna-tpe-k10", t), src("5x10", t)
        p = np.mean(draws(r, rng) < draws(d, rng))
        print(f"  {t.replace('surr-', ''):32s} {trim_mean(r, .25):.3f} / {trim_mean(d, .25):.3f}"
              f"  P {p:.2f}")


if __name__ == "__main__":
    main()
