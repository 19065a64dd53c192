"""Overhead per Optuna trial (sampler + pruner, not training): ERAHBO vs TPE vs GPSampler.

One in-memory study per sampler on the same cheap noisy objective (4 parameters: a log-uniform
float, a float, an int, a 3-way categorical), the host's normal flow: the objective trains
seed after seed, ``trial.report(return, step)``, ``trial.should_prune()``. ERAHBO runs with
its own pruner (``sampler.pruner``, ``k_max = 10``) and trains the seeds the sampler gives the
trial (the user attribute ``erahbo_seeds``, when the sampler sets it); TPE and GPSampler run 3
seeds per trial under Optuna's default pruner (MedianPruner), as CleanRL's tuner does.

A trial's overhead is its wall time less the time spent inside the "training" calls. The
figure at N is the median overhead of trials N-10 .. N-1 of one study that grows to N trials.
GPSampler is slow past 200 trials: at the checkpoints above ``--gp-run-max`` its study is
prefilled with the trials of its run plus random completed trials up to N - 10, and the next
10 trials are timed (GPSampler keeps no state between trials, so this is the same work).

    nice -n 10 python benchmarks/bench_optuna.py                 # 50 / 200 / 500, all three
    python benchmarks/bench_optuna.py --checkpoints 50 200 --samplers erahbo tpe   # quicker
    git archive <old commit> src | tar -x -C /tmp/old          # the sampler before a change:
    python benchmarks/bench_optuna.py --before-src /tmp/old/src   # a column of the same run

The ERAHBO column also gives, in parentheses, the part that is not the optimizer's proposal
(``Optimizer.ask``, the acquisition search): the sampler's bookkeeping, the stopping rule and
the recommendation.

GPSampler needs torch (``pip install torch``); without it that column says so.

``--clock cpu`` times with the process's CPU time instead of the wall clock: on a machine
shared with other jobs the figures then stay what a quiet machine shows (one thread).
``--breakdown`` splits the ERAHBO sampler's time per trial into its parts instead (mean over
the same windows): the proposal, the round model, the recommendation, the tell, the MV bounds,
the stopping rule, and the rest of the sampler's hooks (its bookkeeping: claims, storage).
The recommendation's part includes the round model's exact posterior variances at the
evaluated rows (``FastRound.var_f_rows``), which the next proposal's argmax screen reuses.
"""

from __future__ import annotations

import os

for _v in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_v, "1")

import argparse  # noqa: E402
import json  # noqa: E402
import math  # noqa: E402
import random  # noqa: E402
import statistics  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
import warnings  # noqa: E402
from collections.abc import Callable  # noqa: E402
from typing import Any  # noqa: E402

WINDOW = 10  # trials timed before each checkpoint
CLOCK = [time.perf_counter]  # --clock cpu: time.process_time
K_MAX = 10  # ERAHBO's k_max
K_FIXED = 3  # seeds per trial for TPE and GPSampler


def train(p: dict[str, Any], seed: int) -> float:
    """One 'training run': a noisy return of the parameters (microseconds)."""
    rng = random.Random(f"{p['lr']:.10g}/{p['gamma']:.10g}/{p['layers']}/{p['act']}/{seed}")
    mean = (1.0 - 0.2 * (math.log10(p["lr"]) + 3.0) ** 2 - (p["gamma"] - 0.97) ** 2 * 10
            + 0.1 * (p["act"] == "tanh") - 0.02 * abs(p["layers"] - 3))
    return mean + rng.gauss(0.0, 0.05 + 0.5 * (p["lr"] > 3e-3))


def make_objective(erahbo: bool, spent: list[float]) -> Callable[[Any], float]:
    def objective(trial: Any) -> float:
        p = {"lr": trial.suggest_float("lr", 1e-5, 1e-1, log=True),
             "gamma": trial.suggest_float("gamma", 0.9, 0.999),
             "layers": trial.suggest_int("layers", 1, 6),
             "act": trial.suggest_categorical("act", ["tanh", "relu", "elu"])}
        if erahbo:
            offset = int(trial.user_attrs.get("erahbo_seed_offset", 0))
            seeds = trial.user_attrs.get("erahbo_seeds") or range(offset, offset + K_MAX)
        else:
            seeds = range(K_FIXED)
        returns = []
        for step, seed in enumerate(seeds):
            t0 = CLOCK[0]()
            returns.append(train(p, seed))
            spent[-1] += CLOCK[0]() - t0
            trial.report(returns[-1], step)
            if trial.should_prune():
                break
        return sum(returns) / len(returns)

    return objective


