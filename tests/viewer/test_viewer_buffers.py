"""Geometry-to-buffer code of the viewer (app/viewer/buffers.py), without a window.

Every function returns float32 vertex arrays; the geometry is checked against
independent constructions: face normals against the winding cross product, box
wireframes against :attr:`collision.OBB.corners`, AABB wireframes against the
box's min/max, and so on.
"""

import numpy as np
import pytest
import trimesh

from app.viewer import buffers as bf
from obbcollide import OBB

from .._reference import random_rotation

F32 = dict(rtol=1e-6, atol=1e-6)


def random_pose(rng):
    p = np.eye(4)
    p[:3, :3] = random_rotation(rng)
    p[:3, 3] = rng.normal(size=3) * 3
    return p


# -- flat_mesh -----------------------------------------------------------------


@pytest.mark.parametrize("seed", range(5))
def test_flat_mesh_shapes_dtypes_and_positions(seed):
    rng = np.random.default_rng(seed)
    v = rng.normal(size=(30, 3))
    f = rng.integers(0, 30, size=(50, 3))
    pos, nrm = bf.flat_mesh(v, f)
    assert pos.shape == (150, 3) and nrm.shape == (150, 3)
    assert pos.dtype == np.float32 and nrm.dtype == np.float32
    # Corner 3k + i of the list is vertex faces[k, i].
    np.testing.assert_allclose(pos, v[f].reshape(-1, 3), **F32)


@pytest.mark.parametrize("seed", range(5))
def test_flat_mesh_normals_are_unit_follow_winding_and_repeat(seed):
    rng = np.random.default_rng(seed)
    v = rng.normal(size=(40, 3))
    f = np.array([rng.choice(40, 3, replace=False) for _ in range(60)])
    _, nrm = bf.flat_mesh(v, f)
    n = nrm.reshape(-1, 3, 3).astype(float)
    # Same normal on the three corners of a face.
    assert np.array_equal(n[:, 0], n[:, 1]) and np.array_equal(n[:, 0], n[:, 2])
    n = n[:, 0]
    np.testing.assert_allclose(np.linalg.norm(n, axis=1), 1.0, atol=1e-6)
    tri = v[f]
    e1, e2 = tri[:, 1] - tri[:, 0], tri[:, 2] - tri[:, 0]
    # Perpendicular to both edges ...
    np.testing.assert_allclose(np.einsum("ij,ij->i", n, e1) / np.linalg.norm(e1, axis=1), 0, atol=1e-5)
    np.testing.assert_allclose(np.einsum("ij,ij->i", n, e2) / np.linalg.norm(e2, axis=1), 0, atol=1e-5)
    # ... and on the counter-clockwise side (right-hand rule): det[e1, e2, n] > 0.
    assert np.all(np.linalg.det(np.stack([e1, e2, n], axis=1)) > 0)


def test_flat_mesh_reversed_winding_flips_the_normal():
    v = np.array([[0.0, 0, 0], [1, 0, 0], [0, 1, 0]])
    _, n = bf.flat_mesh(v, [[0, 1, 2]])
    _, m = bf.flat_mesh(v, [[0, 2, 1]])
    np.testing.assert_allclose(n, np.tile([0, 0, 1], (3, 1)), **F32)
    np.testing.assert_allclose(m, np.tile([0, 0, -1], (3, 1)), **F32)


def test_flat_mesh_normals_point_out_of_a_closed_mesh():
    m = trimesh.creation.icosphere(subdivisions=2, radius=1.3)
    pos, nrm = bf.flat_mesh(m.vertices, m.faces)
    centroids = pos.reshape(-1, 3, 3).mean(axis=1)
    assert np.all(np.einsum("ij,ij->i", nrm[::3], centroids) > 0)
    np.testing.assert_allclose(nrm[::3], m.face_normals, atol=1e-6)


def test_flat_mesh_degenerate_faces_get_zero_normals():
    v = np.array([[0.0, 0, 0], [1, 0, 0], [2, 0, 0], [0, 1, 0]])
    f = np.array([[0, 1, 3], [0, 1, 2], [1, 1, 3], [3, 3, 3], [0, 3, 1]])  # collinear, repeated
    pos, nrm = bf.flat_mesh(v, f)
    assert np.all(np.isfinite(nrm))
    assert np.array_equal(nrm[3:12], np.zeros((9, 3), np.float32))
    np.testing.assert_allclose(nrm[0:3], np.tile([0, 0, 1], (3, 1)), **F32)
    np.testing.assert_allclose(nrm[12:15], np.tile([0, 0, -1], (3, 1)), **F32)


