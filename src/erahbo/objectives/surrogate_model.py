"""The seed-distribution model behind :mod:`erahbo.objectives.surrogate` (arrays only).

A table holds ``S`` returns of each of ``N`` configurations (encodings ``X``, ``(N, d)``). The
model describes the returns of a configuration ``u`` as a mixture of four components:

* two **atoms**: the table's lowest return ``lo`` and its highest ``hi`` (on a min-max scale 0
  and 1), which RL tables hit exactly and often (Acrobot's -500 and MountainCar's -200: the
  episode never ended; CartPole's cap of 500);
* two continuous modes split by a **threshold** ``t``: *fail* (``lo < y <= t``) and *learn*
  (``t < y < hi``); :func:`otsu_threshold` puts ``t`` where the table's pooled returns
  separate best (between-class variance, Otsu 1979), in the gap between runs that never learn
  and runs that do on a bimodal table.

Configuration ``i`` of the table has ``C_ik`` runs in component ``k`` and, per continuous
mode, a quantile function (the mode's sorted returns interpolated onto ``M`` knots at levels
``0, 1/(M-1), ..., 1``). At ``u``:

* the probability of component ``k`` is the kernel-weighted share of its runs,
  ``pi_k(u) = sum_i w_i(u) C_ik / S``;
* a mode's quantile function is the run-weighted kernel average of the table's quantile
  functions of that mode (weights ``w_i(u) C_ik``, normalized): a Wasserstein barycenter, so
  the mode's location, spread and skew move smoothly with ``u``;
* ``w(u)`` is a Nadaraya-Watson softmax of ``-1/2 sum_c (u_c - X_ic)^2 / l_c^2`` with one
  lengthscale per hyperparameter (its one-hot columns share it), fitted by
  :func:`fit_lengthscales` on the leave-one-out error of the predicted mean and standard
  deviation of every table configuration (analytic gradient).

A return draws the component from one uniform number and, in a continuous mode, the level
``v`` of ``Q_k(u, v)`` from a second one. ``Q_k(u, .)`` is piecewise linear, so the
mixture's mean and variance are exact sums over the knots (:func:`mixture_moments`). The four
components are ordered (``lo <= fail <= t < learn <= hi``), so the mixture's quantile function
is theirs laid end to end (:func:`mixture_quantile`), and the mean of its lower ``q`` tail,
``CVaR_q = (1/q) int_0^q Q(v) dv``, is exact too: the atoms' shares and each mode's partial
integral of a piecewise-linear function (:func:`mixture_tail_mean`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.optimize import minimize

__all__ = ["MixtureModel", "fit_lengthscales", "mixture_moments", "mixture_quantile",
           "mixture_tail_mean", "mode_moments", "otsu_threshold"]

KNOTS = 33  # quantile levels per mode: 0, 1/32, ..., 1
LOG_BOUNDS = (np.log(0.02), np.log(50.0))  # lengthscales on the unit cube


def otsu_threshold(returns: np.ndarray) -> float:
    """The split of the pooled returns that maximizes the between-class variance.

    Candidates are the 1st..99th percentiles; both classes keep at least one return.
    """
    y = np.sort(np.asarray(returns, dtype=float).ravel())  # (n,)
    cands = np.unique(np.quantile(y, np.linspace(0.01, 0.99, 99)))
    c = np.concatenate([[0.0], np.cumsum(y)])  # (n + 1,) prefix sums
    n = y.size
    best, best_t = -1.0, float(cands[0])
    for t in cands:
        k = int(np.searchsorted(y, t, side="right"))  # returns <= t
        if k in (0, n):
            continue
        m0, m1 = c[k] / k, (c[n] - c[k]) / (n - k)
        score = k * (n - k) * (m0 - m1) ** 2
        if score > best:
            best, best_t = score, float(t)
    return best_t


def _knots(values: np.ndarray, levels: np.ndarray) -> np.ndarray:
    """Sorted ``values`` interpolated at ``levels`` (type-7 quantiles); zeros if empty."""
    v = np.sort(values)
    if v.size == 0:
        return np.zeros(levels.size)
    if v.size == 1:
        return np.full(levels.size, v[0])
    return np.interp(levels, np.linspace(0.0, 1.0, v.size), v)


def mode_moments(Q: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Exact ``E[y]`` and ``E[y^2]`` of piecewise-linear quantile functions ``Q`` ``(n, M)``."""
    h = 1.0 / (Q.shape[1] - 1)
    a, b = Q[:, :-1], Q[:, 1:]
    return h * 0.5 * (a + b).sum(1), h / 3.0 * (a * a + a * b + b * b).sum(1)


