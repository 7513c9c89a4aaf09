"""The viewer's behaviour without a window (app/viewer/session.py).

A Session over the default scene is driven by key names and mouse events as
the window would; the effects are checked on the world (poses), the camera and
the overlay arrays. Picking is checked against collision.ray_cast on every body.
"""

import math
import re

import numpy as np
import pytest
import trimesh

import obbcollide as co
from app.scene.loader import default_scene
from app.viewer import controls
from app.viewer.buffers import box_lines
from app.viewer.controls import BINDINGS, MOVE_STEP, TURN_STEP
from app.viewer.session import COLORS, OVERLAYS, Session

W, H = 800, 600


@pytest.fixture
def session():
    s = Session(default_scene())
    s.camera.width, s.camera.height = W, H
    s.frame_camera()
    return s


def poses(s):
    return np.array([b.pose for b in s.world.bodies])


def rot(axis, angle):
    """Rotation matrix about a unit coordinate axis (independent of app.world.world.rotation)."""
    c, si = math.cos(angle), math.sin(angle)
    x, y, z = axis
    k = np.array([[0, -z, y], [z, 0, -x], [-y, x, 0]], float)
    return np.eye(3) + si * k + (1 - c) * (k @ k)


def color_rows(colors, name):
    return np.all(colors == np.asarray(COLORS[name], np.float32), axis=1)


def first_hit(world, origin, direction):
    """(index, t) of the nearest body along a ray, by ray casting every body."""
    ts = [co.ray_cast(b.tree, b.pose, origin, direction).t for b in world.bodies]
    k = int(np.argmin(ts))
    return (k, ts[k]) if np.isfinite(ts[k]) else (None, math.inf)


def visible_body(s, exclude=()):
    """A body whose centre pixel shows that body first; returns (index, (x, y))."""
    for k, b in enumerate(s.world.bodies):
        if k in exclude:
            continue
        x, y = s.camera.project(b.world_center())
        if not (0 < x < W and 0 < y < H):
            continue
        origin, d = s.camera.ray(x, y)
        if first_hit(s.world, origin, d)[0] == k:
            return k, (x, y)
    pytest.fail("no body is visible at its centre pixel")


# -- keys -------------------------------------------------------------------------------


def test_unbound_key_is_ignored(session):
    p0 = poses(session)
    assert session.key("F13") is False
    assert np.array_equal(poses(session), p0)


def test_tab_selects_body_0_then_1_and_wraps(session):
    assert session.selected is None
    assert session.key("TAB") is True
    assert session.selected == 0
    session.key("TAB")
    assert session.selected == 1
    for _ in range(len(session.world.bodies) - 1):
        session.key("TAB")
    assert session.selected == 0


MOVES = [("LEFT", (-1, 0, 0)), ("RIGHT", (1, 0, 0)), ("UP", (0, 1, 0)), ("DOWN", (0, -1, 0)),
         ("PAGEUP", (0, 0, -1)), ("PAGEDOWN", (0, 0, 1))]


@pytest.mark.parametrize("key, axis", MOVES)
@pytest.mark.parametrize("shift", [False, True])
def test_arrow_keys_move_the_selected_body(session, key, axis, shift):
    session.key("TAB")
    session.key("TAB")  # body 1
    before = poses(session)
    assert session.key(key, shift=shift)
    after = poses(session)
    step = MOVE_STEP * (10 if shift else 1)
    np.testing.assert_allclose(after[1, :3, 3] - before[1, :3, 3], np.array(axis) * step, atol=1e-15)
    np.testing.assert_allclose(after[1, :3, :3], before[1, :3, :3], atol=1e-14)
    others = [k for k in range(len(before)) if k != 1]
    assert np.array_equal(after[others], before[others])


def test_stated_axes_match_the_help_text():
    for key, action, arg, text in BINDINGS:
        if action in ("move", "turn"):
            sign = "-" if min(arg) < 0 else "+"
            letter = "XYZ"[int(np.argmax(np.abs(arg)))]
            assert f"{sign}{letter}" in text, (key, arg, text)


