"""The narrow-phase dispatch (collision/narrow_phase.py) against analytic answers.

Round shapes are checked against closed-form distances (centres, segments by
dense sampling), hull pairs against the brute-force closest point on a convex
polyhedron, half-space contacts against the heights of the vertices. Every
pair is also checked in both orders: B against A is A against B flipped.
Tolerances: 1e-9 absolute on unit-sized shapes unless stated.
"""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import obbcollide as co
from obbcollide.narrow_phase import (PairCache, UnsupportedPair, collide_shapes, flip_manifold)
from obbcollide.shapes import Capsule, HalfSpace, Hull, Sphere, box_hull, shape_world_aabb

from .._reference import random_rotation

TOL = 1e-9


def pose(rot=None, t=(0, 0, 0)):
    p = np.eye(4)
    if rot is not None:
        p[:3, :3] = rot
    p[:3, 3] = t
    return p


def rot_about(axis, angle):
    axis = np.asarray(axis, float) / np.linalg.norm(axis)
    k = np.array([[0, -axis[2], axis[1]], [axis[2], 0, -axis[0]], [-axis[1], axis[0], 0]])
    return np.eye(3) + math.sin(angle) * k + (1 - math.cos(angle)) * (k @ k)


def check_convention(m):
    """normal unit; points_a - points_b = depth * normal along the normal."""
    if len(m.depths) == 0:
        return
    np.testing.assert_allclose(np.linalg.norm(m.normal), 1.0, atol=1e-12)
    along = (m.points_a - m.points_b) @ m.normal
    np.testing.assert_allclose(along, m.depths, atol=1e-7)
    assert len(m.depths) <= 4
    assert len(set(m.ids.tolist())) == len(m.ids)


def check_both_orders(a, pa, b, pb, margin=0.0):
    m = collide_shapes(a, pa, b, pb, margin)
    r = collide_shapes(b, pb, a, pa, margin)
    check_convention(m)
    check_convention(r)
    f = flip_manifold(r)
    assert len(m.depths) == len(f.depths)
    if len(m.depths):
        np.testing.assert_allclose(np.sort(m.depths), np.sort(f.depths), atol=1e-7)
        np.testing.assert_allclose(m.normal, f.normal, atol=1e-6)
    return m


# -- spheres and capsules ------------------------------------------------------------


@settings(max_examples=200, deadline=None)
@given(st.lists(st.floats(-2, 2), min_size=6, max_size=6), st.floats(0.05, 1.5), st.floats(0.05, 1.5))
def test_sphere_sphere_analytic(c, ra, rb):
    ca, cb = np.array(c[:3]), np.array(c[3:])
    d = np.linalg.norm(cb - ca)
    if d > 1e-9:
        m = check_both_orders(Sphere(ra), pose(t=ca), Sphere(rb), pose(t=cb))
    else:  # concentric: any normal is right (see test_concentric_spheres_get_a_normal)
        m = collide_shapes(Sphere(ra), pose(t=ca), Sphere(rb), pose(t=cb))
    if ra + rb - d < 0:
        assert len(m.depths) == 0
        return
    assert len(m.depths) == 1
    assert m.depths[0] == pytest.approx(ra + rb - d, abs=TOL)
    if d > 1e-9:
        np.testing.assert_allclose(m.normal, (cb - ca) / d, atol=1e-9)
        np.testing.assert_allclose(np.linalg.norm(m.points_a[0] - ca), ra, atol=TOL)
        np.testing.assert_allclose(np.linalg.norm(m.points_b[0] - cb), rb, atol=TOL)


def test_concentric_spheres_get_a_normal():
    m = collide_shapes(Sphere(1.0), pose(), Sphere(0.5), pose())
    assert m.depths[0] == pytest.approx(1.5)
    np.testing.assert_allclose(m.normal, [0, 1, 0])


