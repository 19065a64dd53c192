"""The chance that five studies of the README example meet issue 37's four figures.

Reads the per-study tables of ``benchmarks/readme_truth.py`` (held-out seeds) and draws sets of
five studies without replacement: the share of sets whose mean Spearman is >= 0.85, whose
largest overestimate is <= 1.0, whose `B_t` is never above `MV*` and whose mean regret is
<= 0.06 (the Done-when reads seeds 0-4: one such set).

usage: python readme_chance.py LOG [LOG ...]   (the stdout of readme_truth.py)
       python readme_chance.py --robustness N M LOG [LOG ...]
           (the stdout of benchmarks/robustness_study.py: the chance that at least M of N new
           studies end near the optimum, the rate drawn from its Beta(near + 1, miss + 1)
           posterior over every study of the logs pooled)
"""
import sys
from pathlib import Path

import numpy as np

# the four figures' thresholds: the ones benchmarks/readme_truth.py reports against
sys.path.insert(0, str(Path(__file__).resolve().parents[4] / "benchmarks"))
from readme_truth import OVER_MAX, REGRET_MAX, SPEARMAN_MIN


def rows(path: str) -> np.ndarray:
    out = []
    for line in open(path):
        p = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(p) >= 5 and p[0].isdigit():
            out.append([float(p[1]), float(p[2]), float(p[3]), float(p[4])])
    return np.array(out)  # (studies, 4): spearman, over, bt_over, regret


def robustness(n: int, m: int, paths: list[str]) -> None:
    """P(at least m of n studies near the optimum), the rate from the logs' studies."""
    near = miss = 0
    for path in paths:
        for line in open(path):
            p = [c.strip() for c in line.strip().strip("|").split("|")]
            if len(p) >= 4 and p[0].isdigit() and p[3] in ("yes", "no"):
                near += p[3] == "yes"
                miss += p[3] == "no"
    if near + miss == 0:
        raise SystemExit(f"no study found in {paths}: give the stdout of "
                         "benchmarks/robustness_study.py")
    rng = np.random.default_rng(0)
    rate = rng.beta(near + 1, miss + 1, 200000)
    hits = rng.binomial(n, rate)
    print(f"{' + '.join(paths)}: near in {near} of {near + miss}; "
          f"P(at least {m} of {n}) {np.mean(hits >= m):.2f}")


def main() -> None:
    if len(sys.argv) < 2:
        raise SystemExit(__doc__)
    if sys.argv[1] == "--robustness":
        robustness(int(sys.argv[2]), int(sys.argv[3]), sys.argv[4:])
        return
    for path in sys.argv[1:]:
        rng = np.random.default_rng(0)  # the same draws for every log
        r = rows(path)
        if len(r) < 5:
            raise SystemExit(f"{path}: {len(r)} studies found; give the stdout of "
                             "benchmarks/readme_truth.py over at least five seeds")
        idx = np.array([rng.choice(len(r), 5, replace=False) for _ in range(20000)])
        s = r[idx]  # (draws, 5, 4)
        ok = np.stack([s[..., 0].mean(1) >= SPEARMAN_MIN, s[..., 1].max(1) <= OVER_MAX,
                       s[..., 2].max(1) <= 0.0, s[..., 3].mean(1) <= REGRET_MAX], axis=1)
        print(f"{path}: {len(r)} studies; per figure {np.round(ok.mean(0), 2).tolist()}, "
              f"all four {ok.all(1).mean():.2f}")


if __name__ == "__main__":
    main()
