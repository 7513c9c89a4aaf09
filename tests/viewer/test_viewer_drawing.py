"""Drawing that reads at any scale, and text that fits: real pixels from the viewer's window.

Each test renders a scene through the real window (Xvfb; see test_viewer_window.py) with
the camera set by hand (tests/_viewer_probe.py) and checks the screenshot: markers keep
their size in pixels when one body is 100 units away, the ground reaches under a body far
from the origin and fades out at the horizon, the grid is unbroken over the ground at a
grazing view, the 2 cm projectile shows mid-flight, and the HUD and help sit on
semi-transparent panels inside 1280x720 and 800x600 windows with the help's last line
drawn. Marker sizes are also checked without a window against the projection.
"""

import json
import os
import subprocess
import sys

import numpy as np
import pytest
from PIL import Image

from .test_viewer_window import display  # noqa: F401  (the Xvfb fixture)

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

GROUND = """
[[body]]
name = "ground"
shape = "plane"
size = [6.0, 3.0]
motion = "static"
color = [0.55, 0.57, 0.6]
"""


def box(name, size, position, motion="dynamic", color=(0.36, 0.55, 0.85)):
    return (f'\n[[body]]\nname = "{name}"\nshape = "box"\nsize = {list(size)}\nposition = {list(position)}\n'
            f'motion = "{motion}"\ncolor = {list(color)}\n')


def scene(tmp_path, name, *bodies):
    path = tmp_path / f"{name}.toml"
    path.write_text(f'[scene]\nname = "{name}"\n' + "".join(bodies))
    return str(path)


ONLY_MANIFOLDS = {"boxes": False, "triangles": False, "segments": False, "contacts": False, "grid": False,
                  "manifolds": True}


