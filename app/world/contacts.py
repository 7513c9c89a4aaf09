"""Contact manifolds that persist from step to step, and contact events.

The narrow phase answers one step at a time. Here the world keeps, for every
pair of convex pieces that touch, a manifold of at most four points, and for
each point how many steps it has existed and the impulses the solver
accumulated on it (warm starting). A new manifold continues the old one point
by point, by feature id first and by distance otherwise (as
:func:`collision.manifold.match_contacts`), so a box resting on another keeps
the same four contacts while it sits still.

All manifolds of a step live in one :class:`app.world.contact_store.ContactStore`:
one row per manifold (four point slots each), sorted by the key (body row A,
body row B, piece of A, piece of B, sub-key), as Box2D's and Jolt's contact
pools. A step is a handful of compiled calls, whatever the number of pairs:
one sorts the candidate pairs (:func:`_classify`), one finds their piece pairs
in key order and the batch each goes to (:func:`_route`), then per batch one
call gathers its arguments and one runs it: hull-hull piece pairs through
:func:`collision.hull_batch.collide_hull_pairs`, half-spaces against spheres,
capsules and hulls through
:func:`collision.halfspace_batch.collide_halfspace_pairs`, spheres against
spheres, capsules and hulls through
:func:`collision.round_batch.collide_sphere_pairs`, each writing its manifolds
straight into the piece pairs' rows; one joins the rows with last step's,
carrying ages and impulses (:func:`app.world.contact_store.next_store`), and one
finds the events. The rarer pairs are done outside those calls: convex
pieces against a static triangle mesh in one
:func:`collision.convex_mesh.collide_convex_trimesh_pairs` call per mesh, and
capsules against capsules and hulls by
:func:`collision.narrow_phase.collide_shapes` one at a time.
:meth:`ContactManager.update` calls those kernels from two compiled calls,
one before the hull batch (:func:`_detect_begin`: the sort, the mid phase,
the half-space batches and the hull batch's arguments, into scratch arrays
kept from step to step) and one after it (:func:`_detect_end`: the hull
rows, the join with last step's rows and the touching pairs), or from one
(:func:`_detect_whole`: both, and the hull batch's serial driver between
them) when the batch runs on one thread and no pair takes a rarer route, so
a small scene does not pay for a dozen calls, their arguments and the arrays
they return; its twin :meth:`ContactManager._update_composed` makes every
call from Python, and the tests hold the two equal bit for bit.

Mid phase: a body made of several convex pieces passes only the piece pairs
whose world AABBs (expanded by the contact margin) overlap to the narrow
phase. A static concave body's shape is its triangle mesh
(:class:`collision.shapes.TriMesh`): a piece against it gets one manifold per
plane of coplanar triangles (sub-key: the group's smallest face index).

Sleeping: a pair of bodies that both rest (static, or dynamic and asleep)
keeps its manifolds as they are, unchanged and not aged.

Pairs apart: the store keeps only manifolds with points, so the separating
feature (face or edge pair) of each hull piece pair that was apart is kept
beside it (:func:`_separated_rows`) and tried first at the next step, as a
touching pair's last feature is (:class:`collision.manifold.SatCache`): a pair
that stays apart costs one feature test. Only the work changes: a feature that
no longer separates leads to the full search, whose result does not depend on
the cache.

Events: a body pair *begins* touching on the first step one of its pieces'
manifolds has a point at zero gap or deeper, *persists* on every following
step, and *ends* on the first step without one (or when a body is removed).
Speculative points (a gap below the margin) do not count as touching.
:attr:`ContactManager.manifolds` and :attr:`ContactManager.events` present
the store as objects (built when asked for; the arrays of a
:class:`PersistentManifold` are views of the store's rows).
"""

from dataclasses import dataclass, field, fields
from types import SimpleNamespace

import numpy as np

from obbcollide._jit import njit
from obbcollide.convex_mesh import (MESH_KIND_NAMES, _convex_trimesh_pairs_kernel, collide_convex_trimesh,
                                    collide_convex_trimesh_pairs)
from obbcollide.halfspace_batch import CoreTable, _halfspace_kernel, collide_halfspace_pairs
from obbcollide import hull_batch as _hull_batch
from obbcollide.hull_batch import _COL as _HULL_COL
from obbcollide.hull_batch import HullTable, ManifoldBatch, collide_hull_pairs
from obbcollide.manifold import KIND_NAMES, Manifold
from obbcollide.round_batch import collide_sphere_pairs
from obbcollide.narrow_phase import PairCache, collide_hull_hull_gjk, collide_shapes, flip_manifold
from obbcollide.shapes import Capsule, HalfSpace, Hull, Sphere, TriMesh, local_box
from obbcollide.transform import POSE_ERRORS, check_pose_kernel
from obbcollide.tree_box_query import FAT_CAP

from .body import DYNAMIC, STATIC, box_world_bounds
from .contact_store import (_FROZEN_BYTE, _W_COUNT, _W_DEPTHS, _W_SAT, _WORDS, ContactStore, _next_store_kernel,
                            _pack_kernel, _touch_events_kernel, in_sorted, key_compare, next_store, pack_rows,
                            rows_array, sort_store, touch_events)

__all__ = ["PersistentManifold", "ContactEvent", "ContactManager", "ContactStore"]

# Manifold kinds as stored (ContactStore.kind): collision.manifold's, then any other name a pair
# function gives (the mesh contacts' "point"), added as met.
_KIND_NAMES = list(MESH_KIND_NAMES)  # (the mesh batch writes its "point" kind as this index)


def _kind_index(name):
    if name not in _KIND_NAMES:
        _KIND_NAMES.append(name)
    return _KIND_NAMES.index(name)


# No hull piece pairs apart (ContactManager._apart: keys and SAT caches, see _separated_rows).
_NO_APART = np.zeros((0, 8), np.int64)
_NO_BATCH = ManifoldBatch.empty(0)  # (no hull pairs in the batch)
_NO_STORE = ContactStore()  # (no pairs one by one; never written)
_NO_FLAGS = np.zeros(0, np.bool_)  # (no touching pair: their flags)
_NO_ENDS = (np.zeros(0, np.int64), _NO_FLAGS, [], 1)  # (last step's touching codes, which stay, bodies, n)

# Shape kinds, for choosing the batch a piece pair goes to.
_HULL, _SPHERE, _CAPSULE, _HALF, _MESH, _OTHER = range(6)
_CORE_KINDS = (_HULL, _SPHERE, _CAPSULE)  # (the kinds up to _CAPSULE)


@dataclass(eq=False)
class PersistentManifold:
    """One piece pair's contact, carried across steps.

    Attributes
    ----------
    a, b : Body
    piece_a, piece_b : int
        Indices into ``a.shapes`` and ``b.shapes``.
    manifold : collision.manifold.Manifold
        The latest one (world frame, normal from A to B).
    age : (k,) int64
        Detections each point has survived (1 for a new point; one per step,
        and one more when the world is asked again without stepping).
    impulses : (k, 3) float64
        Normal and two tangent impulses accumulated by the solver, carried to
        the matching new point (zero for a new point).
    cache : collision.narrow_phase.PairCache
        GJK simplex of the last step (pairs outside the batches).
    """

    a: object
    b: object
    piece_a: int
    piece_b: int
    manifold: object
    age: np.ndarray
    impulses: np.ndarray
    cache: PairCache = field(default_factory=PairCache)

    @property
    def touching(self):
        return bool(len(self.manifold.depths)) and float(self.manifold.depths.max()) >= 0.0


@dataclass(frozen=True)
class ContactEvent:
    """A change, or the continuation, of contact between two bodies.

    Attributes
    ----------
    kind : str
        ``"begin"``, ``"persist"`` or ``"end"``.
    a, b : Body
    points : int
        Touching contact points between them this step (0 for ``"end"``).
    """

    kind: str
    a: object
    b: object
    points: int


@njit(cache=True)
def _classify(ra, rb, motion, sleeping, count, old_keys, n, active, kept):
    """Sort the candidate body pairs ``ra, rb`` (k,) in one pass: those that need the narrow phase
    (not both static, both with shapes, not both at rest) go to ``active`` (their indices), and
    ``kept`` (rows of the old store, ``old_keys`` (m, 5)) marks the old rows whose pair is a
    candidate with both bodies at rest (static, or dynamic and asleep): those rows stay as they
    were. ``old_keys`` are in key order, as the store's rows always are. Returns how many pairs are
    active and how many piece pairs they have at most (``count`` pieces per body)."""
    k = ra.shape[0]
    frozen = np.empty(k, np.int64)
    m = f = cap = 0
    for c in range(k):
        a, b = ra[c], rb[c]
        if (motion[a] == STATIC and motion[b] == STATIC) or count[a] <= 0 or count[b] <= 0:
            continue
        rest_a = motion[a] == STATIC or (motion[a] == DYNAMIC and sleeping[a])
        rest_b = motion[b] == STATIC or (motion[b] == DYNAMIC and sleeping[b])
        if rest_a and rest_b:
            frozen[f] = a * n + b
            f += 1
        else:
            active[m] = c
            m += 1
            cap += count[a] * count[b]
    old = np.empty(old_keys.shape[0], np.int64)  # ascending: the store is in key order
    for r in range(old_keys.shape[0]):
        old[r] = old_keys[r, 0] * n + old_keys[r, 1]
    in_sorted(old, np.sort(frozen[:f]), kept)
    return m, cap


