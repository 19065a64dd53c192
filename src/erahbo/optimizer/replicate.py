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
experiments") decide the same question by an integrated-MSE lookahead. With
``replicate_lookahead`` (erahbo's default on a continuous or mixed space, since session 36)
the radius names the candidates and the lookahead chooses among them
(:func:`lookahead_replicate`): the proposal ``u`` or an open configuration within the radius,
whichever's next run most lowers the risk measure's integrated posterior variance
(:mod:`erahbo.gp.lookahead`). A replicate's run tells the mean GP what a run at a new point
would (with the noise eq. 19 gives its seeds) and the variance GP one more seed of its sample
variance, which a new configuration's single seed cannot; so the variance GP's term, weighted
by ``alpha^2`` under MV, favours replicates as ``alpha`` grows, and a proposal that reaches
where the mean GP knows less than at its neighbours stands. Without it (``False``, the rule
before session 36) the nearest open configuration within the radius is always replicated.

Measured (session 20, ``docs/results/one_seed_models/README.md``) with the recommendation from
2+ seeds: on the continuous benchmark (8 table surrogates, the README example, Figure 1 and
Branin; alpha 1, 10 repetitions, budget 200) ``replicate_within = 0.3`` lowers the pooled IQM
normalized regret after 50 / 100 / 200 runs from 0.518 / 0.349 / 0.272 to 0.409 / 0.254 / 0.153
(RAHBO k=2: 0.488 / 0.329 / 0.256) and wins the mean rank of the final regret (1.27 against
1.73); on the README example (20 studies) the near-duplicate runs fall from 48 % to 5 %, the
Spearman correlation of posterior and true MV rises from 0.72 to 0.83, the largest overestimate
falls from 4.4 to 1.4 and the mean regret from 0.124 to 0.074; Figure 1 and the outlier bowl
improve (29 of 30 near the optimum). 0.1 was worse. Finite tables are unaffected.
The lookahead within 0.3 (session 36; 11 tasks, 20 repetitions, alpha 1 / 3 / 10, two
repetition sets, paired with the nearest rule): pooled IQM after 100 runs lower in six of six
cells, after 200 in four (alpha 10 set 1 0.102 -> 0.083), after 50 level; on the README
example's held-out seeds 100-139 Spearman 0.961 -> 0.967, largest overestimate 1.303 -> 1.055,
``B_t`` above the optimum in 11 -> 8 of 40, regret 0.059 -> 0.056. A radius of 0.5 with it
replicates more: better at alpha 10, worse at alpha 3.

A part of a strategy (:mod:`erahbo.optimizer.strategy`), read by
:meth:`erahbo.optimizer.rounds.RoundModels.choose`.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from erahbo.validation import Param, by_space, check_real, flag

__all__ = ["N_REFERENCE", "PARAMS", "check", "lookahead_of", "lookahead_replicate",
           "nearest_replicate"]


def _radius(name: str, value: Any) -> float:
    """Rule: a real in ``[0, 3]`` (0: off)."""
    v = check_real(name, value)
    if not 0.0 <= v <= 3.0:
        raise ValueError(
            f"{name}={value!r} must be in [0, 3] (a distance in the mean GP's lengthscales "
            "under which a proposal replicates an evaluated configuration; 0: never)")
    return v


def lookahead_of(o: Any, finite: bool = False) -> bool:
    """``replicate_lookahead`` in force (:func:`erahbo.validation.by_space`): given by name,
    that value; otherwise on for ERAHBO under ``preset="default"`` on a continuous or mixed
    space, off elsewhere (a finite table's proposals are its rows: nothing to replicate into).

    >>> from erahbo.optimizer.options import Options
    >>> lookahead_of(Options(budget=100)), lookahead_of(Options(budget=100), finite=True)
    (True, False)
    """
    return bool(by_space(o, "replicate_lookahead", finite, False, True, False))


#: The replication part's options (:class:`erahbo.validation.Param`).
PARAMS = (
    Param("replicate_within", float, _radius,
          default=0.3, paper=0.0, absent=0.0,  # erahbo: replicate within 0.3 lengthscales
          help="A proposal closer than this to an evaluated configuration, in the mean GP's "
               "lengthscales, replicates it (default: the preset's, 0.3 for erahbo; 0: never).",
          short="rw", label="replicate within {}", form="rw<d>"),
    Param("replicate_lookahead", bool,
          flag("within replicate_within, a replicate only where one more run of it teaches "
               "the models more than the proposal"),
          default=None, paper=None, absent=False, resolve=lookahead_of, by_space=True,
          help="Within replicate_within of evaluated configurations, replicate the one whose "
               "next run most lowers the risk measure's integrated posterior variance, unless "
               "the proposal's run lowers it more (default: the preset's, on for erahbo on a "
               "continuous or mixed space; off: always the nearest).",
          short="rl", label="replication lookahead {}", form="rl0"),
)

#: Reference points of the lookahead's integral (a uniform sample of the unit cube).
N_REFERENCE = 256


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
    d = _open_distances(u, U, lengthscales, closed)
    j = int(np.argmin(d))
    return j if d[j] < radius else None


def _open_distances(u: np.ndarray, U: np.ndarray, lengthscales: np.ndarray,
                    closed: np.ndarray | None) -> np.ndarray:
    """``(n,)`` distances of the rows of ``U (n, dim)`` from ``u (dim,)`` in the lengthscales
    ``(dim,)``; ``inf`` at the ``closed`` rows (both rules' candidates)."""
    d = np.sqrt((((np.asarray(U, dtype=float) - u) / lengthscales) ** 2).sum(axis=1))
    return d if closed is None else np.where(closed, np.inf, d)


def lookahead_replicate(rm: Any, U: np.ndarray, u: np.ndarray, radius: float, risk: Any,
                        rng: np.random.Generator, closed: np.ndarray | None = None) -> int | None:
    """The evaluated row that the proposal ``u`` replicates under the lookahead, or None.

    The candidates are ``u`` and the open rows within ``radius`` of it (in the mean GP's
    lengthscales); the one whose next run most lowers the risk measure's integrated posterior
    variance wins (:func:`erahbo.gp.lookahead.measure_reduction`, over :data:`N_REFERENCE`
    uniform reference points): a row replicates it, ``u`` stands as a new configuration.

    Parameters
    ----------
    rm : erahbo.gp.round.RoundModel
        The round on the data (not the kriging believer's, whose rows include pending
        trials).
    U : numpy.ndarray
        ``(n, dim)`` the evaluated configurations, the round's data rows.
    u : numpy.ndarray
        ``(dim,)`` the acquisition's argmax.
    radius : float
        ``replicate_within`` (0: never).
    risk : erahbo.risk.RiskMeasure
        The decision's risk measure.
    rng : numpy.random.Generator
        Draws the reference points.
    closed : numpy.ndarray of bool, optional
        ``(n,)`` rows that may not be replicated (at their cap, pending).

    Returns
    -------
    int or None
    """
    from erahbo.gp.lookahead import measure_reduction  # numerics, only where it runs

    if radius <= 0.0 or len(U) == 0:
        return None
    U = np.asarray(U, dtype=float)
    if len(U) != rm.n:
        raise ValueError(f"lookahead_replicate: {len(U)} configurations for a round on {rm.n}")
    rows = np.flatnonzero(_open_distances(u, U, rm.settings.hyper_f.lengthscales, closed)
                          < radius)
    if rows.size == 0:
        return None
    _, _, mu_v, sd_v = rm.predict(u[None, :])  # the variance GP at u, its output scale
    noise_u = float(rm.mean_noise((mu_v[0] - rm.mv) / rm.sv, sd_v[0] / rm.sv, 1.0))  # eq. 19, k=1
    k = rm.k[rows]
    f_noise = np.concatenate([[noise_u], rm.D[rows] * k])  # (c,) per-run noise
    t_now = np.asarray(rm.var_noise(k), dtype=float)
    t_next = np.asarray(rm.var_noise(k + 1.0), dtype=float)
    v_gain = np.concatenate([[0.0], np.maximum(1.0 / t_next - 1.0 / t_now, 0.0)])  # (c,)
    R = rng.random((N_REFERENCE, U.shape[1]))
    gain = measure_reduction(rm, U, np.vstack([u[None, :], U[rows]]), f_noise, v_gain, R,
                             risk)
    best = int(np.argmax(gain))
    return None if best == 0 else int(rows[best - 1])
