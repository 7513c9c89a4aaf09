"""Where a new body goes (app/scene/placement.py).

- ``place_body`` on random scenes of boxes (turned, overlapping each other),
  with a level or a tilted ground: the new body's world AABB overlaps no other
  body's, kept ``drop`` times its size away (checked on the eight corners of
  every box, not with the module's helper), is that far above every ground
  (its eight corners against the plane), is centred on the target in x and z,
  keeps its rotation, and was lifted no more than needed: its bottom is at the
  target's height, or exactly the gap above a box's top or a ground (1e-9).
- ``unit_scale``: a file 300 times the scene's typical body is read in
  millimetres, 30 times in centimetres; 13 times, no scene, a size no unit
  explains, or a small one: kept.
- ``size_note``: a body 100 times (or 1/100 of) the scene's typical size is
  called out by name; one of the same size is not; in an empty scene only
  sizes past 1000 or below 0.001 are.
- ``ground_for``: a dynamic body in a scene without a ground gets a static
  plane under every body; with a ground, or for a body that does not move, none.
"""

import numpy as np
import pytest

from app.scene.placement import DROP, ground_for, place_body, size_note, typical_size, unit_scale
from app.world.world import rotation
from tests._bodies import box_body, ground_body


def corners(box):
    """(8, 3) corners of an AABB (2, 3)."""
    lo, hi = box
    return np.array([[x, y, z] for x in (lo[0], hi[0]) for y in (lo[1], hi[1]) for z in (lo[2], hi[2])])


def separated(a, b, gap):
    """Brute force: some axis has every corner of ``a`` at least ``gap`` from every corner of ``b``."""
    ca, cb = corners(a), corners(b)
    return any(ca[:, k].max() + gap <= cb[:, k].min() or cb[:, k].max() + gap <= ca[:, k].min() for k in range(3))


def random_scene(rng, n, tilt=0.0):
    ground = ground_body(rot=rotation((1, 0, 0), tilt) if tilt else None)
    boxes = []
    for k in range(n):
        half = rng.uniform(0.1, 0.6, 3)
        pos = rng.uniform(-1.5, 1.5, 3) * (1, 0, 1) + (0, rng.uniform(0.0, 3.0), 0)
        boxes.append(box_body(f"b{k}", half, pos, rot=rotation(rng.normal(size=3), rng.uniform(0, np.pi))))
    return [ground] + boxes


@pytest.mark.parametrize("seed", range(40))
def test_place_body_finds_free_space_above_the_target(seed):
    rng = np.random.default_rng(seed)
    others = random_scene(rng, int(rng.integers(0, 25)), tilt=0.3 * rng.uniform(-1, 1) if seed % 2 else 0.0)
    body = box_body("new", rng.uniform(0.05, 0.8, 3), rng.normal(size=3) * 5,
                    rot=rotation(rng.normal(size=3), rng.uniform(0, np.pi)))
    rot0 = body.pose[:3, :3].copy()
    target = rng.uniform(-1.0, 1.0, 3) * (1, 0, 1) + (0, rng.uniform(-1.0, 2.5), 0)
    place_body(body, others, target)
    box = body.world_aabb()
    gap = DROP * float(np.max(box[1] - box[0]))
    np.testing.assert_array_equal(body.pose[:3, :3], rot0)
    np.testing.assert_allclose((box[0] + box[1])[[0, 2]] / 2, target[[0, 2]], atol=1e-9)
    for o in others[1:]:
        assert separated(box, o.world_aabb(), gap * (1 - 1e-9)), f"overlaps {o.name}"
    ground = others[0]
    n = ground.pose[:3, :3] @ np.array([0.0, 1.0, 0.0])
    level = float(n @ ground.pose[:3, 3])
    reach = corners(box) @ n - level
    assert reach.min() >= gap * (1 - 1e-9)
    # Lifted no more than needed: the bottom rests on the start height, a box top or the ground, plus the gap.
    rests = [target[1]] + [o.world_aabb()[1][1] + gap for o in others[1:]]
    rests.append(box[0][1] - (reach.min() - gap) / n[1])
    assert min(abs(box[0][1] - r) for r in rests) < 1e-9


