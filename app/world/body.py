"""Rigid bodies, and their motion state packed into arrays for the world's step.

A :class:`Body` is what the scene, the viewer and the tests hold: a mesh,
its OBB tree, its convex shapes, mass properties and a colour. Its motion
state (pose, velocity, spin, sleeping) lives in a row of a
:class:`BodyTable`'s arrays, as Box2D, Jolt and Bullet keep body state in flat
pools: the world's step reads and writes every body at once (one numpy
expression or one compiled loop instead of a Python loop over objects), and
``body.pose`` is a view of its row, so code that holds a body sees it move.

A body made on its own owns a one-row table; a :class:`~app.world.world.World`
moves the state of its bodies into one table (:meth:`BodyTable.adopt`) and
the bodies follow. Assigning ``body.pose = p`` copies ``p`` into the row.
Changing what the table derives from the bodies (motion, mass, shapes,
friction, restitution) marks it stale, and the world derives it again.
"""

from dataclasses import dataclass

import numpy as np

from obbcollide._jit import njit
from obbcollide.shapes import HalfSpace, Hull, TriMesh

__all__ = ["Body", "MassProperties", "BodyTable", "STATIC", "KINEMATIC", "DYNAMIC"]

# BodyTable.motion codes. DYNAMIC is a body the dynamics moves (motion "dynamic" with mass
# properties); a "dynamic" body without mass moves kinematically, by its velocities.
STATIC, KINEMATIC, DYNAMIC = 0, 1, 2


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


class _State:
    """The motion state of ``n`` bodies: the arrays a body's properties read and write.

    Attributes
    ----------
    pose : (n, 4, 4) float64
        Model-to-world transforms.
    velocity, spin : (n, 3) float64
        Linear velocity of the centre of mass (units/s) and angular velocity (rad/s), world.
    sleeping : (n,) bool
    still : (n,) float64
        Seconds each body has been slow (see :mod:`app.world.dynamics`).
    stale : bool
        A derived property of a body (motion, mass, shapes, ...) changed.
    robbed : bool
        Another table took one of these bodies.
    """

    def __init__(self, n):
        self.pose = np.zeros((n, 4, 4))
        self.pose[:] = np.eye(4)
        self.velocity = np.zeros((n, 3))
        self.spin = np.zeros((n, 3))
        self.sleeping = np.zeros(n, dtype=bool)
        self.still = np.zeros(n)
        self.stale = True
        self.robbed = False


