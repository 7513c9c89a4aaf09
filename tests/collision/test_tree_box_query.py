"""Triangles of a posed OBB tree near an oriented box (collision/tree_box_query.py).

The triangle-box test is compared with a linear program (is there a point in
both the triangle and the box?), which shares no code with the 13-axis test;
the tree walk with the brute-force twin that tests every face.
"""

import numpy as np
import pytest
import trimesh
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.optimize import linprog

import obbcollide as co
from obbcollide.tree_box_query import test_triangle_box_kernel as triangle_box
from obbcollide.tree_box_query import triangles_near_box, triangles_near_box_brute

from .._reference import random_rotation


def lp_gap(tri, c, axes, e):
    """Smallest uniform growth s of the box for which some triangle point lies in it (s <= 0: they meet).

    Variables: barycentrics w (3) and s; point = w @ tri; |axes_k . (point - c)| <= e_k + s.
    """
    a_ub, b_ub = [], []
    for k in range(3):
        proj = tri @ axes[k]  # (3,) projections of the corners
        a_ub.append(np.r_[proj, -1.0])
        b_ub.append(e[k] + axes[k] @ c)
        a_ub.append(np.r_[-proj, -1.0])
        b_ub.append(e[k] - axes[k] @ c)
    res = linprog(np.r_[0, 0, 0, 1.0], A_ub=np.array(a_ub), b_ub=np.array(b_ub), A_eq=[[1, 1, 1, 0]], b_eq=[1],
                  bounds=[(0, None)] * 3 + [(None, None)], method="highs")
    assert res.status == 0
    return res.x[3]


@settings(max_examples=300, deadline=None)
@given(st.integers(0, 2**32 - 1), st.floats(0.01, 2.0))
def test_triangle_box_equals_the_lp(seed, scale):
    rng = np.random.default_rng(seed)
    tri = rng.normal(size=(3, 3)) * scale
    if rng.random() < 0.2:  # degenerate: a needle or a point
        tri[2] = tri[0] + rng.random() * (tri[1] - tri[0])
    axes = random_rotation(rng)
    c = rng.normal(size=3)
    e = rng.uniform(0.0, 1.0, 3)
    gap = lp_gap(tri, c, axes, e)
    if abs(gap) < 1e-9:
        return  # touching within the LP's tolerance: either answer is right
    assert triangle_box(tri, c, axes, e) == (gap < 0), gap


def test_triangle_box_touching_counts():
    axes = np.eye(3)
    tri = np.array([[1.0, -1, -1], [1.0, 1, 0], [2.0, 0, 1]])  # touches the face x = 1
    assert triangle_box(tri, np.zeros(3), axes, np.ones(3))
    tri[:, 0] += 1e-12
    assert not triangle_box(tri, np.zeros(3), axes, np.ones(3))


def test_triangle_box_edge_crossing_a_box_edge():
    """Separated only by a cross-product axis (edge x box axis)."""
    axes = np.eye(3)
    e = np.ones(3)
    tri = np.array([[2.2, 0.0, -5.0], [0.0, 2.2, -5.0], [1.1, 1.1, 5.0]])  # x + y = 2.2 plane-ish, near the edge
    assert not triangle_box(tri, np.zeros(3), axes, e)
    tri -= 0.25
    assert triangle_box(tri, np.zeros(3), axes, e)


@pytest.fixture(scope="module")
def trees():
    knot = trimesh.creation.torus(1.0, 0.3, major_sections=48, minor_sections=16) \
        if hasattr(trimesh.creation, "torus") else trimesh.creation.annulus(0.7, 1.3, 0.6)
    return [co.OBBTree(trimesh.creation.icosphere(3)), co.OBBTree(knot)]


@pytest.mark.parametrize("seed", range(60))
def test_tree_walk_equals_brute_force(trees, seed):
    rng = np.random.default_rng(seed)
    tree = trees[seed % 2]
    pose = np.eye(4)
    pose[:3, :3] = random_rotation(rng)
    pose[:3, 3] = rng.normal(size=3) * 0.3
    c = rng.normal(size=3) * 0.8
    axes = random_rotation(rng)
    e = rng.uniform(0.0, 0.6, 3)
    got = triangles_near_box(tree, pose, c, axes, e)
    np.testing.assert_array_equal(got, triangles_near_box_brute(tree, pose, c, axes, e))


def test_box_around_everything_gets_every_face(trees):
    tree = trees[0]
    got = triangles_near_box(tree, np.eye(4), np.zeros(3), np.eye(3), np.full(3, 10.0))
    np.testing.assert_array_equal(got, np.arange(len(tree.faces)))
    assert len(triangles_near_box(tree, np.eye(4), np.full(3, 5.0), np.eye(3), np.full(3, 0.1))) == 0


