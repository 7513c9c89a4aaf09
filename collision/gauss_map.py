"""Gauss-map arcs of a convex hull and the edge-pair search of the separating-axis test.

On the Gauss map (the unit sphere of outward normals) a convex polyhedron's
face is a point, its edge the great-circle arc between the normals of the two
faces that meet there, its vertex a spherical polygon. An edge of A and an
edge of B span a face of the Minkowski difference ``A - B``, and so a
candidate separating axis, exactly when A's arc crosses the arc of B's edge on
the Gauss map of ``-B`` (B's normals negated): D. Gregorius, "The Separating
Axis Test between Convex Polyhedra", GDC 2013. Testing every pair costs
``E_A x E_B`` arc tests although only a few hundred pairs cross: two hulls of
200 edges each give 40,000 tests for a few hundred crossings.

Here each hull's arcs are gathered, at build time, into small groups of
arcs near each other on the sphere (:func:`build_arc_groups`: a median split
of the arcs' midpoints, as a bounding-volume tree is built top-down, RTCD
6.2.1, stopped at groups of :data:`ARC_GROUP` arcs), and every arc and every
group gets a bounding cap (a unit axis and a half-angle such that the arcs
lie within that angle of the axis: the normal cones of back-face culling).
Two arcs can only cross if they share a point, so an arc of A whose cap is
further from a group of B than the sum of the two half-angles crosses none
of the group's arcs. :func:`edge_pairs_pruned` tests each arc of A against
all of B's groups (first group against group, in short branch-free loops)
and gives the exact Gregorius
test only to the arcs of the groups that survive, with the same arithmetic
as the brute-force twin :func:`edge_pairs_brute`, so the pairs that reach
:func:`edge_query` are the same ones.

The floor. Of the pairs that cross, the kernel needs only those that beat its
best face axis (a smaller separation changes neither the axis nor the SAT
depth), so :func:`edge_pairs_pruned` also bounds each arc's separations from
above, from the two face queries at its edge (the other hull's vertex least
along each face normal: a support-point argument, see the function), and
skips the arcs that cannot beat that floor: on the settled decomposed-mesh
scene about 2% of the arcs stay, and the arc pairs given the exact test drop
from ~11% of all pairs (caps alone) to well under 1%.

Conservatism. The caps are padded so that they also cover every arc that
rounding could make the exact test see: the test's sign decisions are
products of unit vectors with an absolute error of a few ulps, which near an
arc of dihedral angle ``theta`` is an angular error of about
``eps / sin(theta)^2`` (the ``1/sin`` of a short arc's ill-defined plane,
or of a near-antipodal arc's ill-defined middle). Each arc gets the pad
``ARC_SLACK + ARC_ROUND / sin(theta)^2``; an arc whose pad would exceed
``ARC_MAX_PAD`` (two faces at a dihedral angle within ~3e-6 rad of flat or of
a knife edge; the hull builder merges only faces coplanar to 1e-12) is
"wild": its cap is unbounded, and it sits in a last, unbounded group, so it
is tested against every arc of the other hull. A cap whose padded half-angle
would reach ``CONE_MAX`` (just under 90 degrees) is unbounded too and prunes
nothing; below 90 degrees a cap that holds both ends of a minor arc holds
the whole arc, which is what makes the end points enough to bound an arc.

Layout (all in the hull's own frame, built by :func:`build_arc_groups` and
stored on :class:`collision.hull_data.HullData`):

* ``arc_caps (e, 5) float64``: each edge's cap, in edge order: axis
  ``(x, y, z)``, ``cos`` and ``sin`` of the padded half-angle; ``cos == -1``
  marks an unbounded cap.
* ``arc_order (e,) int64``: the edges group by group.
* ``group_caps (g, 5) float64``: each group's cap, as ``arc_caps``.
* ``group_start (g + 1,) int64``: group ``k`` is
  ``arc_order[group_start[k]:group_start[k + 1]]``; the wild arcs, if any,
  are the last group (unbounded).
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import NDArray

from . import _vec as v
from ._jit import njit

__all__ = ["build_arc_groups", "edge_pairs_pruned", "edge_pairs_brute", "edge_query", "face_supports",
           "is_minkowski_face",
           "ARC_GROUP", "ARC_SLACK", "ARC_ROUND", "ARC_MAX_PAD", "CONE_MAX", "PARALLEL_SINE"]

# Edge pairs closer to parallel than this sine give no axis (their Minkowski
# face is a sliver covered by the neighbouring face axes; the cross product
# would be mostly rounding).
PARALLEL_SINE = 1e-6

# Most arcs in a group.
ARC_GROUP = 4
# Angular pad of every arc (rad), and the rounding term divided by sin(theta)^2 (see the module
# docstring); an arc padded by more than ARC_MAX_PAD is wild (tested against everything).
ARC_SLACK = 1e-6
ARC_ROUND = 1e-13
ARC_MAX_PAD = 1e-2
# Largest half-angle of a bounded cone (rad): under 90 degrees, so that a cap holding the two ends
# of a minor arc holds the arc, and two half-angles sum to less than 180 degrees.
CONE_MAX = 0.5 * math.pi - 1e-3


def _angle_to(axis, p):
    """(k,) float64: the angles between the unit ``axis (3,)`` and the rows of ``p (k, 3)``."""
    return np.arctan2(np.linalg.norm(np.cross(p, axis), axis=1), p @ axis)


def build_arc_groups(normals: NDArray[np.float64], edge_faces: NDArray[np.int64], group_size: int = ARC_GROUP
                     ) -> tuple[NDArray[np.float64], NDArray[np.int64], NDArray[np.float64], NDArray[np.int64]]:
    """Bounding caps of a hull's Gauss-map arcs and of small groups of them.

    Parameters
    ----------
    normals : (f, 3) float64
        Outward unit face normals.
    edge_faces : (e, 2) int64
        The two faces of each edge (its arc runs between their normals).
    group_size : int
        Most arcs in a group (>= 1).

    Returns
    -------
    arc_caps : (e, 5) float64
    arc_order : (e,) int64
    group_caps : (g, 5) float64
    group_start : (g + 1,) int64
        See the module docstring.
    """
    normals = np.asarray(normals, dtype=np.float64)
    edge_faces = np.asarray(edge_faces, dtype=np.int64).reshape(-1, 2)
    a = normals[edge_faces[:, 0]]
    b = normals[edge_faces[:, 1]]
    s = np.linalg.norm(np.cross(a, b), axis=1)
    with np.errstate(divide="ignore"):
        pad = ARC_SLACK + ARC_ROUND / (s * s)
    wild = ~(pad <= ARC_MAX_PAD)
    # where each arc sits on the sphere (for the split and the axes): its midpoint, or an end
    # for a half circle
    mid = a + b
    ln = np.linalg.norm(mid, axis=1)
    mid = np.where(ln[:, None] > 1e-9, mid / np.maximum(ln, 1e-300)[:, None], a)

    def cap(idx):
        """(5,): a cap holding the padded arcs ``idx`` (unbounded if none under CONE_MAX)."""
        axis = mid[idx].sum(0)
        ln = np.linalg.norm(axis)
        if len(idx) == 0 or not ln > 1e-9 or wild[idx].any():
            return (0.0, 0.0, 1.0, -1.0, 0.0)
        axis = axis / ln
        half = float(np.max(np.maximum(_angle_to(axis, a[idx]), _angle_to(axis, b[idx])) + pad[idx]))
        if not half <= CONE_MAX:
            return (axis[0], axis[1], axis[2], -1.0, 0.0)
        return (axis[0], axis[1], axis[2], math.cos(half), math.sin(half))

    arc_caps = np.array([cap(np.array([e])) for e in range(len(a))], dtype=np.float64).reshape(-1, 5)
    # groups: split the good arcs at the median of the coordinate in which their midpoints spread
    # most, until a part has at most group_size arcs (first part first)
    order, caps, start = [], [], [0]
    todo = [np.flatnonzero(~wild)]
    while todo:
        idx = todo.pop()
        if len(idx) <= group_size:
            if len(idx):
                order.extend(idx.tolist())
                caps.append(cap(idx))
                start.append(len(order))
            continue
        pts = mid[idx]
        ax = int(np.argmax(pts.max(0) - pts.min(0)))
        srt = idx[np.argsort(pts[:, ax], kind="stable")]
        h = len(srt) // 2
        todo.append(srt[h:])
        todo.append(srt[:h])
    if wild.any():
        order.extend(np.flatnonzero(wild).tolist())
        caps.append((0.0, 0.0, 1.0, -1.0, 0.0))
        start.append(len(order))
    return (arc_caps, np.array(order, dtype=np.int64), np.array(caps, dtype=np.float64).reshape(-1, 5),
            np.array(start, dtype=np.int64))


@njit
def is_minkowski_face(a, b, c, d):
    """Do the Gauss-map arcs ``a-b`` (edge of A) and ``c-d`` (edge of -B) cross?

    Gregorius (GDC 2013): ``c`` and ``d`` lie on opposite sides of the plane
    through ``a, b``, ``a`` and ``b`` on opposite sides of the plane through
    ``c, d``, and the crossing is on the same hemisphere (not antipodal).
    """
    n_ab = v.cross(a, b)
    sc = v.dot(c, n_ab)
    sd = v.dot(d, n_ab)
    if sc * sd >= 0.0:
        return False
    n_cd = v.cross(c, d)
    ta = v.dot(a, n_cd)
    tb = v.dot(b, n_cd)
    if ta * tb >= 0.0:
        return False
    return sc * tb > 0.0


@njit(borrow=True)
def edge_query(va, ea, i, a, b, vb, eb, j):
    """Separation along the Minkowski face of edge ``i`` of A and edge ``j`` of B.

    Returns ``(sep, normal)``; ``sep = -inf`` for (near) parallel edges. The
    normal is oriented out of A: it lies on A's arc ``a-b``, so ``n.(a+b) > 0``.
    """
    return edge_sep(v.row(va, ea[i, 0]), v.row(va, ea[i, 1]), v.row(vb, eb[j, 0]), v.row(vb, eb[j, 1]), a, b)


@njit(inline="always")
def edge_sep(pa, qa, pb, qb, a, b):
    """:func:`edge_query` on the edges' end points ``pa-qa`` (A) and ``pb-qb`` (B, in A's frame)
    and A's arc ``a-b`` (tuples): ``(sep, normal)``, ``-inf`` for (near) parallel edges."""
    e1 = v.sub(qa, pa)
    e2 = v.sub(qb, pb)
    n = v.cross(e1, e2)
    ln = v.norm(n)
    if ln <= PARALLEL_SINE * math.sqrt(v.norm2(e1) * v.norm2(e2)):
        return -np.inf, n
    n = v.scale(n, 1.0 / ln)
    if v.dot(n, v.add(a, b)) < 0.0:
        n = v.scale(n, -1.0)
    return v.dot(n, v.sub(pb, pa)), n