# The batch a piece pair goes to (by its shapes' kinds): hull-hull, half-space against a convex
# piece (the half-space A, or B: flipped), sphere against a convex piece (likewise), one by one, a
# convex piece against a triangle mesh (the mesh B, or A: flipped).
_R_HULL, _R_HALF, _R_HALF_FLIP, _R_BALL, _R_BALL_FLIP, _R_ONE, _R_MESH, _R_MESH_FLIP = range(8)
_ROUTES = 8


@njit
def _route_of(ka, kb):
    core_a, core_b = ka <= _CAPSULE, kb <= _CAPSULE  # a hull, sphere or capsule: _CORE_KINDS
    if ka == _HULL and kb == _HULL:
        return _R_HULL
    if ka == _HALF and core_b:
        return _R_HALF
    if core_a and kb == _HALF:
        return _R_HALF_FLIP
    if ka == _SPHERE and core_b:
        return _R_BALL
    if kb == _SPHERE and core_a:
        return _R_BALL_FLIP
    if core_a and kb == _MESH:
        return _R_MESH
    if ka == _MESH and core_b:
        return _R_MESH_FLIP
    return _R_ONE


@njit(borrow=True)
def _piece_boxes(pose, start, center, axes, half, i, out):
    """World AABBs ``out[piece]`` of the pieces of body row ``i``: each piece's local box under the
    body's pose (centre ``R c + t``, half extents ``|R A^T| h``; infinite stays infinite)."""
    for k in range(start[i], start[i + 1]):
        if np.isinf(half[k, 0]):  # a half-space: it may reach anything
            for a in range(3):
                out[k, 0, a], out[k, 1, a] = -np.inf, np.inf
            continue
        box_world_bounds(pose, i, center, axes, half, k, 0.0, out[k, 0], out[k, 1])


@njit(cache=True)
def _route(ra, rb, active, sweep, margin, n, start, kind, center, axes, half, pose, words, margins, ga, gb, route,
           order, bounds):
    """Mid phase of the active body pairs ``ra[active], rb[active]``, in key order: the piece pairs
    whose world AABBs, grown by the pair's margin ``margin + sweep[a] + sweep[b]``, overlap (of two
    single-piece bodies: their one piece pair). Each is written as a store row ``words[i]`` (its
    key, no points yet), with its margin, global piece indices ``ga, gb`` and batch ``route``;
    ``order[bounds[r]:bounds[r + 1]]`` lists the rows of route ``r`` in key order. Returns how
    many piece pairs."""
    m = active.shape[0]
    codes = np.empty(m, np.int64)
    for i in range(m):
        codes[i] = ra[active[i]] * n + rb[active[i]]
    boxes = np.empty((0, 2, 3))
    boxed = np.zeros(0, np.bool_)
    k = 0
    for o in np.argsort(codes, kind="mergesort"):
        a, b = ra[active[o]], rb[active[o]]
        mg = margin + (sweep[a] + sweep[b])
        multi = start[a + 1] - start[a] != 1 or start[b + 1] - start[b] != 1
        if multi and boxed.shape[0] == 0:
            boxes = np.empty((kind.shape[0], 2, 3))
            boxed = np.zeros(n, np.bool_)
        if multi:
            for r in (a, b):
                if not boxed[r]:
                    _piece_boxes(pose, start, center, axes, half, r, boxes)
                    boxed[r] = True
        for p in range(start[a], start[a + 1]):
            for q in range(start[b], start[b + 1]):
                if multi:
                    hit = True
                    for j in range(3):
                        if boxes[p, 0, j] - mg > boxes[q, 1, j] or boxes[q, 0, j] > boxes[p, 1, j] + mg:
                            hit = False
                            break
                    if not hit:
                        continue
                words[k, 0], words[k, 1], words[k, 2], words[k, 3], words[k, 4] = a, b, p - start[a], q - start[b], 0
                words[k, _W_COUNT] = 0  # (no points until a batch writes them)
                margins[k], ga[k], gb[k] = mg, p, q
                route[k] = _route_of(kind[p], kind[q])
                k += 1
    bounds[:] = 0
    for i in range(k):
        bounds[route[i] + 1] += 1
    for r in range(_ROUTES):
        bounds[r + 1] += bounds[r]
    fill = bounds[:_ROUTES].copy()
    for i in range(k):
        order[fill[route[i]]] = i
        fill[route[i]] += 1
    return k


@njit(cache=True)
def _separated_rows(words, k):
    """``(s, 8)`` int64: key (5 words) and SAT cache (3) of each row of ``words[:k]`` without points
    whose cache names a feature (a hull pair that was apart), in the rows' (key) order."""
    s = 0
    for i in range(k):
        if words[i, _W_COUNT] == 0 and words[i, _W_SAT] >= 0:
            s += 1
    out = np.empty((s, 8), np.int64)
    s = 0
    for i in range(k):
        if words[i, _W_COUNT] == 0 and words[i, _W_SAT] >= 0:
            for c in range(5):
                out[s, c] = words[i, c]
            for c in range(3):
                out[s, 5 + c] = words[i, _W_SAT + c]
            s += 1
    return out


@njit(cache=True)
def _hull_inputs(rows, words, ga, gb, hull, pose, margins, old, apart, ia, pa, ib, pb, mg, caches):
    """The hull batch's arguments for the piece pairs ``rows`` (in key order), written to the first
    ``len(rows)`` rows of ``ia, pa, ib, pb, mg, caches``: hull ids and poses of each side, margins,
    and the SAT cache of last step for the same key: that of the old store row (``old``, pairs with
    points), else that of the pair that was apart (``apart``, keys and caches of
    :func:`_separated_rows`); both walked in key order, -1: none."""
    k = rows.shape[0]
    caches[:k] = -1
    j = s = 0
    for t in range(k):
        i = rows[t]
        ia[t], ib[t] = hull[ga[i]], hull[gb[i]]
        pa[t] = pose[words[i, 0]]
        pb[t] = pose[words[i, 1]]
        mg[t] = margins[i]
        while j < old.shape[0] and key_compare(old, j, words, i) < 0:
            j += 1
        if j < old.shape[0] and key_compare(old, j, words, i) == 0:
            for c in range(3):
                caches[t, c] = old[j, _W_SAT + c]
            continue
        while s < apart.shape[0] and key_compare(apart, s, words, i) < 0:
            s += 1
        if s < apart.shape[0] and key_compare(apart, s, words, i) == 0:
            for c in range(3):
                caches[t, c] = apart[s, 5 + c]


@njit(cache=True)
def _halfspace_inputs(rows, flip, words, ga, gb, core, plane, pose, margins):
    """The half-space batch's arguments for the piece pairs ``rows``: the convex side's core id and
    pose, the plane in the world (normal ``R n``, offset ``d + R n . t``) and the margins; the
    half-space is A, or B when ``flip``."""
    k = rows.shape[0]
    cids = np.empty(k, np.int64)
    poses = np.empty((k, 4, 4))
    normals = np.empty((k, 3))
    offsets, mg = np.empty(k), np.empty(k)
    for t in range(k):
        i = rows[t]
        h, c = (words[i, 1], words[i, 0]) if flip else (words[i, 0], words[i, 1])
        hp, cp = (gb[i], ga[i]) if flip else (ga[i], gb[i])
        cids[t] = core[cp]
        poses[t] = pose[c]
        for r in range(3):
            normals[t, r] = pose[h, r, 0] * plane[hp, 0] + pose[h, r, 1] * plane[hp, 1] + pose[h, r, 2] * plane[hp, 2]
        offsets[t] = plane[hp, 3] + (normals[t, 0] * pose[h, 0, 3] + normals[t, 1] * pose[h, 1, 3]
                                     + normals[t, 2] * pose[h, 2, 3])
        mg[t] = margins[i]
    return cids, poses, normals, offsets, mg


_FACE_A_KIND = KIND_NAMES.index("face_a")


@njit(cache=True)
def _halfspace_route(rows, flip, words, ga, gb, core, plane, pose, margins, points, starts, radius, reals):
    """The half-space batch of the piece pairs ``rows`` in one call: :func:`_halfspace_inputs`,
    the batch's kernel (:func:`collision.halfspace_batch._halfspace_kernel`, on outputs made as
    :meth:`collision.hull_batch.ManifoldBatch.empty` makes them) and the rows' packing into the
    store (``words``, ``reals``; :func:`app.world.contact_store.pack_rows` without SAT caches or
    keys): what :meth:`ContactManager._narrow` did in five calls from Python. ``points``,
    ``starts``, ``radius``: the core table's. Returns the row of ``rows`` whose pose the kernel
    rejected, else -1."""
    cids, poses, normals, offsets, mg = _halfspace_inputs(rows, flip, words, ga, gb, core, plane, pose, margins)
    k = rows.shape[0]
    count, normal = np.zeros(k, np.int64), np.zeros((k, 3))
    points_a, points_b, depths = np.zeros((k, 4, 3)), np.zeros((k, 4, 3)), np.zeros((k, 4))
    ids, kind = np.zeros((k, 4), np.int64), np.full(k, _FACE_A_KIND, np.int64)
    tests, sat_depth = np.zeros(k, np.int64), np.zeros(k)
    bad = _halfspace_kernel(points, starts, radius, cids, poses, normals, offsets, mg, count, normal, points_a,
                            points_b, depths, ids, kind, sat_depth)
    if bad >= 0:
        return bad
    _pack_kernel(rows, np.zeros((0, 5), np.int64), count, normal, kind, tests, sat_depth, np.full((0, 3), -1, np.int64),
                 points_a, points_b, depths, ids, flip, words, reals)
    return -1


