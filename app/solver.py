"""Rigid-body response: sequential impulses on the persistent contact manifolds.

Catto's sequential-impulse solver (Box2D, GDC 2005-2014), written for this
project: every contact point is a non-penetration constraint along the
manifold normal and two friction constraints along the tangents. Each
iteration visits every point and applies the impulse that makes its relative
velocity what the constraint wants, keeping the *accumulated* impulse clamped
(normal >= 0, friction inside the disc ``|lambda_t| <= mu lambda_n``, the
cross-section of the Coulomb cone),
so the order of the points matters less and less. The impulses of the last
step are applied first (warm starting: the manifolds carry them point by
point, :mod:`app.contacts`), which is what lets a stack of boxes rest.

What the normal constraint wants (``depth`` > 0 penetration, < 0 a gap):

- penetration beyond the slop is removed at ``beta (depth - slop) / dt`` by
  split impulses: pseudo velocities that move the positions of this step
  only, so the correction adds no kinetic energy (Baumgarte's bias on the
  real velocities would make resting contacts jitter and stacks creep);
- a speculative point (a gap) lets the bodies approach by at most the gap in
  this step (``-gap / dt``), so a fast body stops at the surface instead of
  passing it (speculative contacts, Catto 2013);
- an approach faster than ``bounce_threshold`` bounces back with
  ``restitution`` times its speed, in a pass after the others and only at
  points that pushed (so a speculative point that never closes gives none).

Bodies are arrays here (index into the world's dynamic set; -1 for a static or
kinematic body, which has infinite mass but keeps its velocity). The hot loop
is compiled.
"""

import math

import numpy as np
from numba import njit

from collision import _vec as v

__all__ = ["ContactRows", "solve_contacts", "tangents"]


def tangents(normals):
    """Two unit tangents ``(k, 3)`` each, orthogonal to ``normals (k, 3)`` and to each other."""
    n = np.asarray(normals, float)
    helper = np.where(np.abs(n[:, :1]) < 0.57, np.array([[1.0, 0, 0]]), np.array([[0, 1.0, 0]]))
    t1 = np.cross(n, helper)
    t1 /= np.linalg.norm(t1, axis=1)[:, None]
    t2 = np.cross(n, t1)
    return t1, t2


class ContactRows:
    """The contact points of one step as flat arrays (built by the world).

    Attributes
    ----------
    ia, ib : (k,) int64
        Body rows of A and B (-1: infinite mass).
    normal, ra, rb, t1, t2 : (k, 3) float64
        Normal from A to B; contact point minus each body's centre of mass;
        tangents.
    depth : (k,) float64
    friction, restitution : (k,) float64
    impulse : (k, 3) float64
        Accumulated (normal, tangent 1, tangent 2) impulses: warm start in,
        result out.
    """

    def __init__(self, ia, ib, normal, ra, rb, depth, friction, restitution, impulse):
        self.ia, self.ib = ia, ib
        self.normal, self.ra, self.rb, self.depth = normal, ra, rb, depth
        self.t1, self.t2 = tangents(normal) if len(normal) else (normal.copy(), normal.copy())
        self.friction, self.restitution = friction, restitution
        self.impulse = impulse


@njit(cache=True, inline="always")
def _mat_vec(m, i, a):
    """``m[i] @ a`` for a stack of 3x3 matrices and a tuple vector."""
    return (m[i, 0, 0] * a[0] + m[i, 0, 1] * a[1] + m[i, 0, 2] * a[2],
            m[i, 1, 0] * a[0] + m[i, 1, 1] * a[1] + m[i, 1, 2] * a[2],
            m[i, 2, 0] * a[0] + m[i, 2, 1] * a[1] + m[i, 2, 2] * a[2])


@njit(cache=True)
def _eff_mass(ia, ib, r_a, r_b, d, inv_m, inv_i):
    """1 / (J M^-1 J^T) for direction ``d`` at offsets ``r_a``, ``r_b`` (tuples)."""
    k = 0.0
    if ia >= 0:
        c = v.cross(r_a, d)
        k += inv_m[ia] + v.dot(c, _mat_vec(inv_i, ia, c))
    if ib >= 0:
        c = v.cross(r_b, d)
        k += inv_m[ib] + v.dot(c, _mat_vec(inv_i, ib, c))
    return 1.0 / k if k > 0.0 else 0.0


