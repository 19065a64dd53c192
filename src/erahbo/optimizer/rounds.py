"""The models side of a study: fitting, the round model, the choice of ``x_t``, the incumbent.

:class:`RoundModels` keeps the GP hyperparameters (MAP on the initial design, refit every
``refit_every`` rounds if > 0, each time the evaluated configurations grew ``refit_growth``-fold,
or fixed by hand), the engine's state across rounds and the round
model of the current data, and answers the three model questions of a BO round: which
configuration to evaluate (eq. 8, on the kriging believer model while trials are pending), the
incumbent bound ``B_t`` (eq. 10) and the recommendation (``argmax LCB^MV``).
"""

from __future__ import annotations

import math
from dataclasses import replace
from typing import Any

import numpy as np

from erahbo.gp import (
    RoundModel,
    RoundSettings,
    believer_round,
    continuous_argmax,
    fit_hyperparameters,
    make_engine,
    make_round,
)
from erahbo.gp.one_seed import variance_observations
from erahbo.gp.round import one_seed_bound, one_seed_in_force, own_run_bound
from erahbo.optimizer.options import Options
from erahbo.optimizer.recommender import Recommender
from erahbo.optimizer.replicate import lookahead_replicate, nearest_replicate
from erahbo.optimizer.replication import Rule
from erahbo.optimizer.state import StudyState
from erahbo.optimizer.variance_prior import noise_of
from erahbo.recommendation import configs_table

__all__ = ["RoundModels", "next_refit", "round_most", "stop_bounds"]


def next_refit(growth: float | None, n_at_fit: int) -> float:
    """Evaluated configurations at which the next refit of the hyperparameters is due after a
    fit on ``n_at_fit``: ``growth`` times as many (``refit_growth``; 0 or None: never, inf).
    The core's rounds and the Optuna host's stored fit both read it."""
    return float(growth) * max(n_at_fit, 1) if growth else math.inf


def stop_bounds(rm: Any, row: int | None, u: np.ndarray, cand: int | None, mean: float,
                s2: float, k: int, beta_stop: float, weight: Any, beta: float,
                one_seed_beta: float | None = None, f_B: float = -math.inf) -> Any:
    """The bounds at ``x_t`` that eq. 12 reads after ``k`` seeds with sample ``mean`` and
    variance ``s2``: the round model's (:meth:`erahbo.gp.round.RoundModel.inner`); after one
    seed with ``one_seed_beta`` (the rule's
    :meth:`~erahbo.optimizer.replication.Rule.one_seed_beta`) the variance's optimism kept
    where ``x_t``'s posterior ``f`` is at least ``f_B`` (:func:`one_seed_f_B`: that of
    ``B_t``'s configuration while the study's data let the optimism act)
    (:func:`erahbo.gp.round.one_seed_bound`); their ``ucb_mv`` the measure's
    stopping bound (:meth:`erahbo.risk.RiskMeasure.stop_ucb`: MV's is the models' own float;
    a tail measure's also hears the own runs, with the variance GP's estimate of ``rho^2`` at
    ``x_t`` and the acquisition's ``beta``). The optimizer's tell and
    :meth:`RoundModels.stopping_decision` both use it."""
    ib = rm.inner(row, u, cand, mean, s2, k, beta_stop, weight)
    if one_seed_beta is not None and k < 2:
        ib = one_seed_bound(ib, one_seed_beta, f_B)
    return own_run_bound(ib, mean, s2, k, weight, beta)


def bound_f(rm: Any, U: np.ndarray, row: int) -> float:
    """Posterior mean of ``f`` at ``B_t``'s configuration, data row ``row`` of the encodings
    ``U (n, dim)`` the round model was fitted on (``-inf`` when no row sets ``B_t``:
    ``row < 0``)."""
    if row < 0:
        return -math.inf
    return float(rm.predict(np.asarray(U[row], dtype=float)[None, :])[0][0])


