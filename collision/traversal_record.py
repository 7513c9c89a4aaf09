"""A recording of the OBB-tree traversal of :func:`collision.mesh_query.collide`, node pair by node pair.

The twin of :func:`collision.mesh_query.collide_kernel` for teaching and
debugging: the same descent (Gottschalk, Lin and Manocha's OBBTree; RAPID's
rule of splitting the larger box), the same box test in the same frame (RTCD
4.4.1 on the twelve numbers of the pair) and the same triangle tests at the
leaves, but every node-pair box test is written down with its depth in the
traversal, its outcome, and, when the boxes were found apart, which of the 15
candidate axes separated them (seed 004, 5.3; seed 001 for the axes):

- 0, 1, 2: a face normal of A's box (``A_0, A_1, A_2``),
- 3, 4, 5: a face normal of B's box (``B_0, B_1, B_2``),
- 6 + 3 i + j: the cross product of A's edge direction ``A_i`` and B's ``B_j``.

The order of the axes is Ericson's (RTCD 4.4.1, ``TestOBBOBB``), and the first
separating one is reported, as the kernel stops there. The recording has no
cap: its arrays grow as needed; the counts are the kernel's (the tests check
them equal on random poses).
"""

from dataclasses import dataclass

import numpy as np

from ._jit import njit
from .mesh_query import (_a_frame, _apply, _b_frame, _descend_a, _frame_in_a, _frame_in_b, _pose, _relative_t,
                         _tree, _tri)
from .obb import OBB_EPSILON
from .triangle import test_triangle_triangle_t

__all__ = ["TraversalRecord", "record_collide", "AXIS_NAMES", "axis_name"]

#: Short names of the 15 axes of the OBB test, by index.
AXIS_NAMES = tuple([f"face A{i}" for i in range(3)] + [f"face B{j}" for j in range(3)]
                   + [f"edge A{i} x B{j}" for i in range(3) for j in range(3)])


def axis_name(k):
    """A sentence fragment naming axis ``k`` of the 15 (``-1``: no axis separates)."""
    if k < 0:
        return "none (the boxes overlap on all 15 axes)"
    if k < 3:
        return f"#{k}: face normal A{k} of A's box"
    if k < 6:
        return f"#{k}: face normal B{k - 3} of B's box"
    i, j = divmod(k - 6, 3)
    return f"#{k}: edge A{i} x edge B{j} (cross product of the two boxes' edge directions)"


@njit(inline="always")
def _separating_axis_terms(t0, t1, t2, r00, r01, r02, r10, r11, r12, r20, r21, r22, ea0, ea1, ea2, eb0, eb1, eb2):
    """The first separating axis (0-14) of RTCD 4.4.1, or -1: the same inequalities in the same
    order as :func:`collision.mesh_query._overlap_terms`, returning which one held."""
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
        return 0
    if abs(t1) > ea1 + eb0 * q10 + eb1 * q11 + eb2 * q12:
        return 1
    if abs(t2) > ea2 + eb0 * q20 + eb1 * q21 + eb2 * q22:
        return 2
    if abs(t0 * r00 + t1 * r10 + t2 * r20) > ea0 * q00 + ea1 * q10 + ea2 * q20 + eb0:
        return 3
    if abs(t0 * r01 + t1 * r11 + t2 * r21) > ea0 * q01 + ea1 * q11 + ea2 * q21 + eb1:
        return 4
    if abs(t0 * r02 + t1 * r12 + t2 * r22) > ea0 * q02 + ea1 * q12 + ea2 * q22 + eb2:
        return 5
    if abs(t2 * r10 - t1 * r20) > ea1 * q20 + ea2 * q10 + eb1 * q02 + eb2 * q01:
        return 6
    if abs(t2 * r11 - t1 * r21) > ea1 * q21 + ea2 * q11 + eb2 * q00 + eb0 * q02:
        return 7
    if abs(t2 * r12 - t1 * r22) > ea1 * q22 + ea2 * q12 + eb0 * q01 + eb1 * q00:
        return 8
    if abs(t0 * r20 - t2 * r00) > ea2 * q00 + ea0 * q20 + eb1 * q12 + eb2 * q11:
        return 9
    if abs(t0 * r21 - t2 * r01) > ea2 * q01 + ea0 * q21 + eb2 * q10 + eb0 * q12:
        return 10
    if abs(t0 * r22 - t2 * r02) > ea2 * q02 + ea0 * q22 + eb0 * q11 + eb1 * q10:
        return 11
    if abs(t1 * r00 - t0 * r10) > ea0 * q10 + ea1 * q00 + eb1 * q22 + eb2 * q21:
        return 12
    if abs(t1 * r01 - t0 * r11) > ea0 * q11 + ea1 * q01 + eb2 * q20 + eb0 * q22:
        return 13
    if abs(t1 * r02 - t0 * r12) > ea0 * q12 + ea1 * q02 + eb0 * q21 + eb1 * q20:
        return 14
    return -1