def _quad_grad(Q: np.ndarray) -> np.ndarray:
    """Gradient of the second moment of :func:`mode_moments` with respect to ``Q``."""
    h = 1.0 / (Q.shape[1] - 1)
    a, b = Q[:, :-1], Q[:, 1:]
    g = np.zeros_like(Q)
    g[:, :-1] += h / 3.0 * (2 * a + b)
    g[:, 1:] += h / 3.0 * (a + 2 * b)
    return g



def _forward(L: np.ndarray, C: np.ndarray, Q0: np.ndarray, Q1: np.ndarray
             ) -> tuple[np.ndarray, np.ndarray, np.ndarray, tuple[np.ndarray, ...]]:
    """Mixture at logits ``L`` ``(n, N)``: probabilities ``(n, 4)``, q0, q1, the weights.

    A configuration without runs of a mode weighs 1e-300 there (its knots are zeros): it only
    counts where no configuration with runs of the mode is within a factor e^-690.
    """
    S = C.sum(1)  # (N,)
    w = _softmax(L)
    w0 = _softmax(L + np.log(np.maximum(C[:, 1], 1e-300))[None, :])
    w1 = _softmax(L + np.log(np.maximum(C[:, 2], 1e-300))[None, :])
    return w @ (C / S[:, None]), w0 @ Q0, w1 @ Q1, (w, w0, w1)


def _softmax(L: np.ndarray) -> np.ndarray:
    """Row-wise softmax (every row has a finite entry)."""
    E = np.exp(L - L.max(axis=1, keepdims=True))
    return E / E.sum(axis=1, keepdims=True)


def mixture_moments(P: np.ndarray, q0: np.ndarray, q1: np.ndarray, lo: float, hi: float
                    ) -> tuple[np.ndarray, np.ndarray]:
    """Exact mean and variance of the mixture: ``P`` ``(n, 4)`` probabilities of (atom
    ``lo``, fail mode ``q0``, learn mode ``q1``, atom ``hi``)."""
    e0, s0 = mode_moments(q0)
    e1, s1 = mode_moments(q1)
    f = P[:, 0] * lo + P[:, 1] * e0 + P[:, 2] * e1 + P[:, 3] * hi
    m2 = P[:, 0] * lo * lo + P[:, 1] * s0 + P[:, 2] * s1 + P[:, 3] * hi * hi
    return f, np.maximum(m2 - f * f, 0.0)


def _partial_integral(Q: np.ndarray, s: np.ndarray) -> np.ndarray:
    """``int_0^s Q(v) dv`` of piecewise-linear quantile functions ``Q`` ``(n, M)`` on the
    levels ``0, h, ..., 1`` at ``s`` ``(n,)`` in ``[0, 1]``: exact (full segments by the
    trapezoid rule, the last one in part)."""
    M = Q.shape[1]
    h = 1.0 / (M - 1)
    seg = h * 0.5 * (Q[:, :-1] + Q[:, 1:])  # (n, M - 1)
    cum = np.concatenate([np.zeros((len(Q), 1)), np.cumsum(seg, axis=1)], axis=1)  # (n, M)
    j = np.clip(np.floor(s / h).astype(int), 0, M - 2)  # (n,) the segment holding s
    rows = np.arange(len(Q))
    t = np.clip(s - j * h, 0.0, h)  # (n,) the part of segment j below s
    a, b = Q[rows, j], Q[rows, j + 1]
    return cum[rows, j] + t * a + 0.5 * t * t * (b - a) / h


def _shares(P: np.ndarray, v: np.ndarray) -> np.ndarray:
    """``(n, 4)`` the share of each component below level ``v`` ``(n,)``, over its own
    probability: ``clip((v - start_k) / P_k, 0, 1)`` (0 where ``P_k = 0``)."""
    start = np.concatenate([np.zeros((len(P), 1)), np.cumsum(P, axis=1)[:, :-1]], axis=1)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        s = np.where(P > 0, (v[:, None] - start) / P, 0.0)
    return np.clip(s, 0.0, 1.0)


