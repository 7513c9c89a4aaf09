"""OBB fitting (from_points, from_triangles) and the 15-axis OBB-OBB test.

test_obb_obb is compared on ~45000 box pairs with three independent references:

* a brute-force separating-axis test in numpy, long double: the 15 axes are
  formed explicitly (3 + 3 face normals, 9 normalised edge cross products), all
  8 corners of each box are projected on each, and the largest separation is
  the signed gap G (G > 0 separated; for overlapping boxes -G is the
  penetration depth). Cross products shorter than 1e-9 are skipped: their
  sliver faces move G by less than ~1e-9.
* scipy ``linprog``: min s s.t. |A_i . (x - c_A)| <= e_A,i + s and the same for
  B; s* <= 0 iff the closed boxes share a point (~1500-pair subset).
* python-fcl: ``fcl.Box`` + ``fcl.collide``.

Tolerance. The library adds OBB_EPSILON to every |R_ij| (RTCD 4.4.1), so it is
deliberately conservative: on the cross axis of two edges at angle theta it may
call boxes apart by less than about eps * (sum of extents) / sin(theta)
overlapping (its docstring says so). Each pair's band is that bound (times 4,
with a floor of 1e-8 for rounding); pairs with |G| inside their band are
excluded from the strict comparisons, everywhere else the answer must be exact.
Separately, an overlap (G <= 0) must never be reported as a separation.

Near-touching pairs are built exactly: B starts at A's centre and slides along a
direction d to the far parameter t where G(t) = gap. G is the maximum of 30
functions affine in t, so t is a closed-form minimum of ratios.
"""

import functools

import fcl
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays
from scipy.optimize import linprog

from obbcollide.obb import OBB, OBB_EPSILON
from obbcollide.obb import test_obb_obb as obb_test

LD = np.longdouble
CONSERVATIVE_BAND = 1e-8  # rounding floor of the band in which the library may err towards "overlap"


def conservative_band(boxes):
    """Per pair: the documented slack of the epsilon, 4 eps (sum of extents) / min sin(theta_ij)."""
    ca, aa, ea, cb, ab, eb = (np.asarray(x, float) for x in boxes)
    r = np.einsum("nik,njk->nij", aa, ab)
    sin_min = np.sqrt(np.clip(1.0 - r ** 2, 0.0, None)).reshape(len(r), -1)
    sin_min = np.where(sin_min > 1e-12, sin_min, np.inf).min(axis=1)  # exactly parallel: no cross axis
    slack = 4.0 * OBB_EPSILON * (ea.sum(1) + eb.sum(1)) / sin_min
    return np.maximum(CONSERVATIVE_BAND, slack)
SIGNS = np.array([[i, j, k] for i in (-1, 1) for j in (-1, 1) for k in (-1, 1)], float)


# ---------------------------------------------------------------------------
# References
# ---------------------------------------------------------------------------


def rand_rot(rng, n):
    """Uniform random rotations (unit quaternions); rows orthonormal, det +1."""
    q = rng.normal(size=(n, 4))
    q /= np.linalg.norm(q, axis=1)[:, None]
    w, x, y, z = q.T
    return np.stack([
        np.stack([1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)], -1),
        np.stack([2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)], -1),
        np.stack([2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)], -1),
    ], 1)


def small_rot(rng, n, angles):
    """Rotations by the given angles about random axes (Rodrigues)."""
    u = rng.normal(size=(n, 3))
    u /= np.linalg.norm(u, axis=1)[:, None]
    K = np.zeros((n, 3, 3))
    K[:, 0, 1], K[:, 0, 2], K[:, 1, 2] = -u[:, 2], u[:, 1], -u[:, 0]
    K[:, 1, 0], K[:, 2, 0], K[:, 2, 1] = u[:, 2], -u[:, 1], u[:, 0]
    s, c = np.sin(angles)[:, None, None], np.cos(angles)[:, None, None]
    return np.eye(3) + s * K + (1 - c) * K @ K


def box_corners(c, ax, e):
    """(n, 8, 3) corners; ``ax`` has the axes as rows."""
    return c[:, None, :] + np.einsum("kj,nj,nji->nki", SIGNS.astype(c.dtype), e, ax)


