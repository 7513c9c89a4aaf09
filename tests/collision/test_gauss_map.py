"""The pruned edge-pair search of the hull-hull SAT (collision.gauss_map) against its brute-force twin.

Reference: :func:`collision.gauss_map.edge_pairs_brute` (every arc of A against every arc of B,
the search collide_hull_hull ran before the caps) and, for whole manifolds,
``collide_hull_hull_kernel(..., brute=True)`` (that search plus the plain face queries). On random
convex hulls of 50 to 300 points near an ellipsoid (hundreds of edges), on boxes in exactly
face-to-face poses, and on a hull with near-coplanar faces (wild arcs), in touching, penetrating,
grazing and separated poses: touching pairs must give the very same manifold (status, kind,
count, tests, sat depth, normal, points, depths, ids and the updated cache, compared with ``==``),
separated pairs must be separated by both; and the pruned search must give the exact test to far
fewer arc pairs.
"""

import numpy as np
import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from scipy.spatial.transform import Rotation

from obbcollide import gauss_map as gm
from obbcollide.hull_data import HullData
from obbcollide.manifold import collide_hull_hull, collide_hull_hull_kernel, hull_arrays, hull_work

RNG_SEED = 20


def random_hull(rng, n):
    """The hull of ``n`` points near an ellipsoid (axes 0.5-1.5), centred at the origin."""
    p = rng.normal(size=(n, 3))
    p /= np.linalg.norm(p, axis=1)[:, None]
    p = p * rng.uniform(0.5, 1.5, 3) * rng.uniform(0.97, 1.0, (n, 1))
    return HullData.from_points(p - p.mean(0))


def box(hx, hy, hz):
    c = np.array([[x, y, z] for x in (-1, 1) for y in (-1, 1) for z in (-1, 1)], float)
    return HullData.from_points(c * [hx, hy, hz])


def pose(rot, t):
    p = np.eye(4)
    p[:3, :3] = rot
    p[:3, 3] = t
    return p


def run(ha, pa, hb, pb, margin, brute, cache=None):
    c = np.full(3, -1, np.int64) if cache is None else cache.copy()
    out = collide_hull_hull_kernel(*hull_arrays(ha), *hull_arrays(hb), pa, pb, margin,
                                   min(ha.scale, hb.scale), c, brute)
    return out, c


def assert_same(ha, pa, hb, pb, margin, cache=None, counts=None):
    """Pruned and brute kernels agree (all but the count of features tested, which the pruned
    search lowers); returns True when the pair touched. ``counts``: a dict whose "pruned" and
    "brute" entries get the two kernels' feature counts added."""
    (st, kind, cnt, tests, sep, *arrays), c = run(ha, pa, hb, pb, margin, False, cache)
    (st2, kind2, cnt2, tests2, sep2, *arrays2), c2 = run(ha, pa, hb, pb, margin, True, cache)
    assert st == st2 == 0
    if kind2 == 3 and cnt2 == 0:  # separated (beyond the margin): separated too, maybe by another axis
        assert kind == 3 and cnt == 0 and sep < -margin and sep2 < -margin
        if c2[0] in (0, 1):  # by a face: the same first separating face (the faces go in the same order)
            assert sep == sep2 and np.array_equal(c, c2)
        return False
    if counts is not None:
        counts["pruned"] = counts.get("pruned", 0) + tests
        counts["brute"] = counts.get("brute", 0) + tests2
    assert tests <= tests2
    assert (kind, cnt, sep) == (kind2, cnt2, sep2)
    for x, y in zip(arrays, arrays2):
        assert np.array_equal(x, y), (x, y)
    assert np.array_equal(c, c2)
    return True


def contact_distance(ha, ra, hb, rb, d):
    """The distance along ``d`` at which B (turned by ``rb``) stops touching A (turned by ``ra``),
    by bisection on the brute kernel."""
    lo, hi = 0.0, 4.0
    for _ in range(40):
        m = 0.5 * (lo + hi)
        (_, _, cnt, *_), _ = run(ha, pose(ra, 0 * d), hb, pose(rb, m * d), 0.0, True)
        lo, hi = (m, hi) if cnt else (lo, m)
    return lo


