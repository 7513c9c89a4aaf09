"""collide_halfspace_pairs and CoreTable against collide_shapes called one pair at a time.

Reference: :func:`collision.narrow_phase.collide_shapes` with a
:class:`~collision.shapes.HalfSpace` as shape A (``_halfspace_core``), itself
tested against analytic answers in tests/collision/test_narrow_phase.py. The batch gets
the world plane the reference computes from the half-space and its pose,
``n = R_h @ h.normal`` and ``offset = h.offset + n . t_h``, so both see the
same normal array and the normals compare exactly. Depths and points are
computed in another summation order (numpy matmul against a hand-written
loop), so they compare to ``TOL_REL * scale`` with ``scale`` the size of the
scene (1 + largest translation, offset and shape extent).

Independent checks: every core point's depth ``offset - n . (R c + t) +
radius`` is recomputed here with numpy; a kept point must be one of those
core points, at that depth, within the margin.

Where more than four core points are within the margin both sides reduce to
four, and mathematically exact ties may be broken differently by the two
roundings: the deepest point (a box face flat on the plane), and also the
third pick of the reduction (a box in any pose: antipodal vertices make
triangles of equal area with the space diagonal), after which the two quads
can differ by several per cent in area. So those pairs are checked by the
deepest depth, the validity of every kept point, membership of both answers
in the set of results of the documented greedy reduction (rewritten here,
taking every branch that ties to rounding), and the area of the kept quad
seen along the normal (within 1e-9 relative of the reference's) whenever all
those results have the same area.

Pairs with a core point within ``TOL_REL * scale`` of the margin boundary
(``depth == -margin``) may count that point on either side; they get only
the checks that hold either way.
"""

import numpy as np
import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from scipy.spatial.transform import Rotation

from obbcollide.halfspace_batch import CoreTable, collide_halfspace_pairs
from obbcollide.hull_batch import ManifoldBatch
from obbcollide.manifold import KIND_NAMES
from obbcollide.narrow_phase import collide_shapes
from obbcollide.shapes import Capsule, HalfSpace, Hull, Sphere, box_hull

TOL_REL = 1e-12  # points and depths, relative to the scene scale
AREA_REL = 1e-9  # area of the reduced quad, relative to the reference's
MARGINS = (0.0, 0.02, 0.3)


# ---------------------------------------------------------------------------
# Helpers
# ---------------------------------------------------------------------------


def rigid(rot=None, t=(0.0, 0.0, 0.0)):
    p = np.eye(4)
    if rot is not None:
        p[:3, :3] = rot
    p[:3, 3] = t
    return p


def world_plane(h, pose_h):
    """The half-space's world plane, as collide_shapes computes it."""
    n = pose_h[:3, :3] @ h.normal
    return n, h.offset + float(n @ pose_h[:3, 3])


def hexagonal_prism(radius=0.6, half_height=0.15):
    """A regular hexagonal prism about z: faces of six coplanar vertices (exact ties when flat)."""
    a = np.arange(6) * np.pi / 3
    ring = np.stack([radius * np.cos(a), radius * np.sin(a)], 1)
    return Hull.from_points(np.vstack([np.c_[ring, np.full(6, -half_height)], np.c_[ring, np.full(6, half_height)]]))


def frame_with_z(n):
    """A rotation whose third column is ``n`` (unit)."""
    helper = np.array([1.0, 0.0, 0.0]) if abs(n[0]) < 0.9 else np.array([0.0, 1.0, 0.0])
    u = np.cross(n, helper)
    u /= np.linalg.norm(u)
    return np.column_stack([u, np.cross(n, u), n])


def area_along(points, n):
    """Area of the convex hull of ``points`` (k <= 4, 3-D) seen along the unit ``n`` (monotone chain)."""
    r = frame_with_z(n)
    q = sorted(map(tuple, points @ r[:, :2]))
    if len(q) < 3:
        return 0.0

    def cross(o, a, b):
        return (a[0] - o[0]) * (b[1] - o[1]) - (a[1] - o[1]) * (b[0] - o[0])

    lower, upper = [], []
    for p in q:
        while len(lower) >= 2 and cross(lower[-2], lower[-1], p) <= 0:
            lower.pop()
        lower.append(p)
    for p in reversed(q):
        while len(upper) >= 2 and cross(upper[-2], upper[-1], p) <= 0:
            upper.pop()
        upper.append(p)
    loop = np.array(lower[:-1] + upper[:-1])
    if len(loop) < 3:
        return 0.0
    x, y = loop[:, 0], loop[:, 1]
    return 0.5 * abs(float(np.dot(x, np.roll(y, -1)) - np.dot(y, np.roll(x, -1))))


