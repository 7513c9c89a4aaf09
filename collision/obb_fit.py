"""Fitting an oriented box to the triangles of an OBB-tree node: moments, covariance, extents.

The thesis (seed 004, 3.2) and Gottschalk, Lin and Manocha's OBBTree (RAPID),
as in RTCD 4.4.3: a node's box takes its axes from the eigenvectors of the
covariance of its triangles (:mod:`collision.eig3`) and its extents from the
minimum and maximum projections of their corners on those axes. Each
triangle's weight and first and second moments are computed once
(:func:`_triangle_moments`), so a node's covariance is a sum over its rows:

- fit 0 (``"vertex"``, the thesis' formula): the three corners of every
  triangle, each counted once per triangle;
- fit 1 (``"area"``, RAPID; also the start of ``"hull"``): the uniform
  surface density, each triangle weighted by its area.

The kernels read the per-triangle rows that the build in
:mod:`collision.obb_tree` partitions in place: the corners in columns
``_TV:_TV + 9``, then the moments from ``_MOM`` (weight, first 3, second 6),
``_ROW`` columns in all.
"""

from __future__ import annotations

import numpy as np

from . import _vec as v
from ._jit import njit
from .eig3 import _plane_eigvecs, _store_frame

__all__: list[str] = []


@njit
def _triangle_moments(tv, fit):
    """Per-triangle weight, weighted first moment (3) and second moment (6: xx yy zz xy xz yz).

    ``fit`` 0: the three vertices, weight 3. ``fit`` 1: the uniform surface
    density, weight = area; second moment ``A/12 (9 m m^T + sum_c p_c p_c^T)``.
    Summing rows over a node gives its covariance in O(1) per triangle.
    """
    n = tv.shape[0]
    w = np.empty(n)
    first = np.empty((n, 3))
    second = np.empty((n, 6))
    for t in range(n):
        p0 = (tv[t, 0, 0], tv[t, 0, 1], tv[t, 0, 2])
        p1 = (tv[t, 1, 0], tv[t, 1, 1], tv[t, 1, 2])
        p2 = (tv[t, 2, 0], tv[t, 2, 1], tv[t, 2, 2])
        s = v.add(v.add(p0, p1), p2)
        xx = p0[0] * p0[0] + p1[0] * p1[0] + p2[0] * p2[0]
        yy = p0[1] * p0[1] + p1[1] * p1[1] + p2[1] * p2[1]
        zz = p0[2] * p0[2] + p1[2] * p1[2] + p2[2] * p2[2]
        xy = p0[0] * p0[1] + p1[0] * p1[1] + p2[0] * p2[1]
        xz = p0[0] * p0[2] + p1[0] * p1[2] + p2[0] * p2[2]
        yz = p0[1] * p0[2] + p1[1] * p1[2] + p2[1] * p2[2]
        if fit == 0:
            wt = 3.0
            f = s
            sec = (xx, yy, zz, xy, xz, yz)
        else:
            area = 0.5 * v.norm(v.cross(v.sub(p1, p0), v.sub(p2, p0)))
            m = v.scale(s, 1.0 / 3.0)
            k = area / 12.0
            wt = area
            f = v.scale(m, area)
            sec = (k * (9.0 * m[0] * m[0] + xx), k * (9.0 * m[1] * m[1] + yy), k * (9.0 * m[2] * m[2] + zz),
                   k * (9.0 * m[0] * m[1] + xy), k * (9.0 * m[0] * m[2] + xz), k * (9.0 * m[1] * m[2] + yz))
        w[t] = wt
        for i in range(3):
            first[t, i] = f[i]
        for i in range(6):
            second[t, i] = sec[i]
    return w, first, second


# Columns of the per-triangle rows the build partitions in place: the corners,
# then the fit's moments (weight, first 3, second 6).
_TV, _MOM, _ROW = 0, 9, 19


@njit
def _node_covariance(rows, start, count, cov):
    """Covariance of a node from the moments in its rows; False if its weight is 0."""
    ws = 0.0
    f0 = f1 = f2 = 0.0
    s0 = s1 = s2 = s3 = s4 = s5 = 0.0
    col = _MOM
    for k in range(start, start + count):
        ws += rows[k, col]
        f0 += rows[k, col + 1]
        f1 += rows[k, col + 2]
        f2 += rows[k, col + 3]
        s0 += rows[k, col + 4]
        s1 += rows[k, col + 5]
        s2 += rows[k, col + 6]
        s3 += rows[k, col + 7]
        s4 += rows[k, col + 8]
        s5 += rows[k, col + 9]
    if ws == 0.0:
        return False
    return _covariance_from_sums(ws, f0, f1, f2, s0, s1, s2, s3, s4, s5, cov)


