"""Persistent manifolds and contact events (app/world/contacts.py) through the world's step.

References: the same narrow phase run on every piece pair (the mid phase may
skip a pair only when it has no contact), analytic resting depths, and the
step at which a body moving at a known speed first touches the ground.
"""

import math

import numpy as np
import pytest
import trimesh

import obbcollide as co
from app.world.contacts import ContactManager
from app.world.world import Body, World, pose_matrix
from obbcollide.narrow_phase import collide_shapes, flip_manifold
from obbcollide.shapes import Hull

from .._bodies import ball_body, box_body, ground_body, u_body
from .._reference import random_rotation


def test_box_falling_on_the_ground_begins_persists_and_ends():
    dt = 0.01
    box = box_body("box", (0.5, 0.5, 0.5), (0, 1.0, 0), velocity=(0, -1.0, 0))
    w = World([ground_body(), box], dt=dt, margin=0.05)
    kinds = []
    for k in range(60):
        w.step()
        kinds.append([e.kind for e in w.events])
        bottom = box.pose[1, 3] - 0.5
        touching = bottom <= 1e-12
        assert bool(w.manager.touching) == touching, (k, bottom)
    first = next(k for k, e in enumerate(kinds) if e)
    assert kinds[first] == ["begin"]
    assert all(e == ["persist"] for e in kinds[first + 1:])
    # 0.5 / (1 m/s * 0.01 s) = step 50 (index 49) puts the bottom exactly at 0
    assert first == 49
    pm = w.manifolds[0]
    assert len(pm.manifold.depths) == 4
    np.testing.assert_allclose(pm.manifold.depths, 0.5 - box.pose[1, 3], atol=1e-9)
    box.velocity = np.array([0, 20.0, 0])  # 0.2 up in one step: 0.1 clear of the ground
    w.step()
    assert [e.kind for e in w.events] == ["end"]
    assert not w.manager.touching


def test_resting_contacts_keep_their_ids_and_age():
    box = box_body("box", (0.5, 0.25, 0.5), (0, 0.24, 0), rot=None)
    w = World([ground_body(), box], margin=0.02)
    w.step()
    pm = w.manifolds[0]
    ids = sorted(pm.manifold.ids.tolist())
    pm.impulses[:] = np.arange(len(pm.impulses) * 3).reshape(-1, 3)  # as a solver would leave them
    carried = {int(i): imp.copy() for i, imp in zip(pm.manifold.ids, pm.impulses)}
    age = pm.age.copy()
    for k in range(5):
        box.pose[:3, 3] += (1e-4, 0, 0)  # a small slide keeps the features
        w.step()
        pm = w.manifolds[0]
        assert sorted(pm.manifold.ids.tolist()) == ids
        np.testing.assert_array_equal(pm.age, age + k + 1)  # one detection a step
        for i, imp in zip(pm.manifold.ids, pm.impulses):
            np.testing.assert_array_equal(imp, carried[int(i)])


def test_a_new_point_starts_with_zero_impulse():
    box = box_body("box", (0.5, 0.25, 0.5), (0, 0.3, 0), rot=None)
    tilt = pose_matrix(co_rot(0.2), (0, 0.25 + 0.5 * math.sin(0.2) - 0.01, 0))
    box.pose = tilt  # on one edge: 2 points
    w = World([ground_body(), box], margin=0.0)
    w.step()
    pm = w.manifolds[0]
    assert len(pm.manifold.depths) == 2
    pm.impulses[:] = 1.0
    box.pose = pose_matrix(None, (0, 0.24, 0))  # flat: 4 points, two of them new
    w.step()
    pm = w.manifolds[0]
    assert len(pm.manifold.depths) == 4
    assert np.count_nonzero(pm.age == 1) >= 2
    np.testing.assert_array_equal(pm.impulses[pm.age == 1], 0.0)


def co_rot(angle):
    c, s = math.cos(angle), math.sin(angle)
    return np.array([[c, -s, 0], [s, c, 0], [0, 0, 1]])


