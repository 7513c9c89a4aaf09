"""Motion of the dynamic bodies: gravity, contact impulses, semi-implicit Euler.

Each fixed step (seed 004, 2.4: simulate, detect, respond), for every body
with ``motion == "dynamic"`` and mass properties that is awake:

0. sleeping: islands of touching bodies that have all been slow for half a
   second fall asleep (they keep their poses exactly and their contacts are
   not recomputed) until one of them is woken;
1. velocities: gravity, then damping ``v /= 1 + c dt``;
2. the contact impulses of the current manifolds (:mod:`app.world.solver`), warm
   started from last step's and written back into the manifolds, and the
   split impulses that push penetrations apart; the mouse joint of a dragged
   body (:mod:`app.world.mouse_joint`) is solved with its island's contacts;
3. positions with the new velocities plus the split impulses' pseudo
   velocities (semi-implicit, or symplectic, Euler):
   the centre of mass moves by ``v dt``, the orientation quaternion by
   ``q += dt/2 (w, 0) q`` and is renormalised.

The pose stays the body's 4x4 model-to-world matrix, so everything else (the
viewer, user moves, saving) sees one representation; the quaternion is taken
from it and put back each step. ``body.velocity`` is the velocity of the
centre of mass and ``body.spin`` the angular velocity (world frame, rad/s).
"""

import math

import numpy as np
from obbcollide._jit import njit

from .body import DYNAMIC, KINEMATIC
from .contact_store import store_columns
from .mouse_joint import MouseJoint
from .patches import longest_run, patch_slots, slot_count
from .solver import ContactRows, _root, island_order, solve_contacts

__all__ = ["Dynamics", "quat_from_matrix", "matrix_from_quat", "SLEEP_SPEED", "SLEEP_SPIN", "SLEEP_TIME",
           "SETTLE_SPEED", "SETTLE_SPIN", "SETTLE_DAMPING"]

# A body slower than these (units/s, rad/s) for SLEEP_TIME seconds may sleep with its island.
SLEEP_SPEED = 0.05
SLEEP_SPIN = 0.1
SLEEP_TIME = 0.5
# A body in contact moving slower than these (units/s, rad/s) is settling: its velocity and spin are
# damped at SETTLE_DAMPING per second, so a disturbed stack comes to rest instead of rocking on its
# contacts for many seconds (see Dynamics._sleep).
SETTLE_SPEED = 0.25
SETTLE_SPIN = 1.0
SETTLE_DAMPING = 2.0


@njit(cache=True, borrow=True)
def _quat_kernel(r, q):
    for i in range(r.shape[0]):
        m = r[i]
        tr = m[0, 0] + m[1, 1] + m[2, 2]
        k, best = 0, tr
        for j in range(3):  # the largest component first keeps the division well conditioned
            if m[j, j] > best:
                k, best = j + 1, m[j, j]
        if k == 0:
            s = np.sqrt(1.0 + tr) * 2
            q[i, 0], q[i, 1], q[i, 2], q[i, 3] = 0.25 * s, (m[2, 1] - m[1, 2]) / s, (m[0, 2] - m[2, 0]) / s, \
                (m[1, 0] - m[0, 1]) / s
        elif k == 1:
            s = np.sqrt(1.0 + m[0, 0] - m[1, 1] - m[2, 2]) * 2
            q[i, 0], q[i, 1], q[i, 2], q[i, 3] = (m[2, 1] - m[1, 2]) / s, 0.25 * s, (m[0, 1] + m[1, 0]) / s, \
                (m[0, 2] + m[2, 0]) / s
        elif k == 2:
            s = np.sqrt(1.0 - m[0, 0] + m[1, 1] - m[2, 2]) * 2
            q[i, 0], q[i, 1], q[i, 2], q[i, 3] = (m[0, 2] - m[2, 0]) / s, (m[0, 1] + m[1, 0]) / s, 0.25 * s, \
                (m[1, 2] + m[2, 1]) / s
        else:
            s = np.sqrt(1.0 - m[0, 0] - m[1, 1] + m[2, 2]) * 2
            q[i, 0], q[i, 1], q[i, 2], q[i, 3] = (m[1, 0] - m[0, 1]) / s, (m[0, 2] + m[2, 0]) / s, \
                (m[1, 2] + m[2, 1]) / s, 0.25 * s
        norm = np.sqrt(q[i, 0] ** 2 + q[i, 1] ** 2 + q[i, 2] ** 2 + q[i, 3] ** 2)
        for j in range(4):
            q[i, j] /= norm


