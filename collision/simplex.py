"""Closest point of a simplex (1 to 4 points) to the origin: GJK's sub-distance step.

The signed-volumes method of Montanari, Petrinic and Barbieri, "Improving the
GJK algorithm for faster and more reliable distance queries between convex
objects", ACM TOG 36(3), 2017: the origin's barycentric coordinates from
signed areas / volumes of the simplex's projections, the smallest sub-simplex
that holds the closest point chosen from their signs. It replaces Johnson's
determinant recursion (RTCD 9.5.2) and never needs Johnson's back-up procedure.
:func:`collision.gjk.gjk_kernel` calls :func:`subdistance` and :func:`compact`
once per iteration; :mod:`collision.epa` uses :func:`s1d` and :func:`s2d` on
flat simplices.

Points are tuples (or rows of a (4, 3) array for :func:`subdistance`), in
any one frame (GJK's: A's model frame).
"""

import math

import numpy as np

from . import _vec as v
from ._jit import njit

__all__ = ["s1d", "s2d", "s3d", "subdistance", "compact"]

# A triangle of the simplex whose sine of smallest angle (|n| / L^2) is below
# this is checked against its edges too: its plane projection loses digits.
_THIN = 1e-4


# A tetrahedron whose volume (times 6) is below this times the cube of its
# longest edge is flat: its signed volumes are round-off, so the faces decide.
_FLAT_TET = 1e-12


@njit
def s1d(a, b):
    """Closest point to the origin on the segment ``ab``: ``(v, la, lb)``, ``v = la a + lb b``.

    Montanari et al. 2017, S1D, written as the clamped projection parameter
    (RTCD 5.1.2). A zero-length segment is its first point.
    """
    t = v.sub(b, a)
    tt = v.dot(t, t)
    if tt <= 0.0:
        return a, 1.0, 0.0
    s = -v.dot(a, t) / tt
    if s <= 0.0:
        return a, 1.0, 0.0
    if s >= 1.0:
        return b, 0.0, 1.0
    return v.madd(a, t, s), 1.0 - s, s


@njit(inline="always")
def _base_weights(p, i, j, k, lk):
    """Weights of ``p = li i + lj j + lk k`` given ``lk``: ``lj`` by projection on the edge ``ij``."""
    e = v.sub(j, i)
    lj = v.dot(v.madd(v.sub(p, i), v.sub(k, i), -lk), e) / v.dot(e, e)
    lj = min(max(lj, 0.0), 1.0 - lk)
    return max(1.0 - lj - lk, 0.0), lj, lk  # (1 - lj) - lk can round to -1e-33


@njit
def s2d(a, b, c):
    """Closest point to the origin on the triangle ``abc``: ``(v, la, lb, lc)``.

    Montanari et al. 2017, S2D: project the origin on the triangle's plane,
    take its barycentric coordinates as signed areas (here measured along the
    normal instead of in the best-aligned coordinate plane: same signs, same
    ratios); inside, the projection is the answer, otherwise the closest of
    the edges opposite a non-positive coordinate (S1D). A collinear triangle
    (no normal) tests all three edges; a thin one (sine of its smallest angle
    below ``_THIN``) tests them as well and keeps the closest answer, an edge
    when it is as close to within 1e-12 of the size: the thin triangle's
    normal, hence its projection and weights, have lost digits.
    """
    ab = v.sub(b, a)
    ac = v.sub(c, a)
    bc = v.sub(c, b)
    n = v.cross(ab, ac)
    nn = v.dot(n, n)
    ll = max(v.dot(ab, ab), v.dot(ac, ac), v.dot(bc, bc))
    test_a = True
    test_b = True
    test_c = True
    best = np.inf
    rv = a
    ra, rb, rc = 1.0, 0.0, 0.0
    if nn > 0.0:
        p = v.scale(n, v.dot(n, a) / nn)
        la = v.dot(n, v.cross(v.sub(b, p), v.sub(c, p)))
        lb = v.dot(n, v.cross(v.sub(c, p), v.sub(a, p)))
        lc = v.dot(n, v.cross(v.sub(a, p), v.sub(b, p)))
        if la > 0.0 and lb > 0.0 and lc > 0.0:
            s = la + lb + lc
            # Weights: the apex's from the areas, the base's by projection along
            # the longest edge, so that they reproduce p even for a needle.
            lab = v.dot(ab, ab)
            lbc = v.dot(bc, bc)
            if lab >= lbc and lab >= v.dot(ac, ac):
                ra, rb, rc = _base_weights(p, a, b, c, lc / s)
            elif lbc >= lab and lbc >= v.dot(ac, ac):
                rb, rc, ra = _base_weights(p, b, c, a, la / s)
            else:
                rc, ra, rb = _base_weights(p, c, a, b, lb / s)
            rv = p
            if nn >= _THIN * _THIN * ll * ll:
                return rv, ra, rb, rc
            # Thin: an edge within round-off of the projection wins (its weights
            # are well conditioned, the projection's are not).
            best = v.norm(p) + 1e-12 * math.sqrt(ll)
            best = best * best
        else:
            test_a = la <= 0.0
            test_b = lb <= 0.0
            test_c = lc <= 0.0
    if test_c:
        w, x, y = s1d(a, b)
        d2 = v.dot(w, w)
        if d2 < best:
            best, rv, ra, rb, rc = d2, w, x, y, 0.0
    if test_a:
        w, x, y = s1d(b, c)
        d2 = v.dot(w, w)
        if d2 < best:
            best, rv, ra, rb, rc = d2, w, 0.0, x, y
    if test_b:
        w, x, y = s1d(c, a)
        d2 = v.dot(w, w)
        if d2 < best:
            best, rv, ra, rb, rc = d2, w, y, 0.0, x
    return rv, ra, rb, rc


