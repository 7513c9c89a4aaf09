"""EPA penetration (collision.epa) against independent references.

References: the separating-axis test (``collision.sat``: the exact minimum
penetration over face normals and edge-edge cross products), analytic box /
sphere / capsule depths, and the translation check (moving B by
``depth * normal`` must leave the shapes exactly touching: SAT depth ~0).

Tolerances: coordinates O(1..10); depths agree with SAT / analytic values to
1e-6 relative (the brief's bound; in practice ~1e-13); the touching check to
1e-9; contact points lie in their hulls to 1e-9.
"""

import itertools

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from obbcollide import ConvexPolyhedron, closest_pt_point_convex, convex_convex_sat
from obbcollide.epa import (EPA_CONVERGED, EPA_FLAT, EPA_MAX_ITER_REACHED, convex_penetration, epa_kernel,
                           penetration_kernel)
from obbcollide.gjk import gjk_distance, gjk_kernel, relative_transform
from tests._reference import random_rotation

SETTINGS = settings(deadline=None, max_examples=80, suppress_health_check=[HealthCheck.too_slow])
BOX = np.array(list(itertools.product((-1.0, 1.0), repeat=3)))
EYE = np.eye(4)
seeds = st.integers(0, 2**32 - 1)


def pose(rot, t):
    p = np.eye(4)
    p[:3, :3] = rot
    p[:3, 3] = t
    return p


def world(points, p):
    return np.asarray(points, float) @ p[:3, :3].T + p[:3, 3]


def random_pose(rng, spread=1.0):
    return pose(random_rotation(rng), rng.normal(size=3) * spread)


def dist_to(p, verts):
    return float(np.linalg.norm(closest_pt_point_convex(p, verts) - p))


def check_contact(r, wa, wb, ra=0.0, rb=0.0):
    assert abs(np.linalg.norm(r.normal) - 1.0) <= 1e-12
    np.testing.assert_allclose(r.point_a - r.point_b, r.depth * r.normal, atol=1e-9)
    assert abs(dist_to(r.point_a, wa) - ra) <= 1e-9 or (ra == 0 and dist_to(r.point_a, wa) <= 1e-9)
    assert abs(dist_to(r.point_b, wb) - rb) <= 1e-9 or (rb == 0 and dist_to(r.point_b, wb) <= 1e-9)


# ---------------------------------------------------------------------------
# Random hulls against SAT
# ---------------------------------------------------------------------------


def overlapping_pair(rng, na, nb):
    a = rng.normal(size=(na, 3)) * rng.uniform(0.3, 2.0, size=3)
    b = rng.normal(size=(nb, 3)) * rng.uniform(0.3, 2.0, size=3)
    pa, pb = random_pose(rng, 2.0), random_pose(rng)
    pb[:3, 3] = pa[:3, 3] + rng.normal(size=3) * 0.8
    return a, pa, b, pb


@SETTINGS
@given(seeds, st.integers(4, 64), st.integers(4, 64))
def test_depth_and_normal_equal_sat(seed, na, nb):
    rng = np.random.default_rng(seed)
    a, pa, b, pb = overlapping_pair(rng, na, nb)
    wa, wb = world(a, pa), world(b, pb)
    sat = convex_convex_sat(wa, None, wb, None)
    if sat.separated or sat.depth < 1e-7:
        return
    r = convex_penetration(a, pa, b, pb)
    assert abs(r.depth - sat.depth) <= 1e-6 * sat.depth, (r.depth, sat.depth)
    check_contact(r, wa, wb)
    # Moving B by depth * normal leaves them touching (whatever the axis, when
    # several axes share the minimum), and by a little more separates them.
    moved = convex_convex_sat(wa, None, wb + r.depth * r.normal, None)
    assert abs(moved.depth) <= 1e-9 * max(1.0, r.depth)
    assert convex_convex_sat(wa, None, wb + (r.depth + 1e-6) * r.normal, None).separated