def quat_from_matrix(r):
    """Unit quaternions ``(n, 4)`` as (w, x, y, z) of rotations ``(n, 3, 3)`` (Shepperd's method)."""
    r = np.ascontiguousarray(r, dtype=float).reshape(-1, 3, 3)
    q = np.empty((len(r), 4))
    _quat_kernel(r, q)
    return q


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


@njit(cache=True)
def _begin_kernel(motion, sleeping, pose, com, inv_inertia, inv_mass, velocity, spin, gravity, dt, lin, ang, where):
    """The awake dynamic bodies' rows ``idx`` (``where[row]``: the index among them, -1 for others), and
    per awake body ``i`` (row ``r = idx[i]``): its centre of mass in the world ``x[i] = R c + t``, its
    inverse inertia in world axes ``inv_i[i] = R I^-1 R^T``, its inverse mass, and its velocity ``v``
    and spin ``w`` after gravity and damping (``v += g dt; v /= 1 + lin dt; w /= 1 + ang dt``).
    Returns ``idx, x, inv_i, inv_m, v, w`` and the number of sleeping dynamic bodies."""
    n = motion.shape[0]
    idx = np.empty(n, np.int64)
    k = asleep = 0
    for r in range(n):
        where[r] = -1
        if motion[r] == DYNAMIC:
            if sleeping[r]:
                asleep += 1
            else:
                where[r] = k
                idx[k] = r
                k += 1
    idx = idx[:k]
    x, inv_i = np.empty((k, 3)), np.empty((k, 3, 3))
    inv_m, v, w = np.empty(k), np.empty((k, 3)), np.empty((k, 3))
    g0, g1, g2 = gravity[0] * dt, gravity[1] * dt, gravity[2] * dt
    sl, sa = 1.0 + lin * dt, 1.0 + ang * dt
    for i in range(k):
        r = idx[i]
        for a in range(3):
            x[i, a] = pose[r, a, 0] * com[r, 0] + pose[r, a, 1] * com[r, 1] + pose[r, a, 2] * com[r, 2] + pose[r, a, 3]
        for a in range(3):
            for b in range(3):
                s = 0.0
                for j in range(3):
                    s += pose[r, a, j] * (inv_inertia[r, j, 0] * pose[r, b, 0] + inv_inertia[r, j, 1] * pose[r, b, 1]
                                          + inv_inertia[r, j, 2] * pose[r, b, 2])
                inv_i[i, a, b] = s
        inv_m[i] = inv_mass[r]
        v[i, 0], v[i, 1], v[i, 2] = (velocity[r, 0] + g0) / sl, (velocity[r, 1] + g1) / sl, (velocity[r, 2] + g2) / sl
        for a in range(3):
            w[i, a] = spin[r, a] / sa
    return idx, x, inv_i, inv_m, v, w, asleep