@njit(inline="always")
def _det3(a, b, c):
    return v.dot(a, v.cross(b, c))


@njit
def s3d(a, b, c, d):
    """Closest point to the origin in the tetrahedron ``abcd``: ``(v, la, lb, lc, ld)``.

    Montanari et al. 2017, S3D: the barycentric coordinates of the origin are
    the signed volumes of the tetrahedra with the origin in place of each
    corner over the whole volume. All of the volume's sign: the origin is
    inside (``v = 0``). Otherwise the closest of the faces opposite a corner
    whose volume has not that sign (S2D). A flat tetrahedron (volume below
    ``_FLAT_TET`` times the cube of its longest edge) tests all four faces.
    """
    z = (0.0, 0.0, 0.0)
    ca = _det3(b, c, d)
    cb = -_det3(a, v.sub(c, a), v.sub(d, a))
    cc = _det3(v.sub(b, a), v.scale(a, -1.0), v.sub(d, a))
    cd = _det3(v.sub(b, a), v.sub(c, a), v.scale(a, -1.0))
    det = _det3(v.sub(b, a), v.sub(c, a), v.sub(d, a))
    ll = max(v.norm2(v.sub(b, a)), v.norm2(v.sub(c, a)), v.norm2(v.sub(d, a)),
             v.norm2(v.sub(c, b)), v.norm2(v.sub(d, b)), v.norm2(v.sub(d, c)))
    if abs(det) <= _FLAT_TET * ll * math.sqrt(ll):
        det = 0.0  # flat: the signs are round-off; the faces cover the tetrahedron
    inside = det != 0.0 and ca * det > 0.0 and cb * det > 0.0 and cc * det > 0.0 and cd * det > 0.0
    best = np.inf
    rv = a
    ra, rb, rc, rd = 1.0, 0.0, 0.0, 0.0
    if inside:
        s = ca + cb + cc + cd
        ra, rb, rc, rd = ca / s, cb / s, cc / s, cd / s
        res = v.add(v.add(v.scale(a, ra), v.scale(b, rb)), v.add(v.scale(c, rc), v.scale(d, rd)))
        if v.norm2(res) <= 1e-24 * ll:
            return z, ra, rb, rc, rd
        # Thin tetrahedron: its weights miss the origin by |res|. A face closer
        # to the origin than that is the better answer (its weights reproduce
        # its point); otherwise keep v = 0 with these weights.
        rv = z
        best = v.norm2(res)
        det = 0.0
    if ca * det <= 0.0:
        w, x, y, q = s2d(b, c, d)
        d2 = v.dot(w, w)
        if d2 < best:
            best, rv, ra, rb, rc, rd = d2, w, 0.0, x, y, q
    if cb * det <= 0.0:
        w, x, y, q = s2d(a, c, d)
        d2 = v.dot(w, w)
        if d2 < best:
            best, rv, ra, rb, rc, rd = d2, w, x, 0.0, y, q
    if cc * det <= 0.0:
        w, x, y, q = s2d(a, b, d)
        d2 = v.dot(w, w)
        if d2 < best:
            best, rv, ra, rb, rc, rd = d2, w, x, y, 0.0, q
    if cd * det <= 0.0:
        w, x, y, q = s2d(a, b, c)
        d2 = v.dot(w, w)
        if d2 < best:
            best, rv, ra, rb, rc, rd = d2, w, x, y, q, 0.0
    return rv, ra, rb, rc, rd


@njit
def subdistance(sw, n, lam):
    """Closest point to the origin of the simplex ``sw[:n]`` (n = 1..4).

    Writes the barycentric weights into ``lam[:n]`` (0 for a point that is not
    needed) and returns the closest point ``v`` as a tuple.
    """
    a = v.row(sw, 0)
    if n == 1:
        lam[0] = 1.0
        return a
    b = v.row(sw, 1)
    if n == 2:
        w, lam[0], lam[1] = s1d(a, b)
        return w
    c = v.row(sw, 2)
    if n == 3:
        w, lam[0], lam[1], lam[2] = s2d(a, b, c)
        return w
    w, lam[0], lam[1], lam[2], lam[3] = s3d(a, b, c, v.row(sw, 3))
    return w


@njit
def compact(sw, sa, sb, si, lam, n):
    """Drop the simplex points whose weight is 0; returns the new size."""
    k = 0
    for i in range(n):
        if lam[i] > 0.0:
            if k != i:
                for j in range(3):
                    sw[k, j] = sw[i, j]
                    sa[k, j] = sa[i, j]
                    sb[k, j] = sb[i, j]
                si[k, 0] = si[i, 0]
                si[k, 1] = si[i, 1]
                lam[k] = lam[i]
            k += 1
    return k
