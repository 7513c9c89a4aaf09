"""Queries between posed OBB trees: collide, distance, within, ray cast.

Gottschalk, Lin and Manocha's OBBTree traversal (RAPID): walk two hierarchies
together, test node boxes with the 15-axis separating-axis test (RTCD 4.4.1),
descend the larger box of an overlapping pair, and test triangles exactly at
the leaves (the 17-axis triangle SAT of :mod:`collision.triangle`).

Frames: each tree lives in its model frame; a pose is a 4x4 rigid transform
(rotation and translation, no scale) from model to world. Internally B is
expressed in A's model frame (parry's ``pos12``) once per query; all results
are returned in world coordinates.
"""

import math
from dataclasses import dataclass

import numpy as np

from . import _vec as v
from ._jit import njit
from .closest_pair import closest_pt_triangle_triangle_t
from .obb import OBB_EPSILON
from ._validate import broadcast_batch
from .obb_tree import OBBTree
from .triangle import intersect_triangle_triangle_t, test_triangle_triangle_t

__all__ = ["CollideResult", "DistanceResult", "RayHit", "collide", "distance", "within", "ray_cast"]

# Direction of the parity rays of the point-in-mesh test: irrational-looking so
# that it is almost never parallel to a modelled face or edge.
_PARITY_DIRS = np.array([
    [0.5773502691896258, 0.5773502691896257, 0.5773502691896259],
    [0.2672612419124244, 0.5345224838248488, -0.8017837257372732],
    [-0.7071067811865475, 0.1, 0.6998],
    [0.123, -0.9876, 0.0975],
])
_PARITY_DIRS /= np.linalg.norm(_PARITY_DIRS, axis=1)[:, None]


# ---------------------------------------------------------------------------
# Poses
# ---------------------------------------------------------------------------


@njit
def _check_pose(p):
    """0 if ``p`` is a finite rigid 4x4 transform, 1 if not finite, 2 if not rigid."""
    for i in range(4):
        for j in range(4):
            if not math.isfinite(p[i, j]):
                return 1
    if p[3, 0] != 0.0 or p[3, 1] != 0.0 or p[3, 2] != 0.0 or p[3, 3] != 1.0:
        return 2
    for i in range(3):
        for j in range(3):
            d = p[0, i] * p[0, j] + p[1, i] * p[1, j] + p[2, i] * p[2, j]
            if abs(d - (1.0 if i == j else 0.0)) > 1e-6:
                return 2
    det = (p[0, 0] * (p[1, 1] * p[2, 2] - p[1, 2] * p[2, 1])
           - p[0, 1] * (p[1, 0] * p[2, 2] - p[1, 2] * p[2, 0])
           + p[0, 2] * (p[1, 0] * p[2, 1] - p[1, 1] * p[2, 0]))
    if det < 0.0:
        return 2
    return 0


@njit
def _relative(pa, pb):
    """Rotation ``R`` (3, 3) and translation ``T`` (3,) of B's model frame in A's."""
    r = np.empty((3, 3))
    t = np.empty(3)
    for i in range(3):
        for j in range(3):
            r[i, j] = pa[0, i] * pb[0, j] + pa[1, i] * pb[1, j] + pa[2, i] * pb[2, j]
        t[i] = (pa[0, i] * (pb[0, 3] - pa[0, 3]) + pa[1, i] * (pb[1, 3] - pa[1, 3])
                + pa[2, i] * (pb[2, 3] - pa[2, 3]))
    return r, t


_POSE_ERRORS = {1: "contains NaN or infinity", 2: "is not a rigid transform (orthonormal rotation, "
                "det +1, last row 0 0 0 1)"}


def _pose(p, name):
    if not (isinstance(p, np.ndarray) and p.dtype == np.float64 and p.shape == (4, 4)):
        try:
            p = np.asarray(p, dtype=np.float64)
        except (TypeError, ValueError):
            raise ValueError(f"{name}: expected a 4x4 float array") from None
        if p.shape != (4, 4):
            raise ValueError(f"{name}: expected shape (4, 4), got {p.shape}")
    code = _check_pose(p)
    if code:
        raise ValueError(f"{name}: {_POSE_ERRORS[code]}")
    return p