def test_normal_equals_sat_axis_when_unique():
    """On 300 overlapping random pairs the normal is SAT's axis (up to ties)."""
    rng = np.random.default_rng(17)
    same = total = 0
    for _ in range(300):
        a, pa, b, pb = overlapping_pair(rng, rng.integers(4, 24), rng.integers(4, 24))
        wa, wb = world(a, pa), world(b, pb)
        sat = convex_convex_sat(wa, None, wb, None)
        if sat.separated or sat.depth < 1e-6:
            continue
        r = convex_penetration(a, pa, b, pb)
        assert abs(r.depth - sat.depth) <= 1e-6 * sat.depth
        total += 1
        if np.dot(r.normal, sat.axis) >= 1.0 - 1e-9:
            same += 1
        else:
            # A tie: another axis with the same minimum depth; it must also just separate.
            moved = convex_convex_sat(wa, None, wb + r.depth * r.normal, None)
            assert abs(moved.depth) <= 1e-9 * max(1.0, r.depth)
    assert total > 150 and same >= 0.95 * total, (same, total)


# ---------------------------------------------------------------------------
# Analytic shapes
# ---------------------------------------------------------------------------


@SETTINGS
@given(seeds)
def test_boxes_analytic(seed):
    rng = np.random.default_rng(seed)
    ha, hb = rng.uniform(0.2, 2.0, size=3), rng.uniform(0.2, 2.0, size=3)
    rot = random_rotation(rng)
    c = rng.uniform(-1, 1, size=3) * (ha + hb)  # centre offset in the common box frame
    pa = pose(rot, rng.normal(size=3))
    pb = pose(rot, pa[:3, 3] + rot @ c)
    over = ha + hb - np.abs(c)
    r = convex_penetration(BOX * ha, pa, BOX * hb, pb)
    k = int(np.argmin(over))
    assert abs(r.depth - over[k]) <= 1e-12 * 10
    if np.partition(over, 1)[1] - over[k] > 1e-9:
        np.testing.assert_allclose(r.normal, rot[:, k] * np.sign(c[k]), atol=1e-9)
    check_contact(r, world(BOX * ha, pa), world(BOX * hb, pb))


@SETTINGS
@given(seeds, st.floats(0.1, 2.0), st.floats(0.1, 2.0))
def test_spheres_analytic(seed, ra, rb):
    rng = np.random.default_rng(seed)
    ca = rng.normal(size=3)
    cb = ca + rng.normal(size=3) * 0.7
    r = convex_penetration([ca], EYE, [[0.0, 0.0, 0.0]], pose(random_rotation(rng), cb), ra, rb)
    d = np.linalg.norm(cb - ca)
    assert abs(r.depth - (ra + rb - d)) <= 1e-12 * 10
    np.testing.assert_allclose(r.normal, (cb - ca) / d, atol=1e-12)
    np.testing.assert_allclose(r.point_a, ca + ra * r.normal, atol=1e-12)
    np.testing.assert_allclose(r.point_b, cb - rb * r.normal, atol=1e-12)


def test_coincident_sphere_centres():
    r = convex_penetration([[1.0, 2.0, 3.0]], EYE, [[1.0, 2.0, 3.0]], EYE, 0.5, 0.25)
    assert r.depth == pytest.approx(0.75, abs=1e-15)
    assert np.linalg.norm(r.normal) == pytest.approx(1.0)
    np.testing.assert_allclose(r.point_a - r.point_b, 0.75 * r.normal, atol=1e-15)


@SETTINGS
@given(seeds, st.floats(0.05, 1.0))
def test_sphere_box_analytic(seed, rad):
    rng = np.random.default_rng(seed)
    half = rng.uniform(0.3, 2.0, size=3)
    c = rng.uniform(-1.3, 1.3, size=3) * half  # sphere centre, box frame
    pa = random_pose(rng)
    r = convex_penetration(BOX * half, pa, [c], pa, 0.0, rad)
    q = np.clip(c, -half, half)
    if np.all(np.abs(c) < half):  # centre inside the box: out through the nearest face
        k = int(np.argmin(half - np.abs(c)))
        depth = rad + half[k] - abs(c[k])
        normal = np.eye(3)[k] * np.sign(c[k])
    else:
        d = np.linalg.norm(c - q)
        depth = rad - d
        normal = (c - q) / d
    assert abs(r.depth - depth) <= 1e-12 * 10
    if np.sort(half - np.abs(c))[1] - np.min(half - np.abs(c)) > 1e-9 or depth < rad:
        np.testing.assert_allclose(r.normal, pa[:3, :3] @ normal, atol=1e-9)


