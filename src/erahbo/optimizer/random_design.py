"""The random design: interleaved random rounds early in a study, an erahbo extension.

A part of a strategy (:mod:`erahbo.optimizer.strategy`); its options are declared in
:data:`PARAMS` (checks, both presets, CLI flags, method names ``erahbo-ri<N>`` and
``erahbo-top<q>``: :mod:`erahbo.optimizer.parts`).

While fewer than ``random_interleave`` runs of the budget are spent, every other BO round
(the first, third, ... after the initial design) evaluates a random configuration instead of
the acquisition's argmax. Such a round spends the replication rule's first seeds (``k_min``
for ERAHBO, ``k`` for the fixed-k methods) and no more: ERAHBO's stopping rule does not
extend it. After that many runs every round is the acquisition's again.

The configuration is drawn uniformly from the ``random_top`` share of the candidates with
the highest acquisition (eq. 8): the unevaluated rows of a finite table, or ``raw_samples``
uniform points of a continuous space. ``random_top = 1`` draws uniformly from all of them
(an unevaluated row, or one point of the unit cube), as SMAC's random design does.

Why random rounds: with ``k_init = 2`` the GPs' hyperparameters are first fitted on 5
configurations x 2 seeds (refit from 10 configurations on: ``refit_growth``); in 6-14
dimensions the first acquisition rounds then exploit a poor model. Random search with 3 seeds
per configuration reaches a rough answer as early as any GP method on the real tables (it
spreads its runs), then stalls; interleaving random
configurations early gives the GPs a spread of data while the study is young (the defaults
study, docs/results/defaults_study, "Interleaved random rounds": a length of 50 runs).
That length was chosen on finite tables; on a continuous or mixed space erahbo's default is
20 runs (:func:`interleave_of`; docs/results/one_seed_models, "Session 32").

Why the best tenth (``random_top = 0.1``, session 14): on eight real tables at 40
repetitions it reached regret 0.25 in 45.5 runs instead of 58 (Vizier processing) and 49.5
instead of 54 (alpha 1), with the IQM regret as good or better; the draw is one of dozens of
rows, not the argmax, so the spread stays. Measured, not explained: the best tenth holds
good rows more often than a uniform draw only on the mountain-car PPO tables, elsewhere about
as often, so the gain comes through the search that follows. The synthetic suite, where good
configurations are commoner, pays a little (IQM regret after 500 runs 0.039 -> 0.046).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from erahbo.validation import Param, by_space, int_at_least, share

if TYPE_CHECKING:
    from erahbo.gp import RoundModel
    from erahbo.optimizer.state import StudyState

__all__ = ["CONTINUOUS_RUNS", "PARAMS", "TABLE_RUNS", "RandomRounds", "check", "interleave_of",
           "is_random_round", "random_configuration", "top_share"]

#: erahbo's ``random_interleave`` on a finite table (the unevaluated rows are the pool).
TABLE_RUNS = 50
#: erahbo's ``random_interleave`` on a continuous (or mixed) space.
CONTINUOUS_RUNS = 20


def interleave_of(o: Any, finite: bool = False) -> int:
    """The random design's length in force (``random_interleave`` resolved).

    Given by name: that value. Otherwise 0 but for ERAHBO under ``preset="default"``:
    :data:`TABLE_RUNS` on a finite table, :data:`CONTINUOUS_RUNS` on a continuous or mixed
    space (``finite`` False: a host without a candidate table, the Optuna sampler).
    Measured (docs/results/one_seed_models, session 32): 20 random runs instead of 50 lower
    the regret after 50 runs on the continuous benchmark in six of six cells and leave it
    level later, while on the real tables they lean the other way after 100-250 runs.

    >>> from erahbo.optimizer.options import Options
    >>> interleave_of(Options(budget=100)), interleave_of(Options(budget=100), finite=True)
    (20, 50)
    >>> interleave_of(Options(budget=100, random_interleave=30), finite=True)
    30
    >>> interleave_of(Options(method="rahbo", budget=100), finite=True)
    0
    """
    return int(by_space(o, "random_interleave", finite, TABLE_RUNS, CONTINUOUS_RUNS, 0))


#: The random design's options (:class:`erahbo.validation.Param`).
PARAMS = (
    Param("random_interleave", int,
          int_at_least(0, " (runs during which every other round is a random configuration; "
                          "0: never)"),
          default=None, paper=None, absent=0, resolve=interleave_of, by_space=True,
          help="Runs during which every other round is a random configuration (default: the "
               f"preset's, for erahbo {TABLE_RUNS} on a finite table and {CONTINUOUS_RUNS} on "
               "a continuous space; 0: never).",
          short="ri", label="random rounds to run {}", form="ri<N>"),
    Param("random_top", float,
          share("the share of the configurations best by the acquisition a random round draws "
                "from; 1: uniform over all", of_all=True),
          default=0.1, paper=1.0, absent=1.0,  # erahbo: drawn from the best tenth by eq. 8
          help="A random round draws from this share of the configurations best by the "
               "acquisition (default: the preset's, 0.1 for erahbo; 1: uniform over all).",
          short="top", label="random rounds from the best {}", form="top<q> (0 < q <= 1)"),
)


def check(o: Any, given: set[str]) -> None:
    """Refuse random-design options that would do nothing (``given``: the options named)."""
    if o.random_interleave and o.method == "random":  # given: random's resolves to 0
        raise ValueError(f"random_interleave={o.random_interleave} interleaves random "
                         "rounds into a model-based search; every round of method='random' "
                         "is random already (drop random_interleave)")
    if o.random_top != 1 and o.method == "random":
        raise ValueError(f"random_top={o.random_top} draws a random round from the "
                         "configurations best by the acquisition; method='random' has no "
                         "acquisition (drop random_top)")
    if "random_top" in given and o.random_top != 1 and not interleave_of(o):
        raise ValueError(
            f"random_top={o.random_top} shapes the random rounds, but random_interleave="
            f"{interleave_of(o)} has none: give random_interleave > 0, or drop random_top")


@dataclass(frozen=True)
class RandomRounds:
    """Which BO rounds the random design takes (the draw: :func:`random_configuration`).

    Parameters
    ----------
    random_interleave : int
        While fewer runs are spent, the odd BO rounds (1, 3, ...) are random (0: never).
    """

    random_interleave: int = 0

    @classmethod
    def from_options(cls, o: Any) -> RandomRounds:
        """The random rounds of validated options."""
        return cls(interleave_of(o))

    def is_round(self, bo_round: int, used: float) -> bool:
        """Whether BO round ``bo_round`` (from 1) is random when ``used`` runs are spent."""
        return is_random_round(bo_round, used, self.random_interleave)


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


def top_share(scores: np.ndarray, share: float) -> np.ndarray:
    """Indices of the ``ceil(share * n)`` highest of ``scores (n,)`` (at least one; ties in
    index order), highest first.

    >>> top_share(np.array([0.1, 0.9, 0.5, 0.7]), 0.5).tolist()
    [1, 3]
    """
    m = max(1, math.ceil(share * scores.size - 1e-9))
    return np.argsort(-scores, kind="stable")[:m]


def random_configuration(
    state: StudyState,
    rm: RoundModel | None,
    allowed: np.ndarray | None,
    rng: np.random.Generator,
    options: Any,
) -> tuple[int | None, np.ndarray, int]:
    """A random round's configuration (and random search's, with ``rm`` None).

    Parameters
    ----------
    state : StudyState
        The study's space, candidates and data.
    rm : RoundModel or None
        The round's model; None (random search, no data yet) or ``options.random_top == 1``:
        a uniform draw (:meth:`StudyState.random_choice`).
    allowed : ndarray of bool, shape (n_candidates,), or None
        Rows that may be proposed (a finite table); None for a continuous space.
    rng : numpy.random.Generator
    options : Options
        ``random_top``, the acquisition's ``weight`` and ``raw_samples``.

    Returns
    -------
    (candidate index or None, encoding ``(dim,)``, config id)
    """
    top = options.random_top
    if rm is None or top >= 1:
        return state.random_choice(allowed, rng)
    C = state.candidates
    if C is not None:
        rows = state.unevaluated_rows(allowed)
        best = rows[top_share(rm.acquisition(C[rows], options.weight), top)]
        cand = int(rng.choice(best))
        return cand, C[cand], cand
    U = state.space.sample_unit(options.raw_samples, rng)
    u = U[int(rng.choice(top_share(rm.acquisition(U, options.weight), top)))]
    return None, u, state.new_id(u)
