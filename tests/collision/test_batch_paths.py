"""The batch's own code paths against the single queries' kernels.

* the yes / no walk of ``batch.collide`` and the single first-hit query
  (:func:`obbcollide.mesh_collide.first_contact_walk`) against the all-contacts kernel, on random
  poses that hit, miss, and hold one mesh inside the other (surfaces apart, containment only);
* the threaded drivers, whose threads claim chunks of pairs in turn, against the serial
  drivers: every entry equal, no pair skipped or done twice;
* ``within``'s search bounded by the tolerance against the exact distance.
"""

import numpy as np
from numba import get_num_threads

import obbcollide
from obbcollide import batch
from obbcollide._claim import claim, new_counter
from obbcollide.mesh_collide import collide_kernel, first_contact_kernel, first_contact_walk
from obbcollide.mesh_distance import distance_kernel
from obbcollide.tree_pair import _relative_t

from .test_batch import tree


def poses(n, seed, spread):
    rng = np.random.default_rng(seed)
    q = rng.normal(size=(n, 4))
    q /= np.linalg.norm(q, axis=1)[:, None]
    w, x, y, z = q.T
    p = np.tile(np.eye(4), (n, 1, 1))
    p[:, :3, :3] = np.stack([np.stack([1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)], -1),
                             np.stack([2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)], -1),
                             np.stack([2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)], -1)], 1)
    p[:, :3, 3] = rng.uniform(-spread, spread, (n, 3))
    return p


CASES = [("blob", "sphere", 0.6), ("gear", "torus", 0.9), ("capsule", "gear", 0.9), ("torus", "blob", 1.2)]


def test_yes_no_walk_equals_first_hit_and_all_contacts_kernels():
    seen_contained = 0
    for name_a, name_b, spread in CASES:
        ta, tb = tree(name_a), tree(name_b)
        pa = poses(300, 1, 0.3)
        pb = poses(300, 2, spread)
        stack = np.empty((2, 2), np.int64)  # small: the walk must grow it
        pairs_buf = np.empty((4096, 2), np.int64)
        segs_buf = np.empty((4096, 2, 3))
        walk, first, every = [], [], []
        for a, b in zip(pa, pb):
            r, t = _relative_t(a, b)
            hit, _, _, _, i, j = first_contact_walk(ta.nodes, ta.links, ta.triangles, tb.nodes, tb.links,
                                                    tb.triangles, r, t, stack)
            walk.append(hit)
            first.append(first_contact_kernel(*ta.arrays, *tb.arrays, a, b)[1])
            n = collide_kernel(*ta.query_arrays, *tb.query_arrays, a, b, False, False, pairs_buf, segs_buf)[1]
            every.append(n > 0)
            if hit and n <= len(pairs_buf):  # the pair it stopped at is one of the intersecting pairs
                assert (ta.tri_index[i], tb.tri_index[j]) in {tuple(p) for p in pairs_buf[:n]}
        assert walk == first == every
        assert 0 < sum(walk) < len(walk)
        got = batch.collide(ta, pa, tb, pb, threads=1)
        single = [obbcollide.collide(ta, a, tb, b, first_contact=True) for a, b in zip(pa, pb)]
        assert np.array_equal(got, [bool(s) for s in single])
        contained = [s.contained is not None for s in single]
        assert np.array_equal(batch.collide(ta, pa, tb, pb, containment=False, threads=1),
                              np.array(walk) & ~np.array(contained))
        seen_contained += sum(contained)
    assert seen_contained > 10  # containment-only poses were among them (the sphere in the blob)


def test_threaded_drivers_equal_serial_ones():
    """Each pair's entry comes out the same whichever thread claimed its chunk (and every chunk is done once)."""
    for name_a, name_b, spread in CASES:
        ta, tb = tree(name_a), tree(name_b)
        pa = poses(700, 3, 0.3)
        pb = poses(700, 4, spread)
        n = len(pa)
        cargs = batch._tree_args(ta, False) + batch._tree_args(tb, False) + (pa, pb, True)
        serial = np.zeros(n, np.bool_)
        batch._collide_serial(*cargs, serial)
        for runs, chunks in ((2, 1), (2, 7), (2, n), (3, 50), (max(2, get_num_threads()), 128)):
            par = np.zeros(n, np.bool_)
            batch._collide_parallel(*cargs, runs, chunks, new_counter(), par)
            assert np.array_equal(par, serial), (runs, chunks)
        for tol, near2, containment in ((0.0, np.inf, False), (0.05, 0.05 ** 2, True)):
            dargs = batch._distance_tree_args(ta) + batch._distance_tree_args(tb) + (pa, pb, tol, near2, containment)
            outs = []
            for driver in ("serial", (2, 5), (2, 128)):
                arrays = (np.full(n, -1.0), np.full((n, 2, 3), np.nan), np.full(n, -1), np.full(n, -1),
                          np.zeros(n, np.bool_))
                if driver == "serial":
                    batch._distance_serial(*dargs, *arrays)
                else:
                    batch._distance_parallel(*dargs, driver[0], driver[1], new_counter(), *arrays)
                outs.append(arrays)
            for other in outs[1:]:
                for x, y in zip(outs[0], other):
                    assert np.array_equal(x, y, equal_nan=False)
            assert (outs[0][0] >= 0).all()
        # and the public calls, big enough to go threaded on a machine with threads
        assert np.array_equal(batch.collide(ta, pa, tb, pb), serial)
        assert np.array_equal(batch.collide(ta, pa, tb, pb, threads=1), serial)


def test_claim_hands_out_each_number_once():
    counter = new_counter()
    assert [claim(counter) for _ in range(5)] == [0, 1, 2, 3, 4]
    assert counter[0] == 5


def test_within_bounded_search_equals_the_exact_distance():
    """near == (the exact minimum distance, unbounded search, below the tolerance, in squares) or
    touching or contained."""
    for name_a, name_b, spread in CASES:
        ta, tb = tree(name_a), tree(name_b)
        pa = poses(200, 5, 0.3)
        pb = poses(200, 6, spread)
        out = np.empty((2, 3))
        d2 = np.array([distance_kernel(*ta.arrays, *tb.arrays, a, b, 0.0, out)[1] for a, b in zip(pa, pb)])
        assert np.array_equal(np.sqrt(d2), batch.distance(ta, pa, tb, pb).distance)
        contained = np.array([obbcollide.collide(ta, a, tb, b).contained is not None for a, b in zip(pa, pb)])
        for tol in (0.0, 0.02, 0.1, 0.4):
            got = batch.within(ta, pa, tb, pb, tol)
            want = (d2 < tol * tol) | (d2 == 0.0) | contained
            assert np.array_equal(got, want), tol
            assert [obbcollide.within(ta, a, tb, b, tol) for a, b in zip(pa, pb)] == list(got)
        assert 0 < got.sum() < len(got)
