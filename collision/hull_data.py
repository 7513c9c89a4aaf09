"""A convex hull flattened into arrays that compiled kernels can walk.

:class:`~collision.convex.ConvexPolyhedron` keeps its faces as a Python list of
loops; the contact kernels of :mod:`collision.manifold` need everything as
flat numpy arrays: the face loops concatenated with start offsets (a CSR
layout), the unique edges with the two faces that meet there (the arc of the
edge on the Gauss map, for the edge-pair pruning of D. Gregorius, "The
Separating Axis Test between Convex Polyhedra", GDC 2013), and each vertex's
faces (to pick an incident face around the deepest vertex), and bounding
caps of the edges' Gauss-map arcs and of small groups of them, which let the
edge-pair search skip pairs whose arcs cannot cross (:mod:`collision.gauss_map`). It is built
once per polyhedron and cached (weakly) on it by :meth:`HullData.from_polyhedron`.

All arrays are in the polyhedron's own (model) frame.
"""

from __future__ import annotations

import weakref
from dataclasses import dataclass, field

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ._validate import as_array
from .convex import ConvexPolyhedron
from .gauss_map import CONE_MAX, build_arc_groups

__all__ = ["HullData", "MAX_FACES", "MAX_FACE_VERTICES"]

# Limits of the feature-id packing of collision.manifold (16 bits per face
# index, 13 bits per slot along a face loop).
MAX_FACES = 1 << 16
MAX_FACE_VERTICES = 1 << 13

_CACHE = weakref.WeakKeyDictionary()


