"""Broad phases against brute force, and brute force against an independent numpy reference.

Every broad phase must return EXACTLY the pair set of closed-box overlap
(touching counts), with rows (i < j) sorted. The reference is a dense numpy
broadcast of the six comparisons, independent of the compiled kernels. No
tolerance anywhere: the comparisons are exact on float64 input.

Scenes: hypothesis on integer lattices (so that equal coordinates, touching
faces and zero-thickness boxes are common) and seeded random walks of a few
thousand frames in all (boxes of varied sizes, some huge, some flat, bodies
teleporting far away and back, ``n`` changing, everything identical). The
dynamic tree's ``validate()`` runs after every update.
"""

import os
import subprocess
import sys
import textwrap
import zlib

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from obbcollide.broad_phase import (
    BROAD_PHASES,
    BroadPhase,
    BruteForce,
    DynamicAABBTree,
    SweepAndPrune,
    UniformGrid,
    make_broad_phase,
)

NAMES = list(BROAD_PHASES)


def reference_pairs(lo, hi):
    """All closed-overlapping pairs by dense broadcasting, (k, 2) int64, sorted."""
    lo = np.asarray(lo, float)
    hi = np.asarray(hi, float)
    if len(lo) < 2:
        return np.empty((0, 2), np.int64)
    ov = np.all((lo[:, None, :] <= hi[None, :, :]) & (lo[None, :, :] <= hi[:, None, :]), axis=2)
    i, j = np.nonzero(np.triu(ov, 1))
    return np.stack([i, j], axis=1).astype(np.int64)


class Checker:
    """One instance of every broad phase, fed the same frames; compares each with the reference."""

    def __init__(self, **options):
        self.phases = {name: make_broad_phase(name, **options.get(name, {})) for name in NAMES}
        self.frames = 0

    def step(self, lo, hi):
        lo = np.asarray(lo, float)
        hi = np.asarray(hi, float)
        ref = reference_pairs(lo, hi) if len(lo) <= 400 else None
        brute = self.phases["brute"].update(lo, hi)
        if ref is not None:
            assert np.array_equal(brute, ref), "brute force differs from the numpy reference"
        for name, bp in self.phases.items():
            got = brute if name == "brute" else bp.update(lo, hi)
            assert got.dtype == np.int64 and got.ndim == 2 and got.shape[1] == 2, name
            if not np.array_equal(got, brute):
                a = set(map(tuple, got.tolist()))
                b = set(map(tuple, brute.tolist()))
                raise AssertionError(f"{name} frame {self.frames} n={len(lo)}: missing {sorted(b - a)[:5]}, "
                                     f"extra {sorted(a - b)[:5]}, order ok={a == b}")
            assert isinstance(bp.stats["box_tests"], int) and bp.stats["box_tests"] >= 0, name
            assert bp.stats["pairs"] == len(brute), name
        self.phases["tree"].validate()
        self.frames += 1
        return brute


# --------------------------------------------------------------------------- hypothesis


