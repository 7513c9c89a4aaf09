"""The per-frame loop over the bodies: move, broad phase, narrow phase. No GL here.

A :class:`~app.world.body.Body` (re-exported here) is a mesh with its OBB tree, its
convex pieces (the shapes of the narrow phase), a pose and a colour; the world
keeps the bodies' motion state packed in a :class:`~app.world.body.BodyTable`. The
:class:`World` advances bodies in fixed time steps (an accumulator decoupled
from the frame rate, capped so a slow frame cannot spiral; seed 004, 2.4).
After every step it asks the broad phase (one of
:data:`collision.broad_phase.BROAD_PHASES`, switchable at run time, over world
AABBs of each tree's root OBB) for candidate body pairs, and the contact
manager (:mod:`app.world.contacts`: mid phase over the convex pieces, then the
batched narrow phase) for persistent contact manifolds and begin / persist /
end events. Once per frame it also finds the exact intersecting triangles and
their intersection segments (:func:`collision.collide`), which the viewer draws.
"""

import math
import time
from dataclasses import dataclass

import numpy as np
from numba import njit

import obbcollide as co
from obbcollide.broad_phase import BROAD_PHASES, make_broad_phase
from obbcollide.broad_phase.aabb_tree import DynamicAABBTree, _update_kernel
from obbcollide.shapes import HalfSpace

from .body import DYNAMIC, STATIC, Body, BodyTable, MassProperties, box_world_bounds
from .contacts import ContactManager
from .dynamics import Dynamics
from .memory import reserve as _reserve_heap
from .narrow_compare import NarrowPhaseChoice

__all__ = ["Body", "MassProperties", "Contact", "World", "rotation", "rotations", "pose_matrix", "orthonormalize"]

# Bounds the step keeps, whatever a script, a scene or a collision asks (see World.repair):
# a body faster than MAX_SPEED (m/s) or spinning faster than MAX_SPIN (rad/s) is slowed to
# it, keeping its direction, with a message. The step integrates semi-implicitly and pads
# each dynamic body's box by its sweep, |v| dt: at 1e4 m/s that is 83 m per 1/120 s step,
# still a box the broad phase handles; at 1e30 m/s one step leaves the +-1e6 world
# (app.scene.mesh_io.MAX_COORD) and a body it meets is sent past it. 1e4 m/s is ten times a rifle
# bullet; 1e3 rad/s (160 turns a second) turns a body by 8 rad a step, and the quaternion
# step renormalises, so it stays a rotation. Scene files refuse faster bodies.
MAX_SPEED = 1.0e4
MAX_SPIN = 1.0e3
# At most this many candidate pairs (broad phase and ground) get contacts in one step: the
# narrow phase's memory and time grow with the pairs, about 3 kB each (measured: 1000 boxes
# at one spot, 500k pairs, took 1.9 GB). A pile of 5000 bodies (app.scene.scene_file.MAX_BODIES)
# has about 6 per body; bodies stacked into one spot have n(n-1)/2. Past the cap the first
# pairs in order are kept and a message says how many were left out this step.
MAX_PAIRS = 100_000


@njit(cache=True)
def _non_finite(pose, velocity, spin, bad_pose, bad_motion):
    """Flag the rows with a non-finite pose or velocity / spin; returns whether there is one."""
    found = False
    for i in range(pose.shape[0]):
        ok = True
        for a in range(4):
            for b in range(4):
                ok = ok and math.isfinite(pose[i, a, b])
        bad_pose[i] = not ok
        ok = True
        for a in range(3):
            ok = ok and math.isfinite(velocity[i, a]) and math.isfinite(spin[i, a])
        bad_motion[i] = not ok
        found = found or bad_pose[i] or bad_motion[i]
    return found


