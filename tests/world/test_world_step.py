"""A whole step of the world as one compiled call (app/world/world_step.py) against the same world
stepping by three calls (the dynamics, the broad phase, the detection) with Python between them:
the same kernels in the same order, so the states, the stores, the events, the candidate pairs and
the counts must be equal bit for bit, step after step; and where the one call cannot finish the
step (past the pair cap, too little scratch, a route outside the batches), the world finishes it
as before."""

import time

import numpy as np
import pytest

import app.world.world as world_module
import app.world.world_step as world_step
from app.world.contacts import _Scratch
from app.world.world import World

from .test_dynamics_step import boxes, jumble, same_steps


def counted(monkeypatch):
    """Count the calls of :func:`world_step_serial` and whether each ran the detection."""
    calls = []
    kernel = world_step.world_step_serial

    def count(*args):
        out = kernel(*args)
        calls.append(out[3])  # (sound, finite, m, detected, *results)
        return out

    monkeypatch.setattr(world_step, "world_step_serial", count)
    return calls


def pair(bodies, **options):
    """Two worlds of ``bodies()``: the first steps by the one call, the second by three."""
    worlds = []
    for one in (True, False):
        w = World(bodies(), dt=1 / 60, exact=False)
        for name, value in options.items():
            setattr(w.dynamics, name, value)
        w._one_call_world = one
        worlds.append(w)
    return worlds


def same_world_steps(one, old, steps):
    """:func:`same_steps`, and the candidate pairs, the dynamics' counts and the clocks equal too."""
    for step in same_steps(one, old, steps):
        assert np.array_equal(one.candidate_pairs, old.candidate_pairs), f"step {step}: the candidates differ"
        assert one.dynamics.stats == old.dynamics.stats, f"step {step}: the dynamics' counts differ"
        assert one.time == old.time and one.stats["candidates"] == old.stats["candidates"]
        yield step


@pytest.mark.parametrize("scene, options", [
    ("boxes", {}), ("bouncy", {}), ("kinematic", {}), ("boxes", {"warm_start": False}),
    ("boxes", {"iterations": 3, "tolerance": 0.0}), ("jumble", {})])
def test_world_step_equals_three_calls(scene, options, monkeypatch):
    """Boxes landing and toppling onto each other, bouncing, pushed by a kinematic box, without the
    warm start or converging; and the jumble of every route (spheres, capsules, meshes: the one call
    stops after the detection's first stage and the world's Python finishes it)."""
    calls = counted(monkeypatch)
    make = {"boxes": boxes, "bouncy": lambda: boxes(restitution=0.6), "kinematic": lambda: boxes(kinematic=True),
            "jumble": jumble}[scene]
    one, old = pair(make, **options)
    touched = 0
    for step in same_world_steps(one, old, 120):
        assert len(calls) == step + 1, f"step {step}: the path taken"  # (every step, the first one's too)
        touched = max(touched, one.dynamics.stats["contact_points"])
    assert touched > 20  # (the scene had contacts to solve)
    assert any(calls) and (scene != "boxes" or calls.count(False) < 30)  # (the detection ran inside)


def test_world_step_leaves_the_pairs_past_the_cap_to_the_world(monkeypatch):
    """More candidate pairs than MAX_PAIRS: the one call stops after the broad phase, and the world
    keeps the first MAX_PAIRS pairs with a message, as it does stepping by three calls."""
    calls = counted(monkeypatch)
    monkeypatch.setattr(world_step, "MAX_PAIRS", 4)
    monkeypatch.setattr(world_module, "MAX_PAIRS", 4)
    one, old = pair(boxes)
    for _ in same_world_steps(one, old, 60):
        pass
    assert one.problems and one.problems == old.problems
    assert "more than the 4 one step handles" in one.problems[-1]
    assert len(one.candidate_pairs) == 4 and not calls[-1]  # (the world ran the detection)


def test_world_step_asks_for_more_scratch(monkeypatch):
    """Scratch too small for the step's pairs: the one call leaves the detection to the world, which
    grows the scratch; the next steps run whole in the one call again."""
    calls = counted(monkeypatch)
    one, old = pair(boxes)
    for step in same_world_steps(one, old, 40):
        if step in (20, 30):
            one.manager._scratch = _Scratch(1, 1, 1)
    assert not calls[21] and not calls[31] and calls[22] and calls[-1]
    assert one.manager._scratch.pairs > 1


def test_world_step_phases_are_the_step():
    """The step's motion, broad phase and detection (read from clocks inside the one call) are
    positive, in that order, and together at most the step's wall time."""
    w = World(boxes(), dt=1 / 60, exact=False)
    for _ in range(40):
        t0 = time.perf_counter()
        w.step()
        wall = time.perf_counter() - t0
        parts = [w.stats[name] for name in ("update", "broad", "narrow")]
        assert all(p > 0.0 for p in parts) and sum(parts) <= wall


