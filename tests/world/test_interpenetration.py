"""Tests for the visible-surface interpenetration measurement (tests/_interpenetration.py).

The measurement is the oracle of tests/world/test_example_scenes.py, so it is checked
here against answers known by construction and against plain brute force that
shares none of its code:

- point-triangle distances equal ``collision.closest_pt_point_triangle``'s
  (an independent implementation: Ericson's Voronoi regions) to 1e-12;
- winding numbers are 1 inside and 0 outside a box, -1 inside an inverted one;
- the signed depth (grid search, side from pseudonormals) equals the brute
  force one (every triangle; side from the winding number) exactly on
  thousands of points in and around the project's meshes, and the exact
  inner distance on a box;
- pair depths: two boxes overlapping by 3 mm give 3 mm (within the 0.1 mm
  tolerance, never more); apart or touching give 0; a thin box's edge 3 mm
  into a face, every corner of both boxes outside the other, gives 3 mm (a
  vertex-only measure gives 0); a sphere mesh sunk into the bottom of the
  project's bowl gives the ball's depth behind the plane of the bowl's
  bottom facets (within the sphere mesh's sag), and raised 1 cm gives 0; a
  box 4 mm under a ground plane gives 4 mm;
- against brute force on random overlapping pairs (rotated boxes, spheres,
  the blob): the reported point lies on A's surface at the reported depth
  (brute force), and no point of 20000 sampled on either surface is deeper
  than the answer plus the tolerance (0.1 mm, 1% of a depth past 1 cm);
- open meshes: refused as the solid measured into (``ValueError``), a pair of
  two open meshes refused, an open mesh's points inside a closed one measured.
"""

import os

import numpy as np
import pytest
import trimesh

import obbcollide as co
from app.world.world import Body, pose_matrix
from .. import _interpenetration as I
from .._bodies import box_body, ground_body
from .._reference import random_rotation

ASSETS = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "assets", "meshes")
TOL = 1e-4  # the measurement's default tolerance (m)


def mesh_body(name, mesh, pos=(0, 0, 0), rot=None):
    v, f = np.asarray(mesh.vertices, float), np.asarray(mesh.faces, np.int64)
    return Body(name, v, f, co.OBBTree(v, f), pose_matrix(rot, pos), (0.5, 0.5, 0.5))


def box(name, extents, pos=(0, 0, 0), rot=None):
    return mesh_body(name, trimesh.creation.box(extents=extents), pos, rot)


def rot_x(deg):
    c, s = np.cos(np.radians(deg)), np.sin(np.radians(deg))
    return np.array([[1, 0, 0], [0, c, -s], [0, s, c]])


# ------------------------------------------------------------ brute-force references


def brute_winding(points, tris, chunk=64):
    """Winding numbers, numpy over every triangle (van Oosterom-Strackee)."""
    out = np.empty(len(points))
    for s in range(0, len(points), chunk):
        r = tris[None] - points[s:s + chunk, None, None, :]
        a, b, c = r[:, :, 0], r[:, :, 1], r[:, :, 2]
        la, lb, lc = (np.linalg.norm(x, axis=-1) for x in (a, b, c))
        num = np.einsum("...i,...i", a, np.cross(b, c))
        den = (la * lb * lc + np.einsum("...i,...i", a, b) * lc + np.einsum("...i,...i", b, c) * la
               + np.einsum("...i,...i", c, a) * lb)
        out[s:s + chunk] = np.arctan2(num, den).sum(1) / (2.0 * np.pi)
    return out