def _sat_pieces(ca, aa, ea, cb, ab, eb):
    ca, aa, ea, cb, ab, eb = (np.asarray(x, LD) for x in (ca, aa, ea, cb, ab, eb))
    ka, kb = box_corners(ca, aa, ea), box_corners(cb, ab, eb)
    axes = [aa[:, i] for i in range(3)] + [ab[:, j] for j in range(3)]
    axes += [np.cross(aa[:, i], ab[:, j]) for i in range(3) for j in range(3)]
    M = np.stack(axes, 1)
    nrm = np.sqrt((M * M).sum(-1))
    valid = nrm > 1e-9
    M = M / np.where(valid, nrm, 1)[..., None]
    pa = np.einsum("nki,nmi->nmk", ka, M)
    pb = np.einsum("nki,nmi->nmk", kb, M)
    return M, valid, pb.min(-1) - pa.max(-1), pa.min(-1) - pb.max(-1)


def sat_gap(ca, aa, ea, cb, ab, eb):
    """Signed gap G: the largest separation over the 15 axes (brute force)."""
    _, valid, s_plus, s_minus = _sat_pieces(ca, aa, ea, cb, ab, eb)
    sep = np.where(valid, np.maximum(s_plus, s_minus), -np.inf)
    return sep.max(1).astype(float)


def place_at_gap(ca, aa, ea, ab, eb, d, gap):
    """Centre for B on the ray ca + t d (unit d) with the largest t where G = gap."""
    M, valid, s_plus, s_minus = _sat_pieces(ca, aa, ea, ca, ab, eb)
    md = (M * np.asarray(d, LD)[:, None, :]).sum(-1)
    a = np.concatenate([s_plus, s_minus], 1)
    b = np.concatenate([md, -md], 1)
    ok = np.concatenate([valid, valid], 1) & (b > 1e-12)
    t = np.where(ok, (LD(gap) - a) / np.where(ok, b, 1), np.inf).min(1)
    return (np.asarray(ca, LD) + t[:, None] * np.asarray(d, LD)).astype(float)


def lp_inflation(ca, aa, ea, cb, ab, eb):
    """min s: some x lies in both boxes grown by s in every slab. s <= 0 iff they meet."""
    rows = np.vstack([aa, ab])
    c = np.r_[aa @ ca, ab @ cb]
    e = np.r_[ea, eb]
    a_ub = np.vstack([np.c_[rows, -np.ones(6)], np.c_[-rows, -np.ones(6)]])
    b_ub = np.r_[e + c, e - c]
    res = linprog(np.r_[0, 0, 0, 1.0], A_ub=a_ub, b_ub=b_ub, bounds=[(None, None)] * 4,
                  method="highs",
                  options=dict(primal_feasibility_tolerance=1e-10, dual_feasibility_tolerance=1e-10))
    assert res.status == 0, res.message
    return res.fun


def fcl_overlap(ca, aa, ea, cb, ab, eb):
    out = np.empty(len(ca), bool)
    req = fcl.CollisionRequest()
    for i in range(len(ca)):
        oa = fcl.CollisionObject(fcl.Box(*(2 * ea[i])), fcl.Transform(aa[i].T.copy(), ca[i]))
        ob = fcl.CollisionObject(fcl.Box(*(2 * eb[i])), fcl.Transform(ab[i].T.copy(), cb[i]))
        out[i] = fcl.collide(oa, ob, req, fcl.CollisionResult()) > 0
    return out


def lib_overlap(ca, aa, ea, cb, ab, eb, return_axis=False):
    res = [obb_test(OBB(ca[i], aa[i], ea[i]), OBB(cb[i], ab[i], eb[i]), return_axis=return_axis)
           for i in range(len(ca))]
    if return_axis:
        return np.array([r[0] for r in res]), np.array([r[1] for r in res])
    return np.array(res)


# ---------------------------------------------------------------------------
# Box-pair cases: (ca, aa, ea, cb, ab, eb)
# ---------------------------------------------------------------------------


def _boxes(rng, n):
    return rng.normal(size=(n, 3)) * 0.8, rand_rot(rng, n), rng.uniform(0.1, 1.0, (n, 3))


