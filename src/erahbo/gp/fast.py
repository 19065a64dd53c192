"""Fast exact round models: cached kernels, incremental variance GP, pruned argmax.

Same numbers as :class:`erahbo.gp.reference.ReferenceRound` (up to floating-point
rounding), at a fraction of the cost; every bound it reports or prunes with is computed by the
functions of :mod:`erahbo.gp.bounds`, the ones the reference engine calls.
With the hyperparameters fixed (the paper's default, refit_every=0):

* **Kernel caches.**  ``k_f(X, X)`` and ``k_f(X, C)`` are kept and grow by one row per new
  configuration (``C`` = finite candidate table), with, per candidate, the largest
  ``k_f(x_j, c)^2`` over the rows and a row ``j`` attaining it.
* **Variance GP, append-only.**  Its noise is homoscedastic, so ``k_v(X, X) + tau^2 I`` only
  grows: its Cholesky factor ``Lv`` (kept for a continuous space only: the L-BFGS-B polish
  solves with it), the inverse ``Lv^{-1}``, ``diag(A_v^{-1})`` and
  ``W = Lv^{-1} k_v(X, C)`` with its column sums of squares are extended in ``O(n^2 + n m)``
  per configuration; pooling new seeds changes only ``y``.  Posterior variances at the
  evaluated points use ``var(x_s) = tau^2 - tau^4 (A_v^{-1})_ss``.
* **Mean GP, refactored once per round.**  Its noise diagonal (eq. 19) changes every
  round, so ``k_f(X, X) + diag(noise)`` is factored with one LAPACK ``dpotrf``.  The posterior
  means at all candidates cost one matrix-vector product.  Posterior standard deviations are
  not computed at all candidates: conditioning on a subset of the data can only increase the
  posterior variance, so ``1 - k(x_j, c)^2 / (1 + noise_j)`` (the variance given the single
  point ``x_j``, here the one most correlated with ``c``) bounds ``var_f(c)`` from above.
  The acquisition is increasing in ``sd_f``: :func:`erahbo.gp.bounds.rahbo_acquisition`
  (eq. 8) evaluated at that bound bounds it from above, at ``sd_f = 0`` from below.
  Candidates are evaluated exactly (``dtrsm`` on their kernel columns, then the same
  function, in growing batches) in decreasing order of the upper bound, until the next bound
  cannot beat the best exact value: the argmax is exact.  ``B_t = max LCB^MV`` (eq. 10) over
  evaluated points is found the same way, with :func:`erahbo.gp.bounds.lcb_mv` (eq. 9) at
  ``sd_f = 0`` giving the bound, ``var_f(x_s) = D_s - D_s^2 (A^{-1})_ss`` the exact values and
  :func:`erahbo.gp.bounds.incumbent_lcb` the maximum of each batch.
* **Inner loop.**  Only ``x_t``'s own observation changes, so the posterior of ``f(x_t)`` and
  ``rho^2(x_t)`` given the *other* points is computed once per round (a triangular solve, or
  leave-one-out formulas when ``x_t`` was evaluated before) and each extra seed is an ``O(1)``
  Gaussian update (:func:`erahbo.gp.round.observe`), equal to a bordered Cholesky with
  ``x_t`` as the last row.
"""

from __future__ import annotations

import copy
import math
from collections.abc import Callable

import numpy as np
from scipy.linalg import blas, lapack

from erahbo.gp.bounds import incumbent_lcb, lcb_mv, rahbo_acquisition
from erahbo.gp.exact import posterior_grad, robust_cholesky
from erahbo.gp.kernels import k_of_d2, kernel
from erahbo.gp.round import InnerBounds, RoundModel, RoundSettings
from erahbo.gp.variance_noise import variance_noise
from erahbo.risk import RiskLike

__all__ = ["FastModel", "FastRound"]

#: Fewer evaluated rows than this: the recommendation's ``argmax LCB^MV`` goes straight to the
#: pruned batches of :meth:`FastRound.best_lcb_mv` (at n = 50 the check for the all-rows path
#: costs about as much as the batches themselves; measured with ``bench_iteration.py``).
SMALL_N = 128