@njit(cache=True)
def _end_kernel(idx, pose, com, x, v, w, pv, pw, dt, velocity, spin):
    """Semi-implicit Euler on the awake bodies' poses ``pose[idx[i]]`` (4, 4) in place: the centre of
    mass ``x[i]`` moves by ``(v + pv) dt``; the orientation quaternion by ``q += dt/2 (0, w + pw) q``,
    renormalised; the velocities ``v``, ``w`` are written back to the rows."""
    q = np.empty((1, 4))
    for i in range(idx.shape[0]):
        r = idx[i]
        _quat_kernel(pose[r:r + 1, :3, :3], q)
        a0, a1, a2 = w[i, 0] + pw[i, 0], w[i, 1] + pw[i, 1], w[i, 2] + pw[i, 2]
        qw, qx, qy, qz = q[0, 0], q[0, 1], q[0, 2], q[0, 3]
        h = 0.5 * dt
        nw = qw - h * (a0 * qx + a1 * qy + a2 * qz)
        nx = qx + h * (a0 * qw + a1 * qz - a2 * qy)
        ny = qy + h * (a1 * qw + a2 * qx - a0 * qz)
        nz = qz + h * (a2 * qw + a0 * qy - a1 * qx)
        s = 1.0 / np.sqrt(nw * nw + nx * nx + ny * ny + nz * nz)
        qw, qx, qy, qz = nw * s, nx * s, ny * s, nz * s
        r00, r01, r02 = 1 - 2 * (qy * qy + qz * qz), 2 * (qx * qy - qw * qz), 2 * (qx * qz + qw * qy)
        r10, r11, r12 = 2 * (qx * qy + qw * qz), 1 - 2 * (qx * qx + qz * qz), 2 * (qy * qz - qw * qx)
        r20, r21, r22 = 2 * (qx * qz - qw * qy), 2 * (qy * qz + qw * qx), 1 - 2 * (qx * qx + qy * qy)
        pose[r, 0, 0], pose[r, 0, 1], pose[r, 0, 2] = r00, r01, r02
        pose[r, 1, 0], pose[r, 1, 1], pose[r, 1, 2] = r10, r11, r12
        pose[r, 2, 0], pose[r, 2, 1], pose[r, 2, 2] = r20, r21, r22
        for a in range(3):
            xa = x[i, a] + (v[i, a] + pv[i, a]) * dt
            pose[r, a, 3] = xa - (pose[r, a, 0] * com[r, 0] + pose[r, a, 1] * com[r, 1] + pose[r, a, 2] * com[r, 2])
            velocity[r, a] = v[i, a]
            spin[r, a] = w[i, a]


@njit(cache=True)
def _islands(keys, count, depths, impulse, motion, velocity, spin, sleeping, still, grab, dt, sleep_time,
             sleep_speed, sleep_spin, settle_speed, settle_spin, settle_damping):
    """Union-find of the dynamic bodies over the manifolds that link them: a touching point, a point
    that pushed, or a moving body (a speculative point of a ball flying at a sleeping pile wakes it
    in the step it would hit, not one step after). Each island sleeps once all its members have
    been slower than ``sleep_speed`` and ``sleep_spin`` for ``sleep_time`` and none is touched by a
    moving kinematic body, and wakes whole otherwise. Updates ``sleeping`` and ``still``; a body
    that falls asleep now stops (its velocity and spin are zeroed). An awake body that touches
    something and is slower than ``settle_speed`` and ``settle_spin`` (and is not ``grab``) has its
    velocity and spin divided by ``1 + settle_damping dt``."""
    n = motion.shape[0]
    slow = np.zeros(n, np.bool_)
    moving = np.zeros(n, np.bool_)
    kin_moving = np.zeros(n, np.bool_)
    for k in range(n):
        s2 = velocity[k, 0] ** 2 + velocity[k, 1] ** 2 + velocity[k, 2] ** 2
        w2 = spin[k, 0] ** 2 + spin[k, 1] ** 2 + spin[k, 2] ** 2
        slow[k] = s2 < sleep_speed * sleep_speed and w2 < sleep_spin * sleep_spin
        moving[k] = motion[k] == DYNAMIC and not sleeping[k] and not slow[k]
        kin_moving[k] = motion[k] == KINEMATIC and (s2 > 0.0 or w2 > 0.0)
    parent = np.arange(n)
    kicked = np.zeros(n, np.bool_)
    touching = np.zeros(n, np.bool_)
    for m in range(keys.shape[0]):
        i, j = keys[m, 0], keys[m, 1]
        linked = moving[i] or moving[j]
        for c in range(count[m]):
            if depths[m, c] >= 0.0:
                touching[i] = touching[j] = True
            linked = linked or depths[m, c] >= 0.0 or impulse[m, c, 0] > 0.0
        if not linked:
            continue
        di, dj = motion[i] == DYNAMIC, motion[j] == DYNAMIC
        if di and dj:
            parent[_root(parent, i)] = _root(parent, j)
        if di and kin_moving[j]:
            kicked[i] = True
        if dj and kin_moving[i]:
            kicked[j] = True
    for k in range(n):
        if motion[k] == DYNAMIC and not sleeping[k]:
            still[k] = still[k] + dt if (slow[k] and k != grab) else 0.0
    ready = np.ones(n, np.bool_)
    for k in range(n):
        if motion[k] == DYNAMIC:
            r = _root(parent, k)
            ready[r] = ready[r] and (sleeping[k] or still[k] >= sleep_time) and not kicked[k]
    for k in range(n):
        if motion[k] == DYNAMIC:
            if ready[_root(parent, k)]:
                if not sleeping[k]:
                    sleeping[k] = True
                    for a in range(3):
                        velocity[k, a] = 0.0
                        spin[k, a] = 0.0
            elif sleeping[k]:  # woken by its island
                sleeping[k] = False
                still[k] = 0.0
    settle = 1.0 / (1.0 + settle_damping * dt)
    for k in range(n):
        if motion[k] == DYNAMIC and not sleeping[k] and touching[k] and k != grab:
            s2 = velocity[k, 0] ** 2 + velocity[k, 1] ** 2 + velocity[k, 2] ** 2
            w2 = spin[k, 0] ** 2 + spin[k, 1] ** 2 + spin[k, 2] ** 2
            if s2 < settle_speed * settle_speed and w2 < settle_spin * settle_spin:
                for a in range(3):
                    velocity[k, a] *= settle
                    spin[k, a] *= settle


