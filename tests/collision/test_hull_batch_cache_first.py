"""The hull-pair batch's first test of each pair's cached feature, on the table's arrays in place.

:func:`collision.hull_batch.collide_hull_pairs` tests the feature a pair's cache names before it
calls a pair kernel, reading the hulls from the :class:`~collision.hull_data.HullTable`'s
concatenated arrays (:func:`collision.manifold.cached_sep`), and writes the outputs of a pair
that stays apart along it itself. Reference: the brute-force twin of the hull kernel
(``collide_hull_hull_kernel(..., brute=True)``: every face query and every edge pair), called
pair by pair with its own arrays and a copy of the cache; the hull kernel itself, pair by pair
(``brute=False``); and the same batch with the cached feature left to the pair kernels
(``CACHE_FIRST = False``). Against the last two every output field is compared exactly
(``tobytes``, so signed zeros count), the caches after the call and the count of features
tested included (but for box pairs against the hull kernel: the box route queries every face and
leaves out the edge pairs of two parallelepipeds that cannot be chosen, so its count and its SAT
depth, within the edge tolerance, are its own, tests/collision/test_box_box.py). Against the brute-force twin every field of every pair in contact is compared
exactly; of a pair apart, the kind, the count and the zero rows, and a SAT depth below
``-margin`` (the twin may stop at another separating feature: it queries every face and every
edge pair in another order, see :func:`collision.gauss_map.edge_pairs_pruned`).

Hulls: hypothesis draws the seeds of point clouds (4 to 40 points, scaled per axis) and boxes;
caches: the ones a first call leaves (the pair moved a little since: most pairs stay apart along
their cached feature), plus foreign entries (indices out of range, kinds of the other hull).
"""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import obbcollide.hull_batch as hb
from obbcollide.box_box import is_box
from obbcollide.hull_batch import HullTable, collide_hull_pairs
from obbcollide.hull_data import HullData
from obbcollide.manifold import ABS_TOL, EDGE_REL_TOL, KIND_NAMES, collide_hull_hull_kernel, hull_arrays

from .test_hull_batch import random_poses

FIELDS = ("count", "normal", "points_a", "points_b", "depths", "ids", "kind", "sat_depth")
CORNERS = np.array([[x, y, z] for x in (-1, 1) for y in (-1, 1) for z in (-1, 1)], float)


def make_hulls(rng, n, sizes):
    hulls = []
    for k in range(n):
        m = sizes[k % len(sizes)]
        if m == 8 and k % 3 == 0:
            p = CORNERS * rng.uniform(0.2, 1.0, 3)  # a box (the box route)
        else:
            p = rng.normal(size=(m, 3)) * rng.uniform(0.2, 1.0, 3)
        hulls.append(HullData.from_points(p))
    return hulls


def batch(table, ia, pa, ib, pb, margin, caches, cache_first):
    old = hb.CACHE_FIRST
    hb.CACHE_FIRST = cache_first
    try:
        return collide_hull_pairs(table, ia, pa, ib, pb, margin, caches)
    finally:
        hb.CACHE_FIRST = old


def pair_rows(hulls, ia, pa, ib, pb, margin, caches, brute):
    """The hull kernel (or its brute-force twin) pair by pair: the batch's fields as arrays (and
    ``tests``); ``caches`` updated in place."""
    k = len(ia)
    names = FIELDS + ("tests",)
    out = {f: [] for f in names}
    for i in range(k):
        ha, hb_ = hulls[ia[i]], hulls[ib[i]]
        st_, kind, cnt, tests, sat, n, p_a, p_b, dep, ids = collide_hull_hull_kernel(
            *hull_arrays(ha), *hull_arrays(hb_), pa[i], pb[i], margin, min(ha.scale, hb_.scale), caches[i], brute)
        assert st_ == 0
        for f, x in zip(names, (cnt, n, p_a, p_b, dep, ids, kind, sat, tests)):
            out[f].append(x)
    return {f: np.array(x, dtype=np.float64 if f in ("normal", "points_a", "points_b", "depths", "sat_depth")
                        else np.int64).reshape((k,) + np.shape(x[0]) if k else (0,)) for f, x in out.items()}


def same(a, b):
    return a.shape == b.shape and a.dtype == b.dtype and a.tobytes() == b.tobytes()


