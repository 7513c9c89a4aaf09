"""GJK distance (collision.gjk) against independent references (its sub-distance step: test_simplex.py).

References: the exact active-set QP of ``tests._reference.closest_between_hulls``
(small hulls, any shape incl. flat ones); the minimum over all pairs of hull
surface triangles of the triangle-triangle distance (larger separated hulls);
analytic sphere / capsule / box formulas; the separating-axis test
(``collision.sat``) for the yes/no overlap answer; a vertex-face construction
whose distance is known exactly (near-touching pairs).

Tolerances: coordinates are O(1..10). Distances agree with the references to
1e-9 relative (of max(distance, 1)); near-touching gaps (1e-3, 1e-6) to 1e-12
absolute; closest points lie in their hulls to 1e-9.
"""

import itertools

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from scipy.spatial import ConvexHull

from obbcollide import (ConvexPolyhedron, closest_pt_point_convex, closest_pt_segment_segment,
                       closest_pt_triangle_triangle)
from obbcollide.gjk import GJK_OVERLAP, GJK_SEPARATED, gjk_distance, gjk_kernel, relative_transform
from obbcollide.sat import polyhedron_axes, sat_kernel
from tests._reference import closest_between_hulls, dist_to_hull, random_rotation

SETTINGS = settings(deadline=None, max_examples=60, suppress_health_check=[HealthCheck.too_slow])
BOX = np.array(list(itertools.product((-1.0, 1.0), repeat=3)))
EYE = np.eye(4)


def pose(rot, t):
    p = np.eye(4)
    p[:3, :3] = rot
    p[:3, 3] = t
    return p


def world(points, p):
    return np.asarray(points, float) @ p[:3, :3].T + p[:3, 3]


seeds = st.integers(0, 2**32 - 1)


def random_pose(rng, spread=1.0):
    return pose(random_rotation(rng), rng.normal(size=3) * spread)


def surface_distance(va, vb):
    """Distance between two disjoint solid hulls: min over their surface triangle pairs."""
    ta = va[ConvexHull(va).simplices]
    tb = vb[ConvexHull(vb).simplices]
    i, j = np.meshgrid(np.arange(len(ta)), np.arange(len(tb)), indexing="ij")
    i, j = i.ravel(), j.ravel()
    c1, c2 = closest_pt_triangle_triangle(ta[i, 0], ta[i, 1], ta[i, 2], tb[j, 0], tb[j, 1], tb[j, 2])
    return float(np.min(np.linalg.norm(c1 - c2, axis=1)))


def check_points(r, wa, wb, ra=0.0, rb=0.0):
    """Closest points lie on/in their shapes and are ``distance`` apart."""
    assert abs(np.linalg.norm(r.point_a - r.point_b) - r.distance) <= 1e-9 * max(1.0, r.distance)
    if not r.overlap:
        assert abs(hull_distance(r.point_a, wa) - ra) <= 1e-9
        assert abs(hull_distance(r.point_b, wb) - rb) <= 1e-9


def hull_distance(p, verts):
    """Distance from p to a hull: exact QP for a few points, the face loop otherwise."""
    if len(verts) <= 8:
        return dist_to_hull(p, verts)
    return float(np.linalg.norm(closest_pt_point_convex(p, verts) - p))


# ---------------------------------------------------------------------------
# Distances against references
# ---------------------------------------------------------------------------


@SETTINGS
@given(seeds, st.integers(1, 5), st.integers(1, 5))
def test_small_hulls_equal_exact_qp(seed, na, nb):
    """Any small point sets (points, segments, triangles, tetrahedra, 5-point hulls), any poses."""
    rng = np.random.default_rng(seed)
    a = rng.normal(size=(na, 3))
    b = rng.normal(size=(nb, 3))
    pa, pb = random_pose(rng), random_pose(rng, 2.5)
    wa, wb = world(a, pa), world(b, pb)
    r = gjk_distance(a, pa, b, pb)
    _, _, ref = closest_between_hulls(wa, wb)
    if ref < 1e-9:
        assert r.overlap and r.distance == 0.0
        return
    assert not r.overlap
    assert abs(r.distance - ref) <= 1e-9 * max(1.0, ref), (r.distance, ref)
    check_points(r, wa, wb)