def test_place_body_stacks_bodies_added_at_the_same_target():
    others = [ground_body()]
    for k in range(5):
        b = box_body(f"n{k}", (0.2, 0.1, 0.3), (0, 0, 0))
        place_body(b, others, (0.0, 0.0, 0.0))
        for o in others[1:]:
            assert separated(b.world_aabb(), o.world_aabb(), 0.0)
        others.append(b)
    ys = [b.pose[1, 3] for b in others[1:]]
    assert np.all(np.diff(ys) > 0.2)  # one above the other, each its height (0.2) and a gap higher


def test_size_note_calls_out_odd_sizes():
    scene = [ground_body()] + [box_body(f"b{k}", (0.15, 0.15, 0.15), (k, 0.15, 0)) for k in range(5)]
    assert size_note(box_body("same", (0.2, 0.1, 0.15), (0, 0, 0)), scene) is None
    huge = size_note(box_body("mug.stl", (15.0, 15.0, 15.0), (0, 0, 0)), scene)
    assert huge is not None and "mug.stl" in huge and "100 times" in huge and "units" in huge
    tiny = size_note(box_body("grain.stl", (0.0015, 0.0015, 0.0015), (0, 0, 0)), scene)
    assert tiny is not None and "grain.stl" in tiny and "1/100 of" in tiny
    assert size_note(box_body("big", (5000.0, 1, 1), (0, 0, 0)), [ground_body()]) is not None
    assert size_note(box_body("fine", (0.5, 1, 1), (0, 0, 0)), []) is None


def test_ground_for_a_dynamic_body_in_a_scene_without_one():
    scene = [box_body(f"b{k}", (0.3, 0.3, 0.3), (2.0 * k, 0.5 + k, 0)) for k in range(3)]
    new = box_body("new", (0.1, 0.1, 0.1), (0, 0, 0), motion="dynamic")
    g = ground_for(new, scene, (1.0, 2.0, 0.5))
    assert g is not None and g.unbounded and g.motion == "static"
    lowest = min(b.world_aabb()[0][1] for b in scene)
    assert g.pose[1, 3] == pytest.approx(lowest)
    np.testing.assert_allclose(g.pose[[0, 2], 3], (1.0, 0.5))
    assert ground_for(new, scene + [ground_body()], (0, 0, 0)) is None
    assert ground_for(box_body("still", (0.1, 0.1, 0.1), (0, 0, 0)), scene, (0, 0, 0)) is None
    assert ground_for(new, [], (0.0, -3.0, 0.0)).pose[1, 3] == pytest.approx(-3.0)


def test_unit_scale_reads_odd_sizes_in_the_unit_that_fits():
    assert unit_scale("a", 95.0, 0.3) == (0.001, unit_scale("a", 95.0, 0.3)[1])  # millimetres
    assert "read as millimetres" in unit_scale("a", 95.0, 0.3)[1]
    assert unit_scale("a", 9.5, 0.3)[0] == 0.01 and "centimetres" in unit_scale("a", 9.5, 0.3)[1]
    assert unit_scale("a", 4.0, 0.3) == (1.0, None)  # 13 times: within reason
    assert unit_scale("a", 95.0, None) == (1.0, None)  # nothing to compare with
    assert unit_scale("a", 1e9, 0.3) == (1.0, None)  # no unit explains it: size_note speaks
    assert unit_scale("a", 0.001, 0.3) == (1.0, None)  # small: never scaled up
    scene = [ground_body()] + [box_body(f"b{k}", (0.15, 0.15, 0.15), (k, 0.15, 0)) for k in range(3)]
    assert typical_size(scene) == pytest.approx(0.3) and typical_size([ground_body()]) is None
