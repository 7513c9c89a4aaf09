"""Bodies and the per-frame loop: move, broad phase, narrow phase. No GL here.

A :class:`Body` is a mesh with its OBB tree, its convex pieces (the shapes of
the narrow phase), a pose and a colour. The :class:`World` advances bodies in
fixed time steps (an accumulator decoupled from the frame rate, capped so a
slow frame cannot spiral; seed 004, 2.4). After every step it asks the broad
phase (one of :data:`collision.broad_phase.BROAD_PHASES`, switchable at run
time, over world AABBs of each tree's root OBB) for candidate body pairs, and
the contact manager (:mod:`app.contacts`: mid phase over the convex pieces,
then :func:`collision.narrow_phase.collide_shapes`) for persistent contact
manifolds and begin / persist / end events. Once per frame it also finds the
exact intersecting triangles and their intersection segments
(:func:`collision.collide`), which the viewer draws.
"""

import math
import time
from dataclasses import dataclass, field

import numpy as np

import collision as co
from collision.broad_phase import BROAD_PHASES, make_broad_phase
from collision.shapes import HalfSpace, Hull

from .contacts import ContactManager
from .dynamics import Dynamics


def rotation(axis, angle):
    """(3, 3) rotation about a unit axis (Rodrigues)."""
    axis = np.asarray(axis, float)
    axis = axis / np.linalg.norm(axis)
    k = np.array([[0, -axis[2], axis[1]], [axis[2], 0, -axis[0]], [-axis[1], axis[0], 0]])
    return np.eye(3) + math.sin(angle) * k + (1 - math.cos(angle)) * (k @ k)


def pose_matrix(rot=None, translation=(0, 0, 0)):
    p = np.eye(4)
    if rot is not None:
        p[:3, :3] = rot
    p[:3, 3] = translation
    return p


def orthonormalize(p):
    """Re-orthonormalise the rotation of a pose (4, 4) or of a stack (n, 4, 4).

    The nearest rotation (polar decomposition by SVD) keeps many small
    rotations rigid.
    """
    p = np.asarray(p, float)
    u, _, vt = np.linalg.svd(p[..., :3, :3])
    flip = np.linalg.det(u @ vt) < 0
    u[..., :, -1] *= np.where(flip, -1.0, 1.0)[..., None]
    out = p.copy()
    out[..., :3, :3] = u @ vt
    return out


def rotations(axes, angles):
    """(n, 3, 3) rotations about unit ``axes`` (n, 3) by ``angles`` (n,) (Rodrigues, batched)."""
    k = np.zeros((len(axes), 3, 3))
    k[:, 0, 1], k[:, 0, 2], k[:, 1, 2] = -axes[:, 2], axes[:, 1], -axes[:, 0]
    k -= np.transpose(k, (0, 2, 1))
    s, c = np.sin(angles)[:, None, None], np.cos(angles)[:, None, None]
    return np.eye(3) + s * k + (1 - c) * (k @ k)