def gen_random(n, seed=1):
    rng = np.random.default_rng(seed)
    ca, aa, ea = _boxes(rng, n)
    cb, ab, eb = _boxes(rng, n)
    return ca, aa, ea, cb, ab, eb


def gen_gap(n, gap, seed, parallel=None):
    """B touching-close to A along a random direction; ``parallel``: B's axes are
    A's rotated by 10^U(lo, hi) rad (0 for exactly parallel)."""
    rng = np.random.default_rng(seed)
    ca, aa, ea = _boxes(rng, n)
    eb = rng.uniform(0.1, 1.0, (n, 3))
    if parallel is None:
        ab = rand_rot(rng, n)
    elif parallel == 0:
        ab = aa.copy()
    else:
        lo, hi = parallel
        ab = np.einsum("nij,njk->nik", aa, small_rot(rng, n, 10.0 ** rng.uniform(lo, hi, n)).transpose(0, 2, 1))
    d = rng.normal(size=(n, 3))
    d /= np.linalg.norm(d, axis=1)[:, None]
    return ca, aa, ea, place_at_gap(ca, aa, ea, ab, eb, d, gap), ab, eb


def gen_edge_contact(n, gap, seed=40):
    """Near-parallel boxes (B's axes turned 1e-5..1e-3 rad) whose contact is the
    sliver face of two near-parallel edges A_i, B_i: normal u = unit(A_i x B_i),
    B placed at the centre of that parallelogram face + gap * u. Extents 0.5..2."""
    rng = np.random.default_rng(seed)
    ca, aa, _ = _boxes(rng, n)
    ea, eb = rng.uniform(0.5, 2.0, (n, 3)), rng.uniform(0.5, 2.0, (n, 3))
    ab = np.einsum("nij,njk->nik", aa, small_rot(rng, n, 10.0 ** rng.uniform(-5, -3, n)).transpose(0, 2, 1))
    i = rng.integers(0, 3, n)
    r = np.arange(n)
    u = np.cross(aa[r, i], ab[r, i])
    u /= np.linalg.norm(u, axis=1)[:, None]
    # centre of the face: A's support edge for +u minus B's support edge for -u
    t = np.einsum("nm,nm,nmk->nk", np.sign(np.einsum("nmk,nk->nm", aa, u)), ea, aa)
    t += np.einsum("nm,nm,nmk->nk", np.sign(np.einsum("nmk,nk->nm", ab, u)), eb, ab)
    t -= (ea[r, i] * np.sign(np.einsum("nk,nk->n", aa[r, i], u)))[:, None] * aa[r, i]
    t -= (eb[r, i] * np.sign(np.einsum("nk,nk->n", ab[r, i], u)))[:, None] * ab[r, i]
    return ca, aa, ea, ca + t + gap * u, ab, eb


CASES = {
    "random": lambda: gen_random(20000),
    "gap+1e-3": lambda: gen_gap(3000, 1e-3, 11),
    "gap+1e-6": lambda: gen_gap(3000, 1e-6, 12),
    "gap-1e-6": lambda: gen_gap(3000, -1e-6, 13),
    "gap-1e-3": lambda: gen_gap(3000, -1e-3, 14),
    "parallel-gap+1e-6": lambda: gen_gap(2000, 1e-6, 21, parallel=0),
    "parallel-gap-1e-6": lambda: gen_gap(2000, -1e-6, 22, parallel=0),
    "near-parallel-gap+1e-3": lambda: gen_gap(2000, 1e-3, 23, parallel=(-10, -2)),
    "near-parallel-gap+1e-6": lambda: gen_gap(2000, 1e-6, 24, parallel=(-10, -2)),
    "near-parallel-gap-1e-6": lambda: gen_gap(2000, -1e-6, 25, parallel=(-10, -2)),
    "edge-contact-gap+1e-6": lambda: gen_edge_contact(2000, 1e-6),
    "edge-contact-gap-1e-6": lambda: gen_edge_contact(2000, -1e-6, seed=41),
}


@functools.lru_cache(maxsize=None)
def case(name):
    boxes = CASES[name]()
    return boxes, sat_gap(*boxes)


