"""Eigen-decomposition of symmetric 3x3 matrices, for the axes of oriented boxes.

An OBB fitted to a set of points or triangles takes its axes from the
eigenvectors of their covariance (thesis 3.2, Gottschalk's OBBTree, RTCD
4.4.3); :mod:`collision.obb_fit` builds the covariances and
:mod:`collision.obb_tree` asks for the axes of every node. Two solvers:

- :func:`_eig_into` (and its wrapper :func:`eig_sym3`): cyclic Jacobi
  rotations (Golub and Van Loan 8.5), scale invariant and exact to rounding
  for any symmetric 3x3, repeated eigenvalues included;
- :func:`_eig_fast_into`: a closed form (the trigonometric solution of the
  characteristic cubic, Smith 1961), a fraction of the cost, which declines
  when the largest eigenvalue is (nearly) repeated so that Jacobi decides.

Both write the axes as the rows of a right-handed frame, the largest
eigenvalue's first.
"""

from __future__ import annotations

import math

import numpy as np

from . import _vec as v
from ._jit import njit

__all__ = ["eig_sym3"]


@njit
def _eig_into(a, m, vec, out):
    """Jacobi eigen-decomposition of symmetric ``a`` (3, 3) into ``out`` (rows, descending).

    ``m`` and ``vec`` are (3, 3) work arrays. Cyclic Jacobi rotations (Golub and
    Van Loan 8.5) until the off-diagonal part vanishes relative to the
    diagonal; exact for a 3x3 in a handful of sweeps. The third row is made
    ``row0 x row1``, so the frame is right-handed. The matrix is scaled by its
    largest entry first, so the result is scale invariant.
    """
    # Work on a / max|a_ij| so that the squares below neither underflow nor
    # overflow for meshes in nanometres or light years; scale back at the end.
    big = 0.0
    for i in range(3):
        for j in range(3):
            big = max(big, abs(a[i, j]))
    if not big > 0.0 or not big < np.inf:
        big = 1.0
    for i in range(3):
        for j in range(3):
            m[i, j] = a[i, j] / big
            vec[i, j] = 1.0 if i == j else 0.0
    for _sweep in range(32):
        off = m[0, 1] * m[0, 1] + m[0, 2] * m[0, 2] + m[1, 2] * m[1, 2]
        diag = m[0, 0] * m[0, 0] + m[1, 1] * m[1, 1] + m[2, 2] * m[2, 2]
        if off <= 1e-30 * diag or off == 0.0:
            break
        for r in range(3):
            p = 0 if r < 2 else 1
            q = 1 if r == 0 else 2
            apq = m[p, q]
            if apq == 0.0:
                continue
            theta = (m[q, q] - m[p, p]) / (2.0 * apq)
            t = 1.0 / (abs(theta) + math.sqrt(theta * theta + 1.0))
            if theta < 0.0:
                t = -t
            c = 1.0 / math.sqrt(t * t + 1.0)
            s = t * c
            for k in range(3):
                mkp = m[k, p]
                mkq = m[k, q]
                m[k, p] = c * mkp - s * mkq
                m[k, q] = s * mkp + c * mkq
            for k in range(3):
                mpk = m[p, k]
                mqk = m[q, k]
                m[p, k] = c * mpk - s * mqk
                m[q, k] = s * mpk + c * mqk
            for k in range(3):
                vkp = vec[k, p]
                vkq = vec[k, q]
                vec[k, p] = c * vkp - s * vkq
                vec[k, q] = s * vkp + c * vkq
    # Order the three eigenvalues by hand (descending).
    i0, i1, i2 = 0, 1, 2
    if m[i1, i1] > m[i0, i0]:
        i0, i1 = i1, i0
    if m[i2, i2] > m[i1, i1]:
        i1, i2 = i2, i1
    if m[i1, i1] > m[i0, i0]:
        i0, i1 = i1, i0
    for k in range(3):
        out[0, k] = vec[k, i0]
        out[1, k] = vec[k, i1]
    out[2, 0] = out[0, 1] * out[1, 2] - out[0, 2] * out[1, 1]
    out[2, 1] = out[0, 2] * out[1, 0] - out[0, 0] * out[1, 2]
    out[2, 2] = out[0, 0] * out[1, 1] - out[0, 1] * out[1, 0]
    return m[i0, i0] * big, m[i1, i1] * big, m[i2, i2] * big


