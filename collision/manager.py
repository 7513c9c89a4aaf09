"""CollisionManager: a set of named, posed meshes, with trimesh's interface.

A drop-in for ``trimesh.collision.CollisionManager`` (which wraps python-fcl's
``DynamicAABBTreeCollisionManager``): the same methods, arguments and return
conventions, ``ContactData`` and ``DistanceData`` with the same accessors.
Underneath are this library's OBB trees and queries, not FCL's:

- one :class:`~collision.obb_tree.OBBTree` per distinct mesh, found again by
  content (a checksum of the vertices and faces, confirmed by comparing the
  arrays), so adding a hundred copies of a part builds one tree, and asking
  about the same query mesh again builds nothing (trimesh builds an FCL BVH
  at every single query); :meth:`CollisionManager.set_transform` only writes
  the pose;
- a broad phase (:mod:`collision.broad_phase`, the dynamic AABB tree by
  default) over the objects' world AABBs, each the tight box around its
  tree's posed root OBB;
- the candidate pairs' exact tests in one compiled loop
  (:func:`collision.batch.collide_pair_trees`), spread over the cores when
  there are many; a yes / no question (no names, no data) stops at the
  first colliding pair, trying every candidate's surfaces before any
  containment (:func:`_first_hit`); distances by a sweep over the
  boxes in x, each pair's exact distance (:func:`collision.mesh_query.distance_kernel`) computed only
  when its boxes are nearer than the best so far, and searched only below it;
  a single query's distance is one best-first search over the node pairs of
  every object at once (:func:`_min_distance_scene`).

What differs from trimesh's manager, on purpose:

- A closed mesh (watertight, consistently oriented) is a solid: a mesh lying
  entirely inside it collides (:func:`collision.collide`'s containment test).
  trimesh hands convex meshes to FCL as solids (``fcl.Convex``) and every
  other mesh as a surface, so a part inside a closed but concave mesh does
  not collide there. An open mesh (not watertight) is a surface here as
  there: only its triangles can touch, it holds nothing inside.
- Distances are between surfaces, exact triangle to triangle (FCL's for
  non-convex meshes; for convex ones FCL runs GJK, to about 1e-6), and 0
  where the surfaces meet; a mesh inside another reports the gap between
  their surfaces, as FCL's mesh distance does. An empty manager's distance
  is ``inf`` with the name ``None``.
- Poses must be rigid 4x4 transforms: NaN, infinity or a scaled / sheared
  rotation raise ``ValueError`` naming ``transform``. trimesh passes them to
  FCL as they are (and rounds ``add_object``'s pose to float32).
- ``add_object`` with a name already present replaces that object, as in
  trimesh, and says so in the log (``DEBUG``); it returns the object's
  :class:`OBBTree` (trimesh returns FCL's collision object).
- Meshes come as a ``trimesh.Trimesh`` (anything with ``vertices`` and
  ``faces``), a ``(vertices, faces)`` pair or an :class:`OBBTree`: the
  library does not import trimesh.
- ``ContactData`` of a triangle pair: ``point`` is the midpoint of the two
  triangles' intersection segment (on both surfaces), ``normal`` and ``depth``
  the face normal and the penetration of the pair's shallower side (below).
  A collision by containment alone gives one ``ContactData`` with face
  indices -1, ``point`` an inner mesh's vertex, ``normal`` and ``depth`` NaN.
"""

from __future__ import annotations

import logging
import threading
import zlib
from collections import OrderedDict
from collections.abc import Hashable, Sequence
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray
from numba import get_num_threads, prange

from ._jit import njit
from .batch import collide_pair_trees, contained_pair_trees, runs_for
from .broad_phase import make_broad_phase
from .mesh_distance import (_BEST_FIRST_HEAP, SUPPORT_POINTS, _child_gaps, _heap_pop, _heap_push, _leaf_pair_distance,
                            _support_gaps)
from .mesh_query import _relative_t, boxes_gap2, collide_kernel, distance_kernel
from .mesh_query import collide as collide_trees
from .obb_tree import OBBTree
from .transform import checked_pose

__all__ = ["CollisionManager", "ContactData", "DistanceData"]

log = logging.getLogger(__name__)

# Name of the query mesh in the names of single queries' data (trimesh's).
EXTERNAL = "__external"


# ---------------------------------------------------------------------------
# Result data (trimesh's ContactData and DistanceData accessors)
# ---------------------------------------------------------------------------


class ContactData:
    """One contact of a collision query (trimesh's ``ContactData``).

    Attributes
    ----------
    names : set
        The two objects' names (``"__external"`` for the query mesh of
        :meth:`CollisionManager.in_collision_single`).
    point : (3,) float64
        World-frame contact point: the midpoint of the two triangles'
        intersection segment, so on both surfaces.
    normal : (3,) float64
        Unit normal from the first object towards the second: of the two
        triangles, the face normal of the one the other pokes through less
        deeply (A's outward normal, or minus B's).
    depth : float
        That penetration: how far the poking triangle's deepest corner lies
        behind the other's face (0 for triangles that cross at their edges).
    """

    __slots__ = ("names", "_inds", "point", "normal", "depth")

    def __init__(self, names: Sequence[Hashable], indices: Sequence[int], point: NDArray[np.float64],
                 normal: NDArray[np.float64], depth: float) -> None:
        self.names = set(names)
        self._inds = {names[0]: int(indices[0]), names[1]: int(indices[1])}
        self.point = point
        self.normal = normal
        self.depth = float(depth)

    def index(self, name: Hashable) -> int:
        """Face index in contact of the object ``name`` (-1 for a containment without touching faces)."""
        return self._inds[name]

    def __repr__(self):
        return f"ContactData({sorted(map(str, self.names))}, point={self.point}, depth={self.depth:g})"


class DistanceData:
    """Where a distance query's minimum is reached (trimesh's ``DistanceData``).

    Attributes
    ----------
    names : set
        The two objects' names.
    distance : float
        Minimum distance between their surfaces (0 when they meet).
    """

    __slots__ = ("names", "_inds", "_points", "distance")

    def __init__(self, names: Sequence[Hashable], indices: Sequence[int], points: Sequence[NDArray[np.float64]],
                 distance: float) -> None:
        self.names = set(names)
        self._inds = {names[0]: int(indices[0]), names[1]: int(indices[1])}
        self._points = {names[0]: points[0], names[1]: points[1]}
        self.distance = float(distance)

    def index(self, name: Hashable) -> int:
        """Face index of the closest triangle of the object ``name``."""
        return self._inds[name]

    def point(self, name: Hashable) -> NDArray[np.float64]:
        """(3,) float64: the closest point, world frame, on the object ``name``."""
        return self._points[name]

    def __repr__(self):
        return f"DistanceData({sorted(map(str, self.names))}, distance={self.distance:g})"


# ---------------------------------------------------------------------------
# Trees cached by content
# ---------------------------------------------------------------------------