@pytest.mark.parametrize("seed", range(12))
def test_mid_phase_loses_no_piece_pair(seed):
    rng = np.random.default_rng(seed)
    a = u_body("a", rng.uniform(-0.3, 0.3, 3), random_rotation(rng))
    b = u_body("b", rng.uniform(-0.3, 0.3, 3), random_rotation(rng))
    mgr = ContactManager(margin=0.02)
    mgr.update([a, b], [(0, 1)])
    got = {(pm.piece_a, pm.piece_b): pm.manifold for pm in mgr.manifolds.values()}
    expected = {}
    for p, sa in enumerate(a.shapes):
        for q, sb in enumerate(b.shapes):
            m = collide_shapes(sa, a.pose, sb, b.pose, 0.02)
            if len(m.depths):
                expected[(p, q)] = m
    assert set(got) == set(expected)
    for key, m in expected.items():
        np.testing.assert_allclose(np.sort(got[key].depths), np.sort(m.depths), atol=1e-12)


def test_every_broad_phase_gives_the_same_manifolds():
    rng = np.random.default_rng(4)
    bodies = [ground_body()]
    for k in range(25):
        bodies.append(box_body(f"b{k}", rng.uniform(0.1, 0.4, 3), rng.uniform((-2, 0, -2), (2, 1.5, 2)),
                               rot=random_rotation(rng)))
    result = {}
    for name in ("brute", "sap", "grid", "octree", "tree"):
        w = World(bodies, broad_phase=name, margin=0.01)
        w.collide()
        result[name] = sorted((bodies.index(pm.a), bodies.index(pm.b), len(pm.manifold.depths),
                               round(float(pm.manifold.depths.max()), 12)) for pm in w.manifolds)
    assert len(result["brute"]) > 5  # a scene with contacts
    for name, r in result.items():
        assert r == result["brute"], name


def test_static_pairs_are_skipped_and_removed_bodies_end():
    a = box_body("a", (0.5, 0.5, 0.5), (0, 0, 0), motion="static")
    b = box_body("b", (0.5, 0.5, 0.5), (0.9, 0, 0), motion="static")
    c = box_body("c", (0.5, 0.5, 0.5), (0, 0.9, 0))
    w = World([a, b, c])
    w.collide()
    pairs = {(pm.a.name, pm.b.name) for pm in w.manifolds}
    assert pairs == {("a", "c"), ("b", "c")}  # a-b overlap but both are static
    assert sorted(e.kind for e in w.events) == ["begin", "begin"]
    w.bodies.remove(c)
    w.collide()
    assert sorted((e.kind, e.b.name) for e in w.events) == [("end", "c"), ("end", "c")]


def test_sphere_rolling_on_the_ground_through_the_world():
    ball = ball_body("ball", 0.5, (0, 0.49, 0), motion="kinematic", velocity=(1.0, 0, 0))
    w = World([ground_body(), ball], dt=0.01)
    for _ in range(20):
        w.step()
        (pm,) = w.manifolds
        assert pm.manifold.depths[0] == pytest.approx(0.01, abs=1e-12)
        np.testing.assert_allclose(pm.manifold.points_b[0], ball.pose[:3, 3] - (0, 0.5, 0), atol=1e-12)
    assert [e.kind for e in w.events] == ["persist"]


