"""Narrow phase: hull-hull contact manifolds against pybullet, same shapes and poses, one run, medians.

Run: ``.venv/bin/python benchmarks/bench_narrow_phase.py [--quick]``

Scenes (the same poses for every contender):

1. box-box resting: a cube (half side 0.5) on a ground box (half extents
   3 x 0.5 x 3), 0.01 deep, at 8 yaw angles in [0, 90) degrees; 4 contacts.
2. hull-hull: random 32-vertex convex hulls (points on an ellipsoid), random
   orientations, B moved along a random direction until the SAT depth is 0.01
   (bisection with our SAT), so they overlap slightly.

Ours, each scene two ways:

- ``collide_hull_hull`` called from Python once per pair (a SatCache per pair,
  warm), per call;
- ``collide_hull_pairs``: k = 1000 pairs of the scene's kind (the configurations
  repeated, every pair with its own cache) in one call, time / k. Also the
  compiled kernel called directly from Python (no checks, no dataclass), to
  show where the per-call time goes.

pybullet (``p.connect(p.DIRECT)``), the same shapes: ``GEOM_BOX`` for boxes,
``GEOM_MESH`` with the hull vertices for hulls (Bullet makes a
btConvexHullShape of them, with its default collision margin of 0.001 added
around the hull: its depths are ~0.002 larger; boxes have no such offset).
Ground / A static (mass 0), B dynamic (mass 1), gravity off, no stepping:

- (a) per pair: one world (client) per configuration with only the two bodies;
  ``performCollisionDetection()`` + ``getContactPoints(a, b)``, per call;
- (b) at scale: 1000 pairs in one world, pairs 20 apart (each its own
  island), one ``performCollisionDetection()`` + ``getContactPoints()`` for
  all, time / 1000. This includes Bullet's broad phase (AABB update of 2000
  bodies and its dynamic tree); ours at scale is the narrow phase alone (the
  pair list is given).

Bullet reports ``contactNormalOnB`` pointing from B to A and ``contactDistance
< 0`` for penetration, so its normal is minus ours and its depth minus ours;
the agreement table prints ours and -Bullet's. For convex meshes Bullet
returns one point per call (GJK/EPA; its persistent manifold gathers more
points only as bodies move), ours the whole clipped patch (up to 4).

Also timed (no peer): GJK/EPA ``collision.epa.convex_penetration`` for
sphere-box and capsule-box, single calls, and the dispatch overhead of
``collision.narrow_phase.collide_shapes`` over calling the pair function.

Every time is the median over repeats after a warm-up call (numba kernels
loaded or compiled). Ratios are ours / pybullet (< 1: ours is faster).
"""

import argparse
import os
import statistics
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from scipy.spatial.transform import Rotation  # noqa: E402

from obbcollide.epa import convex_penetration  # noqa: E402
from obbcollide.hull_batch import HullTable, collide_hull_pairs  # noqa: E402
from obbcollide.hull_data import HullData  # noqa: E402
from obbcollide.manifold import SatCache, collide_hull_hull, collide_hull_hull_kernel, hull_arrays  # noqa: E402
from obbcollide.narrow_phase import PairCache, collide_shapes  # noqa: E402
from obbcollide.shapes import Capsule, Sphere, box_hull  # noqa: E402

try:
    import pybullet as pb
except ImportError:  # pragma: no cover - the peer is optional
    pb = None

CORNERS = np.array([[x, y, z] for x in (-1, 1) for y in (-1, 1) for z in (-1, 1)], float)
K_BATCH = 1000
DEPTH = 0.01


def median_time(fn, repeats, per):
    """Median over ``repeats`` runs of ``fn()``, divided by ``per`` (seconds per item)."""
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times) / per


def pose(rot, t):
    p = np.eye(4)
    p[:3, :3] = rot
    p[:3, 3] = t
    return p


# ---------------------------------------------------------------------------
# Scenes: a list of configurations (hull_a, pose_a, hull_b, pose_b)
# ---------------------------------------------------------------------------


def box_scene():
    ground = HullData.from_points(CORNERS * [3.0, 0.5, 3.0])
    cube = HullData.from_points(CORNERS * 0.5)
    yaws = np.arange(8) * (np.pi / 2 / 8)
    configs = []
    for y in yaws:
        rot = Rotation.from_euler("y", y).as_matrix()
        configs.append((ground, np.eye(4), cube, pose(rot, [0.0, 1.0 - DEPTH, 0.0])))
    return configs


