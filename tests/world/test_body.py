"""The packed motion state of the bodies (app/world/body.py: Body, BodyTable) as the world uses it.

A body's pose, velocity, spin, sleeping and still live in a row of a table's
arrays; ``body.pose`` is a view of that row. The references here are the
semantics the rest of the code relies on: an edit through the body is what the
world reads (its AABBs, its table), the world's step is what the body then
holds, and a body's trajectory does not depend on which table holds it (a body
alone in its own world is the twin every churned or shared body is compared
with). Derived arrays are compared with the bodies' mass properties and, for a
box, with the closed-form mass and inertia.
"""

import numpy as np
import pytest

import obbcollide as co
from app.world.body import DYNAMIC, KINEMATIC, STATIC, Body, BodyTable
from app.scene.loader import mass_properties
from app.world.world import World, pose_matrix
from obbcollide.shapes import Hull

from .._bodies import ball_body, box_body, ground_body
from .._reference import random_rotation

DT = 1 / 120


def twins(make):
    """Two identical sets of bodies from the same builder (the second is the reference)."""
    return make(), make()


def state(b):
    return b.pose.copy(), b.velocity.copy(), b.spin.copy()


def assert_same_state(b, ref, atol=1e-12):
    for x, y, what in zip(state(b), state(ref), ("pose", "velocity", "spin")):
        np.testing.assert_allclose(x, y, rtol=0, atol=atol, err_msg=f"{b.name} {what}")


def assert_table_is_bodies(w):
    """Row k of the world's table is bodies[k]: same values, same memory."""
    t = w.sync()
    st = t.state
    assert len(t) == len(w.bodies)
    for k, b in enumerate(w.bodies):
        np.testing.assert_array_equal(st.pose[k], b.pose)
        np.testing.assert_array_equal(st.velocity[k], b.velocity)
        np.testing.assert_array_equal(st.spin[k], b.spin)
        assert st.sleeping[k] == b.sleeping and st.still[k] == b.still
        assert np.shares_memory(b.pose, st.pose) and np.shares_memory(b.velocity, st.velocity)
        assert np.shares_memory(b.spin, st.spin)


def flyers():
    """Bodies far apart in the air, out of each other's reach: kinematic boxes with velocities and spins,
    dynamic boxes and balls with spins (no contacts, so each one's motion is its own)."""
    rng = np.random.default_rng(5)
    out = []
    for k in range(6):
        pos = (4.0 * k, 50.0, 0.0)
        if k % 3 == 0:
            b = box_body(f"kin{k}", (0.2, 0.3, 0.1), pos, velocity=rng.normal(size=3), rot=random_rotation(rng))
        elif k % 3 == 1:
            b = box_body(f"box{k}", (0.2, 0.1, 0.3), pos, motion="dynamic", velocity=rng.normal(size=3),
                         rot=random_rotation(rng))
        else:
            b = ball_body(f"ball{k}", 0.2, pos, velocity=rng.normal(size=3))
        b.spin = rng.normal(size=3)
        out.append(b)
    return out


# -- views ------------------------------------------------------------------------------------


def test_pose_velocity_and_spin_are_views_of_the_worlds_rows():
    ground, box = ground_body(), box_body("box", (0.2, 0.3, 0.4), (0, 1, 0))
    w = World([ground, box], dt=DT)
    w.sync()
    before = w.world_aabbs()[1].copy()
    # in place, through the view
    box.pose[:3, 3] += (1.0, 2.0, 3.0)
    np.testing.assert_array_equal(w.world_aabbs()[1], before + (1.0, 2.0, 3.0))
    np.testing.assert_array_equal(w.table.state.pose[1], box.pose)
    # assignment copies: the world sees the new pose, and not later edits of the assigned array
    p = pose_matrix(random_rotation(np.random.default_rng(1)), (-1.0, 0.5, 2.0))
    box.pose = p
    np.testing.assert_array_equal(w.table.state.pose[1], p)
    np.testing.assert_allclose(w.world_aabbs()[1], box.world_aabb(), atol=1e-14)
    p[:3, 3] = 100.0
    assert box.pose[0, 3] == -1.0 and w.table.state.pose[1, 0, 3] == -1.0
    # the step reads velocity and spin from the rows: the kinematic box translates by v dt
    box.pose = np.eye(4)
    box.velocity[:] = 0.0
    box.velocity[0] += 3.0
    box.velocity = box.velocity + (0.0, 0.0, 1.0)  # assignment of an expression of the view
    np.testing.assert_array_equal(w.table.state.velocity[1], (3.0, 0.0, 1.0))
    w.step()
    np.testing.assert_allclose(box.pose[:3, 3], (3.0 * DT, 0.0, DT), atol=1e-15)
    # spin about the centre: a quarter turn about y in one step turns the rotation, keeps the centre
    box.velocity = (0.0, 0.0, 0.0)
    box.pose = pose_matrix(None, (0.0, 2.0, 0.0))
    box.spin[1] = (np.pi / 2) / DT
    np.testing.assert_array_equal(w.table.state.spin[1], (0.0, np.pi / 2 / DT, 0.0))
    w.step()
    np.testing.assert_allclose(box.pose[:3, :3], [[0, 0, 1], [0, 1, 0], [-1, 0, 0]], atol=1e-12)
    np.testing.assert_allclose(box.world_center(), (0.0, 2.0, 0.0), atol=1e-12)


