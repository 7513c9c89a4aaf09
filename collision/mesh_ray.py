"""Where a ray first meets a posed mesh: the OBB-tree ray cast.

Rays are taken into the mesh's model frame, boxes are cut by the slab test
(RTCD 5.3.3) and triangles by Moller and Trumbore's test (RTCD 5.3.6).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

from . import _vec as v
from ._jit import njit
from ._validate import broadcast_batch
from .obb_tree import OBBTree
from .tree_pair import _pose, _tree, _tri

__all__ = ["RayHit", "ray_cast"]


@njit
def _ray_hits_triangle(o, d, a, b, c):
    """Moller-Trumbore, two-sided: the ray parameter of the hit, ``inf`` for none."""
    e1 = v.sub(b, a)
    e2 = v.sub(c, a)
    pv = v.cross(d, e2)
    det = v.dot(e1, pv)
    if det == 0.0:
        return np.inf
    inv = 1.0 / det
    tv = v.sub(o, a)
    u = v.dot(tv, pv) * inv
    if u < 0.0 or u > 1.0:
        return np.inf
    qv = v.cross(tv, e1)
    w = v.dot(d, qv) * inv
    if w < 0.0 or u + w > 1.0:
        return np.inf
    return v.dot(e2, qv) * inv


@njit
def _ray_box_interval(o, d, nodes, node):
    """Slab test of a ray against a node box: ``(t_enter, t_exit)``."""
    t0 = -np.inf
    t1 = np.inf
    oc = (o[0] - nodes[node, 0], o[1] - nodes[node, 1], o[2] - nodes[node, 2])
    for i in range(3):
        ax = (nodes[node, 3 + 3 * i], nodes[node, 4 + 3 * i], nodes[node, 5 + 3 * i])
        h = nodes[node, 12 + i]
        oi = v.dot(ax, oc)
        di = v.dot(ax, d)
        if di == 0.0:
            if abs(oi) > h:
                return np.inf, -np.inf
            continue
        ta = (-h - oi) / di
        tb = (h - oi) / di
        if ta > tb:
            ta, tb = tb, ta
        t0 = max(t0, ta)
        t1 = min(t1, tb)
    return t0, t1


@njit
def ray_kernel(nodes, links, tris, origins, dirs, max_t, out_t, out_k):
    """First hit of every ray (model frame): ``out_t`` (inf if none) and leaf position ``out_k``."""
    stack = np.empty(64, dtype=np.int64)
    for r in range(origins.shape[0]):
        o = v.row(origins, r)
        d = v.row(dirs, r)
        best = max_t[r]
        bk = -1
        stack[0] = 0
        top = 1
        while top > 0:
            top -= 1
            node = stack[top]
            t0, t1 = _ray_box_interval(o, d, nodes, node)
            if t0 > t1 or t1 < 0.0 or t0 > best:
                continue
            if links[node, 0] < 0:
                for k in range(links[node, 1], links[node, 1] + links[node, 2]):
                    a, b, cc = _tri(tris, k)
                    tt = _ray_hits_triangle(o, d, a, b, cc)
                    if 0.0 <= tt <= best and tt < np.inf:  # a miss is inf, even when best is
                        best = tt
                        bk = k
                continue
            if top + 2 > stack.shape[0]:
                bigger = np.empty(2 * stack.shape[0], dtype=np.int64)
                bigger[:top] = stack[:top]
                stack = bigger
            stack[top] = links[node, 0]
            stack[top + 1] = links[node, 0] + 1
            top += 2
        out_t[r] = best if bk >= 0 else np.inf
        out_k[r] = bk


@dataclass(eq=False, slots=True)
class RayHit:
    """Outcome of :func:`ray_cast` (arrays gain a leading batch axis for batched rays).

    Attributes
    ----------
    hit : bool
    t : float
        Ray parameter of the first hit (``inf`` when none): ``point = origin + t direction``.
    point : (3,) float64
        World-frame hit point (NaN when none).
    normal : (3,) float64
        Unit normal of the hit face, world frame, turned to face the ray's origin.
    triangle : int
        Face index hit, -1 when none.
    """

    hit: bool | NDArray[np.bool_]
    t: float | NDArray[np.float64]
    point: NDArray[np.float64]
    normal: NDArray[np.float64]
    triangle: int | NDArray[np.int64]


def ray_cast(tree: OBBTree, pose: ArrayLike, origin: ArrayLike, direction: ArrayLike,
             max_t: ArrayLike = np.inf) -> RayHit:
    """First intersection of a ray (or a batch of rays) with a posed mesh.

    Rays are ``origin + t direction`` for ``0 <= t <= max_t``; ``direction``
    need not be unit length (``t`` is in its units). Triangles are two-sided.

    Parameters
    ----------
    tree : OBBTree
    pose : (4, 4) float64
    origin, direction : (3,) or (n, 3) float64
    max_t : float or (n,) float64

    Returns
    -------
    RayHit
    """
    tree = _tree(tree, "tree")
    p = _pose(pose, "pose")
    (o, d), lead = broadcast_batch([("origin", origin, (3,)), ("direction", direction, (3,))])
    try:
        mt = np.ascontiguousarray(np.broadcast_to(np.asarray(max_t, dtype=float), lead).reshape(-1))
    except (TypeError, ValueError):
        raise ValueError(f"max_t: expected a number or an array of shape {lead}") from None
    if np.any(np.isnan(mt)) or np.any(mt < 0.0):
        raise ValueError("max_t: must be >= 0 (inf allowed)")
    if np.any(np.einsum("ij,ij->i", d, d) == 0.0):
        raise ValueError("direction: zero-length ray direction")
    rot, tr = p[:3, :3], p[:3, 3]
    ol = np.ascontiguousarray((o - tr) @ rot)
    dl = np.ascontiguousarray(d @ rot)
    n = len(ol)
    ts = np.empty(n)
    ks = np.empty(n, dtype=np.int64)
    ray_kernel(*tree.arrays, ol, dl, mt, ts, ks)
    hit = ks >= 0
    pts = np.full((n, 3), np.nan)
    nrm = np.full((n, 3), np.nan)
    tri = np.full(n, -1, dtype=np.int64)
    if hit.any():
        pts[hit] = o[hit] + ts[hit, None] * d[hit]
        tv = tree.triangles[ks[hit]]
        fn = np.cross(tv[:, 1] - tv[:, 0], tv[:, 2] - tv[:, 0]) @ rot.T
        fn /= np.linalg.norm(fn, axis=1)[:, None]
        flip = np.einsum("ij,ij->i", fn, d[hit]) > 0.0
        fn[flip] *= -1.0
        nrm[hit] = fn
        tri[hit] = tree.tri_index[ks[hit]]
    if lead == ():
        return RayHit(bool(hit[0]), float(ts[0]), pts[0], nrm[0], int(tri[0]))
    return RayHit(hit.reshape(lead), ts.reshape(lead), pts.reshape(lead + (3,)),
                  nrm.reshape(lead + (3,)), tri.reshape(lead))
