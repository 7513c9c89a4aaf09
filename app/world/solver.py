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
point, :mod:`app.world.contacts`), which is what lets a stack of boxes rest.

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
is compiled. The points are solved island by island (bodies joined by contacts,
:func:`island_order`): islands share no body, so they run on numba's threads
side by side, each iterating until its own velocities stop changing, and give
the same numbers on any number of threads. Each thread solves two islands at a time
side by side, their points in turns (a point's impulses are a chain of
dependent arithmetic; the processor works on one island's while the other's
waits), each island getting what it would alone. In the split impulses the
points between the same two bodies are solved as a group, their velocities held
in registers.
"""

import math
import time

import numpy as np
from numba import njit, prange

from obbcollide import _jit
from obbcollide import _vec as v
from obbcollide.threads import ThreadChoice, serial_twin

from .mouse_joint import solve_mouse_joint

__all__ = ["ContactRows", "island_order", "solve_contacts", "tangents"]


@njit(cache=True)
def _tangent_kernel(n, t1, t2):
    for c in range(n.shape[0]):
        u = v.row(n, c)
        helper = (1.0, 0.0, 0.0) if abs(u[0]) < 0.57 else (0.0, 1.0, 0.0)
        a = v.cross(u, helper)
        a = v.scale(a, 1.0 / v.norm(a))
        v.store(t1, c, a)
        v.store(t2, c, v.cross(u, a))


def tangents(normals):
    """Two unit tangents ``(k, 3)`` each, orthogonal to ``normals (k, 3)`` and to each other:
    ``t1 = n x e / |n x e|`` with ``e`` the x axis, or the y axis for a normal near x; ``t2 = n x t1``."""
    n = np.ascontiguousarray(np.asarray(normals, float).reshape(-1, 3))
    t1, t2 = np.empty_like(n), np.empty_like(n)
    _tangent_kernel(n, t1, t2)
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
    islands : (m + 1,) int64 or None
        Where each island's points start, when the points already come island
        by island (as :func:`island_order` would give them); None: found by
        :func:`solve_contacts`.
    """

    def __init__(self, ia, ib, normal, ra, rb, depth, friction, restitution, impulse, islands=None):
        self.ia, self.ib = ia, ib
        self.islands = islands
        self.normal, self.ra, self.rb, self.depth = normal, ra, rb, depth
        self.t1, self.t2 = tangents(normal)
        self.friction, self.restitution = friction, restitution
        self.impulse = impulse


# Columns of the per-point constraint table: for each direction d (normal, tangent 1, tangent 2)
# its unit vector, r_a x d, r_b x d, and their images under the inverse inertias; then the three
# effective masses and the kinematic bodies' relative velocity along each direction.
_U, _JA, _JB, _MA, _MB = 0, 9, 18, 27, 36
_MASS, _KINV = 45, 48
_WIDTH = 51


@njit(cache=True, inline="always")
def _get(p, c, o):
    return (p[c, o], p[c, o + 1], p[c, o + 2])


@njit(cache=True, inline="always")
def _put(p, c, o, x):
    p[c, o], p[c, o + 1], p[c, o + 2] = x[0], x[1], x[2]


@njit(cache=True, inline="always")
def _inv_i_times(inv_i, a, x):
    return (inv_i[a, 0, 0] * x[0] + inv_i[a, 0, 1] * x[1] + inv_i[a, 0, 2] * x[2],
            inv_i[a, 1, 0] * x[0] + inv_i[a, 1, 1] * x[1] + inv_i[a, 1, 2] * x[2],
            inv_i[a, 2, 0] * x[0] + inv_i[a, 2, 1] * x[1] + inv_i[a, 2, 2] * x[2])


@_jit.njit(borrow=True)
def _side(i, r, u, inv_m, inv_i, kin_v):
    """One body's part of a constraint along ``u`` at offset ``r``: ``(r x u, I^-1 (r x u), its
    share of J M^-1 J^T, 0)``; for a body of infinite mass (row -1) ``(0, 0, 0, kin_v . u)``, the
    velocity its material point has along ``u`` (a kinematic body's push)."""
    if i >= 0:
        x = v.cross(r, u)
        y = _inv_i_times(inv_i, i, x)
        return x, y, inv_m[i] + v.dot(x, y), 0.0
    zero = (0.0, 0.0, 0.0)
    return zero, zero, 0.0, kin_v[0] * u[0] + kin_v[1] * u[1] + kin_v[2] * u[2]


