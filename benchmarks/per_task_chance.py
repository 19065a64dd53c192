"""How much of the per-task criterion is chance (issue 37; one_seed_models, "Session 36").

Issue 37 asks the default to have a lower IQM regret than each peer on at least two thirds of
the continuous benchmark's 11 tasks. With 20 repetitions a task's IQM moves with the
repetitions drawn; this script resamples each method's repetitions of each task with
replacement (independently), recounts the tasks where the default's IQM is strictly lower, and
prints the mean count and the probability of at least 8 of 11 after 50, 100 and 200 runs.

Input: per-trace CSVs in the format of ``docs/results/one_seed_models/checkpoints_s33/README.md``
(``task, method, rep, r50, r100, r200``)::

    python benchmarks/per_task_chance.py MINE.csv PEERS.csv [--draws 2000] [--seed 0]

e.g. ``docs/results/one_seed_models/checkpoints_s36/imv03_a10s1.csv`` against
``docs/results/one_seed_models/checkpoints_s35/peers_a10s1.csv`` (one line per peer method).
"""

from __future__ import annotations

import argparse

import numpy as np
import pandas as pd

CHECKPOINTS = ("r50", "r100", "r200")
TWO_THIRDS = 8  # of 11 tasks


def iqm_draws(x: np.ndarray, idx: np.ndarray) -> np.ndarray:
    """IQM (25 % trimmed mean) of ``x (n,)`` resampled by ``idx (draws, n)``: ``(draws,)``."""
    s = np.sort(x[idx], axis=1)
    cut = int(np.floor(0.25 * s.shape[1]))
    return s[:, cut:s.shape[1] - cut].mean(axis=1)


def counts(mine: pd.DataFrame, peer: pd.DataFrame, column: str, draws: int,
           rng: np.random.Generator) -> np.ndarray:
    """``(draws,)`` numbers of tasks where the resampled IQM of ``mine`` is below ``peer``'s."""
    out = np.zeros(draws, dtype=int)
    for task, g in mine.groupby("task"):
        p = peer.loc[peer["task"] == task, column].to_numpy(float)
        if not len(p):
            continue
        a = g[column].to_numpy(float)
        out += iqm_draws(a, rng.integers(0, len(a), (draws, len(a)))) < iqm_draws(
            p, rng.integers(0, len(p), (draws, len(p))))
    return out


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("mine")
    ap.add_argument("peers")
    ap.add_argument("--draws", type=int, default=2000)
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args(argv)
    mine, peers = pd.read_csv(a.mine), pd.read_csv(a.peers)
    rng = np.random.default_rng(a.seed)
    for method, peer in peers.groupby("method"):
        parts = []
        for c in CHECKPOINTS:
            n = counts(mine, peer, c, a.draws, rng)
            parts.append(f"{c[1:]} runs: mean {n.mean():.1f}, P(>= {TWO_THIRDS}) "
                         f"{np.mean(n >= TWO_THIRDS):.2f}")
        print(f"{method}: " + "; ".join(parts))


if __name__ == "__main__":
    main()
