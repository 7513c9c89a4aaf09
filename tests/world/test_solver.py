"""The solver's islands and threads (app/world/solver.py; the physics itself is tested through the
world in tests/world/test_dynamics.py).

Islands: the partition against brute-force connected components; points of independent
islands given interleaved solve exactly as each island alone. Threads: a falling pile gives
the same trajectory bit for bit on one thread and on all of numba's.
"""

import numba
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from app.world.solver import ContactRows, island_order, solve_contacts
from app.world.world import World, rotation

from .._bodies import ball_body, box_body, ground_body


def components(ia, ib, n):
    """Brute force: the island of each point, as a frozenset of bodies, by repeated merging."""
    sets = [{i} for i in range(n)]
    for a, b in zip(ia, ib):
        if a >= 0 and b >= 0 and sets[a] is not sets[b]:
            merged = sets[a] | sets[b]
            for x in merged:
                sets[x] = merged
    return [frozenset(sets[a if a >= 0 else b]) for a, b in zip(ia, ib)]


@settings(max_examples=200, deadline=None)
@given(n=st.integers(1, 12), data=st.data())
def test_island_order_matches_connected_components(n, data):
    k = data.draw(st.integers(0, 30))
    ia = np.array(data.draw(st.lists(st.integers(-1, n - 1), min_size=k, max_size=k)), np.int64)
    ib = np.array(data.draw(st.lists(st.integers(0, n - 1), min_size=k, max_size=k)), np.int64)
    order, starts = island_order(ia, ib, n)
    assert sorted(order.tolist()) == list(range(k))
    assert starts[0] == 0 and starts[-1] == k and np.all(np.diff(starts) > 0)
    want = components(ia, ib, n)
    seen = set()
    for i in range(len(starts) - 1):
        run = order[starts[i]:starts[i + 1]]
        assert len({want[c] for c in run}) == 1  # one island per run ...
        assert want[run[0]] not in seen  # ... and each island in one run
        seen.add(want[run[0]])
        assert np.all(np.diff(run) > 0)  # the given order inside an island
    firsts = [order[starts[i]] for i in range(len(starts) - 1)]
    assert firsts == sorted(firsts)  # islands in the order of their first point


def stack_rows(rng, bodies, base):
    """Contact rows of a column of ``bodies`` boxes (indices from ``base``) on a static ground:
    four points per contact, small random penetrations and warm-start impulses."""
    ia, ib, normal, ra, rb, depth = [], [], [], [], [], []
    corners = np.array([[-1, -1], [1, -1], [1, 1], [-1, 1]], float) * 0.25
    for level in range(bodies):
        a = -1 if level == 0 else base + level - 1
        b = base + level
        for cx, cz in corners:
            ia.append(a)
            ib.append(b)
            normal.append([0.0, 1.0, 0.0])
            ra.append([cx, 0.25, cz] if a >= 0 else [0.0, 0.0, 0.0])
            rb.append([cx, -0.25, cz])
            depth.append(rng.uniform(-0.002, 0.01))
    k = len(ia)
    return dict(ia=np.array(ia, np.int64), ib=np.array(ib, np.int64), normal=np.array(normal), ra=np.array(ra),
                rb=np.array(rb), depth=np.array(depth), friction=np.full(k, 0.5), restitution=np.zeros(k),
                impulse=np.column_stack([rng.uniform(0, 5, k), rng.normal(0, 0.1, (k, 2))]))


def solve(rows, n, rng_state):
    rng = np.random.default_rng(rng_state)
    vel, w = rng.normal(0, 0.3, (n, 3)), rng.normal(0, 0.3, (n, 3))
    inv_m = np.full(n, 1 / 125.0)
    inv_i = np.tile(np.eye(3) / (125.0 * 0.5 ** 2 / 6), (n, 1, 1))
    r = ContactRows(**{key: np.array(val) for key, val in rows.items()})
    pv, pw = solve_contacts(vel, w, inv_m, inv_i, r, np.zeros((len(r.ia), 2, 3)), 1 / 60, 10, tolerance=1e-4)
    return vel, w, pv, pw, r.impulse