# The per-body helpers below branch on the row (-1: a body of infinite mass, read as zero
# velocities). They are compiled as calls of their own that borrow their arrays
# (obbcollide._jit.njit(borrow=True)), not inlined: an inlined helper that takes an array and
# branches inside makes numba count references on the array (atomic calls) at every use, which
# cost several times the arithmetic of the solver's inner loop (measured 13x on the warm start).
@_jit.njit(borrow=True)
def _load(vel, w, i):
    """Body row ``i``'s velocity and spin as tuples, zeros for ``i < 0``."""
    if i >= 0:
        return v.row(vel, i), v.row(w, i)
    return (0.0, 0.0, 0.0), (0.0, 0.0, 0.0)


@_jit.njit(borrow=True)
def _store(vel, w, i, lin, ang):
    """Write body row ``i``'s velocity and spin (nothing for ``i < 0``)."""
    if i >= 0:
        v.store(vel, i, lin)
        v.store(w, i, ang)


@njit(cache=True, parallel=True)
def _constraints(ia, ib, ra, rb, normal, t1, t2, inv_m, inv_i, kin, p):
    """Fill the constraint table ``p`` (k, _WIDTH): per point and direction ``d`` the angular
    Jacobians ``r x d``, their images under the inverse inertia, the effective mass
    ``1 / (J M^-1 J^T)`` and the kinematic part of the relative velocity along ``d`` (Bullet's
    solver constraints: computed once per step, not in every iteration). Each row depends on its
    point alone, so the rows are spread over the threads (``prange``)."""
    for c in prange(ia.shape[0]):
        for d in range(3):
            u = v.row(normal, c) if d == 0 else (v.row(t1, c) if d == 1 else v.row(t2, c))
            _put(p, c, _U + 3 * d, u)
            xa, ya, ka, kva = _side(ia[c], v.row(ra, c), u, inv_m, inv_i, (kin[c, 0, 0], kin[c, 0, 1], kin[c, 0, 2]))
            xb, yb, kb, kvb = _side(ib[c], v.row(rb, c), u, inv_m, inv_i, (kin[c, 1, 0], kin[c, 1, 1], kin[c, 1, 2]))
            _put(p, c, _JA + 3 * d, xa)
            _put(p, c, _MA + 3 * d, ya)
            _put(p, c, _JB + 3 * d, xb)
            _put(p, c, _MB + 3 * d, yb)
            k = ka + kb
            p[c, _MASS + d] = 1.0 / k if k > 0.0 else 0.0
            p[c, _KINV + d] = kvb - kva  # B's point minus A's


@njit(cache=True, inline="always")
def _along(p, c, d, va, wa, vb, wb):
    """Velocity of B's contact point minus A's along direction ``d`` (zero velocities stand for a
    body of infinite mass; its motion is in the table's kinematic column): ``(v_b - v_a) . u +
    w_b . (r_b x u) - w_a . (r_a x u)``, its three dot products side by side and added last (the
    point's impulses are one chain of dependent arithmetic, and this link was twelve additions
    long; 7-10% off the velocity iterations)."""
    o = 3 * d
    x = ((vb[0] - va[0]) * p[c, _U + o] + (vb[1] - va[1]) * p[c, _U + o + 1]) + (vb[2] - va[2]) * p[c, _U + o + 2]
    y = (wb[0] * p[c, _JB + o] + wb[1] * p[c, _JB + o + 1]) + wb[2] * p[c, _JB + o + 2]
    z = (wa[0] * p[c, _JA + o] + wa[1] * p[c, _JA + o + 1]) + wa[2] * p[c, _JA + o + 2]
    return p[c, _KINV + d] + (x + (y - z))


@njit(cache=True, inline="always")
def _along_a(p, c, d, va, wa):
    """:func:`_along` when B has infinite mass (``vb = wb = 0``): the same sums less the terms that are
    zero, so the same value (only a zero's sign can differ)."""
    o = 3 * d
    x = ((0.0 - va[0]) * p[c, _U + o] + (0.0 - va[1]) * p[c, _U + o + 1]) + (0.0 - va[2]) * p[c, _U + o + 2]
    z = (wa[0] * p[c, _JA + o] + wa[1] * p[c, _JA + o + 1]) + wa[2] * p[c, _JA + o + 2]
    return p[c, _KINV + d] + (x + (0.0 - z))


@njit(cache=True, inline="always")
def _along_b(p, c, d, vb, wb):
    """:func:`_along` when A has infinite mass (``va = wa = 0``)."""
    o = 3 * d
    x = (vb[0] * p[c, _U + o] + vb[1] * p[c, _U + o + 1]) + vb[2] * p[c, _U + o + 2]
    y = (wb[0] * p[c, _JB + o] + wb[1] * p[c, _JB + o + 1]) + wb[2] * p[c, _JB + o + 2]
    return p[c, _KINV + d] + (x + y)


