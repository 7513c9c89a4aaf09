"""Motion of the dynamic bodies: gravity, contact impulses, semi-implicit Euler.

Each fixed step (seed 004, 2.4: simulate, detect, respond), for every body
with ``motion == "dynamic"`` and mass properties that is awake:

0. sleeping: islands of touching bodies that have all been slow for half a
   second fall asleep (they keep their poses exactly and their contacts are
   not recomputed) until one of them is woken;
1. velocities: gravity, then damping ``v /= 1 + c dt``;
2. the contact impulses of the current manifolds (:mod:`app.solver`), warm
   started from last step's and written back into the manifolds, and the
   split impulses that push penetrations apart;
3. positions with the new velocities plus the split impulses' pseudo
   velocities (semi-implicit, or symplectic, Euler):
   the centre of mass moves by ``v dt``, the orientation quaternion by
   ``q += dt/2 (w, 0) q`` and is renormalised.

The pose stays the body's 4x4 model-to-world matrix, so everything else (the
viewer, user moves, saving) sees one representation; the quaternion is taken
from it and put back each step. ``body.velocity`` is the velocity of the
centre of mass and ``body.spin`` the angular velocity (world frame, rad/s).
"""

import numpy as np

from .solver import ContactRows, solve_contacts

__all__ = ["Dynamics", "quat_from_matrix", "matrix_from_quat", "SLEEP_SPEED", "SLEEP_SPIN", "SLEEP_TIME"]

# A body slower than these (units/s, rad/s) for SLEEP_TIME seconds may sleep with its island.
SLEEP_SPEED = 0.05
SLEEP_SPIN = 0.1
SLEEP_TIME = 0.5


def quat_from_matrix(r):
    """Unit quaternions ``(n, 4)`` as (w, x, y, z) of rotations ``(n, 3, 3)`` (Shepperd's method)."""
    r = np.asarray(r, float)
    n = len(r)
    q = np.empty((n, 4))
    tr = r[:, 0, 0] + r[:, 1, 1] + r[:, 2, 2]
    diag = np.stack([tr, r[:, 0, 0], r[:, 1, 1], r[:, 2, 2]], axis=1)
    k = np.argmax(diag, axis=1)
    for i in range(n):  # the largest component first keeps the division well conditioned
        m = r[i]
        if k[i] == 0:
            s = np.sqrt(1.0 + tr[i]) * 2
            q[i] = (0.25 * s, (m[2, 1] - m[1, 2]) / s, (m[0, 2] - m[2, 0]) / s, (m[1, 0] - m[0, 1]) / s)
        elif k[i] == 1:
            s = np.sqrt(1.0 + m[0, 0] - m[1, 1] - m[2, 2]) * 2
            q[i] = ((m[2, 1] - m[1, 2]) / s, 0.25 * s, (m[0, 1] + m[1, 0]) / s, (m[0, 2] + m[2, 0]) / s)
        elif k[i] == 2:
            s = np.sqrt(1.0 - m[0, 0] + m[1, 1] - m[2, 2]) * 2
            q[i] = ((m[0, 2] - m[2, 0]) / s, (m[0, 1] + m[1, 0]) / s, 0.25 * s, (m[1, 2] + m[2, 1]) / s)
        else:
            s = np.sqrt(1.0 - m[0, 0] - m[1, 1] + m[2, 2]) * 2
            q[i] = ((m[1, 0] - m[0, 1]) / s, (m[0, 2] + m[2, 0]) / s, (m[1, 2] + m[2, 1]) / s, 0.25 * s)
    return q / np.linalg.norm(q, axis=1)[:, None]


def matrix_from_quat(q):
    """Rotations ``(n, 3, 3)`` of quaternions ``(n, 4)`` (w, x, y, z), normalised first."""
    q = np.asarray(q, float)
    q = q / np.linalg.norm(q, axis=1)[:, None]
    w, x, y, z = q.T
    return np.stack([
        np.stack([1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)], axis=1),
        np.stack([2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)], axis=1),
        np.stack([2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)], axis=1),
    ], axis=1)


def _quat_step(q, w, dt):
    """``q + dt/2 (0, w) q``, renormalised (q (n, 4), w (n, 3) world)."""
    qw, qv = q[:, :1], q[:, 1:]
    dw = -np.sum(w * qv, axis=1, keepdims=True)
    dv = w * qw + np.cross(w, qv)
    out = q + 0.5 * dt * np.concatenate([dw, dv], axis=1)
    return out / np.linalg.norm(out, axis=1)[:, None]


