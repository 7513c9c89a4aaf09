"""Penetration depth of two overlapping convex shapes: the expanding polytope algorithm (EPA).

Shapes are core point sets plus radii, as in :mod:`collision.gjk`. When GJK
finds the cores overlapping, the origin lies inside their Minkowski difference
D = A - B; the penetration depth is the distance from the origin to the
boundary of D, and the direction to that boundary point is the normal.

EPA (van den Bergen, *Proximity queries and penetration depth computation on
3D game objects*, GDC 2001, and *Collision Detection in Interactive 3D
Environments* 4.3.7 and 4.4; RTCD 9.5 points to it) grows a polytope inside D
from GJK's final simplex: take the face closest to the origin, add the
support point of D along its normal, remove the faces that point sees, close
the hole with a fan to the new point. The closest face's distance is a lower
bound of the depth and the support value along its normal an upper bound;
they meet, and EPA stops, when the support point is already on that face.

Frame and sign, as in :mod:`collision.sat`: ``normal`` is a unit vector from A
towards B; ``depth > 0`` is the penetration (translating B by
``depth * normal`` leaves the shapes touching), ``depth < 0`` is minus the gap
when they are apart. The radii add to the depth.

The module is EPA's iteration (:func:`epa_kernel`: closest face, support
point, silhouette walk, fan) and the public query; the polytope's layout,
faces, starting tetrahedron and contact points are :mod:`collision.polytope`,
the start from GJK's simplex :mod:`collision.epa_start`.

Fallback: if EPA reaches its iteration cap, or the polytope stops being a
closed manifold through round-off, the answer is the face normal with the
smallest support value seen: its depth is an upper bound of the true one, and
translating B by it still separates the shapes (it leaves them touching).
"""


from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

from . import _vec as v
from ._jit import njit
from .epa_start import seed_tetrahedron
from .gjk import GJK_MAX_ITERATIONS, GJK_OVERLAP, check_simplex, gjk_kernel
from .polytope import add_vertex, face_contact, set_face, start_tetrahedron
from .support import (b_point, check_core, check_pose, check_radius, dir_to_world, relative_transform, support_pair,
                      to_world)


__all__ = [
    "PenetrationResult",
    "convex_penetration",
    "epa_kernel",
    "EPA_MAX_ITERATIONS",
    "EPA_CONVERGED",
    "EPA_FLAT",
    "EPA_MAX_ITER_REACHED",
    "EPA_DEGENERATE",
]


# Iteration cap: each iteration adds one vertex of D. Box-box needs a few,
# 64-vertex hulls some tens.
EPA_MAX_ITERATIONS = 128
# Converged when the support value along the closest face's normal exceeds the
# face's distance by at most EPA_REL_EPS of the depth plus EPA_ABS_EPS of the
# size of D (the round-off of a dot product with a point of D).
EPA_REL_EPS = 1e-12
EPA_ABS_EPS = 1e-14


# Status codes of epa_kernel.
EPA_CONVERGED = 0
EPA_FLAT = 1
EPA_MAX_ITER_REACHED = 2
EPA_DEGENERATE = 3


@njit(inline="always")
def _put(out, x):
    out[0] = x[0]
    out[1] = x[1]
    out[2] = x[2]


# ---------------------------------------------------------------------------
# EPA
# ---------------------------------------------------------------------------


