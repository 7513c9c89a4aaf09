"""collide_hull_hull and HullData against analytic answers and convex_convex_sat.

References: hand-computed box configurations (corners, edge crossings, a
clipped overhang computed by enumerating corner-in-polygon and edge-edge
crossings, independently of Sutherland-Hodgman); ``collision.convex_convex_sat``
(all face normals and all edge-direction cross products, projections of every
vertex, no Gauss-map pruning) for the SAT minimum; brute-force enumeration of
4-subsets for the point reduction.

Tolerances: coordinates are O(1); geometric equalities to 1e-9 (absolute) or
1e-9 relative for depths.
"""

import collections
import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.spatial import ConvexHull
from scipy.spatial.transform import Rotation

from obbcollide import ConvexPolyhedron, convex_convex_sat
from obbcollide.hull_data import HullData
from obbcollide.manifold import (ABS_TOL, EDGE_REL_TOL, FACE_REL_TOL, SatCache, collide_hull_hull, match_contacts,
                                unpack_feature_id)

TOL = 1e-9
CORNERS = np.array([[x, y, z] for x in (-1, 1) for y in (-1, 1) for z in (-1, 1)], float)


def box(hx, hy, hz):
    return ConvexPolyhedron.from_points(CORNERS * [hx, hy, hz])


def pose(rot=None, t=(0, 0, 0)):
    p = np.eye(4)
    if rot is not None:
        p[:3, :3] = rot
    p[:3, 3] = t
    return p


def rot(axis, angle):
    return Rotation.from_rotvec(np.asarray(axis, float) / np.linalg.norm(axis) * angle).as_matrix()


def same_points(p, q, tol=TOL):
    """Equal as sets of points (any order)."""
    if len(p) != len(q):
        return False
    d = np.linalg.norm(p[:, None, :] - q[None, :, :], axis=2)
    return bool(np.all(d.min(1) <= tol) and np.all(d.min(0) <= tol))


def check_consistent(m, poly_a, pa, poly_b, pb, tol=1e-9):
    """Invariants of every manifold: unit normal, pa - pb = depth n, points on the surfaces, unique ids."""
    assert len(m) <= 4
    assert len(set(m.ids.tolist())) == len(m)
    if len(m) == 0:
        assert m.kind == "none"
        return
    assert abs(np.linalg.norm(m.normal) - 1.0) < 1e-12
    wa, wb = poly_a.transformed(pa), poly_b.transformed(pb)
    lone = np.array([unpack_feature_id(i).get("label_in") == ("lone", -1) for i in m.ids])
    on_a = np.abs((m.points_a @ wa.normals.T - wa.offsets).max(1))
    on_b = np.abs((m.points_b @ wb.normals.T - wb.offsets).max(1))
    assert on_a[~lone].max(initial=0) <= tol and on_b[~lone].max(initial=0) <= tol
    if m.kind != "edge_edge" or m.depths[0] >= 0:
        np.testing.assert_allclose(m.points_a - m.points_b, m.depths[:, None] * m.normal, atol=tol)
    assert np.all(np.diff(m.depths[:1].tolist() + [m.depths.max()]) >= 0)  # deepest first


# ---------------------------------------------------------------------------
# HullData
# ---------------------------------------------------------------------------


def test_hull_data_is_well_formed_and_cached():
    rng = np.random.default_rng(0)
    for k in range(30):
        poly = ConvexPolyhedron.from_points(rng.normal(size=(rng.integers(4, 40), 3)))
        h = HullData.from_polyhedron(poly)
        h.validate()
        assert HullData.from_polyhedron(poly) is h
        # The edge direction is n0 x n1 (the arc's plane normal on the Gauss map).
        e = h.vertices[h.edge_verts[:, 1]] - h.vertices[h.edge_verts[:, 0]]
        c = np.cross(h.normals[h.edge_faces[:, 0]], h.normals[h.edge_faces[:, 1]])
        assert np.all(np.einsum("ij,ij->i", e, c) > 0)
    hb = HullData.from_polyhedron(box(1, 2, 3))
    hb.validate()
    assert (hb.n_faces, hb.n_edges, len(hb.vertices)) == (6, 12, 8)


