"""The vector-symbol method: collision of polygonal models from signs alone.

Zhang, Ma and Yu, *Vector symbol analysis for collision detection of models in
three dimensions* (seed 003). A *standard model* is a convex polyhedron whose
faces are *standard polygons*: convex, planar, counter-clockwise seen from
outside. The method is built from one quantity, the **position factor**

    D(V, P) = (V - V_r) . n_P,

positive when the point ``V`` is outside polygon ``P``'s plane, negative
inside, zero on it (``V_r`` a reference vertex of ``P``, ``n_P`` its outward
normal). From its signs:

- the **intersection factor** ``I(P, Q)`` of two polygons, by five cases:
  (1)-(3) one polygon entirely on one side of the other's plane, (4) coplanar,
  all ``I = 0``; (5) each polygon straddles the other's plane, decided by the
  **shielding planes**;
- the **containment factor** ``E(M, N)``: every vertex of ``N`` inside ``M``;
- the **model collision factor** ``C(M, N) = sum I + E(M, N) + E(N, M)``;
- non-convex models as unions of standard models: ``B = sum C``.

Shielding planes (case 5). The line ``Y`` where the two planes meet crosses
polygon ``P`` at two points ``X1, X2`` on its boundary (found as the *sign zero
points* and *sign change points* of ``D(V_k, Q)`` around ``P``). Through each
passes the plane of the edge it lies on, perpendicular to ``P``, with normal
``edge x n_P`` pointing out of ``P``: the shielding planes ``P_f`` and ``P_b``.
On ``Y`` they bound exactly the chord ``X1 X2`` of ``P``.

Where we depart from the paper, and why:

- The paper classifies case 5 by the signs of *all vertices* of ``Q`` against
  ``P_f`` and ``P_b``. Vertices of ``Q`` off the line ``Y`` say nothing about
  where ``Q`` meets ``Y`` (a long thin ``Q`` can have vertices on both sides of
  ``P_f`` while its chord lies wholly outside ``P``), so we apply the same
  signs to ``Q``'s own chord end points ``Y1, Y2``, the points where ``Q``
  crosses ``P``'s plane. Sub-cases as in the paper: (5e) both ends beyond
  ``P_f`` or both beyond ``P_b``: ``I = 0``; (5g) both ends strictly inside
  both: ``Q``'s chord lies within ``P``'s, ``I != 0``; (5f) otherwise, partial
  overlap, ``I != 0``.
- The paper's normal from the first three vertices is not unit length in
  general; we use the unit (Newell) normal. Only signs matter either way.
- Exact zero does not survive floating point: ``D`` counts as zero when
  ``|D| <= ZERO_TOL * scale`` (``scale`` the models' coordinate size).
- ``E`` uses ``D <= 0`` (closed), not the paper's ``D < 0``: with the strict
  rule, two identical models (every vertex on a face) would not collide.

The touching convention of the paper, kept here: polygons that are coplanar
(case 4), that touch the other's plane at one vertex, or along an edge
(two adjacent sign-zero points), or whose chords only touch, do **not**
intersect. The method therefore detects interpenetration: models that only
touch do not collide. One consequence to know: overlapping models whose
faces meet only in such degenerate ways (two equal axis-aligned boxes offset
along one axis: every face pair is coplanar or touches along an edge) are
reported as not colliding. Models in general position, such as randomly
posed hulls, never hit that case; there the method agrees with the SAT test
(:func:`collision.sat.convex_convex_sat`), which the tests check.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ._jit import njit
from ._validate import as_array
from .convex import ConvexPolyhedron

__all__ = [
    "StandardModel",
    "VectorSymbolResult",
    "position_factor",
    "polygon_intersection_factor",
    "model_collision_factor",
    "vector_symbol_collide",
    "CASE_NAMES",
]

ZERO_TOL = 1e-12

#: Codes stored in :attr:`VectorSymbolResult.cases` for each polygon pair.
CASE_NAMES = {
    1: "1: both on one side of each other's plane",
    2: "2: only Q on one side of P's plane",
    3: "3: only P on one side of Q's plane",
    4: "4: coplanar",
    5: "5e: both straddle, chords disjoint (shielded)",
    6: "5f: both straddle, chords partly overlap",
    7: "5g: both straddle, one chord inside the other",
    8: "touch: a polygon meets the other plane at a vertex or along an edge",
}


@dataclass(frozen=True, eq=False)
class StandardModel:
    """A convex model made of standard polygons (seed 003, section 2.1).

    Attributes
    ----------
    vertices : (n, 3) float64
    starts : (f + 1,) int64
        Polygon ``j`` is ``indices[starts[j]:starts[j + 1]]``.
    indices : (k,) int64
        Vertex indices, counter-clockwise seen from outside.
    normals : (f, 3) float64
        Unit outward normals ``n_j``.
    refs : (f, 3) float64
        Reference points ``V_jr`` (the first vertex of each polygon).
    """

    vertices: NDArray[np.float64]
    starts: NDArray[np.int64]
    indices: NDArray[np.int64]
    normals: NDArray[np.float64]
    refs: NDArray[np.float64]

    @classmethod
    def from_polyhedron(cls, poly: ConvexPolyhedron) -> StandardModel:
        """The standard model of a :class:`~collision.convex.ConvexPolyhedron`."""
        starts = np.zeros(len(poly.polygons) + 1, dtype=np.int64)
        starts[1:] = np.cumsum([len(p) for p in poly.polygons])
        indices = np.concatenate(poly.polygons).astype(np.int64)
        refs = poly.vertices[[p[0] for p in poly.polygons]]
        return cls(poly.vertices, starts, indices, np.ascontiguousarray(poly.normals), refs)

    @classmethod
    def from_points(cls, points: ArrayLike) -> StandardModel:
        """The standard model of the convex hull of ``points`` ((n, 3))."""
        return cls.from_polyhedron(ConvexPolyhedron.from_points(points))

    @classmethod
    def from_mesh(cls, vertices: ArrayLike, faces: Iterable[ArrayLike]) -> StandardModel:
        """A standard model from a convex mesh's own faces (coplanar faces merged)."""
        return cls.from_polyhedron(ConvexPolyhedron.from_mesh(vertices, faces))

    def transformed(self, pose: ArrayLike) -> StandardModel:
        """This model moved by a 4x4 rigid transform."""
        pose = as_array(pose, "pose", (4, 4))
        rot, t = pose[:3, :3], pose[:3, 3]
        return StandardModel(self.vertices @ rot.T + t, self.starts, self.indices,
                             self.normals @ rot.T, self.refs @ rot.T + t)

    @property
    def polygons(self) -> list[NDArray[np.int64]]:
        """List of ``(k_j,)`` index arrays."""
        return [self.indices[a:b] for a, b in zip(self.starts[:-1], self.starts[1:])]


