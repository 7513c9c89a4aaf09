"""Throughput of three primitives against a peer implementation.

Run: ``.venv/bin/python benchmarks/bench_primitives.py [--quick]``

1. closest_pt_point_triangle, 10^6 queries through the batched API, against a
   plain numpy vectorisation of the same algorithm (RTCD 5.1.5, Voronoi regions
   resolved with an ``np.where`` cascade); both answers are checked equal.
2. test_triangle_triangle, 10^5 pairs batched, against python-fcl called pair
   by pair (10^4 pairs, one-triangle BVHModels built beforehand; the build time
   is reported separately); answers are checked equal on those pairs.
3. test_obb_obb called once per pair from Python (OBB objects built
   beforehand) against ``fcl.collide`` on two ``fcl.Box`` objects (also built
   beforehand), 2 x 10^4 pairs; answers are checked equal.

Every timing is the median over repeats, after a warm-up call that loads or
compiles the numba kernels. Ratios are ours / peer time per query (< 1: ours
is faster).
"""

import argparse
import os
import statistics
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import fcl  # noqa: E402

from obbcollide import OBB, closest_pt_point_triangle, test_obb_obb, test_triangle_triangle  # noqa: E402


def median_time(fn, repeats):
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def row(label, n, t):
    print(f"  {label:44s} {n:>9d} queries  {t * 1e3:10.2f} ms  {n / t:14,.0f} q/s  {t / n * 1e9:10.1f} ns/q")


# ---------------------------------------------------------------------------
# 1. closest point on a triangle: numpy peer
# ---------------------------------------------------------------------------


def closest_pt_point_triangle_numpy(p, a, b, c):
    """RTCD 5.1.5 vectorised: the same six dot products and region tests, in the
    same order, selected by an np.where cascade (the first region that applies wins)."""

    def dot(x, y):  # same summation order as the kernel
        return x[:, 0] * y[:, 0] + x[:, 1] * y[:, 1] + x[:, 2] * y[:, 2]

    ab, ac, ap = b - a, c - a, p - a
    d1, d2 = dot(ab, ap), dot(ac, ap)
    bp = p - b
    d3, d4 = dot(ab, bp), dot(ac, bp)
    cp = p - c
    d5, d6 = dot(ab, cp), dot(ac, cp)
    vc = d1 * d4 - d3 * d2
    vb = d5 * d2 - d1 * d6
    va = d3 * d6 - d5 * d4
    with np.errstate(divide="ignore", invalid="ignore"):
        den_ab = d1 - d3
        t_ab = np.where(den_ab > 0, d1 / den_ab, 0.0)
        den_ac = d2 - d6
        t_ac = np.where(den_ac > 0, d2 / den_ac, 0.0)
        den_bc = (d4 - d3) + (d5 - d6)
        t_bc = np.where(den_bc > 0, (d4 - d3) / den_bc, 0.0)
        den = va + vb + vc
        inv = np.where(den > 0, 1.0 / den, 0.0)
    face = a + (ab * (vb * inv)[:, None] + ac * (vc * inv)[:, None])
    # degenerate fallback (den <= 0 after all region tests): best point on the edges
    edges = []
    for s, e in ((a, b), (b, c), (c, a)):
        se = e - s
        ll = dot(se, se)
        with np.errstate(divide="ignore", invalid="ignore"):
            t = np.clip(np.where(ll > 0, dot(p - s, se) / ll, 0.0), 0.0, 1.0)
        edges.append(s + se * t[:, None])
    dists = np.stack([dot(p - q, p - q) for q in edges])
    k = np.argmin(dists, axis=0)
    fallback = np.choose(k[:, None], edges)
    out = np.where((den > 0)[:, None], face, fallback)
    # cascade, last assignment = first region in RTCD order
    out = np.where(((va <= 0) & ((d4 - d3) >= 0) & ((d5 - d6) >= 0))[:, None], b + (c - b) * t_bc[:, None], out)
    out = np.where(((vb <= 0) & (d2 >= 0) & (d6 <= 0))[:, None], a + ac * t_ac[:, None], out)
    out = np.where(((d6 >= 0) & (d5 <= d6))[:, None], c, out)
    out = np.where(((vc <= 0) & (d1 >= 0) & (d3 <= 0))[:, None], a + ab * t_ab[:, None], out)
    out = np.where(((d3 >= 0) & (d4 <= d3))[:, None], b, out)
    out = np.where(((d1 <= 0) & (d2 <= 0))[:, None], a, out)
    return out