@njit(inline="always")
def _axis_of(rel, nodes_a, na, nodes_b, nb):
    t0, t1, t2, r00, r01, r02, r10, r11, r12, r20, r21, r22 = rel
    return _separating_axis_terms(t0, t1, t2, r00, r01, r02, r10, r11, r12, r20, r21, r22,
                                  nodes_a[na, 12], nodes_a[na, 13], nodes_a[na, 14],
                                  nodes_b[nb, 12], nodes_b[nb, 13], nodes_b[nb, 14])


@njit
def _grow(rec, n):
    if n < rec.shape[0]:
        return rec
    bigger = np.empty((2 * rec.shape[0], rec.shape[1]), dtype=np.int64)
    bigger[:n] = rec[:n]
    return bigger


@njit
def _put(rec, n, na, nb, depth, axis):
    """Row ``n``: node of A, node of B, depth, separating axis (-1 overlap), triangle tests, hits."""
    rec = _grow(rec, n)
    rec[n, 0] = na
    rec[n, 1] = nb
    rec[n, 2] = depth
    rec[n, 3] = axis
    rec[n, 4] = 0
    rec[n, 5] = 0
    return rec, n + 1


@njit
def record_collide_kernel(nodes_a, links_a, tri_a, nodes_b, links_b, tri_b, pa, pb):
    """Every box test of :func:`collision.mesh_query.collide_kernel`, in its order.

    Returns ``(rec (k, 6) int64, tri_tests, hits)``: per box test the node of
    A, the node of B, the depth (root pair 0, each split adds 1), the
    separating axis index (-1 when the boxes overlap), and for an overlapping
    leaf pair its triangle tests and intersecting triangle pairs.
    """
    r, t = _relative_t(pa, pb)
    rec = np.empty((256, 6), dtype=np.int64)
    bf = _b_frame(nodes_b, 0, r, t)
    rec, n = _put(rec, 0, 0, 0, 0, _axis_of(_frame_in_a(nodes_a, 0, bf), nodes_a, 0, nodes_b, 0))
    if rec[0, 3] >= 0:
        return rec[:1], 0, 0
    tri_tests = 0
    hits = 0
    stack = np.empty((64, 3), dtype=np.int64)
    top = 0
    na = 0
    nb = 0
    depth = 0
    row = 0  # the record of the current (overlapping) pair
    while True:
        if links_a[na, 0] < 0 and links_b[nb, 0] < 0:
            for i in range(links_a[na, 1], links_a[na, 1] + links_a[na, 2]):
                a0, a1, a2 = _tri(tri_a, i)
                for j in range(links_b[nb, 1], links_b[nb, 1] + links_b[nb, 2]):
                    b0, b1, b2 = _tri(tri_b, j)
                    b0 = _apply(r, t, b0)
                    b1 = _apply(r, t, b1)
                    b2 = _apply(r, t, b2)
                    tri_tests += 1
                    rec[row, 4] += 1
                    if test_triangle_triangle_t(a0, a1, a2, b0, b1, b2):
                        hits += 1
                        rec[row, 5] += 1
        else:
            if top + 1 > stack.shape[0]:
                bigger = np.empty((2 * stack.shape[0], 3), dtype=np.int64)
                bigger[:top] = stack[:top]
                stack = bigger
            # The kernel tests the second child first (it waits on the stack), then the first.
            if _descend_a(nodes_a, links_a, nodes_b, links_b, na, nb):
                c = links_a[na, 0]
                bf = _b_frame(nodes_b, nb, r, t)
                k2 = _axis_of(_frame_in_a(nodes_a, c + 1, bf), nodes_a, c + 1, nodes_b, nb)
                rec, n = _put(rec, n, c + 1, nb, depth + 1, k2)
                if k2 < 0:
                    stack[top, 0] = n - 1
                    top += 1
                k1 = _axis_of(_frame_in_a(nodes_a, c, bf), nodes_a, c, nodes_b, nb)
                rec, n = _put(rec, n, c, nb, depth + 1, k1)
                if k1 < 0:
                    na, depth, row = c, depth + 1, n - 1
                    continue
            else:
                c = links_b[nb, 0]
                af = _a_frame(nodes_a, na, r, t)
                k2 = _axis_of(_frame_in_b(af, nodes_b, c + 1), nodes_a, na, nodes_b, c + 1)
                rec, n = _put(rec, n, na, c + 1, depth + 1, k2)
                if k2 < 0:
                    stack[top, 0] = n - 1
                    top += 1
                k1 = _axis_of(_frame_in_b(af, nodes_b, c), nodes_a, na, nodes_b, c)
                rec, n = _put(rec, n, na, c, depth + 1, k1)
                if k1 < 0:
                    nb, depth, row = c, depth + 1, n - 1
                    continue
        if top == 0:
            break
        top -= 1
        row = stack[top, 0]
        na, nb, depth = rec[row, 0], rec[row, 1], rec[row, 2]
    return rec[:n], tri_tests, hits


