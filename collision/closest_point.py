"""Closest point on a primitive to a query point.

Ericson, *Real-Time Collision Detection* (RTCD), section 5.1, and the 3D Math
Primer's chapter on closest points (seed 002). Every public function accepts one
query or a batch: point arguments are ``(..., 3)`` (the plane, ray, segment and
sphere queries also take 2D points ``(..., 2)``) and broadcast against each other
like numpy arrays; the result has the broadcast shape. Primitive arguments that
are objects (an :class:`~collision.obb.OBB`, a vertex set) describe one
primitive shared by all queries.

The compiled kernels (``*_t`` on ``(x, y, z)`` tuples) are reused by the
pair queries in :mod:`collision.closest_pair` and by the OBB-tree queries.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray

from . import _vec as v
from ._jit import njit
from ._validate import as_array, broadcast_batch, check_type, unbatch
from .obb import OBB

__all__ = [
    "closest_pt_point_plane",
    "closest_pt_point_ray",
    "closest_pt_point_segment",
    "closest_pt_point_sphere",
    "closest_pt_point_aabb",
    "closest_pt_point_obb",
    "closest_pt_point_rect",
    "closest_pt_point_triangle",
    "closest_pt_point_tetrahedron",
]


def _dim_specs(p, names_values):
    """Specs for ``broadcast_batch`` whose points share ``p``'s dimension (2 or 3)."""
    p = as_array(p, "p")
    if p.ndim < 1 or p.shape[-1] not in (2, 3):
        raise ValueError(f"p: expected shape (..., 2) or (..., 3), got {p.shape}")
    dim = p.shape[-1]
    return [("p", p, (dim,))] + [(name, val, (dim,)) for name, val in names_values], dim


# ---------------------------------------------------------------------------
# Plane / 2D implicit line, ray, segment, sphere: short closed forms (numpy)
# ---------------------------------------------------------------------------


def closest_pt_point_plane(p: ArrayLike, n: ArrayLike, d: ArrayLike) -> NDArray[np.float64]:
    """Closest point to ``p`` on the plane (3D) or implicit line (2D) ``x . n = d``.

    RTCD 5.1.1; Math Primer "closest point on a 2D implicit line / on a plane".
    ``n`` need not be unit length: the projection divides by ``n . n``, so
    ``d`` is the plane constant for that same ``n``.

    Parameters
    ----------
    p : (..., 3) or (..., 2) float64
        Query points.
    n : (..., 3) or (..., 2) float64
        Plane normals (non-zero).
    d : (...,) float64
        Plane constants.

    Returns
    -------
    q : (..., 3) or (..., 2) float64
    """
    specs, dim = _dim_specs(p, [("n", n)])
    (p, n, d), lead = broadcast_batch(specs + [("d", d, ())])
    nn = np.einsum("ij,ij->i", n, n)
    if np.any(nn == 0.0):
        raise ValueError("n: zero-length plane normal")
    t = (np.einsum("ij,ij->i", n, p) - d) / nn
    return unbatch(p - t[:, None] * n, lead)


def _closest_on_param(p, origin, direction, t_max):
    """Closest point on ``origin + t * direction`` with ``t`` in ``[0, t_max]``."""
    dd = np.einsum("ij,ij->i", direction, direction)
    t = np.einsum("ij,ij->i", p - origin, direction)
    # Zero-length direction: every t gives the origin; t = 0 avoids 0/0.
    t = np.divide(t, dd, out=np.zeros_like(t), where=dd > 0.0)
    t = np.clip(t, 0.0, t_max)
    return origin + t[:, None] * direction


def closest_pt_point_ray(p: ArrayLike, origin: ArrayLike, direction: ArrayLike) -> NDArray[np.float64]:
    """Closest point to ``p`` on the ray ``origin + t * direction``, ``t >= 0``.

    Math Primer "closest point on a parametric ray"; RTCD 5.1.2 with the upper
    clamp removed. ``direction`` need not be unit length. A zero direction is a
    ray of one point, the origin.

    Parameters
    ----------
    p, origin, direction : (..., 3) or (..., 2) float64

    Returns
    -------
    q : same shape as the broadcast inputs
    """
    specs, dim = _dim_specs(p, [("origin", origin), ("direction", direction)])
    (p, o, d), lead = broadcast_batch(specs)
    return unbatch(_closest_on_param(p, o, d, np.inf), lead)


