"""Sphere pairs in one compiled call (collision/round_batch.py) against collide_shapes, one pair at a time."""

import numpy as np
import pytest

from obbcollide.halfspace_batch import CoreTable
from obbcollide.manifold import KIND_NAMES
from obbcollide.narrow_phase import collide_shapes
from obbcollide.round_batch import collide_sphere_pairs
from obbcollide.shapes import Capsule, Hull, Sphere, box_hull

from .._reference import random_rotation


def pose(rng, spread):
    p = np.eye(4)
    p[:3, :3] = random_rotation(rng)
    p[:3, 3] = rng.normal(size=3) * spread
    return p


def shapes(rng):
    spheres = [Sphere(0.3), Sphere(0.1, (0.05, 0.0, 0.02))]
    others = [Sphere(0.2), Capsule(0.15, 0.4), box_hull((0.3, 0.2, 0.25)),
              Hull.from_points(rng.normal(size=(25, 3)) * 0.3)]
    return spheres, others


@pytest.mark.parametrize("margin", [0.0, 0.05, 0.5])
@pytest.mark.parametrize("spread", [0.15, 0.3, 0.6])
def test_batch_equals_collide_shapes(margin, spread):
    """Same count, kind, depth, normal and points as the one-pair narrow phase (GJK / EPA or the
    closed form), on 600 random pairs from deep to apart; equal to 1e-9 (GJK's tolerance)."""
    rng = np.random.default_rng(int(100 * spread + 10 * margin))
    spheres, others = shapes(rng)
    table = CoreTable(spheres + others)
    cases = []
    for k in range(600):
        s, o = spheres[k % 2], others[(k // 2) % 4]
        cases.append((s, pose(rng, spread), o, pose(rng, spread)))
    out = collide_sphere_pairs(table, [table.add(c[0]) for c in cases], [c[1] for c in cases],
                               [table.add(c[2]) for c in cases], [c[3] for c in cases],
                               [isinstance(c[2], Hull) for c in cases], margin)
    hits = 0
    for k, (s, pa, o, pb) in enumerate(cases):
        ref = collide_shapes(s, pa, o, pb, margin)
        c = int(out.count[k])
        assert c == len(ref.depths), k
        assert KIND_NAMES[out.kind[k]] == ref.kind
        if c:
            hits += 1
            assert out.ids[k, 0] == ref.ids[0] == 0
            np.testing.assert_allclose(out.depths[k, :1], ref.depths, atol=1e-9)
            np.testing.assert_allclose(out.normal[k], ref.normal, atol=1e-7)
            np.testing.assert_allclose(out.points_a[k, :1], ref.points_a, atol=1e-9)
            np.testing.assert_allclose(out.points_b[k, :1], ref.points_b, atol=1e-9)
            # the convention: points_a - points_b = depth * normal
            np.testing.assert_allclose(out.points_a[k, 0] - out.points_b[k, 0], out.depths[k, 0] * out.normal[k],
                                       atol=1e-9)
        else:
            assert out.sat_depth[k] < -margin and not out.normal[k].any()
    assert hits > 30  # (and at the larger spreads with small margins, many apart)


def test_known_answers():
    table = CoreTable()
    a, b = Sphere(0.5), Sphere(0.25)
    ia, ib = table.add(a), table.add(b)
    pa, pb = np.eye(4), np.eye(4)
    pb[:3, 3] = (0.0, 0.0, 0.7)  # overlap 0.05 along +z
    out = collide_sphere_pairs(table, [ia, ia], [pa, pa], [ib, ib], [pb, pa], [False, False], 0.0)
    np.testing.assert_allclose(out.depths[0, 0], 0.05, atol=1e-15)
    np.testing.assert_allclose(out.normal[0], (0, 0, 1), atol=1e-15)
    np.testing.assert_allclose(out.points_a[0, 0], (0, 0, 0.5), atol=1e-15)
    # concentric: the normal +y, as collide_sphere_sphere
    np.testing.assert_allclose(out.normal[1], (0, 1, 0))
    assert out.depths[1, 0] == pytest.approx(0.75)
    box = table.add(box_hull((1.0, 1.0, 1.0)))
    inside = np.eye(4)
    inside[:3, 3] = (0.0, 0.8, 0.0)  # the ball's centre 0.2 under the box's top face
    out = collide_sphere_pairs(table, [ia], [inside], [box], [np.eye(4)], [True], 0.0)
    assert out.count[0] == 1 and KIND_NAMES[out.kind[0]] == "face_b"
    np.testing.assert_allclose(out.depths[0, 0], 0.7, atol=1e-9)  # 0.2 + radius 0.5
    np.testing.assert_allclose(out.normal[0], (0, -1, 0), atol=1e-9)  # from the ball into the box


def test_bad_input_is_named():
    table = CoreTable([Sphere(0.5), box_hull((1.0, 1.0, 1.0))])
    good = dict(table=table, sphere_ids=[0], poses_a=[np.eye(4)], shape_ids=[1], poses_b=[np.eye(4)], hull=[True],
                margins=0.0)
    for change, word in ((dict(table=None), "table"), (dict(sphere_ids=[1]), "sphere_ids"),
                         (dict(sphere_ids=[5]), "sphere_ids"), (dict(shape_ids=[0.5]), "shape_ids"),
                         (dict(shape_ids=[0, 1]), "shape_ids"), (dict(poses_a=[np.full((4, 4), np.nan)]), "poses_a"),
                         (dict(poses_b=[np.diag([2.0, 1, 1, 1])]), "poses_b"), (dict(margins=-1.0), "margins"),
                         (dict(margins=[0.1, 0.2]), "margins")):
        with pytest.raises(ValueError, match=word):
            collide_sphere_pairs(**{**good, **change})
    empty = collide_sphere_pairs(table, [], np.zeros((0, 4, 4)), [], np.zeros((0, 4, 4)), [], 0.0)
    assert len(empty) == 0


def test_unchecked_call_gives_the_same_rows_and_still_rejects_a_bad_pose():
    """``check=False`` skips the argument checks only: the same rows as the checked call, and a
    non-finite pose is still named."""
    rng = np.random.default_rng(5)
    spheres, others = shapes(rng)
    table = CoreTable(spheres + others)
    k = 200
    sid = np.array([table.add(spheres[i % 2]) for i in range(k)], np.int64)
    oid = np.array([table.add(others[(i // 2) % 4]) for i in range(k)], np.int64)
    pa = np.array([pose(rng, 0.3) for _ in range(k)])
    pb = np.array([pose(rng, 0.3) for _ in range(k)])
    hull = np.array([isinstance(others[(i // 2) % 4], Hull) for i in range(k)])
    margins = np.full(k, 0.05)
    a = collide_sphere_pairs(table, sid, pa, oid, pb, hull, margins)
    b = collide_sphere_pairs(table, sid, pa, oid, pb, hull, margins, check=False)
    for f in ("count", "normal", "points_a", "points_b", "depths", "ids", "kind", "sat_depth"):
        assert np.array_equal(getattr(a, f), getattr(b, f)), f
    pb[9, 0, 3] = np.nan
    with pytest.raises(ValueError, match=r"poses_b\[9\]"):
        collide_sphere_pairs(table, sid, pa, oid, pb, hull, margins, check=False)
