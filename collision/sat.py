"""Separating-axis test between two convex polyhedra, with the minimum-penetration axis.

RTCD 5.2.1 and 4.4 (seed 001): two convex polyhedra are disjoint exactly when
their projections are disjoint on some axis among the face normals of A, the
face normals of B, and the cross products of an edge direction of A with an
edge direction of B. When no axis separates them, the same axes hold the
minimum translation that does (the faces of the Minkowski difference are
among them), so the smallest overlap is the exact penetration depth.

Frame and sign, used everywhere: ``axis`` is a unit vector pointing from A
towards B; ``depth > 0`` is the penetration (translating B by
``depth * axis`` separates the two), ``depth < 0`` means separated by at least
``-depth`` along ``axis``.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ._jit import njit
from .convex import ConvexPolyhedron

__all__ = ["SatResult", "convex_convex_sat", "polyhedron_axes"]

# Directions closer than this (1 - |cos|) are merged into one candidate axis;
# edge cross products shorter than this (sine of the angle) are dropped, as
# parallel edges give no new axis (seed 001).
AXIS_TOL = 1e-12


@dataclass(frozen=True)
class SatResult:
    """Outcome of :func:`convex_convex_sat`.

    Attributes
    ----------
    separated : bool
        True when an axis separates the polyhedra (touching is not separated).
    axis : (3,) float64
        Unit axis from A towards B: the separating axis with the largest gap, or
        the minimum-penetration axis.
    depth : float
        Penetration depth along ``axis`` (> 0), or minus the gap (< 0).
    kind : str
        ``"face_a"``, ``"face_b"`` or ``"edge_edge"``: where the axis came from.
    axes_tested : int
        Number of candidate axes projected.
    """

    separated: bool
    axis: NDArray[np.float64]
    depth: float
    kind: str
    axes_tested: int

    def __bool__(self) -> bool:
        """Truthy when the polyhedra intersect."""
        return not self.separated


def _unique_directions(d):
    """Unit directions with parallel and anti-parallel duplicates removed."""
    n = np.linalg.norm(d, axis=1)
    nz = n > AXIS_TOL * max(1.0, float(n.max(initial=0.0)))
    d = d[nz] / n[nz, None]
    keep = []
    for i in range(len(d)):
        if not keep or np.max(np.abs(d[keep] @ d[i])) < 1.0 - AXIS_TOL:
            keep.append(i)
    return d[keep].reshape(-1, 3)


def polyhedron_axes(poly):
    """Unique face normals and edge directions of a convex polyhedron.

    Returns
    -------
    normals : (f, 3) float64
    edges : (e, 3) float64
    """
    normals = _unique_directions(poly.normals)
    e = poly.vertices[poly.edges[:, 1]] - poly.vertices[poly.edges[:, 0]]
    return normals, _unique_directions(e)


@njit
def _project(verts, ax0, ax1, ax2):
    lo = np.inf
    hi = -np.inf
    for i in range(verts.shape[0]):
        s = verts[i, 0] * ax0 + verts[i, 1] * ax1 + verts[i, 2] * ax2
        lo = min(lo, s)
        hi = max(hi, s)
    return lo, hi


@njit
def sat_kernel(va, vb, na, nb, ea, eb, first_separating):
    """Project both vertex sets on every candidate axis.

    Returns ``(best_axis (3,), best_value, kind, tested)`` where ``best_value``
    is the largest gap (> 0, separated) or the smallest overlap (<= 0 means
    penetration ``-best_value``); kind 0 face A, 1 face B, 2 edge pair.
    """
    best = -np.inf  # signed gap: max over axes of (gap); penetration if <= 0
    best_axis = np.zeros(3)
    kind = -1
    tested = 0
    n_face = na.shape[0] + nb.shape[0]
    total = n_face + ea.shape[0] * eb.shape[0]
    for k in range(total):
        if k < na.shape[0]:
            a0, a1, a2 = na[k, 0], na[k, 1], na[k, 2]
            kk = 0
        elif k < n_face:
            j = k - na.shape[0]
            a0, a1, a2 = nb[j, 0], nb[j, 1], nb[j, 2]
            kk = 1
        else:
            i = (k - n_face) // eb.shape[0]
            j = (k - n_face) % eb.shape[0]
            a0 = ea[i, 1] * eb[j, 2] - ea[i, 2] * eb[j, 1]
            a1 = ea[i, 2] * eb[j, 0] - ea[i, 0] * eb[j, 2]
            a2 = ea[i, 0] * eb[j, 1] - ea[i, 1] * eb[j, 0]
            ln = np.sqrt(a0 * a0 + a1 * a1 + a2 * a2)
            if ln <= 1e-12:
                continue  # parallel edges: no new axis
            a0, a1, a2 = a0 / ln, a1 / ln, a2 / ln
            kk = 2
        tested += 1
        alo, ahi = _project(va, a0, a1, a2)
        blo, bhi = _project(vb, a0, a1, a2)
        # Gap with B ahead of A, and with B behind A; keep the larger (less negative).
        g_fwd = blo - ahi
        g_bwd = alo - bhi
        if g_fwd >= g_bwd:
            g, sgn = g_fwd, 1.0
        else:
            g, sgn = g_bwd, -1.0
        # For separation we want the largest gap; for penetration the smallest
        # overlap, i.e. again the largest (least negative) g: one rule serves both.
        if g > best:
            best = g
            best_axis[0], best_axis[1], best_axis[2] = sgn * a0, sgn * a1, sgn * a2
            kind = kk
            if first_separating and g > 0.0:
                break
    return best_axis, best, kind, tested


def _as_polyhedron(verts, faces, name):
    if isinstance(verts, ConvexPolyhedron):
        return verts
    if faces is None:
        return ConvexPolyhedron.from_points(verts, name=name)
    try:
        return ConvexPolyhedron.from_mesh(verts, faces, name=name)
    except ValueError as exc:  # from_mesh names its argument "faces": say which one
        text = str(exc)
        if text.startswith("faces"):
            raise ValueError(name.replace("verts", "faces") + text[len("faces"):]) from None
        raise


def convex_convex_sat(verts_a: ArrayLike | ConvexPolyhedron, faces_a: Iterable[ArrayLike] | None,
                      verts_b: ArrayLike | ConvexPolyhedron, faces_b: Iterable[ArrayLike] | None,
                      first_separating: bool = False) -> SatResult:
    """Separating axis, or minimum-penetration axis and depth, of two convex polyhedra.

    Parameters
    ----------
    verts_a, verts_b : (n, 3) float64, or ConvexPolyhedron
        Vertices of each polyhedron (world frame).
    faces_a, faces_b : (m, 3) int, list of polygons, or None
        Faces (triangles or polygons as vertex-index lists, counter-clockwise
        seen from outside). ``None`` takes the convex hull of the vertices.
    first_separating : bool
        Stop at the first separating axis instead of searching for the one
        with the largest gap (faster; the depth is then that axis' gap).

    Returns
    -------
    SatResult
        See the module docstring for the frame and sign of ``axis`` and ``depth``.
    """
    pa = _as_polyhedron(verts_a, faces_a, "verts_a")
    pb = _as_polyhedron(verts_b, faces_b, "verts_b")
    na, ea = polyhedron_axes(pa)
    nb, eb = polyhedron_axes(pb)
    axis, gap, kind, tested = sat_kernel(
        pa.vertices, pb.vertices, na, nb,
        np.ascontiguousarray(ea).reshape(-1, 3), np.ascontiguousarray(eb).reshape(-1, 3),
        first_separating,
    )
    return SatResult(
        separated=bool(gap > 0.0),
        axis=axis,
        depth=float(-gap),
        kind=("face_a", "face_b", "edge_edge")[kind],
        axes_tested=int(tested),
    )
