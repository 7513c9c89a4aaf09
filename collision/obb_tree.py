"""OBB trees: a top-down hierarchy of oriented boxes over a triangle mesh.

The thesis (seed 004, 3.2 and 5.3) and Gottschalk, Lin and Manocha's OBBTree
(RAPID): each node's box takes its axes from the eigenvectors of the
covariance of the node's triangle vertices and its extents from the minimum
and maximum projections; a node splits across its longest axis at the mean of
its triangles' centroids, falling back to the median when one side would be
empty. The tree is stored as flat arrays that the compiled queries in
:mod:`collision.mesh_query` walk.

Three fits for the box axes (``fit=``):

- ``"vertex"`` (default, the thesis' formula): mean and covariance of the
  three vertices of every triangle in the node, each vertex counted once per
  triangle it belongs to;
- ``"area"`` (RAPID): the covariance of the surface, each triangle weighted by
  its area (independent of tessellation);
- ``"hull"``: the area-weighted covariance of the convex hull of the node's
  vertices (Gottschalk's choice; insensitive to interior detail). Costlier:
  a hull per node.

Which is tightest depends on the mesh; ``benchmarks/bench_obb_tree.py`` measures
the sum of node volumes and the box tests per query for each.
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import ArrayLike, NDArray

from . import _vec as v
from ._jit import njit
from ._typing import MeshLike
from ._validate import as_array, as_indices, as_integer

__all__ = ["OBBTree", "eig_sym3", "FITS"]

FITS = ("vertex", "area", "hull")
_FIT_CODE = {"vertex": 0, "area": 1, "hull": 1}


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
    Same axes as :func:`_eig_into` (up to sign), a fraction of its cost: half
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


@njit
def _swap(rows, perm, proj, i, j):
    for col in range(rows.shape[1]):
        x = rows[i, col]
        rows[i, col] = rows[j, col]
        rows[j, col] = x
    k = perm[i]
    perm[i] = perm[j]
    perm[j] = k
    x = proj[i]
    proj[i] = proj[j]
    proj[j] = x


@njit
def _build_kernel(tv, leaf_size, fit):
    """Top-down build. Returns the packed ``nodes (N, 16)`` and ``links (N, 3)``
    (see :class:`OBBTree`), the triangle order and the corners (m, 3, 3) in
    that order.

    The triangles' corners and moments live in one row each and are
    partitioned in place, so every node's triangles are contiguous in memory
    (an index array into the mesh would make every level a random gather).
    """
    m = tv.shape[0]
    cap = max(1, 2 * m - 1)
    nodes = np.empty((cap, 16))
    links = np.empty((cap, 3), dtype=np.int64)  # first child (second is +1, -1 for a leaf), start, count
    perm = np.arange(m)
    proj = np.empty(m)
    rows = np.empty((m, _ROW))
    w, first, second = _triangle_moments(tv, fit)
    for t in range(m):
        for i in range(3):
            for j in range(3):
                rows[t, _TV + 3 * i + j] = tv[t, i, j]
        rows[t, _MOM] = w[t]
        for i in range(3):
            rows[t, _MOM + 1 + i] = first[t, i]
        for i in range(6):
            rows[t, _MOM + 4 + i] = second[t, i]
    cov = np.empty((3, 3))
    work_m = np.empty((3, 3))
    work_v = np.empty((3, 3))
    n_nodes = 1
    links[0, 0] = -1
    links[0, 1] = 0
    links[0, 2] = m
    stack = np.empty(cap, dtype=np.int64)
    stack[0] = 0
    top = 1
    while top > 0:
        top -= 1
        node = stack[top]
        s = links[node, 1]
        c = links[node, 2]
        axes = nodes[node, 3:12].reshape(3, 3)
        if not _node_covariance(rows, s, c, cov):
            _node_vertex_covariance(rows, s, c, cov)  # all areas zero
        if c == 1:
            done = _eig_flat_into(cov, rows, s, axes)
        else:
            done = _eig_fast_into(cov, axes)
        if not done:
            _eig_into(cov, work_m, work_v, axes)
        _fit_box(rows, s, c, axes, nodes[node, 0:3], nodes[node, 12:15])
        nodes[node, 15] = math.sqrt(nodes[node, 12] ** 2 + nodes[node, 13] ** 2 + nodes[node, 14] ** 2)
        if c <= leaf_size:
            continue
        # Split across the longest axis at the mean of the centroids.
        k = 0
        if nodes[node, 13] > nodes[node, 12 + k]:
            k = 1
        if nodes[node, 14] > nodes[node, 12 + k]:
            k = 2
        ax = (axes[k, 0], axes[k, 1], axes[k, 2])
        mean = 0.0
        for i in range(s, s + c):
            p = (ax[0] * (rows[i, 0] + rows[i, 3] + rows[i, 6])
                 + ax[1] * (rows[i, 1] + rows[i, 4] + rows[i, 7])
                 + ax[2] * (rows[i, 2] + rows[i, 5] + rows[i, 8]))
            proj[i] = p
            mean += p
        mean /= c
        # Hoare partition: swap only pairs that are both on the wrong side.
        lo = s
        hi = s + c - 1
        while True:
            while lo <= hi and proj[lo] < mean:
                lo += 1
            while lo <= hi and not proj[hi] < mean:
                hi -= 1
            if lo >= hi:
                break
            _swap(rows, perm, proj, lo, hi)
            lo += 1
            hi -= 1
        n_left = lo - s
        if n_left == 0 or n_left == c:
            # Median split: order by projection, halve.
            order = np.argsort(proj[s:s + c]) + s
            rows[s:s + c] = rows[order]
            perm[s:s + c] = perm[order]
            n_left = c // 2
        left = n_nodes
        n_nodes += 2
        links[node, 0] = left
        links[left, 0] = -1
        links[left, 1] = s
        links[left, 2] = n_left
        links[left + 1, 0] = -1
        links[left + 1, 1] = s + n_left
        links[left + 1, 2] = c - n_left
        stack[top] = left + 1
        stack[top + 1] = left
        top += 2
    corners = np.ascontiguousarray(rows[:, _TV:_TV + 9]).reshape(m, 3, 3)
    return nodes[:n_nodes].copy(), links[:n_nodes].copy(), perm, corners


@njit
def _is_closed_kernel(faces, n_vertices):
    """Each directed edge appears once and its reverse appears once."""
    m = faces.shape[0]
    keys = np.empty(3 * m, dtype=np.int64)
    for t in range(m):
        for k in range(3):
            a = faces[t, k]
            b = faces[t, (k + 1) % 3]
            if a == b:
                return False
            keys[3 * t + k] = a * n_vertices + b
    keys.sort()
    for i in range(1, keys.shape[0]):
        if keys[i] == keys[i - 1]:
            return False
    for i in range(keys.shape[0]):
        a = keys[i] // n_vertices
        b = keys[i] % n_vertices
        r = b * n_vertices + a
        j = np.searchsorted(keys, r)
        if j >= keys.shape[0] or keys[j] != r:
            return False
    return True


class OBBTree:
    """An OBB hierarchy over a triangle mesh, in the mesh's own (model) frame.

    Parameters
    ----------
    vertices : (n, 3) float64, or a ``trimesh.Trimesh``
        With a Trimesh, ``faces`` is taken from it.
    faces : (m, 3) int
        Triangles as vertex indices.
    fit : {"vertex", "area", "hull"}
        How node axes are chosen (see the module docstring).
    leaf_size : int
        Most triangles in a leaf (1, as RAPID, makes every leaf test exact and
        cheap; larger leaves make a shallower tree).

    Attributes
    ----------
    vertices : (n, 3) float64
    faces : (m, 3) int64
    triangles : (m, 3, 3) float64
        Corner coordinates of every triangle, in the tree's leaf order
        (``triangles[k]`` is face ``tri_index[k]``).
    tri_index : (m,) int64
        Original face index of each entry of ``triangles``.
    centers, axes, half_extents : (N, 3), (N, 3, 3), (N, 3) float64
        Node boxes; axes as rows.
    child : (N,) int64
        First child of each node (the second is ``child + 1``), -1 for leaves.
    start, count : (N,) int64
        Each node's triangles: ``triangles[start:start + count]``.
    closed : bool
        Every edge is shared by exactly two faces with opposite directions:
        a closed, consistently oriented surface (required for containment).
    nodes : (N, 16) float64
        Packed node rows: centre (0:3), axes row-major (3:12), half extents
        (12:15), radius of the bounding sphere (15). ``centers``, ``axes`` and
        ``half_extents`` are views into it.
    links : (N, 3) int64
        Packed ``child, start, count`` (the three attributes are views).
    arrays : tuple
        ``(nodes, links, triangles)``, what the query kernels take;
        ``query_arrays`` adds ``tri_index``.
    """

    vertices: NDArray[np.float64]
    faces: NDArray[np.int64]
    fit: str
    leaf_size: int
    triangles: NDArray[np.float64]
    tri_index: NDArray[np.int64]
    centers: NDArray[np.float64]
    axes: NDArray[np.float64]
    half_extents: NDArray[np.float64]
    child: NDArray[np.int64]
    start: NDArray[np.int64]
    count: NDArray[np.int64]
    nodes: NDArray[np.float64]
    links: NDArray[np.int64]
    arrays: tuple[NDArray[np.float64], NDArray[np.int64], NDArray[np.float64]]
    query_arrays: tuple[NDArray[np.float64], NDArray[np.int64], NDArray[np.float64], NDArray[np.int64]]

    def __init__(self, vertices: ArrayLike | MeshLike, faces: ArrayLike | None = None, fit: str = "vertex",
                 leaf_size: int = 1) -> None:
        if faces is None and hasattr(vertices, "faces") and hasattr(vertices, "vertices"):
            vertices, faces = vertices.vertices, vertices.faces
        if faces is None:
            raise ValueError("faces: required unless a trimesh.Trimesh is given")
        verts = as_array(vertices, "vertices", (3,))
        if verts.ndim != 2:
            raise ValueError(f"vertices: expected shape (n, 3), got {verts.shape}")
        f = as_indices(faces, "faces", (3,))
        if f.ndim != 2:
            raise ValueError(f"faces: expected an (m, 3) integer array, got {f.shape} {f.dtype}")
        if len(f) == 0:
            raise ValueError("faces: the mesh has no triangles")
        if f.min() < 0 or f.max() >= len(verts):
            raise ValueError(f"faces: vertex index out of range (mesh has {len(verts)} vertices)")
        if fit not in FITS:
            raise ValueError(f"fit: expected one of {FITS}, got {fit!r}")
        leaf_size = as_integer(leaf_size, "leaf_size", low=1, high=1 << 30)
        self.vertices = np.ascontiguousarray(verts)
        self.faces = np.ascontiguousarray(f, dtype=np.int64)
        self.fit = fit
        self.leaf_size = int(leaf_size)
        tv = np.ascontiguousarray(self.vertices[self.faces])
        # Packed layout walked by the kernels (one row per node, few arguments
        # per call); the named attributes are views into it.
        self.nodes, self.links, self.tri_index, self.triangles = _build_kernel(
            tv, self.leaf_size, _FIT_CODE[fit])
        self._set_views()
        if fit == "hull":
            self._refit_hull()
            self.nodes[:, 15] = np.linalg.norm(self.half_extents, axis=1)  # bounding-sphere radius

    @classmethod
    def from_arrays(cls, vertices: NDArray[np.float64], faces: NDArray[np.int64], nodes: NDArray[np.float64],
                    links: NDArray[np.int64], tri_index: NDArray[np.int64], fit: str = "vertex",
                    leaf_size: int = 1) -> OBBTree:
        """A tree from the arrays a built tree holds (a cache), building nothing.

        The arrays are trusted as given: the query kernels walk them without
        checks, so check them first (``validate()``, or the cache's own checks).

        Parameters
        ----------
        vertices : (n, 3) float64
        faces : (m, 3) int64
        nodes : (N, 16) float64
        links : (N, 3) int64
        tri_index : (m,) int64
        fit, leaf_size
            What the tree was built with.
        """
        t = cls.__new__(cls)
        t.vertices = vertices
        t.faces = faces
        t.fit = fit
        t.leaf_size = int(leaf_size)
        t.nodes, t.links, t.tri_index = nodes, links, tri_index
        t.triangles = np.ascontiguousarray(vertices[faces[tri_index]])
        t._set_views()
        return t

    def _set_views(self):
        """The named views into the packed arrays, and the lazily computed properties."""
        n = len(self.nodes)
        self.centers = self.nodes[:, 0:3]
        self.axes = self.nodes[:, 3:12].reshape(n, 3, 3)
        self.half_extents = self.nodes[:, 12:15]
        self.child, self.start, self.count = self.links[:, 0], self.links[:, 1], self.links[:, 2]
        self.arrays = (self.nodes, self.links, self.triangles)
        self.query_arrays = self.arrays + (self.tri_index,)
        self._closed = None
        self._depths = None
        self._component_vertices = None

    @property
    def closed(self) -> bool:
        """True when every edge is shared by exactly two faces with opposite directions.

        A closed, consistently oriented surface bounds a solid: only then can a
        containment (one mesh inside another) be claimed. Computed on first use.
        """
        if self._closed is None:
            self._closed = _is_closed(self.faces)
        return self._closed

    @property
    def component_vertices(self) -> NDArray[np.int64]:
        """(k,) int64: one vertex index of each connected component of the mesh."""
        if self._component_vertices is None:
            from scipy.sparse import coo_matrix
            from scipy.sparse.csgraph import connected_components

            n = len(self.vertices)
            e = np.concatenate([self.faces[:, [0, 1]], self.faces[:, [1, 2]]])
            g = coo_matrix((np.ones(len(e)), (e[:, 0], e[:, 1])), shape=(n, n))
            _, labels = connected_components(g, directed=False)
            used = np.unique(self.faces)
            _, first = np.unique(labels[used], return_index=True)
            self._component_vertices = used[first]
        return self._component_vertices

    def _refit_hull(self):
        """Refit every node's box from the area-weighted covariance of its hull."""
        from scipy.spatial import ConvexHull, QhullError

        from .obb import OBB

        for node in range(len(self.child)):
            pts = self.triangles[self.start[node]:self.start[node] + self.count[node]].reshape(-1, 3)
            try:
                hull = ConvexHull(pts)
            except (QhullError, ValueError):
                continue  # flat node: keep the covariance box
            box = OBB.from_triangles(pts[hull.simplices])
            self.centers[node], self.axes[node], self.half_extents[node] = box.center, box.axes, box.half_extents

    @property
    def node_count(self) -> int:
        return len(self.child)

    @property
    def depth(self) -> int:
        """Number of levels (a single leaf has depth 1)."""
        return int(self.node_depths().max()) + 1

    def node_depths(self) -> NDArray[np.int64]:
        """(N,) int64: depth of every node, the root at 0 (computed once; read-only)."""
        if self._depths is None:
            d = np.zeros(len(self.child), dtype=np.int64)
            for node in range(len(self.child)):  # parents come before children
                c = self.child[node]
                if c >= 0:
                    d[c] = d[c + 1] = d[node] + 1
            d.flags.writeable = False
            self._depths = d
        return self._depths

    def total_volume(self) -> float:
        """Sum of the volumes of all node boxes (a tightness measure)."""
        return float(8.0 * np.prod(self.half_extents, axis=1).sum())

    def boxes_at_depth(self, depth: int) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]:
        """Boxes of the nodes at ``depth`` (leaves above it included), for drawing.

        Returns
        -------
        centers : (k, 3), axes : (k, 3, 3), half_extents : (k, 3)
        """
        d = self.node_depths()
        sel = (d == depth) | ((d < depth) & (self.child < 0))
        return self.centers[sel], self.axes[sel], self.half_extents[sel]

    def validate(self, tol: float = 1e-9) -> bool:
        """Check the tree's invariants; raise ``AssertionError`` naming the first broken one.

        Every node's box encloses all its triangles (to ``tol`` times the mesh
        size), axes are orthonormal and right-handed, children partition their
        parent's triangle range, and every triangle is in exactly one leaf.
        """
        scale = max(1.0, float(np.abs(self.vertices).max()))
        seen = np.zeros(len(self.faces), dtype=np.int64)
        for node in range(len(self.child)):
            a = self.axes[node]
            assert np.allclose(a @ a.T, np.eye(3), atol=1e-9), f"node {node}: axes not orthonormal"
            assert np.linalg.det(a) > 0.0, f"node {node}: axes not right-handed"
            s, c = self.start[node], self.count[node]
            pts = self.triangles[s:s + c].reshape(-1, 3)
            local = np.abs((pts - self.centers[node]) @ a.T)
            excess = (local - self.half_extents[node]).max()
            assert excess <= tol * scale, f"node {node}: a vertex lies {excess:g} outside its box"
            ch = self.child[node]
            if ch >= 0:
                assert self.start[ch] == s and self.count[ch] + self.count[ch + 1] == c \
                    and self.start[ch + 1] == s + self.count[ch], f"node {node}: children do not split it"
                assert self.count[ch] > 0 and self.count[ch + 1] > 0, f"node {node}: empty child"
            else:
                seen[self.tri_index[s:s + c]] += 1
        assert np.all(seen == 1), "some triangle is in no leaf or in several"
        return True


def _is_closed(faces):
    """Closed and consistently oriented: each directed edge has its reverse, once."""
    return bool(_is_closed_kernel(faces, int(faces.max()) + 1))
