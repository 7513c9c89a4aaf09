"""Every candidate separating axis of a convex pair, with both projection intervals: for showing SAT.

The separating-axis theorem (RTCD 5.2.1; seed 001): two convex polyhedra are
disjoint exactly when their projections on some axis are disjoint, and the
axes to try are the face normals of A, the face normals of B and the cross
products of an edge direction of A with one of B. For two boxes these are
the 15 axes of RTCD 4.4.1 (seed 004, 5.3). :func:`collision.sat.convex_convex_sat`
and :func:`collision.obb.test_obb_obb` answer with one axis; the functions
here keep the whole table (each axis, where it came from, both intervals and
the gap) so that a viewer can draw the projections and say which axis wins.

Frame and sign, as in :mod:`collision.sat`: world frame; each axis is a unit
vector oriented from A towards B (the side on which B's interval lies beyond
A's, or overlaps least); ``gap = lo_b - hi_a`` along it, > 0 separated, <= 0
an overlap of ``-gap``. The axis with the largest gap is the separating axis
with the widest gap when there is one, else the axis of least penetration
(the same rule as :func:`collision.sat.sat_kernel`, in the same order, so ties
go to the same axis).
"""

from dataclasses import dataclass

import numpy as np

from ._jit import njit
from .convex import ConvexPolyhedron
from .sat import AXIS_TOL

__all__ = ["AxisTable", "box_box_axes", "convex_convex_axes", "FACE_A", "FACE_B", "EDGE_EDGE", "KIND_NAMES"]

FACE_A, FACE_B, EDGE_EDGE = 0, 1, 2
KIND_NAMES = ("face_a", "face_b", "edge_edge")

# An edge cross product shorter than this (the sine of the angle of two unit edges) gives no
# axis: parallel edges (the same cut-off as sat_kernel).
EDGE_CROSS_TOL = 1e-12


@dataclass(frozen=True, eq=False)
class AxisTable:
    """The candidate axes of a convex pair and the two shapes' projections on each.

    Attributes
    ----------
    axes : (k, 3) float64
        Unit axes, world frame, oriented from A towards B.
    kind : (k,) int64
        ``FACE_A`` (0), ``FACE_B`` (1) or ``EDGE_EDGE`` (2).
    feature : (k, 2) int64
        Face A: ``(face of A, -1)``; face B: ``(-1, face of B)``; edge x edge:
        ``(edge of A, edge of B)``. For boxes: the box axis indices (0-2).
    lo_a, hi_a, lo_b, hi_b : (k,) float64
        The projection intervals of A and of B on each axis.
    gap : (k,) float64
        ``lo_b - hi_a``: > 0 the axis separates them by that much; <= 0 they overlap
        by ``-gap`` on it.
    index : (k,) int64
        For boxes, the axis number of RTCD 4.4.1 (0-14); for polyhedra the
        position in the candidate order (faces of A, faces of B, edge pairs).
    """

    axes: np.ndarray
    kind: np.ndarray
    feature: np.ndarray
    lo_a: np.ndarray
    hi_a: np.ndarray
    lo_b: np.ndarray
    hi_b: np.ndarray
    gap: np.ndarray
    index: np.ndarray

    def __len__(self):
        return len(self.gap)

    @property
    def best(self):
        """Row of the largest gap (the first such row on a tie): the widest separating axis, or
        the axis of least penetration when no axis separates."""
        return int(np.argmax(self.gap))

    @property
    def separated(self):
        return bool(self.gap[self.best] > 0.0)

    @property
    def first_separating(self):
        """Row of the first separating axis in the candidate order (the one an early-out test
        stops at), or -1."""
        rows = np.flatnonzero(self.gap > 0.0)
        return int(rows[0]) if len(rows) else -1

    def describe(self, row):
        """Where the axis of ``row`` comes from, in words."""
        k, (i, j) = int(self.kind[row]), self.feature[row]
        if k == FACE_A:
            return f"face normal of A (face {i})"
        if k == FACE_B:
            return f"face normal of B (face {j})"
        return f"edge {i} of A x edge {j} of B"


