"""Kernels compiled before a person waits on them (app/warmup.py, Session.load_scene, the setup).

The coverage test runs in a fresh interpreter, so that the kernels other tests
compiled in this process cannot hide a kernel the warm-up misses; it loads the
kernels from the disk cache that the rest of the suite fills (nothing is
compiled twice). It drives every scene as a person would, with code of its own
(every key of the help table, a click and a drag on every body), not the
warm-up's.
"""

import io
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
from numba import njit

from app import _bootstrap
from app.progress import report
from app.scene.scene_file import scene_registry
from app.warmup import CompileWatch, StatusLine, warm_up_world

ROOT = Path(__file__).resolve().parent.parent


def run_python(code, timeout=900):
    env = dict(os.environ, PYTHONPATH=str(ROOT), OBBCOLLIDE_NO_BOOTSTRAP="1")
    r = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], cwd=ROOT, env=env, capture_output=True,
                       text=True, timeout=timeout)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    return json.loads(r.stdout.strip().splitlines()[-1])


COVERAGE = """
    import gc, json
    from numba.core.dispatcher import Dispatcher

    def compiled():
        # every (kernel, argument types) this process holds, compiled or loaded from the disk cache
        return {(f"{d.py_func.__module__}.{d.py_func.__qualname__}", str(s))
                for d in gc.get_objects() if isinstance(d, Dispatcher) for s in d.signatures}

    from app.warmup import compile_kernels
    compile_kernels()
    before = compiled()

    from app.scene.loader import default_scene
    from app.scene.scene_file import scene_registry
    from app.viewer.controls import BINDINGS
    from app.viewer.session import Session
    from app.world.world import World

    new = {}
    for name, path in [("default", None), *scene_registry().items()]:
        s = Session(default_scene() if path is None else World([]))
        if path is not None:
            s.load_scene(path, wait=True)
        s.camera.width, s.camera.height = 1280, 720
        s.frame_camera()

        def frames(n):
            for _ in range(n):
                s.update(1 / 60)
                s.overlays()
                s.hud_lines()

        frames(5)
        for body in list(s.world.bodies):  # click every body, drag it a little
            if body.unbounded:
                continue
            x, y = s.camera.project(body.world_center())
            s.mouse_press(x, y, "left")
            s.mouse_drag(x + 25, y + 10, 25, 10, "left")
            frames(1)
            s.mouse_release(x + 25, y + 10, "left")
        s.selected = next(k for k, b in enumerate(s.world.bodies) if not b.unbounded)
        keys = [key for key, *_ in BINDINGS if key not in ("F5", "F6", "P", "ESCAPE", "SPACE")]
        for k, key in enumerate(keys):  # every key of the help table but those leaving the scene
            s.key(key)
            if k % 3 == 2:
                frames(1)
        frames(5)
        now = compiled()
        new[name] = sorted({k for k, _ in now - before if k.split(".")[0] in ("app", "obbcollide", "obbcollide_app")})
        before = now
    print(json.dumps(new))
"""


def test_after_the_setup_compilation_no_scene_compiles_a_kernel():
    new = run_python(COVERAGE)
    assert set(new) == {"default", *scene_registry()}
    assert new == {name: [] for name in new}


FIRST_FRAMES = """
    import gc, json
    from numba.core.dispatcher import Dispatcher

    def compiled():
        return {(f"{d.py_func.__module__}.{d.py_func.__qualname__}", str(s))
                for d in gc.get_objects() if isinstance(d, Dispatcher) for s in d.signatures}

    from app.scene.scene_file import scene_registry
    from app.viewer.session import Session
    from app.world.world import World

    def project_kernels(since):
        return sorted({k for k, _ in compiled() - since if k.split(".")[0] in ("app", "obbcollide", "obbcollide_app")})

    from obbcollide.broad_phase import BROAD_PHASES

    new, drag, keys = {}, {}, {}
    for name, path in scene_registry().items():
        s = Session(World([]))
        s.camera.width, s.camera.height = 1280, 720
        s.load_scene(path, wait=True)  # loaded and warmed up in the loader's thread
        before = compiled()
        s.update(1 / 60)  # the first frame, drawn with every overlay
        for flag in s.flags:
            s.flags[flag] = True
        s.overlays()
        s.hud_lines()
        new[name] = project_kernels(before)
        # then a person grabs a body that rests on something (the last such one: the warm-up held the first)
        for _ in range(30):
            s.update(1 / 60)
        touching = {int(i) for pair in s.world.candidate_pairs for i in pair}
        held = [k for k, b in enumerate(s.world.bodies) if b.moves and k in touching]
        before = compiled()
        grabbed = False
        for k in held[::-1]:  # (a body hidden behind another is not picked where its centre projects)
            x, y = s.camera.project(s.world.bodies[k].world_center())
            s.mouse_press(x, y, "left")
            if s.selected == k:
                s.mouse_drag(x + 20, y + 5, 20, 5, "left")  # (the mouse joint takes hold)
                grabbed = s.world.dynamics.grab is not None
                if grabbed:
                    s.update(1 / 60)
            s.mouse_release(x + 20, y + 5, "left")
            if grabbed:
                break
        drag[name] = (grabbed, project_kernels(before))
        # then the keys a person tries early: Z through every broad phase, J for other partners
        before = compiled()
        for _ in BROAD_PHASES:
            s.key("Z")
            s.update(1 / 60)
            s.overlays()
        for _ in range(2):
            s.key("J")
            s.update(1 / 60)
            s.overlays()
        keys[name] = project_kernels(before)
    print(json.dumps({"first": new, "drag": drag, "keys": keys}))
"""


