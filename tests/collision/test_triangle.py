"""Triangle-triangle overlap and intersection segment against independent references.

References (none of them uses a separating-axis decision):

* ``tri_distance`` -- plain numpy, vectorised: two closed triangles meet iff an
  edge of one strictly crosses the plane of the other inside it, or the least of
  the 6 vertex-triangle and 9 edge-edge distances is zero; for disjoint triangles
  that least distance *is* their distance. Vertex-triangle distance is a plane
  projection plus barycentric-sign test, edge-edge distance a minimum over
  candidate pairs; neither is the library's Voronoi-region code.
* ``lp_linf_distance`` -- scipy ``linprog``: the L-infinity distance between the
  convex hulls, min t s.t. |A lam - B mu| <= t, lam, mu convex weights. Zero iff
  they meet. Used on a ~1000-pair subset (about 2 ms per LP).
* python-fcl -- one-triangle ``BVHModel`` objects, ``fcl.collide`` with identity
  transforms.

Ambiguity. For inputs produced by floating-point arithmetic (random, near
touching, rotated coplanar) the signed gap -- the distance when disjoint, minus
the penetration depth when intersecting -- decides the exact answer only when
it is not tiny: pairs with |gap| < 1e-9 (coordinates are O(1)) are excluded from
the strict comparisons and counted. The penetration depth used for that filter
is the least projection overlap over the face normals and edge-edge normals,
computed in long double; it only selects which pairs are compared.
Categories built from exactly representable numbers (dyadic coordinates: shared
vertices/edges, exactly coplanar, exactly parallel or collinear edges, exact
degenerate triangles) have an exact answer -- touching counts as intersecting.
For them the reference is exact: any non-zero true distance is >= 1e-6, far
above its rounding. Shared corners/edges and coplanar pairs (whose contact is a
2D region, not a near-touch) are compared strictly, every pair. In the other
exact categories the pairs that only touch (zero penetration depth: collinear
edges that overlap, two segments crossing at a point) fall under the same
|gap| < 1e-9 rule as above and are excluded; everything else is strict.
"""

import functools

import fcl
import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays
from scipy.optimize import linprog

from obbcollide.triangle import intersect_triangle_triangle as tri_intersect
from obbcollide.triangle import test_triangle_triangle as tri_test

AMBIGUOUS = 1e-9  # |signed gap| below this: the exact answer is decided by rounding
TOUCH = 1e-12  # reference distance at or below this counts as touching (rounding)


# ---------------------------------------------------------------------------
# Independent numpy reference
# ---------------------------------------------------------------------------


def _dot(a, b):
    return np.einsum("...i,...i->...", a, b)


def _pt_seg(p, a, b):
    ab = b - a
    dd = _dot(ab, ab)
    t = np.divide(_dot(p - a, ab), dd, out=np.zeros(dd.shape), where=dd > 0)
    return a + np.clip(t, 0.0, 1.0)[..., None] * ab


def _take(stack, k):
    """stack (m, n, ...) indexed by k (n,) along axis 0."""
    return np.take_along_axis(stack, k.reshape((1, -1) + (1,) * (stack.ndim - 2)), 0)[0]


def pt_tri(p, a, b, c):
    """Closest point on triangle abc: project on the plane, accept if the
    barycentric signs are all >= 0, else the best of the three edges."""
    n = np.cross(b - a, c - a)
    nn = _dot(n, n)
    size2 = np.maximum(np.maximum(_dot(b - a, b - a), _dot(c - a, c - a)), _dot(c - b, c - b))
    nondeg = nn > 1e-24 * size2 * size2
    s = np.divide(_dot(p - a, n), nn, out=np.zeros(nn.shape), where=nondeg)
    q = p - s[..., None] * n
    w0 = _dot(np.cross(b - q, c - q), n)
    w1 = _dot(np.cross(c - q, a - q), n)
    w2 = _dot(np.cross(a - q, b - q), n)
    inside = nondeg & (w0 >= 0) & (w1 >= 0) & (w2 >= 0)
    cands = np.stack([_pt_seg(p, a, b), _pt_seg(p, b, c), _pt_seg(p, c, a)])
    k = np.argmin(_dot(cands - p, cands - p), axis=0)
    return np.where(inside[..., None], q, _take(cands, k))


def _seg_seg(p1, q1, p2, q2):
    """Closest points of two segments: best of the four endpoint projections and
    the interior critical point of the two lines (when it is interior)."""
    xs = [p1, q1, _pt_seg(p2, p1, q1), _pt_seg(q2, p1, q1)]
    ys = [_pt_seg(p1, p2, q2), _pt_seg(q1, p2, q2), p2, q2]
    d1, d2, r = q1 - p1, q2 - p2, p1 - p2
    a, e, b = _dot(d1, d1), _dot(d2, d2), _dot(d1, d2)
    c, f = _dot(d1, r), _dot(d2, r)
    den = a * e - b * b
    ok = den > 1e-30 * a * e
    s = np.divide(b * f - c * e, den, out=np.zeros(den.shape), where=ok)
    t = np.divide(a * f - b * c, den, out=np.zeros(den.shape), where=ok)
    ok &= (s >= 0) & (s <= 1) & (t >= 0) & (t <= 1)
    xs.append(np.where(ok[..., None], p1 + s[..., None] * d1, np.inf))
    ys.append(np.where(ok[..., None], p2 + t[..., None] * d2, 0.0))
    X, Y = np.stack(xs), np.stack(ys)
    k = np.argmin(_dot(X - Y, X - Y), axis=0)
    return _take(X, k), _take(Y, k)


