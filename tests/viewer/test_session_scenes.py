"""Scenes in the viewer session (GL-free): background loading, save, switching.

The session loads a scene file in a worker thread while the old scene keeps
running, swaps it in on the next frame, reports every problem in the HUD and
on stderr, and saves the bodies where they are now so that reading the file
back gives the same poses.
"""

import os
import pathlib
import threading

import numpy as np
import pytest

from app.scene.loader import build_body, load_scene
from app.scene.scene_file import read_scene, scene_registry
from app.viewer.session import Session
from app.world.world import World

PRIMITIVES = scene_registry()["primitives"]


@pytest.fixture(autouse=True)
def private_cache(tmp_path, monkeypatch):
    """A private decomposition cache and data folder: no test writes into the user's home."""
    monkeypatch.setenv("OBBCOLLIDE_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("OBBCOLLIDE_DATA", str(tmp_path / "data"))


def poses(world):
    return np.array([b.pose for b in world.bodies])


def test_load_in_background_keeps_the_old_scene_until_ready(monkeypatch):
    import app.scene.loader as scene_mod

    gate = threading.Event()
    real = scene_mod.load_scene

    def slow(path, **kw):
        gate.wait(30)
        return real(path, **kw)

    monkeypatch.setattr(scene_mod, "load_scene", slow)
    old = World([])
    s = Session(old)
    assert s.load_scene(PRIMITIVES)
    s.update(1 / 60)  # a frame while loading: the old world, and the HUD says so
    assert s.world is old
    assert s.loading is not None and any("loading primitives.toml" in line for line in s.hud_lines())
    assert s.load_scene(PRIMITIVES) is False  # one load at a time
    gate.set()
    s._loading["thread"].join(30)
    s.update(1 / 60)
    assert s.world is not old and len(s.world.bodies) == 5
    assert s.loading is None and s.scene_path == PRIMITIVES
    assert any("loaded scene 'primitives'" in m[0] for m in s.messages)


def test_bad_scene_file_keeps_everything(tmp_path, caplog):
    bad = tmp_path / "bad.toml"
    bad.write_text("this is = = not toml")
    world = load_scene(PRIMITIVES)[0]
    s = Session(world)
    before = poses(world)
    s.load_scene(str(bad), wait=True)
    assert s.world is world and np.array_equal(poses(s.world), before)
    assert any(str(bad) in m[0] and m[2] for m in s.messages)
    assert str(bad) in caplog.text  # logged: the command line shows it on stderr


def test_scene_with_one_broken_body_loads_the_rest(tmp_path):
    junk = tmp_path / "junk.stl"
    junk.write_bytes(np.random.default_rng(1).bytes(3000))
    f = tmp_path / "s.toml"
    f.write_text('[[body]]\nname = "a"\nshape = "box"\nsize = [1, 1, 1]\n'
                 '[[body]]\nname = "b"\nmesh = "junk.stl"\n'
                 '[[body]]\nname = "c"\nshape = "sphere"\nradius = 0.5\nposition = [3, 0, 0]\n')
    s = Session(World([]))
    s.load_scene(str(f), wait=True)
    assert [b.name for b in s.world.bodies] == ["a", "c"]
    assert any("junk.stl" in m[0] and m[2] for m in s.messages)


def test_save_then_load_gives_the_same_poses(tmp_path):
    s = Session(World([]))
    s.load_scene(PRIMITIVES, wait=True)
    rng = np.random.default_rng(3)
    for k in range(1, len(s.world.bodies)):  # drive some bodies around
        s.selected = k
        for _ in range(3):
            s.key(rng.choice(["LEFT", "UP", "PAGEUP", "Q", "W", "E", "D"]), shift=bool(rng.integers(2)))
    s.world.advance(0.25)  # and let the spinning ones turn
    out = tmp_path / "saved.toml"
    assert s.save_scene(str(out)) == str(out)
    same_scene(out, s.world)


def same_scene(path, world):
    """The scene file at ``path`` loads back into ``world``'s bodies and poses, within the
    rounding of a saved state (SAVE_DECIMALS: 1e-6 position and degrees, 1e-5 per second)."""
    back, errors = load_scene(str(path))
    assert errors == []
    assert [b.name for b in back.bodies] == [b.name for b in world.bodies]
    got, want = poses(back), poses(world)
    np.testing.assert_allclose(got[:, :3, 3], want[:, :3, 3], rtol=0, atol=0.5e-6 + 1e-12)
    # three angles each off by at most 0.5e-6 degrees: a rotation of at most 1.5e-6 degrees
    np.testing.assert_allclose(got[:, :3, :3], want[:, :3, :3], rtol=0, atol=np.radians(1.5e-6))
    for a, b in zip(back.bodies, world.bodies):
        assert a.motion == b.motion
        np.testing.assert_allclose(a.spin, b.spin, rtol=0, atol=0.5e-5 + 1e-12)
        np.testing.assert_allclose(a.velocity, b.velocity, rtol=0, atol=0.5e-5 + 1e-12)
        np.testing.assert_allclose(a.color, b.color)
    return back


def test_save_keeps_a_dropped_mesh_in_its_own_frame(tmp_path):
    """A dropped mesh is re-centred for the viewer; the saved scene must put the
    file's own frame back, so the body lands where it was."""
    import trimesh

    path = tmp_path / "off_centre.ply"
    m = trimesh.creation.box(extents=(1, 2, 3))
    m.apply_translation((5.0, -2.0, 1.0))
    m.export(path)
    s = Session(World([]))
    assert s.add_mesh(str(path), motion="kinematic", wait=True)
    s.selected = 0
    s.key("W")
    s.key("UP")
    out = tmp_path / "saved.toml"
    s.save_scene(str(out))
    world, errors = load_scene(str(out))
    assert errors == []
    a, b = world.bodies[0], s.world.bodies[0]
    wa = a.vertices @ a.pose[:3, :3].T + a.pose[:3, 3]
    wb = b.vertices @ b.pose[:3, :3].T + b.pose[:3, 3]
    # the saved state is rounded (1e-6 units and degrees): vertices within 6 units of the file's origin
    # move by at most 0.5e-6 * sqrt(3) + 6 * radians(1.5e-6)
    np.testing.assert_allclose(np.sort(wa, axis=0), np.sort(wb, axis=0), rtol=0, atol=1e-6)


def test_the_same_file_added_twice_saves_and_reads_back_whole(tmp_path):
    """Two bodies from one file get distinct names ("cup.stl", "cup.stl (2)"), so the saved
    scene reads back with both (a scene file refuses a repeated name: one body was lost)."""
    import trimesh

    path = tmp_path / "cup.stl"
    trimesh.creation.cylinder(radius=0.3, height=0.5).export(path)
    s = Session(World([]))
    assert s.add_mesh(str(path), motion="dynamic", wait=True)
    assert s.add_mesh(str(path), motion="dynamic", wait=True)
    names = [b.name for b in s.world.bodies if b.name.startswith("cup")]
    assert names == ["cup.stl", "cup.stl (2)"]
    out = tmp_path / "saved.toml"
    s.save_scene(str(out))
    world, errors = load_scene(str(out))
    assert errors == []
    assert [b.name for b in world.bodies] == [b.name for b in s.world.bodies]
    # A session whose bodies share a name anyway (renamed by hand) still saves a readable file.
    s.world.bodies[-1].name = "cup.stl"
    s.save_scene(str(out))
    world, errors = load_scene(str(out))
    assert errors == [] and len(world.bodies) == len(s.world.bodies)


def test_thrown_balls_are_saved_as_spheres(tmp_path):
    """A ball thrown with L is in the saved scene, a sphere primitive of its radius where it is now."""
    s = Session(World([]))
    s.load_scene(scene_registry()["primitives"], wait=True)
    s.frame_camera()
    s.key("L")
    s.key("L")
    for _ in range(5):
        s.update(1 / 60)
    balls = list(s._thrown)
    assert [b.name for b in balls] == ["ball 1", "ball 2"] and all(b in s.world.bodies for b in balls)
    out = tmp_path / "saved.toml"
    assert s.save_scene(str(out)) == str(out)
    assert not any("skipped" in m[0] for m in s.messages)
    world, errors = load_scene(str(out))
    assert errors == [] and len(world.bodies) == len(s.world.bodies)
    for b in balls:
        (again,) = [w for w in world.bodies if w.name == b.name]
        assert type(again.shapes[0]).__name__ == "Sphere"
        assert again.shapes[0].radius == pytest.approx(b.shapes[0].radius)
        np.testing.assert_allclose(again.pose[:3, 3], b.pose[:3, 3], atol=1e-6)
        np.testing.assert_allclose(again.velocity, b.velocity, atol=1e-5)


def test_failed_save_loses_nothing(tmp_path, monkeypatch):
    import os

    out = tmp_path / "scene.toml"
    out.write_text("# the user's file\n")
    s = Session(World([]))
    s.load_scene(PRIMITIVES, wait=True)

    def boom(src, dst):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", boom)
    assert s.save_scene(str(out)) is None
    assert out.read_text() == "# the user's file\n"
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".tmp")] == []
    assert any("cannot save" in m[0] and m[2] for m in s.messages)