def greedy_outcomes(pts, dep, n, tol, scale):
    """Every result of the reduction documented at collision.contact_reduce._reduce (deepest point, the
    point farthest from it, the largest triangle with these two, the point adding the most area,
    each among the touching points first when the deepest touches), written again here, taking
    each branch whose score ties the best to within rounding.

    ``pts`` (c, 3) are distinct points (no merging needed: checked), ``dep`` (c,) their depths;
    returns tuples of indices in the order the reduction keeps them.
    """
    c = len(pts)
    diff = pts[:, None] - pts[None]
    assert np.all((diff ** 2).sum(-1)[~np.eye(c, dtype=bool)] > 1e-12 * scale ** 2)
    eps2 = 1e-11 * scale ** 2  # ties in squared lengths and areas: far above rounding, far below real gaps

    def area(a, b, q):
        return float(n @ np.cross(pts[b] - pts[a], pts[q] - pts[a]))

    def near_best(cands, score, eps):
        vals = [score(q) for q in cands]
        top = max(vals)
        return [q for q, v in zip(cands, vals) if v >= top - eps], top

    def outcomes(touch):
        """The reduction's outcomes with ``touch`` (c,) bool marking the touching points (depth >= 0
        in the kernel; a point within rounding of 0 may fall on either side)."""

        def tiered(i0, cands, score, eps):
            """The best picks among the touching candidates when the deepest point touches, and among
            all when no touching candidate scores above ``eps`` (the reduction's two tiers)."""
            touching = [q for q in cands if touch[q]] if touch[i0] else []
            if touching:
                best = near_best(touching, score, eps)
                if best[1] > eps:
                    return best
            return near_best(cands, score, eps)

        found = set()
        everyone = list(range(c))
        for i0 in near_best(everyone, lambda q: dep[q], tol)[0]:
            rest = [q for q in everyone if q != i0]
            touching = [q for q in rest if touch[q]] if touch[i0] else []
            for i1 in near_best(touching or rest, lambda q: float(((pts[q] - pts[i0]) ** 2).sum()), eps2)[0]:
                rest2 = [q for q in rest if q != i1]
                cand2, top2 = tiered(i0, rest2, lambda q: abs(area(i0, i1, q)), eps2)
                if top2 <= eps2:
                    found.add((i0, i1))
                    continue
                for i2 in cand2:
                    sgn = 1.0 if area(i0, i1, i2) > 0 else -1.0
                    rest3 = [q for q in rest2 if q != i2]

                    def grow(q):
                        return max(-sgn * area(i0, i1, q), -sgn * area(i1, i2, q), -sgn * area(i2, i0, q))

                    cand3, top3 = tiered(i0, rest3, grow, eps2)
                    if top3 <= eps2:
                        found.add((i0, i1, i2))
                        continue
                    for i3 in cand3:
                        found.add((i0, i1, i2, i3))
        return found

    # Every way the points within rounding of depth 0 can fall (all of them alike past eight).
    unsure = np.flatnonzero(np.abs(dep) <= tol)
    sure = np.asarray(dep) > tol
    masks = range(1 << len(unsure)) if len(unsure) <= 8 else (0, (1 << len(unsure)) - 1)
    found = set()
    for m in masks:
        touch = sure.copy()
        touch[unsure] = [(m >> j) & 1 == 1 for j in range(len(unsure))]
        found |= outcomes(touch)
    return found


def core_depths(shape, pose_s, n, off):
    """Every core point's depth below the plane and its deepest point on the shape, world."""
    w = shape.core @ pose_s[:3, :3].T + pose_s[:3, 3]
    return off - w @ n + shape.radius, w - shape.radius * n


def scene_scale(shape, pose_s, pose_h, off):
    extent = float(np.abs(shape.core).max()) + shape.radius
    return 1.0 + max(extent, float(np.abs(pose_s[:3, 3]).max()), float(np.abs(pose_h[:3, 3]).max()), abs(off))


def check_conventions(out, i, shape, pose_s, n, off, margin, scale):
    """What the module documents, from an independent numpy evaluation (no reference call)."""
    tol = TOL_REL * scale
    c = int(out.count[i])
    assert 0 <= c <= 4
    d, pb = core_depths(shape, pose_s, n, off)
    assert out.kind[i] == KIND_NAMES.index("face_a" if c else "none")
    assert out.tests[i] == 0
    assert abs(out.sat_depth[i] - d.max()) <= tol, (out.sat_depth[i], d.max())
    # rows past the count are zeros
    assert not out.points_a[i, c:].any() and not out.points_b[i, c:].any()
    assert not out.depths[i, c:].any() and not out.ids[i, c:].any()
    if c == 0:
        assert out.sat_depth[i] < -margin
        assert np.all(d < -margin + tol)
        return
    assert np.array_equal(out.normal[i], n)
    ids = out.ids[i, :c]
    dep = out.depths[i, :c]
    assert len(set(ids.tolist())) == c
    assert np.all((0 <= ids) & (ids < len(shape.core)))
    assert np.all(dep >= -margin)
    assert dep[0] == dep.max() and dep[0] == out.sat_depth[i]
    np.testing.assert_allclose(dep, d[ids], rtol=0, atol=tol)
    np.testing.assert_allclose(out.points_b[i, :c], pb[ids], rtol=0, atol=tol)
    pa = out.points_a[i, :c]
    np.testing.assert_allclose(pa - out.points_b[i, :c], dep[:, None] * n, rtol=0, atol=tol)
    np.testing.assert_allclose(pa @ n, off, rtol=0, atol=tol)
    # no core point within the margin was dropped unless the patch was reduced
    inside = np.flatnonzero(d >= -margin + tol)
    if len(np.flatnonzero(d >= -margin - tol)) <= 4:
        assert set(inside.tolist()) <= set(ids.tolist())