def test_sleeping_and_still_round_trip_as_bool_and_float():
    b = ball_body("ball", 0.1, (0, 1, 0))
    w = World([ground_body(), b], dt=DT)
    w.sync()
    b.sleeping = 1
    assert b.sleeping is True and w.table.state.sleeping[1]
    b.still = 3
    assert isinstance(b.still, float) and b.still == 3.0 and w.table.state.still[1] == 3.0
    b.wake()
    assert b.sleeping is False and b.still == 0.0 and not w.table.state.sleeping[1]
    w.table.state.sleeping[1] = True  # the other way: what the dynamics writes, the body reads
    w.table.state.still[1] = 0.75
    assert b.sleeping is True and b.still == 0.75


def test_a_body_on_its_own_has_the_same_semantics():
    b = box_body("box", (0.1, 0.1, 0.1), (0, 0, 0))
    view = b.pose
    view[1, 3] = 4.0
    assert b.pose[1, 3] == 4.0
    p = np.eye(4)
    b.pose = p
    p[0, 3] = 9.0
    assert b.pose[0, 3] == 0.0
    b.velocity = [1, 2, 3]
    assert b.velocity.dtype == float and b.velocity.tolist() == [1.0, 2.0, 3.0]


# -- adoption -----------------------------------------------------------------------------------


def test_a_world_adopts_its_bodies_at_their_list_indices():
    bodies = [ground_body()] + flyers()
    want = [state(b) for b in bodies]
    w = World(bodies, dt=DT)
    w.sync()
    assert_table_is_bodies(w)
    for b, s in zip(bodies, want):  # adopting keeps every body's state
        for x, y in zip(state(b), s):
            np.testing.assert_array_equal(x, y)
    w.table.state.velocity[3] = (7.0, 8.0, 9.0)  # and the table's rows are the bodies'
    np.testing.assert_array_equal(bodies[3].velocity, (7.0, 8.0, 9.0))


def test_appending_and_removing_bodies_keeps_every_bodys_motion():
    """Churn one world (append, remove, step in between); each body moves as its twin does alone in its
    own world, stepped exactly when the body was in the churned world. A removed body keeps its last
    state and moves on its own."""
    a, ref = twins(flyers)
    alone = [World([r], dt=DT) for r in ref]
    w = World([ground_body()] + a[:3], dt=DT)
    members = set(range(3))

    def step(n):
        for _ in range(n):
            w.step()
            for k in members:
                alone[k].step()
        for k in range(len(a)):
            assert_same_state(a[k], ref[k])
        assert_table_is_bodies(w)

    step(5)
    w.bodies.append(a[3])
    members.add(3)
    step(5)
    w.bodies.extend(a[4:])
    members |= {4, 5}
    step(3)
    w.bodies.remove(a[1])  # a row in the middle: the rows after it move up
    members.discard(1)
    w.sync()
    assert_same_state(a[1], ref[1])  # kept its last state
    assert not np.shares_memory(a[1].pose, w.table.state.pose)
    step(7)
    w.bodies.remove(a[4])
    w.bodies.insert(1, a[1])  # back, at another index
    members = (members - {4}) | {1}
    step(4)
    # the removed body moves on its own, and the world does not see it
    boxes = w.world_aabbs().copy()
    a[4].pose[:3, 3] += 10.0
    ref[4].pose[:3, 3] += 10.0
    np.testing.assert_array_equal(w.world_aabbs(), boxes)
    alone[4].step()
    World([a[4]], dt=DT).step()
    assert_same_state(a[4], ref[4])
    assert [b.name for b in w.bodies] == ["ground", "box1", "kin0", "ball2", "kin3", "ball5"]


