"""The orbit camera's maths (app/viewer/camera.py), without a window.

project() and ray() must be inverse to each other, frame() must fit a box in
the window, and the mouse motions must do what they say: orbit and zoom keep
the target, pitch stays clamped, pan slides the target in the screen plane.
"""

import itertools
import math

import numpy as np
import pytest

from app.viewer.camera import OrbitCamera


def random_camera(rng):
    cam = OrbitCamera(target=rng.normal(size=3) * 5, distance=10 ** rng.uniform(-1, 2),
                      yaw=rng.uniform(-4, 4), pitch=rng.uniform(-1.5, 1.5), fovy=rng.uniform(20, 90))
    cam.width, cam.height = int(rng.integers(64, 2500)), int(rng.integers(64, 2500))
    return cam


def forward(cam):
    f = cam.target - cam.eye
    return f / np.linalg.norm(f)


def clip(cam, p):
    return cam.projection() @ cam.view() @ np.append(np.asarray(p, float), 1.0)


def test_eye_is_distance_from_target_and_view_is_rigid():
    rng = np.random.default_rng(0)
    for _ in range(50):
        cam = random_camera(rng)
        np.testing.assert_allclose(np.linalg.norm(cam.eye - cam.target), cam.distance, rtol=1e-12)
        v = cam.view()
        np.testing.assert_allclose(v[:3, :3] @ v[:3, :3].T, np.eye(3), atol=1e-12)
        # The eye is at the view-space origin and the target straight ahead (-z).
        np.testing.assert_allclose(v @ np.append(cam.eye, 1), [0, 0, 0, 1], atol=1e-9 * (1 + cam.distance))
        t = v @ np.append(cam.target, 1)
        np.testing.assert_allclose(t[:3], [0, 0, -cam.distance], atol=1e-9 * (1 + np.abs(cam.target).max()))


def test_target_projects_to_the_window_centre():
    rng = np.random.default_rng(1)
    for _ in range(50):
        cam = random_camera(rng)
        x, y = cam.project(cam.target)
        np.testing.assert_allclose([x, y], [cam.width / 2, cam.height / 2], atol=1e-6 * cam.width)


@pytest.mark.parametrize("seed", range(4))
def test_project_then_ray_passes_through_the_point(seed):
    rng = np.random.default_rng(10 + seed)
    checked = 0
    for _ in range(300):
        cam = random_camera(rng)
        p = cam.target + rng.normal(size=3) * cam.distance * 0.4
        if clip(cam, p)[3] <= 0:
            continue
        x, y = cam.project(p)
        if not (0 <= x <= cam.width and 0 <= y <= cam.height):
            continue
        origin, d = cam.ray(x, y)
        np.testing.assert_allclose(np.linalg.norm(d), 1.0, rtol=1e-12)
        v = p - origin
        t = v @ d
        assert t > 0  # p is ahead along the ray, not behind its origin
        miss = np.linalg.norm(v - t * d)
        assert miss <= 1e-9 * np.linalg.norm(v), (miss, np.linalg.norm(v))
        # The ray starts on the near plane and points away from the eye.
        near = max(1e-3, cam.distance * 0.01)
        np.testing.assert_allclose((origin - cam.eye) @ forward(cam), near, rtol=1e-6)
        assert d @ forward(cam) > 0
        checked += 1
    assert checked > 100


def test_ray_through_the_centre_is_the_view_axis():
    rng = np.random.default_rng(2)
    for _ in range(50):
        cam = random_camera(rng)
        origin, d = cam.ray(cam.width / 2, cam.height / 2)
        np.testing.assert_allclose(d, forward(cam), atol=1e-9)


def test_pixel_origin_is_bottom_left():
    cam = OrbitCamera(target=(0, 0, 0), distance=5, yaw=0.0, pitch=0.0)
    cam.width, cam.height = 800, 600
    right, up = cam.screen_axes()
    x, y = cam.project(right * 0.5)
    assert x > 400 and abs(y - 300) < 1e-6
    x, y = cam.project(up * 0.5)
    assert y > 300 and abs(x - 400) < 1e-6
    # yaw 0, pitch 0: the eye is on +z, looking down -z; +x is screen right, +y up.
    np.testing.assert_allclose(cam.eye, [0, 0, 5], atol=1e-12)
    np.testing.assert_allclose(right, [1, 0, 0], atol=1e-12)
    np.testing.assert_allclose(up, [0, 1, 0], atol=1e-12)