@pytest.mark.parametrize("kwargs, match", [
    (dict(center=[0, np.nan, 0]), "center"),
    (dict(axes=np.eye(2)), "axes"),
    (dict(half_extents=[1, -1, 1]), "half_extents"),
])
def test_bad_input(trees, kwargs, match):
    args = dict(center=np.zeros(3), axes=np.eye(3), half_extents=np.ones(3))
    args.update(kwargs)
    with pytest.raises(ValueError, match=match):
        triangles_near_box(trees[0], np.eye(4), **args)


def cache_arrays(rows):
    from obbcollide.tree_box_query import FAT_CAP

    return (np.full(rows, -1, np.int64), np.zeros((rows, 2, 3)), np.zeros(rows, np.int64),
            np.zeros((rows, FAT_CAP), np.int64))


def cached(tree, pose, c, axes, e, key, row, cache):
    from obbcollide.tree_box_query import near_box_faces_cached

    return near_box_faces_cached(tree.nodes, tree.links, tree.triangles, tree.tri_index, pose, c, axes, e,
                                 np.empty(len(tree.faces), np.int64), key, row, *cache)


def grid_floor(side, cells):
    """A flat floor y = 0 of ``cells`` x ``cells`` squares, two triangles each (an OBB tree)."""
    xs = np.linspace(-side / 2, side / 2, cells + 1)
    x, z = np.meshgrid(xs, xs)
    v = np.stack([x.ravel(), np.zeros(x.size), z.ravel()], axis=1)
    a = (np.arange(cells)[:, None] * (cells + 1) + np.arange(cells)[None, :]).ravel()
    f = np.concatenate([np.stack([a, a + cells + 1, a + 1], 1), np.stack([a + 1, a + cells + 1, a + cells + 2], 1)])
    return co.OBBTree(v, f)


@pytest.mark.parametrize("seed", range(8))
def test_cached_query_equals_the_tree_walk_along_a_random_walk(trees, seed):
    """Two boxes wander, each with its own cache row: one low over a finely cut floor (0.125 m cells: a
    box that left its cached box unnoticed would miss triangles), the other over a coarser floor and
    through a knot by turns (two trees taking turns on one row); the trees move now and then (the
    cache lives in their model frames); small steps (the rows reused) and jumps (taken again); then a
    box too large to cache. At every call the faces equal the tree walk's (and the brute force's
    every tenth step); the rows were reused most of the time."""
    rng = np.random.default_rng(seed)
    fine = grid_floor(3.0, 24)
    coarse = co.OBBTree(trimesh.creation.box(extents=(4.0, 0.2, 4.0)).subdivide().subdivide().subdivide())
    cache = cache_arrays(3)
    boxes = [(np.array([0.0, 0.05, 0.0]), np.eye(3), np.array([0.1, 0.08, 0.12])),
             (np.array([1.0, 0.0, 0.0]), random_rotation(rng), np.array([0.15, 0.15, 0.15]))]
    pose = np.eye(4)
    reused = calls = 0
    for step in range(150):
        if step % 50 == 25:  # the trees move
            pose[:3, :3] = random_rotation(rng)
            pose[:3, 3] = rng.normal(size=3) * 0.2
        for row, (c, axes, e) in enumerate(boxes):
            key = 0 if row == 0 else (1 if step % 7 else 2)  # (row 1: now and then the knot)
            tree = (fine, coarse, trees[1])[key]
            jump = rng.random() < 0.05
            c += rng.normal(size=3) * (0.4 if jump else 0.01) * (1.0, 0.3 if row == 0 else 1.0, 1.0)
            if row == 0:
                c[:] = np.clip(c, (-1.2, -0.05, -1.2), (1.2, 0.05, 1.2))  # (the first box stays on the floor)
            turn = random_rotation(rng) if jump and row else np.eye(3) + np.cross(np.eye(3), rng.normal(size=3) * 0.01)
            u, _, vt = np.linalg.svd(turn @ axes)
            axes[:] = u @ vt
            world_c = pose[:3, :3] @ c + pose[:3, 3]
            world_axes = np.ascontiguousarray(axes @ pose[:3, :3].T)
            before = cache[1][row].copy()
            got = cached(tree, pose, world_c, world_axes, e, key, row, cache)
            want = triangles_near_box(tree, pose, world_c, world_axes, e)
            np.testing.assert_array_equal(got, want)
            if step % 10 == 0:
                np.testing.assert_array_equal(got, triangles_near_box_brute(tree, pose, world_c, world_axes, e))
            reused += np.array_equal(before, cache[1][row]) and cache[0][row] == key
            calls += 1
            if row == 0:
                assert len(got) and cache[0][0] == 0  # (on the floor, cached)
    # a box larger than the cache takes: correct, never kept
    big = (np.zeros(3), np.eye(3), np.full(3, 1.5))
    got = cached(coarse, np.eye(4), *big, 1, 2, cache)
    np.testing.assert_array_equal(got, triangles_near_box(coarse, np.eye(4), *big))
    assert len(got) > cache[3].shape[1] and cache[0][2] == -1
    assert reused > 0.5 * calls, (reused, calls)
