"""What a trial's runs came to: run and trial outcomes, the check of a return, told returns.

The records of the failure rule (:mod:`erahbo.optimizer.failure`): a :class:`RunOutcome` per
training run (one attempt of one seed slot) with its status, and a :class:`TrialOutcome`, all
runs of a trial and what the optimizer is told. :func:`outcomes_from_returns` builds the
outcome of a trial whose seeds the user ran (ask/tell); :func:`erahbo.runtime.evaluate.evaluate`
builds it while it runs the seeds itself.
"""

from __future__ import annotations

import math
import numbers
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace
from typing import Any

from erahbo.optimizer.failure import COUNTED, MAX_ABS_RETURN, FailurePolicy, Penalizer

__all__ = [
    "RunOutcome",
    "TrialOutcome",
    "as_return",
    "outcomes_from_returns",
    "tell_values",
    "too_large_message",
]


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
    if abs(v) > MAX_ABS_RETURN:
        return math.nan, too_large_message(v)
    return v, None


def too_large_message(v: float) -> str:
    """Why a finite return beyond :data:`MAX_ABS_RETURN` counts as a failed run."""
    return (
        f"objective returned {v:.6g}, beyond +-{MAX_ABS_RETURN:.0e}: its square (in the sample "
        "variance) would overflow; rescale the returns (e.g. divide by the return range)"
    )



def tell_values(returns: Any, trial_id: int | None = None) -> list[float]:
    """The returns a user tells for one trial, as floats (None: a failed run, NaN).

    Raises
    ------
    ValueError
        For a string, or an entry that is not a number, naming the entry and the fix.
    """
    which = "" if trial_id is None else f" of trial {trial_id}"
    if isinstance(returns, str | bytes):
        raise ValueError(
            f"tell: returns{which} must be numbers, one per seed of trial.seeds (a list), got "
            f"the {type(returns).__name__} {returns!r:.60}; report a failed run as "
            "float('nan') or None"
        )
    if isinstance(returns, list | tuple):
        items = list(returns)
    else:
        import numpy as np

        items = np.atleast_1d(np.asarray(returns, dtype=object)).ravel().tolist()
    out = []
    for i, v in enumerate(items):
        if v is None:
            out.append(math.nan)
            continue
        try:
            if isinstance(v, str | bytes):
                raise TypeError
            out.append(float(v))
        except (TypeError, ValueError):
            raise ValueError(
                f"tell: return {i}{which} is {type(v).__name__} {v!r:.60}, not a number; give "
                "one float per seed (float('nan') or None for a failed run)"
            ) from None
    return out


def outcomes_from_returns(
    seeds: Sequence[int],
    returns: Sequence[Any],
    policy: str | FailurePolicy = "penalize",
    *,
    penalizer: Penalizer | None = None,
    worker: str | None = None,
    infeasible: bool = False,
    errors: Sequence[str | None] | None = None,
    own: Sequence[float] = (),
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
        The study's returns so far (not modified here): the penalty and the outlier verdicts
        (while it has no scale, the trial's returns are judged against each other); none: no
        return is screened.
    worker : str, optional
        Recorded as the worker of every run.
    infeasible : bool
        The user declares the configuration infeasible (``tell(..., infeasible=True)``):
        whatever the policy, the trial is excluded, finite returns are ``ok`` runs and
        non-finite ones ``failed``.
    errors : sequence of str or None, optional
        (k,) why each failed run failed (e.g. the trainer's message), recorded instead of
        "objective returned NaN"; ignored for finite returns.
    own : sequence of float
        The values the trial's configuration counted before it (its data): a penalty is at
        most their lowest (:func:`penalty_value`).
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
    base = penalizer if penalizer is not None else Penalizer()
    checked = [as_return(v) for v in returns]
    judge = penalizer is not None and base.center() is None  # no scale yet: judge each other
    runs: list[RunOutcome] = []
    for slot, (s, (raw, error)) in enumerate(zip(seeds, checked, strict=True)):
        if error is None and judge:
            others = [x for i, (x, e) in enumerate(checked) if i != slot and e is None]
            error = base.screen_among(raw, others)
        elif error is None:
            error = base.screen(raw)  # an outlying return is a failed run
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
    pen = base.penalty((r.raw for r in runs if r.status == "ok"), own=own)
    runs = [replace(r, value_used=pen) if r.status == "penalized" else r for r in runs]
    raw_list = [r.raw for r in runs]
    returns_out = raw_list if excluded else [r.value_used for r in runs]
    return TrialOutcome(runs=runs, returns=list(returns_out), raw=raw_list, excluded=excluded)
