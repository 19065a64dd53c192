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

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from erahbo._data import Observations, config_seeds
from erahbo._search import continuous_argmax
from erahbo.models import KERNELS
from erahbo.policies import AdaptiveK, BetaStopSchedule, make_policy
from erahbo.space import SearchSpace
from erahbo.surrogate import ENGINES, RoundModel, RoundSettings, fit_hyperparameters, make_round

__all__ = ["METHODS", "Optimizer", "Result", "Trial", "optimize"]

METHODS = ("erahbo", "rahbo", "gpucb", "random")


@dataclass
class Trial:
    """What to run next: a configuration and the seeds to train it with.

    Attributes
    ----------
    config : dict
        Hyperparameter values (inactive conditionals left out); on a finite table, the row.
    seeds : list of int
        Distinct positive seeds, one training run each.
    config_id : int
        Id of the configuration (finite table: its row index; otherwise the order of first
        evaluation).
    round : int
        Round number (initial-design configurations are rounds too).
    phase : str
        ``"init"`` or ``"bo"``.
    trial_id : int
        Running number of the trial.
    """

    config: dict[str, Any]
    seeds: list[int]
    config_id: int
    round: int
    phase: str
    trial_id: int
    u: np.ndarray = field(repr=False)


@dataclass
class Result:
    """Outcome of an optimization run.

    Attributes
    ----------
    incumbent : dict or None
        Recommended configuration: ``argmax LCB_MV`` (``beta``) over evaluated configurations.
    incumbent_id : int or None
        Its configuration id.
    incumbent_mv : float
        Posterior mean of ``MV`` at the incumbent, ``mu_f - alpha * mu_var``.
    history : pandas.DataFrame
        One row per training run: ``iteration, phase, config_id, <hyperparameters>, seed,
        return, k`` (seeds of the configuration so far), ``k_round, wall_time`` (s since start).
    rounds : pandas.DataFrame
        One row per round: ``iteration, phase, config_id, k`` (seeds used in the round),
        ``k_total, ucb_mv, lcb_mv`` (at ``x_t`` after the round, ``beta_stop``), ``B_t,
        beta_stop, acquisition, stop_reason, mean, var``.
    configs : pandas.DataFrame
        One row per evaluated configuration: ``config_id``, hyperparameters, ``mean, var, k``.
    method : str
    n_evals : int
        Training runs made.
    """

    incumbent: dict[str, Any] | None
    incumbent_id: int | None
    incumbent_mv: float
    history: pd.DataFrame
    rounds: pd.DataFrame
    configs: pd.DataFrame
    method: str
    n_evals: int