@dataclass(eq=False)
class Body:
    """A rigid mesh in the scene.

    Attributes
    ----------
    name : str
    vertices : (n, 3) float64
        Model-frame vertices (for drawing).
    faces : (m, 3) int64
    tree : collision.OBBTree
    pose : (4, 4) float64
        Model-to-world transform.
    color : (3,) float
        RGB in 0..1.
    spin : (3,) float64
        Angular velocity (rad/s, world frame) about the body's centre.
    velocity : (3,) float64
        Linear velocity (units/s, world frame).
    motion : str
        ``"static"`` bodies never move; ``"kinematic"`` and ``"dynamic"`` ones
        move with their velocities (forces and responses come with the
        dynamics).
    pieces : app.pieces.ConvexPieces or None
        Convex pieces with their trees (scene files; None for the demo meshes).
    mass : MassProperties or None
        From the closed mesh and the density; None for open meshes (static only).
    friction, restitution : float or None
        Contact coefficients; None takes the dynamics' defaults.
    sleeping : bool
        A resting dynamic body whose island sleeps (see :mod:`app.dynamics`); ``still`` is how
        long (s) it has been slow.
    shapes : list of collision shapes
        The convex shapes of the narrow phase, model frame: the pieces' hulls
        by default; a sphere / capsule primitive's exact shape; a plane's
        half-space. Empty: the body only gets exact triangle contacts.
    """

    name: str
    vertices: np.ndarray
    faces: np.ndarray
    tree: co.OBBTree
    pose: np.ndarray
    color: tuple
    spin: np.ndarray = field(default_factory=lambda: np.zeros(3))
    home: np.ndarray = None
    velocity: np.ndarray = field(default_factory=lambda: np.zeros(3))
    motion: str = "kinematic"
    pieces: object = None
    mass: object = None
    shapes: list = None
    friction: float = None
    restitution: float = None
    sleeping: bool = False
    still: float = 0.0

    def __post_init__(self):
        if self.shapes is None:
            self.shapes = [Hull(h) for h in self.pieces.hulls] if self.pieces is not None else []
        self.pose = np.array(self.pose, dtype=float)
        self.spin = np.asarray(self.spin, dtype=float)
        self.velocity = np.asarray(self.velocity, dtype=float)
        if self.home is None:
            self.home = self.pose.copy()
        self.home_motion = (self.velocity.copy(), self.spin.copy())
        self.radius = float(np.linalg.norm(self.tree.half_extents[0]))

    def wake(self):
        """Back to the simulation (a sleeping body is frozen until its island wakes)."""
        self.sleeping = False
        self.still = 0.0

    @property
    def unbounded(self):
        """True for a body with a half-space (an infinite ground): it stays out of the broad phase."""
        return any(isinstance(s, HalfSpace) for s in self.shapes)

    def world_aabb(self):
        """(2, 3): tight world AABB of the root OBB (|R| times the half extents)."""
        rot = self.pose[:3, :3] @ self.tree.axes[0].T
        center = self.pose[:3, :3] @ self.tree.centers[0] + self.pose[:3, 3]
        half = np.abs(rot) @ self.tree.half_extents[0]
        return np.stack([center - half, center + half])

    def world_center(self):
        return self.pose[:3, :3] @ self.tree.centers[0] + self.pose[:3, 3]


@dataclass(frozen=True)
class MassProperties:
    """Mass properties of a closed mesh at a density.

    Attributes
    ----------
    density : float
    volume : float
    mass : float
    center : (3,) float64
        Centre of mass, model frame.
    inertia : (3, 3) float64
        Inertia tensor about the centre of mass, model frame axes.
    """

    density: float
    volume: float
    mass: float
    center: np.ndarray
    inertia: np.ndarray


@dataclass(eq=False)
class Contact:
    """The narrow-phase answer for one intersecting body pair."""

    a: int
    b: int
    pairs: np.ndarray        # (k, 2) face indices
    segments: np.ndarray     # (k, 2, 3) world frame
    contained: object
    box_tests: int
    tri_tests: int

    normals: np.ndarray = None  # (k, 3) unit normal of B's triangle at each pair, world frame

    def points(self):
        """(k, 3) midpoints of the intersection segments (the contact points)."""
        return self.segments.mean(axis=1)


