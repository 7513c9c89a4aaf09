"""Two posed OBB trees seen node pair by node pair: the shared pieces of the tree-pair queries.

Gottschalk, Lin and Manocha's OBBTree traversal (RAPID) walks two
hierarchies together; this module holds what every such walk needs: the pose
checks, B's model frame expressed in A's (parry's ``pos12``, once per query),
a node of one tree seen from the other's frame, the 15-axis box overlap test
(RTCD 4.4.1), the lower bound of two boxes' distance, and RAPID's descent
rule. The walks themselves are :mod:`collision.mesh_collide` (which triangle
pairs meet) and :mod:`collision.mesh_distance` (how far apart).

Frames: each tree lives in its model frame; a pose is a 4x4 rigid transform
(rotation and translation, no scale) from model to world.
"""

from __future__ import annotations

import numpy as np

from . import _vec as v
from ._jit import njit
from .obb import OBB_EPSILON
from .obb_tree import OBBTree
from .transform import POSE_ERRORS, as_pose, check_pose_kernel, checked_pose

__all__ = ["boxes_overlap", "boxes_gap2", "pose_status"]

_F64 = np.dtype(np.float64)


# The pose check every query shares (collision.transform), under the names the kernels here use.
_check_pose = check_pose_kernel
_POSE_ERRORS = POSE_ERRORS
_as_pose = as_pose


def _raise_pose(status):
    name = "pose_a" if status <= 2 else "pose_b"
    raise ValueError(f"{name}: {_POSE_ERRORS[(status - 1) % 2 + 1]}")


def _pose(p, name):
    """Checked single pose (for the one-tree queries)."""
    return checked_pose(p, name)


def _tree(t, name):
    if not isinstance(t, OBBTree):
        raise ValueError(f"{name}: expected an OBBTree, got {type(t).__name__}")
    return t


@njit(inline="always")
def _apply(r, t, p):
    """``r p + t`` with ``r`` a tuple of three row tuples."""
    return (v.dot(r[0], p) + t[0], v.dot(r[1], p) + t[1], v.dot(r[2], p) + t[2])


@njit(inline="always")
def _tri(tris, k):
    return ((tris[k, 0, 0], tris[k, 0, 1], tris[k, 0, 2]),
            (tris[k, 1, 0], tris[k, 1, 1], tris[k, 1, 2]),
            (tris[k, 2, 0], tris[k, 2, 1], tris[k, 2, 2]))


@njit(inline="always")
def _relative_t(pa, pb):
    """B's model frame in A's as tuples: rows of ``R = Ra^T Rb`` and ``T = Ra^T (tb - ta)``."""
    cols_a = ((pa[0, 0], pa[1, 0], pa[2, 0]), (pa[0, 1], pa[1, 1], pa[2, 1]), (pa[0, 2], pa[1, 2], pa[2, 2]))
    cols_b = ((pb[0, 0], pb[1, 0], pb[2, 0]), (pb[0, 1], pb[1, 1], pb[2, 1]), (pb[0, 2], pb[1, 2], pb[2, 2]))
    d = (pb[0, 3] - pa[0, 3], pb[1, 3] - pa[1, 3], pb[2, 3] - pa[2, 3])
    r = ((v.dot(cols_a[0], cols_b[0]), v.dot(cols_a[0], cols_b[1]), v.dot(cols_a[0], cols_b[2])),
         (v.dot(cols_a[1], cols_b[0]), v.dot(cols_a[1], cols_b[1]), v.dot(cols_a[1], cols_b[2])),
         (v.dot(cols_a[2], cols_b[0]), v.dot(cols_a[2], cols_b[1]), v.dot(cols_a[2], cols_b[2])))
    t = (v.dot(cols_a[0], d), v.dot(cols_a[1], d), v.dot(cols_a[2], d))
    return r, t


# ---------------------------------------------------------------------------
# Node-pair box tests in A's frame. Node rows: centre 0:3, axes 3:12, half 12:15, size 15.
# ---------------------------------------------------------------------------


