"""Meshes the user adds to the viewer session (``--mesh``, dropped files): GL-free.

- A closed box and an open one (a box without its top face, a standing tube
  without caps) added to the ``stacks`` scene are dynamic: at the moment each appears
  its world AABB is clear of every other body's and the exact triangle test
  (``collision.collide``, independent of the placement code) finds no
  contact with any body; it falls, comes to rest (speed below the sleep
  threshold) within 4 simulated seconds, and its resting centre projects
  inside the viewport of the session's camera, in front of it.
- The open one says so: a message ("is open ... convex hull") and a line
  for it in the HUD when selected.
- Loading happens in the background: with the loader held back, frames keep
  coming (the world's clock advances, the HUD shows the load and the queue of
  a second file), nothing is added until the load finishes, then both files
  come in, in order, each clear of the others.
- ``--motion`` chooses (kinematic: it stays where it was put); a scene with no
  ground gets one, and the body lands on it; a file in millimetres gets a
  message naming it and its size.
"""

import threading
import time

import numpy as np
import pytest
import trimesh

import obbcollide as co
from app.__main__ import _parser
from app.world.dynamics import SLEEP_SPEED, SLEEP_SPIN
from app.scene.scene_file import scene_registry
from app.viewer.session import Session
from app.world.world import World

W, H = 1280, 720
STACKS = scene_registry()["stacks"]


@pytest.fixture(autouse=True)
def private_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("OBBCOLLIDE_CACHE", str(tmp_path / "cache"))


def stacks_session():
    s = Session(World([]))
    s.camera.width, s.camera.height = W, H
    s.load_scene(STACKS, wait=True)
    return s


def closed_box(path):
    trimesh.creation.box(extents=(0.3, 0.2, 0.25)).export(path)
    return str(path)


def open_box(path):
    """A box without its top face: not a closed surface."""
    m = trimesh.creation.box(extents=(0.4, 0.3, 0.2))
    keep = m.face_normals[:, 1] < 0.9
    trimesh.Trimesh(m.vertices, m.faces[keep], process=False).export(path)
    return str(path)


def tube(path, radius=0.12, height=0.3, scale=1.0):
    """A cylinder without its caps, standing (axis y; on its side it would roll on, as it should)."""
    m = trimesh.creation.cylinder(radius=radius, height=height, sections=32)
    side = np.abs(m.face_normals[:, 2]) < 0.1
    t = trimesh.Trimesh(m.vertices, m.faces[side], process=False)
    t.remove_unreferenced_vertices()
    t.apply_transform(trimesh.transformations.rotation_matrix(-np.pi / 2, [1, 0, 0]))
    t.apply_scale(scale)
    t.export(path)
    return str(path)


def clear_of_everything(s, body):
    """The new body's AABB overlaps no other body's, and no triangle of it touches another body's."""
    lo, hi = body.world_aabb()
    for o in s.world.bodies:
        if o is body:
            continue
        if o.unbounded:  # a ground: every vertex above its plane
            n = o.pose[:3, :3] @ np.array([0.0, 1.0, 0.0])
            world = body.vertices @ body.pose[:3, :3].T + body.pose[:3, 3]
            assert (world @ n).min() > n @ o.pose[:3, 3], f"{body.name} starts below {o.name}"
            continue
        olo, ohi = o.world_aabb()
        assert np.any(hi < olo) or np.any(ohi < lo), f"{body.name} starts overlapping {o.name}'s box"
        assert not co.collide(body.tree, body.pose, o.tree, o.pose).hit, f"{body.name} starts touching {o.name}"


def in_view(s, point):
    cam = s.camera
    ahead = cam.target - cam.eye
    assert (np.asarray(point) - cam.eye) @ ahead > 0, "behind the camera"
    x, y = cam.project(point)
    return 0 <= x <= cam.width and 0 <= y <= cam.height


