"""Outlying returns: a finite return far off the scale of the study counts as a failed run.

An RL run that diverges can return a finite value a million times off the scale of the others
(-1e6 among returns in [-1, 2]). Counted as it is, one such run sets its configuration's
sample variance to ~1e11; the variance GP's targets and ``rho_max^2`` follow and every MV
estimate of the study leaves the range of the returns (issue 27: ``incumbent_mv`` = +1.3e10).
Such a run is treated as a **failed run** instead: its error reads ``outlier: returned ...``,
and the study's failure policy handles it like an exception or a NaN (``"retry"``: re-run with
a new seed, and counted at the penalty if the retries are outlying or fail too;
``"penalize"``: counted at the penalty, the lower quartile of the returns (at most its
configuration's lowest value), so it lowers its
configuration's mean and raises its variance by an amount on the returns' own scale;
``"exclude"``: the configuration is dropped). The raw value stays in the journal.

A return ``v`` is outlying when

    |v - median| > OUTLIER_SCALES * scale

over the returns of the study's told trials (not those of the trial itself, so the verdict
does not depend on the order in which a trial's runs finish; the first trial is the exception
below): the ``ok`` returns and the returns of earlier runs that failed as outliers.
``scale`` is the largest of

* the robust standard deviation ``1.4826 * MAD`` (when more than half of the returns tie at
  the median, the median absolute deviation of the others);
* the median absolute return ``median |v|`` (so that a study whose returns tie at 500, or sit
  near one value, still has a scale);
* from :data:`QUANTILE_RETURNS` returns on, ``IQR / 1.349``;
* from :data:`QUANTILE_RETURNS` ``ok`` returns on, ``(q90 - q10) / 2.563`` of the ``ok``
  returns only (both spreads are the standard deviation for normal returns): a study that
  spends most of its runs on a few good configurations keeps the spread of its exploration in
  the scale.

Median, MAD and IQR break down only when a quarter to a half of the returns are off the scale,
so diverged runs that make up a few per cent of a study do not move them. Counting the returns
of flagged runs in them makes the rule correct itself: a mode of legitimate returns flagged
while the study's scale was still narrow (every run so far did nothing and returned ~1e-4;
then one reaches the goal, +97) becomes part of the scale once it is a quarter of the
returns. The q10-q90 spread, which breaks down at 10 %, sees ``ok`` returns only.

:data:`OUTLIER_SCALES` is 1e5. On the stored ARLBench tables (8 tasks; ERAHBO replays of 3 x
400 runs, and 5000 random pools of 2-19 returns followed by one more) no legitimate return came
within a factor 1000 of it, except on ``ppo_cc_continuous_mountain_car``, whose returns are
-99.9 (never reaches the goal), ~-1e-4 (does nothing) or ~+97: there the largest distance in the
replays was 3.1e4 scales, 0.16 % of the random pools put the next return beyond the rule, and 2
of 40 replays of 200 runs flagged 1 or 2 runs (a -99.9 after a few ~-1e-4 returns) before the
scale widened. A return 1e4 scales off is *not* an outlier: it enters the statistics as it
is.

Before the study has a scale (fewer than :data:`MIN_RETURNS` returns: its first trial), a
trial's returns are judged against each other once all its seeds have run
(:meth:`erahbo.optimizer.failure.Penalizer.screen_among`): each return against the others and
the study's one return, if any, with ``min_returns=1`` (a single other return sets the scale
by its absolute value), so of two returns only the one far larger in magnitude can be an
outlier, whichever seed slot it is in. A diverged run of the very first trial is thus a failed
run like any later one (issue 27: before, the first trial had no verdict, and the 7 % of
studies whose first trial held a -1e6 kept it). Returns that are all off the scale together
(every seed of the first trial diverged) still count as they are
(:func:`erahbo.diagnostics.diagnose` names them once later returns set a scale).

``docs/robustness.md`` ("Heavy tails and frequent sporadic failures") has the measurements.
"""

