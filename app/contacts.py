"""Contact manifolds that persist from step to step, and contact events.

The narrow phase (:func:`collision.narrow_phase.collide_shapes`) answers one
step at a time. Here the world keeps, for every pair of convex pieces that
touch, a :class:`PersistentManifold`: the latest manifold, and for each of
its points how many steps it has existed and the impulses the solver
accumulated on it (warm starting). A new manifold continues the old one point
by point, by feature id first and by distance otherwise
(:func:`collision.manifold.match_contacts`), so a box resting on another keeps
the same four contacts while it sits still.

Mid phase: a body made of several convex pieces passes only the piece pairs
whose world AABBs (expanded by the contact margin) overlap to the narrow
phase. A static concave body's shape is its triangle mesh
(:class:`collision.shapes.TriMesh`): a piece against it gets one manifold per
touching triangle, or per plane of coplanar triangles
(:func:`collision.convex_mesh.collide_convex_trimesh`).

Events: a body pair *begins* touching on the first step one of its pieces'
manifolds has a point at zero gap or deeper, *persists* on every following
step, and *ends* on the first step without one (or when a body is removed).
Speculative points (a gap below the margin) do not count as touching.
"""

from dataclasses import dataclass, field

import numpy as np

from collision.convex_mesh import collide_convex_trimesh
from collision.hull_batch import HullTable, collide_hull_pairs
from collision.manifold import Manifold, SatCache, match_contacts
from collision.narrow_phase import PairCache, collide_shapes, flip_manifold
from collision.shapes import Hull, TriMesh, shape_world_aabb