@pytest.mark.parametrize("h", [0.3, 0.01, -0.2, -0.45])
def test_capsule_box_analytic(h):
    """A capsule lying above a wide box's top face (z = 0.5) at height h of its axis."""
    half = np.array([4.0, 3.0, 0.5])
    rad = 0.4
    rng = np.random.default_rng(2)
    for _ in range(20):
        pa = random_pose(rng)
        seg = np.array([[-1.0, 0.2, 0.5 + h], [1.5, -0.3, 0.5 + h]])
        r = convex_penetration(BOX * half, pa, seg, pa, 0.0, rad)
        assert abs(r.depth - (rad - h)) <= 1e-12 * 10
        np.testing.assert_allclose(r.normal, pa[:3, 2], atol=1e-12)
        # Tilted: one end p below the top face, the other above; depth r + p.
        tilted = np.array([[-1.0, 0.2, 0.5 - 0.2], [1.5, -0.3, 0.5 + 1.0 + h]])
        r = convex_penetration(BOX * half, pa, tilted, pa, 0.0, rad)
        assert abs(r.depth - (rad + 0.2)) <= 1e-12 * 10
        np.testing.assert_allclose(r.normal, pa[:3, 2], atol=1e-12)


# ---------------------------------------------------------------------------
# Degenerate inputs
# ---------------------------------------------------------------------------


def test_touching_boxes_depth_zero():
    for t in ([2.0, 0.3, 0.1], [2.0, 2.0, 0.5], [2.0, 2.0, 2.0], [2.0, 0.0, 0.0]):
        r = convex_penetration(BOX, EYE, BOX, pose(np.eye(3), t))
        assert abs(r.depth) <= 1e-12
        # Touching: the normal still separates (moving B by a hair along it).
        moved = convex_convex_sat(BOX, None, BOX + t + 1e-9 * r.normal, None)
        assert moved.separated


def test_aligned_boxes_on_a_grid():
    """Boxes with one rotation on a half-integer grid: ties between faces, exact touching."""
    rng = np.random.default_rng(5)
    for k in range(600):
        ha, hb = rng.integers(1, 4, 3) / 2, rng.integers(1, 4, 3) / 2
        c = rng.integers(-6, 7, 3) / 2
        over = ha + hb - np.abs(c)
        if np.any(over < 0):
            continue
        rot = np.eye(3) if k % 2 else random_rotation(rng)
        pa = pose(rot, rng.normal(size=3))
        pb = pose(rot, pa[:3, 3] + rot @ c)
        r = convex_penetration(BOX * ha, pa, BOX * hb, pb)
        assert abs(r.depth - over.min()) <= 1e-12, (k, r.depth, over)
        # The normal is one of the minimising face normals.
        local = rot.T @ r.normal
        k_axis = int(np.argmax(np.abs(local)))
        assert abs(abs(local[k_axis]) - 1.0) <= 1e-9 and over[k_axis] <= over.min() + 1e-12, (k, over, local)
        np.testing.assert_allclose(r.point_a - r.point_b, r.depth * r.normal, atol=1e-12)


def test_identical_shapes():
    rng = np.random.default_rng(0)
    p = random_pose(rng)
    r = convex_penetration(BOX * [1.0, 2.0, 3.0], p, BOX * [1.0, 2.0, 3.0], p)
    assert r.depth == pytest.approx(2.0, abs=1e-12)  # the smallest width
    assert abs(abs(np.dot(r.normal, p[:3, 0])) - 1.0) <= 1e-12
    hull = rng.normal(size=(40, 3))
    r = convex_penetration(hull, p, hull, p)
    w = world(hull, p)
    sat = convex_convex_sat(w, None, w, None)
    assert r.depth == pytest.approx(sat.depth, rel=1e-9)


