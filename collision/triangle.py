"""Triangle pairs: overlap by separating axes, the intersection segment, closest points.

The test is the separating-axis test of RTCD 5.2.1 and 4.4 applied to two
triangles, as RAPID does it: 17 candidate axes, the two face normals, the nine
cross products of an edge of one triangle with an edge of the other, and the
six in-plane edge normals ``n x e`` (needed for coplanar triangles). Edge
directions are normalised before their cross product, and a (near-)zero cross
product of parallel edges is replaced by the axis perpendicular to both edges
in their common plane, or dropped when the edges are collinear: the robust
rule of RTCD 5.2.1.1 (seed 001).

Triangles are closed: touching counts as intersecting.
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import ArrayLike, NDArray

from . import _vec as v
from ._jit import njit
from ._validate import broadcast_batch, unbatch
from .closest_pair import closest_pt_segment_segment_t, closest_pt_segment_triangle_t
from .closest_point import closest_pt_point_triangle_t

__all__ = ["test_triangle_triangle", "intersect_triangle_triangle", "closest_pt_triangle_triangle"]

# Squared sine below which two unit edge directions count as parallel.
PARALLEL_SIN2 = 1e-18

# Relative size of a gap that rounding can fake: projections must be apart by
# more than COPLANAR_EPS * |m| * (size of the pair) to separate on axis m. For
# (near-)coplanar triangles the normal and edge-cross axes project both
# triangles to almost the same value, and without this margin rounding alone
# would separate overlapping coplanar triangles.
COPLANAR_EPS = 1e-12


@njit(inline="always")
def _separated_on(m, a0, a1, a2, b0, b1, b2, size):
    """True when the projections of the two triangles on ``m`` are apart by more than rounding."""
    tol = COPLANAR_EPS * size * v.norm(m)
    pa0 = v.dot(m, a0)
    pa1 = v.dot(m, a1)
    pa2 = v.dot(m, a2)
    pb0 = v.dot(m, b0)
    pb1 = v.dot(m, b1)
    pb2 = v.dot(m, b2)
    amin = min(pa0, min(pa1, pa2))
    amax = max(pa0, max(pa1, pa2))
    bmin = min(pb0, min(pb1, pb2))
    bmax = max(pb0, max(pb1, pb2))
    return amin > bmax + tol or bmin > amax + tol


@njit(inline="always")
def _unit(e):
    n = v.norm(e)
    if n == 0.0:
        return e
    return v.scale(e, 1.0 / n)


@njit
def test_triangle_triangle_t(a0, a1, a2, b0, b1, b2):
    """The 17-axis SAT on tuples. Returns True when the triangles intersect."""
    # Work relative to a0: smaller magnitudes, smaller rounding in projections.
    o = a0
    a0 = (0.0, 0.0, 0.0)
    a1 = v.sub(a1, o)
    a2 = v.sub(a2, o)
    b0 = v.sub(b0, o)
    b1 = v.sub(b1, o)
    b2 = v.sub(b2, o)
    ea = (_unit(v.sub(a1, a0)), _unit(v.sub(a2, a1)), _unit(v.sub(a0, a2)))
    eb = (_unit(v.sub(b1, b0)), _unit(v.sub(b2, b1)), _unit(v.sub(b0, b2)))
    na = v.cross(ea[0], v.sub((0.0, 0.0, 0.0), ea[2]))
    nb = v.cross(eb[0], v.sub((0.0, 0.0, 0.0), eb[2]))
    if v.norm2(na) <= PARALLEL_SIN2 or v.norm2(nb) <= PARALLEL_SIN2:
        # A degenerate triangle (a segment or a point) has no normal and its
        # zero-length edges give no axes: decide by exact closest points.
        _, _, d2 = _touch_point_t(a0, a1, a2, b0, b1, b2)
        scale = max(v.norm2(a1), max(v.norm2(a2), max(v.norm2(b0), max(v.norm2(b1), v.norm2(b2)))))
        return d2 <= 1e-30 * max(scale, 1e-300)
    size = math.sqrt(max(v.norm2(a1), max(v.norm2(a2), max(v.norm2(b0), max(v.norm2(b1), v.norm2(b2))))))
    if _separated_on(na, a0, a1, a2, b0, b1, b2, size):
        return False
    if _separated_on(nb, a0, a1, a2, b0, b1, b2, size):
        return False
    pa = (a0, a1, a2)
    pb = (b0, b1, b2)
    for i in range(3):
        for j in range(3):
            m = v.cross(ea[i], eb[j])
            if v.norm2(m) <= PARALLEL_SIN2:
                # Parallel edges: try the axis perpendicular to edge i in the
                # plane holding both edges (seed 001); skip if collinear.
                w = v.sub(pb[j], pa[i])
                m = v.cross(ea[i], v.cross(ea[i], w))
                if v.norm2(m) <= PARALLEL_SIN2 * v.norm2(w):
                    continue
            if _separated_on(m, a0, a1, a2, b0, b1, b2, size):
                return False
    for i in range(3):
        if _separated_on(v.cross(na, ea[i]), a0, a1, a2, b0, b1, b2, size):
            return False
        if _separated_on(v.cross(nb, eb[i]), a0, a1, a2, b0, b1, b2, size):
            return False
    return True


@njit
def _tri_batch(t1, t2, out):
    for i in range(t1.shape[0]):
        out[i] = test_triangle_triangle_t(
            (t1[i, 0, 0], t1[i, 0, 1], t1[i, 0, 2]),
            (t1[i, 1, 0], t1[i, 1, 1], t1[i, 1, 2]),
            (t1[i, 2, 0], t1[i, 2, 1], t1[i, 2, 2]),
            (t2[i, 0, 0], t2[i, 0, 1], t2[i, 0, 2]),
            (t2[i, 1, 0], t2[i, 1, 1], t2[i, 1, 2]),
            (t2[i, 2, 0], t2[i, 2, 1], t2[i, 2, 2]),
        )


def test_triangle_triangle(t1: ArrayLike, t2: ArrayLike) -> bool | NDArray[np.bool_]:
    """Do two triangles intersect (touching included)?

    Parameters
    ----------
    t1, t2 : (..., 3, 3) float64
        ``t[k]`` is corner ``k``; batches broadcast.

    Returns
    -------
    hit : bool, or (...,) bool array for batched input
    """
    (t1, t2), lead = broadcast_batch([("t1", t1, (3, 3)), ("t2", t2, (3, 3))])
    out = np.empty(t1.shape[0], dtype=np.bool_)
    _tri_batch(t1, t2, out)
    return bool(out[0]) if lead == () else unbatch(out, lead)


test_triangle_triangle.__test__ = False
test_triangle_triangle_t.__test__ = False


# ---------------------------------------------------------------------------
# The intersection segment
# ---------------------------------------------------------------------------


@njit
def _plane_crossing(p0, p1, p2, d0, d1, d2, line):
    """Where a triangle with signed plane distances ``d`` meets that plane.

    Returns ``(lo_point, hi_point, lo, hi, count)``: the extreme crossing points
    along ``line`` and their parameters; ``count = 0`` if it does not meet it.
    """
    pts = (p0, p1, p2)
    ds = (d0, d1, d2)
    lo = np.inf
    hi = -np.inf
    lo_p = p0
    hi_p = p0
    count = 0
    for i in range(3):
        j = (i + 1) % 3
        di = ds[i]
        dj = ds[j]
        if di == 0.0:
            x = pts[i]
        elif (di < 0.0 and dj > 0.0) or (di > 0.0 and dj < 0.0):
            x = v.madd(pts[i], v.sub(pts[j], pts[i]), di / (di - dj))
        else:
            continue
        s = v.dot(x, line)
        count += 1
        if s < lo:
            lo, lo_p = s, x
        if s > hi:
            hi, hi_p = s, x
    return lo_p, hi_p, lo, hi, count


@njit
def _clip_polygon(poly, n, a, b, normal):
    """Keep the part of the polygon ``poly[:n]`` on the inner side of edge ``ab``."""
    m = v.cross(normal, v.sub(b, a))  # points inside for a counter-clockwise triangle
    out = np.empty((n + 3, 3))
    k = 0
    for i in range(n):
        p = (poly[i, 0], poly[i, 1], poly[i, 2])
        q = (poly[(i + 1) % n, 0], poly[(i + 1) % n, 1], poly[(i + 1) % n, 2])
        dp = v.dot(m, v.sub(p, a))
        dq = v.dot(m, v.sub(q, a))
        if dp >= 0.0:
            v.store(out, k, p)
            k += 1
        if (dp > 0.0 and dq < 0.0) or (dp < 0.0 and dq > 0.0):
            v.store(out, k, v.madd(p, v.sub(q, p), dp / (dp - dq)))
            k += 1
    return out, k


@njit
def _touch_point_t(a0, a1, a2, b0, b1, b2):
    """Closest pair over the six edge-against-triangle queries (RTCD 5.1.10).

    Used where the plane-interval construction has nothing to offer:
    degenerate triangles, and contacts that rounding reduced to a point.
    Returns ``(c_a, c_b, dist2)``.
    """
    ca, cb, best = closest_pt_segment_triangle_t(a0, a1, b0, b1, b2)
    ea = ((a1, a2), (a2, a0))
    for e in ea:
        x, y, d = closest_pt_segment_triangle_t(e[0], e[1], b0, b1, b2)
        if d < best:
            ca, cb, best = x, y, d
    eb = ((b0, b1), (b1, b2), (b2, b0))
    for e in eb:
        y, x, d = closest_pt_segment_triangle_t(e[0], e[1], a0, a1, a2)
        if d < best:
            ca, cb, best = x, y, d
    return ca, cb, best


@njit
def intersect_triangle_triangle_t(a0, a1, a2, b0, b1, b2):
    """Intersection segment of two triangles known to intersect: ``(p, q)``."""
    na = v.cross(v.sub(a1, a0), v.sub(a2, a0))
    nb = v.cross(v.sub(b1, b0), v.sub(b2, b0))
    if v.norm2(na) == 0.0 or v.norm2(nb) == 0.0:
        # A degenerate triangle is a segment or point: its contact point.
        ca, cb, _ = _touch_point_t(a0, a1, a2, b0, b1, b2)
        return ca, ca
    da0 = v.dot(nb, v.sub(a0, b0))
    da1 = v.dot(nb, v.sub(a1, b0))
    da2 = v.dot(nb, v.sub(a2, b0))
    line = v.cross(na, nb)
    size = math.sqrt(max(v.norm2(v.sub(a1, a0)), max(v.norm2(v.sub(a2, a0)), max(
        v.norm2(v.sub(b0, a0)), max(v.norm2(v.sub(b1, a0)), v.norm2(v.sub(b2, a0)))))))
    flat = COPLANAR_EPS * size * v.norm(nb)
    if (abs(da0) <= flat and abs(da1) <= flat and abs(da2) <= flat) or v.norm2(line) == 0.0:
        return _coplanar_segment(a0, a1, a2, b0, b1, b2, na)
    db0 = v.dot(na, v.sub(b0, a0))
    db1 = v.dot(na, v.sub(b1, a0))
    db2 = v.dot(na, v.sub(b2, a0))
    pa_lo, pa_hi, sa_lo, sa_hi, ca = _plane_crossing(a0, a1, a2, da0, da1, da2, line)
    pb_lo, pb_hi, sb_lo, sb_hi, cb = _plane_crossing(b0, b1, b2, db0, db1, db2, line)
    if ca == 0 or cb == 0:
        c1, c2, _ = _touch_point_t(a0, a1, a2, b0, b1, b2)
        return c1, c1
    p = pa_lo if sa_lo >= sb_lo else pb_lo
    q = pa_hi if sa_hi <= sb_hi else pb_hi
    if min(sa_hi, sb_hi) < max(sa_lo, sb_lo):
        # Touching within rounding: a single point.
        c1, c2, _ = _touch_point_t(a0, a1, a2, b0, b1, b2)
        return c1, c1
    return p, q


@njit
def _coplanar_segment(a0, a1, a2, b0, b1, b2, na):
    """Coplanar overlap: clip A by B's edges, return the overlap's longest chord."""
    poly = np.empty((3, 3))
    v.store(poly, 0, a0)
    v.store(poly, 1, a1)
    v.store(poly, 2, a2)
    n = 3
    nb = v.cross(v.sub(b1, b0), v.sub(b2, b0))
    if v.dot(nb, na) < 0.0:  # orient B counter-clockwise about na
        b1, b2 = b2, b1
    bs = (b0, b1, b2)
    for i in range(3):
        poly, n = _clip_polygon(poly, n, bs[i], bs[(i + 1) % 3], na)
        if n == 0:
            break
    if n == 0:
        c1, c2, _ = _touch_point_t(a0, a1, a2, b0, b1, b2)
        return c1, c1
    best = -1.0
    p = (poly[0, 0], poly[0, 1], poly[0, 2])
    q = p
    for i in range(n):
        for j in range(i + 1, n):
            x = (poly[i, 0], poly[i, 1], poly[i, 2])
            y = (poly[j, 0], poly[j, 1], poly[j, 2])
            d = v.norm2(v.sub(x, y))
            if d > best:
                best, p, q = d, x, y
    return p, q


def intersect_triangle_triangle(t1: ArrayLike, t2: ArrayLike) -> NDArray[np.float64] | None:
    """The segment where two triangles meet, or ``None`` if they do not.

    For triangles in general position the intersection is a segment on the
    line where their planes meet: each triangle crosses the other's plane
    along a segment of that line (the signed plane distances of its corners
    locate it, as in Moller's interval method), and the intersection is the
    overlap of the two. Touching triangles give a segment of zero length.
    Coplanar overlapping triangles meet in a polygon; we return its longest
    chord (two of its vertices), a segment inside the intersection.

    Parameters
    ----------
    t1, t2 : (3, 3) float64

    Returns
    -------
    segment : (2, 3) float64 or None
    """
    (t1, t2), lead = broadcast_batch([("t1", t1, (3, 3)), ("t2", t2, (3, 3))])
    if lead != ():
        raise ValueError("t1, t2: intersect_triangle_triangle takes single (3, 3) triangles")
    a = [tuple(r) for r in t1[0]]
    b = [tuple(r) for r in t2[0]]
    if not test_triangle_triangle_t(*a, *b):
        return None
    p, q = intersect_triangle_triangle_t(*a, *b)
    return np.array([p, q])


# ---------------------------------------------------------------------------
# Closest points
# ---------------------------------------------------------------------------


# Relative rounding margin of the plane test in :func:`plane_gap2_t`.
PLANE_GAP_EPS = 1e-12


@njit
def _one_plane_gap2(a0, a1, a2, b0, b1, b2):
    n = v.cross(v.sub(a1, a0), v.sub(a2, a0))
    nn = v.norm2(n)
    if not nn > 0.0:
        return 0.0
    d0 = v.dot(n, v.sub(b0, a0))
    d1 = v.dot(n, v.sub(b1, a0))
    d2 = v.dot(n, v.sub(b2, a0))
    if d0 > 0.0 and d1 > 0.0 and d2 > 0.0:
        m = min(d0, d1, d2)
    elif d0 < 0.0 and d1 < 0.0 and d2 < 0.0:
        m = min(-d0, -d1, -d2)
    else:
        return 0.0
    # rounding of the d's is ~eps |n| |b - a0|: stay inside it
    reach = max(v.norm2(v.sub(b0, a0)), v.norm2(v.sub(b1, a0)), v.norm2(v.sub(b2, a0)),
                v.norm2(v.sub(a1, a0)), v.norm2(v.sub(a2, a0)))
    if m * m <= PLANE_GAP_EPS * PLANE_GAP_EPS * nn * reach:
        return 0.0
    return m * m / nn


@njit
def plane_gap2_t(a0, a1, a2, b0, b1, b2):
    """A lower bound of the squared distance of two triangles from their planes.

    When all corners of one triangle lie strictly on one side of the other's
    plane, the triangles cannot meet and are at least the nearest corner's
    plane distance apart; the larger of the two planes' bounds is returned,
    0 when neither plane separates (or only by a rounding-level margin). Six
    dot products: the cheap first test of a triangle pair in distance queries.
    """
    return max(_one_plane_gap2(a0, a1, a2, b0, b1, b2), _one_plane_gap2(b0, b1, b2, a0, a1, a2))


@njit
def closest_pt_triangle_triangle_t(a0, a1, a2, b0, b1, b2):
    """Closest points of two triangles on tuples; ``(c_a, c_b, dist2)``.

    RTCD 5.1.10 (closing remark): intersecting triangles are at distance 0 (a
    point of their intersection segment is returned); otherwise the closest
    pair is a vertex against the other triangle or an edge against an edge:
    six point-triangle and nine segment-segment queries. The intersection test
    is skipped when a triangle's plane separates the pair
    (:func:`plane_gap2_t`).
    """
    if plane_gap2_t(a0, a1, a2, b0, b1, b2) <= 0.0 and test_triangle_triangle_t(a0, a1, a2, b0, b1, b2):
        p, _ = intersect_triangle_triangle_t(a0, a1, a2, b0, b1, b2)
        return p, p, 0.0
    pa = (a0, a1, a2)
    pb = (b0, b1, b2)
    ca = a0
    cb = closest_pt_point_triangle_t(a0, b0, b1, b2)
    best = v.norm2(v.sub(ca, cb))
    for k in range(1, 3):
        y = closest_pt_point_triangle_t(pa[k], b0, b1, b2)
        d = v.norm2(v.sub(pa[k], y))
        if d < best:
            ca, cb, best = pa[k], y, d
    for k in range(3):
        x = closest_pt_point_triangle_t(pb[k], a0, a1, a2)
        d = v.norm2(v.sub(pb[k], x))
        if d < best:
            ca, cb, best = x, pb[k], d
    for i in range(3):
        for j in range(3):
            x, y, _, _ = closest_pt_segment_segment_t(pa[i], pa[(i + 1) % 3], pb[j], pb[(j + 1) % 3])
            d = v.norm2(v.sub(x, y))
            if d < best:
                ca, cb, best = x, y, d
    return ca, cb, best


@njit(inline="always")
def _corner_offsets(n, o, p0, p1, p2, reach):
    """Signed offsets ``n . (p_k - o)`` of three points from the plane through ``o`` with normal ``n``
    (times ``|n|``), the squared norm of ``n``, and the offsets' rounding margin (scaled alike)."""
    nn = v.norm2(n)
    d = (v.dot(n, v.sub(p0, o)), v.dot(n, v.sub(p1, o)), v.dot(n, v.sub(p2, o)))
    reach = max(reach, v.norm2(v.sub(p0, o)), v.norm2(v.sub(p1, o)), v.norm2(v.sub(p2, o)))
    return d, nn, PLANE_GAP_EPS * math.sqrt(nn * reach)


@njit(inline="always")
def _side_gap2(d0, d1, nn, margin):
    """Lower bound of the squared distance to a plane of a segment (or, ``d0 == d1``, a point)
    whose ends are at the offsets ``d0, d1`` (:func:`_corner_offsets`): 0 when it may cross it."""
    if d0 > 0.0 and d1 > 0.0:
        m = min(d0, d1) - margin
    elif d0 < 0.0 and d1 < 0.0:
        m = min(-d0, -d1) - margin
    else:
        return 0.0
    if not (m > 0.0 and nn > 0.0):
        return 0.0
    return m * m / nn


@njit
def closest_pt_triangle_triangle_below_t(a0, a1, a2, b0, b1, b2, bound2):
    """:func:`closest_pt_triangle_triangle_t` searched only below the squared distance ``bound2``.

    The same RTCD 5.1.10 queries (six point-triangle, nine segment-segment),
    each skipped when a lower bound of its distance already reaches the best
    so far (``bound2`` to begin with): a point is at least its distance from
    the other triangle's plane away from that triangle, and two edges at least
    either edge's distance from the plane of the other's triangle (0 when the
    edge crosses it). The offsets of the six corners from the two planes give
    all fifteen bounds; they are shrunk by their rounding margin, so a skipped
    query is never nearer than the bound by more than rounding. Returns
    ``(c_a, c_b, dist2)`` as the unbounded form when the pair is nearer than
    ``bound2``; otherwise ``dist2 == bound2`` and the points are meaningless.
    Intersecting triangles give 0 as there.
    """
    if plane_gap2_t(a0, a1, a2, b0, b1, b2) <= 0.0 and test_triangle_triangle_t(a0, a1, a2, b0, b1, b2):
        p, _ = intersect_triangle_triangle_t(a0, a1, a2, b0, b1, b2)
        return p, p, 0.0
    reach_a = max(v.norm2(v.sub(a1, a0)), v.norm2(v.sub(a2, a0)))
    reach_b = max(v.norm2(v.sub(b1, b0)), v.norm2(v.sub(b2, b0)))
    sb, nna, ea = _corner_offsets(v.cross(v.sub(a1, a0), v.sub(a2, a0)), a0, b0, b1, b2, reach_a)  # B from A's plane
    sa, nnb, eb = _corner_offsets(v.cross(v.sub(b1, b0), v.sub(b2, b0)), b0, a0, a1, a2, reach_b)  # A from B's plane
    pa = (a0, a1, a2)
    pb = (b0, b1, b2)
    best = bound2
    ca = cb = a0
    for k in range(3):
        if _side_gap2(sa[k], sa[k], nnb, eb) < best:
            y = closest_pt_point_triangle_t(pa[k], b0, b1, b2)
            d = v.norm2(v.sub(pa[k], y))
            if d < best:
                ca, cb, best = pa[k], y, d
    for k in range(3):
        if _side_gap2(sb[k], sb[k], nna, ea) < best:
            x = closest_pt_point_triangle_t(pb[k], a0, a1, a2)
            d = v.norm2(v.sub(pb[k], x))
            if d < best:
                ca, cb, best = x, pb[k], d
    for i in range(3):
        gi = _side_gap2(sa[i], sa[(i + 1) % 3], nnb, eb)
        if gi >= best:
            continue
        for j in range(3):
            if max(gi, _side_gap2(sb[j], sb[(j + 1) % 3], nna, ea)) >= best:
                continue
            x, y, _, _ = closest_pt_segment_segment_t(pa[i], pa[(i + 1) % 3], pb[j], pb[(j + 1) % 3])
            d = v.norm2(v.sub(x, y))
            if d < best:
                ca, cb, best = x, y, d
    return ca, cb, best


@njit
def _triangle_triangle_batch(a0, a1, a2, b0, b1, b2, c1, c2):
    for i in range(a0.shape[0]):
        x, y, _ = closest_pt_triangle_triangle_t(
            v.row(a0, i), v.row(a1, i), v.row(a2, i), v.row(b0, i), v.row(b1, i), v.row(b2, i))
        v.store(c1, i, x)
        v.store(c2, i, y)


def closest_pt_triangle_triangle(a0: ArrayLike, a1: ArrayLike, a2: ArrayLike, b0: ArrayLike, b1: ArrayLike,
                                 b2: ArrayLike) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Closest points of the triangles ``a0 a1 a2`` and ``b0 b1 b2``.

    RTCD 5.1.10: the minimum over the six edge-against-triangle queries. For
    intersecting triangles both points are one point of the intersection.

    Parameters
    ----------
    a0, a1, a2, b0, b1, b2 : (..., 3) float64

    Returns
    -------
    c1 : (..., 3) float64
        Closest point on triangle A.
    c2 : (..., 3) float64
        Closest point on triangle B.
    """
    (a0, a1, a2, b0, b1, b2), lead = broadcast_batch(
        [(n, x, (3,)) for n, x in zip(("a0", "a1", "a2", "b0", "b1", "b2"), (a0, a1, a2, b0, b1, b2))]
    )
    c1, c2 = np.empty_like(a0), np.empty_like(a0)
    _triangle_triangle_batch(a0, a1, a2, b0, b1, b2, c1, c2)
    return unbatch(c1, lead), unbatch(c2, lead)