@njit(inline="always")
def _b_frame(nodes_b, nb, r, t):
    """Node ``nb`` of B in A's model frame: ``(centre, axis0, axis1, axis2)``.

    Both child tests of a step that splits A share it. Reads the node rows
    element by element: taking ``nodes[nb]`` as a row view costs numba more
    than the arithmetic here.
    """
    b = (nodes_b[nb, 3], nodes_b[nb, 4], nodes_b[nb, 5])
    bw0 = (v.dot(r[0], b), v.dot(r[1], b), v.dot(r[2], b))
    b = (nodes_b[nb, 6], nodes_b[nb, 7], nodes_b[nb, 8])
    bw1 = (v.dot(r[0], b), v.dot(r[1], b), v.dot(r[2], b))
    b = (nodes_b[nb, 9], nodes_b[nb, 10], nodes_b[nb, 11])
    bw2 = (v.dot(r[0], b), v.dot(r[1], b), v.dot(r[2], b))
    cb = (nodes_b[nb, 0], nodes_b[nb, 1], nodes_b[nb, 2])
    c = (v.dot(r[0], cb) + t[0], v.dot(r[1], cb) + t[1], v.dot(r[2], cb) + t[2])
    return c, bw0, bw1, bw2


@njit(inline="always")
def _frame_in_a(nodes_a, na, bf):
    """B's box (from :func:`_b_frame`) in A's box frame: the centre offset and the nine ``A_i . B_j``."""
    c, bw0, bw1, bw2 = bf
    a0 = (nodes_a[na, 3], nodes_a[na, 4], nodes_a[na, 5])
    a1 = (nodes_a[na, 6], nodes_a[na, 7], nodes_a[na, 8])
    a2 = (nodes_a[na, 9], nodes_a[na, 10], nodes_a[na, 11])
    d = (c[0] - nodes_a[na, 0], c[1] - nodes_a[na, 1], c[2] - nodes_a[na, 2])
    return (v.dot(a0, d), v.dot(a1, d), v.dot(a2, d),
            v.dot(a0, bw0), v.dot(a0, bw1), v.dot(a0, bw2),
            v.dot(a1, bw0), v.dot(a1, bw1), v.dot(a1, bw2),
            v.dot(a2, bw0), v.dot(a2, bw1), v.dot(a2, bw2))


@njit(inline="always")
def _a_frame(nodes_a, na, r, t):
    """Node ``na`` of A seen from B's model frame: its axes there (``R^T A_i``) and
    the offsets ``A_i . (t - c_A)``. Both child tests of a step that splits B
    share it: 36 products once, then 36 per child instead of 72 (the mirror of
    :func:`_b_frame`; measured time unchanged within noise, the tests being
    bound by memory and branches more than by products)."""
    a = (nodes_a[na, 3], nodes_a[na, 4], nodes_a[na, 5])
    m0 = (r[0][0] * a[0] + r[1][0] * a[1] + r[2][0] * a[2], r[0][1] * a[0] + r[1][1] * a[1] + r[2][1] * a[2],
          r[0][2] * a[0] + r[1][2] * a[1] + r[2][2] * a[2])
    a = (nodes_a[na, 6], nodes_a[na, 7], nodes_a[na, 8])
    m1 = (r[0][0] * a[0] + r[1][0] * a[1] + r[2][0] * a[2], r[0][1] * a[0] + r[1][1] * a[1] + r[2][1] * a[2],
          r[0][2] * a[0] + r[1][2] * a[1] + r[2][2] * a[2])
    a = (nodes_a[na, 9], nodes_a[na, 10], nodes_a[na, 11])
    m2 = (r[0][0] * a[0] + r[1][0] * a[1] + r[2][0] * a[2], r[0][1] * a[0] + r[1][1] * a[1] + r[2][1] * a[2],
          r[0][2] * a[0] + r[1][2] * a[1] + r[2][2] * a[2])
    d = (t[0] - nodes_a[na, 0], t[1] - nodes_a[na, 1], t[2] - nodes_a[na, 2])
    s = (v.dot((nodes_a[na, 3], nodes_a[na, 4], nodes_a[na, 5]), d),
         v.dot((nodes_a[na, 6], nodes_a[na, 7], nodes_a[na, 8]), d),
         v.dot((nodes_a[na, 9], nodes_a[na, 10], nodes_a[na, 11]), d))
    return m0, m1, m2, s


