"""SHA-256 of the optimizer's decisions on fixed scenarios: a refactor must keep them equal.

Each scenario runs a whole study and hashes its history (configuration, seeds, returns, phase,
round) and its rounds table (config, k, stop reason, bounds rounded to 12 significant digits).
Scenarios: the demo's Figure-1 task, Branin and a finite table, each x erahbo / rahbo / gpucb /
random x the fast / reference engine, plus a benchmark replay of the default on two real tables.

    python benchmarks/decision_hashes.py [--out FILE] [--compare FILE] [--quick]

``--compare`` exits 1 when any hash differs from the ones stored in FILE (JSON).  The hashes
are machine-specific (BLAS rounding): compare runs of the same machine only.
"""

from __future__ import annotations

import os

for _v in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_v] = "1"

import argparse  # noqa: E402
import hashlib  # noqa: E402
import json  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

import erahbo  # noqa: E402
from erahbo.objectives.synthetic import (  # noqa: E402
    Figure1Task,
    HeteroscedasticBranin,
    RandomHeteroscedasticTask,
)

METHODS = ("erahbo", "rahbo", "gpucb", "random")
ENGINES = ("fast", "reference")


def _frame_hash(df: pd.DataFrame, drop: tuple[str, ...] = ("wall_time", "worker")) -> str:
    df = df.drop(columns=[c for c in drop if c in df.columns])
    h = hashlib.sha256()
    h.update(",".join(map(str, df.columns)).encode())
    for row in df.itertuples(index=False):
        parts = []
        for v in row:
            if isinstance(v, float | np.floating):
                parts.append("nan" if np.isnan(v) else f"{float(v):.12g}")
            elif isinstance(v, list | tuple | np.ndarray):
                parts.append(repr([f"{float(x):.12g}" if isinstance(x, float | np.floating)
                                   else x for x in v]))
            else:
                parts.append(repr(v))
        h.update(("|".join(parts) + "\n").encode())
    return h.hexdigest()[:16]


def _table_task():
    task = RandomHeteroscedasticTask(dim=3, seed=4)
    C = np.random.default_rng(7).random((60, 3))
    table = pd.DataFrame(C, columns=["a", "b", "c"])

    def objective(config, seed):
        u = np.array([[config["a"], config["b"], config["c"]]])
        z = np.random.default_rng([seed, int(config["a"] * 1e6)]).standard_normal()
        return float(task.f(u)[0] + np.sqrt(task.rho2(u)[0]) * z)

    return table, objective


def scenarios(quick: bool):
    fig1 = Figure1Task()
    branin = HeteroscedasticBranin()
    table, table_obj = _table_task()
    budget = 80 if quick else 160
    for name, space, obj in (("figure1", fig1.space, fig1), ("branin", branin.space, branin),
                             ("table", table, table_obj)):
        for method in METHODS:
            for engine in ENGINES:
                if method == "random" and engine == "reference":
                    continue
                extra = {} if method == "erahbo" else {"k": 4}
                yield (f"{name}/{method}/{engine}", space, obj,
                       dict(method=method, budget=budget, seed=1, engine=engine,
                            raw_samples=128, **extra))
        # the other paths through a round: the paper preset, racing, seed batches, parallel
        # trials (kriging believer), a beta_stop schedule, failures
        for tag, kw in (("paper", {"preset": "paper", "k_init": 2}),
                        ("race", {"stopping": "race", "k_min": 2}),  # sample variances
                        ("batch", {"seed_batch": 2}),
                        ("parallel", {"n_parallel": 2, "seed_batch": 2}),
                        ("schedule", {"schedule": "exponential", "beta_stop": 1.0})):
            yield (f"{name}/erahbo-{tag}", space, obj,
                   dict(method="erahbo", budget=budget, seed=2, raw_samples=128, **kw))


def ask_tell(obj, space, journal=None, stop_at=None, **kw) -> erahbo.Optimizer:
    """A deterministic ask/tell loop: keep ``n_parallel`` trials pending, tell the oldest."""
    opt = erahbo.Optimizer(space, journal=journal, **kw)
    pending: list = []
    while True:
        while len(pending) < opt.options.n_parallel and (t := opt.ask()) is not None:
            pending.append(t)
        if not pending or (stop_at is not None and opt.n_evals >= stop_at):
            return opt
        t = pending.pop(0)
        opt.tell(t, [obj(t.config, s) for s in t.seeds])


def run(quick: bool) -> dict[str, str]:
    out: dict[str, str] = {}
    for key, space, obj, kw in scenarios(quick):
        t0 = time.time()
        if kw.get("n_parallel", 1) > 1:
            res = ask_tell(obj, space, **kw).result()
        else:
            res = erahbo.optimize(obj, space, **kw)
        out[key + "/history"] = _frame_hash(res.history)
        out[key + "/rounds"] = _frame_hash(res.rounds)
        print(f"{key:32s} {out[key + '/history']} {out[key + '/rounds']} "
              f"{time.time() - t0:5.1f}s", file=sys.stderr)
    # a journaled study stopped after 40 runs and resumed (replay), then run to its end
    fig1 = Figure1Task()
    with tempfile.TemporaryDirectory() as tmp:
        j = Path(tmp) / "study.db"
        kw = dict(method="erahbo", budget=120, seed=3, raw_samples=128)
        ask_tell(fig1, fig1.space, journal=j, stop_at=40, **kw).close()
        opt = ask_tell(fig1, fig1.space, journal=j, **kw)
        res = opt.result()
        opt.close()
        out["resume/history"] = _frame_hash(res.history)
        out["resume/rounds"] = _frame_hash(res.rounds)
        print(f"resume {out['resume/history']} {out['resume/rounds']}", file=sys.stderr)
    # a benchmark replay of the default on two real tables (user protocol)
    data = Path(__file__).resolve().parents[1] / "data" / "arlbench"
    with tempfile.TemporaryDirectory() as tmp:
        from typer.testing import CliRunner

        from erahbo.cli import app
        tasks = [str(data / "dqn_cc_cartpole.parquet"), str(data / "ppo_cc_pendulum.parquet")]
        r = CliRunner().invoke(app, ["benchmark", *tasks, "--protocol", "user", "--methods",
                                     "erahbo", "--repetitions", "2", "--budget",
                                     "150" if quick else "300", "--workers", "1", "--out",
                                     tmp, "--no-report"])
        if r.exit_code != 0:
            raise SystemExit(r.output)
        for f in sorted(Path(tmp).rglob("*.parquet")):
            df = pd.read_parquet(f)
            out["benchmark/" + str(f.relative_to(tmp))] = _frame_hash(df)
            print(f"benchmark/{f.relative_to(tmp)} {out['benchmark/' + str(f.relative_to(tmp))]}",
                  file=sys.stderr)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path)
    ap.add_argument("--compare", type=Path)
    ap.add_argument("--quick", action="store_true")
    a = ap.parse_args()
    hashes = run(a.quick)
    if a.out:
        a.out.write_text(json.dumps(hashes, indent=1, sort_keys=True) + "\n")
    if a.compare:
        old = json.loads(a.compare.read_text())
        bad = sorted(k for k in set(old) | set(hashes) if old.get(k) != hashes.get(k))
        for k in bad:
            print(f"DIFFERS {k}: {old.get(k)} -> {hashes.get(k)}")
        print(f"{len(hashes) - len(bad)} of {len(set(old) | set(hashes))} hashes equal")
        raise SystemExit(1 if bad else 0)


if __name__ == "__main__":
    main()