def _cholesky_f(A: np.ndarray) -> np.ndarray:
    """Lower Cholesky factor (Fortran order) of a symmetric matrix ``A`` built for the call."""
    L, info = lapack.dpotrf(A.T, lower=1, clean=0, overwrite_a=1)  # A.T: F-contiguous
    if info == 0:
        return L
    return np.asfortranarray(robust_cholesky(A)[0])


def _pruned_max(
    order: np.ndarray,
    bound: np.ndarray,
    best_of: Callable[[np.ndarray], tuple[float, int]],
    batch: int,
    tol: float,
) -> tuple[float, int, int]:
    """Exact maximum of a quantity over the indices ``order``, pruned by an upper ``bound``.

    ``order`` lists indices by non-increasing ``bound`` (``(N,)``, an upper bound of the
    quantity at each index); they go to ``best_of`` in growing batches until the next bound
    cannot beat the best exact value (``tol``: rounding slack).  ``best_of(idx)`` returns the
    exact maximum over the indices ``idx`` (ascending) and its index, the lowest on ties; ties
    across batches go to the lowest index too.

    Returns
    -------
    (best value, its index, indices evaluated)
    """
    best, best_i, pos = -np.inf, -1, 0
    while pos < order.size and bound[order[pos]] >= best - tol:
        v, i = best_of(np.sort(order[pos : pos + batch]))
        if i >= 0 and (v > best or (v == best and i < best_i)):
            best, best_i = v, i
        pos += batch
        batch = min(2 * batch, 256)
    return best, best_i, pos


