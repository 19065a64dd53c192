"""The ask/tell optimizer: ERAHBO, RAHBO, GP-UCB and random search (paper Sec. 3).

>>> import erahbo
>>> from erahbo.objectives.synthetic import Figure1Task
>>> task = Figure1Task()
>>> opt = erahbo.Optimizer(task.space, method="rahbo", k=2, budget=60, seed=0)
>>> while (trial := opt.ask()) is not None:
...     opt.tell(trial, [task(trial.config, s) for s in trial.seeds])
>>> opt.recommend() is not None
True

A BO round: fit both GPs on ``D_{t-1}`` (:mod:`~.rounds`), let the strategy
(:mod:`~.strategy`) pick the proposer of ``x_t`` (eq. 8, a random draw or the challenger),
compute ``B_t`` (eq. 10), then spend seeds on ``x_t`` until the replication rule
(:mod:`~.replication`; ERAHBO: eq. 12 or ``k_max``) ends the round. The budget counts seeds.
No storage here: ``journal=`` builds a :class:`erahbo.study.journaled.JournaledOptimizer`.
"""

from __future__ import annotations

import inspect
from collections.abc import Sequence
from typing import Any, ClassVar

import numpy as np

from erahbo._threads import single_blas_thread
from erahbo.gp import GPHyper, RoundSettings
from erahbo.optimizer.failure import FailurePolicy, Penalizer, spent_runs
from erahbo.optimizer.ingest import add_runs
from erahbo.optimizer.inspection import Inspection
from erahbo.optimizer.options import Options, check_hyperparameters
from erahbo.optimizer.parts import for_space
from erahbo.optimizer.records import History, Round, Trial
from erahbo.optimizer.replication import CAPPED
from erahbo.optimizer.rounds import RoundModels, one_seed_f_B, round_most, stop_bounds
from erahbo.optimizer.state import StudyState, initial_design_of
from erahbo.optimizer.strategy import ROUND_KINDS, Strategy
from erahbo.optimizer.telling import Telling
from erahbo.optimizer.variance_prior import noise_of
from erahbo.optimizer.warm import start_warm
from erahbo.space import SearchSpace

__all__ = ["Optimizer"]

#: The journaled subclass; set by :mod:`erahbo.study.journaled` (``erahbo.Optimizer``
#: imports it), so that this module needs no storage.
JOURNALED: list[type] = []


