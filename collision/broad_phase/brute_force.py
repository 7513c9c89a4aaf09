"""The reference broad phase: every pair of boxes tested, O(n^2).

Jolt keeps ``BroadPhaseBruteForce`` as "a reference implementation"; ours is
the one every other broad phase is tested equal to. It keeps no state between
calls, so it cannot be wrong about coherence.
"""

import numpy as np

from .._jit import njit
from ._base import BroadPhase, reserve_keys

__all__ = ["BruteForce"]


@njit
def _all_pairs(lo, hi):
    """All closed-overlapping pairs (i < j), in lexicographic order.

    The plain double loop with the closed AABB test of
    RTCD 4.2.1 (``<=``: touching boxes overlap), hits appended branch-free
    (``reserve_keys``). Keys ``i * n + j`` come out sorted because ``i`` then
    ``j`` increase.
    """
    n = lo.shape[0]
    keys = np.empty(max(16, 4 * n), np.int64)
    count = 0
    for i in range(n):
        lx, ly, lz = lo[i, 0], lo[i, 1], lo[i, 2]
        hx, hy, hz = hi[i, 0], hi[i, 1], hi[i, 2]
        if count + n - i > keys.shape[0]:  # call only to grow (a call per loop costs refcounts)
            keys = reserve_keys(keys, count, n - i)
        for j in range(i + 1, n):
            keys[count] = i * n + j
            count += ((lo[j, 0] <= hx) & (lx <= hi[j, 0]) & (lo[j, 1] <= hy) & (ly <= hi[j, 1])
                      & (lo[j, 2] <= hz) & (lz <= hi[j, 2]))
    out = np.empty((count, 2), np.int64)
    for k in range(count):
        out[k, 0] = keys[k] // n
        out[k, 1] = keys[k] - out[k, 0] * n
    return out


class BruteForce(BroadPhase):
    """All n(n-1)/2 pairs tested every update; the reference for the others.

    ``stats``: ``box_tests`` = n(n-1)/2, ``pairs``.
    """

    name = "brute"

    def _update(self, lo, hi, rebuild):
        n = lo.shape[0]
        pairs = _all_pairs(lo, hi)
        self.stats = {"box_tests": n * (n - 1) // 2}
        return pairs
