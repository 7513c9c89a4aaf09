"""Property tests for collision.closest_point (closest point on one primitive).

Every function is compared with an independent reference from
``tests/_reference.py`` (active-set enumeration of the exact QP for polytopes,
KKT solve for planes, sampling + BFGS/SLSQP for spheres); see the tolerances
documented there (``REL_TOL``, ``POINT_TOL``). Each test asserts

1. the returned point lies on/in the primitive,
2. its distance to ``p`` is no larger than the reference optimum (+ tol),
3. where the answer is unique, it is the reference point.
"""

import numpy as np
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

import obbcollide as C

from .._reference import (
    POINT_TOL,
    REL_TOL,
    TRIANGLE_KINDS,
    assume_distinct,
    bad_values,
    box_corners,
    closest_in_ball_numeric,
    closest_in_hull,
    closest_on_plane_kkt,
    closest_on_sphere_numeric,
    coord,
    dist_to_hull,
    draw_point_near,
    dyadic,
    point,
    rotation,
    scale_of,
    triangle,
    vec,
)

SETTINGS = settings(max_examples=200, deadline=None, report_multiple_bugs=False,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
# Parametrised families share the budget: fewer examples per family.
PER_KIND = settings(SETTINGS, max_examples=50)
FEW = settings(max_examples=25, deadline=None, report_multiple_bugs=False,
               suppress_health_check=[HealthCheck.too_slow])


def assert_closest_in_hull(q, p, verts, unique=True, box=None):
    """Checks (1)-(3) for a closest point ``q`` in the convex hull of ``verts``.

    ``box = (center, axes, half)`` replaces the membership QP by the direct
    box test ``|axes (q - center)| <= half`` (and 0 off a rectangle's plane).
    """
    p = np.asarray(p, float)
    verts = np.asarray(verts, float)
    assert q.shape == p.shape
    assert np.all(np.isfinite(q))
    s = scale_of(p, verts)
    x, dref, _ = closest_in_hull(p, verts)
    # (1) on/in the primitive
    if box is None:
        assert dist_to_hull(q, verts) <= REL_TOL * s, (q, verts)
    else:
        center, axes, half = (np.asarray(y, float) for y in box)
        local = axes @ (q - center)
        assert np.all(np.abs(local) <= half + REL_TOL * s), (q, box)
        if len(half) == 2:  # a rectangle: no component off its plane
            normal = np.cross(axes[0], axes[1])
            assert abs(normal @ (q - center)) <= REL_TOL * s
    # (2) no farther than the exact optimum
    d = float(np.linalg.norm(q - p))
    assert d <= dref + REL_TOL * s, (d, dref)
    # (3) the closest point of a convex set is unique
    if unique:
        np.testing.assert_allclose(q, x, rtol=0, atol=POINT_TOL * s)


quaternion = vec(4, st.floats(-1, 1)).filter(lambda q: np.linalg.norm(q) > 0.1)
dims = st.sampled_from([2, 3])
# Strategies used inside composites are built once, here.
NORMAL = {d: st.one_of(vec(d), vec(d, dyadic)).filter(lambda n: np.linalg.norm(n) > 0.1)
          for d in (2, 3)}
UNIT_DIR = {d: vec(d, st.floats(-1, 1)).filter(lambda u: np.linalg.norm(u) > 0.1) for d in (2, 3)}
PLANE_D = st.one_of(coord, dyadic)
PLANE_KIND = st.sampled_from(["random", "on-plane", "random"])
RAY_KIND = st.sampled_from(["random", "random", "zero", "grid"])
DEGENERATE = st.integers(0, 3)  # 0: make the primitive degenerate
RADIUS = st.one_of(st.floats(0.0, 10.0), st.just(0.0), st.sampled_from([0.5, 1.0, 2.0]))
SPHERE_KIND = st.sampled_from(["random", "random", "inside", "centre", "surface", "near-centre"])
UNIT = st.floats(0.0, 1.0)
AXIS = st.integers(0, 2)
HALF = {k: vec(k, st.one_of(st.floats(0.0, 5.0), st.just(0.0))) for k in (2, 3)}
FLAT_W = st.sampled_from([(0.5, 0.25), (-1.0, 2.0), (0.25, 0.25), (1.5, -0.5)])
PERM4 = st.permutations(range(4))


# ---------------------------------------------------------------------------
# Plane (3D) and implicit line (2D)
# ---------------------------------------------------------------------------


@st.composite
def plane_case(draw):
    dim = draw(dims)
    n = draw(NORMAL[dim])
    d = draw(PLANE_D)
    kind = draw(PLANE_KIND)
    p = draw(point(dim))
    if kind == "on-plane":
        p = closest_on_plane_kkt(p, n, d)
    return p, n, d


@SETTINGS
@given(plane_case())
@example((np.array([0.0, 0.0]), np.array([1.0, 1.0]), 1.0))  # 2D line x + y = 1
@example((np.array([1.0, 2.0, 3.0]), np.array([0.0, 0.0, 2.0]), 2.0))  # non-unit normal: z = 1
def test_plane_matches_kkt(case):
    p, n, d = case
    q = C.closest_pt_point_plane(p, n, d)
    ref = closest_on_plane_kkt(p, n, d)
    s = scale_of(p, ref, d / np.linalg.norm(n))
    assert q.shape == p.shape
    # (1) on the plane: the residual n.q - d, normalised by |n|.
    assert abs(n @ q - d) / np.linalg.norm(n) <= REL_TOL * s
    # (2) distance no larger than the optimum, (3) unique point.
    assert np.linalg.norm(q - p) <= np.linalg.norm(ref - p) + REL_TOL * s
    np.testing.assert_allclose(q, ref, rtol=0, atol=POINT_TOL * s)


def test_plane_known_values():
    np.testing.assert_allclose(C.closest_pt_point_plane([0.0, 0.0], [1.0, 1.0], 1.0), [0.5, 0.5])
    np.testing.assert_allclose(C.closest_pt_point_plane([1.0, 2.0, 3.0], [0.0, 0.0, 2.0], 2.0),
                               [1.0, 2.0, 1.0])
    np.testing.assert_allclose(C.closest_pt_point_plane([1.0, 2.0, 3.0], [0.0, 0.0, 1.0], 3.0),
                               [1.0, 2.0, 3.0])


# ---------------------------------------------------------------------------
# Ray
# ---------------------------------------------------------------------------


@st.composite
def ray_case(draw):
    dim = draw(dims)
    o = draw(point(dim))
    kind = draw(RAY_KIND)
    if kind == "zero":
        dvec = np.zeros(dim)
    elif kind == "grid":
        dvec = draw(vec(dim, dyadic))
    else:
        dvec = draw(vec(dim))
    back = draw(DEGENERATE) == 0
    p = draw_point_near(draw, [o, o - dvec] if back else [o, o + dvec, o + 2 * dvec], dim)
    return p, o, dvec


@SETTINGS
@given(ray_case())
@example((np.array([-1.0, 1.0, 0.0]), np.zeros(3), np.array([1.0, 0.0, 0.0])))  # behind the origin
@example((np.array([3.0, 1.0]), np.array([1.0, 1.0]), np.zeros(2)))  # zero direction
def test_ray_matches_reference(case):
    p, o, dvec = case
    q = C.closest_pt_point_ray(p, o, dvec)
    # The closest point x satisfies |x - p| <= |o - p|, so |x - o| <= 2 |p - o|:
    # the ray may be cut to the segment [o, o + T dvec] with T = 2|p - o|/|dvec| + 1.
    dd = np.linalg.norm(dvec)
    T = 2.0 * np.linalg.norm(p - o) / dd + 1.0 if dd > 0 else 0.0
    # For the membership test cut the ray long enough to contain q too.
    T_member = max(T, np.linalg.norm(q - o) / dd + 1.0) if dd > 0 else 0.0
    s = scale_of(p, o, q)
    assert dist_to_hull(q, [o, o + T_member * dvec]) <= REL_TOL * s
    assert_closest_in_hull(q, p, [o, o + T * dvec])
    if dd == 0:
        np.testing.assert_array_equal(q, o)


# ---------------------------------------------------------------------------
# Segment
# ---------------------------------------------------------------------------


@st.composite
def segment_case(draw):
    dim = draw(dims)
    a = draw(point(dim))
    b = a.copy() if draw(DEGENERATE) == 0 else draw(point(dim))  # zero-length segments too
    p = draw_point_near(draw, [a, b], dim)
    return p, a, b


@SETTINGS
@given(segment_case())
@example((np.array([0.5, 1.0, 0.0]), np.zeros(3), np.zeros(3)))  # zero length
@example((np.array([1.0, 0.0]), np.array([0.0, 0.0]), np.array([2.0, 0.0])))  # on the segment
def test_segment_matches_reference(case):
    p, a, b = case
    q = C.closest_pt_point_segment(p, a, b)
    assert_closest_in_hull(q, p, [a, b])
    if np.array_equal(a, b):
        np.testing.assert_array_equal(q, a)


# ---------------------------------------------------------------------------
# Sphere / circle
# ---------------------------------------------------------------------------


@st.composite
def sphere_case(draw):
    dim = draw(dims)
    c = draw(point(dim))
    r = draw(RADIUS)
    kind = draw(SPHERE_KIND)
    if kind == "random":
        p = draw(point(dim))
    elif kind == "centre":
        p = c.copy()
    else:
        u = draw(UNIT_DIR[dim])
        u = u / np.linalg.norm(u)
        f = {"inside": draw(UNIT), "surface": 1.0, "near-centre": 1e-6}[kind]
        p = c + f * r * u
    return p, c, r


@SETTINGS
@given(sphere_case())
@example((np.array([0.0, 0.0, 0.5]), np.zeros(3), 2.0))  # inside: pushed out to the surface
@example((np.array([1.0, 1.0]), np.array([1.0, 1.0]), 3.0))  # 2D, at the centre
def test_sphere_surface(case):
    p, c, r = case
    q = C.closest_pt_point_sphere(p, c, r)
    s = scale_of(p, c, r)
    assert q.shape == p.shape
    # (1) on the surface
    assert abs(np.linalg.norm(q - c) - r) <= REL_TOL * s
    ref = closest_on_sphere_numeric(p, c, r)
    # (2) no farther than the numerical minimiser (whose answer can only be
    # worse than the true optimum, so this check is one-sided and exact).
    assert np.linalg.norm(q - p) <= np.linalg.norm(ref - p) + REL_TOL * s
    dist_pc = np.linalg.norm(p - c)
    if dist_pc == 0.0:
        # Every surface point is equally close: the documented choice is c + r e_x.
        e = np.zeros(len(p))
        e[0] = r
        np.testing.assert_array_equal(q, c + e)
    elif dist_pc >= 1e-2 * max(r, 1.0):
        # (3) unique; the BFGS reference resolves the angle to ~1e-8 here
        # (the objective's curvature in angle is ~ r |p - c|).
        np.testing.assert_allclose(q, ref, rtol=0, atol=1e-6 * s)


@SETTINGS
@given(sphere_case())
@example((np.zeros(3), np.zeros(3), 1.0))
@example((np.array([0.0, 3.0, 0.0]), np.zeros(3), 1.0))
def test_sphere_solid(case):
    p, c, r = case
    q = C.closest_pt_point_sphere(p, c, r, solid=True)
    s = scale_of(p, c, r)
    # (1) in the ball
    assert np.linalg.norm(q - c) <= r + REL_TOL * s
    ref = closest_in_ball_numeric(p, c, r)
    # (2) one-sided against the SLSQP minimiser, (3) the ball is convex: unique.
    assert np.linalg.norm(q - p) <= np.linalg.norm(ref - p) + REL_TOL * s
    np.testing.assert_allclose(q, ref, rtol=0, atol=1e-6 * s)
    if np.linalg.norm(p - c) <= r * (1.0 - 1e-12):
        # inside: its own closest point (a point on the sphere to within rounding may come back
        # projected instead, an ulp away, depending on how |p - c| rounds: checked above to 1e-6)
        np.testing.assert_array_equal(q, p)


def test_sphere_known_values():
    np.testing.assert_allclose(C.closest_pt_point_sphere([0, 0, 0.5], [0, 0, 0], 2.0), [0, 0, 2.0])
    np.testing.assert_allclose(C.closest_pt_point_sphere([0, 0, 0], [0, 0, 0], 2.0), [2.0, 0, 0])
    np.testing.assert_allclose(C.closest_pt_point_sphere([0, 0, 0], [0, 0, 0], 2.0, solid=True), [0, 0, 0])
    np.testing.assert_allclose(C.closest_pt_point_sphere([3, 4], [0, 0], 1.0), [0.6, 0.8])
    np.testing.assert_allclose(C.closest_pt_point_sphere([3, 4, 0], [0, 0, 0], 0.0), [0, 0, 0])


# ---------------------------------------------------------------------------
# AABB, OBB, rectangle
# ---------------------------------------------------------------------------


@st.composite
def aabb_case(draw):
    u = draw(point())
    w = u.copy() if draw(DEGENERATE) == 0 else draw(point())
    lo, hi = np.minimum(u, w), np.maximum(u, w)
    if draw(DEGENERATE) == 0:  # a flat box on one axis
        k = draw(AXIS)
        hi[k] = lo[k]
    p = draw_point_near(draw, box_corners((lo + hi) / 2, np.eye(3), (hi - lo) / 2))
    return p, lo, hi


@SETTINGS
@given(aabb_case())
@example((np.array([5.0, 0.5, -7.0]), np.zeros(3), np.ones(3)))
def test_aabb_matches_reference(case):
    p, lo, hi = case
    q = C.closest_pt_point_aabb(p, lo, hi)
    corners = box_corners((lo + hi) / 2, np.eye(3), (hi - lo) / 2)
    assert np.all(q >= lo) and np.all(q <= hi)  # (1) clamping is exact
    assert_closest_in_hull(q, p, corners, box=((lo + hi) / 2, np.eye(3), (hi - lo) / 2))


@st.composite
def obb_case(draw):
    center = draw(point())
    axes = rotation(draw(quaternion))
    half = draw(HALF[3])
    obb = C.OBB(center=center, axes=axes, half_extents=half)
    corners = box_corners(obb.center, obb.axes, obb.half_extents)
    p = draw_point_near(draw, corners)
    return p, obb, corners


@SETTINGS
@given(obb_case())
def test_obb_matches_reference(case):
    p, obb, corners = case
    q = C.closest_pt_point_obb(p, obb)
    assert_closest_in_hull(q, p, corners, box=(obb.center, obb.axes, obb.half_extents))


def test_obb_axis_aligned_agrees_with_clamp():
    obb = C.OBB(center=np.zeros(3), axes=np.eye(3), half_extents=np.array([1.0, 2.0, 3.0]))
    np.testing.assert_allclose(C.closest_pt_point_obb([5.0, -5.0, 0.5], obb), [1.0, -2.0, 0.5])
    np.testing.assert_allclose(C.closest_pt_point_obb([0.1, 0.2, 0.3], obb), [0.1, 0.2, 0.3])


@st.composite
def rect_case(draw):
    center = draw(point())
    R = rotation(draw(quaternion))
    axes = R[:2]
    half = draw(HALF[2])
    corners = box_corners(center, axes, half)
    p = draw_point_near(draw, corners)
    return p, center, axes, half, corners


@SETTINGS
@given(rect_case())
def test_rect_matches_reference(case):
    p, center, axes, half, corners = case
    q = C.closest_pt_point_rect(p, center, axes, half)
    assert_closest_in_hull(q, p, corners, box=(center, axes, half))


# ---------------------------------------------------------------------------
# Triangle
# ---------------------------------------------------------------------------


@st.composite
def triangle_case(draw, tri=triangle()):
    a, b, c = draw(tri)
    p = draw_point_near(draw, [a, b, c])
    return p, a, b, c


def _area2(a, b, c):
    return np.linalg.norm(np.cross(b - a, c - a))


@SETTINGS
@given(triangle_case(tri=st.tuples(point(), point(), point())
                     .filter(lambda t: _area2(*t) > 1e-3)))
@example((np.array([0.25, 0.25, 1.0]), np.zeros(3), np.array([1.0, 0, 0]), np.array([0, 1.0, 0])))
@example((np.array([1.0, 0.0, 0.0]), np.zeros(3), np.array([1.0, 0, 0]), np.array([0, 1.0, 0])))
def test_triangle_proper(case):
    p, a, b, c = case
    assert_closest_in_hull(C.closest_pt_point_triangle(p, a, b, c), p, [a, b, c])


@pytest.mark.parametrize("kind", TRIANGLE_KINDS)
@PER_KIND
@given(data=st.data())
def test_triangle_by_kind(kind, data):
    """Generic, grid, coincident-corner, collinear and needle triangles, one family per test."""
    p, a, b, c = data.draw(triangle_case(tri=triangle(kind=kind)))
    assert_closest_in_hull(C.closest_pt_point_triangle(p, a, b, c), p, [a, b, c])


def test_triangle_sliver_point_just_outside_an_edge():
    """A sliver (c 1e-9 off segment ab, between a and b: every angle's sine tiny) and a point on its
    plane just outside edge bc, where the region test falls to the face by rounding: the answer is
    on the triangle to round-off (a case hypothesis found; the face projection alone was 6e-9 off)."""
    p = np.array([3.958333333333333, 3.7500000003333334, 0.20833333399999998])
    a, b, c = np.zeros(3), np.array([4.75, 4.5, 0.25]), np.array([3.5625, 3.3750000005, 0.187500001])
    assert_closest_in_hull(C.closest_pt_point_triangle(p, a, b, c), p, [a, b, c])


@pytest.mark.parametrize("which", ["a=b", "a=c", "b=c", "a=b=c"])
@pytest.mark.parametrize("p", [[0.5, 1.0, 0.0], [-1.0, 0.5, 0.0], [2.0, -1.0, 3.0], [0.25, 0.0, 0.0]])
def test_triangle_two_coincident_corners(which, p):
    """A triangle with two equal corners is the segment between the distinct ones."""
    x, y = np.zeros(3), np.array([1.0, 0.0, 0.0])
    if which == "a=b=c":
        a = b = c = x
    else:
        a, b, c = {"a=b": (x, x, y), "a=c": (x, y, x), "b=c": (y, x, x)}[which]
    p = np.array(p)
    q = C.closest_pt_point_triangle(p, a, b, c)
    assert_closest_in_hull(q, p, [a, b, c])


@pytest.mark.parametrize("a, b, c, w", [
    # needles: the third corner 1e-6 off the line of the other two; p is a
    # convex combination of the corners (on the triangle), so the answer is p.
    ([0, 0, 0], [0, 2.75, 0], [0, 2.75, 1e-6], [1 / 3, 1 / 3, 1 / 3]),
    ([0, 0, 0], [0, 0, 0.25], [0, 1e-6, 0.250001], [1 / 3, 1 / 3, 1 / 3]),
    ([0, 0, 0], [0, 3.25, 2.0], [0, 3.250001, 2.0000005], [1 / 3, 1 / 3, 1 / 3]),
    ([1, 2, 3], [4, -1, 2], [2.5, 0.5, 2.5 + 1e-6], [0.25, 0.25, 0.5]),
], ids=["needle-yz-1", "needle-yz-2", "needle-yz-3", "needle-skew"])
def test_triangle_needle_examples(a, b, c, w):
    """Slivers of aspect ratio ~1e-6. The problem itself is well conditioned
    (the distance is 1-Lipschitz in every input), so 1e-9 relative is fair."""
    a, b, c = (np.array(x, float) for x in (a, b, c))
    p = w[0] * a + w[1] * b + w[2] * c
    assert_closest_in_hull(C.closest_pt_point_triangle(p, a, b, c), p, [a, b, c])


@pytest.mark.parametrize("p, a, b, c", [
    # exactly collinear corners (c = a + k (b - a), integers), not axis-aligned:
    # the triangle is the segment between its two extreme corners
    ([-3.8, -1.1, 3.5], [0, 2, -2], [-3, -1, 1], [-9, -7, 7]),
    ([0.9, -0.2, -0.2], [-3, -1, -3], [3, -2, 1], [6, -2.5, 3]),
    ([3.9, -3.0, -1.5], [3, 2, -3], [-3, -3, 2], [-6, -5.5, 4.5]),
    ([4.4, 3.1, 4.8], [-2, 3, -3], [1, 0, 2], [7, -6, 12]),
], ids=["k3", "k1.5", "k1.5b", "k3b"])
def test_triangle_collinear_examples(p, a, b, c):
    p, a, b, c = (np.array(x, float) for x in (p, a, b, c))
    assert np.all(np.cross(b - a, c - a) == 0)  # exactly collinear
    assert_closest_in_hull(C.closest_pt_point_triangle(p, a, b, c), p, [a, b, c])


@pytest.mark.parametrize("order", [(0, 1, 2), (1, 2, 0), (2, 0, 1), (1, 0, 2), (0, 2, 1), (2, 1, 0)])
def test_triangle_collinear_corners(order):
    pts = [np.zeros(3), np.array([1.0, 0, 0]), np.array([3.0, 0, 0])]
    a, b, c = (pts[i] for i in order)
    for p in ([0.5, 1.0, 0.0], [2.0, -1.0, 1.0], [-1.0, 0.0, 0.0], [4.0, 0.0, 2.0], [3.0, 0.0, 0.0]):
        p = np.array(p)
        assert_closest_in_hull(C.closest_pt_point_triangle(p, a, b, c), p, [a, b, c])


# ---------------------------------------------------------------------------
# Tetrahedron (solid)
# ---------------------------------------------------------------------------


TETRA_KINDS = ("generic", "grid", "flat", "flat-line", "coincident", "coincident-float")


@st.composite
def tetra_case(draw, kind):
    if kind == "generic":
        v = [draw(point()) for _ in range(4)]
        assume_distinct(*v)  # coincident corners are the "coincident*" families
    elif kind == "coincident-float":
        # Two equal corners with arbitrary floats: the volume is zero in exact
        # arithmetic but its floating-point value usually is not.
        a, b, c = (draw(point()) for _ in range(3))
        v = [[a, b, c, b.copy()][i] for i in draw(PERM4)]
    elif kind == "grid":
        v = [draw(vec(3, dyadic)) for _ in range(4)]
        assume_distinct(*v)
    else:
        a, b, c = (draw(vec(3, dyadic)) for _ in range(3))
        if kind == "flat":  # d exactly in the plane of abc (dyadic arithmetic is exact)
            w = draw(FLAT_W)
            d = a + w[0] * (b - a) + w[1] * (c - a)
        elif kind == "flat-line":  # all four collinear
            c = a + 2.0 * (b - a)
            d = a - 0.5 * (b - a)
        else:  # "coincident", on the grid: the volume is exactly zero
            d = a.copy()
        v = [[a, b, c, d][i] for i in draw(PERM4)]
    p = draw_point_near(draw, v)
    return (p, *v)


@pytest.mark.parametrize("kind", TETRA_KINDS)
@PER_KIND
@given(data=st.data())
def test_tetrahedron_matches_reference(kind, data):
    p, a, b, c, d = data.draw(tetra_case(kind))
    q = C.closest_pt_point_tetrahedron(p, a, b, c, d)
    assert_closest_in_hull(q, p, [a, b, c, d])


@pytest.mark.parametrize("p, verts", [
    ([0.1, 0.1, 0.1], [[0, 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, 1]]),  # inside
    ([0.25, 0.25, 1.0], [[0, 0, 0], [1, 0, 0], [0, 1, 0], [1, 1, 0]]),  # flat (a square), above it
    ([2.0, 2.0, 2.0], [[0, 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, 1]]),  # outside the slanted face
    ([0.0, 0.0, 0.0], [[0, 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, 1]]),  # on a vertex
    # two equal corners given with non-representable decimals: floating-point
    # volume ~1e-17 instead of 0
    ([0.0, 0.0, 5.0], [[0, 0, 0], [1.8, 1.8, 0.1], [-1.3, -2.7, -0.7], [1.8, 1.8, 0.1]]),
], ids=["inside", "flat-square", "outside", "on-vertex", "coincident-b-d-decimals"])
def test_tetrahedron_examples(p, verts):
    p, verts = np.array(p, float), np.array(verts, float)
    assert_closest_in_hull(C.closest_pt_point_tetrahedron(p, *verts), p, verts)


@pytest.mark.parametrize("kind", TETRA_KINDS)
@FEW
@given(data=st.data())
def test_tetrahedron_vertex_order_does_not_matter(kind, data):
    p, a, b, c, d = data.draw(tetra_case(kind))
    q1 = C.closest_pt_point_tetrahedron(p, a, b, c, d)
    q2 = C.closest_pt_point_tetrahedron(p, b, a, c, d)  # opposite orientation
    s = scale_of(p, a, b, c, d)
    np.testing.assert_allclose(q1, q2, rtol=0, atol=POINT_TOL * s)


# ---------------------------------------------------------------------------
# Batches and broadcasting
# ---------------------------------------------------------------------------


def _rot_batch(rng, n):
    return np.array([rotation(rng.normal(size=4)) for _ in range(n)])


def _make(name, rng, n, dim=3):
    """Valid inputs for one function: a list of arguments, each with leading shape (n,)."""
    P = lambda: rng.uniform(-10, 10, (n, dim))  # noqa: E731
    if name == "plane":
        return [P(), P() + np.where(rng.random((n, dim)) < 0.5, 0.5, -0.5), rng.uniform(-10, 10, n)]
    if name in ("ray", "segment"):
        args = [P(), P(), P()]
        args[2][: n // 2] = args[1][: n // 2] if name == "segment" else 0.0  # degenerate ones
        return args
    if name == "sphere":
        args = [P(), P(), rng.uniform(0, 5, n)]
        args[0][0] = args[1][0]  # one query at the centre
        return args
    if name == "aabb":
        u, w = P(), P()
        return [P(), np.minimum(u, w), np.maximum(u, w)]
    if name == "rect":
        return [P(), P(), _rot_batch(rng, n)[:, :2], rng.uniform(0, 3, (n, 2))]
    if name == "triangle":
        args = [P(), P(), P(), P()]
        args[2][0] = args[1][0]  # a degenerate one
        return args
    if name == "tetrahedron":
        return [P(), P(), P(), P(), P()]
    raise KeyError(name)


FUNCS = {
    "plane": C.closest_pt_point_plane,
    "ray": C.closest_pt_point_ray,
    "segment": C.closest_pt_point_segment,
    "sphere": C.closest_pt_point_sphere,
    "aabb": C.closest_pt_point_aabb,
    "rect": C.closest_pt_point_rect,
    "triangle": C.closest_pt_point_triangle,
    "tetrahedron": C.closest_pt_point_tetrahedron,
}
TWO_D = {"plane", "ray", "segment", "sphere"}


@pytest.mark.parametrize("name", sorted(FUNCS))
@FEW
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(1, 6), dim=dims)
def test_batch_equals_items(name, seed, n, dim):
    if name not in TWO_D:
        dim = 3
    f = FUNCS[name]
    args = _make(name, np.random.default_rng(seed), n, dim)
    out = f(*args)
    assert out.shape == (n, dim)
    for i in range(n):
        np.testing.assert_array_equal(out[i], f(*(x[i] for x in args)))
    # a (2, n) leading shape keeps its shape
    out2 = f(*(np.stack([x, x]) for x in args))
    assert out2.shape == (2, n, dim)
    np.testing.assert_array_equal(out2[1], out)


@pytest.mark.parametrize("name", sorted(FUNCS))
@FEW
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(1, 6))
def test_broadcast_one_primitive_many_points(name, seed, n):
    f = FUNCS[name]
    rng = np.random.default_rng(seed)
    args = _make(name, rng, 1, 3)
    prim = [x[0] for x in args[1:]]
    ps = rng.uniform(-10, 10, (n, 3))
    out = f(ps, *prim)
    assert out.shape == (n, 3)
    for i in range(n):
        np.testing.assert_array_equal(out[i], f(ps[i], *prim))