class Optimizer(Telling, Inspection):
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
    journal, journal_info, synchronous
        A journal of the study: :class:`erahbo.study.journaled.JournaledOptimizer` (built
        instead).
    options : Options, optional
        All options at once (then give no other option by name).
    **option_values
        The options by name (``method`` also as the second positional argument): every field
        of :class:`erahbo.optimizer.options.Options`, which documents, defaults and validates
        them once (an unknown name or a bad value raises with the fix). ``failures`` defaults
        to ``"penalize"`` when a journal is given.

    """

    #: A journal records the study (the journaled subclass): without a failure policy it
    #: penalizes failed runs (:meth:`Options.build`, ``journaled``).
    _journaled: ClassVar[bool] = False

    def __new__(cls, *args: Any, journal: Any = None, **kwargs: Any) -> Optimizer:
        if journal is not None and cls is Optimizer:
            if not JOURNALED:  # registered by erahbo.study.journaled
                raise TypeError("journal=: build erahbo.Optimizer, which adds the journal (or "
                                "import erahbo.study first); erahbo.optimizer has no storage")
            return super().__new__(JOURNALED[0])
        return super().__new__(cls)

    def __init__(
        self,
        space: Any,
        method: str = "erahbo",
        *,
        initial_design: Sequence[Any] | np.ndarray | None = None,
        warm_start: Any = None,
        hyperparameters: tuple[GPHyper, GPHyper] | None = None,
        journal: None = None,  # given: a JournaledOptimizer (__new__)
        journal_info: dict[str, Any] | None = None,
        synchronous: str = "FULL",
        options: Options | None = None,
        **option_values: Any,
    ) -> None:
        if hyperparameters is not None and options is None:  # fixed: not refit by default
            option_values = {"refit_growth": 0.0, **option_values}
        self.space = space if isinstance(space, SearchSpace) else SearchSpace(space)
        opts = for_space(Options.build(options, method, option_values, journaled=self._journaled),
                         self.space.is_finite)
        no_design = warm_start is not None and initial_design is None and opts.n_init == 0
        if not no_design:
            opts.check_budget(len(initial_design) if initial_design is not None else opts.n_init)
        check_hyperparameters(hyperparameters, opts.refit_every, opts.refit_growth)
        self.options = opts
        for name in ("method", "budget", "seed", "alpha", "beta", "n_parallel", "seed_batch",
                     "stopping", "initial_in_budget", "kernel", "rho_max2", "refit_every",
                     "raw_samples", "n_polish", "engine"):  # the options, as attributes
            setattr(self, name, getattr(opts, name))
        self.weight, self.k_init = opts.weight, opts.k_init_value
        self.strategy = Strategy.from_options(opts)
        self.schedule = self.strategy.beta_stop
        self.failure_policy: FailurePolicy | None = opts.failure_policy
        self.state = StudyState(self.space, self.seed, opts.min_seeds)
        self.history = History()
        self.models = RoundModels(opts, self.state, self.strategy.recommender)
        if hyperparameters is not None:
            self.models.use(RoundSettings(*hyperparameters, self.beta, opts.rho_max2,
                                          var_noise=noise_of(opts),
                                          rho_max2_model=opts.rho_max2_model,
                                          rho_max2_spread=opts.rho_max2_spread,
                                          acquisition_beta_var=opts.acquisition_beta_var))
        self._init = [] if no_design else initial_design_of(self.space, initial_design,
                                                             opts.n_init, self.seed)
        self._init_pos = self._n_rounds = self._used = self._n_trials = 0  # _used: budget seeds
        self._pending: dict[int, Trial] = {}  # trial id -> asked, not yet told
        self._open: dict[int, Round] = {}  # round t -> open BO round
        self._rng = np.random.default_rng([self.seed, 2])
        self.penalizer = Penalizer()  # the feasible returns so far (penalties of failed runs)
        self._settings_json = opts.settings_json(initial_design, hyperparameters)
        self._warm_ok: list[float] = []  # finite warm returns (penalties are set below them)
        if warm_start is not None:  # in the settings: a resume replays it
            self._settings_json["warm_start"], self._n_rounds, self._warm_ok = start_warm(
                warm_start, self.state, self.history, self.failure_policy, self.penalizer,
                has_design=bool(self._init))
        self._n_pre = self._n_rounds + len(self._init)  # rounds before the first BO round

    def set_budget(self, budget: int | None) -> None:
        """Change the budget (a journaled study extended to more runs)."""
        self.budget = budget

    journal = None  # the journal of a JournaledOptimizer

    def close(self) -> None:
        """Release the journal, if any (the optimizer can still report results)."""
    def __enter__(self) -> Optimizer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def ask(self, kind: str | None = None) -> Trial | None:
        """Next trial to run, or None when the budget is spent (or no candidate is left).

        With ``n_parallel > 1`` it may be called again before the earlier trials are told (up
        to ``n_parallel`` pending); it then also returns None while the next choice needs a
        pending result (:attr:`n_pending` > 0): tell one and ask again.

        ``kind``: the proposer of the BO round this ask starts, if it starts one, instead of
        the strategy's round schedule (a key of :data:`~erahbo.optimizer.strategy.ROUND_KINDS`;
        for a host that counts the rounds itself, the Optuna sampler). Open rounds continue
        first; random search and rounds without data draw at random (:meth:`open_round`).
        """
        if kind is not None and kind not in ROUND_KINDS:
            raise ValueError(f"ask: kind={kind!r} must be one of {', '.join(ROUND_KINDS)}, "
                             "or None for the strategy's round schedule")
        return self._ask(kind)

    @single_blas_thread  # every path in: ask, the journal's ask, replay
    def _ask(self, kind: str | None = None) -> Trial | None:
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
        free = self.free_seeds
        busy = {t.round for t in self._pending.values()}
        allowed = self.state.allowed
        for r in list(self._open.values()):  # open rounds first, oldest first
            if r.t in busy:
                continue
            left = self.seeds_left(r.config_id)
            if allowed is not None and not allowed[r.config_id]:
                self._close(r, "excluded")
            elif free < 1:
                self._close(r, "budget")
            elif left < 1:
                self._close(r, CAPPED)
            else:  # the inner loop: one more seed, or a batch of them
                n = self.replication.next_trial_seeds(r.k, free, left, r.most)
                return self._trial(r.config_id, r.u, n, "bo", r.t)
        if any(t.phase == "init" for t in self._pending.values()):
            return None  # the first model fit waits for the whole initial design
        full = self.strategy.caps.rows_at_cap(self.data, self._pending.values(), allowed)
        if allowed is not None and (self._pending or full):  # nor pending configurations
            allowed = allowed.copy()
            allowed[[t.config_id for t in self._pending.values()]] = False
            allowed[[self.data.config_ids[i] for i in full]] = False
        if free < self.options.min_seeds or (allowed is not None and not allowed.any()):
            return None
        return self._start_round(free, allowed, full, kind)

    def _trial(self, cid: int, u: np.ndarray, n: int, phase: str, t: int) -> Trial:
        seeds = self.next_seeds(cid, n)
        self._n_trials += 1
        trial = Trial(self.state.trial_config(cid, u), seeds, cid, t, phase, self._n_trials, u)
        self._pending[trial.trial_id] = trial
        return trial

    def _start_round(self, free: float, allowed: np.ndarray | None, full: list[int],
                     kind: str | None) -> Trial:
        no_data = self.data.n == 0  # every initial configuration was infeasible
        if not no_data:
            self.models.start_round()
        self._n_rounds += 1
        self.models.count_round()
        bs, B_t = self._beta_stop(), np.nan
        plain = self.method == "random" or no_data  # no models: a uniform draw
        kind = "random" if plain else kind or self.strategy.schedule.kind(
            self._n_rounds - self._n_pre, self._used)
        rm = None if plain else self.models.current()
        cand, u, cid, acq, phase = self.strategy.propose(
            kind, rm, self.models, self.state, list(self._pending.values()), allowed, full,
            self._rng, self.seed * 100003 + self._n_rounds)
        if kind == "random":
            rm = None  # a random round has no models: it ends after its first seeds
        else:
            B_t, j = rm.best_lcb_mv(self.weight, bs,
                                    self.models.incumbent_mask(bound=True))  # eq. 10
        r = Round(self._n_rounds, cid, np.asarray(u, dtype=float), cand,
                  self.data.row_of(cid), rm, float(B_t), bs, float(acq), phase=phase)
        if rm is not None and self.replication.one_seed_beta(self.options.beta) is not None:
            r.f_B = one_seed_f_B(rm, self.data, j, self.weight)
        if rm is not None:  # a random round ends after its first seeds
            r.most = round_most(self.replication, self.data, self.weight)
        self._open[r.t] = r
        return self._trial(cid, r.u, self.replication.opening_seeds(free, self.seeds_left(cid)),
                           "bo", r.t)

    @single_blas_thread  # every path in: tell, optimize's evaluated tells, replay
    def _ingest(
        self,
        trial: Trial,
        returns: Sequence[float],
        *,
        infeasible: bool = False,
        runs: Sequence[Any] | None = None,
    ) -> None:
        """Update the data, the history and the open round with a trial's returns."""
        self._check_pending(trial)
        d, cid, is_init = self.data, trial.config_id, trial.phase == "init"
        r = None if is_init else self._open[trial.round]
        # the history records the configuration the study asked for, not trial.config (the
        # user's dict: an objective may have changed it)
        row, kept = add_runs(self.state, self.history, (trial.round, trial.phase, cid,
                                                        self.state.trial_config(cid, trial.u)),
                             trial.u, returns, trial.seeds, runs, infeasible=infeasible,
                             k_round0=0 if r is None else r.k)
        del self._pending[trial.trial_id]
        if not is_init or self.initial_in_budget:
            self._used += spent_runs(runs, len(returns))  # failed runs count toward the budget
        if r is None:
            reason = "infeasible" if infeasible else "initial"
            self.history.add_round(d, trial.round, "init", cid, len(kept), row, None, np.nan,
                                   np.nan, np.nan, reason)
            return
        r.k += len(kept)
        if infeasible:
            self._close(r, "infeasible")
            return
        pol = self.replication  # its final stop reason (or None: more seeds)
        if r.rm is not None:  # UCB^MV(x_t; k) with the round's B_t, and the row of the round
            r.ib = stop_bounds(r.rm, r.row0, r.u, r.cand, *d.stats(row), r.beta_stop,
                               self.weight, self.options.beta,
                               pol.one_seed_beta(self.options.beta), r.f_B)
        reason = pol.after_tell(
            r.k, len(trial.seeds), self.remaining, self.seeds_left(r.config_id),
            random_round=r.rm is None and self.method != "random",
            ucb_mv=None if r.ib is None else r.ib.ucb_mv, B_t=r.B_t,
            sample_gap=self.state.sample_gap(row, self.weight) if pol.uses_sample_gap else None,
            most=r.most)
        if reason is not None:
            self._close(r, reason)

    def tell_stopped(self, trial: Trial, bounds: Any = None) -> None:
        """End ``trial``, whose runs the early-stop part stopped before their last checkpoint
        (:mod:`erahbo.optimizer.early_stop`, option ``early_stop``).

        No return enters the data (a stopped run is never a final return); its seeds count in
        the budget (they were trained, in part); the round ends ``"dominated"`` with
        ``bounds`` (the :class:`~erahbo.gp.round.InnerBounds` that certified it, the early-stop
        verdict's) as its record, as eq. 12 ends a round after a seed; the configuration is
        marked dominated: no longer proposed (the models did not learn from the stopped run,
        and would propose it again at once) until :meth:`readmit_stopped`; its earlier runs
        stay in the data, for the models, the recommendation and ``B_t``.

        Raises
        ------
        ValueError
            Without ``early_stop``, for a trial that is not pending, or for an initial-design
            trial (never stopped).
        """
        if not self.options.early_stop:
            raise ValueError("tell_stopped: early_stop is off; build the Optimizer with "
                             "early_stop=True to stop runs early")
        if self.journal is not None:
            raise NotImplementedError("tell_stopped: a journaled study does not record stopped "
                                      "runs yet; use an Optimizer without journal=")
        self._check_pending(trial)
        if trial.phase == "init":
            raise ValueError("tell_stopped: the initial design's runs are never stopped early; "
                             "tell their returns")
        r = self._open[trial.round]
        del self._pending[trial.trial_id]
        self._used += len(trial.seeds)
        if bounds is not None:
            r.ib = bounds
        if self.state.allowed is not None:  # marked dominated
            if self.state.allowed[trial.config_id]:
                self.state.exclude_row(trial.config_id)
                self._dominated = (*self._dominated, int(trial.config_id))
        else:
            self.state.forbidden.append(np.asarray(trial.u, dtype=float).copy())
        self.n_stopped += 1
        self._close(r, "dominated")

    n_stopped = 0  # trials ended by tell_stopped
    _dominated: tuple[int, ...] = ()  # finite-table rows marked dominated by tell_stopped

    def readmit_stopped(self) -> int:
        """Let the configurations that :meth:`tell_stopped` marked dominated be proposed again,
        those with final returns in the data only (finite tables; the models know them): what
        a host does when nothing else is left to propose and budget is. Returns how many."""
        back = [c for c in self._dominated if self.data.row_of(c) is not None
                and c not in self.state.infeasible]
        for c in back:
            self.state.allowed[c] = True
        self._dominated = tuple(c for c in self._dominated if c not in back)
        return len(back)

    def _close(self, r: Round, reason: str) -> None:
        self.history.add_round(self.data, r.t, r.phase, r.config_id, r.k,
                               self.data.row_of(r.config_id), r.ib, r.B_t, r.beta_stop, r.acq,
                               reason)
        del self._open[r.t]


_init = inspect.signature(Optimizer.__init__)  # help() shows it, not __new__'s catch-all
Optimizer.__signature__ = _init.replace(parameters=list(_init.parameters.values())[1:])