@njit(inline="always")
def _frame_in_b(af, nodes_b, nb):
    """:func:`_frame_in_a`'s twelve numbers from A's node in B's frame (:func:`_a_frame`)."""
    m0, m1, m2, s = af
    cb = (nodes_b[nb, 0], nodes_b[nb, 1], nodes_b[nb, 2])
    b0 = (nodes_b[nb, 3], nodes_b[nb, 4], nodes_b[nb, 5])
    b1 = (nodes_b[nb, 6], nodes_b[nb, 7], nodes_b[nb, 8])
    b2 = (nodes_b[nb, 9], nodes_b[nb, 10], nodes_b[nb, 11])
    return (v.dot(m0, cb) + s[0], v.dot(m1, cb) + s[1], v.dot(m2, cb) + s[2],
            v.dot(m0, b0), v.dot(m0, b1), v.dot(m0, b2),
            v.dot(m1, b0), v.dot(m1, b1), v.dot(m1, b2),
            v.dot(m2, b0), v.dot(m2, b1), v.dot(m2, b2))


@njit(inline="always")
def _overlap_terms(t0, t1, t2, r00, r01, r02, r10, r11, r12, r20, r21, r22, ea0, ea1, ea2, eb0, eb1, eb2):
    """RTCD 4.4.1, the 15 separating axes written out; ``r`` is B's axes in A's
    box frame, ``t`` B's centre there. Ericson's epsilon keeps near-parallel
    edge pairs from reporting a false separation."""
    q00 = abs(r00) + OBB_EPSILON
    q01 = abs(r01) + OBB_EPSILON
    q02 = abs(r02) + OBB_EPSILON
    q10 = abs(r10) + OBB_EPSILON
    q11 = abs(r11) + OBB_EPSILON
    q12 = abs(r12) + OBB_EPSILON
    q20 = abs(r20) + OBB_EPSILON
    q21 = abs(r21) + OBB_EPSILON
    q22 = abs(r22) + OBB_EPSILON
    if abs(t0) > ea0 + eb0 * q00 + eb1 * q01 + eb2 * q02:
        return False
    if abs(t1) > ea1 + eb0 * q10 + eb1 * q11 + eb2 * q12:
        return False
    if abs(t2) > ea2 + eb0 * q20 + eb1 * q21 + eb2 * q22:
        return False
    if abs(t0 * r00 + t1 * r10 + t2 * r20) > ea0 * q00 + ea1 * q10 + ea2 * q20 + eb0:
        return False
    if abs(t0 * r01 + t1 * r11 + t2 * r21) > ea0 * q01 + ea1 * q11 + ea2 * q21 + eb1:
        return False
    if abs(t0 * r02 + t1 * r12 + t2 * r22) > ea0 * q02 + ea1 * q12 + ea2 * q22 + eb2:
        return False
    if abs(t2 * r10 - t1 * r20) > ea1 * q20 + ea2 * q10 + eb1 * q02 + eb2 * q01:
        return False
    if abs(t2 * r11 - t1 * r21) > ea1 * q21 + ea2 * q11 + eb2 * q00 + eb0 * q02:
        return False
    if abs(t2 * r12 - t1 * r22) > ea1 * q22 + ea2 * q12 + eb0 * q01 + eb1 * q00:
        return False
    if abs(t0 * r20 - t2 * r00) > ea2 * q00 + ea0 * q20 + eb1 * q12 + eb2 * q11:
        return False
    if abs(t0 * r21 - t2 * r01) > ea2 * q01 + ea0 * q21 + eb2 * q10 + eb0 * q12:
        return False
    if abs(t0 * r22 - t2 * r02) > ea2 * q02 + ea0 * q22 + eb0 * q11 + eb1 * q10:
        return False
    if abs(t1 * r00 - t0 * r10) > ea0 * q10 + ea1 * q00 + eb1 * q22 + eb2 * q21:
        return False
    if abs(t1 * r01 - t0 * r11) > ea0 * q11 + ea1 * q01 + eb2 * q20 + eb0 * q22:
        return False
    if abs(t1 * r02 - t0 * r12) > ea0 * q12 + ea1 * q02 + eb0 * q21 + eb1 * q20:
        return False
    return True


