"""Closest points between two primitives: lines, segments, segment and triangle.

Ericson, *Real-Time Collision Detection* (RTCD), sections 5.1.8 to 5.1.10
(seed 000). Two triangles are in :mod:`collision.triangle`. All inputs are ``(..., 3)`` and broadcast; each result has the
broadcast leading shape.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray

from . import _vec as v
from ._jit import njit
from ._validate import broadcast_batch, unbatch
from .closest_point import closest_pt_point_triangle_t

__all__ = [
    "closest_pt_line_line",
    "closest_pt_segment_segment",
    "closest_pt_segment_triangle",
]

# Two directions count as parallel when |d1 x d2|^2 <= PARALLEL_EPS * |d1|^2 |d2|^2,
# i.e. the sine of their angle is below ~1e-7. Below that the general formula
# loses all its digits; any point on the overlap is then as good an answer.
PARALLEL_EPS = 1e-14


@njit
def closest_pt_line_line_t(p1, q1, p2, q2):
    """RTCD 5.1.8 on tuples: lines ``p1 + s d1`` and ``p2 + t d2``; ``(c1, c2, s, t)``."""
    d1 = v.sub(q1, p1)
    d2 = v.sub(q2, p2)
    r = v.sub(p1, p2)
    a = v.dot(d1, d1)
    e = v.dot(d2, d2)
    b = v.dot(d1, d2)
    c = v.dot(d1, r)
    f = v.dot(d2, r)
    denom = a * e - b * b
    if a == 0.0 and e == 0.0:
        s = 0.0
        t = 0.0
    elif a == 0.0:
        s = 0.0
        t = f / e
    elif e == 0.0:
        t = 0.0
        s = -c / a
    elif denom > PARALLEL_EPS * a * e:
        s = (b * f - c * e) / denom
        t = (a * f - b * c) / denom
    else:  # parallel: every s is a closest point; take s = 0
        s = 0.0
        t = f / e
    return v.madd(p1, d1, s), v.madd(p2, d2, t), s, t


@njit
def closest_pt_segment_segment_t(p1, q1, p2, q2):
    """RTCD 5.1.9 (ClosestPtSegmentSegment) on tuples; ``(c1, c2, s, t)``.

    Zero-length segments are tested exactly (``a == 0``) instead of against the
    book's EPSILON: the formulas stay exact for tiny but non-zero segments.
    """
    d1 = v.sub(q1, p1)
    d2 = v.sub(q2, p2)
    r = v.sub(p1, p2)
    a = v.dot(d1, d1)
    e = v.dot(d2, d2)
    f = v.dot(d2, r)
    if a == 0.0 and e == 0.0:
        return p1, p2, 0.0, 0.0
    if a == 0.0:
        s = 0.0
        t = v.clamp(f / e, 0.0, 1.0)
    else:
        c = v.dot(d1, r)
        if e == 0.0:
            t = 0.0
            s = v.clamp(-c / a, 0.0, 1.0)
        else:
            b = v.dot(d1, d2)
            denom = a * e - b * b
            if denom > PARALLEL_EPS * a * e:
                s = v.clamp((b * f - c * e) / denom, 0.0, 1.0)
            else:
                s = 0.0
            tnom = b * s + f
            if tnom < 0.0:
                t = 0.0
                s = v.clamp(-c / a, 0.0, 1.0)
            elif tnom > e:
                t = 1.0
                s = v.clamp((b - c) / a, 0.0, 1.0)
            else:
                t = tnom / e
    return v.madd(p1, d1, s), v.madd(p2, d2, t), s, t


@njit
def intersect_segment_triangle_t(p, q, a, b, c):
    """Crossing of segment ``pq`` with the plane of ``abc`` inside the triangle.

    RTCD 5.3.6 (IntersectSegmentTriangle) without back-face culling. Returns
    ``(hit, point)``; a segment lying in the plane reports no hit (its contacts
    are found by the edge queries of the caller).
    """
    n = v.cross(v.sub(b, a), v.sub(c, a))
    dp = v.dot(n, v.sub(p, a))
    dq = v.dot(n, v.sub(q, a))
    if (dp > 0.0 and dq > 0.0) or (dp < 0.0 and dq < 0.0) or dp == dq:
        return False, p
    t = dp / (dp - dq)
    x = v.madd(p, v.sub(q, p), t)
    # Inside test by the signs of the sub-triangle normals against n (closed).
    e0 = v.dot(n, v.cross(v.sub(b, a), v.sub(x, a)))
    e1 = v.dot(n, v.cross(v.sub(c, b), v.sub(x, b)))
    e2 = v.dot(n, v.cross(v.sub(a, c), v.sub(x, c)))
    if e0 >= 0.0 and e1 >= 0.0 and e2 >= 0.0:
        return True, x
    return False, x


@njit
def closest_pt_segment_triangle_t(p, q, a, b, c):
    """RTCD 5.1.10 on tuples; returns ``(c_segment, c_triangle, dist2)``.

    If the segment pierces the triangle the piercing point is both answers.
    Otherwise the minimum lies on a segment end against the triangle, or on
    the segment against a triangle edge: five candidate queries.
    """
    hit, x = intersect_segment_triangle_t(p, q, a, b, c)
    if hit:
        return x, x, 0.0
    best1 = p
    best2 = closest_pt_point_triangle_t(p, a, b, c)
    best = v.norm2(v.sub(best1, best2))
    y = closest_pt_point_triangle_t(q, a, b, c)
    d = v.norm2(v.sub(q, y))
    if d < best:
        best1, best2, best = q, y, d
    edges = ((a, b), (b, c), (c, a))
    for e in edges:
        c1, c2, _, _ = closest_pt_segment_segment_t(p, q, e[0], e[1])
        d = v.norm2(v.sub(c1, c2))
        if d < best:
            best1, best2, best = c1, c2, d
    return best1, best2, best


@njit
def _line_batch(p1, q1, p2, q2, c1, c2, s, t, segments):
    for i in range(p1.shape[0]):
        if segments:
            x, y, si, ti = closest_pt_segment_segment_t(v.row(p1, i), v.row(q1, i), v.row(p2, i), v.row(q2, i))
        else:
            x, y, si, ti = closest_pt_line_line_t(v.row(p1, i), v.row(q1, i), v.row(p2, i), v.row(q2, i))
        v.store(c1, i, x)
        v.store(c2, i, y)
        s[i] = si
        t[i] = ti


def _two_lines(p1, q1, p2, q2, segments):
    (p1, q1, p2, q2), lead = broadcast_batch(
        [("p1", p1, (3,)), ("q1", q1, (3,)), ("p2", p2, (3,)), ("q2", q2, (3,))]
    )
    n = p1.shape[0]
    c1, c2 = np.empty((n, 3)), np.empty((n, 3))
    s, t = np.empty(n), np.empty(n)
    _line_batch(p1, q1, p2, q2, c1, c2, s, t, segments)
    return unbatch(c1, lead), unbatch(c2, lead), unbatch(s, lead), unbatch(t, lead)


def closest_pt_line_line(p1: ArrayLike, q1: ArrayLike, p2: ArrayLike, q2: ArrayLike) -> tuple[
        NDArray[np.float64], NDArray[np.float64], float | NDArray[np.float64], float | NDArray[np.float64]]:
    """Closest points of the infinite lines through ``p1 q1`` and ``p2 q2``.

    RTCD 5.1.8. Line 1 is ``p1 + s (q1 - p1)``, line 2 is ``p2 + t (q2 - p2)``.
    Parallel lines (see ``PARALLEL_EPS``) have a whole family of answers; we
    return the one with ``s = 0``. A line given by two equal points is that point.

    Parameters
    ----------
    p1, q1, p2, q2 : (..., 3) float64

    Returns
    -------
    c1, c2 : (..., 3) float64
        Closest points on line 1 and line 2.
    s, t : (...,) float64
        Their parameters.
    """
    return _two_lines(p1, q1, p2, q2, False)


def closest_pt_segment_segment(p1: ArrayLike, q1: ArrayLike, p2: ArrayLike, q2: ArrayLike) -> tuple[
        NDArray[np.float64], NDArray[np.float64], float | NDArray[np.float64], float | NDArray[np.float64]]:
    """Closest points of the segments ``p1 q1`` and ``p2 q2``.

    RTCD 5.1.9 (ClosestPtSegmentSegment): closest points of the lines, clamped
    to the segments in the order the book gives. Handles zero-length segments
    (either or both) and parallel segments (one closest pair of the overlap,
    the one with the smallest ``s``).

    Parameters
    ----------
    p1, q1, p2, q2 : (..., 3) float64

    Returns
    -------
    c1, c2 : (..., 3) float64
        Closest points on segment 1 and segment 2.
    s, t : (...,) float64
        Their parameters in ``[0, 1]``.
    """
    return _two_lines(p1, q1, p2, q2, True)


@njit
def _segment_triangle_batch(p, q, a, b, c, c1, c2):
    for i in range(p.shape[0]):
        x, y, _ = closest_pt_segment_triangle_t(v.row(p, i), v.row(q, i), v.row(a, i), v.row(b, i), v.row(c, i))
        v.store(c1, i, x)
        v.store(c2, i, y)


def closest_pt_segment_triangle(p: ArrayLike, q: ArrayLike, a: ArrayLike, b: ArrayLike,
                                c: ArrayLike) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Closest points of the segment ``pq`` and the triangle ``abc``.

    RTCD 5.1.10. When the segment pierces the triangle both points are the
    piercing point.

    Parameters
    ----------
    p, q, a, b, c : (..., 3) float64

    Returns
    -------
    c1 : (..., 3) float64
        Closest point on the segment.
    c2 : (..., 3) float64
        Closest point on the triangle.
    """
    (p, q, a, b, c), lead = broadcast_batch(
        [("p", p, (3,)), ("q", q, (3,)), ("a", a, (3,)), ("b", b, (3,)), ("c", c, (3,))]
    )
    c1, c2 = np.empty_like(p), np.empty_like(p)
    _segment_triangle_batch(p, q, a, b, c, c1, c2)
    return unbatch(c1, lead), unbatch(c2, lead)
