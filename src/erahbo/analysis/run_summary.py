"""Sentences on how a run spent its seeds, every number read from the run itself.

``erahbo demo`` prints them under its Figure-1 run: a sentence about what happened is computed
from the :class:`erahbo.Result` it describes (its ``rounds``, ``configs`` and ``settings``),
never from what the method usually does.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from erahbo.risk import objective_name

#: What each stop reason of a round means, in a few words
#: (``erahbo.optimizer.replication.STOP_REASONS``).
_REASON_WORDS = {
    "dominated": "its UCB_MV fell below B_t, the incumbent's bound",
    "k_max": "it reached k_max",
    "fixed_k": "its fixed k",
    "random": "a random-design round",
    "max_seeds": "its seed cap",
    "budget": "the budget ran out",
}


def _seeds(n: int) -> str:
    return f"{n} seed{'s' if n != 1 else ''}"


def seeds_per_round(result: Any) -> str:
    """``"300 training runs in 295 rounds; seeds per BO round: 1 seed x 290"``.

    A BO round is one of phase ``bo`` or ``challenger`` (not the initial design).
    """
    r = result.rounds
    ks = r.loc[r["phase"] != "init", "k"].astype(int).tolist()
    counts = ", ".join(f"{_seeds(k)} x {ks.count(k)}" for k in sorted(set(ks))) or "none"
    return f"{result.n_evals} training runs in {len(r)} rounds; seeds per BO round: {counts}"


def seed_story(result: Any) -> str:
    """How the run spent its seeds: the rule, then what it did (every count from ``result``).

    Says how many BO rounds used ``k_min`` seeds (one, by default), the most seeds of a round
    (``k_max``; ``k_max_means`` too when given)
    and of a configuration in all (and which),
    why the rounds ended, the random-design rounds (with the run's ``random_interleave`` and
    ``random_top``) and the challenger rounds.

    Parameters
    ----------
    result : erahbo.Result

    Returns
    -------
    str
    """
    r, c, s = result.rounds, result.configs, result.settings
    k_min, k_max = int(s["k_min"]), int(s["k_max"])
    kmm = s.get("k_max_means")  # a round's most seeds while the means differ (None: k_max)
    means = f" ({kmm} while the configurations differ mostly by their means)" if kmm else ""
    bo = r[r["phase"] != "init"]
    n_bo = len(bo)
    n_fewest = int((bo["k"] == k_min).sum())
    parts = []
    if result.method == "erahbo":
        parts.append("ERAHBO adds seeds to a round's configuration while it may still beat the "
                     f"incumbent, from k_min = {_seeds(k_min)} up to k_max = {k_max}{means}.")
    if n_bo:
        top = c.loc[c["k"].idxmax()] if len(c) else None
        most = (f"; the most seeds any configuration got in all is {int(top['k'])} (config "
                f"{int(top['config_id'])})" if top is not None else "")
        parts.append(f"In this run {n_fewest} of {n_bo} BO rounds used {_seeds(k_min)} "
                     f"(k_min), the most seeds one round used is {int(bo['k'].max())} "
                     f"(k_max = {k_max}){most}.")
        reasons = bo["stop_reason"].fillna("none").astype(str).value_counts()
        name = objective_name(getattr(result, "measure", None))
        words = {k: v.replace("UCB_MV", f"UCB_{name}") for k, v in _REASON_WORDS.items()}
        if kmm:
            words["k_max"] += f", or k_max_means = {kmm} while the means differ"
        told = [f"{n} {why}" + (f" ({words[why]})" if why in words else "")
                for why, n in reasons.items()]
        parts.append("BO rounds ended: " + ", ".join(told) + ".")
    else:
        parts.append("In this run the budget ended before any BO round.")
    random = bo[bo["stop_reason"] == "random"]
    if len(random):
        ks = sorted(set(random["k"].astype(int)))
        each = " or ".join(map(str, ks))
        parts.append(
            f"{len(random)} round{'s' if len(random) > 1 else ''} (while fewer than "
            f"{int(s.get('random_interleave') or 0)} runs were spent) tried a random "
            f"configuration with {each} "
            f"seed{'s' if ks != [1] else ''}, drawn from {_pool(s.get('random_top', 1.0))} "
            "(the random design).")
    n_ch = int((bo["phase"] == "challenger").sum())
    if n_ch:
        parts.append(f"{n_ch} round{'s' if n_ch > 1 else ''} re-ran a configuration whose own "
                     "runs beat the recommendation's (challenger rounds).")
    return " ".join(parts)


def _pool(top: Any) -> str:
    """Where a random round draws from: ``0.1`` -> ``"the best 10 % of the candidates by the
    acquisition"``."""
    x = float(top if top is not None else 1.0)
    if x >= 1:
        return "all the candidates"
    return f"the best {np.round(100 * x, 1):g} % of the candidates by the acquisition"
