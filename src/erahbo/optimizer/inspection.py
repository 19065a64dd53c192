"""What an optimizer reports: its data, budget, models, settings and recommendation.

:class:`Inspection` is the read side of :class:`erahbo.Optimizer` (a base class of it): the
counts and the data, the open rounds and seed caps, the round models for inspection, the
study settings a journal stores, the hooks the integrations call (shared hyperparameters, the
stopping rule on given returns) and the recommendation (``argmax LCB_MV``,
:mod:`erahbo.optimizer.recommender`) with the :class:`~erahbo.optimizer.records.Result`
tables. None of it changes a decision.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from erahbo._threads import single_blas_thread
from erahbo.gp import GPHyper, RoundModel, RoundSettings
from erahbo.optimizer.options import space_json
from erahbo.optimizer.records import Result, Round
from erahbo.optimizer.replication import Rule
from erahbo.recommendation import configs_table

__all__ = ["Inspection", "settings_of"]


def settings_of(settings_json: dict[str, Any], failure_policy: Any) -> dict[str, Any]:
    """The settings that determine decisions, without the space: the options'
    (:meth:`Options.settings_json`) with ``failures`` and ``retries`` (of ``failure_policy``,
    None: no policy). :meth:`Inspection.study_settings` adds the space; a host that has none
    yet (the Optuna sampler) stores these."""
    out = dict(settings_json)
    out["failures"] = None if failure_policy is None else failure_policy.mode
    out["retries"] = None if failure_policy is None else failure_policy.retries
    return out


class Inspection:
    """The read side of :class:`erahbo.Optimizer` (its attributes are the optimizer's)."""

    options: Any
    space: Any
    weight: float
    models: Any
    state: Any
    history: Any
    budget: int | None
    method: str
    initial_in_budget: bool
    failure_policy: Any
    strategy: Any
    _used: int
    _pending: dict
    _open: dict
    _settings_json: dict

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

    def open_round(self, t: int) -> Round | None:
        """BO round ``t`` while it is open (None: closed, or an initial-design round), for
        reading only: its configuration (``config_id``), the returns told so far (``k``) and
        ``phase`` (``"bo"``, or ``"challenger"`` when a challenger was re-run)."""
        return self._open.get(t)

    # ------------------------------------------------------------------ seeds (any host)
    @property
    def replication(self) -> Rule:
        """The replication rule (:mod:`erahbo.optimizer.replication`): the seeds of every
        trial of a round, and when the round ends."""
        return self.strategy.replication

    @property
    def free_seeds(self) -> float:
        """Seeds of the budget neither spent nor asked for: :attr:`remaining` less the
        pending trials' seeds (the initial design's only when it counts in the budget); inf
        without a budget."""
        return self.remaining - sum(len(t.seeds) for t in self._pending.values()
                                    if t.phase != "init" or self.initial_in_budget)

    def seeds_left(self, config_id: int) -> float:
        """Seeds configuration ``config_id`` may still get under the strategy's seed caps
        (pending trials counted; inf: no cap)."""
        return self.strategy.caps.seeds_left(self.data, self._pending.values(), config_id,
                                             self.state.allowed)

    def next_seeds(self, config_id: int, n: int) -> list[int]:
        """The ``n`` seeds configuration ``config_id``'s next trial runs: the next of its seed
        stream, keyed by the study's seed and the configuration
        (:meth:`erahbo.optimizer.state.StudyState.next_seeds`; warm-start seeds skipped).
        Every trial :meth:`ask` hands out takes its seeds here."""
        return self.state.next_seeds(config_id, n)

    def config_id_of(self, config: dict[str, Any]) -> int:
        """The id of configuration ``config``: its id in the data (a finite table: its row),
        else the id it gets when first asked (:meth:`next_seeds` takes it); nothing changes."""
        return self.state.id_of(np.asarray(self.space.encode(config), dtype=float))

    @property
    def model_settings(self) -> RoundSettings | None:
        """GP hyperparameters, ``beta`` and ``rho_max^2`` of the round models (None: unfit)."""
        return self.models.settings

    def round_model(self) -> RoundModel:
        """The round models on the current data (for inspection; after the first fit)."""
        if self.models.settings is None:
            raise ValueError("round_model: no model yet (the initial design is not told)")
        return self.models.current()

    def study_settings(self) -> dict[str, Any]:
        """The settings that determine the optimizer's decisions, as plain JSON values.

        A journal stores them and resumes only a study with the same ones: the options
        (:meth:`Options.settings_json`), the warm-start runs, ``failures``, ``retries`` and
        ``space`` (its :meth:`SearchSpace.to_json`; a finite table adds the SHA-256 of its rows).
        """
        out = settings_of(self._settings_json, self.failure_policy)
        out["space"] = space_json(self.space)
        return out

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
        """Whether a round at ``config`` that has run ``returns`` so far ends: the replication
        rule's verdict (:meth:`erahbo.optimizer.replication.Rule.verdict`; ERAHBO: eq. 12).

        ``B_t`` on the current data with ``beta_stop`` (as at a round start), ``UCB_MV(x; k)``
        with ``returns`` pooled with ``config``'s data (a finite table: ``config`` is the row);
        nothing is told. Returns ``(reason, UCB_MV, B_t)``: reason ``"dominated"``,
        ``"k_max"``, ``"fixed_k"`` (fixed-k methods once ``k`` seeds ran) or None (one more
        seed, also before ``k_min``); the bounds are NaN without a model.
        """
        return self.models.stopping_decision(self.replication, config, returns,
                                             self._beta_stop())

    def _beta_stop(self) -> float:
        """``beta_stop_t`` at the progress of the budget."""
        return self.schedule(0.0 if self.budget is None else self._used / max(self.budget, 1))

    # ------------------------------------------------------------------ recommendation
    @single_blas_thread
    def bounds_at(self, configs: Sequence[dict[str, Any]]) -> np.ndarray:
        """``(n, 3)``: the MV estimate, ``LCB_MV`` and ``UCB_MV`` of each of ``configs`` at
        the recommendation's confidence, computed as :attr:`Result.configs` computes its
        ``mv``, ``lcb_mv`` and ``ucb_mv`` (:func:`erahbo.recommendation.configs_table` on the
        round model's posterior); NaN before the models are fit."""
        n = len(configs)
        if self.models.settings is None or not n:
            return np.full((n, 3), np.nan)
        rm = self.models.current()
        post = rm.predict(np.array([self.space.encode(c) for c in configs]))
        table = configs_table(range(n), [{}] * n, [], np.zeros(n), np.zeros(n), np.zeros(n),
                              posterior=tuple(np.asarray(a, dtype=float).ravel() for a in post),
                              measure=self.options.measure, weight=self.weight,
                              beta=self.strategy.recommender.beta, log_var=rm.log_var)
        return table[["mv", "lcb_mv", "ucb_mv"]].to_numpy(dtype=float)

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
        well-sampled configuration (:mod:`erahbo.optimizer.recommender`); GP-UCB:
        ``argmax LCB_f``."""
        rec = self._recommend()
        ids, U = self.data.config_ids, self.data.U
        return None if rec is None else self.state.config(ids[rec[0]], U[rec[0]])

    def result(self) -> Result:
        """Current :class:`Result` (history, rounds, per-configuration table, incumbent)."""
        settings = {k: v for k, v in self._settings_json.items() if k != "warm_start"}
        return self.history.result(self.state, self.models, self._recommend(), self.method,
                                   self.failure_policy, settings)
