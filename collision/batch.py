"""Many pose pairs in one call: batched ``collide``, ``distance`` and ``within``.

Motion planning, grasp sampling and data generation ask the same question of
one pair of meshes at thousands of poses. A Python loop over
:func:`obbcollide.collide` pays the argument checks and the result object at
every call, on one core. Here the poses come as arrays, ``(4, 4)`` or
``(n, 4, 4)`` or any leading shape, broadcast against each other like numpy
(``(4, 4)`` with ``(n, 4, 4)``, ``(n, 4, 4)`` with ``(n, 4, 4)``,
``(n, 1, 4, 4)`` with ``(m, 4, 4)`` gives an ``(n, m)`` grid); they are
checked once, in bulk, and one compiled loop runs the same traversals as the
single queries (the yes / no walk
:func:`obbcollide.mesh_collide.first_contact_walk`,
:func:`obbcollide.mesh_query.distance_kernel`), so every entry equals the
single call's answer. The numba threads claim chunks of consecutive pairs in
turn (:data:`CHUNKS_PER_THREAD`, :mod:`obbcollide._claim`), so that a thread
slowed by costlier pairs or by another process takes fewer; a batch too small
to pay for the threads' start (:data:`MIN_PAIRS_PER_THREAD` pairs per thread)
stays on one.

The pair kernels here (one pair of posed trees: :func:`collide_pair_trees`,
:func:`contained_pair_trees`) are also what :class:`obbcollide.CollisionManager`
runs over its broad phase's candidate pairs.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

from numba import get_num_threads, prange

from ._jit import njit
from ._validate import as_array
from ._claim import claim, new_counter
from .mesh_collide import first_contact_walk
from .mesh_distance import within_bound2
from .mesh_query import _PARITY_DIRS, _relative_t, collide_kernel, distance_kernel, parity_kernel
from .obb_tree import OBBTree
from .transform import check_pose_kernel

__all__ = ["collide", "distance", "within", "DistanceBatch", "MIN_PAIRS_PER_THREAD", "CHUNKS_PER_THREAD",
           "check_poses", "collide_pair_trees", "contained_pair_trees", "runs_for", "chunks_for"]

# Fewer pairs than this per thread and the batch runs on fewer threads (on one,
# without a parallel region, below twice this); see :func:`runs_for`.
MIN_PAIRS_PER_THREAD = 256

# Chunks of consecutive pairs per thread of a parallel batch: the threads claim
# them in turn (:mod:`obbcollide._claim`), so a thread slowed by costlier pairs
# or by another process on its core takes fewer; each claim costs one atomic
# increment, next to microseconds to milliseconds of work per pair.
CHUNKS_PER_THREAD = 64


# ---------------------------------------------------------------------------
# One pair of posed trees
# ---------------------------------------------------------------------------


@njit
def _any_inside(nodes, links, tris, pts, r, t):
    """Does any point of ``pts`` (k, 3), placed by ``r, t`` into the closed mesh's
    model frame, lie inside it? Ray parity as :func:`obbcollide.mesh_query._inside`:
    the first direction whose count is not ambiguous decides (the last one if all are)."""
    for k in range(pts.shape[0]):
        p = (pts[k, 0], pts[k, 1], pts[k, 2])
        o = (r[0][0] * p[0] + r[0][1] * p[1] + r[0][2] * p[2] + t[0],
             r[1][0] * p[0] + r[1][1] * p[1] + r[1][2] * p[2] + t[1],
             r[2][0] * p[0] + r[2][1] * p[1] + r[2][2] * p[2] + t[2])
        count = 0
        for di in range(_PARITY_DIRS.shape[0]):
            d = (_PARITY_DIRS[di, 0], _PARITY_DIRS[di, 1], _PARITY_DIRS[di, 2])
            count, ambiguous = parity_kernel(nodes, links, tris, o, d)
            if not ambiguous:
                break
        if count % 2 == 1:
            return True
    return False


@njit
def contained_pair_trees(na, la, ta, ca, pta, nb, lb, tb, cb, ptb, pa, pb):
    """1 when B lies inside closed A, 2 when A lies inside closed B, 0 otherwise
    (for surfaces known not to meet; the order of :func:`obbcollide.mesh_query._containment`).

    ``ca``, ``cb``: the meshes are closed; ``pta``, ``ptb`` (k, 3): one model-frame
    vertex of each connected component (:attr:`OBBTree.component_vertices`).
    """
    if ca:
        r, t = _relative_t(pa, pb)  # B's model frame in A's
        if _any_inside(na, la, ta, ptb, r, t):
            return 1
    if cb:
        r, t = _relative_t(pb, pa)
        if _any_inside(nb, lb, tb, pta, r, t):
            return 2
    return 0


@njit
def collide_pair_trees(na, la, ta, ia, ca, pta, nb, lb, tb, ib, cb, ptb, pa, pb, containment, pairs_buf, segs_buf):
    """Yes / no of :func:`obbcollide.collide` (``first_contact=True``) on two posed trees'
    arrays: a triangle pair meets, or (``containment``) a closed mesh holds the other.

    Poses are trusted (checked by the caller). ``pairs_buf`` (>= 1, 2) and
    ``segs_buf`` (>= 1, 2, 3) are scratch.
    """
    status, n, _, _, roots = collide_kernel(na, la, ta, ia, nb, lb, tb, ib, pa, pb, True, False, pairs_buf, segs_buf)
    if n > 0:
        return True
    if not containment or not roots or not (ca or cb):
        return False
    return contained_pair_trees(na, la, ta, ca, pta, nb, lb, tb, cb, ptb, pa, pb) != 0


# ---------------------------------------------------------------------------
# Kernels over pose pairs
# ---------------------------------------------------------------------------


# Each kernel is a run over consecutive pairs ``i0:i1``, called once by its
# serial driver or once per thread by its ``prange`` driver. A small batch must
# not go through the parallel driver at all: on a busy machine a thread of
# numba's OpenMP region waits for a core before the region can end
# (measured on two busy cores: an empty region took 13 ms against 0.4 us for
# the same loop on one thread), so :func:`runs_for` picks the serial driver
# below ``2 * MIN_PAIRS_PER_THREAD`` pairs, where a batch of mesh pairs takes
# about that long (``benchmarks/bench_batch.py --small``).


def runs_for(k, threads):
    """How many runs (threads) a batch of ``k`` pairs gets: 1 means the serial driver."""
    return max(1, min(threads, k // MIN_PAIRS_PER_THREAD))


def chunks_for(k, runs):
    """How many chunks the threads of a parallel batch of ``k`` pairs claim in turn:
    ``CHUNKS_PER_THREAD`` per thread (fewer when the pairs are fewer)."""
    return max(1, min(k, runs * CHUNKS_PER_THREAD))


@njit
def _collide_run(na, la, ta, ca, pta, nb, lb, tb, cb, ptb, pa, pb, containment, i0, i1, out, stack):
    for i in range(i0, i1):
        r, t = _relative_t(pa[i], pb[i])
        hit, _, _, roots, _, _ = first_contact_walk(na, la, ta, nb, lb, tb, r, t, stack)
        if not hit and containment and (ca or cb) and roots:
            hit = contained_pair_trees(na, la, ta, ca, pta, nb, lb, tb, cb, ptb, pa[i], pb[i]) != 0
        out[i] = hit


@njit
def _collide_serial(na, la, ta, ca, pta, nb, lb, tb, cb, ptb, pa, pb, containment, out):
    _collide_run(na, la, ta, ca, pta, nb, lb, tb, cb, ptb, pa, pb, containment, 0, pa.shape[0], out,
                 np.empty((64, 2), np.int64))


@njit(parallel=True)
def _collide_parallel(na, la, ta, ca, pta, nb, lb, tb, cb, ptb, pa, pb, containment, runs, chunks, counter, out):
    k = pa.shape[0]
    for _ in prange(runs):  # each thread claims chunks until none is left
        stack = np.empty((64, 2), np.int64)
        while True:
            c = claim(counter)
            if c >= chunks:
                break
            _collide_run(na, la, ta, ca, pta, nb, lb, tb, cb, ptb, pa, pb, containment,
                         c * k // chunks, (c + 1) * k // chunks, out, stack)


@njit
def _distance_run(na, la, ta, ia, ca, pta, xa, ra, nb, lb, tb, ib, cb, ptb, xb, rb, pa, pb, stop_below, near2,
                  containment, i0, i1, dist, points, tri_a, tri_b, near):
    """Distances; for ``within`` (``containment``), ``near``: closer than ``stop_below`` (in
    squares), touching, or one closed mesh inside the other (as :func:`obbcollide.within`).
    ``near2`` is the search's bound (:func:`obbcollide.mesh_distance.within_bound2`)."""
    for i in range(i0, i1):
        _, d2, bi, bj, _, _ = distance_kernel(na, la, ta, nb, lb, tb, pa[i], pb[i], stop_below, points[i], near2,
                                              xa, ra, xb, rb)
        dist[i] = np.sqrt(d2)
        tri_a[i] = ia[bi]
        tri_b[i] = ib[bj]
        hit = d2 < stop_below * stop_below or d2 == 0.0
        if containment and not hit and (ca or cb):
            hit = contained_pair_trees(na, la, ta, ca, pta, nb, lb, tb, cb, ptb, pa[i], pb[i]) != 0
        near[i] = hit