def test_flat_and_bad_inputs_raise_naming_the_argument():
    flat = np.array([[0, 0, 0], [1, 0, 0], [0, 1, 0], [1, 1, 0.0]])
    with pytest.raises(ValueError, match="points"):
        ConvexPolyhedron.from_points(flat)
    with pytest.raises(ValueError, match="hull_a"):
        collide_hull_hull(flat, np.eye(4), box(1, 1, 1), np.eye(4))
    with pytest.raises(ValueError, match="hull_b"):
        collide_hull_hull(box(1, 1, 1), np.eye(4), flat, np.eye(4))
    with pytest.raises(ValueError):
        HullData.from_polyhedron("a box")
    a = box(1, 1, 1)
    for bad in (np.nan, np.inf):
        p = np.eye(4)
        p[0, 3] = bad
        with pytest.raises(ValueError, match="pose_a"):
            collide_hull_hull(a, p, a, np.eye(4))
        with pytest.raises(ValueError, match="pose_b"):
            collide_hull_hull(a, np.eye(4), a, p)
    with pytest.raises(ValueError, match="pose_b.*rigid"):
        collide_hull_hull(a, np.eye(4), a, np.diag([2.0, 1, 1, 1]))
    with pytest.raises(ValueError, match="pose_a"):
        collide_hull_hull(a, np.eye(3), a, np.eye(4))
    with pytest.raises(ValueError, match="margin"):
        collide_hull_hull(a, np.eye(4), a, np.eye(4), margin=-1.0)
    with pytest.raises(ValueError, match="margin"):
        collide_hull_hull(a, np.eye(4), a, np.eye(4), margin=np.nan)
    with pytest.raises(ValueError, match="cache"):
        collide_hull_hull(a, np.eye(4), a, np.eye(4), cache=[0, 1, 2])


# ---------------------------------------------------------------------------
# Analytic box cases
# ---------------------------------------------------------------------------

GROUND = box(2.0, 0.5, 2.0)  # top face at y = 0.5
CUBE = box(0.5, 0.5, 0.5)


def resting_pose(d, yaw=0.0, x=0.0, z=0.0):
    """CUBE on GROUND's top face, penetrating by d, turned by yaw about +y."""
    return pose(rot([0, 1, 0], yaw), [x, 1.0 - d, z])


@pytest.mark.parametrize("d", [0.0, 1e-3, 0.05])
def test_box_resting_on_box_gives_the_four_bottom_corners(d):
    pb = resting_pose(d)
    m = collide_hull_hull(GROUND, np.eye(4), CUBE, pb)
    check_consistent(m, GROUND, np.eye(4), CUBE, pb)
    assert m.kind == "face_a" and len(m) == 4
    np.testing.assert_allclose(m.normal, [0, 1, 0], atol=1e-15)
    np.testing.assert_allclose(m.depths, d, atol=1e-12)
    bottom = CORNERS[CORNERS[:, 1] < 0] * 0.5 + [0, 1.0 - d, 0]
    assert same_points(m.points_b, bottom)
    assert same_points(m.points_a, bottom + [0, d, 0])
    # The same pair the other way round: the normal flips, the patch is the same.
    r = collide_hull_hull(CUBE, pb, GROUND, np.eye(4))
    check_consistent(r, CUBE, pb, GROUND, np.eye(4))
    assert len(r) == 4 and r.kind in ("face_a", "face_b")
    np.testing.assert_allclose(r.normal, [0, -1, 0], atol=1e-15)
    np.testing.assert_allclose(r.depths, d, atol=1e-12)
    assert same_points(r.points_a, bottom)
    # Inside both hulls: the cube's corners are in the ground, their projections in the cube.
    assert np.all(np.abs(m.points_b[:, [0, 2]]) <= 2.0) and np.all(m.points_b[:, 1] <= 0.5 + TOL)


@settings(max_examples=40, deadline=None)
@given(yaw=st.floats(-np.pi, np.pi), d=st.floats(0.0, 0.2), x=st.floats(-1.0, 1.0), z=st.floats(-1.0, 1.0))
def test_resting_box_turned_about_the_normal_keeps_four_points(yaw, d, x, z):
    pb = resting_pose(d, yaw, x, z)
    m = collide_hull_hull(GROUND, np.eye(4), CUBE, pb, margin=1e-12)  # d = 0 touches up to rounding
    check_consistent(m, GROUND, np.eye(4), CUBE, pb)
    assert m.kind == "face_a" and len(m) == 4
    np.testing.assert_allclose(m.normal, [0, 1, 0], atol=1e-12)
    np.testing.assert_allclose(m.depths, d, atol=1e-12)
    bottom = (CORNERS[CORNERS[:, 1] < 0] * 0.5) @ pb[:3, :3].T + pb[:3, 3]
    assert same_points(m.points_b, bottom)


