"""The sub-distance step of GJK (collision.simplex, signed volumes) against the exact QP.

Reference: ``tests._reference.closest_in_hull``, the exact active-set QP of the
closest point of a simplex's hull to the origin, on random triangles and
tetrahedra around the origin (generic, flat, the origin on a face, coincident
corners).

Tolerances: 1e-9 of the coordinates' size for the distance, plus 1e-15 times
the size over the sine of the thinnest face's smallest angle (the digits a
projection on a thin triangle's plane loses); the closest point to 1e-7 of
the size; weights >= 0 summing to 1 within 1e-12.
"""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from obbcollide.simplex import s1d, s2d, s3d
from tests._reference import closest_in_hull, point, triangle


def thinness(pts):
    """1 / sine of the smallest angle of the simplex's faces (1 for a point or a segment): the
    projection on a thin triangle's plane loses that many digits (see s2d's docstring)."""
    worst = 1.0
    for i in range(len(pts)):
        for j in range(i + 1, len(pts)):
            for k in range(j + 1, len(pts)):
                e1, e2 = pts[j] - pts[i], pts[k] - pts[i]
                longest = max(e1 @ e1, e2 @ e2, (pts[k] - pts[j]) @ (pts[k] - pts[j]))
                area2 = np.linalg.norm(np.cross(e1, e2))
                if longest > 0 and area2 > 0:
                    worst = max(worst, longest / area2)
    return worst


def check_subdistance(pts, w, lam):
    pts = np.asarray(pts, float)
    scale = max(1.0, float(np.abs(pts).max()))
    ref, dist, _ = closest_in_hull(np.zeros(3), pts)
    # 1e-9 of the size, and eps over the sine of the thinnest face's smallest angle
    tol = 1e-9 * scale + 1e-15 * scale * thinness(pts)
    assert abs(np.linalg.norm(w) - dist) <= tol, (np.linalg.norm(w), dist)
    assert np.linalg.norm(np.asarray(w) - ref) <= 1e-7 * scale  # the closest point is unique
    lam = np.asarray(lam)
    assert np.all(lam >= 0.0) and abs(lam.sum() - 1.0) <= 1e-12
    np.testing.assert_allclose(lam @ pts, w, atol=1e-7 * scale)


@settings(deadline=None, max_examples=300)
@given(triangle(), point())
def test_s1d_s2d_equal_exact_qp(tri, shift):
    a, b, c = (np.asarray(x) - shift for x in tri)  # the origin anywhere around the triangle
    w, la, lb, lc = s2d(tuple(a), tuple(b), tuple(c))
    check_subdistance([a, b, c], w, [la, lb, lc])
    w, la, lb = s1d(tuple(a), tuple(b))
    check_subdistance([a, b], w, [la, lb])


@settings(deadline=None, max_examples=300)
@given(triangle(), point(), st.sampled_from(["generic", "flat", "on-face", "coincident"]))
def test_s3d_equals_exact_qp(tri, shift, kind):
    a, b, c = (np.asarray(x) for x in tri)
    if kind == "generic":
        d = shift * 0.7 + 0.3
    elif kind == "flat":
        d = a + 0.5 * (b - a) + 0.25 * (c - a)
    elif kind == "on-face":
        d = shift
        shift = (a + b + c) / 3.0  # the origin on face abc
    else:
        d = b.copy()
    pts = [x - shift for x in (a, b, c, d)]
    w, *lam = s3d(*(tuple(x) for x in pts))
    check_subdistance(pts, w, lam)