def check_against_reference(out, i, h, pose_h, shape, pose_s, margin):
    """Row ``i`` of the batch against collide_shapes, as the module docstring promises."""
    n, off = world_plane(h, pose_h)
    scale = scene_scale(shape, pose_s, pose_h, off)
    tol = TOL_REL * scale
    check_conventions(out, i, shape, pose_s, n, off, margin, scale)
    ref = collide_shapes(h, pose_h, shape, pose_s, margin)
    d, pb = core_depths(shape, pose_s, n, off)
    ambiguous = bool(np.any(np.abs(d + margin) <= tol))  # a point on the margin boundary
    c = int(out.count[i])
    assert abs(out.sat_depth[i] - ref.sat_depth) <= tol
    if ambiguous:
        assert abs(c - len(ref.depths)) <= int(np.sum(np.abs(d + margin) <= tol))
        return "ambiguous"
    assert c == len(ref.depths), (c, ref)
    if c == 0:
        return "empty"
    assert np.array_equal(out.normal[i], ref.normal)
    ids, dep = out.ids[i, :c], out.depths[i, :c]
    n_in = int(np.sum(d >= -margin))
    if n_in <= 4:
        # no reduction: the same points, in the same order unless two depths tie to rounding
        rd = ref.depths
        near_tie = len(rd) > 1 and np.min(np.abs(np.diff(rd))) <= tol
        if near_tie:
            assert sorted(ids.tolist()) == sorted(ref.ids.tolist())
            assert np.all(np.diff(dep) <= 0)
            order = np.argsort(ids)
            ro = np.argsort(ref.ids)
        else:
            assert np.array_equal(ids, ref.ids), (ids, ref.ids)
            order = ro = np.arange(c)
        np.testing.assert_allclose(dep[order], rd[ro], rtol=0, atol=tol)
        np.testing.assert_allclose(out.points_a[i, :c][order], ref.points_a[ro], rtol=0, atol=tol)
        np.testing.assert_allclose(out.points_b[i, :c][order], ref.points_b[ro], rtol=0, atol=tol)
        return "plain"
    # reduced to four: same deepest depth (and point, unless tied); each a greedy outcome of the
    # documented reduction, and the same quad area when every tie-break gives the same area
    assert abs(dep[0] - ref.depths[0]) <= tol
    assert d[ids[0]] >= d.max() - tol
    if np.sum(d >= d.max() - tol) == 1:
        assert ids[0] == ref.ids[0]
        np.testing.assert_allclose(out.points_b[i, 0], ref.points_b[0], rtol=0, atol=tol)
    inside = np.flatnonzero(d >= -margin)
    outcomes = {tuple(int(inside[j]) for j in o) for o in greedy_outcomes(pb[inside], d[inside], n, tol, scale)}
    assert tuple(ids.tolist()) in outcomes, (ids, outcomes)
    assert tuple(ref.ids.tolist()) in outcomes, (ref.ids, outcomes)
    areas = [area_along(pb[list(o)], n) for o in outcomes]
    a_batch = area_along(out.points_b[i, :c], n)
    a_ref = area_along(ref.points_b, n)
    if max(areas) - min(areas) <= AREA_REL * max(areas):
        assert abs(a_batch - a_ref) <= AREA_REL * a_ref + 1e-15 * scale ** 2, (a_batch, a_ref)
    return "reduced" if len(outcomes) == 1 else "reduced_tie"


def random_rotation(rng):
    return Rotation.random(random_state=rng).as_matrix()


def random_shapes(rng):
    shapes = []
    for _ in range(4):
        shapes.append(Sphere(rng.uniform(0.05, 1.0), rng.uniform(-0.5, 0.5, 3)))
        shapes.append(Capsule(rng.uniform(0.05, 0.6), rng.uniform(0.0, 1.0)))
        shapes.append(box_hull(rng.uniform(0.05, 1.0, 3)))
        shapes.append(Hull.from_points(rng.normal(size=(int(rng.integers(5, 40)), 3)) * rng.uniform(0.2, 1.0)))
    shapes.append(hexagonal_prism())
    shapes.append(hexagonal_prism(0.4, 0.05))
    return shapes