def test_flat_inputs():
    """A box of zero thickness and a 3-point "hull" (a triangle) inside a cube, 0.3 above its centre."""
    rng = np.random.default_rng(6)
    flat = BOX * [1.0, 1.0, 0.0]  # each point twice
    tri = np.array([[-0.5, -0.5, 0.0], [0.5, -0.5, 0.0], [-0.5, 0.5, 0.0]])
    for _ in range(10):
        p = random_pose(rng)
        q = pose(p[:3, :3], p[:3, 3] + p[:3, :3] @ [0.0, 0.0, 0.3])
        for shape in (flat, tri):
            # Up through the top face (0.7); down needs 1.3, sideways 2 or 1.5.
            r = convex_penetration(BOX, p, shape, q)
            assert r.depth == pytest.approx(0.7, abs=1e-12)
            np.testing.assert_allclose(r.normal, p[:3, 2], atol=1e-12)
            check_contact(r, world(BOX, p), world(shape, q))
            # And the other way round: A flat, B the cube.
            r = convex_penetration(shape, q, BOX, p)
            assert r.depth == pytest.approx(0.7, abs=1e-12)
            np.testing.assert_allclose(r.normal, -p[:3, 2], atol=1e-12)


def test_point_inside_hull_and_small_simplices():
    """A point core inside a hull; EPA started from 1-, 2-, 3- and flat 4-point simplices."""
    rng = np.random.default_rng(7)
    hull = ConvexPolyhedron.from_points(rng.normal(size=(30, 3)))
    for _ in range(30):
        p = hull.vertices.mean(0) + rng.normal(size=3) * 0.1
        r = convex_penetration(hull.vertices, EYE, [p], EYE)
        depth = np.min(hull.offsets - hull.normals @ p)
        assert r.depth == pytest.approx(depth, abs=1e-12)
    # A against itself: D is the box [-2, 2] x [-4, 4] x [-6, 6]; depth 2 along x.
    # Pairs (i, j) give the D points a_i - a_j; each simplex below holds the origin.
    a = BOX * [1.0, 2.0, 3.0]
    flat4 = [[0, 1], [1, 3], [3, 2], [2, 0]]  # coplanar: reduced to a triangle first
    line3 = [[0, 5], [5, 0], [0, 0]]  # collinear: reduced to a segment first
    simplices = [[[0, 0]], [[0, 5], [5, 0]], [[0, 1], [1, 3], [3, 0]]]
    simplices += [list(p) for p in itertools.permutations(flat4)] + [list(p) for p in itertools.permutations(line3)]
    for simplex in simplices:
        s = np.array(simplex, np.int32)
        n, pts = np.empty(3), np.empty((2, 3))
        depth, it, status = epa_kernel(a, a, np.eye(3), np.zeros(3), s, len(s), 64, n, pts)
        assert status == EPA_CONVERGED and depth == pytest.approx(2.0, abs=1e-12), simplex
        assert abs(n[0]) == pytest.approx(1.0, abs=1e-12)
        np.testing.assert_allclose(pts[0] - pts[1], depth * n, atol=1e-12)


def test_max_iterations_fallback_separates():
    rng = np.random.default_rng(3)
    a, b = rng.normal(size=(64, 3)), rng.normal(size=(64, 3))
    pb = pose(random_rotation(rng), [0.5, 0.2, 0.0])
    full = convex_penetration(a, EYE, b, pb)
    wb = world(b, pb)
    for cap in (0, 1, 2):
        r = convex_penetration(a, EYE, b, pb, max_iterations=cap)
        assert r.depth >= full.depth - 1e-12  # an upper bound
        moved = convex_convex_sat(a, None, wb + (r.depth + 1e-9) * r.normal, None)
        assert moved.separated
    rot, trans = relative_transform(EYE, pb)
    simplex, pts, n = np.empty((4, 2), np.int32), np.empty((2, 3)), np.empty(3)
    _, k, _, _ = gjk_kernel(a, b, rot, trans, np.zeros((0, 2), np.int32), 0, 128, simplex, pts)
    _, it, status = epa_kernel(a, b, rot, trans, simplex, k, 1, n, pts)
    assert status in (EPA_MAX_ITER_REACHED, EPA_CONVERGED) and it <= 1


# ---------------------------------------------------------------------------
# Separated shapes, warm start, kernels, errors
# ---------------------------------------------------------------------------