def settle(s, bodies, seconds=4.0, fps=60):
    """Run frames until every body in ``bodies`` is slow (or asleep); returns the time it took, or None."""
    for frame in range(int(seconds * fps)):
        s.update(1.0 / fps)
        if all(b.sleeping or (np.linalg.norm(b.velocity) < SLEEP_SPEED and np.linalg.norm(b.spin) < SLEEP_SPIN)
               for b in bodies) and frame > 10:
            return (frame + 1) / fps
    return None


def add_and_check(s, path):
    """Add a file and check the moment it appears: dynamic, clear of everything, in view."""
    n = len(s.world.bodies)
    assert s.add_mesh(path, wait=True)
    assert len(s.world.bodies) == n + 1
    body = s.world.bodies[-1]
    assert body.motion == "dynamic" and body.moves and body.pieces is not None
    clear_of_everything(s, body)
    assert in_view(s, body.world_center()), "the camera does not show the new body"
    return body, body.world_center().copy()


def fall_and_rest(s, added):
    took = settle(s, [b for b, _ in added])
    assert took is not None, "not at rest after 4 s: " + str([np.linalg.norm(b.velocity) for b, _ in added])
    for body, start in added:
        end = body.world_center()
        assert end[1] < start[1] - 0.1, f"{body.name} did not fall"
        assert in_view(s, end), f"{body.name} came to rest out of view"
        assert np.all(np.isfinite(body.pose))
    return took


def test_a_closed_and_an_open_mesh_fall_land_in_view_and_rest(tmp_path):
    s = stacks_session()
    added = [add_and_check(s, closed_box(tmp_path / "closed.ply")),
             add_and_check(s, open_box(tmp_path / "open_box.ply"))]  # above the first: it lands on it
    closed, opened = added[0][0], added[1][0]
    assert closed.mass_source is None and "convex hull" in opened.mass_source
    assert any(opened.name in m[0] and "is open" in m[0] and "convex hull" in m[0] for m in s.messages)
    assert s.selected == len(s.world.bodies) - 1
    assert any(line.startswith(f"{opened.name}: open mesh") for line in s.hud_lines())
    fall_and_rest(s, added)


def test_an_open_tube_falls_lands_in_view_and_rests(tmp_path):
    s = stacks_session()
    fall_and_rest(s, [add_and_check(s, tube(tmp_path / "tube.ply"))])


def test_a_tube_lying_on_the_ground_comes_to_rest(tmp_path):
    s = stacks_session()
    path = tube(tmp_path / "tube.ply")
    assert s.add_mesh(path, wait=True)
    body = s.world.bodies[-1]
    p = body.pose.copy()
    p[:3, :3] = trimesh.transformations.rotation_matrix(np.pi / 2, [1, 0, 0])[:3, :3]  # on its side
    body.pose = p
    assert settle(s, [body]) is not None, "still rocking after 4 s"


def test_loading_happens_in_the_background(tmp_path, monkeypatch):
    import app.scene.loader as scene_mod

    s = stacks_session()
    n = len(s.world.bodies)
    gate = threading.Event()
    real = scene_mod.load_mesh_body
    calls = []

    def slow(path, **kw):
        calls.append(path)
        gate.wait(60)
        return real(path, **kw)

    monkeypatch.setattr(scene_mod, "load_mesh_body", slow)
    first, second = closed_box(tmp_path / "first.ply"), open_box(tmp_path / "second.ply")
    assert s.add_mesh(first) and s.add_mesh(second)  # dropped together: the second waits its turn
    t0 = s.world.time
    frames = 0
    start = time.monotonic()
    while frames < 30:  # the window keeps drawing while the loader is held back
        s.update(1 / 60)
        frames += 1
    assert time.monotonic() - start < 20
    assert s.world.time > t0 + 0.4 and len(s.world.bodies) == n
    hud = [line for line in s.hud_lines() if "loading first.ply" in line]
    assert hud and "(+1 queued)" in hud[0]
    assert calls == [first]
    gate.set()
    deadline = time.monotonic() + 120
    while len(s.world.bodies) < n + 2 and time.monotonic() < deadline:
        s.update(1 / 60)
        time.sleep(0.01)
    assert [b.name for b in s.world.bodies[n:]] == ["first.ply", "second.ply"]
    assert calls == [first, second] and s.loading is None
    clear_of_everything(s, s.world.bodies[-1])  # placed when it came in, clear of the one before it


