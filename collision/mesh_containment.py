"""Is a closed mesh inside another? Ray parity over an OBB tree.

Two surfaces that do not meet may still be one inside the other (the
containment factor E of seed 003): a vertex of each connected component of
the inner mesh is inside the outer closed mesh when a ray from it crosses the
outer surface an odd number of times (RTCD 5.3.2's parity rule). Crossings
that rounding could miscount (near an edge or vertex) make the test try
another ray direction.
"""

from __future__ import annotations

import numpy as np

from . import _vec as v
from ._jit import njit
from .mesh_ray import _ray_box_interval
from .tree_pair import _tri

# Direction of the parity rays of the point-in-mesh test: irrational-looking so
# that it is almost never parallel to a modelled face or edge.
_PARITY_DIRS = np.array([
    [0.5773502691896258, 0.5773502691896257, 0.5773502691896259],
    [0.2672612419124244, 0.5345224838248488, -0.8017837257372732],
    [-0.7071067811865475, 0.1, 0.6998],
    [0.123, -0.9876, 0.0975],
])
_PARITY_DIRS /= np.linalg.norm(_PARITY_DIRS, axis=1)[:, None]


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
def parity_kernel(nodes, links, tris, o, d):
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
        t0, t1 = _ray_box_interval(o, d, nodes, node)
        if t0 > t1 or t1 < 0.0:
            continue
        if links[node, 0] < 0:
            for k in range(links[node, 1], links[node, 1] + links[node, 2]):
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
        stack[top] = links[node, 0]
        stack[top + 1] = links[node, 0] + 1
        top += 2
    return count, ambiguous


def _inside(tree, point):
    """Is ``point`` (tree's model frame) inside the closed mesh? Ray parity."""
    o = (float(point[0]), float(point[1]), float(point[2]))
    for d in _PARITY_DIRS:
        count, ambiguous = parity_kernel(*tree.arrays, o, (float(d[0]), float(d[1]), float(d[2])))
        if not ambiguous:
            break
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
