"""The mouse joint: a soft, force-limited pull of a grabbed point towards the cursor.

What a person does with the mouse must not put energy into the world that the
physics could not. A stiff spring integrated on its own does exactly that: a
fast flick of the cursor becomes an unbounded force, the grabbed body is flung
and the contacts it meets pass the speed on. This joint follows Box2D's mouse
joint (Catto, "Soft Step", GDC 2011; Box2D v3 ``mouse_joint.c``), written for this
project in 3-D:

- it is a *constraint* on the velocity of the grabbed point, solved inside the
  contact solver's iterations (:mod:`app.world.solver`), so the contacts and the
  pull agree within a step instead of fighting across steps;
- it is *soft*: a spring of ``hertz`` and ``damping_ratio`` expressed as the
  soft-constraint coefficients (bias rate, mass scale, impulse scale), stable
  at any step;
- its accumulated impulse per step is clamped to ``max_force * dt``, with
  ``max_force`` a multiple of the body's weight, like a hand that can lift a
  body but not throw it across the room;
- the speed it asks of the grabbed point is clamped to ``max_speed`` (the
  hand's speed; Box2D clamps only the force): however fast the cursor moves,
  the body follows no faster than this;
- a soft, force-limited damping of the body's spin keeps a body held by a
  corner from whirling.

The arrays here are the solver's: body rows are rows of the step's awake
dynamic bodies.
"""

import math

import numpy as np
from numba import njit

from obbcollide import _vec as v

__all__ = ["MouseJoint", "soft_coefficients", "solve_mouse_joint", "JOINT_WIDTH"]

# The packed joint of one step (float64 row), read by solve_mouse_joint:
_R = 0          # (3,) grabbed point minus the body's centre of mass, world
_C = 3          # (3,) grabbed point minus the target
_MASS = 6       # (9,) linear effective mass K^-1, row-major
_AMASS = 15     # (9,) angular mass I (world), row-major
_IMP = 24       # (3,) accumulated linear impulse (warm start in, result out)
_AIMP = 27      # (3,) accumulated angular impulse
_BIAS_RATE, _MASS_SCALE, _IMPULSE_SCALE = 30, 31, 32
_ANG_MASS_SCALE, _ANG_IMPULSE_SCALE = 33, 34
_MAX_IMPULSE, _MAX_ANG_IMPULSE, _MAX_SPEED = 35, 36, 37
JOINT_WIDTH = 38


def soft_coefficients(hertz, damping_ratio, dt):
    """Soft-constraint coefficients ``(bias_rate, mass_scale, impulse_scale)`` of a spring.

    A constraint ``C`` solved as ``lambda = -mass_scale M (Cdot + bias_rate C) - impulse_scale
    lambda_acc`` behaves as a damped spring of frequency ``hertz`` and ``damping_ratio`` under
    implicit Euler, at any ``dt`` (Catto, Soft Step). ``hertz = 0`` gives a rigid constraint with
    no position bias.
    """
    if hertz <= 0.0:
        return 0.0, 1.0, 0.0
    omega = 2.0 * math.pi * hertz
    a1 = 2.0 * damping_ratio + dt * omega
    a2 = dt * omega * a1
    a3 = 1.0 / (1.0 + a2)
    return omega / a1, a2 * a3, a3


@njit(cache=True, inline="always")
def _mat(j, o, x):
    return (j[o] * x[0] + j[o + 1] * x[1] + j[o + 2] * x[2],
            j[o + 3] * x[0] + j[o + 4] * x[1] + j[o + 5] * x[2],
            j[o + 6] * x[0] + j[o + 7] * x[1] + j[o + 8] * x[2])


@njit(cache=True, inline="always")
def _clamped_add(j, o, impulse, limit):
    """Add ``impulse`` to the accumulated impulse at ``j[o:o+3]``, clamp its length to ``limit``;
    returns the impulse actually applied."""
    old = (j[o], j[o + 1], j[o + 2])
    acc = v.add(old, impulse)
    length = v.norm(acc)
    if length > limit:
        acc = v.scale(acc, limit / length)
    j[o], j[o + 1], j[o + 2] = acc[0], acc[1], acc[2]
    return v.sub(acc, old)