def test_a_box_on_a_static_triangle_mesh_gets_the_mesh_manifolds():
    """Convex piece against a TriMesh through the world: the manifolds are those of
    collide_convex_trimesh, keyed by triangle group, and they persist (ages grow)."""
    from obbcollide.convex_mesh import collide_convex_trimesh
    from obbcollide.shapes import TriMesh

    m = trimesh.creation.box(extents=(4.0, 0.2, 4.0))
    m = m.subdivide().subdivide()  # a tessellated slab: many coplanar triangles on top
    v, f = np.asarray(m.vertices, float), np.asarray(m.faces, np.int64)
    tree = co.OBBTree(v, f)
    floor = Body("floor", v, f, tree, pose_matrix(None, (0, -0.1, 0)), (0.5, 0.5, 0.5), motion="static",
                 shapes=[TriMesh(tree)])
    box = box_body("box", (0.3, 0.3, 0.3), (0.1, 0.3 - 0.002, 0.2), rot=co_rot(0.0))
    w = World([floor, box], margin=0.01)
    w.collide()
    expected = collide_convex_trimesh(box.shapes[0], box.pose, floor.shapes[0], floor.pose, 0.01)
    expected = {g: flip_manifold(mm) for g, mm in expected if len(mm.depths)}
    got = {key[4]: pm for key, pm in w.manager.manifolds.items()}
    assert set(got) == set(expected) and got
    for g, pm in got.items():
        assert pm.a is floor and pm.b is box
        np.testing.assert_allclose(np.sort(pm.manifold.depths), np.sort(expected[g].depths), atol=1e-12)
        np.testing.assert_allclose(pm.manifold.normal, expected[g].normal, atol=1e-12)
        assert pm.manifold.kind == expected[g].kind
    assert sum(len(pm.manifold.depths) for pm in got.values()) >= 3  # the box's face on the slab
    np.testing.assert_allclose(max(pm.manifold.depths.max() for pm in got.values()), 0.002, atol=1e-9)
    w.collide()
    assert all(np.all(pm.age == 2) for pm in w.manager.manifolds.values())
    assert [e.kind for e in w.events] == ["persist"]


@pytest.mark.parametrize("ground_first", [True, False])
def test_a_ground_listed_after_the_body_gives_the_same_contact(ground_first):
    """The half-space batch turns its manifolds round when the ground is the pair's second body."""
    ball = ball_body("ball", 0.1, (0.0, 0.095, 0.0), motion="kinematic")
    box = box_body("box", (0.1, 0.1, 0.1), (1.0, 0.098, 0.0))
    bodies = [ground_body(), ball, box] if ground_first else [ball, box, ground_body()]
    w = World(bodies, margin=0.01)
    w.collide()
    for body, depth, points in ((ball, 0.005, 1), (box, 0.002, 4)):
        (pm,) = [pm for pm in w.manifolds if body in (pm.a, pm.b)]
        up = np.array([0.0, 1.0, 0.0]) if pm.b is body else np.array([0.0, -1.0, 0.0])  # from A to B
        np.testing.assert_allclose(pm.manifold.normal, up, atol=1e-12)
        np.testing.assert_allclose(pm.manifold.depths, depth, atol=1e-12)
        assert len(pm.manifold.depths) == points
        # points_a is on A, points_b on B: the body's points are inside the ground by the depth
        body_points = pm.manifold.points_b if pm.b is body else pm.manifold.points_a
        np.testing.assert_allclose(body_points[:, 1], -depth, atol=1e-12)
        assert pm.manifold.kind == ("face_a" if pm.b is body else "face_b")


