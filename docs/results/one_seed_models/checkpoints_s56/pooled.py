"""The per-task criterion read on several repetition sets together (session 56).

Issue 37's per-task criterion compares, per alpha x checkpoint x peer, the IQM normalized regret
of 20 repetitions per task and counts the tasks (of 11) where erahbo's is strictly below the
peer's; two thirds (8) are needed. Read per set it has 72 entries; here each task's IQM is taken
over the 40 repetitions of sets 0 and 1 together (the same traces, 36 entries; a peer known only
by a per-set table, SMAC3 at alpha 1 and 3 on set 0, is skipped). With TIE > 0, |diff| <= TIE is
a tie, set aside, and two thirds of the decided tasks are needed (1e-6: exact ties only; the
peers' traces are stored to 7 decimals, so a shared plateau differs by ~1e-8).

usage (from this folder's parent): PYTHONPATH=../../../src python checkpoints_s56/pooled.py
       "PATTERN_{cell}.csv" [TIE] [--tasks] [--boot N] [--sets 0,1]

--sets: the repetition sets pooled (default 0,1; a single set gives the per-set reading). The
peers' traces of sets 2 and 3 are this folder's ``peers_<method>_<cell>.csv`` (session 56).

--boot N: also N bootstrap draws (each method's 20 traces of each set and task drawn with
replacement, seed 0): the expected number of short entries and the chance that none is short.
"""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "checkpoints_s45"))
import numpy as np
import pandas as pd
from expected_count import HERE, PEERS, iqm_rows, load_peers

CK = ["r50", "r100", "r200"]


def all_peers() -> dict:
    """The peers of ``expected_count.load_peers`` (sets 0-1) and the ``peers_<method>_<cell>.csv``
    of this folder (sets 2-3) and of ``checkpoints_s57`` (SMAC3 at alpha 1 on sets 0, 2, 3 and
    at alpha 3 on set 0; set 0's traces replace session 28's tables) and of ``checkpoints_s58``
    (SMAC3 at alpha 3 and 10 on set 2), in ``load_peers``' form."""
    peers = load_peers(str(HERE))
    here = Path(__file__).resolve().parent
    for f in sorted([*here.glob("peers_*_a*s*.csv"),
                     *(here.parent / "checkpoints_s57").glob("peers_*_a*s*.csv"),
                     *(here.parent / "checkpoints_s58").glob("peers_*_a*s*.csv")]):
        cell = f.stem.rsplit("_", 1)[1]
        for me, g in pd.read_csv(f).groupby("method"):
            peers[(cell, me)] = ("traces", {t: gt[CK].to_numpy(float)
                                            for t, gt in g.groupby("task")})
    return peers


def main() -> None:
    argv = sys.argv[1:]
    opt = {k: argv[argv.index(k) + 1] for k in ("--boot", "--sets") if k in argv}
    args = [a for i, a in enumerate(argv) if not a.startswith("--")
            and not (i > 0 and argv[i - 1] in opt)]
    pat, tie = args[0], float(args[1]) if len(args) > 1 else 0.0
    boot = int(opt.get("--boot", 0))
    sets = [int(x) for x in opt.get("--sets", "0,1").split(",")]
    peers = all_peers()
    rng = np.random.default_rng(0)
    short = n_entries = 0
    boot_short = np.zeros(boot, dtype=int)
    for a in (1, 3, 10):
        dfs = [pd.read_csv(pat.format(cell=f"a{a}s{s}")) for s in sets]
        tasks = sorted(dfs[0].task.unique())
        v = np.stack([iqm_rows(np.concatenate([df[df.task == t][CK].to_numpy(float)
                                               for df in dfs])) for t in tasks])
        for pe in PEERS:
            got = [peers.get((f"a{a}s{s}", pe), ("none", None)) for s in sets]
            if any(kind != "traces" for kind, _ in got):
                print(f"alpha {a} {pe}: skipped (no traces on every set)")
                continue
            p = np.stack([iqm_rows(np.concatenate([d[t] for _, d in got])) for t in tasks])
            diff = v - p
            for j, c in enumerate((50, 100, 200)):
                won = int((diff[:, j] < -tie).sum())
                lost = int((diff[:, j] > tie).sum()) if tie > 0 else len(tasks) - won
                ok = won >= 2 / 3 * (won + lost) if tie > 0 else won >= 8
                if "--tasks" in sys.argv or not ok:
                    names = [t.replace("surr-", "") for i, t in enumerate(tasks)
                             if diff[i, j] >= -tie and (tie == 0 or diff[i, j] > tie)]
                    print(f"alpha {a} {pe}@{c}: {won} below, {lost} not"
                          f"{' (SHORT)' if not ok else ''}: {', '.join(names)}")
                short += not ok
                n_entries += 1
            if boot:
                boot_short += _boot(dfs, got, tasks, tie, boot, rng)
    print(f"short (per task on {20 * len(sets)} repetitions, sets {sets}, tie {tie:g}): "
          f"{short} of {n_entries}")
    if boot:
        print(f"bootstrap ({boot} draws): expected short {boot_short.mean():.2f}, "
              f"none short in {np.mean(boot_short == 0):.3f}")


def _boot(dfs: list, got: list, tasks: list, tie: float, n: int,
          rng: np.random.Generator) -> np.ndarray:
    """Short entries (0-3, one per checkpoint) of one alpha x peer in each of ``n`` draws."""
    def draw(per_set: list) -> np.ndarray:  # per_set: (20, 3) arrays -> (n, 40, 3)
        return np.concatenate([x[rng.integers(0, len(x), (n, len(x)))] for x in per_set], axis=1)

    v = np.stack([iqm_rows(draw([df[df.task == t][CK].to_numpy(float) for df in dfs]))
                  for t in tasks], axis=1)  # (n, tasks, 3)
    p = np.stack([iqm_rows(draw([d[t] for _, d in got])) for t in tasks], axis=1)
    diff = v - p
    won = (diff < -tie).sum(1)
    lost = (diff > tie).sum(1) if tie > 0 else len(tasks) - won
    ok = won >= 2 / 3 * (won + lost) if tie > 0 else won >= 8
    return (~ok).sum(1)


if __name__ == "__main__":
    main()
