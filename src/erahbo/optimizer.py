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

Crash-safe studies (docs/robustness.md): ``optimize(..., journal="study.db")`` and
``Optimizer(..., journal="study.db")`` record every asked trial and every training run in an
SQLite journal (:mod:`erahbo.journal`) and resume from it exactly; failed runs (an objective
that raises, returns NaN/inf or exceeds ``run_timeout``) follow the ``failures`` policy
(:mod:`erahbo.failures`); the seeds of a round run concurrently on an executor
(:mod:`erahbo.executors`: a local process pool or Ray).

The one-call loop and the study helpers (:func:`optimize`, :func:`resume`,
:func:`load_objective`, :func:`objective_spec`, :func:`load_space`, :func:`study_options`)
live in :mod:`erahbo.loop`; they stay importable from here (resolved lazily, no import cycle).
"""

from __future__ import annotations

import hashlib
import math
import os
import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from erahbo._data import Observations, config_seeds
from erahbo._records import ROUND_COLUMNS, Result, Trial, _Round, failures_per_round, history_frame
from erahbo._search import continuous_argmax
from erahbo._threads import single_blas_thread
from erahbo.failures import (
    COUNTED,
    MAX_ABS_RETURN,
    FailurePolicy,
    Penalizer,
    TrialOutcome,
    evaluate,
    outcomes_from_returns,
    spent_runs,
    tell_values,
)
from erahbo.models import KERNELS, GPHyper
from erahbo.policies import AdaptiveK, BetaStopSchedule, make_policy
from erahbo.recommendation import configs_table
from erahbo.space import SearchSpace
from erahbo.surrogate import ENGINES, RoundModel, RoundSettings, fit_hyperparameters, make_round
from erahbo.validation import check_options

if TYPE_CHECKING:
    from erahbo.executors import Executor
    from erahbo.journal import Journal
    from erahbo.loop import (
        SYNTHETIC_TASKS,
        load_objective,
        load_space,
        objective_spec,
        optimize,
        resume,
        study_options,
    )

__all__ = [
    "METHODS",
    "SYNTHETIC_TASKS",
    "Optimizer",
    "Result",
    "Trial",
    "load_objective",
    "load_space",
    "objective_spec",
    "optimize",
    "resume",
    "study_options",
]

METHODS = ("erahbo", "rahbo", "gpucb", "random")
STOPPING_RULES = ("ucb", "race")
_FINAL = ("ok", "penalized", "retried", "failed")  # run statuses shown in the history
_WARM_FAILED = "failed before the study (warm start)"


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
    stopping : {"ucb", "race"}
        ERAHBO's rule for more seeds: ``"ucb"`` (the paper: continue while
        ``UCB_MV(x_t; k) > B_t``); ``"race"`` (an ablation after SMAC's intensifier, with
        sample statistics instead of the GPs): double the seeds, ``k_min, 2 k_min, 4 k_min,
        ... <= k_max``, while the sample MV of ``x_t`` is at least the best sample MV of the
        other evaluated configurations; reject it as soon as it is below.
    seed_batch : int
        Seeds ERAHBO asks for at once after the first ``k_min`` (default 1, the paper's
        rule: one seed, then the stopping rule). With ``n`` parallel workers, ``seed_batch=n``
        keeps them all busy: the rule is checked after each batch of up to ``n`` seeds, so a
        round may overshoot its stopping point by up to ``n - 1`` seeds (pooled, counted).
    n_parallel : int
        Trials that may be pending at once: :meth:`ask` may be called again before the
        earlier trials are told, up to ``n_parallel`` of them, each at a different
        configuration (default 1: the paper's sequential loop). New configurations are chosen
        with the pending ones believed at their posterior mean (kriging believer,
        :mod:`erahbo._parallel`); ``B_t``, ERAHBO's stopping rule and the recommendation use
        the real data only. :meth:`ask` returns None while the next decision needs the
        pending results (the initial design must be told before the first model fit);
        :attr:`n_pending` tells this apart from the end of the budget.
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
    warm_start : DataFrame, path, list of records or None
        Training runs done before this study (an earlier study's ``history.csv``, manual
        runs): one row per run with the hyperparameters and ``return`` (optionally ``seed``,
        ``status``; finite tables: ``config_id``), or ``{"config", "returns", "seeds"}``
        records (:mod:`erahbo._warm`). They join the data before the first round (history
        and rounds phase ``"warm"``), are not counted in ``budget`` or ``n_evals``, and their
        seeds are not handed out again; unknown seeds show as -1, -2, ... Failed warm runs
        (status ``penalized``/``failed``, a NaN or None return) follow ``failures``:
        ``"exclude"`` makes their configurations infeasible, otherwise they count at the
        penalty (the warm returns' lower quartile). With a warm start, ``n_init=0`` skips the
        initial design.
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
    journal : str or path-like, optional
        SQLite journal of the study (:mod:`erahbo.journal`). Every asked trial and every told
        run is committed before :meth:`ask` returns / :meth:`tell` acknowledges it. If the file
        holds a study with the same :meth:`study_settings`, the optimizer is rebuilt from the
        journal alone (by replay) and continues where it stopped: a trial that was asked but
        not told at a crash is the next :meth:`ask`. A study with other settings is refused
        (:class:`erahbo.journal.SettingsMismatchError`). Call :meth:`close` (or use ``with``)
        to release the journal.
    failures : {"penalize", "retry", "exclude"} or None
        What :meth:`tell` does with non-finite returns (failed runs; see
        :mod:`erahbo.failures`): ``"penalize"`` counts them at the penalty (the lower
        quartile of the feasible returns) in the configuration's statistics, ``"exclude"``
        marks the configuration infeasible; ``"retry"`` is for
        :func:`optimize` (in ask/tell mode the user ran the seeds: failures are penalized).
        Default None: a non-finite return raises ValueError, unless a journal is given (then
        ``"penalize"``, so that a journaled study never stops on a failed run).
    retries : int or None
        Retries per failed seed under ``failures="retry"`` (default 2).
    journal_info : dict, optional
        JSON facts stored in the journal that do not affect decisions (how to rebuild the
        objective: ``{"objective": "module:function"}`` or a bundled task name, executor, ...);
        read by ``erahbo resume``.
    synchronous : {"FULL", "NORMAL"}
        Journal durability: FULL (default) also survives power loss, NORMAL only crashes of
        the process (faster).

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
        seed_batch: int = 1,
        n_parallel: int = 1,
        stopping: str = "ucb",
        k: int = 20,
        n_init: int = 5,
        k_init: int | None = None,
        initial_design: Sequence[Any] | np.ndarray | None = None,
        initial_in_budget: bool = True,
        warm_start: Any = None,
        kernel: str = "rbf",
        rho_max2: float | None = None,
        refit_every: int = 0,
        hyperparameters: tuple[GPHyper, GPHyper] | None = None,
        raw_samples: int = 512,
        n_polish: int = 5,
        engine: str = "fast",
        journal: str | os.PathLike[str] | None = None,
        failures: str | FailurePolicy | None = None,
        retries: int | None = None,
        journal_info: dict[str, Any] | None = None,
        synchronous: str = "FULL",
    ) -> None:
        if method not in METHODS:
            raise ValueError(f"method={method!r} must be one of {METHODS}")
        if journal is not None:
            from erahbo.validation import check_journal_path

            check_journal_path(journal)
        check_options(retries=retries)
        if failures is None and journal is not None:
            failures = "penalize"
        self.failure_policy: FailurePolicy | None = (
            None if failures is None else FailurePolicy.coerce(failures, retries)
        )
        n_design = len(initial_design) if initial_design is not None else n_init
        no_design = warm_start is not None and initial_design is None and n_init == 0
        check_options(alpha=alpha, beta=beta, beta_stop=beta_stop, k_min=k_min, k_max=k_max, k=k,
                      budget=budget if initial_in_budget else None,
                      n_init=None if no_design else n_design,
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
        if not isinstance(seed_batch, int | np.integer) or seed_batch < 1:
            raise ValueError(
                f"seed_batch={seed_batch!r} must be an int >= 1 (seeds asked at once after "
                "k_min; the number of parallel workers, or 1 for the paper's rule)"
            )
        if seed_batch != 1 and method != "erahbo":
            raise ValueError(
                f"seed_batch={seed_batch} applies to ERAHBO's inner loop only; method "
                f"{method!r} asks its k={k} seeds at once already (drop seed_batch)"
            )
        self.seed_batch = int(seed_batch)
        if stopping not in STOPPING_RULES:
            raise ValueError(f"stopping={stopping!r} must be one of {STOPPING_RULES}")
        if stopping != "ucb" and method != "erahbo":
            raise ValueError(f"stopping={stopping!r} applies to ERAHBO only (method={method!r})")
        self.stopping = stopping
        if not isinstance(n_parallel, int | np.integer) or n_parallel < 1:
            raise ValueError(
                f"n_parallel={n_parallel!r} must be an int >= 1 (trials pending at once: the "
                "number of configurations trained in parallel, or 1 for the paper's loop)"
            )
        self.n_parallel = int(n_parallel)
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
        self._init = [] if no_design else self._initial_design(initial_design, n_init)
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
        self._pending: dict[int, Trial] = {}  # trial id -> asked, not yet told
        self._open: dict[int, _Round] = {}  # round t -> open BO round
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
        self._rm_cache: tuple[int, RoundModel] | None = None  # (data version, model)
        self._seed_streams: dict[int, list[int]] = {}
        self._config_cache: tuple[int, dict[str, Any]] = (-1, {})
        self._infeasible: set[int] = set()
        self._n_penalized: dict[int, int] = {}  # counted failed (penalized) runs per config
        self._forbidden: list[np.ndarray] = []  # encodings of infeasible configurations
        self._t_start = time.time()  # history wall times count from here (journal: its start)
        self._n_counted = 0  # counted runs (ok, penalized)
        self._n_ok = 0  # runs that returned a finite value
        self._first_error: str | None = None
        self._penalizer = Penalizer()  # feasible returns so far (failure policy, no journal)
        self._options: dict[str, Any] = {
            "method": method, "budget": self.budget, "seed": self.seed, "alpha": self.alpha,
            "beta": self.beta, "beta_stop": float(beta_stop), "schedule": schedule,
            "gamma": float(gamma), "slope": float(slope), "k_min": int(k_min),
            "k_max": int(k_max), "k": int(k), "n_init": int(n_init), "k_init": self.k_init,
            "kernel": kernel, "refit_every": self.refit_every,
            "raw_samples": self.raw_samples, "n_polish": self.n_polish,
            "rho_max2": None if rho_max2 is None else float(rho_max2),
            "initial_design": _design_json(initial_design),
            "initial_in_budget": self.initial_in_budget, "engine": engine,
            "hyperparameters": _hyper_json(hyperparameters),
        }
        if self.seed_batch != 1:  # absent at the default: journals of older versions resume
            self._options["seed_batch"] = self.seed_batch
        if self.n_parallel != 1:
            self._options["n_parallel"] = self.n_parallel
        if self.stopping != "ucb":
            self._options["stopping"] = self.stopping
        self._warm_seeds: dict[int, set[int]] = {}  # config id -> seeds run before the study
        self._warm_ok: list[float] = []  # finite warm returns (penalties are set below them)
        if warm_start is not None:
            from erahbo._warm import warm_records

            records = warm_records(warm_start, self.space)
            self._options["warm_start"] = records  # in the settings: a resume replays it
            self._apply_warm(records)
            if self.data.n == 0 and not self._init:
                raise ValueError(
                    "warm_start holds no configuration with at least 2 usable runs, and "
                    "n_init=0 leaves no initial design: give more runs or n_init >= 1"
                )
        self._study: Any = None  # erahbo.journal.JournaledStudy in journal mode
        if journal is not None:
            self._open_journal(journal, journal_info, synchronous)

    # ------------------------------------------------------------------ setup helpers
    def _apply_warm(self, records: list[dict[str, Any]]) -> None:
        """Add the warm-start runs to the data, the history and the rounds (not the budget).

        A failed warm run (return None) follows the study's failure policy: ``"exclude"``
        marks its configuration infeasible; otherwise it counts at the penalty (the lower
        quartile of the warm returns) in its configuration's statistics.
        """
        exclude = self.failure_policy is not None and self.failure_policy.mode == "exclude"
        # (records come from erahbo._warm.warm_records: a failed run's return is None)
        self._warm_ok = [v for rec in records for v in rec["returns"] if v is not None]
        penalty = Penalizer(self._warm_ok).penalty()
        excluded: dict[bytes, int] = {}  # encodings of warm configurations made infeasible
        for rec in records:
            key = None
            if self.space.is_finite:
                cid = int(rec["row"])
                u = self._C[cid]
            else:
                u = self.space.encode(rec["config"])
                key = np.asarray(u, dtype=float).tobytes()  # excluded: not in the data
                cid = excluded[key] if key in excluded else self._new_id(u)
            known = self._warm_seeds.get(cid, set())
            runs: list[tuple[int, float | None]] = []  # (seed, return; None: failed)
            for sd, v in zip(rec["seeds"] or [None] * len(rec["returns"]), rec["returns"],
                             strict=True):
                if sd is None:  # unknown seed: a negative placeholder, distinct per config
                    sd = -1 - len(known) - len(runs)
                if sd in known or any(sd == s for s, _ in runs):
                    continue  # the same run twice
                runs.append((int(sd), v))
            failed = sum(v is None for _, v in runs)
            if cid in self._infeasible or (exclude and failed):
                self._exclude_warm(cid, u, runs)
                if key is not None:
                    excluded[key] = cid
                continue
            vals = [penalty if v is None else v for _, v in runs]
            if not vals or (self.data.row_of(cid) is None and len(vals) < 2):
                continue  # (a new configuration needs 2 returns: its sample variance)
            seeds = [sd for sd, _ in runs]
            self._warm_seeds[cid] = known | set(seeds)  # only seeds that are in the data
            k0 = self.data.n_seeds(cid)
            row = self.data.add(cid, np.asarray(u, dtype=float), vals, seeds)
            self._penalizer.observe(v for _, v in runs if v is not None)
            if failed:
                self._n_penalized[cid] = self._n_penalized.get(cid, 0) + failed
            self._n_rounds += 1
            head = (self._n_rounds, "warm", cid, self._config(cid, u))
            for j, ((sd, v), y) in enumerate(zip(runs, vals, strict=True)):
                status, error = ("ok", None) if v is not None else ("penalized", _WARM_FAILED)
                self._hist.append((*head, sd, y, k0 + j + 1, j + 1, 0.0, status, error, 0, None,
                                   False))
            self._log_round(self._n_rounds, "warm", cid, len(vals), row, None, np.nan, np.nan,
                            np.nan, "warm")
        self._rec_cache = None

    def _exclude_warm(self, cid: int, u: np.ndarray, runs: list[tuple[int, float | None]]) -> None:
        """A warm configuration with a failed run under ``failures="exclude"``: infeasible
        (its runs go to the history only; further records of it join it there)."""
        if cid not in self._infeasible:
            self._infeasible.add(cid)
            self._forbidden.append(np.asarray(u, dtype=float).copy())
            if self._allowed is not None:
                self._allowed[cid] = False
        row = self.data.row_of(cid)
        k0 = self.data.n_seeds(cid)
        self._n_rounds += 1
        head = (self._n_rounds, "warm", cid, self._config(cid, u))
        for j, (sd, v) in enumerate(runs):
            status, error = ("ok", None) if v is not None else ("failed", _WARM_FAILED)
            self._hist.append((*head, sd, math.nan if v is None else v, k0, j + 1, 0.0, status,
                               error, 0, None, False))
        self._log_round(self._n_rounds, "warm", cid, 0, row, None, np.nan, np.nan, np.nan,
                        "infeasible")

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
        """Counted training runs so far (initial design included; failed runs not counted)."""
        return self._n_counted

    def _config(self, cid: int, u: np.ndarray) -> dict[str, Any]:
        if self.space.is_finite:
            return self.space.candidate_config(cid)
        return self.space.decode(u)

    def _trial(self, cid: int, u: np.ndarray, n: int, phase: str, t: int) -> Trial:
        warm = self._warm_seeds.get(cid, set())
        have = self.data.n_seeds(cid) - len(warm)  # seeds handed out by this study
        stream = self._seed_streams.get(cid)
        if stream is None or len(stream) < have + n:  # the configuration's seed stream, cached
            stream = config_seeds(self.seed, cid, 0, max(2 * (have + n), 32) + len(warm))
            stream = [sd for sd in stream if sd not in warm]  # warm-start seeds are used
            self._seed_streams[cid] = stream
        seeds = stream[have : have + n]
        self._n_trials += 1
        if self._config_cache[0] != cid:
            self._config_cache = (cid, self._config(cid, u))
        cfg = dict(self._config_cache[1])
        trial = Trial(cfg, seeds, cid, t, phase, self._n_trials, u)
        self._pending[trial.trial_id] = trial
        return trial

    def _new_id(self, u: np.ndarray) -> int:
        same = np.flatnonzero((self.data.U == u).all(1))  # a repeat pools with the evaluated point
        if same.size:
            return self.data.config_ids[int(same[0])]
        self._next_id += 1
        return self._next_id - 1

    def _row_mask(self) -> np.ndarray | None:
        """``(n,)`` bool: data rows that may be the incumbent (None: all of them).

        Infeasible configurations are never the incumbent and never set ``B_t``, nor are
        configurations whose counted runs failed at least half of the time (``2 * n_failed >=
        k``): with a constant penalty their sample variance measures the penalty, not the
        configuration. A configuration with sporadic failures stays eligible: the failures
        are outcomes of it, already in its sample mean (lower) and variance (larger)
        (``docs/robustness.md``, "Sporadic failures").
        """
        d = self.data
        bad = set(self._infeasible)
        for cid, n_pen in self._n_penalized.items():
            row = d.row_of(cid)
            if row is not None and 2 * n_pen >= d.k[row]:
                bad.add(cid)
        if not bad:
            return None
        return np.array([c not in bad for c in d.config_ids], dtype=bool)

    def _round_model(self) -> RoundModel:
        """Round model on the current data, shared by the recommendation and the next ask.

        The benchmark asks for the incumbent after every tell; when that tell closed the round,
        the next ``ask`` sees the same data and reuses the model instead of refactoring it.
        """
        d = self.data
        if self._rm_cache is not None and self._rm_cache[0] == d.version:
            return self._rm_cache[1]
        rm = make_round(self.engine, self._fast, d.U, d.ybar, d.s2, d.k, self._settings, self._C)
        self._rm_cache = (d.version, rm)
        return rm

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
        self._rm_cache = None

    # ------------------------------------------------------------------ settings, journal
    def study_settings(self) -> dict[str, Any]:
        """The settings that determine the optimizer's decisions, as plain JSON values.

        A journal stores them and resumes only a study with the same ones. The space is its
        :meth:`SearchSpace.to_json`; a finite candidate table adds the SHA-256 of its rows.

        Returns
        -------
        dict
            ``method, budget, seed, alpha, beta, beta_stop, schedule, gamma, slope, k_min,
            k_max, k, n_init, k_init, kernel, refit_every, raw_samples, n_polish, rho_max2,
            initial_design, initial_in_budget, engine, hyperparameters, failures, retries,
            space`` (and ``seed_batch`` when it is not 1).
        """
        out = dict(self._options)
        out["failures"] = None if self.failure_policy is None else self.failure_policy.mode
        out["retries"] = None if self.failure_policy is None else self.failure_policy.retries
        out["space"] = _space_json(self.space)
        return out

    def _open_journal(self, path: Any, info: dict[str, Any] | None, synchronous: str) -> None:
        from erahbo._budget import BudgetSteps, open_journal
        from erahbo.journal import JournaledStudy

        # a larger budget than the journaled one extends the study (erahbo._budget)
        journal, extend = open_journal(path, self.study_settings(), info, synchronous)
        warm = self._warm_ok  # finite warm returns (not their penalties)
        try:
            self._t_start = journal.created_at
            steps = BudgetSteps(self, journal)  # replays each event under its own budget
            self._study = JournaledStudy(
                self,
                journal,
                failures=self.failure_policy,
                ask=steps.ask(self._ask),
                tell_outcome=steps.tell(lambda opt, trial, outcome: opt._tell_outcome(trial,
                                                                                   outcome)),
            )
            if extend is not None:
                journal.extend_budget(extend)
            self.budget = journal.budget()
            self._options["budget"] = self.budget
            # penalties of failed runs use every return seen, warm runs included
            self._study.penalizer.observe(warm)
        except BaseException:
            journal.close()
            raise

    @property
    def journal(self) -> Journal | None:
        """The open study journal (None without one)."""
        return None if self._study is None else self._study.journal

    def close(self) -> None:
        """Close the journal (release its lock); the optimizer can still report results."""
        if self._study is not None:
            self._study.journal.close()

    def __enter__(self) -> Optimizer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ------------------------------------------------------------------ ask / tell
    def ask(self) -> Trial | None:
        """Next trial to run, or None when the budget is spent (or no candidate is left).

        With ``n_parallel > 1`` it may be called again before the earlier trials are told (up
        to ``n_parallel`` pending); it then also returns None while the next choice needs a
        pending result (:attr:`n_pending` > 0): tell one and ask again.

        With a journal, the trial is committed to it first; after a resume, the trials that
        were asked but not told before the crash are handed out again (same configurations,
        seeds).
        """
        if self._study is not None:
            return self._study.ask()
        return self._ask()

    @property
    def n_pending(self) -> int:
        """Trials asked and not yet told."""
        return len(self._pending)

    def _pending_seeds(self) -> int:
        """Seeds of the pending trials that will count in the budget."""
        return sum(len(t.seeds) for t in self._pending.values()
                   if t.phase != "init" or self.initial_in_budget)

    @single_blas_thread  # every path in: ask, the journal's ask, replay
    def _ask(self) -> Trial | None:
        if len(self._pending) >= self.n_parallel:
            ids = ", ".join(str(i) for i in self._pending)
            raise RuntimeError(
                f"trial(s) {ids} still pending (n_parallel={self.n_parallel}): tell their "
                "returns first, or build the Optimizer with a larger n_parallel"
            )
        if self._init_pos < len(self._init):
            cid, u = self._init[self._init_pos]
            self._init_pos += 1
            cid = self._new_id(u) if cid is None else cid
            self._n_rounds += 1
            return self._trial(cid, u, self.k_init, "init", self._n_rounds)
        free = self.remaining - self._pending_seeds()
        busy = {t.round for t in self._pending.values()}
        for r in list(self._open.values()):  # open rounds first, oldest first
            if r.t in busy:
                continue
            if self._allowed is not None and not self._allowed[r.config_id]:
                self._close(r, "excluded")
            elif free < 1:
                self._close(r, "budget")
            else:  # the inner loop: one more seed, or a batch of them (seed_batch)
                left = self.policy.k_max - r.k if isinstance(self.policy, AdaptiveK) else 1
                step = r.k if self.stopping == "race" else self.seed_batch  # race: double k
                n = min(step, free, max(left, 1))
                return self._trial(r.config_id, r.u, int(n), "bo", r.t)
        if any(t.phase == "init" for t in self._pending.values()):
            return None  # the first model fit waits for the whole initial design
        allowed = self._allowed
        if allowed is not None and self._pending:  # pending configurations are not proposed
            allowed = allowed.copy()
            allowed[[t.config_id for t in self._pending.values()]] = False
        if free < 2 or (allowed is not None and not allowed.any()):
            return None
        return self._start_round(int(min(self.policy.first, free)), allowed)

    def _start_round(self, n: int, allowed: np.ndarray | None) -> Trial:
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
                free = allowed.copy()
                free[[c for c in self.data.config_ids]] = False
                pool = np.flatnonzero(free if free.any() else allowed)
                cand = int(self._rng.choice(pool))
                u, cid = self._C[cand], cand
            else:
                u = self.space.sample_unit(1, self._rng)[0]
                cid = self._new_id(u)
        else:
            rm = self._round_model()
            choose = self._believer_model(rm)  # rm itself when nothing new is pending
            if self._C is not None:
                cand, acq = choose.select(allowed, self.weight)
                u, cid = self._C[cand], cand
            else:
                avoid = self._forbidden + [t.u for t in self._pending.values()]
                u, acq = continuous_argmax(choose, self.space, self.weight, self.data.U,
                                           seed=self.seed * 100003 + self._n_rounds,
                                           raw_samples=self.raw_samples, n_polish=self.n_polish,
                                           forbidden=np.asarray(avoid) if avoid else None)
                cid = self._new_id(u)
            B_t, _ = rm.best_lcb_mv(self.weight, bs, self._row_mask())
        r = _Round(self._n_rounds, cid, np.asarray(u, dtype=float), cand,
                   self.data.row_of(cid), rm, float(B_t), bs, float(acq))
        self._open[r.t] = r
        return self._trial(cid, r.u, n, "bo", r.t)

    def _believer_model(self, rm: RoundModel) -> RoundModel:
        """Model that chooses the next configuration: ``rm`` plus believed pending points."""
        new = [t for t in self._pending.values() if self.data.row_of(t.config_id) is None]
        if not new:
            return rm
        from erahbo._parallel import believer_round

        d = self.data
        return believer_round(rm, d.U, d.ybar, d.s2, d.k, np.array([t.u for t in new]),
                              np.array([len(t.seeds) for t in new]), self._settings, self._C)

    def tell(
        self,
        trial: Trial,
        returns: Sequence[float],
        *,
        infeasible: bool = False,
        errors: Sequence[str | None] | None = None,
    ) -> None:
        """Report the returns of ``trial`` (one per seed, in order; fewer if cut short).

        Parameters
        ----------
        trial : Trial
            A pending trial (from :meth:`ask`; with ``n_parallel > 1`` in any order).
        returns : sequence of float
            One return per seed; fewer when the last runs were cut short (a new configuration
            needs at least 2). Non-finite returns (NaN, inf: failed runs) go through the
            ``failures`` policy; without one they raise ValueError.
        infeasible : bool
            The configuration failed and must never be proposed again: its round ends
            (``stop_reason="infeasible"``), ``returns`` may hold NaN for failed runs (only the
            finite ones are recorded), none of them enter the models (every run told counts in
            the budget, failed ones included),
            and it is no longer recommended nor used for ``B_t``.
        errors : sequence of str or None, optional
            Why each failed run failed (one entry per return, None for the others): shown in
            the history's ``error`` column instead of "objective returned NaN".

        Notes
        -----
        With a journal, the returns (and the runs they stand for) are committed before the
        optimizer takes them into account.
        """
        vals = self._check_tell(trial, returns, infeasible)
        if self.failure_policy is None:  # strict: no failure policy, no journal
            if not infeasible and not all(math.isfinite(v) and abs(v) <= MAX_ABS_RETURN
                                          for v in vals):
                raise ValueError(
                    f"tell: returns {vals} must be finite and within +-{MAX_ABS_RETURN:.0e} (a "
                    "larger one's square overflows: rescale the returns); map failed runs to a "
                    "penalty, or build the Optimizer with failures='penalize' (or 'exclude') "
                    "to let it handle them"
                )
            self._tell(trial, vals, infeasible=infeasible)
            return
        pz = self._study.penalizer if self._study is not None else self._penalizer
        outcome = outcomes_from_returns(
            trial.seeds[: len(vals)], vals, self.failure_policy, penalizer=pz,
            infeasible=infeasible, errors=errors,
        )
        self._tell_evaluated(trial, outcome, record_runs=True)

    def _check_pending(self, trial: Trial) -> None:
        if self._pending.get(getattr(trial, "trial_id", None)) is not trial:
            raise ValueError(
                "tell: this trial is not the pending one (or one of the pending ones): it was "
                "not asked by this optimizer, or was told already; tell each asked trial once"
            )

    def _check_tell(self, trial: Trial, returns: Any, infeasible: bool) -> list[float]:
        """Validate a tell before anything is journaled; the returns as floats."""
        self._check_pending(trial)
        vals = tell_values(returns, trial.trial_id)
        if not (1 if not infeasible else 0) <= len(vals) <= len(trial.seeds):
            raise ValueError(
                f"tell: got {len(vals)} returns for {len(trial.seeds)} seeds; give one per seed "
                "(or fewer if the last runs were cut short, at least 1)"
            )
        return vals

    def _tell_evaluated(
        self, trial: Trial, outcome: TrialOutcome, *, record_runs: bool = False
    ) -> None:
        """Tell an outcome of :func:`erahbo.failures.evaluate` (journal first, if any)."""
        counted = sum(1 for v in outcome.returns if math.isfinite(v))
        if (
            not outcome.excluded
            and self.data.row_of(trial.config_id) is None
            and counted < 2
        ):
            raise ValueError(
                f"tell: a new configuration needs at least 2 returns (its sample variance), "
                f"got {counted}"
            )
        if self._study is not None:
            self._study.tell(trial, outcome, record_runs=record_runs)  # -> _tell_outcome
        else:
            self._penalizer.observe(r.raw for r in outcome.runs if r.status == "ok")
            self._tell_outcome(trial, outcome)

    def _evaluate(
        self,
        trial: Trial,
        objective: Callable[..., Any],
        *,
        executor: Executor | None,
        run_timeout: float | None,
        batch: bool,
    ) -> TrialOutcome:
        """Run the trial's seeds with the failure policy (journaling every run, if any)."""
        if self._study is not None:
            return self._study.evaluate(
                trial, objective, executor=executor, run_timeout=run_timeout, batch=batch
            )
        policy = self.failure_policy or FailurePolicy()
        return evaluate(objective, trial.config, trial.seeds, policy, run_timeout=run_timeout,
                        executor=executor, penalizer=self._penalizer, batch=batch)

    def _check_alive(self) -> None:
        """Refuse to go on when every run of the complete initial design failed."""
        # (without an initial design, a warm start: failures go through the policy instead)
        if (self._init and self._init_pos >= len(self._init) and not self._pending
                and self._n_ok == 0 and self._first_error is not None):
            raise ValueError(
                f"optimize: every run of the initial design failed ({self._first_error}). The "
                "objective must return a finite float for at least some configurations: call "
                "it on one configuration and seed to debug it, then start a new study"
            )

    def _tell_outcome(self, trial: Trial, outcome: TrialOutcome) -> None:
        """Inner tell of a whole trial outcome (live, or replayed from the journal)."""
        for r in outcome.runs:
            if r.status == "ok":
                self._n_ok += 1
            elif r.status in _FINAL and self._first_error is None and r.error:
                self._first_error = r.error.splitlines()[0]
        self._tell(trial, list(outcome.returns), infeasible=outcome.excluded, runs=outcome.runs)

    @single_blas_thread  # every path in: tell, optimize's evaluated tells, replay
    def _tell(
        self,
        trial: Trial,
        returns: Sequence[float],
        *,
        infeasible: bool = False,
        runs: Sequence[Any] | None = None,
    ) -> None:
        """Inner tell: update the data, the history and the open round (no journal)."""
        self._check_pending(trial)
        vals = [float(v) for v in returns]
        seeds = trial.seeds[: len(vals)]
        if infeasible:
            seeds = [sd for sd, v in zip(seeds, vals, strict=True) if math.isfinite(v)]
            kept = [v for v in vals if math.isfinite(v)]
        else:
            kept = vals
        is_init = trial.phase == "init"
        if infeasible:
            self._infeasible.add(trial.config_id)
            self._forbidden.append(np.asarray(trial.u, dtype=float).copy())
            if self._allowed is not None:
                self._allowed[trial.config_id] = False
            row = self.data.row_of(trial.config_id)
            k_cfg0 = 0 if row is None else len(self.data.returns[row])
        else:
            row = self.data.add(trial.config_id, trial.u, kept, seeds)
            k_cfg0 = len(self.data.returns[row]) - len(kept)
        n_pen = 0 if runs is None else sum(getattr(r, "status", "ok") == "penalized" for r in runs)
        if n_pen and not infeasible:
            self._n_penalized[trial.config_id] = self._n_penalized.get(trial.config_id, 0) + n_pen
        del self._pending[trial.trial_id]
        self._rec_cache = None
        r = None if is_init else self._open[trial.round]
        k_round0 = 0 if r is None else r.k
        self._record(trial, vals, seeds, kept, runs, k_cfg0, k_round0)
        spent = spent_runs(runs, len(vals))  # failed runs count toward the budget too
        vals = kept
        if not is_init or self.initial_in_budget:
            self._used += spent
        if is_init:
            reason = "infeasible" if infeasible else "initial"
            self._log_round(trial.round, "init", trial.config_id, len(vals), row, None, np.nan,
                            np.nan, np.nan, reason)
            return
        r.k += len(vals)
        if infeasible:
            self._close(r, "infeasible")
            return
        ib = None
        if r.rm is not None:
            d = self.data
            ib = r.rm.inner(r.row0, r.u, r.cand, *d.stats(row), r.beta_stop, self.weight)
        if isinstance(self.policy, AdaptiveK) and self.stopping == "race":
            reason = self._race(r, row)
            if reason is None and self.remaining < 1:
                reason = "budget"
        elif isinstance(self.policy, AdaptiveK) and ib is not None:
            reason = self.policy.decide(r.k, ib.ucb_mv, r.B_t)
            if reason is None and self.remaining < 1:
                reason = "budget"
        else:  # fixed k (or a round without models: no stopping rule)
            reason = "budget" if len(trial.seeds) < self.policy.first else "fixed_k"
        r.ib = ib
        if reason is not None:
            self._close(r, reason)

    def _record(
        self,
        trial: Trial,
        vals: list[float],
        seeds: list[int],
        kept: list[float],
        runs: Sequence[Any] | None,
        k_cfg0: int,
        k_round0: int,
    ) -> None:
        """History rows of a told trial: one per run (all attempts when ``runs`` is given)."""
        head = (trial.round, trial.phase, trial.config_id, trial.config)
        if runs is None:  # the user ran the seeds and reported finite returns
            now = time.time() - self._t_start
            for j, (sd, v) in enumerate(zip(seeds, kept, strict=True)):
                self._hist.append((*head, sd, v, k_cfg0 + j + 1, k_round0 + j + 1, now,
                                   "ok", None, 0, None, False))
            self._n_counted += len(kept)
            self._n_ok += len(kept)
            return
        kc = 0
        for r in sorted(runs, key=lambda r: (r.slot, r.attempt)):
            if r.status not in _FINAL:
                continue
            counted = (r.status in COUNTED and r.slot < len(vals)
                       and math.isfinite(vals[r.slot]))
            kc += counted
            end = r.end if r.end is not None and math.isfinite(r.end) else time.time()
            self._hist.append((*head, int(r.seed), vals[r.slot] if counted else math.nan,
                               k_cfg0 + kc, k_round0 + kc, end - self._t_start, r.status,
                               r.error, int(r.attempt), r.worker, bool(r.rerun)))
        self._n_counted += kc

    def _race(self, r: _Round, row: int) -> str | None:
        """The racing ablation (``stopping="race"``): sample MV against the best other one."""
        d = self.data
        mv = d.ybar - self.weight * d.s2  # sample MV (GP-UCB: the sample mean)
        mask = self._row_mask()
        others = np.ones(d.n, dtype=bool) if mask is None else mask.copy()
        others[row] = False
        if others.any() and mv[row] < mv[others].max():
            return "dominated"
        return "k_max" if r.k >= self.policy.k_max else None

    def _close(self, r: _Round, reason: str) -> None:
        row = self.data.row_of(r.config_id)
        self._log_round(r.t, "bo", r.config_id, r.k, row, r.ib, r.B_t, r.beta_stop, r.acq, reason)
        del self._open[r.t]

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
        if self._study is not None:
            raise ValueError(
                "exclude: not journaled, so a resumed study could not replay it; with a "
                "journal, mark a configuration infeasible with tell(trial, returns, "
                "infeasible=True) or failures='exclude'"
            )
        if self._allowed is None:
            raise ValueError("exclude: only finite candidate tables have rows to exclude")
        if not 0 <= int(config_id) < len(self._allowed):
            raise ValueError(f"exclude: config_id {config_id} outside 0..{len(self._allowed) - 1}")
        self._allowed[int(config_id)] = False

    # ------------------------------------------------------------------ hooks (integrations)
    @single_blas_thread
    def fit_hyperparameters(self) -> tuple[GPHyper, GPHyper]:
        """MAP-fit both GPs on the current data now, as after the initial design.

        The optimizer keeps them (fixed, unless ``refit_every``). Pass the result as
        ``hyperparameters=`` to another Optimizer on the same space to share them: the Optuna
        and Ray Tune integrations fit once on the initial design, then rebuild optimizers from
        the stored trials with these hyperparameters.

        Returns
        -------
        (GPHyper, GPHyper)
            Hyperparameters of the mean GP and of the variance GP.
        """
        if self.data.n == 0:
            raise ValueError("fit_hyperparameters: no evaluated configuration yet")
        self._fit()
        return self._settings.hyper_f, self._settings.hyper_v

    @single_blas_thread
    def stopping_decision(
        self, config: dict[str, Any] | int, returns: Sequence[float]
    ) -> tuple[str | None, float, float]:
        """ERAHBO's stopping rule for a round at ``config`` that has run ``returns`` so far.

        The round starts on the current data ``D``: ``B_t = max LCB_MV`` over ``D`` with
        ``beta_stop`` (as at a round start); ``returns`` (this round's seeds, finite) are pooled
        with ``config``'s data in ``D`` for ``UCB_MV(x; k)``. Nothing is told: the data stay
        unchanged (the Optuna pruner asks this after each reported seed).

        Parameters
        ----------
        config : dict or int
            The round's configuration (a finite table: its row index).
        returns : sequence of float
            ``(k,)`` returns of the round's seeds so far.

        Returns
        -------
        reason : str or None
            ``"dominated"`` (``UCB_MV(x; k) <= B_t``), ``"k_max"``, ``"fixed_k"`` (fixed-k
            methods once ``k`` seeds ran), or None: one more seed (also before ``k_min``).
        ucb_mv, B_t : float
            ``UCB_MV(x; k)`` and ``B_t`` (NaN without a model: no data, or random search).
        """
        vals = [float(v) for v in returns]
        if not all(math.isfinite(v) for v in vals):
            raise ValueError(f"stopping_decision: returns {vals} must be finite")
        n = len(vals)
        if not isinstance(self.policy, AdaptiveK):
            return ("fixed_k" if n >= self.policy.first else None), math.nan, math.nan
        if n < self.policy.first or self.method == "random" or self.data.n == 0:
            return ("k_max" if n >= self.policy.k_max else None), math.nan, math.nan
        if self._settings is None:
            self._fit()
        if self.space.is_finite:
            cand, u = int(config), self._C[int(config)]
        else:
            cand, u = None, self.space.encode(config)
        same = np.flatnonzero((self.data.U == u).all(1))
        row = int(same[0]) if same.size else None
        pooled = ([] if row is None else list(self.data.returns[row])) + vals
        if len(pooled) < 2:
            return None, math.nan, math.nan
        rm = self._round_model()
        bs = self.schedule(0.0 if self.budget is None else self._used / max(self.budget, 1))
        B_t, _ = rm.best_lcb_mv(self.weight, bs, self._row_mask())
        ib = rm.inner(row, u, cand, float(np.mean(pooled)), float(np.var(pooled, ddof=1)),
                      len(pooled), bs, self.weight)
        return self.policy.decide(n, ib.ucb_mv, B_t), float(ib.ucb_mv), float(B_t)

    # ------------------------------------------------------------------ recommendation
    @single_blas_thread
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

    @property
    def incumbent_mv(self) -> float:
        """Posterior mean MV of the incumbent (NaN before any data); cheap to poll."""
        rec = self._recommend()
        return float("nan") if rec is None else rec[1]

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
        hist = history_frame(self._hist, names)
        rounds = pd.DataFrame(sorted(self._rounds, key=lambda r: r["iteration"]),
                              columns=list(ROUND_COLUMNS[:-1]))
        return Result(
            incumbent=None if rec is None else cfgs[rec[0]],
            incumbent_id=None if rec is None else d.config_ids[rec[0]],
            incumbent_mv=np.nan if rec is None else rec[1],
            history=hist,
            rounds=failures_per_round(hist, rounds),
            configs=self._configs_table(cfgs),
            method=self.method,
            n_evals=self.n_evals,
            failures=None if self.failure_policy is None else self.failure_policy.mode,
            settings={k: v for k, v in self._options.items() if k != "warm_start"},
        )

    def _configs_table(self, cfgs: list[dict[str, Any]]) -> pd.DataFrame:
        """:attr:`Result.configs`: every configuration with its MV bounds and rank."""
        d = self.data
        post = None
        if self._settings is not None and d.n:
            post = self._round_model().predict(d.U)
        fails: dict[int, int] = {}
        for h in self._hist:
            if h[9] != "ok":
                fails[h[2]] = fails.get(h[2], 0) + 1
        return configs_table(d.config_ids, cfgs, self.space.names, d.ybar, d.s2, d.k,
                             posterior=post, alpha=self.alpha, weight=self.weight,
                             beta=self.beta, eligible=self._row_mask(), failures=fails)


