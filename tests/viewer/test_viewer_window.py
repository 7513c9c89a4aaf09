"""The viewer in a real window (Xvfb, Mesa llvmpipe) and headless (EGL): real pixels.

Each test runs ``python -m app`` in a child process with a scripted list of
input actions (delivered as pyglet window events), a JSON report and a PNG of
the last frame, then checks the app state in the report and the colours in
the screenshot. Xvfb is started by the fixture; without the ``Xvfb`` binary
the window tests are skipped (CI installs it, see .ci/run).
"""

import json
import os
import shutil
import subprocess
import sys
import time

import numpy as np
import pytest
from PIL import Image

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
W, H = 1280, 720


def rgb(c):
    return np.array([round(255 * x) for x in c])


@pytest.fixture(scope="module")
def display():
    """A private Xvfb display (24-bit: a 16-bit one hangs pyglet)."""
    if shutil.which("Xvfb") is None:
        pytest.skip("Xvfb is not installed (apt-get install xvfb); CI installs it")
    for num in range(90, 140):
        if os.path.exists(f"/tmp/.X{num}-lock"):
            continue
        proc = subprocess.Popen(["Xvfb", f":{num}", "-screen", "0", f"{W}x{H}x24", "-nolisten", "tcp"],
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        for _ in range(50):
            if os.path.exists(f"/tmp/.X11-unix/X{num}"):
                break
            time.sleep(0.1)
        if proc.poll() is None:
            yield f":{num}"
            proc.terminate()
            proc.wait(timeout=10)
            return
    pytest.skip("no free X display number for Xvfb")


def run_app(tmp_path, script, frames=12, display=None, extra=()):
    """Run the app with a script; return (report dict, screenshot as (H, W, 3) uint8)."""
    shot = tmp_path / "shot.png"
    rep = tmp_path / "report.json"
    scr = tmp_path / "script.json"
    scr.write_text(json.dumps(script))
    env = dict(os.environ, OBBCOLLIDE_NO_BOOTSTRAP="1")
    env.pop("PYGLET_HEADLESS", None)
    args = [sys.executable, "-m", "app", "--frames", str(frames), "--screenshot", str(shot),
            "--report", str(rep), "--scripted", str(scr), "--size", f"{W}x{H}", *extra]
    if display is None:
        args.append("--headless")
        env.pop("DISPLAY", None)
    else:
        env["DISPLAY"] = display
    r = subprocess.run(args, cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stdout + r.stderr
    report = json.loads(rep.read_text())
    img = np.asarray(Image.open(shot).convert("RGB"))
    return report, img, r.stderr


def count_color(img, color, tol=40):
    """Pixels within ``tol`` (per channel) of ``color`` (0..1 floats)."""
    return int(np.all(np.abs(img.astype(int) - rgb(color)) <= tol, axis=2).sum())


def colors():
    from app.viewer.session import COLORS

    return COLORS


def body_pixel(name, size=(W, H), shift=None):
    """Window pixel (bottom-left origin) of a default-scene body's centre, as the app frames it."""
    from app.scene.loader import default_scene
    from app.viewer.session import Session

    world = default_scene()
    s = Session(world)
    s.camera.width, s.camera.height = size
    s.frame_camera()
    k = [b.name for b in world.bodies].index(name)
    c = world.bodies[k].world_center()
    x, y = s.camera.project(c)
    # Check nothing else is in front: the pick must return this body.
    hit, _ = s.pick(x, y)
    assert hit == k, f"{name} is occluded at its centre pixel"
    return k, (x, y)


def test_default_scene_renders_bodies_boxes_and_contacts(tmp_path, display):
    report, img, _ = run_app(tmp_path, [], display=display)
    c = colors()
    assert img.shape == (H, W, 3)
    # Background where nothing is (a top-right corner patch, help is off).
    patch = img[150:170, W - 40:W - 10].reshape(-1, 3).astype(int)
    assert np.all(np.abs(patch - rgb(c["background"])) <= 3)
    # Shaded bodies: many pixels far from the background and grey-free colours.
    assert report["contact_pairs"], "the default scene starts with contacts"
    assert count_color(img, c["boxes"], 30) > 200          # OBB boxes drawn
    assert count_color(img, c["contacts"], 30) > 30        # contact markers
    assert count_color(img, c["triangles"], 30) > 30       # colliding triangles
    lit = np.abs(img.astype(int) - rgb(c["background"])).sum(axis=2) > 60
    assert lit.mean() > 0.05


def test_overlay_toggles_change_pixels(tmp_path, display):
    c = colors()
    off, img_off, _ = run_app(tmp_path, [{"frame": 1, "key": "B"}, {"frame": 1, "key": "C"}], display=display)
    assert not off["flags"]["boxes"] and not off["flags"]["contacts"]
    assert count_color(img_off, c["boxes"], 30) < 20
    assert count_color(img_off, c["contacts"], 30) < 20
    on, img_on, _ = run_app(tmp_path, [{"frame": 1, "key": "V"}], display=display)
    assert on["flags"]["aabbs"]
    assert count_color(img_on, c["aabbs"], 12) > count_color(img_off, c["aabbs"], 12) + 200


def test_keyboard_drives_the_selected_body(tmp_path, display):
    from app.viewer.controls import MOVE_STEP

    # Tab selects body 0 (the torus knot); pause so only the keys move it.
    script = [{"frame": 1, "key": "SPACE"}, {"frame": 1, "key": "TAB"}]
    script += [{"frame": 2, "key": "RIGHT"}] * 3 + [{"frame": 3, "key": "UP", "shift": True}]
    base, _, _ = run_app(tmp_path, [{"frame": 1, "key": "SPACE"}], display=display)
    moved, _, _ = run_app(tmp_path, script, display=display)
    p0 = np.array(base["bodies"][0]["pose"])[:3, 3]
    p1 = np.array(moved["bodies"][0]["pose"])[:3, 3]
    assert moved["selected"] == 0
    np.testing.assert_allclose(p1 - p0, [3 * MOVE_STEP, 10 * MOVE_STEP, 0.0], atol=1e-9)


def test_driving_a_body_into_another_makes_contacts(tmp_path, display):
    c = colors()
    # The box (body 3) starts apart from everything: drive it up into the torus knot.
    names = None
    script = [{"frame": 1, "key": "SPACE"}] + [{"frame": 1, "key": "TAB"}] * 4
    before, img0, _ = run_app(tmp_path, script, display=display)
    names = [b["name"] for b in before["bodies"]]
    assert names[before["selected"]] == "box"
    assert not any("box" in pair[:2] for pair in before["contact_pairs"])
    drive = script + [{"frame": 2, "key": "PAGEUP", "shift": True}] + [{"frame": 3, "key": "UP", "shift": True}]
    after, img1, _ = run_app(tmp_path, drive, display=display)
    pairs = [p for p in after["contact_pairs"] if "box" in p[:2]]
    assert pairs and pairs[0][2] > 0, after["contact_pairs"]
    assert count_color(img1, c["triangles"], 30) > count_color(img0, c["triangles"], 30)


def test_click_picks_the_body_under_the_cursor_and_nothing_elsewhere(tmp_path, display):
    k, (x, y) = body_pixel("gear")
    picked, _, _ = run_app(tmp_path, [{"frame": 1, "key": "SPACE"}, {"frame": 2, "click": [x, y]}],
                           display=display)
    assert picked["selected"] == k
    # an empty corner right of the GUI panel (a click on the panel is the panel's)
    empty, _, _ = run_app(tmp_path, [{"frame": 1, "key": "TAB"}, {"frame": 2, "click": [W - 20, 20]}],
                          display=display)
    assert empty["selected"] is None


def test_drag_moves_the_picked_body_in_the_view_plane(tmp_path, display):
    k, (x, y) = body_pixel("gear")
    base, _, _ = run_app(tmp_path, [{"frame": 1, "key": "SPACE"}], display=display)
    dragged, _, _ = run_app(tmp_path, [{"frame": 1, "key": "SPACE"},
                                       {"frame": 2, "drag": [x, y, x + 120, y], "steps": 12}], display=display)
    d = np.array(dragged["bodies"][k]["pose"])[:3, 3] - np.array(base["bodies"][k]["pose"])[:3, 3]
    assert np.linalg.norm(d) > 0.1


def test_bad_mesh_file_shows_a_message_and_keeps_the_scene(tmp_path, display):
    bad = tmp_path / "broken.stl"
    bad.write_bytes(os.urandom(300))
    rep, _, err = run_app(tmp_path, [{"frame": 2, "drop": [str(bad)]}], display=display,
                          extra=("--mesh", str(tmp_path / "missing.obj")))
    assert len(rep["bodies"]) == 6
    assert any("missing.obj" in m for m in rep["messages"])
    assert any("broken.stl" in m for m in rep["messages"])
    assert "missing.obj" in err


def test_headless_egl_screenshot(tmp_path):
    """No X at all: EGL offscreen, same pixels as a window would give."""
    try:
        report, img, _ = run_app(tmp_path, [], frames=4)
    except AssertionError as exc:
        if "EGL" in str(exc) or "libEGL" in str(exc):
            pytest.skip(f"EGL is not available here: {str(exc)[-200:]}")
        raise
    c = colors()
    assert count_color(img, c["boxes"], 30) > 200
    assert len(report["frames"]) == 4