def test_flat_mesh_empty():
    pos, nrm = bf.flat_mesh(np.zeros((0, 3)), np.zeros((0, 3), int))
    assert pos.shape == (0, 3) and nrm.shape == (0, 3)
    assert pos.dtype == np.float32 and nrm.dtype == np.float32


# -- box_lines -------------------------------------------------------------------


def random_boxes(rng, k):
    centers = rng.normal(size=(k, 3)) * 2
    axes = np.array([random_rotation(rng).T for _ in range(k)])  # rows
    half = rng.uniform(0.05, 2.0, size=(k, 3))
    return centers, axes, half


def check_wireframe(lines, corners, axes, half):
    """lines (24, 3) of one box, its corners (8, 3), axes rows (3, 3) and half extents (3,)."""
    edges = lines.reshape(12, 2, 3).astype(float)
    scale = max(1.0, float(np.abs(corners).max()))
    used = []
    for a, b in edges:
        # Both ends are corners of the box.
        for p in (a, b):
            assert np.min(np.linalg.norm(corners - p, axis=1)) < 1e-5 * scale
        d = b - a
        # The edge is along exactly one box axis, with length 2 * that half extent.
        comp = axes @ d
        i = int(np.argmax(np.abs(comp)))
        np.testing.assert_allclose(np.linalg.norm(d), 2 * half[i], rtol=1e-5, atol=1e-5 * scale)
        np.testing.assert_allclose(np.delete(comp, i), 0, atol=1e-5 * scale)
        used.append(i)
    # Four edges along each axis, twelve distinct edges, all 8 corners used.
    assert sorted(used) == [0] * 4 + [1] * 4 + [2] * 4
    keys = {tuple(sorted([tuple(np.round(a, 4)), tuple(np.round(b, 4))])) for a, b in edges}
    assert len(keys) == 12
    ends = edges.reshape(-1, 3)
    for c in corners:
        assert np.sum(np.linalg.norm(ends - c, axis=1) < 1e-5 * scale) == 3  # three edges per corner


@pytest.mark.parametrize("seed", range(5))
def test_box_lines_matches_obb_corners(seed):
    rng = np.random.default_rng(seed)
    k = 7
    centers, axes, half = random_boxes(rng, k)
    lines = bf.box_lines(centers, axes, half)
    assert lines.shape == (24 * k, 3) and lines.dtype == np.float32
    for j in range(k):
        corners = OBB(centers[j], axes[j], half[j]).corners
        check_wireframe(lines[24 * j:24 * (j + 1)], corners, axes[j], half[j])


@pytest.mark.parametrize("seed", range(5))
def test_box_lines_applies_the_pose(seed):
    rng = np.random.default_rng(100 + seed)
    k = 4
    centers, axes, half = random_boxes(rng, k)
    pose = random_pose(rng)
    lines = bf.box_lines(centers, axes, half, pose)
    plain = bf.box_lines(centers, axes, half)
    # Pointwise: the posed list is the plain list moved by the pose.
    np.testing.assert_allclose(lines, plain.astype(float) @ pose[:3, :3].T + pose[:3, 3], rtol=1e-5, atol=1e-5)
    for j in range(k):
        world = OBB(pose[:3, :3] @ centers[j] + pose[:3, 3], axes[j] @ pose[:3, :3].T, half[j])
        check_wireframe(lines[24 * j:24 * (j + 1)], world.corners, world.axes, half[j])
    # And the pose does change something.
    assert not np.allclose(lines, plain, atol=1e-3)


def test_box_lines_single_box_unreshaped_input_and_flat_box():
    lines = bf.box_lines([1.0, 2.0, 3.0], np.eye(3), [0.5, 0.0, 2.0])  # a zero extent is allowed
    assert lines.shape == (24, 3)
    corners = OBB([1.0, 2.0, 3.0], np.eye(3), [0.5, 0.0, 2.0]).corners
    for p in lines:
        assert np.min(np.linalg.norm(corners - p, axis=1)) < 1e-6
    np.testing.assert_allclose(lines.min(0), [0.5, 2.0, 1.0], **F32)
    np.testing.assert_allclose(lines.max(0), [1.5, 2.0, 5.0], **F32)