def git_state(root):
    """``git status --porcelain`` of the repository (untracked and ignored files listed one by one),
    or skip when git or the checkout is missing."""
    import shutil
    import subprocess

    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    r = subprocess.run(["git", "-C", root, "status", "--porcelain", "--untracked-files=all", "--ignored"],
                       capture_output=True, text=True)
    if r.returncode != 0:
        pytest.skip(f"{root} is not a git checkout ({r.stderr.strip()})")
    # numba writes its kernel caches under __pycache__ while the scene runs: not a file of ours
    return sorted(line for line in r.stdout.splitlines() if "__pycache__" not in line)


def file_bytes(folder):
    return {p.name: p.read_bytes() for p in sorted(pathlib.Path(folder).iterdir())}


def test_f5_on_an_example_scene_writes_a_copy_and_never_touches_the_repository(tmp_path):
    stacks = scene_registry()["stacks"]
    examples = os.path.dirname(stacks)
    root = os.path.dirname(os.path.dirname(examples))
    before, shipped = git_state(root), file_bytes(examples)
    s = Session(World([]))
    s.load_scene(stacks, wait=True)
    for _ in range(20):
        s.update(1 / 60)
    s.selected = [b.name for b in s.world.bodies].index("column 10")
    s.key("LEFT", shift=True)  # a body somewhere else than in the shipped file
    s.key("E")
    s.key("F5")
    copy = tmp_path / "data" / "scenes" / "stacks.toml"
    assert copy.is_file()
    assert git_state(root) == before and file_bytes(examples) == shipped
    text, _, error = s.messages[-1]
    assert not error and str(copy) in text and "copy" in text
    assert s.scene_path == stacks  # the scene is still the example; its copy is where it saves
    same_scene(copy, s.world)
    # the copy keeps the example's notes and says what it is a copy of
    assert copy.read_text().startswith("# Stacking: a column of ten boxes")
    assert f"# A copy of the example scene {stacks}" in copy.read_text()
    # saving again updates the copy
    s.key("RIGHT", shift=True)
    s.world.advance(0.1)
    s.key("F5")
    assert git_state(root) == before and file_bytes(examples) == shipped
    assert os.listdir(copy.parent) == ["stacks.toml"]
    same_scene(copy, s.world)


