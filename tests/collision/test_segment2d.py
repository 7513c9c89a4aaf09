"""Property tests for collision.segment2d.

The reference is exact rational arithmetic (``fractions.Fraction``) on the
float inputs, which are exact binary fractions (``_reference.py``):

- ``signed_2d_tri_area`` is TWICE the signed area (Ericson's convention):
  positive counter-clockwise, negative clockwise, zero when collinear.
- ``intersect_segment_segment_2d`` treats the segments as closed (touching
  counts); collinear overlapping segments hit at the first point of ``ab`` that
  lies on ``cd``.
"""

from fractions import Fraction

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, example, given, settings
from hypothesis import strategies as st

import obbcollide as C

from .._reference import (
    bad_values,
    closest_between_hulls,
    coord,
    exact_area2,
    exact_segment_intersection_2d,
    scale_of,
    vec,
)

SETTINGS = settings(max_examples=150, deadline=None, report_multiple_bugs=False,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
PER_KIND = settings(SETTINGS, max_examples=80)
FEW = settings(max_examples=25, deadline=None, report_multiple_bugs=False,
               suppress_health_check=[HealthCheck.too_slow])
EPS = np.finfo(float).eps

# Coordinates are 0 or at least 1e-100 in size: the library squares segment
# lengths and multiplies coordinate differences, which underflow to zero below
# ~1e-154 (e.g. a segment 1e-282 long counts as a point). That is outside what
# double precision can represent, not what these tests are about.
NORMAL = coord.filter(lambda x: x == 0.0 or abs(x) > 1e-100)
P2 = vec(2, NORMAL)
INT2 = vec(2, st.integers(-4, 4).map(float))
DYADIC2 = vec(2, st.integers(-40, 40).map(lambda k: k / 8.0))
ANY2 = st.one_of(P2, INT2, DYADIC2)


def area2_error_bound(a, b, c):
    """Rounding bound of the float determinant (a - c) x (b - c).

    Two subtractions per factor, two products and one difference: the result
    is within 8 eps * (|ax - cx||by - cy| + |ay - cy||bx - cx|) of the exact value.
    """
    a, b, c = (np.asarray(x, float) for x in (a, b, c))
    return 8 * EPS * (abs(a[0] - c[0]) * abs(b[1] - c[1]) + abs(a[1] - c[1]) * abs(b[0] - c[0])) + 1e-300


# ---------------------------------------------------------------------------
# signed_2d_tri_area
# ---------------------------------------------------------------------------


@SETTINGS
@given(a=ANY2, b=ANY2, c=ANY2)
@example(a=np.array([0.0, 0.0]), b=np.array([1.0, 0.0]), c=np.array([0.0, 1.0]))
def test_area_matches_exact(a, b, c):
    got = C.signed_2d_tri_area(a, b, c)
    exact = exact_area2(a, b, c)
    bound = area2_error_bound(a, b, c)
    assert np.ndim(got) == 0
    assert abs(Fraction(float(got)) - exact) <= Fraction(bound)
    # The sign is right wherever the exact value is clear of the rounding bound.
    if abs(exact) > bound:
        assert np.sign(got) == np.sign(float(exact))


@SETTINGS
@given(a=st.one_of(INT2, DYADIC2), b=st.one_of(INT2, DYADIC2), c=st.one_of(INT2, DYADIC2))
def test_area_exact_on_grid(a, b, c):
    """Small dyadic inputs: every operation is exact, so the result is too."""
    assert Fraction(float(C.signed_2d_tri_area(a, b, c))) == exact_area2(a, b, c)


@SETTINGS
@given(a=ANY2, b=ANY2, c=ANY2)
def test_area_symmetries(a, b, c):
    f = C.signed_2d_tri_area
    # swapping a and b negates it exactly (same two products, subtracted the other way)
    assert f(b, a, c) == -f(a, b, c)
    # a cyclic shift is the same value up to rounding
    bound = (area2_error_bound(a, b, c) + area2_error_bound(b, c, a)
             + 2 * abs(float(exact_area2(a, b, c))) * EPS)
    assert abs(f(b, c, a) - f(a, b, c)) <= 2 * bound
    # magnitude: twice the triangle's area, i.e. |cross product| of two edges in 3D
    A3 = [np.append(x, 0.0) for x in (a, b, c)]
    twice_area = np.linalg.norm(np.cross(A3[1] - A3[0], A3[2] - A3[0]))
    assert abs(abs(f(a, b, c)) - twice_area) <= 4 * bound + 1e-12 * scale_of(a, b, c) ** 2


def test_area_is_twice_the_area():
    # unit right triangle has area 1/2: the function returns 1 (Ericson's convention)
    assert C.signed_2d_tri_area([0, 0], [1, 0], [0, 1]) == 1.0
    assert C.signed_2d_tri_area([0, 0], [0, 1], [1, 0]) == -1.0  # clockwise
    assert C.signed_2d_tri_area([0, 0], [1, 1], [3, 3]) == 0.0  # collinear
    assert C.signed_2d_tri_area([0, 0], [4, 0], [0, 3]) == 12.0  # 3-4-5 triangle, area 6


@FEW
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(1, 6))
def test_area_batch_and_broadcast(seed, n):
    rng = np.random.default_rng(seed)
    a, b, c = (rng.uniform(-10, 10, (n, 2)) for _ in range(3))
    out = C.signed_2d_tri_area(a, b, c)
    assert out.shape == (n,)
    for i in range(n):
        assert out[i] == C.signed_2d_tri_area(a[i], b[i], c[i])
    # one triangle edge (a, b) against many third points
    out = C.signed_2d_tri_area(a[0], b[0], c)
    for i in range(n):
        assert out[i] == C.signed_2d_tri_area(a[0], b[0], c[i])
    assert C.signed_2d_tri_area(a.reshape(n, 1, 2), b[0], c).shape == (n, n)


