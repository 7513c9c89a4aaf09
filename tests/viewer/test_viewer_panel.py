"""The GUI panel (Dear ImGui) in a real window under Xvfb, and headless: clicks on its widgets
change the state, its pixels are on screen (and gone when F1 hides it), and clicks and keys
meant for it never reach the scene.

The window is driven by ``tests/_panel_driver.py`` in a child process: real pyglet events,
real frames between the pointer's move, the press and the release (as Dear ImGui needs), and
each widget found where the panel drew it (its rectangle recorded during the frame).
"""

import json
import os
import shutil
import subprocess
import sys

import numpy as np
import pytest
from PIL import Image

from .test_viewer_window import ROOT, colors, count_color, rgb  # noqa: F401
from .test_viewer_window import display  # noqa: F401  (the Xvfb fixture, 1280 x 720)

PANEL_RGB = rgb((0.14, 0.15, 0.18))  # app.viewer.panel.BACKGROUND, opaque


def drive(tmp_path, display, config, name="run"):
    """Run the driver on ``config``; returns (list of step states, {shot name: (H, W, 3) uint8})."""
    out = tmp_path / name
    cfg = tmp_path / f"{name}.json"
    cfg.write_text(json.dumps(config))
    env = dict(os.environ, OBBCOLLIDE_NO_BOOTSTRAP="1", OBBCOLLIDE_DATA=str(tmp_path / "data"))
    env.pop("PYGLET_HEADLESS", None)
    if display is None:
        env.pop("DISPLAY", None)
    else:
        env["DISPLAY"] = display
    r = subprocess.run([sys.executable, "-m", "tests._panel_driver", str(cfg), str(out)], cwd=ROOT, env=env,
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stdout + r.stderr
    steps = json.loads((out / "report.json").read_text())["steps"]
    shots = {p[:-4]: np.asarray(Image.open(out / p).convert("RGB")) for p in os.listdir(out) if p.endswith(".png")}
    return steps, shots


def panel_fraction(img, rect, tol=3):
    """The fraction of the pixels of ``rect`` (x0, y0, x1, y1; y down) in the panel's background colour."""
    x0, y0, x1, y1 = (int(round(v)) for v in rect)
    part = img[y0:y1, x0:x1].astype(int)
    return float(np.all(np.abs(part - PANEL_RGB) <= tol, axis=2).mean())


def scene_part(img, rect):
    """The screenshot right of the panel's rectangle."""
    return img[:, int(rect[2]) + 2:]


@pytest.fixture(scope="module")
def main_run(tmp_path_factory, display):  # noqa: F811
    """One session in the stacks scene at 1280 x 720 (paused), clicked through as a person would."""
    steps = [
        {"frames": 1, "shot": "start"},
        {"click": "overlay:pieces", "shot": "pieces_on"},
        {"drag": "gravity", "by": [60, 0]},
        {"click": "zero_g"},
        {"click": "open_field"},
        {"text": "bq"},
        {"click_at": [1200, 650]},  # the scene: the field lets go of the keyboard
        {"key": "B"},
        {"key": "F1", "shot": "hidden"},
        {"key": "F1", "shot": "shown"},
        {"click": "scene:primitives"},
        {"wait_load": True},
        {"click": "browse_open"},
        {"click": "open_field"},
        {"text": "nowhere.stl"},
        {"click": "open"},
        {"key": "H"},
    ]
    return drive(tmp_path_factory.mktemp("panel"), display, {"scene": "stacks", "paused": True, "steps": steps})


def test_a_checkbox_turns_an_overlay_on(main_run):
    steps, shots = main_run
    before, after = steps[0], steps[1]
    assert not before["flags"]["pieces"] and after["flags"]["pieces"]
    rect = after["rects"][1]
    green = colors()["pieces"]
    # the pieces' green edges appear in the scene, right of the panel
    assert count_color(scene_part(shots["start"], rect), green, 30) < 50
    assert count_color(scene_part(shots["pieces_on"], rect), green, 30) > 400


def test_the_gravity_field_and_buttons_change_the_worlds_gravity(main_run):
    steps, _ = main_run
    g0, dragged, zero = steps[1]["gravity"], steps[2]["gravity"], steps[3]["gravity"]
    assert g0 == pytest.approx([0.0, -9.81, 0.0])
    # a drag of 60 pixels on the middle (y) field, at 0.05 per pixel
    assert dragged[1] == pytest.approx(-9.81 + 3.0, abs=0.3)
    assert dragged[0] == 0.0 and dragged[2] == 0.0
    assert zero == [0.0, 0.0, 0.0]


def test_keys_typed_into_a_field_are_text_not_shortcuts(main_run):
    steps, _ = main_run
    typed, released, pressed = steps[5], steps[6], steps[7]
    assert typed["open_path"] == "bq"
    assert typed["flags"]["boxes"] == steps[0]["flags"]["boxes"]  # B went into the field
    assert released["selected"] is None
    assert pressed["flags"]["boxes"] != typed["flags"]["boxes"]  # once the field let go, B is the shortcut


def test_the_panel_is_on_screen_and_gone_when_hidden(main_run):
    steps, shots = main_run
    hidden, shown = steps[8], steps[9]
    assert not hidden["panel_visible"] and shown["panel_visible"]
    rect = shown["rects"][1]
    assert rect[0] == 0 and 270 <= rect[2] <= 340 and rect[3] == 720
    assert panel_fraction(shots["shown"], rect) > 0.4
    assert panel_fraction(shots["hidden"], rect) < 0.01
    assert hidden["rects"] == []  # and a hidden panel takes no clicks
    assert shown["times"]["panel"] > 0.0


def test_a_scene_from_the_list_loads(main_run):
    steps, _ = main_run
    clicked, loaded = steps[10], steps[11]
    assert clicked["scene_path"].endswith("stacks.toml")
    assert loaded["scene_path"].endswith("primitives.toml") and loaded["bodies"] == 5
    assert any("loaded scene 'primitives'" in m for m in loaded["messages"])


def test_clicks_and_drags_on_the_panel_do_not_reach_the_bodies_or_the_camera(tmp_path, display):  # noqa: F811
    # the camera is set so that bodies of the column lie behind the panel
    steps = [
        {"find_body_under_panel": True},
        {"drag_at": "spot", "by": [80, 30]},
        {"drag_at": [200, 40], "by": [-60, 60]},
        {"key": "F1"},
        {"click_at": "spot"},
    ]
    cfg = {"scene": "stacks", "paused": True, "camera": {"target": [2.4, 1.2, -1.0], "distance": 5.0},
           "steps": steps}
    (found, dragged, empty_drag, hidden, clicked), _ = drive(tmp_path, display, cfg)
    k = found["step"]["picked"]
    assert k is not None, "no body behind the panel: the camera in this test needs changing"
    name = [n for n in found["positions"]][k]
    for s in (dragged, empty_drag):
        assert s["selected"] is None
        assert s["camera"] == found["camera"]  # no orbit
        assert s["positions"][name] == found["positions"][name]
    # with the panel hidden, the same pixel picks the body: the panel was what held the click
    assert clicked["selected"] == k


def test_at_800x600_the_panel_leaves_most_of_the_scene_and_works(tmp_path, display):  # noqa: F811
    steps = [{"frames": 1, "shot": "small"}, {"click": "overlay:aabbs"}, {"click": "section:Help"},
             {"click": "help_table"}]
    (first, clicked, helped, _), shots = drive(tmp_path, display, {"scene": "primitives", "size": [800, 600],
                                                                   "paused": True, "steps": steps})
    rect = first["rects"][1]
    assert first["window"] == [800, 600]
    assert rect[2] <= 0.4 * 800  # the scene keeps at least 60 % of the width
    assert panel_fraction(shots["small"], rect) > 0.3
    assert clicked["flags"]["aabbs"]
    assert "help_table" in helped["items"]


def test_headless_egl_draws_the_panel_too(tmp_path):
    shot = tmp_path / "shot.png"
    env = dict(os.environ, OBBCOLLIDE_NO_BOOTSTRAP="1")
    env.pop("DISPLAY", None)
    r = subprocess.run([sys.executable, "-m", "app", "--scene", "primitives", "--headless", "--frames", "4",
                        "--size", "800x600", "--screenshot", str(shot)], cwd=ROOT, env=env, capture_output=True,
                       text=True, timeout=600)
    assert r.returncode == 0, r.stderr
    img = np.asarray(Image.open(shot).convert("RGB"))
    assert panel_fraction(img, (0, 40, 270, 600)) > 0.3
    r = subprocess.run([sys.executable, "-m", "app", "--scene", "primitives", "--headless", "--frames", "4",
                        "--size", "800x600", "--screenshot", str(shot), "--no-panel"], cwd=ROOT, env=env,
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr
    img = np.asarray(Image.open(shot).convert("RGB"))
    assert panel_fraction(img, (0, 40, 270, 600)) < 0.01


def test_browse_without_a_dialog_program_and_a_missing_path_are_messages(main_run):
    steps, _ = main_run
    browsed, opened = steps[12], steps[15]
    from app.viewer.panel_scenes import DIALOG_PROGRAMS

    if not any(shutil.which(p) for p in DIALOG_PROGRAMS):  # no zenity / kdialog: a message, no dialog, no hang
        assert any("no file dialog program" in m for m in browsed["messages"])
    assert opened["open_path"] == "bqnowhere.stl"  # typed after the "bq" of the earlier test
    assert opened["messages"][-1] == "bqnowhere.stl: no such file"
    assert opened["scene_path"].endswith("primitives.toml") and opened["bodies"] == 5  # nothing changed


def test_start_dialog_says_why_there_is_none(monkeypatch):
    from app.viewer import panel_scenes

    monkeypatch.setattr(panel_scenes.shutil, "which", lambda name: None)
    monkeypatch.setattr(panel_scenes.sys, "platform", "linux")
    dialog, reason = panel_scenes.start_dialog("open", "Open", ".")
    assert dialog is None and "zenity" in reason and "type the path" in reason


def test_h_opens_the_help_section_of_the_panel(main_run):
    steps, _ = main_run
    before, after = steps[15], steps[16]
    assert not before["flags"]["help"] and after["flags"]["help"]
    assert "help_table" not in before["items"] and "help_table" in after["items"]


def test_a_section_that_raises_is_reported_and_the_panel_goes_on(tmp_path, display):  # noqa: F811
    steps = [{"click": "section:Broken"}, {"frames": 3}, {"click": "overlay:aabbs", "shot": "after"}]
    cfg = {"scene": "primitives", "paused": True, "broken_section": True, "steps": steps}
    (_, first, clicked), shots = drive(tmp_path, display, cfg)
    assert any("panel section 'Broken' failed: RuntimeError: a section's bug" in m for m in first["messages"])
    assert clicked["flags"]["aabbs"]  # the sections after it still work
    assert panel_fraction(shots["after"], clicked["rects"][1]) > 0.3
