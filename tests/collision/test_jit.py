"""collision._jit: ``njit(borrow=True)`` kernels compile without reference counting, give the same
answers as the same code with it, hold no reference after a call, and may not allocate.

The per-pair and per-point kernels of the hot loops borrow (the pose check, the cached
separating-axis test, the box and hull manifolds, the contact store's row helpers, the solver's
body rows and its per-island iterations, the gathering of the contact points); each is checked to
be compiled that way, since a decorator lost in an edit would cost the loops several
times their arithmetic again without changing any answer.
"""

import sys

import numba
import numpy as np
import pytest

from obbcollide._jit import njit

pytestmark = pytest.mark.skipif(numba.config.DISABLE_JIT, reason="checks numba's compilation (NUMBA_DISABLE_JIT set)")


def _scaled_rows(src, k, s, out):
    """``out[i] = s * src[i]`` for ``i < k``; returns the sum of what it wrote."""
    t = 0.0
    for i in range(k):
        for c in range(src.shape[1]):
            out[i, c] = s * src[i, c]
            t += out[i, c]
    return t


_borrowing = njit(borrow=True)(_scaled_rows)
_counting = njit(_scaled_rows)


@njit
def _caller(kernel_is_borrowing, src, out):
    """Calls the kernels from compiled code, on views cut here (the hot loops' pattern)."""
    t = 0.0
    for r in range(src.shape[0] - 1):
        if kernel_is_borrowing:
            t += _borrowing(src[r:r + 2], 2, 0.5, out[r:r + 2])
        else:
            t += _counting(src[r:r + 2], 2, 0.5, out[r:r + 2])
    return t


def test_borrowing_kernel_same_answers():
    rng = np.random.default_rng(3)
    src = rng.normal(size=(50, 3))
    a, b = np.zeros((50, 3)), np.zeros((50, 3))
    assert _borrowing(src, 50, 1.5, a) == _counting(src, 50, 1.5, b)
    assert np.array_equal(a, b) and np.array_equal(a, 1.5 * src)
    a[:], b[:] = 0.0, 0.0
    assert _caller(True, src, a) == _caller(False, src, b)
    assert np.array_equal(a, b) and np.array_equal(a, 0.5 * src)
    assert _borrowing.targetoptions["_nrt"] is False
    assert "_nrt" not in _counting.targetoptions


def test_borrowing_kernel_keeps_no_reference():
    src, out = np.ones((4, 3)), np.zeros((4, 3))
    before = sys.getrefcount(src), sys.getrefcount(out)
    for _ in range(10000):
        _borrowing(src, 4, 2.0, out)
        _caller(True, src, out)
    assert (sys.getrefcount(src), sys.getrefcount(out)) == before


def test_borrowing_kernel_may_not_allocate():
    @njit(borrow=True, cache=False)
    def allocates(n):
        return np.zeros(n).sum()

    with pytest.raises(numba.core.errors.TypingError):  # (numba refuses np.empty without its runtime)
        allocates(3)


def test_hot_kernels_borrow():
    from app.world import contact_store, contacts, dynamics, patches, solver
    from obbcollide import box_box, broad_phase, contact_reduce, gauss_map, hull_batch, manifold, transform

    kernels = [transform.check_pose_kernel, manifold.relative_pose, manifold.cached_sep,
               manifold.collide_hull_hull_into, manifold._face_contact, manifold._face_axes_soa,
               gauss_map.edge_pairs_pruned, gauss_map.edge_pairs_brute, box_box.collide_box_box_into,
               box_box._box_face_contact, contact_reduce._reduce_into, hull_batch._clear_row,
               contact_store.key_compare, contact_store._carry_row, contacts._piece_boxes,
               broad_phase.aabb_tree._insert_leaf, solver._load, solver._store, solver._side,
               solver._groups, solver._solve_range, solver._split_range, solver._warm_range, solver._sweeps,
               solver._sweeps_two, solver._bounce_range, solver._solve_two, solver._holds, dynamics._gather_kernel,
               patches.patch_slots, patches.longest_run]
    for k in kernels:
        assert k.targetoptions.get("_nrt") is False, k.py_func.__qualname__