@pytest.mark.parametrize("shift", [False, True])
def test_q_rotates_about_plus_x_around_the_centre(session, shift):
    session.key("TAB")  # body 0
    b = session.world.bodies[0]
    c0, r0 = b.world_center().copy(), b.pose[:3, :3].copy()
    assert session.key("Q", shift=shift)
    angle = TURN_STEP * (5 if shift else 1)
    np.testing.assert_allclose(b.pose[:3, :3], rot((1, 0, 0), angle) @ r0, atol=1e-12)
    np.testing.assert_allclose(b.world_center(), c0, atol=1e-12)


@pytest.mark.parametrize("key, axis", [("A", (-1, 0, 0)), ("W", (0, 1, 0)), ("S", (0, -1, 0)),
                                       ("E", (0, 0, 1)), ("D", (0, 0, -1))])
def test_other_turn_keys(session, key, axis):
    session.key("TAB")
    session.key("TAB")
    session.key("TAB")  # body 2
    b = session.world.bodies[2]
    c0, r0 = b.world_center().copy(), b.pose[:3, :3].copy()
    session.key(key)
    np.testing.assert_allclose(b.pose[:3, :3], rot(axis, TURN_STEP) @ r0, atol=1e-12)
    np.testing.assert_allclose(b.world_center(), c0, atol=1e-12)


@pytest.mark.parametrize("key", ["LEFT", "PAGEDOWN", "Q", "D"])
def test_keys_without_selection_move_nothing_and_say_so(session, key):
    p0 = poses(session)
    n = len(session.messages)
    assert session.key(key, shift=True)
    assert np.array_equal(poses(session), p0)
    assert len(session.messages) == n + 1
    text, _, _ = session.messages[-1]
    assert "select" in text.lower()
    assert any(text in line for line in session.hud_lines())


@pytest.mark.parametrize("key, flag", [(k, arg) for k, a, arg, _ in BINDINGS if a == "toggle"])
def test_toggles_flip_flags(session, key, flag):
    before = dict(session.flags)
    session.key(key)
    assert session.flags[flag] == (not before[flag])
    assert {k: v for k, v in session.flags.items() if k != flag} == \
        {k: v for k, v in before.items() if k != flag}
    session.key(key)
    assert session.flags == before


def test_default_flags():
    s = Session(default_scene())
    assert set(s.flags) == set(OVERLAYS)
    assert s.flags["boxes"] and s.flags["triangles"] and not s.flags["help"]


def test_depth_is_clamped(session):
    deepest = max(b.tree.depth for b in session.world.bodies) - 1
    assert session.depth == 0
    session.key("BRACKETLEFT")
    assert session.depth == 0
    session.key("BRACKETRIGHT")
    assert session.depth == 1
    for _ in range(deepest + 10):
        session.key("BRACKETRIGHT")
    assert session.depth == deepest
    session.key("BRACKETLEFT")
    assert session.depth == deepest - 1
    for _ in range(deepest + 10):
        session.key("BRACKETLEFT")
    assert session.depth == 0


def test_deepest_level_still_draws_every_body(session):
    session.world.detect()
    for _ in range(100):
        session.key("BRACKETRIGHT")
    lines, colors, _, _ = session.overlays()
    n_boxes = sum(len(b.tree.boxes_at_depth(session.depth)[0]) for b in session.world.bodies)
    assert color_rows(colors, "boxes").sum() == 24 * n_boxes
    # At the deepest level every body shows all its leaves.
    assert n_boxes == sum(int((b.tree.child < 0).sum()) for b in session.world.bodies)


def test_pause_single_step_reset_frame_screenshot_quit(session, tmp_path):
    w = session.world
    session.key("SPACE")
    assert w.paused
    p0 = poses(session)
    session.update(0.5)
    assert np.array_equal(poses(session), p0)
    session.key("SPACE")
    assert not w.paused
    session.key("N")
    assert w.paused and w.time == pytest.approx(w.dt)
    assert not np.array_equal(poses(session), p0)
    session.key("R")
    assert np.array_equal(poses(session), p0) and w.time == 0.0
    session.camera.target = np.array([50.0, 50, 50])
    session.key("F")
    lo, hi = w.bounds()
    np.testing.assert_allclose(session.camera.target, (lo + hi) / 2)
    session.screenshot_dir = str(tmp_path)
    session.key("P")
    assert session.screenshot_requested.startswith(str(tmp_path))
    assert session.screenshot_requested.endswith(".png")
    assert not session.quit_requested
    session.key("ESCAPE")
    assert session.quit_requested