@pytest.mark.parametrize("tilt", [0.2, np.pi / 6, 0.7])
def test_box_tilted_on_an_edge_gives_two_points(tilt):
    d = 0.01
    r = rot([0, 0, 1], tilt)
    low = (CORNERS * 0.5 @ r.T)[:, 1].min()  # height of the lowest edge below the centre
    pb = pose(r, [0.3, 0.5 - low - d, 0.0])
    m = collide_hull_hull(GROUND, np.eye(4), CUBE, pb)
    check_consistent(m, GROUND, np.eye(4), CUBE, pb)
    assert m.kind == "face_a" and len(m) == 2
    np.testing.assert_allclose(m.depths, d, atol=1e-12)
    verts = CORNERS * 0.5 @ r.T + pb[:3, 3]
    edge = verts[np.isclose(verts[:, 1], verts[:, 1].min())]
    assert same_points(m.points_b, edge)


def test_box_on_its_corner_gives_one_point():
    d = 0.02
    # Turn the cube so that its diagonal (1, 1, 1) points straight up.
    r, _ = Rotation.align_vectors([[0, 1, 0]], [[1, 1, 1]])
    r = r.as_matrix()
    low = (CORNERS * 0.5 @ r.T)[:, 1].min()
    pb = pose(r, [0.1, 0.5 - low - d, -0.2])
    m = collide_hull_hull(GROUND, np.eye(4), CUBE, pb)
    check_consistent(m, GROUND, np.eye(4), CUBE, pb)
    assert m.kind == "face_a" and len(m) == 1
    np.testing.assert_allclose(m.depths, [d], atol=1e-12)
    corner = (CORNERS * 0.5 @ r.T + pb[:3, 3])
    np.testing.assert_allclose(m.points_b[0], corner[corner[:, 1].argmin()], atol=1e-12)
    np.testing.assert_allclose(m.normal, [0, 1, 0], atol=1e-12)


@pytest.mark.parametrize("d", [1e-3, 0.05, 0.2])
def test_boxes_crossing_edge_to_edge(d):
    # A: turned 45 deg about x, its top edge runs along x at height sqrt(2)/2.
    # B: turned 45 deg about z, its bottom edge runs along z at y_B - sqrt(2)/2.
    h = np.sqrt(0.5)
    pa = pose(rot([1, 0, 0], np.pi / 4))
    pb = pose(rot([0, 0, 1], np.pi / 4), [0.0, 2 * h - d, 0.0])
    m = collide_hull_hull(CUBE, pa, CUBE, pb)
    check_consistent(m, CUBE, pa, CUBE, pb)
    assert m.kind == "edge_edge" and len(m) == 1
    np.testing.assert_allclose(m.normal, [0, 1, 0], atol=1e-12)
    np.testing.assert_allclose(m.depths, [d], rtol=1e-12)
    np.testing.assert_allclose(m.points_a[0], [0, h, 0], atol=1e-12)
    np.testing.assert_allclose(m.points_b[0], [0, h - d, 0], atol=1e-12)
    s = convex_convex_sat(CUBE.transformed(pa), None, CUBE.transformed(pb), None)
    assert s.kind == "edge_edge" and abs(s.depth - d) < 1e-12


