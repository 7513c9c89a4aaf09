"""The narrow phase: a contact manifold for any pair of convex shapes.

One entry point, :func:`collide_shapes`, looks the pair up in a table keyed by
the two shape types (Box2D's ``s_registers``, parry's query dispatcher). Each
pair function is written once, for one order of its types; the reversed order
is answered by swapping the shapes and flipping the manifold
(:func:`flip_manifold`). A pair with no function gets an explicit
:class:`UnsupportedPair` error.

Convention, as everywhere in the library (:mod:`collision.sat`,
:mod:`collision.manifold`): the manifold's ``normal`` is a world unit vector
from A towards B; ``depths > 0`` is penetration along it, ``depths < 0`` a gap
(speculative contacts, kept while the gap is at most ``margin``);
``points_a - points_b ~ depths * normal``.

Pair functions and where they come from:

========================  ==================================================
sphere - sphere           centres and radii (RTCD 4.3.1)
sphere - capsule          closest point on the segment (RTCD 5.1.2)
capsule - capsule         closest points of the segments (RTCD 5.1.9); two
                          points where the segments lie side by side
sphere / capsule - hull   GJK on the cores, EPA when the cores overlap
                          (:mod:`collision.gjk`, :mod:`collision.epa`); a
                          capsule lying on a face is clipped to it (2 points)
hull - hull               SAT with face clipping (:mod:`collision.manifold`)
half-space - convex       deepest core points under the plane
========================  ==================================================

:func:`test_hull_hull_vector_symbol` answers yes / no for two hulls by the
vector-symbol method of seed 003 instead, as an alternative to the SAT.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from .closest_pair import closest_pt_segment_segment_t
from .closest_point import closest_pt_point_segment_t
from .contact_reduce import reduce_contacts
from .epa import convex_penetration
from .manifold import Manifold, SatCache, collide_hull_hull
from ._validate import MAX_COORD, as_number, check_type
from .shapes import Capsule, HalfSpace, Hull, Sphere, TriMesh
from .transform import checked_pose

__all__ = ["collide_shapes", "flip_manifold", "empty_manifold", "PairCache", "UnsupportedPair",
           "collide_sphere_sphere", "collide_sphere_capsule", "collide_capsule_capsule",
           "collide_sphere_hull", "collide_capsule_hull", "collide_halfspace_sphere",
           "collide_halfspace_capsule", "collide_halfspace_hull", "test_hull_hull_vector_symbol", "PAIR_FUNCTIONS",
           "collide_hull_hull_gjk"]

# A capsule's segment is taken as lying on a hull face (two contact points)
# when the sine of its angle to the face is below this.
PARALLEL_SIN = 0.05

# Feature ids of the analytic pairs: a small number per point (the end of a
# segment, the vertex of a hull); the hull-hull ids are packed by
# :mod:`collision.manifold`.


class UnsupportedPair(TypeError):
    """The narrow phase has no function for this pair of shape types."""


@dataclass
class PairCache:
    """What one shape pair keeps from the previous step (frame-to-frame coherence).

    Attributes
    ----------
    simplex : (k, 2) int32 or None
        GJK's last simplex (support indices into A's and B's cores).
    sat : collision.manifold.SatCache or None
        The hull-hull SAT feature of :func:`collision.manifold.collide_hull_hull`.
    """

    simplex: NDArray[np.int32] | None = None
    sat: SatCache | None = None


def empty_manifold(tests=0, sat_depth=-np.inf):
    """A manifold with no points."""
    z = np.zeros((0, 3))
    return Manifold(np.zeros(3), z, z.copy(), np.zeros(0), np.zeros(0, np.int64), "none", tests, sat_depth)


def flip_manifold(m):
    """The same contact seen from the other shape: B's manifold against A."""
    kind = {"face_a": "face_b", "face_b": "face_a"}.get(m.kind, m.kind)
    return Manifold(-m.normal, m.points_b, m.points_a, m.depths, m.ids, kind, m.tests, m.sat_depth)


def _manifold(normal, points_a, points_b, depths, ids, kind, margin, tests=0):
    """Keep the points whose gap is at most ``margin``, deepest first; empty if none."""
    keep = depths >= -margin
    if not np.any(keep):
        return empty_manifold(tests, float(depths.max(initial=-np.inf)))
    order = np.flatnonzero(keep)[np.argsort(-depths[keep], kind="stable")]
    return Manifold(normal, points_a[order], points_b[order], depths[order],
                    np.asarray(ids, np.int64)[order], kind, tests, float(depths[order[0]]))