@njit(cache=True)
def _any_too_fast(velocity, spin, max_speed, max_spin):
    """Whether a row has a finite speed above ``max_speed`` or a finite spin above ``max_spin``
    (what :meth:`World._clamp_speeds` slows down; non-finite ones are :meth:`World.repair`'s)."""
    near_v, near_w = 0.25 * max_speed * max_speed, 0.25 * max_spin * max_spin
    for i in range(velocity.shape[0]):
        v2 = velocity[i, 0] ** 2 + velocity[i, 1] ** 2 + velocity[i, 2] ** 2
        w2 = spin[i, 0] ** 2 + spin[i, 1] ** 2 + spin[i, 2] ** 2
        if v2 > near_v or w2 > near_w:  # (under a quarter of the squared bound: half the bound, no root needed)
            if ((math.isfinite(v2) and math.sqrt(v2) > max_speed)
                    or (math.isfinite(w2) and math.sqrt(w2) > max_spin)):
                return True
    return False


@njit(cache=True, fastmath={"reassoc"})
def _finite(x):
    """Whether every entry of ``x`` (m,) is finite: the sum of ``x * 0`` is zero exactly then (an
    infinity or a NaN times zero is a NaN, which the sum keeps). Only reassociation is allowed to
    the compiler (``fastmath={"reassoc"}``: NaNs and infinities keep their meaning), so the sum is
    taken in vector lanes: 8x faster than a test and branch per entry."""
    s = 0.0
    for k in range(x.shape[0]):
        s += x[k] * 0.0
    return s == 0.0


@njit(cache=True)
def _sound_state(pose, velocity, spin, max_speed, max_spin, good):
    """The common case of :meth:`World.repair` in one pass: whether every row's pose, velocity and
    spin are finite and no row moves faster than ``max_speed`` or spins faster than ``max_spin``;
    if so the poses are copied into ``good`` (n, 4, 4), the buffer repair goes back to."""
    if _any_too_fast(velocity, spin, max_speed, max_spin):
        return False
    if not (_finite(pose.reshape(-1)) and _finite(velocity.reshape(-1)) and _finite(spin.reshape(-1))):
        return False
    good[:] = pose
    return True


@njit(cache=True)
def _reaching(lo, hi, rows, motion, g, n, level, out):
    """``out[:k]``: the body pairs (lower row first) of ``g`` with the moving bodies ``rows`` whose
    boxes (``lo``, ``hi``) have their lowest point along ``n``, ``n . c - |n| . h``, at ``level`` or
    below; returns ``k``."""
    k = 0
    for i in range(rows.shape[0]):
        if motion[rows[i]] == STATIC:
            continue
        low = 0.0
        for a in range(3):
            low += n[a] * 0.5 * (lo[i, a] + hi[i, a]) - abs(n[a]) * 0.5 * (hi[i, a] - lo[i, a])
        if low <= level:
            out[k, 0], out[k, 1] = min(g, rows[i]), max(g, rows[i])
            k += 1
    return k


@njit(cache=True)
def _ground_reaching(lo, hi, rows, motion, planes_row, planes, pose, margin, out):
    """:func:`_reaching` for every half-space at once: ``planes_row[p]`` is the body row of half-space
    ``p`` and ``planes[p]`` its local normal and offset ``(n, d)``; in the world its normal is
    ``R n`` and its offset ``d + (R n) . t`` (the body's pose ``R, t``), and a moving body is paired
    with it when its box reaches down to that offset plus ``margin``. ``out[:k]``: the pairs (lower
    row first), plane by plane, or with several half-spaces each pair once, sorted (two may pair with
    the same body); returns ``k``."""
    k = 0
    n = np.empty(3)
    for p in range(planes_row.shape[0]):
        g = planes_row[p]
        for a in range(3):
            n[a] = pose[g, a, 0] * planes[p, 0] + pose[g, a, 1] * planes[p, 1] + pose[g, a, 2] * planes[p, 2]
        level = (planes[p, 3] + (n[0] * pose[g, 0, 3] + n[1] * pose[g, 1, 3] + n[2] * pose[g, 2, 3])) + margin
        k += _reaching(lo, hi, rows, motion, g, n, level, out[k:])
    if planes_row.shape[0] > 1 and k:
        m = motion.shape[0]
        code = np.unique(out[:k, 0] * m + out[:k, 1])
        k = code.shape[0]
        for r in range(k):
            out[r, 0], out[r, 1] = code[r] // m, code[r] % m
    return k


