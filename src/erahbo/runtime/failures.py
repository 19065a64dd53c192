"""Failed training runs: detection, the three policies, and the penalty value.

A training run *fails* when the objective raises, returns a value that is not a finite real
number (NaN, +-inf, None, a string...), exceeds ``run_timeout`` seconds, or its worker process
dies (segfault, out-of-memory kill). A failure never stops the study; what happens next is the
study's ``failures`` policy:

``"penalize"`` (default)
    The run counts, with a return below the worst feasible one (:func:`penalty_value`), in the
    spirit of OSS Vizier's infeasible warp. The configuration stays a candidate; its penalized
    seeds lower its mean and raise its variance, so MV-aware methods avoid it.
``"retry"``
    The run is repeated with a new seed derived deterministically from the failed one
    (:func:`retry_seed`), up to ``retries`` times; if every retry fails, the last is penalized.
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
Vizier fills infeasible labels with ``b = min - (0.5 R + 1)`` on its warped scale, where the
feasible labels span exactly ``[-0.5, 0.5]`` (``R = 1``): the penalty sits ``1.5 R`` below the
worst feasible label. We apply that same rule on the raw scale of the returns,
``penalty = worst - 1.5 * R`` with ``R = best - worst`` over all feasible returns seen so far,
so that it is scale-equivariant (returns of scale 1e6 or 1e-6 get a penalty of the same
relative size; a fixed "- 1" would dwarf returns of scale 1e-6). When ``R = 0`` (one feasible
value, or all equal) the gap is ``|worst|`` (or 1 if ``worst = 0``); with no feasible return at
all the penalty is -1, as in Vizier. The value is recomputed consistently: for a trial it uses
the feasible returns of all earlier trials plus those of the trial itself, so it does not depend
on the order in which concurrent seeds finish, and :func:`apply_penalty` recomputes it over a
whole history at once for optimizers that refit on the current range.
"""

from __future__ import annotations

import hashlib
import math
import numbers
import time
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Protocol

from erahbo.validation import check_option

if TYPE_CHECKING:
    import numpy as np

__all__ = [
    "COUNTED",
    "POLICIES",
    "UNFINISHED",
    "FailurePolicy",
    "Penalizer",
    "RunOutcome",
    "RunRecorder",
    "TrialOutcome",
    "apply_penalty",
    "as_return",
    "outcomes_from_returns",
    "penalty_value",
    "retry_seed",
]

POLICIES = ("penalize", "retry", "exclude")
COUNTED = ("ok", "penalized")
UNFINISHED = ("running", "interrupted")  # journal statuses of runs cut by a crash


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
        Retries per seed for ``mode="retry"`` (default 2); ignored otherwise.
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


def penalty_value(worst: float, best: float) -> float:
    """Return counted for a penalized run, given the feasible returns seen so far.

    Parameters
    ----------
    worst, best : float
        Smallest and largest feasible (finite) return seen so far; NaN if there is none.

    Returns
    -------
    float
        ``worst - 1.5 * (best - worst)``; ``worst - |worst|`` (``worst - 1`` at 0) when
        ``best == worst``; -1.0 when there is no feasible return. See the module docstring.
    """
    if not (math.isfinite(worst) and math.isfinite(best)):
        return -1.0
    spread = best - worst
    if spread > 0:
        return worst - 1.5 * spread
    return worst - (abs(worst) if worst != 0 else 1.0)


class Penalizer:
    """Running worst/best of the feasible returns, from which penalties are computed.

    The study keeps one, updated with the raw return of every ``ok`` run after each trial; a
    resumed study rebuilds it from the journal in the same order.
    """

    def __init__(self, values: Iterable[float] = ()) -> None:
        self.worst = math.nan
        self.best = math.nan
        self.n = 0
        self.observe(values)

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
            self.n += 1

    def penalty(self, extra: Iterable[float] = ()) -> float:
        """Penalty over the returns seen so far plus ``extra`` (not stored)."""
        worst, best = self.worst, self.best
        for v in extra:
            v = float(v)
            if math.isfinite(v):
                worst = v if math.isnan(worst) else min(worst, v)
                best = v if math.isnan(best) else max(best, v)
        return penalty_value(worst, best)

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
    if finite.any():
        pen = penalty_value(float(y[finite].min()), float(y[finite].max()))
    else:
        pen = -1.0
    return np.where(finite, y, pen)


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


# --------------------------------------------------------------------------------------------
# Outcomes
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class RunOutcome:
    """One training run (one attempt of one seed slot of a trial).

    Attributes
    ----------
    slot : int
        Index of the seed in ``trial.seeds`` that this run serves.
    seed : int
        Seed actually used (a retry has a new seed).
    attempt : int
        0 for the trial's seed, 1, 2, ... for retries.
    status : str
        ``ok``, ``penalized``, ``retried`` or ``failed`` (see the module docstring).
    raw : float
        What the objective returned; NaN when the run failed.
    value_used : float
        Value counted by the optimizer: ``raw`` if ok, the penalty if penalized, NaN otherwise.
    error : str or None
        ``"Type: message"`` and the traceback tail, for failed runs.
    start, end : float
        Unix times at which the run started and ended on its worker.
    worker : str or None
        ``host:pid`` of the worker.
    rerun : bool
        The run repeats, with the same seed, a run that was in flight when the study crashed.
    """

    slot: int
    seed: int
    attempt: int
    status: str
    raw: float
    value_used: float
    error: str | None
    start: float
    end: float
    worker: str | None
    rerun: bool = False

    @property
    def counted(self) -> bool:
        """Whether the run counts as an observation (status ``ok`` or ``penalized``)."""
        return self.status in COUNTED


