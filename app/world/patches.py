"""Contact patches across pieces: the solver's points of one body pair, at most four per patch.

A body made of convex pieces (a U of three boxes, a mesh cut by V-HACD) meets another body
through several piece pairs, and the narrow phase gives each piece pair its own manifold of up
to four points. Where those manifolds share a normal they are one contact patch: a U standing
on the ground touches it through the bottoms of its three boxes, twelve points along one plane
whose outer four already hold it. The solver's cost grows with its points, and a patch held
by twelve points converges no better than one held by its four corners, so the solver is
given at most four of each patch (the manifolds themselves are kept whole, for the viewer,
the events and the next step's matching).

:func:`patch_slots` groups a body pair's manifolds by normal (within ``PATCH_COS``, about 2
degrees) and reduces each group of two or more manifolds with the narrow phase's own
reduction (:func:`obbcollide.contact_reduce._reduce_into`: the deepest point and the three
that span the largest area around it). A point that pushed in the last step is preferred
over an equally deep one by ``WARM_BONUS`` in the choice of the first point, so that a patch
keeps the same four points from step to step and their warm-started impulses. Jolt Physics
merges the manifolds of sub-shapes the same way (its ``ContactConstraintManager``, "manifold
reduction"); this is its counterpart for our pieces.
"""

from __future__ import annotations

from obbcollide import _vec as v
from obbcollide._jit import njit
from obbcollide.contact_reduce import _reduce_into

__all__ = ["PATCH_COS", "WARM_BONUS", "MERGE_TOL2", "longest_run", "patch_slots", "slot_count"]

PATCH_COS = 0.9994  # manifolds of one body pair whose normals differ by less than ~2 degrees: one patch
WARM_BONUS = 1e-4  # m: how much deeper a point that did not push last step must be to be chosen first
MERGE_TOL2 = 1e-12  # m^2: points of two manifolds closer than 1 um are one point (a seam between pieces)


@njit(borrow=True)
def slot_count(mask):
    """The number of slots set in a 4-bit ``mask``."""
    return (mask & 1) + ((mask >> 1) & 1) + ((mask >> 2) & 1) + ((mask >> 3) & 1)


@njit(borrow=True)
def longest_run(visit, keys):
    """The most consecutive rows of ``visit`` between the same two bodies (``keys`` (m, 5))."""
    best = 0
    c = 0
    k = visit.shape[0]
    while c < k:
        e = c + 1
        while e < k and keys[visit[e], 0] == keys[visit[c], 0] and keys[visit[e], 1] == keys[visit[c], 1]:
            e += 1
        best = max(best, e - c)
        c = e
    return best


@njit(borrow=True)
def patch_slots(visit, keys, count, normal, points_a, points_b, depths, impulse, reduce, keep, pts, dep, src, idx,
                alive, taken):
    """The slots of the store rows ``visit`` that the solver takes, as 4-bit masks.

    Parameters
    ----------
    visit : (k,) int64
        Store rows in solver order; the rows of one body pair are consecutive (the store is sorted
        by its keys, and an island's rows keep the store's order).
    keys, count, normal, points_a, points_b, depths, impulse : the store's columns, (m, ...)
        ``keys`` (m, 5), ``count`` (m,), ``normal`` (m, 3), ``points_a``, ``points_b`` (m, 4, 3),
        ``depths`` (m, 4), ``impulse`` (m, 4, 3) (read: whether a point pushed last step).
    reduce : bool
        False: every point is taken (each mask is ``count``'s low bits).
    keep : (k,) int64
        Receives the masks (bit ``i``: slot ``i`` of row ``visit[c]``).
    pts, dep, src, idx, alive : scratch over ``4 r`` points, (4 r, 3) float64, (4 r,) float64,
        int64, int64 and bool, with ``r`` the most rows of one body pair (:func:`longest_run`)
    taken : (r,) bool
        Scratch.

    Returns
    -------
    int
        The number of slots taken (the sum of the masks' bits).
    """
    k = visit.shape[0]
    total = 0
    c = 0
    while c < k:
        m = visit[c]
        a, b = keys[m, 0], keys[m, 1]
        e = c + 1
        while e < k and keys[visit[e], 0] == a and keys[visit[e], 1] == b:
            e += 1
        for r in range(c, e):
            keep[r] = (1 << count[visit[r]]) - 1
            taken[r - c] = False
        if reduce and e - c > 1:
            for r in range(c, e):
                if taken[r - c]:
                    continue
                n = v.row(normal, visit[r])
                cnt = 0
                rows = 0
                for s in range(r, e):
                    ms = visit[s]
                    if taken[s - c] or (s != r and v.dot(v.row(normal, ms), n) < PATCH_COS):
                        continue
                    taken[s - c] = True
                    rows += 1
                    for i in range(count[ms]):
                        for x in range(3):
                            pts[cnt, x] = 0.5 * (points_a[ms, i, x] + points_b[ms, i, x])
                        dep[cnt] = depths[ms, i] + (WARM_BONUS if impulse[ms, i, 0] > 0.0 else 0.0)
                        src[cnt] = 4 * s + i
                        cnt += 1
                if rows < 2:
                    continue
                for t in range(cnt):
                    keep[src[t] // 4] = 0
                got = _reduce_into(n, pts, dep, cnt, MERGE_TOL2, idx, alive)
                for t in range(got):
                    s = src[idx[t]]
                    keep[s // 4] |= 1 << (s % 4)
        for r in range(c, e):
            total += slot_count(keep[r])
        c = e
    return total
