"""``python3 -m app``: the application's command line.

The first run sets up ``.venv`` (see :mod:`app._bootstrap`). Until the viewer
lands, the command reports what the library can do by running each kind of
query once on a small built-in scene and printing the answers.
"""

import argparse
import sys


def _parser():
    p = argparse.ArgumentParser(
        prog="python3 -m app",
        description="Real-time rigid-body collision detection: library demo (the viewer is not built yet).",
    )
    p.add_argument("--seed", type=int, default=0, help="random seed of the demo shapes")
    return p


def demo(seed=0, out=sys.stdout):
    """Run one query of each kind on two random hulls and two triangles; print the answers."""
    import numpy as np

    import collision as c

    rng = np.random.default_rng(seed)
    a = c.ConvexPolyhedron.from_points(rng.normal(size=(12, 3)))
    b = c.ConvexPolyhedron.from_points(rng.normal(size=(12, 3)) * 0.8 + [1.2, 0.3, 0.0])
    w = out.write
    w("collision library: exact primitives (Ericson ch. 4-5) and the vector-symbol method\n\n")
    w(f"hull A: {len(a.vertices)} vertices, {len(a.polygons)} faces; "
      f"hull B: {len(b.vertices)} vertices, {len(b.polygons)} faces\n")
    sat = c.convex_convex_sat(a, None, b, None)
    state = "separated" if sat.separated else "intersecting"
    w(f"  SAT ({sat.axes_tested} axes): {state}, axis {np.round(sat.axis, 4)} ({sat.kind}), "
      f"depth {sat.depth:+.6f}\n")
    vs = c.vector_symbol_collide(a, b)
    w(f"  vector symbol: C = {vs.C} (sum I = {int(np.sum(vs.I))}, E_ab = {vs.E_ab}, E_ba = {vs.E_ba})\n")
    oa, ob = c.OBB.from_points(a.vertices), c.OBB.from_points(b.vertices)
    w(f"  OBBs by covariance: volumes {oa.volume:.3f} and {ob.volume:.3f}, overlap {c.test_obb_obb(oa, ob)}\n")
    p = np.zeros(3)
    w(f"  closest point of A to the origin: {np.round(c.closest_pt_point_convex(p, a.vertices), 6)}\n")
    t1 = rng.normal(size=(3, 3))
    t2 = rng.normal(size=(3, 3))
    c1, c2 = c.closest_pt_triangle_triangle(*t1, *t2)
    w(f"\ntwo random triangles: intersect {c.test_triangle_triangle(t1, t2)}, "
      f"distance {np.linalg.norm(c1 - c2):.6f}\n")
    seg = c.intersect_triangle_triangle(t1, t2)
    if seg is not None:
        w(f"  intersection segment {np.round(seg, 4).tolist()}\n")
    w("\nThe viewer (meshes, OBB trees, live contacts) is not built yet; "
      "run the tests with: python3 -m tests\n")


def main(argv=None):
    args = _parser().parse_args(argv)
    demo(args.seed)
    return 0


if __name__ == "__main__":
    from app._bootstrap import ensure_environment

    ensure_environment("app")
    sys.exit(main())