@pytest.mark.parametrize("seed", range(4))
def test_every_batch_gives_what_collide_shapes_gives(seed):
    """A jumble of balls, boxes, capsules, U shapes and two grounds, in a shuffled order (so every
    pair kind comes with either shape first): each of the world's manifolds equals collide_shapes
    on its piece pair (same points within GJK's tolerance, or, past four points, the same deepest),
    and no touching piece pair is missing."""
    from obbcollide.shapes import Capsule

    rng = np.random.default_rng(seed)
    bodies = [ground_body(), ground_body(rot=co_rot(0.3), name="slope")]
    for k in range(24):
        pos = rng.uniform((-1, -0.1, -1), (1, 0.6, 1))
        kind = k % 4
        if kind == 0:
            bodies.append(ball_body(f"s{k}", rng.uniform(0.1, 0.3), pos, motion="kinematic"))
        elif kind == 1:
            bodies.append(box_body(f"b{k}", rng.uniform(0.1, 0.3, 3), pos, rot=random_rotation(rng)))
        elif kind == 2:
            cap = box_body(f"c{k}", (0.1, 0.3, 0.1), pos, rot=random_rotation(rng))
            cap.shapes = [Capsule(0.1, 0.2)]
            bodies.append(cap)
        else:
            bodies.append(u_body(f"u{k}", pos, random_rotation(rng)))
    order = rng.permutation(len(bodies))
    bodies = [bodies[i] for i in order]
    w = World(bodies, margin=0.02)
    w.collide()
    got = {(pm.a.name, pm.b.name, pm.piece_a, pm.piece_b): pm.manifold for pm in w.manifolds}
    kinds = set()
    for i, a in enumerate(bodies):
        for j in range(i + 1, len(bodies)):
            b = bodies[j]
            if a.motion == "static" and b.motion == "static":
                continue
            for p, sa in enumerate(a.shapes):
                for q, sb in enumerate(b.shapes):
                    ref = collide_shapes(sa, a.pose, sb, b.pose, 0.02)
                    key = (a.name, b.name, p, q)
                    if not len(ref.depths):
                        assert key not in got, key
                        continue
                    m = got[key]  # a touching pair the mid phase must not lose
                    kinds.add((type(sa).__name__, type(sb).__name__))
                    assert len(m.depths) == len(ref.depths), key
                    np.testing.assert_allclose(m.normal, ref.normal, atol=1e-7)
                    np.testing.assert_allclose(m.depths[0], ref.depths[0], atol=1e-9)
                    if len(ref.depths) < 4:
                        np.testing.assert_allclose(m.points_a, ref.points_a, atol=1e-9)
                        np.testing.assert_allclose(m.points_b, ref.points_b, atol=1e-9)
                    assert m.kind == ref.kind, key
    assert len(kinds) >= 6, kinds  # hull-hull, ground-hull, ball-hull, ... both ways round


def test_equal_shapes_share_their_packed_rows():
    """Boxes of one size (each its own Hull object) are packed once: one hull row, one core row;
    a box of another size and a ball get rows of their own, and the contacts are unchanged."""
    boxes = [box_body(f"b{k}", (0.25, 0.25, 0.25), (1.0 * k, 0.24, 0.0), motion="dynamic") for k in range(6)]
    other = box_body("big", (0.4, 0.25, 0.25), (7.0, 0.24, 0.0), motion="dynamic")
    ball = ball_body("ball", 0.2, (9.0, 0.19, 0.0))
    w = World([ground_body(size=20.0)] + boxes + [other, ball], dt=1 / 60, exact=False)
    w.step()
    m = w.manager
    assert len({m._shape(b.shapes[0])[1] for b in boxes}) == 1
    assert m._shape(other.shapes[0])[1] != m._shape(boxes[0].shapes[0])[1]
    assert len(m._hulls) == 2 and len(m._cores) == 3  # two box sizes; their cores and the ball's
    assert len(w.manifolds) == 8  # every body on the ground
    for pm in w.manifolds:  # a face of four corners under each box, one point under the ball
        assert len(pm.manifold.depths) == (1 if pm.b is ball else 4)


