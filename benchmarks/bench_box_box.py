"""Box-box manifolds: the box route of the hull-pair batch against the general hull kernel, medians.

Run: ``.venv/bin/python benchmarks/bench_box_box.py [--repeats R]``

Pairs: ``k`` pairs of equal cubes (half 0.25, as ``bench_dynamics.py``'s boxes), B above A with
small random yaws (seeded), in three layouts: apart by 0.5 m with warm caches (a falling pile:
the cached face still separates, one test), resting (B sunk 1 mm into A: a face contact of four
points, the whole SAT and the clipping) and resting with fresh caches.

Both contenders are :func:`collision.hull_batch.collide_hull_pairs` on one thread, on the same
table, the same poses and copies of the same caches, ``check=False`` as the world calls it:

* ours: the box route (:data:`collision.hull_batch.BOX_PAIRS` on): each pair of two boxes goes to
  :func:`collision.box_box.collide_box_box_into`, one float and one int row per box;
* general: the route off, every pair through :func:`collision.manifold.collide_hull_hull_into`
  (13 arrays per hull and a tuple of 21 scratch arrays per call).

Both with the batch loop's first test of each pair's cached feature
(:data:`collision.hull_batch.CACHE_FIRST`; ``--no-cache-first``: without it), which decides the
"apart" layout before either route is called.

Reported: the median time of one call over ``--repeats`` calls (each contender's calls in turns),
per pair, and the ratio general / ours (> 1: ours faster). Both give the same manifolds, checked
here on every row (every field but the count of features tested) (and in ``tests/collision/test_box_box.py``).
"""

import argparse
import math
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import obbcollide.hull_batch as hull_batch  # noqa: E402
from obbcollide.hull_batch import HullTable, collide_hull_pairs  # noqa: E402
from obbcollide.hull_data import HullData  # noqa: E402
from obbcollide.threads import forced  # noqa: E402

HALF = 0.25
# every output but ``tests`` (features tested): the general kernel skips faces its bounds rule out
FIELDS = ("count", "normal", "points_a", "points_b", "depths", "ids", "kind", "sat_depth")


def yaw(a):
    c, s = math.cos(a), math.sin(a)
    return np.array([[c, 0.0, s], [0.0, 1.0, 0.0], [-s, 0.0, c]])


def layout(k, gap, rng):
    pa = np.tile(np.eye(4), (k, 1, 1))
    pb = np.tile(np.eye(4), (k, 1, 1))
    for i in range(k):
        pa[i, :3, :3] = yaw(rng.uniform(-0.2, 0.2))
        pa[i, :3, 3] = (2.0 * i, HALF, 0.0)
        pb[i, :3, :3] = yaw(rng.uniform(-0.2, 0.2))
        pb[i, :3, 3] = (2.0 * i + rng.uniform(-0.05, 0.05), 3 * HALF + gap, rng.uniform(-0.05, 0.05))
    return pa, pb


def time_calls(table, ids, pa, pb, caches, warm, repeats):
    """Median seconds of one call and the last result; ``warm``: caches kept between calls."""
    ts = []
    out = None
    for _ in range(repeats):
        c = caches if warm else caches.copy()
        t0 = time.perf_counter()
        out = collide_hull_pairs(table, ids, pa, ids, pb, 0.02, c, check=False)
        ts.append(time.perf_counter() - t0)
    return float(np.median(ts)), out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repeats", type=int, default=300, help="calls per contender and layout (default 300)")
    ap.add_argument("--pairs", type=int, default=75, help="pairs per call (default 75: a settled pile of 100 boxes)")
    ap.add_argument("--no-cache-first", action="store_true",
                    help="leave each pair's cached feature to the pair kernels (hull_batch.CACHE_FIRST off), "
                         "as before the batch loop tested it itself")
    args = ap.parse_args()
    hull_batch.CACHE_FIRST = not args.no_cache_first
    if args.repeats < 1 or args.pairs < 1:
        ap.error("--repeats and --pairs: expected counts >= 1")
    corners = np.array([[x, y, z] for x in (-HALF, HALF) for y in (-HALF, HALF) for z in (-HALF, HALF)])
    table = HullTable([HullData.from_points(corners)])
    k = args.pairs
    ids = np.zeros(k, np.int64)
    rng = np.random.default_rng(0)
    load = os.getloadavg()
    print(f"machine: {os.cpu_count()} cores, load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}; "
          f"{k} cube pairs per call, one thread, median of {args.repeats} calls, "
          f"cached feature first: {'no' if args.no_cache_first else 'yes'}")
    print(f"  {'layout':34s}{'ours, us/pair':>15s}{'general, us/pair':>18s}{'ratio':>8s}   same")
    for name, gap, warm in (("apart 0.5 m, warm caches", 0.5, True), ("resting (1 mm deep), warm caches", -1e-3, True),
                            ("resting (1 mm deep), fresh caches", -1e-3, False)):
        pa, pb = layout(k, gap, rng)
        caches0 = np.full((k, 3), -1, np.int64)
        res = {}
        with forced("serial"):
            for route in (True, False):  # warm the caches and compile
                hull_batch.BOX_PAIRS = route
                c = caches0.copy()
                collide_hull_pairs(table, ids, pa, ids, pb, 0.02, c, check=False)
                res[route] = [c, [], None]
            for r in range(args.repeats):
                for route in ((True, False) if r % 2 else (False, True)):
                    hull_batch.BOX_PAIRS = route
                    t, out = time_calls(table, ids, pa, pb, res[route][0] if warm else caches0, warm, 1)
                    res[route][1].append(t)
                    res[route][2] = out
        hull_batch.BOX_PAIRS = True
        same = all(np.array_equal(getattr(res[True][2], f), getattr(res[False][2], f)) for f in FIELDS)
        ours, gen = (float(np.median(res[r][1])) / k * 1e6 for r in (True, False))
        print(f"  {name:34s}{ours:>15.2f}{gen:>18.2f}{gen / ours:>7.1f}x   {'yes' if same else 'NO'}")


if __name__ == "__main__":
    main()
