"""Every example scene (assets/scenes/*.toml) is clean: what a person sees never sinks in.

Each scene is loaded (convex decomposition from an empty cache, as in CI) and
run for 10 simulated seconds (``round(10 / dt)`` steps of its own ``dt``:
1200 at 1/120 s, 600 at 1/60 s) through ``World.step``. At the start and at
the end the visible surfaces are measured by tests/_interpenetration.py
(points of each body's rendered mesh inside the other's closed surface,
their exact distance to it, both ways; a ground as its half-space; the
static concave bowl as its own closed mesh), independent of the contact code:

- at the start no pair overlaps by more than 1 micrometre (rounding of the
  float32 mesh files; touching is allowed: the stacks' boxes stand on the
  ground, the bowl's foot on the ground);
- after 10 s no pair overlaps by more than the solver's slop (5 mm,
  ``app.world.solver.solve_contacts``) plus 1 mm;
- and the measurement looked at something: every dynamic body ends within
  5 mm of another body or the ground (it rests on something; a round
  primitive's mesh can float 1.5 mm over the exact shape it collides as: a
  chord of the capsule's 24-sided section), so its pairs were measured.

The deepest pair of each scene at both times and the run time are printed
(``-s``).
"""

import inspect
import time

import numpy as np
import pytest

from app.scene.loader import load_scene
from app.scene.scene_file import scene_registry
from app.world.solver import solve_contacts
from .._interpenetration import scene_interpenetration

SLOP = inspect.signature(solve_contacts).parameters["slop"].default
START = 1e-6  # m: rounding of the meshes' float32 coordinates
END = SLOP + 1e-3  # m
SCENES = scene_registry()


def test_the_slop_is_what_the_limit_assumes():
    assert SLOP == 0.005


def _line(pairs):
    return ", ".join(f"{p.a} in {p.b} {p.depth * 1000:.2f} mm" for p in pairs[:3]) or "no pairs"


@pytest.mark.parametrize("name", sorted(SCENES))
def test_example_scene_is_clean_at_the_start_and_after_10_s(name, tmp_path):
    t0 = time.perf_counter()
    world, errors = load_scene(SCENES[name], cache=str(tmp_path / "cache"))
    assert errors == []
    t1 = time.perf_counter()
    start = scene_interpenetration(world.bodies)
    deep = [p for p in start if p.depth > START]
    assert not deep, f"{name} at the start: {_line(deep)}"
    steps = int(round(10.0 / world.dt))
    t2 = time.perf_counter()
    for _ in range(steps):
        world.step()
    t3 = time.perf_counter()
    assert np.isclose(world.time, 10.0)
    end = scene_interpenetration(world.bodies, pad=0.005)
    t4 = time.perf_counter()
    print(f"\n{name}: start: {_line(start)}; after {steps} steps (10 s): {_line(end)}; load {t1 - t0:.1f} s, "
          f"steps {t3 - t2:.1f} s, measuring {t2 - t1 + t4 - t3:.1f} s")
    deep = [p for p in end if p.depth > END]
    assert not deep, f"{name} after 10 s: {_line(deep)}"
    measured = {n for p in end for n in (p.a, p.b)}
    resting = [b.name for b in world.bodies if b.motion == "dynamic"]
    assert set(resting) <= measured, f"{name}: not resting on anything: {set(resting) - measured}"
