"""The GUI panel's GL-free logic: the profiler's history, the scene catalogue and recent files,
and the session actions the panel's widgets call (each changes what the world step reads)."""

import json
import os

import numpy as np
import pytest

from app.scene.catalog import UNCATEGORIZED, RecentFiles, catalog
from app.scene.scene_file import read_scene, save_scene
from app.viewer.profile_history import COUNTS, PHASES, ProfileHistory
from app.viewer.session import ITERATION_RANGE, STEP_RANGE, TIME_SCALE_RANGE, Session
from app.world.world import World

from .._bodies import box_body, ground_body

# -- profile history ---------------------------------------------------------------------------


def test_history_keeps_the_last_frames_in_order_with_min_mean_max():
    h = ProfileHistory(size=5)
    assert len(h) == 0 and h.summary("update") == (0.0, 0.0, 0.0)
    for k in range(8):  # 8 frames into a ring of 5: frames 3..7 are kept
        h.record({"update": k / 1000.0, "candidates": 10 * k}, {"render": 2 * k / 1000.0})
    assert len(h) == 5
    np.testing.assert_allclose(h.series("update"), [3, 4, 5, 6, 7])  # ms, oldest first
    np.testing.assert_allclose(h.series("render"), [6, 8, 10, 12, 14])
    np.testing.assert_allclose(h.series("candidates"), [30, 40, 50, 60, 70])
    np.testing.assert_allclose(h.frames(), [3, 4, 5, 6, 7])
    assert h.summary("update") == pytest.approx((3.0, 5.0, 7.0))
    # a phase the frame did not report counts as 0, not as the last value
    assert h.series("panel").tolist() == [0.0] * 5


def test_history_before_it_wraps_and_its_keys():
    h = ProfileHistory(size=300)
    h.record({"narrow": 0.004}, {})
    h.record({"narrow": 0.002}, {})
    np.testing.assert_allclose(h.series("narrow"), [4.0, 2.0])
    assert h.summary("narrow") == pytest.approx((2.0, 3.0, 4.0))
    assert {k for k, _ in PHASES} >= {"update", "broad", "narrow", "render", "panel"}
    assert {k for k, _ in COUNTS} == {"candidates", "box_tests", "tri_tests", "manifolds", "points", "contacts"}
    with pytest.raises(ValueError):
        ProfileHistory(0)


# -- scene catalogue and recent files ------------------------------------------------------------


def test_every_example_scene_has_a_category_and_a_description():
    groups = catalog()
    entries = [e for _, es in groups for e in es]
    assert len(entries) >= 4
    for e in entries:
        assert e.category != UNCATEGORIZED, e.key
        assert len(e.description) > 20, e.key
        assert os.path.isfile(e.path)
    # the category comes from the file's [scene] table, as the loader reads it
    for e in entries:
        spec, errors = read_scene(e.path)
        assert not errors and spec.category == e.category


def test_catalog_groups_by_category_with_uncategorized_last(tmp_path):
    def scene(name, head):
        (tmp_path / f"{name}.toml").write_text(head + '\n[[body]]\nname = "b"\nshape = "box"\nsize = [1, 1, 1]\n')

    scene("a", '# first\n[scene]\nname = "A"\ncategory = "zeta"')
    scene("b", '[scene]\nname = "B"')
    scene("c", '# third\n# more\n[scene]\nname = "C"\ncategory = "alpha"')
    scene("d", '[scene]\nname = "D"\ncategory = "alpha"')
    groups = catalog(str(tmp_path))
    assert [c for c, _ in groups] == ["alpha", "zeta", UNCATEGORIZED]
    assert [e.key for e in groups[0][1]] == ["c", "d"]
    assert groups[0][1][0].description == "third more"


def test_a_saved_scene_keeps_its_category(tmp_path):
    spec, _ = read_scene(catalog()[0][1][0].path)
    path = tmp_path / "copy.toml"
    save_scene(str(path), spec)
    again, errors = read_scene(str(path))
    assert not errors and again.category == spec.category


def test_a_category_that_is_not_a_string_is_an_error(tmp_path):
    path = tmp_path / "s.toml"
    path.write_text('[scene]\ncategory = 3\n[[body]]\nname = "b"\nshape = "box"\nsize = [1, 1, 1]\n')
    spec, errors = read_scene(str(path))
    assert len(errors) == 1 and "category" in errors[0] and str(path) in errors[0]
    assert spec.category is None and len(spec.bodies) == 1