@njit
def boxes_overlap(nodes_a, na, nodes_b, nb, r, t):
    """RTCD 4.4.1 on node ``na`` of A and node ``nb`` of B (B placed by ``r, t``)."""
    return _overlap_in(nodes_a, na, nodes_b, nb, _b_frame(nodes_b, nb, r, t))


@njit(inline="always")
def _overlap_in(nodes_a, na, nodes_b, nb, bf):
    """:func:`boxes_overlap` with B's node already in A's model frame."""
    return _overlap_rel(_frame_in_a(nodes_a, na, bf), nodes_a, na, nodes_b, nb)


@njit(inline="always")
def _overlap_rel(rel, nodes_a, na, nodes_b, nb):
    """:func:`boxes_overlap` from the pair's twelve numbers (:func:`_frame_in_a`, :func:`_frame_in_b`)."""
    t0, t1, t2, r00, r01, r02, r10, r11, r12, r20, r21, r22 = rel
    return _overlap_terms(t0, t1, t2, r00, r01, r02, r10, r11, r12, r20, r21, r22,
                          nodes_a[na, 12], nodes_a[na, 13], nodes_a[na, 14],
                          nodes_b[nb, 12], nodes_b[nb, 13], nodes_b[nb, 14])


@njit
def boxes_gap2(nodes_a, na, nodes_b, nb, r, t):
    """Lower bound of the squared distance between two node boxes (see :func:`_gap2_rel`)."""
    return _gap2_in(nodes_a, na, nodes_b, nb, _b_frame(nodes_b, nb, r, t))


@njit(inline="always")
def _gap2_in(nodes_a, na, nodes_b, nb, bf):
    """:func:`_gap2_rel` with B's node already in A's model frame."""
    return _gap2_rel(_frame_in_a(nodes_a, na, bf), nodes_a, na, nodes_b, nb)


@njit(inline="always")
def _gap2_rel(rel, nodes_a, na, nodes_b, nb):
    """Lower bound of the squared distance between two node boxes, from the
    pair's twelve numbers (:func:`_frame_in_a`, :func:`_frame_in_b`).

    The boxes' gap along a direction (the gap of their projections on any
    unit direction is a lower bound of their distance). The direction is the
    one a round of alternating closest points reaches: clamp B's centre into
    A's box (A's frame), clamp that point into B's box (B's frame), clamp the
    result back into A's box; the two last points are close to the boxes'
    closest pair, so the gap along their difference is close to the true box
    distance. Measured on the benchmark meshes against the alternatives (the
    15 SAT axes of RTCD 4.4.1, whose gaps can be off by a factor sqrt 3 away
    from the axes; a bounding-sphere or centre-direction bound first; two
    rounds), this one costs least per query: a second round or a cheap first
    bound prune only ~1% more node pairs. Squared, so that it needs no
    square root (the traversal compares and orders squares).
    """
    ea = (nodes_a[na, 12], nodes_a[na, 13], nodes_a[na, 14])
    eb = (nodes_b[nb, 12], nodes_b[nb, 13], nodes_b[nb, 14])
    return _gap2_rel_ext(rel, ea, eb)


@njit(inline="always")
def _clamp(x, e):
    return min(max(x, -e), e)


