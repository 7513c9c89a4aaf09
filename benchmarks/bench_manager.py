"""CollisionManager against trimesh's manager and python-fcl's DynamicAABBTreeCollisionManager, one run.

Two comparisons, every peer on the same meshes and poses, timed in
alternation (load on a shared machine hits all alike), medians, ratios
printed (ours / peer: lower is better):

1. Repeated single queries: a manager of 12 real meshes (assets/meshes) and a
   query mesh at a new pose each call, ``in_collision_single`` and
   ``min_distance_single``. trimesh builds FCL's BVH of the query mesh at
   every call; ours finds its tree by content. python-fcl with the query's
   BVH built once is printed too (the floor trimesh could reach). Each
   manager gets its own copy of the query mesh: trimesh's manager leaves the
   mesh's cached checksum stale after each call (FCL's BVH is built from its
   arrays), so on a shared object ours would pay trimesh's re-hash of the
   arrays for trimesh's side effect. The calls alternate in blocks of 10 (see
   :func:`timed`), each call timed; ``--interleave`` alternates them one by one.
2. Internal checks of 100 and 1000 meshes (the six asset meshes cycled, random
   poses in a cube sized for a few overlaps per mesh): ``in_collision_internal``
   (stops at the first hit) and ``in_collision_internal(return_names=True)``
   (every colliding pair) against python-fcl's manager: ``collide`` with
   ``defaultCollisionCallback`` (first hit), and with a callback that collides
   every candidate pair up to one contact (every pair; the Python callback is
   what trimesh's manager runs). Both managers keep their geometry (one BVH /
   tree per distinct mesh).

    .venv/bin/python benchmarks/bench_manager.py [--quick] [--interleave]
"""

import argparse
import os
import sys
import time

import fcl
import numpy as np
import trimesh
from scipy.spatial.transform import Rotation

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import obbcollide as c  # noqa: E402

ASSETS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "assets", "meshes")
NAMES = ("torus_knot", "gear", "blob", "bowl", "capsule", "box")


def load():
    return {n: trimesh.load(os.path.join(ASSETS, n + ".ply")) for n in NAMES}


def random_poses(n, half, seed):
    rng = np.random.default_rng(seed)
    p = np.tile(np.eye(4), (n, 1, 1))
    p[:, :3, :3] = Rotation.random(n, random_state=seed).as_matrix()
    p[:, :3, 3] = rng.uniform(-half, half, (n, 3))
    return p


def fcl_bvh(m):
    b = fcl.BVHModel()
    b.beginModel(len(m.vertices), len(m.faces))
    b.addSubModel(np.asarray(m.vertices, float), np.asarray(m.faces, np.int32))
    b.endModel()
    return b