@njit
def _distance_serial(na, la, ta, ia, ca, pta, xa, ra, nb, lb, tb, ib, cb, ptb, xb, rb, pa, pb, stop_below, near2,
                     containment, dist, points, tri_a, tri_b, near):
    _distance_run(na, la, ta, ia, ca, pta, xa, ra, nb, lb, tb, ib, cb, ptb, xb, rb, pa, pb, stop_below, near2,
                  containment, 0, pa.shape[0], dist, points, tri_a, tri_b, near)


@njit(parallel=True)
def _distance_parallel(na, la, ta, ia, ca, pta, xa, ra, nb, lb, tb, ib, cb, ptb, xb, rb, pa, pb, stop_below, near2,
                       containment, runs, chunks, counter, dist, points, tri_a, tri_b, near):
    k = pa.shape[0]
    for _ in prange(runs):  # each thread claims chunks until none is left
        while True:
            c = claim(counter)
            if c >= chunks:
                break
            _distance_run(na, la, ta, ia, ca, pta, xa, ra, nb, lb, tb, ib, cb, ptb, xb, rb, pa, pb, stop_below, near2,
                          containment, c * k // chunks, (c + 1) * k // chunks, dist, points, tri_a, tri_b, near)


# ---------------------------------------------------------------------------
# Checks and broadcasting
# ---------------------------------------------------------------------------


def check_poses(value, name):
    """``value`` as a float64 array of rigid 4x4 poses, shape ``(..., 4, 4)``.

    Raises
    ------
    ValueError
        Naming ``name`` (and the first bad pose's index): not numbers, a
        shape that does not end in ``(4, 4)``, NaN or infinity, not a rigid
        transform (rotation columns orthonormal within 1e-6, determinant
        positive, last row ``0 0 0 1``: the test of
        :func:`obbcollide.transform.check_pose_kernel`).
    """
    arr = as_array(value, name, (4, 4), finite=False)
    if arr.size == 0:
        return arr
    codes = np.empty(arr.size // 16, dtype=np.int8)
    _pose_codes(arr.reshape(-1, 4, 4), codes)
    if codes.any():
        bad = np.flatnonzero(codes == 1)
        if bad.size:
            raise ValueError(f"{name}{_where(arr, bad[0])}: contains NaN or infinity")
        raise ValueError(f"{name}{_where(arr, np.flatnonzero(codes)[0])}: is not a rigid transform "
                         "(orthonormal rotation, det +1, last row 0 0 0 1)")
    return arr


@njit
def _pose_codes(flat, codes):
    """:func:`obbcollide.transform.check_pose_kernel` of each pose of ``flat`` (n, 4, 4) into
    ``codes`` (n,) int8: in one compiled loop, about a hundred times faster than the
    same test in numpy calls (which cost about 1 us per pose, a tenth of a pose pair's walk)."""
    for k in range(flat.shape[0]):
        codes[k] = check_pose_kernel(flat[k])


def _where(arr, flat_index):
    lead = arr.shape[:-2]
    if not lead:
        return ""
    return "[" + ",".join(str(int(i)) for i in np.unravel_index(flat_index, lead)) + "]"


def _tree(t, name):
    if not isinstance(t, OBBTree):
        raise ValueError(f"{name}: expected an OBBTree, got {type(t).__name__}")
    return t


def _pose_pairs(pose_a, pose_b):
    """Checked, broadcast poses: two C-contiguous (n, 4, 4) arrays and the leading shape."""
    pa = check_poses(pose_a, "pose_a")
    pb = check_poses(pose_b, "pose_b")
    try:
        lead = np.broadcast_shapes(pa.shape[:-2], pb.shape[:-2])
    except ValueError:
        raise ValueError(f"pose_b: shape {pb.shape} does not broadcast with pose_a's {pa.shape} "
                         "(leading axes as in numpy)") from None
    n = int(np.prod(lead)) if lead else 1
    pa = np.ascontiguousarray(np.broadcast_to(pa, lead + (4, 4)).reshape(n, 4, 4))
    pb = np.ascontiguousarray(np.broadcast_to(pb, lead + (4, 4)).reshape(n, 4, 4))
    return pa, pb, lead


def _tree_args(tree, with_index=True):
    pts = np.ascontiguousarray(tree.vertices[tree.component_vertices])
    if not with_index:
        return tree.nodes, tree.links, tree.triangles, tree.closed, pts
    return tree.nodes, tree.links, tree.triangles, tree.tri_index, tree.closed, pts


def _distance_tree_args(tree):
    """:func:`_tree_args` and the nodes' support points (:attr:`OBBTree.support_points`), the distance runs' arrays."""
    return _tree_args(tree) + tree.support_points


def _threads(threads):
    if threads is None:
        return get_num_threads()
    t = int(threads)
    if t < 1:
        raise ValueError(f"threads: must be >= 1, got {threads!r}")
    return min(t, get_num_threads())


def _shaped(out, lead):
    if lead == ():
        return out[0]
    return out.reshape(lead + out.shape[1:])


# ---------------------------------------------------------------------------
# Public API
# ---------------------------------------------------------------------------


def collide(tree_a: OBBTree, pose_a: ArrayLike, tree_b: OBBTree, pose_b: ArrayLike, containment: bool = True,
            threads: int | None = None) -> NDArray[np.bool_] | np.bool_:
    """Do two meshes intersect at each of many pose pairs?

    Entry ``i`` equals ``bool(obbcollide.collide(tree_a, pose_a[i], tree_b,
    pose_b[i], first_contact=True, containment=containment))``.

    Parameters
    ----------
    tree_a, tree_b : OBBTree
    pose_a, pose_b : (..., 4, 4) float64
        Rigid model-to-world poses; the leading shapes broadcast like numpy
        (``(4, 4)`` with ``(n, 4, 4)``; ``(n, 1, 4, 4)`` with ``(m, 4, 4)``
        gives ``(n, m)``). Empty batches give empty results.
    containment : bool
        A closed mesh lying entirely inside the other counts as a collision
        (as :func:`obbcollide.collide`).
    threads : int, optional
        At most this many numba threads (default: all). A batch of fewer
        than :data:`MIN_PAIRS_PER_THREAD` pairs per thread uses fewer.

    Returns
    -------
    hit : bool ndarray of the broadcast leading shape (a numpy bool for two single poses)

    Raises
    ------
    ValueError
        Naming ``tree_a`` / ``tree_b`` (not an OBBTree) or ``pose_a`` /
        ``pose_b`` with the index of the first bad pose (shape, NaN, not rigid,
        shapes that do not broadcast).
    """
    ta = _tree(tree_a, "tree_a")
    tb = _tree(tree_b, "tree_b")
    pa, pb, lead = _pose_pairs(pose_a, pose_b)
    out = np.zeros(len(pa), dtype=np.bool_)
    runs = runs_for(len(pa), _threads(threads))
    args = _tree_args(ta, False) + _tree_args(tb, False) + (pa, pb, bool(containment))
    if runs > 1:
        _collide_parallel(*args, runs, chunks_for(len(pa), runs), new_counter(), out)
    elif len(pa):
        _collide_serial(*args, out)
    return _shaped(out, lead)


@dataclass(eq=False, slots=True)
class DistanceBatch:
    """Outcome of :func:`distance`: :class:`obbcollide.DistanceResult`'s fields as arrays.

    Attributes
    ----------
    distance : (...) float64
        Minimum distance between the two surfaces at each pose pair (0 where they meet).
    point_a, point_b : (..., 3) float64
        World-frame closest points on A and on B.
    triangle_a, triangle_b : (...) int64
        Face indices holding them.
    """

    distance: np.ndarray
    point_a: np.ndarray
    point_b: np.ndarray
    triangle_a: np.ndarray
    triangle_b: np.ndarray


def _distances(tree_a, pose_a, tree_b, pose_b, stop_below, near2, containment, threads):
    ta = _tree(tree_a, "tree_a")
    tb = _tree(tree_b, "tree_b")
    pa, pb, lead = _pose_pairs(pose_a, pose_b)
    n = len(pa)
    dist = np.zeros(n)
    points = np.zeros((n, 2, 3))
    tri_a = np.zeros(n, dtype=np.int64)
    tri_b = np.zeros(n, dtype=np.int64)
    near = np.zeros(n, dtype=np.bool_)
    runs = runs_for(n, _threads(threads))
    args = _distance_tree_args(ta) + _distance_tree_args(tb) + (pa, pb, stop_below, near2, containment)
    if runs > 1:
        _distance_parallel(*args, runs, chunks_for(n, runs), new_counter(), dist, points, tri_a, tri_b, near)
    elif n:
        _distance_serial(*args, dist, points, tri_a, tri_b, near)
    return dist, points, tri_a, tri_b, near, lead


def distance(tree_a: OBBTree, pose_a: ArrayLike, tree_b: OBBTree, pose_b: ArrayLike,
             threads: int | None = None) -> NDArray[np.float64] | np.float64:
    """Minimum distance between two meshes' surfaces at each of many pose pairs.

    Entry ``i`` equals :func:`obbcollide.distance` ``(tree_a, pose_a[i], tree_b,
    pose_b[i])``: the same traversal, so the same distance, points and
    triangles.

    Parameters
    ----------
    tree_a, tree_b : OBBTree
    pose_a, pose_b : (..., 4, 4) float64
        Broadcast as in :func:`collide`.
    threads : int, optional

    Returns
    -------
    DistanceBatch
        Arrays of the broadcast leading shape (scalars and ``(3,)`` points for two single poses).
    """
    dist, points, tri_a, tri_b, _, lead = _distances(tree_a, pose_a, tree_b, pose_b, 0.0, np.inf, False, threads)
    return DistanceBatch(_shaped(dist, lead), _shaped(points[:, 0], lead), _shaped(points[:, 1], lead),
                         _shaped(tri_a, lead), _shaped(tri_b, lead))


def within(tree_a: OBBTree, pose_a: ArrayLike, tree_b: OBBTree, pose_b: ArrayLike, tolerance: float,
           threads: int | None = None) -> NDArray[np.bool_] | np.bool_:
    """Do two meshes come closer than ``tolerance`` (or overlap) at each of many pose pairs?

    Entry ``i`` equals :func:`obbcollide.within` ``(tree_a, pose_a[i], tree_b,
    pose_b[i], tolerance)``: closer than ``tolerance``, touching, or a closed
    mesh holding the other.

    Parameters
    ----------
    tree_a, tree_b : OBBTree
    pose_a, pose_b : (..., 4, 4) float64
        Broadcast as in :func:`collide`.
    tolerance : float
        >= 0, finite.
    threads : int, optional

    Returns
    -------
    near : bool ndarray of the broadcast leading shape
    """
    try:
        tol = float(tolerance)
    except (TypeError, ValueError):
        raise ValueError(f"tolerance: expected a number, got {tolerance!r}") from None
    if not np.isfinite(tol) or tol < 0.0:
        raise ValueError("tolerance: must be a finite number >= 0")
    _, _, _, _, near, lead = _distances(tree_a, pose_a, tree_b, pose_b, tol, within_bound2(tol), True, threads)
    return _shaped(near, lead)
