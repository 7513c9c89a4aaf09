"""EPA's start: GJK's final simplex blown up to a tetrahedron around the origin.

GJK stops with a simplex of one to four support points of D = A - B whose
hull holds the origin (to its tolerance); EPA (:mod:`collision.epa`) needs a
tetrahedron with volume. A flat simplex is first cut to the sub-simplex that
holds the origin; then points are added by support points of D: along the
coordinate axes for a point, around a segment, on both sides of a triangle
(van den Bergen, *Collision Detection in Interactive 3D Environments* 4.4.1).
When no support point leaves the simplex's line or plane, D itself is flat
(both cores in one plane or on one line): the depth is 0 and the answer is
written at once (:func:`flat_answer`).
"""

import math

import numpy as np

from . import _vec as v
from ._jit import njit
from .polytope import add_vertex
from .simplex import s1d, s2d
from .support import b_point, support_pair

__all__ = ["seed_tetrahedron", "flat_answer", "FLAT_EPS"]


# D has no thickness in a direction (both cores flat in one plane, or points,
# or collinear) when the support points extend less than FLAT_EPS * size of D
# from the simplex: the depth is then 0.
FLAT_EPS = 1e-12


@njit
def _put(out, x):
    out[0] = x[0]
    out[1] = x[1]
    out[2] = x[2]


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
def flat_answer(pa, pb, rot, trans, normal_in_plane, vw, va, vb, n, normal_out, points_out):
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
def seed_tetrahedron(pa, pb, rot, trans, simplex, n_simplex, vw, va, vb, vi, normal_out, points_out):
    """Polytope vertices 0..3 from GJK's final simplex ``simplex[:n_simplex]`` (1 to 4 index pairs).

    Parameters are those of :func:`collision.epa.epa_kernel`; ``vw``, ``va``,
    ``vb``, ``vi`` are the polytope's vertex arrays
    (:mod:`collision.polytope`, at least 4 rows).

    Returns
    -------
    flat : bool
        D has no volume: ``normal_out`` and ``points_out`` hold the answer
        (depth 0, :func:`flat_answer`). Otherwise ``vw[:4]`` is a
        tetrahedron with volume.
    depth : float
        0.
    scale : float
        The largest ``|w|`` of the support points seen (the size that
        round-off scales with).
    """
    nv = 0
    for k in range(n_simplex):
        add_vertex(pa, pb, rot, trans, simplex[k, 0], simplex[k, 1], nv, vw, va, vb, vi)
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
            return True, flat_answer(pa, pb, rot, trans, (1.0, 0.0, 0.0), vw, va, vb, 1, normal_out, points_out), \
                scale
        add_vertex(pa, pb, rot, trans, bi, bj, 1, vw, va, vb, vi)
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
            return True, flat_answer(pa, pb, rot, trans, u1, vw, va, vb, 2, normal_out, points_out), scale
        add_vertex(pa, pb, rot, trans, bi, bj, 2, vw, va, vb, vi)
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
            return True, flat_answer(pa, pb, rot, trans, m, vw, va, vb, 3, normal_out, points_out), scale
        if hp >= hm:
            add_vertex(pa, pb, rot, trans, ia, ib, 3, vw, va, vb, vi)
        else:
            add_vertex(pa, pb, rot, trans, ja, jb, 3, vw, va, vb, vi)
        nv = 4
    return False, 0.0, scale