def _edge_crosses(p, q, a, b, c):
    """Segment pq strictly crosses the plane of abc, at a point inside abc."""
    n = np.cross(b - a, c - a)
    sp, sq = _dot(p - a, n), _dot(q - a, n)
    cross = ((sp > 0) & (sq < 0)) | ((sp < 0) & (sq > 0))
    x = p + (sp / np.where(cross, sp - sq, 1.0))[..., None] * (q - p)
    w0 = _dot(np.cross(b - x, c - x), n)
    w1 = _dot(np.cross(c - x, a - x), n)
    w2 = _dot(np.cross(a - x, b - x), n)
    return cross & (w0 >= 0) & (w1 >= 0) & (w2 >= 0)


def tri_distance(A, B):
    """Distance between triangles A, B (n, 3, 3) and a closest pair (0 when they meet)."""
    xs, ys = [], []
    for i in range(3):
        xs += [A[:, i], pt_tri(B[:, i], A[:, 0], A[:, 1], A[:, 2])]
        ys += [pt_tri(A[:, i], B[:, 0], B[:, 1], B[:, 2]), B[:, i]]
    for i in range(3):
        for j in range(3):
            x, y = _seg_seg(A[:, i], A[:, (i + 1) % 3], B[:, j], B[:, (j + 1) % 3])
            xs.append(x)
            ys.append(y)
    X, Y = np.stack(xs), np.stack(ys)
    d2 = _dot(X - Y, X - Y)
    k = np.argmin(d2, axis=0)
    dist = np.sqrt(np.take_along_axis(d2, k[None], 0)[0])
    crosses = np.zeros(len(A), bool)
    for i in range(3):
        j = (i + 1) % 3
        crosses |= _edge_crosses(A[:, i], A[:, j], B[:, 0], B[:, 1], B[:, 2])
        crosses |= _edge_crosses(B[:, i], B[:, j], A[:, 0], A[:, 1], A[:, 2])
    return np.where(crosses, 0.0, dist), _take(X, k), _take(Y, k)


def penetration_depth(A, B):
    """Least projection overlap over the face and edge-edge normals (long double).

    Only used to flag intersecting pairs whose depth is below AMBIGUOUS.
    """
    A = A.astype(np.longdouble)
    B = B.astype(np.longdouble)
    ea = np.stack([A[:, 1] - A[:, 0], A[:, 2] - A[:, 1], A[:, 0] - A[:, 2]], 1)
    eb = np.stack([B[:, 1] - B[:, 0], B[:, 2] - B[:, 1], B[:, 0] - B[:, 2]], 1)
    ea /= np.maximum(np.sqrt((ea * ea).sum(-1)), 1e-300)[..., None]
    eb /= np.maximum(np.sqrt((eb * eb).sum(-1)), 1e-300)[..., None]
    axes = [np.cross(ea[:, 0], ea[:, 1]), np.cross(eb[:, 0], eb[:, 1])]
    axes += [np.cross(ea[:, i], eb[:, j]) for i in range(3) for j in range(3)]
    M = np.stack(axes, 1)
    nrm = np.sqrt((M * M).sum(-1))
    valid = nrm > 1e-12
    M = M / np.where(valid, nrm, 1)[..., None]
    pa = np.einsum("nki,nmi->nmk", A, M)
    pb = np.einsum("nki,nmi->nmk", B, M)
    overlap = np.minimum(pa.max(-1) - pb.min(-1), pb.max(-1) - pa.min(-1))
    return np.where(valid, overlap, np.inf).min(1).astype(float)


def classify(A, B):
    """(ref_hit, signed_gap) from the distance reference (+ depth for the filter)."""
    dist, _, _ = tri_distance(A, B)
    hit = dist <= TOUCH
    gap = np.where(hit, -np.maximum(penetration_depth(A, B), 0.0), dist)
    return hit, gap


def lp_linf_distance(a, b):
    """L-infinity distance between two triangles (3, 3) by linear programming."""
    m = np.hstack([a.T, -b.T])  # a lam - b mu
    ones = np.ones((3, 1))
    a_ub = np.vstack([np.hstack([m, -ones]), np.hstack([-m, -ones])])
    a_eq = np.array([[1, 1, 1, 0, 0, 0, 0], [0, 0, 0, 1, 1, 1, 0]], float)
    res = linprog(
        np.r_[np.zeros(6), 1.0], A_ub=a_ub, b_ub=np.zeros(6), A_eq=a_eq, b_eq=np.ones(2),
        bounds=[(0, None)] * 7, method="highs",
        options=dict(primal_feasibility_tolerance=1e-10, dual_feasibility_tolerance=1e-10),
    )
    assert res.status == 0, res.message
    return res.fun


