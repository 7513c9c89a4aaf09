"""Contact reduction: at most four of a contact patch's points that keep its area.

A patch from face clipping (:mod:`collision.manifold`, RTCD 8.3.4), a half-space
(:mod:`collision.halfspace_batch`) or a mesh (:mod:`collision.convex_mesh`) can
hold many points; a solver needs at most four that span it. :func:`_reduce_into`
keeps the deepest point and the three that add the most area around it, the
idea of D. Gregorius' "Robust contact creation for physics simulations"
(GDC 2015) and of Bullet's ``reduceContacts``; touching points are preferred
over speculative ones (depth < 0).
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray

from . import _vec as v
from ._jit import njit
from ._validate import MAX_COORD, as_array, as_number

__all__ = ["reduce_contacts"]


@njit
def _area(n, a, b, c):
    """Signed area of triangle ``abc`` seen along ``n`` (times 2)."""
    return v.dot(n, v.cross(v.sub(b, a), v.sub(c, a)))


@njit
def _reduce(n, pts, depth, cnt, tol2, keep):
    """As :func:`_reduce_into`, with its own scratch."""
    return _reduce_into(n, pts, depth, cnt, tol2, keep, np.empty(cnt, dtype=np.bool_))


@njit(borrow=True)
def _reduce_into(n, pts, depth, cnt, tol2, keep, alive):
    """Pick at most four of ``cnt`` patch points; returns how many, indices in ``keep``.

    Near-coincident points (closer than ``sqrt(tol2)``) are merged first, the
    deeper one kept. Up to four survivors are all kept. Otherwise: the deepest
    point, the point farthest from it, the point making the largest triangle
    with these two, and the point that adds the most area to that triangle
    (the largest area it sweeps outside any triangle edge). The four span
    (nearly) the largest quad with the deepest point as a corner; the idea is
    Gregorius' "Robust contact creation" (GDC 2015) and Bullet's
    ``reduceContacts``. When the deepest point touches, the other picks are
    made among the touching points before the speculative ones (depth < 0).
    """
    alive[:cnt] = True
    for i in range(cnt):
        if not alive[i]:
            continue
        for j in range(i + 1, cnt):
            if alive[j] and v.norm2(v.sub(v.row(pts, i), v.row(pts, j))) <= tol2:
                if depth[j] > depth[i]:
                    alive[i] = False
                    break
                alive[j] = False
    m = 0
    for i in range(cnt):
        if alive[i]:
            keep[m] = i
            m += 1
    if m <= 4:
        # Deepest first.
        for i in range(1, m):
            if depth[keep[i]] > depth[keep[0]]:
                keep[0], keep[i] = keep[i], keep[0]
        return m
    i0 = -1
    for i in range(cnt):
        if alive[i] and (i0 < 0 or depth[i] > depth[i0]):
            i0 = i
    # Touching points first: when the deepest point touches (depth >= 0), each of the other three
    # picks is made among the touching points, and among the speculative ones (a gap, within the
    # margin) only when no touching point is left to give that pick anything. Otherwise a hull
    # lying along its curved side (a cylinder of many sides on the ground) had its far end's
    # touching points traded for points a few millimetres up its side, which span a wider patch
    # but hold nothing: the far end sank and the body rocked for ever.
    tiered = depth[i0] >= 0.0
    p0 = v.row(pts, i0)
    i1, best = -1, -1.0
    for tier in range(2):
        for i in range(cnt):
            if alive[i] and i != i0 and (tier == 1 or not tiered or depth[i] >= 0.0):
                d = v.norm2(v.sub(v.row(pts, i), p0))
                if d > best:
                    i1, best = i, d
        if i1 >= 0 or not tiered:
            break
    p1 = v.row(pts, i1)
    i2, best = -1, 0.0
    for tier in range(2):
        for i in range(cnt):
            if alive[i] and i != i0 and i != i1 and (tier == 1 or not tiered or depth[i] >= 0.0):
                s = abs(_area(n, p0, p1, v.row(pts, i)))
                if s > best:
                    i2, best = i, s
        if (i2 >= 0 and best > tol2) or not tiered:
            break
    keep[0], keep[1] = i0, i1
    if i2 < 0 or best <= tol2:
        return 2
    p2 = v.row(pts, i2)
    sgn = 1.0 if _area(n, p0, p1, p2) > 0.0 else -1.0
    i3, best = -1, 0.0
    for tier in range(2):
        for i in range(cnt):
            if alive[i] and i != i0 and i != i1 and i != i2 and (tier == 1 or not tiered or depth[i] >= 0.0):
                q = v.row(pts, i)
                g = max(-sgn * _area(n, p0, p1, q), max(-sgn * _area(n, p1, p2, q), -sgn * _area(n, p2, p0, q)))
                if g > best:
                    i3, best = i, g
        if (i3 >= 0 and best > tol2) or not tiered:
            break
    keep[2] = i2
    if i3 < 0 or best <= tol2:
        return 3
    keep[3] = i3
    return 4


def reduce_contacts(points: ArrayLike, depths: ArrayLike, normal: ArrayLike, tol: float = 1e-9) -> NDArray[np.int64]:
    """Indices of at most four of ``points`` that keep the contact patch (see :func:`_reduce`).

    Parameters
    ----------
    points : (k, 3) float64
    depths : (k,) float64
    normal : (3,) float64
        The patch's unit normal (areas are measured seen along it).
    tol : float
        Points closer than this are merged (the deeper kept).

    Returns
    -------
    (m,) int64, m <= 4
        Deepest first.
    """
    pts = np.ascontiguousarray(as_array(points, "points", (3,)).reshape(-1, 3))
    dep = np.ascontiguousarray(as_array(depths, "depths").reshape(-1))
    if len(dep) != len(pts):
        raise ValueError(f"depths: {len(dep)} depths for {len(pts)} points")
    nrm = as_array(normal, "normal", (3,))
    if nrm.shape != (3,):
        raise ValueError(f"normal: expected shape (3,), got {nrm.shape}")
    tol = as_number(tol, "tol", low=0.0, high=MAX_COORD)
    keep = np.empty(len(pts), np.int64)
    m = _reduce(np.ascontiguousarray(nrm), pts, dep, len(pts), tol * tol, keep)
    return keep[:m].copy()