@dataclass
class TrialOutcome:
    """All runs of one trial and what to tell the optimizer.

    Attributes
    ----------
    runs : list of RunOutcome
        Every attempt (including ones finished before a resume), in the order they finished.
    returns : list of float
        (k,) value per seed slot to pass to ``optimizer.tell``: the return if ok, the penalty if
        penalized; for an excluded trial the raw returns (NaN where failed or skipped).
    raw : list of float
        (k,) raw return of the counted run per slot (NaN where failed or skipped).
    excluded : bool
        The configuration failed under ``failures="exclude"``: tell it with ``infeasible=True``.
    """

    runs: list[RunOutcome]
    returns: list[float]
    raw: list[float]
    excluded: bool = False

    def __iter__(self) -> Iterator[RunOutcome]:
        return iter(self.runs)

    def __len__(self) -> int:
        return len(self.runs)

    @property
    def counted(self) -> list[RunOutcome]:
        """The counted runs (one per slot unless excluded), in slot order."""
        return sorted((r for r in self.runs if r.counted), key=lambda r: r.slot)

    @property
    def n_failed(self) -> int:
        """Runs of the trial whose status is not ``ok`` (retried attempts included)."""
        return sum(r.status != "ok" for r in self.runs)


class RunRecorder(Protocol):
    """Receives runs as they start and end (the journal implements it).

    ``run_started`` must make the start durable before returning; ``run_finished`` likewise for
    the result. The token returned by ``run_started`` is handed back to ``run_finished``.
    """

    def run_started(self, slot: int, seed: int, attempt: int, rerun: bool) -> Any: ...

    def run_finished(self, token: Any, outcome: RunOutcome) -> None: ...


def as_return(value: Any) -> tuple[float, str | None]:
    """Check a return value: (float, None) if usable, (nan, reason) if not."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        # numpy scalars are numbers.Real; 0-d arrays are accepted through float()
        try:
            if getattr(value, "shape", None) == () and not isinstance(value, bool):
                value = float(value)
            else:
                raise TypeError
        except (TypeError, ValueError):
            return math.nan, (
                f"objective returned {type(value).__name__} {value!r:.80}, expected a float"
            )
    v = float(value)
    if math.isnan(v):
        return math.nan, "objective returned NaN"
    if math.isinf(v):
        return math.nan, f"objective returned {v}"
    return v, None



def outcomes_from_returns(
    seeds: Sequence[int],
    returns: Sequence[Any],
    policy: str | FailurePolicy = "penalize",
    *,
    penalizer: Penalizer | None = None,
    worker: str | None = None,
    infeasible: bool = False,
    errors: Sequence[str | None] | None = None,
) -> TrialOutcome:
    """Outcome of a trial whose seeds the user ran (ask/tell mode): non-finite returns fail.

    Under ``"retry"`` the user ran the seeds, so there is nothing to retry: failures are
    penalized. Under ``"exclude"`` any failure excludes the configuration.

    Parameters
    ----------
    seeds : sequence of int
        (k,) ``trial.seeds``.
    returns : sequence
        (k,) what the user reports per seed.
    policy : {"penalize", "retry", "exclude"} or FailurePolicy
    penalizer : Penalizer, optional
        Feasible returns of earlier trials (not modified here).
    worker : str, optional
        Recorded as the worker of every run.
    infeasible : bool
        The user declares the configuration infeasible (``tell(..., infeasible=True)``):
        whatever the policy, the trial is excluded, finite returns are ``ok`` runs and
        non-finite ones ``failed``.
    errors : sequence of str or None, optional
        (k,) why each failed run failed (e.g. the trainer's message), recorded instead of
        "objective returned NaN"; ignored for finite returns.
    """
    pol = FailurePolicy.coerce(policy)
    if len(returns) != len(seeds):
        raise ValueError(
            f"tell got {len(returns)} returns for a trial with {len(seeds)} seeds; "
            "pass one return per seed of trial.seeds, in order"
        )
    if errors is not None and len(errors) != len(returns):
        raise ValueError(
            f"tell got {len(errors)} errors for {len(returns)} returns; give one per return "
            "(None for the runs that did not fail)"
        )
    now = time.time()
    runs: list[RunOutcome] = []
    for slot, (s, v) in enumerate(zip(seeds, returns, strict=True)):
        raw, error = as_return(v)
        if error is None:
            status = "ok"
        else:
            status = "failed" if pol.mode == "exclude" or infeasible else "penalized"
            if errors is not None and errors[slot]:
                error = str(errors[slot])
        runs.append(
            RunOutcome(
                slot,
                int(s),
                0,
                status,
                raw,
                raw if error is None else math.nan,
                error,
                now,
                now,
                worker,
            )
        )
    excluded = infeasible or any(r.status == "failed" for r in runs)
    base = penalizer if penalizer is not None else Penalizer()
    pen = base.penalty(r.raw for r in runs if r.status == "ok")
    runs = [replace(r, value_used=pen) if r.status == "penalized" else r for r in runs]
    raw_list = [r.raw for r in runs]
    returns_out = raw_list if excluded else [r.value_used for r in runs]
    return TrialOutcome(runs=runs, returns=list(returns_out), raw=raw_list, excluded=excluded)
