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
from ._validate import MAX_COORD, as_array, as_number
from .transform import POSE_ERRORS, as_pose, check_pose_kernel

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
# A triangle of the simplex whose sine of smallest angle (|n| / L^2) is below
# this is checked against its edges too: its plane projection loses digits.
_THIN = 1e-4

# A tetrahedron whose volume (times 6) is below this times the cube of its
# longest edge is flat: its signed volumes are round-off, so the faces decide.
_FLAT_TET = 1e-12

# Status codes of gjk_kernel.
GJK_SEPARATED = 0
GJK_OVERLAP = 1
GJK_MAX_ITER_REACHED = 2


# ---------------------------------------------------------------------------
# Support mapping
# ---------------------------------------------------------------------------


@njit(inline="always")
def _rot(r, p):
    """``r @ p`` for a (3, 3) array and a tuple."""
    return (r[0, 0] * p[0] + r[0, 1] * p[1] + r[0, 2] * p[2],
            r[1, 0] * p[0] + r[1, 1] * p[1] + r[1, 2] * p[2],
            r[2, 0] * p[0] + r[2, 1] * p[1] + r[2, 2] * p[2])


@njit(inline="always")
def _rot_t(r, p):
    """``r.T @ p``."""
    return (r[0, 0] * p[0] + r[1, 0] * p[1] + r[2, 0] * p[2],
            r[0, 1] * p[0] + r[1, 1] * p[1] + r[2, 1] * p[2],
            r[0, 2] * p[0] + r[1, 2] * p[1] + r[2, 2] * p[2])


@njit(inline="always")
def b_point(pb, rot, trans, j):
    """Core point ``j`` of B in A's frame: ``rot @ pb[j] + trans``."""
    return v.add(_rot(rot, v.row(pb, j)), (trans[0], trans[1], trans[2]))


@njit
def support_index(pts, d):
    """Index of the point of ``pts`` (n, 3) with the largest ``pts[i] . d`` (first on ties).

    Brute force over the points (RTCD 9.5, "support mapping"); fine for hulls
    up to a few hundred vertices.
    """
    best = 0
    best_s = pts[0, 0] * d[0] + pts[0, 1] * d[1] + pts[0, 2] * d[2]
    for i in range(1, pts.shape[0]):
        s = pts[i, 0] * d[0] + pts[i, 1] * d[1] + pts[i, 2] * d[2]
        if s > best_s:
            best_s = s
            best = i
    return best


@njit(inline="always")
def support_pair(pa, pb, rot, d):
    """Support of the Minkowski difference A - B along ``d`` (A's frame): ``(ia, ib)``.

    A's point maximises ``a . d``; B's minimises ``(rot b + t) . d``, i.e.
    maximises ``b . (-rot.T d)`` in B's own frame (no point of B is moved).
    """
    ia = support_index(pa, d)
    ib = support_index(pb, _rot_t(rot, v.scale(d, -1.0)))
    return ia, ib


# ---------------------------------------------------------------------------
# Sub-distance: closest point of a simplex to the origin (signed volumes)
# ---------------------------------------------------------------------------


@njit
def s1d(a, b):
    """Closest point to the origin on the segment ``ab``: ``(v, la, lb)``, ``v = la a + lb b``.

    Montanari et al. 2017, S1D, written as the clamped projection parameter
    (RTCD 5.1.2). A zero-length segment is its first point.
    """
    t = v.sub(b, a)
    tt = v.dot(t, t)
    if tt <= 0.0:
        return a, 1.0, 0.0
    s = -v.dot(a, t) / tt
    if s <= 0.0:
        return a, 1.0, 0.0
    if s >= 1.0:
        return b, 0.0, 1.0
    return v.madd(a, t, s), 1.0 - s, s


@njit(inline="always")
def _base_weights(p, i, j, k, lk):
    """Weights of ``p = li i + lj j + lk k`` given ``lk``: ``lj`` by projection on the edge ``ij``."""
    e = v.sub(j, i)
    lj = v.dot(v.madd(v.sub(p, i), v.sub(k, i), -lk), e) / v.dot(e, e)
    lj = min(max(lj, 0.0), 1.0 - lk)
    return max(1.0 - lj - lk, 0.0), lj, lk  # (1 - lj) - lk can round to -1e-33


