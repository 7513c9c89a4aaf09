"""The dynamics of one step as one compiled call, for steps whose solve runs on one thread.

:meth:`app.world.dynamics.Dynamics.step` composes a step from about nine compiled kernels called
from Python (gravity and damping, gathering the contact points island by island, tangents,
constraint table, velocity and split-impulse iterations, impulses back into the store,
integration), each returning fresh arrays to Python. On a small scene (a hundred boxes) those
calls' fixed costs (argument checks, boxing the returned arrays, the Python in between) were a
tenth of the step. :func:`dynamics_step_serial` calls the same kernels in the same order from
compiled code, so the results are the same bit for bit; the world takes it when the solve
would run serially anyway (fewer contact points than the solver's threads ask for, and no
mouse joint), and the composed path otherwise.

It takes the contact store as its rows of machine words (:attr:`app.world.contact_store.ContactStore.words`,
one C-contiguous (m, w) int64 array whatever the count of rows) and cuts the columns it reads out
of them itself (:func:`app.world.contact_store.store_columns`), so that one compilation serves every
step: bodies falling free (no rows), one row, many. Before, it took the store's seven columns, which
are strided views of a record array to numba but contiguous for an empty store and for a single
row, so those steps had kernels of their own, or none; and each new store's seven views cost Python
a few microseconds. Measured on 100 boxes landing in layers: the step that first solves their
contacts, which ran this kernel for the first time since the fall began, went from 157 to 143 us
(its dynamics from 87 to 67 us).
"""

import inspect

import numpy as np
from numba import njit

from . import dynamics as _dyn
from . import solver as _solver
from .contact_store import store_columns

__all__ = ["dynamics_step_serial"]

# dynamics_step_serial's ``out`` (int64 (5,)): awake dynamic bodies, sleeping ones, contact points
# solved, velocity iterations run (the largest over the islands), islands (one_call_done reads them
# in this order).
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
                         words, root_center, friction, restitution,
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
    words : (m, w) int64
        The contact store's rows (:attr:`app.world.contact_store.ContactStore.words`, C-contiguous; m may
        be 0): its impulses get the solved ones (:func:`app.world.contact_store.store_columns`).
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
    keys, count, normal, points_a, points_b, depths, impulse = store_columns(words)
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


_SOLVE = inspect.signature(_solver.solve_contacts).parameters
BETA, SLOP, BOUNCE_THRESHOLD = (float(_SOLVE[name].default) for name in ("beta", "slop", "bounce_threshold"))


def one_call_step(dyn, table, store, dt):
    """:meth:`app.world.dynamics.Dynamics.step`, sleeping islands included, by
    :func:`dynamics_step_serial`, when the solve of ``store`` (at most 4 points a row) would run
    serially (:data:`app.world.solver.ROWS_THREADS`, :data:`~app.world.solver.ISLANDS_THREADS`);
    returns whether it ran (False: the caller composes the step)."""
    args = one_call_args(dyn, table, store, dt)
    if args is None:
        return False
    dynamics_step_serial(*args)
    one_call_done(dyn, args[-1])
    return True


def takes_one_call(dyn, store):
    """Whether a step of ``dyn`` (an :class:`app.world.dynamics.Dynamics`) under ``store`` takes
    :func:`dynamics_step_serial`: no mouse joint holds a body, and the solve of ``store`` (at most 4
    points a row) would run serially (:data:`app.world.solver.ROWS_THREADS`,
    :data:`~app.world.solver.ISLANDS_THREADS`) on its C-contiguous rows."""
    if dyn.grab is not None:
        return False
    cap = 4 * len(store)
    rows, islands = _solver.ROWS_THREADS, _solver.ISLANDS_THREADS
    if cap and (cap >= 2 * rows.min_per_thread or cap >= 2 * islands.min_per_thread or rows.runs(cap) != 1
                or islands.runs(cap) != 1):
        return False
    return store.words.flags.c_contiguous  # (stores are made contiguous; another layout would be compiled anew)


def one_call_args(dyn, table, store, dt):
    """:func:`dynamics_step_serial`'s arguments for a step of ``dyn`` (an
    :class:`app.world.dynamics.Dynamics`) on ``table`` under ``store``, or None when the step must be
    composed (:func:`takes_one_call`). After the call, hand its ``out`` (the last argument) to
    :func:`one_call_done`."""
    if not takes_one_call(dyn, store):
        return None
    st = table.state
    return (table.motion, st.sleeping, st.pose, table.com, table.inv_inertia, table.inv_mass, st.velocity, st.spin,
            dyn.gravity, float(dt), dyn.linear_damping, dyn.angular_damping, store.words, table.root_center,
            table.friction, table.restitution, dyn.friction, dyn.restitution, dyn.iterations, BETA, SLOP,
            BOUNCE_THRESHOLD, dyn.warm_start, dyn.tolerance, st.still, *dyn._sleep_args(table), bool(dyn.patches),
            np.zeros(5, np.int64))


def one_call_done(dyn, out):
    """The dynamics' statistics and the solver's thread records after :func:`dynamics_step_serial`
    filled ``out`` (5,)."""
    dynamic, sleeping, k, iterations, islands = out.tolist()  # (the OUT_* order; one conversion)
    if k:
        dyn.stats = {"dynamic": dynamic, "contact_points": k, "sleeping": sleeping, "iterations": iterations,
                     "islands": islands}
        _solver.ROWS_THREADS.record(k, 1, 0.0)  # (counts only: a serial batch this small keeps no timing)
        if islands > 1:
            _solver.ISLANDS_THREADS.record(k, 1, 0.0)
    else:
        dyn.stats = {"dynamic": dynamic, "contact_points": 0, "sleeping": sleeping}
