"""Contact manifolds of two hexahedra (boxes) with the hull kernel's exact arithmetic, compactly.

A box is a convex hull of 8 vertices, 6 four-sided faces and 12 edges, three faces
around every vertex. For such a pair :func:`collide_box_box_into` computes the manifold
:func:`collision.manifold.collide_hull_hull_into` computes, bit for bit (kind, normal, points,
depths, feature ids and coherence cache): the same separating-axis test (D. Gregorius, GDC
2013: the 6 face normals and the edge pairs whose Gauss-map arcs cross, in the same order and
with the same tie rule), the same axis choice and coherence cache, the same clipping
(Sutherland-Hodgman, RTCD 8.3.4), contact reduction and feature ids, or the closest points of
two edges (RTCD 5.1.9). It queries all six faces of each box, as the hull kernel's brute-force
twin does.

One step is shorter than the hull kernel's: when a box is a parallelepiped (a cuboid, or any
box whose edges run in three directions), its 12 edges are 3 classes of 4 parallel edges, and
the 16 edge pairs of a class of A and a class of B share one axis ``L = e_A x e_B``. Along it
the two boxes' separation is at most ``|t . L| - r_A(L) - r_B(L)`` (RTCD 4.4.1's closed form,
with ``r(L)`` the sum of ``|h_k . L|`` over the half edge vectors ``h_k``): every edge pair of the
class pair measures a separation along ``L`` or ``-L``, and neither exceeds it. When that bound
is below what an edge axis needs to be chosen over the best face (the hull kernel's relative and
absolute tolerances, and below the margin that would make it separating), the 16 pairs are not
visited. Upright stacks are where this pays: their horizontal edge pairs tie the face axis to
rounding, every one of them a square root, and none is ever chosen. The manifold is unchanged;
the count of features tested is lower, and the returned SAT value is the largest over the axes
visited, so it can be lower than the hull kernel's by less than that tolerance (a skipped edge
pair that measured a hair more than the chosen face).

Why a second copy of the algorithm: the hull kernel takes each hull as 13
arrays plus a tuple of 21 scratch arrays, and numba counts references on every
array it passes to a compiled call (an atomic add and subtract each); for a
box pair that bookkeeping cost more than the geometry (measured: ~2.4 us of
~6 us per pair, a call that returns at once). Here a box is one row of floats
and one row of ints (:func:`box_rows`) and the scratch is three arrays, so a
call passes a dozen arrays instead of sixty. The SAT values are the hull
kernel's (the same products summed in the same order); the closed form above
only decides which edge pairs need not be measured, so it cannot flip the choice
between near-equal axes; with the same values the two paths give the same
manifold, tested on random pairs (``tests/collision/test_box_box.py``).

Row layout (:func:`box_rows`): floats ``[vertices (8 x 3) | normals (6 x 3) |
offsets (6) | centre (3) | half edge vectors (3 x 3) | parallelepiped (1: yes, 0: no)]`` (61),
ints ``[face loops (6 x 4) | faces around each vertex (8 x 3) | edge vertices (12 x 2) |
edge faces (12 x 2) | edge classes (12)]`` (108), all in the hull's own order (so indices and
feature ids are the hull's); a box that is not a parallelepiped has zero centre and half edges
and class 0 for every edge, and all its edge pairs are visited.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from . import _vec as v
from ._jit import njit
from .closest_pair import closest_pt_segment_segment_t
from .contact_reduce import _reduce_into
from .gauss_map import edge_sep, is_minkowski_face
from .hull_data import HullData
from .manifold import ABS_TOL, EDGE_REL_TOL, FACE_REL_TOL, MERGE_TOL
from .transform import check_pose_kernel

__all__ = ["BOX_FLOATS", "BOX_INTS", "box_rows", "box_work", "collide_box_box_into", "is_box"]

BOX_FLOATS = 61
BOX_INTS = 108
_N0, _D0 = 24, 42  # float row: normals, offsets
_C0, _H0, _PAR = 48, 51, 60  # float row: a parallelepiped's centre, half edge vectors, and whether it is one
_VF0, _EV0, _EF0, _EC0 = 24, 48, 72, 96  # int row: faces around vertices, edge vertices, edge faces, edge classes
_SLACK = 1e-9  # relative rounding allowance of the edge bound (of the pair's size; the tolerances are 1e4 larger)
# scratch rows of ``ws`` (box_work): B's vertices and normals in A's frame, A's vertices and normals
_VB, _NB, _VA, _NA, _ROT = 0, 8, 16, 24, 32  # (and the rotation of B into A's frame)
_ARC = 35  # B's arcs, three rows (c, d, c x d) per edge
_CAP = 16  # clipping scratch: a quad clipped by a quad's 4 side planes keeps at most 8 corners

_FACE_A, _FACE_B, _EDGE, _NONE = 0, 1, 2, 3
_KIND_SHIFT = 61
_REF_FLAG = 1 << 13
_LONE = (1 << 14) - 1


def is_box(h: HullData) -> bool:
    """Whether ``h`` has the shape :func:`collide_box_box_into` takes: 8 vertices, 6 faces of 4
    vertices each, 12 edges, 3 faces around every vertex (any convex hexahedron of that topology,
    boxes included)."""
    return (len(h.vertices) == 8 and len(h.normals) == 6 and len(h.edge_verts) == 12
            and np.array_equal(h.face_start, np.arange(0, 25, 4))
            and np.array_equal(h.vert_face_start, np.arange(0, 25, 3)))


def box_rows(h: HullData) -> tuple[NDArray[np.float64], NDArray[np.int64]]:
    """The float row ``(61,)`` and int row ``(108,)`` of a box hull (see the module docstring).

    Raises
    ------
    ValueError
        If ``h`` is not a box (:func:`is_box`).
    """
    if not is_box(h):
        raise ValueError("hull: expected 8 vertices, 6 four-sided faces and 12 edges (a box)")
    par = _parallelepiped(np.asarray(h.vertices, np.float64), np.asarray(h.edge_verts, np.int64))
    centre, half, classes = par if par is not None else (np.zeros(3), np.zeros((3, 3)), np.zeros(12, np.int64))
    f = np.concatenate([h.vertices.ravel(), h.normals.ravel(), h.offsets, centre, half.ravel(),
                        [1.0 if par is not None else 0.0]]).astype(np.float64)
    i = np.concatenate([h.face_verts, h.vert_faces, h.edge_verts.ravel(), h.edge_faces.ravel(),
                        classes]).astype(np.int64)
    return f, i


def _parallelepiped(vertices, edge_verts):
    """``(centre (3,), half edge vectors (3, 3), each edge's class (12,))`` of a box whose 8
    vertices are ``p + {0, 1} e_0 + {0, 1} e_1 + {0, 1} e_2`` (to 1e-12 of its size), with ``e_k``
    its three edges at vertex 0 and class ``k`` the edges parallel to ``e_k``; None for another
    hexahedron."""
    at0 = [int(b) if a == 0 else int(a) for a, b in edge_verts if a == 0 or b == 0]
    if len(at0) != 3:
        return None
    p = vertices[0]
    e = vertices[at0] - p
    size = float(np.abs(e).sum())
    corners = p + np.array([[x, y, z] for x in (0, 1) for y in (0, 1) for z in (0, 1)], float) @ e
    gap = np.abs(vertices[:, None, :] - corners[None, :, :]).max(axis=2)
    if not (size > 0.0 and np.all(gap.min(axis=1) <= 1e-12 * size) and np.all(gap.min(axis=0) <= 1e-12 * size)):
        return None
    d = vertices[edge_verts[:, 1]] - vertices[edge_verts[:, 0]]
    unit = e / np.linalg.norm(e, axis=1)[:, None]
    classes = np.argmax(np.abs(d @ unit.T) / np.linalg.norm(d, axis=1)[:, None], axis=1).astype(np.int64)
    if sorted(np.bincount(classes, minlength=3).tolist()) != [4, 4, 4]:
        return None
    return p + 0.5 * e.sum(axis=0), 0.5 * e, classes


@njit
def box_work():
    """Scratch for :func:`collide_box_box_into`: ``ws (71, 3)``, ``wf (3, 16, 3)``, ``wd (16,)``,
    ``wi (4, 16) int64``, ``alive (16,) bool``."""
    return (np.empty((71, 3)), np.empty((3, _CAP, 3)), np.empty(_CAP), np.empty((4, _CAP), np.int64),
            np.empty(_CAP, np.bool_))


@njit(inline="always")
def _row(a, r):
    return (a[r, 0], a[r, 1], a[r, 2])


@njit(inline="always")
def _to_frame(rot, t, p):
    """``rot @ p + t`` (rot a (3, 3) array, p and t tuples), the hull kernel's ``_to_world``."""
    return (rot[0, 0] * p[0] + rot[0, 1] * p[1] + rot[0, 2] * p[2] + t[0],
            rot[1, 0] * p[0] + rot[1, 1] * p[1] + rot[1, 2] * p[2] + t[1],
            rot[2, 0] * p[0] + rot[2, 1] * p[1] + rot[2, 2] * p[2] + t[2])


@njit(borrow=True)
def _box_face_contact(ws, ref_v, ref_i, ref_face, rn, rd, inc_v, inc_n, inc_i, kind, margin, tol2,
                      wf, wd, wi, alive, pin, pref, depth, ids):
    """:func:`collision.manifold._face_contact` for two boxes, the same steps in the same order.

    Vertices and normals are rows of ``ws``: the reference box's vertices from row ``ref_v``, the
    incident box's from ``inc_v`` and its normals from ``inc_n``; ``ref_i``, ``inc_i``: the boxes'
    int rows. Fills ``pin, pref (4, 3)`` (points on the incident box and their projections on the
    reference face), ``depth (4,)`` and ``ids (4,)``; returns ``k``.
    """
    # incident face: around the incident box's deepest vertex, the most anti-parallel to rn
    s, lo = 0, np.inf
    for i in range(8):
        d = v.dot(rn, _row(ws, inc_v + i))
        if d < lo:
            s, lo = i, d
    inc, lo_f = -1, np.inf
    for k in range(3):
        f = inc_i[_VF0 + 3 * s + k]
        d = v.dot(rn, _row(ws, inc_n + f))
        if d < lo_f:
            inc, lo_f = f, d
    m = 4
    buf, out, pts = wf[0], wf[1], wf[2]
    lab, olab, pid = wi[0], wi[1], wi[2]
    for k in range(m):
        v.store(buf, k, _row(ws, inc_v + inc_i[4 * inc + k]))
        lab[k] = k
    for j in range(4):
        if m == 0:
            break
        pj = _row(ws, ref_v + ref_i[4 * ref_face + j])
        pk = _row(ws, ref_v + ref_i[4 * ref_face + (j + 1) % 4])
        sn = v.cross(v.sub(pk, pj), rn)
        so = v.dot(sn, pj)
        c = 0
        for i in range(m):
            a = v.row(buf, i)
            b = v.row(buf, (i + 1) % m)
            da = v.dot(sn, a) - so
            db = v.dot(sn, b) - so
            if da <= 0.0:
                if db > 0.0 and da < 0.0:
                    v.store(out, c, a)
                    olab[c] = lab[i]
                    c += 1
                    v.store(out, c, v.madd(a, v.sub(b, a), da / (da - db)))
                    olab[c] = _REF_FLAG | j
                    c += 1
                elif db > 0.0:
                    v.store(out, c, a)
                    olab[c] = _REF_FLAG | j
                    c += 1
                else:
                    v.store(out, c, a)
                    olab[c] = lab[i]
                    c += 1
            elif db < 0.0:
                v.store(out, c, v.madd(a, v.sub(b, a), da / (da - db)))
                olab[c] = lab[i]
                c += 1
        for i in range(c):
            buf[i, 0], buf[i, 1], buf[i, 2] = out[i, 0], out[i, 1], out[i, 2]
            lab[i] = olab[i]
        m = c
    base = (kind << _KIND_SHIFT) | (ref_face << 45) | (inc << 29)
    cnt = 0
    for i in range(m):
        x = v.row(buf, i)
        d = rd - v.dot(rn, x)
        if d >= -margin:
            v.store(pts, cnt, x)
            wd[cnt] = d
            pid[cnt] = base | (lab[(i - 1 + m) % m] << 14) | lab[i]
            cnt += 1
    if cnt == 0:
        x = _row(ws, inc_v + s)
        d = rd - v.dot(rn, x)
        if d < -margin:
            return 0
        v.store(pts, 0, x)
        wd[0] = d
        pid[0] = base | (_LONE << 14) | _LONE
        cnt = 1
    keep = wi[3]
    k = _reduce_into(rn, pts, wd, cnt, tol2, keep, alive)
    for i in range(k):
        x = v.row(pts, keep[i])
        d = wd[keep[i]]
        v.store(pin, i, x)
        v.store(pref, i, v.madd(x, rn, d))
        depth[i] = d
        ids[i] = pid[keep[i]]
    return k


@njit(borrow=True)
def _skipped_classes(fa, fb, rot, tt, need):
    """Bit ``3 k + l``: no edge pair of A's class ``k`` and B's class ``l`` can separate by more than
    ``need`` (the bound of the module docstring, less a rounding allowance); B's row is moved into
    A's frame by ``rot, tt``. Parallel classes (no axis) are never skipped."""
    hb0 = _to_frame(rot, (0.0, 0.0, 0.0), (fb[_H0], fb[_H0 + 1], fb[_H0 + 2]))
    hb1 = _to_frame(rot, (0.0, 0.0, 0.0), (fb[_H0 + 3], fb[_H0 + 4], fb[_H0 + 5]))
    hb2 = _to_frame(rot, (0.0, 0.0, 0.0), (fb[_H0 + 6], fb[_H0 + 7], fb[_H0 + 8]))
    ha0 = (fa[_H0], fa[_H0 + 1], fa[_H0 + 2])
    ha1 = (fa[_H0 + 3], fa[_H0 + 4], fa[_H0 + 5])
    ha2 = (fa[_H0 + 6], fa[_H0 + 7], fa[_H0 + 8])
    cb = _to_frame(rot, tt, (fb[_C0], fb[_C0 + 1], fb[_C0 + 2]))
    t = v.sub(cb, (fa[_C0], fa[_C0 + 1], fa[_C0 + 2]))
    size = (v.norm(t) + v.norm(ha0) + v.norm(ha1) + v.norm(ha2) + v.norm(hb0) + v.norm(hb1) + v.norm(hb2))
    slack = _SLACK * size
    skip = 0
    for k in range(3):
        ea = ha0 if k == 0 else (ha1 if k == 1 else ha2)
        for l in range(3):
            eb = hb0 if l == 0 else (hb1 if l == 1 else hb2)
            axis = v.cross(ea, eb)
            ln = v.norm(axis)
            if ln <= 1e-6 * v.norm(ea) * v.norm(eb):
                continue
            u = v.scale(axis, 1.0 / ln)
            bound = (abs(v.dot(t, u)) - abs(v.dot(ha0, u)) - abs(v.dot(ha1, u)) - abs(v.dot(ha2, u))
                     - abs(v.dot(hb0, u)) - abs(v.dot(hb1, u)) - abs(v.dot(hb2, u)))
            if bound + slack <= need:
                skip |= 1 << (3 * k + l)
    return skip


@njit(borrow=True)
def collide_box_box_into(fa, ia, fb, ib, pose_a, pose_b, margin, scale, cache, work,
                         normal, pa_out, pb_out, dep_out, id_out, cache_tested=False):
    """:func:`collision.manifold.collide_hull_hull_into` for two boxes given as rows.

    Parameters
    ----------
    fa, fb : (48,) float64
        The boxes' float rows (:func:`box_rows`), model frames.
    ia, ib : (96,) int64
        Their int rows.
    pose_a, pose_b : (4, 4) float64
        Rigid model-to-world transforms.
    margin, scale : float
        Speculative distance and the smaller hull's extent (the tolerances' scale).
    cache : (3,) int64
        The pair's coherence cache (:class:`collision.manifold.SatCache` layout), read and updated.
    work : tuple
        :func:`box_work`.
    normal : (3,) float64; pa_out, pb_out : (4, 3) float64; dep_out : (4,) float64; id_out : (4,) int64
        Outputs, zeroed first.
    cache_tested : bool
        The caller has tested the feature ``cache`` names (:func:`collision.manifold.cached_sep`, the
        same value) and it did not separate the pair by more than ``margin``: it counts as one
        feature tested and is not tested again (as the hull kernel's ``cache_tested``).

    Returns
    -------
    (status, kind, count, tests, sat_sep)
        As the hull kernel's brute-force twin's, with the same values, but that for two
        parallelepipeds ``tests`` and ``sat_sep`` are over the edge pairs visited (module
        docstring): ``tests`` can be lower, and ``sat_sep`` can differ by less than the edge tolerance.
    """
    ws, wf, wd, wi, alive = work
    normal[:] = 0.0
    pa_out[:] = 0.0
    pb_out[:] = 0.0
    dep_out[:] = 0.0
    id_out[:] = 0
    st = check_pose_kernel(pose_a)
    if st == 0:
        st = check_pose_kernel(pose_b)
        if st != 0:
            st += 2
    if st != 0:
        return st, _NONE, 0, 0, 0.0
    rot = ws[_ROT:_ROT + 3]
    for i in range(3):
        for j in range(3):
            rot[i, j] = (pose_a[0, i] * pose_b[0, j] + pose_a[1, i] * pose_b[1, j]
                         + pose_a[2, i] * pose_b[2, j])
    dt = (pose_b[0, 3] - pose_a[0, 3], pose_b[1, 3] - pose_a[1, 3], pose_b[2, 3] - pose_a[2, 3])
    tt = (pose_a[0, 0] * dt[0] + pose_a[1, 0] * dt[1] + pose_a[2, 0] * dt[2],
          pose_a[0, 1] * dt[0] + pose_a[1, 1] * dt[1] + pose_a[2, 1] * dt[2],
          pose_a[0, 2] * dt[0] + pose_a[1, 2] * dt[1] + pose_a[2, 2] * dt[2])
    zero = (0.0, 0.0, 0.0)
    tests = 0
    # the cached feature first (the hull kernel's expressions)
    ck, ci, cj = cache[0], cache[1], cache[2]
    if cache_tested:
        tests += 1
    elif ck == _FACE_A and 0 <= ci < 6:
        n = (fa[_N0 + 3 * ci], fa[_N0 + 3 * ci + 1], fa[_N0 + 3 * ci + 2])
        lo = np.inf
        for i in range(8):
            p = (fb[3 * i], fb[3 * i + 1], fb[3 * i + 2])
            lo = min(lo, v.dot(n, v.add(_to_frame(rot, zero, p), tt)))
        sep = lo - fa[_D0 + ci]
        tests += 1
        if sep > margin:
            return 0, _NONE, 0, tests, -sep
    elif ck == _FACE_B and 0 <= cj < 6:
        n = _to_frame(rot, zero, (fb[_N0 + 3 * cj], fb[_N0 + 3 * cj + 1], fb[_N0 + 3 * cj + 2]))
        off = fb[_D0 + cj] + v.dot(n, tt)
        lo = np.inf
        for i in range(8):
            lo = min(lo, v.dot(n, (fa[3 * i], fa[3 * i + 1], fa[3 * i + 2])))
        sep = lo - off
        tests += 1
        if sep > margin:
            return 0, _NONE, 0, tests, -sep
    elif ck == _EDGE and 0 <= ci < 12 and 0 <= cj < 12:
        f0, f1 = ia[_EF0 + 2 * ci], ia[_EF0 + 2 * ci + 1]
        a = (fa[_N0 + 3 * f0], fa[_N0 + 3 * f0 + 1], fa[_N0 + 3 * f0 + 2])
        b = (fa[_N0 + 3 * f1], fa[_N0 + 3 * f1 + 1], fa[_N0 + 3 * f1 + 2])
        g0, g1 = ib[_EF0 + 2 * cj], ib[_EF0 + 2 * cj + 1]
        c = v.scale(_to_frame(rot, zero, (fb[_N0 + 3 * g0], fb[_N0 + 3 * g0 + 1], fb[_N0 + 3 * g0 + 2])), -1.0)
        d = v.scale(_to_frame(rot, zero, (fb[_N0 + 3 * g1], fb[_N0 + 3 * g1 + 1], fb[_N0 + 3 * g1 + 2])), -1.0)
        if is_minkowski_face(a, b, c, d):
            u0, u1 = ia[_EV0 + 2 * ci], ia[_EV0 + 2 * ci + 1]
            w0, w1 = ib[_EV0 + 2 * cj], ib[_EV0 + 2 * cj + 1]
            pb0 = v.add(_to_frame(rot, zero, (fb[3 * w0], fb[3 * w0 + 1], fb[3 * w0 + 2])), tt)
            pb1 = v.add(_to_frame(rot, zero, (fb[3 * w1], fb[3 * w1 + 1], fb[3 * w1 + 2])), tt)
            sep, _ = edge_sep((fa[3 * u0], fa[3 * u0 + 1], fa[3 * u0 + 2]),
                               (fa[3 * u1], fa[3 * u1 + 1], fa[3 * u1 + 2]), pb0, pb1, a, b)
            tests += 1
            if sep > margin:
                return 0, _NONE, 0, tests, -sep

    # B's vertices and normals in A's frame, A's as they are, all as rows of ws
    for i in range(8):
        v.store(ws, _VB + i, v.add(_to_frame(rot, zero, (fb[3 * i], fb[3 * i + 1], fb[3 * i + 2])), tt))
        v.store(ws, _VA + i, (fa[3 * i], fa[3 * i + 1], fa[3 * i + 2]))
    db_a = wd  # (its first 6 entries, until the clipping, which takes the offset as a value)
    for f in range(6):
        n = _to_frame(rot, zero, (fb[_N0 + 3 * f], fb[_N0 + 3 * f + 1], fb[_N0 + 3 * f + 2]))
        v.store(ws, _NB + f, n)
        db_a[f] = fb[_D0 + f] + v.dot(n, tt)
        v.store(ws, _NA + f, (fa[_N0 + 3 * f], fa[_N0 + 3 * f + 1], fa[_N0 + 3 * f + 2]))

    # face axes of A, then of B (the hull kernel's _face_query_soa values)
    fa_sep, fbest_a = -np.inf, -1
    for f in range(6):
        n0, n1, n2 = ws[_NA + f, 0], ws[_NA + f, 1], ws[_NA + f, 2]
        lo = np.inf
        for i in range(8):
            lo = min(lo, n0 * ws[_VB + i, 0] + n1 * ws[_VB + i, 1] + n2 * ws[_VB + i, 2])
        sep = lo - fa[_D0 + f]
        tests += 1
        if sep > margin:
            cache[0], cache[1], cache[2] = _FACE_A, f, -1
            return 0, _NONE, 0, tests, -sep
        if sep > fa_sep:
            fa_sep, fbest_a = sep, f
    fb_sep, fbest_b = -np.inf, -1
    for f in range(6):
        n0, n1, n2 = ws[_NB + f, 0], ws[_NB + f, 1], ws[_NB + f, 2]
        lo = np.inf
        for i in range(8):
            lo = min(lo, n0 * ws[_VA + i, 0] + n1 * ws[_VA + i, 1] + n2 * ws[_VA + i, 2])
        sep = lo - db_a[f]
        tests += 1
        if sep > margin:
            cache[0], cache[1], cache[2] = _FACE_B, -1, f
            return 0, _NONE, 0, tests, -sep
        if sep > fb_sep:
            fb_sep, fbest_b = sep, f

    # the class pairs of a parallelepiped pair whose edge axis cannot be chosen (module docstring)
    face_sep = max(fa_sep, fb_sep)
    abs_tol = ABS_TOL * scale
    skip = 0
    if fa[_PAR] != 0.0 and fb[_PAR] != 0.0:
        skip = _skipped_classes(fa, fb, rot, tt, min(margin, face_sep + EDGE_REL_TOL * abs(face_sep) + abs_tol))
    # edge pairs whose Gauss-map arcs cross, in (i, j) order (collision.gauss_map.edge_pairs_brute)
    e_sep, e_i, e_j = -np.inf, -1, -1
    e_n = (0.0, 0.0, 0.0)
    found = False
    # (B's arcs on the Gauss map of -B, ends c, d and plane m = c x d, made once for the 144 pairs:
    # the same values as made in the pair loop)
    for j in range(12):
        c = v.scale(_row(ws, _NB + ib[_EF0 + 2 * j]), -1.0)
        d = v.scale(_row(ws, _NB + ib[_EF0 + 2 * j + 1]), -1.0)
        v.store(ws, _ARC + 3 * j, c)
        v.store(ws, _ARC + 3 * j + 1, d)
        v.store(ws, _ARC + 3 * j + 2, v.cross(c, d))
    for i in range(12):
        if found:
            break
        f0, f1 = ia[_EF0 + 2 * i], ia[_EF0 + 2 * i + 1]
        a = _row(ws, _NA + f0)
        b = _row(ws, _NA + f1)
        n0, n1, n2 = v.cross(a, b)
        row_skip = skip >> (3 * ia[_EC0 + i])
        for j in range(12):
            if (row_skip >> ib[_EC0 + j]) & 1:
                continue
            r = _ARC + 3 * j
            sc = ws[r, 0] * n0 + ws[r, 1] * n1 + ws[r, 2] * n2
            sd = ws[r + 1, 0] * n0 + ws[r + 1, 1] * n1 + ws[r + 1, 2] * n2
            if sc * sd >= 0.0:
                continue
            m = _row(ws, r + 2)
            tb = m[0] * b[0] + m[1] * b[1] + m[2] * b[2]
            if sc * tb <= 0.0:
                continue
            ta = m[0] * a[0] + m[1] * a[1] + m[2] * a[2]
            if ta * tb >= 0.0:
                continue
            sep, n = edge_sep(_row(ws, _VA + ia[_EV0 + 2 * i]), _row(ws, _VA + ia[_EV0 + 2 * i + 1]),
                               _row(ws, _VB + ib[_EV0 + 2 * j]), _row(ws, _VB + ib[_EV0 + 2 * j + 1]), a, b)
            if sep == -np.inf:
                continue
            tests += 1
            if sep > margin:
                e_sep, e_i, e_j, e_n = sep, i, j, n
                found = True
                break
            if sep > e_sep:
                e_sep, e_i, e_j, e_n = sep, i, j, n
    if found:
        cache[0], cache[1], cache[2] = _EDGE, e_i, e_j
        return 0, _NONE, 0, tests, -e_sep

    sat_sep = max(fa_sep, max(fb_sep, e_sep))
    if e_i >= 0 and e_sep > face_sep + EDGE_REL_TOL * abs(face_sep) + abs_tol:
        kind = _EDGE
    elif fb_sep > fa_sep + FACE_REL_TOL * abs(fa_sep) + abs_tol:
        kind = _FACE_B
    else:
        kind = _FACE_A
    rot_a = pose_a[:3, :3]
    t_a = (pose_a[0, 3], pose_a[1, 3], pose_a[2, 3])
    tol2 = (MERGE_TOL * scale) ** 2
    if kind == _EDGE:
        cache[0], cache[1], cache[2] = _EDGE, e_i, e_j
        c1, c2, _, _ = closest_pt_segment_segment_t(
            _row(ws, _VA + ia[_EV0 + 2 * e_i]), _row(ws, _VA + ia[_EV0 + 2 * e_i + 1]),
            _row(ws, _VB + ib[_EV0 + 2 * e_j]), _row(ws, _VB + ib[_EV0 + 2 * e_j + 1]))
        v.store(pa_out, 0, _to_frame(rot_a, t_a, c1))
        v.store(pb_out, 0, _to_frame(rot_a, t_a, c2))
        dep_out[0] = -e_sep
        id_out[0] = (_EDGE << _KIND_SHIFT) | (e_i << 30) | e_j
        n_w = _to_frame(rot_a, zero, e_n)
        normal[0], normal[1], normal[2] = n_w[0], n_w[1], n_w[2]
        return 0, _EDGE, 1, tests, -sat_sep
    if kind == _FACE_A:
        cache[0], cache[1], cache[2] = _FACE_A, fbest_a, -1
        rn = _row(ws, _NA + fbest_a)
        cnt = _box_face_contact(ws, _VA, ia, fbest_a, rn, fa[_D0 + fbest_a], _VB, _NB, ib, _FACE_A, margin, tol2,
                                wf, wd, wi, alive, pb_out, pa_out, dep_out, id_out)
        for i in range(cnt):
            v.store(pa_out, i, _to_frame(rot_a, t_a, v.row(pa_out, i)))
            v.store(pb_out, i, _to_frame(rot_a, t_a, v.row(pb_out, i)))
        n_w = _to_frame(rot_a, zero, rn)
    else:
        cache[0], cache[1], cache[2] = _FACE_B, -1, fbest_b
        rn = _row(ws, _NB + fbest_b)
        cnt = _box_face_contact(ws, _VB, ib, fbest_b, rn, db_a[fbest_b], _VA, _NA, ia, _FACE_B, margin, tol2,
                                wf, wd, wi, alive, pa_out, pb_out, dep_out, id_out)
        for i in range(cnt):
            v.store(pa_out, i, _to_frame(rot_a, t_a, v.row(pa_out, i)))
            v.store(pb_out, i, _to_frame(rot_a, t_a, v.row(pb_out, i)))
        n_w = _to_frame(rot_a, zero, v.scale(rn, -1.0))
    normal[0], normal[1], normal[2] = n_w[0], n_w[1], n_w[2]
    if cnt == 0:
        kind = _NONE
    return 0, kind, cnt, tests, -sat_sep
