"""Do two posed convex hulls touch? The narrow-phase algorithms side by side.

The library answers the question four ways, and a viewer can compare them pair
by pair. Each function takes two :class:`collision.shapes.Hull` pieces in their
model frames and their 4x4 model-to-world poses, and returns a
:class:`TouchAnswer`: ``touching`` (closed: a contact at zero gap counts) and,
where the algorithm measures it, ``depth`` (> 0 penetration, < 0 minus the
gap, NaN when not measured).

=====================  =====================================================
``"sat"``              the contact manifold of the separating-axis test with
                       face clipping (:func:`collision.manifold.collide_hull_hull`,
                       the world's default): touching when a point is at zero
                       gap or deeper; ``depth`` the SAT minimum.
``"gjk"``              GJK distance, EPA when the hulls overlap
                       (:func:`collision.epa.convex_penetration`; RTCD 9.5):
                       one deepest point and its normal.
``"vector-symbol"``    the vector-symbol method of seed 003
                       (:func:`collision.vector_symbol.vector_symbol_collide`):
                       yes / no from signs alone; touching without
                       interpenetration is *not* a collision by its convention,
                       and its degenerate cases (coplanar faces, faces meeting
                       along an edge) are missed.
``"triangles"``        the exact triangle test through the pieces' OBB trees
                       (:func:`collision.mesh_query.collide`: 17-axis
                       triangle SAT at the leaves, RTCD 4.4 and 5.2.7, plus
                       containment), the reference.
=====================  =====================================================

:func:`hull_triangle_tree` builds (once per hull, kept on it) the OBB tree of
the hull's triangles that the reference walks; :func:`touch_hull_hull_brute`
is the reference's brute-force twin (every triangle pair, then containment by
the face planes), for tests.
"""

import math
from dataclasses import dataclass

import numpy as np

from .epa import convex_penetration
from .manifold import collide_hull_hull
from .mesh_query import collide
from .obb_tree import OBBTree
from .shapes import Hull
from .triangle import test_triangle_triangle_t
from .vector_symbol import StandardModel, vector_symbol_collide

__all__ = ["TouchAnswer", "TOUCH_ALGORITHMS", "touch_hull_hull", "touch_hull_hull_sat", "touch_hull_hull_gjk",
           "touch_hull_hull_vector_symbol", "touch_hull_hull_triangles", "touch_hull_hull_brute",
           "hull_triangle_tree"]


@dataclass(frozen=True)
class TouchAnswer:
    """One algorithm's answer for one hull pair.

    Attributes
    ----------
    touching : bool
        The hulls touch or overlap (by the algorithm's own convention).
    depth : float
        Penetration depth (> 0) or minus the gap (< 0), world units; NaN when
        the algorithm does not measure it (vector symbol, triangles).
    """

    touching: bool
    depth: float = math.nan


def _hull(h, name):
    if not isinstance(h, Hull):
        raise ValueError(f"{name}: expected a collision.shapes.Hull, got {type(h).__name__}")
    return h


def touch_hull_hull_sat(hull_a, pose_a, hull_b, pose_b):
    """SAT manifold (:func:`collision.manifold.collide_hull_hull`, margin 0): touching when its
    deepest point is at zero gap or deeper, as the world counts a touching pair.

    ``depth`` is the manifold's SAT minimum: the penetration depth when the hulls
    overlap, minus a lower bound of the gap when they are apart."""
    _hull(hull_a, "hull_a")
    _hull(hull_b, "hull_b")
    m = collide_hull_hull(hull_a.poly, pose_a, hull_b.poly, pose_b, margin=0.0)
    touching = bool(len(m.depths)) and float(m.depths.max()) >= 0.0
    return TouchAnswer(touching, float(m.sat_depth))


def touch_hull_hull_gjk(hull_a, pose_a, hull_b, pose_b):
    """GJK / EPA (:func:`collision.epa.convex_penetration`): touching when the signed depth is
    >= 0 (the hulls' distance is zero)."""
    _hull(hull_a, "hull_a")
    _hull(hull_b, "hull_b")
    res = convex_penetration(hull_a.core, pose_a, hull_b.core, pose_b)
    return TouchAnswer(bool(res.depth >= 0.0), float(res.depth))