def _bvh(t):
    m = fcl.BVHModel()
    m.beginModel(1, 1)
    m.addSubModel(np.ascontiguousarray(t, dtype=float), np.array([[0, 1, 2]]))
    m.endModel()
    return m


def fcl_hit(A, B):
    out = np.empty(len(A), bool)
    req, eye = fcl.CollisionRequest(), fcl.Transform()
    for i in range(len(A)):
        oa = fcl.CollisionObject(_bvh(A[i]), eye)
        ob = fcl.CollisionObject(_bvh(B[i]), eye)
        out[i] = fcl.collide(oa, ob, req, fcl.CollisionResult()) > 0
    return out


# ---------------------------------------------------------------------------
# Case generators (vectorised). Each returns (A, B) of shape (n, 3, 3).
# ---------------------------------------------------------------------------


def _dyadic(rng, shape, bits=8):
    """Uniform in [-1, 1] on the grid 2^-bits: products and sums stay exact."""
    return np.round(rng.uniform(-1, 1, size=shape) * 2**bits) / 2**bits


def _unit(v):
    return v / np.linalg.norm(v, axis=-1, keepdims=True)


def _rotations(rng, n):
    q, r = np.linalg.qr(rng.normal(size=(n, 3, 3)))
    q *= np.sign(np.diagonal(r, axis1=1, axis2=2))[:, None, :]
    q[np.linalg.det(q) < 0, :, 2] *= -1
    return q


def gen_random(n, seed=1):
    """Gaussian corners, centroids at the origin, B's shifted by N(0, 0.65^2): ~38% meet."""
    rng = np.random.default_rng(seed)
    A = rng.normal(size=(n, 3, 3))
    B = rng.normal(size=(n, 3, 3))
    A -= A.mean(1, keepdims=True)
    B -= B.mean(1, keepdims=True)
    return A, B + rng.normal(size=(n, 1, 3)) * 0.65


def gen_gap(n, gap, seed):
    """Disjoint random pair moved together along its closest-point direction so
    the distance is exactly ``gap`` (> 0); for ``gap`` < 0 moved |gap| past
    touching (these mostly intersect, the others slide past: labelled by the
    reference, not by construction)."""
    rng = np.random.default_rng(seed)
    A = rng.normal(size=(n, 3, 3)) * 0.5
    B = rng.normal(size=(n, 3, 3)) * 0.5 + 5.0 * _unit(rng.normal(size=(n, 1, 3)))
    d, pa, pb = tri_distance(A, B)
    u = (pb - pa) / d[:, None]
    return A, B - ((d - gap)[:, None] * u)[:, None, :]


def gen_coplanar_rotated(n, seed=3):
    """Coplanar in a random plane (float rounding: off-plane by ~1e-16)."""
    rng = np.random.default_rng(seed)
    A2 = rng.uniform(-1, 1, (n, 3, 2))
    B2 = rng.uniform(-1, 1, (n, 3, 2)) * 0.8 + rng.uniform(-0.6, 0.6, (n, 1, 2))
    Q = _rotations(rng, n)
    o = rng.normal(size=(n, 1, 3))
    A = o + np.einsum("nkj,nij->nki", A2, Q[:, :, :2])
    B = o + np.einsum("nkj,nij->nki", B2, Q[:, :, :2])
    return A, B


def gen_near_parallel(n, seed=4):
    """B has an edge rotated by 1e-12..1e-4 rad from an edge of A, offset from it
    by 1e-6..1e-2 along a direction perpendicular to it; B's third corner is on
    the far side. Separated, touching-close and intersecting pairs."""
    rng = np.random.default_rng(seed)
    A = rng.normal(size=(n, 3, 3)) * 0.5
    e = A[:, 1] - A[:, 0]
    m = 0.5 * (A[:, 0] + A[:, 1])
    w = rng.normal(size=(n, 3))
    w -= (_dot(w, e) / _dot(e, e))[:, None] * e
    w = _unit(w)
    w *= np.where(_dot(A[:, 2] - m, w) > 0, -1.0, 1.0)[:, None]  # away from A's third corner
    ang = 10.0 ** rng.uniform(-12, -4, n)
    axis = _unit(rng.normal(size=(n, 3)))
    e_rot = e * np.cos(ang)[:, None] + np.cross(axis, e) * np.sin(ang)[:, None]
    off = rng.choice([-1.0, 1.0], n) * 10.0 ** rng.uniform(-6, -2, n)
    s = rng.uniform(0.3, 2.0, n)[:, None]
    b0 = m + off[:, None] * w - 0.5 * s * e_rot
    b1 = m + off[:, None] * w + 0.5 * s * e_rot
    b2 = m + w * rng.uniform(0.2, 1.0, (n, 1)) + rng.normal(size=(n, 3)) * 0.3
    return A, np.stack([b0, b1, b2], 1)


# Exactly representable categories ------------------------------------------------


def gen_coplanar_exact(n, tilted, seed=5):
    rng = np.random.default_rng(seed)
    A = _dyadic(rng, (n, 3, 3))
    B = _dyadic(rng, (n, 3, 3)) * 0.75 + _dyadic(rng, (n, 1, 3)) * 0.5
    for X in (A, B):
        X[..., 2] = X[..., 0] / 2 + X[..., 1] / 4 + 0.125 if tilted else 0.0
    return A, B


