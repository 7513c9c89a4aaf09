"""Many sphere pairs in one compiled call: a sphere against a sphere, a capsule or a hull.

A pile of balls has hundreds of sphere pairs per step. Their geometry is one
closest-point query each (a ball touches anything in one point), so calling
:func:`collision.narrow_phase.collide_shapes` per pair spends nearly all its
time in Python. Here the shapes' cores live in a
:class:`collision.halfspace_batch.CoreTable` and :func:`collide_sphere_pairs`
runs every pair in one loop:

- sphere-sphere: the centres' distance against the radii (RTCD 4.3.1), the
  normal along the centres (+y for concentric spheres, as
  :func:`collision.narrow_phase.collide_sphere_sphere`);
- sphere against a capsule or a hull: GJK between the centre and the other
  core, EPA when the centre is inside the hull
  (:func:`collision.epa.convex_penetration`'s kernel, RTCD 9.5).

The manifold of each pair is what ``collide_shapes`` gives the pair (one
point, id 0, kind ``"face_a"`` against a sphere or a capsule and ``"face_b"``
against a hull), to GJK's tolerance. Frame and signs are those of
:mod:`collision.manifold`, with the sphere as shape A: normal from A towards
B, ``depths > 0`` penetration, ``points_a - points_b == depths * normal``.
"""

import math

import numpy as np

from ._jit import njit
from .epa import EPA_MAX_ITERATIONS, _penetration_query
from .gjk import GJK_MAX_ITERATIONS
from .halfspace_batch import CoreTable
from .hull_batch import ManifoldBatch, batch_ids, batch_margins, batch_poses
from .transform import POSE_ERRORS, check_pose_kernel

__all__ = ["collide_sphere_pairs"]

_FACE_A, _FACE_B, _NONE = 0, 1, 3  # indices in collision.manifold.KIND_NAMES


@njit
def _sphere_kernel(points, starts, radius, ia, poses_a, ib, poses_b, hull_b, margins,
                   count, normal, points_a, points_b, depths, kind, sat_depth):
    """Fill the output rows; returns ``(row, status)`` of a rejected pose, else ``(-1, 0)``."""
    empty = np.empty((0, 2), np.int32)
    for k in range(ia.shape[0]):
        st = check_pose_kernel(poses_a[k])
        if st != 0:
            return k, st
        st = check_pose_kernel(poses_b[k])
        if st != 0:
            return k, st + 2
        a, b = ia[k], ib[k]
        ra, rb = radius[a], radius[b]
        core_b = points[starts[b]:starts[b + 1]]
        c = points[starts[a]]
        pa, pb = poses_a[k], poses_b[k]
        if core_b.shape[0] == 1:  # two spheres: the centres
            ca = np.empty(3)
            cb = np.empty(3)
            for i in range(3):
                ca[i] = pa[i, 0] * c[0] + pa[i, 1] * c[1] + pa[i, 2] * c[2] + pa[i, 3]
                q = core_b[0]
                cb[i] = pb[i, 0] * q[0] + pb[i, 1] * q[1] + pb[i, 2] * q[2] + pb[i, 3]
            d0, d1, d2 = cb[0] - ca[0], cb[1] - ca[1], cb[2] - ca[2]
            dist = math.sqrt(d0 * d0 + d1 * d1 + d2 * d2)
            if dist > 1e-300:
                n0, n1, n2 = d0 / dist, d1 / dist, d2 / dist
            else:
                n0, n1, n2, dist = 0.0, 1.0, 0.0, 0.0
            depth = ra + rb - dist
            nrm = (n0, n1, n2)
            for i in range(3):
                points_a[k, 0, i] = ca[i] + ra * nrm[i]
                points_b[k, 0, i] = cb[i] - rb * nrm[i]
                normal[k, i] = nrm[i]
        else:
            depth, n, pts, _, _ = _penetration_query(points[starts[a]:starts[a] + 1], pa, core_b, pb, ra, rb,
                                                     empty, GJK_MAX_ITERATIONS, EPA_MAX_ITERATIONS)
            for i in range(3):
                points_a[k, 0, i] = pts[0, i]
                points_b[k, 0, i] = pts[1, i]
                normal[k, i] = n[i]
        sat_depth[k] = depth
        depths[k, 0] = depth
        if depth >= -margins[k]:
            count[k] = 1
            kind[k] = _FACE_B if hull_b[k] else _FACE_A
        else:
            count[k] = 0
            kind[k] = _NONE
            depths[k, 0] = 0.0
            for i in range(3):
                normal[k, i] = points_a[k, 0, i] = points_b[k, 0, i] = 0.0
    return -1, 0