@njit(borrow=True)
def _arcs_of_minus_b(nb_a, efb, order_b, arcs):
    """B's arcs on the Gauss map of -B, in A's frame, as coordinate rows of ``arcs (>= 9, e)``:
    ends ``c`` (rows 0-2) and ``d`` (3-5), plane ``m = c x d`` (6-8); column ``k`` is edge
    ``order_b[k]`` (tree order, so that a leaf's arcs are adjacent in memory)."""
    cx, cy, cz = arcs[0], arcs[1], arcs[2]
    dx, dy, dz = arcs[3], arcs[4], arcs[5]
    mx, my, mz = arcs[6], arcs[7], arcs[8]
    for k in range(order_b.shape[0]):
        j = order_b[k]
        c = v.scale(v.row(nb_a, efb[j, 0]), -1.0)
        d = v.scale(v.row(nb_a, efb[j, 1]), -1.0)
        m = v.cross(c, d)
        cx[k], cy[k], cz[k] = c
        dx[k], dy[k], dz[k] = d
        mx[k], my[k], mz[k] = m


@njit
def _arc_bound(a, b, w0, w1):
    """An upper bound of ``min(n . w0, n . w1)`` over the unit ``n`` on the minor arc ``a-b``.

    Each term separately: a point of the arc is ``n = (s a + t b) / |s a + t b|`` with ``s, t >= 0``,
    and ``|s a + t b| >= (s + t) cos(phi / 2)`` (``phi`` the arc's angle, the middle is nearest the
    origin), ``(s + t) >= |s a + t b|``, so with ``M = max(a . w, b . w)``: ``n . w <= M`` when
    ``M < 0``, ``n . w <= M / cos(phi / 2) = M sqrt(2 / (1 + a . b))`` otherwise. (For ``M < 0``
    the bound is the arc's maximum; above it the factor only matters to a separated pair.)
    """
    sec = math.sqrt(2.0 / (1.0 + v.dot(a, b)))
    m0 = max(v.dot(a, w0), v.dot(b, w0))
    m1 = max(v.dot(a, w1), v.dot(b, w1))
    if m0 >= 0.0:
        m0 *= sec
    if m1 >= 0.0:
        m1 *= sec
    return min(m0, m1)