def gen_shared_vertex(n, seed=6):
    rng = np.random.default_rng(seed)
    A = rng.normal(size=(n, 3, 3))
    B = rng.normal(size=(n, 3, 3))
    r = np.arange(n)
    B[r, rng.integers(0, 3, n)] = A[r, rng.integers(0, 3, n)]
    return A, B


def gen_shared_edge(n, seed=7):
    rng = np.random.default_rng(seed)
    A = rng.normal(size=(n, 3, 3))
    B = rng.normal(size=(n, 3, 3))
    i = rng.integers(0, 3, n)
    r = np.arange(n)
    flip = rng.random(n) < 0.5
    B[r, 0] = A[r, i]
    B[r, 1] = A[r, (i + 1) % 3]
    B[flip] = B[flip][:, ::-1]
    return A, B


def gen_parallel_exact(n, coplanar, seed=8):
    """An edge of B is an exact power-of-two multiple of an edge of A (cross product exactly 0)."""
    rng = np.random.default_rng(seed + coplanar)
    A = _dyadic(rng, (n, 3, 3))
    B = _dyadic(rng, (n, 3, 3))
    s = rng.choice([-2.0, -1.0, -0.5, 0.5, 1.0, 2.0], n)[:, None]
    B[:, 1] = B[:, 0] + s * (A[:, 1] - A[:, 0])
    if coplanar:
        A[..., 2] = 0.0
        B[..., 2] = 0.0
    return A, B


def gen_collinear_exact(n, seed=10):
    """An edge of B lies exactly on the line of an edge of A (B in another plane)."""
    rng = np.random.default_rng(seed)
    A = _dyadic(rng, (n, 3, 3))
    B = _dyadic(rng, (n, 3, 3))
    e = A[:, 1] - A[:, 0]
    s = rng.choice([-2.0, -1.0, -0.5, 0.5, 1.0, 2.0], n)[:, None]
    B[:, 0] = A[:, 0] + _dyadic(rng, (n, 1), bits=6) * 2 * e
    B[:, 1] = B[:, 0] + s * e
    return A, B


def gen_degenerate(n, kind, seed=11):
    rng = np.random.default_rng(seed)
    A = _dyadic(rng, (n, 3, 3))
    B = _dyadic(rng, (n, 3, 3)) * 0.75
    if kind == "segment":  # B has a repeated corner
        B[:, 2] = B[:, 1]
    elif kind == "point":
        B[:, 1] = B[:, 0]
        B[:, 2] = B[:, 0]
    elif kind == "point-coplanar":  # a point in the triangle's plane z = 0
        B[:, 1] = B[:, 0]
        B[:, 2] = B[:, 0]
        A[..., 2] = 0.0
        B[..., 2] = 0.0
    elif kind == "collinear":  # third corner exactly the midpoint
        B[:, 2] = (B[:, 0] + B[:, 1]) / 2
    elif kind == "both-segments":  # half of them cross exactly at A's midpoint
        A[:, 2] = (A[:, 0] + A[:, 1]) / 2
        cross = rng.random(n) < 0.5
        B[cross, 0] = A[cross, 2] + B[cross, 1] / 2
        B[cross, 1] = A[cross, 2] - B[cross, 1] / 2
        B[:, 2] = B[:, 0]
    elif kind == "segment-coplanar":  # segment in the triangle's plane
        B[:, 2] = B[:, 1]
        A[..., 2] = 0.0
        B[..., 2] = 0.0
    elif kind == "both-segments-coplanar":
        A[:, 2] = (A[:, 0] + A[:, 1]) / 2
        B[:, 2] = B[:, 0]
        A[..., 2] = 0.0
        B[..., 2] = 0.0
    return A, B


FLOAT_CASES = {
    "random": lambda: gen_random(20000),
    "gap+1e-3": lambda: gen_gap(3000, 1e-3, 21),
    "gap+1e-6": lambda: gen_gap(3000, 1e-6, 22),
    "gap-1e-3": lambda: gen_gap(3000, -1e-3, 23),
    "gap-1e-6": lambda: gen_gap(3000, -1e-6, 24),
    "coplanar-rotated": lambda: gen_coplanar_rotated(3000),
    "near-parallel": lambda: gen_near_parallel(4000),
}
EXACT_CASES = {
    "coplanar-z0": lambda: gen_coplanar_exact(2000, tilted=False),
    "coplanar-tilted": lambda: gen_coplanar_exact(2000, tilted=True),
    "shared-vertex": lambda: gen_shared_vertex(2000),
    "shared-edge": lambda: gen_shared_edge(2000),
    "parallel-edge": lambda: gen_parallel_exact(2000, coplanar=False),
    "parallel-edge-coplanar": lambda: gen_parallel_exact(2000, coplanar=True),
    "collinear-edge": lambda: gen_collinear_exact(2000),
    "degenerate-segment": lambda: gen_degenerate(1500, "segment"),
    "degenerate-point": lambda: gen_degenerate(1500, "point"),
    "degenerate-point-coplanar": lambda: gen_degenerate(1500, "point-coplanar"),
    "degenerate-collinear": lambda: gen_degenerate(1500, "collinear"),
    "degenerate-both-segments": lambda: gen_degenerate(1500, "both-segments"),
    "degenerate-segment-coplanar": lambda: gen_degenerate(1500, "segment-coplanar"),
    "degenerate-both-segments-coplanar": lambda: gen_degenerate(1500, "both-segments-coplanar"),
}
ALL_CASES = {**FLOAT_CASES, **EXACT_CASES}


