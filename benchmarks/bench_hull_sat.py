"""Hull-hull SAT: the pruned edge-pair search against its brute-force twin, on the same pairs, medians.

Run: ``.venv/bin/python benchmarks/bench_hull_sat.py [--quick] [--seconds S] [--repeats R]``

Pairs: the hull-piece pairs that the world's narrow phase gives to
:func:`collision.hull_batch.collide_hull_pairs` in the last step of the
"100 convex-decomposed meshes" scene of ``benchmarks/bench_dynamics.py``
(torus knots, gears and bowls cut into up to 16 V-HACD pieces of up to ~280
edges, dropped and settled for ``--seconds`` simulated seconds; recorded by
wrapping the world's call, the world untouched). ``--quick``: 150 random
pairs of hulls of 50-200 points near an ellipsoid instead, placed just
touching.

Both contenders are :func:`collision.manifold.collide_hull_hull_into` on the
same table rows, one thread, in one compiled loop over the pairs, with fresh
caches (every pair runs the whole SAT):

* ours: the shipped kernel (``brute=False``): each arc of A tested against
  the groups of B's arcs whose bounding caps it may meet
  (:func:`collision.gauss_map.edge_pairs_pruned`), less the arcs whose
  bound (from the face queries' nearest vertices) cannot beat the best
  face, face queries over coordinate rows, most faces bounded by seven
  sample vertices instead of queried (``_face_axes_soa``);
* twin: ``brute=True``, the kernel as it was: every edge pair
  (:func:`collision.gauss_map.edge_pairs_brute`) and the plain face queries.

Reported: the median time of the whole loop (touching pairs, all pairs) over
``--repeats`` runs, the per-pair time, the ratio twin / ours (> 1: ours is
faster), and the arc pairs given the exact Gauss-map test (ours counted by
:func:`edge_pairs_pruned`, with the face floor and with the caps alone; the
twin's are all ``e_a * e_b``). Both give the same manifolds (checked here on
every pair, all but the count of features tested, and in
``tests/collision/test_gauss_map.py``).
"""

import argparse
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from obbcollide import gauss_map as gm  # noqa: E402
from obbcollide._jit import njit  # noqa: E402
from obbcollide.hull_batch import HullTable  # noqa: E402
from obbcollide.hull_data import HullData  # noqa: E402
from obbcollide.manifold import collide_hull_hull_into, hull_work  # noqa: E402


@njit
def run_pairs(V, N, D, FS, FV, EV, EF, VFS, VF, AC, AO, GC, GS, starts, scale, ia, pa, ib, pb, margins, brute,
              count, kind, tests, sat):
    """Every pair through collide_hull_hull_into, one thread, fresh caches; fills the outputs."""
    k = ia.shape[0]
    nv = nf = ne = 1
    for i in range(k):
        for h in (ia[i], ib[i]):
            nv = max(nv, starts[h + 1, 0] - starts[h, 0])
            nf = max(nf, starts[h + 1, 1] - starts[h, 1])
            ne = max(ne, starts[h + 1, 5] - starts[h, 5])
    work = hull_work(nv, nf, ne)
    normal, p_a, p_b, dep, ids = np.zeros(3), np.zeros((4, 3)), np.zeros((4, 3)), np.zeros(4), np.zeros(4, np.int64)
    cache = np.empty(3, np.int64)
    for i in range(k):
        a, b = ia[i], ib[i]
        sa, ea, sb, eb = starts[a], starts[a + 1], starts[b], starts[b + 1]
        cache[:] = -1
        st, kd, cnt, ts, sd = collide_hull_hull_into(
            V[sa[0]:ea[0]], N[sa[1]:ea[1]], D[sa[2]:ea[2]], FS[sa[3]:ea[3]], FV[sa[4]:ea[4]], EV[sa[5]:ea[5]],
            EF[sa[6]:ea[6]], VFS[sa[7]:ea[7]], VF[sa[8]:ea[8]], AC[sa[9]:ea[9]], AO[sa[10]:ea[10]],
            GC[sa[11]:ea[11]], GS[sa[12]:ea[12]],
            V[sb[0]:eb[0]], N[sb[1]:eb[1]], D[sb[2]:eb[2]], FS[sb[3]:eb[3]], FV[sb[4]:eb[4]], EV[sb[5]:eb[5]],
            EF[sb[6]:eb[6]], VFS[sb[7]:eb[7]], VF[sb[8]:eb[8]], AC[sb[9]:eb[9]], AO[sb[10]:eb[10]],
            GC[sb[11]:eb[11]], GS[sb[12]:eb[12]],
            pa[i], pb[i], margins[i], min(scale[a], scale[b]), cache, work, normal, p_a, p_b, dep, ids, brute)
        count[i], kind[i], tests[i], sat[i] = cnt, kd, ts, sd


