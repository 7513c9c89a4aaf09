"""Why two bodies collide, GL-free: the picked pair, its traversal, separating axis, GJK and factors.

The user picks a pair: the selected body (a click, Tab) and a *partner*
(Ctrl+click, J, or the panel's combo; by default the body the selected one
touches, else the nearest). For the pair the :class:`PairInspector` computes,
from the library's recording functions:

- the OBB-tree traversal (:func:`collision.traversal_record.record_collide`):
  every node-pair box test with its depth, outcome and separating axis, which
  the user steps through one pair at a time;
- the separating axis (:mod:`collision.separating_axis`) of a convex pair: the
  chosen convex pieces of the two bodies, or the node pair of the traversal
  step; with both projection intervals and the gap, or the axis of least
  penetration when none separates. A body that collides as its exact surface
  (a static concave or open mesh, :class:`collision.shapes.TriMesh`) has no
  convex pieces: its "pieces" are its triangles, each a flat two-sided
  polygon, as the narrow phase tests them one by one; the automatic choice
  is the deepest or closest triangle;
- GJK step by step (:func:`collision.gjk_record.gjk_steps`) on the two pieces;
- the vector-symbol factors D, I, C, E (seed 003) of the two pieces.

Everything is cached on the bodies' poses and the choices, so a paused scene
costs nothing per frame, and drawn through the session's debug-draw
collector (:meth:`draw`).
"""

import time

import numpy as np

import obbcollide as co
from obbcollide.gjk_record import gjk_steps
from obbcollide.separating_axis import box_box_axes, convex_convex_axes
from obbcollide.traversal_record import axis_name, record_collide
from obbcollide.vector_symbol import CASE_NAMES, ZERO_TOL

# At most this many node pairs are drawn in the scene (each is two boxes of 12 lines); the panel
# and the HUD show the true count beside it when a traversal has more.
MAX_DRAWN_PAIRS = 5000
# The full table of separating axes of two hulls costs (edge pairs) x (vertices); above this the
# piece pair's axis is not tabulated (the panel says why) and the node pair's is shown instead.
MAX_AXIS_WORK = 2.0e7
# The vector-symbol factors of two hulls: polygon pairs above this are not computed (the panel says).
MAX_POLYGON_PAIRS = 400_000
INTERVAL_PX = 7   # the two projection intervals are drawn this many pixels either side of the axis line
GJK_MARKER_PX = 8  # half a GJK support point's or closest point's cross
# A view that took longer than SLOW_S to compute is recomputed at most every REFRESH_S while the
# pair moves (the panel says so); a new pair, piece or step recomputes at once.
SLOW_S = 0.005
REFRESH_S = 0.25
# Against a triangle mesh, the automatic choice scores (GJK / EPA) this many triangles nearest
# each convex piece of the other body (by the distance from the piece's centre, less its radius).
MESH_CANDIDATES = 24
# ... and then every triangle that could do better than the best of those, up to this many.
MAX_TRIANGLE_SCORES = 400

COLORS = {
    "current": (1.00, 0.85, 0.10),
    "interval_a": (1.00, 0.50, 0.05),
    "interval_b": (0.20, 0.65, 1.00),
    "gap": (0.30, 1.00, 0.85),
    "overlap": (1.00, 0.15, 0.35),
    "feature": (1.00, 1.00, 0.55),
    "simplex": (0.95, 0.95, 0.30),
    "closest": (1.00, 1.00, 1.00),
    "next": (1.00, 0.40, 0.85),
}


def _unit(x):
    n = float(np.linalg.norm(x))
    return x / n if n > 0 else x


def mesh_of(body):
    """The body's :class:`collision.shapes.TriMesh` (it collides as its exact surface), or None."""
    for s in getattr(body, "shapes", ()):
        if isinstance(s, co.TriMesh):
            return s
    return None


def triangle_piece(tree, k):
    """Face ``k`` of ``tree`` as a flat, two-sided :class:`collision.convex.ConvexPolyhedron`
    (model frame): its two polygons are the triangle seen from either side, its three edges
    the triangle's. The separating axes of a convex piece and a triangle are then the ones the
    narrow phase tries (RTCD 5.2.1): the triangle's normal, the piece's face normals and the
    cross products of their edges. None for a triangle of zero area."""
    v = np.ascontiguousarray(tree.vertices[tree.faces[k]], dtype=np.float64)
    n = np.cross(v[1] - v[0], v[2] - v[0])
    length = float(np.linalg.norm(n))
    if not length > 0.0:
        return None
    n = n / length
    return co.ConvexPolyhedron(vertices=v, triangles=np.array([[0, 1, 2], [0, 2, 1]], np.int64),
                               polygons=[np.array([0, 1, 2], np.int64), np.array([0, 2, 1], np.int64)],
                               normals=np.stack([n, -n]), offsets=np.array([n @ v[0], -(n @ v[0])]),
                               edges=np.array([[0, 1], [1, 2], [0, 2]], np.int64))


