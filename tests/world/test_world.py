"""The world (app/world/world.py): fixed steps, user moves, broad and narrow phase, picking.

Each query is compared with an independent computation: the step count with a
model of the accumulator in exact arithmetic, the broad phase with an O(n^2)
loop over the world AABBs, detect() with collision.collide on every pair,
pick() with collision.ray_cast on every body.
"""

import math
from fractions import Fraction

import numpy as np
import pytest
import trimesh
from hypothesis import given, settings
from hypothesis import strategies as st

import obbcollide as co
from app.scene.loader import default_scene, make_body
from app.world.world import World, pose_matrix

from .._reference import random_rotation


def rot_x(a):
    c, s = math.cos(a), math.sin(a)
    return np.array([[1, 0, 0], [0, c, -s], [0, s, c]])


_MESHES = {}


def mesh(kind):
    if kind not in _MESHES:
        if kind == "box":
            m = trimesh.creation.box(extents=(0.6, 0.4, 0.8))
        elif kind == "sphere":
            m = trimesh.creation.icosphere(subdivisions=2, radius=0.35)
        elif kind == "capsule":
            m = trimesh.creation.capsule(height=0.6, radius=0.2, count=(8, 8))
        else:
            m = trimesh.creation.annulus(r_min=0.15, r_max=0.4, height=0.2, sections=16)
        _MESHES[kind] = (np.asarray(m.vertices, float), np.asarray(m.faces, np.int64))
    return _MESHES[kind]


def small_world(n=4, seed=0, spin=True, **kw):
    rng = np.random.default_rng(seed)
    kinds = ["box", "sphere", "capsule", "ring"]
    bodies = []
    for k in range(n):
        v, f = mesh(kinds[k % 4])
        v = v + rng.normal(size=3) * 0.1  # model origin off the mesh centre
        pose = pose_matrix(random_rotation(rng), rng.uniform(-1, 1, 3))
        s = rng.normal(size=3) if spin else (0, 0, 0)
        bodies.append(make_body(f"b{k}", v, f, pose, (0.5, 0.5, 0.5), s))
    return World(bodies, **kw)


@pytest.fixture(scope="module")
def scene():
    return default_scene()


@pytest.fixture
def world(scene):
    scene.reset()
    scene.paused = False
    yield scene
    scene.reset()


def poses(world):
    return np.array([b.pose for b in world.bodies])


def randomize(world, rng, spread=1.2):
    for b in world.bodies:
        b.pose = pose_matrix(random_rotation(rng), rng.uniform(-spread, spread, 3))


# -- fixed steps ----------------------------------------------------------------------


def test_advance_runs_floor_of_accumulated_over_dt_steps():
    w = small_world(dt=0.25, max_steps=100)
    assert w.advance(0.9) == 3  # floor(0.9 / 0.25)
    assert w.time == 0.75
    assert w.accumulator == pytest.approx(0.15)
    assert w.advance(0.2) == 1  # 0.15 + 0.2 = 0.35
    assert w.advance(0.1) == 0  # 0.1 + 0.1 = 0.2 < 0.25
    assert w.advance(0.05) == 1  # exactly 0.25
    assert w.time == 1.25


def test_advance_counts_calls_to_step(monkeypatch):
    w = small_world(dt=0.125, max_steps=50)
    calls = []
    orig = w.step
    monkeypatch.setattr(w, "step", lambda: (calls.append(1), orig()))
    assert w.advance(1.0) == 8 and len(calls) == 8


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(min_value=-40, max_value=300), min_size=1, max_size=25),
       st.integers(min_value=1, max_value=10))
def test_advance_matches_an_exact_accumulator_model(frames, max_steps):
    # dt = 1/4 and frame times in 1/64: every float operation is exact.
    w = World([], dt=0.25, max_steps=max_steps)
    acc = Fraction(0)
    total = 0
    for k in frames:
        frame_dt = k / 64
        acc += max(Fraction(0), Fraction(k, 64))
        expected = min(math.floor(acc / Fraction(1, 4)), max_steps)
        if expected == max_steps:
            acc = Fraction(0)  # backlog dropped
        else:
            acc -= expected * Fraction(1, 4)
        assert w.advance(frame_dt) == expected
        assert Fraction(w.accumulator) == acc
        total += expected
        assert w.time == total * 0.25