def _standard_model(h):
    model = getattr(h, "_standard_model", None)
    if model is None:
        model = StandardModel.from_polyhedron(h.poly)
        object.__setattr__(h, "_standard_model", model)
    return model


def touch_hull_hull_vector_symbol(hull_a, pose_a, hull_b, pose_b):
    """The vector-symbol method of seed 003: the model collision factor ``C != 0`` of the two
    posed hulls' standard models (built once per hull, kept on it). No depth."""
    _hull(hull_a, "hull_a")
    _hull(hull_b, "hull_b")
    ma = _standard_model(hull_a).transformed(pose_a)
    mb = _standard_model(hull_b).transformed(pose_b)
    return TouchAnswer(bool(vector_symbol_collide(ma, mb, stop_at_first=True)))


def hull_triangle_tree(hull):
    """The OBB tree over ``hull``'s triangles (model frame), built on first use and kept on the hull.

    Parameters
    ----------
    hull : Hull

    Returns
    -------
    OBBTree
        Closed (a hull's triangles are a closed surface), so the reference also
        finds one hull inside the other.
    """
    _hull(hull, "hull")
    tree = getattr(hull, "_triangle_tree", None)
    if tree is None:
        tree = OBBTree(hull.poly.vertices, hull.poly.triangles)
        object.__setattr__(hull, "_triangle_tree", tree)
    return tree


def touch_hull_hull_triangles(hull_a, pose_a, hull_b, pose_b):
    """The reference: the exact triangle test through the hulls' OBB trees
    (:func:`collision.mesh_query.collide`, first contact, with containment). No depth."""
    _hull(hull_a, "hull_a")
    _hull(hull_b, "hull_b")
    r = collide(hull_triangle_tree(hull_a), pose_a, hull_triangle_tree(hull_b), pose_b, first_contact=True)
    return TouchAnswer(bool(r.hit))


def _world(points, pose):
    return points @ pose[:3, :3].T + pose[:3, 3]


def touch_hull_hull_brute(hull_a, pose_a, hull_b, pose_b):
    """Brute-force twin of :func:`touch_hull_hull_triangles`: every triangle of A against every
    triangle of B (:func:`collision.triangle.test_triangle_triangle_t`), then, when no surfaces
    meet, whether a vertex of one lies inside the other (all its face planes, closed). No tree."""
    _hull(hull_a, "hull_a")
    _hull(hull_b, "hull_b")
    ta = _world(hull_a.poly.vertices, pose_a)[hull_a.poly.triangles]
    tb = _world(hull_b.poly.vertices, pose_b)[hull_b.poly.triangles]
    for x in ta:
        p = tuple(map(tuple, x))
        for y in tb:
            if test_triangle_triangle_t(*p, *map(tuple, y)):
                return TouchAnswer(True)
    for inner, pin, outer, pout in ((hull_b, pose_b, hull_a, pose_a), (hull_a, pose_a, hull_b, pose_b)):
        n = outer.poly.normals @ pout[:3, :3].T
        off = outer.poly.offsets + n @ pout[:3, 3]
        v = _world(inner.poly.vertices, pin)[0]
        if np.all(n @ v <= off):
            return TouchAnswer(True)
    return TouchAnswer(False)


TOUCH_ALGORITHMS = {
    "sat": touch_hull_hull_sat,
    "gjk": touch_hull_hull_gjk,
    "vector-symbol": touch_hull_hull_vector_symbol,
    "triangles": touch_hull_hull_triangles,
}


def touch_hull_hull(algorithm, hull_a, pose_a, hull_b, pose_b):
    """The answer of ``algorithm`` (a key of :data:`TOUCH_ALGORITHMS`) for two posed hulls.

    Raises
    ------
    ValueError
        For an unknown algorithm name, or a shape that is not a Hull.
    """
    fn = TOUCH_ALGORITHMS.get(algorithm)
    if fn is None:
        raise ValueError(f"algorithm: expected one of {', '.join(TOUCH_ALGORITHMS)}, got {algorithm!r}")
    return fn(hull_a, pose_a, hull_b, pose_b)