def hull_scene(rng, n_configs):
    hulls = []
    for _ in range(n_configs * 2):
        p = rng.normal(size=(32, 3))
        p /= np.linalg.norm(p, axis=1, keepdims=True)
        h = HullData.from_points(p * rng.uniform(0.35, 0.6, 3))
        assert len(h.vertices) == 32
        hulls.append(h)
    configs = []
    for i in range(n_configs):
        ha, hb = hulls[2 * i], hulls[2 * i + 1]
        ra, rb = Rotation.random(2, random_state=rng).as_matrix()
        d = rng.normal(size=3)
        d /= np.linalg.norm(d)
        pa = pose(ra, [0.0, 0.0, 0.0])

        def sat(s):
            return collide_hull_hull(ha, pa, hb, pose(rb, s * d)).sat_depth

        lo, hi = 0.0, 3.0  # sat(lo) > DEPTH > sat(hi)
        for _ in range(60):
            mid = 0.5 * (lo + hi)
            lo, hi = (mid, hi) if sat(mid) > DEPTH else (lo, mid)
        configs.append((ha, pa, hb, pose(rb, 0.5 * (lo + hi) * d)))
    return configs


# ---------------------------------------------------------------------------
# Ours
# ---------------------------------------------------------------------------


def time_ours(configs, repeats, inner):
    """Per-call seconds of: collide_hull_hull, the raw kernel, collide_hull_pairs (k = K_BATCH) / k."""
    caches = [SatCache() for _ in configs]
    for (ha, pa, hb, pb_), c in zip(configs, caches):
        collide_hull_hull(ha, pa, hb, pb_, 0.0, c)

    def run_single():
        for _ in range(inner):
            for (ha, pa, hb, pb_), c in zip(configs, caches):
                collide_hull_hull(ha, pa, hb, pb_, 0.0, c)

    raw_args = [(*hull_arrays(ha), *hull_arrays(hb), pa, pb_, 0.0, min(ha.scale, hb.scale), c.data)
                for (ha, pa, hb, pb_), c in zip(configs, caches)]

    def run_raw():
        for _ in range(inner):
            for a in raw_args:
                collide_hull_hull_kernel(*a)

    table = HullTable()
    n = len(configs)
    rows = np.arange(K_BATCH) % n
    ia = np.array([table.add(configs[r][0]) for r in rows])
    ib = np.array([table.add(configs[r][2]) for r in rows])
    pa = np.stack([configs[r][1] for r in rows])
    pbs = np.stack([configs[r][3] for r in rows])
    bcache = np.full((K_BATCH, 3), -1, np.int64)
    batch = collide_hull_pairs(table, ia, pa, ib, pbs, 0.0, bcache)

    n_calls = inner * n
    t_single = median_time(run_single, repeats, n_calls)
    t_raw = median_time(run_raw, repeats, n_calls)
    t_batch = median_time(lambda: collide_hull_pairs(table, ia, pa, ib, pbs, 0.0, bcache), repeats, K_BATCH)
    ours = [collide_hull_hull(*c) for c in configs]
    for i in range(K_BATCH):  # the batch gives the same manifolds (bit for bit, same kernel)
        m, b = ours[rows[i]], batch.manifold(i)
        assert m.kind == b.kind and np.array_equal(m.depths, b.depths) and np.array_equal(m.points_a, b.points_a)
    return t_single, t_raw, t_batch, ours, batch


# ---------------------------------------------------------------------------
# pybullet
# ---------------------------------------------------------------------------


def _quat(p):
    return Rotation.from_matrix(p[:3, :3]).as_quat().tolist()  # x, y, z, w as Bullet wants


def _shape(h, cid, box_half, cache):
    """A Bullet collision shape for HullData ``h`` (GEOM_BOX when ``box_half`` is given), shared per client."""
    key = (id(h), cid)
    if key not in cache:
        if box_half is not None:
            cache[key] = pb.createCollisionShape(pb.GEOM_BOX, halfExtents=list(box_half), physicsClientId=cid)
        else:
            cache[key] = pb.createCollisionShape(pb.GEOM_MESH, vertices=h.vertices.tolist(), physicsClientId=cid)
    return cache[key]


def _add_pair(cfg, offset, cid, boxes, cache):
    ha, pa, hb, pb_ = cfg
    half = (lambda h: np.abs(h.vertices).max(0)) if boxes else (lambda h: None)
    sa, sb = _shape(ha, cid, half(ha), cache), _shape(hb, cid, half(hb), cache)
    a = pb.createMultiBody(0, sa, basePosition=(pa[:3, 3] + offset).tolist(), baseOrientation=_quat(pa),
                           physicsClientId=cid)
    b = pb.createMultiBody(1, sb, basePosition=(pb_[:3, 3] + offset).tolist(), baseOrientation=_quat(pb_),
                           physicsClientId=cid)
    return a, b