def random_halfspace(rng):
    h = HalfSpace(rng.normal(size=3), rng.uniform(-1.0, 1.0))
    pose_h = rigid(random_rotation(rng), rng.uniform(-2.0, 2.0, 3)) if rng.random() < 0.7 else np.eye(4)
    return h, pose_h


def place(rng, shape, n, off, gap, flat):
    """A pose putting the shape's lowest point ``gap`` above the plane (negative: below)."""
    if flat:  # a face (boxes, prisms: the model -z face) flat on the plane, spun about the normal
        spin = Rotation.from_rotvec([0.0, 0.0, rng.uniform(0, 2 * np.pi)]).as_matrix()
        rot = frame_with_z(-n) @ spin
    else:
        rot = random_rotation(rng)
    lowest = float(np.min(shape.core @ rot.T @ n)) - shape.radius
    shift = rng.uniform(-1.5, 1.5, 3)
    t = shift - n * float(n @ shift) + n * (off + gap - lowest)
    return rigid(rot, t)


def random_case(rng, shapes):
    """Plane, shape, poses and margin for one pair: apart, within the margin, touching, or deep."""
    h, pose_h = random_halfspace(rng)
    n, off = world_plane(h, pose_h)
    s = int(rng.integers(len(shapes)))
    shape = shapes[s]
    margin = MARGINS[int(rng.integers(3))]
    flat = isinstance(shape, Hull) and rng.random() < 0.3
    u = rng.random()
    if u < 0.2:
        gap = rng.uniform(margin, margin + 0.5)  # apart
    elif u < 0.5:
        gap = rng.uniform(-margin - 0.01, margin + 0.01)  # near the surface
    else:
        gap = -rng.uniform(0.0, 2.0)  # penetrating, some fully under the plane
    return h, pose_h, s, shape, place(rng, shape, n, off, gap, flat), margin


def run_batch(table, cases):
    ids = [table.add(c[3]) for c in cases]
    planes = [world_plane(c[0], c[1]) for c in cases]
    out = collide_halfspace_pairs(table, ids, np.array([c[4] for c in cases]), np.array([p[0] for p in planes]),
                                  np.array([p[1] for p in planes]), np.array([c[5] for c in cases]))
    assert isinstance(out, ManifoldBatch) and len(out) == len(cases)
    return out


# ---------------------------------------------------------------------------
# 1, 2. Equality with collide_shapes; sign conventions
# ---------------------------------------------------------------------------


def test_random_batch_equals_collide_shapes():
    """1500 random pairs in one call (all shape kinds in one table), each row against its reference."""
    rng = np.random.default_rng(20240611)
    shapes = random_shapes(rng)
    table = CoreTable(shapes)
    cases = [random_case(rng, shapes) for _ in range(1500)]
    out = run_batch(table, cases)
    seen = {"plain": 0, "reduced": 0, "reduced_tie": 0, "empty": 0, "ambiguous": 0}
    for i, (h, pose_h, _, shape, pose_s, margin) in enumerate(cases):
        seen[check_against_reference(out, i, h, pose_h, shape, pose_s, margin)] += 1
    # the random cases exercise every regime
    assert seen["plain"] > 300 and seen["reduced"] > 50 and seen["reduced_tie"] > 50 and seen["empty"] > 150, seen
    assert seen["ambiguous"] < 10, seen


def test_rows_do_not_depend_on_each_other():
    """A row's result is the same alone and in a mixed batch (scratch arrays reused across rows)."""
    rng = np.random.default_rng(7)
    shapes = random_shapes(rng)
    table = CoreTable(shapes)
    cases = [random_case(rng, shapes) for _ in range(60)]
    out = run_batch(table, cases)
    for i in range(0, 60, 7):
        one = run_batch(table, [cases[i]])
        for f in ("count", "normal", "points_a", "points_b", "depths", "ids", "kind", "sat_depth"):
            assert np.array_equal(getattr(one, f)[0], getattr(out, f)[i]), (i, f)


@st.composite
def shape_strategy(draw):
    kind = draw(st.sampled_from(["sphere", "capsule", "box", "hull", "prism"]))
    size = st.floats(0.05, 1.0)
    if kind == "sphere":
        return Sphere(draw(size), [draw(st.floats(-0.5, 0.5)) for _ in range(3)])
    if kind == "capsule":
        return Capsule(draw(size), draw(st.floats(0.0, 1.0)))
    if kind == "box":
        return box_hull([draw(size) for _ in range(3)])
    if kind == "prism":
        return hexagonal_prism(draw(st.floats(0.1, 1.0)), draw(st.floats(0.02, 0.5)))
    seed = draw(st.integers(0, 2 ** 32 - 1))
    pts = np.random.default_rng(seed).normal(size=(draw(st.integers(5, 30)), 3))
    return Hull.from_points(pts * draw(size))


