"""Interleaved random rounds early in a study (``random_interleave``), an erahbo extension.

While fewer than ``random_interleave`` runs of the budget are spent, every other BO round
(the first, third, ... after the initial design) evaluates a uniformly random configuration
instead of the acquisition's argmax: an unevaluated row of a finite table, or a point of the
unit cube. Such a round spends the policy's first seeds (``k_min`` for ERAHBO, ``k`` for the
fixed-k methods) and no more: it has no models, so ERAHBO's stopping rule does not extend it.
After that many runs every round is the acquisition's again.

Why: with ``k_init = 2`` the GPs' hyperparameters are fitted once on 5 configurations x 2
seeds; in 6-14 dimensions the first acquisition rounds then exploit a poor model. Random
search with 3 seeds per configuration reaches a rough answer as early as any GP method on
the real tables (it spreads its runs), then stalls; interleaving random configurations early
(as SMAC's random design interleaves them throughout) gives the GPs a spread of data while the
study is young. The defaults study measured a length of 50 runs (docs/results/defaults_study,
"Interleaved random rounds").
"""

from __future__ import annotations

__all__ = ["is_random_round"]


def is_random_round(bo_round: int, used: float, random_interleave: int) -> bool:
    """Whether a BO round picks its configuration at random.

    Parameters
    ----------
    bo_round : int
        The round's position among the BO rounds, from 1 (initial-design rounds not counted).
    used : float
        Runs of the budget spent when the round starts (told; the initial design's when it
        counts in the budget).
    random_interleave : int
        Runs during which every other round is random; 0: never.

    Returns
    -------
    bool
        True for the odd rounds (1, 3, 5, ...) while ``used < random_interleave``.

    >>> [is_random_round(t, used=10, random_interleave=50) for t in (1, 2, 3)]
    [True, False, True]
    >>> is_random_round(1, used=50, random_interleave=50)
    False
    """
    return bool(random_interleave) and used < random_interleave and bo_round % 2 == 1
