"""What every broad phase shares: the protocol, input checks, the pair buffer.

A broad phase takes the world AABBs of ``n`` proxies (closed boxes, given as
``lo`` and ``hi`` corners) once per step and returns every overlapping pair.
Indices are stable between calls: row ``i`` is the same body every step, which
is what lets the incremental structures (sweep-and-prune's sorted end points,
the dynamic tree's fat boxes) reuse last step's work. When ``n`` changes the
structure rebuilds.

The pair convention is the one of the whole library: closed sets, so boxes
that only touch (``lo_i == hi_j`` on an axis) overlap (Ericson RTCD 4.2.1,
with ``<=`` instead of ``<``).
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .._jit import njit
from .._validate import as_array

__all__ = ["BroadPhase", "check_boxes", "EMPTY_PAIRS", "reserve_keys", "pairs_from_keys"]

EMPTY_PAIRS = np.empty((0, 2), np.int64)


def check_boxes(lo: ArrayLike, hi: ArrayLike) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Validate a batch of AABBs at the public edge.

    Parameters
    ----------
    lo, hi : (n, 3) array_like
        Lower and upper corners.

    Returns
    -------
    lo, hi : (n, 3) float64, C-contiguous

    Raises
    ------
    ValueError
        Naming ``lo`` or ``hi``: wrong shape, NaN / infinity, non-numbers, or a
        row with ``lo > hi`` on some axis.
    """
    lo = as_array(lo, "lo", (3,))
    hi = as_array(hi, "hi", (3,))
    if lo.ndim != 2:
        raise ValueError(f"lo: expected shape (n, 3), got {lo.shape}")
    if hi.shape != lo.shape:
        raise ValueError(f"hi: expected shape {lo.shape} like lo, got {hi.shape}")
    bad = lo > hi
    if bad.any():
        row, axis = np.argwhere(bad)[0]
        raise ValueError(f"hi: hi < lo at row {row}, axis {axis} ({hi[row, axis]!r} < {lo[row, axis]!r})")
    return np.ascontiguousarray(lo), np.ascontiguousarray(hi)


@njit
def reserve_keys(keys, count, extra):
    """Return ``keys`` (m,) int64 with room for ``count + extra`` entries (doubling).

    The kernels append candidate pairs branch-free: write the key of every
    tested pair at ``keys[count]`` and add the overlap test's result (0 or 1)
    to ``count``. A data-dependent branch per test costs a misprediction
    about every other test; the store does not (sweep-and-prune at n = 5000,
    900k tests: several times faster this way). Callers test the capacity
    themselves and call this only to grow: a call per loop iteration costs
    reference-count traffic on the returned array.
    """
    if count + extra <= keys.shape[0]:
        return keys
    out = np.empty(2 * (count + extra) + 16, np.int64)
    out[:count] = keys[:count]
    return out


@njit
def pairs_from_keys(keys, count, n):
    """Pairs from keys ``a * n + b`` (either order), as (k, 2) int64 with i < j, rows sorted."""
    norm = np.empty(count, np.int64)
    for k in range(count):
        a = keys[k] // n
        b = keys[k] - a * n
        norm[k] = a * n + b if a < b else b * n + a
    norm.sort()
    out = np.empty((count, 2), np.int64)
    for k in range(count):
        out[k, 0] = norm[k] // n
        out[k, 1] = norm[k] - out[k, 0] * n
    return out


class BroadPhase:
    """The broad-phase protocol (base class of every implementation).

    Subclasses set ``name`` and implement ``_update(lo, hi)`` on validated
    input (and ``clear`` if they keep state).

    Attributes
    ----------
    name : str
        Registry key (``"brute"``, ``"sap"``, ``"grid"``, ``"octree"``, ``"tree"``).
    stats : dict
        Counters of the last :meth:`update`; always ``box_tests`` (pairwise
        AABB tests done, fat or tight) and ``pairs``.
    """

    name: str = "base"
    stats: dict[str, int | float | bool]

    def __init__(self) -> None:
        self.stats = {"box_tests": 0, "pairs": 0}
        self._n = -1

    def update(self, lo: ArrayLike, hi: ArrayLike, check: bool = True) -> NDArray[np.int64]:
        """All overlapping pairs of the boxes ``[lo[i], hi[i]]``.

        Parameters
        ----------
        lo, hi : (n, 3) float64
            World AABB corners of ``n`` proxies; index ``i`` is the same body
            between calls. When ``n`` differs from the previous call the
            structure rebuilds.
        check : bool
            Validate the boxes (default). ``False`` is for a caller that made
            them itself (the world, every step): C-contiguous (n, 3) float64,
            finite, ``lo <= hi``.

        Returns
        -------
        pairs : (k, 2) int64
            Every pair ``(i, j)``, ``i < j``, whose closed boxes overlap
            (``lo_i <= hi_j`` and ``lo_j <= hi_i`` on all three axes), rows
            sorted lexicographically.

        Raises
        ------
        ValueError
            Naming ``lo`` or ``hi`` (shape, non-finite, ``lo > hi``).
        """
        if check:
            lo, hi = check_boxes(lo, hi)
        n = lo.shape[0]
        rebuild = n != self._n
        self._n = n
        if n < 2:
            self.clear()
            self._n = n
            self.stats = {"box_tests": 0, "pairs": 0}
            return EMPTY_PAIRS.copy()
        pairs = self._update(lo, hi, rebuild)
        self.stats["pairs"] = int(pairs.shape[0])
        return pairs

    def _update(self, lo, hi, rebuild):  # pragma: no cover - abstract
        raise NotImplementedError

    def clear(self) -> None:
        """Forget all state; the next :meth:`update` rebuilds."""
        self._n = -1
        self.stats = {"box_tests": 0, "pairs": 0}

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"