unit_floats = st.floats(-1.0, 1.0)
# exact quarter turns (entries 0, +-1) give exact depth ties; general quaternions give none
AXIS_TURNS = [Rotation.from_euler("xyz", np.array(e) * 90, degrees=True).as_matrix().round()
              for e in [(0, 0, 0), (1, 0, 0), (0, 1, 0), (0, 0, 1), (1, 1, 0), (2, 0, 1), (1, 0, 3)]]


@st.composite
def rotation_strategy(draw):
    if draw(st.booleans()):
        return draw(st.sampled_from(AXIS_TURNS))
    q = np.array([draw(unit_floats) for _ in range(4)])
    if np.linalg.norm(q) < 0.1:
        q = np.array([0.0, 0.0, 0.0, 1.0])
    return Rotation.from_quat(q).as_matrix()


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(shape=shape_strategy(), rot_s=rotation_strategy(), rot_h=rotation_strategy(),
       normal=st.one_of(st.sampled_from([(0.0, 1.0, 0.0), (0.0, 0.0, -1.0), (1.0, 0.0, 0.0)]),
                        st.tuples(unit_floats, unit_floats, unit_floats).map(
                            lambda v: v if np.linalg.norm(v) > 0.1 else (0.0, 1.0, 0.0))),
       h_offset=st.floats(-1.0, 1.0), t_h=st.tuples(*[st.floats(-2.0, 2.0)] * 3),
       shift=st.tuples(*[st.floats(-2.0, 2.0)] * 3),
       gap=st.one_of(st.floats(-2.0, 0.8), st.sampled_from([0.0, -0.02, 0.02, 0.3, -0.3])),
       margin=st.sampled_from(MARGINS))
def test_pair_equals_collide_shapes(shape, rot_s, rot_h, normal, h_offset, t_h, shift, gap, margin):
    """One pair per example, hypothesis-chosen, including exact ties (quarter turns) and boundary gaps."""
    h = HalfSpace(np.array(normal), h_offset)
    pose_h = rigid(rot_h, t_h)
    n, off = world_plane(h, pose_h)
    lowest = float(np.min(shape.core @ rot_s.T @ n)) - shape.radius
    t = np.array(shift)
    t += n * (off + gap - lowest - float(n @ t))
    pose_s = rigid(rot_s, t)
    table = CoreTable([box_hull((0.1, 0.2, 0.3))])  # the shape is not row 0: ids must be honoured
    out = collide_halfspace_pairs(table, [table.add(shape)], pose_s[None], n[None], [off], [margin])
    event(check_against_reference(out, 0, h, pose_h, shape, pose_s, margin))


def test_sign_conventions_on_every_row():
    """points_a - points_b == depth * n, points_a on the plane, normal the plane's, kind face_a (none when
    empty), and sat_depth the largest core depth (below -margin when the row is empty), on a seeded batch."""
    rng = np.random.default_rng(99)
    shapes = random_shapes(rng)
    table = CoreTable(shapes)
    cases = [random_case(rng, shapes) for _ in range(800)]
    out = run_batch(table, cases)
    assert np.all(out.kind == np.where(out.count > 0, KIND_NAMES.index("face_a"), KIND_NAMES.index("none")))
    assert np.all(out.tests == 0)
    empty = 0
    for i, (h, pose_h, _, shape, pose_s, margin) in enumerate(cases):
        n, off = world_plane(h, pose_h)
        check_conventions(out, i, shape, pose_s, n, off, margin, scene_scale(shape, pose_s, pose_h, off))
        empty += out.count[i] == 0
    assert empty > 50


def test_flat_faces_reduce_to_the_full_face():
    """Boxes and prisms flat on a tilted plane, bottom face within the margin and the top face too:
    the reduced quad spans the whole bottom face (box: the face itself; hexagon: the largest
    inscribed quad with a corner at a vertex, 2/3 of the hexagon), like the reference's."""
    rng = np.random.default_rng(3)
    h = HalfSpace((0.3, 1.0, -0.2), 0.4)
    pose_h = rigid(random_rotation(rng), (0.5, -1.0, 2.0))
    n, off = world_plane(h, pose_h)
    cases = []
    for shape, face_area in ((box_hull((0.5, 0.3, 0.1)), 4 * 0.5 * 0.3), (hexagonal_prism(0.6, 0.1), None)):
        for gap in (-0.05, -0.01, 0.01):
            cases.append((h, pose_h, None, shape, place(rng, shape, n, off, gap, flat=True), 0.3, face_area))
    out = run_batch(CoreTable(), [c[:6] for c in cases])
    for i, (_, _, _, shape, pose_s, margin, face_area) in enumerate(cases):
        assert check_against_reference(out, i, h, pose_h, shape, pose_s, margin) == "reduced_tie"
        assert out.count[i] == 4
        a = area_along(out.points_b[i, :4], n)
        if face_area is None:  # hexagon of circumradius 0.6: area 3 sqrt(3)/2 r^2; best quad 2/3 of it
            face_area = 2.0 / 3.0 * 1.5 * np.sqrt(3.0) * 0.6 ** 2
        assert abs(a - face_area) <= 1e-12, (a, face_area)