def test_interleaved_islands_solve_as_each_alone():
    """Two columns of boxes (bodies 0-3 and 4-7) whose points come interleaved: every velocity,
    pseudo velocity and impulse equals (bit for bit) what solving each column alone gives."""
    rng = np.random.default_rng(4)
    one, two = stack_rows(rng, 4, 0), stack_rows(rng, 4, 4)
    mixed = {}
    for key in one:  # manifold by manifold (four points each), one column's then the other's
        a = one[key].reshape(4, 4, *one[key].shape[1:])
        b = two[key].reshape(4, 4, *two[key].shape[1:])
        mixed[key] = np.stack([a, b], axis=1).reshape(-1, *one[key].shape[1:])
    both = solve(mixed, 8, 9)
    # each column alone, with the same starting velocities for its bodies
    rng = np.random.default_rng(9)
    vel0, w0 = rng.normal(0, 0.3, (8, 3)), rng.normal(0, 0.3, (8, 3))
    for rows, bodies in ((one, slice(0, 4)), (two, slice(4, 8))):
        vel, w = vel0.copy(), w0.copy()
        r = ContactRows(**{key: np.array(val) for key, val in rows.items()})
        pv, pw = solve_contacts(vel, w, np.full(8, 1 / 125.0), np.tile(np.eye(3) / (125.0 * 0.5 ** 2 / 6), (8, 1, 1)),
                                r, np.zeros((len(r.ia), 2, 3)), 1 / 60, 10, tolerance=1e-4)
        assert np.array_equal(both[0][bodies], vel[bodies]) and np.array_equal(both[1][bodies], w[bodies])
        assert np.array_equal(both[2][bodies], pv[bodies]) and np.array_equal(both[3][bodies], pw[bodies])
        mine = np.concatenate([np.flatnonzero(mixed["ib"] == b) for b in range(bodies.start, bodies.stop)])
        mine.sort()
        assert np.array_equal(both[4][mine], r.impulse)


def falling_pile(threads):
    """Poses after 2 s of a pile of 24 boxes and balls dropped in four columns, on ``threads``."""
    saved = numba.get_num_threads()
    numba.set_num_threads(threads)
    try:
        rng = np.random.default_rng(2)
        bodies = [ground_body(size=20.0)]
        for c in range(4):
            for k in range(6):
                pos = (1.5 * c + rng.uniform(-0.05, 0.05), 0.3 + 0.55 * k, rng.uniform(-0.05, 0.05))
                if k % 3 == 2:
                    bodies.append(ball_body(f"s{c}{k}", 0.22, pos))
                else:
                    bodies.append(box_body(f"b{c}{k}", (0.25,) * 3, pos, motion="dynamic",
                                           rot=rotation((0, 1, 0), rng.uniform(-0.3, 0.3))))
        w = World(bodies, dt=1 / 60, exact=False)
        w.dynamics.iterations = 10
        for _ in range(120):
            w.step()
        return np.array([b.pose for b in bodies]), w.dynamics.stats
    finally:
        numba.set_num_threads(saved)


@pytest.mark.skipif(numba.config.NUMBA_NUM_THREADS < 2, reason="numba has one thread here: nothing to compare")
def test_one_thread_and_all_give_the_same_trajectory():
    one, _ = falling_pile(1)
    many, stats = falling_pile(numba.config.NUMBA_NUM_THREADS)
    assert np.array_equal(one, many)
    assert stats["islands"] >= 1


