"""EPA's polytope: a closed triangle mesh inside the Minkowski difference D = A - B, in flat arrays.

The expanding polytope algorithm (:mod:`collision.epa`) keeps a convex
polytope whose vertices are support points of D and that holds the origin;
this module is its bookkeeping, with no policy of its own: adding a vertex,
making a face, the starting tetrahedron with its faces turned outward, the
face closest to the origin, the expansion by a new vertex (van den Bergen's
silhouette walk, *Collision Detection in Interactive 3D Environments* 4.4.2:
remove the faces the point sees, depth-first from the closest face, and
close the hole with a fan to the point), and the contact points on the
converged face.

Arrays (the caller allocates them; :func:`collision.epa.epa_kernel` sizes
them from its iteration cap):

- vertices: ``vw`` (k, 3) the D point, ``va`` / ``vb`` (k, 3) the A and B
  points (A's frame), ``vi`` (k, 2) int32 their core index pair;
- faces: ``fv`` (f, 3) int64 vertex indices, counter-clockwise seen from
  outside; ``fadj`` (f, 3) the neighbour across edge ``e = fv[e] -> fv[e + 1]``,
  ``fadje`` (f, 3) that edge's index in the neighbour; ``fn`` (f, 3) outward
  unit normal; ``fd`` (f,) signed distance of the face's plane from the
  origin (``+inf`` for a face without area); ``alive`` (f,) bool. Dead slots
  go on a free list and are reused.
"""

import numpy as np

from . import _vec as v
from ._jit import njit
from .support import b_point

__all__ = ["add_vertex", "set_face", "start_tetrahedron", "closest_face", "expand", "face_contact"]


@njit
def set_face(f, i, j, k, vw, fv, fn, fd, alive):
    """Face ``f`` := ``(i, j, k)``: its plane from the vertices, alive."""
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
def add_vertex(pa, pb, rot, trans, ia, ib, k, vw, va, vb, vi):
    """Vertex ``k`` := the support pair ``(ia, ib)``: A's point, B's point in A's frame, their difference."""
    a = v.row(pa, ia)
    b = b_point(pb, rot, trans, ib)
    v.store(va, k, a)
    v.store(vb, k, b)
    v.store(vw, k, v.sub(a, b))
    vi[k, 0] = ia
    vi[k, 1] = ib


@njit
def start_tetrahedron(vw, va, vb, vi, fv, fadj, fadje, fn, fd, alive):
    """Faces 0..3 of the tetrahedron ``vw[:4]`` (not flat), outward, with their adjacency.

    Swaps vertices 1 and 2 (in all four vertex arrays) if the tetrahedron is
    wound inward. Returns the face count, 4.
    """
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
    set_face(0, 0, 2, 1, vw, fv, fn, fd, alive)
    set_face(1, 0, 1, 3, vw, fv, fn, fd, alive)
    set_face(2, 1, 2, 3, vw, fv, fn, fd, alive)
    set_face(3, 0, 3, 2, vw, fv, fn, fd, alive)
    for f in range(4):
        for k in range(3):
            p = fv[f, k]
            q = fv[f, (k + 1) % 3]
            for g in range(4):
                for e in range(3):
                    if fv[g, e] == q and fv[g, (e + 1) % 3] == p:
                        fadj[f, k] = g
                        fadje[f, k] = e
    return 4


@njit
def closest_face(nf, alive, fd):
    """``(face, distance)`` of the live face among ``0..nf-1`` whose plane is nearest the origin
    (``(-1, inf)`` when none has a plane)."""
    face = -1
    dmin = np.inf
    for f in range(nf):
        if alive[f] and fd[f] < dmin:
            dmin = fd[f]
            face = f
    return face, dmin


@njit
def expand(face, w, wi, vis_eps, vw, fv, fadj, fadje, fn, fd, alive, nf, fcap, free, nfree, stack_f, stack_e,
           hor_f, hor_e, new_f, removed):
    """Grow the polytope by vertex ``wi`` (D point ``w``), seen from its closest face ``face``.

    Every face that ``w`` lies in front of (by more than ``vis_eps``) and that
    is connected to ``face`` through such faces dies; the horizon's edges get
    new faces to ``wi``, stitched to their neighbours. ``free`` / ``nfree``
    is the free list of face slots, ``nf`` the slots in use, ``fcap`` the
    capacity; ``stack_*``, ``hor_*``, ``new_f``, ``removed`` are scratch.

    Returns
    -------
    ok : bool
        The new faces close the polytope: the horizon is one simple loop of
        at least three edges and there was room. False means round-off broke
        the polytope (the caller falls back).
    nf, nfree : int
        The updated counts.
    """
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
    return ok, nf, nfree


@njit
def face_contact(face, dmin, tol, nf, vw, va, vb, fv, fn, fd, alive):
    """Normal, distance and contact points on A and B (A's frame) of the converged closest face.

    Among the live faces in the plane of ``face`` (distance within ``tol``,
    normals within 1e-12) takes the one whose triangle holds the origin's
    projection best, and interpolates its vertices' A and B points with the
    projection's barycentric weights (clamped at 0). Returns
    ``(normal, distance, point_a, point_b)``.
    """
    # With coplanar faces (a box's square face is two triangles) the origin's
    # projection may fall in a neighbour of the closest face: among the faces
    # in the converged face's plane take the one that holds it best.
    nf0 = v.row(fn, face)
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
    return n, dmin, pa_c, pb_c
