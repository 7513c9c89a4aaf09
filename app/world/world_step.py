"""A whole step of the world as one compiled call, for the steps that need no Python inside.

:meth:`app.world.world.World.step` runs three compiled calls a step: the dynamics
(:func:`app.world.dynamics_step.dynamics_step_serial`), the broad phase
(:func:`app.world.world._tree_broad_phase`) and the detection
(:func:`app.world.contacts._detect_whole`), with Python between them that gathers each call's
arguments, checks what came back and keeps it. On a small scene that Python was a large part of
the step: 100 boxes falling free cost 94 us a step here, of which the two kernels took 21 us
each, and a step of 25 boxes landing cost ~230 us against ~145 us in its three kernels.

:func:`world_step_serial` calls the three in one call, in the same order with the same
arguments, so that the results are the same bit for bit. Of its arguments, the ~110 arrays that
stay from step to step (the body table's columns, the tree's nodes, the detection's scratch and
shape tables) come as one :class:`app.world.arg_pack.ArgPack`, made again only when one of them
changed; the others (the store's rows, the tree's last pairs, settings) are gathered each step.
A call of this kernel's signature that does nothing cost 8.8 us with its 142 arguments of before
(24 us beside pybullet, where the arrays' Python objects are out of the caches) and 3.8 us with the
pack and its ~45 other arguments (measured on 100 boxes). The Python after the call keeps the results as
the three calls' callers do. When the detection cannot run inside (more candidate pairs than the
scratch holds, more than :data:`app.world.world.MAX_PAIRS`), the call returns after the broad
phase and the world runs the detection as before. The three phases' times come from clock
readings inside the call (``times``), so the frame's phases still add up.
"""

import time
from operator import is_

import numpy as np
from numba import njit
from obbcollide.broad_phase.aabb_tree import DynamicAABBTree

from .arg_pack import PackCache
from .clock import perf_counter as _clock
from .contact_store import _FROZEN_BYTE
from .contacts import _detect_whole
from .dynamics_step import BETA, BOUNCE_THRESHOLD, SLOP, dynamics_step_serial, one_call_done, takes_one_call
from .world import _NO_PLANES, MAX_PAIRS, MAX_SPEED, MAX_SPIN, _sound_state, _tree_broad_phase

__all__ = ["world_step_serial", "one_call_world_step", "table_args", "StepPlan", "split_results"]

_NO_POSES = np.zeros((0, 4, 4))  # (no remembered poses: the call checks no state)


@njit(cache=True)
def _results(keys, cand, found):
    """The step's results as :func:`world_step_serial` returns them: ``found``'s numbers and its new store
    rows ``out``, and its other arrays with the tree's ``keys`` and the candidate pairs ``cand`` copied
    into one int64 array, ``blob``: ``keys`` (nk,), ``cand`` (nc, 2), ``apart`` (na, 8), ``codes``,
    ``points`` and ``was`` (t,) each, ``stays`` (p,), one after the other (the flags as 0 or 1), with
    ``sizes = (nk, nc, na, t, p)`` (:func:`split_results` cuts them out again).

    Numba hands each array a call returns to Python as a new numpy array, unpickling its type for it,
    and Python frees it later: ~1 us an array, measured here, and a step returned eight. One array
    in their place costs that once, and its slices cost Python ~0.2 us each."""
    (need, m, k, bad, bad_route, done, rows, out, apart, codes, points, was, stays, total) = found
    nk, nc, na, t, p = keys.shape[0], cand.shape[0], apart.shape[0], codes.shape[0], stays.shape[0]
    blob = np.empty(nk + 2 * nc + 8 * na + 3 * t + p, np.int64)
    o = 0
    for i in range(nk):
        blob[o + i] = keys[i]
    o += nk
    for i in range(nc):
        blob[o + 2 * i], blob[o + 2 * i + 1] = cand[i, 0], cand[i, 1]
    o += 2 * nc
    for i in range(na):
        for j in range(8):
            blob[o + 8 * i + j] = apart[i, j]
    o += 8 * na
    for i in range(t):
        blob[o + i], blob[o + t + i], blob[o + 2 * t + i] = codes[i], points[i], was[i]
    o += 3 * t
    for i in range(p):
        blob[o + i] = stays[i]
    return need, m, k, bad, bad_route, done, rows, total, out, blob, (nk, nc, na, t, p)


def split_results(need, m, k, bad, bad_route, done, rows, total, out, blob, sizes):
    """``(keys, cand, found)`` from :func:`_results`' results: views of ``blob``, ``was`` and ``stays``
    as 0 or 1 (int64)."""
    nk, nc, na, t, p = sizes
    o = nk + 2 * nc
    q = o + 8 * na
    found = (need, m, k, bad, bad_route, done, rows, out, blob[o:q].reshape(na, 8), blob[q:q + t],
             blob[q + t:q + 2 * t], blob[q + 2 * t:q + 3 * t], blob[q + 3 * t:q + 3 * t + p], total)
    return blob[:nk], blob[nk:o].reshape(nc, 2), found