def closest_pt_point_segment(p: ArrayLike, a: ArrayLike, b: ArrayLike) -> NDArray[np.float64]:
    """Closest point to ``p`` on the segment ``ab``.

    RTCD 5.1.2 (ClosestPtPointSegment). A zero-length segment is the point ``a``.

    Parameters
    ----------
    p, a, b : (..., 3) or (..., 2) float64

    Returns
    -------
    q : same shape as the broadcast inputs
    """
    specs, dim = _dim_specs(p, [("a", a), ("b", b)])
    (p, a, b), lead = broadcast_batch(specs)
    return unbatch(_closest_on_param(p, a, b - a, 1.0), lead)


def closest_pt_point_sphere(p: ArrayLike, center: ArrayLike, radius: ArrayLike,
                            solid: bool = False) -> NDArray[np.float64]:
    """Closest point to ``p`` on a sphere (3D) or circle (2D).

    Math Primer "closest point on a circle or sphere": ``q = p + (|d| - r) d / |d|``
    with ``d = center - p``. The primer's two degenerate cases:

    - ``p`` inside (``|d| < r``): with ``solid=False`` (the default, the primer's
      surface query) the formula still holds and pushes ``p`` outwards onto the
      surface; with ``solid=True`` (Ericson's ball) ``p`` is its own closest point.
    - ``p`` at the centre: every surface point is equally close; we return
      ``center + radius * e_x`` (the first axis), a fixed documented choice.

    Parameters
    ----------
    p, center : (..., 3) or (..., 2) float64
    radius : (...,) float64, >= 0
    solid : bool

    Returns
    -------
    q : same shape as the broadcast inputs
    """
    specs, dim = _dim_specs(p, [("center", center)])
    (p, c, r), lead = broadcast_batch(specs + [("radius", radius, ())])
    if np.any(r < 0.0):
        raise ValueError("radius: must be >= 0")
    d = c - p
    dist = np.sqrt(np.einsum("ij,ij->i", d, d))
    at_center = dist == 0.0
    safe = np.where(at_center, 1.0, dist)
    q = p + ((dist - r) / safe)[:, None] * d
    if np.any(at_center):
        e = np.zeros(dim)
        e[0] = 1.0
        q[at_center] = c[at_center] + r[at_center, None] * e
    if solid:
        inside = dist <= r
        q[inside] = p[inside]
    return unbatch(q, lead)


def closest_pt_point_aabb(p: ArrayLike, bmin: ArrayLike, bmax: ArrayLike) -> NDArray[np.float64]:
    """Closest point to ``p`` in the axis-aligned box ``[bmin, bmax]``.

    RTCD 5.1.3 (ClosestPtPointAABB): clamp each coordinate. Points inside are
    their own closest point (the box is solid).

    Parameters
    ----------
    p, bmin, bmax : (..., 3) float64, ``bmin <= bmax``

    Returns
    -------
    q : (..., 3) float64
    """
    (p, lo, hi), lead = broadcast_batch(
        [("p", p, (3,)), ("bmin", bmin, (3,)), ("bmax", bmax, (3,))]
    )
    if np.any(lo > hi):
        raise ValueError("bmin, bmax: bmin must be <= bmax on every axis")
    return unbatch(np.minimum(np.maximum(p, lo), hi), lead)


# ---------------------------------------------------------------------------
# OBB, rectangle, triangle, tetrahedron: compiled kernels
# ---------------------------------------------------------------------------


@njit
def closest_pt_point_box_t(p, c, u0, u1, u2, e0, e1, e2):
    """RTCD 5.1.4 (ClosestPtPointOBB) on tuples; ``e2 = 0`` gives a rectangle (5.1.4.1)."""
    d = v.sub(p, c)
    q = c
    q = v.madd(q, u0, v.clamp(v.dot(d, u0), -e0, e0))
    q = v.madd(q, u1, v.clamp(v.dot(d, u1), -e1, e1))
    q = v.madd(q, u2, v.clamp(v.dot(d, u2), -e2, e2))
    return q


