"""Exact Gaussian processes on the unit cube (paper Sec. 3.1 and Appendix A).

Two GPs model the two unknowns of the mean-variance objective ``MV(x) = f(x) - alpha rho^2(x)``:

* the **mean GP** on sample means ``m_hat(x_s)`` with *fixed* per-point noise
  ``min(UCB_var(x_s), rho_max^2) / k_s`` (eq. 19, Appendix A); the noise is not
  learned;
* the **variance GP**, a homoscedastic GP on unbiased sample variances ``s^2(x_s)`` (ddof=1),
  whose noise variance is a hyperparameter.

Both work on standardized outputs ``(y - mean) / std``; a fixed noise given on the raw scale is
divided by ``std**2`` (:func:`standardize`).  Kernels are RBF or Matern-5/2 with ARD
lengthscales and unit signal variance (no output scale, as BoTorch since 0.12).  Hyperparameters
are MAP estimates under BoTorch's dimension-scaled priors (Hvarfner et al., 2024):
lengthscale ``LogNormal(sqrt(2) + 0.5 ln d, sqrt(3))`` with ``lengthscale >= 0.025``, noise
``LogNormal(-4, 1)`` with ``noise >= 1e-4``.

Everything here is plain NumPy/SciPy; the priors, the likelihood and the MAP fit are in
:mod:`erahbo.prior`, the incremental fast path in :mod:`erahbo.surrogate.fast`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
from scipy.linalg import cho_solve, lapack, solve_triangular

__all__ = [
    "KERNELS",
    "MEAN_NOISE_FLOOR",
    "ExactGP",
    "GPHyper",
    "k_of_d2",
    "kernel",
    "kernel_and_dlogls",
    "kernel_grad_x",
    "posterior_grad",
    "robust_cholesky",
    "standardize",
]

KERNELS = ("rbf", "matern52")
MEAN_NOISE_FLOOR = 1e-6  # floor of the fixed, standardized per-point noise of the mean GP
_SQRT5 = math.sqrt(5.0)


# --------------------------------------------------------------------------- kernels
def _scaled(X: np.ndarray, ls: np.ndarray) -> np.ndarray:
    return np.asarray(X, dtype=float) / ls


def _sqdist(A: np.ndarray, B: np.ndarray) -> np.ndarray:
    """Squared Euclidean distances ``(n1, n2)`` between the rows of two scaled arrays."""
    d2 = (A * A).sum(1)[:, None] + (B * B).sum(1)[None, :] - 2.0 * (A @ B.T)
    np.maximum(d2, 0.0, out=d2)
    return d2


def k_of_d2(d2: np.ndarray, kind: str) -> np.ndarray:
    if kind == "rbf":
        return np.exp(-0.5 * d2)
    r = np.sqrt(d2)
    return (1.0 + _SQRT5 * r + (5.0 / 3.0) * d2) * np.exp(-_SQRT5 * r)


def kernel(
    X1: np.ndarray, X2: np.ndarray, lengthscales: np.ndarray, kind: str = "rbf"
) -> np.ndarray:
    """ARD kernel matrix with unit signal variance.

    Parameters
    ----------
    X1, X2 : numpy.ndarray
        ``(n1, d)`` and ``(n2, d)`` points in the unit cube.
    lengthscales : numpy.ndarray
        ``(d,)`` positive lengthscales.
    kind : {"rbf", "matern52"}
        ``rbf``: ``exp(-r^2 / 2)``; ``matern52``: ``(1 + sqrt5 r + 5 r^2 / 3) exp(-sqrt5 r)``,
        with ``r^2 = sum_j (x_j - x'_j)^2 / l_j^2``.

    Returns
    -------
    numpy.ndarray
        ``(n1, n2)`` kernel values in ``(0, 1]``.
    """
    if kind not in KERNELS:
        raise ValueError(f"kernel: kind={kind!r} must be one of {KERNELS}")
    ls = np.asarray(lengthscales, dtype=float)
    return k_of_d2(_sqdist(_scaled(X1, ls), _scaled(X2, ls)), kind)


def kernel_grad_x(
    x: np.ndarray, X: np.ndarray, lengthscales: np.ndarray, kind: str = "rbf"
) -> tuple[np.ndarray, np.ndarray]:
    """Kernel values ``k(x, X_i)`` and their gradients with respect to ``x``.

    Parameters
    ----------
    x : numpy.ndarray
        ``(d,)`` one point.
    X : numpy.ndarray
        ``(n, d)`` points.
    lengthscales : numpy.ndarray
        ``(d,)``.
    kind : {"rbf", "matern52"}

    Returns
    -------
    k : numpy.ndarray
        ``(n,)`` kernel values.
    dk : numpy.ndarray
        ``(n, d)`` gradient ``d k(x, X_i) / d x``.
    """
    ls = np.asarray(lengthscales, dtype=float)
    diff = (np.asarray(x, dtype=float)[None, :] - X) / ls  # (n, d) scaled differences
    d2 = (diff * diff).sum(1)  # (n,)
    if kind == "rbf":
        k = np.exp(-0.5 * d2)
        dk = -(k[:, None] * diff) / ls
    else:
        r = np.sqrt(d2)
        e = np.exp(-_SQRT5 * r)
        k = (1.0 + _SQRT5 * r + (5.0 / 3.0) * d2) * e
        # dk/dr = -(5/3) r (1 + sqrt5 r) e ; dr/dx = diff / (r ls)  -> r cancels
        dk = -((5.0 / 3.0) * (1.0 + _SQRT5 * r) * e)[:, None] * diff / ls
    return k, dk


def kernel_and_dlogls(X: np.ndarray, ls: np.ndarray, kind: str) -> tuple[np.ndarray, np.ndarray]:
    """``K (n, n)`` and ``dK / d log l_j`` stacked ``(d, n, n)`` (for MAP gradients)."""
    S = X / ls
    sq = (S[:, None, :] - S[None, :, :]) ** 2  # (n, n, d) scaled squared differences
    d2 = sq.sum(-1)
    if kind == "rbf":
        K = np.exp(-0.5 * d2)
        dK = K[None] * np.moveaxis(sq, -1, 0)
    else:
        r = np.sqrt(d2)
        e = np.exp(-_SQRT5 * r)
        K = (1.0 + _SQRT5 * r + (5.0 / 3.0) * d2) * e
        dK = ((5.0 / 3.0) * (1.0 + _SQRT5 * r) * e)[None] * np.moveaxis(sq, -1, 0)
    return K, dK


# --------------------------------------------------------------------------- linear algebra
def robust_cholesky(A: np.ndarray, *, max_tries: int = 8) -> tuple[np.ndarray, float]:
    """Lower Cholesky factor of a symmetric PSD matrix, adding jitter only when needed.

    The jitter ladder is ``0, 1e-10, 1e-9, ..., 1e-3`` times the mean diagonal (at least
    ``1e-300``): the first level that factors wins.

    Parameters
    ----------
    A : numpy.ndarray
        ``(n, n)`` symmetric matrix.
    max_tries : int
        Jitter levels to try after the plain attempt.

    Returns
    -------
    L : numpy.ndarray
        ``(n, n)`` lower-triangular factor of ``A + jitter * I`` (upper part zeroed).
    jitter : float
        The jitter added (0.0 when none).
    """
    A = np.asarray(A, dtype=float)
    n = A.shape[0]
    if n == 0:
        return np.zeros((0, 0)), 0.0
    scale = max(float(np.mean(np.diag(A))), 1e-300)
    for i in range(max_tries + 1):
        jitter = 0.0 if i == 0 else scale * 10.0 ** (-11 + i)
        B = A + jitter * np.eye(n) if jitter else A
        L, info = lapack.dpotrf(B, lower=1, clean=1, overwrite_a=0)
        if info == 0 and np.all(np.isfinite(np.diag(L))):
            return L, jitter
    raise np.linalg.LinAlgError(
        f"robust_cholesky: matrix of size {n} is not positive definite even with jitter "
        f"{scale * 10.0 ** (-11 + max_tries):.3g}; check the inputs for NaN/inf"
    )


def standardize(y: np.ndarray) -> tuple[float, float]:
    """Mean and scale used to standardize outputs, ``(y - mean) / std``.

    ``std`` is the sample standard deviation (ddof=1, as BoTorch's ``Standardize``). When it is
    zero or negligible (fewer than two values, or all equal up to 1e-12 relative), the scale
    falls back to ``max |y|`` (or 1 when all are 0), so the transform stays scale-equivariant:
    multiplying ``y`` by ``c > 0`` multiplies ``mean`` and ``std`` by ``c``.

    Parameters
    ----------
    y : numpy.ndarray
        ``(n,)`` outputs.

    Returns
    -------
    mean, std : float
    """
    y = np.asarray(y, dtype=float)
    if y.size == 0:
        return 0.0, 1.0
    mean = float(y.mean())
    amax = float(np.abs(y).max())
    d = y - mean
    std = math.sqrt(float(d @ d) / (y.size - 1)) if y.size > 1 else 0.0
    if not std > 1e-12 * amax:
        std = amax if amax > 0 else 1.0
    return mean, std


# --------------------------------------------------------------------------- exact GP
@dataclass
class GPHyper:
    """Fixed GP hyperparameters (standardized output scale).

    Attributes
    ----------
    kind : str
        ``"rbf"`` or ``"matern52"``.
    lengthscales : numpy.ndarray
        ``(d,)`` ARD lengthscales on the unit cube.
    noise : float or None
        Homoscedastic noise variance (standardized); ``None`` for the fixed-noise mean GP.
    """

    kind: str
    lengthscales: np.ndarray
    noise: float | None = None
    log_posterior: float = field(default=float("nan"), compare=False)


class ExactGP:
    """Exact GP posterior with fixed hyperparameters and per-point noise (reference path).

    ``K = k(X, X) + diag(noise)`` is factored once; predictions are the latent posterior
    ``mean(x) = k(x, X) K^{-1} y`` and ``var(x) = 1 - k(x, X) K^{-1} k(X, x)``.  Outputs are
    taken as given (standardize them first).

    Parameters
    ----------
    X : numpy.ndarray
        ``(n, d)`` inputs in the unit cube.
    y : numpy.ndarray
        ``(n,)`` standardized outputs.
    noise : float or numpy.ndarray
        Noise variance, scalar or ``(n,)`` per point (standardized scale).
    lengthscales : numpy.ndarray
        ``(d,)``.
    kind : {"rbf", "matern52"}
    """

    def __init__(
        self,
        X: np.ndarray,
        y: np.ndarray,
        noise: float | np.ndarray,
        lengthscales: np.ndarray,
        kind: str = "rbf",
    ) -> None:
        self.X_ = np.atleast_2d(np.asarray(X, dtype=float))  # (n, d)
        self.y_ = np.asarray(y, dtype=float).reshape(-1)  # (n,)
        n = self.X_.shape[0]
        self.noise_ = np.broadcast_to(np.asarray(noise, dtype=float), (n,)).copy()  # (n,)
        self.lengthscales_ = np.asarray(lengthscales, dtype=float)
        self.kind_ = kind
        A = kernel(self.X_, self.X_, self.lengthscales_, kind) + np.diag(self.noise_)
        self.L_, self.jitter_ = robust_cholesky(A)
        self.alpha_ = cho_solve((self.L_, True), self.y_)  # (n,)

    def predict(self, Xs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Posterior mean and variance of the latent function.

        Parameters
        ----------
        Xs : numpy.ndarray
            ``(m, d)`` query points.

        Returns
        -------
        mean, var : numpy.ndarray
            ``(m,)`` each (standardized scale); ``var`` is clipped at 0.
        """
        Ks = kernel(self.X_, np.atleast_2d(Xs), self.lengthscales_, self.kind_)  # (n, m)
        mean = Ks.T @ self.alpha_
        V = solve_triangular(self.L_, Ks, lower=True, check_finite=False)  # (n, m)
        var = np.maximum(1.0 - (V * V).sum(0), 0.0)
        return mean, var

    def predict_grad(self, x: np.ndarray) -> tuple[float, float, np.ndarray, np.ndarray]:
        """Mean and variance at one point ``x (d,)`` with gradients, see :func:`posterior_grad`."""
        return posterior_grad(x, self.X_, self.L_, self.alpha_, self.lengthscales_, self.kind_)


def posterior_grad(
    x: np.ndarray,
    X: np.ndarray,
    L: np.ndarray,
    alpha: np.ndarray,
    lengthscales: np.ndarray,
    kind: str,
) -> tuple[float, float, np.ndarray, np.ndarray]:
    """Latent posterior mean and variance at one point, with their gradients in ``x``.

    Parameters
    ----------
    x : numpy.ndarray
        ``(d,)`` query point.
    X : numpy.ndarray
        ``(n, d)`` training inputs.
    L : numpy.ndarray
        ``(n, n)`` lower Cholesky factor of ``k(X, X) + diag(noise)``.
    alpha : numpy.ndarray
        ``(n,)`` ``(k(X, X) + diag(noise))^{-1} y``.
    lengthscales : numpy.ndarray
        ``(d,)``.
    kind : {"rbf", "matern52"}

    Returns
    -------
    mean, var : float
    dmean, dvar : numpy.ndarray
        ``(d,)`` gradients.
    """
    k, dk = kernel_grad_x(x, X, lengthscales, kind)  # (n,), (n, d)
    v = solve_triangular(L, k, lower=True, check_finite=False)  # (n,)
    w = solve_triangular(L, v, lower=True, trans="T", check_finite=False)  # K^{-1} k
    return float(k @ alpha), float(max(1.0 - v @ v, 0.0)), dk.T @ alpha, -2.0 * (dk.T @ w)