def timed_study(optuna: Any, sampler: Any, pruner: Any, n: int, erahbo: bool,
                prefill: list[Any] | None = None) -> tuple[list[float], list[Any]]:
    """Run ``n`` trials (after ``prefill``); the overhead of each in seconds, and the trials."""
    study = optuna.create_study(direction="maximize", sampler=sampler, pruner=pruner)
    if prefill:
        study.add_trials(prefill)
    spent: list[float] = []
    overhead: list[float] = []
    objective = make_objective(erahbo, spent)
    for _ in range(n):
        spent.append(0.0)
        t0 = CLOCK[0]()
        study.optimize(objective, n_trials=1)
        overhead.append(CLOCK[0]() - t0 - spent[-1])
    return overhead, study.get_trials(deepcopy=False)


def random_trials(optuna: Any, n: int, seed: int) -> list[Any]:
    """``n`` completed trials at random parameters (prefill for GPSampler's last checkpoints)."""
    from optuna.distributions import (
        CategoricalDistribution,
        FloatDistribution,
        IntDistribution,
    )

    rng = random.Random(seed)
    dists = {"lr": FloatDistribution(1e-5, 1e-1, log=True),
             "gamma": FloatDistribution(0.9, 0.999), "layers": IntDistribution(1, 6),
             "act": CategoricalDistribution(["tanh", "relu", "elu"])}
    out = []
    for _ in range(n):
        p = {"lr": 10 ** rng.uniform(-5, -1), "gamma": rng.uniform(0.9, 0.999),
             "layers": rng.randint(1, 6), "act": rng.choice(["tanh", "relu", "elu"])}
        vals = [train(p, s) for s in range(K_FIXED)]
        out.append(optuna.trial.create_trial(
            params=p, distributions=dists, value=sum(vals) / len(vals),
            intermediate_values=dict(enumerate(vals))))
    return out


def _time_proposals() -> list[float]:
    """Seconds per trial spent in the optimizer's proposal (``Optimizer.ask``: the
    acquisition search), filled while the ERAHBO study runs; empty for an older sampler."""
    try:
        from erahbo.integrations._optuna_engine import Engine
    except ImportError:
        return []
    spent: list[float] = []
    ask = Engine.ask

    def timed(self: Any, number: int, *args: Any) -> Any:
        t0 = CLOCK[0]()
        try:
            return ask(self, number, *args)
        finally:
            while len(spent) <= number:
                spent.append(0.0)
            spent[number] += CLOCK[0]() - t0

    Engine.ask = timed  # type: ignore[method-assign]
    return spent


BREAKDOWN = (  # (label, module, class or None, attribute): the parts of --breakdown
    ("proposal (Optimizer.ask)", "erahbo.integrations._optuna_engine", "Engine", "ask"),
    ("round model", "erahbo.optimizer.rounds", "RoundModels", "current"),
    ("recommendation", "erahbo.optimizer.recommender", "Recommender", "choose"),
    ("tell", "erahbo.integrations._optuna_engine", "Engine", "tell"),
    ("MV bounds", "erahbo.integrations.optuna", None, "bounds"),
    ("stopping rule", "erahbo.optimizer", "Optimizer", "stopping_decision"),
    ("sampler hooks", "erahbo.integrations.optuna", "ERAHBOSampler", "before_trial"),
    ("sampler hooks", "erahbo.integrations.optuna", "ERAHBOSampler", "after_trial"),
    ("sampler hooks", "erahbo.integrations.optuna", "ERAHBOSampler", "_should_stop"),
)