def probe(tmp_path, display, tag, **cfg):
    """Run tests/_viewer_probe.py; returns (report, screenshot (H, W, 3) uint8)."""
    out = tmp_path / tag
    out.mkdir()
    (out / "cfg.json").write_text(json.dumps(cfg))
    env = dict(os.environ, OBBCOLLIDE_NO_BOOTSTRAP="1", DISPLAY=display)
    env.pop("PYGLET_HEADLESS", None)
    r = subprocess.run([sys.executable, "-m", "tests._viewer_probe", str(out / "cfg.json"), str(out)], cwd=ROOT,
                       env=env, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stdout + r.stderr
    report = json.loads((out / "probe.json").read_text())
    return report, np.asarray(Image.open(out / "shot.png").convert("RGB")).astype(int)


def near(img, rgb, tol):
    return np.all(np.abs(img - np.round(255 * np.asarray(rgb))) <= tol, axis=2)


def colors():
    from app.viewer.session import COLORS

    return COLORS


# -- markers in pixels -------------------------------------------------------------------------


def test_markers_keep_their_pixel_size_when_one_body_is_far_away(tmp_path, display):
    """The same box on the same ground, seen by the same camera, once alone and once with a
    box 100 units away: the manifold markers and normals (orange) cover the same pixels."""
    here = box("box", (0.5, 0.5, 0.5), (0.0, 0.25, 0.0))
    small = scene(tmp_path, "small", GROUND, here)
    far = scene(tmp_path, "far", GROUND, here, box("far box", (1, 1, 1), (100.0, 0.5, 0.0), "static"))
    cam = {"target": [0.0, 0.2, 0.0], "distance": 2.5, "yaw": 0.6, "pitch": 0.45}
    corner = [0.25, 0.0, 0.25]  # the box's bottom corner nearest the camera: a manifold point
    shots = {}
    for tag, path in (("small", small), ("far", far)):
        rep, img = probe(tmp_path, display, tag, scene=path, frames=3, flags=ONLY_MANIFOLDS, camera=cam,
                         points=[corner])
        shots[tag] = (rep, near(img, colors()["manifolds"], 40))
    (rep, a), (_, b) = shots["small"], shots["far"]
    assert a.sum() > 100, "the manifold markers are drawn"
    assert (a & b).sum() / (a | b).sum() > 0.95, (a.sum(), b.sum())
    # the marker at the corner: its normal (up) and its cross's vertical stroke (down), a run of
    # pixels in a thin column; as long as the projection of those world-vertical strokes says
    from app.viewer.buffers import pixel_world_sizes
    from app.viewer.camera import OrbitCamera
    from app.viewer.session import MANIFOLD_MARKER_PX, MANIFOLD_NORMAL_PX

    view = OrbitCamera(**cam)
    view.width, view.height = 1280, 720
    p = np.array(corner)
    size = pixel_world_sizes([p], view.eye, (view.target - view.eye) / view.distance, view.fovy, 720)[0]
    up, down = (view.project(p + np.array([0, k * size, 0])) for k in (MANIFOLD_NORMAL_PX, -MANIFOLD_MARKER_PX))
    expected = up[1] - down[1]
    assert expected > 0.7 * (MANIFOLD_NORMAL_PX + MANIFOLD_MARKER_PX)
    x, y = (round(v) for v in rep["points"][0])
    for mask in (a, b):
        column = mask[:, x - 1:x + 2].any(axis=1)
        top = bottom = y
        while column[top - 1] or column[top - 2]:
            top -= 1
        while column[bottom + 1] or column[bottom + 2]:
            bottom += 1
        assert column[y - 2:y + 3].any()
        assert abs((bottom - top) - expected) <= 3, (bottom - top, expected)


def test_session_markers_are_sized_in_pixels_whatever_the_scene():
    """Without a window: the contact crosses and normals Session.overlays returns are
    MARKER_PX / NORMAL_PX pixels long at their own depth, and the same arrays come back when
    a body 100 units away joins the scene (the camera unchanged)."""
    from app.scene.loader import default_scene, make_body
    from app.viewer import session as sm
    from app.viewer.buffers import pixel_world_sizes

    s = sm.Session(default_scene())
    s.camera.width, s.camera.height = 800, 600
    s.frame_camera()
    s.update(0.0)
    for name in sm.OVERLAYS:
        s.flags[name] = name == "contacts"
    lines, cols, _, _ = s.overlays()
    magenta = np.all(cols == np.float32(sm.COLORS["contacts"]), axis=1)
    seg = lines[magenta].reshape(-1, 2, 3).astype(float)
    assert len(seg) > 10
    cam = s.camera
    fwd = (cam.target - cam.eye) / cam.distance
    # a contact gives a cross (three strokes centred on the point) then its normal (from the point)
    length = np.linalg.norm(seg[:, 1] - seg[:, 0], axis=1)
    mid = seg.mean(axis=1)
    # the strokes of a cross share their midpoint (the contact point); a normal starts there
    _, inverse, counts = np.unique(np.round(mid, 5), axis=0, return_inverse=True, return_counts=True)
    crosses = counts[inverse.ravel()] >= 3
    px_mid = pixel_world_sizes(mid, cam.eye, fwd, cam.fovy, cam.height)
    px_start = pixel_world_sizes(seg[:, 0], cam.eye, fwd, cam.fovy, cam.height)
    np.testing.assert_allclose(length[crosses], 2 * sm.MARKER_PX * px_mid[crosses], rtol=1e-4)
    normals = ~crosses
    assert 3 * normals.sum() == crosses.sum() > 0
    starts = {tuple(r) for r in np.round(seg[normals, 0], 5)}
    assert starts <= {tuple(r) for r in np.round(mid[crosses], 5)}
    np.testing.assert_allclose(length[normals], sm.NORMAL_PX * px_start[normals], rtol=1e-4)

    far = make_body("far ball", *_ball(), _at([100.0, 0, 0]), (0.5, 0.5, 0.5))
    s.world.bodies.append(far)
    s.world.detect()
    lines2, cols2, _, _ = s.overlays()
    magenta2 = np.all(cols2 == np.float32(sm.COLORS["contacts"]), axis=1)
    np.testing.assert_allclose(lines2[magenta2], lines[magenta], rtol=1e-6, atol=1e-7)


def _ball():
    import trimesh

    m = trimesh.creation.icosphere(subdivisions=1, radius=0.5)
    return m.vertices, m.faces


def _at(p):
    pose = np.eye(4)
    pose[:3, 3] = p
    return pose


# -- the ground and the grid -----------------------------------------------------------------------


def test_the_ground_reaches_under_a_body_far_from_the_origin(tmp_path, display):
    """A ground 6 x 3 units in its file collides as an infinite plane: a box resting 100 units
    away stands on ground drawn there, as does everything between."""
    path = scene(tmp_path, "far", GROUND, box("box", (0.5, 0.5, 0.5), (0.0, 0.25, 0.0)),
                 box("far box", (2, 2, 2), (100.0, 1.0, 0.0), "static", (0.86, 0.55, 0.3)))
    points = [[100.0, 0.0, 2.5], [102.5, 0.0, 0.0], [50.0, 0.0, 0.0], [100.0, 0.0, -20.0]]
    rep, img = probe(tmp_path, display, "far", scene=path, frames=2, flags={"grid": False, "boxes": False},
                     points=points)
    bg = np.round(255 * np.asarray(colors()["background"]))
    h, w = img.shape[:2]
    for x, y in rep["points"]:
        assert 0 <= x < w and 0 <= y < h, (x, y)
        patch = img[int(y) - 1:int(y) + 2, int(x) - 1:int(x) + 2].reshape(-1, 3)
        # lit ground: far brighter than the background, and grey as the ground's colour
        assert np.all(np.abs(patch - bg).sum(axis=1) > 120), (x, y, patch)
        assert np.all(np.ptp(patch, axis=1) < 30), patch


def test_the_grid_is_unbroken_over_the_ground_at_a_grazing_view_and_the_ground_fades_out(tmp_path, display):
    """Seen from 3 degrees above the ground, pixels along the grid lines (across the view and
    away from it) are grid-coloured, not stippled by the ground's pixels (z-fighting); the
    ground fades into the background before the horizon."""
    path = scene(tmp_path, "flat", GROUND, box("a", (0.5, 0.5, 0.5), (-2.0, 0.25, 0.0)),
                 box("b", (0.5, 0.5, 0.5), (2.0, 0.25, 0.0)))
    cam = {"target": [0.0, 0.0, 0.0], "distance": 4.0, "yaw": 0.0, "pitch": 0.05}
    across = [[[-1.0, 0.0, z], [1.0, 0.0, z]] for z in (1.0, 1.5, 2.0)]  # lines along x, near the eye
    away = [[[x, 0.0, 2.5], [x, 0.0, -1.0]] for x in (-0.5, 0.3, 1.0)]     # lines along z
    ends = [p for line in across + away for p in line]
    flags = {"boxes": False, "manifolds": False, "contacts": False, "segments": False, "triangles": False}
    rep, img = probe(tmp_path, display, "grazing", scene=path, frames=2, flags=flags, camera=cam, points=ends)
    grid = near(img, colors()["grid"], 14)
    pix = np.array(rep["points"]).reshape(-1, 2, 2)
    for (x0, y0), (x1, y1) in pix:
        n = int(max(abs(x1 - x0), abs(y1 - y0)))
        assert n > 40, "the line crosses a good part of the screen"
        t = np.linspace(0.05, 0.95, n)
        xs, ys = x0 + t * (x1 - x0), y0 + t * (y1 - y0)
        hit = [grid[int(round(y)) - 1:int(round(y)) + 2, int(round(x)) - 1:int(round(x)) + 2].any()
               for x, y in zip(xs, ys)]
        assert np.mean(hit) > 0.97, f"grid line broken: {np.mean(hit):.2f} of {n} samples grid-coloured"
    # above the horizon, the background; under it, the ground fades in from the background
    # (down the middle column, where no body and no grid line along z is)
    bg = np.round(255 * np.asarray(colors()["background"]))
    assert np.all(np.abs(img[200:240, 100:200] - bg).max(axis=2) <= 3)  # under the HUD, over the horizon
    column = np.abs(img[:, 640] - bg).sum(axis=1)
    column[:150] = 0  # the HUD's panel
    first = int(np.flatnonzero(column > 6)[0])  # the first row that is not the background
    assert 250 < first < 360
    assert column[first] < 0.5 * column[first + 30], column[first:first + 31]


# -- small fast bodies ---------------------------------------------------------------------------------


def test_the_projectile_shows_mid_flight(tmp_path, display):
    """The 2 cm ball at 80 m/s, two frames in: a disc of MIN_BODY_PX radius in its colour at
    its centre, though the ball itself would cover a pixel or two."""
    from app.viewer.session import MIN_BODY_PX

    rep, img = probe(tmp_path, display, "projectile", scene="projectile", frames=2)
    bullet = rep["bodies"]["bullet"]
    assert -1.5 < bullet["position"][0] < 1.4, "in flight, before the wall"
    x, y = bullet["center"]
    yy, xx = np.mgrid[0:img.shape[0], 0:img.shape[1]]
    around = (xx - x) ** 2 + (yy - y) ** 2 <= (MIN_BODY_PX + 3) ** 2
    yellow = near(img, (0.95, 0.85, 0.35), 40) & around
    assert yellow.sum() >= 15, yellow.sum()
    # and the disc has a dark rim, so it reads on the ground
    dark = near(img, 0.3 * np.array([0.95, 0.85, 0.35]), 12) & around
    assert dark.sum() >= 10, dark.sum()


# -- text --------------------------------------------------------------------------------------------


def panel_check(img, img_without, box, alpha=190 / 255, panel=(10, 12, 16)):
    """The box's padding is the panel blended over what is there without it."""
    x0, y0, x1, y1 = (int(np.ceil(box["x"])), int(np.ceil(box["y"])), int(box["x"] + box["width"]),
                      int(box["y"] + box["height"]))
    ring = np.zeros(img.shape[:2], bool)
    ring[y0:y0 + 4, x0:x1] = ring[y1 - 4:y1, x0:x1] = True
    ring[y0:y1, x0:x0 + 4] = ring[y0:y1, x1 - 4:x1] = True
    expected = alpha * np.asarray(panel) + (1 - alpha) * img_without[ring]
    assert np.abs(img[ring] - expected).max() <= 3


@pytest.mark.parametrize("size", [(1280, 720), (800, 600)])
def test_help_fits_on_a_panel_under_the_hud(tmp_path, display, size):
    path = scene(tmp_path, "flat", GROUND, box("a", (0.5, 0.5, 0.5), (-1.0, 0.25, 0.0)),
                 box("b", (0.5, 0.5, 0.5), (1.0, 0.25, 0.0)))
    cfg = dict(scene=path, size=list(size), frames=2, paused=True)
    rep, img = probe(tmp_path, display, "help", flags={"help": True}, **cfg)
    _, img_without = probe(tmp_path, display, "nohelp", flags={"help": False}, **cfg)
    w, h = size
    assert img.shape[:2] == (h, w)
    boxes = {b["name"]: b for b in rep["boxes"]}
    assert set(boxes) == {"hud", "help"}
    hud, helpbox = boxes["hud"], boxes["help"]
    for b in (hud, helpbox):
        assert 0 <= b["x"] and b["x"] + b["width"] <= w and 0 <= b["y"] and b["y"] + b["height"] <= h
    assert helpbox["y"] >= hud["y"] + hud["height"]  # under the HUD, not over it
    lines = [line for col in helpbox["columns"] for line in col]
    from app.viewer.controls import help_lines

    assert lines[-1] == help_lines()[-1]
    assert any(line.strip() == "Esc  quit" for line in lines)
    assert any(line.startswith("drop a file:") for line in lines)
    assert " ".join(lines).split() == " ".join(help_lines()).split()  # all of it, wrapped
    panel_check(img, img_without, helpbox)
    # the last column's last line is drawn: text-coloured pixels in its row
    col = helpbox["columns"][-1]
    ox, oy = helpbox["origins"][-1]
    lh, cw = helpbox["line_height"], helpbox["char_width"]
    row = img[int(oy + (len(col) - 1) * lh):int(oy + len(col) * lh), int(ox):int(ox + len(col[-1]) * cw)]
    assert (row.min(axis=2) > 150).sum() > 40
    # the help's text stays in its panel: nothing of it to the right of or under the box
    right = img[int(helpbox["y"]):int(helpbox["y"] + helpbox["height"]), int(helpbox["x"] + helpbox["width"]) + 1:]
    assert not (right.min(axis=2) > 180).any() if right.size else True
    below = img[int(helpbox["y"] + helpbox["height"]) + 1:, int(helpbox["x"]):]
    assert not (below.min(axis=2) > 180).any()


def test_resizing_the_window_lays_the_text_out_again(tmp_path, display):
    path = scene(tmp_path, "flat", GROUND, box("a", (0.5, 0.5, 0.5), (0.0, 0.25, 0.0)))
    rep, img = probe(tmp_path, display, "resize", scene=path, size=[1280, 720], frames=4, paused=True,
                     flags={"help": True}, resize=[2, 800, 600])
    assert rep["window"] == [800, 600] and img.shape[:2] == (600, 800)
    boxes = {b["name"]: b for b in rep["boxes"]}
    for b in boxes.values():
        assert b["x"] + b["width"] <= 800 and b["y"] + b["height"] <= 600
    assert boxes["help"]["y"] >= boxes["hud"]["y"] + boxes["hud"]["height"]
    col = boxes["help"]["columns"][-1]
    ox, oy = boxes["help"]["origins"][-1]
    lh = boxes["help"]["line_height"]
    row = img[int(oy + (len(col) - 1) * lh):int(oy + len(col) * lh), int(ox):int(ox + 200)]
    assert (row.min(axis=2) > 150).sum() > 40