from __future__ import annotations

import math
from collections.abc import Iterable

import numpy as np

__all__ = [
    "MIN_RETURNS",
    "OUTLIER_PREFIX",
    "OUTLIER_SCALES",
    "QUANTILE_RETURNS",
    "outlier_error",
    "return_scale",
]

OUTLIER_SCALES = 1e5  # a return further than this many scales from the median is an outlier
MIN_RETURNS = 2  # fewer returns in the study: no verdict
QUANTILE_RETURNS = 20  # from this many returns on, the interquartile range enters the scale
OUTLIER_PREFIX = "outlier: "  # how the error of an outlying run begins
_MAD_TO_STD = 1.4826  # 1 / Phi^-1(3/4): the MAD of normal returns times this is their std
_IQR_TO_STD = 1.3490  # q75 - q25 of a standard normal
_Q1090_TO_STD = 2.5631  # q90 - q10 of a standard normal


def _finite(values: Iterable[float]) -> np.ndarray:
    v = np.asarray([float(x) for x in values], dtype=float)  # (n,)
    return v[np.isfinite(v)]


def return_scale(
    values: Iterable[float], outlying: Iterable[float] = (), min_returns: int = MIN_RETURNS
) -> tuple[float, float] | None:
    """``(median, scale)`` of the study's returns (module docstring); None without a scale.

    Parameters
    ----------
    values : iterable of float
        (n,) returns counted as they are (``ok`` runs); non-finite entries are ignored.
    outlying : iterable of float
        (m,) finite returns of runs that failed as outliers: they enter the median and the
        robust spreads (MAD, median absolute return, IQR), not the q10-q90 spread, whose
        breakdown point (10 %) a run of diverged returns could reach.
    min_returns : int
        Fewer finite values than this: no scale (:data:`MIN_RETURNS`; 1 to judge a trial's
        return against a single other one, whose absolute value is then the scale).

    Returns
    -------
    (float, float) or None
        None with fewer than ``min_returns`` finite values or when every one of them is 0.
    """
    ok = _finite(values)  # (n,)
    v = np.concatenate([ok, _finite(outlying)])  # (n + m,)
    if v.size < max(min_returns, 1):
        return None
    med = float(np.median(v))
    dev = np.abs(v - med)  # (n + m,)
    mad = float(np.median(dev))
    if mad == 0.0 and (dev > 0).any():  # more than half tie at the median
        mad = float(np.median(dev[dev > 0]))
    scale = max(_MAD_TO_STD * mad, float(np.median(np.abs(v))))
    if v.size >= QUANTILE_RETURNS:
        q25, q75 = np.quantile(v, [0.25, 0.75]).tolist()
        scale = max(scale, (q75 - q25) / _IQR_TO_STD)
    if ok.size >= QUANTILE_RETURNS:
        q10, q90 = np.quantile(ok, [0.1, 0.9]).tolist()
        scale = max(scale, (q90 - q10) / _Q1090_TO_STD)
    return (med, scale) if scale > 0 else None


def outlier_error(raw: float, center: tuple[float, float] | None) -> str | None:
    """The error of a run whose finite return ``raw`` is outlying, else None.

    Parameters
    ----------
    raw : float
        The run's return.
    center : (float, float) or None
        ``(median, scale)`` of the study's returns (:func:`return_scale`); None: no verdict.
    """
    if center is None or not math.isfinite(raw):
        return None
    med, scale = center
    ratio = abs(raw - med) / scale
    if ratio <= OUTLIER_SCALES:
        return None
    return (
        f"{OUTLIER_PREFIX}returned {raw:.6g}, {ratio:.2g} times the scale of the study's "
        f"returns ({scale:.3g}) away from their median ({med:.6g}); counted as a failed run "
        f"(more than {OUTLIER_SCALES:.0e} scales off: a diverged run?)"
    )
