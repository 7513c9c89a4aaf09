"""Dynamic AABB tree of fat boxes (the Box2D ``b2DynamicTree`` / Bullet ``btDbvt`` idea).

A binary tree whose leaves are the proxies, each holding a *fat* box (the
tight box grown by a margin) so that a body that moves a little stays inside
it and costs nothing; only when the tight box leaves its fat box is the leaf
removed and inserted again (Catto, "Dynamic AABB tree", GDC 2019; RTCD 6.2 on
incremental construction). Written from the ideas, not from their code.

- Insertion chooses the sibling by the surface-area heuristic (Goldsmith and
  Salmon 1987; MacDonald and Booth 1990): walking down from the root, stop at
  the node where making a new parent is cheaper than the cost (new area plus
  the area inherited by the ancestors) of descending into either child.
- After every insertion and removal the path to the root is refitted and
  rebalanced by AVL-style rotations (a child two levels taller than its
  sibling is rotated up), which keeps the tree from degenerating into a list
  when boxes arrive sorted or identical.
- Pairs are kept between updates as the sorted set of FAT-box overlaps
  (Box2D's pair buffer idea): a leaf that was not re-inserted kept its fat
  box, so its fat pairs with other such leaves still hold. Each update drops
  the pairs of re-inserted leaves, queries the tree once for each of them
  (a depth-first descent pruned by fat boxes, RTCD 6.3; when more than half of
  the leaves moved, one descent of the tree against itself instead) and merges
  the new pairs in; then every fat pair is tested on the TIGHT boxes, so the result equals
  brute force exactly. A slowly moving set costs O(n) checks plus
  O(moved log n) tree work plus O(fat pairs).
- When more than an eighth of the leaves leave their fat boxes in one update
  (a pile falling in step), the leaves get their new fat boxes and the
  internal nodes are refitted to them, children first (the tree keeps its
  shape), as long as its SAH ratio stays within 1.5 times what it was after
  its last build; otherwise they are built anew top down (median splits by
  quickselect). Either costs less than re-inserting that many leaves one by one.
- Leaves are nodes ``0..n-1`` (proxy ``i`` is leaf ``i``), internal nodes
  ``n..2n-2`` come from a free list; all state is in flat arrays that the
  compiled kernels change in place.

Margin of proxy ``i``: ``margin_rel * (largest side of its tight box) +
margin_abs`` on every side (world units), and on a re-insertion also ``predict``
times the drift its tight box made away from the centre of its old fat box, on
the side it drifted to (Box2D's displacement prediction: a falling box's fat box
reaches ahead of it and lasts several steps instead of one). A fat box
more than ``shrink`` times wider than needed on an axis is also refitted, so
a box that shrank (or a teleport from a huge box) does not keep a stale fat
box forever.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from .._jit import njit
from .._validate import MAX_COORD, as_number
from ._base import BroadPhase

__all__ = ["DynamicAABBTree"]

# meta[ROOT] is the root node (-1 when empty), meta[FREE] the number of free internal nodes
_ROOT = 0
_FREE = 1


@njit(borrow=True)
def _area(lo, hi, i):
    """Surface area of node ``i``'s box (the SAH cost measure)."""
    dx = hi[i, 0] - lo[i, 0]
    dy = hi[i, 1] - lo[i, 1]
    dz = hi[i, 2] - lo[i, 2]
    return 2.0 * (dx * dy + dy * dz + dz * dx)


@njit(borrow=True)
def _union_area(lo, hi, i, j):
    """Surface area of the box enclosing nodes ``i`` and ``j``."""
    dx = max(hi[i, 0], hi[j, 0]) - min(lo[i, 0], lo[j, 0])
    dy = max(hi[i, 1], hi[j, 1]) - min(lo[i, 1], lo[j, 1])
    dz = max(hi[i, 2], hi[j, 2]) - min(lo[i, 2], lo[j, 2])
    return 2.0 * (dx * dy + dy * dz + dz * dx)


@njit(borrow=True)
def _set_union(lo, hi, dst, i, j):
    for a in range(3):
        lo[dst, a] = min(lo[i, a], lo[j, a])
        hi[dst, a] = max(hi[i, a], hi[j, a])


@njit(borrow=True)
def _replace_child(child, parent, meta, old, new):
    """Make ``new`` take ``old``'s place under ``old``'s parent (or as the root)."""
    p = parent[old]
    parent[new] = p
    if p < 0:
        meta[_ROOT] = new
    elif child[p, 0] == old:
        child[p, 0] = new
    else:
        child[p, 1] = new


