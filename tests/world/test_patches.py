"""The solver's contact patches across pieces (app/world/patches.py).

The masks against a brute-force twin (the greedy grouping by normal in Python, then the public
``reduce_contacts`` on each group's points) on random stores; then through the world: a U of
three boxes on the ground is held by four points, not twelve, comes to rest where it rests with
every point solved, and keeps the same four points from step to step; two U's standing leg on leg.
"""

import itertools
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from app.world.patches import MERGE_TOL2, PATCH_COS, WARM_BONUS, longest_run, patch_slots
from app.world.world import World
from obbcollide.contact_reduce import reduce_contacts

from .._bodies import ground_body, u_body


def masks(visit, keys, count, normal, pa, pb, depths, impulse, reduce):
    """patch_slots with scratch for the longest run of one body pair's rows, filled with garbage."""
    keep = np.full(len(visit), -7, np.int64)
    r = longest_run(visit, keys)
    rng = np.random.default_rng(0)
    total = patch_slots(visit, keys, count, normal, pa, pb, depths, impulse, reduce, keep, rng.normal(size=(4 * r, 3)),
                        rng.normal(size=4 * r), rng.integers(-9, 9, 4 * r), rng.integers(-9, 9, 4 * r),
                        rng.random(4 * r) < 0.5, rng.random(r) < 0.5)
    return keep, total


def masks_brute(visit, keys, count, normal, pa, pb, depths, impulse, reduce):
    keep = [(1 << int(count[m])) - 1 for m in visit]
    runs, c = [], 0
    while c < len(visit):
        e = c + 1
        while e < len(visit) and tuple(keys[visit[e], :2]) == tuple(keys[visit[c], :2]):
            e += 1
        runs.append(range(c, e))
        c = e
    for run in runs:
        if not reduce or len(run) < 2:
            continue
        taken = set()
        for r in run:
            if r in taken:
                continue
            n = normal[visit[r]]
            group = [s for s in run if s >= r and s not in taken and (s == r or normal[visit[s]] @ n >= PATCH_COS)]
            taken.update(group)
            if len(group) < 2:
                continue
            src = [(s, i) for s in group for i in range(count[visit[s]])]
            pts = np.array([0.5 * (pa[visit[s], i] + pb[visit[s], i]) for s, i in src])
            dep = np.array([depths[visit[s], i] + (WARM_BONUS if impulse[visit[s], i, 0] > 0 else 0.0)
                            for s, i in src])
            for s in group:
                keep[s] = 0
            for j in reduce_contacts(pts, dep, n, tol=math.sqrt(MERGE_TOL2)):
                s, i = src[j]
                keep[s] |= 1 << i
    return np.array(keep, np.int64)


def unit(rng, near=None, degrees=0.0):
    if near is None:
        u = rng.normal(size=3)
        return u / np.linalg.norm(u)
    t = np.cross(near, rng.normal(size=3))
    t /= np.linalg.norm(t)
    a = math.radians(degrees)
    return math.cos(a) * near + math.sin(a) * t


def random_store(seed):
    """Rows of a few body pairs, sorted by their keys; each pair's rows share one of two normals
    (tilted by up to 1.5 degrees, inside a patch), or have one of their own (5 to 60 degrees off);
    points on a few shared planes (with seams: points repeated between rows), random depths,
    and some points that pushed last step."""
    rng = np.random.default_rng(seed)
    keys, normal, count, mid, depths, pushed = [], [], [], [], [], []
    for pair in range(int(rng.integers(1, 6))):
        bases = [unit(rng), unit(rng)]
        seam = rng.normal(size=3)
        for piece in range(int(rng.integers(1, 7))):
            keys.append((pair, pair + 10, piece, 0, 0))
            roll = rng.random()
            if roll < 0.7:
                n = unit(rng, bases[0], rng.uniform(0, 1.5))
            elif roll < 0.85:
                n = unit(rng, bases[1], rng.uniform(0, 1.5))
            else:
                n = unit(rng, bases[0], rng.uniform(5, 60))
            c = int(rng.integers(1, 5))
            q = rng.normal(size=(4, 3))
            if rng.random() < 0.3:
                q[0] = seam
            normal.append(n)
            count.append(c)
            mid.append(q)
            depths.append(rng.uniform(-0.01, 0.01, 4) if rng.random() < 0.7 else np.full(4, rng.uniform(0, 0.01)))
            pushed.append(rng.random(4) < 0.4)
    m = len(keys)
    keys = np.array(keys, np.int64)
    normal = np.array(normal)
    mid = np.array(mid)
    depths = np.array(depths)
    pa = mid + 0.5 * depths[:, :, None] * normal[:, None, :]
    pb = mid - 0.5 * depths[:, :, None] * normal[:, None, :]
    impulse = np.zeros((m, 4, 3))
    impulse[:, :, 0] = np.where(np.array(pushed), rng.uniform(0.1, 1.0, (m, 4)), 0.0)
    return keys, np.array(count, np.int64), normal, pa, pb, depths, impulse


@settings(max_examples=300, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), reduce=st.booleans())
def test_patch_masks_equal_the_brute_force_twin(seed, reduce):
    keys, count, normal, pa, pb, depths, impulse = random_store(seed)
    visit = np.arange(len(keys), dtype=np.int64)
    runs = [len(list(g)) for _, g in itertools.groupby(map(tuple, keys[:, :2]))]
    assert longest_run(visit, keys) == max(runs)
    keep, total = masks(visit, keys, count, normal, pa, pb, depths, impulse, reduce)
    want = masks_brute(visit, keys, count, normal, pa, pb, depths, impulse, reduce)
    assert keep.tolist() == want.tolist()
    assert total == sum(bin(int(x)).count("1") for x in keep)
    for c, m in enumerate(visit):
        assert keep[c] >> int(count[m]) == 0  # only slots in use
    if not reduce:
        assert keep.tolist() == [(1 << int(c)) - 1 for c in count]


