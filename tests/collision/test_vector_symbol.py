"""The vector-symbol method (seed 003) against the SAT test, and its five cases by construction."""

import numpy as np
import pytest
from scipy.spatial.transform import Rotation

from obbcollide import (
    ConvexPolyhedron,
    StandardModel,
    convex_convex_sat,
    model_collision_factor,
    polygon_intersection_factor,
    position_factor,
    vector_symbol_collide,
)
from obbcollide.vector_symbol import CASE_NAMES


def polygon_model(points):
    """A StandardModel holding one polygon (CCW as given); enough for the I factor."""
    pts = np.asarray(points, float)
    n = np.cross(pts[1] - pts[0], pts[2] - pts[1])
    n /= np.linalg.norm(n)
    return StandardModel(pts, np.array([0, len(pts)]), np.arange(len(pts)), n[None], pts[:1].copy())


SQUARE = [[0, 0, 0], [1, 0, 0], [1, 1, 0], [0, 1, 0]]  # in z = 0, normal +z


def vertical(x0, x1, y, z0, z1):
    """A rectangle in the plane y = const spanning x0..x1, z0..z1."""
    return [[x0, y, z0], [x1, y, z0], [x1, y, z1], [x0, y, z1]]


@pytest.mark.parametrize("q, case, hit", [
    (np.array(SQUARE) + [0, 0, 2], 1, 0),                       # parallel, above
    (vertical(0.2, 0.8, 0.5, 0.5, 1.5), 2, 0),                  # Q above P's plane; P straddles Q's
    (np.array(SQUARE) + [0.5, 0.5, 0], 4, 0),                   # coplanar overlapping: the paper says no
    (vertical(2.0, 3.0, 0.5, -0.5, 0.5), 5, 0),                 # 5e: chords on one line, disjoint
    (vertical(0.5, 1.5, 0.5, -0.5, 0.5), 6, 1),                 # 5f: partial overlap
    (vertical(0.2, 0.8, 0.5, -0.5, 0.5), 7, 1),                 # 5g: Q's chord inside P's
    (vertical(0.2, 0.8, 0.5, 0.0, 1.0), 8, 0),                  # Q's edge lies in P's plane
])
def test_polygon_cases(q, case, hit):
    p = polygon_model(SQUARE)
    qm = polygon_model(q)
    i, c = polygon_intersection_factor(p, 0, qm, 0)
    assert (i, c) == (hit, case), CASE_NAMES[c]


def test_case_3_and_touch_at_vertex():
    p = polygon_model(SQUARE)
    # P entirely on one side of Q's plane (x = 3), Q straddles P's plane: case 3.
    q = polygon_model([[3, 0, -1], [3, 1, -1], [3, 1, 1], [3, 0, 1]])
    assert polygon_intersection_factor(p, 0, q, 0) == (0, 3)
    # Q touches P's plane at one vertex only: the paper's step 2 (no intersection).
    q = polygon_model([[0.5, 0.5, 0.0], [0.9, 0.5, 1.0], [0.1, 0.5, 1.0]])
    assert polygon_intersection_factor(p, 0, q, 0) == (0, 8)


def test_position_factor_signs():
    cube = ConvexPolyhedron.from_points([[i, j, k] for i in (0, 1) for j in (0, 1) for k in (0, 1)])
    m = StandardModel.from_polyhedron(cube)
    for f in range(len(m.normals)):
        d = position_factor([[0.5, 0.5, 0.5], m.refs[f] + m.normals[f]], m, f)
        assert d[0] < 0 and d[1] == pytest.approx(1.0)


def random_hull(rng, k, scale=1.0, shift=0.0, seed=0):
    pts = rng.normal(size=(k, 3)) * scale
    pts = pts @ Rotation.random(random_state=seed).as_matrix().T + shift
    return ConvexPolyhedron.from_points(pts)


def test_agrees_with_sat_on_random_polyhedra():
    rng = np.random.default_rng(2024)
    hits = 0
    for it in range(1500):
        a = random_hull(rng, rng.integers(4, 14), seed=it)
        b = random_hull(rng, rng.integers(4, 14), rng.uniform(0.1, 1.5), rng.normal(size=3) * 1.5, seed=it + 7)
        sat = convex_convex_sat(a, None, b, None)
        if abs(sat.depth) < 1e-9:
            continue  # touching within rounding: conventions differ by design
        vs = vector_symbol_collide(a, b)
        assert bool(vs) == (not sat.separated), it
        hits += bool(vs)
        # The first-hit variant gives the same yes/no.
        assert bool(vector_symbol_collide(a, b, stop_at_first=True)) == bool(vs)
    assert 300 < hits < 1200