@pytest.fixture(scope="module")
def hulls():
    rng = np.random.default_rng(RNG_SEED)
    return [random_hull(rng, n) for n in (50, 80, 120, 200, 300)]


def test_caps_hold_their_arcs(hulls):
    """validate() checks that each bounded cap (arc and group) holds both ends of its arcs, under
    90 degrees, and that the groups partition the edges."""
    for h in hulls + [box(1, 2, 3)]:
        h.validate()
        sizes = np.diff(h.group_start)
        bounded = h.group_caps[:, 3] >= 0.0
        assert np.all(sizes[bounded] <= gm.ARC_GROUP)
        assert np.all(h.arc_caps[:, 3] >= 0.0)  # no wild arc on these hulls
    assert max(h.n_edges for h in hulls) > 500
    assert all(np.mean(h.group_caps[:, 3] >= 0.0) > 0.9 for h in hulls)  # most groups prune


@pytest.mark.parametrize("regime", ["touching", "penetrating", "deep", "grazing", "separated"])
def test_random_hulls_same_as_brute(hulls, regime):
    rng = np.random.default_rng(hash(regime) % 2**32)
    touched = 0
    counts = {}
    for _ in range(25):
        a, b = rng.integers(len(hulls), size=2)
        ha, hb = hulls[a], hulls[b]
        ra, rb = Rotation.random(2, random_state=rng).as_matrix()
        d = rng.normal(size=3)
        d /= np.linalg.norm(d)
        x = contact_distance(ha, ra, hb, rb, d)
        shift = {"touching": x - 1e-3, "penetrating": x - 0.05, "deep": 0.3 * x, "grazing": x,
                 "separated": x + 0.05}[regime]
        t = rng.normal(size=3)
        margin = float(rng.choice([0.0, 0.01, 0.1]))
        touched += assert_same(ha, pose(ra, t), hb, pose(rb, t + shift * d), margin, counts=counts)
    if regime in ("touching", "penetrating", "deep"):
        assert touched == 25
    if regime in ("touching", "penetrating", "grazing"):
        # the faces bounded by a few vertices and the edge pairs that cannot beat the best face
        # are not queried: far fewer features tested
        assert counts["pruned"] < 0.3 * counts["brute"], counts
    if regime == "separated":
        assert touched < 25


def test_cache_paths_same_as_brute(hulls):
    """With a cached feature from the last step (face of A, face of B or edge pair) the two
    kernels still agree, step after step."""
    rng = np.random.default_rng(7)
    for _ in range(10):
        ha, hb = hulls[3], hulls[4]
        ra, rb = Rotation.random(2, random_state=rng).as_matrix()
        d = rng.normal(size=3)
        d /= np.linalg.norm(d)
        x = contact_distance(ha, ra, hb, rb, d)
        cache = np.full(3, -1, np.int64)
        for s in np.linspace(x - 0.02, x + 0.02, 5):
            assert_same(ha, np.eye(4), hb, pose(rb @ Rotation.from_rotvec(0.01 * s * d).as_matrix(), s * d),
                        0.005, cache)
            _, cache = run(ha, np.eye(4), hb, pose(rb, s * d), 0.005, False, cache)


def test_boxes_face_to_face_same_as_brute():
    """Boxes in exactly parallel poses (arcs meeting at their ends, parallel edges: the ties and
    rounding cases of the Gauss-map test) and turned by small and right angles."""
    a, b = box(1.0, 0.5, 0.75), box(0.5, 0.5, 0.5)
    rng = np.random.default_rng(3)
    n = 0
    for k in range(4):
        for rot in (np.eye(3), Rotation.from_euler("y", 90 * k, degrees=True).as_matrix(),
                    Rotation.from_euler("xyz", [0, 1e-9 * k, 45 * k], degrees=True).as_matrix(),
                    Rotation.from_rotvec(rng.normal(size=3) * 1e-7).as_matrix()):
            for gap in (-0.1, -1e-12, 0.0, 1e-12, 0.1):
                pb = pose(rot, [0.3 * k, 1.0 + gap, 0.1])
                n += assert_same(a, np.eye(4), b, pb, 0.02)
                n += assert_same(b, pb, a, np.eye(4), 0.0)
    assert n > 40


