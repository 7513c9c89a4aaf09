"""The distance search's child-pair box gaps read from node rows (``tree_pair.child_pair_gaps``).

They must be the array forms' numbers bit for bit (RAPID's descent rule
``_descend_a``, then ``_b_frame`` / ``_gap2_in`` when A splits, ``_a_frame`` /
``_frame_in_b`` / ``_gap2_rel`` when B splits), so that the search visits the
same node pairs in the same order, and every gap must stay a lower bound of the
two boxes' true squared distance (checked against GJK on the eight corners of
each box, an exact convex distance).
"""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from numba import njit
from scipy.spatial.transform import Rotation

import obbcollide as c
from obbcollide.tree_pair import (_a_frame, _b_frame, _descend_a, _frame_in_b, _gap2_in, _gap2_rel, _relative_t,
                                  child_pair_gaps)


@njit
def _array_form(nodes_a, links_a, nodes_b, links_b, na, nb, r, t):
    if _descend_a(nodes_a, links_a, nodes_b, links_b, na, nb):
        ch = links_a[na, 0]
        bf = _b_frame(nodes_b, nb, r, t)
        return ch, nb, _gap2_in(nodes_a, ch, nodes_b, nb, bf), ch + 1, nb, _gap2_in(nodes_a, ch + 1, nodes_b, nb, bf)
    ch = links_b[nb, 0]
    af = _a_frame(nodes_a, na, r, t)
    return (na, ch, _gap2_rel(_frame_in_b(af, nodes_b, ch), nodes_a, na, nodes_b, ch),
            na, ch + 1, _gap2_rel(_frame_in_b(af, nodes_b, ch + 1), nodes_a, na, nodes_b, ch + 1))


@njit
def _rows(nodes_a, links_a, nodes_b, links_b, na, nb, r, t):
    return child_pair_gaps(nodes_a, links_a, nodes_b, links_b, na, nb, r, t)


def _blob(seed, n=60):
    """A closed random star-shaped mesh: a convex hull of points on a bumpy sphere."""
    rng = np.random.default_rng(seed)
    p = rng.normal(size=(n, 3))
    p *= (rng.uniform(0.5, 1.5, n) / np.linalg.norm(p, axis=1))[:, None]
    p *= rng.uniform(0.2, 2.0, 3)
    return c.ConvexPolyhedron.from_points(p).vertices, c.ConvexPolyhedron.from_points(p).triangles


def _corners(nodes, k):
    ax = nodes[k, 3:12].reshape(3, 3)
    e = nodes[k, 12:15]
    s = np.array([[x, y, z] for x in (-1, 1) for y in (-1, 1) for z in (-1, 1)], float)
    return nodes[k, 0:3] + (s * e) @ ax


def _pose(rot, shift):
    p = np.eye(4)
    p[:3, :3] = Rotation.from_rotvec(rot).as_matrix()
    p[:3, 3] = shift
    return p


vec = st.lists(st.floats(-3, 3), min_size=3, max_size=3)


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 10 ** 6), st.integers(0, 10 ** 6), vec, vec, vec, vec, st.integers(0, 10 ** 6))
def test_child_pair_gaps_equal_array_form_and_bound_box_distance(sa, sb, ra, ta_, rb, tb_, pick):
    va, fa = _blob(sa)
    vb, fb = _blob(sb)
    tree_a = c.OBBTree(va, fa)
    tree_b = c.OBBTree(vb, fb, leaf_size=3)
    pa, pb = _pose(ra, ta_), _pose(rb, tb_)
    r, t = _relative_t(pa, pb)
    rng = np.random.default_rng(pick)
    na_, la = tree_a.nodes, tree_a.links
    nb_, lb = tree_b.nodes, tree_b.links
    pairs = [(0, 0)] + [(int(i), int(j)) for i, j in zip(rng.integers(0, len(na_), 30), rng.integers(0, len(nb_), 30))]
    checked = 0
    for i, j in pairs:
        if la[i, 0] < 0 and lb[j, 0] < 0:
            continue  # two leaves have no children
        got = _rows(na_, la, nb_, lb, i, j, r, t)
        ref = _array_form(na_, la, nb_, lb, i, j, r, t)
        if ref[2] > ref[5]:
            ref = ref[3:] + ref[:3]
        assert got == ref  # same node pairs, bit-identical gaps, nearer first
        assert got[2] <= got[5]
        for k in (0, 3):
            a_k, b_k, g2 = got[k], got[k + 1], got[k + 2]
            exact = c.gjk_distance(_corners(na_, a_k), pa, _corners(nb_, b_k), pb).distance
            assert g2 <= exact * exact * (1 + 1e-9) + 1e-12
        checked += 1
    assert checked > 0