class Body:
    """A rigid mesh in the scene.

    Parameters and attributes
    -------------------------
    name : str
    vertices : (n, 3) float64
        Model-frame vertices (for drawing).
    faces : (m, 3) int64
    tree : collision.OBBTree
    pose : (4, 4) float64
        Model-to-world transform (a view of the body's table row; assigning copies).
    color : (3,) float
        RGB in 0..1.
    spin : (3,) float64
        Angular velocity (rad/s, world frame) about the body's centre.
    home : (4, 4) float64, optional
        Where :meth:`app.world.world.World.reset` puts it back (default: the first pose).
    velocity : (3,) float64
        Linear velocity (units/s, world frame).
    motion : str
        ``"static"`` bodies never move; ``"kinematic"`` ones move with their
        velocities (the user drives them); ``"dynamic"`` ones with mass
        properties respond to gravity and contacts (:mod:`app.world.dynamics`).
    pieces : app.scene.pieces.ConvexPieces or None
        Convex pieces with their trees (scene files; None for the demo meshes).
    mass : MassProperties or None
        From the closed mesh and the density; None for open meshes (static only).
    shapes : list of collision shapes
        The shapes of the narrow phase, model frame: the pieces' hulls by
        default; a sphere / capsule primitive's exact shape; a plane's
        half-space; a static concave mesh's triangles. Empty: the body only
        gets exact triangle contacts.
    friction, restitution : float or None
        Contact coefficients; None takes the dynamics' defaults.
    sleeping : bool
        A resting dynamic body whose island sleeps (see :mod:`app.world.dynamics`);
        ``still`` is how long (s) it has been slow.
    """

    def __init__(self, name, vertices, faces, tree, pose, color, spin=(0.0, 0.0, 0.0), home=None,
                 velocity=(0.0, 0.0, 0.0), motion="kinematic", pieces=None, mass=None, shapes=None, friction=None,
                 restitution=None, sleeping=False, still=0.0):
        self._st, self._row = _State(1), 0
        self.name = name
        self.vertices = vertices
        self.faces = faces
        self.tree = tree
        self.color = color
        self._motion, self._mass, self._friction, self._restitution = motion, mass, friction, restitution
        self.pieces = pieces
        self._shapes = shapes if shapes is not None else (
            [Hull(h) for h in pieces.hulls] if pieces is not None else [])
        self.pose = pose
        self.spin = spin
        self.velocity = velocity
        self.sleeping = sleeping
        self.still = still
        self.home = self.pose.copy() if home is None else np.array(home, dtype=float)
        self.home_motion = (self.velocity.copy(), self.spin.copy())
        self._bound = None  # (key, half extents): see bound_half

    def __repr__(self):
        return f"Body({self.name!r}, motion={self.motion!r})"

    # -- the state, in the table's row ---------------------------------------------------

    @property
    def pose(self):
        return self._st.pose[self._row]

    @pose.setter
    def pose(self, value):
        self._st.pose[self._row] = value

    @property
    def velocity(self):
        return self._st.velocity[self._row]

    @velocity.setter
    def velocity(self, value):
        self._st.velocity[self._row] = value

    @property
    def spin(self):
        return self._st.spin[self._row]

    @spin.setter
    def spin(self, value):
        self._st.spin[self._row] = value

    @property
    def sleeping(self):
        return bool(self._st.sleeping[self._row])

    @sleeping.setter
    def sleeping(self, value):
        self._st.sleeping[self._row] = bool(value)

    @property
    def still(self):
        return float(self._st.still[self._row])

    @still.setter
    def still(self, value):
        self._st.still[self._row] = value

    # -- what the table derives: changing it marks the table stale -------------------------

    def _derived(name):  # noqa: N805 - a property factory used in the class body
        attr = "_" + name

        def get(self):
            return getattr(self, attr)

        def put(self, value):
            setattr(self, attr, value)
            self._st.stale = True

        return property(get, put)

    motion = _derived("motion")
    mass = _derived("mass")
    shapes = _derived("shapes")
    friction = _derived("friction")
    restitution = _derived("restitution")
    del _derived

    # -------------------------------------------------------------------------------------

    def wake(self):
        """Back to the simulation (a sleeping body is frozen until its island wakes)."""
        self.sleeping = False
        self.still = 0.0

    @property
    def moves(self):
        """True for a body the dynamics moves (dynamic, with mass)."""
        return self._motion == "dynamic" and self._mass is not None

    @property
    def unbounded(self):
        """True for a body with a half-space (an infinite ground): it stays out of the broad phase."""
        return any(isinstance(s, HalfSpace) for s in self._shapes)

    @property
    def bound_half(self):
        """(3,) half extents of the body's bounding box: the root OBB of its tree (same centre and
        axes), grown where its collision shapes reach out of it. Convex pieces made by a
        decomposition (V-HACD) do not lie inside the mesh: their hulls bulge out of it by a few
        millimetres, and two bodies resting on such bulges have meshes, and root OBBs, that are
        apart. The broad phase, the ground pairs and the sweep work on this box, so the pair of
        two touching bodies stays a candidate. Kept until :attr:`shapes` or :attr:`tree` is
        replaced."""
        key = (id(self.tree), id(self._shapes))
        if self._bound is None or self._bound[0] != key:
            self._bound = (key, shapes_half(self.tree.centers[0], self.tree.axes[0], self.tree.half_extents[0],
                                            self._shapes))
        return self._bound[1]

    @property
    def radius(self):
        """Of the bounding box's (:attr:`bound_half`) circumscribed sphere, about its centre."""
        return float(np.linalg.norm(self.bound_half))

    def world_aabb(self):
        """(2, 3): tight world AABB of the bounding box :attr:`bound_half` (|R| times the half extents):
        what the broad phase sees."""
        return self._world_box(self.bound_half)

    def mesh_aabb(self):
        """(2, 3): tight world AABB of the mesh's root OBB: what is drawn (the camera frames it; the
        collision shapes may bulge out of it, see :attr:`bound_half`)."""
        return self._world_box(self.tree.half_extents[0])

    def _world_box(self, half):
        pose = self.pose
        rot = pose[:3, :3] @ self.tree.axes[0].T
        center = pose[:3, :3] @ self.tree.centers[0] + pose[:3, 3]
        half = np.abs(rot) @ half
        return np.stack([center - half, center + half])

    def world_center(self):
        return self.pose[:3, :3] @ self.tree.centers[0] + self.pose[:3, 3]


