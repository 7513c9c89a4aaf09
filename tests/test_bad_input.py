"""Bad input never ends the viewer: each kind gives a message naming the file and the
problem, the rest of the scene stays, and a frame still renders.

Every test runs the real program headless (``python -m app --headless`` through EGL, as
tests/viewer/test_viewer_window.py does) in a child process on a small scene of three static
bodies in colours nothing else on screen has (blue, green, purple), adds one bad input,
and checks: the exit status is 0; the message is in the report and on stderr, naming the
file and the problem; every body of the scene is still there; and the screenshot shows
them: for each of the three colours, the pixels of that colour cover the same region as
in a run without the bad input (intersection over union >= 0.95; the HUD's text, where
the messages differ, is white or grey and never one of these colours).

The bad inputs: a mesh with coordinates of 1e300 (added with --mesh, and dropped on the
window), one with NaN coordinates, a --scripted file with an unknown key name, an unknown
field and a wrong type (the good actions still run), a script that is not JSON or not a
list, a scene whose V-HACD body cannot be decomposed because ``vhacdx`` cannot be
imported (``sys.modules["vhacdx"] = None`` in the child makes ``import vhacdx`` raise
ModuleNotFoundError, as on a machine without it), and a mesh above the triangle limit
(lowered in the child, so that the test needs no 5M-triangle file). Last, a script handed
straight to ``run_frames`` (not read from a file) has its bad actions skipped by the window.
"""

import json
import os
import subprocess
import sys

import numpy as np
import pytest
import trimesh
from PIL import Image

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
W, H = 960, 600
COLORS = {"blue": (0.15, 0.35, 0.95), "green": (0.25, 0.85, 0.2), "purple": (0.6, 0.25, 0.9)}
SCENE = f"""# three static bodies; the purple one is a mesh cut by V-HACD
[scene]
name = "bad input"

[[body]]
name = "ground"
shape = "plane"
size = [3.0, 3.0]
motion = "static"
color = [0.5, 0.5, 0.5]

[[body]]
name = "blue box"
shape = "box"
size = [0.6, 0.6, 0.6]
position = [-0.75, 0.3, 0.2]
motion = "static"
color = {list(COLORS["blue"])}

[[body]]
name = "green ball"
shape = "sphere"
radius = 0.3
position = [0.75, 0.3, 0.2]
motion = "static"
color = {list(COLORS["green"])}

[[body]]
name = "purple mesh"
mesh = "cube.ply"
position = [0.0, 0.25, -0.6]
motion = "static"
color = {list(COLORS["purple"])}
[body.decompose]
method = "vhacd"
max_pieces = 1
resolution = 1000
"""
NAMES = ["ground", "blue box", "green ball", "purple mesh"]


def masks(img):
    """Pixels of each body colour, by hue (shading scales a colour, keeping its ratios)."""
    r, g, b = (img[..., k].astype(float) for k in range(3))
    return {"blue": (b > 70) & (b > 1.6 * r) & (b > 1.4 * g),
            "green": (g > 70) & (g > 1.5 * r) & (g > 1.5 * b),
            "purple": (b > 70) & (r > 1.5 * g) & (b > 1.5 * g) & (b > 1.15 * r)}


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    d = tmp_path_factory.mktemp("bad_input")
    trimesh.creation.box(extents=(0.5, 0.5, 0.5)).export(d / "cube.ply")
    (d / "scene.toml").write_text(SCENE)
    (d / "cache").mkdir()
    return d


def run(folder, name, args=(), prelude="", script=None, frames=4, cache=None, scene=None):
    """Run the app on the scene plus ``args``; returns (report, screenshot (H, W, 3), stderr).
    ``cache``: the decomposition cache folder (default: one the module's runs share);
    ``scene``: another scene file (default: the module's)."""
    out = folder / name
    out.mkdir()
    shot, rep = out / "shot.png", out / "report.json"
    argv = ["--scene", str(scene or folder / "scene.toml"), "--headless", "--frames", str(frames), "--size", f"{W}x{H}",
            "--screenshot", str(shot), "--report", str(rep), *map(str, args)]
    if script is not None:
        path = out / "script.json"
        path.write_text(script if isinstance(script, str) else json.dumps(script))
        argv += ["--scripted", str(path)]
    code = f"import sys\n{prelude}\nfrom app.__main__ import main\nsys.exit(main({argv!r}))\n"
    env = dict(os.environ, OBBCOLLIDE_NO_BOOTSTRAP="1", OBBCOLLIDE_CACHE=str(cache or folder / "cache"),
               OBBCOLLIDE_DATA=str(folder / "data"))
    env.pop("DISPLAY", None)
    r = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stdout + r.stderr
    return json.loads(rep.read_text()), np.asarray(Image.open(shot).convert("RGB")), r.stderr


