"""collide_box_box_into against the hull kernel it mirrors, field by field, bit for bit.

Reference: :func:`collision.manifold.collide_hull_hull_kernel` (tested against analytic answers
and ``convex_convex_sat`` in tests/collision/test_manifold.py), both its default search and its
brute-force twin (``brute=True``: every edge pair and the plain face queries). The box kernel
computes the same values in the same order, so the manifold is compared with ``np.array_equal``
(no tolerance): status, kind, count, normal, points, depths, feature ids, and the coherence cache
after the call, starting from random caches (so that the cached-feature early-outs are exercised
too). The count of features tested and the SAT value are the brute-force twin's where the box
kernel visits every edge pair (boxes that are not parallelepipeds); for two parallelepipeds it
skips the edge classes whose closed-form bound rules them out, so it tests at most as many and
its SAT value is within the edge tolerance of the twin's (and equal whenever it skipped nothing).

Pairs: boxes of random half extents (and general hexahedra: a box's corners moved a little, still
convex with quad faces), random rotations; apart, within the margin, overlapping, and stacked
face to face with a small yaw (the resting pile, with its exact ties of coplanar faces).
"""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.spatial.transform import Rotation

from obbcollide.box_box import box_rows, box_work, collide_box_box_into, is_box
from obbcollide.hull_data import HullData
from obbcollide.manifold import ABS_TOL, EDGE_REL_TOL, collide_hull_hull_kernel, hull_arrays

CORNERS = np.array([[x, y, z] for x in (-1, 1) for y in (-1, 1) for z in (-1, 1)], float)


def box(half, center=(0.0, 0.0, 0.0)):
    return HullData.from_points(CORNERS * np.asarray(half, float) + np.asarray(center, float))


def pose(rot, t):
    p = np.eye(4)
    p[:3, :3] = rot
    p[:3, 3] = t
    return p


def yaw(a):
    return Rotation.from_rotvec([0.0, a, 0.0]).as_matrix()


def run_box(ha, pa, hb, pb, margin, cache):
    fa, ia = box_rows(ha)
    fb, ib = box_rows(hb)
    normal, p_a, p_b = np.zeros(3), np.zeros((4, 3)), np.zeros((4, 3))
    dep, ids = np.zeros(4), np.zeros(4, np.int64)
    st_, kind, cnt, tests, sat = collide_box_box_into(fa, ia, fb, ib, pa, pb, margin, min(ha.scale, hb.scale),
                                                      cache, box_work(), normal, p_a, p_b, dep, ids)
    return st_, kind, cnt, tests, sat, normal, p_a, p_b, dep, ids


def run_hull(ha, pa, hb, pb, margin, cache, brute):
    return collide_hull_hull_kernel(*hull_arrays(ha), *hull_arrays(hb), pa, pb, margin, min(ha.scale, hb.scale),
                                    cache, brute)


def assert_same(ha, pa, hb, pb, margin, cache0):
    """The box route's manifold and cache equal the hull kernel's brute-force twin's and the hull
    kernel's. Its count of features tested and SAT value: the twin's when either box is not a
    parallelepiped (every edge pair visited); otherwise at most the twin's count, and a SAT value
    within the edge tolerance, equal when the count is (nothing skipped). The hull kernel's own
    count can be lower than both (it skips faces its bounds rule out)."""
    c_box = cache0.copy()
    got = run_box(ha, pa, hb, pb, margin, c_box)
    both = box_rows(ha)[0][60] == 1.0 and box_rows(hb)[0][60] == 1.0
    for brute in (False, True):
        c_ref = cache0.copy()
        ref = run_hull(ha, pa, hb, pb, margin, c_ref, brute)
        for k, (x, y) in enumerate(zip(got, ref)):
            if k in (3, 4):  # the count of features tested and the SAT value, below
                continue
            assert np.array_equal(x, y), (brute, k, x, y)
        assert np.array_equal(c_box, c_ref), (brute, c_box, c_ref)
        if brute:
            tests, sat, tests_ref, sat_ref = got[3], got[4], ref[3], ref[4]
            if not both or tests == tests_ref:
                assert tests == tests_ref and sat == sat_ref, (tests, tests_ref, sat, sat_ref)
            else:
                assert tests < tests_ref
                face = -sat  # (the SAT value is minus the largest separation)
                assert abs(sat - sat_ref) <= EDGE_REL_TOL * abs(face) + ABS_TOL * min(ha.scale, hb.scale)
    return got