@njit(borrow=True)
def _arc_bounds(va, na, eva, efa, caps_a, vb_a, nb_a, evb, efb, caps_b, order_b, sup_a, sup_b, floor,
                alive_a, alive_b, wild_b):
    """Which arcs can still be part of an edge pair separated by more than ``floor``.

    See :func:`edge_pairs_pruned` (the bound). Fills ``alive_a (e_a,)`` (edge order: 1 alive, 0 not,
    2 an unbounded arc, tested against every arc of B), ``alive_b (e_b,)`` (tree order ``order_b``:
    1 or 0; the unbounded arcs are alive) and ``wild_b (e_b,)`` (tree order: 1 for B's unbounded
    arcs, which every arc of A is tested against). Returns whether B has unbounded arcs.
    """
    # the pad: |w| and the other hull's extent are at most ``span`` (every point within span / 2
    # of A's origin); ``dmax`` the largest angular pad of a bounded arc (ARC_SLACK + ARC_ROUND /
    # sin^2, as the caps are built)
    big = 0.0
    for i in range(va.shape[0]):
        big = max(big, v.norm2(v.row(va, i)))
    for i in range(vb_a.shape[0]):
        big = max(big, v.norm2(v.row(vb_a, i)))
    span = 2.0 * math.sqrt(big)
    dmax = ARC_SLACK
    for i in range(eva.shape[0]):
        if not caps_a[i, 3] >= 0.0:
            alive_a[i] = np.inf
            continue
        a = v.row(na, efa[i, 0])
        b = v.row(na, efa[i, 1])
        pa = v.row(va, eva[i, 0])
        w0 = v.sub(v.row(vb_a, sup_a[efa[i, 0]]), pa)
        w1 = v.sub(v.row(vb_a, sup_a[efa[i, 1]]), pa)
        alive_a[i] = _arc_bound(a, b, w0, w1)
        dmax = max(dmax, ARC_SLACK + ARC_ROUND / v.norm2(v.cross(a, b)))
    any_wild = False
    for k in range(order_b.shape[0]):
        j = order_b[k]
        if not caps_b[j, 3] >= 0.0:
            alive_b[k] = np.inf
            wild_b[k] = 1.0
            any_wild = True
            continue
        wild_b[k] = 0.0
        m0 = v.row(nb_a, efb[j, 0])
        m1 = v.row(nb_a, efb[j, 1])
        pb = v.row(vb_a, evb[j, 0])
        w0 = v.sub(v.row(va, sup_b[efb[j, 0]]), pb)
        w1 = v.sub(v.row(va, sup_b[efb[j, 1]]), pb)
        alive_b[k] = _arc_bound(m0, m1, w0, w1)
        dmax = max(dmax, ARC_SLACK + ARC_ROUND / v.norm2(v.cross(m0, m1)))
    cut = floor - 4.0 * dmax * span
    for i in range(eva.shape[0]):
        u = alive_a[i]
        alive_a[i] = 2.0 if u == np.inf else (0.0 if u <= cut else 1.0)
    for k in range(order_b.shape[0]):
        alive_b[k] = 0.0 if alive_b[k] <= cut else 1.0
    return any_wild


