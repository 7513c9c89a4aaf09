"""Convex polyhedra: the hull of a point set as polygons, and the closest point on it.

A :class:`ConvexPolyhedron` is the shared representation of the convex
queries: vertices, the hull's triangles, the merged planar faces as
counter-clockwise polygons (seed 003's "standard polygons"), their outward unit
normals and plane offsets, and the unique edges. Qhull (via scipy) builds the
hull; coplanar hull triangles are merged into one polygon.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy.spatial import ConvexHull, QhullError, cKDTree

from . import _vec as v
from ._jit import njit
from ._validate import as_array, as_indices, broadcast_batch, unbatch
from .closest_point import closest_pt_point_triangle_t

__all__ = ["ConvexPolyhedron", "closest_pt_point_convex"]

# Two neighbouring hull triangles belong to one face when they face the same
# way and the corner of one that is not on the shared edge lies on the plane of
# the other to within this tolerance, relative to the hull's extent.
COPLANAR_TOL = 1e-12
# Input points closer than this (relative to the point set's extent) are one point to the hull: two
# such points make sliver triangles whose planes Qhull cannot give, and merging neighbours with
# the same plane through a sliver joined faces that are not coplanar (found by hypothesis: two
# points 4e-12 of the extent apart gave a face 1% of the extent outside a vertex).
DUPLICATE_TOL = 1e-10
# The corners of a face's triangles lie within this distance (relative to the hull's extent) of
# one plane; a face joined through a sliver triangle that does not is regrouped (_from_oriented).
FACE_TOL = 1e-10


def _without_near_duplicates(pts: NDArray[np.float64], r: float) -> NDArray[np.float64]:
    """``pts`` (n, 3) without the points within ``r`` of an earlier point kept (the first of each
    cluster stays, so every point returned is an input point)."""
    if r <= 0.0:
        return pts
    pairs = cKDTree(pts).query_pairs(r, output_type="ndarray")
    if not len(pairs):
        return pts
    keep = np.ones(len(pts), bool)
    for i, j in pairs[np.lexsort((pairs[:, 1], pairs[:, 0]))]:
        if keep[i]:
            keep[j] = False
    return pts[keep]


@dataclass(frozen=True, eq=False)
class ConvexPolyhedron:
    """A closed convex polyhedron.

    Attributes
    ----------
    vertices : (n, 3) float64
        The hull's vertices (only points on the hull are kept).
    triangles : (t, 3) int64
        Hull triangles, counter-clockwise seen from outside.
    polygons : list of (k_i,) int64
        Planar faces: vertex indices counter-clockwise seen from outside.
    normals : (f, 3) float64
        Outward unit normal of each polygon.
    offsets : (f,) float64
        Plane constants: ``normals[i] . x = offsets[i]`` on face ``i``.
    edges : (e, 2) int64
        Unique undirected edges of the polygons.
    """

    vertices: NDArray[np.float64]
    triangles: NDArray[np.int64]
    polygons: list[NDArray[np.int64]]
    normals: NDArray[np.float64]
    offsets: NDArray[np.float64]
    edges: NDArray[np.int64] = field(repr=False)

    @classmethod
    def from_points(cls, points: ArrayLike, name: str = "points") -> ConvexPolyhedron:
        """Convex hull of a point set.

        Parameters
        ----------
        points : (n, 3) float64
            At least four points not all in one plane.

        Raises
        ------
        ValueError
            If the points are not finite or span no volume.
        """
        pts = as_array(points, name, (3,))
        if pts.ndim != 2 or len(pts) < 4:
            raise ValueError(f"{name}: need at least 4 points spanning a volume, got shape {pts.shape}")
        pts = _without_near_duplicates(pts, DUPLICATE_TOL * float(np.ptp(pts, axis=0).max()))
        if len(pts) < 4:
            raise ValueError(f"{name}: the points are flat (they span no volume)")
        try:
            hull = ConvexHull(pts)
        except QhullError:
            raise ValueError(f"{name}: the points are flat (they span no volume)") from None
        used = np.unique(hull.simplices)
        remap = np.full(len(pts), -1)
        remap[used] = np.arange(len(used))
        verts = pts[used]
        tris = remap[hull.simplices]
        normals = hull.equations[:, :3]
        # Qhull does not orient simplices: make each counter-clockwise about its normal.
        e1 = verts[tris[:, 1]] - verts[tris[:, 0]]
        e2 = verts[tris[:, 2]] - verts[tris[:, 0]]
        flip = np.einsum("ij,ij->i", np.cross(e1, e2), normals) < 0.0
        tris[flip] = tris[flip][:, ::-1]
        return cls._from_oriented(verts, tris, normals, hull.neighbors, corners_only=True)

    @classmethod
    def from_mesh(cls, vertices: ArrayLike, faces: Iterable[ArrayLike], name: str = "vertices") -> ConvexPolyhedron:
        """A convex polyhedron from its own faces (no hull is computed).

        Parameters
        ----------
        vertices : (n, 3) float64
        faces : (m, 3) int or list of index sequences
            Triangles or convex polygons; a consistent orientation is required
            (both all counter-clockwise or all clockwise from outside: the
            orientation is fixed by the sign of the volume).

        Raises
        ------
        ValueError
            For bad indices, an open or inconsistently oriented surface, or a
            shape that is not convex.
        """
        verts = as_array(vertices, name, (3,))
        if verts.ndim != 2 or len(verts) < 4:
            raise ValueError(f"{name}: need at least 4 vertices, got shape {verts.shape}")
        if isinstance(faces, np.ndarray) or not isinstance(faces, (list, tuple)):
            faces = as_indices(faces, "faces", (-1,))
            if faces.ndim != 2:
                raise ValueError(f"faces: expected (m, k) indices or a list of index sequences, got {faces.shape}")
        polys = [as_indices(f, "faces").ravel() for f in faces]
        if not polys or any(len(p) < 3 for p in polys):
            raise ValueError("faces: every face needs at least 3 vertex indices")
        if any(p.min() < 0 or p.max() >= len(verts) for p in polys):
            raise ValueError("faces: vertex index out of range")
        tris = np.array([[p[0], p[i], p[i + 1]] for p in polys for i in range(1, len(p) - 1)])
        a, b, c = verts[tris[:, 0]], verts[tris[:, 1]], verts[tris[:, 2]]
        if np.einsum("ij,ij->i", a, np.cross(b, c)).sum() < 0.0:
            tris = tris[:, ::-1].copy()
            a, c = c, a
        cr = np.cross(b - a, c - a)
        ln = np.linalg.norm(cr, axis=1)
        good = ln > 0.0
        tris, cr, ln = tris[good], cr[good], ln[good]
        if not len(tris):
            raise ValueError(f"{name}: the faces span no area (every triangle is degenerate)")
        normals = cr / ln[:, None]
        owner = {}
        for t, tri in enumerate(tris):
            for k in range(3):
                owner[(tri[k], tri[(k + 1) % 3])] = t
        neighbors = []
        for t, tri in enumerate(tris):
            row = []
            for k in range(3):
                twin = owner.get((tri[(k + 1) % 3], tri[k]))
                if twin is None:
                    raise ValueError("faces: the surface is open or inconsistently oriented")
                row.append(twin)
            neighbors.append(row)
        scale = max(1.0, float(np.abs(verts).max()))
        if np.any(verts @ normals.T - np.einsum("ij,ij->i", normals, verts[tris[:, 0]]) > 1e-9 * scale):
            raise ValueError(f"{name}: the faces do not bound a convex polyhedron")
        used = np.unique(tris)
        remap = np.full(len(verts), -1)
        remap[used] = np.arange(len(used))
        return cls._from_oriented(verts[used], remap[tris], normals, neighbors)

    @classmethod
    def _from_oriented(cls, verts, tris, tri_normals, neighbors, corners_only=False):
        # Union-find over neighbouring triangles with the same plane: the pairs are tested all at
        # once, then joined one by one in a fixed order (i ascending, then i's neighbours in their
        # order), which fixes each face's root and so the order of the faces.
        tris = np.asarray(tris, np.int64)
        nb = np.asarray(neighbors, np.int64).reshape(len(tris), 3)
        scale = float(np.ptp(verts, axis=0).max())
        tol = COPLANAR_TOL * scale
        first = np.repeat(np.arange(len(tris)), 3)
        second = nb.ravel()
        keep = (second > first) & (np.einsum("ij,ij->i", tri_normals[first], tri_normals[second]) > 0.0)
        first, second = first[keep], second[keep]
        away = (tris[second][:, :, None] != tris[first][:, None, :]).all(axis=2)  # j's corners not in i
        far = tris[second, away.argmax(axis=1)]
        gap = np.einsum("ij,ij->i", tri_normals[first], verts[far] - verts[tris[first, 0]])
        # and i's corner on j's plane: a sliver (corners nearly on a line, its own normal meaningless)
        # joins the neighbour whose plane it lies on whichever of the two comes first
        back = (tris[first][:, :, None] != tris[second][:, None, :]).all(axis=2)
        gap_back = np.einsum("ij,ij->i", tri_normals[second],
                             verts[tris[first, back.argmax(axis=1)]] - verts[tris[second, 0]])
        merge = away.any(axis=1) & ((np.abs(gap) <= tol) | (np.abs(gap_back) <= tol))
        parent = np.arange(len(tris))

        def find(i):
            while parent[i] != i:
                parent[i] = parent[parent[i]]
                i = parent[i]
            return i

        for i, j in zip(first[merge].tolist(), second[merge].tolist()):
            parent[find(j)] = find(i)
        roots = parent
        while True:  # every triangle's root (what find gives it)
            up = roots[roots]
            if np.array_equal(up, roots):
                break
            roots = up
        # one pass over the triangles sorted by face (a mask per face would be quadratic)
        order = np.argsort(roots, kind="stable")
        starts = np.concatenate([[0], np.flatnonzero(np.diff(roots[order])) + 1])
        sizes = np.diff(np.append(starts, len(order)))
        # each face's normal: the mean of its triangles' normals, made unit
        normals = _face_normals(tri_normals, order, starts, sizes)
        # A sliver triangle (its corners nearly on a line) lies on the plane of every neighbour
        # through that line, so the test above can join two faces that are not coplanar through
        # it (found by hypothesis: a sliver along an edge of two faces 45 degrees apart). A face
        # whose triangles' corners are not all on its mean plane is regrouped: the largest of its
        # triangles left takes every one left whose corners lie on its plane (a sliver among them
        # gets that plane's normal: its own, from corners nearly on a line, means nothing).
        h = np.einsum("tkj,tj->tk", verts[tris[order]], np.repeat(normals, sizes, axis=0))
        spread = np.maximum.reduceat(h.max(axis=1), starts) - np.minimum.reduceat(h.min(axis=1), starts)
        bent = np.flatnonzero(spread > FACE_TOL * scale)
        if len(bent):
            tri_normals = np.array(tri_normals, dtype=np.float64)
            for f in bent.tolist():
                members = order[starts[f]:starts[f] + sizes[f]]
                corners = verts[tris[members]]
                area = np.linalg.norm(np.cross(corners[:, 1] - corners[:, 0], corners[:, 2] - corners[:, 0]), axis=1)
                left = members[np.argsort(-area, kind="stable")]
                while len(left):
                    n = tri_normals[left[0]]
                    on = np.all(np.abs(verts[tris[left]] @ n - n @ verts[tris[left[0], 0]]) <= FACE_TOL * scale,
                                axis=1)
                    group = left[on]
                    roots[group] = group.min()
                    tri_normals[group] = n
                    left = left[~on]
            order = np.argsort(roots, kind="stable")
            starts = np.concatenate([[0], np.flatnonzero(np.diff(roots[order])) + 1])
            sizes = np.diff(np.append(starts, len(order)))
            normals = _face_normals(tri_normals, order, starts, sizes)
        # a face of one triangle (most faces of a rounded hull): its loop starts at its smallest
        # vertex index, as _boundary_loop's does
        lone = tris[order[starts]]
        turn = lone.argmin(axis=1)[:, None]
        lone = np.take_along_axis(lone, (turn + np.arange(3)) % 3, axis=1)
        polygons = [lone[f] if size == 1 else _boundary_loop(tris[order[s:s + size]])
                    for f, (s, size) in enumerate(zip(starts.tolist(), sizes.tolist()))]
        # each face's offset: the mean of its corners' heights along its normal
        lens = np.array([len(p) for p in polygons])
        flat = np.concatenate(polygons)
        if corners_only:  # from_points: a point of the cloud inside a merged face is not a vertex
            used = np.zeros(len(verts), bool)
            used[flat] = True
            if not used.all():  # (Qhull kept it as a corner of its triangles): each face a fan of its loop
                remap = np.cumsum(used) - 1
                verts, flat = verts[used], remap[flat]
                polygons = [remap[p] for p in polygons]
                fans = [np.stack([np.full(len(p) - 2, p[0]), p[1:-1], p[2:]], axis=1) for p in polygons]
                tris = np.concatenate(fans)
                face_of = np.repeat(np.arange(len(fans)), [len(f) for f in fans])
                c = verts[tris]
                turn = np.einsum("ij,ij->i", np.cross(c[:, 1] - c[:, 0], c[:, 2] - c[:, 0]), normals[face_of])
                tris = tris[turn > FACE_TOL * scale * scale]  # less the fans' flat triangles
        heights = np.einsum("ij,ij->i", verts[flat], np.repeat(normals, lens, axis=0))
        offsets = np.add.reduceat(heights, np.cumsum(lens) - lens) / lens
        after = np.arange(len(flat)) + 1
        after[np.cumsum(lens) - 1] -= lens  # each loop's last corner goes back to its first
        ends = np.sort(np.stack([flat, flat[after]], axis=1), axis=1)
        return cls(
            vertices=verts,
            triangles=tris,
            polygons=polygons,
            normals=normals,
            offsets=offsets,
            edges=np.unique(ends, axis=0).astype(np.int64),
        )

    @property
    def centroid(self) -> NDArray[np.float64]:
        """(3,) float64: mean of the vertices (an interior point)."""
        return self.vertices.mean(0)

    def transformed(self, pose: ArrayLike) -> ConvexPolyhedron:
        """This polyhedron moved by a 4x4 rigid transform."""
        pose = as_array(pose, "pose", (4, 4))
        rot, t = pose[:3, :3], pose[:3, 3]
        return ConvexPolyhedron(
            vertices=self.vertices @ rot.T + t,
            triangles=self.triangles,
            polygons=self.polygons,
            normals=self.normals @ rot.T,
            offsets=self.offsets + self.normals @ rot.T @ t,
            edges=self.edges,
        )


def _face_normals(tri_normals, order, starts, sizes):
    """(f, 3): each face's normal, the mean of its triangles' (``tri_normals[order]`` in runs from
    ``starts`` of ``sizes``), made unit."""
    normals = np.add.reduceat(tri_normals[order], starts, axis=0) / sizes[:, None]
    normals /= np.sqrt(np.einsum("ij,ij->i", normals, normals))[:, None]
    return normals


def _boundary_loop(group):
    """Boundary of a patch of consistently oriented triangles, as one ordered loop."""
    directed = {}
    for a, b, c in group:
        for e in ((a, b), (b, c), (c, a)):
            directed[e] = True
    nxt = {a: b for (a, b) in directed if (b, a) not in directed}
    start = min(nxt)
    loop = [start]
    cur = nxt[start]
    while cur != start:
        loop.append(cur)
        cur = nxt[cur]
        if len(loop) > len(nxt):
            raise ValueError("hull face is not a simple polygon")
    return np.array(loop, dtype=np.int64)


def _surface_triangles(pts):
    """Triangles covering the surface of the hull of ``pts`` (flat sets included).

    Returns ``(triangles (t, 3, 3), solid)`` where ``solid`` says whether the
    hull has volume (then points inside it are their own closest point).
    """
    try:
        hull = ConvexHull(pts)
        return pts[hull.simplices], hull
    except (QhullError, ValueError):
        pass
    # Flat: triangulate the 2D hull in the plane of the points (a fan).
    center = pts.mean(0)
    _, s, vt = np.linalg.svd(pts - center)
    scale = max(s[0], 1e-300)
    if len(pts) >= 3 and s[1] > 1e-12 * scale:
        uv = (pts - center) @ vt[:2].T
        try:
            ring = ConvexHull(uv).vertices
        except QhullError:
            ring = None
        if ring is not None:
            fan = np.array([[ring[0], ring[i], ring[i + 1]] for i in range(1, len(ring) - 1)])
            return pts[fan], None
    # Collinear or a single point: the segment between the extremes.
    t = (pts - center) @ vt[0]
    a, b = pts[np.argmin(t)], pts[np.argmax(t)]
    return np.array([[a, b, b]]), None


@njit
def _convex_batch(p, tris, normals, offsets, solid, out):
    for i in range(p.shape[0]):
        q = v.row(p, i)
        if solid:
            inside = True
            for f in range(normals.shape[0]):
                if normals[f, 0] * q[0] + normals[f, 1] * q[1] + normals[f, 2] * q[2] > offsets[f]:
                    inside = False
                    break
            if inside:
                v.store(out, i, q)
                continue
        best = q
        best_d = np.inf
        for t in range(tris.shape[0]):
            c = closest_pt_point_triangle_t(q, v.row(tris[t], 0), v.row(tris[t], 1), v.row(tris[t], 2))
            d = v.norm2(v.sub(c, q))
            if d < best_d:
                best, best_d = c, d
        v.store(out, i, best)


def closest_pt_point_convex(p: ArrayLike, vertices: ArrayLike) -> NDArray[np.float64]:
    """Closest point to ``p`` in the convex hull of ``vertices`` (a solid).

    RTCD 5.1.7 suggests GJK or a walk over the faces; we take the face loop,
    which is exact: a point inside every face plane is its own closest point,
    otherwise the answer is the closest of the hull's triangles (each solved by
    the Voronoi-region kernel of RTCD 5.1.5). Flat vertex sets (a polygon, a
    segment, a point) are handled as such.

    Parameters
    ----------
    p : (..., 3) float64
    vertices : (m, 3) float64, m >= 1
        The polyhedron, given by points; interior points are allowed.

    Returns
    -------
    q : (..., 3) float64
    """
    pts = as_array(vertices, "vertices", (3,))
    if pts.ndim != 2 or len(pts) == 0:
        raise ValueError(f"vertices: expected a non-empty (m, 3) array, got {pts.shape}")
    (p,), lead = broadcast_batch([("p", p, (3,))])
    tris, hull = _surface_triangles(pts)
    if hull is not None:
        normals = np.ascontiguousarray(hull.equations[:, :3])
        offsets = np.ascontiguousarray(-hull.equations[:, 3])
    else:
        normals, offsets = np.zeros((0, 3)), np.zeros(0)
    out = np.empty_like(p)
    _convex_batch(p, np.ascontiguousarray(tris), normals, offsets, hull is not None, out)
    return unbatch(out, lead)