def _tree(t, name):
    if not isinstance(t, OBBTree):
        raise ValueError(f"{name}: expected an OBBTree, got {type(t).__name__}")
    return t


@njit(inline="always")
def _apply(r, t, p):
    return (r[0, 0] * p[0] + r[0, 1] * p[1] + r[0, 2] * p[2] + t[0],
            r[1, 0] * p[0] + r[1, 1] * p[1] + r[1, 2] * p[2] + t[1],
            r[2, 0] * p[0] + r[2, 1] * p[1] + r[2, 2] * p[2] + t[2])


@njit(inline="always")
def _tri(tris, k):
    return ((tris[k, 0, 0], tris[k, 0, 1], tris[k, 0, 2]),
            (tris[k, 1, 0], tris[k, 1, 1], tris[k, 1, 2]),
            (tris[k, 2, 0], tris[k, 2, 1], tris[k, 2, 2]))


# ---------------------------------------------------------------------------
# Node-pair box test in A's frame
# ---------------------------------------------------------------------------


@njit(inline="always")
def _node_frame(ca, aa, cb, ab, na, nb, r, t, rab, tt):
    """Fill ``rab[i, j] = A_i . (R B_j)`` and ``tt = A axes . (R cb + T - ca)``."""
    bw = np.empty((3, 3))
    for j in range(3):
        for k in range(3):
            bw[j, k] = r[k, 0] * ab[nb, j, 0] + r[k, 1] * ab[nb, j, 1] + r[k, 2] * ab[nb, j, 2]
    d0 = r[0, 0] * cb[nb, 0] + r[0, 1] * cb[nb, 1] + r[0, 2] * cb[nb, 2] + t[0] - ca[na, 0]
    d1 = r[1, 0] * cb[nb, 0] + r[1, 1] * cb[nb, 1] + r[1, 2] * cb[nb, 2] + t[1] - ca[na, 1]
    d2 = r[2, 0] * cb[nb, 0] + r[2, 1] * cb[nb, 1] + r[2, 2] * cb[nb, 2] + t[2] - ca[na, 2]
    for i in range(3):
        for j in range(3):
            rab[i, j] = aa[na, i, 0] * bw[j, 0] + aa[na, i, 1] * bw[j, 1] + aa[na, i, 2] * bw[j, 2]
        tt[i] = aa[na, i, 0] * d0 + aa[na, i, 1] * d1 + aa[na, i, 2] * d2


@njit
def _boxes_overlap(ca, aa, ea, cb, ab, eb, na, nb, r, t, rab, absr, tt):
    """RTCD 4.4.1 on node ``na`` of A and node ``nb`` of B (B placed by ``r, t``)."""
    _node_frame(ca, aa, cb, ab, na, nb, r, t, rab, tt)
    for i in range(3):
        for j in range(3):
            absr[i, j] = abs(rab[i, j]) + OBB_EPSILON
    for i in range(3):
        if abs(tt[i]) > ea[na, i] + eb[nb, 0] * absr[i, 0] + eb[nb, 1] * absr[i, 1] + eb[nb, 2] * absr[i, 2]:
            return False
    for j in range(3):
        if abs(tt[0] * rab[0, j] + tt[1] * rab[1, j] + tt[2] * rab[2, j]) > \
                ea[na, 0] * absr[0, j] + ea[na, 1] * absr[1, j] + ea[na, 2] * absr[2, j] + eb[nb, j]:
            return False
    for i in range(3):
        i1 = (i + 1) % 3
        i2 = (i + 2) % 3
        for j in range(3):
            j1 = (j + 1) % 3
            j2 = (j + 2) % 3
            ra = ea[na, i1] * absr[i2, j] + ea[na, i2] * absr[i1, j]
            rb = eb[nb, j1] * absr[i, j2] + eb[nb, j2] * absr[i, j1]
            if abs(tt[i2] * rab[i1, j] - tt[i1] * rab[i2, j]) > ra + rb:
                return False
    return True


