"""A failure mode in the returns: variance observations that pool the evidence of failures.

The numerics of the option ``failure_prior_runs`` (:mod:`erahbo.optimizer.failure_prior`,
issue 37). RL returns are often a mixture of runs that never learn (an atom at the
environment's floor: MountainCar's -200, Acrobot's -500) and runs that learn. A configuration
that fails in 11 % of its seeds shows no failure in 10 seeds a third of the time; its sample
variance then reads only the learning mode, and the variance GP believes it (the PPO
MountainCar needle, sessions 39-50).

Here a run *fails* when its return sits on the study's lowest return (an atom: at least
``MIN_ATOM_SHARE`` of all runs there). A configuration's failure probability gets a Beta prior
from its neighbours' failures (kernel weights with the mean GP's lengthscales, its own runs
left out, at most ``strength`` pseudo-runs), and its variance observation is the mixture's
variance at the posterior mean failure probability::

    v_i = pi_i (1 - pi_i) (m1_i - m0)^2 + pi_i v0 + (1 - pi_i) v1_i

with ``m0, v0`` the failure mode's mean and variance (the atom: ``m0`` the floor, ``v0 = 0``)
and ``m1_i, v1_i`` the configuration's learning runs' mean and variance (the study's pooled
within-learning variance when it learned once). A configuration none of whose runs learned
keeps its sample variance: its learning mode would be its neighbours', which it never showed;
borrowing it gave the configurations that reliably fail (at a high ``alpha`` the optimum of
PPO MountainCar) a variance they do not have (session 52).
"""

from __future__ import annotations

import numpy as np

from erahbo.gp.kernels import kernel

MIN_ATOM_SHARE = 0.05  # the floor is a failure mode when at least this share of runs sit on it
ATOM_TOL = 1e-9  # relative to the range of the returns


def failure_variances(returns: list[list[float]], U: np.ndarray, s2: np.ndarray,
                      k: np.ndarray, lengthscales: np.ndarray, strength: float) -> np.ndarray:
    """``(n,)`` variance observations; ``s2 (n,)`` itself when the returns have no floor atom.

    ``returns``: each configuration's runs; ``U (n, d)`` encodings; ``k (n,)`` seed counts;
    ``lengthscales (d,)``; ``strength`` the prior's largest weight in pseudo-runs (the
    posterior mean failure probability is read; its upper quantile at ``Phi(1)`` was measured
    worse on the PPO MountainCar needle, session 51).
    """
    s2 = np.asarray(s2, dtype=float)
    n = len(returns)
    if n < 2 or strength <= 0:
        return s2
    flat = np.concatenate([np.asarray(r, dtype=float) for r in returns])
    lo, hi = float(flat.min()), float(flat.max())
    if hi <= lo:
        return s2
    tol = ATOM_TOL * (hi - lo)
    fails = [np.asarray(r, dtype=float) <= lo + tol for r in returns]
    nf = np.array([f.sum() for f in fails], dtype=float)  # (n,)
    kk = np.asarray(k, dtype=float)
    if nf.sum() < max(3.0, MIN_ATOM_SHARE * flat.size) or nf.sum() == flat.size:
        return s2
    learn = [np.asarray(r, dtype=float)[~f] for r, f in zip(returns, fails, strict=True)]
    nl = kk - nf  # (n,) learning runs
    sum1 = np.array([x.sum() for x in learn])  # (n,)
    ss1 = np.array([((x - x.mean()) ** 2).sum() if x.size else 0.0 for x in learn])
    W = kernel(U, U, lengthscales)  # (n, n) the RBF weights of the neighbours
    np.fill_diagonal(W, 0.0)
    runs_nb = W @ kk  # (n,) neighbours' weighted runs
    pi_nb = np.where(runs_nb > 0, (W @ nf) / np.maximum(runs_nb, 1e-300), nf.sum() / kk.sum())
    s = np.minimum(float(strength), runs_nb)  # (n,) prior pseudo-runs
    a = nf + s * pi_nb + 1e-9  # (n,) Beta(a, b): the failure probability's posterior
    b = nl + s * (1.0 - pi_nb) + 1e-9
    pi = a / (a + b)  # (n,) its mean
    # the learning mode at each row that learned: its own runs' mean, and their variance (the
    # study's pooled within-learning variance where it learned once)
    pooled_learn = nl.sum() > 1
    v1_pool = ss1.sum() / max(nl.sum() - np.count_nonzero(nl), 1.0) if pooled_learn else 0.0
    m1 = sum1 / np.maximum(nl, 1.0)
    v1 = np.where(nl >= 2, ss1 / np.maximum(nl - 1.0, 1.0), v1_pool)
    out = pi * (1.0 - pi) * (m1 - lo) ** 2 + (1.0 - pi) * v1
    use = (kk >= 2) & (nl >= 1) & np.isfinite(out)  # replicated rows that learned at least once
    return np.where(use, out, s2)