def _unit(d, fallback):
    n = float(np.linalg.norm(d))
    if n > 1e-300:
        return d / n, n
    return fallback, 0.0


_UP = np.array([0.0, 1.0, 0.0])


def _world(points, pose):
    return points @ pose[:3, :3].T + pose[:3, 3]


def _point_pair(ca, ra, cb, rb, fallback=_UP):
    """Normal, depth and surface points of two balls (centres ``ca``, ``cb``)."""
    n, dist = _unit(cb - ca, fallback)
    return n, ra + rb - dist, ca + ra * n, cb - rb * n


# -- sphere and capsule pairs --------------------------------------------------------


def collide_sphere_sphere(a, pose_a, b, pose_b, margin=0.0, cache=None):
    """Sphere-sphere (RTCD 4.3.1). Concentric spheres get the normal +y."""
    ca = _world(a.core, pose_a)[0]
    cb = _world(b.core, pose_b)[0]
    n, depth, pa, pb = _point_pair(ca, a.radius, cb, b.radius)
    return _manifold(n, pa[None], pb[None], np.array([depth]), [0], "face_a", margin)


def _closest_on_segment(p, s0, s1):
    """Closest point of segment ``s0 s1`` to ``p`` (RTCD 5.1.2, :mod:`collision.closest_point`)."""
    return np.array(closest_pt_point_segment_t(tuple(p), tuple(s0), tuple(s1))[0])


def collide_sphere_capsule(a, pose_a, b, pose_b, margin=0.0, cache=None):
    """Sphere-capsule: the sphere against the closest point of the capsule's segment (RTCD 5.1.2)."""
    ca = _world(a.core, pose_a)[0]
    s = _world(b.core, pose_b)
    q = _closest_on_segment(ca, s[0], s[1])
    n, depth, pa, pb = _point_pair(ca, a.radius, q, b.radius)
    return _manifold(n, pa[None], pb[None], np.array([depth]), [0], "face_a", margin)


def _segment_segment(p1, q1, p2, q2):
    """Closest points of two segments (RTCD 5.1.9, :mod:`collision.closest_pair`)."""
    c1, c2, _, _ = closest_pt_segment_segment_t(tuple(p1), tuple(q1), tuple(p2), tuple(q2))
    return np.array(c1), np.array(c2)


def collide_capsule_capsule(a, pose_a, b, pose_b, margin=0.0, cache=None):
    """Capsule-capsule: closest points of the two segments (RTCD 5.1.9).

    Segments lying side by side (sine of their angle below ``PARALLEL_SIN``)
    get two points, at the ends of the stretch where they overlap, so a
    capsule resting on another along its length does not rock on one point.
    """
    sa = _world(a.core, pose_a)
    sb = _world(b.core, pose_b)
    qa, qb = _segment_segment(sa[0], sa[1], sb[0], sb[1])
    n, depth, pa, pb = _point_pair(qa, a.radius, qb, b.radius)
    da, la = _unit(sa[1] - sa[0], _UP)
    db, lb = _unit(sb[1] - sb[0], _UP)
    if la > 0 and lb > 0 and np.linalg.norm(np.cross(da, db)) < PARALLEL_SIN:
        # the overlap of B's projection on A's segment, in A's parameter
        tb = sorted(((sb - sa[0]) @ da).tolist())
        lo, hi = max(0.0, tb[0]), min(la, tb[1])
        if hi - lo > 1e-9 * la:
            ends_a = sa[0] + np.outer([lo, hi], da)
            ends_b = np.array([_closest_on_segment(p, sb[0], sb[1]) for p in ends_a])
            depths = a.radius + b.radius - (ends_b - ends_a) @ n
            return _manifold(n, ends_a + a.radius * n, ends_b - b.radius * n, depths, [1, 2], "face_a", margin)
    return _manifold(n, pa[None], pb[None], np.array([depth]), [0], "face_a", margin)


# -- round shapes against hulls: GJK / EPA -------------------------------------------------


def _penetration(a, pose_a, b, pose_b, cache):
    simplex = cache.simplex if cache is not None else None
    res = convex_penetration(a.core, pose_a, b.core, pose_b, a.radius, b.radius, simplex=simplex)
    if cache is not None:
        cache.simplex = getattr(res, "simplex", None)
    return res


