"""Uniform grid as a spatial hash: boxes in every cell they overlap.

RTCD 7.1 (uniform grids, with hashed storage): space is cut into cubic
cells of side ``cell``; each box is entered into every cell its extent
overlaps, and two boxes are tested only if they share a cell. The cells are not
stored as a dense array but hashed (Teschner et al., "Optimized spatial
hashing", 2003, the three large primes) into a table of ``2^k >= 2 * entries``
buckets, filled by a counting sort each update, so memory is O(entries)
whatever the extent of the world. Different cells that land in the same bucket
are told apart by their integer coordinates.

Each overlapping pair shares several cells; it is reported only in the cell
that contains the componentwise maximum of the two lower corners, a point
that lies in both boxes when they overlap, so every pair is reported exactly
once without a set. The
cell coordinate is a monotone function of the coordinate (``floor((x - o) /
cell)``, clamped to +-2^40 so that far-away boxes do not overflow), which is
all the argument needs.

A box covering more than ``max_cells`` cells (a floor, a teleport to far away
when the cell is small) is not entered; it goes to an "oversized" list tested
against every other box.

The cell side is ``cell_factor`` (default 1.5) times the median of the boxes' largest
extents, chosen at each rebuild (RTCD 7.1 on cell size: cells about the size of the
objects), unless ``cell_size`` fixes it.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from .._jit import njit
from .._validate import MAX_COORD, as_integer, as_number
from ._base import BroadPhase, pairs_from_keys, reserve_keys

__all__ = ["UniformGrid"]

_CLAMP = float(2 ** 40)


@njit
def _cell_range(lo, hi, origin, cell, lo_cell, hi_cell):
    """Integer cell coordinates of each box's lower and upper corner."""
    n = lo.shape[0]
    for b in range(n):
        for a in range(3):
            x0 = np.floor((lo[b, a] - origin[a]) / cell)
            x1 = np.floor((hi[b, a] - origin[a]) / cell)
            lo_cell[b, a] = np.int64(min(max(x0, -_CLAMP), _CLAMP))
            hi_cell[b, a] = np.int64(min(max(x1, -_CLAMP), _CLAMP))


@njit
def _hash(cx, cy, cz):
    """Teschner's spatial hash on the low 21 bits of each coordinate (no overflow)."""
    return ((cx & 0x1FFFFF) * 73856093) ^ ((cy & 0x1FFFFF) * 19349663) ^ ((cz & 0x1FFFFF) * 83492791)


@njit
def _grid_pairs(lo, hi, origin, cell, max_cells):
    """All overlapping pairs through the hashed grid.

    Returns (pair keys, count, box tests, oversized boxes, box-cell entries).
    """
    n = lo.shape[0]
    lo_cell = np.empty((n, 3), np.int64)
    hi_cell = np.empty((n, 3), np.int64)
    _cell_range(lo, hi, origin, cell, lo_cell, hi_cell)

    oversized = np.zeros(n, np.bool_)
    n_entries = 0
    n_over = 0
    for b in range(n):
        cells = 1
        for a in range(3):
            span = hi_cell[b, a] - lo_cell[b, a] + 1
            if span > max_cells:
                cells = max_cells + 1
                break
            cells *= span
        if cells > max_cells:
            oversized[b] = True
            n_over += 1
        else:
            n_entries += cells

    # counting sort of the entries into 2^k buckets
    size = 16
    while size < 2 * n_entries:
        size *= 2
    mask = size - 1
    start = np.zeros(size + 1, np.int64)
    for b in range(n):
        if oversized[b]:
            continue
        for cx in range(lo_cell[b, 0], hi_cell[b, 0] + 1):
            for cy in range(lo_cell[b, 1], hi_cell[b, 1] + 1):
                for cz in range(lo_cell[b, 2], hi_cell[b, 2] + 1):
                    start[(_hash(cx, cy, cz) & mask) + 1] += 1
    for k in range(size):
        start[k + 1] += start[k]
    fill = start[:size].copy()
    ent_box = np.empty(n_entries, np.int64)
    ent_cell = np.empty((n_entries, 3), np.int64)
    for b in range(n):
        if oversized[b]:
            continue
        for cx in range(lo_cell[b, 0], hi_cell[b, 0] + 1):
            for cy in range(lo_cell[b, 1], hi_cell[b, 1] + 1):
                for cz in range(lo_cell[b, 2], hi_cell[b, 2] + 1):
                    h = _hash(cx, cy, cz) & mask
                    p = fill[h]
                    fill[h] += 1
                    ent_box[p] = b
                    ent_cell[p, 0] = cx
                    ent_cell[p, 1] = cy
                    ent_cell[p, 2] = cz

    # pairs bucket by bucket, appended branch-free (see ``reserve_keys``)
    keys = np.empty(max(16, 4 * n), np.int64)
    count = 0
    tests = 0
    for h in range(size):
        s = start[h]
        e = start[h + 1]
        if e - s < 2:
            continue
        need = (e - s) * (e - s - 1) // 2
        if count + need > keys.shape[0]:  # call only to grow (a call per loop costs refcounts)
            keys = reserve_keys(keys, count, need)
        for p in range(s, e):
            i = ent_box[p]
            cx = ent_cell[p, 0]
            cy = ent_cell[p, 1]
            cz = ent_cell[p, 2]
            for q in range(p + 1, e):
                j = ent_box[q]
                # same cell (not another cell hashed into this bucket), and the
                # cell holding the max of the two lower corners: report here only
                here = ((ent_cell[q, 0] == cx) & (ent_cell[q, 1] == cy) & (ent_cell[q, 2] == cz)
                        & (max(lo_cell[i, 0], lo_cell[j, 0]) == cx)
                        & (max(lo_cell[i, 1], lo_cell[j, 1]) == cy)
                        & (max(lo_cell[i, 2], lo_cell[j, 2]) == cz))
                tests += here
                keys[count] = i * n + j
                count += here & ((lo[i, 0] <= hi[j, 0]) & (lo[j, 0] <= hi[i, 0]) & (lo[i, 1] <= hi[j, 1])
                                 & (lo[j, 1] <= hi[i, 1]) & (lo[i, 2] <= hi[j, 2]) & (lo[j, 2] <= hi[i, 2]))

    if n_over:
        for i in range(n):
            if not oversized[i]:
                continue
            if count + n > keys.shape[0]:  # call only to grow (a call per loop costs refcounts)
                keys = reserve_keys(keys, count, n)
            for j in range(n):
                if j == i or (oversized[j] and j < i):
                    continue
                tests += 1
                keys[count] = i * n + j
                count += ((lo[i, 0] <= hi[j, 0]) & (lo[j, 0] <= hi[i, 0]) & (lo[i, 1] <= hi[j, 1])
                          & (lo[j, 1] <= hi[i, 1]) & (lo[i, 2] <= hi[j, 2]) & (lo[j, 2] <= hi[i, 2]))
    return keys, count, tests, n_over, n_entries


