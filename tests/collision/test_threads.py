"""collision.threads: the serial / threaded choice of the batch kernels, and equal results.

The choice is checked by its logic (fed call times, no clock): small batches run
serially, big ones threaded until the serial driver is measured faster, the
losing driver is tried again after the retry interval, which doubles while it
keeps losing. The results are checked for equality bit for bit: the hull-pair
batch on one thread and on all of numba's threads (``forced``), on a seeded
batch big enough to be split into runs.
"""

import numba
import numpy as np
import pytest
from numba import prange
from scipy.spatial.transform import Rotation

from obbcollide import threads
from obbcollide.hull_batch import MIN_HULL_PAIRS_PER_THREAD, HullTable, collide_hull_pairs
from obbcollide.hull_data import HullData
from obbcollide.threads import ThreadChoice, forced, serial_twin

CORNERS = np.array([[x, y, z] for x in (-1, 1) for y in (-1, 1) for z in (-1, 1)], float)
MANY = numba.get_num_threads() >= 2
needs_threads = pytest.mark.skipif(not MANY, reason="numba has one thread here")


def test_wait_policy_set():
    import os

    assert os.environ.get("OMP_WAIT_POLICY")  # set by obbcollide.threads unless the user named one


@numba.njit(parallel=True)
def _squares(x, out):
    for i in prange(x.shape[0]):
        out[i] = x[i] * x[i] + numba.get_thread_id() * 0.0


def test_serial_twin_same_answer_other_name():
    twin = serial_twin(_squares, "_squares_serial")
    x = np.arange(100.0)
    a, b = np.empty(100), np.empty(100)
    _squares(x, a)
    twin(x, b)
    assert np.array_equal(a, x * x) and np.array_equal(b, x * x)
    assert twin.py_func.__qualname__ == "_squares_serial"
    assert not twin.targetoptions.get("parallel", False)
    assert _squares.targetoptions.get("parallel")


def test_serial_twins_cached_as_their_kernels():
    """A twin of a disk-cached kernel is disk-cached too (numba keeps ``cache`` out of the options
    the twin copies: the project's twins were compiled anew by every process, 10-20 s for the
    hull-pair batch's); a twin of an uncached kernel stays uncached."""
    from numba.core.caching import NullCache

    from app.world import solver
    from obbcollide import hull_batch

    for kernel, twin in ((hull_batch._collide_pairs_kernel, hull_batch._collide_pairs_serial),
                         (solver._constraints, solver._constraints_serial),
                         (solver._solve_islands, solver._solve_islands_serial),
                         (solver._split_islands, solver._split_islands_serial)):
        assert not isinstance(kernel._cache, NullCache)
        assert not isinstance(twin._cache, NullCache), twin.py_func.__qualname__
        # (the index files are named after the function: the twin's stays apart from the kernel's)
        assert twin._cache._cache_path == kernel._cache._cache_path
        assert twin._cache._cache_file._index_name != kernel._cache._cache_file._index_name
    assert isinstance(serial_twin(_squares, "_squares_serial2")._cache, NullCache)


def test_small_batches_stay_on_one_thread():
    c = ThreadChoice("test small", 100)
    for k in (0, 1, 99, 100, 199):
        assert c.runs(k) == 1
    # recorded small calls teach nothing
    c.record(150, 1, 1.0)
    assert c.cost == {False: None, True: None}


def test_eligible_by_size():
    c = ThreadChoice("test eligible", 100)
    assert c.eligible(199, 8) == 1
    assert c.eligible(200, 8) == 2
    assert c.eligible(10_000, 8) == 8
    assert c.eligible(10_000, 1) == 1
    with pytest.raises(ValueError, match="min_per_thread"):
        ThreadChoice("test bad", 0)


