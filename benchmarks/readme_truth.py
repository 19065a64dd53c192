"""Does the model learn from one-seed runs? The README example against its known truth (#37).

The README's objective (``README.md``, "Use it from Python"), as written::

    return = -|log10(lr) + 3| + 0.5 [act == relu] + N(0, (0.1 + batch / 512)^2)

so ``f = -|log10 lr + 3| + 0.5 [relu]``, ``rho^2 = (0.1 + batch / 512)^2`` (``gamma`` plays no
part) and ``MV = f - alpha rho^2``: optimum ``lr = 1e-3``, ``relu``, ``batch = 16``, ``MV* = 0.5 -
(0.1 + 16/512)^2 = 0.4828`` at alpha 1.

At the end of each study (``erahbo.optimize`` with the README's settings, budget 200) it prints
the four figures issue 37 asks of the default:

``spearman``
    Spearman correlation of the posterior MV (``Result.configs.mv``) with the true MV over the
    evaluated configurations (target: mean >= 0.85);
``over``
    the largest overestimate, ``max(posterior MV - true MV)`` over them (target: <= 1.0);
``bt_over``
    the largest ``B_t - MV*`` over the study's rounds (target: never above 0, i.e. ``B_t``
    never above the true optimum; which configuration sets it and why:
    ``benchmarks/bound_setter.py``);
``regret``
    ``MV* - MV(recommendation)`` in return units (target: mean <= 0.06).

Also: the share of runs spent within ``0.05`` (unit-cube distance) of an earlier
configuration (``dup``, near-duplicates), the share of BO rounds that stopped at one seed
(``one``), and the seeds of the recommendation (``k_rec``). The last line counts the studies
that meet each target (rates over many seeds: five seeds move with any change of trajectory).

Run (one core; a few seconds per study)::

    OPENBLAS_NUM_THREADS=1 PYTHONPATH=src python benchmarks/readme_truth.py \
        [--seeds 0 1 2 3 4] [--budget 200] [--alpha 1] [--set NAME=VALUE ...]

``--set`` passes options to ``erahbo.optimize`` (e.g. ``--set k_min=2 k_max=10``; a repeated
``--set`` adds to the list).
"""

from __future__ import annotations

import argparse
import json
import math
import random
import time

import numpy as np
from scipy.stats import spearmanr

import erahbo
from erahbo.diagnostics import near_duplicates

SPACE = {"lr": ("log", 1e-5, 1e-1), "gamma": ("float", 0.9, 0.9999),
         "batch": ("int", 16, 256), "act": ("cat", ["tanh", "relu"])}
NEAR_DUPLICATE = 0.05  # unit-cube distance under which a new configuration repeats an old one
#: The README's settings of ``erahbo.optimize`` (with ``budget``, ``seed``, ``alpha``).
SETTINGS = {"method": "erahbo", "beta": 2.5, "k_min": 1, "k_max": 20}
# issue 37's targets: mean Spearman at least, largest overestimate and mean regret at most
SPEARMAN_MIN, OVER_MAX, REGRET_MAX = 0.85, 1.0, 0.06


def objective(config: dict, seed: int) -> float:
    """The README's objective, as written there."""
    rng = random.Random(seed)
    good = -abs(math.log10(config["lr"]) + 3.0)
    return (good + (0.5 if config["act"] == "relu" else 0.0)
            + rng.gauss(0, 0.1 + config["batch"] / 512))