@njit
def _box_batch(p, c, axes, half, out):
    for i in range(p.shape[0]):
        q = closest_pt_point_box_t(
            v.row(p, i), v.row(c, i),
            (axes[i, 0, 0], axes[i, 0, 1], axes[i, 0, 2]),
            (axes[i, 1, 0], axes[i, 1, 1], axes[i, 1, 2]),
            (axes[i, 2, 0], axes[i, 2, 1], axes[i, 2, 2]),
            half[i, 0], half[i, 1], half[i, 2],
        )
        v.store(out, i, q)


def closest_pt_point_obb(p: ArrayLike, obb: OBB) -> NDArray[np.float64]:
    """Closest point to ``p`` in the solid oriented box ``obb``.

    RTCD 5.1.4 (ClosestPtPointOBB): express ``p - center`` in the box axes and
    clamp each coordinate to the half extent.

    Parameters
    ----------
    p : (..., 3) float64
    obb : collision.OBB

    Returns
    -------
    q : (..., 3) float64
    """
    check_type(obb, "obb", OBB)
    (p,), lead = broadcast_batch([("p", p, (3,))])
    n = p.shape[0]
    c = np.broadcast_to(obb.center, (n, 3))
    axes = np.broadcast_to(obb.axes, (n, 3, 3))
    half = np.broadcast_to(obb.half_extents, (n, 3))
    out = np.empty_like(p)
    _box_batch(p, np.ascontiguousarray(c), np.ascontiguousarray(axes),
               np.ascontiguousarray(half), out)
    return unbatch(out, lead)


def closest_pt_point_rect(p: ArrayLike, center: ArrayLike, axes: ArrayLike,
                          half_extents: ArrayLike) -> NDArray[np.float64]:
    """Closest point to ``p`` on a 3D rectangle.

    RTCD 5.1.4.1 (ClosestPtPointRect): the rectangle is ``center + s u0 + t u1``
    with ``|s| <= e0``, ``|t| <= e1``; it is an OBB with a zero third extent.

    Parameters
    ----------
    p : (..., 3) float64
    center : (..., 3) float64
    axes : (..., 2, 3) float64
        Orthonormal in-plane axes ``u0, u1`` as rows.
    half_extents : (..., 2) float64, >= 0

    Returns
    -------
    q : (..., 3) float64
    """
    (p, c, ax, he), lead = broadcast_batch([
        ("p", p, (3,)), ("center", center, (3,)),
        ("axes", axes, (2, 3)), ("half_extents", half_extents, (2,)),
    ])
    if np.any(he < 0.0):
        raise ValueError("half_extents: must be >= 0")
    n = p.shape[0]
    axes3 = np.zeros((n, 3, 3))
    axes3[:, :2] = ax
    half3 = np.zeros((n, 3))
    half3[:, :2] = he
    out = np.empty_like(p)
    _box_batch(p, c, axes3, half3, out)
    return unbatch(out, lead)


# A triangle whose corners are collinear to within this relative tolerance
# (|ab x ac|^2 <= DEGENERATE_SIN2 |ab|^2 |ac|^2, i.e. its largest angle has a
# sine below 1e-12) is treated as the union of its edges.
DEGENERATE_SIN2 = 1e-24
# Below this sin^2 of the largest angle a triangle is a sliver: its face projection is checked
# against its edges (:func:`closest_pt_point_triangle_t`).
SLIVER_SIN2 = 1e-8


@njit
def _stable_normal_t(a, b, c):
    """Triangle normal (unnormalised) from the two edges at its largest angle.

    Every pair of edges gives the same exact cross product, but the rounding
    error of the computed direction is ``eps / sin(angle)`` of the angle the
    pair encloses; the largest angle (opposite the longest edge) is the best
    conditioned choice. Returns ``(n, |n|^2, |e1|^2 |e2|^2)``.
    """
    ab = v.sub(b, a)
    bc = v.sub(c, b)
    ca = v.sub(a, c)
    lab, lbc, lca = v.norm2(ab), v.norm2(bc), v.norm2(ca)
    if lab >= lbc and lab >= lca:  # pivot c
        e1, e2, l1, l2 = ca, bc, lca, lbc
    elif lbc >= lca:  # pivot a
        e1, e2, l1, l2 = ab, ca, lab, lca
    else:  # pivot b
        e1, e2, l1, l2 = bc, ab, lbc, lab
    n = v.cross(e1, e2)
    return n, v.norm2(n), l1 * l2


