"""Sweep-and-prune on one axis with a persistent, insertion-sorted end-point list.

Baraff's sort-and-sweep (PhD thesis, 1992) as Ericson describes it (RTCD
7.5, sort and sweep): the ``2n`` end points of the boxes on one axis are
kept sorted; sweeping them in order, every box whose start is met is tested
against the boxes still open, on the other two axes only. Frame-to-frame
coherence comes from keeping the sorted order between calls and re-sorting it
by insertion sort, which is linear on nearly sorted input (RTCD 7.5), so a
slowly moving set costs O(n + swaps + tests).

Our choices:

- The sweep axis is the one with the largest variance of the box centres,
  chosen on a rebuild (first call, or ``n`` changed) and kept while the set
  stays the same, so the sorted order stays valid (the variance criterion of
  RTCD 7.5).
- Ties: at equal coordinates a start point sorts before an end point, so
  boxes that touch on the sweep axis are still open together (closed boxes).
- If the insertion sort needs more swaps than a full sort would cost
  (teleports, an explosion) it stops and the list is re-sorted from scratch
  (``stats["resorted"]``).
"""

from __future__ import annotations

import math

import numpy as np

from .._jit import njit
from ._base import BroadPhase, pairs_from_keys, reserve_keys

__all__ = ["SweepAndPrune"]


@njit
def _refresh(lo, hi, axis, ep_val, ep_id):
    """Copy the current coordinate of every end point (id = 2 * box + is_end)."""
    for k in range(ep_id.shape[0]):
        e = ep_id[k]
        if e & 1:
            ep_val[k] = hi[e >> 1, axis]
        else:
            ep_val[k] = lo[e >> 1, axis]


@njit
def _insertion_sort(ep_val, ep_id, max_swaps):
    """Insertion sort of the end points by (value, is_end); returns the swap count.

    Stops early (returning a count > ``max_swaps``) when the list is too far
    from sorted; the caller then sorts it from scratch.
    """
    swaps = 0
    m = ep_val.shape[0]
    for k in range(1, m):
        v = ep_val[k]
        e = ep_id[k]
        end = e & 1
        j = k - 1
        while j >= 0 and (ep_val[j] > v or (ep_val[j] == v and (ep_id[j] & 1) > end)):
            ep_val[j + 1] = ep_val[j]
            ep_id[j + 1] = ep_id[j]
            j -= 1
            swaps += 1
        ep_val[j + 1] = v
        ep_id[j + 1] = e
        if swaps > max_swaps:
            return swaps
    return swaps


@njit
def _full_sort(lo, hi, axis, ep_val, ep_id):
    """Sort all end points from scratch: starts listed before ends, then a stable sort."""
    n = lo.shape[0]
    vals = np.empty(2 * n, np.float64)
    ids = np.empty(2 * n, np.int64)
    for b in range(n):
        vals[b] = lo[b, axis]
        ids[b] = 2 * b
        vals[n + b] = hi[b, axis]
        ids[n + b] = 2 * b + 1
    order = np.argsort(vals, kind="mergesort")
    for k in range(2 * n):
        ep_val[k] = vals[order[k]]
        ep_id[k] = ids[order[k]]


@njit
def _sweep(lo, hi, axis, ep_id):
    """Sweep the sorted end points; returns (pair keys, count, box tests).

    A box is opened at its start point and tested against every open box on
    the two other axes (closed test); it is closed at its end point (swap with
    the last open box, O(1)). The open boxes' extents on the other two axes
    are kept packed in ``open_box`` so the inner loop reads memory in order,
    and hits are appended branch-free (see ``reserve_keys``).
    """
    n = lo.shape[0]
    a1 = (axis + 1) % 3
    a2 = (axis + 2) % 3
    active = np.empty(n, np.int64)
    open_box = np.empty((n, 4), np.float64)
    slot = np.empty(n, np.int64)
    n_active = 0
    keys = np.empty(max(16, 4 * n), np.int64)
    count = 0
    tests = 0
    for k in range(ep_id.shape[0]):
        e = ep_id[k]
        b = e >> 1
        if e & 1:
            s = slot[b]
            n_active -= 1
            last = active[n_active]
            active[s] = last
            open_box[s] = open_box[n_active]
            slot[last] = s
        else:
            l1 = lo[b, a1]
            h1 = hi[b, a1]
            l2 = lo[b, a2]
            h2 = hi[b, a2]
            tests += n_active
            if count + n_active > keys.shape[0]:  # call only to grow (a call per loop costs refcounts)
                keys = reserve_keys(keys, count, n_active)
            for t in range(n_active):
                keys[count] = active[t] * n + b
                count += ((open_box[t, 0] <= h1) & (l1 <= open_box[t, 1])
                          & (open_box[t, 2] <= h2) & (l2 <= open_box[t, 3]))
            active[n_active] = b
            open_box[n_active, 0] = l1
            open_box[n_active, 1] = h1
            open_box[n_active, 2] = l2
            open_box[n_active, 3] = h2
            slot[b] = n_active
            n_active += 1
    return keys, count, tests


class SweepAndPrune(BroadPhase):
    """Sort-and-sweep on one axis, insertion-sorted between calls (RTCD 7.5).

    Parameters
    ----------
    axis : {None, 0, 1, 2}
        Sweep axis; ``None`` (default) picks the axis of largest variance of
        the box centres at each rebuild.

    ``stats``: ``box_tests`` (open-box tests on the two other axes),
    ``swaps`` (insertion-sort moves this update), ``resorted`` (the list was
    sorted from scratch: rebuild or too many swaps), ``axis``, ``pairs``.
    """

    name = "sap"

    def __init__(self, axis: int | None = None) -> None:
        super().__init__()
        if axis not in (None, 0, 1, 2):
            raise ValueError(f"axis: expected None, 0, 1 or 2, got {axis!r}")
        self.fixed_axis = axis
        self.axis = 0
        self._ep_val = None
        self._ep_id = None

    def clear(self) -> None:
        super().clear()
        self._ep_val = None
        self._ep_id = None

    def _update(self, lo, hi, rebuild):
        n = lo.shape[0]
        swaps = 0
        if rebuild or self._ep_id is None:
            if self.fixed_axis is None:
                centres = 0.5 * (lo + hi)
                # variance of centres; np.var of huge coordinates may overflow to inf, which is fine
                with np.errstate(over="ignore", invalid="ignore"):
                    var = np.nan_to_num(centres.var(axis=0), nan=np.inf)
                self.axis = int(np.argmax(var))
            else:
                self.axis = self.fixed_axis
            self._ep_val = np.empty(2 * n, np.float64)
            self._ep_id = np.empty(2 * n, np.int64)
            _full_sort(lo, hi, self.axis, self._ep_val, self._ep_id)
            resorted = True
        else:
            _refresh(lo, hi, self.axis, self._ep_val, self._ep_id)
            # a full sort of 2n keys costs about 2n log2(2n) moves; past that, start over
            cap = 2 * n * max(1, int(math.log2(2 * n))) * 2
            swaps = _insertion_sort(self._ep_val, self._ep_id, cap)
            resorted = swaps > cap
            if resorted:
                _full_sort(lo, hi, self.axis, self._ep_val, self._ep_id)
        keys, count, tests = _sweep(lo, hi, self.axis, self._ep_id)
        pairs = pairs_from_keys(keys, count, n)
        self.stats = {"box_tests": int(tests), "swaps": int(swaps), "resorted": bool(resorted),
                      "axis": self.axis}
        return pairs