def test_a_scene_without_ground_gets_one_and_the_body_lands_on_it(tmp_path):
    s = Session(World([]))
    s.camera.width, s.camera.height = W, H
    assert s.add_mesh(closed_box(tmp_path / "lonely.ply"), wait=True)
    names = [b.name for b in s.world.bodies]
    assert names == ["ground", "lonely.ply"]
    assert any("no ground" in m[0] for m in s.messages)
    body = s.world.bodies[1]
    clear_of_everything(s, body)
    assert settle(s, [body]) is not None
    ground_y = s.world.bodies[0].pose[1, 3]
    assert body.world_aabb()[0][1] == pytest.approx(ground_y, abs=0.02)  # resting on it (within the slop)
    assert in_view(s, body.world_center())


def test_motion_option_chooses_how_added_meshes_move(tmp_path):
    assert _parser().parse_args([]).motion == "dynamic"
    assert _parser().parse_args(["--motion", "kinematic"]).motion == "kinematic"
    with pytest.raises(SystemExit):
        _parser().parse_args(["--motion", "floating"])
    s = stacks_session()
    s.mesh_motion = "kinematic"
    assert s.add_mesh(closed_box(tmp_path / "held.ply"), wait=True)
    body = s.world.bodies[-1]
    assert body.motion == "kinematic" and not body.moves
    start = body.pose.copy()
    for _ in range(30):
        s.update(1 / 60)
    np.testing.assert_array_equal(body.pose, start)


def test_a_mug_in_millimetres_is_read_in_millimetres(tmp_path):
    """A tube 80 x 100 x 80 units (a mug drawn in millimetres) among 0.3 m boxes is 333 times their size:
    it is scaled by 0.001, says so, and the saved scene keeps the scale."""
    s = stacks_session()
    path = tube(tmp_path / "mug_mm.stl", radius=40.0, height=100.0)
    assert s.add_mesh(path, wait=True)
    body = s.world.bodies[-1]
    np.testing.assert_allclose(np.ptp(body.vertices, axis=0), (0.08, 0.1, 0.08), rtol=1e-3)
    assert body.moves and "convex hull" in body.mass_source and body.spec.scale == 0.001
    texts = [m[0] for m in s.messages]
    assert any("mug_mm.stl" in t and "read as millimetres, scaled by 0.001" in t for t in texts)
    clear_of_everything(s, body)
    assert in_view(s, body.world_center())
    s.save_scene(str(tmp_path / "saved.toml"))
    from app.scene.loader import load_scene

    world, errors = load_scene(str(tmp_path / "saved.toml"))
    assert errors == []
    again = world.bodies[-1]
    world_v = again.vertices @ again.pose[:3, :3].T + again.pose[:3, 3]
    np.testing.assert_allclose(np.sort(world_v, axis=0),
                               np.sort(body.vertices @ body.pose[:3, :3].T + body.pose[:3, 3], axis=0), atol=1e-9)


def test_mesh_scale_keeps_the_file_size_and_says_it_is_odd(tmp_path):
    s = stacks_session()
    s.mesh_scale = 1.0  # --mesh-scale 1
    path = tube(tmp_path / "mug_mm.stl", radius=40.0, height=100.0)
    assert s.add_mesh(path, wait=True)
    body = s.world.bodies[-1]
    np.testing.assert_allclose(np.ptp(body.vertices, axis=0), (80.0, 100.0, 80.0), rtol=1e-3)
    texts = [m[0] for m in s.messages]
    assert any("mug_mm.stl" in t and "times the scene's typical body" in t and "kept as it is" in t for t in texts)
    clear_of_everything(s, body)
    assert in_view(s, body.world_center())
