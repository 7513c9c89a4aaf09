"""The dynamics of one step as one compiled call, for steps whose solve runs on one thread.

:meth:`app.world.dynamics.Dynamics.step` composes a step from about nine compiled kernels called
from Python (gravity and damping, gathering the contact points island by island, tangents,
constraint table, velocity and split-impulse iterations, impulses back into the store,
integration), each returning fresh arrays to Python. On a small scene (a hundred boxes) those
calls' fixed costs (argument checks, boxing the returned arrays, the Python in between) were a
tenth of the step. :func:`dynamics_step_serial` calls the same kernels in the same order from
compiled code, so the results are the same bit for bit; the world takes it when the solve
would run serially anyway (fewer contact points than the solver's threads ask for, and no
mouse joint), and the composed path otherwise. A step without contacts (bodies falling free,
or all apart) takes :func:`dynamics_step_free`, the same kernels less the contact ones.
"""

import inspect

import numpy as np
from numba import njit

from . import dynamics as _dyn
from . import solver as _solver

__all__ = ["dynamics_step_free", "dynamics_step_serial"]

# dynamics_step_serial's ``out`` (int64 (5,)): awake dynamic bodies, sleeping ones, contact points
# solved, velocity iterations run (the largest over the islands), islands.
OUT_DYNAMIC, OUT_SLEEPING, OUT_POINTS, OUT_ITERATIONS, OUT_ISLANDS = range(5)


@njit(cache=True)
def _begin(keys, count, depths, impulse, motion, sleeping, pose, com, inv_inertia, inv_mass, velocity, spin, gravity,
           dt, lin, ang, still, grab, sleep_time, sleep_speed, sleep_spin, settle_speed, settle_spin, settle_damping,
           out):
    """The start of a step: the sleeping islands (:func:`app.world.dynamics._islands`), then gravity and
    damping on the awake bodies (:func:`~app.world.dynamics._begin_kernel`); ``out`` zeroed but for its
    counts of awake and sleeping dynamic bodies. Returns ``where, idx, x, inv_i, inv_m, v, w``."""
    _dyn._islands(keys, count, depths, impulse, motion, velocity, spin, sleeping, still, grab, dt, sleep_time,
                  sleep_speed, sleep_spin, settle_speed, settle_spin, settle_damping)
    where = np.empty(motion.shape[0], np.int64)
    idx, x, inv_i, inv_m, v, w, asleep = _dyn._begin_kernel(motion, sleeping, pose, com, inv_inertia, inv_mass,
                                                            velocity, spin, gravity, dt, lin, ang, where)
    out[:] = 0
    out[OUT_DYNAMIC], out[OUT_SLEEPING] = idx.shape[0], asleep
    return where, idx, x, inv_i, inv_m, v, w


@njit(cache=True)
def dynamics_step_serial(motion, sleeping, pose, com, inv_inertia, inv_mass, velocity, spin, gravity, dt, lin, ang,
                         keys, count, normal, points_a, points_b, depths, impulse, root_center, friction, restitution,
                         default_friction, default_restitution, iterations, beta, slop, bounce_threshold, warm,
                         tolerance, still, grab, sleep_time, sleep_speed, sleep_spin, settle_speed, settle_spin,
                         settle_damping, patches, out):
    """One step of the dynamic bodies without a mouse joint, on one thread: what
    :meth:`app.world.dynamics.Dynamics.step` does, by the same kernels in the same order
    (:func:`app.world.dynamics._islands`, :func:`~app.world.dynamics._begin_kernel`, ``_rows_kernel``,
    :func:`app.world.solver.tangents`' kernel, the serial drivers of ``_constraints``,
    ``_solve_islands`` and ``_split_islands``, ``_put_impulses``, ``_end_kernel``).

    Parameters
    ----------
    motion, sleeping, pose, com, inv_inertia, inv_mass, velocity, spin : body table columns, (n, ...)
        ``pose`` (n, 4, 4), ``velocity`` and ``spin`` (n, 3) are updated in place.
    gravity : (3,) float64
    dt, lin, ang : float
        Step, linear and angular damping per second.
    keys, count, normal, points_a, points_b, depths, impulse : the contact store's columns, (m, ...)
        ``impulse`` (m, 4, 3) gets the solved impulses.
    root_center, friction, restitution : body table columns, (n, 3), (n,), (n,)
    default_friction, default_restitution : float
    iterations : int
    beta, slop, bounce_threshold, tolerance : float
        As :func:`app.world.solver.solve_contacts`.
    warm : bool
    still, grab, sleep_time, sleep_speed, sleep_spin, settle_speed, settle_spin, settle_damping
        The sleeping islands' (:func:`app.world.dynamics._islands`): the body table's ``still`` column
        (n,), updated with ``sleeping``, velocities and spins first.
    patches : bool
        :attr:`app.world.dynamics.Dynamics.patches`.
    out : (5,) int64
        Receives the counts named by ``OUT_*``.
    """
    where, idx, x, inv_i, inv_m, v, w = _begin(keys, count, depths, impulse, motion, sleeping, pose, com, inv_inertia,
                                               inv_mass, velocity, spin, gravity, dt, lin, ang, still, grab,
                                               sleep_time, sleep_speed, sleep_spin, settle_speed, settle_spin,
                                               settle_damping, out)
    if idx.shape[0] == 0:
        return
    pv, pw = np.zeros_like(v), np.zeros_like(w)
    if keys.shape[0]:
        ia, ib, nrm, ra, rb, depth, fric, rest, imp, kin, mrow, slot, islands = _dyn._rows_kernel(
            keys, count, normal, points_a, points_b, depths, impulse, where, x, motion, pose, root_center, velocity,
            spin, friction, restitution, default_friction, default_restitution, patches)
        k = ia.shape[0]
        if k:
            t1, t2 = np.empty_like(nrm), np.empty_like(nrm)
            _solver._tangent_kernel(nrm, t1, t2)
            p = np.empty((k, _solver._WIDTH))
            _solver._constraints_serial(ia, ib, ra, rb, nrm, t1, t2, inv_m, inv_i, kin, p)
            done = np.zeros(islands.shape[0] - 1, np.int64)
            _solver._solve_islands_serial(v, w, inv_m, inv_i, ia, ib, p, depth, fric, rest, imp, dt, iterations,
                                          bounce_threshold, warm, tolerance, islands, done, -1, np.zeros(1))
            _solver._split_islands_serial(pv, pw, inv_m, ia, ib, p, depth, dt, iterations, beta, slop, islands)
            _dyn._put_impulses(mrow, slot, imp, impulse)
            out[OUT_POINTS] = k
            out[OUT_ITERATIONS] = done.max()
            out[OUT_ISLANDS] = done.shape[0]
    _dyn._end_kernel(idx, pose, com, x, v, w, pv, pw, dt, velocity, spin)