@njit(cache=True)
def _nothing_found(d_words):
    """:func:`app.world.contacts._detect_whole`'s results when the detection did not run (zeros and empty arrays)."""
    none = np.zeros(0, np.int64)
    return (0, 0, 0, -1, -1, False, -1, d_words[:0], np.zeros((0, 8), np.int64), none, none,
            np.zeros(0, np.bool_), np.zeros(0, np.bool_), 0)


@njit(cache=True)
def world_step_serial(packs, d_gravity, d_dt, d_lin, d_ang, d_words, d_default_friction,
                      d_default_restitution, d_iterations, d_beta, d_slop, d_bounce_threshold, d_warm, d_tolerance,
                      d_grab, d_sleep_time, d_sleep_speed, d_sleep_spin, d_settle_speed, d_settle_spin,
                      d_settle_damping, d_patches, b_ccd, b_margin_rel, b_margin_abs, b_shrink, b_predict, b_old_keys,
                      b_rebuild, b_planes_row, b_planes, margin, w_n, w_apart, w_hull_inputs, w_cache_first,
                      w_serial_below, w_gone, w_tol2, w_may_update, w_prev, max_pairs, r_check, r_good, r_max_speed,
                      r_max_spin):
    """One step of the world in one call: :func:`app.world.dynamics_step.dynamics_step_serial`, then
    :func:`app.world.world._tree_broad_phase`, then, when the broad phase's boxes were finite, its
    candidate pairs fit the detection's scratch and are at most ``max_pairs``, and there is
    something to detect (a candidate pair, a row kept or a touching pair ended),
    :func:`app.world.contacts._detect_whole` on the candidate pairs. With ``r_check``, it first checks
    the bodies' state as :meth:`app.world.world.World.repair` does (:func:`app.world.world._sound_state`:
    finite, no faster than ``r_max_speed``, no spin above ``r_max_spin``; then the poses are copied into
    ``r_good`` (n, 4, 4), the poses repair goes back to) and returns at once, having changed nothing,
    when the state needs repair.

    The arguments that stay from step to step come in three :class:`app.world.arg_pack.ArgPack`,
    themselves in one (``packs``): the body table's columns and the step's buffers
    (:func:`table_args`: ``sweep``, ``lo`` and ``hi``, the broad phase's sweeps and boxes; ``out``,
    the dynamics' counts; ``times``, the clocks), the dynamic AABB tree's arrays, and the
    detection's shape tables, scratch and hull batch outputs
    (:meth:`app.world.contacts.ContactManager.whole_fixed`). The others follow, named by the kernel
    that takes them (``d_`` the dynamics, ``b_`` the broad phase, ``w_`` the detection; ``margin``
    is the contact margin both of the last two take). ``d_words`` is the contact store's rows,
    which the detection reads as last step's, their frozen flags included: a store's ``frozen``
    column is contiguous for one row and strided for more, so taking it as an argument compiled
    this kernel twice, and the first step with two rows or more ran a second, cold copy of it.
    ``sweep`` (n,) is zeroed, then gets each body's sweep, which the detection reads. ``times``
    (2,) receives the clock after the dynamics and after the broad phase (``time.perf_counter()``).

    Returns
    -------
    (sound, finite, m, detected, *results)
        Whether the state passed the check (True without ``r_check``; when False nothing ran and the rest
        is empty), the broad phase's ``finite`` and ``m`` (:func:`app.world.world._tree_broad_phase`),
        whether the detection ran, then :func:`_results` of the broad phase's keys and candidate pairs
        and of the detection's results (:func:`app.world.contacts._detect_whole`; zeros and empty arrays
        when it did not run); :func:`split_results` makes them ``(keys, cand, found)`` again.
    """
    table, tree, detect = packs.args
    (motion, sleeping, pose, velocity, spin, still, com, inv_mass, inv_inertia, root_center, root_axes, root_half,
     radius, friction, restitution, shape_count, rows, sweep, lo, hi, out, times) = table.args
    tlo, thi, flo, fhi, parent, child, height, meta, free, sah, moved, counts = tree.args
    (start, kind, center, axes, half, hull, core, plane, core_points, core_starts, core_radius, active, kept, words,
     margins, ga, gb, route, order, bounds, ia, pa, ib, pb, mg, caches, V, N, D, FS, FV, EV, EF, VFS, VF, AC, AO, GC,
     GS, starts, scale, boxes, box_f, box_i, count, normal, points_a, points_b, depths, ids, kinds, tests,
     sat_depth) = detect.args
    if r_check and not _sound_state(pose, velocity, spin, r_max_speed, r_max_spin, r_good):
        return (False, False, 0, False) + _results(b_old_keys[:0], np.zeros((0, 2), np.int64),
                                                   _nothing_found(d_words))
    dynamics_step_serial(motion, sleeping, pose, com, inv_inertia, inv_mass, velocity, spin, d_gravity, d_dt, d_lin,
                         d_ang, d_words, root_center, friction, restitution, d_default_friction,
                         d_default_restitution, d_iterations, d_beta, d_slop, d_bounce_threshold, d_warm,
                         d_tolerance, still, d_grab, d_sleep_time, d_sleep_speed, d_sleep_spin, d_settle_speed,
                         d_settle_spin, d_settle_damping, d_patches, out)
    times[0] = _clock()
    sweep[:] = 0.0
    finite, keys, cand, m = _tree_broad_phase(motion, sleeping, velocity, spin, radius, d_dt, b_ccd, pose, root_center,
                                              root_axes, root_half, rows, sweep, lo, hi, tlo, thi, flo, fhi,
                                              parent, child, height, meta, free, sah, b_margin_rel, b_margin_abs,
                                              b_shrink, b_predict, moved, b_old_keys, b_rebuild, counts,
                                              b_planes_row, b_planes, margin)
    times[1] = _clock()
    frozen = d_words.view(np.bool_)[:, _FROZEN_BYTE]
    if (finite and cand.shape[0] <= max_pairs and cand.shape[0] <= active.shape[0]
            and d_words.shape[0] <= kept.shape[0] and (cand.shape[0] or d_words.shape[0] or w_gone)):
        found = _detect_whole(cand, motion, sleeping, shape_count, d_words, w_n, sweep, margin, start, kind, center,
                              axes, half, pose, hull, core, plane, core_points, core_starts, core_radius, w_apart,
                              w_hull_inputs, active, kept, words, margins, ga, gb, route, order, bounds, ia, pa, ib,
                              pb, mg, caches, V, N, D, FS, FV, EV, EF, VFS, VF, AC, AO, GC, GS, starts, scale, boxes,
                              box_f, box_i, count, normal, points_a, points_b, depths, ids, kinds, tests, sat_depth,
                              w_cache_first, w_serial_below, w_gone, frozen, w_tol2, w_may_update, w_prev)
        return (True, finite, m, True) + _results(keys, cand, found)
    return (True, finite, m, False) + _results(keys, cand, _nothing_found(d_words))