def _as_model(m, name):
    if isinstance(m, StandardModel):
        return m
    if isinstance(m, ConvexPolyhedron):
        return StandardModel.from_polyhedron(m)
    raise ValueError(f"{name}: expected a StandardModel or ConvexPolyhedron, got {type(m).__name__}")


def position_factor(points: ArrayLike, model: StandardModel | ConvexPolyhedron,
                    face: int) -> float | NDArray[np.float64]:
    """Position factor ``D(V, P)`` of points against polygon ``face`` of ``model``.

    Parameters
    ----------
    points : (..., 3) float64
    model : StandardModel
    face : int

    Returns
    -------
    d : (...,) float64
        ``> 0`` outside the polygon's plane, ``< 0`` inside, ``0`` on it.
    """
    pts = as_array(points, "points", (3,))
    model = _as_model(model, "model")
    if not 0 <= face < len(model.normals):
        raise ValueError(f"face: {face} out of range for a model with {len(model.normals)} polygons")
    return (pts - model.refs[face]) @ model.normals[face]


@njit
def _sign(x, tol):
    if x > tol:
        return 1
    if x < -tol:
        return -1
    return 0


@njit
def _crossings(vp, sp, idx, a, b, dq):
    """Sign zero points and sign change points of polygon ``idx[a:b]``.

    ``dq`` holds ``D(V_k, Q)`` for its vertices, ``sp`` their signs. Returns
    ``(count, k1, k2, x1 (3,), x2 (3,), zeros, adjacent_zeros)``: the first two
    polygon positions found, the points where the polygon meets ``Q``'s plane,
    how many were zero points, and whether two zero points are neighbours.
    """
    n = b - a
    ks = np.empty(2, dtype=np.int64)
    xs = np.zeros((2, 3))
    count = 0
    zeros = 0
    zk0 = -1
    adjacent = False
    for k in range(n):
        if count == 2:
            break
        k1 = (k + 1) % n
        vi = idx[a + k]
        vj = idx[a + k1]
        if sp[k] == 0:
            ks[count] = k
            xs[count, 0] = vp[vi, 0]
            xs[count, 1] = vp[vi, 1]
            xs[count, 2] = vp[vi, 2]
            if zk0 >= 0 and (k - zk0 == 1 or (zk0 == 0 and k == n - 1)):
                adjacent = True
            if zk0 < 0:
                zk0 = k
            zeros += 1
            count += 1
        elif sp[k] * sp[k1] < 0:
            t = dq[k] / (dq[k] - dq[k1])
            ks[count] = k
            for c in range(3):
                xs[count, c] = vp[vi, c] + t * (vp[vj, c] - vp[vi, c])
            count += 1
    # A zero at the last vertex adjacent to one at the first.
    if zeros == 2 and ks[0] == 0 and ks[1] == n - 1:
        adjacent = True
    return count, ks[0], ks[1], xs[0].copy(), xs[1].copy(), zeros, adjacent