@njit(borrow=True)
def _balance(lo, hi, parent, child, height, meta, a):
    """One AVL rotation at node ``a`` if a child is 2+ levels taller; returns the subtree's root.

    The taller child ``c`` moves up into ``a``'s place; of ``c``'s children the
    taller stays under ``c`` and the other moves under ``a``.
    """
    if height[a] < 2:
        return a
    for side in range(2):
        tall = child[a, 1 - side]
        short = child[a, side]
        if height[tall] - height[short] <= 1 or height[tall] < 1:
            continue
        f = child[tall, 0]
        g = child[tall, 1]
        _replace_child(child, parent, meta, a, tall)
        # tall takes a as one child; keeps its taller child as the other
        if height[f] > height[g]:
            keep, give = f, g
        else:
            keep, give = g, f
        child[tall, 0] = a
        child[tall, 1] = keep
        parent[a] = tall
        child[a, 1 - side] = give
        parent[give] = a
        _set_union(lo, hi, a, short, give)
        height[a] = 1 + max(height[short], height[give])
        _set_union(lo, hi, tall, a, keep)
        height[tall] = 1 + max(height[a], height[keep])
        return tall
    return a


@njit(borrow=True)
def _fix_upwards(lo, hi, parent, child, height, meta, node):
    """Rebalance and refit every node from ``node`` to the root."""
    while node >= 0:
        node = _balance(lo, hi, parent, child, height, meta, node)
        c0 = child[node, 0]
        c1 = child[node, 1]
        height[node] = 1 + max(height[c0], height[c1])
        _set_union(lo, hi, node, c0, c1)
        node = parent[node]


@njit(borrow=True)
def _insert_leaf(lo, hi, parent, child, height, meta, free, leaf):
    """Insert ``leaf`` (its fat box already set) by the surface-area heuristic."""
    root = meta[_ROOT]
    height[leaf] = 0
    child[leaf, 0] = -1
    child[leaf, 1] = -1
    if root < 0:
        meta[_ROOT] = leaf
        parent[leaf] = -1
        return
    node = root
    while height[node] > 0:
        area = _area(lo, hi, node)
        combined = _union_area(lo, hi, node, leaf)
        cost_here = 2.0 * combined  # a new parent of node and leaf
        inherit = 2.0 * (combined - area)  # growth of node's box, paid by every ancestor below
        best = node
        best_cost = cost_here
        for s in range(2):
            c = child[node, s]
            grow = _union_area(lo, hi, c, leaf)
            if height[c] > 0:
                grow -= _area(lo, hi, c)
            cost = grow + inherit
            if cost < best_cost:
                best_cost = cost
                best = c
        if best == node:
            break
        node = best
    sibling = node
    meta[_FREE] -= 1
    p = free[meta[_FREE]]
    _replace_child(child, parent, meta, sibling, p)
    child[p, 0] = sibling
    child[p, 1] = leaf
    parent[sibling] = p
    parent[leaf] = p
    height[p] = height[sibling] + 1
    _set_union(lo, hi, p, sibling, leaf)
    # start at the new parent itself: when it became the root it may need a rotation too
    _fix_upwards(lo, hi, parent, child, height, meta, p)


@njit(borrow=True)
def _remove_leaf(lo, hi, parent, child, height, meta, free, leaf):
    """Take ``leaf`` out; its parent node goes back to the free list."""
    if meta[_ROOT] == leaf:
        meta[_ROOT] = -1
        parent[leaf] = -1
        return
    p = parent[leaf]
    sibling = child[p, 1] if child[p, 0] == leaf else child[p, 0]
    grand = parent[p]
    _replace_child(child, parent, meta, p, sibling)
    parent[leaf] = -1
    height[p] = -1
    free[meta[_FREE]] = p
    meta[_FREE] += 1
    _fix_upwards(lo, hi, parent, child, height, meta, grand)


@njit(borrow=True)
def _margin(tlo, thi, i, margin_rel, margin_abs):
    """Fat margin of leaf ``i`` (module docstring)."""
    ext = max(thi[i, 0] - tlo[i, 0], max(thi[i, 1] - tlo[i, 1], thi[i, 2] - tlo[i, 2]))
    return margin_rel * ext + margin_abs


@njit(borrow=True)
def _stale(tlo, thi, lo, hi, i, m, shrink):
    """0 when leaf ``i``'s fat box still holds, 1 when its tight box left it, 2 when the fat box
    is far too loose (wider than ``shrink`` times a fresh one on some axis)."""
    left = loose = False
    for a in range(3):
        if tlo[i, a] < lo[i, a] or thi[i, a] > hi[i, a]:
            left = True
        elif (hi[i, a] - lo[i, a]) > shrink * (thi[i, a] - tlo[i, a] + 2.0 * m):
            loose = True
    return 1 if left else (2 if loose else 0)