@functools.lru_cache(maxsize=None)
def lib_case(name):
    return lib_overlap(*case(name)[0], return_axis=True)


@functools.lru_cache(maxsize=None)
def fcl_case(name):
    return fcl_overlap(*case(name)[0])


def _msg(name, boxes, bad, got, G, peer="exact"):
    i = bad[0]
    ca, aa, ea, cb, ab, eb = (x[i].tolist() for x in boxes)
    return (f"{name}: {len(bad)} mismatches; first: lib overlap={got[i]}, {peer} gap={G[i]:.3g}\n"
            f"A=OBB({ca}, {aa}, {ea})\nB=OBB({cb}, {ab}, {eb})")


# ---------------------------------------------------------------------------
# test_obb_obb
# ---------------------------------------------------------------------------


def test_case_construction():
    _, G = case("random")
    assert 0.3 < (G <= 0).mean() < 0.5
    for name, gap in (("gap+1e-3", 1e-3), ("gap+1e-6", 1e-6), ("gap-1e-6", -1e-6),
                      ("near-parallel-gap+1e-6", 1e-6), ("edge-contact-gap+1e-6", 1e-6),
                      ("edge-contact-gap-1e-6", -1e-6)):
        np.testing.assert_allclose(case(name)[1], gap, rtol=0, atol=1e-13)
    total = sum(len(case(n)[1]) for n in CASES)
    assert total >= 40000


@pytest.mark.parametrize("name", list(CASES))
def test_matches_brute_force_sat(name):
    """Exact outside each pair's documented conservative band."""
    boxes, G = case(name)
    got, _ = lib_case(name)
    compare = np.abs(G) >= conservative_band(boxes)
    # Near-parallel cases (theta down to 1e-10) put many pairs inside their band;
    # there the library may only err towards overlap.
    assert compare.mean() > 0.3, "the band must not swallow the test"
    assert not np.any(~got & (G <= 0)), "an overlap was reported as a separation"
    bad = np.nonzero(compare & (got != (G <= 0)))[0]
    assert len(bad) == 0, _msg(name, boxes, bad, got, G)


@pytest.mark.parametrize("name", list(CASES))
def test_matches_fcl(name):
    boxes, G = case(name)
    got, _ = lib_case(name)
    ref = fcl_case(name)
    compare = np.abs(G) >= conservative_band(boxes)
    assert np.array_equal(ref[compare], (G <= 0)[compare]), "fcl disagrees with the brute-force SAT"
    bad = np.nonzero(compare & (got != ref))[0]
    assert len(bad) == 0, _msg(name + " vs fcl", boxes, bad, got, G)


def test_matches_lp():
    """~1500 pairs against the LP. HiGHS resolves s* to ~1e-9; our gaps are >= 1e-6
    (s* >= gap / (2 sqrt 3) when apart), so no pair here is near its tolerance."""
    for name, k in (("random", 500), ("gap+1e-6", 250), ("gap-1e-6", 250),
                    ("near-parallel-gap+1e-6", 200), ("parallel-gap-1e-6", 100),
                    ("edge-contact-gap+1e-6", 200)):
        boxes, G = case(name)
        sub = tuple(x[:k] for x in boxes)
        s = np.array([lp_inflation(*(x[i] for x in sub)) for i in range(k)])
        assert np.all(np.abs(s) > 1e-8), name
        assert np.array_equal(s <= 0, G[:k] <= 0), name  # the two references agree
        got = lib_case(name)[0][:k]
        outside_band = np.abs(G[:k]) >= conservative_band(sub)
        bad = np.nonzero(outside_band & (got != (s <= 0)))[0]
        assert len(bad) == 0, _msg(name + " vs LP", sub, bad, got, G[:k])


