"""ERAHBO, RAHBO, GP-UCB and random search behind one ask/tell API (paper Sec. 3).

>>> import erahbo
>>> from erahbo.objectives.synthetic import Figure1Task
>>> task = Figure1Task()
>>> result = erahbo.optimize(task, task.space, method="erahbo", budget=200, seed=0)
>>> sorted(result.incumbent)
['x']

Ask/tell (the same loop, run by the caller):

>>> opt = erahbo.Optimizer(task.space, method="rahbo", k=2, budget=60, seed=0)
>>> while (trial := opt.ask()) is not None:
...     opt.tell(trial, [task(trial.config, s) for s in trial.seeds])
>>> opt.recommend() is not None
True

A BO round (Sec. 3): build both GPs on ``D_{t-1}`` with fixed hyperparameters (MAP on the
initial design, refit every ``refit_every`` rounds if > 0), choose
``x_t = argmax UCB_f - alpha LCB_var`` (GP-UCB: ``UCB_f``; random: uniform), compute
``B_t = max_{D_{t-1}} LCB_MV`` with ``beta_stop_t``, then spend seeds on ``x_t``: ``k`` for the
fixed-k methods; ERAHBO ``k_min`` first, then one more at a time until ``UCB_MV(x_t; k) <= B_t``
(models updated with the seeds seen so far) or ``k = k_max``.  The budget counts seeds; a round
is cut short when it runs out.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import pandas as pd

from erahbo._data import Observations, config_seeds
from erahbo._records import ROUND_COLUMNS, Result, Trial, _Round, configs_frame, history_frame
from erahbo._search import continuous_argmax
from erahbo.models import KERNELS, GPHyper
from erahbo.policies import AdaptiveK, BetaStopSchedule, make_policy
from erahbo.space import SearchSpace
from erahbo.surrogate import ENGINES, RoundModel, RoundSettings, fit_hyperparameters, make_round
from erahbo.validation import check_options

__all__ = ["METHODS", "Optimizer", "Result", "Trial", "optimize"]

METHODS = ("erahbo", "rahbo", "gpucb", "random")


class Optimizer:
    """Sequential risk-aware optimizer with an ask/tell interface.

    Parameters
    ----------
    space : SearchSpace or anything SearchSpace accepts
        Search space; a pandas DataFrame is a finite candidate table (config ids = rows).
    method : {"erahbo", "rahbo", "gpucb", "random"}
    budget : int or None
        Training runs (seeds) in all; None: unlimited (``ask`` never returns None).
    seed : int
        Seeds the initial design, the seeds handed to the objective, restarts and sampling.
    alpha : float
        Risk aversion in ``MV = f - alpha rho^2`` (GP-UCB ignores it when choosing).
    beta : float
        Acquisition confidence: bounds are ``mu +- sqrt(beta) sigma`` (paper: 2.5).
    beta_stop : float
        Confidence of ``B_t`` and of the stopping UCB (paper: 1.0); maximum of a schedule.
    schedule : {"constant", "exponential", "sigmoid"}
        ``beta_stop`` schedule over the progress ``t / T`` (seeds used over ``budget``).
    gamma, slope : float
        Parameters of the exponential and sigmoid schedules.
    k_min, k_max : int
        ERAHBO's seeds per round range.
    k : int
        Seeds per round of the fixed-k methods (paper: 20; RAHBO also 2).
    n_init : int
        Size of the initial Sobol design.
    k_init : int or None
        Seeds per initial configuration; default ``k_max`` for ERAHBO, ``k`` otherwise.
    initial_design : sequence or None
        Given initial configurations instead of Sobol: row indices (finite table), config dicts
        or a ``(n, dim)`` array of encodings.  They are asked first, with ``k_init`` seeds each.
    initial_in_budget : bool
        Count the initial design's seeds in ``budget`` (default).  False for shared initial
        designs (offline benchmark: tell them once, only the BO seeds count).
    kernel : {"rbf", "matern52"}
    rho_max2 : float or None
        ``rho_max^2`` of eq. Sigma_hat (raw scale); None: the largest sample variance observed
        before the round (scale-equivariant; see docs/method.md).
    refit_every : int
        0: MAP hyperparameters once, after the initial design (paper); m: refit every m rounds.
    hyperparameters : (GPHyper, GPHyper) or None
        Fixed hyperparameters of the mean GP and of the variance GP (no MAP fit at all).
    raw_samples, n_polish : int
        Continuous spaces: Sobol raw samples and L-BFGS-B starts per round.
    engine : {"fast", "reference"}
        Fast cached implementation or the plain reference (same decisions).

    Notes
    -----
    ``exclude(config_id)`` removes a finite-table row from the candidates (e.g. a replayed
    configuration whose stored seeds are used up); a round open at it ends at the next ask.
    ``tell`` accepts fewer returns than seeds (the first ones ran; the rest are not counted).
    """

    def __init__(
        self,
        space: Any,
        method: str = "erahbo",
        *,
        budget: int | None = None,
        seed: int = 0,
        alpha: float = 1.0,
        beta: float = 2.5,
        beta_stop: float = 1.0,
        schedule: str = "constant",
        gamma: float = 10.0,
        slope: float = 10.0,
        k_min: int = 2,
        k_max: int = 20,
        k: int = 20,
        n_init: int = 5,
        k_init: int | None = None,
        initial_design: Sequence[Any] | np.ndarray | None = None,
        initial_in_budget: bool = True,
        kernel: str = "rbf",
        rho_max2: float | None = None,
        refit_every: int = 0,
        hyperparameters: tuple[GPHyper, GPHyper] | None = None,
        raw_samples: int = 512,
        n_polish: int = 5,
        engine: str = "fast",
    ) -> None:
        if method not in METHODS:
            raise ValueError(f"method={method!r} must be one of {METHODS}")
        n_design = len(initial_design) if initial_design is not None else n_init
        check_options(alpha=alpha, beta=beta, beta_stop=beta_stop, k_min=k_min, k_max=k_max, k=k,
                      budget=budget if initial_in_budget else None, n_init=n_design,
                      k_init=(k_max if method == "erahbo" else k) if k_init is None else k_init)
        if budget is not None and not initial_in_budget:
            check_options(budget=budget)  # the initial design is not in the budget
        if kernel not in KERNELS:
            raise ValueError(f"kernel={kernel!r} must be one of {KERNELS}")
        if engine not in ENGINES:
            raise ValueError(f"engine={engine!r} must be one of {ENGINES}")
        if not isinstance(seed, int | np.integer) or seed < 0:
            raise ValueError(f"seed={seed!r} must be a non-negative int")
        for name, v in (("alpha", alpha), ("beta", beta)):
            if not np.isfinite(v) or v < 0:
                raise ValueError(f"{name}={v} must be a finite number >= 0")
        if rho_max2 is not None and not rho_max2 > 0:
            raise ValueError(f"rho_max2={rho_max2} must be > 0 or None (largest sample variance)")
        if int(refit_every) != refit_every or refit_every < 0:
            raise ValueError(f"refit_every={refit_every} must be an int >= 0 (0: never refit)")
        self.space = space if isinstance(space, SearchSpace) else SearchSpace(space)
        self.method, self.seed, self.alpha, self.beta = method, int(seed), float(alpha), float(beta)
        self.weight = 0.0 if method == "gpucb" else self.alpha  # risk weight of the choices
        self.policy = make_policy(method, k=k, k_min=k_min, k_max=k_max)
        self.schedule = BetaStopSchedule(schedule, beta_stop, gamma, slope)
        if schedule != "constant" and budget is None:
            raise ValueError(f"schedule={schedule!r} needs a budget (progress is t / budget)")
        default_k_init = k_max if method == "erahbo" else k
        self.k_init = int(default_k_init if k_init is None else k_init)
        if self.k_init < 2:
            raise ValueError(f"k_init={self.k_init} must be >= 2 (sample variance)")
        self.kernel, self.rho_max2, self.refit_every = kernel, rho_max2, int(refit_every)
        if hyperparameters is not None:
            hf, hv = hyperparameters
            if not (isinstance(hf, GPHyper) and isinstance(hv, GPHyper)) or hv.noise is None:
                raise TypeError(
                    "hyperparameters must be (GPHyper of the mean GP, GPHyper of the variance "
                    "GP with its noise), e.g. from erahbo.surrogate.fit_hyperparameters"
                )
            if refit_every:
                raise ValueError("refit_every must be 0 when hyperparameters are given")
        self.raw_samples, self.n_polish, self.engine = int(raw_samples), int(n_polish), engine
        self.initial_in_budget = bool(initial_in_budget)
        self._init = self._initial_design(initial_design, n_init)
        if budget is not None:
            if int(budget) != budget or budget < 0:
                raise ValueError(f"budget={budget} must be a non-negative int (training runs)")
            need = len(self._init) * self.k_init
            if self.initial_in_budget and budget < need:
                raise ValueError(
                    f"budget={budget} must cover the initial design ({len(self._init)} configs "
                    f"x k_init={self.k_init} = {need} runs); raise it or lower n_init/k_init"
                )
        self.budget = None if budget is None else int(budget)
        self.data = Observations(self.space.dim)
        self._C = self.space.candidates_unit() if self.space.is_finite else None
        self._allowed = np.ones(len(self._C), dtype=bool) if self._C is not None else None
        self._next_id = 0
        self._init_pos = 0
        self._n_rounds = 0
        self._rounds_since_fit = 0
        self._pending: Trial | None = None
        self._open: _Round | None = None
        self._settings: RoundSettings | None = None
        self._fast = None
        if hyperparameters is not None:
            self._use(RoundSettings(hyperparameters[0], hyperparameters[1], self.beta, rho_max2))
        self._used = 0
        self._n_trials = 0
        self._hist: list[tuple] = []
        self._rounds: list[dict[str, Any]] = []
        self._rng = np.random.default_rng([self.seed, 2])
        self._rec_cache: tuple | None = None
        self._seed_streams: dict[int, list[int]] = {}
        self._config_cache: tuple[int, dict[str, Any]] = (-1, {})
        self._infeasible: set[int] = set()
        self._forbidden: list[np.ndarray] = []  # encodings of infeasible configurations
        self._t0 = time.perf_counter()

    # ------------------------------------------------------------------ setup helpers
    def _initial_design(self, design: Any, n_init: int) -> list[tuple[int | None, np.ndarray]]:
        sp = self.space
        if design is None:
            if int(n_init) != n_init or n_init < 1:
                raise ValueError(f"n_init={n_init} must be an int >= 1")
            if sp.is_finite:
                return [
                    (int(i), sp.candidates_unit()[int(i)])
                    for i in sp.sobol_indices(min(n_init, sp.n_candidates), self.seed)
                ]
            return [(None, u) for u in sp.sobol_unit(int(n_init), self.seed)]
        items = list(design)
        if not items:
            raise ValueError("initial_design is empty; give at least one configuration or None")
        out: list[tuple[int | None, np.ndarray]] = []
        for it in items:
            if sp.is_finite:
                if isinstance(it, dict) or not float(it) == int(it):
                    raise TypeError("initial_design: on a finite table give row indices (ints)")
                i = int(it)
                if not 0 <= i < sp.n_candidates:
                    raise ValueError(f"initial_design: row {i} outside 0..{sp.n_candidates - 1}")
                out.append((i, sp.candidates_unit()[i]))
            elif isinstance(it, dict):
                out.append((None, sp.encode(it)))
            else:
                out.append((None, sp.project(np.asarray(it, dtype=float)[None, :])[0]))
        ids = [i for i, _ in out if i is not None]
        if len(set(ids)) != len(ids):
            raise ValueError("initial_design: rows must be distinct")
        return out

    @property
    def remaining(self) -> float:
        """Seeds left in the budget (inf when there is none)."""
        return np.inf if self.budget is None else self.budget - self._used

    @property
    def n_evals(self) -> int:
        """Training runs told so far (initial design included; failed runs excluded)."""
        return len(self._hist)

    def _config(self, cid: int, u: np.ndarray) -> dict[str, Any]:
        if self.space.is_finite:
            return self.space.candidate_config(cid)
        return self.space.decode(u)

    def _trial(self, cid: int, u: np.ndarray, n: int, phase: str, t: int) -> Trial:
        have = self.data.n_seeds(cid)
        stream = self._seed_streams.get(cid)
        if stream is None or len(stream) < have + n:  # the configuration's seed stream, cached
            stream = config_seeds(self.seed, cid, 0, max(2 * (have + n), 32))
            self._seed_streams[cid] = stream
        seeds = stream[have : have + n]
        self._n_trials += 1
        if self._config_cache[0] != cid:
            self._config_cache = (cid, self._config(cid, u))
        cfg = dict(self._config_cache[1])
        self._pending = Trial(cfg, seeds, cid, t, phase, self._n_trials, u)
        return self._pending

    def _new_id(self, u: np.ndarray) -> int:
        same = np.flatnonzero((self.data.U == u).all(1))  # a repeat pools with the evaluated point
        if same.size:
            return self.data.config_ids[int(same[0])]
        self._next_id += 1
        return self._next_id - 1

    def _row_mask(self) -> np.ndarray | None:
        """``(n,)`` bool: data rows that may be the incumbent (None: all, nothing infeasible)."""
        if not self._infeasible:
            return None
        return np.array([c not in self._infeasible for c in self.data.config_ids], dtype=bool)

    def _round_model(self) -> RoundModel:
        d = self.data
        return make_round(self.engine, self._fast, d.U, d.ybar, d.s2, d.k, self._settings, self._C)

    def _fit(self) -> None:
        d = self.data
        st = fit_hyperparameters(d.U, d.ybar, d.s2, d.k, kind=self.kernel, beta=self.beta,
                                 rho_max2=self.rho_max2, seed=self.seed)
        self._use(st)

    def _use(self, settings: RoundSettings) -> None:
        self._settings = settings
        if self.engine == "fast":
            from erahbo._fast_model import FastModel

            self._fast = FastModel(self._settings, self._C)
        self._rounds_since_fit = 0
        self._rec_cache = None

    # ------------------------------------------------------------------ ask / tell
    def ask(self) -> Trial | None:
        """Next trial to run, or None when the budget is spent (or no candidate is left)."""
        if self._pending is not None:
            raise RuntimeError(
                f"trial {self._pending.trial_id} is still pending: tell its returns first"
            )
        if self._init_pos < len(self._init):
            cid, u = self._init[self._init_pos]
            self._init_pos += 1
            cid = self._new_id(u) if cid is None else cid
            self._n_rounds += 1
            return self._trial(cid, u, self.k_init, "init", self._n_rounds)
        r = self._open
        if r is not None:
            if self._allowed is not None and not self._allowed[r.config_id]:
                self._close("excluded")
            elif self.remaining < 1:
                self._close("budget")
            else:
                return self._trial(r.config_id, r.u, 1, "bo", r.t)
        if self.remaining < 2 or (self._allowed is not None and not self._allowed.any()):
            return None
        return self._start_round()

    def _start_round(self) -> Trial:
        no_data = self.data.n == 0  # every initial configuration was infeasible
        if not no_data and (
            self._settings is None
            or (self.refit_every and self._rounds_since_fit >= self.refit_every)
        ):
            self._fit()
        self._n_rounds += 1
        self._rounds_since_fit += 1
        tau = 0.0 if self.budget is None else self._used / max(self.budget, 1)
        bs = self.schedule(tau)
        rm, B_t, acq, cand = None, np.nan, np.nan, None
        if self.method == "random" or no_data:
            if self._C is not None:
                free = self._allowed.copy()
                free[[c for c in self.data.config_ids]] = False
                pool = np.flatnonzero(free if free.any() else self._allowed)
                cand = int(self._rng.choice(pool))
                u, cid = self._C[cand], cand
            else:
                u = self.space.sample_unit(1, self._rng)[0]
                cid = self._new_id(u)
        else:
            rm = self._round_model()
            if self._C is not None:
                cand, acq = rm.select(self._allowed, self.weight)
                u, cid = self._C[cand], cand
            else:
                forbidden = np.asarray(self._forbidden) if self._forbidden else None
                u, acq = continuous_argmax(rm, self.space, self.weight, self.data.U,
                                           seed=self.seed * 100003 + self._n_rounds,
                                           raw_samples=self.raw_samples, n_polish=self.n_polish,
                                           forbidden=forbidden)
                cid = self._new_id(u)
            B_t, _ = rm.best_lcb_mv(self.weight, bs, self._row_mask())
        n = int(min(self.policy.first, self.remaining))
        self._open = _Round(self._n_rounds, cid, np.asarray(u, dtype=float), cand,
                            self.data.row_of(cid), rm, float(B_t), bs, float(acq))
        return self._trial(cid, self._open.u, n, "bo", self._n_rounds)

    def tell(self, trial: Trial, returns: Sequence[float], *, infeasible: bool = False) -> None:
        """Report the returns of ``trial`` (one per seed, in order; fewer if cut short).

        Parameters
        ----------
        trial : Trial
            The pending trial (from the last :meth:`ask`).
        returns : sequence of float
            One finite return per seed; fewer when the last runs were cut short (a new
            configuration needs at least 2).
        infeasible : bool
            The configuration failed and must never be proposed again: its round ends
            (``stop_reason="infeasible"``), ``returns`` may hold NaN for failed runs (only the
            finite ones are recorded and counted in the budget), none of them enter the models,
            and it is no longer recommended nor used for ``B_t``.
        """
        if self._pending is None or trial is not self._pending:
            raise ValueError("tell: this trial is not the pending one; tell each asked trial once")
        if isinstance(returns, list | tuple):
            vals = [float(v) for v in returns]
        else:
            vals = np.atleast_1d(np.asarray(returns, dtype=float)).tolist()
        if not (1 if not infeasible else 0) <= len(vals) <= len(trial.seeds):
            raise ValueError(
                f"tell: got {len(vals)} returns for {len(trial.seeds)} seeds; give one per seed "
                "(or fewer if the last runs were cut short, at least 1)"
            )
        seeds = trial.seeds[: len(vals)]
        if infeasible:
            seeds = [sd for sd, v in zip(seeds, vals, strict=True) if math.isfinite(v)]
            vals = [v for v in vals if math.isfinite(v)]
        elif not all(math.isfinite(v) for v in vals):
            raise ValueError(f"tell: returns {vals} must be finite (map failures to a penalty)")
        is_init = trial.phase == "init"
        if infeasible:
            self._infeasible.add(trial.config_id)
            self._forbidden.append(np.asarray(trial.u, dtype=float).copy())
            if self._allowed is not None:
                self._allowed[trial.config_id] = False
            row = self.data.row_of(trial.config_id)
            k_cfg0 = 0 if row is None else len(self.data.returns[row])
        else:
            row = self.data.add(trial.config_id, trial.u, vals, seeds)
            k_cfg0 = len(self.data.returns[row]) - len(vals)
        self._pending = None
        self._rec_cache = None
        now = time.perf_counter() - self._t0
        k_round0 = 0 if is_init else self._open.k
        for j, (sd, v) in enumerate(zip(seeds, vals, strict=True)):
            self._hist.append((trial.round, trial.phase, trial.config_id, trial.config, sd, v,
                               k_cfg0 + j + 1, k_round0 + j + 1, now))
        if not is_init or self.initial_in_budget:
            self._used += len(vals)
        if is_init:
            reason = "infeasible" if infeasible else "initial"
            self._log_round(trial.round, "init", trial.config_id, len(vals), row, None, np.nan,
                            np.nan, np.nan, reason)
            return
        r = self._open
        r.k += len(vals)
        if infeasible:
            self._close("infeasible")
            return
        ib = None
        if r.rm is not None:
            d = self.data
            ib = r.rm.inner(r.row0, r.u, r.cand, *d.stats(row), r.beta_stop, self.weight)
        if isinstance(self.policy, AdaptiveK) and ib is not None:
            reason = self.policy.decide(r.k, ib.ucb_mv, r.B_t)
            if reason is None and self.remaining < 1:
                reason = "budget"
        else:  # fixed k (or a round without models: no stopping rule)
            reason = "budget" if len(trial.seeds) < self.policy.first else "fixed_k"
        r.ib = ib
        if reason is not None:
            self._close(reason)

    def _close(self, reason: str) -> None:
        r = self._open
        row = self.data.row_of(r.config_id)
        self._log_round(r.t, "bo", r.config_id, r.k, row, r.ib, r.B_t, r.beta_stop, r.acq, reason)
        self._open = None

    def _log_round(self, t, phase, cid, k, row, ib, B_t, bs, acq, reason) -> None:
        d = self.data
        mean, var, k_total = d.stats(row) if row is not None else (np.nan, np.nan, 0)
        self._rounds.append({
            "iteration": t, "phase": phase, "config_id": cid, "k": k, "k_total": k_total,
            "ucb_mv": ib.ucb_mv if ib else np.nan, "lcb_mv": ib.lcb_mv if ib else np.nan,
            "B_t": B_t, "beta_stop": bs, "acquisition": acq, "stop_reason": reason,
            "mean": mean, "var": var,
        })

    def exclude(self, config_id: int) -> None:
        """Remove a finite-table row from the candidates (a round open at it ends at next ask)."""
        if self._allowed is None:
            raise ValueError("exclude: only finite candidate tables have rows to exclude")
        if not 0 <= int(config_id) < len(self._allowed):
            raise ValueError(f"exclude: config_id {config_id} outside 0..{len(self._allowed) - 1}")
        self._allowed[int(config_id)] = False

    # ------------------------------------------------------------------ recommendation
    def _recommend(self) -> tuple[int, float] | None:
        d = self.data
        if d.n == 0:
            return None
        if self._rec_cache is not None:
            return self._rec_cache
        mask = self._row_mask()
        if mask is not None and not mask.any():
            return None
        if self._settings is None:  # before the first fit: sample estimates
            mv = d.ybar - self.alpha * d.s2
            score = d.ybar - self.weight * d.s2
            row = int(np.argmax(score if mask is None else np.where(mask, score, -np.inf)))
            out = (row, float(mv[row]))
        else:
            rm = self._round_model()
            _, row = rm.best_lcb_mv(self.weight, self.beta, mask)
            mf, _, mv, _ = rm.predict(d.U[row][None, :])
            out = (row, float(mf[0] - self.alpha * mv[0]))
        self._rec_cache = out
        return out

    @property
    def incumbent_id(self) -> int | None:
        """Configuration id of :meth:`recommend`'s incumbent (None before any data)."""
        rec = self._recommend()
        return None if rec is None else self.data.config_ids[rec[0]]

    def recommend(self) -> dict[str, Any] | None:
        """Incumbent: ``argmax LCB_MV`` (``beta``) over evaluated configurations (None if none).

        GP-UCB, being risk-neutral, recommends ``argmax LCB_f``.
        """
        rec = self._recommend()
        if rec is None:
            return None
        cid = self.data.config_ids[rec[0]]
        return self._config(cid, self.data.U[rec[0]])

    def result(self) -> Result:
        """Current :class:`Result` (history, rounds, per-configuration table, incumbent)."""
        d, names = self.data, self.space.names
        cfgs = [self._config(c, d.U[i]) for i, c in enumerate(d.config_ids)]
        rec = self._recommend()
        return Result(
            incumbent=None if rec is None else cfgs[rec[0]],
            incumbent_id=None if rec is None else d.config_ids[rec[0]],
            incumbent_mv=np.nan if rec is None else rec[1],
            history=history_frame(self._hist, names),
            rounds=pd.DataFrame(self._rounds, columns=list(ROUND_COLUMNS)),
            configs=configs_frame(d, cfgs, names),
            method=self.method,
            n_evals=self.n_evals,
        )


