"""A long run of a large pile through the world's step (app/world/world.py, app/world/dynamics.py, app/world/contacts.py).

The requirement: 10^5 steps of a 200-body pile with no NaN. Two hundred boxes
(random sizes and rotations) and balls fall into a walled pen on the ground and
pile up; every 2000 steps something is thrown in to wake the pile (a random body
kicked at 5 m/s, or a body taken out and a ball thrown in instead, so the count
stays 200). Every 1000 steps the state is checked against the physics of the
scene rather than against another engine:

- every pose, velocity and spin is finite and every rotation orthonormal
  (``max |R^T R - I| < 1e-6``);
- nothing is more than 5 cm under the ground or out through a wall (the
  lowest / outermost point of each body: a box's corners, a ball's centre
  plus its radius);
- energy: the kinetic plus potential energy of the bodies never rises from
  one check to the next by more than what was thrown in between (a kick's
  kinetic energy; a thrown ball's energy less that of the body it replaced),
  within 1% of the kinetic energy of one throw of the lightest body: the
  solver only removes energy, up to its position correction; so it never
  exceeds what went in (the potential energy of the drop plus the throws);
- at the end, 2000 steps (33 s) after the last throw, the pile has come
  nearly to rest: its kinetic energy is under 1% of that of one throw of the
  lightest body.
"""

import time

import numpy as np
import pytest

from app.world.world import World
from obbcollide.shapes import Sphere

from .._bodies import ball_body, box_body, ground_body
from .._reference import random_rotation

G = 9.81
INNER = 1.0      # the pen: |x|, |z| < INNER inside the walls (m)
WALL = 0.1       # wall half thickness (m)
HEIGHT = 1.5     # wall half height (m): 3 m walls, above the reach of a 5 m/s throw (1.3 m) from the pile's top
THROW = 5.0      # m/s
BELOW = 0.05     # how far a body may sink into the ground (m)
OUT = 0.05       # how far a body may reach into a wall (m)
COUNT = 200


def pen():
    """The ground and four static walls around the square |x|, |z| < INNER."""
    long = INNER + 2 * WALL
    walls = [((INNER + WALL, HEIGHT, 0.0), (WALL, HEIGHT, long)),
             ((-INNER - WALL, HEIGHT, 0.0), (WALL, HEIGHT, long)),
             ((0.0, HEIGHT, INNER + WALL), (INNER, HEIGHT, WALL)),
             ((0.0, HEIGHT, -INNER - WALL), (INNER, HEIGHT, WALL))]
    return [ground_body()] + [box_body(f"wall{k}", half, centre, motion="static")
                              for k, (centre, half) in enumerate(walls)]


def pile(rng, count=COUNT):
    """``count`` dynamic bodies on a 6 x 6 grid, 35 cm per layer: two boxes (half extents 4-13 cm,
    random rotation) for every ball (radius 5-12 cm)."""
    grid = 6
    cell = 2 * INNER / grid
    bodies = []
    for k in range(count):
        layer, c = divmod(k, grid * grid)
        i, j = divmod(c, grid)
        pos = (-INNER + (i + 0.5) * cell + rng.uniform(-0.02, 0.02), 0.2 + 0.35 * layer,
               -INNER + (j + 0.5) * cell + rng.uniform(-0.02, 0.02))
        if k % 3 == 2:
            bodies.append(ball_body(f"ball{k}", rng.uniform(0.05, 0.12), pos))
        else:
            bodies.append(box_body(f"box{k}", rng.uniform(0.04, 0.13, 3), pos, motion="dynamic",
                                   rot=random_rotation(rng)))
    return bodies


def energies(bodies):
    """(kinetic, potential) energy of the dynamic ``bodies`` (J; potential from the ground, gravity -y)."""
    kinetic = potential = 0.0
    for b in bodies:
        m = b.mass
        r = b.pose[:3, :3]
        kinetic += 0.5 * m.mass * b.velocity @ b.velocity + 0.5 * b.spin @ (r @ m.inertia @ r.T) @ b.spin
        potential += m.mass * G * (r @ m.center + b.pose[:3, 3])[1]
    return kinetic, potential


def reach(bodies):
    """(lowest y, largest |x|, largest |z|) over the points of the dynamic ``bodies`` (exact for
    boxes, whose meshes are their shapes, and for balls)."""
    low, far_x, far_z = np.inf, 0.0, 0.0
    for b in bodies:
        p = b.pose
        if isinstance(b.shapes[0], Sphere):
            r = b.shapes[0].radius
            c = p[:3, 3]
            low = min(low, c[1] - r)
            far_x, far_z = max(far_x, abs(c[0]) + r), max(far_z, abs(c[2]) + r)
        else:
            v = b.vertices @ p[:3, :3].T + p[:3, 3]
            low = min(low, v[:, 1].min())
            far_x, far_z = max(far_x, np.abs(v[:, 0]).max()), max(far_z, np.abs(v[:, 2]).max())
    return low, far_x, far_z