# -- mouse ------------------------------------------------------------------------------


def test_click_selects_the_body_under_the_cursor(session):
    found = []
    for k, b in enumerate(session.world.bodies):
        x, y = session.camera.project(b.world_center())
        origin, d = session.camera.ray(x, y)
        expected = first_hit(session.world, origin, d)[0]
        session.selected = None
        session.mouse_press(x, y, "left")
        session.mouse_release(x, y, "left")
        assert session.selected == expected
        if expected == k:
            found.append(k)
    assert len(found) >= 3  # several bodies were picked at their own centres


def test_click_on_a_visible_body(session):
    k, (x, y) = visible_body(session)
    session.mouse_press(x, y, "left")
    assert session.selected == k


@pytest.mark.parametrize("corner", [(1, 1), (W - 1, H - 1), (1, H - 1), (W - 1, 1)])
def test_click_in_an_empty_corner_selects_none(session, corner):
    origin, d = session.camera.ray(*corner)
    assert first_hit(session.world, origin, d)[0] is None  # the corner really is empty
    session.selected = 2
    session.mouse_press(*corner, "left")
    assert session.selected is None


def test_right_click_does_not_select(session):
    k, (x, y) = visible_body(session)
    session.mouse_press(x, y, "right")
    assert session.selected is None


def test_drag_moves_the_grabbed_point_with_the_cursor(session):
    cam = session.camera
    k, (x, y) = visible_body(session)
    origin, d = cam.ray(x, y)
    _, t = first_hit(session.world, origin, d)
    grabbed = origin + t * d
    b = session.world.bodies[k]
    others = [o.pose.copy() for o in session.world.bodies if o is not b]
    cam_state = (cam.target.copy(), cam.yaw, cam.pitch, cam.distance)
    fwd = (cam.target - cam.eye) / np.linalg.norm(cam.target - cam.eye)

    session.mouse_press(x, y, "left")
    assert session.selected == k
    t0, r0 = b.pose[:3, 3].copy(), b.pose[:3, :3].copy()
    path = [(x + 30, y - 20), (x + 55, y + 12), (x - 40, y + 35)]
    prev = (x, y)
    for px, py in path:
        session.mouse_drag(px, py, px - prev[0], py - prev[1], "left")
        prev = (px, py)
        delta = b.pose[:3, 3] - t0
        assert np.linalg.norm(delta) > 1e-3
        assert abs(delta @ fwd) <= 1e-9 * np.linalg.norm(delta)  # in the view plane
        # The grabbed point (moved with the body) is under the cursor.
        gx, gy = cam.project(grabbed + delta)
        assert gx == pytest.approx(px, abs=1e-6) and gy == pytest.approx(py, abs=1e-6)
        np.testing.assert_allclose(b.pose[:3, :3], r0, atol=1e-14)  # translation only
    # The camera did not orbit, the other bodies did not move.
    assert np.array_equal(cam.target, cam_state[0]) and (cam.yaw, cam.pitch, cam.distance) == cam_state[1:]
    assert all(np.array_equal(o.pose, p) for o, p in zip([o for o in session.world.bodies if o is not b], others))

    # After the release a left drag orbits the camera and leaves the body alone.
    session.mouse_release(*prev, "left")
    pose = b.pose.copy()
    session.mouse_drag(prev[0] + 10, prev[1], 10, 0, "left")
    assert np.array_equal(b.pose, pose)
    assert cam.yaw != cam_state[1]


