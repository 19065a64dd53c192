"""The ERAHBO Optuna sampler's decisions on a fixed study: a speed-up must keep them equal.

One in-memory study of ``bench_optuna.py``'s objective (4 parameters, the CleanRL pattern,
``k_max = 10``), ``--trials`` trials with a fixed seed; per trial its parameters, seeds,
round kind, state, reported values and erahbo's user attributes, and the study's
recommendation. Prints the SHA-256 of the decisions (everything but the MV estimates and
bounds); ``--out`` stores it all (JSON), ``--compare`` exits 1 and names the first trial that
differs from a stored file: decisions exactly, estimates and bounds within 1e-9 (a model's
prediction at two configurations at once rounds differently from two predictions). The
values depend on BLAS rounding: compare runs of the same machine only.

    python benchmarks/optuna_decisions.py --out before.json      # on the old source tree
    python benchmarks/optuna_decisions.py --compare before.json  # after the change
"""

from __future__ import annotations

import os

for _v in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_v] = "1"

import argparse  # noqa: E402
import hashlib  # noqa: E402
import json  # noqa: E402
import sys  # noqa: E402
import warnings  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_optuna import K_MAX, make_objective  # noqa: E402

ESTIMATES = ("mv", "lcb_mv", "ucb_mv")  # (erahbo_)mv, ... : model outputs, not decisions


def _same(a: Any, b: Any, name: str = "") -> bool:
    """Equal, the estimates within 1e-9 (relative to max(1, |value|))."""
    if name.removeprefix("erahbo_") in ESTIMATES and isinstance(a, float) \
            and isinstance(b, float):
        return abs(a - b) <= 1e-9 * max(1.0, abs(b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k], k) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    return a == b


def _decisions_only(v: Any, name: str = "") -> Any:
    if isinstance(v, dict):
        return {k: _decisions_only(x, k) for k, x in v.items()
                if k.removeprefix("erahbo_") not in ESTIMATES}
    if isinstance(v, list):
        return [_decisions_only(x) for x in v]
    return v


def decisions(n_trials: int, seed: int) -> list[Any]:
    """One entry per trial (its decisions and annotations), then the recommendation."""
    import optuna

    from erahbo.integrations.optuna import ERAHBOSampler

    optuna.logging.set_verbosity(optuna.logging.ERROR)
    warnings.simplefilter("ignore")
    sampler = ERAHBOSampler(seed=seed, k_max=K_MAX)
    study = optuna.create_study(direction="maximize", sampler=sampler, pruner=sampler.pruner)
    spent: list[float] = [0.0]
    study.optimize(make_objective(True, spent), n_trials=n_trials)
    out: list[Any] = []
    for t in study.get_trials(deepcopy=False):
        out.append({"number": t.number, "state": t.state.name, "params": t.params,
                    "phase": t.system_attrs.get("erahbo:phase"),
                    "values": [t.intermediate_values[s] for s in sorted(t.intermediate_values)],
                    "user_attrs": t.user_attrs})
    out.append({"recommendation": study.user_attrs.get("erahbo_recommendation")})
    return json.loads(json.dumps(out))  # JSON values (tuples as lists)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--trials", type=int, default=100)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", default=None, help="store the decisions here (JSON)")
    ap.add_argument("--compare", default=None, help="compare with decisions stored by --out")
    args = ap.parse_args()
    got = decisions(args.trials, args.seed)
    text = json.dumps(_decisions_only(got), sort_keys=True)
    print(f"{args.trials} trials, seed {args.seed}: decisions "
          f"{hashlib.sha256(text.encode()).hexdigest()[:16]}")
    if args.out:
        Path(args.out).write_text(json.dumps(got, sort_keys=True))
    if args.compare:
        want = json.loads(Path(args.compare).read_text())
        diff = next((i for i, (a, b) in enumerate(zip(got, want, strict=False))
                     if not _same(a, b)),
                    None if len(got) == len(want) else min(len(got), len(want)))
        if diff is None:
            print(f"equal to {args.compare} ({len(want) - 1} trials)")
            return
        print(f"DIFFERENT from {args.compare} at entry {diff}:\n  now    "
              f"{got[diff] if diff < len(got) else None}\n  stored "
              f"{want[diff] if diff < len(want) else None}")
        sys.exit(1)


if __name__ == "__main__":
    main()
