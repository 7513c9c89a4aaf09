"""Every node's distinct corner points (``node_points``) and the distance search's support bound.

The points must be the node's vertices exactly (against the plain-numpy twin),
the support gap of a node pair must stay below the true distance of the two
nodes' triangles (brute force over every triangle pair), and searches with
and without the bound must find the same distance, equal to brute force.
"""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from numba import njit
from scipy.spatial.transform import Rotation

import obbcollide as c
from obbcollide.mesh_distance import SUPPORT_POINTS, _support_gap2, distance_kernel
from obbcollide.node_points import node_points, node_points_brute
from obbcollide.tree_pair import _relative_t, boxes_gap2


@njit
def _gap2(nodes_a, xa, ra, nodes_b, xb, rb, na, nb, pa, pb):
    r, t = _relative_t(pa, pb)
    return _support_gap2(nodes_a, xa, ra, nodes_b, xb, rb, na, nb, r, t), boxes_gap2(nodes_a, na, nodes_b, nb, r, t)


def _blob(seed, n=60):
    """A closed random star-shaped mesh: a convex hull of points on a bumpy sphere."""
    rng = np.random.default_rng(seed)
    p = rng.normal(size=(n, 3))
    p *= (rng.uniform(0.5, 1.5, n) / np.linalg.norm(p, axis=1))[:, None]
    p *= rng.uniform(0.2, 2.0, 3)
    h = c.ConvexPolyhedron.from_points(p)
    return h.vertices, h.triangles


def _wavy(seed, k=9):
    """An open wavy sheet (a height field): curved patches whose boxes hold empty corners."""
    rng = np.random.default_rng(seed)
    x, y = np.meshgrid(np.linspace(-1, 1, k), np.linspace(-1, 1, k))
    z = 0.3 * np.sin(rng.uniform(1, 4) * x + rng.uniform(0, 3)) * np.cos(rng.uniform(1, 4) * y)
    v = np.column_stack([x.ravel(), y.ravel(), z.ravel()])
    f = []
    for i in range(k - 1):
        for j in range(k - 1):
            a = i * k + j
            f += [[a, a + 1, a + k + 1], [a, a + k + 1, a + k]]
    return v, np.array(f)


def _pose(rot, shift):
    p = np.eye(4)
    p[:3, :3] = Rotation.from_rotvec(rot).as_matrix()
    p[:3, 3] = shift
    return p


def _tri_dist2(ta, pa, sa, ca, tb, pb, sb, cb):
    """Brute force: the least squared distance over every triangle pair of two nodes (world frame)."""
    A = ta.triangles[sa:sa + ca] @ pa[:3, :3].T + pa[:3, 3]
    B = tb.triangles[sb:sb + cb] @ pb[:3, :3].T + pb[:3, 3]
    x = np.repeat(A, len(B), axis=0)
    y = np.tile(B, (len(A), 1, 1))
    p, q = c.closest_pt_triangle_triangle(x[:, 0], x[:, 1], x[:, 2], y[:, 0], y[:, 1], y[:, 2])
    return float(np.min(np.sum((p - q) ** 2, axis=1)))


MESHES = [_blob(1), _blob(2, 30), _wavy(3), _wavy(4, 6)]


def test_node_points_equal_the_brute_force_twin():
    for v, f in MESHES:
        for leaf in (1, 3):
            t = c.OBBTree(v, f, leaf_size=leaf)
            pts, rng = node_points(t.vertices, t.faces, t.links, t.tri_index)
            want = node_points_brute(t.vertices, t.faces, t.links, t.tri_index)
            assert len(rng) == t.node_count and rng[0, 0] == 0 and rng[-1, 1] == len(pts)
            for k, w in enumerate(want):
                assert np.array_equal(pts[rng[k, 0]:rng[k, 1]], w), k
            assert t.support_points[0] is t.support_points[0]  # computed once
            assert np.array_equal(t.support_points[0], pts) and np.array_equal(t.support_points[1], rng)


