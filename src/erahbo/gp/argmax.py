"""Acquisition maximization (eq. 8) over a continuous (mixed) search space.

Finite tables are searched exactly by the round models (``select``); here the continuous case.

Scrambled Sobol raw samples (valid encodings from the space) plus the evaluated
configurations are scored exactly; the best ``n_polish`` start an L-BFGS-B ascent over the
freely movable (float/log) encoded columns, the others staying at their valid start values;
the result is projected onto valid encodings (ints rounded, one-hot by argmax, inactive
conditionals imputed) and scored again.  The best point wins.

On the fast engine the raw set is scored with pruning (:func:`erahbo.gp.screen.top_points`):
only the points whose upper bound can reach the ``n_polish``-th best value are scored exactly.
The best point, the starts and the result are those of scoring every point (``prune=False``).
"""

from __future__ import annotations

import numpy as np
from scipy.optimize import minimize

from erahbo.gp.fast import FastRound
from erahbo.gp.round import RoundModel
from erahbo.gp.screen import top_points

__all__ = ["continuous_argmax", "polish"]


def continuous_argmax(
    rm: RoundModel,
    space,
    weight: float,
    X_eval: np.ndarray,
    seed: int,
    raw_samples: int = 512,
    n_polish: int = 5,
    forbidden: np.ndarray | None = None,
    prune: bool = True,
) -> tuple[np.ndarray, float]:
    """Approximate argmax of ``UCB_f - weight * LCB_var`` over a continuous space.

    Parameters
    ----------
    rm : RoundModel
        The round's models.
    space : erahbo.space.SearchSpace
        Continuous or mixed space (not a finite table).
    weight : float
        Risk weight (``alpha``; 0 for GP-UCB).
    X_eval : numpy.ndarray
        ``(n, dim)`` evaluated configurations (candidates for a repeat).
    seed : int
        Seed of the Sobol raw samples.
    raw_samples, n_polish : int
        Number of raw samples and of L-BFGS-B starts.
    forbidden : numpy.ndarray or None
        ``(r, dim)`` encodings never to return (infeasible configurations).
    prune : bool
        Score the raw set with pruning where the round model supports it (the fast engine);
        False scores every point (same result, the reference for tests).

    Returns
    -------
    u : numpy.ndarray
        ``(dim,)`` valid encoding of the chosen point.
    value : float
        Its acquisition value.
    """
    R = space.sobol_unit(raw_samples, seed)  # (raw_samples, dim)
    U = np.vstack([R, X_eval]) if len(X_eval) else R

    def allowed(P: np.ndarray) -> np.ndarray:  # (q, dim) -> (q,) bool
        if forbidden is None or not len(forbidden):
            return np.ones(len(P), dtype=bool)
        return ~(P[:, None, :] == forbidden[None, :, :]).all(-1).any(1)

    ok = allowed(U)
    vals = np.full(len(U), -np.inf)
    if prune and isinstance(rm, FastRound):  # the fast engine: only the points that can win
        idx, v, _ = top_points(rm, U, weight, max(n_polish, 1), ok, _known_rows(rm, U, len(R)))
        vals[idx] = v
    else:
        vals = np.where(ok, rm.acquisition(U, weight), -np.inf)  # (p,)
    order = np.argsort(-vals, kind="stable")
    best_u, best_v = U[order[0]].copy(), float(vals[order[0]])
    mask = np.asarray(space.continuous_mask, dtype=bool)
    if n_polish <= 0 or not mask.any():
        return best_u, best_v
    starts: list[np.ndarray] = []
    for i in order:
        if len(starts) == n_polish:
            break
        if not any(np.array_equal(U[i], s) for s in starts):
            starts.append(U[i])
    polished = [polish(rm, s, mask, weight) for s in starts]
    P = space.project(np.asarray(polished))  # (n_polish, dim)
    pv = np.where(allowed(P), rm.acquisition(P, weight), -np.inf)
    j = int(np.argmax(pv))
    if pv[j] > best_v:
        best_u, best_v = P[j].copy(), float(pv[j])
    return best_u, best_v


def _known_rows(rm: RoundModel, U: np.ndarray, start: int) -> np.ndarray:
    """``(p,)`` data row of ``rm`` that each row of ``U`` is (rows ``start:`` are the evaluated
    configurations when they match the round's first rows), -1 for none."""
    known = np.full(len(U), -1, dtype=np.intp)
    X_eval = U[start:]
    if len(X_eval) <= rm.n and np.array_equal(X_eval, rm.X[: len(X_eval)]):
        known[start:] = np.arange(len(X_eval))
    return known


def polish(
    rm: RoundModel, u0: np.ndarray, mask: np.ndarray, weight: float, maxiter: int = 50
) -> np.ndarray:
    """L-BFGS-B ascent of the acquisition (eq. 8) from ``u0 (dim,)`` over the columns in ``mask``.

    The value and gradient come from :meth:`RoundModel.acquisition_grad`; the other columns stay
    at ``u0``'s values. Returns the ``(dim,)`` end point, clipped to the unit cube.
    """
    free = np.flatnonzero(mask)
    if free.size == 0:
        return u0.copy()

    def neg(z: np.ndarray) -> tuple[float, np.ndarray]:
        u = u0.copy()
        u[free] = z
        val, grad = rm.acquisition_grad(u, weight)
        return -val, -grad[free]

    res = minimize(neg, u0[free], jac=True, method="L-BFGS-B",
                   bounds=[(0.0, 1.0)] * free.size, options={"maxiter": maxiter})
    u = u0.copy()
    if np.all(np.isfinite(res.x)):
        u[free] = np.clip(res.x, 0.0, 1.0)
    return u