@njit(cache=True, inline="always")
def _rel_vel(ia, ib, r_a, r_b, vel, w, kin, c):
    """Velocity of B's contact point minus A's (a row -1 uses the contact's kinematic velocity)."""
    if ia >= 0:
        pa = v.add(v.row(vel, ia), v.cross(v.row(w, ia), r_a))
    else:
        pa = (kin[c, 0, 0], kin[c, 0, 1], kin[c, 0, 2])
    if ib >= 0:
        pb = v.add(v.row(vel, ib), v.cross(v.row(w, ib), r_b))
    else:
        pb = (kin[c, 1, 0], kin[c, 1, 1], kin[c, 1, 2])
    return v.sub(pb, pa)


@njit(cache=True, inline="always")
def _apply(ia, ib, r_a, r_b, p, vel, w, inv_m, inv_i):
    """Impulse ``p`` on B at ``r_b`` and ``-p`` on A at ``r_a``."""
    if ia >= 0:
        dw = _mat_vec(inv_i, ia, v.cross(r_a, p))
        for k in range(3):
            vel[ia, k] -= inv_m[ia] * p[k]
            w[ia, k] -= dw[k]
    if ib >= 0:
        dw = _mat_vec(inv_i, ib, v.cross(r_b, p))
        for k in range(3):
            vel[ib, k] += inv_m[ib] * p[k]
            w[ib, k] += dw[k]


@njit(cache=True)
def _split_kernel(pv, pw, inv_m, inv_i, ia, ib, normal, ra, rb, depth, dt, iterations, beta, slop):
    """Split impulses: push penetrations deeper than the slop apart with pseudo velocities
    ``pv, pw`` that move the positions this step and are then forgotten, so the correction
    adds no kinetic energy (Catto's split impulse; Bullet's ``splitImpulse``)."""
    k = len(ia)
    mn = np.empty(k)
    target = np.empty(k)
    acc = np.zeros(k)
    zero = np.zeros((k, 2, 3))
    for c in range(k):
        mn[c] = _eff_mass(ia[c], ib[c], v.row(ra, c), v.row(rb, c), v.row(normal, c), inv_m, inv_i)
        target[c] = beta * max(depth[c] - slop, 0.0) / dt
    for it in range(iterations):
        for j in range(k):
            c = j if it % 2 == 0 else k - 1 - j
            if target[c] == 0.0 and acc[c] == 0.0:
                continue
            a, b = ia[c], ib[c]
            r_a, r_b, n = v.row(ra, c), v.row(rb, c), v.row(normal, c)
            vn = v.dot(_rel_vel(a, b, r_a, r_b, pv, pw, zero, c), n)
            old = acc[c]
            new = max(old + mn[c] * (target[c] - vn), 0.0)
            acc[c] = new
            _apply(a, b, r_a, r_b, v.scale(n, new - old), pv, pw, inv_m, inv_i)