def breakdown(optuna: Any, checkpoints: list[int], seed: int) -> None:
    """Print the ERAHBO sampler's time per trial by part (``--breakdown``)."""
    import importlib

    from erahbo.integrations.optuna import ERAHBOSampler

    spent: dict[str, list[float]] = {}
    trial, depth = [0], [0]  # depth: parts running (a part inside another counts in it)

    def wrap(label: str, owner: Any, attr: str) -> None:
        inner = getattr(owner, attr)
        part = label != "sampler hooks"

        def timed(*args: Any, **kwargs: Any) -> Any:
            outer = not (part and depth[0])
            depth[0] += part
            t0 = CLOCK[0]()
            try:
                return inner(*args, **kwargs)
            finally:
                depth[0] -= part
                if outer:
                    spent.setdefault(label, [0.0] * max(checkpoints))[trial[0]] += (
                        CLOCK[0]() - t0)

        setattr(owner, attr, timed)

    for label, module, cls, attr in BREAKDOWN:
        mod = importlib.import_module(module)
        wrap(label, getattr(mod, cls) if cls else mod, attr)
    sampler = ERAHBOSampler(seed=seed, k_max=K_MAX)
    study = optuna.create_study(direction="maximize", sampler=sampler, pruner=sampler.pruner)
    used: list[float] = []
    objective = make_objective(True, used)
    total = []
    for i in range(max(checkpoints)):
        trial[0] = i
        used.append(0.0)
        t0 = CLOCK[0]()
        study.optimize(objective, n_trials=1)
        total.append(CLOCK[0]() - t0 - used[-1])
    # the hooks contain the parts they call: their own share is what is left
    inner = [sum(spent[lab][i] for lab in spent if lab != "sampler hooks")
             for i in range(len(total))]
    spent["sampler hooks"] = [h - x for h, x in zip(spent["sampler hooks"], inner, strict=True)]
    spent["Optuna (study, trial, storage)"] = [t - h - x for t, h, x in
                                               zip(total, spent["sampler hooks"], inner,
                                                   strict=True)]
    print(f"\nERAHBOSampler: ms per trial by part (mean of trials N-{WINDOW}..N-1)")
    print("| part | " + " | ".join(f"N = {n}" for n in checkpoints) + " |")
    print("|---|" + "---:|" * len(checkpoints))
    for label, per in [("total", total), *spent.items()]:
        print(f"| {label} | " + " | ".join(
            f"{1e3 * statistics.mean(per[n - WINDOW:n]):.1f}" for n in checkpoints) + " |")


def window_ms(overhead: list[float], n: int) -> float:
    return 1e3 * statistics.median(overhead[max(n - WINDOW, 0):n])


def measure(name: str, optuna: Any, checkpoints: list[int], gp_run_max: int,
            seed: int) -> dict[int, str]:
    if name == "erahbo":
        from erahbo.integrations.optuna import ERAHBOSampler

        proposal = _time_proposals()
        sampler = ERAHBOSampler(seed=seed, k_max=K_MAX)
        overhead, _ = timed_study(optuna, sampler, sampler.pruner, max(checkpoints), True)
        if not proposal:  # a sampler without the kept optimizer (before issue 28)
            return {n: f"{window_ms(overhead, n):.0f}" for n in checkpoints}
        proposal += [0.0] * (len(overhead) - len(proposal))  # trials without an ask
        rest = [o - p for o, p in zip(overhead, proposal, strict=True)]
        return {n: f"{window_ms(overhead, n):.0f} ({window_ms(rest, n):.1f})"
                for n in checkpoints}
    if name == "tpe":
        overhead, _ = timed_study(optuna, optuna.samplers.TPESampler(seed=seed), None,
                                  max(checkpoints), False)
        return {n: f"{window_ms(overhead, n):.0f}" for n in checkpoints}
    try:
        import torch  # noqa: F401
    except ImportError:
        return {n: "n/a (no torch)" for n in checkpoints}
    run = [n for n in checkpoints if n <= gp_run_max]
    out: dict[int, str] = {}
    trials: list[Any] = []
    if run:
        overhead, trials = timed_study(optuna, optuna.samplers.GPSampler(seed=seed), None,
                                       max(run), False)
        out.update({n: f"{window_ms(overhead, n):.0f}" for n in run})
    for n in (n for n in checkpoints if n > gp_run_max):
        done = [optuna.trial.create_trial(params=t.params, distributions=t.distributions,
                                          value=t.value, intermediate_values=t.intermediate_values)
                for t in trials if t.state == optuna.trial.TrialState.COMPLETE]
        prefill = done + random_trials(optuna, n - WINDOW - len(done), seed)
        overhead, _ = timed_study(optuna, optuna.samplers.GPSampler(seed=seed), None, WINDOW,
                                  False, prefill=prefill)
        out[n] = f"{1e3 * statistics.median(overhead):.0f}*"
    return out