def test_the_copy_of_an_example_scene_finds_its_meshes(tmp_path, monkeypatch):
    """Mesh paths of an example are relative to assets/scenes; its copy elsewhere names the same files."""
    import trimesh

    import app.scene.scene_file as sf

    examples = tmp_path / "repo" / "assets" / "scenes"
    (tmp_path / "repo" / "assets" / "meshes").mkdir(parents=True)
    examples.mkdir()
    mesh = tmp_path / "repo" / "assets" / "meshes" / "brick.ply"
    trimesh.creation.box(extents=(0.4, 0.2, 0.2)).export(mesh)
    (examples / "bricks.toml").write_text('# two bricks\n[[body]]\nname = "a"\nmesh = "../meshes/brick.ply"\n'
                                          'motion = "static"\n[[body]]\nname = "b"\nmesh = "../meshes/brick.ply"\n'
                                          'position = [0.0, 0.5, 0.0]\n')
    monkeypatch.setattr(sf, "examples_dir", lambda: str(examples))
    shipped = file_bytes(examples)
    s = Session(World([]))
    s.load_scene(str(examples / "bricks.toml"), wait=True)
    s.world.advance(0.2)  # b falls a little
    path = s.save_scene()
    assert path == str(tmp_path / "data" / "scenes" / "bricks.toml")
    assert file_bytes(examples) == shipped
    spec, errors = read_scene(path)
    assert errors == [] and [b.mesh for b in spec.bodies] == [str(mesh)] * 2
    same_scene(path, s.world)