def test_drag_on_empty_space_orbits_and_right_drag_pans(session):
    cam = session.camera
    p0 = poses(session)
    session.mouse_press(1, 1, "left")
    yaw, target = cam.yaw, cam.target.copy()
    session.mouse_drag(21, 11, 20, 10, "left")
    assert cam.yaw != yaw and np.array_equal(cam.target, target)
    session.mouse_release(21, 11, "left")
    k, (x, y) = visible_body(session)
    session.mouse_press(x, y, "right")
    session.mouse_drag(x + 15, y, 15, 0, "right")
    assert not np.array_equal(cam.target, target)
    assert np.array_equal(poses(session), p0)


def test_scroll_zooms(session):
    d = session.camera.distance
    session.scroll(2)
    assert session.camera.distance == pytest.approx(d * 0.81)


# -- files ------------------------------------------------------------------------------


@pytest.mark.parametrize("ext", ["stl", "obj", "ply"])
def test_add_mesh_good_file(session, tmp_path, ext):
    m = trimesh.creation.icosphere(subdivisions=2, radius=0.3)
    path = tmp_path / f"ball.{ext}"
    m.export(str(path))
    n = len(session.world.bodies)
    old = list(session.world.bodies)
    assert session.add_mesh(str(path), motion="kinematic", wait=True) is True  # dynamic: see test_placement
    bodies = session.world.bodies
    assert len(bodies) == n + 1 and bodies[:n] == old
    b = bodies[-1]
    assert b.name == f"ball.{ext}"
    assert len(b.faces) == len(m.faces)
    np.testing.assert_allclose(np.ptp(b.vertices, axis=0), np.ptp(m.vertices, axis=0), rtol=1e-6)
    assert session.selected == n
    text, _, error = session.messages[-1]
    assert not error and "ball" in text
    # The new body takes part in detection and drawing.
    session.update(0.0)
    lines, colors, tris, tri_colors = session.overlays()
    assert len(lines) == len(colors)
    assert session.world.stats["candidates"] >= 0


def write_nan_obj(path, all_bad):
    if all_bad:
        text = "v 0 0 0\nv 1 0 0\nv nan 1 0\nf 1 2 3\n"
    else:
        # A tetrahedron plus a fifth vertex with NaN coordinates used by one face.
        text = ("v 0 0 0\nv 1 0 0\nv 0 1 0\nv 0 0 1\nv nan nan nan\n"
                "f 1 3 2\nf 1 2 4\nf 2 3 4\nf 1 4 3\nf 1 2 5\n")
    path.write_text(text)


TETRA_OBJ = "v 0 0 0\nv 1 0 0\nv 0 1 0\nv 0 0 1\nf 1 3 2\nf 1 2 4\nf 2 3 4\nf 1 4 3\n"
BAD_FILES = ["missing", "random.stl", "random.obj", "random.ply", "empty.stl", "empty.obj", "empty.ply",
             "nan_all.obj", "nan_some.obj", "huge.obj"]


@pytest.mark.parametrize("kind", BAD_FILES)
def test_add_mesh_bad_file_changes_nothing(session, tmp_path, kind, caplog):
    rng = np.random.default_rng(0)
    if kind == "missing":
        path = tmp_path / "nowhere.obj"
    else:
        path = tmp_path / f"bad_{kind}"
        if kind.startswith("random"):
            path.write_bytes(rng.bytes(4000))
        elif kind.startswith("empty"):
            path.write_bytes(b"")
        elif kind == "huge.obj":  # 1e300 squares to inf (app.scene.mesh_io.MAX_COORD)
            path.write_text(TETRA_OBJ.replace("v 1 0 0", "v 1e300 0 0"))
        else:
            write_nan_obj(path, kind == "nan_all.obj")
    session.selected = 1
    old = list(session.world.bodies)
    p0 = poses(session)
    n_msgs = len(session.messages)
    ok = session.add_mesh(str(path), wait=True)
    assert ok is False, f"{path.name} was accepted as a body"
    assert session.world.bodies == old
    assert np.array_equal(poses(session), p0)
    assert session.selected == 1
    assert len(session.messages) == n_msgs + 1
    text, _, error = session.messages[-1]
    assert error and path.name in text
    assert path.name in caplog.text  # logged: the command line shows it on stderr
    # The HUD shows it.
    assert any(path.name in line and line.startswith("! ") for line in session.hud_lines())


