"""convex_convex_sat against independent references: LP feasibility and sampled directions.

Tolerances: coordinates are O(1); we skip configurations whose true gap or
penetration is below 1e-7, where the yes/no answer is decided by rounding.
"""

import numpy as np
import pytest
from scipy.optimize import linprog
from scipy.spatial.transform import Rotation

from obbcollide import ConvexPolyhedron, convex_convex_sat


def lp_intersect(va, vb):
    """Independent reference: is there x = sum l_i a_i = sum m_j b_j (l, m convex weights)?"""
    na, nb = len(va), len(vb)
    a_eq = np.zeros((5, na + nb))
    a_eq[:3, :na] = va.T
    a_eq[:3, na:] = -vb.T
    a_eq[3, :na] = 1.0
    a_eq[4, na:] = 1.0
    b_eq = np.array([0, 0, 0, 1, 1.0])
    res = linprog(np.zeros(na + nb), A_eq=a_eq, b_eq=b_eq, bounds=(0, None), method="highs")
    return res.status == 0


def overlap_along(va, vb, u):
    pa, pb = va @ u, vb @ u
    return min(pa.max() - pb.min(), pb.max() - pa.min())


def random_pair(rng, k):
    a = rng.normal(size=(rng.integers(4, 16), 3))
    b = rng.normal(size=(rng.integers(4, 16), 3)) * rng.uniform(0.2, 1.5)
    b = b @ Rotation.random(random_state=k).as_matrix().T + rng.normal(size=3) * 1.4
    return ConvexPolyhedron.from_points(a), ConvexPolyhedron.from_points(b)


def test_yes_no_equals_lp_feasibility():
    rng = np.random.default_rng(7)
    hits = 0
    for k in range(600):
        pa, pb = random_pair(rng, k)
        r = convex_convex_sat(pa, None, pb, None)
        if abs(r.depth) < 1e-7:
            continue
        assert r.separated == (not lp_intersect(pa.vertices, pb.vertices)), k
        hits += not r.separated
    assert 100 < hits < 500  # both answers well represented


def test_penetration_depth_is_minimal_and_sufficient():
    rng = np.random.default_rng(11)
    dirs = rng.normal(size=(4000, 3))
    dirs /= np.linalg.norm(dirs, axis=1)[:, None]
    checked = 0
    for k in range(300):
        pa, pb = random_pair(rng, k)
        r = convex_convex_sat(pa, None, pb, None)
        if r.separated or r.depth < 1e-6:
            continue
        checked += 1
        assert np.isclose(np.linalg.norm(r.axis), 1.0)
        # Minimal: no sampled direction needs a shorter translation.
        sampled = min(overlap_along(pa.vertices, pb.vertices, u) for u in dirs)
        assert r.depth <= sampled + 1e-12
        # Sufficient: moving B by depth along the axis separates the projections.
        moved = pb.vertices + r.depth * r.axis
        assert (moved @ r.axis).min() >= (pa.vertices @ r.axis).max() - 1e-12
        # And moving it by a bit less does not separate the hulls (LP, whose
        # feasibility tolerance is ~1e-7, hence the 1e-4 margin).
        if r.depth > 1e-3:
            moved = pb.vertices + (r.depth - 1e-4) * r.axis
            assert lp_intersect(pa.vertices, moved)
    assert checked > 50


def test_separated_gap_is_a_lower_bound_and_axis_separates():
    rng = np.random.default_rng(3)
    checked = 0
    for k in range(300):
        pa, pb = random_pair(rng, k)
        r = convex_convex_sat(pa, None, pb, None)
        if not r.separated:
            continue
        checked += 1
        gap = -r.depth
        pa_max = (pa.vertices @ r.axis).max()
        pb_min = (pb.vertices @ r.axis).min()
        assert np.isclose(pb_min - pa_max, gap, atol=1e-12)
        # The true distance (closest points of the hulls, from a fine QP) is >= gap.
        from scipy.optimize import minimize

        na, nb = len(pa.vertices), len(pb.vertices)

        def f(w):
            d = w[:na] @ pa.vertices - w[na:] @ pb.vertices
            return d @ d

        cons = [{"type": "eq", "fun": lambda w: w[:na].sum() - 1},
                {"type": "eq", "fun": lambda w: w[na:].sum() - 1}]
        w0 = np.r_[np.full(na, 1 / na), np.full(nb, 1 / nb)]
        res = minimize(f, w0, constraints=cons, bounds=[(0, 1)] * (na + nb), method="SLSQP",
                       options={"ftol": 1e-14, "maxiter": 500})
        assert gap <= np.sqrt(max(res.fun, 0.0)) + 1e-6
    assert checked > 50