def test_advance_is_capped_and_the_backlog_dropped():
    w = small_world(dt=0.01, max_steps=8)
    p0 = poses(w)
    assert w.advance(5.0) == 8  # 500 steps owed, 8 run
    assert w.accumulator == 0.0
    assert w.time == pytest.approx(0.08)
    assert not np.allclose(poses(w), p0)
    assert w.advance(0.0) == 0  # nothing carried over into the next frame
    assert w.advance(0.005) == 0


def test_negative_frame_time_is_ignored():
    w = small_world(dt=0.25)
    assert w.advance(-3.0) == 0 and w.accumulator == 0.0
    assert w.advance(0.25) == 1


def test_paused_world_does_not_move():
    w = small_world(dt=0.125, max_steps=100)
    w.paused = True
    p0 = poses(w)
    for _ in range(10):
        assert w.advance(0.5) == 0
    w.frame(0.5)
    assert np.array_equal(poses(w), p0)
    assert w.time == 0.0 and w.accumulator == 0.0  # paused time is not banked either
    w.paused = False
    assert w.advance(0.5) == 4
    assert not np.allclose(poses(w), p0)


def test_step_spins_each_body_about_its_centre():
    w = small_world(dt=0.02)
    before = [(b.world_center(), b.pose[:3, :3].copy()) for b in w.bodies]
    w.step()
    for b, (c, r) in zip(w.bodies, before):
        np.testing.assert_allclose(b.world_center(), c, atol=1e-12)
        rel = b.pose[:3, :3] @ r.T
        angle = math.acos(np.clip((np.trace(rel) - 1) / 2, -1, 1))
        assert angle == pytest.approx(np.linalg.norm(b.spin) * 0.02, rel=1e-7)
        axis = np.array([rel[2, 1] - rel[1, 2], rel[0, 2] - rel[2, 0], rel[1, 0] - rel[0, 1]])
        np.testing.assert_allclose(axis / np.linalg.norm(axis), b.spin / np.linalg.norm(b.spin), atol=1e-6)
        np.testing.assert_allclose(b.pose[:3, :3] @ b.pose[:3, :3].T, np.eye(3), atol=1e-12)


def test_bodies_without_spin_do_not_move():
    w = small_world(spin=False)
    p0 = poses(w)
    w.advance(1.0)
    assert np.array_equal(poses(w), p0)


def test_same_inputs_give_bit_identical_poses():
    frames = [0.016, 0.017, 0.0, 0.1, 0.033, 0.008, 0.25, 0.016] * 4

    def run():
        w = small_world(n=5, seed=7, dt=1 / 120, max_steps=8)
        out = []
        for k, f in enumerate(frames):
            w.advance(f)
            if k == 5:
                w.move_body(2, translation=(0.01, -0.02, 0.03), rot=rot_x(0.3))
            out.append(poses(w))
        return np.array(out), w.time

    a, ta = run()
    b, tb = run()
    assert a.tobytes() == b.tobytes() and ta == tb
    # And the same again after reset on one world.
    w = small_world(n=5, seed=7, dt=1 / 120)
    for f in frames:
        w.advance(f)
    first = poses(w)
    w.reset()
    for f in frames:
        w.advance(f)
    assert first.tobytes() == poses(w).tobytes()


def test_default_scene_is_deterministic(world):
    frames = [1 / 60] * 30 + [0.2, 0.001, 0.05]
    for f in frames:
        world.frame(f)
    a = poses(world)
    contacts_a = [(c.a, c.b, c.pairs.tobytes()) for c in world.contacts]
    world.reset()
    for f in frames:
        world.frame(f)
    assert a.tobytes() == poses(world).tobytes()
    assert contacts_a == [(c.a, c.b, c.pairs.tobytes()) for c in world.contacts]


# -- user moves --------------------------------------------------------------------