def test_a_world_rebuilt_from_the_same_bodies_continues_their_motion():
    """A new World over bodies that moved in another one starts from where they are."""
    a, ref = twins(flyers)
    w1 = World(a, dt=DT)
    w_ref = World(ref, dt=DT)
    for _ in range(10):
        w1.step()
        w_ref.step()
    w2 = World(list(reversed(a)), dt=DT)
    for _ in range(10):
        w2.step()
        w_ref.step()
    for x, r in zip(a, ref):
        assert_same_state(x, r)


def test_two_worlds_sharing_bodies_stepped_in_turn_each_see_the_latest_state():
    """Two worlds over the same bodies (other lists, other orders), stepped alternately: every step of
    either moves the bodies on from where the other left them, as one world stepped twice as often."""
    a, ref = twins(flyers)
    w1 = World([ground_body()] + a, dt=DT)
    w2 = World(a[::-1] + [box_body("far", (0.1, 0.1, 0.1), (0, 200, 0))], dt=DT)
    w_ref = World(ref, dt=DT)
    for k in range(12):
        (w1 if k % 2 == 0 else w2).step()
        w_ref.step()
        for x, r in zip(a, ref):
            assert_same_state(x, r)
        now = w1 if k % 2 == 0 else w2
        assert_table_is_bodies(now)
    # the table that lost the bodies knows it, and takes them back when used
    assert w1.table.state.robbed and not w2.table.state.robbed
    w1.sync()
    assert not w1.table.state.robbed and w2.table.state.robbed
    assert_table_is_bodies(w1)
    # edits through a body reach the world that holds it now, whichever that is
    a[0].pose[1, 3] = 77.0
    assert a[0].world_aabb()[:, 1].mean() == pytest.approx(77.0, abs=0.5)
    np.testing.assert_allclose(w2.world_aabbs()[len(a) - 1], a[0].world_aabb(), atol=1e-14)
    np.testing.assert_allclose(w1.world_aabbs()[1], a[0].world_aabb(), atol=1e-14)


def test_a_ball_dropped_in_two_worlds_stepped_in_turn_lands_and_rests():
    """Contacts across the switch: a ball falls onto the ground of two worlds stepped in turn; it stops
    on the ground (within 5 mm) as in one world."""
    def run(shared):
        ball = ball_body("ball", 0.1, (0, 0.6, 0))
        worlds = [World([ground_body(), ball], dt=DT)]
        if shared:
            worlds.append(World([ground_body(), box_body("far", (0.1, 0.1, 0.1), (5, 0.1, 0)), ball], dt=DT))
        low = np.inf
        for k in range(240):
            worlds[k % len(worlds)].step()
            low = min(low, ball.pose[1, 3] - 0.1)
        return ball, low

    one, low1 = run(False)
    two, low2 = run(True)
    assert low1 > -0.005 and low2 > -0.005, (low1, low2)
    assert two.pose[1, 3] == pytest.approx(0.1, abs=0.005)
    assert np.linalg.norm(two.velocity) < 0.01
    np.testing.assert_allclose(two.pose[:3, 3], one.pose[:3, 3], atol=0.005)


# -- derived: stale marks -----------------------------------------------------------------------


def test_giving_a_kinematic_box_mass_makes_it_fall():
    box = box_body("box", (0.2, 0.2, 0.2), (0, 1.0, 0))
    w = World([ground_body(), box], dt=DT)
    for _ in range(30):
        w.step()
    assert box.pose[1, 3] == 1.0 and w.table.motion[1] == KINEMATIC
    version = w.table.version
    box.motion = "dynamic"  # without mass it still moves kinematically
    assert w.table.state.stale
    w.step()
    assert w.table.motion[1] == KINEMATIC and w.table.version > version and not w.table.state.stale
    assert box.pose[1, 3] == 1.0
    box.mass = mass_properties(box.vertices, box.faces, 1000.0)
    for _ in range(60):
        w.step()
    assert w.table.motion[1] == DYNAMIC and w.table.inv_mass[1] == pytest.approx(1 / 64.0)
    assert box.pose[1, 3] == pytest.approx(0.2, abs=0.005)  # fell 0.8 m in 0.5 s (0.4 s free fall) and landed
    box.motion = "static"
    box.pose[1, 3] = 1.0
    box.velocity = (0.0, -1.0, 0.0)
    for _ in range(10):
        w.step()
    assert w.table.motion[1] == STATIC and w.table.inv_mass[1] == 0.0 and box.pose[1, 3] == 1.0


