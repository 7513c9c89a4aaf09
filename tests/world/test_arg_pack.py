"""An ArgPack (app/world/arg_pack.py) hands compiled code the arrays it was made of, the same
objects (written in place, seen by both sides), and a PackCache makes a pack again exactly when an
object of its key is another one."""

import numpy as np
from numba import njit

from app.world.arg_pack import PackCache, pack_args


@njit
def _sum_and_mark(pack):
    a, b, k = pack.args
    b[0] = 7.0
    return a.sum() + b.sum() + k


def test_pack_reads_and_writes_its_arrays():
    a, b = np.arange(4.0), np.zeros(3)
    p = pack_args((a, b, 2))
    assert _sum_and_mark(p) == 6.0 + 7.0 + 2
    assert b[0] == 7.0  # (the compiled code wrote the caller's array)
    a[1] = 100.0  # (changed in place: the next call sees it)
    assert _sum_and_mark(p) == 105.0 + 7.0 + 2


def test_pack_cache_makes_a_pack_again_only_when_an_owner_changes():
    a, b = np.zeros(3), np.ones(2)
    made = []

    def make(*arrays):
        made.append(arrays)
        return arrays

    cache = PackCache()
    first = cache.get((a, b), lambda: make(a, b, 1))
    assert cache.get((a, b), lambda: make(a, b, 1)) is first and len(made) == 1
    assert cache.args[0] is a and cache.args[1] is b
    c = b.copy()  # (equal values, another object: another pack)
    second = cache.get((a, c), lambda: make(a, c, 1))
    assert second is not first and len(made) == 2 and cache.args[1] is c
    assert _sum_and_mark(second) == 0.0 + 8.0 + 1 and c[0] == 7.0 and b[0] == 1.0
    assert cache.get((a,), lambda: make(a, b, 1)) is not second and len(made) == 3  # (a shorter key)
