"""The viewer's frame: its phases add up to it, the overlays' buffers are kept, the exact pass is gated.

- ``--bench`` (app/bench.py) runs headless (EGL) on a small scene in a subprocess; every
  frame's phases (app/viewer/frame_clock.py) must sum to its wall time, none negative, the
  frames' wall times must add up to the frame loop timed on a clock of its own, and the
  phases that this scene exercises must hold time.
- The overlay arrays (Session.overlays with a kept LineCollector) are the same as fresh ones,
  reuse their storage, and follow a body that moves (the boxes of bodies at rest are kept).
- The exact triangle pass runs only while an overlay draws its contacts.
- Through a real (headless) window: a frame with nothing changed uploads no overlay vertex,
  and the overlay colours are in the screenshot.
"""

import json
import os
import subprocess
import sys

import numpy as np
import pytest

from app.scene.loader import default_scene
from app.viewer.buffers import box_lines
from app.viewer.frame_clock import PHASE_KEYS, FrameClock
from app.viewer.session import COLORS, LineCollector, Session

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

BENCH = """
import io, json, os
os.environ["PYGLET_HEADLESS"] = "1"
os.environ.setdefault("PYOPENGL_PLATFORM", "egl")
import pyglet
pyglet.options["headless"] = True
from app.bench import run
text = io.StringIO()
res = run((6,), frames=8, warmup=2, width=320, height=240, out=text)
print(json.dumps({"text": text.getvalue(), "result": res[6]}))
"""


def _headless_env():
    env = dict(os.environ, OBBCOLLIDE_NO_BOOTSTRAP="1")
    env.pop("DISPLAY", None)
    return env


@pytest.fixture(scope="module")
def bench():
    r = subprocess.run([sys.executable, "-c", BENCH], cwd=ROOT, env=_headless_env(), capture_output=True,
                       text=True, timeout=600)
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-4000:]
    return json.loads(r.stdout.strip().splitlines()[-1])


def test_bench_phases_add_up_to_each_frame(bench):
    rows = bench["result"]["frames"]
    assert len(rows) == 8
    for row in rows:
        phases = row["phases"]
        assert set(phases) == set(PHASE_KEYS)
        assert min(phases.values()) >= 0.0, phases
        total = sum(phases.values())
        assert total == pytest.approx(row["wall"], rel=1e-6, abs=1e-6), (total, row["wall"])
        # the world's phases are the world's own numbers of that frame
        for k in ("update", "broad", "narrow"):
            assert phases[k] == pytest.approx(row[k], abs=1e-9)


def test_bench_frames_cover_the_frame_loop(bench):
    """The frames' wall times, end to end, are the loop's time on an independent clock (less only
    the recording of the last frame, which belongs to a frame that never came)."""
    res = bench["result"]
    gap = res["loop"] - res["walls"]
    assert 0.0 <= gap <= 0.002 + 0.01 * res["loop"], (res["loop"], res["walls"])


def test_bench_names_where_the_time_goes(bench):
    rows = bench["result"]["frames"]
    med = {k: float(np.median([r["phases"][k] for r in rows])) for k in PHASE_KEYS}
    # this scene moves, draws its overlays and the panel, and finds triangle contacts to draw
    for k in ("update", "broad", "narrow", "overlays", "draw", "panel", "flip", "events", "world", "record"):
        assert med[k] > 0.0, (k, med)
    assert all(r["phases"]["exact"] > 0.0 for r in rows)  # the default overlays draw the exact contacts
    assert med["idle"] == 0.0 and med["hud"] == 0.0  # no event loop here; the panel replaces the HUD
    text = bench["text"]
    header = text.splitlines()[1].split()
    for k in ("events", "update", "exact", "world", "overlay", "draw", "panel", "flip", "gc", "rest", "wall"):
        assert k in header
    line = text.splitlines()[2].split()
    rest_ms = float(line[header.index("rest")])
    wall_ms = float(line[header.index("wall")])
    assert abs(rest_ms) <= 0.02 * wall_ms, text


def test_clock_split_moves_parts_and_never_counts_the_collector_twice():
    import gc
    import time

    junk = [[k] for k in range(200_000)]  # something for the collector to walk
    clock = FrameClock()
    gc.disable()  # only the collections below
    try:
        clock.start()
        t0 = time.perf_counter()
        gc.collect()  # a collection inside a part measured elsewhere (as the world's phases are)
        part = time.perf_counter() - t0
        clock.lap("world")
        assert clock.times["gc"] > 0.0  # the lap gave the collection to gc ...
        clock.split("world", {"update": part})
        t = clock.times
        assert t["update"] == part  # ... and the part keeps it: gc gives it back
        assert t["gc"] >= 0.0 and t["world"] >= 0.0
        assert t["gc"] + t["world"] < 0.5 * part
        gc.collect()  # a collection in a lap with no part: the gc phase's
        clock.lap("draw")
        last = clock.finish("flip")
        assert last["gc"] > 0.0
        assert sum(last[k] for k in PHASE_KEYS) == pytest.approx(last["frame"], rel=1e-9, abs=1e-9)
    finally:
        gc.enable()
        clock.close()
    del junk


# -- the overlay arrays ----------------------------------------------------------------------