@njit(cache=True)
def _solve_kernel(vel, w, inv_m, inv_i, ia, ib, kin, normal, ra, rb, t1, t2, depth, friction,
                  restitution, impulse, dt, iterations, bounce_threshold, warm):
    k = len(ia)
    mn = np.empty(k)
    mt1 = np.empty(k)
    mt2 = np.empty(k)
    target = np.empty(k)
    approach = np.empty(k)
    for c in range(k):
        a, b = ia[c], ib[c]
        r_a, r_b, n = v.row(ra, c), v.row(rb, c), v.row(normal, c)
        u1, u2 = v.row(t1, c), v.row(t2, c)
        mn[c] = _eff_mass(a, b, r_a, r_b, n, inv_m, inv_i)
        mt1[c] = _eff_mass(a, b, r_a, r_b, u1, inv_m, inv_i)
        mt2[c] = _eff_mass(a, b, r_a, r_b, u2, inv_m, inv_i)
        approach[c] = v.dot(_rel_vel(a, b, r_a, r_b, vel, w, kin, c), n)
        d = depth[c]
        target[c] = 0.0 if d > 0.0 else d / dt  # a gap: approach by at most the gap (penetration: split impulses)
        if warm:
            p = v.add(v.scale(n, impulse[c, 0]), v.add(v.scale(u1, impulse[c, 1]), v.scale(u2, impulse[c, 2])))
            _apply(a, b, r_a, r_b, p, vel, w, inv_m, inv_i)
        else:
            impulse[c, 0] = impulse[c, 1] = impulse[c, 2] = 0.0
    for it in range(iterations):
        for j in range(k):
            # alternate the sweep direction (symmetric Gauss-Seidel): a one-way order leaves a bias
            # that makes a stack creep sideways
            c = j if it % 2 == 0 else k - 1 - j
            a, b = ia[c], ib[c]
            r_a, r_b, n = v.row(ra, c), v.row(rb, c), v.row(normal, c)
            u1, u2 = v.row(t1, c), v.row(t2, c)
            # friction first (Box2D's order), bounded by the current normal impulse
            # (the Coulomb cone's cross-section: the two tangent impulses together, clamped to a disc)
            limit = friction[c] * impulse[c, 0]
            vr = _rel_vel(a, b, r_a, r_b, vel, w, kin, c)
            old1, old2 = impulse[c, 1], impulse[c, 2]
            new1 = old1 - mt1[c] * v.dot(vr, u1)
            new2 = old2 - mt2[c] * v.dot(vr, u2)
            length = math.sqrt(new1 * new1 + new2 * new2)
            if length > limit:
                s = limit / length
                new1 *= s
                new2 *= s
            impulse[c, 1] = new1
            impulse[c, 2] = new2
            _apply(a, b, r_a, r_b, v.add(v.scale(u1, new1 - old1), v.scale(u2, new2 - old2)), vel, w, inv_m, inv_i)
            vr = _rel_vel(a, b, r_a, r_b, vel, w, kin, c)
            old = impulse[c, 0]
            new = max(old + mn[c] * (target[c] - v.dot(vr, n)), 0.0)
            impulse[c, 0] = new
            _apply(a, b, r_a, r_b, v.scale(n, new - old), vel, w, inv_m, inv_i)
    # Restitution after the non-penetration solve (Box2D v3's order): only points that pushed this
    # step (the bodies really meet; a speculative point that stayed apart gets no bounce), only
    # approaches faster than the threshold, towards -restitution times the approach speed.
    for it in range(iterations):
        for j in range(k):
            c = j if it % 2 == 0 else k - 1 - j
            if restitution[c] <= 0.0 or approach[c] >= -bounce_threshold or impulse[c, 0] <= 0.0:
                continue
            a, b = ia[c], ib[c]
            r_a, r_b, n = v.row(ra, c), v.row(rb, c), v.row(normal, c)
            vr = _rel_vel(a, b, r_a, r_b, vel, w, kin, c)
            old = impulse[c, 0]
            new = max(old + mn[c] * (-restitution[c] * approach[c] - v.dot(vr, n)), 0.0)
            impulse[c, 0] = new
            _apply(a, b, r_a, r_b, v.scale(n, new - old), vel, w, inv_m, inv_i)


def solve_contacts(vel, w, inv_m, inv_i, rows, kin, dt, iterations=10, beta=0.2, slop=0.005,
                   bounce_threshold=0.5, warm=True):
    """Solve the contact constraints in place: ``vel``, ``w`` and ``rows.impulse`` change.

    Returns the pseudo velocities ``(pv, pw)`` (n, 3) of the position correction, which the
    caller adds to the velocities for this step's position update only.

    Parameters
    ----------
    vel, w : (n, 3) float64
        Linear (of the centre of mass) and angular velocities of the dynamic bodies, world.
    inv_m : (n,) float64
    inv_i : (n, 3, 3) float64
        Inverse inertia tensors in world axes.
    rows : ContactRows
    kin : (k, 2, 3) float64
        For each contact, the velocity of A's and of B's material point at the
        contact when that body is not dynamic (row -1): a kinematic body pushes
        with its velocity; a static one has zero.
    dt : float
    iterations : int
    beta, slop : float
        Baumgarte factor and allowed penetration (scene units).
    bounce_threshold : float
        Approach speeds below this do not bounce (units/s).
    warm : bool
        Apply the carried impulses first.
    """
    pv, pw = np.zeros_like(vel), np.zeros_like(w)
    if not len(rows.ia):
        return pv, pw
    _solve_kernel(vel, w, inv_m, inv_i, rows.ia, rows.ib, kin, rows.normal, rows.ra, rows.rb, rows.t1,
                  rows.t2, rows.depth, rows.friction, rows.restitution, rows.impulse, float(dt), int(iterations),
                  float(bounce_threshold), bool(warm))
    _split_kernel(pv, pw, inv_m, inv_i, rows.ia, rows.ib, rows.normal, rows.ra, rows.rb, rows.depth, float(dt),
                  int(iterations), float(beta), float(slop))
    return pv, pw
