"""Convex decomposition: V-HACD (vhacdx) against CoACD (coacd), through app.scene.pieces.

For each mesh and backend, one row:

- time: seconds ``convex_pieces`` spent decomposing (``ConvexPieces.seconds``,
  the pieces' OBB trees not included); median over the repeats (one run with
  --quick). Every run gets a fresh, empty cache folder, so none is a cache hit.
- pieces: number of convex pieces (``*`` if the repeats disagreed).
- vol: sum of the pieces' volumes / the mesh's volume (overlaps count twice;
  above 1 the pieces bulge out of the mesh or fill its cavities, below 1 they
  leave parts of the solid uncovered).
- d1/diag: largest distance from a mesh vertex to the union of the pieces
  (the minimum over pieces of ``|p - obbcollide.closest_pt_point_convex(p,
  piece)|``, 0 inside a piece): how much of the surface the pieces miss.
- d2/diag: largest distance from a piece vertex lying outside the mesh to the
  mesh surface (``trimesh.proximity.closest_point_naive``; inside/outside by
  the generalized winding number, since trimesh's ``contains`` and
  ``signed_distance`` need rtree, which is not a dependency): how far the
  pieces stick out. Both relative to the mesh's bounding-box diagonal.
- load: a call of ``convex_pieces`` that hits the cache, median in
  milliseconds: hash the mesh for the key, read the ``.npz`` (cache format 4:
  the hulls' vertices, triangles, faces, planes and edges and every OBB
  tree's node arrays), check it (compiled kernels: hull convexity and
  closure, tree structure and box containment) and make the hulls and trees
  from the arrays; nothing is rebuilt. (Format 3 stored the pieces' points
  and rebuilt hulls and trees: 5-215 ms on these meshes.)
- kB: size of the cache entry.

Meshes: the project's bowl, torus knot, gear and blob, a trimesh torus and a
U-shaped union of three boxes. Settings: ``DecomposeSettings`` defaults
(max_pieces 16, V-HACD resolution 100000 and 64 vertices per piece, CoACD
threshold 0.05); --quick takes four meshes, max_pieces 8 and one run each.
All cache folders live in one ``tempfile.TemporaryDirectory``; the user's
cache is never read or written.

    .venv/bin/python benchmarks/bench_decompose.py [--quick] [--progress]

``--progress`` shows each decomposition's stages on stderr (a bar on a terminal).
"""

import argparse
import os
import sys
import tempfile
import time

import numpy as np
import trimesh

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
sys.path.insert(0, ROOT)
import obbcollide as c  # noqa: E402
from app.scene.mesh_io import load_mesh  # noqa: E402
from app.scene.pieces import DecomposeSettings, cache_key, convex_pieces  # noqa: E402
from app.progress import TerminalProgress  # noqa: E402

ASSETS = os.path.join(ROOT, "assets", "meshes")
BACKENDS = ("vhacd", "coacd")


def u_boxes(subdivide=3):
    """A U: a 3x1x1 box with a 1x1x1 box on each end (volume 5), built by hand, outward winding."""
    # Outline in the xy plane, counter-clockwise, with the points where the boxes meet.
    poly = np.array([[0, 0], [1, 0], [2, 0], [3, 0], [3, 1], [3, 2], [2, 2], [2, 1], [1, 1], [1, 2],
                     [0, 2], [0, 1]], float)
    quads = [[0, 1, 8, 11], [1, 2, 7, 8], [2, 3, 4, 7], [11, 8, 9, 10], [7, 4, 5, 6]]
    n = len(poly)
    verts = np.vstack([np.c_[poly, np.zeros(n)], np.c_[poly, np.ones(n)]])
    faces = []
    for a, b, cc, d in quads:
        faces += [[a + n, b + n, cc + n], [a + n, cc + n, d + n]]  # top (z = 1), up
        faces += [[cc, b, a], [d, cc, a]]  # bottom (z = 0), down
    for i in range(n):
        j = (i + 1) % n
        faces += [[i, j, j + n], [i, j + n, i + n]]
    m = trimesh.Trimesh(verts, np.array(faces), process=False)
    for _ in range(subdivide):
        m = m.subdivide()
    assert m.is_watertight and m.is_winding_consistent and abs(m.volume - 5.0) < 1e-9, m.volume
    return m


def meshes(quick):
    def asset(name):
        return load_mesh(os.path.join(ASSETS, name + ".ply"))

    out = [
        ("gear", asset("gear")),
        ("bowl", asset("bowl")),
        ("torus", trimesh.creation.torus(major_radius=1.0, minor_radius=0.35)),
        ("U boxes", u_boxes()),
    ]
    if not quick:
        out += [("blob", asset("blob")), ("torus_knot", asset("torus_knot"))]
    return out


def winding_numbers(points, tris, chunk=32):
    """Generalized winding number of each point w.r.t. triangles (t, 3, 3) (van Oosterom-Strackee)."""
    points = np.asarray(points, float)
    out = np.empty(len(points))
    for s in range(0, len(points), chunk):
        r = tris[None] - points[s:s + chunk, None, None, :]  # (c, t, 3, 3)
        a, b, cc = r[:, :, 0], r[:, :, 1], r[:, :, 2]
        la, lb, lc = (np.linalg.norm(x, axis=-1) for x in (a, b, cc))
        num = np.einsum("...i,...i", a, np.cross(b, cc))
        den = (la * lb * lc + np.einsum("...i,...i", a, b) * lc + np.einsum("...i,...i", b, cc) * la
               + np.einsum("...i,...i", cc, a) * lb)
        out[s:s + chunk] = 2.0 * np.arctan2(num, den).sum(1) / (4.0 * np.pi)
    return out