class Dynamics:
    """Gravity, contact response and integration of the dynamic bodies.

    Parameters
    ----------
    gravity : (3,) float
        Acceleration, scene units / s^2.
    iterations : int
        Solver iterations per step.
    linear_damping, angular_damping : float
        Per second.
    friction, restitution : float
        Defaults for bodies whose ``friction`` / ``restitution`` is None; a
        contact takes the geometric mean of the frictions and the larger
        restitution.
    warm_start : bool
        Start the solver from last step's impulses.
    """

    def __init__(self, gravity=(0.0, -9.81, 0.0), iterations=20, linear_damping=0.01, angular_damping=0.05,
                 friction=0.5, restitution=0.0, warm_start=True):
        self.gravity = np.asarray(gravity, float)
        self.iterations = int(iterations)
        self.linear_damping = float(linear_damping)
        self.angular_damping = float(angular_damping)
        self.friction = float(friction)
        self.restitution = float(restitution)
        self.warm_start = bool(warm_start)
        self.stats = {"dynamic": 0, "contact_points": 0}
        self.grab = None  # (body, point in its model frame, world target): the mouse spring
        self._inverses = {}  # id(mass properties) -> (them, inverse inertia)

    def grab_body(self, body, point, target):
        """Pull the world ``point`` of ``body`` towards ``target`` with a critically damped spring
        (Bullet's mouse picking); ``target`` is updated by :meth:`move_grab`."""
        body.wake()
        local = np.linalg.solve(body.pose[:3, :3], np.asarray(point, float) - body.pose[:3, 3])
        self.grab = (body, local, np.asarray(target, float))

    def move_grab(self, target):
        if self.grab is not None:
            self.grab = (self.grab[0], self.grab[1], np.asarray(target, float))

    def release(self):
        self.grab = None

    def _sleep(self, bodies, manifolds, dt):
        """Islands of dynamic bodies that touch (union-find over the manifolds) sleep together once
        every member has moved slower than SLEEP_SPEED / SLEEP_SPIN for SLEEP_TIME; an island with
        one body awake (a ball hits the pile, the user grabs it) wakes whole. A sleeping body keeps
        its pose exactly and its contacts are not recomputed (:mod:`app.contacts`)."""
        dyn = [b for b in bodies if self.moves(b)]
        if not dyn:
            return
        parent = {id(b): id(b) for b in dyn}

        def root(i):
            while parent[i] != i:
                parent[i] = parent[parent[i]]
                i = parent[i]
            return i

        kicked = set()  # touched by a moving kinematic body (the user's): its island wakes
        def moving(b):
            return not b.sleeping and (float(np.linalg.norm(b.velocity)) >= SLEEP_SPEED
                                       or float(np.linalg.norm(b.spin)) >= SLEEP_SPIN)

        for pm in manifolds:
            # bodies in contact, or about to be (a speculative point of a moving body): a ball flying
            # at a sleeping pile wakes it in the step it would hit, not one step after
            if not (pm.touching or np.any(pm.impulses[:, 0] > 0.0) or
                    (id(pm.a) in parent and moving(pm.a)) or (id(pm.b) in parent and moving(pm.b))):
                continue
            if id(pm.a) in parent and id(pm.b) in parent:
                parent[root(id(pm.a))] = root(id(pm.b))
            for this, other in ((pm.a, pm.b), (pm.b, pm.a)):
                if id(this) in parent and other.motion == "kinematic" and (np.any(other.velocity) or
                                                                           np.any(other.spin)):
                    kicked.add(id(this))
        grabbed = self.grab[0] if self.grab is not None else None
        for b in dyn:
            if b.sleeping:
                continue
            slow = (float(np.linalg.norm(b.velocity)) < SLEEP_SPEED and float(np.linalg.norm(b.spin)) < SLEEP_SPIN
                    and b is not grabbed)
            b.still = b.still + dt if slow else 0.0
        ready = {}
        for b in dyn:
            r = root(id(b))
            ready[r] = ready.get(r, True) and (b.sleeping or b.still >= SLEEP_TIME) and id(b) not in kicked
        for b in dyn:
            if ready[root(id(b))]:
                if not b.sleeping:
                    b.sleeping = True
                    b.velocity, b.spin = np.zeros(3), np.zeros(3)
            elif b.sleeping:  # woken by its island
                b.sleeping = False
                b.still = 0.0

    def _spring(self, dyn, x, v, w, inv_m, inv_i, dt):
        """The grab spring's impulse on its body this step: stiffness for a period of ~0.15 s at the
        body's mass, critically damped, along the grabbed point's error and velocity."""
        body, local, target = self.grab
        k = next((i for i, b in enumerate(dyn) if b is body), None)
        if k is None:
            return
        r = body.pose[:3, :3] @ local + body.pose[:3, 3] - x[k]
        point_v = v[k] + np.cross(w[k], r)
        omega = 2 * np.pi / 0.15
        error = x[k] + r - target
        impulse = -(omega * omega * error + 2.0 * omega * point_v) * dt / inv_m[k]
        impulse = impulse / (1.0 + 2.0 * omega * dt)  # implicit in the damping: stable at any dt
        v[k] += inv_m[k] * impulse
        w[k] += inv_i[k] @ np.cross(r, impulse)

    def _inverse_inertia(self, mass):
        """The inverse of a body's model-frame inertia tensor, computed once per mass properties."""
        inv = self._inverses.get(id(mass))
        if inv is None or inv[0] is not mass:
            inv = (mass, np.linalg.inv(mass.inertia))
            self._inverses[id(mass)] = inv
        return inv[1]

    @staticmethod
    def moves(body):
        """True for a body this class moves (dynamic, with mass)."""
        return body.motion == "dynamic" and body.mass is not None

    def step(self, bodies, manifolds, dt):
        """Advance the dynamic bodies of ``bodies`` by ``dt`` under the contacts of ``manifolds``
        (:class:`app.contacts.PersistentManifold`, whose impulses are updated)."""
        manifolds = list(manifolds)
        self._sleep(bodies, manifolds, dt)
        dyn = [b for b in bodies if self.moves(b) and not b.sleeping]
        self.stats = {"dynamic": len(dyn), "contact_points": 0,
                      "sleeping": sum(1 for b in bodies if self.moves(b) and b.sleeping)}
        if not dyn:
            return
        row = {id(b): k for k, b in enumerate(dyn)}
        pose = np.array([b.pose for b in dyn])
        rot = pose[:, :3, :3]
        com_local = np.array([b.mass.center for b in dyn])
        x = np.einsum("nij,nj->ni", rot, com_local) + pose[:, :3, 3]
        v = np.array([b.velocity for b in dyn], float)
        w = np.array([b.spin for b in dyn], float)
        inv_m = np.array([1.0 / b.mass.mass for b in dyn])
        inv_i_local = np.array([self._inverse_inertia(b.mass) for b in dyn])
        inv_i = rot @ inv_i_local @ np.transpose(rot, (0, 2, 1))

        v += self.gravity * dt
        v /= 1.0 + self.linear_damping * dt
        w /= 1.0 + self.angular_damping * dt
        if self.grab is not None:
            self._spring(dyn, x, v, w, inv_m, inv_i, dt)

        rows, kin, owners = self._rows(manifolds, row, x)
        pv = pw = 0.0
        if rows is not None:
            pv, pw = solve_contacts(v, w, inv_m, inv_i, rows, kin, dt, self.iterations, warm=self.warm_start)
            for pm, lo, hi in owners:
                pm.impulses[:] = rows.impulse[lo:hi]
            self.stats["contact_points"] = len(rows.ia)

        x += (v + pv) * dt
        q = _quat_step(quat_from_matrix(rot), w + pw, dt)
        rot = matrix_from_quat(q)
        t = x - np.einsum("nij,nj->ni", rot, com_local)
        for k, b in enumerate(dyn):
            p = np.eye(4)
            p[:3, :3] = rot[k]
            p[:3, 3] = t[k]
            b.pose = p
            b.velocity = v[k]
            b.spin = w[k]

    def _rows(self, manifolds, row, x):
        """The contact points touching a dynamic body, as :class:`ContactRows`."""
        parts = []
        owners = []
        n = 0
        for pm in manifolds:
            ia, ib = row.get(id(pm.a), -1), row.get(id(pm.b), -1)
            if ia < 0 and ib < 0:
                continue
            k = len(pm.manifold.depths)
            parts.append((pm, ia, ib))
            owners.append((pm, n, n + k))
            n += k
        if not n:
            return None, None, owners
        ia = np.empty(n, np.int64)
        ib = np.empty(n, np.int64)
        normal = np.empty((n, 3))
        point = np.empty((n, 3))
        depth = np.empty(n)
        fric = np.empty(n)
        rest = np.empty(n)
        impulse = np.empty((n, 3))
        kin = np.zeros((n, 2, 3))
        ra = np.empty((n, 3))
        rb = np.empty((n, 3))
        for (pm, a, b), (_, lo, hi) in zip(parts, owners):
            m = pm.manifold
            ia[lo:hi], ib[lo:hi] = a, b
            normal[lo:hi] = m.normal
            p = m.points
            point[lo:hi] = p
            depth[lo:hi] = m.depths
            fa = self.friction if pm.a.friction is None else pm.a.friction
            fb = self.friction if pm.b.friction is None else pm.b.friction
            fric[lo:hi] = np.sqrt(fa * fb)
            rest[lo:hi] = max(self.restitution if pm.a.restitution is None else pm.a.restitution,
                              self.restitution if pm.b.restitution is None else pm.b.restitution)
            impulse[lo:hi] = pm.impulses
            for side, body, r, out in ((0, pm.a, a, ra), (1, pm.b, b, rb)):
                if r >= 0:
                    out[lo:hi] = p - x[r]
                else:  # infinite mass: its own velocity at the contact point, and r = 0
                    out[lo:hi] = 0.0
                    if body.motion == "kinematic":
                        centre = body.world_center()
                        kin[lo:hi, side] = body.velocity + np.cross(body.spin, p - centre)
        return ContactRows(ia, ib, normal, ra, rb, depth, fric, rest, impulse), kin, owners