@dataclass
class _Round:
    t: int
    config_id: int
    u: np.ndarray
    cand: int | None
    row0: int | None  # row of x_t in D_{t-1}
    rm: RoundModel | None
    B_t: float
    beta_stop: float
    acq: float
    k: int = 0
    ib: Any = None


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
        raw_samples: int = 512,
        n_polish: int = 5,
        engine: str = "fast",
    ) -> None:
        if method not in METHODS:
            raise ValueError(f"method={method!r} must be one of {METHODS}")
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
        self._used = 0
        self._n_trials = 0
        self._hist: list[tuple] = []
        self._rounds: list[dict[str, Any]] = []
        self._rng = np.random.default_rng([self.seed, 2])
        self._rec_cache: tuple | None = None
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
        """Training runs told so far (initial design included)."""
        return sum(len(r) for r in self.data.returns)

    def _config(self, cid: int, u: np.ndarray) -> dict[str, Any]:
        if self.space.is_finite:
            return self.space.candidate_config(cid)
        return self.space.decode(u)

    def _trial(self, cid: int, u: np.ndarray, n: int, phase: str, t: int) -> Trial:
        seeds = config_seeds(self.seed, cid, self.data.n_seeds(cid), n)
        self._n_trials += 1
        self._pending = Trial(self._config(cid, u), seeds, cid, t, phase, self._n_trials, u.copy())
        return self._pending

    def _new_id(self, u: np.ndarray) -> int:
        for r in range(self.data.n):  # a repeat of an evaluated point pools with it
            if np.array_equal(self.data.U[r], u):
                return self.data.config_ids[r]
        self._next_id += 1
        return self._next_id - 1

    def _round_model(self) -> RoundModel:
        d = self.data
        return make_round(self.engine, self._fast, d.U, d.ybar, d.s2, d.k, self._settings, self._C)

    def _fit(self) -> None:
        d = self.data
        self._settings = fit_hyperparameters(
            d.U,
            d.ybar,
            d.s2,
            d.k,
            kind=self.kernel,
            beta=self.beta,
            rho_max2=self.rho_max2,
            seed=self.seed,
        )
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
            n = self.k_init
            return self._trial(cid, u, n, "init", self._n_rounds)
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
        if self._settings is None or (
            self.refit_every and self._rounds_since_fit >= self.refit_every
        ):
            self._fit()
        self._n_rounds += 1
        self._rounds_since_fit += 1
        tau = 0.0 if self.budget is None else self._used / max(self.budget, 1)
        bs = self.schedule(tau)
        rm, B_t, acq, cand = None, np.nan, np.nan, None
        if self.method == "random":
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
                u, acq = continuous_argmax(
                    rm,
                    self.space,
                    self.weight,
                    self.data.U,
                    seed=self.seed * 100003 + self._n_rounds,
                    raw_samples=self.raw_samples,
                    n_polish=self.n_polish,
                )
                cid = self._new_id(u)
            B_t, _ = rm.best_lcb_mv(self.weight, bs)
        n = int(min(self.policy.first, self.remaining))
        self._open = _Round(
            self._n_rounds,
            cid,
            np.asarray(u, dtype=float),
            cand,
            self.data.row_of(cid),
            rm,
            float(B_t),
            bs,
            float(acq),
        )
        return self._trial(cid, self._open.u, n, "bo", self._n_rounds)

    def tell(self, trial: Trial, returns: Sequence[float]) -> None:
        """Report the returns of ``trial`` (one per seed, in order; fewer if cut short)."""
        if self._pending is None or trial is not self._pending:
            raise ValueError("tell: this trial is not the pending one; tell each asked trial once")
        vals = [float(v) for v in np.atleast_1d(np.asarray(returns, dtype=float))]
        if not 1 <= len(vals) <= len(trial.seeds):
            raise ValueError(
                f"tell: got {len(vals)} returns for {len(trial.seeds)} seeds; give one per seed "
                "(or fewer if the last runs were cut short, at least 1)"
            )
        if not np.all(np.isfinite(vals)):
            raise ValueError(f"tell: returns {vals} must be finite (map failures to a penalty)")
        seeds = trial.seeds[: len(vals)]
        row = self.data.add(trial.config_id, trial.u, vals, seeds)
        self._pending = None
        self._rec_cache = None
        k_cfg0 = len(self.data.returns[row]) - len(vals)
        now = time.perf_counter() - self._t0
        is_init = trial.phase == "init"
        k_round0 = 0 if is_init else self._open.k
        for j, (s, v) in enumerate(zip(seeds, vals, strict=True)):
            self._hist.append(
                (
                    trial.round,
                    trial.phase,
                    trial.config_id,
                    trial.config,
                    s,
                    v,
                    k_cfg0 + j + 1,
                    k_round0 + j + 1,
                    now,
                )
            )
        if is_init:
            if self.initial_in_budget:
                self._used += len(vals)
            self._log_round(
                trial.round,
                "init",
                trial.config_id,
                len(vals),
                row,
                None,
                np.nan,
                np.nan,
                np.nan,
                "initial",
            )
            return
        self._used += len(vals)
        r = self._open
        r.k += len(vals)
        ib = None
        if r.rm is not None:
            d = self.data
            ib = r.rm.inner(
                r.row0,
                r.u,
                r.cand,
                float(d.ybar[row]),
                float(d.s2[row]),
                int(d.k[row]),
                r.beta_stop,
                self.weight,
            )
        if isinstance(self.policy, AdaptiveK):
            reason = self.policy.decide(r.k, ib.ucb_mv, r.B_t)
            if reason is None and self.remaining < 1:
                reason = "budget"
        else:
            reason = "fixed_k" if r.k >= self.policy.k else "budget"
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
        self._rounds.append(
            {
                "iteration": t,
                "phase": phase,
                "config_id": cid,
                "k": k,
                "k_total": int(d.k[row]) if row is not None else 0,
                "ucb_mv": ib.ucb_mv if ib else np.nan,
                "lcb_mv": ib.lcb_mv if ib else np.nan,
                "B_t": B_t,
                "beta_stop": bs,
                "acquisition": acq,
                "stop_reason": reason,
                "mean": float(d.ybar[row]) if row is not None else np.nan,
                "var": float(d.s2[row]) if row is not None else np.nan,
            }
        )

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
        if self._settings is None:  # before the first fit: sample estimates
            mv = d.ybar - self.alpha * d.s2
            row = int(np.argmax(d.ybar - self.weight * d.s2))
            out = (row, float(mv[row]))
        else:
            rm = self._round_model()
            _, row = rm.best_lcb_mv(self.weight, self.beta)
            mf, _, mv, _ = rm.predict(d.U[row][None, :])
            out = (row, float(mf[0] - self.alpha * mv[0]))
        self._rec_cache = out
        return out

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
        names = self.space.names
        hist = pd.DataFrame(
            [
                (t, ph, cid, *[cfg.get(nm) for nm in names], s, v, k, kr, w)
                for (t, ph, cid, cfg, s, v, k, kr, w) in self._hist
            ],
            columns=[
                "iteration",
                "phase",
                "config_id",
                *names,
                "seed",
                "return",
                "k",
                "k_round",
                "wall_time",
            ],
        )
        d = self.data
        cfgs = [self._config(c, d.U[i]) for i, c in enumerate(d.config_ids)]
        configs = pd.DataFrame(
            {
                "config_id": d.config_ids,
                **{nm: [c.get(nm) for c in cfgs] for nm in names},
                "mean": d.ybar,
                "var": d.s2,
                "k": d.k.astype(int),
            }
        )
        rounds = pd.DataFrame(
            self._rounds,
            columns=[
                "iteration",
                "phase",
                "config_id",
                "k",
                "k_total",
                "ucb_mv",
                "lcb_mv",
                "B_t",
                "beta_stop",
                "acquisition",
                "stop_reason",
                "mean",
                "var",
            ],
        )
        rec = self._recommend()
        inc_id = None if rec is None else d.config_ids[rec[0]]
        return Result(
            incumbent=None if rec is None else cfgs[rec[0]],
            incumbent_id=inc_id,
            incumbent_mv=np.nan if rec is None else rec[1],
            history=hist,
            rounds=rounds,
            configs=configs,
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

    if budget is None:
        raise ValueError("optimize: budget must be an int (training runs)")
    opt = Optimizer(
        space,
        method,
        budget=budget,
        seed=seed,
        alpha=alpha,
        beta=beta,
        k_min=k_min,
        k_max=k_max,
        k=k,
        **options,
    )
    while (trial := opt.ask()) is not None:
        opt.tell(trial, call_objective(objective, trial.config, trial.seeds))
    return opt.result()