# -- aabb_lines ------------------------------------------------------------------


@pytest.mark.parametrize("seed", range(3))
def test_aabb_lines(seed):
    rng = np.random.default_rng(200 + seed)
    k = 5
    lo = rng.normal(size=(k, 3))
    hi = lo + rng.uniform(0.1, 3.0, size=(k, 3))
    lines = bf.aabb_lines(lo, hi)
    assert lines.shape == (24 * k, 3) and lines.dtype == np.float32
    for j in range(k):
        seg = lines[24 * j:24 * (j + 1)]
        np.testing.assert_allclose(seg.min(0), lo[j], **F32)
        np.testing.assert_allclose(seg.max(0), hi[j], **F32)
        # Every point is a corner: each coordinate is lo or hi.
        at_lo = np.isclose(seg, lo[j], atol=1e-5)
        at_hi = np.isclose(seg, hi[j], atol=1e-5)
        assert np.all(at_lo | at_hi)
        corners = np.array([[(lo[j], hi[j])[s][i] for i, s in enumerate(bits)]
                            for bits in np.ndindex(2, 2, 2)])
        check_wireframe(seg, corners, np.eye(3), (hi[j] - lo[j]) / 2)


def test_aabb_lines_single_box():
    lines = bf.aabb_lines([0, 0, 0], [1, 2, 3])
    assert lines.shape == (24, 3)
    np.testing.assert_allclose(lines.max(0), [1, 2, 3])


# -- grid, crosses, segments, rays -------------------------------------------------


@pytest.mark.parametrize("half_size, step", [(5.0, 0.5), (2.0, 1.0), (3.0, 0.25), (1.0, 2.0)])
def test_grid_lines(half_size, step):
    y = 0.75
    g = bf.grid_lines(half_size, step, y)
    ticks = int(round(2 * half_size / step)) + 1
    assert g.dtype == np.float32
    assert g.shape == (2 * 2 * ticks, 3)  # ticks lines along z and along x, two points each
    np.testing.assert_allclose(g[:, 1], y)
    seg = g.reshape(-1, 2, 3).astype(float)
    d = seg[:, 1] - seg[:, 0]
    along_z = np.isclose(d[:, 0], 0) & np.isclose(d[:, 2], 2 * half_size)
    along_x = np.isclose(d[:, 2], 0) & np.isclose(d[:, 0], 2 * half_size)
    assert along_z.sum() == ticks and along_x.sum() == ticks
    # The lines along z sit at x = -half, -half + step, ..., +half (and symmetrically).
    np.testing.assert_allclose(np.sort(seg[along_z, 0, 0]), -half_size + step * np.arange(ticks), atol=1e-6)
    np.testing.assert_allclose(np.sort(seg[along_x, 0, 2]), -half_size + step * np.arange(ticks), atol=1e-6)
    np.testing.assert_allclose(np.abs(g[:, [0, 2]]).max(), half_size)


BAD_BOUNDS = [  # the scene's box, and the grid's half size: 1.3 x the farthest finite x or z, at most 1e6
    pytest.param([-1e300, 0, -1], [1e300, 1, 1], 1.3e6, id="1e300"),
    pytest.param([-1.7e308, 0, -1.7e308], [1.7e308, 1, 1.7e308], 1.3e6, id="near-overflow"),
    pytest.param([-1, 0, -1], [np.inf, 1, 1], 1.3, id="inf"),
    pytest.param([np.nan, 0, -1], [1, 1, 1], 1.3, id="nan"),
    pytest.param([np.nan] * 3, [np.nan] * 3, 1.3e-3, id="all-nan"),
    pytest.param([0, 0, 0], [0, 0, 0], 1.3e-3, id="empty"),
    pytest.param([-1.0, 0, -2.5], [2.0, 1.5, 0.5], 3.3, id="ordinary"),
]