class _Mesh:
    """A distinct mesh: its tree, its component vertices, and a one-tree table."""

    __slots__ = ("tree", "key", "component_points", "_table")

    def __init__(self, tree, key):
        self.tree = tree
        self.key = key
        self.component_points = np.ascontiguousarray(tree.vertices[tree.component_vertices])
        self._table = None

    @property
    def table(self):
        if self._table is None:
            self._table = _pack([self])
        return self._table


_CACHE = OrderedDict()  # content key -> list of _Mesh (the checksum's candidates)
_CACHE_SIZE = 256
_CACHE_LOCK = threading.RLock()


def _mesh_arrays(mesh, name):
    """``(vertices, faces, fast_key)`` of what the caller passed as a mesh."""
    fast = None
    if isinstance(mesh, OBBTree):
        return mesh.vertices, mesh.faces, None
    if hasattr(mesh, "vertices") and hasattr(mesh, "faces"):
        if type(mesh).__module__.startswith("trimesh"):
            fast = _fast_key(mesh)  # trimesh keeps this checksum of its arrays up to date
        v, f = mesh.vertices, mesh.faces
    elif isinstance(mesh, (tuple, list)) and len(mesh) == 2:
        v, f = mesh
    else:
        raise ValueError(f"{name}: expected a trimesh.Trimesh, an OBBTree or a (vertices, faces) pair, "
                         f"got {type(mesh).__name__}")
    try:
        v = np.ascontiguousarray(v, dtype=np.float64)
        f = np.ascontiguousarray(f)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{name}: {exc}") from None
    if f.dtype.kind in "iu" and f.dtype != np.int64:
        f = f.astype(np.int64)
    return v, f, fast


def _lookup(key, v, f):
    for m in _CACHE.get(key, ()):
        if m.tree.vertices.shape == v.shape and m.tree.faces.shape == f.shape \
                and np.array_equal(m.tree.vertices, v) and np.array_equal(m.tree.faces, f):
            _CACHE.move_to_end(key)
            return m
    return None


def _remember(key, m):
    _CACHE.setdefault(key, []).append(m)
    _CACHE.move_to_end(key)
    while len(_CACHE) > _CACHE_SIZE:
        _CACHE.popitem(last=False)


def _get_mesh(mesh, name="mesh"):
    """The cached :class:`_Mesh` of ``mesh`` (its tree built on first sight of its content).

    Looked up by trimesh's own checksum for a ``trimesh.Trimesh`` (kept up to
    date by trimesh, a few microseconds), else by a CRC-32 of the arrays; a
    hit is confirmed by comparing the arrays, so equal checksums of different
    meshes cannot mix them up.
    """
    last = _LAST.get(id(mesh))
    if last is not None and last[0] is mesh and last[1] is not None and _fast_key(mesh) == last[1]:
        return last[2]  # the same object, unchanged (trimesh's checksum tracks edits)
    v, f, fast = _mesh_arrays(mesh, name)
    with _CACHE_LOCK:
        m = _lookup(fast, v, f) if fast is not None else None
        if m is not None:
            _note(mesh, fast, m)
            return m
        key = ("crc", v.shape, f.shape, f.dtype.str, zlib.crc32(f.data, zlib.crc32(v.data)))
        m = _lookup(key, v, f)
        if m is not None:
            if fast is not None:
                _remember(fast, m)
            _note(mesh, fast, m)
            return m
    if isinstance(mesh, OBBTree):
        tree = mesh
    else:
        try:
            tree = OBBTree(v, f)
        except ValueError as exc:
            raise ValueError(f"{name}: {exc}") from None
    m = _Mesh(tree, key)
    log.debug("built an OBB tree of %d triangles (%d nodes)", len(tree.faces), tree.node_count)
    with _CACHE_LOCK:
        _remember(key, m)
        if fast is not None:
            _remember(fast, m)
    _note(mesh, fast, m)
    return m


# The last few query objects seen (strong references, so ids stay theirs): a
# repeated query with the same trimesh object skips even the arrays' comparison.
_LAST = OrderedDict()


def _note(mesh, fast, m):
    if fast is None:
        return
    with _CACHE_LOCK:
        _LAST[id(mesh)] = (mesh, fast, m)
        _LAST.move_to_end(id(mesh))
        while len(_LAST) > 16:
            _LAST.popitem(last=False)


def _fast_key(mesh):
    try:
        return ("trimesh", hash(mesh))
    except TypeError:
        return None


def clear_cache():
    """Forget the trees cached by content (managers keep the ones they use)."""
    with _CACHE_LOCK:
        _CACHE.clear()
        _LAST.clear()


def _pack(meshes):
    """Trees concatenated for the kernels: ``(nodes, links, triangles, tri_index,
    node_start, tri_start, closed, comp_start, comp_points, support_points,
    support_ranges, support_start)``; mesh ``m`` owns rows
    ``node_start[m]:node_start[m + 1]`` etc. (indices inside stay local to it;
    the support arrays are :attr:`OBBTree.support_points`, their ranges rows cut
    by ``node_start``)."""
    trees = [m.tree for m in meshes]

    def starts(sizes):
        out = np.zeros(len(sizes) + 1, dtype=np.int64)
        np.cumsum(sizes, out=out[1:])
        return out

    if not trees:
        return (np.empty((0, 16)), np.empty((0, 3), np.int64), np.empty((0, 3, 3)), np.empty(0, np.int64),
                np.zeros(1, np.int64), np.zeros(1, np.int64), np.empty(0, np.bool_), np.zeros(1, np.int64),
                np.empty((0, 3)), np.empty((0, 3)), np.empty((0, 2), np.int64), np.zeros(1, np.int64))
    support = [t.support_points for t in trees]
    return (np.concatenate([t.nodes for t in trees]), np.concatenate([t.links for t in trees]),
            np.concatenate([t.triangles for t in trees]), np.concatenate([t.tri_index for t in trees]),
            starts([len(t.nodes) for t in trees]), starts([len(t.triangles) for t in trees]),
            np.array([t.closed for t in trees], dtype=np.bool_),
            starts([len(m.component_points) for m in meshes]),
            np.concatenate([m.component_points for m in meshes]),
            np.concatenate([p for p, _ in support]), np.concatenate([r for _, r in support]),
            starts([len(p) for p, _ in support]))


# ---------------------------------------------------------------------------
# Kernels over candidate pairs
# ---------------------------------------------------------------------------


@njit(inline="always")
def _view(tb, m):
    """Mesh ``m``'s arrays in a packed table: ``nodes, links, triangles, tri_index, closed, comp_points``."""
    n0, n1 = tb[4][m], tb[4][m + 1]
    t0, t1 = tb[5][m], tb[5][m + 1]
    c0, c1 = tb[7][m], tb[7][m + 1]
    return tb[0][n0:n1], tb[1][n0:n1], tb[2][t0:t1], tb[3][t0:t1], tb[6][m], tb[8][c0:c1]


@njit(inline="always")
def _support_view(tb, m):
    """Mesh ``m``'s node support points in a packed table: ``points, ranges`` (:attr:`OBBTree.support_points`)."""
    n0, n1 = tb[4][m], tb[4][m + 1]
    p0, p1 = tb[11][m], tb[11][m + 1]
    return tb[9][p0:p1], tb[10][n0:n1]