@njit(cache=True, inline="always")
def _push(p, c, ma, mb, lam, va, wa, vb, wb):
    """The velocities after a normal impulse ``lam`` at point ``c``: A pushed back, B forward."""
    n = _get(p, c, _U)
    return (v.madd(va, n, -ma * lam), v.madd(wa, _get(p, c, _MA), -lam),
            v.madd(vb, n, mb * lam), v.madd(wb, _get(p, c, _MB), lam))


@_jit.njit(borrow=True)
def _groups(ia, ib, s0, s1, groups, base):
    """The starts of the runs of consecutive points between the same two bodies in ``[s0, s1)``, then
    ``s1``, written to ``groups[base:]`` (at most ``s1 - s0 + 1`` entries); returns the number of runs."""
    g = 0
    for c in range(s0, s1):
        if c == s0 or ia[c] != ia[c - 1] or ib[c] != ib[c - 1]:
            groups[base + g] = c
            g += 1
    groups[base + g] = s1
    return g


# The per-island kernels below borrow their arrays (obbcollide._jit.njit(borrow=True)): they are
# called once per island, and a scene of small islands (a hundred boxes apart on the ground) would
# otherwise spend more on counting references to their twenty arrays than on its few points.
@_jit.njit(borrow=True)
def _split_range(pv, pw, inv_m, ia, ib, p, depth, dt, iterations, beta, slop, s0, s1, target, acc, groups, base):
    """Split impulses of the points ``[s0, s1)`` (one island): push penetrations deeper than the
    slop apart with pseudo velocities ``pv, pw`` that move the positions this step and are then
    forgotten, so the correction adds no kinetic energy (Catto's split impulse; Bullet's
    ``splitImpulse``). ``target`` and ``acc`` are scratch over all points, ``groups[base:]`` over the
    island's (:func:`_groups`)."""
    deep = False
    for c in range(s0, s1):
        target[c] = beta * max(depth[c] - slop, 0.0) / dt
        acc[c] = 0.0
        deep = deep or target[c] > 0.0
    if not deep:
        return
    ng = _groups(ia, ib, s0, s1, groups, base)
    for it in range(iterations):
        forward = it % 2 == 0
        for gj in range(ng):
            g = gj if forward else ng - 1 - gj
            g0, g1 = groups[base + g], groups[base + g + 1]
            busy = False
            for c in range(g0, g1):
                busy = busy or target[c] != 0.0 or acc[c] != 0.0
            if not busy:
                continue
            a, b = ia[g0], ib[g0]
            va, wa = _load(pv, pw, a)
            vb, wb = _load(pv, pw, b)
            ma, mb = (inv_m[a] if a >= 0 else 0.0), (inv_m[b] if b >= 0 else 0.0)
            for jj in range(g1 - g0):
                c = g0 + jj if forward else g1 - 1 - jj
                if target[c] == 0.0 and acc[c] == 0.0:
                    continue
                vn = _along(p, c, 0, va, wa, vb, wb) - p[c, _KINV]  # pseudo velocities: no kinematic part
                old = acc[c]
                new = max(old + p[c, _MASS] * (target[c] - vn), 0.0)
                acc[c] = new
                lam = new - old
                va, wa, vb, wb = _push(p, c, ma, mb, lam, va, wa, vb, wb)
            _store(pv, pw, a, va, wa)
            _store(pv, pw, b, vb, wb)


@_jit.njit(borrow=True)
def _warm_range(vel, w, inv_m, ia, ib, p, depth, impulse, dt, warm, s0, s1, target, approach):
    """Before the velocity iterations of the points ``[s0, s1)`` (one island): each point's approach
    speed (``approach``, for restitution) and normal target (``target``), and the carried impulses
    applied (``warm``; else they are zeroed)."""
    for c in range(s0, s1):
        a, b = ia[c], ib[c]
        va, wa = _load(vel, w, a)
        vb, wb = _load(vel, w, b)
        approach[c] = _along(p, c, 0, va, wa, vb, wb)
        d = depth[c]
        target[c] = 0.0 if d > 0.0 else d / dt  # a gap: approach by at most the gap (penetration: split impulses)
        if warm:
            for dd in range(3):
                lam = impulse[c, dd]
                o = 3 * dd
                if a >= 0:
                    va = v.madd(va, _get(p, c, _U + o), -inv_m[a] * lam)
                    wa = v.madd(wa, _get(p, c, _MA + o), -lam)
                if b >= 0:
                    vb = v.madd(vb, _get(p, c, _U + o), inv_m[b] * lam)
                    wb = v.madd(wb, _get(p, c, _MB + o), lam)
            _store(vel, w, a, va, wa)
            _store(vel, w, b, vb, wb)
        else:
            impulse[c, 0] = impulse[c, 1] = impulse[c, 2] = 0.0