@pytest.mark.parametrize("lo, hi, half", BAD_BOUNDS)
def test_grid_extent_and_lines_never_fail_on_a_huge_or_non_finite_scene(lo, hi, half):
    """A mesh at 1e300 ended the viewer in grid_lines ("arange: cannot compute length")."""
    got, step = bf.grid_extent(np.array(lo, float), np.array(hi, float))
    assert got == pytest.approx(half) and step == pytest.approx(10.0 ** np.floor(np.log10(half / 1.3 / 4)))
    g = bf.grid_lines(got, step)
    ticks = int(round(2 * got / step)) + 1
    assert g.shape == (4 * ticks, 3) and np.all(np.isfinite(g)) and ticks <= bf.GRID_MAX_TICKS


@pytest.mark.parametrize("half, step", [(np.inf, 1.0), (np.nan, 1.0), (1.0, np.nan), (1.0, 0.0), (-1.0, 0.5),
                                        (1.0, -0.5), (1e39, 1.0), (1.0, np.inf)])
def test_grid_lines_of_sizes_that_cannot_be_drawn_give_no_lines(half, step):
    g = bf.grid_lines(half, step)
    assert g.dtype == np.float32 and g.shape == (0, 3)


@pytest.mark.parametrize("half, step", [(1e30, 1.0), (1.0, 1e-300), (1e6, 1e-3)])
def test_grid_lines_too_fine_are_widened(half, step):
    g = bf.grid_lines(half, step)
    ticks = len(g) // 4
    assert ticks == bf.GRID_MAX_TICKS and np.all(np.isfinite(g))
    np.testing.assert_allclose(np.abs(g[:, [0, 2]]).max(), half, rtol=1e-6)


@pytest.mark.parametrize("seed", range(3))
def test_cross_lines(seed):
    rng = np.random.default_rng(300 + seed)
    pts = rng.normal(size=(6, 3))
    size = 0.1
    c = bf.cross_lines(pts, size)
    assert c.shape == (36, 3) and c.dtype == np.float32
    strokes = c.reshape(6, 3, 2, 3).astype(float)
    for k in range(6):
        seen = []
        for s in strokes[k]:
            np.testing.assert_allclose(s.mean(axis=0), pts[k], atol=1e-6)  # centred on the point
            d = s[1] - s[0]
            i = int(np.argmax(np.abs(d)))
            np.testing.assert_allclose(np.abs(d[i]), 2 * size, rtol=1e-5)
            np.testing.assert_allclose(np.delete(d, i), 0, atol=1e-6)
            seen.append(i)
        assert sorted(seen) == [0, 1, 2]  # one stroke per axis
    assert bf.cross_lines(pts[0], size).shape == (6, 3)
    assert bf.cross_lines(np.zeros((0, 3)), size).shape == (0, 3)


def test_segment_lines():
    rng = np.random.default_rng(4)
    s = rng.normal(size=(5, 2, 3))
    lines = bf.segment_lines(s)
    assert lines.shape == (10, 3) and lines.dtype == np.float32
    np.testing.assert_allclose(lines[0::2], s[:, 0], **F32)
    np.testing.assert_allclose(lines[1::2], s[:, 1], **F32)


@pytest.mark.parametrize("seed", range(3))
def test_ray_lines(seed):
    rng = np.random.default_rng(400 + seed)
    p = rng.normal(size=(7, 3))
    d = rng.normal(size=(7, 3))
    d /= np.linalg.norm(d, axis=1)[:, None]
    length = 0.37
    r = bf.ray_lines(p, d, length)
    assert r.shape == (14, 3) and r.dtype == np.float32
    np.testing.assert_allclose(r[0::2], p, **F32)
    np.testing.assert_allclose(r[1::2] - r[0::2], d * length, atol=1e-6)
    np.testing.assert_allclose(np.linalg.norm(r[1::2] - r[0::2], axis=1), length, rtol=1e-5)


def test_colors():
    c = bf.colors(5, (0.1, 0.2, 0.3))
    assert c.shape == (5, 3) and c.dtype == np.float32
    np.testing.assert_array_equal(c, np.tile(np.float32([0.1, 0.2, 0.3]), (5, 1)))


