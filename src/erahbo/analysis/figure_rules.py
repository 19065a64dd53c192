"""Rules every figure of a run follows: marks sized by seeds, integer count axes, robust limits.

- **Seeds as marker area** (:func:`seed_sizes`, :func:`seed_size_legend`): the area of a mark is
  proportional to its seeds ``k``, :data:`AREA_PER_SEED` square points a seed, scaled down
  together when the largest mark would pass :data:`MAX_AREA`; the legend shows two or three of
  the run's own seed counts at the sizes of the marks.
- **Counts on integer ticks** (:func:`integer_ticks`): an axis that counts seeds or runs never
  shows 2.5 seeds.
- **Robust limits** (:func:`robust_limits`, :func:`mark_outside`): one wild value (a diverged
  seed, a wide early bound) must not squash every other point into a line. A value is an
  outlier when the axis has at least :data:`MIN_VALUES` values, it lies more than
  :data:`FENCE` interquartile ranges outside the quartiles and it is among the most extreme
  1 % of the values on its side (at least one); the axis spans the other values (padded by 5 %
  of their span), and each outlier is drawn as a triangle at the axis edge with its value
  written next to it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

#: Square points of marker area per seed (``k = 1``: 14 pt², ``k = 20``: 280 pt²).
AREA_PER_SEED = 14.0
#: The largest marker area: beyond ``MAX_AREA / AREA_PER_SEED`` seeds all marks shrink together.
MAX_AREA = 400.0
#: Tukey's fence for robust limits: a value this many IQRs beyond a quartile may be cut.
FENCE = 3.0
#: The share of the values (on each side, at least one) that may be drawn at the edge.
OUTSIDE_SHARE = 0.01
#: Fewest values on an axis for any of them to be judged an outlier.
MIN_VALUES = 10
#: Padding of a robust range, as a share of the values' span.
PAD = 0.05


def seed_sizes(k: Any, k_largest: float | None = None) -> np.ndarray:
    """Marker areas (pt², for ``scatter(s=...)``) proportional to the seeds ``k``.

    Parameters
    ----------
    k : array-like
        Seeds of each mark.
    k_largest : float, optional
        The largest ``k`` of the figure (default: ``max(k)``); with more than
        ``MAX_AREA / AREA_PER_SEED`` seeds, every area is scaled so that this one is
        :data:`MAX_AREA`.

    Returns
    -------
    numpy.ndarray
        Areas, ``area / k`` the same for every mark.
    """
    k = np.asarray(k, dtype=float)
    top = float(np.nanmax(k)) if k_largest is None and k.size else float(k_largest or 1.0)
    per_seed = min(AREA_PER_SEED, MAX_AREA / max(top, 1.0))
    return per_seed * np.maximum(k, 0.0)


def reference_seeds(k: Any) -> list[int]:
    """Two or three seed counts of the run to show in a size legend: the fewest, the most, and
    one in between when the run has one (the value nearest the geometric middle)."""
    ks = np.unique(np.asarray(k, dtype=float)[np.isfinite(np.asarray(k, dtype=float))])
    ks = ks[ks > 0].astype(int)
    if ks.size <= 3:
        return [int(x) for x in ks]
    lo, hi = int(ks[0]), int(ks[-1])
    inner = ks[1:-1]
    mid = int(inner[np.argmin(np.abs(np.log(inner) - 0.5 * (np.log(lo) + np.log(hi))))])
    return [lo, mid, hi]


def seed_size_legend(k: Any, color: str, k_largest: float | None = None,
                     marker: str = "o") -> list[Any]:
    """Legend handles for :func:`reference_seeds` of ``k``, each at its mark's area.

    A ``Line2D`` marker size is a diameter in points, a scatter size an area in pt²: the
    handle's ``markersize`` is the square root of :func:`seed_sizes`.
    """
    from matplotlib.lines import Line2D

    ks = reference_seeds(k)
    top = k_largest if k_largest is not None else (max(ks) if ks else 1.0)
    sizes = seed_sizes(ks, top)
    return [Line2D([], [], ls="none", marker=marker, color=color,
                   markersize=float(np.sqrt(s)), label=f"{kk} seed{'s' if kk != 1 else ''}")
            for kk, s in zip(ks, sizes, strict=True)]


def integer_ticks(axis: Any) -> None:
    """Ticks of a count axis (seeds, runs) at whole numbers only."""
    from matplotlib.ticker import MaxNLocator

    axis.set_major_locator(MaxNLocator(integer=True))


def robust_limits(values: Any, *, keep: Any = ()) -> tuple[float, float] | None:
    """Axis limits spanning ``values`` except their outliers (the rule of the module), padded.

    Parameters
    ----------
    values : array-like
        Every value drawn on the axis (NaN and inf ignored).
    keep : array-like
        Values the axis must show whatever they are (a true curve of the task, say).

    Returns
    -------
    (float, float) or None
        ``(low, high)``; None when there is no finite value.
    """
    v = np.asarray(values, dtype=float).ravel()
    v = np.sort(v[np.isfinite(v)])
    kept = np.asarray(keep, dtype=float).ravel()
    kept = kept[np.isfinite(kept)]
    if v.size == 0 and kept.size == 0:
        return None
    lo, hi = _inner_range(v) if v.size else (np.inf, -np.inf)
    if kept.size:
        lo, hi = min(lo, float(kept.min())), max(hi, float(kept.max()))
    span = hi - lo
    pad = PAD * span if span > 0 else 0.05 * max(abs(lo), 1.0)
    return lo - pad, hi + pad


def _inner_range(v: np.ndarray) -> tuple[float, float]:
    """The smallest and largest of the sorted ``v`` that are not outliers."""
    q1, q3 = np.percentile(v, [25.0, 75.0])
    iqr = q3 - q1
    if not iqr > 0 or v.size < MIN_VALUES:  # too few to tell, or half the values equal
        return float(v[0]), float(v[-1])
    most = max(1, int(OUTSIDE_SHARE * v.size))
    n_low = min(most, int(np.searchsorted(v, q1 - FENCE * iqr, side="left")))
    n_high = min(most, v.size - int(np.searchsorted(v, q3 + FENCE * iqr, side="right")))
    return float(v[n_low]), float(v[v.size - 1 - n_high])


def outside(values: Any, limits: tuple[float, float] | None) -> np.ndarray:
    """Mask of the finite ``values`` outside ``limits``."""
    v = np.asarray(values, dtype=float)
    if limits is None:
        return np.zeros(v.shape, dtype=bool)
    return np.isfinite(v) & ((v < limits[0]) | (v > limits[1]))


def mark_outside(ax: Any, pos: Any, values: Any, limits: tuple[float, float] | None, *,
                 axis: str = "y", color: Any = "black", label: str | None = None) -> int:
    """Draw the ``values`` outside ``limits`` as triangles at the axis edge, value written.

    Parameters
    ----------
    ax : matplotlib.axes.Axes
        Its limits on ``axis`` must already be ``limits``.
    pos : array-like
        Each value's position on the other axis.
    values : array-like
        The values on ``axis``.
    limits : (float, float) or None
    axis : {"y", "x"}
    color : colour or sequence of colours
        One per value, or one for all (a name or an RGB(A) tuple).
    label : str, optional
        Legend entry of the triangles (default: ``"outside the axis (value written)"``).

    Returns
    -------
    int
        How many values were drawn at the edge (the triangles are ``ax.collections`` with
        ``gid == "outside"``).
    """
    v = np.asarray(values, dtype=float)
    other = sorted(ax.get_xlim() if axis == "y" else ax.get_ylim())
    p = np.clip(np.asarray(pos, dtype=float), *other)  # outside on both axes: in the corner
    out = outside(v, limits)
    if not out.any() or limits is None:
        return 0
    from matplotlib.colors import is_color_like, to_rgba_array

    lo, hi = limits
    inset = 0.015 * (hi - lo)
    rgba = to_rgba_array([color] * v.size if is_color_like(color) else list(color))[out]
    edge = np.where(v[out] < lo, lo + inset, hi - inset)
    markers = np.where(v[out] < lo, "v" if axis == "y" else "<", "^" if axis == "y" else ">")
    text = label if label is not None else "outside the axis (value written)"
    first = True
    for m in ("v", "^", "<", ">"):
        sel = markers == m
        if not sel.any():
            continue
        xy = (p[out][sel], edge[sel]) if axis == "y" else (edge[sel], p[out][sel])
        sc = ax.scatter(*xy, marker=m, s=60, facecolors=rgba[sel], edgecolors="black",
                        linewidths=0.6, zorder=6, clip_on=False,
                        label=text if first else None)
        sc.set_gid("outside")
        first = False
    far = (p[out] - other[0]) > 0.8 * (other[1] - other[0])  # near the far end: text inside
    _write_values(ax, p[out], v[out], edge, axis, far)
    return int(out.sum())


def _write_values(ax: Any, pos: np.ndarray, vals: np.ndarray, edge: np.ndarray, axis: str,
                  far: np.ndarray) -> None:
    """The values of the edge marks: each one (up to three a side), else a count and the most
    extreme; written on the side of the mark towards the middle of the axes."""
    for below in (True, False):
        side = vals < edge if below else vals > edge
        if not side.any():
            continue
        idx = np.flatnonzero(side)
        if idx.size <= 3:
            items = [(i, f"{vals[i]:.3g}") for i in idx]
        else:
            j = int(idx[np.argmin(vals[idx])] if below else idx[np.argmax(vals[idx])])
            items = [(j, f"{idx.size} {'below' if below else 'above'}, "
                      f"{'min' if below else 'max'} {vals[j]:.3g}")]
        for i, text in items:
            if axis == "y":  # beside the mark, inward from the top or bottom edge
                xy, off = (pos[i], edge[i]), (-5 if far[i] else 5, 3 if below else -3)
                ha, va = ("right" if far[i] else "left"), ("bottom" if below else "top")
            else:  # above or below the mark, inward from the left or right edge
                xy, off = (edge[i], pos[i]), (5 if below else -5, -5 if far[i] else 5)
                ha, va = ("left" if below else "right"), ("top" if far[i] else "bottom")
            ax.annotate(text, xy, xytext=off, textcoords="offset points", fontsize=7, ha=ha,
                        va=va, annotation_clip=False, gid="outside")


def robust_axis(ax: Any, values: Any, *, axis: str = "y", keep: Any = ()) -> tuple[float,
                                                                                    float] | None:
    """Set ``ax``'s ``axis`` limits by :func:`robust_limits` and return them."""
    limits = robust_limits(values, keep=keep)
    if limits is not None:
        (ax.set_ylim if axis == "y" else ax.set_xlim)(*limits)
    return limits


def concat(*arrays: Sequence[float] | np.ndarray) -> np.ndarray:
    """The finite values of several arrays, as one flat array."""
    v = np.concatenate([np.asarray(a, dtype=float).ravel() for a in arrays]) if arrays \
        else np.array([])
    return v[np.isfinite(v)]
