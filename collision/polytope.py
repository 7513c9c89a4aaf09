"""EPA's polytope: a closed triangle mesh inside the Minkowski difference D = A - B, in flat arrays.

The expanding polytope algorithm (:mod:`collision.epa`) keeps a convex
polytope whose vertices are support points of D and that holds the origin.
This module holds its layout and the steps that have no policy of their own:
adding a vertex, making a face (its plane), the starting tetrahedron with its
faces turned outward and linked to their neighbours, and the contact points
on the converged closest face. The expansion itself (closest face, support
point, the silhouette walk and the fan of new faces) is EPA's loop in
:func:`collision.epa.epa_kernel`, written out there: moved here as functions
taking a dozen arrays each, inlined by numba or not, a query measured about
15% slower.

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

__all__ = ["add_vertex", "set_face", "start_tetrahedron", "face_contact"]


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