@njit
def _collide_run(ta, mesh_a, poses_a, tb, mesh_b, poses_b, cand, containment, stop_first, i0, i1, out):
    """``out[i]`` for ``i0 <= i < i1``: objects ``cand[i, 0]`` (of A) and ``cand[i, 1]`` (of B)
    collide. With ``stop_first`` the run stops at its first hit (the rest stay False)."""
    pairs_buf = np.empty((1, 2), np.int64)
    segs_buf = np.empty((1, 2, 3))
    for i in range(i0, i1):
        a = cand[i, 0]
        b = cand[i, 1]
        na, la, tra, ia, ca, pta = _view(ta, mesh_a[a])
        nb, lb, trb, ib, cb, ptb = _view(tb, mesh_b[b])
        hit = collide_pair_trees(na, la, tra, ia, ca, pta, nb, lb, trb, ib, cb, ptb, poses_a[a], poses_b[b],
                                 containment, pairs_buf, segs_buf)
        out[i] = hit
        if hit and stop_first:
            break


@njit
def _collide_candidates(ta, mesh_a, poses_a, tb, mesh_b, poses_b, cand, containment, stop_first, out):
    """:func:`_collide_run` over every candidate, on one thread."""
    _collide_run(ta, mesh_a, poses_a, tb, mesh_b, poses_b, cand, containment, stop_first, 0, cand.shape[0], out)