@pytest.mark.parametrize("seed", range(5))
def test_move_body_translates_by_exactly_the_vector(seed):
    rng = np.random.default_rng(seed)
    w = small_world(seed=seed)
    k = int(rng.integers(len(w.bodies)))
    others = [b.pose.copy() for i, b in enumerate(w.bodies) if i != k]
    b = w.bodies[k]
    t0, r0 = b.pose[:3, 3].copy(), b.pose[:3, :3].copy()
    v = rng.normal(size=3)
    w.move_body(k, translation=v)
    np.testing.assert_array_equal(b.pose[:3, 3], t0 + v)
    np.testing.assert_allclose(b.pose[:3, :3], r0, atol=1e-14)
    np.testing.assert_array_equal(b.pose[3], [0, 0, 0, 1])
    assert all(np.array_equal(o.pose, p) for o, p in zip([o for i, o in enumerate(w.bodies) if i != k], others))


@pytest.mark.parametrize("seed", range(5))
def test_move_body_rotates_about_the_body_centre(seed):
    rng = np.random.default_rng(10 + seed)
    w = small_world(seed=seed)
    k = int(rng.integers(len(w.bodies)))
    b = w.bodies[k]
    c0, r0 = b.world_center().copy(), b.pose[:3, :3].copy()
    rot = random_rotation(rng)
    w.move_body(k, rot=rot)
    np.testing.assert_allclose(b.world_center(), c0, atol=1e-12)
    np.testing.assert_allclose(b.pose[:3, :3], rot @ r0, atol=1e-12)
    # Rotation then translation: the centre ends exactly at c0 + v.
    v = rng.normal(size=3)
    rot2 = random_rotation(rng)
    w.move_body(k, translation=v, rot=rot2)
    np.testing.assert_allclose(b.world_center(), c0 + v, atol=1e-12)
    np.testing.assert_allclose(b.pose[:3, :3], rot2 @ rot @ r0, atol=1e-12)


@pytest.mark.parametrize("bad", [
    dict(translation=(np.nan, 0, 0)),
    dict(translation=(0, np.inf, 0)),
    dict(rot=np.full((3, 3), np.nan)),
    dict(translation=(1, 2, 3), rot=rot_x(np.nan)),
])
def test_non_finite_move_raises_and_keeps_the_pose(bad):
    w = small_world()
    p0 = poses(w)
    with pytest.raises(ValueError):
        w.move_body(1, **bad)
    assert np.array_equal(poses(w), p0)


def test_many_small_turns_stay_rigid():
    w = small_world()
    for _ in range(2000):
        w.move_body(0, rot=rot_x(0.01))
    r = w.bodies[0].pose[:3, :3]
    np.testing.assert_allclose(r @ r.T, np.eye(3), atol=1e-12)
    assert np.linalg.det(r) == pytest.approx(1.0)


def test_reset_restores_home_poses():
    w = small_world()
    home = [b.pose.copy() for b in w.bodies]
    w.advance(0.3)
    w.move_body(0, translation=(1, 2, 3), rot=rot_x(1.0))
    assert not np.allclose(poses(w), np.array(home))
    w.reset()
    assert np.array_equal(poses(w), np.array(home))
    assert w.time == 0.0 and w.accumulator == 0.0
    # Reset gives copies: moving afterwards does not corrupt the home pose.
    w.move_body(0, translation=(1, 0, 0))
    np.testing.assert_array_equal(w.bodies[0].home, home[0])


def test_reset_default_scene(world):
    home = [b.home.copy() for b in world.bodies]
    world.advance(0.5)
    world.move_body(3, translation=(0.2, 0, 0))
    world.reset()
    assert all(np.array_equal(b.pose, h) for b, h in zip(world.bodies, home))


# -- broad phase ---------------------------------------------------------------------


def test_world_aabb_is_the_aabb_of_the_posed_root_obb(scene):
    rng = np.random.default_rng(3)
    for b in scene.bodies:
        b.pose = pose_matrix(random_rotation(rng), rng.normal(size=3))
        box = co.OBB(b.tree.centers[0], b.tree.axes[0], b.tree.half_extents[0]).corners
        world = box @ b.pose[:3, :3].T + b.pose[:3, 3]
        lo, hi = b.world_aabb()
        np.testing.assert_allclose(lo, world.min(0), atol=1e-12)
        np.testing.assert_allclose(hi, world.max(0), atol=1e-12)
        np.testing.assert_allclose(b.mesh_aabb(), [world.min(0), world.max(0)], atol=1e-12)
        verts = b.vertices @ b.pose[:3, :3].T + b.pose[:3, 3]
        assert np.all(verts >= lo - 1e-9) and np.all(verts <= hi + 1e-9)
    scene.reset()