@SETTINGS
@given(seeds, st.integers(4, 64), st.integers(4, 64))
def test_larger_hulls_equal_surface_triangle_minimum(seed, na, nb):
    rng = np.random.default_rng(seed)
    a = rng.normal(size=(na, 3)) * rng.uniform(0.3, 3.0, size=3)
    b = rng.normal(size=(nb, 3)) * rng.uniform(0.3, 3.0, size=3)
    pa, pb = random_pose(rng, 3.0), random_pose(rng, 3.0)
    pb[:3, 3] += rng.normal(size=3) * 4.0
    wa, wb = world(a, pa), world(b, pb)
    r = gjk_distance(a, pa, b, pb)
    sat = _sat(wa, wb)
    if abs(sat) < 1e-7:
        return  # touching within round-off: yes/no undecidable
    assert r.overlap == (sat > 0.0)
    if not r.overlap:
        ref = surface_distance(wa, wb)
        assert abs(r.distance - ref) <= 1e-9 * max(1.0, ref), (r.distance, ref)
        check_points(r, wa, wb)


def _sat(wa, wb):
    """SAT depth (> 0 overlap, < 0 separated) of two point sets' hulls."""
    pa, pb = ConvexPolyhedron.from_points(wa), ConvexPolyhedron.from_points(wb)
    na, ea = polyhedron_axes(pa)
    nb, eb = polyhedron_axes(pb)
    _, gap, _, _ = sat_kernel(pa.vertices, pb.vertices, na, nb, ea.reshape(-1, 3), eb.reshape(-1, 3), False)
    return -gap


@SETTINGS
@given(seeds, st.floats(0.0, 2.0), st.floats(0.0, 2.0))
def test_spheres_equal_analytic(seed, ra, rb):
    rng = np.random.default_rng(seed)
    ca, cb = rng.normal(size=3) * 2, rng.normal(size=3) * 2
    pa, pb = random_pose(rng), random_pose(rng)
    # Core points given in each model frame so that the world centres are ca, cb.
    la = (ca - pa[:3, 3]) @ pa[:3, :3]
    lb = (cb - pb[:3, 3]) @ pb[:3, :3]
    r = gjk_distance(la[None], pa, lb[None], pb, ra, rb)
    ref = np.linalg.norm(cb - ca) - ra - rb
    assert abs(r.distance - max(ref, 0.0)) <= 1e-12 * 10
    assert r.overlap == (ref <= 1e-12)
    if ref > 1e-9:
        u = (cb - ca) / np.linalg.norm(cb - ca)
        np.testing.assert_allclose(r.point_a, ca + ra * u, atol=1e-12)
        np.testing.assert_allclose(r.point_b, cb - rb * u, atol=1e-12)
    else:
        # Overlapping: one point inside both balls.
        np.testing.assert_array_equal(r.point_a, r.point_b)
        assert np.linalg.norm(r.point_a - ca) <= ra + 1e-12 and np.linalg.norm(r.point_a - cb) <= rb + 1e-12