# ---------------------------------------------------------------------------- settings JSON
def _design_json(design: Any) -> Any:
    if design is None:
        return None
    out = []
    for it in design:
        if isinstance(it, dict):
            out.append({str(k): (v.item() if hasattr(v, "item") else v) for k, v in it.items()})
        elif np.ndim(it) == 0:
            out.append(int(it) if float(it) == int(it) else float(it))
        else:
            out.append(np.asarray(it, dtype=float).tolist())
    return out


def _hyper_json(hyper: Any) -> Any:
    if hyper is None:
        return None
    return [{"kind": h.kind, "lengthscales": np.asarray(h.lengthscales, dtype=float).tolist(),
             "noise": None if h.noise is None else float(h.noise)} for h in hyper]


def _space_json(space: SearchSpace) -> dict[str, Any]:
    """The space in the study settings: its JSON, plus a content hash of a candidate table."""
    spec = space.to_json()
    if not space.is_finite:
        return spec
    from erahbo.journal import canonical_json

    rows = [space.candidate_config(i) for i in range(int(space.n_candidates))]
    digest = hashlib.sha256(canonical_json(rows, "table").encode()).hexdigest()
    return {**spec, "table": {"rows": len(rows), "sha256": digest}}


# ---------------------------------------------------------------------------- re-exports
_LOOP_NAMES = frozenset(
    ("SYNTHETIC_TASKS", "load_objective", "load_space", "objective_spec", "optimize", "resume",
     "study_options")
)


def __getattr__(name: str) -> Any:
    """The loop and study helpers, from :mod:`erahbo.loop` (lazy: it imports this module)."""
    if name in _LOOP_NAMES:
        from erahbo import loop

        return getattr(loop, name)
    raise AttributeError(f"module 'erahbo.optimizer' has no attribute {name!r}")