@njit(cache=True)
def _sweep_kernel(motion, sleeping, velocity, spin, radius, dt, out):
    """``out[i] = (|v| + |w| r) dt`` for the awake dynamic bodies (the others keep 0)."""
    for i in range(motion.shape[0]):
        if motion[i] == DYNAMIC and not sleeping[i]:
            v = math.sqrt(velocity[i, 0] ** 2 + velocity[i, 1] ** 2 + velocity[i, 2] ** 2)
            w = math.sqrt(spin[i, 0] ** 2 + spin[i, 1] ** 2 + spin[i, 2] ** 2)
            out[i] = (v + w * radius[i]) * dt


@njit(cache=True)
def _root_bounds(pose, center, axes, half, rows, pad, lo, hi):
    """``lo[k], hi[k]``: the world AABB of body ``rows[k]``'s root OBB, grown by ``pad[rows[k]]``:
    centre ``R c + t``, half extents ``|R A^T| h`` (RTCD 4.2.6). Returns whether every bound is finite."""
    finite = True
    for k in range(rows.shape[0]):
        i = rows[k]
        box_world_bounds(pose, i, center, axes, half, i, pad[i], lo[k], hi[k])
        for a in range(3):
            finite = finite and math.isfinite(lo[k, a]) and math.isfinite(hi[k, a])
    return finite


@njit(cache=True)
def _body_pairs(rows, pairs, n):
    """The broad phase's pairs of boxes ``pairs`` (k, 2) as body rows ``rows[box]``, (i < j), sorted."""
    code = np.empty(pairs.shape[0], np.int64)
    for k in range(pairs.shape[0]):
        a, b = rows[pairs[k, 0]], rows[pairs[k, 1]]
        code[k] = min(a, b) * n + max(a, b)
    code.sort()
    out = np.empty((pairs.shape[0], 2), np.int64)
    for k in range(pairs.shape[0]):
        out[k, 0], out[k, 1] = code[k] // n, code[k] % n
    return out


_NO_PLANES = (np.zeros(0, np.int64), np.zeros((0, 4)))  # (World._ground_planes of a world without half-spaces)
# the positions of rows and of sweep (then lo and hi) in _tree_broad_phase's arguments
_TREE_ROWS, _TREE_SWEEP = 11, 12
_WORLD_STEP = [None]  # app.world.world_step.one_call_world_step, once imported (World.step)