@pytest.mark.parametrize("arg", ["a", "b", "c"])
@pytest.mark.parametrize("label, bad", bad_values((2,)) + [("3d", np.ones(3))])
def test_area_bad_input(arg, label, bad):
    kwargs = {"a": np.zeros(2), "b": np.array([1.0, 0.0]), "c": np.array([0.0, 1.0]), arg: bad}
    with pytest.raises(ValueError, match=f"^{arg}:"):
        C.signed_2d_tri_area(**kwargs)


# ---------------------------------------------------------------------------
# intersect_segment_segment_2d
# ---------------------------------------------------------------------------


def gap(a, b, c, d):
    """Distance between the closed segments (float reference, for near misses only)."""
    A = [np.append(x, 0.0) for x in (a, b)]
    B = [np.append(x, 0.0) for x in (c, d)]
    return closest_between_hulls(A, B)[2]


def t_tolerance(a, b, c, d):
    """Forward-error bound of the returned parameter t.

    Crossing: t = a3 / (a3 - a4) from areas that carry absolute rounding errors
    of ~8 eps L^2 (L: the size of the configuration), divided by the exact
    a3 - a4 = area(a, b, c) - area(a, b, d). Collinear: t = (c - a).u / u.u,
    with an error of ~8 eps L / |u|. Plus 1e-12 for the final rounding.
    """
    P = np.array([a, b, c, d], float)
    L = max(np.linalg.norm(P[i] - P[j]) for i in range(4) for j in range(4)) + 1e-300
    den = abs(float(exact_area2(a, b, c) - exact_area2(a, b, d)))
    if den > 0.0:
        return 1e-12 + 16 * EPS * L * L / den
    u = np.linalg.norm(np.asarray(b, float) - a)
    return 1e-12 + 16 * EPS * L / u if u > 0 else 1e-12


def check_against_exact(a, b, c, d, exact_inputs):
    """Compare with the exact answer.

    ``exact_inputs``: small integer inputs, for which every float operation of
    the library is exact, so the answer must be exact too (t to one rounding).
    Otherwise the hit must still agree exactly except for a *reported* hit on
    segments whose exact gap is below 1e-12 L (rounding-level), and t must be
    within ``t_tolerance``.
    """
    hit, t, point = C.intersect_segment_segment_2d(a, b, c, d)
    ref_hit, ref_t = exact_segment_intersection_2d(a, b, c, d)
    assert isinstance(hit, bool) and point.shape == (2,)
    if hit and not ref_hit and not exact_inputs:
        assume(gap(a, b, c, d) > 1e-12 * scale_of(a, b, c, d))
    assert hit == ref_hit, (hit, ref_hit)
    if not hit:
        assert t == 0.0  # documented: 0 where there is none
        return
    assert 0.0 <= t <= 1.0
    t_tol = EPS if exact_inputs else t_tolerance(a, b, c, d)
    assert abs(Fraction(t) - ref_t) <= Fraction(t_tol), (t, float(ref_t))
    np.testing.assert_array_equal(point, a + t * (b - a))