def random_box(rng, general=False):
    corners = CORNERS * rng.uniform(0.1, 1.0, 3)
    if general:  # a hexahedron: a tapered box (a frustum) under a random shear, faces still planar quads
        top = corners[:, 1] > 0
        corners[top] *= (rng.uniform(0.5, 1.0), 1.0, rng.uniform(0.5, 1.0))
        shear = np.eye(3) + rng.uniform(-0.3, 0.3, (3, 3))
        corners = corners @ shear.T
    h = HullData.from_points(corners + rng.normal(size=3) * 0.1)
    return h


def random_cache(rng):
    kind = int(rng.integers(-1, 3))
    return np.array([kind, rng.integers(-1, 12), rng.integers(-1, 12)], np.int64)


def test_box_rows_layout():
    h = box((0.25, 0.5, 1.0))
    assert is_box(h)
    f, i = box_rows(h)
    assert f.shape == (61,) and i.shape == (108,)
    assert np.array_equal(f[:24].reshape(8, 3), h.vertices) and np.array_equal(f[42:48], h.offsets)
    assert np.array_equal(i[:24], h.face_verts) and np.array_equal(i[48:72].reshape(12, 2), h.edge_verts)
    # a parallelepiped: its centre, half edges, and each edge's class (the half edge it runs along)
    assert f[60] == 1.0 and np.allclose(f[48:51], 0.0)
    half = f[51:60].reshape(3, 3)
    assert np.allclose(sorted(np.abs(half).sum(axis=1)), [0.25, 0.5, 1.0])
    d = h.vertices[h.edge_verts[:, 1]] - h.vertices[h.edge_verts[:, 0]]
    for e, k in zip(d, i[96:]):
        assert np.allclose(np.cross(e, half[k]), 0.0) and np.linalg.norm(e) == pytest.approx(2 * np.linalg.norm(half[k]))


def test_parallelepipeds_are_told_from_other_hexahedra():
    rng = np.random.default_rng(3)
    shear = np.eye(3) + rng.uniform(-0.4, 0.4, (3, 3))
    sheared = HullData.from_points((CORNERS * (0.3, 0.2, 0.5)) @ shear.T + (1.0, -2.0, 0.5))
    f, i = box_rows(sheared)
    assert f[60] == 1.0 and np.allclose(f[48:51], (1.0, -2.0, 0.5))
    assert sorted(np.bincount(i[96:], minlength=3).tolist()) == [4, 4, 4]
    tapered = CORNERS * (0.3, 0.2, 0.5)
    tapered[tapered[:, 1] > 0] *= (0.7, 1.0, 1.0)
    f, i = box_rows(HullData.from_points(tapered))
    assert f[60] == 0.0 and not f[48:60].any() and not i[96:].any()


def test_not_a_box_is_refused():
    tet = HullData.from_points(np.array([[0, 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, 1]], float))
    assert not is_box(tet)
    with pytest.raises(ValueError, match="box"):
        box_rows(tet)


def test_stacked_pair_face_contact():
    """A box resting on another (half 0.25, slight yaw): four points on A's top face, depth 1 mm."""
    h = box((0.25, 0.25, 0.25))
    got = assert_same(h, pose(yaw(0.1), (0, 0.25, 0)), h, pose(yaw(-0.13), (0.01, 0.749, 0.02)), 0.02,
                      np.full(3, -1, np.int64))
    st_, kind, cnt, tests, sat, normal, p_a, p_b, dep, ids = got
    assert st_ == 0 and kind == 0 and cnt == 4
    assert np.allclose(normal, (0, 1, 0)) and np.allclose(dep, 0.001)
    assert np.allclose(p_a - p_b, dep[:, None] * normal)


