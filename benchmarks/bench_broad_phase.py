"""Broad phases against python-fcl and pybullet: same moving boxes, one run, medians over frames.

N boxes (sides uniform in [0.5, 1.5]) random-walk in a cube of side
(4 N)^(1/3), which gives about 1-2 overlapping neighbours per box. Every frame
each centre moves by a normal step (sigma 0.02 per axis), reflected at the
walls. Per frame we time:

- ours: ``bp.update(lo, hi)`` only. The world already holds the AABBs as
  (n, 3) arrays, so building ``lo`` / ``hi`` is not timed (its cost is
  printed once: two numpy subtractions).
- python-fcl ``DynamicAABBTreeCollisionManager``: fcl.Box objects registered
  once; each frame ``setTranslation`` for every object (a Python loop, timed
  apart as "fcl set") then ``manager.update()`` + ``manager.collide(None,
  callback)`` with a callback that only counts and returns False ("fcl
  broad"). A second, untimed run collects the pairs (identified by their
  translation) and checks they equal ours.
- pybullet (``p.DIRECT``): boxes as ``createMultiBody(baseMass=1)``; each frame
  ``resetBasePositionAndOrientation`` for every body ("bullet reset", a
  Python loop) then ``performCollisionDetection()`` + ``getContactPoints()``
  ("bullet detect"). Bullet does its narrow phase too (box-box contact
  manifolds) and pads boxes with a collision margin, so its pair count is of
  touching-or-close bodies, not of AABB overlaps: printed, not compared.

Ratios are ours / peer (lower is better), against the peer's detection part
(fcl broad, bullet detect) and against its whole frame (set / reset loop
included). The issue's target: 5000 boxes at <= 0.5x FCL's frame time.

    .venv/bin/python benchmarks/bench_broad_phase.py [--quick] [--frames F]
"""

import argparse
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from obbcollide.broad_phase import BROAD_PHASES, make_broad_phase  # noqa: E402

try:
    import fcl
except ImportError:  # pragma: no cover - depends on the machine
    fcl = None
try:
    import pybullet as pb
except ImportError:  # pragma: no cover
    pb = None


def scene(n, seed):
    rng = np.random.default_rng(seed)
    side = (4.0 * n) ** (1 / 3)
    centres = rng.uniform(0, side, (n, 3))
    sizes = rng.uniform(0.5, 1.5, (n, 3))
    return rng, side, centres, sizes


def walk(rng, side, centres, sigma=0.02):
    centres += rng.normal(0, sigma, centres.shape)
    np.abs(centres, out=centres)  # reflect at 0
    over = centres > side
    centres[over] = 2 * side - centres[over]


def frames_of(n, frames, seed):
    """The list of centre arrays of every frame (the same for every contender)."""
    rng, side, c, sizes = scene(n, seed)
    out = []
    for _ in range(frames):
        walk(rng, side, c)
        out.append(c.copy())
    return sizes, out


def median_ms(ts):
    return 1e3 * float(np.median(ts))


def bench_ours(sizes, frames):
    half = sizes / 2
    res = {}
    pairs_last = None
    for name in BROAD_PHASES:
        if name == "brute" and len(sizes) > 1000:
            continue
        bp = make_broad_phase(name)
        bp.update(frames[0] - half, frames[0] + half)  # build (not timed: the world builds once)
        ts = []
        for c in frames:
            lo = c - half
            hi = c + half
            t0 = time.perf_counter()
            pairs = bp.update(lo, hi)
            ts.append(time.perf_counter() - t0)
        res[name] = (median_ms(ts), bp.stats["box_tests"])
        if pairs_last is not None:
            assert np.array_equal(pairs, pairs_last), f"{name} differs from the other broad phases"
        pairs_last = pairs
    t0 = time.perf_counter()
    for c in frames:
        c - half, c + half
    res["_arrays"] = 1e3 * (time.perf_counter() - t0) / len(frames)
    return res, pairs_last


def bench_fcl(sizes, frames, ours_last):
    objs = [fcl.CollisionObject(fcl.Box(*s), fcl.Transform(frames[0][i])) for i, s in enumerate(sizes)]
    manager = fcl.DynamicAABBTreeCollisionManager()
    manager.registerObjects(objs)
    manager.setup()
    counter = [0]

    def count_only(o1, o2, data):
        counter[0] += 1
        return False

    t_set, t_broad = [], []
    for c in frames:
        t0 = time.perf_counter()
        for o, x in zip(objs, c):
            o.setTranslation(x)
        t1 = time.perf_counter()
        counter[0] = 0
        manager.update()
        manager.collide(None, count_only)
        t2 = time.perf_counter()
        t_set.append(t1 - t0)
        t_broad.append(t2 - t1)
    # untimed: the actual pairs of the last frame, objects told apart by their translation
    where = {tuple(x): i for i, x in enumerate(frames[-1])}
    found = []

    def record(o1, o2, data):
        i, j = where[tuple(o1.getTranslation())], where[tuple(o2.getTranslation())]
        found.append((min(i, j), max(i, j)))
        return False

    manager.collide(None, record)
    agree = sorted(found) == [tuple(p) for p in ours_last.tolist()]
    return median_ms(t_set), median_ms(t_broad), counter[0], agree