def test_node_points_of_a_cached_tree():
    """A tree made from stored arrays (``from_arrays``) computes the same points."""
    v, f = MESHES[2]
    t = c.OBBTree(v, f)
    u = c.OBBTree.from_arrays(t.vertices, t.faces, t.nodes.copy(), t.links.copy(), t.tri_index.copy())
    assert np.array_equal(u.support_points[0], t.support_points[0])
    assert np.array_equal(u.support_points[1], t.support_points[1])


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 3), st.integers(0, 3),
       st.lists(st.floats(-3, 3), min_size=3, max_size=3), st.lists(st.floats(-1.5, 1.5), min_size=3, max_size=3),
       st.lists(st.floats(-3, 3), min_size=3, max_size=3), st.lists(st.floats(-1.5, 1.5), min_size=3, max_size=3),
       st.integers(0, 10 ** 6), st.integers(0, 10 ** 6))
def test_support_gap_is_a_lower_bound_of_the_nodes_distance(ia, ib, ra, sa, rb, sb, ka, kb):
    ta, tb = c.OBBTree(*MESHES[ia]), c.OBBTree(*MESHES[ib])
    pa, pb = _pose(ra, sa), _pose(rb, sb)
    xa, rga = ta.support_points
    xb, rgb = tb.support_points
    # a node pair small enough for brute force, any depth
    small_a = np.flatnonzero(ta.count <= 12)
    small_b = np.flatnonzero(tb.count <= 12)
    na, nb = int(small_a[ka % len(small_a)]), int(small_b[kb % len(small_b)])
    g2, box2 = _gap2(ta.nodes, xa, rga, tb.nodes, xb, rgb, na, nb, pa, pb)
    d2 = _tri_dist2(ta, pa, ta.start[na], ta.count[na], tb, pb, tb.start[nb], tb.count[nb])
    assert g2 >= 0.0
    assert np.sqrt(g2) <= np.sqrt(d2) + 1e-9 * (1 + np.sqrt(d2))


@njit
def _search(nodes_a, links_a, tri_a, nodes_b, links_b, tri_b, pa, pb, xa, ra, xb, rb, k):
    out = np.empty((2, 3))
    if k < 0:
        return distance_kernel(nodes_a, links_a, tri_a, nodes_b, links_b, tri_b, pa, pb, 0.0, out)
    return distance_kernel(nodes_a, links_a, tri_a, nodes_b, links_b, tri_b, pa, pb, 0.0, out, np.inf,
                           xa, ra, xb, rb, k)


def test_search_with_support_bound_equals_brute_force_and_tests_fewer_pairs():
    rng = np.random.default_rng(7)
    fewer = 0
    runs = 0
    for ia, ib in ((0, 2), (2, 3), (1, 0), (3, 3)):
        ta, tb = c.OBBTree(*MESHES[ia]), c.OBBTree(*MESHES[ib])
        for _ in range(6):
            pa = _pose(rng.uniform(-3, 3, 3), rng.uniform(-0.3, 0.3, 3))
            pb = _pose(rng.uniform(-3, 3, 3), rng.uniform(-2.5, 2.5, 3))
            want = _tri_dist2(ta, pa, 0, len(ta.faces), tb, pb, 0, len(tb.faces))
            plain = _search(*ta.arrays, *tb.arrays, pa, pb, *ta.support_points, *tb.support_points, -1)
            boxes = [plain[4]]
            for k in (2, 16, SUPPORT_POINTS, 10 ** 9):
                res = _search(*ta.arrays, *tb.arrays, pa, pb, *ta.support_points, *tb.support_points, k)
                assert res[0] == 0
                np.testing.assert_allclose(res[1], want, rtol=1e-9, atol=1e-12)
                boxes.append(res[4])
            np.testing.assert_allclose(plain[1], want, rtol=1e-9, atol=1e-12)
            if want > 0:
                runs += 1
                fewer += boxes[-1] < boxes[0]
            public = c.distance(ta, pa, tb, pb)
            np.testing.assert_allclose(public.distance ** 2, want, rtol=1e-9, atol=1e-12)
    assert runs >= 5 and fewer >= runs // 2  # the tighter bound prunes on most separated poses