# -- overlays ---------------------------------------------------------------------------


def check_arrays(arrays):
    lines, line_colors, tris, tri_colors = arrays
    for a in arrays:
        assert a.dtype == np.float32 and a.ndim == 2 and a.shape[1] == 3
    assert len(lines) == len(line_colors) and len(lines) % 2 == 0
    assert len(tris) == len(tri_colors) and len(tris) % 3 == 0
    assert np.all(np.isfinite(lines)) and np.all(np.isfinite(tris))


def test_overlays_are_float32(session):
    check_arrays(session.overlays())  # before any detection
    session.update(1 / 60)
    check_arrays(session.overlays())
    for name in OVERLAYS:
        session.flags[name] = True
    session.selected = 0
    check_arrays(session.overlays())


def test_triangle_overlay_follows_the_flag(session):
    session.update(0.0)
    w = session.world
    assert w.contacts, "the default scene starts with contacts"
    assert session.flags["triangles"]
    _, _, tris, tri_colors = session.overlays()
    red = color_rows(tri_colors, "triangles")
    expected = []
    for c in w.contacts:
        a, b = w.bodies[c.a], w.bodies[c.b]
        expected.append(a.vertices[a.faces[c.pairs[:, 0]]] @ a.pose[:3, :3].T + a.pose[:3, 3])
        expected.append(b.vertices[b.faces[c.pairs[:, 1]]] @ b.pose[:3, :3].T + b.pose[:3, 3])
    expected = np.concatenate(expected).reshape(-1, 3)
    assert red.sum() == len(expected) > 0
    np.testing.assert_allclose(np.sort(tris[red], axis=0), np.sort(expected, axis=0), atol=1e-5)

    session.key("T")
    _, _, tris, tri_colors = session.overlays()
    assert not color_rows(tri_colors, "triangles").any()
    session.key("T")
    assert color_rows(session.overlays()[3], "triangles").sum() == len(expected)


def test_segment_and_contact_overlays_follow_their_flags(session):
    session.update(0.0)
    _, colors, _, _ = session.overlays()
    assert color_rows(colors, "segments").sum() == 2 * sum(len(c.segments) for c in session.world.contacts)
    assert color_rows(colors, "contacts").any()
    session.key("G")
    session.key("C")
    _, colors, _, _ = session.overlays()
    assert not color_rows(colors, "segments").any() and not color_rows(colors, "contacts").any()


def test_boxes_overlay(session):
    session.update(0.0)
    lines, colors, _, _ = session.overlays()
    cyan = color_rows(colors, "boxes")
    bodies = session.world.bodies
    assert cyan.sum() == 24 * len(bodies)  # depth 0: one root box per body
    expected = np.concatenate([box_lines(b.tree.centers[:1], b.tree.axes[:1], b.tree.half_extents[:1], b.pose)
                               for b in bodies])
    np.testing.assert_allclose(lines[cyan], expected, atol=1e-5)

    session.key("BRACKETRIGHT")
    lines, colors, _, _ = session.overlays()
    n = sum(len(b.tree.boxes_at_depth(1)[0]) for b in bodies)
    assert color_rows(colors, "boxes").sum() == 24 * n

    session.key("B")
    lines, colors, _, _ = session.overlays()
    assert not color_rows(colors, "boxes").any()


def test_aabb_overlay(session):
    session.update(0.0)
    assert not color_rows(session.overlays()[1], "aabbs").any()
    session.key("V")
    lines, colors, _, _ = session.overlays()
    grey = color_rows(colors, "aabbs")
    assert grey.sum() == 24 * len(session.world.bodies)
    for k, b in enumerate(session.world.bodies):
        seg = lines[grey][24 * k:24 * (k + 1)]
        lo, hi = b.world_aabb()
        np.testing.assert_allclose(seg.min(0), lo, atol=1e-5)
        np.testing.assert_allclose(seg.max(0), hi, atol=1e-5)


