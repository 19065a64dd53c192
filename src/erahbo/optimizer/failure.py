"""The failure rule, a strategy part of the optimizer: failed runs, the policies, the penalty.

The optimizer applies it where it is told results (:mod:`erahbo.optimizer.telling`), the
scheduler that runs a trial's seeds while they run (:func:`erahbo.runtime.evaluate.evaluate`);
the records of runs and trials are in :mod:`erahbo.optimizer.outcomes`.

A training run *fails* when the objective raises, returns a value that is not a finite real
number (NaN, +-inf, None, a string...), exceeds ``run_timeout`` seconds, or its worker process
dies (segfault, out-of-memory kill). A failure never stops the study; what happens next is the
study's ``failures`` policy:

``"penalize"`` (default)
    The run counts, with the penalty value (:func:`penalty_value`): a failed seed is an outcome
    of its configuration, not a veto. It enters the configuration's sample statistics like
    any return, so a configuration that fails on some seeds gets a lower mean and a larger
    spread (its MV carries the risk) and stays a candidate and a possible incumbent.
``"retry"``
    The run is repeated with a new seed derived deterministically from the failed one
    (:func:`retry_seed`), up to ``retries`` times, and up to :data:`SUCCEEDED_RETRIES` times
    as many once another seed slot of the trial has ended ``ok``: a configuration that can
    succeed fails by chance, and at 30 % sporadic failures a streak of 3 failures hits 2.7 %
    of seed slots, one of 5 0.24 % (:meth:`FailurePolicy.retry_limit`). If every retry
    fails, the last is penalized. A slot that used up its plain retries while no other slot
    has succeeded waits for them (its end is recorded then), so its fate does not depend on
    the order in which the trial's runs finish; a configuration that fails on every seed
    costs ``retries + 1`` runs per seed, as without the rule.
``"exclude"``
    The configuration is marked infeasible at its first failure: the optimizer is told so
    (``tell(..., infeasible=True)``) and never proposes it again. Seeds of it not started yet
    are skipped.

Statuses of a run as recorded in histories and the journal:

============  ====================================================================
``ok``        finished with a finite return; counted with it
``penalized`` failed; counted with the penalty value
``retried``   failed; replaced by a retry with a new seed; not counted
``failed``    failed under ``"exclude"``; the configuration is infeasible; not counted
============  ====================================================================

(The journal adds ``running`` and ``interrupted`` for runs cut by a crash of the study.)

The penalty (raw scale)
-----------------------
``penalty = min(Q1, lowest)``: ``Q1`` the lower quartile (numpy's linear interpolation) of the
feasible (finite) returns seen so far, a bottom-quartile run of the study; ``lowest`` the
lowest value the failed run's configuration counts so far (its returns, the trial's included,
and earlier penalties). So a failed run never raises its configuration's mean (one run of 0.308
in a study whose ``Q1`` is 1.07: the penalty is 0.308), and it stays on the returns' scale,
inside their range: it shifts its configuration's statistics by the size of the differences
between runs, and the models' scale (``Sigma_hat``, the variance GP's targets, ``rho_max^2``)
stays the data's. ``Q1`` is robust: another configuration's catastrophic return (-1e6 among
returns of 0..500) does not move it (breakdown point 25 %), where the study's minimum or a gap
below it (OSS Vizier's ``worst - 1.5 R``, erahbo's rule before issue 13) would put every later
failure there and swamp the variances. All feasible returns equal to ``v``: ``Q1 = v - |v|``
(``v - 1`` at 0); none: -1, as in Vizier. For a trial it uses the returns of all earlier trials
plus the trial's own, so it does not depend on the order in which concurrent seeds finish;
:func:`apply_penalty` recomputes ``Q1`` over a whole history at once (it knows no
configurations). ``docs/robustness.md`` ("Sporadic failures") has the measurements.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Iterable
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from erahbo.optimizer.outliers import outlier_error, return_scale
from erahbo.validation import check_option

if TYPE_CHECKING:
    import numpy as np

__all__ = [
    "COUNTED",
    "MAX_ABS_RETURN",
    "PENALTY_QUANTILE",
    "POLICIES",
    "SUCCEEDED_RETRIES",
    "UNFINISHED",
    "FailurePolicy",
    "Penalizer",
    "apply_penalty",
    "at_most_own",
    "penalty_value",
    "retry_seed",
    "spent_runs",
]

POLICIES = ("penalize", "retry", "exclude")
SUCCEEDED_RETRIES = 2  # a configuration that succeeded on a seed: this many times the retries
COUNTED = ("ok", "penalized")
_SPENT = ("ok", "penalized", "retried", "failed")  # finished runs: what the budget counts
UNFINISHED = ("running", "interrupted")  # journal statuses of runs cut by a crash
MAX_ABS_RETURN = 1e150  # larger finite returns fail: their squares overflow float64


# --------------------------------------------------------------------------------------------
# Policy, penalty, seeds
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class FailurePolicy:
    """What to do with a failed run.

    Parameters
    ----------
    mode : {"penalize", "retry", "exclude"}
    retries : int
        Retries per seed for ``mode="retry"`` (default 2; twice as many for a seed whose
        trial has a seed that succeeded: :meth:`retry_limit`); ignored otherwise.
    """

    mode: str = "penalize"
    retries: int = 2

    def __post_init__(self) -> None:
        if self.mode not in POLICIES:
            raise ValueError(
                f"failures={self.mode!r} is not a policy; use one of {', '.join(POLICIES)}"
            )
        check_option("retries", self.retries)
        if self.mode == "retry" and self.retries < 1:
            raise ValueError("failures='retry' needs retries >= 1; use failures='penalize'")

    def retry_limit(self, succeeded: bool) -> int:
        """Retries of one seed slot under ``"retry"``: :attr:`retries`, and
        :data:`SUCCEEDED_RETRIES` times as many once another seed slot of the same trial ended
        ``ok`` (``succeeded``; module docstring, ``"retry"``); 0 under the other policies."""
        if self.mode != "retry":
            return 0
        return self.retries * (SUCCEEDED_RETRIES if succeeded else 1)

    @classmethod
    def coerce(cls, failures: str | FailurePolicy, retries: int | None = None) -> FailurePolicy:
        """Build a policy from the user-facing ``failures=`` / ``retries=`` options."""
        if isinstance(failures, FailurePolicy):
            return failures if retries is None else replace(failures, retries=retries)
        if not isinstance(failures, str):
            raise TypeError(
                f"failures must be one of {', '.join(POLICIES)}, got {type(failures).__name__}"
            )
        return cls(failures, 2 if retries is None else retries)


PENALTY_QUANTILE = 0.25  # a failed run counts as the lower quartile of the feasible returns


def penalty_value(values: Iterable[float], own: Iterable[float] = ()) -> float:
    """Return counted for a penalized run, given the feasible returns seen so far.

    Parameters
    ----------
    values : iterable of float
        (n,) feasible returns seen so far (the trial's own included); non-finite entries are
        ignored.
    own : iterable of float
        The values the failed run's configuration counts so far (its returns, the trial's
        own included, and earlier penalties); non-finite entries are ignored.

    Returns
    -------
    float
        ``min(Q1, min(own))``: ``Q1`` of the finite ``values`` (module docstring), lowered to
        the configuration's lowest value (:func:`at_most_own`).
    """
    import numpy as np

    v = np.asarray([float(x) for x in values], dtype=float)  # (n,)
    v = v[np.isfinite(v)]
    worst, best = (float(v.min()), float(v.max())) if v.size else (0.0, 0.0)
    q = (-1.0 if v.size == 0 else float(np.quantile(v, PENALTY_QUANTILE)) if best > worst
         else worst - (abs(worst) if worst != 0 else 1.0))
    return at_most_own(q, own)


def at_most_own(penalty: float, own: Iterable[float]) -> float:
    """``penalty`` lowered to the lowest finite value of ``own`` (a configuration's counted
    values): a failed run counted there never raises the configuration's mean."""
    low = [float(x) for x in own if math.isfinite(float(x))]
    return min(penalty, *low) if low else float(penalty)


