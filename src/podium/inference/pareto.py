"""Pareto fronts of throughput per GPU against interactivity, and interpolation along them.

Both axes are "higher is better". A point is on the front when no other point is at least as
good on both axes and strictly better on one. Exact duplicates are kept once (the first seen).
Input order does not matter: a sweep whose throughput is not monotone in concurrency gives the
same front as the sorted curve.

Interpolation at a target interactivity runs along the front only (sorted by interactivity,
throughput strictly falling). It uses the Fritsch–Carlson monotone cubic (PCHIP): between two
front points the interpolant stays between their throughputs, so it never invents a bump the
data does not show. ``method="linear"`` gives piecewise-linear interpolation instead. Outside
the front's interactivity range the answer is ``None`` with a reason: podium does not extrapolate.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Generic, Literal, TypeVar

T = TypeVar("T")

InterpolationMethod = Literal["pchip", "linear"]


@dataclass(frozen=True)
class FrontPoint(Generic[T]):
    """A point on (or offered to) a front: x = interactivity, y = throughput per GPU."""

    x: float
    y: float
    item: T | None = field(default=None, compare=False)


@dataclass(frozen=True)
class Interpolated:
    """Value at a target x, or ``None`` with the reason."""

    x: float
    y: float | None
    reason: str | None = None
    method: str | None = None


def _usable(p: FrontPoint) -> bool:
    return all(v is not None and isinstance(v, (int, float)) and math.isfinite(v) for v in (p.x, p.y)) and (
        p.x > 0 and p.y >= 0
    )


def pareto_front(points: Sequence[FrontPoint[T]]) -> list[FrontPoint[T]]:
    """Points not beaten on both axes, sorted by x ascending (y then strictly descending).

    Points with a missing, non-finite or non-positive interactivity (or negative throughput)
    cannot be placed on the chart and are left out.
    """
    usable = [p for p in points if _usable(p)]
    # Highest x first; among equal x, highest y first. A point joins the front only when its y
    # beats every y seen so far (all of which have x at least as high).
    ordered = sorted(usable, key=lambda p: (-p.x, -p.y))
    front: list[FrontPoint[T]] = []
    best_y = -math.inf
    for p in ordered:
        if p.y > best_y:
            front.append(p)
            best_y = p.y
    front.reverse()
    return front


def _pchip_slopes(xs: list[float], ys: list[float]) -> list[float]:
    """Fritsch–Carlson derivative estimates (as in SciPy's PchipInterpolator)."""
    n = len(xs)
    h = [xs[i + 1] - xs[i] for i in range(n - 1)]
    delta = [(ys[i + 1] - ys[i]) / h[i] for i in range(n - 1)]
    if n == 2:
        return [delta[0], delta[0]]
    d = [0.0] * n
    for k in range(1, n - 1):
        if delta[k - 1] * delta[k] <= 0:
            d[k] = 0.0
        else:
            w1 = 2 * h[k] + h[k - 1]
            w2 = h[k] + 2 * h[k - 1]
            d[k] = (w1 + w2) / (w1 / delta[k - 1] + w2 / delta[k])

    def end(h0: float, h1: float, m0: float, m1: float) -> float:
        v = ((2 * h0 + h1) * m0 - h0 * m1) / (h0 + h1)
        if math.copysign(1, v) != math.copysign(1, m0):
            return 0.0
        if math.copysign(1, m0) != math.copysign(1, m1) and abs(v) > abs(3 * m0):
            return 3 * m0
        return v

    d[0] = end(h[0], h[1], delta[0], delta[1])
    d[-1] = end(h[-1], h[-2], delta[-1], delta[-2])
    return d


def interpolate(front: Sequence[FrontPoint], x: float, method: InterpolationMethod = "pchip") -> Interpolated:
    """Throughput at interactivity ``x`` along ``front`` (as returned by :func:`pareto_front`)."""
    if not front:
        return Interpolated(x, None, "no usable points on the front")
    xs = [p.x for p in front]
    ys = [p.y for p in front]
    if any(b <= a for a, b in itertools.pairwise(xs)):
        raise ValueError("front must be sorted by strictly increasing x (use pareto_front)")
    lo, hi = xs[0], xs[-1]
    if x < lo or x > hi:
        if len(front) == 1:
            reason = f"outside the front: a single point at interactivity {lo:.4g}"
        else:
            reason = f"outside the front: interactivity spans {lo:.4g} to {hi:.4g}"
        return Interpolated(x, None, reason)
    for xi, yi in zip(xs, ys, strict=True):
        if x == xi:
            return Interpolated(x, yi, None, "exact")
    # lo < x < hi here, so there are at least two points.
    k = max(i for i in range(len(xs) - 1) if xs[i] < x)
    h = xs[k + 1] - xs[k]
    t = (x - xs[k]) / h
    if method == "linear":
        return Interpolated(x, ys[k] + t * (ys[k + 1] - ys[k]), None, "linear")
    d = _pchip_slopes(xs, ys)
    h00 = (1 + 2 * t) * (1 - t) ** 2
    h10 = t * (1 - t) ** 2
    h01 = t * t * (3 - 2 * t)
    h11 = t * t * (t - 1)
    y = h00 * ys[k] + h10 * h * d[k] + h01 * ys[k + 1] + h11 * h * d[k + 1]
    return Interpolated(x, y, None, "pchip")
