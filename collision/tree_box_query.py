"""Which triangles of a posed OBB tree touch a given oriented box.

The mid phase of a convex piece against a static concave mesh (a ground, a
bowl, a room): walk the mesh's OBB tree with the piece's bounding box, testing
node boxes with the 15-axis separating-axis test (RTCD 4.4.1, the same kernel
as :func:`collision.collide`), and test the triangles of the leaves reached
exactly against the box (RTCD 5.2.9, TestTriangleAABB: 13 axes, in the box's
frame). Every box of the tree encloses its triangles, so no triangle that
touches the query box is pruned.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ._jit import njit
from ._validate import as_array
from .mesh_query import _pose, _relative_t, _tree
from .tree_pair import _b_frame, _overlap_in
from .obb_tree import OBBTree

__all__ = ["triangles_near_box", "triangles_near_box_brute", "near_box_faces", "near_box_faces_cached",
           "test_triangle_box_kernel", "FAT_CAP", "FAT_SLACK"]

# The candidate cache of near_box_faces_cached: at most this many triangles a row (a query box that
# meets more is not cached), and the room around a box that its cached query covers, as a fraction
# of its largest half extent.
FAT_CAP = 48
FAT_SLACK = 0.5


@njit(inline="always")
def _axis_separates(p0, p1, p2, a0, a1, a2, e0, e1, e2):
    """Does axis ``a`` separate the triangle ``p0 p1 p2`` from the box ``[-e, e]``? (closed sets)"""
    q0 = p0[0] * a0 + p0[1] * a1 + p0[2] * a2
    q1 = p1[0] * a0 + p1[1] * a1 + p1[2] * a2
    q2 = p2[0] * a0 + p2[1] * a1 + p2[2] * a2
    r = e0 * abs(a0) + e1 * abs(a1) + e2 * abs(a2)
    return max(q0, q1, q2) < -r or min(q0, q1, q2) > r


@njit(inline="always")
def _to_box(tri, i, c, axes):
    """Corner ``i`` of ``tri`` in the box's frame (centre ``c``, axes ``axes`` rows), a tuple."""
    d0 = tri[i, 0] - c[0]
    d1 = tri[i, 1] - c[1]
    d2 = tri[i, 2] - c[2]
    return (axes[0, 0] * d0 + axes[0, 1] * d1 + axes[0, 2] * d2,
            axes[1, 0] * d0 + axes[1, 1] * d1 + axes[1, 2] * d2,
            axes[2, 0] * d0 + axes[2, 1] * d1 + axes[2, 2] * d2)


@njit(inline="always")
def _edge_separates(p0, p1, p2, f, e):
    """Do the three axes ``box axis x edge f`` separate the triangle from the box ``[-e, e]``?"""
    return (_axis_separates(p0, p1, p2, 0.0, -f[2], f[1], e[0], e[1], e[2])
            or _axis_separates(p0, p1, p2, f[2], 0.0, -f[0], e[0], e[1], e[2])
            or _axis_separates(p0, p1, p2, -f[1], f[0], 0.0, e[0], e[1], e[2]))


@njit
def test_triangle_box_kernel(tri, c, axes, e):
    """RTCD 5.2.9 (TestTriangleAABB) for a triangle ``tri (3, 3)`` and the oriented box
    ``c (3,)``, ``axes (3, 3)`` rows, ``e (3,)``: True when they intersect (touching counts).

    The triangle is moved into the box's frame, then the 13 candidate axes are
    projected: the box's 3 face normals, the triangle's normal, and the 9
    cross products of a box axis with a triangle edge. A zero cross product
    (an edge parallel to a box axis) projects everything to 0 and separates
    nothing, so degenerate axes need no special case. The corners and edges are
    held as tuples (no array is made: the test runs for every triangle a query reaches).
    """
    p0, p1, p2 = _to_box(tri, 0, c, axes), _to_box(tri, 1, c, axes), _to_box(tri, 2, c, axes)
    for k in range(3):  # the box's faces
        if max(p0[k], p1[k], p2[k]) < -e[k] or min(p0[k], p1[k], p2[k]) > e[k]:
            return False
    f0 = (p1[0] - p0[0], p1[1] - p0[1], p1[2] - p0[2])
    f1 = (p2[0] - p1[0], p2[1] - p1[1], p2[2] - p1[2])
    f2 = (p0[0] - p2[0], p0[1] - p2[1], p0[2] - p2[2])
    if _edge_separates(p0, p1, p2, f0, e) or _edge_separates(p0, p1, p2, f1, e) or _edge_separates(p0, p1, p2, f2, e):
        return False  # (box axis x triangle edge)
    n0 = f0[1] * f1[2] - f0[2] * f1[1]  # the triangle's plane
    n1 = f0[2] * f1[0] - f0[0] * f1[2]
    n2 = f0[0] * f1[1] - f0[1] * f1[0]
    return not _axis_separates(p0, p1, p2, n0, n1, n2, e[0], e[1], e[2])