def clipped_square(square, rect_lo, rect_hi):
    """Corners of (rotated square) n (axis-aligned rectangle), by enumeration.

    Candidates: corners of each shape inside the other, and crossings of every
    edge pair; the polygon is their convex hull. No clipping algorithm involved.
    """
    rect = np.array([[rect_lo[0], rect_lo[1]], [rect_hi[0], rect_lo[1]], [rect_hi[0], rect_hi[1]],
                     [rect_lo[0], rect_hi[1]]])
    cand = [p for p in square if np.all(p >= np.array(rect_lo) - TOL) and np.all(p <= np.array(rect_hi) + TOL)]
    c = square.mean(0)
    half = np.linalg.norm(square[0] - square[1]) / 2
    u = (square[1] - square[0]) / (2 * half)
    w = np.array([-u[1], u[0]])
    cand += [p for p in rect if abs((p - c) @ u) <= half + TOL and abs((p - c) @ w) <= half + TOL]
    for (p, q), (r, s) in itertools.product(zip(square, np.roll(square, -1, 0)), zip(rect, np.roll(rect, -1, 0))):
        mat = np.array([q - p, r - s]).T
        if abs(np.linalg.det(mat)) < 1e-14:
            continue
        t, k = np.linalg.solve(mat, r - p)
        if -TOL <= t <= 1 + TOL and -TOL <= k <= 1 + TOL:
            cand.append(p + t * (q - p))
    cand = np.array(cand)
    return cand[ConvexHull(cand).vertices]


def quad_area(p):
    """Area of the convex hull of up to four 2D points."""
    if len(p) < 3:
        return 0.0
    try:
        return ConvexHull(p).volume
    except Exception:
        return 0.0


@pytest.mark.parametrize("x, z, yaw", [(1.8, 0.0, 0.0), (1.8, 1.7, 0.0), (1.9, 1.75, 0.4), (1.6, -1.8, 1.0)])
def test_overhanging_box_gives_the_clipped_polygon(x, z, yaw):
    d = 0.01
    pb = resting_pose(d, yaw, x, z)
    m = collide_hull_hull(GROUND, np.eye(4), CUBE, pb, margin=1e-12)  # d = 0 touches up to rounding
    check_consistent(m, GROUND, np.eye(4), CUBE, pb)
    bottom = (CORNERS[CORNERS[:, 1] < 0] * 0.5) @ pb[:3, :3].T + pb[:3, 3]
    sq = bottom[:, [0, 2]]
    sq = sq[ConvexHull(sq).vertices]  # counter-clockwise order
    poly = clipped_square(sq, (-2, -2), (2, 2))
    got = m.points_a[:, [0, 2]]
    np.testing.assert_allclose(m.depths, d, atol=1e-12)
    np.testing.assert_allclose(m.points_a[:, 1], 0.5, atol=1e-12)
    # Every contact is a corner of the clipped polygon.
    dist = np.linalg.norm(got[:, None] - poly[None], axis=2).min(1)
    assert dist.max() <= 1e-9
    if len(poly) <= 4:
        assert same_points(got, poly)
    else:
        # Reduced: the kept quad holds nearly the largest area of any 4 corners.
        best = max(quad_area(poly[list(s)]) for s in itertools.combinations(range(len(poly)), 4))
        assert len(m) == 4 and quad_area(got) >= 0.9 * best


def test_overhang_hand_computed():
    # Cube centred at x = 1.8 on a ground reaching x = 2: the patch is x in [1.3, 2], z in [-0.5, 0.5].
    m = collide_hull_hull(GROUND, np.eye(4), CUBE, resting_pose(0.01, 0.0, 1.8, 0.0))
    want = np.array([[1.3, 0.5, -0.5], [2.0, 0.5, -0.5], [2.0, 0.5, 0.5], [1.3, 0.5, 0.5]])
    assert same_points(m.points_a, want)
    kinds = collections.Counter(tuple(sorted((unpack_feature_id(i)["label_in"][0],
                                              unpack_feature_id(i)["label_out"][0]))) for i in m.ids)
    assert kinds == {("inc", "inc"): 2, ("inc", "ref"): 2}  # two cube corners, two edge crossings


# ---------------------------------------------------------------------------
# Against convex_convex_sat on random hulls
# ---------------------------------------------------------------------------


def random_posed_pair(rng, k, n_max=20):
    a = ConvexPolyhedron.from_points(rng.normal(size=(rng.integers(4, n_max), 3)))
    b = ConvexPolyhedron.from_points(rng.normal(size=(rng.integers(4, n_max), 3)) * rng.uniform(0.2, 1.5))
    pa = pose(Rotation.random(random_state=k).as_matrix(), rng.normal(size=3))
    pb = pose(Rotation.random(random_state=k + 100000).as_matrix(), rng.normal(size=3) * 1.4)
    return a, pa, b, pb


