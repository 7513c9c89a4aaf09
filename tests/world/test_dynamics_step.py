"""The dynamics of a step as one compiled call (app/world/dynamics_step.py), and the half-space batch
of the narrow phase as one compiled call (app/world/contacts.py), against the steps composed from
Python: the same kernels in the same order, so every pose, velocity, spin and stored contact
must be equal bit for bit, step after step."""

import numpy as np
import pytest

import app.world.dynamics_step as dynamics_step
from app.world.world import World, rotation

from .._bodies import ball_body, box_body, ground_body


def composed(world, dynamics=True, narrow=True):
    """``world`` stepping by the composed dynamics and / or narrow phase."""
    if dynamics:
        world.dynamics._one_call = lambda *args: False
    if narrow:
        world.manager._one_call_narrow = False
    return world


def boxes(restitution=None, kinematic=False, ground_last=False):
    """Boxes dropped in two layers (some turned, so they land on edges and topple onto each other),
    a ball, and optionally a kinematic box sliding through them."""
    bodies = [ground_body(size=20.0)]
    rng = np.random.default_rng(7)
    for k in range(12):
        pos = (1.1 * (k % 4) - 1.6, 0.4 + 0.9 * (k // 4), 0.3 * (k % 3))
        b = box_body(f"box{k}", (0.25, 0.2, 0.3), pos, motion="dynamic",
                     rot=rotation((0.3, 1.0, 0.2), float(rng.uniform(-0.6, 0.6))))
        b.restitution = restitution
        bodies.append(b)
    bodies.append(ball_body("ball", 0.2, (0.0, 3.5, 0.1), velocity=(0.5, -2.0, 0.0)))
    if kinematic:
        bodies.append(box_body("pusher", (0.2, 0.3, 1.5), (-3.0, 0.31, 0.0), velocity=(1.5, 0.0, 0.0)))
    if ground_last:  # (the half-space is then B of its pairs: the flipped batch)
        bodies.append(bodies.pop(0))
    return bodies


def states(world):
    return (np.array([b.pose for b in world.bodies]), np.array([b.velocity for b in world.bodies]),
            np.array([b.spin for b in world.bodies]))


@pytest.mark.parametrize("options", [{}, {"restitution": 0.6}, {"kinematic": True}, {"warm": False},
                                     {"iterations": 3, "tolerance": 0.0}])
def test_one_call_step_equals_composed_step(options, monkeypatch):
    calls = []
    kernel = dynamics_step.dynamics_step_serial

    def counted(*args):
        calls.append(1)
        return kernel(*args)

    monkeypatch.setattr(dynamics_step, "dynamics_step_serial", counted)
    worlds = []
    for _ in range(2):
        w = World(boxes(options.get("restitution"), options.get("kinematic", False)), dt=1 / 60, exact=False)
        w.dynamics.warm_start = options.get("warm", True)
        w.dynamics.iterations = options.get("iterations", 10)
        w.dynamics.tolerance = options.get("tolerance", w.dynamics.tolerance)
        worlds.append(w)
    one, old = worlds[0], composed(worlds[1], narrow=False)
    touched = 0
    for step in range(150):
        n, rows = len(calls), len(one.manager.store)  # (the step solves the contacts found by the last)
        one.step()
        # a store of fewer than two rows goes to the composed path (one layout to compile)
        assert len(calls) - n == (rows >= 2), f"step {step}: the path taken"
        n = len(calls)
        old.step()
        assert len(calls) == n, "the composed world took the one-call path"
        touched = max(touched, one.dynamics.stats["contact_points"])
        for a, b in zip(states(one), states(old)):
            assert np.array_equal(a, b), f"step {step}: the one-call step differs from the composed one"
        assert np.array_equal(one.manager.store.impulse, old.manager.store.impulse)
        assert one.dynamics.stats == old.dynamics.stats
    assert len(calls) >= 100  # most steps of the first world went through the one call
    assert touched > 20  # (the scene had contacts to solve)


def test_grab_takes_the_composed_path(monkeypatch):
    """A mouse joint is solved by the composed step (the one call has none)."""
    w = World(boxes(), dt=1 / 60, exact=False)
    for _ in range(5):
        w.step()
    monkeypatch.setattr(dynamics_step, "dynamics_step_serial", None)  # (calling it now would fail)
    b = w.bodies[1]
    w.dynamics.grab_body(b, b.pose[:3, 3].copy(), b.pose[:3, 3] + (0.0, 1.0, 0.0))
    for _ in range(5):
        w.step()
    assert b.velocity[1] > 0.0



@pytest.mark.parametrize("ground_last", [False, True])
def test_one_call_halfspace_batch_equals_composed(ground_last):
    worlds = [World(boxes(ground_last=ground_last), dt=1 / 60, exact=False) for _ in range(2)]
    one, old = worlds[0], composed(worlds[1], dynamics=False)
    touched = 0
    for step in range(120):
        one.step()
        old.step()
        a, b = one.manager.store, old.manager.store
        assert np.array_equal(a.data, b.data), f"step {step}: the stores differ"
        for x, y in zip(states(one), states(old)):
            assert np.array_equal(x, y), f"step {step}: the states differ"
        touched = max(touched, int(a.count.sum()))
    assert touched > 20


def test_one_call_halfspace_batch_names_a_bad_pose():
    """A pose that is not rigid reaching the batch raises as collide_halfspace_pairs does."""
    messages = []
    for one in (True, False):
        w = World([ground_body(), box_body("box", (0.2, 0.2, 0.2), (0.0, 0.2, 0.0), motion="dynamic")], dt=1 / 60,
                  exact=False)
        w.manager._one_call_narrow = one
        w.step()
        w.table.state.pose[1, :3, :3] *= 1.5  # behind repair's back: straight into the narrow phase
        with pytest.raises(ValueError, match=r"poses\[0\]: is not a rigid transform") as err:
            w._collide(w.table)
        messages.append(str(err.value))
    assert messages[0] == messages[1]
