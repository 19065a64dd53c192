"""The kriging believer: choosing a configuration while others are still being trained.

Beyond the paper, which evaluates one configuration at a time.  With several configurations in
flight (``n_parallel > 1``), the next one is chosen on the *kriging believer* model
(Ginsbourger et al., 2010): every pending configuration that has no data yet is added to
``D_{t-1}`` as if its seeds had returned what the models expect, ``ybar = mu_f(x)`` and
``s2 = mu_var(x)`` with ``k`` its pending seeds (under ``var_noise = "log"``, the sample
variance whose bias-corrected log is the posterior mean of ``log rho^2``).  The posterior
means stay put while the uncertainty around the pending points collapses, so
``UCB^f - alpha LCB^var`` (eq. 8) moves to other regions instead of proposing the same point
twice.

The fantasies serve the choice only: ``B_t``, ERAHBO's stopping rule and the recommendation use
the real data.  The believer model is built by the round's own engine: the fast engine extends
a copy of its caches by the pending rows, the reference engine refactors.
"""

from __future__ import annotations

import numpy as np

from erahbo.gp.bounds import to_variance
from erahbo.gp.fast import FastModel
from erahbo.gp.reference import ReferenceRound
from erahbo.gp.round import RoundModel, RoundSettings
from erahbo.gp.variance_noise import log_bias

__all__ = ["believer_round"]


def believer_round(
    rm: RoundModel,
    X: np.ndarray,
    ybar: np.ndarray,
    s2: np.ndarray,
    k: np.ndarray,
    pending_u: np.ndarray,
    pending_k: np.ndarray,
    settings: RoundSettings,
    candidates: np.ndarray | None = None,
    fast: FastModel | None = None,
) -> RoundModel:
    """Round model on the data plus believed observations at the pending configurations.

    Parameters
    ----------
    rm : RoundModel
        The round model on the real data (its posterior means give the believed values).
    X, ybar, s2, k : numpy.ndarray
        The real data: ``(n, dim)`` configurations and ``(n,)`` sample means, variances, seeds.
    pending_u : numpy.ndarray
        ``(p, dim)`` pending configurations not in ``X``.
    pending_k : numpy.ndarray
        ``(p,)`` their pending seeds.
    settings : RoundSettings
        The fixed hyperparameters (not refitted on the fantasies).
    candidates : numpy.ndarray or None
        ``(m, dim)`` finite candidate table.
    fast : FastModel or None
        The fast engine's caches on ``X`` (None: the reference engine).

    Returns
    -------
    RoundModel
        A round model of the same engine on the ``n + p`` points.
    """
    P = np.atleast_2d(np.asarray(pending_u, dtype=float))
    mu_f, _, mu_v, _ = rm.predict(P)
    kp = np.asarray(pending_k, dtype=float)
    X_all = np.vstack([X, P])
    ybar_all = np.concatenate([ybar, mu_f])
    if rm.log_var:  # the sample variance whose bias-corrected log is the posterior mean
        fant = to_variance(mu_v + log_bias(kp), None, True)
    else:
        fant = np.maximum(mu_v, 0.0)
    s2_all = np.concatenate([s2, fant])
    k_all = np.concatenate([k, kp])
    if fast is not None:
        return fast.copy().round(X_all, ybar_all, s2_all, k_all)
    return ReferenceRound(X_all, ybar_all, s2_all, k_all, settings, candidates)