def compare_with_sat(a, pa, b, pb, m):
    """The checks shared by the random tests; returns (sat result, kinds agree)."""
    wa, wb = a.transformed(pa), b.transformed(pb)
    s = convex_convex_sat(wa, None, wb, None)
    if abs(s.depth) < 1e-9:
        return s, None  # touching within rounding: the yes/no is decided by rounding
    assert s.separated == (m.kind == "none")
    if s.separated:
        return s, None
    # The same minimum over the same axes (Gauss-map pruning drops no Minkowski face).
    assert abs(m.sat_depth - s.depth) <= TOL * max(1.0, s.depth)
    # The manifold's axis: its depth along the normal, from every vertex.
    along = (wa.vertices @ m.normal).max() - (wb.vertices @ m.normal).min()
    assert along <= m.depths.max() + TOL or m.kind != s.kind
    if m.kind == s.kind:
        assert abs(m.depths.max() - s.depth) <= TOL * max(1.0, s.depth)
        assert abs(along - s.depth) <= TOL * max(1.0, s.depth)
        assert np.abs(m.normal - s.axis).max() <= 1e-7 or abs(along - s.depth) <= TOL
        return s, True
    # Otherwise only the face bias can have moved it: an edge minimum answered by a
    # face, or B's face by A's, within the stated tolerances.
    assert (s.kind, m.kind) in (("edge_edge", "face_a"), ("edge_edge", "face_b"), ("face_b", "face_a"))
    scale = min(np.ptp(a.vertices, 0).max(), np.ptp(b.vertices, 0).max())
    # (edge -> face B by EDGE_REL_TOL, then face B -> face A by FACE_REL_TOL)
    bound = (s.depth * (1 + EDGE_REL_TOL) + ABS_TOL * scale) * (1 + FACE_REL_TOL) + ABS_TOL * scale
    assert s.depth - TOL <= along <= bound + TOL
    assert m.depths.max() <= along + TOL
    return s, False


def test_random_hulls_agree_with_convex_convex_sat():
    rng = np.random.default_rng(5)
    tally = collections.Counter()
    for k in range(1500):
        a, pa, b, pb = random_posed_pair(rng, k)
        m = collide_hull_hull(a, pa, b, pb)
        check_consistent(m, a, pa, b, pb)
        s, agree = compare_with_sat(a, pa, b, pb, m)
        tally[("sep" if s.separated else "pen", s.kind, agree)] += 1
    pen = sum(c for (p, _, _), c in tally.items() if p == "pen")
    agree = sum(c for (p, _, a), c in tally.items() if p == "pen" and a)
    assert 300 < pen < 1200
    assert agree >= 0.65 * pen  # deep random overlaps: the face bias decides the rest
    assert all(sum(c for (p, kk, _), c in tally.items() if kk == kind and p == "pen") > 50
               for kind in ("face_a", "face_b", "edge_edge"))


def test_shallow_contacts_agree_with_sat_and_keep_the_deepest_point():
    """B is slid along SAT's axis so the penetration is small (the physics regime)."""
    rng = np.random.default_rng(6)
    agree = total = lone = 0
    for k in range(600):
        a, pa, b, pb = random_posed_pair(rng, k)
        s = convex_convex_sat(a.transformed(pa), None, b.transformed(pb), None)
        if s.separated:
            continue
        pb[:3, 3] += (s.depth - rng.uniform(1e-4, 0.05)) * s.axis  # same axis, depth as drawn
        m = collide_hull_hull(a, pa, b, pb)
        check_consistent(m, a, pa, b, pb)
        _, ok = compare_with_sat(a, pa, b, pb, m)
        total += 1
        agree += bool(ok)
        lone += any(unpack_feature_id(i).get("label_in") == ("lone", -1) for i in m.ids)
    assert total > 150 and agree >= 0.95 * total and lone == 0


@pytest.mark.parametrize("n", [32, 64])
def test_larger_hulls_agree_with_sat(n):
    rng = np.random.default_rng(n)
    for k in range(40):
        a = ConvexPolyhedron.from_points(rng.normal(size=(n, 3)))
        b = ConvexPolyhedron.from_points(rng.normal(size=(n, 3)))
        pa = pose(Rotation.random(random_state=k).as_matrix())
        pb = pose(Rotation.random(random_state=k + 7).as_matrix(), rng.normal(size=3) * 2.0)
        m = collide_hull_hull(a, pa, b, pb)
        check_consistent(m, a, pa, b, pb)
        compare_with_sat(a, pa, b, pb, m)