def test_wild_arcs_same_as_brute():
    """A hull with faces at dihedral angles of ~1e-8 rad (a box with a face bulged by 1e-8, not
    merged by the hull builder): its arcs are too short for a trustworthy cap, go to the
    unbounded last group, and are tested against everything."""
    rng = np.random.default_rng(5)
    c = np.array([[x, y, z] for x in (-1, 1) for y in (-1, 1) for z in (-1, 1)], float) * 0.5
    bulge = HullData.from_points(np.vstack([c, [[0.1, 0.5 + 1e-8, 0.2], [-0.2, 0.5 + 1e-8, -0.1]]]))
    bulge.validate()
    assert np.any(bulge.arc_caps[:, 3] < 0.0) and bulge.group_caps[-1, 3] < 0.0
    wild = bulge.arc_order[bulge.group_start[-2]:]
    assert np.all(bulge.arc_caps[wild, 3] < 0.0)
    other = random_hull(rng, 100)
    touched = 0
    for _ in range(30):
        ra, rb = Rotation.random(2, random_state=rng).as_matrix()
        d = rng.normal(size=3)
        d /= np.linalg.norm(d)
        x = contact_distance(bulge, ra, other, rb, d)
        for s in (0.5 * x, x - 1e-3, x + 1e-3):
            touched += assert_same(bulge, pose(ra, 0 * d), other, pose(rb, s * d), 0.0)
            touched += assert_same(other, pose(rb, s * d), bulge, pose(ra, 0 * d), 0.0)
    assert touched >= 60


def test_pruned_search_visits_few_pairs(hulls):
    """edge_pairs_pruned gives the exact test to under 30% of the arc pairs (measured: ~10% on
    these hulls), with the same result and the same pairs evaluated as edge_pairs_brute."""
    rng = np.random.default_rng(11)
    visited = brute_visited = 0
    for _ in range(20):
        ha, hb = hulls[rng.integers(2, 5)], hulls[rng.integers(2, 5)]
        ra, rb = Rotation.random(2, random_state=rng).as_matrix()
        d = rng.normal(size=3)
        d /= np.linalg.norm(d)
        x = contact_distance(ha, ra, hb, rb, d)
        rot = ra.T @ rb
        t = ra.T @ ((x - 0.01) * d)
        vb_a = np.ascontiguousarray(hb.vertices @ rot.T + t)
        nb_a = np.ascontiguousarray(hb.normals @ rot.T)
        work = hull_work(max(len(ha.vertices), len(hb.vertices)), max(ha.n_faces, hb.n_faces),
                         max(ha.n_edges, hb.n_edges))
        best_p, best_b = np.empty(6), np.empty(6)
        sup_a, sup_b = supports(ha, hb, vb_a, nb_a)
        rp = gm.edge_pairs_pruned(ha.vertices, ha.normals, ha.edge_verts, ha.edge_faces, ha.arc_caps, ha.arc_order,
                                  ha.group_caps, ha.group_start, vb_a, nb_a, hb.edge_verts, hb.edge_faces,
                                  hb.arc_caps, hb.arc_order, hb.group_caps, hb.group_start, rot, 0.0, -np.inf,
                                  sup_a, sup_b, work[4], work[17], best_p)
        rb_ = gm.edge_pairs_brute(ha.vertices, ha.normals, ha.edge_verts, ha.edge_faces, vb_a, nb_a,
                                  hb.edge_verts, hb.edge_faces, 0.0, work[4], best_b)
        assert rp[:2] == rb_[:2] and rp[0] > 0 and not rp[1]
        assert np.array_equal(best_p, best_b)
        assert rb_[2] == ha.n_edges * hb.n_edges
        visited += rp[2]
        brute_visited += rb_[2]
    assert visited < 0.3 * brute_visited, (visited, brute_visited)


