"""Exact GP posteriors with fixed hyperparameters (paper Sec. 3.1, Appendix A).

Two GPs model the two unknowns of the mean-variance objective ``MV(x) = f(x) - alpha rho^2(x)``:

* the **mean GP** on sample means ``m_hat(x_s)`` with *fixed* per-point noise
  ``min(UCB_var(x_s), rho_max^2) / k_s`` (eq. 19, Appendix A); the noise is not learned;
* the **variance GP**, a homoscedastic GP on unbiased sample variances ``s^2(x_s)`` (ddof=1),
  whose noise variance is a hyperparameter.

Both work on standardized outputs ``(y - mean) / std`` (:func:`standardize`); a fixed noise
given on the raw scale is divided by ``std**2``.  Here: the hyperparameters (:class:`GPHyper`),
the Cholesky factorization with a jitter ladder, the standardization, and :class:`ExactGP`,
the plain posterior the reference engine and the MAP fit build on.  Kernels are in
:mod:`erahbo.gp.kernels`, priors and the MAP fit in :mod:`erahbo.gp.prior` and
:mod:`erahbo.gp.fit`, the round's two GPs in :mod:`erahbo.gp.round`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
from scipy.linalg import cho_solve, lapack, solve_triangular

from erahbo.gp.kernels import kernel, kernel_grad_x

__all__ = [
    "ExactGP",
    "GPHyper",
    "posterior_grad",
    "robust_cholesky",
    "standardize",
]


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
    amax = max(float(y.max()), -float(y.min()))  # max |y|
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
    v = _trsv(L, k, False)  # (n,) L^{-1} k
    w = _trsv(L, v, True)  # K^{-1} k
    return float(k @ alpha), float(max(1.0 - v @ v, 0.0)), dk.T @ alpha, -2.0 * (dk.T @ w)


def _trsv(L: np.ndarray, b: np.ndarray, transposed: bool) -> np.ndarray:
    """``L^{-1} b`` (or ``L^{-T} b``) for a lower-triangular ``L (n, n)`` and ``b (n,)``.

    The LAPACK call :func:`scipy.linalg.solve_triangular` makes, without its input checks (the
    polish calls it four times per gradient): a C-ordered ``L`` is passed as its transpose.
    """
    if L.flags.f_contiguous:
        x, info = lapack.dtrtrs(L, b, lower=1, trans=int(transposed))
    else:
        x, info = lapack.dtrtrs(L.T, b, lower=0, trans=int(not transposed))
    if info != 0:
        raise np.linalg.LinAlgError(f"posterior_grad: triangular solve failed (info={info})")
    return x
