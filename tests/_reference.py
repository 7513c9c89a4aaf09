"""Independent reference solvers and shared hypothesis strategies for the tests.

Nothing here calls :mod:`collision`: every reference answer is computed by a
different method than the library's, so a test compares two independent
computations, never a function against itself.

Reference methods
-----------------
- Closest point in the convex hull of a few points (segment, triangle,
  tetrahedron, box corners, hull of a point cloud): the exact quadratic program
  ``min |sum_i w_i v_i - p|^2, w >= 0, sum w = 1`` solved by *enumerating every
  active set*: for each subset of at most ``dim + 1`` vertices we project ``p``
  onto the subset's affine hull (least squares through a pseudo-inverse) and
  keep the projection if its barycentric weights are all >= 0. By
  Caratheodory's theorem the optimum lies in the convex hull of such a subset,
  so the best kept candidate is the exact optimum (up to rounding).
- Closest pair of two convex hulls: the closest point to the origin of the
  Minkowski difference ``{a_i - b_j}``, by the same enumeration; its weights
  give the pair.
- Plane / implicit line: the KKT linear system of the equality-constrained
  least-squares problem.
- Sphere / circle: a dense sample of the surface, refined by BFGS on an
  unconstrained direction parameter; the solid ball by SLSQP with the
  inequality constraint ``|x - c| <= r``.
- Infinite lines: the linear least-squares problem in ``(s, t)``.
- 2D predicates: exact rational arithmetic (``fractions.Fraction``) on the
  float inputs, which are exact binary fractions.
"""

import itertools
from fractions import Fraction
from functools import lru_cache

import numpy as np
from hypothesis import assume
from hypothesis import strategies as st
from scipy.optimize import minimize

# ---------------------------------------------------------------------------
# Tolerances
# ---------------------------------------------------------------------------

# Relative tolerance of the geometric checks. Inputs are O(10); the kernels and
# the references each do a handful of dot products and one division, so for
# non-degenerate inputs both are accurate to ~1e-14 * scale. 1e-9 * scale leaves
# five orders of magnitude for round-off (e.g. needle triangles, where the
# library divides by a small denominator) while any wrong Voronoi region or
# wrong clamp is off by O(scale) and still fails by a wide margin.
REL_TOL = 1e-9

# Closest points in a convex set are unique, and if both points are in the set
# with distances within ``eps`` of the optimum ``d`` then they differ by at most
# sqrt(2 d eps + eps^2). With eps = 1e-9 * scale and d <= ~50 that bound is
# ~1e-4; in practice both points agree to ~1e-12. We use 1e-7 * scale: tight
# enough to catch a wrong answer, loose enough for the reference's round-off.
POINT_TOL = 1e-7


def scale_of(*arrays):
    """Size of the problem: max(1, largest absolute coordinate)."""
    m = 1.0
    for a in arrays:
        a = np.asarray(a, dtype=float)
        if a.size:
            m = max(m, float(np.max(np.abs(a))))
    return m


# ---------------------------------------------------------------------------
# Exact QP over convex combinations: active-set enumeration
# ---------------------------------------------------------------------------


@lru_cache(maxsize=None)
def _combos(m, k):
    return np.array(list(itertools.combinations(range(m), k)), dtype=np.int64).reshape(-1, k)


def closest_in_hull(p, verts):
    """Closest point to ``p`` in the convex hull of ``verts`` (exact QP).

    Parameters
    ----------
    p : (dim,) array
    verts : (m, dim) array, m >= 1

    Returns
    -------
    x : (dim,) closest point (a convex combination of ``verts``)
    dist : float, ``|x - p|``
    weights : (m,) barycentric weights of ``x`` (>= 0, summing to 1)
    """
    p = np.asarray(p, dtype=float)
    V = np.asarray(verts, dtype=float)
    m, dim = V.shape
    best = (None, np.inf, None)
    with np.errstate(all="ignore"):  # subsets spanning subnormal distances
        for k in range(1, min(m, dim + 1) + 1):
            best = _best_of_subsets(p, V, k, best)
    return best