@njit
def _near_box_kernel(nodes, links, triangles, tri_index, box, r, t, c, axes, e, out, slots=False):
    """Faces (original indices) that intersect the box: the tree walked with ``box`` (one packed
    node row, placed in the tree's frame by ``r, t``), the leaves' triangles tested against the
    box ``c, axes, e`` given in the tree's frame; returns how many were written to ``out`` (the
    triangles' rows in the tree's arrays instead when ``slots``)."""
    stack = np.empty(128, np.int64)
    stack[0] = 0
    top = 1
    n = 0
    bf = _b_frame(box, 0, r, t)  # the query box in the tree's frame, once for every node
    while top > 0:
        top -= 1
        k = stack[top]
        if not _overlap_in(nodes, k, box, 0, bf):
            continue
        child = links[k, 0]
        if child < 0:
            for i in range(links[k, 1], links[k, 1] + links[k, 2]):
                if test_triangle_box_kernel(triangles[i], c, axes, e):
                    out[n] = i if slots else tri_index[i]
                    n += 1
        else:
            if top + 2 > stack.shape[0]:
                grown = np.empty(2 * stack.shape[0], np.int64)
                grown[:top] = stack[:top]
                stack = grown
            stack[top] = child + 1
            stack[top + 1] = child
            top += 2
    return n


@njit
def near_box_faces(nodes, links, triangles, tri_index, pose_b, centre, axes, half, scratch):
    """:func:`triangles_near_box` on the tree's arrays, without the argument checks: the faces
    (sorted) of the tree posed by ``pose_b`` that intersect the world box ``centre`` (3,), ``axes``
    (3, 3) rows, ``half`` (3,); ``scratch`` (one slot per face) holds them while found."""
    r, t = _relative_t(pose_b, np.eye(4))
    c_model, ax_model = _model_box(pose_b, centre, axes)
    k = _near_box_kernel(nodes, links, triangles, tri_index, _box_row(centre, axes, half), r, t, c_model, ax_model,
                         half, scratch)
    return np.sort(scratch[:k])


@njit
def _box_row(centre, axes, half):
    """The box as one packed node row (1, 16): centre, axes as rows, half extents, their length."""
    box = np.empty((1, 16))
    for a in range(3):
        box[0, a] = centre[a]
        box[0, 12 + a] = half[a]
        for b in range(3):
            box[0, 3 + 3 * a + b] = axes[a, b]
    box[0, 15] = np.sqrt(half[0] * half[0] + half[1] * half[1] + half[2] * half[2])
    return box


@njit
def _model_box(pose_b, centre, axes):
    """The world box's centre (3,) and axes (3, 3) rows in the model frame of the tree posed by ``pose_b``."""
    c_model, ax_model = np.empty(3), np.empty((3, 3))
    for j in range(3):
        c_model[j] = ((centre[0] - pose_b[0, 3]) * pose_b[0, j] + (centre[1] - pose_b[1, 3]) * pose_b[1, j]
                      + (centre[2] - pose_b[2, 3]) * pose_b[2, j])
        for a in range(3):
            ax_model[a, j] = axes[a, 0] * pose_b[0, j] + axes[a, 1] * pose_b[1, j] + axes[a, 2] * pose_b[2, j]
    return c_model, ax_model