class Penalizer:
    """The returns seen so far, from which penalties and outlier verdicts are computed.

    The study keeps one, updated after each told trial (:meth:`observe_runs`): the raw return
    of every ``ok`` run sets the penalty; those and the finite returns of runs that failed as
    outliers set the scale of :meth:`screen` (so that a mode of legitimate returns flagged
    while the study's scale was still narrow widens the scale instead of staying flagged). A
    resumed study rebuilds it from the journal.

    Parameters
    ----------
    values : iterable of float
        Feasible returns (``ok`` runs).
    outlying : iterable of float
        Finite returns of runs that failed as outliers (they widen the scale only).

    Attributes
    ----------
    worst, best : float
        Smallest and largest feasible return so far (NaN before the first).
    n : int
        Number of feasible returns so far.
    """

    def __init__(self, values: Iterable[float] = (), outlying: Iterable[float] = ()) -> None:
        self.worst = math.nan
        self.best = math.nan
        self.n = 0
        self._values: list[float] = []
        self._outlying: list[float] = []  # finite returns of runs that failed as outliers
        self._center: tuple[float, float] | None = None
        self._center_n = (-1, -1)  # (n, outliers) at which _center was computed
        self.observe(values)
        self._outlying.extend(v for v in map(float, outlying) if math.isfinite(v))

    def observe(self, values: Iterable[float]) -> None:
        """Add returns; non-finite ones are ignored."""
        for v in values:
            v = float(v)
            if not math.isfinite(v):
                continue
            if self.n == 0:
                self.worst = self.best = v
            else:
                self.worst = min(self.worst, v)
                self.best = max(self.best, v)
            self._values.append(v)
            self.n += 1

    def observe_runs(self, runs: Iterable[Any]) -> None:
        """Add a told trial's runs: ``ok`` returns as feasible returns, the finite returns of
        failed runs (outliers; other failures have none) to the scale of :meth:`screen`."""
        runs = list(runs)
        self.observe(r.raw for r in runs if r.status == "ok")
        self._outlying.extend(float(r.raw) for r in runs
                              if r.status != "ok" and math.isfinite(r.raw))

    def penalty(self, extra: Iterable[float] = (), own: Iterable[float] = ()) -> float:
        """Penalty over the returns seen so far plus ``extra`` (the failed run's trial's
        feasible returns; not stored), at most the lowest of ``extra`` and ``own`` (the values
        its configuration counted before the trial): :func:`penalty_value`."""
        extra = [float(v) for v in extra]
        return penalty_value([*self._values, *extra], own=[*extra, *own])

    def center(self) -> tuple[float, float] | None:
        """``(median, scale)`` of the returns seen so far (:func:`return_scale`); None while
        the study has no scale (fewer than two returns): :meth:`screen_among` judges then."""
        n = (self.n, len(self._outlying))
        if self._center_n != n:
            self._center, self._center_n = return_scale(self._values, self._outlying), n
        return self._center

    def screen(self, raw: float) -> str | None:
        """Error of a run whose finite return is an outlier among the returns seen so far.

        None when ``raw`` is not one (:mod:`erahbo.optimizer.outliers`); the caller then counts
        the run as ``ok``, else as a failed run with this error.
        """
        return outlier_error(raw, self.center())

    def screen_among(self, raw: float, others: Iterable[float]) -> str | None:
        """As :meth:`screen`, for a trial judged before the study has a scale (:meth:`center`
        is None: its first trial): ``raw`` against the returns seen so far plus ``others``,
        the trial's other returns (its other seeds', and its runs flagged so far). They enter
        the robust centre and spreads only (median, MAD, median absolute return, IQR), so a
        verdict depends on their values alone, not on which of them were flagged; a single
        other return sets the scale by its absolute value, so of two returns only the one far
        larger in magnitude can be an outlier."""
        return outlier_error(raw, return_scale(self._values, [*self._outlying, *others],
                                               min_returns=1))

    def __repr__(self) -> str:
        return f"Penalizer(worst={self.worst!r}, best={self.best!r}, n={self.n})"