@pytest.fixture(scope="module")
def first_frames():
    """For every example scene, loaded in a fresh interpreter: the project kernels its first frame
    loaded or compiled, and those the first frame of a drag loaded or compiled (with whether a
    resting body was held)."""
    return run_python(FIRST_FRAMES, timeout=600)


def test_a_loaded_scene_draws_its_first_frame_with_no_kernel_to_load_or_compile(first_frames):
    # With a warm cache (here) the warm-up ran just this frame on a copy, so not even a kernel
    # load from the disk is left for the window's thread; on a cold one it compiled them all.
    new = first_frames["first"]
    assert set(new) == set(scene_registry())
    assert new == {name: [] for name in new}


def test_the_first_drag_of_a_loaded_scene_has_no_kernel_to_load_or_compile(first_frames):
    # A step with the mouse joint solves through kernels a step without one does not call; before
    # the warm-up held a body, the first drag of a session loaded them from the disk cache in the
    # window's thread (the stacks scene: a 113 ms frame, the next ones 7 ms).
    drag = first_frames["drag"]
    assert set(drag) == set(scene_registry())
    assert sum(grabbed for grabbed, _ in drag.values()) >= len(drag) // 2  # (most scenes had a body to hold)
    assert {name: kernels for name, (_, kernels) in drag.items()} == {name: [] for name in drag}


def test_the_broad_phase_and_partner_keys_have_no_kernel_to_load_or_compile(first_frames):
    # Z switches the broad phase (brute force, sweep and prune, grid, octree: each its own kernels)
    # and J the separating-axis overlay's partner; each first press loaded 2-3 kernels from the
    # disk cache in the window's thread (32-95 ms) before the warm-up pressed them on its copy.
    keys = first_frames["keys"]
    assert set(keys) == set(scene_registry())
    assert keys == {name: [] for name in keys}


def test_compile_watch_counts_and_names_only_project_kernels():
    def add(x):
        return x + 1

    def mul(x):
        return x * 3

    add.__module__ = "app.tests_only"  # a kernel of the project's, as numba sees it
    ours, theirs = njit(add), njit(mul)
    seen = []
    with CompileWatch(seen.append) as watch:
        assert ours(1) == 2 and ours(1.5) == 2.5  # two argument types: two compilations
        assert theirs(2) == 6
        ours(3)  # compiled already: nothing
    assert watch.kernels == ["app.tests_only.test_compile_watch_counts_and_names_only_project_kernels.<locals>.add"] * 2
    assert watch.count == 2 and watch.seconds > 0
    assert seen == [f"compiling kernels: {n} ({watch.kernels[0]})" for n in (1, 2)]
    ours(4.5 + 1j)  # after the watch: not counted
    assert watch.count == 2


def test_warm_up_leaves_the_world_as_it_was():
    from app.scene.loader import load_scene

    world = load_scene(scene_registry()["primitives"])[0]
    start = np.array([b.pose for b in world.bodies])
    warm_up_world(world, seconds=0.1)
    assert world.time == 0.0 and not world.manifolds
    assert np.array_equal(np.array([b.pose for b in world.bodies]), start)


def test_a_failing_warm_up_keeps_the_scene(monkeypatch, caplog):
    import app.warmup as warmup
    from app.scene.loader import load_scene

    def broken(*args, **kwargs):
        raise RuntimeError("boom")

    monkeypatch.setattr(warmup, "exercise", broken)
    world = load_scene(scene_registry()["primitives"])[0]
    assert warm_up_world(world) == 0
    assert "boom" in caplog.text


RESPONSIVE = """
    import json, threading, time
    from numba.core.compiler_lock import global_compiler_lock

    from app.scene.scene_file import scene_registry
    from app.viewer.session import Session
    from app.world.world import World

    s = Session(World([]))  # as `--scene` starts: an empty world until the scene is in
    held, stop = threading.Event(), threading.Event()

    def compiling():  # numba compiling a kernel in another thread holds this lock all along
        with global_compiler_lock:
            held.set()
            stop.wait(60)

    threading.Thread(target=compiling, daemon=True).start()
    held.wait()
    s.load_scene(scene_registry()["stacks"])  # its loader and warm-up wait on the lock: a long compilation
    longest, frames, hud = 0.0, 0, []
    end = time.perf_counter() + 1.5
    while time.perf_counter() < end:
        t = time.perf_counter()
        s.update(1 / 60)
        s.overlays()
        hud = s.hud_lines()
        longest = max(longest, time.perf_counter() - t)
        frames += 1
        time.sleep(1 / 120)
    still_loading, bodies_while = s.loading is not None, len(s.world.bodies)
    stop.set()
    s._loading["thread"].join(120)
    s.update(1 / 60)
    print(json.dumps({"longest": longest, "frames": frames, "still_loading": still_loading,
                      "bodies_while": bodies_while, "hud": hud, "bodies_after": len(s.world.bodies)}))
"""


