"""Mean-Var-BTS-RED (Dai et al., NeurIPS 2023), a peer of the benchmarks, in numpy/scipy.

Z. Dai, Q. P. Nguyen, S. S. Tay, D. Urano, R. Leong, B. K. H. Low, P. Jaillet, "Batch Bayesian
Optimization for Replicable Experimental Design", NeurIPS 2023 (arXiv:2311.01195). The closest
published method to erahbo: it chooses inputs by Thompson sampling and the number of
replications of each input from its (heteroscedastic) noise variance, for a mean-variance
objective. Written from the paper, not from its code; erahbo's GP parts (:mod:`erahbo.gp`:
:class:`~erahbo.gp.exact.ExactGP`, :func:`~erahbo.gp.fit.fit_map`, the kernels) are reused.

**Source note.** From this project's machines only the paper's abstract and introduction were
readable; the algorithm below is the paper's Mean-Var-BTS-RED (built on its BTS-RED-Known and
BTS-RED-Unknown) as its authors describe it, and the two items marked *(check against the
paper)* are where that description was recalled rather than reread: the value of ``R^2`` and
what happens to the input whose replications overflow a batch.

The paper's setting: ``y = f(x) + eps``, ``eps ~ N(0, sigma^2(x))``; every iteration ``t`` runs
a batch of inputs ``x_t^(b)``, each replicated ``n_t^(b)`` times, with ``sum_b n_t^(b) <= N``
(the total budget of a batch); the learner sees the mean ``ybar`` and the unbiased sample
variance ``s^2`` of each input's replications. Mean-Var-BTS-RED maximizes
``h_w(x) = w f(x) - (1 - w) sigma^2(x)``; erahbo's ``MV = f - alpha rho^2`` is the same
objective with ``w = 1 / (1 + alpha)`` (``h_w = w MV``), so both have the same maximizer.

What is implemented (the paper's lines; our equation numbers in brackets):

1. **Two GPs.** ``f`` on the means ``ybar`` (one observation per batch entry) and
   ``g = -sigma^2`` on ``y' = -s^2`` of the entries with ``n >= 2`` (the paper models the
   *negative* noise variance so that both parts are maximized). The mean GP's observation
   noise is ``R^2`` [1]: the replication rule makes the noise of every mean ``sigma^2(x) / n
   <= R^2``, which is what lets BTS-RED treat heteroscedastic observations with a
   homoscedastic GP.
2. **Thompson sampling of the input** (Mean-Var-BTS-RED): for each entry ``b`` of a batch,
   draw ``f~ ~ GP_f`` and ``g~ ~ GP_g`` from the posteriors, independently per entry, and take
   ``x_t^(b) = argmax_x  w f~(x) + (1 - w) g~(x)``, i.e. ``argmax f~ + alpha g~`` [2].
3. **Replications from an upper bound of the noise variance** (BTS-RED-Unknown, reused by
   Mean-Var-BTS-RED): ``U_t(x) = -mu'_t(x) + beta' sigma'_t(x)`` (``mu'``, ``sigma'``: the
   posterior of ``g``), and ``n_t^(b) = clip(ceil(U_t(x_t^(b)) / R^2), n_min, n_max)`` [3]
   (:func:`replications`). ``n_min = 2`` makes every sample variance defined.
4. **Batch budget.** Entries are added while they fit in ``N``; the input whose replications
   would overflow ``N`` is not run in this batch *(check against the paper)*.
5. **R^2.** ``R^2 = sigma_max^2 (N + 1) / N^2`` [4] (:func:`r_squared`), the value the paper's
   analysis picks: the noisiest input gets ``ceil(N^2 / (N + 1)) = N`` replications, the whole
   batch *(check against the paper)*.
6. **Posterior update** after the batch: both GPs see every entry of it.

Choices the paper leaves open, and simplifications:

* ``sigma_max^2`` (the largest noise variance, known to the paper's theory) is the largest
  sample variance observed so far (entries with ``n >= 2``), recomputed every batch; ``R^2``
  therefore grows when a noisier input appears. Where every sample variance is 0, every
  input gets ``n_min``.
* ``beta' = 1`` for ``U_t`` and posterior samples at the posterior's own scale (``beta_t = 1``);
  the theory's values grow like ``sqrt(log t)``.
* GPs: erahbo's ARD RBF kernel with unit signal variance on standardized outputs, MAP
  lengthscales (BoTorch's priors) refitted every batch; the variance GP learns a
  homoscedastic noise (LogNormal(-4, 1) prior); the mean GP's noise is ``R^2`` (raw scale),
  fixed. Two entries at the same input are two observations (as the paper's data set).
* Thompson sampling on a finite set: a table's rows with at least ``n_min`` unused stored
  seeds (exact), or, on a continuous space, 1024 scrambled Sobol points (new ones every
  batch) plus every evaluated input (joint samples by Cholesky of the posterior covariance;
  no continuous refinement of the sample's argmax).
* Batches are run in sequence, their entries one after another; the models change only
  between batches, as in the paper. The last batch is cut to the budget left (its last entry
  may get fewer than ``n_min`` runs); on a table an entry is cut to the row's unused seeds.
* Initial design (the paper starts from random inputs): ``n_init = 5`` Sobol inputs with
  ``n_min`` replications each (under the table benchmark's paper protocol: the shared design).
* **Recommendation** (the paper reports the regret of the inputs it queried, which needs the
  truth): after every batch, the evaluated input with the best posterior mean MV,
  ``argmax_x mu_t(x) + alpha mu'_t(x)`` (= ``mean - alpha * variance`` of the posteriors)
  over the inputs evaluated so far; during the initial design, the best sample MV so far.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy.linalg import solve_triangular

from erahbo.gp.exact import ExactGP, robust_cholesky, standardize
from erahbo.gp.fit import fit_map
from erahbo.gp.kernels import kernel

__all__ = ["BTSRed", "BTSRedSettings", "BatchEntry", "r_squared", "replications"]

_NOISE_FLOOR = 1e-6  # standardized noise of the mean GP where R^2 is 0 (no sample variance)


def r_squared(sigma2_max: float, batch_budget: int) -> float:
    """``R^2 = sigma_max^2 (N + 1) / N^2``: the bound on the noise variance of a mean after the
    replication rule (the noisiest input gets ``N`` replications).

    Parameters
    ----------
    sigma2_max : float
        The largest noise variance (here: the largest sample variance observed so far).
    batch_budget : int
        ``N``, training runs per batch.
    """
    n = int(batch_budget)
    if n < 1:
        raise ValueError(f"batch_budget={batch_budget} must be >= 1 (runs per batch)")
    return max(float(sigma2_max), 0.0) * (n + 1) / (n * n)


def replications(ucb_var: np.ndarray | float, r2: float, n_min: int, n_max: int) -> np.ndarray:
    """The replication rule: ``n = clip(ceil(U / R^2), n_min, n_max)``.

    Parameters
    ----------
    ucb_var : float or numpy.ndarray
        ``U(x)``, an upper confidence bound of the noise variance at the chosen input(s).
    r2 : float
        ``R^2`` (:func:`r_squared`); at most 0 (no noise seen): every input gets ``n_min``.
    n_min, n_max : int
        The paper's bounds on the replications of one input (``n_min >= 2``: a sample
        variance).

    Returns
    -------
    numpy.ndarray
        Integer replications, same shape as ``ucb_var``.
    """
    u = np.asarray(ucb_var, dtype=float)
    if not 1 <= int(n_min) <= int(n_max):
        raise ValueError(f"replications: need 1 <= n_min={n_min} <= n_max={n_max}")
    if not r2 > 0:
        return np.full(u.shape, int(n_min), dtype=np.int64)
    with np.errstate(over="ignore", invalid="ignore"):
        n = np.ceil(np.nan_to_num(u, nan=np.inf, posinf=np.inf) / r2)
    return np.clip(n, int(n_min), int(n_max)).astype(np.int64)


@dataclass(frozen=True)
class BTSRedSettings:
    """Settings of Mean-Var-BTS-RED.

    Attributes
    ----------
    alpha : float
        Risk aversion of ``MV = f - alpha sigma^2`` (the paper's ``w = 1 / (1 + alpha)``).
    batch_budget : int
        ``N``, training runs per batch.
    n_min, n_max : int or None
        Bounds of the replication rule; ``n_max`` None: ``N``.
    beta_var : float
        ``beta'`` of the noise variance's upper bound ``U_t``.
    n_init : int
        Initial Sobol inputs (``n_min`` replications each) where the benchmark gives none.
    n_candidates : int
        Sobol points of a continuous space's Thompson-sampling set per batch.
    kind : {"rbf", "matern52"}
        Kernel of both GPs.
    """

    alpha: float = 1.0
    batch_budget: int = 10
    n_min: int = 2
    n_max: int | None = None
    beta_var: float = 1.0
    n_init: int = 5
    n_candidates: int = 1024
    kind: str = "rbf"

    def __post_init__(self) -> None:
        if not float(self.alpha) >= 0:
            raise ValueError(f"alpha={self.alpha} must be >= 0")
        if int(self.n_min) < 2:
            raise ValueError(f"n_min={self.n_min} must be >= 2: a sample variance needs two "
                             "replications")
        if not int(self.n_min) <= self.max_replications <= int(self.batch_budget):
            raise ValueError(f"need n_min={self.n_min} <= n_max={self.max_replications} <= "
                             f"batch_budget={self.batch_budget}; raise the batch budget N")
        if int(self.n_init) < 2 or int(self.n_candidates) < 1 or not self.beta_var >= 0:
            raise ValueError(f"n_init={self.n_init} must be >= 2, n_candidates="
                             f"{self.n_candidates} >= 1 and beta_var={self.beta_var} >= 0")

    @property
    def max_replications(self) -> int:
        """``n_max`` (``N`` when not given)."""
        return int(self.batch_budget if self.n_max is None else self.n_max)


@dataclass(frozen=True)
class BatchEntry:
    """One input of a proposed batch.

    Attributes
    ----------
    index : int
        Its row in the candidate set.
    n : int
        Its replications.
    reason : str
        ``"replication_rule"`` (``n`` is the rule's count), ``"budget"`` (cut to the budget
        left) or ``"max_seeds"`` (cut to the candidate's capacity).
    """

    index: int
    n: int
    reason: str = "replication_rule"


class _Posterior:
    """Both GPs fitted on the data of one batch boundary (raw scale in, raw scale out)."""

    def __init__(self, X: np.ndarray, ybar: np.ndarray, s2: np.ndarray, n: np.ndarray,
                 st: BTSRedSettings, seed: int) -> None:
        rep = n >= 2
        self.sigma2_max = float(np.max(s2[rep])) if rep.any() else 0.0
        self.r2 = r_squared(self.sigma2_max, st.batch_budget)
        self.mf, self.sf = standardize(ybar)
        noise_f = max(self.r2 / self.sf**2, _NOISE_FLOOR)
        yf = (ybar - self.mf) / self.sf
        hf = fit_map(X, yf, kind=st.kind, fixed_noise=np.full(len(yf), noise_f), seed=seed)
        self.gp_f = ExactGP(X, yf, noise_f, hf.lengthscales, st.kind)
        g = -s2[rep]  # observations of g = -sigma^2
        self.mg, self.sg = standardize(g)
        yg = (g - self.mg) / self.sg
        hg = fit_map(X[rep], yg, kind=st.kind, fixed_noise=None, seed=seed + 1)
        self.gp_g = ExactGP(X[rep], yg, float(hg.noise), hg.lengthscales, st.kind)
        self.st = st

    def mean_mv(self, C: np.ndarray) -> np.ndarray:
        """``(m,)`` posterior mean of MV: ``mu_f + alpha mu_g`` (raw scale)."""
        mf, _ = self.gp_f.predict(C)
        mg, _ = self.gp_g.predict(C)
        return (self.mf + self.sf * mf) + self.st.alpha * (self.mg + self.sg * mg)

    def ucb_var(self, C: np.ndarray) -> np.ndarray:
        """``(m,)`` ``U_t = -mu'_t + beta' sigma'_t``, the noise variance's upper bound."""
        mg, vg = self.gp_g.predict(C)
        return -(self.mg + self.sg * mg) + self.st.beta_var * self.sg * np.sqrt(vg)

    def samples(self, C: np.ndarray, k: int, rng: np.random.Generator) -> np.ndarray:
        """``(m, k)`` joint posterior samples of ``f + alpha g`` on ``C`` (raw scale): ``k``
        independent pairs ``(f~, g~)``, one per entry of a batch."""
        f = _joint_samples(self.gp_f, C, k, rng)
        g = _joint_samples(self.gp_g, C, k, rng)
        return (self.mf + self.sf * f) + self.st.alpha * (self.mg + self.sg * g)


def _joint_samples(gp: ExactGP, C: np.ndarray, k: int, rng: np.random.Generator) -> np.ndarray:
    """``(m, k)`` draws of the latent posterior of ``gp`` jointly on ``C (m, d)``."""
    Ks = kernel(gp.X_, C, gp.lengthscales_, gp.kind_)  # (n, m)
    mean = Ks.T @ gp.alpha_
    V = solve_triangular(gp.L_, Ks, lower=True, check_finite=False)  # (n, m)
    cov = kernel(C, C, gp.lengthscales_, gp.kind_) - V.T @ V  # (m, m)
    L, _ = robust_cholesky(0.5 * (cov + cov.T) + 1e-9 * np.eye(len(C)), max_tries=12)
    return mean[:, None] + L @ rng.standard_normal((len(C), k))


class BTSRed:
    """Mean-Var-BTS-RED's state: the batch entries seen so far, and the next batch.

    The caller runs the entries of :meth:`propose` (each input ``n`` times), hands each one's
    returns to :meth:`tell`, and asks :meth:`recommend` at batch boundaries.

    Parameters
    ----------
    settings : BTSRedSettings
    seed : int
        Seed of the Thompson samples and of the MAP fits' restarts.
    """

    def __init__(self, settings: BTSRedSettings, seed: int) -> None:
        self.settings = settings
        self._rng = np.random.default_rng([int(seed), 37])
        self._seed = int(seed)
        self._X: list[np.ndarray] = []
        self._ybar: list[float] = []
        self._s2: list[float] = []
        self._n: list[int] = []
        self._post: _Posterior | None = None
        self.last_r2: float | None = None

    @property
    def n_entries(self) -> int:
        """Batch entries told so far."""
        return len(self._n)

    @property
    def inputs(self) -> np.ndarray:
        """``(entries, dim)`` the inputs told so far, in order."""
        return np.array(self._X)

    def tell(self, x: np.ndarray, values: list[float]) -> None:
        """One entry's returns at input ``x (dim,)`` (its mean and sample variance join the
        data; one return gives a mean only)."""
        v = np.asarray(values, dtype=float)
        if v.size < 1 or not np.isfinite(v).all():
            raise ValueError(f"tell: need at least one finite return, got {values!r}")
        self._X.append(np.asarray(x, dtype=float).copy())
        self._ybar.append(float(v.mean()))
        self._s2.append(float(v.var(ddof=1)) if v.size >= 2 else 0.0)
        self._n.append(int(v.size))
        self._post = None

    def _posterior(self) -> _Posterior:
        if self._post is None:
            n = np.array(self._n)
            if (n >= 2).sum() < 2:
                raise RuntimeError("BTS-RED needs two inputs with >= 2 replications (the "
                                   "initial design) before its models")
            self._post = _Posterior(np.array(self._X), np.array(self._ybar),
                                    np.array(self._s2), n, self.settings,
                                    self._seed + 7 * len(n))
        return self._post

    def propose(self, candidates: np.ndarray, runs_left: int,
                capacity: np.ndarray | None = None) -> list[BatchEntry]:
        """The next batch on ``candidates (m, dim)``: Thompson-sampled inputs with their
        replications, at most ``N`` runs and at most ``runs_left``.

        Parameters
        ----------
        candidates : numpy.ndarray
            ``(m, dim)`` the finite set the samples are maximized over.
        runs_left : int
            Training runs left in the whole budget (the last batch is cut to it).
        capacity : numpy.ndarray, optional
            ``(m,)`` runs each candidate can still take (a table's unused stored seeds);
            candidates below ``n_min`` are not sampled, an entry is cut to the rest.

        Returns
        -------
        list of BatchEntry
            In the order the samples were drawn (at least one entry while runs are left).
        """
        st = self.settings
        C = np.asarray(candidates, dtype=float)
        cap = np.full(len(C), np.inf) if capacity is None else np.asarray(capacity, float).copy()
        post = self._posterior()
        self.last_r2 = post.r2
        n_rule = replications(post.ucb_var(C), post.r2, st.n_min, st.max_replications)
        draws = post.samples(C, math.ceil(st.batch_budget / st.n_min) + 1, self._rng)
        out: list[BatchEntry] = []
        used = 0
        for b in range(draws.shape[1]):
            room = min(st.batch_budget - used, int(runs_left) - used)
            ok = cap >= st.n_min
            if room <= 0 or not ok.any():
                break
            i = int(np.argmax(np.where(ok, draws[:, b], -np.inf)))
            n = int(n_rule[i])
            if used + n > st.batch_budget and out:  # overflows the batch: not run (item 4)
                break
            reason = ("replication_rule" if n <= min(room, cap[i]) else
                      "budget" if room <= cap[i] else "max_seeds")
            n = int(min(n, room, cap[i]))
            out.append(BatchEntry(i, n, reason))
            used += n
            cap[i] -= n
        return out

    def recommend(self) -> int:
        """Index (into the entries told so far) of the evaluated input with the best posterior
        mean MV; before the models exist (the initial design), of the best sample MV."""
        if (np.array(self._n) >= 2).sum() < 2:
            return self.sample_mv_best()
        return int(np.argmax(self._posterior().mean_mv(np.array(self._X))))

    def sample_mv_best(self) -> int:
        """Index of the entry with the best sample MV (``ybar - alpha s^2``) so far."""
        return int(np.argmax(np.array(self._ybar) - self.settings.alpha * np.array(self._s2)))
