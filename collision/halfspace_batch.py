"""Many half-space contacts in one compiled call.

A ground plane touches every body that rests on it: a thousand boxes on a
floor are a thousand half-space pairs per step. One pair is cheap geometry
(each core point's height above the plane, RTCD 5.2.2 with the plane as a
half-space), so calling :func:`collision.narrow_phase.collide_halfspace_hull`
once per pair spends almost all of its time in Python. Here the convex
shapes' cores live once in a :class:`CoreTable` (every core concatenated,
with per-shape start rows and radii) and :func:`collide_halfspace_pairs` runs
all pairs in one loop: the manifold of each pair is the one
``collide_halfspace_{sphere, capsule, hull}`` gives: the same points, ids
and order, equal to rounding (the world transform is summed in another
order). When more than four points are in range and the reduction to four
meets an exact tie (a box has several equally large quads), the two may keep
different, equally valid points.

Frame and signs are those of :mod:`collision.manifold`, with the half-space
as shape A: the normal is the plane's outward normal (from A towards B),
``depths > 0`` is penetration, ``points_a - points_b == depths[:, None] *
normal``; ``points_b`` are the deepest points of the convex shape, and
``points_a`` their projections on the plane.
"""

import math

import numpy as np

from ._jit import njit
from ._validate import as_array
from .hull_batch import ManifoldBatch, batch_ids, batch_margins, batch_poses
from .contact_reduce import _reduce
from .transform import POSE_ERRORS, check_pose_kernel

__all__ = ["CoreTable", "collide_halfspace_pairs"]

_FACE_A, _NONE = 0, 3  # indices of "face_a" and "none" in collision.manifold.KIND_NAMES


class CoreTable:
    """The core points and radii of convex shapes (spheres, capsules, hulls), packed.

    Shape ``s`` owns the rows ``starts[s]:starts[s + 1]`` of :attr:`points`.
    Adding a shape already in the table returns the id it has.

    Attributes
    ----------
    points : (p, 3) float64
    starts : (s + 1,) int64
    radius : (s,) float64
    """

    def __init__(self, shapes=()):
        self._ids = {}
        self._shapes = []
        self._points = np.empty((64, 3))
        self._starts = np.zeros(9, np.int64)
        self._radius = np.empty(8)
        self._arrays = None  # (points, starts, radius), cut once per add (kernel_arrays)
        for s in shapes:
            self.add(s)

    def __len__(self):
        return len(self._shapes)

    @property
    def points(self):
        return self._points[:self._starts[len(self)]]

    @property
    def starts(self):
        return self._starts[:len(self) + 1]

    @property
    def radius(self):
        return self._radius[:len(self)]

    def kernel_arrays(self):
        """``(points, starts, radius)`` as the kernels take them, kept until the next :meth:`add`
        (a world passes them every step)."""
        if self._arrays is None:
            self._arrays = (self.points, self.starts, self.radius)
        return self._arrays

    def add(self, shape):
        """The id of ``shape`` (anything with ``core`` (m, 3) and ``radius``), adding it if new."""
        key = id(shape)
        got = self._ids.get(key)
        if got is not None and self._shapes[got] is shape:
            return got
        core = as_array(shape.core, "shape.core", (3,))
        if core.ndim != 2 or not len(core):
            raise ValueError(f"shape.core: expected shape (m, 3) with m >= 1, got {core.shape}")
        radius = float(shape.radius)
        if not (radius >= 0.0 and math.isfinite(radius)):
            raise ValueError(f"shape.radius: expected a finite number >= 0, got {radius}")
        s = len(self._shapes)
        lo = int(self._starts[s])
        hi = lo + len(core)
        if hi > len(self._points):
            self._points = np.concatenate([self._points, np.empty((max(hi, 2 * len(self._points)), 3))])
        if s + 2 > len(self._starts):
            self._starts = np.concatenate([self._starts, np.zeros(len(self._starts), np.int64)])
        if s + 1 > len(self._radius):
            self._radius = np.concatenate([self._radius, np.empty(len(self._radius))])
        self._points[lo:hi] = core
        self._starts[s + 1] = hi
        self._radius[s] = radius
        self._shapes.append(shape)
        self._ids[key] = s
        self._arrays = None
        return s