@pytest.mark.parametrize("flip", [False, True])
@pytest.mark.parametrize("with_caches", [False, True])
def test_store_rows_from_a_batch_field_by_field(flip, with_caches):
    """The compiled packing of a narrow-phase batch into store rows against plain numpy field
    assignment: only pairs with points, every field, and seen from B (``flip``) the normal reversed,
    the points swapped and the face kinds swapped."""
    from app.world.contacts import ContactStore
    from obbcollide.hull_batch import ManifoldBatch
    from obbcollide.manifold import KIND_NAMES

    rng = np.random.default_rng(3)
    k = 40
    b = ManifoldBatch(count=rng.integers(0, 5, k), normal=rng.normal(size=(k, 3)),
                      points_a=rng.normal(size=(k, 4, 3)), points_b=rng.normal(size=(k, 4, 3)),
                      depths=rng.normal(size=(k, 4)), ids=rng.integers(0, 2 ** 60, (k, 4)),
                      kind=rng.integers(0, len(KIND_NAMES), k), tests=rng.integers(0, 99, k),
                      sat_depth=rng.normal(size=k))
    keys = rng.integers(0, 1000, (k, 5))
    caches = rng.integers(-1, 50, (k, 3)) if with_caches else None
    st = ContactStore.from_batch(b, caches, keys, flip)
    hit = b.count > 0
    assert len(st) == hit.sum() > 0
    fa, fb = KIND_NAMES.index("face_a"), KIND_NAMES.index("face_b")
    kind = b.kind[hit]
    if flip:
        kind = np.where(kind == fa, fb, np.where(kind == fb, fa, kind))
    pa, pb = (b.points_b, b.points_a) if flip else (b.points_a, b.points_b)
    assert np.array_equal(st.keys, keys[hit])
    assert np.array_equal(st.count, b.count[hit])
    assert np.array_equal(st.normal, (-1.0 if flip else 1.0) * b.normal[hit])
    assert np.array_equal(st.kind, kind)
    assert np.array_equal(st.tests, b.tests[hit])
    assert np.array_equal(st.sat_depth, b.sat_depth[hit])
    assert np.array_equal(st.sat, caches[hit] if with_caches else np.full((hit.sum(), 3), -1))
    assert np.array_equal(st.points_a, pa[hit]) and np.array_equal(st.points_b, pb[hit])
    assert np.array_equal(st.depths, b.depths[hit]) and np.array_equal(st.ids, b.ids[hit])
    assert not st.age.any() and not st.impulse.any() and not st.frozen.any()


@pytest.mark.parametrize("seed", range(6))
def test_candidate_pairs_sorted_into_active_and_kept_as_the_plain_masks_do(seed):
    """The compiled one-pass sort of the candidates (``_classify``) against numpy masks written out
    plainly: random motions, sleep flags, empty bodies, candidate pairs and old store keys (and the
    active pairs' piece pairs counted)."""
    from app.world.body import DYNAMIC, STATIC
    from app.world.contacts import _classify

    rng = np.random.default_rng(seed)
    n = 40
    motion = rng.integers(0, 3, n)
    sleeping = rng.random(n) < 0.5
    count = rng.integers(0, 3, n) * (rng.random(n) < 0.9)
    codes = np.unique(rng.integers(0, n * n, 300))
    ra, rb = codes // n, codes % n
    pairs = np.stack([np.minimum(ra, rb), np.maximum(ra, rb)], axis=1)
    pairs = pairs[pairs[:, 0] < pairs[:, 1]]
    ra, rb = pairs[:, 0], pairs[:, 1]
    old_keys = np.zeros((120, 5), np.int64)
    old_keys[:, :2] = np.sort(rng.integers(0, n, (120, 2)), axis=1)
    old_keys[:60, :2] = pairs[rng.integers(0, len(pairs), 60)]  # half of them candidates
    old_keys = old_keys[np.lexsort((old_keys[:, 1], old_keys[:, 0]))]  # in key order, as a store's rows
    active = np.empty(len(ra), np.int64)
    kept = np.empty(len(old_keys), np.bool_)
    m, cap = _classify(ra, rb, motion, sleeping, count, old_keys, n, active, kept)

    keep = ~((motion[ra] == STATIC) & (motion[rb] == STATIC)) & (count[ra] > 0) & (count[rb] > 0)
    resting = (motion == STATIC) | ((motion == DYNAMIC) & sleeping)
    frozen = keep & resting[ra] & resting[rb]
    frozen_codes = set((ra[frozen] * n + rb[frozen]).tolist())
    np.testing.assert_array_equal(active[:m], np.flatnonzero(keep & ~frozen))
    assert cap == int(np.sum(count[ra[keep & ~frozen]] * count[rb[keep & ~frozen]]))  # piece pairs at most
    np.testing.assert_array_equal(kept, [a * n + b in frozen_codes for a, b in old_keys[:, :2]])
    assert 0 < m < len(ra) and 0 < kept.sum() < len(kept)  # (the draw exercises every branch)