# Exact categories in which touching pairs are compared too (see the module doc).
TOUCH_STRICT = {"coplanar-z0", "coplanar-tilted", "shared-vertex", "shared-edge",
                "parallel-edge-coplanar", "degenerate-point-coplanar",
                "degenerate-segment-coplanar", "degenerate-both-segments-coplanar"}


@functools.lru_cache(maxsize=None)
def case(name):
    """(A, B, ref_hit, compare_mask, signed_gap) for a named category."""
    A, B = ALL_CASES[name]()
    hit, gap = classify(A, B)
    if name in TOUCH_STRICT:
        compare = np.ones(len(A), bool)
    else:
        compare = np.abs(gap) >= AMBIGUOUS
    return A, B, hit, compare, gap


@functools.lru_cache(maxsize=None)
def lib_hit(name):
    A, B = case(name)[:2]
    return tri_test(A, B)


@functools.lru_cache(maxsize=None)
def fcl_case(name):
    A, B = case(name)[:2]
    return fcl_hit(A, B)


def _mismatch_msg(name, A, B, bad, got, want, gap, peer="ref"):
    i = bad[0]
    return (
        f"{name}: {len(bad)} mismatches; first: lib={got[i]} {peer}={want[i]} gap={gap[i]:.3g}\n"
        f"A={A[i].tolist()}\nB={B[i].tolist()}"
    )


# ---------------------------------------------------------------------------
# test_triangle_triangle vs the numpy reference
# ---------------------------------------------------------------------------


def test_random_overlap_fraction_is_balanced():
    _, _, hit, compare, _ = case("random")
    assert 0.3 <= hit.mean() <= 0.5
    assert compare.sum() == len(compare)  # generic: nothing near touching


@pytest.mark.parametrize("name", list(FLOAT_CASES))
def test_matches_reference_float_cases(name):
    """Strict agreement where |signed gap| >= 1e-9 (the rest is counted, not compared)."""
    A, B, hit, compare, gap = case(name)
    got = lib_hit(name)
    bad = np.nonzero(compare & (got != hit))[0]
    assert len(bad) == 0, _mismatch_msg(name, A, B, bad, got, hit, gap)
    # keep the ambiguous share small, else the category tests nothing
    excluded = (~compare).mean()
    assert excluded < (0.9 if name == "coplanar-rotated" else 0.05), excluded


@pytest.mark.parametrize("name", list(EXACT_CASES))
def test_matches_reference_exact_cases(name):
    """Exactly representable inputs: touching counts as intersecting (see module doc)."""
    A, B, hit, compare, gap = case(name)
    dist = np.where(hit, 0.0, gap)
    # the reference is exact here: no true distance between 1e-12 and 1e-6
    assert not np.any((dist > 0) & (dist < 1e-6))
    got = lib_hit(name)
    bad = np.nonzero(compare & (got != hit))[0]
    assert len(bad) == 0, _mismatch_msg(name, A, B, bad, got, hit, gap)
    assert compare.mean() > 0.4  # collinear-edge and both-segments: about half only touch


def test_shared_features_always_intersect():
    for name in ("shared-vertex", "shared-edge"):
        A, B, hit, _, _ = case(name)
        assert hit.all()
        assert lib_hit(name).all()


def test_gap_construction_is_exact():
    """Self-check of the near-touching generator with the reference distance."""
    for name, g in (("gap+1e-3", 1e-3), ("gap+1e-6", 1e-6)):
        A, B, hit, _, gap = case(name)
        assert not hit.any()
        np.testing.assert_allclose(gap, g, rtol=0, atol=1e-13)
        assert not lib_hit(name).any()
    for name in ("gap-1e-3", "gap-1e-6"):
        _, _, hit, compare, _ = case(name)
        assert hit.mean() > 0.3  # most pushed pairs do intersect


def test_near_parallel_has_both_outcomes_near_touching():
    _, _, hit, compare, gap = case("near-parallel")
    assert 0.2 < hit[compare].mean() < 0.8
    assert np.sum(compare & (np.abs(gap) < 1e-4)) > 200


def test_regression_exactly_coplanar_tilted_overlap():
    """Exactly in the plane z = x/2 + y/4 (dyadic), B's centroid inside A: they meet.
    (b7df99c: rounding in the unit-edge normal separated them on the face normal.)"""
    a = np.array([[-0.75, 0.75, -0.1875], [-1.0, 0.25, -0.4375], [0.5, -0.5, 0.125]])
    b = np.array([[0.75, 0.25, 0.4375], [-0.25, -1.0, -0.375], [-0.75, 0.5, -0.25]])
    assert tri_test(a, b) is True
    assert tri_intersect(a, b) is not None