@njit
def _boxes_gap(ca, aa, ea, cb, ab, eb, na, nb, r, t, rab, tt):
    """A lower bound on the distance between two node boxes: the largest gap
    of their projections over the 15 SAT axes (each normalised), or 0."""
    _node_frame(ca, aa, cb, ab, na, nb, r, t, rab, tt)
    best = 0.0
    for i in range(3):
        g = abs(tt[i]) - (ea[na, i] + eb[nb, 0] * abs(rab[i, 0]) + eb[nb, 1] * abs(rab[i, 1])
                          + eb[nb, 2] * abs(rab[i, 2]))
        best = max(best, g)
    for j in range(3):
        g = abs(tt[0] * rab[0, j] + tt[1] * rab[1, j] + tt[2] * rab[2, j]) - (
            ea[na, 0] * abs(rab[0, j]) + ea[na, 1] * abs(rab[1, j]) + ea[na, 2] * abs(rab[2, j]) + eb[nb, j])
        best = max(best, g)
    for i in range(3):
        i1 = (i + 1) % 3
        i2 = (i + 2) % 3
        for j in range(3):
            s2 = 1.0 - rab[i, j] * rab[i, j]
            if s2 <= 1e-12:
                continue
            j1 = (j + 1) % 3
            j2 = (j + 2) % 3
            ra = ea[na, i1] * abs(rab[i2, j]) + ea[na, i2] * abs(rab[i1, j])
            rb = eb[nb, j1] * abs(rab[i, j2]) + eb[nb, j2] * abs(rab[i, j1])
            g = (abs(tt[i2] * rab[i1, j] - tt[i1] * rab[i2, j]) - (ra + rb)) / math.sqrt(s2)
            best = max(best, g)
    return best


@njit(inline="always")
def _descend_a(ha, hb, na, nb, child_a, child_b):
    """RAPID's rule: split A if B is a leaf, or A is not and A is the larger box."""
    if child_b[nb] < 0:
        return True
    if child_a[na] < 0:
        return False
    sa = max(ha[na, 0], max(ha[na, 1], ha[na, 2]))
    sb = max(hb[nb, 0], max(hb[nb, 1], hb[nb, 2]))
    return sa >= sb


@njit
def _push(stack, top, a, b):
    if top >= stack.shape[0]:
        bigger = np.empty((2 * stack.shape[0], 2), dtype=np.int64)
        bigger[:top] = stack[:top]
        stack = bigger
    stack[top, 0] = a
    stack[top, 1] = b
    return stack, top + 1


# ---------------------------------------------------------------------------
# collide
# ---------------------------------------------------------------------------


@njit
def collide_kernel(ca, aa, ha, kida, sta, cnta, tria, cb, ab, hb, kidb, stb, cntb, trib,
                   r, t, first_contact, want_segments):
    """All intersecting triangle pairs (positions in leaf order) and their segments (A frame)."""
    cap = 16
    pairs = np.empty((cap, 2), dtype=np.int64)
    segs = np.empty((cap, 2, 3))
    n = 0
    box_tests = 0
    tri_tests = 0
    rab = np.empty((3, 3))
    absr = np.empty((3, 3))
    tt = np.empty(3)
    stack = np.empty((64, 2), dtype=np.int64)
    stack[0, 0] = 0
    stack[0, 1] = 0
    top = 1
    while top > 0:
        top -= 1
        na = stack[top, 0]
        nb = stack[top, 1]
        box_tests += 1
        if not _boxes_overlap(ca, aa, ha, cb, ab, hb, na, nb, r, t, rab, absr, tt):
            continue
        if kida[na] < 0 and kidb[nb] < 0:
            for i in range(sta[na], sta[na] + cnta[na]):
                a0, a1, a2 = _tri(tria, i)
                for j in range(stb[nb], stb[nb] + cntb[nb]):
                    b0, b1, b2 = _tri(trib, j)
                    b0 = _apply(r, t, b0)
                    b1 = _apply(r, t, b1)
                    b2 = _apply(r, t, b2)
                    tri_tests += 1
                    if test_triangle_triangle_t(a0, a1, a2, b0, b1, b2):
                        if n == cap:
                            cap *= 2
                            p2 = np.empty((cap, 2), dtype=np.int64)
                            p2[:n] = pairs[:n]
                            pairs = p2
                            s2 = np.empty((cap, 2, 3))
                            s2[:n] = segs[:n]
                            segs = s2
                        pairs[n, 0] = i
                        pairs[n, 1] = j
                        if want_segments:
                            p, q = intersect_triangle_triangle_t(a0, a1, a2, b0, b1, b2)
                            for k in range(3):
                                segs[n, 0, k] = p[k]
                                segs[n, 1, k] = q[k]
                        n += 1
                        if first_contact:
                            return pairs[:n], segs[:n], box_tests, tri_tests
            continue
        if _descend_a(ha, hb, na, nb, kida, kidb):
            c = kida[na]
            stack, top = _push(stack, top, c + 1, nb)
            stack, top = _push(stack, top, c, nb)
        else:
            c = kidb[nb]
            stack, top = _push(stack, top, na, c + 1)
            stack, top = _push(stack, top, na, c)
    return pairs[:n], segs[:n], box_tests, tri_tests