@SETTINGS
@given(seeds, st.floats(0.0, 1.0), st.floats(0.0, 1.0), st.booleans())
def test_capsules_equal_segment_segment(seed, ra, rb, parallel):
    rng = np.random.default_rng(seed)
    a = rng.normal(size=(2, 3))
    b = rng.normal(size=(2, 3)) + rng.normal(size=3) * 2
    if parallel:  # the degenerate case of the segment formula
        b[1] = b[0] + (a[1] - a[0]) * rng.uniform(-2, 2)
    pa, pb = random_pose(rng), random_pose(rng)
    wa, wb = world(a, pa), world(b, pb)
    r = gjk_distance(a, pa, b, pb, ra, rb)
    c1, c2, _, _ = closest_pt_segment_segment(wa[0], wa[1], wb[0], wb[1])
    core = np.linalg.norm(c1 - c2)
    ref = core - ra - rb
    assert abs(r.distance - max(ref, 0.0)) <= 1e-9 * max(1.0, core)
    assert r.core_overlap == (core <= 1e-12)
    if ref > 1e-9:
        check_points(r, wa, wb, ra, rb)


@SETTINGS
@given(seeds, st.floats(0.0, 1.0))
def test_sphere_box_equals_clamped_point(seed, rad):
    rng = np.random.default_rng(seed)
    half = rng.uniform(0.2, 2.0, size=3)
    c = rng.normal(size=3) * 3
    pa, pb = random_pose(rng), random_pose(rng)
    r = gjk_distance(BOX * half, pa, c[None], pb, 0.0, rad)
    # c is in B's frame and the box in A's: compare in A's frame.
    c_in_a = (world(c[None], pb)[0] - pa[:3, 3]) @ pa[:3, :3]
    ref = np.linalg.norm(c_in_a - np.clip(c_in_a, -half, half)) - rad
    assert abs(r.distance - max(ref, 0.0)) <= 1e-12 * 10
    assert r.core_overlap == bool(np.all(np.abs(c_in_a) <= half))


# ---------------------------------------------------------------------------
# Overlap yes/no against SAT, thousands of pairs, including near-touching ones
# ---------------------------------------------------------------------------


class Pool:
    """Random hulls with their SAT axes, reused under random rigid motions."""

    def __init__(self, rng, count=24):
        self.hulls = []
        for _ in range(count):
            pts = rng.normal(size=(rng.integers(4, 20), 3)) * rng.uniform(0.3, 2.0, size=3)
            p = ConvexPolyhedron.from_points(pts)
            n, e = polyhedron_axes(p)
            self.hulls.append((p, n, e.reshape(-1, 3)))

    def sat(self, i, pose_i, j, pose_j):
        """SAT depth of hull i at pose_i and hull j at pose_j (> 0 overlap)."""
        (p, na, ea), (q, nb, eb) = self.hulls[i], self.hulls[j]
        ri, rj = pose_i[:3, :3], pose_j[:3, :3]
        _, gap, _, _ = sat_kernel(world(p.vertices, pose_i), world(q.vertices, pose_j),
                                  np.ascontiguousarray(na @ ri.T), np.ascontiguousarray(nb @ rj.T),
                                  np.ascontiguousarray(ea @ ri.T), np.ascontiguousarray(eb @ rj.T), False)
        return -gap


@pytest.fixture(scope="module")
def pool():
    return Pool(np.random.default_rng(2024))


def test_overlap_flag_equals_sat_on_random_pairs(pool):
    rng = np.random.default_rng(5)
    counts = [0, 0]
    for _ in range(3000):
        i, j = rng.integers(len(pool.hulls), size=2)
        pa, pb = random_pose(rng), random_pose(rng, 2.0)
        sat = pool.sat(i, pa, j, pb)
        if abs(sat) < 1e-9:
            continue
        r = gjk_distance(pool.hulls[i][0].vertices, pa, pool.hulls[j][0].vertices, pb)
        assert r.overlap == (sat > 0.0), (i, j, sat, r.distance)
        assert r.core_overlap == r.overlap
        if r.overlap:
            assert r.distance == 0.0
        else:
            assert r.distance >= -sat - 1e-12  # SAT's best axis gap is a lower bound
        counts[r.overlap] += 1
    assert min(counts) > 500  # both answers well represented