# ---------------------------------------------------------------------------
# Margin, persistence, coherence, degenerate cases
# ---------------------------------------------------------------------------


def test_margin_gives_speculative_points():
    gap = 0.03
    pb = resting_pose(-gap)
    assert collide_hull_hull(GROUND, np.eye(4), CUBE, pb).kind == "none"
    assert collide_hull_hull(GROUND, np.eye(4), CUBE, pb, margin=gap * 0.99).kind == "none"
    m = collide_hull_hull(GROUND, np.eye(4), CUBE, pb, margin=0.05)
    check_consistent(m, GROUND, np.eye(4), CUBE, pb)
    assert m.kind == "face_a" and len(m) == 4
    np.testing.assert_allclose(m.depths, -gap, atol=1e-12)
    assert abs(m.sat_depth + gap) < 1e-12
    # Tilted: only the corners within the margin are kept.
    r = rot([0, 0, 1], 0.1)
    low = (CORNERS * 0.5 @ r.T)[:, 1].min()
    pt = pose(r, [0, 0.5 - low + 0.01, 0])
    m = collide_hull_hull(GROUND, np.eye(4), CUBE, pt, margin=0.02)
    assert len(m) == 2 and np.all(m.depths >= -0.02) and np.allclose(m.depths, -0.01)
    # Edge-edge speculative contact.
    h = np.sqrt(0.5)
    pa, pe = pose(rot([1, 0, 0], np.pi / 4)), pose(rot([0, 0, 1], np.pi / 4), [0, 2 * h + 0.01, 0])
    m = collide_hull_hull(CUBE, pa, CUBE, pe, margin=0.02)
    assert m.kind == "edge_edge" and np.allclose(m.depths, [-0.01])


def test_touching_exactly_is_a_contact_with_zero_depth():
    m = collide_hull_hull(GROUND, np.eye(4), CUBE, resting_pose(0.0))
    assert m.kind == "face_a" and len(m) == 4 and np.all(m.depths == 0.0)


def test_coincident_hulls():
    for poly in (CUBE, box(1.0, 0.25, 0.5)):
        m = collide_hull_hull(poly, np.eye(4), poly, np.eye(4))
        check_consistent(m, poly, np.eye(4), poly, np.eye(4))
        s = convex_convex_sat(poly, None, poly, None)
        assert m.kind == "face_a" and len(m) == 4
        np.testing.assert_allclose(m.depths, s.depth, atol=1e-12)
        np.testing.assert_allclose(m.sat_depth, 2 * np.ptp(poly.vertices, 0).min() / 2, atol=1e-12)
    rng = np.random.default_rng(3)
    poly = ConvexPolyhedron.from_points(rng.normal(size=(30, 3)))
    p = pose(Rotation.random(random_state=3).as_matrix(), [1, 2, 3])
    m = collide_hull_hull(poly, p, poly, p)
    check_consistent(m, poly, p, poly, p)
    s, _ = compare_with_sat(poly, p, poly, p, m)
    assert not s.separated and len(m) >= 1


@settings(max_examples=30, deadline=None)
@given(yaw=st.floats(-np.pi, np.pi), x=st.floats(-1.2, 1.2), z=st.floats(-1.2, 1.2),
       tilt=st.sampled_from([0.0, 0.3]), seed=st.integers(0, 2**31 - 1))
def test_a_tiny_motion_keeps_the_ids(yaw, x, z, tilt, seed):
    rng = np.random.default_rng(seed)
    r = rot([0, 1, 0], yaw) @ rot([0, 0, 1], tilt)
    low = (CORNERS * 0.5 @ r.T)[:, 1].min()
    p0 = pose(r, [x, 0.5 - low - 0.01, z])
    m0 = collide_hull_hull(GROUND, np.eye(4), CUBE, p0)
    # Move by ~1e-4: translation and a small rotation.
    p1 = p0.copy()
    p1[:3, :3] = rot(rng.normal(size=3), 1e-4) @ p0[:3, :3]
    p1[:3, 3] += rng.normal(size=3) * 1e-4
    m1 = collide_hull_hull(GROUND, np.eye(4), CUBE, p1)
    assert len(m0) == len(m1) > 0 and len(set(m0.ids.tolist())) == len(m0)
    assert set(m0.ids.tolist()) == set(m1.ids.tolist())
    idx = match_contacts(m0.ids, m0.points, m1.ids, m1.points, tol=0.0)
    assert np.all(idx >= 0)
    np.testing.assert_array_equal(m0.ids[idx], m1.ids)
    assert np.abs(m0.points[idx] - m1.points).max() < 1e-3