@FEW
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(1, 6))
def test_obb_batch(seed, n):
    rng = np.random.default_rng(seed)
    obb = C.OBB(center=rng.uniform(-5, 5, 3), axes=rotation(rng.normal(size=4)),
                half_extents=rng.uniform(0, 3, 3))
    ps = rng.uniform(-10, 10, (n, 3))
    out = C.closest_pt_point_obb(ps, obb)
    assert out.shape == (n, 3)
    for i in range(n):
        np.testing.assert_array_equal(out[i], C.closest_pt_point_obb(ps[i], obb))
    assert C.closest_pt_point_obb(ps.reshape(1, n, 3), obb).shape == (1, n, 3)


def test_single_query_returns_item_shape():
    assert C.closest_pt_point_triangle([0, 0, 1], [0, 0, 0], [1, 0, 0], [0, 1, 0]).shape == (3,)
    assert C.closest_pt_point_segment([0, 1], [0, 0], [1, 0]).shape == (2,)


# ---------------------------------------------------------------------------
# Bad input
# ---------------------------------------------------------------------------

GOOD = {
    "plane": {"p": np.ones(3), "n": np.array([0.0, 0.0, 1.0]), "d": 1.0},
    "ray": {"p": np.ones(3), "origin": np.zeros(3), "direction": np.array([1.0, 0, 0])},
    "segment": {"p": np.ones(3), "a": np.zeros(3), "b": np.array([1.0, 0, 0])},
    "sphere": {"p": np.ones(3), "center": np.zeros(3), "radius": 1.0},
    "aabb": {"p": np.ones(3), "bmin": np.zeros(3), "bmax": np.ones(3)},
    "rect": {"p": np.ones(3), "center": np.zeros(3), "axes": np.eye(3)[:2], "half_extents": np.ones(2)},
    "triangle": {"p": np.ones(3), "a": np.zeros(3), "b": np.eye(3)[0], "c": np.eye(3)[1]},
    "tetrahedron": {"p": np.ones(3), "a": np.zeros(3), "b": np.eye(3)[0], "c": np.eye(3)[1],
                    "d": np.eye(3)[2]},
}