@njit
def s2d(a, b, c):
    """Closest point to the origin on the triangle ``abc``: ``(v, la, lb, lc)``.

    Montanari et al. 2017, S2D: project the origin on the triangle's plane,
    take its barycentric coordinates as signed areas (here measured along the
    normal instead of in the best-aligned coordinate plane: same signs, same
    ratios); inside, the projection is the answer, otherwise the closest of
    the edges opposite a non-positive coordinate (S1D). A collinear triangle
    (no normal) tests all three edges; a thin one (sine of its smallest angle
    below ``_THIN``) tests them as well and keeps the closest answer, an edge
    when it is as close to within 1e-12 of the size: the thin triangle's
    normal, hence its projection and weights, have lost digits.
    """
    ab = v.sub(b, a)
    ac = v.sub(c, a)
    bc = v.sub(c, b)
    n = v.cross(ab, ac)
    nn = v.dot(n, n)
    ll = max(v.dot(ab, ab), v.dot(ac, ac), v.dot(bc, bc))
    test_a = True
    test_b = True
    test_c = True
    best = np.inf
    rv = a
    ra, rb, rc = 1.0, 0.0, 0.0
    if nn > 0.0:
        p = v.scale(n, v.dot(n, a) / nn)
        la = v.dot(n, v.cross(v.sub(b, p), v.sub(c, p)))
        lb = v.dot(n, v.cross(v.sub(c, p), v.sub(a, p)))
        lc = v.dot(n, v.cross(v.sub(a, p), v.sub(b, p)))
        if la > 0.0 and lb > 0.0 and lc > 0.0:
            s = la + lb + lc
            # Weights: the apex's from the areas, the base's by projection along
            # the longest edge, so that they reproduce p even for a needle.
            lab = v.dot(ab, ab)
            lbc = v.dot(bc, bc)
            if lab >= lbc and lab >= v.dot(ac, ac):
                ra, rb, rc = _base_weights(p, a, b, c, lc / s)
            elif lbc >= lab and lbc >= v.dot(ac, ac):
                rb, rc, ra = _base_weights(p, b, c, a, la / s)
            else:
                rc, ra, rb = _base_weights(p, c, a, b, lb / s)
            rv = p
            if nn >= _THIN * _THIN * ll * ll:
                return rv, ra, rb, rc
            # Thin: an edge within round-off of the projection wins (its weights
            # are well conditioned, the projection's are not).
            best = v.norm(p) + 1e-12 * math.sqrt(ll)
            best = best * best
        else:
            test_a = la <= 0.0
            test_b = lb <= 0.0
            test_c = lc <= 0.0
    if test_c:
        w, x, y = s1d(a, b)
        d2 = v.dot(w, w)
        if d2 < best:
            best, rv, ra, rb, rc = d2, w, x, y, 0.0
    if test_a:
        w, x, y = s1d(b, c)
        d2 = v.dot(w, w)
        if d2 < best:
            best, rv, ra, rb, rc = d2, w, 0.0, x, y
    if test_b:
        w, x, y = s1d(c, a)
        d2 = v.dot(w, w)
        if d2 < best:
            best, rv, ra, rb, rc = d2, w, y, 0.0, x
    return rv, ra, rb, rc


@njit(inline="always")
def _det3(a, b, c):
    return v.dot(a, v.cross(b, c))


@njit
def s3d(a, b, c, d):
    """Closest point to the origin in the tetrahedron ``abcd``: ``(v, la, lb, lc, ld)``.

    Montanari et al. 2017, S3D: the barycentric coordinates of the origin are
    the signed volumes of the tetrahedra with the origin in place of each
    corner over the whole volume. All of the volume's sign: the origin is
    inside (``v = 0``). Otherwise the closest of the faces opposite a corner
    whose volume has not that sign (S2D). A flat tetrahedron (volume below
    ``_FLAT_TET`` times the cube of its longest edge) tests all four faces.
    """
    z = (0.0, 0.0, 0.0)
    ca = _det3(b, c, d)
    cb = -_det3(a, v.sub(c, a), v.sub(d, a))
    cc = _det3(v.sub(b, a), v.scale(a, -1.0), v.sub(d, a))
    cd = _det3(v.sub(b, a), v.sub(c, a), v.scale(a, -1.0))
    det = _det3(v.sub(b, a), v.sub(c, a), v.sub(d, a))
    ll = max(v.norm2(v.sub(b, a)), v.norm2(v.sub(c, a)), v.norm2(v.sub(d, a)),
             v.norm2(v.sub(c, b)), v.norm2(v.sub(d, b)), v.norm2(v.sub(d, c)))
    if abs(det) <= _FLAT_TET * ll * math.sqrt(ll):
        det = 0.0  # flat: the signs are round-off; the faces cover the tetrahedron
    inside = det != 0.0 and ca * det > 0.0 and cb * det > 0.0 and cc * det > 0.0 and cd * det > 0.0
    best = np.inf
    rv = a
    ra, rb, rc, rd = 1.0, 0.0, 0.0, 0.0
    if inside:
        s = ca + cb + cc + cd
        ra, rb, rc, rd = ca / s, cb / s, cc / s, cd / s
        res = v.add(v.add(v.scale(a, ra), v.scale(b, rb)), v.add(v.scale(c, rc), v.scale(d, rd)))
        if v.norm2(res) <= 1e-24 * ll:
            return z, ra, rb, rc, rd
        # Thin tetrahedron: its weights miss the origin by |res|. A face closer
        # to the origin than that is the better answer (its weights reproduce
        # its point); otherwise keep v = 0 with these weights.
        rv = z
        best = v.norm2(res)
        det = 0.0
    if ca * det <= 0.0:
        w, x, y, q = s2d(b, c, d)
        d2 = v.dot(w, w)
        if d2 < best:
            best, rv, ra, rb, rc, rd = d2, w, 0.0, x, y, q
    if cb * det <= 0.0:
        w, x, y, q = s2d(a, c, d)
        d2 = v.dot(w, w)
        if d2 < best:
            best, rv, ra, rb, rc, rd = d2, w, x, 0.0, y, q
    if cc * det <= 0.0:
        w, x, y, q = s2d(a, b, d)
        d2 = v.dot(w, w)
        if d2 < best:
            best, rv, ra, rb, rc, rd = d2, w, x, y, 0.0, q
    if cd * det <= 0.0:
        w, x, y, q = s2d(a, b, c)
        d2 = v.dot(w, w)
        if d2 < best:
            best, rv, ra, rb, rc, rd = d2, w, x, y, q, 0.0
    return rv, ra, rb, rc, rd


