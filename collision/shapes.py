"""Convex shapes of the narrow phase, each in its own local frame.

Every convex shape is described to the distance algorithms the same way: a
*core* point set and a *radius* (the shape is the Minkowski sum of the convex
hull of the core with a ball of that radius). A sphere is one point and its
radius, a capsule the two ends of its segment and its radius, a hull or a box
its vertices and radius 0. GJK (:mod:`collision.gjk`) works on the cores and
adds the radii afterwards (RTCD 9.5, "GJK for spheres and capsules"), so one
support function serves them all.

:class:`HalfSpace` (the solid side of a plane, for grounds) and
:class:`TriMesh` (a triangle mesh through its OBB tree, for static concave
bodies: a bowl, a room) are the shapes that are not convex; they never move.

Frames and poses: a shape lives in its body's model frame; the narrow phase
takes a 4x4 model-to-world pose for each.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ._validate import MAX_COORD, as_array, as_number
from .convex import ConvexPolyhedron
from .obb import OBB
from .obb_tree import OBBTree

__all__ = ["Sphere", "Capsule", "Hull", "HalfSpace", "TriMesh", "box_hull", "shape_world_aabb", "local_box"]


@dataclass(frozen=True, eq=False)
class Sphere:
    """A ball of ``radius`` about ``center`` (model frame).

    Attributes
    ----------
    radius : float
    center : (3,) float64
    """

    radius: float
    center: NDArray[np.float64] = field(default_factory=lambda: np.zeros(3))

    def __post_init__(self):
        _check_radius(self.radius)
        object.__setattr__(self, "center", as_array(self.center, "center", (3,)).copy())
        object.__setattr__(self, "core", self.center[None].copy())


@dataclass(frozen=True, eq=False)
class Capsule:
    """The points within ``radius`` of the segment from ``-half_height`` to
    ``+half_height`` along the model y axis (the scene files' capsule axis).

    Attributes
    ----------
    radius : float
    half_height : float
        Half the length of the inner segment (not counting the caps).
    """

    radius: float
    half_height: float

    def __post_init__(self):
        _check_radius(self.radius)
        h = as_number(self.half_height, "half_height", low=0.0, high=MAX_COORD)
        object.__setattr__(self, "core", np.array([[0.0, -h, 0.0], [0.0, h, 0.0]]))


@dataclass(frozen=True, eq=False)
class Hull:
    """A convex polyhedron (radius 0).

    Attributes
    ----------
    poly : ConvexPolyhedron
        Model frame.
    """

    poly: ConvexPolyhedron
    radius: float = 0.0

    def __post_init__(self):
        if not isinstance(self.poly, ConvexPolyhedron):
            raise ValueError(f"poly must be a ConvexPolyhedron, got {type(self.poly).__name__}")
        object.__setattr__(self, "core", np.ascontiguousarray(self.poly.vertices, dtype=np.float64))

    @classmethod
    def from_points(cls, points: ArrayLike) -> Hull:
        """The convex hull of ``points`` (n, 3) float64."""
        return cls(ConvexPolyhedron.from_points(points))


@dataclass(frozen=True, eq=False)
class HalfSpace:
    """The solid ``normal . x <= offset`` (model frame): the ground under a plane.

    Attributes
    ----------
    normal : (3,) float64
        Unit outward normal (pointing out of the solid).
    offset : float
    """

    normal: NDArray[np.float64]
    offset: float = 0.0

    def __post_init__(self):
        n = as_array(self.normal, "normal", (3,))
        length = float(np.linalg.norm(n))
        if not length > 0:
            raise ValueError("normal must be a non-zero vector")
        off = as_number(self.offset, "offset", low=-MAX_COORD, high=MAX_COORD)
        object.__setattr__(self, "normal", n / length)
        object.__setattr__(self, "offset", off / length)


@dataclass(frozen=True, eq=False)
class TriMesh:
    """A triangle mesh, as a surface (no inside), through its OBB tree.

    Attributes
    ----------
    tree : OBBTree
        Model frame.
    """

    tree: OBBTree

    def __post_init__(self):
        if not isinstance(self.tree, OBBTree):
            raise ValueError(f"tree must be an OBBTree, got {type(self.tree).__name__}")


def local_box(shape):
    """A model-frame box around a convex shape: ``(center (3,), axes (3, 3) rows, half (3,))``.

    A hull's is its vertex-covariance OBB (fitted once and kept on the
    shape); round shapes get their axis-aligned box, radius included.
    """
    box = getattr(shape, "_local_box", None)
    if box is None:
        if isinstance(shape, Hull):
            obb = OBB.from_points(shape.core)
            box = (obb.center, obb.axes, obb.half_extents)
        else:
            lo, hi = shape.core.min(0) - shape.radius, shape.core.max(0) + shape.radius
            box = ((lo + hi) / 2, np.eye(3), (hi - lo) / 2)
        object.__setattr__(shape, "_local_box", box)
    return box


def box_hull(half_extents: ArrayLike) -> Hull:
    """A :class:`Hull` for the box ``[-h, h]`` on each axis; ``half_extents`` (3,) > 0."""
    h = as_array(half_extents, "half_extents", (3,))
    if not np.all(h > 0):
        raise ValueError(f"half_extents must be > 0, got {h}")
    corners = np.array([[sx, sy, sz] for sx in (-1, 1) for sy in (-1, 1) for sz in (-1, 1)], float)
    return Hull.from_points(corners * h)


def shape_world_aabb(shape, pose):
    """(2, 3) world AABB of a convex shape under a 4x4 ``pose`` (tight for hulls,
    spheres and capsules; infinite along the half-space's tangent directions)."""
    r, t = pose[:3, :3], pose[:3, 3]
    if isinstance(shape, TriMesh):  # the AABB of the tree's root box
        tree = shape.tree
        rot = r @ tree.axes[0].T
        c = r @ tree.centers[0] + t
        h = np.abs(rot) @ tree.half_extents[0]
        return np.stack([c - h, c + h])
    if isinstance(shape, HalfSpace):
        n = r @ shape.normal
        lo = np.full(3, -np.inf)
        hi = np.full(3, np.inf)
        c = n * (shape.offset + n @ t)  # a point on the plane, world
        for k in range(3):  # an axis-aligned normal bounds its own axis
            if abs(abs(n[k]) - 1.0) < 1e-12:
                if n[k] > 0:
                    hi[k] = c[k]
                else:
                    lo[k] = c[k]
        return np.stack([lo, hi])
    w = shape.core @ r.T + t
    rad = shape.radius
    return np.stack([w.min(0) - rad, w.max(0) + rad])


def _check_radius(r):
    return as_number(r, "radius", low=0.0, low_open=True, high=MAX_COORD)
