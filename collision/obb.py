"""Oriented bounding boxes: fitting by covariance, and the 15-axis OBB-OBB test.

The fit follows the thesis (seed 004, ch. 3.2) and Gottschalk's OBBTree: the box
axes are the eigenvectors of the covariance matrix of the points, the extents
come from the minimum and maximum projections on those axes. The overlap test
is Ericson's RTCD 4.4.1 (TestOBBOBB), the separating-axis test on the 15
candidate axes (seed 001).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ._jit import njit
from ._validate import as_array, as_number, check_type

__all__ = ["OBB", "test_obb_obb", "covariance_frame"]

# RTCD 4.4.1 adds an epsilon to every |R_ij|: when two edges are near parallel
# their cross product is near zero, and the rounding in R could make an
# overlapping pair look separated on that axis. The book's value suits single
# precision; in double the rounding in R is ~1e-16, so 1e-12 keeps the test
# safe with a margin of 10^4 while staying tight: on the cross axis of two
# edges at angle theta the test errs towards overlap by about
# eps * extent / sin(theta) (2e-7 of the extent at theta = 1e-5).
OBB_EPSILON = 1e-12


def covariance_frame(points, weights=None, cov=None):
    """Right-handed principal axes of a point set.

    Parameters
    ----------
    points : (n, 3) float64
        Used for the mean and covariance unless ``cov`` is given.
    weights : (n,) float64, optional
        Non-negative weights of the points.
    cov : (3, 3) float64, optional
        A covariance matrix computed elsewhere (e.g. over triangles).

    Returns
    -------
    axes : (3, 3) float64
        Eigenvectors as rows, by decreasing eigenvalue, ``det = +1``.
    """
    if cov is None:
        w = np.ones(len(points)) if weights is None else weights
        mean = (w[:, None] * points).sum(0) / w.sum()
        d = points - mean
        cov = (w[:, None] * d).T @ d / w.sum()
    _, vecs = np.linalg.eigh(cov)  # ascending eigenvalues, orthonormal columns
    axes = vecs[:, ::-1].T.copy()
    if np.linalg.det(axes) < 0.0:
        axes[2] = -axes[2]
    return axes


@dataclass(frozen=True)
class OBB:
    """An oriented box ``{center + axes.T @ x : |x_i| <= half_extents_i}``.

    Attributes
    ----------
    center : (3,) float64
        Centre in world coordinates.
    axes : (3, 3) float64
        The box's local axes as **rows** (a rotation matrix, right-handed).
    half_extents : (3,) float64
        Half side lengths along each axis, >= 0.
    """

    center: NDArray[np.float64]
    axes: NDArray[np.float64]
    half_extents: NDArray[np.float64]

    def __post_init__(self):
        c = as_array(self.center, "center", (3,))
        a = as_array(self.axes, "axes", (3, 3))
        h = as_array(self.half_extents, "half_extents", (3,))
        if c.shape != (3,) or a.shape != (3, 3) or h.shape != (3,):
            raise ValueError("OBB: center (3,), axes (3, 3), half_extents (3,) expected")
        if np.any(h < 0.0):
            raise ValueError("half_extents: must be >= 0")
        if not np.allclose(a @ a.T, np.eye(3), atol=1e-9):
            raise ValueError("axes: rows must be orthonormal")
        object.__setattr__(self, "center", c)
        object.__setattr__(self, "axes", a)
        object.__setattr__(self, "half_extents", h)

    @classmethod
    def from_points(cls, points: ArrayLike) -> OBB:
        """Fit a box to a point cloud by the covariance of its points.

        Mean and covariance of the points, eigenvectors of the covariance as
        axes (right-handed: the third axis is flipped when the determinant is
        negative), extents from the min and max projections. As the DiTO
        authors warn, plain vertex covariance follows the tessellation: a
        densely meshed region pulls the axes towards it.

        Parameters
        ----------
        points : (n, 3) float64, n >= 1

        Returns
        -------
        OBB
        """
        pts = as_array(points, "points", (3,))
        if pts.ndim != 2 or len(pts) == 0:
            raise ValueError(f"points: expected a non-empty (n, 3) array, got {pts.shape}")
        return cls._fit(pts, covariance_frame(pts))

    @classmethod
    def from_triangles(cls, triangles: ArrayLike) -> OBB:
        """Fit a box by the area-weighted covariance of a triangle set (RAPID).

        Gottschalk's continuous formulation: each triangle contributes its
        area times the second moment of a uniform density over it, so the fit
        does not depend on how finely a surface is tessellated. Zero-area
        triangles contribute nothing; if all have zero area the vertex
        covariance is used.

        Parameters
        ----------
        triangles : (m, 3, 3) float64
            ``triangles[i, k]`` is corner ``k`` of triangle ``i``.

        Returns
        -------
        OBB
        """
        tri = as_array(triangles, "triangles", (3, 3))
        if tri.ndim != 3 or len(tri) == 0:
            raise ValueError(f"triangles: expected a non-empty (m, 3, 3) array, got {tri.shape}")
        pts = tri.reshape(-1, 3)
        cov = triangle_covariance(tri)
        axes = covariance_frame(pts) if cov is None else covariance_frame(None, cov=cov)
        return cls._fit(pts, axes)

    @classmethod
    def _fit(cls, pts, axes):
        proj = pts @ axes.T
        lo = proj.min(0)
        hi = proj.max(0)
        center = axes.T @ ((lo + hi) * 0.5)
        return cls(center, axes, (hi - lo) * 0.5)

    @property
    def corners(self) -> NDArray[np.float64]:
        """(8, 3) float64: the box's corners."""
        signs = np.array([[i, j, k] for i in (-1, 1) for j in (-1, 1) for k in (-1, 1)], float)
        return self.center + (signs * self.half_extents) @ self.axes

    @property
    def volume(self) -> float:
        return float(8.0 * np.prod(self.half_extents))

    def contains(self, points: ArrayLike, tol: float = 1e-9) -> NDArray[np.bool_] | np.bool_:
        """(n,) bool: which points lie in the box, up to ``tol``."""
        pts = as_array(points, "points", (3,))
        local = (pts - self.center) @ self.axes.T
        return np.all(np.abs(local) <= self.half_extents + tol, axis=-1)