class BodyTable:
    """The packed state of a world's bodies, and what the step derives from them once.

    Row ``k`` is ``bodies[k]``; a body listed twice keeps the first row (the
    others are copies: ``alias`` (n,) gives each row's first row, and the
    copies count as static and collide with nothing). The state arrays (see :class:`_State`: ``pose``,
    ``velocity``, ``spin``, ``sleeping``, ``still``) are the bodies' own.

    Derived attributes (from :meth:`derive`)
    ----------------------------------------
    motion : (n,) int8
        :data:`STATIC`, :data:`KINEMATIC` or :data:`DYNAMIC`.
    unbounded : (n,) bool
        Has a half-space (no AABB).
    bounded_rows, ground_rows : (m,) int64
        The rows without and with a half-space.
    shape_count : (n,) int64
    radius : (n,) float64
        Of the bounding box's circumscribed sphere, about its centre.
    root_center, root_half : (n, 3) float64; root_axes : (n, 3, 3) float64
        Bounding boxes, model frame: the root OBBs' centres and axes, and half extents grown to
        hold the collision shapes (:attr:`Body.bound_half`).
    friction, restitution : (n,) float64
        NaN for None (the dynamics' default).
    com : (n, 3) float64
        Centre of mass, model frame (zero for bodies the dynamics does not move).
    inv_mass : (n,) float64; inv_inertia : (n, 3, 3) float64
        Zero for bodies the dynamics does not move.
    """

    def __init__(self):
        self.bodies = []
        self._key = None
        self.state = _State(0)
        self.version = 0  # bumped whenever the rows or what is derived from them change
        self.alias = np.zeros(0, np.int64)
        self.derive()

    def __len__(self):
        return len(self.bodies)

    def adopt(self, bodies):
        """Make this table the state of ``bodies`` (a list); True if it had to change.

        Bodies keep their current state; those no longer listed get their own
        one-row tables again (with their last state).
        """
        if self._key is not None and not self.state.robbed and bodies == self._key:  # same bodies (by identity)
            if self.state.stale:
                self.derive()
            return False
        key = list(bodies)
        old = self.bodies
        st = _State(len(bodies))
        first = {}
        for k, b in enumerate(bodies):
            st.pose[k], st.velocity[k], st.spin[k] = b.pose, b.velocity, b.spin
            st.sleeping[k], st.still[k] = b.sleeping, b.still
            first.setdefault(id(b), k)
        kept = set(first)
        for b in old:  # let go of the bodies that left
            if id(b) not in kept and b._st is self.state:
                own = _State(1)
                own.pose[0], own.velocity[0], own.spin[0] = b.pose, b.velocity, b.spin
                own.sleeping[0], own.still[0] = b.sleeping, b.still
                b._st, b._row = own, 0
        for b in bodies:
            if b._st is not st and b._st is not self.state:
                b._st.robbed = True  # another table held it: that table must adopt again before use
            b._st, b._row = st, first[id(b)]
        self.alias = np.array([first[id(b)] for b in bodies], dtype=np.int64).reshape(len(bodies))
        self.bodies = list(bodies)
        self._key = key  # a copy of the list: list == compares the bodies by identity (Body has no __eq__)
        self.state = st
        self.derive()
        return True

    def derive(self):
        """Recompute the derived arrays from the bodies."""
        bodies = self.bodies
        n = len(bodies)
        self.motion = np.array([DYNAMIC if b.moves else STATIC if b.motion == "static" else KINEMATIC
                                for b in bodies], dtype=np.int8).reshape(n)
        copies = self.alias != np.arange(n)
        self.motion[copies] = STATIC  # a second listing of a body is an inert copy
        self.aliased = bool(copies.any())  # (read every step: whether a body is listed twice)
        self.kinematic_rows = np.flatnonzero(self.motion == KINEMATIC)  # (moved by World.integrate)
        self.unbounded = np.array([b.unbounded for b in bodies], dtype=bool).reshape(n)
        self.bounded_rows = np.flatnonzero(~self.unbounded)
        self.ground_rows = np.flatnonzero(self.unbounded)
        self.shape_count = np.array([len(b.shapes) for b in bodies], dtype=np.int64).reshape(n)
        self.radius = np.array([b.radius for b in bodies], dtype=float).reshape(n)
        self.root_center = np.array([b.tree.centers[0] for b in bodies], dtype=float).reshape(n, 3)
        self.root_axes = np.array([b.tree.axes[0] for b in bodies], dtype=float).reshape(n, 3, 3)
        self.root_half = np.array([b.bound_half for b in bodies], dtype=float).reshape(n, 3)
        self.friction = np.array([np.nan if b.friction is None else b.friction for b in bodies], float).reshape(n)
        self.restitution = np.array([np.nan if b.restitution is None else b.restitution for b in bodies],
                                    float).reshape(n)
        self.com = np.zeros((n, 3))
        self.inv_mass = np.zeros(n)
        self.inv_inertia = np.zeros((n, 3, 3))
        inverses = {}
        for k, b in enumerate(bodies):
            if self.motion[k] == DYNAMIC:
                m = b.mass
                if id(m) not in inverses:
                    inverses[id(m)] = np.linalg.inv(m.inertia)
                self.com[k] = m.center
                self.inv_mass[k] = 1.0 / m.mass
                self.inv_inertia[k] = inverses[id(m)]
        self.state.stale = False
        self.version += 1