SEG_KINDS = ("grid", "generic", "touching-float", "shared-endpoint-float", "collinear-float")
SWAP = st.booleans()


@st.composite
def segments(draw, kind):
    """Four 2D points ``a, b, c, d`` of the segments ``ab`` and ``cd``."""
    if kind == "grid":  # small integers: collinear, touching, parallel, zero-length are common
        return tuple(draw(INT2) for _ in range(4))
    if kind == "generic":
        return tuple(draw(P2) for _ in range(4))
    if kind == "touching-float":
        # A T-junction: an end of one segment lies exactly on the other, which
        # is horizontal or vertical so that "exactly on" holds in floats.
        axis = draw(st.integers(0, 1))
        lvl, x0, x1 = draw(NORMAL), draw(NORMAL), draw(NORMAL)
        assume(x0 != x1)
        xt = draw(st.floats(min(x0, x1), max(x0, x1)).filter(lambda x: x == 0.0 or abs(x) > 1e-100))
        mk = (lambda u: np.array([u, lvl])) if axis == 0 else (lambda u: np.array([lvl, u]))
        flat = [mk(x0), mk(x1)]
        touch, other = mk(xt), draw(P2)
        tee = [touch, other] if draw(SWAP) else [other, touch]
        return tuple(flat + tee) if draw(SWAP) else tuple(tee + flat)
    if kind == "shared-endpoint-float":
        # Two segments with one common end point (the same float pair).
        x, y, z = draw(P2), draw(P2), draw(P2)
        ab = [x, y] if draw(SWAP) else [y, x]
        cd = [x.copy(), z] if draw(SWAP) else [z, x.copy()]
        return tuple(ab + cd) if draw(SWAP) else tuple(cd + ab)
    # collinear on a horizontal line with arbitrary float abscissae
    lvl = draw(NORMAL)
    xs = [draw(NORMAL) for _ in range(4)]
    return tuple(np.array([x, lvl]) for x in xs)


@pytest.mark.parametrize("kind", SEG_KINDS)
@PER_KIND
@given(data=st.data())
def test_intersect_matches_exact(kind, data):
    a, b, c, d = data.draw(segments(kind))
    if kind == "generic":
        # Random floats, well conditioned: every orientation is clear of the
        # rounding of the largest one (the library derives area(c, d, b) from
        # the other three, so its error is that of the largest). Exact
        # touching is the job of the "*-float" families.
        L2 = max(abs(float(exact_area2(*tri))) for tri in ((a, b, c), (a, b, d), (c, d, a)))
        L2 = max(L2, scale_of(a, b, c, d) ** 2)
        for tri in ((a, b, c), (a, b, d), (c, d, a), (c, d, b)):
            assume(abs(float(exact_area2(*tri))) > 1e-9 * L2)
    check_against_exact(a, b, c, d, exact_inputs=(kind == "grid"))


@pytest.mark.parametrize("a, b, c, d, hit, t", [
    ([0, 0], [2, 2], [0, 2], [2, 0], True, 0.5),  # X
    ([0, 0], [4, 0], [1, 0], [3, 0], True, 0.25),  # collinear, cd inside ab
    ([0, 0], [4, 0], [3, 0], [1, 0], True, 0.25),  # ... cd reversed
    ([4, 0], [0, 0], [1, 0], [3, 0], True, 0.25),  # ... ab reversed: first point of ab on cd is 3
    ([1, 0], [2, 0], [0, 0], [4, 0], True, 0.0),  # ab inside cd
    ([0, 0], [1, 0], [1, 0], [2, 0], True, 1.0),  # collinear, touching at b == c
    ([0, 0], [1, 0], [2, 0], [3, 0], False, 0.0),  # collinear, apart
    ([0, 0], [1, 0], [0, 1], [1, 1], False, 0.0),  # parallel
    ([0, 0], [2, 0], [1, 0], [1, 5], True, 0.5),  # T: c on ab
    ([0, 0], [1, 1], [1, 1], [2, 0], True, 1.0),  # shared end point
    ([1, 0], [1, 0], [0, 0], [2, 0], True, 0.0),  # ab is a point on cd
    ([1, 1], [1, 1], [0, 0], [2, 0], False, 0.0),  # ab is a point off cd
    ([1, 0], [1, 0], [1, 0], [1, 0], True, 0.0),  # two equal points
    ([0, 0], [2, 0], [1, 0], [1, 0], True, 0.5),  # cd is a point on ab
    # Touching with floats that are not small integers. A shared end point:
    ([0.1, 0.1], [0.0, 0.0], [0.0, 0.0], [0.3, -0.1], True, 1.0),
    # a T-junction at b: b lies exactly on the horizontal segment cd.
    ([1.016306693462969, -5.171281722624941], [2.4279430992699726, -3.297925499061649],
     [-1.9521015358190592, -3.297925499061649], [9.39570790360196, -3.297925499061649], True, 1.0),
], ids=["x", "collinear-inside", "collinear-cd-reversed", "collinear-ab-reversed", "ab-inside-cd",
        "collinear-touching", "collinear-apart", "parallel", "t-junction-c", "shared-end-grid",
        "ab-point-on-cd", "ab-point-off-cd", "two-equal-points", "cd-point-on-ab",
        "shared-end-float", "t-junction-b-float"])
