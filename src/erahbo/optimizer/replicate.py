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

Measured (session 20, ``docs/results/one_seed_models/README.md``) with the recommendation from
2+ seeds: on the continuous benchmark (8 table surrogates, the README example, Figure 1 and
Branin; alpha 1, 10 repetitions, budget 200) ``replicate_within = 0.3`` lowers the pooled IQM
normalized regret after 50 / 100 / 200 runs from 0.518 / 0.349 / 0.272 to 0.409 / 0.254 / 0.153
(RAHBO k=2: 0.488 / 0.329 / 0.256) and wins the mean rank of the final regret (1.27 against
1.73); on the README example (20 studies) the near-duplicate runs fall from 48 % to 5 %, the
Spearman correlation of posterior and true MV rises from 0.72 to 0.83, the largest overestimate
falls from 4.4 to 1.4 and the mean regret from 0.124 to 0.074; Figure 1 and the outlier bowl
improve (29 of 30 near the optimum). 0.1 was worse. Finite tables are unaffected.

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
          default=0.3, paper=0.0, absent=0.0,  # erahbo: replicate within 0.3 lengthscales
          help="A proposal closer than this to an evaluated configuration, in the mean GP's "
               "lengthscales, replicates it (default: the preset's, 0.3 for erahbo; 0: never).",
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