@pytest.mark.parametrize("in_place", [False, True])
@pytest.mark.parametrize("seed", range(4))
def test_next_store_joins_kept_fresh_and_extra_rows_as_a_dict_does(seed, in_place):
    """The compiled join of a step's rows (``next_store``) against a dict by key written out
    plainly: kept rows unchanged and frozen; fresh and extra rows with points in key order (rows
    without points dropped), each continuing the old row of its key (the same ids: every age + 1
    and its impulse; ids reversed: matched by id; a new key: age 1, no impulse). When every row is
    kept or continued and none is new, the old store is updated where it is, unless told not to
    (then the same rows come in a new store)."""
    from app.world.contact_store import ContactStore, next_store

    rng = np.random.default_rng(seed)

    def rows(keys, count):
        st = ContactStore(len(keys))
        st.keys[:] = keys
        st.count[:] = count
        st.normal[:] = rng.normal(size=(len(keys), 3))
        st.kind[:] = rng.integers(0, 5, len(keys))
        st.sat[:] = rng.integers(-1, 9, (len(keys), 3))
        st.points_a[:] = rng.normal(size=(len(keys), 4, 3))
        st.points_b[:] = rng.normal(size=(len(keys), 4, 3))
        st.depths[:] = rng.normal(size=(len(keys), 4))
        st.ids[:] = rng.integers(0, 2 ** 40, (len(keys), 4))
        return st

    def in_key_order(st):
        k = st.keys
        return st.take(np.lexsort((k[:, 4], k[:, 3], k[:, 2], k[:, 1], k[:, 0])))

    codes = rng.choice(20 ** 3, 90, replace=False)
    all_keys = np.zeros((90, 5), np.int64)
    all_keys[:, 0], all_keys[:, 1], all_keys[:, 2] = codes // 400, codes // 20 % 20, codes % 20
    old = in_key_order(rows(all_keys[:60], rng.integers(1, 5, 60)))
    old.age[:] = rng.integers(1, 9, (60, 4))
    old.impulse[:] = rng.normal(size=(60, 4, 3))
    before = old.data.copy()
    kept = rng.random(60) < 0.4
    going = np.flatnonzero(~kept)  # the old rows a fresh or extra row continues
    if not in_place:
        going = going[rng.random(len(going)) < 0.7]
    new_keys = all_keys[60:] if not in_place else np.zeros((0, 5), np.int64)
    cont = rows(old.keys[going], old.count[going])
    cont.ids[:] = old.ids[going]
    flip = rng.random(len(going)) < 0.3  # ids reversed: matched by id, not by slot
    for r in np.flatnonzero(flip):
        c = cont.count[r]
        cont.ids[r, :c] = cont.ids[r, :c][::-1]
    born = rows(new_keys, rng.integers(1, 5, len(new_keys)))
    empty = rows(all_keys[60:75] + [0, 0, 0, 0, 7], 0)  # piece pairs without points: dropped
    both = ContactStore(data=np.concatenate([cont.data, born.data, empty.data]))
    to_extra = rng.random(len(both)) < 0.25
    to_extra &= both.count > 0
    fresh, extra = in_key_order(both.take(~to_extra)), in_key_order(both.take(to_extra))

    expect = {}
    for r in np.flatnonzero(kept):
        expect[tuple(old.keys[r])] = (old.data[r].copy(), True)
    by_key = {tuple(old.keys[r]): r for r in range(len(old))}
    for st in (fresh, extra):
        for r in range(len(st)):
            c = st.count[r]
            if c == 0:
                continue
            row = st.data[r].copy()
            row["age"][:] = 0
            row["impulse"][:] = 0.0
            row["age"][:c] = 1
            o = by_key.get(tuple(st.keys[r]))
            if o is not None:
                for i in range(c):
                    j = list(old.ids[o, :c]).index(st.ids[r, i])
                    row["age"][i] = before["age"][o, j] + 1
                    row["impulse"][i] = before["impulse"][o, j]
            expect[tuple(st.keys[r])] = (row, False)

    copy = ContactStore(data=old.data.copy())
    new = next_store(old, kept, fresh, extra, 0.05)
    assert (new is old) == in_place
    again = next_store(copy, kept, fresh, extra, 0.05, in_place=False)  # (its rows handed out: a new store)
    assert again is not copy and np.array_equal(again.data, new.data)  # (field by field: not the padding)
    order = sorted(expect)
    assert [tuple(k) for k in new.keys] == order
    np.testing.assert_array_equal(new.frozen, [expect[k][1] for k in order])
    for name in ContactStore._FIELDS:
        if name == "frozen":
            continue
        got = new.data[name]
        want = np.array([expect[k][0][name] for k in order])
        for r in range(len(order)):  # the slots past the count are not part of a row
            c = new.count[r]
            g, w = (got[r, :c], want[r, :c]) if name in ("points_a", "points_b", "depths", "ids", "age",
                                                         "impulse") else (got[r], want[r])
            np.testing.assert_array_equal(g, w, err_msg=f"{name} of row {r}")
    assert len(new) > kept.sum() > 0 and flip.any()