def check(hulls, table, ia, pa, ib, pb, margin, caches):
    c_new, c_old, c_one, c_brute = caches.copy(), caches.copy(), caches.copy(), caches.copy()
    new = batch(table, ia, pa, ib, pb, margin, c_new, True)
    old = batch(table, ia, pa, ib, pb, margin, c_old, False)
    one = pair_rows(hulls, ia, pa, ib, pb, margin, c_one, False)
    brute = pair_rows(hulls, ia, pa, ib, pb, margin, c_brute, True)
    for f in FIELDS + ("tests",):
        assert same(getattr(new, f), getattr(old, f)), f
    # a pair of boxes takes collision.box_box, which queries every face and leaves out the edge
    # pairs of two parallelepipeds that cannot be chosen: its count of features tested and its SAT
    # depth (deeper by less than the edge tolerance) are its own (tests/collision/test_box_box.py)
    boxes = np.array([is_box(hulls[a]) and is_box(hulls[b]) for a, b in zip(ia, ib)], bool)
    for f in FIELDS:
        assert same(getattr(new, f)[~boxes], one[f][~boxes]), f
        if f != "sat_depth":
            assert same(getattr(new, f), one[f]), f
    scale = np.array([min(hulls[a].scale, hulls[b].scale) for a, b in zip(ia, ib)])
    for ref in (one, brute):
        d, d_ref = new.sat_depth[boxes], ref["sat_depth"][boxes]
        assert np.all((d == d_ref) | ((d > d_ref) & (d <= d_ref + EDGE_REL_TOL * np.abs(d) + ABS_TOL * scale[boxes])))
    assert same(new.tests[~boxes], one["tests"][~boxes])
    assert same(c_new, c_old) and same(c_new, c_one)
    touch = new.kind != KIND_NAMES.index("none")
    for f in FIELDS:
        if f == "sat_depth":
            assert same(new.sat_depth[touch & ~boxes], brute[f][touch & ~boxes]), f
            continue
        assert same(getattr(new, f)[touch], brute[f][touch]), f
    assert same(c_new[touch], c_brute[touch])
    apart = ~touch
    assert np.all(brute["kind"][apart] == new.kind[apart]) and not new.count[apart].any()
    for f in ("normal", "points_a", "points_b", "depths", "ids"):
        assert not getattr(new, f)[apart].any() and not brute[f][apart].any(), f
    assert np.all(new.sat_depth[apart] < -margin) and np.all(brute["sat_depth"][apart] < -margin)
    return new, c_new


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), k=st.integers(1, 40), spread=st.floats(0.3, 2.0),
       margin=st.sampled_from([0.0, 0.02, 0.3]), sizes=st.lists(st.integers(4, 40), min_size=1, max_size=4))
def test_cache_first_equals_the_brute_force_twin(seed, k, spread, margin, sizes):
    rng = np.random.default_rng(seed)
    hulls = make_hulls(rng, 5, sizes + [8])
    table = HullTable(hulls)
    ia = rng.integers(0, len(hulls), k)
    ib = rng.integers(0, len(hulls), k)
    pa, pb = random_poses(rng, k, spread), random_poses(rng, k, spread)
    caches = np.full((k, 3), -1, np.int64)
    _, caches = check(hulls, table, ia, pa, ib, pb, margin, caches)
    # the next step: a small motion, the caches of the first call read back
    pb[:, :3, 3] += rng.normal(size=(k, 3)) * 0.01
    check(hulls, table, ia, pa, ib, pb, margin, caches)
    # foreign entries: any kind with indices in or out of range
    junk = np.column_stack([rng.integers(-1, 4, k), rng.integers(-2, 200, k), rng.integers(-2, 200, k)])
    check(hulls, table, ia, pa, ib, pb, margin, junk.astype(np.int64))


@pytest.mark.parametrize("seed", range(2))
def test_cache_first_takes_most_pairs_of_a_resting_set(seed):
    """Pairs apart and barely moving: the cached feature decides most of them, with one test each,
    and the rows equal the twin's (so the short route is exercised, not only allowed)."""
    rng = np.random.default_rng(seed)
    hulls = make_hulls(rng, 6, [8, 24, 40])
    table = HullTable(hulls)
    k = 200
    ia = rng.integers(0, len(hulls), k)
    ib = rng.integers(0, len(hulls), k)
    pa, pb = random_poses(rng, k, 1.5), random_poses(rng, k, 1.5)
    _, caches = check(hulls, table, ia, pa, ib, pb, 0.02, np.full((k, 3), -1, np.int64))
    pb[:, :3, 3] += 1e-4
    out, _ = check(hulls, table, ia, pa, ib, pb, 0.02, caches)
    apart = out.kind == KIND_NAMES.index("none")
    assert np.count_nonzero(apart & (out.tests == 1)) > k // 2
    assert np.any(~apart)  # and some pairs touch (the pair kernels still run)