def _bullet_manifold(cps, a):
    """(count, depths as ours (> 0 deep), normal from A to B as ours) of Bullet's points for the pair."""
    if not cps:
        return 0, np.zeros(0), np.zeros(3)
    sign = 1.0 if cps[0][1] == a else -1.0  # contactNormalOnB points from B to A
    depths = -np.array([c[8] for c in cps])
    return len(cps), np.sort(depths)[::-1], -sign * np.array(cps[0][7])


def time_bullet(configs, repeats, inner, boxes):
    """Per-pair seconds of (a) a two-body world per configuration, (b) K_BATCH pairs in one world."""
    cache = {}
    clients = []
    for cfg in configs:
        cid = pb.connect(pb.DIRECT)
        a, b = _add_pair(cfg, np.zeros(3), cid, boxes, cache)
        clients.append((cid, a, b))
    for cid, a, b in clients:
        pb.performCollisionDetection(physicsClientId=cid)
    per_pair = []
    for cid, a, b in clients:
        pb.performCollisionDetection(physicsClientId=cid)
        per_pair.append(_bullet_manifold(pb.getContactPoints(a, b, physicsClientId=cid), a))

    def run_pairs():
        for _ in range(inner):
            for cid, a, b in clients:
                pb.performCollisionDetection(physicsClientId=cid)
                pb.getContactPoints(a, b, physicsClientId=cid)

    t_pair = median_time(run_pairs, repeats, inner * len(configs))
    for cid, _, _ in clients:
        pb.disconnect(physicsClientId=cid)

    cid = pb.connect(pb.DIRECT)
    cache = {}  # client ids are reused after disconnect: shapes must be made again
    side = int(np.ceil(np.sqrt(K_BATCH)))
    bodies = []
    for i in range(K_BATCH):
        off = np.array([20.0 * (i % side), 0.0, 20.0 * (i // side)])
        bodies.append(_add_pair(configs[i % len(configs)], off, cid, boxes, cache))
    pb.performCollisionDetection(physicsClientId=cid)

    def run_scale():
        pb.performCollisionDetection(physicsClientId=cid)
        return pb.getContactPoints(physicsClientId=cid)

    t_scale = median_time(run_scale, repeats, K_BATCH)
    cps = run_scale()
    by_pair = {}
    owner = {}
    for a, b in bodies:
        owner[a] = owner[b] = (a, b)
    for c in cps:
        by_pair.setdefault(owner[c[1]], []).append(c)
    at_scale = [_bullet_manifold(by_pair.get((a, b), []), a) for a, b in bodies]
    pb.disconnect(physicsClientId=cid)
    return t_pair, t_scale, per_pair, at_scale, len(cps)


# ---------------------------------------------------------------------------
# Report
# ---------------------------------------------------------------------------


def us(t):
    return f"{t * 1e6:9.2f} us"


def compare(name, configs, ours, batch, bullet_pairs, bullet_scale):
    print(f"\n  contacts, {name}: ours (count, depths) vs Bullet (count, -contactDistance); "
          "angle between our normal and -contactNormalOnB")
    for i, (m, (bc, bd, bn)) in enumerate(zip(ours, bullet_pairs)):
        ang = np.degrees(np.arccos(np.clip(m.normal @ bn, -1, 1))) if bc and len(m) else float("nan")
        print(f"    config {i}: ours {len(m)} [{', '.join(f'{d:.5f}' for d in m.depths)}]"
              f"  bullet {bc} [{', '.join(f'{d:.5f}' for d in bd)}]  normal angle {ang:.3f} deg")
    n = len(configs)
    agree = sum(int(batch.count[i] > 0) == int(bullet_scale[i][0] > 0) for i in range(len(bullet_scale)))
    dmax = max(abs(batch.depths[i, 0] - bullet_scale[i][1][0]) for i in range(len(bullet_scale))
               if batch.count[i] and bullet_scale[i][0])
    print(f"    at scale ({len(bullet_scale)} pairs, configs repeated every {n}): both in contact for "
          f"{agree}/{len(bullet_scale)}; ours {int(batch.count.sum())} points, Bullet "
          f"{sum(c for c, _, _ in bullet_scale)}; max |deepest depth difference| {dmax:.5f}; "
          f"ours tested {np.mean(batch.tests):.0f} features per pair (SAT axes)")


def bench_gjk_epa(repeats, inner):
    print("\n[4] GJK/EPA convex_penetration and collide_shapes dispatch (single calls from Python, no peer)")
    box = box_hull([0.5, 0.5, 0.5])
    ground = np.eye(4)
    sph = Sphere(0.3)
    cap = Capsule(0.2, 0.4)
    p_s = pose(np.eye(3), [0.1, 0.5 + 0.3 - DEPTH, 0.05])  # sphere resting on the box top, 0.01 deep
    p_c = pose(Rotation.from_euler("z", 80, degrees=True).as_matrix(), [0.0, 0.5 + 0.2 - DEPTH, 0.0])
    rows = []
    for label, fn in (
            ("convex_penetration sphere-box", lambda: convex_penetration(sph.core, p_s, box.core, ground, 0.3, 0.0)),
            ("convex_penetration capsule-box", lambda: convex_penetration(cap.core, p_c, box.core, ground, 0.2, 0.0)),
    ):
        r = fn()
        rows.append((label, fn, f"depth {r.depth:.5f}"))
    hb = box_hull([0.5, 0.5, 0.5])
    p_h = pose(Rotation.from_euler("y", 0.3).as_matrix(), [0.0, 1.0 - DEPTH, 0.0])
    pc = PairCache()
    sat = SatCache()
    rows += [
        ("collide_hull_hull box-box (direct)", lambda: collide_hull_hull(box.poly, ground, hb.poly, p_h, 0.0, sat), ""),
        ("collide_shapes Hull-Hull (dispatch)", lambda: collide_shapes(box, ground, hb, p_h, 0.0, pc), ""),
        ("collide_shapes Sphere-Hull", lambda: collide_shapes(sph, p_s, box, ground, 0.0, PairCache()), ""),
        ("collide_shapes Hull-Sphere (flipped)", lambda: collide_shapes(box, ground, sph, p_s, 0.0, PairCache()), ""),
        ("collide_shapes Capsule-Hull", lambda: collide_shapes(cap, p_c, box, ground, 0.0, PairCache()), ""),
    ]
    times = {}
    for label, fn, note in rows:
        fn()

        def loop(fn=fn):
            for _ in range(inner):
                fn()

        times[label] = median_time(loop, repeats, inner)
        print(f"  {label:40s} {us(times[label])}  {note}")
    d = times["collide_shapes Hull-Hull (dispatch)"] - times["collide_hull_hull box-box (direct)"]
    print(f"  dispatch overhead of collide_shapes over collide_hull_hull: {d * 1e6:.2f} us per call")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="fewer repeats")
    args = ap.parse_args()
    repeats, inner = (5, 50) if args.quick else (15, 250)
    rng = np.random.default_rng(2024)
    if pb is None:
        print("note: pybullet is not installed (.venv/bin/pip install pybullet): its columns are skipped")
    scenes = [("box-box resting (cube on ground box, 8 yaws)", box_scene(), True),
              ("hull-hull (32-vertex random hulls, 0.01 deep, 8 configs)", hull_scene(rng, 8), False)]
    table = []
    for i, (name, configs, boxes) in enumerate(scenes):
        print(f"\n[{i + 1}] {name}")
        t_single, t_raw, t_batch, ours, batch = time_ours(configs, repeats, inner)
        if pb is not None:
            t_pair, t_scale, bp, bs, ncp = time_bullet(configs, repeats, max(1, inner // 2), boxes)
            compare(name, configs, ours, batch, bp, bs)
        else:
            t_pair = t_scale = float("nan")
        table.append((name.split(" (")[0], t_single, t_raw, t_batch, t_pair, t_scale))

    print(f"\n[3] per pair, medians over {repeats} repeats (pybullet {pb.getAPIVersion() if pb else 'missing'})")
    head = ("scene", "ours single", "ours raw kernel", f"ours batch/{K_BATCH}", "bullet pair",
            f"bullet {K_BATCH}/{K_BATCH}", "single/bpair", "batch/bscale")
    print("  " + f"{head[0]:18s}" + "".join(f"{h:>17s}" for h in head[1:]))
    for name, s, r, b, bp_, bs_ in table:
        print("  " + f"{name:18s}" + "".join(f"{us(x):>17s}" for x in (s, r, b, bp_, bs_))
              + f"{s / bp_:>17.2f}{b / bs_:>17.2f}")
    print("  single = collide_hull_hull from Python; raw kernel = collide_hull_hull_kernel from Python (no checks,"
          " no dataclass);\n  batch = collide_hull_pairs with k = 1000 pairs, time / k; bullet pair = "
          "performCollisionDetection + getContactPoints(a, b)\n  on a two-body world; bullet 1000 = one "
          "performCollisionDetection + getContactPoints() over 1000 pairs (broad phase included), time / 1000.")
    bench_gjk_epa(repeats, inner)


if __name__ == "__main__":
    main()