@njit
def polygon_factor_kernel(va, sa, ia, na, ra, fa, vb, sb, ib, nb, rb, fb, tol):
    """``(I, case)`` for polygon ``fa`` of model A against polygon ``fb`` of model B."""
    a0, a1 = sa[fa], sa[fa + 1]
    b0, b1 = sb[fb], sb[fb + 1]
    ka = a1 - a0
    kb = b1 - b0
    da = np.empty(ka)
    db = np.empty(kb)
    sga = np.empty(ka, dtype=np.int64)
    sgb = np.empty(kb, dtype=np.int64)
    pos_a = neg_a = zero_a = 0
    for k in range(ka):
        vi = ia[a0 + k]
        d = ((va[vi, 0] - rb[fb, 0]) * nb[fb, 0] + (va[vi, 1] - rb[fb, 1]) * nb[fb, 1]
             + (va[vi, 2] - rb[fb, 2]) * nb[fb, 2])
        da[k] = d
        s = _sign(d, tol)
        sga[k] = s
        pos_a += s > 0
        neg_a += s < 0
        zero_a += s == 0
    pos_b = neg_b = zero_b = 0
    for k in range(kb):
        vi = ib[b0 + k]
        d = ((vb[vi, 0] - ra[fa, 0]) * na[fa, 0] + (vb[vi, 1] - ra[fa, 1]) * na[fa, 1]
             + (vb[vi, 2] - ra[fa, 2]) * na[fa, 2])
        db[k] = d
        s = _sign(d, tol)
        sgb[k] = s
        pos_b += s > 0
        neg_b += s < 0
        zero_b += s == 0
    if zero_a == ka or zero_b == kb:
        return 0, 4  # case 4: coplanar
    same_a = pos_a == ka or neg_a == ka
    same_b = pos_b == kb or neg_b == kb
    if same_a and same_b:
        return 0, 1
    if same_b:
        return 0, 2
    if same_a:
        return 0, 3
    # Case 5 candidates: each polygon meets the other's plane.
    ca, ka1, ka2, xa1, xa2, za, adj_a = _crossings(va, sga, ia, a0, a1, da)
    cb, kb1, kb2, yb1, yb2, zb, adj_b = _crossings(vb, sgb, ib, b0, b1, db)
    # Steps 2 and 3: a lone zero point (touching at a vertex) or two adjacent
    # zero points (an edge lying in the plane) cannot give an intersection.
    if ca < 2 or cb < 2 or adj_a or adj_b:
        return 0, 8
    # Step 5: the shielding planes of A at its two crossings; test B's chord.
    inside_both = True
    for w in range(2):
        kk = ka1 if w == 0 else ka2
        p = ia[a0 + kk]
        q = ia[a0 + (kk + 1) % ka]
        ex = va[q, 0] - va[p, 0]
        ey = va[q, 1] - va[p, 1]
        ez = va[q, 2] - va[p, 2]
        # n_shield = edge x n_A, pointing out of A.
        sx = ey * na[fa, 2] - ez * na[fa, 1]
        sy = ez * na[fa, 0] - ex * na[fa, 2]
        sz = ex * na[fa, 1] - ey * na[fa, 0]
        ln = np.sqrt(sx * sx + sy * sy + sz * sz)
        d1 = ((yb1[0] - va[p, 0]) * sx + (yb1[1] - va[p, 1]) * sy + (yb1[2] - va[p, 2]) * sz) / ln
        d2 = ((yb2[0] - va[p, 0]) * sx + (yb2[1] - va[p, 1]) * sy + (yb2[2] - va[p, 2]) * sz) / ln
        s1 = _sign(d1, tol)
        s2 = _sign(d2, tol)
        if s1 >= 0 and s2 >= 0:
            return 0, 5  # 5e: B's chord beyond this shielding plane
        if not (s1 < 0 and s2 < 0):
            inside_both = False
    if inside_both:
        return 1, 7  # 5g
    return 1, 6  # 5f