@pytest.fixture(scope="module")
def reference(folder):
    """The scene without bad input: its bodies and the pixels of each colour."""
    try:
        report, img, err = run(folder, "reference")
    except AssertionError as exc:
        if "EGL" in str(exc) or "libEGL" in str(exc):
            pytest.skip(f"EGL is not available here: {str(exc)[-200:]}")
        raise
    assert [b["name"] for b in report["bodies"]] == NAMES
    m = masks(img)
    for colour, mask in m.items():
        assert mask.sum() > 800, f"the {colour} body is not on screen ({mask.sum()} pixels)"
    return m


def check_frame(report, img, reference, names=NAMES):
    """Every body of the scene is still there, and the frame shows them as without the bad input."""
    assert [b["name"] for b in report["bodies"]][:len(names)] == names
    # Below the HUD's panel only: it is translucent and grows by a line for each message, so the
    # tops of the bodies may lie under it in one run and not in the other.
    top = int(0.45 * img.shape[0])
    for colour, mask in masks(img).items():
        want, mask = reference[colour][top:], mask[top:]
        iou = (mask & want).sum() / (mask | want).sum()
        assert iou >= 0.95, f"the {colour} body's pixels differ from the run without bad input (IoU {iou:.3f})"


def said(report, stderr, *parts):
    """The one message that holds every part (in the report's messages and on stderr)."""
    hits = [m for m in report["messages"] if all(p in m for p in parts)]
    assert hits, f"no message with {parts}: {report['messages']}"
    assert hits[0] in stderr
    return hits[0]


def write_obj(path, vertices, faces):
    path.write_text("".join(f"v {x!r} {y!r} {z!r}\n" for x, y, z in np.asarray(vertices, float).tolist())
                    + "".join(f"f {a + 1} {b + 1} {c + 1}\n" for a, b, c in np.asarray(faces).tolist()))
    return path


def test_a_mesh_with_huge_coordinates_is_refused(folder, reference):
    """1e300 squared is inf: before the bound, the OBB fit turned NaN and the renderer's grid
    crashed ("arange: cannot compute length"). Added with --mesh and dropped on the window."""
    box = trimesh.creation.box(extents=(1, 1, 1))
    huge = write_obj(folder / "huge.obj", box.vertices * 1e300, box.faces)
    report, img, err = run(folder, "huge", ["--mesh", huge], script=[{"frame": 1, "drop": [str(huge)]}])
    text = said(report, err, str(huge), "coordinates reach 5e+299", "1e+06")
    assert sum(str(huge) in m for m in report["messages"]) == 2  # --mesh and the drop, each refused
    assert text.startswith(f"{huge}: ")
    check_frame(report, img, reference)


def test_a_mesh_with_nan_coordinates_is_refused(folder, reference):
    box = trimesh.creation.box(extents=(1, 1, 1))
    v = np.array(box.vertices)
    v[3] = np.nan
    bad = write_obj(folder / "nan.obj", v, box.faces)
    report, img, err = run(folder, "nan", ["--mesh", bad])
    said(report, err, str(bad), "NaN or infinite coordinates")
    check_frame(report, img, reference)


def test_a_script_with_bad_actions_runs_the_good_ones(folder, reference):
    script = [{"frame": 1, "key": "TABB"},                        # 1: no such key
              {"frame": 1, "jump": 3},                            # 2: no such action
              {"frame": 1, "click": "here"},                      # 3: wrong type
              {"frame": 2, "press": [10, 10]}, {"frame": 2, "move": [0, 0]},
              {"frame": 2, "release": True},                      # 4-6: good (press, move, release)
              {"frame": 2, "key": "TAB"}]                         # 7: good: selects body 0
    report, img, err = run(folder, "script", script=script)
    path = str(folder / "script" / "script.json")
    said(report, err, path, "action #1", "unknown key name 'TABB'", "did you mean 'TAB'")
    said(report, err, path, "action #2", "unknown field 'jump'")
    said(report, err, path, "action #3", "'click'", "expected [x, y]")
    assert not any(f"action #{k}" in err for k in range(4, 8))
    assert report["selected"] == 0  # the good actions ran
    check_frame(report, img, reference)


@pytest.mark.parametrize("name, content, problem", [
    ("not-json", "{not json", "not valid JSON (line 1, column 2"),
    ("not-a-list", '{"frame": 1, "key": "B"}', "expected a JSON list of actions, got an object"),
    ("empty", "", "not valid JSON"),
])
def test_a_malformed_script_is_reported_and_the_run_goes_on(folder, reference, name, content, problem):
    report, img, err = run(folder, name, script=content)
    said(report, err, str(folder / name / "script.json"), problem, "running without it")
    check_frame(report, img, reference)


def test_a_missing_decomposer_falls_back_to_the_convex_hull(folder, reference):
    # an empty cache: with the pieces cached (as after the reference run) no decomposer is needed
    report, img, err = run(folder, "no-vhacd", prelude="sys.modules['vhacdx'] = None  # import vhacdx fails",
                           cache=folder / "empty-cache")
    said(report, err, str(folder / "scene.toml"), "body 'purple mesh'", "'vhacdx'", "not installed",
         "pip install vhacdx")
    check_frame(report, img, reference)