@njit(inline="always")
def _offset(points_a, points_b, m, i, pose, root_center, row, c):
    """Coordinate ``c`` of the midpoint of contact ``m, i`` minus body ``row``'s centre ``R c + t``."""
    centre = (pose[row, c, 0] * root_center[row, 0] + pose[row, c, 1] * root_center[row, 1]
              + pose[row, c, 2] * root_center[row, 2] + pose[row, c, 3])
    return 0.5 * (points_a[m, i, c] + points_b[m, i, c]) - centre


@njit(borrow=True)
def _gather_kernel(visit, keep, keys, count, normal, points_a, points_b, depths, impulse_in, where, x, motion, pose,
                   root_center, velocity, spin, friction, restitution, default_friction, default_restitution,
                   ia, ib, nrm, ra, rb, depth, fric, rest, imp, kin, mrow, slot):
    """The contact points of the store's rows that touch an awake dynamic body (``where[row] >= 0``,
    its index among the awake), flattened: per point the two awake indices (-1: infinite mass),
    normal, offsets from the centres of mass ``x``, depth, combined friction (geometric mean) and
    restitution (larger; NaN in the body table: the defaults), carried impulse, and the velocity
    of each non-dynamic side's material point (a moving kinematic body pushes); the store's rows
    in the order ``visit``, of each row the slots set in its mask ``keep`` (:mod:`app.world.patches`;
    a slot left out has its carried impulse zeroed in ``impulse_in``). Returns the count."""
    k = 0
    for vi in range(visit.shape[0]):
        m = visit[vi]
        a_row, b_row = keys[m, 0], keys[m, 1]
        wa, wb = where[a_row], where[b_row]
        if wa < 0 and wb < 0:
            continue
        fa = default_friction if np.isnan(friction[a_row]) else friction[a_row]
        fb = default_friction if np.isnan(friction[b_row]) else friction[b_row]
        ea = default_restitution if np.isnan(restitution[a_row]) else restitution[a_row]
        eb = default_restitution if np.isnan(restitution[b_row]) else restitution[b_row]
        f, e = math.sqrt(fa * fb), max(ea, eb)
        for i in range(count[m]):
            if not (keep[vi] >> i) & 1:
                impulse_in[m, i, 0] = impulse_in[m, i, 1] = impulse_in[m, i, 2] = 0.0
                continue
            ia[k], ib[k] = wa, wb
            for c in range(3):
                q = 0.5 * (points_a[m, i, c] + points_b[m, i, c])
                nrm[k, c] = normal[m, c]
                ra[k, c] = q - x[wa, c] if wa >= 0 else 0.0
                rb[k, c] = q - x[wb, c] if wb >= 0 else 0.0
                imp[k, c] = impulse_in[m, i, c]
            depth[k], fric[k], rest[k] = depths[m, i], f, e
            for side in range(2):
                row, w_ = (a_row, wa) if side == 0 else (b_row, wb)
                for c in range(3):
                    kin[k, side, c] = 0.0
                if w_ < 0 and motion[row] == KINEMATIC:
                    # the material point's velocity: v + w x (q - centre), centre = R c + t
                    r0 = _offset(points_a, points_b, m, i, pose, root_center, row, 0)
                    r1 = _offset(points_a, points_b, m, i, pose, root_center, row, 1)
                    r2 = _offset(points_a, points_b, m, i, pose, root_center, row, 2)
                    kin[k, side, 0] = velocity[row, 0] + spin[row, 1] * r2 - spin[row, 2] * r1
                    kin[k, side, 1] = velocity[row, 1] + spin[row, 2] * r0 - spin[row, 0] * r2
                    kin[k, side, 2] = velocity[row, 2] + spin[row, 0] * r1 - spin[row, 1] * r0
            mrow[k], slot[k] = m, i
            k += 1
    return k