def one_seed_f_B(rm: Any, data: Any, row: int, risk: Any) -> float:
    """``f_B`` for :func:`stop_bounds` in a round whose ``B_t`` data row ``row`` sets: its
    posterior ``f`` (:func:`bound_f`) while the study's data let the optimism after one seed
    act (:func:`erahbo.gp.round.one_seed_in_force` on ``data``'s sample means, variances and
    seed counts), ``+inf`` otherwise (no ``x_t`` reaches it: eq. 12's plain bound). The
    optimizer's rounds and :meth:`RoundModels.stopping_decision` both use it."""
    if not one_seed_in_force(data.ybar, data.s2, data.k, risk):
        return math.inf
    return bound_f(rm, data.U, row)


def round_most(rule: Any, data: Any, risk: Any) -> int:
    """The most seeds of a round that opens on ``data`` under ``rule``
    (:meth:`~erahbo.optimizer.replication.Rule.round_most`): the rule's ``k_max_means`` while
    the replicated configurations differ mostly by their means (one-seed optimism's test,
    :func:`erahbo.gp.round.one_seed_in_force`, false: also while too few are replicated), else
    its ``k_max``. The optimizer's rounds and :meth:`RoundModels.stopping_decision` use it."""
    most = rule.round_most(False)
    if rule.round_most(True) == most:  # the answer does not matter
        return int(most)
    return int(rule.round_most(not one_seed_in_force(data.ybar, data.s2, data.k, risk)))