@njit
def eig_sym3(a):
    """Eigen-decomposition of a symmetric 3x3 matrix by cyclic Jacobi rotations.

    Parameters
    ----------
    a : (3, 3) float64
        Symmetric; not modified.

    Returns
    -------
    values : (3,) float64
        Descending.
    axes : (3, 3) float64
        Matching unit eigenvectors as rows, right-handed (``det = +1``).
    """
    out = np.empty((3, 3))
    l0, l1, l2 = _eig_into(a, np.empty((3, 3)), np.empty((3, 3)), out)
    return np.array([l0, l1, l2]), out


@njit
def _plane_eigvecs(a, u, w):
    """Eigenvectors of symmetric ``a`` restricted to the plane of orthonormal ``u, w``
    (an invariant plane of ``a``): the larger eigenvalue's first. The 2x2 problem
    is a rotation by ``atan2(2 b, a - c) / 2`` (Golub and Van Loan 8.5.2)."""
    au = (a[0, 0] * u[0] + a[0, 1] * u[1] + a[0, 2] * u[2],
          a[1, 0] * u[0] + a[1, 1] * u[1] + a[1, 2] * u[2],
          a[2, 0] * u[0] + a[2, 1] * u[1] + a[2, 2] * u[2])
    aw = (a[0, 0] * w[0] + a[0, 1] * w[1] + a[0, 2] * w[2],
          a[1, 0] * w[0] + a[1, 1] * w[1] + a[1, 2] * w[2],
          a[2, 0] * w[0] + a[2, 1] * w[1] + a[2, 2] * w[2])
    theta = 0.5 * math.atan2(2.0 * v.dot(u, aw), v.dot(u, au) - v.dot(w, aw))
    cs, sn = math.cos(theta), math.sin(theta)
    return v.add(v.scale(u, cs), v.scale(w, sn)), v.sub(v.scale(w, cs), v.scale(u, sn))


@njit
def _store_frame(out, x, y):
    """Rows ``x, y, x cross y`` into ``out`` (3, 3): a right-handed frame."""
    z = v.cross(x, y)
    for i in range(3):
        out[0, i] = x[i]
        out[1, i] = y[i]
        out[2, i] = z[i]


@njit
def _eig_fast_into(a, out):
    """Covariance axes in closed form; False when Jacobi should decide instead.

    The largest eigenvalue from the trigonometric solution of the
    characteristic cubic (Smith 1961), its eigenvector as the best-conditioned
    cross product of two rows of ``a - l0 I``, the other two axes by the 2x2
    rotation in the plane orthogonal to it. A fraction of the cost of Jacobi
    sweeps; used when the largest eigenvalue is well separated (the cross
    product's norm is not at rounding level), otherwise ``False``.
    """
    a00, a11, a22 = a[0, 0], a[1, 1], a[2, 2]
    a01, a02, a12 = a[0, 1], a[0, 2], a[1, 2]
    p1 = a01 * a01 + a02 * a02 + a12 * a12
    q = (a00 + a11 + a22) / 3.0
    b00, b11, b22 = a00 - q, a11 - q, a22 - q
    p2 = b00 * b00 + b11 * b11 + b22 * b22 + 2.0 * p1
    if not p2 > 0.0:
        return False
    pp = math.sqrt(p2 / 6.0)
    det = (b00 * (b11 * b22 - a12 * a12) - a01 * (a01 * b22 - a12 * a02)
           + a02 * (a01 * a12 - b11 * a02)) / (pp * pp * pp)
    r = min(max(0.5 * det, -1.0), 1.0)
    l0 = q + 2.0 * pp * math.cos(math.acos(r) / 3.0)
    r0 = (a00 - l0, a01, a02)
    r1 = (a01, a11 - l0, a12)
    r2 = (a02, a12, a22 - l0)
    c01, c02, c12 = v.cross(r0, r1), v.cross(r0, r2), v.cross(r1, r2)
    n01, n02, n12 = v.norm2(c01), v.norm2(c02), v.norm2(c12)
    x, nx = c01, n01
    if n02 > nx:
        x, nx = c02, n02
    if n12 > nx:
        x, nx = c12, n12
    if not nx > 1e-16 * p2 * p2:  # l0 (near-)repeated: its eigenvector is ill-posed
        return False
    x = v.scale(x, 1.0 / math.sqrt(nx))
    # an orthonormal basis (u, w) of the plane orthogonal to x
    if abs(x[0]) < 0.6:
        u = v.cross(x, (1.0, 0.0, 0.0))
    else:
        u = v.cross(x, (0.0, 1.0, 0.0))
    u = v.scale(u, 1.0 / v.norm(u))
    w = v.cross(x, u)
    y, _ = _plane_eigvecs(a, u, w)
    _store_frame(out, x, y)
    return True