def _oriented(axes, lo_a, hi_a, lo_b, hi_b):
    """Turn each axis so that B lies ahead of A (the larger of the two gaps), as sat_kernel does."""
    fwd = lo_b - hi_a
    bwd = lo_a - hi_b
    flip = bwd > fwd
    axes = np.where(flip[:, None], -axes, axes)
    lo_a, hi_a = np.where(flip, -hi_a, lo_a), np.where(flip, -lo_a, hi_a)
    lo_b, hi_b = np.where(flip, -hi_b, lo_b), np.where(flip, -lo_b, hi_b)
    return axes, lo_a, hi_a, lo_b, hi_b


def box_box_axes(center_a, axes_a, half_a, center_b, axes_b, half_b):
    """The 15 axes of the OBB-OBB test (RTCD 4.4.1) with both boxes' intervals.

    Parameters
    ----------
    center_a, center_b : (3,) float64
        Box centres, world frame.
    axes_a, axes_b : (3, 3) float64
        Box axes as rows (orthonormal).
    half_a, half_b : (3,) float64
        Half extents.

    Returns
    -------
    AxisTable
        15 rows in Ericson's order (``index`` 0-14: A's 3 face normals, B's 3, then
        ``A_i x B_j`` at ``6 + 3 i + j``). An edge pair that is parallel (cross product
        shorter than 1e-12) has no axis: its row has a zero axis and gap ``-inf``.
        Unlike :func:`collision.obb.test_obb_obb` no epsilon is added: the gaps are exact
        projections, so a pair within about 1e-12 of touching may read as separated here
        and as overlapping there.
    """
    ca, cb = np.asarray(center_a, float), np.asarray(center_b, float)
    aa, ab = np.asarray(axes_a, float), np.asarray(axes_b, float)
    ha, hb = np.asarray(half_a, float), np.asarray(half_b, float)
    cross = np.cross(aa[:, None, :], ab[None, :, :]).reshape(9, 3)
    length = np.linalg.norm(cross, axis=1)
    valid = np.concatenate([np.ones(6, bool), length > EDGE_CROSS_TOL])
    cross = np.where((length > EDGE_CROSS_TOL)[:, None], cross / np.maximum(length, 1e-300)[:, None], 0.0)
    axes = np.concatenate([aa, ab, cross])
    ra = np.abs(axes @ aa.T) @ ha
    rb = np.abs(axes @ ab.T) @ hb
    sa, sb = axes @ ca, axes @ cb
    axes, lo_a, hi_a, lo_b, hi_b = _oriented(axes, sa - ra, sa + ra, sb - rb, sb + rb)
    gap = np.where(valid, lo_b - hi_a, -np.inf)
    kind = np.array([FACE_A] * 3 + [FACE_B] * 3 + [EDGE_EDGE] * 9)
    feature = np.array([(i, -1) for i in range(3)] + [(-1, j) for j in range(3)]
                       + [(i, j) for i in range(3) for j in range(3)])
    return AxisTable(axes, kind, feature, lo_a, hi_a, lo_b, hi_b, gap, np.arange(15))


@njit
def _project_all(verts, axes, lo, hi):
    """``lo[k], hi[k]``: min and max of ``verts @ axes[k]`` (no (n, k) temporary)."""
    for k in range(axes.shape[0]):
        a0, a1, a2 = axes[k, 0], axes[k, 1], axes[k, 2]
        mn = np.inf
        mx = -np.inf
        for i in range(verts.shape[0]):
            d = verts[i, 0] * a0 + verts[i, 1] * a1 + verts[i, 2] * a2
            mn = min(mn, d)
            mx = max(mx, d)
        lo[k] = mn
        hi[k] = mx


def _projections(verts, axes):
    lo, hi = np.empty(len(axes)), np.empty(len(axes))
    _project_all(np.ascontiguousarray(verts, dtype=np.float64), np.ascontiguousarray(axes), lo, hi)
    return lo, hi