def miss_distance(mesh, hulls):
    """d1: largest distance from a mesh vertex to the union of the pieces."""
    pts = np.asarray(mesh.vertices, float)
    d = np.full(len(pts), np.inf)
    for h in hulls:
        q = c.closest_pt_point_convex(pts, h.vertices)
        d = np.minimum(d, np.linalg.norm(q - pts, axis=1))
    return float(d.max())


def excess_distance(mesh, hulls, chunk=64):
    """d2: largest distance from a piece vertex outside the mesh to the mesh surface."""
    pts = np.concatenate([h.vertices for h in hulls])
    outside = pts[winding_numbers(pts, mesh.triangles.view(np.ndarray)) < 0.5]
    worst = 0.0
    for s in range(0, len(outside), chunk):  # the naive query holds (chunk, faces, 3) points
        _, dist, _ = trimesh.proximity.closest_point_naive(mesh, outside[s:s + chunk])
        worst = max(worst, float(dist.max()))
    return worst


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true", help="four meshes, max_pieces 8, one run each")
    ap.add_argument("--progress", action="store_true", help="show the stages of each decomposition on stderr")
    args = ap.parse_args()
    bar = TerminalProgress() if args.progress else None
    repeat = 1 if args.quick else 3
    loads = 5 if args.quick else 9
    max_pieces = 8 if args.quick else DecomposeSettings().max_pieces

    import coacd

    coacd.set_log_level("error")
    settings = {b: DecomposeSettings(method=b, max_pieces=max_pieces) for b in BACKENDS}
    s = settings["vhacd"]
    print(f"vhacd: max_pieces {s.max_pieces}, resolution {s.resolution}, max_vertices {s.max_vertices}; "
          f"coacd: max_pieces {s.max_pieces}, threshold {settings['coacd'].threshold}; "
          f"{repeat} run(s) per row, {loads} cached loads")

    # Compile the kernels once, outside every measurement.
    w = trimesh.creation.icosphere(subdivisions=1)
    c.OBBTree(np.asarray(w.vertices, float), np.asarray(w.faces, np.int64))
    c.closest_pt_point_convex(np.zeros((2, 3)), w.vertices)

    print(f"\n{'mesh':10s} {'tris':>5s} {'backend':7s} | {'time s':>7s} {'pieces':>6s} {'vol':>5s} "
          f"{'d1/diag':>7s} {'d2/diag':>7s} | {'load ms':>7s} {'kB':>5s}")
    rows = []
    with tempfile.TemporaryDirectory(prefix="bench-decompose-") as root:
        os.environ["OBBCOLLIDE_CACHE"] = root  # belt and braces: every call below names its folder
        for name, m in meshes(args.quick):
            v = np.asarray(m.vertices, float)
            f = np.asarray(m.faces, np.int64)
            volume = abs(float(m.volume))
            diag = float(np.linalg.norm(np.ptp(v, axis=0)))
            for backend in BACKENDS:
                st = settings[backend]
                times, counts = [], []
                for _ in range(repeat):
                    folder = tempfile.mkdtemp(dir=root)  # empty: the run must decompose
                    p = convex_pieces(v, f, st, cache=folder, progress=bar)
                    if bar is not None:
                        bar.close()
                    assert not p.cached
                    times.append(p.seconds)
                    counts.append(len(p))
                load_ts = []
                for _ in range(loads):  # the last run's folder holds its entry
                    t = time.perf_counter()
                    q = convex_pieces(v, f, st, cache=folder)
                    load_ts.append(time.perf_counter() - t)
                    assert q.cached and len(q) == len(p)
                size = os.path.getsize(os.path.join(folder, cache_key(v, f, st) + ".npz")) / 1024
                row = dict(mesh=name, backend=backend, method=p.method, time=float(np.median(times)),
                           pieces=len(p), same=len(set(counts)) == 1, vol=p.volume / volume,
                           d1=miss_distance(m, p.hulls) / diag, d2=excess_distance(m, p.hulls) / diag,
                           load=float(np.median(load_ts)) * 1e3)
                rows.append(row)
                note = "" if p.method == backend else f"  (fell back to {p.method})"
                print(f"{name:10s} {len(f):5d} {backend:7s} | {row['time']:7.2f} "
                      f"{row['pieces']:5d}{' ' if row['same'] else '*'} {row['vol']:5.2f} "
                      f"{row['d1']:7.4f} {row['d2']:7.4f} | {row['load']:7.1f} {size:5.0f}{note}", flush=True)

    parts = []
    for b in BACKENDS:
        rs = [r for r in rows if r["backend"] == b]
        parts.append(f"{b} {sum(r['time'] for r in rs):.1f} s in all, worst d1 {max(r['d1'] for r in rs):.4f} "
                     f"d2 {max(r['d2'] for r in rs):.4f}, vol {min(r['vol'] for r in rs):.2f}-"
                     f"{max(r['vol'] for r in rs):.2f}")
    ratio = sum(r["time"] for r in rows if r["backend"] == "coacd") / sum(
        r["time"] for r in rows if r["backend"] == "vhacd")
    print(f"\nsummary: {'; '.join(parts)}; coacd/vhacd time {ratio:.1f}x; "
          f"cached load {min(r['load'] for r in rows):.1f}-{max(r['load'] for r in rows):.1f} ms")


if __name__ == "__main__":
    main()