def test_a_mesh_above_the_triangle_limit_is_refused(folder, reference):
    """The limit lowered to 1000 in the child: a binary STL is refused from its header's count,
    an OBJ (no count in a header) after reading."""
    ball = trimesh.creation.icosphere(subdivisions=3)  # 1280 triangles
    stl, obj = folder / "many.stl", folder / "many.obj"
    ball.export(stl)
    write_obj(obj, ball.vertices, ball.faces)
    report, img, err = run(folder, "many", ["--mesh", stl, "--mesh", obj],
                           prelude="import app.scene.mesh_io\napp.scene.mesh_io.MAX_TRIANGLES = 1000")
    said(report, err, str(stl), "1,280 triangles (as its header says)", "more than the 1,000", "decimate")
    said(report, err, str(obj), "1,280 triangles", "more than the 1,000", "decimate")
    check_frame(report, img, reference)


def test_apply_action_skips_a_bad_action_given_directly(tmp_path):
    """run_frames called with a script that did not come through read_script (a test, a tool):
    the window's own check skips the bad action with a message, and the rest run."""
    code = """
import json, os, sys
os.environ["PYGLET_HEADLESS"] = "1"
os.environ.setdefault("PYOPENGL_PLATFORM", "egl")
import pyglet
pyglet.options["headless"] = True
from app.scene.loader import load_scene
from app.viewer.session import Session
from app.viewer.window import run_frames
world, _ = load_scene(sys.argv[1])
s = Session(world)
out = run_frames(s, 3, width=320, height=240,
                 script=[{"frame": 0, "key": "TABB"}, {"frame": 1, "key": "TAB"}, {"frame": 1, "kye": "B"}])
print(json.dumps({"messages": out["messages"], "selected": out["selected"]}))
"""
    trimesh.creation.box(extents=(0.5, 0.5, 0.5)).export(tmp_path / "cube.ply")
    scene = tmp_path / "s.toml"
    scene.write_text(SCENE.split("[body.decompose]")[0])
    env = dict(os.environ, OBBCOLLIDE_NO_BOOTSTRAP="1", OBBCOLLIDE_CACHE=str(tmp_path / "cache"))
    env.pop("DISPLAY", None)
    r = subprocess.run([sys.executable, "-c", code, str(scene)], cwd=ROOT, env=env, capture_output=True, text=True,
                       timeout=600)
    if r.returncode != 0 and "EGL" in r.stderr:
        pytest.skip(f"EGL is not available here: {r.stderr[-200:]}")
    assert r.returncode == 0, r.stderr
    got = json.loads(r.stdout.strip().splitlines()[-1])
    assert got["selected"] == 0  # TAB ran
    bad = [m for m in got["messages"] if m.startswith("scripted action")]
    assert len(bad) == 2
    assert "unknown key name 'TABB'" in bad[0] and "unknown field 'kye'" in bad[1]


HOSTILE_BODIES = """
[[body]]
name = "far away"
shape = "box"
size = [1.0, 1.0, 1.0]
position = [1e308, 0.0, 0.0]

[[body]]
name = "huge integer"
shape = "sphere"
radius = 0.2
density = """ + "9" * 400 + """

[[body]]
name = "thrown"
shape = "sphere"
radius = 0.2
velocity = [1e30, 0.0, 0.0]

[[body]]
name = "deep"
shape = "box"
size = """ + "[" * 5000 + "]" * 5000 + """
"""


def test_a_scene_with_hostile_bodies_loads_the_others(folder, reference):
    """Extreme coordinates, an integer too large for float64, a body thrown at 1e30 m/s and an
    array nested past the TOML parser: each body left out with its message, the scene's own
    bodies loaded and drawn as without them."""
    path = folder / "hostile.toml"
    path.write_text(SCENE + HOSTILE_BODIES)
    report, img, err = run(folder, "hostile", scene=path)
    said(report, err, str(path), "body 'far away'", "key 'position'", "1e+06")
    said(report, err, str(path), "body 'huge integer'", "key 'density'", "too large for a float64")
    said(report, err, str(path), "body 'thrown'", "key 'velocity'", "at most 10000")
    said(report, err, str(path), "body 'deep'", "nested too deeply")
    check_frame(report, img, reference)


def test_a_crashing_decomposer_is_a_message_and_the_viewer_goes_on(folder, reference, tmp_path):
    """A stand-in vhacdx that aborts its process, seen only by the decomposition's child (on
    its PYTHONPATH): the child dies of SIGABRT, the viewer says so and gives the purple mesh its
    convex hull (a cube: the same shape on screen)."""
    fake = tmp_path / "fake"
    fake.mkdir()
    (fake / "vhacdx.py").write_text("import os\n\ndef compute_vhacd(*args, **kwargs):\n    os.abort()\n")
    report, img, err = run(folder, "vhacd-crash", prelude=f"import os\nos.environ['PYTHONPATH'] = {str(fake)!r}",
                           cache=tmp_path / "cache")
    said(report, err, str(folder / "scene.toml"), "body 'purple mesh'", "vhacd crashed", "SIGABRT")
    check_frame(report, img, reference)
