"""The narrow-phase panel section in a minimal Dear ImGui frame, in a real window under Xvfb.

tests/_narrow_panel_probe.py draws the section for two boxes overlapping in the
vector-symbol method's degenerate case, clicks its comparison checkbox, and
records the texts drawn and two screenshots. Checked: the click turned the
comparison on; the counts table shows the counts the world computed; the
disagreeing pair is listed with its depth; the screenshot shows the panel and
the disagreement's colour after the click only. The overlay drawing is checked
GL-free through the session's LineCollector.
"""

import json
import os
import subprocess
import sys

import numpy as np
import pytest
from PIL import Image

from app.viewer.narrow_panel import CLASS_LABELS, OVERLAY_COLORS
from app.viewer.session import COLORS, Session
from app.world.world import World

from .._bodies import box_body
from .test_viewer_window import count_color, display, rgb  # noqa: F401  (the Xvfb fixture)

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def test_the_section_draws_the_counts_and_its_checkbox_works(tmp_path, display):  # noqa: F811
    env = dict(os.environ, OBBCOLLIDE_NO_BOOTSTRAP="1", DISPLAY=display)
    env.pop("PYGLET_HEADLESS", None)
    env.pop("PYOPENGL_PLATFORM", None)  # an earlier headless run in this process may have left it at egl
    r = subprocess.run([sys.executable, "-m", "tests._narrow_panel_probe", str(tmp_path)], cwd=ROOT, env=env,
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stdout + r.stderr
    probe = json.loads((tmp_path / "probe.json").read_text())
    assert probe["compare"] is True and probe["algorithm"] == "vector-symbol"  # the click turned it on
    counts = probe["counts"]
    assert counts["reference_only"] == 1 and counts["pairs"] == 1
    before, after = probe["before"], probe["after"]
    assert "candidate hull piece pairs: 1" in before
    assert "both touch" not in before  # no table while the comparison is off
    for cls, label in CLASS_LABELS.items():  # each row: the label, then the world's count
        k = after.index(label)
        assert after[k + 1] == str(counts[cls])
    assert "agree 0, disagree 1" in after
    assert "left[0] - right[0]: reference only, depth 400.000 mm" in after
    assert any("vector-symbol method counts touching as not colliding" in t for t in after)
    assert any(t.startswith("Response: SAT manifolds") for t in after)

    img_before = np.asarray(Image.open(tmp_path / "before.png").convert("RGB"))
    img_after = np.asarray(Image.open(tmp_path / "after.png").convert("RGB"))
    assert img_after.shape == (600, 800, 3)
    assert np.all(np.abs(img_after[300, 700].astype(int) - rgb(COLORS["background"])) <= 2)  # beside the panel
    panel = img_after[40:540, 10:550].reshape(-1, 3).astype(int)
    assert np.mean(np.all(np.abs(panel - rgb(COLORS["background"])) <= 2, axis=1)) < 0.2  # the panel covers it
    pink = OVERLAY_COLORS["reference_only"]
    assert count_color(img_after, pink, tol=30) > 50  # the table's class and the listed pair
    assert count_color(img_before, pink, tol=30) == 0


def test_the_overlay_outlines_the_disagreeing_pieces_and_links_the_touching_ones():
    bodies = [box_body("left", [0.5, 0.5, 0.5], (0, 0, 0)), box_body("right", [0.5, 0.5, 0.5], (0.6, 0, 0)),
              box_body("up", [0.5, 0.5, 0.5], (0.2, 0.99, 0.1))]
    session = Session(World(bodies, exact=False))
    session.set_narrow_phase("vector-symbol")
    session.set_narrow_compare(True)
    session.update(1 / 60)
    choice = session.world.narrow_choice
    kinds = sorted(d["kind"] for d in choice.disagreements)
    assert kinds == ["reference_only"]  # left-right (degenerate); the boxes 1 cm deep in "up" agree
    assert choice.counts["both"] == 2
    lines, colors, _, _ = session.overlays()
    pink = np.all(np.abs(colors - np.float32(OVERLAY_COLORS["reference_only"])) < 1e-6, axis=1)
    blue = np.all(np.abs(colors - np.float32(OVERLAY_COLORS["touching"])) < 1e-6, axis=1)
    assert pink.sum() == 2 * (12 + 12) + 2  # both boxes' 12 edges and the line between their centres
    assert blue.sum() == 2 * 2  # one line per touching pair
    np.testing.assert_allclose(lines[pink][-2:], [[0, 0, 0], [0.6, 0, 0]], atol=1e-6)
    session.set_narrow_compare(False)
    session.set_narrow_phase("sat")
    session.update(1 / 60)
    lines, colors, _, _ = session.overlays()
    assert not np.any(np.all(np.abs(colors - np.float32(OVERLAY_COLORS["touching"])) < 1e-6, axis=1))


def test_a_bad_choice_is_a_message_and_a_loaded_scene_keeps_the_choice():
    session = Session(World([box_body("a", [0.5, 0.5, 0.5], (0, 0, 0))]))
    session.set_narrow_phase("epa")
    assert session.world.narrow_choice.algorithm == "sat"
    assert "narrow phase: expected one of" in session.messages[-1][0]
    session.set_narrow_phase("gjk")
    session.set_narrow_response("gjk")
    other = World([box_body("b", [0.5, 0.5, 0.5], (0, 0, 0))])
    session._swap_scene({"result": (other, []), "path": "x.toml"})
    assert session.world is other
    assert other.narrow_choice.algorithm == "gjk" and other.manager.hull_response == "gjk"


SCENE = """
[scene]
name = "degenerate pair"

[[body]]
name = "left"
shape = "box"
size = [1.0, 1.0, 1.0]
position = [0.0, 0.5, 0.0]
motion = "kinematic"
color = [0.5, 0.5, 0.5]

[[body]]
name = "right"
shape = "box"
size = [1.0, 1.0, 1.0]
position = [0.6, 0.5, 0.0]
motion = "kinematic"
color = [0.5, 0.5, 0.5]
"""


def test_the_viewer_draws_the_disagreeing_pair_in_its_colour(tmp_path):
    """The whole viewer (headless, EGL), the command line's choice: two equal boxes offset along x
    (the vector-symbol method's degenerate case) are outlined in the reference-only colour."""
    from .test_viewer_window import run_app

    scene = tmp_path / "pair.toml"
    scene.write_text(SCENE)
    pink = OVERLAY_COLORS["reference_only"]
    report, img, _ = run_app(tmp_path, [], frames=3, extra=("--scene", str(scene), "--narrow-phase",
                                                            "vector-symbol", "--narrow-compare"))
    n = report["frames"][-1]["narrow_phase"]
    assert (n["reference_only"], n["answered"]) == (1, 1)
    assert n["disagreements"][0]["a"] == "left" and n["disagreements"][0]["depth"] == pytest.approx(0.4)
    assert count_color(img, pink, tol=30) > 100
    report, img, _ = run_app(tmp_path, [], frames=3, extra=("--scene", str(scene)))
    assert "narrow_phase" not in report["frames"][-1]
    assert count_color(img, pink, tol=30) == 0