@njit(cache=True)
def _rows_kernel(keys, count, normal, points_a, points_b, depths, impulse_in, where, x, motion, pose, root_center,
                 velocity, spin, friction, restitution, default_friction, default_restitution, reduce):
    """The contact points of the store's rows that touch an awake body, island by island (the
    rows of each island in store order; islands in the order of their first row), at most four
    of each patch of a body pair's manifolds when ``reduce`` (:func:`app.world.patches.patch_slots`),
    gathered by :func:`_gather_kernel`; with ``islands`` (m + 1,), where each island's points start."""
    m = keys.shape[0]
    active = np.empty(m, np.int64)
    k = 0
    for r in range(m):
        if where[keys[r, 0]] >= 0 or where[keys[r, 1]] >= 0:
            active[k] = r
            k += 1
    active = active[:k]
    ia_m, ib_m = np.empty(k, np.int64), np.empty(k, np.int64)
    for c in range(k):
        ia_m[c], ib_m[c] = where[keys[active[c], 0]], where[keys[active[c], 1]]
    order, starts = island_order(ia_m, ib_m, x.shape[0])
    visit = np.empty(k, np.int64)
    for c in range(k):
        visit[c] = active[order[c]]
    keep = np.empty(k, np.int64)
    r = longest_run(visit, keys) if reduce else 1  # (the scratch of the largest patch)
    cap = patch_slots(visit, keys, count, normal, points_a, points_b, depths, impulse_in, reduce, keep,
                      np.empty((4 * r, 3)), np.empty(4 * r), np.empty(4 * r, np.int64), np.empty(4 * r, np.int64),
                      np.empty(4 * r, np.bool_), np.empty(r, np.bool_))
    first = np.zeros(k + 1, np.int64)  # each visited row's first point
    for c in range(k):
        first[c + 1] = first[c] + slot_count(keep[c])
    ia, ib, mrow, slot = (np.empty(cap, np.int64), np.empty(cap, np.int64), np.empty(cap, np.int64),
                          np.empty(cap, np.int64))
    nrm, ra, rb, imp = np.empty((cap, 3)), np.empty((cap, 3)), np.empty((cap, 3)), np.empty((cap, 3))
    depth, fric, rest = np.empty(cap), np.empty(cap), np.empty(cap)
    kin = np.empty((cap, 2, 3))
    _gather_kernel(visit, keep, keys, count, normal, points_a, points_b, depths, impulse_in, where, x, motion, pose,
                   root_center, velocity, spin, friction, restitution, default_friction, default_restitution,
                   ia, ib, nrm, ra, rb, depth, fric, rest, imp, kin, mrow, slot)
    islands = np.empty(starts.shape[0], np.int64)
    for i in range(starts.shape[0]):
        islands[i] = first[starts[i]]
    return ia, ib, nrm, ra, rb, depth, fric, rest, imp, kin, mrow, slot, islands


@njit(cache=True)
def _put_impulses(mrow, slot, impulse, out):
    """``out[mrow[k], slot[k]] = impulse[k]``: the solved impulses back into the store's slots."""
    for k in range(mrow.shape[0]):
        for c in range(3):
            out[mrow[k], slot[k], c] = impulse[k, c]