def test_instance_rows_rebuild_the_model_matrix_as_glsl_does():
    """GLSL's ``mat4(c0, c1, c2, c3)`` takes columns: rebuilding it from the rows and
    applying it to points must give ``pose @ point`` for every instance."""
    rng = np.random.default_rng(4)
    poses = np.array([random_pose(rng) for _ in range(5)])
    cols = rng.uniform(0, 1, (5, 3))
    hl = np.array([0, 1, 0, 0, 0], float)
    rows = bf.instance_rows(poses, cols, hl)
    assert rows.dtype == np.float32 and rows.shape == (5, 20)
    model = np.stack([rows[:, 4 * c:4 * c + 4] for c in range(4)], axis=2)  # columns side by side
    pts = np.c_[rng.normal(size=(7, 3)), np.ones(7)]
    for k in range(5):
        np.testing.assert_allclose(pts @ model[k].T, pts @ poses[k].T, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(rows[:, 16:19], cols, rtol=1e-6)
    np.testing.assert_array_equal(rows[:, 19], hl)


def test_cross_and_ray_lines_take_one_size_per_point():
    rng = np.random.default_rng(5)
    pts = rng.normal(size=(4, 3))
    sizes = np.array([0.1, 2.0, 0.003, 7.5])
    strokes = bf.cross_lines(pts, sizes).reshape(4, 3, 2, 3).astype(float)
    for k in range(4):
        np.testing.assert_allclose(np.linalg.norm(strokes[k, :, 1] - strokes[k, :, 0], axis=1), 2 * sizes[k],
                                   rtol=1e-5)
    d = rng.normal(size=(4, 3))
    d /= np.linalg.norm(d, axis=1)[:, None]
    r = bf.ray_lines(pts, d, sizes).astype(float)
    np.testing.assert_allclose(r[1::2] - r[0::2], d * sizes[:, None], rtol=1e-5, atol=1e-6)


# -- sizes in pixels -------------------------------------------------------------------------


def random_camera(rng):
    from app.viewer.camera import OrbitCamera

    cam = OrbitCamera(target=rng.normal(size=3) * 10 ** rng.uniform(-2, 2), distance=10 ** rng.uniform(-2, 3),
                      yaw=rng.uniform(-4, 4), pitch=rng.uniform(-1.4, 1.4), fovy=rng.uniform(20, 90))
    cam.width, cam.height = int(rng.integers(64, 2500)), int(rng.integers(64, 2500))
    return cam


def points_in_view(cam, rng, n):
    """World points inside the view frustum, at depths from just past the near plane to far away."""
    x = rng.uniform(0.05, cam.width - 0.05, n)
    y = rng.uniform(0.05, cam.height - 0.05, n)
    depth = cam.distance * 10 ** rng.uniform(-1.5, 2, n)
    out = []
    for xi, yi, d in zip(x, y, depth):
        origin, direction = cam.ray(xi, yi)
        forward = (cam.target - cam.eye) / cam.distance
        out.append(cam.eye + direction * d / (direction @ forward))  # at view depth d
    return np.array(out)


@pytest.mark.parametrize("seed", range(20))
def test_pixel_world_sizes_agree_with_the_projection(seed):
    """A length of k pixels' world size, laid across the view at p, projects to k pixels (both
    across and up the screen), for any camera, point and window."""
    rng = np.random.default_rng(600 + seed)
    cam = random_camera(rng)
    pts = points_in_view(cam, rng, 30)
    forward = (cam.target - cam.eye) / cam.distance
    size = bf.pixel_world_sizes(pts, cam.eye, forward, cam.fovy, cam.height)
    assert size.shape == (30,) and np.all(size > 0)
    right, up = cam.screen_axes()
    for k in (1.0, 5.0, 40.0):
        for axis in (right, up):
            for p, s in zip(pts, size):
                a = np.array(cam.project(p))
                b = np.array(cam.project(p + axis * k * s))
                np.testing.assert_allclose(np.linalg.norm(b - a), k, rtol=1e-6)


def test_pixel_world_sizes_grow_with_depth_and_clamp_behind_the_eye():
    eye, fwd = np.zeros(3), np.array([0.0, 0, -1])
    s = bf.pixel_world_sizes([[0, 0, -1], [3, 1, -2], [0, 0, -100], [0, 0, 5]], eye, fwd, 90.0, 500)
    np.testing.assert_allclose(s[:3], np.array([1, 2, 100]) * 2 / 500, rtol=1e-12)  # tan(45 deg) = 1
    assert 0 < s[3] < 1e-9  # behind the eye: the smallest, never negative


def test_tiny_bodies_are_the_ones_under_the_pixel_radius():
    from app.viewer.camera import OrbitCamera

    cam = OrbitCamera(target=(0, 0, 0), distance=10.0, yaw=0.0, pitch=0.0, fovy=60.0)
    cam.width, cam.height = 800, 600
    fwd = (cam.target - cam.eye) / cam.distance
    centers = np.array([[0, 0, 0], [0, 0, 0], [1, 0, -40], [0, 0, 20], [2, 1, 0]], float)
    radii = np.array([0.01, 1.0, 0.2, 0.001, 0.05])
    idx = bf.tiny_bodies(centers, radii, cam.eye, fwd, cam.fovy, cam.height, 4.0)
    # brute force: the projected radius of each (a point one radius to the side, in pixels)
    right = cam.screen_axes()[0]
    px = [np.linalg.norm(np.subtract(cam.project(c + r * right), cam.project(c))) for c, r in zip(centers, radii)]
    expected = [k for k in range(5) if px[k] < 4.0 and (centers[k] - cam.eye) @ fwd > 0]
    assert idx.tolist() == expected == [0, 2, 4]  # the body behind the eye (index 3) is left out
    assert bf.tiny_bodies(np.zeros((0, 3)), np.zeros(0), cam.eye, fwd, 60.0, 600, 4.0).shape == (0,)


@pytest.mark.parametrize("seed", range(5))
def test_ground_quad_lies_on_the_plane_centred_under_the_eye(seed):
    rng = np.random.default_rng(700 + seed)
    n = rng.normal(size=3)
    n /= np.linalg.norm(n)
    offset = rng.normal() * 3
    eye = rng.normal(size=3) * 20
    half = 10 ** rng.uniform(0, 4)
    q = bf.ground_quad(n, offset, eye, half).astype(float)
    assert q.shape == (6, 3)
    np.testing.assert_allclose(q @ n, offset, atol=1e-6 * max(half, abs(offset), 1) * 10)
    corners = np.unique(np.round(q / half, 5), axis=0) * half
    assert len(corners) == 4
    foot = eye - (n @ eye - offset) * n
    np.testing.assert_allclose(corners.mean(0), foot, atol=1e-4 * half)
    # a square of side 2 half: every corner sqrt(2) half from the centre, the two triangles cover it
    np.testing.assert_allclose(np.linalg.norm(corners - foot, axis=1), np.sqrt(2) * half, rtol=1e-5)
    t = q.reshape(2, 3, 3)
    area = 0.5 * np.linalg.norm(np.cross(t[:, 1] - t[:, 0], t[:, 2] - t[:, 0]), axis=1).sum()
    np.testing.assert_allclose(area, 4 * half * half, rtol=1e-5)


def test_ground_fade_keeps_every_body_on_full_ground():
    eye = np.array([3.0, 2.0, 4.0])
    lo, hi = np.array([-1.0, 0, -1]), np.array([100.0, 1.0, 1.0])  # one body 100 units away
    start, end = bf.ground_fade(eye, 5.0, lo, hi, far_plane=5000.0)
    corners = np.array([[x, y, z] for x in (lo[0], hi[0]) for y in (lo[1], hi[1]) for z in (lo[2], hi[2])])
    assert start >= np.linalg.norm(corners - eye, axis=1).max()
    assert start >= 4 * 5.0 and end > start
    # a small scene: the ground reaches four view distances at full colour, and ends before the far plane
    s2, e2 = bf.ground_fade(eye, 5.0, [-0.1, 0, -0.1], [0.1, 0.1, 0.1], far_plane=5000.0)
    assert s2 == pytest.approx(20.0) and e2 == pytest.approx(80.0)
    s3, e3 = bf.ground_fade(eye, 5.0, lo, hi, far_plane=100.0)
    assert e3 <= 90.0 and s3 < e3
    s4, e4 = bf.ground_fade(eye, 5.0, [-np.inf] * 3, [np.inf] * 3, far_plane=5000.0)  # no finite scene
    assert np.isfinite(s4) and np.isfinite(e4) and s4 < e4