def mixture_tail_mean(P: np.ndarray, q0: np.ndarray, q1: np.ndarray, lo: float, hi: float,
                      q: float) -> np.ndarray:
    """Exact mean of the lower ``q`` tail of the mixture, ``(1/q) int_0^q Q(v) dv`` (CVaR_q
    of the returns), at ``n`` points: ``P`` ``(n, 4)``, ``q0``, ``q1`` ``(n, M)`` as
    :meth:`MixtureModel.predict` gives them; ``q`` in ``(0, 1]``."""
    if not 0.0 < q <= 1.0:
        raise ValueError(f"q={q!r} must be in (0, 1]: the share of the lower tail")
    s = _shares(P, np.full(len(P), float(q)))  # (n, 4)
    total = (P[:, 0] * s[:, 0] * lo + P[:, 1] * _partial_integral(q0, s[:, 1])
             + P[:, 2] * _partial_integral(q1, s[:, 2]) + P[:, 3] * s[:, 3] * hi)
    return total / q


def mixture_quantile(P: np.ndarray, q0: np.ndarray, q1: np.ndarray, lo: float, hi: float,
                     v: float | np.ndarray) -> np.ndarray:
    """The mixture's ``v`` quantile ``inf {y : F(y) >= v}`` at ``n`` points (``P``, ``q0``,
    ``q1`` as :func:`mixture_tail_mean`; ``v`` in ``(0, 1)``, a float or one level per point
    ``(n,)``): the first component whose cumulative probability reaches ``v``, at its own
    level (an atom: its value)."""
    v = np.broadcast_to(np.asarray(v, dtype=float), (len(P),))
    if not ((v > 0.0) & (v < 1.0)).all():
        raise ValueError(f"v={v.min()!r}..{v.max()!r} must be in (0, 1): a quantile level")
    cum = np.cumsum(P, axis=1)  # (n, 4)
    k = np.minimum((cum < v[:, None]).sum(axis=1), 3)  # (n,) the component holding level v
    s = _shares(P, v)  # (n, 4)
    table = np.stack([np.full(len(P), lo), _at_level(q0, s[:, 1]), _at_level(q1, s[:, 2]),
                      np.full(len(P), hi)], axis=1)
    return table[np.arange(len(P)), k]


def _at_level(Q: np.ndarray, s: np.ndarray) -> np.ndarray:
    """Piecewise-linear quantile functions ``Q`` ``(n, M)`` at levels ``s`` ``(n,)`` in
    ``[0, 1]`` (``np.interp`` row by row, vectorized)."""
    M = Q.shape[1]
    h = 1.0 / (M - 1)
    j = np.clip(np.floor(s / h).astype(int), 0, M - 2)
    rows = np.arange(len(Q))
    t = np.clip((s - j * h) / h, 0.0, 1.0)
    a, b = Q[rows, j], Q[rows, j + 1]
    return a + t * (b - a)