# The composed step's kernels on the store's rows of words, the columns cut inside
# (app.world.contact_store.store_columns): they then have one layout whatever the count of rows, as
# in the one-call step (app.world.dynamics_step). Views handed to numba from Python are typed by
# numpy's flags, which call a single row's views contiguous: another compilation of each kernel.
@njit(cache=True)
def _islands_of(words, motion, velocity, spin, sleeping, still, grab, dt, sleep_time, sleep_speed, sleep_spin,
                settle_speed, settle_spin, settle_damping):
    """:func:`_islands` of the store whose rows are ``words``."""
    keys, count, _, _, _, depths, impulse = store_columns(words)
    _islands(keys, count, depths, impulse, motion, velocity, spin, sleeping, still, grab, dt, sleep_time, sleep_speed,
             sleep_spin, settle_speed, settle_spin, settle_damping)


@njit(cache=True)
def _rows_of(words, where, x, motion, pose, root_center, velocity, spin, friction, restitution, default_friction,
             default_restitution, reduce):
    """:func:`_rows_kernel` of the store whose rows are ``words``."""
    keys, count, normal, points_a, points_b, depths, impulse = store_columns(words)
    return _rows_kernel(keys, count, normal, points_a, points_b, depths, impulse, where, x, motion, pose, root_center,
                        velocity, spin, friction, restitution, default_friction, default_restitution, reduce)


@njit(cache=True)
def _put_impulses_of(mrow, slot, impulse, words):
    """:func:`_put_impulses` into the store whose rows are ``words``."""
    _put_impulses(mrow, slot, impulse, store_columns(words)[6])


