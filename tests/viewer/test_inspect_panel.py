"""The pair-inspection sections and overlays in a real window (Xvfb, Mesa): real pixels, real clicks.

Each test runs ``python -m tests._inspect_probe`` in a child process (a minimal Dear ImGui
frame with the sections of app/viewer/panel_inspect.py over the viewer's scene), then checks
the state it reports after clicks on named widgets and the colours in its screenshot: the
overlays' colours in the scene when they are on and not when off, the per-depth bar chart in
the panel.
"""

import json
import os
import subprocess
import sys

import numpy as np
from PIL import Image

from tests.viewer.test_viewer_window import display  # noqa: F401 (the Xvfb fixture)

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
W, H = 1280, 720
PANEL_W = 440


def probe(tmp_path, display, **cfg):  # noqa: F811
    cfg.setdefault("size", [W, H])
    cfg.setdefault("panel_width", PANEL_W)
    name = f"probe{len(list(tmp_path.iterdir()))}"
    path = tmp_path / f"{name}.json"
    path.write_text(json.dumps(cfg))
    out = tmp_path / name
    env = dict(os.environ, OBBCOLLIDE_NO_BOOTSTRAP="1", DISPLAY=display)
    env.pop("PYGLET_HEADLESS", None)
    env.pop("PYOPENGL_PLATFORM", None)  # an earlier headless run in this process may have left it at egl
    r = subprocess.run([sys.executable, "-m", "tests._inspect_probe", str(path), str(out)], cwd=ROOT, env=env,
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stdout + r.stderr
    report = json.loads((out / "probe.json").read_text())
    img = np.asarray(Image.open(out / "shot.png").convert("RGB"))
    return report, img


def count(img, color, tol=12):
    target = np.array([round(255 * c) for c in color])
    return int(np.all(np.abs(img.astype(int) - target) <= tol, axis=2).sum())


QUIET = {"boxes": False, "triangles": False, "segments": False, "contacts": False, "manifolds": False}


def test_overlays_in_the_scene_on_and_off(tmp_path, display):  # noqa: F811
    from app.viewer.inspect import COLORS as C
    from app.viewer.session import COLORS

    base = dict(scene="default", select="gear", partner="torus_knot", panel=False, hud=False, frames=3)
    off, img_off = probe(tmp_path, display, flags=dict(QUIET, traversal=False, axis=False, gjk=False), **base)
    on, img_on = probe(tmp_path, display, flags=dict(QUIET, traversal=True, axis=True, gjk=False), **base)
    assert off["partner"] == on["partner"] == "torus_knot"
    for color in (COLORS["visited"], COLORS["pruned"], C["feature"], C["interval_a"], C["interval_b"]):
        assert count(img_off, color) == 0, color
    assert count(img_on, COLORS["visited"]) > 500
    assert count(img_on, COLORS["pruned"]) > 500
    assert count(img_on, C["feature"]) > 50  # the node pair's boxes (the hulls are too large to tabulate)
    assert count(img_on, C["interval_a"]) > 20 and count(img_on, C["interval_b"]) > 20
    # GJK on its own: the pieces' outlines, the simplex's support pairs.
    _, img_gjk = probe(tmp_path, display, flags=dict(QUIET, traversal=False, axis=False, gjk=True), **base)
    assert count(img_gjk, C["simplex"], tol=6) > 20 and count(img_gjk, C["interval_b"]) > 200
    assert count(img_gjk, COLORS["visited"]) == 0


def test_clicks_on_the_sections_change_the_state(tmp_path, display):  # noqa: F811
    report, img = probe(
        tmp_path, display, scene="primitives", select="crate", partner="ground", hud=False, frames=17,
        flags=dict(QUIET, traversal=False, axis=False, gjk=False), sections=["Traversal", "Separating axis"],
        clicks=[[1, "overlay:traversal"], [4, "trav:|<"], [7, "axis:nodes"], [10, "trav:>"], [13, "overlay:axis"]])
    assert report["clicked"] == ["overlay:traversal", "trav:|<", "axis:nodes", "trav:>", "overlay:axis"]
    assert report["flags"]["traversal"] and report["flags"]["axis"]
    assert report["trav_step"] == 1  # first, then next
    assert report["axis_source"] == "nodes"
    assert any(line.startswith("traversal:") and "(step 2 of" in line for line in report["pair_lines"])
    # The panel is on screen: its bar chart's colours on the left, the overlays' on the right.
    from app.viewer.session import COLORS

    from app.viewer.panel_inspect import PRUNED, VISITED
    left, right = img[:, :PANEL_W], img[:, PANEL_W + 5:]
    assert count(left, VISITED[:3]) > 100 and count(left, PRUNED[:3]) > 30
    assert report["box_tests"] > 2
    assert count(right, COLORS["visited"]) > 0  # the first two node pairs
    report, _ = probe(tmp_path, display, scene="primitives", select="crate", partner="can", hud=False, frames=11,
                      flags=dict(QUIET, gjk=True), sections=["Pair", "GJK and vector symbols"],
                      clicks=[[1, "gjk:|<"], [4, "gjk:>"], [7, "pair:swap"]])
    assert report["gjk_steps"] > 2
    assert report["gjk_step"] == report["gjk_steps"] - 1  # a new pair (swapped) starts at the answer
    assert (report["selected"], report["partner"]) == ("can", "crate")  # swapped


def test_ctrl_click_and_keys_in_the_window(tmp_path, display):  # noqa: F811
    """Ctrl+click on a body in the window makes it the partner; the keys step the views."""
    report, _ = probe(tmp_path, display, scene="primitives", select="crate", panel=False, frames=6,
                      flags=dict(QUIET), camera={"target": [-0.1, 0.45, 0.3], "distance": 3.0, "yaw": 1.45, "pitch": 0.3},
                      ctrl_clicks=[[1, "can"]], keys=[[2, "O", False], [3, "COMMA", True], [4, "PERIOD", False]])
    assert (report["selected"], report["partner"]) == ("crate", "can")
    assert report["flags"]["traversal"] and report["trav_step"] == min(1, report["box_tests"] - 1)
    assert any("pair: crate and can" in m for m in report["messages"])


def test_a_pair_with_a_mesh_that_collides_as_its_triangles(tmp_path, display):  # noqa: F811
    """The knot against the bowl (which collides as its exact surface): the panel's pair and axis
    sections draw with a triangle as the bowl's piece, and the scene shows both outlines."""
    from app.viewer.inspect import COLORS as C

    report, img = probe(tmp_path, display, scene="bowl_pile", select="knot", partner="bowl", hud=False, frames=4,
                        flags=dict(QUIET, traversal=False, axis=True, gjk=False),
                        sections=["Pair", "Separating axis", "GJK and vector symbols"])
    assert (report["selected"], report["partner"]) == ("knot", "bowl")
    assert any(line.startswith("axis (the pieces):") for line in report["pair_lines"])
    assert report["axis_labels"][0].startswith("piece ") and report["axis_labels"][1].startswith("triangle ")
    assert not any("error" in m.lower() or "failed" in m.lower() for m in report["messages"])
    right = img[:, PANEL_W + 5:]
    assert count(right, C["interval_a"]) > 50 and count(right, C["interval_b"]) > 5
