"""``max_failures``: stop a study whose training runs keep failing (issue 13).

Every failed run counts toward the budget whatever the policy (:func:`erahbo.optimizer.failure.
spent_runs`), so no study runs without end. ``max_failures`` stops it earlier, like Ray Tune's
``FailureConfig(max_failures=...)`` and Optuna's failed trials, with a clear message and the
result so far:

* an ``int`` ``n >= 0``: stop as soon as more than ``n`` runs have failed;
* a ``float`` in ``(0, 1)``: stop as soon as more than that share of the finished runs has
  failed, once at least :data:`MIN_RUNS_FOR_SHARE` runs have finished (a share of three runs
  says nothing).

A failed run is one whose status is not ``ok`` (``penalized``, ``retried``, ``failed``).

>>> lim = FailureLimit.coerce(0.5)
>>> lim.add(["ok"] * 10 + ["penalized"] * 11)
>>> lim.exceeded
True
>>> print(lim.message().splitlines()[0])
optimize stopped early: 11 of 21 training runs failed (52%), more than max_failures=0.5 allows.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Iterable
from dataclasses import dataclass

__all__ = ["MIN_RUNS_FOR_SHARE", "FailureLimit", "FailureLimitWarning"]

MIN_RUNS_FOR_SHARE = 20  # finished runs before a share limit (float max_failures) applies


class FailureLimitWarning(UserWarning):
    """Warned when ``max_failures`` stopped a study (the result so far is returned)."""


@dataclass
class FailureLimit:
    """Running count of finished and failed runs against ``max_failures``.

    Attributes
    ----------
    limit : int, float or None
        ``max_failures`` (None: no limit).
    n_runs, n_failed : int
        Finished runs and failed runs seen so far.
    first_error : str or None
        First line of the first failed run's error text.
    """

    limit: int | float | None = None
    n_runs: int = 0
    n_failed: int = 0
    first_error: str | None = None

    @classmethod
    def coerce(cls, max_failures: int | float | None) -> FailureLimit:
        """Check the user's ``max_failures`` option and build a limit.

        Raises
        ------
        ValueError, TypeError
            Naming the option and the values it takes.
        """
        if max_failures is None:
            return cls(None)
        if isinstance(max_failures, bool) or not isinstance(max_failures, numbers.Real):
            raise TypeError(
                f"max_failures must be an int (failed runs) or a float in (0, 1) (their share), "
                f"got {type(max_failures).__name__} {max_failures!r}"
            )
        if isinstance(max_failures, numbers.Integral):
            if max_failures < 0:
                raise ValueError(f"max_failures={max_failures} must be >= 0 (failed runs)")
            return cls(int(max_failures))
        v = float(max_failures)
        if not (math.isfinite(v) and 0.0 < v < 1.0):
            raise ValueError(
                f"max_failures={max_failures!r}: a float is a share of failed runs and must lie "
                "in (0, 1); give an int for a count of failed runs"
            )
        return cls(v)

    def add(self, statuses: Iterable[str], errors: Iterable[str | None] = ()) -> None:
        """Count finished runs by status (``ok`` or a failure status)."""
        for st in statuses:
            self.n_runs += 1
            self.n_failed += st != "ok"
        if self.first_error is None:
            for e in errors:
                if e:
                    self.first_error = str(e).strip().splitlines()[0]
                    break

    @property
    def exceeded(self) -> bool:
        """Whether the study must stop."""
        if self.limit is None:
            return False
        if isinstance(self.limit, int):
            return self.n_failed > self.limit
        return self.n_runs >= MIN_RUNS_FOR_SHARE and self.n_failed > self.limit * self.n_runs

    def message(self) -> str:
        """Why the study stopped, what was kept and what to do."""
        share = self.n_failed / max(self.n_runs, 1)
        err = f" First error: {self.first_error}." if self.first_error else ""
        return (
            f"optimize stopped early: {self.n_failed} of {self.n_runs} training runs failed "
            f"({share:.0%}), more than max_failures={self.limit!r} allows.\n"
            f"The result so far is returned (Result.stopped says so); every run is in "
            f"Result.history with its status and error.{err} Fix the objective (call it on one "
            "configuration and seed to debug it), or raise max_failures (None: no limit)."
        )