@pytest.mark.parametrize("a, b", [
    ([[0, 0, 0], [1, 0, 0], [0.5, 0, 0]], [[2, -1, 0], [2, 1, 0], [2, 0, 0]]),  # two segments, 1 apart
    ([[0, 0, 0], [1, 0, 0], [0, 1, 0]], [[1.1, -0.2, 0], [0.9, 0.3, 0], [0.9, 0.3, 0]]),  # segment 0.0186 off
    ([[0, 0, 0], [1, 0, 0], [0, 1, 0]], [[1.1, -0.2, 0], [0.9, 0.3, 0], [1.0, 0.05, 0]]),  # same, midpoint corner
])
def test_regression_degenerate_coplanar_separated(a, b):
    """A collinear 'triangle' in the other's plane, clearly apart: no axis of the
    17 is perpendicular to it in that plane (b7df99c reported overlap)."""
    a, b = np.array(a, float), np.array(b, float)
    assert tri_distance(a[None], b[None])[0][0] > 1e-2
    assert tri_test(a, b) is False


def test_regression_near_coplanar_segment_on_both():
    """B's corners are on x + y + z = 1 up to rounding; A is that plane's unit
    simplex. A returned segment must lie on both (b7df99c: (0, 0, 1), 0.044 off B)."""
    a = np.array([[1.0, 0, 0], [0, 1, 0], [0, 0, 1]])
    b = np.array([[-0.2, -0.2, 1.4], [0.0, 0.8, 0.2], [0.6, 0.9, -0.5]])
    seg = tri_intersect(a, b)
    if seg is not None:
        assert _endpoint_distances(a[None], b[None], seg[None])[0] < 1e-9, seg


def test_batched_shapes_and_single():
    A, B = gen_random(24, seed=99)
    flat = tri_test(A, B)
    assert flat.shape == (24,) and flat.dtype == np.bool_
    assert np.array_equal(tri_test(A.reshape(4, 6, 3, 3), B.reshape(4, 6, 3, 3)).ravel(), flat)
    assert np.array_equal(tri_test(A[0], B), tri_test(np.broadcast_to(A[0], B.shape), B))
    single = tri_test(A[3], B[3])
    assert isinstance(single, bool) and single == flat[3]


@pytest.mark.parametrize("bad", [np.nan, np.inf])
def test_rejects_non_finite(bad):
    A, B = gen_random(1, seed=98)
    A = A[0].copy()
    A[1, 2] = bad
    with pytest.raises(ValueError, match="t1"):
        tri_test(A, B[0])
    with pytest.raises(ValueError, match="t2"):
        tri_test(B[0], A)
    with pytest.raises(ValueError, match="t1"):
        tri_test(np.zeros((3, 2)), B[0])


# ---------------------------------------------------------------------------
# vs python-fcl and vs the LP
# ---------------------------------------------------------------------------

# fcl is not meant for degenerate triangles: on exact coplanar segment-vs-triangle
# pairs it misses separations (measured: ~1.5% of them), so those are not compared
# with it; they are compared with the numpy reference above.
FCL_NAMES = [n for n in ALL_CASES if not n.startswith("degenerate")]


@pytest.mark.parametrize("name", FCL_NAMES)
def test_matches_fcl(name):
    A, B, hit, compare, gap = case(name)
    got, ref = lib_hit(name), fcl_case(name)
    bad = np.nonzero(compare & (got != ref))[0]
    assert len(bad) == 0, _mismatch_msg(name + " vs fcl", A, B, bad, got, ref, gap, "fcl")


def test_fcl_agrees_with_numpy_reference():
    """Sanity of the two references against each other (non-degenerate, unambiguous)."""
    for name in FCL_NAMES:
        _, _, hit, compare, _ = case(name)
        assert np.array_equal(fcl_case(name)[compare], hit[compare]), name


def _lp_subset():
    parts = []
    for name, k in (("random", 300), ("gap+1e-6", 150), ("gap-1e-6", 150), ("near-parallel", 150),
                    ("coplanar-tilted", 100), ("coplanar-z0", 50), ("collinear-edge", 100),
                    ("degenerate-both-segments-coplanar", 100), ("degenerate-segment-coplanar", 100),
                    ("shared-edge", 50)):
        A, B, hit, compare, gap = case(name)
        idx = np.arange(k)
        parts.append((name, A[idx], B[idx], hit[idx], compare[idx]))
    return parts


def test_matches_lp_reference():
    """Library and numpy reference vs the LP L-inf distance (~1100 pairs).

    HiGHS resolves distances down to ~1e-9 only, so the LP decides "meet" at
    t <= 1e-10, and only pairs whose reference gap is >= 1e-7 or exactly
    representable are compared."""
    failures = []
    for name, A, B, hit, compare in _lp_subset():
        lp = np.array([lp_linf_distance(a, b) for a, b in zip(A, B)])
        lp_hit = lp <= 1e-10
        # cross-check the two references wherever the LP can resolve the answer
        gap = case(name)[4][: len(A)]
        resolved = compare & ((np.abs(gap) >= 1e-7) | (name not in FLOAT_CASES))
        assert np.array_equal(lp_hit[resolved], hit[resolved]), name
        got = tri_test(A, B)
        bad = np.nonzero(resolved & (got != lp_hit))[0]
        if len(bad):
            failures.append(_mismatch_msg(name + " vs LP", A, B, bad, got, lp_hit, gap, "lp"))
    assert not failures, "\n".join(failures)