def test_edge_contact_unit_cubes():
    """Deterministic form of the edge-contact case: two unit-half-extent cubes, B
    turned by 1e-4 rad about (0, 1, 1)/sqrt 2, 1e-5 apart across the sliver face
    of the near-parallel x edges. Apart by 1e-5 >> 1e-8: must be separated."""
    u = np.array([0.0, 1.0, 1.0]) / np.sqrt(2.0)
    K = np.array([[0, -u[2], u[1]], [u[2], 0, -u[0]], [-u[1], u[0], 0]])
    rot = np.eye(3) + np.sin(1e-4) * K + (1 - np.cos(1e-4)) * K @ K
    aa, ab, e = np.eye(3), rot.T.copy(), np.ones(3)  # rows of ab: the rotated axes
    d = np.cross(aa[0], ab[0])
    d /= np.linalg.norm(d)
    cb = place_at_gap(np.zeros((1, 3)), aa[None], e[None], ab[None], e[None], d[None], 1e-5)[0]
    G = sat_gap(np.zeros((1, 3)), aa[None], e[None], cb[None], ab[None], e[None])[0]
    assert abs(G - 1e-5) < 1e-15
    assert lp_inflation(np.zeros(3), aa, e, cb, ab, e) > 1e-6
    assert fcl_overlap(np.zeros((1, 3)), aa[None], e[None], cb[None], ab[None], e[None])[0] == False  # noqa: E712
    a, b = OBB(np.zeros(3), aa, e), OBB(cb, ab, e)
    assert obb_test(a, b, eps=0.0) is False
    assert obb_test(a, b) is False, (
        f"reported overlap at gap 1e-5: OBB_EPSILON={OBB_EPSILON} on an axis of length "
        f"|A_0 x B_0| = 1e-4 is a slack of ~eps * extent / 1e-4; cb={cb.tolist()}")


def test_conservative_never_false_separation():
    """Overlapping or exactly touching (G <= 0, down to 1e-12) is never reported apart;
    tiny positive gaps may be reported as overlap (the epsilon), larger ones not."""
    hit_rate = {}
    for gap, seed in ((0.0, 31), (-1e-12, 32), (-1e-10, 33), (1e-12, 34), (1e-10, 35), (1e-9, 36)):
        for parallel in (None, (-10, -2)):
            boxes = gen_gap(1500, gap, seed, parallel=parallel)
            G = sat_gap(*boxes)
            got = lib_overlap(*boxes)
            bad = np.nonzero((G <= -1e-13) & ~got)[0] if gap <= 0 else []
            assert len(bad) == 0, _msg(f"gap {gap}", boxes, bad, got, G)
            hit_rate[gap, parallel] = got.mean()
    # at gap 0 rounding decides; the epsilon tips it towards overlap
    assert hit_rate[0.0, None] > 0.9 and hit_rate[0.0, (-10, -2)] > 0.9


@pytest.mark.parametrize("name", ["random", "gap+1e-6", "near-parallel-gap+1e-6", "parallel-gap+1e-6"])
def test_return_axis_truly_separates(name):
    """The returned index names an axis on which the corner projections are disjoint."""
    boxes, G = case(name)
    ca, aa, ea, cb, ab, eb = boxes
    got, k = lib_case(name)
    assert np.all(k[got] == -1)
    sep = np.nonzero(~got)[0]
    assert len(sep) > 500 and np.all((k[sep] >= 0) & (k[sep] <= 14))
    kk = k[sep]
    axis = np.empty((len(sep), 3), dtype=LD)
    A = aa[sep].astype(LD)
    B = ab[sep].astype(LD)
    r = np.arange(len(sep))
    face_a, face_b, edge = kk < 3, (kk >= 3) & (kk < 6), kk >= 6
    axis[face_a] = A[r[face_a], kk[face_a]]
    axis[face_b] = B[r[face_b], kk[face_b] - 3]
    i, j = (kk[edge] - 6) // 3, (kk[edge] - 6) % 3
    axis[edge] = np.cross(A[r[edge], i], B[r[edge], j])
    pa = np.einsum("nki,ni->nk", box_corners(ca[sep].astype(LD), A, ea[sep].astype(LD)), axis)
    pb = np.einsum("nki,ni->nk", box_corners(cb[sep].astype(LD), B, eb[sep].astype(LD)), axis)
    disjoint = (pa.max(1) < pb.min(1)) | (pb.max(1) < pa.min(1))
    assert disjoint.all(), (name, sep[~disjoint][:5], kk[~disjoint][:5])