@njit
def _node_vertex_covariance(rows, start, count, cov):
    """Covariance of the node's corners (the fallback when all its triangles have zero area)."""
    f0 = f1 = f2 = 0.0
    s0 = s1 = s2 = s3 = s4 = s5 = 0.0
    for k in range(start, start + count):
        for c in range(0, 9, 3):
            x, y, z = rows[k, c], rows[k, c + 1], rows[k, c + 2]
            f0 += x
            f1 += y
            f2 += z
            s0 += x * x
            s1 += y * y
            s2 += z * z
            s3 += x * y
            s4 += x * z
            s5 += y * z
    return _covariance_from_sums(3.0 * count, f0, f1, f2, s0, s1, s2, s3, s4, s5, cov)


@njit
def _covariance_from_sums(ws, f0, f1, f2, s0, s1, s2, s3, s4, s5, cov):
    m0, m1, m2 = f0 / ws, f1 / ws, f2 / ws
    cov[0, 0] = s0 / ws - m0 * m0
    cov[1, 1] = s1 / ws - m1 * m1
    cov[2, 2] = s2 / ws - m2 * m2
    cov[0, 1] = cov[1, 0] = s3 / ws - m0 * m1
    cov[0, 2] = cov[2, 0] = s4 / ws - m0 * m2
    cov[1, 2] = cov[2, 1] = s5 / ws - m1 * m2
    return True


@njit
def _fit_box(rows, start, count, axes, center, half):
    """Extents of the node's corners along ``axes``; writes ``center`` and ``half``."""
    a0 = (axes[0, 0], axes[0, 1], axes[0, 2])
    a1 = (axes[1, 0], axes[1, 1], axes[1, 2])
    a2 = (axes[2, 0], axes[2, 1], axes[2, 2])
    lo0 = lo1 = lo2 = np.inf
    hi0 = hi1 = hi2 = -np.inf
    for k in range(start, start + count):
        for c in range(0, 9, 3):
            p = (rows[k, c], rows[k, c + 1], rows[k, c + 2])
            s0 = v.dot(a0, p)
            s1 = v.dot(a1, p)
            s2 = v.dot(a2, p)
            lo0 = min(lo0, s0)
            hi0 = max(hi0, s0)
            lo1 = min(lo1, s1)
            hi1 = max(hi1, s1)
            lo2 = min(lo2, s2)
            hi2 = max(hi2, s2)
    half[0] = 0.5 * (hi0 - lo0)
    half[1] = 0.5 * (hi1 - lo1)
    half[2] = 0.5 * (hi2 - lo2)
    c = v.add(v.add(v.scale(a0, 0.5 * (lo0 + hi0)), v.scale(a1, 0.5 * (lo1 + hi1))),
              v.scale(a2, 0.5 * (lo2 + hi2)))
    center[0] = c[0]
    center[1] = c[1]
    center[2] = c[2]


@njit
def _eig_flat_into(cov, rows, k, out):
    """Covariance axes of the single triangle in row ``k``, in closed form.

    The covariance of points (or of a surface) in a plane has the plane's
    normal as the eigenvector of eigenvalue 0; the other two are those of the
    2x2 restriction to the plane, a rotation by ``atan2(2 b, a - c) / 2``.
    Same axes as :func:`collision.eig3._eig_into` (up to sign), a fraction of its cost: half
    of a tree's nodes are such leaves. Returns False for a (nearly) zero-area
    triangle.
    """
    p0 = (rows[k, 0], rows[k, 1], rows[k, 2])
    e1 = v.sub((rows[k, 3], rows[k, 4], rows[k, 5]), p0)
    e2 = v.sub((rows[k, 6], rows[k, 7], rows[k, 8]), p0)
    n = v.cross(e1, e2)
    nn = v.norm(n)
    l1 = v.norm(e1)
    if not nn > 1e-8 * l1 * v.norm(e2):  # a sliver's normal is rounding noise: Jacobi decides
        return False
    n = v.scale(n, 1.0 / nn)
    u = v.scale(e1, 1.0 / l1)
    w = v.cross(n, u)
    x, y = _plane_eigvecs(cov, u, w)
    _store_frame(out, x, y)
    return True
