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
From :data:`SINGLE_ROWS` data rows on, the fast engine's ascents run on single-precision copies
of its factors (:class:`erahbo.gp.single.SingleRound`, a third of the memory traffic): only
their paths change, the starts and the end points are scored by the round model, so the result
is the best, by the exact acquisition, of the raw set and the end points.  From
:data:`LOCKSTEP_ROWS` data rows on, the polishes run in lockstep (:func:`polish_all`): the same
end points, each GP's Cholesky factor read for all the starts while it is in the cache.
"""

from __future__ import annotations

import threading

import numpy as np
from scipy.optimize import minimize

from erahbo.gp.fast import FastRound
from erahbo.gp.round import RoundModel
from erahbo.gp.screen import top_points
from erahbo.gp.single import SingleRound
from erahbo.risk import RiskLike

__all__ = ["LOCKSTEP_ROWS", "SINGLE_ROWS", "continuous_argmax", "polish", "polish_all"]

LOCKSTEP_ROWS = 1500  # from this many data rows on, the polishes share their gradient requests
# From this many data rows on, the fast engine's polish ascends on single-precision copies of
# the factors (erahbo.gp.single): the ascents' end points, not the choice among them, may then
# differ from the double-precision ones. Far above the decision hashes' studies (<= 160 rows);
# the polish's solves are then most of a round (n = 1000: argmax 74 -> 52 ms; n = 2000: the
# polish 400 of 550 ms in double, see benchmarks/local_polish_probe.py)
SINGLE_ROWS = 1000


def continuous_argmax(
    rm: RoundModel,
    space,
    risk: RiskLike,
    X_eval: np.ndarray,
    seed: int,
    raw_samples: int = 512,
    n_polish: int = 5,
    forbidden: np.ndarray | None = None,
    prune: bool = True,
) -> tuple[np.ndarray, float]:
    """Approximate argmax of ``UCB_f - alpha * LCB_var`` (eq. 8; the measure ``risk`` of
    ``UCB_f`` and ``LCB_var``) over a continuous space.

    Parameters
    ----------
    rm : RoundModel
        The round's models.
    space : erahbo.space.SearchSpace
        Continuous or mixed space (not a finite table).
    risk : erahbo.risk.RiskMeasure or float
        The decision's risk measure (a float: MV's ``alpha``; 0 for GP-UCB).
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
        idx, v, _ = top_points(rm, U, risk, max(n_polish, 1), ok, _known_rows(rm, U, len(R)))
        vals[idx] = v
    else:
        vals = np.where(ok, rm.acquisition(U, risk), -np.inf)  # (p,)
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
    if isinstance(rm, FastRound) and rm.n >= SINGLE_ROWS:  # the end points are scored by rm
        stand_in = SingleRound(rm)
        polished = polish_all(stand_in, starts, mask, risk, ftol=stand_in.ftol(risk))
    else:
        polished = polish_all(rm, starts, mask, risk)
    P = space.project(np.asarray(polished))  # (n_polish, dim)
    pv = np.where(allowed(P), rm.acquisition(P, risk), -np.inf)
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
    rm: RoundModel, u0: np.ndarray, mask: np.ndarray, risk: RiskLike, maxiter: int = 50,
    ftol: float | None = None,
) -> np.ndarray:
    """L-BFGS-B ascent of the acquisition (eq. 8) from ``u0 (dim,)`` over the columns in ``mask``.

    The value and gradient come from :meth:`RoundModel.acquisition_grad`; the other columns stay
    at ``u0``'s values. ``ftol``: L-BFGS-B's relative decrease that ends the ascent (None: its
    default). Returns the ``(dim,)`` end point, clipped to the unit cube.
    """
    free = np.flatnonzero(mask)
    if free.size == 0:
        return u0.copy()

    def neg(z: np.ndarray) -> tuple[float, np.ndarray]:
        u = u0.copy()
        u[free] = z
        val, grad = rm.acquisition_grad(u, risk)
        return -val, -grad[free]

    options = {"maxiter": maxiter} if ftol is None else {"maxiter": maxiter, "ftol": ftol}
    res = minimize(neg, u0[free], jac=True, method="L-BFGS-B",
                   bounds=[(0.0, 1.0)] * free.size, options=options)
    u = u0.copy()
    if np.all(np.isfinite(res.x)):
        u[free] = np.clip(res.x, 0.0, 1.0)
    return u