@njit
def near_box_faces_cached(nodes, links, triangles, tri_index, pose_b, centre, axes, half, scratch, key, row,
                          fat_key, fat_box, fat_count, fat_slots):
    """:func:`near_box_faces` (the same faces, sorted) with a cache of candidates from call to call.

    Row ``row`` of the cache remembers a box in the tree's model frame, larger than the query box
    by ``FAT_SLACK`` of its largest half extent on every side, the tree ``key`` it was taken on, and
    the tree's triangles (rows of its arrays) that touch that box. While later query boxes for
    the row stay inside it, only those triangles are tested against the query box (RTCD 5.2.9, as
    the tree's leaves test them); otherwise the tree is walked with a new larger box (the box and its
    triangles kept when at most ``FAT_CAP``). A triangle that touches the query box touches the
    larger box around it, so none is missed: the faces are those of :func:`near_box_faces`, but
    for a triangle whose leaf box the query box grazes within rounding (the tree walk may drop it,
    the larger box keeps it). A body moving a little from step to step on a finely cut floor thus
    tests a dozen triangles instead of walking the tree (~85 node tests for a 0.5 m box on the
    12,800-triangle floor of ``benchmarks/bench_dynamics.py``).

    Parameters
    ----------
    nodes, links, triangles, tri_index, pose_b, centre, axes, half, scratch
        As :func:`near_box_faces`.
    key : int
        Which tree this is (a row met by another tree is taken again).
    row : int
        The cache row of this query box's owner.
    fat_key : (R,) int64
        Each row's tree, -1: none.
    fat_box : (R, 2, 3) float64
        Each row's box, lower and upper corners in the tree's model frame.
    fat_count : (R,) int64
    fat_slots : (R, FAT_CAP) int64
        Each row's triangles (rows of the tree's arrays), the first ``fat_count``.
    """
    c_model, ax_model = _model_box(pose_b, centre, axes)
    lo, hi = np.empty(3), np.empty(3)
    size = max(half[0], half[1], half[2])
    scale = size
    for j in range(3):
        ext = abs(ax_model[0, j]) * half[0] + abs(ax_model[1, j]) * half[1] + abs(ax_model[2, j]) * half[2]
        lo[j], hi[j] = c_model[j] - ext, c_model[j] + ext
        scale = max(scale, abs(c_model[j]))
    tol = 1e-9 * max(1.0, scale)  # (the test inside is strict by this much: rounding never decides it)
    inside = fat_key[row] == key
    for j in range(3):
        inside = inside and lo[j] >= fat_box[row, 0, j] + tol and hi[j] <= fat_box[row, 1, j] - tol
    if inside:
        cand = fat_slots[row, :fat_count[row]]
    else:
        grow = FAT_SLACK * size
        fat_c, fat_h = 0.5 * (lo + hi), 0.5 * (hi - lo) + grow  # the larger box, axis-aligned in the model frame
        r, t = _relative_t(np.eye(4), np.eye(4))
        k = _near_box_kernel(nodes, links, triangles, tri_index, _box_row(fat_c, np.eye(3), fat_h), r, t, fat_c,
                             np.eye(3), fat_h, scratch, True)
        cand = scratch[:k]
        if k <= fat_slots.shape[1]:
            fat_slots[row, :k] = scratch[:k]
            fat_count[row] = k
            fat_key[row] = key
            for j in range(3):
                fat_box[row, 0, j], fat_box[row, 1, j] = fat_c[j] - fat_h[j], fat_c[j] + fat_h[j]
            cand = fat_slots[row, :k]
        else:
            fat_key[row] = -1
    out = np.empty(cand.shape[0], np.int64)
    m = 0
    for s in range(cand.shape[0]):
        i = cand[s]
        if test_triangle_box_kernel(triangles[i], c_model, ax_model, half):
            out[m] = tri_index[i]
            m += 1
    return np.sort(out[:m])


def triangles_near_box(tree: OBBTree, pose: ArrayLike, center: ArrayLike, axes: ArrayLike,
                       half_extents: ArrayLike) -> NDArray[np.int64]:
    """Faces of ``tree`` (posed by ``pose``) whose leaf boxes overlap an oriented box.

    Parameters
    ----------
    tree : OBBTree
    pose : (4, 4) float64
        The tree's model-to-world transform.
    center : (3,) float64
        The query box, world frame.
    axes : (3, 3) float64
        Its unit axes as rows (orthonormal).
    half_extents : (3,) float64
        Its half sizes (>= 0); grow them by a contact margin to find the
        triangles within that distance too.

    Returns
    -------
    (k,) int64
        Original face indices, sorted, each once.
    """
    tree = _tree(tree, "tree")
    p = _pose(pose, "pose")
    c = as_array(center, "center", (3,))
    ax = as_array(axes, "axes", (3,))
    h = as_array(half_extents, "half_extents", (3,))
    if ax.shape != (3, 3):
        raise ValueError(f"axes: expected shape (3, 3), got {ax.shape}")
    if np.any(h < 0):
        raise ValueError("half_extents: must be >= 0")
    return near_box_faces(tree.nodes, tree.links, tree.triangles, tree.tri_index, p, c, ax, h,
                          np.empty(len(tree.faces), np.int64))


def triangles_near_box_brute(tree, pose, center, axes, half_extents):
    """The brute-force twin of :func:`triangles_near_box`: every face tested, no tree."""
    p = _pose(pose, "pose")
    world = tree.vertices[tree.faces] @ p[:3, :3].T + p[:3, 3]
    c, ax, h = (np.asarray(x, float) for x in (center, axes, half_extents))
    hits = [k for k in range(len(world)) if test_triangle_box_kernel(world[k], c, ax, h)]
    return np.asarray(hits, np.int64)