@njit
def _ray_hits_triangle(o, d, a, b, c):
    """Moller-Trumbore, two-sided. Returns ``(t, u, v, det)``; ``t = inf`` for no hit."""
    e1 = v.sub(b, a)
    e2 = v.sub(c, a)
    pv = v.cross(d, e2)
    det = v.dot(e1, pv)
    if det == 0.0:
        return np.inf, 0.0, 0.0, det
    inv = 1.0 / det
    tv = v.sub(o, a)
    u = v.dot(tv, pv) * inv
    if u < 0.0 or u > 1.0:
        return np.inf, u, 0.0, det
    qv = v.cross(tv, e1)
    w = v.dot(d, qv) * inv
    if w < 0.0 or u + w > 1.0:
        return np.inf, u, w, det
    return v.dot(e2, qv) * inv, u, w, det


@njit
def _ray_box_interval(o, d, c, ax, h, node):
    """Slab test of a ray against a node box: ``(t_enter, t_exit)``."""
    t0 = -np.inf
    t1 = np.inf
    for i in range(3):
        oc = (ax[node, i, 0] * (o[0] - c[node, 0]) + ax[node, i, 1] * (o[1] - c[node, 1])
              + ax[node, i, 2] * (o[2] - c[node, 2]))
        dc = ax[node, i, 0] * d[0] + ax[node, i, 1] * d[1] + ax[node, i, 2] * d[2]
        if dc == 0.0:
            if abs(oc) > h[node, i]:
                return np.inf, -np.inf
            continue
        ta = (-h[node, i] - oc) / dc
        tb = (h[node, i] - oc) / dc
        if ta > tb:
            ta, tb = tb, ta
        t0 = max(t0, ta)
        t1 = min(t1, tb)
    return t0, t1


@njit
def _ray_plane_bary(o, d, a, b, c):
    """Ray against the plane of ``abc``: ``(ok, t, u, w)`` with barycentrics ``u, w``.

    ``ok`` is False when the ray is parallel to the plane (to 1e-12 relative).
    """
    e1 = v.sub(b, a)
    e2 = v.sub(c, a)
    pv = v.cross(d, e2)
    det = v.dot(e1, pv)
    if abs(det) <= 1e-12 * v.norm(v.cross(e1, e2)) * v.norm(d):
        return False, 0.0, 0.0, 0.0
    inv = 1.0 / det
    tv = v.sub(o, a)
    u = v.dot(tv, pv) * inv
    qv = v.cross(tv, e1)
    w = v.dot(d, qv) * inv
    return True, v.dot(e2, qv) * inv, u, w