def brute_distance(points, tris):
    """Distance to the nearest triangle, trimesh's numpy closest point, every triangle."""
    points = np.asarray(points, float)
    d = np.empty(len(points))
    step = max(1, 200_000 // len(tris))
    for s in range(0, len(points), step):
        p = points[s:s + step]
        q = trimesh.triangles.closest_point(np.tile(tris, (len(p), 1, 1)), np.repeat(p, len(tris), 0))
        d[s:s + step] = np.linalg.norm(q - np.repeat(p, len(tris), 0), axis=1).reshape(len(p), -1).min(1)
    return d


def brute_depth(points, tris):
    """+ distance inside the closed surface, - outside."""
    d = brute_distance(points, tris)
    return np.where(brute_winding(points, tris) > 0.5, d, -d)


def world_mesh(body):
    v = body.vertices @ body.pose[:3, :3].T + body.pose[:3, 3]
    return trimesh.Trimesh(v, body.faces, process=False)


# ------------------------------------------------------------ point kernels


def test_point_triangle_distances_equal_the_librarys_closest_points():
    rng = np.random.default_rng(0)
    tris = rng.normal(size=(300, 3, 3))
    tris[:20, 2] = tris[:20, 0] + 0.5 * (tris[:20, 1] - tris[:20, 0])  # flat: a segment
    pts = rng.normal(scale=2.0, size=(300, 3))
    for t in tris:
        q = co.closest_pt_point_triangle(pts, t[0], t[1], t[2])
        want = np.linalg.norm(q - pts, axis=1)
        got = I.point_triangle_distances(pts, t[None])
        np.testing.assert_allclose(got, want, rtol=0, atol=1e-12)


def test_winding_numbers_of_a_box():
    m = trimesh.creation.box(extents=[1, 2, 3])
    pts = np.array([[0, 0, 0], [0.49, 0.99, -1.49], [0.51, 0, 0], [0, 0, 1.6], [3, 3, 3]])
    np.testing.assert_allclose(I.winding_numbers(pts, m.vertices[m.faces]), [1, 1, 0, 0, 0], atol=1e-12)
    np.testing.assert_allclose(I.winding_numbers(pts[:2], m.vertices[m.faces][:, ::-1]), [-1, -1], atol=1e-12)


@pytest.mark.parametrize("name", ["bowl", "torus_knot", "gear", "blob", "box"])
def test_signed_depths_equal_brute_force(name):
    """Grid search and pseudonormal sides against every triangle and the winding number."""
    m = trimesh.load(os.path.join(ASSETS, name + ".ply"), process=False)
    solid = I.Solid.from_mesh(name, m.vertices, m.faces, pose_matrix(random_rotation(np.random.default_rng(1)),
                                                                     (0.3, -0.2, 0.1)))
    rng = np.random.default_rng(2)
    corners = solid.tris.reshape(-1, 3)
    pts = np.vstack([rng.uniform(solid.lo - 0.2, solid.hi + 0.2, (1500, 3)),
                     corners[rng.integers(len(corners), size=1500)] + rng.normal(scale=0.004, size=(1500, 3))])
    got = I.signed_depths(pts, solid)
    d = I.point_triangle_distances(pts, solid.tris)
    want = np.where(I.winding_numbers(pts, solid.tris) > 0.5, d, -d)
    np.testing.assert_array_equal(got, want)
    assert (got > 0).sum() > 300 and (got < 0).sum() > 300  # both sides were asked


def test_signed_depths_in_a_box_are_the_distance_to_its_faces():
    m = trimesh.creation.box(extents=[1, 2, 3])
    solid = I.Solid.from_mesh("box", m.vertices, m.faces)
    rng = np.random.default_rng(3)
    pts = rng.uniform([-0.8, -1.3, -1.8], [0.8, 1.3, 1.8], (2000, 3))
    half = np.array([0.5, 1.0, 1.5])
    inside = np.all(np.abs(pts) < half, axis=1)
    want = np.where(inside, (half - np.abs(pts)).min(1),
                    -np.linalg.norm(np.maximum(np.abs(pts) - half, 0), axis=1))
    np.testing.assert_allclose(I.signed_depths(pts, solid), want, rtol=0, atol=1e-12)


# ------------------------------------------------------------ known answers


@pytest.mark.parametrize("shift", [(0, 0), (0.5, 0.0), (0.3, -0.7)])
def test_boxes_overlapping_by_3_mm(shift):
    a = box("a", [1, 1, 1])
    b = box("b", [1, 1, 1], (shift[0], 1 - 0.003, shift[1]))
    r = I.interpenetration(a, b)
    assert 0.003 - TOL <= r.depth <= 0.003 + 1e-12, r


def test_boxes_apart_or_touching_give_zero():
    a = box("a", [1, 1, 1])
    assert I.interpenetration(a, box("b", [1, 1, 1], (0.2, 1.001, 0))).depth == 0.0
    assert I.interpenetration(a, box("b", [1, 1, 1], (0.2, 1.0, 0.3))).depth <= 1e-12
    assert I.interpenetration(a, box("b", [1, 1, 1], (5, 5, 5))).depth == 0.0


def test_an_edge_through_a_face_with_every_corner_outside():
    """A long thin box turned 45 degrees about x, its lower edge 3 mm into the top face of a unit box and
    longer than it: no corner of either is inside the other, and the depth is 3 mm."""
    a = box("a", [1, 1, 1])
    half_diag = 0.1 * np.sqrt(2)  # of the 0.2 x 0.2 section turned 45 degrees
    b = box("b", [2, 0.2, 0.2], (0, 0.5 - 0.003 + half_diag, 0), rot_x(45))
    sa, sb = I.Solid.from_mesh("a", a.vertices, a.faces, a.pose), I.Solid.from_mesh("b", b.vertices, b.faces, b.pose)
    assert I.signed_depths(sa.tris.reshape(-1, 3), sb).max() < 0  # a vertex-only measure sees nothing
    assert I.signed_depths(sb.tris.reshape(-1, 3), sa).max() < 0
    r = I.interpenetration(a, b)
    assert 0.003 - TOL <= r.depth <= 0.003 + 1e-12 and r.a == "b", r
    assert abs(r.point[1] - (0.5 - 0.003)) < TOL  # on b's lower edge


def test_sphere_in_the_bowl():
    """A sphere mesh (radius 0.3) on the bowl's axis, 3 mm lower than touching the bottom of the bowl's
    inside (the inner sheet's pole vertex, 0.82 under the rim's centre). The bowl's inner surface there
    is a fan of triangles round that vertex, tilted 2.8 degrees: a ball of radius r centred at C reaches
    r - dist(C, plane) behind a fan triangle's plane, and the bowl's points reach as deep into the ball,
    so that is the answer (3.3 mm, not 3: the fan is flatter than the sphere it stands for), less the
    sphere mesh's own facets' sag (54 micrometres). Raised 1 cm: 0."""
    bowl = trimesh.load(os.path.join(ASSETS, "bowl.ply"), process=False)
    pole = int(np.argmin(np.linalg.norm(bowl.vertices - [0, -0.37, 0], axis=1)))
    assert np.allclose(bowl.vertices[pole], [0, -0.37, 0], atol=1e-6)  # assets/generate.py: rim at y = 0.45
    fan = bowl.faces[np.any(bowl.faces == pole, axis=1)]
    assert len(fan) == 48
    b = mesh_body("bowl", bowl)
    radius, delta = 0.3, 0.003
    centre = np.array([0, bowl.vertices[pole, 1] - delta + radius, 0])
    tri = bowl.vertices[fan[0]]
    n = np.cross(tri[1] - tri[0], tri[2] - tri[0])
    want = radius - abs((centre - tri[0]) @ n) / np.linalg.norm(n)
    assert 0.0033 < want < 0.0034
    s = mesh_body("sphere", trimesh.creation.icosphere(subdivisions=5, radius=radius), centre)
    r = I.interpenetration(s, b)
    assert want - 6e-5 - TOL <= r.depth <= want + 1e-9, (r, want)
    # and no sampled point of either surface is deeper than that (brute force)
    for x, y in ((s, b), (b, s)):
        pts = np.asarray(trimesh.sample.sample_surface(world_mesh(x), 20000, seed=4)[0])
        pts = pts[np.linalg.norm(pts - bowl.vertices[pole], axis=1) < 0.1]  # near the contact
        assert len(pts) > 20
        assert brute_depth(pts, world_mesh(y).triangles).max() <= r.depth + TOL
    raised = mesh_body("sphere", trimesh.creation.icosphere(subdivisions=5, radius=radius), centre + [0, 0.01, 0])
    assert I.interpenetration(raised, b).depth == 0.0


def test_box_under_a_ground_plane():
    g = ground_body()
    b = box_body("b", [0.2, 0.1, 0.3], (0.4, 0.1 - 0.004, -0.2), motion="dynamic")
    r = I.interpenetration(b, g)
    assert r.a == "b" and r.b == "ground" and abs(r.depth - 0.004) < 1e-12
    turned = box_body("t", [0.2, 0.1, 0.3], (-1, 0.5, 0), motion="dynamic",
                      rot=random_rotation(np.random.default_rng(5)))
    low = (turned.vertices @ turned.pose[:3, :3].T)[:, 1].min() + 0.5
    turned.pose[1, 3] -= low + 0.0025
    assert abs(I.interpenetration(g, turned).depth - 0.0025) < 1e-12
    pairs = I.scene_interpenetration([g, b, turned, box_body("far", [0.1] * 3, (3, 1, 3), motion="dynamic")])
    assert [(p.a, p.b) for p in pairs] == [("b", "ground"), ("t", "ground")]


# ------------------------------------------------------------ against brute force


def _random_pair(rng, kind):
    if kind == "boxes":
        a = box("a", rng.uniform(0.1, 0.6, 3), (0, 0, 0), random_rotation(rng))
        b = box("b", rng.uniform(0.1, 0.6, 3), rng.normal(scale=0.2, size=3), random_rotation(rng))
    elif kind == "spheres":
        a = mesh_body("a", trimesh.creation.icosphere(subdivisions=3, radius=0.3))
        b = box("b", rng.uniform(0.2, 0.6, 3), rng.normal(scale=0.25, size=3), random_rotation(rng))
    else:
        blob = trimesh.load(os.path.join(ASSETS, "blob.ply"), process=False)
        a = mesh_body("a", blob, (0, 0, 0), random_rotation(rng))
        b = mesh_body("b", trimesh.creation.torus(0.3, 0.1), rng.normal(scale=0.3, size=3), random_rotation(rng))
    return a, b


@pytest.mark.parametrize("kind", ["boxes", "spheres", "blob and torus"])
def test_random_pairs_against_brute_force(kind):
    rng = np.random.default_rng({"boxes": 6, "spheres": 7, "blob and torus": 8}[kind])
    samples = 2000 if kind == "blob and torus" else 20000  # brute force is slow on 5120 triangles
    seen = 0
    for _ in range(4):
        a, b = _random_pair(rng, kind)
        r = I.interpenetration(a, b)
        bodies = {"a": a, "b": b}
        if r.depth > 0:
            seen += 1
            on, into = world_mesh(bodies[r.a]), world_mesh(bodies[r.b])
            assert brute_distance(r.point[None], on.triangles)[0] < 1e-9  # on A's surface
            assert abs(brute_depth(r.point[None], into.triangles)[0] - r.depth) < 1e-9
        for x, y in ((a, b), (b, a)):
            pts = np.asarray(trimesh.sample.sample_surface(world_mesh(x), samples, seed=9)[0])
            ym = world_mesh(y)
            pts = pts[np.all((pts >= ym.bounds[0]) & (pts <= ym.bounds[1]), axis=1)]
            if len(pts):  # the promise: d <= D <= d + max(0.1 mm, 1% of d)
                assert brute_depth(pts, ym.triangles).max() <= r.depth + max(TOL, 0.01 * r.depth)
    assert seen >= 2  # most of the random pairs overlap


# ------------------------------------------------------------ open meshes


def test_open_meshes():
    m = trimesh.creation.box(extents=[1, 1, 1])
    bottom = m.face_normals[:, 1] < -0.5
    open_box = mesh_body("open", trimesh.Trimesh(m.vertices, m.faces[~bottom], process=False))
    closed = box("closed", [0.6, 1, 0.6], (0, 1 - 0.004, 0))  # its bottom 4 mm under the open box's top
    solid = I.Solid.from_mesh("open", open_box.vertices, open_box.faces)
    assert not solid.closed
    with pytest.raises(ValueError, match="open"):
        I.depth_in_mesh(closed.vertices[closed.faces], solid)
    with pytest.raises(ValueError, match="open"):
        I.interpenetration(open_box, mesh_body("open2", trimesh.Trimesh(m.vertices, m.faces[2:], process=False),
                                               (0.1, 0.1, 0)))
    r = I.interpenetration(open_box, closed)  # only the open box's points inside the closed one
    assert r.a == "open" and 0.004 - TOL <= r.depth <= 0.004 + 1e-12
