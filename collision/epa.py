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

Fallback: if EPA reaches its iteration cap, or the polytope stops being a
closed manifold through round-off, the answer is the face normal with the
smallest support value seen: its depth is an upper bound of the true one, and
translating B by it still separates the shapes (it leaves them touching).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

from . import _vec as v
from ._jit import njit
from .gjk import (GJK_MAX_ITERATIONS, GJK_OVERLAP, b_point, check_core, check_pose, check_radius,
                  check_simplex, dir_to_world, gjk_kernel, relative_transform, s1d, s2d, support_pair,
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
# D has no thickness in a direction (both cores flat in one plane, or points,
# or collinear) when the support points extend less than FLAT_EPS * size of D
# from the simplex: the depth is then 0.
FLAT_EPS = 1e-12

# Status codes of epa_kernel.
EPA_CONVERGED = 0
EPA_FLAT = 1
EPA_MAX_ITER_REACHED = 2
EPA_DEGENERATE = 3


# ---------------------------------------------------------------------------
# The polytope: flat arrays of vertices and of triangles with adjacency
# ---------------------------------------------------------------------------
#
# Vertices: vw (D point), va / vb (the A and B points, A's frame), vi (index pair).
# Faces: fv (3 vertex indices, counter-clockwise seen from outside), fadj
# (neighbour across edge k = fv[k] -> fv[k+1]), fadje (that edge's index in the
# neighbour), fn (outward unit normal), fd (signed distance of the plane from
# the origin; +inf for a face without area), alive. Dead slots are reused.


@njit(inline="always")
def _put(out, x):
    out[0] = x[0]
    out[1] = x[1]
    out[2] = x[2]


@njit
def _set_face(f, i, j, k, vw, fv, fn, fd, alive):
    fv[f, 0] = i
    fv[f, 1] = j
    fv[f, 2] = k
    a = v.row(vw, i)
    n = v.cross(v.sub(v.row(vw, j), a), v.sub(v.row(vw, k), a))
    ln = v.norm(n)
    if ln > 0.0:
        n = v.scale(n, 1.0 / ln)
        fd[f] = v.dot(n, a)
    else:
        fd[f] = np.inf
    v.store(fn, f, n if ln > 0.0 else (0.0, 0.0, 0.0))
    alive[f] = True


@njit
def _inside_score(f, vw, fv, fn, fd):
    """Smallest barycentric coordinate of the origin's projection on face ``f``."""
    n = v.row(fn, f)
    p = v.scale(n, fd[f])
    a = v.row(vw, fv[f, 0])
    b = v.row(vw, fv[f, 1])
    c = v.row(vw, fv[f, 2])
    la = v.dot(n, v.cross(v.sub(b, p), v.sub(c, p)))
    lb = v.dot(n, v.cross(v.sub(c, p), v.sub(a, p)))
    lc = v.dot(n, v.cross(v.sub(a, p), v.sub(b, p)))
    s = la + lb + lc
    if not s > 0.0:
        return -np.inf
    return min(la, lb, lc) / s


@njit
def _centroid_dir(pa, pb, rot, trans):
    """Unit direction from A's core centroid to B's (A's frame), or +x."""
    ca = (0.0, 0.0, 0.0)
    for i in range(pa.shape[0]):
        ca = v.add(ca, v.row(pa, i))
    cb = (0.0, 0.0, 0.0)
    for i in range(pb.shape[0]):
        cb = v.add(cb, b_point(pb, rot, trans, i))
    d = v.sub(v.scale(cb, 1.0 / pb.shape[0]), v.scale(ca, 1.0 / pa.shape[0]))
    ln = v.norm(d)
    if ln > 0.0:
        return v.scale(d, 1.0 / ln)
    return (1.0, 0.0, 0.0)


@njit
def _perpendicular(d):
    """A unit vector perpendicular to ``d`` (d != 0)."""
    ax = abs(d[0])
    ay = abs(d[1])
    az = abs(d[2])
    if ax <= ay and ax <= az:
        e = (1.0, 0.0, 0.0)
    elif ay <= az:
        e = (0.0, 1.0, 0.0)
    else:
        e = (0.0, 0.0, 1.0)
    u = v.cross(d, e)
    return v.scale(u, 1.0 / v.norm(u))


@njit
def _add_vertex(pa, pb, rot, trans, ia, ib, k, vw, va, vb, vi):
    a = v.row(pa, ia)
    b = b_point(pb, rot, trans, ib)
    v.store(va, k, a)
    v.store(vb, k, b)
    v.store(vw, k, v.sub(a, b))
    vi[k, 0] = ia
    vi[k, 1] = ib


@njit
def _flat_answer(pa, pb, rot, trans, normal_in_plane, vw, va, vb, n, normal_out, points_out):
    """D has no volume: depth 0. The common point is the origin's combination of the simplex."""
    lam = np.zeros(4)
    if n == 1:
        lam[0] = 1.0
    elif n == 2:
        _, lam[0], lam[1] = s1d(v.row(vw, 0), v.row(vw, 1))
    else:
        _, lam[0], lam[1], lam[2] = s2d(v.row(vw, 0), v.row(vw, 1), v.row(vw, 2))
    c = (0.0, 0.0, 0.0)
    for i in range(n):
        c = v.madd(c, v.scale(v.add(v.row(va, i), v.row(vb, i)), 0.5), lam[i])
    v.store(points_out, 0, c)
    v.store(points_out, 1, c)
    # Any normal of the flat D gives depth 0; take the one nearest the centroid direction.
    g = _centroid_dir(pa, pb, rot, trans)
    if n == 3:
        m = normal_in_plane
        nv = m if v.dot(m, g) >= 0.0 else v.scale(m, -1.0)
    else:
        # Perpendicular to D's direction (n == 2) or anything (n == 1).
        if n == 2:
            d = v.sub(v.row(vw, 1), v.row(vw, 0))
            d = v.scale(d, 1.0 / v.norm(d))
            nv = v.madd(g, d, -v.dot(g, d))
            ln = v.norm(nv)
            nv = v.scale(nv, 1.0 / ln) if ln > 1e-6 else _perpendicular(d)
        else:
            nv = g
    _put(normal_out, nv)
    return 0.0


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
    nv = 0
    for k in range(n_simplex):
        _add_vertex(pa, pb, rot, trans, simplex[k, 0], simplex[k, 1], nv, vw, va, vb, vi)
        nv += 1
    scale = 0.0
    for k in range(nv):
        scale = max(scale, v.norm(v.row(vw, k)))

    # --- Reduce a flat simplex to the sub-simplex that holds the origin -----
    if nv == 4:
        a = v.row(vw, 0)
        e1 = v.sub(v.row(vw, 1), a)
        e2 = v.sub(v.row(vw, 2), a)
        e3 = v.sub(v.row(vw, 3), a)
        ll = max(v.norm(e1), v.norm(e2), v.norm(e3))
        if abs(v.dot(e1, v.cross(e2, e3))) <= FLAT_EPS * ll * ll * ll:
            best = np.inf
            keep = (0, 1, 2)
            for f in range(4):  # the face without corner f, corners ascending (copied in place below)
                i = 1 if f == 0 else 0
                j = 2 if f <= 1 else 1
                k = 2 if f == 3 else 3
                w, _, _, _ = s2d(v.row(vw, i), v.row(vw, j), v.row(vw, k))
                if v.dot(w, w) < best:
                    best = v.dot(w, w)
                    keep = (i, j, k)
            for t in range(3):
                src = keep[t]
                for c in range(3):
                    vw[t, c] = vw[src, c]
                    va[t, c] = va[src, c]
                    vb[t, c] = vb[src, c]
                vi[t, 0] = vi[src, 0]
                vi[t, 1] = vi[src, 1]
            nv = 3
    if nv == 3:
        a = v.row(vw, 0)
        e1 = v.sub(v.row(vw, 1), a)
        e2 = v.sub(v.row(vw, 2), a)
        ll = max(v.dot(e1, e1), v.dot(e2, e2), v.dot(v.sub(e2, e1), v.sub(e2, e1)))
        if v.norm(v.cross(e1, e2)) <= FLAT_EPS * ll:
            best = np.inf
            keep2 = (0, 1)
            for f in range(3):  # the edge without corner f, ends ascending
                i = 1 if f == 0 else 0
                j = 1 if f == 2 else 2
                w, _, _ = s1d(v.row(vw, i), v.row(vw, j))
                if v.dot(w, w) < best:
                    best = v.dot(w, w)
                    keep2 = (i, j)
            for t in range(2):
                src = keep2[t]
                for c in range(3):
                    vw[t, c] = vw[src, c]
                    va[t, c] = va[src, c]
                    vb[t, c] = vb[src, c]
                vi[t, 0] = vi[src, 0]
                vi[t, 1] = vi[src, 1]
            nv = 2
    if nv == 2:
        if v.norm(v.sub(v.row(vw, 1), v.row(vw, 0))) <= FLAT_EPS * max(scale, 1e-300):
            nv = 1

    # --- Blow up to a tetrahedron -------------------------------------------
    if nv == 1:
        s0 = v.row(vw, 0)
        best = -1.0
        bi = 0
        bj = 0
        for k in range(6):
            d = (0.0, 0.0, 0.0)
            if k == 0:
                d = (1.0, 0.0, 0.0)
            elif k == 1:
                d = (-1.0, 0.0, 0.0)
            elif k == 2:
                d = (0.0, 1.0, 0.0)
            elif k == 3:
                d = (0.0, -1.0, 0.0)
            elif k == 4:
                d = (0.0, 0.0, 1.0)
            else:
                d = (0.0, 0.0, -1.0)
            ia, ib = support_pair(pa, pb, rot, d)
            w = v.sub(v.row(pa, ia), b_point(pb, rot, trans, ib))
            dd = v.norm(v.sub(w, s0))
            scale = max(scale, v.norm(w))
            if dd > best:
                best, bi, bj = dd, ia, ib
        if best <= FLAT_EPS * max(scale, 1e-300):
            return _flat_answer(pa, pb, rot, trans, (1.0, 0.0, 0.0), vw, va, vb, 1, normal_out, points_out), 0, \
                EPA_FLAT
        _add_vertex(pa, pb, rot, trans, bi, bj, 1, vw, va, vb, vi)
        nv = 2
    if nv == 2:
        s0 = v.row(vw, 0)
        d = v.sub(v.row(vw, 1), s0)
        d = v.scale(d, 1.0 / v.norm(d))
        u1 = _perpendicular(d)
        u2 = v.cross(d, u1)
        best = -1.0
        bi = 0
        bj = 0
        for k in range(6):
            ang = k * (math.pi / 3.0)
            dirn = v.add(v.scale(u1, math.cos(ang)), v.scale(u2, math.sin(ang)))
            ia, ib = support_pair(pa, pb, rot, dirn)
            w = v.sub(v.row(pa, ia), b_point(pb, rot, trans, ib))
            r = v.sub(w, s0)
            dd = v.norm(v.madd(r, d, -v.dot(r, d)))
            scale = max(scale, v.norm(w))
            if dd > best:
                best, bi, bj = dd, ia, ib
        if best <= FLAT_EPS * scale:
            return _flat_answer(pa, pb, rot, trans, u1, vw, va, vb, 2, normal_out, points_out), 0, EPA_FLAT
        _add_vertex(pa, pb, rot, trans, bi, bj, 2, vw, va, vb, vi)
        nv = 3
    if nv == 3:
        s0 = v.row(vw, 0)
        m = v.cross(v.sub(v.row(vw, 1), s0), v.sub(v.row(vw, 2), s0))
        m = v.scale(m, 1.0 / v.norm(m))
        ia, ib = support_pair(pa, pb, rot, m)
        wp = v.sub(v.row(pa, ia), b_point(pb, rot, trans, ib))
        ja, jb = support_pair(pa, pb, rot, v.scale(m, -1.0))
        wm = v.sub(v.row(pa, ja), b_point(pb, rot, trans, jb))
        hp = v.dot(v.sub(wp, s0), m)
        hm = -v.dot(v.sub(wm, s0), m)
        scale = max(scale, v.norm(wp), v.norm(wm))
        if max(hp, hm) <= FLAT_EPS * scale:
            return _flat_answer(pa, pb, rot, trans, m, vw, va, vb, 3, normal_out, points_out), 0, EPA_FLAT
        if hp >= hm:
            _add_vertex(pa, pb, rot, trans, ia, ib, 3, vw, va, vb, vi)
        else:
            _add_vertex(pa, pb, rot, trans, ja, jb, 3, vw, va, vb, vi)
        nv = 4

    # --- Initial tetrahedron, faces outward -----------------------------------
    a = v.row(vw, 0)
    if v.dot(v.sub(v.row(vw, 1), a), v.cross(v.sub(v.row(vw, 2), a), v.sub(v.row(vw, 3), a))) < 0.0:
        for c in range(3):
            t = vw[1, c]
            vw[1, c] = vw[2, c]
            vw[2, c] = t
            t = va[1, c]
            va[1, c] = va[2, c]
            va[2, c] = t
            t = vb[1, c]
            vb[1, c] = vb[2, c]
            vb[2, c] = t
        for c in range(2):
            ti = vi[1, c]
            vi[1, c] = vi[2, c]
            vi[2, c] = ti
    _set_face(0, 0, 2, 1, vw, fv, fn, fd, alive)
    _set_face(1, 0, 1, 3, vw, fv, fn, fd, alive)
    _set_face(2, 1, 2, 3, vw, fv, fn, fd, alive)
    _set_face(3, 0, 3, 2, vw, fv, fn, fd, alive)
    for f in range(4):
        for k in range(3):
            p = fv[f, k]
            q = fv[f, (k + 1) % 3]
            for g in range(4):
                for e in range(3):
                    if fv[g, e] == q and fv[g, (e + 1) % 3] == p:
                        fadj[f, k] = g
                        fadje[f, k] = e
    nf = 4
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
        _add_vertex(pa, pb, rot, trans, ia, ib, nv, vw, va, vb, vi)
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
            _set_face(f, fv[g, (e + 1) % 3], fv[g, e], wi, vw, fv, fn, fd, alive)
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
        # With coplanar faces (a box's square face is two triangles) the origin's
        # projection may fall in a neighbour of the closest face: among the faces
        # in the converged face's plane take the one that holds it best.
        nf0 = v.row(fn, face)
        tol = EPA_REL_EPS * abs(dmin) + EPA_ABS_EPS * scale
        chosen = face
        best_score = _inside_score(face, vw, fv, fn, fd)
        for f in range(nf):
            if alive[f] and f != face and abs(fd[f] - dmin) <= tol and v.dot(v.row(fn, f), nf0) >= 1.0 - 1e-12:
                sc = _inside_score(f, vw, fv, fn, fd)
                if sc > best_score:
                    best_score = sc
                    chosen = f
        face = chosen
        dmin = fd[face]
        n = v.row(fn, face)
        p = v.scale(n, dmin)
        i, j, k = fv[face, 0], fv[face, 1], fv[face, 2]
        a = v.row(vw, i)
        b = v.row(vw, j)
        c = v.row(vw, k)
        la = max(v.dot(n, v.cross(v.sub(b, p), v.sub(c, p))), 0.0)
        lb = max(v.dot(n, v.cross(v.sub(c, p), v.sub(a, p))), 0.0)
        lc = max(v.dot(n, v.cross(v.sub(a, p), v.sub(b, p))), 0.0)
        s = la + lb + lc
        if s > 0.0:
            la, lb, lc = la / s, lb / s, lc / s
        else:
            la, lb, lc = 1.0, 0.0, 0.0
        pa_c = v.add(v.add(v.scale(v.row(va, i), la), v.scale(v.row(va, j), lb)), v.scale(v.row(va, k), lc))
        pb_c = v.add(v.add(v.scale(v.row(vb, i), la), v.scale(v.row(vb, j), lb)), v.scale(v.row(vb, k), lc))
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