@njit
def parity_kernel(c, ax, h, kid, st, cnt, tris, o, d):
    """Crossings of the ray ``o + t d`` (``t > 0``) with the mesh, and whether any was ambiguous.

    A crossing within 1e-9 (barycentric) of an edge or vertex, or at ``t``
    near 0, could be counted wrongly under rounding: the count is then
    flagged ``ambiguous`` and the caller tries another direction.
    """
    eps = 1e-9
    count = 0
    ambiguous = False
    stack = np.empty(64, dtype=np.int64)
    stack[0] = 0
    top = 1
    while top > 0:
        top -= 1
        node = stack[top]
        t0, t1 = _ray_box_interval(o, d, c, ax, h, node)
        if t0 > t1 or t1 < 0.0:
            continue
        if kid[node] < 0:
            for k in range(st[node], st[node] + cnt[node]):
                a, b, cc = _tri(tris, k)
                ok, tt, u, w = _ray_plane_bary(o, d, a, b, cc)
                if not ok or tt < -eps:
                    continue
                if u < -eps or w < -eps or u + w > 1.0 + eps:
                    continue
                if u <= eps or w <= eps or u + w >= 1.0 - eps or tt <= eps:
                    ambiguous = True
                if tt > 0.0 and u >= 0.0 and w >= 0.0 and u + w <= 1.0:
                    count += 1
            continue
        if top + 2 > stack.shape[0]:
            bigger = np.empty(2 * stack.shape[0], dtype=np.int64)
            bigger[:top] = stack[:top]
            stack = bigger
        stack[top] = kid[node]
        stack[top + 1] = kid[node] + 1
        top += 2
    return count, ambiguous


def _inside(tree, point):
    """Is ``point`` (tree's model frame) inside the closed mesh? Ray parity."""
    o = (float(point[0]), float(point[1]), float(point[2]))
    for d in _PARITY_DIRS:
        count, ambiguous = parity_kernel(*tree.arrays, o, (float(d[0]), float(d[1]), float(d[2])))
        if not ambiguous:
            return count % 2 == 1
    return count % 2 == 1


def _containment(tree_a, pose_a, tree_b, pose_b):
    """``"b_in_a"``, ``"a_in_b"`` or None, for surfaces known not to intersect."""
    for inner, pin, outer, pout, label in ((tree_b, pose_b, tree_a, pose_a, "b_in_a"),
                                            (tree_a, pose_a, tree_b, pose_b, "a_in_b")):
        if not outer.closed:
            continue
        rel = np.linalg.solve(pout, pin)  # inner's model frame in outer's model frame
        pts = inner.vertices[inner.component_vertices] @ rel[:3, :3].T + rel[:3, 3]
        if any(_inside(outer, p) for p in pts):
            return label
    return None


@dataclass(frozen=True, eq=False)
class CollideResult:
    """Outcome of :func:`collide`.

    Attributes
    ----------
    hit : bool
        The meshes intersect: their surfaces meet, or one closed mesh lies
        inside the other.
    pairs : (k, 2) int64
        Intersecting triangle pairs, as face indices ``(face of A, face of B)``.
    segments : (k, 2, 3) float64
        World-frame intersection segment of each pair.
    box_tests, tri_tests : int
        Node-pair box tests and triangle-pair tests performed (as RAPID counts).
    contained : str or None
        ``"b_in_a"`` or ``"a_in_b"`` when the surfaces do not meet but one
        mesh is inside the other.
    containment_checked : bool
        False when neither mesh is closed, so containment could not be decided
        (an open mesh has no inside).
    """

    hit: bool
    pairs: np.ndarray
    segments: np.ndarray
    box_tests: int
    tri_tests: int
    contained: object = None
    containment_checked: bool = True

    def __bool__(self):
        return self.hit