def test_symmetric_and_translation_invariant():
    boxes, G = case("random")
    ca, aa, ea, cb, ab, eb = (x[:3000] for x in boxes)
    ab_ = lib_overlap(ca, aa, ea, cb, ab, eb)
    assert np.array_equal(ab_, lib_overlap(cb, ab, eb, ca, aa, ea))
    shift = np.array([3.0, -2.0, 1.0])
    assert np.array_equal(ab_, lib_overlap(ca + shift, aa, ea, cb + shift, ab, eb))


def test_identical_and_contained_boxes_overlap():
    rng = np.random.default_rng(5)
    for c, ax, e in zip(*_boxes(rng, 200)):
        a = OBB(c, ax, e)
        assert obb_test(a, a)
        assert obb_test(a, OBB(c, ax, e * 0.1))
        assert obb_test(a, OBB(c, ax, np.zeros(3)))  # a point box at the centre


def test_zero_extent_boxes():
    """Flat and point boxes are valid (extents >= 0)."""
    a = OBB(np.zeros(3), np.eye(3), [1.0, 1.0, 0.0])
    assert obb_test(a, OBB([0, 0, 1e-6], np.eye(3), [1, 1, 0]), eps=0.0) is False
    assert obb_test(a, OBB([0.5, 0.5, 0.0], np.eye(3), [0, 0, 0]))
    assert obb_test(a, OBB([1.5, 0.0, 0.0], np.eye(3), [0.49, 0, 0])) is False


# ---------------------------------------------------------------------------
# OBB.from_points / from_triangles
# ---------------------------------------------------------------------------


def _check_frame(box):
    ax = box.axes
    np.testing.assert_allclose(ax @ ax.T, np.eye(3), atol=1e-12)
    assert abs(np.linalg.det(ax) - 1.0) < 1e-12
    assert np.all(box.half_extents >= 0)


def _same_axes(a, b, tol):
    """Rows equal up to sign."""
    return np.all(np.abs(np.abs(np.einsum("ij,ij->i", a, b)) - 1.0) < tol)


@pytest.mark.parametrize("seed", range(20))
def test_from_points_frame_contains_and_is_covariance_eigenbasis(seed):
    rng = np.random.default_rng(seed)
    R = rand_rot(rng, 1)[0]
    n = int(rng.integers(10, 2000))
    pts = (rng.normal(size=(n, 3)) * [3.0, 1.5, 0.5]) @ R + rng.normal(size=3) * 10
    box = OBB.from_points(pts)
    _check_frame(box)
    assert box.contains(pts).all()
    local = (pts - box.center) @ box.axes.T  # tight: points on both faces of every slab
    np.testing.assert_allclose(np.abs(local).max(0), box.half_extents, atol=1e-9)
    np.testing.assert_allclose(local.max(0), -local.min(0), atol=1e-9)
    cov = np.cov(pts.T)
    lam = np.einsum("ij,jk,ik->i", box.axes, cov, box.axes)
    assert np.all(np.diff(lam) <= 0)  # decreasing eigenvalues
    resid = box.axes @ cov - lam[:, None] * box.axes
    assert np.abs(resid).max() < 1e-9 * np.abs(cov).max()
    w, v = np.linalg.eigh(cov)
    assert _same_axes(box.axes, v[:, ::-1].T, 1e-8)
    np.testing.assert_allclose(lam, w[::-1], rtol=1e-9)


def _box_surface(dims, fine_face_n=0):
    """Triangles of an axis-aligned box surface, centred at 0. With fine_face_n > 0
    the +x face is a (2n x n) grid of 4 n^2 triangles, the others 2 triangles each."""
    hx, hy, hz = np.asarray(dims, float) / 2
    tris = []

    def quad(p, u, v, nu, nv):
        for i in range(nu):
            for j in range(nv):
                a = p + u * i / nu + v * j / nv
                b, c, d = a + u / nu, a + u / nu + v / nv, a + v / nv
                tris.extend([[a, b, c], [a, c, d]])

    X, Y, Z = np.array([2 * hx, 0, 0]), np.array([0, 2 * hy, 0]), np.array([0, 0, 2 * hz])
    n = fine_face_n
    quad(np.array([hx, -hy, -hz]), Y, Z, 2 * n if n else 1, n if n else 1)  # +x face
    quad(np.array([-hx, -hy, -hz]), Z, Y, 1, 1)
    quad(np.array([-hx, -hy, -hz]), X, Z, 1, 1)
    quad(np.array([-hx, hy, -hz]), Z, X, 1, 1)
    quad(np.array([-hx, -hy, -hz]), Y, X, 1, 1)
    quad(np.array([-hx, -hy, hz]), X, Y, 1, 1)
    return np.array(tris)