def _scale(*models):
    return max(1.0, max(float(np.abs(m.vertices).max()) for m in models))


def polygon_intersection_factor(model_a: StandardModel | ConvexPolyhedron, face_a: int,
                                model_b: StandardModel | ConvexPolyhedron, face_b: int) -> tuple[int, int]:
    """Intersection factor ``I(P, Q)`` of two polygons and the case that decided it.

    Parameters
    ----------
    model_a, model_b : StandardModel
    face_a, face_b : int
        Polygon indices in each model.

    Returns
    -------
    I : int
        1 when the polygons intersect, 0 when not.
    case : int
        Key of :data:`CASE_NAMES`.
    """
    a = _as_model(model_a, "model_a")
    b = _as_model(model_b, "model_b")
    tol = ZERO_TOL * _scale(a, b)
    i, case = polygon_factor_kernel(a.vertices, a.starts, a.indices, a.normals, a.refs, int(face_a),
                                    b.vertices, b.starts, b.indices, b.normals, b.refs, int(face_b), tol)
    return int(i), int(case)


@njit
def containment_kernel(v_outer, n_outer, r_outer, v_inner, tol):
    """``E(outer, inner)``: 1 when every vertex of ``inner`` has ``D <= 0`` for all faces."""
    for i in range(v_inner.shape[0]):
        for f in range(n_outer.shape[0]):
            d = ((v_inner[i, 0] - r_outer[f, 0]) * n_outer[f, 0] + (v_inner[i, 1] - r_outer[f, 1]) * n_outer[f, 1]
                 + (v_inner[i, 2] - r_outer[f, 2]) * n_outer[f, 2])
            if d > tol:
                return 0
    return 1


@njit
def model_factor_kernel(va, sa, ia, na, ra, vb, sb, ib, nb, rb, tol, stop_at_first, inter, cases):
    """Fill ``inter`` and ``cases`` (f_a, f_b); return the sum of ``I``."""
    total = 0
    for fa in range(na.shape[0]):
        for fb in range(nb.shape[0]):
            i, c = polygon_factor_kernel(va, sa, ia, na, ra, fa, vb, sb, ib, nb, rb, fb, tol)
            inter[fa, fb] = i
            cases[fa, fb] = c
            total += i
            if stop_at_first and total > 0:
                return total
    return total


@dataclass(frozen=True, eq=False)
class VectorSymbolResult:
    """Factors of the vector-symbol test between two models.

    Attributes
    ----------
    C : int
        Model collision factor ``sum I + E_ab + E_ba`` (for unions: ``B``, the
        sum over all pairs of pieces). Non-zero means collision.
    I : (f_a, f_b) int8 or list of them
        Intersection factor of every polygon pair (per piece pair for unions).
    cases : (f_a, f_b) int8 or list of them
        The case that decided each ``I`` (see :data:`CASE_NAMES`).
    E_ab, E_ba : int
        Containment factors: A contains B, B contains A (summed for unions).
    pairs : list of (int, int)
        Piece index pairs, in the order of ``I`` and ``cases`` (unions only).
    """

    C: int
    I: NDArray[np.int8] | list[NDArray[np.int8]]
    cases: NDArray[np.int8] | list[NDArray[np.int8]]
    E_ab: int
    E_ba: int
    pairs: list[tuple[int, int]]

    @property
    def collide(self) -> bool:
        return self.C != 0

    def __bool__(self) -> bool:
        return self.C != 0