def test_containment_factor():
    rng = np.random.default_rng(5)
    big = random_hull(rng, 40, 5.0)
    small = random_hull(rng, 8, 0.1)
    r = model_collision_factor(big, small)
    assert r.collide and r.E_ab == 1 and r.E_ba == 0 and int(r.I.sum()) == 0
    r = model_collision_factor(small, big)
    assert r.collide and r.E_ab == 0 and r.E_ba == 1


def test_touching_convention():
    pts = np.array([[i, j, k] for i in (0, 1) for j in (0, 1) for k in (0, 1)], float)
    cube = ConvexPolyhedron.from_points(pts)
    # Identical models collide through the closed containment factor.
    r = vector_symbol_collide(cube, cube)
    assert r.collide and r.E_ab == 1 and r.E_ba == 1
    # Face-to-face touching: no collision (the paper's convention).
    assert not vector_symbol_collide(cube, ConvexPolyhedron.from_points(pts + [1, 0, 0]))
    # The documented blind spot: aligned boxes overlapping while every face pair
    # is coplanar or meets along an edge. SAT sees the overlap; the paper's
    # convention does not.
    shifted = ConvexPolyhedron.from_points(pts + [0.5, 0, 0])
    assert not vector_symbol_collide(cube, shifted)
    assert not convex_convex_sat(cube, None, shifted, None).separated
    # Any rotation away from alignment restores agreement.
    tilted = ConvexPolyhedron.from_points((pts - 0.5) @ Rotation.from_euler("xyz", [1, 2, 3], degrees=True).as_matrix().T + [1.0, 0.5, 0.5])
    assert vector_symbol_collide(cube, tilted)


def test_union_of_convex_models():
    # An L-shaped model as the union of two boxes; a small box in the notch of
    # the L touches neither piece, one in the arm collides with one piece.
    def box(lo, hi):
        return ConvexPolyhedron.from_points([[x, y, z] for x in (lo[0], hi[0]) for y in (lo[1], hi[1]) for z in (lo[2], hi[2])])

    ell = [box((0, 0, 0), (3, 1, 1)), box((0, 1, 0), (1, 3, 1))]
    tilt = Rotation.from_euler("z", 10, degrees=True).as_matrix()

    def small(center):
        c = np.array([[x, y, z] for x in (-.3, .3) for y in (-.3, .3) for z in (-.3, .3)]) @ tilt.T
        return ConvexPolyhedron.from_points(c + center)

    in_notch = vector_symbol_collide(ell, small((2.0, 2.0, 0.5)))
    assert not in_notch and in_notch.pairs == [(0, 0), (1, 0)]
    in_arm = vector_symbol_collide(ell, small((2.0, 0.9, 0.5)))
    assert in_arm.collide and in_arm.C > 0
    first = vector_symbol_collide(ell, small((2.0, 0.9, 0.5)), stop_at_first=True)
    assert first.collide


def test_transformed_model_moves_with_pose():
    rng = np.random.default_rng(9)
    a = StandardModel.from_points(rng.normal(size=(10, 3)))
    pose = np.eye(4)
    pose[:3, :3] = Rotation.random(random_state=1).as_matrix()
    pose[:3, 3] = [10.0, 0, 0]
    moved = a.transformed(pose)
    assert not vector_symbol_collide(a, moved)
    assert vector_symbol_collide(moved, moved.transformed(np.eye(4)))


def test_bad_input():
    with pytest.raises(ValueError, match="model_a"):
        vector_symbol_collide("cube", StandardModel.from_points(np.eye(4)[:, :3]))
    with pytest.raises(ValueError, match="face"):
        position_factor([0, 0, 0], StandardModel.from_points(np.eye(4)[:, :3]), 17)
    with pytest.raises(ValueError, match="points"):
        position_factor([np.nan, 0, 0], StandardModel.from_points(np.eye(4)[:, :3]), 0)