def test_traversal_and_axis_overlays(session):
    session.update(0.0)
    session.key("TAB")  # torus knot, in contact with others
    session.key("O")
    session.key("X")
    lines, colors, _, _ = session.overlays()
    visited, pruned = session.trace_counts
    assert visited > 0
    assert color_rows(colors, "visited").sum() == 24 * 2 * visited
    assert color_rows(colors, "pruned").sum() == 24 * 2 * pruned
    hud = "\n".join(session.hud_lines())
    assert f"traversal: {visited} node pairs overlapped" in hud


def test_nothing_drawn_with_all_flags_off(session):
    session.update(0.0)
    for name in OVERLAYS:
        session.flags[name] = False
    lines, colors, tris, tri_colors = session.overlays()
    assert len(lines) == 0 and len(tris) == 0


# -- HUD --------------------------------------------------------------------------------


def test_hud_names_the_selection_and_counts_contacts(session):
    session.update(0.0)
    n = sum(len(c.pairs) for c in session.world.contacts)
    assert n > 0
    hud = session.hud_lines()
    counts = [int(m) for line in hud for m in re.findall(r"\bcontacts (\d+)\b", line)]
    assert counts == [n]
    assert not any(line.startswith("selected:") for line in hud)
    for _ in range(4):
        session.key("TAB")  # body 3
    name = session.world.bodies[3].name
    hud = session.hud_lines()
    assert any(line.startswith(f"selected: {name} ") for line in hud)
    assert f"bodies {len(session.world.bodies)}" in "\n".join(hud)
    # Moving the body away from everything changes the count.
    session.key("UP", shift=True)
    session.key("UP", shift=True)
    session.key("UP", shift=True)
    session.update(0.0)
    n2 = sum(len(c.pairs) for c in session.world.contacts)
    counts = [int(m) for line in session.hud_lines() for m in re.findall(r"\bcontacts (\d+)\b", line)]
    assert counts == [n2]


def test_hud_shows_paused(session):
    assert not any("[paused]" in line for line in session.hud_lines())
    session.key("SPACE")
    assert any("[paused]" in line for line in session.hud_lines())


def test_help_text_follows_the_flag(session):
    assert session.help_text() == []
    session.key("H")
    assert session.help_text() == controls.help_lines()
    session.key("H")
    assert session.help_text() == []


def test_session_modules_load_no_pyglet():
    import subprocess
    import sys

    code = ("import sys, app.viewer.session, app.viewer.camera, app.viewer.buffers, app.viewer.controls; "
            "bad = [m for m in sys.modules if m.split('.')[0] in ('pyglet', 'OpenGL') "
            "or m in ('app.viewer.window', 'app.viewer.renderer')]; print(bad); sys.exit(1 if bad else 0)")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr


def test_l_throws_a_ball_along_the_view_that_falls(session):
    from app.viewer.session import MAX_THROWN

    n = len(session.world.bodies)
    session.key("TAB")
    chosen = session.world.bodies[session.selected]
    session.key("L")
    assert len(session.world.bodies) == n + 1
    ball = session.world.bodies[-1]
    ahead = session.camera.target - session.camera.eye
    ahead /= np.linalg.norm(ahead)
    # thrown from the camera, its ballistic path goes through the point the camera looks at
    assert np.linalg.norm(ball.pose[:3, 3] - session.camera.eye) == pytest.approx(2 * ball.shapes[0].radius)
    g = session.world.dynamics.gravity
    t = np.linspace(0.0, 3.0, 30001)[:, None]
    path = ball.pose[:3, 3] + ball.velocity * t + 0.5 * g * t * t
    distance = np.linalg.norm(session.camera.target - session.camera.eye)
    assert np.min(np.linalg.norm(path - session.camera.target, axis=1)) < 1e-3 * distance
    start, v0 = ball.pose[:3, 3].copy(), ball.velocity.copy()
    session.world.step()
    assert ball.pose[1, 3] < start[1] + v0[1] * session.world.dt  # gravity pulls it down
    for _ in range(MAX_THROWN + 3):
        session.key("L", shift=True)
    thrown = [b for b in session.world.bodies if b.name.startswith("ball ")]
    assert len(thrown) == MAX_THROWN and ball not in session.world.bodies  # the oldest went first
    assert session.world.bodies[session.selected] is chosen  # the selection follows its body