def table_args(table):
    buf = table._buf
    n = len(table)
    return tuple(buf[f] for f in ("vertices", "normals", "offsets", "face_start", "face_verts", "edge_verts",
                                  "edge_faces", "vert_face_start", "vert_faces", "arc_caps", "arc_order",
                                  "group_caps", "group_start")) + (table._starts[:n + 1], table._scale[:n])


def scene_pairs(seconds):
    """(table, ia, poses_a, ib, poses_b, margins) of the last step's hull batch in the settled
    decomposed-mesh scene of bench_dynamics."""
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import bench_dynamics as bd
    import app.world.contacts as contacts

    calls = []
    inner = contacts.collide_hull_pairs

    def recording(table, ia, pa, ib, pb, margin, caches, check=True):
        calls.append((table, ia.copy(), pa.copy(), ib.copy(), pb.copy(),
                      np.broadcast_to(np.asarray(margin, float), (len(ia),)).copy()))
        return inner(table, ia, pa, ib, pb, margin, caches, check=check)

    contacts.collide_hull_pairs = recording
    try:
        w = bd.our_world("mesh", bd.grid(100, 1.5), "plane")
        for _ in range(int(round(seconds / bd.DT))):
            calls.clear()
            w.step()
    finally:
        contacts.collide_hull_pairs = inner
    if not calls:
        raise RuntimeError("the last step made no hull batch")
    table = calls[-1][0]
    ia = np.concatenate([c[1] for c in calls])
    pa = np.concatenate([c[2] for c in calls])
    ib = np.concatenate([c[3] for c in calls])
    pb = np.concatenate([c[4] for c in calls])
    mg = np.concatenate([c[5] for c in calls])
    return table, ia, pa, ib, pb, mg


def random_pairs(n=150, seed=0):
    """``n`` random pairs of many-edge hulls, just touching (0.5% of their distance closer than contact)."""
    from scipy.spatial.transform import Rotation

    rng = np.random.default_rng(seed)
    hulls = []
    for m in rng.integers(50, 200, 12):
        p = rng.normal(size=(m, 3))
        p = p / np.linalg.norm(p, axis=1)[:, None] * rng.uniform(0.5, 1.5, 3)
        hulls.append(HullData.from_points(p - p.mean(0)))
    table = HullTable(hulls)
    ia, ib = rng.integers(len(hulls), size=n), rng.integers(len(hulls), size=n)
    pa, pb = np.tile(np.eye(4), (n, 1, 1)), np.tile(np.eye(4), (n, 1, 1))
    pa[:, :3, :3] = Rotation.random(n, random_state=rng).as_matrix()
    pb[:, :3, :3] = Rotation.random(n, random_state=rng).as_matrix()
    d = rng.normal(size=(n, 3))
    d /= np.linalg.norm(d, axis=1)[:, None]
    args = table_args(table)
    out = [np.zeros(1, np.int64), np.zeros(1, np.int64), np.zeros(1, np.int64), np.zeros(1)]
    for i in range(n):  # bisection for the contact distance along d[i]
        lo, hi = 0.0, 4.0
        for _ in range(30):
            m = 0.5 * (lo + hi)
            pb[i, :3, 3] = m * d[i]
            run_pairs(*args, ia[i:i + 1], pa[i:i + 1], ib[i:i + 1], pb[i:i + 1], np.zeros(1), True, *out)
            lo, hi = (m, hi) if out[0][0] else (lo, m)
        pb[i, :3, 3] = 0.995 * lo * d[i]
    return table, ia, pa, ib, pb, np.zeros(n)


def visited(table, ia, pa, ib, pb):
    """Arc pairs given the exact test by edge_pairs_pruned, summed over the pairs, with the best face
    separation as its floor (as in the kernel) and without (the caps alone): B moved into A's
    frame and the face separations in numpy, the search itself as in the kernel."""
    total = total0 = 0
    for a, b, p, q in zip(ia, ib, pa, pb):
        ha, hb = table.hull(a), table.hull(b)
        rot = np.ascontiguousarray(p[:3, :3].T @ q[:3, :3])
        t = p[:3, :3].T @ (q[:3, 3] - p[:3, 3])
        vb_a = np.ascontiguousarray(hb.vertices @ rot.T + t)
        nb_a = np.ascontiguousarray(hb.normals @ rot.T)
        floor = max(((vb_a @ ha.normals.T).min(0) - ha.offsets).max(),
                    ((ha.vertices @ nb_a.T).min(0) - (hb.offsets + nb_a @ t)).max())
        sup_a, sup_b = np.empty(ha.n_faces, np.int64), np.empty(hb.n_faces, np.int64)
        gm.face_supports(ha.normals, vb_a, sup_a)
        gm.face_supports(nb_a, ha.vertices, sup_b)
        work = hull_work(max(len(ha.vertices), len(hb.vertices)), max(ha.n_faces, hb.n_faces),
                         max(ha.n_edges, hb.n_edges))
        for f in (floor, -np.inf):
            n = gm.edge_pairs_pruned(ha.vertices, ha.normals, ha.edge_verts, ha.edge_faces, ha.arc_caps,
                                     ha.arc_order, ha.group_caps, ha.group_start, vb_a, nb_a, hb.edge_verts,
                                     hb.edge_faces, hb.arc_caps, hb.arc_order, hb.group_caps, hb.group_start, rot,
                                     np.inf, f, sup_a, sup_b, work[4], work[17], np.empty(6))[2]
            if f == floor:
                total += n
            else:
                total0 += n
    return total, total0


