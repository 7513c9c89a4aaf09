"""How far apart two posed meshes are: the OBB-tree distance and within queries.

Node pairs are visited nearest first, then depth-first, pruned by a lower
bound of their boxes' distance (:func:`collision.tree_pair.boxes_gap2`),
raised for pairs of small nodes to the gap of the nodes' own points along
the same direction (:mod:`collision.node_points`);
leaves are solved exactly by the closest-point queries of RTCD 5.1.10
(:mod:`collision.triangle`). B is expressed in A's model frame once per
query; results are returned in world coordinates.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ._jit import njit
from ._validate import MAX_COORD, as_number
from .mesh_containment import _containment
from .obb_tree import OBBTree
from .tree_pair import (_apply, _b_frame, _clamp, _frame_in_a, _query_pose, _raise_pose, _relative_t, _tree, _tri,
                        boxes_gap2, child_pair_gaps, pose_status)
from .triangle import closest_pt_triangle_triangle_below_t, closest_pt_triangle_triangle_t, plane_gap2_t

__all__ = ["DistanceResult", "distance", "within"]


@njit
def _heap_push(keys, vals, n, key, val):
    """Insert ``(key, val)`` into the binary min-heap ``keys[:n], vals[:n]`` (capacity checked by the caller)."""
    i = n
    while i > 0:
        up = (i - 1) >> 1
        if keys[up] <= key:
            break
        keys[i] = keys[up]
        vals[i] = vals[up]
        i = up
    keys[i] = key
    vals[i] = val


@njit
def _heap_pop(keys, vals, n):
    """Remove the root of the binary min-heap ``keys[:n], vals[:n]`` (the caller read it)."""
    n -= 1
    key = keys[n]
    val = vals[n]
    i = 0
    while True:
        c = 2 * i + 1
        if c >= n:
            break
        if c + 1 < n and keys[c + 1] < keys[c]:
            c += 1
        if keys[c] >= key:
            break
        keys[i] = keys[c]
        vals[i] = vals[c]
        i = c
    keys[i] = key
    vals[i] = val


@njit(inline="always")
def _leaf_pair_distance(tri_a, tri_b, links_a, links_b, na, nb, r, t, best2, x, y, bi, bj):
    """Closest triangle pair of two leaves, if closer than ``best2``: the updated ``(best2, x, y, bi, bj)``."""
    for i in range(links_a[na, 1], links_a[na, 1] + links_a[na, 2]):
        a0, a1, a2 = _tri(tri_a, i)
        for j in range(links_b[nb, 1], links_b[nb, 1] + links_b[nb, 2]):
            b0, b1, b2 = _tri(tri_b, j)
            b0, b1, b2 = _apply(r, t, b0), _apply(r, t, b1), _apply(r, t, b2)
            if plane_gap2_t(a0, a1, a2, b0, b1, b2) >= best2:
                continue  # a plane of the pair keeps them at least best apart
            p, q, d2 = closest_pt_triangle_triangle_below_t(a0, a1, a2, b0, b1, b2, best2)
            if d2 < best2:
                best2, x, y, bi, bj = d2, p, q, i, j
    return best2, x, y, bi, bj


@njit(inline="always")
def _child_gaps(nodes_a, links_a, nodes_b, links_b, na, nb, r, t):
    """The two child pairs of ``(na, nb)`` (RAPID's descent rule) with their squared box gaps, nearer first."""
    return child_pair_gaps(nodes_a, links_a, nodes_b, links_b, na, nb, r, t)


# Node pairs with at most this many points (:mod:`collision.node_points`) in all get the support bound
# (measured, one thread, separated benchmark poses: 64, 128, 256 and every pair all test far fewer node
# pairs than the box gap alone; 128-256 took the least time).
SUPPORT_POINTS = 256


@njit(inline="always")
def _support_gap2(nodes_a, points_a, ranges_a, nodes_b, points_b, ranges_b, na, nb, r, t):
    """Lower bound of the squared distance between the triangles of node ``na`` of A and ``nb`` of B:
    the gap of their points' projections (:mod:`collision.node_points`) on the direction of the box
    gap (:func:`collision.tree_pair._gap2_rel`, whose clamps are repeated here)."""
    t0, t1, t2, r00, r01, r02, r10, r11, r12, r20, r21, r22 = _frame_in_a(nodes_a, na, _b_frame(nodes_b, nb, r, t))
    ea = (nodes_a[na, 12], nodes_a[na, 13], nodes_a[na, 14])
    eb = (nodes_b[nb, 12], nodes_b[nb, 13], nodes_b[nb, 14])
    p0, p1, p2 = _clamp(t0, ea[0]), _clamp(t1, ea[1]), _clamp(t2, ea[2])
    l0 = r00 * (p0 - t0) + r10 * (p1 - t1) + r20 * (p2 - t2)
    l1 = r01 * (p0 - t0) + r11 * (p1 - t1) + r21 * (p2 - t2)
    l2 = r02 * (p0 - t0) + r12 * (p1 - t1) + r22 * (p2 - t2)
    l0, l1, l2 = _clamp(l0, eb[0]), _clamp(l1, eb[1]), _clamp(l2, eb[2])
    q0 = t0 + r00 * l0 + r01 * l1 + r02 * l2
    q1 = t1 + r10 * l0 + r11 * l1 + r12 * l2
    q2 = t2 + r20 * l0 + r21 * l1 + r22 * l2
    d0 = q0 - _clamp(q0, ea[0])
    d1 = q1 - _clamp(q1, ea[1])
    d2 = q2 - _clamp(q2, ea[2])
    # The direction in A's model frame (n) and in B's (m).
    n = (d0 * nodes_a[na, 3] + d1 * nodes_a[na, 6] + d2 * nodes_a[na, 9],
         d0 * nodes_a[na, 4] + d1 * nodes_a[na, 7] + d2 * nodes_a[na, 10],
         d0 * nodes_a[na, 5] + d1 * nodes_a[na, 8] + d2 * nodes_a[na, 11])
    nn = n[0] * n[0] + n[1] * n[1] + n[2] * n[2]
    if not nn > 0.0:
        return 0.0
    m = (r[0][0] * n[0] + r[1][0] * n[1] + r[2][0] * n[2], r[0][1] * n[0] + r[1][1] * n[1] + r[2][1] * n[2],
         r[0][2] * n[0] + r[1][2] * n[1] + r[2][2] * n[2])
    hi = -np.inf
    for i in range(ranges_a[na, 0], ranges_a[na, 1]):
        hi = max(hi, n[0] * points_a[i, 0] + n[1] * points_a[i, 1] + n[2] * points_a[i, 2])
    lo = np.inf
    for j in range(ranges_b[nb, 0], ranges_b[nb, 1]):
        lo = min(lo, m[0] * points_b[j, 0] + m[1] * points_b[j, 1] + m[2] * points_b[j, 2])
    g = lo + (n[0] * t[0] + n[1] * t[1] + n[2] * t[2]) - hi
    if not g > 0.0:
        return 0.0
    return g * g / nn


@njit(inline="always")
def _support_gaps(nodes_a, points_a, ranges_a, nodes_b, points_b, ranges_b, n0a, n0b, g0, n1a, n1b, g1, r, t, best2,
                  max_points):
    """The two child pairs from :func:`_child_gaps`, their box gaps raised to the support bound
    (:func:`_support_gap2`) where the box gap does not prune them and they hold at most
    ``max_points`` points in all; nearer first again."""
    if g0 < best2 and (ranges_a[n0a, 1] - ranges_a[n0a, 0]) + (ranges_b[n0b, 1] - ranges_b[n0b, 0]) <= max_points:
        g0 = max(g0, _support_gap2(nodes_a, points_a, ranges_a, nodes_b, points_b, ranges_b, n0a, n0b, r, t))
    if g1 < best2 and (ranges_a[n1a, 1] - ranges_a[n1a, 0]) + (ranges_b[n1b, 1] - ranges_b[n1b, 0]) <= max_points:
        g1 = max(g1, _support_gap2(nodes_a, points_a, ranges_a, nodes_b, points_b, ranges_b, n1a, n1b, r, t))
    if g0 > g1:
        return n1a, n1b, g1, n0a, n0b, g0
    return n0a, n0b, g0, n1a, n1b, g1


# Size of the best-first heap at which the distance traversal goes on depth-first.
_BEST_FIRST_HEAP = 512


@njit
def distance_kernel(nodes_a, links_a, tri_a, nodes_b, links_b, tri_b, pa, pb, stop_below, out, bound2=np.inf,
                    points_a=None, ranges_a=None, points_b=None, ranges_b=None, max_points=SUPPORT_POINTS):
    """Closest triangle pair.

    Two phases. First best-first (Larsen et al.'s PQP orders node pairs by
    their bound; this is the priority-queue form): node pairs wait in a
    min-heap keyed by their box gap and the nearest is expanded next, so the
    first leaves reached are near the closest pair and the best distance
    drops fast. The nearer child pair is expanded at once, without a heap
    round trip, when no waiting pair is nearer. Once ``_BEST_FIRST_HEAP``
    pairs wait, those still nearer than the best distance move, nearest on
    top, to a depth-first stack (nearer child first, the other waits): a big
    heap costs more than it saves (its pairs are scattered over the trees,
    and nested or parallel surfaces leave tens of thousands of pairs about
    equally near, which best-first would all hold). Node pairs whose box gap
    reaches the best distance so far are pruned; the search ends early once
    a distance below ``stop_below`` is found.

    Measured on the benchmark meshes against plain depth-first (nearer child
    first): 15-40% fewer node-pair tests, 30-60% fewer triangle-pair tests,
    0.6-0.8x the time; two concentric spheres: 0.7x. Pure best-first tests
    a few percent fewer pairs but is slower, and 2x slower on the spheres.

    Writes the world-frame closest points on A and on B into ``out (2, 3)``;
    returns ``(status, dist2, i, j, box_tests, tri_tests)`` with ``i, j``
    leaf-order triangle positions.

    ``bound2``: a squared distance the caller already has (another mesh's, in
    a scene): only pairs nearer than it are searched, and when there is none
    the result is ``dist2 == bound2`` with meaningless points and triangles.

    ``points_a, ranges_a, points_b, ranges_b``: the trees'
    :attr:`OBBTree.support_points` (``(P, 3)`` float64, ``(N, 2)`` int64).
    Given, a child pair the box gap does not prune, holding at most
    ``max_points`` points in all, is bounded also by the gap of its points'
    projections on the box gap's direction (:func:`_support_gap2`): on the
    benchmark meshes' separated poses 3-4x fewer node pairs and 3-6x fewer
    triangle pairs. Omitted, the search uses box gaps only.
    """
    status = pose_status(pa, pb)
    if status:
        return status, 0.0, 0, 0, 0, 0
    r, t = _relative_t(pa, pb)
    # Seed the bound with the first triangle of each tree.
    a0, a1, a2 = _tri(tri_a, 0)
    b0, b1, b2 = _tri(tri_b, 0)
    x, y, best2 = closest_pt_triangle_triangle_t(a0, a1, a2, _apply(r, t, b0), _apply(r, t, b1), _apply(r, t, b2))
    bi = 0
    bj = 0
    if bound2 < best2:
        best2 = bound2
    box_tests = 1
    tri_tests = 1
    stop2 = stop_below * stop_below
    # Phase 1, best-first. The heap holds squared box gaps and node pairs packed as (na << 32) | nb.
    keys = np.empty(_BEST_FIRST_HEAP + 64)
    vals = np.empty(_BEST_FIRST_HEAP + 64, dtype=np.int64)
    n = 0
    na = 0
    nb = 0
    g = boxes_gap2(nodes_a, 0, nodes_b, 0, r, t)
    while True:  # (na, nb) is the current pair, g its squared box gap
        if g < best2:
            if links_a[na, 0] < 0 and links_b[nb, 0] < 0:
                tri_tests += links_a[na, 2] * links_b[nb, 2]
                best2, x, y, bi, bj = _leaf_pair_distance(tri_a, tri_b, links_a, links_b, na, nb, r, t,
                                                          best2, x, y, bi, bj)
            else:
                n0a, n0b, g0, n1a, n1b, g1 = _child_gaps(nodes_a, links_a, nodes_b, links_b, na, nb, r, t)
                if points_a is not None:
                    n0a, n0b, g0, n1a, n1b, g1 = _support_gaps(nodes_a, points_a, ranges_a, nodes_b, points_b,
                                                               ranges_b, n0a, n0b, g0, n1a, n1b, g1, r, t, best2,
                                                               max_points)
                box_tests += 2
                if n + 2 > keys.shape[0]:  # a long run of direct descents
                    bigger_k = np.empty(2 * keys.shape[0])
                    bigger_v = np.empty(2 * keys.shape[0], dtype=np.int64)
                    bigger_k[:n] = keys[:n]
                    bigger_v[:n] = vals[:n]
                    keys, vals = bigger_k, bigger_v
                if g1 < best2:
                    _heap_push(keys, vals, n, g1, (n1a << 32) | n1b)
                    n += 1
                if g0 < best2:
                    if n == 0 or g0 <= keys[0]:
                        na, nb, g = n0a, n0b, g0  # nearest of all: expand it now
                        continue
                    _heap_push(keys, vals, n, g0, (n0a << 32) | n0b)
                    n += 1
        if n == 0 or keys[0] >= best2:
            n = 0
            break  # every waiting pair is at least best apart: done
        if best2 < stop2 or n >= _BEST_FIRST_HEAP:
            break  # the waiting pairs go on depth-first
        code = vals[0]
        g = keys[0]
        _heap_pop(keys, vals, n)
        n -= 1
        na = code >> 32
        nb = code & 0xFFFFFFFF
    # Phase 2, depth-first from the pairs still nearer than best, nearest on top.
    top = 0
    for k in range(n):
        if keys[k] < best2:
            keys[top] = keys[k]
            vals[top] = vals[k]
            top += 1
    order = np.argsort(keys[:top])[::-1]
    gaps = np.empty(max(64, 2 * top))
    stack = np.empty((gaps.shape[0], 2), dtype=np.int64)
    for k in range(top):
        gaps[k] = keys[order[k]]
        stack[k, 0] = vals[order[k]] >> 32
        stack[k, 1] = vals[order[k]] & 0xFFFFFFFF
    while top > 0 and best2 >= stop2:
        top -= 1
        na = stack[top, 0]
        nb = stack[top, 1]
        g = gaps[top]
        while g < best2:  # descend, nearer child first
            if links_a[na, 0] < 0 and links_b[nb, 0] < 0:
                tri_tests += links_a[na, 2] * links_b[nb, 2]
                best2, x, y, bi, bj = _leaf_pair_distance(tri_a, tri_b, links_a, links_b, na, nb, r, t,
                                                          best2, x, y, bi, bj)
                break
            n0a, n0b, g0, n1a, n1b, g1 = _child_gaps(nodes_a, links_a, nodes_b, links_b, na, nb, r, t)
            if points_a is not None:
                n0a, n0b, g0, n1a, n1b, g1 = _support_gaps(nodes_a, points_a, ranges_a, nodes_b, points_b, ranges_b,
                                                           n0a, n0b, g0, n1a, n1b, g1, r, t, best2, max_points)
            box_tests += 2
            if g1 < best2:  # the farther child waits
                if top >= gaps.shape[0]:
                    bigger_g = np.empty(2 * gaps.shape[0])
                    bigger_s = np.empty((2 * gaps.shape[0], 2), dtype=np.int64)
                    bigger_g[:top] = gaps[:top]
                    bigger_s[:top] = stack[:top]
                    gaps, stack = bigger_g, bigger_s
                gaps[top] = g1
                stack[top, 0] = n1a
                stack[top, 1] = n1b
                top += 1
            na, nb, g = n0a, n0b, g0
    for k in range(3):  # A's model frame to world
        out[0, k] = pa[k, 0] * x[0] + pa[k, 1] * x[1] + pa[k, 2] * x[2] + pa[k, 3]
        out[1, k] = pa[k, 0] * y[0] + pa[k, 1] * y[1] + pa[k, 2] * y[2] + pa[k, 3]
    return 0, best2, bi, bj, box_tests, tri_tests


@dataclass(eq=False, slots=True)
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
    point_a: NDArray[np.float64]
    point_b: NDArray[np.float64]
    triangle_a: int
    triangle_b: int
    box_tests: int
    tri_tests: int


def _distance(tree_a, pose_a, tree_b, pose_b, stop_below, bound2=math.inf):
    if type(tree_a) is not OBBTree:
        _tree(tree_a, "tree_a")
    if type(tree_b) is not OBBTree:
        _tree(tree_b, "tree_b")
    pa = _query_pose(pose_a, "pose_a")
    pb = _query_pose(pose_b, "pose_b")
    out = np.empty((2, 3))
    status, d2, i, j, nbox, ntri = distance_kernel(*tree_a.arrays, *tree_b.arrays, pa, pb, stop_below, out, bound2,
                                                   *tree_a.support_points, *tree_b.support_points)
    if status:
        _raise_pose(status)
    return DistanceResult(math.sqrt(d2), out[0], out[1], int(tree_a.tri_index[i]),
                          int(tree_b.tri_index[j]), nbox, ntri), pa, pb, d2


def distance(tree_a: OBBTree, pose_a: ArrayLike, tree_b: OBBTree, pose_b: ArrayLike) -> DistanceResult:
    """Minimum distance between two posed meshes' surfaces, and where it is reached.

    The traversal visits node pairs nearest first, then depth-first (see
    :func:`distance_kernel`), and prunes those whose boxes are provably
    farther apart than the best triangle pair so far (the boxes' projection
    gap along a direction near their closest pair, :func:`_gap2_rel`, is a
    lower bound of their distance; for small nodes, the gap of the nodes'
    own points along it, :mod:`collision.node_points`); leaves are solved exactly by the
    closest-point queries of RTCD 5.1.10. When several triangle pairs are at
    the same minimum distance (a shared vertex or edge), which one is
    reported depends on the visiting order.

    Parameters
    ----------
    tree_a, tree_b : OBBTree
    pose_a, pose_b : (4, 4) float64

    Returns
    -------
    DistanceResult
    """
    return _distance(tree_a, pose_a, tree_b, pose_b, 0.0)[0]


def within_bound2(tol):
    """The squared bound of a ``within`` search at tolerance ``tol``: ``tol**2``, or infinity
    for ``tol == 0`` (where only a distance of exactly 0 counts, so nothing can be pruned) and
    for a ``tol`` whose square underflows."""
    b = tol * tol
    return b if b > 0.0 else math.inf


def within(tree_a: OBBTree, pose_a: ArrayLike, tree_b: OBBTree, pose_b: ArrayLike, tolerance: float) -> bool:
    """True when the two meshes come closer than ``tolerance`` (or overlap).

    Searches only node pairs whose boxes come closer than ``tolerance`` (the
    traversal's bound starts at ``tolerance**2``, so separated meshes are
    rejected near the roots) and stops at the first triangle pair closer than
    it (squared distance below ``tolerance**2``). A closed mesh lying entirely
    inside the other counts as overlapping.
    """
    tol = as_number(tolerance, "tolerance", low=0.0, high=MAX_COORD)
    near2 = within_bound2(tol)
    _, pa, pb, d2 = _distance(tree_a, pose_a, tree_b, pose_b, tol, near2)
    if d2 < tol * tol or d2 == 0.0:  # touching counts at tolerance 0
        return True
    return (tree_a.closed or tree_b.closed) and _containment(tree_a, pa, tree_b, pb) is not None