def optimize(
    objective: Callable,
    space: Any,
    method: str = "erahbo",
    budget: int = 400,
    seed: int = 0,
    alpha: float = 1.0,
    beta: float = 2.5,
    k_min: int = 2,
    k_max: int = 20,
    k: int = 20,
    **options: Any,
) -> Result:
    """Run ``method`` on ``objective`` until ``budget`` training runs are spent.

    Parameters
    ----------
    objective : callable
        ``objective(config: dict, seed: int) -> float`` (a return to maximize), or a batch
        objective ``objective(config, seeds) -> list`` declared with
        :func:`erahbo.batch_objective`.
    space : SearchSpace or anything SearchSpace accepts
    method : {"erahbo", "rahbo", "gpucb", "random"}
    budget : int
        Training runs (seeds), initial design included.
    seed, alpha, beta, k_min, k_max, k :
        See :class:`Optimizer`.
    **options :
        Further :class:`Optimizer` options (``beta_stop``, ``schedule``, ``n_init``, ...).

    Returns
    -------
    Result
    """
    from erahbo.objectives import call_objective
    from erahbo.validation import check_objective

    if budget is None:
        raise ValueError("optimize: budget must be an int (training runs)")
    check_objective(objective)
    opt = Optimizer(space, method, budget=budget, seed=seed, alpha=alpha, beta=beta,
                    k_min=k_min, k_max=k_max, k=k, **options)
    while (trial := opt.ask()) is not None:
        opt.tell(trial, call_objective(objective, trial.config, trial.seeds))
    return opt.result()