def test_recent_files_newest_first_without_repeats_and_persisted(tmp_path):
    store = tmp_path / "data" / "recent.json"
    r = RecentFiles(str(store))
    assert r.items == []
    for name in ("a.toml", "b.stl", "a.toml"):
        r.add(str(tmp_path / name))
    assert r.items == [str(tmp_path / "a.toml"), str(tmp_path / "b.stl")]
    assert RecentFiles(str(store)).items == r.items  # read back
    for k in range(20):
        r.add(str(tmp_path / f"m{k}.obj"))
    assert len(r.items) == 10 and r.items[0].endswith("m19.obj")


def test_a_broken_recent_file_costs_only_the_list(tmp_path):
    store = tmp_path / "recent.json"
    store.write_text("{not json")
    assert RecentFiles(str(store)).items == []
    store.write_text(json.dumps({"a": 1}))
    assert RecentFiles(str(store)).items == []


# -- the session's panel actions -----------------------------------------------------------------


@pytest.fixture
def session():
    world = World([ground_body(), box_body("box", (0.2, 0.2, 0.2), (0, 0.5, 0), motion="dynamic"),
                   box_body("block", (0.3, 0.1, 0.3), (1.5, 0.1, 0), motion="kinematic")])
    return Session(world)


def test_gravity_reaches_the_step_and_wakes_the_bodies(session):
    box = session.world.bodies[1]
    box.sleeping = True
    session.set_gravity((0.0, 0.0, 0.0))
    assert not box.sleeping
    session.world.paused = False
    for _ in range(30):
        session.update(1 / 60)
    assert abs(box.velocity[1]) < 1e-9  # no gravity: it stays put
    session.set_gravity((2.0, 0.0, 0.0))
    for _ in range(30):
        session.update(1 / 60)
    assert box.velocity[0] > 0.5  # pushed along +x by the new gravity
    session.set_gravity((0.0, -1e9, 0.0))
    assert session.world.dynamics.gravity[1] == -100.0  # clamped
    session.set_gravity((np.nan, 0, 0))
    assert session.world.dynamics.gravity[1] == -100.0 and session.messages[-1][2]  # refused with a message


def test_time_scale_runs_more_or_fewer_fixed_steps(session):
    world = session.world
    session.set_time_scale(2.0)
    session.update(1 / 60)
    steps_fast = world.stats["steps"]
    t_fast = world.time
    world.reset()
    session.set_time_scale(0.5)
    for _ in range(4):
        session.update(1 / 60)
    assert steps_fast == 4  # 2/60 s at dt = 1/120
    assert t_fast == pytest.approx(4 * world.dt)
    assert world.time == pytest.approx(4 * world.dt)  # 4 frames x 1/120 s = 4 steps of the same dt
    assert session.set_time_scale(100.0) == TIME_SCALE_RANGE[1]


def test_fixed_step_iterations_friction_restitution_are_the_worlds(session):
    assert session.set_fixed_step(1 / 240) == pytest.approx(1 / 240) == session.world.dt
    assert session.set_fixed_step(10.0) == STEP_RANGE[1]
    assert session.set_iterations(7) == 7 == session.world.dynamics.iterations
    assert session.set_iterations(10 ** 6) == ITERATION_RANGE[1]
    assert session.set_friction(0.9) == 0.9 == session.world.dynamics.friction
    assert session.set_friction(-1.0) == 0.0
    assert session.set_restitution(0.4) == 0.4 == session.world.dynamics.restitution
    assert session.set_restitution(3.0) == 1.0


def test_friction_changes_a_sliding_box_from_the_next_step(session):
    world = session.world
    box = world.bodies[1]
    box.pose[:3, 3] = (0, 0.2, 0)
    world.reset()
    for b in world.bodies:
        b.home = b.pose.copy()

    def slide(mu):
        world.reset()
        box.pose[:3, 3] = (0, 0.2, 0)
        session.set_friction(mu)
        for _ in range(20):  # settle on the ground
            session.update(1 / 60)
        box.velocity = np.array([2.0, 0.0, 0.0])
        for _ in range(20):
            session.update(1 / 60)
        return float(box.velocity[0])

    assert slide(0.0) > 1.5  # no friction: it keeps going
    assert slide(1.0) < 0.5  # high friction: it stops


def test_sleeping_off_wakes_the_islands_and_keeps_them_awake(session):
    world = session.world
    box = world.bodies[1]
    box.pose[:3, 3] = (0, 0.2, 0)
    for _ in range(150):  # rest and fall asleep
        session.update(1 / 60)
    assert box.sleeping
    session.set_sleeping(False)
    for _ in range(150):
        session.update(1 / 60)
    assert not box.sleeping
    session.set_sleeping(True)
    for _ in range(150):
        session.update(1 / 60)
    assert box.sleeping