def collide_sphere_pairs(table, sphere_ids, poses_a, shape_ids, poses_b, hull, margins, check=True):
    """Manifolds of ``k`` spheres (A) against spheres, capsules or hulls (B) in one call.

    Parameters
    ----------
    table : collision.halfspace_batch.CoreTable
        Holds both sides' cores (a sphere's core is its centre).
    sphere_ids : (k,) int
        Table ids of the spheres (one core point each).
    poses_a : (k, 4, 4) float64
    shape_ids : (k,) int
        Table ids of the other shapes.
    poses_b : (k, 4, 4) float64
    hull : (k,) bool
        Whether each B is a hull (its manifold's kind is then ``"face_b"``, as
        :func:`collision.narrow_phase.collide_sphere_hull` names it).
    margins : float or (k,) float
        Speculative distances >= 0.
    check : bool
        As in :func:`collision.hull_batch.collide_hull_pairs` (``False``: no
        argument checks, the poses still checked in the kernel).

    Returns
    -------
    collision.hull_batch.ManifoldBatch
        At most one point per pair (id 0); ``sat_depth`` is the depth (or
        minus the gap) also for pairs beyond the margin.

    Raises
    ------
    ValueError
        For ids outside the table, an A that is not one point, lengths that
        disagree, non-finite or non-rigid poses (naming the argument and the
        row), or a negative or non-finite margin.
    """
    if not check:
        ia, ib, pa, pb, k = sphere_ids, shape_ids, poses_a, poses_b, len(sphere_ids)
    else:
        ia, ib, pa, pb, hull, margins, k = _checked(table, sphere_ids, poses_a, shape_ids, poses_b, hull, margins)
    out = ManifoldBatch.empty(k, _NONE)
    if k == 0:
        return out
    row, st = _sphere_kernel(table._points, table._starts, table._radius, ia, pa, ib, pb, hull, margins,
                             out.count, out.normal, out.points_a, out.points_b, out.depths, out.kind, out.sat_depth)
    if st:  # (checked before the call, unless check=False)
        raise ValueError(f"{'poses_a' if st <= 2 else 'poses_b'}[{row}]: {POSE_ERRORS[(st - 1) % 2 + 1]}")
    return out


def _checked(table, sphere_ids, poses_a, shape_ids, poses_b, hull, margins):
    """The arguments of :func:`collide_sphere_pairs`, validated and made contiguous."""
    if not isinstance(table, CoreTable):
        raise ValueError(f"table: expected a CoreTable, got {type(table).__name__}")
    ia = batch_ids(sphere_ids, "sphere_ids", len(table))
    ib = batch_ids(shape_ids, "shape_ids", len(table))
    k = len(ia)
    if len(ib) != k:
        raise ValueError(f"shape_ids: {len(ib)} ids for {k} sphere ids")
    starts = table.starts
    if k and np.any(starts[ia + 1] - starts[ia] != 1):
        bad = int(np.flatnonzero(starts[ia + 1] - starts[ia] != 1)[0])
        raise ValueError(f"sphere_ids[{bad}]: shape {ia[bad]} is not a sphere (one core point)")
    pa = batch_poses(poses_a, "poses_a", k)
    pb = batch_poses(poses_b, "poses_b", k)
    hull = np.ascontiguousarray(np.broadcast_to(np.asarray(hull, dtype=bool), (k,)))
    margins = batch_margins(margins, "margins", k)
    return ia, ib, pa, pb, hull, margins, k