def bench_bullet(sizes, frames):
    client = pb.connect(pb.DIRECT)
    try:
        ids = []
        quat = [0, 0, 0, 1]
        for s, x in zip(sizes, frames[0]):
            shape = pb.createCollisionShape(pb.GEOM_BOX, halfExtents=(s / 2).tolist(), physicsClientId=client)
            ids.append(pb.createMultiBody(baseMass=1.0, baseCollisionShapeIndex=shape,
                                          basePosition=x.tolist(), physicsClientId=client))
        t_reset, t_detect = [], []
        n_pairs = 0
        for c in frames:
            t0 = time.perf_counter()
            for b, x in zip(ids, c.tolist()):
                pb.resetBasePositionAndOrientation(b, x, quat, physicsClientId=client)
            t1 = time.perf_counter()
            pb.performCollisionDetection(physicsClientId=client)
            contacts = pb.getContactPoints(physicsClientId=client)
            t2 = time.perf_counter()
            t_reset.append(t1 - t0)
            t_detect.append(t2 - t1)
            n_pairs = len({(min(k[1], k[2]), max(k[1], k[2])) for k in contacts})
        return median_ms(t_reset), median_ms(t_detect), n_pairs
    finally:
        pb.disconnect(client)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="fewer frames (for a smoke run)")
    ap.add_argument("--frames", type=int, default=None)
    ap.add_argument("--sizes", type=int, nargs="*", default=[100, 1000, 5000])
    args = ap.parse_args(argv)
    n_frames = args.frames or (10 if args.quick else 100)

    print("Broad phase, per-frame medians over", n_frames, "frames (ms); ratio = ours / peer, lower is better.")
    print("ours: update() only (the world holds the AABBs as (n, 3) arrays already);")
    print("fcl broad = manager.update() + collide(count-only callback); fcl frame = + setTranslation loop;")
    print("bullet detect = performCollisionDetection() + getContactPoints() (narrow phase included);")
    print("bullet frame = + resetBasePositionAndOrientation loop.")
    if fcl is None:
        print("note: python-fcl is not installed: FCL columns skipped")
    if pb is None:
        print("note: pybullet is not installed (pip install pybullet): bullet columns skipped")
    # warm the compiled kernels (cached on disk after the first run)
    warm_sizes, warm_frames = frames_of(50, 3, 0)
    bench_ours(warm_sizes, warm_frames)

    for n in args.sizes:
        sizes, frames = frames_of(n, n_frames, seed=n)
        ours, pairs = bench_ours(sizes, frames)
        print(f"\nN = {n}: {len(pairs)} overlapping pairs in the last frame; "
              f"building lo/hi from centres costs {ours.pop('_arrays'):.3f} ms (not in the times below)")
        peers = {}
        if fcl is not None:
            f_set, f_broad, f_count, agree = bench_fcl(sizes, frames, pairs)
            peers["fcl"] = (f_broad, f_set + f_broad)
            print(f"  fcl   : set {f_set:8.3f}  broad {f_broad:8.3f}  frame {f_set + f_broad:8.3f}   "
                  f"pairs {f_count} ({'agree with ours' if agree else 'DIFFER from ours'})")
        if pb is not None:
            b_reset, b_detect, b_pairs = bench_bullet(sizes, frames)
            peers["bullet"] = (b_detect, b_reset + b_detect)
            print(f"  bullet: reset {b_reset:8.3f}  detect {b_detect:8.3f}  frame {b_reset + b_detect:8.3f}   "
                  f"bodies in contact: {b_pairs} pairs (narrow phase, margins: not comparable)")
        head = f"  {'ours':8s} {'ms':>8s} {'box tests':>10s}"
        for p in peers:
            head += f" {'/' + p + ' det':>12s} {'/' + p + ' frame':>13s}"
        print(head)
        for name, (ms, tests) in ours.items():
            row = f"  {name:8s} {ms:8.3f} {tests:10d}"
            for det, frame in peers.values():
                row += f" {ms / det:12.2f} {ms / frame:13.2f}"
            print(row)
        if n == 5000 and "fcl" in peers:
            best = min(ms for ms, _ in ours.values())
            tree = ours["tree"][0]
            print(f"  target (5000 boxes <= 0.5x FCL frame): tree {tree / peers['fcl'][1]:.2f}x, "
                  f"best {best / peers['fcl'][1]:.2f}x of the frame; "
                  f"tree {tree / peers['fcl'][0]:.2f}x of FCL's broad part alone")


if __name__ == "__main__":
    main()
