"""reduce_contacts: the four points kept of a contact patch.

The clipped patches of collide_hull_hull against a brute-force search of the
largest quad are in tests/collision/test_manifold.py, the half-space patches in
tests/collision/test_halfspace_batch.py; here the reduction on its own, on
patches whose answer is known by construction.
"""

import numpy as np
import pytest

from obbcollide.contact_reduce import reduce_contacts


@pytest.mark.parametrize("sides", [16, 32, 64])
def test_a_cylinder_lying_on_a_plane_keeps_its_touching_points_at_both_ends(sides):
    # The points of a many-sided cylinder (radius 0.1, length 0.6, axis along z) lying on the
    # plane y = 0, within a 1 cm margin: its lowest ring vertex touches at both ends (depth 0.5 mm),
    # the others curve up its side (speculative, depth < 0). The patch must rest on the touching
    # line: both ends' touching points kept, not traded for points up the side that span wider.
    angles = 2 * np.pi * np.arange(sides) / sides - np.pi / 2  # the lowest vertex at angle -pi/2
    ring = np.stack([0.1 * np.cos(angles), 0.1 + 0.1 * np.sin(angles) - 0.0005], axis=1)
    near = ring[ring[:, 1] < 0.01]
    points = np.concatenate([np.c_[near, np.full(len(near), z)] for z in (-0.3, 0.3)])
    depths = -points[:, 1]
    keep = reduce_contacts(points, depths, np.array([0.0, -1.0, 0.0]), tol=1e-6)
    kept = points[keep]
    touching = depths[keep] >= 0
    assert touching[0]  # the deepest first
    ends = {round(z, 6) for z in kept[touching][:, 2]}
    assert ends == {-0.3, 0.3}, f"touching points kept at z = {sorted(ends)} only"
    # and, with every point touching, the widest quad is still chosen (nothing else changes)
    flat = np.array([[0, 0, 0], [1, 0, 0], [1, 0, 1], [0, 0, 1], [0.5, 0, 0.5], [0.2, 0, 0.1]], float)
    got = reduce_contacts(flat, np.full(6, 0.001), np.array([0.0, -1.0, 0.0]), tol=1e-6)
    assert sorted(got) == [0, 1, 2, 3]