@njit(cache=True, inline="always")
def _clamped(limit, new1, new2):
    """The two tangent impulses clamped to the friction disc of radius ``limit`` (the Coulomb cone's
    cross-section), their direction kept."""
    length2 = new1 * new1 + new2 * new2
    if length2 > limit * limit:
        s = limit / math.sqrt(length2)
        new1 *= s
        new2 *= s
    return new1, new2


@njit(cache=True, inline="always")
def _changed(p, c, change, tolerance, lam, l1, l2):
    """``change`` grown by point ``c``'s impulses over their effective masses (once it exceeds
    ``tolerance`` it is not grown further: only whether it does is read)."""
    if change <= tolerance:
        for d, dl in ((0, lam), (1, l1), (2, l2)):
            if p[c, _MASS + d] > 0.0:
                change = max(change, abs(dl) / p[c, _MASS + d])
    return change


# Inlined into the (borrowing) sweep kernels below, which count no references: compiled inside them,
# the two points of _sweeps_two are one stretch of code the processor overlaps.
@njit(cache=True, inline="always")
def _point(vel, w, inv_m, ia, ib, p, friction, impulse, target, c, change, tolerance):
    """Point ``c``'s friction then normal impulse, its bodies' velocities read and written back;
    returns ``change`` grown by the relative velocity change of its impulses (``lambda`` / effective
    mass), which the caller compares with ``tolerance`` (only whether a pair of sweeps' largest
    exceeds it is read, so once one does the point need not divide: the same iterations run).
    A point with one dynamic body (on the ground, on a kinematic body) goes to :func:`_point_one`."""
    if ia[c] < 0 or ib[c] < 0:
        return _point_one(vel, w, inv_m, ia, ib, p, friction, impulse, target, c, change, tolerance)
    a, b = ia[c], ib[c]  # (both dynamic here)
    va, wa = v.row(vel, a), v.row(w, a)
    vb, wb = v.row(vel, b), v.row(w, b)
    ma, mb = inv_m[a], inv_m[b]
    # friction first (Box2D's order), bounded by the current normal impulse
    limit = friction[c] * impulse[c, 0]
    old1, old2 = impulse[c, 1], impulse[c, 2]
    new1, new2 = _clamped(limit, old1 - p[c, _MASS + 1] * _along(p, c, 1, va, wa, vb, wb),
                          old2 - p[c, _MASS + 2] * _along(p, c, 2, va, wa, vb, wb))
    impulse[c, 1] = new1
    impulse[c, 2] = new2
    l1, l2 = new1 - old1, new2 - old2
    lin = v.add(v.scale(_get(p, c, _U + 3), l1), v.scale(_get(p, c, _U + 6), l2))
    va = v.madd(va, lin, -ma)
    vb = v.madd(vb, lin, mb)
    wa = v.sub(wa, v.add(v.scale(_get(p, c, _MA + 3), l1), v.scale(_get(p, c, _MA + 6), l2)))
    wb = v.add(wb, v.add(v.scale(_get(p, c, _MB + 3), l1), v.scale(_get(p, c, _MB + 6), l2)))
    old = impulse[c, 0]
    new = max(old + p[c, _MASS] * (target[c] - _along(p, c, 0, va, wa, vb, wb)), 0.0)
    impulse[c, 0] = new
    lam = new - old
    change = _changed(p, c, change, tolerance, lam, l1, l2)
    va, wa, vb, wb = _push(p, c, ma, mb, lam, va, wa, vb, wb)
    v.store(vel, a, va)
    v.store(w, a, wa)
    v.store(vel, b, vb)
    v.store(w, b, wb)
    return change