@njit(cache=True)
def solve_mouse_joint(vel, w, inv_m, inv_i, k, j):
    """One iteration of the mouse joint on body row ``k`` (``vel``, ``w`` (n, 3) change in place).

    Parameters
    ----------
    vel, w : (n, 3) float64
        Linear and angular velocities of the step's dynamic bodies.
    inv_m : (n,) float64
    inv_i : (n, 3, 3) float64
        World inverse inertias.
    k : int
        The grabbed body's row.
    j : (JOINT_WIDTH,) float64
        The packed joint (:meth:`MouseJoint.pack`); its accumulated impulses are updated.

    Returns
    -------
    float
        How much the grabbed point's velocity changed (units/s), for the solver's convergence test.
    """
    r = (j[_R], j[_R + 1], j[_R + 2])
    lin = v.row(vel, k)
    ang = v.row(w, k)
    # spin damping first (no bias: it only slows the spin), force-limited like the pull
    angular = _mat(j, _AMASS, ang)
    a_imp = v.sub(v.scale(angular, -j[_ANG_MASS_SCALE]), v.scale((j[_AIMP], j[_AIMP + 1], j[_AIMP + 2]),
                                                                  j[_ANG_IMPULSE_SCALE]))
    a_imp = _clamped_add(j, _AIMP, a_imp, j[_MAX_ANG_IMPULSE])
    ang = v.add(ang, (inv_i[k, 0, 0] * a_imp[0] + inv_i[k, 0, 1] * a_imp[1] + inv_i[k, 0, 2] * a_imp[2],
                      inv_i[k, 1, 0] * a_imp[0] + inv_i[k, 1, 1] * a_imp[1] + inv_i[k, 1, 2] * a_imp[2],
                      inv_i[k, 2, 0] * a_imp[0] + inv_i[k, 2, 1] * a_imp[1] + inv_i[k, 2, 2] * a_imp[2]))
    # the pull: the grabbed point's velocity towards the target, at most max_speed
    cdot = v.add(lin, v.cross(ang, r))
    bias = v.scale((j[_C], j[_C + 1], j[_C + 2]), j[_BIAS_RATE])
    speed = v.norm(bias)
    if speed > j[_MAX_SPEED]:
        bias = v.scale(bias, j[_MAX_SPEED] / speed)
    want = _mat(j, _MASS, v.add(cdot, bias))
    imp = v.sub(v.scale(want, -j[_MASS_SCALE]), v.scale((j[_IMP], j[_IMP + 1], j[_IMP + 2]), j[_IMPULSE_SCALE]))
    imp = _clamped_add(j, _IMP, imp, j[_MAX_IMPULSE])
    lin = v.madd(lin, imp, inv_m[k])
    rxp = v.cross(r, imp)
    ang = v.add(ang, (inv_i[k, 0, 0] * rxp[0] + inv_i[k, 0, 1] * rxp[1] + inv_i[k, 0, 2] * rxp[2],
                      inv_i[k, 1, 0] * rxp[0] + inv_i[k, 1, 1] * rxp[1] + inv_i[k, 1, 2] * rxp[2],
                      inv_i[k, 2, 0] * rxp[0] + inv_i[k, 2, 1] * rxp[1] + inv_i[k, 2, 2] * rxp[2]))
    before = v.add(v.row(vel, k), v.cross(v.row(w, k), r))
    v.store(vel, k, lin)
    v.store(w, k, ang)
    return v.norm(v.sub(v.add(lin, v.cross(ang, r)), before))