def shapes_half(center, axes, half, shapes):
    """(3,) half extents of the box of centre ``center`` (3,) and axes ``axes`` (3, 3) rows that holds
    the box of half extents ``half`` (3,) and every bounded shape of ``shapes`` (model frame): a
    hull's vertices, a sphere's or capsule's core grown by its radius, a triangle mesh's root OBB
    corners; half-spaces are unbounded and left out."""
    out = np.array(half, dtype=float)
    signs = np.array([[x, y, z] for x in (-1, 1) for y in (-1, 1) for z in (-1, 1)], float)
    for s in shapes:
        if isinstance(s, HalfSpace):
            continue
        if isinstance(s, TriMesh):
            t = s.tree
            points, grow = t.centers[0] + (signs * t.half_extents[0]) @ t.axes[0], 0.0
        else:  # Hull (radius 0), Sphere, Capsule: a core and a radius
            points, grow = np.asarray(s.core, float).reshape(-1, 3), float(getattr(s, "radius", 0.0))
        if len(points):
            reach = np.abs((points - center) @ np.asarray(axes, float).T).max(axis=0) + grow
            out = np.maximum(out, reach)
    return out


@njit(cache=True, borrow=True)
def box_world_bounds(pose, i, center, axes, half, k, pad, lo, hi):
    """``lo, hi`` (3,): the world AABB of local box ``k`` (``center[k]``, ``axes[k]`` rows, ``half[k]``)
    under the pose ``pose[i]`` (4, 4), grown by ``pad``: centre ``R c + t``, half extents
    ``|R A^T| h + pad`` (RTCD 4.2.6)."""
    for a in range(3):
        c = pose[i, a, 3]
        e = pad
        for b in range(3):
            c += pose[i, a, b] * center[k, b]
        for j in range(3):  # the world axis a's extent of the box's axis j
            m = pose[i, a, 0] * axes[k, j, 0] + pose[i, a, 1] * axes[k, j, 1] + pose[i, a, 2] * axes[k, j, 2]
            e += abs(m) * half[k, j]
        lo[a], hi[a] = c - e, c + e