@st.composite
def lattice_scenes(draw):
    """A few frames of boxes on an integer lattice (scaled), with moves, teleports and n changes."""
    n0 = draw(st.integers(0, 40))
    scale = draw(st.sampled_from([1.0, 0.5, 1e-3, 7.25]))
    coord = st.integers(-6, 6)
    size = st.integers(0, 3)
    lo = np.array(draw(st.lists(st.tuples(coord, coord, coord), min_size=n0, max_size=n0)), float).reshape(-1, 3)
    ext = np.array(draw(st.lists(st.tuples(size, size, size), min_size=n0, max_size=n0)), float).reshape(-1, 3)
    frames = [(lo.copy(), ext.copy())]
    for _ in range(draw(st.integers(1, 5))):
        action = draw(st.sampled_from(["move", "move", "teleport", "grow", "shrink", "huge", "same"]))
        n = len(lo)
        if action == "move" and n:
            k = draw(st.integers(0, n - 1))
            lo[k] += draw(st.tuples(st.integers(-2, 2), st.integers(-2, 2), st.integers(-2, 2)))
        elif action == "teleport" and n:
            k = draw(st.integers(0, n - 1))
            lo[k] += draw(st.sampled_from([1e6, -1e9, 3e15]))
        elif action == "grow":
            m = draw(st.integers(1, 5))
            lo = np.vstack([lo, draw(st.lists(st.tuples(coord, coord, coord), min_size=m, max_size=m))])
            ext = np.vstack([ext, draw(st.lists(st.tuples(size, size, size), min_size=m, max_size=m))])
        elif action == "shrink" and n:
            m = draw(st.integers(0, n - 1))
            lo, ext = lo[:m], ext[:m]
        elif action == "huge" and n:
            k = draw(st.integers(0, n - 1))
            lo[k] = -100
            ext[k] = 200
        frames.append((lo.copy(), ext.copy()))
    return [(lo_ * scale, (lo_ + ext_) * scale) for lo_, ext_ in frames]


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(lattice_scenes())
def test_every_broad_phase_equals_brute_force_on_lattice_scenes(frames):
    check = Checker()
    for lo, hi in frames:
        check.step(lo, hi)


@settings(max_examples=100, deadline=None)
@given(st.integers(2, 60), st.sampled_from([0.0, 1.0, 2.5]), st.sampled_from([-3.0, 0.0, 1e8]))
def test_all_boxes_identical(n, size, at):
    lo = np.full((n, 3), at)
    hi = lo + size
    check = Checker()
    pairs = check.step(lo, hi)
    assert len(pairs) == n * (n - 1) // 2
    pairs = check.step(lo + 0.5, hi + 0.5)  # all move together
    assert len(pairs) == n * (n - 1) // 2


# --------------------------------------------------------------------------- seeded random walks


def random_walk(seed, n, frames, quantum=0.0, teleport=0.0, huge=0.0, flat=0.1, resize=0.0, step=0.05):
    """Frames of a random walk of boxes; yields (lo, hi).

    quantum > 0 snaps every coordinate to multiples of it (exact touching),
    teleport is the per-frame chance that a body jumps far away (and one far
    away comes back), huge the fraction of world-sized boxes, flat the
    fraction of zero-thickness boxes, resize the per-frame chance that n
    changes.
    """
    rng = np.random.default_rng(seed)
    side = (4.0 * max(n, 1)) ** (1 / 3) * 1.2

    def new_bodies(m):
        c = rng.uniform(0, side, (m, 3))
        h = rng.lognormal(-0.7, 0.5, (m, 3))
        h[rng.random(m) < huge] = side
        flat_rows = rng.random(m) < flat
        h[flat_rows, rng.integers(0, 3, flat_rows.sum())] = 0.0
        return c, h

    c, h = new_bodies(n)
    away = np.zeros(n, bool)
    for _ in range(frames):
        c = c + rng.normal(0, step, c.shape)
        if teleport and rng.random() < teleport and len(c):
            k = rng.integers(len(c))
            if away[k]:
                c[k] = rng.uniform(0, side, 3)
            else:
                c[k] = rng.choice([1e5, -1e7, 1e12]) * rng.uniform(0.5, 1.0, 3)
            away[k] = ~away[k]
        if resize and rng.random() < resize:
            if rng.random() < 0.5 and len(c) > 1:
                m = rng.integers(1, len(c))
                c, h, away = c[:m], h[:m], away[:m]
            else:
                c2, h2 = new_bodies(rng.integers(1, 20))
                c, h = np.vstack([c, c2]), np.vstack([h, h2])
                away = np.concatenate([away, np.zeros(len(c2), bool)])
        lo, hi = c - h, c + h
        if quantum:
            lo = np.floor(lo / quantum) * quantum
            hi = np.maximum(np.floor(hi / quantum) * quantum, lo)
        yield lo, hi


