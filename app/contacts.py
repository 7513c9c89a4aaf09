"""Contact manifolds that persist from step to step, and contact events.

The narrow phase answers one step at a time. Here the world keeps, for every
pair of convex pieces that touch, a manifold of at most four points, and for
each point how many steps it has existed and the impulses the solver
accumulated on it (warm starting). A new manifold continues the old one point
by point, by feature id first and by distance otherwise (as
:func:`collision.manifold.match_contacts`), so a box resting on another keeps
the same four contacts while it sits still.

All manifolds of a step live in one :class:`ContactStore`: flat arrays, one
row per manifold (four point slots each), sorted by the key (body row A,
body row B, piece of A, piece of B, sub-key), as Box2D's and Jolt's contact
pools. A step's work is array work and three compiled loops: hull-hull piece
pairs go through :func:`collision.hull_batch.collide_hull_pairs`, half-spaces
against spheres, capsules and hulls through
:func:`collision.halfspace_batch.collide_halfspace_pairs`, spheres against
spheres, capsules and hulls through
:func:`collision.round_batch.collide_sphere_pairs`, the new keys are
found among the old ones by binary search, and ages and impulses are carried
over in one loop. Only the rarer pairs (capsules against capsules and hulls,
convex pieces against a static triangle mesh) take
:func:`collision.narrow_phase.collide_shapes` /
:func:`collision.convex_mesh.collide_convex_trimesh` one at a time.

Mid phase: a body made of several convex pieces passes only the piece pairs
whose world AABBs (expanded by the contact margin) overlap to the narrow
phase. A static concave body's shape is its triangle mesh
(:class:`collision.shapes.TriMesh`): a piece against it gets one manifold per
plane of coplanar triangles (sub-key: the group's smallest face index).

Sleeping: a pair of bodies that both rest (static, or dynamic and asleep)
keeps its manifolds as they are, unchanged and not aged.

Events: a body pair *begins* touching on the first step one of its pieces'
manifolds has a point at zero gap or deeper, *persists* on every following
step, and *ends* on the first step without one (or when a body is removed).
Speculative points (a gap below the margin) do not count as touching.
:attr:`ContactManager.manifolds` and :attr:`ContactManager.events` present
the store as objects (built when asked for; the arrays of a
:class:`PersistentManifold` are views of the store's rows).
"""

from dataclasses import dataclass, field
from types import SimpleNamespace

import numpy as np

from collision._jit import njit
from collision.convex_mesh import collide_convex_trimesh
from collision.halfspace_batch import CoreTable, collide_halfspace_pairs
from collision.hull_batch import HullTable, collide_hull_pairs
from collision.manifold import KIND_NAMES, Manifold
from collision.round_batch import collide_sphere_pairs
from collision.narrow_phase import PairCache, collide_shapes, flip_manifold
from collision.shapes import Capsule, HalfSpace, Hull, Sphere, TriMesh, local_box

from .body import DYNAMIC, STATIC

__all__ = ["PersistentManifold", "ContactEvent", "ContactManager", "ContactStore"]

# Manifold kinds as stored (ContactStore.kind): collision.manifold's, then any other name a pair
# function gives (the mesh contacts' "point"), added as met.
_KIND_NAMES = list(KIND_NAMES)


def _kind_index(name):
    if name not in _KIND_NAMES:
        _KIND_NAMES.append(name)
    return _KIND_NAMES.index(name)


# Shape kinds, for choosing the batch a piece pair goes to.
_HULL, _SPHERE, _CAPSULE, _HALF, _MESH, _OTHER = range(6)
_CORE_KINDS = (_HULL, _SPHERE, _CAPSULE)


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