def _best_of_subsets(p, V, k, best):
    """Improve ``best`` with the projections of ``p`` on all ``k``-vertex subsets."""
    m = len(V)
    idx = _combos(m, k)
    S = V[idx]  # (s, k, dim)
    if k == 1:
        lam = np.ones((len(idx), 1))
    else:
        base = S[:, 0, :]
        E = np.transpose(S[:, 1:, :] - base[:, None, :], (0, 2, 1))  # (s, dim, k-1)
        w = (np.linalg.pinv(E, rcond=1e-13) @ (p - base)[:, :, None])[:, :, 0]
        lam = np.concatenate([1.0 - w.sum(1, keepdims=True), w], axis=1)
    ok = np.all(lam >= -1e-12, axis=1)  # NaN (from a subnormal subset) is not ok
    if not np.any(ok):
        return best
    lam = np.clip(lam[ok], 0.0, None)
    lam /= lam.sum(1, keepdims=True)
    X = np.einsum("sk,skd->sd", lam, S[ok])
    dim = V.shape[1]
    if k >= dim:
        # A non-degenerate simplex: when it is full-dimensional it contains p;
        # when it is a facet, p projects into it along the facet normal.
        # Weighting the corners would carry the barycentrics' error (eps over
        # the square of the smallest angle) into X; the normal taken at the
        # largest angle is good to eps over that angle's sine.
        with np.errstate(all="ignore"):
            sv = np.linalg.svd(E[ok], compute_uv=False)
        proper = sv[:, -1] > 1e-13 * sv[:, 0]
        if k == dim + 1:
            X[proper] = p
        else:
            off, valid = _offset_along_normal(p, S[ok][proper])
            rows = np.flatnonzero(proper)[valid]
            X[rows] = p - off[valid]
    d = np.sqrt(np.sum((X - p) ** 2, axis=1))
    i = int(np.argmin(d))
    if d[i] < best[1]:
        weights = np.zeros(m)
        np.add.at(weights, idx[ok][i], lam[i])
        best = (X[i], float(d[i]), weights)
    return best


def _offset_along_normal(p, S):
    """The component of ``p - facet`` along each facet's normal: ``(s, dim)``,
    and ``(s,)`` bool, False where the normal vanished.

    ``S`` is ``(s, dim, dim)``: segments in 2D or triangles in 3D.
    """
    dim = S.shape[1]
    if dim == 2:
        e = S[:, 1] - S[:, 0]
        n = np.stack([-e[:, 1], e[:, 0]], axis=1)
    else:
        a, b, c = S[:, 0], S[:, 1], S[:, 2]
        edges = np.stack([b - a, c - b, a - c], axis=1)  # opposite c, a, b
        longest = np.argmax(np.sum(edges ** 2, axis=2), axis=1)
        r = np.arange(len(S))
        e1 = edges[r, (longest + 1) % 3]
        e2 = edges[r, (longest + 2) % 3]
        n = np.cross(e1, e2)
    with np.errstate(all="ignore"):
        n = n / np.abs(n).max(axis=1, keepdims=True)  # no underflow in n . n
        nn = np.sum(n * n, axis=1, keepdims=True)
        h = np.sum(n * (p - S[:, 0]), axis=1, keepdims=True)
        out = n * (h / nn)
    valid = np.all(np.isfinite(out), axis=1)
    return out, valid


def dist_to_hull(q, verts):
    """Distance from ``q`` to the convex hull of ``verts``."""
    return closest_in_hull(q, verts)[1]


def closest_between_hulls(A, B):
    """Closest pair of the convex hulls of ``A`` and ``B``: ``(c1, c2, dist)``.

    Minimises over the Minkowski difference ``conv(A) - conv(B)``.
    """
    A = np.asarray(A, dtype=float)
    B = np.asarray(B, dtype=float)
    D = (A[:, None, :] - B[None, :, :]).reshape(-1, A.shape[1])
    _, dist, w = closest_in_hull(np.zeros(A.shape[1]), D)
    w = w.reshape(len(A), len(B))
    return w.sum(1) @ A, w.sum(0) @ B, dist


def box_corners(center, axes, half):
    """The 2^k corners of ``center + sum_i s_i half_i axes_i``, ``s_i = +-1``."""
    center = np.asarray(center, float)
    axes = np.asarray(axes, float)
    half = np.asarray(half, float)
    signs = np.array(list(itertools.product((-1.0, 1.0), repeat=len(half))))
    return center + (signs * half) @ axes