class RoundModels:
    """Hyperparameters, engine state and the cached round model of a study.

    Parameters
    ----------
    options : Options
    state : StudyState
        The study's data (read only here).
    recommender : Recommender
        The strategy's recommender.
    """

    def __init__(self, options: Options, state: StudyState, recommender: Recommender) -> None:
        self.options = options
        self.state = state
        self.recommender = recommender
        self.settings: RoundSettings | None = None
        self._fast = None
        self._rounds_since_fit = 0
        self._n_at_fit = 0  # evaluated configurations at the last fit (refit_growth)
        self._fits = 0  # hyperparameter settings used so far (a version of the models)
        self._cache: tuple[int, RoundModel] | None = None  # (data version, model)
        self._rec: tuple[tuple, tuple[int, float, str] | None] | None = None  # (key, rec.)

    def use(self, settings: RoundSettings) -> None:
        """Fix the hyperparameters (and rebuild the engine's caches)."""
        self.settings = settings
        self._fast = make_engine(self.options.engine, settings, self.state.candidates)
        self._rounds_since_fit = 0
        self._n_at_fit = self.state.data.n
        self._fits += 1
        self._cache = None

    def start_round(self) -> None:
        """A model-based round starts: fit (first round, every ``refit_every`` rounds, or when
        the evaluated configurations grew ``refit_growth``-fold since the last fit)."""
        refit, growth = self.options.refit_every, self.options.refit_growth
        if (self.settings is None or (refit and self._rounds_since_fit >= refit)
                or self.state.data.n >= next_refit(growth, self._n_at_fit)):
            self.fit()

    def fit(self) -> RoundSettings:
        """MAP-fit both GPs on the current data and use the result."""
        d, o = self.state.data, self.options
        fitted = fit_hyperparameters(d.U, d.ybar, self._fail_s2(), d.k, kind=o.kernel, beta=o.beta,
                                     rho_max2=o.rho_max2, rho_max2_model=o.rho_max2_model,
                                     rho_max2_spread=o.rho_max2_spread,
                                     seed=o.seed,
                                     one_seed=o.min_seeds == 1,
                                     var_noise_prior=o.var_noise_prior,
                                     var_noise=noise_of(o),
                                     previous=self.settings, evidence=o.refit_evidence or 0.0)
        # eq. 8's own confidence is an option the fit does not read: set beside its result
        self.use(replace(fitted, acquisition_beta_var=o.acquisition_beta_var))
        return self.settings

    def count_round(self) -> None:
        """One more round since the last fit."""
        self._rounds_since_fit += 1

    def current(self) -> RoundModel:
        """Round model on the current data, shared by the recommendation and the next ask.

        The benchmark asks for the incumbent after every tell; when that tell closed the round,
        the next ``ask`` sees the same data and reuses the model instead of refactoring it.
        """
        d = self.state.data
        if self._cache is not None and self._cache[0] == d.version:
            return self._cache[1]
        rm = make_round(self.options.engine, self._fast, d.U, d.ybar, self.variances(), d.k,
                        self.settings, self.state.candidates)
        self._cache = (d.version, rm)
        return rm

    def variances(self) -> np.ndarray:
        """``(n,)`` the variance GP's observations: the sample variances, and the pooled
        variance for one-seed configurations (:mod:`erahbo.gp.one_seed`)."""
        d = self.state.data
        return variance_observations(self._fail_s2(), d.k, self.settings.sigma0_2, d.ybar)

    def _fail_s2(self) -> np.ndarray:
        """``(n,)`` the sample variances, or under ``failure_prior_runs`` the failure mode's
        variance observations (:func:`erahbo.gp.failure_mode.failure_variances`, with the mean
        GP's lengthscales; before the first fit, the prior's mode)."""
        d = self.state.data
        runs = float(self.options.failure_prior_runs or 0.0)
        if runs <= 0 or d.n < 2:
            return d.s2
        from erahbo.gp.failure_mode import failure_variances
        from erahbo.gp.prior import lengthscale_log_mode

        if self.settings is not None:
            ls = np.asarray(self.settings.hyper_f.lengthscales, dtype=float)  # (dim,)
        else:
            ls = np.full(d.dim, np.exp(lengthscale_log_mode(d.dim)))
        return failure_variances(d.returns, d.U, d.s2, d.k, ls, runs)

    def choose(
        self,
        rm: RoundModel,
        allowed: np.ndarray | None,
        pending: list[Any],
        round_seed: int,
        avoid: list[np.ndarray] | None = None,
    ) -> tuple[int | None, np.ndarray, int, float]:
        """``x_t``: the argmax of the acquisition (eq. 8) on the round's model.

        With pending trials at new configurations the choice is made on the kriging believer
        model (:mod:`erahbo.gp.believer`), which avoids them. ``avoid``: encodings
        ``(dim,)`` a continuous search must not return (configurations at their seed cap,
        :mod:`erahbo.optimizer.seedcap`; a finite table leaves them out of ``allowed``).

        Returns
        -------
        (candidate index or None, encoding ``(dim,)``, config id, acquisition value)
        """
        st, o = self.state, self.options
        d = st.data
        new = [t for t in pending if d.row_of(t.config_id) is None]
        choose = rm
        if new:
            choose = believer_round(rm, d.U, d.ybar, self.variances(), d.k,
                                    np.array([t.u for t in new]),
                                    np.array([len(t.seeds) for t in new]), self.settings,
                                    st.candidates, fast=self._fast)
        if st.candidates is not None:
            cand, acq = choose.select(allowed, o.weight)
            return cand, st.candidates[cand], cand, acq
        avoid = st.forbidden + [t.u for t in pending] + list(avoid or [])
        u, acq = continuous_argmax(choose, st.space, o.weight, d.U, seed=round_seed,
                                   raw_samples=o.raw_samples, n_polish=o.n_polish,
                                   forbidden=np.asarray(avoid) if avoid else None)
        if o.replicate_lookahead:
            j = lookahead_replicate(rm, d.U, u, o.replicate_within or 0.0, o.weight,
                                    np.random.default_rng(round_seed), self._closed(avoid))
        else:
            j = nearest_replicate(u, d.U, self.settings.hyper_f.lengthscales,
                                  o.replicate_within or 0.0, self._closed(avoid))
        if j is not None:  # within the model's resolution: a replicate (optimizer.replicate)
            u = d.U[j]
        return None, u, st.new_id(u), acq

    def _closed(self, avoid: list[np.ndarray]) -> np.ndarray:
        """``(n,)`` evaluated rows a proposal may not replicate: those in ``avoid`` (at their
        seed cap, pending)."""
        U = self.state.data.U
        closed = np.zeros(len(U), dtype=bool)
        for a in avoid:
            closed |= (U == a).all(1)
        return closed

    def stopping_decision(
        self, rule: Rule, config: Any, returns: Any, beta_stop: float
    ) -> tuple[str | None, float, float]:
        """The replication rule's verdict (:meth:`~erahbo.optimizer.replication.Rule.verdict`;
        ERAHBO: eq. 12) for a round at ``config`` that ran ``returns`` so far.

        ``B_t`` (eq. 10) on the current data, ``UCB^MV(x; k)`` with ``returns`` pooled with
        ``config``'s data, computed when the rule asks; nothing is told. Returns ``(reason,
        UCB^MV, B_t)`` (see :meth:`erahbo.Optimizer.stopping_decision`).
        """
        vals = [float(v) for v in returns]
        if not all(math.isfinite(v) for v in vals):
            raise ValueError(f"stopping_decision: returns {vals} must be finite")
        st, o = self.state, self.options

        def bounds() -> tuple[float, float] | None:
            if self.settings is None:
                self.fit()
            if st.space.is_finite:
                cand, u = int(config), st.candidates[int(config)]
            else:
                cand, u = None, st.space.encode(config)
            d = st.data
            same = np.flatnonzero((d.U == u).all(1))
            row = int(same[0]) if same.size else None
            pooled = ([] if row is None else list(d.returns[row])) + vals
            if len(pooled) < o.min_seeds:
                return None
            rm = self.current()
            B_t, j = rm.best_lcb_mv(o.weight, beta_stop, self.incumbent_mask(bound=True))  # (10)
            one_seed = rule.one_seed_beta(o.beta)
            s2 = float(np.var(pooled, ddof=1)) if len(pooled) > 1 else 0.0  # k = 1: pooled
            ib = stop_bounds(rm, row, u, cand, float(np.mean(pooled)), s2, len(pooled),
                             beta_stop, o.weight, o.beta, one_seed,
                             -math.inf if one_seed is None else one_seed_f_B(rm, d, j, o.weight))
            return ib.ucb_mv, B_t

        plain = o.method == "random" or st.data.n == 0  # no models
        return rule.verdict(len(vals), None if plain else bounds,
                            round_most(rule, st.data, o.weight))

    def configs_table(self, cfgs: list[dict[str, Any]], failures: dict[int, int]) -> Any:
        """:attr:`erahbo.Result.configs`: every configuration with its MV bounds and rank."""
        d, o = self.state.data, self.options
        rm = self.current() if self.settings is not None and d.n else None
        post = rm.predict(d.U) if rm is not None else None
        rec = self._recommendation() if d.n else None
        return configs_table(d.config_ids, cfgs, self.state.space.names, d.ybar, d.s2, d.k,
                             posterior=post, measure=o.measure, weight=o.weight,
                             beta=self.recommender.beta, eligible=self.state.row_mask(),
                             failures=failures, incumbent=None if rec is None else rec[0],
                             rule=None if rec is None else rec[2],
                             log_var=rm is not None and rm.log_var)

    def incumbent_mask(self, bound: bool = False) -> np.ndarray | None:
        """``(n,)`` bool: the rows that may be the recommendation (``bound``: ``B_t``'s
        maximizer, eq. 10): eligible (:meth:`~erahbo.optimizer.state.StudyState.row_mask`) and
        with at least the recommender's ``min_seeds`` (``bound_seeds``) seeds when such a row
        exists (:meth:`erahbo.optimizer.recommender.Recommender.backed`); None: every row."""
        r = self.recommender
        return r.backed(self.state.data.k, self.state.row_mask(),
                        r.bound_seeds if bound else r.min_seeds)

    def recommend(self) -> tuple[int, float] | None:
        """Incumbent row and its posterior mean MV (the strategy's recommender,
        :class:`erahbo.optimizer.recommender.Recommender`; before the first fit, the sample
        estimates). None without data or when every row is excluded. Cached until the data,
        the hyperparameters or the excluded rows change.
        """
        found = self._recommendation()
        return None if found is None else found[:2]

    def _recommendation(self) -> tuple[int, float, str] | None:
        """``(row, posterior mean MV, rule)``, cached until the data, the hyperparameters or
        the excluded rows change."""
        st, o = self.state, self.options
        key = (st.data.version, self._fits, len(st.infeasible), sum(st.n_penalized.values()))
        if self._rec is None or self._rec[0] != key:
            mask = self.incumbent_mask()
            rm = None
            if self.settings is not None and st.data.n and (mask is None or mask.any()):
                rm = self.current()
            self._rec = (key, self.recommender.choose(rm, st.data, mask, o.weight, o.measure))
        return self._rec[1]
