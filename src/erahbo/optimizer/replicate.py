"""Replication or exploration: a proposal within the model's resolution of an evaluated
configuration is a replicate of it (issue 37).

On a continuous space the acquisition's argmax (eq. 8) can land a hair away from a
configuration already evaluated: the mean GP cannot tell the two apart (their correlation is
about 1), yet as two configurations each holds one seed and neither gives the variance GP a
sample variance. Measured on the README's example (``benchmarks/readme_truth.py``, the
default before this part): 58 % of the runs went to configurations within 0.05 of an earlier
one; eleven one-seed near-duplicates whose returns spread from -0.75 to -2.27 were read as
precise (the variance GP, with no sample variance there, extrapolated a small one), so the
mean GP fitted their scatter with a steep function whose posterior mean sat near +0.9, far
above every run it saw, and set ``B_t`` above the true optimum.

The rule: when the argmax ``u`` lies within ``replicate_within`` of an evaluated configuration
``x_j``, in the mean GP's lengthscales,

    d(u, x_j) = || (u - x_j) / ell_f ||_2 < replicate_within,

the round runs ``x_j`` again (its next seed) instead of a new configuration: ``x_j``'s runs pool
into a sample mean and a sample variance, and the stopping rule (eq. 12) then decides its
seeds as for any configuration. At ``d = 0.3`` the RBF kernel's correlation is ``exp(-d^2 / 2)
= 0.956``. Configurations at their seed cap and pending ones are never the target (a
re-selection would be refused); then the new configuration stands. Finite tables are left
alone (their rows are the user's configurations), and so are the random design's rounds.

Binois et al. 2019 ("Replication or exploration? Sequential design for stochastic simulation
experiments") decide the same question by an integrated-MSE lookahead; this is its cheap
geometric form, at the resolution where the lookahead always replicates.

Measured (session 20, ``docs/results/one_seed_models/README.md``), with the recommendation and
``B_t`` from configurations with 2+ seeds: at ``replicate_within = 0.3`` the README example's
runs on near-duplicates fall from 44 % to 6 %, the Spearman correlation of posterior and true
MV rises from 0.77 to 0.84, the largest overestimate falls from 3.4 to 1.3 and ``B_t`` rises
above the true optimum in 4 of 20 studies instead of 8; Figure 1's mean regret halves (0.026 ->
0.013, 10 of 10 quiet either way). But the README example's regret is worse in 15 of 20 paired
studies (mean 0.085 -> 0.106; its peak in ``lr`` is sharper than the mean GP's lengthscale, so
the resolution the rule replicates at is too coarse there), and 0.1 is no better. It meets
issue 37's robustness targets (outliers near the optimum in 26 of 30 studies, every estimate
inside the returns) where nothing else does. The default stays 0 (off) until the continuous
surrogates decide it.

A part of a strategy (:mod:`erahbo.optimizer.strategy`), read by
:meth:`erahbo.optimizer.rounds.RoundModels.choose`.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from erahbo.validation import Param, check_real

__all__ = ["PARAMS", "check", "nearest_replicate"]


def _radius(name: str, value: Any) -> float:
    """Rule: a real in ``[0, 3]`` (0: off)."""
    v = check_real(name, value)
    if not 0.0 <= v <= 3.0:
        raise ValueError(
            f"{name}={value!r} must be in [0, 3] (a distance in the mean GP's lengthscales "
            "under which a proposal replicates an evaluated configuration; 0: never)")
    return v


#: The replication part's option (:class:`erahbo.validation.Param`).
PARAMS = (
    Param("replicate_within", float, _radius,
          default=0.0, paper=0.0, absent=0.0,  # measured, not adopted yet (module docstring)
          help="A proposal closer than this to an evaluated configuration, in the mean GP's "
               "lengthscales, replicates it (default 0: never; 0.3 is the measured option).",
          short="rw", label="replicate within {}", form="rw<d>"),
)


def check(o: Any, given: set[str]) -> None:
    """Replication within a radius combines with any other option (nothing to refuse)."""


def nearest_replicate(u: np.ndarray, U: np.ndarray, lengthscales: np.ndarray, radius: float,
                      closed: np.ndarray | None = None) -> int | None:
    """The evaluated row that the proposal ``u`` replicates, or None.

    Parameters
    ----------
    u : numpy.ndarray
        ``(dim,)`` the acquisition's argmax.
    U : numpy.ndarray
        ``(n, dim)`` the evaluated configurations.
    lengthscales : numpy.ndarray
        ``(dim,)`` the mean GP's lengthscales.
    radius : float
        ``replicate_within`` (0: never).
    closed : numpy.ndarray of bool, optional
        ``(n,)`` rows that may not be replicated (at their cap, pending).

    Returns
    -------
    int or None
        The nearest open row within ``radius``.
    """
    if radius <= 0.0 or len(U) == 0:
        return None
    d = np.sqrt((((np.asarray(U, dtype=float) - u) / lengthscales) ** 2).sum(axis=1))  # (n,)
    if closed is not None:
        d = np.where(closed, np.inf, d)
    j = int(np.argmin(d))
    return j if d[j] < radius else None