@njit
def epa_kernel(pa, pb, rot, trans, simplex, n_simplex, max_iter, normal_out, points_out):
    """EPA on the Minkowski difference of two core point sets whose hulls overlap, A's frame.

    The narrow phase calls this after :func:`collision.gjk.gjk_kernel` reported
    ``GJK_OVERLAP``, with GJK's final simplex.

    Parameters
    ----------
    pa : (na, 3) float64
        Core points of A, A's frame.
    pb : (nb, 3) float64
        Core points of B, B's frame.
    rot : (3, 3) float64, trans : (3,) float64
        B's frame in A's frame (``x_A = rot @ x_B + trans``).
    simplex : (k, 2) int32
        GJK's final simplex (index pairs), whose hull contains the origin
        (within GJK's tolerance); ``k = n_simplex`` from 1 to 4 (any other
        count returns ``EPA_DEGENERATE`` with depth 0 at once). A simplex of
        fewer than four points, or a flat one, is blown up to a tetrahedron with
        support points (along the coordinate axes, around the segment, on both
        sides of the triangle).
    n_simplex : int
    max_iter : int
        Cap on added vertices.
    normal_out : (3,) float64
        Receives the unit normal from A towards B (A's frame): translating B
        by ``depth * normal`` leaves the cores touching.
    points_out : (2, 3) float64
        Receives the contact points on the core surfaces, A's frame: row 0 on
        A (the deepest point of A in B), row 1 on B, with
        ``row0 - row1 = depth * normal``.

    Returns
    -------
    depth : float
        Core penetration depth (>= 0).
    iterations : int
        Support points added.
    status : int
        ``EPA_CONVERGED``; ``EPA_FLAT`` (D has no volume: both cores lie in one
        plane or line, depth 0, normal perpendicular to it);
        ``EPA_MAX_ITER_REACHED`` or ``EPA_DEGENERATE`` (round-off broke the
        polytope): the fallback of the module docstring (an upper bound that
        still separates; ``points_out[1] = points_out[0] - depth * normal`` on
        B's supporting plane).
    """
    vcap = max_iter + 8
    fcap = 2 * vcap + 8
    vw = np.empty((vcap, 3))
    va = np.empty((vcap, 3))
    vb = np.empty((vcap, 3))
    vi = np.empty((vcap, 2), np.int32)
    fv = np.empty((fcap, 3), np.int64)
    fadj = np.empty((fcap, 3), np.int64)
    fadje = np.empty((fcap, 3), np.int64)
    fn = np.empty((fcap, 3))
    fd = np.empty(fcap)
    alive = np.zeros(fcap, np.bool_)
    if n_simplex < 1 or n_simplex > 4:
        _put(normal_out, (1.0, 0.0, 0.0))
        for c in range(3):
            points_out[0, c] = 0.0
            points_out[1, c] = 0.0
        return 0.0, 0, EPA_DEGENERATE
    flat, depth, scale = seed_tetrahedron(pa, pb, rot, trans, simplex, n_simplex, vw, va, vb, vi, normal_out,
                                          points_out)
    if flat:
        return depth, 0, EPA_FLAT
    nv = 4
    nf = start_tetrahedron(vw, va, vb, vi, fv, fadj, fadje, fn, fd, alive)
    free = np.empty(fcap, np.int64)
    nfree = 0
    stack_f = np.empty(fcap * 3, np.int64)
    stack_e = np.empty(fcap * 3, np.int64)
    hor_f = np.empty(fcap * 3, np.int64)
    hor_e = np.empty(fcap * 3, np.int64)
    new_f = np.empty(fcap * 3, np.int64)
    removed = np.empty(fcap, np.int64)
    for k in range(nv):
        scale = max(scale, v.norm(v.row(vw, k)))

    best_h = np.inf
    best_n = (1.0, 0.0, 0.0)
    best_a = (0.0, 0.0, 0.0)
    status = EPA_MAX_ITER_REACHED
    face = -1
    iterations = 0
    while True:
        # Closest face.
        face = -1
        dmin = np.inf
        for f in range(nf):
            if alive[f] and fd[f] < dmin:
                dmin = fd[f]
                face = f
        if face < 0:
            status = EPA_DEGENERATE
            break
        n = v.row(fn, face)
        ia, ib = support_pair(pa, pb, rot, n)
        wa = v.row(pa, ia)
        w = v.sub(wa, b_point(pb, rot, trans, ib))
        h = v.dot(w, n)
        if h < best_h:
            best_h, best_n, best_a = h, n, wa
        if h - dmin <= EPA_REL_EPS * abs(h) + EPA_ABS_EPS * scale:
            status = EPA_CONVERGED
            break
        dup = False
        for k in range(nv):
            if vi[k, 0] == ia and vi[k, 1] == ib:
                dup = True
        if dup:
            # In exact arithmetic a vertex of the (convex) polytope cannot lie
            # beyond its closest face, so h <= dmin was caught above: round-off
            # made the polytope non-convex. Take the safe fallback.
            status = EPA_DEGENERATE
            break
        if iterations >= max_iter or nv >= vcap:
            status = EPA_MAX_ITER_REACHED
            break
        iterations += 1
        add_vertex(pa, pb, rot, trans, ia, ib, nv, vw, va, vb, vi)
        wi = nv
        nv += 1
        scale = max(scale, v.norm(w))
        vis_eps = EPA_ABS_EPS * scale
        # Faces seen from w: depth-first from the closest face (van den Bergen's
        # silhouette walk), collecting the horizon as (kept face, its edge).
        alive[face] = False
        nrem = 1
        removed[0] = face
        top = 0
        for k in range(2, -1, -1):
            stack_f[top] = fadj[face, k]
            stack_e[top] = fadje[face, k]
            top += 1
        nh = 0
        while top > 0:
            top -= 1
            g = stack_f[top]
            e = stack_e[top]
            if not alive[g]:
                continue
            if v.dot(v.row(fn, g), v.sub(w, v.row(vw, fv[g, 0]))) > vis_eps:
                alive[g] = False
                removed[nrem] = g
                nrem += 1
                stack_f[top] = fadj[g, (e + 2) % 3]
                stack_e[top] = fadje[g, (e + 2) % 3]
                top += 1
                stack_f[top] = fadj[g, (e + 1) % 3]
                stack_e[top] = fadje[g, (e + 1) % 3]
                top += 1
            else:
                hor_f[nh] = g
                hor_e[nh] = e
                nh += 1
        for k in range(nrem):
            free[nfree] = removed[k]
            nfree += 1
        # Fan from the horizon to w: new face (s, t, w) over the kept face's edge t -> s.
        ok = nh >= 3
        for k in range(nh):
            if nfree > 0:
                nfree -= 1
                f = free[nfree]
            elif nf < fcap:
                f = nf
                nf += 1
            else:
                ok = False
                break
            g = hor_f[k]
            e = hor_e[k]
            set_face(f, fv[g, (e + 1) % 3], fv[g, e], wi, vw, fv, fn, fd, alive)
            fadj[f, 0] = g
            fadje[f, 0] = e
            fadj[g, e] = f
            fadje[g, e] = 0
            new_f[k] = f
        if ok:
            # The horizon must be one simple loop: every vertex starts one edge.
            for k in range(nh):
                for j in range(k + 1, nh):
                    if fv[new_f[k], 1] == fv[new_f[j], 1]:
                        ok = False
        if ok:
            for k in range(nh):
                f = new_f[k]
                t = fv[f, 1]
                found = 0
                for j in range(nh):
                    g = new_f[j]
                    if fv[g, 0] == t:
                        found += 1
                        fadj[f, 1] = g
                        fadje[f, 1] = 2
                        fadj[g, 2] = f
                        fadje[g, 2] = 1
                if found != 1:
                    ok = False
        if not ok:
            status = EPA_DEGENERATE
            break

    if status == EPA_CONVERGED:
        # With coplanar faces (a box's square face is two triangles) the origin's projection may
        # fall in a neighbour of the closest face: face_contact picks the best of that plane.
        n, dmin, pa_c, pb_c = face_contact(face, dmin, EPA_REL_EPS * abs(dmin) + EPA_ABS_EPS * scale, nf, vw, va,
                                           vb, fv, fn, fd, alive)
        depth = max(dmin, 0.0)
        _put(normal_out, n)
        v.store(points_out, 0, pa_c)
        v.store(points_out, 1, pb_c)
        return depth, iterations, status
    # Fallback: the direction with the smallest support value seen.
    depth = max(best_h, 0.0)
    _put(normal_out, best_n)
    v.store(points_out, 0, best_a)
    v.store(points_out, 1, v.madd(best_a, best_n, -depth))
    return depth, iterations, status