@njit
def closest_pt_point_triangle_t(p, a, b, c):
    """RTCD 5.1.5 (ClosestPtPointTriangle), the six-dot-product Voronoi form.

    Walks the Voronoi regions of the vertices, then of the edges, and falls to
    the face. Two changes from the book for thin triangles:

    - a degenerate triangle (collinear or coincident corners, see
      ``DEGENERATE_SIN2``) is the union of its edges;
    - in the face region the point is projected on the plane through the
      best-conditioned normal instead of weighted by barycentrics: the
      barycentrics come from differences of products whose relative error is
      ``eps / sin^2`` of the smallest angle (1e-4 for a 1e-6 needle), the
      projection's is ``eps / sin`` of the largest angle;
    - for a sliver, whose largest angle is also near 180 degrees (``SLIVER_SIN2``),
      that projection is compared with the closest point on the edges and the
      nearer one returned.
    """
    n, nn, ll = _stable_normal_t(a, b, c)
    if not nn > DEGENERATE_SIN2 * ll:  # also catches NaN
        return _closest_on_edges_t(p, a, b, c)
    ab = v.sub(b, a)
    ac = v.sub(c, a)
    ap = v.sub(p, a)
    d1 = v.dot(ab, ap)
    d2 = v.dot(ac, ap)
    if d1 <= 0.0 and d2 <= 0.0:
        return a  # vertex region A
    bp = v.sub(p, b)
    d3 = v.dot(ab, bp)
    d4 = v.dot(ac, bp)
    if d3 >= 0.0 and d4 <= d3:
        return b  # vertex region B
    vc = d1 * d4 - d3 * d2
    if vc <= 0.0 and d1 >= 0.0 and d3 <= 0.0:
        return v.madd(a, ab, d1 / (d1 - d3))  # edge region AB (d1 - d3 = |ab|^2 > 0)
    cp = v.sub(p, c)
    d5 = v.dot(ab, cp)
    d6 = v.dot(ac, cp)
    if d6 >= 0.0 and d5 <= d6:
        return c  # vertex region C
    vb = d5 * d2 - d1 * d6
    if vb <= 0.0 and d2 >= 0.0 and d6 <= 0.0:
        return v.madd(a, ac, d2 / (d2 - d6))  # edge region AC (d2 - d6 = |ac|^2 > 0)
    va = d3 * d6 - d5 * d4
    if va <= 0.0 and (d4 - d3) >= 0.0 and (d5 - d6) >= 0.0:
        den = (d4 - d3) + (d5 - d6)  # |bc|^2 > 0
        return v.madd(b, v.sub(c, b), (d4 - d3) / den)  # edge region BC
    # face region: project p on the plane
    q = v.madd(p, n, -v.dot(ap, n) / nn)
    if nn < SLIVER_SIN2 * ll:
        # a sliver (its largest angle near 180 degrees): the normal itself is off by eps / sin,
        # which moves the projection off the plane by that times |ap|; the region test may also
        # have put p here by rounding when it is just outside an edge. The edges are exact: the
        # nearest of the candidates wins.
        e = _closest_on_edges_t(p, a, b, c)
        if v.norm2(v.sub(p, e)) <= v.norm2(v.sub(p, q)):
            return e
    return q


@njit
def closest_pt_point_segment_t(p, a, b):
    """RTCD 5.1.2 on tuples; returns ``(q, t)``."""
    ab = v.sub(b, a)
    dd = v.dot(ab, ab)
    if dd <= 0.0:
        return a, 0.0
    t = v.clamp(v.dot(v.sub(p, a), ab) / dd, 0.0, 1.0)
    return v.madd(a, ab, t), t


@njit
def _closest_on_edges_t(p, a, b, c):
    best, _ = closest_pt_point_segment_t(p, a, b)
    bd = v.norm2(v.sub(p, best))
    q, _ = closest_pt_point_segment_t(p, b, c)
    d = v.norm2(v.sub(p, q))
    if d < bd:
        best, bd = q, d
    q, _ = closest_pt_point_segment_t(p, c, a)
    d = v.norm2(v.sub(p, q))
    if d < bd:
        best = q
    return best