@pytest.mark.parametrize("gap", [1e-3, 1e-6, -1e-6, -1e-3])
def test_near_touching_vertex_face(pool, gap):
    """B's lowest vertex along a face normal of A placed ``gap`` off the face's centre.

    For gap > 0 the face plane separates and the vertex-centre pair attains the
    gap, so the distance is exactly ``gap``; for gap < 0 the vertex is inside A.
    """
    rng = np.random.default_rng(int(abs(np.log10(abs(gap)))) + (gap > 0) * 10)
    done = 0
    for _ in range(300):
        i, j = rng.integers(len(pool.hulls), size=2)
        hull_a, hull_b = pool.hulls[i][0], pool.hulls[j][0]
        f = rng.integers(len(hull_a.polygons))
        n = hull_a.normals[f]
        centre = hull_a.vertices[hull_a.polygons[f]].mean(0)
        rb = random_rotation(rng)
        wb = hull_b.vertices @ rb.T
        low = wb[np.argmin(wb @ n)]
        pb = pose(rb, centre + gap * n - low)
        pa = EYE
        # For gap < 0 the vertex must be inside A by at least |gap| / 2 from every face.
        if gap < 0 and np.max(hull_a.normals @ (centre + gap * n) - hull_a.offsets) > gap / 2:
            continue
        sat = pool.sat(i, pa, j, pb)
        r = gjk_distance(hull_a.vertices, pa, hull_b.vertices, pb)
        assert r.overlap == (gap < 0) == (sat > 0)
        if gap > 0:
            assert abs(r.distance - gap) <= 1e-12, (r.distance, gap)
        done += 1
    assert done > 150


def test_aligned_boxes_on_a_grid_exact_touching():
    """Boxes with one rotation, half-integer sizes and offsets: many exact face, edge
    and vertex contacts. Distance = |max(|c| - ha - hb, 0)|; touching counts as overlap."""
    rng = np.random.default_rng(5)
    for k in range(2000):
        ha, hb = rng.integers(1, 4, 3) / 2, rng.integers(1, 4, 3) / 2
        c = rng.integers(-8, 9, 3) / 2
        rot = np.eye(3) if k % 2 else random_rotation(rng)
        pa = pose(rot, rng.normal(size=3))
        pb = pose(rot, pa[:3, 3] + rot @ c)
        r = gjk_distance(BOX * ha, pa, BOX * hb, pb)
        ref = np.linalg.norm(np.maximum(np.abs(c) - ha - hb, 0.0))
        assert abs(r.distance - ref) <= 1e-12, (k, r.distance, ref)
        assert r.overlap == bool(np.all(np.abs(c) <= ha + hb)), k


# ---------------------------------------------------------------------------
# Warm start
# ---------------------------------------------------------------------------


def test_warm_start_same_answer_fewer_iterations():
    rng = np.random.default_rng(9)
    a = rng.normal(size=(64, 3))
    b = rng.normal(size=(64, 3))
    cold_total = warm_total = resting_total = frames = 0
    for trial in range(20):
        pa = random_pose(rng)
        pb = random_pose(rng)
        pb[:3, 3] = pa[:3, 3] + rng.normal(size=3) * 3 + 3.5 * np.sign(rng.normal(size=3))
        prev = gjk_distance(a, pa, b, pb)
        for _ in range(10):  # slow motion: a few mm per frame
            pb[:3, 3] += rng.normal(size=3) * 3e-3
            cold = gjk_distance(a, pa, b, pb)
            warm = gjk_distance(a, pa, b, pb, simplex=prev.simplex)
            assert warm.overlap == cold.overlap
            assert abs(warm.distance - cold.distance) <= 1e-12 * max(1.0, cold.distance)
            np.testing.assert_allclose(np.linalg.norm(warm.point_a - warm.point_b), warm.distance, atol=1e-12)
            cold_total += cold.iterations
            warm_total += warm.iterations
            frames += 1
            # Resting: the same poses again converge in one or two iterations.
            rest = gjk_distance(a, pa, b, pb, simplex=warm.simplex)
            assert rest.iterations <= 2 and rest.distance == pytest.approx(warm.distance, abs=1e-12)
            resting_total += rest.iterations
            prev = warm
    assert warm_total < 0.6 * cold_total, (warm_total, cold_total)
    print(f"mean iterations: cold {cold_total / frames:.2f}, warm {warm_total / frames:.2f}, "
          f"resting {resting_total / frames:.2f}")