# ---------------------------------------------------------------------------
# The public query
# ---------------------------------------------------------------------------


@njit
def penetration_kernel(pa, pb, rot, trans, ra, rb, simplex_in, n_in, gjk_iter, epa_iter, normal_out,
                       points_out, simplex_out):
    """GJK, then EPA if the cores overlap, with the radii added; A's frame.

    Parameters are those of :func:`collision.gjk.gjk_kernel` and
    :func:`epa_kernel`, plus the radii ``ra``, ``rb``.

    Returns
    -------
    depth : float
        Penetration of the shapes (radii included, > 0), or minus their gap.
    n_simplex : int
        Rows of ``simplex_out`` filled (GJK's final simplex, for warm start).
    iterations : int
        GJK iterations plus EPA iterations.
    status : int
        -1 when the cores are apart (no EPA), otherwise EPA's status.
    """
    pts = np.empty((2, 3))
    dc, ns, git, gstatus = gjk_kernel(pa, pb, rot, trans, simplex_in, n_in, gjk_iter, simplex_out, pts)
    if gstatus != GJK_OVERLAP:
        ca = v.row(pts, 0)
        cb = v.row(pts, 1)
        u = v.sub(cb, ca)
        u = v.scale(u, 1.0 / v.norm(u))
        _put(normal_out, u)
        v.store(points_out, 0, v.madd(ca, u, ra))
        v.store(points_out, 1, v.madd(cb, u, -rb))
        return ra + rb - dc, ns, git, -1
    depth, eit, estatus = epa_kernel(pa, pb, rot, trans, simplex_out, ns, epa_iter, normal_out, points_out)
    n = (normal_out[0], normal_out[1], normal_out[2])
    v.store(points_out, 0, v.madd(v.row(points_out, 0), n, ra))
    v.store(points_out, 1, v.madd(v.row(points_out, 1), n, -rb))
    return depth + ra + rb, ns, git + eit, estatus