def collide(tree_a, pose_a, tree_b, pose_b, first_contact=False, containment=True):
    """Do two posed meshes intersect, and where?

    Parameters
    ----------
    tree_a, tree_b : OBBTree
    pose_a, pose_b : (4, 4) float64
        Rigid model-to-world transforms.
    first_contact : bool
        Stop at the first intersecting triangle pair (a yes/no query).
    containment : bool
        When no surfaces meet, check whether a closed mesh lies inside the other
        (the containment factor E of seed 003; an exact OBB-tree test would
        otherwise miss it).

    Returns
    -------
    CollideResult
    """
    tree_a = _tree(tree_a, "tree_a")
    tree_b = _tree(tree_b, "tree_b")
    pa = _pose(pose_a, "pose_a")
    pb = _pose(pose_b, "pose_b")
    r, t = _relative(pa, pb)
    pairs, segs, box_tests, tri_tests = collide_kernel(*tree_a.arrays, *tree_b.arrays, r, t,
                                                       first_contact, not first_contact)
    contained = None
    checked = tree_a.closed or tree_b.closed if containment else False
    if len(pairs) == 0 and containment and checked:
        contained = _containment(tree_a, pa, tree_b, pb)
    faces = np.stack([tree_a.tri_index[pairs[:, 0]], tree_b.tri_index[pairs[:, 1]]], axis=1) \
        if len(pairs) else np.empty((0, 2), dtype=np.int64)
    if len(segs) and not first_contact:
        segs = segs @ pa[:3, :3].T + pa[:3, 3]
    return CollideResult(bool(len(pairs)) or contained is not None, faces, segs,
                         int(box_tests), int(tri_tests), contained, bool(checked))


# ---------------------------------------------------------------------------
# distance and within
# ---------------------------------------------------------------------------


@njit
def distance_kernel(ca, aa, ha, kida, sta, cnta, tria, cb, ab, hb, kidb, stb, cntb, trib, r, t, stop_below):
    """Closest triangle pair. Returns ``(dist2, i, j, pa (3,), pb (3,), box_tests, tri_tests)``.

    Nodes whose box gap is at least the best distance so far are pruned;
    the search ends early once a distance below ``stop_below`` is found.
    """
    rab = np.empty((3, 3))
    tt = np.empty(3)
    # Seed the bound with the first triangles of each tree.
    a0, a1, a2 = _tri(tria, 0)
    b0, b1, b2 = _tri(trib, 0)
    x, y, best2 = closest_pt_triangle_triangle_t(a0, a1, a2, _apply(r, t, b0), _apply(r, t, b1), _apply(r, t, b2))
    bi = 0
    bj = 0
    box_tests = 0
    tri_tests = 1
    stack = np.empty((64, 2), dtype=np.int64)
    stack[0, 0] = 0
    stack[0, 1] = 0
    top = 1
    while top > 0:
        if best2 < stop_below * stop_below:
            break
        top -= 1
        na = stack[top, 0]
        nb = stack[top, 1]
        box_tests += 1
        g = _boxes_gap(ca, aa, ha, cb, ab, hb, na, nb, r, t, rab, tt)
        if g * g >= best2:
            continue
        if kida[na] < 0 and kidb[nb] < 0:
            for i in range(sta[na], sta[na] + cnta[na]):
                a0, a1, a2 = _tri(tria, i)
                for j in range(stb[nb], stb[nb] + cntb[nb]):
                    b0, b1, b2 = _tri(trib, j)
                    tri_tests += 1
                    p, q, d2 = closest_pt_triangle_triangle_t(
                        a0, a1, a2, _apply(r, t, b0), _apply(r, t, b1), _apply(r, t, b2))
                    if d2 < best2:
                        best2, x, y, bi, bj = d2, p, q, i, j
            continue
        # Visit the nearer child pair first: push it last.
        if _descend_a(ha, hb, na, nb, kida, kidb):
            c = kida[na]
            g0 = _boxes_gap(ca, aa, ha, cb, ab, hb, c, nb, r, t, rab, tt)
            g1 = _boxes_gap(ca, aa, ha, cb, ab, hb, c + 1, nb, r, t, rab, tt)
            box_tests += 2
            if g0 <= g1:
                if g1 * g1 < best2:
                    stack, top = _push(stack, top, c + 1, nb)
                if g0 * g0 < best2:
                    stack, top = _push(stack, top, c, nb)
            else:
                if g0 * g0 < best2:
                    stack, top = _push(stack, top, c, nb)
                if g1 * g1 < best2:
                    stack, top = _push(stack, top, c + 1, nb)
        else:
            c = kidb[nb]
            g0 = _boxes_gap(ca, aa, ha, cb, ab, hb, na, c, r, t, rab, tt)
            g1 = _boxes_gap(ca, aa, ha, cb, ab, hb, na, c + 1, r, t, rab, tt)
            box_tests += 2
            if g0 <= g1:
                if g1 * g1 < best2:
                    stack, top = _push(stack, top, na, c + 1)
                if g0 * g0 < best2:
                    stack, top = _push(stack, top, na, c)
            else:
                if g0 * g0 < best2:
                    stack, top = _push(stack, top, na, c)
                if g1 * g1 < best2:
                    stack, top = _push(stack, top, na, c + 1)
    px = np.array([x[0], x[1], x[2]])
    py = np.array([y[0], y[1], y[2]])
    return best2, bi, bj, px, py, box_tests, tri_tests