def polish_all(
    rm: RoundModel, starts: list[np.ndarray], mask: np.ndarray, risk: RiskLike,
    maxiter: int = 50, ftol: float | None = None,
) -> list[np.ndarray]:
    """:func:`polish` from each of ``starts`` (``(dim,)`` each): the same end points.

    On the fast engine (or its single-precision stand-in, :class:`SingleRound`) from
    :data:`LOCKSTEP_ROWS` data rows on, the ascents run in lockstep: each in a thread of its own
    that runs only while the others wait (coroutines: one at a time), until it asks for a
    gradient; the requests of all of them are then answered at once by the model's
    ``acquisition_grads``, which reads each GP's Cholesky factor for every point while it is in
    the cache (at n = 2000 the two factors are 64 MB in double precision, 32 MB in single; one
    point after the other, each gradient read them from memory). Every ascent gets the values
    and gradients it would get alone, so its path and end point are the same.
    """
    if len(starts) < 2 or not isinstance(rm, (FastRound, SingleRound)) or rm.n < LOCKSTEP_ROWS:
        return [polish(rm, s, mask, risk, maxiter, ftol) for s in starts]
    ascents = [_Ascent(s, mask, risk, maxiter, ftol) for s in starts]
    try:
        for a in ascents:
            a.thread.start()
            a.resume(None)
        while live := [a for a in ascents if a.request is not None]:
            answers = rm.acquisition_grads([a.request for a in live], risk)
            for a, answer in zip(live, answers, strict=True):
                a.resume(answer)
    finally:
        for a in ascents:
            if a.thread.ident is None:
                continue  # never started
            if not a.ended:  # an error in the gradients, or an interrupt: end it
                a.abort = True
                a.resume(None)
            a.thread.join()
    for a in ascents:
        if a.error is not None:
            raise a.error
    return [a.result for a in ascents]


class _Aborted(Exception):
    """Ends an ascent whose lockstep was given up."""


class _Ascent:
    """One :func:`polish` run as a coroutine by :func:`polish_all`: it stands for the round
    model, so its ``acquisition_grad`` hands the point over (``request``) and waits."""

    def __init__(self, u0: np.ndarray, mask: np.ndarray, risk: RiskLike, maxiter: int,
                 ftol: float | None) -> None:
        self.request: np.ndarray | None = None
        self.answer: tuple[float, np.ndarray] | None = None
        self.result: np.ndarray | None = None
        self.error: BaseException | None = None
        self.abort = False
        self.ended = False
        # binary semaphores as plain locks, taken at the start (a handoff is a release by
        # one thread and an acquire by the other; a Semaphore costs several times as much)
        self._go, self._back = threading.Lock(), threading.Lock()
        self._go.acquire()
        self._back.acquire()
        self.thread = threading.Thread(target=self._main,
                                       args=(u0, mask, risk, maxiter, ftol), daemon=True)

    def acquisition_grad(self, u: np.ndarray, risk: RiskLike) -> tuple[float, np.ndarray]:
        self.request = u
        self._back.release()
        self._go.acquire()
        if self.abort:
            raise _Aborted
        return self.answer

    def resume(self, answer: tuple[float, np.ndarray] | None) -> None:
        """Run the ascent until its next request or its end (then ``request`` is None)."""
        self.answer, self.request = answer, None
        self._go.release()
        self._back.acquire()

    def _main(self, u0: np.ndarray, mask: np.ndarray, risk: RiskLike, maxiter: int,
              ftol: float | None) -> None:
        self._go.acquire()
        try:
            if not self.abort:
                self.result = polish(self, u0, mask, risk, maxiter, ftol)
        except _Aborted:
            pass
        except BaseException as exc:  # handed to the caller of polish_all
            self.error = exc
        self.request, self.ended = None, True
        self._back.release()