def test_warm_start_with_overlap_and_bad_cache_rows():
    a = BOX
    pb = pose(np.eye(3), [1.5, 0.2, 0.1])
    cold = gjk_distance(a, EYE, a, pb)
    assert cold.overlap and len(cold.simplex) == 4
    warm = gjk_distance(a, EYE, a, pb, simplex=cold.simplex)
    assert warm.overlap and warm.iterations == 0
    # Repeated rows are fine.
    dup = np.array([[0, 1], [0, 1], [3, 2]], np.int32)
    far = pose(np.eye(3), [5.0, 0.3, 0.2])
    r = gjk_distance(a, EYE, a, far, simplex=dup)
    assert r.distance == pytest.approx(3.0, abs=1e-12)


# ---------------------------------------------------------------------------
# Degenerate inputs
# ---------------------------------------------------------------------------


def test_degenerate_shapes_against_qp():
    rng = np.random.default_rng(4)
    flat_box = BOX * [1.0, 1.0, 0.0]  # zero thickness, every point twice
    tri = rng.normal(size=(3, 3))
    seg = rng.normal(size=(2, 3))
    dupl = np.repeat(rng.normal(size=(4, 3)), 3, axis=0)  # every vertex three times
    collinear = np.outer(np.linspace(-1, 1, 5), rng.normal(size=3))
    shapes = [flat_box, tri, seg, dupl, collinear, rng.normal(size=(1, 3))]
    for sa, sb in itertools.product(shapes, shapes):
        for _ in range(3):
            pa, pb = random_pose(rng), random_pose(rng, 2.0)
            wa, wb = world(sa, pa), world(sb, pb)
            r = gjk_distance(sa, pa, sb, pb)
            _, _, ref = closest_between_hulls(np.unique(wa, axis=0), np.unique(wb, axis=0))
            assert abs(r.distance - ref) <= 1e-9 * max(1.0, ref) or (ref < 1e-9 and r.overlap)


def test_identical_and_coincident_shapes():
    p = random_pose(np.random.default_rng(1))
    r = gjk_distance(BOX, p, BOX, p)
    assert r.overlap and r.core_overlap and r.distance == 0.0
    r = gjk_distance([[1.0, 2.0, 3.0]], EYE, [[1.0, 2.0, 3.0]], EYE)
    assert r.overlap and r.distance == 0.0
    np.testing.assert_array_equal(r.point_a, [1.0, 2.0, 3.0])
    # Touching exactly: face to face, edge to edge, vertex to vertex.
    for t in ([2.0, 0.3, 0.1], [2.0, 2.0, 0.5], [2.0, 2.0, 2.0]):
        assert gjk_distance(BOX, EYE, BOX, pose(np.eye(3), t)).overlap


def test_far_from_origin_and_max_iterations():
    rng = np.random.default_rng(12)
    a, b = rng.normal(size=(30, 3)), rng.normal(size=(30, 3))
    pa, pb = random_pose(rng), random_pose(rng)
    pb[:3, 3] = pa[:3, 3] + [4.0, 0.0, 0.0]
    near = gjk_distance(a, pa, b, pb)
    for off in (1e3, 1e6):
        qa, qb = pa.copy(), pb.copy()
        qa[:3, 3] += off
        qb[:3, 3] += off
        r = gjk_distance(a, qa, b, qb)
        assert abs(r.distance - near.distance) <= 1e-14 * off * 10
    capped = gjk_distance(a, pa, b, pb, max_iterations=1)
    assert capped.iterations == 1 and capped.distance >= near.distance - 1e-12