@dataclass(frozen=True, eq=False)
class DistanceResult:
    """Outcome of :func:`distance`.

    Attributes
    ----------
    distance : float
        Minimum distance between the two surfaces (0 when they intersect).
    point_a, point_b : (3,) float64
        The closest points, world frame, on A and on B.
    triangle_a, triangle_b : int
        Face indices of the triangles holding them.
    box_tests, tri_tests : int
    """

    distance: float
    point_a: np.ndarray
    point_b: np.ndarray
    triangle_a: int
    triangle_b: int
    box_tests: int
    tri_tests: int


def _distance(tree_a, pose_a, tree_b, pose_b, stop_below):
    tree_a = _tree(tree_a, "tree_a")
    tree_b = _tree(tree_b, "tree_b")
    pa = _pose(pose_a, "pose_a")
    pb = _pose(pose_b, "pose_b")
    r, t = _relative(pa, pb)
    d2, i, j, x, y, nbox, ntri = distance_kernel(*tree_a.arrays, *tree_b.arrays, r, t, stop_below)
    rot, tr = pa[:3, :3], pa[:3, 3]
    return DistanceResult(math.sqrt(d2), rot @ x + tr, rot @ y + tr, int(tree_a.tri_index[i]),
                          int(tree_b.tri_index[j]), int(nbox), int(ntri)), pa, pb


def distance(tree_a, pose_a, tree_b, pose_b):
    """Minimum distance between two posed meshes' surfaces, and where it is reached.

    The traversal prunes node pairs whose boxes are provably farther apart
    than the best triangle pair so far (the largest projection gap over the
    15 box axes is a lower bound of the box distance); leaves are solved
    exactly by the closest-point queries of RTCD 5.1.10.

    Parameters
    ----------
    tree_a, tree_b : OBBTree
    pose_a, pose_b : (4, 4) float64

    Returns
    -------
    DistanceResult
    """
    return _distance(tree_a, pose_a, tree_b, pose_b, 0.0)[0]


def within(tree_a, pose_a, tree_b, pose_b, tolerance):
    """True when the two meshes come closer than ``tolerance`` (or overlap).

    Stops at the first triangle pair closer than ``tolerance``. A closed mesh
    lying entirely inside the other counts as overlapping.
    """
    tol = float(tolerance)
    if not math.isfinite(tol) or tol < 0.0:
        raise ValueError("tolerance: must be a finite number >= 0")
    res, pa, pb = _distance(tree_a, pose_a, tree_b, pose_b, tol)
    if res.distance < tol:
        return True
    return (tree_a.closed or tree_b.closed) and _containment(tree_a, pa, tree_b, pb) is not None


# ---------------------------------------------------------------------------
# ray cast
# ---------------------------------------------------------------------------