def test_setting_motion_dynamic_on_a_body_with_mass_makes_it_fall():
    box = box_body("box", (0.2, 0.2, 0.2), (0, 1.0, 0), motion="dynamic")
    box.motion = "kinematic"
    w = World([ground_body(), box], dt=DT)
    for _ in range(30):
        w.step()
    assert box.pose[1, 3] == 1.0
    box.motion = "dynamic"
    w.step()
    assert box.velocity[1] == pytest.approx(-9.81 * DT, rel=0.02) and box.pose[1, 3] < 1.0


def test_changing_shapes_friction_and_restitution_re_derives():
    box = box_body("box", (0.2, 0.2, 0.2), (0, 0.2, 0), motion="dynamic")
    w = World([ground_body(), box], dt=DT)
    w.sync()
    assert w.table.shape_count[1] == 1 and np.isnan(w.table.friction[1]) and np.isnan(w.table.restitution[1])
    box.friction, box.restitution = 0.25, 0.5
    box.shapes = box.shapes * 2
    t = w.sync()
    assert t.shape_count[1] == 2 and t.friction[1] == 0.25 and t.restitution[1] == 0.5
    box.shapes = []  # no shapes: no contacts, it falls through the ground
    for _ in range(30):
        w.step()
    assert w.table.shape_count[1] == 0 and box.pose[1, 3] < 0.0


# -- derived arrays ----------------------------------------------------------------------------


def test_derive_gives_inverse_mass_and_inertia_of_dynamic_bodies_only():
    hx, hy, hz = 0.1, 0.2, 0.3
    box = box_body("box", (hx, hy, hz), (0, 1, 0), motion="dynamic", density=500.0)
    twin = box_body("twin", (hx, hy, hz), (1, 1, 0), motion="dynamic")
    twin.mass = box.mass  # shared mass properties (derive inverts each once)
    ball = ball_body("ball", 0.2, (2, 1, 0))
    massless = box_body("massless", (0.1, 0.1, 0.1), (3, 1, 0))
    massless.motion = "dynamic"
    kin = box_body("kin", (0.1, 0.1, 0.1), (4, 1, 0), motion="dynamic")
    kin.motion = "kinematic"  # has mass, but the dynamics does not move it
    wall = box_body("wall", (0.1, 1, 1), (5, 1, 0), motion="static")
    bodies = [ground_body(), box, twin, ball, massless, kin, wall]
    t = BodyTable()
    assert t.adopt(bodies) and not t.adopt(bodies)  # the second time: nothing to do
    np.testing.assert_array_equal(t.motion, [STATIC, DYNAMIC, DYNAMIC, DYNAMIC, KINEMATIC, KINEMATIC, STATIC])
    np.testing.assert_array_equal(t.unbounded, [True] + [False] * 6)
    # the box against the closed form: m = rho 8 hx hy hz, I = m/3 diag(hy^2 + hz^2, ...)
    m = 500.0 * 8 * hx * hy * hz
    inertia = m / 3 * np.diag([hy * hy + hz * hz, hx * hx + hz * hz, hx * hx + hy * hy])
    for k in (1, 2):
        assert t.inv_mass[k] == pytest.approx(1 / m, rel=1e-12)
        np.testing.assert_allclose(t.inv_inertia[k], np.linalg.inv(inertia), rtol=1e-10, atol=1e-9)
        np.testing.assert_allclose(t.com[k], 0.0, atol=1e-14)
    # the ball against its own mass properties (its tessellation's)
    np.testing.assert_allclose(t.inv_inertia[3] @ ball.mass.inertia, np.eye(3), atol=1e-12)
    assert t.inv_mass[3] == pytest.approx(1 / ball.mass.mass, rel=1e-14)
    np.testing.assert_allclose(t.com[3], ball.mass.center, atol=0)
    for k in (0, 4, 5, 6):
        assert t.inv_mass[k] == 0.0 and not t.inv_inertia[k].any() and not t.com[k].any()
    # and the bounding data the broad phase uses
    for k, b in enumerate(bodies):
        assert t.radius[k] == pytest.approx(b.radius)
        np.testing.assert_array_equal(t.root_half[k], b.bound_half)
        assert np.all(b.bound_half >= b.tree.half_extents[0])
        assert t.shape_count[k] == len(b.shapes)


def test_derive_of_a_mass_centre_off_the_model_origin():
    """A box mesh shifted off its model origin: com is the shifted centre."""
    b = box_body("box", (0.1, 0.2, 0.3), (0, 1, 0), motion="dynamic")
    v = b.vertices + (0.5, -0.25, 0.125)
    shifted = Body("shifted", v, b.faces, co.OBBTree(v, b.faces), np.eye(4), (1, 1, 1), motion="dynamic",
                   mass=mass_properties(v, b.faces, 1000.0), shapes=[])
    t = BodyTable()
    t.adopt([shifted])
    np.testing.assert_allclose(t.com[0], (0.5, -0.25, 0.125), atol=1e-12)
    np.testing.assert_allclose(t.root_center[0], (0.5, -0.25, 0.125), atol=1e-12)


