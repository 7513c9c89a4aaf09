"""A whole step of the world as one compiled call, for the steps that need no Python inside.

:meth:`app.world.world.World.step` runs three compiled calls a step: the dynamics
(:func:`app.world.dynamics_step.dynamics_step_serial`), the broad phase
(:func:`app.world.world._tree_broad_phase`) and the detection
(:func:`app.world.contacts._detect_whole`), with Python between them that gathers each call's
arguments, checks what came back and keeps it. On a small scene that Python was a large part of
the step: 100 boxes falling free cost 94 us a step here, of which the two kernels took 21 us
each, and a step of 25 boxes landing cost ~230 us against ~145 us in its three kernels.

:func:`world_step_serial` calls the three in one call, in the same order with the same
arguments, so that the results are the same bit for bit. The Python before it gathers the three
argument lists (each from the code that gathers them for its own call), and the Python after
it keeps the results as the three calls' callers do. When the detection cannot run inside (more
candidate pairs than the scratch holds, more than :data:`app.world.world.MAX_PAIRS`), the call
returns after the broad phase and the world runs the detection as before. The three phases'
times come from clock readings inside the call (``times``), so the frame's phases still add up.
"""

import time

import numpy as np
from numba import njit, objmode
from obbcollide.broad_phase.aabb_tree import DynamicAABBTree

from .contacts import _detect_whole
from .dynamics_step import dynamics_step_serial, one_call_args, one_call_done
from .world import _TREE_SWEEP, MAX_PAIRS, _tree_broad_phase

__all__ = ["world_step_serial", "one_call_world_step"]


@njit(cache=True)
def _clock():
    """``time.perf_counter()`` read from compiled code (about a microsecond)."""
    with objmode(t="float64"):
        t = time.perf_counter()
    return t