@njit(cache=True, inline="always")
def _point_one(vel, w, inv_m, ia, ib, p, friction, impulse, target, c, change, tolerance):
    """:func:`_point` for a point with one dynamic body, the other of infinite mass (its velocity
    and spin read as zeros by :func:`_point`, its ``_MA`` or ``_MB`` columns zero, its motion in
    ``_KINV``): the same arithmetic less the products with those zeros and the other body's
    updates, which leave it at zero, so the same impulses and velocities bit for bit (but for a
    zero's sign). A box resting on the ground is four such points; on a falling pile's first
    layer they were a fifth off the velocity iterations (55 us against 45 for 25 boxes)."""
    on_a = ia[c] >= 0
    d = ia[c] if on_a else ib[c]
    vd, wd = v.row(vel, d), v.row(w, d)
    md = inv_m[d]
    limit = friction[c] * impulse[c, 0]
    old1, old2 = impulse[c, 1], impulse[c, 2]
    if on_a:
        new1, new2 = _clamped(limit, old1 - p[c, _MASS + 1] * _along_a(p, c, 1, vd, wd),
                              old2 - p[c, _MASS + 2] * _along_a(p, c, 2, vd, wd))
    else:
        new1, new2 = _clamped(limit, old1 - p[c, _MASS + 1] * _along_b(p, c, 1, vd, wd),
                              old2 - p[c, _MASS + 2] * _along_b(p, c, 2, vd, wd))
    impulse[c, 1] = new1
    impulse[c, 2] = new2
    l1, l2 = new1 - old1, new2 - old2
    lin = v.add(v.scale(_get(p, c, _U + 3), l1), v.scale(_get(p, c, _U + 6), l2))
    if on_a:
        vd = v.madd(vd, lin, -md)
        wd = v.sub(wd, v.add(v.scale(_get(p, c, _MA + 3), l1), v.scale(_get(p, c, _MA + 6), l2)))
        along = _along_a(p, c, 0, vd, wd)
    else:
        vd = v.madd(vd, lin, md)
        wd = v.add(wd, v.add(v.scale(_get(p, c, _MB + 3), l1), v.scale(_get(p, c, _MB + 6), l2)))
        along = _along_b(p, c, 0, vd, wd)
    old = impulse[c, 0]
    new = max(old + p[c, _MASS] * (target[c] - along), 0.0)
    impulse[c, 0] = new
    lam = new - old
    change = _changed(p, c, change, tolerance, lam, l1, l2)
    if on_a:
        vd = v.madd(vd, _get(p, c, _U), -md * lam)
        wd = v.madd(wd, _get(p, c, _MA), -lam)
    else:
        vd = v.madd(vd, _get(p, c, _U), md * lam)
        wd = v.madd(wd, _get(p, c, _MB), lam)
    v.store(vel, d, vd)
    v.store(w, d, wd)
    return change


@_jit.njit(borrow=True)
def _holds(ia, ib, s0, s1, jk):
    """Whether body row ``jk`` (>= 0: the mouse joint's) has a point in ``[s0, s1)``."""
    if jk < 0:
        return False
    for c in range(s0, s1):
        if ia[c] == jk or ib[c] == jk:
            return True
    return False


@_jit.njit(borrow=True)
def _sweeps(vel, w, inv_m, inv_i, ia, ib, p, friction, impulse, target, iterations, tolerance, s0, s1, jk, joint):
    """The velocity iterations of the points ``[s0, s1)`` (one island); returns how many ran (fewer
    than ``iterations`` once a pair of sweeps changed none of its contacts' relative velocities by
    more than ``tolerance``). When body row ``jk`` is in the island, the mouse joint ``joint`` is
    solved after each sweep."""
    held = _holds(ia, ib, s0, s1, jk)
    change = 0.0
    for it in range(iterations):
        # alternate the sweep direction (symmetric Gauss-Seidel): a one-way order leaves a bias
        # that makes a stack creep sideways
        forward = it % 2 == 0
        if forward:
            if it > 0 and change <= tolerance:  # converged: the last two sweeps moved nothing
                return it
            change = 0.0
        for j in range(s1 - s0):
            change = _point(vel, w, inv_m, ia, ib, p, friction, impulse, target, s0 + j if forward else s1 - 1 - j,
                            change, tolerance)
        if held:
            change = max(change, solve_mouse_joint(vel, w, inv_m, inv_i, jk, joint))
    return iterations


@_jit.njit(borrow=True)
def _sweeps_two(vel, w, inv_m, ia, ib, p, friction, impulse, target, iterations, tolerance, s0, s1, u0, u1, done):
    """:func:`_sweeps` of two islands, ``[s0, s1)`` and ``[u0, u1)``, side by side (no mouse joint):
    their points taken in turns, each island's in its own order, so that the processor works on
    one island's point while the other's waits on its last result (a point is a chain of dependent
    arithmetic; measured 10% faster than one island after the other on falling boxes and U shapes).
    The islands share no body, so each gets exactly what :func:`_sweeps` gives it; ``done (2,)`` gets
    their iteration counts.

    Two more ways were measured and left, both giving the same numbers bit for bit: four islands in
    turns (the landing pile of 100 boxes, 385 points in 25 islands: 154-166 us against 153-157 us for
    two), and a body pair's velocities held in registers across its run of points instead of read
    and written per point (230 us either way)."""
    n1, n2 = s1 - s0, u1 - u0
    both = min(n1, n2)
    c1 = c2 = 0.0
    d1 = d2 = iterations
    for it in range(iterations):
        forward = it % 2 == 0
        if forward:
            if it > 0:
                if d1 == iterations and c1 <= tolerance:
                    d1 = it
                if d2 == iterations and c2 <= tolerance:
                    d2 = it
            c1 = c2 = 0.0
        live1, live2 = d1 == iterations, d2 == iterations
        if not (live1 or live2):
            break
        if live1 and live2:
            for j in range(both):
                c1 = _point(vel, w, inv_m, ia, ib, p, friction, impulse, target,
                            s0 + j if forward else s1 - 1 - j, c1, tolerance)
                c2 = _point(vel, w, inv_m, ia, ib, p, friction, impulse, target,
                            u0 + j if forward else u1 - 1 - j, c2, tolerance)
        for j in range(both if live2 else 0, n1 if live1 else 0):
            c1 = _point(vel, w, inv_m, ia, ib, p, friction, impulse, target, s0 + j if forward else s1 - 1 - j,
                        c1, tolerance)
        for j in range(both if live1 else 0, n2 if live2 else 0):
            c2 = _point(vel, w, inv_m, ia, ib, p, friction, impulse, target, u0 + j if forward else u1 - 1 - j,
                        c2, tolerance)
    done[0], done[1] = d1, d2


