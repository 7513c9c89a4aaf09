"""A pile of boxes steps to the same state whether its box pairs go through collision.box_box or
through the general hull kernel.

The hull-pair batch sends a pair of two boxes to :func:`collision.box_box.collide_box_box_into`,
which computes the general kernel's values in the same order (tests/collision/test_box_box.py
compares them pair by pair); here the two routes run a whole simulation, landing, stacking and
resting included, and must end bit for bit equal (poses, velocities, spins, contact counts).
"""

import numpy as np
import pytest

import obbcollide.hull_batch as hull_batch
from tests.world.test_threads_world import pile, state


@pytest.mark.parametrize("seed,ground", [(0, "box"), (3, "plane")])
def test_box_route_same_world(seed, ground, monkeypatch):
    out = {}
    for route in (True, False):
        monkeypatch.setattr(hull_batch, "BOX_PAIRS", route)
        w = pile(seed, ground)
        for _ in range(40):
            w.step()
        out[route] = (state(w), w.stats["manifolds"], w.stats["points"])
    (sa, ma, pa), (sb, mb, pb) = out[True], out[False]
    assert ma == mb and pa == pb and pa > 0
    for x, y in zip(sa, sb):
        assert np.array_equal(x, y)
    assert np.all(np.abs(sa[1][1:, 1]) < 5.0)  # landed: the steps compared had contacts


def test_boxes_are_routed():
    """The pile's hull table marks its boxes (the box ground and the unit boxes): the route is taken."""
    w = pile(0, "box")
    w.step()
    table = w.manager._hulls
    assert len(table) >= 2 and table.boxes.all()