def table_args(t):
    """The columns of the body table ``t`` that :func:`world_step_serial` takes in its ``table`` pack, then
    the step's buffers: ``sweep`` (n,), ``lo`` and ``hi`` (b, 3) for the b bounded rows, ``out`` (5,)
    int64 and ``times`` (2,) (what a step leaves in them is read before the next step)."""
    st = t.state
    b = len(t.bounded_rows)
    return (t.motion, st.sleeping, st.pose, st.velocity, st.spin, st.still, t.com, t.inv_mass, t.inv_inertia,
            t.root_center, t.root_axes, t.root_half, t.radius, t.friction, t.restitution, t.shape_count, t.bounded_rows,
            np.zeros(len(t)), np.empty((b, 3)), np.empty((b, 3)), np.zeros(5, np.int64), np.zeros(2))


class StepPlan:
    """What :func:`one_call_world_step` gathers before its call that stays from step to step: the packs
    of :func:`world_step_serial` (``packs``: the body table's columns and the step's buffers, the
    tree's arrays, the detection's arrays, and the pack holding those three), the ground planes and
    :meth:`app.world.contacts.ContactManager.whole_begin`'s shapes of the rows and scratch.

    It is kept while its :attr:`key` holds, compared object by object by identity: the body table,
    its state and its version (which it bumps whenever it derives its columns anew: bodies added,
    removed, their shapes changed), the tree's first array (the tree allocates all of them at once),
    and :meth:`app.world.contacts.ContactManager.whole_key` (the body list the store follows, the
    scratch, the shape tables' arrays). When it does not hold, :meth:`make` gathers them again, each
    pack made again only when the objects it holds changed (:class:`app.world.arg_pack.PackCache`).
    Gathering them every step was the larger part of the Python before the call (measured on 100
    boxes landing beside pybullet: 18 us of Python before the call, of a ~160 us step).

    A copy (``copy``, ``deepcopy``, pickling) is an empty plan, as a :class:`~app.world.arg_pack.PackCache`
    is: the copy of a world makes its packs from its own arrays."""

    __slots__ = ("packs", "key", "outer", "begun", "planes", "buffers")

    def __init__(self):
        self.packs = (PackCache(), PackCache(), PackCache(), PackCache())
        self.key = ()
        self.outer = self.begun = self.planes = self.buffers = None

    def __copy__(self):
        return StepPlan()

    def __deepcopy__(self, memo):
        return StepPlan()

    def __reduce__(self):
        return (StepPlan, ())

    def holds(self, key):
        """Whether the plan was made for the objects of ``key`` (a tuple), each the same by identity."""
        old = self.key
        return len(old) == len(key) and all(map(is_, key, old))

    @staticmethod
    def key_of(world, t, state):
        """The plan's key for a step of ``world`` (body table ``t``, the tree's ``compiled_update`` ``state``)."""
        return (t, t.state, t.version, state[0], *world.manager.whole_key())

    def make(self, world, t, state):
        """Gather the plan for a step of ``world`` (body table ``t``, the tree's ``compiled_update``
        ``state``); its key is taken after (gathering it may carry the store over to a new body list)."""
        packs = self.packs
        table = packs[0].get((t, t.state, t.version), lambda: table_args(t))
        self.buffers = packs[0].args[-5:]  # sweep, lo, hi, out, times
        fixed = state[:10] + (state[14], state[17])
        nodes = packs[1].get(fixed, lambda: fixed)
        self.begun = world.manager.whole_begin(world.bodies, t)
        detect = packs[2].get(*world.manager.whole_fixed(*self.begun))
        three = (table, nodes, detect)
        self.outer = packs[3].get(three, lambda: three)
        self.planes = world._ground_planes(t) if len(t.ground_rows) else _NO_PLANES
        self.key = self.key_of(world, t, state)