@njit
def _penetration_query(pa, pose_a, pb, pose_b, ra, rb, simplex_in, gjk_iter, epa_iter):
    rot, trans = relative_transform(pose_a, pose_b)
    normal = np.empty(3)
    pts = np.empty((2, 3))
    simplex = np.empty((4, 2), np.int32)
    depth, _, it, status = penetration_kernel(pa, pb, rot, trans, ra, rb, simplex_in, simplex_in.shape[0],
                                              gjk_iter, epa_iter, normal, pts, simplex)
    out_n = np.empty(3)
    out_p = np.empty((2, 3))
    _put(out_n, dir_to_world(pose_a, (normal[0], normal[1], normal[2])))
    v.store(out_p, 0, to_world(pose_a, v.row(pts, 0)))
    v.store(out_p, 1, to_world(pose_a, v.row(pts, 1)))
    return depth, out_n, out_p, it, status


@dataclass(frozen=True)
class PenetrationResult:
    """Outcome of :func:`convex_penetration`; world coordinates.

    Attributes
    ----------
    depth : float
        Penetration depth, radii included (> 0), or minus the gap when the
        shapes are apart (< 0); ~0 when they touch.
    normal : (3,) float64
        Unit normal from A towards B: translating B by ``depth * normal``
        leaves the shapes touching. When apart, along ``point_b - point_a``.
    point_a : (3,) float64
        On A's surface: the deepest point of A inside B (the closest point of
        A to B when apart).
    point_b : (3,) float64
        On B's surface, with ``point_a - point_b = depth * normal``.
    iterations : int
        GJK iterations plus EPA iterations. EPA reaching its cap means the
        fallback answer of the module docstring.
    """

    depth: float
    normal: NDArray[np.float64]
    point_a: NDArray[np.float64]
    point_b: NDArray[np.float64]
    iterations: int


def convex_penetration(points_a: ArrayLike, pose_a: ArrayLike, points_b: ArrayLike, pose_b: ArrayLike,
                       radius_a: float = 0.0, radius_b: float = 0.0, simplex: ArrayLike | None = None,
                       max_iterations: int = EPA_MAX_ITERATIONS) -> PenetrationResult:
    """Penetration depth, normal and contact points of two convex shapes (core points plus radius).

    Runs GJK (:func:`collision.gjk.gjk_distance`); when the shapes are apart
    returns ``depth = -distance`` with the normal along ``point_b - point_a``;
    when only the radii overlap the depth follows from GJK's core distance;
    when the cores overlap, EPA (module docstring) finds the core depth and the
    radii are added.

    Parameters
    ----------
    points_a : (na, 3) float64
        A's core points, A's model frame.
    pose_a : (4, 4) float64
        A's model-to-world rigid transform.
    points_b : (nb, 3) float64
    pose_b : (4, 4) float64
    radius_a, radius_b : float
        Radii around the cores (>= 0).
    simplex : (k, 2) int, optional
        GJK warm start (``GjkResult.simplex`` of a previous query of the pair).
    max_iterations : int
        EPA's cap on added vertices.

    Returns
    -------
    PenetrationResult

    Raises
    ------
    ValueError
        Naming the argument, as :func:`collision.gjk.gjk_distance`.
    """
    pa = check_core(points_a, "points_a")
    pb = check_core(points_b, "points_b")
    ta = check_pose(pose_a, "pose_a")
    tb = check_pose(pose_b, "pose_b")
    ra = check_radius(radius_a, "radius_a")
    rb = check_radius(radius_b, "radius_b")
    s = check_simplex(simplex, len(pa), len(pb))
    depth, normal, pts, it, _ = _penetration_query(pa, ta, pb, tb, ra, rb, s, GJK_MAX_ITERATIONS,
                                                   int(max_iterations))
    return PenetrationResult(depth=float(depth), normal=normal, point_a=pts[0], point_b=pts[1],
                             iterations=int(it))
