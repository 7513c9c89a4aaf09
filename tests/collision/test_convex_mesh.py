"""Convex shapes against triangle meshes (collision/convex_mesh.py).

References: analytic resting contacts on flat and V-shaped floors made of
many triangles, the brute force that runs the per-triangle penetration on
every face of the mesh without the tree, and the Python twin of the grouping
of per-triangle contacts into manifolds (``_convex_mesh_reference``).
"""

import functools
import math

import numpy as np
import pytest
import trimesh
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import obbcollide as co
from obbcollide.convex_mesh import MESH_KIND_NAMES, collide_convex_trimesh, collide_convex_trimesh_pairs
from obbcollide.epa import convex_penetration
from obbcollide.halfspace_batch import CoreTable
from obbcollide.hull_batch import HullTable
from obbcollide.shapes import Capsule, Hull, Sphere, TriMesh, box_hull, local_box

from .._reference import random_rotation
from ._convex_mesh_reference import collide_convex_trimesh_py

SETTINGS = dict(deadline=None, database=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])


def pose(rot=None, t=(0, 0, 0)):
    p = np.eye(4)
    if rot is not None:
        p[:3, :3] = rot
    p[:3, 3] = t
    return p


def grid_floor(n=6, size=3.0):
    """A flat floor y = 0 of 2 n^2 triangles facing up."""
    xs = np.linspace(-size, size, n + 1)
    v = np.array([[x, 0.0, z] for z in xs for x in xs])
    f = []
    for i in range(n):
        for j in range(n):
            a = i * (n + 1) + j
            f += [[a, a + n + 1, a + 1], [a + 1, a + n + 1, a + n + 2]]
    return TriMesh(co.OBBTree(v, np.array(f)))


def v_floor():
    """Two planes meeting at y = 0 along z, at 45 degrees: y = |x|."""
    v = np.array([[-3, 3, -3], [-3, 3, 3], [0, 0, -3], [0, 0, 3], [3, 3, -3], [3, 3, 3]], float)
    f = np.array([[0, 1, 2], [2, 1, 3], [2, 3, 4], [4, 3, 5]])
    return TriMesh(co.OBBTree(v, f))


def check(m):
    np.testing.assert_allclose(np.linalg.norm(m.normal), 1.0, atol=1e-12)
    np.testing.assert_allclose((m.points_a - m.points_b) @ m.normal, m.depths, atol=1e-9)
    assert 1 <= len(m.depths) <= 4


@pytest.mark.parametrize("n", [1, 6])
@pytest.mark.parametrize("yaw", [0.0, 0.4, 1.3])
def test_box_on_a_tessellated_floor_is_one_manifold_of_four_points(n, yaw):
    floor = grid_floor(n)
    box = box_hull((0.5, 0.25, 0.4))
    p = pose(trimesh.transformations.rotation_matrix(yaw, [0, 1, 0])[:3, :3], (0.3, 0.25 - 0.02, -0.2))
    found = collide_convex_trimesh(box, p, floor, pose(), margin=0.0)
    assert len(found) == 1
    (_, m), = found
    check(m)
    assert len(m.depths) == 4
    np.testing.assert_allclose(m.depths, 0.02, atol=1e-9)
    np.testing.assert_allclose(m.normal, [0, -1, 0], atol=1e-9)
    corners = (box.core @ p[:3, :3].T + p[:3, 3])
    bottom = corners[corners[:, 1] < 0.1]
    got = np.sort(m.points_a.round(9), axis=0)
    np.testing.assert_allclose(got, np.sort(bottom.round(9), axis=0), atol=1e-9)


def test_sphere_on_the_floor_and_margin():
    floor = grid_floor(4)
    found = collide_convex_trimesh(Sphere(0.5), pose(t=(0.1, 0.48, 0.2)), floor, pose())
    (_, m), = found
    assert m.depths.max() == pytest.approx(0.02, abs=1e-9)
    assert collide_convex_trimesh(Sphere(0.5), pose(t=(0.1, 0.53, 0.2)), floor, pose(), margin=0.0) == []
    (_, m), = collide_convex_trimesh(Sphere(0.5), pose(t=(0.1, 0.53, 0.2)), floor, pose(), margin=0.05)
    assert m.depths.max() == pytest.approx(-0.03, abs=1e-9)