@njit
def _triangle_batch(p, a, b, c, out):
    for i in range(p.shape[0]):
        v.store(out, i, closest_pt_point_triangle_t(v.row(p, i), v.row(a, i), v.row(b, i), v.row(c, i)))


def closest_pt_point_triangle(p: ArrayLike, a: ArrayLike, b: ArrayLike, c: ArrayLike) -> NDArray[np.float64]:
    """Closest point to ``p`` on the triangle ``abc``.

    RTCD 5.1.5 (ClosestPtPointTriangle), the version with six dot products that
    classifies ``p`` into the Voronoi regions of the vertices, edges and face.
    Degenerate triangles (collinear or coincident corners) give the closest
    point on their edges.

    Parameters
    ----------
    p, a, b, c : (..., 3) float64

    Returns
    -------
    q : (..., 3) float64
    """
    (p, a, b, c), lead = broadcast_batch(
        [("p", p, (3,)), ("a", a, (3,)), ("b", b, (3,)), ("c", c, (3,))]
    )
    out = np.empty_like(p)
    _triangle_batch(p, a, b, c, out)
    return unbatch(out, lead)


@njit
def _outside_plane_t(p, a, b, c, d):
    """RTCD 5.1.6 PointOutsideOfPlane: ``p`` and ``d`` on opposite sides of ``abc``."""
    n = v.cross(v.sub(b, a), v.sub(c, a))
    sp = v.dot(v.sub(p, a), n)
    sd = v.dot(v.sub(d, a), n)
    return sp * sd < 0.0


FLAT_VOLUME = 1e-12


@njit
def closest_pt_point_tetrahedron_t(p, a, b, c, d):
    """RTCD 5.1.6 (ClosestPtPointTetrahedron) on tuples.

    Changed from the book for flat tetrahedra (volume below ``FLAT_VOLUME``
    times the longest edge cubed): the book skips every face then and returns
    ``p``; here all four faces are searched.
    """
    ab, ac, ad = v.sub(b, a), v.sub(c, a), v.sub(d, a)
    vol = v.dot(ad, v.cross(ab, ac))
    scale2 = max(v.norm2(ab), v.norm2(ac), v.norm2(ad), v.norm2(v.sub(c, b)),
                 v.norm2(v.sub(d, b)), v.norm2(v.sub(d, c)))
    # relative to the longest edge cubed: coincident corners given as decimals
    # leave a volume of ~1e-17 instead of 0, which must count as flat
    flat = not abs(vol) > FLAT_VOLUME * scale2 * np.sqrt(scale2)
    best = p
    best_d = np.inf
    inside = not flat
    faces = ((a, b, c, d), (a, c, d, b), (a, d, b, c), (b, d, c, a))
    for f in faces:
        if flat or _outside_plane_t(p, f[0], f[1], f[2], f[3]):
            inside = False
            q = closest_pt_point_triangle_t(p, f[0], f[1], f[2])
            dq = v.norm2(v.sub(q, p))
            if dq < best_d:
                best, best_d = q, dq
    if inside:
        return p
    return best


@njit
def _tetrahedron_batch(p, a, b, c, d, out):
    for i in range(p.shape[0]):
        v.store(out, i, closest_pt_point_tetrahedron_t(
            v.row(p, i), v.row(a, i), v.row(b, i), v.row(c, i), v.row(d, i)))


def closest_pt_point_tetrahedron(p: ArrayLike, a: ArrayLike, b: ArrayLike, c: ArrayLike,
                                 d: ArrayLike) -> NDArray[np.float64]:
    """Closest point to ``p`` in the solid tetrahedron ``abcd``.

    RTCD 5.1.6 (ClosestPtPointTetrahedron): ``p`` is its own closest point when
    it is inside all four face planes; otherwise the closest of the faces it is
    outside of. Either vertex order works (the test compares with the opposite
    vertex). A flat tetrahedron is searched over all four faces.

    Parameters
    ----------
    p, a, b, c, d : (..., 3) float64

    Returns
    -------
    q : (..., 3) float64
    """
    (p, a, b, c, d), lead = broadcast_batch(
        [("p", p, (3,)), ("a", a, (3,)), ("b", b, (3,)), ("c", c, (3,)), ("d", d, (3,))]
    )
    out = np.empty_like(p)
    _tetrahedron_batch(p, a, b, c, d, out)
    return unbatch(out, lead)
