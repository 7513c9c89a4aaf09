"""2D predicates: signed triangle area and segment-segment intersection.

Ericson, *Real-Time Collision Detection* (RTCD), section 5.1.9.1 (seed 000):
the intersection of two 2D segments from the signs of four triangle areas.
Inputs are ``(..., 2)`` and broadcast.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ._jit import njit
from ._validate import broadcast_batch, unbatch

__all__ = ["signed_2d_tri_area", "intersect_segment_segment_2d"]


@njit(inline="always")
def signed_2d_tri_area_t(ax, ay, bx, by, cx, cy):
    return (ax - cx) * (by - cy) - (ay - cy) * (bx - cx)


def signed_2d_tri_area(a: ArrayLike, b: ArrayLike, c: ArrayLike) -> float | NDArray[np.float64]:
    """Twice the signed area of the 2D triangle ``abc`` (RTCD Signed2DTriArea).

    Positive when ``a, b, c`` turn counter-clockwise, negative when clockwise,
    zero when collinear. Like the book, the value is twice the area: it is the
    z component of ``(a - c) x (b - c)``, the quantity the predicates compare.

    Parameters
    ----------
    a, b, c : (..., 2) float64

    Returns
    -------
    area2 : (...,) float64
    """
    (a, b, c), lead = broadcast_batch([("a", a, (2,)), ("b", b, (2,)), ("c", c, (2,))])
    out = (a[:, 0] - c[:, 0]) * (b[:, 1] - c[:, 1]) - (a[:, 1] - c[:, 1]) * (b[:, 0] - c[:, 0])
    return unbatch(out, lead)


@njit
def intersect_segment_segment_2d_t(ax, ay, bx, by, cx, cy, dx, dy):
    """RTCD 5.1.9.1 (Test2DSegmentSegment) with the collinear case completed.

    Returns ``(hit, t)`` with the point at ``a + t (b - a)``. The book reports
    collinear segments as non-intersecting; here collinear overlapping
    segments hit, at the first point of ``ab`` inside ``cd``. Touching at an
    end point counts as a hit (closed segments).
    """
    a1 = signed_2d_tri_area_t(ax, ay, bx, by, dx, dy)
    a2 = signed_2d_tri_area_t(ax, ay, bx, by, cx, cy)
    if a1 != 0.0 and a2 != 0.0 and (a1 > 0.0) == (a2 > 0.0):
        return False, 0.0
    a3 = signed_2d_tri_area_t(cx, cy, dx, dy, ax, ay)
    # The book derives a4 = a3 + a2 - a1 (exact in real arithmetic); computing
    # it directly keeps the sign exact when b lies on cd.
    a4 = signed_2d_tri_area_t(cx, cy, dx, dy, bx, by)
    if a1 != a2 and not (a3 != 0.0 and a4 != 0.0 and (a3 > 0.0) == (a4 > 0.0)):
        if a3 == a4:  # both zero after rounding: a and b both touch cd
            return True, 0.0
        return True, min(max(a3 / (a3 - a4), 0.0), 1.0)
    if a1 != 0.0 or a2 != 0.0:
        return False, 0.0
    # c and d on the line of ab to rounding (a3 may still be a rounding-level
    # nonzero): intersect the parameter intervals along ab.
    ux = bx - ax
    uy = by - ay
    uu = ux * ux + uy * uy
    if uu == 0.0:
        # ab is a point: it hits if it lies on cd.
        wx = dx - cx
        wy = dy - cy
        ww = wx * wx + wy * wy
        if ww == 0.0:
            return ax == cx and ay == cy, 0.0
        s = ((ax - cx) * wx + (ay - cy) * wy) / ww
        return a3 == 0.0 and 0.0 <= s <= 1.0, 0.0
    tc = ((cx - ax) * ux + (cy - ay) * uy) / uu
    td = ((dx - ax) * ux + (dy - ay) * uy) / uu
    lo = min(tc, td)
    hi = max(tc, td)
    if hi < 0.0 or lo > 1.0:
        return False, 0.0
    return True, max(lo, 0.0)


@njit
def _segment_batch(a, b, c, d, hit, t, point):
    for i in range(a.shape[0]):
        h, ti = intersect_segment_segment_2d_t(a[i, 0], a[i, 1], b[i, 0], b[i, 1],
                                               c[i, 0], c[i, 1], d[i, 0], d[i, 1])
        hit[i] = h
        t[i] = ti
        point[i, 0] = a[i, 0] + ti * (b[i, 0] - a[i, 0])
        point[i, 1] = a[i, 1] + ti * (b[i, 1] - a[i, 1])


def intersect_segment_segment_2d(a: ArrayLike, b: ArrayLike, c: ArrayLike, d: ArrayLike) -> tuple[
        bool | NDArray[np.bool_], float | NDArray[np.float64], NDArray[np.float64]]:
    """Intersection of the 2D segments ``ab`` and ``cd``.

    RTCD 5.1.9.1: the segments intersect when ``c`` and ``d`` lie on different
    sides of ``ab`` and ``a`` and ``b`` on different sides of ``cd``; the
    parameter along ``ab`` follows from the same areas, ``t = a3 / (a3 - a4)``.
    Closed segments: touching counts. Collinear overlapping segments hit at
    the first point of ``ab`` that lies on ``cd``.

    Parameters
    ----------
    a, b, c, d : (..., 2) float64

    Returns
    -------
    hit : (...,) bool
    t : (...,) float64
        Parameter along ``ab`` of the intersection (0 where there is none).
    point : (..., 2) float64
        ``a + t (b - a)``, meaningful where ``hit``.
    """
    (a, b, c, d), lead = broadcast_batch(
        [("a", a, (2,)), ("b", b, (2,)), ("c", c, (2,)), ("d", d, (2,))]
    )
    n = a.shape[0]
    hit = np.empty(n, dtype=np.bool_)
    t = np.empty(n)
    point = np.empty((n, 2))
    _segment_batch(a, b, c, d, hit, t, point)
    if lead == ():
        return bool(hit[0]), float(t[0]), point[0]
    return unbatch(hit, lead), unbatch(t, lead), unbatch(point, lead)