def test_empty_rows_match_manifold_batch_contract():
    table = CoreTable([Sphere(0.5)])
    out = collide_halfspace_pairs(table, [0], rigid(t=(0, 2.0, 0))[None], [[0.0, 1.0, 0.0]], [0.0], [0.0])
    ref = collide_shapes(HalfSpace((0, 1, 0)), np.eye(4), Sphere(0.5), rigid(t=(0, 2.0, 0)))
    assert out.count[0] == 0 and len(ref.depths) == 0
    assert np.array_equal(out.normal[0], np.zeros(3))
    assert KIND_NAMES[out.kind[0]] == ref.kind == "none"


# ---------------------------------------------------------------------------
# 3. Known answers
# ---------------------------------------------------------------------------


def test_sphere_resting_on_the_plane_and_just_beyond_the_margin():
    ground = HalfSpace((0, 1, 0))
    ball = Sphere(0.5)
    table = CoreTable([ball])
    margin = 0.02
    ys = [0.5, 0.5 + margin - 1e-9, 0.5 + margin + 1e-9, 0.5 - 0.125]
    poses = np.array([rigid(t=(1.25, y, -0.75)) for y in ys])
    margins = [0.0, margin, margin, 0.0]
    out = collide_halfspace_pairs(table, [0] * 4, poses, np.tile([0.0, 1.0, 0.0], (4, 1)), np.zeros(4), margins)
    # exactly resting: depth 0 exactly, contact at the foot of the ball
    assert out.count[0] == 1 and out.depths[0, 0] == 0.0 and out.ids[0, 0] == 0
    np.testing.assert_array_equal(out.points_b[0, 0], [1.25, 0.0, -0.75])
    np.testing.assert_array_equal(out.points_a[0, 0], [1.25, 0.0, -0.75])
    # just inside / just beyond the margin
    assert out.count[1] == 1 and abs(out.depths[1, 0] + margin - 1e-9) < 1e-15
    assert out.count[2] == 0 and abs(out.sat_depth[2] + margin + 1e-9) < 1e-15 and out.sat_depth[2] < -margin
    # penetrating by 1/8
    assert out.count[3] == 1 and out.depths[3, 0] == 0.125
    np.testing.assert_array_equal(out.points_b[3, 0], [1.25, -0.125, -0.75])
    np.testing.assert_array_equal(out.points_a[3, 0], [1.25, 0.0, -0.75])
    for i, m in enumerate(margins):
        check_against_reference(out, i, ground, np.eye(4), ball, poses[i], m)


@pytest.mark.parametrize("margin", [0.0, 0.02])
def test_box_at_known_height(margin):
    """A box flat on a tilted, moved plane, sunk 0.05: its four bottom corners at depth 0.05."""
    half = np.array([0.3, 0.2, 0.4])
    box = box_hull(half)
    h = HalfSpace((0.0, 0.0, 1.0), 0.7)  # model plane z = 0.7
    rot_h = Rotation.from_rotvec([0.4, -0.3, 0.2]).as_matrix()
    pose_h = rigid(rot_h, (0.5, 1.0, -2.0))
    n, off = world_plane(h, pose_h)
    # the box's -y face down on the plane: model y -> -n... built in the plane's model frame, then posed
    spin = Rotation.from_rotvec([0.0, 0.0, 0.6]).as_matrix()
    down = np.array([[1.0, 0, 0], [0, 0, -1.0], [0, 1.0, 0]])  # model y -> plane-frame z
    rot_s = rot_h @ spin @ down
    centre_plane = np.array([0.2, -0.1, 0.7 + half[1] - 0.05])
    pose_s = rigid(rot_s, rot_h @ centre_plane + pose_h[:3, 3])
    table = CoreTable([Sphere(1.0), box])
    out = collide_halfspace_pairs(table, [1], pose_s[None], n[None], [off], [margin])
    assert out.count[0] == 4
    np.testing.assert_allclose(out.depths[0], 0.05, rtol=0, atol=1e-12)
    bottom = np.flatnonzero(box.core[:, 1] < 0)
    assert sorted(out.ids[0].tolist()) == sorted(bottom.tolist())
    world = box.core @ rot_s.T + pose_s[:3, 3]
    np.testing.assert_allclose(out.points_b[0], world[out.ids[0]], rtol=0, atol=1e-12)
    np.testing.assert_allclose(out.points_a[0], world[out.ids[0]] + 0.05 * n, rtol=0, atol=1e-12)
    np.testing.assert_allclose(area_along(out.points_b[0], n), 4 * half[0] * half[2], rtol=1e-12)
    # lifted to 0.01 above the plane: inside a 0.02 margin only
    lifted = pose_s.copy()
    lifted[:3, 3] += 0.06 * n
    out = collide_halfspace_pairs(table, [1], lifted[None], n[None], [off], [margin])
    if margin == 0.0:
        assert out.count[0] == 0 and abs(out.sat_depth[0] + 0.01) < 1e-12
    else:
        assert out.count[0] == 4
        np.testing.assert_allclose(out.depths[0], -0.01, rtol=0, atol=1e-12)