def segment_distance(p1, q1, p2, q2, n=801):
    """Dense reference: min over a grid of s and golden-section in t is overkill; a fine grid of
    s with the exact closest point of the other segment for each s."""
    s = np.linspace(0, 1, n)[:, None]
    pts = p1 + s * (q1 - p1)
    d = q2 - p2
    t = np.clip(((pts - p2) @ d) / max(d @ d, 1e-300), 0, 1)[:, None]
    return np.min(np.linalg.norm(pts - (p2 + t * d), axis=1))


@pytest.mark.parametrize("seed", range(40))
def test_capsule_capsule_depth_matches_segment_distance(seed):
    rng = np.random.default_rng(seed)
    a, b = Capsule(rng.uniform(0.1, 0.4), rng.uniform(0.1, 0.8)), Capsule(rng.uniform(0.1, 0.4), rng.uniform(0, 0.8))
    pa = pose(random_rotation(rng), rng.uniform(-0.5, 0.5, 3))
    pb = pose(random_rotation(rng), rng.uniform(-0.5, 0.5, 3))
    sa = a.core @ pa[:3, :3].T + pa[:3, 3]
    sb = b.core @ pb[:3, :3].T + pb[:3, 3]
    dist = co.closest_pt_segment_segment(sa[0], sa[1], sb[0], sb[1])
    ref = np.linalg.norm(dist[0] - dist[1])
    assert ref <= segment_distance(sa[0], sa[1], sb[0], sb[1]) + 1e-9
    m = check_both_orders(a, pa, b, pb, margin=10.0)
    assert m.depths.max() == pytest.approx(a.radius + b.radius - ref, abs=1e-7)


def test_parallel_capsules_side_by_side_touch_along_their_overlap():
    a, b = Capsule(0.2, 1.0), Capsule(0.3, 0.5)
    r = rot_about((0, 0, 1), math.pi / 2)  # segments along x
    m = check_both_orders(a, pose(r, (0, 0, 0)), b, pose(r, (0.7, 0.45, 0)))
    assert len(m.depths) == 2
    np.testing.assert_allclose(m.depths, 0.05, atol=TOL)
    np.testing.assert_allclose(m.normal, [0, 1, 0], atol=TOL)
    np.testing.assert_allclose(np.sort(m.points_a[:, 0]), [0.2, 1.0], atol=TOL)  # overlap of [-1,1] and [0.2,1.2]


def test_sphere_on_capsule():
    m = check_both_orders(Sphere(0.5), pose(t=(0, 2.0, 0.6)), Capsule(0.25, 1.0), pose())
    # the closest point of the segment to (0, 2, 0.6) is (0, 1, 0): distance sqrt(1 + 0.36)
    assert len(m.depths) == 0
    m = check_both_orders(Sphere(0.5), pose(t=(0, 0.3, 0.6)), Capsule(0.25, 1.0), pose())
    assert m.depths[0] == pytest.approx(0.75 - 0.6, abs=TOL)
    np.testing.assert_allclose(m.normal, [0, 0, -1], atol=TOL)


# -- half-spaces ----------------------------------------------------------------------


@pytest.mark.parametrize("seed", range(20))
def test_sphere_resting_on_a_tilted_plane(seed):
    rng = np.random.default_rng(seed)
    rot = random_rotation(rng)
    ground = pose(rot, rng.uniform(-1, 1, 3))
    n = rot @ np.array([0, 1, 0.0])
    r, h = rng.uniform(0.1, 1.0), rng.uniform(-0.5, 1.2)
    centre = ground[:3, 3] + rng.normal(size=3) * 0  # above the plane's origin ...
    centre = centre + h * n + np.cross(n, rng.normal(size=3))  # ... anywhere along it (infinite ground)
    m = check_both_orders(HalfSpace((0, 1, 0)), ground, Sphere(r), pose(t=centre))
    if r - h < 0:
        assert len(m.depths) == 0
        return
    assert m.depths[0] == pytest.approx(r - h, abs=TOL)
    np.testing.assert_allclose(m.normal, n, atol=1e-12)
    np.testing.assert_allclose(m.points_b[0], centre - r * n, atol=TOL)