def test_public_call_uses_pruned_search(hulls):
    """collide_hull_hull (the pruned kernel) matches the brute twin on a many-edge pair."""
    ha, hb = hulls[4], hulls[3]
    rng = np.random.default_rng(2)
    ra, rb = Rotation.random(2, random_state=rng).as_matrix()
    d = np.array([0.0, 1.0, 0.0])
    x = contact_distance(ha, ra, hb, rb, d)
    m = collide_hull_hull(ha, pose(ra, 0 * d), hb, pose(rb, (x - 0.02) * d))
    (_, kind, cnt, tests, sep, normal, *_), _ = run(ha, pose(ra, 0 * d), hb, pose(rb, (x - 0.02) * d), 0.0, True)
    assert m.kind != "none" and len(m) == cnt and m.sat_depth == sep
    assert np.array_equal(m.normal, normal)
    # the pruned kernel's count of features tested (fewer: the edge pairs that cannot beat a face)
    (_, _, _, tests_p, *_), _ = run(ha, pose(ra, 0 * d), hb, pose(rb, (x - 0.02) * d), 0.0, False)
    assert m.tests == tests_p < tests


def supports(ha, hb, vb_a, nb_a):
    """``(sup_a, sup_b)`` of :func:`collision.gauss_map.edge_pairs_pruned` (B in A's frame)."""
    sup_a, sup_b = np.empty(ha.n_faces, np.int64), np.empty(hb.n_faces, np.int64)
    gm.face_supports(ha.normals, vb_a, sup_a)
    gm.face_supports(nb_a, ha.vertices, sup_b)
    return sup_a, sup_b


def face_separation(ha, hb, vb_a, nb_a, t):
    """The largest face-axis separation of the pair (B in A's frame, moved by ``t``), as the
    kernel's face queries compute it."""
    sa = (vb_a @ ha.normals.T).min(0) - ha.offsets
    sb = (ha.vertices @ nb_a.T).min(0) - (hb.offsets + nb_a @ t)
    return float(max(sa.max(), sb.max()))


def edge_searches(ha, pa, hb, pb, margin, floor=-np.inf):
    """``(pruned, brute)``: each search's ``(tests, found)`` and ``best`` (6,) for B in A's frame
    (the pruned search also returns the arc pairs it visited, third)."""
    rot = pa[:3, :3].T @ pb[:3, :3]
    t = pa[:3, :3].T @ (pb[:3, 3] - pa[:3, 3])
    vb_a = np.ascontiguousarray(hb.vertices @ rot.T + t)
    nb_a = np.ascontiguousarray(hb.normals @ rot.T)
    work = hull_work(max(len(ha.vertices), len(hb.vertices)), max(ha.n_faces, hb.n_faces),
                     max(ha.n_edges, hb.n_edges))
    best_p, best_b = np.empty(6), np.empty(6)
    if floor is None:
        floor = face_separation(ha, hb, vb_a, nb_a, t)
    sup_a, sup_b = supports(ha, hb, vb_a, nb_a)
    rp = gm.edge_pairs_pruned(ha.vertices, ha.normals, ha.edge_verts, ha.edge_faces, ha.arc_caps, ha.arc_order,
                              ha.group_caps, ha.group_start, vb_a, nb_a, hb.edge_verts, hb.edge_faces,
                              hb.arc_caps, hb.arc_order, hb.group_caps, hb.group_start, np.ascontiguousarray(rot),
                              margin, floor, sup_a, sup_b, work[4], work[17], best_p)
    rb = gm.edge_pairs_brute(ha.vertices, ha.normals, ha.edge_verts, ha.edge_faces, vb_a, nb_a,
                             hb.edge_verts, hb.edge_faces, margin, work[4], best_b)
    return (rp[:2], best_p, rp[2], floor), (rb[:2], best_b)