@pytest.fixture
def session():
    s = Session(default_scene())
    s.camera.width, s.camera.height = 800, 600
    s.frame_camera()
    s.update(0.0)
    return s


def test_kept_collector_gives_the_fresh_arrays_and_keeps_its_storage(session):
    kept = LineCollector(None)
    first = [a.copy() for a in session.overlays(out=kept)]
    storage = kept._lines.positions
    again = session.overlays(out=kept)
    fresh = session.overlays()
    for a, b, c in zip(first, again, fresh):
        np.testing.assert_array_equal(a, b)
        np.testing.assert_array_equal(a, c)
    assert len(first[0]) > 0 and len(first[2]) > 0
    assert kept._lines.positions is storage  # the same frame again: no new array


def test_collector_grows_and_keeps_what_it_holds():
    c = LineCollector(lambda p: np.ones(len(p)))
    pts = np.arange(3 * 3000, dtype=np.float32).reshape(-1, 3)
    c._add_lines(pts[:10], (1, 0, 0))
    c._add_lines(pts[10:], (0, 1, 0))  # past the first capacity
    lines, cols, _, _ = c.arrays()
    np.testing.assert_array_equal(lines, pts)
    assert (cols[:10] == (1, 0, 0)).all() and (cols[10:] == (0, 1, 0)).all()
    c.reset(lambda p: np.ones(len(p)))
    assert all(len(a) == 0 for a in c.arrays())


def test_boxes_follow_a_moved_body_and_stay_for_the_others(session):
    kept = LineCollector(None)
    session.overlays(out=kept)
    session.selected = 1
    session.key("UP", shift=True)  # body 1 moves; the others do not
    lines, colors, _, _ = session.overlays(out=kept)
    cyan = np.all(np.isclose(colors, COLORS["boxes"]), axis=1)
    expected = np.concatenate([box_lines(b.tree.centers[:1], b.tree.axes[:1], b.tree.half_extents[:1], b.pose)
                               for b in session.world.bodies if not b.unbounded])
    np.testing.assert_allclose(lines[cyan], expected, atol=1e-5)


# -- the exact triangle pass -----------------------------------------------------------------


def test_exact_pass_runs_only_while_an_overlay_draws_it(session):
    w = session.world
    assert w.exact and w.contacts and w.stats["exact"] > 0.0
    for name in Session.EXACT_OVERLAYS:
        session.flags[name] = False
    session.update(0.0)
    assert not w.exact and w.contacts == [] and w.stats["exact"] == 0.0 and w.stats["tri_tests"] == 0
    assert any("exact triangles off" in line for line in session.hud_lines())
    session.flags["segments"] = True  # one of them is enough
    session.update(0.0)
    assert w.exact and w.contacts and w.stats["exact"] > 0.0


def test_a_world_built_without_the_exact_pass_stays_without():
    from app.world.world import World

    s = Session(World(default_scene().bodies, exact=False))
    s.update(0.0)
    assert s.flags["triangles"] and not s.world.exact and s.world.contacts == []


# -- through a window ------------------------------------------------------------------------

WINDOW = """
import json, os, sys
os.environ["PYGLET_HEADLESS"] = "1"
os.environ.setdefault("PYOPENGL_PLATFORM", "egl")
import numpy as np
import pyglet
pyglet.options["headless"] = True
from app.scene.loader import default_scene
from app.viewer.session import Session
from app.viewer.window import ViewerWindow
session = Session(default_scene())
session.world.paused = True
win = ViewerWindow(session, 480, 360, visible=False, panel=False)
uploads = []
for frame in range(4):
    win.dispatch_events()
    win.step_frame(1 / 60)
    uploads.append([win.renderer._lines.uploaded, win.renderer._lines.count,
                    win.renderer._tris.uploaded, win.renderer._tris.count])
    if frame == 3:
        pyglet.image.get_buffer_manager().get_color_buffer().save(sys.argv[1])
    win.flip()
session.selected = 0
session.key("UP", shift=True)  # one body moves: some vertices change
win.dispatch_events()
win.step_frame(1 / 60)
uploads.append([win.renderer._lines.uploaded, win.renderer._lines.count,
                win.renderer._tris.uploaded, win.renderer._tris.count])
win.flip()
print(json.dumps(uploads))
win.close()
"""


def test_unchanged_overlays_are_not_uploaded_and_still_drawn(tmp_path):
    from PIL import Image

    shot = tmp_path / "shot.png"
    r = subprocess.run([sys.executable, "-c", WINDOW, str(shot)], cwd=ROOT, env=_headless_env(),
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-4000:]
    uploads = json.loads(r.stdout.strip().splitlines()[-1])
    first, *still, moved = uploads
    assert first[0] == first[1] > 0 and first[2] == first[3] > 0  # the first frame sends everything
    # paused, the camera still: the frames after it send nothing (the markers' pixel sizes and
    # the boxes are those of the frame before)
    for lines_up, lines_n, tris_up, tris_n in still:
        assert (lines_up, tris_up) == (0, 0) and lines_n == first[1] and tris_n == first[3]
    assert 0 < moved[0] <= moved[1]
    img = np.asarray(Image.open(shot).convert("RGB")).astype(int)
    for name in ("boxes", "triangles"):
        want = np.array([round(255 * c) for c in COLORS[name]])
        assert (np.abs(img - want).max(axis=2) <= 40).sum() > 50, name