def test_world_frame_covariance():
    """Moving both shapes by one rigid motion moves the points and keeps the distance."""
    rng = np.random.default_rng(8)
    a, b = rng.normal(size=(20, 3)), rng.normal(size=(20, 3))
    pa, pb = random_pose(rng), random_pose(rng)
    pb[:3, 3] += 5.0
    m = random_pose(rng, 3.0)
    r1 = gjk_distance(a, pa, b, pb)
    r2 = gjk_distance(a, m @ pa, b, m @ pb)
    assert r2.distance == pytest.approx(r1.distance, abs=1e-12)
    np.testing.assert_allclose(r2.point_a, world(r1.point_a[None], m)[0], atol=1e-9)
    np.testing.assert_allclose(r2.point_b, world(r1.point_b[None], m)[0], atol=1e-9)


# ---------------------------------------------------------------------------
# The kernel and the edge checks
# ---------------------------------------------------------------------------


def test_kernel_matches_public_function():
    rng = np.random.default_rng(3)
    a, b = rng.normal(size=(12, 3)), rng.normal(size=(9, 3))
    pa, pb = random_pose(rng), random_pose(rng)
    pb[:3, 3] += 3.0
    rot, trans = relative_transform(pa, pb)
    simplex, pts = np.empty((4, 2), np.int32), np.empty((2, 3))
    d, n, it, status = gjk_kernel(a, b, rot, trans, np.zeros((0, 2), np.int32), 0, 128, simplex, pts)
    r = gjk_distance(a, pa, b, pb)
    assert status == GJK_SEPARATED and d == pytest.approx(r.distance, abs=1e-14) and it == r.iterations
    np.testing.assert_array_equal(simplex[:n], r.simplex)
    np.testing.assert_allclose(world(pts, pa), [r.point_a, r.point_b], atol=1e-12)
    # Overlap reported by status; out-of-range warm rows are ignored by the kernel.
    bad = np.array([[99, 0], [-1, 2]], np.int32)
    _, _, _, status = gjk_kernel(a, a, np.eye(3), np.zeros(3), bad, 2, 128, simplex, pts)
    assert status == GJK_OVERLAP


@pytest.mark.parametrize("arg", ["points_a", "pose_a", "points_b", "pose_b"])
@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_non_finite_inputs_name_the_argument(arg, bad):
    kw = dict(points_a=BOX.copy(), pose_a=np.eye(4), points_b=BOX.copy(), pose_b=pose(np.eye(3), [3, 0, 0]))
    kw[arg][0, 1] = bad
    with pytest.raises(ValueError, match=arg):
        gjk_distance(**kw)


@pytest.mark.parametrize("kw, name", [
    (dict(points_a=np.zeros((0, 3))), "points_a"),
    (dict(points_b=np.zeros((4, 2))), "points_b"),
    (dict(pose_a=np.eye(3)), "pose_a"),
    (dict(pose_b=np.diag([1.0, 1.0, -1.0, 1.0])), "pose_b"),
    (dict(pose_b=np.diag([2.0, 2.0, 2.0, 1.0])), "pose_b"),
    (dict(radius_a=-1.0), "radius_a"),
    (dict(radius_b=float("nan")), "radius_b"),
    (dict(simplex=[[0, 8]]), "simplex"),
    (dict(simplex=np.zeros((5, 2), int)), "simplex"),
    (dict(simplex=[[0.5, 1.0]]), "simplex"),
])
def test_bad_inputs_name_the_argument(kw, name):
    args = dict(points_a=BOX, pose_a=np.eye(4), points_b=BOX, pose_b=np.eye(4))
    args.update(kw)
    with pytest.raises(ValueError, match=name):
        gjk_distance(**args)
