"""Convex shapes as core points plus a radius: support mapping, frames, argument checks.

A convex shape is a *core point set plus a radius*: a hull or a box is its
vertices with radius 0, a sphere one point with radius r, a capsule its two
segment ends with radius r. The support function of a core (RTCD 9.5,
"support mapping") is the arg-max of a dot product over its points; the
Minkowski difference A - B's support is a pair of indices. B is expressed in
A's frame once per query (:func:`relative_transform`, parry's ``pos12``), so
no point of B is ever moved in bulk. Used by GJK (:mod:`collision.gjk`) and
EPA (:mod:`collision.epa`); the checks here are their public edge's.
"""

import math

import numpy as np

from . import _vec as v
from ._jit import njit
from ._validate import MAX_COORD, as_array, as_number
from .transform import POSE_ERRORS, as_pose, check_pose_kernel

__all__ = ["support_index", "support_pair", "b_point", "relative_transform", "to_world", "dir_to_world",
           "check_pose", "check_core", "check_radius"]


@njit(inline="always")
def _rot(r, p):
    """``r @ p`` for a (3, 3) array and a tuple."""
    return (r[0, 0] * p[0] + r[0, 1] * p[1] + r[0, 2] * p[2],
            r[1, 0] * p[0] + r[1, 1] * p[1] + r[1, 2] * p[2],
            r[2, 0] * p[0] + r[2, 1] * p[1] + r[2, 2] * p[2])


@njit(inline="always")
def _rot_t(r, p):
    """``r.T @ p``."""
    return (r[0, 0] * p[0] + r[1, 0] * p[1] + r[2, 0] * p[2],
            r[0, 1] * p[0] + r[1, 1] * p[1] + r[2, 1] * p[2],
            r[0, 2] * p[0] + r[1, 2] * p[1] + r[2, 2] * p[2])


@njit(inline="always")
def b_point(pb, rot, trans, j):
    """Core point ``j`` of B in A's frame: ``rot @ pb[j] + trans``."""
    return v.add(_rot(rot, v.row(pb, j)), (trans[0], trans[1], trans[2]))


@njit
def support_index(pts, d):
    """Index of the point of ``pts`` (n, 3) with the largest ``pts[i] . d`` (first on ties).

    Brute force over the points (RTCD 9.5, "support mapping"); fine for hulls
    up to a few hundred vertices.
    """
    best = 0
    best_s = pts[0, 0] * d[0] + pts[0, 1] * d[1] + pts[0, 2] * d[2]
    for i in range(1, pts.shape[0]):
        s = pts[i, 0] * d[0] + pts[i, 1] * d[1] + pts[i, 2] * d[2]
        if s > best_s:
            best_s = s
            best = i
    return best


@njit(inline="always")
def support_pair(pa, pb, rot, d):
    """Support of the Minkowski difference A - B along ``d`` (A's frame): ``(ia, ib)``.

    A's point maximises ``a . d``; B's minimises ``(rot b + t) . d``, i.e.
    maximises ``b . (-rot.T d)`` in B's own frame (no point of B is moved).
    """
    ia = support_index(pa, d)
    ib = support_index(pb, _rot_t(rot, v.scale(d, -1.0)))
    return ia, ib


@njit
def relative_transform(pose_a, pose_b):
    """B's frame in A's frame: ``(rot, trans)`` with ``x_A = rot @ x_B + trans``.

    ``rot = Ra.T Rb``, ``trans = Ra.T (tb - ta)`` for 4x4 rigid poses (parry's ``pos12``).
    """
    rot = np.empty((3, 3))
    trans = np.empty(3)
    for i in range(3):
        for j in range(3):
            rot[i, j] = pose_a[0, i] * pose_b[0, j] + pose_a[1, i] * pose_b[1, j] + pose_a[2, i] * pose_b[2, j]
        trans[i] = (pose_a[0, i] * (pose_b[0, 3] - pose_a[0, 3]) + pose_a[1, i] * (pose_b[1, 3] - pose_a[1, 3])
                    + pose_a[2, i] * (pose_b[2, 3] - pose_a[2, 3]))
    return rot, trans


@njit(inline="always")
def to_world(pose, p):
    """``R p + t`` for a 4x4 pose and a tuple."""
    return (pose[0, 0] * p[0] + pose[0, 1] * p[1] + pose[0, 2] * p[2] + pose[0, 3],
            pose[1, 0] * p[0] + pose[1, 1] * p[1] + pose[1, 2] * p[2] + pose[1, 3],
            pose[2, 0] * p[0] + pose[2, 1] * p[1] + pose[2, 2] * p[2] + pose[2, 3])


@njit(inline="always")
def dir_to_world(pose, d):
    return (pose[0, 0] * d[0] + pose[0, 1] * d[1] + pose[0, 2] * d[2],
            pose[1, 0] * d[0] + pose[1, 1] * d[1] + pose[1, 2] * d[2],
            pose[2, 0] * d[0] + pose[2, 1] * d[1] + pose[2, 2] * d[2])


def check_pose(pose, name):
    """A float64 (4, 4) rigid transform, or ``ValueError`` naming ``name``."""
    p = as_pose(pose, name)
    code = check_pose_kernel(p)
    if code:
        raise ValueError(f"{name}: {POSE_ERRORS[code]}")
    return p


@njit
def _all_finite(a):
    for x in a.flat:
        if not math.isfinite(x):
            return False
    return True


def check_core(points, name):
    """Core points as a C-contiguous (n, 3) float64 array, n >= 1, finite."""
    if (type(points) is np.ndarray and points.dtype == np.float64 and points.ndim == 2
            and points.shape[1] == 3 and points.shape[0] > 0 and points.flags.c_contiguous):
        if not _all_finite(points):  # the common case, without as_array's temporaries
            raise ValueError(f"{name}: contains NaN or infinity")
        return points
    pts = as_array(points, name, (3,))
    if pts.ndim == 1:
        pts = pts.reshape(1, 3)
    if pts.ndim != 2 or len(pts) == 0:
        raise ValueError(f"{name}: expected a non-empty (n, 3) array, got shape {pts.shape}")
    return np.ascontiguousarray(pts)


def check_radius(r, name):
    return as_number(r, name, low=0.0, high=MAX_COORD)
