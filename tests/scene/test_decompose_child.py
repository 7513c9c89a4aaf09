"""Convex decomposition in a child process (app/scene/decompose_child.py).

- The pieces a child writes into the cache are the pieces the same settings
  give in this process with no cache (the project's gear, V-HACD: same number
  of pieces, same hull vertices, 1e-12).
- While a loader thread decomposes the gear, this process's main thread keeps
  running: its longest stall is under 1.5 s (in the thread itself V-HACD held
  the GIL and stalled it for 4-8 s on this machine).
- A convex mesh and a decomposer this process cannot import start no child
  (the outcome is this process's own: an error, or whatever fallback it has); a
  run without a cache decomposes in a child too (into a temporary folder), so a
  crash cannot reach this process; a child that cannot start leaves the work to
  this process, with the same pieces. (A child that crashes:
  tests/test_hostile_input.py.)
"""

import os
import subprocess
import sys
import threading
import time

import numpy as np
import pytest
import trimesh

from app.scene import decompose_child, pieces
from app.scene.mesh_io import load_mesh
from app.scene.pieces import DecomposeSettings

GEAR = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "assets", "meshes", "gear.ply")


FAST = DecomposeSettings(max_pieces=4, resolution=20_000)  # a second or two of V-HACD


def gear():
    m = load_mesh(GEAR)
    return np.asarray(m.vertices, float), np.asarray(m.faces, np.int64)


def same_pieces(a, b):
    assert len(a) == len(b)
    for ha, hb in zip(a.hulls, b.hulls):
        np.testing.assert_allclose(np.sort(ha.vertices, axis=0), np.sort(hb.vertices, axis=0), atol=1e-12)


def no_child(monkeypatch):
    def refuse(*args, **kwargs):
        raise AssertionError("a child process was started")

    monkeypatch.setattr(subprocess, "Popen", refuse)


def test_the_child_writes_the_pieces_this_process_would_make(tmp_path):
    v, f = gear()
    settings = FAST
    assert not pieces.is_convex(v, f)
    got = decompose_child.convex_pieces(v, f, settings, cache=str(tmp_path))
    assert got.cached  # read back from the entry the child wrote
    same_pieces(got, pieces.convex_pieces(v, f, settings, cache=False))


def test_the_main_thread_keeps_running_while_a_thread_decomposes(tmp_path):
    v, f = gear()
    done = {}
    worker = threading.Thread(target=lambda: done.update(p=decompose_child.convex_pieces(
        v, f, DecomposeSettings(), cache=str(tmp_path))), daemon=True)
    worker.start()
    stalls = []
    while worker.is_alive():
        t = time.perf_counter()
        time.sleep(0.01)
        stalls.append(time.perf_counter() - t)
    assert done["p"] is not None and len(done["p"]) > 1
    assert len(stalls) > 20 and max(stalls) < 1.5, f"longest stall {max(stalls):.2f} s"


def test_a_convex_mesh_starts_no_child(tmp_path, monkeypatch):
    no_child(monkeypatch)
    box = trimesh.creation.box(extents=(1.0, 2.0, 3.0))
    p = decompose_child.convex_pieces(box.vertices, box.faces, DecomposeSettings(), cache=str(tmp_path))
    assert len(p) == 1 and p.method == "hull"


def test_no_cache_decomposes_in_a_child_too(monkeypatch):
    started = []
    real = subprocess.Popen

    def spy(*args, **kwargs):
        started.append(args[0])
        return real(*args, **kwargs)

    monkeypatch.setattr(subprocess, "Popen", spy)
    v, f = gear()
    got = decompose_child.convex_pieces(v, f, FAST, cache=False)
    assert len(started) == 1 and "app.scene.decompose_child" in started[0]
    assert not got.cached
    monkeypatch.setattr(subprocess, "Popen", real)
    same_pieces(got, pieces.convex_pieces(v, f, FAST, cache=False))


def outcome(run):
    try:
        return run()
    except Exception as exc:  # noqa: BLE001 - the outcome compared is the error's type and text
        return exc


def test_a_decomposer_this_process_cannot_import_starts_no_child(tmp_path, monkeypatch):
    """Whatever this process does without the decomposer (an error, or a fallback), the same happens."""
    no_child(monkeypatch)
    monkeypatch.setitem(sys.modules, "vhacdx", None)  # "import vhacdx" raises ImportError
    v, f = gear()
    expected = outcome(lambda: pieces.convex_pieces(v, f, FAST, cache=False))
    got = outcome(lambda: decompose_child.convex_pieces(v, f, FAST, cache=str(tmp_path)))
    if isinstance(expected, Exception):
        assert type(got) is type(expected) and str(got) == str(expected)
    else:
        same_pieces(got, expected)


def test_a_child_that_cannot_start_leaves_the_work_here(tmp_path, monkeypatch):
    monkeypatch.setattr(sys, "executable", str(tmp_path / "no-such-python"))
    v, f = gear()
    settings = FAST
    got = decompose_child.convex_pieces(v, f, settings, cache=str(tmp_path / "cache"))
    assert not got.cached
    same_pieces(got, pieces.convex_pieces(v, f, settings, cache=False))