class MouseJoint:
    """A grabbed point of one dynamic body pulled towards a target (the cursor in the world).

    Parameters
    ----------
    body : app.world.body.Body
        A dynamic body.
    point : (3,) float
        The grabbed point, world; it is kept in the body's frame.
    target : (3,) float
        Where the point is pulled, world; :attr:`target` follows the cursor.
    hertz, damping_ratio : float
        The pull's spring (Box2D's defaults for the mouse: 5 Hz, 0.7).
    max_weights : float
        The largest pull, in weights of the body (``mass * |gravity|``; in a world without
        gravity, ``mass * 10`` units/s^2).
    max_speed : float or None
        The largest speed the pull asks of the grabbed point (units/s). None: ``2.5 sqrt(g r)``
        with ``r`` the body's bounding radius, the speed a body reaches falling about three radii
        (a Froude scaling, so a pebble and a crate feel alike in the hand: 4 m/s for a 30 cm crate).
    """

    def __init__(self, body, point, target, hertz=5.0, damping_ratio=0.7, max_weights=30.0, max_speed=None):
        self.body = body
        r = body.pose[:3, :3]
        self.local = r.T @ (np.asarray(point, float) - body.pose[:3, 3])
        self.target = np.asarray(target, float).copy()
        self.hertz, self.damping_ratio = float(hertz), float(damping_ratio)
        self.max_weights = float(max_weights)
        self.max_speed = None if max_speed is None else float(max_speed)
        self.impulse = np.zeros(3)  # accumulated over the last step, for warm starting
        self.angular_impulse = np.zeros(3)

    def anchor(self):
        """The grabbed point now, world (3,)."""
        return self.body.pose[:3, :3] @ self.local + self.body.pose[:3, 3]

    def pack(self, com, inv_m, inv_i, gravity, dt):
        """The joint of this step as the packed row :func:`solve_mouse_joint` reads.

        Parameters
        ----------
        com : (3,) float64
            The body's centre of mass, world.
        inv_m : float
        inv_i : (3, 3) float64
            World inverse inertia.
        gravity : (3,) float64
        dt : float
        """
        j = np.zeros(JOINT_WIDTH)
        r = self.anchor() - com
        j[_R:_R + 3] = r
        j[_C:_C + 3] = com + r - self.target
        s = np.array([[0.0, -r[2], r[1]], [r[2], 0.0, -r[0]], [-r[1], r[0], 0.0]])
        k = inv_m * np.eye(3) - s @ inv_i @ s
        j[_MASS:_MASS + 9] = np.linalg.inv(k).ravel()
        j[_AMASS:_AMASS + 9] = np.linalg.pinv(inv_i).ravel()
        mass = 1.0 / inv_m
        g = float(np.linalg.norm(gravity)) or 10.0
        radius = max(float(self.body.radius), 1e-9)
        max_force = self.max_weights * mass * g
        j[_MAX_IMPULSE] = max_force * dt
        j[_MAX_ANG_IMPULSE] = max_force * radius * dt
        j[_MAX_SPEED] = self.max_speed if self.max_speed is not None else 2.5 * math.sqrt(g * radius)
        j[_BIAS_RATE], j[_MASS_SCALE], j[_IMPULSE_SCALE] = soft_coefficients(self.hertz, self.damping_ratio, dt)
        # the spin is damped at half the pull's frequency, critically
        _, j[_ANG_MASS_SCALE], j[_ANG_IMPULSE_SCALE] = soft_coefficients(0.5 * self.hertz, 1.0, dt)
        j[_IMP:_IMP + 3] = self.impulse
        j[_AIMP:_AIMP + 3] = self.angular_impulse
        return j

    @staticmethod
    def warm_start(vel, w, inv_m, inv_i, k, j):
        """Apply last step's accumulated impulses (in ``j``) to body row ``k``."""
        imp, aimp, r = j[_IMP:_IMP + 3], j[_AIMP:_AIMP + 3], j[_R:_R + 3]
        vel[k] += inv_m[k] * imp
        w[k] += inv_i[k] @ (np.cross(r, imp) + aimp)

    def keep(self, j):
        """Keep the step's accumulated impulses (from ``j``) for the next step's warm start."""
        self.impulse = j[_IMP:_IMP + 3].copy()
        self.angular_impulse = j[_AIMP:_AIMP + 3].copy()