def test_small_hulls_take_the_full_edge_search():
    """Two boxes have 12 x 12 edge pairs, within SMALL_EDGE_PAIRS: the kernel searches them all
    (the caps save nothing there). The pruned search, which larger hulls take, gives the same
    overlap result on them (same tests, same best pair and separation), so the switch changes no
    manifold; a separated pair is separated by both searches."""
    from obbcollide.manifold import SMALL_EDGE_PAIRS

    a, b = box(1.0, 0.5, 0.75), box(0.5, 0.5, 0.5)
    assert a.n_edges * b.n_edges <= SMALL_EDGE_PAIRS < 50 * 50
    rng = np.random.default_rng(13)
    overlaps = separated = 0
    for k in range(40):
        rot = (Rotation.from_euler("y", rng.uniform(-0.2, 0.2)).as_matrix() if k % 2 else
               Rotation.random(random_state=rng).as_matrix())
        pb = pose(rot, [rng.uniform(-0.5, 0.5), rng.uniform(0.6, 1.8), rng.uniform(-0.5, 0.5)])
        for ha, pa_, hb, pb_ in ((a, np.eye(4), b, pb), (b, pb, a, np.eye(4))):
            (rp, best_p, _, _), (rb, best_b) = edge_searches(ha, pa_, hb, pb_, 0.01)
            if rb[1]:  # a separating edge pair: the pruned search finds one too (maybe another)
                assert rp[1] and best_p[0] > 0.01
                separated += 1
                continue
            assert rp == rb and np.array_equal(best_p, best_b)
            overlaps += 1
        # the kernel (full search for boxes) and its brute twin agree, as for any hull
        n = assert_same(a, np.eye(4), b, pb, 0.01)
        overlaps += n
    assert overlaps > 40 and separated > 0


def check_floor_search(ha, pa, hb, pb, margin, tag=lambda what: None):
    """The search with the face floor against the brute force and against the search without it
    (the caps alone): the same result wherever it can matter; returns ``(visited with the floor,
    visited without, tests with, tests without)``."""
    (rp, best_p, vis_p, floor), (rb, best_b) = edge_searches(ha, pa, hb, pb, margin, floor=None)
    (r0, best_0, vis_0, _), _ = edge_searches(ha, pa, hb, pb, margin)
    if floor > margin:
        return None  # a face separates: the kernel stops before the edge pairs
    assert rp[1] == rb[1] == r0[1]
    if rb[1]:
        # separated along an edge pair: the first one met, the same one as without the floor
        tag("an edge pair separates")
        assert np.array_equal(best_p, best_0) and best_p[0] > margin
        assert rp[0] <= r0[0] and vis_p <= vis_0
        return vis_p, vis_0, rp[0], r0[0]
    if best_b[0] > floor:
        tag("an edge pair beats the faces")
        # an edge pair beats every face: the same pair, separation and normal as the brute force
        assert np.array_equal(best_p, best_b) and np.array_equal(best_0, best_b)
    else:
        # no edge pair beats the faces: whatever the search kept is not above the floor either
        assert best_p[0] <= floor and np.array_equal(best_0, best_b)
    assert rp[0] <= r0[0] == rb[0] and vis_p <= vis_0
    return vis_p, vis_0, rp[0], r0[0]