@njit
def ray_kernel(c, ax, h, kid, st, cnt, tris, origins, dirs, max_t, out_t, out_k):
    """First hit of every ray (model frame): ``out_t`` (inf if none) and leaf position ``out_k``."""
    stack = np.empty(64, dtype=np.int64)
    for r in range(origins.shape[0]):
        o = v.row(origins, r)
        d = v.row(dirs, r)
        best = max_t[r]
        bk = -1
        stack[0] = 0
        top = 1
        while top > 0:
            top -= 1
            node = stack[top]
            t0, t1 = _ray_box_interval(o, d, c, ax, h, node)
            if t0 > t1 or t1 < 0.0 or t0 > best:
                continue
            if kid[node] < 0:
                for k in range(st[node], st[node] + cnt[node]):
                    a, b, cc = _tri(tris, k)
                    tt, _, _, _ = _ray_hits_triangle(o, d, a, b, cc)
                    if 0.0 <= tt <= best:
                        best = tt
                        bk = k
                continue
            if top + 2 > stack.shape[0]:
                bigger = np.empty(2 * stack.shape[0], dtype=np.int64)
                bigger[:top] = stack[:top]
                stack = bigger
            stack[top] = kid[node]
            stack[top + 1] = kid[node] + 1
            top += 2
        out_t[r] = best if bk >= 0 else np.inf
        out_k[r] = bk


@dataclass(frozen=True, eq=False)
class RayHit:
    """Outcome of :func:`ray_cast` (arrays gain a leading batch axis for batched rays).

    Attributes
    ----------
    hit : bool
    t : float
        Ray parameter of the first hit (``inf`` when none): ``point = origin + t direction``.
    point : (3,) float64
        World-frame hit point (NaN when none).
    normal : (3,) float64
        Unit normal of the hit face, world frame, turned to face the ray's origin.
    triangle : int
        Face index hit, -1 when none.
    """

    hit: object
    t: object
    point: np.ndarray
    normal: np.ndarray
    triangle: object


def ray_cast(tree, pose, origin, direction, max_t=np.inf):
    """First intersection of a ray (or a batch of rays) with a posed mesh.

    Rays are ``origin + t direction`` for ``0 <= t <= max_t``; ``direction``
    need not be unit length (``t`` is in its units). Triangles are two-sided.

    Parameters
    ----------
    tree : OBBTree
    pose : (4, 4) float64
    origin, direction : (3,) or (n, 3) float64
    max_t : float or (n,) float64

    Returns
    -------
    RayHit
    """
    tree = _tree(tree, "tree")
    p = _pose(pose, "pose")
    (o, d), lead = broadcast_batch([("origin", origin, (3,)), ("direction", direction, (3,))])
    try:
        mt = np.ascontiguousarray(np.broadcast_to(np.asarray(max_t, dtype=float), lead).reshape(-1))
    except (TypeError, ValueError):
        raise ValueError(f"max_t: expected a number or an array of shape {lead}") from None
    if np.any(np.isnan(mt)) or np.any(mt < 0.0):
        raise ValueError("max_t: must be >= 0 (inf allowed)")
    if np.any(np.einsum("ij,ij->i", d, d) == 0.0):
        raise ValueError("direction: zero-length ray direction")
    rot, tr = p[:3, :3], p[:3, 3]
    ol = np.ascontiguousarray((o - tr) @ rot)
    dl = np.ascontiguousarray(d @ rot)
    n = len(ol)
    ts = np.empty(n)
    ks = np.empty(n, dtype=np.int64)
    ray_kernel(*tree.arrays, ol, dl, mt, ts, ks)
    hit = ks >= 0
    pts = np.full((n, 3), np.nan)
    nrm = np.full((n, 3), np.nan)
    tri = np.full(n, -1, dtype=np.int64)
    if hit.any():
        pts[hit] = o[hit] + ts[hit, None] * d[hit]
        tv = tree.triangles[ks[hit]]
        fn = np.cross(tv[:, 1] - tv[:, 0], tv[:, 2] - tv[:, 0]) @ rot.T
        fn /= np.linalg.norm(fn, axis=1)[:, None]
        flip = np.einsum("ij,ij->i", fn, d[hit]) > 0.0
        fn[flip] *= -1.0
        nrm[hit] = fn
        tri[hit] = tree.tri_index[ks[hit]]
    if lead == ():
        return RayHit(bool(hit[0]), float(ts[0]), pts[0], nrm[0], int(tri[0]))
    return RayHit(hit.reshape(lead), ts.reshape(lead), pts.reshape(lead + (3,)),
                  nrm.reshape(lead + (3,)), tri.reshape(lead))