@njit(cache=True)
def dynamics_step_free(motion, sleeping, pose, com, inv_inertia, inv_mass, velocity, spin, gravity, dt, lin, ang,
                       still, grab, sleep_time, sleep_speed, sleep_spin, settle_speed, settle_spin, settle_damping,
                       out):
    """:func:`dynamics_step_serial` for a step without contacts (an empty store: bodies in free fall,
    or apart): the sleeping islands, gravity and damping, integration, the same kernels in the same
    order. Its own kernel because an empty store's columns are contiguous arrays to numba, and the
    store's columns otherwise strided views of one record array (so ``dynamics_step_serial``, minutes
    to compile, is compiled for those only)."""
    none = np.zeros((0, 4))  # (the store's columns, empty)
    _, idx, x, _, _, v, w = _begin(np.zeros((0, 5), np.int64), np.zeros(0, np.int64), none, np.zeros((0, 4, 3)),
                                   motion, sleeping, pose, com, inv_inertia, inv_mass, velocity, spin, gravity, dt,
                                   lin, ang, still, grab, sleep_time, sleep_speed, sleep_spin, settle_speed,
                                   settle_spin, settle_damping, out)
    if idx.shape[0] == 0:
        return
    _dyn._end_kernel(idx, pose, com, x, v, w, np.zeros_like(v), np.zeros_like(w), dt, velocity, spin)


_SOLVE = inspect.signature(_solver.solve_contacts).parameters
BETA, SLOP, BOUNCE_THRESHOLD = (float(_SOLVE[name].default) for name in ("beta", "slop", "bounce_threshold"))


def one_call_step(dyn, table, store, dt):
    """:meth:`app.world.dynamics.Dynamics.step`, sleeping islands included, by
    :func:`dynamics_step_serial`, when the solve of ``store`` (at most 4 points a row) would run
    serially (:data:`app.world.solver.ROWS_THREADS`, :data:`~app.world.solver.ISLANDS_THREADS`);
    returns whether it ran (False: the caller composes the step).

    An empty store takes :func:`dynamics_step_free`. A store of one row is left to the composed
    path: its columns, views of one record array, are then C-contiguous to numba, and strided
    otherwise, so this kernel (minutes to compile) would be compiled for both layouts."""
    st = table.state
    if not len(store):
        out = np.zeros(5, np.int64)
        dynamics_step_free(table.motion, st.sleeping, st.pose, table.com, table.inv_inertia, table.inv_mass,
                           st.velocity, st.spin, dyn.gravity, float(dt), dyn.linear_damping, dyn.angular_damping,
                           st.still, *dyn._sleep_args(table), out)
        dyn.stats = {"dynamic": int(out[OUT_DYNAMIC]), "contact_points": 0, "sleeping": int(out[OUT_SLEEPING])}
        return True
    if len(store) < 2:
        return False
    cap = 4 * len(store)
    rows, islands = _solver.ROWS_THREADS, _solver.ISLANDS_THREADS
    if (cap >= 2 * rows.min_per_thread or cap >= 2 * islands.min_per_thread or rows.runs(cap) != 1
            or islands.runs(cap) != 1):
        return False
    out = np.zeros(5, np.int64)
    dynamics_step_serial(table.motion, st.sleeping, st.pose, table.com, table.inv_inertia, table.inv_mass,
                         st.velocity, st.spin, dyn.gravity, float(dt), dyn.linear_damping,
                         dyn.angular_damping, store.keys, store.count, store.normal, store.points_a, store.points_b,
                         store.depths, store.impulse, table.root_center, table.friction, table.restitution,
                         dyn.friction, dyn.restitution, dyn.iterations, BETA, SLOP, BOUNCE_THRESHOLD,
                         dyn.warm_start, dyn.tolerance, st.still, *dyn._sleep_args(table), bool(dyn.patches), out)
    dyn.stats = {"dynamic": int(out[OUT_DYNAMIC]), "contact_points": int(out[OUT_POINTS]),
                 "sleeping": int(out[OUT_SLEEPING])}
    k = int(out[OUT_POINTS])
    if k:
        dyn.stats["iterations"], dyn.stats["islands"] = int(out[OUT_ITERATIONS]), int(out[OUT_ISLANDS])
        rows.record(k, 1, 0.0)  # (counts only: a serial batch this small keeps no timing)
        if out[OUT_ISLANDS] > 1:
            islands.record(k, 1, 0.0)
    return True