def bench_closest_point(n, repeats, rng):
    print(f"\n[1] closest_pt_point_triangle: {n:,} queries, batched API vs numpy np.where cascade")
    p = rng.normal(size=(n, 3)) * 1.5
    a, b, c = (rng.normal(size=(n, 3)) for _ in range(3))
    c[: n // 100] = b[: n // 100]  # 1% degenerate (repeated corner) triangles
    closest_pt_point_triangle(p[:10], a[:10], b[:10], c[:10])  # warm-up / compile
    ours = closest_pt_point_triangle(p, a, b, c)
    peer = closest_pt_point_triangle_numpy(p, a, b, c)
    diff = np.abs(ours - peer).max()
    assert diff <= 1e-12, f"answers differ by {diff}"
    t_ours = median_time(lambda: closest_pt_point_triangle(p, a, b, c), repeats)
    t_peer = median_time(lambda: closest_pt_point_triangle_numpy(p, a, b, c), repeats)
    row("collision (numba, batched)", n, t_ours)
    row("numpy np.where cascade", n, t_peer)
    print(f"  same answers (1% degenerate triangles included): max |difference| = {diff:.1e}")
    print(f"  ratio ours/peer time = {t_ours / t_peer:.3f}  (ours {t_peer / t_ours:.1f}x faster)")


# ---------------------------------------------------------------------------
# 2. triangle-triangle vs fcl
# ---------------------------------------------------------------------------


def _bvh(t):
    m = fcl.BVHModel()
    m.beginModel(1, 1)
    m.addSubModel(t, np.array([[0, 1, 2]]))
    m.endModel()
    return m


def bench_triangle_triangle(n, n_fcl, repeats, rng):
    print(f"\n[2] test_triangle_triangle: {n:,} pairs batched vs python-fcl, {n_fcl:,} pairs one by one")
    A = rng.normal(size=(n, 3, 3))
    B = rng.normal(size=(n, 3, 3))
    A -= A.mean(1, keepdims=True)
    B -= B.mean(1, keepdims=True)
    B += rng.normal(size=(n, 1, 3)) * 0.65
    test_triangle_triangle(A[:10], B[:10])  # warm-up
    t_ours = median_time(lambda: test_triangle_triangle(A, B), repeats)
    ours = test_triangle_triangle(A, B)

    eye = fcl.Transform()
    t0 = time.perf_counter()
    objs = [(fcl.CollisionObject(_bvh(A[i]), eye), fcl.CollisionObject(_bvh(B[i]), eye)) for i in range(n_fcl)]
    t_build = time.perf_counter() - t0
    req = fcl.CollisionRequest()

    def run_fcl():
        return [fcl.collide(oa, ob, req, fcl.CollisionResult()) > 0 for oa, ob in objs]

    peer = np.array(run_fcl())
    agree = np.mean(peer == ours[:n_fcl])
    t_peer = median_time(run_fcl, repeats)
    row("collision (numba, batched)", n, t_ours)
    row("fcl.collide per pair (objects prebuilt)", n_fcl, t_peer)
    row("fcl BVHModel+CollisionObject build", n_fcl, t_build)
    print(f"  overlap fraction {ours.mean():.2f}; agreement with fcl on {n_fcl:,} pairs: {agree:.5f}")
    r = (t_ours / n) / (t_peer / n_fcl)
    print(f"  ratio ours/peer time per pair = {r:.4f}  (ours {1 / r:.0f}x faster; "
          f"{1 / ((t_ours / n) / ((t_peer + t_build) / n_fcl)):.0f}x counting fcl's build)")


# ---------------------------------------------------------------------------
# 3. OBB-OBB per call vs fcl box-box
# ---------------------------------------------------------------------------


def _rotations(rng, n):
    q = rng.normal(size=(n, 4))
    q /= np.linalg.norm(q, axis=1)[:, None]
    w, x, y, z = q.T
    return np.stack([
        np.stack([1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)], -1),
        np.stack([2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)], -1),
        np.stack([2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)], -1),
    ], 1)


def bench_obb(n, repeats, rng):
    print(f"\n[3] test_obb_obb: {n:,} calls one by one vs fcl.collide(Box, Box)")
    ca, cb = rng.normal(size=(n, 3)) * 0.8, rng.normal(size=(n, 3)) * 0.8
    aa, ab = _rotations(rng, n), _rotations(rng, n)
    ea, eb = rng.uniform(0.1, 1, (n, 3)), rng.uniform(0.1, 1, (n, 3))
    boxes = [(OBB(ca[i], aa[i], ea[i]), OBB(cb[i], ab[i], eb[i])) for i in range(n)]
    test_obb_obb(*boxes[0])  # warm-up
    objs = [(fcl.CollisionObject(fcl.Box(*(2 * ea[i])), fcl.Transform(aa[i].T.copy(), ca[i])),
             fcl.CollisionObject(fcl.Box(*(2 * eb[i])), fcl.Transform(ab[i].T.copy(), cb[i])))
            for i in range(n)]
    req = fcl.CollisionRequest()

    def run_ours():
        return [test_obb_obb(a, b) for a, b in boxes]

    def run_fcl():
        return [fcl.collide(oa, ob, req, fcl.CollisionResult()) > 0 for oa, ob in objs]

    ours, peer = np.array(run_ours()), np.array(run_fcl())
    t_ours = median_time(run_ours, repeats)
    t_peer = median_time(run_fcl, repeats)
    row("collision test_obb_obb (per call)", n, t_ours)
    row("fcl.collide Box-Box (per call)", n, t_peer)
    print(f"  overlap fraction {ours.mean():.2f}; agreement with fcl: {np.mean(ours == peer):.5f}")
    print(f"  ratio ours/peer time = {t_ours / t_peer:.3f}  ({'ours' if t_ours < t_peer else 'fcl'} "
          f"{max(t_ours, t_peer) / min(t_ours, t_peer):.2f}x faster)")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="10x fewer queries, 3 repeats")
    ap.add_argument("--repeats", type=int, default=7)
    args = ap.parse_args()
    scale, repeats = (10, 3) if args.quick else (1, args.repeats)
    rng = np.random.default_rng(2024)
    import numba

    print(f"numpy {np.__version__}, numba {numba.__version__}, python-fcl {getattr(fcl, '__version__', '?')}, "
          f"{os.cpu_count()} CPUs; median of {repeats} repeats")
    bench_closest_point(1_000_000 // scale, repeats, rng)
    bench_triangle_triangle(100_000 // scale, 10_000 // scale, repeats, rng)
    bench_obb(20_000 // scale, repeats, rng)


if __name__ == "__main__":
    main()