def test_capsule_lying_on_the_floor_has_two_points():
    floor = grid_floor(5)
    lying = pose(trimesh.transformations.rotation_matrix(math.pi / 2, [0, 0, 1])[:3, :3], (0.2, 0.19, 0.3))
    (_, m), = collide_convex_trimesh(Capsule(0.2, 0.6), lying, floor, pose())
    check(m)
    assert len(m.depths) == 2
    np.testing.assert_allclose(m.depths, 0.01, atol=1e-9)


def test_box_in_a_v_gets_a_manifold_per_plane():
    box = box_hull((0.5, 0.5, 0.5))
    rot = trimesh.transformations.rotation_matrix(math.pi / 4, [0, 0, 1])[:3, :3]  # faces on both planes
    d = 0.01
    p = pose(rot, (0, 0.5 * math.sqrt(2) - d * math.sqrt(2), 0))  # sunk d along each plane's normal
    found = collide_convex_trimesh(box, p, v_floor(), pose())
    assert len(found) == 2
    normals = sorted(tuple(m.normal.round(9)) for _, m in found)
    s = math.sqrt(0.5)
    np.testing.assert_allclose(normals, [(-s, -s, 0), (s, -s, 0)], atol=1e-9)
    for _, m in found:
        check(m)
        np.testing.assert_allclose(m.depths.max(), d, atol=1e-9)


@pytest.mark.parametrize("seed", range(15))
def test_faces_in_contact_equal_brute_force(seed):
    rng = np.random.default_rng(seed)
    bowl = trimesh.creation.icosphere(2, radius=2.0)
    mesh = TriMesh(co.OBBTree(bowl))
    hull = Hull.from_points(rng.normal(size=(16, 3)) * 0.3)
    d = rng.normal(size=3)
    p = pose(random_rotation(rng), d / np.linalg.norm(d) * rng.uniform(1.6, 2.2))  # near the sphere's surface
    margin = 0.02
    found = collide_convex_trimesh(hull, p, mesh, pose(), margin)
    got_deepest = max((m.depths.max() for _, m in found), default=-np.inf)
    tris = np.asarray(bowl.vertices)[np.asarray(bowl.faces)]
    ref = [convex_penetration(hull.core, p, t, np.eye(4)).depth for t in tris]
    ref = [x for x in ref if x >= -margin]
    assert (len(found) > 0) == (len(ref) > 0)
    if ref:
        # the deepest point reported is at least the deepest triangle's EPA depth (face patches
        # may find deeper clipped corners, never shallower) and at most the hull's size deeper
        assert got_deepest >= max(ref) - 1e-9
        assert got_deepest <= max(ref) + 1.0
    for _, m in found:
        check(m)


@functools.cache
def ball_mesh():
    """A closed sphere of 1,280 triangles (radius 2): pieces near its surface touch curved regions."""
    return TriMesh(co.OBBTree(trimesh.creation.icosphere(3, radius=2.0)))


def random_piece(rng, kind):
    if kind == 0:
        return Hull.from_points(rng.normal(size=(16, 3)) * 0.3)
    if kind == 1:
        return box_hull(rng.uniform(0.1, 0.5, 3))
    if kind == 2:
        return Sphere(rng.uniform(0.1, 0.5))
    return Capsule(rng.uniform(0.1, 0.3), rng.uniform(0.1, 0.8))


def near_the_ball(rng, mesh_pose):
    d = rng.normal(size=3)
    p = pose(random_rotation(rng), d / np.linalg.norm(d) * rng.uniform(1.6, 2.2))
    return mesh_pose @ p


def same_manifolds(got, want):
    """Equal lists of (key, Manifold), bit for bit."""
    assert [k for k, _ in got] == [k for k, _ in want]
    for (_, a), (_, b) in zip(got, want):
        assert a.kind == b.kind and a.tests == b.tests and a.sat_depth == b.sat_depth
        for name in ("normal", "points_a", "points_b", "depths", "ids"):
            np.testing.assert_array_equal(getattr(a, name), getattr(b, name), err_msg=name)