def true_moments(lr: np.ndarray, batch: np.ndarray,
                 act: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(f, rho^2)`` of the objective, shapes ``(n,)`` each."""
    f = -np.abs(np.log10(lr) + 3.0) + 0.5 * (act == "relu")
    return f, (0.1 + batch / 512.0) ** 2


def true_mv(lr: np.ndarray, batch: np.ndarray, act: np.ndarray, alpha: float) -> np.ndarray:
    """``MV = f - alpha rho^2`` of the objective, shapes ``(n,)`` each."""
    f, rho2 = true_moments(lr, batch, act)
    return f - alpha * rho2


def mv_star(alpha: float) -> float:
    """``MV*``: ``lr = 1e-3``, ``relu``, ``batch = 16`` (rho^2 grows with the batch)."""
    return float(true_mv(np.array([1e-3]), np.array([16]), np.array(["relu"]), alpha)[0])


def near_duplicate_share(space: erahbo.SearchSpace, history, radius: float) -> float:
    """Share of runs whose configuration is new and within ``radius`` of an earlier one."""
    first = history.drop_duplicates("config_id")
    U = np.array([space.encode({k: r[k] for k in SPACE}) for _, r in first.iterrows()])
    near, _ = near_duplicates(U, radius)
    ids = set(first["config_id"].to_numpy()[near])
    return float(history["config_id"].isin(ids).mean())


def one_study(seed: int, budget: int, alpha: float, options: dict) -> dict:
    """One study with the README's settings; the four figures and the context ones."""
    space = erahbo.SearchSpace(SPACE)
    t0 = time.perf_counter()
    settings = {**SETTINGS, **options}
    r = erahbo.optimize(objective, space, budget=budget, seed=seed, alpha=alpha, **settings)
    c = r.configs
    truth = true_mv(c["lr"].to_numpy(float), c["batch"].to_numpy(float),
                    c["act"].to_numpy(str), alpha)
    star = mv_star(alpha)
    inc = r.incumbent
    rec = float(true_mv(np.array([inc["lr"]]), np.array([inc["batch"]]),
                        np.array([inc["act"]]), alpha)[0])
    rounds = r.rounds[r.rounds["phase"] != "initial"]
    bo = rounds.drop_duplicates("iteration", keep="last")
    return {
        "seed": seed,
        "spearman": float(spearmanr(c["mv"].to_numpy(float), truth).statistic),
        "over": float(np.nanmax(c["mv"].to_numpy(float) - truth)),
        "bt_over": float(np.nanmax(rounds["B_t"].to_numpy(float)) - star),
        "regret": star - rec,
        "k_rec": int(c.loc[c["rank"] == 1, "k"].iloc[0]),
        "dup": near_duplicate_share(space, r.history, NEAR_DUPLICATE),
        "one": float((bo["k_total"] == 1).mean()) if len(bo) else float("nan"),
        "configs": len(c),
        "seconds": time.perf_counter() - t0,
    }


def _value(text: str):
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return text


def add_set_option(parser: argparse.ArgumentParser) -> None:
    """``--set NAME=VALUE ...``: options of ``erahbo.optimize`` (JSON values), several after one
    flag or over repeated flags (the benchmarks that pass options take this one flag)."""
    parser.add_argument("--set", nargs="+", action="extend", default=[], metavar="NAME=VALUE",
                        help="options of erahbo.optimize (JSON values; several after one "
                             "--set, or --set repeated)")


def set_options(parser: argparse.ArgumentParser, pairs: list[str]) -> dict:
    """The options of ``--set``'s ``NAME=VALUE`` pairs; a pair without ``=`` or a name given
    twice ends the script with a message naming it (``parser.error``)."""
    options: dict = {}
    for pair in pairs:
        name, eq, text = pair.partition("=")
        if not eq or not name:
            parser.error(f"--set {pair!r}: give NAME=VALUE, e.g. --set k_min=2")
        if name in options:
            parser.error(f"--set {name} is given twice ({options[name]!r} and {_value(text)!r}); "
                         "give it once")
        options[name] = _value(text)
    return options


def main(argv: list[str] | None = None) -> list[dict]:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2, 3, 4])
    p.add_argument("--budget", type=int, default=200)
    p.add_argument("--alpha", type=float, default=1.0)
    add_set_option(p)
    a = p.parse_args(argv)
    options = set_options(p, a.set)
    rows = [one_study(s, a.budget, a.alpha, options) for s in a.seeds]
    cols = ["seed", "spearman", "over", "bt_over", "regret", "k_rec", "dup", "one", "configs",
            "seconds"]
    print(f"README example, budget {a.budget}, alpha {a.alpha}, options {options or 'default'}")
    print("| " + " | ".join(cols) + " |")
    print("|" + "---|" * len(cols))
    for r in rows:
        print("| " + " | ".join(f"{r[c]:.3f}" if isinstance(r[c], float) else str(r[c])
                                for c in cols) + " |")
    mean = {c: float(np.mean([r[c] for r in rows])) for c in cols[1:]}
    print(f"mean spearman {mean['spearman']:.3f} (>= {SPEARMAN_MIN}), max over "
          f"{max(r['over'] for r in rows):.3f} (<= {OVER_MAX}), B_t above MV* in "
          f"{sum(r['bt_over'] > 0 for r in rows)} of {len(rows)} (0), mean regret "
          f"{mean['regret']:.3f} (<= {REGRET_MAX}); near-duplicate runs {mean['dup']:.2f}, "
          f"one-seed rounds {mean['one']:.2f}")
    print(target_rates(rows))
    return rows


def target_rates(rows: list[dict]) -> str:
    """The four targets as per-study rates: over many seeds (e.g. held-out seeds 100-139) a
    rate says what five seeds cannot."""
    n = len(rows)
    return (f"per study: spearman >= {SPEARMAN_MIN} in "
            f"{sum(r['spearman'] >= SPEARMAN_MIN for r in rows)} of {n}, over <= {OVER_MAX} in "
            f"{sum(r['over'] <= OVER_MAX for r in rows)} of {n}, B_t <= MV* in "
            f"{sum(r['bt_over'] <= 0 for r in rows)} of {n}, regret <= {REGRET_MAX} in "
            f"{sum(r['regret'] <= REGRET_MAX for r in rows)} of {n}")


if __name__ == "__main__":
    main()