@njit(parallel=True)
def _collide_candidates_parallel(ta, mesh_a, poses_a, tb, mesh_b, poses_b, cand, containment, runs, out):
    """:func:`_collide_run` over every candidate, one run of consecutive candidates per thread."""
    k = cand.shape[0]
    for r in prange(runs):
        _collide_run(ta, mesh_a, poses_a, tb, mesh_b, poses_b, cand, containment, False,
                     r * k // runs, (r + 1) * k // runs, out)


@njit
def _first_hit(ta, mesh_a, poses_a, tb, mesh_b, poses_b, cand):
    """Index of a candidate ``cand[i]`` (k, 2) (object ``cand[i, 0]`` of A, ``cand[i, 1]`` of B)
    that collides, -1 if none: the yes / no of :func:`_collide_run` over every candidate,
    stopping at the first hit.

    Two passes: first every candidate's surfaces
    (:func:`collision.mesh_query.collide_kernel` up to its first triangle
    pair), then, only when no surfaces meet anywhere, containment
    (:func:`collision.batch.contained_pair_trees`) for the candidates whose
    root boxes overlap and one of whose meshes is closed. Containment casts
    rays through a tree for each such candidate, which costs more than a
    surface miss and is rarely the answer, so the first pass keeps it out of
    the way of the usual hit (the answer is the same either way). One
    manager's own pairs pass its table as both A and B.
    """
    k = cand.shape[0]
    pairs_buf = np.empty((1, 2), np.int64)
    segs_buf = np.empty((1, 2, 3))
    maybe = np.empty(k, np.bool_)  # roots overlap and a mesh is closed: containment possible
    for i in range(k):
        a = cand[i, 0]
        b = cand[i, 1]
        na, la, tra, ia, ca, _ = _view(ta, mesh_a[a])
        nb, lb, trb, ib, cb, _ = _view(tb, mesh_b[b])
        _, n, _, _, roots = collide_kernel(na, la, tra, ia, nb, lb, trb, ib, poses_a[a], poses_b[b], True, False,
                                           pairs_buf, segs_buf)
        if n > 0:
            return i
        maybe[i] = roots and (ca or cb)
    for i in range(k):
        if not maybe[i]:
            continue
        a = cand[i, 0]
        b = cand[i, 1]
        na, la, tra, _, ca, pta = _view(ta, mesh_a[a])
        nb, lb, trb, _, cb, ptb = _view(tb, mesh_b[b])
        if contained_pair_trees(na, la, tra, ca, pta, nb, lb, trb, cb, ptb, poses_a[a], poses_b[b]) != 0:
            return i
    return -1


@njit
def _first_hit_single(ta, pose, tb, mesh_b, poses_b, lo, hi):
    """Does the query (mesh 0 of ``ta``) at ``pose`` (1, 4, 4) collide with any object of ``tb``?

    The yes / no of :meth:`CollisionManager.in_collision_single` in one compiled
    call: the objects whose world boxes ``lo``, ``hi`` (n, 3) meet the query's
    are the candidates of :func:`_first_hit`.
    """
    qlo = np.empty((1, 3))
    qhi = np.empty((1, 3))
    zero = np.zeros(1, np.int64)
    _world_boxes_kernel(ta[0], ta[4], zero, pose, qlo, qhi)
    n = lo.shape[0]
    cand = np.zeros((n, 2), np.int64)  # (query 0, object j)
    k = 0
    for j in range(n):
        near = True
        for ax in range(3):
            if lo[j, ax] > qhi[0, ax] or qlo[0, ax] > hi[j, ax]:
                near = False
        if near:
            cand[k, 1] = j
            k += 1
    return _first_hit(ta, zero, pose, tb, mesh_b, poses_b, cand[:k]) >= 0


@njit
def _overlaps_sweep(lo_a, hi_a, lo_b, hi_b):
    """Every pair ``(i of A, j of B)`` whose closed boxes overlap: (k, 2) int64, sweep and prune in x."""
    na = lo_a.shape[0]
    n = na + lo_b.shape[0]
    lo = np.empty((n, 3))
    hi = np.empty((n, 3))
    lo[:na] = lo_a
    hi[:na] = hi_a
    lo[na:] = lo_b
    hi[na:] = hi_b
    order = np.argsort(lo[:, 0])
    out = np.empty((16, 2), np.int64)
    k = 0
    for p in range(n):
        i = order[p]
        for q in range(p + 1, n):
            j = order[q]
            if lo[j, 0] > hi[i, 0]:
                break
            if (i < na) == (j < na):
                continue
            if lo[i, 1] > hi[j, 1] or lo[j, 1] > hi[i, 1] or lo[i, 2] > hi[j, 2] or lo[j, 2] > hi[i, 2]:
                continue
            if k == out.shape[0]:
                bigger = np.empty((2 * k, 2), np.int64)
                bigger[:k] = out[:k]
                out = bigger
            if i < na:
                out[k, 0], out[k, 1] = i, j - na
            else:
                out[k, 0], out[k, 1] = j, i - na
            k += 1
    return out[:k]


@njit
def _min_distance_sweep(ta, mesh_a, poses_a, lo_a, hi_a, tb, mesh_b, poses_b, lo_b, hi_b, internal, points):
    """Nearest pair of objects, one of A and one of B (``internal``: two of A, B ignored).

    Boxes sorted by their low x; a pair is looked at only while its x gap is
    below the best distance so far, its boxes' gap only if that is below it,
    its posed root OBBs' gap (:func:`collision.mesh_query.boxes_gap2`) next,
    and only then the exact distance. Returns ``(dist2, a, b, face_a,
    face_b)`` (``a = b = -1`` when there is no pair) and writes the closest
    points on A's and B's object into ``points`` (2, 3).
    """
    na = lo_a.shape[0]
    n = na if internal else na + lo_b.shape[0]
    lo = np.empty((n, 3))
    hi = np.empty((n, 3))
    lo[:na] = lo_a
    hi[:na] = hi_a
    if not internal:
        lo[na:] = lo_b
        hi[na:] = hi_b
    order = np.argsort(lo[:, 0])
    best2 = np.inf
    best_a = best_b = face_a = face_b = -1
    pts = np.empty((2, 3))
    done = False
    for p in range(n):
        if done:
            break
        i = order[p]
        for q in range(p + 1, n):
            j = order[q]
            dx = lo[j, 0] - hi[i, 0]
            if dx > 0.0 and dx * dx >= best2:
                break
            if not internal and (i < na) == (j < na):
                continue
            g = 0.0
            for ax in range(3):
                d = max(lo[j, ax] - hi[i, ax], lo[i, ax] - hi[j, ax], 0.0)
                g += d * d
            if g >= best2:
                continue
            if internal:
                a, b = min(i, j), max(i, j)
            elif i < na:
                a, b = i, j - na
            else:
                a, b = j, i - na
            nda, lka, tra, ia, _, _ = _view(ta, mesh_a[a])
            xa, ra = _support_view(ta, mesh_a[a])
            if internal:
                ndb, lkb, trb, ib, _, _ = _view(ta, mesh_a[b])
                xb, rb = _support_view(ta, mesh_a[b])
                pa, pb = poses_a[a], poses_a[b]
            else:
                ndb, lkb, trb, ib, _, _ = _view(tb, mesh_b[b])
                xb, rb = _support_view(tb, mesh_b[b])
                pa, pb = poses_a[a], poses_b[b]
            if best2 < np.inf:
                r, t = _relative_t(pa, pb)
                if boxes_gap2(nda, 0, ndb, 0, r, t) >= best2:
                    continue
            _, d2, bi, bj, _, _ = distance_kernel(nda, lka, tra, ndb, lkb, trb, pa, pb, 0.0, pts, best2, xa, ra, xb, rb)
            if d2 < best2:
                best2 = d2
                best_a, best_b = a, b
                face_a, face_b = ia[bi], ib[bj]
                points[:] = pts
                if d2 == 0.0:
                    done = True
                    break
    return best2, best_a, best_b, face_a, face_b


@njit
def _box_gaps(lo_a, hi_a, lo_b, hi_b):
    """Squared gaps ``(n,)`` from A's world AABB ``lo_a, hi_a (1, 3)`` to each of B's
    ``lo_b, hi_b (n, 3)`` (lower bounds of the distances), and the order ``(n,)`` that sorts them."""
    n = lo_b.shape[0]
    gaps = np.empty(n)
    for j in range(n):
        g = 0.0
        for ax in range(3):
            d = max(lo_b[j, ax] - hi_a[0, ax], lo_a[0, ax] - hi_b[j, ax], 0.0)
            g += d * d
        gaps[j] = g
    return gaps, np.argsort(gaps)


@njit
def _min_distance_one(ta, m, pose, lo_a, hi_a, tb, mesh_b, poses_b, lo_b, hi_b, points):
    """:func:`_min_distance_sweep` for one object A against the objects of B: B's objects in the
    order of their box gaps to A's box, stopping at the first whose gap reaches the best distance."""
    n = lo_b.shape[0]
    gaps, order = _box_gaps(lo_a, hi_a, lo_b, hi_b)
    best2 = np.inf
    best_b = face_a = face_b = -1
    pts = np.empty((2, 3))
    nda, lka, tra, ia, _, _ = _view(ta, m)
    xa, ra = _support_view(ta, m)
    for q in range(n):
        j = order[q]
        if gaps[j] >= best2:
            break
        ndb, lkb, trb, ib, _, _ = _view(tb, mesh_b[j])
        xb, rb = _support_view(tb, mesh_b[j])
        pb = poses_b[j]
        if best2 < np.inf:
            r, t = _relative_t(pose, pb)
            if boxes_gap2(nda, 0, ndb, 0, r, t) >= best2:
                continue
        _, d2, bi, bj, _, _ = distance_kernel(nda, lka, tra, ndb, lkb, trb, pose, pb, 0.0, pts, best2, xa, ra, xb, rb)
        if d2 < best2:
            best2 = d2
            best_b = j
            face_a, face_b = ia[bi], ib[bj]
            points[:] = pts
            if d2 == 0.0:
                break
    return best2, best_b, face_a, face_b


# Packing of a node pair of the scene search: object (15 bits), A's node, B's node (24 bits each).
_NODE_BITS = 24
_NODE_MASK = (1 << _NODE_BITS) - 1
_MAX_SCENE_OBJECTS = 1 << 15


@njit
def _room(keys, vals, top, need):
    """``keys (k,)`` float64 and ``vals (k,)`` int64 with room for ``top + need`` entries
    (doubled and the first ``top`` copied when short)."""
    if top + need <= keys.shape[0]:
        return keys, vals
    bigger_k = np.empty(2 * keys.shape[0] + need)
    bigger_v = np.empty(bigger_k.shape[0], dtype=np.int64)
    bigger_k[:top] = keys[:top]
    bigger_v[:top] = vals[:top]
    return bigger_k, bigger_v


@njit
def _enter(rel, j, pose, pose_b, nodes_a, nodes_b):
    """Object ``j`` enters the scene search: its pose in A's frame stored in
    ``rel[j]`` (rows of R, then T) and its root boxes' squared gap returned."""
    r, t = _relative_t(pose, pose_b)
    for i in range(3):
        for k in range(3):
            rel[j, 3 * i + k] = r[i][k]
        rel[j, 9 + i] = t[i]
    return boxes_gap2(nodes_a, 0, nodes_b, 0, r, t)


@njit(inline="always")
def _placed(rel, j):
    """Object ``j``'s ``(R, T)`` in A's frame as tuples, from ``rel[j]`` (see :func:`_enter`)."""
    return (((rel[j, 0], rel[j, 1], rel[j, 2]), (rel[j, 3], rel[j, 4], rel[j, 5]), (rel[j, 6], rel[j, 7], rel[j, 8])),
            (rel[j, 9], rel[j, 10], rel[j, 11]))


@njit
def _min_distance_scene(ta, m, pose, lo_a, hi_a, tb, mesh_b, poses_b, lo_b, hi_b, points):
    """:func:`_min_distance_one` as one search over the node pairs of every object.

    The traversal of :func:`collision.mesh_distance.distance_kernel` (best
    first by squared box gap, then depth first once ``_BEST_FIRST_HEAP``
    pairs wait) with node pairs of all objects in one heap: an object enters
    when its world AABB's gap to A's (a lower bound of its distance, objects
    taken in the order of these gaps) is below both the best distance so far
    and the nearest waiting pair, with its root OBBs' gap as key. So the node
    pairs of an object that turns out farther than another are expanded only
    while they are nearer than anything else, never to the end of their own
    search, as the loop over objects does (each object searched below the
    best distance of the objects before it). The result is the same exact
    minimum; among equally near pairs which one is reported depends on the
    visiting order. A's node indices and B's must fit in 24 bits and the
    objects in 15 (the caller checks).

    Returns ``(dist2, b, face_a, face_b)`` as :func:`_min_distance_one`.
    """
    n = lo_b.shape[0]
    gaps, order = _box_gaps(lo_a, hi_a, lo_b, hi_b)
    nda, lka, tra, ia, _, _ = _view(ta, m)
    xa, ra = _support_view(ta, m)
    rel = np.empty((n, 12))  # each entered object's (R, T) in A's frame, rows of R then T
    best2 = np.inf
    best_b = bi = bj = -1
    x = y = (0.0, 0.0, 0.0)
    keys = np.empty(_BEST_FIRST_HEAP + 64)
    vals = np.empty(_BEST_FIRST_HEAP + 64, dtype=np.int64)
    top = 0  # heap size
    nxt = 0  # objects order[:nxt] have entered
    have = False  # whether (o, na, nb, g) holds a pair to expand
    o = na = nb = 0
    g = 0.0
    # The arrays and pose of the object whose pair is expanded: taken again only when the object
    # changes (a slice of the packed table costs reference counts, more than a box test).
    cur = -1
    ndb, lkb, trb = nda, lka, tra
    xb, rb = xa, ra
    r, t = ((1.0, 0.0, 0.0), (0.0, 1.0, 0.0), (0.0, 0.0, 1.0)), (0.0, 0.0, 0.0)
    while True:
        if have and g < best2:
            if o != cur:
                ndb, lkb, trb = _view(tb, mesh_b[o])[:3]
                xb, rb = _support_view(tb, mesh_b[o])
                r, t = _placed(rel, o)
                cur = o
            if lka[na, 0] < 0 and lkb[nb, 0] < 0:
                before = best2
                best2, x, y, bi, bj = _leaf_pair_distance(tra, trb, lka, lkb, na, nb, r, t, best2, x, y, bi, bj)
                if best2 < before:
                    best_b = o
                    if best2 == 0.0:
                        top = 0
                        break  # the surfaces meet: nothing is nearer
            else:
                n0a, n0b, g0, n1a, n1b, g1 = _child_gaps(nda, lka, ndb, lkb, na, nb, r, t)
                n0a, n0b, g0, n1a, n1b, g1 = _support_gaps(nda, xa, ra, ndb, xb, rb, n0a, n0b, g0, n1a, n1b, g1,
                                                           r, t, best2, SUPPORT_POINTS)
                if top + 2 > keys.shape[0]:  # (a call that returns the arrays costs reference counts)
                    keys, vals = _room(keys, vals, top, 2)
                code = o << (2 * _NODE_BITS)
                if g1 < best2:
                    _heap_push(keys, vals, top, g1, code | (n1a << _NODE_BITS) | n1b)
                    top += 1
                if g0 < best2:
                    if (top == 0 or g0 <= keys[0]) and (nxt == n or g0 <= gaps[order[nxt]]):
                        na, nb, g = n0a, n0b, g0  # nearest of all: expand it now
                        continue
                    _heap_push(keys, vals, top, g0, code | (n0a << _NODE_BITS) | n0b)
                    top += 1
        have = False
        # objects whose boxes come nearer than every waiting pair enter with their root pair
        while nxt < n and gaps[order[nxt]] < best2 and (top == 0 or gaps[order[nxt]] < keys[0]):
            j = order[nxt]
            nxt += 1
            g = _enter(rel, j, pose, poses_b[j], nda, _view(tb, mesh_b[j])[0])
            if g < best2:
                if top + 1 > keys.shape[0]:
                    keys, vals = _room(keys, vals, top, 1)
                _heap_push(keys, vals, top, g, j << (2 * _NODE_BITS))
                top += 1
        if top == 0 or keys[0] >= best2:
            top = 0
            break  # every waiting pair and every object still out is at least best apart
        if top >= _BEST_FIRST_HEAP:
            break  # the waiting pairs (and the objects still out) go on depth-first
        code = vals[0]
        g = keys[0]
        _heap_pop(keys, vals, top)
        top -= 1
        o = code >> (2 * _NODE_BITS)
        na = (code >> _NODE_BITS) & _NODE_MASK
        nb = code & _NODE_MASK
        have = True
    if top > 0:
        # Phase 2, depth-first: the objects still out enter with their root pairs, then nearest on top.
        while nxt < n and gaps[order[nxt]] < best2:
            j = order[nxt]
            nxt += 1
            g = _enter(rel, j, pose, poses_b[j], nda, _view(tb, mesh_b[j])[0])
            if g < best2:
                if top + 1 > keys.shape[0]:
                    keys, vals = _room(keys, vals, top, 1)
                keys[top] = g
                vals[top] = j << (2 * _NODE_BITS)
                top += 1
        kept = 0
        for k in range(top):
            if keys[k] < best2:
                keys[kept] = keys[k]
                vals[kept] = vals[k]
                kept += 1
        top = kept
        srt = np.argsort(keys[:top])[::-1]
        stack_g = np.empty(max(64, 2 * top))
        stack_c = np.empty(stack_g.shape[0], dtype=np.int64)
        for k in range(top):
            stack_g[k] = keys[srt[k]]
            stack_c[k] = vals[srt[k]]
        while top > 0 and best2 > 0.0:
            top -= 1
            code = stack_c[top]
            g = stack_g[top]
            o = code >> (2 * _NODE_BITS)
            na = (code >> _NODE_BITS) & _NODE_MASK
            nb = code & _NODE_MASK
            if not g < best2:
                continue
            if o != cur:
                ndb, lkb, trb = _view(tb, mesh_b[o])[:3]
                xb, rb = _support_view(tb, mesh_b[o])
                r, t = _placed(rel, o)
                cur = o
            while g < best2:  # descend, nearer child first
                if lka[na, 0] < 0 and lkb[nb, 0] < 0:
                    before = best2
                    best2, x, y, bi, bj = _leaf_pair_distance(tra, trb, lka, lkb, na, nb, r, t,
                                                              best2, x, y, bi, bj)
                    if best2 < before:
                        best_b = o
                    break
                n0a, n0b, g0, n1a, n1b, g1 = _child_gaps(nda, lka, ndb, lkb, na, nb, r, t)
                n0a, n0b, g0, n1a, n1b, g1 = _support_gaps(nda, xa, ra, ndb, xb, rb, n0a, n0b, g0, n1a, n1b, g1,
                                                           r, t, best2, SUPPORT_POINTS)
                if g1 < best2:  # the farther child waits
                    if top >= stack_g.shape[0]:
                        bigger_g = np.empty(2 * stack_g.shape[0])
                        bigger_c = np.empty(2 * stack_g.shape[0], dtype=np.int64)
                        bigger_g[:top] = stack_g[:top]
                        bigger_c[:top] = stack_c[:top]
                        stack_g, stack_c = bigger_g, bigger_c
                    stack_g[top] = g1
                    stack_c[top] = (o << (2 * _NODE_BITS)) | (n1a << _NODE_BITS) | n1b
                    top += 1
                na, nb, g = n0a, n0b, g0
    if best_b < 0:
        return best2, -1, -1, -1
    for k in range(3):  # A's model frame to world
        points[0, k] = pose[k, 0] * x[0] + pose[k, 1] * x[1] + pose[k, 2] * x[2] + pose[k, 3]
        points[1, k] = pose[k, 0] * y[0] + pose[k, 1] * y[1] + pose[k, 2] * y[2] + pose[k, 3]
    return best2, best_b, ia[bi], _view(tb, mesh_b[best_b])[3][bj]


# ---------------------------------------------------------------------------
# The manager
# ---------------------------------------------------------------------------


@njit
def _world_boxes_kernel(nodes, node_start, mesh, poses, lo, hi):
    for k in range(mesh.shape[0]):
        r = node_start[mesh[k]]  # the mesh's root node
        for i in range(3):
            c = poses[k, i, 3]
            h = 0.0
            for a in range(3):
                c += poses[k, i, a] * nodes[r, a]
            for j in range(3):  # world component i of the root box's axis j, times its half extent
                w = (poses[k, i, 0] * nodes[r, 3 + 3 * j] + poses[k, i, 1] * nodes[r, 4 + 3 * j]
                     + poses[k, i, 2] * nodes[r, 5 + 3 * j])
                h += abs(w) * nodes[r, 12 + j]
            lo[k, i] = c - h
            hi[k, i] = c + h


def _world_boxes(table, mesh, poses):
    """World AABBs (lo, hi) of posed objects: the tight boxes around their trees' root OBBs."""
    lo = np.empty((len(mesh), 3))
    hi = np.empty((len(mesh), 3))
    _world_boxes_kernel(table[0], table[4], mesh, poses, lo, hi)
    return lo, hi


def _sort_names(names):
    try:
        return tuple(sorted(names))
    except TypeError:
        return tuple(names)


def _returns(result, names, data, want_names, want_data):
    if want_names and want_data:
        return result, names, data
    if want_names:
        return result, names
    if want_data:
        return result, data
    return result


class CollisionManager:
    """Named meshes at poses, asked whether (and where) they collide and how far apart they are.

    The interface of ``trimesh.collision.CollisionManager`` (see the module
    docstring for what differs and why); works without trimesh or FCL.

    Parameters
    ----------
    broad_phase : str
        The broad phase over the objects' world AABBs for
        :meth:`in_collision_internal` (:data:`collision.BROAD_PHASES`;
        ``"tree"``, the dynamic AABB tree, by default).
    threads : int, optional
        At most this many numba threads for the candidate pairs' tests
        (default: all).

    Examples
    --------
    >>> m = CollisionManager()
    >>> m.add_object("gear", gear_mesh)                     # a trimesh.Trimesh
    >>> m.add_object("part", (vertices, faces), pose)      # or plain arrays
    >>> m.in_collision_internal(return_names=True)
    (True, {('gear', 'part')})
    >>> m.min_distance_single(tool, tool_pose, return_name=True)
    (0.012, 'gear')
    """

    def __init__(self, broad_phase: str = "tree", threads: int | None = None) -> None:
        self._broad = make_broad_phase(broad_phase)
        if threads is not None and int(threads) < 1:
            raise ValueError(f"threads: must be >= 1, got {threads!r}")
        self._threads = threads
        self._names = []  # row -> name
        self._row = {}  # name -> row
        self._meshes = []  # row -> _Mesh
        self._poses = np.empty((0, 4, 4))
        self._table = None  # packed trees of the distinct meshes in use
        self._mesh_ids = None  # row -> index into the table
        self._version = 0  # bumped by every change of objects or poses
        self._boxes_at = self._pairs_at = -1  # the version the cached boxes / broad-phase pairs are of

    # -- objects ------------------------------------------------------------

    def __len__(self):
        return len(self._names)

    def __contains__(self, name):
        return name in self._row

    @property
    def names(self) -> list[Hashable]:
        """The objects' names, in the order they were added (removals fill gaps from the end)."""
        return list(self._names)

    def add_object(self, name: Hashable, mesh: Any, transform: ArrayLike | None = None) -> OBBTree:
        """Add an object; an object of the same name is replaced (as trimesh does).

        Parameters
        ----------
        name : hashable
            The object's name (trimesh uses ``str``).
        mesh : trimesh.Trimesh, (vertices, faces) or OBBTree
            ``vertices`` (n, 3) float, ``faces`` (m, 3) int. Its tree is built
            once per distinct content and shared.
        transform : (4, 4) float64, optional
            Rigid model-to-world pose; identity by default.

        Returns
        -------
        OBBTree
            The mesh's tree.

        Raises
        ------
        ValueError
            Naming ``mesh`` (not a mesh, bad arrays, no triangles) or
            ``transform`` (shape, NaN or infinity, not rigid). Nothing is
            added or replaced then.
        """
        pose = checked_pose(np.eye(4) if transform is None else transform, "transform").copy()
        m = _get_mesh(mesh)
        if name in self._row:
            log.debug("add_object: %r replaces the object of that name", name)
            row = self._row[name]
            self._meshes[row] = m
            self._poses[row] = pose
        else:
            self._row[name] = len(self._names)
            self._names.append(name)
            self._meshes.append(m)
            self._poses = np.concatenate([self._poses, pose[None]])
        self._table = None
        self._version += 1
        return m.tree

    def remove_object(self, name: Hashable) -> None:
        """Remove the object ``name``; ``ValueError`` if there is none (as trimesh)."""
        row = self._row_of(name)
        last = len(self._names) - 1
        if row != last:  # the last object takes the freed row
            moved = self._names[last]
            self._names[row] = moved
            self._meshes[row] = self._meshes[last]
            self._poses[row] = self._poses[last]
            self._row[moved] = row
        del self._row[name]
        self._names.pop()
        self._meshes.pop()
        self._poses = self._poses[:last].copy()
        self._table = None
        self._version += 1

    def set_transform(self, name: Hashable, transform: ArrayLike) -> None:
        """Move the object ``name`` to the rigid pose ``transform`` (4, 4); rebuilds nothing.

        Raises
        ------
        ValueError
            For an unknown ``name``, or naming ``transform`` (shape, NaN, not rigid).
        """
        row = self._row_of(name)
        self._poses[row] = checked_pose(transform, "transform")
        self._version += 1

    def get_transform(self, name: Hashable) -> NDArray[np.float64]:
        """(4, 4) float64: a copy of the object's pose."""
        return self._poses[self._row_of(name)].copy()

    def _row_of(self, name):
        try:
            return self._row[name]
        except (KeyError, TypeError):
            raise ValueError(f"name: {name!r} not in collision manager") from None

    def _packed(self):
        """The table of distinct meshes and each row's index into it (rebuilt after adds and removals)."""
        if self._table is None:
            ids = {}
            distinct = []
            mesh_ids = np.empty(len(self._meshes), dtype=np.int64)
            for row, m in enumerate(self._meshes):
                k = ids.get(id(m))
                if k is None:
                    k = ids[id(m)] = len(distinct)
                    distinct.append(m)
                mesh_ids[row] = k
            self._table = _pack(distinct)
            self._mesh_ids = mesh_ids
        return self._table, self._mesh_ids

    def _boxes(self):
        """The objects' world AABBs ``(lo, hi)``, kept until an object or a pose changes."""
        if self._boxes_at != self._version:
            table, mesh_ids = self._packed()
            self._lo, self._hi = _world_boxes(table, mesh_ids, self._poses)
            self._boxes_at = self._version
        return self._lo, self._hi

    def _broad_pairs(self):
        """The broad phase's overlapping pairs, asked again only after a change (as FCL's manager)."""
        if self._pairs_at != self._version:
            lo, hi = self._boxes()
            self._pairs = np.ascontiguousarray(self._broad.update(lo, hi, check=False))
            self._pairs_at = self._version
        return self._pairs

    def _thread_count(self):
        n = get_num_threads()
        return n if self._threads is None else max(1, min(n, int(self._threads)))

    def _query(self, mesh, transform):
        """The query mesh's cache entry and checked pose (1, 4, 4)."""
        pose = checked_pose(np.eye(4) if transform is None else transform, "transform")
        return _get_mesh(mesh), np.ascontiguousarray(pose, dtype=np.float64).reshape(1, 4, 4)

    # -- collision ------------------------------------------------------------

    def _collide(self, ta, mesh_a, poses_a, tb, mesh_b, poses_b, cand, stop_first):
        out = np.zeros(len(cand), dtype=np.bool_)
        cand = np.ascontiguousarray(cand)
        runs = 1 if stop_first else runs_for(len(cand), self._thread_count())
        if runs > 1:
            _collide_candidates_parallel(ta, mesh_a, poses_a, tb, mesh_b, poses_b, cand, True, runs, out)
        elif len(cand):
            _collide_candidates(ta, mesh_a, poses_a, tb, mesh_b, poses_b, cand, True, stop_first, out)
        return out

    def in_collision_single(self, mesh: Any, transform: ArrayLike | None = None, return_names: bool = False,
                            return_data: bool = False) -> bool | tuple[Any, ...]:
        """Does ``mesh`` at ``transform`` collide with any object of the manager?

        Parameters
        ----------
        mesh : trimesh.Trimesh, (vertices, faces) or OBBTree
            Not added; its tree is cached by content, so asking again with
            the same mesh builds nothing.
        transform : (4, 4) float64, optional
            Rigid pose, identity by default.
        return_names : bool
            Also return the set of names of the objects it collides with.
        return_data : bool
            Also return a list of :class:`ContactData` (names ``(name,
            "__external")``), every intersecting triangle pair.

        Returns
        -------
        is_collision : bool
        names : set, optional
        contacts : list of ContactData, optional
        """
        q, pose = self._query(mesh, transform)
        table, mesh_ids = self._packed()
        names, data = set(), []
        if not self._names:
            return _returns(False, names, data, return_names, return_data)
        lo, hi = self._boxes()
        if not (return_names or return_data):  # yes / no: one compiled call
            return bool(_first_hit_single(q.table, pose, table, mesh_ids, self._poses, lo, hi))
        qlo, qhi = _world_boxes(q.table, np.zeros(1, np.int64), pose)
        near = np.flatnonzero(np.all((lo <= qhi) & (qlo <= hi), axis=1))
        cand = np.stack([np.zeros(len(near), np.int64), near], axis=1)
        hits = self._collide(q.table, np.zeros(1, np.int64), pose, table, mesh_ids, self._poses, cand,
                             not (return_names or return_data))
        for j in near[hits]:
            name = self._names[j]
            names.add(name)
            if return_data:
                data += _contacts(q.tree, pose[0], self._meshes[j].tree, self._poses[j], (EXTERNAL, name))
        return _returns(bool(hits.any()), names, data, return_names, return_data)

    def in_collision_internal(self, return_names: bool = False, return_data: bool = False) -> bool | tuple[Any, ...]:
        """Do any two objects of the manager collide?

        Parameters
        ----------
        return_names : bool
            Also return the set of colliding pairs, each a 2-tuple of names in
            sorted order.
        return_data : bool
            Also return a list of :class:`ContactData`.

        Returns
        -------
        is_collision : bool
        names : set of (name, name), optional
        contacts : list of ContactData, optional
        """
        table, mesh_ids = self._packed()
        names, data = set(), []
        if len(self._names) < 2:
            return _returns(False, names, data, return_names, return_data)
        cand = self._broad_pairs()
        if not (return_names or return_data):  # the first hit answers: no result arrays, one compiled loop
            own = (table, mesh_ids, self._poses)  # the manager's pairs: its table as A and as B
            return len(cand) > 0 and _first_hit(*own, *own, cand) >= 0
        hits = self._collide(table, mesh_ids, self._poses, table, mesh_ids, self._poses, cand, False)
        for i, j in cand[hits]:
            pair = (self._names[i], self._names[j])
            names.add(_sort_names(pair))
            if return_data:
                data += _contacts(self._meshes[i].tree, self._poses[i], self._meshes[j].tree, self._poses[j], pair)
        return _returns(bool(hits.any()), names, data, return_names, return_data)

    def in_collision_other(self, other_manager: CollisionManager, return_names: bool = False,
                           return_data: bool = False) -> bool | tuple[Any, ...]:
        """Does any object of this manager collide with any object of ``other_manager``?

        Parameters
        ----------
        other_manager : CollisionManager
        return_names : bool
            Also return the set of colliding pairs ``(name here, name there)``.
        return_data : bool
            Also return a list of :class:`ContactData`.

        Returns
        -------
        is_collision : bool
        names : set of (name, name), optional
        contacts : list of ContactData, optional
        """
        other = _manager(other_manager)
        ta, ids_a = self._packed()
        tb, ids_b = other._packed()
        names, data = set(), []
        if not self._names or not other._names:
            return _returns(False, names, data, return_names, return_data)
        lo_a, hi_a = self._boxes()
        lo_b, hi_b = other._boxes()
        cand = _overlaps_sweep(lo_a, hi_a, lo_b, hi_b)
        hits = self._collide(ta, ids_a, self._poses, tb, ids_b, other._poses, cand,
                             not (return_names or return_data))
        for i, j in cand[hits]:
            pair = (self._names[i], other._names[j])
            names.add(pair)
            if return_data:
                data += _contacts(self._meshes[i].tree, self._poses[i], other._meshes[j].tree, other._poses[j],
                                  pair)
        return _returns(bool(hits.any()), names, data, return_names, return_data)

    # -- distance -------------------------------------------------------------

    def min_distance_single(self, mesh: Any, transform: ArrayLike | None = None, return_name: bool = False,
                            return_data: bool = False) -> float | tuple[Any, ...]:
        """Minimum distance between ``mesh`` at ``transform`` and any object of the manager.

        Parameters
        ----------
        mesh : trimesh.Trimesh, (vertices, faces) or OBBTree
        transform : (4, 4) float64, optional
        return_name : bool
            Also return the name of the nearest object.
        return_data : bool
            Also return a :class:`DistanceData` (names ``(name, "__external")``).

        Returns
        -------
        distance : float
            Between the surfaces, 0 where they meet; ``inf`` for an empty manager.
        name : optional
        data : DistanceData, optional
        """
        q, pose = self._query(mesh, transform)
        table, mesh_ids = self._packed()
        if not self._names:
            return _returns(np.inf, None, None, return_name, return_data)
        qlo, qhi = _world_boxes(q.table, np.zeros(1, np.int64), pose)
        lo, hi = self._boxes()
        pts = np.zeros((2, 3))
        if len(self._names) < _MAX_SCENE_OBJECTS and len(table[0]) <= _NODE_MASK and len(q.tree.nodes) <= _NODE_MASK:
            d2, b, fa, fb = _min_distance_scene(q.table, 0, pose[0], qlo, qhi, table, mesh_ids, self._poses, lo, hi,
                                                pts)
        else:
            d2, b, fa, fb = _min_distance_one(q.table, 0, pose[0], qlo, qhi, table, mesh_ids, self._poses, lo, hi,
                                              pts)
        d = float(np.sqrt(d2))
        name = self._names[b]
        data = DistanceData((EXTERNAL, name), (fa, fb), (pts[0].copy(), pts[1].copy()), d)
        return _returns(d, name, data, return_name, return_data)

    def min_distance_internal(self, name: Hashable | None = None, return_names: bool = False,
                              return_data: bool = False) -> float | tuple[Any, ...]:
        """Minimum distance between two objects of the manager (or between ``name`` and the others).

        Parameters
        ----------
        name : optional
            Only the pairs with this object (trimesh's argument).
        return_names : bool
            Also return the nearest pair's names, sorted.
        return_data : bool
            Also return a :class:`DistanceData`.

        Returns
        -------
        distance : float
            ``inf`` when there is no pair.
        names : (name, name), optional
        data : DistanceData, optional
        """
        table, mesh_ids = self._packed()
        n = len(self._names)
        if n < 2:
            return _returns(np.inf, None, None, return_names, return_data)
        lo, hi = self._boxes()
        pts = np.zeros((2, 3))
        if name is None:
            d2, a, b, fa, fb = _min_distance_sweep(table, mesh_ids, self._poses, lo, hi, table, mesh_ids,
                                                   self._poses, lo, hi, True, pts)
        else:
            r = self._row_of(name)
            rest = np.flatnonzero(np.arange(n) != r)
            d2, b, fa, fb = _min_distance_one(table, mesh_ids[r], self._poses[r], lo[r:r + 1], hi[r:r + 1], table,
                                              mesh_ids[rest], np.ascontiguousarray(self._poses[rest]),
                                              np.ascontiguousarray(lo[rest]), np.ascontiguousarray(hi[rest]), pts)
            a, b = r, rest[b]
        d = float(np.sqrt(d2))
        pair = (self._names[a], self._names[b])
        data = DistanceData(pair, (fa, fb), (pts[0].copy(), pts[1].copy()), d)
        return _returns(d, _sort_names(pair), data, return_names, return_data)

    def min_distance_other(self, other_manager: CollisionManager, return_names: bool = False,
                           return_data: bool = False) -> float | tuple[Any, ...]:
        """Minimum distance between an object of this manager and one of ``other_manager``.

        Returns
        -------
        distance : float
            ``inf`` when either manager is empty.
        names : (name here, name there), optional
        data : DistanceData, optional
        """
        other = _manager(other_manager)
        ta, ids_a = self._packed()
        tb, ids_b = other._packed()
        if not self._names or not other._names:
            return _returns(np.inf, None, None, return_names, return_data)
        lo_a, hi_a = self._boxes()
        lo_b, hi_b = other._boxes()
        pts = np.zeros((2, 3))
        d2, a, b, fa, fb = _min_distance_sweep(ta, ids_a, self._poses, lo_a, hi_a, tb, ids_b, other._poses,
                                               lo_b, hi_b, False, pts)
        d = float(np.sqrt(d2))
        pair = (self._names[a], other._names[b])
        data = DistanceData(pair, (fa, fb), (pts[0].copy(), pts[1].copy()), d)
        return _returns(d, pair, data, return_names, return_data)

    def __repr__(self):
        return f"CollisionManager({len(self)} objects, broad_phase={self._broad.name!r})"


def _manager(other):
    if not isinstance(other, CollisionManager):
        raise ValueError(f"other_manager: expected a collision.CollisionManager, got {type(other).__name__}")
    return other


def _unit(v):
    with np.errstate(invalid="ignore", divide="ignore"):
        return v / np.linalg.norm(v, axis=-1, keepdims=True)


def _contacts(tree_a, pose_a, tree_b, pose_b, names):
    """:class:`ContactData` of every intersecting triangle pair of two posed trees."""
    r = collide_trees(tree_a, pose_a, tree_b, pose_b)
    if not r.hit:
        return []
    if len(r.pairs) == 0:  # one inside the other, surfaces apart
        inner, pose = (tree_b, pose_b) if r.contained == "b_in_a" else (tree_a, pose_a)
        p = pose[:3, :3] @ inner.vertices[inner.component_vertices[0]] + pose[:3, 3]
        return [ContactData(names, (-1, -1), p, np.full(3, np.nan), np.nan)]
    va = tree_a.vertices[tree_a.faces[r.pairs[:, 0]]] @ pose_a[:3, :3].T + pose_a[:3, 3]
    vb = tree_b.vertices[tree_b.faces[r.pairs[:, 1]]] @ pose_b[:3, :3].T + pose_b[:3, 3]
    n_a = _unit(np.cross(va[:, 1] - va[:, 0], va[:, 2] - va[:, 0]))
    n_b = _unit(np.cross(vb[:, 1] - vb[:, 0], vb[:, 2] - vb[:, 0]))
    # how far each triangle's deepest corner lies behind the other's face
    pen_a = np.maximum(0.0, -np.einsum("kcj,kj->kc", va - vb[:, :1], n_b).min(axis=1))
    pen_b = np.maximum(0.0, -np.einsum("kcj,kj->kc", vb - va[:, :1], n_a).min(axis=1))
    use_b = ~(pen_b < pen_a)  # A pokes through B's face less deeply: B's face, normal -n_b
    normal = np.where(use_b[:, None], -n_b, n_a)
    depth = np.where(use_b, pen_a, pen_b)
    point = r.segments.mean(axis=1)
    return [ContactData(names, r.pairs[k], point[k], normal[k], depth[k]) for k in range(len(r.pairs))]