def _before(src: str, checkpoints: list[int], seed: int) -> dict[int, str]:
    """The ERAHBO column timed on another source tree, in a subprocess."""
    env = dict(os.environ, PYTHONPATH=src)
    clock = "cpu" if CLOCK[0] is time.process_time else "wall"
    out = subprocess.run([sys.executable, __file__, "--samplers", "erahbo", "--raw",
                          "--seed", str(seed), "--clock", clock,
                          "--checkpoints", *map(str, checkpoints)],
                         env=env, capture_output=True, text=True, check=True).stdout
    line = next(x for x in out.splitlines() if x.startswith("RESULT "))
    return {int(n): v for n, v in json.loads(line[len("RESULT "):]).items()}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--checkpoints", type=int, nargs="+", default=[50, 200, 500])
    ap.add_argument("--samplers", nargs="+", default=["erahbo", "tpe", "gp"],
                    choices=["erahbo", "tpe", "gp"])
    ap.add_argument("--gp-run-max", type=int, default=200,
                    help="GPSampler checkpoints above this are timed on a prefilled study")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--before-src", default=None,
                    help="also time the ERAHBO sampler of this source tree (e.g. an older "
                    "checkout's src/), in a subprocess of the same run")
    ap.add_argument("--clock", choices=["wall", "cpu"], default="wall",
                    help="cpu: the process's CPU time (a machine shared with other jobs)")
    ap.add_argument("--breakdown", action="store_true",
                    help="the ERAHBO sampler's time per trial by part, instead of the table")
    ap.add_argument("--raw", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.clock == "cpu":
        CLOCK[0] = time.process_time

    import optuna

    optuna.logging.set_verbosity(optuna.logging.ERROR)
    warnings.simplefilter("ignore")  # experimental-API warnings (GPSampler)
    checkpoints = sorted(args.checkpoints)
    if args.breakdown:
        breakdown(optuna, checkpoints, args.seed)
        return
    cols: dict[str, dict[int, str]] = {}
    samplers = list(args.samplers)
    if args.before_src:
        t0 = time.perf_counter()
        cols["before"] = _before(args.before_src, checkpoints, args.seed)
        samplers.insert(0, "before")
        print(f"# erahbo before: {time.perf_counter() - t0:.0f} s", flush=True)
    for name in args.samplers:
        t0 = time.perf_counter()
        cols[name] = measure(name, optuna, checkpoints, args.gp_run_max, args.seed)
        print(f"# {name}: {time.perf_counter() - t0:.0f} s", flush=True)
    if args.raw:
        print("RESULT " + json.dumps(cols["erahbo"]))
        return
    args.samplers = samplers
    labels = {"before": "ERAHBOSampler before", "tpe": "TPESampler", "gp": "GPSampler",
              "erahbo": "ERAHBOSampler (without Optimizer.ask)"}
    print(f"\nms per trial (sampler + pruner, median of trials N-{WINDOW}..N-1, "
          f"{args.clock} clock), optuna {optuna.__version__}")
    print("| trials N | " + " | ".join(labels[s] for s in args.samplers) + " |")
    print("|---:|" + "---:|" * len(args.samplers))
    for n in checkpoints:
        print(f"| {n} | " + " | ".join(cols[s][n] for s in args.samplers) + " |")
    if "gp" in args.samplers and any(n > args.gp_run_max for n in checkpoints):
        print(f"\n* GPSampler past {args.gp_run_max} trials: prefilled study (see the docstring)")


if __name__ == "__main__":
    main()