__all__ = ["PersistentManifold", "ContactEvent", "ContactManager"]


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
        GJK simplex / SAT feature of the last step.
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
        self.manifolds = {}
        self.touching = {}
        self.events = []
        self.stats = {"piece_pairs": 0, "manifolds": 0, "points": 0}
        self._hulls = HullTable()  # every hull seen, packed for the batched kernel

    def clear(self):
        self.manifolds = {}
        self.touching = {}
        self.events = []

    def update(self, bodies, pairs, sweep=None):
        """Contacts for the candidate body pairs ``pairs`` ((i, j) into ``bodies``).

        ``sweep`` maps ``id(body)`` to how far the body may move in the coming
        step; a pair's margin grows by both (speculative contacts: the solver
        stops a fast body at the surface instead of letting it pass through).

        Returns
        -------
        list of ContactEvent
            This step's events (also kept in :attr:`events`).
        """
        old = self.manifolds
        new = {}
        piece_pairs = 0
        hull_pairs = []
        frozen = None
        for i, j in pairs:
            a, b = bodies[i], bodies[j]
            if a.motion == "static" and b.motion == "static":
                continue
            if not a.shapes or not b.shapes:
                continue
            if _resting(a) and _resting(b):  # asleep (or static): the contacts stay as they were
                if frozen is None:
                    frozen = {}
                    for key, pm in old.items():
                        frozen.setdefault((key[0], key[1]), []).append((key, pm))
                for key, pm in frozen.get((a, b), ()):
                    new[key] = pm
                continue
            margin = self.margin
            if sweep:
                margin += sweep.get(id(a), 0.0) + sweep.get(id(b), 0.0)
            for p, q in self._piece_pairs(a, b, margin):
                piece_pairs += 1
                if isinstance(a.shapes[p], Hull) and isinstance(b.shapes[q], Hull):
                    hull_pairs.append((a, b, p, q, margin))  # all of them in one compiled call below
                    continue
                for key, m, cache in self._contacts(a, b, p, q, old, margin):
                    self._keep(new, old.get(key), key, m, cache)
        if hull_pairs:
            self._hull_batch(hull_pairs, old, new)
        self.manifolds = new

        touching = {}
        for pm in new.values():
            if pm.touching:
                n = int(np.count_nonzero(pm.manifold.depths >= 0.0))
                touching[(pm.a, pm.b)] = touching.get((pm.a, pm.b), 0) + n
        events = []
        for pair, n in touching.items():
            events.append(ContactEvent("persist" if pair in self.touching else "begin", pair[0], pair[1], n))
        for pair in self.touching:
            if pair not in touching:
                events.append(ContactEvent("end", pair[0], pair[1], 0))
        self.touching = touching
        self.events = events
        self.stats = {"piece_pairs": piece_pairs, "manifolds": len(new),
                      "points": sum(len(pm.manifold.depths) for pm in new.values())}
        return events

    def _contacts(self, a, b, p, q, old, margin):
        """``(key, manifold, cache)`` for piece ``p`` of A against piece ``q`` of B: one manifold
        for two convex shapes, one per group of triangles against a mesh."""
        sa, sb = a.shapes[p], b.shapes[q]
        if isinstance(sb, TriMesh) or isinstance(sa, TriMesh):
            if isinstance(sa, TriMesh):
                found = [(k, flip_manifold(m)) for k, m in collide_convex_trimesh(sb, b.pose, sa, a.pose, margin)]
            else:
                found = collide_convex_trimesh(sa, a.pose, sb, b.pose, margin)
            return [((a, b, p, q, k), m, None) for k, m in found if len(m.depths)]
        key = (a, b, p, q)
        prev = old.get(key)
        cache = prev.cache if prev is not None else PairCache()
        m = collide_shapes(sa, a.pose, sb, b.pose, margin, cache)
        return [(key, m, cache)] if len(m.depths) else []

    def _hull_batch(self, hull_pairs, old, new):
        """Hull-hull piece pairs through :func:`collision.hull_batch.collide_hull_pairs`: one
        compiled call for the step (the same kernel, bit for bit, as one pair at a time)."""
        k = len(hull_pairs)
        ids = np.empty((2, k), np.int64)
        poses = np.empty((2, k, 4, 4))
        caches = np.empty((k, 3), np.int64)
        kept = []
        margins = np.array([h[4] for h in hull_pairs])
        for n, (a, b, p, q, _) in enumerate(hull_pairs):
            key = (a, b, p, q)
            prev = old.get(key)
            cache = prev.cache if prev is not None else PairCache()
            if cache.sat is None:
                cache.sat = SatCache()
            ids[0, n] = self._hulls.add(a.shapes[p].poly)
            ids[1, n] = self._hulls.add(b.shapes[q].poly)
            poses[0, n], poses[1, n] = a.pose, b.pose
            caches[n] = cache.sat.data
            kept.append((key, prev, cache))
        widest = float(margins.max())
        batch = collide_hull_pairs(self._hulls, ids[0], poses[0], ids[1], poses[1], widest, caches)
        for n, (key, prev, cache) in enumerate(kept):
            cache.sat.data[:] = caches[n]
            if batch.count[n]:
                m = batch.manifold(n)
                if margins[n] < widest:  # the batch ran with the widest margin: keep this pair's
                    m = _within(m, margins[n])
                if m is not None:
                    self._keep(new, prev, key, m, cache)

    def _keep(self, new, prev, key, m, cache):
        """Store manifold ``m`` under ``key``, continuing ``prev``'s points (age, impulses)."""
        k = len(m.depths)
        if prev is not None and np.array_equal(prev.manifold.ids, m.ids):  # the usual case: the same points
            new[key] = PersistentManifold(key[0], key[1], key[2], key[3], m, prev.age + 1, prev.impulses.copy(),
                                          cache if cache is not None else PairCache())
            return
        age = np.ones(k, np.int64)
        impulses = np.zeros((k, 3))
        if prev is not None and len(prev.manifold.depths):
            src = match_contacts(prev.manifold.ids, prev.manifold.points, m.ids, m.points, self.match_tol)
            hit = src >= 0
            age[hit] = prev.age[src[hit]] + 1
            impulses[hit] = prev.impulses[src[hit]]
        new[key] = PersistentManifold(key[0], key[1], key[2], key[3], m, age, impulses,
                                      cache if cache is not None else PairCache())

    def _piece_pairs(self, a, b, margin):
        """Mid phase: the piece pairs whose world AABBs, grown by the margin, overlap."""
        if len(a.shapes) == 1 and len(b.shapes) == 1:
            return [(0, 0)]
        ba = np.array([shape_world_aabb(s, a.pose) for s in a.shapes])
        bb = np.array([shape_world_aabb(s, b.pose) for s in b.shapes])
        lo_a, hi_a = ba[:, 0] - margin, ba[:, 1] + margin
        overlap = np.all((lo_a[:, None] <= bb[None, :, 1]) & (bb[None, :, 0] <= hi_a[:, None]), axis=2)
        return [(int(p), int(q)) for p, q in zip(*np.nonzero(overlap))]


def _within(m, margin):
    """``m`` with only its points whose gap is at most ``margin`` (None if none is left)."""
    keep = m.depths >= -margin
    if keep.all():
        return m
    if not keep.any():
        return None
    return Manifold(m.normal, m.points_a[keep], m.points_b[keep], m.depths[keep], m.ids[keep], m.kind, m.tests,
                    m.sat_depth)


def _resting(body):
    """A body whose contacts need no update: static, or dynamic and asleep."""
    return body.motion == "static" or (body.motion == "dynamic" and body.sleeping)