@pytest.mark.parametrize("seed", range(2))
def test_frame_puts_every_box_corner_inside_the_window(seed):
    rng = np.random.default_rng(20 + seed)
    failures = []
    for _ in range(300):
        cam = OrbitCamera(yaw=rng.uniform(-4, 4), pitch=rng.uniform(-1.45, 1.45), fovy=rng.uniform(25, 80))
        cam.width, cam.height = int(rng.integers(100, 2000)), int(rng.integers(100, 2000))
        lo = rng.normal(size=3) * 3
        hi = lo + rng.uniform(0.01, 5, 3)
        cam.frame(lo, hi)
        np.testing.assert_allclose(cam.target, (lo + hi) / 2)
        for s in itertools.product((0, 1), repeat=3):
            p = np.where(s, hi, lo)
            assert clip(cam, p)[3] > 0  # in front of the eye
            x, y = cam.project(p)
            if not (0 <= x <= cam.width and 0 <= y <= cam.height):
                failures.append((lo.tolist(), hi.tolist(), cam.yaw, cam.pitch, cam.width, cam.height, (x, y)))
                break
    assert not failures, f"{len(failures)} of 300 framed boxes stick out of the window, e.g. {failures[0]}"


def test_frame_unit_cube_default_camera():
    """A minimal case: the default view of the cube [-1, 1]^3 in a 1280 x 720 window."""
    cam = OrbitCamera()
    cam.width, cam.height = 1280, 720
    cam.frame([-1, -1, -1], [1, 1, 1])
    outside = []
    for s in itertools.product((-1, 1), repeat=3):
        x, y = cam.project(s)
        if not (0 <= x <= 1280 and 0 <= y <= 720):
            outside.append((s, (round(x, 1), round(y, 1))))
    assert not outside, f"corners outside the window: {outside}"


def test_frame_is_not_loose():
    """The fit is also reasonably tight: the box is not a speck in the middle."""
    cam = OrbitCamera(yaw=0.3, pitch=0.2)
    cam.width, cam.height = 1000, 1000
    cam.frame([-1, -1, -1], [1, 1, 1])
    xs, ys = zip(*(cam.project(s) for s in itertools.product((-1, 1), repeat=3)))
    assert max(max(xs) - min(xs), max(ys) - min(ys)) > 0.4 * 1000


@pytest.mark.parametrize("seed", range(3))
def test_orbit_keeps_target_and_distance(seed):
    rng = np.random.default_rng(30 + seed)
    for _ in range(50):
        cam = random_camera(rng)
        target, dist, eye = cam.target.copy(), cam.distance, cam.eye.copy()
        dx, dy = rng.uniform(-300, 300, 2)
        cam.orbit(dx, dy)
        np.testing.assert_array_equal(cam.target, target)
        assert cam.distance == dist
        np.testing.assert_allclose(np.linalg.norm(cam.eye - cam.target), dist, rtol=1e-12)
        if abs(dx) > 1:
            assert not np.allclose(cam.eye, eye)


def test_orbit_directions():
    cam = OrbitCamera(yaw=0.2, pitch=0.1)
    cam.orbit(10, 0)
    assert math.isclose(cam.yaw, 0.2 - 10 * 0.008) and math.isclose(cam.pitch, 0.1)
    cam.orbit(0, -10)
    assert math.isclose(cam.pitch, 0.1 + 10 * 0.008)


def test_pitch_is_clamped():
    cam = OrbitCamera()
    for _ in range(20):
        cam.orbit(0, -500)  # drag down: pitch up
        assert -1.5 <= cam.pitch <= 1.5
    assert cam.pitch == pytest.approx(1.5)
    # Never over the pole: the view stays well defined.
    assert np.all(np.isfinite(cam.view()))
    for _ in range(20):
        cam.orbit(0, 500)
        assert -1.5 <= cam.pitch <= 1.5
    assert cam.pitch == pytest.approx(-1.5)
    assert np.all(np.isfinite(cam.view()))