def test_capsule_lying_and_standing_on_the_ground():
    ground = HalfSpace((0, 1, 0), 0.0)
    lying = pose(rot_about((0, 0, 1), math.pi / 2), (0, 0.24, 0))
    m = check_both_orders(ground, pose(), Capsule(0.25, 0.5), lying)
    assert len(m.depths) == 2
    np.testing.assert_allclose(m.depths, 0.01, atol=TOL)
    standing = pose(None, (0, 0.74, 0))
    m = collide_shapes(ground, pose(), Capsule(0.25, 0.5), standing)
    assert len(m.depths) == 1
    assert m.depths[0] == pytest.approx(0.01, abs=TOL)


def test_box_resting_on_the_ground_has_four_points():
    ground = HalfSpace((0, 1, 0), 0.0)
    box = box_hull((0.5, 0.25, 0.3))
    for yaw in np.linspace(0, math.pi, 7):
        m = check_both_orders(ground, pose(), box, pose(rot_about((0, 1, 0), yaw), (3.0, 0.25 - 0.02, -1.0)))
        assert len(m.depths) == 4
        np.testing.assert_allclose(m.depths, 0.02, atol=TOL)
        np.testing.assert_allclose(m.points_a[:, 1], 0.0, atol=TOL)  # on the plane


def test_sunken_hull_keeps_four_spread_deepest_points():
    ground = HalfSpace((0, 1, 0), 0.0)
    rng = np.random.default_rng(3)
    hull = Hull.from_points(rng.normal(size=(40, 3)))
    p = pose(random_rotation(rng), (0, -5.0, 0))  # entirely under the ground
    m = collide_shapes(ground, pose(), hull, p)
    assert len(m.depths) == 4
    world = hull.core @ p[:3, :3].T + p[:3, 3]
    assert m.depths.max() == pytest.approx(-world[:, 1].min(), abs=TOL)  # the deepest vertex is kept


def test_margin_keeps_speculative_points():
    ground = HalfSpace((0, 1, 0))
    p = pose(t=(0, 1.05, 0))
    assert len(collide_shapes(ground, pose(), Sphere(1.0), p, margin=0.0).depths) == 0
    m = collide_shapes(ground, pose(), Sphere(1.0), p, margin=0.1)
    assert m.depths[0] == pytest.approx(-0.05, abs=TOL)
    assert len(collide_shapes(ground, pose(), Sphere(1.0), p, margin=0.04).depths) == 0


def test_two_half_spaces_are_unsupported():
    with pytest.raises(UnsupportedPair, match="HalfSpace - HalfSpace"):
        collide_shapes(HalfSpace((0, 1, 0)), pose(), HalfSpace((0, -1, 0)), pose())


# -- round shapes against hulls ---------------------------------------------------------


@pytest.mark.parametrize("seed", range(30))
def test_sphere_hull_depth_is_radius_minus_distance(seed):
    rng = np.random.default_rng(seed)
    hull = Hull.from_points(rng.normal(size=(20, 3)))
    ph = pose(random_rotation(rng), rng.uniform(-0.3, 0.3, 3))
    centre = rng.normal(size=3) * 1.5
    r = rng.uniform(0.2, 1.0)
    local = (centre - ph[:3, 3]) @ ph[:3, :3]
    q = co.closest_pt_point_convex(local, hull.poly.vertices)
    dist = float(np.linalg.norm(q - local))
    m = check_both_orders(Sphere(r), pose(t=centre), hull, ph, margin=5.0)
    if dist > 1e-9:  # the centre outside the hull
        assert m.depths[0] == pytest.approx(r - dist, abs=1e-7)
        np.testing.assert_allclose(m.points_b[0], q @ ph[:3, :3].T + ph[:3, 3], atol=1e-7)