def test_intersect_known_values(a, b, c, d, hit, t):
    a, b, c, d = (np.array(x, float) for x in (a, b, c, d))
    got_hit, got_t, point = C.intersect_segment_segment_2d(a, b, c, d)
    assert (got_hit, got_t) == (hit, t)
    np.testing.assert_allclose(point, a + t * (b - a))


GRID_ANY = st.one_of(INT2, DYADIC2)


@SETTINGS
@given(a=GRID_ANY, b=GRID_ANY, c=GRID_ANY, d=GRID_ANY)
def test_intersect_hit_is_symmetric_on_grid_inputs(a, b, c, d):
    """Whether closed segments meet does not depend on their order or direction.

    Dyadic inputs: all the library's arithmetic is exact, so this must hold exactly.
    """
    hits = {C.intersect_segment_segment_2d(*x)[0]
            for x in ((a, b, c, d), (b, a, c, d), (c, d, a, b), (d, c, b, a))}
    assert len(hits) == 1


@FEW
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(1, 6))
def test_intersect_batch_and_broadcast(seed, n):
    rng = np.random.default_rng(seed)
    a, b, c, d = (rng.integers(-3, 4, (n, 2)).astype(float) for _ in range(4))
    hit, t, point = C.intersect_segment_segment_2d(a, b, c, d)
    assert hit.shape == (n,) and hit.dtype == bool and t.shape == (n,) and point.shape == (n, 2)
    for i in range(n):
        h, ti, pi = C.intersect_segment_segment_2d(a[i], b[i], c[i], d[i])
        assert (hit[i], t[i]) == (h, ti)
        np.testing.assert_array_equal(point[i], pi)
    # one segment ab against many segments cd
    hit, t, point = C.intersect_segment_segment_2d(a[0], b[0], c, d)
    for i in range(n):
        h, ti, pi = C.intersect_segment_segment_2d(a[0], b[0], c[i], d[i])
        assert (hit[i], t[i]) == (h, ti)
        np.testing.assert_array_equal(point[i], pi)
    hit, t, point = C.intersect_segment_segment_2d(a.reshape(n, 1, 2), b[0], c, d)
    assert hit.shape == (n, n) and point.shape == (n, n, 2)


def test_intersect_single_query_types():
    hit, t, point = C.intersect_segment_segment_2d([0, 0], [2, 2], [0, 2], [2, 0])
    assert type(hit) is bool and type(t) is float and point.shape == (2,)


@pytest.mark.parametrize("arg", ["a", "b", "c", "d"])
@pytest.mark.parametrize("label, bad", bad_values((2,)) + [("3d", np.ones(3))])
def test_intersect_bad_input(arg, label, bad):
    kwargs = {"a": np.zeros(2), "b": np.ones(2), "c": np.array([0.0, 1.0]),
              "d": np.array([1.0, 0.0]), arg: bad}
    with pytest.raises(ValueError, match=f"^{arg}:"):
        C.intersect_segment_segment_2d(**kwargs)


def test_intersect_non_broadcasting_batches_rejected():
    with pytest.raises(ValueError, match="do not broadcast"):
        C.intersect_segment_segment_2d(np.zeros((3, 2)), np.zeros((4, 2)), np.ones(2), np.ones(2))