@dataclass(frozen=True, eq=False)
class TraversalRecord:
    """The box tests of one OBB-tree traversal, in the order the traversal made them.

    Attributes
    ----------
    pairs : (k, 2) int64
        ``(node of A, node of B)`` of each box test.
    depth : (k,) int64
        Depth of the node pair in the traversal (the root pair 0; each split of A or B adds 1).
    axis : (k,) int64
        Index (0-14, see the module docstring) of the axis that separated the two boxes,
        -1 when they overlap (the traversal went on into their children or their triangles).
    tri_tests : (k,) int64
        Triangle-pair tests made for an overlapping leaf pair (0 elsewhere).
    tri_hits : (k,) int64
        Intersecting triangle pairs found there.
    """

    pairs: np.ndarray
    depth: np.ndarray
    axis: np.ndarray
    tri_tests: np.ndarray
    tri_hits: np.ndarray

    @property
    def overlap(self):
        """(k,) bool: the boxes overlapped (visited), else the pair was pruned."""
        return self.axis < 0

    @property
    def box_tests(self):
        """Node-pair box tests, as :attr:`collision.CollideResult.box_tests` counts them."""
        return len(self.axis)

    @property
    def triangle_tests(self):
        return int(self.tri_tests.sum())

    @property
    def hits(self):
        """Intersecting triangle pairs (the length of :attr:`collision.CollideResult.pairs`)."""
        return int(self.tri_hits.sum())

    def per_depth(self):
        """``(visited (d,), pruned (d,))`` int64: the box tests at each depth, by outcome."""
        d = int(self.depth.max()) + 1 if len(self.depth) else 0
        visited = np.bincount(self.depth[self.overlap], minlength=d)[:d]
        pruned = np.bincount(self.depth[~self.overlap], minlength=d)[:d]
        return visited, pruned

    def axis_counts(self):
        """(15,) int64: how many pruned pairs each axis separated."""
        return np.bincount(self.axis[self.axis >= 0], minlength=15)


def record_collide(tree_a, pose_a, tree_b, pose_b):
    """Record the traversal :func:`collision.mesh_query.collide` makes for two posed trees.

    Parameters
    ----------
    tree_a, tree_b : OBBTree
    pose_a, pose_b : (4, 4) float64
        Rigid model-to-world transforms.

    Returns
    -------
    TraversalRecord
        Every node-pair box test (no cap), with its depth, outcome and separating axis,
        and the triangle tests at the overlapping leaf pairs. Its ``box_tests``,
        ``triangle_tests`` and ``hits`` equal ``collide``'s ``box_tests``, ``tri_tests`` and
        ``len(pairs)``.
    """
    _tree(tree_a, "tree_a")
    _tree(tree_b, "tree_b")
    pa = _pose(pose_a, "pose_a")
    pb = _pose(pose_b, "pose_b")
    nodes_a, links_a, tri_a, _ = tree_a.query_arrays
    nodes_b, links_b, tri_b, _ = tree_b.query_arrays
    rec, _, _ = record_collide_kernel(nodes_a, links_a, tri_a, nodes_b, links_b, tri_b, pa, pb)
    rec = rec.copy()
    return TraversalRecord(rec[:, :2], rec[:, 2], rec[:, 3], rec[:, 4], rec[:, 5])