def test_capsule_lying_flat_gives_both_ends():
    cap = Capsule(0.25, 0.8)
    lying = Rotation.from_rotvec([0.0, 0.0, np.pi / 2]).as_matrix()  # axis along x
    pose = rigid(lying, (0.3, 0.25 - 0.1, 0.0))
    out = collide_halfspace_pairs(CoreTable([cap]), [0], pose[None], [[0.0, 1.0, 0.0]], [0.0], 0.0)
    assert out.count[0] == 2 and sorted(out.ids[0, :2].tolist()) == [0, 1]
    np.testing.assert_allclose(out.depths[0, :2], 0.1, rtol=0, atol=1e-15)
    xs = sorted(out.points_b[0, :2, 0].tolist())
    np.testing.assert_allclose(xs, [0.3 - 0.8, 0.3 + 0.8], rtol=0, atol=1e-15)
    np.testing.assert_allclose(out.points_b[0, :2, 1], -0.1, rtol=0, atol=1e-15)


# ---------------------------------------------------------------------------
# 4. CoreTable
# ---------------------------------------------------------------------------


def test_core_table_ids_and_growth():
    rng = np.random.default_rng(11)
    table = CoreTable()
    first = box_hull((0.2, 0.3, 0.4))
    assert table.add(first) == 0 and table.add(first) == 0 and len(table) == 1
    shapes = [first]
    for k in range(60):  # past the initial capacities (64 rows, 8 shapes), several times
        r = k % 4
        if r == 0:
            shapes.append(Sphere(rng.uniform(0.1, 1.0), rng.normal(size=3)))
        elif r == 1:
            shapes.append(Capsule(rng.uniform(0.1, 1.0), rng.uniform(0.0, 1.0)))
        elif r == 2:
            shapes.append(box_hull(rng.uniform(0.1, 1.0, 3)))
        else:  # big hulls: many core rows at once
            shapes.append(Hull.from_points(rng.normal(size=(int(rng.integers(20, 200)), 3))))
        assert table.add(shapes[-1]) == len(shapes) - 1
    assert len(table) == len(shapes) and len(table.points) > 64
    for s, shape in enumerate(shapes):  # ids stay valid after growth, and re-adding changes nothing
        assert table.add(shape) == s
        assert np.array_equal(table.points[table.starts[s]:table.starts[s + 1]], shape.core)
        assert table.radius[s] == shape.radius
    assert len(table) == len(shapes)
    assert table.starts[0] == 0 and np.all(np.diff(table.starts) >= 1)
    assert table.starts[-1] == len(table.points) == sum(len(s.core) for s in shapes)
    assert len(table.radius) == len(shapes)
    # the same shapes through the constructor give the same layout
    again = CoreTable(shapes + shapes[:5])
    assert len(again) == len(shapes)
    assert np.array_equal(again.points, table.points) and np.array_equal(again.starts, table.starts)
    # collisions with ids taken before the growth still answer for those shapes
    h = HalfSpace((0, 1, 0))
    cases = []
    for s in (0, 1, 2, 3, 4, 30, 60):
        pose_s = rigid(random_rotation(rng), (0.0, rng.uniform(-0.5, 0.5), 0.0))
        cases.append((h, np.eye(4), s, shapes[s], pose_s, 0.3))
    out = run_batch(table, cases)
    for i, c in enumerate(cases):
        check_against_reference(out, i, c[0], c[1], c[3], c[4], c[5])


def test_core_table_rejects_bad_shapes():
    class Fake:
        def __init__(self, core, radius):
            self.core, self.radius = core, radius

    table = CoreTable()
    with pytest.raises(ValueError, match="shape.radius"):
        table.add(Fake(np.zeros((1, 3)), -1.0))
    with pytest.raises(ValueError, match="shape.radius"):
        table.add(Fake(np.zeros((1, 3)), float("nan")))
    with pytest.raises(ValueError, match="shape.core"):
        table.add(Fake(np.full((2, 3), np.nan), 0.0))
    with pytest.raises(ValueError, match="shape.core"):
        table.add(Fake(np.zeros((2, 2)), 0.0))
    assert len(table) == 0  # nothing half-added
    assert table.add(Sphere(0.5)) == 0


# ---------------------------------------------------------------------------
# 5. Errors
# ---------------------------------------------------------------------------


def good_args(k=3):
    table = CoreTable([Sphere(0.5), box_hull((0.3, 0.3, 0.3))])
    return dict(table=table, shape_ids=[0, 1, 1][:k], poses=np.tile(np.eye(4), (k, 1, 1)),
                normals=np.tile([0.0, 1.0, 0.0], (k, 1)), offsets=np.zeros(k), margins=np.full(k, 0.1))