@njit
def _halfspace_kernel(points, starts, radius, ids, poses, normals, offsets, margins,
                      count, normal, points_a, points_b, depths, fids, kind, sat_depth):
    """Fill the output rows of every pair; returns the row of a rejected pose, else -1."""
    cap = 0
    for k in range(ids.shape[0]):
        s = ids[k]
        cap = max(cap, starts[s + 1] - starts[s])
    d = np.empty(cap)
    order = np.empty(cap, np.int64)
    pb = np.empty((cap, 3))
    keep = np.empty(cap, np.int64)
    for k in range(ids.shape[0]):
        if check_pose_kernel(poses[k]) != 0:
            return k
        s = ids[k]
        lo, m = starts[s], starts[s + 1] - starts[s]
        r = radius[s]
        n0, n1, n2 = normals[k, 0], normals[k, 1], normals[k, 2]
        p = poses[k]
        best = -np.inf
        for i in range(m):
            c = points[lo + i]
            w0 = p[0, 0] * c[0] + p[0, 1] * c[1] + p[0, 2] * c[2] + p[0, 3]
            w1 = p[1, 0] * c[0] + p[1, 1] * c[1] + p[1, 2] * c[2] + p[1, 3]
            w2 = p[2, 0] * c[0] + p[2, 1] * c[1] + p[2, 2] * c[2] + p[2, 3]
            d[i] = offsets[k] - (w0 * n0 + w1 * n1 + w2 * n2) + r
            pb[i, 0], pb[i, 1], pb[i, 2] = w0 - r * n0, w1 - r * n1, w2 - r * n2
            best = max(best, d[i])
        # the points within the margin, deepest first (stable: equal depths keep vertex order)
        c = 0
        for i in range(m):
            if d[i] >= -margins[k]:
                j = c
                while j > 0 and d[order[j - 1]] < d[i]:
                    order[j] = order[j - 1]
                    j -= 1
                order[j] = i
                c += 1
        sat_depth[k] = d[order[0]] if c else best
        if c > 4:  # the patch reduced to four points, as reduce_contacts does
            sel = np.empty((c, 3))
            dep = np.empty(c)
            for i in range(c):
                sel[i] = pb[order[i]]
                dep[i] = d[order[i]]
            nk = _reduce(normals[k], sel, dep, c, 1e-18, keep)
            for i in range(nk):
                keep[i] = order[keep[i]]
            c = nk
        else:
            for i in range(c):
                keep[i] = order[i]
        count[k] = c
        if c == 0:
            kind[k] = _NONE  # an empty row: zero normal, kind "none" (as an empty Manifold)
            continue
        for j in range(3):
            normal[k, j] = normals[k, j]
        for i in range(c):
            q = keep[i]
            depths[k, i] = d[q]
            fids[k, i] = q
            for j in range(3):
                points_b[k, i, j] = pb[q, j]
                points_a[k, i, j] = pb[q, j] + d[q] * normals[k, j]
    return -1


def collide_halfspace_pairs(table, shape_ids, poses, normals, offsets, margins, check=True):
    """Manifolds of ``k`` half-spaces (shape A) against posed convex shapes (B) in one call.

    Pair ``i`` gets what ``collide_halfspace_*`` (:mod:`collision.narrow_phase`)
    gives the half-space ``normals[i] . x <= offsets[i]`` (world) and shape
    ``table`` id ``shape_ids[i]`` at ``poses[i]``: each core point's depth
    ``offset - n . c + radius``, the points within ``margins[i]`` deepest
    first, ids the core point indices, reduced to four when more
    (:func:`collision.contact_reduce.reduce_contacts`), kind ``"face_a"``.

    Parameters
    ----------
    table : CoreTable
    shape_ids : (k,) int
    poses : (k, 4, 4) float64
        Rigid model-to-world transforms of the convex shapes.
    normals : (k, 3) float64
        Unit outward normals of the planes, world.
    offsets : (k,) float64
        Plane offsets, world (``normal . x == offset`` on the plane).
    margins : (k,) float64
        Speculative distances >= 0.
    check : bool
        As in :func:`collision.hull_batch.collide_hull_pairs` (``False``: no
        argument checks, the poses still checked in the kernel).

    Returns
    -------
    collision.hull_batch.ManifoldBatch
        ``tests`` is 0 and ``sat_depth`` the largest depth of each pair; a pair
        without points has a zero normal and kind ``"none"``.

    Raises
    ------
    ValueError
        For ids outside the table, lengths that disagree, a non-finite or
        non-rigid pose (naming the row), a normal that is not unit length,
        a non-finite offset, or a negative or non-finite margin.
    """
    if not check:
        ids, k = shape_ids, len(shape_ids)
    else:
        ids, k, poses, normals, offsets, margins = _checked(table, shape_ids, poses, normals, offsets, margins)
    out = ManifoldBatch.empty(k, _FACE_A)
    if k == 0:
        return out
    bad = _halfspace_kernel(table._points, table._starts, table._radius, ids, poses, normals, offsets, margins,
                            out.count, out.normal, out.points_a, out.points_b, out.depths, out.ids, out.kind,
                            out.sat_depth)
    if bad >= 0:
        raise ValueError(f"poses[{bad}]: {POSE_ERRORS[check_pose_kernel(poses[bad])]}")
    return out


def _checked(table, shape_ids, poses, normals, offsets, margins):
    """The arguments of :func:`collide_halfspace_pairs`, validated and made contiguous."""
    if not isinstance(table, CoreTable):
        raise ValueError(f"table: expected a CoreTable, got {type(table).__name__}")
    ids = batch_ids(shape_ids, "shape_ids", len(table))
    k = len(ids)
    poses = batch_poses(poses, "poses", k)
    normals = np.ascontiguousarray(as_array(normals, "normals", (3,)).reshape(-1, 3))
    offsets = np.ascontiguousarray(as_array(offsets, "offsets", ()).reshape(-1))
    margins = batch_margins(margins, "margins", k)
    for name, arr in (("normals", normals), ("offsets", offsets)):
        if len(arr) != k:
            raise ValueError(f"{name}: {len(arr)} rows for {k} shape ids")
    if k and np.abs(np.einsum("ij,ij->i", normals, normals) - 1.0).max() > 1e-9:
        raise ValueError("normals: expected unit vectors")
    return ids, k, poses, normals, offsets, margins
