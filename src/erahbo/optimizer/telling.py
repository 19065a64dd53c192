"""How an optimizer is told results: the failure policy at the boundary, one ingest path.

:class:`Telling` is the tell side of :class:`erahbo.Optimizer` (a base class of it):
:meth:`~Telling.tell` takes the user's returns (failed runs through the ``failures`` policy,
:mod:`erahbo.optimizer.failure`), :meth:`~Telling.tell_outcome` the outcome of a trial whose
seeds the study ran (:func:`erahbo.study.run_trial`: the optimizer only asks and tells), and
every outcome, live or replayed from a journal, enters the optimizer through
:meth:`~Telling.ingest_outcome` (a :class:`erahbo.study.journaled.JournaledOptimizer`
records it first, in :meth:`~Telling._commit`); its runs join the data and the history
through :func:`erahbo.optimizer.ingest.add_runs`, as a warm start's records do.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from erahbo.optimizer.failure import MAX_ABS_RETURN, FailurePolicy
from erahbo.optimizer.outcomes import TrialOutcome, outcomes_from_returns
from erahbo.optimizer.records import Trial, told_returns

__all__ = ["Telling"]


class Telling:
    """The tell side of :class:`erahbo.Optimizer` (its attributes are the optimizer's)."""

    failure_policy: FailurePolicy | None
    penalizer: Any
    history: Any
    data: Any
    state: Any
    _init: list
    _init_pos: int
    _pending: dict

    def _ingest(self, trial: Trial, returns: Sequence[float], *, infeasible: bool = False,
                runs: Sequence[Any] | None = None) -> None:
        raise NotImplementedError  # the optimizer's (erahbo.optimizer.core)

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
            the budget, failed ones included), and it is no longer recommended nor used for
            ``B_t``.
        errors : sequence of str or None, optional
            Why each failed run failed (one entry per return, None for the others): shown in
            the history's ``error`` column instead of "objective returned NaN".
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
            self._ingest(trial, vals, infeasible=infeasible)
            return
        outcome = outcomes_from_returns(
            trial.seeds[: len(vals)], vals, self.failure_policy, penalizer=self.penalizer,
            infeasible=infeasible, errors=errors, own=self.own_values(trial),
        )
        self._tell_checked(trial, outcome, record_runs=True)

    def tell_outcome(self, trial: Trial, outcome: TrialOutcome) -> None:
        """Tell the outcome of a trial whose seeds the study ran (:func:`erahbo.study.run_trial`;
        journaled first, if there is a journal)."""
        self._tell_checked(trial, outcome)

    def own_values(self, trial: Trial) -> list[float]:
        """The values ``trial``'s configuration counts so far (its row of the data): a penalty
        is at most their lowest, so a failed run never raises its mean (what a study that runs
        the trial's seeds hands :func:`erahbo.runtime.evaluate.evaluate` as ``own``)."""
        row = self.data.row_of(trial.config_id)
        return [] if row is None else list(self.data.returns[row])

    def exclude(self, config_id: int) -> None:
        """Remove a finite-table row from the candidates (a round open at it ends at next ask)."""
        self.state.exclude_row(config_id)

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
        """Tell a whole outcome after the last checks (a journal records it first)."""
        counted = sum(1 for v in outcome.returns if math.isfinite(v))
        need = self.options.min_seeds
        if not outcome.excluded and self.data.row_of(trial.config_id) is None and counted < need:
            raise ValueError(
                f"tell: a new configuration needs at least {need} return(s) (2: its sample "
                f"variance; 1 with k_init = 1 or k_min = 1), got {counted}"
            )
        self._commit(trial, outcome, record_runs)

    def _commit(self, trial: Trial, outcome: TrialOutcome, record_runs: bool) -> None:
        """Take a checked outcome in (a journaled optimizer records it first)."""
        self.penalizer.observe_runs(outcome.runs)
        self.ingest_outcome(trial, outcome)

    def ingest_outcome(self, trial: Trial, outcome: TrialOutcome) -> None:
        """Take a whole trial outcome in, unchecked and unrecorded: the one path of a live
        tell and of a replayed one."""
        self.history.note_failures(outcome.runs)
        self._ingest(trial, list(outcome.returns), infeasible=outcome.excluded,
                     runs=outcome.runs)