@_jit.njit(borrow=True)
def _bounce_range(vel, w, inv_m, ia, ib, p, restitution, impulse, iterations, bounce_threshold, s0, s1, approach):
    """Restitution after the non-penetration solve (Box2D v3's order) of the points ``[s0, s1)``: only
    points that pushed this step (the bodies really meet; a speculative point that stayed apart gets
    no bounce), only approaches faster than the threshold, towards -restitution times the approach
    speed."""
    bouncy = False
    for c in range(s0, s1):
        bouncy = bouncy or (restitution[c] > 0.0 and approach[c] < -bounce_threshold and impulse[c, 0] > 0.0)
    if not bouncy:
        return
    for it in range(iterations):
        for j in range(s1 - s0):
            c = s0 + j if it % 2 == 0 else s1 - 1 - j
            if restitution[c] <= 0.0 or approach[c] >= -bounce_threshold or impulse[c, 0] <= 0.0:
                continue
            a, b = ia[c], ib[c]
            va, wa = _load(vel, w, a)
            vb, wb = _load(vel, w, b)
            old = impulse[c, 0]
            new = max(old + p[c, _MASS] * (-restitution[c] * approach[c] - _along(p, c, 0, va, wa, vb, wb)), 0.0)
            impulse[c, 0] = new
            lam = new - old
            n = _get(p, c, _U)
            if a >= 0:
                _store(vel, w, a, v.madd(va, n, -inv_m[a] * lam), v.madd(wa, _get(p, c, _MA), -lam))
            if b >= 0:
                _store(vel, w, b, v.madd(vb, n, inv_m[b] * lam), v.madd(wb, _get(p, c, _MB), lam))


@_jit.njit(borrow=True)
def _solve_range(vel, w, inv_m, inv_i, ia, ib, p, depth, friction, restitution, impulse, dt, iterations,
                 bounce_threshold, warm, tolerance, s0, s1, target, approach, jk, joint):
    """The points ``[s0, s1)`` (one island): :func:`_warm_range`, :func:`_sweeps`, :func:`_bounce_range`;
    returns the velocity iterations that ran. ``target`` and ``approach`` are scratch over all points."""
    _warm_range(vel, w, inv_m, ia, ib, p, depth, impulse, dt, warm, s0, s1, target, approach)
    done = _sweeps(vel, w, inv_m, inv_i, ia, ib, p, friction, impulse, target, iterations, tolerance, s0, s1, jk,
                   joint)
    _bounce_range(vel, w, inv_m, ia, ib, p, restitution, impulse, iterations, bounce_threshold, s0, s1, approach)
    return done


@_jit.njit(borrow=True)
def _solve_two(vel, w, inv_m, ia, ib, p, depth, friction, restitution, impulse, dt, iterations, bounce_threshold,
               warm, tolerance, s0, s1, u0, u1, target, approach, done):
    """:func:`_solve_range` of two islands side by side (:func:`_sweeps_two`), their iteration counts
    into ``done (2,)``."""
    _warm_range(vel, w, inv_m, ia, ib, p, depth, impulse, dt, warm, s0, s1, target, approach)
    _warm_range(vel, w, inv_m, ia, ib, p, depth, impulse, dt, warm, u0, u1, target, approach)
    _sweeps_two(vel, w, inv_m, ia, ib, p, friction, impulse, target, iterations, tolerance, s0, s1, u0, u1, done)
    _bounce_range(vel, w, inv_m, ia, ib, p, restitution, impulse, iterations, bounce_threshold, s0, s1, approach)
    _bounce_range(vel, w, inv_m, ia, ib, p, restitution, impulse, iterations, bounce_threshold, u0, u1, approach)