@st.composite
def hull_pair(draw):
    """Two random convex hulls of 20-200 points (near an ellipsoid or uniform in a box), random
    orientations, B placed along a random direction from just touching (or slightly apart) to
    deep."""
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    hulls = []
    for _ in range(2):
        n = int(draw(st.integers(20, 200)))
        if draw(st.booleans()):
            p = rng.normal(size=(n, 3))
            p /= np.linalg.norm(p, axis=1)[:, None]
            p = p * rng.uniform(0.2, 1.5, 3) * rng.uniform(0.9, 1.0, (n, 1))
        else:
            p = rng.uniform(-1.0, 1.0, (n, 3)) * rng.uniform(0.2, 1.5, 3)
        hulls.append(HullData.from_points(p - p.mean(0) + rng.normal(size=3) * 0.3))
    ra, rb = Rotation.random(2, random_state=rng).as_matrix()
    d = rng.normal(size=3)
    d /= np.linalg.norm(d)
    x = contact_distance(hulls[0], ra, hulls[1], rb, d)
    shift = x * draw(st.sampled_from([0.3, 0.9, 0.99, 0.999, 1.0, 1.001, 1.02]))
    t = rng.normal(size=3)
    margin = draw(st.sampled_from([0.0, 0.01, 0.1]))
    return hulls[0], pose(ra, t), hulls[1], pose(rb, t + shift * d), margin


@settings(max_examples=60, deadline=None, database=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow])
@given(hull_pair())
def test_floor_search_same_as_brute(pair):
    """Random hulls of 20-200 points, random poses, touching, deep and separated: the search with
    the face floor gives the brute force's best pair whenever that pair beats the faces (and the
    same separating pair as the search without the floor), and the whole kernel gives the brute
    twin's manifold."""
    ha, pa, hb, pb, margin = pair
    for args in ((ha, pa, hb, pb, margin), (hb, pb, ha, pa, margin)):
        if check_floor_search(*args, tag=event) is not None:
            event("edge pairs searched")
    event("touching" if assert_same(ha, pa, hb, pb, margin) else "separated")


def test_floor_prunes_most_pairs(hulls):
    """Touching many-edge hulls: with the face floor the search visits and evaluates a small part of
    what the caps alone leave (the scene's decomposed meshes: under 1% of the arc pairs)."""
    rng = np.random.default_rng(23)
    vis = vis0 = ts = ts0 = 0
    for _ in range(20):
        ha, hb = hulls[rng.integers(1, 5)], hulls[rng.integers(1, 5)]
        ra, rb = Rotation.random(2, random_state=rng).as_matrix()
        d = rng.normal(size=3)
        d /= np.linalg.norm(d)
        x = contact_distance(ha, ra, hb, rb, d)
        out = check_floor_search(ha, pose(ra, 0 * d), hb, pose(rb, (x - 1e-3) * d), 0.0)
        vis, vis0, ts, ts0 = vis + out[0], vis0 + out[1], ts + out[2], ts0 + out[3]
    assert vis < 0.2 * vis0 and ts < 0.2 * ts0, (vis, vis0, ts, ts0)


def test_floor_with_edge_contacts():
    """Edge-on-edge contacts of two wedges (the edge pair beats every face): the floor keeps the
    winning pair, in the search and in the kernel."""
    rng = np.random.default_rng(31)
    t = np.linspace(0, 2 * np.pi, 24, endpoint=False)
    # a long wedge: a ridge along x with many facets around it
    ring = np.c_[np.zeros(24), 0.2 * np.cos(t), 0.6 * np.abs(np.sin(t)) ** 0.3 * np.sign(np.sin(t))]
    wedge = HullData.from_points(np.vstack([ring + [1.5, 0, 0], ring - [1.5, 0, 0]]))
    edges = 0
    for _ in range(30):
        ra = Rotation.random(random_state=rng).as_matrix()
        rb = ra @ Rotation.from_euler("z", rng.uniform(30, 150), degrees=True).as_matrix() @ \
            Rotation.from_euler("x", 180, degrees=True).as_matrix()
        d = ra @ [0.0, 0.0, 1.0]
        x = contact_distance(wedge, ra, wedge, rb, d)
        for s in (x - 1e-3, x - 1e-2):
            pa, pb = pose(ra, 0 * d), pose(rb, s * d)
            check_floor_search(wedge, pa, wedge, pb, 0.0)
            assert_same(wedge, pa, wedge, pb, 0.0)
            (_, kind, *_), _ = run(wedge, pa, wedge, pb, 0.0, False)
            edges += kind == 2
    assert edges > 20