@SETTINGS
@given(seeds, st.floats(0.0, 0.5), st.floats(0.0, 0.5))
def test_separated_gives_minus_distance(seed, ra, rb):
    rng = np.random.default_rng(seed)
    a, b = rng.normal(size=(10, 3)), rng.normal(size=(10, 3))
    pa, pb = random_pose(rng), random_pose(rng)
    pb[:3, 3] = pa[:3, 3] + rng.normal(size=3) * 3
    g = gjk_distance(a, pa, b, pb, ra, rb)
    r = convex_penetration(a, pa, b, pb, ra, rb)
    if g.core_overlap:
        return
    gap = g.distance if g.distance > 0 else -(ra + rb - gjk_distance(a, pa, b, pb).distance)
    assert r.depth == pytest.approx(-gap, abs=1e-12)
    np.testing.assert_allclose(r.point_a - r.point_b, r.depth * r.normal, atol=1e-12)
    if g.distance > 0:
        np.testing.assert_allclose(r.normal, (g.point_b - g.point_a) / g.distance, atol=1e-9)


def test_warm_start_same_answer():
    rng = np.random.default_rng(21)
    a, b = rng.normal(size=(64, 3)), rng.normal(size=(64, 3))
    for _ in range(20):
        pb = pose(random_rotation(rng), rng.normal(size=3) * 0.7)
        cold = convex_penetration(a, EYE, b, pb)
        cache = gjk_distance(a, EYE, b, pb).simplex
        warm = convex_penetration(a, EYE, b, pb, simplex=cache)
        assert warm.depth == pytest.approx(cold.depth, abs=1e-12)
        assert warm.iterations <= cold.iterations


def test_penetration_kernel_matches_public_function():
    rng = np.random.default_rng(5)
    a, b = rng.normal(size=(16, 3)), rng.normal(size=(12, 3))
    pa, pb = random_pose(rng), random_pose(rng)
    pb[:3, 3] = pa[:3, 3] + 0.3
    rot, trans = relative_transform(pa, pb)
    n, pts, simplex = np.empty(3), np.empty((2, 3)), np.empty((4, 2), np.int32)
    depth, k, it, status = penetration_kernel(a, b, rot, trans, 0.1, 0.2, np.zeros((0, 2), np.int32), 0, 128, 128,
                                              n, pts, simplex)
    r = convex_penetration(a, pa, b, pb, 0.1, 0.2)
    assert status == EPA_CONVERGED and depth == pytest.approx(r.depth, abs=1e-14) and it == r.iterations
    np.testing.assert_allclose(pa[:3, :3] @ n, r.normal, atol=1e-14)
    assert 1 <= k <= 4


@pytest.mark.parametrize("arg", ["points_a", "pose_a", "points_b", "pose_b"])
def test_non_finite_inputs_name_the_argument(arg):
    kw = dict(points_a=BOX.copy(), pose_a=np.eye(4), points_b=BOX.copy(), pose_b=np.eye(4))
    kw[arg][1, 2] = np.nan
    with pytest.raises(ValueError, match=arg):
        convex_penetration(**kw)
    kw[arg][1, 2] = np.inf
    with pytest.raises(ValueError, match=arg):
        convex_penetration(**kw)


def test_flat_status_reported():
    """Two coplanar flat squares: D has no volume, depth 0 along the plane normal."""
    sq = np.unique(BOX * [1.0, 1.0, 0.0], axis=0)
    n, pts, simplex = np.empty(3), np.empty((2, 3)), np.empty((4, 2), np.int32)
    depth, _, _, status = penetration_kernel(sq, sq, np.eye(3), np.array([0.5, 0.2, 0.0]), 0.0, 0.0,
                                             np.zeros((0, 2), np.int32), 0, 128, 128, n, pts, simplex)
    assert status == EPA_FLAT and depth == 0.0
    np.testing.assert_allclose(np.abs(n), [0.0, 0.0, 1.0], atol=1e-12)
    r = convex_penetration(sq, EYE, sq, pose(np.eye(3), [0.5, 0.2, 0.0]), 0.1, 0.2)
    assert r.depth == pytest.approx(0.3, abs=1e-12)