def test_bad_pose_status():
    h = box((0.5, 0.5, 0.5))
    bad = np.eye(4)
    bad[0, 0] = np.nan
    assert run_box(h, bad, h, np.eye(4), 0.0, np.full(3, -1, np.int64))[0] == 1
    skew = np.eye(4)
    skew[0, 1] = 0.5
    assert run_box(h, np.eye(4), h, skew, 0.0, np.full(3, -1, np.int64))[0] == 4


@settings(max_examples=200, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), spread=st.sampled_from([0.3, 0.8, 1.5]),
       margin=st.sampled_from([0.0, 0.02, 0.2]), general=st.booleans())
def test_random_pairs_equal_hull_kernel(seed, spread, margin, general):
    rng = np.random.default_rng(seed)
    ha, hb = random_box(rng, general), random_box(rng, general)
    if not (is_box(ha) and is_box(hb)):
        return  # a moved corner split a face: not a box (counted below)
    pa = pose(Rotation.random(random_state=rng).as_matrix(), rng.normal(size=3) * 0.1)
    pb = pose(Rotation.random(random_state=rng).as_matrix(), rng.normal(size=3) * spread)
    cache = random_cache(rng)
    assert_same(ha, pa, hb, pb, margin, cache)
    assert_same(ha, pa, hb, pb, margin, cache)  # again with the cache the first call left


@settings(max_examples=100, deadline=None)
@given(seed=st.integers(0, 2**32 - 1))
def test_stacked_piles_equal_hull_kernel(seed):
    """Face-to-face stacks (the resting pile): yaw only, coplanar faces, exact ties."""
    rng = np.random.default_rng(seed)
    h = box((0.25, 0.25, 0.25)) if rng.random() < 0.5 else random_box(rng)
    gap = float(rng.choice([-1e-3, 0.0, 1e-3, 0.03]))
    ya, yb = (0.0, 0.0) if rng.random() < 0.3 else rng.uniform(-0.3, 0.3, 2)
    pa = pose(yaw(ya), (0.0, 0.0, 0.0))
    pb = pose(yaw(yb), (rng.uniform(-0.2, 0.2), h.vertices[:, 1].max() - h.vertices[:, 1].min() + gap,
                        rng.uniform(-0.2, 0.2)))
    for cache in (np.full(3, -1, np.int64), random_cache(rng)):
        assert_same(h, pa, h, pb, 0.02, cache)


def test_general_hexahedra_are_exercised():
    """The random hexahedra of the property test are boxes by topology (not only rectangular ones)."""
    rng = np.random.default_rng(1)
    hulls = [random_box(rng, True) for _ in range(50)]
    assert sum(is_box(h) for h in hulls) > 40
    # not rectangular: some face normals are not perpendicular to the others
    assert any(np.abs(h.normals @ h.normals.T - np.round(h.normals @ h.normals.T)).max() > 0.05 for h in hulls)


def test_stacked_cubes_skip_the_edge_pairs_that_tie_the_face():
    """A landing stack (a little yaw, roll and pitch): the horizontal edge pairs measure about the
    face's separation and are not chosen; the box kernel leaves them out (fewer features tested)
    with the same manifold."""
    h = box((0.25, 0.25, 0.25))
    rng = np.random.default_rng(0)
    fewer = 0
    for _ in range(50):
        ra, rb = (Rotation.from_rotvec(rng.normal(size=3) * (0.03, 0.3, 0.03)).as_matrix() for _ in range(2))
        pa = pose(ra, (0.0, 0.25, 0.0))
        pb = pose(rb, (rng.uniform(-0.1, 0.1), 0.748 + rng.uniform(-0.01, 0.01), rng.uniform(-0.1, 0.1)))
        got = assert_same(h, pa, h, pb, 0.02, np.full(3, -1, np.int64))
        ref = run_hull(h, pa, h, pb, 0.02, np.full(3, -1, np.int64), True)
        fewer += got[3] < ref[3]
        assert got[3] <= ref[3]
    assert fewer >= 45
