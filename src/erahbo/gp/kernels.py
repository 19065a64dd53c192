"""ARD kernels on the unit cube with unit signal variance (paper Sec. 3.1, Appendix A).

RBF ``exp(-r^2 / 2)`` or Matern-5/2 ``(1 + sqrt5 r + 5 r^2 / 3) exp(-sqrt5 r)`` with
``r^2 = sum_j (x_j - x'_j)^2 / l_j^2``; no output scale (as BoTorch since 0.12).  Besides the
kernel matrix: its gradient in one input (the acquisition's L-BFGS-B polish) and its derivatives
in the log lengthscales (the MAP fit).
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["KERNELS", "k_of_d2", "kernel", "kernel_and_dlogls", "kernel_grad_x"]

KERNELS = ("rbf", "matern52")
_SQRT5 = math.sqrt(5.0)


def _scaled(X: np.ndarray, ls: np.ndarray) -> np.ndarray:
    """Points ``(n, d)`` divided by the lengthscales ``(d,)``."""
    return np.asarray(X, dtype=float) / ls


def _sqdist(A: np.ndarray, B: np.ndarray) -> np.ndarray:
    """Squared Euclidean distances ``(n1, n2)`` between the rows of two scaled arrays."""
    d2 = (A * A).sum(1)[:, None] + (B * B).sum(1)[None, :] - 2.0 * (A @ B.T)
    np.maximum(d2, 0.0, out=d2)
    return d2


def k_of_d2(d2: np.ndarray, kind: str) -> np.ndarray:
    """Kernel values from scaled squared distances ``r^2`` (any shape; same shape out)."""
    if kind == "rbf":
        return np.exp(-0.5 * d2)
    r = np.sqrt(d2)
    return (1.0 + _SQRT5 * r + (5.0 / 3.0) * d2) * np.exp(-_SQRT5 * r)


def kernel(
    X1: np.ndarray,
    X2: np.ndarray,
    lengthscales: np.ndarray,
    kind: str = "rbf",
    out: np.ndarray | None = None,
    work: np.ndarray | None = None,
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
    out, work : numpy.ndarray or None
        ``(n1, n2)`` C-contiguous float arrays: the result is written into ``out``, ``work``
        is overwritten (both given: no array of that size is allocated, the same values as
        without them; a caller that keeps them between calls spares the memory system).

    Returns
    -------
    numpy.ndarray
        ``(n1, n2)`` kernel values in ``(0, 1]`` (``out`` when given).
    """
    if kind not in KERNELS:
        raise ValueError(f"kernel: kind={kind!r} must be one of {KERNELS}")
    ls = np.asarray(lengthscales, dtype=float)
    A, B = _scaled(X1, ls), _scaled(X2, ls)
    if out is None or work is None:
        return k_of_d2(_sqdist(A, B), kind)
    # the operations of _sqdist and k_of_d2 in the same order, in place
    np.add((A * A).sum(1)[:, None], (B * B).sum(1)[None, :], out=out)
    np.matmul(A, B.T, out=work)
    work *= 2.0
    np.subtract(out, work, out=out)
    np.maximum(out, 0.0, out=out)
    if kind == "rbf":
        out *= -0.5
        return np.exp(out, out=out)
    r = np.sqrt(out, out=work)  # (1 + sqrt5 r + 5/3 d2) exp(-sqrt5 r), as k_of_d2
    r *= _SQRT5
    out *= 5.0 / 3.0
    np.add(out, 1.0 + r, out=out)
    np.negative(r, out=r)
    out *= np.exp(r, out=r)
    return out


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