def test_an_empty_table():
    t = BodyTable()
    assert len(t) == 0 and t.motion.shape == (0,) and t.inv_inertia.shape == (0, 3, 3)
    t.adopt([])
    assert not t.adopt([])  # the same (empty) list again: nothing to do
    w = World([], dt=DT)
    w.step()
    assert w.world_aabbs().shape == (0, 2, 3)


# -- a body listed twice ------------------------------------------------------------------------


def test_a_body_listed_twice_does_not_crash_the_step():
    ball = ball_body("ball", 0.1, (0, 0.5, 0))
    box = box_body("box", (0.2, 0.2, 0.2), (1, 0.2, 0), motion="dynamic")
    w = World([ground_body(), ball, box, ball], dt=DT)
    for _ in range(120):
        w.step()
    boxes = w.world_aabbs()
    assert boxes.shape == (4, 2, 3) and np.all(np.isfinite(boxes))
    assert all(np.all(np.isfinite(b.pose)) for b in w.bodies)
    assert ball._row == 1 and ball._st is w.table.state  # the first row is the body's
    np.testing.assert_allclose(boxes[1], ball.world_aabb(), atol=1e-14)
    assert ball.pose[1, 3] == pytest.approx(0.1, abs=0.005)  # and it fell and rests on the ground
    assert all(pm.a is not pm.b for pm in w.manifolds)  # never in contact with itself
    assert w.table.motion[3] == STATIC and list(w.table.alias) == [0, 1, 2, 1]  # the copy is inert


# -- the bounding box holds the collision shapes ------------------------------------------------


def bulging_body(name, half, bulge, pos, motion="dynamic", rot=None):
    """A box mesh of half extents ``half`` whose two convex pieces (its halves along x) reach ``bulge``
    past its top and bottom faces, as a decomposition's hulls bulge out of the mesh they approximate."""
    b = box_body(name, half, pos, motion=motion, rot=rot)
    hx, hy, hz = half
    pieces = []
    for x0, x1 in ((-hx, 0.0), (0.0, hx)):
        corners = np.array([[x, y, z] for x in (x0, x1) for y in (-hy - bulge, hy + bulge) for z in (-hz, hz)])
        pieces.append(Hull.from_points(corners))
    b.shapes = pieces
    return b


def test_the_bounding_box_holds_pieces_that_bulge_out_of_the_mesh():
    rng = np.random.default_rng(3)
    for _ in range(10):
        b = bulging_body("b", (0.3, 0.2, 0.1), float(rng.uniform(0.001, 0.02)), rng.uniform(-1, 1, 3),
                         rot=random_rotation(rng))
        lo, hi = b.world_aabb()
        for h in b.shapes:  # brute force: every piece vertex in the world
            w = h.core @ b.pose[:3, :3].T + b.pose[:3, 3]
            assert np.all(w >= lo - 1e-12) and np.all(w <= hi + 1e-12)
        # grown only where the pieces reach out (y), the rest is the root OBB's
        bulge = b.bound_half - b.tree.half_extents[0]
        axis = int(np.argmax(np.abs(b.tree.axes[0][:, 1])))  # the root OBB's axis along model y
        assert bulge[axis] > 0 and np.delete(bulge, axis) == pytest.approx(0.0, abs=1e-12)
        assert b.radius == pytest.approx(float(np.linalg.norm(b.bound_half)))
    # shapes inside the mesh's box leave it as it is; a ball's sphere is its box's inscribed sphere
    box = box_body("box", (0.1, 0.2, 0.3), (0, 0, 0))
    np.testing.assert_array_equal(box.bound_half, box.tree.half_extents[0])
    ball = ball_body("ball", 0.25, (0, 0, 0))
    np.testing.assert_allclose(ball.bound_half, 0.25, rtol=0, atol=1e-9)
    # replacing the shapes replaces the box, and the world's table follows
    w = World([box], dt=DT)
    w.step()
    box.shapes = [Hull.from_points(np.array([[0.0, 0.0, 0.0], [0.5, 0.0, 0.0], [0.0, 0.1, 0.0], [0.0, 0.0, 0.1]]))]
    assert box.bound_half[int(np.argmax(np.abs(box.tree.axes[0][:, 0])))] == pytest.approx(0.5)
    w.step()
    np.testing.assert_array_equal(w.table.root_half[0], box.bound_half)