# ---------------------------------------------------------------------------
# intersect_triangle_triangle
# ---------------------------------------------------------------------------


def brute_force_segment(a, b):
    """A ∩ B for non-coplanar triangles: A cut by B's plane (a chord of A), then
    clipped to the three inner half-spaces of B's edges."""
    nb = np.cross(b[1] - b[0], b[2] - b[0])
    s = (a - b[0]) @ nb
    pts = []
    for i in range(3):
        j = (i + 1) % 3
        if s[i] == 0:
            pts.append(a[i])
        if s[i] * s[j] < 0:
            pts.append(a[i] + (a[j] - a[i]) * (s[i] / (s[i] - s[j])))
    if not pts:
        return None
    pts = np.array(pts)
    d = ((pts[:, None] - pts[None]) ** 2).sum(-1)
    i, j = np.unravel_index(np.argmax(d), d.shape)
    p, q = pts[i], pts[j]
    t0, t1 = 0.0, 1.0
    for k in range(3):
        o, e, c = b[k], b[(k + 1) % 3] - b[k], b[(k + 2) % 3]
        m = np.cross(nb, e)
        if np.dot(m, c - o) < 0:
            m = -m
        fp, fq = np.dot(m, p - o), np.dot(m, q - o)
        if fp < 0 and fq < 0:
            return None
        if fp < 0:
            t0 = max(t0, fp / (fp - fq))
        elif fq < 0:
            t1 = min(t1, fp / (fp - fq))
    if t0 > t1:
        return None
    return np.array([p + (q - p) * t0, p + (q - p) * t1])


def _seg_err(s, t):
    return min(np.abs(s - t).max(), np.abs(s[::-1] - t).max())


def test_segment_equals_true_intersection_non_coplanar():
    A, B, hit, compare, gap = case("random")
    na = np.cross(A[:, 1] - A[:, 0], A[:, 2] - A[:, 0])
    nb = np.cross(B[:, 1] - B[:, 0], B[:, 2] - B[:, 0])
    sin = np.linalg.norm(np.cross(_unit(na), _unit(nb)), axis=1)
    idx = np.nonzero(hit & compare & (sin > 1e-3))[0][:1500]
    assert len(idx) == 1500
    worst = 0.0
    for i in idx:
        seg = tri_intersect(A[i], B[i])
        assert seg is not None and seg.shape == (2, 3)
        t1 = brute_force_segment(A[i], B[i])
        t2 = brute_force_segment(B[i], A[i])
        assert t1 is not None and t2 is not None
        assert _seg_err(t1, t2) < 1e-12  # the two brute-force views agree
        err = _seg_err(seg, t1)
        worst = max(worst, err)
        assert err < 1e-9, (i, A[i].tolist(), B[i].tolist(), seg, t1)


def _endpoint_distances(A, B, segs):
    P = segs.reshape(-1, 3)
    A2, B2 = np.repeat(A, 2, axis=0), np.repeat(B, 2, axis=0)
    da = np.linalg.norm(pt_tri(P, A2[:, 0], A2[:, 1], A2[:, 2]) - P, axis=1)
    db = np.linalg.norm(pt_tri(P, B2[:, 0], B2[:, 1], B2[:, 2]) - P, axis=1)
    return np.maximum(da, db).reshape(-1, 2).max(1)


SEGMENT_NAMES = ["random", "gap-1e-3", "gap-1e-6", "near-parallel", "coplanar-rotated",
                 "coplanar-z0", "coplanar-tilted", "shared-vertex", "shared-edge", "parallel-edge",
                 "parallel-edge-coplanar", "collinear-edge", "degenerate-segment",
                 "degenerate-point-coplanar", "degenerate-collinear", "degenerate-both-segments"]


@pytest.mark.parametrize("name", SEGMENT_NAMES)
def test_segment_endpoints_lie_on_both_triangles(name):
    """Whenever a segment is returned, both endpoints are within 1e-9 of both triangles."""
    A, B = case(name)[:2]
    got = lib_hit(name)
    idx = np.nonzero(got)[0][:400]
    assert len(idx) >= 50
    segs = np.array([tri_intersect(A[i], B[i]) for i in idx])
    assert segs.shape == (len(idx), 2, 3)
    d = _endpoint_distances(A[idx], B[idx], segs)
    bad = np.nonzero(~(d < 1e-9))[0]
    assert len(bad) == 0, (
        f"{name}: {len(bad)}/{len(idx)} segments leave a triangle, worst {np.nanmax(d):.3g}\n"
        f"A={A[idx[bad[0]]].tolist()}\nB={B[idx[bad[0]]].tolist()}\nseg={segs[bad[0]].tolist()}"
    )