def brute_broad(world):
    boxes = [b.world_aabb() for b in world.bodies]
    out = []
    for i in range(len(boxes)):
        for j in range(i + 1, len(boxes)):
            (lo_i, hi_i), (lo_j, hi_j) = boxes[i], boxes[j]
            if all(lo_i[d] <= hi_j[d] and lo_j[d] <= hi_i[d] for d in range(3)):
                out.append((i, j))
    return out


@pytest.mark.parametrize("seed", range(6))
def test_broad_phase_equals_brute_force(world, seed):
    rng = np.random.default_rng(seed)
    for spread in (0.5, 1.5, 3.0):
        randomize(world, rng, spread)
        got = world.broad_phase()
        assert got == sorted(got)
        assert set(got) == set(brute_broad(world))
        assert all(i < j for i, j in got)


def test_broad_phase_many_random_bodies():
    w = small_world(n=14, seed=5)
    rng = np.random.default_rng(5)
    for _ in range(20):
        randomize(w, rng, 2.0)
        assert set(w.broad_phase()) == set(brute_broad(w))


def test_broad_phase_touching_boxes_count():
    """Closed boxes: AABBs that only touch are still candidates (the meshes may touch)."""
    w = small_world(n=3, spin=False)
    boxes = {0: np.array([[0.0, 0, 0], [1, 1, 1]]), 1: np.array([[1.0, 0.5, 0.5], [2, 2, 2]]),
             2: np.array([[0.0, 1.0, 1.0], [0.5, 2, 2]])}  # 0-1 share a face, 0-2 an edge
    w._world_bounds = lambda t, rows, pad: (np.array([boxes[k][0] for k in rows]), np.array([boxes[k][1] for k in rows]),
                                            True)
    assert w.broad_phase() == [(0, 1), (0, 2)]
    boxes[1][0, 0] = np.nextafter(1.0, 2.0)
    boxes[2][0, 2] = np.nextafter(1.0, 2.0)
    assert w.broad_phase() == []


def test_world_aabbs_are_the_bodies_world_aabbs():
    w = small_world(n=7, seed=2)
    np.testing.assert_allclose(w.world_aabbs(), np.array([b.world_aabb() for b in w.bodies]), atol=1e-12)
    np.testing.assert_allclose(w.world_aabbs([4, 1]), np.array([w.bodies[4].world_aabb(), w.bodies[1].world_aabb()]),
                               atol=1e-12)
    w.bodies.append(w.bodies[0])  # the cached root boxes follow the body list
    assert len(w.world_aabbs()) == 8


@pytest.mark.parametrize("name", ["brute", "sap", "grid", "octree", "tree"])
def test_every_broad_phase_of_the_world_equals_brute_force(name):
    w = small_world(n=14, seed=5, broad_phase=name)
    rng = np.random.default_rng(5)
    for _ in range(10):
        randomize(w, rng, 2.0)
        assert w.broad_phase() == brute_broad(w)


def test_broad_phase_switches_in_order_and_the_cli_knows_them():
    from app.__main__ import BROAD_PHASE_NAMES
    from obbcollide.broad_phase import BROAD_PHASES

    assert tuple(BROAD_PHASES) == BROAD_PHASE_NAMES
    w = World([], broad_phase="brute")
    seen = [w.next_broad_phase() for _ in BROAD_PHASE_NAMES]
    assert seen == list(BROAD_PHASE_NAMES[1:]) + ["brute"]
    with pytest.raises(ValueError, match="sap"):
        w.set_broad_phase("quadtree")


def test_broad_phase_fewer_than_two_bodies():
    assert World([]).broad_phase() == []
    assert small_world(n=1).broad_phase() == []


# -- narrow phase ------------------------------------------------------------------


