"""The distinct corner points of every OBB-tree node: exact supports for a node-pair distance bound.

The distance search (:mod:`collision.mesh_distance`) prunes a node pair when
a lower bound of the distance between the two nodes' triangles reaches the
best distance found so far. The box gap (:func:`collision.tree_pair._gap2_rel`)
is such a bound, but a box holds empty corners around a curved patch, and
near the closest pair, where the surfaces run nearly parallel, a bound a few
percent low keeps many pairs alive. The projections of the nodes' own corner
points on a direction ``n`` give the tightest bound along ``n``: the gap
``min_B n.q - max_A n.p`` between the two supports (the separating-axis view
of the distance of two convex hulls, RTCD 5.2.1 and 9.5: the hulls' distance
is the largest such gap over all ``n``). The search takes ``n`` from the box
gap's direction, which is near the boxes' closest pair.

Measured on the benchmark meshes (``benchmarks/bench_batch.py``' pose pairs,
separated ones): the node pairs the search tests drop from 1800-2500 to
400-470 per query with this bound on every node, to 500-600 with it on pairs
of up to 256 points (:data:`collision.mesh_distance.SUPPORT_POINTS`, where it
costs less than it saves), and the triangle pairs from 100-235 to 30-40. For
scale: with the exact distance of the nodes' convex hulls as the bound, a
search that knows the final distance would test 25 to 50 times fewer pairs
than with the box gap; Larsen et al.'s rectangle swept spheres (fitted as PQP
does, the bound the larger of the box gap and the volumes' gap) cut them by
only 13-16% and cost more time than they saved.

A node's points are the distinct mesh vertices of its triangles (a vertex is
a corner of about six triangles, so about a sixth of the corners), stored
contiguously node after node: the points of node ``n`` are
``points[ranges[n, 0]:ranges[n, 1]]``, in the tree's model frame.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from ._jit import njit

__all__ = ["node_points", "node_points_brute"]


@njit
def _count_kernel(links, corner_ids, stamp):
    """Total number of distinct vertices over all nodes."""
    total = 0
    for n in range(links.shape[0]):
        for i in range(links[n, 1], links[n, 1] + links[n, 2]):
            for k in range(3):
                vid = corner_ids[i, k]
                if stamp[vid] != n:
                    stamp[vid] = n
                    total += 1
    return total


@njit
def _fill_kernel(links, corner_ids, vertices, stamp, points, ranges):
    """Write every node's distinct vertices into ``points``, its slice into ``ranges``."""
    p = 0
    for n in range(links.shape[0]):
        ranges[n, 0] = p
        for i in range(links[n, 1], links[n, 1] + links[n, 2]):
            for k in range(3):
                vid = corner_ids[i, k]
                if stamp[vid] != n:
                    stamp[vid] = n
                    points[p, 0] = vertices[vid, 0]
                    points[p, 1] = vertices[vid, 1]
                    points[p, 2] = vertices[vid, 2]
                    p += 1
        ranges[n, 1] = p


def node_points(vertices: NDArray[np.float64], faces: NDArray[np.int64], links: NDArray[np.int64],
                tri_index: NDArray[np.int64]) -> tuple[NDArray[np.float64], NDArray[np.int64]]:
    """Every node's distinct triangle corners, packed.

    Parameters
    ----------
    vertices : (n, 3) float64
    faces : (m, 3) int64
    links : (N, 3) int64
        :attr:`collision.obb_tree.OBBTree.links` (a node's triangles are
        ``tri_index[start:start + count]``).
    tri_index : (m,) int64

    Returns
    -------
    points : (P, 3) float64
        The nodes' points, node after node, in the model frame.
    ranges : (N, 2) int64
        Node ``k``'s points are ``points[ranges[k, 0]:ranges[k, 1]]``.
    """
    corner_ids = np.ascontiguousarray(faces[tri_index], dtype=np.int64)
    verts = np.ascontiguousarray(vertices, dtype=np.float64)
    stamp = np.full(len(verts), -1, dtype=np.int64)
    total = _count_kernel(links, corner_ids, stamp)
    points = np.empty((total, 3))
    ranges = np.empty((len(links), 2), dtype=np.int64)
    stamp[:] = -1
    _fill_kernel(links, corner_ids, verts, stamp, points, ranges)
    return points, ranges


def node_points_brute(vertices: NDArray[np.float64], faces: NDArray[np.int64], links: NDArray[np.int64],
                      tri_index: NDArray[np.int64]) -> list[NDArray[np.float64]]:
    """Plain-numpy twin of :func:`node_points`: each node's distinct vertices, as a list of ``(k, 3)``
    arrays ordered by first appearance among the node's corners."""
    out = []
    for s, c in links[:, 1:3]:
        ids = faces[tri_index[s:s + c]].ravel()
        _, first = np.unique(ids, return_index=True)
        out.append(vertices[ids[np.sort(first)]])
    return out