def test_from_triangles_is_tessellation_independent():
    rng = np.random.default_rng(7)
    R, t = rand_rot(rng, 1)[0], rng.normal(size=3)
    coarse = _box_surface([4.0, 2.0, 1.0]) @ R + t
    fine = _box_surface([4.0, 2.0, 1.0], fine_face_n=20) @ R + t
    assert len(coarse) == 12 and len(fine) == 10 + 4 * 20**2
    bc, bf = OBB.from_triangles(coarse), OBB.from_triangles(fine)
    for box, tri in ((bc, coarse), (bf, fine)):
        _check_frame(box)
        assert box.contains(tri.reshape(-1, 3)).all()
    # same surface, same area-weighted covariance: same box
    assert _same_axes(bc.axes, bf.axes, 1e-9)
    np.testing.assert_allclose(bc.half_extents, bf.half_extents, atol=1e-9)
    np.testing.assert_allclose(bc.center, bf.center, atol=1e-9)
    # ... which is the box itself
    assert _same_axes(bc.axes, R, 1e-9)
    np.testing.assert_allclose(bc.half_extents, [2.0, 1.0, 0.5], atol=1e-9)
    # vertex covariance follows the dense face: from_points of the fine mesh turns away
    corners = (SIGNS * [2.0, 1.0, 0.5]) @ R + t
    assert _same_axes(OBB.from_points(corners).axes, R, 1e-9)  # the 8 corners: box frame
    pf = OBB.from_points(fine.reshape(-1, 3))
    assert not _same_axes(pf.axes, R, 1e-2)
    assert pf.volume > bf.volume * 1.01 or not _same_axes(pf.axes, bf.axes, 1e-2)


def test_from_triangles_subdivision_invariant_random_mesh():
    """Midpoint 1->4 subdivision keeps the surface; the fit must not move."""
    rng = np.random.default_rng(8)
    tri = rng.normal(size=(40, 3, 3)) * [3.0, 1.0, 0.4]
    sub = tri
    for _ in range(2):
        a, b, c = sub[:, 0], sub[:, 1], sub[:, 2]
        ab, bc, ca = (a + b) / 2, (b + c) / 2, (c + a) / 2
        sub = np.concatenate([np.stack(x, 1) for x in ([a, ab, ca], [ab, b, bc], [ca, bc, c], [ab, bc, ca])])
    b1, b2 = OBB.from_triangles(tri), OBB.from_triangles(sub)
    assert _same_axes(b1.axes, b2.axes, 1e-9)
    np.testing.assert_allclose(b1.half_extents, b2.half_extents, atol=1e-9)
    assert b1.contains(tri.reshape(-1, 3)).all() and b2.contains(sub.reshape(-1, 3)).all()