@njit(borrow=True)
def edge_pairs_pruned(va, na, eva, efa, caps_a, order_a, group_caps_a, group_start_a,
                      vb_a, nb_a, evb, efb, caps_b, order_b, group_caps_b, group_start_b,
                      rot, margin, floor, sup_a, sup_b, arcs, near, best):
    """The edge-pair part of the hull-hull SAT, skipping the arc pairs whose caps are apart and the
    arcs that cannot beat ``floor``.

    Everything in A's frame: ``vb_a (n_b, 3)`` and ``nb_a (f_b, 3)`` are B's vertices and normals
    moved there, ``rot (3, 3)`` the rotation that moved them (to turn B's caps). The other arrays
    are the hulls' :class:`collision.hull_data.HullData` fields (``caps``: ``arc_caps``; ``order``:
    ``arc_order``; ``group_caps``, ``group_start``). ``floor``: the best face separation (``-inf``
    prunes by the caps alone). ``sup_a (f_a,)`` int64: for each face of A, a vertex of B (index
    into ``vb_a``), best the one least along the face normal (the face query's minimum);
    ``sup_b (f_b,)`` likewise for B's faces (indices into ``va``; :func:`face_supports`). Scratch
    ``arcs (>= 21, max(e_a, e_b, g_b))`` float64 and ``near (>= g_b,)`` int64; ``best``
    (float64[6]) gets the result (separation, ``i``, ``j``, normal (3,)).

    Two levels: each group of A against all groups of B (a branch-free loop), then each arc of
    the group against the groups of B that its group may meet, then the exact test on the arcs
    of the groups that its own cap may meet.

    The floor. An edge pair's separation (:func:`edge_query`) is ``n . (p_b - p_a)`` with ``p_a``
    on A's edge ``i`` and ``p_b`` on B's edge ``j``, ``n`` on A's arc ``i`` and ``-n`` on B's arc
    ``j``: ``p_a`` is A's support point along ``n`` and ``p_b`` B's along ``-n``, so for any vertex
    ``y`` of B, ``n . p_b <= n . y`` and the separation is at most ``n . (y - p_a)``; likewise at
    most ``-n . (x - p_b)`` for any vertex ``x`` of A. Bounding these over the arc
    (:func:`_arc_bound`, with ``y`` the vertices of B least along the normals of the two faces at
    edge ``i``, whose separations those are, and ``x`` likewise) gives each arc an upper bound of
    every separation it can take part in; an arc whose bound is at most ``floor`` (less a pad for
    rounding: 4 x the arcs' angular pads x the extent) cannot beat it, and the pairs of a bounded
    arc with it are skipped. (The support argument holds on the arcs; a pair that rounding lets
    through lies within the arcs' pads, hence the pad; an unbounded arc's pairs are never skipped.)

    Returns ``(tests, found, visited)``: the pairs whose separation was evaluated (arcs crossing,
    edges not parallel), whether one separated by more than ``margin`` (then ``best`` holds that
    pair, the first met in this function's order), and the arc pairs given the exact test (the
    brute force gives it to all ``e_a * e_b``). Otherwise ``best`` holds the largest separation,
    ties to the smallest ``(i, j)`` as in :func:`edge_pairs_brute`, when that separation is above
    ``floor`` (``margin >= floor``: a separating pair is never skipped, and the first one met is
    the one met without the floor); at or below it ``best`` holds a separation at or below
    ``floor`` (``-inf`` and ``-1`` when no pair crosses or all are skipped).
    """
    _arcs_of_minus_b(nb_a, efb, order_b, arcs)
    cx, cy, cz = arcs[0], arcs[1], arcs[2]
    dx, dy, dz = arcs[3], arcs[4], arcs[5]
    mx, my, mz = arcs[6], arcs[7], arcs[8]
    alive_b, wild_b, alive_a, galive, gmust, ones = arcs[15], arcs[16], arcs[17], arcs[18], arcs[19], arcs[20]
    any_wild = _arc_bounds(va, na, eva, efa, caps_a, vb_a, nb_a, evb, efb, caps_b, order_b, sup_a, sup_b, floor,
                           alive_a, alive_b, wild_b)
    # B's group caps in A's frame, negated (the Gauss map of -B); the half-angles do not change.
    # An unbounded cap gets cos = -1e300, sin = 0: the bound cos(alpha + beta) with any bounded
    # cap (cos alpha >= sin(1e-3)) is then far below -1, and the pair is kept.
    lx, ly, lz, lcos, lsin, keep = arcs[9], arcs[10], arcs[11], arcs[12], arcs[13], arcs[14]
    ng = group_start_b.shape[0] - 1
    for q in range(ng):
        w = (group_caps_b[q, 0], group_caps_b[q, 1], group_caps_b[q, 2])
        lx[q] = -(rot[0, 0] * w[0] + rot[0, 1] * w[1] + rot[0, 2] * w[2])
        ly[q] = -(rot[1, 0] * w[0] + rot[1, 1] * w[1] + rot[1, 2] * w[2])
        lz[q] = -(rot[2, 0] * w[0] + rot[2, 1] * w[1] + rot[2, 2] * w[2])
        bounded = group_caps_b[q, 3] >= 0.0
        lcos[q] = group_caps_b[q, 3] if bounded else -1e300
        lsin[q] = group_caps_b[q, 4] if bounded else 0.0
        ga = gm = 0.0
        for k in range(group_start_b[q], group_start_b[q + 1]):
            ga = max(ga, alive_b[k])
            gm = max(gm, wild_b[k])
            ones[k] = 1.0
        galive[q] = ga
        gmust[q] = gm
    b_sep, b_i, b_j = -np.inf, -1, -1
    b_n = (0.0, 0.0, 0.0)
    tests = 0
    visited = 0
    for p in range(group_start_a.shape[0] - 1):
        # a group none of whose arcs is alive meets only B's unbounded arcs
        active = any_wild
        for ii in range(group_start_a[p], group_start_a[p + 1]):
            if alive_a[order_a[ii]] != 0.0:
                active = True
        if not active:
            continue
        # B's groups that A's group p may meet: the caps are apart when the axes' angle exceeds
        # the sum of the half-angles (both under 90 degrees), u . w < cos(alpha + beta); and a
        # group none of whose arcs is alive is met only by A's unbounded arcs
        ux, uy, uz, ca, sa = (group_caps_a[p, 0], group_caps_a[p, 1], group_caps_a[p, 2], group_caps_a[p, 3],
                              group_caps_a[p, 4])
        if ca < 0.0:
            for q in range(ng):
                keep[q] = 1.0
        else:
            for q in range(ng):
                keep[q] = galive[q] if ux * lx[q] + uy * ly[q] + uz * lz[q] >= ca * lcos[q] - sa * lsin[q] else 0.0
        nn = 0
        for q in range(ng):
            if keep[q] != 0.0:
                near[nn] = q
                nn += 1
        for ii in range(group_start_a[p], group_start_a[p + 1]):
            i = order_a[ii]
            st = alive_a[i]
            if st == 0.0 and not any_wild:
                continue
            # the arcs of B this arc is tested against: all (unbounded arc), the alive ones, or
            # (an arc that cannot beat the floor) only B's unbounded ones
            sel = ones if st == 2.0 else (alive_b if st == 1.0 else wild_b)
            a = v.row(na, efa[i, 0])
            b = v.row(na, efa[i, 1])
            n0, n1, n2 = v.cross(a, b)
            ux, uy, uz, ca, sa = caps_a[i, 0], caps_a[i, 1], caps_a[i, 2], caps_a[i, 3], caps_a[i, 4]
            for t in range(nn):
                q = near[t]
                if (st == 1.0 and galive[q] == 0.0) or (st == 0.0 and gmust[q] == 0.0):
                    continue
                if ca >= 0.0 and ux * lx[q] + uy * ly[q] + uz * lz[q] < ca * lcos[q] - sa * lsin[q]:
                    continue  # this arc's own cap misses the group
                b0, b1 = group_start_b[q], group_start_b[q + 1]
                visited += b1 - b0
                for k in range(b0, b1):
                    # the arithmetic of edge_pairs_brute, term for term (evaluated in full: the
                    # outcome is the same, with one branch instead of three)
                    sc = cx[k] * n0 + cy[k] * n1 + cz[k] * n2
                    sd = dx[k] * n0 + dy[k] * n1 + dz[k] * n2
                    tb = mx[k] * b[0] + my[k] * b[1] + mz[k] * b[2]
                    ta = mx[k] * a[0] + my[k] * a[1] + mz[k] * a[2]
                    if (sc * sd >= 0.0) | (sc * tb <= 0.0) | (ta * tb >= 0.0) | (sel[k] == 0.0):
                        continue
                    j = order_b[k]
                    sep, n = edge_query(va, eva, i, a, b, vb_a, evb, j)
                    if sep == -np.inf:
                        continue
                    tests += 1
                    if sep > margin:
                        best[0], best[1], best[2] = sep, i, j
                        best[3], best[4], best[5] = n
                        return tests, True, visited
                    # the largest separation; of equal ones the smallest (i, j), as the brute force
                    if sep > b_sep or (sep == b_sep and (i < b_i or (i == b_i and j < b_j))):
                        b_sep, b_i, b_j, b_n = sep, i, j, n
    best[0], best[1], best[2] = b_sep, b_i, b_j
    best[3], best[4], best[5] = b_n
    return tests, False, visited


