"""Failed training runs: the failure rule lives in the optimizer; this module re-exports it.

The policies (penalize, retry, exclude), the penalty value, the counted and spent rules and the
retry seeds are a strategy part of the optimizer, :mod:`erahbo.optimizer.failure` (its module
docstring has the rules); run and trial outcomes are in :mod:`erahbo.optimizer.outcomes`. Only
:class:`RunRecorder`, what the scheduler (:mod:`erahbo.runtime.evaluate`) tells the journal as
runs start and end, is the runtime's own. The names stay importable from here.
"""

from __future__ import annotations

from typing import Any, Protocol

from erahbo.optimizer.failure import (
    COUNTED,
    MAX_ABS_RETURN,
    PENALTY_QUANTILE,
    POLICIES,
    SUCCEEDED_RETRIES,
    UNFINISHED,
    FailurePolicy,
    Penalizer,
    apply_penalty,
    at_most_own,
    penalty_value,
    retry_seed,
    spent_runs,
)
from erahbo.optimizer.outcomes import (
    RunOutcome,
    TrialOutcome,
    as_return,
    outcomes_from_returns,
    tell_values,
    too_large_message,
)

__all__ = [
    "COUNTED",
    "MAX_ABS_RETURN",
    "PENALTY_QUANTILE",
    "POLICIES",
    "SUCCEEDED_RETRIES",
    "UNFINISHED",
    "FailurePolicy",
    "Penalizer",
    "RunOutcome",
    "RunRecorder",
    "TrialOutcome",
    "apply_penalty",
    "as_return",
    "at_most_own",
    "outcomes_from_returns",
    "penalty_value",
    "retry_seed",
    "spent_runs",
    "tell_values",
    "too_large_message",
]


class RunRecorder(Protocol):
    """Receives runs as they start and end (the journal implements it).

    ``run_started`` must make the start durable before returning; ``run_finished`` likewise for
    the result. The token returned by ``run_started`` is handed back to ``run_finished``.
    """

    def run_started(self, slot: int, seed: int, attempt: int, rerun: bool) -> Any: ...

    def run_finished(self, token: Any, outcome: RunOutcome) -> None: ...