def test_frames_go_on_while_the_scene_compiles_in_the_background():
    r = run_python(RESPONSIVE, timeout=300)
    assert r["still_loading"] and r["bodies_while"] == 0
    assert r["frames"] >= 50 and r["longest"] < 0.25, r  # never waits on the compiler
    assert any("loading stacks.toml" in line for line in r["hud"])
    assert r["bodies_after"] == 26


def test_status_line_redraws_on_a_terminal_and_writes_few_lines_elsewhere():
    class Tty(io.StringIO):
        def isatty(self):
            return True

    clock = iter(np.arange(0.0, 100.0, 0.5)).__next__
    tty = Tty()
    line = StatusLine("[setup] ", stream=tty, clock=clock)
    report(line, "compiling kernels: 1 (app.a)", 0.0)
    report(line, "compiling kernels: 2 (app.bb)", 0.5)
    report(line, "compiled 2 kernels in 3 s", 1.0)
    line.close()
    assert tty.getvalue() == ("\r[setup] compiling kernels: 1 (app.a)  0 s\r[setup] compiling kernels: 2 (app.bb)  0 s"
                              "\r[setup] compiled 2 kernels in 3 s  1 s    \n")  # wiped to the end of the longer line
    log = io.StringIO()
    line = StatusLine("[setup] ", stream=log, clock=clock, every=10.0)
    for k in range(30):  # 15 s of kernels
        report(line, f"compiling kernels: {k + 1} (app.k{k})", None)
    report(line, "compiled 30 kernels in 15 s", 1.0)
    line.close()
    assert log.getvalue().splitlines() == ["[setup] compiling kernels: 1 (app.k0)  0 s",
                                           "[setup] compiling kernels: 21 (app.k20)  10 s",
                                           "[setup] compiled 30 kernels in 15 s  15 s"]


def fake_tree(tmp_path, kernels):
    for package in ("collision", "app"):
        (tmp_path / package / "__pycache__").mkdir(parents=True)
        (tmp_path / package / "mod.py").write_text("x = 1\n")
        if kernels:
            (tmp_path / package / "__pycache__" / "mod.f-1.py311.nbi").write_bytes(b"index")
    return tmp_path / "compiled"


def test_setup_compiles_once_per_change_of_the_sources(tmp_path, monkeypatch, capsys):
    import app.warmup as warmup

    runs = []

    class Done:
        count = 7

    def tour(progress=None):
        progress("compiling kernels: 1 (app.mod.f)", 0.0)
        runs.append(1)
        return Done()

    monkeypatch.setattr(warmup, "compile_kernels", tour)
    monkeypatch.delenv("OBBCOLLIDE_NO_BOOTSTRAP", raising=False)
    stamp = fake_tree(tmp_path, kernels=True)
    assert _bootstrap.ensure_kernels(tmp_path, stamp) == 7 and len(runs) == 1  # first run: no stamp
    err = capsys.readouterr().err
    assert "[setup] compiling the kernels" in err and "[setup] compiling kernels: 1 (app.mod.f)" in err
    assert _bootstrap.ensure_kernels(tmp_path, stamp) == 0 and len(runs) == 1  # nothing changed
    assert capsys.readouterr().err == ""
    (tmp_path / "app" / "mod.py").write_text("x = 2\n")  # a source changed
    assert _bootstrap.ensure_kernels(tmp_path, stamp) == 7 and len(runs) == 2
    for path in tmp_path.rglob("*.nbi"):  # the cache emptied by hand
        path.unlink()
    assert _bootstrap.ensure_kernels(tmp_path, stamp) == 7 and len(runs) == 3
    monkeypatch.setenv("OBBCOLLIDE_NO_BOOTSTRAP", "1")
    (tmp_path / "app" / "mod.py").write_text("x = 3\n")
    assert _bootstrap.ensure_kernels(tmp_path, stamp) == 0 and len(runs) == 3


@pytest.mark.parametrize("argv, prepared", [(["--list-scenes"], False), (["--demo"], False),
                                            (["--size", "bad"], False), (["--bench", "0"], True)])
def test_commands_that_open_no_viewer_compile_nothing(argv, prepared):
    from app.__main__ import main

    calls = []
    main(argv, prepare=lambda: calls.append(1))
    assert bool(calls) == prepared