@dataclass(frozen=True, eq=False)
class HullData:
    """Flat arrays describing one convex polyhedron.

    Attributes
    ----------
    vertices : (n, 3) float64
    normals : (f, 3) float64
        Outward unit face normals.
    offsets : (f,) float64
        ``normals[i] . x == offsets[i]`` on face ``i``; ``<=`` inside.
    face_start : (f + 1,) int64
        Face ``i`` is the loop ``face_verts[face_start[i]:face_start[i + 1]]``.
    face_verts : (sum k_i,) int64
        Vertex indices of the faces, each loop counter-clockwise seen from
        outside (about its outward normal).
    edge_verts : (e, 2) int64
        Unique edges (vertex indices, the smaller first).
    edge_faces : (e, 2) int64
        The two faces sharing each edge: ``edge_faces[k, 0]`` runs the edge as
        ``edge_verts[k, 0] -> edge_verts[k, 1]`` in its loop, ``edge_faces[k, 1]``
        runs it backwards. On the Gauss map the edge is the arc between the two
        normals.
    vert_face_start : (n + 1,) int64
    vert_faces : (sum,) int64
        Faces around each vertex (CSR layout like the face loops).
    arc_caps : (e, 5) float64
    arc_order : (e,) int64
    group_caps : (g, 5) float64
    group_start : (g + 1,) int64
        Bounding caps of the edges' Gauss-map arcs and of groups of arcs
        (:func:`collision.gauss_map.build_arc_groups`; the layout is described
        in :mod:`collision.gauss_map`).
    centroid : (3,) float64
        Mean of the vertices (an interior point).
    scale : float
        Largest extent of the bounding box (for tolerances).
    """

    vertices: NDArray[np.float64]
    normals: NDArray[np.float64]
    offsets: NDArray[np.float64]
    face_start: NDArray[np.int64] = field(repr=False)
    face_verts: NDArray[np.int64] = field(repr=False)
    edge_verts: NDArray[np.int64] = field(repr=False)
    edge_faces: NDArray[np.int64] = field(repr=False)
    vert_face_start: NDArray[np.int64] = field(repr=False)
    vert_faces: NDArray[np.int64] = field(repr=False)
    arc_caps: NDArray[np.float64] = field(repr=False)
    arc_order: NDArray[np.int64] = field(repr=False)
    group_caps: NDArray[np.float64] = field(repr=False)
    group_start: NDArray[np.int64] = field(repr=False)
    centroid: NDArray[np.float64] = field(repr=False)
    scale: float = 1.0

    @property
    def n_faces(self) -> int:
        return len(self.offsets)

    @property
    def n_edges(self) -> int:
        return len(self.edge_verts)

    def face(self, i: int) -> NDArray[np.int64]:
        """(k,) int64: the vertex loop of face ``i``."""
        return self.face_verts[self.face_start[i]:self.face_start[i + 1]]

    @classmethod
    def from_polyhedron(cls, poly: ConvexPolyhedron | HullData) -> HullData:
        """The flat description of ``poly``, built once and cached on it.

        Parameters
        ----------
        poly : ConvexPolyhedron or HullData
            A ``HullData`` is returned as it is.

        Raises
        ------
        ValueError
            If ``poly`` is neither, or it has more faces or longer face loops
            than the feature ids can hold (:data:`MAX_FACES`,
            :data:`MAX_FACE_VERTICES`).
        """
        if isinstance(poly, HullData):
            return poly
        if not isinstance(poly, ConvexPolyhedron):
            raise ValueError(f"expected a ConvexPolyhedron or HullData, got {type(poly).__name__}")
        hit = _CACHE.get(poly)
        if hit is None:
            hit = cls._build(poly)
            _CACHE[poly] = hit
        return hit

    @classmethod
    def from_points(cls, points: ArrayLike, name: str = "points") -> HullData:
        """Hull of a point set (see :meth:`ConvexPolyhedron.from_points`)."""
        return cls.from_polyhedron(ConvexPolyhedron.from_points(as_array(points, name, (3,)), name=name))

    @classmethod
    def _build(cls, poly):
        verts = np.ascontiguousarray(poly.vertices, dtype=np.float64)
        loops = [np.asarray(p, dtype=np.int64) for p in poly.polygons]
        nf = len(loops)
        if nf >= MAX_FACES:
            raise ValueError(f"polyhedron: {nf} faces, more than the {MAX_FACES - 1} feature ids can name")
        if max(len(p) for p in loops) >= MAX_FACE_VERTICES:
            raise ValueError(f"polyhedron: a face has {max(len(p) for p in loops)} corners, more than "
                             f"{MAX_FACE_VERTICES - 1}")
        face_start = np.zeros(nf + 1, dtype=np.int64)
        face_start[1:] = np.cumsum([len(p) for p in loops])
        face_verts = np.concatenate(loops).astype(np.int64)

        # Directed edge (a, b) -> the face whose loop runs a -> b.
        owner = {}
        for f, loop in enumerate(loops):
            for a, b in zip(loop.tolist(), np.roll(loop, -1).tolist()):
                owner[(a, b)] = f
        edge_verts, edge_faces = [], []
        for (a, b), f in owner.items():
            if a < b:
                twin = owner.get((b, a))
                if twin is None:  # cannot happen for a closed hull
                    raise ValueError("polyhedron: the face loops do not close")
                edge_verts.append((a, b))
                edge_faces.append((f, twin))
        order = np.lexsort(np.array(edge_verts).T[::-1])
        edge_verts = np.array(edge_verts, dtype=np.int64)[order]
        edge_faces = np.array(edge_faces, dtype=np.int64)[order]

        per_vertex = [[] for _ in range(len(verts))]
        for f, loop in enumerate(loops):
            for a in loop.tolist():
                per_vertex[a].append(f)
        vert_face_start = np.zeros(len(verts) + 1, dtype=np.int64)
        vert_face_start[1:] = np.cumsum([len(p) for p in per_vertex])
        vert_faces = np.array([f for p in per_vertex for f in p], dtype=np.int64)

        normals = np.ascontiguousarray(poly.normals, dtype=np.float64)
        edge_faces = np.ascontiguousarray(edge_faces.reshape(-1, 2))
        arc_caps, arc_order, group_caps, group_start = build_arc_groups(normals, edge_faces)
        return cls(
            vertices=verts,
            normals=normals,
            offsets=np.ascontiguousarray(poly.offsets, dtype=np.float64),
            face_start=face_start,
            face_verts=face_verts,
            edge_verts=np.ascontiguousarray(edge_verts.reshape(-1, 2)),
            edge_faces=edge_faces,
            vert_face_start=vert_face_start,
            vert_faces=vert_faces,
            arc_caps=arc_caps,
            arc_order=arc_order,
            group_caps=group_caps,
            group_start=group_start,
            centroid=verts.mean(0),
            scale=float(np.ptp(verts, axis=0).max()),
        )

    def validate(self) -> None:
        """Check the invariants (for tests): closed, convex, consistent loops.

        Raises
        ------
        AssertionError
            Naming the first broken invariant.
        """
        n, f = len(self.vertices), len(self.offsets)
        tol = 1e-9 * max(1.0, self.scale)
        assert self.face_start[0] == 0 and self.face_start[-1] == len(self.face_verts)
        assert np.all(np.diff(self.face_start) >= 3), "a face with fewer than 3 corners"
        assert np.allclose(np.linalg.norm(self.normals, axis=1), 1.0), "normals not unit"
        gaps = self.vertices @ self.normals.T - self.offsets
        assert gaps.max() <= tol, "a vertex outside a face plane (not convex)"
        for i in range(f):
            loop = self.face(i)
            assert np.abs(gaps[loop, i]).max() <= tol, f"face {i} is not planar"
            p = self.vertices[loop]
            area = np.cross(p - p[0], np.roll(p, -1, axis=0) - p[0]).sum(0)
            assert area @ self.normals[i] > 0.0, f"face {i} is not counter-clockwise"
        # Euler: V - E + F = 2 for a closed genus-0 surface.
        assert n - len(self.edge_verts) + f == 2, "Euler characteristic is not 2"
        for k, (a, b) in enumerate(self.edge_verts):
            f0, f1 = self.edge_faces[k]
            l0, l1 = self.face(f0).tolist(), self.face(f1).tolist()
            i0, i1 = l0.index(a), l1.index(b)
            assert l0[(i0 + 1) % len(l0)] == b and l1[(i1 + 1) % len(l1)] == a, f"edge {k} faces"
        for a in range(n):
            fs = self.vert_faces[self.vert_face_start[a]:self.vert_face_start[a + 1]]
            assert len(fs) >= 3 and all(a in self.face(g).tolist() for g in fs), f"vertex {a} faces"
        # the arc caps: a permutation of the edges in groups; a bounded cap holds both ends of each
        # of its arcs, under 90 degrees
        e = len(self.edge_verts)
        assert np.array_equal(np.sort(self.arc_order), np.arange(e)), "arc_order is not a permutation"
        gs = self.group_start
        assert gs[0] == 0 and gs[-1] == e and np.all(np.diff(gs) >= 1), "group_start"
        assert len(self.group_caps) == len(gs) - 1 and len(self.arc_caps) == e, "cap counts"
        for caps, groups in ((self.arc_caps, [[k] for k in range(e)]),
                             (self.group_caps, [self.arc_order[gs[k]:gs[k + 1]] for k in range(len(gs) - 1)])):
            for k, arcs in enumerate(groups):
                if caps[k, 3] < 0.0:
                    continue
                axis = caps[k, :3]
                half = np.arctan2(caps[k, 4], caps[k, 3])
                assert half <= CONE_MAX and abs(np.linalg.norm(axis) - 1.0) < 1e-12, f"cap {k}"
                ends = self.normals[self.edge_faces[np.asarray(arcs)]].reshape(-1, 3)
                ang = np.arctan2(np.linalg.norm(np.cross(ends, axis), axis=1), ends @ axis)
                assert np.all(ang <= half), f"cap {k} misses an arc end"