def collide_sphere_hull(a, pose_a, b, pose_b, margin=0.0, cache=None):
    """Sphere-hull: GJK distance of the centre to the hull, EPA when the centre is inside."""
    res = _penetration(a, pose_a, b, pose_b, cache)
    return _manifold(res.normal, res.point_a[None], res.point_b[None], np.array([res.depth]), [0],
                     "face_b", margin)


def collide_capsule_hull(a, pose_a, b, pose_b, margin=0.0, cache=None):
    """Capsule-hull: GJK / EPA for the normal and the deepest point; when the
    segment lies along the hull face that the normal points into (sine below
    ``PARALLEL_SIN``), the segment is clipped to that face's side planes and
    both clipped ends become contacts (Box2D does the same for capsules on
    polygons), so a capsule lying on a box does not rock."""
    res = _penetration(a, pose_a, b, pose_b, cache)
    n = res.normal
    single = _manifold(n, res.point_a[None], res.point_b[None], np.array([res.depth]), [0], "face_b", margin)
    seg = _world(a.core, pose_a)
    d, length = _unit(seg[1] - seg[0], _UP)
    if length == 0.0:
        return single
    poly = b.poly
    rb = pose_b[:3, :3]
    normals = poly.normals @ rb.T
    f = int(np.argmin(normals @ n))  # B's face most against the normal
    nf = normals[f]
    if abs(float(d @ nf)) > PARALLEL_SIN or float(nf @ n) > -0.9:
        return single
    # clip the segment against the side planes of face f (RTCD 8.3.4, one segment)
    loop = _world(poly.vertices[poly.polygons[f]], pose_b)
    t0, t1 = 0.0, 1.0
    seg_d = seg[1] - seg[0]
    for k in range(len(loop)):
        e0, e1 = loop[k], loop[(k + 1) % len(loop)]
        side = np.cross(e1 - e0, nf)  # outward side-plane normal of a CCW face
        s0 = float((seg[0] - e0) @ side)
        ds = float(seg_d @ side)
        if ds == 0.0:
            if s0 > 0.0:
                return single
            continue
        th = -s0 / ds
        if ds > 0.0:
            t1 = min(t1, th)
        else:
            t0 = max(t0, th)
        if t0 > t1:
            return single
    ends = seg[0] + np.outer([t0, t1], seg_d)
    plane = float(nf @ loop[0])
    height = ends @ nf - plane  # above B's face
    depths = a.radius - height
    points_a = ends + a.radius * n
    points_b = ends - height[:, None] * nf
    return _manifold(n, points_a, points_b, depths, [1, 2], "face_b", margin)


# -- half-space --------------------------------------------------------------------------


def _halfspace_world(h, pose):
    n = pose[:3, :3] @ h.normal
    return n, h.offset + float(n @ pose[:3, 3])


def _halfspace_core(h, pose_h, shape, pose_s, margin, kind):
    n, off = _halfspace_world(h, pose_h)
    core = _world(shape.core, pose_s)
    depths = off - core @ n + shape.radius
    points_b = core - shape.radius * n
    points_a = points_b + depths[:, None] * n
    m = _manifold(n, points_a, points_b, depths, np.arange(len(core)), kind, margin)
    if len(m.depths) > 4:
        keep = reduce_contacts(m.points_b, m.depths, n)
        m = Manifold(n, m.points_a[keep], m.points_b[keep], m.depths[keep], m.ids[keep], kind, 0, m.sat_depth)
    return m


def collide_halfspace_sphere(a, pose_a, b, pose_b, margin=0.0, cache=None):
    """Half-space-sphere: the centre's height above the plane (RTCD 5.2.2)."""
    return _halfspace_core(a, pose_a, b, pose_b, margin, "face_a")


def collide_halfspace_capsule(a, pose_a, b, pose_b, margin=0.0, cache=None):
    """Half-space-capsule: each end of the segment against the plane (up to 2 points)."""
    return _halfspace_core(a, pose_a, b, pose_b, margin, "face_a")


def collide_halfspace_hull(a, pose_a, b, pose_b, margin=0.0, cache=None):
    """Half-space-hull: the hull's vertices under the plane (plus margin), reduced to at most 4."""
    return _halfspace_core(a, pose_a, b, pose_b, margin, "face_a")