def check(bodies, step):
    """The state checks of the module docstring (all but energy); returns (lowest y, farthest |x| or |z|)."""
    pose = np.array([b.pose for b in bodies])
    velocity = np.array([b.velocity for b in bodies])
    spin = np.array([b.spin for b in bodies])
    assert np.all(np.isfinite(pose)) and np.all(np.isfinite(velocity)) and np.all(np.isfinite(spin)), step
    r = pose[:, :3, :3]
    err = np.abs(np.transpose(r, (0, 2, 1)) @ r - np.eye(3)).max()
    assert err < 1e-6, (step, err)
    np.testing.assert_array_equal(pose[:, 3], np.tile([0.0, 0, 0, 1], (len(pose), 1)))
    low, far_x, far_z = reach(bodies)
    assert low > -BELOW, (step, low)
    assert far_x < INNER + OUT and far_z < INNER + OUT, (step, far_x, far_z)
    return low, max(far_x, far_z)


def run_pile(steps, seed=0, every=2000, check_every=1000, log=None):
    """Drop the pile, run ``steps`` steps with a throw every ``every`` and the checks every
    ``check_every``. Returns a dict of what was measured."""
    rng = np.random.default_rng(seed)
    walls = pen()
    dynamic = pile(rng)
    w = World(walls + dynamic, dt=1 / 60)
    energy_in = sum(energies(dynamic))
    throw_min = 0.5 * min(b.mass.mass for b in dynamic) * THROW ** 2
    worst = 0.0  # largest (energy - energy in) / energy in
    rise = -np.inf  # largest rise of the energy between two checks beyond what was thrown in between (J)
    last = energy_in
    lowest, farthest = np.inf, 0.0
    throws = 0
    t0 = time.perf_counter()
    for s in range(1, steps + 1):
        w.step()
        if s % every == 0 and s < steps:  # throw something in, after the step (the last one has time to settle)
            throws += 1
            bodies = w.bodies[len(walls):]
            victim = bodies[rng.integers(len(bodies))]
            d = rng.normal(size=3)
            if throws % 2:  # kick a body
                before = sum(energies([victim]))
                victim.velocity = THROW * d / np.linalg.norm(d)
                victim.wake()
                added = sum(energies([victim])) - before
                energy_in += added
                last += added
            else:  # take one out, throw a ball in from above (down into the pen)
                gone = sum(energies([victim]))
                energy_in -= gone
                last -= gone
                w.bodies.remove(victim)
                d[1] = -abs(d[1])
                ball = ball_body(f"thrown{throws}", rng.uniform(0.05, 0.12),
                                 (rng.uniform(-0.6, 0.6), 2.0, rng.uniform(-0.6, 0.6)),
                                 velocity=THROW * d / np.linalg.norm(d))
                w.bodies.append(ball)
                energy_in += sum(energies([ball]))
                last += sum(energies([ball]))
                throw_min = min(throw_min, 0.5 * ball.mass.mass * THROW ** 2)
            assert len(w.bodies) == len(walls) + COUNT
        if s % check_every == 0:
            bodies = w.bodies[len(walls):]
            low, far = check(bodies, s)
            lowest, farthest = min(lowest, low), max(farthest, far)
            e = sum(energies(bodies))
            worst = max(worst, (e - energy_in) / energy_in)
            rise = max(rise, e - last)
            assert e - last < 0.01 * throw_min, (s, e, last, throw_min)
            assert e <= energy_in + 0.01 * throw_min * s / check_every, (s, e, energy_in)
            if log is not None:
                log(s, time.perf_counter() - t0, e, energy_in, e - last, w.dynamics.stats)
            last = e
    kinetic, _ = energies(w.bodies[len(walls):])
    return {"seconds": time.perf_counter() - t0, "kinetic": kinetic, "throw_min": throw_min,
            "energy_in": energy_in, "worst": worst, "rise": rise, "lowest": lowest,
            "farthest": farthest, "throws": throws, "world": w}


def test_a_200_body_pile_runs_100000_steps_without_nan():
    out = run_pile(100_000)
    assert out["throws"] == 49
    assert out["kinetic"] < 0.01 * out["throw_min"], out
    print(f"\n100000 steps of a {COUNT}-body pile: {out['seconds']:.1f} s; kinetic energy at the end "
          f"{out['kinetic']:.3g} J; energy at most {out['worst']:+.2%} of what went in; largest rise between "
          f"checks beyond the throws {out['rise']:.3g} J; lowest point {out['lowest']:.4f} m, farthest "
          f"{out['farthest']:.4f} m (walls at {INNER} m)")


def test_the_checks_catch_what_they_are_for():
    """The pile's checks fail on a body 6 cm into the ground, one reaching into a wall, a NaN, a skewed
    rotation; and pass on the pile as built."""
    rng = np.random.default_rng(1)
    bodies = pile(rng, count=6)
    check(bodies, 0)
    for spoil in ("ground", "wall", "nan", "skew"):
        b = pile(np.random.default_rng(1), count=6)
        box, ball = b[0], b[2]
        if spoil == "ground":
            box.pose[1, 3] -= reach([box])[0] + BELOW + 0.01  # its lowest corner 6 cm down
        elif spoil == "wall":
            ball.pose[0, 3] = INNER + OUT - ball.shapes[0].radius + 0.001
        elif spoil == "nan":
            ball.spin[1] = np.nan
        else:
            box.pose[:3, :3] = box.pose[:3, :3] @ np.array([[1, 1e-5, 0], [0, 1, 0], [0, 0, 1]])
        with pytest.raises(AssertionError):
            check(b, 0)