def random_rotation(rng):
    """A uniformly random proper rotation (3, 3) from a numpy Generator (QR of a Gaussian)."""
    q, r = np.linalg.qr(rng.normal(size=(3, 3)))
    q = q * np.sign(np.diag(r))
    if np.linalg.det(q) < 0:
        q[:, 0] = -q[:, 0]
    return q


def rotation(quat):
    """The rotation matrix of a (not necessarily unit) quaternion ``(w, x, y, z)``."""
    w, x, y, z = np.asarray(quat, float) / np.linalg.norm(quat)
    return np.array([
        [1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
        [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
        [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)],
    ])


# ---------------------------------------------------------------------------
# Plane, line, sphere
# ---------------------------------------------------------------------------


def closest_on_plane_kkt(p, n, d):
    """``argmin |x - p|^2`` s.t. ``n . x = d`` from the KKT system."""
    p = np.asarray(p, float)
    n = np.asarray(n, float)
    dim = len(p)
    K = np.zeros((dim + 1, dim + 1))
    K[:dim, :dim] = 2.0 * np.eye(dim)
    K[:dim, dim] = n
    K[dim, :dim] = n
    rhs = np.concatenate([2.0 * p, [d]])
    return np.linalg.solve(K, rhs)[:dim]


def line_line_distance(p1, q1, p2, q2):
    """Lines through ``p1 q1`` and ``p2 q2``: ``(dist, v)`` by linear least squares.

    ``v`` is the unique shortest vector ``c1 - c2`` between the lines (the
    closest points themselves are not unique for parallel lines, ``v`` is).
    The direction columns are normalised first, so a very short (but non-zero)
    direction still spans its line; a zero direction is dropped (a point).
    """
    p1, q1, p2, q2 = (np.asarray(x, float) for x in (p1, q1, p2, q2))
    cols = []
    for d in (q1 - p1, -(q2 - p2)):
        n = np.linalg.norm(d)
        if n > 0.0:
            cols.append(d / n)
    r = p1 - p2
    if not cols:
        return float(np.linalg.norm(r)), r
    M = np.stack(cols, axis=1)
    coef, *_ = np.linalg.lstsq(M, -r, rcond=None)
    v = r + M @ coef
    return float(np.linalg.norm(v)), v


def _sphere_directions(dim, n=4000):
    if dim == 2:
        ang = np.linspace(0.0, 2.0 * np.pi, n, endpoint=False)
        return np.stack([np.cos(ang), np.sin(ang)], axis=1)
    i = np.arange(n) + 0.5
    z = 1.0 - 2.0 * i / n
    phi = np.pi * (1.0 + 5.0 ** 0.5) * i
    rho = np.sqrt(1.0 - z * z)
    return np.stack([rho * np.cos(phi), rho * np.sin(phi), z], axis=1)


def closest_on_sphere_numeric(p, c, r):
    """Closest point on the sphere (circle) surface: dense sample + BFGS."""
    p = np.asarray(p, float)
    c = np.asarray(c, float)
    U = _sphere_directions(len(p))
    X = c + r * U
    u0 = U[np.argmin(np.sum((X - p) ** 2, axis=1))]

    def f(u):
        nu = np.linalg.norm(u)
        x = c + r * u / nu
        g_x = 2.0 * (x - p)
        # d(u/|u|)/du = (I - uu^T/|u|^2) / |u|
        g_u = r * (g_x - u * (u @ g_x) / nu ** 2) / nu
        return float(np.sum((x - p) ** 2)), g_u

    res = minimize(f, u0, jac=True, method="BFGS", options={"gtol": 1e-13, "maxiter": 200})
    u = res.x if f(res.x)[0] <= f(u0)[0] else u0
    return c + r * u / np.linalg.norm(u)


def closest_in_ball_numeric(p, c, r):
    """Closest point in the solid ball by SLSQP with ``|x - c|^2 <= r^2``."""
    p = np.asarray(p, float)
    c = np.asarray(c, float)
    start = closest_on_sphere_numeric(p, c, r)
    res = minimize(
        lambda x: float(np.sum((x - p) ** 2)),
        start,
        jac=lambda x: 2.0 * (x - p),
        constraints=[{"type": "ineq", "fun": lambda x: r * r - float(np.sum((x - c) ** 2)),
                      "jac": lambda x: -2.0 * (x - c)}],
        method="SLSQP",
        options={"ftol": 1e-15, "maxiter": 200},
    )
    x = res.x
    # Keep whichever feasible candidate is better (SLSQP may stop early).
    cand = [start] + ([x] if np.linalg.norm(x - c) <= r * (1 + 1e-12) + 1e-15 else [])
    return min(cand, key=lambda y: float(np.sum((y - p) ** 2)))


# ---------------------------------------------------------------------------
# Exact 2D predicates (rational arithmetic)
# ---------------------------------------------------------------------------


def exact_area2(a, b, c):
    """Exact twice-signed-area ``(b - a) x (c - a)`` of float inputs, as a Fraction."""
    ax, ay, bx, by, cx, cy = (Fraction(float(x)) for x in (*a, *b, *c))
    return (bx - ax) * (cy - ay) - (by - ay) * (cx - ax)


def exact_segment_intersection_2d(a, b, c, d):
    """Exact intersection of closed 2D segments ``ab`` and ``cd``.

    Returns ``(hit, t)`` where ``t`` (a Fraction) is the smallest parameter of
    ``ab`` at a common point (``a + t (b - a)``), or ``None`` when there is no
    hit. For a degenerate ``ab`` (a point) ``t = 0``.
    """
    A, B, C, D = ([Fraction(float(x)) for x in pt] for pt in (a, b, c, d))
    u = (B[0] - A[0], B[1] - A[1])
    w = (D[0] - C[0], D[1] - C[1])
    cross = lambda x, y: x[0] * y[1] - x[1] * y[0]  # noqa: E731
    dot = lambda x, y: x[0] * y[0] + x[1] * y[1]  # noqa: E731
    ac = (C[0] - A[0], C[1] - A[1])
    den = cross(u, w)
    if den != 0:
        t = cross(ac, w) / den
        s = cross(ac, u) / den
        if 0 <= t <= 1 and 0 <= s <= 1:
            return True, t
        return False, None
    # Parallel or degenerate: the set of common points.
    uu = dot(u, u)
    ww = dot(w, w)
    if uu == 0 and ww == 0:
        return (A == C), (Fraction(0) if A == C else None)
    if uu == 0:
        # ab is the point a: on cd?
        if cross(ac, w) != 0:
            return False, None
        s = -dot(ac, w) / ww  # a = c + s w  =>  s = (a - c).w / ww
        return (0 <= s <= 1), (Fraction(0) if 0 <= s <= 1 else None)
    if cross(ac, u) != 0:
        return False, None  # parallel, distinct lines (or cd a point off the line)
    tc = dot(ac, u) / uu
    ad = (D[0] - A[0], D[1] - A[1])
    td = dot(ad, u) / uu
    lo, hi = min(tc, td), max(tc, td)
    if hi < 0 or lo > 1:
        return False, None
    return True, max(lo, Fraction(0))


# ---------------------------------------------------------------------------
# Hypothesis strategies
# ---------------------------------------------------------------------------

coord = st.floats(min_value=-10.0, max_value=10.0, allow_nan=False, allow_infinity=False)
small_int = st.integers(min_value=-6, max_value=6).map(float)
# Dyadic coordinates (multiples of 1/4): sums, midpoints and small multiples are
# exact in binary floating point, so "exactly on an edge", "exactly collinear"
# and "exactly coplanar" inputs can be built.
dyadic = st.integers(min_value=-24, max_value=24).map(lambda k: k / 4.0)

# Strategies are cached: building them inside every draw costs more than the
# geometry.


@lru_cache(maxsize=None)
def vec(dim=3, elements=coord):
    return st.lists(elements, min_size=dim, max_size=dim).map(lambda xs: np.array(xs, dtype=float))


@lru_cache(maxsize=None)
def point(dim=3):
    """Random floats, or dyadic grid points (which make exact coincidences likely)."""
    return st.one_of(vec(dim), vec(dim, dyadic), vec(dim, small_int))


TRIANGLE_KINDS = ("generic", "grid", "coincident2", "coincident2-float", "coincident3",
                  "collinear", "needle")
_TRI_KIND = st.sampled_from(("generic",) + TRIANGLE_KINDS)
_COLLINEAR_K = st.sampled_from([-1.0, -0.5, 0.25, 0.5, 0.75, 1.5, 2.0])
_NEEDLE_EPS = st.sampled_from([1e-6, 1e-9, 1e-12])
_UNIT_BOX = {d: vec(d, st.floats(-1.0, 1.0)) for d in (2, 3)}
_K = st.floats(-0.5, 1.5)
_PERM3 = st.permutations([0, 1, 2])


def assume_distinct(*pts):
    """Reject coincident corners: those have their own families."""
    assume(all(not np.array_equal(x, y) for x, y in itertools.combinations(pts, 2)))


@st.composite
def triangle(draw, dim=3, kind=None):
    """A triangle ``(a, b, c)``: generic, or deliberately degenerate.

    ``kind`` (one of ``TRIANGLE_KINDS``) fixes the family; by default it is drawn.

    Degenerate kinds: two or three coincident corners (on the dyadic grid and
    with arbitrary floats), exactly collinear corners, and needles (the third
    corner 1e-6 .. 1e-12 off the line of the other two).
    """
    if kind is None:
        kind = draw(_TRI_KIND)
    if kind == "generic":
        a, b, c = (draw(vec(dim)) for _ in range(3))
        assume_distinct(a, b, c)
        return a, b, c
    if kind == "coincident2-float":
        a, c = draw(vec(dim)), draw(vec(dim))
        return tuple([a, a.copy(), c][i] for i in draw(_PERM3))
    a = draw(vec(dim, dyadic))
    b = draw(vec(dim, dyadic))
    if kind == "grid":
        c = draw(vec(dim, dyadic))
        assume_distinct(a, b, c)
        return a, b, c
    if kind == "coincident3":
        return a, a.copy(), a.copy()
    if kind == "coincident2":
        return tuple([a, a.copy(), b][i] for i in draw(_PERM3))
    if kind == "collinear":
        c = a + draw(_COLLINEAR_K) * (b - a)  # exact: dyadic values, small multipliers
        return tuple([a, b, c][i] for i in draw(_PERM3))
    # needle: third corner a tiny distance off the line ab
    assume(np.linalg.norm(b - a) >= 0.25)
    return a, b, a + draw(_K) * (b - a) + draw(_NEEDLE_EPS) * draw(_UNIT_BOX[dim])


_NEAR_KIND = st.sampled_from(["random", "random", "vertex", "edge", "face", "offset"])


@lru_cache(maxsize=None)
def _index_pair(m):
    return st.permutations(range(m)).map(lambda xs: xs[:2])


@lru_cache(maxsize=None)
def _weights(m):
    return st.lists(st.integers(0, 4), min_size=m, max_size=m)


_OFFSET = {d: vec(d, st.floats(-3.0, 3.0)) for d in (2, 3)}


def draw_point_near(draw, verts, dim=3):
    """Draw a query point: random, a vertex, an exact edge midpoint, a face point, or off a face."""
    verts = [np.asarray(x, float) for x in verts]
    kind = draw(_NEAR_KIND)
    if kind == "random" or len(verts) < 2:
        return draw(point(dim))
    i, j = draw(_index_pair(len(verts)))
    if kind == "vertex":
        return verts[i].copy()
    if kind == "edge":
        return 0.5 * (verts[i] + verts[j])
    w = np.array(draw(_weights(len(verts))), float)
    if w.sum() == 0:
        w[0] = 1.0
    x = (w / w.sum()) @ np.array(verts)
    if kind == "face":
        return x
    return x + draw(_OFFSET[dim])


@st.composite
def point_near(draw, verts, dim=3):
    return draw_point_near(draw, verts, dim)


def bad_values(shape):
    """Inputs that must be rejected for an argument whose one item has ``shape``.

    Returns ``(label, value)`` pairs: wrong trailing shape, NaN, inf, text,
    ragged lists, complex numbers, None.

    A scalar argument (``shape == ()``) has no wrong shape of its own: any
    shape is a batch, and a batch that does not broadcast is reported by name
    in a separate message.
    """
    good = np.ones(shape)
    nan = good.copy()
    nan.flat[0] = np.nan
    inf = good.copy()
    inf.flat[-1] = -np.inf
    out = [("nan", nan), ("inf", inf), ("text", "abc"), ("complex", good + 1j), ("none", None)]
    if shape:
        out.append(("wrong-shape", np.ones(shape[:-1] + (shape[-1] + 2,))))
        out.append(("ragged", [list(good.reshape(-1, shape[-1])[0]), [1.0]]))
        out.append(("text-array", np.full(shape, "x")))
    else:
        out.append(("ragged", [[1.0, 2.0], [1.0]]))
    return out
