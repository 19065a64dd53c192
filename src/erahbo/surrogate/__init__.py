"""Round models: the two GPs of a BO round, in two engines with the same answers.

* :mod:`erahbo.surrogate.base` — :class:`RoundModel` (what a round answers), its settings,
  ``Sigma_hat``'s standardized noise and the inner loop's Gaussian update;
* :mod:`erahbo.surrogate.reference` — plain GPs refactored per query (the test oracle);
* :mod:`erahbo.surrogate.fast` — cached kernels, incremental variance GP, pruned argmax;
* :mod:`erahbo.surrogate.believer` — the kriging believer of ``n_parallel > 1``;
* :mod:`erahbo.surrogate.fit` — MAP hyperparameters of both GPs.

Every bound the round models report comes from :mod:`erahbo.acquisition`.
"""

from __future__ import annotations

import numpy as np

from erahbo.surrogate.base import InnerBounds, RoundModel, RoundSettings, fixed_noise, observe
from erahbo.surrogate.fast import FastModel, FastRound
from erahbo.surrogate.fit import fit_hyperparameters
from erahbo.surrogate.reference import ReferenceRound

__all__ = [
    "ENGINES",
    "FastModel",
    "FastRound",
    "InnerBounds",
    "ReferenceRound",
    "RoundModel",
    "RoundSettings",
    "fit_hyperparameters",
    "fixed_noise",
    "make_engine",
    "make_round",
    "observe",
]

ENGINES = ("fast", "reference")


def make_engine(
    engine: str, settings: RoundSettings, candidates: np.ndarray | None = None
) -> FastModel | None:
    """State kept across rounds by ``engine``: the fast engine's caches, or None (reference)."""
    return FastModel(settings, candidates) if engine == "fast" else None


def make_round(
    engine: str, state: FastModel | None, X, ybar, s2, k, settings: RoundSettings,
    candidates=None,
) -> RoundModel:
    """Round model of the chosen engine (``state``: from :func:`make_engine`).

    ``X (n, dim)`` are the evaluated configurations, ``ybar, s2, k (n,)`` their pooled sample
    means, variances and seed counts, ``candidates (m, dim)`` the finite table (or None).
    """
    if engine == "reference":
        return ReferenceRound(X, ybar, s2, k, settings, candidates)
    return state.round(X, ybar, s2, k)