def test_a_patch_keeps_at_most_four_points_and_its_deepest():
    # one body pair, three manifolds on one plane (a U's three bottoms): twelve points, a seam
    # point shared by two rows, and the deepest point in the middle row
    keys = np.array([(0, 1, p, 0, 0) for p in range(3)], np.int64)
    count = np.full(3, 4, np.int64)
    normal = np.tile([0.0, 1.0, 0.0], (3, 1))
    xs = [(-0.5, -0.3), (-0.3, 0.3), (0.3, 0.5)]
    mid = np.array([[(x, 0.0, z) for x in x01 for z in (-0.2, 0.2)] for x01 in xs])
    depths = np.full((3, 4), 0.004)
    depths[1, 2] = 0.006
    pa, pb = mid.copy(), mid.copy()
    impulse = np.zeros((3, 4, 3))
    keep, total = masks(np.arange(3, dtype=np.int64), keys, count, normal, pa, pb, depths, impulse, True)
    assert total == 4
    assert keep[1] >> 2 & 1  # the deepest
    kept = {tuple(mid[r, i]) for r in range(3) for i in range(4) if keep[r] >> i & 1}
    assert {(-0.5, 0.0, -0.2), (-0.5, 0.0, 0.2)} & kept  # the far ends are held: the patch's span
    assert {(0.5, 0.0, -0.2), (0.5, 0.0, 0.2)} & kept
    # tilted beyond the tolerance, the last row is a patch of its own, kept whole
    normal[2] = unit(np.random.default_rng(0), normal[2], 5.0)
    keep, total = masks(np.arange(3, dtype=np.int64), keys, count, normal, pa, pb, depths, impulse, True)
    assert keep[2] == 0b1111 and total <= 8


def u_on_ground(patches, x=0.0, y=0.5, dt=1 / 60):
    ground = ground_body()
    u = u_body("u", (x, y + 0.02, 0.0), motion="dynamic")
    w = World([ground, u], dt=dt, exact=False)
    w.dynamics.patches = patches
    return w, u


@pytest.mark.parametrize("dt", [1 / 60, 1 / 120])
def test_a_u_on_the_ground_rests_on_four_points_where_twelve_put_it(dt):
    runs = {}
    for patches in (True, False):
        w, u = u_on_ground(patches, dt=dt)
        points = []
        for _ in range(int(1.5 / dt)):
            w.step()
            points.append(w.dynamics.stats["contact_points"])
        st = w.manager.store
        runs[patches] = (u.pose.copy(), np.linalg.norm(u.velocity), points, int(st.count.sum()))
    (pose, speed, points, stored), (pose0, speed0, points0, stored0) = runs[True], runs[False]
    assert stored == stored0 == 12  # the manifolds are kept whole: three bottoms of four points
    assert max(points0) == 12 and max(points) == 4  # the solver is given four
    assert speed < 0.05 and speed0 < 0.05
    assert abs(pose[1, 3] - pose0[1, 3]) < 2e-3  # rests at the same height
    assert pose[1, 3] > 0.5 - 0.01  # not sunk (the slop is 5 mm)
    assert np.allclose(pose[:3, :3], pose0[:3, :3], atol=2e-3)
    assert np.hypot(pose[0, 3] - pose0[0, 3], pose[2, 3] - pose0[2, 3]) < 2e-3


def test_a_resting_u_keeps_the_same_four_points():
    w, u = u_on_ground(True)
    w.dynamics.allow_sleep = False  # stepped and solved every step
    seen = []
    for step in range(150):
        w.step()
        st = w.manager.store
        held = {((int(st.keys[r, 2]), int(st.keys[r, 3])), int(st.ids[r, i])) for r in range(len(st)) for i in range(int(st.count[r]))
                if st.impulse[r, i, 0] > 0.0}
        if step >= 90:
            seen.append(held)
    assert all(s == seen[0] for s in seen), seen
    assert len(seen[0]) == 4
    assert len({piece for piece, _ in seen[0]}) >= 2  # the corners of the outer legs, not one bottom


def test_two_u_shapes_leg_on_leg_stand():
    runs = {}
    for patches in (True, False):
        ground = ground_body()
        low = u_body("low", (0.0, 0.51, 0.0), motion="dynamic")
        high = u_body("high", (0.0, 1.53, 0.0), motion="dynamic")
        w = World([ground, low, high], dt=1 / 60, exact=False)
        w.dynamics.patches = patches
        most = 0
        for _ in range(150):
            w.step()
            most = max(most, w.dynamics.stats["contact_points"])
        st = w.manager.store
        between = [r for r in range(len(st)) if {int(st.keys[r, 0]), int(st.keys[r, 1])} == {1, 2}]
        runs[patches] = (most, int(st.count.sum()), len(between), low.pose.copy(), high.pose.copy())
        for b in (low, high):
            assert np.linalg.norm(b.velocity) < 0.05
    (most, stored, between, low, high), (most0, stored0, between0, low0, high0) = runs[True], runs[False]
    assert stored == stored0 and between == between0 >= 2  # the legs meet: a patch of several manifolds
    assert most0 == stored0 and most <= most0 - 12  # the ground's patch loses eight points, the legs' four
    assert high[1, 3] > 1.5 - 0.02 and low[1, 3] > 0.5 - 0.01
    assert np.abs(high[:3, 3] - high0[:3, 3]).max() < 2e-3 and np.abs(low[:3, 3] - low0[:3, 3]).max() < 2e-3
