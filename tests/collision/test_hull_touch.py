"""The four touching answers for two posed hulls (collision/hull_touch.py).

The reference (the triangle test through the OBB trees) is checked against its
brute-force twin (every triangle pair, then containment by the face planes) on
random hull pairs, touching, apart, crossing and nested. The other three are
checked against the reference in general position (pairs whose exact distance,
by GJK / EPA, is more than 1e-6 from touching), and the vector-symbol method's
documented degenerate case is shown to be missed. The GJK / EPA manifold for hull
pairs (collision.narrow_phase.collide_hull_hull_gjk) is checked against
convex_penetration.
"""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from obbcollide.epa import convex_penetration
from obbcollide.hull_touch import (TOUCH_ALGORITHMS, TouchAnswer, hull_triangle_tree, touch_hull_hull,
                                  touch_hull_hull_brute, touch_hull_hull_gjk, touch_hull_hull_sat,
                                  touch_hull_hull_triangles, touch_hull_hull_vector_symbol)
from obbcollide.narrow_phase import PairCache, collide_hull_hull_gjk
from obbcollide.shapes import Hull, Sphere, box_hull

from .._reference import random_rotation


def pose(rot=None, t=(0, 0, 0)):
    p = np.eye(4)
    if rot is not None:
        p[:3, :3] = rot
    p[:3, 3] = t
    return p


def random_pair(seed, spread=1.6):
    rng = np.random.default_rng(seed)
    a = Hull.from_points(rng.normal(size=(int(rng.integers(5, 14)), 3)))
    b = Hull.from_points(rng.normal(size=(int(rng.integers(5, 14)), 3)) * rng.uniform(0.2, 1.0))
    pa = pose(random_rotation(rng), rng.uniform(-0.2, 0.2, 3))
    pb = pose(random_rotation(rng), rng.uniform(-spread, spread, 3))
    return a, pa, b, pb


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 10 ** 6))
def test_the_reference_equals_its_brute_force_twin(seed):
    a, pa, b, pb = random_pair(seed)
    assert touch_hull_hull_triangles(a, pa, b, pb).touching == touch_hull_hull_brute(a, pa, b, pb).touching


def test_the_reference_finds_a_hull_inside_the_other():
    big, small = box_hull([1.0, 1.0, 1.0]), box_hull([0.1, 0.2, 0.1])
    inner = pose(None, (0.2, -0.3, 0.1))
    for args in ((big, pose(), small, inner), (small, inner, big, pose())):
        assert touch_hull_hull_triangles(*args).touching
        assert touch_hull_hull_brute(*args).touching
    far = pose(None, (3.0, 0, 0))
    assert not touch_hull_hull_triangles(big, pose(), small, far).touching
    assert not touch_hull_hull_brute(big, pose(), small, far).touching


def test_faces_in_contact_touch_for_the_reference_sat_and_gjk():
    """Two unit boxes face to face (gap exactly 0): closed tests say touching; the vector-symbol
    method, by its convention, says not colliding."""
    a = box_hull([0.5, 0.5, 0.5])
    pb = pose(None, (0.3, 1.0, 0.2))
    assert touch_hull_hull_triangles(a, pose(), a, pb).touching
    assert touch_hull_hull_sat(a, pose(), a, pb).touching
    assert touch_hull_hull_gjk(a, pose(), a, pb).touching
    assert not touch_hull_hull_vector_symbol(a, pose(), a, pb).touching


def test_the_vector_symbol_method_misses_equal_boxes_offset_along_one_axis():
    """Its documented degenerate case (collision/vector_symbol.py): every face pair coplanar or
    meeting along an edge. The others see the 0.4 overlap."""
    a = box_hull([0.5, 0.5, 0.5])
    pb = pose(None, (0.6, 0, 0))
    assert not touch_hull_hull_vector_symbol(a, pose(), a, pb).touching
    for name in ("sat", "gjk", "triangles"):
        assert touch_hull_hull(name, a, pose(), a, pb).touching, name
    assert touch_hull_hull_gjk(a, pose(), a, pb).depth == pytest.approx(0.4, abs=1e-9)
    assert touch_hull_hull_sat(a, pose(), a, pb).depth == pytest.approx(0.4, abs=1e-9)