class FastModel:
    """Caches of the fast engine for one set of hyperparameters (rows append-only).

    Parameters
    ----------
    settings : RoundSettings
        Fixed hyperparameters, ``beta`` and ``rho_max2``.
    candidates : numpy.ndarray or None
        ``(m, dim)`` finite candidate table, or None for a continuous space.
    """

    def __init__(self, settings: RoundSettings, candidates: np.ndarray | None = None) -> None:
        self.settings = settings
        self.hf, self.hv = settings.hyper_f, settings.hyper_v
        self.tau2 = float(self.hv.noise)
        self.one_seed = False  # a cached row has a one-seed noise (erahbo.gp.one_seed)
        self.C = None if candidates is None else np.asarray(candidates, dtype=float)
        self.m = 0 if self.C is None else self.C.shape[0]
        self.n = 0
        self.dim = len(self.hf.lengthscales)
        self.ls_f = np.asarray(self.hf.lengthscales, dtype=float)
        self.ls_v = np.asarray(self.hv.lengthscales, dtype=float)
        if self.m:  # candidates scaled by each GP's lengthscales, and their squared norms
            self.Cf, self.Cv = self.C / self.ls_f, self.C / self.ls_v  # (m, dim)
            self.Cf2, self.Cv2 = (self.Cf**2).sum(1), (self.Cv**2).sum(1)  # (m,)
        self._spare: dict[str, np.ndarray] = {}  # name -> a flat work buffer (borrow)
        self._alloc(64)

    def borrow(self, name: str, shape: tuple[int, ...]) -> np.ndarray:
        """A C-contiguous float array of ``shape`` (contents undefined) made of the model's
        work buffer ``name``; :meth:`give_back` returns it for the next call.

        A round's large temporary arrays (the argmax screen's kernel matrices: ``(n, 512)``
        each) come from these buffers instead of new memory: a freed array of that size goes
        back to the operating system, and touching a new one costs a page fault per 4 kB
        (measured: a fifth of a round at n = 500). A buffer already borrowed (by another
        thread) is not shared: the caller then gets a new array.
        """
        size = math.prod(shape)
        buf = self._spare.pop(name, None)
        if buf is None or buf.size < size:
            buf = np.empty(max(size + size // 4, 2 * (0 if buf is None else buf.size)))
        return buf[:size].reshape(shape)

    def give_back(self, name: str, arr: np.ndarray) -> None:
        """Return an array from :meth:`borrow` (it must not be used after)."""
        self._spare[name] = arr.base if arr.base is not None else arr

    def _alloc(self, cap: int) -> None:
        """(Re)allocate the row caches for ``cap`` configurations, keeping the ``n`` rows."""
        old = self.__dict__.get("cap", 0)
        n, m = self.n, self.m

        def grow(a: np.ndarray | None, shape: tuple[int, ...], keep) -> np.ndarray:
            b = np.zeros(shape)
            if a is not None and old:
                b[keep] = a[keep]
            return b

        g = self.__dict__.get
        self.X = grow(g("X"), (cap, self.dim), np.s_[:n])
        self.Xf = grow(g("Xf"), (cap, self.dim), np.s_[:n])  # X / ls_f
        self.Xv = grow(g("Xv"), (cap, self.dim), np.s_[:n])  # X / ls_v
        self.Xf2 = grow(g("Xf2"), (cap,), np.s_[:n])  # squared norms
        self.Xv2 = grow(g("Xv2"), (cap,), np.s_[:n])
        self.tv = grow(g("tv"), (cap,), np.s_[:n])  # the variance GP's noise per row
        self.Kf = grow(g("Kf"), (cap, cap), np.s_[:n, :n])  # k_f(X, X)
        if not m:  # chol(k_v(X, X) + tau^2 I): the polish of a continuous space only
            self.Lv = grow(g("Lv"), (cap, cap), np.s_[:n, :n])
        self.Lvi = grow(g("Lvi"), (cap, cap), np.s_[:n, :n])  # Lv^{-1}
        self.dAv = grow(g("dAv"), (cap,), np.s_[:n])  # diag((k_v + tau^2 I)^{-1})
        self.lnn = grow(g("lnn"), (cap,), np.s_[:n])  # diag(Lv) (_truncate)
        if m:
            self.KfC = grow(g("KfC"), (cap, m), np.s_[:n])  # k_f(X, C)
            self.WvC = grow(g("WvC"), (cap, m), np.s_[:n])  # Lv^{-1} k_v(X, C)
            if not old:
                self.cv = np.zeros(m)  # (m,) column sums of squares of WvC
                self.k2max = np.zeros(m)  # (m,) max_j k_f(x_j, c)^2 over the rows so far
                self.nn = np.zeros(m, dtype=np.intp)  # (m,) a row j attaining it
        self.cap = cap

    def _krow(self, xs: np.ndarray, S: np.ndarray, S2: np.ndarray, kind: str) -> np.ndarray:
        """Kernel values between one scaled point ``xs (dim,)`` and scaled rows ``S (p, dim)``."""
        d2 = S2 + xs @ xs - 2.0 * (S @ xs)
        np.maximum(d2, 0.0, out=d2)
        return k_of_d2(d2, kind)

    def _append(self, x: np.ndarray, tau2: float) -> None:
        """Extend every cache by one configuration ``x (dim,)`` whose variance-GP observation
        has noise ``tau2``."""
        if self.n == self.cap:
            self._alloc(2 * self.cap)
        n = self.n
        self.tv[n] = tau2
        kind_f, kind_v = self.hf.kind, self.hv.kind
        xf, xv = x / self.ls_f, x / self.ls_v
        kf = self._krow(xf, self.Xf[:n], self.Xf2[:n], kind_f)  # (n,)
        self.Kf[n, :n] = kf
        self.Kf[:n, n] = kf
        self.Kf[n, n] = 1.0
        kv = self._krow(xv, self.Xv[:n], self.Xv2[:n], kind_v)  # (n,)
        self.X[n], self.Xf[n], self.Xv[n] = x, xf, xv
        self.Xf2[n], self.Xv2[n] = xf @ xf, xv @ xv
        Lvi = self.Lvi[:n, :n]
        lv = Lvi @ kv  # (n,) Lv^{-1} k_v(X, x)
        lnn = math.sqrt(max(1.0 + tau2 - float(lv @ lv), 1e-12 * tau2))
        r = -(lv @ Lvi) / lnn  # new row of Lv^{-1}
        if not self.m:
            self.Lv[n, :n] = lv
            self.Lv[n, n] = lnn
        self.Lvi[n, :n] = r
        self.Lvi[n, n] = 1.0 / lnn
        self.dAv[:n] += r * r
        self.dAv[n] = 1.0 / (lnn * lnn)
        self.lnn[n] = lnn
        if self.m:
            kfc = self._krow(xf, self.Cf, self.Cf2, kind_f)  # (m,)
            self.KfC[n] = kfc
            k2 = kfc * kfc
            closer = k2 > self.k2max  # (m,) candidates closest to the new row
            self.k2max[closer] = k2[closer]
            self.nn[closer] = n
            kvc = self._krow(xv, self.Cv, self.Cv2, kind_v)  # (m,)
            w = (kvc - lv @ self.WvC[:n]) / lnn
            self.WvC[n] = w
            self.cv += w * w
        self.n = n + 1

    def _truncate(self, j: int) -> None:
        """Keep the first ``j`` rows of the caches (a Cholesky factor's first rows do not depend
        on the later ones). The sums over rows (``dAv``, ``cv``) are accumulated again over
        those rows in the order :meth:`_append` adds them, and the nearest rows (``k2max``,
        ``nn``: the first row attaining the max) found again, so that the caches are bit for
        bit those of a rebuild from the first row."""
        for i in range(j):
            r = self.Lvi[i, :i]
            self.dAv[:i] += r * r
            self.dAv[i] = 1.0 / (self.lnn[i] * self.lnn[i])
        if self.m:
            self.cv[:], self.k2max[:], self.nn[:] = 0.0, 0.0, 0
            for i in range(j):
                w = self.WvC[i]
                self.cv += w * w
            if j:
                kfc = self.KfC[:j]
                k2 = kfc * kfc  # (j, m)
                self.nn[:] = np.argmax(k2, axis=0)
                self.k2max[:] = k2[self.nn, np.arange(self.m)]
        self.n = j

    def copy(self) -> FastModel:
        """An independent copy of the caches (the kriging believer extends one by fantasies)."""
        new = copy.copy(self)
        new._spare = {}
        shared = ("C", "Cf", "Cv", "Cf2", "Cv2", "ls_f", "ls_v")  # never written after init
        for name, value in self.__dict__.items():
            if isinstance(value, np.ndarray) and name not in shared:
                new.__dict__[name] = value.copy()
        return new

    def sync(self, X: np.ndarray, k: np.ndarray | None = None) -> None:
        """Append the rows of ``X (n, dim)`` not cached yet (earlier rows must be unchanged).

        ``k (n,)``: seed counts, which set each row's variance-GP noise
        (:func:`erahbo.gp.variance_noise.variance_noise`; None: ``tau^2`` everywhere). A row
        that got more seeds changes its noise: the caches are then rebuilt from that row on
        (:meth:`_truncate`; rows before it do not depend on it).
        """
        if X.shape[0] < self.n or not (X[: self.n] == self.X[: self.n]).all():
            raise RuntimeError("FastModel.sync: data rows must be append-only")
        chi2 = self.settings.var_noise == "chi2"  # per-row noise tau^2 / (k - 1)
        log = self.settings.var_noise == "log"  # per-row noise of a log sample variance
        one = k is not None and len(k) > 0 and bool(np.min(k) < 2 or chi2 or log)
        if not one and not self.one_seed:  # every row tau^2, as before (the common case)
            for i in range(self.n, X.shape[0]):
                self._append(np.asarray(X[i], dtype=float), self.tau2)
            return
        tv = variance_noise(self.tau2, np.asarray(k, dtype=float), chi2, log)
        changed = np.flatnonzero(tv[: self.n] != self.tv[: self.n])  # rows whose noise changed
        if changed.size:
            self._truncate(int(changed[0]))  # rebuild from the first of them, with its noise
        for i in range(self.n, X.shape[0]):
            self._append(np.asarray(X[i], dtype=float), float(tv[i]))
        self.one_seed = one

    def round(self, X: np.ndarray, ybar: np.ndarray, s2: np.ndarray, k: np.ndarray) -> FastRound:
        """Round model for the data ``D_{t-1}`` (rows ``X``, pooled ``ybar``, ``s2``, ``k``)."""
        self.sync(X, k)
        return FastRound(self, ybar, s2, k)


class FastRound(RoundModel):
    """A round of the fast engine (see the module docstring); same API as ReferenceRound."""

    def __init__(self, model: FastModel, ybar: np.ndarray, s2: np.ndarray, k: np.ndarray) -> None:
        self._setup_stats(ybar, s2, k, model.settings)
        n, M, tv = self.n, model, self.tv  # tv: the variance GP's noise per row (_setup_stats)
        self.M = M
        self.X = M.X[:n]
        self.Lvi = M.Lvi[:n, :n]
        self.zv = self.Lvi @ self.yv  # (n,) Lv^{-1} y_v
        self.av = self.zv @ self.Lvi  # (n,) alpha_v = Lv^{-T} Lv^{-1} y_v
        self.dAv = M.dAv[:n].copy()  # snapshot: later appends change it
        self.mu_vX = self.yv - tv * self.av  # (n,) standardized
        self.var_vX = np.maximum(tv - tv * tv * self.dAv, 0.0)
        self.set_noise_cap(self.mu_vX)
        self.D = self.mean_noise(self.mu_vX, np.sqrt(self.var_vX), self.k)  # (n,) eq. 19
        A = M.Kf[:n, :n].copy()
        A.flat[:: n + 1] += self.D
        self.L = _cholesky_f(A)  # (n, n) lower, Fortran order
        self.af, _ = lapack.dpotrs(self.L, self.yf, lower=1)  # alpha_f
        self.mu_fX = self.yf - self.D * self.af  # (n,) standardized posterior mean at X
        self.cv = M.cv.copy() if M.m else None
        # the candidates' most correlated rows: snapshots, later appends change them
        self.k2max = M.k2max.copy() if M.m else None
        self.nn = M.nn.copy() if M.m else None
        self._cand = None
        self._data = None
        self._others: dict = {}
        self._last_inner: tuple | None = None  # (u, row, cand, posteriors): identity cache
        self._Lv: np.ndarray | None = None  # (n, n) C-contiguous copy of Lv (the polish)
        self._var_fX: np.ndarray | None = None  # var_f_rows, made once

    # ------------------------------------------------------------------ predictions
    def predict(self, U: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Raw-scale ``(mu_f, sd_f, mu_var, sd_var)``, each ``(p,)``, at ``U (p, dim)``."""
        hf, hv = self.M.hf, self.M.hv
        U = np.atleast_2d(U)
        kf = kernel(self.X, U, hf.lengthscales, hf.kind)  # (n, p)
        Vf = blas.dtrsm(1.0, self.L, kf, lower=1)
        kv = kernel(self.X, U, hv.lengthscales, hv.kind)
        Vv = self.Lvi @ kv
        return self._raw(
            kf.T @ self.af, 1.0 - (Vf * Vf).sum(0), Vv.T @ self.zv, 1.0 - (Vv * Vv).sum(0)
        )

    def solve_f(self, B: np.ndarray) -> np.ndarray:
        """See :meth:`RoundModel.solve_f`."""
        return lapack.dpotrs(self.L, B, lower=1)[0]

    def solve_v(self, B: np.ndarray) -> np.ndarray:
        """See :meth:`RoundModel.solve_v` (``K_v^{-1} = Lv^{-T} Lv^{-1}``)."""
        return self.Lvi.T @ (self.Lvi @ B)

    def _grad_f(self, u: np.ndarray):
        """See :meth:`RoundModel._grads`."""
        hf = self.M.hf
        return posterior_grad(u, self.X, self.L, self.af, hf.lengthscales, hf.kind)

    def _grad_v(self, u: np.ndarray):
        """See :meth:`RoundModel._grads`."""
        hv = self.M.hv
        return posterior_grad(u, self.X, self._lv(), self.av, hv.lengthscales, hv.kind)

    def _lv(self) -> np.ndarray:
        """``(n, n)`` Cholesky factor of the variance GP for the gradients (made once)."""
        if self._Lv is None:  # one contiguous copy per round, not one per call
            if self.M.m:  # a table keeps no Lv (its argmax needs no gradient): invert Lv^{-1}
                self._Lv = np.tril(lapack.dtrtri(np.asfortranarray(self.Lvi), lower=1)[0])
            else:
                self._Lv = np.ascontiguousarray(self.M.Lv[: self.n, : self.n])
        return self._Lv

    def posterior_X(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Raw ``(mu_f, sd_f, mu_var, sd_var)`` at all evaluated points (``O(n^3)``; tests)."""
        return self._raw(self.mu_fX, self.var_f_rows(), self.mu_vX, self.var_vX)

    def var_f_rows(self) -> np.ndarray:
        """``(n,)`` standardized posterior variance of ``f`` at every evaluated row,
        ``D_s - D_s^2 (A^{-1})_ss`` with the diagonal of ``A^{-1}`` from ``L^{-1}`` (one
        ``O(n^3 / 3)`` inversion, in a work buffer of the model), made once per round.

        The recommendation's ``argmax LCB^MV`` (:meth:`lcb_mv_argmax`) and the argmax screen
        (:mod:`erahbo.gp.screen`) read it when most rows are in play: each would otherwise
        solve for those rows (``n^2`` each)."""
        if self._var_fX is None:
            n, D = self.n, self.D
            buf = self.M.borrow("Linv", (n, n))  # its transpose: an F-ordered (n, n)
            try:
                np.copyto(buf.T, self.L)
                Li, info = lapack.dtrtri(buf.T, lower=1, overwrite_c=1)  # in place
                if info != 0:
                    raise np.linalg.LinAlgError(f"var_f_rows: dtrtri failed (info={info})")
                Li = Li.T  # row s: column s of L^{-1}, its part left of s not cleaned
                for s in range(1, n):
                    Li[s, :s] = 0.0
                np.multiply(Li, Li, out=Li)
                q = Li.sum(1)  # diag(A^{-1})
            finally:
                self.M.give_back("Linv", buf)
            self._var_fX = D - D * D * q
        return self._var_fX

    # ------------------------------------------------------------------ bounds
    def _data_parts(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Raw ``mu_f``, ``mu_var`` and ``sd_var`` at the evaluated points, each ``(n,)``."""
        if self._data is None:
            self._data = (self.mf + self.sf * self.mu_fX, self.mv + self.sv * self.mu_vX,
                          self.sv * np.sqrt(self.var_vX))
        return self._data

    def _candidate_parts(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Raw ``mu_f``, ``mu_var`` and ``sd_var`` at all candidates, each ``(m,)`` (cached)."""
        if self._cand is None:
            n, M = self.n, self.M
            mu_f = self.af @ M.KfC[:n]  # (m,) standardized
            mu_v = self.zv @ M.WvC[:n]  # (m,) standardized
            sd_v = np.sqrt(np.maximum(1.0 - self.cv, 0.0))
            self._cand = (self.mf + self.sf * mu_f, self.mv + self.sv * mu_v, self.sv * sd_v)
        return self._cand

    def select(self, mask: np.ndarray, risk: RiskLike) -> tuple[int, float]:
        """Exact argmax of the acquisition (eq. 8) over the candidates with ``mask`` True.

        Parameters
        ----------
        mask : numpy.ndarray
            ``(m,)`` bool, candidates still allowed.
        risk : erahbo.risk.RiskMeasure or float
            The decision's risk measure (a float: MV's ``alpha``; 0 for GP-UCB).

        Returns
        -------
        index : int
            Candidate index (lowest on ties).
        value : float
            Its acquisition value.
        """
        n, M, sf, beta = self.n, self.M, self.sf, self.beta
        # sd_f is the only part of eq. 8 not known at every candidate: the acquisition is
        # increasing in it, so at an upper bound of sd_f it bounds the acquisition from above,
        # and at sd_f = 0 from below
        mu_f, mu_v, sd_v = self._candidate_parts()
        mask = np.asarray(mask, dtype=bool)
        every = bool(mask.all())
        if not (every or mask.any()):
            raise ValueError("select: no candidate left (all excluded)")
        # var_f(c) <= 1 - k(x_j, c)^2 / (1 + D_j) for any row j (the variance given x_j
        # alone); j = the row most correlated with c
        g = self.k2max / (1.0 + self.D[self.nn])  # (m,)
        lv = self.log_var  # the variance GP on log rho^2: its bounds through exp
        bv = self.beta_var  # eq. 8's LCB^var confidence (None: beta)
        ub = rahbo_acquisition(mu_f, sf * np.sqrt(np.maximum(1.0 - g, 0.0)), mu_v, sd_v,
                               risk, beta, log_var=lv, beta_var=bv)  # (m,) upper bounds
        at0 = rahbo_acquisition(mu_f, 0.0, mu_v, sd_v, risk, beta, log_var=lv,
                                beta_var=bv)  # lower
        floor = (at0 if every else at0[mask]).max()  # the best value is at least this
        keep = ub >= floor
        idx = np.flatnonzero(keep if every else keep & mask)
        order = idx[np.argsort(-ub[idx], kind="stable")]

        def best_of(cols: np.ndarray) -> tuple[float, int]:  # best acquisition over ``cols``
            # take: a column gather 3-5x faster than fancy indexing (measured, n = 50)
            V = blas.dtrsm(1.0, self.L, M.KfC[:n].take(cols, axis=1), lower=1)  # (n, b)
            sd_f = sf * np.sqrt(np.maximum(1.0 - (V * V).sum(0), 0.0))  # (b,)
            vals = rahbo_acquisition(mu_f[cols], sd_f, mu_v[cols], sd_v[cols], risk, beta,
                                     log_var=lv, beta_var=bv)
            i = int(np.argmax(vals))  # the first maximum: lowest index on ties
            return float(vals[i]), int(cols[i])

        first = int(min(max(1e5 / max(n, 1) ** 2, 8), 64))  # ~1e5 flops per first batch
        best, best_i, self.n_exact_ = _pruned_max(
            order, ub, best_of, first, tol=1e-12 * (abs(floor) + math.sqrt(beta) * sf))
        return best_i, float(best)

    def best_lcb_mv(
        self, risk: RiskLike, beta: float, mask: np.ndarray | None = None
    ) -> tuple[float, int]:
        """``B_t = max_s LCB^MV(x_s)`` over the evaluated rows (eq. 10) and its row.

        ``mask`` ``(n,)`` bool restricts the rows (None: all); ``(-inf, -1)`` if none is left.
        ``LCB^MV`` (eq. 9) is decreasing in ``sd_f``, so its value at ``sd_f = 0`` bounds it
        from above: rows are evaluated exactly, in batches in decreasing order of that bound,
        until none left can beat the best; :func:`erahbo.gp.bounds.incumbent_lcb` takes the
        maximum over each batch. With ``beta = 0`` (ERAHBO's default ``beta_stop``) the bound
        is the value itself (``sqrt(beta) sd_f = 0``): no row needs its variance.
        """
        n, sf = self.n, self.sf
        mu_f, mu_v, sd_v = self._data_parts()
        bound = lcb_mv(mu_f, 0.0, mu_v, sd_v, risk, beta, log_var=self.log_var)  # (n,) upper
        order = np.argsort(-bound, kind="stable")
        if mask is not None:
            order = order[np.asarray(mask, dtype=bool)[order]]
        if order.size == 0:
            return -np.inf, -1
        if beta == 0.0:  # sqrt(beta) sd_f = 0: the bound is the value (ERAHBO's default B_t)
            top = float(bound[order[0]])
            return (top, int(order[0])) if math.isfinite(top) else (-np.inf, -1)

        def best_of(rows: np.ndarray) -> tuple[float, int]:  # eq. 10 over data rows ``rows``
            E = np.zeros((n, rows.size), order="F")
            E[rows, np.arange(rows.size)] = 1.0
            V = blas.dtrsm(1.0, self.L, E, lower=1)
            q = (V * V).sum(0)  # (A^{-1})_ss
            D = self.D[rows]
            sd_f = sf * np.sqrt(np.maximum(D - D * D * q, 0.0))  # (b,)
            B, i = incumbent_lcb(mu_f[rows], sd_f, mu_v[rows], sd_v[rows], risk, beta,
                                 log_var=self.log_var)
            return B, (int(rows[i]) if i >= 0 else -1)

        tol = 1e-12 * (abs(float(bound[order[0]])) + math.sqrt(beta) * sf)
        B_t, row, _ = _pruned_max(order, bound, best_of, 4, tol)
        return B_t, row

    def lcb_mv_argmax(self, risk: RiskLike, beta: float,
                      mask: np.ndarray | None = None) -> int:
        """The row of :meth:`best_lcb_mv` (the recommendation's ``argmax LCB^MV``).

        When more than a third of the rows can be the maximum (their bound at ``sd_f = 0``
        reaches the largest lower bound, ``LCB^MV`` at the variance given the earlier rows
        and the row's own observation: the recommendation's ``beta`` prunes little), every
        row's variance comes from :meth:`var_f_rows` at once (``n^3 / 3``, shared with the
        argmax screen), not from batches of solves (``n^2`` per row, the batches doubling).
        Below :data:`SMALL_N` rows it always takes the batches.
        """
        n, sf, D = self.n, self.sf, self.D
        if n < SMALL_N:  # the check below costs more than the batches it could save
            return self.best_lcb_mv(risk, beta, mask)[1]
        mu_f, mu_v, sd_v = self._data_parts()
        lv = self.log_var
        upper = lcb_mv(mu_f, 0.0, mu_v, sd_v, risk, beta, log_var=lv)  # (n,)
        before = np.maximum(np.diag(self.L) ** 2 - D, 0.0)  # var given the earlier rows
        var_hi = before * D / np.maximum(before + D, 1e-300)  # ... and its own observation
        lower = lcb_mv(mu_f, sf * np.sqrt(var_hi), mu_v, sd_v, risk, beta, log_var=lv)
        ok = np.ones(n, dtype=bool) if mask is None else np.asarray(mask, dtype=bool)
        if not ok.any():
            return -1
        floor = float(lower[ok].max())
        tol = 1e-9 * (abs(floor) + math.sqrt(beta) * sf + 1.0)
        if 3 * int(np.count_nonzero(ok & (upper >= floor - tol))) <= n:
            return self.best_lcb_mv(risk, beta, mask)[1]
        sd_f = sf * np.sqrt(np.maximum(self.var_f_rows(), 0.0))
        return incumbent_lcb(mu_f, sd_f, mu_v, sd_v, risk, beta, mask, log_var=lv)[1]

    # ------------------------------------------------------------------ inner loop
    def _others_posterior(self, row: int | None, u: np.ndarray, cand: int | None):
        """Standardized ``(mean, var)`` of ``f(x_t)`` and ``rho^2(x_t)`` given the others."""
        key = (row, cand, u.tobytes())
        if key in self._others:
            return self._others[key]
        n, M = self.n, self.M
        if row is not None:  # leave-one-out formulas
            q = self.dAv[row]
            vo = (self.yv[row] - self.av[row] / q, 1.0 / q - self.tv[row])
            e = np.zeros(n)
            e[row] = 1.0
            t = blas.dtrsv(self.L, e, lower=1)
            qf = float(t @ t)
            fo = (self.yf[row] - self.af[row] / qf, 1.0 / qf - self.D[row])
        else:
            if cand is not None and M.m:
                lv = M.WvC[:n, cand]
                vo = (float(lv @ self.zv), 1.0 - float(self.cv[cand]))
                kf = M.KfC[:n, cand]
            else:
                kv = kernel(u[None, :], self.X, M.hv.lengthscales, M.hv.kind)[0]
                lv = self.Lvi @ kv
                vo = (float(lv @ self.zv), 1.0 - float(lv @ lv))
                kf = kernel(u[None, :], self.X, M.hf.lengthscales, M.hf.kind)[0]
            lf = blas.dtrsv(self.L, kf, lower=1)
            fo = (float(kf @ self.af), 1.0 - float(lf @ lf))
        self._others[key] = (fo, vo)
        return fo, vo

    def inner(
        self,
        row: int | None,
        u: np.ndarray,
        cand: int | None,
        ybar: float,
        s2: float,
        k_total: int,
        beta_stop: float,
        risk: RiskLike,
    ) -> InnerBounds:
        """Bounds at ``x_t`` after ``k_total`` pooled seeds (see ReferenceRound.inner)."""
        last = self._last_inner  # the round asks for the same x_t seed after seed
        if last is not None and last[0] is u and last[1] == row and last[2] == cand:
            fo, vo = last[3]
        else:
            fo, vo = self._others_posterior(row, np.asarray(u, dtype=float), cand)
            self._last_inner = (u, row, cand, (fo, vo))
        return self._inner_from(fo, vo, ybar, s2, k_total, beta_stop, risk)