def time_both(args, ia, pa, ib, pb, mg, repeats):
    k = len(ia)
    outs = {b: [np.zeros(k, np.int64), np.zeros(k, np.int64), np.zeros(k, np.int64), np.zeros(k)]
            for b in (False, True)}
    times = {False: [], True: []}
    for b in (False, True):  # compile / load
        run_pairs(*args, ia[:1], pa[:1], ib[:1], pb[:1], mg[:1], b, *[o[:1] for o in outs[b]])
    for _ in range(repeats):  # in turn, so that a burst of load hits both
        for b in (False, True):
            t0 = time.perf_counter()
            run_pairs(*args, ia, pa, ib, pb, mg, b, *outs[b])
            times[b].append(time.perf_counter() - t0)
    return {b: float(np.median(times[b])) for b in times}, outs


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="random many-edge hull pairs instead of the scene")
    ap.add_argument("--seconds", type=float, default=4.0, help="simulated seconds before recording (scene)")
    ap.add_argument("--repeats", type=int, default=15, help="timed runs of each contender")
    args_ = ap.parse_args()
    load = os.getloadavg()
    print(f"machine: {os.cpu_count()} cores, load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f} (shared: "
          "noisy; the ratio is of medians of runs made in turn)")
    t0 = time.perf_counter()
    if args_.quick:
        table, ia, pa, ib, pb, mg = random_pairs()
        what = f"{len(ia)} random pairs of hulls of 50-200 points, just touching"
    else:
        table, ia, pa, ib, pb, mg = scene_pairs(args_.seconds)
        what = f"the last step's hull-piece pairs of 100 decomposed meshes after {args_.seconds:g} s"
    print(f"pairs: {what} (prepared in {time.perf_counter() - t0:.1f} s)")
    args = table_args(table)
    med, outs = time_both(args, ia, pa, ib, pb, mg, args_.repeats)
    same_sep = np.array_equal(outs[False][0] > 0, outs[True][0] > 0)
    touch = np.flatnonzero(outs[True][0] > 0)
    for f in (0, 1, 3):  # count, kind, sat depth (the features tested differ: the pruned search tests fewer)
        assert np.array_equal(outs[False][f][touch], outs[True][f][touch]), "pruned and brute disagree"
    assert same_sep, "pruned and brute disagree on which pairs touch"
    sel = (ia[touch], pa[touch], ib[touch], pb[touch], mg[touch])
    med_t, _ = time_both(args, *sel, args_.repeats)
    ea = np.array([table.hull(h).n_edges for h in ia[touch]])
    eb = np.array([table.hull(h).n_edges for h in ib[touch]])
    vis, vis0 = visited(table, *sel[:4])
    print(f"  {len(ia)} pairs, {len(touch)} touching (same for both); edges per touching piece: median "
          f"{int(np.median(np.r_[ea, eb]))}, max {int(np.max(np.r_[ea, eb]))}")
    print(f"\n  {'pairs':22s}{'ours (pruned)':>16s}{'twin (brute)':>16s}{'twin / ours':>14s}")
    for name, m, k in (("touching", med_t, len(touch)), ("all", med, len(ia))):
        print(f"  {name:22s}{m[False] * 1e3:13.2f} ms{m[True] * 1e3:13.2f} ms{m[True] / m[False]:14.2f}"
              f"   ({m[False] / max(k, 1) * 1e6:.1f} vs {m[True] / max(k, 1) * 1e6:.1f} us a pair)")
    print(f"\n  arc pairs given the exact Gauss-map test, touching pairs: ours {vis:,d} (caps alone {vis0:,d}), "
          f"twin {int(ea @ eb):,d} ({vis / max(int(ea @ eb), 1):.2%}; caps alone {vis0 / max(int(ea @ eb), 1):.1%})"
          f"; features evaluated (tests): ours {int(outs[False][2][touch].sum()):,d}, twin "
          f"{int(outs[True][2][touch].sum()):,d}")


if __name__ == "__main__":
    main()