@pytest.mark.parametrize("seed", range(80))
def test_all_agree_with_the_reference_in_general_position(seed):
    a, pa, b, pb = random_pair(seed)
    depth = convex_penetration(a.core, pa, b.core, pb).depth
    if abs(depth) < 1e-6:
        pytest.skip("within rounding of touching: conventions may differ there")
    ref = touch_hull_hull_triangles(a, pa, b, pb).touching
    assert ref == (depth > 0)
    for name in TOUCH_ALGORITHMS:
        assert touch_hull_hull(name, a, pa, b, pb).touching == ref, name


def test_the_measured_depths_are_the_signed_distance():
    a = box_hull([0.5, 0.5, 0.5])
    apart = pose(None, (0.0, 1.25, 0.0))  # gap 0.25 along y
    g = touch_hull_hull_gjk(a, pose(), a, apart)
    s = touch_hull_hull_sat(a, pose(), a, apart)
    assert not g.touching and not s.touching
    assert g.depth == pytest.approx(-0.25, abs=1e-9)
    assert s.depth <= 0  # a lower bound of the gap, as a negative number
    for fn in (touch_hull_hull_vector_symbol, touch_hull_hull_triangles, touch_hull_hull_brute):
        assert math.isnan(fn(a, pose(), a, apart).depth)


def test_the_triangle_tree_is_built_once_per_hull_and_closed():
    h = box_hull([0.2, 0.3, 0.4])
    t = hull_triangle_tree(h)
    assert t is hull_triangle_tree(h)
    assert t.closed
    assert len(t.faces) == len(h.poly.triangles)


def test_bad_arguments_are_named():
    a = box_hull([0.5, 0.5, 0.5])
    with pytest.raises(ValueError, match="algorithm: expected one of sat, gjk, vector-symbol, triangles"):
        touch_hull_hull("fast", a, pose(), a, pose())
    with pytest.raises(ValueError, match="hull_b: expected a collision.shapes.Hull, got Sphere"):
        touch_hull_hull_sat(a, pose(), Sphere(1.0), pose())
    with pytest.raises(ValueError, match="pose_a"):
        touch_hull_hull_gjk(a, np.full((4, 4), np.nan), a, pose())
    assert isinstance(touch_hull_hull("sat", a, pose(), a, pose()), TouchAnswer)


@pytest.mark.parametrize("seed", range(20))
def test_the_gjk_manifold_is_the_penetration_point(seed):
    a, pa, b, pb = random_pair(seed, spread=1.2)
    res = convex_penetration(a.core, pa, b.core, pb)
    cache = PairCache()
    m = collide_hull_hull_gjk(a, pa, b, pb, margin=0.05, cache=cache)
    if res.depth < -0.05:
        assert len(m.depths) == 0
        return
    assert len(m.depths) == 1 and m.kind == "gjk"
    assert m.depths[0] == pytest.approx(res.depth, abs=1e-9)
    np.testing.assert_allclose(m.normal, res.normal, atol=1e-9)
    np.testing.assert_allclose(m.points_a[0] - m.points_b[0], m.depths[0] * m.normal, atol=1e-9)


def test_within_rounding_of_touching_each_tolerance_decides():
    """What the panel's sentence says: faces 1e-13 apart are apart for the SAT, touching for GJK /
    EPA and for the triangle test (1e-12 of the size); 1e-9 apart all say apart, 1e-9 deep all touch
    (the vector-symbol method included)."""
    a = box_hull([0.15, 0.15, 0.15])
    answers = {}
    for label, y in (("gap 1e-13", 0.3 + 1e-13), ("gap 1e-9", 0.3 + 1e-9), ("depth 1e-9", 0.3 - 1e-9)):
        pb = pose(None, (0.05, y, 0.02))
        answers[label] = {n: touch_hull_hull(n, a, pose(), a, pb).touching for n in TOUCH_ALGORITHMS}
    assert answers["gap 1e-13"] == {"sat": False, "gjk": True, "vector-symbol": False, "triangles": True}
    assert not any(answers["gap 1e-9"].values())
    assert all(answers["depth 1e-9"].values())