def test_none_exactly_when_test_says_no():
    for name in ("random", "gap+1e-6", "gap-1e-6", "coplanar-z0", "degenerate-segment"):
        A, B = case(name)[:2]
        got = lib_hit(name)
        for i in range(300):
            seg = tri_intersect(A[i], B[i])
            assert (seg is not None) == got[i], (name, i)


def test_touching_gives_point_segment():
    """A vertex of B exactly on A's face (axis-aligned, exact): a zero-length segment there."""
    a = np.array([[0, 0, 0], [1, 0, 0], [0, 1, 0.0]])
    b = np.array([[0.25, 0.25, 0], [0.5, 0.25, 1], [0.25, 0.5, 1.0]])
    seg = tri_intersect(a, b)
    np.testing.assert_allclose(seg, [[0.25, 0.25, 0], [0.25, 0.25, 0]], atol=1e-15)
    assert tri_intersect(a, b + [0, 0, 1e-6]) is None


def test_intersect_rejects_batches():
    A, B = gen_random(2, seed=97)
    with pytest.raises(ValueError, match="t1"):
        tri_intersect(A, B)


# ---------------------------------------------------------------------------
# Hypothesis
# ---------------------------------------------------------------------------

coords = st.floats(-1.0, 1.0, allow_nan=False, width=64)
tri_strategy = arrays(np.float64, (3, 3), elements=coords)


def _area2(t):
    return np.linalg.norm(np.cross(t[1] - t[0], t[2] - t[0]))


def _nondegenerate(t):
    return _area2(t) > 1e-3


HYP = settings(
    max_examples=300, deadline=None, database=None, derandomize=True,
    suppress_health_check=[HealthCheck.filter_too_much, HealthCheck.too_slow],
)


@HYP
@given(a=tri_strategy, b=tri_strategy, shift=arrays(np.float64, (3,), elements=st.floats(-0.5, 0.5)))
def test_hypothesis_matches_reference(a, b, shift):
    assume(_nondegenerate(a) and _nondegenerate(b))
    b = b * 0.5 + shift
    hit, gap = classify(a[None], b[None])
    assume(abs(gap[0]) >= AMBIGUOUS)
    assert tri_test(a, b) == hit[0]
    assert tri_test(b, a) == hit[0]
    assert tri_test(a[[1, 2, 0]], b[[0, 2, 1]]) == hit[0]


@HYP
@given(a=tri_strategy, b=tri_strategy, k=st.integers(-20, 20))
def test_hypothesis_power_of_two_scale_invariant(a, b, k):
    """Scaling both triangles by 2^k is exact in floating point: same answer."""
    assert tri_test(a, b) == tri_test(a * 2.0**k, b * 2.0**k)


@HYP
@given(a=tri_strategy, b=tri_strategy, shift=arrays(np.float64, (3,), elements=st.floats(-0.3, 0.3)))
def test_hypothesis_segment_endpoints_on_both(a, b, shift):
    assume(_nondegenerate(a) and _nondegenerate(b))
    b = b * 0.7 + shift
    seg = tri_intersect(a, b)
    assert (seg is None) == (not tri_test(a, b))
    if seg is None:
        return
    d = _endpoint_distances(a[None], b[None], seg[None])[0]
    assert d < 1e-9, (a.tolist(), b.tolist(), seg.tolist(), d)


# ---------------------------------------------------------------------------
# The distance searched below a bound (the traversals' leaf test)
# ---------------------------------------------------------------------------


@HYP
@given(a=tri_strategy, b=tri_strategy, shift=arrays(np.float64, (3,), elements=st.floats(-1.5, 1.5)),
       scale=st.sampled_from([0.0, 0.3, 0.9, 0.999999, 1.000001, 1.1, 3.0, np.inf]))
def test_hypothesis_distance_below_bound_equals_reference(a, b, shift, scale):
    """Below the bound: the unbounded answer (and the numpy reference's distance); else the bound."""
    from obbcollide.triangle import closest_pt_triangle_triangle_below_t, closest_pt_triangle_triangle_t
    b = b * 0.5 + shift
    ta, tb = tuple(map(tuple, a)), tuple(map(tuple, b))
    x0, y0, d0 = closest_pt_triangle_triangle_t(*ta, *tb)
    ref = float(tri_distance(a[None], b[None])[0][0]) ** 2
    assert abs(d0 - ref) <= 1e-12 * max(1.0, ref)
    bound = d0 * scale if np.isfinite(scale) else np.inf
    x, y, d = closest_pt_triangle_triangle_below_t(*ta, *tb, bound)
    if d0 < bound:
        assert d == d0 or abs(d - d0) <= 1e-15 * max(1.0, d0)  # the same minimum (maybe another pair on a tie)
        assert abs(np.sum((np.array(x) - np.array(y)) ** 2) - d) <= 1e-12
        assert np.linalg.norm(_pt_on(a, np.array(x))) < 1e-9 and np.linalg.norm(_pt_on(b, np.array(y))) < 1e-9
    else:
        assert d == bound


def _pt_on(t, p):
    """Offset of ``p`` from its projection onto the triangle ``t`` (3, 3), by the numpy reference."""
    q = pt_tri(p[None], t[None, 0], t[None, 1], t[None, 2])[0]
    return p - q