def triangle_covariance(tri):
    """Area-weighted covariance of a triangle set, or ``None`` if its area is zero.

    For a triangle with corners ``p, q, r`` and area ``A``, the second moment
    of a uniform density is ``A/12 (9 m m^T + p p^T + q q^T + r r^T)`` with
    ``m`` the centroid (Gottschalk 2000, eq. for the continuous OBB fit).

    Parameters
    ----------
    tri : (m, 3, 3) float64

    Returns
    -------
    cov : (3, 3) float64 or None
    """
    area = 0.5 * np.linalg.norm(np.cross(tri[:, 1] - tri[:, 0], tri[:, 2] - tri[:, 0]), axis=1)
    total = area.sum()
    if not total > 0.0:
        return None
    m = tri.mean(axis=1)
    mean = (area[:, None] * m).sum(0) / total
    second = np.einsum("i,ij,ik->jk", area, m, m) * 9.0
    second += np.einsum("i,ivj,ivk->jk", area, tri, tri)
    second /= 12.0 * total
    return second - np.outer(mean, mean)


@njit
def test_obb_obb_kernel(ca, aa, ea, cb, ab, eb, eps):
    """RTCD 4.4.1 (TestOBBOBB) on arrays: ``ca (3,)``, ``aa (3, 3)`` axes as rows, ``ea (3,)``.

    Returns ``-1`` when the boxes overlap, else the index (0..14) of the first
    separating axis found: 0-2 the axes of A, 3-5 the axes of B, 6 + 3 i + j
    the cross product ``A_i x B_j``.
    """
    r = np.empty((3, 3))
    absr = np.empty((3, 3))
    for i in range(3):
        for j in range(3):
            r[i, j] = aa[i, 0] * ab[j, 0] + aa[i, 1] * ab[j, 1] + aa[i, 2] * ab[j, 2]
            absr[i, j] = abs(r[i, j]) + eps
    d0 = cb[0] - ca[0]
    d1 = cb[1] - ca[1]
    d2 = cb[2] - ca[2]
    t = np.empty(3)
    for i in range(3):
        t[i] = d0 * aa[i, 0] + d1 * aa[i, 1] + d2 * aa[i, 2]
    for i in range(3):  # axes of A
        rb = eb[0] * absr[i, 0] + eb[1] * absr[i, 1] + eb[2] * absr[i, 2]
        if abs(t[i]) > ea[i] + rb:
            return i
    for j in range(3):  # axes of B
        ra = ea[0] * absr[0, j] + ea[1] * absr[1, j] + ea[2] * absr[2, j]
        if abs(t[0] * r[0, j] + t[1] * r[1, j] + t[2] * r[2, j]) > ra + eb[j]:
            return 3 + j
    for i in range(3):  # A_i x B_j
        i1 = (i + 1) % 3
        i2 = (i + 2) % 3
        for j in range(3):
            j1 = (j + 1) % 3
            j2 = (j + 2) % 3
            ra = ea[i1] * absr[i2, j] + ea[i2] * absr[i1, j]
            rb = eb[j1] * absr[i, j2] + eb[j2] * absr[i, j1]
            if abs(t[i2] * r[i1, j] - t[i1] * r[i2, j]) > ra + rb:
                return 6 + 3 * i + j
    return -1


def test_obb_obb(a: OBB, b: OBB, eps: float = OBB_EPSILON, return_axis: bool = False) -> bool | tuple[bool, int]:
    """Do two oriented boxes overlap? RTCD 4.4.1, the separating-axis test.

    The 15 candidate axes are the three face normals of each box and the nine
    cross products of an edge of A with an edge of B. Following the book,
    ``eps`` is added to every ``|R_ij|`` so that near-parallel edges, whose cross
    product is almost zero, cannot report a false separation (seed 001). The
    test is therefore conservative: it may report boxes closer than about
    ``eps * extent / sin(theta)`` as overlapping, ``theta`` being the angle of
    the most nearly parallel pair of edges. Touching boxes overlap (closed boxes).

    Parameters
    ----------
    a, b : OBB
    eps : float
    return_axis : bool
        Also return the index of the separating axis (see
        :func:`test_obb_obb_kernel`), ``-1`` when overlapping.

    Returns
    -------
    overlap : bool
    """
    check_type(a, "a", OBB)
    check_type(b, "b", OBB)
    eps = as_number(eps, "eps", low=0.0, high=1.0)
    k = test_obb_obb_kernel(a.center, a.axes, a.half_extents, b.center, b.axes, b.half_extents, eps)
    return (k < 0, int(k)) if return_axis else bool(k < 0)


# Not a test function for pytest, despite the name.
test_obb_obb.__test__ = False
test_obb_obb_kernel.__test__ = False
