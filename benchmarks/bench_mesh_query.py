"""OBB-tree queries against python-fcl (OBBRSS), same meshes and poses, one run.

Prints the ratio ours / fcl of medians (lower is better; the two timed in
alternation, so that load on a shared machine hits both alike) for: tree build,
yes/no collide, all contacts, distance, and the per-call floor (two
tetrahedra far apart). Also our box tests and triangle tests per query (yes/no,
all contacts, distance) and the box tests of each fit; FCL counts its own
(``num_bv_tests``, ``num_leaf_tests`` of its traversal nodes) but python-fcl
does not expose them (its ``CollisionResult`` holds only ``contacts``,
``cost_sources`` and ``is_collision``), so FCL's columns are time only. Then
the cold-start compile time and the warm (cached) start.

    .venv/bin/python benchmarks/bench_mesh_query.py [--quick]
"""

import argparse
import os
import subprocess
import sys
import time

import fcl
import numpy as np
import trimesh
from scipy.spatial.transform import Rotation

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import obbcollide as c  # noqa: E402


def blob(subdiv, seed):
    """A lumpy, partly concave sphere."""
    m = trimesh.creation.icosphere(subdivisions=subdiv)
    rng = np.random.default_rng(seed)
    k = rng.normal(size=(6, 3))
    k /= np.linalg.norm(k, axis=1)[:, None]
    bumps = sum(0.25 * np.exp(-8 * (1 - m.vertices @ kk)) for kk in k)
    dents = 0.3 * np.exp(-6 * (1 - m.vertices @ np.array([0, 0, 1.0])))
    m.vertices *= (1 + bumps - dents)[:, None]
    return m


def meshes():
    return [
        ("ico320", trimesh.creation.icosphere(subdivisions=2)),
        ("blob5k", blob(4, 1)),
        ("torus20k", trimesh.creation.torus(1.0, 0.35, major_sections=200, minor_sections=50)),
        ("blob20k", blob(5, 2)),
        ("torus60k", trimesh.creation.torus(1.0, 0.35, major_sections=400, minor_sections=75)),
    ]


def poses(n, spread, seed):
    rng = np.random.default_rng(seed)
    out = []
    for k in range(n):
        p = np.eye(4)
        p[:3, :3] = Rotation.random(random_state=seed * 1000 + k).as_matrix()
        d = rng.normal(size=3)
        p[:3, 3] = d / np.linalg.norm(d) * rng.uniform(0.3, 1.0) * spread
        out.append(p)
    return out


def fcl_model(m):
    b = fcl.BVHModel()
    b.beginModel(len(m.vertices), len(m.faces))
    b.addSubModel(np.asarray(m.vertices, float), np.asarray(m.faces, np.int32))
    b.endModel()
    return b


def med_pair(ours, theirs, repeat):
    """Medians of two timings taken interleaved (alternating which goes first), so
    that load from other processes on a shared machine hits both alike."""
    ta, tb = [], []
    for k in range(repeat):
        order = ((ours, ta), (theirs, tb)) if k % 2 == 0 else ((theirs, tb), (ours, ta))
        for fn, ts in order:
            t = time.perf_counter()
            fn()
            ts.append(time.perf_counter() - t)
    return float(np.median(ta)), float(np.median(tb))


def ratio_of(ours, theirs, repeat):
    a, b = med_pair(ours, theirs, repeat)
    return a / b