def test_world_step_checks_the_state_as_repair_does(monkeypatch):
    """The one call checks the state first, in place of the repair: a non-finite velocity, a pose
    with an infinity and a spin past MAX_SPIN, set between steps on a landed pile, make it return
    untouched, and the world repairs them as the three calls' world does (the same messages, then
    the same steps bit for bit); the steps before and after take one call each."""
    sound = []
    kernel = world_step.world_step_serial

    def check(*args):
        out = kernel(*args)
        sound.append((args[-4], out[0]))  # (checked, passed)
        return out

    monkeypatch.setattr(world_step, "world_step_serial", check)
    one, old = pair(boxes)
    for step in same_world_steps(one, old, 70):
        if step == 39:
            sound.clear()
        if step in (40, 50):
            for w in (one, old):
                st = w.table.state
                if step == 40:
                    st.velocity[2, 1] = np.nan
                    st.pose[4, 0, 3] = np.inf
                else:
                    st.spin[3] = (2.0e3, 0.0, 0.0)
        assert one.problems == old.problems, f"step {step}: the repairs differ"
    assert any("non-finite velocity" in p for p in one.problems)
    assert any("non-finite pose" in p for p in one.problems)
    assert any("spin 2e+03 rad/s" in p for p in one.problems)
    # steps 40 .. 69: the two repaired steps asked twice (checked and refused, then after the repair
    # unchecked: the repair of the pose leaves the manifolds to be found again first), the others once
    assert sound.count((True, False)) == 2 and sound.count((True, True)) == 28 and len(sound) == 32


def test_world_step_follows_bodies_added_and_removed(monkeypatch):
    """Bodies removed from a landed pile (their touching pairs end) and a ball added mid-run: the
    one call's detection carries the store over to the new body list as the three calls do."""
    from .._bodies import ball_body

    calls = counted(monkeypatch)
    one, old = pair(boxes)
    ends = 0
    for step in same_world_steps(one, old, 90):
        if step in (40, 60):
            for w in (one, old):
                del w.bodies[3 if step == 40 else 1]
                w.bodies.append(ball_body(f"ball{step}", 0.15, (0.2, 1.5, 0.1), velocity=(0.0, -1.0, 0.0)))
        if step in (41, 61):
            ends += sum(e.kind == "end" for e in one.events)
    assert ends >= 1  # (a removed body's touching pairs ended)
    assert calls[-1] and len(calls) >= 88  # (the steps after each change ran whole in the one call)


def test_world_step_keeps_its_packs_and_compiles_once(monkeypatch):
    """The arrays that stay from step to step are packed once (app/world/arg_pack.py) and again only
    when their owners change (a body removed: all of them; the scratch grown: the detection's);
    and the kernel takes the same argument types from the fall through the landing (one
    compilation: the store's frozen flags, contiguous for one row and strided for more, are read
    from its rows inside)."""
    import app.world.arg_pack as arg_pack

    made, plans = [], []
    pack = arg_pack.pack_args
    monkeypatch.setattr(arg_pack, "pack_args", lambda args: made.append(len(args)) or pack(args))
    make = world_step.StepPlan.make
    monkeypatch.setattr(world_step.StepPlan, "make", lambda *a: plans.append(1) or make(*a))
    w = World(boxes(), dt=1 / 60, exact=False)
    w.step()
    assert len(made) == 4  # (the table, the tree, the detection, and the one holding them)
    assert len(plans) == 1
    signatures = len(world_step.world_step_serial.signatures)
    for _ in range(60):
        w.step()
    assert w.manager.stats["manifolds"] >= 2 and len(made) == 4
    assert len(plans) == 1  # (the plan holds from step to step: nothing gathered again)
    assert len(world_step.world_step_serial.signatures) == signatures
    del w.bodies[2]
    w.step()
    assert len(made) == 8  # (all four: the table, the tree re-allocated for one box less, the shapes of the rows)
    assert len(plans) == 2
    w.manager._scratch = _Scratch(1, 1, 1)
    for _ in range(3):
        w.step()
    assert len(made) >= 9 and len(world_step.world_step_serial.signatures) == signatures
    assert len(plans) >= 3


def test_world_step_copied_world_steps_its_own_arrays():
    """A deep copy of a world that has stepped (the app's warm-up copies the scene's world) makes its
    own packs: stepping the copy leaves the original's bodies where they were, and both then step
    alike."""
    import copy

    w = World(boxes(), dt=1 / 60, exact=False)
    for _ in range(30):
        w.step()
    twin = copy.deepcopy(w)
    before = w.table.state.pose.copy()
    for _ in range(10):
        twin.step()
    assert np.array_equal(w.table.state.pose, before)  # (the original did not move)
    assert not np.array_equal(twin.table.state.pose, before)
    for _ in range(10):
        w.step()
    assert np.array_equal(w.table.state.pose, twin.table.state.pose)