def test_a_users_scene_is_saved_in_place(tmp_path):
    """Any scene outside the examples' folder is the user's: F5 rewrites it where it is (and nothing
    goes into the data folder), keeping the comments at its head."""
    mine = tmp_path / "mine" / "my scene.toml"
    mine.parent.mkdir()
    mine.write_text("# my notes\n# second line\n\n" + pathlib.Path(PRIMITIVES).read_text())
    s = Session(World([]))
    s.load_scene(str(mine), wait=True)
    s.selected = 1
    s.key("UP", shift=True)
    s.world.advance(0.2)
    s.key("F5")
    assert s.messages[-1][0] == f"saved {len(s.world.bodies)} bodies to {mine}"
    assert os.listdir(mine.parent) == ["my scene.toml"]  # no temporary file left beside it
    assert not (tmp_path / "data").exists()
    assert mine.read_text().startswith("# my notes\n# second line\n\n[scene]\n")
    assert s.scene_path == str(mine)
    same_scene(mine, s.world)


def test_a_saved_state_is_rounded_not_noisy(tmp_path):
    """A pose computed by the step (0.1 + 0.2 = 0.30000000000000004) is written as 0.3."""
    s = Session(World([]))
    s.load_scene(PRIMITIVES, wait=True)
    crate = s.world.bodies[1]
    crate.pose[:3, 3] = (0.1 + 0.2, 1 / 3, -1e-9)
    out = tmp_path / "noise.toml"
    s.save_scene(str(out))
    block = out.read_text().split('name = "crate"')[1].split("[[body]]")[0]
    assert "position = [0.3, 0.333333, 0.0]\n" in block
    # the crate's 20 degrees about y, through a rotation matrix and back
    assert "rotation_deg = [0.0, 20.0, 0.0]\n" in block


def test_f6_cycles_the_example_scenes():
    s = Session(World([]))
    names = list(scene_registry())
    assert len(names) >= 2
    seen = []
    for _ in range(len(names)):
        s.key("F6")
        s._loading["thread"].join(300)
        s.update(0.0)
        seen.append(s.world.scene.name)
    assert len(set(seen)) == len(names)


def test_build_body_uses_the_cache_the_second_time(tmp_path):
    spec, errors = read_scene(PRIMITIVES)
    assert errors == []
    crate = next(b for b in spec.bodies if b.name == "crate")
    first = build_body(crate, cache=str(tmp_path))
    second = build_body(crate, cache=str(tmp_path))
    assert not first.pieces.cached and second.pieces.cached
    np.testing.assert_array_equal(first.pieces.hulls[0].vertices, second.pieces.hulls[0].vertices)


def test_hud_shows_a_bar_when_the_load_knows_how_far_it_is():
    import threading
    import time

    s = Session(World([]))
    release = threading.Event()
    thread = threading.Thread(target=release.wait)
    thread.start()
    try:
        s._loading = {"path": "big.toml", "message": "OBB tree of 2000000 triangles", "fraction": 0.5,
                      "result": None, "start": time.monotonic(), "thread": thread}
        line = next(x for x in s.hud_lines() if "loading big.toml" in x)
        assert line.startswith("[#####-----]  50%") and "OBB tree of 2000000 triangles" in line
        s._loading["fraction"] = None  # a stage of unknown length: a spinner
        line = next(x for x in s.hud_lines() if "loading big.toml" in x)
        assert line[0] in "|/-\\" and "[" not in line[:3]
    finally:
        release.set()
        thread.join()


def test_a_physics_scene_hides_the_exact_triangles_unless_the_user_chose():
    """Bodies resting on each other overlap by the solver's slop: a scene with dynamic bodies starts
    with the exact-triangle overlay off (its manifolds show the contacts); a kinematic scene keeps it,
    and a choice made with T outlives scene loads."""
    s = Session(World([]))
    assert s.flags["triangles"]
    s.load_scene(PRIMITIVES, wait=True)
    s.update(1 / 60)
    assert any(b.moves for b in s.world.bodies) and not s.flags["triangles"]
    s.key("T")  # the user wants them
    assert s.flags["triangles"]
    s.load_scene(PRIMITIVES, wait=True)
    s.update(1 / 60)
    assert s.flags["triangles"]