def model_collision_factor(model_a: StandardModel | ConvexPolyhedron, model_b: StandardModel | ConvexPolyhedron,
                           stop_at_first: bool = False) -> VectorSymbolResult:
    """``C(M_a, M_b)`` with its parts. See :class:`VectorSymbolResult`.

    ``stop_at_first`` ends the polygon loop at the first intersecting pair
    (the remaining entries of ``I`` stay 0 and their cases -1), as a
    collision yes/no needs no more.
    """
    a = _as_model(model_a, "model_a")
    b = _as_model(model_b, "model_b")
    tol = ZERO_TOL * _scale(a, b)
    inter = np.zeros((len(a.normals), len(b.normals)), dtype=np.int8)
    cases = np.full(inter.shape, -1, dtype=np.int8)
    s = model_factor_kernel(a.vertices, a.starts, a.indices, a.normals, a.refs,
                            b.vertices, b.starts, b.indices, b.normals, b.refs,
                            tol, stop_at_first, inter, cases)
    if stop_at_first and s > 0:
        return VectorSymbolResult(int(s), inter, cases, 0, 0, [(0, 0)])
    # The paper keeps the signs of the polygon loop to reuse here; the
    # containment test is cheap enough to recompute (one pass per model).
    e_ab = int(containment_kernel(a.vertices, a.normals, a.refs, b.vertices, tol))
    e_ba = int(containment_kernel(b.vertices, b.normals, b.refs, a.vertices, tol))
    return VectorSymbolResult(int(s) + e_ab + e_ba, inter, cases, e_ab, e_ba, [(0, 0)])


def vector_symbol_collide(model_a: StandardModel | ConvexPolyhedron
                          | list[StandardModel | ConvexPolyhedron] | tuple[StandardModel | ConvexPolyhedron, ...],
                          model_b: StandardModel | ConvexPolyhedron
                          | list[StandardModel | ConvexPolyhedron] | tuple[StandardModel | ConvexPolyhedron, ...],
                          stop_at_first: bool = False) -> VectorSymbolResult:
    """Do two models collide, by the vector-symbol method? (seed 003, 3.2 and 3.3)

    Parameters
    ----------
    model_a, model_b : StandardModel, ConvexPolyhedron, or a list of them
        A list is a non-standard (non-convex) model given as a union of
        convex pieces; the result is then ``B = sum_i sum_l C(M_i, M_l)``.
    stop_at_first : bool
        Stop at the first colliding polygon pair or piece pair.

    Returns
    -------
    VectorSymbolResult
        Truthy when the models collide; all factors inspectable.
    """
    pieces_a = model_a if isinstance(model_a, (list, tuple)) else [model_a]
    pieces_b = model_b if isinstance(model_b, (list, tuple)) else [model_b]
    if not pieces_a or not pieces_b:
        raise ValueError("model_a, model_b: a union needs at least one piece")
    pieces_a = [_as_model(m, f"model_a[{i}]") for i, m in enumerate(pieces_a)]
    pieces_b = [_as_model(m, f"model_b[{i}]") for i, m in enumerate(pieces_b)]
    if len(pieces_a) == 1 and len(pieces_b) == 1 and not isinstance(model_a, (list, tuple)) \
            and not isinstance(model_b, (list, tuple)):
        return model_collision_factor(pieces_a[0], pieces_b[0], stop_at_first)
    total, e_ab, e_ba = 0, 0, 0
    inters, cases, pairs = [], [], []
    for i, ma in enumerate(pieces_a):
        for l, mb in enumerate(pieces_b):
            r = model_collision_factor(ma, mb, stop_at_first)
            total += r.C
            e_ab += r.E_ab
            e_ba += r.E_ba
            inters.append(r.I)
            cases.append(r.cases)
            pairs.append((i, l))
            if stop_at_first and total:
                return VectorSymbolResult(total, inters, cases, e_ab, e_ba, pairs)
    return VectorSymbolResult(total, inters, cases, e_ab, e_ba, pairs)