def median_extent(lo: NDArray[np.float64], hi: NDArray[np.float64]) -> float:
    """Median over boxes of the largest side; a positive fallback when all are flat.

    Parameters
    ----------
    lo, hi : (n, 3) float64

    Returns
    -------
    size : float
        The median largest side if positive, else the world extent over
        ``cbrt(n)``, else 1.0.
    """
    size = float(np.median((hi - lo).max(axis=1)))
    if size > 0 and np.isfinite(size):
        return size
    with np.errstate(over="ignore"):
        world = float((hi.max(axis=0) - lo.min(axis=0)).max())
    if world > 0 and np.isfinite(world):
        return world / max(1.0, lo.shape[0] ** (1 / 3))
    return 1.0


class UniformGrid(BroadPhase):
    """Uniform grid / spatial hash (RTCD 7.1).

    Parameters
    ----------
    cell_size : float, optional
        Fixed cell side (world units). Default: ``cell_factor`` times the
        median largest box side, chosen at each rebuild.
    cell_factor : float
        Multiplier of the median box size (default 1.5: at n = 5000 moving
        boxes, 1.5-2 cost about half of 1.0, whose ~6 cells per box make the
        entry bookkeeping dominate; 3.0 tests too many pairs per cell).
    max_cells : int
        A box covering more cells than this is "oversized": kept out of the
        grid and tested against every other box (default 64).

    ``stats``: ``box_tests``, ``cell_size``, ``entries`` (box-cell entries),
    ``oversized``, ``pairs``.
    """

    name = "grid"

    def __init__(self, cell_size: float | None = None, cell_factor: float = 1.5, max_cells: int = 64) -> None:
        super().__init__()
        if cell_size is not None:
            cell_size = as_number(cell_size, "cell_size", low=0.0, low_open=True, high=MAX_COORD)
        as_number(cell_factor, "cell_factor", low=0.0, low_open=True, high=MAX_COORD)
        as_integer(max_cells, "max_cells", low=1, high=1 << 30)
        self.fixed_cell = cell_size
        self.cell_factor = float(cell_factor)
        self.max_cells = int(max_cells)
        self.cell = None

    def clear(self) -> None:
        super().clear()
        self.cell = None

    def _update(self, lo, hi, rebuild):
        if rebuild or self.cell is None:
            if self.fixed_cell is not None:
                self.cell = float(self.fixed_cell)
            else:
                self.cell = self.cell_factor * median_extent(lo, hi)
        # the origin only shifts the lattice; any value keeps the method exact
        origin = np.zeros(3)
        keys, count, tests, n_over, n_entries = _grid_pairs(lo, hi, origin, self.cell, self.max_cells)
        pairs = pairs_from_keys(keys, count, lo.shape[0])
        self.stats = {"box_tests": int(tests), "cell_size": self.cell, "entries": int(n_entries),
                      "oversized": int(n_over)}
        return pairs