# The hull table's columns a piece's ranges read in the mesh batch (its face normals, loop starts and
# loop vertices), as collide_convex_trimesh_pairs reads them.
_MESH_COLS = np.array([_HULL_COL[name] for name in ("normals", "face_start", "face_verts")], np.int64)


@njit(cache=True)
def _mesh_route(rows, flip, words, ga, gb, core, hull, center, axes, half, pose, margins, core_points, core_starts,
                core_radius, normals, face_start, face_verts, hull_starts, cols, nodes, links, triangles, tri_index,
                vertices, faces, mesh_pose, fat_key, fat_box, fat_count, fat_slots):
    """The convex pieces of the piece pairs ``rows`` (in key order) against one triangle mesh, in one
    call: the arguments :meth:`ContactManager._mesh_pairs` gathers for
    :func:`collision.convex_mesh.collide_convex_trimesh_pairs` (core and hull ranges, radii, local
    boxes, poses, margins), its kernel, and the rows packed as store rows (the key's fifth word the
    group's smallest face), in key order. The mesh is B of every pair, or A when ``flip``; its tree
    arrays and pose follow. Each piece finds its triangles through its row (its global piece index)
    of the candidate cache ``fat_key ... fat_slots``
    (:func:`collision.tree_box_query.near_box_faces_cached`, the mesh's key its global piece index):
    the same triangles as the tree walk. Returns the rows, ``(r, w)`` int64 words."""
    k = rows.shape[0]
    ranges = np.zeros((k, 8), np.int64)
    radius, poses, mg = np.empty(k), np.empty((k, 4, 4)), np.empty(k)
    fat_rows = np.empty(k, np.int64)
    box_c, box_axes, box_half = np.empty((k, 3)), np.empty((k, 3, 3)), np.empty((k, 3))
    for t in range(k):
        i = rows[t]
        p = gb[i] if flip else ga[i]
        c = core[p]
        ranges[t, 0], ranges[t, 1] = core_starts[c], core_starts[c + 1]
        h = hull[p]
        if h >= 0:
            for f in range(3):
                ranges[t, 2 + 2 * f], ranges[t, 3 + 2 * f] = hull_starts[h, cols[f]], hull_starts[h + 1, cols[f]]
        radius[t] = core_radius[c]
        box_c[t], box_axes[t], box_half[t] = center[p], axes[p], half[p]
        poses[t] = pose[words[i, 1] if flip else words[i, 0]]
        mg[t] = margins[i]
        fat_rows[t] = p
    mesh_key = ga[rows[0]] if flip else gb[rows[0]]
    pair, key, count, normal, pa, pb, depths, ids, kind, tests, sat_depth = _convex_trimesh_pairs_kernel(
        core_points, normals, face_start, face_verts, ranges, radius, box_c, box_axes, box_half, poses, mg, nodes,
        links, triangles, tri_index, vertices, faces, mesh_pose, fat_rows, mesh_key, fat_key, fat_box, fat_count,
        fat_slots)
    m = pair.shape[0]
    order = np.arange(m)  # a piece's rows are consecutive: sort each run by its key (insertion: runs are short)
    for r in range(1, m):
        x = order[r]
        s = r
        while s > 0 and pair[order[s - 1]] == pair[x] and key[order[s - 1]] > key[x]:
            order[s] = order[s - 1]
            s -= 1
        order[s] = x
    dest = np.empty(m, np.int64)
    keys = np.empty((m, 5), np.int64)
    for r in range(m):
        dest[order[r]] = r
        for c in range(4):
            keys[r, c] = words[rows[pair[r]], c]
        keys[r, 4] = key[r]
    out = np.zeros((m, _WORDS), np.int64)
    _pack_kernel(dest, keys, count, normal, kind, tests, sat_depth, np.full((0, 3), -1, np.int64), pa, pb, depths,
                 ids, flip, out, out.view(np.float64))
    return out


@njit(cache=True)
def _detect_begin(pairs, motion, sleeping, shape_count, old_words, n, sweep, margin, start, kind, center, axes, half,
                  pose, hull, core, plane, core_points, core_starts, core_radius, apart, hull_inputs, active, kept,
                  words, margins, ga, gb, route, order, bounds, ia, pa, ib, pb, mg, caches):
    """The detection of a step up to the hull batch, in one call (what :meth:`ContactManager.update`
    composes from :func:`_classify`, :func:`_route`, :func:`_halfspace_route` and
    :func:`_hull_inputs`, the same kernels in the same order), into scratch arrays the caller keeps
    from step to step (:class:`_Scratch`).

    Parameters
    ----------
    pairs : (c, 2) int64
        The candidate body pairs (i < j).
    old_words : (m, w) int64
        Last step's store rows as words.
    apart : (s, 8) int64
        Last step's hull piece pairs that were apart (:func:`_separated_rows`).
    hull_inputs : bool
        Gather the hull batch's arguments (False: the hull pairs go one by one).
    active : (>= c,) int64; kept : (>= m,) bool
        Scratch for :func:`_classify`: ``kept[:m]`` marks the old rows that stay as they are.
    words : (cap, w) int64; margins : (cap,) float64; ga, gb, route, order : (cap,) int64
        The piece pairs' rows and :func:`_route`'s outputs; ``bounds`` (routes + 1,) int64.
    ia, pa, ib, pb, mg, caches : (cap, ...)
        The hull batch's arguments (:func:`_hull_inputs`), its pairs' in the first rows.
    The others as :func:`_classify`, :func:`_route` and :func:`_halfspace_route` take them.

    Returns
    -------
    need : int
        0, or the piece pairs' count when it is more than ``cap`` (then nothing past
        :func:`_classify` ran: call again with larger scratch).
    m : int
        Active body pairs.
    k : int
        Piece pairs, rows ``words[:k]`` in key order (keys and, for the half-space pairs, manifolds
        written).
    bad, bad_route : int
        The row in its half-space batch of the first pose that batch rejected and its route, or -1.
    """
    ra, rb = np.ascontiguousarray(pairs[:, 0]), np.ascontiguousarray(pairs[:, 1])
    m, cap = _classify(ra, rb, motion, sleeping, shape_count, old_words[:, :5], n, active, kept[:old_words.shape[0]])
    if cap > words.shape[0]:
        return cap, m, 0, -1, -1
    bounds[:] = 0
    k = 0
    if m:
        k = _route(ra, rb, active[:m], sweep, margin, n, start, kind, center, axes, half, pose, words, margins, ga,
                   gb, route, order, bounds)
    reals = words.view(np.float64)
    bad, bad_route = -1, -1
    for r in (_R_HALF, _R_HALF_FLIP):
        rows = order[bounds[r]:bounds[r + 1]]
        if rows.shape[0] and bad < 0:
            bad = _halfspace_route(rows, r == _R_HALF_FLIP, words, ga, gb, core, plane, pose, margins, core_points,
                                   core_starts, core_radius, reals)
            bad_route = r if bad >= 0 else -1
    if hull_inputs:
        _hull_inputs(order[bounds[_R_HULL]:bounds[_R_HULL + 1]], words, ga, gb, hull, pose, margins, old_words, apart,
                     ia, pa, ib, pb, mg, caches)
    return 0, m, k, bad, bad_route


