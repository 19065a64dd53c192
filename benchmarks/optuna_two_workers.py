"""Two Optuna worker processes on one SQLite storage with ERAHBOSampler: the seed claims.

Each worker is a separate process running ``study.optimize`` on the same study (Optuna's
standard way to parallelize), with the same sampler options and seed (the worst case: the
same data gives the same decisions). The objective is a noisy two-peak function (a quiet
peak at x = 0.25, a higher but very noisy one at x = 0.75), 20 ms per training run, in
CleanRL's tuner pattern; the workers stop once the study holds ``--runs`` training runs.

Prints (or with ``--json`` writes as JSON) what matters: trials and runs per worker, the
(configuration, seed) pairs trained twice (must be 0), configurations trained by several
trials, and the recommendation: its seeds and the spread of its runs as erahbo's table says
and as computed from its distinct runs (they must be equal).

    PYTHONPATH=src python benchmarks/optuna_two_workers.py --runs 60
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

for _v in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_v, "1")

NAME = "two-workers"
OPTIONS = dict(seed=0, n_init=4, k_init=2, k_min=2, k_max=6, raw_samples=128, n_polish=2)


def train(x: float, seed: int) -> float:
    """One training run: a quiet peak at 0.25 (1.0) and a noisy higher one at 0.75 (1.3)."""
    time.sleep(0.02)
    rng = random.Random(f"{x:.12f}/{seed}")  # string seeds: the same in every process
    mean = math.exp(-((x - 0.25) / 0.12) ** 2) + 1.3 * math.exp(-((x - 0.75) / 0.12) ** 2)
    return mean + rng.gauss(0.0, 0.05 + 1.0 * math.exp(-((x - 0.75) / 0.2) ** 2))


def worker(storage: str, worker_id: int, runs: int) -> None:
    import optuna

    from erahbo.integrations.optuna import ERAHBOSampler, trial_seeds

    optuna.logging.set_verbosity(optuna.logging.ERROR)

    def objective(trial: optuna.Trial) -> float:
        x = trial.suggest_float("x", 0.0, 1.0)
        trial.set_user_attr("worker", worker_id)
        returns = []
        for step, seed in enumerate(trial_seeds(trial)):
            returns.append(train(x, seed))
            trial.report(returns[-1], step)
            if trial.should_prune():
                raise optuna.TrialPruned()
        return sum(returns) / len(returns)

    def enough(study: optuna.Study, trial: Any) -> None:
        if sum(len(t.intermediate_values) for t in study.get_trials(deepcopy=False)) >= runs:
            study.stop()

    sampler = ERAHBOSampler(**OPTIONS)
    study = optuna.load_study(study_name=NAME, storage=storage, sampler=sampler,
                              pruner=sampler.pruner)
    study.optimize(objective, n_trials=10 * runs, callbacks=[enough])


def summary(storage: str) -> dict[str, Any]:
    """The figures of a finished two-worker study."""
    import optuna

    from erahbo.integrations.optuna import ERAHBOSampler, recommended_trial, trial_seeds

    study = optuna.load_study(study_name=NAME, storage=storage)
    trials = study.get_trials(deepcopy=False)
    key = {t.number: json.dumps(t.params, sort_keys=True) for t in trials}
    pairs: dict[tuple[str, int], list[int]] = {}
    values: dict[str, dict[int, float]] = {}
    for t in trials:
        for step, seed in enumerate(trial_seeds(t)[: len(t.intermediate_values)]):
            pairs.setdefault((key[t.number], seed), []).append(t.number)
            values.setdefault(key[t.number], {})[seed] = t.intermediate_values[step]
    res = ERAHBOSampler(**OPTIONS).result(study)
    row = res.configs.sort_values("rank").iloc[0]
    rec = recommended_trial(study)
    distinct = list(values[key[int(row["config_id"])]].values())
    by_config: dict[str, int] = {}
    for t in trials:
        by_config[key[t.number]] = by_config.get(key[t.number], 0) + 1
    return {
        "trials": len(trials),
        "runs": sum(len(t.intermediate_values) for t in trials),
        "trials_per_worker": {str(w): sum(1 for t in trials if t.user_attrs.get("worker") == w)
                              for w in sorted({t.user_attrs.get("worker") for t in trials})},
        "states": {s: sum(1 for t in trials if t.state.name == s)
                   for s in sorted({t.state.name for t in trials})},
        "duplicated_pairs": sum(1 for v in pairs.values() if len(v) > 1),
        "configs_with_several_trials": sum(1 for n in by_config.values() if n > 1),
        "recommendation": {
            "trial": int(row["config_id"]),
            "study_attribute_trial": None if rec is None else rec.number,
            "x": float(row["x"]),
            "k": int(row["k"]),
            "distinct_runs": len(distinct),
            "std_erahbo": float(row["std"]),
            "std_distinct_runs": statistics.stdev(distinct) if len(distinct) > 1 else math.nan,
            "mean": float(row["mean"]),
            "mv": float(row["mv"]),
        },
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=60)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--db", type=Path, default=None, help="SQLite file (default: a temp file)")
    ap.add_argument("--json", type=Path, default=None, help="write the figures here")
    ap.add_argument("--worker", type=int, default=None, help=argparse.SUPPRESS)
    ap.add_argument("--storage", default=None, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker is not None:
        worker(args.storage, args.worker, args.runs)
        return
    import optuna

    db = args.db or Path(tempfile.mkdtemp()) / "study.db"
    storage = f"sqlite:///{db}"
    optuna.create_study(study_name=NAME, storage=storage, direction="maximize")
    t0 = time.perf_counter()
    procs = [subprocess.Popen([sys.executable, __file__, "--worker", str(i), "--storage",
                               storage, "--runs", str(args.runs)]) for i in range(args.workers)]
    codes = [p.wait() for p in procs]
    if any(codes):
        raise SystemExit(f"a worker failed: exit codes {codes}")
    out = summary(storage)
    out["wall_s"] = round(time.perf_counter() - t0, 1)
    text = json.dumps(out, indent=2)
    if args.json:
        args.json.write_text(text)
    print(text)


if __name__ == "__main__":
    main()