def _collide_hull_hull(a, pose_a, b, pose_b, margin=0.0, cache=None):
    """Hull-hull: :func:`collision.manifold.collide_hull_hull`, its SAT feature kept in the pair cache."""
    sat = None
    if cache is not None:
        if cache.sat is None:
            cache.sat = SatCache()
        sat = cache.sat
    return collide_hull_hull(a.poly, pose_a, b.poly, pose_b, margin=margin, cache=sat)


def test_hull_hull_vector_symbol(a, pose_a, b, pose_b):
    """Do two posed hulls interpenetrate? The vector-symbol method of seed 003 (Zhang, Ma, Yu),
    the alternative yes/no test to the SAT of :func:`collide_shapes` (no manifold).

    By the paper's convention touching is not colliding, and the degenerate contacts its
    docstring lists (:mod:`collision.vector_symbol`) are missed; in general position it agrees
    with the SAT depth being positive (``tests/collision/test_narrow_phase.py``).
    """
    from .vector_symbol import StandardModel, vector_symbol_collide

    def model(h, pose):
        return StandardModel.from_points(h.poly.vertices @ pose[:3, :3].T + pose[:3, 3])

    return bool(vector_symbol_collide(model(a, pose_a), model(b, pose_b), stop_at_first=True))


def collide_hull_hull_gjk(a, pose_a, b, pose_b, margin=0.0, cache=None):
    """Hull-hull by GJK / EPA instead of the SAT (RTCD 9.5; :func:`collision.epa.convex_penetration`):
    a one-point manifold, the deepest point of A in B and the normal (A to B), or the closest
    points when apart (kept while the gap is at most ``margin``); ``cache`` as for the round
    shapes' pairs (:class:`PairCache`). Not in :data:`PAIR_FUNCTIONS`: the SAT's clipped patch of up
    to four points is what holds a resting box still; this is the alternative a viewer can choose."""
    res = _penetration(a, pose_a, b, pose_b, cache)
    return _manifold(res.normal, res.point_a[None], res.point_b[None], np.array([res.depth]), [0], "gjk", margin)


PAIR_FUNCTIONS = {
    (Sphere, Sphere): collide_sphere_sphere,
    (Sphere, Capsule): collide_sphere_capsule,
    (Capsule, Capsule): collide_capsule_capsule,
    (Sphere, Hull): collide_sphere_hull,
    (Capsule, Hull): collide_capsule_hull,
    (Hull, Hull): _collide_hull_hull,
    (HalfSpace, Sphere): collide_halfspace_sphere,
    (HalfSpace, Capsule): collide_halfspace_capsule,
    (HalfSpace, Hull): collide_halfspace_hull,
}


def collide_shapes(shape_a: Sphere | Capsule | Hull | HalfSpace, pose_a: NDArray[np.float64],
                   shape_b: Sphere | Capsule | Hull | HalfSpace, pose_b: NDArray[np.float64],
                   margin: float = 0.0, cache: PairCache | None = None) -> Manifold:
    """The contact manifold of two shapes.

    Parameters
    ----------
    shape_a, shape_b : Sphere, Capsule, Hull or HalfSpace
        In their model frames.
    pose_a, pose_b : (4, 4) float64
        Model-to-world transforms.
    margin : float
        Keep speculative contacts whose gap is at most this (>= 0).
    cache : PairCache or None
        Kept by the caller between steps for this pair (same order of shapes).

    Returns
    -------
    Manifold
        Normal from A to B, at most 4 points; empty when the gap exceeds
        ``margin``.

    Raises
    ------
    UnsupportedPair
        For two half-spaces, or a type the table does not know.
    """
    check_type(shape_a, "shape_a", Sphere, Capsule, Hull, HalfSpace, TriMesh)
    check_type(shape_b, "shape_b", Sphere, Capsule, Hull, HalfSpace, TriMesh)
    pose_a = checked_pose(pose_a, "pose_a")
    pose_b = checked_pose(pose_b, "pose_b")
    margin = as_number(margin, "margin", low=0.0, high=MAX_COORD)
    fn = PAIR_FUNCTIONS.get((type(shape_a), type(shape_b)))
    if fn is not None:
        return fn(shape_a, pose_a, shape_b, pose_b, margin, cache)
    fn = PAIR_FUNCTIONS.get((type(shape_b), type(shape_a)))
    if fn is not None:
        return flip_manifold(fn(shape_b, pose_b, shape_a, pose_a, margin, cache))
    raise UnsupportedPair(f"no narrow-phase function for {type(shape_a).__name__} - {type(shape_b).__name__}")