WALKS = {
    "smooth": dict(n=300, frames=400),
    "lattice_touching": dict(n=200, frames=400, quantum=0.25, step=0.1),
    "teleport_resize": dict(n=150, frames=600, teleport=0.3, resize=0.05),
    "huge_flat": dict(n=200, frames=300, huge=0.03, flat=0.4),
    "fast_chaotic": dict(n=120, frames=300, step=2.0, resize=0.1, teleport=0.1, quantum=0.5),
    "sparse": dict(n=60, frames=400, step=0.01),
}


@pytest.mark.parametrize("walk", sorted(WALKS))
def test_every_broad_phase_equals_brute_force_on_random_walks(walk):
    check = Checker()
    total = 0
    for lo, hi in random_walk(seed=zlib.crc32(walk.encode()), **WALKS[walk]):
        total += len(check.step(lo, hi))
    assert total > 0  # the walks do produce overlaps


def test_large_random_walk_without_dense_reference():
    """n = 2000: brute force (checked against numpy at small n) is the reference."""
    check = Checker()
    for lo, hi in random_walk(seed=7, n=2000, frames=15, teleport=0.5, flat=0.2):
        check.step(lo, hi)


def test_non_default_options_stay_exact():
    options = {"sap": {"axis": 2}, "grid": {"cell_size": 0.05, "max_cells": 8},
               "octree": {"max_depth": 12}, "tree": {"margin_rel": 0.0, "margin_abs": 0.0}}
    check = Checker(**options)
    for lo, hi in random_walk(seed=3, n=150, frames=100, huge=0.02, quantum=0.1):
        check.step(lo, hi)
    options = {"grid": {"cell_factor": 10.0}, "tree": {"margin_rel": 2.0, "shrink": 1.5}}
    check = Checker(**options)
    for lo, hi in random_walk(seed=4, n=150, frames=100, teleport=0.2):
        check.step(lo, hi)


def test_unit_cube_lattice_touching_faces_edges_corners():
    """Unit cubes on an integer lattice: each touches its 26 neighbours exactly."""
    g = np.stack(np.meshgrid(np.arange(5), np.arange(5), np.arange(4), indexing="ij"), -1).reshape(-1, 3)
    lo = g.astype(float)
    hi = lo + 1.0
    check = Checker()
    pairs = check.step(lo, hi)
    d = np.abs(g[pairs[:, 0]] - g[pairs[:, 1]])
    assert np.all(d.max(axis=1) == 1)
    # every lattice neighbour pair is there: count by offsets
    expected = sum(
        np.prod([5 - abs(dx), 5 - abs(dy), 4 - abs(dz)])
        for dx in (-1, 0, 1) for dy in (-1, 0, 1) for dz in (-1, 0, 1) if (dx, dy, dz) != (0, 0, 0)
    ) // 2
    assert len(pairs) == expected
    # a hair apart: no pairs at all
    pairs = check.step(lo * (1 + 1e-9), lo * (1 + 1e-9) + 1.0 - 1e-6)
    assert len(pairs) == 0


