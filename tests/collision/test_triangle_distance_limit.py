"""The limited triangle-pair distance of the mesh distance search equals the full one.

``closest_pt_triangle_triangle_below_t`` skips the closest-point sub-queries
that a triangle's plane keeps farther than the best so far; it must return
bit for bit what ``closest_pt_triangle_triangle_t`` returns whenever that
distance is below the limit, and a distance at or above the limit otherwise.
Cases: random pairs at many scales and distances, near-parallel and coplanar
pairs, slivers, degenerate triangles (segments, points), shared vertices.
"""

import numpy as np
import pytest

from obbcollide.triangle import closest_pt_triangle_triangle_below_t, closest_pt_triangle_triangle_t, plane_gap2_t


def _t(p):
    return (float(p[0]), float(p[1]), float(p[2]))


def _cases(seed):
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(300):  # random, apart by a random offset
        a = rng.normal(size=(3, 3))
        b = rng.normal(size=(3, 3)) + rng.normal(size=3) * rng.uniform(0, 3)
        out.append((a, b))
    for _ in range(150):  # near-parallel planes, small gaps (a thin-shell distance query)
        a = rng.normal(size=(3, 3)) * [1, 1, 0]
        b = rng.normal(size=(3, 3)) * [1, 1, 0] + [0, 0, 10.0 ** rng.uniform(-9, -1)]
        b[:, 2] += rng.normal(size=3) * 10.0 ** rng.uniform(-12, -3)
        rot = np.linalg.qr(rng.normal(size=(3, 3)))[0]
        out.append((a @ rot.T, b @ rot.T))
    for _ in range(100):  # slivers: a corner near the opposite edge
        a = rng.normal(size=(3, 3))
        a[2] = a[0] + (a[1] - a[0]) * rng.uniform(0, 1) + rng.normal(size=3) * 10.0 ** rng.uniform(-12, -2)
        b = rng.normal(size=(3, 3)) + rng.normal(size=3)
        out.append((a, b) if rng.uniform() < 0.5 else (b, a))
    for _ in range(60):  # degenerate: a segment or a point
        a = rng.normal(size=(3, 3))
        b = rng.normal(size=(3, 3)) + rng.normal(size=3)
        b[2] = b[1] if rng.uniform() < 0.5 else b[0]
        if rng.uniform() < 0.3:
            b[1] = b[0]
        out.append((a, b))
    for _ in range(60):  # shared vertex, coplanar neighbours
        a = rng.normal(size=(3, 3)) * [1, 1, 0]
        b = rng.normal(size=(3, 3)) * [1, 1, 0]
        b[0] = a[1]
        out.append((a, b))
    for _ in range(100):  # far apart and large, tiny and close
        s = 10.0 ** rng.uniform(-6, 6)
        a = rng.normal(size=(3, 3)) * s
        b = (rng.normal(size=(3, 3)) + rng.normal(size=3) * 2) * s
        out.append((a + 1e3, b + 1e3))
    return out


@pytest.mark.parametrize("seed", [1, 2])
def test_below_limit_equals_the_full_distance(seed):
    checked = skipped = 0
    for a, b in _cases(seed):
        a0, a1, a2 = map(_t, a)
        b0, b1, b2 = map(_t, b)
        x, y, d2 = closest_pt_triangle_triangle_t(a0, a1, a2, b0, b1, b2)
        gap2 = plane_gap2_t(a0, a1, a2, b0, b1, b2)
        limits = [np.inf, d2 * 4.0 + 1e-300, d2 * (1 + 1e-9), np.nextafter(d2, np.inf), d2, d2 * 0.999, d2 * 0.25]
        for lim in limits:
            if not gap2 < lim:
                continue  # the search prunes this pair before asking
            p, q, e2 = closest_pt_triangle_triangle_below_t(a0, a1, a2, b0, b1, b2, gap2, lim)
            if d2 < lim:
                assert (p, q, e2) == (x, y, d2), (a.tolist(), b.tolist(), lim)
                checked += 1
            else:
                assert e2 >= lim, (a.tolist(), b.tolist(), lim, e2, d2)
                skipped += 1
    assert checked > 1500 and skipped > 300, (checked, skipped)