def test_motion_change_delete_duplicate_select(session):
    world = session.world
    block = world.bodies[2]
    assert session.set_motion(2, "static") and block.motion == "static"
    assert not session.set_motion(2, "dynamic")  # it has no mass: refused, with a message
    assert block.motion == "static" and session.messages[-1][2]
    box = world.bodies[1]
    box.velocity = np.array([1.0, 2.0, 3.0])
    assert session.set_motion(1, "kinematic") and box.motion == "kinematic"
    assert np.all(box.velocity == 0)
    session.set_motion(1, "dynamic")
    with pytest.raises(ValueError):
        session.set_motion(1, "floating")

    session.select(1)
    copy = session.duplicate_body(1)
    assert world.bodies[-1] is copy and session.selected == len(world.bodies) - 1
    assert copy.tree is box.tree and copy.mass is box.mass and copy.name == "box (2)"
    lo, hi = copy.world_aabb()
    blo, bhi = box.world_aabb()
    assert lo[1] >= bhi[1] - 1e-9  # placed above the original, not into it
    session.update(1 / 60)  # the world takes the new body

    session.select(1)
    session.delete_body(2)  # another body: the selection follows "box"
    assert world.bodies[session.selected] is box and block not in world.bodies
    session.delete_body(session.selected)
    assert session.selected is None and box not in world.bodies
    session.update(1 / 60)
    session.overlays()  # nothing refers to the removed bodies any more
    session.select(99)
    assert session.selected is None


def test_depth_for_the_selected_body_only(session):
    session.set_depth(3)
    depth = session.depth
    assert depth >= 1
    session.flags["boxes"] = True

    def box_line_count():
        from app.viewer.session import COLORS

        lines, colors, _, _ = session.overlays()
        return int(np.all(np.isclose(colors, COLORS["boxes"]), axis=1).sum())

    all_bodies = box_line_count()
    session.depth_selected_only = True
    session.select(1)
    only_one = box_line_count()
    session.select(None)
    roots = box_line_count()
    assert all_bodies > only_one > roots > 0  # the grounds draw no boxes; the others their root box


def test_panel_key_and_status_line(session):
    assert session.panel_visible
    session.key("F1")
    assert not session.panel_visible
    session.key("F1")
    session.world.paused = True
    line = session.status_line()
    assert "3 bodies" in line and "PAUSED" in line
    session.say("hello")
    assert session.log[-1][0] == "hello"


def test_solver_settings_outlive_a_scene_load_and_gravity_comes_from_the_file(session):
    from app.scene.scene_file import scene_registry

    session.set_iterations(5)
    session.set_friction(1.25)
    session.set_sleeping(False)
    session.set_gravity((0.0, -1.0, 0.0))
    session.load_scene(scene_registry()["primitives"], wait=True)
    dyn = session.world.dynamics
    assert len(session.world.bodies) == 5
    assert dyn.iterations == 5 and dyn.friction == 1.25 and not dyn.allow_sleep
    assert dyn.gravity.tolist() == [0.0, -9.81, 0.0]


def test_open_path_loads_a_scene_or_adds_a_mesh_and_remembers_it(session, tmp_path):
    import time

    from app.scene.scene_file import scene_registry
    from app.viewer.panel_scenes import open_path

    recent = RecentFiles(str(tmp_path / "recent.json"))
    assert not open_path(session, "   ", recent) and not open_path(session, str(tmp_path / "none.stl"), recent)
    assert session.messages[-1][0].endswith("none.stl: no such file") and recent.items == []

    def settle():
        deadline = time.monotonic() + 300
        while (session.loading is not None or session._queue) and time.monotonic() < deadline:
            time.sleep(0.05)
            session.poll()

    scene = scene_registry()["primitives"]
    assert open_path(session, scene, recent)
    settle()
    assert session.scene_path == scene and len(session.world.bodies) == 5
    mesh = os.path.join(os.path.dirname(scene), "..", "meshes", "bowl.ply")
    assert open_path(session, mesh, recent)
    settle()
    assert len(session.world.bodies) >= 6 and session.world.bodies[session.selected].name.startswith("bowl")
    assert recent.items == [os.path.abspath(mesh), os.path.abspath(scene)]


def test_save_as_follows_the_scene_unless_a_path_was_typed(session):
    """Found by hand: after F6 the "Save as" field still named the first scene's file, so its
    Save button would have written the new scene over the old one."""
    from types import SimpleNamespace

    from app.viewer.panel_scenes import _state

    session.gui = SimpleNamespace(state={})
    session.scene_path = "/scenes/stacks.toml"
    assert _state(session)["save_as"] == "/scenes/stacks.toml"
    session.scene_path = "/scenes/bowl_pile.toml"  # the next scene (F6)
    assert _state(session)["save_as"] == "/scenes/bowl_pile.toml"
    _state(session)["save_as"] = "/home/me/mine.toml"  # typed by the person
    session.scene_path = "/scenes/primitives.toml"
    assert _state(session)["save_as"] == "/home/me/mine.toml"