@settings(max_examples=120, **SETTINGS)
@given(seed=st.integers(0, 2**32 - 1), kind=st.integers(0, 3), tilted=st.booleans(),
       margin=st.sampled_from([0.0, 0.02, 0.1]))
def test_compiled_grouping_equals_the_python_twin(seed, kind, tilted, margin):
    """The compiled path (tree query, per-triangle patches, grouping, outline, reduction) gives what
    the Python twin gives on a curved mesh, bit for bit, for every kind of piece."""
    rng = np.random.default_rng(seed)
    mesh_pose = pose(random_rotation(rng), rng.normal(size=3)) if tilted else pose()
    piece = random_piece(rng, kind)
    p = near_the_ball(rng, mesh_pose)
    got = collide_convex_trimesh(piece, p, ball_mesh(), mesh_pose, margin)
    same_manifolds(got, collide_convex_trimesh_py(piece, p, ball_mesh(), mesh_pose, margin))
    for _, m in got:
        check(m)


@pytest.mark.parametrize("seed", range(4))
def test_grouping_on_a_tessellated_floor_equals_the_python_twin(seed):
    """Many coplanar triangles under one piece: the outline drops the points the clipping left along
    the patch's edges (their cross products are zero up to rounding) as the twin does."""
    rng = np.random.default_rng(seed)
    floor = grid_floor(12, 3.0)
    for t in range(40):
        piece = random_piece(rng, t % 4)
        rot = random_rotation(rng) if t % 3 else trimesh.transformations.rotation_matrix(
            rng.uniform(0, 2 * math.pi), [0, 1, 0])[:3, :3]
        p = pose(rot, (rng.uniform(-2, 2), rng.uniform(0.0, 0.5), rng.uniform(-2, 2)))
        got = collide_convex_trimesh(piece, p, floor, pose(), 0.02)
        same_manifolds(got, collide_convex_trimesh_py(piece, p, floor, pose(), 0.02))


def test_a_resting_box_skips_the_points_of_its_coplanar_neighbours():
    """A box resting on a tessellated floor: the triangles beside its face (within the margin, no
    face patch) lie in the patches' plane, so the kernel gives them no GJK / EPA point; the
    manifolds equal the twin's, which computes every such point and then drops it."""
    from obbcollide.convex_mesh import _convex_trimesh_kernel

    from obbcollide.hull_data import HullData

    rng = np.random.default_rng(3)
    floor = grid_floor(12, 3.0)
    skipped = 0
    for _ in range(24):
        h = rng.uniform(0.1, 0.5, 3)
        piece = box_hull(h)
        rot = trimesh.transformations.rotation_matrix(rng.uniform(0, 2 * math.pi), [0, 1, 0])[:3, :3]
        p = pose(rot, (rng.uniform(-2, 2), h[1] + rng.uniform(-0.01, 0.015), rng.uniform(-2, 2)))
        same_manifolds(collide_convex_trimesh(piece, p, floor, pose(), 0.02),
                       collide_convex_trimesh_py(piece, p, floor, pose(), 0.02))
        c, axes, half = local_box(piece)
        centre = p[:3, :3] @ c + p[:3, 3]
        faces = co.triangles_near_box(floor.tree, pose(), centre, axes @ p[:3, :3].T, half + 0.02)
        tris = np.ascontiguousarray(floor.tree.vertices[floor.tree.faces[faces]])
        hd = HullData.from_polyhedron(piece.poly)
        kinds = []
        for near in (1e-6, -1.0):
            k = len(faces)
            out = (np.zeros(k, np.int64), np.zeros((k, 3)), np.zeros((k, 4, 3)), np.zeros((k, 4, 3)),
                   np.zeros((k, 4)), np.zeros(k, np.int64))
            _convex_trimesh_kernel(2, hd.vertices, 0.0, hd.normals, hd.face_start, hd.face_verts, p, centre, tris,
                                   0.02, near, *out)
            kinds.append(out[-1])
        assert np.all(kinds[0][kinds[0] != 0] == kinds[1][kinds[0] != 0])  # the patches are the same
        skipped += int(((kinds[0] == 0) & (kinds[1] == 2)).sum())
    assert skipped >= 8


