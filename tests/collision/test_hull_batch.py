"""collide_hull_pairs and HullTable against collide_hull_hull called one pair at a time.

Reference: :func:`collision.manifold.collide_hull_hull` (itself tested against
analytic answers and ``convex_convex_sat`` in tests/collision/test_manifold.py), called
pair by pair with its own HullData and a per-pair cache array. The batch runs
the same compiled kernel on slices of the table, so the comparison is exact
(``np.array_equal``, no tolerance) for every field: count, kind, tests and sat_depth (but for
box pairs, see :func:`check_equal_one_by_one`), normal, points, depths, ids, and the caches after the call.

Hull sets: boxes of random half extents, random 64-vertex hulls (points near
a sphere), small random hulls (6-12 points), and the same HullData used
several times. Poses: random rotations, centres spread so that about half the
pairs overlap and the rest are apart (empty manifolds), some within the margin.
"""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.spatial.transform import Rotation

from obbcollide import ConvexPolyhedron
from obbcollide.box_box import is_box
from obbcollide.hull_batch import HullTable, ManifoldBatch, collide_hull_pairs
from obbcollide.hull_data import HullData
from obbcollide.manifold import ABS_TOL, EDGE_REL_TOL, KIND_NAMES, collide_hull_hull

CORNERS = np.array([[x, y, z] for x in (-1, 1) for y in (-1, 1) for z in (-1, 1)], float)
FIELDS = ("normal", "points_a", "points_b", "depths", "ids")


def random_hulls(rng, n_box=3, n_big=2, n_small=3):
    hulls = [HullData.from_points(CORNERS * rng.uniform(0.2, 1.0, 3)) for _ in range(n_box)]
    for _ in range(n_big):  # 64 points near a sphere: a hull with ~64 vertices
        p = rng.normal(size=(64, 3))
        p /= np.linalg.norm(p, axis=1, keepdims=True)
        hulls.append(HullData.from_points(p * rng.uniform(0.5, 1.0, 3) + 0.01 * rng.normal(size=(64, 3))))
    for _ in range(n_small):
        hulls.append(HullData.from_points(rng.normal(size=(int(rng.integers(6, 13)), 3)) * 0.6))
    return hulls


def random_poses(rng, k, spread):
    p = np.tile(np.eye(4), (k, 1, 1))
    p[:, :3, :3] = Rotation.random(k, random_state=rng).as_matrix()
    p[:, :3, 3] = rng.normal(size=(k, 3)) * spread
    return p


def random_batch(rng, n, k):
    """``k`` random pairs of ``n`` hulls as the unchecked call takes them: ids, C-contiguous poses,
    margins 0.05 and two fresh cache arrays."""
    ia = rng.integers(0, n, k)
    ib = rng.integers(0, n, k)
    pa = np.ascontiguousarray(random_poses(rng, k, 0.7))
    pb = np.ascontiguousarray(random_poses(rng, k, 0.7))
    return ia, pa, ib, pb, np.full(k, 0.05), np.full((k, 3), -1, np.int64), np.full((k, 3), -1, np.int64)


def check_equal_one_by_one(hulls, table, ids, ia, pa, ib, pb, margin, caches):
    """Run the batch, then collide_hull_hull pair by pair with copies of the caches; all equal."""
    ref_caches = caches.copy()
    out = collide_hull_pairs(table, ia, pa, ib, pb, margin, caches)
    assert isinstance(out, ManifoldBatch) and len(out) == len(ia)
    for i in range(len(ia)):
        m = collide_hull_hull(hulls[ids.index(ia[i])], pa[i], hulls[ids.index(ib[i])], pb[i], margin, ref_caches[i])
        b = out.manifold(i)
        both_boxes = is_box(hulls[ids.index(ia[i])]) and is_box(hulls[ids.index(ib[i])])
        # a box pair takes collision.box_box, which queries every face (as the hull kernel's
        # brute-force twin does) and leaves out the edge pairs of two parallelepipeds that cannot be
        # chosen; the hull kernel skips faces its bounds rule out, so the count of features tested
        # may differ there, and the SAT depth by less than the edge tolerance (never shallower: a
        # pair left out can only have separated more)
        assert b.kind == m.kind and (both_boxes or b.tests == m.tests), (i, b, m)
        if both_boxes and b.sat_depth != m.sat_depth:
            assert m.sat_depth < b.sat_depth <= m.sat_depth + EDGE_REL_TOL * abs(b.sat_depth) + ABS_TOL * min(
                hulls[ids.index(ia[i])].scale, hulls[ids.index(ib[i])].scale), i
        else:
            assert b.sat_depth == m.sat_depth or (np.isnan(b.sat_depth) and np.isnan(m.sat_depth)), i
        assert out.count[i] == len(m) and KIND_NAMES[out.kind[i]] == m.kind
        for f in FIELDS:
            got, want = getattr(b, f), getattr(m, f)
            assert got.shape == want.shape and got.dtype == want.dtype and np.array_equal(got, want), (i, f)
        c = int(out.count[i])  # rows past the count stay zero
        assert not out.points_a[i, c:].any() and not out.depths[i, c:].any() and not out.ids[i, c:].any()
    np.testing.assert_array_equal(caches, ref_caches)
    return out