_ONE_CALL = [None]  # app.world.dynamics_step.one_call_step, once imported (Dynamics._one_call)


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
    tolerance : float
        The solver stops iterating once two sweeps change no contact's relative velocity by more
        than this (scene units/s; 0 runs every iteration). Resting piles converge in a few.

    Attributes
    ----------
    patches : bool
        Solve at most four points of each patch of a body pair's manifolds that share a normal
        (:mod:`app.world.patches`: a body of pieces standing on the ground through several of
        them); False solves every point of every manifold.
    """

    def __init__(self, gravity=(0.0, -9.81, 0.0), iterations=20, linear_damping=0.01, angular_damping=0.05,
                 friction=0.5, restitution=0.0, warm_start=True, tolerance=1e-4):
        self.gravity = np.asarray(gravity, float)
        self.iterations = int(iterations)
        self.linear_damping = float(linear_damping)
        self.angular_damping = float(angular_damping)
        self.friction = float(friction)
        self.restitution = float(restitution)
        self.warm_start = bool(warm_start)
        self.tolerance = float(tolerance)
        self.stats = {"dynamic": 0, "contact_points": 0, "sleeping": 0}
        self.grab = None  # the mouse joint (app.world.mouse_joint.MouseJoint) or None
        self.allow_sleep = True  # False: no island falls asleep, and sleeping ones wake at the next step
        self.patches = True

    def grab_body(self, body, point, target, **options):
        """Pull the world ``point`` of ``body`` towards ``target`` with a mouse joint
        (:class:`app.world.mouse_joint.MouseJoint`, ``options`` go to it): soft, force- and speed-limited,
        solved with the contacts; ``target`` is updated by :meth:`move_grab`."""
        body.wake()
        self.grab = MouseJoint(body, point, target, **options)

    def move_grab(self, target):
        """Move the grabbed point's target (world (3,)); wakes the body."""
        if self.grab is not None:
            self.grab.target = np.asarray(target, float).copy()
            self.grab.body.wake()

    def release(self):
        self.grab = None

    @staticmethod
    def moves(body):
        """True for a body this class moves (dynamic, with mass)."""
        return body.moves

    def _grab_row(self, table):
        if self.grab is None:
            return -1
        body = self.grab.body
        return body._row if body._st is table.state else -1

    def _sleep(self, table, words, dt):
        """Islands of dynamic bodies that touch (union-find over the manifolds) sleep together once
        every member has moved slower than SLEEP_SPEED / SLEEP_SPIN for SLEEP_TIME; an island with
        one body awake (a ball hits the pile, the user grabs it) wakes whole. A sleeping body keeps
        its pose exactly and its contacts are not recomputed (:mod:`app.world.contacts`).

        Settling: a body that touches something and moves slower than SETTLE_SPEED / SETTLE_SPIN is
        damped at SETTLE_DAMPING per second. A column of boxes nudged at the top rocks on its
        contacts' edges; real blocks lose energy at every impact of a rocking edge, but the
        iterative solver, never fully converged on a tall stack, lands those edges softly, and the
        column swayed for ten seconds and more. The damping only acts in the last quarter metre
        per second before sleep, where it changes no motion a person would follow.

        ``words``: the store's rows (:attr:`app.world.contact_store.ContactStore.words`)."""
        st = table.state
        grab, *thresholds = self._sleep_args(table)
        _islands_of(words, table.motion, st.velocity, st.spin, st.sleeping, st.still, grab, float(dt), *thresholds)

    def _sleep_args(self, table):
        """The arguments of :func:`_islands` but the columns and the step: the grabbed row, then the
        sleeping and settling thresholds."""
        return (self._grab_row(table), float(SLEEP_TIME) if self.allow_sleep else math.inf, float(SLEEP_SPEED),
                float(SLEEP_SPIN), float(SETTLE_SPEED), float(SETTLE_SPIN), float(SETTLE_DAMPING))

    def step(self, table, store, dt):
        """Advance the dynamic bodies of ``table`` (an :class:`app.world.body.BodyTable`) by ``dt`` under
        the contacts of ``store`` (an :class:`app.world.contacts.ContactStore`, whose impulses are updated)."""
        st = table.state
        if self._one_call(table, store, dt):  # (the sleeping islands included)
            return
        words = store.words
        self._sleep(table, words, dt)
        where = np.empty(len(table.motion), np.int64)
        idx, x, inv_i, inv_m, v, w, asleep = _begin_kernel(
            table.motion, st.sleeping, st.pose, table.com, table.inv_inertia, table.inv_mass, st.velocity, st.spin,
            self.gravity, float(dt), self.linear_damping, self.angular_damping, where)
        self.stats = {"dynamic": len(idx), "contact_points": 0, "sleeping": asleep}
        if not len(idx):
            return
        joint = None
        g = self._grab_row(table)
        if g >= 0 and where[g] >= 0:
            k = where[g]
            packed = self.grab.pack(x[k], inv_m[k], inv_i[k], self.gravity, float(dt))
            if self.warm_start:
                MouseJoint.warm_start(v, w, inv_m, inv_i, k, packed)
            joint = (int(k), packed)

        rows, kin, slots = self._rows(table, words, where, x)
        pv = pw = np.zeros_like(v)
        if rows is not None or joint is not None:
            pv, pw = solve_contacts(v, w, inv_m, inv_i, rows, kin, dt, self.iterations, warm=self.warm_start,
                                    tolerance=self.tolerance, stats=self.stats, joint=joint)
        if rows is not None:
            _put_impulses_of(slots[0], slots[1], rows.impulse, words)
            self.stats["contact_points"] = len(rows.ia)
        if joint is not None:
            self.grab.keep(joint[1])
        _end_kernel(idx, st.pose, table.com, x, v, w, pv, pw, float(dt), st.velocity, st.spin)

    def _one_call(self, table, store, dt):
        """:meth:`step` as one compiled call (:func:`app.world.dynamics_step.dynamics_step_serial`,
        the same kernels in the same order) when the solve would run on one thread and no mouse joint
        holds a body; returns whether it ran."""
        if self.grab is not None:
            return False
        one_call = _ONE_CALL[0]
        if one_call is None:  # (imported at the first step: that module imports this one)
            from .dynamics_step import one_call_step as one_call

            _ONE_CALL[0] = one_call
        return one_call(self, table, store, dt)

    def _rows(self, table, words, where, x):
        """The contact points touching an awake dynamic body, as :class:`ContactRows` (island by
        island); with the kinematic velocities and the store slots ``(manifold rows, point slots)``
        they came from; ``words`` the store's rows."""
        if not len(words):
            return None, None, None
        st = table.state
        ia, ib, normal, ra, rb, depth, fric, rest, impulse, kin, mrow, slot, islands = _rows_of(
            words, where, x, table.motion, st.pose, table.root_center, st.velocity, st.spin, table.friction,
            table.restitution, self.friction, self.restitution, bool(self.patches))
        if not len(ia):
            return None, None, None
        return ContactRows(ia, ib, normal, ra, rb, depth, fric, rest, impulse, islands=islands), kin, (mrow, slot)