@settings(max_examples=200, deadline=None, database=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(pts=arrays(np.float64, st.tuples(st.integers(1, 40), st.just(3)),
                  elements=st.floats(-100, 100, allow_nan=False)))
def test_hypothesis_from_points(pts):
    box = OBB.from_points(pts)
    _check_frame(box)
    assert box.contains(pts, tol=1e-9 * (1 + np.abs(pts).max())).all()


@settings(max_examples=100, deadline=None, database=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(tri=arrays(np.float64, st.tuples(st.integers(1, 12), st.just(3), st.just(3)),
                  elements=st.floats(-100, 100, allow_nan=False)))
def test_hypothesis_from_triangles(tri):
    box = OBB.from_triangles(tri)
    _check_frame(box)
    assert box.contains(tri.reshape(-1, 3), tol=1e-9 * (1 + np.abs(tri).max())).all()


def test_degenerate_point_sets():
    rng = np.random.default_rng(9)
    p = rng.normal(size=3)
    for pts in (p[None], np.repeat(p[None], 7, 0)):  # one point, repeated point
        box = OBB.from_points(pts)
        _check_frame(box)
        np.testing.assert_array_equal(box.half_extents, 0.0)
        np.testing.assert_allclose(box.center, p, atol=1e-15)
        assert box.contains(pts).all()
    u = rng.normal(size=3)
    u /= np.linalg.norm(u)
    line = p + np.linspace(-2.0, 3.0, 11)[:, None] * u  # collinear
    box = OBB.from_points(line)
    _check_frame(box)
    np.testing.assert_allclose(box.half_extents, [2.5, 0, 0], atol=1e-12)
    assert abs(abs(box.axes[0] @ u) - 1) < 1e-12
    assert box.contains(line).all()
    R = rand_rot(rng, 1)[0]
    plane = np.c_[rng.normal(size=(50, 2)) * [2.0, 1.0], np.zeros(50)] @ R + p  # coplanar
    box = OBB.from_points(plane)
    _check_frame(box)
    assert box.half_extents[2] < 1e-12 and box.half_extents[1] > 0.1
    assert abs(abs(box.axes[2] @ R[2]) - 1) < 1e-12
    assert box.contains(plane).all()
    # axis-aligned exact inputs give exactly zero extents
    sq = np.array([[0, 0, 0], [1, 0, 0], [0, 2, 0], [1, 2, 0.0]])
    assert OBB.from_points(sq).half_extents.min() == 0.0


def test_degenerate_triangle_sets():
    rng = np.random.default_rng(10)
    R = rand_rot(rng, 1)[0]
    one = (np.c_[rng.normal(size=(3, 2)), np.zeros(3)] @ R)[None]  # a single triangle
    box = OBB.from_triangles(one)
    _check_frame(box)
    assert box.half_extents[2] < 1e-12 and box.contains(one[0]).all()
    u = rng.normal(size=3)
    slivers = rng.uniform(-1, 1, (5, 3))[..., None] * u  # all zero-area, collinear
    box = OBB.from_triangles(slivers)
    _check_frame(box)
    assert np.all(box.half_extents[1:] < 1e-12) and box.contains(slivers.reshape(-1, 3)).all()
    points = np.zeros((4, 3, 3)) + rng.normal(size=3)  # all corners one point
    box = OBB.from_triangles(points)
    _check_frame(box)
    np.testing.assert_array_equal(box.half_extents, 0.0)


# ---------------------------------------------------------------------------
# Bad input
# ---------------------------------------------------------------------------

GOOD = dict(center=np.zeros(3), axes=np.eye(3), half_extents=np.ones(3))


@pytest.mark.parametrize("field, value", [
    ("center", [np.nan, 0.0, 0.0]),
    ("center", [0.0, np.inf, 0.0]),
    ("axes", np.where(np.eye(3) == 1, np.nan, 0.0)),
    ("half_extents", [1.0, np.nan, 1.0]),
    ("half_extents", [1.0, -0.5, 1.0]),
    ("axes", np.eye(3) * 2.0),  # not unit
    ("axes", [[1, 0, 0], [0.1, 1, 0], [0, 0, 1.0]]),  # not orthogonal
    ("axes", np.zeros((3, 3))),
    ("center", np.zeros(2)),
    ("axes", np.eye(2)),
    ("half_extents", np.ones(4)),
    ("center", "abc"),
])
def test_obb_rejects_bad_fields(field, value):
    kwargs = dict(GOOD)
    kwargs[field] = value
    with pytest.raises(ValueError, match=field):
        OBB(**kwargs)


@pytest.mark.parametrize("pts", [np.zeros((0, 3)), np.zeros((4, 2)), [[0, 0, np.nan]], np.zeros(3)])
def test_from_points_rejects(pts):
    with pytest.raises(ValueError, match="points"):
        OBB.from_points(pts)


@pytest.mark.parametrize("tri", [np.zeros((0, 3, 3)), np.zeros((2, 3, 2)), np.full((1, 3, 3), np.inf)])
def test_from_triangles_rejects(tri):
    with pytest.raises(ValueError, match="triangles"):
        OBB.from_triangles(tri)