def cold_start():
    """Compile time on a cold numba cache versus a warm one (separate processes)."""
    code = ("import time, numpy as np, trimesh; t=time.perf_counter(); import obbcollide as c; "
            "m=trimesh.creation.icosphere(2); a=c.OBBTree(m); c.collide(a,np.eye(4),a,np.eye(4)); "
            "c.distance(a,np.eye(4),a,np.eye(4)); c.ray_cast(a,np.eye(4),[5,0,0],[-1,0,0]); "
            "print(time.perf_counter()-t)")
    root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
    env = dict(os.environ, NUMBA_CACHE_DIR=os.path.join("/tmp", f"numba-cold-{os.getpid()}"))
    cold = float(subprocess.run([sys.executable, "-c", code], cwd=root, env=env, capture_output=True,
                                text=True, check=True).stdout)
    warm = float(subprocess.run([sys.executable, "-c", code], cwd=root, env=env, capture_output=True,
                                text=True, check=True).stdout)
    return cold, warm


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true", help="fewer poses and repeats")
    args = ap.parse_args()
    n_poses = 20 if args.quick else 60
    rep = 5 if args.quick else 9
    ms = meshes()
    # Warm up the kernels.
    w = c.OBBTree(ms[0][1])
    c.collide(w, np.eye(4), w, np.eye(4))
    c.collide(w, np.eye(4), w, np.eye(4), first_contact=True)
    c.distance(w, np.eye(4), w, np.eye(4))

    print("ratios ours/fcl (medians); counts are ours per query: python-fcl does not expose FCL's "
          "box and triangle test counts")
    print(f"{'mesh':10s} {'tris':>6s} | {'build':>7s} {'yes/no':>7s} {'all':>7s} {'dist':>7s} | "
          f"{'hits':>4s} {'pairs ok':>8s} | {'yes/no box,tri':>15s} {'all box,tri':>15s} {'dist box,tri':>15s} | "
          "box tests of all (vertex, area, hull fit)")
    worst = {"build": 0, "yes/no": 0, "all": 0, "dist": 0}
    for name, m in ms:
        verts = np.asarray(m.vertices, float)
        faces = np.asarray(m.faces, np.int64)
        ratio = {"build": ratio_of(lambda: c.OBBTree(verts, faces), lambda: fcl_model(m), rep)}
        tree = c.OBBTree(verts, faces)
        fm = fcl_model(m)
        oa = fcl.CollisionObject(fm, fcl.Transform())
        ob = fcl.CollisionObject(fm, fcl.Transform())
        ps = poses(n_poses, 2.2, 7)
        far = poses(n_poses, 4.0, 9)
        for p in far:
            p[:3, 3] *= 1.0 + 0.5 / np.linalg.norm(p[:3, 3])
        eye = np.eye(4)

        def fcl_set(p):
            ob.setTransform(fcl.Transform(p[:3, :3], p[:3, 3]))

        req1 = fcl.CollisionRequest(num_max_contacts=1, enable_contact=False)
        reqn = fcl.CollisionRequest(num_max_contacts=10 ** 7, enable_contact=False)
        dreq = fcl.DistanceRequest(enable_nearest_points=True)

        def ours_yes():
            return [c.collide(tree, eye, tree, p, first_contact=True, containment=False).hit for p in ps]

        def fcl_yes():
            out = []
            for p in ps:
                fcl_set(p)
                out.append(fcl.collide(oa, ob, req1, fcl.CollisionResult()) > 0)
            return out

        def ours_all():
            return [c.collide(tree, eye, tree, p, containment=False) for p in ps]

        def fcl_all():
            out = []
            for p in ps:
                fcl_set(p)
                r = fcl.CollisionResult()
                fcl.collide(oa, ob, reqn, r)
                out.append({(x.b1, x.b2) for x in r.contacts})
            return out

        def ours_dist():
            return [c.distance(tree, eye, tree, p).distance for p in far]

        def fcl_dist():
            out = []
            for p in far:
                fcl_set(p)
                out.append(fcl.distance(oa, ob, dreq, fcl.DistanceResult()))
            return out

        y1, y2 = ours_yes(), fcl_yes()
        a1, a2 = ours_all(), fcl_all()
        d1, d2 = ours_dist(), fcl_dist()
        same_pairs = sum({tuple(x) for x in r.pairs} == s for r, s in zip(a1, a2))
        assert y1 == y2, f"{name}: yes/no differs from fcl"
        assert np.allclose(d1, d2, atol=1e-6), f"{name}: distance differs from fcl {np.max(np.abs(np.subtract(d1, d2)))}"
        ratio["yes/no"] = ratio_of(ours_yes, fcl_yes, 4 * rep)  # short calls: more repeats against noise
        ratio["all"] = ratio_of(ours_all, fcl_all, rep)
        ratio["dist"] = ratio_of(ours_dist, fcl_dist, rep)
        def counts(results):
            return f"{np.mean([r.box_tests for r in results]):.0f},{np.mean([r.tri_tests for r in results]):.0f}"

        count_yes = counts([c.collide(tree, eye, tree, p, first_contact=True, containment=False) for p in ps])
        count_all = counts(a1)
        count_dist = counts([c.distance(tree, eye, tree, p) for p in far])
        boxes = []
        for fit in ("vertex", "area", "hull") if len(faces) <= 20000 else ("vertex", "area"):
            tf = c.OBBTree(verts, faces, fit=fit)
            boxes.append(np.mean([c.collide(tf, eye, tf, p, containment=False).box_tests for p in ps]))
        for k in worst:
            worst[k] = max(worst[k], ratio[k])
        print(f"{name:10s} {len(faces):6d} | {ratio['build']:6.2f}x {ratio['yes/no']:6.2f}x {ratio['all']:6.2f}x "
              f"{ratio['dist']:6.2f}x | {sum(y1):4d} {same_pairs:3d}/{len(ps):<3d} | "
              f"{count_yes:>15s} {count_all:>15s} {count_dist:>15s} | "
              + ", ".join(f"{b:.0f}" for b in boxes), flush=True)

    # Per-call floor: two tetrahedra far apart.
    tet_v = np.array([[0, 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, 1.0]])
    tet_f = np.array([[0, 2, 1], [0, 1, 3], [0, 3, 2], [1, 2, 3]])
    tt = c.OBBTree(tet_v, tet_f)
    far_pose = np.eye(4)
    far_pose[:3, 3] = [10, 0, 0]
    eye = np.eye(4)
    n = 20000
    def ours_floor():
        for _ in range(n):
            c.collide(tt, eye, tt, far_pose, first_contact=True)

    fm = fcl_model(trimesh.Trimesh(tet_v, tet_f, process=False))
    o1 = fcl.CollisionObject(fm, fcl.Transform())
    o2 = fcl.CollisionObject(fm, fcl.Transform(np.eye(3), np.array([10.0, 0, 0])))
    req = fcl.CollisionRequest()

    def fcl_floor():
        for _ in range(n):
            o2.setTransform(fcl.Transform(far_pose[:3, :3], far_pose[:3, 3]))
            fcl.collide(o1, o2, req, fcl.CollisionResult())

    ours, theirs = med_pair(ours_floor, fcl_floor, 7)
    ours /= n
    theirs /= n
    print(f"\nper-call floor (two tetrahedra far apart): ours {ours * 1e6:.2f} us, fcl {theirs * 1e6:.2f} us "
          f"({ours / theirs:.2f}x)")
    print("worst ratios over meshes: " + ", ".join(f"{k} {v:.2f}x" for k, v in worst.items()))
    cold, warm = cold_start()
    print(f"start-up incl. compile: cold cache {cold:.1f} s, warm cache {warm:.2f} s")


if __name__ == "__main__":
    main()
