"""Distance between two convex shapes: Gilbert-Johnson-Keerthi (GJK).

A convex shape is a *core point set plus a radius*: a hull or a box is its
vertices with radius 0, a sphere one point with radius r, a capsule its two
segment ends with radius r. GJK runs on the cores (the support function is
the arg-max of a dot product over the core points) and the radii are added
analytically afterwards: the distance between the shapes is the core distance
minus ``radius_a + radius_b``, and the closest points move by the radii along
the line between them.

Sources: Ericson, *Real-Time Collision Detection* (RTCD) 9.5 (GJK on the
Minkowski difference A - B, termination by relative progress); van den Bergen,
*Collision Detection in Interactive 3D Environments* 4.3 (the test
``|v|^2 - v.w <= eps |v|^2``); for the sub-distance step (closest point of a
simplex of up to four points to the origin) the signed-volumes method of
Montanari, Petrinic and Barbieri, "Improving the GJK algorithm for faster and
more reliable distance queries between convex objects", ACM TOG 36(3), 2017,
which replaces Johnson's determinant recursion by signed areas/volumes and
never needs Johnson's back-up procedure.

The pieces live in their own modules: the shape model's support mapping,
frames and argument checks in :mod:`collision.support`, the sub-distance
step in :mod:`collision.simplex`; here are the iteration
(:func:`gjk_kernel`) and the public query (:func:`gjk_distance`).

Frames: each shape's core points are in its own model frame; a pose is a 4x4
rigid transform from model to world. B is expressed in A's frame once per
query (one 3x3 rotation and a translation, parry's ``pos12``); the results are
returned in world coordinates.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

from . import _vec as v
from ._jit import njit
from .simplex import compact, subdistance
from .support import b_point, check_core, check_pose, check_radius, relative_transform, support_pair, to_world

__all__ = [
    "GjkResult",
    "gjk_distance",
    "gjk_kernel",
    "relative_transform",
    "GJK_MAX_ITERATIONS",
    "GJK_SEPARATED",
    "GJK_OVERLAP",
    "GJK_MAX_ITER_REACHED",
]

# Iteration cap. A polytope core converges in a handful of iterations (box-box
# ~3-6, 64-vertex hulls ~6-12); the cap only stops pathological cycling.
GJK_MAX_ITERATIONS = 128
# Relative progress: stop when the upper bound |v| and the lower bound
# v.w / |v| of the distance agree to this relative amount (van den Bergen's
# |v|^2 - v.w <= eps |v|^2). Cores are polytopes, so GJK normally stops
# earlier, exactly, when the new support point is already in the simplex.
GJK_REL_EPS = 1e-13
# Round-off floor of the same test: |v|^2 - v.w is computed with an error of a
# few ulps of |v| |w|.
GJK_ABS_EPS = 1e-15
# The cores overlap (touch) when |v| <= GJK_OVERLAP_EPS * max(|a|, |b|) over the
# support points a - b seen (A's frame): v is then zero to within the round-off
# of its coordinates.
GJK_OVERLAP_EPS = 1e-12

# Status codes of gjk_kernel.
GJK_SEPARATED = 0
GJK_OVERLAP = 1
GJK_MAX_ITER_REACHED = 2

# ---------------------------------------------------------------------------
# GJK
# ---------------------------------------------------------------------------


@njit
def _load(pa, pb, rot, trans, ia, ib, k, sw, sa, sb, si):
    """Put the support pair ``(ia, ib)`` at slot ``k``; returns ``max(|a|^2, |b|^2)``.

    That is the square of the size that the round-off of ``w = a - b`` scales with.
    """
    a = v.row(pa, ia)
    b = b_point(pb, rot, trans, ib)
    w = v.sub(a, b)
    v.store(sa, k, a)
    v.store(sb, k, b)
    v.store(sw, k, w)
    si[k, 0] = ia
    si[k, 1] = ib
    return max(v.dot(a, a), v.dot(b, b))


@njit
def gjk_kernel(pa, pb, rot, trans, simplex_in, n_in, max_iter, simplex_out, points_out):
    """GJK distance between the hulls of two core point sets, in A's frame.

    The narrow phase calls this directly: flat arrays in, numbers and filled
    arrays out, no Python objects.

    Parameters
    ----------
    pa : (na, 3) float64
        Core points of A, A's frame. ``na >= 1``.
    pb : (nb, 3) float64
        Core points of B, B's own frame. ``nb >= 1``.
    rot : (3, 3) float64, trans : (3,) float64
        B's frame in A's frame: a point ``x`` of B is ``rot @ x + trans``
        (see :func:`relative_transform`).
    simplex_in : (k, 2) int32
        Warm start: index pairs ``(i into pa, j into pb)`` of a previous final
        simplex; rows past ``n_in``, out-of-range and repeated pairs are ignored.
    n_in : int
        Rows of ``simplex_in`` to use; 0 starts cold (from the support point
        along ``trans``).
    max_iter : int
        Maximum number of support evaluations.
    simplex_out : (4, 2) int32
        Receives the final simplex's index pairs (its first ``n_out`` rows).
    points_out : (2, 3) float64
        Receives the closest core points (row 0 on A, row 1 on B), A's frame.
        When the cores overlap both rows are one point common to both hulls.

    Returns
    -------
    distance : float
        Distance between the core hulls (>= 0; ~0 when they overlap).
    n_out : int
        Size of the final simplex (1..4); 4 means the origin is inside it.
    iterations : int
        Support evaluations done.
    status : int
        ``GJK_SEPARATED`` (converged), ``GJK_OVERLAP`` (the cores touch or
        overlap: ``|v| <= GJK_OVERLAP_EPS * max(|a|, |b|)`` over the support
        points seen), or
        ``GJK_MAX_ITER_REACHED`` (the best distance so far, an upper bound).
    """
    na = pa.shape[0]
    nb = pb.shape[0]
    sw = np.empty((4, 3))
    sa = np.empty((4, 3))
    sb = np.empty((4, 3))
    si = np.empty((4, 2), np.int32)
    lam = np.zeros(4)
    ow = np.empty((4, 3))
    oa = np.empty((4, 3))
    ob = np.empty((4, 3))
    oi = np.empty((4, 2), np.int32)
    olam = np.zeros(4)
    n = 0
    maxw2 = 0.0
    for k in range(min(n_in, simplex_in.shape[0])):
        ia = simplex_in[k, 0]
        ib = simplex_in[k, 1]
        if ia < 0 or ia >= na or ib < 0 or ib >= nb:
            continue
        dup = False
        for j in range(n):
            if si[j, 0] == ia and si[j, 1] == ib:
                dup = True
        if dup:
            continue
        maxw2 = max(maxw2, _load(pa, pb, rot, trans, ia, ib, n, sw, sa, sb, si))
        n += 1
        if n == 4:
            break
    if n == 0:
        d = (trans[0], trans[1], trans[2])
        if v.dot(d, d) == 0.0:
            d = (1.0, 0.0, 0.0)
        ia, ib = support_pair(pa, pb, rot, d)
        maxw2 = _load(pa, pb, rot, trans, ia, ib, 0, sw, sa, sb, si)
        n = 1
    vv = subdistance(sw, n, lam)
    n = compact(sw, sa, sb, si, lam, n)
    iterations = 0
    status = GJK_SEPARATED
    while True:
        d2 = v.dot(vv, vv)
        if n == 4 or d2 <= GJK_OVERLAP_EPS * GJK_OVERLAP_EPS * maxw2:
            status = GJK_OVERLAP
            break
        if iterations >= max_iter:
            status = GJK_MAX_ITER_REACHED
            break
        iterations += 1
        ia, ib = support_pair(pa, pb, rot, v.scale(vv, -1.0))
        dup = False
        for j in range(n):
            if si[j, 0] == ia and si[j, 1] == ib:
                dup = True
        if dup:
            break  # no new support point: v is optimal
        a = v.row(pa, ia)
        b = b_point(pb, rot, trans, ib)
        w = v.sub(a, b)
        w2 = v.dot(w, w)
        maxw2 = max(maxw2, v.dot(a, a), v.dot(b, b))
        # Relative progress (van den Bergen): lower bound v.w / |v| close to |v|.
        if d2 - v.dot(vv, w) <= GJK_REL_EPS * d2 + GJK_ABS_EPS * math.sqrt(d2 * w2):
            break
        for i in range(n):
            for j in range(3):
                ow[i, j] = sw[i, j]
                oa[i, j] = sa[i, j]
                ob[i, j] = sb[i, j]
            oi[i, 0] = si[i, 0]
            oi[i, 1] = si[i, 1]
            olam[i] = lam[i]
        on = n
        _load(pa, pb, rot, trans, ia, ib, n, sw, sa, sb, si)
        n += 1
        nv = subdistance(sw, n, lam)
        if n < 4 and v.dot(nv, nv) >= d2:
            # No progress (round-off near the optimum): keep the previous simplex.
            for i in range(on):
                for j in range(3):
                    sw[i, j] = ow[i, j]
                    sa[i, j] = oa[i, j]
                    sb[i, j] = ob[i, j]
                si[i, 0] = oi[i, 0]
                si[i, 1] = oi[i, 1]
                lam[i] = olam[i]
            n = on
            break
        vv = nv
        n = compact(sw, sa, sb, si, lam, n)
    ca = (0.0, 0.0, 0.0)
    cb = (0.0, 0.0, 0.0)
    for i in range(n):
        ca = v.madd(ca, v.row(sa, i), lam[i])
        cb = v.madd(cb, v.row(sb, i), lam[i])
        simplex_out[i, 0] = si[i, 0]
        simplex_out[i, 1] = si[i, 1]
    if status == GJK_OVERLAP:
        # One point common to both (the weights are the same on both sides).
        m = v.scale(v.add(ca, cb), 0.5)
        ca = m
        cb = m
    v.store(points_out, 0, ca)
    v.store(points_out, 1, cb)
    dist = 0.0 if status == GJK_OVERLAP else math.sqrt(v.dot(vv, vv))
    return dist, n, iterations, status

# ---------------------------------------------------------------------------
# The public query
# ---------------------------------------------------------------------------


@njit
def _gjk_query(pa, pose_a, pb, pose_b, ra, rb, simplex_in, max_iter):
    rot, trans = relative_transform(pose_a, pose_b)
    simplex = np.empty((4, 2), np.int32)
    pts = np.empty((2, 3))
    dc, n, iterations, status = gjk_kernel(pa, pb, rot, trans, simplex_in, simplex_in.shape[0], max_iter,
                                           simplex, pts)
    ca = v.row(pts, 0)
    cb = v.row(pts, 1)
    core_overlap = status == GJK_OVERLAP
    dist = 0.0
    if not core_overlap:
        u = v.sub(cb, ca)
        u = v.scale(u, 1.0 / v.norm(u))  # unit, from A towards B
        dist = dc - ra - rb
        if dist > 0.0:
            ca = v.madd(ca, u, ra)
            cb = v.madd(cb, u, -rb)
        else:
            # The balls overlap: one point inside both (see GjkResult).
            m = v.madd(ca, u, dc * ra / (ra + rb))
            ca = m
            cb = m
            dist = 0.0
    out = np.empty((2, 3))
    v.store(out, 0, to_world(pose_a, ca))
    v.store(out, 1, to_world(pose_a, cb))
    return dist, out, core_overlap, simplex[:n].copy(), iterations, status


@dataclass(frozen=True)
class GjkResult:
    """Outcome of :func:`gjk_distance`; every point is in world coordinates.

    Attributes
    ----------
    distance : float
        Distance between the shapes, radii included (>= 0; 0 when they overlap).
    point_a : (3,) float64
        Closest point on A. When the shapes overlap, a point inside both
        (``point_a == point_b``): the common point of the cores GJK found, or
        for an overlap of the radii only, the point on the segment between the
        closest core points that divides it in the ratio ``ra : rb``.
    point_b : (3,) float64
        Closest point on B (``|point_a - point_b| == distance``).
    overlap : bool
        The shapes (with their radii) touch or overlap.
    core_overlap : bool
        The cores touch or overlap: the depth then needs EPA
        (:func:`collision.epa.convex_penetration`).
    simplex : (k, 2) int32
        Index pairs (into A's and B's core points) of the final simplex,
        ``k = 1..4``: pass it back as ``simplex`` next frame to warm-start.
    iterations : int
        Support-point evaluations done.
    """

    distance: float
    point_a: NDArray[np.float64]
    point_b: NDArray[np.float64]
    overlap: bool
    core_overlap: bool
    simplex: NDArray[np.int32]
    iterations: int


def check_simplex(simplex, na, nb):
    """Warm-start cache: (k, 2) int32 with 0 <= k <= 4, indices in range."""
    if simplex is None:
        return np.zeros((0, 2), np.int32)
    s = np.asarray(simplex)
    if s.size == 0:
        return np.zeros((0, 2), np.int32)
    if s.dtype.kind not in "iu" or s.ndim != 2 or s.shape[1] != 2 or s.shape[0] > 4:
        raise ValueError(f"simplex: expected a (k, 2) integer array with k <= 4, got {s.dtype} {s.shape}")
    if s.min() < 0 or s[:, 0].max() >= na or s[:, 1].max() >= nb:
        raise ValueError("simplex: index out of range of points_a / points_b")
    return np.ascontiguousarray(s, dtype=np.int32)


def gjk_distance(points_a: ArrayLike, pose_a: ArrayLike, points_b: ArrayLike, pose_b: ArrayLike,
                 radius_a: float = 0.0, radius_b: float = 0.0, simplex: ArrayLike | None = None,
                 max_iterations: int = GJK_MAX_ITERATIONS) -> GjkResult:
    """Distance and closest points between two convex shapes (core points plus radius).

    RTCD 9.5 (GJK) with the signed-volumes sub-distance step (Montanari et al.
    2017); see the module docstring for the shape model and the frames.

    Parameters
    ----------
    points_a : (na, 3) float64
        A's core points in A's model frame (a hull's or box's vertices, a
        sphere's centre, a capsule's segment ends). Interior points are allowed.
    pose_a : (4, 4) float64
        A's model-to-world rigid transform.
    points_b : (nb, 3) float64
    pose_b : (4, 4) float64
    radius_a, radius_b : float
        Radii added around the cores (>= 0).
    simplex : (k, 2) int, optional
        The ``simplex`` of a previous result for the same pair: warm start.
    max_iterations : int
        Cap on support evaluations (the result is then an upper bound).

    Returns
    -------
    GjkResult

    Raises
    ------
    ValueError
        Naming the argument: non-finite or mis-shaped points or poses, a pose
        that is not rigid, a negative radius, a bad ``simplex``.
    """
    pa = check_core(points_a, "points_a")
    pb = check_core(points_b, "points_b")
    ta = check_pose(pose_a, "pose_a")
    tb = check_pose(pose_b, "pose_b")
    ra = check_radius(radius_a, "radius_a")
    rb = check_radius(radius_b, "radius_b")
    s = check_simplex(simplex, len(pa), len(pb))
    dist, pts, core, simp, it, _ = _gjk_query(pa, ta, pb, tb, ra, rb, s, int(max_iterations))
    return GjkResult(
        distance=float(dist),
        point_a=pts[0],
        point_b=pts[1],
        overlap=bool(core or dist <= 0.0),
        core_overlap=bool(core),
        simplex=simp,
        iterations=int(it),
    )