class PairInspector:
    """The pair the user inspects and the views computed for it. See the module docstring.

    Parameters
    ----------
    session : app.viewer.session.Session
    """

    def __init__(self, session):
        self.session = session
        self.partner_body = None   # the chosen partner (a Body); None: automatic
        self.piece_choice = (None, None)  # piece of A, piece of B; None: the closest / deepest pair
        self.step = None           # traversal step; None: the last (the whole traversal)
        self.gjk_step = None       # GJK step; None: the last
        self.axis_source = "pieces"  # "pieces" or "nodes" (the traversal step's node pair)
        self._cache = {}
        self._pieces = {}
        self.items = {}  # the panel's widget rectangles, by name (for tests)
        self._pair_ident = None  # the pair the steps and piece choices belong to
        self.lagging = set()  # the slow views shown from poses up to REFRESH_S old ("auto", "axis", "vs")

    # -- the pair ----------------------------------------------------------------------------

    @property
    def bodies(self):
        return self.session.world.bodies

    def auto_partner(self):
        """The partner when none is chosen: the first body the selected one touches, else the nearest."""
        sel = self.session.selected
        if sel is None or len(self.bodies) < 2:
            return None
        world = self.session.world
        for c in world.contacts:
            if sel in (c.a, c.b):
                return c.b if c.a == sel else c.a
        centre = self.bodies[sel].world_center()
        others = [k for k in range(len(self.bodies)) if k != sel]
        dist = [np.linalg.norm(self.bodies[k].world_center() - centre) for k in others]
        return others[int(np.argmin(dist))]

    @property
    def partner(self):
        """Index of the partner body (chosen, else automatic), or None."""
        sel = self.session.selected
        b = self.partner_body
        if b is not None and b in self.bodies and (sel is None or self.bodies[sel] is not b):
            return self.bodies.index(b)
        return self.auto_partner()

    @property
    def partner_is_auto(self):
        b = self.partner_body
        return not (b is not None and b in self.bodies and self.partner is not None
                    and self.bodies[self.partner] is b)

    def pair(self):
        """``(index of A, index of B)``: the selected body and its partner, or None."""
        sel = self.session.selected
        if sel is None or sel >= len(self.bodies):
            return None
        p = self.partner
        if p is None:
            return None
        ident = (id(self.bodies[sel]), id(self.bodies[p]))
        if ident != self._pair_ident:  # another pair (a click, Tab, a scene): its own steps and pieces
            self._pair_ident = ident
            self.piece_choice = (None, None)
            self.step = self.gjk_step = None
        return sel, p

    def set_partner(self, index):
        """Make body ``index`` the partner (None: back to automatic)."""
        self.partner_body = None if index is None else self.bodies[index]
        self.piece_choice = (self.piece_choice[0], None)
        self.step = self.gjk_step = None
        self.pair()  # the new pair, so that choices made next belong to it

    def set_selected(self, index):
        """Make body ``index`` the selected one (A of the pair)."""
        self.session.selected = index
        self.piece_choice = (None, self.piece_choice[1])
        self.step = self.gjk_step = None
        self.pair()

    def cycle_partner(self):
        """The next body after the partner (skipping the selected one) becomes the partner."""
        sel = self.session.selected
        n = len(self.bodies)
        if sel is None or n < 2:
            self.session.say("select a body first (click it, or Tab); then J picks its partner")
            return
        k = self.partner if self.partner is not None else sel
        k = (k + 1) % n
        if k == sel:
            k = (k + 1) % n
        self.set_partner(k)
        self.session.say(f"partner: {self.bodies[k].name}")

    # -- convex pieces -----------------------------------------------------------------------

    def pieces(self, body):
        """``[(ConvexPolyhedron in the model frame, label)]``: the convex pieces of a body that
        collides as convex pieces (a scene file's decomposition, a primitive's hull), else the
        convex hull of its mesh; [] for a flat mesh (a ground) and for a body that collides as
        its triangles (:func:`mesh_of`; :meth:`piece` gives those)."""
        key = id(body)
        hit = self._pieces.get(key)
        if hit is not None and hit[0] is body:
            return hit[1]
        out = []
        if mesh_of(body) is not None:
            self._pieces[key] = (body, out)
            return out
        if body.pieces is not None:
            out = [(h, f"piece {i} ({len(h.vertices)} vertices)") for i, h in enumerate(body.pieces.hulls)]
        else:
            hulls = [s.poly for s in getattr(body, "shapes", []) if isinstance(s, co.Hull)]
            out = [(h, f"hull {i} ({len(h.vertices)} vertices)") for i, h in enumerate(hulls)]
        if not out:
            try:
                h = co.ConvexPolyhedron.from_points(np.asarray(body.vertices, float))
                out = [(h, f"convex hull of the mesh ({len(h.vertices)} vertices)")]
            except (ValueError, RuntimeError, np.linalg.LinAlgError):
                out = []
        self._pieces[key] = (body, out)
        return out

    def piece(self, body, k):
        """``(ConvexPolyhedron in the model frame, label)`` of piece ``k``: a convex piece, or
        for a body that collides as its triangles, its triangle ``k`` (:func:`triangle_piece`)."""
        mesh = mesh_of(body)
        if mesh is None:
            return self.pieces(body)[k]
        key = ("triangle", id(mesh.tree), int(k))
        hit = self._pieces.get(key)
        if hit is None or hit[0] is not mesh.tree:
            if len(self._pieces) > 4096:
                self._pieces.clear()
            hit = (mesh.tree, (triangle_piece(mesh.tree, int(k)), f"triangle {int(k)} of its surface"))
            self._pieces[key] = hit
        return hit[1]

    def piece_count(self, body):
        """How many pieces :meth:`piece` may be asked for (a triangle-mesh body: its faces)."""
        mesh = mesh_of(body)
        return len(self.pieces(body)) if mesh is None else len(mesh.tree.faces)

    def choices(self, body):
        """``[(index, label)]`` a person may pick from for ``body``'s piece: every convex piece,
        or for a triangle-mesh body the triangles the automatic choice last scored (and the
        one chosen)."""
        if mesh_of(body) is None:
            return list(enumerate(lab for _, lab in self.pieces(body)))
        near = set(self._cache.get("near_triangles", {}).get(id(body), ()))
        side = 0 if self.pair() is not None and self.bodies[self.pair()[0]] is body else 1
        if self.piece_choice[side] is not None:
            near.add(self.piece_choice[side])
        return [(k, self.piece(body, k)[1]) for k in sorted(near)]

    def _posed(self, body, k):
        return self.piece(body, k)[0].transformed(body.pose)

    def piece_pair(self):
        """``(piece of A, piece of B, automatic)``, or None when a body has no convex piece or
        both collide as triangle meshes.

        Automatic: the pair with the deepest overlap, else the closest pair (GJK distance
        between the hulls, EPA depth when they overlap; RTCD 9.5), among the 24 whose
        bounding spheres come nearest; against a triangle mesh, the deepest or closest
        triangle (:meth:`_closest_triangle`)."""
        ab = self.pair()
        if ab is None:
            return None
        a, b = (self.bodies[k] for k in ab)
        if mesh_of(a) is not None and mesh_of(b) is not None:
            return None
        na, nb = self.piece_count(a), self.piece_count(b)
        if not na or not nb:
            return None
        ca, cb = self.piece_choice
        ca = ca if ca is not None and ca < na and self._usable(a, ca) else None
        cb = cb if cb is not None and cb < nb and self._usable(b, cb) else None
        if ca is not None and cb is not None:
            return ca, cb, False
        ident, poses = ("auto", id(a), id(b), ca, cb), (a.pose.tobytes(), b.pose.tobytes())
        if not self._reusable("auto", ident, poses):
            t0 = time.perf_counter()
            self._store("auto", ident, poses, self._closest_pieces(a, b, ca, cb), t0)
        i, j = self._cache["auto"]
        return i, j, True

    def no_pieces_reason(self):
        """Why :meth:`piece_pair` is None for the pair, in a few words."""
        ab = self.pair()
        if ab is None:
            return "no pair"
        if all(mesh_of(self.bodies[k]) is not None for k in ab):
            return "both bodies collide as triangle meshes (both static, they never touch)"
        return "a body has no convex piece (a flat ground)"

    def _usable(self, body, k):
        return mesh_of(body) is None or self.piece(body, k)[0] is not None

    def _spheres(self, body, rows):
        """World centres (n, 3) and radii (n,) of the bounding spheres of ``body``'s convex pieces ``rows``."""
        c, r = [], []
        for i in rows:
            v = self.piece(body, i)[0].vertices
            m = v.mean(0)
            c.append(body.pose[:3, :3] @ m + body.pose[:3, 3])
            r.append(float(np.max(np.linalg.norm(v - m, axis=1))))
        return np.array(c).reshape(-1, 3), np.array(r)

    def _near_triangles(self, convex, rows, mesh_body):
        """``[(score, piece, triangle)]``: for each convex piece of ``convex`` in ``rows``, the
        :data:`MESH_CANDIDATES` triangles of ``mesh_body`` nearest its bounding sphere (the
        distance from its centre to the triangle, less its radius), found among the
        4 x :data:`MESH_CANDIDATES` whose bounding spheres come nearest."""
        tree = mesh_of(mesh_body).tree
        key = ("triangles", id(tree))
        hit = self._pieces.get(key)
        if hit is None or hit[0] is not tree:
            tri = tree.vertices[tree.faces]
            area2 = np.linalg.norm(np.cross(tri[:, 1] - tri[:, 0], tri[:, 2] - tri[:, 0]), axis=1)
            ok = np.flatnonzero(area2 > 0.0)
            mid = tri[ok].mean(1)
            reach = np.linalg.norm(tri[ok] - mid[:, None], axis=2).max(1)
            hit = (tree, (tri[ok], ok, mid, reach))
            self._pieces[key] = hit
        tri, ok, mid, reach = hit[1]
        centres, radii = self._spheres(convex, rows)
        rot, t = mesh_body.pose[:3, :3], mesh_body.pose[:3, 3]
        local = (centres - t) @ rot  # the pieces' centres in the mesh's frame
        keep = min(4 * MESH_CANDIDATES, len(ok))
        near = np.empty((len(local), keep), np.int64)
        for x, c in enumerate(local):  # a piece at a time: a scan's million triangles times many pieces is a lot
            bound = np.linalg.norm(mid - c, axis=1) - reach
            near[x] = np.argpartition(bound, keep - 1)[:keep]
        p = np.repeat(local, keep, axis=0)
        t3 = tri[near.ravel()]
        d = (np.linalg.norm(co.closest_pt_point_triangle(p, t3[:, 0], t3[:, 1], t3[:, 2]) - p, axis=1)
             .reshape(len(local), keep) - radii[:, None])
        out = []
        for x, i in enumerate(rows):
            best = np.argsort(d[x], kind="stable")[:MESH_CANDIDATES]
            out += [(float(d[x, k]), i, int(ok[near[x, k]])) for k in best]
        return out

    def _closest_pieces(self, a, b, ca, cb):
        ma, mb = mesh_of(a) is not None, mesh_of(b) is not None
        rows = [ca] if ca is not None else range(self.piece_count(a))
        cols = [cb] if cb is not None else range(self.piece_count(b))
        if ma or mb:
            return self._closest_triangle(a, b, rows, cols)
        (c_a, r_a), (c_b, r_b) = self._spheres(a, rows), self._spheres(b, cols)
        gap = np.linalg.norm(c_a[:, None] - c_b[None], axis=2) - r_a[:, None] - r_b[None]
        cands = sorted((float(gap[x, y]), i, j) for x, i in enumerate(rows) for y, j in enumerate(cols))
        if len(cands) == 1:
            return cands[0][1], cands[0][2]
        best = None
        for _, i, j in cands[:24]:  # the bounding spheres' order, then GJK / EPA on the nearest few
            score = self._score(a, i, b, j)
            if best is None or score < best[0]:
                best = (score, i, j)
        return best[1], best[2]

    def _score(self, a, i, b, j):
        """GJK's distance of piece ``i`` of ``a`` and piece ``j`` of ``b``, minus EPA's depth when they overlap."""
        return -co.convex_penetration(self.piece(a, i)[0].vertices, a.pose, self.piece(b, j)[0].vertices, b.pose).depth

    def _closest_triangle(self, a, b, rows, cols):
        """The deepest (else the closest) pair of a convex piece and a triangle, one of ``a`` and
        ``b`` a triangle-mesh body. First the :meth:`_near_triangles` of each piece are scored;
        then, with the best score ``s`` so far, every triangle that could do better is scored
        too: one that overlaps the piece's box grown by ``max(s, 0)`` (a triangle nearer than
        ``s`` to the piece, or overlapping it, overlaps that box; :func:`collision.triangles_near_box`),
        up to :data:`MAX_TRIANGLE_SCORES` in all."""
        swap = mesh_of(a) is not None
        convex, mesh_body, pieces, tris = (b, a, cols, rows) if swap else (a, b, rows, cols)

        def score(i, j):  # i a piece of the convex body, j a triangle (either way round, the same answer)
            return self._score(convex, i, mesh_body, j)

        fixed = list(tris) if len(tris) == 1 else None  # a triangle chosen by hand
        cands = ([(0.0, i, fixed[0]) for i in pieces] if fixed else self._near_triangles(convex, pieces, mesh_body))
        cands.sort()
        seen, best = set(), None
        for _, i, j in cands[:24]:
            seen.add((i, j))
            sc = score(i, j)
            if best is None or sc < best[0]:
                best = (sc, i, j)
        if not fixed:
            tree, budget = mesh_of(mesh_body).tree, MAX_TRIANGLE_SCORES
            rot, t = convex.pose[:3, :3], convex.pose[:3, 3]
            for i in pieces:
                if budget == 0:
                    break
                c, axes, half = self._piece_box(convex, i)
                near = co.triangles_near_box(tree, mesh_body.pose, rot @ c + t, axes @ rot.T,
                                             half + max(best[0], 0.0))
                for j in near:
                    if (i, int(j)) in seen or self.piece(mesh_body, int(j))[0] is None:
                        continue
                    if budget == 0:
                        break
                    budget -= 1
                    seen.add((i, int(j)))
                    sc = score(i, int(j))
                    if sc < best[0]:
                        best = (sc, i, int(j))
        _, i, j = best
        # The panel offers the triangles scored first and the winner.
        self._cache.setdefault("near_triangles", {})[id(mesh_body)] = sorted({c[2] for c in cands[:24]} | {j})
        return (j, i) if swap else (i, j)

    def _piece_box(self, body, k):
        """The vertex-covariance OBB ``(centre, axes rows, half)`` of a convex piece, model frame."""
        key = ("box", id(body), int(k))
        hit = self._pieces.get(key)
        if hit is None or hit[0] is not body:
            obb = co.OBB.from_points(self.piece(body, k)[0].vertices)
            hit = (body, (obb.center, obb.axes, obb.half_extents))
            self._pieces[key] = hit
        return hit[1]

    def _reusable(self, name, ident, poses):
        """May the cached ``name`` be shown? Yes for the same pair, pieces and step at the same
        poses; and at new poses too when it is slow to compute and was computed less than
        REFRESH_S ago (then :meth:`lagging` says so)."""
        c = self._cache
        if c.get(name + "_ident") != ident:
            return False
        if c.get(name + "_poses") == poses:
            self.lagging.discard(name)
            return True
        if c.get(name + "_cost", 0.0) > SLOW_S and time.monotonic() - c.get(name + "_time", 0.0) < REFRESH_S:
            self.lagging.add(name)
            return True
        return False

    def _store(self, name, ident, poses, value, t0):
        c = self._cache
        c[name], c[name + "_ident"], c[name + "_poses"] = value, ident, poses
        c[name + "_cost"], c[name + "_time"] = time.perf_counter() - t0, time.monotonic()
        self.lagging.discard(name)

    # -- the traversal -----------------------------------------------------------------------

    def _key(self, ab):
        a, b = self.bodies[ab[0]], self.bodies[ab[1]]
        return (id(a), id(b), a.pose.tobytes(), b.pose.tobytes())

    def traversal(self):
        """The :class:`collision.traversal_record.TraversalRecord` of the pair's trees, or None."""
        ab = self.pair()
        if ab is None:
            return None
        key = self._key(ab)
        if self._cache.get("trav_key") != key:
            a, b = self.bodies[ab[0]], self.bodies[ab[1]]
            self._cache["trav_key"] = key
            self._cache["trav"] = record_collide(a.tree, a.pose, b.tree, b.pose)
        return self._cache["trav"]

    def root_axis(self):
        """The axis (0-14) that separates the pair's root boxes, -1 when they overlap or there is no pair."""
        rec = self.traversal()
        return -1 if rec is None else int(rec.axis[0])

    def current_step(self):
        """The traversal step shown (0-based), or None without a pair."""
        rec = self.traversal()
        if rec is None:
            return None
        last = rec.box_tests - 1
        return last if self.step is None else int(np.clip(self.step, 0, last))

    def step_to(self, k):
        """Show the traversal up to box test ``k`` (clamped; past the end: the whole traversal)."""
        rec = self.traversal()
        if rec is None:
            self.session.say("select two bodies first (click, then Ctrl+click or J)")
            return
        k = int(k)
        self.step = None if k >= rec.box_tests - 1 else max(0, k)

    def step_by(self, delta):
        cur = self.current_step()
        self.step_to(0 if cur is None else cur + delta)  # without a pair step_to says what to do

    def node_boxes(self, k):
        """World boxes ``((centre, axes rows, half), (centre, axes, half))`` of step ``k``'s node pair."""
        rec = self.traversal()
        ia, ib = self.pair()
        out = []
        for body, node in ((self.bodies[ia], rec.pairs[k, 0]), (self.bodies[ib], rec.pairs[k, 1])):
            t, p = body.tree, body.pose
            out.append((p[:3, :3] @ t.centers[node] + p[:3, 3], t.axes[node] @ p[:3, :3].T, t.half_extents[node]))
        return out

    def step_text(self, k=None):
        """One line on traversal step ``k`` (default the current one)."""
        rec = self.traversal()
        if rec is None:
            return ""
        k = self.current_step() if k is None else k
        na, nb = rec.pairs[k]
        ta, tb = (self.bodies[i].tree for i in self.pair())
        leaf = ta.child[na] < 0 and tb.child[nb] < 0
        head = f"test {k + 1} of {rec.box_tests}: node {na} of A x node {nb} of B (depth {rec.depth[k]})"
        if rec.axis[k] >= 0:
            return f"{head}: pruned, separated by axis {axis_name(int(rec.axis[k]))}"
        if leaf:
            return (f"{head}: boxes overlap; leaves: {rec.tri_tests[k]} triangle tests, "
                    f"{rec.tri_hits[k]} intersecting")
        return f"{head}: boxes overlap, descend into the children"

    # -- the separating axis -----------------------------------------------------------------

    def axis_view(self):
        """The separating-axis view of the pair, or None without a pair.

        Returns a dict: ``table`` (:class:`collision.separating_axis.AxisTable`), ``source``
        (``"pieces"`` or ``"nodes"``), ``shapes`` (world ConvexPolyhedra, or world boxes),
        ``labels`` and ``note`` (why the source differs from the one asked for, or "")."""
        ab = self.pair()
        if ab is None:
            return None
        note = ""
        source = self.axis_source
        pp = self.piece_pair() if source == "pieces" else None
        if source == "pieces" and pp is None:
            source, note = "nodes", f"{self.no_pieces_reason()}: the node pair's axis instead"
        if source == "pieces":
            a, b = self.bodies[ab[0]], self.bodies[ab[1]]
            ha, hb = self.piece(a, pp[0])[0], self.piece(b, pp[1])[0]
            work = (len(ha.edges) * len(hb.edges)) * (len(ha.vertices) + len(hb.vertices))
            if work > MAX_AXIS_WORK:
                source = "nodes"
                note = (f"the pieces have {len(ha.edges)} and {len(hb.edges)} edges: "
                        f"{len(ha.edges) * len(hb.edges)} edge pairs are too many to tabulate each frame, "
                        "so the traversal step's node pair is shown")
        k = self.current_step()
        ident = ("axis", source, self._key(ab)[:2], pp, k if source == "nodes" else None)
        if self._reusable("axis", ident, self._key(ab)[2:]):
            view = dict(self._cache["axis"])
            view["note"] = note
            return view
        t0 = time.perf_counter()
        if source == "pieces":
            sa, sb = self._posed(self.bodies[ab[0]], pp[0]), self._posed(self.bodies[ab[1]], pp[1])
            table = convex_convex_axes(sa, sb)
            labels = (self.piece(self.bodies[ab[0]], pp[0])[1], self.piece(self.bodies[ab[1]], pp[1])[1])
        else:
            sa, sb = self.node_boxes(k)
            table = box_box_axes(*sa, *sb)
            rec = self.traversal()
            labels = (f"node {rec.pairs[k, 0]}", f"node {rec.pairs[k, 1]}")
        view = {"table": table, "source": source, "shapes": (sa, sb), "labels": labels, "step": k}
        self._store("axis", ident, self._key(ab)[2:], view, t0)
        view = dict(view)
        view["note"] = note
        return view

    @staticmethod
    def axis_text(view):
        """Two lines: which axis, and the gap or overlap."""
        t = view["table"]
        row = t.best
        if view["source"] == "nodes":
            which = axis_name(int(t.index[row]))
        else:
            which = t.describe(row)
        if t.separated:
            return (f"separating axis: {which}",
                    f"gap {t.gap[row]:.4g} (A's interval ends at {t.hi_a[row]:.4g}, B's starts at {t.lo_b[row]:.4g})")
        return (f"no axis separates them: least penetration on {which}",
                f"overlap {-t.gap[row]:.4g} along it (of {len(t)} candidate axes)")

    # -- GJK and the vector-symbol factors -------------------------------------------------------

    def gjk(self):
        """GJK's steps (:func:`collision.gjk_record.gjk_steps`) on the piece pair, or None."""
        pp = self.piece_pair()
        if pp is None:
            return None
        ab = self.pair()
        key = ("gjk", self._key(ab), pp[:2])
        if self._cache.get("gjk_key") != key:
            a, b = self.bodies[ab[0]], self.bodies[ab[1]]
            self._cache["gjk_key"] = key
            self._cache["gjk"] = gjk_steps(self.piece(a, pp[0])[0].vertices, a.pose,
                                           self.piece(b, pp[1])[0].vertices, b.pose)
        return self._cache["gjk"]

    def current_gjk_step(self):
        steps = self.gjk()
        if steps is None:
            return None
        return len(steps) - 1 if self.gjk_step is None else int(np.clip(self.gjk_step, 0, len(steps) - 1))

    def gjk_step_to(self, k):
        steps = self.gjk()
        if steps is None:
            self.session.say("select two bodies with convex pieces first")
            return
        self.gjk_step = None if k >= len(steps) - 1 else max(0, int(k))

    def gjk_step_by(self, delta):
        cur = self.current_gjk_step()
        self.gjk_step_to(0 if cur is None else cur + delta)

    def factors(self):
        """The vector-symbol factors of the piece pair (seed 003), or None.

        Returns a dict: ``result`` (:class:`collision.vector_symbol.VectorSymbolResult`, None when
        there are too many polygon pairs), ``D`` ``{(sign name): count}`` of the position factors
        of B's vertices against A's face planes and of A's against B's, ``polygons`` (f_a, f_b),
        ``cases`` {case name: count}, ``note``."""
        pp = self.piece_pair()
        if pp is None:
            return None
        ab = self.pair()
        ident = ("vs", self._key(ab)[:2], pp[:2])
        if self._reusable("vs", ident, self._key(ab)[2:]):
            return self._cache["vs"]
        t0 = time.perf_counter()
        sa, sb = self._posed(self.bodies[ab[0]], pp[0]), self._posed(self.bodies[ab[1]], pp[1])
        ma, mb = co.StandardModel.from_polyhedron(sa), co.StandardModel.from_polyhedron(sb)
        fa, fb = len(ma.normals), len(mb.normals)
        out = {"polygons": (fa, fb), "result": None, "note": "", "cases": {}}
        scale = max(float(np.abs(sa.vertices).max()), float(np.abs(sb.vertices).max()), 1.0)
        tol = ZERO_TOL * scale
        # D(V, P) = (V - V_r) . n_P for every vertex V of one piece and face P of the other.
        d_ba = np.einsum("vfk,fk->vf", sb.vertices[:, None, :] - ma.refs[None], ma.normals)
        d_ab = np.einsum("vfk,fk->vf", sa.vertices[:, None, :] - mb.refs[None], mb.normals)
        out["D"] = {name: {"+": int((d > tol).sum()), "0": int((np.abs(d) <= tol).sum()),
                           "-": int((d < -tol).sum()), "inside": int(np.all(d <= tol, axis=1).sum()),
                           "vertices": len(d)}
                    for name, d in (("B vs A's faces", d_ba), ("A vs B's faces", d_ab))}
        if fa * fb > MAX_POLYGON_PAIRS:
            out["note"] = f"{fa} x {fb} polygon pairs: too many to compute each frame"
        else:
            r = co.model_collision_factor(ma, mb)
            out["result"] = r
            codes, counts = np.unique(r.cases, return_counts=True)
            out["cases"] = {CASE_NAMES.get(int(c), "not computed"): int(n) for c, n in zip(codes, counts)}
            out["intersecting"] = int((r.I != 0).sum())
        self._store("vs", ident, self._key(ab)[2:], out, t0)
        return out

    # -- drawing -----------------------------------------------------------------------------

    def draw(self, draw, flags, colors):
        """Draw the views that are on (``flags``: the session's overlay flags) into ``draw``.

        Returns ``(visited, pruned)`` of the traversal drawn (0, 0 when it is off)."""
        counts = (0, 0)
        if self.pair() is None:
            return counts
        if flags.get("traversal"):
            counts = self._draw_traversal(draw, colors)
        if flags.get("axis"):
            view = self.axis_view()
            if view is not None:
                self._draw_axis(draw, view)
        if flags.get("gjk"):
            self._draw_gjk(draw)
        return counts

    def _draw_traversal(self, draw, colors):
        rec = self.traversal()
        k = self.current_step()
        ia, ib = self.pair()
        key = (self._cache["trav_key"], k)
        if self._cache.get("trav_lines_key") != key:  # box edges as segments, kept while nothing moves
            from .buffers import box_lines

            upto = slice(max(0, k + 1 - MAX_DRAWN_PAIRS), k + 1)  # the latest pairs when over the cap
            pairs, overlap = rec.pairs[upto], rec.overlap[upto]
            a, b = self.bodies[ia], self.bodies[ib]
            lines = []
            for flag in (True, False):
                sel = pairs[overlap == flag]
                c = np.concatenate([a.tree.centers[sel[:, 0]] @ a.pose[:3, :3].T + a.pose[:3, 3],
                                    b.tree.centers[sel[:, 1]] @ b.pose[:3, :3].T + b.pose[:3, 3]])
                ax = np.concatenate([a.tree.axes[sel[:, 0]] @ a.pose[:3, :3].T,
                                     b.tree.axes[sel[:, 1]] @ b.pose[:3, :3].T])
                h = np.concatenate([a.tree.half_extents[sel[:, 0]], b.tree.half_extents[sel[:, 1]]])
                lines.append(box_lines(c, ax, h).reshape(-1, 2, 3) if len(sel) else None)
            self._cache["trav_lines_key"], self._cache["trav_lines"] = key, lines
        for seg, color in zip(self._cache["trav_lines"], (colors["visited"], colors["pruned"])):
            if seg is not None:
                draw.segments(seg, color)
        if self.step is not None:  # stepping: the current pair stands out
            (c1, a1, h1), (c2, a2, h2) = self.node_boxes(k)
            draw.boxes(np.stack([c1, c2]), np.stack([a1, a2]), np.stack([h1, h2]), COLORS["current"])
        return int(rec.overlap[:k + 1].sum()), int((~rec.overlap[:k + 1]).sum())

    def _draw_axis(self, draw, view):
        t = view["table"]
        row = t.best
        sa, sb = view["shapes"]
        u = t.axes[row]
        if view["source"] == "pieces":
            draw.segments(sa.vertices[sa.edges], COLORS["interval_a"])
            draw.segments(sb.vertices[sb.edges], COLORS["interval_b"])
            va, vb = sa.vertices, sb.vertices
            self._draw_feature(draw, t, row, sa, sb)
        else:
            draw.boxes(np.stack([sa[0], sb[0]]), np.stack([sa[1], sb[1]]), np.stack([sa[2], sb[2]]),
                       COLORS["feature"])
            signs = np.array([[i, j, k] for i in (-1, 1) for j in (-1, 1) for k in (-1, 1)], float)
            va = sa[0] + (signs * sa[2]) @ sa[1]
            vb = sb[0] + (signs * sb[2]) @ sb[1]
        # The axis as a line beside the two shapes (off to the side as seen from the camera, so
        # that neither hides it), both intervals along it, and lines from the extreme vertices
        # of each shape to where they project.
        cam = self.session.camera
        view_dir = _unit(cam.target - cam.eye)
        side = _unit(np.cross(u, view_dir))
        if not np.any(side):
            side = _unit(np.cross(u, [0.0, 1.0, 0.0] if abs(u[1]) < 0.9 else [1.0, 0.0, 0.0]))
        up = _unit(np.cross(view_dir, u))  # on screen, across the axis
        if up @ [0.0, 1.0, 0.0] < 0:
            up = -up
        both = np.vstack([va, vb])
        mid = both.mean(0)
        reach = float(np.max((both - mid) @ up))
        lo, hi = min(t.lo_a[row], t.lo_b[row]), max(t.hi_a[row], t.hi_b[row])
        pad = 0.15 * (hi - lo) + 1e-9
        base = mid + up * (reach + 0.6 * pad) - u * (mid @ u)  # the line's point at projection 0
        draw.segments(np.array([[base + u * (lo - pad), base + u * (hi + pad)]]), (0.70, 0.45, 1.00))
        px = float(draw.pixel_size((base + u * (mid @ u))[None])[0])
        across = up if np.any(up) else side
        for (s0, s1), sign, color in (((t.lo_a[row], t.hi_a[row]), 1, COLORS["interval_a"]),
                                      ((t.lo_b[row], t.hi_b[row]), -1, COLORS["interval_b"])):
            for off in (INTERVAL_PX - 1, INTERVAL_PX, INTERVAL_PX + 1):  # a 3-pixel band either side
                o = across * sign * off * px
                draw.segments(np.array([[base + u * s0 + o, base + u * s1 + o]]), color)
        gap_lo, gap_hi = sorted((t.hi_a[row], t.lo_b[row]))
        color = COLORS["gap"] if t.separated else COLORS["overlap"]
        for off in (-1, 0, 1):
            o = across * off * px
            draw.segments(np.array([[base + u * gap_lo + o, base + u * gap_hi + o]]), color)
        for verts, color in ((va, COLORS["interval_a"]), (vb, COLORS["interval_b"])):
            s = verts @ u
            ends = verts[[int(np.argmin(s)), int(np.argmax(s))]]
            draw.segments(np.stack([ends, base + np.outer(ends @ u, u)], axis=1), color)
        # The two vertices that face each other across the gap (or overlap), marked.
        pa = va[int(np.argmax(va @ u))]
        pb = vb[int(np.argmin(vb @ u))]
        draw.points(np.stack([pa, pb]), COLORS["feature"])

    @staticmethod
    def _draw_feature(draw, t, row, sa, sb):
        i, j = t.feature[row]
        if t.kind[row] == 0:
            loop = sa.vertices[sa.polygons[i]]
            draw.segments(np.stack([loop, np.roll(loop, -1, axis=0)], axis=1), COLORS["feature"])
        elif t.kind[row] == 1:
            loop = sb.vertices[sb.polygons[j]]
            draw.segments(np.stack([loop, np.roll(loop, -1, axis=0)], axis=1), COLORS["feature"])
        else:
            draw.segments(np.stack([sa.vertices[sa.edges[i]], sb.vertices[sb.edges[j]]]), COLORS["feature"])

    def _draw_gjk(self, draw):
        steps = self.gjk()
        if steps is None:
            return
        s = steps[self.current_gjk_step()]
        ab, pp = self.pair(), self.piece_pair()
        sa, sb = self._posed(self.bodies[ab[0]], pp[0]), self._posed(self.bodies[ab[1]], pp[1])
        draw.segments(sa.vertices[sa.edges], COLORS["interval_a"])
        draw.segments(sb.vertices[sb.edges], COLORS["interval_b"])
        draw.segments(np.stack([s.support_a, s.support_b], axis=1), COLORS["simplex"])  # each simplex vertex a - b
        marker = draw.marker_px
        draw.marker_px = GJK_MARKER_PX
        draw.points(s.support_a, COLORS["simplex"])
        draw.points(s.support_b, COLORS["simplex"])
        draw.points(np.stack([s.point_a, s.point_b]), COLORS["closest"])
        draw.segments(np.stack([s.point_a, s.point_b])[None], COLORS["closest"])
        if s.next_support is not None:
            ia, ib = s.next_support
            a = self.bodies[ab[0]]
            b = self.bodies[ab[1]]
            pa = a.pose[:3, :3] @ self.piece(a, pp[0])[0].vertices[ia] + a.pose[:3, 3]
            pb = b.pose[:3, :3] @ self.piece(b, pp[1])[0].vertices[ib] + b.pose[:3, 3]
            draw.points(np.stack([pa, pb]), COLORS["next"])
            draw.segments(np.stack([pa, pb])[None], COLORS["next"])
        draw.marker_px = marker

    # -- text --------------------------------------------------------------------------------

    def hud_lines(self, flags):
        """The HUD's lines on the pair (only for the views that are on)."""
        if not any(flags.get(k) for k in ("traversal", "axis", "gjk")):
            return []
        ab = self.pair()
        if ab is None:
            return ["pair: select a body, then Ctrl+click (or J) its partner"]
        a, b = (self.bodies[k] for k in ab)
        lines = [f"pair: A = {a.name}, B = {b.name}" + (" (nearest / touching)" if self.partner_is_auto else "")]
        if flags.get("traversal"):
            rec = self.traversal()
            k = self.current_step()
            visited = int(rec.overlap[:k + 1].sum())
            pruned = k + 1 - visited
            drawn = min(k + 1, MAX_DRAWN_PAIRS)
            lines.append(f"traversal: {visited} node pairs overlapped, {pruned} pruned"
                         + (f" (step {k + 1} of {rec.box_tests})" if self.step is not None else "")
                         + (f"; the last {drawn} of {k + 1} drawn" if drawn < k + 1 else ""))
            if self.step is not None:
                lines.append(self.step_text(k))
        if flags.get("axis"):
            view = self.axis_view()
            lines.append(f"axis ({'the pieces' if view['source'] == 'pieces' else 'the node pair'}): "
                         + "; ".join(self.axis_text(view)))
        if flags.get("gjk"):
            steps = self.gjk()
            if steps is None:
                lines.append("GJK: a body has no convex piece")
            else:
                s = steps[self.current_gjk_step()]
                lines.append(f"GJK iteration {s.iteration} of {steps[-1].iteration}: "
                             f"simplex of {len(s.simplex)}, distance {s.distance:.4g}"
                             + (" (overlap)" if s.overlap else ""))
        return lines
