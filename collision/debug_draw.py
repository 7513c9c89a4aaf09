"""What to draw, for a viewer to decide how: the debug-drawing protocol.

The core knows nothing of windows (Box2D's ``b2DebugDraw``, Jolt's
``DebugRendererSimple``): it describes what a query did as boxes, segments,
points and triangles in world coordinates and hands them to any object that
implements :class:`DebugDraw`. The viewer implements it with GL line and
triangle buffers; a test can implement it with lists.
"""

from typing import Protocol

import numpy as np

from .mesh_query import collide_trace
from .obb import test_obb_obb_kernel

__all__ = ["DebugDraw", "draw_tree", "draw_collide", "draw_traversal", "draw_separating_axis"]


class DebugDraw(Protocol):
    """The drawing calls a viewer implements. Colours are RGB in 0..1; all arrays world frame."""

    def boxes(self, centers, axes, half_extents, color):
        """Oriented boxes: ``centers (k, 3)``, ``axes (k, 3, 3)`` rows, ``half_extents (k, 3)``."""

    def segments(self, segments, color):
        """Line segments ``(k, 2, 3)``."""

    def points(self, points, color):
        """Points ``(k, 3)``, drawn as markers."""

    def triangles(self, triangles, color):
        """Filled triangles ``(k, 3, 3)``."""


def _world_boxes(tree, pose, select):
    c = tree.centers[select] @ pose[:3, :3].T + pose[:3, 3]
    a = np.einsum("kij,dj->kid", tree.axes[select], pose[:3, :3])
    return c, a, tree.half_extents[select]


def draw_tree(draw, tree, pose, depth, color):
    """The tree's boxes at ``depth`` (leaves above that depth included)."""
    d = tree.node_depths()
    sel = (d == depth) | ((d < depth) & (tree.child < 0))
    draw.boxes(*_world_boxes(tree, pose, sel), color)


def draw_collide(draw, result, tree_a, pose_a, tree_b, pose_b, tri_color=None, seg_color=None,
                 point_color=None):
    """A :class:`~collision.CollideResult`: its triangles, segments and contact points.

    Pass ``None`` for a colour to skip that part.
    """
    if len(result.pairs) == 0:
        return
    if tri_color is not None:
        ta = tree_a.vertices[tree_a.faces[result.pairs[:, 0]]] @ pose_a[:3, :3].T + pose_a[:3, 3]
        tb = tree_b.vertices[tree_b.faces[result.pairs[:, 1]]] @ pose_b[:3, :3].T + pose_b[:3, 3]
        draw.triangles(np.concatenate([ta, tb]), tri_color)
    if seg_color is not None and len(result.segments):
        draw.segments(result.segments, seg_color)
    if point_color is not None and len(result.segments):
        draw.points(result.segments.mean(axis=1), point_color)


def draw_traversal(draw, tree_a, pose_a, tree_b, pose_b, visited_color, pruned_color, max_pairs=4000):
    """The node pairs a collide traversal tested: overlapping (visited) and pruned.

    Each tested pair is drawn as its two boxes; at most ``max_pairs`` pairs.
    Returns the counts ``(visited, pruned)``.
    """
    pairs, overlapped = collide_trace(tree_a, pose_a, tree_b, pose_b, max_pairs)
    for flag, color in ((True, visited_color), (False, pruned_color)):
        sel = pairs[overlapped == flag]
        if len(sel) == 0:
            continue
        ca, aa, ha = _world_boxes(tree_a, pose_a, sel[:, 0])
        cb, ab, hb = _world_boxes(tree_b, pose_b, sel[:, 1])
        draw.boxes(np.concatenate([ca, cb]), np.concatenate([aa, ab]), np.concatenate([ha, hb]), color)
    return int(overlapped.sum()), int((~overlapped).sum())


def draw_separating_axis(draw, tree_a, pose_a, tree_b, pose_b, color):
    """The axis that ended the root boxes' OBB test, drawn between the two boxes.

    Returns the axis index (0-14, see :func:`collision.obb.test_obb_obb_kernel`) or -1
    when the root boxes overlap (nothing drawn).
    """
    ca, aa, ha = _world_boxes(tree_a, pose_a, [0])
    cb, ab, hb = _world_boxes(tree_b, pose_b, [0])
    k = int(test_obb_obb_kernel(ca[0], aa[0], ha[0], cb[0], ab[0], hb[0], 1e-12))
    if k < 0:
        return k
    if k < 3:
        axis = aa[0, k]
    elif k < 6:
        axis = ab[0, k - 3]
    else:
        i, j = divmod(k - 6, 3)
        axis = np.cross(aa[0, i], ab[0, j])
        axis /= np.linalg.norm(axis)
    mid = (ca[0] + cb[0]) / 2
    span = float(np.linalg.norm(ha[0]) + np.linalg.norm(hb[0]))
    draw.segments(np.array([[mid - axis * span, mid + axis * span]]), color)
    return k