def u_pile(n, columns, seed):
    """A world of ``n`` dynamic U shapes (three hull pieces each) over the ground, ``columns`` to a
    row, the rows 0.9 m apart upwards, each turned at random (seeded): a pile that lands in a second."""
    from app.scene.loader import mass_properties

    bodies = [ground_body(size=20.0)]
    rng = np.random.default_rng(seed)
    for k in range(n):
        pos = (0.8 * (k % columns) - 0.4 * (columns - 1), 0.7 + 0.9 * (k // columns), 0.5 * (k % 2))
        u = u_body(f"u{k}", pos, random_rotation(rng))
        bodies.append(Body(u.name, u.vertices, u.faces, u.tree, u.pose, (0.5, 0.5, 0.5), motion="dynamic",
                           shapes=u.shapes, mass=mass_properties(u.vertices, u.faces, 1000.0)))
    return World(bodies, dt=1.0 / 60.0, exact=False)


def test_pairs_apart_carry_their_separating_feature_and_change_nothing():
    # A hull piece pair that is apart leaves no row in the store (no points), so its separating
    # feature is kept beside it and tried first at the next step. That may only save work: two
    # worlds of falling U shapes, one of them forgetting those features after every step, stay
    # equal bit for bit (poses, velocities, every stored manifold field but the test counts).
    import app.world.contacts as contacts

    def world():
        return u_pile(12, 3, seed=5)

    def hull_tests(w):
        # features tested by the hull batch of the world's last detection (it writes its outputs
        # into the manager's scratch, whether it ran inside the one-call detection or on its own)
        man = w.manager
        if not man.stats["piece_pairs"]:
            return 0
        sc = man._scratch
        h = int(sc.bounds[contacts._R_HULL + 1] - sc.bounds[contacts._R_HULL])
        return int(sc.batch.tests[:h].sum())

    tests = {"carry": 0, "forget": 0}
    carry, forget = world(), world()
    carried = 0
    for step in range(90):
        carry.step()
        tests["carry"] += hull_tests(carry)
        carried += len(carry.manager._apart)
        forget.step()
        tests["forget"] += hull_tests(forget)
        forget.manager._apart = contacts._NO_APART
        for a, b in zip(carry.bodies, forget.bodies):
            assert np.array_equal(a.pose, b.pose) and np.array_equal(a.velocity, b.velocity), (step, a.name)
        sa, sb = carry.manager.store, forget.manager.store
        assert len(sa) == len(sb) and len(sa) > 0
        for name in ("keys", "count", "normal", "kind", "sat_depth", "sat", "frozen"):
            assert np.array_equal(getattr(sa, name), getattr(sb, name)), (step, name)
        for r, c in enumerate(sa.count):  # (the slots past a row's count are not kept)
            for name in ("points_a", "points_b", "depths", "ids", "age", "impulse"):
                assert np.array_equal(getattr(sa, name)[r, :c], getattr(sb, name)[r, :c]), (step, name)
    assert carried > 100  # pairs apart were carried ...
    assert tests["carry"] < tests["forget"]  # ... and tested in fewer features


def test_scene_sized_scratch_never_grows_while_a_pile_lands_and_changes_nothing():
    # The fused detection's scratch is sized from the scene when the bodies change (4 piece pairs a
    # piece), so a pile of U shapes landing (more piece pairs than the first scratch of 64 holds)
    # never grows it step by step; a second world whose scratch starts at the old size, and must
    # grow, steps to the same poses, velocities and stores bit for bit (the scratch is working memory).
    import app.world.contacts as contacts

    sized, grown = u_pile(24, 4, seed=7), u_pile(24, 4, seed=7)
    sized.step()
    grown.step()
    pieces = sum(len(b.shapes) for b in sized.bodies)
    first = sized.manager._scratch
    assert first.pieces >= contacts.SCENE_PIECE_PAIRS * pieces and first.pairs >= contacts.SCENE_PAIRS * 25
    grown.manager._scratch = contacts._Scratch()  # (the size every world started with before)
    most, growths, last = 0, 0, grown.manager._scratch
    for step in range(120):
        sized.step()
        grown.step()
        assert sized.manager._scratch is first, step
        growths += grown.manager._scratch is not last
        last = grown.manager._scratch
        most = max(most, sized.manager.stats["piece_pairs"])
        for a, b in zip(sized.bodies, grown.bodies):
            assert np.array_equal(a.pose, b.pose) and np.array_equal(a.velocity, b.velocity), (step, a.name)
        sa, sb = sized.manager.store, grown.manager.store
        assert np.array_equal(sa.data, sb.data), step
    assert most > 64 and growths >= 1  # the pile needed more than the old first scratch, which grew
    sized.reset()  # (a reset keeps the scene's size)
    assert sized.manager._scratch.pieces == first.pieces


def test_store_views_follow_its_rows():
    """A ContactStore makes its word and field views once per row array: they are views of that
    array (writes through them reach the rows and back), the same object on every read, and new
    ones when the rows are replaced; the byte-buffer allocation gives the record type exactly."""
    from app.world.contact_store import _W_COUNT, _W_NORMAL, ContactStore, rows_array

    st = ContactStore(3)
    assert st.data.dtype == ContactStore.DTYPE and st.data.shape == (3,)
    assert not st.data.view(np.uint8).any()  # zeroed
    assert st.words is st.words and st.keys is st.keys and st.reals is st.reals
    st.keys[1] = (1, 2, 3, 4, 5)
    assert st.words[1, :5].tolist() == [1, 2, 3, 4, 5] and st.data["keys"][1].tolist() == [1, 2, 3, 4, 5]
    st.reals[2, _W_NORMAL] = 2.5
    assert st.normal[2, 0] == 2.5 and st.data["normal"][2, 0] == 2.5
    st.count = np.array([1, 2, 3])  # assigning a column copies into the rows
    assert st.data["count"].tolist() == [1, 2, 3] and st.words[:, _W_COUNT].tolist() == [1, 2, 3]
    old_words = st.words
    st.data = rows_array(2, zero=True)
    assert st.words is not old_words and st.words.shape == (2, ContactStore.DTYPE.itemsize // 8)
    assert st.keys.shape == (2, 5) and not st.keys.any()
    part = ContactStore(data=st.data[1:])  # a slice of the rows (as a step keeps its first k)
    part.keys[0, 0] = 7
    assert st.keys[1, 0] == 7 and part.words[0, 0] == 7
    assert len(ContactStore()) == 0 and ContactStore().words.shape == (0, ContactStore.DTYPE.itemsize // 8)