@needs_threads
def test_big_batches_threaded_until_serial_wins_then_retried():
    c = ThreadChoice("test adapt", 10)
    k = 1000
    assert c.runs(k) > 1  # nothing measured: threads first
    c.record(k, 2, 1e-3)
    assert c.runs(k) == 1  # the serial driver is measured next
    c.record(k, 1, 4e-4)  # serial wins (busy machine)
    picks = [c.runs(k) for _ in range(threads._FIRST_RETRY - 1)]
    assert picks == [1] * (threads._FIRST_RETRY - 1)
    assert c.runs(k) > 1  # the retry
    c.record(k, 2, 2e-3)  # loses again: the next retry waits twice as long
    assert c.retry == 2 * threads._FIRST_RETRY
    picks = [c.runs(k) for _ in range(2 * threads._FIRST_RETRY - 1)]
    assert set(picks) == {1}
    assert c.runs(k) > 1
    c.record(k, 2, 1e-6)  # the machine is quiet again: threads win and stay
    assert c.retry == threads._FIRST_RETRY
    assert all(c.runs(k) > 1 for _ in range(threads._FIRST_RETRY - 1))


@needs_threads
def test_retry_interval_capped():
    c = ThreadChoice("test cap", 10)
    c.record(1000, 2, 1.0)
    c.record(1000, 1, 1e-3)
    for _ in range(12):
        while c.runs(1000) == 1:
            pass
        c.record(1000, 2, 1.0)
    assert c.retry == threads._LAST_RETRY


def test_forced_modes():
    c = ThreadChoice("test forced", 1000)
    with forced("serial"):
        assert c.runs(10**6) == 1
    with forced("threaded"):
        assert c.runs(50) == min(numba.get_num_threads(), 50)
        c.record(50, 2, 1.0)  # forced calls are not timed
    assert c.cost == {False: None, True: None}
    assert c.runs(50) == 1
    with pytest.raises(ValueError, match="mode"):
        with forced("sometimes"):
            pass


def _batch(seed, k):
    rng = np.random.default_rng(seed)
    hulls = [HullData.from_points(CORNERS * rng.uniform(0.2, 1.0, 3)) for _ in range(4)]
    p = rng.normal(size=(40, 3))
    hulls.append(HullData.from_points(p / np.linalg.norm(p, axis=1, keepdims=True)))
    table = HullTable(hulls)
    ia, ib = rng.integers(0, len(hulls), k), rng.integers(0, len(hulls), k)
    pa = np.tile(np.eye(4), (k, 1, 1))
    pb = np.tile(np.eye(4), (k, 1, 1))
    pa[:, :3, :3] = Rotation.random(k, random_state=seed).as_matrix()
    pb[:, :3, :3] = Rotation.random(k, random_state=seed + 1).as_matrix()
    pb[:, :3, 3] = rng.normal(size=(k, 3)) * 1.2  # about half overlap
    return table, ia, pa, ib, pb


@pytest.mark.parametrize("seed", [0, 1])
def test_hull_pairs_same_on_one_and_all_threads(seed):
    k = 2 * MIN_HULL_PAIRS_PER_THREAD + 37
    table, ia, pa, ib, pb = _batch(seed, k)
    caches = {}
    out = {}
    for mode in ("serial", "threaded"):
        caches[mode] = np.full((k, 3), -1, np.int64)
        with forced(mode):
            out[mode] = collide_hull_pairs(table, ia, pa, ib, pb, 0.02, caches[mode])
    a, b = out["serial"], out["threaded"]
    assert a.count.sum() > 0 and (a.count == 0).sum() > 0  # both touching and apart pairs
    for name in ("count", "kind", "tests", "sat_depth", "normal", "points_a", "points_b", "depths", "ids"):
        assert np.array_equal(getattr(a, name), getattr(b, name), equal_nan=True), name
    assert np.array_equal(caches["serial"], caches["threaded"])


def test_hull_pairs_choice_is_registered_with_measured_threshold():
    c = threads.CHOICES["hull pairs"]
    assert c.min_per_thread == MIN_HULL_PAIRS_PER_THREAD
    assert c.runs(2 * MIN_HULL_PAIRS_PER_THREAD - 1) == 1
