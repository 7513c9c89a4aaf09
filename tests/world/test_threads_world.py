"""The world's step gives the same state on one thread and on all of numba's threads.

The step's batch kernels (hull pairs, contact rows, solver islands) each have a
serial and a threaded driver (:mod:`collision.threads`); every item is computed
by the same code from the same inputs either way, so two worlds built from the
same seeded scene and stepped the same number of times, one with every kernel
forced serial and one with every kernel forced threaded, must end bit for bit
equal: poses, velocities, spins and the contact impulses. And a small world
(its batches far below the thresholds) runs every kernel on the serial driver.
"""

import numba
import numpy as np
import pytest

from app.world import solver
from app.world.world import World, rotation
from obbcollide import threads
from obbcollide.hull_batch import HULL_PAIRS_THREADS
from obbcollide.threads import forced
from tests._bodies import box_body, ground_body


def pile(seed, ground="box"):
    """Columns of three boxes (small random yaw and offset, seeded) dropped on a ground: many
    islands, box-box and box-ground hull pairs."""
    rng = np.random.default_rng(seed)
    if ground == "box":
        bodies = [box_body("ground", (20.0, 0.5, 20.0), (0.0, -0.5, 0.0), motion="static")]
    else:
        bodies = [ground_body(size=20.0)]
    for i in range(4):
        for j in range(4):
            for layer in range(3):
                pos = (1.3 * i + rng.uniform(-0.05, 0.05), 0.3 + 0.55 * layer, 1.3 * j + rng.uniform(-0.05, 0.05))
                bodies.append(box_body(f"b{i}{j}{layer}", (0.25, 0.25, 0.25), pos, motion="dynamic",
                                       rot=rotation((0, 1, 0), rng.uniform(-0.3, 0.3))))
    w = World(bodies, dt=1 / 60, exact=False)
    return w


def state(w):
    return (np.stack([b.pose for b in w.bodies]), np.stack([b.velocity for b in w.bodies]),
            np.stack([b.spin for b in w.bodies]))


@pytest.mark.parametrize("seed,ground", [(0, "box"), (1, "plane")])
def test_step_same_on_one_and_all_threads(seed, ground):
    out = {}
    for mode in ("serial", "threaded"):
        w = pile(seed, ground)
        with forced(mode):
            for _ in range(25):
                w.step()
        out[mode] = (state(w), w.stats["manifolds"], w.stats["points"])
    (sa, ma, pa), (sb, mb, pb) = out["serial"], out["threaded"]
    assert ma == mb and pa == pb and pa > 0
    for x, y in zip(sa, sb):
        assert np.array_equal(x, y)
    # the pile fell and touches: the comparison is of a step with contacts, not of free fall
    assert np.all(np.abs(sa[1][1:, 1]) < 5.0)


def test_small_world_runs_every_kernel_serially():
    w = pile(2)
    for _ in range(3):
        w.step()  # the first contacts (compiles nothing new for the counts below)
    before = {name: dict(c.calls) for name, c in threads.CHOICES.items()}
    for _ in range(10):
        w.step()
    for c in (HULL_PAIRS_THREADS, solver.ROWS_THREADS, solver.ISLANDS_THREADS):
        assert c.calls[True] == before[c.name][True], c  # no threaded call
        assert c.calls[False] > before[c.name][False], c  # and the kernel did run
    assert w.stats["points"] < 2 * min(solver.MIN_POINTS_PER_THREAD, solver.MIN_ROWS_PER_THREAD)


@pytest.mark.skipif(numba.get_num_threads() < 2, reason="numba has one thread here")
def test_big_island_batch_is_offered_threads():
    assert solver.ISLANDS_THREADS.eligible(4 * solver.MIN_POINTS_PER_THREAD, 2) == 2
    assert solver.ISLANDS_THREADS.eligible(2 * solver.MIN_POINTS_PER_THREAD - 1, 2) == 1
