"""record_collide: the recording twin of collide's OBB-tree traversal, against collide itself.

The recording must make exactly the box tests and triangle tests the real kernel makes and find
the same intersecting triangle pairs (hypothesis over random poses, leaf sizes 1 and 4), and each
recorded axis must be one that really separates the two node boxes (checked in the world frame
with the 15 axes written out, a margin for rounding).
"""

import numpy as np
import pytest
import trimesh
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from obbcollide import OBBTree, collide
from obbcollide.traversal_record import AXIS_NAMES, axis_name, record_collide


def quat_pose(q, t):
    q = np.asarray(q, float) / np.linalg.norm(q)
    w, x, y, z = q
    r = np.array([[1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
                  [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
                  [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)]])
    p = np.eye(4)
    p[:3, :3] = r
    p[:3, 3] = t
    return p


quats = arrays(np.float64, 4, elements=st.floats(-1.0, 1.0)).filter(lambda q: np.linalg.norm(q) > 0.1)
offsets = arrays(np.float64, 3, elements=st.floats(-1.8, 1.8))

TREES = {}


def tree(name, leaf):
    key = (name, leaf)
    if key not in TREES:
        mesh = {"sphere": lambda: trimesh.creation.icosphere(subdivisions=2),
                "torus": lambda: trimesh.creation.torus(0.7, 0.25, major_sections=24, minor_sections=10),
                "box": lambda: trimesh.creation.box((1.2, 0.6, 0.9))}[name]()
        TREES[key] = OBBTree(mesh.vertices, mesh.faces, leaf_size=leaf)
    return TREES[key]


def world_box(t, node, pose):
    c = pose[:3, :3] @ t.centers[node] + pose[:3, 3]
    axes = t.axes[node] @ pose[:3, :3].T  # rows
    return c, axes, t.half_extents[node]


def gap_on(axis, a, b):
    """Gap of two world boxes' projections on a unit axis (> 0 apart)."""
    (ca, aa, ha), (cb, ab, hb) = a, b
    ra = np.sum(ha * np.abs(aa @ axis))
    rb = np.sum(hb * np.abs(ab @ axis))
    return abs((cb - ca) @ axis) - ra - rb


def axis_vector(k, aa, ab):
    if k < 3:
        return aa[k]
    if k < 6:
        return ab[k - 3]
    i, j = divmod(k - 6, 3)
    c = np.cross(aa[i], ab[j])
    return c / np.linalg.norm(c)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(qa=quats, qb=quats, off=offsets, names=st.sampled_from([("sphere", "torus"), ("torus", "torus"),
                                                               ("box", "sphere")]),
       leaf=st.sampled_from([1, 4]))
def test_record_equals_collide(qa, qb, off, names, leaf):
    ta, tb = tree(names[0], leaf), tree(names[1], leaf)
    pa, pb = quat_pose(qa, [0.0, 0.0, 0.0]), quat_pose(qb, off)
    real = collide(ta, pa, tb, pb, containment=False)
    rec = record_collide(ta, pa, tb, pb)
    assert rec.box_tests == real.box_tests
    assert rec.triangle_tests == real.tri_tests
    assert rec.hits == len(real.pairs)
    # Shapes and invariants of the record.
    k = rec.box_tests
    assert rec.pairs.shape == (k, 2) and rec.depth.shape == rec.axis.shape == (k,)
    assert rec.depth[0] == 0 and tuple(rec.pairs[0]) == (0, 0)
    assert np.all((rec.axis >= -1) & (rec.axis < 15))
    assert np.all(rec.tri_tests[~rec.overlap] == 0)
    visited, pruned = rec.per_depth()
    assert visited.sum() + pruned.sum() == k
    assert rec.axis_counts().sum() == pruned.sum()
    # Every child pair is one split deeper than a visited parent pair.
    for d in range(1, len(visited)):
        assert visited[d - 1] > 0 or visited[d] + pruned[d] == 0
    # A recorded axis really separates the two boxes (world frame, a margin for rounding).
    for row in np.flatnonzero(~rec.overlap)[:200]:
        a = world_box(ta, rec.pairs[row, 0], pa)
        b = world_box(tb, rec.pairs[row, 1], pb)
        axis = axis_vector(int(rec.axis[row]), a[1], b[1])
        assert gap_on(axis, a, b) > -1e-9


def test_disjoint_roots_record_one_test():
    t = tree("sphere", 1)
    pb = quat_pose([1, 0, 0, 0], [5.0, 0.0, 0.0])
    rec = record_collide(t, np.eye(4), t, pb)
    assert rec.box_tests == 1 == collide(t, np.eye(4), t, pb).box_tests
    assert rec.axis[0] == 0  # A's first face normal: the offset is along x
    assert rec.hits == 0 and rec.triangle_tests == 0


def test_axis_names():
    assert len(AXIS_NAMES) == 15
    assert "face normal A1" in axis_name(1) and "face normal B2" in axis_name(5)
    assert "edge A1 x edge B2" in axis_name(6 + 3 * 1 + 2)
    assert "overlap" in axis_name(-1)


def test_bad_input():
    t = tree("sphere", 1)
    with pytest.raises(ValueError, match="pose_b"):
        record_collide(t, np.eye(4), t, np.full((4, 4), np.nan))
    with pytest.raises(ValueError, match="tree_a"):
        record_collide("mesh", np.eye(4), t, np.eye(4))
