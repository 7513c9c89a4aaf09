"""Convex shapes against triangle meshes (collision/convex_mesh.py).

References: analytic resting contacts on flat and V-shaped floors made of
many triangles, and the brute force that runs the per-triangle penetration on
every face of the mesh without the tree.
"""

import math

import numpy as np
import pytest
import trimesh

import obbcollide as co
from obbcollide.convex_mesh import collide_convex_trimesh
from obbcollide.epa import convex_penetration
from obbcollide.shapes import Capsule, Hull, Sphere, TriMesh, box_hull

from .._reference import random_rotation


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
