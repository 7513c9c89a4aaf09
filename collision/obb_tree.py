"""OBB trees: a top-down hierarchy of oriented boxes over a triangle mesh.

The thesis (seed 004, 3.2 and 5.3) and Gottschalk, Lin and Manocha's OBBTree
(RAPID): each node's box takes its axes from the eigenvectors of the
covariance of the node's triangle vertices and its extents from the minimum
and maximum projections; a node splits across its longest axis at the mean of
its triangles' centroids, falling back to the median when one side would be
empty. The tree is stored as flat arrays that the compiled queries in
:mod:`collision.mesh_query` walk.

Three fits for the box axes (``fit=``):

- ``"vertex"`` (default, the thesis' formula): mean and covariance of the
  three vertices of every triangle in the node, each vertex counted once per
  triangle it belongs to;
- ``"area"`` (RAPID): the covariance of the surface, each triangle weighted by
  its area (independent of tessellation);
- ``"hull"``: the area-weighted covariance of the convex hull of the node's
  vertices (Gottschalk's choice; insensitive to interior detail). Costlier:
  a hull per node.

Which is tightest depends on the mesh; ``benchmarks/bench_obb_tree.py`` measures
the sum of node volumes and the box tests per query for each.

This module holds the build and the tree; the moments, covariances and box
extents of a node are in :mod:`collision.obb_fit`, the symmetric 3x3
eigen-solvers that give its axes in :mod:`collision.eig3` (``eig_sym3`` is
re-exported here).
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ._jit import njit
from ._typing import MeshLike
from ._validate import as_array, as_indices, as_integer
from .eig3 import _eig_fast_into, _eig_into, eig_sym3  # noqa: F401 (eig_sym3: re-exported)
from .obb_fit import (_MOM, _ROW, _TV, _eig_flat_into, _fit_box, _node_covariance, _node_vertex_covariance,
                      _triangle_moments)

__all__ = ["OBBTree", "eig_sym3", "FITS"]

FITS = ("vertex", "area", "hull")
_FIT_CODE = {"vertex": 0, "area": 1, "hull": 1}


@njit
def _swap(rows, perm, proj, i, j):
    for col in range(rows.shape[1]):
        x = rows[i, col]
        rows[i, col] = rows[j, col]
        rows[j, col] = x
    k = perm[i]
    perm[i] = perm[j]
    perm[j] = k
    x = proj[i]
    proj[i] = proj[j]
    proj[j] = x


@njit
def _build_kernel(tv, leaf_size, fit):
    """Top-down build. Returns the packed ``nodes (N, 16)`` and ``links (N, 3)``
    (see :class:`OBBTree`), the triangle order and the corners (m, 3, 3) in
    that order.

    The triangles' corners and moments live in one row each and are
    partitioned in place, so every node's triangles are contiguous in memory
    (an index array into the mesh would make every level a random gather).
    """
    m = tv.shape[0]
    cap = max(1, 2 * m - 1)
    nodes = np.empty((cap, 16))
    links = np.empty((cap, 3), dtype=np.int64)  # first child (second is +1, -1 for a leaf), start, count
    perm = np.arange(m)
    proj = np.empty(m)
    rows = np.empty((m, _ROW))
    w, first, second = _triangle_moments(tv, fit)
    for t in range(m):
        for i in range(3):
            for j in range(3):
                rows[t, _TV + 3 * i + j] = tv[t, i, j]
        rows[t, _MOM] = w[t]
        for i in range(3):
            rows[t, _MOM + 1 + i] = first[t, i]
        for i in range(6):
            rows[t, _MOM + 4 + i] = second[t, i]
    cov = np.empty((3, 3))
    work_m = np.empty((3, 3))
    work_v = np.empty((3, 3))
    n_nodes = 1
    links[0, 0] = -1
    links[0, 1] = 0
    links[0, 2] = m
    stack = np.empty(cap, dtype=np.int64)
    stack[0] = 0
    top = 1
    while top > 0:
        top -= 1
        node = stack[top]
        s = links[node, 1]
        c = links[node, 2]
        axes = nodes[node, 3:12].reshape(3, 3)
        if not _node_covariance(rows, s, c, cov):
            _node_vertex_covariance(rows, s, c, cov)  # all areas zero
        if c == 1:
            done = _eig_flat_into(cov, rows, s, axes)
        else:
            done = _eig_fast_into(cov, axes)
        if not done:
            _eig_into(cov, work_m, work_v, axes)
        _fit_box(rows, s, c, axes, nodes[node, 0:3], nodes[node, 12:15])
        nodes[node, 15] = math.sqrt(nodes[node, 12] ** 2 + nodes[node, 13] ** 2 + nodes[node, 14] ** 2)
        if c <= leaf_size:
            continue
        # Split across the longest axis at the mean of the centroids.
        k = 0
        if nodes[node, 13] > nodes[node, 12 + k]:
            k = 1
        if nodes[node, 14] > nodes[node, 12 + k]:
            k = 2
        ax = (axes[k, 0], axes[k, 1], axes[k, 2])
        mean = 0.0
        for i in range(s, s + c):
            p = (ax[0] * (rows[i, 0] + rows[i, 3] + rows[i, 6])
                 + ax[1] * (rows[i, 1] + rows[i, 4] + rows[i, 7])
                 + ax[2] * (rows[i, 2] + rows[i, 5] + rows[i, 8]))
            proj[i] = p
            mean += p
        mean /= c
        # Hoare partition: swap only pairs that are both on the wrong side.
        lo = s
        hi = s + c - 1
        while True:
            while lo <= hi and proj[lo] < mean:
                lo += 1
            while lo <= hi and not proj[hi] < mean:
                hi -= 1
            if lo >= hi:
                break
            _swap(rows, perm, proj, lo, hi)
            lo += 1
            hi -= 1
        n_left = lo - s
        if n_left == 0 or n_left == c:
            # Median split: order by projection, halve.
            order = np.argsort(proj[s:s + c]) + s
            rows[s:s + c] = rows[order]
            perm[s:s + c] = perm[order]
            n_left = c // 2
        left = n_nodes
        n_nodes += 2
        links[node, 0] = left
        links[left, 0] = -1
        links[left, 1] = s
        links[left, 2] = n_left
        links[left + 1, 0] = -1
        links[left + 1, 1] = s + n_left
        links[left + 1, 2] = c - n_left
        stack[top] = left + 1
        stack[top + 1] = left
        top += 2
    corners = np.ascontiguousarray(rows[:, _TV:_TV + 9]).reshape(m, 3, 3)
    return nodes[:n_nodes].copy(), links[:n_nodes].copy(), perm, corners


@njit
def _is_closed_kernel(faces, n_vertices):
    """Each directed edge appears once and its reverse appears once."""
    m = faces.shape[0]
    keys = np.empty(3 * m, dtype=np.int64)
    for t in range(m):
        for k in range(3):
            a = faces[t, k]
            b = faces[t, (k + 1) % 3]
            if a == b:
                return False
            keys[3 * t + k] = a * n_vertices + b
    keys.sort()
    for i in range(1, keys.shape[0]):
        if keys[i] == keys[i - 1]:
            return False
    for i in range(keys.shape[0]):
        a = keys[i] // n_vertices
        b = keys[i] % n_vertices
        r = b * n_vertices + a
        j = np.searchsorted(keys, r)
        if j >= keys.shape[0] or keys[j] != r:
            return False
    return True


class OBBTree:
    """An OBB hierarchy over a triangle mesh, in the mesh's own (model) frame.

    Parameters
    ----------
    vertices : (n, 3) float64, or a ``trimesh.Trimesh``
        With a Trimesh, ``faces`` is taken from it.
    faces : (m, 3) int
        Triangles as vertex indices.
    fit : {"vertex", "area", "hull"}
        How node axes are chosen (see the module docstring).
    leaf_size : int
        Most triangles in a leaf (1, as RAPID, makes every leaf test exact and
        cheap; larger leaves make a shallower tree).

    Attributes
    ----------
    vertices : (n, 3) float64
    faces : (m, 3) int64
    triangles : (m, 3, 3) float64
        Corner coordinates of every triangle, in the tree's leaf order
        (``triangles[k]`` is face ``tri_index[k]``).
    tri_index : (m,) int64
        Original face index of each entry of ``triangles``.
    centers, axes, half_extents : (N, 3), (N, 3, 3), (N, 3) float64
        Node boxes; axes as rows.
    child : (N,) int64
        First child of each node (the second is ``child + 1``), -1 for leaves.
    start, count : (N,) int64
        Each node's triangles: ``triangles[start:start + count]``.
    closed : bool
        Every edge is shared by exactly two faces with opposite directions:
        a closed, consistently oriented surface (required for containment).
    nodes : (N, 16) float64
        Packed node rows: centre (0:3), axes row-major (3:12), half extents
        (12:15), radius of the bounding sphere (15). ``centers``, ``axes`` and
        ``half_extents`` are views into it.
    links : (N, 3) int64
        Packed ``child, start, count`` (the three attributes are views).
    arrays : tuple
        ``(nodes, links, triangles)``, what the query kernels take;
        ``query_arrays`` adds ``tri_index``.
    support_points : tuple
        ``(points (P, 3) float64, ranges (N, 2) int64)``: every node's distinct
        triangle corners (:func:`collision.node_points.node_points`), the
        distance search's exact supports; computed on first use.
    """

    vertices: NDArray[np.float64]
    faces: NDArray[np.int64]
    fit: str
    leaf_size: int
    triangles: NDArray[np.float64]
    tri_index: NDArray[np.int64]
    centers: NDArray[np.float64]
    axes: NDArray[np.float64]
    half_extents: NDArray[np.float64]
    child: NDArray[np.int64]
    start: NDArray[np.int64]
    count: NDArray[np.int64]
    nodes: NDArray[np.float64]
    links: NDArray[np.int64]
    arrays: tuple[NDArray[np.float64], NDArray[np.int64], NDArray[np.float64]]
    query_arrays: tuple[NDArray[np.float64], NDArray[np.int64], NDArray[np.float64], NDArray[np.int64]]

    def __init__(self, vertices: ArrayLike | MeshLike, faces: ArrayLike | None = None, fit: str = "vertex",
                 leaf_size: int = 1) -> None:
        if faces is None and hasattr(vertices, "faces") and hasattr(vertices, "vertices"):
            vertices, faces = vertices.vertices, vertices.faces
        if faces is None:
            raise ValueError("faces: required unless a trimesh.Trimesh is given")
        verts = as_array(vertices, "vertices", (3,))
        if verts.ndim != 2:
            raise ValueError(f"vertices: expected shape (n, 3), got {verts.shape}")
        f = as_indices(faces, "faces", (3,))
        if f.ndim != 2:
            raise ValueError(f"faces: expected an (m, 3) integer array, got {f.shape} {f.dtype}")
        if len(f) == 0:
            raise ValueError("faces: the mesh has no triangles")
        if f.min() < 0 or f.max() >= len(verts):
            raise ValueError(f"faces: vertex index out of range (mesh has {len(verts)} vertices)")
        if fit not in FITS:
            raise ValueError(f"fit: expected one of {FITS}, got {fit!r}")
        leaf_size = as_integer(leaf_size, "leaf_size", low=1, high=1 << 30)
        self.vertices = np.ascontiguousarray(verts)
        self.faces = np.ascontiguousarray(f, dtype=np.int64)
        self.fit = fit
        self.leaf_size = int(leaf_size)
        tv = np.ascontiguousarray(self.vertices[self.faces])
        # Packed layout walked by the kernels (one row per node, few arguments
        # per call); the named attributes are views into it.
        self.nodes, self.links, self.tri_index, self.triangles = _build_kernel(
            tv, self.leaf_size, _FIT_CODE[fit])
        self._set_views()
        if fit == "hull":
            self._refit_hull()
            self.nodes[:, 15] = np.linalg.norm(self.half_extents, axis=1)  # bounding-sphere radius

    @classmethod
    def from_arrays(cls, vertices: NDArray[np.float64], faces: NDArray[np.int64], nodes: NDArray[np.float64],
                    links: NDArray[np.int64], tri_index: NDArray[np.int64], fit: str = "vertex",
                    leaf_size: int = 1) -> OBBTree:
        """A tree from the arrays a built tree holds (a cache), building nothing.

        The arrays are trusted as given: the query kernels walk them without
        checks, so check them first (``validate()``, or the cache's own checks).

        Parameters
        ----------
        vertices : (n, 3) float64
        faces : (m, 3) int64
        nodes : (N, 16) float64
        links : (N, 3) int64
        tri_index : (m,) int64
        fit, leaf_size
            What the tree was built with.
        """
        t = cls.__new__(cls)
        t.vertices = vertices
        t.faces = faces
        t.fit = fit
        t.leaf_size = int(leaf_size)
        t.nodes, t.links, t.tri_index = nodes, links, tri_index
        t.triangles = np.ascontiguousarray(vertices[faces[tri_index]])
        t._set_views()
        return t

    def _set_views(self):
        """The named views into the packed arrays, and the lazily computed properties."""
        n = len(self.nodes)
        self.centers = self.nodes[:, 0:3]
        self.axes = self.nodes[:, 3:12].reshape(n, 3, 3)
        self.half_extents = self.nodes[:, 12:15]
        self.child, self.start, self.count = self.links[:, 0], self.links[:, 1], self.links[:, 2]
        self.arrays = (self.nodes, self.links, self.triangles)
        self.query_arrays = self.arrays + (self.tri_index,)
        self._closed = None
        self._depths = None
        self._component_vertices = None
        self._support_points = None

    @property
    def closed(self) -> bool:
        """True when every edge is shared by exactly two faces with opposite directions.

        A closed, consistently oriented surface bounds a solid: only then can a
        containment (one mesh inside another) be claimed. Computed on first use.
        """
        if self._closed is None:
            self._closed = _is_closed(self.faces)
        return self._closed

    @property
    def support_points(self) -> tuple[NDArray[np.float64], NDArray[np.int64]]:
        """``(points, ranges)``: node ``k``'s distinct triangle corners are
        ``points[ranges[k, 0]:ranges[k, 1]]`` (model frame; see :mod:`collision.node_points`)."""
        if self._support_points is None:
            from .node_points import node_points

            self._support_points = node_points(self.vertices, self.faces, self.links, self.tri_index)
        return self._support_points

    @property
    def component_vertices(self) -> NDArray[np.int64]:
        """(k,) int64: one vertex index of each connected component of the mesh."""
        if self._component_vertices is None:
            from scipy.sparse import coo_matrix
            from scipy.sparse.csgraph import connected_components

            n = len(self.vertices)
            e = np.concatenate([self.faces[:, [0, 1]], self.faces[:, [1, 2]]])
            g = coo_matrix((np.ones(len(e)), (e[:, 0], e[:, 1])), shape=(n, n))
            _, labels = connected_components(g, directed=False)
            used = np.unique(self.faces)
            _, first = np.unique(labels[used], return_index=True)
            self._component_vertices = used[first]
        return self._component_vertices

    def _refit_hull(self):
        """Refit every node's box from the area-weighted covariance of its hull."""
        from scipy.spatial import ConvexHull, QhullError

        from .obb import OBB

        for node in range(len(self.child)):
            pts = self.triangles[self.start[node]:self.start[node] + self.count[node]].reshape(-1, 3)
            try:
                hull = ConvexHull(pts)
            except (QhullError, ValueError):
                continue  # flat node: keep the covariance box
            box = OBB.from_triangles(pts[hull.simplices])
            self.centers[node], self.axes[node], self.half_extents[node] = box.center, box.axes, box.half_extents

    @property
    def node_count(self) -> int:
        return len(self.child)

    @property
    def depth(self) -> int:
        """Number of levels (a single leaf has depth 1)."""
        return int(self.node_depths().max()) + 1

    def node_depths(self) -> NDArray[np.int64]:
        """(N,) int64: depth of every node, the root at 0 (computed once; read-only)."""
        if self._depths is None:
            d = np.zeros(len(self.child), dtype=np.int64)
            for node in range(len(self.child)):  # parents come before children
                c = self.child[node]
                if c >= 0:
                    d[c] = d[c + 1] = d[node] + 1
            d.flags.writeable = False
            self._depths = d
        return self._depths

    def total_volume(self) -> float:
        """Sum of the volumes of all node boxes (a tightness measure)."""
        return float(8.0 * np.prod(self.half_extents, axis=1).sum())

    def boxes_at_depth(self, depth: int) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]:
        """Boxes of the nodes at ``depth`` (leaves above it included), for drawing.

        Returns
        -------
        centers : (k, 3), axes : (k, 3, 3), half_extents : (k, 3)
        """
        d = self.node_depths()
        sel = (d == depth) | ((d < depth) & (self.child < 0))
        return self.centers[sel], self.axes[sel], self.half_extents[sel]

    def validate(self, tol: float = 1e-9) -> bool:
        """Check the tree's invariants; raise ``AssertionError`` naming the first broken one.

        Every node's box encloses all its triangles (to ``tol`` times the mesh
        size), axes are orthonormal and right-handed, children partition their
        parent's triangle range, and every triangle is in exactly one leaf.
        """
        scale = max(1.0, float(np.abs(self.vertices).max()))
        seen = np.zeros(len(self.faces), dtype=np.int64)
        for node in range(len(self.child)):
            a = self.axes[node]
            assert np.allclose(a @ a.T, np.eye(3), atol=1e-9), f"node {node}: axes not orthonormal"
            assert np.linalg.det(a) > 0.0, f"node {node}: axes not right-handed"
            s, c = self.start[node], self.count[node]
            pts = self.triangles[s:s + c].reshape(-1, 3)
            local = np.abs((pts - self.centers[node]) @ a.T)
            excess = (local - self.half_extents[node]).max()
            assert excess <= tol * scale, f"node {node}: a vertex lies {excess:g} outside its box"
            ch = self.child[node]
            if ch >= 0:
                assert self.start[ch] == s and self.count[ch] + self.count[ch + 1] == c \
                    and self.start[ch + 1] == s + self.count[ch], f"node {node}: children do not split it"
                assert self.count[ch] > 0 and self.count[ch + 1] > 0, f"node {node}: empty child"
            else:
                seen[self.tri_index[s:s + c]] += 1
        assert np.all(seen == 1), "some triangle is in no leaf or in several"
        return True


def _is_closed(faces):
    """Closed and consistently oriented: each directed edge has its reverse, once."""
    return bool(_is_closed_kernel(faces, int(faces.max()) + 1))
