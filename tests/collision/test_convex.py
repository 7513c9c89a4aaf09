"""Property tests for collision.convex: closest_pt_point_convex and ConvexPolyhedron.

``closest_pt_point_convex`` is compared with the exact QP over convex
combinations of the vertices (active-set enumeration, ``_reference.py``), for
solid hulls and for flat inputs (polygon, segment, single point).

``ConvexPolyhedron.from_points`` is checked for the invariants of a convex
polyhedron in its "standard polygon" form: planar faces, unit outward normals,
counter-clockwise loops, every input point on or inside every face plane,
every extreme point kept, a closed consistently oriented surface with
V - E + F = 2, maximal faces (coplanar triangles merged), and a cube giving
six quads.
"""

import itertools

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

import obbcollide as C
from obbcollide import ConvexPolyhedron

from .._reference import (
    POINT_TOL,
    REL_TOL,
    bad_values,
    closest_in_hull,
    draw_point_near,
    dyadic,
    rotation,
    scale_of,
    vec,
)

PER_KIND = settings(max_examples=40, deadline=None, report_multiple_bugs=False,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
FEW = settings(max_examples=25, deadline=None, report_multiple_bugs=False,
               suppress_health_check=[HealthCheck.too_slow])


CUBE = np.array(list(itertools.product((-1.0, 1.0), repeat=3)))

# ---------------------------------------------------------------------------
# Point clouds
# ---------------------------------------------------------------------------

SOLID_KINDS = ("generic", "grid", "cube-plus", "rotated-cube", "prism")
FLAT_KINDS = ("polygon", "tilted-polygon", "segment", "two-points", "point")

SMALL_GRID = vec(3, st.integers(-2, 2).map(float))
QUAT = vec(4, st.floats(-1, 1)).filter(lambda q: np.linalg.norm(q) > 0.1)
GRID = vec(3, dyadic)
GRID2 = vec(2, dyadic)
INT_K = st.integers(-3, 3).map(float)
CUBE_EXTRAS = st.lists(st.sampled_from(["interior", "face-centre", "edge-mid", "duplicate"]),
                       max_size=6)
SIDE = st.sampled_from([0.5, 1.0, 3.0])
INTERIOR = vec(3, st.sampled_from([-0.5, 0.0, 0.25, 0.75]))
SHIFT = vec(3, st.floats(-5, 5))
SMALL_INT_VEC = vec(3, st.integers(-2, 2).map(float))


def _rank(P):
    return np.linalg.matrix_rank(P - P[0], tol=1e-9 * scale_of(P)) if len(P) > 1 else 0


@st.composite
def cloud(draw, kind):
    if kind == "generic":
        P = np.array(draw(st.lists(vec(3), min_size=4, max_size=10)))
        # a solid with some thickness, so "flat by rounding" does not arise
        assume(np.linalg.svd(P - P.mean(0), compute_uv=False)[-1] > 0.1)
    elif kind == "grid":  # small integer grid: many coplanar and collinear points
        P = np.array(draw(st.lists(SMALL_GRID, min_size=4, max_size=12)))
        assume(_rank(P) == 3)
    elif kind in ("cube-plus", "rotated-cube"):
        h = draw(SIDE)
        P = [h * c for c in CUBE]
        for extra in draw(CUBE_EXTRAS):
            if extra == "interior":
                P.append(h * draw(INTERIOR))
            elif extra == "face-centre":
                e = np.zeros(3)
                e[draw(st.integers(0, 2))] = h * draw(st.sampled_from([-1.0, 1.0]))
                P.append(e)
            elif extra == "edge-mid":
                e = h * draw(st.sampled_from(list(CUBE)))
                e[draw(st.integers(0, 2))] = 0.0
                P.append(e)
            else:
                P.append(P[draw(st.integers(0, len(P) - 1))].copy())
        P = np.array(P)
        P = P[draw(st.permutations(range(len(P))))]
        if kind == "rotated-cube":
            P = P @ rotation(draw(QUAT)).T + draw(SHIFT)
    elif kind == "prism":  # a triangle extruded along z (two triangles, three quads)
        a, b, c = (np.append(draw(GRID2), 0.0) for _ in range(3))
        assume(abs(np.cross(b - a, c - a)[2]) > 0.1)
        top = draw(st.sampled_from([0.5, 1.0, 2.5]))
        P = np.array([a, b, c, a + [0, 0, top], b + [0, 0, top], c + [0, 0, top]])
    elif kind == "polygon":  # coplanar points in z = h, exactly
        h = draw(st.sampled_from([-1.0, 0.0, 2.5]))
        P = np.array([np.append(draw(GRID2), h) for _ in range(draw(st.integers(3, 9)))])
        assume(_rank(P) == 2)
    elif kind == "tilted-polygon":  # x0 + i u + j w with integer i, j: exactly coplanar
        x0, u, w = draw(GRID), draw(SMALL_INT_VEC), draw(SMALL_INT_VEC)
        P = np.array([x0 + draw(INT_K) * u + draw(INT_K) * w
                      for _ in range(draw(st.integers(3, 9)))])
        assume(_rank(P) == 2)
    elif kind == "segment":  # collinear: a + k (b - a), dyadic
        a, b = draw(GRID), draw(GRID)
        assume(not np.array_equal(a, b))
        ks = draw(st.lists(st.sampled_from([-1.0, -0.5, 0.0, 0.25, 0.5, 1.0, 1.5]),
                           min_size=2, max_size=6))
        P = np.array([a + k * (b - a) for k in ks])
    elif kind == "two-points":
        P = np.array([draw(vec(3)), draw(vec(3))])
    else:  # a single point, possibly repeated
        x = draw(st.one_of(vec(3), GRID))
        P = np.array([x] * draw(st.integers(1, 3)))
    return P


# ---------------------------------------------------------------------------
# closest_pt_point_convex
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("kind", SOLID_KINDS + FLAT_KINDS)
@PER_KIND
@given(data=st.data())
def test_closest_pt_point_convex(kind, data):
    P = data.draw(cloud(kind))
    p = draw_point_near(data.draw, P)
    q = C.closest_pt_point_convex(p, P)
    s = scale_of(p, P)
    assert q.shape == (3,)
    x, dref, _ = closest_in_hull(p, P)
    # (1) in the hull, (2) no farther than the exact QP optimum,
    # (3) the hull is convex: the closest point is unique.
    assert closest_in_hull(q, P)[1] <= REL_TOL * s, (q, P)
    assert np.linalg.norm(q - p) <= dref + REL_TOL * s
    np.testing.assert_allclose(q, x, rtol=0, atol=POINT_TOL * s)


@pytest.mark.parametrize("p, verts, want", [
    # solid: inside point is its own closest point; outside goes to a face
    ([0.1, 0.2, 0.3], CUBE, [0.1, 0.2, 0.3]),
    ([3.0, 0.2, 0.3], CUBE, [1.0, 0.2, 0.3]),
    ([3.0, 3.0, 3.0], CUBE, [1.0, 1.0, 1.0]),
    # flat square: the point above projects into it
    ([0.25, 0.5, 2.0], [[0, 0, 0], [1, 0, 0], [1, 1, 0], [0, 1, 0]], [0.25, 0.5, 0.0]),
    # segment given by three collinear points
    ([0.5, 1.0, 0.0], [[0, 0, 0], [2, 0, 0], [1, 0, 0]], [0.5, 0.0, 0.0]),
    # one point
    ([4.0, 5.0, 6.0], [[1, 2, 3]], [1.0, 2.0, 3.0]),
])
def test_closest_pt_point_convex_known_values(p, verts, want):
    np.testing.assert_allclose(C.closest_pt_point_convex(p, verts), want, atol=1e-14)


@pytest.mark.parametrize("kind", ["generic", "grid", "polygon", "segment", "point"])
@FEW
@given(data=st.data(), n=st.integers(1, 6))
def test_convex_batch_equals_items(kind, data, n):
    P = data.draw(cloud(kind))
    ps = np.array([draw_point_near(data.draw, P) for _ in range(n)])
    out = C.closest_pt_point_convex(ps, P)
    assert out.shape == (n, 3)
    for i in range(n):
        np.testing.assert_array_equal(out[i], C.closest_pt_point_convex(ps[i], P))
    out2 = C.closest_pt_point_convex(ps.reshape(1, n, 1, 3), P)
    assert out2.shape == (1, n, 1, 3)
    np.testing.assert_array_equal(out2.reshape(n, 3), out)


@pytest.mark.parametrize("label, bad", bad_values((3,)))
def test_convex_bad_point(label, bad):
    with pytest.raises(ValueError, match="^p:"):
        C.closest_pt_point_convex(bad, CUBE)


@pytest.mark.parametrize("label, bad", bad_values((3,)) + [
    ("empty", np.zeros((0, 3))), ("one-d", np.ones(3)), ("three-d", np.ones((2, 2, 3))),
    ("2d-points", np.ones((4, 2))),
])
def test_convex_bad_vertices(label, bad):
    with pytest.raises(ValueError, match="^vertices:"):
        C.closest_pt_point_convex(np.zeros(3), bad)


# ---------------------------------------------------------------------------
# ConvexPolyhedron.from_points
# ---------------------------------------------------------------------------


def check_polyhedron(P, poly):
    """The invariants of a convex polyhedron built from the points ``P``."""
    P = np.asarray(P, float)
    s = scale_of(P)
    tol = REL_TOL * s
    V, N, off = poly.vertices, poly.normals, poly.offsets
    F, E = len(poly.polygons), len(poly.edges)
    assert V.shape[1] == 3 and N.shape == (F, 3) and off.shape == (F,)

    # Vertices are input points, and every extreme point of P is a vertex.
    for v in V:
        assert np.any(np.all(P == v, axis=1)), ("vertex not an input point", v)
    # An extreme point x of P that is not in V would lie outside conv(V)
    # (conv(V) is inside conv(P minus x)), so checking that every input point
    # is in conv(V) checks that no extreme point was dropped.
    for x in np.unique(P, axis=0):
        if not np.any(np.all(V == x, axis=1)):
            assert closest_in_hull(x, V)[1] <= tol, ("extreme point dropped", x)

    # Unit outward normals; every input point on or inside every face plane.
    np.testing.assert_allclose(np.linalg.norm(N, axis=1), 1.0, atol=1e-12)
    assert np.all(P @ N.T - off <= tol), "a point is outside a face plane"
    centre = V.mean(0)
    assert np.all(N @ centre - off < -tol), "a normal points inwards"

    seen = set()
    directed = set()
    for f, loop in enumerate(poly.polygons):
        loop = np.asarray(loop)
        assert len(loop) >= 3 and len(set(loop.tolist())) == len(loop)
        X = V[loop]
        # planar: every loop vertex on the face plane
        assert np.all(np.abs(X @ N[f] - off[f]) <= tol), ("face not planar", f)
        # counter-clockwise seen from outside, and convex: every turn is to the left
        turns = np.cross(np.roll(X, -1, 0) - X, np.roll(X, -2, 0) - np.roll(X, -1, 0))
        assert np.all(turns @ N[f] >= -tol * s), ("loop not CCW / not convex", f)
        newell = np.cross(X, np.roll(X, -1, 0)).sum(0)
        assert newell @ N[f] > 0, ("loop clockwise", f)
        # maximal: no other face lies in the same plane (every corner of one
        # on the other's plane, to rounding)
        for g in seen:
            Y = V[np.asarray(poly.polygons[g])]
            assert not (N[f] @ N[g] > 0 and np.all(np.abs(Y @ N[f] - off[f]) <= 1e-12 * s)), \
                "two faces in one plane (coplanar triangles not merged)"
        seen.add(f)
        for a, b in zip(loop, np.roll(loop, -1)):
            assert (a, b) not in directed, "directed edge used twice"
            directed.add((int(a), int(b)))

    # Closed, consistently oriented surface: every directed edge has its reverse.
    assert all((b, a) in directed for a, b in directed), "surface not closed"
    undirected = {(min(a, b), max(a, b)) for a, b in directed}
    assert undirected == {tuple(e) for e in poly.edges.tolist()}
    # Every vertex is used by a face; Euler's formula for a convex polyhedron.
    used = {int(i) for loop in poly.polygons for i in loop}
    assert used == set(range(len(V))), "a vertex is on no face"
    assert len(V) - E + F == 2, (len(V), E, F)

    # Hull triangles: outward (CCW seen from outside).
    T = V[poly.triangles]
    tn = np.cross(T[:, 1] - T[:, 0], T[:, 2] - T[:, 0])
    assert np.all(np.einsum("ij,ij->i", tn, T.mean(1) - centre) > 0)


@pytest.mark.parametrize("kind", SOLID_KINDS)
@PER_KIND
@given(data=st.data())
def test_from_points_invariants(kind, data):
    P = data.draw(cloud(kind))
    check_polyhedron(P, ConvexPolyhedron.from_points(P))


def test_from_points_near_duplicate_points_make_no_sliver_face():
    """Found by hypothesis: two points 1.6e-11 apart (4e-12 of the extent) made a sliver triangle,
    and merging neighbours with its plane joined two faces that are not coplanar (a face 4 cm
    outside a vertex). The near-duplicate is now one point to the hull; the invariants hold."""
    P = np.array([[0.0, 0.0, 0.0], [0.0, 0.0, 4.0], [0.0, 1.0, 1.0], [2.0, 1.0, 0.0], [1.62457131e-11, 1.0, 1.0]])
    poly = ConvexPolyhedron.from_points(P)
    check_polyhedron(P, poly)
    assert len(poly.vertices) == 4 and len(poly.polygons) == 4  # a tetrahedron
    # a cloud of clustered copies: the first point of each cluster is kept
    rng = np.random.default_rng(5)
    base = rng.normal(size=(12, 3))
    Q = np.concatenate([base, base + rng.normal(size=(12, 3)) * 1e-12])
    check_polyhedron(Q, ConvexPolyhedron.from_points(Q))


def test_a_sliver_triangle_joins_no_faces_that_are_not_coplanar():
    """Found by hypothesis: three points nearly on a line (the z axis, 1e-12 off it) make a sliver
    triangle that lies on the plane of every neighbour through that line; it joined a face 45
    degrees away into one 'face' 13% of the extent outside a vertex. Such a face is split back
    into its triangles; every point is then on or inside every face plane."""
    P = np.array([[0.0, 0.0, 0.0], [0.0, 0.0, 1.0], [0.0, 1e-12, 2.0], [1.0, 0.0, 0.0], [1.0, 1.0, 0.0]])
    poly = ConvexPolyhedron.from_points(P)
    check_polyhedron(P, poly)
    assert np.max(P @ poly.normals.T - poly.offsets) <= 1e-12


def test_integer_clouds_nudged_by_rounding_keep_every_invariant():
    """Small integer clouds with coordinates nudged by 3e-13 to 1e-11: slivers, points inside faces,
    faces a hair apart. Every invariant holds for each one with a volume (near-flat ones, whose
    centre lies on their faces, are left out). Before the sliver rules, 38 of these 978 broke one."""
    from scipy.spatial import ConvexHull

    rng = np.random.default_rng(11)
    checked = 0
    for _ in range(1000):
        P = rng.integers(-2, 3, size=(rng.integers(4, 9), 3)).astype(float)
        nudge = rng.random(P.shape) < 0.15
        P[nudge] += rng.choice([1e-12, -1e-12, 1e-11, 3e-13], size=nudge.sum())
        try:
            poly = ConvexPolyhedron.from_points(P)
        except ValueError:
            continue  # flat
        if ConvexHull(P).volume < 1e-6 * np.ptp(P, axis=0).max() ** 3:
            continue
        check_polyhedron(P, poly)
        checked += 1
    assert checked == 978


@pytest.mark.parametrize("half", [0.5, 1.0, 7.0])
def test_cube_gives_six_quads(half):
    poly = ConvexPolyhedron.from_points(half * CUBE)
    check_polyhedron(half * CUBE, poly)
    assert len(poly.vertices) == 8 and len(poly.edges) == 12
    assert sorted(len(loop) for loop in poly.polygons) == [4] * 6
    # the normals are the six axis directions
    np.testing.assert_allclose(np.sort(poly.normals.ravel()), [-1] * 3 + [0] * 12 + [1] * 3, atol=1e-12)
    np.testing.assert_allclose(poly.offsets, half, rtol=1e-12)


@FEW
@given(quat=QUAT, shift=SHIFT, interior=st.lists(
    vec(3, st.floats(-0.9, 0.9)), max_size=5))
def test_rotated_cube_with_interior_points_gives_six_quads(quat, shift, interior):
    P = np.vstack([CUBE] + [np.array(interior).reshape(-1, 3)]) @ rotation(quat).T + shift
    poly = ConvexPolyhedron.from_points(P)
    check_polyhedron(P, poly)
    assert len(poly.vertices) == 8
    assert sorted(len(loop) for loop in poly.polygons) == [4] * 6


def test_cube_with_face_centres_still_six_quads():
    """Points in the middle of the faces are not corners of the hull."""
    P = np.vstack([CUBE, np.eye(3), -np.eye(3)])
    poly = ConvexPolyhedron.from_points(P)
    check_polyhedron(P, poly)
    assert sorted(len(loop) for loop in poly.polygons) == [4] * 6


@pytest.mark.parametrize("P", [
    # a square pyramid with a point set into the base: the base is one quad
    [[0, 0, 0], [2, 0, 0], [2, 2, 0], [0, 2, 0], [1, 1, 0], [1, 1, 1.5]],
    # an octahedron
    [[1, 0, 0], [-1, 0, 0], [0, 1, 0], [0, -1, 0], [0, 0, 1], [0, 0, -1]],
    # a face dented outwards by 1e-6 (dihedral angle ~1e-6 rad): the two hull
    # triangles there are NOT coplanar, so they must stay two faces (or at
    # least every face must stay planar with every point inside its plane)
    [[0, 0, 0], [0, 0, 1], [0, 1, -1e-6], [0, 2, 0], [1, 0, 0]],
    [[0, 0, 0], [0, 0, 1], [0, 1, -1.1920929e-07], [0, 2, 0], [1, 0, 0]],
], ids=["pyramid", "octahedron", "dent-1e-6", "dent-1.2e-7"])
def test_from_points_known_sets(P):
    P = np.array(P, float)
    check_polyhedron(P, ConvexPolyhedron.from_points(P))


def test_tetrahedron_gives_four_triangles():
    P = np.array([[0, 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, 1.0]])
    poly = ConvexPolyhedron.from_points(P)
    check_polyhedron(P, poly)
    assert sorted(len(loop) for loop in poly.polygons) == [3] * 4


@pytest.mark.parametrize("label, bad", bad_values((3,)) + [
    ("flat", np.array([[0, 0, 0], [1, 0, 0], [0, 1, 0], [1, 1, 0.0]])),
    ("collinear", np.array([[0, 0, 0], [1, 0, 0], [2, 0, 0], [3, 0, 0.0]])),
    ("too-few", np.eye(3)),
    ("one-d", np.ones(3)),
    ("coincident", np.ones((5, 3))),
])
def test_from_points_bad_input(label, bad):
    with pytest.raises(ValueError, match="^points:"):
        ConvexPolyhedron.from_points(bad)


def test_from_points_error_uses_given_name():
    with pytest.raises(ValueError, match="^mesh:"):
        ConvexPolyhedron.from_points(np.eye(3), name="mesh")


def _faces_one_pair_at_a_time(poly, neighbors_of):
    """The triangles of each face, in face order, by the plain union-find: neighbours ``i < j``
    visited in order, joined when they face the same way and ``j``'s far corner is on ``i``'s
    plane (the library tests all pairs at once, then joins them in this same order)."""
    V, T = poly.vertices, poly.triangles
    n = np.cross(V[T[:, 1]] - V[T[:, 0]], V[T[:, 2]] - V[T[:, 0]])
    n /= np.linalg.norm(n, axis=1)[:, None]
    tol = 1e-12 * float(np.ptp(V, axis=0).max())
    parent = list(range(len(T)))

    def find(i):
        while parent[i] != i:
            i = parent[i]
        return i

    for i in range(len(T)):
        for j in neighbors_of[i]:
            far = [k for k in T[j] if k not in T[i]]
            if j > i and n[i] @ n[j] > 0.0 and far and abs(n[i] @ (V[far[0]] - V[T[i, 0]])) <= tol:
                parent[find(j)] = find(i)
    roots = [find(i) for i in range(len(T))]
    return [sorted(i for i in range(len(T)) if roots[i] == r) for r in sorted(set(roots))]


@pytest.mark.parametrize("pieces", [1, 3, 6])
def test_faces_and_their_order_equal_the_plain_union_find(pieces):
    """A box whose sides are grids of coplanar triangles and a sphere of lone triangles: each face
    holds the triangles the plain union-find joins, and the faces come in its order (face ids
    depend on it)."""
    import trimesh
    for mesh in (trimesh.creation.box(extents=(1.0, 2.0, 3.0)).subdivide_to_size(3.0 / pieces),
                 trimesh.creation.icosphere(pieces % 3 + 1)):
        poly = ConvexPolyhedron.from_mesh(mesh.vertices, mesh.faces)
        T = poly.triangles
        owner = {(int(a), int(b)): t for t, tri in enumerate(T) for a, b in zip(tri, np.roll(tri, -1))}
        neighbors_of = [[owner[(int(b), int(a))] for a, b in zip(tri, np.roll(tri, -1))] for tri in T]
        want = _faces_one_pair_at_a_time(poly, neighbors_of)
        assert len(want) == len(poly.polygons)
        for f, (tris, loop) in enumerate(zip(want, poly.polygons)):
            corners = T[tris].ravel()
            assert set(np.asarray(loop).tolist()) <= set(corners.tolist())  # (a grid's inner points: no corner)
            np.testing.assert_allclose(poly.vertices[corners] @ poly.normals[f], poly.offsets[f], atol=1e-12)
