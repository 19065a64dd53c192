"""The Gaussian processes of RAHBO/ERAHBO: kernels, fit, the round's two GPs, bounds, argmax.

One module per concept, in dependency order:

* :mod:`erahbo.gp.kernels` — ARD RBF / Matern-5/2 kernels and their derivatives;
* :mod:`erahbo.gp.exact` — hyperparameters (:class:`GPHyper`), Cholesky, standardization and
  the plain posterior :class:`ExactGP`;
* :mod:`erahbo.gp.prior` — the lengthscale and noise priors;
* :mod:`erahbo.gp.fit` — the MAP objective and fit, and the hyperparameters of both GPs;
* :mod:`erahbo.gp.bounds` — the paper's numbered equations (bounds, ``Sigma_hat``, ``B_t``, the
  acquisition and the stopping rule), each one function;
* :mod:`erahbo.gp.round` — :class:`RoundModel`, what a round answers (the mean GP with
  per-point noise ``min(UCB^var, rho_max^2) / k`` and the variance GP), its settings and the
  inner loop's Gaussian update;
* :mod:`erahbo.gp.reference` — plain GPs refactored per query (the test oracle);
* :mod:`erahbo.gp.fast` — cached kernels, incremental variance GP, pruned argmax (the default);
* :mod:`erahbo.gp.believer` — the kriging believer of ``n_parallel > 1``;
* :mod:`erahbo.gp.screen` — pruned exact scoring of a point set (the continuous raw set);
* :mod:`erahbo.gp.single` — a single-precision stand-in of a fast round, the polish's search
  direction from 1000 evaluated configurations on;
* :mod:`erahbo.gp.argmax` — the acquisition's argmax over a continuous or mixed space.

Every bound the round models report comes from :mod:`erahbo.gp.bounds`.
"""

from __future__ import annotations

import numpy as np

from erahbo.gp.argmax import continuous_argmax
from erahbo.gp.believer import believer_round
from erahbo.gp.exact import ExactGP, GPHyper
from erahbo.gp.fast import FastModel, FastRound
from erahbo.gp.fit import fit_hyperparameters, fit_map
from erahbo.gp.kernels import KERNELS
from erahbo.gp.reference import ReferenceRound
from erahbo.gp.round import InnerBounds, RoundModel, RoundSettings, fixed_noise, observe

__all__ = [
    "ENGINES",
    "KERNELS",
    "ExactGP",
    "FastModel",
    "FastRound",
    "GPHyper",
    "InnerBounds",
    "ReferenceRound",
    "RoundModel",
    "RoundSettings",
    "believer_round",
    "continuous_argmax",
    "fit_hyperparameters",
    "fit_map",
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