@njit
def subdistance(sw, n, lam):
    """Closest point to the origin of the simplex ``sw[:n]`` (n = 1..4).

    Writes the barycentric weights into ``lam[:n]`` (0 for a point that is not
    needed) and returns the closest point ``v`` as a tuple.
    """
    a = v.row(sw, 0)
    if n == 1:
        lam[0] = 1.0
        return a
    b = v.row(sw, 1)
    if n == 2:
        w, lam[0], lam[1] = s1d(a, b)
        return w
    c = v.row(sw, 2)
    if n == 3:
        w, lam[0], lam[1], lam[2] = s2d(a, b, c)
        return w
    w, lam[0], lam[1], lam[2], lam[3] = s3d(a, b, c, v.row(sw, 3))
    return w


@njit
def compact(sw, sa, sb, si, lam, n):
    """Drop the simplex points whose weight is 0; returns the new size."""
    k = 0
    for i in range(n):
        if lam[i] > 0.0:
            if k != i:
                for j in range(3):
                    sw[k, j] = sw[i, j]
                    sa[k, j] = sa[i, j]
                    sb[k, j] = sb[i, j]
                si[k, 0] = si[i, 0]
                si[k, 1] = si[i, 1]
                lam[k] = lam[i]
            k += 1
    return k


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
# Poses and the public query
# ---------------------------------------------------------------------------


@njit
def relative_transform(pose_a, pose_b):
    """B's frame in A's frame: ``(rot, trans)`` with ``x_A = rot @ x_B + trans``.

    ``rot = Ra.T Rb``, ``trans = Ra.T (tb - ta)`` for 4x4 rigid poses (parry's ``pos12``).
    """
    rot = np.empty((3, 3))
    trans = np.empty(3)
    for i in range(3):
        for j in range(3):
            rot[i, j] = pose_a[0, i] * pose_b[0, j] + pose_a[1, i] * pose_b[1, j] + pose_a[2, i] * pose_b[2, j]
        trans[i] = (pose_a[0, i] * (pose_b[0, 3] - pose_a[0, 3]) + pose_a[1, i] * (pose_b[1, 3] - pose_a[1, 3])
                    + pose_a[2, i] * (pose_b[2, 3] - pose_a[2, 3]))
    return rot, trans


@njit(inline="always")
def to_world(pose, p):
    """``R p + t`` for a 4x4 pose and a tuple."""
    return (pose[0, 0] * p[0] + pose[0, 1] * p[1] + pose[0, 2] * p[2] + pose[0, 3],
            pose[1, 0] * p[0] + pose[1, 1] * p[1] + pose[1, 2] * p[2] + pose[1, 3],
            pose[2, 0] * p[0] + pose[2, 1] * p[1] + pose[2, 2] * p[2] + pose[2, 3])


@njit(inline="always")
def dir_to_world(pose, d):
    return (pose[0, 0] * d[0] + pose[0, 1] * d[1] + pose[0, 2] * d[2],
            pose[1, 0] * d[0] + pose[1, 1] * d[1] + pose[1, 2] * d[2],
            pose[2, 0] * d[0] + pose[2, 1] * d[1] + pose[2, 2] * d[2])


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


def check_pose(pose, name):
    """A float64 (4, 4) rigid transform, or ``ValueError`` naming ``name``."""
    p = as_pose(pose, name)
    code = check_pose_kernel(p)
    if code:
        raise ValueError(f"{name}: {POSE_ERRORS[code]}")
    return p


@njit
def _all_finite(a):
    for x in a.flat:
        if not math.isfinite(x):
            return False
    return True


def check_core(points, name):
    """Core points as a C-contiguous (n, 3) float64 array, n >= 1, finite."""
    if (type(points) is np.ndarray and points.dtype == np.float64 and points.ndim == 2
            and points.shape[1] == 3 and points.shape[0] > 0 and points.flags.c_contiguous):
        if not _all_finite(points):  # the common case, without as_array's temporaries
            raise ValueError(f"{name}: contains NaN or infinity")
        return points
    pts = as_array(points, name, (3,))
    if pts.ndim == 1:
        pts = pts.reshape(1, 3)
    if pts.ndim != 2 or len(pts) == 0:
        raise ValueError(f"{name}: expected a non-empty (n, 3) array, got shape {pts.shape}")
    return np.ascontiguousarray(pts)


def check_radius(r, name):
    return as_number(r, name, low=0.0, high=MAX_COORD)


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