@dataclass
class MixtureModel:
    """The fitted arrays: see the module docstring.

    Attributes
    ----------
    X : numpy.ndarray
        ``(N, d)`` encodings of the table's configurations.
    C : numpy.ndarray
        ``(N, 4)`` runs of each configuration in (atom lo, fail, learn, atom hi).
    Q0, Q1 : numpy.ndarray
        ``(N, M)`` quantile functions of the fail and the learn mode (zeros: no such runs).
    groups : numpy.ndarray
        ``(d,)`` hyperparameter index of each encoded column.
    log_ls : numpy.ndarray
        ``(H,)`` log lengthscale of each hyperparameter.
    lo, hi, threshold : float
        The atoms and the split of the continuous modes.
    """

    X: np.ndarray
    C: np.ndarray
    Q0: np.ndarray
    Q1: np.ndarray
    groups: np.ndarray
    log_ls: np.ndarray
    lo: float
    hi: float
    threshold: float

    @classmethod
    def from_table(cls, X: np.ndarray, returns: np.ndarray, groups: np.ndarray,
                   log_ls: np.ndarray, threshold: float | None = None,
                   bounds: tuple[float, float] | None = None,
                   knots: int = KNOTS) -> MixtureModel:
        """The arrays of a table ``returns`` ``(N, S)`` (finite values). ``bounds``: the atoms
        (default: the table's lowest and highest return)."""
        R = np.asarray(returns, dtype=float)
        if R.ndim != 2 or R.size == 0 or not np.isfinite(R).all():
            raise ValueError("MixtureModel: returns must be a finite, non-empty (N, S) array")
        lo, hi = (float(R.min()), float(R.max())) if bounds is None else map(float, bounds)
        t = otsu_threshold(R) if threshold is None else float(threshold)
        lv = np.linspace(0.0, 1.0, int(knots))
        at_lo, at_hi = R <= lo, R >= hi
        fail = ~at_lo & ~at_hi & (R <= t)
        learn = ~at_lo & ~at_hi & (R > t)
        C = np.stack([at_lo.sum(1), fail.sum(1), learn.sum(1), at_hi.sum(1)], 1).astype(float)
        return cls(X=np.asarray(X, dtype=float), C=C,
                   Q0=np.stack([_knots(r[m], lv) for r, m in zip(R, fail, strict=True)]),
                   Q1=np.stack([_knots(r[m], lv) for r, m in zip(R, learn, strict=True)]),
                   groups=np.asarray(groups, dtype=int),
                   log_ls=np.asarray(log_ls, dtype=float), lo=lo, hi=hi, threshold=t)

    @property
    def levels(self) -> np.ndarray:
        """``(M,)`` quantile levels of the knots."""
        return np.linspace(0.0, 1.0, self.Q0.shape[1])

    def logits(self, U: np.ndarray) -> np.ndarray:
        """``(n, N)`` kernel logits of encodings ``U`` ``(n, d)``."""
        inv = np.exp(-2.0 * self.log_ls)[self.groups]  # (d,) 1 / l^2 per column
        U2 = (U * U) @ inv  # (n,)
        X2 = (self.X * self.X) @ inv  # (N,)
        cross = (U * inv) @ self.X.T  # (n, N)
        return -0.5 * np.maximum(U2[:, None] - 2.0 * cross + X2[None, :], 0.0)

    def predict(self, U: np.ndarray, chunk: int = 2048
                ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Probabilities ``(n, 4)``, ``Q0`` and ``Q1`` ``(n, M)`` at encodings ``(n, d)``."""
        U = np.atleast_2d(np.asarray(U, dtype=float))
        parts = [_forward(self.logits(U[i:i + chunk]), self.C, self.Q0, self.Q1)[:3]
                 for i in range(0, len(U), chunk)]
        if not parts:
            M = self.Q0.shape[1]
            return np.zeros((0, 4)), np.zeros((0, M)), np.zeros((0, M))
        P, q0, q1 = (np.concatenate(z) for z in zip(*parts, strict=True))
        return P, q0, q1

    def moments(self, U: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Exact mean and variance of the returns at ``U`` ``(n, d)``: ``(n,)`` each."""
        P, q0, q1 = self.predict(U)
        return mixture_moments(P, q0, q1, self.lo, self.hi)

    def draw(self, P: np.ndarray, q0: np.ndarray, q1: np.ndarray, u1: float, u2: float
             ) -> float:
        """One return at one point (``P`` ``(4,)``, ``q0``, ``q1`` ``(M,)``) from uniforms."""
        k = min(int(np.searchsorted(np.cumsum(P), u1, side="right")), 3)
        if k == 0:
            return self.lo
        if k == 3:
            return self.hi
        return float(np.interp(u2, self.levels, q0 if k == 1 else q1))


def loo_loss(log_ls: np.ndarray, D2: np.ndarray, C: np.ndarray, Q0: np.ndarray,
             Q1: np.ndarray, lo: float, hi: float, m: np.ndarray, s: np.ndarray
             ) -> tuple[float, np.ndarray]:
    """Leave-one-out loss and its gradient in ``log_ls``.

    ``D2`` ``(N, N, H)``: squared encoded distances summed per hyperparameter; ``m``, ``s``:
    the table's per-configuration mean and standard deviation. The loss is
    ``mean((f - m)^2) / var(m) + mean((sd - s)^2) / var(s)`` over the leave-one-out
    predictions (a constant prediction scores about 2).
    """
    N = len(m)
    lam = np.exp(-2.0 * log_ls)  # (H,)
    L = -0.5 * (D2 @ lam)  # (N, N)
    np.fill_diagonal(L, -np.inf)
    P, q0, q1, (w, w0, w1) = _forward(L, C, Q0, Q1)
    e0, s0 = mode_moments(q0)
    e1, s1 = mode_moments(q1)
    E = np.stack([np.full(N, lo), e0, e1, np.full(N, hi)], 1)  # (N, 4) component means
    E2 = np.stack([np.full(N, lo * lo), s0, s1, np.full(N, hi * hi)], 1)
    f = (P * E).sum(1)
    r2 = np.maximum((P * E2).sum(1) - f * f, 1e-12)
    sd = np.sqrt(r2)
    vm, vs = max(float(m.var()), 1e-12), max(float(s.var()), 1e-12)
    loss = float(((f - m) ** 2).mean() / vm + ((sd - s) ** 2).mean() / vs)
    # backward: f = sum_k P_k E_k, m2 = sum_k P_k E2_k, r2 = m2 - f^2
    g_r2 = 2.0 * (sd - s) / (N * vs) / (2.0 * sd)
    g_f = 2.0 * (f - m) / (N * vm) - 2.0 * f * g_r2
    g_P = g_f[:, None] * E + g_r2[:, None] * E2  # (N, 4)
    share = C / C.sum(1, keepdims=True)  # (N, 4)
    G = w * (g_P @ share.T - (g_P * P).sum(1, keepdims=True))
    for k, (wk, qk, Qk) in enumerate(((w0, q0, Q0), (w1, q1, Q1)), start=1):
        g_q = (g_f * P[:, k])[:, None] * _mean_grad(qk) + (g_r2 * P[:, k])[:, None] * _quad_grad(qk)
        G += wk * (g_q @ Qk.T - (g_q * qk).sum(1, keepdims=True))
    g_lam = -0.5 * np.einsum("ij,ijh->h", G, D2)
    return loss, g_lam * (-2.0 * lam)


def _mean_grad(Q: np.ndarray) -> np.ndarray:
    """Gradient of the trapezoid mean of :func:`mode_moments` (the same for every row)."""
    h = 1.0 / (Q.shape[1] - 1)
    wts = np.full(Q.shape[1], h)
    wts[[0, -1]] = 0.5 * h
    return np.broadcast_to(wts, Q.shape)


def pairwise_d2(X: np.ndarray, groups: np.ndarray) -> np.ndarray:
    """``(N, N, H)`` squared differences of encodings ``X`` summed per hyperparameter."""
    H = int(groups.max()) + 1
    D2 = np.zeros((len(X), len(X), H))
    for c in range(X.shape[1]):
        D2[:, :, groups[c]] += (X[:, None, c] - X[None, :, c]) ** 2
    return D2


def fit_lengthscales(X: np.ndarray, returns: np.ndarray, groups: np.ndarray,
                     threshold: float | None = None,
                     starts: tuple[float, ...] = (0.3, 1.0)) -> tuple[np.ndarray, float]:
    """Log lengthscales (one per hyperparameter) minimizing :func:`loo_loss`; and the loss.

    L-BFGS-B from each start (a common lengthscale for every hyperparameter), bounded to
    :data:`LOG_BOUNDS`; deterministic.
    """
    R = np.asarray(returns, dtype=float)
    groups = np.asarray(groups, dtype=int)
    H = int(groups.max()) + 1
    mdl = MixtureModel.from_table(X, R, groups, np.zeros(H), threshold)
    args = (pairwise_d2(mdl.X, groups), mdl.C, mdl.Q0, mdl.Q1, mdl.lo, mdl.hi,
            R.mean(1), R.std(1, ddof=1))
    best = None
    for l0 in starts:
        r = minimize(loo_loss, np.full(H, np.log(l0)), args=args, jac=True, method="L-BFGS-B",
                     bounds=[LOG_BOUNDS] * H, options={"maxiter": 300})
        if best is None or r.fun < best.fun:
            best = r
    return np.asarray(best.x, dtype=float), float(best.fun)