@pytest.mark.parametrize("seed", range(3))
def test_batch_equals_one_pair_at_a_time(seed):
    rng = np.random.default_rng(seed)
    hulls = random_hulls(rng)
    table = HullTable()
    ids = [table.add(h) for h in hulls]
    assert ids == list(range(len(hulls)))
    k = 300
    ia = rng.integers(0, len(hulls), k)
    ib = rng.integers(0, len(hulls), k)
    pa = random_poses(rng, k, 0.7)
    pb = random_poses(rng, k, 0.7)
    caches = np.full((k, 3), -1, np.int64)
    out = check_equal_one_by_one(hulls, table, ids, ia, pa, ib, pb, 0.05, caches)
    kinds = set(out.kind.tolist())
    assert {0, 1, 3} <= kinds  # face contacts on A and on B, and empty results, are all exercised
    assert 0 < np.count_nonzero(out.count == 0) < k
    assert np.any(out.count == 4) and np.any((out.depths < 0) & (out.depths >= -0.05))  # speculative points
    # Next step: small motions, the caches from this call are read back.
    pb[:, :3, 3] += rng.normal(size=(k, 3)) * 0.01
    out2 = check_equal_one_by_one(hulls, table, ids, ia, pa, ib, pb, 0.05, caches)
    assert np.any((out2.count == 0) & (out2.tests == 1))  # a cached separating feature ended the test


def test_resting_boxes_and_edge_contacts():
    """A cube on a ground box at several yaws (4 points each), and crossed boxes (edge-edge)."""
    cube = ConvexPolyhedron.from_points(CORNERS * 0.5)
    ground = ConvexPolyhedron.from_points(CORNERS * [3.0, 0.5, 3.0])
    hulls = [HullData.from_polyhedron(cube), HullData.from_polyhedron(ground)]
    table = HullTable([cube, ground])
    yaws = np.linspace(0.0, np.pi / 2, 7)
    k = len(yaws)
    pg = np.tile(np.eye(4), (k, 1, 1))
    pc = np.tile(np.eye(4), (k, 1, 1))
    pc[:, :3, :3] = Rotation.from_euler("y", yaws[:, None]).as_matrix()
    pc[:, 1, 3] = 0.99  # 0.01 deep
    ia, ib = np.ones(k, np.int64), np.zeros(k, np.int64)
    out = check_equal_one_by_one(hulls, table, [0, 1], ia, pg, ib, pc, 0.0, np.full((k, 3), -1, np.int64))
    assert np.all(out.count == 4)
    np.testing.assert_allclose(out.depths, 0.01, atol=1e-12)
    # Edge-edge: a box rotated 45 degrees about x on top of one rotated 45 degrees about z.
    pa = np.eye(4)[None].copy()
    pa[0, :3, :3] = Rotation.from_euler("z", 45, degrees=True).as_matrix()
    pb = np.eye(4)[None].copy()
    pb[0, :3, :3] = Rotation.from_euler("x", 45, degrees=True).as_matrix()
    pb[0, 1, 3] = np.sqrt(2) - 0.02
    out = check_equal_one_by_one(hulls, table, [0, 1], np.zeros(1, np.int64), pa, np.zeros(1, np.int64), pb, 0.0,
                                 np.full((1, 3), -1, np.int64))
    assert KIND_NAMES[out.kind[0]] == "edge_edge" and out.count[0] == 1
    np.testing.assert_allclose(out.depths[0, 0], 0.02, atol=1e-12)


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), k=st.integers(1, 12), spread=st.floats(0.2, 2.0),
       margin=st.sampled_from([0.0, 0.02, 0.3]))
