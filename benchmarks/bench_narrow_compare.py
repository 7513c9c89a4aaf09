"""The narrow phase you choose and compare: cost per piece pair and per frame, against python-fcl.

Run: ``.venv/bin/python benchmarks/bench_narrow_compare.py [--frames N]``

The stacks scene (25 boxes on a ground) is run for half a second so the boxes
rest on each other; its candidate hull piece pairs
(:func:`app.world.narrow_compare.candidate_piece_pairs`) are then answered, the
same poses for every contender:

- ours, per pair (median over the pairs of the median of repeats): each
  touching test of :mod:`collision.hull_touch` (SAT manifold, GJK / EPA,
  vector symbol, exact triangles through the OBB trees);
- the peer for the reference: python-fcl's ``collide`` on the same hull
  triangles (``BVHModel``, OBBRSS, built once), a yes / no answer, per pair;
  the ratio ours / fcl is printed (< 1: ours faster);
- per frame: :meth:`app.world.narrow_compare.NarrowPhaseChoice.run` for each
  algorithm alone and compared with the reference (the pair enumeration
  included), median over ``--frames`` runs.

Both answer every pair alike (checked: the number of touching pairs is printed
for each).
"""

import argparse
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from app.world.narrow_compare import ALGORITHMS, NarrowPhaseChoice, candidate_piece_pairs  # noqa: E402
from app.scene.loader import load_scene  # noqa: E402
from app.scene.scene_file import scene_registry  # noqa: E402
from obbcollide.hull_touch import touch_hull_hull  # noqa: E402


def median_time(fn, repeats):
    fn()  # warm (kernels loaded or compiled)
    ts = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        ts.append(time.perf_counter() - t0)
    return statistics.median(ts)


def fcl_answer(fcl, models, pa, pb):
    ta = fcl.Transform(pa[:3, :3], pa[:3, 3])
    tb = fcl.Transform(pb[:3, :3], pb[:3, 3])
    return fcl.collide(fcl.CollisionObject(models[0], ta), fcl.CollisionObject(models[1], tb),
                       fcl.CollisionRequest())


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--frames", type=int, default=20, help="runs per frame timing (default 20)")
    ap.add_argument("--repeats", type=int, default=20, help="repeats per pair timing (default 20)")
    args = ap.parse_args(argv)
    world, errors = load_scene(scene_registry()["stacks"])
    for _ in range(30):
        world.frame(1 / 60)
    pairs, others = candidate_piece_pairs(world)
    print(f"stacks after 0.5 s: {len(pairs)} candidate hull piece pairs ({others} with the ground, not compared)")
    try:
        import fcl
    except ImportError:
        fcl = None
        print("python-fcl is not installed: no peer (pip install python-fcl)")
    fcl_models = {}

    def model(shape):
        if id(shape) not in fcl_models:
            m = fcl.BVHModel()
            m.beginModel(len(shape.poly.vertices), len(shape.poly.triangles))
            m.addSubModel(shape.poly.vertices, shape.poly.triangles)
            m.endModel()
            fcl_models[id(shape)] = m
        return fcl_models[id(shape)]

    rows = {}
    for name in ALGORITHMS:
        per, touching = [], 0
        for i, j, p, q in pairs:
            a, b = world.bodies[i], world.bodies[j]
            sa, sb = a.shapes[p], b.shapes[q]
            touching += touch_hull_hull(name, sa, a.pose, sb, b.pose).touching
            per.append(median_time(lambda: touch_hull_hull(name, sa, a.pose, sb, b.pose), args.repeats))
        rows[name] = (statistics.median(per), touching)
    if fcl is not None:
        per, touching = [], 0
        for i, j, p, q in pairs:
            a, b = world.bodies[i], world.bodies[j]
            ms = (model(a.shapes[p]), model(b.shapes[q]))
            touching += fcl_answer(fcl, ms, a.pose, b.pose) > 0
            per.append(median_time(lambda: fcl_answer(fcl, ms, a.pose, b.pose), args.repeats))
        rows["fcl (peer)"] = (statistics.median(per), touching)
    ref = rows.get("fcl (peer)", (None,))[0]
    print(f"\nper pair, medians (us){'':20s}touching   ours / fcl")
    for name, (t, touching) in rows.items():
        ratio = f"{t / ref:9.2f}" if ref and name != "fcl (peer)" and name == "triangles" else ""
        print(f"  {name:28s} {t * 1e6:9.1f} {touching:10d}   {ratio}")
    print("\nper frame, medians (ms): the choice's run(), pair enumeration included")
    for name in ALGORITHMS:
        for compare in (False, True):
            choice = NarrowPhaseChoice(name, compare=compare)
            if not choice.active:
                continue
            t = median_time(lambda: choice.run(world), args.frames)
            print(f"  {name:14s} {'compared' if compare else 'alone':9s} {t * 1e3:8.2f}"
                  f"   ({t / max(1, len(pairs)) * 1e6:.0f} us a pair)")


if __name__ == "__main__":
    main()
