"""Many hull-hull contact manifolds in one compiled call.

:func:`collision.manifold.collide_hull_hull` costs a few microseconds of
Python per pair (argument checks, a dataclass) on top of the kernel; a world
of a thousand resting boxes asks for thousands of manifolds per step. Here the
hulls live once in a :class:`HullTable`: every :class:`~collision.hull_data.HullData`
array of every hull concatenated, with per-hull start offsets (the CSR layout
of the face loops, one level up; Box2D's and Jolt's narrow phases likewise walk
shape data stored in flat pools). :func:`collide_hull_pairs` then runs, for
``k`` pairs, one compiled loop that slices each hull's arrays out of the table
(contiguous views, no copy; the indices stored inside a hull stay local to it)
and calls :func:`collision.manifold.collide_hull_hull_into` on them, with
scratch arrays allocated once per thread, not per pair; the pairs are split
into one run per numba thread (a batch too small to pay for the threads, or a
machine where they lose, runs on the kernel's serial twin: :mod:`collision.threads`).
Each pair therefore gets exactly what
``collide_hull_hull`` would give it, bit for bit, on any number of threads:
same kernel, same inputs.

Before a pair's kernel call the loop tests the feature the pair's coherence cache names
(:func:`collision.manifold.cached_sep`, the kernel's own first test), reading both hulls in place
from the table's arrays: in a settled scene most candidate pairs stay apart along that feature,
and for them the loop writes the kernel's outputs itself. A kernel call costs more than that test:
numba counts references, with atomic operations, on each of the arrays a call passes (26 hull
arrays, the scratch tuple and the output rows). Measured on the captured pairs of one settled step
of the decomposed-mesh scene of ``benchmarks/bench_dynamics.py`` (6,538 piece pairs, 5,636 of
them decided by the cached feature; one thread, the two runs interleaved, load average 3.2 on two
cores): those pairs from 2.8 to 0.85 us each, the whole batch from 46 to 35 ms; the other 902
pairs (a pair not decided there tells its kernel so, which then skips that test) cost the same
as before, 33 us each under that load: SAT arithmetic on hulls of 30 to 110 vertices.

Frame and signs are those of :mod:`collision.manifold`: normal from A towards
B in world coordinates, ``depths > 0`` penetration, ``points_a - points_b ==
depths[:, None] * normal``.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from numba import prange

from ._jit import njit
from ._validate import as_array, as_indices
from .convex import ConvexPolyhedron
from .hull_data import HullData
from .threads import ThreadChoice, serial_twin, timed
from .box_box import BOX_FLOATS, BOX_INTS, box_rows, box_work, collide_box_box_into, is_box
from .manifold import KIND_NAMES, Manifold, cached_sep, collide_hull_hull_into, hull_work, relative_pose
from .transform import POSE_ERRORS, check_pose_kernel

__all__ = ["HullTable", "ManifoldBatch", "collide_hull_pairs"]

_NONE = KIND_NAMES.index("none")

# Columns of HullTable.starts: where each concatenated array's part of a hull begins.
_FIELDS = ("vertices", "normals", "offsets", "face_start", "face_verts", "edge_verts", "edge_faces",
           "vert_face_start", "vert_faces", "arc_caps", "arc_order", "group_caps", "group_start")
_COL = {name: c for c, name in enumerate(_FIELDS)}
_ITEM = {"vertices": (3,), "normals": (3,), "edge_verts": (2,), "edge_faces": (2,), "arc_caps": (5,),
         "group_caps": (5,)}
_DTYPE = {"vertices": np.float64, "normals": np.float64, "offsets": np.float64, "arc_caps": np.float64,
          "group_caps": np.float64}


class HullTable:
    """Convex hulls packed into concatenated arrays, for :func:`collide_hull_pairs`.

    Hull ``h`` owns the rows ``starts[h, c]:starts[h + 1, c]`` of the ``c``-th
    array of :data:`_FIELDS` (``vertices``, ``normals``, ``offsets``,
    ``face_start``, ``face_verts``, ``edge_verts``, ``edge_faces``,
    ``vert_face_start``, ``vert_faces``, ``arc_caps``, ``arc_order``,
    ``group_caps``, ``group_start``); indices inside those rows are local
    to the hull (as in its :class:`HullData`). The arrays grow by doubling, so
    adding ``n`` hulls one at a time copies O(total size) data in all.

    Adding the same :class:`HullData` (or the same ``ConvexPolyhedron``,
    whose ``HullData`` is cached on it) again returns the id it already has:
    a world of identical boxes stores one box.

    Attributes
    ----------
    starts : (h + 1, 13) int64
        Start rows per hull and array (row ``h`` holds the ends).
    scale : (h,) float64
        Each hull's :attr:`HullData.scale` (the kernel's tolerances use the
        smaller of a pair's two).
    boxes : (h,) bool
        Which hulls are boxes (:func:`collision.box_box.is_box`); a pair of two
        boxes runs :func:`collision.box_box.collide_box_box_into` on their rows
        (:func:`collision.box_box.box_rows`), which gives the same manifold.
    """

    def __init__(self, hulls: Iterable[HullData | ConvexPolyhedron] = ()) -> None:
        self._hulls = []
        self._ids = {}
        self._buf = {}
        for name in _FIELDS:
            shape = (16,) + _ITEM.get(name, ())
            self._buf[name] = np.empty(shape, dtype=_DTYPE.get(name, np.int64))
        self._starts = np.zeros((9, len(_FIELDS)), dtype=np.int64)
        self._scale = np.empty(8)
        self._box = np.zeros(8, dtype=np.bool_)
        self._box_f = np.zeros((8, BOX_FLOATS))
        self._box_i = np.zeros((8, BOX_INTS), dtype=np.int64)
        self._args = None  # (BOX_PAIRS, the kernel's table arguments), made on first use after an add
        for h in hulls:
            self.add(h)

    def __len__(self) -> int:
        return len(self._hulls)

    def hull(self, i: int) -> HullData:
        """The :class:`HullData` with id ``i``."""
        return self._hulls[i]

    @property
    def starts(self) -> NDArray[np.int64]:
        return self._starts[:len(self._hulls) + 1]

    @property
    def scale(self) -> NDArray[np.float64]:
        return self._scale[:len(self._hulls)]

    @property
    def boxes(self) -> NDArray[np.bool_]:
        return self._box[:len(self._hulls)]

    def array(self, name: str) -> NDArray[Any]:
        """The concatenated array ``name`` (one of the :class:`HullData` array fields), a view."""
        return self._buf[name][:self._starts[len(self._hulls), _COL[name]]]

    def add(self, hull: HullData | ConvexPolyhedron) -> int:
        """Add one hull; returns its id (an int, ids count from 0).

        Parameters
        ----------
        hull : HullData or ConvexPolyhedron

        Raises
        ------
        ValueError
            If ``hull`` is neither.
        """
        if not isinstance(hull, (HullData, ConvexPolyhedron)):
            raise ValueError(f"hull: expected a HullData or ConvexPolyhedron, got {type(hull).__name__}")
        hd = HullData.from_polyhedron(hull)
        hit = self._ids.get(id(hd))
        if hit is not None:
            return hit
        h = len(self._hulls)
        if h + 2 > len(self._starts):
            self._starts = _grow(self._starts, h + 2)
        if h + 1 > len(self._scale):
            self._scale = _grow(self._scale, h + 1)
        if h + 1 > len(self._box):
            self._box = _grow(self._box, h + 1)
            self._box_f = _grow(self._box_f, h + 1)
            self._box_i = _grow(self._box_i, h + 1)
        row = self._starts[h]
        for c, name in enumerate(_FIELDS):
            part = getattr(hd, name)
            end = row[c] + len(part)
            buf = self._buf[name]
            if end > len(buf):
                buf = self._buf[name] = _grow(buf, end)
            buf[row[c]:end] = part
            self._starts[h + 1, c] = end
        self._scale[h] = hd.scale
        self._box[h] = is_box(hd)
        if self._box[h]:
            self._box_f[h], self._box_i[h] = box_rows(hd)
        self._hulls.append(hd)  # keeps hd alive, so id(hd) stays its key
        self._ids[id(hd)] = h
        self._args = None
        return h

    def _kernel_args(self) -> tuple[Any, ...]:
        """The table's arguments of :func:`_collide_pairs_kernel` (its arrays, the starts, scales and box
        rows), kept until the next :meth:`add`: a world calls the batch every step, and cutting them
        again cost as much as a few box pairs."""
        if self._args is None or self._args[0] != BOX_PAIRS:
            n = len(self._hulls)
            boxes = self._box[:n] if BOX_PAIRS else np.zeros(n, np.bool_)
            self._args = (BOX_PAIRS, tuple(self._buf[name] for name in _FIELDS)
                          + (self._starts[:n + 1], self._scale[:n], boxes, self._box_f, self._box_i))
        return self._args[1]

    def extend(self, hulls: Iterable[HullData | ConvexPolyhedron]) -> NDArray[np.int64]:
        """Add several hulls; returns their ids as an ``(n,) int64`` array."""
        return np.array([self.add(h) for h in hulls], dtype=np.int64)


def _grow(arr, need):
    """A copy of ``arr`` with room for at least ``need`` rows (doubling), the old rows kept."""
    cap = max(need, 2 * len(arr))
    out = np.empty((cap,) + arr.shape[1:], dtype=arr.dtype)
    out[:len(arr)] = arr
    return out


@dataclass(frozen=True)
class ManifoldBatch:
    """The manifolds of ``k`` hull pairs, as flat arrays (row ``i`` is pair ``i``).

    Attributes
    ----------
    count : (k,) int64
        Contact points of each pair (0 to 4); rows past it are zeros.
    normal : (k, 3) float64
        Unit world normal from A towards B (zeros when ``count == 0``).
    points_a, points_b : (k, 4, 3) float64
        Contact points on A's and B's surfaces, world, deepest first.
    depths : (k, 4) float64
        Penetration along the normal (> 0) or minus the gap (< 0, speculative
        points within the margin).
    ids : (k, 4) int64
        Feature ids (see :mod:`collision.manifold`).
    kind : (k,) int64
        Index into :data:`collision.manifold.KIND_NAMES` (0 face of A, 1 face
        of B, 2 edge pair, 3 none).
    tests : (k,) int64
        Features whose separation was evaluated.
    sat_depth : (k,) float64
        The unbiased SAT minimum (see :class:`collision.manifold.Manifold`).
    """

    count: NDArray[np.int64]
    normal: NDArray[np.float64]
    points_a: NDArray[np.float64]
    points_b: NDArray[np.float64]
    depths: NDArray[np.float64]
    ids: NDArray[np.int64]
    kind: NDArray[np.int64]
    tests: NDArray[np.int64]
    sat_depth: NDArray[np.float64]

    def __len__(self) -> int:
        return len(self.count)

    @classmethod
    def empty(cls, k: int, kind: int = 0) -> ManifoldBatch:
        """``k`` rows of zeros (``kind``: the index every row's kind starts at), to be filled."""
        return cls(count=np.zeros(k, np.int64), normal=np.zeros((k, 3)), points_a=np.zeros((k, 4, 3)),
                   points_b=np.zeros((k, 4, 3)), depths=np.zeros((k, 4)), ids=np.zeros((k, 4), np.int64),
                   kind=np.full(k, kind, np.int64), tests=np.zeros(k, np.int64), sat_depth=np.zeros(k))

    def manifold(self, i: int) -> Manifold:
        """Pair ``i`` as a :class:`collision.manifold.Manifold` (copies of its rows)."""
        c = int(self.count[i])
        return Manifold(normal=self.normal[i].copy(), points_a=self.points_a[i, :c].copy(),
                        points_b=self.points_b[i, :c].copy(), depths=self.depths[i, :c].copy(),
                        ids=self.ids[i, :c].copy(), kind=KIND_NAMES[int(self.kind[i])],
                        tests=int(self.tests[i]), sat_depth=float(self.sat_depth[i]))


@njit
def _first_bad_pose(poses):
    """``(row, status)`` of the first pose that is not finite (1) or not rigid (2); ``(-1, 0)`` if none."""
    for k in range(poses.shape[0]):
        st = check_pose_kernel(poses[k])
        if st != 0:
            return k, st
    return -1, 0


@njit(borrow=True)
def _clear_row(i, normal, points_a, points_b, depths, ids):
    """Zero row ``i`` of the output arrays (what the pair kernels do first), element by element."""
    for c in range(3):
        normal[i, c] = 0.0
    for p in range(4):
        for c in range(3):
            points_a[i, p, c] = 0.0
            points_b[i, p, c] = 0.0
        depths[i, p] = 0.0
        ids[i, p] = 0


@njit(parallel=True)
def _collide_pairs_kernel(V, N, D, FS, FV, EV, EF, VFS, VF, AC, AO, GC, GS, starts, scale, boxes, box_f, box_i,
                          ia, poses_a, ib, poses_b, margins, caches,
                          count, normal, points_a, points_b, depths, ids, kind, tests, sat_depth, cache_first,
                          threads):
    """Fill the output rows of every pair; returns ``(row, status)`` of the first rejected pose, else
    ``(-1, 0)``.

    The table's slices for hulls ``ia[k]`` and ``ib[k]`` are passed to
    :func:`collision.manifold.collide_hull_hull_into` as they are, with the output rows to fill; a
    pair of two boxes (``boxes``, the table's ``box_f``, ``box_i`` rows) goes to
    :func:`collision.box_box.collide_box_box_into` instead (the same result).
    With ``cache_first``, a pair's cached feature is tested here first, on the table in place
    (:func:`collision.manifold.cached_sep`); a pair apart along it gets the outputs the kernels
    would give it (zero rows, kind "none", one test, the SAT depth of that feature) without a
    kernel call.
    The pairs are independent: they are cut into one run of consecutive pairs per thread (numba's
    ``prange`` over ``threads`` runs; a batch of fewer than 32 pairs per thread stays on one), each run with its own
    scratch (:func:`collision.manifold.hull_work`), so every row is the same however many threads
    there are.
    """
    k = ia.shape[0]
    # scratch for the largest hulls in the batch
    nv = nf = ne = 1
    for i in range(k):
        for h in (ia[i], ib[i]):
            nv = max(nv, starts[h + 1, 0] - starts[h, 0])
            nf = max(nf, starts[h + 1, 1] - starts[h, 1])
            ne = max(ne, starts[h + 1, 5] - starts[h, 5])
    runs = max(1, min(threads, k // 32))
    bad_row = np.full(runs, -1, np.int64)
    bad_st = np.zeros(runs, np.int64)
    for r in prange(runs):
        work = hull_work(nv, nf, ne)
        bwork = box_work()
        rot = np.empty((3, 3))
        # the hulls' slices of the table, cut again only when the hull changes from one pair to
        # the next (equal shapes share a hull: a pile of equal boxes cuts them once per run)
        i0 = r * k // runs
        a, b = ia[i0], ib[i0]
        sa, ea = starts[a], starts[a + 1]
        sb, eb = starts[b], starts[b + 1]
        va, na, da, fsa, fva = V[sa[0]:ea[0]], N[sa[1]:ea[1]], D[sa[2]:ea[2]], FS[sa[3]:ea[3]], FV[sa[4]:ea[4]]
        eva, efa, vfsa, vfa = EV[sa[5]:ea[5]], EF[sa[6]:ea[6]], VFS[sa[7]:ea[7]], VF[sa[8]:ea[8]]
        vb, nb, db, fsb, fvb = V[sb[0]:eb[0]], N[sb[1]:eb[1]], D[sb[2]:eb[2]], FS[sb[3]:eb[3]], FV[sb[4]:eb[4]]
        evb, efb, vfsb, vfb = EV[sb[5]:eb[5]], EF[sb[6]:eb[6]], VFS[sb[7]:eb[7]], VF[sb[8]:eb[8]]
        aca, aoa, gca, gsa = AC[sa[9]:ea[9]], AO[sa[10]:ea[10]], GC[sa[11]:ea[11]], GS[sa[12]:ea[12]]
        acb, aob, gcb, gsb = AC[sb[9]:eb[9]], AO[sb[10]:eb[10]], GC[sb[11]:eb[11]], GS[sb[12]:eb[12]]
        for i in range(i0, (r + 1) * k // runs):
            # The cached feature first, read in place from the table: most pairs of a settled
            # scene stay apart along it, and then the kernels would return after that one test.
            # Their outputs are written here without the kernel call (whose array arguments and
            # scratch numba counts references on, which costs more than the test); the same
            # values, as the kernels compute that separation with cached_sep too.
            done = False  # the cached feature tested here, not separating
            if (cache_first and caches[i, 0] != -1 and check_pose_kernel(poses_a[i]) == 0
                    and check_pose_kernel(poses_b[i]) == 0):
                ha, hb = ia[i], ib[i]
                tt = relative_pose(poses_a[i], poses_b[i], rot)
                tested, sep = cached_sep(
                    V, N, D, EV, EF,
                    starts[ha, 0], starts[ha + 1, 0] - starts[ha, 0], starts[ha, 1], starts[ha + 1, 1] - starts[ha, 1],
                    starts[ha, 5], starts[ha + 1, 5] - starts[ha, 5], V, N, D, EV, EF,
                    starts[hb, 0], starts[hb + 1, 0] - starts[hb, 0], starts[hb, 1], starts[hb + 1, 1] - starts[hb, 1],
                    starts[hb, 5], starts[hb + 1, 5] - starts[hb, 5],
                    rot, tt, caches[i, 0], caches[i, 1], caches[i, 2])
                if tested and sep > margins[i]:
                    _clear_row(i, normal, points_a, points_b, depths, ids)
                    count[i] = 0
                    kind[i] = _NONE
                    tests[i] = 1
                    sat_depth[i] = -sep
                    continue
                done = tested
            if boxes[ia[i]] and boxes[ib[i]]:
                st, kd, cnt, ts, sd = collide_box_box_into(
                    box_f[ia[i]], box_i[ia[i]], box_f[ib[i]], box_i[ib[i]], poses_a[i], poses_b[i], margins[i],
                    min(scale[ia[i]], scale[ib[i]]), caches[i], bwork,
                    normal[i], points_a[i], points_b[i], depths[i], ids[i], done)
            else:
                if ia[i] != a:
                    a = ia[i]
                    sa, ea = starts[a], starts[a + 1]
                    va, na, da, fsa, fva = V[sa[0]:ea[0]], N[sa[1]:ea[1]], D[sa[2]:ea[2]], FS[sa[3]:ea[3]], FV[sa[4]:ea[4]]
                    eva, efa, vfsa, vfa = EV[sa[5]:ea[5]], EF[sa[6]:ea[6]], VFS[sa[7]:ea[7]], VF[sa[8]:ea[8]]
                    aca, aoa, gca, gsa = AC[sa[9]:ea[9]], AO[sa[10]:ea[10]], GC[sa[11]:ea[11]], GS[sa[12]:ea[12]]
                if ib[i] != b:
                    b = ib[i]
                    sb, eb = starts[b], starts[b + 1]
                    vb, nb, db, fsb, fvb = V[sb[0]:eb[0]], N[sb[1]:eb[1]], D[sb[2]:eb[2]], FS[sb[3]:eb[3]], FV[sb[4]:eb[4]]
                    evb, efb, vfsb, vfb = EV[sb[5]:eb[5]], EF[sb[6]:eb[6]], VFS[sb[7]:eb[7]], VF[sb[8]:eb[8]]
                    acb, aob, gcb, gsb = AC[sb[9]:eb[9]], AO[sb[10]:eb[10]], GC[sb[11]:eb[11]], GS[sb[12]:eb[12]]
                st, kd, cnt, ts, sd = collide_hull_hull_into(
                    va, na, da, fsa, fva, eva, efa, vfsa, vfa, aca, aoa, gca, gsa,
                    vb, nb, db, fsb, fvb, evb, efb, vfsb, vfb, acb, aob, gcb, gsb,
                    poses_a[i], poses_b[i], margins[i], min(scale[a], scale[b]), caches[i],
                    work, normal[i], points_a[i], points_b[i], depths[i], ids[i], False, done)
            if st != 0:
                bad_row[r], bad_st[r] = i, st
                break
            count[i] = cnt
            kind[i] = kd
            tests[i] = ts
            sat_depth[i] = sd
    for r in range(runs):  # the first bad pose in pair order (runs are in order)
        if bad_row[r] >= 0:
            return bad_row[r], bad_st[r]
    return -1, 0


# The serial driver of the same kernel (no parallel region), and the choice between the two:
# threads only from MIN_HULL_PAIRS_PER_THREAD pairs per thread, and only while they win (see
# collision.threads). Measured on the two-core machine (load 4-5 from other jobs): a box-box pair
# of a falling pile costs ~4 us, a parallel region with passive workers 6-18 us (median, 90th
# percentile) but milliseconds now and then. The threshold, 512 pairs (~2 ms of work), keeps
# the region under 1% of a threaded call at the median and lets the timing of ThreadChoice
# catch a machine where it costs more.
MIN_HULL_PAIRS_PER_THREAD = 256
# Box pairs through collision.box_box (the same manifolds, fewer arrays passed per pair); False sends
# them through the general kernel (for tests and benchmarks that compare the two).
BOX_PAIRS = True
# Each pair's cached feature tested first in the batch loop, on the table's arrays in place
# (_collide_pairs_kernel); False leaves that test to the pair kernels (the same outputs; for tests
# and benchmarks that compare the two).
CACHE_FIRST = True
_collide_pairs_serial = serial_twin(_collide_pairs_kernel, "_collide_pairs_serial")
HULL_PAIRS_THREADS = ThreadChoice("hull pairs", MIN_HULL_PAIRS_PER_THREAD)


def batch_ids(value, name, size, what="shape"):
    """``value`` as a (k,) int64 array of ids in ``range(size)``; ValueError naming ``name`` (and the
    row) otherwise. Shared by the batched narrow-phase calls."""
    arr = as_indices(value, name)
    if arr.ndim != 1:
        raise ValueError(f"{name}: expected shape (k,), got {arr.shape}")
    bad = np.flatnonzero((arr < 0) | (arr >= size))
    if len(bad):
        raise ValueError(f"{name}[{bad[0]}]: {what} id {arr[bad[0]]} not in the table (size {size})")
    return arr


def batch_poses(value, name, k):
    """``value`` as a C-contiguous (k, 4, 4) array of rigid poses; ValueError naming ``name[row]``."""
    arr = as_array(value, name, (4, 4), finite=False)
    if arr.shape != (k, 4, 4):
        raise ValueError(f"{name}: expected shape ({k}, 4, 4), got {arr.shape}")
    arr = np.ascontiguousarray(arr)
    row, st = _first_bad_pose(arr)
    if st:
        raise ValueError(f"{name}[{row}]: {POSE_ERRORS[st]}")
    return arr


def batch_margins(value, name, k):
    """``value`` (a number or (k,)) as a (k,) float64 array of finite margins >= 0."""
    arr = as_array(value, name, ())
    if arr.ndim > 1 or (arr.ndim == 1 and len(arr) != k):
        raise ValueError(f"{name}: expected a number or shape ({k},), got shape {arr.shape}")
    arr = np.ascontiguousarray(np.broadcast_to(arr, (k,)), dtype=np.float64)
    if k and not np.all(arr >= 0.0):
        raise ValueError(f"{name}: expected a finite number >= 0, got {arr[~(arr >= 0.0)][0]}")
    return arr


def collide_hull_pairs(table: HullTable, hull_ids_a: ArrayLike, poses_a: ArrayLike, hull_ids_b: ArrayLike,
                       poses_b: ArrayLike, margin: ArrayLike = 0.0, caches: NDArray[np.int64] | None = None,
                       check: bool = True, out: ManifoldBatch | None = None) -> ManifoldBatch:
    """Contact manifolds of ``k`` posed hull pairs in one compiled call.

    Pair ``i`` gets exactly (bit for bit) what
    ``collide_hull_hull(table.hull(hull_ids_a[i]), poses_a[i],
    table.hull(hull_ids_b[i]), poses_b[i], margin, caches[i])`` gives: SAT
    over face and Gauss-map-pruned edge axes (Gregorius, GDC 2013), clipping
    (RTCD 8.3.4) or closest points of two edges (RTCD 5.1.9), reduction to
    four points.

    Parameters
    ----------
    table : HullTable
    hull_ids_a, hull_ids_b : (k,) int
        Ids in ``table`` of each pair's hulls.
    poses_a, poses_b : (k, 4, 4) float64
        Rigid model-to-world transforms, checked once for the whole batch.
    margin : float or (k,) float
        Speculative distance >= 0 (contacts down to depth ``-margin``), for
        all pairs or one per pair.
    caches : (k, 3) int64 array, optional
        One :class:`collision.manifold.SatCache` layout per pair (kind, index
        in A, index in B; ``-1`` for none), read and updated in place. Must
        be a C-contiguous int64 ndarray (so that the updates reach the caller).
    check : bool
        Validate the arguments (default). ``False`` is for a caller that built
        them itself (the world's contact manager, every step): ids in range,
        C-contiguous arrays of the dtypes and shapes above; only the poses are
        still checked, inside the kernel.
    out : ManifoldBatch, optional
        Where to write the manifolds: its rows ``[0, k)`` are all overwritten, the rows after them
        are left as they are (a caller that calls every step keeps one batch and grows it; making
        one costs about as much as colliding a few box pairs). Default: a new batch of ``k`` rows.

    Returns
    -------
    ManifoldBatch
        ``out`` when given (pair ``i`` in row ``i``), else a new batch.

    Raises
    ------
    ValueError
        For ids outside the table, lengths that disagree, a non-finite or
        non-rigid pose (naming the argument and the row), a negative or
        non-finite margin, or a cache array of the wrong type or shape.
    """
    if not check:
        ia, ib, pa, pb, k = hull_ids_a, hull_ids_b, poses_a, poses_b, len(hull_ids_a)
        margins = np.full(k, float(margin)) if np.ndim(margin) == 0 else margin
        if caches is None:
            caches = np.full((k, 3), -1, dtype=np.int64)
        return _hull_pairs(table, ia, pa, ib, pb, margins, caches, out)
    if not isinstance(table, HullTable):
        raise ValueError(f"table: expected a HullTable, got {type(table).__name__}")
    ia = batch_ids(hull_ids_a, "hull_ids_a", len(table), "hull")
    ib = batch_ids(hull_ids_b, "hull_ids_b", len(table), "hull")
    k = len(ia)
    if len(ib) != k:
        raise ValueError(f"hull_ids_b: {len(ib)} ids for {k} in hull_ids_a")
    pa = batch_poses(poses_a, "poses_a", k)
    pb = batch_poses(poses_b, "poses_b", k)
    margins = batch_margins(margin, "margin", k)
    if caches is None:
        caches = np.full((k, 3), -1, dtype=np.int64)
    elif not (isinstance(caches, np.ndarray) and caches.dtype == np.int64 and caches.shape == (k, 3)
              and caches.flags.c_contiguous and caches.flags.writeable):
        got = f"{caches.dtype} {caches.shape}" if isinstance(caches, np.ndarray) else type(caches).__name__
        raise ValueError(f"caches: expected a writeable C-contiguous int64 array of shape ({k}, 3), got {got}")
    if out is not None:
        check_out_batch(out, k)
    return _hull_pairs(table, ia, pa, ib, pb, margins, caches, out)


_OUT_FIELDS = {"count": ((), np.int64), "normal": ((3,), np.float64), "points_a": ((4, 3), np.float64),
               "points_b": ((4, 3), np.float64), "depths": ((4,), np.float64), "ids": ((4,), np.int64),
               "kind": ((), np.int64), "tests": ((), np.int64), "sat_depth": ((), np.float64)}


def check_out_batch(out, k):
    """Raise ``ValueError`` unless ``out`` is a :class:`ManifoldBatch` of at least ``k`` rows whose
    arrays have the dtypes and shapes :meth:`ManifoldBatch.empty` gives them, C-contiguous and
    writeable (a batch kernel writes its rows in place)."""
    if not isinstance(out, ManifoldBatch):
        raise ValueError(f"out: expected a ManifoldBatch, got {type(out).__name__}")
    m = len(out)
    if m < k:
        raise ValueError(f"out: {m} rows for {k} pairs")
    for name, (item, dtype) in _OUT_FIELDS.items():
        a = getattr(out, name)
        if not (isinstance(a, np.ndarray) and a.shape == (m,) + item and a.dtype == dtype and a.flags.c_contiguous
                and a.flags.writeable):
            got = f"{a.dtype} {a.shape}" if isinstance(a, np.ndarray) else type(a).__name__
            raise ValueError(f"out.{name}: expected a writeable C-contiguous {np.dtype(dtype).name} array of shape "
                             f"{(m,) + item}, got {got}")


def _hull_pairs(table, ia, pa, ib, pb, margins, caches, out=None):
    k = len(ia)
    if out is None:
        out = ManifoldBatch.empty(k)
    if k == 0:
        return out
    row, st = timed(
        HULL_PAIRS_THREADS, k, _collide_pairs_serial, _collide_pairs_kernel, *table._kernel_args(),
        ia, pa, ib, pb, margins, caches,
        out.count, out.normal, out.points_a, out.points_b, out.depths, out.ids, out.kind, out.tests,
        out.sat_depth, CACHE_FIRST)
    if st:  # (checked before the call, unless check=False)
        raise ValueError(f"{'poses_a' if st <= 2 else 'poses_b'}[{row}]: {POSE_ERRORS[(st - 1) % 2 + 1]}")
    return out