def timed(fns, repeat, block=1):
    """Median seconds of a call of each function, in alternating blocks of ``block`` calls.

    With ``block=1`` the calls alternate one by one. A block of a few calls keeps
    each contender's caches its own for all but the block's first call (trimesh's
    single query allocates and frees megabytes each call, which left the next
    contender's first call about 100 us slower in our measurements), while load
    on a shared machine still hits all of them alike.
    """
    ts = [[] for _ in fns]
    for _ in range(max(1, repeat // block)):
        for k, f in enumerate(fns):
            for _ in range(block):
                t = time.perf_counter()
                f()
                ts[k].append(time.perf_counter() - t)
    return [float(np.median(t)) for t in ts]


def single_queries(meshes, repeat, block=10):
    names = list(meshes)
    scene = random_poses(12, 2.5, 1)
    ours = c.CollisionManager()
    theirs = trimesh.collision.CollisionManager()
    fman = fcl.DynamicAABBTreeCollisionManager()
    bvhs = {n: fcl_bvh(m) for n, m in meshes.items()}
    objs = []
    for k, p in enumerate(scene):
        m = meshes[names[k % len(names)]]
        ours.add_object(f"o{k}", m, p)
        theirs.add_object(f"o{k}", m)
        theirs.set_transform(f"o{k}", p)
        objs.append(fcl.CollisionObject(bvhs[names[k % len(names)]], fcl.Transform(p[:3, :3], p[:3, 3])))
    fman.registerObjects(objs)
    fman.setup()
    print("1. repeated single queries against 12 meshes (median per call)")
    print(f"   {'query mesh':<12}{'query':<22}{'ours':>10}{'trimesh':>11}{'fcl(BVH kept)':>15}"
          f"{'trimesh/ours':>14}{'fcl/ours':>10}")
    for qname in ("gear", "torus_knot"):
        q = meshes[qname]
        q_theirs = q.copy()  # see the docstring: no mesh object shared between the managers
        qpose = random_poses(repeat, 2.5, 7)
        qobj = fcl.CollisionObject(bvhs[qname], fcl.Transform())
        state = {"k": 0}

        def nxt():
            state["k"] = (state["k"] + 1) % repeat
            return qpose[state["k"]]

        def fcl_collide():
            p = nxt()
            qobj.setTransform(fcl.Transform(p[:3, :3], p[:3, 3]))
            cd = fcl.CollisionData()
            fman.collide(qobj, cd, fcl.defaultCollisionCallback)
            return cd.result.is_collision

        def fcl_distance():
            p = nxt()
            qobj.setTransform(fcl.Transform(p[:3, :3], p[:3, 3]))
            dd = fcl.DistanceData(fcl.DistanceRequest(enable_signed_distance=True))
            fman.distance(qobj, dd, fcl.defaultDistanceCallback)
            return dd.result.min_distance

        # the answers agree on these poses (a check, not part of the timing)
        for p in qpose[:20]:
            assert ours.in_collision_single(q, p) == theirs.in_collision_single(q_theirs, p)
        ours.in_collision_single(q, qpose[0])  # the query's tree, once
        rows = [
            ("in_collision_single", lambda: ours.in_collision_single(q, nxt()),
             lambda: theirs.in_collision_single(q_theirs, nxt()), fcl_collide),
            ("min_distance_single", lambda: ours.min_distance_single(q, nxt()),
             lambda: theirs.min_distance_single(q_theirs, nxt()), fcl_distance),
        ]
        for label, fo, ft, ff in rows:
            to, tt, tf = timed([fo, ft, ff], repeat, block)
            print(f"   {qname + ' ' + str(len(q.faces)):<12}{label:<22}{to * 1e6:>8.0f}us{tt * 1e6:>9.0f}us"
                  f"{tf * 1e6:>13.0f}us{tt / to:>13.1f}x{tf / to:>9.2f}x")


def internal_checks(meshes, n, repeat):
    names = list(meshes)
    half = 1.3 * n ** (1.0 / 3.0)
    poses = random_poses(n, half, 3)
    ours = c.CollisionManager()
    bvhs = {k: fcl_bvh(m) for k, m in meshes.items()}
    objs = []
    for k, p in enumerate(poses):
        ours.add_object(k, meshes[names[k % len(names)]], p)
        objs.append(fcl.CollisionObject(bvhs[names[k % len(names)]], fcl.Transform(p[:3, :3], p[:3, 3])))
    fman = fcl.DynamicAABBTreeCollisionManager()
    fman.registerObjects(objs)
    fman.setup()
    # python-fcl hands the callback new wrappers of the objects: tell them apart by their (random) positions
    index = {tuple(p[:3, 3]): k for k, p in enumerate(poses)}
    req1 = fcl.CollisionRequest(num_max_contacts=1, enable_contact=False)

    def fcl_any():
        cd = fcl.CollisionData()
        fman.collide(cd, fcl.defaultCollisionCallback)
        return cd.result.is_collision

    def fcl_pairs():
        found = set()

        def cb(o1, o2, _):
            res = fcl.CollisionResult()
            if fcl.collide(o1, o2, req1, res):
                found.add(tuple(sorted((index[tuple(o1.getTranslation())], index[tuple(o2.getTranslation())]))))
            return False

        fman.collide(None, cb)
        return found

    # warm up, and check that both find the same pairs (up to closed meshes inside others: solids here)
    ours_pairs = ours.in_collision_internal(return_names=True)[1]
    theirs_pairs = fcl_pairs()
    extra = ours_pairs - theirs_pairs
    assert theirs_pairs <= ours_pairs, theirs_pairs - ours_pairs
    print(f"   n={n}: {len(theirs_pairs)} colliding pairs (+{len(extra)} by containment here)")
    to, tf = timed([lambda: ours.in_collision_internal(), fcl_any], repeat)
    print(f"   {'any pair (first hit)':<28}{to * 1e3:>9.3f} ms{tf * 1e3:>9.3f} ms{to / tf:>10.2f}x")
    to, tf = timed([lambda: ours.in_collision_internal(return_names=True), fcl_pairs], repeat)
    print(f"   {'every pair (return_names)':<28}{to * 1e3:>9.3f} ms{tf * 1e3:>9.3f} ms{to / tf:>10.2f}x")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="fewer repetitions")
    ap.add_argument("--interleave", action="store_true",
                    help="single queries: alternate the contenders call by call (blocks of 1, not 10)")
    args = ap.parse_args()
    meshes = load()
    from numba import get_num_threads
    print(f"numba threads: {get_num_threads()}; ratios ours/peer below 1 mean ours is faster, "
          "above them trimesh/ours and fcl/ours: above 1 means ours is faster")
    single_queries(meshes, 20 if args.quick else 100, 1 if args.interleave else 10)
    print("2. internal checks (median per call)")
    print(f"   {'':<28}{'ours':>12}{'fcl':>12}{'ours/fcl':>11}")
    for n in (100, 1000):
        internal_checks(meshes, n, 5 if args.quick else 21)


if __name__ == "__main__":
    main()