@njit(cache=True)
def _tree_broad_phase(motion, sleeping, velocity, spin, radius, dt, ccd, pose, center, axes, half, rows, sweep, lo, hi,
                      tlo, thi, flo, fhi, parent, child, height, meta, free, sah, margin_rel, margin_abs, shrink,
                      predict, moved, old_keys, rebuild, counts, planes_row, planes, margin):
    """The broad phase of a step in one call, for the dynamic AABB tree: each moving body's sweep
    (:func:`_sweep_kernel`, when ``ccd``, into ``sweep`` (n,) of zeros), the world boxes of the bounded
    bodies ``rows`` grown by it (:func:`_root_bounds`, into ``lo, hi``), the tree's update
    (:func:`obbcollide.broad_phase.aabb_tree._update_kernel`, its arguments from ``tlo`` to ``counts``),
    the pairs as body rows (:func:`_body_pairs`), then each half-space's pairs
    (:func:`_ground_reaching`, ``planes_row`` and ``planes`` as it takes them): the same kernels in the
    same order as :meth:`World._collide` calls them one by one.

    Returns
    -------
    (finite, keys, pairs, m)
        Whether every box was finite (if not, nothing after the boxes ran), the tree's fat pairs,
        the candidate pairs (k, 2): the tree's ``m`` (sorted), then the half-spaces'.
    """
    n = motion.shape[0]
    if ccd:
        _sweep_kernel(motion, sleeping, velocity, spin, radius, dt, sweep)
    if not _root_bounds(pose, center, axes, half, rows, sweep, lo, hi):
        return False, old_keys, np.zeros((0, 2), np.int64), 0
    keys, pairs = _update_kernel(lo, hi, tlo, thi, flo, fhi, parent, child, height, meta, free, sah, margin_rel,
                                 margin_abs, shrink, predict, moved, old_keys, rebuild, counts)
    if rows.shape[0] != n:
        pairs = _body_pairs(rows, pairs, n)
    p = planes_row.shape[0]
    if p == 0:
        return True, keys, pairs, pairs.shape[0]
    ground = np.empty((rows.shape[0] * p, 2), np.int64)
    k = _ground_reaching(lo, hi, rows, motion, planes_row, planes, pose, margin, ground)
    out = np.empty((pairs.shape[0] + k, 2), np.int64)
    out[:pairs.shape[0]] = pairs
    out[pairs.shape[0]:] = ground[:k]
    return True, keys, out, pairs.shape[0]


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
        For the dynamic bodies (:class:`app.world.dynamics.Dynamics`).
    """

    def __init__(self, bodies, dt=1.0 / 120.0, max_steps=8, broad_phase="tree", margin=0.01, exact=True,
                 gravity=(0.0, -9.81, 0.0)):
        self.bodies = list(bodies)
        self.table = BodyTable()  # the bodies' packed state (app.world.body); follows self.bodies
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
        self.problems = []  # messages about bodies whose state had to be repaired (see repair())
        self._good = None  # (bodies, poses) at the start of the last step, for repair()
        self.ccd = True  # speculative contacts from each dynamic body's sweep (see sweep())
        self._boxes = (np.zeros(0, np.int64), np.zeros((0, 3)), np.zeros((0, 3)))  # bounded rows, (swept) lo, hi
        self._candidates = []
        self._one_call_world = True  # World.step takes one compiled call where it can (app.world.world_step)
        self._plan = None  # (its one compiled call's arguments kept from step to step: app.world.world_step.StepPlan)
        self._frame_times = {"update": 0.0, "broad": 0.0, "narrow": 0.0}
        self.narrow_choice = NarrowPhaseChoice()  # the narrow phase shown and compared (app.world.narrow_compare)
        self.stats = {"update": 0.0, "broad": 0.0, "narrow": 0.0, "exact": 0.0, "candidates": 0,
                      "box_tests": 0, "tri_tests": 0, "contacts": 0, "steps": 0,
                      "piece_pairs": 0, "manifolds": 0, "points": 0, "touching": 0}
        _reserve_heap()  # (written memory at the top of the heap for the steps: app.world.memory)

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
        """The persistent manifolds of the last step (:class:`app.world.contacts.PersistentManifold`)."""
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
        find the contacts of the new poses. The dynamics, the broad phase and the detection run
        as one compiled call where they can (:mod:`app.world.world_step`), else as three."""
        t = self.sync()
        one_call = None
        if self._one_call_world:  # (the whole step in one compiled call where it can)
            one_call = _WORLD_STEP[0]
            if one_call is None:  # (imported at the first step: that module imports this one)
                from .world_step import one_call_world_step as one_call

                _WORLD_STEP[0] = one_call
            good = self._inside_repair(t)
            if good is not None and one_call(self, t, time.perf_counter(), good):
                return  # (the repair's check inside the call: nothing to repair)
        self.repair(t)
        if not self._fresh:
            self._collide(t)
        t0 = time.perf_counter()
        self._integrate(t)
        if one_call is not None and one_call(self, t, t0):
            return
        self.dynamics.step(t, self.manager.store, self.dt)
        self.time += self.dt
        self._updated(t0, time.perf_counter())
        self._collide(t)

    def _updated(self, t0, t1):
        """The motion of a step (kinematic, then the dynamics) ran from ``t0`` to ``t1``."""
        self._frame_times["update"] += t1 - t0
        self.stats["update"] = t1 - t0

    def repair(self, t=None):
        """Bodies with a non-finite pose, velocity or spin (set by a script, a bad scene edit, a
        degenerate contact) would stop every query: the velocities go back to zero and the pose to
        the last finite one (or the start pose), the body wakes, and a message naming it goes to
        :attr:`problems` (the viewer shows them). Returns the repaired bodies' names."""
        t = self.sync() if t is None else t
        st = t.state
        good = self._remembered(t)
        if good is not None and _sound_state(st.pose, st.velocity, st.spin, MAX_SPEED, MAX_SPIN, good):
            return []  # (the poses remembered)
        names = self._clamp_speeds(t)
        bad_pose = np.zeros(len(t), np.bool_)
        bad_motion = np.zeros(len(t), np.bool_)
        if not _non_finite(st.pose, st.velocity, st.spin, bad_pose, bad_motion):
            self._remember(st.pose)
            return names
        for k in np.flatnonzero(bad_pose | bad_motion):
            b = self.bodies[k]
            what = []
            if bad_motion[k]:
                what.append("velocity" if not np.isfinite(st.velocity[k]).all() else "spin")
                st.velocity[k] = 0.0
                st.spin[k] = 0.0
            if bad_pose[k]:
                good = self._good
                back = (good[1][good[0].index(b)] if good is not None and b in good[0] else b.home)
                st.pose[k] = back if np.isfinite(back).all() else np.eye(4)
                what.append("pose")
                self._fresh = False
            b.wake()
            names.append(b.name)
            self.problems.append(f"{b.name}: non-finite {' and '.join(what)}; set back to a finite state")
        self._remember(st.pose)
        return names

    def _inside_repair(self, t):
        """The remembered poses (n, 4, 4) when the repair of this step may be the one compiled call's
        check of the state (:mod:`app.world.world_step`), which then comes first: the manifolds are of
        the current poses (no detection before the motion), no kinematic body moves before the
        dynamics, and the poses :meth:`repair` remembered are of these bodies. Else None."""
        if not self._fresh or len(t.kinematic_rows):
            return None
        return self._remembered(t)

    def _remembered(self, t):
        """The poses (n, 4, 4) :meth:`repair` remembered, when they are of these bodies (table ``t``); else None."""
        good = self._good
        if good is None or good[1].shape != t.state.pose.shape or good[0] != self.bodies:
            return None
        return good[1]

    def _clamp_speeds(self, t):
        """Slow every body faster than MAX_SPEED or spinning faster than MAX_SPIN to that bound
        (same direction), with a message in :attr:`problems`; returns their names. Non-finite
        velocities are left to :meth:`repair`."""
        st = t.state
        names = []
        if not len(t) or not _any_too_fast(st.velocity, st.spin, MAX_SPEED, MAX_SPIN):  # (one compiled pass)
            return names
        with np.errstate(invalid="ignore", over="ignore"):
            for what, values, bound in (("speed", st.velocity, MAX_SPEED), ("spin", st.spin, MAX_SPIN)):
                size = np.sqrt(np.einsum("ij,ij->i", values, values))
                for k in np.flatnonzero(np.isfinite(size) & (size > bound)):
                    values[k] *= bound / size[k]
                    b = self.bodies[k]
                    names.append(b.name)
                    unit = "m/s" if what == "speed" else "rad/s"
                    self.problems.append(f"{b.name}: {what} {size[k]:.3g} {unit} is beyond what the step "
                                         f"integrates; clamped to {bound:g} {unit}")
        return names

    def _remember(self, pose):
        """Keep the bodies' (finite) poses for the next repair, in a buffer reused from step to step."""
        good = self._good
        if good is None or good[1].shape != pose.shape or good[0] != self.bodies:
            self._good = (list(self.bodies), pose.copy())
        else:
            np.copyto(good[1], pose)

    def sync(self):
        """Bring :attr:`table` up to date with :attr:`bodies` (added, removed or changed bodies, or
        bodies another world has moved since): the contacts are then found again before the next step."""
        if self.table.adopt(self.bodies):
            self._fresh = False
        return self.table

    def integrate(self):
        """The kinematic motion of one step: bodies that the dynamics does not move translate
        with their velocity and spin about their centre (static bodies stay)."""
        self._integrate(self.sync())

    def _integrate(self, t):
        self._fresh = False
        st = t.state
        kin = t.kinematic_rows  # kinematic, and dynamic bodies without mass
        if not len(kin):
            return
        st.pose[kin, :3, 3] += st.velocity[kin] * self.dt
        spinning = kin[np.any(st.spin[kin] != 0, axis=1)]
        if len(spinning):  # all spinning bodies at once
            spin = st.spin[spinning]
            w = np.linalg.norm(spin, axis=1)
            rot = rotations(spin / w[:, None], w * self.dt)
            p = st.pose[spinning]
            centre = np.einsum("nij,nj->ni", p[:, :3, :3], t.root_center[spinning]) + p[:, :3, 3]
            p[:, :3, :3] = rot @ p[:, :3, :3]
            p[:, :3, 3] = np.einsum("nij,nj->ni", rot, p[:, :3, 3] - centre) + centre
            st.pose[spinning] = orthonormalize(p)

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

    def wake_touching(self, index, margin=0.01):
        """Wake the dynamic bodies whose world AABBs come within ``margin`` of body ``index``'s (a
        kinematic body moved by the user reaches into a sleeping pile: the pile must answer)."""
        boxes = self.world_aabbs()
        lo, hi = boxes[index, 0] - margin, boxes[index, 1] + margin
        near = np.all((boxes[:, 0] <= hi) & (boxes[:, 1] >= lo), axis=1)
        for k in np.flatnonzero(near):
            b = self.bodies[k]
            if k != index and b.moves and b.sleeping:
                b.wake()

    # -- detection -------------------------------------------------------------

    def world_aabbs(self, index=None):
        """(n, 2, 3) world AABBs of the bodies' root OBBs (|R| times the half extents), vectorised.

        ``index`` (m,) selects bodies; default all.
        """
        return self._world_aabbs(self.sync(), index)

    @staticmethod
    def _world_aabbs(t, index=None, pad=None):
        rows = np.arange(len(t)) if index is None else np.ascontiguousarray(index, dtype=np.int64).reshape(-1)
        lo, hi, _ = World._world_bounds(t, rows, np.zeros(len(t)) if pad is None else pad)
        return np.stack([lo, hi], axis=1)

    @staticmethod
    def _world_bounds(t, rows, pad):
        """``lo, hi`` (k, 3) of the world AABBs of the bodies ``rows`` (root OBBs grown by ``pad``
        (n,)), and whether all are finite."""
        lo, hi = np.empty((len(rows), 3)), np.empty((len(rows), 3))
        finite = _root_bounds(t.state.pose, t.root_center, t.root_axes, t.root_half, rows, pad, lo, hi)
        return lo, hi, finite

    def broad_phase(self, sweep=None):
        """Candidate body pairs ``[(i, j), ...]`` (i < j, sorted): overlapping world AABBs of the
        bounded bodies, found by the current broad phase (:attr:`broad`); a dynamic body's box is
        grown by its ``sweep`` ((n,) distances, default :meth:`sweep`)."""
        return [(int(i), int(j)) for i, j in self._broad_pairs(sweep)]

    def _broad_pairs(self, sweep=None):
        """As :meth:`broad_phase`, a (k, 2) int64 array."""
        t = self.sync()
        bounded = t.bounded_rows
        pad = np.ascontiguousarray(self._sweep(t) if sweep is None else sweep, dtype=np.float64)
        lo, hi, finite = self._world_bounds(t, bounded, pad)
        self._boxes = (bounded, lo, hi)
        if len(bounded) < 2:
            self.broad.clear()
            return np.zeros((0, 2), np.int64)
        if not finite:  # (poses are finite: radii are not)
            raise ValueError("broad phase: a body's bounding box is not finite")
        pairs = np.asarray(self.broad.update(lo, hi, check=False), np.int64).reshape(-1, 2)
        if len(bounded) == len(self.bodies):
            return pairs
        return _body_pairs(bounded, pairs, len(self.bodies))

    def _tree_pairs(self, t):
        """:meth:`_broad_pairs` and :meth:`_ground_pairs` for the dynamic AABB tree in one compiled
        call (:func:`_tree_broad_phase`); returns ``(sweep, candidates)``."""
        args = self._tree_args(t)
        finite, keys, cand, m = _tree_broad_phase(*args)
        self._tree_done(args[_TREE_ROWS], args[_TREE_SWEEP + 1], args[_TREE_SWEEP + 2], finite, keys, m)
        return args[_TREE_SWEEP], cand

    def _tree_args(self, t):
        """:func:`_tree_broad_phase`'s arguments for the table ``t`` (its ``sweep``, ``lo`` and ``hi``
        new arrays); hand them and what the call returned to :meth:`_tree_done`."""
        bounded = t.bounded_rows
        st = t.state
        rows, planes = self._ground_planes(t) if len(t.ground_rows) else _NO_PLANES
        return (t.motion, st.sleeping, st.velocity, st.spin, t.radius, self.dt, self.ccd, st.pose, t.root_center,
                t.root_axes, t.root_half, bounded, np.zeros(len(t)), np.empty((len(bounded), 3)),
                np.empty((len(bounded), 3)), *self.broad.compiled_update(len(bounded)), rows, planes,
                self.manager.margin)

    def _tree_done(self, bounded, lo, hi, finite, keys, m):
        """Keep the boxes ``lo, hi`` of the rows ``bounded`` and the tree's pairs after :func:`_tree_broad_phase`
        returned ``finite, keys, _, m``."""
        self._boxes = (bounded, lo, hi)
        if not finite:  # (poses are finite: radii are not)
            raise ValueError("broad phase: a body's bounding box is not finite")
        self.broad.compiled_done(len(bounded), keys, m)

    def sweep(self):
        """(n,) how far each moving dynamic body may travel in one step, ``(|v| + |w| r) dt`` with
        ``r`` its bounding radius (zero for the others, and for all with :attr:`ccd` off: then a body
        faster than its size per step can pass through a wall)."""
        return self._sweep(self.sync())

    def _sweep(self, t):
        out = np.zeros(len(t))
        if self.ccd:
            _sweep_kernel(t.motion, t.state.sleeping, t.state.velocity, t.state.spin, t.radius, self.dt, out)
        return out

    def _ground_pairs(self):
        """Pairs of each half-space body with the moving bodies whose (swept) AABB reaches below
        its plane plus the contact margin: the lowest point of a box along the plane's normal
        ``n`` is ``n . c - |n| . h``."""
        t = self.table
        bounded, lo, hi = self._boxes
        if not len(t.ground_rows) or not len(bounded):
            return np.zeros((0, 2), np.int64)
        rows, planes = self._ground_planes(t)
        if not len(rows):
            return np.zeros((0, 2), np.int64)
        out = np.empty((len(bounded) * len(rows), 2), np.int64)
        k = _ground_reaching(lo, hi, bounded, t.motion, rows, planes, t.state.pose, self.manager.margin, out)
        return out[:k]

    def _ground_planes(self, t):
        """The half-spaces of the unbounded bodies: ``(rows (p,) int64, planes (p, 4))``, each one's body
        row and its local normal and offset; found again when the table changes."""
        key = (id(t), t.version, len(t))
        got = getattr(self, "_planes", None)
        if got is not None and got[0] == key:
            return got[1]
        rows, planes = [], []
        for g in t.ground_rows:
            for shape in self.bodies[g].shapes:
                if isinstance(shape, HalfSpace):
                    rows.append(int(g))
                    planes.append([*np.asarray(shape.normal, float), float(shape.offset)])
        found = (np.array(rows, np.int64), np.array(planes, float).reshape(-1, 4))
        self._planes = (key, found)
        return found

    def collide(self):
        """Broad phase, then mid and narrow phases into persistent manifolds and events
        (:attr:`events`, :attr:`manifolds`).

        Bodies with a half-space have no finite AABB: each is paired with the
        moving bodies whose boxes reach down to its plane.
        """
        t = self.sync()
        self.repair(t)
        self._collide(t)

    def _collide(self, t):
        t0 = time.perf_counter()
        if type(self.broad) is DynamicAABBTree and len(t.bounded_rows) >= 2:
            sweep, cand = self._tree_pairs(t)
        else:
            sweep = self._sweep(t)
            cand = self._broad_pairs(sweep)
            ground = self._ground_pairs()
            if len(ground):
                cand = np.concatenate([cand, ground])
        self._narrow(t, sweep, cand, t0, time.perf_counter())

    def _narrow(self, t, sweep, cand, t0, t1):
        """The detection of the broad phase's candidate pairs ``cand`` (k, 2) (found from ``t0`` to
        ``t1``, :func:`time.perf_counter`): the pairs of a body listed twice dropped, at most
        :data:`MAX_PAIRS`, then the contact manager."""
        if len(cand) and t.aliased:  # a body listed twice: not with itself
            cand = cand[t.alias[cand[:, 0]] != t.alias[cand[:, 1]]]
        if len(cand) > MAX_PAIRS:  # bounded narrow-phase work (see MAX_PAIRS)
            self.problems.append(f"{len(cand):,} candidate pairs, more than the {MAX_PAIRS:,} one step handles "
                                 f"(bodies piled into one spot?): {len(cand) - MAX_PAIRS:,} left out this step")
            cand = cand[:MAX_PAIRS]
        self.manager.update(self.bodies, cand, sweep, t)
        self._detected(cand, t0, t1, time.perf_counter())

    def _detected(self, cand, t0, t1, t2):
        """Keep the step's candidate pairs and its statistics: the broad phase ran from ``t0`` to ``t1``,
        the detection to ``t2``."""
        self._candidates = cand
        self._fresh = True
        self._frame_times["broad"] += t1 - t0
        self._frame_times["narrow"] += t2 - t1
        self.stats.update(broad=t1 - t0, narrow=t2 - t1, candidates=len(cand), touching=self.manager.touching_count,
                          **self.manager.stats)

    @property
    def candidate_pairs(self):
        """(k, 2) int64: the candidate body pairs of the last detection (broad phase and grounds)."""
        return np.asarray(self._candidates, np.int64).reshape(-1, 2)

    @property
    def events(self):
        """The :class:`app.world.contacts.ContactEvent` list of the last detection."""
        return self.manager.events

    def detect(self, candidates=None):
        """Exact triangle contacts (:func:`collision.collide`) of the candidate body pairs
        (default: the broad phase's, now); fills :attr:`contacts` and :attr:`stats`. A ground (a
        half-space) is left out: its mesh only draws the infinite plane, and everything resting on
        it sinks by the solver's slop."""
        cand = self.broad_phase() if candidates is None else candidates
        t1 = time.perf_counter()
        contacts = []
        box_tests = tri_tests = 0
        unbounded = self.sync().unbounded
        for i, j in np.asarray(cand, np.int64).reshape(-1, 2).tolist():
            if unbounded[i] or unbounded[j]:
                continue
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
        if self.narrow_choice.active:  # (off by default: no cost)
            self.narrow_choice.run(self)

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
        """(2, 3) world AABB of the scene (for framing the camera): of its bodies' meshes, leaving
        out the grounds (half-spaces) when there is anything else, since they only frame the floor."""
        bodies = [b for b in self.bodies if not b.unbounded] or self.bodies
        if not bodies:
            return np.array([[-1.0, -1, -1], [1, 1, 1]])
        boxes = np.array([b.mesh_aabb() for b in bodies])
        return np.stack([boxes[:, 0].min(0), boxes[:, 1].max(0)])