def test_a_throw_into_a_scene_kilometres_across_stays_within_what_the_step_integrates(tmp_path):
    """A terrain file 4,000 units across (millimetres, read as metres with nothing else in the
    scene to compare with) and nothing that moves: the ball is big enough to see from the camera,
    and no throw, Shift or not, is slowed by the step's speed bound (which would say so in a
    message) or misses the point the camera looks at."""
    from app.scene.loader import load_mesh_body
    from app.world.world import MAX_SPEED, World

    n = 20
    xs = np.linspace(-2000.0, 2000.0, n + 1)
    x, z = np.meshgrid(xs, xs)
    v = np.stack([x.ravel(), 100.0 * np.sin(x.ravel() / 500.0), z.ravel()], axis=1)
    a = (np.arange(n)[:, None] * (n + 1) + np.arange(n)[None, :]).ravel()
    f = np.concatenate([np.stack([a, a + n + 1, a + 1], 1), np.stack([a + 1, a + n + 1, a + n + 2], 1)])
    path = tmp_path / "terrain_mm.obj"
    trimesh.Trimesh(v, f, process=False).export(path)
    terrain, _ = load_mesh_body(str(path), motion="static", cache=False)
    s = Session(World([terrain]))
    s.camera.width, s.camera.height = W, H
    s.frame_camera()
    said = []
    say = s.say
    s.say = lambda text, *args, **kwargs: (said.append(text), say(text, *args, **kwargs))
    distance = np.linalg.norm(s.camera.target - s.camera.eye)
    assert distance > 1000.0
    for shift in (False, True):
        s.key("L", shift=shift)
        ball = s.world.bodies[-1]
        assert ball.shapes[0].radius == pytest.approx(0.01 * distance)  # (the first ball does not shrink the next)
        assert np.linalg.norm(ball.velocity) < 0.3 * MAX_SPEED
        g = s.world.dynamics.gravity
        t = np.linspace(0.0, 30.0, 300001)[:, None]
        path = ball.pose[:3, 3] + ball.velocity * t + 0.5 * g * t * t
        assert np.min(np.linalg.norm(path - s.camera.target, axis=1)) < 1e-3 * distance
    for _ in range(30):
        s.update(1 / 60)
    assert len(said) >= 2 and not [m for m in said if "beyond what the step" in m], said


def test_y_turns_continuous_detection_off_and_on(session):
    from tests._bodies import ball_body

    ball = ball_body("fast", 0.05, (0, 3, 0), velocity=(50.0, 0, 0))
    session.world.bodies.append(ball)
    assert session.world.ccd and session.world.sweep()[session.world.bodies.index(ball)] > 0.4  # 50 m/s * dt
    session.key("Y")
    assert not session.world.ccd and not session.world.sweep().any()
    assert any("(no CCD)" in line for line in session.hud_lines())
    session.key("Y")
    assert session.world.ccd


def test_dragging_a_dynamic_body_pulls_it_on_the_mouse_joint():
    from app.world.world import World
    from tests._bodies import box_body, ground_body

    box = box_body("box", (0.3, 0.3, 0.3), (0.0, 0.3, 0.0), motion="dynamic")
    s = Session(World([ground_body(), box]))
    s.camera.width, s.camera.height = W, H
    s.frame_camera()
    x, y = s.camera.project(box.pose[:3, 3])[:2]
    s.mouse_press(x, y, "left")
    assert s.selected == 1
    before = box.pose.copy()
    s.mouse_drag(x, y + 80, 0, 80, "left")  # upwards on the screen
    grab = s.world.dynamics.grab
    assert grab is not None and grab.body is box
    np.testing.assert_array_equal(box.pose, before)  # not moved by hand: the joint acts in the steps
    target = grab.target
    assert target[1] > s._drag["point"][1] + 0.05  # the cursor's point is above the grabbed one
    anchor, cursor = s.grab_line
    np.testing.assert_allclose(anchor, s._drag["point"], atol=1e-12)
    np.testing.assert_array_equal(cursor, target)
    for _ in range(240):
        s.world.step()
    # the grabbed point hangs at the cursor, sagging by about g / omega^2 (1 cm at 5 Hz)
    np.testing.assert_allclose(grab.anchor(), target, atol=0.02)
    s.mouse_release(x, y + 80, "left")
    assert s.world.dynamics.grab is None and s.grab_line is None