@njit(inline="always")
def _axis_gap2(d0, d1, d2, t0, t1, t2, r00, r01, r02, r10, r11, r12, r20, r21, r22, ea, eb):
    """Squared gap of the two boxes along the direction ``d`` (A's frame; any length),
    0 when their projections overlap or ``d`` is zero: a lower bound of their squared
    distance. Works on the unnormalised direction (one division, no square root)."""
    rad_a = ea[0] * abs(d0) + ea[1] * abs(d1) + ea[2] * abs(d2)
    rad_b = (eb[0] * abs(r00 * d0 + r10 * d1 + r20 * d2) + eb[1] * abs(r01 * d0 + r11 * d1 + r21 * d2)
             + eb[2] * abs(r02 * d0 + r12 * d1 + r22 * d2))
    g = d0 * t0 + d1 * t1 + d2 * t2 - rad_a - rad_b  # gap times |d|
    if not g > 0.0:
        return 0.0
    return g * g / (d0 * d0 + d1 * d1 + d2 * d2)


@njit(inline="always")
def _descend_a(nodes_a, links_a, nodes_b, links_b, na, nb):
    """RAPID's rule: split A if B is a leaf, or A is not and A is the larger box."""
    if links_b[nb, 0] < 0:
        return True
    if links_a[na, 0] < 0:
        return False
    return nodes_a[na, 15] >= nodes_b[nb, 15]  # bounding-sphere radii


@njit
def _push(stack, top, a, b):
    if top >= stack.shape[0]:
        bigger = np.empty((2 * stack.shape[0], 2), dtype=np.int64)
        bigger[:top] = stack[:top]
        stack = bigger
    stack[top, 0] = a
    stack[top, 1] = b
    return stack, top + 1


@njit
def pose_status(pa, pb):
    """Pose check inside the kernels: 0 good, 1/2 bad ``pose_a``, 3/4 bad ``pose_b``."""
    s = _check_pose(pa)
    if s:
        return s
    s = _check_pose(pb)
    if s:
        return s + 2
    return 0


def _query_pose(p, name):
    """A query's pose: the array itself when it is already a (4, 4) float64 array (the kernels check
    its values), else the checked conversion."""
    if type(p) is np.ndarray and p.dtype == _F64 and p.shape == (4, 4):
        return p
    return _as_pose(p, name)


# ---------------------------------------------------------------------------
# Which child first: the yes / no walk's order.
# ---------------------------------------------------------------------------


@njit(inline="always")
def _apply_inverse(r, t, p):
    """``r^T (p - t)``: a point of A's model frame in B's (the inverse of :func:`_apply`)."""
    d = (p[0] - t[0], p[1] - t[1], p[2] - t[2])
    return (r[0][0] * d[0] + r[1][0] * d[1] + r[2][0] * d[2],
            r[0][1] * d[0] + r[1][1] * d[1] + r[2][1] * d[2],
            r[0][2] * d[0] + r[1][2] * d[1] + r[2][2] * d[2])


@njit(inline="always")
def _second_nearer(nodes, c, p):
    """Is the centre of node ``c + 1`` strictly nearer the point ``p`` (the same tree's model
    frame) than the centre of its sibling ``c``?

    A walk that stops at the first intersecting pair goes first into the child
    nearer the other node's centre: on the benchmark meshes this halves the box
    tests of the pose pairs that meet (gear / torus knot: 217 to 98 per hit)
    and leaves those of the pairs that do not (every overlapping node pair is
    visited then, in whatever order)."""
    d0 = (nodes[c, 0] - p[0]) ** 2 + (nodes[c, 1] - p[1]) ** 2 + (nodes[c, 2] - p[2]) ** 2
    d1 = (nodes[c + 1, 0] - p[0]) ** 2 + (nodes[c + 1, 1] - p[1]) ** 2 + (nodes[c + 1, 2] - p[2]) ** 2
    return d1 < d0