@pytest.mark.parametrize("clicks", [1, -1, 3, -7, 0.5])
def test_zoom_keeps_target_and_scales_distance(clicks):
    cam = OrbitCamera(target=(0.3, -1.0, 2.0), distance=4.0)
    target = cam.target.copy()
    fwd = forward(cam)
    cam.zoom(clicks)
    np.testing.assert_array_equal(cam.target, target)
    assert cam.distance == pytest.approx(4.0 * 0.9 ** clicks)
    np.testing.assert_allclose(forward(cam), fwd, atol=1e-12)  # same view direction
    if clicks > 0:
        assert cam.distance < 4.0  # wheel up zooms in


@pytest.mark.parametrize("lo, hi", [([np.nan, 0, 0], [1, 1, 1]), ([0, 0, 0], [np.inf, 1, 1]),
                                    ([-np.inf] * 3, [np.inf] * 3)])
def test_frame_of_a_box_that_is_not_finite_leaves_the_camera_as_it_is(lo, hi):
    cam = OrbitCamera(target=(1.0, 2.0, 3.0), distance=4.0)
    cam.frame(lo, hi)
    assert cam.target.tolist() == [1.0, 2.0, 3.0] and cam.distance == 4.0


@pytest.mark.parametrize("extent", [1e12, 1e200, 1.7e308])
def test_frame_of_a_huge_box_looks_from_the_farthest_distance(extent):
    """A box too large to fit: its centre from the farthest distance the zoom allows, every matrix finite."""
    cam = OrbitCamera()
    cam.frame([-extent, 0, -extent], [extent, 1, extent])
    assert cam.distance == 1e9
    np.testing.assert_allclose(cam.target, [0, 0.5, 0])
    assert np.all(np.isfinite(cam.view())) and np.all(np.isfinite(cam.projection()))
    x, y = cam.project([0, 0.5, 0])
    assert (x, y) == pytest.approx((cam.width / 2, cam.height / 2))


def test_zoom_is_clamped():
    cam = OrbitCamera(distance=1.0)
    for _ in range(200):
        cam.zoom(20)  # a fast wheel, many events
    assert cam.distance == pytest.approx(1e-6)
    assert np.all(np.isfinite(cam.view())) and np.all(np.isfinite(cam.projection()))
    for _ in range(200):
        cam.zoom(-20)
    assert cam.distance == pytest.approx(1e9)
    assert np.all(np.isfinite(cam.view())) and np.all(np.isfinite(cam.projection()))


@pytest.mark.parametrize("seed", range(3))
def test_pan_moves_target_in_the_screen_plane(seed):
    rng = np.random.default_rng(40 + seed)
    for _ in range(50):
        cam = random_camera(rng)
        cam.pitch = float(np.clip(cam.pitch, -1.4, 1.4))
        t0, fwd, dist = cam.target.copy(), forward(cam), cam.distance
        right, up = cam.screen_axes()
        dx, dy = rng.uniform(-100, 100, 2)
        cam.pan(dx, dy)
        delta = cam.target - t0
        assert np.linalg.norm(delta) > 0
        assert abs(delta @ fwd) <= 1e-9 * np.linalg.norm(delta)  # in the screen plane
        # Left-right follows dx, up-down follows dy (content follows the mouse).
        assert np.sign(delta @ right) == -np.sign(dx)
        assert np.sign(delta @ up) == -np.sign(dy)
        # The camera translates: same distance, same view direction.
        assert cam.distance == dist
        np.testing.assert_allclose(forward(cam), fwd, atol=1e-9)


def test_pan_drags_the_scene_with_the_mouse():
    cam = OrbitCamera(target=(0, 0, 0), distance=5, yaw=0.7, pitch=0.3)
    cam.width, cam.height = 800, 600
    cam.pan(40, -25)
    x, y = cam.project([0, 0, 0])
    assert x > 400 and y < 300  # the old centre moved right and down, like the mouse