def check_detect(world):
    contacts = world.detect()
    got = {(c.a, c.b): c for c in contacts}
    expected = set()
    n = len(world.bodies)
    for i in range(n):
        for j in range(i + 1, n):
            a, b = world.bodies[i], world.bodies[j]
            r = co.collide(a.tree, a.pose, b.tree, b.pose)
            if r.hit:
                expected.add((i, j))
                c = got.get((i, j))
                assert c is not None, f"{a.name}-{b.name} hit but no contact"
                np.testing.assert_array_equal(c.pairs, r.pairs)
                np.testing.assert_allclose(c.segments, r.segments)
                assert c.contained == r.contained
                if len(c.pairs):
                    np.testing.assert_allclose(np.linalg.norm(c.normals, axis=1), 1.0, atol=1e-9)
                    # The normal is B's face normal: perpendicular to B's triangle in the world.
                    tri = b.vertices[b.faces[c.pairs[:, 1]]] @ b.pose[:3, :3].T
                    e = tri[:, 1] - tri[:, 0]
                    np.testing.assert_allclose(np.einsum("ij,ij->i", c.normals, e) / np.linalg.norm(e, axis=1),
                                               0, atol=1e-9)
                    np.testing.assert_allclose(c.points(), r.segments.mean(axis=1))
    assert set(got) == expected
    assert world.contacts is contacts or world.contacts == contacts
    assert world.stats["contacts"] == sum(len(c.pairs) for c in contacts)
    assert world.stats["candidates"] == len(world.broad_phase())
    return expected


def test_detect_default_scene(world):
    hits = check_detect(world)
    assert hits, "the default scene is meant to start with overlapping bodies"


@pytest.mark.parametrize("seed", range(4))
def test_detect_random_poses(world, seed):
    rng = np.random.default_rng(100 + seed)
    total = 0
    for spread in (0.6, 1.0):
        randomize(world, rng, spread)
        total += len(check_detect(world))
    assert total > 0


def test_detect_small_bodies_with_containment():
    # A small sphere inside a box: no surfaces meet, but it is a hit (contained).
    v_box, f_box = mesh("box")
    v_s, f_s = mesh("sphere")
    big = make_body("big", v_box * 3, f_box, np.eye(4), (1, 1, 1))
    small = make_body("small", v_s * 0.3, f_s, np.eye(4), (1, 1, 1))
    far = make_body("far", v_s, f_s, pose_matrix(None, (10, 0, 0)), (1, 1, 1))
    w = World([big, small, far])
    assert check_detect(w) == {(0, 1)}
    (c,) = w.contacts
    assert len(c.pairs) == 0 and c.contained is not None


# -- picking -------------------------------------------------------------------------


def brute_pick(world, origin, direction):
    best = (None, math.inf)
    for k, b in enumerate(world.bodies):
        h = co.ray_cast(b.tree, b.pose, origin, direction)
        if h.hit and h.t < best[1]:
            best = (k, h.t)
    return best


@pytest.mark.parametrize("seed", range(3))
def test_pick_returns_the_nearest_body(world, seed):
    rng = np.random.default_rng(200 + seed)
    lo, hi = world.bounds()
    hits = 0
    for _ in range(150):
        origin = rng.normal(size=3) * 4 + (lo + hi) / 2
        aim = rng.uniform(lo, hi)
        direction = (aim - origin) * rng.uniform(0.2, 3.0)  # not unit length on purpose
        k, t, point = world.pick(origin, direction)
        ek, et = brute_pick(world, origin, direction)
        assert k == ek
        if ek is None:
            assert t == math.inf and point is None
        else:
            hits += 1
            assert t == pytest.approx(et, rel=1e-12, abs=1e-12)
            np.testing.assert_allclose(point, origin + t * direction, atol=1e-9)
    assert hits > 40


def test_pick_from_inside_a_body_bounding_sphere(world):
    # Origins near body centres (inside bounding spheres), both directions.
    rng = np.random.default_rng(9)
    for b in world.bodies:
        for _ in range(10):
            origin = b.world_center() + rng.normal(size=3) * 0.05
            d = rng.normal(size=3)
            assert world.pick(origin, d)[0] == brute_pick(world, origin, d)[0]