def _bad_cases():
    for fname, kwargs in GOOD.items():
        for arg, good in kwargs.items():
            for label, bad in bad_values(np.shape(good)):
                yield pytest.param(fname, arg, bad, id=f"{fname}-{arg}-{label}")


@pytest.mark.parametrize("fname, arg, bad", list(_bad_cases()))
def test_bad_input_names_argument(fname, arg, bad):
    kwargs = dict(GOOD[fname], **{arg: bad})
    with pytest.raises(ValueError, match=f"^{arg}:"):
        FUNCS[fname](*kwargs.values())


@pytest.mark.parametrize("label, bad", bad_values((3,)))
def test_obb_bad_point(label, bad):
    obb = C.OBB(center=np.zeros(3), axes=np.eye(3), half_extents=np.ones(3))
    with pytest.raises(ValueError, match="^p:"):
        C.closest_pt_point_obb(bad, obb)


@pytest.mark.parametrize("call, arg", [
    (lambda: C.closest_pt_point_sphere([1.0, 2, 3], [0, 0, 0], -1.0), "radius"),
    (lambda: C.closest_pt_point_aabb([1.0, 2, 3], [0, 0, 2], [1, 1, 1]), "bmin, bmax"),
    (lambda: C.closest_pt_point_rect([1.0, 2, 3], [0, 0, 0], np.eye(3)[:2], [1.0, -1.0]), "half_extents"),
    (lambda: C.closest_pt_point_plane([1.0, 2, 3], [0, 0, 0], 1.0), "n"),
    (lambda: C.closest_pt_point_plane([1.0, 2], [0, 0], 1.0), "n"),
    (lambda: C.closest_pt_point_segment([1.0, 2], [0, 0, 0], [1, 1, 1]), "a"),  # 2D p, 3D a
    (lambda: C.closest_pt_point_ray([1.0, 2, 3, 4], [0, 0, 0, 0], [1, 1, 1, 1]), "p"),  # 4D
    (lambda: C.closest_pt_point_triangle([1.0, 2], [0, 0], [1, 0], [0, 1]), "p"),  # 2D triangle
    (lambda: C.closest_pt_point_sphere(5.0, [0, 0, 0], 1.0), "p"),  # scalar point
])
def test_bad_domain_names_argument(call, arg):
    with pytest.raises(ValueError, match=f"^{arg}:"):
        call()


def test_non_broadcasting_batches_rejected():
    with pytest.raises(ValueError, match="broadcast") as info:
        C.closest_pt_point_triangle(np.zeros((4, 3)), np.zeros((5, 3)), np.ones(3), np.eye(3)[0])
    assert "p (4, 3)" in str(info.value) and "a (5, 3)" in str(info.value)