def _unique_rows(d):
    """Indices of the directions kept by :func:`collision.sat._unique_directions` (the first of
    each parallel or anti-parallel group, zero-length ones dropped), and those unit directions."""
    n = np.linalg.norm(d, axis=1)
    nz = np.flatnonzero(n > AXIS_TOL * max(1.0, float(n.max(initial=0.0))))
    u = np.ascontiguousarray(d[nz] / n[nz, None])
    keep = np.flatnonzero(_first_of_parallel(u, 1.0 - AXIS_TOL))
    return nz[keep], u[keep].reshape(-1, 3)


@njit
def _first_of_parallel(u, limit):
    """(m,) bool: direction ``i`` is kept unless ``|u_i . u_j| >= limit`` for a kept ``j < i``."""
    m = u.shape[0]
    keep = np.zeros(m, dtype=np.bool_)
    for i in range(m):
        ok = True
        for j in range(i):
            if keep[j] and abs(u[j, 0] * u[i, 0] + u[j, 1] * u[i, 1] + u[j, 2] * u[i, 2]) >= limit:
                ok = False
                break
        keep[i] = ok
    return keep


def convex_convex_axes(poly_a, poly_b):
    """Every candidate axis of two convex polyhedra (RTCD 5.2.1) with both intervals.

    Parameters
    ----------
    poly_a, poly_b : ConvexPolyhedron
        Both in the world frame (:meth:`ConvexPolyhedron.transformed`).

    Returns
    -------
    AxisTable
        The face normals of A (parallel duplicates dropped, as :func:`collision.sat.polyhedron_axes`
        does), those of B, then each pair of distinct edge directions of A and B whose cross
        product is not degenerate; ``feature`` gives the face (polygon) indices and the
        edge indices (rows of ``poly.edges``). Its :attr:`AxisTable.best` row carries the axis
        and ``-depth`` of :func:`collision.sat.convex_convex_sat`.
    """
    for p, name in ((poly_a, "poly_a"), (poly_b, "poly_b")):
        if not isinstance(p, ConvexPolyhedron):
            raise ValueError(f"{name}: expected a ConvexPolyhedron, got {type(p).__name__}")
    fa, na = _unique_rows(poly_a.normals)
    fb, nb = _unique_rows(poly_b.normals)
    ia, ea = _unique_rows(poly_a.vertices[poly_a.edges[:, 1]] - poly_a.vertices[poly_a.edges[:, 0]])
    ib, eb = _unique_rows(poly_b.vertices[poly_b.edges[:, 1]] - poly_b.vertices[poly_b.edges[:, 0]])
    cross = np.cross(ea[:, None, :], eb[None, :, :]).reshape(-1, 3)
    length = np.linalg.norm(cross, axis=1)
    ok = length > EDGE_CROSS_TOL
    cross = cross[ok] / length[ok, None]
    pair = np.stack(np.meshgrid(ia, ib, indexing="ij"), axis=-1).reshape(-1, 2)[ok]
    axes = np.concatenate([na, nb, cross]).reshape(-1, 3)
    (lo_a, hi_a), (lo_b, hi_b) = _projections(poly_a.vertices, axes), _projections(poly_b.vertices, axes)
    axes, lo_a, hi_a, lo_b, hi_b = _oriented(axes, lo_a, hi_a, lo_b, hi_b)
    kind = np.concatenate([np.full(len(na), FACE_A), np.full(len(nb), FACE_B), np.full(len(cross), EDGE_EDGE)])
    feature = np.concatenate([np.stack([fa, np.full(len(fa), -1)], 1), np.stack([np.full(len(fb), -1), fb], 1),
                              pair]).reshape(-1, 2).astype(np.int64)
    return AxisTable(axes, kind, feature, lo_a, hi_a, lo_b, hi_b, lo_b - hi_a, np.arange(len(axes)))