def one_call_world_step(world, t, t0, good=None):
    """:meth:`app.world.world.World.step` after the repair and the kinematic motion (begun at ``t0``,
    :func:`time.perf_counter`), by :func:`world_step_serial`, when the dynamics would take its one
    call (:func:`app.world.dynamics_step.takes_one_call`), the broad phase is the dynamic AABB tree,
    no body is listed twice and the detection takes its one call. Returns whether it ran (False:
    nothing was done, the world composes the step).

    With ``good`` (the world's remembered poses, :meth:`app.world.world.World._inside_repair`), the step
    comes before the repair instead, which the call checks (``r_check``): when the state needs
    repair, nothing is done and it returns False.

    What stays from step to step (the packed arguments, the ground planes, the detection's shapes) is
    kept on the world (``world._plan``, a :class:`StepPlan`)."""
    manager = world.manager
    dyn = world.dynamics
    store = manager.store
    tree = world.broad
    bounded = t.bounded_rows
    n = len(bounded)
    if (type(tree) is not DynamicAABBTree or t.aliased or n < 2 or not manager._one_call_narrow
            or not takes_one_call(dyn, store)):
        return False
    # the tree's arrays tlo ... free, sah; margin_rel, margin_abs, shrink, predict; moved; keys, rebuild; counts
    state = tree.compiled_update(n)
    plan = world._plan
    if plan is None:
        plan = world._plan = StepPlan()
    if not plan.holds(StepPlan.key_of(world, t, state)):
        plan.make(world, t, state)
    outer, begun, (rows, planes) = plan.outer, plan.begun, plan.planes
    sweep, lo, hi, out, times = plan.buffers
    dt = world.dt
    world._fresh = False  # (the poses move: as the kinematic motion marks it, for a call that raises)
    sound, finite, m, detected, *results = world_step_serial(
        outer, dyn.gravity, float(dt), dyn.linear_damping, dyn.angular_damping, store.words, dyn.friction,
        dyn.restitution, dyn.iterations, BETA, SLOP, BOUNCE_THRESHOLD, dyn.warm_start, dyn.tolerance,
        *dyn._sleep_args(t), bool(dyn.patches), world.ccd, state[10], state[11], state[12], state[13], state[15],
        state[16], rows, planes, manager.margin, len(world.bodies), *manager.whole_varying(), MAX_PAIRS,
        good is not None, _NO_POSES if good is None else good, MAX_SPEED, MAX_SPIN)
    if not sound:
        world._fresh = True  # (as it was: nothing moved)
        return False
    keys, cand, found = split_results(*results)
    one_call_done(dyn, out)
    world.time += dt
    world._updated(t0, times[0])
    world._tree_done(bounded, lo, hi, finite, keys, m)
    if detected and not found[0]:
        manager.whole_done(world.bodies, t, begun, found)
        world._detected(cand, times[0], times[1], time.perf_counter())
    else:  # (the detection as the world runs it alone: past the cap, more scratch, nothing to detect)
        world._narrow(t, sweep, cand, times[0], times[1])
    return True