@njit(borrow=True)
def _refit_leaf(tlo, thi, lo, hi, i, m, g):
    """A new fat box for leaf ``i``: margin ``m``, grown ahead by ``g`` times twice the drift of the
    tight box's centre from the old fat box's centre (g = 0: no prediction)."""
    drift = (g * (tlo[i, 0] + thi[i, 0] - lo[i, 0] - hi[i, 0]), g * (tlo[i, 1] + thi[i, 1] - lo[i, 1] - hi[i, 1]),
             g * (tlo[i, 2] + thi[i, 2] - lo[i, 2] - hi[i, 2]))
    for a in range(3):
        ahead = drift[a]
        lo[i, a] = tlo[i, a] - m + min(ahead, 0.0)
        hi[i, a] = thi[i, a] + m + max(ahead, 0.0)
        # rounding may leave the fat box short of the tight one by an ulp: never allow that
        if lo[i, a] > tlo[i, a]:
            lo[i, a] = tlo[i, a]
        if hi[i, a] < thi[i, a]:
            hi[i, a] = thi[i, a]


# Re-build the whole tree instead of re-inserting when more than this fraction of the leaves left
# their fat boxes in one update (a pile falling in step leaves them all at once): one top-down build
# of n leaves costs about as much as n / 7 SAH re-insertions (measured at n = 1000: 0.2 ms against
# 1.5 ms for re-inserting all of them).
REBUILD_FRACTION = 0.125
# ... and before building, refit: keep the tree's shape and give every internal node the union of its
# children's new boxes (a bottom-up refit), which costs a pass over the nodes, and keep
# it while the tree's SAH ratio (the internal nodes' summed surface areas over the root's: the
# expected node visits of a query, Goldsmith and Salmon 1987) is at most REFIT_QUALITY times what
# it was right after its last build. A pile falling in step keeps its layout and its tree; a pile
# that scatters or collapses is built anew. Measured on 100 boxes falling in layers: the update
# of the step where three quarters of them leave their fat boxes went from 49 to 35 us.
REFIT_QUALITY = 1.5


@njit
def _update_leaves(tlo, thi, lo, hi, parent, child, height, meta, free, sah, margin_rel, margin_abs,
                   shrink, predict, moved):
    """Give a new fat box, grown ahead along the drift (``predict``, module docstring), to every leaf
    whose tight box left its fat box (or whose fat box is far too loose), and re-insert it; when
    more than :data:`REBUILD_FRACTION` of the leaves need one, refit the tree's nodes to the new
    boxes instead (:func:`_refit_nodes`), or build them anew (:func:`_build_nodes`) when the refit
    tree's SAH ratio is more than :data:`REFIT_QUALITY` times ``sah[0]``, the ratio at its last
    build (then updated).

    Sets ``moved[i]`` for the leaves with a new fat box; returns their count, whether the tree was
    re-built and whether it was refitted.
    """
    n = tlo.shape[0]
    count = 0
    for i in range(n):
        moved[i] = _stale(tlo, thi, lo, hi, i, _margin(tlo, thi, i, margin_rel, margin_abs), shrink) != 0
        count += moved[i]
    many = n >= 16 and count > REBUILD_FRACTION * n
    for i in range(n):
        if not moved[i]:
            continue
        m = _margin(tlo, thi, i, margin_rel, margin_abs)
        g = 0.5 * predict if _stale(tlo, thi, lo, hi, i, m, shrink) == 1 else 0.0  # (too loose: no drift)
        if many:
            _refit_leaf(tlo, thi, lo, hi, i, m, g)
        else:
            _remove_leaf(lo, hi, parent, child, height, meta, free, i)
            _refit_leaf(tlo, thi, lo, hi, i, m, g)
            _insert_leaf(lo, hi, parent, child, height, meta, free, i)
    if not many:
        return count, False, False
    if _refit_nodes(lo, hi, child, height, meta[_ROOT]) <= REFIT_QUALITY * sah[0]:
        return count, False, True
    sah[0] = _build_nodes(lo[:n], hi[:n], lo, hi, parent, child, height, meta, free)  # (centres of the fat boxes)
    return count, True, False


@njit
def _refit_nodes(lo, hi, child, height, root):
    """Every internal node's box made the union of its children's, children first (the order of a
    depth-first walk from ``root``, reversed); returns the tree's SAH ratio (:func:`_sah_ratio`)."""
    order = np.empty(lo.shape[0], np.int64)
    stack = np.empty(height[root] + 2, np.int64)  # (one pop pushes two: never more than height + 1 wait)
    stack[0] = root
    top = 1
    k = 0
    while top > 0:
        top -= 1
        node = stack[top]
        if height[node] > 0:
            order[k] = node
            k += 1
            stack[top] = child[node, 0]
            stack[top + 1] = child[node, 1]
            top += 2
    for q in range(k - 1, -1, -1):
        node = order[q]
        _set_union(lo, hi, node, child[node, 0], child[node, 1])
    return _sah_ratio(lo, hi, order[:k], root)