# ---------------------------------------------------------------------------
# The same node-pair numbers from node rows read once into tuples. numba keeps a
# reference count on every array an inlined helper binds; where that helper sits
# in a branch, its increments and decrements (atomic, out of line) are not pruned
# and cost more than the box test itself (measured: the descent rule alone took
# ~100 ns per call with its four arrays, ~2 ns on scalars). The hot loops of the
# distance search therefore read the rows in straight-line code and branch on
# numbers only. The arithmetic is that of the array forms above, in the same
# order, so the results are bit-for-bit the same.
# ---------------------------------------------------------------------------


@njit(inline="always")
def _row(nodes, n):
    """Node ``n``'s box as tuples: ``(centre, axis0, axis1, axis2, half extents)``."""
    return ((nodes[n, 0], nodes[n, 1], nodes[n, 2]), (nodes[n, 3], nodes[n, 4], nodes[n, 5]),
            (nodes[n, 6], nodes[n, 7], nodes[n, 8]), (nodes[n, 9], nodes[n, 10], nodes[n, 11]),
            (nodes[n, 12], nodes[n, 13], nodes[n, 14]))


@njit(inline="always")
def _split_a_rule(child_a, child_b, size_a, size_b):
    """:func:`_descend_a` on numbers: the first children (negative for a leaf) and the bounding-sphere radii."""
    if child_b < 0:
        return True
    if child_a < 0:
        return False
    return size_a >= size_b


@njit(inline="always")
def _b_frame_row(row_b, r, t):
    """:func:`_b_frame` on a row from :func:`_row`."""
    cb, b0, b1, b2, _ = row_b
    bw0 = (v.dot(r[0], b0), v.dot(r[1], b0), v.dot(r[2], b0))
    bw1 = (v.dot(r[0], b1), v.dot(r[1], b1), v.dot(r[2], b1))
    bw2 = (v.dot(r[0], b2), v.dot(r[1], b2), v.dot(r[2], b2))
    c = (v.dot(r[0], cb) + t[0], v.dot(r[1], cb) + t[1], v.dot(r[2], cb) + t[2])
    return c, bw0, bw1, bw2


@njit(inline="always")
def _frame_in_a_row(row_a, bf):
    """:func:`_frame_in_a` on a row from :func:`_row`."""
    c, bw0, bw1, bw2 = bf
    ca, a0, a1, a2, _ = row_a
    d = (c[0] - ca[0], c[1] - ca[1], c[2] - ca[2])
    return (v.dot(a0, d), v.dot(a1, d), v.dot(a2, d),
            v.dot(a0, bw0), v.dot(a0, bw1), v.dot(a0, bw2),
            v.dot(a1, bw0), v.dot(a1, bw1), v.dot(a1, bw2),
            v.dot(a2, bw0), v.dot(a2, bw1), v.dot(a2, bw2))


@njit(inline="always")
def _a_frame_row(row_a, r, t):
    """:func:`_a_frame` on a row from :func:`_row`."""
    ca, a0, a1, a2, _ = row_a
    a = a0
    m0 = (r[0][0] * a[0] + r[1][0] * a[1] + r[2][0] * a[2], r[0][1] * a[0] + r[1][1] * a[1] + r[2][1] * a[2],
          r[0][2] * a[0] + r[1][2] * a[1] + r[2][2] * a[2])
    a = a1
    m1 = (r[0][0] * a[0] + r[1][0] * a[1] + r[2][0] * a[2], r[0][1] * a[0] + r[1][1] * a[1] + r[2][1] * a[2],
          r[0][2] * a[0] + r[1][2] * a[1] + r[2][2] * a[2])
    a = a2
    m2 = (r[0][0] * a[0] + r[1][0] * a[1] + r[2][0] * a[2], r[0][1] * a[0] + r[1][1] * a[1] + r[2][1] * a[2],
          r[0][2] * a[0] + r[1][2] * a[1] + r[2][2] * a[2])
    d = (t[0] - ca[0], t[1] - ca[1], t[2] - ca[2])
    s = (v.dot(a0, d), v.dot(a1, d), v.dot(a2, d))
    return m0, m1, m2, s


