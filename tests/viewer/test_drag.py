"""Dragging bodies of the `stacks` scene as a person does: nothing may be flung, and all comes to rest.

The drags go through the session's mouse calls (what the window's events call) frame by frame,
at 2, 20 and 200 pixels per frame, and as a shake; then the same through the real viewer with a
scripted drag, and once with real X input (xdotool) under Xvfb.
"""

import json
import os
import shutil
import subprocess
import sys
import time

import numpy as np
import pytest

from app.world.dynamics import SLEEP_SPEED
from app.scene.scene_file import scene_registry
from app.viewer.session import Session
from app.world.world import World

from .test_viewer_window import W, H, display  # noqa: F401  (the Xvfb fixture, 1280 x 720)

FRAME = 1 / 60
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SPEED_LIMIT = 10.0  # m/s: no body may go faster, whatever the mouse does
REST_WITHIN = 5.0  # s after the release


@pytest.fixture(scope="module")
def stacks_path():
    return scene_registry()["stacks"]


def _stacks_session(path):
    s = Session(World([]))
    s.camera.width, s.camera.height = W, H
    s.load_scene(path, wait=True)
    assert len(s.world.bodies) == 26
    return s


def _fastest(session):
    return max(float(np.linalg.norm(b.velocity)) for b in session.world.bodies)


def _all_at_rest(session):
    return all(b.sleeping or float(np.linalg.norm(b.velocity)) < SLEEP_SPEED
               for b in session.world.bodies if b.moves)


def _drag(session, name, moves):
    """Settle a second, press on body ``name``, one move per frame, hold half a second, release; then 5 s.
    Returns (the largest body speed seen, seconds from the release until every dynamic body stays
    at rest (None: not within 5 s), the body)."""
    for _ in range(60):
        session.update(FRAME)
    body = next(b for b in session.world.bodies if b.name == name)
    x, y = session.camera.project(body.world_center())
    session.mouse_press(x, y, "left")
    assert session.world.bodies[session.selected] is body
    fastest = 0.0
    for dx, dy in moves:
        x, y = x + dx, y + dy
        session.mouse_drag(x, y, dx, dy, "left")
        session.update(FRAME)
        fastest = max(fastest, _fastest(session))
    for _ in range(30):  # the hand stops and holds for half a second before letting go
        session.update(FRAME)
        fastest = max(fastest, _fastest(session))
    session.mouse_release(x, y, "left")
    rest = []
    for _ in range(int(REST_WITHIN / FRAME)):
        session.update(FRAME)
        fastest = max(fastest, _fastest(session))
        rest.append(_all_at_rest(session))
    settled = next((k for k in range(len(rest)) if all(rest[k:])), None)
    return fastest, (None if settled is None else (settled + 1) * FRAME), body