class _Scratch:
    """The arrays :func:`_detect_begin` fills, kept from step to step and grown when a step needs more
    (numba hands each array it returns back through Python's objects, which costs more than the
    arrays' work in a small scene)."""

    def __init__(self, pairs=64, rows=64, pieces=64):
        self.pairs, self.rows, self.pieces = pairs, rows, pieces
        c = pieces
        self.arrays = (np.empty(pairs, np.int64), np.empty(rows, np.bool_), np.empty((c, _WORDS), np.int64),
                       np.empty(c), np.empty(c, np.int64), np.empty(c, np.int64), np.empty(c, np.int64),
                       np.empty(c, np.int64), np.zeros(_ROUTES + 1, np.int64), np.empty(c, np.int64),
                       np.empty((c, 4, 4)), np.empty(c, np.int64), np.empty((c, 4, 4)), np.empty(c),
                       np.empty((c, 3), np.int64))
        (self.active, self.kept, self.words, self.margins, self.ga, self.gb, self.route, self.order, self.bounds,
         self.ia, self.pa, self.ib, self.pb, self.mg, self.caches) = self.arrays
        self.batch = ManifoldBatch.empty(c)  # the hull batch's outputs (collide_hull_pairs(out=...))
        # Every page written now: the memory of a large array comes from the system untouched, and its
        # first write costs a page fault a page (~2 us a 4 kB page measured here, 0.5 ms a megabyte),
        # which would otherwise fall on the steps where a pile lands.
        for a in self.arrays + tuple(getattr(self.batch, f.name) for f in fields(self.batch)):
            a.fill(0)

    def fits(self, pairs, rows):
        """Whether this scratch holds ``pairs`` candidate pairs and ``rows`` old store rows (the piece
        pairs' room is checked by :func:`_detect_begin`)."""
        return pairs <= self.pairs and rows <= self.rows

    def grown(self, pairs, rows, pieces=0):
        """Scratch for at least these counts (twice what is asked, at least what this one holds)."""
        return _Scratch(max(self.pairs, 2 * pairs), max(self.rows, 2 * rows), max(self.pieces, 2 * pieces))

    def for_scene(self, bodies, pieces):
        """This scratch, or a larger one with room for what a settled pile of ``bodies`` bodies of
        ``pieces`` pieces in all usually needs (:data:`SCENE_PAIRS` candidate pairs a body,
        :data:`SCENE_PIECE_PAIRS` piece pairs and store rows a piece), up to :data:`SCENE_SCRATCH` bytes.
        Sized when the bodies change, so that the steps where a falling pile lands do not grow it one
        doubling at a time: each growth threw away a pass of :func:`_detect_begin` and allocated
        the arrays anew (measured on 100 U shapes landing: two steps of ~0.15 ms more each)."""
        per = max(1, min(SCENE_PIECE_PAIRS * pieces, SCENE_SCRATCH // _SCRATCH_ROW_BYTES))
        pairs = max(1, min(SCENE_PAIRS * bodies, SCENE_SCRATCH // 8))
        if pairs <= self.pairs and per <= self.rows and per <= self.pieces:
            return self
        return _Scratch(max(self.pairs, pairs), max(self.rows, per), max(self.pieces, per))


# Scene-sized scratch (_Scratch.for_scene): a body of a settled pile has a few neighbours and the
# ground (100 boxes in columns: 1 candidate pair a body; 100 U shapes of 3 pieces: 2.5 piece pairs
# a piece), and a piece pair's arrays take ~1.2 kB, so the cap keeps a big scene's scratch at what
# a few thousand pieces need; beyond it the scratch grows as a step asks.
SCENE_PAIRS = 4
SCENE_PIECE_PAIRS = 4
SCENE_SCRATCH = 8 << 20
_SCRATCH_ROW_BYTES = 1200


@njit(cache=True)
def _detect_end(words, k, hull_rows, count, normal, points_a, points_b, depths, ids, kind, tests, sat_depth, caches,
                old_words, old_frozen, kept, extra_words, tol2, may_update, n, prev):
    """The detection of a step after the batches, in one call (what :meth:`ContactManager.update`
    composes from :func:`app.world.contact_store.pack_rows` for the hull batch,
    :func:`_separated_rows`, :func:`app.world.contact_store.next_store` and
    :func:`app.world.contact_store.touch_events`, the same kernels in the same order).

    Parameters
    ----------
    words : (cap, w) int64
        The piece pairs' rows of :func:`_detect_begin`, ``words[:k]`` in use.
    hull_rows : (h,) int64
        The rows of the hull batch's pairs; ``count`` ... ``sat_depth`` its outputs
        (:class:`collision.hull_batch.ManifoldBatch`, rows ``[0, h)`` read), ``caches`` (>= h, 3) its SAT caches.
    old_words : (m, w) int64; old_frozen : (m,) bool
        Last step's store (its frozen flags are written when its rows stay).
    kept : (>= m,) bool
        ``kept[:m]``: the old rows that stay as they are (:func:`_classify`).
    extra_words : (x, w) int64
        The rows of the pairs done one by one, in key order.
    tol2 : float
        The squared distance for matching points (:func:`app.world.contact_store.next_store`).
    may_update : bool
        The old rows may be updated where they are.
    n : int
        Body rows; ``prev`` the last step's touching body pairs as codes ``a n + b`` (ascending).

    Returns
    -------
    rows : int
        The new store's rows, ``out[:rows]``; -1 when the old store was updated in place (or all its rows
        stay).
    out : (r, w) int64
    apart : (s, 8) int64
        :func:`_separated_rows` of the piece pairs.
    codes, points, was, stays
        As :func:`app.world.contact_store.touch_events` gives them.
    total : int
        Contact points in the new store.
    """
    kept = kept[:old_words.shape[0]]
    reals = words.view(np.float64)
    h = hull_rows.shape[0]
    if h:  # (the batch's arrays may hold more rows than this step's pairs: its first h)
        _pack_kernel(hull_rows, np.zeros((0, 5), np.int64), count[:h], normal[:h], kind[:h], tests[:h], sat_depth[:h],
                     caches[:h], points_a[:h], points_b[:h], depths[:h], ids[:h], False, words, reals)
    apart = _separated_rows(words, k)
    fw, fr = words[:k], reals[:k]
    old_reals = old_words.view(np.float64)
    extra_reals = extra_words.view(np.float64)
    nk = 0
    for r in range(kept.shape[0]):
        nk += kept[r]
    if k == 0 and extra_words.shape[0] == 0 and nk == kept.shape[0]:  # all at rest: nothing to join
        old_frozen[:] = True
        rows = -1
        out = old_words[:0]
    else:
        out = np.empty((nk + k + extra_words.shape[0], _WORDS), np.int64)
        out_frozen = out.view(np.bool_)[:, _FROZEN_BYTE]
        rows = _next_store_kernel(old_words, old_reals, kept, old_frozen, fw, fr, extra_words, extra_reals, tol2,
                                  may_update, out, out.view(np.float64), out_frozen)
    new = old_words if rows < 0 else out[:rows]
    new_reals = new.view(np.float64)
    m0 = new.shape[0]
    codes, points, was = np.empty(m0, np.int64), np.empty(m0, np.int64), np.empty(m0, np.bool_)
    stays = np.empty(prev.shape[0], np.bool_)
    t = _touch_events_kernel(new[:, :5], new[:, _W_COUNT], new_reals[:, _W_DEPTHS:_W_DEPTHS + 4], n, prev, codes,
                             points, was, stays)
    total = 0
    for r in range(m0):
        total += new[r, _W_COUNT]
    return rows, out, apart, codes[:t], points[:t], was[:t], stays, total


@njit(cache=True)
def _detect_whole(pairs, motion, sleeping, shape_count, old_words, n, sweep, margin, start, kind, center, axes, half,
                  pose, hull, core, plane, core_points, core_starts, core_radius, apart, hull_inputs, active, kept,
                  words, margins, ga, gb, route, order, bounds, ia, pa, ib, pb, mg, caches,
                  V, N, D, FS, FV, EV, EF, VFS, VF, AC, AO, GC, GS, starts, scale, boxes, box_f, box_i,
                  count, normal, points_a, points_b, depths, ids, kinds, tests, sat_depth, cache_first, serial_below,
                  gone, old_frozen, tol2, may_update, prev):
    """The whole detection of a step in one call, when it needs no Python between the stages:
    :func:`_detect_begin`, the hull batch on one thread (``collision.hull_batch``'s serial driver,
    the table's arrays ``V`` ... ``box_i`` and the batch's outputs ``count`` ... ``sat_depth``), then
    :func:`_detect_end`: the same kernels in the same order as :meth:`ContactManager._update_fused`
    calls them one by one.

    It stops after :func:`_detect_begin` (``done`` False) when the caller has more to do there: more
    scratch needed, a rejected pose, every pair at rest (``gone``: touching pairs ended by a change of
    the body list), piece pairs outside the hull and half-space batches (or hull pairs when
    ``hull_inputs`` is off), a hull batch of ``serial_below`` pairs or more (the threads may take it),
    or a pose the batch rejects (the caller's batch call then raises).

    Returns
    -------
    (need, m, k, bad, bad_route, done, rows, out, apart, codes, points, was, stays, total)
        :func:`_detect_begin`'s results, whether the detection is done, then :func:`_detect_end`'s
        (empty when not done).
    """
    need, m, k, bad, bad_route = _detect_begin(
        pairs, motion, sleeping, shape_count, old_words, n, sweep, margin, start, kind, center, axes, half, pose, hull,
        core, plane, core_points, core_starts, core_radius, apart, hull_inputs, active, kept, words, margins, ga, gb,
        route, order, bounds, ia, pa, ib, pb, mg, caches)
    h = bounds[_R_HULL + 1] - bounds[_R_HULL]
    stop = (need != 0 or bad >= 0 or bounds[_ROUTES] > bounds[_R_BALL] or (h > 0 and not hull_inputs)
            or h >= serial_below)
    if not stop and m == 0 and not gone:
        stop = True  # (all at rest when every old row is kept: the caller keeps the store)
        for r in range(old_words.shape[0]):
            if not kept[r]:
                stop = False
                break
    if not stop and h:
        row, st = _hull_batch._collide_pairs_serial(
            V, N, D, FS, FV, EV, EF, VFS, VF, AC, AO, GC, GS, starts, scale, boxes, box_f, box_i, ia[:h], pa[:h],
            ib[:h], pb[:h], mg[:h], caches[:h], count[:h], normal[:h], points_a[:h], points_b[:h], depths[:h],
            ids[:h], kinds[:h], tests[:h], sat_depth[:h], cache_first, 1)
        stop = st != 0
    if stop:
        none = np.zeros(0, np.int64)
        return (need, m, k, bad, bad_route, False, -1, old_words[:0], np.zeros((0, 8), np.int64), none, none,
                np.zeros(0, np.bool_), np.zeros(0, np.bool_), 0)
    rows, out, apart, codes, points, was, stays, total = _detect_end(
        words, k, order[bounds[_R_HULL]:bounds[_R_HULL + 1]], count, normal, points_a, points_b, depths, ids, kinds,
        tests, sat_depth, caches, old_words, old_frozen, kept, np.zeros((0, _WORDS), np.int64), tol2, may_update, n,
        prev)
    return need, m, k, bad, bad_route, True, rows, out, apart, codes, points, was, stays, total


@njit(cache=True)
def _sphere_inputs(rows, flip, words, ga, gb, kind, core, pose, margins):
    """The sphere batch's arguments for the piece pairs ``rows``: core id and pose of the sphere and
    of the other shape, whether that is a hull, and the margins; the sphere is A, or B when ``flip``."""
    k = rows.shape[0]
    sid, oid = np.empty(k, np.int64), np.empty(k, np.int64)
    ps, po = np.empty((k, 4, 4)), np.empty((k, 4, 4))
    hull = np.empty(k, np.bool_)
    mg = np.empty(k)
    for t in range(k):
        i = rows[t]
        s, o = (words[i, 1], words[i, 0]) if flip else (words[i, 0], words[i, 1])
        sp, op = (gb[i], ga[i]) if flip else (ga[i], gb[i])
        sid[t], oid[t] = core[sp], core[op]
        ps[t] = pose[s]
        po[t] = pose[o]
        hull[t] = kind[op] == _HULL
        mg[t] = margins[i]
    return sid, ps, oid, po, hull, mg


def _content_key(shape, kind):
    """A key equal for shapes of equal geometry (hulls: every array of the polyhedron; spheres and
    capsules: type, core points, radius), or None (half-spaces, meshes: kept per object)."""
    if kind == _HULL:
        p = shape.poly
        return ("hull", p.vertices.tobytes(), p.triangles.tobytes(), p.normals.tobytes(), p.offsets.tobytes(),
                p.edges.tobytes(), tuple(np.asarray(f).tobytes() for f in p.polygons))
    if kind in _CORE_KINDS:
        return (type(shape).__name__, np.asarray(shape.core).tobytes(), float(shape.radius))
    return None


def _shape_kind(shape):
    if isinstance(shape, Hull):
        return _HULL
    if isinstance(shape, Sphere):
        return _SPHERE
    if isinstance(shape, Capsule):
        return _CAPSULE
    if isinstance(shape, HalfSpace):
        return _HALF
    if isinstance(shape, TriMesh):
        return _MESH
    return _OTHER


class ContactManager:
    """Runs the mid and narrow phases on the broad phase's body pairs and keeps
    the manifolds and the touching pairs from step to step.

    Parameters
    ----------
    margin : float
        Speculative contact distance: points whose gap is at most this are kept.
    match_tol : float
        A new point without a matching feature id continues the nearest old
        point within this distance (default 5 margins: when two equal faces
        rest on each other the reduction may keep other corners of the same
        patch from step to step, and a point that starts from zero impulse
        loses the warm start that keeps a stack still).
    """

    def __init__(self, margin=0.01, match_tol=None):
        self.margin = float(margin)
        self.match_tol = float(match_tol) if match_tol is not None else 5.0 * self.margin
        self.hull_response = "sat"  # "gjk": hull pairs get one-point GJK / EPA manifolds (app.world.narrow_compare)
        self._hulls = HullTable()  # every hull seen, packed for the batched kernel
        self._cores = CoreTable()  # every sphere, capsule and hull core, for the half-space kernel
        self._shape_ids = {}  # id(shape) -> (shape, kind, hull id, core id, local box or None)
        self._by_content = {}  # geometry key -> (hull id, core id, local box): equal shapes share them
        self._row_info = (None, None)
        self.clear()

    def clear(self):
        self.store = ContactStore()
        self._points = 0  # contact points in the store
        old = getattr(self, "_scratch", None)  # (ContactManager._update_fused; as large as the scene had it)
        self._scratch = _Scratch() if old is None else _Scratch(old.pairs, old.rows, old.pieces)
        self._bodies = []
        self._caches = {}
        self._apart = _NO_APART  # hull piece pairs apart last step: keys and SAT caches (_separated_rows)
        self._touch = (np.zeros(0, np.int64), np.zeros(0, np.int64))  # body pairs as codes a n + b (ascending), points
        # whether each touching pair touched last step, end (a, b) bodies, and the last step's pairs (events)
        self._events = (np.zeros(0, np.bool_), [], _NO_ENDS)
        self._gone = []  # touching pairs whose body left the list (they end at the next update)
        self._views = None
        self._event_list = None
        self.stats = {"piece_pairs": 0, "manifolds": 0, "points": 0}

    # -- the objects, built when asked for ---------------------------------------------

    @property
    def manifolds(self):
        """``{key: PersistentManifold}``; key ``(a, b, piece_a, piece_b)`` (bodies), with a fifth
        item, the triangle group, for a piece against a mesh."""
        if self._views is None:
            st, bodies = self.store, self._bodies
            views = {}
            for m in range(len(st)):
                ra, rb, p, q, sub = (int(x) for x in st.keys[m])
                a, b = bodies[ra], bodies[rb]
                c = int(st.count[m])
                meshy = isinstance(a.shapes[p], TriMesh) or isinstance(b.shapes[q], TriMesh)
                key = (a, b, p, q, sub) if meshy else (a, b, p, q)
                man = Manifold(st.normal[m], st.points_a[m, :c], st.points_b[m, :c], st.depths[m, :c],
                               st.ids[m, :c], _KIND_NAMES[int(st.kind[m])], int(st.tests[m]),
                               float(st.sat_depth[m]))
                cache = self._caches.get((ra, rb, p, q)) or PairCache()
                views[key] = PersistentManifold(a, b, p, q, man, st.age[m, :c], st.impulse[m, :c], cache)
            self._views = views
        return self._views

    @property
    def touching(self):
        """``{(a, b): points}``: the body pairs touching (a point at zero gap or deeper)."""
        rows, pts = self._touch_rows(), self._touch[1]
        return {(self._bodies[i], self._bodies[j]): int(n) for (i, j), n in zip(rows, pts)}

    def _touch_rows(self):
        """The touching body pairs as (k, 2) body rows."""
        n = max(len(self._bodies), 1)
        codes = self._touch[0]
        return np.stack([codes // n, codes % n], axis=1)

    @property
    def touching_count(self):
        return len(self._touch[1])

    @property
    def events(self):
        """This step's :class:`ContactEvent` list: begins and persists (in key order), then ends."""
        if self._event_list is None:
            was, end, (prev, stays, bodies, n) = self._events
            if len(stays) and not stays.all():  # the pairs touching last step and not now
                gone = prev[stays == 0]  # (bools, or 0 and 1 from the world's one call)
                end = end + [(bodies[c // n], bodies[c % n]) for c in gone.tolist()]
            rows, pts = self._touch_rows(), self._touch[1]
            out = [ContactEvent("persist" if w else "begin", self._bodies[i], self._bodies[j], int(p))
                   for (i, j), w, p in zip(rows.tolist(), was.tolist(), pts.tolist())]
            out += [ContactEvent("end", a, b, 0) for a, b in end]
            self._event_list = out
        return self._event_list

    # -- the step -------------------------------------------------------------------------

    def update(self, bodies, pairs, sweep=None, table=None):
        """Contacts for the candidate body pairs ``pairs`` ((k, 2) or [(i, j), ...], i < j, into ``bodies``).

        Parameters
        ----------
        bodies : list of Body
        pairs : (k, 2) int
        sweep : (n,) float64, optional
            How far each body may move in the coming step; a pair's margin
            grows by both (speculative contacts: the solver stops a fast body
            at the surface instead of letting it pass through).
        table : app.world.body.BodyTable, optional
            The world's packed body state (default: read from ``bodies``).

        This step's events are then in :attr:`events` (built when read).
        """
        if table is None:
            table = _snapshot(bodies)
        self._follow(bodies)
        info = self._rows(bodies, table)  # (packed when the bodies change, not at their first contact: no hitch then)
        pairs = np.asarray(pairs, dtype=np.int64).reshape(-1, 2)
        if sweep is None:
            sweep = np.zeros(len(bodies))
        sweep = np.ascontiguousarray(sweep, dtype=np.float64)
        if self._one_call_narrow:
            self._update_fused(bodies, table, info, pairs, sweep)
        else:
            self._update_composed(bodies, table, info, pairs, sweep)

    def _update_fused(self, bodies, table, info, pairs, sweep):
        """:meth:`update` in one compiled call (:func:`_detect_whole`) when the hull batch runs on one
        thread and every pair goes to the hull or half-space batches, else in two around the batches
        (:func:`_detect_begin`, :func:`_detect_end`): the same kernels as :meth:`_update_composed`, in
        the same order, without the Python between them (the stores, the arguments, the dispatch of
        each call). No call at all when there is no candidate pair and no row to keep."""
        old = self.store
        if not len(pairs) and not len(old) and not self._gone:  # nothing near, nothing kept: no call
            self._caches = {}
            self._at_rest(old)
            return
        sc = self._scratch
        if not sc.fits(len(pairs), len(old)):
            sc = self._scratch = sc.grown(len(pairs), len(old))
        while True:
            found = _detect_whole(pairs, *self._whole_args(len(bodies), table, info, sweep, sc))
            if not found[0]:
                break
            sc = self._scratch = sc.grown(len(pairs), len(old), found[0])
        self._after_whole(bodies, table, info, sc, found)

    def whole_begin(self, bodies, table):
        """For a caller that runs :func:`_detect_whole` inside a compiled call of its own (the world's
        step, :mod:`app.world.world_step`): the store follows ``bodies``, then ``(info, sc)``, the shapes
        of the body rows and the scratch, which :meth:`whole_fixed` and :meth:`whole_done` take; or None
        when :meth:`update` must run instead (the composed path chosen). After the call, hand what it
        returned to :meth:`whole_done`, unless it asked for more scratch (``need``): then call
        :meth:`update`."""
        if not self._one_call_narrow:
            return None
        self._follow(bodies)
        return self._rows(bodies, table), self._scratch

    def whole_fixed(self, info, sc):
        """The arguments of :func:`_detect_whole` that stay from step to step while the shapes ``info``,
        the shape tables and the scratch ``sc`` stay: ``(key, make)``, the objects that own them and a
        function that lists them (``start`` ... ``plane``, the half-space cores, the scratch, the hull
        table, the hull batch's outputs, in :func:`_detect_whole`'s order)."""
        cores, hulls = self._cores.kernel_arrays(), self._hulls._kernel_args()

        def make():
            b = sc.batch
            return (info.start, info.kind, info.center, info.axes, info.half, info.hull, info.core, info.plane,
                    *cores, *sc.arrays, *hulls, b.count, b.normal, b.points_a, b.points_b, b.depths, b.ids, b.kind,
                    b.tests, b.sat_depth)

        return (info, sc, cores, hulls), make

    def whole_key(self):
        """The objects that :meth:`whole_begin` and :meth:`whole_fixed` give a step's caller while none of
        them changes, for the caller to compare by identity: the body list the store follows (a new
        list whenever it changes), the scratch, and the shape tables' arrays."""
        return self._bodies, self._scratch, self._cores.kernel_arrays(), self._hulls._kernel_args()

    def whole_varying(self):
        """The arguments of :func:`_detect_whole` that change from step to step, after ``pairs``,
        ``old_words``, ``n``, ``sweep`` and ``margin`` (:attr:`margin`): ``apart``, ``hull_inputs``,
        ``cache_first``, ``serial_below``, ``gone``, then after ``old_frozen`` (the caller reads it
        from ``old_words``) ``tol2``, ``may_update``, ``prev``."""
        return (self._apart, self.hull_response != "gjk", _hull_batch.CACHE_FIRST,
                _hull_batch.HULL_PAIRS_THREADS.serial_below(), bool(self._gone), self.match_tol ** 2,
                self._views is None, self._touch[0])

    def whole_done(self, bodies, table, begun, found):
        """Keep what :func:`_detect_whole` found (``need`` 0) for the step :meth:`whole_begin` began (which
        gave ``begun``)."""
        self._after_whole(bodies, table, *begun, found)

    def _whole_args(self, n, table, info, sweep, sc):
        """:func:`_detect_whole`'s arguments after ``pairs``."""
        old = self.store
        b = sc.batch
        return (table.motion, table.state.sleeping, table.shape_count, old.words, n, sweep, self.margin,
                info.start, info.kind, info.center, info.axes, info.half, table.state.pose, info.hull, info.core,
                info.plane, *self._cores.kernel_arrays(), self._apart, self.hull_response != "gjk", *sc.arrays,
                *self._hulls._kernel_args(), b.count, b.normal, b.points_a, b.points_b, b.depths, b.ids, b.kind,
                b.tests, b.sat_depth, _hull_batch.CACHE_FIRST, _hull_batch.HULL_PAIRS_THREADS.serial_below(),
                bool(self._gone), old.frozen, self.match_tol ** 2, self._views is None, self._touch[0])

    def _after_whole(self, bodies, table, info, sc, found):
        """The rest of :meth:`_update_fused` after :func:`_detect_whole` returned ``found`` (``need`` 0):
        keep its results when it did the whole detection, else the batches and the rarer routes
        from Python, then :func:`_detect_end`."""
        n = len(bodies)
        old = self.store
        pose = table.state.pose
        gjk = self.hull_response == "gjk"
        (need, m, k, bad, bad_route, done, rows, out, apart, codes, points, was, stays, total) = found
        if done:  # (the batch ran on one thread, as the thread choice would have run it)
            h = int(sc.bounds[_R_HULL + 1] - sc.bounds[_R_HULL])
            if h:
                _hull_batch.HULL_PAIRS_THREADS.record(h, 1, 0.0)
            self._caches = {}
            self._detected(old, n, k, rows, out, apart, codes, points, was, stays, total)
            return
        words, order, bounds = sc.words, sc.order, sc.bounds
        if bad >= 0:  # (as collide_halfspace_pairs words it)
            flip = bad_route == _R_HALF_FLIP
            p = pose[words[order[bounds[bad_route] + bad], 0 if flip else 1]]
            raise ValueError(f"poses[{bad}]: {POSE_ERRORS[check_pose_kernel(p)]}")
        old_caches, self._caches = self._caches, {}  # the one-by-one pairs' GJK / SAT caches, by key
        if not m and not self._gone and sc.kept[:len(old)].all():  # all at rest: the rows and events stay
            self._at_rest(old)
            return
        batch, hull_rows, extra = _NO_BATCH, order[:0], _NO_STORE
        hulls = order[bounds[_R_HULL]:bounds[_R_HULL + 1]]
        h = len(hulls)
        if h and not gjk:
            batch = collide_hull_pairs(self._hulls, sc.ia[:h], sc.pa[:h], sc.ib[:h], sc.pb[:h], sc.mg[:h],
                                       sc.caches[:h], check=False, out=sc.batch)
            hull_rows = hulls
        if bounds[_ROUTES] > bounds[_R_BALL] or (h and gjk):  # the rarer routes
            extra = self._rarer(bodies, table, info, words, sc.margins, sc.ga, sc.gb, order, bounds, old_caches, gjk)
        rows, out, apart, codes, points, was, stays, total = _detect_end(
            words, k, hull_rows, batch.count, batch.normal, batch.points_a, batch.points_b, batch.depths, batch.ids,
            batch.kind, batch.tests, batch.sat_depth, sc.caches, old.words, old.frozen, sc.kept, extra.words,
            self.match_tol ** 2, self._views is None, n, self._touch[0])
        self._detected(old, n, k, rows, out, apart, codes, points, was, stays, total)

    def _at_rest(self, old):
        """No body pair active: the rows (frozen) and the touching pairs stay, every one persists."""
        if len(old):  # (a store of no rows has no flags to set; reading its column would make its records)
            old.frozen[:] = True
        self._apart = _NO_APART
        self._views = None
        self.stats = {"piece_pairs": 0, "manifolds": len(old), "points": self._points}
        self._all_persist()

    def _detected(self, old, n, k, rows, out, apart, codes, points, was, stays, total):
        """Keep what :func:`_detect_end` found: the new store (or ``old``, updated in place), the pairs
        apart, the touching pairs and this step's events."""
        self._apart = apart if k else _NO_APART
        new = old if rows < 0 else ContactStore.of_words(out[:rows])
        self.store = new
        self._views = None
        self._points = total
        self.stats = {"piece_pairs": k, "manifolds": len(new), "points": total}
        ends = self._gone
        self._gone = []
        self._events = (was, ends, (self._touch[0], stays, self._bodies, max(n, 1)))  # (ends found when read)
        self._touch = (codes, points)
        self._event_list = None

    def _rarer(self, bodies, table, info, words, margins, ga, gb, order, bounds, old_caches, gjk):
        """The piece pairs outside the hull and half-space batches (:meth:`_update_fused`): spheres in
        their batch, written into ``words``; the others one by one, returned as a store in key order
        (the hull pairs too when ``gjk``)."""
        fresh = ContactStore.of_words(words)
        pose = table.state.pose
        extra = _NO_STORE
        for r in (_R_HULL, _R_BALL, _R_BALL_FLIP, _R_ONE, _R_MESH, _R_MESH_FLIP):
            rows = order[bounds[r]:bounds[r + 1]]
            if not len(rows) or (r == _R_HULL and not gjk):
                continue
            if r in (_R_BALL, _R_BALL_FLIP):
                self._sphere_batch(rows, r == _R_BALL_FLIP, words, ga, gb, info, pose, margins, fresh)
                continue
            if r in (_R_MESH, _R_MESH_FLIP):
                one = self._mesh_batch(info, words, ga, gb, pose, margins, rows, r == _R_MESH_FLIP)
            else:
                one = self._one_by_one(bodies, table, info, words, margins, rows, old_caches, self._caches,
                                       collide_hull_hull_gjk if r == _R_HULL else collide_shapes)
            extra = one if not len(extra) else sort_store(ContactStore(data=np.concatenate([extra.data, one.data])))
        return extra

    def _mesh_batch(self, info, words, ga, gb, pose, margins, rows, flip):
        """The piece pairs ``rows`` of convex pieces against triangle meshes (the mesh B, or A when
        ``flip``), one :func:`_mesh_route` call per mesh; a store of their rows in key order (what
        :meth:`_mesh_pairs` gives for them, without the Python around each call). Each piece keeps
        its candidate triangles from step to step in ``info.fat`` (made again with the rows when the
        bodies change)."""
        mesh_piece = (ga if flip else gb)[rows]
        if (mesh_piece == mesh_piece[0]).all():  # (one mesh: the usual case)
            groups = [rows]
        else:
            groups = [rows[mesh_piece == g] for g in np.unique(mesh_piece)]
        cores, hulls = self._cores, self._hulls
        hull_arrays = (hulls.array("normals"), hulls.array("face_start"), hulls.array("face_verts"), hulls.starts)
        fat = getattr(info, "fat", None)
        if fat is None:  # (the pieces' candidate cache: made with the rows, at the first mesh pair)
            n = len(info.kind)
            fat = info.fat = (np.full(n, -1, np.int64), np.zeros((n, 2, 3)), np.zeros(n, np.int64),
                              np.zeros((n, FAT_CAP), np.int64))
        parts = []
        for sel in groups:
            tree = info.shapes[(ga if flip else gb)[sel[0]]].tree
            mesh_pose = pose[words[sel[0], 0 if flip else 1]]
            out = _mesh_route(sel, flip, words, ga, gb, info.core, info.hull, info.center, info.axes, info.half, pose,
                              margins, *cores.kernel_arrays(), *hull_arrays, _MESH_COLS, tree.nodes,
                              tree.links, tree.triangles, tree.tri_index, tree.vertices, tree.faces, mesh_pose, *fat)
            if len(out):
                parts.append(out)
        if not parts:
            return _NO_STORE
        if len(parts) == 1:
            return ContactStore.of_words(parts[0])
        return sort_store(ContactStore.of_words(np.concatenate(parts)))

    def _all_persist(self):
        """This step's events when nothing moved: every touching pair persists, none begins or ends."""
        n = len(self._touch[1])
        self._events = (np.ones(n, bool) if n else _NO_FLAGS, [], _NO_ENDS)  # (np.ones costs ~1 us even empty)
        self._event_list = None

    def _sphere_batch(self, rows, flip, words, ga, gb, info, pose, margins, store):
        """The sphere piece pairs ``rows`` (the sphere A, or B when ``flip``) into their rows of ``store``."""
        sid, ps, oid, po, hull, mg = _sphere_inputs(rows, flip, words, ga, gb, info.kind, info.core, pose, margins)
        batch = collide_sphere_pairs(self._cores, sid, ps, oid, po, hull, mg, check=False)
        pack_rows(rows, batch, None, None, flip, store)

    def _update_composed(self, bodies, table, info, pairs, sweep):
        """:meth:`update` composed from Python: a compiled call per stage and per batch (the twin of
        :meth:`_update_fused`, for the tests that compare the two)."""
        n = len(bodies)
        ra, rb = np.ascontiguousarray(pairs[:, 0]), np.ascontiguousarray(pairs[:, 1])
        old = self.store
        # pairs whose bodies both rest (asleep or static) keep their rows as they were (``kept``)
        active = np.empty(len(pairs), np.int64)
        kept = np.empty(len(old), np.bool_)
        m, cap = _classify(ra, rb, table.motion, table.state.sleeping, table.shape_count, old.keys, n, active, kept)
        old_caches, self._caches = self._caches, {}  # the one-by-one pairs' GJK / SAT caches, by key
        fresh, extra = ContactStore(data=rows_array(cap)), ContactStore()
        k = 0
        if m:
            k, extra = self._narrow(bodies, table, info, old, old_caches, ra, rb, active[:m], sweep, fresh)
        # the store keeps only rows with points: a pair that was apart keeps its separating feature here
        self._apart = _separated_rows(fresh.words, k) if k else _NO_APART
        fresh = ContactStore(data=fresh.data[:k])
        # (updated in place unless its rows were handed out as PersistentManifold views)
        new = next_store(old, kept, fresh, extra, self.match_tol, in_place=self._views is None)
        self.store = new
        self._views = None
        self._points = int(new.count.sum())
        self.stats = {"piece_pairs": k, "manifolds": len(new), "points": self._points}
        if not m and new is old and not self._gone:  # nothing moved: every touching pair persists
            self._all_persist()
        else:
            self._find_events(n)

    def _narrow(self, bodies, table, info, old, old_caches, ra, rb, active, sweep, fresh):
        """Mid and narrow phase of the active body pairs ``ra[active], rb[active]``: their piece
        pairs' rows written into ``fresh`` in key order (rows without points have count 0) by one
        compiled call per batch kind; the pairs done one by one go to a store of their own (a
        piece against a mesh may have several rows). Returns the number of piece pairs and that
        store."""
        k = len(fresh)
        margins, ga, gb, route = np.empty(k), np.empty(k, np.int64), np.empty(k, np.int64), np.empty(k, np.int64)
        order, bounds = np.empty(k, np.int64), np.empty(_ROUTES + 1, np.int64)
        pose = table.state.pose
        words = fresh.words
        k = _route(ra, rb, active, sweep, self.margin, len(bodies), info.start, info.kind, info.center, info.axes,
                   info.half, pose, words, margins, ga, gb, route, order, bounds)
        extra = ContactStore()
        for r in range(_ROUTES):
            rows = order[bounds[r]:bounds[r + 1]]
            if not len(rows):
                continue
            if r == _R_HULL and self.hull_response == "gjk":  # one by one, as the rarer pairs
                gjk = self._one_by_one(bodies, table, info, words, margins, rows, old_caches, self._caches,
                                       collide_hull_hull_gjk)
                extra = gjk if not len(extra) else sort_store(ContactStore(data=np.concatenate([extra.data,
                                                                                                gjk.data])))
            elif r == _R_HULL:
                h = len(rows)
                ia, pa, ib, pb = np.empty(h, np.int64), np.empty((h, 4, 4)), np.empty(h, np.int64), np.empty((h, 4, 4))
                mg, caches = np.empty(h), np.empty((h, 3), np.int64)
                _hull_inputs(rows, words, ga, gb, info.hull, pose, margins, old.words, self._apart, ia, pa, ib, pb, mg,
                             caches)
                batch = collide_hull_pairs(self._hulls, ia, pa, ib, pb, mg, caches, check=False)
                pack_rows(rows, batch, caches, None, False, fresh)
            elif r in (_R_HALF, _R_HALF_FLIP):
                flip = r == _R_HALF_FLIP
                cids, poses, normals, offsets, mg = _halfspace_inputs(rows, flip, words, ga, gb, info.core, info.plane,
                                                                      pose, margins)
                batch = collide_halfspace_pairs(self._cores, cids, poses, normals, offsets, mg, check=False)
                pack_rows(rows, batch, None, None, flip, fresh)
            elif r in (_R_BALL, _R_BALL_FLIP):
                self._sphere_batch(rows, r == _R_BALL_FLIP, words, ga, gb, info, pose, margins, fresh)
            else:
                one = self._one_by_one(bodies, table, info, words, margins, rows, old_caches, self._caches)
                extra = one if not len(extra) else sort_store(ContactStore(data=np.concatenate([extra.data,
                                                                                                one.data])))
        return k, extra

    # the detection of a step as two compiled calls around the batches (:meth:`_update_fused`); False:
    # a call per stage and per batch from Python (:meth:`_update_composed`), the same kernels (the
    # results are the same bit for bit)
    _one_call_narrow = True

    def _follow(self, bodies):
        """Carry the store over to a changed body list: rows renumbered, rows of removed bodies
        (and of pairs whose order flipped) dropped; touching pairs with a removed body end."""
        if bodies == self._bodies:  # the same bodies (list == compares them by identity)
            return
        where = {}
        for k, b in enumerate(bodies):
            where.setdefault(id(b), k)
        new_row = np.array([where.get(id(b), -1) for b in self._bodies], dtype=np.int64)
        ends = []
        if len(self._bodies):
            st = self.store
            a, b = new_row[st.keys[:, 0]], new_row[st.keys[:, 1]]
            ok = (a >= 0) & (b >= 0) & (a < b)
            st = st.take(ok)
            st.keys[:, 0], st.keys[:, 1] = a[ok], b[ok]
            self.store = sort_store(st)
            self._points = int(self.store.count.sum())
            rows, pts = self._touch_rows(), self._touch[1]
            ta, tb = new_row[rows[:, 0]], new_row[rows[:, 1]]
            ok = (ta >= 0) & (tb >= 0) & (ta < tb)
            ends = [(self._bodies[i], self._bodies[j]) for (i, j) in rows[~ok]]
            codes, pts = ta[ok] * len(bodies) + tb[ok], pts[ok]
            order = np.argsort(codes, kind="stable")  # renumbering may reorder them
            self._touch = (codes[order], pts[order])
        self._gone = ends
        self._caches = {}
        self._apart = _NO_APART  # (keys of the old body rows)
        self._bodies = list(bodies)

    def _find_events(self, n):
        """The body pairs touching now (sorted), compared with the last step's: begins, persists, ends."""
        codes, points, was, stays = touch_events(self.store, n, self._touch[0])
        ends = self._gone
        self._gone = []
        self._events = (was, ends, (self._touch[0], stays, self._bodies, max(n, 1)))
        self._touch = (codes, points)
        self._event_list = None

    # -- mid phase ------------------------------------------------------------------------

    def _shape(self, shape):
        """``(kind, hull id, core id, local box)`` of a shape, packing it into the tables the first
        time. Shapes of equal geometry (a thousand boxes of one size, each its own object) share
        their table rows and box: the hull data and the covariance fit are made once."""
        got = self._shape_ids.get(id(shape))
        if got is None or got[0] is not shape:
            kind = _shape_kind(shape)
            content = _content_key(shape, kind)
            twin = self._by_content.get(content)
            if twin is None:
                hull = self._hulls.add(shape.poly) if kind == _HULL else -1
                core = self._cores.add(shape) if kind in _CORE_KINDS else -1
                twin = (hull, core, local_box(shape) if kind in _CORE_KINDS else None)
                if content is not None:
                    self._by_content[content] = twin
            got = (shape, kind) + twin
            self._shape_ids[id(shape)] = got
        return got[1:]

    def _rows(self, bodies, table):
        """The shapes of every body row, packed (computed again when the table changes).

        ``start`` (n + 1,) gives each row's pieces; per piece: ``kind``, ``hull`` and ``core`` (table
        ids, -1 for none), ``plane`` (a half-space's local normal and offset), and a local box
        ``center``, ``axes``, ``half`` for the mid phase (a half-space's is infinite)."""
        key = (id(table), getattr(table, "version", None), id(bodies), len(bodies))
        if self._row_info[0] == key and key[1] is not None:
            return self._row_info[1]
        shapes = [s for b in bodies for s in b.shapes]
        count = np.array([len(b.shapes) for b in bodies], np.int64)
        start = np.zeros(len(bodies) + 1, np.int64)
        np.cumsum(count, out=start[1:])
        m = len(shapes)
        kind, hull, core = (np.full(m, -1, np.int64) for _ in range(3))
        plane = np.zeros((m, 4))
        center, half = np.zeros((m, 3)), np.zeros((m, 3))
        axes = np.zeros((m, 3, 3))
        axes[:] = np.eye(3)
        for k, shape in enumerate(shapes):
            kind[k], hull[k], core[k], box = self._shape(shape)
            if kind[k] == _HALF:
                plane[k, :3], plane[k, 3] = shape.normal, shape.offset
                half[k] = np.inf
            elif kind[k] == _MESH:
                tree = shape.tree
                center[k], axes[k], half[k] = tree.centers[0], tree.axes[0], tree.half_extents[0]
            elif kind[k] in _CORE_KINDS:
                center[k], axes[k], half[k] = box
            else:
                half[k] = np.inf
        info = SimpleNamespace(start=start, kind=kind, hull=hull, core=core, plane=plane, center=center, axes=axes,
                               half=half, shapes=shapes)
        self._row_info = (key, info)
        self._scratch = self._scratch.for_scene(len(bodies), m)
        self._hulls._kernel_args()  # (the tables' argument tuples cut now, not at the first contact)
        self._cores.kernel_arrays()
        return info

    def _one_by_one(self, bodies, table, info, words, margins, index, old_caches, caches, collide=collide_shapes):
        """The piece pairs ``index`` (rows of ``words``, in key order) outside the batches, one
        narrow-phase call each (pair caches read from ``old_caches``, kept in ``caches``), except
        convex pieces against a mesh, which go to :meth:`_mesh_pairs`; a store of their manifolds
        in key order."""
        pose = table.state.pose
        index = np.asarray(index, np.int64)
        w = words[index]
        ka, kb = info.kind[info.start[w[:, 0]] + w[:, 2]], info.kind[info.start[w[:, 1]] + w[:, 3]]
        meshy = ((ka == _MESH) & (kb <= _CAPSULE)) | ((kb == _MESH) & (ka <= _CAPSULE))  # (_CORE_KINDS: 0-2)
        meshed = index[meshy]
        rows = []
        for k in index[~meshy]:
            i, j, p, q = (int(x) for x in words[k, :4])
            margin = float(margins[k])
            sa, sb = bodies[i].shapes[p], bodies[j].shapes[q]
            if isinstance(sb, TriMesh) or isinstance(sa, TriMesh):  # (not a convex piece: refused there)
                if isinstance(sa, TriMesh):
                    found = [(g, flip_manifold(m)) for g, m in collide_convex_trimesh(sb, pose[j], sa, pose[i],
                                                                                      margin)]
                else:
                    found = collide_convex_trimesh(sa, pose[i], sb, pose[j], margin)
            else:
                cache = old_caches.get((i, j, p, q)) or PairCache()
                caches[(i, j, p, q)] = cache
                found = [(0, collide(sa, pose[i], sb, pose[j], margin, cache))]
            for g, m in found:
                if len(m.depths):
                    rows.append(((i, j, p, q, int(g)), m))
        st = ContactStore(len(rows))
        for r, (key, m) in enumerate(rows):
            c = len(m.depths)
            if c > 4:
                raise RuntimeError(f"a manifold of {c} points (at most 4 expected) for the pair {key}")
            st.keys[r] = key
            st.count[r] = c
            st.normal[r] = m.normal
            st.kind[r] = _kind_index(m.kind)
            st.tests[r], st.sat_depth[r] = m.tests, m.sat_depth
            st.sat[r] = -1
            st.points_a[r, :c], st.points_b[r, :c] = m.points_a, m.points_b
            st.depths[r, :c], st.ids[r, :c] = m.depths, m.ids
        if len(meshed):
            mesh_st = self._mesh_pairs(bodies, table, info, words, margins, meshed)
            st = mesh_st if not rows else ContactStore(data=np.concatenate([st.data, mesh_st.data]))
        return sort_store(st)  # (a mesh's triangle groups come in their own order)

    def _mesh_pairs(self, bodies, table, info, words, margins, index):
        """Convex pieces against static triangle meshes (the piece pairs ``index``, rows of
        ``words``): one :func:`collision.convex_mesh.collide_convex_trimesh_pairs` call per mesh and
        side; a store of their manifolds (one row per triangle group, keyed by its smallest face)."""
        pose = table.state.pose
        words = words[index]
        ga = info.start[words[:, 0]] + words[:, 2]
        gb = info.start[words[:, 1]] + words[:, 3]
        flip = info.kind[ga] == _MESH  # the mesh is A: its piece pair's manifolds are seen from B
        mesh_row = np.where(flip, ga, gb)
        piece = np.where(flip, gb, ga)
        body = np.where(flip, words[:, 1], words[:, 0])
        other = np.where(flip, words[:, 0], words[:, 1])
        margins = np.asarray(margins)[index]
        parts = []
        groups = np.unique(2 * mesh_row + flip)  # (each mesh row and side once, in that order)
        for g, f in zip((groups // 2).tolist(), (groups % 2 == 1).tolist()):
            sel = np.flatnonzero((mesh_row == g) & (flip == f))
            b, pc = body[sel], piece[sel]
            mesh_body = int(other[sel[0]])
            mesh = bodies[mesh_body].shapes[int(words[sel[0], 2 if f else 3])]
            out = collide_convex_trimesh_pairs(self._cores, self._hulls, info.core[pc], info.hull[pc],
                                               (info.center[pc], info.axes[pc], info.half[pc]), pose[b], mesh,
                                               pose[mesh_body], margins[sel], check=False)
            if not len(out):
                continue
            keys = words[sel[out.pair], :5].copy()
            keys[:, 4] = out.key
            st = ContactStore(len(out))
            pack_rows(np.arange(len(out)), out.batch, None, keys, f, st)
            parts.append(st.data)
        return ContactStore(data=np.concatenate(parts)) if parts else ContactStore()


def _snapshot(bodies):
    """What :meth:`ContactManager.update` reads of a :class:`app.world.body.BodyTable`, from a body list."""
    n = len(bodies)
    state = SimpleNamespace(pose=np.array([b.pose for b in bodies]).reshape(n, 4, 4),
                            sleeping=np.array([b.sleeping for b in bodies], dtype=bool).reshape(n))
    motion = np.array([DYNAMIC if b.moves else STATIC if b.motion == "static" else 1 for b in bodies],
                      dtype=np.int8).reshape(n)
    return SimpleNamespace(state=state, motion=motion,
                           shape_count=np.array([len(b.shapes) for b in bodies], np.int64).reshape(n))