class World:
    """The bodies and the fixed-step loop.

    Parameters
    ----------
    bodies : list of Body
    dt : float
        Fixed time step in seconds.
    max_steps : int
        At most this many steps per frame; extra time is dropped.
    broad_phase : str
        A name of :data:`collision.broad_phase.BROAD_PHASES`.
    margin : float
        Contact margin: manifolds keep speculative points up to this gap.
    exact : bool
        Also find the exact intersecting triangles once per frame (what the
        viewer draws); the manifolds do not need them.
    gravity : (3,) float
        For the dynamic bodies (:class:`app.dynamics.Dynamics`).
    """

    def __init__(self, bodies, dt=1.0 / 120.0, max_steps=8, broad_phase="tree", margin=0.01, exact=True,
                 gravity=(0.0, -9.81, 0.0)):
        self.bodies = list(bodies)
        self.dt = dt
        self.max_steps = max_steps
        self.accumulator = 0.0
        self.time = 0.0
        self.paused = False
        self.exact = exact
        self.contacts = []
        self.broad = make_broad_phase(broad_phase)
        self.manager = ContactManager(margin)
        self.dynamics = Dynamics(gravity)
        self._fresh = False  # the manifolds are of the current poses
        self.ccd = True  # speculative contacts from each dynamic body's sweep (see sweep())
        self.events = []
        self._roots = (None, None)
        self._boxes = ([], np.zeros((0, 2, 3)))  # bounded bodies and their (swept) boxes, last broad phase
        self._candidates = []
        self._frame_times = {"update": 0.0, "broad": 0.0, "narrow": 0.0}
        self.stats = {"update": 0.0, "broad": 0.0, "narrow": 0.0, "exact": 0.0, "candidates": 0,
                      "box_tests": 0, "tri_tests": 0, "contacts": 0, "steps": 0,
                      "piece_pairs": 0, "manifolds": 0, "points": 0, "touching": 0}

    @property
    def broad_phase_name(self):
        return self.broad.name

    def set_broad_phase(self, name):
        """Switch the broad phase (a name of :data:`collision.broad_phase.BROAD_PHASES`)."""
        self.broad = make_broad_phase(name)

    def next_broad_phase(self):
        """Switch to the next broad phase in :data:`~collision.broad_phase.BROAD_PHASES`; returns its name."""
        names = list(BROAD_PHASES)
        self.set_broad_phase(names[(names.index(self.broad.name) + 1) % len(names)])
        return self.broad.name

    @property
    def manifolds(self):
        """The persistent manifolds of the last step (:class:`app.contacts.PersistentManifold`)."""
        return list(self.manager.manifolds.values())

    # -- motion --------------------------------------------------------------

    def advance(self, frame_dt):
        """Run as many fixed steps as ``frame_dt`` allows (capped); returns the count."""
        if self.paused:
            return 0
        self.accumulator += max(0.0, frame_dt)
        steps = 0
        while self.accumulator >= self.dt and steps < self.max_steps:
            self.step()
            self.accumulator -= self.dt
            steps += 1
        if steps == self.max_steps:
            self.accumulator = 0.0  # drop the backlog instead of spiralling
        return steps

    def step(self):
        """One fixed step: move the bodies (kinematic ones by their velocities, dynamic ones by
        gravity and the impulses of the current contacts), then the broad, mid and narrow phases
        find the contacts of the new poses."""
        if not self._fresh:
            self.collide()
        t0 = time.perf_counter()
        self.integrate()
        self.dynamics.step(self.bodies, self.manager.manifolds.values(), self.dt)
        self.time += self.dt
        self._frame_times["update"] += time.perf_counter() - t0
        self.collide()

    def integrate(self):
        """The kinematic motion of one step: bodies that the dynamics does not move translate
        with their velocity and spin about their centre (static bodies stay)."""
        self._fresh = False
        kinematic = [b for b in self.bodies if b.motion != "static" and not Dynamics.moves(b)]
        for b in kinematic:
            if np.any(b.velocity):
                b.pose[:3, 3] += b.velocity * self.dt
        moving = [b for b in kinematic if np.any(b.spin)]
        if moving:  # all spinning bodies at once
            spin = np.array([b.spin for b in moving])
            w = np.linalg.norm(spin, axis=1)
            rot = rotations(spin / w[:, None], w * self.dt)
            p = np.array([b.pose for b in moving])
            centre = np.einsum("nij,nj->ni", p[:, :3, :3], np.array([b.tree.centers[0] for b in moving]))
            centre += p[:, :3, 3]
            p[:, :3, :3] = rot @ p[:, :3, :3]
            p[:, :3, 3] = np.einsum("nij,nj->ni", rot, p[:, :3, 3] - centre) + centre
            for b, pose in zip(moving, orthonormalize(p)):
                b.pose = pose

    def reset(self):
        for b in self.bodies:
            b.pose = b.home.copy()
            b.velocity, b.spin = (x.copy() for x in b.home_motion)
            b.wake()
        self.time = 0.0
        self.accumulator = 0.0
        self.manager.clear()
        self.broad.clear()
        self._fresh = False

    def move_body(self, index, translation=(0, 0, 0), rot=None):
        """Move a body kinematically (user controls): rotate about its centre, then translate."""
        b = self.bodies[index]
        p = b.pose.copy()
        if rot is not None:
            c = b.world_center()
            p[:3, :3] = rot @ p[:3, :3]
            p[:3, 3] = rot @ (p[:3, 3] - c) + c
        p[:3, 3] += np.asarray(translation, float)
        if not np.all(np.isfinite(p)):
            raise ValueError(f"{b.name}: the move gives a non-finite pose; ignored")
        b.pose = orthonormalize(p)
        if Dynamics.moves(b):  # the user holds it: it starts from rest when let go
            b.velocity, b.spin = np.zeros(3), np.zeros(3)
            b.wake()
        self._fresh = False

    # -- detection -------------------------------------------------------------

    def world_aabbs(self, index=None):
        """(n, 2, 3) world AABBs of the bodies' root OBBs (|R| times the half extents), vectorised.

        ``index`` (m,) selects bodies; default all.
        """
        bodies = self.bodies if index is None else [self.bodies[k] for k in index]
        if not bodies:
            return np.zeros((0, 2, 3))
        key = tuple(map(id, bodies))
        if self._roots[0] != key:  # the body list changed: gather the root boxes again
            self._roots = (key, (np.array([b.tree.centers[0] for b in bodies]),
                                 np.array([b.tree.axes[0] for b in bodies]),
                                 np.array([b.tree.half_extents[0] for b in bodies])))
        c, axes, half = self._roots[1]
        pose = np.array([b.pose for b in bodies])
        r = pose[:, :3, :3]
        rot = r @ np.transpose(axes, (0, 2, 1))
        centre = np.einsum("nij,nj->ni", r, c) + pose[:, :3, 3]
        h = np.einsum("nij,nj->ni", np.abs(rot), half)
        return np.stack([centre - h, centre + h], axis=1)

    def broad_phase(self, sweep=None):
        """Candidate body pairs ``[(i, j), ...]`` (i < j, sorted): overlapping world AABBs of the
        bounded bodies, found by the current broad phase (:attr:`broad`); a dynamic body's box is
        grown by its ``sweep`` (default :meth:`sweep`)."""
        bounded = [k for k, b in enumerate(self.bodies) if not b.unbounded]
        self._boxes = (bounded, self.world_aabbs(bounded))
        if len(bounded) < 2:
            self.broad.clear()
            return []
        boxes = self._padded(bounded, self._boxes[1], self.sweep() if sweep is None else sweep)
        self._boxes = (bounded, boxes)
        pairs = self.broad.update(boxes[:, 0], boxes[:, 1])
        if len(bounded) == len(self.bodies):
            return [(int(i), int(j)) for i, j in pairs]
        idx = np.asarray(bounded)
        return sorted((int(idx[i]), int(idx[j])) for i, j in pairs)

    def _padded(self, index, boxes, sweep):
        """``boxes`` (n, 2, 3) of the bodies ``index`` grown by their sweep distances."""
        if not sweep:
            return boxes
        pad = np.array([sweep.get(id(self.bodies[k]), 0.0) for k in index])[:, None]
        return np.stack([boxes[:, 0] - pad, boxes[:, 1] + pad], axis=1)

    def sweep(self):
        """``{id(body): distance}``: how far each moving dynamic body may travel in one step,
        ``(|v| + |w| r) dt`` with ``r`` its bounding radius (empty when none moves, or with
        :attr:`ccd` off: then a body faster than its size per step can pass through a wall)."""
        if not self.ccd:
            return {}
        dyn = [b for b in self.bodies if Dynamics.moves(b)]
        if not dyn:
            return {}
        v = np.linalg.norm(np.array([b.velocity for b in dyn]), axis=1)
        w = np.linalg.norm(np.array([b.spin for b in dyn]), axis=1)
        d = (v + w * np.array([b.radius for b in dyn])) * self.dt
        return {id(b): float(x) for b, x in zip(dyn, d) if x > 0.0}

    def _ground_pairs(self):
        """Pairs of each half-space body with the moving bodies whose (swept) AABB reaches below
        its plane plus the contact margin: the lowest point of a box along the plane's normal
        ``n`` is ``n . c - |n| . h``."""
        ground = [k for k, b in enumerate(self.bodies) if b.unbounded]
        bounded, boxes = self._boxes
        if not ground or not bounded:
            return []
        moving = np.array([self.bodies[k].motion != "static" for k in bounded])
        centre, half = (boxes[:, 0] + boxes[:, 1]) / 2, (boxes[:, 1] - boxes[:, 0]) / 2
        out = []
        for g in ground:
            body = self.bodies[g]
            for shape in body.shapes:
                if not isinstance(shape, HalfSpace):
                    continue
                n = body.pose[:3, :3] @ shape.normal
                offset = shape.offset + float(n @ body.pose[:3, 3])
                low = centre @ n - half @ np.abs(n)
                near = np.flatnonzero(moving & (low <= offset + self.manager.margin))
                out += [(min(g, bounded[i]), max(g, bounded[i])) for i in near]
        return sorted(set(out))

    def collide(self):
        """Broad phase, then mid and narrow phases into persistent manifolds and events.

        Bodies with a half-space have no finite AABB: each is paired with the
        moving bodies whose boxes reach down to its plane.
        """
        t0 = time.perf_counter()
        sweep = self.sweep()
        cand = self.broad_phase(sweep)
        cand = cand + self._ground_pairs()
        t1 = time.perf_counter()
        self.events = self.manager.update(self.bodies, cand, sweep)
        t2 = time.perf_counter()
        self._candidates = cand
        self._fresh = True
        self._frame_times["broad"] += t1 - t0
        self._frame_times["narrow"] += t2 - t1
        self.stats.update(broad=t1 - t0, narrow=t2 - t1, candidates=len(cand), touching=len(self.manager.touching),
                          **self.manager.stats)
        return self.events

    def detect(self, candidates=None):
        """Exact triangle contacts (:func:`collision.collide`) of the candidate body pairs
        (default: the broad phase's, now); fills :attr:`contacts` and :attr:`stats`."""
        cand = self.broad_phase() if candidates is None else candidates
        t1 = time.perf_counter()
        contacts = []
        box_tests = tri_tests = 0
        for i, j in cand:
            a, b = self.bodies[i], self.bodies[j]
            r = co.collide(a.tree, a.pose, b.tree, b.pose)
            box_tests += r.box_tests
            tri_tests += r.tri_tests
            if r.hit:
                tri = b.vertices[b.faces[r.pairs[:, 1]]]
                n = np.cross(tri[:, 1] - tri[:, 0], tri[:, 2] - tri[:, 0]) @ b.pose[:3, :3].T
                n /= np.maximum(np.linalg.norm(n, axis=1), 1e-300)[:, None]
                contacts.append(Contact(i, j, r.pairs, r.segments, r.contained, r.box_tests, r.tri_tests, n))
        t2 = time.perf_counter()
        self.contacts = contacts
        self.stats.update(exact=t2 - t1, candidates=len(cand), box_tests=box_tests,
                          tri_tests=tri_tests, contacts=sum(len(c.pairs) for c in contacts))
        return contacts

    def frame(self, frame_dt):
        """What the viewer calls once per frame: the fixed steps (each with its
        detection), detection anyway when no step ran (paused, or the user moved a
        body), then the exact triangle contacts for drawing."""
        self._frame_times = dict.fromkeys(self._frame_times, 0.0)
        steps = self.advance(frame_dt)
        if steps == 0:
            self.collide()
        self.stats.update(self._frame_times, steps=steps)  # summed over the frame's steps
        if self.exact:
            self.detect(self._candidates)

    # -- queries -------------------------------------------------------------

    def pick(self, origin, direction):
        """Nearest body hit by a world ray, by ray casting through the OBB trees.

        Returns ``(index, t, point)`` or ``(None, inf, None)``.
        """
        origin = np.asarray(origin, float)
        direction = np.asarray(direction, float)
        best = (None, math.inf, None)
        dn = direction / np.linalg.norm(direction)
        for k, b in enumerate(self.bodies):
            # Bounding-sphere reject before the tree walk.
            oc = b.world_center() - origin
            along = oc @ dn
            if np.dot(oc, oc) - along * along > b.radius * b.radius and np.dot(oc, oc) > b.radius ** 2:
                continue
            hit = co.ray_cast(b.tree, b.pose, origin, direction, best[1])
            if hit.hit and hit.t < best[1]:
                best = (k, hit.t, hit.point)
        return best

    def bounds(self):
        """(2, 3) world AABB of the scene (for framing the camera): of its bodies, leaving out
        the grounds (half-spaces) when there is anything else, since they only frame the floor."""
        bodies = [b for b in self.bodies if not b.unbounded] or self.bodies
        if not bodies:
            return np.array([[-1.0, -1, -1], [1, 1, 1]])
        boxes = np.array([b.world_aabb() for b in bodies])
        return np.stack([boxes[:, 0].min(0), boxes[:, 1].max(0)])
