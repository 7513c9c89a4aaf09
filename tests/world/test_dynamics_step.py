"""The dynamics of a step as one compiled call (app/world/dynamics_step.py), and the detection of a
step as two compiled calls around the hull batch (app/world/contacts.py), against the steps composed
from Python: the same kernels in the same order, so every pose, velocity, spin and stored contact
must be equal bit for bit, step after step."""

import numpy as np
import pytest

import app.world.dynamics_step as dynamics_step
from app.world.world import World, rotation

from .._bodies import ball_body, box_body, ground_body


def composed(world, dynamics=True, narrow=True):
    """``world`` stepping by the composed dynamics and / or narrow phase (and so not by the world's
    one call, app/world/world_step.py)."""
    world._one_call_world = False
    if dynamics:
        world.dynamics._one_call = lambda *args: False
    if narrow:
        world.manager._one_call_narrow = False
    return world


def boxes(restitution=None, kinematic=False, ground_last=False):
    """Boxes dropped in two layers (some turned, so they land on edges and topple onto each other),
    a ball, and optionally a kinematic box sliding through them."""
    bodies = [ground_body(size=20.0)]
    rng = np.random.default_rng(7)
    for k in range(12):
        pos = (1.1 * (k % 4) - 1.6, 0.4 + 0.9 * (k // 4), 0.3 * (k % 3))
        b = box_body(f"box{k}", (0.25, 0.2, 0.3), pos, motion="dynamic",
                     rot=rotation((0.3, 1.0, 0.2), float(rng.uniform(-0.6, 0.6))))
        b.restitution = restitution
        bodies.append(b)
    bodies.append(ball_body("ball", 0.2, (0.0, 3.5, 0.1), velocity=(0.5, -2.0, 0.0)))
    if kinematic:
        bodies.append(box_body("pusher", (0.2, 0.3, 1.5), (-3.0, 0.31, 0.0), velocity=(1.5, 0.0, 0.0)))
    if ground_last:  # (the half-space is then B of its pairs: the flipped batch)
        bodies.append(bodies.pop(0))
    return bodies


def states(world):
    return (np.array([b.pose for b in world.bodies]), np.array([b.velocity for b in world.bodies]),
            np.array([b.spin for b in world.bodies]))


@pytest.mark.parametrize("options", [{}, {"restitution": 0.6}, {"kinematic": True}, {"warm": False},
                                     {"iterations": 3, "tolerance": 0.0}])
def test_one_call_step_equals_composed_step(options, monkeypatch):
    calls = []
    kernel = dynamics_step.dynamics_step_serial

    def counted(*args):
        calls.append(1)
        return kernel(*args)

    monkeypatch.setattr(dynamics_step, "dynamics_step_serial", counted)
    worlds = []
    for _ in range(2):
        w = World(boxes(options.get("restitution"), options.get("kinematic", False)), dt=1 / 60, exact=False)
        w._one_call_world = False  # (the dynamics' own one call: the world's is tested in test_world_step.py)
        w.dynamics.warm_start = options.get("warm", True)
        w.dynamics.iterations = options.get("iterations", 10)
        w.dynamics.tolerance = options.get("tolerance", w.dynamics.tolerance)
        worlds.append(w)
    one, old = worlds[0], composed(worlds[1], narrow=False)
    touched = 0
    rows_seen = set()
    for step in range(150):
        n, rows = len(calls), len(one.manager.store)  # (the step solves the contacts found by the last)
        one.step()
        # every step goes through the one call: no rows (falling free), one row, many
        assert len(calls) - n == 1, f"step {step}: the path taken"
        rows_seen.add(min(rows, 2))
        old.step()
        assert len(calls) == n + 1, "the composed world took the one-call path"
        touched = max(touched, one.dynamics.stats["contact_points"])
        for a, b in zip(states(one), states(old)):
            assert np.array_equal(a, b), f"step {step}: the one-call step differs from the composed one"
        assert np.array_equal(one.manager.store.impulse, old.manager.store.impulse)
        assert one.dynamics.stats == old.dynamics.stats
    assert rows_seen >= {0, 2}  # (the first steps fall before the first contact; then many rows)
    assert touched > 20  # (the scene had contacts to solve)


@pytest.mark.parametrize("rows", [0, 1, 3])
def test_store_columns_are_the_stores_own(rows):
    """The columns the one-call step cuts from the store's words are views of the store's memory,
    equal to its columns (what the composed step reads), and writing the impulses through them
    writes the store's."""
    from app.world.contact_store import ContactStore, store_columns

    rng = np.random.default_rng(rows)
    store = ContactStore(rows)
    for name in ("keys", "count", "normal", "points_a", "points_b", "depths", "impulse"):
        col = getattr(store, name)
        col[...] = rng.integers(0, 9, col.shape) if col.dtype == np.int64 else rng.normal(size=col.shape)
    got = store_columns(store.words)
    for name, col in zip(("keys", "count", "normal", "points_a", "points_b", "depths", "impulse"), got):
        assert col.shape == getattr(store, name).shape and np.array_equal(col, getattr(store, name)), name
    got[6][...] = 7.5
    assert np.all(store.impulse == 7.5)


def test_grab_takes_the_composed_path(monkeypatch):
    """A mouse joint is solved by the composed step (the one call has none)."""
    w = World(boxes(), dt=1 / 60, exact=False)
    for _ in range(5):
        w.step()
    monkeypatch.setattr(dynamics_step, "dynamics_step_serial", None)  # (calling it now would fail)
    b = w.bodies[1]
    w.dynamics.grab_body(b, b.pose[:3, 3].copy(), b.pose[:3, 3] + (0.0, 1.0, 0.0))
    for _ in range(5):
        w.step()
    assert b.velocity[1] > 0.0



@pytest.mark.parametrize("ground_last", [False, True])
def test_one_call_halfspace_batch_equals_composed(ground_last):
    worlds = [World(boxes(ground_last=ground_last), dt=1 / 60, exact=False) for _ in range(2)]
    one, old = worlds[0], composed(worlds[1], dynamics=False)
    touched = 0
    for _ in same_steps(one, old, 120):
        touched = max(touched, int(one.manager.store.count.sum()))
    assert touched > 20


def same_steps(one, old, steps):
    """Step both worlds ``steps`` times; after each step assert that the stores, the states, the
    events and the detection counts are equal, then yield the step."""
    for step in range(steps):
        one.step()
        old.step()
        assert np.array_equal(one.manager.store.data, old.manager.store.data), f"step {step}: the stores differ"
        for x, y in zip(states(one), states(old)):
            assert np.array_equal(x, y), f"step {step}: the states differ"
        assert [(e.kind, e.a.name, e.b.name, e.points) for e in one.events] == \
            [(e.kind, e.a.name, e.b.name, e.points) for e in old.events], f"step {step}: the events differ"
        assert one.manager.stats == old.manager.stats, f"step {step}: the counts differ"
        yield step


def test_one_call_halfspace_batch_names_a_bad_pose():
    """A pose that is not rigid reaching the batch raises as collide_halfspace_pairs does."""
    messages = []
    for one in (True, False):
        w = World([ground_body(), box_body("box", (0.2, 0.2, 0.2), (0.0, 0.2, 0.0), motion="dynamic")], dt=1 / 60,
                  exact=False)
        w.manager._one_call_narrow = one
        w.step()
        w.table.state.pose[1, :3, :3] *= 1.5  # behind repair's back: straight into the narrow phase
        with pytest.raises(ValueError, match=r"poses\[0\]: is not a rigid transform") as err:
            w._collide(w.table)
        messages.append(str(err.value))
    assert messages[0] == messages[1]


def jumble(mesh_last=False):
    """Every route of the detection: boxes, balls, capsules and U shapes (three pieces) dropped on a
    ground (half-space) and on a static triangle-mesh slab (the pieces against it in the mesh batch,
    the slab A of its pairs, or B when ``mesh_last``), some turned so that they tumble into each
    other."""
    import trimesh

    from obbcollide import OBBTree
    from obbcollide.shapes import Capsule, TriMesh

    from app.world.body import Body
    from app.world.world import pose_matrix

    from .._bodies import u_body

    slab = trimesh.creation.box(extents=(2.0, 0.2, 2.0)).subdivide()
    v, f = np.asarray(slab.vertices, float), np.asarray(slab.faces, np.int64)
    tree = OBBTree(v, f)
    bodies = [ground_body(size=20.0),
              Body("slab", v, f, tree, pose_matrix(None, (2.0, 0.1, 0.0)), (0.5, 0.5, 0.5), motion="static",
                   shapes=[TriMesh(tree)])]
    rng = np.random.default_rng(3)
    for k in range(12):
        pos = (2.0 * (k % 2) + rng.uniform(-0.5, 0.5), 0.6 + 0.5 * (k // 2), rng.uniform(-0.5, 0.5))
        rot = rotation(rng.normal(size=3), float(rng.uniform(-0.8, 0.8)))
        kind = k % 4
        if kind == 0:
            bodies.append(box_body(f"b{k}", (0.2, 0.15, 0.25), pos, motion="dynamic", rot=rot))
        elif kind == 1:
            bodies.append(ball_body(f"s{k}", 0.18, pos))
        elif kind == 2:
            cap = box_body(f"c{k}", (0.1, 0.3, 0.1), pos, motion="dynamic", rot=rot)
            cap.shapes = [Capsule(0.1, 0.2)]
            bodies.append(cap)
        else:
            bodies.append(u_body(f"u{k}", pos, rot, motion="dynamic", density=None))
    bodies.append(box_body("slab box", (0.2, 0.15, 0.2), (2.7, 0.5, 0.75), motion="dynamic",
                           rot=rotation((1.0, 0.2, 0.4), 0.5)))
    cap = box_body("slab capsule", (0.1, 0.3, 0.1), (1.3, 0.5, -0.75), motion="dynamic", rot=rotation((0, 0, 1), 1.2))
    cap.shapes = [Capsule(0.1, 0.2)]
    bodies.append(cap)
    if mesh_last:
        bodies.append(bodies.pop(1))
    return bodies


@pytest.mark.parametrize("hull_response, mesh_last", [("sat", False), ("gjk", False), ("sat", True)])
def test_fused_detection_equals_composed_on_every_route(hull_response, mesh_last, monkeypatch):
    """The jumble: the half-space, hull, sphere, mesh and one-by-one routes (and the hull pairs one by
    one by GJK when asked): the stores, the poses, the events and the counts of the two worlds equal at
    every step. The fused detection's mesh batch (one compiled call per mesh) against the composed
    one's (:meth:`ContactManager._mesh_pairs`, Python around the batch call)."""
    import app.world.contacts as contacts

    routed = []
    kernel = contacts._mesh_route

    def counted(rows, flip, *args):
        routed.append((len(rows), flip))
        return kernel(rows, flip, *args)

    monkeypatch.setattr(contacts, "_mesh_route", counted)
    worlds = [World(jumble(mesh_last), dt=1 / 60, exact=False) for _ in range(2)]
    for w in worlds:
        w.manager.hull_response = hull_response
    one, old = worlds[0], composed(worlds[1], dynamics=False)
    kinds = set()
    for _ in same_steps(one, old, 90):
        kinds |= {(type(pm.a.shapes[pm.piece_a]).__name__, type(pm.b.shapes[pm.piece_b]).__name__)
                  for pm in one.manifolds}
    # every route was taken
    assert {("HalfSpace", "Hull"), ("HalfSpace", "Sphere"), ("HalfSpace", "Capsule"), ("Hull", "Hull"),
            ("Hull", "Sphere"), ("Sphere", "Hull"), ("Capsule", "Hull")} <= kinds, kinds
    mesh_kinds = {k[1] if mesh_last else k[0] for k in kinds if "TriMesh" in k}
    assert mesh_kinds == {"TriMesh"} and {"Hull", "Sphere", "Capsule"} <= {
        k[0] if mesh_last else k[1] for k in kinds if "TriMesh" in k}, kinds
    # the fused world's mesh pairs went through the mesh batch, the mesh on the side the bodies put it
    assert sum(n for n, _ in routed) > 100 and {flip for _, flip in routed} == {not mesh_last}


def trough(n=6, split=False):
    """An open V-shaped trough along z (two walls at 45 degrees meeting at y = 0, each cut into n x n
    cells of two triangles), as a static mesh body: a piece resting in it touches both walls, two
    triangle groups of one piece pair. ``split``: each wall a static mesh body of its own (a piece
    then meets two meshes)."""
    from obbcollide import OBBTree
    from obbcollide.shapes import TriMesh

    from app.world.body import Body

    s = np.linspace(0.0, 1.0, n + 1)
    z = np.linspace(-1.0, 1.0, n + 1)
    walls = []
    for side in (-1.0, 1.0):
        verts, faces = [], []
        for a in s:
            for c in z:
                verts.append((side * a, a, c))
        for i in range(n):
            for j in range(n):
                p, q, r, t = i * (n + 1) + j, i * (n + 1) + j + 1, (i + 1) * (n + 1) + j, (i + 1) * (n + 1) + j + 1
                faces += [(p, r, q), (q, r, t)] if side > 0 else [(p, q, r), (q, t, r)]
        walls.append((np.array(verts, float), np.array(faces, np.int64)))
    if not split:
        (va, fa), (vb, fb) = walls
        walls = [(np.concatenate([va, vb]), np.concatenate([fa, fb + len(va)]))]
    out = []
    for k, (v, f) in enumerate(walls):
        tree = OBBTree(v, f)
        out.append(Body(f"trough{k}", v, f, tree, np.eye(4), (0.5, 0.5, 0.5), motion="static",
                        shapes=[TriMesh(tree)]))
    return out


@pytest.mark.parametrize("mesh_last, split", [(False, False), (True, False), (False, True), (True, True)])
def test_fused_mesh_batch_keeps_a_pieces_groups_in_key_order(mesh_last, split):
    """Boxes, balls and capsules dropped into a V trough: each touches both walls, so a piece pair has
    two rows (the walls' triangle groups, keyed by their smallest faces), which the mesh batch must
    store in key order as the composed path sorts them; with the walls two bodies (``split``) a
    piece meets two meshes in one step (two calls, their rows joined in key order, and each piece's
    candidate cache taken again for the other wall). The two worlds stay equal at every step."""
    def bodies():
        out = list(trough(split=split))
        for k in range(6):
            pos = (0.05 * (k % 3) - 0.05, 0.6 + 0.45 * k, 0.6 * (k % 3) - 0.6)
            rot = rotation((0.2, 1.0, 0.3), 0.4 * k)
            if k % 3 == 0:
                out.append(box_body(f"b{k}", (0.15, 0.12, 0.18), pos, motion="dynamic", rot=rot))
            elif k % 3 == 1:
                out.append(ball_body(f"s{k}", 0.15, pos))
            else:
                from obbcollide.shapes import Capsule

                cap = box_body(f"c{k}", (0.1, 0.25, 0.1), pos, motion="dynamic", rot=rotation((0, 0, 1), 1.3))
                cap.shapes = [Capsule(0.1, 0.15)]
                out.append(cap)
        if mesh_last:
            walls = [b for b in out if b.name.startswith("trough")]
            out = [b for b in out if not b.name.startswith("trough")] + walls
        return out

    one, old = World(bodies(), dt=1 / 60, exact=False), composed(World(bodies(), dt=1 / 60, exact=False),
                                                                   dynamics=False)
    both_walls = set()
    for _ in same_steps(one, old, 80):
        keys = one.manager.store.keys
        touching = {}  # dynamic body -> the mesh rows (a body row and group) it touches
        for i, j, _, _, g in keys.tolist():
            a, b = one.bodies[i], one.bodies[j]
            mesh, other = (a, b) if a.name.startswith("trough") else (b, a)
            if mesh.name.startswith("trough"):
                touching.setdefault(other.name, set()).add((mesh.name, g))
        both_walls |= {name for name, rows in touching.items() if len(rows) > 1}
    assert {name[0] for name in both_walls} == {"b", "s", "c"}, both_walls  # (a box, a ball, a capsule in the groove)


def test_fused_detection_equals_composed_until_all_sleep():
    """Boxes dropped until every one sleeps (then no pair is active, and the fused detection keeps
    the rows and the events without its second call): equal to the composed one at every step."""
    worlds = [World([b for b in boxes() if b.name != "ball"], dt=1 / 60, exact=False) for _ in range(2)]
    one, old = worlds[0], composed(worlds[1], dynamics=False)
    asleep = 0
    for _ in same_steps(one, old, 300):
        asleep += all(b.sleeping for b in one.bodies if b.moves)
    assert asleep > 30 and one.manager.stats["points"] > 20  # at rest on their contacts



def test_tree_broad_phase_in_one_call_equals_composed():
    """The world's broad phase over the dynamic AABB tree runs as one compiled call (sweeps, boxes,
    the tree, the half-spaces' pairs); a subclass of the tree takes the calls one by one. Both give the
    same candidate pairs, tree statistics and states at every step of the jumble (half-space, hull,
    sphere and mesh bodies)."""
    from obbcollide.broad_phase.aabb_tree import DynamicAABBTree

    class Composed(DynamicAABBTree):
        pass  # (World._collide takes the one call for DynamicAABBTree itself only)

    one, old = World(jumble(), dt=1 / 60, exact=False), World(jumble(), dt=1 / 60, exact=False)
    assert type(one.broad) is DynamicAABBTree
    old.broad = Composed()
    grounds = 0
    for step in range(90):
        one.step()
        old.step()
        assert np.array_equal(one.candidate_pairs, old.candidate_pairs), f"step {step}: the candidates differ"
        assert one.broad.stats == old.broad.stats, f"step {step}: the tree's counts differ"
        for x, y in zip(states(one), states(old)):
            assert np.array_equal(x, y), f"step {step}: the states differ"
        grounds += int((one.candidate_pairs == 0).any(axis=1).sum())
    assert grounds > 50 and len(one.candidate_pairs) > 10  # (pairs with the ground, and between bodies)


def test_tree_broad_phase_in_one_call_names_a_non_finite_box():
    """A body whose bounding box is not finite stops the one-call broad phase as it stops the composed
    one, before the tree changes: the world then steps on as a twin that never met the fault."""
    w, ref = World(boxes(), dt=1 / 60, exact=False), World(boxes(), dt=1 / 60, exact=False)
    for _ in range(30):
        w.step()
        ref.step()
    good = w.table.root_half.copy()
    w.table.root_half[3] = np.inf
    with pytest.raises(ValueError, match="bounding box is not finite"):
        w._collide(w.table)
    w.table.root_half[:] = good
    for step in range(30):
        w.step()
        ref.step()
        assert np.array_equal(w.candidate_pairs, ref.candidate_pairs), f"step {step}: the candidates differ"
        for x, y in zip(states(w), states(ref)):
            assert np.array_equal(x, y), f"step {step}: the states differ"
    w.broad.validate()
    assert len(w.candidate_pairs) > 5