def test_cache_makes_the_next_separated_call_one_test():
    rng = np.random.default_rng(4)
    a = ConvexPolyhedron.from_points(rng.normal(size=(40, 3)))
    b = ConvexPolyhedron.from_points(rng.normal(size=(40, 3)))
    pb = pose(Rotation.random(random_state=1).as_matrix(), [3.5, 0.3, 0.0])
    cache = SatCache()
    first = collide_hull_hull(a, np.eye(4), b, pb, cache=cache)
    assert first.kind == "none" and first.tests > 1 and cache.kind != "none"
    # Small motions: the cached feature keeps separating, one test each.
    for step in range(20):
        pb[:3, 3] += rng.normal(size=3) * 1e-3
        m = collide_hull_hull(a, np.eye(4), b, pb, cache=cache)
        assert m.kind == "none" and m.tests == 1
        assert collide_hull_hull(a, np.eye(4), b, pb).tests > 1  # without the cache
    # Brought into contact: the cached axis fails, the full test runs and finds the contact.
    pb[:3, 3] = [0.3, 0.0, 0.0]
    m = collide_hull_hull(a, np.eye(4), b, pb, cache=cache)
    ref = collide_hull_hull(a, np.eye(4), b, pb)
    assert m.kind != "none" and m.tests == ref.tests + 1
    np.testing.assert_array_equal(m.ids, ref.ids)
    assert cache.kind == m.kind
    # A raw int64 array works the same; a stale cache with bad indices is ignored.
    raw = np.array([0, 10**6, -1], dtype=np.int64)
    assert collide_hull_hull(a, np.eye(4), b, pb, cache=raw).kind == ref.kind


def test_cache_on_an_edge_pair():
    h = np.sqrt(0.5)
    pa = pose(rot([1, 0, 0], np.pi / 4))
    pb = pose(rot([0, 0, 1], np.pi / 4), [0, 2 * h + 0.1, 0])
    cache = SatCache()
    m = collide_hull_hull(CUBE, pa, CUBE, pb, cache=cache)
    assert m.kind == "none"
    m2 = collide_hull_hull(CUBE, pa, CUBE, pb, cache=cache)
    assert m2.kind == "none" and m2.tests == 1


def test_a_cached_feature_gives_the_full_search_value_bit_for_bit():
    # The cached feature is tested before B is moved into A's frame, from values computed on the
    # spot: its separation must be the very number the full search finds for that feature (a face
    # of A, a face of B or an edge pair), and a cache that no longer separates must change nothing.
    rng = np.random.default_rng(11)
    kinds, checked = collections.Counter(), 0
    for k in range(300):
        a, pa, b, pb = random_posed_pair(rng, k)
        pb[:3, 3] *= 2.0  # mostly apart
        cache = SatCache()
        full = collide_hull_hull(a, pa, b, pb, cache=cache)
        if full.kind != "none" or cache.kind == "none":
            continue
        again = collide_hull_hull(a, pa, b, pb, cache=cache.data.copy())
        assert again.kind == "none" and again.tests == 1
        assert again.sat_depth == full.sat_depth  # the same number, not merely close
        kinds[cache.kind] += 1
        # the same cache on poses where the pair touches: the cached axis fails and the full search runs
        near = pb.copy()
        near[:3, 3] = pa[:3, 3] + 0.2 * (pb[:3, 3] - pa[:3, 3])
        ref = collide_hull_hull(a, pa, b, near)
        got = collide_hull_hull(a, pa, b, near, cache=cache.data.copy())
        if ref.kind != "none":
            checked += 1
            assert got.kind == ref.kind and got.tests == ref.tests + 1 and got.sat_depth == ref.sat_depth
            for name in ("normal", "points_a", "points_b", "depths", "ids"):
                np.testing.assert_array_equal(getattr(got, name), getattr(ref, name))
    assert kinds["face_a"] > 10 and kinds["face_b"] > 10 and kinds["edge_edge"] > 3, kinds
    assert checked > 20
