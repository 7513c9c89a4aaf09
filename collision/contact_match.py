"""Contact persistence: which contact of the last step each new contact continues.

A solver that keeps the impulses it accumulated on a contact from one step to
the next (warm starting) needs to know which new contact is which old one.
:func:`match_contacts` matches by the feature ids of :mod:`collision.manifold`
first, then, for those left, by distance: Box2D's id matching
(``b2UpdateContact``) with a fallback for when the ids change (a
reference-face switch).
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray

from . import _vec as v
from ._jit import njit
from ._validate import MAX_COORD, as_array, as_indices, as_number

__all__ = ["match_contacts"]


@njit
def _match_kernel(old_ids, old_pts, new_ids, new_pts, tol2, out):
    """The body of :func:`match_contacts`: fills ``out (k,)``; ``tol2`` is the squared distance."""
    used = np.zeros(old_ids.shape[0], dtype=np.bool_)
    for i in range(new_ids.shape[0]):
        out[i] = -1
        for j in range(old_ids.shape[0]):
            if not used[j] and old_ids[j] == new_ids[i]:
                out[i] = j
                used[j] = True
                break
    for i in range(new_ids.shape[0]):
        if out[i] >= 0:
            continue
        best, bj = tol2, -1
        for j in range(old_ids.shape[0]):
            if not used[j]:
                d = v.norm2(v.sub(v.row(new_pts, i), v.row(old_pts, j)))
                if d <= best:
                    best, bj = d, j
        if bj >= 0:
            out[i] = bj
            used[bj] = True


def match_contacts(old_ids: ArrayLike, old_points: ArrayLike, new_ids: ArrayLike, new_points: ArrayLike,
                   tol: float) -> NDArray[np.int64]:
    """Which old contact each new contact continues.

    First by equal feature id, then (for those left) the nearest unclaimed old
    point within ``tol``; each old contact is claimed at most once, in the
    order of the new points (deepest first in a :class:`collision.manifold.Manifold`). This is
    Box2D's id matching (``b2UpdateContact``) with a distance fallback for
    when the ids change (a reference-face switch).

    Parameters
    ----------
    old_ids : (m,) int64
    old_points : (m, 3) float64
    new_ids : (k,) int64
    new_points : (k, 3) float64
    tol : float
        Largest distance (>= 0) for a match by position.

    Returns
    -------
    index : (k,) int64
        Index into the old contacts, or -1 for a new contact.
    """
    oi = as_indices(old_ids, "old_ids").reshape(-1)
    ni = as_indices(new_ids, "new_ids").reshape(-1)
    op = np.ascontiguousarray(as_array(old_points, "old_points", (3,)).reshape(-1, 3))
    nw = np.ascontiguousarray(as_array(new_points, "new_points", (3,)).reshape(-1, 3))
    if len(op) != len(oi):
        raise ValueError(f"old_points, old_ids: {len(op)} points for {len(oi)} ids")
    if len(nw) != len(ni):
        raise ValueError(f"new_points, new_ids: {len(nw)} points for {len(ni)} ids")
    tol = as_number(tol, "tol", low=0.0, high=MAX_COORD)
    out = np.empty(len(ni), dtype=np.int64)
    _match_kernel(oi, op, ni, nw, tol * tol, out)
    return out