def test_pick_misses(world):
    lo, hi = world.bounds()
    above = np.array([0.0, hi[1] + 5, 0.0])
    assert world.pick(above, (0, 1, 0)) == (None, math.inf, None)
    assert world.pick(above, (1, 0, 0))[0] is None
    # Pointing at the scene from the same place hits something.
    assert world.pick(above, (lo + hi) / 2 - above)[0] is not None


def test_pick_ray_behind_the_origin_is_not_a_hit():
    v, f = mesh("sphere")
    w = World([make_body("s", v, f, pose_matrix(None, (0, 0, -5)), (1, 1, 1))])
    assert w.pick((0, 0, 0), (0, 0, 1))[0] is None
    k, t, p = w.pick((0, 0, 0), (0, 0, -1))
    assert k == 0 and t == pytest.approx(5 - 0.35, rel=0.05)


def test_bounds_contains_every_body(world):
    lo, hi = world.bounds()
    for b in world.bodies:  # (the meshes, what the camera frames)
        blo, bhi = b.mesh_aabb()
        assert np.all(blo >= lo) and np.all(bhi <= hi)
    np.testing.assert_array_equal(World([]).bounds(), [[-1, -1, -1], [1, 1, 1]])


def test_ground_pairs_match_the_plane_test_body_by_body():
    """World._ground_pairs (one compiled call over every half-space) against the plane test written
    out per half-space and body: a moving body pairs with a half-space when the lowest point of its
    (swept) box along the world normal ``R n`` is at most the world offset ``d + (R n) . t`` plus
    the margin; two half-spaces (one tilted and moved) give each pair once, static bodies none."""
    from tests._bodies import box_body, ground_body

    rng = np.random.default_rng(4)
    g1 = ground_body(size=50.0)
    g2 = ground_body(size=50.0, rot=random_rotation(rng), name="tilted")
    g2.pose[:3, 3] = (0.3, -0.2, 0.5)
    bodies = [g1]
    for k in range(40):
        pos = rng.uniform(-2.0, 2.0, 3)
        motion = "static" if k % 7 == 0 else "dynamic"
        bodies.append(box_body(f"b{k}", rng.uniform(0.1, 0.5, 3), pos, motion=motion, rot=random_rotation(rng)))
        if k == 20:
            bodies.append(g2)
    w = World(bodies, exact=False)
    w.sync()

    def reference():
        rows, lo, hi = w._boxes
        want = set()
        for g in (0, bodies.index(g2)):
            pose = w.table.state.pose[g]
            n = pose[:3, :3] @ np.array([0.0, 1.0, 0.0])
            offset = 0.0 + float(n @ pose[:3, 3])
            for i, r in enumerate(rows):
                if w.table.motion[r] == 0:  # static
                    continue
                c, h = 0.5 * (lo[i] + hi[i]), 0.5 * (hi[i] - lo[i])
                if n @ c - np.abs(n) @ h <= offset + w.manager.margin:
                    want.add((min(g, int(r)), max(g, int(r))))
        return want

    for shift in ((0.3, -0.2, 0.5), (1.5, 0.7, -1.0)):  # the second call after the tilted plane moved
        w.table.state.pose[bodies.index(g2), :3, 3] = shift
        w._broad_pairs()
        pairs = w._ground_pairs().tolist()
        got = {tuple(p) for p in pairs}
        assert len(got) == len(pairs)  # each pair once
        want = reference()
        assert got == want and 0 < len(want) < 2 * 34
        assert any(bodies.index(g2) in p for p in want) and any(0 in p for p in want)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.floats(allow_nan=True, allow_infinity=True, width=64), max_size=70),
       st.lists(st.sampled_from([math.nan, math.inf, -math.inf, 1e308, -1e308]), max_size=3), st.randoms())
def test_finite_check_equals_numpys(values, specials, rnd):
    # World.repair's fast check (app.world.world._finite: a sum of x * 0 taken in vector lanes)
    # against numpy, on any floats, with NaNs, infinities and huge values mixed in anywhere
    from app.world.world import _finite

    for s in specials:
        values.insert(rnd.randint(0, len(values)), s)
    x = np.array(values, dtype=np.float64)
    assert _finite(x) == bool(np.isfinite(x).all())