def test_batch_equals_one_pair_at_a_time_property(seed, k, spread, margin):
    rng = np.random.default_rng(seed)
    hulls = random_hulls(rng, n_box=2, n_big=1, n_small=2)
    table = HullTable(hulls)
    ids = list(range(len(hulls)))
    ia = rng.integers(0, len(hulls), k)
    ib = rng.integers(0, len(hulls), k)
    caches = np.full((k, 3), -1, np.int64)
    caches[: k // 2] = [0, 0, -1]  # stale or foreign cache entries are harmless: same result both ways
    check_equal_one_by_one(hulls, table, ids, ia, random_poses(rng, k, spread), ib,
                           random_poses(rng, k, spread), margin, caches)


def test_empty_batch():
    table = HullTable([HullData.from_points(CORNERS)])
    out = collide_hull_pairs(table, [], np.zeros((0, 4, 4)), [], np.zeros((0, 4, 4)))
    assert len(out) == 0
    assert out.count.shape == (0,) and out.points_a.shape == (0, 4, 3) and out.ids.dtype == np.int64


def test_table_packing_growth_and_dedup():
    rng = np.random.default_rng(7)
    hulls = random_hulls(rng, n_box=4, n_big=3, n_small=20)
    table = HullTable()
    for n, h in enumerate(hulls):
        assert table.add(h) == n
        assert table.add(h) == n  # the same HullData again: its id
        # Collide with the table as it is now (growth between calls keeps everything valid).
        k = 3
        ia = rng.integers(0, n + 1, k)
        ib = rng.integers(0, n + 1, k)
        check_equal_one_by_one(hulls[: n + 1], table, list(range(n + 1)), ia, random_poses(rng, k, 0.6), ib,
                               random_poses(rng, k, 0.6), 0.0, np.full((k, 3), -1, np.int64))
    assert len(table) == len(hulls)
    poly = ConvexPolyhedron.from_points(CORNERS * 2)
    i = table.add(poly)
    assert table.add(poly) == i and table.add(HullData.from_polyhedron(poly)) == i
    assert table.hull(i) is HullData.from_polyhedron(poly)
    # Each array is the concatenation of the hulls' arrays, with starts at the cumulative lengths.
    every = hulls + [table.hull(i)]
    for c, name in enumerate(("vertices", "normals", "offsets", "face_start", "face_verts", "edge_verts",
                              "edge_faces", "vert_face_start", "vert_faces")):
        parts = [getattr(h, name) for h in every]
        np.testing.assert_array_equal(table.array(name), np.concatenate(parts))
        np.testing.assert_array_equal(table.starts[:, c], np.concatenate([[0], np.cumsum([len(p) for p in parts])]))
    np.testing.assert_array_equal(table.scale, [h.scale for h in every])
    np.testing.assert_array_equal(table.extend(every[:3]), [0, 1, 2])


def test_bad_input():
    table = HullTable([HullData.from_points(CORNERS), HullData.from_points(CORNERS * 2)])
    k = 3
    good = np.tile(np.eye(4), (k, 1, 1))
    ids = np.array([0, 1, 0])

    def call(ia=ids, pa=good, ib=ids, pb=good, margin=0.0, caches=None, tab=table):
        return collide_hull_pairs(tab, ia, pa, ib, pb, margin, caches)

    call()
    nan = good.copy()
    nan[2, 0, 3] = np.nan
    with pytest.raises(ValueError, match=r"poses_a\[2\]: contains NaN"):
        call(pa=nan)
    skew = good.copy()
    skew[1, 0, 1] = 0.5
    with pytest.raises(ValueError, match=r"poses_b\[1\]: is not a rigid"):
        call(pb=skew)
    mirror = good.copy()
    mirror[0, 2, 2] = -1.0
    with pytest.raises(ValueError, match=r"poses_b\[0\]: is not a rigid"):
        call(pb=mirror)
    lastrow = good.copy()
    lastrow[2, 3, 0] = 1.0
    with pytest.raises(ValueError, match=r"poses_a\[2\]"):
        call(pa=lastrow)
    with pytest.raises(ValueError, match="poses_a: expected shape"):
        call(pa=good[:2])
    with pytest.raises(ValueError, match="poses_b: expected shape"):
        call(pb=np.zeros((k, 3, 4)))
    with pytest.raises(ValueError, match="poses_a: expected real numbers"):
        call(pa=np.full((k, 4, 4), "x"))
    with pytest.raises(ValueError, match=r"hull_ids_b\[1\]: hull id 5"):
        call(ib=[0, 5, 0])
    with pytest.raises(ValueError, match=r"hull_ids_a\[0\]: hull id -1"):
        call(ia=[-1, 0, 0])
    with pytest.raises(ValueError, match="hull_ids_a: expected integer"):
        call(ia=[0.0, 1.0, 0.0])
    with pytest.raises(ValueError, match="hull_ids_a: expected shape"):
        call(ia=[[0, 1, 0]])
    with pytest.raises(ValueError, match="hull_ids_b: 2 ids for 3"):
        call(ib=[0, 1])
    for m in (-0.1, np.inf, np.nan):
        with pytest.raises(ValueError, match="margin"):
            call(margin=m)
    for c in (np.full((k, 3), -1, np.int32), np.full((k, 4), -1, np.int64), np.full((k + 1, 3), -1, np.int64),
              np.full((3, k), -1, np.int64).T, [[-1, -1, -1]] * k):
        with pytest.raises(ValueError, match="caches"):
            call(caches=c)
    with pytest.raises(ValueError, match="table"):
        call(tab=[HullData.from_points(CORNERS)])
    with pytest.raises(ValueError, match="hull"):
        table.add(CORNERS)


def test_unchecked_call_gives_the_same_rows_and_still_rejects_a_bad_pose():
    """``check=False`` skips the argument checks only: the same rows and caches as the checked
    call, and a non-rigid pose is still named."""
    rng = np.random.default_rng(3)
    hulls = random_hulls(rng)
    table = HullTable()
    for h in hulls:
        table.add(h)
    k = 200
    ia, pa, ib, pb, margins, ca, cb = random_batch(rng, len(hulls), k)
    a = collide_hull_pairs(table, ia, pa, ib, pb, margins, ca)
    b = collide_hull_pairs(table, ia, pa, ib, pb, margins, cb, check=False)
    for f in ("count", "normal", "points_a", "points_b", "depths", "ids", "kind", "tests", "sat_depth"):
        assert np.array_equal(getattr(a, f), getattr(b, f)), f
    assert np.array_equal(ca, cb)
    pa[4, :3, :3] = 0.0
    with pytest.raises(ValueError, match=r"poses_a\[4\]"):
        collide_hull_pairs(table, ia, pa, ib, pb, margins, check=False)


FIELDS_ALL = ("count", "normal", "points_a", "points_b", "depths", "ids", "kind", "tests", "sat_depth")


def test_out_batch_is_overwritten_in_its_first_rows_and_kept_after_them():
    """``out=``: a batch kept from call to call (as the world's contact manager keeps one) gets
    exactly the rows a new batch would, rows ``[0, k)`` whatever they held before (the last call's
    rows, or garbage), and the rows after ``k`` untouched; checked and unchecked calls alike."""
    rng = np.random.default_rng(11)
    hulls = random_hulls(rng)
    table = HullTable(hulls)
    out = ManifoldBatch.empty(150)
    for f in FIELDS_ALL:  # garbage everywhere, so a row the kernel forgot to write shows
        getattr(out, f)[...] = 7
    for k, check in ((120, True), (60, False), (120, False), (0, True)):
        ia, pa, ib, pb, margins, ca, cb = random_batch(rng, len(hulls), k)
        tail = {f: getattr(out, f)[k:].copy() for f in FIELDS_ALL}
        want = collide_hull_pairs(table, ia, pa, ib, pb, margins, ca)
        got = collide_hull_pairs(table, ia, pa, ib, pb, margins, cb, check=check, out=out)
        assert got is out
        for f in FIELDS_ALL:
            assert np.array_equal(getattr(out, f)[:k], getattr(want, f)), (k, f)
            assert np.array_equal(getattr(out, f)[k:], tail[f]), (k, f)
        assert np.array_equal(ca, cb)
        assert k == 0 or 0 < np.count_nonzero(want.count) < k  # contacts and empty rows both written over


def test_out_batch_is_checked():
    table = HullTable([HullData.from_points(CORNERS)])
    k = 3
    poses = np.tile(np.eye(4), (k, 1, 1))
    ids = np.zeros(k, np.int64)
    small = ManifoldBatch.empty(2)
    with pytest.raises(ValueError, match="out: 2 rows for 3 pairs"):
        collide_hull_pairs(table, ids, poses, ids, poses, out=small)
    with pytest.raises(ValueError, match="out: expected a ManifoldBatch, got dict"):
        collide_hull_pairs(table, ids, poses, ids, poses, out={"count": np.zeros(3)})
    b = ManifoldBatch.empty(4)
    wrong = ManifoldBatch(**{f: getattr(b, f) for f in FIELDS_ALL if f != "ids"}, ids=np.zeros((4, 4), np.int32))
    with pytest.raises(ValueError, match=r"out.ids: expected a writeable C-contiguous int64 array of shape \(4, 4\), got int32"):
        collide_hull_pairs(table, ids, poses, ids, poses, out=wrong)
    strided = ManifoldBatch(**{f: getattr(b, f) for f in FIELDS_ALL if f != "normal"},
                            normal=np.zeros((4, 6))[:, ::2])
    with pytest.raises(ValueError, match="out.normal: expected a writeable C-contiguous float64"):
        collide_hull_pairs(table, ids, poses, ids, poses, out=strided)
    short = ManifoldBatch(**{f: getattr(b, f) for f in FIELDS_ALL if f != "depths"}, depths=np.zeros((3, 4)))
    with pytest.raises(ValueError, match=r"out.depths: .* shape \(4, 4\), got float64 \(3, 4\)"):
        collide_hull_pairs(table, ids, poses, ids, poses, out=short)
    frozen = ManifoldBatch.empty(4)
    frozen.kind.flags.writeable = False
    with pytest.raises(ValueError, match="out.kind"):
        collide_hull_pairs(table, ids, poses, ids, poses, out=frozen)


def test_kernel_arguments_follow_the_table_and_the_box_route():
    """The table's kernel arguments are kept between calls: a hull added after a call (the arrays
    grown and moved) and the box route switched off are both seen by the next call."""
    import obbcollide.hull_batch as hb

    rng = np.random.default_rng(5)
    hulls = random_hulls(rng, n_box=2, n_big=1, n_small=1)
    table = HullTable(hulls[:2])
    k = 40
    for n in range(2, len(hulls) + 1):
        if n > 2:
            table.add(hulls[n - 1])
        ia, ib = rng.integers(0, n, k), rng.integers(0, n, k)
        check_equal_one_by_one(hulls[:n], table, list(range(n)), ia, random_poses(rng, k, 0.6), ib,
                               random_poses(rng, k, 0.6), 0.02, np.full((k, 3), -1, np.int64))
    boxes = [table.add(HullData.from_points(CORNERS * s)) for s in (0.5, 0.7)]
    ia, ib = np.array(boxes * 20), np.array(boxes[::-1] * 20)
    pa, pb = random_poses(rng, 40, 0.3), random_poses(rng, 40, 0.3)
    on = collide_hull_pairs(table, ia, pa, ib, pb, 0.02)
    assert table._kernel_args()[-3][boxes].all()  # the box route's flags reach the kernel
    try:
        hb.BOX_PAIRS = False
        assert not table._kernel_args()[-3].any()
        off = collide_hull_pairs(table, ia, pa, ib, pb, 0.02)
    finally:
        hb.BOX_PAIRS = True
    assert table._kernel_args()[-3][boxes].all()
    for f in ("count", "normal", "points_a", "points_b", "depths", "ids", "kind"):
        assert np.array_equal(getattr(on, f), getattr(off, f)), f
    assert np.all(on.sat_depth >= off.sat_depth)  # (edge pairs that cannot be chosen left out)