@njit
def _sah_ratio(lo, hi, nodes, root):
    """The summed surface areas of the internal ``nodes`` over the root's (0 for a root of no area):
    by the surface-area heuristic, how many nodes a query of the tree visits, on average."""
    total = 0.0
    for node in nodes:
        total += _area(lo, hi, node)
    whole = _area(lo, hi, root)
    return total / whole if whole > 0.0 else 0.0


@njit(borrow=True)
def _select(order, centre, axis, s, e, mid):
    """Reorder ``order[s:e]`` so that ``order[mid]`` is the proxy whose centre (on ``axis``) a sort
    would put there, with none greater before it and none smaller after it (quickselect, Hoare
    partition about the median of three: O(e - s) expected, where a sort is O((e - s) log(e - s)))."""
    lo, hi = s, e - 1
    while lo < hi:
        a, b, c = centre[order[lo], axis], centre[order[(lo + hi) // 2], axis], centre[order[hi], axis]
        pivot = max(min(a, b), min(max(a, b), c))
        i, j = lo, hi
        while i <= j:
            while centre[order[i], axis] < pivot:
                i += 1
            while centre[order[j], axis] > pivot:
                j -= 1
            if i <= j:
                order[i], order[j] = order[j], order[i]
                i += 1
                j -= 1
        # now order[lo..j] <= pivot <= order[i..hi], and anything between equals the pivot
        if mid <= j:
            hi = j
        elif mid >= i:
            lo = i
        else:
            return


@njit
def _build_top_down(tlo, thi, lo, hi, parent, child, height, meta, free, sah, margin_rel, margin_abs, moved):
    """Build the whole tree at once (on a rebuild): fresh fat boxes, then :func:`_build_nodes` on
    the tight boxes' centres (its SAH ratio into ``sah[0]``). Every proxy is marked moved."""
    n = tlo.shape[0]
    for i in range(n):
        m = _margin(tlo, thi, i, margin_rel, margin_abs)
        for a in range(3):
            lo[i, a] = tlo[i, a] - m
            hi[i, a] = thi[i, a] + m
            if lo[i, a] > tlo[i, a]:
                lo[i, a] = tlo[i, a]
            if hi[i, a] < thi[i, a]:
                hi[i, a] = thi[i, a]
        moved[i] = True
    sah[0] = _build_nodes(tlo, thi, lo, hi, parent, child, height, meta, free)


@njit
def _build_nodes(clo, chi, lo, hi, parent, child, height, meta, free):
    """The internal nodes over the leaves' fat boxes ``lo, hi`` (rows ``0..n-1``, kept), built top
    down: median split of the centres of ``clo, chi`` (n, 3).

    Top-down construction (RTCD 6.2): each node's proxies are split in two
    halves at the median centre along the longest axis of their centres'
    bounds. Incremental insertion of a whole set in arbitrary order gives a
    worse tree (more overlap between siblings); later updates insert into this
    one. Every internal node is freed first. Returns the tree's SAH ratio (:func:`_sah_ratio`).
    """
    n = clo.shape[0]
    total = parent.shape[0]
    for k in range(n, total):
        parent[k] = -1
        child[k, 0] = -1
        child[k, 1] = -1
        height[k] = -1
    for k in range(total - n):
        free[k] = total - 1 - k  # pop from the end: n first
    meta[_FREE] = total - n
    meta[_ROOT] = -1
    centre = np.empty((n, 3), np.float64)
    for i in range(n):
        for a in range(3):
            centre[i, a] = 0.5 * clo[i, a] + 0.5 * chi[i, a]
        height[i] = 0
        child[i, 0] = -1
        child[i, 1] = -1
    order = np.arange(n)
    # work items: (start, end, node id to fill, parent node)
    work = np.empty((2 * n, 3), np.int64)
    created = np.empty(n, np.int64)
    n_created = 0
    top = 1
    work[0, 0] = 0
    work[0, 1] = n
    work[0, 2] = -1
    while top > 0:
        top -= 1
        s = work[top, 0]
        e = work[top, 1]
        up = work[top, 2]
        if e - s == 1:
            node = order[s]
        else:
            meta[_FREE] -= 1
            node = free[meta[_FREE]]
            created[n_created] = node
            n_created += 1
            best = 0
            best_ext = -1.0
            for a in range(3):
                cmin = np.inf
                cmax = -np.inf
                for k in range(s, e):
                    v = centre[order[k], a]
                    cmin = min(cmin, v)
                    cmax = max(cmax, v)
                if cmax - cmin > best_ext:
                    best_ext = cmax - cmin
                    best = a
            mid = (s + e) // 2
            _select(order, centre, best, s, e, mid)
            work[top, 0] = s
            work[top, 1] = mid
            work[top, 2] = node
            work[top + 1, 0] = mid
            work[top + 1, 1] = e
            work[top + 1, 2] = node
            top += 2
            child[node, 0] = -1
            child[node, 1] = -1
        parent[node] = up
        if up < 0:
            meta[_ROOT] = node
        elif child[up, 0] < 0:
            child[up, 0] = node
        else:
            child[up, 1] = node
    # boxes and heights bottom-up: children were created after their parents
    for k in range(n_created - 1, -1, -1):
        node = created[k]
        c0 = child[node, 0]
        c1 = child[node, 1]
        height[node] = 1 + max(height[c0], height[c1])
        _set_union(lo, hi, node, c0, c1)
    return _sah_ratio(lo, hi, created[:n_created], meta[_ROOT])


@njit
def _query_moved(lo, hi, child, height, root, moved):
    """Fat-box pairs that involve a moved leaf: one tree query per moved leaf.

    A pair of two moved leaves is kept only from the query of the smaller
    index. Returns (sorted keys ``i * n + j`` with i < j, node tests).
    """
    n = moved.shape[0]
    keys = np.empty(64, np.int64)
    count = 0
    tests = 0
    # depth-first, one pop pushes two: never more than height + 1 waiting. No array is
    # re-bound inside the walk (numba then pays reference counting on every iteration).
    stack = np.empty(height[root] + 2, np.int64)
    for i in range(n):
        if not moved[i]:
            continue
        if count + n > keys.shape[0]:
            bigger = np.empty(2 * (count + n), np.int64)
            bigger[:count] = keys[:count]
            keys = bigger
        lx, ly, lz = lo[i, 0], lo[i, 1], lo[i, 2]
        hx, hy, hz = hi[i, 0], hi[i, 1], hi[i, 2]
        stack[0] = root
        top = 1
        while top > 0:
            top -= 1
            node = stack[top]
            tests += 1
            if (lo[node, 0] > hx or lx > hi[node, 0] or lo[node, 1] > hy or ly > hi[node, 1]
                    or lo[node, 2] > hz or lz > hi[node, 2]):
                continue
            if height[node] == 0:
                j = node
                if j == i or (moved[j] and j < i):
                    continue
                keys[count] = i * n + j if i < j else j * n + i
                count += 1
                continue
            stack[top] = child[node, 0]
            stack[top + 1] = child[node, 1]
            top += 2
    out = keys[:count].copy()
    out.sort()
    return out, tests


@njit
def _query_all(lo, hi, child, height, root, moved):
    """The fat-box pairs that involve a moved leaf, by one descent of the tree against itself
    (RTCD 6.3: a simultaneous descent, the larger node first) instead of one query per moved
    leaf: from the pair (root, root), a node against itself gives its two children against
    themselves and against each other, and two overlapping nodes give the larger one's children
    against the other; two overlapping leaves are a pair, kept when either moved. The same keys as
    :func:`_query_moved`, in fewer box tests when most leaves moved: on 100 falling boxes in layers,
    593 against 2,068 tests with all of them moved, 1,207 against 2,367 with three quarters; even at
    44% and more at 22% (883 against 590), so it is taken when more than half moved. Measured with
    every leaf moved: 6.6 against 11.1 us for 100 boxes, 66 against 103 us for 1000.

    Returns (sorted keys ``i * n + j`` with i < j, node tests).
    """
    n = moved.shape[0]
    keys = np.empty(64, np.int64)
    count = 0
    tests = 0
    # A pop adds at most two pairs (a node against itself: three for one) and a descent path has at
    # most ``height`` pops of a node against itself and ``2 height`` of two nodes, so at most
    # ``4 height + 1`` pairs wait. (No array is re-bound inside the walk: see _query_moved.)
    stack = np.empty((4 * height[root] + 8, 2), np.int64)
    stack[0, 0] = root
    stack[0, 1] = root
    top = 1
    while top > 0:
        top -= 1
        a = stack[top, 0]
        b = stack[top, 1]
        if a == b:
            if height[a] > 0:
                c0, c1 = child[a, 0], child[a, 1]
                stack[top, 0], stack[top, 1] = c0, c0
                stack[top + 1, 0], stack[top + 1, 1] = c1, c1
                stack[top + 2, 0], stack[top + 2, 1] = c0, c1
                top += 3
            continue
        tests += 1
        if (lo[a, 0] > hi[b, 0] or lo[b, 0] > hi[a, 0] or lo[a, 1] > hi[b, 1] or lo[b, 1] > hi[a, 1]
                or lo[a, 2] > hi[b, 2] or lo[b, 2] > hi[a, 2]):
            continue
        if height[a] == 0 and height[b] == 0:
            if not (moved[a] or moved[b]):
                continue
            if count == keys.shape[0]:
                bigger_keys = np.empty(2 * count, np.int64)
                bigger_keys[:count] = keys
                keys = bigger_keys
            keys[count] = a * n + b if a < b else b * n + a
            count += 1
        elif height[b] == 0 or (height[a] > 0 and height[a] >= height[b]):
            stack[top, 0], stack[top, 1] = child[a, 0], b
            stack[top + 1, 0], stack[top + 1, 1] = child[a, 1], b
            top += 2
        else:
            stack[top, 0], stack[top, 1] = a, child[b, 0]
            stack[top + 1, 0], stack[top + 1, 1] = a, child[b, 1]
            top += 2
    out = keys[:count].copy()
    out.sort()
    return out, tests


@njit
def _merge_filter(old, new, moved, tlo, thi):
    """The new fat-pair set and the tight pairs, both in sorted order.

    ``old`` (sorted keys) loses every pair with a moved leaf (its fat box
    changed) and is merged with ``new`` (sorted, each with a moved leaf, so
    disjoint from what is kept). Each candidate is then tested on the TIGHT
    boxes. Returns (keys, pairs (k, 2), tight tests).
    """
    n = moved.shape[0]
    keys = np.empty(old.shape[0] + new.shape[0], np.int64)
    count = 0
    p = 0
    for q in range(old.shape[0] + 1):
        # keys of ``old`` that survive, interleaved with ``new`` in order
        if q < old.shape[0]:
            key = old[q]
            if moved[key // n] or moved[key % n]:
                continue
        else:
            key = n * n  # past every key: flush ``new``
        while p < new.shape[0] and new[p] < key:
            keys[count] = new[p]
            count += 1
            p += 1
        if q < old.shape[0]:
            keys[count] = key
            count += 1
    keys = keys[:count]
    pairs = np.empty((count, 2), np.int64)
    k = 0
    for q in range(count):
        i = keys[q] // n
        j = keys[q] % n
        if (tlo[i, 0] <= thi[j, 0] and tlo[j, 0] <= thi[i, 0] and tlo[i, 1] <= thi[j, 1]
                and tlo[j, 1] <= thi[i, 1] and tlo[i, 2] <= thi[j, 2] and tlo[j, 2] <= thi[i, 2]):
            pairs[k, 0] = i
            pairs[k, 1] = j
            k += 1
    return keys, pairs[:k].copy(), count


@njit
def _update_kernel(lo, hi, tlo, thi, flo, fhi, parent, child, height, meta, free, sah, margin_rel, margin_abs, shrink,
                   predict, moved, old_keys, rebuild, counts):
    """One update of the tree in one compiled call: the tight boxes ``lo, hi`` copied into ``tlo,
    thi``, the tree built (``rebuild``, :func:`_build_top_down`) or its stale leaves re-inserted
    (:func:`_update_leaves`, which may refit or rebuild it instead; ``sah`` (1,) float64 the tree's
    SAH ratio at its last build), the moved leaves queried (:func:`_query_moved`; when more than half
    moved, all in one descent, :func:`_query_all`), and the fat pairs
    merged and filtered on the tight boxes (:func:`_merge_filter`), in that order.

    Returns ``(keys, pairs)`` as :func:`_merge_filter`; ``counts (5,) int64`` gets the leaves
    re-inserted, whether the tree was re-built, the node tests, the tight tests and whether it was
    refitted.
    """
    n = lo.shape[0]
    tlo[:] = lo
    thi[:] = hi
    if rebuild:
        _build_top_down(tlo, thi, flo, fhi, parent, child, height, meta, free, sah, margin_rel, margin_abs, moved)
        n_moved, rebuilt, refitted = n, True, False
    else:
        n_moved, rebuilt, refitted = _update_leaves(tlo, thi, flo, fhi, parent, child, height, meta, free, sah,
                                                    margin_rel, margin_abs, shrink, predict, moved)
    if 2 * n_moved > n:  # (most leaves have a new fat box: all the pairs in one descent)
        new, node_tests = _query_all(flo, fhi, child, height, meta[_ROOT], moved)
    else:
        new, node_tests = _query_moved(flo, fhi, child, height, meta[_ROOT], moved)
    keys, pairs, tight_tests = _merge_filter(old_keys, new, moved, tlo, thi)
    counts[0], counts[1], counts[2], counts[3], counts[4] = n_moved, rebuilt, node_tests, tight_tests, refitted
    return keys, pairs


@njit
def _validate(tlo, thi, lo, hi, parent, child, height, meta, free, keys):
    """Structural check; returns (code, node), code 0 when the tree is sound."""
    n = tlo.shape[0]
    m = lo.shape[0]
    root = meta[_ROOT]
    seen = np.zeros(m, np.int64)
    if root < 0:
        return (1, -1) if n > 0 else (0, -1)
    if parent[root] != -1:
        return 2, root
    stack = np.empty(m + 1, np.int64)
    stack[0] = root
    top = 1
    leaves = 0
    while top > 0:
        top -= 1
        node = stack[top]
        if seen[node]:
            return 3, node  # reached twice: a cycle or a shared child
        seen[node] = 1
        if node < n:
            if height[node] != 0:
                return 4, node
            leaves += 1
            for a in range(3):
                if not (lo[node, a] <= tlo[node, a] and thi[node, a] <= hi[node, a]):
                    return 5, node  # fat box does not enclose the tight box
            continue
        if height[node] < 1:
            return 6, node
        c0 = child[node, 0]
        c1 = child[node, 1]
        if c0 < 0 or c1 < 0 or parent[c0] != node or parent[c1] != node:
            return 7, node
        if height[node] != 1 + max(height[c0], height[c1]):
            return 8, node
        for c in (c0, c1):
            for a in range(3):
                if not (lo[node, a] <= lo[c, a] and hi[c, a] <= hi[node, a]):
                    return 9, node  # node does not enclose its child
        stack[top] = c0
        stack[top + 1] = c1
        top += 2
    if leaves != n:
        return 10, -1
    if meta[_FREE] + (n - 1) != m - n:
        return 11, -1
    for k in range(meta[_FREE]):
        if seen[free[k]]:
            return 12, free[k]
    # the kept fat-pair set is exactly the set of fat overlaps, sorted and unique
    q = 0
    for i in range(n):
        for j in range(i + 1, n):
            fat = True
            for a in range(3):
                if lo[i, a] > hi[j, a] or lo[j, a] > hi[i, a]:
                    fat = False
            if fat:
                if q >= keys.shape[0] or keys[q] != i * n + j:
                    return 13, i
                q += 1
    if q != keys.shape[0]:
        return 13, -1
    return 0, -1


_MESSAGES = {
    1: "empty tree holding proxies",
    2: "root has a parent",
    3: "node reached twice (cycle or shared child)",
    4: "leaf with non-zero height",
    5: "leaf's fat box does not enclose its tight box",
    6: "internal node with height < 1",
    7: "child / parent links disagree",
    8: "height is not 1 + max(children)",
    9: "node box does not enclose a child's box",
    10: "not every proxy is a leaf of the tree",
    11: "free list and tree do not account for every internal node",
    12: "free node is in the tree",
    13: "kept fat-pair set differs from the fat-box overlaps",
}


class DynamicAABBTree(BroadPhase):
    """Dynamic AABB tree with fat leaves, SAH insertion and AVL rotations.

    Parameters
    ----------
    margin_rel : float
        Fat margin as a fraction of the box's largest side (default 0.1).
    margin_abs : float
        Constant added to the margin, world units (default 0.01).
    shrink : float
        Refit a fat box wider than ``shrink`` times what a fresh one would be
        on some axis (default 4.0).
    predict : float
        A re-inserted fat box also reaches ``predict`` times the leaf's drift
        ahead of it (default 2.0; 0 for none).

    ``stats``: ``box_tests`` (fat node tests of the queries plus tight tests
    of the fat pairs), ``reinserted`` (leaves given a new fat box this update;
    all of them on a rebuild), ``rebuilt`` (the internal nodes were built anew:
    a new proxy count, or more than :data:`REBUILD_FRACTION` of the leaves
    left their fat boxes and a refit would leave too poor a tree), ``refitted``
    (that many left, and the internal nodes were refitted to them instead:
    :data:`REFIT_QUALITY`), ``fat_pairs``, ``height`` (root height), ``pairs``.
    """

    name = "tree"

    def __init__(self, margin_rel: float = 0.1, margin_abs: float = 0.01, shrink: float = 4.0,
                 predict: float = 2.0) -> None:
        super().__init__()
        for name, value in (("margin_rel", margin_rel), ("margin_abs", margin_abs), ("predict", predict)):
            as_number(value, name, low=0.0, high=MAX_COORD)
        as_number(shrink, "shrink", low=1.0, low_open=True, high=MAX_COORD)
        self.margin_rel = float(margin_rel)
        self.margin_abs = float(margin_abs)
        self.shrink = float(shrink)
        self.predict = float(predict)
        self._pairs = 0  # (the last update's pair count, for stats)
        self._alloc(0)

    def _alloc(self, n):
        m = max(2 * n, 1)
        self.lo = np.zeros((m, 3))
        self.hi = np.zeros((m, 3))
        self.parent = np.full(m, -1, np.int64)
        self.child = np.full((m, 2), -1, np.int64)
        self.height = np.full(m, -1, np.int64)
        self.meta = np.array([-1, m - n], np.int64)  # root, number of free internal nodes
        self.free = np.arange(m - 1, n - 1, -1, dtype=np.int64)  # pop from the end: n first
        self.tight_lo = np.zeros((n, 3))
        self.tight_hi = np.zeros((n, 3))
        self._moved = np.zeros(n, np.bool_)
        self._keys = np.empty(0, np.int64)  # sorted fat-overlap pairs, key i * n + j (i < j)
        self._counts = np.zeros(5, np.int64)  # (_update_kernel's counts)
        self._sah = np.zeros(1)  # the tree's SAH ratio at its last build (_update_leaves)

    def clear(self) -> None:
        super().clear()
        self._alloc(0)

    @property
    def root(self) -> int:
        """Root node index (-1 when empty)."""
        return int(self.meta[_ROOT])

    def _update(self, lo, hi, rebuild):
        if rebuild:
            self._alloc(lo.shape[0])
        keys, pairs = _update_kernel(lo, hi, *self._kernel_state(rebuild))
        self._pairs = int(pairs.shape[0])
        self._kernel_done(keys)
        return pairs

    def _kernel_state(self, rebuild):
        """:func:`_update_kernel`'s arguments after the boxes (the tree's arrays and options, whether to
        rebuild, the counts' array)."""
        return (self.tight_lo, self.tight_hi, self.lo, self.hi, self.parent, self.child, self.height, self.meta,
                self.free, self._sah, self.margin_rel, self.margin_abs, self.shrink, self.predict, self._moved,
                self._keys, rebuild, self._counts)

    def _kernel_done(self, keys):
        """Keep the fat pairs ``keys`` of :func:`_update_kernel`; its counts become :attr:`stats` when read."""
        self._keys = keys
        self._stats = None

    @property
    def stats(self) -> dict:
        """The last update's counts (see the class docstring), made into a dictionary when first read
        (a world updates the tree every step and reads them far less often)."""
        got = self._stats
        if got is None:
            n_moved, rebuilt, node_tests, tight_tests, refitted = self._counts.tolist()
            got = self._stats = {"box_tests": node_tests + tight_tests, "reinserted": n_moved,
                                 "rebuilt": bool(rebuilt), "refitted": bool(refitted),
                                 "fat_pairs": int(self._keys.shape[0]),
                                 "height": int(self.height[self.meta[_ROOT]]), "pairs": self._pairs}
        return got

    @stats.setter
    def stats(self, value: dict) -> None:
        self._stats = value

    def compiled_update(self, n: int) -> tuple:
        """For a caller that runs :func:`_update_kernel` inside a compiled call of its own (the world's
        broad phase, which computes the boxes there): the tree made ready for ``n >= 2`` boxes
        (re-allocated when ``n`` changed), and the kernel's arguments after ``lo, hi``. Once the kernel
        ran, hand its keys to :meth:`compiled_done`; until then the next call rebuilds."""
        rebuild = n != self._n
        if rebuild:
            self._alloc(n)
            self._n = -1  # (rebuilt by the kernel, if it runs)
        return self._kernel_state(rebuild)

    def compiled_done(self, n: int, keys: NDArray[np.int64], n_pairs: int) -> None:
        """After :func:`_update_kernel` ran on ``n`` boxes inside the caller's compiled call: keep its fat
        pairs ``keys``, and ``n_pairs`` pairs found, as :meth:`update` would."""
        self._n = n
        self._pairs = int(n_pairs)
        self._kernel_done(keys)

    def validate(self) -> None:
        """Check the tree; raise ``AssertionError`` naming the first fault.

        Every internal node's box encloses its children's boxes, links and
        heights agree, every proxy is exactly one leaf, every leaf's fat box
        encloses its tight box, the free list holds the other nodes, and the
        kept fat-pair set equals the fat-box overlaps (an O(n^2) check: for
        tests, not for every frame).
        """
        if self._n < 2:
            return
        code, node = _validate(self.tight_lo, self.tight_hi, self.lo, self.hi, self.parent, self.child,
                               self.height, self.meta, self.free, self._keys)
        if code:
            raise AssertionError(f"DynamicAABBTree.validate: {_MESSAGES[code]} (node {node})")