def test_a_curved_patch_keeps_its_deepest_point():
    """A face patch over several triangles of a curved mesh is not one plane: the deepest of its
    points can lie between two corners of its outline, and the manifold still holds it (its depth
    is the manifold's SAT depth, the deepest of all its candidate points)."""
    rng = np.random.default_rng(1)
    seen = 0
    for t in range(300):
        piece = random_piece(rng, t % 4)
        p = near_the_ball(rng, pose())
        for _, m in collide_convex_trimesh(piece, p, ball_mesh(), pose(), 0.02):
            if m.kind == "face_b" and m.tests > 1:
                seen += 1
                assert m.depths.max() >= m.sat_depth - 1e-9
    assert seen > 50


@pytest.mark.parametrize("flip_mesh", [False, True])
def test_batch_equals_one_call_per_piece(flip_mesh):
    """collide_convex_trimesh_pairs on a mix of hulls, boxes, spheres and capsules (some apart from
    the mesh) gives each piece what collide_convex_trimesh gives it, in the pieces' order."""
    rng = np.random.default_rng(7)
    mesh_pose = pose(random_rotation(rng), (0.5, -1.0, 0.2)) if flip_mesh else pose()
    pieces, poses = [], []
    for t in range(24):
        pieces.append(random_piece(rng, t % 4))
        poses.append(near_the_ball(rng, mesh_pose) if t % 5 else mesh_pose @ pose(t=(9.0, 0.0, 0.0)))
    cores, hulls = CoreTable(), HullTable()
    core_ids = [cores.add(s) for s in pieces]
    hull_ids = [hulls.add(s.poly) if isinstance(s, Hull) else -1 for s in pieces]
    boxes = [np.array([local_box(s)[c] for s in pieces]) for c in range(3)]
    margins = rng.uniform(0.0, 0.05, len(pieces))
    out = collide_convex_trimesh_pairs(cores, hulls, core_ids, hull_ids, boxes, np.array(poses), ball_mesh(),
                                       mesh_pose, margins)
    assert np.all(np.diff(out.pair) >= 0)
    total = 0
    for t, (s, p) in enumerate(zip(pieces, poses)):
        want = collide_convex_trimesh(s, p, ball_mesh(), mesh_pose, margins[t])
        rows = np.flatnonzero(out.pair == t)
        b = out.batch
        got = [(int(out.key[r]), co.Manifold(b.normal[r], b.points_a[r, :b.count[r]], b.points_b[r, :b.count[r]],
                                             b.depths[r, :b.count[r]], b.ids[r, :b.count[r]],
                                             MESH_KIND_NAMES[b.kind[r]], int(b.tests[r]), float(b.sat_depth[r])))
               for r in rows]
        same_manifolds(got, want)
        total += len(want)
        if t % 5 == 0:
            assert want == []
    assert total > 20


def test_batch_refuses_bad_arguments_by_name():
    cores, hulls = CoreTable([Sphere(0.5)]), HullTable()
    boxes = (np.zeros((1, 3)), np.eye(3)[None], np.ones((1, 3)))
    good = dict(cores=cores, hulls=hulls, core_ids=[0], hull_ids=[-1], boxes=boxes, poses=pose(t=(0, 1.8, 0))[None],
                mesh=ball_mesh(), mesh_pose=pose(), margins=[0.0])
    assert len(collide_convex_trimesh_pairs(**good)) == 1  # (a sphere through the ball's surface)
    nan = pose()
    nan[0, 3] = np.nan
    squeezed = pose()
    squeezed[0, 0] = 0.5
    for change, name in [({"core_ids": [3]}, "core_ids"), ({"hull_ids": [0]}, "hull_ids"),
                         ({"hull_ids": [-1, -1]}, "hull_ids"), ({"poses": nan[None]}, "poses"),
                         ({"poses": squeezed[None]}, "poses"), ({"mesh_pose": nan}, "mesh_pose"),
                         ({"margins": [-1.0]}, "margins"), ({"boxes": (np.zeros((2, 3)),) + boxes[1:]}, "boxes"),
                         ({"mesh": Sphere(1.0)}, "mesh")]:
        with pytest.raises(ValueError, match=name):
            collide_convex_trimesh_pairs(**{**good, **change})