def test_a_static_body_is_selected_but_not_dragged_and_a_kinematic_one_wakes_what_it_reaches():
    from app.world.world import World
    from tests._bodies import box_body, ground_body

    ground = ground_body()
    wall = box_body("wall", (0.15, 0.5, 0.5), (0.8, 0.5, 0.0), motion="static")
    pusher = box_body("pusher", (0.15, 0.15, 0.15), (-0.6, 0.15, 0.0), motion="kinematic")
    box = box_body("box", (0.15, 0.15, 0.15), (0.0, 0.15, 0.0), motion="dynamic")
    s = Session(World([ground, wall, pusher, box]))
    s.camera.width, s.camera.height = W, H
    s.frame_camera()
    for _ in range(90):  # the box falls asleep on the ground
        s.world.step()
    assert box.sleeping
    x, y = s.camera.project(wall.world_center())[:2]
    s.mouse_press(x, y, "left")
    assert s.selected == 1
    before, eye = wall.pose.copy(), s.camera.eye.copy()
    s.mouse_drag(x + 60, y, 60, 0, "left")
    np.testing.assert_array_equal(wall.pose, before)  # a static body stays where it is
    assert not np.allclose(s.camera.eye, eye)  # the drag orbits the camera instead
    s.mouse_release(x + 60, y, "left")
    s.frame_camera()
    x, y = s.camera.project(pusher.world_center())[:2]
    s.mouse_press(x, y, "left")
    assert s.selected == 2
    tx, ty = s.camera.project(pusher.world_center() + [0.5, 0.0, 0.0])[:2]
    s.mouse_drag(tx, ty, tx - x, ty - y, "left")  # into the sleeping box
    assert pusher.pose[0, 3] > -0.3 and not box.sleeping
    for _ in range(30):
        s.world.step()
    assert box.pose[0, 3] > 0.05  # pushed out of the kinematic body by the contacts


def test_a_non_finite_body_is_reported_and_the_viewer_goes_on():
    from app.world.world import World
    from tests._bodies import box_body, ground_body

    box = box_body("box", (0.3, 0.3, 0.3), (0.0, 1.0, 0.0), motion="dynamic")
    s = Session(World([ground_body(), box]))
    s.update(1 / 60)
    box.velocity = np.array([np.nan, 0.0, 0.0])
    s.update(1 / 60)
    assert any("box: non-finite velocity" in m[0] and m[2] for m in s.messages)
    assert np.all(np.isfinite(box.pose)) and not s.world.paused
    for _ in range(5):
        s.update(1 / 60)
    assert box.pose[1, 3] < 1.0  # still falling


def test_a_failing_step_pauses_the_world_with_the_message(session, monkeypatch):
    def broken(_dt):
        raise ValueError("poses_a[3]: not finite")

    monkeypatch.setattr(session.world, "frame", broken)
    session.update(1 / 60)  # no exception reaches the window
    assert session.world.paused
    assert any("the step failed" in m[0] and "poses_a[3]" in m[0] for m in session.messages)


def test_the_keys_do_not_move_a_static_body():
    from app.world.world import World
    from tests._bodies import box_body, ground_body

    box = box_body("box", (0.15, 0.15, 0.15), (0.0, 0.15, 0.0), motion="dynamic")
    s = Session(World([ground_body(), box]))
    s.selected = 0
    before = s.world.bodies[0].pose.copy()
    for key in ("UP", "DOWN", "Q", "E"):
        s.key(key, shift=True)
    np.testing.assert_array_equal(s.world.bodies[0].pose, before)
    assert any("ground is static" in m[0] for m in s.messages)
