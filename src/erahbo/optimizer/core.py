"""The ask/tell optimizer: ERAHBO, RAHBO, GP-UCB and random search (paper Sec. 3).

>>> import erahbo
>>> from erahbo.objectives.synthetic import Figure1Task
>>> task = Figure1Task()
>>> opt = erahbo.Optimizer(task.space, method="rahbo", k=2, budget=60, seed=0)
>>> while (trial := opt.ask()) is not None:
...     opt.tell(trial, [task(trial.config, s) for s in trial.seeds])
>>> opt.recommend() is not None
True

A BO round: fit both GPs on ``D_{t-1}`` (:mod:`erahbo.optimizer.rounds`), choose ``x_t`` by the
acquisition (eq. 8; at random in random search and random rounds, :mod:`~.random_design`; the
challenger in a challenger round, :mod:`~.challengers`), compute ``B_t`` (eq. 10) with
``beta_stop_t``, then spend seeds on ``x_t`` as the replication policy decides
(:mod:`erahbo.policies`; ERAHBO: until the stopping rule, eq. 12, or ``k_max``). The budget
counts seeds. With a journal every trial and run is recorded first (:mod:`erahbo.runtime.journal`)
and a study is replayed through :class:`~erahbo.optimizer.journaling.StudyRecorder`;
:mod:`erahbo.optimizer.loop` runs an objective with it.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from erahbo._threads import single_blas_thread
from erahbo.models import GPHyper
from erahbo.optimizer.challengers import is_challenger_round, pick_challenger
from erahbo.optimizer.journaling import open_study_journal
from erahbo.optimizer.options import Options, check_hyperparameters, space_json
from erahbo.optimizer.random_design import is_random_round, random_configuration
from erahbo.optimizer.records import History, Result, Round, Trial, told_returns
from erahbo.optimizer.rounds import RoundModels
from erahbo.optimizer.seedcap import rows_at_cap, seeds_left
from erahbo.optimizer.state import StudyState, initial_design_of
from erahbo.optimizer.warm import add_warm_start, warm_records
from erahbo.policies import Race
from erahbo.runtime.evaluate import evaluate
from erahbo.runtime.failures import (
    MAX_ABS_RETURN,
    FailurePolicy,
    Penalizer,
    TrialOutcome,
    outcomes_from_returns,
    spent_runs,
)
from erahbo.runtime.journal import Journal
from erahbo.runtime.replay import JournaledStudy
from erahbo.space import SearchSpace
from erahbo.surrogate import RoundModel, RoundSettings
from erahbo.validation import check_journal_path

if TYPE_CHECKING:
    from erahbo.runtime.executors import Executor

__all__ = ["Optimizer"]


class Optimizer:
    """Sequential risk-aware optimizer with an ask/tell interface.

    Parameters
    ----------
    space : SearchSpace or anything SearchSpace accepts
        Search space; a pandas DataFrame is a finite candidate table (config ids = rows).
    initial_design : sequence or None
        Given initial configurations instead of Sobol: row indices (finite table), config dicts
        or a ``(n, dim)`` array of encodings.  They are asked first, with ``k_init`` seeds each.
    warm_start : DataFrame, path, list of records or None
        Training runs done before this study (an earlier ``history.csv``, manual runs; see
        :mod:`erahbo.optimizer.warm`): they join the data before the first round (phase
        ``"warm"``), are not counted in ``budget`` or ``n_evals``, their seeds are not handed
        out again, failed ones follow ``failures``. With a warm start, ``n_init=0`` skips the
        initial design.
    hyperparameters : (GPHyper, GPHyper) or None
        Fixed hyperparameters of the mean GP and of the variance GP (no MAP fit at all).
    journal : str or path-like, optional
        SQLite journal of the study (:mod:`erahbo.runtime.journal`). Every asked trial and every
        told run is committed before :meth:`ask` returns / :meth:`tell` acknowledges it. If the file
        holds a study with the same :meth:`study_settings`, the optimizer is rebuilt from the
        journal alone (by replay) and continues where it stopped: a trial that was asked but
        not told at a crash is the next :meth:`ask`. A study with other settings is refused
        (:class:`erahbo.runtime.journal.SettingsMismatchError`). Call :meth:`close` (or use
        ``with``) to release the journal.
    journal_info : dict, optional
        JSON facts stored in the journal that do not affect decisions (how to rebuild the
        objective: ``{"objective": "module:function"}`` or a bundled task name, executor, ...);
        read by ``erahbo resume``.
    synchronous : {"FULL", "NORMAL"}
        Journal durability: FULL (default) also survives power loss, NORMAL only crashes of
        the process (faster).
    options : Options, optional
        All options at once (then give no other option by name).
    **option_values
        The options by name (``method`` also as the second positional argument): every field
        of :class:`erahbo.optimizer.options.Options`, which documents, defaults and validates
        them once (an unknown name or a bad value raises with the fix). ``failures`` defaults
        to ``"penalize"`` when a journal is given.

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
        initial_design: Sequence[Any] | np.ndarray | None = None,
        warm_start: Any = None,
        hyperparameters: tuple[GPHyper, GPHyper] | None = None,
        journal: str | os.PathLike[str] | None = None,
        journal_info: dict[str, Any] | None = None,
        synchronous: str = "FULL",
        options: Options | None = None,
        **option_values: Any,
    ) -> None:
        if journal is not None:
            check_journal_path(journal)
        opts = Options.build(options, method, option_values, journaled=journal is not None)
        n_init = opts.n_init
        no_design = warm_start is not None and initial_design is None and n_init == 0
        if not no_design:
            opts.check_budget(len(initial_design) if initial_design is not None else n_init)
        check_hyperparameters(hyperparameters, opts.refit_every, opts.refit_growth)
        self.options = opts
        self.space = space if isinstance(space, SearchSpace) else SearchSpace(space)
        for name in ("method", "budget", "seed", "alpha", "beta", "n_parallel", "seed_batch",
                     "stopping", "initial_in_budget", "kernel", "rho_max2", "refit_every",
                     "raw_samples", "n_polish", "engine"):  # the options, as attributes
            setattr(self, name, getattr(opts, name))
        self.weight, self.k_init = opts.weight, opts.k_init_value
        self.policy = opts.policy()
        self.schedule = opts.beta_stop_schedule()
        self.failure_policy: FailurePolicy | None = opts.failure_policy
        self.state = StudyState(self.space, self.seed)
        self.history = History()
        self.models = RoundModels(opts, self.state)
        if hyperparameters is not None:
            self.models.use(RoundSettings(*hyperparameters, self.beta, opts.rho_max2))
        self._init = [] if no_design else initial_design_of(self.space, initial_design,
                                                             opts.n_init, self.seed)
        self._init_pos = 0
        self._n_rounds = 0
        self._pending: dict[int, Trial] = {}  # trial id -> asked, not yet told
        self._open: dict[int, Round] = {}  # round t -> open BO round
        self._used = 0  # seeds counted in the budget
        self._n_trials = 0
        self._rng = np.random.default_rng([self.seed, 2])
        self._penalizer = Penalizer()  # feasible returns so far (failure policy, no journal)
        self._settings_json = opts.settings_json(initial_design, hyperparameters)
        self._warm_ok: list[float] = []  # finite warm returns (penalties are set below them)
        if warm_start is not None:
            records = warm_records(warm_start, self.space)
            self._settings_json["warm_start"] = records  # in the settings: a resume replays it
            exclude = self.failure_policy is not None and self.failure_policy.mode == "exclude"
            self._n_rounds, self._warm_ok = add_warm_start(
                records, self.state, self.history, exclude=exclude, penalizer=self._penalizer,
                n_rounds=self._n_rounds)
            if self.data.n == 0 and not self._init:
                raise ValueError(
                    "warm_start holds no configuration with at least 2 usable runs, and "
                    "n_init=0 leaves no initial design: give more runs or n_init >= 1"
                )
        self._n_pre = self._n_rounds + len(self._init)  # rounds before the first BO round
        self._study: JournaledStudy | None = None
        if journal is not None:
            self._study = open_study_journal(
                journal, self.study_settings(), self._ask, self._tell_outcome,
                failures=self.failure_policy, info=journal_info, synchronous=synchronous,
                on_open=lambda j: setattr(self.history, "t_start", j.created_at),
                set_budget=lambda b: setattr(self, "budget", b), warm_returns=self._warm_ok)
            self._settings_json["budget"] = self.budget  # a larger budget extends the study

    # ------------------------------------------------------------------ setup helpers
    @property
    def data(self):
        """The pooled observations ``D_t`` (:class:`erahbo._data.Observations`)."""
        return self.state.data

    @property
    def remaining(self) -> float:
        """Seeds left in the budget (inf when there is none)."""
        return np.inf if self.budget is None else self.budget - self._used

    @property
    def n_evals(self) -> int:
        """Counted training runs so far (initial design included; failed runs not counted)."""
        return self.history.n_counted

    @property
    def n_pending(self) -> int:
        """Trials asked and not yet told."""
        return len(self._pending)

    @property
    def model_settings(self) -> RoundSettings | None:
        """GP hyperparameters, ``beta`` and ``rho_max^2`` of the round models (None: unfit)."""
        return self.models.settings

    def round_model(self) -> RoundModel:
        """The round models on the current data (for inspection; after the first fit)."""
        if self.models.settings is None:
            raise ValueError("round_model: no model yet (the initial design is not told)")
        return self.models.current()

    def _trial(self, cid: int, u: np.ndarray, n: int, phase: str, t: int) -> Trial:
        seeds = self.state.next_seeds(cid, n)
        self._n_trials += 1
        trial = Trial(self.state.trial_config(cid, u), seeds, cid, t, phase, self._n_trials, u)
        self._pending[trial.trial_id] = trial
        return trial

    # ------------------------------------------------------------------ settings, journal
    def study_settings(self) -> dict[str, Any]:
        """The settings that determine the optimizer's decisions, as plain JSON values.

        A journal stores them and resumes only a study with the same ones: the options
        (:meth:`Options.settings_json`), the warm-start runs, ``failures``, ``retries`` and
        ``space`` (its :meth:`SearchSpace.to_json`; a finite table adds the SHA-256 of its rows).
        """
        out = dict(self._settings_json)
        out["failures"] = None if self.failure_policy is None else self.failure_policy.mode
        out["retries"] = None if self.failure_policy is None else self.failure_policy.retries
        out["space"] = space_json(self.space)
        return out

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

    # ------------------------------------------------------------------ ask
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
            cid = self.state.new_id(u) if cid is None else cid
            self._n_rounds += 1
            return self._trial(cid, u, self.k_init, "init", self._n_rounds)
        free = self.remaining - sum(len(t.seeds) for t in self._pending.values()  # counted
                                    if t.phase != "init" or self.initial_in_budget)
        busy = {t.round for t in self._pending.values()}
        allowed = self.state.allowed
        for r in list(self._open.values()):  # open rounds first, oldest first
            if r.t in busy:
                continue
            left = self._seeds_left(r.config_id)
            if allowed is not None and not allowed[r.config_id]:
                self._close(r, "excluded")
            elif free < 1:
                self._close(r, "budget")
            elif left < 1:
                self._close(r, "max_seeds")
            else:  # the inner loop: one more seed, or a batch of them
                n = int(min(self.policy.next_seeds(r.k, free), left))
                return self._trial(r.config_id, r.u, n, "bo", r.t)
        if any(t.phase == "init" for t in self._pending.values()):
            return None  # the first model fit waits for the whole initial design
        full = self._at_cap()  # rows with max_seeds seeds are not proposed again
        if allowed is not None and (self._pending or full):  # nor pending configurations
            allowed = allowed.copy()
            allowed[[t.config_id for t in self._pending.values()]] = False
            allowed[[self.data.config_ids[i] for i in full]] = False
        if free < 2 or (allowed is not None and not allowed.any()):
            return None
        return self._start_round(int(min(self.policy.first, free)), allowed, full)

    def _seeds_left(self, cid: int) -> float:
        """Seeds ``cid`` may still get (:func:`erahbo.optimizer.seedcap.seeds_left`)."""
        return seeds_left(self.options, self.data, self._pending.values(), cid,
                          self.state.allowed)

    def _at_cap(self) -> list[int]:
        """Rows not to propose again (:func:`erahbo.optimizer.seedcap.rows_at_cap`)."""
        return rows_at_cap(self.options, self.data, self._pending.values(), self.state.allowed)

    def _start_round(self, n: int, allowed: np.ndarray | None, full: list[int]) -> Trial:
        no_data = self.data.n == 0  # every initial configuration was infeasible
        if not no_data:
            self.models.start_round()
        self._n_rounds += 1
        self.models.count_round()
        bs = self.schedule(0.0 if self.budget is None else self._used / max(self.budget, 1))
        rm, B_t, acq, cand, phase, o = None, np.nan, np.nan, None, "bo", self.options
        t_bo = self._n_rounds - self._n_pre
        plain = self.method == "random" or no_data  # no models: a uniform draw
        if plain or is_random_round(t_bo, self._used, o.random_interleave):  # random_interleave
            model = None if plain else self.models.current()
            cand, u, cid = random_configuration(self.state, model, allowed, self._rng, o)
        else:
            rm = self.models.current()
            busy = [self.data.row_of(t.config_id) for t in self._pending.values()]
            ch = is_challenger_round(t_bo, self._used, o.random_interleave, o.challengers) and (
                pick_challenger(self.state, self.models,
                                full + [i for i in busy if i is not None], allowed))
            if ch:  # an evaluated configuration whose own runs beat the incumbent's
                (cand, u, cid), phase = ch, "challenger"
            else:
                cand, u, cid, acq = self.models.choose(rm, allowed, list(self._pending.values()),
                                                       self.seed * 100003 + self._n_rounds,
                                                       [self.data.U[i] for i in full])
            B_t, _ = rm.best_lcb_mv(self.weight, bs, self.state.row_mask())  # eq. 10
        r = Round(self._n_rounds, cid, np.asarray(u, dtype=float), cand,
                  self.data.row_of(cid), rm, float(B_t), bs, float(acq), phase=phase)
        self._open[r.t] = r
        return self._trial(cid, r.u, int(max(min(n, self._seeds_left(cid)), 1)), "bo", r.t)

    # ------------------------------------------------------------------ tell
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
        self._check_pending(trial)  # before anything is journaled
        vals = told_returns(trial, returns, infeasible)
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
        self._tell_checked(trial, outcome, record_runs=True)

    def tell_outcome(self, trial: Trial, outcome: TrialOutcome) -> None:
        """Tell the outcome of :meth:`run_trial` (journaled first, if there is a journal)."""
        self._tell_checked(trial, outcome)

    def run_trial(
        self,
        trial: Trial,
        objective: Callable[..., Any],
        *,
        executor: Executor | None = None,
        run_timeout: float | None = None,
        batch: bool = False,
    ) -> TrialOutcome:
        """Run the trial's seeds with the failure policy (journaling every run, if any).

        :func:`erahbo.runtime.evaluate.evaluate` on the optimizer's failure policy and penalties;
        safe to call from a worker thread (``n_parallel > 1``).  Tell the result with
        :meth:`tell_outcome`.
        """
        if self._study is not None:
            return self._study.evaluate(
                trial, objective, executor=executor, run_timeout=run_timeout, batch=batch
            )
        policy = self.failure_policy or FailurePolicy()
        return evaluate(objective, trial.config, trial.seeds, policy, run_timeout=run_timeout,
                        executor=executor, penalizer=self._penalizer, batch=batch)

    def check_alive(self) -> None:
        """Raise when every run of the initial design failed (``optimize`` asks it first)."""
        done = bool(self._init) and self._init_pos >= len(self._init) and not self._pending
        self.history.check_alive(done)

    def _check_pending(self, trial: Trial) -> None:
        if self._pending.get(getattr(trial, "trial_id", None)) is not trial:
            raise ValueError(
                "tell: this trial is not the pending one (or one of the pending ones): it was "
                "not asked by this optimizer, or was told already; tell each asked trial once"
            )

    def _tell_checked(
        self, trial: Trial, outcome: TrialOutcome, *, record_runs: bool = False
    ) -> None:
        """Tell a whole outcome after the last checks (journal first, if any)."""
        counted = sum(1 for v in outcome.returns if math.isfinite(v))
        if not outcome.excluded and self.data.row_of(trial.config_id) is None and counted < 2:
            raise ValueError(
                f"tell: a new configuration needs at least 2 returns (its sample variance), "
                f"got {counted}"
            )
        if self._study is not None:
            self._study.tell(trial, outcome, record_runs=record_runs)  # -> StudyRecorder
        else:
            self._penalizer.observe_runs(outcome.runs)
            self._tell_outcome(trial, outcome)

    def _tell_outcome(self, trial: Trial, outcome: TrialOutcome) -> None:
        """Inner tell of a whole trial outcome (live, or replayed from the journal)."""
        self.history.note_failures(outcome.runs)
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
        kept = [v for v in vals if math.isfinite(v)] if infeasible else vals
        if infeasible:
            seeds = [sd for sd, v in zip(seeds, vals, strict=True) if math.isfinite(v)]
        st, d, cid = self.state, self.data, trial.config_id
        if infeasible:
            st.mark_infeasible(cid, trial.u)
            row = d.row_of(cid)
            k_cfg0 = 0 if row is None else len(d.returns[row])
        else:
            row = d.add(cid, trial.u, kept, seeds)
            k_cfg0 = len(d.returns[row]) - len(kept)
        if runs is not None and not infeasible:
            st.add_penalized(cid, sum(getattr(r, "status", "ok") == "penalized" for r in runs))
        del self._pending[trial.trial_id]
        is_init = trial.phase == "init"
        r = None if is_init else self._open[trial.round]
        head = (trial.round, trial.phase, cid, trial.config)
        self.history.add_told(head, vals, seeds, kept, runs, k_cfg0, 0 if r is None else r.k)
        if not is_init or self.initial_in_budget:
            self._used += spent_runs(runs, len(vals))  # failed runs count toward the budget
        if r is None:
            reason = "infeasible" if infeasible else "initial"
            self.history.add_round(d, trial.round, "init", cid, len(kept), row, None, np.nan,
                                   np.nan, np.nan, reason)
            return
        r.k += len(kept)
        if infeasible:
            self._close(r, "infeasible")
            return
        self._decide(r, row, len(trial.seeds))

    def _decide(self, r: Round, row: int, asked: int) -> None:
        """After a tell in round ``r``: the policy's decision (eq. 12 for ERAHBO)."""
        d = self.data
        if r.rm is not None:  # UCB^MV(x_t; k) with the round's B_t, and the row of the round
            r.ib = r.rm.inner(r.row0, r.u, r.cand, *d.stats(row), r.beta_stop, self.weight)
        race = isinstance(self.policy, Race)  # the racing ablation compares sample MVs
        gap = self.state.sample_gap(row, self.weight) if race else None
        reason = self.policy.after_tell(
            r.k, asked, self.remaining, ucb_mv=None if r.ib is None else r.ib.ucb_mv,
            B_t=r.B_t, sample_gap=gap,
        )
        if reason == "fixed_k" and r.rm is None and self.method != "random":
            reason = "random"  # a round chosen at random (random_interleave), its first seeds
        if self._seeds_left(r.config_id) < 1 and reason in (None, "budget") and (
                self.remaining >= 1):
            reason = "max_seeds"  # the round was cut short by the cap, not by its policy
        if reason is not None:
            self._close(r, reason)

    def _close(self, r: Round, reason: str) -> None:
        self.history.add_round(self.data, r.t, r.phase, r.config_id, r.k,
                               self.data.row_of(r.config_id), r.ib, r.B_t, r.beta_stop, r.acq,
                               reason)
        del self._open[r.t]

    def exclude(self, config_id: int) -> None:
        """Remove a finite-table row from the candidates (a round open at it ends at next ask)."""
        if self._study is not None:
            raise ValueError(
                "exclude: not journaled, so a resumed study could not replay it; with a "
                "journal, mark a configuration infeasible with tell(trial, returns, "
                "infeasible=True) or failures='exclude'"
            )
        self.state.exclude_row(config_id)

    # ------------------------------------------------------------------ hooks (integrations)
    @single_blas_thread
    def fit_hyperparameters(self) -> tuple[GPHyper, GPHyper]:
        """MAP-fit both GPs on the current data now, as after the initial design.

        The optimizer keeps them (fixed, unless ``refit_every``); pass them as
        ``hyperparameters=`` to another Optimizer on the same space to share them (the Optuna
        and Ray Tune integrations). Returns the mean GP's and the variance GP's.
        """
        if self.data.n == 0:
            raise ValueError("fit_hyperparameters: no evaluated configuration yet")
        st = self.models.fit()
        return st.hyper_f, st.hyper_v

    @single_blas_thread
    def stopping_decision(
        self, config: dict[str, Any] | int, returns: Sequence[float]
    ) -> tuple[str | None, float, float]:
        """ERAHBO's stopping rule for a round at ``config`` that has run ``returns`` so far.

        ``B_t`` on the current data with ``beta_stop`` (as at a round start), ``UCB_MV(x; k)``
        with ``returns`` pooled with ``config``'s data (a finite table: ``config`` is the row);
        nothing is told. Returns ``(reason, UCB_MV, B_t)``: reason ``"dominated"``,
        ``"k_max"``, ``"fixed_k"`` (fixed-k methods once ``k`` seeds ran) or None (one more
        seed, also before ``k_min``); the bounds are NaN without a model.
        """
        bs = self.schedule(0.0 if self.budget is None else self._used / max(self.budget, 1))
        return self.models.stopping_decision(self.policy, config, returns, bs)

    # ------------------------------------------------------------------ recommendation
    @single_blas_thread
    def _recommend(self) -> tuple[int, float] | None:
        return self.models.recommend()

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
        """The incumbent's configuration (None before any data): ``argmax LCB_MV``, or a
        well-sampled configuration (``recommend_seeds``); GP-UCB: ``argmax LCB_f``."""
        rec = self._recommend()
        ids, U = self.data.config_ids, self.data.U
        return None if rec is None else self.state.config(ids[rec[0]], U[rec[0]])

    def result(self) -> Result:
        """Current :class:`Result` (history, rounds, per-configuration table, incumbent)."""
        settings = {k: v for k, v in self._settings_json.items() if k != "warm_start"}
        return self.history.result(self.state, self.models, self._recommend(), self.method,
                                   self.failure_policy, settings)