@njit(cache=True, parallel=True)
def _solve_islands(vel, w, inv_m, inv_i, ia, ib, p, depth, friction, restitution, impulse, dt, iterations,
                   bounce_threshold, warm, tolerance, starts, done, jk, joint):
    """:func:`_solve_range` on every island (``starts`` (m + 1,)), islands ``2r`` and ``2r + 1`` side by
    side (:func:`_solve_two`) unless one holds the mouse joint's body, the pairs spread over the
    threads (``prange``); ``done[i]`` gets island ``i``'s iteration count. Islands share no body,
    so each gets the same result on any thread and beside any other island."""
    k = ia.shape[0]
    m = starts.shape[0] - 1
    target = np.empty(k)
    approach = np.empty(k)
    for r in prange((m + 1) // 2):
        i = 2 * r
        if i + 1 < m and not _holds(ia, ib, starts[i], starts[i + 2], jk):
            _solve_two(vel, w, inv_m, ia, ib, p, depth, friction, restitution, impulse, dt, iterations,
                       bounce_threshold, warm, tolerance, starts[i], starts[i + 1], starts[i + 1], starts[i + 2],
                       target, approach, done[i:i + 2])
            continue
        for q in range(i, min(i + 2, m)):
            done[q] = _solve_range(vel, w, inv_m, inv_i, ia, ib, p, depth, friction, restitution, impulse, dt,
                                   iterations, bounce_threshold, warm, tolerance, starts[q], starts[q + 1], target,
                                   approach, jk, joint)


@njit(cache=True)
def _solve_joint_alone(vel, w, inv_m, inv_i, jk, joint, iterations, tolerance):
    """The mouse joint on a body that touches nothing: its iterations alone."""
    for _ in range(iterations):
        if solve_mouse_joint(vel, w, inv_m, inv_i, jk, joint) <= tolerance:
            break


@njit(cache=True, parallel=True)
def _split_islands(pv, pw, inv_m, ia, ib, p, depth, dt, iterations, beta, slop, starts):
    """:func:`_split_range` on every island, spread over the threads."""
    k = ia.shape[0]
    target = np.empty(k)
    acc = np.empty(k)
    groups = np.empty(k + starts.shape[0], np.int64)  # island i's runs from starts[i] + i
    for i in prange(starts.shape[0] - 1):
        _split_range(pv, pw, inv_m, ia, ib, p, depth, dt, iterations, beta, slop, starts[i], starts[i + 1],
                     target, acc, groups, starts[i] + i)


@njit(cache=True)
def _root(parent, i):
    """Union-find: the root of ``i`` (halving the path on the way; also the sleeping islands')."""
    while parent[i] != i:
        parent[i] = parent[parent[i]]
        i = parent[i]
    return i


@njit(cache=True)
def island_order(ia, ib, n):
    """Islands of the contact points: bodies (``0 .. n-1``; -1 is infinite mass, which links
    nothing) joined by the points between them (union-find). Returns ``(order (k,), starts (m + 1,))``:
    the points island by island, each island's points in their given order, islands in the order
    of their first point; ``order`` is ``arange(k)`` when the points already come island by island."""
    k = ia.shape[0]
    parent = np.arange(n)
    for c in range(k):
        if ia[c] >= 0 and ib[c] >= 0:
            ra, rb = _root(parent, ia[c]), _root(parent, ib[c])
            if ra != rb:
                parent[max(ra, rb)] = min(ra, rb)
    label = np.full(n, -1, np.int64)
    island = np.empty(k, np.int64)
    m = 0
    for c in range(k):
        r = _root(parent, ia[c] if ia[c] >= 0 else ib[c])
        if label[r] < 0:
            label[r] = m
            m += 1
        island[c] = label[r]
    starts = np.zeros(m + 1, np.int64)
    for c in range(k):
        starts[island[c] + 1] += 1
    for i in range(m):
        starts[i + 1] += starts[i]
    fill = starts[:m].copy()
    order = np.empty(k, np.int64)
    for c in range(k):
        order[fill[island[c]]] = c
        fill[island[c]] += 1
    return order, starts


# Serial drivers of the three parallel kernels (no parallel region: see collision.threads) and the
# choices between them. Measured on the two-core machine (load 4-5 from other jobs; falling
# boxes): a contact row costs ~0.05 us in _constraints, a point ~2 us in _solve_islands and
# _split_islands over 10 iterations (one choice, timed together); a parallel region 6-18 us,
# milliseconds now and then. Each threshold asked for ~1.5-2 ms of serial work before threads
# (as the hull-pair batch's), so the region stays under 1% of a threaded call at the median.
# Since the iterations stopped counting references (_load, _store) a point costs ~0.7 us: the
# islands' threshold now asks for ~0.7 ms, the region still ~1-3% at the median; a threshold
# of 2048 was measured on the 100-U scene (1217 points at rest) and made no difference
# beyond the noise, so it stays.
MIN_ROWS_PER_THREAD = 16384
MIN_POINTS_PER_THREAD = 512
_constraints_serial = serial_twin(_constraints, "_constraints_serial")
_solve_islands_serial = serial_twin(_solve_islands, "_solve_islands_serial")
_split_islands_serial = serial_twin(_split_islands, "_split_islands_serial")
ROWS_THREADS = ThreadChoice("contact rows", MIN_ROWS_PER_THREAD)
ISLANDS_THREADS = ThreadChoice("solver islands", MIN_POINTS_PER_THREAD)


def solve_contacts(vel, w, inv_m, inv_i, rows, kin, dt, iterations=10, beta=0.2, slop=0.005,
                   bounce_threshold=0.5, warm=True, tolerance=0.0, stats=None, joint=None):
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
    tolerance : float
        Stop the velocity iterations early once two sweeps in a row change no point's relative
        velocity by more than this (units/s; 0: always run ``iterations``).
    stats : dict, optional
        Receives ``"iterations"``, the velocity iterations that ran.
    joint : (int, (JOINT_WIDTH,) float64), optional
        A mouse joint (:mod:`app.world.mouse_joint`): the grabbed body's row and the packed joint, already
        warm started. It is solved with the contacts of its body's island, after each sweep, or
        alone when its body touches nothing; its accumulated impulses are updated in place.
    """
    pv, pw = np.zeros_like(vel), np.zeros_like(w)
    k = 0 if rows is None else len(rows.ia)
    jk, jarr = joint if joint is not None else (-1, np.zeros(1))
    if jk >= 0 and (not k or not (np.any(rows.ia == jk) or np.any(rows.ib == jk))):
        _solve_joint_alone(vel, w, inv_m, np.ascontiguousarray(inv_i, dtype=np.float64), jk, jarr,
                           int(iterations), float(tolerance))
        jk = -1
    if not k:
        return pv, pw
    if rows.islands is not None:  # (the world's rows come island by island already)
        order, starts = None, rows.islands
    else:
        order, starts = island_order(rows.ia, rows.ib, len(vel))
    if order is not None and np.any(order != np.arange(k)):
        part = ContactRows(rows.ia[order], rows.ib[order], rows.normal[order], rows.ra[order], rows.rb[order],
                           rows.depth[order], rows.friction[order], rows.restitution[order], rows.impulse[order])
        pv, pw = solve_contacts(vel, w, inv_m, inv_i, part, np.asarray(kin)[order], dt, iterations, beta, slop,
                                bounce_threshold, warm, tolerance, stats, (jk, jarr) if jk >= 0 else None)
        rows.impulse[order] = part.impulse
        return pv, pw
    p = np.empty((k, _WIDTH))
    inv_i = np.ascontiguousarray(inv_i, dtype=np.float64)
    runs = ROWS_THREADS.runs(k)
    t0 = time.perf_counter()
    (_constraints if runs > 1 else _constraints_serial)(rows.ia, rows.ib, rows.ra, rows.rb, rows.normal, rows.t1,
                                                        rows.t2, inv_m, inv_i,
                                                        np.ascontiguousarray(kin, dtype=np.float64), p)
    ROWS_THREADS.record(k, runs, time.perf_counter() - t0)
    done = np.zeros(len(starts) - 1, np.int64)
    # islands spread over threads only when there are several (one island is one thread's work)
    runs = ISLANDS_THREADS.runs(k) if len(done) > 1 else 1
    t0 = time.perf_counter()
    (_solve_islands if runs > 1 else _solve_islands_serial)(
        vel, w, inv_m, inv_i, rows.ia, rows.ib, p, rows.depth, rows.friction, rows.restitution, rows.impulse,
        float(dt), int(iterations), float(bounce_threshold), bool(warm), float(tolerance), starts, done, jk, jarr)
    if stats is not None:
        stats["iterations"] = int(done.max())
        stats["islands"] = len(done)
    (_split_islands if runs > 1 else _split_islands_serial)(pv, pw, inv_m, rows.ia, rows.ib, p, rows.depth,
                                                           float(dt), int(iterations), float(beta), float(slop),
                                                           starts)
    if len(done) > 1:
        ISLANDS_THREADS.record(k, runs, time.perf_counter() - t0)
    return pv, pw
