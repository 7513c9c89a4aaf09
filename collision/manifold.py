"""Contact manifolds between convex polyhedra: the SAT query, then face clipping.

:func:`collide_hull_hull` finds the minimum-penetration (or largest-gap) axis of
two posed convex hulls by the separating-axis test of D. Gregorius ("The
Separating Axis Test between Convex Polyhedra", GDC 2013): face normals of A,
face normals of B, and only those edge pairs whose arcs cross on the Gauss
map (exactly the edge pairs that build a face of the Minkowski difference),
found through bounding caps of the arcs (:mod:`collision.gauss_map`).
It then builds the contact patch:

* face contact: the reference face is clipped against the incident face of the
  other hull (Sutherland-Hodgman, RTCD 8.3.4), points deeper than ``-margin``
  are kept and projected onto the reference face, and at most four are kept
  (:mod:`collision.contact_reduce`);
* edge contact: the closest points of the two edge segments (RTCD 5.1.9).

Frame and sign (those of :mod:`collision.sat`): the normal is a world unit
vector from A towards B; ``depth > 0`` is penetration along it, ``depth < 0``
a gap (a speculative contact within ``margin``); for each point
``points_a - points_b == depths[:, None] * normal`` (exact for face contacts
and penetrating edge contacts; a speculative edge contact whose closest points
are clamped to the segment ends also has a part across the normal). Internally everything runs in
A's model frame with B's relative transform (parry's ``pos12``).

The feature ids let :func:`collision.contact_match.match_contacts` carry
contacts from one step to the next (then by distance), so a solver can keep
accumulated impulses. ``reduce_contacts`` and ``match_contacts`` are
re-exported here.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

from . import _vec as v
from ._jit import njit
from ._validate import MAX_COORD, as_number
from .closest_pair import closest_pt_segment_segment_t
from .contact_match import match_contacts  # noqa: F401 (re-exported)
from .contact_reduce import _reduce_into, reduce_contacts  # noqa: F401 (reduce_contacts: re-exported)
from .convex import ConvexPolyhedron
from .gauss_map import PARALLEL_SINE, edge_pairs_brute, edge_pairs_pruned  # noqa: F401 (PARALLEL_SINE: re-exported)
from .gauss_map import edge_sep
from .gauss_map import is_minkowski_face as _is_minkowski_face
from .hull_data import HullData
from .transform import POSE_ERRORS, as_pose, check_pose_kernel

__all__ = ["Manifold", "SatCache", "collide_hull_hull", "match_contacts", "unpack_feature_id",
           "KIND_NAMES"]

KIND_NAMES = ("face_a", "face_b", "edge_edge", "none")
_FACE_A, _FACE_B, _EDGE, _NONE = 0, 1, 2, 3

# Axis choice when penetrating: the SAT minimum is biased towards face axes
# (stable, 4-point patches) and towards A's faces, so that near-ties do not
# flip the manifold from frame to frame (the idea of Box2D's b2CollidePolygons
# and Gregorius' talk; the numbers are ours). An edge axis wins only when its
# separation beats the best face by EDGE_REL_TOL * |face separation| +
# ABS_TOL * scale; B's face beats A's by FACE_REL_TOL * |.| + ABS_TOL * scale.
# ``scale`` is the smaller hull's extent.
EDGE_REL_TOL = 0.05
FACE_REL_TOL = 0.01
ABS_TOL = 1e-5

# Clipped points closer than this (times the scale) are merged.
MERGE_TOL = 1e-9
# Hull pairs with at most this many edge pairs search them all (edge_pairs_brute) instead of
# through the Gauss-map caps (edge_pairs_pruned): for small hulls the caps prune little and cost
# more than they save. Measured on two resting boxes (12 edges each, 144 pairs, 18 evaluated): the
# full search 2.7 us a pair against 4.5 us pruned (two loaded cores, one thread). Both evaluate the
# same pairs and give the same overlap result (the same best pair, ties to the smallest (i, j)); of
# a separated pair either may report another separating edge pair (each stops at its first).
SMALL_EDGE_PAIRS = 144

# Feature id layout (int64, never negative):
#   bits 61-62  kind: 0 reference face on A, 1 reference face on B, 2 edge-edge
#   face contacts:
#     bits 45-60  reference face index (16 bits)
#     bits 29-44  incident face index (16 bits)
#     bits 14-27  label of the patch edge entering the point (14 bits)
#     bits  0-13  label of the patch edge leaving the point (14 bits)
#   a label is an incident-face edge (its slot k along the incident loop, edge
#   k -> k+1) or, with bit 13 set, a side plane of the reference face (slot j,
#   edge j -> j+1 of the reference loop). An incident corner is (k-1, k), a
#   point where incident edge k crosses side plane j is (k, ref|j) or (ref|j, k),
#   a reference corner is (ref|j, ref|j'). 0x3fff twice: the deepest vertex,
#   used alone when clipping leaves nothing.
#   edge contacts: bits 30-60 A's edge index, bits 0-29 B's edge index.
_KIND_SHIFT = 61
_REF_FLAG = 1 << 13
_LABEL_MASK = (1 << 14) - 1
_LONE = _LABEL_MASK


@dataclass(frozen=True)
class Manifold:
    """Contact patch of two convex hulls, at most four points.

    Attributes
    ----------
    normal : (3,) float64
        Unit contact normal in world coordinates, from A towards B (zeros
        when empty).
    points_a : (k, 3) float64
        Contact points on A's surface, world, ``k <= 4``, deepest first.
    points_b : (k, 3) float64
        The matching points on B's surface.
    depths : (k,) float64
        Penetration along ``normal`` (> 0), or minus the gap (< 0) for
        speculative points within the margin: ``points_a - points_b ==
        depths[:, None] * normal``.
    ids : (k,) int64
        Feature ids (see the module source for the packing and
        :func:`unpack_feature_id`); unique within a manifold, stable while the
        same features touch.
    kind : str
        ``"face_a"`` (reference face on A), ``"face_b"``, ``"edge_edge"``, or
        ``"none"`` (no contact within the margin).
    tests : int
        Features whose separation was evaluated (faces and Gauss-map-surviving
        edge pairs; 1 when the cached separating feature still separates).
    sat_depth : float
        The unbiased SAT minimum: the penetration depth (> 0) or minus the gap
        found. For an empty manifold it is only the first gap found above the
        margin (a lower bound of the true gap), not the largest.
    """

    normal: NDArray[np.float64]
    points_a: NDArray[np.float64]
    points_b: NDArray[np.float64]
    depths: NDArray[np.float64]
    ids: NDArray[np.int64]
    kind: str
    tests: int
    sat_depth: float

    @property
    def points(self) -> NDArray[np.float64]:
        """(k, 3) float64: midpoints of the point pairs."""
        return 0.5 * (self.points_a + self.points_b)

    def __len__(self) -> int:
        return len(self.depths)


class SatCache:
    """The feature that separated, or set the axis of, one pair in the last call.

    Pass the same object to :func:`collide_hull_hull` every step for one pair
    of hulls (in the same order): the cached feature is tested first, and if it
    still separates by more than the margin the call returns after that one
    test. ``data`` is ``int64[3]``: kind (0 face of A, 1 face of B, 2 edge pair,
    -1 none), then the indices (face or edge of A / of B, -1 if unused).
    """

    __slots__ = ("data",)
    data: NDArray[np.int64]

    def __init__(self) -> None:
        self.data = np.full(3, -1, dtype=np.int64)

    @property
    def kind(self) -> str:
        k = int(self.data[0])
        return "none" if k < 0 else KIND_NAMES[k]

    @property
    def indices(self) -> tuple[int, int]:
        return int(self.data[1]), int(self.data[2])

    def reset(self) -> None:
        self.data[:] = -1

    def __repr__(self):
        return f"SatCache(kind={self.kind!r}, indices={self.indices})"


def unpack_feature_id(fid):
    """Decode a feature id into a dict (for debugging and tests).

    Returns
    -------
    dict
        ``kind`` and, for face contacts, ``ref_face``, ``inc_face``,
        ``label_in``, ``label_out`` (a label is ``("inc", k)`` or
        ``("ref", j)``, or ``("lone", -1)``); for edge contacts ``edge_a``,
        ``edge_b``.
    """
    fid = int(fid)
    kind = KIND_NAMES[fid >> _KIND_SHIFT]
    if kind == "edge_edge":
        return {"kind": kind, "edge_a": (fid >> 30) & ((1 << 31) - 1), "edge_b": fid & ((1 << 30) - 1)}

    def label(x):
        if x == _LONE:
            return ("lone", -1)
        return ("ref", x & ~_REF_FLAG) if x & _REF_FLAG else ("inc", x)

    return {"kind": kind, "ref_face": (fid >> 45) & 0xFFFF, "inc_face": (fid >> 29) & 0xFFFF,
            "label_in": label((fid >> 14) & _LABEL_MASK), "label_out": label(fid & _LABEL_MASK)}


# ---------------------------------------------------------------------------
# Kernels
# ---------------------------------------------------------------------------




@njit(borrow=True)
def _face_query(normals, offsets, f, verts):
    """Separation of face ``f``'s plane from the other hull's vertices (RTCD 5.2.1)."""
    n = v.row(normals, f)
    lo = np.inf
    for i in range(verts.shape[0]):
        lo = min(lo, v.dot(n, v.row(verts, i)))
    return lo - offsets[f]


@njit(borrow=True)
def _face_query_soa(normals, offsets, f, xyz, m, tmp):
    """:func:`_face_query` with the other hull's ``m`` vertices as coordinate rows ``xyz (3, >= m)``,
    and the first vertex at the minimum: returns ``(separation, index)``.

    The same value (the same products and sums, and a minimum does not depend on the order it
    is taken in): the dot products go into ``tmp`` in a loop the compiler vectorises, and the
    minimum is taken with four running minima, so that the compares do not wait on each other.
    The index (for the edge-pair search's bound, :func:`collision.gauss_map.edge_pairs_pruned`)
    is found after, by a scan for that minimum.
    """
    n0, n1, n2 = normals[f, 0], normals[f, 1], normals[f, 2]
    xs, ys, zs = xyz[0], xyz[1], xyz[2]
    for i in range(m):
        tmp[i] = n0 * xs[i] + n1 * ys[i] + n2 * zs[i]
    lo0 = lo1 = lo2 = lo3 = np.inf
    i = 0
    while i + 4 <= m:
        lo0 = min(lo0, tmp[i])
        lo1 = min(lo1, tmp[i + 1])
        lo2 = min(lo2, tmp[i + 2])
        lo3 = min(lo3, tmp[i + 3])
        i += 4
    while i < m:
        lo0 = min(lo0, tmp[i])
        i += 1
    lo = min(min(lo0, lo1), min(lo2, lo3))
    at = 0
    for i in range(m):
        if tmp[i] == lo:
            at = i
            break
    return lo - offsets[f], at


@njit(borrow=True)
def _face_axes_soa(normals, offsets, xyz, m, tmp, margin, c_own, sup, ub):
    """The face axes of one hull (``normals (f, 3)``, ``offsets (f,)``) against the other hull's
    ``m`` vertices (coordinate rows ``xyz (3, >= m)``), as the loop of :func:`_face_query_soa` over
    the faces in order would give them, with most faces bounded instead of queried.

    Any vertex bounds a face's separation from above (the separation is a minimum over the
    vertices): with seven sample vertices of the other hull (the extremes along the axes, and the
    one least along the direction from this hull's centre ``c_own`` to the other's) each face gets
    the bound ``ub[f]`` from the very products its query would take the minimum of, so the bound
    is at least the separation in floating point too. The face with the largest bound is queried
    first; then, in face order, a face is queried only when its bound exceeds the margin or reaches
    the best separation found: the faces skipped can neither separate nor be the largest (of equal
    ones the first, as in face order). ``sup[f]`` gets the vertex at the minimum of each face
    queried, the sample at the bound's minimum of the others (for the edge-pair bound of
    :func:`collision.gauss_map.edge_pairs_pruned`, which any vertex serves).

    Returns ``(sep, f, found, tests)``: the first face separating by more than ``margin`` and its
    separation (``found``), or else the largest separation and its first face; ``tests`` the faces
    queried.
    """
    xs, ys, zs = xyz[0], xyz[1], xyz[2]
    cx = cy = cz = 0.0
    for i in range(m):
        cx += xs[i]
        cy += ys[i]
        cz += zs[i]
    d0, d1, d2 = cx / m - c_own[0], cy / m - c_own[1], cz / m - c_own[2]
    s0 = s1 = s2 = s3 = s4 = s5 = s6 = 0
    lx = ly = lz = lw = np.inf
    hx = hy = hz = -np.inf
    for i in range(m):
        x, y, z = xs[i], ys[i], zs[i]
        if x < lx:
            lx, s0 = x, i
        if x > hx:
            hx, s1 = x, i
        if y < ly:
            ly, s2 = y, i
        if y > hy:
            hy, s3 = y, i
        if z < lz:
            lz, s4 = z, i
        if z > hz:
            hz, s5 = z, i
        w = d0 * x + d1 * y + d2 * z
        if w < lw:
            lw, s6 = w, i
    top, top_f = -np.inf, 0
    for f in range(normals.shape[0]):
        n0, n1, n2 = normals[f, 0], normals[f, 1], normals[f, 2]
        lo, at = n0 * xs[s0] + n1 * ys[s0] + n2 * zs[s0], s0
        for k in (s1, s2, s3, s4, s5, s6):
            d = n0 * xs[k] + n1 * ys[k] + n2 * zs[k]
            if d < lo:
                lo, at = d, k
        u = lo - offsets[f]
        ub[f] = u
        sup[f] = at
        if u > top:
            top, top_f = u, f
    first, sup[top_f] = _face_query_soa(normals, offsets, top_f, xyz, m, tmp)
    tests = 1
    best, bf = -np.inf, -1
    for f in range(normals.shape[0]):
        u = ub[f]
        if u <= margin and u < first:
            continue
        if f == top_f:
            sep = first
        else:
            sep, sup[f] = _face_query_soa(normals, offsets, f, xyz, m, tmp)
            tests += 1
        if sep > margin:
            return sep, f, True, tests
        if sep > best:
            best, bf = sep, f
    return best, bf, False, tests


@njit(borrow=True)
def _centre(xyz, m):
    """The mean of the ``m`` points given as coordinate rows ``xyz (3, >= m)``."""
    cx = cy = cz = 0.0
    for i in range(m):
        cx += xyz[0, i]
        cy += xyz[1, i]
        cz += xyz[2, i]
    return cx / m, cy / m, cz / m


@njit(borrow=True)
def _face_contact(ref_v, ref_loop, rn, rd, inc_v, inc_n, inc_fs, inc_fv, inc_vfs, inc_vf,
                  kind, ref_face, margin, tol2, pin, pref, depth, ids, work):
    """Clip the incident face against the reference face; fill the outputs, return the count.

    Everything is in one frame (A's). ``rn, rd``: the reference plane
    (outward normal and offset). ``pin`` get the points on the incident hull,
    ``pref`` their projections on the reference face.
    """
    # Incident face: among the faces around the incident hull's deepest vertex
    # (support point along -rn), the most anti-parallel to rn. Taking it around
    # the deepest vertex keeps that vertex in the patch.
    s, lo = 0, np.inf
    for i in range(inc_v.shape[0]):
        d = v.dot(rn, v.row(inc_v, i))
        if d < lo:
            s, lo = i, d
    inc, lo_f = -1, np.inf
    for k in range(inc_vfs[s], inc_vfs[s + 1]):
        f = inc_vf[k]
        d = v.dot(rn, v.row(inc_n, f))
        if d < lo_f:
            inc, lo_f = f, d
    i0, i1 = inc_fs[inc], inc_fs[inc + 1]
    m = i1 - i0
    nr = ref_loop.shape[0]
    # scratch (at least m + nr + 1 rows: a convex polygon clipped by nr planes gains at most nr corners)
    buf, lab, out, olab = work[5], work[6], work[7], work[8]
    for k in range(m):
        v.store(buf, k, v.row(inc_v, inc_fv[i0 + k]))
        lab[k] = k  # the patch edge leaving corner k is incident edge k -> k+1
    # Sutherland-Hodgman (RTCD 8.3.4) against each side plane of the reference
    # face, keeping the label of the patch edge that leaves each point.
    # Points exactly on a plane count as inside; an intersection is made only
    # when the two ends are strictly on both sides (no duplicate points).
    for j in range(nr):
        if m == 0:
            break
        pj = v.row(ref_v, ref_loop[j])
        pk = v.row(ref_v, ref_loop[(j + 1) % nr])
        sn = v.cross(v.sub(pk, pj), rn)  # outward side normal (loop is CCW about rn)
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
                elif db > 0.0:  # a on the plane, b outside: leave along the plane
                    v.store(out, c, a)
                    olab[c] = _REF_FLAG | j
                    c += 1
                else:
                    v.store(out, c, a)
                    olab[c] = lab[i]
                    c += 1
            elif db < 0.0:  # entering: the crossing continues along edge i
                v.store(out, c, v.madd(a, v.sub(b, a), da / (da - db)))
                olab[c] = lab[i]
                c += 1
        for i in range(c):
            buf[i, 0], buf[i, 1], buf[i, 2] = out[i, 0], out[i, 1], out[i, 2]
            lab[i] = olab[i]
        m = c
    base = (kind << _KIND_SHIFT) | (ref_face << 45) | (inc << 29)
    # Keep points below the reference plane + margin, projected onto it.
    cnt = 0
    pid, dep, pts = work[9], work[10], work[11]
    for i in range(m):
        x = v.row(buf, i)
        d = rd - v.dot(rn, x)
        if d >= -margin:
            v.store(pts, cnt, x)
            dep[cnt] = d
            pid[cnt] = base | (lab[(i - 1 + m) % m] << 14) | lab[i]
            cnt += 1
    if cnt == 0:
        # Clipping left nothing although the axis says contact (deep or
        # glancing configurations): report the deepest vertex alone. Its
        # projection may fall outside the reference face (then it is on the
        # reference plane, not on the hull); seen in ~1% of deep random
        # overlaps, never in shallow ones (tests/collision/test_manifold.py).
        x = v.row(inc_v, s)
        d = rd - v.dot(rn, x)
        if d < -margin:
            return 0
        v.store(pts, 0, x)
        dep[0] = d
        pid[0] = base | (_LONE << 14) | _LONE
        cnt = 1
    keep = work[12]
    k = _reduce_into(rn, pts, dep, cnt, tol2, keep, work[13])
    for i in range(k):
        x = v.row(pts, keep[i])
        d = dep[keep[i]]
        v.store(pin, i, x)
        v.store(pref, i, v.madd(x, rn, d))
        depth[i] = d
        ids[i] = pid[keep[i]]
    return k


@njit(borrow=True)
def _to_world(rot, t, p):
    return (rot[0, 0] * p[0] + rot[0, 1] * p[1] + rot[0, 2] * p[2] + t[0],
            rot[1, 0] * p[0] + rot[1, 1] * p[1] + rot[1, 2] * p[2] + t[1],
            rot[2, 0] * p[0] + rot[2, 1] * p[1] + rot[2, 2] * p[2] + t[2])


@njit(borrow=True)
def relative_pose(pose_a, pose_b, rot):
    """B's pose in A's frame, ``x_a = rot x_b + t``: fills ``rot (3, 3)`` with ``Ra^T Rb`` and
    returns ``t = Ra^T (tb - ta)`` as a tuple (the arithmetic every hull-pair kernel uses)."""
    for i in range(3):
        for j in range(3):
            rot[i, j] = (pose_a[0, i] * pose_b[0, j] + pose_a[1, i] * pose_b[1, j]
                         + pose_a[2, i] * pose_b[2, j])
    dt = (pose_b[0, 3] - pose_a[0, 3], pose_b[1, 3] - pose_a[1, 3], pose_b[2, 3] - pose_a[2, 3])
    return (pose_a[0, 0] * dt[0] + pose_a[1, 0] * dt[1] + pose_a[2, 0] * dt[2],
            pose_a[0, 1] * dt[0] + pose_a[1, 1] * dt[1] + pose_a[2, 1] * dt[2],
            pose_a[0, 2] * dt[0] + pose_a[1, 2] * dt[1] + pose_a[2, 2] * dt[2])


@njit(borrow=True)
def cached_sep(Va, Na, Da, EVa, EFa, a_v, a_nv, a_f, a_nf, a_e, a_ne,
               Vb, Nb, Db, EVb, EFb, b_v, b_nv, b_f, b_nf, b_e, b_ne, rot, tt, ck, ci, cj):
    """The separation along the feature a pair's coherence cache names (the cache's ``(kind, i, j)``
    as ``ck, ci, cj``), the first test of :func:`collide_hull_hull_into`.

    The hulls are read in place: A from rows of ``Va (., 3)`` (vertices), ``Na (., 3)`` (normals),
    ``Da (.,)`` (offsets), ``EVa (., 2)`` (edge vertices) and ``EFa (., 2)`` (edge faces), its
    ``a_nv`` vertices from row ``a_v``, ``a_nf`` faces from ``a_f``, ``a_ne`` edges from ``a_e``;
    B likewise (a hull's own arrays with zero starts, or the concatenated arrays of a
    :class:`collision.hull_batch.HullTable`, so that a batch tests a pair without cutting views
    of it: numba counts references on every array it passes or cuts). ``rot, tt``: B's pose in A's
    frame (:func:`relative_pose`). Returns ``(tested, sep)``: whether the cache named a feature of
    these hulls, and its separation, the value the full search computes for that feature.
    """
    zero = (0.0, 0.0, 0.0)
    if ck == _FACE_A and 0 <= ci < a_nf:
        n = v.row(Na, a_f + ci)
        lo = np.inf
        for i in range(b_nv):
            lo = min(lo, v.dot(n, v.add(_to_world(rot, zero, v.row(Vb, b_v + i)), tt)))
        return True, lo - Da[a_f + ci]
    if ck == _FACE_B and 0 <= cj < b_nf:
        n = _to_world(rot, zero, v.row(Nb, b_f + cj))
        off = Db[b_f + cj] + v.dot(n, tt)
        lo = np.inf
        for i in range(a_nv):
            lo = min(lo, v.dot(n, v.row(Va, a_v + i)))
        return True, lo - off
    if ck == _EDGE and 0 <= ci < a_ne and 0 <= cj < b_ne:
        a = v.row(Na, a_f + EFa[a_e + ci, 0])
        b = v.row(Na, a_f + EFa[a_e + ci, 1])
        c = v.scale(_to_world(rot, zero, v.row(Nb, b_f + EFb[b_e + cj, 0])), -1.0)
        d = v.scale(_to_world(rot, zero, v.row(Nb, b_f + EFb[b_e + cj, 1])), -1.0)
        if _is_minkowski_face(a, b, c, d):
            pb = v.add(_to_world(rot, zero, v.row(Vb, b_v + EVb[b_e + cj, 0])), tt)
            qb = v.add(_to_world(rot, zero, v.row(Vb, b_v + EVb[b_e + cj, 1])), tt)
            sep, _ = edge_sep(v.row(Va, a_v + EVa[a_e + ci, 0]), v.row(Va, a_v + EVa[a_e + ci, 1]), pb, qb, a, b)
            return True, sep
    return False, 0.0


@njit
def hull_work(vertices, faces, edges):
    """Scratch arrays for :func:`collide_hull_hull_into`, enough for any pair of hulls of at most
    ``vertices`` vertices, ``faces`` faces and ``edges`` edges each (a batch allocates them once)."""
    cap = 2 * vertices + 2
    return (np.empty((3, 3)), np.empty((vertices, 3)), np.empty((faces, 3)), np.empty(faces),
            np.empty((21, max(edges, 1) + 1)),  # (a hull has at most e + 1 arc groups)
            np.empty((cap, 3)), np.empty(cap, dtype=np.int64), np.empty((cap, 3)), np.empty(cap, dtype=np.int64),
            np.empty(cap, dtype=np.int64), np.empty(cap), np.empty((cap, 3)), np.empty(cap, dtype=np.int64),
            np.empty(cap, dtype=np.bool_), np.empty((4, 3)), np.empty((4, 3)), np.empty(6),
            np.empty(max(edges, 1) + 1, dtype=np.int64), np.empty((3, vertices)), np.empty((3, vertices)),
            np.empty(vertices), np.empty(faces, dtype=np.int64), np.empty(faces, dtype=np.int64), np.empty(faces))


@njit
def collide_hull_hull_kernel(va, na, da, fsa, fva, eva, efa, vfsa, vfa, aca, aoa, gca, gsa,
                             vb, nb, db, fsb, fvb, evb, efb, vfsb, vfb, acb, aob, gcb, gsb,
                             pose_a, pose_b, margin, scale, cache, brute=False):
    """The compiled body of :func:`collide_hull_hull`.

    Each hull comes as its :class:`~collision.hull_data.HullData` arrays in field order
    (``vertices`` ... ``vert_faces``, then ``arc_caps, arc_order, group_caps, group_start``).
    Returns ``(status, kind, count, tests, sat_sep, normal (3,), points_a (4, 3),
    points_b (4, 3), depths (4,), ids (4,))``, world frame; ``status`` is 0, or
    1/2 for a non-finite / non-rigid ``pose_a``, 3/4 for ``pose_b``.
    ``cache`` (int64[3]) is read and updated in place. ``brute``: the reference
    twin, for tests and benchmarks: every edge pair
    (:func:`collision.gauss_map.edge_pairs_brute`) and the plain face queries
    (:func:`_face_query`); the result is the same.
    """
    normal = np.zeros(3)
    pa_out = np.zeros((4, 3))
    pb_out = np.zeros((4, 3))
    dep_out = np.zeros(4)
    id_out = np.zeros(4, dtype=np.int64)
    work = hull_work(max(va.shape[0], vb.shape[0]), max(na.shape[0], nb.shape[0]), max(eva.shape[0], evb.shape[0]))
    st, kind, cnt, tests, sat_sep = collide_hull_hull_into(
        va, na, da, fsa, fva, eva, efa, vfsa, vfa, aca, aoa, gca, gsa, vb, nb, db, fsb, fvb, evb, efb, vfsb, vfb,
        acb, aob, gcb, gsb, pose_a, pose_b, margin, scale, cache, work, normal, pa_out, pb_out, dep_out, id_out, brute)
    return st, kind, cnt, tests, sat_sep, normal, pa_out, pb_out, dep_out, id_out


@njit(borrow=True)
def collide_hull_hull_into(va, na, da, fsa, fva, eva, efa, vfsa, vfa, aca, aoa, gca, gsa,
                           vb, nb, db, fsb, fvb, evb, efb, vfsb, vfb, acb, aob, gcb, gsb,
                           pose_a, pose_b, margin, scale, cache, work, normal, pa_out, pb_out, dep_out, id_out,
                           brute=False, cache_tested=False):
    """:func:`collide_hull_hull_kernel` writing into ``normal (3,)``, ``pa_out, pb_out (4, 3)``,
    ``dep_out (4,)``, ``id_out (4,)`` (zeroed first) with the scratch ``work`` of :func:`hull_work`
    (no allocation per pair); returns ``(status, kind, count, tests, sat_sep)``. ``cache_tested``: the
    caller has tested the feature ``cache`` names (:func:`cached_sep`) and it did not separate the
    pair by more than ``margin``; it counts as one feature tested and is not tested again."""
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
    # B in A's frame: x_a = R x_b + t with R = Ra^T Rb, t = Ra^T (tb - ta).
    rot = work[0]
    tt = relative_pose(pose_a, pose_b, rot)
    tests = 0
    # Frame-to-frame coherence: the feature that mattered last time first, before B is moved into
    # A's frame (a pair that stays apart costs one feature test): each value is computed by the
    # same expressions as the full search below, so it is the value that search would find.
    if cache_tested:
        tests += 1
    else:
        tested, sep = cached_sep(va, na, da, eva, efa, 0, va.shape[0], 0, na.shape[0], 0, eva.shape[0],
                                 vb, nb, db, evb, efb, 0, vb.shape[0], 0, nb.shape[0], 0, evb.shape[0],
                                 rot, tt, cache[0], cache[1], cache[2])
        if tested:
            tests += 1
            if sep > margin:
                return 0, _NONE, 0, tests, -sep
    zero = (0.0, 0.0, 0.0)

    vb_a = work[1][:vb.shape[0]]
    # the vertices also as coordinate rows, for the face queries (_face_query_soa)
    xyz_b, xyz_a, tmp = work[18], work[19], work[20]
    for i in range(vb.shape[0]):
        p = v.add(_to_world(rot, zero, v.row(vb, i)), tt)
        v.store(vb_a, i, p)
        xyz_b[0, i], xyz_b[1, i], xyz_b[2, i] = p
    for i in range(va.shape[0]):
        xyz_a[0, i], xyz_a[1, i], xyz_a[2, i] = va[i, 0], va[i, 1], va[i, 2]
    nb_a = work[2][:nb.shape[0]]
    db_a = work[3][:nb.shape[0]]
    for f in range(nb.shape[0]):
        n = _to_world(rot, zero, v.row(nb, f))
        v.store(nb_a, f, n)
        db_a[f] = db[f] + v.dot(n, tt)

    # Face axes of A, then of B; stop at the first one that separates. (Each face's nearest vertex
    # of the other hull, sup_a / sup_b, bounds the edge pairs below.)
    sup_a, sup_b = work[21], work[22]
    fa_sep, fa = -np.inf, -1
    fb_sep, fb = -np.inf, -1
    if brute:
        for f in range(na.shape[0]):
            sep = _face_query(na, da, f, vb_a)
            tests += 1
            if sep > margin:
                cache[0], cache[1], cache[2] = _FACE_A, f, -1
                return 0, _NONE, 0, tests, -sep
            if sep > fa_sep:
                fa_sep, fa = sep, f
        for f in range(nb.shape[0]):
            sep = _face_query(nb_a, db_a, f, va)
            tests += 1
            if sep > margin:
                cache[0], cache[1], cache[2] = _FACE_B, -1, f
                return 0, _NONE, 0, tests, -sep
            if sep > fb_sep:
                fb_sep, fb = sep, f
    else:
        # the same axes, most faces bounded by a few vertices instead of queried (_face_axes_soa)
        c_a = _centre(xyz_a, va.shape[0])
        c_b = _centre(xyz_b, vb.shape[0])
        fa_sep, fa, found, ft = _face_axes_soa(na, da, xyz_b, vb.shape[0], tmp, margin, c_a, sup_a, work[23])
        tests += ft
        if found:
            cache[0], cache[1], cache[2] = _FACE_A, fa, -1
            return 0, _NONE, 0, tests, -fa_sep
        fb_sep, fb, found, ft = _face_axes_soa(nb_a, db_a, xyz_a, va.shape[0], tmp, margin, c_b, sup_b, work[23])
        tests += ft
        if found:
            cache[0], cache[1], cache[2] = _FACE_B, -1, fb
            return 0, _NONE, 0, tests, -fb_sep
    # Edge pairs whose Gauss-map arcs cross (B's normals negated: the Gauss
    # map of -B), found through the arcs' bounding caps (collision.gauss_map):
    # the same pairs, in another order, as the brute-force search.
    best = work[16]
    if brute or eva.shape[0] * evb.shape[0] <= SMALL_EDGE_PAIRS:
        et, found, _ = edge_pairs_brute(va, na, eva, efa, vb_a, nb_a, evb, efb, margin, work[4], best)
    else:
        et, found, _ = edge_pairs_pruned(va, na, eva, efa, aca, aoa, gca, gsa, vb_a, nb_a, evb, efb, acb, aob, gcb,
                                         gsb, rot, margin, max(fa_sep, fb_sep), sup_a, sup_b, work[4], work[17], best)
    tests += et
    e_sep, e_i, e_j = best[0], int(best[1]), int(best[2])
    e_n = (best[3], best[4], best[5])
    if found:
        cache[0], cache[1], cache[2] = _EDGE, e_i, e_j
        return 0, _NONE, 0, tests, -e_sep

    sat_sep = max(fa_sep, max(fb_sep, e_sep))
    face_sep = max(fa_sep, fb_sep)
    abs_tol = ABS_TOL * scale
    if e_i >= 0 and e_sep > face_sep + EDGE_REL_TOL * abs(face_sep) + abs_tol:
        kind = _EDGE
    elif fb_sep > fa_sep + FACE_REL_TOL * abs(fa_sep) + abs_tol:
        kind = _FACE_B
    else:
        kind = _FACE_A
    rot_a = pose_a[:3, :3]
    t_a = (pose_a[0, 3], pose_a[1, 3], pose_a[2, 3])
    zero = (0.0, 0.0, 0.0)
    tol2 = (MERGE_TOL * scale) ** 2
    pin = work[14]
    pref = work[15]
    if kind == _EDGE:
        cache[0], cache[1], cache[2] = _EDGE, e_i, e_j
        c1, c2, _, _ = closest_pt_segment_segment_t(
            v.row(va, eva[e_i, 0]), v.row(va, eva[e_i, 1]), v.row(vb_a, evb[e_j, 0]), v.row(vb_a, evb[e_j, 1]))
        v.store(pa_out, 0, _to_world(rot_a, t_a, c1))
        v.store(pb_out, 0, _to_world(rot_a, t_a, c2))
        dep_out[0] = -e_sep
        id_out[0] = (_EDGE << _KIND_SHIFT) | (e_i << 30) | e_j
        n_w = _to_world(rot_a, zero, e_n)
        normal[0], normal[1], normal[2] = n_w[0], n_w[1], n_w[2]
        return 0, _EDGE, 1, tests, -sat_sep
    if kind == _FACE_A:
        cache[0], cache[1], cache[2] = _FACE_A, fa, -1
        rn = v.row(na, fa)
        cnt = _face_contact(va, fva[fsa[fa]:fsa[fa + 1]], rn, da[fa], vb_a, nb_a, fsb, fvb, vfsb, vfb,
                            _FACE_A, fa, margin, tol2, pin, pref, dep_out, id_out, work)
        for i in range(cnt):
            v.store(pa_out, i, _to_world(rot_a, t_a, v.row(pref, i)))
            v.store(pb_out, i, _to_world(rot_a, t_a, v.row(pin, i)))
        n_w = _to_world(rot_a, zero, rn)
    else:
        cache[0], cache[1], cache[2] = _FACE_B, -1, fb
        rn = v.row(nb_a, fb)
        cnt = _face_contact(vb_a, fvb[fsb[fb]:fsb[fb + 1]], rn, db_a[fb], va, na, fsa, fva, vfsa, vfa,
                            _FACE_B, fb, margin, tol2, pin, pref, dep_out, id_out, work)
        for i in range(cnt):
            v.store(pa_out, i, _to_world(rot_a, t_a, v.row(pin, i)))
            v.store(pb_out, i, _to_world(rot_a, t_a, v.row(pref, i)))
        n_w = _to_world(rot_a, zero, v.scale(rn, -1.0))
    normal[0], normal[1], normal[2] = n_w[0], n_w[1], n_w[2]
    if cnt == 0:
        kind = _NONE
    return 0, kind, cnt, tests, -sat_sep


def hull_arrays(h: HullData) -> tuple[NDArray, ...]:
    """The arrays of ``h`` in the order :func:`collide_hull_hull_kernel` takes them (13 of them)."""
    return (h.vertices, h.normals, h.offsets, h.face_start, h.face_verts, h.edge_verts, h.edge_faces,
            h.vert_face_start, h.vert_faces, h.arc_caps, h.arc_order, h.group_caps, h.group_start)


def _as_hull(h, name):
    if isinstance(h, (HullData, ConvexPolyhedron)):
        return HullData.from_polyhedron(h)
    return HullData.from_points(h, name=name)


def collide_hull_hull(hull_a: HullData | ConvexPolyhedron | ArrayLike, pose_a: ArrayLike,
                      hull_b: HullData | ConvexPolyhedron | ArrayLike, pose_b: ArrayLike, margin: float = 0.0,
                      cache: SatCache | NDArray[np.int64] | None = None) -> Manifold:
    """Contact manifold of two posed convex hulls.

    SAT in A's frame over A's faces, B's faces and the edge pairs that form
    Minkowski faces (Gregorius, GDC 2013), then clipping (RTCD 8.3.4) for a
    face axis or the closest points of two segments (RTCD 5.1.9) for an edge
    axis, and a reduction to at most four points. See the module docstring
    for frame, signs and feature ids.

    Parameters
    ----------
    hull_a, hull_b : HullData, ConvexPolyhedron, or (n, 3) float64 points
        The shapes in their model frames (points are hulled, which costs a
        Qhull call each time: pass a HullData or ConvexPolyhedron in loops).
    pose_a, pose_b : (4, 4) float64
        Rigid model-to-world transforms.
    margin : float
        Speculative distance >= 0: pairs closer than this get contacts with
        negative depth (down to ``-margin``).
    cache : SatCache or int64[3] array, optional
        Per-pair coherence cache, read and updated in place.

    Returns
    -------
    Manifold
        Empty (``kind == "none"``) when the hulls are apart by more than
        ``margin``.

    Raises
    ------
    ValueError
        For a non-finite or non-rigid pose, a negative or non-finite margin,
        or hull points that span no volume; the message names the argument.
    """
    ha = _as_hull(hull_a, "hull_a")
    hb = _as_hull(hull_b, "hull_b")
    pa = as_pose(pose_a, "pose_a")
    pb = as_pose(pose_b, "pose_b")
    margin = as_number(margin, "margin", low=0.0, high=MAX_COORD)
    if cache is None:
        cdata = np.full(3, -1, dtype=np.int64)
    elif isinstance(cache, SatCache):
        cdata = cache.data
    else:
        cdata = cache
        if not (isinstance(cdata, np.ndarray) and cdata.dtype == np.int64 and cdata.shape == (3,)):
            raise ValueError("cache: expected a SatCache or an int64 array of shape (3,)")
    st, kind, cnt, tests, sat_depth, normal, p_a, p_b, dep, ids = collide_hull_hull_kernel(
        *hull_arrays(ha), *hull_arrays(hb), pa, pb, margin, min(ha.scale, hb.scale), cdata)
    if st:
        name = "pose_a" if st <= 2 else "pose_b"
        raise ValueError(f"{name}: {POSE_ERRORS[(st - 1) % 2 + 1]}")
    return Manifold(normal=normal, points_a=p_a[:cnt], points_b=p_b[:cnt], depths=dep[:cnt], ids=ids[:cnt],
                    kind=KIND_NAMES[kind], tests=int(tests), sat_depth=float(sat_depth))