@njit(borrow=True)
def face_supports(normals, verts, out):
    """For each face ``f``: ``out[f]`` = the index of the vertex of ``verts (n, 3)`` least along
    ``normals[f] (f, 3)`` (the first of equal ones), for :func:`edge_pairs_pruned` (the collision
    kernel takes them from its face queries)."""
    for f in range(normals.shape[0]):
        n = v.row(normals, f)
        lo, at = np.inf, 0
        for i in range(verts.shape[0]):
            d = v.dot(n, v.row(verts, i))
            if d < lo:
                lo, at = d, i
        out[f] = at


@njit(borrow=True)
def edge_pairs_brute(va, na, eva, efa, vb_a, nb_a, evb, efb, margin, arcs, best):
    """The brute-force twin of :func:`edge_pairs_pruned`: every arc of A against every arc of B.

    Same arguments (less the caps and groups) and the same ``best`` and return values; the order is
    ``(i, j)`` lexicographic, so a separating pair, when there is one, is the first in that order.
    Scratch ``arcs (>= 11, e_b)``.
    """
    best[0], best[1], best[2] = -np.inf, -1.0, -1.0
    best[3], best[4], best[5] = 0.0, 0.0, 0.0
    neb = evb.shape[0]
    # B's arcs in A's frame as separate coordinate arrays (c, d: B's normals negated; m: the arc
    # plane c x d), so that the first half of the Minkowski-face test runs as a vectorisable loop
    # over all of B's edges.
    cx, cy, cz = arcs[0], arcs[1], arcs[2]
    dx, dy, dz = arcs[3], arcs[4], arcs[5]
    mx, my, mz = arcs[6], arcs[7], arcs[8]
    for j in range(neb):
        c = v.scale(v.row(nb_a, efb[j, 0]), -1.0)
        d = v.scale(v.row(nb_a, efb[j, 1]), -1.0)
        m = v.cross(c, d)
        cx[j], cy[j], cz[j] = c
        dx[j], dy[j], dz[j] = d
        mx[j], my[j], mz[j] = m
    sc = arcs[9]
    sd = arcs[10]
    tests = 0
    for i in range(eva.shape[0]):
        a = v.row(na, efa[i, 0])
        b = v.row(na, efa[i, 1])
        n0, n1, n2 = v.cross(a, b)
        for j in range(neb):
            sc[j] = cx[j] * n0 + cy[j] * n1 + cz[j] * n2
            sd[j] = dx[j] * n0 + dy[j] * n1 + dz[j] * n2
        for j in range(neb):
            # The rest of is_minkowski_face: c, d on both sides of a-b's plane, a, b on both
            # sides of c-d's, and the same hemisphere.
            if sc[j] * sd[j] >= 0.0:
                continue
            tb = mx[j] * b[0] + my[j] * b[1] + mz[j] * b[2]
            if sc[j] * tb <= 0.0:
                continue
            ta = mx[j] * a[0] + my[j] * a[1] + mz[j] * a[2]
            if ta * tb >= 0.0:
                continue
            sep, n = edge_query(va, eva, i, a, b, vb_a, evb, j)
            if sep == -np.inf:
                continue
            tests += 1
            if sep > margin:
                best[0], best[1], best[2] = sep, i, j
                best[3], best[4], best[5] = n
                return tests, True, (i + 1) * neb
            if sep > best[0]:
                best[0], best[1], best[2] = sep, i, j
                best[3], best[4], best[5] = n
    return tests, False, eva.shape[0] * neb