def test_small_n_and_n_changes():
    for name in NAMES:
        bp = make_broad_phase(name)
        for n in [0, 1, 2, 3, 2, 0, 5, 1, 4]:
            lo = np.zeros((n, 3))
            hi = np.ones((n, 3))
            pairs = bp.update(lo, hi)
            assert pairs.shape == (n * (n - 1) // 2, 2) and pairs.dtype == np.int64
        bp.clear()
        assert bp.update(np.zeros((3, 3)), np.ones((3, 3))).tolist() == [[0, 1], [0, 2], [1, 2]]


# --------------------------------------------------------------------------- per-structure properties


def test_sap_insertion_sort_is_coherent():
    """A slowly moving set: few swaps per frame, no full re-sort; a shuffle re-sorts."""
    rng = np.random.default_rng(11)
    n = 1000
    side = (4.0 * n) ** (1 / 3)
    c = rng.uniform(0, side, (n, 3))
    h = rng.uniform(0.25, 0.75, (n, 3))
    sap = SweepAndPrune()
    brute = BruteForce()
    sap.update(c - h, c + h)
    assert sap.stats["resorted"]
    def mean_swaps(step):
        pos = c
        swaps = []
        for _ in range(30):
            pos += rng.normal(0, step, pos.shape)
            assert np.array_equal(sap.update(pos - h, pos + h), brute.update(pos - h, pos + h))
            assert not sap.stats["resorted"]
            swaps.append(sap.stats["swaps"])
        return np.mean(swaps)

    slow, slower = mean_swaps(0.002), mean_swaps(0.0002)
    # 2n = 2000 end points, ~126 per unit length, each moving ~0.002: about 0.3 crossings each,
    # so a few hundred swaps; sorting from scratch would be ~2n log2(2n) = 22000 moves and an
    # insertion sort of an unsorted list ~n^2. Swaps scale with the speed.
    assert slow < 0.5 * n, slow
    assert slower < slow / 3, (slower, slow)
    still = sap.update(c - h, c + h)
    assert sap.stats["swaps"] == 0 and len(still) == brute.stats["pairs"]
    c = rng.permutation(c)  # everything jumps: too many swaps, the list is sorted from scratch
    assert np.array_equal(sap.update(c - h, c + h), brute.update(c - h, c + h))
    assert sap.stats["resorted"]


def test_sap_picks_the_axis_of_largest_spread():
    rng = np.random.default_rng(1)
    c = rng.uniform(0, 1, (200, 3)) * [1.0, 50.0, 3.0]
    sap = SweepAndPrune()
    sap.update(c - 0.1, c + 0.1)
    assert sap.stats["axis"] == 1


def test_grid_oversized_boxes_go_to_their_own_list():
    rng = np.random.default_rng(2)
    c = rng.uniform(0, 20, (300, 3))
    lo, hi = c - 0.5, c + 0.5
    lo[:3] = -1e6  # three boxes covering everything
    hi[:3] = 1e6
    grid = UniformGrid()
    pairs = grid.update(lo, hi)
    assert grid.stats["oversized"] == 3
    assert np.array_equal(pairs, reference_pairs(lo, hi))
    assert grid.stats["box_tests"] < 300 * 299 // 2


def test_octree_boxes_touching_exactly_on_the_split_planes():
    """Boxes whose faces lie exactly on the octree's middle planes (half-open children)."""
    from obbcollide.broad_phase.octree import root_cube

    corners_lo = np.array([[0.0, 0.0, 0.0], [7.9, 7.9, 7.9]])
    corners_hi = corners_lo + 0.1
    rlo, rhi = root_cube(corners_lo, corners_hi)
    lo, hi = list(corners_lo), list(corners_hi)
    # the split planes of levels 1..3 along every axis, as the octree computes them
    planes = []
    for axis in range(3):
        segs = [(rlo[axis], rhi[axis])]
        for _ in range(3):
            nxt = []
            for a, b in segs:
                m = 0.5 * a + 0.5 * b
                planes.append((axis, m))
                nxt += [(a, m), (m, b)]
            segs = nxt
    for axis, m in planes:
        base = np.full(3, 0.3 + 0.1 * axis)
        left_lo, left_hi = base.copy(), base + 0.05
        left_lo[axis], left_hi[axis] = m - 0.05, m  # ends exactly on the plane
        right_lo, right_hi = base.copy(), base + 0.05
        right_lo[axis], right_hi[axis] = m, m + 0.05  # starts exactly on it
        lo += [left_lo, right_lo]
        hi += [left_hi, right_hi]
    lo, hi = np.array(lo), np.array(hi)
    assert np.array_equal(root_cube(lo, hi)[1], rhi)
    check = Checker()
    pairs = check.step(lo, hi)
    assert len(pairs) >= len(planes)


def test_tree_fat_boxes_spare_reinsertion_and_tree_stays_shallow():
    rng = np.random.default_rng(5)
    n = 2000
    side = (4.0 * n) ** (1 / 3)
    c = rng.uniform(0, side, (n, 3))
    h = rng.uniform(0.25, 0.75, (n, 3))
    tree = DynamicAABBTree()
    brute = BruteForce()
    tree.update(c - h, c + h)
    assert tree.stats["reinserted"] == n
    reinserted = []
    for _ in range(60):
        c += rng.normal(0, 0.01, c.shape)
        assert np.array_equal(tree.update(c - h, c + h), brute.update(c - h, c + h))
        reinserted.append(tree.stats["reinserted"])
    tree.validate()
    assert reinserted[0] == 0  # the first small move stays inside every fat box
    assert np.mean(reinserted) < 0.1 * n
    assert tree.stats["height"] <= 2 * np.log2(n) + 2
    # boxes arriving in sorted order (worst case for plain insertion) still give a shallow tree
    x = np.arange(n, dtype=float)[:, None] * [1.0, 0.0, 0.0]
    tree = DynamicAABBTree(margin_rel=0.0, margin_abs=0.0)
    tree.update(x, x + 0.5)
    for k in range(1, 30):  # move a growing set of leaves far in sorted order: many re-insertions
        x[: 60 * k] += 1000.0
        tree.update(x, x + 0.5)
        tree.validate()
    assert tree.stats["height"] <= 2 * np.log2(n) + 2


def sah_ratio(tree):
    """The tree's SAH ratio from its arrays, in Python: the summed surface areas of the internal nodes
    reachable from the root over the root's (the brute-force twin of ``aabb_tree._sah_ratio``)."""
    def area(k):
        d = tree.hi[k] - tree.lo[k]
        return 2.0 * (d[0] * d[1] + d[1] * d[2] + d[2] * d[0])

    total, todo = 0.0, [tree.root]
    while todo:
        k = todo.pop()
        if tree.height[k] > 0:
            total += area(k)
            todo += [int(tree.child[k, 0]), int(tree.child[k, 1])]
    return total / area(tree.root)


def test_tree_refits_when_most_leaves_leave_their_boxes_at_once():
    """A layered pile falling in step leaves all its fat boxes in the same update: the tree's nodes
    are refitted to the new boxes then (its shape kept: not re-inserted leaf by leaf, not built
    anew), and it stays exact and valid, before and after the updates in which only a few leaves
    move (re-inserted one by one)."""
    from obbcollide.broad_phase import aabb_tree as at

    rng = np.random.default_rng(11)
    n = 600
    c = np.stack(np.meshgrid(np.arange(10.0), np.arange(6.0), np.arange(10.0), indexing="ij"), -1).reshape(-1, 3)
    c *= 1.2
    h = np.full((n, 3), 0.5)
    tree, brute = DynamicAABBTree(), BruteForce()
    tree.update(c - h, c + h)
    built = sah_ratio(tree)
    shape = (tree.parent.copy(), tree.child.copy())
    log = []
    for step in range(60):
        if step < 40:
            c[:, 1] -= 0.05 * (1 + step // 10)  # everyone at once
        else:
            k = rng.integers(0, n, 20)  # a few
            c[k] += rng.normal(0, 0.3, (20, 3))
        assert np.array_equal(tree.update(c - h, c + h), brute.update(c - h, c + h))
        tree.validate()
        log.append((tree.stats["rebuilt"], tree.stats["refitted"], tree.stats["reinserted"]))
        if step < 40:  # the shape kept, and within REFIT_QUALITY of its build (its fat boxes reach
            # further down as the fall speeds up, its nodes with them)
            assert np.array_equal(tree.parent, shape[0]) and np.array_equal(tree.child, shape[1])
            assert sah_ratio(tree) <= at.REFIT_QUALITY * built
    assert any(f and m == n for r, f, m in log[:40])  # the whole pile left its boxes: refitted
    assert not any(r for r, f, m in log)
    assert all(not f for r, f, m in log[40:]) and any(m > 0 for r, f, m in log[40:])  # one by one
    assert all(f == (m > n // 8) for r, f, m in log)
    assert tree.stats["height"] <= 2 * np.log2(n) + 2


def test_tree_builds_anew_when_a_refit_would_leave_a_poor_tree():
    """When most leaves leave their fat boxes and the refit tree's SAH ratio would be more than
    REFIT_QUALITY times that of its last build (a pile thrown apart: each node's children end up
    far from each other), the tree is built anew; the next mass move is measured against the new
    build. Exact and valid throughout."""
    from obbcollide.broad_phase import aabb_tree as at

    rng = np.random.default_rng(5)
    n = 400
    c = rng.uniform(-3.0, 3.0, (n, 3))
    h = np.full((n, 3), 0.2)
    tree, brute = DynamicAABBTree(predict=0.0), BruteForce()  # (no drift: fat boxes of the jumps' size)
    tree.update(c - h, c + h)
    before = sah_ratio(tree)
    c = rng.permutation(c)  # every box to where another was: the same spread, the old shape meaningless
    assert np.array_equal(tree.update(c - h, c + h), brute.update(c - h, c + h))
    tree.validate()
    assert tree.stats["rebuilt"] and not tree.stats["refitted"] and tree.stats["reinserted"] == n
    after = sah_ratio(tree)
    assert after < at.REFIT_QUALITY * before  # a fresh build of the same spread is about as good
    assert float(tree._sah[0]) == pytest.approx(after, rel=1e-9)  # what the next refit is held to
    c[:, 0] += 0.1  # then all of it moves together, out of its fat boxes: refitted
    assert np.array_equal(tree.update(c - h, c + h), brute.update(c - h, c + h))
    tree.validate()
    assert tree.stats["refitted"] and tree.stats["reinserted"] == n
    assert sah_ratio(tree) <= at.REFIT_QUALITY * after


@settings(max_examples=60, deadline=None)
@given(st.integers(16, 200), st.lists(st.tuples(st.floats(0.0, 1.0), st.floats(0.0, 4.0), st.booleans()),
                                      min_size=1, max_size=12), st.integers(0, 2 ** 31 - 1))
def test_tree_refit_or_rebuild_stays_exact(n, moves, seed):
    """Any sequence of moves of a share of the leaves (a drift common to all of them, or each its
    own jump): whether the tree re-inserts, refits or builds anew, its pairs equal brute force, it
    validates, and after a refit its SAH ratio is within REFIT_QUALITY of its last build's."""
    from obbcollide.broad_phase import aabb_tree as at

    rng = np.random.default_rng(seed)
    c = rng.uniform(-2.0, 2.0, (n, 3))
    h = rng.uniform(0.02, 0.5, (n, 3))
    tree, brute = DynamicAABBTree(), BruteForce()
    tree.update(c - h, c + h)
    for share, size, together in moves:
        k = rng.random(n) < share
        c[k] += rng.normal(0.0, size, 3) if together else rng.normal(0.0, size, (int(k.sum()), 3))
        assert np.array_equal(tree.update(c - h, c + h), brute.update(c - h, c + h))
        tree.validate()
        if tree.stats["refitted"]:
            assert sah_ratio(tree) <= at.REFIT_QUALITY * float(tree._sah[0]) * (1 + 1e-12)
        if tree.stats["rebuilt"]:
            assert float(tree._sah[0]) == pytest.approx(sah_ratio(tree), rel=1e-9)


@settings(max_examples=60, deadline=None)
@given(st.integers(2, 160), st.floats(0.0, 1.0), st.floats(0.05, 3.0), st.integers(0, 2 ** 31 - 1))
def test_tree_query_in_one_descent_equals_a_query_per_moved_leaf(n, share, size, seed):
    """After a rebuild the tree finds the fat pairs of its moved leaves in one descent of itself
    (_query_all); it gives the keys of a query per moved leaf (_query_moved) and of brute force,
    for any share of moved leaves, boxes sparse to piled, coincident and touching ones included."""
    from obbcollide.broad_phase import aabb_tree as at

    rng = np.random.default_rng(seed)
    c = rng.uniform(-2.0, 2.0, (n, 3))
    c[rng.random(n) < 0.1] = c[0]  # some boxes on the same spot
    h = rng.uniform(0.02, 1.0, (n, 3)) * size
    touch = rng.random(n) < 0.1
    touch[0] = False
    c[touch, 0] = c[0, 0] + h[0, 0] + h[touch, 0]  # some touching box 0's +x face (up to rounding)
    lo, hi = c - h, c + h
    lo[touch, 0] = hi[0, 0]  # (exactly)
    tree = DynamicAABBTree()
    tree.update(lo, hi)
    moved = rng.random(n) < share
    flo, fhi = tree.lo, tree.hi
    got, _ = at._query_all(flo, fhi, tree.child, tree.height, tree.root, moved)
    want, _ = at._query_moved(flo, fhi, tree.child, tree.height, tree.root, moved)
    np.testing.assert_array_equal(got, want)
    brute = [i * n + j for i in range(n) for j in range(i + 1, n) if (moved[i] or moved[j])
             and np.all(flo[i] <= fhi[j]) and np.all(flo[j] <= fhi[i])]
    np.testing.assert_array_equal(got, np.array(brute, np.int64))


def test_tree_fat_boxes_reach_ahead_of_steady_motion():
    """Boxes falling at 5 cm a step (a 0.5 m box's margin is 6 cm): with the drift prediction a
    leaf is re-inserted every few steps, without it nearly every step; pairs equal brute force."""
    rng = np.random.default_rng(8)
    n = 400
    c = rng.uniform(0, 12, (n, 3))
    h = np.full((n, 3), 0.25)
    counts = {}
    for predict in (0.0, 2.0):
        tree, brute = DynamicAABBTree(predict=predict), BruteForce()
        x = c.copy()
        tree.update(x - h, x + h)
        total = 0
        for _ in range(40):
            x[:, 1] -= 0.05
            assert np.array_equal(tree.update(x - h, x + h), brute.update(x - h, x + h))
            total += tree.stats["reinserted"]
        tree.validate()
        counts[predict] = total / (40 * n)
    assert counts[0.0] > 0.4  # a re-insertion every second step or more often
    assert counts[2.0] < 0.5 * counts[0.0], counts
    with pytest.raises(ValueError, match="predict"):
        DynamicAABBTree(predict=-1.0)


def test_unchecked_update_gives_the_same_pairs():
    rng = np.random.default_rng(9)
    c = rng.uniform(0, 6, (300, 3))
    for name in BROAD_PHASES:
        a, b = make_broad_phase(name), make_broad_phase(name)
        for _ in range(5):
            c += rng.normal(0, 0.05, c.shape)
            lo, hi = np.ascontiguousarray(c - 0.3), np.ascontiguousarray(c + 0.3)
            assert np.array_equal(a.update(lo, hi), b.update(lo, hi, check=False)), name


def test_tree_validate_detects_corruption():
    rng = np.random.default_rng(6)
    c = rng.uniform(0, 5, (50, 3))
    tree = DynamicAABBTree()
    tree.update(c - 0.3, c + 0.3)
    tree.validate()
    root = tree.root
    tree.lo[root] += 1.0  # root no longer encloses its children
    with pytest.raises(AssertionError, match="enclose"):
        tree.validate()
    tree.clear()
    tree.update(c - 0.3, c + 0.3)
    tree.hi[7] = tree.tight_hi[7] - 0.01  # a leaf's fat box no longer holds its tight box
    with pytest.raises(AssertionError, match="fat box"):
        tree.validate()


# --------------------------------------------------------------------------- the public edge


@pytest.mark.parametrize("name", NAMES)
def test_bad_input_raises_value_error_naming_the_argument(name):
    bp = make_broad_phase(name)
    ok = np.zeros((4, 3))
    with pytest.raises(ValueError, match="lo"):
        bp.update(np.zeros((4, 2)), ok)
    with pytest.raises(ValueError, match="lo"):
        bp.update(np.zeros(3), np.ones(3))
    with pytest.raises(ValueError, match="hi"):
        bp.update(ok, np.ones((5, 3)))
    with pytest.raises(ValueError, match="lo"):
        bp.update(np.full((4, 3), np.nan), ok)
    with pytest.raises(ValueError, match="hi"):
        bp.update(ok, np.full((4, 3), np.inf))
    with pytest.raises(ValueError, match="hi"):
        bp.update(ok, ok - 1.0)  # lo > hi
    with pytest.raises(ValueError, match="lo"):
        bp.update([["a", "b", "c"]], ok[:1])
    assert bp.update(ok.tolist(), (ok + 1).tolist()).shape == (6, 2)  # lists are fine


def test_registry_and_factory():
    assert set(BROAD_PHASES) == {"brute", "sap", "grid", "octree", "tree"}
    for name, cls in BROAD_PHASES.items():
        bp = make_broad_phase(name)
        assert isinstance(bp, cls) and isinstance(bp, BroadPhase) and bp.name == name
    with pytest.raises(ValueError, match="brute.*sap.*grid.*octree.*tree"):
        make_broad_phase("kd-tree")
    with pytest.raises(ValueError, match="options"):
        make_broad_phase("grid", cell=3)
    with pytest.raises(ValueError, match="cell_size"):
        make_broad_phase("grid", cell_size=-1.0)
    with pytest.raises(ValueError, match="axis"):
        make_broad_phase("sap", axis=3)
    with pytest.raises(ValueError, match="margin_rel"):
        make_broad_phase("tree", margin_rel=float("nan"))


NOJIT_SCRIPT = textwrap.dedent("""
    import sys
    import numpy as np
    from obbcollide.broad_phase import BROAD_PHASES, make_broad_phase
    rng = np.random.default_rng(9)
    phases = {name: make_broad_phase(name) for name in BROAD_PHASES}
    c = rng.uniform(0, 6, (80, 3))
    h = rng.uniform(0, 0.8, (80, 3))
    out = {}
    for f in range(4):
        c = np.round(c + rng.normal(0, 0.3, c.shape), 1)
        lo, hi = c - h, c + h
        lo[0], hi[0] = -1e13, 1e13
        for name, bp in phases.items():
            out[f"{name}{f}"] = bp.update(lo, hi)
        phases["tree"].validate()
    np.savez(sys.argv[1], **out)
""")


def test_uncompiled_kernels_give_the_same_pairs(tmp_path):
    """NUMBA_DISABLE_JIT=1 (plain Python kernels) returns the same pairs as the compiled ones."""
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    outs = []
    for disable in ("1", "0"):
        path = tmp_path / f"pairs{disable}.npz"
        env = dict(os.environ, NUMBA_DISABLE_JIT=disable)
        r = subprocess.run([sys.executable, "-c", NOJIT_SCRIPT, str(path)], cwd=root, env=env,
                           capture_output=True, text=True, timeout=600)
        assert r.returncode == 0, r.stderr
        outs.append(dict(np.load(path)))
    assert outs[0].keys() == outs[1].keys()
    for key in outs[0]:
        assert np.array_equal(outs[0][key], outs[1][key]), key
    assert len(outs[1]["brute0"]) > 0