def apply_penalty(y: np.ndarray) -> np.ndarray:
    """Replace every non-finite entry of ``y`` by the penalty of its finite entries.

    For optimizers that keep failed runs as NaN and recompute the penalty over the whole
    history whenever they refit (Vizier's behaviour). ``y`` of shape (n,) or (n, 1).
    """
    import numpy as np

    y = np.asarray(y, dtype=float)  # (n,) or (n, 1)
    finite = np.isfinite(y)
    return np.where(finite, y, penalty_value(y[finite]))


def spent_runs(runs: Iterable[Any] | None, n_returns: int) -> int:
    """Training runs a told trial spent from the budget: every finished run, failed ones too.

    Failed runs count toward the budget whatever the policy (as Optuna counts failed trials),
    so a study whose runs keep failing under ``"exclude"`` or ``"retry"`` still ends.

    Parameters
    ----------
    runs : iterable of run records or None
        The trial's runs (:class:`RunOutcome` or journal records); None when the user told
        plain returns (ask/tell without runs).
    n_returns : int
        Returns told for the trial (each one a run the user made); used when ``runs`` is None.
    """
    if runs is None:
        return int(n_returns)
    return sum(getattr(r, "status", "ok") in _SPENT for r in runs)


def retry_seed(seed: int, attempt: int, avoid: Iterable[int] = ()) -> int:
    """Seed of retry number ``attempt`` (>= 1) of a run that had ``seed``.

    A deterministic hash of (seed, attempt) mapped to [1, 2**31 - 1] (never 0), skipping the
    values in ``avoid`` (the trial's own seeds).
    """
    avoid = set(avoid)
    salt = 0
    while True:
        h = hashlib.blake2b(
            f"erahbo-retry:{int(seed)}:{int(attempt)}:{salt}".encode(), digest_size=8
        )
        s = int.from_bytes(h.digest(), "little") % (2**31 - 1) + 1
        if s not in avoid:
            return s
        salt += 1