@njit(inline="always")
def _frame_in_b_row(af, row_b):
    """:func:`_frame_in_b` on a row from :func:`_row`."""
    m0, m1, m2, s = af
    cb, b0, b1, b2, _ = row_b
    return (v.dot(m0, cb) + s[0], v.dot(m1, cb) + s[1], v.dot(m2, cb) + s[2],
            v.dot(m0, b0), v.dot(m0, b1), v.dot(m0, b2),
            v.dot(m1, b0), v.dot(m1, b1), v.dot(m1, b2),
            v.dot(m2, b0), v.dot(m2, b1), v.dot(m2, b2))


@njit(inline="always")
def _gap2_rel_ext(rel, ea, eb):
    """:func:`_gap2_rel` with the half extents ``ea, eb`` given as tuples (the arithmetic of both)."""
    t0, t1, t2, r00, r01, r02, r10, r11, r12, r20, r21, r22 = rel
    p0, p1, p2 = _clamp(t0, ea[0]), _clamp(t1, ea[1]), _clamp(t2, ea[2])
    l0 = r00 * (p0 - t0) + r10 * (p1 - t1) + r20 * (p2 - t2)  # in B's frame
    l1 = r01 * (p0 - t0) + r11 * (p1 - t1) + r21 * (p2 - t2)
    l2 = r02 * (p0 - t0) + r12 * (p1 - t1) + r22 * (p2 - t2)
    l0, l1, l2 = _clamp(l0, eb[0]), _clamp(l1, eb[1]), _clamp(l2, eb[2])
    q0 = t0 + r00 * l0 + r01 * l1 + r02 * l2  # back in A's frame
    q1 = t1 + r10 * l0 + r11 * l1 + r12 * l2
    q2 = t2 + r20 * l0 + r21 * l1 + r22 * l2
    p0, p1, p2 = _clamp(q0, ea[0]), _clamp(q1, ea[1]), _clamp(q2, ea[2])
    return _axis_gap2(q0 - p0, q1 - p1, q2 - p2, t0, t1, t2, r00, r01, r02, r10, r11, r12, r20, r21, r22, ea, eb)


@njit(inline="always")
def child_pair_gaps(nodes_a, links_a, nodes_b, links_b, na, nb, r, t):
    """The two child pairs of ``(na, nb)`` by RAPID's descent rule (:func:`_descend_a`) and their
    squared box gaps (:func:`_gap2_rel`), nearer first: ``(n0a, n0b, g0, n1a, n1b, g1)``.

    The rows of the four boxes involved are read in straight-line code (the
    parent's row twice) and only numbers are branched on (see above).
    """
    ca = links_a[na, 0]
    cb = links_b[nb, 0]
    split_a = _split_a_rule(ca, cb, nodes_a[na, 15], nodes_b[nb, 15])
    n0a = ca if split_a else na
    n1a = ca + 1 if split_a else na
    n0b = nb if split_a else cb
    n1b = nb if split_a else cb + 1
    a0 = _row(nodes_a, n0a)
    a1 = _row(nodes_a, n1a)
    b0 = _row(nodes_b, n0b)
    b1 = _row(nodes_b, n1b)
    if split_a:
        bf = _b_frame_row(b0, r, t)  # shared by both children of A
        rel0 = _frame_in_a_row(a0, bf)
        rel1 = _frame_in_a_row(a1, bf)
    else:
        af = _a_frame_row(a0, r, t)  # shared by both children of B
        rel0 = _frame_in_b_row(af, b0)
        rel1 = _frame_in_b_row(af, b1)
    g0 = _gap2_rel_ext(rel0, a0[4], b0[4])
    g1 = _gap2_rel_ext(rel1, a1[4], b1[4])
    if g0 > g1:
        return n1a, n1b, g1, n0a, n0b, g0
    return n0a, n0b, g0, n1a, n1b, g1
