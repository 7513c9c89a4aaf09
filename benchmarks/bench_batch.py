"""Batched pose-pair queries against a loop of python-fcl calls, one run.

10^4 pose pairs of real meshes (assets/meshes), the same poses for both:
``collision.batch.collide`` / ``distance`` (one call, all numba threads, and
again on one thread) against a Python loop that sets the two FCL objects'
transforms and calls ``fcl.collide`` (one contact: a yes / no) or
``fcl.distance`` (BVH models built once, OBBRSS). Throughput in pairs per
second, medians of interleaved repeats, ratios printed (ours / fcl: above 1
means ours is faster). The answers are checked to agree first.

``--small`` measures instead where the threads start to pay: batches of 2 to
512 pairs on all threads against one thread (``threads=1``), the numbers
behind :data:`collision.batch.MIN_PAIRS_PER_THREAD`.

    .venv/bin/python benchmarks/bench_batch.py [--quick] [--small]
"""

import argparse
import os
import sys
import time

import fcl
import numpy as np
import trimesh
from numba import get_num_threads
from scipy.spatial.transform import Rotation

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import obbcollide as c  # noqa: E402
from obbcollide import batch  # noqa: E402

ASSETS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "assets", "meshes")
PAIRS = [("gear", "torus_knot"), ("blob", "bowl"), ("capsule", "gear")]


def load(name):
    m = trimesh.load(os.path.join(ASSETS, name + ".ply"))
    b = fcl.BVHModel()
    b.beginModel(len(m.vertices), len(m.faces))
    b.addSubModel(np.asarray(m.vertices, float), np.asarray(m.faces, np.int32))
    b.endModel()
    return c.OBBTree(m), b


def random_poses(n, half, seed):
    rng = np.random.default_rng(seed)
    p = np.tile(np.eye(4), (n, 1, 1))
    p[:, :3, :3] = Rotation.random(n, random_state=seed).as_matrix()
    p[:, :3, 3] = rng.uniform(-half, half, (n, 3))
    return p


def timed(fns, repeat):
    ts = [[] for _ in fns]
    for _ in range(repeat):
        for k, f in enumerate(fns):
            t = time.perf_counter()
            f()
            ts[k].append(time.perf_counter() - t)
    return [float(np.median(t)) for t in ts]


def fcl_loop(bvh_a, bvh_b, pa, pb, kind):
    oa = fcl.CollisionObject(bvh_a, fcl.Transform())
    ob = fcl.CollisionObject(bvh_b, fcl.Transform())
    creq = fcl.CollisionRequest(num_max_contacts=1, enable_contact=False)
    dreq = fcl.DistanceRequest()

    def run():
        out = np.empty(len(pa))
        for k in range(len(pa)):
            oa.setTransform(fcl.Transform(pa[k, :3, :3], pa[k, :3, 3]))
            ob.setTransform(fcl.Transform(pb[k, :3, :3], pb[k, :3, 3]))
            if kind == "collide":
                out[k] = fcl.collide(oa, ob, creq, fcl.CollisionResult())
            else:
                out[k] = fcl.distance(oa, ob, dreq, fcl.DistanceResult())
        return out

    return run


def throughput(n, repeat):
    print(f"{n} pose pairs per call; numba threads: {get_num_threads()}")
    print(f"{'meshes':<24}{'query':<10}{'ours':>14}{'ours 1 thr':>14}{'fcl loop':>14}{'ours/fcl':>10}"
          f"{'1 thr/fcl':>11}   (pairs per second)")
    for name_a, name_b in PAIRS:
        ta, ba = load(name_a)
        tb, bb = load(name_b)
        pa = random_poses(n, 0.3, 1)
        pb = random_poses(n, 1.3, 2)
        # the same answers (fcl's distance is exact for meshes; touching pairs within rounding may differ)
        hit = batch.collide(ta, pa, tb, pb, containment=False)
        ref = fcl_loop(ba, bb, pa, pb, "collide")().astype(bool)
        assert np.mean(hit != ref) < 1e-3, np.mean(hit != ref)
        d = batch.distance(ta, pa, tb, pb).distance
        dref = fcl_loop(ba, bb, pa, pb, "distance")()
        sep = dref > 1e-6
        assert np.allclose(d[sep], dref[sep], rtol=0, atol=1e-9)
        label = f"{name_a} {len(ta.faces)} / {name_b} {len(tb.faces)}"
        for kind, ours, ours1 in (
                ("collide", lambda: batch.collide(ta, pa, tb, pb, containment=False),
                 lambda: batch.collide(ta, pa, tb, pb, containment=False, threads=1)),
                ("distance", lambda: batch.distance(ta, pa, tb, pb),
                 lambda: batch.distance(ta, pa, tb, pb, threads=1))):
            to, t1, tf = timed([ours, ours1, fcl_loop(ba, bb, pa, pb, kind)], repeat)
            print(f"{label:<24}{kind:<10}{n / to:>14,.0f}{n / t1:>14,.0f}{n / tf:>14,.0f}{tf / to:>9.2f}x"
                  f"{tf / t1:>10.2f}x")
        print(f"{'':<24}(hits: {hit.mean():.0%})")


def small_batches(repeat):
    ta, _ = load("gear")
    tb, _ = load("torus_knot")
    print(f"small batches, gear / torus_knot collide: all {get_num_threads()} threads against one "
          "(median per call; the batch code picks one thread below 2 x MIN_PAIRS_PER_THREAD "
          f"= {2 * batch.MIN_PAIRS_PER_THREAD} pairs)")
    print(f"{'pairs':>6}{'forced threads':>16}{'one thread':>14}{'ratio':>8}")
    for n in (2, 8, 16, 32, 64, 128, 512):
        pa = random_poses(n, 0.3, 1)
        pb = random_poses(n, 1.3, 2)
        k = batch.runs_for(n, get_num_threads())
        args = batch._tree_args(ta, False) + batch._tree_args(tb, False) + (pa, pb, False)
        out = np.zeros(n, np.bool_)
        runs = max(2, k)
        tp, ts = timed([lambda: batch._collide_parallel(*args, runs, batch.chunks_for(n, runs), np.zeros(1, np.int64),
                                                        out),
                        lambda: batch._collide_serial(*args, out)], repeat)
        print(f"{n:>6}{tp * 1e6:>14.0f}us{ts * 1e6:>12.0f}us{tp / ts:>8.2f}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="10^3 pairs, fewer repeats")
    ap.add_argument("--small", action="store_true", help="where the threads start to pay")
    args = ap.parse_args()
    if args.small:
        small_batches(15 if args.quick else 101)
    else:
        throughput(1000 if args.quick else 10000, 3 if args.quick else 5)


if __name__ == "__main__":
    main()