def box(h, center=(0, 0, 0), rot=None):
    c = np.array([[i, j, k] for i in (-1, 1) for j in (-1, 1) for k in (-1, 1)], float) * h
    if rot is not None:
        c = c @ rot.T
    return c + center


def test_boxes_analytic_depth_and_axis():
    # Two axis-aligned unit boxes overlapping by 0.25 in x, 0.5 in y, 1.0 in z.
    a = box(np.array([1.0, 1.0, 1.0]))
    b = box(np.array([1.0, 1.0, 1.0]), center=(1.75, 1.5, 1.0))
    r = convex_convex_sat(a, None, b, None)
    assert not r.separated and r.depth == pytest.approx(0.25, abs=1e-12)
    assert np.allclose(r.axis, [1, 0, 0]) and r.kind == "face_a"
    # Separated by 0.3 along -y: axis points from A to B.
    b = box(np.array([1.0, 1.0, 1.0]), center=(0.2, -2.3, 0.1))
    r = convex_convex_sat(a, None, b, None)
    assert r.separated and r.depth == pytest.approx(-0.3, abs=1e-12)
    assert np.allclose(r.axis, [0, -1, 0])
    assert not bool(r)


def test_edge_edge_axis():
    # Two boxes rotated 45 degrees about different axes meet edge to edge.
    ra = Rotation.from_euler("x", 45, degrees=True).as_matrix()
    rb = Rotation.from_euler("z", 45, degrees=True).as_matrix()
    a = box(np.ones(3), rot=ra)
    top_a = np.sqrt(2.0)  # edge of A at z = sqrt 2
    b = box(np.ones(3), center=(0, 0, top_a + np.sqrt(2.0) + 0.1), rot=rb @ Rotation.from_euler("y", 45, degrees=True).as_matrix())
    r = convex_convex_sat(a, None, b, None)
    assert r.separated
    assert r.depth <= -0.099


def test_faces_given_explicitly_and_first_separating():
    cube = box(np.ones(3))
    from scipy.spatial import ConvexHull

    hull = ConvexHull(cube)
    faces = hull.simplices.copy()
    e = np.cross(cube[faces[:, 1]] - cube[faces[:, 0]], cube[faces[:, 2]] - cube[faces[:, 0]])
    inward = np.einsum("ij,ij->i", e, hull.equations[:, :3]) < 0
    faces[inward] = faces[inward][:, ::-1]
    far = cube + [5.0, 0, 0]
    r = convex_convex_sat(cube, faces, far, faces, first_separating=True)
    assert r.separated and r.axes_tested >= 1
    r2 = convex_convex_sat(cube, faces, far, None)
    assert r2.depth == pytest.approx(-3.0)


def test_bad_input():
    cube = box(np.ones(3))
    with pytest.raises(ValueError, match="verts_a"):
        convex_convex_sat(np.zeros((4, 3)), None, cube, None)  # flat
    with pytest.raises(ValueError, match="verts_b"):
        convex_convex_sat(cube, None, [[np.nan, 0, 0]] * 5, None)
    with pytest.raises(ValueError, match="faces"):
        convex_convex_sat(cube, [[0, 1, 99]], cube, None)
    with pytest.raises(ValueError, match="convex"):
        # A non-convex "cube" with one vertex pushed in: its own faces are not convex.
        from scipy.spatial import ConvexHull

        dent = cube.copy()
        hull = ConvexHull(cube)
        faces = hull.simplices.copy()
        e = np.cross(cube[faces[:, 1]] - cube[faces[:, 0]], cube[faces[:, 2]] - cube[faces[:, 0]])
        inward = np.einsum("ij,ij->i", e, hull.equations[:, :3]) < 0
        faces[inward] = faces[inward][:, ::-1]
        dent[7] *= 0.2
        convex_convex_sat(dent, faces, cube, None)