class ContactStore:
    """The manifolds of one step, one row each, sorted by :attr:`keys`.

    Attributes
    ----------
    keys : (m, 5) int64
        Body row of A, body row of B (A < B), piece of A, piece of B, sub-key
        (a triangle group against a mesh; 0 otherwise).
    count : (m,) int64
        Points in use (1 to 4) of each row's four slots.
    normal : (m, 3) float64
        From A towards B, world.
    kind : (m,) int64
        Index into :data:`collision.manifold.KIND_NAMES` (then other kinds pair functions name).
    tests : (m,) int64; sat_depth : (m,) float64
        As :class:`collision.manifold.Manifold`.
    sat : (m, 3) int64
        The hull-hull SAT feature cache (-1: none).
    points_a, points_b : (m, 4, 3) float64
    depths : (m, 4) float64
        Penetration (> 0) or minus the gap.
    ids : (m, 4) int64
        Feature ids.
    age : (m, 4) int64
    impulse : (m, 4, 3) float64
        Accumulated normal and tangent impulses (what the solver reads and writes).
    frozen : (m,) bool
        Carried unchanged from the last step (both bodies rest).
    data : (m,) structured array of :attr:`DTYPE`
        The rows; each attribute above is a view of one of its fields.
    """

    _FIELDS = {"keys": ((5,), np.int64), "count": ((), np.int64), "normal": ((3,), np.float64),
               "kind": ((), np.int64), "tests": ((), np.int64), "sat_depth": ((), np.float64),
               "sat": ((3,), np.int64), "points_a": ((4, 3), np.float64), "points_b": ((4, 3), np.float64),
               "depths": ((4,), np.float64), "ids": ((4,), np.int64), "age": ((4,), np.int64),
               "impulse": ((4, 3), np.float64), "frozen": ((), np.bool_)}
    # One record per row: taking, joining and sorting rows moves each row once, not each field.
    DTYPE = np.dtype([(name, dtype, shape) for name, (shape, dtype) in _FIELDS.items()], align=True)

    def __init__(self, m=0, data=None, **arrays):
        self.data = np.zeros(m, self.DTYPE) if data is None else data
        for name, arr in arrays.items():
            self.data[name] = arr

    def __len__(self):
        return len(self.data)

    @property
    def words(self):
        """:attr:`data` as (m, w) int64 words (a view; the first five words of a row are its key)."""
        return self.data.view(np.int64).reshape(len(self.data), self.DTYPE.itemsize // 8)

    def take(self, index):
        """A store of the rows ``index`` (an index array or a mask), copied."""
        index = np.asarray(index)
        if index.dtype == np.bool_:
            index = np.flatnonzero(index)
        return ContactStore(data=self.data.take(index))  # (numpy's take: 10x faster than data[index] on records)

    @classmethod
    def concatenate(cls, parts):
        parts = [p for p in parts if len(p)]
        if not parts:
            return cls()
        if len(parts) == 1:
            return parts[0]
        # joined as flat words: numpy copies records with sub-array fields field by field, 5x slower
        words = np.concatenate([np.ascontiguousarray(p.data).view(np.int64) for p in parts])
        return cls(data=words.view(cls.DTYPE))

    @classmethod
    def from_batch(cls, batch, rows, keys, flip=False):
        """The pairs of a :class:`collision.hull_batch.ManifoldBatch` that have points, as rows in one
        compiled pass; ``keys`` (k, 5), ``rows`` (k, 3) the SAT caches (None: -1). ``flip``: the
        batch saw B first (normals reversed, points swapped, face kinds swapped)."""
        st = cls(int(np.count_nonzero(batch.count)))
        if len(st):
            sat = np.full((0, 3), -1, np.int64) if rows is None else rows
            _pack_rows(keys, batch.count, batch.normal, batch.kind, batch.tests, batch.sat_depth, sat,
                       batch.points_a, batch.points_b, batch.depths, batch.ids, bool(flip), st.words,
                       st.data.view(np.float64).reshape(len(st), -1))
        return st


def _field(name):
    def get(self):
        return self.data[name]

    def put(self, value):
        self.data[name] = value

    return property(get, put, doc=f"The ``{name}`` column, a view of :attr:`ContactStore.data` (assigning copies).")


for _name in ContactStore._FIELDS:
    setattr(ContactStore, _name, _field(_name))
del _name
# each field's first word in a row (every field starts on a word: the dtype is aligned)
(_W_KEYS, _W_COUNT, _W_NORMAL, _W_KIND, _W_TESTS, _W_SAT_DEPTH, _W_SAT, _W_POINTS_A, _W_POINTS_B, _W_DEPTHS,
 _W_IDS) = (ContactStore.DTYPE.fields[name][1] // 8 for name in
            ("keys", "count", "normal", "kind", "tests", "sat_depth", "sat", "points_a", "points_b", "depths", "ids"))
_FACE_A, _FACE_B = KIND_NAMES.index("face_a"), KIND_NAMES.index("face_b")


@njit(cache=True)
def _pack_rows(keys, count, normal, kind, tests, sat_depth, sat, points_a, points_b, depths, ids, flip,
               words, reals):
    """Write the batch rows with points into the zeroed rows ``words`` / ``reals`` (the same records
    as int64 and float64 words; each field from its first word, ``_W_*``). ``sat`` (k, 3), or
    (0, 3) for none (-1)."""
    m = 0
    sign = -1.0 if flip else 1.0
    for i in range(count.shape[0]):
        if count[i] == 0:
            continue
        for c in range(5):
            words[m, _W_KEYS + c] = keys[i, c]
        words[m, _W_COUNT] = count[i]
        for c in range(3):
            reals[m, _W_NORMAL + c] = sign * normal[i, c]
        kd = kind[i]
        if flip and kd == _FACE_A:
            kd = _FACE_B
        elif flip and kd == _FACE_B:
            kd = _FACE_A
        words[m, _W_KIND] = kd
        words[m, _W_TESTS] = tests[i]
        reals[m, _W_SAT_DEPTH] = sat_depth[i]
        for c in range(3):
            words[m, _W_SAT + c] = sat[i, c] if sat.shape[0] else -1
        pa, pb = (points_b, points_a) if flip else (points_a, points_b)
        for q in range(4):
            for c in range(3):
                reals[m, _W_POINTS_A + 3 * q + c] = pa[i, q, c]
                reals[m, _W_POINTS_B + 3 * q + c] = pb[i, q, c]
            reals[m, _W_DEPTHS + q] = depths[i, q]
            words[m, _W_IDS + q] = ids[i, q]
        m += 1


@njit
def _compare(a, i, b, j):
    """-1, 0 or 1 as row ``a[i]`` is lexicographically below, equal to or above ``b[j]``."""
    for c in range(a.shape[1]):
        if a[i, c] < b[j, c]:
            return -1
        if a[i, c] > b[j, c]:
            return 1
    return 0


@njit
def _lookup(sorted_keys, queries, out):
    """``out[i]``: the row of ``sorted_keys`` equal to ``queries[i]``, or -1 (binary search)."""
    m = sorted_keys.shape[0]
    for i in range(queries.shape[0]):
        lo, hi = 0, m
        while lo < hi:
            mid = (lo + hi) // 2
            if _compare(sorted_keys, mid, queries, i) < 0:
                lo = mid + 1
            else:
                hi = mid
        out[i] = lo if lo < m and _compare(sorted_keys, lo, queries, i) == 0 else -1


@njit(cache=True)
def _touching_pairs(keys, count, depths, n, codes, points):
    """Body pairs with a point at zero gap or deeper: ``codes[:m]`` (``a n + b``, ascending, as the
    store's keys) and ``points[:m]`` their touching points over all piece pairs; returns ``m``."""
    m = 0
    for r in range(keys.shape[0]):
        pts = 0
        for i in range(count[r]):
            if depths[r, i] >= 0.0:
                pts += 1
        if pts == 0:
            continue
        code = keys[r, 0] * n + keys[r, 1]
        if m > 0 and codes[m - 1] == code:
            points[m - 1] += pts
        else:
            codes[m] = code
            points[m] = pts
            m += 1
    return m


@njit(cache=True)
def _in_sorted(values, sorted_set, out):
    """``out[i]``: whether ``values[i]`` is in ``sorted_set``; both ascending (one merge pass)."""
    j = 0
    for i in range(values.shape[0]):
        while j < sorted_set.shape[0] and sorted_set[j] < values[i]:
            j += 1
        out[i] = j < sorted_set.shape[0] and sorted_set[j] == values[i]


@njit(cache=True)
def _merge_rows(old, kept, fresh, out, from_old):
    """``out``: the rows of ``old`` where ``kept`` and all rows of ``fresh``, in key order (both
    sorted; rows as int64 words, the key the first five), ``from_old`` marking the kept ones; one
    pass, each row copied once."""
    i = j = k = 0
    while True:
        while i < old.shape[0] and not kept[i]:
            i += 1
        if i >= old.shape[0] and j >= fresh.shape[0]:
            return
        from_old_k = j >= fresh.shape[0]
        if i < old.shape[0] and not from_old_k:
            for c in range(5):
                if old[i, c] != fresh[j, c]:
                    from_old_k = old[i, c] < fresh[j, c]
                    break
        from_old[k] = from_old_k
        if from_old_k:
            out[k, :] = old[i, :]
            i += 1
        else:
            out[k, :] = fresh[j, :]
            j += 1
        k += 1


@njit
def _carry(src, count, ids, pa, pb, depth, frozen, o_count, o_ids, o_pa, o_pb, o_age, o_imp, tol2, age, imp):
    """Ages and impulses of the new rows from the old row ``src`` each continues (-1: none).

    The same ids in the same order (a resting contact): every point continues
    its own. Otherwise each new point takes the old point with its feature
    id, or else the nearest unclaimed old point within ``sqrt(tol2)``
    (Box2D's id matching with a distance fallback for a reference-face switch).
    When the count is unchanged, a touching new point still unmatched takes the
    impulse of the nearest unclaimed old point: of an octagonal patch between two
    turned boxes the reduction keeps four corners, and which of two equally deep
    corners it keeps changes from step to step; without the hand-off that corner
    starts from zero each time and the stack walks sideways.
    """
    used = np.zeros(4, np.bool_)
    match = np.empty(4, np.int64)
    for m in range(count.shape[0]):
        if frozen[m]:
            continue
        c = count[m]
        for i in range(4):
            age[m, i] = 1 if i < c else 0
            imp[m, i, 0] = imp[m, i, 1] = imp[m, i, 2] = 0.0
        o = src[m]
        if o < 0 or o_count[o] == 0:
            continue
        oc = o_count[o]
        same = oc == c
        for i in range(c):
            if same and o_ids[o, i] != ids[m, i]:
                same = False
        if same:
            for i in range(c):
                match[i] = i
        else:
            for j in range(4):
                used[j] = False
            for i in range(c):
                match[i] = -1
                for j in range(oc):
                    if not used[j] and o_ids[o, j] == ids[m, i]:
                        match[i] = j
                        used[j] = True
                        break
            for i in range(c):
                if match[i] >= 0:
                    continue
                best, bj = tol2, -1
                for j in range(oc):
                    if not used[j]:
                        d = 0.0
                        for k in range(3):
                            e = 0.5 * (pa[m, i, k] + pb[m, i, k]) - 0.5 * (o_pa[o, j, k] + o_pb[o, j, k])
                            d += e * e
                        if d <= best:
                            best, bj = d, j
                if bj >= 0:
                    match[i] = bj
                    used[bj] = True
            if oc == c:  # the same number of points: a touching new point takes over a lost one's impulse
                for i in range(c):
                    if match[i] >= 0 or depth[m, i] < 0.0:
                        continue
                    best, bj = np.inf, -1
                    for j in range(oc):
                        if not used[j]:
                            d = 0.0
                            for k in range(3):
                                e = pa[m, i, k] - o_pa[o, j, k]
                                d += e * e
                            if d < best:
                                best, bj = d, j
                    if bj >= 0:
                        used[bj] = True
                        for k in range(3):
                            imp[m, i, k] = o_imp[o, bj, k]
        for i in range(c):
            j = match[i]
            if j >= 0:
                age[m, i] = o_age[o, j] + 1
                for k in range(3):
                    imp[m, i, k] = o_imp[o, j, k]


@njit(cache=True)
def _classify(ra, rb, motion, sleeping, count, old_keys, n, active, kept):
    """Sort the candidate body pairs ``ra, rb`` (k,) in one pass: those that need the narrow phase
    (not both static, both with shapes, not both at rest) go to ``active`` (their indices; returns
    how many), and ``kept`` (rows of the old store, ``old_keys`` (m, 5)) marks the old rows whose
    pair is a candidate with both bodies at rest (static, or dynamic and asleep): those rows stay
    as they were. ``old_keys`` are in key order, as the store's rows always are."""
    k = ra.shape[0]
    frozen = np.empty(k, np.int64)
    m = f = 0
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
    old = np.empty(old_keys.shape[0], np.int64)  # ascending: the store is in key order
    for r in range(old_keys.shape[0]):
        old[r] = old_keys[r, 0] * n + old_keys[r, 1]
    _in_sorted(old, np.sort(frozen[:f]), kept)
    return m


def _sort(store):
    """``store`` with its rows in key order."""
    if len(store) < 2:
        return store
    k = store.keys
    order = np.lexsort((k[:, 4], k[:, 3], k[:, 2], k[:, 1], k[:, 0]))
    if np.all(order[1:] > order[:-1]):
        return store
    return store.take(order)


def _lookup_keys(store, queries):
    out = np.empty(len(queries), np.int64)
    if len(queries):
        if len(store):
            _lookup(store.keys, np.ascontiguousarray(queries, dtype=np.int64), out)
        else:
            out[:] = -1
    return out


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
        self._hulls = HullTable()  # every hull seen, packed for the batched kernel
        self._cores = CoreTable()  # every sphere, capsule and hull core, for the half-space kernel
        self._shape_ids = {}  # id(shape) -> (shape, kind, hull id, core id, local box or None)
        self._by_content = {}  # geometry key -> (hull id, core id, local box): equal shapes share them
        self._row_info = (None, None)
        self.clear()

    def clear(self):
        self.store = ContactStore()
        self._bodies = []
        self._caches = {}
        self._touch = (np.zeros((0, 2), np.int64), np.zeros(0, np.int64))  # body rows, points
        self._events = ([], [], [])  # begin rows, persist rows, end (a, b) bodies
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
        rows, pts = self._touch
        return {(self._bodies[i], self._bodies[j]): int(n) for (i, j), n in zip(rows, pts)}

    @property
    def touching_count(self):
        return len(self._touch[1])

    @property
    def events(self):
        """This step's :class:`ContactEvent` list: begins and persists (in key order), then ends."""
        if self._event_list is None:
            begin, persist, end = self._events
            rows, pts = self._touch
            out = []
            for k in range(len(pts)):
                if begin[k] or persist[k]:
                    i, j = rows[k]
                    out.append(ContactEvent("begin" if begin[k] else "persist", self._bodies[i], self._bodies[j],
                                            int(pts[k])))
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
        table : app.body.BodyTable, optional
            The world's packed body state (default: read from ``bodies``).

        This step's events are then in :attr:`events` (built when read).
        """
        n = len(bodies)
        if table is None:
            table = _snapshot(bodies)
        self._follow(bodies)
        self._rows(bodies, table)  # (packed when the bodies change, not at their first contact: no hitch then)
        pairs = np.asarray(pairs, dtype=np.int64).reshape(-1, 2)
        ra, rb = pairs[:, 0], pairs[:, 1]
        old = self.store
        # pairs whose bodies both rest (asleep or static) keep their rows as they were (``kept``)
        active = np.empty(len(pairs), np.int64)
        kept = np.empty(len(old), np.bool_)
        active = active[:_classify(ra, rb, table.motion, table.state.sleeping, table.shape_count, old.keys, n, active,
                                   kept)]
        self.stats = {"piece_pairs": 0, "manifolds": 0, "points": 0}
        old_caches, self._caches = self._caches, {}  # the one-by-one pairs' GJK / SAT caches, by key
        fresh = ContactStore()
        if len(active):
            margins = self.margin + (sweep[ra[active]] + sweep[rb[active]] if sweep is not None else 0.0)
            fresh = _sort(ContactStore.concatenate(self._narrow(bodies, table, old, old_caches, ra[active], rb[active],
                                                                np.ascontiguousarray(margins, float))))
        if kept.all() and not len(fresh):  # all asleep: the store stays where it is
            new = old
            new.frozen[:] = True
        else:  # the kept rows and the fresh ones merged in key order, each row copied once
            new = ContactStore(data=np.empty(int(kept.sum()) + len(fresh), ContactStore.DTYPE))
            from_old = np.empty(len(new), np.bool_)
            _merge_rows(old.words, kept, fresh.words, new.words, from_old)
            new.frozen[:] = from_old
        if len(new) and new is not old:
            src = np.full(len(new), -1, np.int64)
            live = np.flatnonzero(~new.frozen)  # (frozen rows are carried as they are)
            src[live] = _lookup_keys(old, new.keys[live])
            o = old if len(old) else ContactStore(1)
            _carry(src, new.count, new.ids, new.points_a, new.points_b, new.depths, new.frozen, o.count, o.ids,
                   o.points_a, o.points_b, o.age, o.impulse, self.match_tol ** 2, new.age, new.impulse)
        self.store = new
        self._views = None
        self.stats.update(manifolds=len(new), points=int(new.count.sum()))
        if new is old and not self._gone:  # nothing moved: every touching pair persists
            pts = self._touch[1]
            self._events = (np.zeros(len(pts), bool), np.ones(len(pts), bool), [])
            self._event_list = None
        else:
            self._find_events(n)

    def _narrow(self, bodies, table, old, old_caches, ra, rb, margins):
        """Mid and narrow phase of the active body pairs ``ra, rb`` (contact margins ``margins``):
        a list of stores, one per batch kind (and one for the pairs done one by one)."""
        parts = []
        pp = self._piece_pairs(bodies, table, ra, rb, np.broadcast_to(margins, ra.shape))
        self.stats["piece_pairs"] = len(pp.ra)
        keys = np.stack([pp.ra, pp.rb, pp.p, pp.q, np.zeros_like(pp.ra)], axis=1)
        hh = (pp.ka == _HULL) & (pp.kb == _HULL)
        if hh.any():
            parts.append(self._hull_batch(old, keys[hh], pp.ha[hh], pp.hb[hh], table, pp.margin[hh]))
        core_a = pp.ka <= _CAPSULE  # a hull, sphere or capsule: _CORE_KINDS
        core_b = pp.kb <= _CAPSULE
        for flip, sel in ((False, (pp.ka == _HALF) & core_b), (True, core_a & (pp.kb == _HALF))):
            if sel.any():
                parts.append(self._halfspace_batch(keys[sel], pp, sel, table, flip))
        ball_a = (pp.ka == _SPHERE) & core_b  # a sphere against a sphere, capsule or hull
        ball_b = (pp.kb == _SPHERE) & core_a & ~ball_a
        for flip, sel in ((False, ball_a), (True, ball_b)):
            if sel.any():
                parts.append(self._sphere_batch(keys[sel], pp, sel, table, flip))
        batched = hh | ball_a | ball_b | ((pp.ka == _HALF) & core_b) | (core_a & (pp.kb == _HALF))
        rest = np.flatnonzero(~batched)
        if len(rest):
            parts.append(self._one_by_one(bodies, table, pp, rest, old_caches, self._caches))
        return parts

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
            self.store = _sort(st)
            rows, pts = self._touch
            ta, tb = new_row[rows[:, 0]], new_row[rows[:, 1]]
            ok = (ta >= 0) & (tb >= 0) & (ta < tb)
            ends = [(self._bodies[i], self._bodies[j]) for (i, j) in rows[~ok]]
            ta, tb, pts = ta[ok], tb[ok], pts[ok]
            order = np.lexsort((tb, ta))  # renumbering may reorder them
            self._touch = (np.stack([ta[order], tb[order]], axis=1), pts[order])
        self._gone = ends
        self._caches = {}
        self._bodies = list(bodies)

    def _find_events(self, n):
        """The body pairs touching now (sorted), compared with the last step's: begins, persists, ends."""
        st = self.store
        codes = np.empty(len(st), np.int64)
        points = np.empty(len(st), np.int64)
        m = _touching_pairs(st.keys, st.count, st.depths, n, codes, points)
        codes, points = codes[:m], points[:m]
        rows = np.stack([codes // max(n, 1), codes % max(n, 1)], axis=1)
        prev_rows, _ = self._touch  # in (a, b) order, as the codes
        prev = prev_rows[:, 0] * n + prev_rows[:, 1]
        was = np.empty(m, np.bool_)
        stays = np.empty(len(prev), np.bool_)
        _in_sorted(codes, prev, was)
        _in_sorted(prev, codes, stays)
        gone = prev_rows[~stays]
        ends = list(self._gone) + [(self._bodies[i], self._bodies[j]) for i, j in gone]
        self._gone = []
        self._touch = (rows, points)
        self._events = (~was, was, ends)
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
                               half=half)
        self._row_info = (key, info)
        return info

    def _piece_pairs(self, bodies, table, ra, rb, margins):
        """Mid phase: the piece pairs of the body pairs ``ra, rb`` whose world AABBs, grown by the
        pair's margin, overlap (one compiled pass); with their kinds and table ids. A pair of two
        single-piece bodies is its one piece pair."""
        info = self._rows(bodies, table)
        count = table.shape_count
        single = (count[ra] == 1) & (count[rb] == 1)
        s_ra, s_rb = ra[single], rb[single]
        zero = np.zeros_like(s_ra)
        out = SimpleNamespace(ra=s_ra, rb=s_rb, p=zero, q=zero, margin=margins[single])
        multi = ~single
        if multi.any():
            m_ra, m_rb, m_margin = ra[multi], rb[multi], np.ascontiguousarray(margins[multi])
            rows = np.unique(np.concatenate([m_ra, m_rb]))
            boxes = np.empty((len(info.kind), 2, 3))
            _piece_aabbs(table.state.pose, info.start, info.center, info.axes, info.half, rows, boxes)
            cap = int(np.sum(count[m_ra] * count[m_rb]))
            got = np.empty((cap, 4), np.int64)
            got_margin = np.empty(cap)
            k = _mid_phase(m_ra, m_rb, m_margin, info.start, boxes, got, got_margin)
            out.ra = np.concatenate([s_ra, got[:k, 0]])
            out.rb = np.concatenate([s_rb, got[:k, 1]])
            out.p = np.concatenate([zero, got[:k, 2]])
            out.q = np.concatenate([zero, got[:k, 3]])
            out.margin = np.concatenate([out.margin, got_margin[:k]])
        ga, gb = info.start[out.ra] + out.p, info.start[out.rb] + out.q  # global piece indices
        out.ka, out.kb = info.kind[ga], info.kind[gb]
        out.ha, out.hb = info.hull[ga], info.hull[gb]
        out.ca, out.cb = info.core[ga], info.core[gb]
        out.ga, out.gb = ga, gb
        return out

    # -- narrow phase ---------------------------------------------------------------------

    def _hull_batch(self, old, keys, ha, hb, table, margins):
        """Hull-hull piece pairs in one compiled call, each starting from its SAT feature cache."""
        src = _lookup_keys(old, keys)
        caches = np.full((len(keys), 3), -1, np.int64)
        found = src >= 0
        caches[found] = old.sat[src[found]]
        pose = table.state.pose
        batch = collide_hull_pairs(self._hulls, ha, pose[keys[:, 0]], hb, pose[keys[:, 1]], margins, caches,
                                   check=False)  # (all built here; the kernel still checks the poses)
        return ContactStore.from_batch(batch, caches, keys)

    def _halfspace_batch(self, keys, pp, sel, table, flip):
        """Half-space pieces against convex pieces in one compiled call (the half-space is A, or B
        when ``flip``: then the manifolds are turned round)."""
        pose = table.state.pose
        info = self._row_info[1]
        hrow, crow = (keys[:, 1], keys[:, 0]) if flip else (keys[:, 0], keys[:, 1])
        cids = (pp.ca if flip else pp.cb)[sel]
        plane = info.plane[(pp.gb if flip else pp.ga)[sel]]
        rot = pose[hrow, :3, :3]
        normals = np.einsum("kij,kj->ki", rot, plane[:, :3])
        offsets = plane[:, 3] + np.einsum("ki,ki->k", normals, pose[hrow, :3, 3])
        batch = collide_halfspace_pairs(self._cores, cids, pose[crow], normals, offsets, pp.margin[sel], check=False)
        return ContactStore.from_batch(batch, None, keys, flip)

    def _sphere_batch(self, keys, pp, sel, table, flip):
        """Spheres against spheres, capsules and hulls in one compiled call (the sphere is A, or B
        when ``flip``: then the manifolds are turned round)."""
        pose = table.state.pose
        srow, orow = (keys[:, 1], keys[:, 0]) if flip else (keys[:, 0], keys[:, 1])
        sid, oid = ((pp.cb, pp.ca) if flip else (pp.ca, pp.cb))
        okind = (pp.ka if flip else pp.kb)[sel]
        batch = collide_sphere_pairs(self._cores, sid[sel], pose[srow], oid[sel], pose[orow], okind == _HULL,
                                     pp.margin[sel], check=False)
        return ContactStore.from_batch(batch, None, keys, flip)

    def _one_by_one(self, bodies, table, pp, index, old_caches, caches):
        """The pairs outside the batches, one narrow-phase call each (pair caches read from
        ``old_caches``, kept in ``caches``)."""
        pose = table.state.pose
        rows = []
        for k in index:
            i, j, p, q, margin = int(pp.ra[k]), int(pp.rb[k]), int(pp.p[k]), int(pp.q[k]), float(pp.margin[k])
            sa, sb = bodies[i].shapes[p], bodies[j].shapes[q]
            if isinstance(sb, TriMesh) or isinstance(sa, TriMesh):
                if isinstance(sa, TriMesh):
                    found = [(g, flip_manifold(m)) for g, m in collide_convex_trimesh(sb, pose[j], sa, pose[i],
                                                                                      margin)]
                else:
                    found = collide_convex_trimesh(sa, pose[i], sb, pose[j], margin)
            else:
                cache = old_caches.get((i, j, p, q)) or PairCache()
                caches[(i, j, p, q)] = cache
                found = [(0, collide_shapes(sa, pose[i], sb, pose[j], margin, cache))]
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
        return st


@njit
def _piece_aabbs(pose, start, center, axes, half, rows, out):
    """World AABBs ``out[piece]`` of the pieces of the body ``rows``: each piece's local box under
    its body's pose (centre ``R c + t``, half extents ``|R A^T| h``; infinite stays infinite)."""
    for i in rows:
        for k in range(start[i], start[i + 1]):
            if np.isinf(half[k, 0]):  # a half-space: it may reach anything
                for a in range(3):
                    out[k, 0, a], out[k, 1, a] = -np.inf, np.inf
                continue
            for a in range(3):
                c = pose[i, a, 3]
                for b in range(3):
                    c += pose[i, a, b] * center[k, b]
                e = 0.0
                for j in range(3):
                    m = pose[i, a, 0] * axes[k, j, 0] + pose[i, a, 1] * axes[k, j, 1] + pose[i, a, 2] * axes[k, j, 2]
                    e += abs(m) * half[k, j]
                out[k, 0, a] = c - e
                out[k, 1, a] = c + e


@njit
def _mid_phase(ra, rb, margins, start, boxes, out, out_margin):
    """The piece pairs ``(row a, row b, piece of a, piece of b)`` of the body pairs whose world
    AABBs, grown by the pair's margin, overlap; returns how many were written."""
    n = 0
    for k in range(ra.shape[0]):
        a, b, mg = ra[k], rb[k], margins[k]
        for p in range(start[a], start[a + 1]):
            for q in range(start[b], start[b + 1]):
                hit = True
                for j in range(3):
                    if boxes[p, 0, j] - mg > boxes[q, 1, j] or boxes[q, 0, j] > boxes[p, 1, j] + mg:
                        hit = False
                        break
                if hit:
                    out[n, 0], out[n, 1], out[n, 2], out[n, 3] = a, b, p - start[a], q - start[b]
                    out_margin[n] = mg
                    n += 1
    return n


def _snapshot(bodies):
    """What :meth:`ContactManager.update` reads of a :class:`app.body.BodyTable`, from a body list."""
    n = len(bodies)
    state = SimpleNamespace(pose=np.array([b.pose for b in bodies]).reshape(n, 4, 4),
                            sleeping=np.array([b.sleeping for b in bodies], dtype=bool).reshape(n))
    motion = np.array([DYNAMIC if b.moves else STATIC if b.motion == "static" else 1 for b in bodies],
                      dtype=np.int8).reshape(n)
    return SimpleNamespace(state=state, motion=motion,
                           shape_count=np.array([len(b.shapes) for b in bodies], np.int64).reshape(n))