def test_capsule_lying_on_a_box_gets_two_points():
    box = box_hull((1.0, 0.5, 1.0))
    cap = Capsule(0.2, 0.4)
    lying = pose(rot_about((0, 0, 1), math.pi / 2) @ rot_about((0, 1, 0), 0.3), (0.2, 0.5 + 0.2 - 0.03, 0.1))
    m = check_both_orders(cap, lying, box, pose())
    assert len(m.depths) == 2
    np.testing.assert_allclose(m.depths, 0.03, atol=1e-7)
    np.testing.assert_allclose(m.normal, [0, -1, 0], atol=1e-7)
    np.testing.assert_allclose(m.points_b[:, 1], 0.5, atol=1e-7)
    # overhanging the edge x = 1: the points are clipped to the face
    over = pose(rot_about((0, 0, 1), math.pi / 2), (0.9, 0.5 + 0.2 - 0.03, 0.0))
    m = collide_shapes(cap, over, box, pose())
    assert len(m.depths) == 2
    np.testing.assert_allclose(np.sort(m.points_b[:, 0]), [0.5, 1.0], atol=1e-7)


def test_pair_cache_gives_the_same_answer():
    rng = np.random.default_rng(7)
    a = Hull.from_points(rng.normal(size=(30, 3)))
    cache = PairCache()
    p = pose(t=(0.0, 2.0, 0.0))
    for k in range(10):
        p = p.copy()
        p[:3, 3] += (0.0, -0.05, 0.0)
        warm = collide_shapes(Sphere(0.5), p, a, pose(), 0.1, cache)
        cold = collide_shapes(Sphere(0.5), p, a, pose(), 0.1)
        assert len(warm.depths) == len(cold.depths)
        np.testing.assert_allclose(warm.depths, cold.depths, atol=1e-9)


# -- shapes ----------------------------------------------------------------------------


@pytest.mark.parametrize("seed", range(10))
def test_shape_world_aabb_encloses_surface_samples(seed):
    rng = np.random.default_rng(seed)
    p = pose(random_rotation(rng), rng.normal(size=3))
    for shape in (Sphere(0.7, rng.normal(size=3)), Capsule(0.3, 0.8), box_hull((0.2, 0.5, 0.9))):
        lo, hi = shape_world_aabb(shape, p)
        d = rng.normal(size=(2000, 3))
        d /= np.linalg.norm(d, axis=1)[:, None]
        # support points in many directions: core support + radius
        core = shape.core @ p[:3, :3].T + p[:3, 3]
        pts = core[np.argmax(d @ core.T, axis=1)] + shape.radius * d
        assert np.all(pts >= lo - 1e-12) and np.all(pts <= hi + 1e-12)
        # tight: the box's faces are touched by the shape's support in the axis directions
        for k in range(3):
            e = np.zeros(3)
            e[k] = 1
            assert (core @ e).max() + shape.radius == pytest.approx(hi[k], abs=1e-12)


@pytest.mark.parametrize("bad", [0.0, -1.0, float("nan"), float("inf")])
def test_bad_radius_is_an_error(bad):
    with pytest.raises(ValueError, match="radius"):
        Sphere(bad)
    with pytest.raises(ValueError, match="radius"):
        Capsule(bad, 1.0)


def test_bad_half_space_normal():
    with pytest.raises(ValueError, match="normal"):
        HalfSpace((0, 0, 0))
    with pytest.raises(ValueError, match="normal"):
        HalfSpace((0, float("nan"), 0))


@pytest.mark.parametrize("seed", range(60))
def test_vector_symbol_test_agrees_with_the_manifold_in_general_position(seed):
    """Seed 003's yes / no against the SAT manifold's: the same answer unless the hulls are
    within 1e-6 of touching (where the paper's convention, touching is no collision, differs)."""
    from obbcollide.narrow_phase import test_hull_hull_vector_symbol

    rng = np.random.default_rng(seed)
    a = Hull.from_points(rng.normal(size=(12, 3)))
    b = Hull.from_points(rng.normal(size=(12, 3)))
    pa = pose(random_rotation(rng), rng.normal(size=3) * 0.2)
    pb = pose(random_rotation(rng), rng.normal(size=3) * 1.2)
    m = collide_shapes(a, pa, b, pb, margin=0.0)
    depth = m.sat_depth
    if abs(depth) < 1e-6:
        return
    assert test_hull_hull_vector_symbol(a, pa, b, pb) == (depth > 0), depth