def random_islands(seed, islands=40):
    """Solver inputs of ``islands`` islands of 2-30 points each (island ``i``: bodies ``3i .. 3i + 2``,
    points between neighbours, -1 the ground), random constraint rows, warm impulses, gaps and
    penetrations, some points bouncy: ``(ia, ib, starts, p, inv_m, inv_i, depth, friction,
    restitution, vel, w, impulse)``."""
    from app.world import solver as S

    rng = np.random.default_rng(seed)
    ia, ib = [], []
    for i in range(islands):
        for _ in range(rng.integers(2, 31)):
            a = 3 * i + rng.integers(-1, 2)
            ia.append(a if a >= 3 * i else -1)
            ib.append(a + 1)
    ia, ib = np.array(ia), np.array(ib)
    order = np.lexsort((ib, ib // 3))
    ia, ib = ia[order], ib[order]
    island = ib // 3
    starts = np.concatenate([[0], np.flatnonzero(np.diff(island)) + 1, [len(ia)]]).astype(np.int64)
    k, nb = len(ia), 3 * islands
    p = rng.random((k, S._WIDTH))
    inv_m, inv_i = np.ones(nb), np.tile(np.eye(3), (nb, 1, 1))
    depth = rng.uniform(-0.01, 0.02, k)
    friction, restitution = np.full(k, 0.5), np.where(rng.random(k) < 0.3, 0.5, 0.0)
    vel0, w0, imp0 = rng.normal(size=(nb, 3)), rng.normal(size=(nb, 3)), rng.random((k, 3))
    return ia, ib, starts, p, inv_m, inv_i, depth, friction, restitution, vel0, w0, imp0


@pytest.mark.skipif(numba.config.NUMBA_NUM_THREADS < 2, reason="numba has one thread here: nothing to compare")
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_islands_on_threads_equal_the_serial_driver(seed):
    """The threaded island drivers (velocity and split iterations) against their serial twins on
    forty islands of 2-30 points each, with warm starts, gaps and penetrations: every velocity,
    pseudo velocity, impulse and iteration count equal bit for bit. (The islands share scratch
    arrays, each in its own range: a kernel writing outside its range shows here.)"""
    from app.world import solver as S

    ia, ib, starts, p, inv_m, inv_i, depth, friction, restitution, vel0, w0, imp0 = random_islands(seed)
    k, nb = len(ia), len(inv_m)
    solved, split = [], []
    for solve_fn, split_fn in ((S._solve_islands_serial, S._split_islands_serial), (S._solve_islands, S._split_islands)):
        vel, w, imp, done = vel0.copy(), w0.copy(), imp0.copy(), np.zeros(len(starts) - 1, np.int64)
        solve_fn(vel, w, inv_m, inv_i, ia, ib, p, depth, friction, restitution, imp, 1 / 60, 10, 0.5, True, 1e-4,
                 starts, done, -1, np.zeros(1))
        solved.append((vel, w, imp, done))
        pv, pw = np.zeros((nb, 3)), np.zeros((nb, 3))
        split_fn(pv, pw, inv_m, ia, ib, p, depth, 1 / 60, 10, 0.2, 0.005, starts)
        split.append((pv, pw))
    assert solved[0][3].min() >= 2 and np.abs(split[0][0]).max() > 0  # (iterations ran; penetrations pushed)
    for x, y in zip(solved[0] + split[0], solved[1] + split[1]):
        assert np.array_equal(x, y)


@pytest.mark.parametrize("seed", [0, 1])
@pytest.mark.parametrize("tolerance", [0.0, 0.3, 3.0])
@pytest.mark.parametrize("held", [False, True])
def test_islands_side_by_side_equal_one_at_a_time(seed, tolerance, held):
    """The island drivers solve islands two at a time, their points in turns (_solve_two); each
    island must get exactly what it gets alone (_solve_range): every velocity, impulse and iteration
    count equal bit for bit, with islands that stop at different iterations (tolerance), bouncy
    points, an odd number of islands, and (held) a mouse joint on a body of one island, whose pair
    is then solved one island at a time."""
    from app.world import solver as S
    from app.world.mouse_joint import JOINT_WIDTH

    ia, ib, starts, p, inv_m, inv_i, depth, friction, restitution, vel0, w0, imp0 = random_islands(seed, 21)
    jk, joint0 = -1, np.zeros(1)
    if held:
        jk = int(ib[starts[6]])  # a body of island 6
        joint0 = np.zeros(JOINT_WIDTH)
        joint0[:] = np.random.default_rng(seed).uniform(0.0, 0.2, JOINT_WIDTH)
    results = []
    for together in (True, False):
        vel, w, imp, joint = vel0.copy(), w0.copy(), imp0.copy(), joint0.copy()
        done = np.zeros(len(starts) - 1, np.int64)
        if together:
            S._solve_islands_serial(vel, w, inv_m, inv_i, ia, ib, p, depth, friction, restitution, imp, 1 / 60, 10,
                                    0.5, True, tolerance, starts, done, jk, joint)
        else:
            target, approach = np.empty(len(ia)), np.empty(len(ia))
            for i in range(len(done)):
                done[i] = S._solve_range(vel, w, inv_m, inv_i, ia, ib, p, depth, friction, restitution, imp, 1 / 60,
                                         10, 0.5, True, tolerance, starts[i], starts[i + 1], target, approach, jk,
                                         joint)
        results.append((vel, w, imp, done, joint))
    for x, y in zip(*results):
        assert np.array_equal(x, y)
    done = results[0][3]
    assert len(done) % 2 == 1  # (the last island has no partner)
    if tolerance == 3.0:
        assert len(set(done.tolist())) > 1, done  # islands stopped at different iterations
    else:
        assert done.min() >= 2
    if held:
        assert not np.array_equal(results[0][4], joint0)  # the joint was solved with its island


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("tolerance", [0.0, 0.3])
def test_one_body_points_equal_a_row_of_infinite_mass(seed, tolerance):
    """A point whose other body has infinite mass (row -1: the ground, a kinematic body) takes the
    solver's one-body path (_point_one), which leaves out the products with that body's zero
    velocities. Its twin: the same points with that side a real body row of zero velocity, zero
    inverse mass and inertia, which the general path solves with every product. Every velocity,
    impulse and iteration count of the dynamic bodies must be equal, on islands whose one-body
    points have the static body as A and as B."""
    from app.world import solver as S

    ia, ib, starts, p, inv_m, inv_i, depth, friction, restitution, vel0, w0, imp0 = random_islands(seed, 21)
    rng = np.random.default_rng(seed + 10)
    flip = (ia < 0) & (rng.random(len(ia)) < 0.5)  # half of them with the static body as B
    ia[flip], ib[flip] = ib[flip], -1
    p = p.copy()
    p[ia < 0, S._MA:S._MA + 9] = 0.0  # an infinite mass turns no impulse into a velocity
    p[ib < 0, S._MB:S._MB + 9] = 0.0
    assert (ia < 0).sum() > 20 and (ib < 0).sum() > 20
    nb = len(inv_m)
    results = []
    for twin in (False, True):
        a, b = ia.copy(), ib.copy()
        vel, w, imp = np.vstack([vel0, np.zeros((1, 3))]), np.vstack([w0, np.zeros((1, 3))]), imp0.copy()
        m, i = np.append(inv_m, 0.0), np.concatenate([inv_i, np.zeros((1, 3, 3))])
        if twin:
            a[a < 0] = nb  # the extra row, at rest, of infinite mass
            b[b < 0] = nb
        done = np.zeros(len(starts) - 1, np.int64)
        S._solve_islands_serial(vel, w, m, i, a, b, p, depth, friction, restitution, imp, 1 / 60, 10, 0.5, True,
                                tolerance, starts, done, -1, np.zeros(1))
        results.append((vel, w, imp, done))
    (v1, w1, i1, d1), (v2, w2, i2, d2) = results
    assert np.array_equal(v1, v2) and np.array_equal(w1, w2) and np.array_equal(i1, i2) and np.array_equal(d1, d2)
    assert not np.any(v2[nb]) and not np.any(w2[nb])  # the twin's extra row never moved
    assert not np.array_equal(v1[:nb], vel0)  # (impulses were applied)