@njit(cache=True)
def world_step_serial(d_motion, d_sleeping, d_pose, d_com, d_inv_inertia, d_inv_mass, d_velocity, d_spin, d_gravity,
                      d_dt, d_lin, d_ang, d_words, d_root_center, d_friction, d_restitution, d_default_friction,
                      d_default_restitution, d_iterations, d_beta, d_slop, d_bounce_threshold, d_warm, d_tolerance,
                      d_still, d_grab, d_sleep_time, d_sleep_speed, d_sleep_spin, d_settle_speed, d_settle_spin,
                      d_settle_damping, d_patches, d_out, b_motion, b_sleeping, b_velocity, b_spin, b_radius, b_dt,
                      b_ccd, b_pose, b_center, b_axes, b_half, b_rows, b_sweep, b_lo, b_hi, b_tlo, b_thi, b_flo,
                      b_fhi, b_parent, b_child, b_height, b_meta, b_free, b_sah, b_margin_rel, b_margin_abs,
                      b_shrink, b_predict, b_moved, b_old_keys, b_rebuild, b_counts, b_planes_row, b_planes,
                      b_margin, w_motion, w_sleeping, w_shape_count, w_old_words, w_n, w_sweep, w_margin, w_start,
                      w_kind, w_center, w_axes, w_half, w_pose, w_hull, w_core, w_plane, w_core_points,
                      w_core_starts, w_core_radius, w_apart, w_hull_inputs, w_active, w_kept, w_words, w_margins,
                      w_ga, w_gb, w_route, w_order, w_bounds, w_ia, w_pa, w_ib, w_pb, w_mg, w_caches, w_V, w_N, w_D,
                      w_FS, w_FV, w_EV, w_EF, w_VFS, w_VF, w_AC, w_AO, w_GC, w_GS, w_starts, w_scale, w_boxes,
                      w_box_f, w_box_i, w_count, w_normal, w_points_a, w_points_b, w_depths, w_ids, w_kinds,
                      w_tests, w_sat_depth, w_cache_first, w_serial_below, w_gone, w_old_frozen, w_tol2,
                      w_may_update, w_prev, max_pairs, times):

    """One step of the world in one call: :func:`app.world.dynamics_step.dynamics_step_serial` on its
    arguments ``d_*``, :func:`app.world.world._tree_broad_phase` on ``b_*``, then, when the broad phase's
    boxes were finite, its candidate pairs fit the detection's scratch and are at most ``max_pairs``,
    and there is something to detect (a candidate pair, a row kept or a touching pair ended),
    :func:`app.world.contacts._detect_whole` on the candidate pairs and ``w_*``.

    ``b_sweep`` and ``w_sweep`` are the same (n,) array of zeros: the broad phase writes each body's
    sweep into it and the detection reads it. ``times`` (2,) receives the clock after the dynamics
    and after the broad phase (``time.perf_counter()``).

    Returns
    -------
    (finite, keys, cand, m, detected, found)
        The broad phase's results (:func:`app.world.world._tree_broad_phase`), whether the detection
        ran, and its results (:func:`app.world.contacts._detect_whole`; zeros and empty arrays when it
        did not run).
    """
    dynamics_step_serial(d_motion, d_sleeping, d_pose, d_com, d_inv_inertia, d_inv_mass, d_velocity, d_spin,
                         d_gravity, d_dt, d_lin, d_ang, d_words, d_root_center, d_friction, d_restitution,
                         d_default_friction, d_default_restitution, d_iterations, d_beta, d_slop,
                         d_bounce_threshold, d_warm, d_tolerance, d_still, d_grab, d_sleep_time, d_sleep_speed,
                         d_sleep_spin, d_settle_speed, d_settle_spin, d_settle_damping, d_patches, d_out)
    times[0] = _clock()
    finite, keys, cand, m = _tree_broad_phase(b_motion, b_sleeping, b_velocity, b_spin, b_radius, b_dt, b_ccd,
                                              b_pose, b_center, b_axes, b_half, b_rows, b_sweep, b_lo, b_hi, b_tlo,
                                              b_thi, b_flo, b_fhi, b_parent, b_child, b_height, b_meta, b_free,
                                              b_sah, b_margin_rel, b_margin_abs, b_shrink, b_predict, b_moved,
                                              b_old_keys, b_rebuild, b_counts, b_planes_row, b_planes, b_margin)
    times[1] = _clock()
    if (finite and cand.shape[0] <= max_pairs and cand.shape[0] <= w_active.shape[0]
            and w_old_words.shape[0] <= w_kept.shape[0] and (cand.shape[0] or w_old_words.shape[0] or w_gone)):
        found = _detect_whole(cand, w_motion, w_sleeping, w_shape_count, w_old_words, w_n, w_sweep, w_margin,
                              w_start, w_kind, w_center, w_axes, w_half, w_pose, w_hull, w_core, w_plane, w_core_points,
                              w_core_starts, w_core_radius, w_apart, w_hull_inputs, w_active, w_kept, w_words,
                              w_margins, w_ga, w_gb, w_route, w_order, w_bounds, w_ia, w_pa, w_ib, w_pb, w_mg,
                              w_caches, w_V, w_N, w_D, w_FS, w_FV, w_EV, w_EF, w_VFS, w_VF, w_AC, w_AO, w_GC, w_GS,
                              w_starts, w_scale, w_boxes, w_box_f, w_box_i, w_count, w_normal, w_points_a,
                              w_points_b, w_depths, w_ids, w_kinds, w_tests, w_sat_depth, w_cache_first,
                              w_serial_below, w_gone, w_old_frozen, w_tol2, w_may_update, w_prev)
        return finite, keys, cand, m, True, found
    none = np.zeros(0, np.int64)
    found = (0, 0, 0, -1, -1, False, -1, w_old_words[:0], np.zeros((0, 8), np.int64), none, none,
             np.zeros(0, np.bool_), np.zeros(0, np.bool_), 0)
    return finite, keys, cand, m, False, found


def one_call_world_step(world, t, t0):
    """:meth:`app.world.world.World.step` after the repair and the kinematic motion (begun at ``t0``,
    :func:`time.perf_counter`), by :func:`world_step_serial`, when the dynamics would take its one
    call (:func:`app.world.dynamics_step.one_call_args`), the broad phase is the dynamic AABB tree,
    no body is listed twice and the detection takes its one call. Returns whether it ran (False:
    nothing was done, the world composes the step)."""
    manager = world.manager
    if (type(world.broad) is not DynamicAABBTree or t.aliased or len(t.bounded_rows) < 2
            or not manager._one_call_narrow):
        return False
    dargs = one_call_args(world.dynamics, t, manager.store, world.dt)
    if dargs is None:
        return False
    bargs = world._tree_args(t)
    sweep = bargs[_TREE_SWEEP]
    kept, wargs = manager.whole_args(world.bodies, t, sweep)
    times = np.empty(2)
    finite, keys, cand, m, detected, found = world_step_serial(*dargs, *bargs, *wargs, MAX_PAIRS, times)
    one_call_done(world.dynamics, dargs[-1])
    world.time += world.dt
    world._updated(t0, times[0])
    world._tree_done(bargs, finite, keys, m)
    if detected and not found[0]:
        manager.whole_done(world.bodies, t, kept, found)
        world._detected(cand, times[0], times[1], time.perf_counter())
    else:  # (the detection as the world runs it alone: past the cap, more scratch, nothing to detect)
        world._narrow(t, sweep, cand, times[0], times[1])
    return True
