"""The axis tables of collision.separating_axis against the library's one-answer tests.

``convex_convex_axes`` must hold the axis and depth :func:`collision.sat.convex_convex_sat`
finds (same separation, depth within 1e-9, the same kind unless two kinds tie within 1e-9) on
random hulls in random poses; ``box_box_axes`` must agree with RTCD 4.4.1's kernel
(:func:`collision.obb.test_obb_obb_kernel`) on the first separating axis, away from ties.
"""

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from obbcollide import ConvexPolyhedron
from obbcollide.obb import test_obb_obb_kernel as obb_kernel
from obbcollide.sat import convex_convex_sat
from obbcollide.separating_axis import EDGE_EDGE, FACE_A, FACE_B, KIND_NAMES, box_box_axes, convex_convex_axes

quats = arrays(np.float64, 4, elements=st.floats(-1.0, 1.0)).filter(lambda q: np.linalg.norm(q) > 0.1)


def rot(q):
    q = np.asarray(q, float) / np.linalg.norm(q)
    w, x, y, z = q
    return np.array([[1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
                     [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
                     [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)]])


def pose(q, t):
    p = np.eye(4)
    p[:3, :3] = rot(q)
    p[:3, 3] = t
    return p


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2 ** 31), qa=quats, qb=quats,
       off=arrays(np.float64, 3, elements=st.floats(-1.5, 1.5)), n=st.integers(4, 20))
def test_convex_table_holds_the_sat_answer(seed, qa, qb, off, n):
    rng = np.random.default_rng(seed)
    a = ConvexPolyhedron.from_points(rng.normal(size=(n, 3)) * [0.6, 0.4, 0.3]).transformed(pose(qa, [0, 0, 0]))
    b = ConvexPolyhedron.from_points(rng.normal(size=(n, 3)) * [0.5, 0.5, 0.2]).transformed(pose(qb, off))
    ref = convex_convex_sat(a, None, b, None)
    table = convex_convex_axes(a, b)
    best = table.best
    assert len(table) == ref.axes_tested
    assert table.separated == ref.separated or abs(ref.depth) < 1e-9
    assert table.gap[best] == pytest.approx(-ref.depth, abs=1e-9)
    if KIND_NAMES[table.kind[best]] != ref.kind:  # only a tie may pick another kind
        same = np.flatnonzero(np.array(KIND_NAMES)[table.kind] == ref.kind)
        assert np.max(table.gap[same]) == pytest.approx(table.gap[best], abs=1e-9)
    # The table is what it says: unit axes, intervals are the vertex projections, gap from them.
    assert np.allclose(np.linalg.norm(table.axes, axis=1), 1.0)
    pa, pb = a.vertices @ table.axes.T, b.vertices @ table.axes.T
    assert np.allclose(pa.min(0), table.lo_a) and np.allclose(pa.max(0), table.hi_a)
    assert np.allclose(pb.min(0), table.lo_b) and np.allclose(pb.max(0), table.hi_b)
    assert np.all(table.lo_b - table.hi_a >= table.lo_a - table.hi_b - 1e-12)  # oriented from A to B
    # Features name the faces and edges the axes came from.
    for row in range(len(table)):
        i, j = table.feature[row]
        if table.kind[row] == FACE_A:
            assert abs(abs(a.normals[i] @ table.axes[row]) - 1) < 1e-9
        elif table.kind[row] == FACE_B:
            assert abs(abs(b.normals[j] @ table.axes[row]) - 1) < 1e-9
        else:
            ea = a.vertices[a.edges[i, 1]] - a.vertices[a.edges[i, 0]]
            eb = b.vertices[b.edges[j, 1]] - b.vertices[b.edges[j, 0]]
            assert abs(table.axes[row] @ ea) < 1e-9 * np.linalg.norm(ea)
            assert abs(table.axes[row] @ eb) < 1e-9 * np.linalg.norm(eb)


@settings(max_examples=150, deadline=None)
@given(qa=quats, qb=quats, off=arrays(np.float64, 3, elements=st.floats(-2.5, 2.5)),
       ha=arrays(np.float64, 3, elements=st.floats(0.05, 1.0)), hb=arrays(np.float64, 3, elements=st.floats(0.05, 1.0)))
def test_box_table_agrees_with_obb_kernel(qa, qb, off, ha, hb):
    ra, rb = rot(qa), rot(qb)  # rows of the rotations are the box axes
    table = box_box_axes(np.zeros(3), ra, ha, off, rb, hb)
    k = int(obb_kernel(np.zeros(3), ra, ha, np.asarray(off), rb, hb, 1e-12))
    finite = table.gap[np.isfinite(table.gap)]
    assume(np.min(np.abs(finite)) > 1e-7)  # not within rounding of touching on some axis
    assert k == table.first_separating
    assert (k < 0) == (not table.separated)


def test_box_table_for_touching_and_overlapping_boxes():
    eye = np.eye(3)
    t = box_box_axes(np.zeros(3), eye, [1, 1, 1], [2.5, 0, 0], eye, [1, 1, 1])
    assert t.first_separating == 0 and t.gap[0] == pytest.approx(0.5)
    assert t.kind[0] == FACE_A and t.describe(0) == "face normal of A (face 0)"
    assert np.all(t.gap[[6, 10, 14]] == -np.inf)  # A_i x B_i: parallel edges give no axis
    assert np.all(np.isfinite(t.gap[[7, 8, 9, 11, 12, 13]]))
    t = box_box_axes(np.zeros(3), eye, [1, 1, 1], [1.5, 0.2, 0], eye, [1, 1, 1])
    assert not t.separated and t.gap[t.best] == pytest.approx(-0.5)  # least penetration along x
    assert np.allclose(t.axes[t.best], [1, 0, 0])


def test_edge_edge_axis_described():
    cube = np.array([[x, y, z] for x in (-1, 1) for y in (-1, 1) for z in (-1, 1)], float)
    c = s = np.sqrt(0.5)
    pa, pb = np.eye(4), np.eye(4)
    pa[:3, :3] = [[c, -s, 0], [s, c, 0], [0, 0, 1]]  # an edge along z pointing at +x
    pb[:3, :3] = [[c, 0, s], [0, 1, 0], [-s, 0, c]]  # an edge along y pointing at -x
    pb[:3, 3] = [3.0, 0.0, 0.0]
    a = ConvexPolyhedron.from_points(cube).transformed(pa)
    b = ConvexPolyhedron.from_points(cube).transformed(pb)
    t = convex_convex_axes(a, b)
    best = t.best
    assert t.separated and t.kind[best] == EDGE_EDGE
    assert np.allclose(np.abs(t.axes[best]), [1, 0, 0])
    assert t.gap[best] == pytest.approx(3.0 - 2 * np.sqrt(2))
    assert t.describe(best).startswith("edge ") and "of B" in t.describe(best)
    with pytest.raises(ValueError, match="poly_b"):
        convex_convex_axes(a, np.zeros((4, 3)))