@pytest.mark.parametrize("name", ["column 10", "pyramid 7"])
@pytest.mark.parametrize("pixels", [2, 20, 200])
def test_a_sideways_drag_never_flings_a_body_and_all_comes_to_rest(stacks_path, name, pixels):
    s = _stacks_session(stacks_path)
    moves = [(pixels, 0)] * max(1, 240 // pixels)  # 240 pixels in all, as a person's quick drag
    start = next(b for b in s.world.bodies if b.name == name).world_center()
    fastest, settled, body = _drag(s, name, moves)
    assert fastest < SPEED_LIMIT, f"{name} at {pixels} px/frame: a body reached {fastest:.1f} m/s"
    assert settled is not None, f"{name} at {pixels} px/frame: still moving {REST_WITHIN} s after the release"
    if name == "column 10":
        # the drag does something: the top box is pulled off the column
        assert np.linalg.norm(body.world_center() - start) > 0.3


def test_shaking_a_body_in_the_pyramid_is_safe(stacks_path):
    s = _stacks_session(stacks_path)
    shake = [(200 if k % 2 == 0 else -200, 150 if k % 4 < 2 else -150) for k in range(60)]
    fastest, settled, _ = _drag(s, "pyramid 12", shake)
    assert fastest < SPEED_LIMIT
    assert settled is not None


def _run_app(args, cwd, timeout=600, env=None):
    run_env = dict(os.environ, OBBCOLLIDE_NO_BOOTSTRAP="1", **(env or {}))
    return subprocess.run([sys.executable, "-m", "app", *args], cwd=cwd, env=run_env, capture_output=True,
                          text=True, timeout=timeout)


def _egl_available():
    try:
        import ctypes.util

        return ctypes.util.find_library("EGL") is not None
    except Exception:
        return False


@pytest.mark.skipif(not _egl_available(), reason="libEGL is not installed (apt-get install libegl1); CI installs it")
def test_a_scripted_drag_in_the_viewer_reports_the_speeds(tmp_path, stacks_path):
    # The viewer's own scripted input: press on a body by name, move the held pointer, release.
    script = [{"frame": 60, "press": "column 10"}]
    script += [{"frame": 61 + k, "move": [20, 0]} for k in range(12)]
    script += [{"frame": 73, "release": True}]
    (tmp_path / "drag.json").write_text(json.dumps(script))
    result = _run_app(["--scene", "stacks", "--headless", "--frames", "380", "--scripted", str(tmp_path / "drag.json"),
                       "--report", str(tmp_path / "report.json")], ROOT)
    assert result.returncode == 0, result.stderr[-2000:]
    report = json.loads((tmp_path / "report.json").read_text())
    speeds = [f["max_speed"] for f in report["frames"]]
    assert len(speeds) == 380
    assert max(speeds[40:60]) < SLEEP_SPEED  # the stacks, settled from their start, stand still until the drag
    assert max(speeds[61:74]) > 0.5  # the drag moved the box
    assert max(speeds) < SPEED_LIMIT
    top = next(b for b in report["bodies"] if b["name"] == "column 10")
    assert abs(top["pose"][0][3] - (-1.0)) > 0.3  # pulled off the column
    assert all(b["asleep"] for b in report["bodies"] if b["name"] != "ground")
    assert report["selected"] == [b["name"] for b in report["bodies"]].index("column 10")


@pytest.mark.skipif(shutil.which("xdotool") is None,
                    reason="xdotool is not installed (apt-get install xdotool); CI installs it")
def test_a_real_mouse_drag_under_xvfb_never_flings_a_body(tmp_path, display):  # noqa: F811
    # The interactive viewer in a real window, the mouse driven from outside by xdotool: press on
    # the top box of the column, drag it 240 px sideways in a fifth of a second, let go, wait.
    env = dict(os.environ, DISPLAY=display, OBBCOLLIDE_NO_BOOTSTRAP="1")
    env.pop("PYGLET_HEADLESS", None)
    report = tmp_path / "report.json"
    app = subprocess.Popen([sys.executable, "-m", "app", "--scene", "stacks", "--report", str(report)],
                           cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        def xdo(*args):
            return subprocess.run(["xdotool", *args], env=env, capture_output=True, text=True, timeout=60)

        wid = xdo("search", "--sync", "--onlyvisible", "--name", "obbcollide").stdout.split()[0]
        deadline = time.monotonic() + 180
        state = None
        loaded_at = None  # the frame count when the scene was first seen: it loads in the background
        while time.monotonic() < deadline:  # the report comes every second: wait for the scene, settled
            try:
                state = json.loads(report.read_text())
            except (OSError, ValueError):
                state = None
            if state and len(state["bodies"]) == 26 and loaded_at is None:
                loaded_at = len(state["frames"])
            if loaded_at is not None and len(state["frames"]) > loaded_at + 60:
                break
            time.sleep(0.25)
        else:
            pytest.fail("the viewer did not show the stacks scene within 180 s")
        start = len(state["frames"])
        # where the window's camera shows the top box: the same framing as the viewer's
        s = _stacks_session(scene_registry()["stacks"])
        top = next(b for b in s.world.bodies if b.name == "column 10")
        x, y = s.camera.project(top.world_center())
        y = H - y  # xdotool's y runs down
        xdo("mousemove", "--window", wid, str(int(x)), str(int(y)))
        xdo("mousedown", "1")
        for k in range(1, 13):
            xdo("mousemove", "--window", wid, str(int(x + 20 * k)), str(int(y)))
            time.sleep(1 / 60)
        xdo("mouseup", "1")
        time.sleep(REST_WITHIN + 1.0)
        xdo("key", "--window", wid, "Escape")
        assert app.wait(timeout=60) == 0
        state = json.loads(report.read_text())
        speeds = [f["max_speed"] for f in state["frames"]]
        assert max(speeds[start - 20:start]) < SLEEP_SPEED  # standing still before the drag
        assert max(speeds) < SPEED_LIMIT
        assert max(speeds[start:]) > 0.5  # the real drag moved the box
        names = [b["name"] for b in state["bodies"]]
        assert state["selected"] == names.index("column 10")
        top = state["bodies"][names.index("column 10")]
        assert abs(top["pose"][0][3] - (-1.0)) > 0.3  # pulled off the column
    finally:
        if app.poll() is None:
            app.kill()