def test_good_args_run_and_scalar_margin_broadcasts():
    a = good_args()
    out = collide_halfspace_pairs(**a)
    assert list(out.count) == [1, 4, 4]
    b = dict(a, margins=0.1)
    assert np.array_equal(collide_halfspace_pairs(**b).points_a, out.points_a)
    empty = collide_halfspace_pairs(a["table"], [], np.zeros((0, 4, 4)), np.zeros((0, 3)), np.zeros(0), 0.0)
    assert len(empty) == 0 and empty.points_a.shape == (0, 4, 3)


def bad_pose(kind):
    p = np.tile(np.eye(4), (3, 1, 1))
    if kind == "nan":
        p[2, 1, 3] = np.nan
    elif kind == "inf":
        p[2, 0, 0] = np.inf
    elif kind == "scaled":
        p[2, :3, :3] *= 1.5
    elif kind == "mirror":
        p[2, 0, 0] = -1.0
    elif kind == "last_row":
        p[2, 3, 0] = 0.1
    return p


@pytest.mark.parametrize("change, pattern", [
    (dict(table=[Sphere(0.5)]), "table"),
    (dict(table=None), "table"),
    (dict(shape_ids=[0, 2, 1]), r"shape_ids\[1\]"),
    (dict(shape_ids=[0, 1, -1]), r"shape_ids\[2\]"),
    (dict(shape_ids=[0, 1], margins=0.1), "poses"),
    (dict(poses=np.tile(np.eye(4), (2, 1, 1))), "poses"),
    (dict(poses=np.tile(np.eye(3), (3, 1, 1))), "poses"),
    (dict(normals=np.tile([0.0, 1.0, 0.0], (4, 1))), "normals"),
    (dict(normals=np.tile([0.0, 1.0], (3, 1))), "normals"),
    (dict(offsets=np.zeros(2)), "offsets"),
    (dict(offsets=[0.0, np.nan, 0.0]), "offsets"),
    (dict(poses=bad_pose("nan")), r"poses\[2\]"),
    (dict(poses=bad_pose("inf")), r"poses\[2\]"),
    (dict(poses=bad_pose("scaled")), r"poses\[2\]"),
    (dict(poses=bad_pose("mirror")), r"poses\[2\]"),
    (dict(poses=bad_pose("last_row")), r"poses\[2\]"),
    (dict(normals=[[0.0, 1.0, 0.0], [0.0, 2.0, 0.0], [0.0, 1.0, 0.0]]), "normals"),
    (dict(normals=[[0.0, 1.0, 0.0], [0.0, 1.0 + 1e-6, 0.0], [0.0, 1.0, 0.0]]), "normals"),
    (dict(normals=[[0.0, 0.0, 0.0]] * 3), "normals"),
    (dict(normals=[[0.0, np.nan, 0.0]] * 3), "normals"),
    (dict(margins=[0.1, -0.01, 0.1]), "margins"),
    (dict(margins=-1.0), "margins"),
    (dict(margins=[0.1, np.nan, 0.1]), "margins"),
    (dict(margins=np.inf), "margins"),
])
def test_bad_input_raises_naming_the_argument(change, pattern):
    with pytest.raises(ValueError, match=pattern):
        collide_halfspace_pairs(**dict(good_args(), **change))


def test_margins_of_the_wrong_length_are_named():
    with pytest.raises(ValueError, match="margins"):
        collide_halfspace_pairs(**dict(good_args(), margins=[0.1, 0.2]))


def test_non_integer_ids_are_rejected():
    with pytest.raises(ValueError, match="shape_ids"):
        collide_halfspace_pairs(**dict(good_args(), shape_ids=[0.0, 1.5, 1.0]))


def test_unchecked_call_gives_the_same_rows_and_still_rejects_a_bad_pose():
    """``check=False`` (the world's per-step call) skips the argument checks only: the same rows as
    the checked call on 300 random pairs, and a non-rigid pose is still named."""
    rng = np.random.default_rng(11)
    shapes = random_shapes(rng)
    table = CoreTable(shapes)
    cases = [random_case(rng, shapes) for _ in range(300)]
    ids = np.array([table.add(c[3]) for c in cases], np.int64)
    planes = [world_plane(c[0], c[1]) for c in cases]
    args = (ids, np.array([c[4] for c in cases]), np.array([p[0] for p in planes]), np.array([p[1] for p in planes]),
            np.array([c[5] for c in cases], float))
    a = collide_halfspace_pairs(table, *args)
    b = collide_halfspace_pairs(table, *args, check=False)
    for f in ("count", "normal", "points_a", "points_b", "depths", "ids", "kind", "sat_depth"):
        assert np.array_equal(getattr(a, f), getattr(b, f)), f
    poses = args[1].copy()
    poses[17, :3, :3] *= 2.0
    with pytest.raises(ValueError, match=r"poses\[17\]"):
        collide_halfspace_pairs(table, ids, poses, *args[2:], check=False)
